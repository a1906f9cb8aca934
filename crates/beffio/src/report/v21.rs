//! `PREFIX.sum` and `PREFIX.prot` in the layout release 2.1 writes them, so that its
//! post-processing (the `eps/` scripts: `awk`, `sed` and `grep` over the `.sum`, then
//! gnuplot) reads our results as it reads its own.
//!
//! What those scripts rely on, and what the tests below check:
//!
//! - a partition's block starts with `Summary of file I/O bandwidth accumulated on N
//!   processes with M MByte/PE` (N is the 8th field) and ends with the line `b_eff_io of
//!   these measurements = … on N processes …`;
//! - inside it, one row per chunk size and access method, `%4d PEs %1d %8d %-7s` and five
//!   `%8.3f` bandwidths (types 0..4): the 3rd field the row's position 1..7, the 6th..10th
//!   the bandwidths, found with `grep " write  "`, `" rewrite"`, `" read   "`;
//! - per access method a `%4d PEs      total-%-7s` row with each type's bytes / (open +
//!   patterns + close);
//! - gnuplot settings on lines that start with `  set `.
//!
//! The figures are 2.1's: a row's cell is the one pattern of that type and chunk size
//! (type 0's pattern 2, 1 MB chunks from 2 MB of memory, has a line of its own), `total`
//! is 2.1's per-type figure, the access method's average is `(2·type0 + type1..4) / 6`,
//! a partition's b_eff_io is the 2.1 formula and the system's the largest of those. The
//! U-weighted figure of the paper (the headline on standard output) follows 2.1's last
//! line, on a line of its own.

use super::RunInfo;
use crate::figures::{
    access_mean_2_1, b_eff_io_2_1, b_eff_io_paper, system_best, system_best_2_1, weighted_mean,
    weighted_mean_of_type,
};
use crate::hints::type_word;
use crate::patterns::{PatternType, Role, TYPE_COUNT};
use crate::results::{AccessResult, PartitionResult, PatternResult, UnfinishedPartition};
use crate::schedule::Access;
use crate::units::{mb_per_s, MB};
use crate::validity::{self, Criteria, Rule, ValidityInput};
use outfile::shown;
use std::fmt::Write;

/// Type 0's pattern with 1 MB chunks from 2 MB of memory per call: not in the table rows,
/// on the `bw_pat2` line.
pub const PATTERN_2: usize = 2;

/// A cell whose pattern found data errors shows this (2.1's marker).
pub const ERROR_CELL: f64 = -999.999;

/// The operating system as `uname` names it: 2.1's header and plot title show it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct System {
    /// `sysname`, e.g. `Linux`.
    pub sysname: String,
    /// `nodename`: the host name.
    pub nodename: String,
    /// `release`: the kernel release.
    pub release: String,
    /// `version`: the kernel's build.
    pub version: String,
    /// `machine`, e.g. `x86_64`.
    pub machine: String,
}

impl System {
    /// This machine's, from `/proc/sys/kernel` (a missing entry is empty).
    pub fn this_machine() -> System {
        let read = |name: &str| {
            std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        System {
            sysname: read("ostype"),
            nodename: read("hostname"),
            release: read("osrelease"),
            version: read("version"),
            machine: std::env::consts::ARCH.to_string(),
        }
    }

    /// The five names separated by spaces, as 2.1's title and last line show them
    /// (control characters as visible escapes: the line stays one line).
    pub fn line(&self) -> String {
        shown::text(&format!(
            "{} {} {} {} {}",
            self.sysname, self.nodename, self.release, self.version, self.machine
        ))
    }
}

/// The access method as 2.1 spells it in its rows.
fn access_word(a: Access) -> &'static str {
    a.name()
}

/// `T` as given: whole seconds without a fraction.
fn seconds(t: f64) -> String {
    if t.fract() == 0.0 && t.abs() < 1e15 {
        format!("{}", t as i64)
    } else {
        format!("{t}")
    }
}

/// The memory the percentage of the summary refers to, in bytes: `-MT` when given, else
/// the memory of the nodes (the cache bound).
pub fn total_memory(info: &RunInfo) -> u64 {
    info.machine_memory.unwrap_or(info.cache_bound)
}

