//! From the pairs' figures to slow nodes and slow links, with robust statistics.
//!
//! Every figure is per rank pair (a node pair's figure divided by the rank pairs that made
//! it), so that nodes with different rank counts compare. For each metric (message rate,
//! bandwidth):
//! - a node's figure is the median over its partners, and its ratio that figure over the
//!   median of all nodes' figures; a node is slow when its ratio is below the threshold
//!   and, in logarithms, more than [`MADS`] scaled median absolute deviations below the
//!   median of the other nodes' ratios (so a machine whose nodes spread widely flags only
//!   outliers);
//! - a pair's expected figure is the smaller of its two nodes' figures (medians, which one
//!   slow partner does not move when a node has three or more); a pair of nodes that are
//!   not slow is a slow link when its ratio to that is below the threshold and an outlier
//!   among the pairs by the same rule.

/// How many scaled median absolute deviations below the median a slow figure must be.
pub const MADS: f64 = 3.0;

/// The factor that makes a median absolute deviation estimate a normal standard deviation.
const MAD_SCALE: f64 = 1.4826;

/// What a pair of nodes measured, per rank pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measurement {
    /// The first node's index.
    pub a: usize,
    /// The second node's index.
    pub b: usize,
    /// Messages per second.
    pub rate: f64,
    /// MiB per second.
    pub bandwidth: f64,
}

/// The two figures of the scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Message rate at the small size.
    Rate,
    /// Bandwidth at the large size.
    Bandwidth,
}

impl Metric {
    /// Both, in the order the output shows them.
    pub const BOTH: [Metric; 2] = [Metric::Rate, Metric::Bandwidth];

    /// Its name in the output.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Rate => "rate",
            Metric::Bandwidth => "bandwidth",
        }
    }

    fn of(self, m: &Measurement) -> f64 {
        match self {
            Metric::Rate => m.rate,
            Metric::Bandwidth => m.bandwidth,
        }
    }
}

/// One figure of a node or a pair, judged.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Judged {
    /// The figure (per rank pair); `None` for a node that met nobody.
    pub value: Option<f64>,
    /// Its ratio to what was expected of it.
    pub ratio: Option<f64>,
    /// Whether it is slow.
    pub slow: bool,
    /// For a ratio below the threshold: how many scaled median absolute deviations its
    /// logarithm lies below the others' median (`None` when their spread is nil); it is
    /// slow only beyond [`MADS`].
    pub mads_below: Option<f64>,
}

/// A node's or a pair's two figures, judged.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Figures {
    /// The message rate.
    pub rate: Judged,
    /// The bandwidth.
    pub bandwidth: Judged,
}

impl Figures {
    /// The figure of `metric`.
    pub fn get(&self, metric: Metric) -> &Judged {
        match metric {
            Metric::Rate => &self.rate,
            Metric::Bandwidth => &self.bandwidth,
        }
    }

    fn get_mut(&mut self, metric: Metric) -> &mut Judged {
        match metric {
            Metric::Rate => &mut self.rate,
            Metric::Bandwidth => &mut self.bandwidth,
        }
    }

    /// The metrics in which it is slow.
    pub fn slow_in(&self) -> Vec<Metric> {
        Metric::BOTH
            .into_iter()
            .filter(|&m| self.get(m).slow)
            .collect()
    }

    /// Whether it is slow in either metric.
    pub fn slow(&self) -> bool {
        self.rate.slow || self.bandwidth.slow
    }
}

/// The judgement of a whole scan.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Per node, in node order: its partners and figures.
    pub nodes: Vec<(usize, Figures)>,
    /// Per pair, in the order of the measurements.
    pub pairs: Vec<Figures>,
}

impl Verdict {
    /// The indices of the slow nodes.
    pub fn slow_nodes(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&n| self.nodes[n].1.slow())
            .collect()
    }

    /// The indices (into the measurements) of the slow links.
    pub fn slow_links(&self) -> Vec<usize> {
        (0..self.pairs.len())
            .filter(|&p| self.pairs[p].slow())
            .collect()
    }
}

/// The median of `values` (the mean of the middle two for an even count); `None` when
/// there are none.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    })
}

/// The median of the sorted `values` without one element equal to `x` (which must be
/// among them); `None` when nothing is left. O(log n).
fn median_without(sorted: &[f64], x: f64) -> Option<f64> {
    let left = sorted.len().checked_sub(1).filter(|&n| n > 0)?;
    // Equal values are interchangeable: leave out the first of them.
    let gone = sorted.partition_point(|v| v.total_cmp(&x).is_lt());
    let at = |j: usize| if j < gone { sorted[j] } else { sorted[j + 1] };
    let mid = left / 2;
    Some(if left % 2 == 1 {
        at(mid)
    } else {
        (at(mid - 1) + at(mid)) / 2.0
    })
}

