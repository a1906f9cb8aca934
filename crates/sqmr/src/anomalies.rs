//! Sizes that ran far slower than the sizes beside them: a stall that recovered, a link
//! that came back, a node that paused. Such a size is flagged (a `WARNING` line, the
//! JSON's `warnings`, a `*` on its row), never folded into the table as if it were the
//! network's rate.
//!
//! The reference of a size is the least rate its healthy neighbours allow it: a larger
//! message never runs at a higher rate than a smaller one (the size after it is a floor),
//! and a larger message at most lowers the rate in proportion to its size (the bandwidth
//! bound: the size before it, scaled by the ratio of the sizes, is a floor too); the
//! higher of the two floors is the reference. Neighbours that are flagged themselves are
//! passed over for the next healthy size on that side, so that two or more slowed sizes
//! side by side do not shield each other (the judgement is made again until no more
//! sizes are flagged).
//!
//! The rule: a size is flagged when its average rate is below a fifth ([`FACTOR`]) of its
//! reference and it took at least [`MIN_EXCESS_S`] longer than it would have at that
//! rate; or, once it has healthy neighbours on both sides, below 1/[`LONG_FACTOR`] of the
//! reference and at least [`LONG_EXCESS_S`] longer (a pause of 10 s in a loop of 6 s: the
//! rate falls only to about 40 %). A loop of a few milliseconds disturbed by the machine's
//! load cannot add a second.
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

/// The anomalies among `sizes` (in the order measured, by growing message size), judging
/// each size against its healthy neighbours measured so far.
pub fn judge(sizes: &[SizeResult]) -> Vec<Anomaly> {
    let mut slow: Vec<Option<Anomaly>> = vec![None; sizes.len()];
    // Each pass may unshield a size whose neighbour the last pass flagged.
    loop {
        let flagged: Vec<bool> = slow.iter().map(Option::is_some).collect();
        let mut changed = false;
        for i in 0..sizes.len() {
            if flagged[i] {
                continue;
            }
            let healthy = |j: &usize| !flagged[*j] && usable(&sizes[*j]);
            let before = (0..i).rev().find(healthy);
            let after = (i + 1..sizes.len()).find(healthy);
            let floors = [
                before.map(|j| bandwidth_floor(&sizes[j], &sizes[i])),
                after.map(|j| sizes[j].rates.average.msgs_per_s),
            ];
            let reference = floors.iter().flatten().copied().fold(f64::NAN, f64::max);
            let both_sides = floors.iter().all(Option::is_some);
            if let Some(a) = anomaly(&sizes[i], reference, both_sides) {
                slow[i] = Some(a);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    slow.into_iter()
        .zip(sizes)
        .filter_map(|(a, size)| a.or_else(|| untimed(size)))
        .collect()
}

/// Whether a size's rate can serve as a neighbour's reference.
fn usable(size: &SizeResult) -> bool {
    let r = size.rates.average.msgs_per_s;
    r.is_finite() && r > 0.0
}

/// The least rate a healthy `size` can have after the smaller `before`: its rate scaled
/// by the ratio of the message sizes (the bandwidth bound; 0 B counts as 1 B).
fn bandwidth_floor(before: &SizeResult, size: &SizeResult) -> f64 {
    let ratio = before.msgsize.max(1) as f64 / size.msgsize.max(1) as f64;
    before.rates.average.msgs_per_s * ratio.min(1.0)
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
        "anomaly: message size {} B ran at {:.0} msgs/s, 1/{:.1} of the {:.0} msgs/s its \
         healthy neighbours allow it: its timed loop took {:.1} s where about {:.2} s were expected (a stall that \
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
            found[0]
                .message
                .contains("1/121.3 of the 420000 msgs/s its healthy neighbours"),
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

    #[test]
    fn slowed_sizes_side_by_side_do_not_shield_each_other() {
        // Two and three adjacent sizes each paused 4 s: each judged against its slowed
        // neighbour alone looked healthy.
        let healthy = |k: u32| size(1 << k, 1_000_000.0 / f64::from(1 << k), 0.5);
        for slowed in [2usize, 3] {
            let mut run: Vec<SizeResult> = (0..8).map(healthy).collect();
            for (k, s) in run.iter_mut().enumerate().skip(3).take(slowed) {
                // 0.5 s of loop plus a 4 s pause.
                *s = size(1 << k, 1_000_000.0 / f64::from(1 << k) * 0.5 / 4.5, 4.5);
            }
            let found: Vec<u64> = judge(&run).iter().map(|a| a.msgsize).collect();
            let expected: Vec<u64> = (3..3 + slowed).map(|k| 1u64 << k).collect();
            assert_eq!(found, expected, "{slowed} slowed sizes");
        }
        // The same pause spread evenly over a healthy bandwidth-bound run flags nothing.
        let even: Vec<SizeResult> = (0..8).map(healthy).collect();
        assert!(judge(&even).is_empty());
    }
}