/// The header both files start with.
pub fn header(info: &RunInfo) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "b_eff_io {} (xylem), files in the layout of b_eff_io.c revision 2.1\n",
        info.version
    );
    let _ = writeln!(
        out,
        "MEMORY_PER_PROCESSOR = {:4} MBytes  [1MBytes = 1024*1024 bytes, 1MB = 1e6 bytes]",
        info.memory_per_process / MB
    );
    let _ = writeln!(
        out,
        "Maximum chunk size   = {:8.3} MBytes\n",
        info.mpart as f64 / MB as f64
    );
    let mut line = String::from("-N ");
    for (j, n) in info.partitions.iter().enumerate() {
        let _ = write!(line, "{}{n}", if j == 0 { ' ' } else { ',' });
    }
    let _ = write!(
        line,
        " T={}, MT={} MBytes",
        seconds(info.scheduled_time_s),
        total_memory(info) / MB
    );
    if let Some(file) = &info.hints.file {
        let _ = write!(line, " -i {}", file.path);
    }
    for (on, flag) in [
        (info.noshared, "-noshared"),
        (info.nounique, "-nounique"),
        (info.rewrite, "-rewrite"),
        (info.keep, "-keep"),
    ] {
        if on {
            let _ = write!(line, ", {flag}");
        }
    }
    let _ = writeln!(out, "{line}");
    // Names from the user and the machine: control characters shown as visible escapes,
    // so that no field starts a line of its own (2.1's scripts read these files by line).
    let _ = writeln!(
        out,
        "PATH={}, PREFIX={}",
        shown::text(&info.path),
        shown::text(info.prefix.as_deref().unwrap_or("-"))
    );
    let s = &info.system;
    let _ = writeln!(out, "       system name : {}", shown::text(&s.sysname));
    let _ = writeln!(out, "       hostname    : {}", shown::text(&s.nodename));
    let _ = writeln!(out, "       OS release  : {}", shown::text(&s.release));
    let _ = writeln!(out, "       OS version  : {}", shown::text(&s.version));
    let _ = writeln!(out, "       machine     : {}\n", shown::text(&s.machine));
    let _ = writeln!(out, "Date of measurement: {}\n", info.date);
    out
}

/// The measured pattern of `ptype` with chunk `l` that a table row shows (not pattern 2).
fn row_pattern(access: &AccessResult, ptype: usize, chunk: u64) -> Option<&PatternResult> {
    access.patterns.iter().find(|p| {
        p.pattern.ptype.index() == ptype
            && p.pattern.chunk == chunk
            && p.pattern.role == Role::Measured
            && p.pattern.u > 0
            && p.pattern.number != PATTERN_2
    })
}

/// A pattern's bandwidth as a cell shows it: [`ERROR_CELL`] when it found data errors.
fn cell_value(p: Option<&PatternResult>) -> f64 {
    match p {
        Some(p) if p.errors > 0 => ERROR_CELL,
        Some(p) => p.bandwidth_mb_s(),
        None => 0.0,
    }
}

/// Release 2.1's three criteria (its own time rule: the file claims its layout) for a
/// partition with `errors` data errors.
fn criteria(info: &RunInfo, errors: u64) -> Criteria {
    validity::criteria(
        &ValidityInput {
            scheduled_time_s: info.scheduled_time_s,
            shared_pointer: !info.noshared,
            data_errors: errors,
        },
        Rule::Release21,
    )
}

