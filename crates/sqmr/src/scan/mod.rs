//! `sqmr --scan`: every node of the allocation measured against several others, to find
//! the slow node or the slow link.
//!
//! The ranks are grouped by host. In rounds, disjoint pairs of nodes exchange messages
//! at the same time ([`pairing`]): rank `j` of one node with rank `j` of the other, each
//! keeping a window of non-blocking sends and receives in flight, first with small
//! messages (the message rate), then with large ones (the bandwidth), each for a fixed
//! time. The pairs' figures are judged with robust statistics ([`verdict`]); whatever looks
//! slow is measured once more, and only what is slow again is flagged ([`assemble`]). The
//! document and the table are in [`report`].
//!
//! Everything here is plain data; the MPI side is in the execution module.

pub mod pairing;
pub mod report;
pub mod synthetic;
pub mod verdict;

use serde::{Deserialize, Serialize};

use pairing::Pair;
use verdict::{Measurement, Verdict};

/// The message size of the rate measurement, in bytes.
pub const SMALL_BYTES: usize = 8;

/// The message size of the bandwidth measurement, in bytes.
pub const LARGE_BYTES: usize = 1 << 20;

/// The size of the probe that comes before a measurement of larger iterations: a pair
/// whose iteration would not fit in the measurement's time is measured by it.
pub const PROBE_BYTES: usize = 64 << 10;

/// At most this many bytes in flight per rank and direction at the large size.
pub const LARGE_WINDOW_BYTES: usize = 4 << 20;

/// The default ratio below which a node or link is slow.
pub const DEFAULT_THRESHOLD: f64 = 0.7;

/// The default seconds of each measurement.
pub const DEFAULT_SECONDS: f64 = 0.5;

/// The default largest number of rounds: every pair up to 64 nodes (63 rounds, about a
/// minute at the default measurement time), 64 partners for each node above: a slow link
/// between two healthy nodes is found only on a pair that meets.
pub const DEFAULT_ROUNDS: usize = 64;

/// How a scan runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Settings {
    /// Message size of the rate measurement, bytes.
    pub small_bytes: usize,
    /// Message size of the bandwidth measurement, bytes.
    pub large_bytes: usize,
    /// Messages in flight per rank and direction at the small size.
    pub window_small: usize,
    /// Messages in flight per rank and direction at the large size.
    pub window_large: usize,
    /// Seconds each measurement lasts (at least one iteration).
    pub seconds: f64,
    /// Rounds of the scan.
    pub rounds: usize,
    /// Whether those rounds pair every node with every other.
    pub all_pairs: bool,
    /// The ratio below which a node or link is slow.
    pub threshold: f64,
    /// How many scaled median absolute deviations below the median it must also be.
    pub mads: f64,
}

impl Settings {
    /// The settings for `nodes` nodes: `win_size` messages in flight at the small size,
    /// `rounds` at most (all pairs when that is enough), `seconds` per measurement.
    pub fn new(nodes: usize, win_size: usize, rounds: usize, seconds: f64, threshold: f64) -> Self {
        let all = pairing::all_pairs_rounds(nodes);
        Settings {
            small_bytes: SMALL_BYTES,
            large_bytes: LARGE_BYTES,
            window_small: win_size,
            window_large: (LARGE_WINDOW_BYTES / LARGE_BYTES).clamp(1, win_size.max(1)),
            seconds,
            rounds: rounds.min(all),
            all_pairs: rounds >= all,
            threshold,
            mads: verdict::MADS,
        }
    }
}

/// One node: a host and its ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Its processor name.
    pub host: String,
    /// Its ranks, in rank order.
    pub ranks: Vec<usize>,
}

/// The nodes of a job from every rank's processor name: in the order of their lowest
/// rank. O(ranks log ranks).
pub fn nodes_of(names: &[String]) -> Vec<Node> {
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut nodes: Vec<Node> = Vec::new();
    for (rank, name) in names.iter().enumerate() {
        let n = *index.entry(name.as_str()).or_insert_with(|| {
            nodes.push(Node {
                host: name.clone(),
                ranks: Vec::new(),
            });
            nodes.len() - 1
        });
        nodes[n].ranks.push(rank);
    }
    nodes
}

