//! The `--json` document (issue 3's schema; every field in bytes and seconds).

use super::{cache_ratios, RunInfo};
use crate::figures::{b_eff_io_2_1, b_eff_io_paper, weighted_mean_of_type};
use crate::hints::{self, Hint};
use crate::results::{AccessResult, PartitionResult, PatternResult, UnfinishedPartition};
use crate::schedule::Access;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The document's [`Document::schema_version`]: 2 added it, the per-type timings
/// (`types`) and the per-pattern `io_s` and `check_s`; a document without the field is
/// version 1.
pub const SCHEMA_VERSION: u32 = 2;

/// The version of a document without `schema_version`.
fn version_1() -> u32 {
    1
}

/// `complete` of a document of an earlier release: it was written only at the end.
fn yes() -> bool {
    true
}

/// The whole document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Document {
    /// Always `"b_eff_io"`.
    pub benchmark: String,
    /// [`SCHEMA_VERSION`] (1 when the document has none).
    #[serde(default = "version_1")]
    pub schema_version: u32,
    /// Program version.
    pub version: String,
    /// Whether every partition ran to its end; `false` in the versions written as the run
    /// goes and in those a stopped run leaves (documents of earlier releases: `true`).
    #[serde(default = "yes")]
    pub complete: bool,
    /// Why the run stopped before its end (a stall, a signal), when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Patterns far over their schedule and partitions that overran theirs
    /// ([`crate::anomalies`]).
    #[serde(default)]
    pub warnings: Vec<crate::anomalies::Warning>,
    /// Start date (RFC 3339).
    pub date: String,
    /// Host of rank 0.
    pub host: String,
    /// Processes in the job (N).
    pub processes: usize,
    /// T of the full partition in seconds.
    pub scheduled_time_s: f64,
    /// Memory per process M in bytes.
    pub memory_per_process_bytes: u64,
    /// MPART in bytes.
    pub mpart_bytes: u64,
    /// The `--path` directory.
    pub path: String,
    /// Whether `--drop-cache` was used.
    pub drop_cache: bool,
    /// With `--drop-cache`: what it cannot drop on this file system (a FUSE client's own
    /// caches), if anything.
    pub drop_cache_limit: Option<String>,
    /// The file system under `path`: rank 0's mount (`fs_type`, `source`, `mount_point`)
    /// and the checks across ranks at start (`locks`, `visibility`: `seen`, `not_seen`
    /// with the first rank and host that did not, `failed`, `one_rank`).
    #[serde(default)]
    pub file_system: crate::filesystem::FileSystem,
    /// Whether `--noshared` was used.
    pub noshared: bool,
    /// Whether `--check-every-call` was used: 2.1's blocking termination check after every
    /// call of a time-driven write, instead of overlapped checks between growing batches.
    #[serde(default)]
    pub check_every_call: bool,
    /// Whether 2.1's `-nounique` was given (accepted: the run directory is fresh anyway).
    #[serde(default)]
    pub nounique: bool,
    /// `-MT`: the total memory of the machine in bytes (null without it).
    pub machine_memory_bytes: Option<u64>,
    /// `N × memory per process / -MT` in percent (null without `-MT`).
    pub machine_memory_percent: Option<f64>,
    /// `--hint KEY=VALUE`: given at every open.
    #[serde(default)]
    pub hints: BTreeMap<String, String>,
    /// `-i FILE`: the hints file and its hint lines (null without it).
    pub hints_file: Option<HintsFileDoc>,
    /// Memory that could cache the files (bytes), the base of the cache ratios.
    pub cache_bound_bytes: u64,
    /// System figure (paper formula): the best partition's.
    pub b_eff_io_mb_s: f64,
    /// The 2.1 figure of the same partition.
    pub b_eff_io_2_1_mb_s: f64,
    /// Processes of the best partition.
    pub best_partition: usize,
    /// VALID?
    pub valid: bool,
    /// Failed criteria.
    pub invalid_reasons: Vec<String>,
    /// Per partition, in run order.
    pub partitions: Vec<Partition>,
    /// What produced it: command line, MPI built against and run on, hosts, kernel, CPU,
    /// batch job, start and end (absent in documents of earlier releases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<benchkit::provenance::Provenance>,
    /// `--enable/--disable` as data: the items, and per host what they selected and the
    /// library's settings made for it (absent without a selection, and in documents of
    /// earlier releases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<benchkit::network::SelectionRecord>,
    /// The partition a stopped run was in, with the patterns it had measured (in the
    /// versions written as the run goes and in those a stopped run leaves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unfinished: Option<Unfinished>,
}

/// The partition a run stopped in: its patterns so far, no figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Unfinished {
    /// n.
    pub processes: usize,
    /// T·n/N in seconds.
    pub scheduled_time_s: f64,
    /// The patterns measured under each access method, in run order.
    pub access: PerAccess<Vec<Pattern>>,
}

impl From<&UnfinishedPartition> for Unfinished {
    fn from(u: &UnfinishedPartition) -> Self {
        Unfinished {
            processes: u.processes,
            scheduled_time_s: u.scheduled_s,
            access: PerAccess::from_fn(|a| u.access[a.index()].iter().map(Pattern::from).collect()),
        }
    }
}

