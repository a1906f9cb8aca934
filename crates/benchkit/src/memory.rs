//! How much memory the ranks of each node may take, checked before a benchmark allocates.
//!
//! A limit per rank is the wrong question: the ranks of one node share its memory and
//! the memory cgroup of their job. So every rank says what it is about to allocate, rank 0
//! sums the figures per node (ranks are grouped by their processor name) and compares each
//! sum with what the node can give:
//!
//! - `MemAvailable` of `/proc/meminfo` (memory that can be had without swapping), and
//! - the memory cgroup limit of the ranks: cgroup v2 `memory.max`, cgroup v1
//!   `memory.limit_in_bytes`, of the cgroup named in `/proc/self/cgroup` and of each of its
//!   ancestors (a parent's limit binds its children too); the smallest one counts. Ranks in
//!   different cgroups of one node are summed per cgroup.
//!
//! Everything but [`agree_fits`] and [`gather`] is plain data in, plain data out: the files
//! are read below a root directory that tests point at fixtures.

use crate::gather_strings;
use mpi::topology::Communicator;
use mpi::traits::Root;
use std::fmt;
use std::path::{Path, PathBuf};

/// A cgroup limit at or above this many bytes means "no limit" (cgroup v1 writes
/// `PAGE_COUNTER_MAX` pages, 9223372036854771712 bytes on x86-64, where v2 writes `max`).
pub const UNLIMITED: u64 = 1 << 60;

/// A value of a `/proc/meminfo` line, in bytes: `key` is e.g. `"MemAvailable"`.
pub fn parse_meminfo(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (name, rest) = line.split_once(':')?;
        if name.trim() != key {
            return None;
        }
        let mut words = rest.split_whitespace();
        let value: u64 = words.next()?.parse().ok()?;
        match words.next() {
            Some("kB") => value.checked_mul(1024),
            None => Some(value),
            Some(_) => None,
        }
    })
}

/// The contents of a `memory.max` (v2) or `memory.limit_in_bytes` (v1) file: `None` for
/// no limit (`max`, or [`UNLIMITED`] and above) and for text that is not a number.
pub fn parse_cgroup_limit(text: &str) -> Option<u64> {
    let text = text.trim();
    if text == "max" {
        return None;
    }
    text.parse::<u64>().ok().filter(|&b| b < UNLIMITED)
}

/// The cgroups of this process that can limit its memory, from the text of
/// `/proc/self/cgroup`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnCgroups {
    /// The unified (v2) hierarchy's path: the `0::PATH` line.
    pub v2: Option<String>,
    /// The v1 memory controller's path: the `N:…memory…:PATH` line.
    pub v1_memory: Option<String>,
}

/// Reads the lines of `/proc/self/cgroup` (`ID:CONTROLLERS:PATH`).
pub fn parse_own_cgroups(text: &str) -> OwnCgroups {
    let mut own = OwnCgroups::default();
    for line in text.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if id == "0" && controllers.is_empty() {
            own.v2 = Some(path.to_string());
        } else if controllers.split(',').any(|c| c == "memory") {
            own.v1_memory = Some(path.to_string());
        }
    }
    own
}

/// A memory cgroup limit and the file it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupLimit {
    /// The limit in bytes.
    pub bytes: u64,
    /// The `memory.max` or `memory.limit_in_bytes` file that set it.
    pub file: PathBuf,
}

/// `top/cgroup` and each of its ancestors up to `top`, innermost first.
fn ancestors_within(top: &Path, cgroup: &str) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut path = PathBuf::from(cgroup.trim_start_matches('/'));
    loop {
        dirs.push(top.join(&path));
        if !path.pop() {
            break;
        }
    }
    dirs
}