/// What one node pair measured in one round: the sums over its rank pairs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PairRun {
    /// The first node's index.
    pub a: usize,
    /// The second node's index.
    pub b: usize,
    /// The round (re-measurements count on after the scan's rounds).
    pub round: usize,
    /// The rank pairs that exchanged messages.
    pub rank_pairs: usize,
    /// Messages per second, sent and received, summed over the rank pairs.
    pub msgs_per_s: f64,
    /// MiB per second, sent and received, summed over the rank pairs.
    pub mib_per_s: f64,
    /// Of the rank pairs, those whose bandwidth is the probe's (one message of
    /// [`PROBE_BYTES`] each way): a window of the large size would not have fitted in the
    /// measurement's time. 0 in documents from before it was recorded.
    #[serde(default)]
    pub probed: usize,
}

impl PairRun {
    fn pair(&self) -> Pair {
        (self.a, self.b)
    }

    fn per_rank_pair(&self) -> Measurement {
        let k = self.rank_pairs.max(1) as f64;
        Measurement {
            a: self.a,
            b: self.b,
            rate: self.msgs_per_s / k,
            bandwidth: self.mib_per_s / k,
        }
    }
}

/// What the first judgement suspects, to be measured again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Suspects {
    /// Every pair of a slow node.
    pub node_pairs: Vec<Pair>,
    /// Every slow link that is not already a pair of a slow node.
    pub links: Vec<Pair>,
    /// The slow nodes themselves.
    pub slow_nodes: Vec<usize>,
    /// How many nodes the scan has.
    pub nodes: usize,
}

impl Suspects {
    /// Whether nothing is suspect.
    pub fn is_empty(&self) -> bool {
        self.node_pairs.is_empty() && self.links.is_empty()
    }

    /// The rounds that measure the suspects again: the pairs of slow nodes packed into as
    /// few rounds of disjoint pairs as they fit (at most `limit`), each round filled with
    /// pairs of the other nodes, as the scan's rounds were; then each suspect link in a
    /// round of its own (at most `limit` of them), the other pairs idle.
    ///
    /// A slow node is judged under the conditions it was found in: every node busy, as in
    /// the first rounds. Measured alone, its partners would have the machine to themselves
    /// (the cores of a shared host, a switch's uplink, a file server), and a node slowed
    /// by its share of such a resource would be cleared against figures taken under load.
    /// A link, instead, is flagged only when it is slow on its own: a pair slowed by what
    /// the other pairs of its round did at the same time is not a slow link.
    pub fn rounds(&self, limit: usize) -> Vec<Vec<Pair>> {
        let mut rounds = pairing::matchings(&self.node_pairs, limit);
        for round in &mut rounds {
            self.fill(round);
        }
        rounds.extend(self.links.iter().take(limit).map(|&p| vec![p]));
        rounds
    }

    /// Adds to `round` pairs of the nodes it leaves idle, slow nodes aside, in node order.
    fn fill(&self, round: &mut Vec<Pair>) {
        let busy: std::collections::HashSet<usize> =
            round.iter().flat_map(|&(a, b)| [a, b]).collect();
        let idle: Vec<usize> = (0..self.nodes)
            .filter(|n| !busy.contains(n) && !self.slow_nodes.contains(n))
            .collect();
        round.extend(idle.chunks_exact(2).map(|c| (c[0], c[1])));
    }
}

/// The first judgement's suspects.
pub fn suspects(nodes: usize, runs: &[PairRun], threshold: f64) -> Suspects {
    let measured: Vec<Measurement> = runs.iter().map(PairRun::per_rank_pair).collect();
    let verdict = verdict::judge(nodes, &measured, threshold);
    let slow_nodes = verdict.slow_nodes();
    let slow: std::collections::HashSet<usize> = slow_nodes.iter().copied().collect();
    let slow_links: std::collections::HashSet<usize> = verdict.slow_links().into_iter().collect();
    let mut suspects = Suspects {
        nodes,
        ..Suspects::default()
    };
    for (k, r) in runs.iter().enumerate() {
        if slow.contains(&r.a) || slow.contains(&r.b) {
            suspects.node_pairs.push(r.pair());
        } else if slow_links.contains(&k) {
            suspects.links.push(r.pair());
        }
    }
    suspects.slow_nodes = slow_nodes;
    suspects
}

