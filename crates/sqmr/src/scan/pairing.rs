//! Which nodes measure each other when: rounds of disjoint pairs.
//!
//! The scan's rounds come from the circle method (one node fixed, the others rotating
//! around it), so that every round pairs every node at most once and, over `n - 1` rounds
//! (`n` when `n` is odd, one node sitting out each round), every pair meets exactly once.
//! Fewer rounds give every node as many distinct partners as there are rounds (fewer by
//! one where it sits out). A slow node's re-measurements are packed greedily into matchings.

/// A pair of node indices, the smaller first.
pub type Pair = (usize, usize);

fn ordered(a: usize, b: usize) -> Pair {
    (a.min(b), a.max(b))
}

/// The rounds that pair all `nodes` with each other: `nodes - 1` rounds for an even
/// count, `nodes` for an odd one; the first `limit` of them when `limit` is smaller.
pub fn round_robin(nodes: usize, limit: usize) -> Vec<Vec<Pair>> {
    if nodes < 2 {
        return Vec::new();
    }
    // With an odd count, a phantom node makes the count even; its partner sits out.
    let m = nodes + nodes % 2;
    let ring = m - 1;
    (0..ring.min(limit))
        .map(|r| {
            let mut round = Vec::with_capacity(m / 2);
            if ring < nodes {
                round.push(ordered(r, ring));
            }
            for k in 1..m / 2 {
                let a = (r + k) % ring;
                let b = (r + ring - k) % ring;
                round.push(ordered(a, b));
            }
            round.sort_unstable();
            round
        })
        .collect()
}

/// The number of rounds it takes to pair every node with every other.
pub fn all_pairs_rounds(nodes: usize) -> usize {
    match nodes {
        0 | 1 => 0,
        n => n - 1 + n % 2,
    }
}

/// `pairs` packed into rounds in which no node appears twice (greedy, in the order
/// given), at most `limit` rounds; the pairs that did not fit are left out.
pub fn matchings(pairs: &[Pair], limit: usize) -> Vec<Vec<Pair>> {
    let mut left: Vec<Pair> = pairs.to_vec();
    let mut rounds = Vec::new();
    while !left.is_empty() && rounds.len() < limit {
        let mut busy = std::collections::HashSet::new();
        let mut round = Vec::new();
        left.retain(|&(a, b)| {
            if busy.contains(&a) || busy.contains(&b) {
                return true;
            }
            busy.insert(a);
            busy.insert(b);
            round.push((a, b));
            false
        });
        rounds.push(round);
    }
    rounds
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeSet, HashSet};

    fn disjoint(round: &[Pair]) -> bool {
        let mut seen = HashSet::new();
        round
            .iter()
            .all(|&(a, b)| a != b && seen.insert(a) && seen.insert(b))
    }

    #[test]
    fn every_pair_meets_once_in_disjoint_rounds() {
        for n in 2..=41 {
            let rounds = round_robin(n, usize::MAX);
            assert_eq!(rounds.len(), all_pairs_rounds(n), "n={n}");
            let mut seen = BTreeSet::new();
            for round in &rounds {
                assert!(disjoint(round), "n={n}: {round:?}");
                assert_eq!(round.len(), n / 2, "n={n}: {round:?}");
                for &(a, b) in round {
                    assert!(a < b && b < n, "n={n}: {a},{b}");
                    assert!(seen.insert((a, b)), "n={n}: {a},{b} twice");
                }
            }
            assert_eq!(seen.len(), n * (n - 1) / 2, "n={n}");
        }
    }

    #[test]
    fn a_bounded_scan_gives_every_node_distinct_partners() {
        let rounds = round_robin(1000, 8);
        assert_eq!(rounds.len(), 8);
        let mut partners = vec![BTreeSet::new(); 1000];
        for round in &rounds {
            assert!(disjoint(round));
            for &(a, b) in round {
                partners[a].insert(b);
                partners[b].insert(a);
            }
        }
        assert!(partners.iter().all(|p| p.len() == 8));
        assert!(round_robin(1, 5).is_empty() && round_robin(0, 5).is_empty());
    }

    #[test]
    fn matchings_take_every_pair_without_a_node_twice_per_round() {
        // A star (node 0 with everyone) needs one round per pair.
        let star: Vec<Pair> = (1..6).map(|b| (0, b)).collect();
        let rounds = matchings(&star, 100);
        assert_eq!(rounds.len(), 5);
        let mut pairs = vec![(0, 1), (2, 3), (1, 2), (0, 3), (4, 5)];
        let rounds = matchings(&pairs, 100);
        assert_eq!(
            rounds,
            vec![vec![(0, 1), (2, 3), (4, 5)], vec![(1, 2), (0, 3)]]
        );
        assert!(rounds.iter().all(|r| disjoint(r)));
        assert_eq!(matchings(&star, 2).concat().len(), 2, "the limit holds");
        pairs.clear();
        assert!(matchings(&pairs, 3).is_empty());
    }
}