/// `PREFIX.sum`: the header, per partition the summary block 2.1's scripts read, and the
/// system's figure.
pub fn summary_file(info: &RunInfo, results: &[PartitionResult]) -> String {
    let mut out = header(info);
    let mb_pe = info.memory_per_process / MB;
    let rows = super::table::row_sizes(info.mpart);
    for p in results {
        let n = p.processes;
        let _ = writeln!(
            out,
            "\nSummary of file I/O bandwidth accumulated on {n:3} processes with {mb_pe:4} MByte/PE"
        );
        let _ = writeln!(out, "{}\n", "-".repeat(77));
        let _ = writeln!(
            out,
            " number pos chunk-   access   type=0   type=1   type=2   type=3   type=4"
        );
        let _ = writeln!(
            out,
            " of PEs     size (l) method  scatter  shared  separate segmentd seg-coll"
        );
        let _ = writeln!(
            out,
            "            [bytes]           [MB/s]   [MB/s]   [MB/s]   [MB/s]   [MB/s]"
        );
        let _ = writeln!(out, " {}\n", "-".repeat(71));
        for a in Access::ALL {
            let result = p.of(a);
            for (i, &size) in rows.iter().enumerate() {
                let _ = write!(out, "{n:4} PEs {} {size:8} {:<7}", i + 1, access_word(a));
                for t in 0..TYPE_COUNT {
                    let _ = write!(out, " {:8.3}", cell_value(row_pattern(result, t, size)));
                }
                out.push('\n');
            }
            let _ = write!(out, "{n:4} PEs      total-{:<7}", access_word(a));
            for t in &result.types {
                let _ = write!(out, " {:8.3}", t.bandwidth_mb_s());
            }
            out.push_str("\n\n");
        }
        let pat2 = Access::ALL.map(|a| {
            cell_value(
                p.of(a)
                    .patterns
                    .iter()
                    .find(|r| r.pattern.number == PATTERN_2),
            )
        });
        let _ = writeln!(
            out,
            "The rows above leave out pattern 2 (scatter, l = 1 MBytes, L = 2 MBytes):"
        );
        let _ = writeln!(
            out,
            "  bw_pat2= {:8.3} MB/s write, {:8.3} MB/s rewrite, {:8.3} MB/s read\n",
            pat2[0], pat2[1], pat2[2]
        );
        let _ = writeln!(out, "(For gnuplot:)");
        let _ = writeln!(
            out,
            "  set xtics ( '1k' 1, '+8' 2, '32k' 4, '+8' 5, '1M' 7, '+8' 8, '{}M' 10)",
            info.mpart / MB
        );
        let _ = writeln!(out, "  set title '{}' -4", info.system.line());
        let _ = writeln!(out, "  set label 1 'b_eff_io'  at 10,50000 right");
        let _ = writeln!(
            out,
            "  set label 2 'xylem {}'  at 10,25000 right",
            info.version
        );
        let _ = writeln!(
            out,
            "  set label 3 'T={:3.1}min' at 10,12500 right",
            p.scheduled_s / 60.0
        );
        let _ = writeln!(out, "  set label 4 'n={n}'     at 10,6250  right");
        if info.noshared {
            let _ = writeln!(out, "  set label 5 'type 1 without the'  at 10,0.50 right");
            let _ = writeln!(out, "  set label 6 'shared file pointer' at 10,0.25 right");
        }
        out.push('\n');
        for a in Access::ALL {
            let _ = writeln!(
                out,
                "weighted average bandwidth for {:<7} : {:8.3} MB/s on {n} processes",
                access_word(a),
                access_mean_2_1(p.of(a))
            );
        }
        let _ = writeln!(out, "(type=0 is weighted double)");
        let moved = p.of(Access::Write).bytes();
        let _ = writeln!(
            out,
            "\nTotal amount of data written/read with each access method: {:8.3} MBytes",
            moved as f64 / MB as f64
        );
        let total = total_memory(info);
        let _ = writeln!(
            out,
            "  = {:4.1} percent of the total memory ({} MBytes)",
            if total > 0 {
                100.0 * moved as f64 / total as f64
            } else {
                0.0
            },
            total / MB
        );
        let errors = p.errors();
        let _ = write!(
            out,
            "\nb_eff_io of these measurements = {:8.3} MB/s on {n} processes with {mb_pe:3} \
             MByte/PE and scheduled time={:3.1} min",
            b_eff_io_2_1(p),
            p.scheduled_s / 60.0
        );
        if errors > 0 {
            let _ = write!(out, ", with {errors} ERRORS --!--!--!--");
        }
        out.push_str("\n\n");
        let crit = criteria(info, errors);
        let valid = crit.valid();
        let _ = writeln!(
            out,
            "{} for comparison of different systems",
            if valid { "VALID" } else { "NOT VALID" }
        );
        if !valid {
            let said = |c: bool| if c { "reached" } else { "NOT reached" };
            let _ = writeln!(
                out,
                "  criterion 1: scheduled time {:3.1} min >= {} min -- {}",
                info.scheduled_time_s / 60.0,
                seconds(Rule::Release21.min_time_s() / 60.0),
                said(crit.time)
            );
            let _ = writeln!(
                out,
                "  criterion 2: shared file pointers must be used for pattern type 1 -- {}",
                said(crit.shared_pointer)
            );
            let _ = writeln!(
                out,
                "  criterion 3: error count ({errors}) == 0 -- {}",
                said(crit.no_errors)
            );
        }
    }
    let _ = writeln!(out, "\nMaximum over all number of PEs");
    let _ = writeln!(out, "{}\n", "-".repeat(30));
    out.push_str(&final_lines(info, results));
    out
}