/// The smallest memory limit on this process's cgroup or any of its ancestors, read
/// below `root` (`/` on a real host): `root/sys/fs/cgroup/PATH/memory.max` for v2, and
/// `root/sys/fs/cgroup/memory/PATH/memory.limit_in_bytes` for v1, where PATH comes from
/// `proc_self_cgroup` (the text of `/proc/self/cgroup`). Directories that do not exist (a
/// container sees its own cgroup as the mount's root) are skipped. `None`: no limit.
pub fn cgroup_limit(root: &Path, proc_self_cgroup: &str) -> Option<CgroupLimit> {
    let own = parse_own_cgroups(proc_self_cgroup);
    let base = root.join("sys/fs/cgroup");
    let mut files = Vec::new();
    if let Some(path) = &own.v2 {
        files.extend(
            ancestors_within(&base, path)
                .into_iter()
                .map(|d| d.join("memory.max")),
        );
    }
    if let Some(path) = &own.v1_memory {
        files.extend(
            ancestors_within(&base.join("memory"), path)
                .into_iter()
                .map(|d| d.join("memory.limit_in_bytes")),
        );
    }
    files
        .into_iter()
        .filter_map(|file| {
            let bytes = parse_cgroup_limit(&std::fs::read_to_string(&file).ok()?)?;
            Some(CgroupLimit { bytes, file })
        })
        .min_by_key(|l| l.bytes)
}

/// What one node offers a process, as seen by that process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeMemory {
    /// `MemAvailable` in bytes, when `/proc/meminfo` could be read.
    pub available: Option<u64>,
    /// The binding memory cgroup limit, if any.
    pub cgroup: Option<CgroupLimit>,
}

impl NodeMemory {
    /// Reads `root/proc/meminfo`, `root/proc/self/cgroup` and the cgroup files below
    /// `root` (see [`cgroup_limit`]).
    pub fn read(root: &Path) -> NodeMemory {
        let meminfo = std::fs::read_to_string(root.join("proc/meminfo")).unwrap_or_default();
        let own = std::fs::read_to_string(root.join("proc/self/cgroup")).unwrap_or_default();
        NodeMemory {
            available: parse_meminfo(&meminfo, "MemAvailable"),
            cgroup: cgroup_limit(root, &own),
        }
    }
}

/// One rank's request: the bytes it is about to allocate on its host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankNeed {
    /// The rank's host (its MPI processor name).
    pub host: String,
    /// Bytes it will allocate.
    pub need: u64,
    /// What its node offers, as it sees it.
    pub memory: NodeMemory,
}

/// A node that cannot give its ranks what they ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shortage {
    /// The host.
    pub host: String,
    /// How many ranks share the figure.
    pub ranks: usize,
    /// What they need together, in bytes.
    pub need: u64,
    /// The node's `MemAvailable`, if known.
    pub available: Option<u64>,
    /// The smallest cgroup limit over those ranks, if any.
    pub cgroup: Option<CgroupLimit>,
}

/// `bytes` in binary units with one decimal: `512 B`, `3.0 MiB`, `1.8 GiB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

impl fmt::Display for Shortage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let available = match self.available {
            Some(b) => format!("MemAvailable is {} ({b} bytes)", format_bytes(b)),
            None => "MemAvailable is unknown".to_string(),
        };
        let cgroup = match &self.cgroup {
            Some(l) => format!(
                "the memory cgroup limit is {} ({} bytes, {})",
                format_bytes(l.bytes),
                l.bytes,
                l.file.display()
            ),
            None => "no memory cgroup limit applies".to_string(),
        };
        write!(
            f,
            "host {}: its {} rank{} need {} ({} bytes) for their buffers, more than the host \
             can give: {available}, and {cgroup}",
            self.host,
            self.ranks,
            if self.ranks == 1 { "" } else { "s" },
            format_bytes(self.need),
            self.need
        )
    }
}

