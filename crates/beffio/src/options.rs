//! Command-line options of `b_eff_io`, with the 2.1 spellings accepted as aliases: every
//! valid 2.1 command line (`-MB n -MT n [-noshared] [-nounique] [-rewrite] [-keep] [-d]
//! [-e n] [-N n,...] [-T s] [-p dir] [-f prefix] [-i hints]`) runs unchanged; `-adapt` is
//! refused as 2.1 refuses it for benchmarking. A repeated option takes its last value, as
//! 2.1's argument loop did.

use crate::markers::ERROR_DETAIL_LIMIT;
use crate::units::{parse_size, MB};
use clap::Parser;
use std::ffi::OsString;
use std::path::PathBuf;

/// The effective I/O bandwidth benchmark on MPI-IO.
///
/// Bandwidths are in MB/s = 10^6 B/s; chunk sizes are binary (kB = 1024 B, MB = 1024² B).
#[derive(Debug, Clone, PartialEq, Parser)]
#[command(name = "b_eff_io", version, about, long_about = None, args_override_self = true)]
pub struct Options {
    /// Scheduled time of the full partition in seconds (a valid run needs ≥ 600). 2.1: -T.
    #[arg(short = 'T', long = "time", value_name = "SECONDS", default_value = "600",
          value_parser = parse_time, allow_negative_numbers = true)]
    pub time: f64,

    /// Partition sizes to run, e.g. `8,4` (default: all processes, then half). 2.1: -N.
    #[arg(short = 'N', long, value_name = "N,N,...", value_delimiter = ',',
          value_parser = parse_partition, allow_negative_numbers = true,
          action = clap::ArgAction::Set)]
    pub partitions: Option<Vec<usize>>,

    /// Directory under which the run directory is created (must exist). 2.1: -p.
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
    #[arg(long, overrides_with = "delete")]
    pub keep: bool,

    /// Remove the run directory and its files afterwards, the default: undoes an earlier
    /// --keep (the later of the two wins). 2.1: -d.
    #[arg(short = 'd', long, overrides_with = "keep")]
    pub delete: bool,

    /// Memory per MPI process, e.g. `2G` (default: MemTotal / ranks on the node).
    #[arg(long, value_name = "SIZE", value_parser = parse_size,
          conflicts_with = "memory_per_process_mb")]
    pub memory_per_process: Option<u64>,

    /// Memory per MPI process in MB (as --memory-per-process). 2.1: -MB.
    #[arg(long = "memory-per-process-mb", value_name = "MB",
          value_parser = parse_megabytes_per_process, allow_negative_numbers = true)]
    pub memory_per_process_mb: Option<u64>,

    /// Total memory of the machine in MB: the header, the protocol and the JSON say which
    /// share of it the job's processes have (N × memory per process). 2.1: -MT.
    #[arg(long = "total-memory-mb", value_name = "MB",
          value_parser = parse_megabytes_total, allow_negative_numbers = true)]
    pub total_memory_mb: Option<u64>,

    /// An MPI-IO hint for every file the benchmark opens (repeatable; a hints file's lines
    /// for the same key come later and win). The values the library reports back are in
    /// the summary, the protocol and the JSON.
    #[arg(long = "hint", value_name = "KEY=VALUE", value_parser = parse_hint)]
    pub hints: Vec<(String, String)>,

    /// MPI-IO hints per partition, access method, pattern type and chunk size, in 2.1's
    /// format: lines `<proc_num> <access> <pat_type> <chunk_size> <key> <value>`; `#`
    /// comments. A regular file of at most 1 MiB (a FIFO or device is refused). 2.1: -i.
    #[arg(short = 'i', long = "hints-file", value_name = "FILE", value_parser = path_parser())]
    pub hints_file: Option<PathBuf>,

    /// Data errors named on standard error per pattern and rank (all are counted;
    /// default 10). 2.1: -e.
    #[arg(short = 'e', long = "error-messages", value_name = "N",
          value_parser = parse_error_messages, allow_negative_numbers = true)]
    pub error_messages: Option<usize>,

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

    /// Write `<PREFIX>.sum` (summary) and `<PREFIX>.prot` (protocol, one line per pattern)
    /// [default: b_eff_io, as 2.1; b_eff_io.<pid> while another live run writes those];
    /// earlier files of those names are kept as `<PREFIX>.sum.1`, … (said on stderr). A
    /// prefix ending in `/` names a folder and is refused (`DIR/b_eff_io` writes into DIR).
    /// 2.1: -f.
    #[arg(short = 'f', long, value_name = "PREFIX", value_parser = parse_prefix)]
    pub prefix: Option<String>,

    /// Accepted for 2.1 job scripts: rewrite always runs. 2.1: -rewrite.
    #[arg(long)]
    pub rewrite: bool,

    /// Accepted for 2.1 job scripts (files without names unique to the run): the files
    /// still go into a fresh run directory, so nothing of anyone's is overwritten, and are
    /// never opened with MPI_MODE_UNIQUE_OPEN. 2.1: -nounique.
    #[arg(long)]
    pub nounique: bool,

    /// Check the termination criterion after every call of the time-driven writes, as
    /// the 2.1 reference did (to measure the cost of that protocol).
    #[arg(long)]
    pub check_every_call: bool,

    /// After the first write of the separate-file pattern with the largest chunk, write
    /// the same bytes with plain POSIX write + fsync, timed the same way (a comparison for
    /// benchmarking b_eff_io itself; not part of the figures)
    #[arg(long)]
    pub posix_baseline: bool,

    /// For the tests, in debug builds only: after rewrite, overwrite the first marker of
    /// rank 0's separate file on disk, so read must find one data error and the run must fail.
    #[cfg(debug_assertions)]
    #[arg(long, hide = true)]
    pub test_corrupt_file: bool,

    /// For the tests, in debug builds only: after rewrite, cut rank 0's separate file to
    /// half its length, so read must fail on a short read.
    #[cfg(debug_assertions)]
    #[arg(long, hide = true)]
    pub test_truncate_file: bool,

    /// --enable, --disable, --strict.
    #[command(flatten)]
    pub network: benchkit::network::NetworkArgs,

    /// --stall-timeout.
    #[command(flatten)]
    pub stall: benchkit::stall::StallArgs,
}