impl Document {
    /// Records the end of the run (now) in its provenance.
    pub fn mark_ended(&mut self) {
        if let Some(p) = &mut self.provenance {
            p.ended = Some(chrono::Local::now().to_rfc3339());
        }
    }
}

impl Unfinished {
    /// Refuses what no run gives, in a job of `processes`.
    fn check_read(&self, processes: usize) -> Result<(), ReadError> {
        let at = |name: &str| format!("unfinished.{name}");
        count(self.processes, 1, processes, || at("processes"))?;
        within(self.scheduled_time_s, MAX_SECONDS, || {
            at("scheduled_time_s")
        })?;
        for access in Access::ALL {
            let name = access.name();
            for (k, p) in self.access.of(access).iter().enumerate() {
                p.check_read(&|field| at(&format!("access.{name}[{k}].{field}")))?;
            }
        }
        Ok(())
    }
}

/// One partition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Partition {
    /// n.
    pub processes: usize,
    /// T·n/N in seconds.
    pub scheduled_time_s: f64,
    /// Measured wall time in seconds.
    pub wall_time_s: f64,
    /// Seconds of `wall_time_s` outside the patterns' timed windows (barrier to barrier):
    /// opens, closes, views, hints, the agreements and checks between patterns. Absent
    /// from documents written before it was reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untimed_s: Option<f64>,
    /// The time-driven write patterns (the measured patterns of types 0 to 2) that took
    /// less than nine tenths of their budget, barrier to barrier, sync included. Absent
    /// from documents written before it was reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_patterns_ended_early: Option<usize>,
    /// Paper figure.
    pub b_eff_io_mb_s: f64,
    /// 2.1 figure.
    pub b_eff_io_2_1_mb_s: f64,
    /// Lseg of types 3 and 4.
    pub segment_bytes: u64,
    /// Bytes moved per access method / cache bound (`null` when the bound is 0: no
    /// finite ratio).
    pub cache_ratio: PerAccess<Option<f64>>,
    /// Whether each access method moved less than 20× the cache bound.
    pub cache_dominated: PerAccess<bool>,
    /// The 43 patterns of each access method.
    pub access: PerAccess<Vec<Pattern>>,
    /// The five types of each access method, in type order: bytes and the timed
    /// components (open, patterns, close) the 2.1 figure and the `total` row are made of.
    #[serde(default)]
    pub types: PerAccess<Vec<TypeDoc>>,
    /// `--posix-baseline` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub posix_baseline: Option<Baseline>,
    /// The MPI-IO hints of each file (pattern type under an access method), only when
    /// hints were given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<FileHintsDoc>,
}

/// One type under one access method.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TypeDoc {
    /// 0..4.
    #[serde(rename = "type")]
    pub ptype: usize,
    /// All processes' bytes of its patterns.
    pub bytes: u64,
    /// Seconds of `MPI_File_open` (barrier to barrier; types 3 and 4: with the segment view).
    pub open_s: f64,
    /// Seconds of its patterns: the sum of their `time_s` in pattern order.
    pub patterns_s: f64,
    /// Seconds of `MPI_File_close` (to the barrier after).
    pub close_s: f64,
    /// Seconds in `MPI_File_sync`: the sum of its patterns' `sync_s` (inside `patterns_s`).
    pub sync_s: f64,
    /// `(open_s + patterns_s) + close_s`: the time 2.1 divides by.
    pub time_s: f64,
    /// Barrier before the open to barrier after the close: `time_s` plus what lies between
    /// the components (hints, file views, agreements).
    pub wall_s: f64,
    /// 2.1's per-type figure, the `total` row: bytes / time_s / 10^6.
    pub bandwidth_mb_s: f64,
    /// The U-weighted mean of its patterns' bandwidths, the `weighted` row.
    pub weighted_mb_s: f64,
}

/// The hints file of `-i`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HintsFileDoc {
    /// Its path as given.
    pub path: String,
    /// Its hint lines.
    pub lines: Vec<HintLineDoc>,
}

/// One line of the hints file, its fields as 2.1 spells them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HintLineDoc {
    /// Line number from 1.
    pub line: usize,
    /// `all` or a partition size.
    pub proc_num: String,
    /// `all`, `write`, `rewrite`, `read`.
    pub access: String,
    /// `all`, `scatter`, `shared`, `separated`, `segmented`, `seg_coll`.
    pub pat_type: String,
    /// `all`, `on_open`, `Lmax` or a chunk size.
    pub chunk_size: String,
    /// The key.
    pub key: String,
    /// The value.
    pub value: String,
}

/// The hints of one file: given at open and reported after, and per pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileHintsDoc {
    /// `write`, `rewrite` or `read`.
    pub access: String,
    /// 0..4.
    #[serde(rename = "type")]
    pub ptype: usize,
    /// As the hints file names the type.
    pub pat_type: String,
    /// Given to `MPI_File_open`.
    pub given: BTreeMap<String, String>,
    /// Reported by `MPI_File_get_info` after the open (rank 0's file).
    pub reported: BTreeMap<String, String>,
    /// Patterns with hints of their own (`MPI_File_set_info` before them).
    pub patterns: Vec<PatternHintsDoc>,
}

