//! Output files of xylem's programs, and their standard output, written so that a reader
//! only ever sees complete documents and no write error goes unnoticed.
//!
//! An output file (`--json`, `--csv`, a plot) goes through three steps:
//!
//! 1. **Reserve** the name when the run starts ([`Reservation::reserve`]): the target
//!    must not exist (an existing file is refused, never overwritten), and a small
//!    reservation file beside it, `.NAME.xylem-reservation`, says which process on which
//!    host is going to write it and since when. A bad path or a second run with the same
//!    name fails in the first second, not after a long run.
//! 2. **Write** each version ([`Reservation::write`]) to a new temporary file in the
//!    same directory (`.NAME.tmp.<random>`, created exclusively, never through a link),
//!    synced to disk and put in place of the previous version, so that the target is
//!    either absent or one complete version. A failed write (a full disk) removes the
//!    temporary file and leaves the previous version in place.
//! 3. **Release** the reservation at the end, success or failure ([`Reservation::release`],
//!    or dropping it).
//!
//! A reservation left behind by a killed run is recognised — its process is gone from
//! this host (`/proc/PID`, with the process's start time against a reused PID), or,
//! from another host, its lease (the file's modification time, renewed every minute by
//! the live run) expired 10 minutes ago — and replaced;
//! [`Reservation::replaced_notice`] gives the line to say so. A reservation of a live
//! process, or of a process on another host whose lease runs, refuses the second run
//! ([`Error::Reserved`]).
//!
//! Every file and directory operation goes through [`SafeDir`], whose documentation
//! names the threat (planted links, FIFOs, forged markers in folders others can write)
//! and how each step defends against it; the folders on the way to it are walked by
//! [`links`], which refuses a link that another user planted in a folder others can
//! write; [`input`] reads user-named input files with a
//! bound.
//!
//! [`replace`] writes generated files (man pages, host files) the same atomic way, but
//! may replace an existing file. [`stdout`] has the checked writes to standard output:
//! a full device is an error to report, a closed pipe a quiet exit.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod input;
pub mod links;
pub mod owner;
mod reservation;
pub mod safedir;
pub mod shown;
pub mod stderr;
pub mod stdout;

use std::io;
use std::path::{Path, PathBuf};

pub use owner::{Holder, Liveness};
pub use reservation::{replace, replace_in, Reservation, Written, RESERVATION_SUFFIX, SHARED_MIN};
pub use safedir::SafeDir;

/// Why an output file cannot be reserved or written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The target exists: it is refused, never overwritten.
    #[error("{path}: {}", exists_text(found))]
    Exists {
        /// The target.
        path: PathBuf,
        /// What has the name.
        found: Found,
    },
    /// The target is `-`, which in other tools means standard output.
    #[error(
        "-: output goes to files only, not to standard output: each output file is \
         rewritten as the run goes (every version complete, replacing the last), which a \
         stream cannot hold; give the name of a new file"
    )]
    Dash,
    /// Another run, alive or on another host, holds the reservation of the target.
    #[error("{path}: {}", reserved_text(marker, holder, liveness))]
    Reserved {
        /// The target.
        path: PathBuf,
        /// The reservation file.
        marker: PathBuf,
        /// Who holds it.
        holder: Box<Holder>,
        /// Whether it runs, as far as this process could tell.
        liveness: Liveness,
    },
    /// The run names the same file twice (`--json x --csv x`).
    #[error("{path}: named twice in this run; give each output its own name")]
    Twice {
        /// The target.
        path: PathBuf,
    },
    /// A reservation file is there but says nothing this crate can read: it is left alone.
    #[error(
        "{path}: {marker} reserves it but cannot be read ({reason}); if no run is writing \
         {path}, remove {marker}"
    )]
    Unreadable {
        /// The target.
        path: PathBuf,
        /// The reservation file.
        marker: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// An I/O error while reserving, writing or releasing.
    #[error("{path}: cannot {action}: {}", cause(error))]
    Io {
        /// The target.
        path: PathBuf,
        /// What was being done, in words ("reserve it", "write it").
        action: &'static str,
        /// The error of the operating system.
        error: io::Error,
    },
}