/// The last re-measurement in `again` of each pair it measured, by pair: found in one
/// pass, not searched for per pair (a scan of many nodes has as many re-measurements as
/// its rounds have pairs).
pub fn remeasurements(again: &[PairRun]) -> std::collections::HashMap<Pair, PairRun> {
    again.iter().map(|s| (s.pair(), *s)).collect()
}

/// How far below what is expected of it a link's message rate must be to flag the link on
/// its rate alone, as a share of the threshold: a link whose bandwidth is healthy is slow
/// in message rate only when its rate is at most half the threshold's ratio (0.35 of
/// expected by default) in both of its measurements.
pub const RATE_ALONE_SHARE: f64 = 0.5;

/// Whether a link slow in message rate but not in bandwidth (`figures`, its better
/// measurement's) is flagged: only when the rate is far out (below
/// [`RATE_ALONE_SHARE`] of `threshold`) and repeatable (re-measured, and slow both times:
/// the better of two measurements is the one judged). Message rates are what a busy core
/// (ranks that poll without yielding, a daemon) takes first, while the link's bandwidth
/// says the link itself is fine; one slow round is no finding.
pub fn rate_alone_holds(figures: &verdict::Figures, remeasured: bool, threshold: f64) -> bool {
    remeasured
        && figures
            .rate
            .ratio
            .is_some_and(|r| r < RATE_ALONE_SHARE * threshold)
}

/// The outcome of a scan.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The pairs as measured first, with their re-measurement where there was one.
    pub pairs: Vec<(PairRun, Option<PairRun>)>,
    /// The judgement of the better of each pair's measurements.
    pub verdict: Verdict,
    /// The nodes suspected after the first judgement.
    pub suspected_nodes: Vec<usize>,
    /// The pairs suspected after the first judgement (as links).
    pub suspected_links: Vec<Pair>,
    /// The nodes flagged: suspected, and slow again with the re-measurements.
    pub flagged_nodes: Vec<usize>,
    /// The links flagged the same way (indices into `pairs`).
    pub flagged_links: Vec<usize>,
}