/// 2.1's last line (the largest 2.1 figure over the partitions) and ours: the paper's
/// U-weighted figure of the best partition, the headline on standard output.
pub fn final_lines(info: &RunInfo, results: &[PartitionResult]) -> String {
    let mut out = String::new();
    let Some((i, best)) = system_best_2_1(results) else {
        return out;
    };
    let p = &results[i];
    let _ = write!(
        out,
        "\n b_eff_io = {best:8.3} MB/s on {} processes with {:3} MByte/PE, scheduled \
         time={:3.1} Min, on {}",
        p.processes,
        info.memory_per_process / MB,
        p.scheduled_s / 60.0,
        info.system.line()
    );
    let errors = p.errors();
    if !criteria(info, errors).valid() {
        out.push_str(", NOT VALID (see above)");
    }
    if errors > 0 {
        let _ = write!(out, ", with {errors} ERRORS --!--!--!--");
    }
    out.push('\n');
    if let Some((j, paper)) = system_best(results) {
        let _ = writeln!(
            out,
            " b_eff_io (paper, U-weighted; xylem's headline) = {paper:8.3} MB/s on {} processes",
            results[j].processes
        );
    }
    out
}

/// The file of a pattern type as the protocol names it: relative to the run directory,
/// rank 0's for type 2.
fn file_name(index: usize, n: usize, ptype: PatternType) -> String {
    match ptype {
        PatternType::Separate => format!("p{index}.n{n}/type2.0"),
        t => format!("p{index}.n{n}/type{}", t.index()),
    }
}

/// The column legend before each access method's lines in the protocol.
pub const PROTOCOL_LEGEND: &str = "\
-----+---+------+----+--------+----------+----------+----------------+-------+-------------+-------+-------+------+-----+-----+-----+-----+----------------
n    |a  | type |pat-|sched-  |     chunk|     chunk|file (in the    | calls |  MB (10^6 B)|  time |= I/O  |+ coll-|+ter- |+sync|mean |mean | bandwidth
     |0,1|      |tern|uled    |   on disk| in memory|run directory)  | per   |  moved by   |   [s] | calls |ectives|mina- |     |I/O  |check| of the pattern
     |2  |      |    |Tp [s]  |   [bytes]|   [bytes]|                | rank  |  all ranks  |       |       |       |tion  |     |call |     | [MB/s]
-----+---+------+----+--------+----------+----------+----------------+-------+-------------+-------+-------+------+-----+-----+-----+-----+----------------
";

/// One pattern's protocol line: 2.1's fields; its time split into the I/O calls, the
/// collectives after them (barriers, agreements), the termination checks and the sync;
/// then the mean time of one I/O call and of one check.
pub fn pattern_line(n: usize, a: Access, file: &str, r: &PatternResult) -> String {
    let rest = (r.time_s - r.io_s - r.check_s - r.sync_s).max(0.0);
    let per = |t: f64, k: u64| if k > 0 { t / k as f64 } else { 0.0 };
    let mut line = format!(
        "n={n:<3} a={} type={} p={:2} Tp={:5.2} l={:8} L={:8} {file:<16} r={:5} S={:8.3} MB \
         t={:5.2} ={:6.3}+{:6.3}+{:5.3}+{:5.3} {:5.3} {:5.3} bw={:8.3} MB/s",
        a.index(),
        r.pattern.ptype.index(),
        r.pattern.number,
        r.scheduled_s,
        r.pattern.chunk,
        r.pattern.memory,
        r.repeats,
        r.bytes as f64 * 1e-6,
        r.time_s,
        r.io_s,
        rest,
        r.check_s,
        r.sync_s,
        per(r.io_s, r.repeats),
        per(r.check_s, r.checks),
        r.bandwidth_mb_s()
    );
    if r.errors > 0 {
        let _ = write!(line, " {} ERRORS", r.errors);
    }
    line
}

