//! Command-line options of `sqmr`, as the user typed them.
//!
//! Both `--opt N` and `--opt=N` work, and every option also has a hyphenated alias
//! (`--num-cores`). Values are strict decimal integers: anything `atoi` would have
//! bent (`12abc`, `1e3`, an empty value, a number that does not fit in 64 bits) is
//! refused here with a message naming the option and the value. Signs are accepted so
//! that the reference's own diagnostics (`Must specify num_cores > 0`, `min_msgsize >= 0`)
//! can be given for zero and negative values, in the reference's order.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Parser;

/// What `sqmr --help` says about the figures; kept here so that the man page and the
/// help text come from the same words.
const ABOUT: &str = "Sequoia message-rate benchmark: the maximal message rate of one node.";

const LONG_ABOUT: &str = "\
Sequoia message-rate benchmark: the maximal message rate of one node.

Ranks 0..num_cores-1 (the core ranks) must share the node under test; every core rank
has num_nbors neighbour ranks, which should sit on other nodes. Each core rank keeps
win_size non-blocking send/receive pairs in flight to each of its neighbours per
iteration, for message sizes from min_msgsize doubling up to max_msgsize.

The job needs exactly num_cores * (1 + num_nbors) ranks.
The rates printed are node aggregates (messages sent and received by all core ranks
together per second), not per-core rates: 'average' uses the mean core time, 'max' the fastest core, 'min' the
slowest core. Bandwidths are in MiB/s (1048576 bytes).";

/// The one-line synopsis, shared by `--help` and the hint after every diagnostic.
pub const USAGE: &str = "sqmr [--num_cores N] [--num_nbors N] [--num_iters N] [--win_size N] \
[--min_msgsize BYTES] [--max_msgsize BYTES] [--repeat K] [--precision P [--max-time-per-size S]] \
[--verbose] [--json PATH] [--csv PATH] [--validate] [--enable|--disable LIST [--strict]] \
[--stall-timeout SECONDS]\n       sqmr --scan [--scan-rounds N] [--scan-time SECONDS] [--scan-threshold RATIO] \
[--win_size N] [--json PATH] [--enable|--disable LIST] [--stall-timeout SECONDS]";