/// Which of `ratios` are slow: below `threshold`, and an outlier against the others. Rates
/// vary by factors, so the outlier test is on logarithms: a ratio is an outlier when its
/// logarithm lies more than [`MADS`] scaled median absolute deviations below the median
/// of the other ratios' logarithms (the others only, so that the suspect does not widen
/// the spread it is judged by).
///
/// O(n log n) however many are below the threshold: the others' median is the median of
/// all the logarithms with one left out, which takes at most three values over the
/// suspects; the deviations from each are sorted once, and each suspect's spread is their
/// median with its own deviation left out. A scan of 10,000 nodes judges its 80,000 pairs
/// in one pass.
fn outliers(ratios: &[Option<f64>], threshold: f64) -> Vec<(bool, Option<f64>)> {
    let logs: Vec<Option<f64>> = ratios
        .iter()
        .map(|r| r.filter(|r| *r > 0.0).map(f64::ln))
        .collect();
    let mut sorted: Vec<f64> = logs.iter().flatten().copied().collect();
    sorted.sort_by(f64::total_cmp);
    // The sorted deviations from each median a suspect's others have.
    let mut deviations: Vec<(f64, Vec<f64>)> = Vec::new();
    (0..ratios.len())
        .map(|i| {
            let Some(r) = ratios[i] else {
                return (false, None);
            };
            if r >= threshold {
                return (false, None);
            }
            let Some(own) = logs[i] else {
                // A figure of zero: nothing arrived.
                return (true, None);
            };
            let Some(mid) = median_without(&sorted, own) else {
                return (true, None);
            };
            let k = match deviations
                .iter()
                .position(|(m, _)| m.to_bits() == mid.to_bits())
            {
                Some(k) => k,
                None => {
                    let mut d: Vec<f64> = sorted.iter().map(|l| (l - mid).abs()).collect();
                    d.sort_by(f64::total_cmp);
                    deviations.push((mid, d));
                    deviations.len() - 1
                }
            };
            let spread =
                median_without(&deviations[k].1, (own - mid).abs()).unwrap_or(0.0) * MAD_SCALE;
            let below = (spread > 0.0).then(|| (mid - own) / spread);
            (own < mid - MADS * spread, below)
        })
        .collect()
}

