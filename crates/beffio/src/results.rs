//! Measurements: what the execution layer hands to the figures and reports.

use crate::hints::FileHints;
use crate::patterns::{Pattern, TYPE_COUNT};
use crate::schedule::Access;
use crate::units::mb_per_s;

/// One pattern under one access method in one partition.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternResult {
    /// The table row (a filler's chunk is filled in with the bytes it wrote per rank).
    pub pattern: Pattern,
    /// Scheduled time `Tp` in seconds.
    pub scheduled_s: f64,
    /// Calls made by every rank.
    pub repeats: u64,
    /// Bytes moved by all processes.
    pub bytes: u64,
    /// Seconds from the barrier before to the barrier after, sync included.
    pub time_s: f64,
    /// Seconds spent in `MPI_File_sync` (0 for read).
    pub sync_s: f64,
    /// Chunks whose markers were wrong (read only).
    pub errors: u64,
    /// Global termination checks (collectives) the time-driven loop made.
    pub checks: u64,
    /// Seconds in the I/O calls (the loop without its termination checks), the largest
    /// over the ranks.
    pub io_s: f64,
    /// Seconds in the global termination checks, the largest over the ranks.
    pub check_s: f64,
}

/// The share of its budget below which a time-driven write pattern counts as ended
/// early ([`PatternResult::ended_early`]).
pub const ENDED_EARLY_SHARE: f64 = 0.9;

impl PatternResult {
    /// `bytes / time` in MB/s (10^6 B/s).
    pub fn bandwidth_mb_s(&self) -> f64 {
        mb_per_s(self.bytes, self.time_s)
    }

    /// Whether this pattern, a time-driven write (a measured pattern of types 0 to 2),
    /// took less than [`ENDED_EARLY_SHARE`] of its budget, barrier to barrier, sync
    /// included: its calls stopped early, or its sync took less than budgeted.
    pub fn ended_early(&self, access: Access) -> bool {
        access == Access::Write
            && self.pattern.role == crate::patterns::Role::Measured
            && self.pattern.ptype.index() <= 2
            && self.time_s < ENDED_EARLY_SHARE * self.scheduled_s
    }
}

/// All bytes and the timed components of one type under one access method: open, its
/// patterns, close (each from a barrier to a barrier, the largest over the ranks).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TypeTotal {
    /// Bytes of all its patterns, all processes.
    pub bytes: u64,
    /// Seconds of `MPI_File_open` (and the segment view of types 3 and 4).
    pub open_s: f64,
    /// Seconds of its patterns: the sum of their `time_s`, in table order.
    pub patterns_s: f64,
    /// Seconds of `MPI_File_close`.
    pub close_s: f64,
    /// Seconds from the barrier before the open to the barrier after the close: the
    /// components and what lies between them (hints, file views, agreements).
    pub wall_s: f64,
}

impl TypeTotal {
    /// The time 2.1 divides by: `(open_s + patterns_s) + close_s`.
    pub fn time_s(&self) -> f64 {
        self.open_s + self.patterns_s + self.close_s
    }

    /// The type's bandwidth in MB/s, as 2.1's `total` row and its formula use it: all its
    /// bytes / (open + patterns + close).
    pub fn bandwidth_mb_s(&self) -> f64 {
        mb_per_s(self.bytes, self.time_s())
    }
}

/// The sum of the `time_s` of `patterns` in their order (what [`TypeTotal::patterns_s`]
/// holds).
pub fn patterns_time_s<'a>(patterns: impl IntoIterator<Item = &'a PatternResult>) -> f64 {
    patterns.into_iter().fold(0.0, |s, p| s + p.time_s)
}

/// One access method of one partition.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AccessResult {
    /// The 43 patterns in table order.
    pub patterns: Vec<PatternResult>,
    /// Per type 0..4: bytes and open-to-close time.
    pub types: [TypeTotal; TYPE_COUNT],
}

impl AccessResult {
    /// All bytes this access method moved.
    pub fn bytes(&self) -> u64 {
        self.patterns.iter().map(|p| p.bytes).sum()
    }

    /// Data errors found in this access method.
    pub fn errors(&self) -> u64 {
        self.patterns.iter().map(|p| p.errors).sum()
    }

    /// Time spent in its patterns.
    pub fn time_s(&self) -> f64 {
        self.patterns.iter().map(|p| p.time_s).sum()
    }

    /// Time of its types as 2.1 counts it: the sum of their open + patterns + close.
    pub fn types_time_s(&self) -> f64 {
        self.types.iter().fold(0.0, |s, t| s + t.time_s())
    }
}

/// `--posix-baseline`: the bytes of the separate-file pattern with the largest chunk,
/// written again by every rank with plain POSIX `write` + `fsync` into a file of its own,
/// right after that pattern and timed the same way (barrier to barrier, sync included).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PosixBaseline {
    /// The pattern it repeats.
    pub pattern: usize,
    /// Bytes of all processes (the pattern's).
    pub bytes: u64,
    /// Seconds, fsync included.
    pub time_s: f64,
    /// Seconds in fsync.
    pub sync_s: f64,
}

impl PosixBaseline {
    /// `bytes / time` in MB/s.
    pub fn bandwidth_mb_s(&self) -> f64 {
        mb_per_s(self.bytes, self.time_s)
    }
}

/// One partition's measurements.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PartitionResult {
    /// Processes in the partition.
    pub processes: usize,
    /// Scheduled time `T·n/N` in seconds.
    pub scheduled_s: f64,
    /// `Lseg` of types 3 and 4 in bytes.
    pub segment_bytes: u64,
    /// Write, rewrite and read, in that order.
    pub access: [AccessResult; 3],
    /// Wall time of the partition in seconds.
    pub wall_s: f64,
    /// The POSIX comparison, when asked for.
    pub posix_baseline: Option<PosixBaseline>,
    /// The MPI-IO hints of its files, in run order, when any were given (`--hint`, `-i`).
    pub hints: Vec<FileHints>,
}

impl PartitionResult {
    /// The results of one access method.
    pub fn of(&self, access: Access) -> &AccessResult {
        &self.access[access.index()]
    }

    /// Data errors over all access methods.
    pub fn errors(&self) -> u64 {
        self.access.iter().map(|a| a.errors()).sum()
    }

    /// The time-driven write patterns that ended early ([`PatternResult::ended_early`]).
    pub fn ended_early(&self) -> usize {
        self.of(Access::Write)
            .patterns
            .iter()
            .filter(|r| r.ended_early(Access::Write))
            .count()
    }

    /// Seconds of the partition's wall time outside its patterns' timed windows (barrier
    /// to barrier): opens and closes, file views, hints, the agreements and checks
    /// between patterns, the segment plan, a dropped cache.
    pub fn untimed_s(&self) -> f64 {
        let timed = self.access.iter().fold(0.0, |s, a| s + a.time_s());
        (self.wall_s - timed).max(0.0)
    }
}

/// The partition a run stopped in (a signal, a stall, an error): the patterns it had
/// measured, per access method in run order. It has no figures: its types and access
/// methods are not all there.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UnfinishedPartition {
    /// Processes in the partition.
    pub processes: usize,
    /// Scheduled time `T·n/N` in seconds.
    pub scheduled_s: f64,
    /// The patterns measured, write, rewrite and read.
    pub access: [Vec<PatternResult>; 3],
}

impl UnfinishedPartition {
    /// Patterns measured over all access methods.
    pub fn measured(&self) -> usize {
        self.access.iter().map(Vec::len).sum()
    }
}
