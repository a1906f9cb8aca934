//! Command-line options of `b_eff_io`, with the 2.1 spellings accepted as aliases.

use crate::units::{parse_size, MB};
use clap::Parser;
use std::ffi::OsString;
use std::path::PathBuf;

/// The effective I/O bandwidth benchmark on MPI-IO.
///
/// Bandwidths are in MB/s = 10^6 B/s; chunk sizes are binary (kB = 1024 B, MB = 1024² B).
#[derive(Debug, Clone, PartialEq, Parser)]
#[command(name = "b_eff_io", version, about, long_about = None)]
pub struct Options {
    /// Scheduled time of the full partition in seconds (a valid run needs ≥ 600).
    #[arg(short = 'T', long = "time", value_name = "SECONDS", default_value = "600", value_parser = parse_time)]
    pub time: f64,

    /// Partition sizes to run, e.g. `8,4` (default: all processes, then half). 2.1: -N.
    #[arg(short = 'N', long, value_name = "N,N,...", value_delimiter = ',', value_parser = parse_partition)]
    pub partitions: Option<Vec<usize>>,

    /// Directory under which the run directory is created (must exist).
    #[arg(short = 'p', long, value_name = "DIR", default_value = ".", value_parser = path_parser())]
    pub path: PathBuf,

    /// Write the full results as JSON to this file.
    #[arg(long, value_name = "PATH", value_parser = path_parser())]
    pub json: Option<PathBuf>,

    /// Write one row per pattern and access method of every partition as CSV, with a
    /// header row, to this file.
    #[arg(long, value_name = "PATH", value_parser = path_parser())]
    pub csv: Option<PathBuf>,

    /// Keep the run directory and its files afterwards. 2.1: -keep.
    #[arg(long)]
    pub keep: bool,

    /// Memory per MPI process, e.g. `2G` (default: MemTotal / ranks on the node).
    #[arg(long, value_name = "SIZE", value_parser = parse_size,
          conflicts_with_all = ["memory_per_process_mb", "memory_total_mb"])]
    pub memory_per_process: Option<u64>,

    /// 2.1 -MB: memory per process in MB.
    #[arg(long = "memory-per-process-mb", value_name = "MB", hide = true,
          value_parser = parse_megabytes_per_process, conflicts_with = "memory_total_mb")]
    pub memory_per_process_mb: Option<u64>,

    /// 2.1 -MT: total memory of all processes in MB (divided by the processes).
    #[arg(long = "memory-total-mb", value_name = "MB", hide = true,
          value_parser = parse_megabytes_total)]
    pub memory_total_mb: Option<u64>,

    /// Remove the run directories that killed runs left in DIR (those whose owner marker
    /// names a process of this host that is gone), say what was removed and what was kept
    /// and why, and exit without running the benchmark.
    #[arg(long, value_name = "DIR", value_parser = path_parser())]
    pub clean: Option<PathBuf>,

    /// Type 1 without the shared file pointer: the type 0 view and write_all (run is NOT VALID). 2.1: -noshared.
    #[arg(long)]
    pub noshared: bool,

    /// Drop the benchmark files' cached pages (posix_fadvise DONTNEED) between write and read.
    #[arg(long)]
    pub drop_cache: bool,

    /// Write `<PREFIX>.sum` (summary) and `<PREFIX>.prot` (protocol, one line per pattern). 2.1: -f.
    #[arg(short = 'f', long, value_name = "PREFIX", value_parser = parse_prefix)]
    pub prefix: Option<String>,

    /// 2.1 -rewrite: accepted for old job scripts; rewrite always runs.
    #[arg(long, hide = true)]
    pub rewrite: bool,

    /// Check the termination criterion after every call, as the 2.1 reference did
    /// (to measure the cost of that protocol).
    #[arg(long)]
    pub check_every_call: bool,

    /// After the first write of the separate-file pattern with the largest chunk, write
    /// the same bytes with plain POSIX write + fsync, timed the same way (a comparison for
    /// benchmarking b_eff_io itself; not part of the figures)
    #[arg(long)]
    pub posix_baseline: bool,

    /// For the tests: after rewrite, overwrite the first marker of rank 0's separate file on
    /// disk, so read must find one data error and the run must fail.
    #[arg(long, hide = true)]
    pub test_corrupt_file: bool,

    /// Use only these networks: NETWORK[:QUALIFIER],... (names like ib or eth,
    /// interfaces like eth0 or mlx5_0:1, CIDRs), resolved on each host before MPI starts.
    #[arg(long, value_name = "LIST", conflicts_with = "disable")]
    pub enable: Option<String>,

    /// Use every network but these: NETWORK[:QUALIFIER],...
    #[arg(long, value_name = "LIST")]
    pub disable: Option<String>,

    /// With --enable/--disable: refuse the run (exit 2, every rank) when an item matches
    /// nothing usable on some host, or two hosts' selected networks share no subnet;
    /// without it both are warnings on stderr and the run goes on.
    #[arg(long)]
    pub strict: bool,
}

