//! Patterns and partitions that took far longer than their schedule: a stall that
//! recovered, a file server that paused, more ranks than cores. They are flagged (a
//! `WARNING` line on standard error while the run goes, an entry in the JSON's
//! `warnings`), never folded silently into the figures.
//!
//! - A pattern is flagged when it took more than [`PATTERN_FACTOR`] times its scheduled
//!   time and at least [`MIN_EXCESS_S`] more: the time-driven loop ends a healthy pattern
//!   within a few calls of its budget, so only a call or a sync that hung for seconds
//!   gets there.
//! - A partition is flagged when its wall time exceeds [`PARTITION_FACTOR`] times its
//!   schedule and [`MIN_EXCESS_S`] more: the fixed cost of each pattern (open, views,
//!   syncs, close, agreements) exceeded its slice of the schedule, as it does with many
//!   more ranks than cores.

use serde::{Deserialize, Serialize};

use crate::results::{PartitionResult, PatternResult, UnfinishedPartition};
use crate::schedule::Access;

/// How many times its schedule a pattern must take to be flagged.
pub const PATTERN_FACTOR: f64 = 10.0;

/// How many times its schedule a partition must take to be flagged.
pub const PARTITION_FACTOR: f64 = 2.0;

/// The least excess of a flagged pattern or partition, in seconds.
pub const MIN_EXCESS_S: f64 = 2.0;

/// One flagged pattern or partition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Warning {
    /// `slow_pattern` or `overrun_partition`.
    pub kind: String,
    /// The partition's processes.
    pub partition: usize,
    /// The access method (`write`, `rewrite`, `read`), for a pattern.
    pub access: Option<String>,
    /// The pattern number, for a pattern.
    pub pattern: Option<usize>,
    /// Seconds it took.
    pub seconds: f64,
    /// Seconds it was scheduled for.
    pub scheduled_s: f64,
    /// The words of the warning.
    pub message: String,
}

/// The warning for pattern `r` of the partition of `n` processes under `access`, if it is
/// one.
pub fn pattern(n: usize, access: Access, r: &PatternResult) -> Option<Warning> {
    if !is_slow(r) {
        return None;
    }
    let (took, budget) = (r.time_s, r.scheduled_s);
    Some(Warning {
        kind: "slow_pattern".into(),
        partition: n,
        access: Some(access.name().into()),
        pattern: Some(r.pattern.number),
        seconds: took,
        scheduled_s: budget,
        message: format!(
            "anomaly: partition n={n}, {} pattern {} (type {}) took {took:.1} s, {:.0} times \
             its {budget:.3} s: a call or a sync hung for seconds (a stall that recovered, a \
             file server that paused?); its bandwidth is not the file system's",
            access.name(),
            r.pattern.number,
            r.pattern.ptype.index(),
            took / budget
        ),
    })
}

/// The warning for partition `p`, if it ran far over its schedule. `ranks_per_core` is
/// the ranks per core of rank 0's node, said when above 1.
pub fn partition(p: &PartitionResult, ranks_per_core: Option<f64>) -> Option<Warning> {
    let (took, budget) = (p.wall_s, p.scheduled_s);
    if !took.is_finite() || budget <= 0.0 {
        return None;
    }
    if took <= PARTITION_FACTOR * budget || took - budget < MIN_EXCESS_S {
        return None;
    }
    let why = match ranks_per_core {
        Some(r) if r > 1.0 => format!(
            "; {r:.1} ranks per core on rank 0's node: with more ranks than cores every \
             collective waits for descheduled ranks"
        ),
        _ => String::new(),
    };
    Some(Warning {
        kind: "overrun_partition".into(),
        partition: p.processes,
        access: None,
        pattern: None,
        seconds: took,
        scheduled_s: budget,
        message: format!(
            "partition n={} ran {took:.0} s for a schedule of {budget:.0} s: each pattern's \
             fixed cost (open, views, syncs, close, the agreements between calls) exceeded its \
             slice of the schedule{why}",
            p.processes
        ),
    })
}

/// Every warning of `partitions`, in run order: each partition's slow patterns, then the
/// partition itself.
pub fn all(partitions: &[PartitionResult], ranks_per_core: Option<f64>) -> Vec<Warning> {
    let mut out = Vec::new();
    for p in partitions {
        for a in Access::ALL {
            out.extend(
                p.of(a)
                    .patterns
                    .iter()
                    .filter_map(|r| pattern(p.processes, a, r)),
            );
        }
        out.extend(partition(p, ranks_per_core));
    }
    out
}

/// The slow patterns of the partition a run stopped in.
pub fn unfinished(u: &UnfinishedPartition) -> Vec<Warning> {
    Access::ALL
        .iter()
        .flat_map(|&a| {
            u.access[a.index()]
                .iter()
                .filter_map(move |r| pattern(u.processes, a, r))
        })
        .collect()
}

/// Whether pattern `r` is one [`pattern`] flags (the text table marks its row).
pub fn is_slow(r: &PatternResult) -> bool {
    let (took, budget) = (r.time_s, r.scheduled_s);
    took.is_finite()
        && budget > 0.0
        && took > PATTERN_FACTOR * budget
        && took - budget >= MIN_EXCESS_S
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patterns::pattern_table;

    fn result(time_s: f64, scheduled_s: f64) -> PatternResult {
        PatternResult {
            pattern: pattern_table(64 << 20)[5],
            scheduled_s,
            repeats: 10,
            bytes: 1 << 20,
            time_s,
            sync_s: 0.0,
            errors: 0,
            checks: 2,
            io_s: time_s,
            check_s: 0.0,
        }
    }

    #[test]
    fn a_pattern_far_over_its_budget_is_flagged() {
        // The case: rank 1 stopped 60 s, one pattern at 384 times its budget.
        let w = pattern(2, Access::Write, &result(57.6, 0.15)).unwrap();
        assert!(w.message.contains("384 times"), "{}", w.message);
        assert_eq!((w.partition, w.pattern), (2, Some(5)));
        // Twice its budget, or ten times a tiny budget but within 2 s: the loop's grain.
        assert!(pattern(2, Access::Read, &result(0.3, 0.15)).is_none());
        assert!(pattern(2, Access::Read, &result(1.5, 0.1)).is_none());
    }
}
