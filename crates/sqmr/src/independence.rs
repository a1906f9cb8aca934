//! Whether a size's loops, in the order they ran, look independent: the condition under
//! which the interval of [`crate::stats`] means what it says.
//!
//! Two distribution-free tests, each exact under the hypothesis that the loops are
//! exchangeable (independent and identically distributed in the order run):
//!
//! - **trend** (Mann–Kendall): `S`, the number of later-higher pairs minus later-lower
//!   pairs. A load that rises or falls through the run, a clock that drifts, a cache or
//!   a link that warms up, all give `|S|` far from 0. Exact null distribution (the
//!   inversions of a random permutation) up to [`EXACT_TREND_MAX`] samples without ties,
//!   the normal approximation with the tie correction beyond.
//! - **runs** (Wald–Wolfowitz, about the median): how many runs of loops above and
//!   below the median there are. Phases of load (a few slow loops, then a few fast ones)
//!   give too few runs, alternation too many; exact distribution.
//!
//! A size is flagged when either test's two-sided p-value is below [`LEVEL`] / 2, so
//! that a size of truly independent loops is flagged with probability at most [`LEVEL`].
//!
//! What neither can see: what the loops share with each other and not with the next run
//! (the node's load during this run, its placement, the network's state), which is why
//! the interval describes this run's median, not what another run will measure.
//!
//! Pure: plain numbers in, plain numbers out.

use serde::{Deserialize, Serialize};

/// The chance, at most, that a size of independent loops is flagged (both tests together).
pub const LEVEL: f64 = 0.01;

/// The fewest samples tested: with fewer, not even a perfectly monotone sequence reaches
/// the level (the exact trend test's smallest p-value is 2 / n!).
pub const MIN_SAMPLES: usize = 6;

/// Up to this many samples without ties, the trend test's p-value is exact.
pub const EXACT_TREND_MAX: usize = 60;

/// The trend test of one size's samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Trend {
    /// Mann–Kendall `S`: later-higher pairs minus later-lower pairs (positive: rates rising).
    pub s: i64,
    /// Two-sided p-value of `|S|` at least this large among exchangeable samples.
    pub p_value: f64,
    /// Whether `p_value` is exact (else the normal approximation with tie correction).
    pub exact: bool,
}

/// The runs test of one size's samples about their median.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Runs {
    /// Runs of samples above and below the median (samples equal to it left out).
    pub runs: usize,
    /// Samples above the median.
    pub above: usize,
    /// Samples below the median.
    pub below: usize,
    /// The number of runs expected of exchangeable samples.
    pub expected: f64,
    /// Two-sided exact p-value (twice the smaller tail, at most 1).
    pub p_value: f64,
}

/// Both tests of one size, and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Independence {
    /// [`LEVEL`]: the most a size of independent loops is flagged.
    pub level: f64,
    /// The trend test.
    pub trend: Trend,
    /// The runs test.
    pub runs: Runs,
    /// Whether either p-value is below `level / 2`: the loops are not independent, and
    /// the interval is narrower than what they vary by.
    pub dependent: bool,
}

impl Independence {
    /// What was found, in words, for a flagged size: "a falling trend (p = 0.0012)",
    /// "clustering: 2 runs above and below the median where 5.5 are expected (p = …)".
    pub fn finding(&self) -> String {
        let cut = self.level / 2.0;
        let mut found = Vec::new();
        if self.trend.p_value < cut {
            let way = if self.trend.s > 0 {
                "rising"
            } else {
                "falling"
            };
            found.push(format!(
                "rates {way} from loop to loop (trend p = {})",
                p_text(self.trend.p_value)
            ));
        }
        if self.runs.p_value < cut {
            let kind = if (self.runs.runs as f64) < self.runs.expected {
                "in phases"
            } else {
                "alternating"
            };
            found.push(format!(
                "rates {kind}: {} runs above and below the median where {:.1} are expected \
                 (p = {})",
                self.runs.runs,
                self.runs.expected,
                p_text(self.runs.p_value)
            ));
        }
        found.join("; ")
    }
}

