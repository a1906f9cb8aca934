//! The b_eff_io figures: the paper's U-weighted mean and the 2.1 formula.

use crate::results::{AccessResult, PartitionResult, PatternResult};
use crate::schedule::Access;

/// The paper's figure for one access method: `Σ U·bw / Σ U` over its patterns (MB/s).
pub fn weighted_mean(access: &AccessResult) -> f64 {
    u_weighted_mean(access.patterns.iter())
}

/// The U-weighted mean bandwidth of `patterns` (MB/s); 0 when their U sum to 0.
fn u_weighted_mean<'a>(patterns: impl Iterator<Item = &'a PatternResult>) -> f64 {
    u_weighted(patterns.map(|p| (p.pattern.u, p.bandwidth_mb_s()))).unwrap_or(0.0)
}

/// `Σ U·bw / Σ U` of `(U, bandwidth)` points, `None` when their U sum to 0: the rule of
/// every b_eff_io mean, of the tables' cells as of the figure (the patterns with U = 0,
/// the open patterns and segment fillers, weigh nothing).
pub fn u_weighted(points: impl Iterator<Item = (u32, f64)>) -> Option<f64> {
    let (sum, units) = points.fold((0.0, 0u64), |(s, u), (pu, bw)| {
        (s + f64::from(pu) * bw, u + u64::from(pu))
    });
    (units > 0).then(|| sum / units as f64)
}

/// The U-weighted mean over the patterns of one type in one access method (MB/s).
pub fn weighted_mean_of_type(access: &AccessResult, ptype: usize) -> f64 {
    u_weighted_mean(
        access
            .patterns
            .iter()
            .filter(|p| p.pattern.ptype.index() == ptype),
    )
}

/// **b_eff_io (paper)** of a partition: the U-weighted mean over all three access methods.
pub fn b_eff_io_paper(partition: &PartitionResult) -> f64 {
    u_weighted_mean(partition.access.iter().flat_map(|a| a.patterns.iter()))
}

/// The 2.1 mean of one access method: `(2·type0 + type1 + type2 + type3 + type4) / 6`
/// with each type's bandwidth = its bytes / (open + patterns + close).
pub fn access_mean_2_1(access: &AccessResult) -> f64 {
    let bw: Vec<f64> = access.types.iter().map(|t| t.bandwidth_mb_s()).collect();
    (2.0 * bw[0] + bw[1] + bw[2] + bw[3] + bw[4]) / 6.0
}

/// **b_eff_io (2.1)** of a partition: `sqrt(write_mean × read_mean)`, where write_mean
/// takes type 0's rewrite as type 0's second weight.
pub fn b_eff_io_2_1(partition: &PartitionResult) -> f64 {
    let w = &partition.of(Access::Write).types;
    let rw = &partition.of(Access::Rewrite).types;
    let write_mean = (w[0].bandwidth_mb_s()
        + rw[0].bandwidth_mb_s()
        + w[1..].iter().map(|t| t.bandwidth_mb_s()).sum::<f64>())
        / 6.0;
    let read_mean = access_mean_2_1(partition.of(Access::Read));
    (write_mean * read_mean).sqrt()
}

/// 2.1's system figure: the partition with the largest 2.1 figure, and that figure (what
/// the `.sum` and `.prot` files in 2.1's layout end with).
pub fn system_best_2_1(partitions: &[PartitionResult]) -> Option<(usize, f64)> {
    best_by(partitions, b_eff_io_2_1)
}

/// The system figure: the partition with the largest paper figure, and that figure.
pub fn system_best(partitions: &[PartitionResult]) -> Option<(usize, f64)> {
    best_by(partitions, b_eff_io_paper)
}

