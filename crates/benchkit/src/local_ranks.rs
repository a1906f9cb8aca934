//! The other ranks of this job on this host, as the kernel shows them: what a rank that
//! waits for every other (inside `MPI_Init`, at the end of the run) can say about the ones
//! that do not come, without MPI.
//!
//! The ranks a launcher starts on a host are children of one process (Open MPI's `orted`
//! or `mpirun`, hydra's `hydra_pmi_proxy`, Slurm's `slurmstepd`): this rank's siblings that
//! carry a launcher's rank variable are the job's ranks here. Their state in
//! `/proc/PID/stat` tells a rank that cannot come (stopped by a signal or a debugger, stuck
//! in the kernel) from one that runs. A rank that has exited is its launcher's to report
//! (its environment, and so its number, is gone with it). Ranks on other hosts are not
//! seen from here.

use std::io::Read;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

/// The variables a launcher gives each rank its number in (Open MPI, PMI, PMIx, Slurm).
const RANK_VARIABLES: [&str; 4] = [
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "PMIX_RANK",
    "SLURM_PROCID",
];

/// The most of a process's environment read: a launcher's variables come first and are
/// short; a huge environment is not read to its end.
const ENVIRON_LIMIT: u64 = 1 << 20;

/// How long the look may take: `/proc` of a process stuck in the kernel can block, and a
/// watchdog must end the job all the same.
const LOOK_LIMIT: Duration = Duration::from_secs(1);

/// Why a rank here cannot take part, as its process state says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Absence {
    /// `T`: stopped by a signal (SIGSTOP, SIGTSTP) — a frozen node looks the same.
    Stopped,
    /// `t`: stopped by a debugger.
    Traced,
    /// `D`: waiting uninterruptibly in the kernel (a file system, a device).
    InKernel,
}

impl Absence {
    fn from_state(state: char) -> Option<Absence> {
        match state {
            'T' => Some(Absence::Stopped),
            't' => Some(Absence::Traced),
            'D' => Some(Absence::InKernel),
            _ => None,
        }
    }

    fn words(self) -> &'static str {
        match self {
            Absence::Stopped => "is stopped (a signal, or its node froze)",
            Absence::Traced => "is stopped by a debugger",
            Absence::InKernel => "waits in the kernel (a file system or a device)",
        }
    }
}

/// A rank of this job on this host that cannot take part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Absent {
    /// Its number, as its launcher gave it.
    pub rank: u64,
    /// Its process.
    pub pid: u32,
    /// Why.
    pub absence: Absence,
}

/// The ranks of this job on this host that cannot take part (this process's siblings
/// with a launcher's rank number, in a state that keeps them away), by rank; empty when
/// all run, when nothing could be read, or after [`LOOK_LIMIT`].
pub fn absent() -> Vec<Absent> {
    let (tx, rx) = mpsc::channel();
    let looked = std::thread::Builder::new()
        .name("local-ranks".into())
        .spawn(move || {
            let me = std::process::id();
            let proc = Path::new("/proc");
            let found = stat(proc, me)
                .map(|(parent, _)| absent_children(proc, parent, me))
                .unwrap_or_default();
            let _ = tx.send(found);
        });
    match looked {
        Ok(_) => rx.recv_timeout(LOOK_LIMIT).unwrap_or_default(),
        Err(_) => Vec::new(),
    }
}

/// What a waiting rank adds to its STALL line: `on this host, rank 1 (pid 906) is
/// stopped (…)`; `None` when no rank here is known to be absent.
pub fn said(absent: &[Absent]) -> Option<String> {
    if absent.is_empty() {
        return None;
    }
    let each: Vec<String> = absent
        .iter()
        .map(|a| format!("rank {} (pid {}) {}", a.rank, a.pid, a.absence.words()))
        .collect();
    Some(format!("on this host, {}", each.join("; ")))
}

