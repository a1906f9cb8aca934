//! The protocol file: one whitespace-separated line per pattern and access method, after
//! `#` lines on the run (the machine memory share of `-MT`, the hints given) and, when
//! hints were given, `# hint` lines per partition before its pattern lines.

use super::RunInfo;
use crate::hints::{shown, value_of, Hint};
use crate::results::PartitionResult;
use crate::schedule::Access;
use std::fmt::Write;

/// The protocol's header line.
pub const HEADER: &str =
    "# n access type pattern Tp_s l_bytes L_bytes repeats bytes time_s sync_s bw_MB_s errors";

/// The header of the `# hint` lines (written only when hints were given).
pub const HINT_HEADER: &str = "# hint n access type at key given reported   (at: open or the \
     pattern number; reported: as rank 0's library reports the key afterwards, - if not)";

/// The `#` lines before [`HEADER`]: the memory share of the machine (`-MT`) and the hints
/// given (`--hint`, the hints file's lines); empty without either.
pub fn preamble(info: &RunInfo) -> String {
    let mut out = String::new();
    if let Some(line) = super::machine_share_line(info) {
        let _ = writeln!(out, "# memory: {line}");
    }
    for (k, v) in &info.hints.global {
        let _ = writeln!(out, "# --hint {k}={}", shown(v));
    }
    if let Some(file) = &info.hints.file {
        let _ = writeln!(out, "# hints file '{}'", file.path);
        for l in &file.lines {
            let _ = writeln!(out, "# hints file line {}: {l}", l.line);
        }
        if file.lines.is_empty() {
            let _ = writeln!(out, "# (no hint lines)");
        }
    }
    if !info.hints.is_empty() {
        out.push_str(HINT_HEADER);
        out.push('\n');
    }
    out
}

/// The `# hint` lines of one partition: one per hint given, at open and before patterns.
pub fn hint_lines(partition: &PartitionResult) -> String {
    let mut out = String::new();
    let mut put = |f: &crate::hints::FileHints, at: &str, given: &[Hint], reported: &[Hint]| {
        for (k, v) in given {
            let _ = writeln!(
                out,
                "# hint {} {} {} {at} {k} {} {}",
                partition.processes,
                f.access.name(),
                f.ptype.index(),
                shown(v),
                value_of(reported, k).map_or("-".to_string(), shown)
            );
        }
    };
    for f in &partition.hints {
        put(f, "open", &f.given, &f.reported);
        for p in &f.patterns {
            put(f, &p.number.to_string(), &p.given, &p.reported);
        }
    }
    out
}

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
            hints: Vec::new(),
        };
        let text = protocol_lines(&part);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3 * 43);
        assert_eq!(hint_lines(&part), "");
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

#[cfg(test)]
mod hint_tests {
    use super::*;
    use crate::hints::{parse_hints_file, FileHints, Hints, PatternHints};
    use crate::patterns::PatternType;
    use crate::units::MB;

    #[test]
    fn preamble_and_hint_lines() {
        assert_eq!(preamble(&RunInfo::default()), "");
        let info = RunInfo {
            processes: 2,
            memory_per_process: 64 * MB,
            machine_memory: Some(128 * MB),
            hints: Hints {
                global: vec![("cb_buffer_size".into(), "1048576".into())],
                file: Some(
                    parse_hints_file("h", "all all all 1024 romio_cb_write disable").unwrap(),
                ),
            },
            ..RunInfo::default()
        };
        let pre = preamble(&info);
        let lines: Vec<&str> = pre.lines().collect();
        assert_eq!(
            lines,
            [
                "# memory: the job's 2 processes × 64 MB = 128 MB are 100.0 % of the machine's \
                 128 MB (-MT)",
                "# --hint cb_buffer_size=1048576",
                "# hints file 'h'",
                "# hints file line 1: all all all 1024 romio_cb_write disable",
                HINT_HEADER,
            ]
        );
        let h = |k: &str, v: &str| (k.to_string(), v.to_string());
        let part = PartitionResult {
            processes: 2,
            hints: vec![FileHints {
                access: Access::Read,
                ptype: PatternType::Segmented,
                given: vec![h("cb_buffer_size", "1048576")],
                reported: vec![h("romio_filesystem_type", "UFS: Generic")],
                patterns: vec![PatternHints {
                    number: 29,
                    chunk: 1024,
                    given: vec![h("romio_cb_write", "disable")],
                    reported: vec![h("romio_cb_write", "disable")],
                }],
            }],
            ..PartitionResult::default()
        };
        assert_eq!(
            hint_lines(&part),
            "# hint 2 read 3 open cb_buffer_size 1048576 -\n\
             # hint 2 read 3 29 romio_cb_write disable disable\n"
        );
        assert_eq!(shown("UFS: Generic"), "\"UFS: Generic\"");
    }
}