/// The hints of one pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PatternHintsDoc {
    /// 0..42.
    pub number: usize,
    /// l.
    pub chunk_bytes: u64,
    /// Given with `MPI_File_set_info`.
    pub given: BTreeMap<String, String>,
    /// Reported by `MPI_File_get_info` right after.
    pub reported: BTreeMap<String, String>,
}

fn map(hints: &[Hint]) -> BTreeMap<String, String> {
    hints.iter().cloned().collect()
}

fn file_hints(f: &hints::FileHints) -> FileHintsDoc {
    FileHintsDoc {
        access: f.access.name().into(),
        ptype: f.ptype.index(),
        pat_type: hints::type_word(f.ptype).into(),
        given: map(&f.given),
        reported: map(&f.reported),
        patterns: f
            .patterns
            .iter()
            .map(|p| PatternHintsDoc {
                number: p.number,
                chunk_bytes: p.chunk,
                given: map(&p.given),
                reported: map(&p.reported),
            })
            .collect(),
    }
}

fn hints_file(f: &hints::HintsFile) -> HintsFileDoc {
    HintsFileDoc {
        path: f.path.clone(),
        lines: f
            .lines
            .iter()
            .map(|l| {
                let text = l.to_string();
                let w: Vec<&str> = text.splitn(6, ' ').collect();
                let field = |i: usize| w.get(i).copied().unwrap_or_default().to_string();
                HintLineDoc {
                    line: l.line,
                    proc_num: field(0),
                    access: field(1),
                    pat_type: field(2),
                    chunk_size: field(3),
                    key: l.key.clone(),
                    value: l.value.clone(),
                }
            })
            .collect(),
    }
}

/// The POSIX comparison of `--posix-baseline`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Baseline {
    /// The pattern whose bytes were written again.
    pub pattern: usize,
    /// All processes' bytes.
    pub bytes: u64,
    /// Seconds, fsync included.
    pub time_s: f64,
    /// Seconds in fsync.
    pub sync_s: f64,
    /// bytes / time / 10^6.
    pub bandwidth_mb_s: f64,
}

/// A value per access method.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PerAccess<T> {
    /// First write.
    pub write: T,
    /// Rewrite.
    pub rewrite: T,
    /// Read.
    pub read: T,
}

impl<T> PerAccess<T> {
    /// The value of `access`.
    pub fn of(&self, access: Access) -> &T {
        match access {
            Access::Write => &self.write,
            Access::Rewrite => &self.rewrite,
            Access::Read => &self.read,
        }
    }

    fn from_fn(mut f: impl FnMut(Access) -> T) -> Self {
        PerAccess {
            write: f(Access::Write),
            rewrite: f(Access::Rewrite),
            read: f(Access::Read),
        }
    }
}

/// One pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Pattern {
    /// 0..42.
    pub number: usize,
    /// 0..4.
    #[serde(rename = "type")]
    pub ptype: usize,
    /// l.
    pub chunk_bytes: u64,
    /// L.
    pub memory_bytes: u64,
    /// U.
    pub u: u32,
    /// Tp in seconds.
    pub scheduled_s: f64,
    /// Calls per process.
    pub repeats: u64,
    /// All processes' bytes.
    pub bytes: u64,
    /// Seconds, sync included.
    pub time_s: f64,
    /// Seconds in sync.
    pub sync_s: f64,
    /// bytes / time / 10^6.
    pub bandwidth_mb_s: f64,
    /// Data errors.
    pub errors: u64,
    /// Global termination checks (collectives) of the time-driven loop.
    #[serde(default)]
    pub checks: u64,
    /// Seconds in the I/O calls (the loop without the checks), of the rank whose
    /// `time_s` is the pattern's (the slowest), so that the parts add up to it.
    #[serde(default)]
    pub io_s: f64,
    /// Seconds in the termination checks (waiting for them, overlapped or not), of the
    /// slowest rank, as `io_s`.
    #[serde(default)]
    pub check_s: f64,
}

impl From<&PatternResult> for Pattern {
    fn from(r: &PatternResult) -> Self {
        Pattern {
            number: r.pattern.number,
            ptype: r.pattern.ptype.index(),
            chunk_bytes: r.pattern.chunk,
            memory_bytes: r.pattern.memory,
            u: r.pattern.u,
            scheduled_s: r.scheduled_s,
            repeats: r.repeats,
            bytes: r.bytes,
            time_s: r.time_s,
            sync_s: r.sync_s,
            bandwidth_mb_s: r.bandwidth_mb_s(),
            errors: r.errors,
            checks: r.checks,
            io_s: r.io_s,
            check_s: r.check_s,
        }
    }
}

fn type_docs(a: &AccessResult) -> Vec<TypeDoc> {
    a.types
        .iter()
        .enumerate()
        .map(|(t, total)| TypeDoc {
            ptype: t,
            bytes: total.bytes,
            open_s: total.open_s,
            patterns_s: total.patterns_s,
            close_s: total.close_s,
            sync_s: a
                .patterns
                .iter()
                .filter(|p| p.pattern.ptype.index() == t)
                .fold(0.0, |s, p| s + p.sync_s),
            time_s: total.time_s(),
            wall_s: total.wall_s,
            bandwidth_mb_s: total.bandwidth_mb_s(),
            weighted_mb_s: weighted_mean_of_type(a, t),
        })
        .collect()
}

