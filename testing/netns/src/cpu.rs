//! A namespace host starved of CPU: the processes of one program on that host are moved,
//! as they appear, into a CPU cgroup whose quota holds them to a share of one core (cgroup
//! v1's `cpu.cfs_quota_us`, or v2's `cpu.max`), as a node whose cores other work took.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The quota's period, microseconds.
const PERIOD_US: u32 = 100_000;

/// Holds the processes named `comm` in the network namespace of `host` to `percent` of a
/// core while it lives; the cgroup is removed when it is dropped.
#[derive(Debug)]
pub struct Starved {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<usize>>,
    group: PathBuf,
}

impl Starved {
    /// Starts watching for the processes; the reason when no CPU cgroup can be made here.
    pub fn start(host: &str, comm: &str, percent: u32) -> Result<Starved, String> {
        let netns = std::fs::metadata(Path::new("/run/netns").join(host))
            .map_err(|e| format!("no network namespace {host}: {e}"))?
            .ino();
        let group = make_group(
            &format!("xylem-starve-{host}-{}", std::process::id()),
            percent,
        )?;
        let stop = Arc::new(AtomicBool::new(false));
        let (flag, into, comm) = (stop.clone(), group.join("cgroup.procs"), comm.to_string());
        let thread = std::thread::spawn(move || {
            let mut moved = std::collections::HashSet::new();
            while !flag.load(Ordering::Relaxed) {
                for pid in pids_of(&comm, netns) {
                    if !moved.contains(&pid) && std::fs::write(&into, pid.to_string()).is_ok() {
                        moved.insert(pid);
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            moved.len()
        });
        Ok(Starved {
            stop,
            thread: Some(thread),
            group,
        })
    }

    /// Stops watching; returns how many processes were held.
    pub fn finish(mut self) -> usize {
        self.halt()
    }

    fn halt(&mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        let held = self.thread.take().map_or(0, |t| t.join().unwrap_or(0));
        // Empty once its processes have exited.
        let _ = std::fs::remove_dir(&self.group);
        held
    }
}

impl Drop for Starved {
    fn drop(&mut self) {
        self.halt();
    }
}

/// A CPU cgroup holding its processes to `percent` of a core.
fn make_group(name: &str, percent: u32) -> Result<PathBuf, String> {
    let quota = PERIOD_US / 100 * percent;
    let v1 = Path::new("/sys/fs/cgroup/cpu");
    if v1.join("cpu.cfs_quota_us").exists() {
        let group = v1.join(name);
        std::fs::create_dir(&group).map_err(|e| format!("{}: {e}", group.display()))?;
        std::fs::write(group.join("cpu.cfs_period_us"), PERIOD_US.to_string())
            .and_then(|()| std::fs::write(group.join("cpu.cfs_quota_us"), quota.to_string()))
            .map_err(|e| format!("{}: {e}", group.display()))?;
        return Ok(group);
    }
    let v2 = Path::new("/sys/fs/cgroup");
    if v2.join("cgroup.controllers").exists() {
        let _ = std::fs::write(v2.join("cgroup.subtree_control"), "+cpu");
        let group = v2.join(name);
        std::fs::create_dir(&group).map_err(|e| format!("{}: {e}", group.display()))?;
        std::fs::write(group.join("cpu.max"), format!("{quota} {PERIOD_US}"))
            .map_err(|e| format!("{}/cpu.max: {e}", group.display()))?;
        return Ok(group);
    }
    Err("no CPU cgroup controller (neither cgroup v1's cpu nor v2's cpu.max)".into())
}

/// The processes named `comm` whose network namespace is inode `netns`.
fn pids_of(comm: &str, netns: u64) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let dir = Path::new("/proc").join(pid.to_string());
            std::fs::read_to_string(dir.join("comm")).is_ok_and(|c| c.trim_end() == comm)
                && std::fs::metadata(dir.join("ns/net")).is_ok_and(|m| m.ino() == netns)
        })
        .collect()
}
