//! The text report on stdout: header, per-partition figures and the final line. Names
//! that come from the machine or the user (host, path, file system) are shown with
//! [`outfile::shown::text`]: a control character is a visible escape, never a new line
//! or a terminal escape.

use super::RunInfo;
use crate::figures::{b_eff_io_2_1, b_eff_io_paper};
use crate::hints::{shown, value_of, Hint};
use crate::results::PartitionResult;
use crate::schedule::Access;
use crate::units::{format_size, MB};
use outfile::shown;
use std::fmt::Write;

/// The header printed before the run.
pub fn header(info: &RunInfo) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "b_eff_io {} (effective I/O bandwidth on MPI-IO)",
        info.version
    );
    let _ = writeln!(out, "date              {}", info.date);
    let _ = writeln!(out, "host              {}", shown::text(&info.host));
    let _ = writeln!(out, "processes         {}", info.processes);
    let _ = writeln!(
        out,
        "memory/process    {} MB ({} bytes)",
        info.memory_per_process / MB,
        info.memory_per_process
    );
    if let Some(line) = super::machine_share_line(info) {
        let _ = writeln!(out, "machine memory    {line}");
    }
    let _ = writeln!(out, "MPART             {}", format_size(info.mpart));
    let _ = writeln!(
        out,
        "scheduled time    {} s (full partition)",
        info.scheduled_time_s
    );
    let parts: Vec<String> = info.partitions.iter().map(|p| p.to_string()).collect();
    let _ = writeln!(out, "partitions        {}", parts.join(","));
    let _ = writeln!(out, "path              {}", shown::text(&info.path));
    if !info.file_system.mount.fs_type.is_empty() {
        let line = info.file_system.header_line();
        let _ = writeln!(out, "file system       {}", shown::text(&line));
    }
    out.push_str(&hints_header(info));
    let mut flags: Vec<String> = Vec::new();
    if info.noshared {
        flags.push("--noshared".into());
    }
    if info.drop_cache {
        flags.push(match info.file_system.drop_cache_limit() {
            Some(limit) => format!("--drop-cache ({limit})"),
            None => "--drop-cache (page cache dropped between write and read)".into(),
        });
    }
    if info.check_every_call {
        flags.push("--check-every-call".into());
    }
    if info.rewrite {
        flags.push("-rewrite (accepted: rewrite always runs)".into());
    }
    if info.nounique {
        flags.push(
            "-nounique (accepted: the files still get a fresh run directory, nothing is \
             overwritten, and none is opened with MPI_MODE_UNIQUE_OPEN)"
                .into(),
        );
    }
    if info.keep {
        flags.push("--keep (the run directory and its files stay)".into());
    }
    if let Some(e) = info.error_messages {
        flags.push(format!("-e {e} (data errors named per pattern and rank)"));
    }
    let _ = writeln!(
        out,
        "flags             {}",
        if flags.is_empty() {
            "none".to_string()
        } else {
            flags.join(" ")
        }
    );
    let _ = writeln!(
        out,
        "units             bandwidth MB/s = 10^6 B/s; sizes kB = 1024 B, MB = 1024^2 B"
    );
    out
}

/// The header's hints lines: the `--hint`s and the hints file's lines.
fn hints_header(info: &RunInfo) -> String {
    let hints = &info.hints;
    if hints.is_empty() && hints.file.is_none() {
        return "MPI-IO hints      none (MPI_INFO_NULL)\n".to_string();
    }
    let mut lines = Vec::new();
    for (k, v) in &hints.global {
        lines.push(format!("--hint {k}={} (every open)", shown(v)));
    }
    if let Some(file) = &hints.file {
        let n = file.lines.len();
        lines.push(format!(
            "hints file '{}': {n} hint line{}",
            file.path,
            if n == 1 { "" } else { "s" }
        ));
        for l in &file.lines {
            lines.push(format!("  line {}: {l}", l.line));
        }
    }
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        let label = if i == 0 { "MPI-IO hints" } else { "" };
        let _ = writeln!(out, "{label:<18}{l}");
    }
    out
}