/// The options of `sqmr`, parsed but not yet checked against each other or the job.
#[derive(Debug, Clone, PartialEq, Parser)]
#[command(
    name = "sqmr",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    allow_negative_numbers = true,
    args_override_self = true,
    override_usage = USAGE,
    after_help = "Sizes take binary units: 64K, 4M, 1.5G (also KiB, MB, MiB, ...)."
)]
pub struct Options {
    /// Ranks on the core node [default: ranks / 2]
    #[arg(long = "num_cores", visible_alias = "num-cores", value_name = "N",
          value_parser = parse_count)]
    pub num_cores: Option<i64>,

    /// Distinct neighbour ranks per core rank
    #[arg(long = "num_nbors", visible_alias = "num-nbors", value_name = "N",
          default_value = "1", value_parser = parse_count)]
    pub num_nbors: i64,

    /// Iterations at the first message size (each larger size runs a fifth fewer)
    #[arg(long = "num_iters", visible_alias = "num-iters", value_name = "N",
          default_value = "4096", value_parser = parse_count)]
    pub num_iters: i64,

    /// Concurrent send/receive pairs per neighbour per iteration
    #[arg(long = "win_size", visible_alias = "win-size", value_name = "N",
          default_value = "10", value_parser = parse_count)]
    pub win_size: i64,

    /// Smallest message size in bytes
    #[arg(long = "min_msgsize", visible_alias = "min-msgsize", value_name = "BYTES",
          default_value = "0", value_parser = parse_size)]
    pub min_msgsize: i64,

    /// Largest message size in bytes
    #[arg(long = "max_msgsize", visible_alias = "max-msgsize", value_name = "BYTES",
          default_value = "4194304", value_parser = parse_size)]
    pub max_msgsize: i64,

    /// Time each size's loop K times (barrier-separated, one warm-up); the row shows the
    /// median sample, the lines after the table and the JSON/CSV every sample, and a 95 %
    /// confidence interval of the median from 6 samples on
    #[arg(long, value_name = "K", default_value = "1", value_parser = parse_count)]
    pub repeat: i64,

    /// Repeat each size until the 95 % confidence interval of the median's average rate
    /// is within P percent of the median (half-width), from at least max(K, 6) samples,
    /// at most 1000 samples or --max-time-per-size seconds per size
    #[arg(long, value_name = "P", value_parser = parse_positive_decimal)]
    pub precision: Option<f64>,

    /// With --precision: the most seconds one size may take, warm-up included
    /// [default: 10]
    #[arg(long = "max-time-per-size", visible_alias = "max_time_per_size",
          value_name = "SECONDS", requires = "precision", value_parser = parse_positive_decimal)]
    pub max_time_per_size: Option<f64>,

    /// Print the configuration, the rank mapping and every rank's processor name
    #[arg(long)]
    pub verbose: bool,

    /// Write the configuration, environment and every measurement as JSON to PATH
    /// (a new file: an existing one is never overwritten)
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,

    /// Write one row per message size (the figures of the table, and the fastest and
    /// slowest core's time) as CSV with a header row to PATH (a new file, never overwritten)
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,

    /// Give every pending receive its own buffer, fill every message with a pattern
    /// and check it on arrival (rates then include the checking)
    #[arg(long)]
    pub validate: bool,

    /// Find the slow node or link: every node of the job against several others, in
    /// rounds of disjoint node pairs (rank j of one node with rank j of the other), each
    /// pair's message rate at 8 B and bandwidth at 1 MiB. A node is SLOW when its median
    /// over its partners is below --scan-threshold of the median node and, in logarithms,
    /// more than 3 scaled median absolute deviations below the other nodes; a pair of
    /// nodes that are fine with others is a SLOW link by the same rule against the slower
    /// of its nodes.
    /// Suspects are measured again (a suspect link alone); only what is slow again is
    /// flagged. Exit code 4 when
    /// something is flagged. Needs ranks on 3 or more hosts (4 or more to tell a link from
    /// a node); --win_size is the window at 8 B
    #[arg(long, conflicts_with_all = ["num_cores", "num_nbors", "num_iters", "min_msgsize",
          "max_msgsize", "repeat", "precision", "csv", "validate"])]
    pub scan: bool,

    /// With --scan: at most N rounds, or `all` for every pair of nodes [default: 64; every
    /// pair of up to 64 nodes]
    #[arg(long = "scan-rounds", value_name = "N", requires = "scan",
          value_parser = parse_rounds)]
    pub scan_rounds: Option<usize>,

    /// With --scan: seconds of each measurement (two per round), above 0 and at most 60
    /// [default: 0.5]
    #[arg(long = "scan-time", value_name = "SECONDS", requires = "scan",
          value_parser = parse_scan_time)]
    pub scan_time: Option<f64>,

    /// With --scan: the ratio to the median below which a node or link is slow, above 0
    /// and below 1 [default: 0.7]
    #[arg(long = "scan-threshold", value_name = "RATIO", requires = "scan",
          value_parser = parse_ratio)]
    pub scan_threshold: Option<f64>,

    /// --enable, --disable, --strict.
    #[command(flatten)]
    pub network: benchkit::network::NetworkArgs,

    /// --stall-timeout.
    #[command(flatten)]
    pub stall: benchkit::stall::StallArgs,

    /// Test aid of debug builds only (what `make install` ships does not have it): the
    /// first neighbour rank corrupts one byte of one message, for `--validate`'s test
    #[cfg(debug_assertions)]
    #[arg(long = "corrupt-one-message", hide = true)]
    pub corrupt_one_message: bool,
}

impl Options {
    /// Whether the test aid `--corrupt-one-message` was given; never in a release build.
    pub fn corrupts_one_message(&self) -> bool {
        #[cfg(debug_assertions)]
        return self.corrupt_one_message;
        #[cfg(not(debug_assertions))]
        return false;
    }

    /// Parses `args` (the program name first), without printing or exiting: the caller
    /// decides which rank reports.
    pub fn parse_from_args<I, T>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        Options::try_parse_from(reference_spellings(args.into_iter().map(Into::into)))
    }

    /// [`Options::parse_from_args`], with `long_version` as what `--version` prints after
    /// the program's name (the MPI side adds the library it was built against).
    pub fn parse_with_long_version<I, T>(args: I, long_version: String) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let mut command = Options::command().long_version(long_version);
        let mut matches = command
            .try_get_matches_from_mut(reference_spellings(args.into_iter().map(Into::into)))?;
        <Options as clap::FromArgMatches>::from_arg_matches_mut(&mut matches)
            .map_err(|e| e.format(&mut command))
    }

    /// The clap command, for man pages and completions.
    pub fn command() -> clap::Command {
        <Options as clap::CommandFactory>::command()
    }
}

