//! Checked writes to standard output.
//!
//! `print!` panics when standard output cannot be written (exit 101, "failed printing to
//! stdout"), and a program that ignores the error exits 0 with its output lost. These
//! functions write and flush at once and return the error, and [`report`] turns it into
//! the one convention of every xylem program:
//!
//! - a full device (or any other write error): one line on standard error,
//!   `PROGRAM: cannot write to standard output: No space left on device`, exit code
//!   [`EXIT_FAILURE`] (1);
//! - a closed pipe (`EPIPE`: `xylem net show | head -0`): no message, exit code
//!   [`EXIT_CLOSED_PIPE`] (141, what a shell shows for a death by `SIGPIPE`), the quiet
//!   exit of a program whose reader has gone.

use std::io::{self, ErrorKind, Write};

/// The exit code after a write error on standard output.
pub const EXIT_FAILURE: i32 = 1;

/// The exit code when the reader of standard output has gone (128 + `SIGPIPE`).
pub const EXIT_CLOSED_PIPE: i32 = 141;

/// Writes `text` to standard output and flushes it.
pub fn write(text: &str) -> io::Result<()> {
    write_to(&mut io::stdout().lock(), text)
}

/// Writes `text` and a newline to standard output, and flushes it.
pub fn line(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Writes `text` to `out` and flushes it (what [`write()`] does to standard output).
pub fn write_to<W: Write + ?Sized>(out: &mut W, text: &str) -> io::Result<()> {
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Whether `e` says that the reader of the pipe has gone.
pub fn is_closed_pipe(e: &io::Error) -> bool {
    e.kind() == ErrorKind::BrokenPipe
}

/// The exit code for a failed write to standard output: [`EXIT_CLOSED_PIPE`] for a closed
/// pipe, [`EXIT_FAILURE`] for anything else.
pub fn exit_code(e: &io::Error) -> i32 {
    if is_closed_pipe(e) {
        EXIT_CLOSED_PIPE
    } else {
        EXIT_FAILURE
    }
}

/// The message for a failed write to standard output, without the program's prefix:
/// `cannot write to standard output: No space left on device`; `None` for a closed pipe,
/// which is left quiet.
pub fn message(e: &io::Error) -> Option<String> {
    (!is_closed_pipe(e)).then(|| format!("cannot write to standard output: {}", crate::cause(e)))
}

/// Reports a failed write to standard output on standard error (one line, `prefix` first,
/// nothing for a closed pipe) and returns the exit code to leave with.
pub fn report(prefix: &str, e: &io::Error) -> i32 {
    if let Some(text) = message(e) {
        eprintln!("{prefix}{text}");
    }
    exit_code(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that takes `room` bytes and then fails with `error`.
    struct Full {
        room: usize,
        error: i32,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::from_raw_os_error(self.error));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_full_device_is_an_error_with_one_message() {
        let mut out = Full { room: 3, error: 28 };
        let e = write_to(&mut out, "a table row\n").unwrap_err();
        assert_eq!(exit_code(&e), EXIT_FAILURE);
        assert_eq!(
            message(&e).as_deref(),
            Some("cannot write to standard output: No space left on device")
        );
    }

    #[test]
    fn a_closed_pipe_is_quiet() {
        let mut out = Full { room: 0, error: 32 };
        let e = write_to(&mut out, "x").unwrap_err();
        assert!(is_closed_pipe(&e));
        assert_eq!(exit_code(&e), EXIT_CLOSED_PIPE);
        assert_eq!(message(&e), None);
    }

    #[test]
    fn everything_fits() {
        let mut out = Vec::new();
        write_to(&mut out, "row\n").unwrap();
        assert_eq!(out, b"row\n");
    }
}
