//! Our `#` lines of the protocol file (its layout is 2.1's, [`super::v21`]): the machine
//! memory share of `-MT` and the hints given, after its header, and when hints were
//! given, `# hint` lines per partition and access method before its pattern lines.

use super::RunInfo;
use crate::hints::{shown, value_of, Hint};
use crate::results::PartitionResult;
use crate::schedule::Access;
use std::fmt::Write;

/// The header of the `# hint` lines (written only when hints were given).
pub const HINT_HEADER: &str = "# hint n access type at key given reported   (at: open or the \
     pattern number; reported: as rank 0's library reports the key afterwards, - if not)";

/// The `#` lines after the protocol's header: the memory share of the machine (`-MT`) and the hints
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
    hint_lines_of(partition, None)
}

/// The `# hint` lines of one partition's files under `access` (all with `None`).
pub fn hint_lines_of(partition: &PartitionResult, access: Option<Access>) -> String {
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
    for f in partition
        .hints
        .iter()
        .filter(|f| access.is_none_or(|a| a == f.access))
    {
        put(f, "open", &f.given, &f.reported);
        for p in &f.patterns {
            put(f, &p.number.to_string(), &p.given, &p.reported);
        }
    }
    out
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
        assert_eq!(hint_lines_of(&part, Some(Access::Read)), hint_lines(&part));
        assert_eq!(hint_lines_of(&part, Some(Access::Write)), "");
        assert_eq!(shown("UFS: Generic"), "\"UFS: Generic\"");
    }
}
