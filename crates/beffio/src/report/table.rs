//! The per-partition summary table: chunk sizes × types, one block per access method.

use crate::figures::{access_mean_2_1, u_weighted, weighted_mean, weighted_mean_of_type};
use crate::patterns::TYPE_COUNT;
use crate::results::{AccessResult, PartitionResult};
use crate::schedule::Access;
use crate::units::{format_size, KB, MB};
use std::fmt::Write;

/// The table's rows: chunk sizes in the order the spec gives (MPART last).
pub fn row_sizes(mpart: u64) -> [u64; 7] {
    [KB, KB + 8, 32 * KB, 32 * KB + 8, MB, MB + 8, mpart]
}

/// A cell: the U-weighted bandwidth of the measured patterns of `ptype` with chunk `l`.
pub fn cell(access: &AccessResult, ptype: usize, chunk: u64) -> Option<f64> {
    u_weighted(
        access
            .patterns
            .iter()
            .filter(|p| p.pattern.ptype.index() == ptype && p.pattern.chunk == chunk)
            .map(|p| (p.pattern.u, p.bandwidth_mb_s())),
    )
}

/// The line under a block with a marked row.
pub const SLOW_ROW_NOTE: &str = "* a pattern of this row took far longer than its schedule \
(a stall that recovered?): see the WARNING lines and the JSON's warnings\n";

/// Whether a pattern with chunk `chunk` is one [`crate::anomalies`] flags.
fn slow_row(access: &AccessResult, chunk: u64) -> bool {
    access
        .patterns
        .iter()
        .any(|p| p.pattern.chunk == chunk && crate::anomalies::is_slow(p))
}

/// The block of one access method: a row per chunk size, then `total` (2.1's: each
/// type's bytes / (open + patterns + close)) and `weighted` (the U-weighted mean of the
/// type's pattern bandwidths), then the access method's figures.
pub fn access_block(access: Access, result: &AccessResult, mpart: u64, ratio: f64) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} (MB/s, 1 MB/s = 10^6 B/s)", access.name());
    let _ = write!(out, "{:<16}", "chunk");
    for t in 0..TYPE_COUNT {
        let _ = write!(out, "{:>12}", format!("type {t}"));
    }
    out.push('\n');
    for size in row_sizes(mpart) {
        let label = if size == mpart {
            format!("MPART {}", format_size(size))
        } else {
            format_size(size)
        };
        let _ = write!(out, "{label:<16}");
        for t in 0..TYPE_COUNT {
            match cell(result, t, size) {
                Some(v) => {
                    let _ = write!(out, "{v:>12.3}");
                }
                None => {
                    let _ = write!(out, "{:>12}", "-");
                }
            }
        }
        if slow_row(result, size) {
            out.push_str(" *");
        }
        out.push('\n');
    }
    // 2.1's `total`: the type's bytes over its open + patterns + close.
    let _ = write!(out, "{:<16}", "total");
    for t in &result.types {
        let _ = write!(out, "{:>12.3}", t.bandwidth_mb_s());
    }
    out.push('\n');
    // The U-weighted mean of the type's pattern bandwidths.
    let _ = write!(out, "{:<16}", "weighted");
    for t in 0..TYPE_COUNT {
        let _ = write!(out, "{:>12.3}", weighted_mean_of_type(result, t));
    }
    out.push('\n');
    let flag = if crate::validity::cache_dominated(ratio) {
        " cache-dominated"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "{} weighted {:.3} MB/s, 2.1 mean {:.3} MB/s, {} bytes, {:.2}x memory{}",
        access.name(),
        weighted_mean(result),
        access_mean_2_1(result),
        result.bytes(),
        ratio,
        flag
    );
    if row_sizes(mpart).iter().any(|&size| slow_row(result, size)) {
        out.push_str(SLOW_ROW_NOTE);
    }
    out
}

