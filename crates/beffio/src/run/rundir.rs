//! The run directory: created fresh under `--path`, marked with who made it, removed
//! unless `--keep`; the leftovers of killed runs, reported and cleaned (`--clean`).
//!
//! A run directory is `b_eff_io.<timestamp>.<pid>/` and holds, from its creation, the owner
//! marker [`OWNER_FILE`]: the pid, host, boot id and start time of the process that made
//! it (rank 0). A run killed with SIGKILL cannot remove its directory; the next run in
//! the same `--path` names what it finds there ([`report_leftovers`]), and
//! `b_eff_io --clean DIR` removes the run directories whose marker names a process that is
//! gone ([`clean`]). Nothing without a marker is ever removed.

use std::io::ErrorKind;
use std::os::fd::RawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The owner marker in every run directory.
pub const OWNER_FILE: &str = "b_eff_io.owner";
/// The first line of an owner marker.
const OWNER_HEADER: &str = "b_eff_io run directory";
/// Run directories are named `b_eff_io.<timestamp>.<pid>`.
const PREFIX: &str = "b_eff_io.";

/// Creates `<base>/b_eff_io.<timestamp>.<pid>/` with its owner marker and returns its
/// absolute path; fails (naming the path) if `base` is missing, not a directory, not
/// writable, or the directory exists. Leftovers of earlier runs in `base` are reported on
/// standard error first ([`report_leftovers`]).
pub fn create(base: &Path, stamp: &str, pid: u32) -> Result<PathBuf, String> {
    let meta = std::fs::metadata(base)
        .map_err(|e| format!("cannot use --path '{}': {}", base.display(), cause(&e)))?;
    if !meta.is_dir() {
        return Err(format!(
            "cannot use --path '{}': not a directory",
            base.display()
        ));
    }
    report_leftovers(base);
    let dir = base.join(format!("{PREFIX}{stamp}.{pid}"));
    let dir = std::path::absolute(&dir).unwrap_or(dir);
    std::fs::create_dir(&dir).map_err(|e| {
        format!(
            "cannot create the run directory '{}' under --path '{}': {}",
            dir.display(),
            base.display(),
            cause(&e)
        )
    })?;
    let marker = dir.join(OWNER_FILE);
    let written = std::fs::write(&marker, Owner::this_process().render());
    if let Err(e) = written {
        let _ = remove(&dir);
        return Err(format!(
            "cannot write '{}': {}",
            marker.display(),
            cause(&e)
        ));
    }
    Ok(dir)
}

/// Notes in the owner marker of `dir` that its run ended and kept it (`--keep`), so that
/// later runs do not report it as a leftover and `--clean` leaves it alone.
pub fn mark_kept(dir: &Path) -> Result<(), String> {
    let marker = dir.join(OWNER_FILE);
    let text = std::fs::read_to_string(&marker)
        .map_err(|e| format!("cannot read '{}': {}", marker.display(), cause(&e)))?;
    let mut owner = Owner::parse(&text)
        .ok_or_else(|| format!("'{}' is not a b_eff_io owner marker", marker.display()))?;
    owner.kept = Some(chrono::Local::now().to_rfc3339());
    std::fs::write(&marker, owner.render())
        .map_err(|e| format!("cannot write '{}': {}", marker.display(), cause(&e)))
}

/// Removes the run directory and everything in it, the owner marker last: a removal cut
/// short (the launcher's SIGKILL after its SIGTERM, say, while gigabytes are unlinked)
/// leaves a directory that still says whose it was, so the next run reports it and
/// `--clean` may remove it. Other ranks may be removing it at the same time (after a
/// signal) or still creating files in it, so a failed attempt is retried for up to a
/// second, until the directory is gone.
pub fn remove(dir: &Path) -> Result<(), String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    loop {
        match remove_marker_last(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound && !dir.exists() => return Ok(()),
            Err(e) if std::time::Instant::now() >= deadline => {
                return Err(format!("cannot remove '{}': {}", dir.display(), cause(&e)))
            }
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(2)),
        }
    }
}

