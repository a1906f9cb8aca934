//! A directory held by a descriptor, and the only ways xylem creates, reads as a marker,
//! renames and removes files in it.
//!
//! # The threat
//!
//! xylem runs as root at acceptance tests and writes into folders that other people can
//! write to: a shared results folder, `/scratch`, `/tmp`. Anyone there can plant, at any
//! name xylem is going to use, a symbolic link to a file root can reach, a FIFO, a device
//! such as `/dev/zero`, a huge sparse file or a fake marker, and can rename a directory
//! away mid-run and put a link in its place. Every operation here is safe against that:
//!
//! - **Nothing is created through a link or over an existing name.** Files are created
//!   with `O_CREAT|O_EXCL|O_NOFOLLOW` ([`SafeDir::create_new`]), temporary names carry 64
//!   random bits ([`SafeDir::create_temp`]), directories with `mkdirat` (which fails on
//!   any existing name) and are then opened `O_DIRECTORY|O_NOFOLLOW`.
//! - **No link planted by another user is followed on the way.** [`SafeDir::open`]
//!   walks the path one component at a time and follows a symbolic link in a folder
//!   that others can write only when the link belongs to the folder's owner or to this
//!   process's user (the rule of the kernel's `protected_symlinks`, applied to every
//!   folder, sticky or not; see [`crate::links`]).
//! - **A name is resolved once.** The directory is opened once ([`SafeDir::open`]) and
//!   every later step is relative to that descriptor (`openat`, `linkat`, `renameat2`,
//!   `unlinkat`), so a directory renamed away and replaced by a link is not followed.
//! - **A rename never lands on something planted.** A first version is hard-linked into
//!   place, which fails if the name exists ([`SafeDir::link_new`]); a later version is
//!   exchanged atomically with the previous one and the exchanged entry must be the
//!   previous version by device and inode, else the exchange is undone
//!   ([`SafeDir::replace_version`]).
//! - **Markers are read with a bound.** [`SafeDir::read_marker`] opens with
//!   `O_NOFOLLOW|O_NONBLOCK` (a FIFO does not block), accepts a regular file only and
//!   reads a few KiB at most, whatever its size claims.
//! - **Removal never leaves the tree.** [`SafeDir::remove_contents`] descends by
//!   `openat(O_DIRECTORY|O_NOFOLLOW)` and removes with `unlinkat`: a link is removed as a
//!   link, never followed, and a directory swapped for a link is not entered.
//!
//! Unlinking a name never harms what a link there points to, so removing an entry that
//! someone planted costs that someone only their own entry.

use std::ffi::{CStr, OsStr, OsString};
use std::fs::File;
use std::io::{self, ErrorKind, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags, Stat};

use crate::input::kind_text;

/// The most bytes read from a marker file (a reservation, a run directory's owner).
pub const MARKER_CAP: usize = 4096;

/// A file's identity: its device and inode numbers.
pub type Identity = (u64, u64);

/// A directory opened once; every operation is relative to its descriptor.
#[derive(Debug)]
pub struct SafeDir {
    fd: OwnedFd,
    path: PathBuf,
}

/// The identity of a `stat`.
pub fn identity(stat: &Stat) -> Identity {
    (stat.st_dev, stat.st_ino)
}

/// The type of a `stat`.
pub fn file_type(stat: &Stat) -> FileType {
    FileType::from_raw_mode(stat.st_mode)
}