/// What a memory option resolves to, before the job size is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemorySetting {
    /// Use MemTotal of the node divided by the ranks on it.
    Detect,
    /// Bytes per process.
    PerProcess(u64),
}

/// What a test aid does to rank 0's separate file between rewrite and read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sabotage {
    /// Nothing (every real run).
    None,
    /// Overwrite the first marker: read finds one data error.
    Corrupt,
    /// Cut the file to half its length: read ends short.
    Truncate,
}

impl Options {
    /// The damage the test aids `--test-corrupt-file` and `--test-truncate-file` ask for;
    /// never any in a release build.
    pub fn sabotage(&self) -> Sabotage {
        #[cfg(debug_assertions)]
        if self.test_truncate_file {
            return Sabotage::Truncate;
        } else if self.test_corrupt_file {
            return Sabotage::Corrupt;
        }
        Sabotage::None
    }

    /// Parses `args` (with the program name first) after rewriting the 2.1 spellings.
    pub fn parse_args<I, T>(args: I) -> Result<Options, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        Options::parse_with(args, Options::command())
    }

    fn parse_with<I, T>(args: I, mut command: clap::Command) -> Result<Options, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        let args = normalize_legacy(args.into_iter().map(Into::into));
        let adapt = args
            .iter()
            .skip(1)
            .take_while(|a| *a != "--")
            .any(|a| a == "--adapt" || a.to_str().is_some_and(|t| t.starts_with("--adapt=")));
        if adapt {
            return Err(command.error(
                clap::error::ErrorKind::ArgumentConflict,
                "-adapt is not allowed for benchmarking (as in 2.1); b_eff_io does not offer it",
            ));
        }
        let mut matches = command.try_get_matches_from_mut(args)?;
        <Options as clap::FromArgMatches>::from_arg_matches_mut(&mut matches)
            .map_err(|e| e.format(&mut command))
    }

    /// [`Options::parse_args`], with `long_version` as what `--version` prints after the
    /// program's name (the MPI side adds the library it was built against).
    pub fn parse_with_long_version<I, T>(
        args: I,
        long_version: String,
    ) -> Result<Options, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        Options::parse_with(args, Options::command().long_version(long_version))
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
        } else {
            MemorySetting::Detect
        }
    }

    /// `-MT`: the total memory of the machine in bytes.
    pub fn machine_memory(&self) -> Option<u64> {
        self.total_memory_mb.map(|mb| mb.saturating_mul(MB))
    }

    /// `-e`: data errors named per pattern and rank.
    pub fn error_limit(&self) -> usize {
        self.error_messages.unwrap_or(ERROR_DETAIL_LIMIT)
    }
}

