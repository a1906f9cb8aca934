//! Reserving an output file's name, writing its versions atomically, and releasing it.
//! Every step goes through [`SafeDir`] (see there for the threat it defends against).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, BufWriter, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use crate::owner::{Holder, Liveness, LEASE_RENEW_S};
use crate::safedir::{identity, Identity, SafeDir};
use crate::{Error, Found};

/// The suffix of a reservation file: `.NAME.xylem-reservation` beside `NAME`.
pub const RESERVATION_SUFFIX: &str = ".xylem-reservation";

/// The mode of output files before the umask, as for any file a program creates.
const FILE_MODE: u32 = 0o666;

/// The reserved name of one output file of this run.
///
/// Made by [`Reservation::reserve`]; every [`Reservation::write`] puts one complete
/// version in place; [`Reservation::release`] (or dropping it) removes the reservation
/// file, whatever became of the run. The versions written stay. While it is held, a
/// thread renews the reservation's lease (its modification time) every
/// [`LEASE_RENEW_S`] seconds, so that a run on another host can tell a reservation left
/// by a killed run from a live one.
#[derive(Debug)]
pub struct Reservation {
    target: PathBuf,
    marker: PathBuf,
    dir: SafeDir,
    name: OsString,
    marker_name: OsString,
    /// The reservation file this run made (open), to tell it from anything put in its
    /// place.
    marker_id: Identity,
    /// This run's temporary file name (`.NAME.tmp.<random>`), as the reservation says.
    temp_name: OsString,
    /// The version this run last put in place, kept open so that its inode number cannot
    /// be reused by a file planted in its place, with its size and modification time when
    /// placed: a version changed since (by anyone) is not copied from.
    placed: Option<(Identity, Stamp, File)>,
    /// The bytes of that version when [`Reservation::write`] made it, to find how much of
    /// the next one it shares.
    placed_bytes: Option<Vec<u8>>,
    /// How the last version was made.
    last_write: Written,
    replaced: Option<Holder>,
    /// Where [`Reservation::reserve_keeping_earlier`] put the file that had the name.
    kept_as: Option<PathBuf>,
    /// Whether an earlier file at the name is still to be kept aside
    /// ([`Reservation::keep_earlier`], at the latest before the first version).
    earlier_pending: bool,
    versions: u64,
    held: bool,
    lease: Option<Lease>,
}

impl Reservation {
    /// Reserves `path` for this process: the target must not exist, and no live run may
    /// hold its reservation (`.NAME.xylem-reservation` in the same directory). A
    /// reservation left by a process that is gone from this host, or whose lease expired,
    /// is replaced (see [`Reservation::replaced_notice`]).
    ///
    /// Errors: [`Error::Exists`], [`Error::Reserved`] (a live process, or one on another
    /// host whose lease runs), [`Error::Unreadable`] (a reservation file this crate cannot
    /// read: a FIFO, a link, too large, garbage), and [`Error::Io`] when the directory is
    /// missing, not writable or full.
    pub fn reserve(path: impl AsRef<Path>) -> Result<Reservation, Error> {
        Reservation::claim_name(path.as_ref(), false)
    }

    /// As [`Reservation::reserve`], but a regular file (or a link, not followed) already
    /// at `path` is kept under the first free name `NAME.1`, `NAME.2`, … instead of
    /// refusing the name: what a job script that writes the same files on every run
    /// expects. It is renamed (without replacing anything) only when the program says its
    /// run goes ahead ([`Reservation::keep_earlier`]) or, at the latest, just before the
    /// first version is put in place: a run refused after its reservations (a bad path,
    /// another output file taken) leaves the earlier file where and as it was.
    /// [`Reservation::kept_as`] says where the earlier file went. A directory or any
    /// other kind of file at `path` is still [`Error::Exists`].
    pub fn reserve_keeping_earlier(path: impl AsRef<Path>) -> Result<Reservation, Error> {
        Reservation::claim_name(path.as_ref(), true)
    }