/// `PREFIX.prot`: the header, our `#` lines (`-MT`, hints), then per access method the
/// legend and, per partition, its hint lines, a line per pattern, a line per type (open,
/// close, 2.1's figure) and one for the access method; then the partitions' totals and
/// the system's figure.
pub fn protocol_file(info: &RunInfo, results: &[PartitionResult]) -> String {
    let mut out = header(info);
    out.push_str(&super::protocol::preamble(info));
    for a in Access::ALL {
        out.push('\n');
        out.push_str(PROTOCOL_LEGEND);
        for (index, p) in results.iter().enumerate() {
            let n = p.processes;
            out.push_str(&super::protocol::hint_lines_of(p, Some(a)));
            let result = p.of(a);
            for t in PatternType::ALL {
                let file = file_name(index, n, t);
                for r in result.patterns.iter().filter(|r| r.pattern.ptype == t) {
                    out.push_str(&pattern_line(n, a, &file, r));
                    out.push('\n');
                }
                let total = &result.types[t.index()];
                let _ = write!(
                    out,
                    " total pattern type:  S={:7.3} MB  t={:4.2} t_op={:4.2} t_cl={:4.2} \
                     wbw={:8.3} MB/s b_eff_io_{}_{}={:8.3} MB/s",
                    total.bytes as f64 * 1e-6,
                    total.time_s(),
                    total.open_s,
                    total.close_s,
                    weighted_mean_of_type(result, t.index()),
                    a.name(),
                    type_word(t),
                    total.bandwidth_mb_s()
                );
                if matches!(t, PatternType::Segmented | PatternType::SegmentedCollective) {
                    let _ = write!(
                        out,
                        " Lseg={:.0} MBytes",
                        p.segment_bytes as f64 / MB as f64
                    );
                }
                out.push('\n');
            }
            let errors = result.errors();
            if errors > 0 {
                let _ = write!(out, " ----- with {errors} ERRORS --!--!--!--!--");
            }
            let t = result.types_time_s();
            let _ = writeln!(
                out,
                " total access method: S={:7.3} MB  t={:4.2} (Tn={:.0}sec) bw={:8.3} MB/s, \
                 wbw={:8.3} MB/s, b_eff_io_{}={:8.3} MB/s",
                result.bytes() as f64 * 1e-6,
                t,
                p.scheduled_s,
                mb_per_s(result.bytes(), t),
                weighted_mean(result),
                a.name(),
                access_mean_2_1(result)
            );
        }
    }
    out.push('\n');
    for p in results {
        let bytes: u64 = p.access.iter().map(|a| a.bytes()).sum();
        let t = p.access.iter().fold(0.0, |s, a| s + a.types_time_s());
        let _ = writeln!(
            out,
            " total partition: n={:<3} S={:7.3} MB  t={:4.2} bw={:8.3} MB/s, wbw={:8.3} MB/s, \
             b_eff_io={:8.3} MB/s",
            p.processes,
            bytes as f64 * 1e-6,
            t,
            mb_per_s(bytes, t),
            b_eff_io_paper(p),
            b_eff_io_2_1(p)
        );
    }
    let wall = results.iter().fold(0.0, |s, p| s + p.wall_s);
    let _ = writeln!(out, " total execution time is {wall:7.2} sec");
    if let Some((_, best)) = system_best_2_1(results) {
        let _ = writeln!(
            out,
            "\n b_eff_io := maximum over all bw_partition = {best:8.3} MB/s"
        );
    }
    out.push_str(&final_lines(info, results));
    out
}

