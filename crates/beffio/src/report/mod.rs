//! Output formats: the text summary on stdout, the protocol file, the JSON document and
//! its CSV rows.

pub mod csv;
pub mod json;
pub mod protocol;
pub mod table;
pub mod text;

use crate::results::PartitionResult;
use crate::schedule::Access;
use crate::validity::cache_ratio;

/// What the header and the JSON say about the run besides the measurements.
#[derive(Debug, Clone, PartialEq)]
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
}

/// Cache ratios of a partition in access order (write, rewrite, read).
pub fn cache_ratios(info: &RunInfo, partition: &PartitionResult) -> [f64; 3] {
    Access::ALL.map(|a| cache_ratio(partition.of(a).bytes(), info.cache_bound))
}
