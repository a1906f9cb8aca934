//! The run directory: created fresh under `--path`, marked with who made it, removed
//! unless `--keep`; the leftovers of killed runs, reported and cleaned (`--clean`).
//!
//! A run directory is `b_eff_io.<timestamp>.<pid>/` and holds, from its creation, the owner
//! marker [`OWNER_FILE`] (an [`outfile::owner`] marker: the pid, host, user, boot id and
//! start time of the process that made it, rank 0). A run killed with SIGKILL cannot
//! remove its directory; the next run in the same `--path` names what it finds there
//! ([`report_leftovers`]), and `b_eff_io --clean DIR` removes the run directories whose
//! marker names a process that is gone ([`clean`]).
//!
//! `--path` is often a folder other people can write to (`/scratch`), and b_eff_io often
//! runs as root, so every step goes through [`outfile::SafeDir`] (whose documentation
//! names the threat): the run directory is made with `mkdirat` and held by a descriptor
//! from then on ([`RunDir`]), removed through that descriptor without following a link,
//! and its own name is removed only while it still names that directory (one renamed away
//! and replaced by a link is not followed: the link's target is untouched). `--clean`
//! removes only entries named `b_eff_io.*` that are real directories, owned, like their
//! regular-file marker, by the invoking user (or, for root, by the user the marker
//! names), never the directory it was given. Each is opened once, examined and removed
//! through that descriptor ([`Found`]), with the rights of its user; its name is removed
//! only while it has the device and inode examined, and one renamed away and replaced
//! meanwhile is said, with what replaced it left alone. Whether a marker's process is
//! gone is judged only where it can be seen ([`Holder::liveness`]: its PID namespace, or
//! the host's initial one). Every path and marker field shown is escaped
//! ([`outfile::shown`]).

use std::ffi::{OsStr, OsString};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use benchkit::Exit;
use outfile::owner::{Holder, Liveness};
use outfile::safedir::{identity, Identity};
use outfile::{shown, SafeDir};

/// The owner marker in every run directory.
pub const OWNER_FILE: &str = "b_eff_io.owner";
/// The first line of an owner marker.
pub const OWNER_HEADER: &str = "# b_eff_io run directory: made by the process below";
/// What `--clean` says of a run directory whose name was given to something else while
/// it removed it.
const REPLACED: &str = "it was replaced during --clean";
/// Run directories are named `b_eff_io.<timestamp>.<pid>`.
const PREFIX: &str = "b_eff_io.";