/// The lines a stopped run adds to `PREFIX.prot` for the partition it stopped in (the
/// one after the `index` finished ones): a `#` line saying so, then the legend and a line
/// per pattern measured, per access method. No totals: its types are not all there.
pub fn unfinished_protocol(index: usize, u: &UnfinishedPartition) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n# partition n={} did not finish (the run stopped in it): the {} patterns it \
         measured, without totals",
        u.processes,
        u.measured()
    );
    for a in Access::ALL {
        let patterns = &u.access[a.index()];
        if patterns.is_empty() {
            continue;
        }
        out.push_str(PROTOCOL_LEGEND);
        for r in patterns {
            let file = file_name(index, u.processes, r.pattern.ptype);
            out.push_str(&pattern_line(u.processes, a, &file, r));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patterns::pattern_table;
    use crate::results::TypeTotal;

    /// A partition of `n` processes where pattern `p` of access `a` moved
    /// `(a + 1) · (p + 1) · n` MB/s, type `t` took 1 s to open and 0.5 s to close.
    fn partition(n: usize, mpart: u64) -> PartitionResult {
        let access = std::array::from_fn(|a| {
            let patterns: Vec<PatternResult> = pattern_table(mpart)
                .into_iter()
                .map(|p| PatternResult {
                    pattern: p,
                    scheduled_s: 0.25,
                    repeats: 4,
                    bytes: ((a + 1) * (p.number + 1) * n) as u64 * 1_000_000,
                    time_s: 1.0,
                    sync_s: 0.125,
                    errors: 0,
                    checks: 2,
                    io_s: 0.5,
                    check_s: 0.25,
                })
                .collect();
            let types = std::array::from_fn(|t| {
                let of = || patterns.iter().filter(|r| r.pattern.ptype.index() == t);
                TypeTotal {
                    bytes: of().map(|r| r.bytes).sum(),
                    open_s: 1.0,
                    patterns_s: crate::results::patterns_time_s(of()),
                    close_s: 0.5,
                    wall_s: 20.0,
                }
            });
            AccessResult { patterns, types }
        });
        PartitionResult {
            processes: n,
            scheduled_s: 30.0 * n as f64 / 4.0,
            segment_bytes: 5 * MB,
            access,
            wall_s: 40.0,
            posix_baseline: None,
            hints: Vec::new(),
        }
    }

    fn info() -> RunInfo {
        RunInfo {
            version: "0.1.0".into(),
            date: "2024-01-01T00:00:00+00:00".into(),
            processes: 4,
            memory_per_process: 512 * MB,
            mpart: 4 * MB,
            scheduled_time_s: 30.0,
            partitions: vec![4, 2],
            path: "/scratch".into(),
            cache_bound: 8192 * MB,
            prefix: Some("run".into()),
            system: System {
                sysname: "Linux".into(),
                nodename: "node1".into(),
                release: "6.1".into(),
                version: "#1 SMP".into(),
                machine: "x86_64".into(),
            },
            ..RunInfo::default()
        }
    }

    fn fields(line: &str) -> Vec<&str> {
        line.split_whitespace().collect()
    }

    /// 2.1's `beffio_eps`: the `Summary …` lines give the partitions (8th field), and the
    /// `PEs      total-<access>` rows (the awk rule), renumbered `PEs <i>`, give columns 3
    /// and 5..9 to gnuplot.
    #[test]
    fn the_awk_rules_of_beffio_eps_find_every_total_row() {
        let parts = [partition(4, 4 * MB), partition(2, 4 * MB)];
        let sum = summary_file(&info(), &parts);
        let summaries: Vec<&str> = sum
            .lines()
            .filter(|l| {
                l.starts_with("Summary of file I/O bandwidth accumulated on ")
                    && l.contains(" processes with ")
                    && l.ends_with(" MByte/PE")
            })
            .collect();
        assert_eq!(summaries.len(), 2, "{sum}");
        assert_eq!(fields(summaries[0])[7], "4");
        assert_eq!(fields(summaries[1])[7], "2");
        for a in Access::ALL {
            let key = format!(" PEs      total-{} ", a.name());
            let rows: Vec<&str> = sum.lines().filter(|l| l.contains(&key)).collect();
            assert_eq!(rows.len(), 2, "{key:?} in\n{sum}");
            for (i, (row, p)) in rows.iter().zip(&parts).enumerate() {
                // awk's gsub("PEs  ", "PEs " i), then gnuplot's `using 3:5` .. `3:9`.
                let renumbered = row.replacen("PEs  ", &format!("PEs {}", i + 1), 1);
                let f = fields(&renumbered);
                assert_eq!(f.len(), 9, "{renumbered}");
                assert_eq!(f[0], p.processes.to_string());
                assert_eq!(f[2], (i + 1).to_string());
                assert_eq!(f[3], format!("total-{}", a.name()));
                for t in 0..TYPE_COUNT {
                    let v: f64 = f[4 + t].parse().unwrap();
                    let want = p.of(a).types[t].bandwidth_mb_s();
                    assert!((v - want).abs() <= 5e-4, "{t}: {v} vs {want}");
                }
            }
        }
        // Not "total-rewrite  - - - -": the rewrite plot with every type.
        assert!(!sum
            .lines()
            .any(|l| l.contains("total-rewrite") && l.matches(" -").count() >= 4));
    }

    /// 2.1's `beffio_part_eps`: the lines from `Sum… N proc` to `these… N proc`, positions
    /// 3..7 moved to 4, 5, 7, 8, 10; `grep " write  "` and the others give gnuplot column 3
    /// (the position) and 6..10 (types 0..4); `grep "  set "` the settings.
    #[test]
    fn the_sed_and_grep_rules_of_beffio_part_eps_find_every_row() {
        let parts = [partition(4, 4 * MB), partition(2, 4 * MB)];
        let sum = summary_file(&info(), &parts);
        for p in &parts {
            let n = p.processes;
            let lines: Vec<&str> = sum.lines().collect();
            let start = lines
                .iter()
                .position(|l| l.starts_with("Sum") && l.contains(&format!(" {n} proc")))
                .unwrap();
            let end = start
                + lines[start..]
                    .iter()
                    .position(|l| l.contains("these") && l.contains(&format!(" {n} proc")))
                    .unwrap();
            let block: Vec<String> = lines[start..=end]
                .iter()
                .map(|l| {
                    [("PEs 7", "PEs 10"), ("PEs 6", "PEs 8"), ("PEs 5", "PEs 7")]
                        .iter()
                        .chain(&[("PEs 4", "PEs 5"), ("PEs 3", "PEs 4")])
                        .fold(l.to_string(), |s, (a, b)| s.replacen(a, b, 1))
                })
                .collect();
            for (a, grep) in [
                (Access::Write, " write  "),
                (Access::Rewrite, " rewrite"),
                (Access::Read, " read   "),
            ] {
                // Rows gnuplot can plot: a number in column 3 and 6..10.
                let rows: Vec<Vec<f64>> = block
                    .iter()
                    .filter(|l| l.contains(grep))
                    .filter_map(|l| {
                        let f = fields(l);
                        let num = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok());
                        Some(vec![num(2)?, num(5)?, num(6)?, num(7)?, num(8)?, num(9)?])
                    })
                    .collect();
                assert_eq!(rows.len(), 7, "{grep:?} in\n{}", block.join("\n"));
                let x: Vec<f64> = rows.iter().map(|r| r[0]).collect();
                assert_eq!(x, [1.0, 2.0, 4.0, 5.0, 7.0, 8.0, 10.0]);
                // The 1 kB row of type 2 is pattern 21: (a + 1) · 22 · n MB/s.
                let want = ((a.index() + 1) * 22 * n) as f64;
                assert_eq!(rows[0][3], want);
                // The 1 MB row of type 0 is pattern 3, not pattern 2.
                assert_eq!(rows[4][1], ((a.index() + 1) * 4 * n) as f64);
            }
            let sets: Vec<&String> = block.iter().filter(|l| l.contains("  set ")).collect();
            assert_eq!(sets.len(), 6, "{sets:?}");
            assert!(sets.iter().all(|l| l.starts_with("  set ")));
            assert!(sets[0].ends_with("'4M' 10)"), "{}", sets[0]);
            assert!(block
                .iter()
                .any(|l| l.starts_with("  bw_pat2= ") && l.ends_with(" MB/s read")));
        }
    }

    #[test]
    fn the_headline_2_1_figure_is_the_largest_over_partitions_as_in_the_sum() {
        // The paper's best partition (the larger) is not 2.1's: the smaller one's types
        // moved a hundred times the bytes in the same time.
        let mut small = partition(2, 4 * MB);
        for a in &mut small.access {
            for t in &mut a.types {
                t.bytes *= 100;
            }
        }
        let parts = [partition(4, 4 * MB), small];
        assert_eq!(system_best(&parts).map(|(i, _)| i), Some(0));
        let (j, best_2_1) = system_best_2_1(&parts).unwrap();
        assert_eq!(j, 1);
        assert!(b_eff_io_2_1(&parts[0]) < best_2_1);
        let line = crate::report::text::headline(&info(), &parts, "VALID").unwrap();
        assert!(line.starts_with(&format!(
            "b_eff_io = {:.3} MB/s on 4 processes",
            b_eff_io_paper(&parts[0])
        )));
        assert!(
            line.contains(&format!("(2.1 formula: {best_2_1:.3} MB/s)")),
            "{line}"
        );
        let sum = summary_file(&info(), &parts);
        assert!(
            sum.contains(&format!("\n b_eff_io = {best_2_1:8.3} MB/s on 2 processes")),
            "{sum}"
        );
        assert!(crate::report::text::headline(&info(), &[], "VALID").is_none());
    }

    #[test]
    fn the_header_records_keep_among_the_2_1_flags() {
        let mut i = info();
        assert!(!header(&i).contains("-keep"));
        i.keep = true;
        i.rewrite = true;
        let h = header(&i);
        let line = h.lines().find(|l| l.starts_with("-N ")).unwrap();
        assert!(line.ends_with(", -rewrite, -keep"), "{line}");
    }

    #[test]
    fn summary_block_figures_and_criteria() {
        let mut bad = partition(2, 4 * MB);
        bad.access[2].patterns[30].errors = 3;
        let parts = [partition(4, 4 * MB), bad];
        let sum = summary_file(&info(), &parts);
        // Pattern 2 (write): 1 · 3 · 4 MB/s on 4 processes.
        assert!(
            sum.contains(
                "  bw_pat2=   12.000 MB/s write,   24.000 MB/s rewrite,   36.000 MB/s read\n"
            ),
            "{sum}"
        );
        let p = &parts[0];
        let line = format!(
            "weighted average bandwidth for read    : {:8.3} MB/s on 4 processes",
            access_mean_2_1(p.of(Access::Read))
        );
        assert!(sum.contains(&line), "{line} in\n{sum}");
        assert!(sum.contains(&format!(
            "\nb_eff_io of these measurements = {:8.3} MB/s on 4 processes with 512 MByte/PE \
             and scheduled time=0.5 min\n",
            b_eff_io_2_1(p)
        )));
        // 2.1's own rule, as the file claims 2.1's layout.
        assert!(sum.contains("criterion 1: scheduled time 0.5 min >= 30 min -- NOT reached"));
        assert!(sum.contains(
            "criterion 2: shared file pointers must be used for pattern type 1 -- reached"
        ));
        assert!(sum.contains("criterion 3: error count (0) == 0 -- reached"));
        assert!(sum.contains("criterion 3: error count (3) == 0 -- NOT reached"));
        assert!(sum.contains(", with 3 ERRORS --!--!--!--"));
        // The read row of type 3 at 32 kB + 8 (pattern 30) shows the error marker.
        assert!(sum
            .lines()
            .any(|l| l.starts_with("   2 PEs 4    32776 read   ") && l.contains(" -999.999 ")));
        let (i, best) = system_best_2_1(&parts).unwrap();
        assert_eq!(i, 0);
        assert!(sum.contains(&format!(
            "\n b_eff_io = {best:8.3} MB/s on 4 processes with 512 MByte/PE, scheduled \
             time=0.5 Min, on Linux node1 6.1 #1 SMP x86_64, NOT VALID (see above)\n"
        )));
        assert!(sum.contains(" b_eff_io (paper, U-weighted; xylem's headline) = "));
        let head = header(&info());
        assert!(head.contains("MEMORY_PER_PROCESSOR =  512 MBytes"));
        assert!(head.contains("Maximum chunk size   =    4.000 MBytes\n"));
        assert!(head.contains("-N  4,2 T=30, MT=8192 MBytes\n"), "{head}");
        assert!(head.contains("PATH=/scratch, PREFIX=run\n"));
    }

    #[test]
    fn a_stopped_partition_lists_the_patterns_it_measured() {
        let whole = partition(2, 4 * MB);
        let u = UnfinishedPartition {
            processes: 2,
            scheduled_s: 7.5,
            access: [
                whole.of(Access::Write).patterns.clone(),
                whole.of(Access::Rewrite).patterns[..5].to_vec(),
                Vec::new(),
            ],
        };
        let text = unfinished_protocol(1, &u);
        assert!(
            text.contains(
                "# partition n=2 did not finish (the run stopped in it): the 48 patterns"
            ),
            "{text}"
        );
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("n=")).collect();
        assert_eq!(lines.len(), 48);
        assert!(
            lines[0].starts_with("n=2   a=0 type=0 p= 0 "),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains(" p1.n2/type0 "), "{}", lines[0]);
        assert!(lines[47].starts_with("n=2   a=1 "), "{}", lines[47]);
        assert!(!text.contains(" total "), "{text}");
    }

    #[test]
    fn protocol_has_every_pattern_type_and_access_method() {
        let parts = [partition(4, 4 * MB), partition(2, 4 * MB)];
        let prot = protocol_file(&info(), &parts);
        let patterns: Vec<&str> = prot.lines().filter(|l| l.starts_with("n=")).collect();
        assert_eq!(patterns.len(), 2 * 3 * 43);
        // 1 s = 0.5 s of calls + 0.125 s of collectives + 0.25 s of checks + 0.125 s sync.
        let first = patterns[0];
        assert!(
            first.starts_with("n=4   a=0 type=0 p= 0 Tp= 0.25 l= 1048576 L= 1048576 p0.n4/type0      r=    4 S=   4.000 MB t= 1.00 = 0.500+ 0.125+0.250+0.125 0.125 0.125 bw=   4.000 MB/s"),
            "{first}"
        );
        assert!(prot.contains(" p1.n2/type2.0    "));
        let types: Vec<&str> = prot
            .lines()
            .filter(|l| l.starts_with(" total pattern type:"))
            .collect();
        assert_eq!(types.len(), 2 * 3 * 5);
        let t = &parts[0].of(Access::Write).types[0];
        assert!(
            types[0].starts_with(&format!(
                " total pattern type:  S={:7.3} MB  t={:4.2} t_op=1.00 t_cl=0.50 ",
                t.bytes as f64 * 1e-6,
                t.time_s()
            )),
            "{}",
            types[0]
        );
        assert!(types[0].ends_with(&format!(
            "b_eff_io_write_scatter={:8.3} MB/s",
            t.bandwidth_mb_s()
        )));
        assert!(types[3].ends_with(" Lseg=5 MBytes"), "{}", types[3]);
        let access: Vec<&str> = prot
            .lines()
            .filter(|l| l.starts_with(" total access method:"))
            .collect();
        assert_eq!(access.len(), 2 * 3);
        assert!(access[0].contains("(Tn=30sec)"), "{}", access[0]);
        assert_eq!(prot.matches(" total partition: n=").count(), 2);
        assert_eq!(prot.matches(PROTOCOL_LEGEND).count(), 3);
        assert!(prot.contains(" b_eff_io := maximum over all bw_partition = "));
        assert!(prot.starts_with("b_eff_io 0.1.0 (xylem), files in the layout"));
    }
}
