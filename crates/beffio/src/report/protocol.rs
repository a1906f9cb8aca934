//! The protocol file: one whitespace-separated line per pattern and access method.

use crate::results::PartitionResult;
use crate::schedule::Access;
use std::fmt::Write;

/// The protocol's header line.
pub const HEADER: &str =
    "# n access type pattern Tp_s l_bytes L_bytes repeats bytes time_s sync_s bw_MB_s errors";

/// The protocol lines of one partition (no header).
pub fn protocol_lines(partition: &PartitionResult) -> String {
    let mut out = String::new();
    for a in Access::ALL {
        for r in &partition.of(a).patterns {
            let _ = writeln!(
                out,
                "{} {} {} {} {:.6} {} {} {} {} {:.6} {:.6} {:.3} {}",
                partition.processes,
                a.name(),
                r.pattern.ptype.index(),
                r.pattern.number,
                r.scheduled_s,
                r.pattern.chunk,
                r.pattern.memory,
                r.repeats,
                r.bytes,
                r.time_s,
                r.sync_s,
                r.bandwidth_mb_s(),
                r.errors
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patterns::pattern_table;
    use crate::results::{AccessResult, PatternResult, TypeTotal};
    use crate::units::MB;

    #[test]
    fn one_line_per_pattern_and_access_with_13_fields() {
        let patterns: Vec<PatternResult> = pattern_table(2 * MB)
            .into_iter()
            .map(|p| PatternResult {
                pattern: p,
                scheduled_s: 0.5,
                repeats: 3,
                bytes: 3_000_000,
                time_s: 2.0,
                sync_s: 0.25,
                errors: 0,
                checks: 0,
            })
            .collect();
        let a = AccessResult {
            patterns,
            types: [TypeTotal::default(); 5],
        };
        let part = PartitionResult {
            processes: 2,
            scheduled_s: 60.0,
            segment_bytes: 4 * MB,
            access: [a.clone(), a.clone(), a],
            wall_s: 60.0,
            posix_baseline: None,
        };
        let text = protocol_lines(&part);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3 * 43);
        assert_eq!(HEADER.split_whitespace().count() - 1, 13);
        assert_eq!(
            lines[1],
            "2 write 0 1 0.500000 2097152 2097152 3 3000000 2.000000 0.250000 1.500 0"
        );
        assert!(lines[43].starts_with("2 rewrite 0 0 "));
        assert!(lines[128].starts_with("2 read 4 42 "));
        assert!(lines.iter().all(|l| l.split_whitespace().count() == 13));
    }
}
