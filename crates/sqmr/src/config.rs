//! The checked configuration of a run: options against the job size and the host.
//!
//! [`Config::check`] is deterministic: every rank runs it on the same options and world
//! size and reaches the same verdict, so all ranks leave together. The first seven
//! diagnostics are the reference's, word for word and in its order; the limits after them
//! (memory for the request arrays and buffers, the `int` count of one MPI call) are ours.

use serde::{Deserialize, Serialize};

use crate::options::Options;
use crate::stats::{
    min_samples_for, Plan, Precision, CONFIDENCE, DEFAULT_MAX_TIME_PER_SIZE_S,
    PRECISION_MAX_SAMPLES,
};

/// The largest byte count one MPI call can move with `MPI_BYTE` (an `int` count).
pub const MAX_MESSAGE_BYTES: u64 = i32::MAX as u64;

/// Warm-up iterations before the timed ones, at every size.
pub const WARMUP_ITERATIONS: u64 = 10;

/// A configuration that passed every check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Config {
    /// Ranks on the core node.
    pub num_cores: usize,
    /// Neighbours per core rank.
    pub num_nbors: usize,
    /// Iterations at the first size.
    pub num_iters: u64,
    /// Send/receive pairs per neighbour per iteration.
    pub win_size: usize,
    /// Smallest message in bytes.
    pub min_msgsize: u64,
    /// Largest message in bytes.
    pub max_msgsize: u64,
    /// One receive buffer per pending receive and checked message contents.
    pub validate: bool,
    /// `--repeat K`: timed loops per size (1 by default, as in the reference).
    #[serde(default = "one")]
    pub repeat: u64,
    /// `--precision`: repeat each size until the median's interval is narrow enough.
    #[serde(default)]
    pub precision: Option<Precision>,
}

fn one() -> u64 {
    1
}

/// What the host offers, for the limits the reference never checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostLimits {
    /// Memory available to a new allocation on this host, if known.
    pub available_bytes: Option<u64>,
    /// Bytes of one `MPI_Request` handle in this MPI library.
    pub request_bytes: u64,
    /// Bytes one page takes (buffers are page-aligned).
    pub page_bytes: u64,
}