/// Every entry of `dir` but the owner marker, then the marker and `dir` itself.
fn remove_marker_last(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name() == OWNER_FILE {
            continue;
        }
        let removed = if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())
        } else {
            std::fs::remove_file(entry.path())
        };
        match removed {
            Err(e) if e.kind() != ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    std::fs::remove_dir_all(dir)
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
/// on a longer one. Dropping it moves back to where the process was.
#[derive(Debug)]
pub struct Workdir {
    previous: RawFd,
}

impl Workdir {
    /// Moves into `dir`, remembering the current directory by a descriptor (so that
    /// going back works whatever its path).
    pub fn enter(dir: &Path) -> Result<Workdir, String> {
        use nix::fcntl::OFlag;
        let previous = nix::fcntl::open(
            ".",
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
        .map_err(|e| format!("cannot note the working directory: {e}"))?;
        let guard = Workdir { previous };
        std::env::set_current_dir(dir).map_err(|e| {
            format!(
                "cannot enter the run directory '{}': {}",
                dir.display(),
                cause(&e)
            )
        })?;
        Ok(guard)
    }
}

impl Drop for Workdir {
    fn drop(&mut self) {
        let _ = nix::unistd::fchdir(self.previous);
        let _ = nix::unistd::close(self.previous);
    }
}

/// Who made a run directory: the contents of its [`OWNER_FILE`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The process id of rank 0.
    pub pid: u32,
    /// Its host name.
    pub host: String,
    /// The host's boot id (`/proc/sys/kernel/random/boot_id`), to tell a reboot.
    pub boot_id: Option<String>,
    /// The process's start time in clock ticks after boot (`/proc/PID/stat`, field 22),
    /// to tell a reused pid.
    pub start_ticks: Option<u64>,
    /// When the directory was made (RFC 3339).
    pub created: Option<String>,
    /// When its run ended and kept it (`--keep`; RFC 3339): kept on purpose.
    pub kept: Option<String>,
}

/// This host's name (`gethostname`).
pub fn host_name() -> String {
    nix::unistd::gethostname()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "unknown".into())
}

fn boot_id(proc_root: &Path) -> Option<String> {
    std::fs::read_to_string(proc_root.join("sys/kernel/random/boot_id"))
        .ok()
        .map(|s| s.trim().to_string())
}

/// Field 3 (`state`) and field 22 (`starttime`) of the text of `/proc/PID/stat`.
pub fn parse_stat(stat: &str) -> Option<(char, u64)> {
    // The command name (field 2) is in parentheses and may hold spaces and ')'.
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    Some((state, fields.nth(18)?.parse().ok()?))
}

fn stat_of(proc_root: &Path, pid: u32) -> Option<(char, u64)> {
    let stat = std::fs::read_to_string(proc_root.join(format!("{pid}/stat"))).ok()?;
    parse_stat(&stat)
}

fn start_ticks(proc_root: &Path, pid: u32) -> Option<u64> {
    stat_of(proc_root, pid).map(|(_, ticks)| ticks)
}

impl Owner {
    /// This process, now.
    pub fn this_process() -> Owner {
        let proc_root = Path::new("/proc");
        let pid = std::process::id();
        Owner {
            pid,
            host: host_name(),
            boot_id: boot_id(proc_root),
            start_ticks: start_ticks(proc_root, pid),
            created: Some(chrono::Local::now().to_rfc3339()),
            kept: None,
        }
    }

    /// The marker's text: a header line, then `key=value` lines.
    pub fn render(&self) -> String {
        let mut text = format!("{OWNER_HEADER}\npid={}\nhost={}\n", self.pid, self.host);
        if let Some(b) = &self.boot_id {
            text.push_str(&format!("boot_id={b}\n"));
        }
        if let Some(t) = self.start_ticks {
            text.push_str(&format!("start_ticks={t}\n"));
        }
        if let Some(c) = &self.created {
            text.push_str(&format!("created={c}\n"));
        }
        if let Some(k) = &self.kept {
            text.push_str(&format!("kept={k}\n"));
        }
        text
    }

