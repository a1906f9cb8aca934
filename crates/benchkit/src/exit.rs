//! The exit codes of xylem's programs, one meaning each, the same on every rank, and the
//! one table of what each program's codes mean ([`table`]) that the man pages are made
//! from and the manual's tables are checked against.

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

/// The signal whose death a closed standard output is reported as (141 = 128 + 13).
const SIGPIPE: i32 = 13;

/// A program of the suite, for its exit-code table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    /// `sqmr`.
    Sqmr,
    /// `b_eff_io`.
    BEffIo,
    /// `xylem` and its subcommands.
    Xylem,
}

/// One row of a program's exit-code table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// The exit this row describes.
    pub exit: Exit,
    /// The code as the manual writes it: `6`, `141`, `128+N`.
    pub code: &'static str,
    /// What it means for that program.
    pub meaning: &'static str,
}

impl Exit {
    /// One exit of every kind, in the order of their codes: `Signal(13)` is a closed
    /// standard output (141), `Signal(2)` stands for every other signal (128 + N).
    pub const KINDS: [Exit; 9] = [
        Exit::Success,
        Exit::Failure,
        Exit::Usage,
        Exit::DataErrors,
        Exit::Flagged,
        Exit::Singleton,
        Exit::Stalled,
        Exit::Signal(SIGPIPE),
        Exit::Signal(2),
    ];

    /// The code as a manual writes it: the number, or `128+N` for a signal (141 for a
    /// closed pipe, which every program gives alike).
    pub const fn label(self) -> &'static str {
        match self {
            Exit::Success => "0",
            Exit::Failure => "1",
            Exit::Usage => "2",
            Exit::DataErrors => "3",
            Exit::Flagged => "4",
            Exit::Singleton => "5",
            Exit::Stalled => "6",
            Exit::Signal(SIGPIPE) => "141",
            Exit::Signal(_) => "128+N",
        }
    }

    /// What this exit means when `program` leaves with it; `None` when that program
    /// never does.
    pub const fn meaning(self, program: Program) -> Option<&'static str> {
        use Program::{BEffIo, Sqmr, Xylem};
        Some(match (self, program) {
            (Exit::Success, Sqmr) => "The run completed (or --help, --version).",
            (Exit::Success, BEffIo) => {
                "The run completed and read back what it wrote (VALID or NOT VALID), or \
                 --help, --version."
            }
            (Exit::Success, Xylem) => "Done.",
            (Exit::Failure, Sqmr) => {
                "An output file or standard output could not be written; a panic on one rank."
            }
            (Exit::Failure, BEffIo) => {
                "The run failed: an I/O error, a full disk, an unusable path, an output that \
                 cannot be written; a panic on one rank."
            }
            (Exit::Failure, Xylem) => {
                "It failed: a file that cannot be read or written, a result that is not one, \
                 nothing to plot."
            }
            (Exit::Usage, Sqmr) => {
                "Bad input: an option, the job size, an output name that exists, is reserved, \
                 or lies behind a link another user planted."
            }
            (Exit::Usage, BEffIo) => {
                "Bad input: options, network selection, a hints file, an output file that \
                 exists, a path or output behind a link another user planted, buffers a host \
                 cannot hold."
            }
            (Exit::Usage, Xylem) => {
                "Bad input: an option, a network selection that cannot be resolved, an output \
                 folder behind a link another user planted."
            }
            (Exit::DataErrors, Sqmr) => "--validate found damaged messages.",
            (Exit::DataErrors, BEffIo) => "Read found data errors (each bad chunk is named).",
            (Exit::Flagged, Sqmr) => "--scan flagged a slow node or link.",
            (Exit::Singleton, Sqmr | BEffIo) => {
                "The launcher started several tasks but MPI sees a world of one."
            }
            (Exit::Stalled, Sqmr) => {
                "A rank made no progress for --stall-timeout seconds; the files keep what was \
                 measured."
            }
            (Exit::Stalled, BEffIo) => {
                "A rank made no progress for --stall-timeout seconds; the files keep every \
                 pattern measured."
            }
            (Exit::Signal(SIGPIPE), _) => "Standard output is a pipe whose reader has gone.",
            (Exit::Signal(_), Sqmr) => {
                "Signal N (SIGINT, SIGTERM) reached a rank; the files keep the sizes measured."
            }
            (Exit::Signal(_), BEffIo) => {
                "Signal N (SIGINT, SIGTERM) reached a rank; the files keep what was measured."
            }
            (Exit::DataErrors | Exit::Flagged | Exit::Singleton | Exit::Stalled, Xylem)
            | (Exit::Flagged, BEffIo)
            | (Exit::Signal(_), Xylem) => return None,
        })
    }
}

/// Every exit `program` may leave with, in the order of their codes, with its meaning:
/// the one table of the man pages' EXIT STATUS.
pub fn table(program: Program) -> Vec<Row> {
    Exit::KINDS
        .iter()
        .filter_map(|&exit| {
            exit.meaning(program).map(|meaning| Row {
                exit,
                code: exit.label(),
                meaning,
            })
        })
        .collect()
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
        for exit in Exit::KINDS.into_iter().chain([Exit::Signal(15)]) {
            assert_eq!(Exit::from_code(exit.code()), exit);
        }
        assert_eq!(Exit::Signal(15).code(), 143);
        assert_eq!(Exit::from_code(7), Exit::Failure);
        assert_eq!(Exit::from_code(-1), Exit::Failure);
        assert_eq!(Exit::from_code(255), Exit::Failure);
    }

    #[test]
    fn every_kind_of_exit_has_one_label_and_the_tables_follow_the_codes() {
        let labels: Vec<&str> = Exit::KINDS.iter().map(|e| e.label()).collect();
        assert_eq!(
            labels,
            ["0", "1", "2", "3", "4", "5", "6", "141", "128+N"],
            "one label per kind, in the order of the codes"
        );
        // A label that is a number is the code itself.
        for exit in Exit::KINDS {
            if let Ok(code) = exit.label().parse::<i32>() {
                assert_eq!(code, exit.code(), "{exit:?}");
                assert_eq!(Exit::from_code(code), exit);
            }
        }
        let codes = |p: Program| -> Vec<&str> { table(p).iter().map(|r| r.code).collect() };
        assert_eq!(
            codes(Program::Sqmr),
            ["0", "1", "2", "3", "4", "5", "6", "141", "128+N"]
        );
        // b_eff_io flags nothing with 4; xylem runs no job.
        assert_eq!(
            codes(Program::BEffIo),
            ["0", "1", "2", "3", "5", "6", "141", "128+N"]
        );
        assert_eq!(codes(Program::Xylem), ["0", "1", "2", "141"]);
        for p in [Program::Sqmr, Program::BEffIo, Program::Xylem] {
            for row in table(p) {
                assert!(row.meaning.ends_with('.'), "{p:?} {}", row.code);
                assert!(!row.meaning.contains("  "), "{p:?} {}", row.code);
            }
        }
    }
}
