//! The text report on stdout: header, per-partition figures and the final line.

use super::RunInfo;
use crate::figures::{b_eff_io_2_1, b_eff_io_paper};
use crate::results::PartitionResult;
use crate::schedule::Access;
use crate::units::{format_size, MB};
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
    let _ = writeln!(out, "host              {}", info.host);
    let _ = writeln!(out, "processes         {}", info.processes);
    let _ = writeln!(
        out,
        "memory/process    {} MB ({} bytes)",
        info.memory_per_process / MB,
        info.memory_per_process
    );
    let _ = writeln!(out, "MPART             {}", format_size(info.mpart));
    let _ = writeln!(
        out,
        "scheduled time    {} s (full partition)",
        info.scheduled_time_s
    );
    let parts: Vec<String> = info.partitions.iter().map(|p| p.to_string()).collect();
    let _ = writeln!(out, "partitions        {}", parts.join(","));
    let _ = writeln!(out, "path              {}", info.path);
    let mut flags = Vec::new();
    if info.noshared {
        flags.push("--noshared");
    }
    if info.drop_cache {
        flags.push("--drop-cache (page cache dropped between write and read)");
    }
    if info.check_every_call {
        flags.push("--check-every-call");
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

/// The figures of one partition, printed after its table.
pub fn partition_figures(p: &PartitionResult) -> String {
    let mut out = format!(
        "partition n = {}: b_eff_io = {:.3} MB/s (paper, U-weighted), {:.3} MB/s (2.1 formula), \
         scheduled {:.1} s, took {:.1} s, segment {} bytes\n",
        p.processes,
        b_eff_io_paper(p),
        b_eff_io_2_1(p),
        p.scheduled_s,
        p.wall_s,
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
        };
        let line = final_line(&info(), &p, 12.5, "VALID");
        assert_eq!(
            line,
            "b_eff_io = 0.000 MB/s on 4 processes with 512 MB/PE, scheduled time 10 min (2.1 formula: 12.500 MB/s) VALID\n"
        );
        assert_eq!(trim_float(0.5), "0.5");
    }
}