/// Judges the scan: the first runs, then each pair at the better of its two
/// measurements (a passing disturbance does not survive the second); only what was
/// suspected first and is slow again is flagged.
pub fn assemble(nodes: usize, first: &[PairRun], again: &[PairRun], threshold: f64) -> Outcome {
    let measured: Vec<Measurement> = first.iter().map(PairRun::per_rank_pair).collect();
    let before = verdict::judge(nodes, &measured, threshold);
    let suspected_nodes = before.slow_nodes();
    let suspected_links: Vec<Pair> = before
        .slow_links()
        .into_iter()
        .map(|k| first[k].pair())
        .collect();
    let suspected: std::collections::HashSet<Pair> = suspected_links.iter().copied().collect();
    let latest = remeasurements(again);
    let pairs: Vec<(PairRun, Option<PairRun>)> = first
        .iter()
        .map(|r| (*r, latest.get(&r.pair()).copied()))
        .collect();
    let best: Vec<Measurement> = pairs
        .iter()
        .map(|(r, s)| {
            let m = r.per_rank_pair();
            match s.map(|s| s.per_rank_pair()) {
                Some(n) => Measurement {
                    rate: m.rate.max(n.rate),
                    bandwidth: m.bandwidth.max(n.bandwidth),
                    ..m
                },
                None => m,
            }
        })
        .collect();
    let verdict = verdict::judge(nodes, &best, threshold);
    let flagged_nodes = verdict
        .slow_nodes()
        .into_iter()
        .filter(|n| suspected_nodes.contains(n))
        .collect();
    let flagged_links = verdict
        .slow_links()
        .into_iter()
        .filter(|&k| suspected.contains(&first[k].pair()))
        .filter(|&k| {
            let f = &verdict.pairs[k];
            f.bandwidth.slow || rate_alone_holds(f, pairs[k].1.is_some(), threshold)
        })
        .collect();
    Outcome {
        pairs,
        verdict,
        suspected_nodes,
        suspected_links,
        flagged_nodes,
        flagged_links,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(n: usize, figure: impl Fn(usize, usize) -> f64) -> Vec<PairRun> {
        pairing::round_robin(n, usize::MAX)
            .into_iter()
            .enumerate()
            .flat_map(|(round, pairs)| pairs.into_iter().map(move |(a, b)| (round, a, b)))
            .map(|(round, a, b)| PairRun {
                a,
                b,
                round,
                rank_pairs: 2,
                msgs_per_s: 2e6 * figure(a, b),
                mib_per_s: 2000.0 * figure(a, b),
                probed: 0,
            })
            .collect()
    }

    #[test]
    fn hosts_group_ranks_in_order_of_their_lowest_rank() {
        let names: Vec<String> = ["b", "a", "b", "c", "a"].map(String::from).to_vec();
        let nodes = nodes_of(&names);
        let got: Vec<(&str, &[usize])> = nodes
            .iter()
            .map(|n| (n.host.as_str(), n.ranks.as_slice()))
            .collect();
        assert_eq!(
            got,
            vec![("b", &[0, 2][..]), ("a", &[1, 4][..]), ("c", &[3][..])]
        );
    }

    #[test]
    fn a_scan_of_ten_thousand_nodes_finds_its_slow_node() {
        // Rank 0's whole part of a scan of 10,000 nodes in 16 rounds (80,000 pairs): the
        // first judgement, the re-measurement rounds of the suspect, and the
        // verdict with its re-measurements, none of it quadratic in the pairs.
        let n = 10_000;
        let first = synthetic::first_rounds(n, 4321);
        let suspects = suspects(n, &first, DEFAULT_THRESHOLD);
        assert_eq!(suspects.slow_nodes, vec![4321]);
        assert!(suspects.links.is_empty(), "{:?}", suspects.links);
        let rounds = suspects.rounds(synthetic::ROUNDS);
        assert_eq!(rounds.len(), 16, "one round per partner of the suspect");
        // Every node busy in each re-measurement round, as in the first ones.
        let lengths: Vec<usize> = rounds.iter().map(Vec::len).collect();
        assert!(lengths.iter().all(|&l| l == n / 2), "{lengths:?}");
        let again = synthetic::remeasured(&rounds, 4321);
        let outcome = assemble(n, &first, &again, DEFAULT_THRESHOLD);
        assert_eq!(outcome.flagged_nodes, vec![4321]);
        assert!(outcome.flagged_links.is_empty());
    }

    #[test]
    fn a_link_slow_in_message_rate_alone_must_be_far_out_and_repeatable() {
        // Six nodes; the link 0-1 slow in message rate only (its bandwidth as everyone's),
        // at `first` of the expected rate and, when re-measured, at `again`.
        let judged = |first_ratio: f64, again_ratio: Option<f64>| {
            let first = runs(6, |a, b| if (a, b) == (0, 1) { first_ratio } else { 1.0 })
                .into_iter()
                .map(|r| PairRun {
                    mib_per_s: 2000.0,
                    ..r
                })
                .collect::<Vec<_>>();
            let again: Vec<PairRun> = again_ratio
                .map(|ratio| {
                    let link = first.iter().find(|r| (r.a, r.b) == (0, 1)).unwrap();
                    vec![PairRun {
                        round: 100,
                        msgs_per_s: 2e6 * ratio,
                        ..*link
                    }]
                })
                .unwrap_or_default();
            let outcome = assemble(6, &first, &again, 0.7);
            assert_eq!(outcome.suspected_links, vec![(0, 1)]);
            !outcome.flagged_links.is_empty()
        };
        assert!(judged(0.2, Some(0.25)), "far out, twice");
        assert!(!judged(0.5, Some(0.5)), "below the threshold, not far out");
        assert!(!judged(0.2, None), "far out once, never re-measured");
        assert!(!judged(0.2, Some(1.0)), "a passing slowdown");
    }

    #[test]
    fn a_passing_slowdown_is_cleared_by_its_remeasurement() {
        // Node 3 slow in the first rounds only; node 1 slow both times.
        let first = runs(6, |a, b| {
            if [a, b].contains(&3) || [a, b].contains(&1) {
                0.2
            } else {
                1.0
            }
        });
        let suspects = suspects(6, &first, 0.7);
        assert!(suspects.links.is_empty(), "{suspects:?}");
        let mut suspects = suspects.node_pairs;
        suspects.sort_unstable();
        assert_eq!(suspects.len(), 9, "{suspects:?}"); // 5 + 5 pairs, one shared
        let again: Vec<PairRun> = first
            .iter()
            .filter(|r| suspects.contains(&(r.a, r.b)))
            .map(|r| {
                let slow = r.a == 1 || r.b == 1;
                PairRun {
                    round: 100,
                    msgs_per_s: if slow { r.msgs_per_s } else { 2e6 },
                    mib_per_s: if slow { r.mib_per_s } else { 2000.0 },
                    ..*r
                }
            })
            .collect();
        let outcome = assemble(6, &first, &again, 0.7);
        assert_eq!(outcome.suspected_nodes, vec![1, 3]);
        assert_eq!(outcome.flagged_nodes, vec![1]);
        assert!(outcome.flagged_links.is_empty());
        assert_eq!(outcome.pairs.iter().filter(|(_, s)| s.is_some()).count(), 9);
    }

    #[test]
    fn suspect_links_are_measured_again_each_alone() {
        // Six nodes; node 4 slow, and the links 0-1 and 2-3 slow although their nodes
        // are fine with everyone else.
        let first = runs(6, |a, b| match (a, b) {
            (_, 4) | (4, _) => 0.2,
            (0, 1) | (2, 3) => 0.4,
            _ => 1.0,
        });
        let suspects = suspects(6, &first, 0.7);
        let mut links = suspects.links.clone();
        links.sort_unstable();
        assert_eq!(links, vec![(0, 1), (2, 3)], "{suspects:?}");
        assert_eq!(suspects.node_pairs.len(), 5, "{suspects:?}");
        assert!(suspects.node_pairs.iter().all(|&(a, b)| a == 4 || b == 4));
        let rounds = suspects.rounds(16);
        // Node 4's five pairs need five rounds (they all share it), each filled with two
        // pairs of the four other nodes; then one round per link, alone.
        assert_eq!(rounds.len(), 7, "{rounds:?}");
        for (k, round) in rounds[..5].iter().enumerate() {
            assert_eq!(round[0], suspects.node_pairs[k], "{rounds:?}");
            assert_eq!(round.len(), 3, "every other node busy: {rounds:?}");
            let mut seen: Vec<usize> = round.iter().flat_map(|&(a, b)| [a, b]).collect();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), 6, "disjoint, every node: {rounds:?}");
        }
        let alone: Vec<Vec<Pair>> = suspects.links.iter().map(|&p| vec![p]).collect();
        assert_eq!(&rounds[5..], &alone[..]);
        // The limit bounds each part.
        let bounded = suspects.rounds(1);
        assert_eq!(bounded.len(), 2);
        assert_eq!(bounded[0][0], suspects.node_pairs[0]);
        assert_eq!(bounded[1], alone[0]);
    }

    #[test]
    fn only_what_was_suspected_first_is_flagged() {
        let first = runs(5, |_, _| 1.0);
        assert!(suspects(5, &first, 0.7).is_empty());
        let outcome = assemble(5, &first, &[], 0.7);
        assert!(outcome.flagged_nodes.is_empty() && outcome.flagged_links.is_empty());
    }

    #[test]
    fn settings_bound_the_rounds_and_the_large_window() {
        let s = Settings::new(4, 10, DEFAULT_ROUNDS, 0.5, 0.7);
        assert_eq!((s.rounds, s.all_pairs, s.window_large), (3, true, 4));
        let s = Settings::new(100, 2, DEFAULT_ROUNDS, 0.5, 0.7);
        assert_eq!((s.rounds, s.all_pairs, s.window_large), (64, false, 2));
        // Every pair by default up to 64 nodes: 17 nodes in 17 rounds (the 17th pairs
        // what 16 rounds left out), 64 in 63; 65 meet 64 partners each.
        let s = Settings::new(17, 10, DEFAULT_ROUNDS, 0.5, 0.7);
        assert_eq!((s.rounds, s.all_pairs), (17, true));
        let s = Settings::new(64, 10, DEFAULT_ROUNDS, 0.5, 0.7);
        assert_eq!((s.rounds, s.all_pairs), (63, true));
        let s = Settings::new(65, 10, DEFAULT_ROUNDS, 0.5, 0.7);
        assert_eq!((s.rounds, s.all_pairs), (64, false));
        let s = Settings::new(17, 10, 16, 0.5, 0.7);
        assert_eq!((s.rounds, s.all_pairs), (16, false));
    }
}