/// Why a text is not a b_eff_io document.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Not JSON, or not this document's layout.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// JSON of another benchmark.
    #[error("not a b_eff_io document (\"benchmark\" is {0})")]
    Benchmark(String),
    /// A layout newer than this program knows.
    #[error("schema_version {0} is newer than this program reads (up to {SCHEMA_VERSION})")]
    Newer(u64),
    /// A value no run can give (zero processes, a negative or enormous bandwidth).
    #[error("{field} is {value}, which no run gives; expected {expected}")]
    Absurd {
        /// Where it is, as a path of fields: `partitions[0].access.write[12].time_s`.
        field: String,
        /// The value as read.
        value: String,
        /// What a run gives, in words.
        expected: String,
    },
}

/// The largest bandwidth a document may hold, in MB/s: an exabyte per second, a hundred
/// thousand times the fastest file systems, yet far from where sums of it overflow.
pub const MAX_BANDWIDTH_MB_S: f64 = 1e12;

/// The longest time a document may hold, in seconds (about 31 years).
pub const MAX_SECONDS: f64 = 1e9;

/// The most processes a document may name: MPI counts ranks in an `int`.
pub const MAX_PROCESSES: usize = i32::MAX as usize;

/// The highest pattern type (0 scatter .. 4 segmented-collective).
const MAX_TYPE: usize = 4;

/// The check of one number: finite and within `0..=max`, else [`ReadError::Absurd`]
/// naming `field` (made only then).
fn within(value: f64, max: f64, field: impl FnOnce() -> String) -> Result<(), ReadError> {
    if value.is_finite() && (0.0..=max).contains(&value) {
        return Ok(());
    }
    let shown = if value != 0.0 && !(1e-6..1e15).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        value.to_string()
    };
    Err(ReadError::Absurd {
        field: field(),
        value: shown,
        expected: format!("a number from 0 to {max:e}"),
    })
}

/// The check of a count: within `min..=max`.
fn count(
    value: usize,
    min: usize,
    max: usize,
    field: impl FnOnce() -> String,
) -> Result<(), ReadError> {
    if (min..=max).contains(&value) {
        return Ok(());
    }
    Err(ReadError::Absurd {
        field: field(),
        value: value.to_string(),
        expected: format!("a whole number from {min} to {max}"),
    })
}

impl Pattern {
    /// Refuses what no run gives; `at` names the pattern (`partitions[0].access.write[3]`).
    fn check_read(&self, at: &dyn Fn(&str) -> String) -> Result<(), ReadError> {
        count(self.ptype, 0, MAX_TYPE, || at("type"))?;
        for (name, value) in [
            ("scheduled_s", self.scheduled_s),
            ("time_s", self.time_s),
            ("sync_s", self.sync_s),
            ("io_s", self.io_s),
            ("check_s", self.check_s),
        ] {
            within(value, MAX_SECONDS, || at(name))?;
        }
        within(self.bandwidth_mb_s, MAX_BANDWIDTH_MB_S, || {
            at("bandwidth_mb_s")
        })
    }
}

impl TypeDoc {
    /// Refuses what no run gives; `at` names the entry (`partitions[0].types.read[2]`).
    fn check_read(&self, at: &dyn Fn(&str) -> String) -> Result<(), ReadError> {
        count(self.ptype, 0, MAX_TYPE, || at("type"))?;
        for (name, value) in [
            ("open_s", self.open_s),
            ("patterns_s", self.patterns_s),
            ("close_s", self.close_s),
            ("sync_s", self.sync_s),
            ("time_s", self.time_s),
            ("wall_s", self.wall_s),
        ] {
            within(value, MAX_SECONDS, || at(name))?;
        }
        within(self.bandwidth_mb_s, MAX_BANDWIDTH_MB_S, || {
            at("bandwidth_mb_s")
        })?;
        within(self.weighted_mb_s, MAX_BANDWIDTH_MB_S, || {
            at("weighted_mb_s")
        })
    }
}

