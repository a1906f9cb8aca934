//! Reserving an output file's name, writing its versions atomically, and releasing it.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, ErrorKind, Write};
use std::path::{Path, PathBuf};

use crate::holder::{Holder, Liveness};
use crate::{cause, Error};

/// The suffix of a reservation file: `.NAME.xylem-reservation` beside `NAME`.
pub const RESERVATION_SUFFIX: &str = ".xylem-reservation";

/// The reserved name of one output file of this run.
///
/// Made by [`Reservation::reserve`]; every [`Reservation::write`] puts one complete
/// version in place; [`Reservation::release`] (or dropping it) removes the reservation
/// file, whatever became of the run. The versions written stay.
#[derive(Debug)]
pub struct Reservation {
    target: PathBuf,
    marker: PathBuf,
    dir: PathBuf,
    name: OsString,
    /// This process's reservation text: only a marker that still says it is removed.
    text: String,
    replaced: Option<Holder>,
    versions: u64,
    held: bool,
}

impl Reservation {
    /// Reserves `path` for this process: the target must not exist, and no live run may
    /// hold its reservation (`.NAME.xylem-reservation` in the same directory). A
    /// reservation left by a process that is gone from this host is replaced (see
    /// [`Reservation::replaced_notice`]).
    ///
    /// Errors: [`Error::Exists`], [`Error::Reserved`] (a live process, or one on another
    /// host), [`Error::Unreadable`] (a reservation file this crate cannot read), and
    /// [`Error::Io`] when the directory is missing, not writable or full.
    pub fn reserve(path: impl AsRef<Path>) -> Result<Reservation, Error> {
        let target = path.as_ref().to_path_buf();
        let Some(name) = target.file_name().map(OsStr::to_os_string) else {
            return Err(Error::io(
                &target,
                "create it",
                io::Error::new(ErrorKind::InvalidInput, "the path names no file"),
            ));
        };
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        check_absent(&target)?;
        let me = Holder::this_process();
        let text = me.to_text(&name.to_string_lossy());
        let marker = sibling(&dir, &name, RESERVATION_SUFFIX);
        // The reservation appears complete or not at all: written to a file of its own,
        // then linked to its name (which fails if the name is taken).
        let candidate = sibling(&dir, &name, &format!("{RESERVATION_SUFFIX}.tmp.{}", me.pid));
        if let Err(e) = write_synced(&candidate, |out| out.write_all(text.as_bytes())) {
            let _ = fs::remove_file(&candidate);
            return Err(Error::io(&target, "create it", e));
        }
        let claimed = claim(&target, &marker, &candidate, &dir, &name, &me);
        let _ = fs::remove_file(&candidate);
        let reservation = Reservation {
            replaced: claimed?,
            target,
            marker,
            dir,
            name,
            text,
            versions: 0,
            held: true,
        };
        // A file may have appeared under the name meanwhile; dropping releases.
        check_absent(&reservation.target)?;
        Ok(reservation)
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

    /// Puts `bytes` in place as the next complete version.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.write_with(|out| out.write_all(bytes))
    }

    /// Puts the next complete version in place, as `fill` writes it: to a temporary file
    /// in the same directory (`.NAME.tmp.PID`), synced, then renamed over the previous
    /// version. When `fill`, the sync or the rename fails, the temporary file is removed
    /// and the previous version (if any) stays as it was. The first version is linked
    /// into place, so that a file someone else created meanwhile is not overwritten
    /// ([`Error::Exists`]).
    pub fn write_with<F>(&mut self, fill: F) -> Result<(), Error>
    where
        F: FnOnce(&mut dyn Write) -> io::Result<()>,
    {
        if !self.held {
            return Err(Error::io(
                &self.target,
                "write it",
                io::Error::other("its reservation was released"),
            ));
        }
        let temp = self.temp_path();
        if let Err(e) = write_synced(&temp, fill) {
            let _ = fs::remove_file(&temp);
            return Err(Error::io(&self.target, "write it", e));
        }
        let placed = if self.versions == 0 {
            place_new(&temp, &self.target)
        } else {
            fs::rename(&temp, &self.target)
        };
        if let Err(e) = placed {
            let _ = fs::remove_file(&temp);
            return Err(if e.kind() == ErrorKind::AlreadyExists {
                Error::Exists {
                    path: self.target.clone(),
                }
            } else {
                Error::io(&self.target, "write it", e)
            });
        }
        sync_dir(&self.dir);
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
        let _ = fs::remove_file(self.temp_path());
        match fs::read_to_string(&self.marker) {
            Ok(text) if text == self.text => fs::remove_file(&self.marker)
                .map_err(|e| Error::io(&self.target, "release its reservation", e)),
            // Gone, or another run's: not ours to remove.
            _ => Ok(()),
        }
    }

    fn temp_path(&self) -> PathBuf {
        sibling(
            &self.dir,
            &self.name,
            &format!(".tmp.{}", std::process::id()),
        )
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let _ = self.unreserve();
    }
}

/// Writes `bytes` to `path` atomically — a temporary file beside it, synced, renamed over
/// it — replacing a file that is there. For generated files that are made again in place
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
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let temp = sibling(&dir, name, &format!(".tmp.{}", std::process::id()));
    let done =
        write_synced(&temp, |out| out.write_all(bytes)).and_then(|()| fs::rename(&temp, target));
    if let Err(e) = done {
        let _ = fs::remove_file(&temp);
        return Err(Error::io(target, "write it", e));
    }
    sync_dir(&dir);
    Ok(())
}

