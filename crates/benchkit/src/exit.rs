//! The exit codes of xylem's benchmarks, one meaning each, the same on every rank.

/// How a benchmark run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: every figure was measured and written.
    Success,
    /// 1: the run failed (I/O, MPI, a full disk, an output that could not be written).
    Failure,
    /// 2: bad input: an option, a value, a selection or an output name that is taken.
    Usage,
    /// 3: the data did not arrive as sent: corrupted messages (sqmr `--validate`) or file
    /// data errors (b_eff_io).
    DataErrors,
    /// 4: the measurements were made and something is flagged: `sqmr --scan` found a slow
    /// node or link (a health check's "unhealthy").
    Flagged,
    /// 5: the launcher started N tasks but MPI saw a world of one in each (a launcher and
    /// MPI library that do not match).
    Singleton,
    /// 6: a rank made no progress for the stall timeout (`--stall-timeout`): a node or a
    /// link stopped; the output files keep what was measured, marked incomplete.
    Stalled,
    /// 128 + s: stopped by signal `s` (SIGINT, SIGTERM), as a shell reports it.
    Signal(i32),
}

impl Exit {
    /// The process exit code.
    pub const fn code(self) -> i32 {
        match self {
            Exit::Success => 0,
            Exit::Failure => 1,
            Exit::Usage => 2,
            Exit::DataErrors => 3,
            Exit::Flagged => 4,
            Exit::Singleton => 5,
            Exit::Stalled => 6,
            Exit::Signal(s) => 128 + s,
        }
    }

    /// The exit of a code: the inverse of [`Exit::code`]; any other code is a
    /// [`Exit::Failure`].
    pub fn from_code(code: i32) -> Exit {
        match code {
            0 => Exit::Success,
            2 => Exit::Usage,
            3 => Exit::DataErrors,
            4 => Exit::Flagged,
            5 => Exit::Singleton,
            6 => Exit::Stalled,
            c if c > 128 && c < 128 + 65 => Exit::Signal(c - 128),
            _ => Exit::Failure,
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(u8::try_from(exit.code()).unwrap_or(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_unknown_codes_are_failures() {
        for exit in [
            Exit::Success,
            Exit::Failure,
            Exit::Usage,
            Exit::DataErrors,
            Exit::Flagged,
            Exit::Singleton,
            Exit::Signal(2),
            Exit::Signal(15),
        ] {
            assert_eq!(Exit::from_code(exit.code()), exit);
        }
        assert_eq!(Exit::Signal(15).code(), 143);
        assert_eq!(Exit::from_code(7), Exit::Failure);
        assert_eq!(Exit::from_code(-1), Exit::Failure);
        assert_eq!(Exit::from_code(255), Exit::Failure);
    }
}
