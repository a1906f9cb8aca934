//! The 43-pattern table of b_eff_io and the MPART rule.

use crate::units::{GB, KB, MB};
use serde::Serialize;

/// Number of patterns in the table.
pub const PATTERN_COUNT: usize = 43;
/// Sum of the time units U over all patterns of one access method.
pub const U_TOTAL: u32 = 64;
/// Number of pattern types.
pub const TYPE_COUNT: usize = 5;

/// The five pattern types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum PatternType {
    /// 0: strided, one shared file, each rank owns every n-th chunk; collective calls.
    Scatter,
    /// 1: one shared file, shared file pointer, ordered collective calls.
    Shared,
    /// 2: one file per process, independent calls.
    Separate,
    /// 3: one shared file, rank r owns a contiguous segment; independent calls.
    Segmented,
    /// 4: as 3 with collective calls.
    SegmentedCollective,
}

impl PatternType {
    /// All types in order 0..4.
    pub const ALL: [PatternType; TYPE_COUNT] = [
        PatternType::Scatter,
        PatternType::Shared,
        PatternType::Separate,
        PatternType::Segmented,
        PatternType::SegmentedCollective,
    ];

    /// The type's number 0..4.
    pub fn index(self) -> usize {
        self as usize
    }

    /// A short name for headers and progress lines.
    pub fn name(self) -> &'static str {
        match self {
            PatternType::Scatter => "scatter",
            PatternType::Shared => "shared",
            PatternType::Separate => "separate",
            PatternType::Segmented => "segmented",
            PatternType::SegmentedCollective => "seg-coll",
        }
    }
}

/// Pattern type `t` as figures and comparisons name it: `type 0 scatter`, or `type 7`
/// for a number no type has.
pub fn type_label(t: usize) -> String {
    match PatternType::ALL.get(t) {
        Some(ty) => format!("type {t} {}", ty.name()),
        None => format!("type {t}"),
    }
}

/// What a pattern is for, beyond its sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Role {
    /// First pattern of a type (U = 0): runs exactly once, opens the file, pays the allocation.
    Open,
    /// A time-driven (types 0–2) or size-driven (types 3–4) measured pattern.
    Measured,
    /// Types 3 and 4: writes the rest of every rank's segment (size known only at run time).
    Filler,
}

/// One row of the pattern table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Pattern {
    /// Pattern number 0..42.
    pub number: usize,
    /// Pattern type.
    pub ptype: PatternType,
    /// `l`: contiguous chunk on disk in bytes (0 for a filler until the segment is known).
    pub chunk: u64,
    /// `L`: contiguous bytes in memory per call.
    pub memory: u64,
    /// `U`: time units.
    pub u: u32,
    /// Open, measured or filler.
    pub role: Role,
}

impl Pattern {
    /// Disk chunks moved by one call (`L / l`; 1 except for type 0's scatter rows).
    pub fn chunks_per_call(&self) -> u64 {
        self.memory.checked_div(self.chunk).unwrap_or(1)
    }
}

/// `MPART = max(2 MB, M/128)`, capped at 1 GB, rounded down to a whole MB so it stays
/// well-formed; `M` is the memory per MPI process in bytes.
pub fn mpart(memory_per_process: u64) -> u64 {
    let raw = (memory_per_process / 128) / MB * MB;
    raw.clamp(2 * MB, GB)
}

/// The chunk sizes of types 1–4 in table order; index 0 is the open pattern's 1 MB.
pub fn chunk_column(mpart: u64) -> [u64; 8] {
    [MB, mpart, MB, 32 * KB, KB, 32 * KB + 8, KB + 8, MB + 8]
}

/// Type 1's time units, in the order of [`chunk_column`].
pub const U_SHARED: [u32; 8] = [0, 4, 2, 1, 1, 1, 1, 2];
/// Types 2, 3 and 4's time units, in the order of [`chunk_column`].
pub const U_SEPARATE: [u32; 8] = [0, 2, 2, 1, 1, 1, 1, 2];

/// Builds the full 43-row table for a given MPART.
pub fn pattern_table(mpart: u64) -> Vec<Pattern> {
    let mut table = Vec::with_capacity(PATTERN_COUNT);
    let mut push = |ptype, chunk, memory, u, role| {
        let number = table.len();
        table.push(Pattern {
            number,
            ptype,
            chunk,
            memory,
            u,
            role,
        });
    };
    let scatter: [(u64, u64, u32); 9] = [
        (MB, MB, 0),
        (mpart, mpart, 4),
        (MB, 2 * MB, 4),
        (MB, MB, 4),
        (32 * KB, MB, 2),
        (KB, MB, 2),
        (32 * KB + 8, MB + 256, 2),
        (KB + 8, MB + 8 * KB, 2),
        (MB + 8, MB + 8, 2),
    ];
    for (i, (l, m, u)) in scatter.into_iter().enumerate() {
        let role = if i == 0 { Role::Open } else { Role::Measured };
        push(PatternType::Scatter, l, m, u, role);
    }
    let column = chunk_column(mpart);
    for (ptype, units) in [
        (PatternType::Shared, U_SHARED),
        (PatternType::Separate, U_SEPARATE),
        (PatternType::Segmented, U_SEPARATE),
        (PatternType::SegmentedCollective, U_SEPARATE),
    ] {
        for (i, (&l, &u)) in column.iter().zip(units.iter()).enumerate() {
            let role = if i == 0 { Role::Open } else { Role::Measured };
            push(ptype, l, l, u, role);
        }
        if matches!(
            ptype,
            PatternType::Segmented | PatternType::SegmentedCollective
        ) {
            push(ptype, 0, 0, 0, Role::Filler);
        }
    }
    table
}