impl Partition {
    /// Refuses what no run gives in partition `i` of a job of `processes`.
    fn check_read(&self, i: usize, processes: usize) -> Result<(), ReadError> {
        let at = |name: &str| format!("partitions[{i}].{name}");
        count(self.processes, 1, processes, || at("processes"))?;
        within(self.scheduled_time_s, MAX_SECONDS, || {
            at("scheduled_time_s")
        })?;
        within(self.wall_time_s, MAX_SECONDS, || at("wall_time_s"))?;
        if let Some(u) = self.untimed_s {
            within(u, self.wall_time_s, || at("untimed_s"))?;
        }
        within(self.b_eff_io_mb_s, MAX_BANDWIDTH_MB_S, || {
            at("b_eff_io_mb_s")
        })?;
        within(self.b_eff_io_2_1_mb_s, MAX_BANDWIDTH_MB_S, || {
            at("b_eff_io_2_1_mb_s")
        })?;
        for access in Access::ALL {
            let name = access.name();
            if let Some(ratio) = self.cache_ratio.of(access) {
                within(*ratio, f64::MAX, || at(&format!("cache_ratio.{name}")))?;
            }
            for (k, p) in self.access.of(access).iter().enumerate() {
                p.check_read(&|field| at(&format!("access.{name}[{k}].{field}")))?;
            }
            for (k, t) in self.types.of(access).iter().enumerate() {
                t.check_read(&|field| at(&format!("types.{name}[{k}].{field}")))?;
            }
        }
        if let Some(b) = &self.posix_baseline {
            within(b.time_s, MAX_SECONDS, || at("posix_baseline.time_s"))?;
            within(b.sync_s, MAX_SECONDS, || at("posix_baseline.sync_s"))?;
            within(b.bandwidth_mb_s, MAX_BANDWIDTH_MB_S, || {
                at("posix_baseline.bandwidth_mb_s")
            })?;
        }
        Ok(())
    }
}

/// The fields that say what a text is, read before the rest (the others are skipped).
#[derive(Deserialize)]
struct Head {
    benchmark: Option<serde_json::Value>,
    schema_version: Option<serde_json::Value>,
}

impl Document {
    /// Reads a document of any schema version up to [`SCHEMA_VERSION`]; what version 1
    /// did not record reads as absent (no per-type timings, no file-system checks, no
    /// hints, zero `io_s`, `check_s` and `checks`).
    ///
    /// A value no run gives is refused, naming its field ([`ReadError::Absurd`]): no
    /// processes, a partition larger than the job, a pattern type above 4, a time or
    /// bandwidth that is negative, not finite, or above [`MAX_SECONDS`] or
    /// [`MAX_BANDWIDTH_MB_S`]. Reading takes time linear in the text.
    pub fn from_json(text: &str) -> Result<Document, ReadError> {
        let head: Head = serde_json::from_str(text)?;
        // serde also reads a struct from an array of its fields: only an object will do.
        let object = text.trim_start().starts_with('{');
        match &head.benchmark {
            _ if !object => return Err(ReadError::Benchmark("missing".into())),
            Some(serde_json::Value::String(b)) if b == "b_eff_io" => {}
            other => {
                let found = other
                    .as_ref()
                    .map_or("missing".to_string(), |b| b.to_string());
                return Err(ReadError::Benchmark(found));
            }
        }
        if let Some(v) = head
            .schema_version
            .as_ref()
            .and_then(serde_json::Value::as_u64)
        {
            if v > u64::from(SCHEMA_VERSION) {
                return Err(ReadError::Newer(v));
            }
        }
        let document: Document = serde_json::from_str(text)?;
        document.check_read()?;
        Ok(document)
    }

    /// Refuses values no run gives (see [`Document::from_json`]).
    fn check_read(&self) -> Result<(), ReadError> {
        count(self.processes, 1, MAX_PROCESSES, || "processes".into())?;
        within(self.scheduled_time_s, MAX_SECONDS, || {
            "scheduled_time_s".into()
        })?;
        within(self.b_eff_io_mb_s, MAX_BANDWIDTH_MB_S, || {
            "b_eff_io_mb_s".into()
        })?;
        within(self.b_eff_io_2_1_mb_s, MAX_BANDWIDTH_MB_S, || {
            "b_eff_io_2_1_mb_s".into()
        })?;
        // 0 when no partition was measured.
        count(self.best_partition, 0, self.processes, || {
            "best_partition".into()
        })?;
        if let Some(percent) = self.machine_memory_percent {
            within(percent, f64::MAX, || "machine_memory_percent".into())?;
        }
        for (i, p) in self.partitions.iter().enumerate() {
            p.check_read(i, self.processes)?;
        }
        if let Some(u) = &self.unfinished {
            u.check_read(self.processes)?;
        }
        Ok(())
    }
}

/// The curve of pattern type `ptype` in the paper's figure: at each chunk size of the
/// summary table's rows ([`super::table::row_sizes`], MPART last), the U-weighted
/// bandwidth of its patterns with that chunk (the table's cell), `None` where there is none.
pub fn type_curve(patterns: &[Pattern], ptype: usize, mpart: u64) -> [Option<f64>; 7] {
    super::table::row_sizes(mpart).map(|chunk| {
        crate::figures::u_weighted(
            patterns
                .iter()
                .filter(|p| p.ptype == ptype && p.chunk_bytes == chunk)
                .map(|p| (p.u, p.bandwidth_mb_s)),
        )
    })
}

/// The pattern types present in `patterns`, ascending.
pub fn types(patterns: &[Pattern]) -> Vec<usize> {
    let mut t: Vec<usize> = patterns.iter().map(|p| p.ptype).collect();
    t.sort_unstable();
    t.dedup();
    t
}