/// 16 random hexadecimal digits (64 bits from the kernel's generator).
pub fn random_token() -> String {
    let mut bytes = [0u8; 8];
    if rustix::rand::getrandom(&mut bytes, rustix::rand::GetRandomFlags::empty()).is_err() {
        // No getrandom(2): the clock's nanoseconds and the PID are still not guessable
        // ahead by a planter without the exact start time.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        bytes = (nanos ^ (u64::from(std::process::id()) << 40)).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The effective user id of this process.
pub fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

fn io(e: rustix::io::Errno) -> io::Error {
    e.into()
}

/// Whether `e` says that the file system does not support an operation (hard links,
/// `renameat2` flags): `EPERM` (no links on FAT, FUSE), `EOPNOTSUPP`, `EINVAL`, `ENOSYS`.
fn unsupported(e: &io::Error) -> bool {
    e.kind() == ErrorKind::Unsupported || matches!(e.raw_os_error(), Some(1 | 22 | 38 | 95))
}

impl SafeDir {
    /// Opens the directory `path`. Symbolic links on the way are followed only where the
    /// rule of [`crate::links`] allows it (the kernel's `protected_symlinks`, applied to
    /// every folder): a link in a folder that others can write, owned neither by the
    /// folder's owner nor by this process's user, is refused with an error that names it
    /// ([`crate::links::planted_link`]).
    pub fn open(path: impl AsRef<Path>) -> io::Result<SafeDir> {
        SafeDir::walk(path.as_ref(), false)
    }

    /// As [`SafeDir::open`], creating the folders of `path` that are missing (as
    /// `mkdir -p`, mode 0777 less the umask); a folder missing at a link's target is not
    /// created.
    pub fn create_all(path: impl AsRef<Path>) -> io::Result<SafeDir> {
        SafeDir::walk(path.as_ref(), true)
    }

    fn walk(path: &Path, create: bool) -> io::Result<SafeDir> {
        let shown = if path.as_os_str().is_empty() {
            Path::new(".")
        } else {
            path
        };
        let fd = crate::links::resolve(shown, create)?;
        Ok(SafeDir {
            fd,
            path: shown.to_path_buf(),
        })
    }

    /// The path it was opened by (for messages; operations never use it).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of `name` in it, for messages.
    pub fn shown(&self, name: impl AsRef<OsStr>) -> PathBuf {
        self.path.join(name.as_ref())
    }

    /// Its descriptor.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Its own `stat` (by descriptor).
    pub fn stat_self(&self) -> io::Result<Stat> {
        rustix::fs::fstat(&self.fd).map_err(io)
    }

    /// Its identity.
    pub fn identity(&self) -> io::Result<Identity> {
        self.stat_self().map(|s| identity(&s))
    }

    /// The `stat` of `name`, not following a link; `None` when nothing has the name.
    pub fn stat(&self, name: impl AsRef<OsStr>) -> io::Result<Option<Stat>> {
        match rustix::fs::statat(&self.fd, name.as_ref(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(s) => Ok(Some(s)),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(io(e)),
        }
    }

    /// Whether `name` is a directory itself (not a link to one).
    pub fn is_real_dir(&self, name: impl AsRef<OsStr>) -> bool {
        self.stat(name)
            .ok()
            .flatten()
            .is_some_and(|s| file_type(&s) == FileType::Directory)
    }

    /// Opens the subdirectory `name`, refusing a link (`ELOOP`/`ENOTDIR`).
    pub fn open_dir(&self, name: impl AsRef<OsStr>) -> io::Result<SafeDir> {
        let name = name.as_ref();
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io)?;
        Ok(SafeDir {
            fd,
            path: self.shown(name),
        })
    }

    /// Creates the subdirectory `name` (which must not exist in any form) and opens it.
    pub fn create_dir(&self, name: impl AsRef<OsStr>, mode: u32) -> io::Result<SafeDir> {
        let name = name.as_ref();
        rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(mode)).map_err(io)?;
        self.open_dir(name)
    }

    /// Creates the file `name` for writing (and reading back): exclusively (`AlreadyExists` if anything has
    /// the name, a dangling link included) and never through a link.
    pub fn create_new(&self, name: impl AsRef<OsStr>, mode: u32) -> io::Result<File> {
        let fd = rustix::fs::openat(
            &self.fd,
            name.as_ref(),
            OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        )
        .map_err(io)?;
        Ok(File::from(fd))
    }

    /// Opens the existing file `name` for reading and writing, refusing a link.
    pub fn open_existing(&self, name: impl AsRef<OsStr>) -> io::Result<File> {
        let fd = rustix::fs::openat(
            &self.fd,
            name.as_ref(),
            OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY,
            Mode::empty(),
        )
        .map_err(io)?;
        Ok(File::from(fd))
    }

    /// Creates a new file named `prefix` followed by 16 random hexadecimal digits, as
    /// [`SafeDir::create_new`] does; a name that is taken (planted) is passed over.
    pub fn create_temp(&self, prefix: &OsStr, mode: u32) -> io::Result<(OsString, File)> {
        let mut last = None;
        for _ in 0..16 {
            let mut name = prefix.to_os_string();
            name.push(random_token());
            match self.create_new(&name, mode) {
                Ok(file) => return Ok((name, file)),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::from(ErrorKind::AlreadyExists)))
    }

    /// Gives the file `from` the second name `to`, which must not exist (`AlreadyExists`;
    /// a link at `to` is not followed, nor one at `from`). On a file system without hard
    /// links, `from` is renamed to `to` instead, still without replacing anything (and
    /// is then gone under its old name).
    pub fn link_new(&self, from: impl AsRef<OsStr>, to: impl AsRef<OsStr>) -> io::Result<()> {
        let (from, to) = (from.as_ref(), to.as_ref());
        match rustix::fs::linkat(&self.fd, from, &self.fd, to, AtFlags::empty()).map_err(io) {
            Err(e) if e.kind() != ErrorKind::AlreadyExists && unsupported(&e) => {
                self.rename_noreplace(from, to)
            }
            other => other,
        }
    }

    /// Renames `from` to `to` unless `to` exists (`AlreadyExists`), atomically where the
    /// file system has `RENAME_NOREPLACE`, else by a check just before a plain rename.
    pub fn rename_noreplace(
        &self,
        from: impl AsRef<OsStr>,
        to: impl AsRef<OsStr>,
    ) -> io::Result<()> {
        let (from, to) = (from.as_ref(), to.as_ref());
        match rustix::fs::renameat_with(&self.fd, from, &self.fd, to, RenameFlags::NOREPLACE)
            .map_err(io)
        {
            Err(e) if e.kind() != ErrorKind::AlreadyExists && unsupported(&e) => {
                if self.stat(to)?.is_some() {
                    return Err(ErrorKind::AlreadyExists.into());
                }
                rustix::fs::renameat(&self.fd, from, &self.fd, to).map_err(io)
            }
            other => other,
        }
    }

    /// Puts the file `from` at `to` in place of the previous version, whose identity is
    /// `previous`; the previous version is removed. The caller keeps the previous version
    /// open, so that its inode number cannot be given to a file planted after it was
    /// removed. Whatever else is at `to` — someone
    /// else's file, a planted link — stays as it is, and the error says so
    /// (`AlreadyExists`). Atomic where the file system has `RENAME_EXCHANGE`; elsewhere
    /// the check comes just before a plain rename. On error `from` is left to the caller.
    pub fn replace_version(
        &self,
        from: impl AsRef<OsStr>,
        to: impl AsRef<OsStr>,
        previous: Identity,
    ) -> io::Result<()> {
        let (from, to) = (from.as_ref(), to.as_ref());
        let replaced = || {
            io::Error::new(
                ErrorKind::AlreadyExists,
                "the file at that name is no longer the version this run wrote (someone \
                 replaced or removed it); it is left as it is",
            )
        };
        match rustix::fs::renameat_with(&self.fd, from, &self.fd, to, RenameFlags::EXCHANGE)
            .map_err(io)
        {
            Ok(()) => {
                // `from` now names what was at `to`.
                let was = self.stat(from)?;
                let regular = was
                    .as_ref()
                    .is_some_and(|s| file_type(s) == FileType::RegularFile);
                if regular && was.as_ref().map(identity) == Some(previous) {
                    let _ = self.unlink(from);
                    Ok(())
                } else {
                    // Not ours: swap back, so that both names hold what they held.
                    rustix::fs::renameat_with(&self.fd, from, &self.fd, to, RenameFlags::EXCHANGE)
                        .map_err(io)?;
                    Err(replaced())
                }
            }
            Err(e) if e.kind() == ErrorKind::NotFound && self.stat(from)?.is_some() => {
                // Nothing at `to`: the previous version was removed by someone.
                Err(replaced())
            }
            Err(e) if unsupported(&e) => {
                if self.stat(to)?.as_ref().map(identity) != Some(previous) {
                    return Err(replaced());
                }
                rustix::fs::renameat(&self.fd, from, &self.fd, to).map_err(io)
            }
            Err(e) => Err(e),
        }
    }

    /// Renames `from` to `to`, replacing what is at `to` (a link there is replaced, not
    /// followed). For generated files that may replace an older version.
    pub fn rename_over(&self, from: impl AsRef<OsStr>, to: impl AsRef<OsStr>) -> io::Result<()> {
        rustix::fs::renameat(&self.fd, from.as_ref(), &self.fd, to.as_ref()).map_err(io)
    }

    /// Removes the name `name` (a file or a link, never what a link points to).
    pub fn unlink(&self, name: impl AsRef<OsStr>) -> io::Result<()> {
        rustix::fs::unlinkat(&self.fd, name.as_ref(), AtFlags::empty()).map_err(io)
    }

    /// Removes the empty subdirectory `name`.
    pub fn remove_dir(&self, name: impl AsRef<OsStr>) -> io::Result<()> {
        rustix::fs::unlinkat(&self.fd, name.as_ref(), AtFlags::REMOVEDIR).map_err(io)
    }

    /// Reads the marker file `name`: a regular file, not a link, at most
    /// [`MARKER_CAP`] bytes, opened without blocking. `Ok(None)` when nothing has the
    /// name; `InvalidData` errors say what else is there. Returns its text (lossy UTF-8)
    /// and its `stat`.
    pub fn read_marker(&self, name: impl AsRef<OsStr>) -> io::Result<Option<(String, Stat)>> {
        let fd = match rustix::fs::openat(
            &self.fd,
            name.as_ref(),
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(rustix::io::Errno::LOOP) => {
                return Err(io::Error::new(
                    ErrorKind::InvalidData,
                    "not a regular file but a symbolic link",
                ))
            }
            Err(e) => return Err(io(e)),
        };
        let stat = rustix::fs::fstat(&fd).map_err(io)?;
        let kind = file_type(&stat);
        if kind != FileType::RegularFile {
            return Err(io::Error::new(
                ErrorKind::InvalidData,
                format!("not a regular file but {}", kind_text(kind)),
            ));
        }
        if stat.st_size > MARKER_CAP as i64 {
            return Err(too_large(stat.st_size as u64));
        }
        let mut bytes = Vec::with_capacity(MARKER_CAP);
        File::from(fd)
            .take(MARKER_CAP as u64 + 1)
            .read_to_end(&mut bytes)?;
        if bytes.len() > MARKER_CAP {
            return Err(too_large(bytes.len() as u64));
        }
        Ok(Some((String::from_utf8_lossy(&bytes).into_owned(), stat)))
    }

    /// The entries of the directory (not `.` and `..`), with their types as far as the
    /// directory listing tells (`Unknown` on some file systems: ask [`SafeDir::stat`]).
    pub fn entries(&self) -> io::Result<Vec<(OsString, FileType)>> {
        let mut out = Vec::new();
        for entry in rustix::fs::Dir::read_from(&self.fd).map_err(io)? {
            let entry = entry.map_err(io)?;
            let name = entry.file_name();
            if is_dot(name) {
                continue;
            }
            out.push((
                OsStr::from_bytes(name.to_bytes()).to_os_string(),
                entry.file_type(),
            ));
        }
        Ok(out)
    }

    /// Removes everything in this directory but the entries named in `keep`, depth first,
    /// never following a link and never leaving the tree. Entries that vanish meanwhile
    /// are fine; the first other error stops it.
    pub fn remove_contents(&self, keep: &[&OsStr]) -> io::Result<()> {
        for (name, kind) in self.entries()? {
            if keep.contains(&name.as_os_str()) {
                continue;
            }
            let is_dir = match kind {
                FileType::Directory => true,
                FileType::Unknown => self
                    .stat(&name)?
                    .is_some_and(|s| file_type(&s) == FileType::Directory),
                _ => false,
            };
            let removed = if is_dir {
                match self.open_dir(&name) {
                    Ok(sub) => sub
                        .remove_contents(&[])
                        .and_then(|()| self.remove_dir(&name)),
                    // Swapped for a link or a file since the listing: remove that name.
                    Err(e) if matches!(e.raw_os_error(), Some(20 | 40)) => self.unlink(&name),
                    Err(e) => Err(e),
                }
            } else {
                self.unlink(&name)
            };
            match removed {
                Err(e) if e.kind() != ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }

    /// Syncs the directory, so that a rename in it survives a crash (best effort: some
    /// file systems refuse to sync a directory).
    pub fn sync(&self) {
        let _ = rustix::fs::fsync(&self.fd);
    }
}

fn too_large(size: u64) -> io::Error {
    io::Error::new(
        ErrorKind::InvalidData,
        format!("{size} bytes, more than a marker's {MARKER_CAP}"),
    )
}

fn is_dot(name: &CStr) -> bool {
    matches!(name.to_bytes(), b"." | b"..")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::symlink;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn created_files_never_follow_links() {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let out = tmp.path().join("out");
        std::fs::create_dir(&out).unwrap();
        symlink(&victim, out.join("planted")).unwrap();
        let dir = SafeDir::open(&out).unwrap();
        let e = dir.create_new("planted", 0o644).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e}");
        // A temporary name is random, and passed over when taken.
        let (name, mut file) = dir.create_temp(OsStr::new(".t."), 0o644).unwrap();
        assert_eq!(name.len(), 3 + 16);
        file.write_all(b"x").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        // Linking into place refuses the planted link, and does not follow it.
        let e = dir.link_new(&name, "planted").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }

    #[test]
    fn a_version_replaces_only_the_previous_version() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = SafeDir::open(tmp.path()).unwrap();
        let mut open_versions = Vec::new();
        std::fs::write(tmp.path().join("v1"), "one").unwrap();
        dir.link_new("v1", "out").unwrap();
        dir.unlink("v1").unwrap();
        let first = identity(&dir.stat("out").unwrap().unwrap());
        std::fs::write(tmp.path().join("v2"), "two").unwrap();
        dir.replace_version("v2", "out", first).unwrap();
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("out")).unwrap(),
            "two"
        );
        assert_eq!(names(tmp.path()), ["out"]);
        // Someone put a link in place of our version: it stays, and so does its target.
        let victim = tmp.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let second = identity(&dir.stat("out").unwrap().unwrap());
        open_versions.push(File::open(tmp.path().join("out")).unwrap());
        std::fs::remove_file(tmp.path().join("out")).unwrap();
        symlink(&victim, tmp.path().join("out")).unwrap();
        std::fs::write(tmp.path().join("v3"), "three").unwrap();
        let e = dir.replace_version("v3", "out", second).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e}");
        assert!(std::fs::symlink_metadata(tmp.path().join("out"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("v3")).unwrap(),
            "three"
        );
    }

    #[test]
    fn markers_are_read_with_a_bound_and_a_type_check() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = SafeDir::open(tmp.path()).unwrap();
        assert!(dir.read_marker("none").unwrap().is_none());
        std::fs::write(tmp.path().join("ok"), "pid 1\n").unwrap();
        assert_eq!(dir.read_marker("ok").unwrap().unwrap().0, "pid 1\n");
        rustix::fs::mknodat(
            &dir.fd,
            "fifo",
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let e = dir.read_marker("fifo").unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
        symlink("/dev/zero", tmp.path().join("zero")).unwrap();
        let e = dir.read_marker("zero").unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let sparse = File::create(tmp.path().join("sparse")).unwrap();
        sparse.set_len(2 << 30).unwrap();
        let e = dir.read_marker("sparse").unwrap_err();
        assert!(e.to_string().contains("more than a marker's 4096"), "{e}");
    }

    #[test]
    fn removal_stays_inside_the_tree() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(outside.join("sub")).unwrap();
        std::fs::write(outside.join("sub/file"), "keep").unwrap();
        let run = tmp.path().join("run");
        std::fs::create_dir_all(run.join("a/b")).unwrap();
        std::fs::write(run.join("a/b/f"), "x").unwrap();
        std::fs::write(run.join("marker"), "m").unwrap();
        symlink(&outside, run.join("link")).unwrap();
        symlink(&outside, run.join("a/link")).unwrap();
        let dir = SafeDir::open(&run).unwrap();
        dir.remove_contents(&[OsStr::new("marker")]).unwrap();
        assert_eq!(names(&run), ["marker"]);
        assert_eq!(
            std::fs::read_to_string(outside.join("sub/file")).unwrap(),
            "keep"
        );
    }
}
