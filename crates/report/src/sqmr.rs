//! The fields of a `sqmr --json` document that the reports use.

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
    /// Average, max and min.
    pub rates: Rates,
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