/// The 2.1 multi-letter single-dash options and their long forms
/// (`-T`, `-N`, `-p`, `-f`, `-i`, `-e`, `-d` are ordinary short options; `--adapt` is
/// refused by [`Options::parse_args`]).
const LEGACY: [(&str, &str); 7] = [
    ("-MB", "--memory-per-process-mb"),
    ("-MT", "--total-memory-mb"),
    ("-keep", "--keep"),
    ("-rewrite", "--rewrite"),
    ("-noshared", "--noshared"),
    ("-nounique", "--nounique"),
    ("-adapt", "--adapt"),
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
    let t: f64 = text.trim().parse().map_err(|_| {
        format!("'{text}' is not a number of seconds (-T takes a positive number of seconds)")
    })?;
    if !t.is_finite() || t <= 0.0 {
        return Err(format!(
            "the scheduled time must be positive (-T takes a positive number of seconds), \
             got {text}"
        ));
    }
    Ok(t)
}

/// `--hint KEY=VALUE`: split at the first `=`, both as MPI takes them.
fn parse_hint(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("'{text}' is not KEY=VALUE"))?;
    crate::hints::check(key, value)?;
    Ok((key.to_string(), value.to_string()))
}

fn parse_error_messages(text: &str) -> Result<usize, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number of error messages (-e takes 0 or more)"))
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

