//! The fields of a `sqmr --json` document that the reports use.
//!
//! Schema version 2 added, per size, the statistics of repeated samples (`--repeat`,
//! `--precision`): [`Size::statistics`], absent from version 1 documents.

use serde::{Deserialize, Serialize};

/// A sqmr result (unknown fields are ignored).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Document {
    /// Whether every size of the schedule finished.
    #[serde(default)]
    pub complete: bool,
    /// The configuration, when present.
    #[serde(default)]
    pub config: Option<Config>,
    /// The MPI library, when present.
    #[serde(default)]
    pub environment: Option<Environment>,
    /// One entry per finished size.
    pub sizes: Vec<Size>,
}

/// The configuration fields shown in summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct Config {
    /// Core ranks.
    pub num_cores: u64,
    /// Neighbours per core rank.
    pub num_nbors: u64,
    /// Window size.
    pub win_size: u64,
}

/// Where it ran.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Environment {
    /// `MPI_Get_library_version`.
    pub mpi_library: String,
}

/// The measurements at one message size.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Size {
    /// Message size in bytes.
    pub msgsize: u64,
    /// Timed iterations.
    pub iters: u64,
    /// Average, max and min (of the median sample, when the size was repeated).
    pub rates: Rates,
    /// The statistics of the samples' average rates (schema version 2).
    #[serde(default)]
    pub statistics: Option<Statistics>,
}

/// Minimum, median, maximum and the 95 % confidence interval of the median of a size's
/// samples, all of the average message rate (msgs/s).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Statistics {
    /// Samples taken.
    pub samples: u64,
    /// The smallest average rate.
    pub min: f64,
    /// The median average rate.
    pub median: f64,
    /// The largest average rate.
    pub max: f64,
    /// The interval of the median.
    pub ci95: Interval,
}

/// A confidence interval; both bounds `None` when there were too few samples.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Interval {
    /// Lower bound (msgs/s).
    pub low: Option<f64>,
    /// Upper bound (msgs/s).
    pub high: Option<f64>,
}

impl Size {
    /// The 95 % interval of the median, when there is one, with `pick` applied to its
    /// bounds as rates of this size (so that bandwidths are bounded too).
    pub fn interval(&self, pick: fn(&Rate) -> f64) -> Option<(f64, f64)> {
        let ci = self.statistics?.ci95;
        let rate = |msgs_per_s: f64| Rate {
            msgs_per_s,
            mib_per_s: msgs_per_s * self.msgsize as f64 / 1_048_576.0,
        };
        Some((pick(&rate(ci.low?)), pick(&rate(ci.high?))))
    }
}

/// The three figures of a row.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Rates {
    /// From the mean core time.
    pub average: Rate,
    /// From the fastest core.
    pub max: Rate,
    /// From the slowest core.
    pub min: Rate,
}

/// A message rate and its bandwidth.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// Messages per second.
    pub msgs_per_s: f64,
    /// MiB/s.
    pub mib_per_s: f64,
}

impl Document {
    /// The peak average message rate and its size.
    pub fn peak_rate(&self) -> Option<(u64, f64)> {
        self.sizes
            .iter()
            .map(|s| (s.msgsize, s.rates.average.msgs_per_s))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The peak average bandwidth and its size.
    pub fn peak_bandwidth(&self) -> Option<(u64, f64)> {
        self.sizes
            .iter()
            .map(|s| (s.msgsize, s.rates.average.mib_per_s))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }
}