    fn claim_name(path: &Path, keep_earlier: bool) -> Result<Reservation, Error> {
        let target = path.to_path_buf();
        if target == Path::new("-") {
            return Err(Error::Dash);
        }
        let Some(name) = target.file_name().map(OsStr::to_os_string) else {
            return Err(Error::io(
                &target,
                "create it",
                io::Error::new(ErrorKind::InvalidInput, "the path names no file"),
            ));
        };
        let dir_path = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let dir = SafeDir::open(&dir_path).map_err(|e| Error::io(&target, "create it", e))?;
        if keep_earlier {
            check_movable(&dir, &name, &target)?;
        } else {
            check_absent(&dir, &name, &target)?;
        }
        let temp_name = dotted(&name, &format!(".tmp.{}", crate::safedir::random_token()));
        let me = Holder {
            lease_s: Some(LEASE_RENEW_S),
            temp: Some(temp_name.to_string_lossy().into_owned()),
            ..Holder::this_process()
        };
        let text = me.to_text(&name.to_string_lossy());
        let marker_name = dotted(&name, RESERVATION_SUFFIX);
        let marker = dir_path.join(&marker_name);
        // The reservation appears complete or not at all: written to a new file of its
        // own, then linked to its name (which fails if the name is taken).
        let prefix = dotted(&name, &format!("{RESERVATION_SUFFIX}.tmp."));
        let (candidate, file) = dir
            .create_temp(&prefix, FILE_MODE)
            .map_err(|e| Error::io(&target, "create it", e))?;
        let file = match fill_synced(file, |out| out.write_all(text.as_bytes())) {
            Ok(file) => file,
            Err(e) => {
                let _ = dir.unlink(&candidate);
                return Err(Error::io(&target, "create it", e));
            }
        };
        let claimed = claim(&dir, &target, &marker, &marker_name, &candidate, &me);
        let _ = dir.unlink(&candidate);
        let marker_id = rustix::fs::fstat(&file)
            .map(|s| identity(&s))
            .map_err(|e| Error::io(&target, "create it", e.into()));
        let mut reservation = Reservation {
            replaced: claimed?,
            marker_id: (0, 0),
            lease: None,
            target,
            marker,
            dir,
            name,
            marker_name,
            temp_name,
            placed: None,
            placed_bytes: None,
            last_write: Written::default(),
            versions: 0,
            held: true,
            kept_as: None,
            earlier_pending: keep_earlier,
        };
        // From here on, dropping releases.
        reservation.marker_id = marker_id?;
        reservation.lease = Some(Lease::start(file));
        // A file may have appeared under the name meanwhile (one to keep may stay: it is
        // moved aside when the run goes ahead).
        if keep_earlier {
            check_movable(&reservation.dir, &reservation.name, &reservation.target)?;
        } else {
            check_absent(&reservation.dir, &reservation.name, &reservation.target)?;
        }
        Ok(reservation)
    }

    /// Moves the file that has the name now aside, as
    /// [`Reservation::reserve_keeping_earlier`] says (once: later calls do nothing), and
    /// returns where it is kept; `None` when there was nothing to keep or the reservation
    /// is not a keeping one. The first version does it by itself when this was not called.
    pub fn keep_earlier(&mut self) -> Result<Option<&Path>, Error> {
        if self.earlier_pending && self.held {
            self.kept_as = move_aside(&self.dir, &self.name, &self.target)?;
            self.earlier_pending = false;
        }
        Ok(self.kept_as.as_deref())
    }

    /// Where the file that had the name before this run is now kept
    /// ([`Reservation::keep_earlier`]), if there was one and it was moved.
    pub fn kept_as(&self) -> Option<&Path> {
        self.kept_as.as_deref()
    }

    /// The target.
    pub fn path(&self) -> &Path {
        &self.target
    }

    /// The reservation file beside it.
    pub fn marker_path(&self) -> &Path {
        &self.marker
    }

    /// The holder of the stale reservation this one replaced, if there was one.
    pub fn replaced(&self) -> Option<&Holder> {
        self.replaced.as_ref()
    }

    /// The line to print when a stale reservation was replaced: `a reservation of PATH by
    /// process PID on HOST, which is gone, is replaced`.
    pub fn replaced_notice(&self) -> Option<String> {
        self.replaced.as_ref().map(|h| {
            format!(
                "a reservation of {} by process {} on {}, which is gone, is replaced",
                self.target.display(),
                h.pid,
                h.host
            )
        })
    }

    /// How many versions this run has put in place.
    pub fn versions(&self) -> u64 {
        self.versions
    }

