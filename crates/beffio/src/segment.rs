//! The segment size of types 3 and 4 from the write counts of types 0–2.

use crate::patterns::{chunk_column, Pattern, PatternType};
use crate::units::MB;

/// Type 0's table rows paired with the 8 entries of [`chunk_column`]
/// (row 2, the 1 MB chunk with 2 MB in memory, is skipped).
pub const SCATTER_ROWS: [usize; 8] = [0, 1, 3, 4, 5, 6, 7, 8];

/// The size-driven plan of types 3 and 4.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentPlan {
    /// Repeat counts per chunk size, in the order of [`chunk_column`].
    pub repeats: [u64; 8],
    /// `Lseg`: every rank's segment in bytes, a whole number of MB.
    pub segment: u64,
    /// Bytes the filler pattern writes so that each segment is exactly `Lseg`.
    pub filler: u64,
}

/// Computes `r3[k] = min(r0[k]·L0[k]/l0[k], 10·r1[k], r2[k])`,
/// `Lseg = ⌈Σ r3[k]·l[k]⌉` (rounded up to a whole MB) and the filler `Lseg − Σ r3[k]·l[k]`
/// (0 to 1 MB − 8 bytes), as 2.1 does: the segment holds the chunks of every pattern of the
/// type once, the opening 1 MB (`k = 0`, one call) among them.
///
/// `r0` holds type 0's 9 write counts, `r1` and `r2` the 8 of types 1 and 2.
pub fn segment_plan(
    table: &[Pattern],
    mpart: u64,
    r0: &[u64],
    r1: &[u64],
    r2: &[u64],
) -> SegmentPlan {
    assert_eq!(r0.len(), 9, "type 0 has 9 patterns");
    assert_eq!(r1.len(), 8, "type 1 has 8 patterns");
    assert_eq!(r2.len(), 8, "type 2 has 8 patterns");
    let column = chunk_column(mpart);
    let mut repeats = [0u64; 8];
    for k in 0..8 {
        let row = &table[SCATTER_ROWS[k]];
        debug_assert_eq!(row.ptype, PatternType::Scatter);
        debug_assert_eq!(row.chunk, column[k]);
        let from_scatter = r0[SCATTER_ROWS[k]].saturating_mul(row.chunks_per_call());
        repeats[k] = from_scatter.min(r1[k].saturating_mul(10)).min(r2[k]);
    }
    let used: u64 = repeats.iter().zip(column.iter()).map(|(r, l)| r * l).sum();
    let segment = used.div_ceil(MB) * MB;
    SegmentPlan {
        repeats,
        segment,
        filler: segment - used,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patterns::pattern_table;

    #[test]
    fn hand_computed_example() {
        let mpart = 4 * MB;
        let table = pattern_table(mpart);
        let r0 = [1, 5, 9, 8, 10, 3, 10, 2, 7];
        let r1 = [1, 1, 2, 30, 100, 20, 90, 3];
        let r2 = [1, 6, 9, 400, 2000, 300, 3000, 4];
        let plan = segment_plan(&table, mpart, &r0, &r1, &r2);
        // k0: min(1,10,1)=1; MPART: min(5,10,6)=5; 1 MB: min(8,20,9)=8;
        // 32 kB: min(10·32,300,400)=300; 1 kB: min(3·1024,1000,2000)=1000;
        // 32 kB+8: min(320,200,300)=200; 1 kB+8: min(2048,900,3000)=900; 1 MB+8: min(7,30,4)=4.
        assert_eq!(plan.repeats, [1, 5, 8, 300, 1000, 200, 900, 4]);
        // Σ r·l = 52 941 440 (the opening 1 MB included) → 51 MB = 53 477 376.
        assert_eq!(plan.segment, 51 * MB);
        assert_eq!(plan.filler, 535_936);
        assert_eq!(plan.segment % MB, 0);
        assert_eq!(plan.filler % 8, 0);
    }

    /// The figures of issue 12: 2.1 gives these counts a segment of 161 MB and a filler of
    /// 3,296 bytes; adding another 1 MB for the opening pattern gave 162 MB and 1,051,872.
    #[test]
    fn the_segment_of_2_1() {
        let mpart = 2 * MB;
        let table = pattern_table(mpart);
        // Type 0's rows 0..8 (row 2, 1 MB with 2 MB in memory, is not paired).
        let r0 = [1, 66, 5, 9, 12, 2, 7, 1, 4];
        let r1 = [1, 10, 1, 30, 150, 40, 92, 1];
        let r2 = [1, 80, 6, 400, 3000, 200, 1000, 5];
        let plan = segment_plan(&table, mpart, &r0, &r1, &r2);
        assert_eq!(plan.repeats, [1, 66, 6, 300, 1500, 200, 920, 4]);
        // 1 MB + 66·2 MB + 6·1 MB + 300·32 kB + 1500·1 kB + 200·(32 kB+8) + 920·(1 kB+8)
        // + 4·(1 MB+8) = 168 817 440 bytes, 160.997 MB.
        let used = 168_817_440;
        assert_eq!(plan.segment, 161 * MB);
        assert_eq!(plan.filler, 3_296);
        assert_eq!(plan.segment - plan.filler, used);
        assert_ne!(plan.segment, 162 * MB);
    }

    #[test]
    fn filler_pads_to_the_next_whole_mb() {
        let mpart = 2 * MB;
        let table = pattern_table(mpart);
        let plan = segment_plan(&table, mpart, &[1; 9], &[1; 8], &[1; 8]);
        assert_eq!(plan.repeats, [1; 8]);
        // 1 + 2 + 1 MB, 32 kB, 1 kB, 32 kB+8, 1 kB+8, 1 MB+8: 5 MB + 67 608 bytes.
        assert_eq!(plan.segment, 6 * MB);
        assert_eq!(plan.filler, MB - 67_608);
        assert!(plan.filler < MB, "{plan:?}");
        // Counts that fill whole MB leave no filler.
        let plan = segment_plan(&table, mpart, &[1; 9], &[1, 1, 1, 0, 0, 0, 0, 0], &[1; 8]);
        assert_eq!((plan.segment, plan.filler), (4 * MB, 0));
    }
}
