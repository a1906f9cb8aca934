//! Repeated samples of one message size: their minimum, median and maximum, a
//! distribution-free 95 % confidence interval of the median, and when to stop repeating.
//!
//! The interval comes from order statistics: for `n` samples sorted, the true median lies
//! between the `l`-th and the `u = n + 1 − l`-th smallest with probability
//! `P(l ≤ B ≤ n − l)` for `B ~ Binomial(n, ½)`, whatever the distribution of the samples
//! (continuous, independent and identically distributed). `l` is the largest rank whose
//! interval still covers the median with at least 95 %; below 6 samples even the widest
//! one (the minimum to the maximum, coverage `1 − 2 · 2^−n`) falls short, and there is no
//! interval.
//!
//! Pure: plain numbers in, plain numbers out.

use serde::{Deserialize, Serialize};

/// The confidence level of the interval.
pub const CONFIDENCE: f64 = 0.95;

/// With `--precision`: the most samples taken at one size.
pub const PRECISION_MAX_SAMPLES: u64 = 1000;

/// With `--precision`: the default cap of the seconds spent on one size.
pub const DEFAULT_MAX_TIME_PER_SIZE_S: f64 = 10.0;

/// The order statistics that bound a confidence interval of the median.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranks {
    /// 1-based rank of the lower bound among the sorted samples.
    pub lower: usize,
    /// 1-based rank of the upper bound (`n + 1 − lower`).
    pub upper: usize,
    /// The exact probability that the interval covers the median: `1 − 2 · P(B < lower)`.
    pub coverage: f64,
}

/// The ranks of the shortest symmetric interval of the median of `n` samples that covers
/// it with at least `confidence`, or `None` when `n` is too small for any.
pub fn median_ranks(n: usize, confidence: f64) -> Option<Ranks> {
    let tail = (1.0 - confidence) / 2.0;
    // P(B <= k) for B ~ Binomial(n, 1/2), one k after the other, the probabilities in log
    // space so that large n do not underflow. The interval from rank l to n + 1 - l misses
    // the median with probability 2 P(B <= l - 1): l is the number of k with P(B <= k) <=
    // tail.
    let mut log_pmf = -(n as f64) * std::f64::consts::LN_2;
    let mut cdf = 0.0;
    let mut lower = 0;
    let mut missed = 0.0;
    for k in 0..n.div_ceil(2) {
        cdf += log_pmf.exp();
        if cdf > tail {
            break;
        }
        lower = k + 1;
        missed = cdf;
        log_pmf += ((n - k) as f64).ln() - ((k + 1) as f64).ln();
    }
    (lower > 0).then(|| Ranks {
        lower,
        upper: n + 1 - lower,
        coverage: 1.0 - 2.0 * missed,
    })
}

/// The fewest samples that give an interval at `confidence` (6 at 95 %).
pub fn min_samples_for(confidence: f64) -> usize {
    (1..=4096)
        .find(|&n| median_ranks(n, confidence).is_some())
        .unwrap_or(usize::MAX)
}

/// A confidence interval of the median, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Interval {
    /// The confidence level asked for (0.95).
    pub level: f64,
    /// The lower bound, `null` when there is no interval.
    pub low: Option<f64>,
    /// The upper bound, `null` when there is no interval.
    pub high: Option<f64>,
    /// The 1-based ranks of the bounds among the sorted samples.
    pub ranks: Option<[usize; 2]>,
    /// The interval's exact coverage probability (at least `level`).
    pub coverage: Option<f64>,
    /// Half the interval's width in percent of the median.
    pub half_width_percent: Option<f64>,
    /// Why there is no interval, when there is none.
    pub unavailable: Option<String>,
}

/// Minimum, median and maximum of a size's samples, and the interval of the median.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Summary {
    /// The number of samples.
    pub samples: usize,
    /// The smallest value.
    pub min: f64,
    /// The median: for an even count the lower of the two middle values, so that it is
    /// always one sample's value.
    pub median: f64,
    /// The largest value.
    pub max: f64,
    /// The 95 % confidence interval of the median.
    pub ci95: Interval,
}

/// The index (in the given order) of the median sample: the one at sorted position
/// `(n − 1) / 2`, the lower middle for even `n`; equal values keep the order they were
/// taken in. `None` for no samples.
pub fn median_index(values: &[f64]) -> Option<usize> {
    let order = sorted_order(values);
    order.get(values.len().checked_sub(1)? / 2).copied()
}