/// The patterns of one type, in table order.
pub fn of_type(table: &[Pattern], ptype: PatternType) -> impl Iterator<Item = &Pattern> {
    table.iter().filter(move |p| p.ptype == ptype)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u_sum(table: &[Pattern], t: PatternType) -> u32 {
        of_type(table, t).map(|p| p.u).sum()
    }

    #[test]
    fn table_has_43_rows_numbered_in_order() {
        let t = pattern_table(4 * MB);
        assert_eq!(t.len(), PATTERN_COUNT);
        for (i, p) in t.iter().enumerate() {
            assert_eq!(p.number, i);
        }
        let counts: Vec<usize> = PatternType::ALL
            .iter()
            .map(|&ty| of_type(&t, ty).count())
            .collect();
        assert_eq!(counts, vec![9, 8, 8, 9, 9]);
    }

    #[test]
    fn u_sums_are_22_12_10_10_10() {
        let t = pattern_table(4 * MB);
        let sums: Vec<u32> = PatternType::ALL.iter().map(|&ty| u_sum(&t, ty)).collect();
        assert_eq!(sums, vec![22, 12, 10, 10, 10]);
        assert_eq!(t.iter().map(|p| p.u).sum::<u32>(), U_TOTAL);
    }

    #[test]
    fn first_pattern_of_each_type_opens_with_u_zero() {
        let t = pattern_table(4 * MB);
        let opens: Vec<usize> = t
            .iter()
            .filter(|p| p.role == Role::Open)
            .map(|p| p.number)
            .collect();
        assert_eq!(opens, vec![0, 9, 17, 25, 34]);
        assert!(t.iter().filter(|p| p.role == Role::Open).all(|p| p.u == 0));
        let fillers: Vec<usize> = t
            .iter()
            .filter(|p| p.role == Role::Filler)
            .map(|p| p.number)
            .collect();
        assert_eq!(fillers, vec![33, 42]);
    }

    #[test]
    fn mpart_rule_floor_and_cap() {
        assert_eq!(mpart(0), 2 * MB);
        assert_eq!(mpart(128 * MB), 2 * MB);
        assert_eq!(mpart(300 * MB), 2 * MB); // 2.34 MB rounds down to 2 MB
        assert_eq!(mpart(GB), 8 * MB);
        assert_eq!(mpart(16 * GB), 128 * MB);
        assert_eq!(mpart(128 * GB), GB);
        assert_eq!(mpart(1024 * GB), GB);
    }

    #[test]
    fn mpart_appears_in_every_type() {
        let t = pattern_table(16 * MB);
        let with_mpart: Vec<usize> = t
            .iter()
            .filter(|p| p.chunk == 16 * MB)
            .map(|p| p.number)
            .collect();
        assert_eq!(with_mpart, vec![1, 10, 18, 26, 35]);
    }

    #[test]
    fn non_well_formed_sizes_are_8_bytes_longer_and_aligned() {
        let t = pattern_table(4 * MB);
        let rows: Vec<(u64, u64)> = [6, 7, 8, 14, 15, 16]
            .iter()
            .map(|&i| (t[i].chunk, t[i].memory))
            .collect();
        assert_eq!(
            rows,
            vec![
                (32 * KB + 8, MB + 256),
                (KB + 8, MB + 8 * KB),
                (MB + 8, MB + 8),
                (32 * KB + 8, 32 * KB + 8),
                (KB + 8, KB + 8),
                (MB + 8, MB + 8),
            ]
        );
        for p in &t {
            assert_eq!(p.chunk % 8, 0, "pattern {}", p.number);
            assert_eq!(p.memory % 8, 0, "pattern {}", p.number);
            if p.chunk > 0 {
                assert_eq!(p.memory % p.chunk, 0, "pattern {}", p.number);
            }
        }
    }

    #[test]
    fn scatter_rows_move_several_chunks_per_call() {
        let t = pattern_table(4 * MB);
        let per_call: Vec<u64> = t[..9].iter().map(|p| p.chunks_per_call()).collect();
        assert_eq!(per_call, vec![1, 1, 2, 1, 32, 1024, 32, 1024, 1]);
        assert!(t[9..].iter().all(|p| p.chunks_per_call() == 1));
    }

    #[test]
    fn types_3_and_4_repeat_type_2s_column() {
        let t = pattern_table(4 * MB);
        let col = |ty| -> Vec<(u64, u32)> {
            of_type(&t, ty)
                .filter(|p| p.role != Role::Filler)
                .map(|p| (p.chunk, p.u))
                .collect()
        };
        assert_eq!(col(PatternType::Separate), col(PatternType::Segmented));
        assert_eq!(
            col(PatternType::Separate),
            col(PatternType::SegmentedCollective)
        );
    }
}