/// What has the name of a target that must be new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// Anything else, in words: "a symbolic link", "a character device", "a FIFO".
    Other(&'static str),
}

fn exists_text(found: &Found) -> String {
    match found {
        Found::File => {
            "the file exists; it is never overwritten, so remove it or choose another name".into()
        }
        Found::Directory => "a directory has that name; give the name of a new file \
                             (in that directory or elsewhere)"
            .into(),
        Found::Other(what) => format!(
            "{what} has that name; output goes only to new regular files (never \
             overwritten, never through a link or a device), so give the name of a new file"
        ),
    }
}

impl Error {
    /// Whether the name itself is the problem: the file exists, another run has
    /// reserved it, or its path goes through a link that another user planted
    /// ([`links::PlantedLink`]) (programs exit with their "bad input" code for these).
    /// Every other error is an I/O failure (a missing directory, no permission, a full
    /// disk).
    pub fn is_conflict(&self) -> bool {
        match self {
            Error::Exists { .. }
            | Error::Dash
            | Error::Reserved { .. }
            | Error::Twice { .. }
            | Error::Unreadable { .. } => true,
            Error::Io { error, .. } => links::planted_link(error).is_some(),
        }
    }

    /// The target the error is about.
    pub fn path(&self) -> &Path {
        match self {
            Error::Dash => Path::new("-"),
            Error::Exists { path, .. }
            | Error::Twice { path }
            | Error::Reserved { path, .. }
            | Error::Unreadable { path, .. }
            | Error::Io { path, .. } => path,
        }
    }

    /// The operating system's error, for [`Error::Io`].
    pub fn io_error(&self) -> Option<&io::Error> {
        match self {
            Error::Io { error, .. } => Some(error),
            _ => None,
        }
    }

    pub(crate) fn io(path: &Path, action: &'static str, error: io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            action,
            error,
        }
    }
}

fn reserved_text(marker: &Path, holder: &Holder, liveness: &Liveness) -> String {
    match liveness {
        Liveness::Alive => format!(
            "another run is writing it: {holder} (its reservation is {}); wait for it to \
             finish or choose another name",
            marker.display()
        ),
        Liveness::Unknown(why) => format!(
            "another run has reserved it: {holder}; {why}, so it is taken as running; if \
             it is gone, remove {} (or choose another name)",
            marker.display()
        ),
        // Only reached if the holder went away between the check and the message.
        Liveness::Gone(_) => format!(
            "another run had reserved it: {holder}, which is gone; try again, or remove {} \
             if it stays",
            marker.display()
        ),
    }
}

/// The operating system's words for `e`, without Rust's ` (os error N)` suffix:
/// `No space left on device`.
pub fn cause(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => text[..at].to_string(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_the_system_words() {
        let e = io::Error::from_raw_os_error(28);
        assert_eq!(cause(&e), "No space left on device");
        let e = io::Error::other("plain words");
        assert_eq!(cause(&e), "plain words");
    }

    #[test]
    fn conflicts_are_told_from_io_errors() {
        let exists = Error::Exists {
            path: "a.json".into(),
            found: Found::File,
        };
        assert!(exists.is_conflict());
        assert_eq!(exists.path(), Path::new("a.json"));
        assert!(exists.to_string().contains("the file exists"), "{exists}");
        let full = Error::io(
            Path::new("a.json"),
            "write it",
            io::Error::from_raw_os_error(28),
        );
        assert!(!full.is_conflict());
        assert_eq!(
            full.to_string(),
            "a.json: cannot write it: No space left on device"
        );
        assert_eq!(full.io_error().and_then(io::Error::raw_os_error), Some(28));
    }
}
