//! Sizes that ran far slower than the sizes beside them: a stall that recovered, a link
//! that came back, a node that paused. Such a size is flagged (a `WARNING` line, the
//! JSON's `warnings`, a `*` on its row), never folded into the table as if it were the
//! network's rate.
//!
//! The rule: a size is flagged when its average rate is below a fifth ([`FACTOR`]) of the
//! lower of its neighbours' rates (the sizes before and after it, as far as they are
//! measured) and it took at least [`MIN_EXCESS_S`] longer than it would have at that
//! rate; or, once both its neighbours are measured, below 1/[`LONG_FACTOR`] of the lower
//! and at least [`LONG_EXCESS_S`] longer (a pause of 10 s in a loop of 6 s: the rate falls
//! only to about 40 %; judged against one neighbour alone, a bandwidth-bound size is
//! itself at half the rate of the one before). A doubling of the
//! message size at most halves a healthy rate (the bandwidth bound), and a loop of a few
//! milliseconds disturbed by the machine's load cannot add a second.
//!
//! A stall outside the timed loops (in the warm-up or a barrier) leaves the rates as they
//! were but the size's wall time long: a size is also flagged when the time it spent
//! outside its timed loops exceeds [`FACTOR`] times what its warm-up iterations take at
//! the size's own pace, plus [`MIN_EXCESS_S`].

use crate::report::json::{Anomaly, SizeResult};

/// How many times slower than its neighbours a size must be to be flagged.
pub const FACTOR: f64 = 5.0;

/// The least excess time of a flagged size, in seconds.
pub const MIN_EXCESS_S: f64 = 1.0;

/// How many times slower a size of long loops must be, with [`LONG_EXCESS_S`] lost.
pub const LONG_FACTOR: f64 = 2.0;

/// The least excess time of a size flagged by [`LONG_FACTOR`], in seconds.
pub const LONG_EXCESS_S: f64 = 5.0;

/// The anomalies among `sizes` (in the order measured), judging each size against the
/// neighbours measured so far.
pub fn judge(sizes: &[SizeResult]) -> Vec<Anomaly> {
    (0..sizes.len())
        .filter_map(|i| {
            let neighbours: Vec<f64> = [i.checked_sub(1), Some(i + 1)]
                .into_iter()
                .flatten()
                .filter_map(|j| sizes.get(j))
                .map(|s| s.rates.average.msgs_per_s)
                .filter(|r| r.is_finite() && *r > 0.0)
                .collect();
            let reference = neighbours.iter().copied().fold(f64::INFINITY, f64::min);
            anomaly(&sizes[i], reference, neighbours.len() == 2).or_else(|| untimed(&sizes[i]))
        })
        .collect()
}

/// A size whose time outside its timed loops (warm-up, barriers) is far longer than its
/// warm-up should take.
fn untimed(size: &SizeResult) -> Option<Anomaly> {
    let wall = size.wall_s?;
    let timed: f64 = size
        .samples
        .iter()
        .map(|s| s.core_elapsed_s.iter().copied().fold(0.0, f64::max))
        .sum();
    let loops = size.samples.len().max(1) as f64;
    let per_iteration = timed / (loops * size.iters.max(1) as f64);
    let expected = per_iteration * crate::config::WARMUP_ITERATIONS as f64;
    let outside = wall - timed;
    if !outside.is_finite() || outside <= FACTOR * expected + MIN_EXCESS_S {
        return None;
    }
    let message = format!(
        "anomaly: message size {} B spent {:.1} s outside its timed loops (warm-up and \
         barriers; about {:.2} s expected): a stall that recovered, or a link that came \
         back? Its rates were measured after it; the row is marked '*'",
        size.msgsize, outside, expected
    );
    Some(Anomaly {
        kind: "slow_untimed".into(),
        msgsize: size.msgsize,
        msgs_per_s: size.rates.average.msgs_per_s,
        reference_msgs_per_s: size.rates.average.msgs_per_s,
        seconds: outside,
        expected_seconds: expected,
        message,
    })
}

