//! The way to a directory that xylem writes or removes under, walked one component at a
//! time, following a symbolic link only where the rule of the kernel's
//! `fs.protected_symlinks` allows it — applied by xylem itself, to every folder on the
//! way, sticky or not.
//!
//! # The threat
//!
//! Another user of a shared folder plants a link as a *parent* folder:
//! `ln -s ~bob/job /shared/place`. Root then runs `xylem place … --out /shared/place`,
//! and every file created "in /shared/place" lands in bob's folder, owned by root. The
//! kernel's own `fs.protected_symlinks` stops this only in sticky folders (`/tmp`), only
//! where the setting is on, and a planter can also use a folder that is merely group- or
//! world-writable.
//!
//! # The rule
//!
//! A symbolic link found in a folder that others can write (its mode has the group or
//! the other write bit) is followed only when its owner is the folder's owner or the
//! caller (the effective user id); any other is refused with a [`PlantedLink`] error
//! that names the link, its owner and the folder. A link in a folder only its owner can
//! write is followed as usual: only that owner (or root) could have put it there.
//!
//! # The walk
//!
//! [`resolve`] starts at `/` or at the working directory and opens each component
//! relative to the descriptor of the one before, never following a link by itself
//! (`O_PATH|O_DIRECTORY|O_NOFOLLOW`). A component that is a link is opened as the link
//! (`O_PATH|O_NOFOLLOW`), checked against the rule by its own `fstat`, read through that
//! same descriptor (`readlinkat(fd, "")`, so the link read is the link checked) and its
//! target walked the same way, at most [`MAX_LINK_HOPS`] links in all, as the kernel
//! allows 40. `..` goes to the parent of the directory reached, as the kernel's does.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags, Stat, CWD};

/// The most symbolic links followed while resolving one path, as the kernel's 40.
pub const MAX_LINK_HOPS: usize = 40;

/// The most missing folders [`resolve`] creates (or finds created by someone else
/// meanwhile) for one path: a bound against a folder that is removed as fast as it is
/// made.
const MAX_CREATIONS: usize = 4096;

/// A symbolic link that the rule refuses: it is in a folder others can write and belongs
/// neither to the folder's owner nor to the caller. Carried inside an
/// [`io::Error`] of kind `PermissionDenied` ([`planted_link`] finds it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlantedLink {
    /// The link, as the walk reached it.
    pub link: PathBuf,
    /// Its owner.
    pub link_uid: u32,
    /// The folder it is in.
    pub dir: PathBuf,
    /// The folder's owner.
    pub dir_uid: u32,
    /// The folder's permission bits (with the sticky bit).
    pub dir_mode: u32,
}

impl fmt::Display for PlantedLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dir_owner = user_text(self.dir_uid);
        write!(
            f,
            "{} is a symbolic link owned by {} in {}, a folder of {dir_owner} that others \
             can write (mode {:04o}); xylem does not follow a link there that neither you \
             nor the folder's owner made (the rule of the kernel's protected_symlinks, \
             applied to every folder): give a real directory, or a link owned by you or by \
             {dir_owner}",
            crate::shown::path(&self.link),
            user_text(self.link_uid),
            crate::shown::path(&self.dir),
            self.dir_mode & 0o7777,
        )
    }
}

impl std::error::Error for PlantedLink {}

impl From<PlantedLink> for io::Error {
    fn from(link: PlantedLink) -> io::Error {
        io::Error::new(io::ErrorKind::PermissionDenied, link)
    }
}

/// The [`PlantedLink`] that `e` carries, if it is one.
pub fn planted_link(e: &io::Error) -> Option<&PlantedLink> {
    e.get_ref()?.downcast_ref()
}

/// The rule: whether a link owned by `link_uid`, found in the folder whose `stat` is
/// `dir`, may be followed by `caller`. It may unless the folder is writable by its group
/// or by others and the link belongs neither to the folder's owner nor to the caller.
pub fn may_follow(dir: &Stat, link_uid: u32, caller: u32) -> bool {
    let others_write = dir.st_mode & 0o022 != 0;
    !others_write || link_uid == dir.st_uid || link_uid == caller
}

/// `bob (uid 1001)`, or `uid 1001` for a user `/etc/passwd` does not name.
fn user_text(uid: u32) -> String {
    let name = crate::input::read_to_string("/etc/passwd", 4 << 20)
        .ok()
        .and_then(|text| {
            text.lines().find_map(|line| {
                let mut fields = line.split(':');
                let name = fields.next()?;
                let id = fields.nth(1)?;
                (id.parse::<u32>().ok()? == uid && !name.is_empty()).then(|| name.to_string())
            })
        });
    match name {
        Some(name) => format!("{} (uid {uid})", crate::shown::text(&name)),
        None => format!("uid {uid}"),
    }
}