fn sorted_order(values: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    order
}

/// The summary of `values`, or `None` for none.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    let n = values.len();
    let order = sorted_order(values);
    let sorted: Vec<f64> = order.iter().map(|&i| values[i]).collect();
    let median = *sorted.get(n.checked_sub(1)? / 2)?;
    let ci95 = match median_ranks(n, CONFIDENCE) {
        Some(r) => {
            let (low, high) = (sorted[r.lower - 1], sorted[r.upper - 1]);
            Interval {
                level: CONFIDENCE,
                low: Some(low),
                high: Some(high),
                ranks: Some([r.lower, r.upper]),
                coverage: Some(r.coverage),
                half_width_percent: half_width_percent(low, high, median),
                unavailable: None,
            }
        }
        None => Interval {
            level: CONFIDENCE,
            low: None,
            high: None,
            ranks: None,
            coverage: None,
            half_width_percent: None,
            unavailable: Some(format!(
                "a distribution-free 95 % interval of the median needs at least {} samples, \
                 there {} {n}",
                min_samples_for(CONFIDENCE),
                if n == 1 { "is" } else { "are" }
            )),
        },
    };
    Some(Summary {
        samples: n,
        min: sorted[0],
        median,
        max: sorted[n - 1],
        ci95,
    })
}

/// Half of `high − low` in percent of `median`; `None` when that means nothing.
fn half_width_percent(low: f64, high: f64, median: f64) -> Option<f64> {
    let p = (high - low) / 2.0 / median * 100.0;
    (median > 0.0 && p.is_finite()).then_some(p)
}

/// What one size gave on rank 0: every sample's core times, and why the repeats ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Per sample, every core rank's elapsed seconds in rank order.
    pub samples: Vec<Vec<f64>>,
    /// What ended the repeats.
    pub stop: Stop,
    /// Seconds rank 0 spent on the size, from its first barrier to its last sample.
    pub wall_s: f64,
}

/// What ended the repeats at one size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Stop {
    /// `--repeat K` samples were taken.
    #[serde(rename = "repeat")]
    Repeat,
    /// `--precision`: the interval became narrow enough.
    #[serde(rename = "precision")]
    Precision,
    /// `--precision`: the time cap of the size was reached first.
    #[serde(rename = "time cap")]
    TimeCap,
    /// `--precision`: the most samples of a size were taken first.
    #[serde(rename = "sample cap")]
    SampleCap,
}

impl Stop {
    /// The name the JSON and the text use.
    pub fn name(self) -> &'static str {
        match self {
            Stop::Repeat => "repeat",
            Stop::Precision => "precision",
            Stop::TimeCap => "time cap",
            Stop::SampleCap => "sample cap",
        }
    }

    /// A small code to broadcast (never 0, which means "go on").
    pub fn code(self) -> u8 {
        match self {
            Stop::Repeat => 1,
            Stop::Precision => 2,
            Stop::TimeCap => 3,
            Stop::SampleCap => 4,
        }
    }

    /// The reason a [`Stop::code`] stands for; `None` for 0 ("go on") or an unknown code.
    pub fn from_code(code: u8) -> Option<Stop> {
        [
            Stop::Repeat,
            Stop::Precision,
            Stop::TimeCap,
            Stop::SampleCap,
        ]
        .into_iter()
        .find(|s| s.code() == code)
    }
}

/// `--precision` and its limits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Precision {
    /// The widest half-width of the interval accepted, in percent of the median.
    pub percent: f64,
    /// The most seconds spent on one size (warm-up included).
    pub max_time_per_size_s: f64,
    /// Samples taken before the interval is first tested.
    pub min_samples: u64,
    /// The most samples taken at one size.
    pub max_samples: u64,
}

/// How many samples a size takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// `--repeat K`: the samples of every size without `--precision`.
    pub repeat: u64,
    /// `--precision`, when given.
    pub precision: Option<Precision>,
}

