//! From the core ranks' elapsed times to the three rates of a row.
//!
//! With `msgs = win_size · num_nbors · num_cores · iters · 2` (sends and receives of all
//! core ranks): average = msgs / mean time, max = msgs / fastest time, min = msgs /
//! slowest time; each bandwidth is its rate · msgsize / 2^20. The figures are node
//! aggregates, computed in floating point so no product can overflow.

use serde::{Deserialize, Serialize};

/// The sum, minimum and maximum of the core ranks' elapsed seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Times {
    /// Sum over the core ranks.
    pub sum: f64,
    /// Fastest core rank.
    pub min: f64,
    /// Slowest core rank.
    pub max: f64,
}

impl Times {
    /// The aggregate of a list of elapsed times.
    pub fn of(elapsed: &[f64]) -> Times {
        Times {
            sum: elapsed.iter().sum(),
            min: elapsed.iter().copied().fold(f64::INFINITY, f64::min),
            max: elapsed.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// A message rate and the bandwidth it means.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Rate {
    /// Messages per second.
    pub msgs_per_s: f64,
    /// MiB (2^20 bytes) per second.
    pub mib_per_s: f64,
}

/// The three figures of one row.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Rates {
    /// From the mean core time.
    pub average: Rate,
    /// From the fastest core.
    pub max: Rate,
    /// From the slowest core.
    pub min: Rate,
}

/// Messages counted in a row.
pub fn messages(win_size: usize, num_nbors: usize, num_cores: usize, iters: u64) -> f64 {
    win_size as f64 * num_nbors as f64 * num_cores as f64 * iters as f64 * 2.0
}

/// The rates of a row: `msgs` messages of `msgsize` bytes in the core ranks' `times`.
pub fn rates(msgs: f64, msgsize: u64, num_cores: usize, times: Times) -> Rates {
    let rate = |seconds: f64| {
        let msgs_per_s = msgs / seconds;
        Rate {
            msgs_per_s,
            mib_per_s: msgs_per_s * msgsize as f64 / 1_048_576.0,
        }
    };
    Rates {
        average: rate(times.sum / num_cores as f64),
        max: rate(times.min),
        min: rate(times.max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_follow_the_formulas() {
        // 2 cores, 3 neighbours, window 10, 100 iterations: 12000 messages.
        let msgs = messages(10, 3, 2, 100);
        assert_eq!(msgs, 12_000.0);
        let r = rates(msgs, 1_048_576, 2, Times::of(&[0.5, 1.5]));
        assert_eq!(r.average.msgs_per_s, 12_000.0);
        assert_eq!(r.max.msgs_per_s, 24_000.0);
        assert_eq!(r.min.msgs_per_s, 8_000.0);
        assert_eq!(r.average.mib_per_s, 12_000.0);
        assert!(
            r.min.msgs_per_s <= r.average.msgs_per_s && r.average.msgs_per_s <= r.max.msgs_per_s
        );
    }

    #[test]
    fn zero_byte_messages_move_no_bandwidth() {
        let r = rates(20.0, 0, 1, Times::of(&[2.0]));
        assert_eq!((r.average.msgs_per_s, r.average.mib_per_s), (10.0, 0.0));
    }

    #[test]
    fn the_count_does_not_overflow_an_int() {
        // The reference multiplied in int: 2^31 messages wrapped.
        assert_eq!(
            messages(1 << 20, 64, 64, 4096),
            2.0 * 2f64.powi(20 + 6 + 6 + 12)
        );
    }
}
