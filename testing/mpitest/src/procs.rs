//! The machine's processes, as the test harnesses that start daemons (netns, slurmtest)
//! find and stop them: by command line, by mount namespace, with `kill`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Every process for which `wanted(pid)` holds, this one aside.
pub fn processes_where(wanted: impl Fn(u32) -> bool) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id();
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me && wanted(pid))
        .collect()
}

/// The raw command line of `pid` (arguments separated by NUL), empty when it is gone.
pub fn cmdline(pid: u32) -> Vec<u8> {
    fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default()
}

/// The mount namespace of `pid` (the link target of `/proc/PID/ns/mnt`).
pub fn mount_namespace(pid: u32) -> Option<PathBuf> {
    fs::read_link(format!("/proc/{pid}/ns/mnt")).ok()
}

/// Every process whose mount namespace is `ns`.
pub fn processes_in_mount_namespace(ns: &Path) -> Vec<u32> {
    processes_where(|pid| mount_namespace(pid).is_some_and(|link| link == ns))
}

/// Sends signal `sig` (`TERM`, `KILL`, …) to `pid`; a process already gone is no error.
pub fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .stderr(Stdio::null())
        .status();
}

/// The processes running the program `exe` whose command line mentions `needle` (a unique
/// path of the job): the ranks of one job, however the launcher started them.
pub fn ranks_of(exe: &Path, needle: &str) -> Vec<u32> {
    let exe = exe.canonicalize().unwrap_or_else(|_| exe.to_path_buf());
    processes_where(|pid| {
        fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|e| e == exe)
            && String::from_utf8_lossy(&cmdline(pid)).contains(needle)
    })
}

/// Rank 0 of a job (the process that holds the reservation `marker` of its output file)
/// and the other rank of a 2-rank job running `exe` with `needle` in its command line.
pub fn two_ranks(marker: &Path, exe: &Path, needle: &str) -> (u32, u32) {
    let text = fs::read_to_string(marker).unwrap_or_else(|e| panic!("{}: {e}", marker.display()));
    let rank0 = text
        .lines()
        .find_map(|l| l.strip_prefix("pid ")?.trim().parse::<u32>().ok())
        .unwrap_or_else(|| panic!("no pid in {text}"));
    let rank1 = ranks_of(exe, needle)
        .into_iter()
        .find(|&p| p != rank0)
        .expect("the other rank's process");
    (rank0, rank1)
}