    /// Reads a marker; `None` unless it starts with the header and names a pid and a host.
    pub fn parse(text: &str) -> Option<Owner> {
        let mut lines = text.lines();
        if lines.next()?.trim() != OWNER_HEADER {
            return None;
        }
        let (mut pid, mut host, mut boot_id, mut start_ticks, mut created, mut kept) =
            (None, None, None, None, None, None);
        for line in lines {
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let value = value.trim().to_string();
            match key.trim() {
                "pid" => pid = value.parse().ok(),
                "host" => host = Some(value),
                "boot_id" => boot_id = Some(value),
                "start_ticks" => start_ticks = value.parse().ok(),
                "created" => created = Some(value),
                "kept" => kept = Some(value),
                _ => {}
            }
        }
        Some(Owner {
            pid: pid?,
            host: host.filter(|h| !h.is_empty())?,
            boot_id,
            start_ticks,
            created,
            kept,
        })
    }

    /// Whether the process that made the directory still runs, seen from host `here`
    /// whose process table is below `proc_root` (`/proc`).
    pub fn liveness(&self, here: &str, proc_root: &Path) -> Liveness {
        if self.host != here {
            return Liveness::Unknown(format!(
                "it was made on host {}, and from host {here} b_eff_io cannot tell whether \
                 its process is gone; run --clean there",
                self.host
            ));
        }
        if let (Some(then), Some(now)) = (&self.boot_id, boot_id(proc_root)) {
            if *then != now {
                return Liveness::Gone(format!(
                    "{} has restarted since pid {} made it",
                    self.host, self.pid
                ));
            }
        }
        if !proc_root.join(self.pid.to_string()).exists() {
            return Liveness::Gone(format!("no process {} runs on {}", self.pid, self.host));
        }
        match stat_of(proc_root, self.pid) {
            Some((state, _)) if state == 'Z' || state == 'X' => {
                Liveness::Gone(format!("process {} on {} has exited", self.pid, self.host))
            }
            Some((_, now)) if self.start_ticks.is_some_and(|then| then != now) => {
                Liveness::Gone(format!(
                    "pid {} on {} now belongs to another process",
                    self.pid, self.host
                ))
            }
            _ => Liveness::Alive,
        }
    }
}

/// Whether a run directory's process still runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Liveness {
    /// It runs: the directory is in use.
    Alive,
    /// It is gone, for the reason given.
    Gone(String),
    /// It cannot be told from here, for the reason given.
    Unknown(String),
}

/// Something in a `--path` that is named like a run directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its path.
    pub path: PathBuf,
    /// Bytes allocated on disk below it.
    pub bytes: u64,
    /// Its owner marker, if it has a valid one.
    pub owner: Option<Owner>,
    /// Whether its owner still runs (`None` without a marker).
    pub liveness: Option<Liveness>,
}

/// Bytes allocated below `path` (`st_blocks` · 512), not following symbolic links.
pub fn disk_usage(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    let mut bytes = meta.blocks().saturating_mul(512);
    if meta.is_dir() {
        if let Ok(entries) = std::fs::read_dir(path) {
            for entry in entries.flatten() {
                bytes = bytes.saturating_add(disk_usage(&entry.path()));
            }
        }
    }
    bytes
}

fn examine(path: PathBuf, here: &str, proc_root: &Path) -> Found {
    let marker = path.join(OWNER_FILE);
    let owner = std::fs::symlink_metadata(&marker)
        .ok()
        .filter(|m| m.is_file())
        .and_then(|_| std::fs::read_to_string(&marker).ok())
        .and_then(|t| Owner::parse(&t));
    let liveness = owner.as_ref().map(|o| o.liveness(here, proc_root));
    Found {
        bytes: disk_usage(&path),
        path,
        owner,
        liveness,
    }
}