/// What a memory option resolves to, before the job size is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemorySetting {
    /// Use MemTotal of the node divided by the ranks on it.
    Detect,
    /// Bytes per process.
    PerProcess(u64),
    /// Bytes for all processes together.
    Total(u64),
}

impl Options {
    /// Parses `args` (with the program name first) after rewriting the 2.1 spellings.
    pub fn parse_args<I, T>(args: I) -> Result<Options, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        Options::try_parse_from(normalize_legacy(args.into_iter().map(Into::into)))
    }

    /// The clap command, for man pages and completions.
    pub fn command() -> clap::Command {
        <Options as clap::CommandFactory>::command()
    }

    /// How memory per process is to be found.
    pub fn memory(&self) -> MemorySetting {
        if let Some(b) = self.memory_per_process {
            MemorySetting::PerProcess(b)
        } else if let Some(mb) = self.memory_per_process_mb {
            // The parser refuses what does not fit in bytes; saturate all the same.
            MemorySetting::PerProcess(mb.saturating_mul(MB))
        } else if let Some(mb) = self.memory_total_mb {
            MemorySetting::Total(mb.saturating_mul(MB))
        } else {
            MemorySetting::Detect
        }
    }
}

/// The 2.1 multi-letter single-dash options and their long forms
/// (`-T`, `-N`, `-p`, `-f` are ordinary short options).
const LEGACY: [(&str, &str); 5] = [
    ("-MB", "--memory-per-process-mb"),
    ("-MT", "--memory-total-mb"),
    ("-keep", "--keep"),
    ("-rewrite", "--rewrite"),
    ("-noshared", "--noshared"),
];

/// Rewrites the 2.1 spellings (`-MB 512`, `-MB=512`, `-keep`, …) into long options; stops at `--`.
pub fn normalize_legacy(args: impl Iterator<Item = OsString>) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut passthrough = false;
    for arg in args {
        if passthrough {
            out.push(arg);
            continue;
        }
        let Some(text) = arg.to_str() else {
            out.push(arg);
            continue;
        };
        if text == "--" {
            passthrough = true;
            out.push(arg);
            continue;
        }
        let mapped = LEGACY.iter().find_map(|(old, new)| {
            if text == *old {
                Some(new.to_string())
            } else {
                text.strip_prefix(old)
                    .and_then(|rest| rest.strip_prefix('='))
                    .map(|value| format!("{new}={value}"))
            }
        });
        out.push(mapped.map(OsString::from).unwrap_or(arg));
    }
    out
}

fn parse_time(text: &str) -> Result<f64, String> {
    let t: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number of seconds"))?;
    if !t.is_finite() || t <= 0.0 {
        return Err(format!("the scheduled time must be positive, got {text}"));
    }
    Ok(t)
}

fn parse_partition(text: &str) -> Result<usize, String> {
    let n: usize = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number of processes"))?;
    if n == 0 {
        return Err("a partition needs at least 1 process".into());
    }
    Ok(n)
}