/// Rewrites the reference's spellings of long options into clap's: 1.1.0 strips any
/// number of leading dashes, so `-num_cores=1`, `-verbose` and `---win_size 4` name the
/// options `--num_cores=1`, `--verbose` and `--win_size 4`. Only words whose name (before
/// any `=`) is one of sqmr's long options or aliases are rewritten, so a negative value
/// (`--num_cores -5`) stays a value, and `-h`, `-V` stay clap's short options. The first
/// word (the program) is kept. A repeated option takes its last value, as in 1.1.0
/// (`args_override_self`), so wrappers can put defaults first and then `"$@"`.
pub fn reference_spellings(args: impl Iterator<Item = OsString>) -> Vec<OsString> {
    let command = Options::command();
    let longs: Vec<String> = command
        .get_arguments()
        .flat_map(|a| {
            a.get_long()
                .into_iter()
                .chain(a.get_all_aliases().unwrap_or_default())
                .map(str::to_string)
        })
        .chain(["help".to_string(), "version".to_string()])
        .collect();
    let mut after_separator = false;
    args.enumerate()
        .map(|(i, arg)| {
            if i == 0 || after_separator {
                return arg;
            }
            let Some(text) = arg.to_str() else {
                return arg;
            };
            if text == "--" {
                after_separator = true;
                return arg;
            }
            let bare = text.trim_start_matches('-');
            let name = bare.split('=').next().unwrap_or(bare);
            let odd_dashes =
                text.starts_with('-') && !text.starts_with("--") || text.starts_with("---");
            if odd_dashes && longs.iter().any(|l| l == name) {
                return OsString::from(format!("--{bare}"));
            }
            arg
        })
        .collect()
}

/// Parses a strict decimal integer with an optional sign.
pub fn parse_count(text: &str) -> Result<i64, String> {
    parse_integer(text, text, 1)
}

/// Parses a number of rounds: a whole number from 1, or `all` (as many as every pair of
/// nodes needs: the scan's settings cap the count at that).
pub fn parse_rounds(text: &str) -> Result<usize, String> {
    if text == "all" {
        return Ok(usize::MAX);
    }
    match parse_count(text).map_err(|e| format!("{e}; or `all` for every pair of nodes"))? {
        n if n >= 1 => usize::try_from(n).map_err(|_| format!("'{text}' is too large")),
        _ => Err(format!("'{text}' must be 1 or more, or `all`")),
    }
}

/// The longest `--scan-time`: a scan of 16 rounds then lasts about half an hour; a longer
/// measurement says nothing more of a node.
pub const MAX_SCAN_SECONDS: f64 = 60.0;

/// Parses `--scan-time`: seconds above 0 and at most [`MAX_SCAN_SECONDS`].
pub fn parse_scan_time(text: &str) -> Result<f64, String> {
    let value = parse_positive_decimal(text)?;
    if value > MAX_SCAN_SECONDS {
        return Err(format!(
            "'{text}' is more than {MAX_SCAN_SECONDS} s per measurement (a scan of 16 rounds \
             would last over half an hour); give more than 0 and at most {MAX_SCAN_SECONDS}"
        ));
    }
    Ok(value)
}

/// Parses a ratio strictly between 0 and 1 (`0.7`).
pub fn parse_ratio(text: &str) -> Result<f64, String> {
    let value = parse_positive_decimal(text)?;
    if value >= 1.0 {
        return Err(format!("'{text}' must be below 1 (a ratio such as 0.7)"));
    }
    Ok(value)
}

/// Parses a byte size by the grammar every xylem benchmark shares
/// ([`benchkit::size`]: `4096`, `64K`, `64MiB`, `1.5G`), signs included.
pub fn parse_size(text: &str) -> Result<i64, String> {
    benchkit::size::signed_i64(text)
}

/// Parses a strictly positive decimal number: digits with an optional fraction (`2`,
/// `0.5`, `12.25`), no sign, exponent or other spelling.
pub fn parse_positive_decimal(text: &str) -> Result<f64, String> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let well_formed = !(whole.is_empty() && fraction.is_empty())
        && digits(whole)
        && digits(fraction)
        && !(text.contains('.') && fraction.is_empty());
    if !well_formed {
        return Err(format!(
            "'{text}' is not a decimal number (digits, optionally a fraction: 2, 0.5)"
        ));
    }
    let value: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a decimal number"))?;
    if !(value > 0.0 && value.is_finite()) {
        return Err(format!("'{text}' must be above 0"));
    }
    Ok(value)
}