impl Plan {
    /// Whether to stop after the samples `values` (their average rates), `elapsed_s`
    /// seconds into the size; `None` means take another sample. Without `--precision`
    /// only the count matters, so every rank can decide alone; with it rank 0 decides.
    pub fn decide(&self, values: &[f64], elapsed_s: f64) -> Option<Stop> {
        let n = values.len() as u64;
        let Some(p) = self.precision else {
            return (n >= self.repeat).then_some(Stop::Repeat);
        };
        if n >= p.min_samples {
            let hw = summarize(values).and_then(|s| s.ci95.half_width_percent);
            if hw.is_some_and(|hw| hw <= p.percent) {
                return Some(Stop::Precision);
            }
        }
        if elapsed_s >= p.max_time_per_size_s {
            return Some(Stop::TimeCap);
        }
        (n >= p.max_samples).then_some(Stop::SampleCap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranks(n: usize) -> Option<(usize, usize)> {
        median_ranks(n, CONFIDENCE).map(|r| (r.lower, r.upper))
    }

    #[test]
    fn too_few_samples_give_no_interval() {
        // n = 5: even min..max covers the median with 1 - 2/32 = 0.9375 < 0.95.
        for n in 0..=5 {
            assert_eq!(ranks(n), None, "{n}");
        }
        assert_eq!(min_samples_for(CONFIDENCE), 6);
    }

    #[test]
    fn the_ranks_of_small_cases_by_hand() {
        // n = 6: P(B <= 0) = 1/64 <= 0.025, P(B <= 1) = 7/64 > 0.025: ranks 1 and 6,
        // coverage 1 - 2/64.
        let r = median_ranks(6, CONFIDENCE).unwrap();
        assert_eq!((r.lower, r.upper), (1, 6));
        assert!((r.coverage - (1.0 - 2.0 / 64.0)).abs() < 1e-12);
        // n = 7 and 8 still need the extremes (P(B <= 1) = 8/128, 9/256 > 0.025).
        assert_eq!(ranks(7), Some((1, 7)));
        assert_eq!(ranks(8), Some((1, 8)));
        // n = 9: P(B <= 1) = 10/512 = 0.0195: ranks 2 and 8, coverage 1 - 20/512.
        let r = median_ranks(9, CONFIDENCE).unwrap();
        assert_eq!((r.lower, r.upper), (2, 8));
        assert!((r.coverage - (1.0 - 20.0 / 512.0)).abs() < 1e-12);
        // n = 10: P(B <= 1) = 11/1024, P(B <= 2) = 56/1024 = 0.0547: ranks 2 and 9.
        assert_eq!(ranks(10), Some((2, 9)));
        // n = 20 (the textbook table): P(B <= 5) = 21700/2^20 = 0.0207, P(B <= 6) =
        // 60460/2^20 = 0.0577: ranks 6 and 15.
        let r = median_ranks(20, CONFIDENCE).unwrap();
        assert_eq!((r.lower, r.upper), (6, 15));
        assert!((r.coverage - (1.0 - 2.0 * 21700.0 / 1_048_576.0)).abs() < 1e-12);
    }

    #[test]
    fn large_counts_do_not_underflow_and_approach_the_normal_ranks() {
        for n in [100, 999, 1000, 5000] {
            let r = median_ranks(n, CONFIDENCE).unwrap();
            assert!(r.coverage >= CONFIDENCE && r.coverage < 0.97, "{n}: {r:?}");
            // n/2 - 1.96 sqrt(n)/2, within a rank or two.
            let normal = n as f64 / 2.0 - 1.96 * (n as f64).sqrt() / 2.0;
            assert!((r.lower as f64 - normal).abs() <= 2.0, "{n}: {r:?}");
            assert_eq!(r.upper, n + 1 - r.lower);
        }
        assert_eq!(ranks(100), Some((40, 61)));
    }

    #[test]
    fn the_median_is_one_sample_the_lower_middle_for_even_counts() {
        assert_eq!(median_index(&[]), None);
        assert_eq!(median_index(&[5.0]), Some(0));
        assert_eq!(median_index(&[3.0, 1.0, 2.0]), Some(2));
        // Sorted 1, 2, 3, 4: the lower middle is 2, at index 3.
        assert_eq!(median_index(&[4.0, 1.0, 3.0, 2.0]), Some(3));
        // Equal values keep their order: the middle one.
        assert_eq!(median_index(&[7.0, 7.0, 7.0]), Some(1));
    }

    #[test]
    fn a_summary_of_seven_samples() {
        let values = [10.0, 14.0, 11.0, 13.0, 12.0, 16.0, 9.0];
        let s = summarize(&values).unwrap();
        assert_eq!((s.samples, s.min, s.median, s.max), (7, 9.0, 12.0, 16.0));
        // Seven samples: the interval is min..max (ranks 1 and 7).
        assert_eq!((s.ci95.low, s.ci95.high), (Some(9.0), Some(16.0)));
        assert_eq!(s.ci95.ranks, Some([1, 7]));
        assert!((s.ci95.half_width_percent.unwrap() - 3.5 / 12.0 * 100.0).abs() < 1e-12);
        assert_eq!(s.ci95.unavailable, None);
        assert_eq!(values[median_index(&values).unwrap()], s.median);
    }

    #[test]
    fn a_summary_of_ten_samples_drops_the_extremes() {
        let values: Vec<f64> = (1..=10).rev().map(f64::from).collect();
        let s = summarize(&values).unwrap();
        assert_eq!(s.median, 5.0);
        // Ranks 2 and 9 of 1..10.
        assert_eq!((s.ci95.low, s.ci95.high), (Some(2.0), Some(9.0)));
        assert!(s.min <= s.ci95.low.unwrap() && s.ci95.high.unwrap() <= s.max);
    }

    #[test]
    fn a_summary_of_few_samples_says_why_it_has_no_interval() {
        assert!(summarize(&[]).is_none());
        let s = summarize(&[2.0, 1.0, 3.0]).unwrap();
        assert_eq!((s.min, s.median, s.max), (1.0, 2.0, 3.0));
        assert_eq!((s.ci95.low, s.ci95.high, s.ci95.ranks), (None, None, None));
        let why = s.ci95.unavailable.unwrap();
        assert!(why.contains("at least 6 samples, there are 3"), "{why}");
        let one = summarize(&[2.0]).unwrap();
        assert!(one.ci95.unavailable.unwrap().ends_with("there is 1"));
    }

    fn precise(percent: f64) -> Plan {
        Plan {
            repeat: 1,
            precision: Some(Precision {
                percent,
                max_time_per_size_s: 10.0,
                min_samples: 6,
                max_samples: 8,
            }),
        }
    }

    #[test]
    fn a_fixed_repeat_counts_samples_only() {
        let plan = Plan {
            repeat: 3,
            precision: None,
        };
        assert_eq!(plan.decide(&[1.0, 1.0], 1e9), None);
        assert_eq!(plan.decide(&[1.0, 1.0, 1.0], 0.0), Some(Stop::Repeat));
    }

    #[test]
    fn precision_waits_for_six_samples_then_tests_the_interval() {
        let plan = precise(5.0);
        // Identical values: a zero-width interval, but only from the sixth sample on.
        assert_eq!(plan.decide(&[100.0; 5], 1.0), None);
        assert_eq!(plan.decide(&[100.0; 6], 1.0), Some(Stop::Precision));
        // 6 samples from 90 to 110: half-width 10 % of 100, too wide for 5 %.
        let wide = [90.0, 100.0, 110.0, 100.0, 100.0, 100.0];
        assert_eq!(plan.decide(&wide, 1.0), None);
        assert_eq!(precise(10.0).decide(&wide, 1.0), Some(Stop::Precision));
        // The time cap comes before the sixth sample if it must, and the sample cap last.
        assert_eq!(plan.decide(&[100.0, 50.0], 10.0), Some(Stop::TimeCap));
        let mut eight = wide.to_vec();
        eight.extend([90.0, 110.0]);
        assert_eq!(plan.decide(&eight, 1.0), Some(Stop::SampleCap));
        // A met precision wins over a reached cap.
        assert_eq!(plan.decide(&[100.0; 8], 20.0), Some(Stop::Precision));
    }

    #[test]
    fn stop_reasons_round_trip_through_their_codes_and_names() {
        for s in [
            Stop::Repeat,
            Stop::Precision,
            Stop::TimeCap,
            Stop::SampleCap,
        ] {
            assert_eq!(Stop::from_code(s.code()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
        }
        assert_eq!(Stop::from_code(0), None);
        assert_eq!(Stop::TimeCap.name(), "time cap");
    }
}