/// Paths as the OS gives them (any bytes but NUL, UTF-8 or not), but not empty.
fn path_parser() -> impl clap::builder::TypedValueParser<Value = PathBuf> {
    use clap::builder::TypedValueParser;
    clap::builder::OsStringValueParser::new().try_map(|text: OsString| {
        if text.is_empty() {
            return Err("the path is empty".to_string());
        }
        Ok(PathBuf::from(text))
    })
}

fn parse_prefix(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err("the prefix is empty".into());
    }
    Ok(text.to_string())
}

/// The largest value of `-MB` and `-MT`: more MB than that are more bytes than 64 bits hold.
pub const MAX_MEGABYTES: u64 = u64::MAX / MB;

/// A whole number of MB whose bytes fit in a `u64`; `legacy` names the 2.1 spelling.
fn parse_megabytes(text: &str, legacy: &str) -> Result<u64, String> {
    let mb: u64 = text.trim().parse().map_err(|e: std::num::ParseIntError| {
        if *e.kind() == std::num::IntErrorKind::PosOverflow {
            too_many_megabytes(text, legacy)
        } else {
            format!("'{text}' is not a whole number of MB")
        }
    })?;
    if mb == 0 {
        return Err("the memory must be positive".into());
    }
    mb.checked_mul(MB)
        .map(|_| mb)
        .ok_or_else(|| too_many_megabytes(text, legacy))
}

fn too_many_megabytes(text: &str, legacy: &str) -> String {
    format!(
        "{legacy}: {} MB is more bytes than 64 bits can count; the largest accepted value \
         is {MAX_MEGABYTES} (MB)",
        text.trim()
    )
}

fn parse_megabytes_per_process(text: &str) -> Result<u64, String> {
    parse_megabytes(text, "-MB")
}

