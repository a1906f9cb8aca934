//! Standard output of `xylem`, every write checked (the `outfile` crate's convention): a
//! full device is one line on stderr and exit code 1, a closed pipe a quiet exit 141.

use std::process::ExitCode;

/// Writes `text` to standard output; on failure says so after `prefix` (`xylem: `,
/// `xylem compare: `) unless the pipe is closed, and returns the exit code.
pub fn print(prefix: &str, text: &str) -> ExitCode {
    match outfile::stdout::write(text) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => code(outfile::stdout::report(prefix, &e)),
    }
}

/// An exit code from a number (1 if it does not fit).
pub fn code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
