//! MPI errors as Rust errors that name the failing call and the file.

use mpi::ffi;
use std::os::raw::{c_char, c_int};

/// An MPI-IO failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// An MPI call returned an error code.
    #[error("{call} failed on '{file}': {message}")]
    Mpi {
        /// The failing MPI function, e.g. `MPI_File_write_all`.
        call: &'static str,
        /// The file it was called on.
        file: String,
        /// MPI's error code.
        code: i32,
        /// The error class of `code`.
        class: ErrorClass,
        /// MPI's text for the code (`MPI_Error_string`).
        message: String,
    },
    /// A transfer completed with fewer elements than asked for (e.g. a full disk).
    #[error("{call} on '{file}' moved {moved} of {requested} elements")]
    Short {
        /// The MPI function.
        call: &'static str,
        /// The file.
        file: String,
        /// Elements asked for.
        requested: usize,
        /// Elements moved.
        moved: usize,
    },
    /// The arguments cannot be passed to MPI (a name with a NUL byte, a count over `i32::MAX`).
    #[error("{call} on '{file}': {reason}")]
    Invalid {
        /// The MPI function.
        call: &'static str,
        /// The file.
        file: String,
        /// What is wrong.
        reason: String,
    },
}

/// The error classes a caller may want to tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// `MPI_ERR_NO_SPACE`: the disk is full.
    NoSpace,
    /// `MPI_ERR_NO_SUCH_FILE`.
    NoSuchFile,
    /// `MPI_ERR_ACCESS`: permission denied.
    Access,
    /// `MPI_ERR_READ_ONLY`.
    ReadOnly,
    /// `MPI_ERR_QUOTA`: a quota is exceeded.
    Quota,
    /// `MPI_ERR_IO`.
    Io,
    /// Any other class, with its number.
    Other(i32),
}

impl ErrorClass {
    fn from_class(class: c_int) -> ErrorClass {
        match class as u32 {
            ffi::MPI_ERR_NO_SPACE => ErrorClass::NoSpace,
            ffi::MPI_ERR_NO_SUCH_FILE => ErrorClass::NoSuchFile,
            ffi::MPI_ERR_ACCESS => ErrorClass::Access,
            ffi::MPI_ERR_READ_ONLY => ErrorClass::ReadOnly,
            ffi::MPI_ERR_QUOTA => ErrorClass::Quota,
            ffi::MPI_ERR_IO => ErrorClass::Io,
            _ => ErrorClass::Other(class),
        }
    }
}

/// What a failure most likely means, from its error class, the system's words in MPI's
/// text (ROMIO reports many as `MPI_ERR_IO` with `strerror` in its error stack; Open MPI's
/// ompio often as a generic class) and, for a short transfer, whether it read or wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// `ENOSPC`: the file system is full.
    NoSpace,
    /// `EDQUOT`: the user's (or group's, or project's) quota is used up.
    Quota,
    /// `EROFS`: the file system is read-only (often remounted so after an error).
    ReadOnly,
    /// `ESTALE`: the file handle went stale (the file or a directory was replaced on the
    /// server, or the server restarted).
    Stale,
    /// `EACCES`/`EPERM`: permission denied.
    Access,
    /// `ENOENT`: the file or a directory on its path is not there.
    NoSuchFile,
    /// A read that returned fewer bytes than asked for: the file ends earlier.
    ShortRead,
    /// A write that moved fewer bytes than asked for.
    ShortWrite,
}

impl Cause {
    /// Every cause.
    pub const ALL: [Cause; 8] = [
        Cause::NoSpace,
        Cause::Quota,
        Cause::ReadOnly,
        Cause::Stale,
        Cause::Access,
        Cause::NoSuchFile,
        Cause::ShortRead,
        Cause::ShortWrite,
    ];

    /// The cause in words, with what to do, for the end of an error message.
    pub fn advice(self) -> &'static str {
        match self {
            Cause::NoSpace => "the file system is full",
            Cause::Quota => {
                "a disk quota is exceeded (`quota -s`, or `lfs quota -u $USER DIR` on Lustre, \
                 shows it)"
            }
            Cause::ReadOnly => {
                "the file system is read-only: mounted so, or remounted read-only by the \
                 kernel after an error (see `dmesg` on the node, and the administrators)"
            }
            Cause::Stale => {
                "stale file handle: the file or a directory on its path was removed or \
                 replaced on the server, or the file server restarted"
            }
            Cause::Access => "permission denied",
            Cause::NoSuchFile => "the file or a directory on its path is not there",
            Cause::ShortRead => {
                "the file ends before the bytes asked for: it was truncated or replaced since \
                 it was written, or the file system lost data"
            }
            Cause::ShortWrite => {
                "the file system took only part of the bytes: it is full, or a quota is \
                 exceeded"
            }
        }
    }
}