/// Takes the reservation file `marker` with the prepared `candidate`, replacing a stale
/// one; returns the holder of the stale reservation it replaced.
fn claim(
    target: &Path,
    marker: &Path,
    candidate: &Path,
    dir: &Path,
    name: &OsStr,
    me: &Holder,
) -> Result<Option<Holder>, Error> {
    let mut replaced = None;
    for _ in 0..5 {
        match link_new(candidate, marker) {
            Ok(()) => return Ok(replaced),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(target, "create it", e)),
        }
        let unreadable = |reason: String| Error::Unreadable {
            path: target.to_path_buf(),
            marker: marker.to_path_buf(),
            reason,
        };
        let text = match fs::read_to_string(marker) {
            Ok(text) => text,
            // Released meanwhile: try again.
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(unreadable(cause(&e))),
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
        if holder.liveness() != Liveness::Gone {
            return Err(Error::Reserved {
                path: target.to_path_buf(),
                marker: marker.to_path_buf(),
                holder: Box::new(holder),
            });
        }
        // Gone: move it aside, and check that what was moved is what was judged (another
        // run may have replaced it first).
        let grave = sibling(dir, name, &format!("{RESERVATION_SUFFIX}.stale.{}", me.pid));
        match fs::rename(marker, &grave) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(target, "replace its stale reservation", e)),
        }
        let moved = fs::read_to_string(&grave).unwrap_or_default();
        if moved != text {
            // Another run's fresh reservation: put it back and look again.
            let _ = link_new(&grave, marker);
            let _ = fs::remove_file(&grave);
            continue;
        }
        let _ = fs::remove_file(&grave);
        // The killed run's unfinished version, if it left one.
        let _ = fs::remove_file(sibling(dir, name, &format!(".tmp.{}", holder.pid)));
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

/// `.NAME` + `suffix` in `dir`.
fn sibling(dir: &Path, name: &OsStr, suffix: &str) -> PathBuf {
    let mut file = OsString::from(".");
    file.push(name);
    file.push(suffix);
    dir.join(file)
}

/// `Err(Error::Exists)` if anything (a file, a directory, a dangling link) has the name.
fn check_absent(target: &Path) -> Result<(), Error> {
    match fs::symlink_metadata(target) {
        Ok(_) => Err(Error::Exists {
            path: target.to_path_buf(),
        }),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(target, "create it", e)),
    }
}

/// Creates (or truncates) `path`, lets `fill` write it through a buffer, and syncs it.
fn write_synced<F>(path: &Path, fill: F) -> io::Result<()>
where
    F: FnOnce(&mut dyn Write) -> io::Result<()>,
{
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    let mut out = BufWriter::new(file);
    fill(&mut out)?;
    let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()
}

/// Gives `dst` the contents of `src` if `dst` does not exist (`AlreadyExists` if it does):
/// a hard link, or on a file system without them a new file with a copy.
fn link_new(src: &Path, dst: &Path) -> io::Result<()> {
    match fs::hard_link(src, dst) {
        Err(e) if no_hard_links(&e) => {
            let bytes = fs::read(src)?;
            let mut file = OpenOptions::new().write(true).create_new(true).open(dst)?;
            let written = file.write_all(&bytes).and_then(|()| file.sync_all());
            if written.is_err() {
                let _ = fs::remove_file(dst);
            }
            written
        }
        other => other,
    }
}

/// Moves the first version `temp` to `target` unless `target` exists (`AlreadyExists`).
fn place_new(temp: &Path, target: &Path) -> io::Result<()> {
    match fs::hard_link(temp, target) {
        Ok(()) => {
            let _ = fs::remove_file(temp);
            Ok(())
        }
        Err(e) if no_hard_links(&e) => match fs::symlink_metadata(target) {
            Ok(_) => Err(io::Error::from(ErrorKind::AlreadyExists)),
            Err(_) => fs::rename(temp, target),
        },
        Err(e) => Err(e),
    }
}

/// Whether `e` says that the file system has no hard links (EPERM, EOPNOTSUPP).
fn no_hard_links(e: &io::Error) -> bool {
    e.kind() == ErrorKind::Unsupported || matches!(e.raw_os_error(), Some(1) | Some(95))
}

/// Syncs a directory, so that a rename in it survives a crash (best effort: some file
/// systems refuse to sync a directory).
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // A directory or a dangling link of that name counts as existing too.
        fs::create_dir(dir.path().join("d")).unwrap();
        assert!(matches!(
            Reservation::reserve(dir.path().join("d")),
            Err(Error::Exists { .. })
        ));
        std::os::unix::fs::symlink("/nonexistent", dir.path().join("l")).unwrap();
        assert!(matches!(
            Reservation::reserve(dir.path().join("l")),
            Err(Error::Exists { .. })
        ));
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
            ..Holder::this_process()
        };
        fs::write(
            dir.path().join(".killed.json.xylem-reservation"),
            dead.to_text("killed.json"),
        )
        .unwrap();
        // The killed run's unfinished version.
        fs::write(dir.path().join(".killed.json.tmp.999999999"), "{\"par").unwrap();
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