/// All three blocks of a partition.
pub fn partition_table(partition: &PartitionResult, mpart: u64, ratios: [f64; 3]) -> String {
    let mut out = String::new();
    for a in Access::ALL {
        out.push_str(&access_block(a, partition.of(a), mpart, ratios[a.index()]));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patterns::pattern_table;
    use crate::results::{PatternResult, TypeTotal};

    fn access(mpart: u64) -> AccessResult {
        AccessResult {
            patterns: pattern_table(mpart)
                .into_iter()
                .map(|p| PatternResult {
                    pattern: p,
                    scheduled_s: 1.0,
                    repeats: 1,
                    // bandwidth = pattern number + 1 MB/s
                    bytes: (p.number as u64 + 1) * 1_000_000,
                    time_s: 1.0,
                    sync_s: 0.0,
                    errors: 0,
                    checks: 0,
                    io_s: 0.0,
                    check_s: 0.0,
                })
                .collect(),
            // type t: (t + 1) MB in 1 + 2 + 1 s = (t + 1) / 4 MB/s
            types: std::array::from_fn(|t| TypeTotal {
                bytes: (t as u64 + 1) * 1_000_000,
                open_s: 1.0,
                patterns_s: 2.0,
                close_s: 1.0,
                wall_s: 4.5,
            }),
        }
    }

    #[test]
    fn cells_pick_the_measured_patterns_of_a_size() {
        let a = access(4 * MB);
        assert_eq!(cell(&a, 0, KB), Some(6.0)); // pattern 5
                                                // type 0 has two measured 1 MB rows (2 and 3, both U = 4): mean of 3 and 4.
        assert_eq!(cell(&a, 0, MB), Some(3.5));
        assert_eq!(cell(&a, 1, 4 * MB), Some(11.0)); // pattern 10
        assert_eq!(cell(&a, 4, MB + 8), Some(42.0)); // pattern 41
        assert_eq!(cell(&a, 0, 3 * MB), None);
    }

    #[test]
    fn a_row_with_a_slow_pattern_is_marked() {
        let mut a = access(4 * MB);
        assert!(!access_block(Access::Read, &a, 4 * MB, 30.0).contains('*'));
        // Pattern 30 (type 3, 32 kB + 8) took 20 s for its 1 s.
        let p = a
            .patterns
            .iter_mut()
            .find(|p| p.pattern.number == 30)
            .unwrap();
        assert_eq!(p.pattern.chunk, 32 * KB + 8);
        p.time_s = 20.0;
        let block = access_block(Access::Read, &a, 4 * MB, 30.0);
        let marked: Vec<&str> = block.lines().filter(|l| l.ends_with(" *")).collect();
        assert_eq!(marked.len(), 1, "{block}");
        assert!(marked[0].starts_with("32 kB+8 "), "{block}");
        assert!(block.ends_with(SLOW_ROW_NOTE), "{block}");
    }

    #[test]
    fn block_layout() {
        let a = access(4 * MB);
        let block = access_block(Access::Write, &a, 4 * MB, 2.5);
        let lines: Vec<&str> = block.lines().collect();
        assert_eq!(lines.len(), 1 + 1 + 7 + 2 + 1);
        assert!(lines[0].starts_with("write (MB/s"));
        assert!(lines[1].starts_with("chunk") && lines[1].ends_with("type 4"));
        let labels: Vec<&str> = lines[2..9].iter().map(|l| l[..16].trim()).collect();
        assert_eq!(
            labels,
            [
                "1 kB",
                "1 kB+8",
                "32 kB",
                "32 kB+8",
                "1 MB",
                "1 MB+8",
                "MPART 4 MB"
            ]
        );
        // 1 kB row: type 0 pattern 5, type 1 pattern 13, type 2 pattern 21, 3: 29, 4: 38.
        let cols: Vec<f64> = lines[2][16..]
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect();
        assert_eq!(cols, vec![6.0, 14.0, 22.0, 30.0, 39.0]);
        let row = |l: &str| -> Vec<f64> {
            l[16..]
                .split_whitespace()
                .map(|v| v.parse().unwrap())
                .collect()
        };
        assert!(lines[9].starts_with("total "));
        assert_eq!(row(lines[9]), vec![0.25, 0.5, 0.75, 1.0, 1.25]);
        assert!(lines[10].starts_with("weighted "));
        let weighted: Vec<f64> = (0..5).map(|t| weighted_mean_of_type(&a, t)).collect();
        let shown: Vec<f64> = weighted
            .iter()
            .map(|w| (w * 1000.0).round() / 1000.0)
            .collect();
        assert_eq!(row(lines[10]), shown);
        // type 0: U-weighted over patterns 1..8 (bandwidth = number + 1).
        let w0 = (4.0 * 2.0 + 4.0 * 3.0 + 4.0 * 4.0 + 2.0 * (5.0 + 6.0 + 7.0 + 8.0 + 9.0)) / 22.0;
        assert!((weighted[0] - w0).abs() < 1e-12);
        assert!(lines[11].contains("cache-dominated"));
        assert_eq!(
            partition_table(
                &PartitionResult {
                    processes: 1,
                    scheduled_s: 1.0,
                    segment_bytes: MB,
                    access: [a.clone(), a.clone(), a],
                    wall_s: 1.0,
                    posix_baseline: None,
                    hints: Vec::new(),
                },
                4 * MB,
                [30.0; 3]
            )
            .matches("\ntotal ")
            .count(),
            3
        );
    }
}