/// A prefix names files: `PREFIX.sum` and `PREFIX.prot`. One that ends in `/` (or in
/// `/.`, `/..`, or is `.` or `..`) names a folder, and 2.1 would write the hidden
/// `DIR/.sum` and `DIR/.prot` in it: refused, with the prefix that would do.
fn parse_prefix(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err("the prefix is empty".into());
    }
    let last = text.rsplit('/').next().unwrap_or_default();
    if matches!(last, "" | "." | "..") {
        let suggestion = format!("{}/b_eff_io", text.trim_end_matches('/'));
        return Err(format!(
            "'{text}' names a folder, not the start of a file name: the files would be the \
             hidden '{text}.sum' and '{text}.prot'; give a prefix such as '{suggestion}' \
             (writes {suggestion}.sum and {suggestion}.prot)"
        ));
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
        assert!(!o.network.strict && o.network.enable.is_none() && o.network.disable.is_none());
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
        assert!(o.network.strict);
        assert_eq!(o.network.enable.as_deref(), Some("eth0,typo0"));
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
        // -MT alone: the machine's memory, memory per process still found on the node.
        let o = parse(&["-MT=4096"]).unwrap();
        assert_eq!(o.machine_memory(), Some(4096 * MB));
        assert_eq!(o.memory(), MemorySetting::Detect);
    }

    /// Every valid 2.1 call has both -MB and -MT.
    #[test]
    fn mb_and_mt_go_together() {
        let o = parse(&["-MB", "64", "-MT", "128"]).unwrap();
        assert_eq!(o.memory(), MemorySetting::PerProcess(64 * MB));
        assert_eq!(o.machine_memory(), Some(128 * MB));
        let o = parse(&["-MT", "1024", "-MB", "512"]).unwrap();
        assert_eq!(o.memory(), MemorySetting::PerProcess(512 * MB));
        assert_eq!(o.machine_memory(), Some(1024 * MB));
        // The long spellings, as --help shows them.
        let o = parse(&["--memory-per-process-mb", "8", "--total-memory-mb", "16"]).unwrap();
        assert_eq!(
            (o.memory(), o.machine_memory()),
            (MemorySetting::PerProcess(8 * MB), Some(16 * MB))
        );
        assert_eq!(parse(&[]).unwrap().machine_memory(), None);
        // --memory-per-process and -MB say the same thing twice.
        assert!(parse(&["--memory-per-process", "1G", "-MB", "5"]).is_err());
        assert!(parse(&["--memory-per-process", "1G", "-MT", "5"]).is_ok());
        let msg = parse(&["-MT", "-5"]).unwrap_err().to_string();
        assert!(msg.contains("'-5' is not a whole number of MB"), "{msg}");
    }

    /// The line of a 2.1 job script (T shortened).
    #[test]
    fn a_2_1_job_script_line_parses() {
        let o = parse(&[
            "-MB",
            "64",
            "-MT",
            "128",
            "-T",
            "10",
            "-N",
            "2",
            "-p",
            "/scratch",
            "-f",
            "X",
            "-rewrite",
            "-nounique",
            "-e",
            "5",
            "-i",
            "hints",
        ])
        .unwrap();
        assert_eq!(o.memory(), MemorySetting::PerProcess(64 * MB));
        assert_eq!(o.machine_memory(), Some(128 * MB));
        assert_eq!(o.time, 10.0);
        assert_eq!(o.partitions, Some(vec![2]));
        assert_eq!(o.path, PathBuf::from("/scratch"));
        assert_eq!(o.prefix.as_deref(), Some("X"));
        assert!(o.rewrite && o.nounique);
        assert_eq!(o.error_limit(), 5);
        assert_eq!(o.hints_file, Some(PathBuf::from("hints")));
        assert!(!o.keep && !o.noshared && !o.delete);
    }

    #[test]
    fn each_2_1_spelling() {
        assert!(parse(&["-noshared"]).unwrap().noshared);
        assert!(parse(&["-nounique"]).unwrap().nounique);
        assert!(!parse(&[]).unwrap().nounique);
        assert!(parse(&["-rewrite"]).unwrap().rewrite);
        assert!(parse(&["-keep"]).unwrap().keep);
        assert!(parse(&["-d"]).unwrap().delete);
        // As in 2.1, -d undoes -keep; the later of the two wins.
        assert!(!parse(&["-keep", "-d"]).unwrap().keep);
        assert!(parse(&["-d", "-keep"]).unwrap().keep);
        assert!(!parse(&["--keep", "--delete"]).unwrap().keep);
        assert_eq!(parse(&["-e", "3"]).unwrap().error_limit(), 3);
        assert_eq!(parse(&["-e", "0"]).unwrap().error_limit(), 0);
        assert_eq!(parse(&["-e7"]).unwrap().error_limit(), 7);
        assert_eq!(parse(&[]).unwrap().error_limit(), ERROR_DETAIL_LIMIT);
        let msg = parse(&["-e", "-1"]).unwrap_err().to_string();
        assert!(
            msg.contains("'-1' is not a number of error messages"),
            "{msg}"
        );
        assert_eq!(parse(&["-N", "4,2"]).unwrap().partitions, Some(vec![4, 2]));
        assert_eq!(parse(&["-T", "90"]).unwrap().time, 90.0);
        assert_eq!(parse(&["-p", "/d"]).unwrap().path, PathBuf::from("/d"));
        assert_eq!(
            parse(&["-f", "run"]).unwrap().prefix.as_deref(),
            Some("run")
        );
        assert_eq!(
            parse(&["-f", "out/run"]).unwrap().prefix.as_deref(),
            Some("out/run")
        );
        // A prefix that names a folder would write hidden DIR/.sum and DIR/.prot.
        for (folder, suggestion) in [
            ("out/", "out/b_eff_io"),
            ("out//", "out/b_eff_io"),
            ("out/.", "out/./b_eff_io"),
            (".", "./b_eff_io"),
            ("..", "../b_eff_io"),
            ("/", "/b_eff_io"),
        ] {
            let msg = parse(&["-f", folder]).unwrap_err().to_string();
            assert!(
                msg.contains(&format!(
                    "'{folder}' names a folder, not the start of a file name"
                )) && msg.contains(&format!("such as '{suggestion}'")),
                "{folder}: {msg}"
            );
        }
        assert_eq!(
            parse(&["-i", "h.txt"]).unwrap().hints_file,
            Some(PathBuf::from("h.txt"))
        );
        assert!(parse(&["-i", ""])
            .unwrap_err()
            .to_string()
            .contains("empty"));
        // A repeated option takes its last value, as 2.1's argument loop did.
        let o = parse(&[
            "-T", "30", "-T", "60", "-keep", "-keep", "-N", "4", "-N", "2",
        ])
        .unwrap();
        assert_eq!((o.time, o.keep), (60.0, true));
        assert_eq!(o.partitions, Some(vec![2]));
    }

    #[test]
    fn adapt_is_refused_for_benchmarking() {
        for args in [&["-adapt"][..], &["-T", "60", "--adapt"], &["-adapt=1"]] {
            let e = parse(args).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{args:?}");
            let msg = e.to_string();
            assert!(
                msg.contains("-adapt is not allowed for benchmarking"),
                "{msg}"
            );
        }
        // After `--` it is not an option.
        assert!(
            normalize_legacy(["b", "--", "-adapt"].iter().map(OsString::from))
                .contains(&OsString::from("-adapt"))
        );
    }

    #[test]
    fn a_negative_time_says_what_t_needs() {
        let msg = parse(&["-T", "-5"]).unwrap_err().to_string();
        assert!(!msg.contains("unexpected argument"), "{msg}");
        assert!(
            msg.contains("-T takes a positive number of seconds") && msg.contains("got -5"),
            "{msg}"
        );
        let msg = parse(&["-N", "-2"]).unwrap_err().to_string();
        assert!(msg.contains("'-2' is not a number of processes"), "{msg}");
        let msg = parse(&["-MB", "-64"]).unwrap_err().to_string();
        assert!(msg.contains("'-64' is not a whole number of MB"), "{msg}");
    }

    #[test]
    fn hints_on_the_command_line() {
        let o = parse(&["--hint", "cb_buffer_size=1048576", "--hint", "a=b=c"]).unwrap();
        assert_eq!(
            o.hints,
            vec![
                ("cb_buffer_size".to_string(), "1048576".to_string()),
                ("a".to_string(), "b=c".to_string())
            ]
        );
        assert!(parse(&[]).unwrap().hints.is_empty());
        let msg = |args: &[&str]| parse(args).unwrap_err().to_string();
        assert!(msg(&["--hint", "novalue"]).contains("'novalue' is not KEY=VALUE"));
        assert!(msg(&["--hint", "=1"]).contains("key is empty"));
        assert!(msg(&["--hint", "k="]).contains("value is empty"));
        #[cfg(feature = "mpi")]
        {
            let long = format!("{}=1", "k".repeat(mpiio::MAX_INFO_KEY_LEN + 1));
            assert!(msg(&["--hint", &long]).contains("MPI_MAX_INFO_KEY"));
        }
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
        assert!(msg(&["-T", "-5"]).contains("must be positive"));
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
            m.contains("--total-memory-mb") && m.contains("17592186044415"),
            "{m}"
        );
        assert_eq!(
            parse(&["-MB", "17592186044415"]).unwrap().memory(),
            MemorySetting::PerProcess(MAX_MEGABYTES * MB)
        );
        assert_eq!(
            parse(&["-MT", &MAX_MEGABYTES.to_string()])
                .unwrap()
                .machine_memory(),
            Some(MAX_MEGABYTES * MB)
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