fn parse_integer(number: &str, text: &str, factor: i64) -> Result<i64, String> {
    let digits = number.strip_prefix(['-', '+']).unwrap_or(number);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "'{text}' is not a decimal integer (digits only, optionally a sign)"
        ));
    }
    let too_large = || format!("'{text}' does not fit in a 64-bit integer");
    let value: i64 = number
        .trim_start_matches('+')
        .parse()
        .map_err(|_| too_large())?;
    value.checked_mul(factor).ok_or_else(too_large)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_references_dashes_and_repeats_are_accepted() {
        let o = parse(&[
            "-num_cores=1",
            "-verbose",
            "---win_size",
            "4",
            "-num-nbors",
            "2",
        ])
        .unwrap();
        assert_eq!(o.num_cores, Some(1));
        assert!(o.verbose);
        assert_eq!(o.win_size, 4);
        assert_eq!(o.num_nbors, 2);
        // A wrapper's defaults first, then the user's: the last value wins.
        let o = parse(&["--num_iters", "10", "--win_size=2", "--num_iters=20"]).unwrap();
        assert_eq!(o.num_iters, 20);
        assert_eq!(o.win_size, 2);
        // Negative values stay values (the reference's own diagnostics handle them).
        let o = parse(&["--num_cores", "-5"]).unwrap();
        assert_eq!(o.num_cores, Some(-5));
        // A word that names no option is left for clap to refuse.
        let e = parse(&["-bogus"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::UnknownArgument, "{e}");
        assert!(parse(&["-help"]).is_err_and(|e| e.kind() == clap::error::ErrorKind::DisplayHelp));
    }

    fn parse(args: &[&str]) -> Result<Options, clap::Error> {
        Options::parse_from_args(std::iter::once("sqmr").chain(args.iter().copied()))
    }

    #[test]
    fn defaults_match_the_reference() {
        let o = parse(&[]).unwrap();
        assert_eq!(o.num_cores, None);
        assert_eq!(
            (
                o.num_nbors,
                o.num_iters,
                o.win_size,
                o.min_msgsize,
                o.max_msgsize
            ),
            (1, 4096, 10, 0, 4_194_304)
        );
        assert!(!o.verbose && !o.validate && o.json.is_none() && o.csv.is_none());
        assert!(!o.network.strict && o.network.enable.is_none() && o.network.disable.is_none());
    }

    #[test]
    fn space_equals_and_hyphen_spellings_agree() {
        let forms: [&[&str]; 3] = [
            &["--num_cores", "8", "--num_nbors", "4", "--win_size", "2"],
            &["--num_cores=8", "--num_nbors=4", "--win_size=2"],
            &["--num-cores", "8", "--num-nbors=4", "--win-size", "2"],
        ];
        for form in forms {
            let o = parse(form).unwrap();
            assert_eq!(
                (o.num_cores, o.num_nbors, o.win_size),
                (Some(8), 4, 2),
                "{form:?}"
            );
        }
    }

    #[test]
    fn negative_values_reach_the_diagnostics() {
        let o = parse(&["--min_msgsize", "-5", "--num_cores=-2"]).unwrap();
        assert_eq!((o.min_msgsize, o.num_cores), (-5, Some(-2)));
    }

    #[test]
    fn sizes_take_binary_suffixes() {
        for (text, value) in [
            ("64K", 65536),
            ("64k", 65536),
            ("4M", 4 << 20),
            ("1G", 1 << 30),
            ("2KiB", 2048),
            ("3MiB", 3 << 20),
            ("1gib", 1 << 30),
            ("17", 17),
            ("+8", 8),
        ] {
            assert_eq!(parse_size(text), Ok(value), "{text}");
        }
    }

    #[test]
    fn bad_values_are_refused_with_the_option_and_value_named() {
        for (option, value) in [
            ("--num_cores", "abc"),
            ("--num_nbors", "12abc"),
            ("--num_iters", "1e3"),
            ("--win_size", ""),
            ("--win_size", "99999999999999999999"),
            ("--max_msgsize", "4X"),
            ("--max_msgsize", "9999999999999G"),
            ("--min_msgsize", "K"),
            ("--num_iters", "0x10"),
            ("--num_iters", "1.5"),
        ] {
            let joined = format!("{option}={value}");
            let err = parse(&[&joined]).unwrap_err();
            let text = err.render().to_string();
            assert!(text.contains(option), "{joined}: {text}");
            assert!(text.contains(&format!("'{value}'")), "{joined}: {text}");
            assert_eq!(err.exit_code(), 2, "{joined}");
        }
    }

    #[test]
    fn repeats_and_precision() {
        let o = parse(&[]).unwrap();
        assert_eq!(
            (o.repeat, o.precision, o.max_time_per_size),
            (1, None, None)
        );
        let o = parse(&[
            "--repeat",
            "7",
            "--precision=2.5",
            "--max_time_per_size",
            "5",
        ])
        .unwrap();
        assert_eq!(
            (o.repeat, o.precision, o.max_time_per_size),
            (7, Some(2.5), Some(5.0))
        );
        let o = parse(&["--precision", ".5", "--max-time-per-size=0.25"]).unwrap();
        assert_eq!((o.precision, o.max_time_per_size), (Some(0.5), Some(0.25)));
        // The cap belongs to --precision.
        assert!(parse(&["--max-time-per-size", "5"]).is_err());
        for bad in [
            "0", "-1", "1e3", "abc", "", ".", "2.", "1.2.3", "inf", "NaN", "+2",
        ] {
            let joined = format!("--precision={bad}");
            let err = parse(&[&joined]).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{joined}");
            let text = err.render().to_string();
            assert!(
                text.contains("--precision") && text.contains(&format!("'{bad}'")),
                "{text}"
            );
        }
    }

    #[test]
    fn huge_values_are_not_wrapped_like_atoi() {
        let o = parse(&["--win_size=2147483648", "--num_iters=4294967297"]).unwrap();
        assert_eq!((o.win_size, o.num_iters), (2_147_483_648, 4_294_967_297));
    }

    #[test]
    fn scan_options() {
        let o = parse(&[
            "--scan",
            "--scan-rounds",
            "3",
            "--scan-time=0.25",
            "--scan-threshold",
            "0.5",
        ])
        .unwrap();
        assert!(o.scan);
        assert_eq!(
            (o.scan_rounds, o.scan_time, o.scan_threshold),
            (Some(3), Some(0.25), Some(0.5))
        );
        for bad in [
            &["--scan-rounds", "3"][..],
            &["--scan", "--scan-rounds", "0"],
            &["--scan", "--scan-threshold", "1"],
            &["--scan", "--scan-threshold", "-0.5"],
            &["--scan", "--scan-time", "0"],
            &["--scan", "--scan-time", "1000000000"],
            &["--scan", "--scan-time", "60.5"],
            &["--scan", "--num_cores", "2"],
            &["--scan", "--validate"],
            &["--scan", "--csv", "x.csv"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        let text = parse(&["--scan", "--scan-threshold", "1.5"])
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("--scan-threshold") && text.contains("below 1"),
            "{text}"
        );
        assert!(parse(&["--scan", "--win_size", "4", "--json", "s.json"]).is_ok());
        assert_eq!(
            parse(&["--scan", "--scan-time", "60"]).unwrap().scan_time,
            Some(60.0)
        );
        let text = parse(&["--scan", "--scan-time", "1000000000"])
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("--scan-time") && text.contains("at most 60"),
            "{text}"
        );
    }

    #[test]
    fn unknown_options_are_errors() {
        let err = parse(&["--num_core=3"]).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.render().to_string().contains("--num_core"));
        assert!(parse(&["stray"]).is_err());
    }

    #[test]
    fn strict_goes_with_either_selection_switch() {
        let o = parse(&["--enable", "eth0,typo0", "--strict"]).unwrap();
        assert!(o.network.strict);
        assert_eq!(o.network.enable.as_deref(), Some("eth0,typo0"));
        let o = parse(&["--strict", "--disable=ib"]).unwrap();
        assert!(o.network.strict && o.network.disable.as_deref() == Some("ib"));
        assert!(parse(&["--enable", "a", "--disable", "b"]).is_err());
    }

    #[test]
    fn help_is_not_an_error_exit() {
        let err = parse(&["--help"]).unwrap_err();
        assert_eq!(err.exit_code(), 0);
        let text = err.render().to_string();
        assert!(text.contains("node aggregates"), "{text}");
        for option in [
            "--num_cores",
            "--num_nbors",
            "--num_iters",
            "--win_size",
            "--strict",
        ] {
            assert!(text.contains(option), "{option} missing from help");
        }
    }
}