/// What went wrong with a run directory or a file in it: each names the path and the cause.
#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    /// `--path` cannot be opened as a directory.
    #[error("cannot use --path '{}': {}", shown::path(.base), base_cause(.source))]
    Base {
        /// `--path`.
        base: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The run directory cannot be made under `--path`.
    #[error(
        "cannot create the run directory '{}' under --path '{}': {}",
        shown::path(.path),
        shown::path(.base),
        cause(.source)
    )]
    Create {
        /// The run directory.
        path: PathBuf,
        /// `--path`.
        base: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The run directory, once made, cannot be examined.
    #[error("cannot examine the run directory '{}': {}", shown::path(.path), cause(.source))]
    Examine {
        /// The run directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A path that cannot be a run directory (no parent, or no last component).
    #[error("'{}' names no run directory", shown::path(.0))]
    NoName(PathBuf),
    /// Another rank cannot see (or hold) the run directory rank 0 made.
    #[error("run directory '{}' is not visible on this rank: {}", shown::path(.path), cause(.source))]
    NotVisible {
        /// The run directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file (or a folder, for `--clean`) cannot be read.
    #[error("cannot read '{}': {}", shown::path(.path), cause(.source))]
    Read {
        /// What was read.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file in the run directory cannot be written.
    #[error("cannot write '{}': {}", shown::path(.path), cause(.source))]
    Write {
        /// What was written.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The owner marker is gone.
    #[error("'{}' is gone", shown::path(.0))]
    Gone(PathBuf),
    /// The owner marker is not one.
    #[error("'{}' is not a b_eff_io owner marker: {}", shown::path(.path), shown::text(.why))]
    NotMarker {
        /// The marker.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The run directory cannot be removed.
    #[error("cannot remove '{}': {}", shown::path(.path), cause(.source))]
    Remove {
        /// The run directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The working directory cannot be held, to come back to it.
    #[error("cannot note the working directory: {}", cause(.0))]
    NoteWorkdir(#[source] std::io::Error),
    /// The run directory cannot be entered.
    #[error("cannot enter the run directory '{}': {}", shown::path(.path), cause(.source))]
    Enter {
        /// The run directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl RunDirError {
    /// The exit it ends a run with: bad input ([`Exit::Usage`]) when the cause is a link
    /// another user planted on the way ([`outfile::links::planted_link`]), else a failure.
    pub fn exit(&self) -> Exit {
        let source = match self {
            RunDirError::Base { source, .. }
            | RunDirError::Create { source, .. }
            | RunDirError::Examine { source, .. }
            | RunDirError::NotVisible { source, .. }
            | RunDirError::Read { source, .. }
            | RunDirError::Write { source, .. }
            | RunDirError::Remove { source, .. }
            | RunDirError::Enter { source, .. }
            | RunDirError::NoteWorkdir(source) => Some(source),
            RunDirError::NoName(_) | RunDirError::Gone(_) | RunDirError::NotMarker { .. } => None,
        };
        match source.and_then(outfile::links::planted_link) {
            Some(_) => Exit::Usage,
            None => Exit::Failure,
        }
    }
}

/// Why `--path` cannot be used: `not a directory` for ENOTDIR, else [`cause`].
fn base_cause(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(20) => "not a directory".to_string(),
        _ => cause(e),
    }
}

/// A run directory, held by a descriptor from its creation (or, on ranks that did not
/// make it, from their first look at it).
#[derive(Debug)]
pub struct RunDir {
    /// The folder it is in (`--path`), held open.
    base: SafeDir,
    /// Its name in that folder.
    name: OsString,
    /// The directory itself.
    dir: SafeDir,
    /// Its identity, to tell it from anything put under its name later.
    identity: Identity,
    /// Its absolute path, for messages and for the other ranks.
    path: PathBuf,
}

impl RunDir {
    /// Creates `<base>/b_eff_io.<timestamp>.<pid>/` (mode 0700) with its owner marker;
    /// fails (naming the path) if `base` is missing, not a directory, not writable, or the
    /// name exists in any form. Leftovers of earlier runs in `base` are reported on
    /// standard error first ([`report_leftovers`]).
    pub fn create(base: &Path, stamp: &str, pid: u32) -> Result<RunDir, RunDirError> {
        let base_dir = SafeDir::open(base).map_err(|source| RunDirError::Base {
            base: base.to_path_buf(),
            source,
        })?;
        report_leftovers(&base_dir);
        let name = OsString::from(format!("{PREFIX}{stamp}.{pid}"));
        let path = std::path::absolute(base.join(&name)).unwrap_or_else(|_| base.join(&name));
        let dir = base_dir
            .create_dir(&name, 0o700)
            .map_err(|source| RunDirError::Create {
                path: path.clone(),
                base: base.to_path_buf(),
                source,
            })?;
        let run = RunDir {
            identity: dir.identity().map_err(|source| RunDirError::Examine {
                path: path.clone(),
                source,
            })?,
            base: base_dir,
            name,
            dir,
            path,
        };
        let marker = Holder::this_process().render(OWNER_HEADER, None);
        let written = run
            .dir
            .create_new(OWNER_FILE, 0o644)
            .and_then(|mut f| std::io::Write::write_all(&mut f, marker.as_bytes()));
        if let Err(source) = written {
            let _ = run.remove();
            return Err(RunDirError::Write {
                path: run.path.join(OWNER_FILE),
                source,
            });
        }
        Ok(run)
    }

    /// The run directory that rank 0 made at `path`, as another rank sees it: its last
    /// component must be a directory, not a link.
    pub fn open(path: &Path) -> Result<RunDir, RunDirError> {
        let not_visible = |source| RunDirError::NotVisible {
            path: path.to_path_buf(),
            source,
        };
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(RunDirError::NoName(path.to_path_buf()));
        };
        let base = SafeDir::open(parent).map_err(not_visible)?;
        let dir = base.open_dir(name).map_err(not_visible)?;
        Ok(RunDir {
            identity: dir.identity().map_err(not_visible)?,
            base,
            name: name.to_os_string(),
            dir,
            path: path.to_path_buf(),
        })
    }

    /// Its absolute path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory, by its descriptor.
    pub fn dir(&self) -> &SafeDir {
        &self.dir
    }

    /// `None` while its name still names it; else what became of it, in words (removed,
    /// or renamed away and something else put there).
    pub fn missing(&self) -> Option<String> {
        match self.base.stat(&self.name) {
            Ok(Some(s)) if identity(&s) == self.identity => None,
            Ok(Some(_)) => Some(format!(
                "the run directory '{}' was replaced by something else while the run used it",
                shown::path(&self.path)
            )),
            Ok(None) => Some(format!(
                "the run directory '{}' was removed (or renamed) by another process while \
                 the run used it",
                shown::path(&self.path)
            )),
            Err(e) => Some(format!(
                "the run directory '{}' cannot be seen: {}",
                shown::path(&self.path),
                cause(&e)
            )),
        }
    }

    /// Removes everything in it, the owner marker last, then the directory itself if its
    /// name still names it: a removal cut short (the launcher's SIGKILL after its SIGTERM,
    /// say, while gigabytes are unlinked) leaves a directory that still says whose it was,
    /// so the next run reports it and `--clean` may remove it. Other ranks may be removing
    /// it at the same time (after a signal) or still creating files in it, so a failed
    /// attempt is retried for up to a second.
    pub fn remove(&self) -> Result<(), RunDirError> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        loop {
            match remove_held(&self.base, &self.name, &self.dir, self.identity) {
                // A name that was swapped stays; `missing` says so.
                Ok(_) => return Ok(()),
                Err(source) if std::time::Instant::now() >= deadline => {
                    return Err(RunDirError::Remove {
                        path: self.path.clone(),
                        source,
                    })
                }
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(2)),
            }
        }
    }

    /// Notes in the owner marker that its run ended and kept it (`--keep`), so that later
    /// runs do not report it as a leftover and `--clean` leaves it alone.
    pub fn mark_kept(&self) -> Result<(), RunDirError> {
        let shown = self.path.join(OWNER_FILE);
        let (text, _) = self
            .dir
            .read_marker(OWNER_FILE)
            .map_err(|source| RunDirError::Read {
                path: shown.clone(),
                source,
            })?
            .ok_or_else(|| RunDirError::Gone(shown.clone()))?;
        let mut owner = Holder::parse(&text).map_err(|why| RunDirError::NotMarker {
            path: shown.clone(),
            why,
        })?;
        owner.kept = Some(chrono::Local::now().to_rfc3339());
        let unwritten = |source| RunDirError::Write {
            path: shown.clone(),
            source,
        };
        let (temp, mut file) = self
            .dir
            .create_temp(OsStr::new(".b_eff_io.owner.tmp."), 0o644)
            .map_err(unwritten)?;
        let written =
            std::io::Write::write_all(&mut file, owner.render(OWNER_HEADER, None).as_bytes())
                .and_then(|()| self.dir.rename_over(&temp, OWNER_FILE));
        if let Err(e) = written {
            let _ = self.dir.unlink(&temp);
            return Err(unwritten(e));
        }
        Ok(())
    }
}

/// What became of a held directory's name when its contents were removed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NameWas {
    /// It still named the directory, and is removed.
    Removed,
    /// Nothing had the name any more (another rank removed it, or someone renamed it).
    Gone,
    /// Something else had the name (the directory was renamed away and this put in its
    /// place): it is left as it is; the text says what it is.
    Replaced(String),
}

/// Everything in `dir` (held by its descriptor) but the owner marker, then the marker,
/// then `dir`'s name in `base` if it still names `dir` ([`remove_name`]). The name is
/// never opened again: what is removed is what `dir` holds, found through its
/// descriptor; a name that was swapped is left alone with everything under it.
fn remove_held(
    base: &SafeDir,
    name: &OsStr,
    dir: &SafeDir,
    identity_: Identity,
) -> std::io::Result<NameWas> {
    empty_held(dir)?;
    remove_name(base, name, identity_)
}

/// Everything in `dir` but the owner marker, then the marker (so that a removal cut
/// short leaves a directory that still says whose it was).
fn empty_held(dir: &SafeDir) -> std::io::Result<()> {
    dir.remove_contents(&[OsStr::new(OWNER_FILE)])?;
    match dir.unlink(OWNER_FILE) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Removes the (emptied) directory `name` from `base` if the name still has the device
/// and inode `identity_`, checked just before the `unlinkat(AT_REMOVEDIR)`; else says
/// what has the name, and leaves it. (Between the check and the `unlinkat` only an empty
/// directory could take the name's place, and an empty directory is all that
/// `AT_REMOVEDIR` removes.)
fn remove_name(base: &SafeDir, name: &OsStr, identity_: Identity) -> std::io::Result<NameWas> {
    match base.stat(name)? {
        Some(s) if identity(&s) == identity_ => match base.remove_dir(name) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(NameWas::Gone),
            Err(e) => Err(e),
            Ok(()) => Ok(NameWas::Removed),
        },
        Some(s) => Ok(NameWas::Replaced(match outfile::safedir::file_type(&s) {
            rustix::fs::FileType::Directory => format!("a directory of user {}", s.st_uid),
            rustix::fs::FileType::Symlink => format!("a symbolic link of user {}", s.st_uid),
            _ => format!("a file of user {}", s.st_uid),
        })),
        None => Ok(NameWas::Gone),
    }
}

/// Runs `f` on this thread as the user `uid` (group `gid`, no supplementary groups)
/// when this process is root and `uid` is another user, then as root again: another
/// user's run directory is removed with that user's rights and no more, so that nothing
/// put into it which that user could not remove (a folder of a third user moved in,
/// say) is removed by root. The identity is the thread's own (`setresuid(2)` as the
/// kernel has it), so other threads are untouched; the saved user id stays root, to come
/// back.
fn as_user<T>(uid: u32, gid: u32, f: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
    use rustix::process::{Gid, Uid};
    use rustix::thread::{set_thread_groups, set_thread_res_gid, set_thread_res_uid};
    if outfile::safedir::euid() != 0 || uid == 0 {
        return f();
    }
    let groups = rustix::process::getgroups()?;
    let egid = rustix::process::getegid();
    let become_user = || -> std::io::Result<()> {
        set_thread_groups(&[])?;
        set_thread_res_gid(None::<Gid>, Gid::from_raw(gid), None::<Gid>)?;
        set_thread_res_uid(None::<Uid>, Uid::from_raw(uid), None::<Uid>)?;
        Ok(())
    };
    let done = match become_user() {
        Ok(()) => f(),
        Err(e) => Err(std::io::Error::new(
            e.kind(),
            format!("cannot take the identity of user {uid} to remove it as that user ({e})"),
        )),
    };
    let back = set_thread_res_uid(None::<Uid>, Uid::ROOT, None::<Uid>)
        .and_then(|()| set_thread_res_gid(None::<Gid>, egid, None::<Gid>))
        .and_then(|()| set_thread_groups(&groups));
    match back {
        Ok(()) => done,
        Err(e) => Err(std::io::Error::other(format!(
            "cannot become root again after acting as user {uid} ({e})"
        ))),
    }
}

/// A plain description of an I/O error (with the errno text).
pub fn cause(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(28) => "no space left on device (ENOSPC)".into(),
        Some(30) => "read-only file system (EROFS)".into(),
        Some(13) => "permission denied (EACCES)".into(),
        Some(2) => "no such file or directory (ENOENT)".into(),
        Some(17) => "already exists (EEXIST)".into(),
        Some(36) => "file name too long (ENAMETOOLONG)".into(),
        _ => e.to_string(),
    }
}

/// The working directory moved into the run directory for as long as this lives, so that
/// the names MPI-IO sees are short (`p0.n4/type1`) however long `--path` is: Open MPI 4.1's
/// shared-file-pointer component copies the file name into a 256-byte buffer and aborts
/// on a longer one. The move is by descriptor (`fchdir`), so it enters the directory this
/// rank holds, whatever its name names by then. Dropping it moves back to where the
/// process was.
#[derive(Debug)]
pub struct Workdir {
    previous: std::fs::File,
}

impl Workdir {
    /// Moves into `dir`, remembering the current directory by a descriptor (so that
    /// going back works whatever its path).
    pub fn enter(dir: &RunDir) -> Result<Workdir, RunDirError> {
        use std::os::unix::fs::OpenOptionsExt;
        let previous = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_PATH | nix::libc::O_DIRECTORY)
            .open(".")
            .map_err(RunDirError::NoteWorkdir)?;
        nix::unistd::fchdir(dir.dir().fd().as_raw_fd()).map_err(|e| RunDirError::Enter {
            path: dir.path().to_path_buf(),
            source: e.into(),
        })?;
        Ok(Workdir { previous })
    }
}

impl Drop for Workdir {
    fn drop(&mut self) {
        let _ = nix::unistd::fchdir(self.previous.as_raw_fd());
    }
}

/// This host's name, as owner markers record it.
pub fn host_name() -> String {
    outfile::owner::this_host()
}

/// Something in a `--path` that is named like a run directory, as examined.
#[derive(Debug)]
pub struct Found {
    /// Its path.
    pub path: PathBuf,
    /// Its name in the folder.
    pub name: OsString,
    /// Bytes allocated on disk below it.
    pub bytes: u64,
    /// Its owner marker, if it has a valid one that its owner wrote.
    pub owner: Option<Holder>,
    /// Whether its owner still runs (`None` without a valid marker).
    pub liveness: Option<Liveness>,
    /// Why it has no valid marker, when it has none.
    pub refused: Option<String>,
    /// The directory that was examined, held by its descriptor with its identity, so
    /// that `--clean` removes what it examined and nothing put under its name since;
    /// `None` when it could not be opened, or once released ([`leftovers`]).
    held: Option<(SafeDir, Identity)>,
}

/// Bytes allocated below the directory `dir` holds, itself included (`st_blocks` ·
/// 512), through its descriptor: nothing is followed, and a subdirectory renamed or
/// swapped meanwhile is counted as what it is when opened, or not at all.
fn disk_usage(dir: &SafeDir) -> u64 {
    let blocks = |s: &rustix::fs::Stat| u64::try_from(s.st_blocks).unwrap_or(0) * 512;
    let mut bytes = dir.stat_self().map_or(0, |s| blocks(&s));
    for (name, _) in dir.entries().unwrap_or_default() {
        let Ok(Some(stat)) = dir.stat(&name) else {
            continue;
        };
        let sum = if outfile::safedir::file_type(&stat) == rustix::fs::FileType::Directory {
            dir.open_dir(&name).map_or(0, |sub| disk_usage(&sub))
        } else {
            blocks(&stat)
        };
        bytes = bytes.saturating_add(sum);
    }
    bytes
}

/// Whether a marker file owned by `file_uid` in a directory owned by `dir_uid` may speak
/// for the run directory, for a process of effective user `me`: the file and the
/// directory belong to one user, who is `me` — or, for root, the user the marker names.
fn trusted_owner(holder: &Holder, file_uid: u32, dir_uid: u32, me: u32) -> Result<(), String> {
    if file_uid != dir_uid {
        return Err(format!(
            "its owner marker belongs to user {file_uid} but the directory to user {dir_uid}"
        ));
    }
    if file_uid == me {
        return Ok(());
    }
    if me == 0 && holder.uid == Some(file_uid) {
        return Ok(());
    }
    Err(format!(
        "its owner marker belongs to user {file_uid}, not to this user ({me}){}",
        if me == 0 {
            " nor to the user it names"
        } else {
            ""
        }
    ))
}

/// The run directory `name` in `base`, opened once without following a link and held
/// by that descriptor ([`Found`]): its marker (a regular file of at most a few KiB, read
/// without blocking), whose it is, whether that process runs, and its size.
fn examine(base: &SafeDir, name: &OsStr) -> Found {
    let mut found = Found {
        bytes: 0,
        path: base.shown(name),
        name: name.to_os_string(),
        owner: None,
        liveness: None,
        refused: None,
        held: None,
    };
    let opened = base.open_dir(name).and_then(|dir| {
        let stat = dir.stat_self()?;
        Ok((dir, stat))
    });
    let (dir, dir_stat) = match opened {
        Ok(held) => held,
        Err(e) => {
            found.refused = Some(format!("it cannot be opened ({})", cause(&e)));
            return found;
        }
    };
    let judged = (|| {
        let (text, stat) = dir
            .read_marker(OWNER_FILE)
            .map_err(|e| format!("its {OWNER_FILE} is {}", cause(&e)))?
            .ok_or_else(|| format!("without an owner marker ({OWNER_FILE})"))?;
        if !text.lines().next().is_some_and(is_owner_header) {
            return Err(format!("its {OWNER_FILE} is not a b_eff_io owner marker"));
        }
        let holder = Holder::parse(&text)
            .map_err(|why| format!("its {OWNER_FILE} cannot be read ({why})"))?;
        trusted_owner(
            &holder,
            stat.st_uid,
            dir_stat.st_uid,
            outfile::safedir::euid(),
        )?;
        Ok(holder)
    })();
    match judged {
        Ok(holder) => {
            found.liveness = Some(holder.liveness());
            found.owner = Some(holder);
        }
        Err(why) => found.refused = Some(why),
    }
    found.bytes = disk_usage(&dir);
    found.held = Some((dir, identity(&dir_stat)));
    found
}

/// The first line of an owner marker, of this release or an earlier one.
fn is_owner_header(line: &str) -> bool {
    line.trim() == OWNER_HEADER || line.trim() == "b_eff_io run directory"
}

/// The names in `base` of real directories named like run directories (links and files
/// are passed over), sorted.
fn run_dir_names(base: &SafeDir) -> std::io::Result<Vec<OsString>> {
    let mut names: Vec<OsString> = base
        .entries()?
        .into_iter()
        .filter(|(name, _)| name.as_bytes().starts_with(PREFIX.as_bytes()))
        .filter(|(name, _)| base.is_real_dir(name))
        .map(|(name, _)| name)
        .collect();
    names.sort();
    Ok(names)
}

/// The real directories in `base` named like run directories, sorted by name, each
/// examined ([`Found`]) and released (no descriptor is kept: this is for the report).
pub fn leftovers(base: &SafeDir) -> std::io::Result<Vec<Found>> {
    Ok(run_dir_names(base)?
        .iter()
        .map(|n| Found {
            held: None,
            ..examine(base, n)
        })
        .collect())
}

/// `1.8 GiB (1932735283 bytes)`.
fn size(bytes: u64) -> String {
    format!("{}, {bytes} bytes", benchkit::memory::format_bytes(bytes))
}

/// The line a run prints about something it found in its `--path`.
pub fn leftover_line(found: &Found, base: &Path) -> String {
    shown::text(&leftover_text(found, base))
}

/// [`leftover_line`] before its control characters are escaped (the names in it are
/// chosen by whoever made the directory, the texts by whoever wrote its marker).
fn leftover_text(found: &Found, base: &Path) -> String {
    let (path, bytes) = (found.path.display(), size(found.bytes));
    if let Some(Holder {
        kept: Some(when), ..
    }) = &found.owner
    {
        return format!(
            "b_eff_io: note: found '{path}' ({bytes}), a run directory kept with --keep \
             ({when})"
        );
    }
    match (&found.owner, &found.liveness) {
        (Some(o), Some(Liveness::Gone(why))) => format!(
            "b_eff_io: warning: found '{path}' ({bytes}), a run directory left behind by \
             b_eff_io (pid {} on {}), whose process is gone ({why}); \
             `b_eff_io --clean {}` removes it",
            o.pid,
            o.host,
            base.display()
        ),
        (Some(o), Some(Liveness::Alive)) => format!(
            "b_eff_io: note: found '{path}' ({bytes}), the run directory of a b_eff_io \
             that still runs (pid {} on {}); both runs share this file system",
            o.pid, o.host
        ),
        (Some(_), Some(Liveness::Unknown(why))) => {
            format!("b_eff_io: note: found '{path}' ({bytes}), a b_eff_io run directory: {why}")
        }
        _ => format!(
            "b_eff_io: note: found '{path}' ({bytes}), named like a b_eff_io run directory \
             but {}; b_eff_io --clean leaves it alone",
            found
                .refused
                .as_deref()
                .unwrap_or("without a valid owner marker")
        ),
    }
}

/// Prints a line on standard error for every run directory already in `base`.
pub fn report_leftovers(base: &SafeDir) {
    let Ok(found) = leftovers(base) else {
        return;
    };
    for f in &found {
        outfile::eprintln!("{}", leftover_line(f, base.path()));
    }
}

/// What `--clean` did with one run directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cleaned {
    /// Removed: its path, size and why it was safe to.
    Removed(PathBuf, u64, String),
    /// Kept: its path, size and why.
    Kept(PathBuf, u64, String),
    /// Kept because it could not be removed as examined (a removal failed, or its name
    /// was given to something else meanwhile): its path, size and why; `--clean` exits 1.
    Failed(PathBuf, u64, String),
}