/// A p-value in a few significant digits.
pub fn p_text(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

/// Both tests of `values` in the order they were taken, or `None` for fewer than
/// [`MIN_SAMPLES`] or a value that is not finite.
pub fn check(values: &[f64]) -> Option<Independence> {
    if values.len() < MIN_SAMPLES || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let trend = trend(values);
    let runs = runs(values);
    let cut = LEVEL / 2.0;
    Some(Independence {
        level: LEVEL,
        dependent: trend.p_value < cut || runs.p_value < cut,
        trend,
        runs,
    })
}

/// The Mann–Kendall test of `values`.
pub fn trend(values: &[f64]) -> Trend {
    let n = values.len();
    let mut s: i64 = 0;
    for i in 0..n {
        for j in i + 1..n {
            s += match values[j].total_cmp(&values[i]) {
                std::cmp::Ordering::Greater => 1,
                std::cmp::Ordering::Less => -1,
                std::cmp::Ordering::Equal => 0,
            };
        }
    }
    let ties = tie_groups(values);
    if n <= EXACT_TREND_MAX && ties.is_empty() {
        Trend {
            s,
            p_value: exact_trend_p(n, s),
            exact: true,
        }
    } else {
        let nf = n as f64;
        let tie_term: f64 = ties
            .iter()
            .map(|&t| {
                let t = t as f64;
                t * (t - 1.0) * (2.0 * t + 5.0)
            })
            .sum();
        let variance = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - tie_term) / 18.0;
        // Continuity correction: S moves in steps of 2.
        let z = ((s.unsigned_abs() as f64) - 1.0).max(0.0) / variance.sqrt();
        let p_value = if variance > 0.0 {
            (2.0 * normal_upper_tail(z)).min(1.0)
        } else {
            1.0
        };
        Trend {
            s,
            p_value,
            exact: false,
        }
    }
}

/// The sizes of the groups of equal values (only groups of two or more).
fn tie_groups(values: &[f64]) -> Vec<usize> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut groups = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let j = sorted[i..].iter().take_while(|&&v| v == sorted[i]).count();
        if j > 1 {
            groups.push(j);
        }
        i += j;
    }
    groups
}

/// `P(|S| ≥ |s|)` for `n` exchangeable distinct values. `S = M − 2I` with `M = n(n−1)/2`
/// and `I` the inversions of a uniformly random permutation, whose distribution is built
/// one element at a time (the k-th adds 0..k inversions, each as likely).
fn exact_trend_p(n: usize, s: i64) -> f64 {
    let pairs = n * n.saturating_sub(1) / 2;
    let mut dist = vec![0.0f64; pairs + 1];
    dist[0] = 1.0;
    let mut top = 0;
    for k in 1..=n {
        // Convolve with the uniform distribution on 0..k (a sliding window sum).
        let new_top = top + k - 1;
        let mut next = vec![0.0f64; pairs + 1];
        let mut window = 0.0;
        for i in 0..=new_top {
            if i <= top {
                window += dist[i];
            }
            if i >= k && i - k <= top {
                window -= dist[i - k];
            }
            next[i] = window / k as f64;
        }
        dist = next;
        top = new_top;
    }
    // |S| ≥ |s| ⟺ I ≤ (M − |s|) / 2 or I ≥ (M + |s|) / 2; the two tails are equal.
    let low = (pairs as i64 - s.abs()) / 2;
    let tail: f64 = dist[..=(low.max(0) as usize).min(pairs)].iter().sum();
    (2.0 * tail).min(1.0)
}

