//! The fields of a `b_eff_io --json` document that the reports use, and the chunk-size
//! axis of the paper's figure.

use serde::Deserialize;

/// 1 kB in b_eff_io's binary units.
pub const KB: u64 = 1024;
/// 1 MB in b_eff_io's binary units.
pub const MB: u64 = 1024 * 1024;

/// The names of the five pattern types, by number.
pub const TYPE_NAMES: [&str; 5] = ["scatter", "shared", "separate", "segmented", "seg-coll"];

/// A b_eff_io result (unknown fields are ignored).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Document {
    /// Processes in the job.
    pub processes: u64,
    /// T of the full partition, seconds.
    pub scheduled_time_s: f64,
    /// MPART in bytes.
    pub mpart_bytes: u64,
    /// The system figure (the best partition's), MB/s.
    pub b_eff_io_mb_s: f64,
    /// Processes of the best partition.
    pub best_partition: u64,
    /// Whether the run is valid.
    pub valid: bool,
    /// Why not.
    #[serde(default)]
    pub invalid_reasons: Vec<String>,
    /// The partitions in run order.
    pub partitions: Vec<Partition>,
}

/// One partition.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Partition {
    /// Its processes.
    pub processes: u64,
    /// Its b_eff_io, MB/s.
    pub b_eff_io_mb_s: f64,
    /// The patterns of each access method.
    pub access: PerAccess,
}

/// The patterns per access method.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PerAccess {
    /// First write.
    pub write: Vec<Pattern>,
    /// Rewrite.
    pub rewrite: Vec<Pattern>,
    /// Read.
    pub read: Vec<Pattern>,
}

/// The three access methods in run order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// First write.
    Write,
    /// Rewrite.
    Rewrite,
    /// Read.
    Read,
}

impl Access {
    /// In run order.
    pub const ALL: [Access; 3] = [Access::Write, Access::Rewrite, Access::Read];

    /// The name in JSON and tables.
    pub fn name(self) -> &'static str {
        match self {
            Access::Write => "write",
            Access::Rewrite => "rewrite",
            Access::Read => "read",
        }
    }

    /// The panel title, as the paper says it.
    pub fn title(self) -> &'static str {
        match self {
            Access::Write => "first write",
            Access::Rewrite => "rewrite",
            Access::Read => "read",
        }
    }
}

impl PerAccess {
    /// The patterns of `access`.
    pub fn of(&self, access: Access) -> &[Pattern] {
        match access {
            Access::Write => &self.write,
            Access::Rewrite => &self.rewrite,
            Access::Read => &self.read,
        }
    }
}

/// One pattern's measurement.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Pattern {
    /// 0..42.
    pub number: u64,
    /// Pattern type 0..4.
    #[serde(rename = "type")]
    pub ptype: u64,
    /// Chunk on disk, bytes.
    pub chunk_bytes: u64,
    /// Time units (0: the open pattern or a segment filler, not in the figure).
    pub u: u64,
    /// MB/s (10^6 B/s).
    pub bandwidth_mb_s: f64,
}

/// The chunk sizes of the figure's x axis, MPART last.
pub fn chunk_axis(mpart: u64) -> [u64; 7] {
    [KB, KB + 8, 32 * KB, 32 * KB + 8, MB, MB + 8, mpart]
}

/// The labels of [`chunk_axis`].
pub const CHUNK_LABELS: [&str; 7] = [
    "1 kB", "1 kB+8", "32 kB", "32 kB+8", "1 MB", "1 MB+8", "MPART",
];

/// The name of pattern type `t` ("type 0 scatter").
pub fn type_label(t: u64) -> String {
    match TYPE_NAMES.get(t as usize) {
        Some(name) => format!("type {t} {name}"),
        None => format!("type {t}"),
    }
}

/// The curve of one type: at each chunk size of the axis, the U-weighted bandwidth of the
/// measured patterns (U > 0) of type `ptype` with that chunk (as the summary table does),
/// `None` where there is none.
pub fn type_curve(patterns: &[Pattern], ptype: u64, mpart: u64) -> [Option<f64>; 7] {
    chunk_axis(mpart).map(|chunk| {
        let (sum, units) = patterns
            .iter()
            .filter(|p| p.ptype == ptype && p.chunk_bytes == chunk && p.u > 0)
            .fold((0.0, 0u64), |(s, u), p| {
                (s + p.u as f64 * p.bandwidth_mb_s, u + p.u)
            });
        (units > 0).then(|| sum / units as f64)
    })
}

/// The pattern types present in `patterns`, ascending.
pub fn types(patterns: &[Pattern]) -> Vec<u64> {
    let mut t: Vec<u64> = patterns.iter().map(|p| p.ptype).collect();
    t.sort_unstable();
    t.dedup();
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(ptype: u64, chunk: u64, u: u64, bw: f64) -> Pattern {
        Pattern {
            number: 0,
            ptype,
            chunk_bytes: chunk,
            u,
            bandwidth_mb_s: bw,
        }
    }

    #[test]
    fn curves_weight_by_u_and_skip_unmeasured_patterns() {
        let patterns = [
            p(0, MB, 0, 1000.0), // open: not in the figure
            p(0, MB, 4, 100.0),
            p(0, MB, 4, 300.0),
            p(0, KB, 2, 50.0),
            p(1, KB, 1, 7.0),
            p(0, 2 * MB, 4, 80.0),
        ];
        let c = type_curve(&patterns, 0, 2 * MB);
        assert_eq!(
            c,
            [Some(50.0), None, None, None, Some(200.0), None, Some(80.0)]
        );
        assert_eq!(types(&patterns), vec![0, 1]);
        assert_eq!(type_label(4), "type 4 seg-coll");
    }
}
