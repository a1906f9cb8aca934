//! Best-effort writes to standard error.
//!
//! `eprintln!` panics when standard error cannot be written (`2>/dev/full`: exit 101 and
//! a second failed write for the panic message), even in a run that only wanted to warn.
//! There is nowhere left to report a failed write to standard error, so these writes are
//! best effort: a lost line never changes the program's exit code. [`crate::eprintln!`]
//! is the drop-in replacement the programs use.

use std::fmt;
use std::io::Write;

/// Writes `args` and a newline to standard error in one write, ignoring a failure.
pub fn line(args: fmt::Arguments<'_>) {
    let mut text = args.to_string();
    text.push('\n');
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

/// Writes `args` to standard error, ignoring a failure.
pub fn text(args: fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args);
    let _ = err.flush();
}

/// `eprintln!` that never panics: a line on standard error, best effort
/// ([`stderr::line`](crate::stderr::line)).
#[macro_export]
macro_rules! eprintln {
    () => {
        $crate::stderr::line(::std::format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::stderr::line(::std::format_args!($($arg)*))
    };
}

/// `eprint!` that never panics ([`stderr::text`](crate::stderr::text)).
#[macro_export]
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::stderr::text(::std::format_args!($($arg)*))
    };
}
