//! What a hostile user of a shared folder does, for the file-safety tests: a victim tree
//! whose bytes must survive, links planted at the names a writer might use, and a trace
//! of every file a program creates (`strace -f`), to check that each was created
//! exclusively and without following a link.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Whether this process runs as root (the threat is root writing where others can).
pub fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
}

/// A folder of files that belong to someone else: every byte must be the same after the
/// writer ran.
#[derive(Debug)]
pub struct Victim {
    /// The folder.
    pub dir: PathBuf,
    before: Vec<(PathBuf, Vec<u8>)>,
}

impl Victim {
    /// Makes `base/victim` with a file, a subfolder and a larger file in it.
    pub fn new(base: &Path) -> Victim {
        let dir = base.join("victim");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("passwd"), b"root:x:0:0:root:/root:/bin/bash\n").unwrap();
        std::fs::write(dir.join("sub/data"), vec![0x5au8; 100_000]).unwrap();
        let before = snapshot(&dir);
        Victim { dir, before }
    }

    /// The file a planted link points to.
    pub fn file(&self) -> PathBuf {
        self.dir.join("passwd")
    }

    /// A checksum of the whole tree (FNV-1a over names and bytes), for reports.
    pub fn checksum(&self) -> String {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for (path, bytes) in snapshot(&self.dir) {
            for b in path.to_string_lossy().bytes().chain(bytes) {
                hash ^= u64::from(b);
                hash = hash.wrapping_mul(0x0100_0000_01b3);
            }
        }
        format!("{hash:016x}")
    }

    /// Panics unless every file of the tree is there with the same bytes, and no file
    /// was added.
    pub fn assert_untouched(&self) {
        let now = snapshot(&self.dir);
        assert!(
            now == self.before,
            "the victim's files changed: before {:?}, after {:?}",
            summary(&self.before),
            summary(&now)
        );
    }
}

fn summary(files: &[(PathBuf, Vec<u8>)]) -> Vec<(String, usize)> {
    files
        .iter()
        .map(|(p, b)| (p.display().to_string(), b.len()))
        .collect()
}

/// Every file below `dir` (links and other non-regular entries recorded as such), with
/// its bytes, sorted.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            out.extend(snapshot(&path));
        } else if meta.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            out.push((path, bytes));
        } else {
            out.push((path, b"(not a regular file)".to_vec()));
        }
    }
    out.sort();
    out
}

/// The process ids the next `count` processes are likely to get (from the kernel's last
/// one), to plant links at names built from a PID as a hostile user would.
pub fn next_pids(count: u32) -> impl Iterator<Item = u32> {
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1000);
    (last + 1)..(last + 1 + count)
}

/// The user id of `nobody`: the other user of the tests that need one.
pub const NOBODY: u32 = 65534;

/// A folder `base/shared` of this process's user that others can write (`mode`, sticky
/// or not). Root's, in the tests that plant links of another user in it.
pub fn shared_folder(base: &Path, mode: u32) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let shared = base.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(mode)).unwrap();
    shared
}

/// Plants `shared/place`, a symbolic link to `target` owned by `uid`, as another user
/// would plant a parent folder (`ln -s ~bob/job /shared/place`); returns its path.
pub fn plant_parent(shared: &Path, target: &Path, uid: u32) -> PathBuf {
    let place = shared.join("place");
    std::os::unix::fs::symlink(target, &place).unwrap();
    std::os::unix::fs::lchown(&place, Some(uid), Some(uid)).unwrap();
    place
}

/// Plants, in `dir`, a symbolic link to `target` at each of `names`; returns how many.
pub fn plant_links(dir: &Path, names: impl IntoIterator<Item = String>, target: &Path) -> usize {
    names
        .into_iter()
        .filter(|n| std::os::unix::fs::symlink(target, dir.join(n)).is_ok())
        .count()
}

/// One file a traced program opened with `O_CREAT`.
#[derive(Debug, Clone)]
pub struct Creation {
    /// The file, as far as the trace shows it.
    pub path: PathBuf,
    /// The system call's line.
    pub line: String,
}

impl Creation {
    /// Whether it was created safely: exclusively and not through a link
    /// (`O_EXCL|O_NOFOLLOW`), or as an unnamed temporary file (`O_TMPFILE`).
    pub fn is_exclusive(&self) -> bool {
        (self.line.contains("O_EXCL") && self.line.contains("O_NOFOLLOW"))
            || self.line.contains("O_TMPFILE")
    }
}

