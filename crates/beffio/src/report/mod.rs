//! Output formats: the text summary on stdout, the protocol file, the JSON document and
//! its CSV rows.

pub mod csv;
pub mod json;
pub mod protocol;
pub mod table;
pub mod text;
pub mod v21;

use crate::hints::Hints;
use crate::results::PartitionResult;
use crate::schedule::Access;
use crate::validity::cache_ratio;

/// What the header and the JSON say about the run besides the measurements.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunInfo {
    /// Program version.
    pub version: String,
    /// Start date and time (RFC 3339).
    pub date: String,
    /// Host name of rank 0.
    pub host: String,
    /// Processes in the job (N).
    pub processes: usize,
    /// Memory per process in bytes (M).
    pub memory_per_process: u64,
    /// MPART in bytes.
    pub mpart: u64,
    /// Scheduled time of the full partition in seconds (T).
    pub scheduled_time_s: f64,
    /// Partition sizes in run order.
    pub partitions: Vec<usize>,
    /// The `--path` directory.
    pub path: String,
    /// Memory that could cache the files: MemTotal × nodes, in bytes.
    pub cache_bound: u64,
    /// `--noshared` was given.
    pub noshared: bool,
    /// `--drop-cache` was given.
    pub drop_cache: bool,
    /// `--check-every-call` was given.
    pub check_every_call: bool,
    /// `-MT`: the total memory of the machine in bytes.
    pub machine_memory: Option<u64>,
    /// `-nounique` was given (accepted; see [`crate::options::Options::nounique`]).
    pub nounique: bool,
    /// `-rewrite` was given (accepted; rewrite always runs).
    pub rewrite: bool,
    /// `--keep` (2.1: `-keep`, not undone by a later `-d`): the run directory stays.
    pub keep: bool,
    /// `-e`: data errors named per pattern and rank, when given.
    pub error_messages: Option<usize>,
    /// `--hint`s and the `-i` hints file.
    pub hints: Hints,
    /// The prefix of the `.sum` and `.prot` files: `-f/--prefix` as given, or the default
    /// (`b_eff_io`, with the process id when another live run held it).
    pub prefix: Option<String>,
    /// The operating system of rank 0 (2.1's header and plot title).
    pub system: v21::System,
    /// The file system under `--path` and what the checks at start found.
    pub file_system: crate::filesystem::FileSystem,
    /// Ranks per core on rank 0's node (ranks there / its available cores), to say why a
    /// partition overran its schedule.
    pub ranks_per_core: Option<f64>,
    /// What produced the run (rank 0; `None` elsewhere and in tests).
    pub provenance: Option<benchkit::provenance::Provenance>,
    /// `--enable/--disable`, every host's resolution (rank 0; `None` without a selection).
    pub network: Option<benchkit::network::SelectionRecord>,
}

/// The share of the machine's memory (`-MT`) that the job's processes have, in percent:
/// `N × memory per process / MT × 100`.
pub fn machine_share_percent(info: &RunInfo) -> Option<f64> {
    let total = info.machine_memory.filter(|&m| m > 0)?;
    Some(info.processes as f64 * info.memory_per_process as f64 / total as f64 * 100.0)
}

/// The memory line of the header and the protocol (with `-MT` only): `the job's 2
/// processes × 64 MB = 128 MB are 100.0 % of the machine's 128 MB (-MT)`.
pub fn machine_share_line(info: &RunInfo) -> Option<String> {
    let percent = machine_share_percent(info)?;
    let mb = crate::units::MB;
    let used = (info.processes as u64).saturating_mul(info.memory_per_process);
    Some(format!(
        "the job's {} processes × {} MB = {} MB are {percent:.1} % of the machine's {} MB (-MT)",
        info.processes,
        info.memory_per_process / mb,
        used / mb,
        info.machine_memory.unwrap_or(0) / mb
    ))
}

/// Cache ratios of a partition in access order (write, rewrite, read).
pub fn cache_ratios(info: &RunInfo, partition: &PartitionResult) -> [f64; 3] {
    Access::ALL.map(|a| cache_ratio(partition.of(a).bytes(), info.cache_bound))
}
