//! Synthetic scan figures at any node count, for the tests and the bench of rank 0's
//! judgement at scale (`benches/scan_verdict.rs`): what the rounds and the re-measurements
//! of a scan with one slow node would report.

use super::pairing::{self, Pair};
use super::PairRun;

/// The rounds of the synthetic scans: 16 partners per node (the figures of
/// `BENCHMARKS.md` were taken with these).
pub const ROUNDS: usize = 16;

/// The first [`ROUNDS`] rounds of `n` nodes, one rank pair each: the pairs wobble
/// by ±25 %, a third of them sit just below the default threshold (0.69), and node
/// `slow` has a tenth of the others' bandwidth.
pub fn first_rounds(n: usize, slow: usize) -> Vec<PairRun> {
    first_rounds_in(n, slow, ROUNDS)
}

/// [`first_rounds`] in `rounds` rounds.
pub fn first_rounds_in(n: usize, slow: usize, rounds: usize) -> Vec<PairRun> {
    pairing::round_robin(n, rounds)
        .into_iter()
        .enumerate()
        .flat_map(|(round, pairs)| pairs.into_iter().map(move |(a, b)| (round, a, b)))
        .map(|(round, a, b)| {
            let noise = 0.75 + 0.5 * ((a * 7919 + b * 104_729) % 101) as f64 / 100.0;
            let w = if (a + b) % 3 == 0 { 0.69 } else { noise };
            let node = if a == slow || b == slow { 0.1 } else { 1.0 };
            PairRun {
                a,
                b,
                round,
                rank_pairs: 1,
                msgs_per_s: 1e6 * w,
                mib_per_s: 1000.0 * w * node,
                probed: 0,
            }
        })
        .collect()
}

/// The re-measurement `rounds` after the first ones, node `slow` still at a tenth of the
/// others' bandwidth, the others at their best.
pub fn remeasured(rounds: &[Vec<Pair>], slow: usize) -> Vec<PairRun> {
    remeasured_after(rounds, slow, ROUNDS)
}

/// [`remeasured`] after a scan of `first` rounds.
pub fn remeasured_after(rounds: &[Vec<Pair>], slow: usize, first: usize) -> Vec<PairRun> {
    rounds
        .iter()
        .enumerate()
        .flat_map(|(k, round)| {
            round.iter().map(move |&(a, b)| PairRun {
                a,
                b,
                round: first + k,
                rank_pairs: 1,
                msgs_per_s: 1e6,
                mib_per_s: if a == slow || b == slow {
                    100.0
                } else {
                    1000.0
                },
                probed: 0,
            })
        })
        .collect()
}