/// The directories in `base` named like run directories (not following symbolic links),
/// sorted by name, each with its owner and whether that runs.
pub fn leftovers(base: &Path, here: &str, proc_root: &Path) -> std::io::Result<Vec<Found>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(base)?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(PREFIX))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    paths.sort();
    Ok(paths
        .into_iter()
        .map(|p| examine(p, here, proc_root))
        .collect())
}

/// `1.8 GiB (1932735283 bytes)`.
fn size(bytes: u64) -> String {
    format!("{}, {bytes} bytes", benchkit::memory::format_bytes(bytes))
}

/// The line a run prints about something it found in its `--path`.
pub fn leftover_line(found: &Found, base: &Path) -> String {
    let (path, bytes) = (found.path.display(), size(found.bytes));
    if let Some(Owner {
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
             but without an owner marker ({OWNER_FILE}); b_eff_io --clean leaves it alone"
        ),
    }
}

/// Prints a line on standard error for every run directory already in `base`.
pub fn report_leftovers(base: &Path) {
    let Ok(found) = leftovers(base, &host_name(), Path::new("/proc")) else {
        return;
    };
    for f in &found {
        eprintln!("{}", leftover_line(f, base));
    }
}

/// What `--clean` did with one run directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cleaned {
    /// Removed: its path, size and why it was safe to.
    Removed(PathBuf, u64, String),
    /// Kept: its path, size and why.
    Kept(PathBuf, u64, String),
}

impl std::fmt::Display for Cleaned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cleaned::Removed(p, b, why) => {
                write!(f, "removed '{}' ({}): {why}", p.display(), size(*b))
            }
            Cleaned::Kept(p, b, why) => write!(f, "kept '{}' ({}): {why}", p.display(), size(*b)),
        }
    }
}

/// `--clean DIR`: removes the run directories in `dir` (or `dir` itself, when it is one)
/// whose owner marker names a process of this host that is gone. Directories without a
/// valid marker, of a process that runs, or made on another host are kept. `Err` when
/// `dir` cannot be read.
pub fn clean(dir: &Path, here: &str, proc_root: &Path) -> Result<Vec<Cleaned>, String> {
    let candidates = if std::fs::symlink_metadata(dir.join(OWNER_FILE)).is_ok() {
        vec![examine(dir.to_path_buf(), here, proc_root)]
    } else {
        leftovers(dir, here, proc_root)
            .map_err(|e| format!("cannot read '{}': {}", dir.display(), cause(&e)))?
    };
    Ok(candidates
        .into_iter()
        .map(|f| match (&f.owner, f.liveness) {
            (
                Some(Owner {
                    kept: Some(when), ..
                }),
                _,
            ) => Cleaned::Kept(
                f.path,
                f.bytes,
                format!("its run kept it on purpose (--keep, {when}); remove it yourself"),
            ),
            (Some(o), Some(Liveness::Gone(why))) => {
                let what = format!("made by b_eff_io pid {} on {}, which is gone ({why})", o.pid, o.host);
                match remove(&f.path) {
                    Ok(()) => Cleaned::Removed(f.path, f.bytes, what),
                    Err(e) => Cleaned::Kept(f.path, f.bytes, format!("{what}, but {e}")),
                }
            }
            (Some(o), Some(Liveness::Alive)) => Cleaned::Kept(
                f.path,
                f.bytes,
                format!("its b_eff_io (pid {} on {}) still runs", o.pid, o.host),
            ),
            (Some(_), Some(Liveness::Unknown(why))) => Cleaned::Kept(f.path, f.bytes, why),
            _ => Cleaned::Kept(
                f.path,
                f.bytes,
                format!("it holds no valid owner marker ({OWNER_FILE}), so nothing says b_eff_io made it"),
            ),
        })
        .collect())
}