impl std::fmt::Display for Cleaned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cleaned::Removed(p, b, why) => write!(
                f,
                "removed '{}' ({}): {}",
                shown::path(p),
                size(*b),
                shown::text(why)
            ),
            Cleaned::Kept(p, b, why) | Cleaned::Failed(p, b, why) => write!(
                f,
                "kept '{}' ({}): {}",
                shown::path(p),
                size(*b),
                shown::text(why)
            ),
        }
    }
}

/// `--clean DIR`: removes the run directories in `dir` whose owner marker names a
/// process of this host that is gone. Only real directories named `b_eff_io.*` are looked
/// at, never `dir` itself; one is removed only when its marker is a regular file that
/// its owner wrote ([`examine`]), through the descriptor it was examined by, and its name
/// only if that name still has the examined device and inode. Directories without a
/// valid marker, of a process that runs, made on another host or in a PID namespace that
/// cannot be seen from here are kept. `Err` when `dir` cannot be read.
pub fn clean(dir: &Path) -> Result<Vec<Cleaned>, RunDirError> {
    let unreadable = |source| RunDirError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let base = SafeDir::open(dir).map_err(unreadable)?;
    let mut outcome = Vec::new();
    if base.stat(OWNER_FILE).ok().flatten().is_some() {
        outcome.push(Cleaned::Kept(
            dir.to_path_buf(),
            0,
            format!(
                "it holds a {OWNER_FILE} itself; --clean never removes the directory it is \
                 given, only the run directories (b_eff_io.*) in it: give the folder that \
                 holds this one (the run's --path)"
            ),
        ));
    }
    // One at a time: examined, held, acted on and closed, so that no more than one
    // run directory is held open, however many there are.
    for name in run_dir_names(&base).map_err(unreadable)? {
        outcome.push(clean_one(&base, examine(&base, &name)));
    }
    Ok(outcome)
}