    /// Puts `bytes` in place as the next complete version. The leading bytes it shares
    /// with the previous version that this method wrote (when they are at least
    /// [`SHARED_MIN`]) are not written again but copied from that version by the kernel
    /// (`copy_file_range`: a reflink or a server-side copy where the file system has one),
    /// so that a document that grows at its end costs the writing of what is new; the
    /// version is still a complete file put in place at once.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        // The version to copy the shared head from, unchanged since placed, and that head.
        let source = match (&self.placed, &self.placed_bytes) {
            (Some((_, stamp, file)), Some(before))
                if stamp_of(file).is_ok_and(|(_, now)| now == *stamp) =>
            {
                Some((file, common_prefix(before, bytes)))
                    .filter(|(_, shared)| *shared >= SHARED_MIN)
            }
            _ => None,
        };
        let shared = source.map_or(0, |(_, shared)| shared);
        // Its own handle: placing the new version needs `self` whole.
        let previous = source
            .map(|(file, _)| file.try_clone())
            .transpose()
            .map_err(|e| Error::io(&self.target, "write it", e))?;
        self.place(|file| {
            if let Some(previous) = previous {
                let mut from = &previous;
                from.seek(SeekFrom::Start(0))?;
                let copied = io::copy(&mut from.take(shared as u64), &mut &*file)?;
                if copied != shared as u64 {
                    return Err(io::Error::new(
                        ErrorKind::UnexpectedEof,
                        format!("its last version holds {copied} of the {shared} bytes it shared"),
                    ));
                }
            }
            let mut out = BufWriter::new(file);
            out.write_all(&bytes[shared..])?;
            out.flush()
        })?;
        self.placed_bytes = Some(bytes.to_vec());
        self.last_write = Written {
            copied: shared as u64,
            written: (bytes.len() - shared) as u64,
        };
        Ok(())
    }

    /// How the last version was made: the bytes copied from the one before and those
    /// written.
    pub fn last_write(&self) -> Written {
        self.last_write
    }

    /// Puts the next complete version in place, as `fill` writes it: to a new temporary
    /// file in the same directory (`.NAME.tmp.<random>`, created exclusively), synced,
    /// then exchanged with the previous version. When `fill`, the sync or the placing
    /// fails, the temporary file is removed and the previous version (if any) stays as it
    /// was. Nothing this run did not write is ever replaced: the first version is linked
    /// into place, so that a file someone else created meanwhile stays
    /// ([`Error::Exists`]), and a later one replaces only the version this run wrote last.
    pub fn write_with<F>(&mut self, fill: F) -> Result<(), Error>
    where
        F: FnOnce(&mut dyn Write) -> io::Result<()>,
    {
        self.place(|file| {
            let mut out = BufWriter::new(file);
            fill(&mut out)?;
            out.flush()
        })?;
        self.placed_bytes = None;
        self.last_write = Written::default();
        Ok(())
    }

    fn place<F>(&mut self, fill: F) -> Result<(), Error>
    where
        F: FnOnce(&File) -> io::Result<()>,
    {
        if !self.held {
            return Err(Error::io(
                &self.target,
                "write it",
                io::Error::other("its reservation was released"),
            ));
        }
        // An earlier file still at the name is kept aside before the first version.
        self.keep_earlier()?;
        let (temp, file) = match self.dir.create_new(&self.temp_name, FILE_MODE) {
            Ok(file) => (self.temp_name.clone(), file),
            // Taken (planted): another random name.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => self
                .dir
                .create_temp(&dotted(&self.name, ".tmp."), FILE_MODE)
                .map_err(|e| Error::io(&self.target, "write it", e))?,
            Err(e) => return Err(Error::io(&self.target, "write it", e)),
        };
        if let Err(e) = fill(&file).and_then(|()| file.sync_all()) {
            let _ = self.dir.unlink(&temp);
            return Err(Error::io(&self.target, "write it", e));
        }
        let written = stamp_of(&file);
        let placed = match &self.placed {
            None => self
                .dir
                .link_new(&temp, &self.name)
                .map(|()| self.dir.unlink(&temp).unwrap_or(())),
            Some((previous, _, _)) => self.dir.replace_version(&temp, &self.name, *previous),
        };
        if let Err(e) = placed {
            let _ = self.dir.unlink(&temp);
            return Err(match (e.kind(), &self.placed) {
                (ErrorKind::AlreadyExists, None) => Error::Exists {
                    path: self.target.clone(),
                    found: found(&self.dir, &self.name),
                },
                _ => Error::io(&self.target, "write it", e),
            });
        }
        self.dir.sync();
        self.placed = written.ok().map(|(id, stamp)| (id, stamp, file));
        self.versions += 1;
        Ok(())
    }

    /// Removes the reservation file (if it is still this run's). The versions written stay.
    pub fn release(mut self) -> Result<(), Error> {
        self.unreserve()
    }

    fn unreserve(&mut self) -> Result<(), Error> {
        if !self.held {
            return Ok(());
        }
        self.held = false;
        if let Some(lease) = self.lease.take() {
            lease.stop();
        }
        // Our temporary file, if a write was cut short; only ours, by its owner.
        if let Ok(Some(stat)) = self.dir.stat(&self.temp_name) {
            if stat.st_uid == crate::safedir::euid()
                && Some(identity(&stat)) != self.placed.as_ref().map(|(id, _, _)| *id)
            {
                let _ = self.dir.unlink(&self.temp_name);
            }
        }
        match self.dir.stat(&self.marker_name) {
            Ok(Some(stat)) if identity(&stat) == self.marker_id => self
                .dir
                .unlink(&self.marker_name)
                .map_err(|e| Error::io(&self.target, "release its reservation", e)),
            // Gone, or another run's: not ours to remove.
            _ => Ok(()),
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let _ = self.unreserve();
    }
}