/// The system's words of each cause, as `strerror` gives them (glibc, and the older
/// spelling of ESTALE).
const WORDS: [(&str, Cause); 6] = [
    ("No space left on device", Cause::NoSpace),
    ("Disk quota exceeded", Cause::Quota),
    ("Read-only file system", Cause::ReadOnly),
    ("Stale file handle", Cause::Stale),
    ("Stale NFS file handle", Cause::Stale),
    ("Permission denied", Cause::Access),
];

impl Error {
    /// What the failure most likely means, when its class, its text or its call tells.
    pub fn cause(&self) -> Option<Cause> {
        match self {
            Error::Mpi { class, message, .. } => {
                let by_words = WORDS
                    .iter()
                    .find(|(words, _)| message.contains(words))
                    .map(|&(_, cause)| cause);
                by_words.or(match class {
                    ErrorClass::NoSpace => Some(Cause::NoSpace),
                    ErrorClass::Quota => Some(Cause::Quota),
                    ErrorClass::ReadOnly => Some(Cause::ReadOnly),
                    ErrorClass::Access => Some(Cause::Access),
                    ErrorClass::NoSuchFile => Some(Cause::NoSuchFile),
                    ErrorClass::Io | ErrorClass::Other(_) => None,
                })
            }
            Error::Short { call, .. } if call.contains("read") => Some(Cause::ShortRead),
            Error::Short { .. } => Some(Cause::ShortWrite),
            Error::Invalid { .. } => None,
        }
    }

    /// Whether the failure means the file system is full: the class `MPI_ERR_NO_SPACE`, MPI's
    /// text quoting `ENOSPC` (MPICH's ROMIO reports a full disk as `MPI_ERR_IO` with the
    /// system's words in its error stack), or a write that moved only part of its bytes.
    pub fn is_no_space(&self) -> bool {
        matches!(self.cause(), Some(Cause::NoSpace | Cause::ShortWrite))
    }

    /// Whether the failure says the file (or a directory on its path) does not exist.
    pub fn is_no_such_file(&self) -> bool {
        matches!(
            self,
            Error::Mpi {
                class: ErrorClass::NoSuchFile,
                ..
            }
        )
    }

    /// The same failure, naming the file `name` instead: the full path of a file that was
    /// opened by a name relative to the working directory, say.
    pub fn with_file(mut self, name: impl Into<String>) -> Error {
        match &mut self {
            Error::Mpi { file, .. } | Error::Short { file, .. } | Error::Invalid { file, .. } => {
                *file = name.into()
            }
        }
        self
    }

    /// The file the failing call was made on.
    pub fn file(&self) -> &str {
        match self {
            Error::Mpi { file, .. } | Error::Short { file, .. } | Error::Invalid { file, .. } => {
                file
            }
        }
    }
}

/// `Result` with an MPI-IO [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Turns an MPI return code into a `Result`.
#[inline]
pub(crate) fn check(code: c_int, call: &'static str, file: &str) -> Result<()> {
    if code == ffi::MPI_SUCCESS as c_int {
        return Ok(());
    }
    Err(failure(code, call, file))
}

/// The error of a failed call (its class and message asked of MPI): out of the line of
/// the calls that succeed.
#[cold]
#[inline(never)]
fn failure(code: c_int, call: &'static str, file: &str) -> Error {
    Error::Mpi {
        call,
        file: file.to_string(),
        code,
        class: ErrorClass::from_class(error_class(code)),
        message: error_string(code),
    }
}

fn error_class(code: c_int) -> c_int {
    let mut class: c_int = 0;
    // SAFETY: `class` is a valid out-pointer for one int; MPI_Error_class only writes it.
    let rc = unsafe { ffi::MPI_Error_class(code, &mut class) };
    if rc == ffi::MPI_SUCCESS as c_int {
        class
    } else {
        code
    }
}

/// MPI's text for an error code.
pub(crate) fn error_string(code: c_int) -> String {
    let mut buf = vec![0 as c_char; ffi::MPI_MAX_ERROR_STRING as usize + 1];
    let mut len: c_int = 0;
    // SAFETY: `buf` holds MPI_MAX_ERROR_STRING characters as the standard requires and `len`
    // is a valid out-pointer; MPI writes at most that many characters.
    let rc = unsafe { ffi::MPI_Error_string(code, buf.as_mut_ptr(), &mut len) };
    if rc != ffi::MPI_SUCCESS as c_int {
        return format!("MPI error code {code}");
    }
    let len = (len.max(0) as usize).min(buf.len());
    let bytes: Vec<u8> = buf[..len].iter().map(|&c| c as u8).collect();
    format!(
        "{} (MPI error {code})",
        one_line(&String::from_utf8_lossy(&bytes))
    )
}