/// What `--clean` does with one examined run directory.
fn clean_one(base: &SafeDir, f: Found) -> Cleaned {
    match (&f.owner, f.liveness) {
        (
            Some(Holder {
                kept: Some(when), ..
            }),
            _,
        ) => Cleaned::Kept(
            f.path,
            f.bytes,
            format!("its run kept it on purpose (--keep, {when}); remove it yourself"),
        ),
        (Some(o), Some(Liveness::Gone(why))) => {
            let what = format!(
                "made by b_eff_io pid {} on {}, which is gone ({why})",
                o.pid, o.host
            );
            // The directory examined, by its descriptor: its name is never opened again.
            let Some((dir, id)) = &f.held else {
                return Cleaned::Kept(
                    f.path.clone(),
                    f.bytes,
                    format!("{what}, but it is no longer held to remove it"),
                );
            };
            // Its contents with the rights of its user (for root: that user's, no more);
            // then its name, by device and inode.
            let mut user = None;
            let removed = dir
                .stat_self()
                .and_then(|owner| {
                    user = Some(owner.st_uid);
                    as_user(owner.st_uid, owner.st_gid, || empty_held(dir))
                })
                .and_then(|()| remove_name(base, &f.name, *id));
            match removed {
                Ok(NameWas::Removed) => Cleaned::Removed(f.path, f.bytes, what),
                Ok(NameWas::Gone) => Cleaned::Removed(
                    f.path,
                    f.bytes,
                    format!(
                        "{what}; its name went during --clean (renamed away or removed by \
                         someone): the directory --clean had examined is emptied"
                    ),
                ),
                Ok(NameWas::Replaced(now)) => Cleaned::Failed(
                    f.path.clone(),
                    f.bytes,
                    format!(
                        "{what}; {REPLACED}: someone renamed it away and put \
                         {now} under its name, which is kept untouched (the run's own files \
                         were removed through the directory --clean had examined)"
                    ),
                ),
                Err(e) => Cleaned::Failed(
                    f.path.clone(),
                    f.bytes,
                    format!(
                        "{what}, but cannot remove '{}'{}: {}",
                        f.path.display(),
                        match user {
                            Some(uid) if uid != 0 && outfile::safedir::euid() == 0 => format!(
                                " with the rights of its user {uid} (root removes another \
                                 user's run directory as that user, and no more)"
                            ),
                            _ => String::new(),
                        },
                        cause(&e)
                    ),
                ),
            }
        }
        (Some(o), Some(Liveness::Alive)) => Cleaned::Kept(
            f.path,
            f.bytes,
            format!("its b_eff_io (pid {} on {}) still runs", o.pid, o.host),
        ),
        (Some(o), Some(Liveness::Unknown(why))) => Cleaned::Kept(
            f.path,
            f.bytes,
            format!(
                "from here b_eff_io cannot tell whether its process (pid {} on {}) is gone: \
                 {why}; it is kept (run --clean where that process can be seen)",
                o.pid, o.host
            ),
        ),
        _ => Cleaned::Kept(
            f.path,
            f.bytes,
            format!(
                "{}, so nothing trustworthy says b_eff_io made it",
                f.refused
                    .as_deref()
                    .unwrap_or("it holds no valid owner marker")
            ),
        ),
    }
}

