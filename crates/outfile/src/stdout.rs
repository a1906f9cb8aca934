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
//!   exit of a program whose reader has gone;
//! - a closed standard output (`PROGRAM >&-`): every write fails with `EBADF` (Rust's
//!   own `stdout` would drop the text and report success), so the program says so and
//!   exits 1, once [`guard_standard_streams`] has run at its start.

use std::io::{self, ErrorKind, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by [`guard_standard_streams`] when standard output was closed at start.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Call first thing in `main`. A program started with a standard stream closed
/// (`>&-`, `2>&-`) would hand that descriptor number to the next file it opens — an
/// output file would then receive what `println!` writes, or a panic message. Each closed
/// descriptor among 0, 1 and 2 is taken by `/dev/null`, and a closed standard output is
/// remembered, so that [`write()`] and [`line`] fail with `EBADF` (`Bad file descriptor`)
/// instead of losing the output with exit code 0. Returns whether standard output was
/// closed.
pub fn guard_standard_streams() -> bool {
    let open = |fd: std::os::fd::BorrowedFd<'_>| rustix::io::fcntl_getfd(fd).is_ok();
    let stdout_closed = !open(io::stdout().as_fd());
    let any_closed =
        !open(io::stdout().as_fd()) || !open(io::stdin().as_fd()) || !open(io::stderr().as_fd());
    if any_closed {
        // open() returns the lowest free descriptor: fill 0..=2, keep what lands there.
        while let Ok(fd) = rustix::fs::open(
            "/dev/null",
            // Not close-on-exec: a child started later inherits /dev/null there too.
            rustix::fs::OFlags::RDWR,
            rustix::fs::Mode::empty(),
        ) {
            if fd.as_raw_fd() > 2 {
                break;
            }
            // The descriptor now stands in for the closed stream, for the life of the
            // process; it must not be closed when this handle goes.
            let _ = std::os::fd::IntoRawFd::into_raw_fd(fd);
        }
    }
    STDOUT_CLOSED.store(stdout_closed, Ordering::SeqCst);
    stdout_closed
}

/// For an interactive command (`xylem`), after [`guard_standard_streams`]: Rust's runtime
/// puts `/dev/null`, opened for reading and writing, in place of a closed standard
/// output before `main` runs (a shell's `>/dev/null` opens it for writing only), so such
/// a standard output means `>&-`: every write to it then fails with `EBADF`, as for a
/// descriptor still closed. Returns whether it did. Not for the benchmarks: a launcher or
/// a daemon may give a rank `/dev/null` read-write on purpose, and a run must not fail
/// for it.
pub fn refuse_runtime_null() -> bool {
    let refused = reopened_by_the_runtime();
    if refused {
        STDOUT_CLOSED.store(true, Ordering::SeqCst);
    }
    refused
}

fn reopened_by_the_runtime() -> bool {
    let out = io::stdout();
    let Ok(stat) = rustix::fs::fstat(out.as_fd()) else {
        return false;
    };
    let null = rustix::fs::FileType::from_raw_mode(stat.st_mode)
        == rustix::fs::FileType::CharacterDevice
        && rustix::fs::major(stat.st_rdev) == 1
        && rustix::fs::minor(stat.st_rdev) == 3;
    let read_write = rustix::fs::fcntl_getfl(out.as_fd())
        .is_ok_and(|f| f & rustix::fs::OFlags::ACCMODE == rustix::fs::OFlags::RDWR);
    null && read_write
}

fn closed_error() -> io::Error {
    io::Error::from_raw_os_error(rustix::io::Errno::BADF.raw_os_error())
}

fn check_open() -> io::Result<()> {
    if STDOUT_CLOSED.load(Ordering::SeqCst) {
        return Err(closed_error());
    }
    Ok(())
}

/// The exit code after a write error on standard output.
pub const EXIT_FAILURE: i32 = 1;

/// The exit code when the reader of standard output has gone (128 + `SIGPIPE`).
pub const EXIT_CLOSED_PIPE: i32 = 141;

/// Writes `text` to standard output and flushes it.
pub fn write(text: &str) -> io::Result<()> {
    check_open()?;
    write_to(&mut io::stdout().lock(), text)
}

/// Writes `text` and a newline to standard output, and flushes it.
pub fn line(text: &str) -> io::Result<()> {
    check_open()?;
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
        crate::eprintln!("{prefix}{text}");
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
