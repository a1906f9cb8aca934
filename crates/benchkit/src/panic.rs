//! A panic in one rank must not leave the others waiting in a collective: once MPI is up,
//! a panic prints its message (with the rank) and calls `MPI_Abort`, which ends every rank
//! of the job.

use mpi::topology::{Communicator, SimpleCommunicator};

/// The exit code `MPI_Abort` is given after a panic: a failure, as the README's exit codes
/// say of anything that is neither bad input nor corrupted data.
pub const EXIT_CODE: i32 = crate::Exit::Failure.code();

/// The environment variable that makes one rank panic right after start-up, for the test
/// of this hook (its value is the rank).
pub const TEST_PANIC_ENV: &str = "XYLEM_TEST_PANIC_RANK";

/// The line printed for a panic of `rank` in `program`.
pub fn message(program: &str, rank: i32, what: &str) -> String {
    format!("{program}: rank {rank}: internal error (a bug in xylem; please report it): {what}; aborting the job")
}

/// Installs the hook. Call once MPI is initialized.
pub fn install(program: &str, rank: i32) {
    let program = program.to_string();
    std::panic::set_hook(Box::new(move |info| {
        let what = match info.location() {
            Some(at) => format!("{} at {}:{}", payload(info), at.file(), at.line()),
            None => payload(info),
        };
        outfile::eprintln!("{}", message(&program, rank, &what));
        std::thread::sleep(crate::watchdog::FORWARD_PAUSE);
        SimpleCommunicator::world().abort(EXIT_CODE);
    }));
}

/// Panics on the rank that [`TEST_PANIC_ENV`] names, if any (a test hook).
pub fn test_panic(rank: i32) {
    if std::env::var(TEST_PANIC_ENV)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
        == Some(rank)
    {
        panic!("{TEST_PANIC_ENV}={rank} asked this rank to panic");
    }
}

fn payload(info: &std::panic::PanicHookInfo<'_>) -> String {
    if let Some(s) = info.payload().downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = info.payload().downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_program_rank_and_cause() {
        let m = message("sqmr", 3, "boom at x.rs:1");
        assert!(m.starts_with("sqmr: rank 3: internal error"), "{m}");
        assert!(m.contains("boom at x.rs:1"), "{m}");
        assert!(m.ends_with("aborting the job"), "{m}");
    }
}