/// The `--clean DIR` command: cleans, prints one line per run directory and a total on
/// standard output; returns the exit code (0, or 1 when `dir` cannot be read or a removal
/// failed).
pub fn clean_command(dir: &Path) -> i32 {
    let outcome = match clean(dir) {
        Ok(o) => o,
        Err(e) => {
            outfile::eprintln!("b_eff_io: error: --clean: {e}");
            return e.exit().code();
        }
    };
    let (mut removed, mut kept, mut freed, mut failed) = (0, 0, 0u64, false);
    let mut text = String::new();
    for c in &outcome {
        text += &format!("b_eff_io: --clean: {c}\n");
        match c {
            Cleaned::Removed(_, b, _) => {
                removed += 1;
                freed = freed.saturating_add(*b);
            }
            Cleaned::Kept(..) => kept += 1,
            Cleaned::Failed(..) => {
                kept += 1;
                failed = true;
            }
        }
    }
    text += &format!(
        "b_eff_io: --clean '{}': removed {removed} run director{} ({}), kept {kept}\n",
        shown::path(dir),
        if removed == 1 { "y" } else { "ies" },
        size(freed)
    );
    // Checked like every write to standard output: a full device is exit 1 with one
    // line, a closed pipe the quiet 141.
    if let Err(e) = outfile::stdout::write(&text) {
        return outfile::stdout::report("b_eff_io: error: ", &e);
    }
    i32::from(failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    fn scratch(name: &str) -> PathBuf {
        let base =
            std::env::temp_dir().join(format!("beffio-rundir-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        base
    }

    fn is_root() -> bool {
        outfile::safedir::euid() == 0
    }

    use mpitest::hostile::snapshot;

    fn victim(base: &Path) -> (PathBuf, Vec<(PathBuf, Vec<u8>)>) {
        let v = base.join("victim");
        std::fs::create_dir_all(v.join("sub")).unwrap();
        std::fs::write(v.join("data"), b"someone's data").unwrap();
        std::fs::write(v.join("sub/more"), vec![7u8; 10_000]).unwrap();
        let snap = snapshot(&v);
        (v, snap)
    }

    #[test]
    fn a_removal_cut_short_keeps_the_owner_marker() {
        // A mount point in the run directory cannot be unlinked (EBUSY): the removal stops
        // there, as a SIGKILL during it would, and the marker must still be in place.
        if !is_root() {
            return mpitest::unavailable("mounting a tmpfs inside a run directory needs root");
        }
        let base = scratch("cut");
        let run = RunDir::create(&base, "t", 1).unwrap();
        let dir = run.path().to_path_buf();
        for name in ["a", "b", "c"] {
            std::fs::write(dir.join(name), b"x").unwrap();
        }
        let busy = dir.join("busy");
        std::fs::create_dir(&busy).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(&busy)
            .status()
            .unwrap();
        assert!(mounted.success());
        let removed = run.remove();
        let marker_left = dir.join(OWNER_FILE).exists();
        let _ = std::process::Command::new("umount").arg(&busy).status();
        assert!(removed.is_err(), "{removed:?}");
        assert!(marker_left, "the marker went before the rest");
        run.remove().unwrap();
        assert!(!dir.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn created_fresh_and_removed() {
        let base = scratch("fresh");
        let run = RunDir::create(&base, "t", 1).unwrap();
        let dir = run.path().to_path_buf();
        assert!(dir.is_dir() && dir.is_absolute());
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
        assert!(RunDir::create(&base, "t", 1)
            .unwrap_err()
            .to_string()
            .contains("already exists"));
        std::fs::write(dir.join("f"), b"x").unwrap();
        run.remove().unwrap();
        assert!(!dir.exists());
        let err = RunDir::create(&base.join("missing"), "t", 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing") && err.contains("ENOENT"), "{err}");
        std::fs::write(base.join("file"), b"x").unwrap();
        let err = RunDir::create(&base.join("file"), "t", 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a directory"), "{err}");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_planted_link_at_the_run_directory_name_is_refused() {
        let base = scratch("planted");
        let (v, before) = victim(&base);
        symlink(&v, base.join("b_eff_io.t.1")).unwrap();
        let err = RunDir::create(&base, "t", 1).unwrap_err().to_string();
        assert!(err.contains("already exists"), "{err}");
        assert_eq!(snapshot(&v), before);
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_run_directory_swapped_for_a_link_is_not_followed() {
        let base = scratch("swapped");
        let (v, before) = victim(&base);
        let run = RunDir::create(&base, "t", 1).unwrap();
        std::fs::write(run.path().join("type0"), vec![1u8; 4096]).unwrap();
        // Another user renames the run directory away and puts a link in its place.
        let moved = base.join("moved-away");
        std::fs::rename(run.path(), &moved).unwrap();
        symlink(&v, run.path()).unwrap();
        assert!(run
            .missing()
            .unwrap()
            .contains("replaced by something else"));
        run.remove().unwrap();
        assert_eq!(snapshot(&v), before, "the link's target was touched");
        assert!(std::fs::symlink_metadata(run.path()).unwrap().is_symlink());
        // What was removed is the run's own directory, through its descriptor.
        assert!(std::fs::read_dir(&moved).unwrap().next().is_none());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn the_marker_names_this_process_and_reads_back() {
        let base = scratch("marker");
        let run = RunDir::create(&base, "t", 7).unwrap();
        let text = std::fs::read_to_string(run.path().join(OWNER_FILE)).unwrap();
        assert!(text.starts_with(OWNER_HEADER), "{text}");
        let owner = Holder::parse(&text).unwrap();
        assert_eq!(owner.pid, std::process::id());
        assert_eq!(owner.host, host_name());
        assert_eq!(owner.uid, Some(outfile::safedir::euid()));
        assert!(
            owner.process_start.is_some() && owner.boot_id.is_some(),
            "{text}"
        );
        assert_eq!(owner.liveness(), Liveness::Alive);
        std::fs::remove_dir_all(&base).unwrap();
    }

    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    /// The PID namespace of this process, as markers record it.
    fn pid_ns() -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self/ns/pid").unwrap().ino()
    }

    /// Whether this process is in the host's initial PID namespace (which sees the
    /// processes of every namespace).
    fn on_the_host() -> bool {
        pid_ns() == outfile::owner::INITIAL_PID_NS
    }

    fn marker(pid: u32, host: &str) -> String {
        format!(
            "{OWNER_HEADER}\npid {pid}\nhost {host}\nuid {}\npid_ns {}\n",
            outfile::safedir::euid(),
            pid_ns()
        )
    }

    fn fake(base: &Path, name: &str, marker: Option<String>) -> PathBuf {
        let dir = base.join(name);
        std::fs::create_dir_all(dir.join("p0.n2")).unwrap();
        std::fs::write(dir.join("p0.n2/type0"), vec![1u8; 64 << 10]).unwrap();
        if let Some(m) = marker {
            std::fs::write(dir.join(OWNER_FILE), m).unwrap();
        }
        dir
    }

    #[test]
    fn a_dead_owner_is_reported_and_cleaned_everything_else_is_kept() {
        let base = scratch("clean");
        let here = host_name();
        let dead = fake(&base, "b_eff_io.1.1", Some(marker(dead_pid(), &here)));
        let alive = fake(
            &base,
            "b_eff_io.2.2",
            Some(marker(std::process::id(), &here)),
        );
        let bare = fake(&base, "b_eff_io.3.3", None);
        let elsewhere = fake(&base, "b_eff_io.4.4", Some(marker(1, "another-host")));
        let mine = fake(&base, "results", Some(marker(dead_pid(), &here)));
        // An earlier release's marker (key=value) still counts.
        let old = fake(
            &base,
            "b_eff_io.6.6",
            Some(format!(
                "b_eff_io run directory\npid={}\nhost={here}\n",
                dead_pid()
            )),
        );
        let found = leftovers(&SafeDir::open(&base).unwrap()).unwrap();
        assert_eq!(found.len(), 5, "{found:?}");
        let line = leftover_line(&found[0], &base);
        assert!(
            line.contains(&dead.display().to_string())
                && line.contains("whose process is gone")
                && found[0].bytes >= 64 << 10
                && line.contains(&format!("{} bytes", found[0].bytes)),
            "{line}"
        );
        assert!(leftover_line(&found[2], &base).contains("without an owner marker"));
        let outcome = clean(&base).unwrap();
        let text: Vec<String> = outcome.iter().map(|c| c.to_string()).collect();
        assert!(
            matches!(&outcome[0], Cleaned::Removed(p, _, _) if *p == dead),
            "{text:?}"
        );
        assert!(
            text[1].starts_with("kept") && text[1].contains("still runs"),
            "{text:?}"
        );
        assert!(text[2].starts_with("kept") && text[2].contains("without an owner marker"));
        assert!(text[3].starts_with("kept") && text[3].contains("another-host"));
        // An earlier release's marker does not say in which PID namespace its process
        // ran: only the host's initial namespace, which sees them all, can call it gone.
        if on_the_host() {
            assert!(
                matches!(&outcome[4], Cleaned::Removed(p, _, why) if *p == old && why.contains("any PID namespace")),
                "{text:?}"
            );
            assert!(!old.exists());
        } else {
            assert!(
                text[4].starts_with("kept") && text[4].contains("earlier release"),
                "{text:?}"
            );
        }
        assert!(!dead.exists());
        assert!(alive.exists() && bare.exists() && elsewhere.exists());
        assert!(
            mine.exists(),
            "only directories named like run directories are looked at"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn kept_directories_stay() {
        let base = scratch("kept");
        let run = RunDir::create(&base, "t", 5).unwrap();
        run.mark_kept().unwrap();
        // Its process is this one; make the marker name a dead one, as after the run.
        let path = run.path().join(OWNER_FILE);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut holder = Holder::parse(&text).unwrap();
        assert!(holder.kept.is_some());
        holder.pid = dead_pid();
        holder.process_start = None;
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, holder.render(OWNER_HEADER, None)).unwrap();
        let found = leftovers(&SafeDir::open(&base).unwrap()).unwrap();
        assert!(leftover_line(&found[0], &base).contains("kept with --keep"));
        let outcome = clean(&base).unwrap();
        assert!(
            matches!(&outcome[..], [Cleaned::Kept(_, _, why)] if why.contains("--keep")),
            "{outcome:?}"
        );
        assert!(run.path().exists());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn clean_never_removes_the_directory_it_is_given() {
        // `b_eff_io --clean /scratch` where anyone wrote /scratch/b_eff_io.owner.
        let base = scratch("given");
        let (v, before) = victim(&base);
        std::fs::write(v.join(OWNER_FILE), marker(dead_pid(), &host_name())).unwrap();
        let before_with_marker = snapshot(&v);
        let outcome = clean(&v).unwrap();
        assert!(
            matches!(&outcome[..], [Cleaned::Kept(p, _, why)] if *p == v && why.contains("never removes the directory it is given")),
            "{outcome:?}"
        );
        assert_eq!(snapshot(&v), before_with_marker);
        assert!(before.len() + 1 == before_with_marker.len());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn links_and_hostile_markers_are_never_followed_or_trusted() {
        let base = scratch("hostile");
        let here = host_name();
        let (v, _) = victim(&base);
        std::fs::write(v.join(OWNER_FILE), marker(dead_pid(), &here)).unwrap();
        let victim_snapshot = snapshot(&v);
        // A link named like a run directory, to a directory with a valid marker.
        symlink(&v, base.join("b_eff_io.1.link")).unwrap();
        // A marker that is a link to the victim's marker, a FIFO, a link to /dev/zero, a
        // sparse 2 GiB file.
        let linked = fake(&base, "b_eff_io.2.linked", None);
        symlink(v.join(OWNER_FILE), linked.join(OWNER_FILE)).unwrap();
        let fifo = fake(&base, "b_eff_io.3.fifo", None);
        assert!(std::process::Command::new("mkfifo")
            .arg(fifo.join(OWNER_FILE))
            .status()
            .unwrap()
            .success());
        let zero = fake(&base, "b_eff_io.4.zero", None);
        symlink("/dev/zero", zero.join(OWNER_FILE)).unwrap();
        let sparse = fake(&base, "b_eff_io.5.sparse", None);
        std::fs::File::create(sparse.join(OWNER_FILE))
            .unwrap()
            .set_len(2 << 30)
            .unwrap();
        let started = std::time::Instant::now();
        let outcome = clean(&base).unwrap();
        let text: Vec<String> = outcome.iter().map(ToString::to_string).collect();
        assert_eq!(
            outcome.len(),
            4,
            "the link is not a run directory: {text:?}"
        );
        assert!(
            outcome.iter().all(|c| matches!(c, Cleaned::Kept(..))),
            "{text:?}"
        );
        assert!(text[0].contains("symbolic link"), "{text:?}");
        assert!(text[1].contains("a FIFO"), "{text:?}");
        assert!(text[2].contains("symbolic link"), "{text:?}");
        assert!(text[3].contains("more than a marker's 4096"), "{text:?}");
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
        assert_eq!(snapshot(&v), victim_snapshot);
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_marker_of_another_user_is_not_trusted() {
        if !is_root() {
            return mpitest::unavailable("giving a marker to another user needs root");
        }
        let base = scratch("forged");
        let here = host_name();
        // Written by user 4242, claiming to be root's run.
        let forged = fake(&base, "b_eff_io.1.1", Some(marker(dead_pid(), &here)));
        std::os::unix::fs::chown(forged.join(OWNER_FILE), Some(4242), None).unwrap();
        std::os::unix::fs::chown(&forged, Some(4242), None).unwrap();
        // Root cleans a run of user 4242 whose marker names user 4242 itself.
        let theirs = fake(
            &base,
            "b_eff_io.2.2",
            Some(format!(
                "{OWNER_HEADER}\npid {}\nhost {here}\nuid 4242\npid_ns {}\n",
                dead_pid(),
                pid_ns()
            )),
        );
        // Everything in it is 4242's, as its run wrote it.
        for p in [&theirs, &theirs.join("p0.n2"), &theirs.join("p0.n2/type0")] {
            std::os::unix::fs::chown(p, Some(4242), None).unwrap();
        }
        std::os::unix::fs::chown(theirs.join(OWNER_FILE), Some(4242), None).unwrap();
        let outcome = clean(&base).unwrap();
        let text: Vec<String> = outcome.iter().map(ToString::to_string).collect();
        assert!(
            text[0].starts_with("kept") && text[0].contains("user 4242"),
            "{text:?}"
        );
        assert!(text[1].starts_with("removed"), "{text:?}");
        assert!(forged.exists() && !theirs.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_run_directory_swapped_after_its_examination_is_not_removed() {
        let base = scratch("swap");
        let (v, before) = victim(&base);
        let run = fake(
            &base,
            "b_eff_io.1.1",
            Some(marker(dead_pid(), &host_name())),
        );
        std::fs::write(run.join("p0.n2/type1"), vec![2u8; 1 << 20]).unwrap();
        let sbase = SafeDir::open(&base).unwrap();
        let found = examine(&sbase, OsStr::new("b_eff_io.1.1"));
        assert!(
            matches!(found.liveness, Some(Liveness::Gone(_))),
            "{found:?}"
        );
        // Between the examination and the removal, someone renames the run directory
        // away and renames a third user's folder to its name.
        let moved = base.join("moved-away");
        std::fs::rename(&run, &moved).unwrap();
        std::fs::rename(&v, &run).unwrap();
        let outcome = clean_one(&sbase, found);
        let text = outcome.to_string();
        assert!(
            matches!(&outcome, Cleaned::Failed(p, _, why) if *p == run && why.contains(REPLACED)),
            "{text}"
        );
        assert!(text.contains("a directory of user"), "{text}");
        // The victim's files are all there, byte for byte; the run's own are removed
        // through the descriptor of the directory that was examined.
        std::fs::rename(&run, &v).unwrap();
        assert_eq!(snapshot(&v), before);
        assert!(std::fs::read_dir(&moved).unwrap().next().is_none());
        // `--clean` says so, and exits 1: something was not as examined.
        std::fs::remove_dir(&moved).unwrap();
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_name_that_only_went_away_is_said() {
        let base = scratch("went");
        let run = fake(
            &base,
            "b_eff_io.1.1",
            Some(marker(dead_pid(), &host_name())),
        );
        let sbase = SafeDir::open(&base).unwrap();
        let found = examine(&sbase, OsStr::new("b_eff_io.1.1"));
        let moved = base.join("moved-away");
        std::fs::rename(&run, &moved).unwrap();
        let outcome = clean_one(&sbase, found);
        assert!(
            matches!(&outcome, Cleaned::Removed(_, _, why) if why.contains("its name went during --clean")),
            "{outcome:?}"
        );
        assert!(std::fs::read_dir(&moved).unwrap().next().is_none());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_third_users_folder_moved_into_a_run_directory_is_not_removed_by_root() {
        if !is_root() {
            return mpitest::unavailable("acting as another user needs root");
        }
        // User 4242's run directory, left by a dead process; user 4243's folder, with a
        // subfolder 4242 cannot write, moved into it (4242 could write the folder itself).
        let base = scratch("moved-in");
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let run = fake(
            &base,
            "b_eff_io.1.1",
            Some(format!(
                "{OWNER_HEADER}\npid {}\nhost {}\nuid 4242\npid_ns {}\n",
                dead_pid(),
                host_name(),
                pid_ns()
            )),
        );
        let (v, before) = victim(&base);
        for p in [
            &run,
            &run.join("p0.n2"),
            &run.join("p0.n2/type0"),
            &run.join(OWNER_FILE),
        ] {
            std::os::unix::fs::chown(p, Some(4242), Some(4242)).unwrap();
        }
        for p in [&v, &v.join("sub"), &v.join("data"), &v.join("sub/more")] {
            std::os::unix::fs::chown(p, Some(4243), Some(4243)).unwrap();
        }
        std::fs::set_permissions(&v, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::rename(&v, run.join("theirs")).unwrap();
        let outcome = clean(&base).unwrap();
        let text: Vec<String> = outcome.iter().map(ToString::to_string).collect();
        assert!(
            text[0].starts_with("kept")
                && text[0].contains("cannot remove")
                && text[0].contains("with the rights of its user 4242")
                && text[0].contains("EACCES"),
            "{text:?}"
        );
        std::fs::rename(run.join("theirs"), &v).unwrap();
        // What 4242 could remove is gone (the folder's own file `data`); what it could
        // not (the subfolder's) is there, byte for byte. Root removed nothing more.
        let after = snapshot(&v);
        assert!(
            after.iter().any(|(p, _)| p.ends_with("sub/more")),
            "{after:?}"
        );
        assert_eq!(
            after,
            before
                .into_iter()
                .filter(|(p, _)| !p.ends_with("data"))
                .collect::<Vec<_>>()
        );
        // Root is root again on this thread.
        assert_eq!(rustix::process::geteuid().as_raw(), 0);
        assert!(std::fs::write(base.join("root-again"), b"x").is_ok());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_live_run_of_another_pid_namespace_is_kept() {
        if !is_root() {
            return mpitest::unavailable("a new PID namespace (unshare --pid) needs root");
        }
        // A process that is pid 1 of its own PID namespace, as a containerised run is:
        // looked up by that number here, pid 1 is another process, and a marker of it
        // used to be judged gone and its live run's files removed.
        let mut ns = std::process::Command::new("unshare")
            .args(["--pid", "--fork", "--kill-child", "sleep", "60"])
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let inner = loop {
            let children = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", ns.id()))
                .unwrap_or_default();
            if let Some(pid) = children.split_whitespace().next() {
                break pid.parse::<u32>().unwrap();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "unshare made no child"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        use std::os::unix::fs::MetadataExt;
        let inner_ns = std::fs::metadata(format!("/proc/{inner}/ns/pid"))
            .unwrap()
            .ino();
        let stat = std::fs::read_to_string(format!("/proc/{inner}/stat")).unwrap();
        let start: u64 = stat[stat.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .nth(19)
            .unwrap()
            .parse()
            .unwrap();
        assert_ne!(inner_ns, pid_ns());
        let base = scratch("pidns");
        let holder = Holder {
            pid: 1,
            pid_ns: Some(inner_ns),
            process_start: Some(start),
            ..Holder::this_process()
        };
        let run = fake(
            &base,
            "b_eff_io.1.1",
            Some(holder.render(OWNER_HEADER, None)),
        );
        let outcome = clean(&base).unwrap();
        let text = outcome[0].to_string();
        let _ = ns.kill();
        let _ = ns.wait();
        assert!(run.exists(), "{text}");
        if on_the_host() {
            // The host sees every namespace: the process runs.
            assert!(
                text.starts_with("kept") && text.contains("still runs"),
                "{text}"
            );
            // Once it is gone, it is gone from every namespace.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while std::path::Path::new(&format!("/proc/{inner}")).exists() {
                assert!(std::time::Instant::now() < deadline, "{inner} stays");
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            let outcome = clean(&base).unwrap();
            assert!(
                matches!(&outcome[0], Cleaned::Removed(_, _, why) if why.contains("any PID namespace")),
                "{outcome:?}"
            );
        } else {
            assert!(
                text.starts_with("kept")
                    && text.contains(&format!("pid:[{inner_ns}]"))
                    && text.contains("cannot tell"),
                "{text}"
            );
        }
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn names_and_marker_texts_cannot_forge_lines_or_reach_the_terminal() {
        let base = scratch("escapes");
        let forged = "b_eff_io.1\nb_eff_io: --clean: removed 'thesis' (1.2 TiB)\x1b[2J\x1b]0;x\x07";
        let here = host_name();
        let dead = fake(&base, forged, Some(marker(dead_pid(), &here)));
        // A marker whose host field carries an escape sequence (it is another host's,
        // so its name goes into the reason).
        fake(
            &base,
            "b_eff_io.2",
            Some(marker(dead_pid(), "evil\x1b[31mhost\u{9b}2J")),
        );
        let sbase = SafeDir::open(&base).unwrap();
        let found = leftovers(&sbase).unwrap();
        let lines: Vec<String> = found.iter().map(|f| leftover_line(f, &base)).collect();
        let outcome = clean(&base).unwrap();
        let cleaned: Vec<String> = outcome.iter().map(ToString::to_string).collect();
        for line in lines.iter().chain(&cleaned) {
            assert!(!line.chars().any(char::is_control), "{line:?}");
        }
        assert!(
            cleaned[0].starts_with("removed '")
                && cleaned[0].contains("b_eff_io.1\\nb_eff_io: --clean: removed 'thesis'")
                && cleaned[0].contains("\\x1b[2J\\x1b]0;x\\x07"),
            "{cleaned:?}"
        );
        assert!(
            cleaned[1].contains("evil\\x1b[31mhost\\u{009b}2J"),
            "{cleaned:?}"
        );
        assert!(lines[0].contains("b_eff_io.1\\nb_eff_io"), "{lines:?}");
        assert!(!dead.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn the_working_directory_comes_back() {
        let base = scratch("workdir");
        let run = RunDir::create(&base, "t", 9).unwrap();
        let before = std::env::current_dir().unwrap();
        {
            let _inside = Workdir::enter(&run).unwrap();
            assert_eq!(
                std::env::current_dir().unwrap(),
                run.path().canonicalize().unwrap()
            );
        }
        assert_eq!(std::env::current_dir().unwrap(), before);
        let other = RunDir::open(run.path()).unwrap();
        assert_eq!(other.identity, run.identity);
        assert!(RunDir::open(&base.join("missing"))
            .unwrap_err()
            .to_string()
            .contains("ENOENT"));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