/// `key=given → reported` for each hint given, `-` for a key the library does not report.
fn given_and_reported(given: &[Hint], reported: &[Hint]) -> String {
    if given.is_empty() {
        return "none".to_string();
    }
    given
        .iter()
        .map(|(k, v)| {
            let back = value_of(reported, k).map_or("-".to_string(), shown);
            format!("{k}={} → {back}", shown(v))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The MPI-IO hints of a partition's files (none given: empty): per access method and
/// pattern type, what was given at open and as the library reported it after, then the
/// patterns that got hints of their own.
pub fn hints_block(p: &PartitionResult) -> String {
    if p.hints.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "MPI-IO hints of partition n = {} (given → as rank 0's library reports them after \
         open or MPI_File_set_info; - not reported; all reported keys in the JSON):\n",
        p.processes
    );
    for f in &p.hints {
        let what = format!(
            "{:<7} type {} {:<9}",
            f.access.name(),
            f.ptype.index(),
            f.ptype.name()
        );
        let _ = writeln!(
            out,
            "  {what} open: {}",
            given_and_reported(&f.given, &f.reported)
        );
        for ph in &f.patterns {
            let _ = writeln!(
                out,
                "  {what} pattern {} ({}): {}",
                ph.number,
                format_size(ph.chunk),
                given_and_reported(&ph.given, &ph.reported)
            );
        }
    }
    out
}

/// The figures of one partition, printed after its table.
pub fn partition_figures(p: &PartitionResult) -> String {
    let mut out = format!(
        "partition n = {}: b_eff_io = {:.3} MB/s (paper, U-weighted), {:.3} MB/s (2.1 formula), \
         scheduled {:.1} s, took {:.1} s ({:.1} s of it outside the patterns' timed windows), \
         segment {} bytes\n",
        p.processes,
        b_eff_io_paper(p),
        b_eff_io_2_1(p),
        p.scheduled_s,
        p.wall_s,
        p.untimed_s(),
        p.segment_bytes
    );
    if let Some(b) = p.posix_baseline {
        let pattern = p.of(Access::Write).patterns[b.pattern].bandwidth_mb_s();
        let _ = writeln!(
            out,
            "posix baseline: pattern {}'s {} bytes again with write + fsync: {:.3} MB/s; \
             pattern {}: {:.3} MB/s, ratio {:.3}",
            b.pattern,
            b.bytes,
            b.bandwidth_mb_s(),
            b.pattern,
            pattern,
            pattern / b.bandwidth_mb_s()
        );
    }
    out
}

/// The run's final line ([`final_line`]): the partition with the largest paper figure,
/// beside it the 2.1 figure that release 2.1 would print for the same measurements (the
/// largest over the partitions, as the `.sum` file's last line); `None` without
/// partitions.
pub fn headline(info: &RunInfo, results: &[PartitionResult], verdict: &str) -> Option<String> {
    let (best, _) = crate::figures::system_best(results)?;
    let (_, figure_2_1) = crate::figures::system_best_2_1(results)?;
    Some(final_line(info, &results[best], figure_2_1, verdict))
}

/// The final line: `b_eff_io = X MB/s on N processes with M MB/PE, scheduled time T min`,
/// the 2.1 figure beside it and the verdict.
pub fn final_line(
    info: &RunInfo,
    best: &PartitionResult,
    figure_2_1: f64,
    verdict: &str,
) -> String {
    format!(
        "b_eff_io = {:.3} MB/s on {} processes with {} MB/PE, scheduled time {} min \
         (2.1 formula: {:.3} MB/s) {}\n",
        b_eff_io_paper(best),
        best.processes,
        info.memory_per_process / MB,
        trim_float(best.scheduled_s / 60.0),
        figure_2_1,
        verdict
    )
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::AccessResult;

    fn info() -> RunInfo {
        RunInfo {
            version: "0.1.0".into(),
            date: "2024-01-01T00:00:00Z".into(),
            host: "h".into(),
            processes: 4,
            memory_per_process: 512 * MB,
            mpart: 4 * MB,
            scheduled_time_s: 600.0,
            partitions: vec![4, 2],
            path: "/scratch".into(),
            cache_bound: 1 << 30,
            noshared: false,
            drop_cache: true,
            check_every_call: false,
            ..RunInfo::default()
        }
    }

    #[test]
    fn header_names_everything() {
        let h = header(&info());
        for needle in [
            "b_eff_io 0.1.0",
            "processes         4",
            "512 MB",
            "MPART             4 MB",
            "600 s",
            "4,2",
            "/scratch",
            "--drop-cache",
            "10^6 B/s",
        ] {
            assert!(h.contains(needle), "missing {needle} in\n{h}");
        }
        assert!(h.contains("MPI-IO hints      none (MPI_INFO_NULL)"), "{h}");
        assert!(!h.contains("machine memory"), "{h}");
    }

    /// Names from the machine and the user (host, path; the same for the `.sum` and
    /// `.prot` headers): a control character is a visible escape, no line is forged.
    #[test]
    fn names_with_control_characters_are_shown_escaped() {
        let plain = header(&info());
        let mut i = info();
        i.host = "h\nprocesses         9999\x1b[2J".into();
        i.path = "/s\rx\u{9b}1m".into();
        i.system.nodename = "n\ny".into();
        let h = header(&i);
        assert_eq!(h.lines().count(), plain.lines().count(), "{h}");
        assert!(
            h.contains("host              h\\nprocesses         9999\\x1b[2J\n"),
            "{h}"
        );
        assert!(h.contains("path              /s\\rx\\u{009b}1m\n"), "{h}");
        let sum = crate::report::v21::summary_file(&i, &[]);
        let plain_sum = crate::report::v21::summary_file(&info(), &[]);
        assert_eq!(sum.lines().count(), plain_sum.lines().count(), "{sum}");
        assert!(sum.contains("PATH=/s\\rx\\u{009b}1m, PREFIX=-\n"), "{sum}");
        assert!(sum.contains("hostname    : n\\ny\n"), "{sum}");
        for text in [&h, &sum] {
            assert!(
                !text.chars().any(|c| c.is_control() && c != '\n'),
                "{text:?}"
            );
        }
    }

    #[test]
    fn header_says_the_machine_share_the_hints_and_the_2_1_flags() {
        use crate::hints::{parse_hints_file, Hints};
        let mut i = info();
        // 4 processes × 512 MB of 8192 MB.
        i.machine_memory = Some(8192 * MB);
        i.rewrite = true;
        i.nounique = true;
        i.keep = true;
        i.error_messages = Some(5);
        i.hints = Hints {
            global: vec![("cb_buffer_size".into(), "1048576".into())],
            file: Some(
                parse_hints_file(
                    "hints",
                    "# c\nall write scatter on_open romio_cb_write enable\n",
                )
                .unwrap(),
            ),
        };
        let h = header(&i);
        for needle in [
            "machine memory    the job's 4 processes × 512 MB = 2048 MB are 25.0 % of the \
             machine's 8192 MB (-MT)",
            "MPI-IO hints      --hint cb_buffer_size=1048576 (every open)",
            "                  hints file 'hints': 1 hint line\n",
            "                    line 2: all write scatter on_open romio_cb_write enable\n",
            "-rewrite (accepted: rewrite always runs)",
            "-nounique (accepted: the files still get a fresh run directory",
            "--keep (the run directory and its files stay)",
            "-e 5 (data errors named per pattern and rank)",
        ] {
            assert!(h.contains(needle), "missing {needle} in\n{h}");
        }
    }

    #[test]
    fn hints_block_shows_given_and_reported() {
        use crate::hints::{FileHints, PatternHints};
        use crate::patterns::PatternType;
        use crate::schedule::Access;
        let h = |k: &str, v: &str| (k.to_string(), v.to_string());
        let p = PartitionResult {
            processes: 2,
            hints: vec![FileHints {
                access: Access::Write,
                ptype: PatternType::Separate,
                given: vec![h("cb_buffer_size", "1048576"), h("x_unknown", "1")],
                reported: vec![h("cb_buffer_size", "1048576"), h("cb_nodes", "1")],
                patterns: vec![PatternHints {
                    number: 21,
                    chunk: 1024,
                    given: vec![h("romio_ds_write", "disable")],
                    reported: vec![h("romio_ds_write", "disable")],
                }],
            }],
            ..PartitionResult::default()
        };
        let b = hints_block(&p);
        assert!(b.starts_with("MPI-IO hints of partition n = 2 "), "{b}");
        assert!(
            b.contains("  write   type 2 separate  open: cb_buffer_size=1048576 → 1048576, x_unknown=1 → -\n"),
            "{b}"
        );
        assert!(
            b.contains(
                "  write   type 2 separate  pattern 21 (1 kB): romio_ds_write=disable → disable\n"
            ),
            "{b}"
        );
        assert_eq!(hints_block(&PartitionResult::default()), "");
    }

    #[test]
    fn final_line_format() {
        let p = PartitionResult {
            processes: 4,
            scheduled_s: 600.0,
            segment_bytes: 0,
            access: std::array::from_fn(|_| AccessResult::default()),
            wall_s: 600.0,
            posix_baseline: None,
            hints: Vec::new(),
        };
        let line = final_line(&info(), &p, 12.5, "VALID");
        assert_eq!(
            line,
            "b_eff_io = 0.000 MB/s on 4 processes with 512 MB/PE, scheduled time 10 min (2.1 formula: 12.500 MB/s) VALID\n"
        );
        assert_eq!(trim_float(0.5), "0.5");
    }
}