/// One step of the walk: to `/`, to the parent, or to a name, and whether it comes from
/// a link's target (a folder missing there is never created).
#[derive(Debug)]
enum Step {
    Root,
    Up,
    Name(OsString),
}

fn steps(path: &Path, from_link: bool) -> Vec<(Step, bool)> {
    path.components()
        .filter_map(|c| match c {
            Component::RootDir => Some(Step::Root),
            Component::ParentDir => Some(Step::Up),
            Component::Normal(name) => Some(Step::Name(name.to_os_string())),
            Component::CurDir | Component::Prefix(_) => None,
        })
        .map(|s| (s, from_link))
        .collect()
}

fn open_path(
    dir: impl std::os::fd::AsFd,
    name: &OsStr,
    flags: OFlags,
) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::PATH | OFlags::CLOEXEC | flags,
        Mode::empty(),
    )
}

/// Opens the directory `path` for reading, walking it as the module says; with `create`,
/// the folders of `path` itself that are missing are made (mode 0777 less the umask, as
/// `mkdir -p` does), never those of a link's target. Errors are the system's (`NotFound`,
/// `NotADirectory`, `ELOOP` past [`MAX_LINK_HOPS`] links), or a [`PlantedLink`].
pub fn resolve(path: &Path, create: bool) -> io::Result<OwnedFd> {
    let caller = crate::safedir::euid();
    let mut todo: VecDeque<(Step, bool)> = steps(path, false).into();
    let mut cur = open_path(CWD, OsStr::new("."), OFlags::DIRECTORY)?;
    // Where the walk is, for messages.
    let mut at = PathBuf::new();
    let (mut hops, mut creations) = (0, 0);
    while let Some((step, from_link)) = todo.pop_front() {
        let name = match step {
            Step::Root => {
                cur = open_path(CWD, OsStr::new("/"), OFlags::DIRECTORY)?;
                at = PathBuf::from("/");
                continue;
            }
            Step::Up => {
                cur = open_path(&cur, OsStr::new(".."), OFlags::DIRECTORY)?;
                if at.as_os_str().is_empty() || at.ends_with("..") {
                    at.push("..");
                } else if at != Path::new("/") {
                    at.pop();
                }
                continue;
            }
            Step::Name(name) => name,
        };
        match open_path(&cur, &name, OFlags::DIRECTORY | OFlags::NOFOLLOW) {
            Ok(fd) => {
                cur = fd;
                at.push(&name);
                continue;
            }
            Err(rustix::io::Errno::NOENT) if create && !from_link && creations < MAX_CREATIONS => {
                creations += 1;
                match rustix::fs::mkdirat(&cur, &name, Mode::from_raw_mode(0o777)) {
                    // Made now, or by someone else meanwhile: open it as any other.
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                todo.push_front((Step::Name(name), from_link));
                continue;
            }
            // A link (ELOOP or ENOTDIR under O_NOFOLLOW|O_DIRECTORY) or not a directory.
            Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {}
            Err(e) => return Err(e.into()),
        }
        let fd = open_path(&cur, &name, OFlags::NOFOLLOW)?;
        let stat = rustix::fs::fstat(&fd)?;
        match FileType::from_raw_mode(stat.st_mode) {
            // A link replaced by a directory meanwhile.
            FileType::Directory => {
                cur = fd;
                at.push(&name);
            }
            FileType::Symlink => {
                let dir = rustix::fs::fstat(&cur)?;
                if !may_follow(&dir, stat.st_uid, caller) {
                    return Err(PlantedLink {
                        link: at.join(&name),
                        link_uid: stat.st_uid,
                        dir: if at.as_os_str().is_empty() {
                            PathBuf::from(".")
                        } else {
                            at.clone()
                        },
                        dir_uid: dir.st_uid,
                        dir_mode: dir.st_mode,
                    }
                    .into());
                }
                hops += 1;
                if hops > MAX_LINK_HOPS {
                    return Err(rustix::io::Errno::LOOP.into());
                }
                // The link just checked, read through its own descriptor.
                let target = rustix::fs::readlinkat(&fd, "", Vec::new())?;
                let target = Path::new(OsStr::from_bytes(target.to_bytes()));
                if target.as_os_str().is_empty() {
                    return Err(rustix::io::Errno::NOENT.into());
                }
                // Its target's steps come next, from the folder that holds the link.
                for step in steps(target, true).into_iter().rev() {
                    todo.push_front(step);
                }
            }
            _ => return Err(rustix::io::Errno::NOTDIR.into()),
        }
    }
    Ok(rustix::fs::openat(
        &cur,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{lchown, symlink, PermissionsExt};

    const NOBODY: u32 = 65534;
    /// Another user than nobody, for a link that is neither the caller's nor the
    /// folder's owner's when the folder is nobody's.
    const OTHER: u32 = 65533;

    /// Whether this test can make files of other users (root); elsewhere it says
    /// `SKIPPED`, and under `CI=true` it fails.
    fn root() -> bool {
        if crate::safedir::euid() == 0 {
            return true;
        }
        let why = "the rule needs files of other users, made with chown: run as root";
        if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
            panic!("CI=true, and this test cannot set itself up: {why}");
        }
        eprintln!("SKIPPED: {why}");
        false
    }

    /// A temporary folder with `victim/` (a file in it) and `shared/` of `mode`, owned
    /// by `owner`.
    fn setup(mode: u32, owner: u32) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::fs::write(victim.join("machinefile.txt"), "bob's").unwrap();
        let shared = tmp.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(mode)).unwrap();
        lchown(&shared, Some(owner), Some(owner)).unwrap();
        (tmp, victim, shared)
    }

    /// Plants `at` → `target`, owned by `uid`.
    fn plant(target: &Path, at: &Path, uid: u32) {
        symlink(target, at).unwrap();
        lchown(at, Some(uid), Some(uid)).unwrap();
    }

    fn refused(path: &Path) -> PlantedLink {
        let e = resolve(path, false).unwrap_err();
        planted_link(&e)
            .unwrap_or_else(|| panic!("{}: not refused as a planted link: {e}", path.display()))
            .clone()
    }

    fn reached(path: &Path) -> (u64, u64) {
        let fd = resolve(path, false)
            .unwrap_or_else(|e| panic!("{}: not followed: {e}", path.display()));
        let s = rustix::fs::fstat(&fd).unwrap();
        (s.st_dev, s.st_ino)
    }

    fn id(path: &Path) -> (u64, u64) {
        let s = rustix::fs::stat(path).unwrap();
        (s.st_dev, s.st_ino)
    }

    #[test]
    fn a_link_of_another_user_in_a_folder_others_write_is_refused() {
        if !root() {
            return;
        }
        for mode in [0o777, 0o1777, 0o775, 0o757] {
            let (_tmp, victim, shared) = setup(mode, 0);
            let place = shared.join("place");
            plant(&victim, &place, NOBODY);
            let link = refused(&place);
            assert_eq!(
                (
                    &link.link,
                    link.link_uid,
                    &link.dir,
                    link.dir_uid,
                    link.dir_mode & 0o7777
                ),
                (&place, NOBODY, &shared, 0, mode),
                "mode {mode:o}"
            );
            let text = link.to_string();
            for part in [
                format!(
                    "{} is a symbolic link owned by nobody (uid 65534)",
                    place.display()
                ),
                format!(
                    "in {}, a folder of root (uid 0) that others can write (mode {mode:04o})",
                    shared.display()
                ),
                "give a real directory, or a link owned by you or by root (uid 0)".into(),
            ] {
                assert!(text.contains(&part), "{part:?} not in: {text}");
            }
            // Below it too, and when creating: nothing is made in the victim's folder.
            let e = resolve(&place.join("new/deeper"), true).unwrap_err();
            assert!(planted_link(&e).is_some(), "{e}");
            assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
            let names: Vec<_> = std::fs::read_dir(&victim).unwrap().collect();
            assert_eq!(names.len(), 1, "mode {mode:o}: {names:?}");
        }
    }

    #[test]
    fn links_of_the_caller_or_of_the_folders_owner_are_followed() {
        if !root() {
            return;
        }
        // The caller's (root's) link in a world-writable folder.
        let (_tmp, victim, shared) = setup(0o1777, 0);
        plant(&victim, &shared.join("mine"), 0);
        assert_eq!(reached(&shared.join("mine")), id(&victim));
        // The folder's owner's link in a folder nobody owns; another user's is refused.
        let (_tmp, victim, shared) = setup(0o777, NOBODY);
        plant(&victim, &shared.join("owners"), NOBODY);
        assert_eq!(reached(&shared.join("owners")), id(&victim));
        plant(&victim, &shared.join("others"), OTHER);
        assert_eq!(refused(&shared.join("others")).link_uid, OTHER);
        // Anyone's link in a folder that only its owner can write.
        let (_tmp, victim, shared) = setup(0o755, 0);
        plant(&victim, &shared.join("theirs"), NOBODY);
        assert_eq!(reached(&shared.join("theirs")), id(&victim));
        // A relative path from the working directory is walked the same way.
        let fd = resolve(Path::new("."), false).unwrap();
        assert_eq!(
            {
                let s = rustix::fs::fstat(&fd).unwrap();
                (s.st_dev, s.st_ino)
            },
            id(Path::new("."))
        );
    }

    #[test]
    fn every_link_of_a_chain_is_judged_in_its_own_folder() {
        if !root() {
            return;
        }
        let (tmp, victim, shared) = setup(0o1777, 0);
        let open = tmp.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        // shared/first (root's) → ../open/second (nobody's in a world-writable folder).
        plant(Path::new("../open/second"), &shared.join("first"), 0);
        plant(&victim, &open.join("second"), NOBODY);
        let link = refused(&shared.join("first"));
        assert_eq!(link.link, open.join("second"), "{link}");
        assert_eq!(link.dir, open);
        assert_eq!(link.link_uid, NOBODY);
        // Once the second is root's, the chain leads to the victim's folder, and `..`
        // after a link is the parent of its target.
        std::fs::remove_file(open.join("second")).unwrap();
        plant(&victim, &open.join("second"), 0);
        assert_eq!(reached(&shared.join("first")), id(&victim));
        assert_eq!(reached(&shared.join("first/..")), id(tmp.path()));
        // A link that is not a directory's.
        plant(&victim.join("machinefile.txt"), &shared.join("file"), 0);
        let e = resolve(&shared.join("file"), false).unwrap_err();
        assert_eq!(
            e.raw_os_error(),
            Some(rustix::io::Errno::NOTDIR.raw_os_error())
        );
    }

    #[test]
    fn at_most_forty_links_are_followed() {
        // Links of the caller: this holds for any user.
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("target");
        std::fs::create_dir(&target).unwrap();
        // l0 → target, l1 → l0, …, l40 → l39: l39 takes 40 links, l40 takes 41.
        symlink(&target, tmp.path().join("l0")).unwrap();
        for i in 1..=MAX_LINK_HOPS {
            symlink(format!("l{}", i - 1), tmp.path().join(format!("l{i}"))).unwrap();
        }
        assert_eq!(
            reached(&tmp.path().join(format!("l{}", MAX_LINK_HOPS - 1))),
            id(&target)
        );
        let e = resolve(&tmp.path().join(format!("l{MAX_LINK_HOPS}")), false).unwrap_err();
        assert_eq!(
            e.raw_os_error(),
            Some(rustix::io::Errno::LOOP.raw_os_error()),
            "{e}"
        );
        // A loop ends there too.
        symlink("loop", tmp.path().join("loop")).unwrap();
        let e = resolve(&tmp.path().join("loop"), false).unwrap_err();
        assert_eq!(
            e.raw_os_error(),
            Some(rustix::io::Errno::LOOP.raw_os_error()),
            "{e}"
        );
    }

    #[test]
    fn missing_folders_are_made_but_not_at_a_links_target() {
        let tmp = tempfile::tempdir().unwrap();
        let made = tmp.path().join("a/b/c");
        resolve(&made, true).unwrap();
        assert!(std::fs::symlink_metadata(&made).unwrap().is_dir());
        // Made again: found.
        resolve(&made, true).unwrap();
        // A dangling link of the caller: its target is not made.
        symlink(tmp.path().join("nowhere/x"), tmp.path().join("dangling")).unwrap();
        let e = resolve(&tmp.path().join("dangling/y"), true).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
        assert!(!tmp.path().join("nowhere").exists());
        // Below a link that leads somewhere, the rest of the path is made.
        symlink(&made, tmp.path().join("to_c")).unwrap();
        resolve(&tmp.path().join("to_c/d"), true).unwrap();
        assert!(made.join("d").is_dir());
        // A file on the way is not a directory, with or without `create`.
        std::fs::write(tmp.path().join("f"), "x").unwrap();
        let e = resolve(&tmp.path().join("f/g"), true).unwrap_err();
        assert_eq!(
            e.raw_os_error(),
            Some(rustix::io::Errno::NOTDIR.raw_os_error())
        );
    }
}