/// MPI's text on one line: MPICH's error stack comes one call per line.
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Converts a length to an MPI count.
#[inline]
pub(crate) fn count(len: usize, call: &'static str, file: &str) -> Result<c_int> {
    match c_int::try_from(len) {
        Ok(n) => Ok(n),
        Err(_) => Err(too_many(len, call, file)),
    }
}

#[cold]
#[inline(never)]
fn too_many(len: usize, call: &'static str, file: &str) -> Error {
    Error::Invalid {
        call,
        file: file.to_string(),
        reason: format!("{len} elements exceed MPI's int count"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(class: ErrorClass, message: &str) -> Error {
        Error::Mpi {
            call: "MPI_File_write_at",
            file: "f".into(),
            code: 1,
            class,
            message: message.into(),
        }
    }

    #[test]
    fn the_cause_comes_from_the_class_or_the_system_words() {
        // ROMIO folds most errno values into MPI_ERR_IO with strerror in its stack.
        let romio = |words: &str| {
            failed(
                ErrorClass::Io,
                &format!("Other I/O error , error stack: ADIOI_GEN_WRITECONTIG(80): {words}"),
            )
        };
        assert_eq!(
            romio("Read-only file system").cause(),
            Some(Cause::ReadOnly)
        );
        assert_eq!(romio("Disk quota exceeded").cause(), Some(Cause::Quota));
        assert_eq!(romio("Stale file handle").cause(), Some(Cause::Stale));
        assert_eq!(romio("Stale NFS file handle").cause(), Some(Cause::Stale));
        assert_eq!(
            romio("No space left on device").cause(),
            Some(Cause::NoSpace)
        );
        assert_eq!(romio("Input/output error").cause(), None);
        // Classes without the words (Open MPI's texts name the class only).
        let read_only = failed(ErrorClass::ReadOnly, "MPI_ERR_READ_ONLY: read-only file");
        assert_eq!(read_only.cause(), Some(Cause::ReadOnly));
        assert!(!read_only.is_no_space());
        assert_eq!(
            failed(ErrorClass::Quota, "MPI_ERR_QUOTA").cause(),
            Some(Cause::Quota)
        );
        assert_eq!(failed(ErrorClass::Other(16), "MPI_ERR_OTHER").cause(), None);
        // The words win over a generic class.
        assert_eq!(
            failed(ErrorClass::Access, "Read-only file system").cause(),
            Some(Cause::ReadOnly)
        );
    }

    #[test]
    fn a_short_read_is_not_a_full_disk() {
        let short = |call| Error::Short {
            call,
            file: "f".into(),
            requested: 8,
            moved: 3,
        };
        let read = short("MPI_File_read_at");
        assert_eq!(read.cause(), Some(Cause::ShortRead));
        assert!(!read.is_no_space());
        assert!(read.cause().unwrap().advice().contains("truncated"));
        let write = short("MPI_File_write_all");
        assert_eq!(write.cause(), Some(Cause::ShortWrite));
        assert!(write.is_no_space());
        // Each cause has words of its own.
        let words: std::collections::BTreeSet<&str> =
            Cause::ALL.iter().map(|c| c.advice()).collect();
        assert_eq!(words.len(), Cause::ALL.len());
    }

    #[test]
    fn with_file_renames_the_file_in_the_message() {
        let e = Error::Short {
            call: "MPI_File_write",
            file: "p0.n2/type2.1".into(),
            requested: 8,
            moved: 0,
        }
        .with_file("/scratch/b_eff_io.1/p0.n2/type2.1");
        assert_eq!(e.file(), "/scratch/b_eff_io.1/p0.n2/type2.1");
        assert_eq!(
            e.to_string(),
            "MPI_File_write on '/scratch/b_eff_io.1/p0.n2/type2.1' moved 0 of 8 elements"
        );
        assert!(e.is_no_space());
    }

    #[test]
    fn mpich_error_stacks_fold_into_one_line_and_name_a_full_disk() {
        let stack = "Other I/O error , error stack:\nADIOI_GEN_WRITECONTIG(80): Other I/O \
                     error No space left on device\n";
        let message = one_line(stack);
        assert_eq!(
            message,
            "Other I/O error , error stack: ADIOI_GEN_WRITECONTIG(80): Other I/O error No \
             space left on device"
        );
        let e = Error::Mpi {
            call: "MPI_File_write_all",
            file: "f".into(),
            code: 1,
            class: ErrorClass::Io,
            message,
        };
        assert!(e.is_no_space());
        let other = Error::Mpi {
            call: "MPI_File_write_all",
            file: "f".into(),
            code: 1,
            class: ErrorClass::Io,
            message: "Other I/O error".into(),
        };
        assert!(!other.is_no_space());
    }
}