/// The thread that renews a reservation's lease: the modification time of the
/// reservation file this run made, by its descriptor, every [`LEASE_RENEW_S`] seconds.
#[derive(Debug)]
struct Lease {
    stop: mpsc::Sender<()>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Lease {
    fn start(file: File) -> Lease {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("xylem-lease".into())
            .spawn(move || {
                let now = rustix::fs::Timespec {
                    tv_sec: 0,
                    tv_nsec: rustix::fs::UTIME_NOW,
                };
                let times = rustix::fs::Timestamps {
                    last_access: now,
                    last_modification: now,
                };
                while let Err(mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(Duration::from_secs(LEASE_RENEW_S))
                {
                    let _ = rustix::fs::futimens(&file, &times);
                }
            })
            .ok();
        Lease { stop, thread }
    }

    fn stop(mut self) {
        let _ = self.stop.send(());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Writes `bytes` to `path` atomically — a new temporary file beside it (random name,
/// created exclusively), synced, renamed over it — replacing a file that is there (a link
/// at `path` is replaced, not followed). For generated files that are made again in place
/// (man pages, completions, host files); results use [`Reservation`], which never
/// overwrites. On failure the previous file stays and the temporary file is removed.
pub fn replace(path: impl AsRef<Path>, bytes: &[u8]) -> Result<(), Error> {
    let target = path.as_ref();
    let Some(name) = target.file_name() else {
        return Err(Error::io(
            target,
            "write it",
            io::Error::new(ErrorKind::InvalidInput, "the path names no file"),
        ));
    };
    let dir_path = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let dir = SafeDir::open(&dir_path).map_err(|e| Error::io(target, "write it", e))?;
    replace_at(&dir, name, target, bytes)
}

/// [`replace`] of the file `name` in the directory `dir`, already open (as
/// [`SafeDir::create_all`] made it).
pub fn replace_in(dir: &SafeDir, name: impl AsRef<OsStr>, bytes: &[u8]) -> Result<(), Error> {
    let name = name.as_ref();
    replace_at(dir, name, &dir.shown(name), bytes)
}

fn replace_at(dir: &SafeDir, name: &OsStr, target: &Path, bytes: &[u8]) -> Result<(), Error> {
    let (temp, file) = dir
        .create_temp(&dotted(name, ".tmp."), FILE_MODE)
        .map_err(|e| Error::io(target, "write it", e))?;
    let done =
        fill_synced(file, |out| out.write_all(bytes)).and_then(|_| dir.rename_over(&temp, name));
    if let Err(e) = done {
        let _ = dir.unlink(&temp);
        return Err(Error::io(target, "write it", e));
    }
    dir.sync();
    Ok(())
}

/// Takes the reservation file `marker_name` with the prepared `candidate`, replacing a
/// stale one; returns the holder of the stale reservation it replaced.
fn claim(
    dir: &SafeDir,
    target: &Path,
    marker: &Path,
    marker_name: &OsStr,
    candidate: &OsStr,
    me: &Holder,
) -> Result<Option<Holder>, Error> {
    let mut replaced = None;
    let unreadable = |reason: String| Error::Unreadable {
        path: target.to_path_buf(),
        marker: marker.to_path_buf(),
        reason,
    };
    for _ in 0..5 {
        match dir.link_new(candidate, marker_name) {
            Ok(()) => return Ok(replaced),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(target, "create it", e)),
        }
        let (text, stat) = match dir.read_marker(marker_name) {
            Ok(Some(found)) => found,
            // Released meanwhile: try again.
            Ok(None) => continue,
            Err(e) => return Err(unreadable(crate::cause(&e))),
        };
        let holder = Holder::parse(&text).map_err(unreadable)?;
        if holder.pid == me.pid
            && holder.host == me.host
            && holder.process_start == me.process_start
        {
            return Err(Error::Twice {
                path: target.to_path_buf(),
            });
        }
        let liveness = if holder.owned_by_marker_file(stat.st_uid) {
            holder.liveness_with_lease(stat.st_mtime)
        } else {
            Liveness::Unknown(format!(
                "the file belongs to user {}, not to the user {} it names",
                stat.st_uid,
                holder.uid.unwrap_or_default()
            ))
        };
        if !matches!(liveness, Liveness::Gone(_)) {
            return Err(Error::Reserved {
                path: target.to_path_buf(),
                marker: marker.to_path_buf(),
                holder: Box::new(holder),
                liveness,
            });
        }
        // Gone: move it aside, and check that what was moved is what was judged (another
        // run may have replaced it first).
        let grave = dotted(
            target.file_name().unwrap_or_default(),
            &format!(
                "{RESERVATION_SUFFIX}.stale.{}",
                crate::safedir::random_token()
            ),
        );
        match dir.rename_noreplace(marker_name, &grave) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(target, "replace its stale reservation", e)),
        }
        let moved = dir.read_marker(&grave).ok().flatten();
        if moved.as_ref().map(|(_, s)| identity(s)) != Some(identity(&stat)) {
            // Another run's fresh reservation: put it back and look again.
            let _ = dir.link_new(&grave, marker_name);
            let _ = dir.unlink(&grave);
            continue;
        }
        let _ = dir.unlink(&grave);
        remove_stale_temp(dir, target, &holder, stat.st_uid);
        replaced = Some(holder);
    }
    Err(Error::io(
        target,
        "reserve it",
        io::Error::other(
            "its reservation keeps changing: other runs are taking it at the same time",
        ),
    ))
}

/// The killed run's unfinished version, if it left one: only a regular file of the
/// name the reservation gave (`.NAME.tmp.<token>`), owned by the reservation's user.
fn remove_stale_temp(dir: &SafeDir, target: &Path, holder: &Holder, owner: u32) {
    let Some(temp) = &holder.temp else { return };
    let name = target.file_name().unwrap_or_default().to_os_string();
    let prefix = dotted(&name, ".tmp.");
    let valid = temp
        .strip_prefix(&*prefix.to_string_lossy())
        .is_some_and(|token| !token.is_empty() && token.bytes().all(|b| b.is_ascii_hexdigit()));
    if !valid {
        return;
    }
    if let Ok(Some(stat)) = dir.stat(temp) {
        if crate::safedir::file_type(&stat) == rustix::fs::FileType::RegularFile
            && stat.st_uid == owner
        {
            let _ = dir.unlink(temp);
        }
    }
}

/// `.NAME` + `suffix`.
fn dotted(name: &OsStr, suffix: &str) -> OsString {
    let mut file = OsString::from(".");
    file.push(name);
    file.push(suffix);
    file
}

/// `Err(Error::Exists)` if anything (a file, a directory, a dangling link) has the name.
fn check_absent(dir: &SafeDir, name: &OsStr, target: &Path) -> Result<(), Error> {
    match dir.stat(name) {
        Ok(Some(stat)) => Err(Error::Exists {
            path: target.to_path_buf(),
            found: found_of(&stat),
        }),
        Ok(None) => Ok(()),
        Err(e) => Err(Error::io(target, "create it", e)),
    }
}

/// Whether something has the name `name` in `dir`; an error when it may not be moved
/// aside (anything but a regular file or a link).
fn check_movable(dir: &SafeDir, name: &OsStr, target: &Path) -> Result<bool, Error> {
    match dir.stat(name) {
        Ok(Some(stat)) => match crate::safedir::file_type(&stat) {
            rustix::fs::FileType::RegularFile | rustix::fs::FileType::Symlink => Ok(true),
            _ => Err(Error::Exists {
                path: target.to_path_buf(),
                found: found_of(&stat),
            }),
        },
        Ok(None) => Ok(false),
        Err(e) => Err(Error::io(target, "create it", e)),
    }
}

/// The most numbered names tried for the file moved aside.
const MAX_KEPT: u32 = 100_000;

/// Renames what has the name `name` in `dir` (a regular file or a link) to the first free
/// `NAME.N`, never replacing anything; `None` when there was nothing.
fn move_aside(dir: &SafeDir, name: &OsStr, target: &Path) -> Result<Option<PathBuf>, Error> {
    if !check_movable(dir, name, target)? {
        return Ok(None);
    }
    for n in 1..=MAX_KEPT {
        let mut kept = name.to_os_string();
        kept.push(format!(".{n}"));
        match dir.rename_noreplace(name, &kept) {
            Ok(()) => return Ok(Some(target.with_file_name(kept))),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            // Gone meanwhile: nothing to keep.
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(target, "keep the earlier file", e)),
        }
    }
    Err(Error::io(
        target,
        "keep the earlier file",
        io::Error::new(
            ErrorKind::AlreadyExists,
            format!("the names .1 to .{MAX_KEPT} are all taken"),
        ),
    ))
}

/// What has the name `name` in `dir` (a regular file when it cannot be told).
fn found(dir: &SafeDir, name: &OsStr) -> Found {
    match dir.stat(name) {
        Ok(Some(stat)) => found_of(&stat),
        _ => Found::File,
    }
}

fn found_of(stat: &rustix::fs::Stat) -> Found {
    match crate::safedir::file_type(stat) {
        rustix::fs::FileType::RegularFile => Found::File,
        rustix::fs::FileType::Directory => Found::Directory,
        other => Found::Other(crate::input::kind_text(other)),
    }
}

/// Lets `fill` write the new file through a buffer, and syncs it; returns the file.
fn fill_synced<F>(file: File, fill: F) -> io::Result<File>
where
    F: FnOnce(&mut dyn Write) -> io::Result<()>,
{
    let mut out = BufWriter::new(file);
    fill(&mut out)?;
    let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()?;
    Ok(file)
}

/// The fewest leading bytes a version must share with the one before for
/// [`Reservation::write`] to copy them rather than write them: below this, the copy's
/// extra system calls cost more than they save.
pub const SHARED_MIN: usize = 64 * 1024;

/// How one version was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Written {
    /// Leading bytes copied from the version before.
    pub copied: u64,
    /// Bytes written by this process.
    pub written: u64,
}