/// Sums the needs per host and compares each sum with the smallest `MemAvailable` any of
/// its ranks reported, and the needs per (host, cgroup limit file) with that limit. Returns
/// the first host, in order of first appearance, whose ranks ask for more than it gives.
/// Linear in the ranks (maps keyed by host and by limit file): rank 0 runs it for the
/// whole job while every other rank waits.
pub fn shortage(ranks: &[RankNeed]) -> Option<Shortage> {
    use std::collections::HashMap;
    // The ranks of each host, hosts in order of first appearance.
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut hosts: Vec<Vec<&RankNeed>> = Vec::new();
    for r in ranks {
        let i = *index.entry(r.host.as_str()).or_insert_with(|| {
            hosts.push(Vec::new());
            hosts.len() - 1
        });
        hosts[i].push(r);
    }
    for on_host in hosts {
        let host = on_host[0].host.as_str();
        let need = on_host
            .iter()
            .fold(0u64, |sum, r| sum.saturating_add(r.need));
        let available = on_host.iter().filter_map(|r| r.memory.available).min();
        let cgroup = on_host
            .iter()
            .filter_map(|r| r.memory.cgroup.clone())
            .min_by_key(|l| l.bytes);
        let short = |count: usize, need: u64| Shortage {
            host: host.to_string(),
            ranks: count,
            need,
            available,
            cgroup: cgroup.clone(),
        };
        if available.is_some_and(|a| need > a) {
            return Some(short(on_host.len(), need));
        }
        // Per cgroup: ranks under the same limit file share it.
        let mut shared: HashMap<&Path, (usize, u64)> = HashMap::new();
        for r in &on_host {
            if let Some(limit) = &r.memory.cgroup {
                let e = shared.entry(limit.file.as_path()).or_insert((0, 0));
                *e = (e.0 + 1, e.1.saturating_add(r.need));
            }
        }
        for r in &on_host {
            let Some(limit) = &r.memory.cgroup else {
                continue;
            };
            let (count, sum) = shared[limit.file.as_path()];
            if sum > limit.bytes {
                return Some(Shortage {
                    cgroup: Some(limit.clone()),
                    ..short(count, sum)
                });
            }
        }
    }
    None
}

const FIELDS: usize = 5;

fn encode(mine: &RankNeed) -> [u64; FIELDS] {
    [
        mine.need,
        u64::from(mine.memory.available.is_some()),
        mine.memory.available.unwrap_or(0),
        u64::from(mine.memory.cgroup.is_some()),
        mine.memory.cgroup.as_ref().map_or(0, |l| l.bytes),
    ]
}

/// Collective: gathers every rank's [`RankNeed`] on `root`, in rank order (`Some` there,
/// `None` elsewhere).
pub fn gather<C: Communicator>(comm: &C, root: i32, mine: &RankNeed) -> Option<Vec<RankNeed>> {
    let hosts = gather_strings(comm, root, &mine.host);
    let file = mine
        .memory
        .cgroup
        .as_ref()
        .map(|l| l.file.display().to_string())
        .unwrap_or_default();
    let files = gather_strings(comm, root, &file);
    let numbers = encode(mine);
    let root_process = comm.process_at_rank(root);
    if comm.rank() != root {
        root_process.gather_into(&numbers[..]);
        return None;
    }
    let size = usize::try_from(comm.size()).unwrap_or(0);
    let mut all = vec![0u64; FIELDS * size];
    root_process.gather_into_root(&numbers[..], &mut all[..]);
    let (hosts, files) = (hosts.unwrap_or_default(), files.unwrap_or_default());
    Some(
        all.chunks(FIELDS)
            .zip(hosts.into_iter().zip(files))
            .map(|(n, (host, file))| RankNeed {
                host,
                need: n[0],
                memory: NodeMemory {
                    available: (n[1] != 0).then_some(n[2]),
                    cgroup: (n[3] != 0).then(|| CgroupLimit {
                        bytes: n[4],
                        file: PathBuf::from(file),
                    }),
                },
            })
            .collect(),
    )
}