/// A failed check: the message to print (without the usage hint).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic(pub String);

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Config {
    /// Checks `options` for a job of `world_size` ranks on a host with `limits`.
    pub fn check(
        options: &Options,
        world_size: usize,
        limits: HostLimits,
    ) -> Result<Config, Diagnostic> {
        let fail = |text: String| Err(Diagnostic(text));
        let num_cores = options.num_cores.unwrap_or((world_size / 2) as i64);
        if num_cores <= 0 {
            return fail("ERROR Must specify num_cores > 0".into());
        }
        if options.num_nbors <= 0 {
            return fail("ERROR Must specify num_nbors > 0".into());
        }
        if options.num_iters <= 0 {
            return fail("ERROR Must specify num_iters > 0".into());
        }
        let needed = i128::from(num_cores) * (1 + i128::from(options.num_nbors));
        if needed != world_size as i128 {
            return fail(format!(
                "ERROR need exactly {needed} ranks for num_cores {num_cores} and num_nbors {}, \
                 have {world_size}",
                options.num_nbors
            ));
        }
        if options.win_size <= 0 {
            return fail("ERROR Must specify win_size > 0".into());
        }
        if options.min_msgsize < 0 {
            return fail("ERROR Must specify min_msgsize >= 0".into());
        }
        if options.max_msgsize < options.min_msgsize {
            return fail("ERROR Must specify max_msgsize >= min_msgsize".into());
        }
        if options.repeat <= 0 {
            return fail("ERROR Must specify repeat > 0".into());
        }
        let repeat = options.repeat as u64;
        let precision = options.precision.map(|percent| {
            // Samples taken before the interval is first tested: the fewest that give
            // one, or more with --repeat.
            let min_samples = repeat.max(min_samples_for(CONFIDENCE) as u64);
            Precision {
                percent,
                max_time_per_size_s: options
                    .max_time_per_size
                    .unwrap_or(DEFAULT_MAX_TIME_PER_SIZE_S),
                min_samples,
                max_samples: min_samples.max(PRECISION_MAX_SAMPLES),
            }
        });
        // Every value is positive from here on, and the rank count bounds the first two.
        let config = Config {
            num_cores: num_cores as usize,
            num_nbors: options.num_nbors as usize,
            num_iters: options.num_iters as u64,
            win_size: options.win_size as usize,
            min_msgsize: options.min_msgsize as u64,
            max_msgsize: options.max_msgsize as u64,
            validate: options.validate,
            repeat,
            precision,
        };
        config.check_limits(limits)?;
        Ok(config)
    }

    /// Ranks in the job: `num_cores · (1 + num_nbors)`.
    pub fn world_size(&self) -> usize {
        self.num_cores * (1 + self.num_nbors)
    }

    /// How many samples each size takes.
    pub fn plan(&self) -> Plan {
        Plan {
            repeat: self.repeat,
            precision: self.precision,
        }
    }

    /// Whether sizes are sampled more than once (`--repeat` above 1 or `--precision`):
    /// then the text, JSON and CSV carry the samples' figures.
    pub fn repeats(&self) -> bool {
        self.repeat > 1 || self.precision.is_some()
    }

    /// Pending sends (and as many receives) per iteration on a core rank.
    pub fn window_requests(&self) -> u128 {
        self.win_size as u128 * self.num_nbors as u128
    }

    /// Memory rank `rank` needs: a core rank's window spans all its neighbours, a
    /// neighbour's only its core rank ([`Config::core_rank_bytes`] for the former).
    pub fn rank_bytes(&self, rank: usize, limits: HostLimits) -> u128 {
        if rank < self.num_cores {
            return self.core_rank_bytes(limits);
        }
        let window = self.win_size as u128;
        let requests = 2 * window * u128::from(limits.request_bytes);
        requests + self.buffer_bytes(window, limits)
    }

    /// The message buffers of a rank with `window` pending receives, page alignment
    /// included: one send buffer, and one receive buffer (the reference's), or with
    /// `--validate` one per pending receive, the pattern's base and the expected message.
    fn buffer_bytes(&self, window: u128, limits: HostLimits) -> u128 {
        // Each buffer is one allocation a page larger (the receive buffers of --validate
        // are one allocation too).
        let (messages, allocations) = if self.validate {
            (window + 3, 4)
        } else {
            (2, 2)
        };
        u128::from(self.max_msgsize) * messages + u128::from(limits.page_bytes) * allocations
    }

    /// Memory one core rank needs: request arrays and buffers, page alignment included.
    pub fn core_rank_bytes(&self, limits: HostLimits) -> u128 {
        let window = self.window_requests();
        let requests = 2 * window * u128::from(limits.request_bytes);
        requests + self.buffer_bytes(window, limits)
    }

    fn check_limits(&self, limits: HostLimits) -> Result<(), Diagnostic> {
        if self.max_msgsize > MAX_MESSAGE_BYTES {
            return Err(Diagnostic(format!(
                "ERROR max_msgsize {} is larger than {MAX_MESSAGE_BYTES} bytes, the most one \
                 MPI call can send with an int count; use --max_msgsize {} (2 GiB - 1) or less",
                self.max_msgsize, MAX_MESSAGE_BYTES
            )));
        }
        let need = self.core_rank_bytes(limits);
        let window = self.window_requests();
        let too_much_memory = limits
            .available_bytes
            .filter(|&available| need > u128::from(available));
        if too_much_memory.is_none() && window <= i32::MAX as u128 {
            return Ok(());
        }
        let buffers = if self.validate {
            "one send buffer, one receive buffer per pending receive, and the pattern's base \
             and expected message (--validate)"
        } else {
            "one send and one receive buffer"
        };
        let reason = match too_much_memory {
            Some(available) => format!(
                "more than the {} available on this host",
                human_bytes(u128::from(available))
            ),
            None => format!(
                "and {window} requests per MPI_Waitall, more than its int count allows ({})",
                i32::MAX
            ),
        };
        Err(Diagnostic(format!(
            "ERROR win_size {} with num_nbors {} and max_msgsize {} needs {} per core rank \
             ({} request handles of {} bytes, {buffers}), {reason}; lower --win_size or \
             --max_msgsize",
            self.win_size,
            self.num_nbors,
            self.max_msgsize,
            human_bytes(need),
            2 * window,
            limits.request_bytes,
        )))
    }
}