/// Runs `command` under `strace -f` and returns its output and every file it (or any
/// process it started) opened with `O_CREAT` directly in `folder`. Fails the test when
/// strace is missing.
pub fn creations_in(command: &Command, folder: &Path) -> (Output, Vec<Creation>) {
    let log = std::env::temp_dir().join(format!(
        "mpitest-strace-{}-{}.log",
        std::process::id(),
        Instant::now().elapsed().as_nanos()
    ));
    let mut traced = Command::new("strace");
    traced
        .args([
            "-f",
            "-y",
            "-qq",
            "-e",
            "trace=open,openat,openat2,creat",
            "-o",
        ])
        .arg(&log)
        .arg(command.get_program())
        .args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(v) => traced.env(key, v),
            None => traced.env_remove(key),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        traced.current_dir(dir);
    }
    let output = traced
        .output()
        .unwrap_or_else(|e| panic!("cannot run strace (scripts/install-deps.sh installs it): {e}"));
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    let folder = folder
        .canonicalize()
        .unwrap_or_else(|_| folder.to_path_buf());
    let creations = text
        .lines()
        .filter(|l| l.contains("O_CREAT") || l.contains(" creat("))
        .filter_map(|l| created_path(l).map(|p| (p, l)))
        .filter(|(p, _)| p.parent() == Some(folder.as_path()))
        .map(|(path, line)| Creation {
            path,
            line: line.to_string(),
        })
        .collect();
    (output, creations)
}

/// The file an `open*` line of `strace -y` is about: the path of the descriptor it
/// returned (`= 3</dir/name>`), else the name, joined to its directory descriptor's path
/// (`AT_FDCWD</dir>`, `5</dir>`) when relative.
fn created_path(line: &str) -> Option<PathBuf> {
    if let Some((_, ret)) = line.rsplit_once(") = ") {
        if let (Some(a), Some(b)) = (ret.find('<'), ret.rfind('>')) {
            if a < b {
                return Some(PathBuf::from(&ret[a + 1..b]));
            }
        }
    }
    let open = line.find('(')?;
    let args = &line[open + 1..];
    let q1 = args.find('"')?;
    let q2 = q1 + 1 + args[q1 + 1..].find('"')?;
    let name = &args[q1 + 1..q2];
    if name.starts_with('/') {
        return Some(PathBuf::from(name));
    }
    let before = &args[..q1];
    match (before.find('<'), before.rfind('>')) {
        (Some(a), Some(b)) if a < b => Some(Path::new(&before[a + 1..b]).join(name)),
        _ => Some(PathBuf::from(name)),
    }
}

/// Waits for `child` at most `limit` and reads its standard error (piped): its exit code,
/// that text and the seconds waited. A child still running at `limit` is killed and the
/// test fails with what it wrote.
pub fn finish_within(
    child: &mut std::process::Child,
    limit: Duration,
) -> (Option<i32>, String, f64) {
    let started = Instant::now();
    let status = wait_at_most(child, limit);
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    let status = status.unwrap_or_else(|| panic!("the job hung:\n{stderr}"));
    (status.code(), stderr, started.elapsed().as_secs_f64())
}

/// Waits for `child` at most `limit`; kills it and returns `None` past that.
pub fn wait_at_most(
    child: &mut std::process::Child,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_lines_name_their_files() {
        assert_eq!(
            created_path(
                r#"12 openat(AT_FDCWD</tmp/x>, "rel.txt", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</tmp/x/rel.txt>"#
            ),
            Some(PathBuf::from("/tmp/x/rel.txt"))
        );
        assert_eq!(
            created_path(
                r#"12 openat(4</out>, ".a.tmp.1", O_WRONLY|O_CREAT|O_EXCL, 0666) = -1 EEXIST (File exists)"#
            ),
            Some(PathBuf::from("/out/.a.tmp.1"))
        );
    }

    #[test]
    fn a_plain_create_is_not_exclusive() {
        let dir = std::env::temp_dir().join(format!("mpitest-hostile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut sh = Command::new("sh");
        sh.arg("-c").arg("echo x > plain.txt").current_dir(&dir);
        let (output, made) = creations_in(&sh, &dir);
        assert!(output.status.success());
        assert_eq!(made.len(), 1, "{made:?}");
        assert!(!made[0].is_exclusive(), "{made:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