/// Builds the document.
pub fn document(info: &RunInfo, partitions: &[PartitionResult], reasons: &[String]) -> Document {
    let best = crate::figures::system_best(partitions).map(|(i, _)| i);
    let parts: Vec<Partition> = partitions
        .iter()
        .map(|p| {
            let ratios = cache_ratios(info, p);
            Partition {
                processes: p.processes,
                scheduled_time_s: p.scheduled_s,
                wall_time_s: p.wall_s,
                untimed_s: Some(p.untimed_s()),
                write_patterns_ended_early: Some(p.ended_early()),
                b_eff_io_mb_s: b_eff_io_paper(p),
                b_eff_io_2_1_mb_s: b_eff_io_2_1(p),
                segment_bytes: p.segment_bytes,
                cache_ratio: PerAccess::from_fn(|a| {
                    Some(ratios[a.index()]).filter(|r| r.is_finite())
                }),
                cache_dominated: PerAccess::from_fn(|a| {
                    crate::validity::cache_dominated(ratios[a.index()])
                }),
                access: PerAccess::from_fn(|a| {
                    p.of(a).patterns.iter().map(Pattern::from).collect()
                }),
                types: PerAccess::from_fn(|a| type_docs(p.of(a))),
                posix_baseline: p.posix_baseline.map(|b| Baseline {
                    pattern: b.pattern,
                    bytes: b.bytes,
                    time_s: b.time_s,
                    sync_s: b.sync_s,
                    bandwidth_mb_s: b.bandwidth_mb_s(),
                }),
                hints: p.hints.iter().map(file_hints).collect(),
            }
        })
        .collect();
    let (sys, sys21, best_n) = match best {
        Some(i) => (
            parts[i].b_eff_io_mb_s,
            parts[i].b_eff_io_2_1_mb_s,
            parts[i].processes,
        ),
        None => (0.0, 0.0, 0),
    };
    Document {
        benchmark: "b_eff_io".into(),
        schema_version: SCHEMA_VERSION,
        version: info.version.clone(),
        complete: true,
        stopped: None,
        warnings: crate::anomalies::all(partitions, info.ranks_per_core),
        date: info.date.clone(),
        host: info.host.clone(),
        processes: info.processes,
        scheduled_time_s: info.scheduled_time_s,
        memory_per_process_bytes: info.memory_per_process,
        mpart_bytes: info.mpart,
        path: info.path.clone(),
        drop_cache: info.drop_cache,
        drop_cache_limit: info
            .drop_cache
            .then(|| info.file_system.drop_cache_limit())
            .flatten(),
        file_system: info.file_system.clone(),
        noshared: info.noshared,
        check_every_call: info.check_every_call,
        nounique: info.nounique,
        machine_memory_bytes: info.machine_memory,
        machine_memory_percent: super::machine_share_percent(info),
        hints: map(&hints::merged(info.hints.global.iter().cloned())),
        hints_file: info.hints.file.as_ref().map(hints_file),
        cache_bound_bytes: info.cache_bound,
        b_eff_io_mb_s: sys,
        b_eff_io_2_1_mb_s: sys21,
        best_partition: best_n,
        valid: reasons.is_empty(),
        invalid_reasons: reasons.to_vec(),
        partitions: parts,
        provenance: info.provenance.clone(),
        network: info.network.clone(),
        unfinished: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patterns::pattern_table;
    use crate::results::TypeTotal;
    use crate::units::MB;

    #[test]
    fn document_follows_the_schema() {
        let a = AccessResult {
            patterns: pattern_table(2 * MB)
                .into_iter()
                .map(|p| PatternResult {
                    pattern: p,
                    scheduled_s: 1.0,
                    repeats: 2,
                    bytes: 4_000_000,
                    time_s: 2.0,
                    sync_s: 0.1,
                    errors: 0,
                    checks: 0,
                    io_s: 0.0,
                    check_s: 0.0,
                })
                .collect(),
            types: [TypeTotal {
                bytes: 1_000_000,
                open_s: 0.25,
                patterns_s: 0.5,
                close_s: 0.25,
                wall_s: 1.5,
            }; 5],
        };
        let p = PartitionResult {
            processes: 2,
            scheduled_s: 30.0,
            segment_bytes: 3 * MB,
            access: [a.clone(), a.clone(), a],
            wall_s: 31.0,
            posix_baseline: None,
            hints: Vec::new(),
        };
        let info = RunInfo {
            version: "0.1.0".into(),
            date: "d".into(),
            host: "h".into(),
            processes: 2,
            memory_per_process: 256 * MB,
            mpart: 2 * MB,
            scheduled_time_s: 30.0,
            partitions: vec![2],
            path: "/tmp".into(),
            cache_bound: 172_000_000,
            noshared: false,
            drop_cache: false,
            check_every_call: false,
            ..RunInfo::default()
        };
        let reasons = vec!["scheduled time T = 30 s is below 600 s".to_string()];
        let doc = document(&info, &[p], &reasons);
        let v: serde_json::Value = serde_json::to_value(&doc).unwrap();
        for key in [
            "benchmark",
            "version",
            "processes",
            "scheduled_time_s",
            "memory_per_process_bytes",
            "mpart_bytes",
            "path",
            "drop_cache",
            "b_eff_io_mb_s",
            "b_eff_io_2_1_mb_s",
            "valid",
            "invalid_reasons",
            "partitions",
        ] {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        assert_eq!(v["benchmark"], "b_eff_io");
        assert_eq!(v["schema_version"], SCHEMA_VERSION);
        assert_eq!(v["valid"], false);
        assert_eq!(v["nounique"], false);
        assert!(v["machine_memory_bytes"].is_null() && v["machine_memory_percent"].is_null());
        assert_eq!(v["hints"], serde_json::json!({}));
        assert!(v["hints_file"].is_null());
        assert!(v["partitions"][0].get("hints").is_none());
        assert_eq!(v["b_eff_io_mb_s"], 2.0);
        assert_eq!(v["b_eff_io_2_1_mb_s"], 1.0);
        let part = &v["partitions"][0];
        assert_eq!(part["segment_bytes"], 3 * MB);
        // 43 · 4 MB / 172 MB = 1.0
        assert_eq!(part["cache_ratio"]["read"], 1.0);
        assert_eq!(part["cache_dominated"]["write"], true);
        for access in ["write", "rewrite", "read"] {
            let list = part["access"][access].as_array().unwrap();
            assert_eq!(list.len(), 43);
            let p = &list[42];
            assert_eq!(p["number"], 42);
            assert_eq!(p["type"], 4);
            for key in [
                "chunk_bytes",
                "memory_bytes",
                "u",
                "repeats",
                "bytes",
                "time_s",
                "sync_s",
                "bandwidth_mb_s",
                "errors",
                "checks",
                "io_s",
                "check_s",
            ] {
                assert!(p.get(key).is_some(), "missing {key}");
            }
            let types = part["types"][access].as_array().unwrap();
            assert_eq!(types.len(), 5);
            let t = &types[3];
            assert_eq!(t["type"], 3);
            assert_eq!(t["bytes"], 1_000_000);
            assert_eq!(
                (&t["open_s"], &t["patterns_s"], &t["close_s"]),
                (
                    &serde_json::json!(0.25),
                    &serde_json::json!(0.5),
                    &serde_json::json!(0.25)
                )
            );
            // 9 patterns of type 3 at 0.1 s of sync each.
            assert!((t["sync_s"].as_f64().unwrap() - 0.9).abs() < 1e-12);
            assert_eq!(t["time_s"], 1.0);
            assert_eq!(t["wall_s"], 1.5);
            assert_eq!(t["bandwidth_mb_s"], 1.0);
            assert_eq!(t["weighted_mb_s"], 2.0);
        }
    }
}

#[cfg(test)]
mod hint_tests {
    use super::*;
    use crate::hints::{parse_hints_file, FileHints, Hints, PatternHints};
    use crate::patterns::PatternType;
    use crate::units::MB;

    #[test]
    fn hints_and_the_machine_share_are_in_the_document() {
        let h = |k: &str, v: &str| (k.to_string(), v.to_string());
        let info = RunInfo {
            processes: 2,
            memory_per_process: 64 * MB,
            machine_memory: Some(128 * MB),
            nounique: true,
            hints: Hints {
                global: vec![h("cb_buffer_size", "1048576")],
                file: Some(
                    parse_hints_file("hints", "\n2 write seg_coll Lmax cb_nodes 1").unwrap(),
                ),
            },
            ..RunInfo::default()
        };
        let part = PartitionResult {
            processes: 2,
            hints: vec![FileHints {
                access: Access::Write,
                ptype: PatternType::SegmentedCollective,
                given: vec![h("cb_buffer_size", "1048576")],
                reported: vec![h("cb_buffer_size", "1048576"), h("cb_nodes", "1")],
                patterns: vec![PatternHints {
                    number: 35,
                    chunk: 2 * MB,
                    given: vec![h("cb_nodes", "1")],
                    reported: vec![h("cb_nodes", "1")],
                }],
            }],
            ..PartitionResult::default()
        };
        let v = serde_json::to_value(document(&info, &[part], &[])).unwrap();
        assert_eq!(v["nounique"], true);
        assert_eq!(v["machine_memory_bytes"], 128 * MB);
        assert_eq!(v["machine_memory_percent"], 100.0);
        assert_eq!(v["hints"]["cb_buffer_size"], "1048576");
        let line = &v["hints_file"]["lines"][0];
        assert_eq!(v["hints_file"]["path"], "hints");
        assert_eq!(
            (
                &line["line"],
                &line["proc_num"],
                &line["access"],
                &line["pat_type"]
            ),
            (
                &serde_json::json!(2),
                &serde_json::json!("2"),
                &serde_json::json!("write"),
                &serde_json::json!("seg_coll")
            )
        );
        assert_eq!(
            (&line["chunk_size"], &line["key"], &line["value"]),
            (
                &serde_json::json!("Lmax"),
                &serde_json::json!("cb_nodes"),
                &serde_json::json!("1")
            )
        );
        let f = &v["partitions"][0]["hints"][0];
        assert_eq!(f["access"], "write");
        assert_eq!(f["type"], 4);
        assert_eq!(f["pat_type"], "seg_coll");
        assert_eq!(f["given"]["cb_buffer_size"], "1048576");
        assert_eq!(f["reported"]["cb_nodes"], "1");
        assert_eq!(f["patterns"][0]["number"], 35);
        assert_eq!(f["patterns"][0]["chunk_bytes"], 2 * MB);
        assert_eq!(f["patterns"][0]["reported"]["cb_nodes"], "1");
    }

    #[test]
    fn the_document_reads_back_to_itself_and_version_1_reads_without_its_newer_fields() {
        let info = RunInfo {
            processes: 2,
            mpart: 2 * MB,
            ..RunInfo::default()
        };
        let part = PartitionResult {
            processes: 2,
            ..PartitionResult::default()
        };
        let doc = document(&info, &[part], &[]);
        let text = serde_json::to_string(&doc).unwrap();
        assert_eq!(Document::from_json(&text).unwrap(), doc);
        let mut v1: serde_json::Value = serde_json::from_str(&text).unwrap();
        for key in ["schema_version", "file_system", "nounique", "hints"] {
            v1.as_object_mut().unwrap().remove(key);
        }
        v1["partitions"][0].as_object_mut().unwrap().remove("types");
        let read = Document::from_json(&v1.to_string()).unwrap();
        assert_eq!(read.schema_version, 1);
        assert_eq!(read.file_system, crate::filesystem::FileSystem::default());
        assert!(read.partitions[0].types.write.is_empty());
        let e = Document::from_json(r#"{"benchmark": "sqmr"}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"not a b_eff_io document ("benchmark" is "sqmr")"#
        );
        v1["schema_version"] = 9.into();
        let e = Document::from_json(&v1.to_string()).unwrap_err();
        assert!(e.to_string().contains("schema_version 9 is newer"), "{e}");
    }

    #[test]
    fn values_no_run_gives_are_refused_naming_the_field() {
        let info = RunInfo {
            processes: 2,
            mpart: 2 * MB,
            ..RunInfo::default()
        };
        let part = PartitionResult {
            processes: 2,
            access: std::array::from_fn(|_| AccessResult {
                patterns: crate::patterns::pattern_table(2 * MB)
                    .into_iter()
                    .map(|p| PatternResult {
                        pattern: p,
                        scheduled_s: 1.0,
                        repeats: 2,
                        bytes: 4_000_000,
                        time_s: 2.0,
                        sync_s: 0.1,
                        errors: 0,
                        checks: 0,
                        io_s: 0.0,
                        check_s: 0.0,
                    })
                    .collect(),
                ..AccessResult::default()
            }),
            ..PartitionResult::default()
        };
        let text = serde_json::to_string(&document(&info, &[part], &[])).unwrap();
        Document::from_json(&text).expect("the writer's own document reads");
        let refused = |edit: &dyn Fn(&mut serde_json::Value)| {
            let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
            edit(&mut v);
            Document::from_json(&v.to_string())
                .expect_err("an absurd value must be refused")
                .to_string()
        };
        let e = refused(&|v| v["processes"] = 0.into());
        assert_eq!(
            e,
            "processes is 0, which no run gives; expected a whole number from 1 to 2147483647"
        );
        let e = refused(&|v| v["partitions"][0]["processes"] = 3.into());
        assert!(e.starts_with("partitions[0].processes is 3,"), "{e}");
        let e =
            refused(&|v| v["partitions"][0]["access"]["read"][5]["bandwidth_mb_s"] = (-1.5).into());
        assert!(
            e.starts_with(
                "partitions[0].access.read[5].bandwidth_mb_s is -1.5, which no run gives"
            ),
            "{e}"
        );
        let e = refused(&|v| v["b_eff_io_mb_s"] = 1e308.into());
        assert!(
            e.starts_with("b_eff_io_mb_s is 1e308, which no run gives"),
            "{e}"
        );
        let e = refused(&|v| v["partitions"][0]["access"]["write"][1]["type"] = 7.into());
        assert!(
            e.starts_with("partitions[0].access.write[1].type is 7"),
            "{e}"
        );
    }

    fn p(ptype: usize, chunk: u64, u: u32, bw: f64) -> Pattern {
        Pattern {
            number: 0,
            ptype,
            chunk_bytes: chunk,
            memory_bytes: chunk,
            u,
            scheduled_s: 0.0,
            repeats: 1,
            bytes: chunk,
            time_s: 1.0,
            sync_s: 0.0,
            bandwidth_mb_s: bw,
            errors: 0,
            checks: 0,
            io_s: 0.0,
            check_s: 0.0,
        }
    }

    #[test]
    fn curves_weight_by_u_and_skip_unmeasured_patterns() {
        use crate::units::KB;
        let patterns = [
            p(0, MB, 0, 1000.0), // open: not in the figure
            p(0, MB, 4, 100.0),
            p(0, MB, 4, 300.0),
            p(0, KB, 2, 50.0),
            p(1, KB, 1, 7.0),
            p(0, 2 * MB, 4, 80.0),
        ];
        assert_eq!(
            type_curve(&patterns, 0, 2 * MB),
            [Some(50.0), None, None, None, Some(200.0), None, Some(80.0)]
        );
        assert_eq!(types(&patterns), vec![0, 1]);
        assert_eq!(crate::patterns::type_label(4), "type 4 seg-coll");
        assert_eq!(crate::patterns::type_label(7), "type 7");
    }
}
