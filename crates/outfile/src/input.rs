//! Reading a file that a user named as input (`xylem compare a.json`, a perflog, a hints
//! file) without trusting what is at that name.
//!
//! A name may hold a FIFO with no writer (an open that never returns), a character device
//! such as `/dev/zero` (a read that never ends) or a file far larger than any result
//! (a read that takes all memory). [`read`] opens without blocking, accepts a regular file
//! only, and reads at most the cap it is given, so each of these is a clear error naming
//! the path instead of a hang or an out-of-memory abort.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags};

/// Why an input file was not read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The name holds something other than a regular file.
    #[error("{path}: not a regular file but {kind}; give the path of a regular file")]
    NotRegular {
        /// The path given.
        path: PathBuf,
        /// What it is, in words (`a FIFO`, `a character device`).
        kind: &'static str,
    },
    /// The file is larger than the cap.
    #[error(
        "{path}: {size} bytes, more than the {cap} bytes (the most read from one input \
         file); is this the right file?"
    )]
    TooLarge {
        /// The path given.
        path: PathBuf,
        /// Its size, as far as it was read.
        size: u64,
        /// The cap.
        cap: u64,
    },
    /// It cannot be opened or read.
    #[error("{path}: cannot read it: {}", crate::cause(error))]
    Io {
        /// The path given.
        path: PathBuf,
        /// The operating system's error.
        error: io::Error,
    },
}

impl InputError {
    /// The operating system's error, for [`InputError::Io`].
    pub fn io_error(&self) -> Option<&io::Error> {
        match self {
            InputError::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// The kind of a file type in words, for messages.
pub(crate) fn kind_text(kind: FileType) -> &'static str {
    match kind {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Unknown => "a file of unknown type",
    }
}

/// Reads the regular file `path` whole, if it holds at most `cap` bytes. The open does not
/// block (a FIFO is refused at once) and the read stops after `cap + 1` bytes, whatever
/// the file claims its size is. Symbolic links in the path are followed: the user named it.
pub fn read(path: impl AsRef<Path>, cap: u64) -> Result<Vec<u8>, InputError> {
    let path = path.as_ref();
    let io_err = |error: io::Error| InputError::Io {
        path: path.to_path_buf(),
        error,
    };
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(|e| io_err(e.into()))?;
    let stat = rustix::fs::fstat(&fd).map_err(|e| io_err(e.into()))?;
    let kind = FileType::from_raw_mode(stat.st_mode);
    if kind != FileType::RegularFile {
        return Err(InputError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_text(kind),
        });
    }
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    if size > cap {
        return Err(InputError::TooLarge {
            path: path.to_path_buf(),
            size,
            cap,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    File::from(fd)
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io_err)?;
    if bytes.len() as u64 > cap {
        return Err(InputError::TooLarge {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
            cap,
        });
    }
    Ok(bytes)
}

/// [`read`], as UTF-8 text; text that is not UTF-8 is an [`InputError::Io`] of kind
/// `InvalidData` naming the path.
pub fn read_to_string(path: impl AsRef<Path>, cap: u64) -> Result<String, InputError> {
    let path = path.as_ref();
    String::from_utf8(read(path, cap)?).map_err(|e| InputError::Io {
        path: path.to_path_buf(),
        error: io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (byte {} is not)",
                e.utf8_error().valid_up_to()
            ),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_under_the_cap_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        std::fs::write(&path, b"{}").unwrap();
        assert_eq!(read(&path, 2).unwrap(), b"{}");
        assert_eq!(read_to_string(&path, 10).unwrap(), "{}");
        let e = read(&path, 1).unwrap_err();
        assert!(
            matches!(
                e,
                InputError::TooLarge {
                    size: 2,
                    cap: 1,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("more than the 1 bytes"), "{e}");
    }

    #[test]
    fn a_fifo_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &path,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let e = read(&path, 1 << 20).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("not a regular file but a FIFO; give the path of a regular file"),
            "{e}"
        );
    }

    #[test]
    fn devices_and_directories_are_refused() {
        let e = read("/dev/zero", 1 << 20).unwrap_err();
        assert!(e.to_string().contains("a character device"), "{e}");
        let e = read("/", 1 << 20).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        let e = read("/no/such/file", 1).unwrap_err();
        assert!(
            e.io_error().is_some() && e.to_string().contains("No such file"),
            "{e}"
        );
    }

    #[test]
    fn text_that_is_not_utf8_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bin");
        std::fs::write(&path, [b'a', 0xff]).unwrap();
        let e = read_to_string(&path, 10).unwrap_err();
        assert!(e.to_string().contains("byte 1"), "{e}");
    }
}
