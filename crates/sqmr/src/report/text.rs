//! The text output, byte-compatible with the reference: header, one row per size, and
//! our own extra lines, which always start with `#`.

use crate::config::Config;
use crate::independence;
use crate::rates::Rates;
use crate::report::json::SizeResult;
use crate::stats::{self, CONFIDENCE};
use crate::topology::Topology;

/// The reference version whose format we keep.
pub const REFERENCE_VERSION: &str = "1.1.0";

/// The header printed before the first size. `date` is local time already formatted as
/// `mm/dd/yy HH:MM:SS`; `host` is rank 0's processor name (its control characters shown
/// as visible escapes: a host name cannot start a line of its own).
pub fn header(config: &Config, date: &str, host: &str) -> String {
    let host = outfile::shown::text(host);
    let field = |name: &str, value: &dyn std::fmt::Display| format!("# {name:<35}: {value}\n");
    let mut out = format!(
        "# SQMR v{REFERENCE_VERSION} - MPI maximal message rate benchmark\n\
         # Run at {date}, with rank 0 on {host}\n#\n"
    );
    out += &field("MPI tasks per node", &config.num_cores);
    out += &field("Neighbor tasks", &config.num_nbors);
    out += &field("Iterations per message size", &config.num_iters);
    out += &field("Send/Recv operations per iteration", &config.win_size);
    out += "#\n";
    out += "#                          average                  max                     min\n";
    out +=
        "# msgsize iters     msgs/sec    MiB/sec     msgs/sec    MiB/sec     msgs/sec    MiB/sec\n";
    out
}

/// One row: msgsize, iters, then rate and bandwidth for average, max and min.
pub fn row(msgsize: u64, iters: u64, rates: &Rates) -> String {
    let r = rates;
    format!(
        "{msgsize:>8} {iters:>6} {:>12.2} {:>10.2} {:>12.2} {:>10.2} {:>12.2} {:>10.2}",
        r.average.msgs_per_s,
        r.average.mib_per_s,
        r.max.msgs_per_s,
        r.max.mib_per_s,
        r.min.msgs_per_s,
        r.min.mib_per_s
    )
}

/// The `#` lines after the table when sizes are repeated (`--repeat` above 1 or
/// `--precision`): what a row then is, and per size the samples' minimum, median and
/// maximum average rate, the 95 % confidence interval of the median, its half-width in
/// percent of the median, and what ended the repeats. Every line starts with
/// `# repeat:` (or `# precision:`), so that it is found and skipped alike.
pub fn repeats(config: &Config, sizes: &[SizeResult]) -> String {
    let mut out = String::from(
        "# repeat: each row above is the median of its size's samples by average msgs/sec \
         (the lower middle for an even count); ci95: the 95 % confidence interval of that \
         median, distribution-free (order statistics)\n",
    );
    if let Some(p) = config.precision {
        out += &format!(
            "# precision: each size repeated until the interval's half-width is within {}% of \
             the median, tested from {} samples on, at most {} samples or {} s per size\n",
            p.percent, p.min_samples, p.max_samples, p.max_time_per_size_s
        );
    }
    out += &format!(
        "# repeat: {:>8} {:>7} {:>16} {:>16} {:>16} {:>16} {:>16} {:>7}  {}\n",
        "msgsize",
        "samples",
        "min msgs/sec",
        "median msgs/sec",
        "max msgs/sec",
        "ci95 low",
        "ci95 high",
        "+-%",
        "stopped by"
    );
    let value = |v: Option<f64>, width: usize, decimals: usize| match v {
        Some(v) => format!("{v:>width$.decimals$}"),
        None => format!("{:>width$}", "-"),
    };
    for size in sizes {
        let s = &size.statistics.summary;
        out += &format!(
            "# repeat: {:>8} {:>7} {:>16.2} {:>16.2} {:>16.2} {} {} {}  {}\n",
            size.msgsize,
            s.samples,
            s.min,
            s.median,
            s.max,
            value(s.ci95.low, 16, 2),
            value(s.ci95.high, 16, 2),
            value(s.ci95.half_width_percent, 7, 2),
            size.stopped_by.name()
        );
    }
    if sizes
        .iter()
        .any(|s| s.statistics.summary.ci95.low.is_none())
    {
        out += &format!(
            "# repeat: - : no {:.0} % interval of the median from fewer than {} samples\n",
            CONFIDENCE * 100.0,
            stats::min_samples_for(CONFIDENCE)
        );
    }
    out + &independence_lines(sizes)
}