/// Judges `pairs` among `nodes` nodes with `threshold` (a ratio, 0 to 1).
pub fn judge(nodes: usize, pairs: &[Measurement], threshold: f64) -> Verdict {
    let mut node_figures = vec![Figures::default(); nodes];
    let mut pair_figures = vec![Figures::default(); pairs.len()];
    let mut partners = vec![0usize; nodes];
    for m in pairs {
        partners[m.a] += 1;
        partners[m.b] += 1;
    }
    for metric in Metric::BOTH {
        // Each node's figures with its partners, and the median of them.
        let mut with: Vec<Vec<(usize, f64)>> = vec![Vec::new(); nodes];
        for (k, m) in pairs.iter().enumerate() {
            with[m.a].push((k, metric.of(m)));
            with[m.b].push((k, metric.of(m)));
        }
        let values: Vec<Option<f64>> = with
            .iter()
            .map(|w| median(&w.iter().map(|&(_, v)| v).collect::<Vec<_>>()))
            .collect();
        let reference = median(&values.iter().flatten().copied().collect::<Vec<_>>());
        let ratios: Vec<Option<f64>> = values
            .iter()
            .map(|v| Some(v.as_ref()? / reference.filter(|r| *r > 0.0)?))
            .collect();
        let slow = outliers(&ratios, threshold);
        for n in 0..nodes {
            *node_figures[n].get_mut(metric) = Judged {
                value: values[n],
                ratio: ratios[n],
                slow: slow[n].0,
                mads_below: slow[n].1,
            };
        }
        // A pair against what the slower of its nodes reaches with its partners.
        let link_ratios: Vec<Option<f64>> = pairs
            .iter()
            .map(|m| {
                let expected = values[m.a]?.min(values[m.b]?);
                (expected > 0.0).then(|| metric.of(m) / expected)
            })
            .collect();
        let slow_links = outliers(&link_ratios, threshold);
        for (k, m) in pairs.iter().enumerate() {
            *pair_figures[k].get_mut(metric) = Judged {
                value: Some(metric.of(m)),
                ratio: link_ratios[k],
                slow: slow_links[k].0 && !slow[m.a].0 && !slow[m.b].0,
                mads_below: slow_links[k].1,
            };
        }
    }
    Verdict {
        nodes: partners.into_iter().zip(node_figures).collect(),
        pairs: pair_figures,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::pairing::round_robin;

    /// Every pair of `n` nodes, with figures from `figure(a, b)` (rate and bandwidth).
    fn all_pairs(n: usize, figure: impl Fn(usize, usize) -> (f64, f64)) -> Vec<Measurement> {
        round_robin(n, usize::MAX)
            .concat()
            .into_iter()
            .map(|(a, b)| {
                let (rate, bandwidth) = figure(a, b);
                Measurement {
                    a,
                    b,
                    rate,
                    bandwidth,
                }
            })
            .collect()
    }

    /// A small deterministic wobble of ±`percent` % per pair.
    fn wobble(a: usize, b: usize, percent: f64) -> f64 {
        let x = ((a * 7919 + b * 104_729) % 201) as f64 / 100.0 - 1.0;
        1.0 + x * percent / 100.0
    }

    #[test]
    fn a_node_slow_with_every_partner_is_flagged_alone() {
        for n in [4, 5, 8, 16] {
            let pairs = all_pairs(n, |a, b| {
                let w = wobble(a, b, 10.0);
                let slow = if a == 2 || b == 2 { 0.1 } else { 1.0 };
                (1e6 * w, 5000.0 * w * slow)
            });
            let v = judge(n, &pairs, 0.7);
            assert_eq!(v.slow_nodes(), vec![2], "n={n}: {v:?}");
            assert_eq!(v.nodes[2].1.slow_in(), vec![Metric::Bandwidth]);
            assert!(v.slow_links().is_empty(), "n={n}: {v:?}");
            assert_eq!(v.nodes[2].0, n - 1);
            let ratio = v.nodes[2].1.bandwidth.ratio.unwrap();
            assert!((0.08..0.12).contains(&ratio), "{ratio}");
        }
    }

    #[test]
    fn a_pair_slow_only_together_is_a_link() {
        for n in [4, 6, 9] {
            let pairs = all_pairs(n, |a, b| {
                let w = wobble(a, b, 10.0);
                let slow = if (a, b) == (1, 3) { 0.2 } else { 1.0 };
                (1e6 * w * slow, 5000.0 * w)
            });
            let v = judge(n, &pairs, 0.7);
            assert!(v.slow_nodes().is_empty(), "n={n}: {v:?}");
            let links = v.slow_links();
            assert_eq!(links.len(), 1, "n={n}: {v:?}");
            assert_eq!((pairs[links[0]].a, pairs[links[0]].b), (1, 3));
            assert_eq!(v.pairs[links[0]].slow_in(), vec![Metric::Rate]);
        }
    }

    #[test]
    fn noise_within_the_threshold_flags_nothing() {
        for n in [3, 4, 7, 16, 33] {
            let pairs = all_pairs(n, |a, b| {
                (1e6 * wobble(a, b, 25.0), 900.0 * wobble(b, a, 25.0))
            });
            let v = judge(n, &pairs, 0.7);
            assert!(
                v.slow_nodes().is_empty() && v.slow_links().is_empty(),
                "{v:?}"
            );
        }
    }

    #[test]
    fn a_wide_spread_flags_only_outliers() {
        // Nodes spread evenly from 20 % to 100 %: the slowest are below the threshold, but
        // none stands out from the others.
        let f = |n: usize| 0.2 + 0.8 * n as f64 / 7.0;
        let pairs = all_pairs(8, |a, b| (1e6 * (f(a) * f(b)).sqrt(), 100.0));
        let v = judge(8, &pairs, 0.7);
        assert!(v.nodes[0].1.rate.ratio.unwrap() < 0.7, "{v:?}");
        assert!(v.slow_nodes().is_empty(), "{v:?}");
        // Why it is not slow, in the unit of the test it passed: less than 3 MADs below.
        let below = v.nodes[0].1.rate.mads_below.unwrap();
        assert!(below > 0.5 && below < MADS, "{below}");
        assert_eq!(v.nodes[7].1.rate.mads_below, None, "above the threshold");
        // The same nodes with one far below them all is flagged.
        let g = |n: usize| if n == 0 { 0.05 } else { f(n) };
        let pairs = all_pairs(8, |a, b| (1e6 * (g(a) * g(b)).sqrt(), 100.0));
        assert_eq!(judge(8, &pairs, 0.7).slow_nodes(), vec![0]);
    }

    #[test]
    fn a_node_nobody_met_is_not_judged() {
        let pairs = [
            Measurement {
                a: 0,
                b: 1,
                rate: 1.0,
                bandwidth: 1.0,
            },
            Measurement {
                a: 2,
                b: 3,
                rate: 1.0,
                bandwidth: 1.0,
            },
        ];
        let v = judge(5, &pairs, 0.7);
        assert_eq!(v.nodes[4].0, 0);
        assert_eq!(v.nodes[4].1.rate.value, None);
        assert!(v.slow_nodes().is_empty());
    }

    /// The outlier test as its definition reads: the others' median and spread
    /// computed anew for each ratio.
    fn outliers_by_definition(ratios: &[Option<f64>], threshold: f64) -> Vec<(bool, Option<f64>)> {
        let logs: Vec<Option<f64>> = ratios
            .iter()
            .map(|r| r.filter(|r| *r > 0.0).map(f64::ln))
            .collect();
        (0..ratios.len())
            .map(|i| {
                let r = match ratios[i] {
                    Some(r) if r < threshold => r,
                    _ => return (false, None),
                };
                let Some(own) = logs[i].filter(|_| r > 0.0) else {
                    return (true, None);
                };
                let others: Vec<f64> = (0..logs.len())
                    .filter(|&j| j != i)
                    .filter_map(|j| logs[j])
                    .collect();
                let Some(mid) = median(&others) else {
                    return (true, None);
                };
                let d: Vec<f64> = others.iter().map(|l| (l - mid).abs()).collect();
                let spread = median(&d).unwrap_or(0.0) * MAD_SCALE;
                let below = (spread > 0.0).then(|| (mid - own) / spread);
                (own < mid - MADS * spread, below)
            })
            .collect()
    }

    #[test]
    fn the_one_pass_outlier_test_is_the_definition() {
        // Spreads, ties, zeros, missing figures, one and two values, many below the
        // threshold: the same verdicts and the same distances as the definition.
        let cases: Vec<Vec<Option<f64>>> = vec![
            vec![],
            vec![Some(0.5)],
            vec![Some(0.5), Some(1.0)],
            vec![Some(0.0), Some(1.0), Some(1.0), None],
            vec![Some(0.6); 7],
            (0..40)
                .map(|i| Some(0.2 + 0.8 * wobble(i, 3 * i, 60.0) / 1.6))
                .collect(),
            (0..41)
                .map(|i| (i % 9 != 4).then(|| [0.1, 0.65, 0.65, 1.0, 1.2][i % 5]))
                .collect(),
        ];
        for ratios in cases {
            let fast = outliers(&ratios, 0.7);
            let slow = outliers_by_definition(&ratios, 0.7);
            assert_eq!(fast.len(), slow.len());
            for (i, (f, s)) in fast.iter().zip(&slow).enumerate() {
                assert_eq!(f.0, s.0, "{i} of {ratios:?}");
                match (f.1, s.1) {
                    (Some(a), Some(b)) => assert!((a - b).abs() < 1e-9, "{i}: {a} {b}"),
                    (a, b) => assert_eq!(a, b, "{i} of {ratios:?}"),
                }
            }
        }
    }

    #[test]
    fn ten_thousand_nodes_are_judged_with_their_slow_node_and_link() {
        // 10,000 nodes in 16 rounds (80,000 pairs), a third of the pairs just
        // below the threshold (each one a suspect the outlier test must weigh), node 77
        // slow, the link between nodes 5 and 6 slow. The definition's cost, the others'
        // median and spread sorted again for every suspect, would be some 10^10 steps.
        let n = 10_000;
        let pairs: Vec<Measurement> = round_robin(n, 16)
            .concat()
            .into_iter()
            .map(|(a, b)| {
                let w = if (a + b) % 3 == 0 {
                    0.69
                } else {
                    wobble(a, b, 20.0)
                };
                let node = if a == 77 || b == 77 { 0.05 } else { 1.0 };
                Measurement {
                    a,
                    b,
                    rate: 1e6 * w,
                    bandwidth: 5000.0 * w * node,
                }
            })
            .collect();
        assert_eq!(pairs.len(), 80_000);
        let mut pairs = pairs;
        let link = pairs
            .iter()
            .position(|m| (m.a, m.b) == (5, 6) || (m.a, m.b) == (6, 5));
        let link = link.unwrap_or_else(|| {
            pairs.push(Measurement {
                a: 5,
                b: 6,
                rate: 1e6,
                bandwidth: 5000.0,
            });
            pairs.len() - 1
        });
        pairs[link].bandwidth = 50.0;
        let v = judge(n, &pairs, 0.7);
        assert_eq!(v.slow_nodes(), vec![77]);
        assert_eq!(v.slow_links(), vec![link]);
    }

    #[test]
    fn medians() {
        assert_eq!(median_without(&[1.0, 2.0, 3.0], 2.0), Some(2.0));
        assert_eq!(median_without(&[1.0, 2.0, 3.0], 1.0), Some(2.5));
        assert_eq!(median_without(&[1.0, 2.0, 2.0, 9.0], 2.0), Some(2.0));
        assert_eq!(median_without(&[4.0], 4.0), None);
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }
}