/// A file's size and modification time, to tell whether it changed.
type Stamp = (i64, i64, i64);

/// `file`'s identity and [`Stamp`], from one `fstat`.
fn stamp_of(file: &File) -> rustix::io::Result<(Identity, Stamp)> {
    let s = rustix::fs::fstat(file)?;
    Ok((
        identity(&s),
        (s.st_size, s.st_mtime, s.st_mtime_nsec as i64),
    ))
}

/// The length of the longest common prefix of `a` and `b`.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    i + a[i..n]
        .iter()
        .zip(&b[i..n])
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn enospc() -> io::Error {
        io::Error::from_raw_os_error(28)
    }

    #[test]
    fn reserve_write_release() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        let mut r = Reservation::reserve(&path).unwrap();
        assert!(r.replaced().is_none() && r.replaced_notice().is_none());
        // Reserved, but nothing written yet: only the reservation, which says who.
        assert_eq!(names(dir.path()), [".run.json.xylem-reservation"]);
        let text = fs::read_to_string(r.marker_path()).unwrap();
        let holder = Holder::parse(&text).unwrap();
        assert_eq!(holder.pid, std::process::id());
        assert!(text.contains("\ntarget run.json\n"), "{text}");
        r.write(b"{\"v\": 1}\n").unwrap();
        r.write(b"{\"v\": 2}\n").unwrap();
        assert_eq!(r.versions(), 2);
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\"v\": 2}\n");
        assert_eq!(
            names(dir.path()),
            [".run.json.xylem-reservation", "run.json"]
        );
        r.release().unwrap();
        assert_eq!(names(dir.path()), ["run.json"]);
    }

    #[test]
    fn a_version_that_grows_at_its_end_copies_what_it_shares() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("grow.json");
        let mut r = Reservation::reserve(&path).unwrap();
        // A large head that stays, a tail that changes, as a document of many ranks does.
        let head: Vec<u8> = (0..200_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let version = |tail: &str| [&head[..], tail.as_bytes()].concat();
        r.write(&version("[1]}")).unwrap();
        assert_eq!(
            r.last_write(),
            Written {
                copied: 0,
                written: 200_004
            }
        );
        r.write(&version("[1,2]}")).unwrap();
        assert_eq!(
            r.last_write(),
            Written {
                copied: 200_002,
                written: 4
            }
        );
        assert_eq!(fs::read(&path).unwrap(), version("[1,2]}"));
        // Shorter than before, sharing most: the file is exactly the new version.
        r.write(&head[..150_000]).unwrap();
        assert_eq!(r.last_write().written, 0);
        assert_eq!(fs::read(&path).unwrap(), &head[..150_000]);
        // A change near the start: below SHARED_MIN in common, written whole.
        let mut early = version("[1,2,3]}");
        early[10] = b'#';
        r.write(&early).unwrap();
        assert_eq!(r.last_write().copied, 0);
        assert_eq!(fs::read(&path).unwrap(), early);
        // A version changed in place since it was written (here a byte of its head) is
        // not copied from: the next one is written whole, and exactly.
        r.write(&version("[1,2,3,4]}")).unwrap();
        {
            use std::os::unix::fs::FileExt;
            let f = fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.write_all_at(b"#", 100).unwrap();
            // The same size; a later modification time on any file system clock.
            let later = std::time::SystemTime::now() + std::time::Duration::from_secs(2);
            f.set_modified(later).unwrap();
        }
        r.write(&version("[1,2,3,4,5]}")).unwrap();
        assert_eq!(r.last_write().copied, 0);
        assert_eq!(fs::read(&path).unwrap(), version("[1,2,3,4,5]}"));
        // After write_with nothing is known of the version's bytes: the next is whole.
        r.write_with(|out| out.write_all(&head)).unwrap();
        r.write(&version("x")).unwrap();
        assert_eq!(r.last_write().copied, 0);
        assert_eq!(fs::read(&path).unwrap(), version("x"));
        assert_eq!(r.versions(), 8);
        r.release().unwrap();
        assert_eq!(names(dir.path()), ["grow.json"]);
    }

    #[test]
    fn common_prefixes_are_found_across_block_edges() {
        let a = vec![7u8; 10_000];
        for cut in [0, 1, 4095, 4096, 4097, 8192, 9_999] {
            let mut b = a.clone();
            b[cut] = 8;
            assert_eq!(common_prefix(&a, &b), cut);
        }
        assert_eq!(common_prefix(&a, &a[..5000]), 5000);
        assert_eq!(common_prefix(&a, &a), 10_000);
        assert_eq!(common_prefix(b"", &a), 0);
    }

    #[test]
    fn an_earlier_file_is_kept_numbered_and_never_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("b.sum");
        fs::write(&path, "first run").unwrap();
        fs::write(tmp.path().join("b.sum.1"), "kept by hand").unwrap();
        let mut r = Reservation::reserve_keeping_earlier(&path).unwrap();
        // Nothing is moved until the run goes ahead: a refused run leaves it all as it was.
        assert_eq!(r.kept_as(), None);
        assert_eq!(fs::read_to_string(&path).unwrap(), "first run");
        assert_eq!(
            r.keep_earlier().unwrap(),
            Some(tmp.path().join("b.sum.2").as_path())
        );
        assert_eq!(r.kept_as(), Some(tmp.path().join("b.sum.2").as_path()));
        // Once only.
        assert_eq!(
            r.keep_earlier().unwrap(),
            Some(tmp.path().join("b.sum.2").as_path())
        );
        r.write(b"second run").unwrap();
        r.release().unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "second run");
        assert_eq!(
            fs::read_to_string(tmp.path().join("b.sum.1")).unwrap(),
            "kept by hand"
        );
        assert_eq!(
            fs::read_to_string(tmp.path().join("b.sum.2")).unwrap(),
            "first run"
        );
        assert_eq!(names(tmp.path()), ["b.sum", "b.sum.1", "b.sum.2"]);
        // Nothing there: nothing kept. The plain reservation still refuses a file.
        let fresh = tmp.path().join("c.sum");
        assert_eq!(
            Reservation::reserve_keeping_earlier(&fresh)
                .unwrap()
                .keep_earlier()
                .unwrap(),
            None
        );
        assert!(Reservation::reserve(&path).unwrap_err().is_conflict());
    }

    #[test]
    fn a_refused_run_leaves_the_earlier_file_where_and_as_it_was() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("b.sum");
        fs::write(&path, "first run").unwrap();
        use std::os::unix::fs::MetadataExt;
        let before = fs::metadata(&path).unwrap();
        // Reserved, then given up without a version (the run was refused).
        let r = Reservation::reserve_keeping_earlier(&path).unwrap();
        assert_eq!(r.kept_as(), None);
        drop(r);
        assert_eq!(names(tmp.path()), ["b.sum"]);
        assert_eq!(fs::read_to_string(&path).unwrap(), "first run");
        let after = fs::metadata(&path).unwrap();
        assert_eq!(
            (before.ino(), before.mtime(), before.mtime_nsec()),
            (after.ino(), after.mtime(), after.mtime_nsec())
        );
    }

    #[test]
    fn a_link_is_kept_as_a_link_and_a_directory_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        fs::write(&victim, "not ours").unwrap();
        let path = tmp.path().join("b.prot");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        let mut r = Reservation::reserve_keeping_earlier(&path).unwrap();
        r.write(b"ours").unwrap();
        r.release().unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "not ours");
        let kept = tmp.path().join("b.prot.1");
        assert!(fs::symlink_metadata(&kept)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&path).unwrap(), "ours");
        let dir = tmp.path().join("d.sum");
        fs::create_dir(&dir).unwrap();
        let e = Reservation::reserve_keeping_earlier(&dir).unwrap_err();
        assert!(e.is_conflict(), "{e}");
        assert_eq!(names(tmp.path()), ["b.prot", "b.prot.1", "d.sum", "victim"]);
    }

    #[test]
    fn dropping_releases_even_without_a_version() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.csv");
        drop(Reservation::reserve(&path).unwrap());
        assert!(names(dir.path()).is_empty());
        // Free again.
        Reservation::reserve(&path).unwrap().release().unwrap();
    }

    #[test]
    fn an_existing_file_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keep.json");
        fs::write(&path, "precious").unwrap();
        let e = Reservation::reserve(&path).unwrap_err();
        assert!(matches!(e, Error::Exists { .. }) && e.is_conflict(), "{e}");
        assert!(e.to_string().contains("the file exists"), "{e}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "precious");
        assert_eq!(names(dir.path()), ["keep.json"]);
        // A directory, a dangling link or a device of that name counts as existing too,
        // and the message says which it is.
        fs::create_dir(dir.path().join("d")).unwrap();
        let e = Reservation::reserve(dir.path().join("d")).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Exists {
                    found: Found::Directory,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("a directory has that name"), "{e}");
        std::os::unix::fs::symlink("/nonexistent", dir.path().join("l")).unwrap();
        let e = Reservation::reserve(dir.path().join("l")).unwrap_err();
        assert!(
            e.to_string().contains("a symbolic link has that name"),
            "{e}"
        );
        let e = Reservation::reserve("/dev/null").unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/null: a character device has that name; output goes only to new regular \
             files (never overwritten, never through a link or a device), so give the name \
             of a new file"
        );
        assert!(e.is_conflict());
    }

    #[test]
    fn a_dash_is_refused_not_made_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let here = std::env::current_dir().unwrap();
        let e = Reservation::reserve("-").unwrap_err();
        assert!(matches!(e, Error::Dash) && e.is_conflict(), "{e}");
        assert!(e.to_string().contains("standard output"), "{e}");
        assert!(!here.join("-").exists());
        // A file of that name in a folder is an ordinary name.
        Reservation::reserve(dir.path().join("-"))
            .unwrap()
            .release()
            .unwrap();
    }

    #[test]
    fn a_file_created_after_the_reservation_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("race.json");
        let mut r = Reservation::reserve(&path).unwrap();
        fs::write(&path, "someone else's").unwrap();
        let e = r.write(b"ours").unwrap_err();
        assert!(matches!(e, Error::Exists { .. }), "{e}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "someone else's");
        r.release().unwrap();
        assert_eq!(names(dir.path()), ["race.json"]);
    }

    #[test]
    fn a_live_reservation_refuses_a_second_run_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("busy.json");
        // Another live process of this host holds it: the test's parent, say.
        let parent = std::os::unix::process::parent_id();
        let other = Holder {
            pid: parent,
            process_start: None,
            ..Holder::this_process()
        };
        let marker = dir.path().join(".busy.json.xylem-reservation");
        fs::write(&marker, other.to_text("busy.json")).unwrap();
        let e = Reservation::reserve(&path).unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(e, Error::Reserved { .. }) && e.is_conflict(),
            "{text}"
        );
        assert!(
            text.contains(&format!("process {parent} ")) && text.contains(&other.host),
            "{text}"
        );
        assert!(text.contains("another run is writing it"), "{text}");
        // Left as it was.
        assert_eq!(
            fs::read_to_string(&marker).unwrap(),
            other.to_text("busy.json")
        );
        assert!(!path.exists());
    }

    #[test]
    fn a_reservation_from_another_host_stands() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nfs.json");
        let other = Holder {
            host: "some-other-node".into(),
            pid: 999_999_999,
            ..Holder::this_process()
        };
        fs::write(
            dir.path().join(".nfs.json.xylem-reservation"),
            other.to_text("nfs.json"),
        )
        .unwrap();
        let text = Reservation::reserve(&path).unwrap_err().to_string();
        assert!(
            text.contains("some-other-node") && text.contains("if it is gone, remove"),
            "{text}"
        );
    }

    #[test]
    fn a_stale_reservation_is_replaced_and_said() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("killed.json");
        let dead = Holder {
            pid: 999_999_999,
            temp: Some(".killed.json.tmp.00ff00ff00ff00ff".into()),
            ..Holder::this_process()
        };
        fs::write(
            dir.path().join(".killed.json.xylem-reservation"),
            dead.to_text("killed.json"),
        )
        .unwrap();
        // The killed run's unfinished version.
        fs::write(
            dir.path().join(".killed.json.tmp.00ff00ff00ff00ff"),
            "{\"par",
        )
        .unwrap();
        let mut r = Reservation::reserve(&path).unwrap();
        assert_eq!(r.replaced().map(|h| h.pid), Some(999_999_999));
        assert_eq!(
            r.replaced_notice().unwrap(),
            format!(
                "a reservation of {} by process 999999999 on {}, which is gone, is replaced",
                path.display(),
                dead.host
            )
        );
        let mine = Holder::parse(&fs::read_to_string(r.marker_path()).unwrap()).unwrap();
        assert_eq!(mine.pid, std::process::id());
        assert_eq!(names(dir.path()), [".killed.json.xylem-reservation"]);
        r.write(b"done").unwrap();
        r.release().unwrap();
        assert_eq!(names(dir.path()), ["killed.json"]);
    }

    #[test]
    fn an_unreadable_reservation_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join(".odd.json.xylem-reservation");
        fs::write(&marker, "garbage").unwrap();
        let e = Reservation::reserve(dir.path().join("odd.json")).unwrap_err();
        assert!(matches!(e, Error::Unreadable { .. }), "{e}");
        assert!(e.to_string().contains("remove"), "{e}");
        assert_eq!(fs::read_to_string(&marker).unwrap(), "garbage");
    }

    #[test]
    fn the_same_name_twice_in_one_run_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let _first = Reservation::reserve(dir.path().join("x.json")).unwrap();
        let e = Reservation::reserve(dir.path().join(".").join("x.json")).unwrap_err();
        assert!(matches!(e, Error::Twice { .. }) && e.is_conflict(), "{e}");
    }

    #[test]
    fn a_failed_write_keeps_the_previous_version_and_removes_the_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sizes.json");
        let mut r = Reservation::reserve(&path).unwrap();
        r.write(b"{\"sizes\": [1]}\n").unwrap();
        // The disk fills half way through the next version.
        let e = r
            .write_with(|out| {
                out.write_all(b"{\"sizes\": [1, 2")?;
                out.flush()?;
                Err(enospc())
            })
            .unwrap_err();
        assert!(!e.is_conflict());
        assert_eq!(
            e.to_string(),
            format!(
                "{}: cannot write it: No space left on device",
                path.display()
            )
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\"sizes\": [1]}\n");
        assert_eq!(
            names(dir.path()),
            [".sizes.json.xylem-reservation", "sizes.json"]
        );
        assert_eq!(r.versions(), 1);
        // The run may go on writing once there is room again.
        r.write(b"{\"sizes\": [1, 2]}\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\"sizes\": [1, 2]}\n");
    }

    #[test]
    fn a_failed_first_write_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plot.png");
        let mut r = Reservation::reserve(&path).unwrap();
        assert!(r.write_with(|_| Err(enospc())).is_err());
        drop(r);
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn a_missing_directory_is_an_io_error_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no/such/dir.json");
        let e = Reservation::reserve(&path).unwrap_err();
        assert!(!e.is_conflict());
        assert_eq!(
            e.to_string(),
            format!(
                "{}: cannot create it: No such file or directory",
                path.display()
            )
        );
    }

    #[test]
    fn replace_overwrites_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hosts.txt");
        replace(&path, b"n1\n").unwrap();
        replace(&path, b"n2\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "n2\n");
        assert_eq!(names(dir.path()), ["hosts.txt"]);
        assert!(replace(dir.path().join("no/x"), b"").is_err());
    }

    #[test]
    fn a_bare_name_lives_in_the_current_directory() {
        let r = Reservation::reserve("outfile-test-bare-name.json").unwrap();
        assert_eq!(
            r.marker_path(),
            Path::new("./.outfile-test-bare-name.json.xylem-reservation")
        );
        r.release().unwrap();
    }
}