/// Bytes as a short binary figure: `32.0 GiB`.
pub fn human_bytes(bytes: u128) -> String {
    const UNITS: [&str; 6] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOMY: HostLimits = HostLimits {
        available_bytes: Some(1 << 40),
        request_bytes: 8,
        page_bytes: 4096,
    };

    fn options(args: &[&str]) -> Options {
        Options::parse_from_args(std::iter::once("sqmr").chain(args.iter().copied())).unwrap()
    }

    fn check(args: &[&str], world: usize) -> Result<Config, String> {
        Config::check(&options(args), world, ROOMY).map_err(|d| d.0)
    }

    #[test]
    fn num_cores_defaults_to_half_the_job() {
        let c = check(&[], 8).unwrap();
        assert_eq!((c.num_cores, c.num_nbors, c.world_size()), (4, 1, 8));
    }

    #[test]
    fn reference_diagnostics_in_order() {
        let cases: [(&[&str], usize, &str); 10] = [
            (&[], 1, "ERROR Must specify num_cores > 0"),
            (&["--num_cores=-3"], 4, "ERROR Must specify num_cores > 0"),
            // num_cores is checked before num_nbors, num_nbors before num_iters.
            (
                &["--num_cores=0", "--num_nbors=0"],
                4,
                "ERROR Must specify num_cores > 0",
            ),
            (
                &["--num_nbors=0", "--num_iters=0"],
                4,
                "ERROR Must specify num_nbors > 0",
            ),
            (
                &["--num_iters=0", "--win_size=0"],
                4,
                "ERROR Must specify num_iters > 0",
            ),
            (
                &["--num_cores=8", "--num_nbors=4", "--win_size=0"],
                39,
                "ERROR need exactly 40 ranks for num_cores 8 and num_nbors 4, have 39",
            ),
            (
                &["--win_size=0", "--min_msgsize=-1"],
                2,
                "ERROR Must specify win_size > 0",
            ),
            (
                &["--min_msgsize=-1", "--max_msgsize=-2"],
                2,
                "ERROR Must specify min_msgsize >= 0",
            ),
            (
                &["--min_msgsize=8", "--max_msgsize=4"],
                2,
                "ERROR Must specify max_msgsize >= min_msgsize",
            ),
            (&["--win_size=-1"], 2, "ERROR Must specify win_size > 0"),
        ];
        for (args, world, message) in cases {
            assert_eq!(
                check(args, world).unwrap_err(),
                message,
                "{args:?} on {world}"
            );
        }
    }

    #[test]
    fn the_rank_count_does_not_overflow() {
        let err = check(&["--num_cores=4611686018427387904", "--num_nbors=4"], 4).unwrap_err();
        assert_eq!(
            err,
            "ERROR need exactly 23058430092136939520 ranks for num_cores 4611686018427387904 \
             and num_nbors 4, have 4"
        );
    }

    #[test]
    fn a_neighbour_needs_one_window_a_core_rank_one_per_neighbour() {
        let config = check(
            &[
                "--num_cores",
                "1",
                "--num_nbors",
                "2",
                "--win_size",
                "4",
                "--validate",
            ],
            3,
        )
        .unwrap();
        let l = ROOMY;
        let core = config.rank_bytes(0, l);
        let neighbour = config.rank_bytes(1, l);
        assert_eq!(core, config.core_rank_bytes(l));
        assert!(neighbour < core, "{neighbour} < {core}");
        // 4 pending receives with their own buffers plus one send buffer, the pattern's
        // base and the expected message, four pages, and 8 request handles.
        let m = 4_194_304u128;
        assert_eq!(
            neighbour,
            8 * u128::from(l.request_bytes) + m * 7 + 4 * u128::from(l.page_bytes)
        );
    }

    #[test]
    fn the_manuals_huge_window_names_the_memory_it_needs() {
        let limits = HostLimits {
            available_bytes: Some(24 << 30),
            ..ROOMY
        };
        let err = Config::check(&options(&["--win_size=2147483648"]), 2, limits).unwrap_err();
        assert!(
            err.0
                .starts_with("ERROR win_size 2147483648 with num_nbors 1"),
            "{err}"
        );
        assert!(err.0.contains("needs 32.0 GiB per core rank"), "{err}");
        assert!(err.0.contains("24.0 GiB available"), "{err}");
    }

    #[test]
    fn a_window_past_the_int_count_is_refused_even_with_memory() {
        let err = check(&["--win_size=2147483648"], 2).unwrap_err();
        assert!(
            err.contains("more than its int count allows (2147483647)"),
            "{err}"
        );
    }

    #[test]
    fn validate_counts_one_buffer_per_pending_receive() {
        let plain = check(&["--win_size=10", "--num_nbors=2", "--num_cores=1"], 3).unwrap();
        let validate = check(
            &[
                "--win_size=10",
                "--num_nbors=2",
                "--num_cores=1",
                "--validate",
            ],
            3,
        )
        .unwrap();
        let message = 4_194_304u128;
        // 19 more receive buffers, the base and the expected message, and the pages of
        // their two allocations.
        assert_eq!(
            validate.core_rank_bytes(ROOMY) - plain.core_rank_bytes(ROOMY),
            21 * message + 2 * 4096
        );
        assert_eq!(
            plain.core_rank_bytes(ROOMY),
            2 * 20 * 8 + 2 * message + 8192
        );
    }

    #[test]
    fn messages_past_the_int_count_are_refused_with_the_limit_named() {
        let err = check(&["--max_msgsize=4G"], 2).unwrap_err();
        assert!(err.starts_with("ERROR max_msgsize 4294967296 is larger than 2147483647 bytes"));
        assert!(check(&["--max_msgsize=2147483647", "--min_msgsize=2147483647"], 2).is_ok());
    }

    #[test]
    fn repeats_and_precision_reach_the_plan() {
        let c = check(&[], 2).unwrap();
        assert_eq!((c.repeat, c.precision, c.repeats()), (1, None, false));
        let c = check(&["--repeat", "7"], 2).unwrap();
        assert_eq!((c.plan().repeat, c.repeats()), (7, true));
        let c = check(&["--precision", "2"], 2).unwrap();
        let p = c.precision.unwrap();
        assert_eq!(
            (
                p.percent,
                p.max_time_per_size_s,
                p.min_samples,
                p.max_samples
            ),
            (2.0, 10.0, 6, 1000)
        );
        assert!(c.repeats());
        // --repeat raises the samples taken before the first test.
        let c = check(
            &["--precision=1", "--repeat=20", "--max-time-per-size=3"],
            2,
        )
        .unwrap();
        let p = c.precision.unwrap();
        assert_eq!((p.min_samples, p.max_time_per_size_s), (20, 3.0));
        // After the reference's checks.
        assert_eq!(
            check(&["--repeat=0"], 2).unwrap_err(),
            "ERROR Must specify repeat > 0"
        );
        assert_eq!(
            check(&["--repeat=-1", "--win_size=0"], 2).unwrap_err(),
            "ERROR Must specify win_size > 0"
        );
    }

    #[test]
    fn human_bytes_reads_well() {
        assert_eq!(human_bytes(17), "17 bytes");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(32 << 30), "32.0 GiB");
    }
}