/// The `# repeat:` lines on whether each size's loops look independent: what was tested,
/// then one `NOT INDEPENDENT` line per flagged size, or a line saying none was. Nothing
/// when no size has enough loops to test.
fn independence_lines(sizes: &[SizeResult]) -> String {
    let tested: Vec<(&SizeResult, &independence::Independence)> = sizes
        .iter()
        .filter_map(|s| Some((s, s.statistics.independence.as_ref()?)))
        .collect();
    if tested.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "# repeat: independence: each size's loops, in the order run, tested for a trend \
         (Mann-Kendall) and for phases or alternation (runs about the median); a size of \
         independent loops is flagged at most 1 time in {:.0}\n",
        1.0 / independence::LEVEL
    );
    let flagged: Vec<_> = tested.iter().filter(|(_, i)| i.dependent).collect();
    for (size, found) in &flagged {
        out += &format!(
            "# repeat: NOT INDEPENDENT {} B: {}; its interval describes these loops, not \
             what they vary by\n",
            size.msgsize,
            found.finding()
        );
    }
    if flagged.is_empty() {
        out += &format!(
            "# repeat: independence: no trend or phases in any size tested ({} tested)\n",
            tested.len()
        );
    }
    out
}

/// The `--verbose` block printed before the header: options, rank mapping, hosts.
pub fn verbose(config: &Config, hosts: &[String]) -> String {
    let mut out = String::new();
    for (name, value) in [
        ("num_cores", config.num_cores as u64),
        ("num_nbors", config.num_nbors as u64),
        ("num_iters", config.num_iters),
        ("win_size", config.win_size as u64),
        ("min_msgsize", config.min_msgsize),
        ("max_msgsize", config.max_msgsize),
    ] {
        out += &format!("# {name} {value}\n");
    }
    out += "\n";
    let topology = Topology {
        num_cores: config.num_cores,
        num_nbors: config.num_nbors,
    };
    for core in 0..config.num_cores {
        let list: Vec<String> = topology
            .neighbours_of(core)
            .map(|r| r.to_string())
            .collect();
        out += &format!("# core rank {core} has neighbor ranks {}\n", list.join(" "));
    }
    out += "\n";
    for (rank, host) in hosts.iter().enumerate() {
        out += &format!("# rank {rank} is on {}\n", outfile::shown::text(host));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rates::Rate;

    fn config() -> Config {
        Config {
            num_cores: 1,
            num_nbors: 1,
            num_iters: 4096,
            win_size: 10,
            min_msgsize: 0,
            max_msgsize: 4_194_304,
            validate: false,
            repeat: 1,
            precision: None,
        }
    }

    fn same(rate: f64, mib: f64) -> Rates {
        let r = Rate {
            msgs_per_s: rate,
            mib_per_s: mib,
        };
        Rates {
            average: r,
            max: r,
            min: r,
        }
    }

    #[test]
    fn the_header_is_the_references_byte_for_byte() {
        let expected = "\
# SQMR v1.1.0 - MPI maximal message rate benchmark
# Run at 12/01/26 18:43:18, with rank 0 on node001
#
# MPI tasks per node                 : 1
# Neighbor tasks                     : 1
# Iterations per message size        : 4096
# Send/Recv operations per iteration : 10
#
#                          average                  max                     min
# msgsize iters     msgs/sec    MiB/sec     msgs/sec    MiB/sec     msgs/sec    MiB/sec
";
        assert_eq!(header(&config(), "12/01/26 18:43:18", "node001"), expected);
    }

    #[test]
    fn rows_are_the_references_byte_for_byte() {
        assert_eq!(
            row(0, 4096, &same(8_582_469.76, 0.0)),
            "       0   4096   8582469.76       0.00   8582469.76       0.00   8582469.76       0.00"
        );
        assert_eq!(
            row(1_048_576, 40, &same(13_522.48, 13_522.48)),
            " 1048576     40     13522.48   13522.48     13522.48   13522.48     13522.48   13522.48"
        );
    }

    #[test]
    fn a_wide_value_widens_its_field_only() {
        let r = Rates {
            average: Rate {
                msgs_per_s: 1.0,
                mib_per_s: 2.0,
            },
            max: Rate {
                msgs_per_s: 123_456_789_012.345,
                mib_per_s: 3.0,
            },
            min: Rate {
                msgs_per_s: 0.5,
                mib_per_s: 0.25,
            },
        };
        assert_eq!(
            row(123_456_789, 1_234_567, &r),
            "123456789 1234567         1.00       2.00 123456789012.35       3.00         0.50       0.25"
        );
    }

    #[test]
    fn the_repeat_lines_give_each_size_its_statistics() {
        use crate::schedule::Step;
        use crate::stats::Measured;
        use crate::stats::{Precision, Stop};
        let size = |msgsize, times: &[f64], stop| {
            let measured = Measured {
                samples: times.iter().map(|&t| vec![t]).collect(),
                stop,
                wall_s: 1.0,
            };
            SizeResult::from_samples(Step { msgsize, iters: 10 }, 100.0, measured).unwrap()
        };
        let sizes = [
            size(0, &[1.0, 0.5, 0.25, 2.0, 1.0, 0.5, 1.0], Stop::Precision),
            size(1, &[1.0, 2.0], Stop::TimeCap),
        ];
        let mut c = config();
        c.repeat = 7;
        c.precision = Some(Precision {
            percent: 2.0,
            max_time_per_size_s: 5.0,
            min_samples: 7,
            max_samples: 1000,
        });
        let text = repeats(&c, &sizes);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.iter().all(|l| l.starts_with("# ")), "{text}");
        assert!(
            lines[1].starts_with(
                "# precision: each size repeated until the interval's \
             half-width is within 2% of the median, tested from 7 samples on, at most 1000 \
             samples or 5 s per size"
            ),
            "{text}"
        );
        assert!(
            lines[2].starts_with("# repeat:  msgsize samples     min msgs/sec"),
            "{text}"
        );
        // Rates 100/t: 50 .. 400, median 100; 7 samples: the interval is min..max.
        assert_eq!(
            lines[3],
            concat!(
                "# repeat:        0       7            50.00           100.00           400.00",
                "            50.00           400.00  175.00  precision"
            )
        );
        assert_eq!(
            lines[4],
            concat!(
                "# repeat:        1       2            50.00            50.00           100.00",
                "                -                -       -  time cap"
            )
        );
        assert_eq!(
            lines[5],
            "# repeat: - : no 95 % interval of the median from fewer than 6 samples"
        );
        // Size 0's seven loops show no trend or phases; size 1 has too few to test.
        assert!(
            lines[6].starts_with("# repeat: independence: each size's loops, in the order run"),
            "{text}"
        );
        assert_eq!(
            lines[7],
            "# repeat: independence: no trend or phases in any size tested (1 tested)"
        );
        assert_eq!(lines.len(), 8, "{text}");

        // Loops that slow down one after the other: flagged, with the direction.
        let slowing = [size(
            8,
            &[1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8],
            Stop::Repeat,
        )];
        let text = repeats(&config(), &slowing);
        let flagged: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("# repeat: NOT INDEPENDENT 8 B: rates falling"))
            .collect();
        assert_eq!(flagged.len(), 1, "{text}");
        assert!(flagged[0].contains("trend p = 5.5e-6"), "{text}");
        assert!(!text.contains("no trend or phases in"), "{text}");
    }

    #[test]
    fn verbose_lists_options_mapping_and_hosts_in_order() {
        let mut c = config();
        c.num_cores = 2;
        c.num_nbors = 2;
        let hosts: Vec<String> = ["a", "a", "b", "b", "c", "c"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let text = verbose(&c, &hosts);
        assert!(text.starts_with("# num_cores 2\n# num_nbors 2\n# num_iters 4096\n"));
        assert!(text.contains("# max_msgsize 4194304\n\n# core rank 0 has neighbor ranks 2 3\n"));
        assert!(text.contains("# core rank 1 has neighbor ranks 4 5\n\n# rank 0 is on a\n"));
        assert!(text.ends_with("# rank 5 is on c\n"));
    }

    #[test]
    fn host_names_cannot_forge_lines_nor_reach_the_terminal() {
        let hosts = vec!["n1\n# rank 9 is on x\x1b[2J".to_string()];
        let text = verbose(&config(), &hosts);
        assert!(
            text.ends_with("# rank 0 is on n1\\n# rank 9 is on x\\x1b[2J\n"),
            "{text}"
        );
        let head = header(&config(), "01/02/26 03:04:05", &hosts[0]);
        assert!(
            head.contains("with rank 0 on n1\\n# rank 9 is on x\\x1b[2J\n#\n"),
            "{head}"
        );
        assert!(!head.contains('\x1b') && !text.contains('\x1b'));
    }
}