fn best_by(
    partitions: &[PartitionResult],
    figure: fn(&PartitionResult) -> f64,
) -> Option<(usize, f64)> {
    partitions
        .iter()
        .enumerate()
        .map(|(i, p)| (i, figure(p)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patterns::{pattern_table, TYPE_COUNT};
    use crate::results::{PatternResult, TypeTotal};
    use crate::units::MB;

    /// A partition where every pattern of access `a` moved `bw[a]` MB/s, except type 0
    /// write patterns which moved `type0_write` MB/s.
    fn partition(
        bw: [f64; 3],
        type0_write: f64,
        types: [[(u64, f64); TYPE_COUNT]; 3],
    ) -> PartitionResult {
        let table = pattern_table(2 * MB);
        let access = std::array::from_fn(|a| AccessResult {
            patterns: table
                .iter()
                .map(|p| {
                    let rate = if a == 0 && p.ptype.index() == 0 {
                        type0_write
                    } else {
                        bw[a]
                    };
                    PatternResult {
                        pattern: *p,
                        scheduled_s: 1.0,
                        repeats: 1,
                        bytes: (rate * 1e6) as u64,
                        time_s: 1.0,
                        sync_s: 0.0,
                        errors: 0,
                        checks: 0,
                        io_s: 0.0,
                        check_s: 0.0,
                    }
                })
                .collect(),
            types: types[a].map(|(bytes, time_s)| TypeTotal {
                bytes,
                patterns_s: time_s,
                wall_s: time_s,
                ..TypeTotal::default()
            }),
        });
        PartitionResult {
            processes: 2,
            scheduled_s: 60.0,
            segment_bytes: 2 * MB,
            access,
            wall_s: 60.0,
            posix_baseline: None,
            hints: Vec::new(),
        }
    }

    const T1: [(u64, f64); TYPE_COUNT] = [(1_000_000, 1.0); TYPE_COUNT];

    #[test]
    fn paper_figure_is_the_u_weighted_mean() {
        // write: type 0 (U=22) at 100, the other 42 units at 10; rewrite 20; read 300.
        let p = partition([10.0, 20.0, 300.0], 100.0, [T1; 3]);
        let write = (22.0 * 100.0 + 42.0 * 10.0) / 64.0; // 40.9375
        assert!((weighted_mean(p.of(Access::Write)) - write).abs() < 1e-9);
        assert!((weighted_mean_of_type(p.of(Access::Write), 0) - 100.0).abs() < 1e-9);
        let expected = (64.0 * write + 64.0 * 20.0 + 64.0 * 300.0) / 192.0; // 120.3125
        assert!((b_eff_io_paper(&p) - expected).abs() < 1e-9);
        assert!((b_eff_io_paper(&p) - 120.3125).abs() < 1e-9);
    }

    #[test]
    fn u_zero_patterns_do_not_count() {
        let mut p = partition([10.0, 10.0, 10.0], 10.0, [T1; 3]);
        for a in &mut p.access {
            for r in &mut a.patterns {
                if r.pattern.u == 0 {
                    r.bytes = 999_000_000_000;
                }
            }
        }
        assert!((b_eff_io_paper(&p) - 10.0).abs() < 1e-9);
    }

    #[test]
    fn formula_2_1_hand_computed() {
        // Type bandwidths (MB/s): write 12, 6, 6, 6, 6; rewrite 24, 1, 1, 1, 1; read 50, 20, 20, 20, 20.
        let mk = |v: [f64; 5]| v.map(|bw| ((bw * 2e6) as u64, 2.0));
        let p = partition(
            [1.0; 3],
            1.0,
            [
                mk([12.0, 6.0, 6.0, 6.0, 6.0]),
                mk([24.0, 1.0, 1.0, 1.0, 1.0]),
                mk([50.0, 20.0, 20.0, 20.0, 20.0]),
            ],
        );
        // write_mean = (12 + 24 + 6·4) / 6 = 10; read_mean = (2·50 + 4·20) / 6 = 30.
        assert!((access_mean_2_1(p.of(Access::Read)) - 30.0).abs() < 1e-9);
        assert!((access_mean_2_1(p.of(Access::Write)) - 8.0).abs() < 1e-9);
        assert!((b_eff_io_2_1(&p) - 300f64.sqrt()).abs() < 1e-9);
    }

    #[test]
    fn a_type_s_bandwidth_counts_its_open_and_close() {
        let t = TypeTotal {
            bytes: 6_000_000,
            open_s: 0.5,
            patterns_s: 1.0,
            close_s: 0.5,
            wall_s: 3.0,
        };
        assert_eq!(t.time_s(), 2.0);
        assert_eq!(t.bandwidth_mb_s(), 3.0);
    }

    #[test]
    fn system_figure_is_the_best_partition() {
        let a = partition([10.0; 3], 10.0, [T1; 3]);
        let mut b = partition([30.0; 3], 30.0, [[(3_000_000, 1.0); TYPE_COUNT]; 3]);
        b.processes = 1;
        let (i, v) = system_best(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(i, 1);
        assert!((v - 30.0).abs() < 1e-9);
        assert!(system_best(&[]).is_none());
        let (i, v) = system_best_2_1(&[b.clone(), a.clone()]).unwrap();
        assert_eq!(i, 0);
        assert!((v - 3.0).abs() < 1e-12);
    }
}