/// The `--clean DIR` command: cleans, prints one line per run directory and a total on
/// standard output; returns the exit code (0, or 1 when `dir` cannot be read or a removal
/// failed).
pub fn clean_command(dir: &Path) -> i32 {
    let outcome = match clean(dir, &host_name(), Path::new("/proc")) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("b_eff_io: error: --clean: {e}");
            return 1;
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
            Cleaned::Kept(_, _, why) => {
                kept += 1;
                failed |= why.contains("cannot remove");
            }
        }
    }
    text += &format!(
        "b_eff_io: --clean '{}': removed {removed} run director{} ({}), kept {kept}\n",
        dir.display(),
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

    fn scratch(name: &str) -> PathBuf {
        let base =
            std::env::temp_dir().join(format!("beffio-rundir-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        base
    }

    #[test]
    fn a_removal_cut_short_keeps_the_owner_marker() {
        // A mount point in the run directory cannot be unlinked (EBUSY): the removal stops
        // there, as a SIGKILL during it would, and the marker must still be in place.
        if !std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0) {
            return mpitest::unavailable("mounting a tmpfs inside a run directory needs root");
        }
        let base = scratch("cut");
        let dir = create(&base, "t", 1).unwrap();
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
        let removed = remove(&dir);
        let marker_left = dir.join(OWNER_FILE).exists();
        let _ = std::process::Command::new("umount").arg(&busy).status();
        assert!(removed.is_err(), "{removed:?}");
        assert!(marker_left, "the marker went before the rest");
        remove(&dir).unwrap();
        assert!(!dir.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn created_fresh_and_removed() {
        let base = scratch("fresh");
        let dir = create(&base, "t", 1).unwrap();
        assert!(dir.is_dir() && dir.is_absolute());
        assert!(create(&base, "t", 1)
            .unwrap_err()
            .contains("already exists"));
        std::fs::write(dir.join("f"), b"x").unwrap();
        remove(&dir).unwrap();
        assert!(!dir.exists());
        let err = create(&base.join("missing"), "t", 1).unwrap_err();
        assert!(err.contains("missing") && err.contains("ENOENT"), "{err}");
        std::fs::write(base.join("file"), b"x").unwrap();
        assert!(create(&base.join("file"), "t", 1)
            .unwrap_err()
            .contains("not a directory"));
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn the_marker_names_this_process_and_reads_back() {
        let base = scratch("marker");
        let dir = create(&base, "t", 7).unwrap();
        let text = std::fs::read_to_string(dir.join(OWNER_FILE)).unwrap();
        let owner = Owner::parse(&text).unwrap();
        assert_eq!(owner.pid, std::process::id());
        assert_eq!(owner.host, host_name());
        assert!(
            owner.start_ticks.is_some() && owner.boot_id.is_some(),
            "{text}"
        );
        assert_eq!(
            owner.liveness(&host_name(), Path::new("/proc")),
            Liveness::Alive
        );
        assert_eq!(Owner::parse("something else\npid=1\nhost=h\n"), None);
        assert_eq!(Owner::parse(&format!("{OWNER_HEADER}\nhost=h\n")), None);
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn start_ticks_survive_odd_command_names() {
        let stat =
            "4242 (a) b) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 1";
        assert_eq!(parse_stat(stat), Some(('S', 987_654)));
        assert_eq!(parse_stat("4242 (a) Z 1"), None);
    }

    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
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
        let marker = |pid: u32, host: &str| format!("{OWNER_HEADER}\npid={pid}\nhost={host}\n");
        let dead = fake(&base, "b_eff_io.1.1", Some(marker(dead_pid(), &here)));
        let alive = fake(
            &base,
            "b_eff_io.2.2",
            Some(marker(std::process::id(), &here)),
        );
        let bare = fake(&base, "b_eff_io.3.3", None);
        let elsewhere = fake(&base, "b_eff_io.4.4", Some(marker(1, "another-host")));
        let mine = fake(&base, "results", Some(marker(dead_pid(), &here)));
        let found = leftovers(&base, &here, Path::new("/proc")).unwrap();
        assert_eq!(found.len(), 4, "{found:?}");
        let line = leftover_line(&found[0], &base);
        assert!(
            line.contains(&dead.display().to_string())
                && line.contains("whose process is gone")
                && found[0].bytes >= 64 << 10
                && line.contains(&format!("{} bytes", found[0].bytes)),
            "{line}"
        );
        assert!(leftover_line(&found[2], &base).contains("without an owner marker"));
        let outcome = clean(&base, &here, Path::new("/proc")).unwrap();
        let text: Vec<String> = outcome.iter().map(|c| c.to_string()).collect();
        assert!(
            matches!(&outcome[0], Cleaned::Removed(p, _, _) if *p == dead),
            "{text:?}"
        );
        assert!(
            text[1].starts_with("kept") && text[1].contains("still runs"),
            "{text:?}"
        );
        assert!(text[2].starts_with("kept") && text[2].contains("no valid owner marker"));
        assert!(text[3].starts_with("kept") && text[3].contains("another-host"));
        assert!(!dead.exists() && alive.exists() && bare.exists() && elsewhere.exists());
        assert!(
            mine.exists(),
            "only directories named like run directories are looked at"
        );
        // A directory kept with --keep is kept, and said to be.
        let kept = fake(&base, "b_eff_io.5.5", Some(marker(dead_pid(), &here)));
        mark_kept(&kept).unwrap();
        let found = leftovers(&base, &here, Path::new("/proc")).unwrap();
        assert!(leftover_line(found.last().unwrap(), &base).contains("kept with --keep"));
        let outcome = clean(&base, &here, Path::new("/proc")).unwrap();
        assert!(
            matches!(outcome.last().unwrap(), Cleaned::Kept(p, _, why) if *p == kept && why.contains("--keep")),
            "{outcome:?}"
        );
        assert!(kept.exists());
        // DIR itself may be the run directory.
        let outcome = clean(&bare, &here, Path::new("/proc")).unwrap();
        assert!(outcome.is_empty(), "{outcome:?}");
        std::fs::write(bare.join(OWNER_FILE), marker(dead_pid(), &here)).unwrap();
        let outcome = clean(&bare, &here, Path::new("/proc")).unwrap();
        assert!(
            matches!(&outcome[..], [Cleaned::Removed(..)]),
            "{outcome:?}"
        );
        assert!(clean(&base.join("missing"), &here, Path::new("/proc")).is_err());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_reused_pid_or_a_reboot_means_gone() {
        let me = Owner::this_process();
        let proc_root = Path::new("/proc");
        let reused = Owner {
            start_ticks: me.start_ticks.map(|t| t + 1),
            ..me.clone()
        };
        assert!(
            matches!(reused.liveness(&me.host, proc_root), Liveness::Gone(w) if w.contains("another process"))
        );
        let rebooted = Owner {
            boot_id: Some("not-this-boot".into()),
            ..me.clone()
        };
        assert!(
            matches!(rebooted.liveness(&me.host, proc_root), Liveness::Gone(w) if w.contains("restarted"))
        );
    }

    #[test]
    fn the_working_directory_comes_back() {
        let base = scratch("workdir");
        let before = std::env::current_dir().unwrap();
        {
            let _inside = Workdir::enter(&base).unwrap();
            assert_eq!(
                std::env::current_dir().unwrap(),
                base.canonicalize().unwrap()
            );
        }
        assert_eq!(std::env::current_dir().unwrap(), before);
        assert!(Workdir::enter(&base.join("missing"))
            .unwrap_err()
            .contains("ENOENT"));
        assert_eq!(std::env::current_dir().unwrap(), before);
        std::fs::remove_dir_all(&base).unwrap();
    }
}