/// The runs test of `values` about their median (the lower middle for an even count).
pub fn runs(values: &[f64]) -> Runs {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[(sorted.len() - 1) / 2];
    let signs: Vec<bool> = values
        .iter()
        .filter(|&&v| v != median)
        .map(|&v| v > median)
        .collect();
    let above = signs.iter().filter(|&&a| a).count();
    let below = signs.len() - above;
    let runs = if signs.is_empty() {
        0
    } else {
        1 + signs.windows(2).filter(|w| w[0] != w[1]).count()
    };
    let total = (above + below) as f64;
    let expected = if total > 0.0 {
        1.0 + 2.0 * above as f64 * below as f64 / total
    } else {
        0.0
    };
    let p_value = if above == 0 || below == 0 {
        1.0
    } else {
        let at_most: f64 = (2..=runs).map(|r| runs_pmf(above, below, r)).sum();
        let at_least: f64 = (runs..=above + below)
            .map(|r| runs_pmf(above, below, r))
            .sum();
        (2.0 * at_most.min(at_least)).min(1.0)
    };
    Runs {
        runs,
        above,
        below,
        expected,
        p_value,
    }
}

/// `P(R = r)` for `a` values of one kind and `b` of the other in random order.
fn runs_pmf(a: usize, b: usize, r: usize) -> f64 {
    let total = ln_choose(a + b, a);
    let term = |x: usize, y: usize| -> Option<f64> {
        // ln of C(a−1, x) · C(b−1, y)
        Some(ln_choose_checked(a - 1, x)? + ln_choose_checked(b - 1, y)?)
    };
    if r < 2 {
        return 0.0;
    }
    if r.is_multiple_of(2) {
        let k = r / 2;
        term(k - 1, k - 1).map_or(0.0, |t| 2.0 * (t - total).exp())
    } else {
        let k = (r - 1) / 2;
        [term(k, k - 1), term(k - 1, k)]
            .into_iter()
            .flatten()
            .map(|t| (t - total).exp())
            .sum()
    }
}

fn ln_choose_checked(n: usize, k: usize) -> Option<f64> {
    (k <= n).then(|| ln_choose(n, k))
}

fn ln_choose(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    (0..k)
        .map(|i| ((n - i) as f64).ln() - ((i + 1) as f64).ln())
        .sum()
}