/// The children of `parent` under `proc` (but `me`) that carry a launcher's rank number
/// and are in a state that keeps them away, by rank.
fn absent_children(proc: &Path, parent: u32, me: u32) -> Vec<Absent> {
    let Ok(entries) = std::fs::read_dir(proc) else {
        return Vec::new();
    };
    let mut found: Vec<Absent> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter_map(|pid| {
            let (ppid, state) = stat(proc, pid)?;
            if ppid != parent {
                return None;
            }
            let absence = Absence::from_state(state)?;
            let rank = rank_of(proc, pid)?;
            Some(Absent { rank, pid, absence })
        })
        .collect();
    found.sort_by_key(|a| a.rank);
    found
}

/// A process's parent and state from `/proc/PID/stat` (`pid (comm) S ppid …`; the
/// command name may hold spaces and parentheses, so the fields are read after its last `)`).
fn stat(proc: &Path, pid: u32) -> Option<(u32, char)> {
    let text = std::fs::read_to_string(proc.join(pid.to_string()).join("stat")).ok()?;
    let (_, rest) = text.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((ppid, state))
}

/// The launcher's rank number in a process's environment (readable for the same user).
fn rank_of(proc: &Path, pid: u32) -> Option<u64> {
    let file = std::fs::File::open(proc.join(pid.to_string()).join("environ")).ok()?;
    let mut bytes = Vec::new();
    file.take(ENVIRON_LIMIT).read_to_end(&mut bytes).ok()?;
    bytes.split(|&b| b == 0).find_map(|entry| {
        let text = std::str::from_utf8(entry).ok()?;
        let (name, value) = text.split_once('=')?;
        RANK_VARIABLES
            .contains(&name)
            .then(|| value.parse().ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Child, Command};

    /// Child processes, killed (stopped ones too) however the test ends.
    struct Children(Vec<Child>);

    impl Children {
        fn spawn(&mut self, rank: Option<&str>) -> u32 {
            let mut c = Command::new("sleep");
            c.arg("30");
            if let Some(r) = rank {
                c.env("PMI_RANK", r);
            }
            let child = c.spawn().expect("sleep runs");
            let pid = child.id();
            self.0.push(child);
            pid
        }
    }

    impl Drop for Children {
        fn drop(&mut self) {
            for c in &mut self.0 {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }

    fn signal(pid: u32, name: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{name}"), &pid.to_string()])
            .status()
            .expect("kill runs")
            .success();
        assert!(ok, "kill -{name} {pid}");
    }

    /// Waits until the kernel shows process `pid` in `state`.
    fn until_state(pid: u32, state: char) {
        for _ in 0..200 {
            if stat(Path::new("/proc"), pid).is_some_and(|(_, s)| s == state) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("process {pid} never reached state {state}");
    }

    #[test]
    fn a_stopped_rank_is_named_and_running_ones_and_strangers_are_not() {
        let me = std::process::id();
        let mut children = Children(Vec::new());
        let running = children.spawn(Some("2"));
        let stopped = children.spawn(Some("1"));
        let stranger = children.spawn(None);
        for pid in [stopped, stranger] {
            signal(pid, "STOP");
            until_state(pid, 'T');
        }
        // This test process is their parent, as a launcher's daemon is the ranks'.
        let found = absent_children(Path::new("/proc"), me, me);
        let ours: Vec<&Absent> = found
            .iter()
            .filter(|a| [running, stopped, stranger].contains(&a.pid))
            .collect();
        let expected = Absent {
            rank: 1,
            pid: stopped,
            absence: Absence::Stopped,
        };
        assert_eq!(ours, [&expected]);
        let line = said(&[expected]).unwrap();
        assert_eq!(
            line,
            format!(
                "on this host, rank 1 (pid {stopped}) is stopped (a signal, or its node froze)"
            )
        );
    }

    #[test]
    fn nothing_absent_says_nothing() {
        assert_eq!(said(&[]), None);
    }

    #[test]
    fn a_command_name_with_parentheses_and_spaces_is_read_past() {
        let dir = tempfile::tempdir().unwrap();
        let pid_dir = dir.path().join("42");
        std::fs::create_dir(&pid_dir).unwrap();
        std::fs::write(pid_dir.join("stat"), "42 (a) b (c) T 7 42 42 0 -1\n").unwrap();
        assert_eq!(stat(dir.path(), 42), Some((7, 'T')));
    }
}