fn anomaly(size: &SizeResult, reference: f64, both_sides: bool) -> Option<Anomaly> {
    let rate = size.rates.average.msgs_per_s;
    if !reference.is_finite() || !rate.is_finite() || rate <= 0.0 {
        return None;
    }
    let seconds = size.core_elapsed_s.iter().copied().fold(0.0, f64::max);
    let expected = seconds * rate / reference;
    let excess = seconds - expected;
    let slow = rate * FACTOR < reference && excess >= MIN_EXCESS_S;
    let slow_and_long = both_sides && rate * LONG_FACTOR < reference && excess >= LONG_EXCESS_S;
    if !(slow || slow_and_long) {
        return None;
    }
    let message = format!(
        "anomaly: message size {} B ran at {:.0} msgs/s, 1/{:.1} of its neighbours' {:.0} \
         msgs/s: its timed loop took {:.1} s where about {:.2} s were expected (a stall that \
         recovered, or a link that came back?); the row is marked '*'",
        size.msgsize,
        rate,
        reference / rate,
        reference,
        seconds,
        expected
    );
    Some(Anomaly {
        kind: "slow_size".into(),
        msgsize: size.msgsize,
        msgs_per_s: rate,
        reference_msgs_per_s: reference,
        seconds,
        expected_seconds: expected,
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rates::{Rate, Rates};
    use crate::report::json::{Sample, Statistics};

    fn size(msgsize: u64, rate: f64, seconds: f64) -> SizeResult {
        let r = Rate {
            msgs_per_s: rate,
            mib_per_s: rate * msgsize as f64 / 1048576.0,
        };
        let rates = Rates {
            average: r,
            max: r,
            min: r,
        };
        SizeResult {
            msgsize,
            iters: 100,
            messages: rate * seconds,
            core_elapsed_s: vec![seconds],
            rates,
            samples: vec![Sample {
                core_elapsed_s: vec![seconds],
                rates,
            }],
            median_sample: 0,
            statistics: Statistics {
                of: "average msgs/s".into(),
                summary: crate::stats::summarize(&[rate]).unwrap(),
                independence: None,
            },
            stopped_by: crate::stats::Stop::Repeat,
            wall_s: Some(seconds),
        }
    }

    #[test]
    fn a_paused_size_is_flagged_a_bandwidth_bound_run_is_not() {
        // The case: rank 1 stopped 90 s at size 1.
        let run = [
            size(0, 420_000.0, 0.4),
            size(1, 3_463.0, 90.5),
            size(2, 228_000.0, 0.5),
        ];
        let found = judge(&run);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].msgsize, 1);
        assert!(
            found[0].message.contains("1/65.8 of its neighbours"),
            "{}",
            found[0].message
        );
        // Halving rates from size to size (bandwidth bound) are healthy.
        let healthy: Vec<_> = (0..8)
            .map(|k| {
                size(
                    1 << (16 + k),
                    50_000.0 / f64::from(1 << k),
                    0.5 * f64::from(k + 1),
                )
            })
            .collect();
        assert!(judge(&healthy).is_empty());
        // Open MPI 5 here: a 10 s pause in a loop of about 6 s.
        let long = [
            size(0, 4_991_672.0, 7.81),
            size(1, 2_091_764.0, 14.92),
            size(2, 5_828_491.0, 4.28),
        ];
        assert_eq!(judge(&long).len(), 1, "{:?}", judge(&long));
        // Twice slower but only 3 s lost in long loops: load, not flagged.
        let loaded = [size(0, 5_000_000.0, 6.0), size(1, 2_400_000.0, 6.25)];
        assert!(judge(&loaded).is_empty());
        // A slow but short loop (milliseconds) is load, not a stall.
        let short = [size(0, 400_000.0, 0.004), size(1, 20_000.0, 0.08)];
        assert!(judge(&short).is_empty());
        // The newest size is judged against the one before it alone.
        let newest = [size(0, 400_000.0, 0.3), size(1, 2_000.0, 41.6)];
        assert_eq!(judge(&newest).len(), 1);
    }

    #[test]
    fn a_stall_in_the_warm_up_is_flagged_by_the_wall_time() {
        // The link cut during size 1's warm-up: its loop was clean, its wall time not.
        let mut cut = size(1, 240_000.0, 1.64);
        cut.wall_s = Some(11.9);
        let run = [size(0, 250_000.0, 2.0), cut, size(2, 250_000.0, 1.3)];
        let found = judge(&run);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].kind.as_str(), found[0].msgsize),
            ("slow_untimed", 1)
        );
        assert!(found[0].seconds > 10.0 && found[0].expected_seconds < 0.2);
        // A warm-up of 10 iterations longer than a timed loop of 1 is no stall.
        let mut few = size(8, 1_000.0, 0.05);
        few.iters = 1;
        few.wall_s = Some(0.6);
        assert!(judge(&[few]).is_empty());
    }
}