/// `P(Z > z)` for a standard normal `Z` (Abramowitz and Stegun 7.1.26 for erfc: an
/// absolute error below 1.5e-7, ample for a verdict at 0.005).
fn normal_upper_tail(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    if z >= 0.0 {
        erfc / 2.0
    } else {
        1.0 - erfc / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn a_monotone_run_has_the_smallest_exact_p_value() {
        let rising: Vec<f64> = (0..8).map(|i| 100.0 + i as f64).collect();
        let t = trend(&rising);
        assert_eq!(t.s, 28);
        assert!(t.exact);
        // Only the identity and its reverse reach |S| = 28: 2 / 8!.
        assert!(close(t.p_value, 2.0 / 40320.0, 1e-15), "{}", t.p_value);
        let falling: Vec<f64> = rising.iter().rev().copied().collect();
        assert_eq!(trend(&falling).s, -28);
        let found = check(&falling).unwrap();
        assert!(found.dependent);
        assert!(found.finding().contains("falling"), "{}", found.finding());
    }

    #[test]
    fn the_exact_trend_distribution_matches_enumeration() {
        // n = 4: inversions 0..6 occur 1, 3, 5, 6, 5, 3, 1 times in 24 permutations.
        // S = 6 − 2I; |S| ≥ 2 ⟺ I ≤ 2 or I ≥ 4: (1 + 3 + 5) · 2 / 24.
        assert!(close(exact_trend_p(4, 2), 18.0 / 24.0, 1e-12));
        assert!(close(exact_trend_p(4, 0), 1.0, 1e-12));
        assert!(close(exact_trend_p(4, -4), 8.0 / 24.0, 1e-12));
        // The whole distribution sums to 1 at the largest exact n.
        assert!(close(exact_trend_p(EXACT_TREND_MAX, 0), 1.0, 1e-9));
    }

    #[test]
    fn the_normal_approximation_agrees_with_the_exact_tail() {
        // n = 60, a mild trend: the approximation within a few thousandths of the exact.
        let n = 60;
        let s = 300;
        let exact = exact_trend_p(n, s);
        let nf = n as f64;
        let var = nf * (nf - 1.0) * (2.0 * nf + 5.0) / 18.0;
        let approx = 2.0 * normal_upper_tail((s as f64 - 1.0) / var.sqrt());
        assert!(close(exact, approx, 0.003), "{exact} {approx}");
        assert!(close(normal_upper_tail(1.959_964), 0.025, 1e-6));
        assert!(close(normal_upper_tail(-1.0), 0.841_344_7, 1e-6));
    }

    #[test]
    fn the_runs_distribution_sums_to_one_and_matches_a_small_case() {
        // 3 and 3: 20 arrangements; 2 runs in 2 of them, 6 runs in 2.
        let total: f64 = (2..=6).map(|r| runs_pmf(3, 3, r)).sum();
        assert!(close(total, 1.0, 1e-12));
        assert!(close(runs_pmf(3, 3, 2), 2.0 / 20.0, 1e-12));
        assert!(close(runs_pmf(3, 3, 6), 2.0 / 20.0, 1e-12));
        assert!(close(runs_pmf(3, 3, 3), 4.0 / 20.0, 1e-12));
        let big: f64 = (2..=81).map(|r| runs_pmf(40, 41, r)).sum();
        assert!(close(big, 1.0, 1e-9), "{big}");
    }

    #[test]
    fn phases_of_load_are_caught_by_the_runs_test_not_the_trend_test() {
        // Eight slow loops, eight fast, eight slow, eight fast: four runs, no real trend.
        let values: Vec<f64> = (0..32)
            .map(|i| {
                let phase = if (i / 8) % 2 == 1 { 200.0 } else { 100.0 };
                phase + (i * 7 % 8) as f64 * 0.1 + i as f64 * 0.001
            })
            .collect();
        let found = check(&values).unwrap();
        assert!(found.trend.p_value > 0.05, "{found:?}");
        assert!(found.runs.p_value < 0.001, "{found:?}");
        assert!(found.dependent);
        assert!(found.finding().contains("in phases"), "{}", found.finding());
    }

    #[test]
    fn independent_looking_loops_are_not_flagged_and_few_are_not_tested() {
        // A fixed shuffle of 0..12: no trend, runs as expected.
        let values = [7.0, 2.0, 10.0, 5.0, 11.0, 0.0, 3.0, 8.0, 9.0, 1.0, 6.0, 4.0];
        let found = check(&values).unwrap();
        assert!(!found.dependent, "{found:?}");
        assert!(
            found.trend.p_value > 0.2 && found.runs.p_value > 0.2,
            "{found:?}"
        );
        assert!(check(&values[..5]).is_none());
        assert!(check(&[1.0, 2.0, 3.0, 4.0, 5.0, f64::NAN]).is_none());
    }

    #[test]
    fn ties_use_the_corrected_normal_approximation() {
        let values = [1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0];
        let t = trend(&values);
        assert!(!t.exact);
        assert_eq!(t.s, 24);
        assert!(t.p_value < 0.01, "{t:?}");
        let flat = trend(&[5.0; 8]);
        assert_eq!((flat.s, flat.p_value), (0, 1.0));
    }

    #[test]
    fn a_false_alarm_rate_near_the_level_over_many_shuffles() {
        // A small deterministic generator: 2000 sequences of 9 distinct values in random
        // order. At most LEVEL of them may be flagged (both tests are exact here).
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let trials = 2000;
        let flagged = (0..trials)
            .filter(|_| {
                let values: Vec<f64> = (0..9).map(|_| (next() % 1_000_000) as f64).collect();
                check(&values).is_some_and(|f| f.dependent)
            })
            .count();
        assert!(
            (flagged as f64) <= LEVEL * trials as f64 * 1.5,
            "{flagged} of {trials}"
        );
    }
}