/// Collective: every rank passes the bytes it is about to allocate; this node's figures
/// are read from `/`, rank 0 checks every node ([`shortage`]) and every rank returns the
/// same verdict: `Err` with the message naming the host and both figures.
pub fn agree_fits<C: Communicator>(comm: &C, need: u64) -> Result<(), String> {
    let mine = RankNeed {
        host: crate::processor_name(),
        need,
        memory: NodeMemory::read(Path::new("/")),
    };
    let verdict = gather(comm, 0, &mine)
        .and_then(|all| shortage(&all))
        .map(|s| s.to_string())
        .unwrap_or_default();
    let text = broadcast_string(comm, 0, &verdict);
    if text.is_empty() {
        Ok(())
    } else {
        Err(text)
    }
}

/// Collective: `text` of rank `root` on every rank.
pub fn broadcast_string<C: Communicator>(comm: &C, root: i32, text: &str) -> String {
    let root_process = comm.process_at_rank(root);
    let mut len = text.len() as u64;
    root_process.broadcast_into(&mut len);
    let mut buf = if comm.rank() == root {
        text.as_bytes().to_vec()
    } else {
        vec![0u8; usize::try_from(len).unwrap_or(0)]
    };
    if !buf.is_empty() {
        root_process.broadcast_into(&mut buf[..]);
    }
    String::from_utf8_lossy(&buf).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MEMINFO: &str = "MemTotal:       24683568 kB\nMemFree:        1000 kB\n\
                           MemAvailable:   23984008 kB\nHugePages_Total:       0\n";

    #[test]
    fn meminfo_values_are_bytes() {
        assert_eq!(
            parse_meminfo(MEMINFO, "MemAvailable"),
            Some(23_984_008 * 1024)
        );
        assert_eq!(parse_meminfo(MEMINFO, "MemTotal"), Some(24_683_568 * 1024));
        assert_eq!(parse_meminfo(MEMINFO, "HugePages_Total"), Some(0));
        assert_eq!(parse_meminfo(MEMINFO, "Mem"), None);
        assert_eq!(parse_meminfo("MemAvailable: lots kB", "MemAvailable"), None);
        assert_eq!(
            parse_meminfo("MemAvailable: 99999999999999999 kB", "MemAvailable"),
            None,
            "an overflow is no figure"
        );
    }

    #[test]
    fn cgroup_limits_parse_and_unlimited_is_none() {
        assert_eq!(parse_cgroup_limit("2147483648\n"), Some(2 << 30));
        assert_eq!(parse_cgroup_limit("max\n"), None);
        assert_eq!(parse_cgroup_limit("9223372036854771712\n"), None);
        assert_eq!(parse_cgroup_limit("junk"), None);
    }

    #[test]
    fn own_cgroups_of_v1_v2_and_hybrid_hosts() {
        let v2 = parse_own_cgroups("0::/system.slice/slurmstepd.scope/job_42/step_0\n");
        assert_eq!(
            v2.v2.as_deref(),
            Some("/system.slice/slurmstepd.scope/job_42/step_0")
        );
        assert_eq!(v2.v1_memory, None);
        let v1 =
            parse_own_cgroups("9:name=systemd:/\n4:memory:/process_api/7afd\n3:cpuset:/\n0::/\n");
        assert_eq!(v1.v1_memory.as_deref(), Some("/process_api/7afd"));
        assert_eq!(v1.v2.as_deref(), Some("/"));
        let joint = parse_own_cgroups("5:cpu,memory:/slurm/uid_0/job_7\n");
        assert_eq!(joint.v1_memory.as_deref(), Some("/slurm/uid_0/job_7"));
    }

    fn fixture(name: &str) -> PathBuf {
        let root =
            std::env::temp_dir().join(format!("benchkit-memory-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        root
    }

    fn write(root: &Path, file: &str, text: &str) {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn the_smallest_limit_of_the_cgroup_and_its_ancestors_binds() {
        let root = fixture("v2");
        write(&root, "sys/fs/cgroup/memory.max", "max\n");
        write(&root, "sys/fs/cgroup/job_42/memory.max", "4294967296\n");
        write(&root, "sys/fs/cgroup/job_42/step_0/memory.max", "max\n");
        let own = "0::/job_42/step_0\n";
        let limit = cgroup_limit(&root, own).unwrap();
        assert_eq!(limit.bytes, 4 << 30);
        assert_eq!(limit.file, root.join("sys/fs/cgroup/job_42/memory.max"));
        write(&root, "proc/meminfo", MEMINFO);
        write(&root, "proc/self/cgroup", own);
        let node = NodeMemory::read(&root);
        assert_eq!(node.available, Some(23_984_008 * 1024));
        assert_eq!(node.cgroup, Some(limit));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn v1_limits_and_a_container_that_sees_its_cgroup_as_the_root() {
        let root = fixture("v1");
        write(
            &root,
            "sys/fs/cgroup/memory/memory.limit_in_bytes",
            "9223372036854771712\n",
        );
        // The path in /proc/self/cgroup does not exist below the mount: only the root
        // is there, and it has no limit.
        assert_eq!(cgroup_limit(&root, "4:memory:/process_api/7afd\n"), None);
        write(
            &root,
            "sys/fs/cgroup/memory/memory.limit_in_bytes",
            "1073741824\n",
        );
        let limit = cgroup_limit(&root, "4:memory:/process_api/7afd\n").unwrap();
        assert_eq!(limit.bytes, 1 << 30);
        assert_eq!(
            NodeMemory::read(&root.join("missing")),
            NodeMemory::default()
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    fn rank(host: &str, need: u64, available: u64, limit: Option<(u64, &str)>) -> RankNeed {
        RankNeed {
            host: host.into(),
            need,
            memory: NodeMemory {
                available: Some(available),
                cgroup: limit.map(|(bytes, file)| CgroupLimit {
                    bytes,
                    file: file.into(),
                }),
            },
        }
    }

    #[test]
    fn needs_are_summed_per_node() {
        const G: u64 = 1 << 30;
        // Each rank alone fits, two on one node do not.
        let ranks = [
            rank("a", 3 * G, 10 * G, None),
            rank("b", 3 * G, 5 * G, None),
            rank("b", 3 * G, 5 * G, None),
        ];
        let s = shortage(&ranks).unwrap();
        assert_eq!((s.host.as_str(), s.ranks, s.need), ("b", 2, 6 * G));
        let text = s.to_string();
        assert!(text.contains("host b: its 2 ranks need 6.0 GiB"), "{text}");
        assert!(text.contains("MemAvailable is 5.0 GiB"), "{text}");
        assert!(text.contains("no memory cgroup limit"), "{text}");
        assert_eq!(shortage(&ranks[..2]), None);
    }

    #[test]
    fn the_cgroup_limit_binds_below_mem_available_and_per_cgroup() {
        const G: u64 = 1 << 30;
        let job = Some((4 * G, "/sys/fs/cgroup/job/memory.max"));
        let ranks = [
            rank("a", 3 * G, 100 * G, job),
            rank("a", 3 * G, 100 * G, job),
        ];
        let s = shortage(&ranks).unwrap();
        let text = s.to_string();
        assert!(
            text.contains("MemAvailable is 100.0 GiB")
                && text.contains("memory cgroup limit is 4.0 GiB")
                && text.contains("/sys/fs/cgroup/job/memory.max"),
            "{text}"
        );
        // One cgroup per task: each task's own limit holds its own buffers.
        let ranks = [
            rank("a", 3 * G, 100 * G, Some((4 * G, "/cg/task_0/memory.max"))),
            rank("a", 3 * G, 100 * G, Some((4 * G, "/cg/task_1/memory.max"))),
        ];
        assert_eq!(shortage(&ranks), None);
        // Sums saturate instead of wrapping.
        let ranks = [rank("a", u64::MAX, 1, None), rank("a", u64::MAX, 1, None)];
        assert_eq!(shortage(&ranks).unwrap().need, u64::MAX);
    }

    #[test]
    fn byte_counts_read_in_binary_units() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(3 << 20), "3.0 MiB");
        assert_eq!(format_bytes(1_932_735_283), "1.8 GiB");
    }
}