fn parse_megabytes_total(text: &str) -> Result<u64, String> {
    parse_megabytes(text, "-MT")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, clap::Error> {
        Options::parse_args(std::iter::once("b_eff_io").chain(args.iter().copied()))
    }

    #[test]
    fn defaults() {
        let o = parse(&[]).unwrap();
        assert_eq!(o.time, 600.0);
        assert_eq!(o.partitions, None);
        assert_eq!(o.path, PathBuf::from("."));
        assert!(!o.keep && !o.noshared && !o.drop_cache && !o.check_every_call);
        assert!(!o.strict && o.enable.is_none() && o.disable.is_none());
        assert_eq!(o.memory(), MemorySetting::Detect);
    }

    #[test]
    fn long_and_short_options() {
        let o = parse(&[
            "-T",
            "60",
            "--partitions",
            "4,2",
            "-p",
            "/tmp",
            "--json",
            "r.json",
            "--keep",
            "--memory-per-process",
            "512M",
            "--noshared",
            "--drop-cache",
            "--prefix",
            "run1",
        ])
        .unwrap();
        assert_eq!(o.time, 60.0);
        assert_eq!(o.partitions, Some(vec![4, 2]));
        assert_eq!(o.path, PathBuf::from("/tmp"));
        assert_eq!(o.json, Some(PathBuf::from("r.json")));
        assert!(o.keep && o.noshared && o.drop_cache);
        assert_eq!(o.memory(), MemorySetting::PerProcess(512 * MB));
        assert_eq!(o.prefix.as_deref(), Some("run1"));
    }

    #[test]
    fn strict_goes_with_the_selection() {
        let o = parse(&["--enable", "eth0,typo0", "--strict"]).unwrap();
        assert!(o.strict);
        assert_eq!(o.enable.as_deref(), Some("eth0,typo0"));
        assert!(parse(&["--enable", "a", "--disable", "b"]).is_err());
    }

    #[test]
    fn legacy_spellings_are_aliases() {
        let o = parse(&[
            "-MB",
            "256",
            "-N",
            "2",
            "-f",
            "old",
            "-keep",
            "-rewrite",
            "-noshared",
            "-T",
            "30",
        ])
        .unwrap();
        assert_eq!(o.memory(), MemorySetting::PerProcess(256 * MB));
        assert_eq!(o.partitions, Some(vec![2]));
        assert_eq!(o.prefix.as_deref(), Some("old"));
        assert!(o.keep && o.rewrite && o.noshared);
        assert_eq!(o.time, 30.0);
        let o = parse(&["-MT=4096"]).unwrap();
        assert_eq!(o.memory(), MemorySetting::Total(4096 * MB));
    }

    #[test]
    fn legacy_rewriting_stops_at_double_dash() {
        let out = normalize_legacy(
            ["b_eff_io", "-keep", "--", "-keep"]
                .iter()
                .map(OsString::from),
        );
        assert_eq!(out, vec!["b_eff_io", "--keep", "--", "-keep"]);
    }

    #[test]
    fn bad_values_are_rejected_with_clear_messages() {
        let msg = |args: &[&str]| parse(args).unwrap_err().to_string();
        assert!(msg(&["-T", "0"]).contains("must be positive"));
        assert!(
            msg(&["-T", "-5"]).contains("must be positive") || msg(&["-T", "-5"]).contains("-5")
        );
        assert!(msg(&["-T", "abc"]).contains("not a number of seconds"));
        assert!(msg(&["--partitions", "2,0"]).contains("at least 1 process"));
        assert!(msg(&["--partitions", "x"]).contains("not a number of processes"));
        assert!(msg(&["--memory-per-process", "0"]).contains("positive"));
        assert!(msg(&["-MB", "many"]).contains("whole number of MB"));
        assert!(msg(&["--path", ""]).contains("empty"));
        assert!(parse(&["--memory-per-process", "1G", "-MB", "5"]).is_err());
        assert!(msg(&["--clean", ""]).contains("empty"));
        assert!(parse(&["--bogus"]).is_err());
    }

    #[test]
    fn sizes_that_overflow_bytes_are_refused_naming_the_option_and_the_limit() {
        let msg = |args: &[&str]| parse(args).unwrap_err().to_string();
        // 2^44 MB are 2^64 bytes: wrapped to 0 before.
        let m = msg(&["-MB", "17592186044416"]);
        assert!(
            m.contains("--memory-per-process-mb")
                && m.contains("-MB: 17592186044416 MB")
                && m.contains("largest accepted value is 17592186044415"),
            "{m}"
        );
        let m = msg(&["-MT", "99999999999999999999999"]);
        assert!(
            m.contains("--memory-total-mb") && m.contains("17592186044415"),
            "{m}"
        );
        assert_eq!(
            parse(&["-MB", "17592186044415"]).unwrap().memory(),
            MemorySetting::PerProcess(MAX_MEGABYTES * MB)
        );
        assert_eq!(
            parse(&["-MT", &MAX_MEGABYTES.to_string()])
                .unwrap()
                .memory(),
            MemorySetting::Total(MAX_MEGABYTES * MB)
        );
        let m = msg(&["--memory-per-process", "16777216T"]);
        assert!(
            m.contains("--memory-per-process") && m.contains("18446744073709551615"),
            "{m}"
        );
        assert!(parse(&["--memory-per-process", "18446744073709551616"]).is_err());
        assert_eq!(
            parse(&["--memory-per-process", "18446744073709551615"])
                .unwrap()
                .memory(),
            MemorySetting::PerProcess(u64::MAX)
        );
        assert_eq!(
            parse(&["--memory-per-process", "16777215T"])
                .unwrap()
                .memory(),
            MemorySetting::PerProcess(16_777_215 << 40)
        );
    }

    #[test]
    fn clean_takes_a_directory() {
        let o = parse(&["--clean", "/scratch"]).unwrap();
        assert_eq!(o.clean, Some(PathBuf::from("/scratch")));
        assert_eq!(parse(&[]).unwrap().clean, None);
    }
}
