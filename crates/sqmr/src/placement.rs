//! Whether the ranks sit where the benchmark assumes: every core rank on the node of
//! rank 0, every neighbour on another node.

use serde::{Deserialize, Serialize};

use crate::topology::Topology;

/// What the processor names say about the placement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Placement {
    /// The node under test: rank 0's processor name.
    pub core_node: String,
    /// Core ranks that are not on the core node.
    pub cores_elsewhere: Vec<usize>,
    /// Neighbour ranks that share the core node.
    pub neighbours_on_core_node: Vec<usize>,
}

impl Placement {
    /// Checks `hosts` (one processor name per rank, in rank order).
    pub fn check(topology: &Topology, hosts: &[String]) -> Placement {
        let core_node = hosts.first().cloned().unwrap_or_default();
        let (cores, neighbours) = hosts.split_at(topology.num_cores.min(hosts.len()));
        Placement {
            cores_elsewhere: cores
                .iter()
                .enumerate()
                .filter(|(_, h)| **h != core_node)
                .map(|(r, _)| r)
                .collect(),
            neighbours_on_core_node: neighbours
                .iter()
                .enumerate()
                .filter(|(_, h)| **h == core_node)
                .map(|(i, _)| topology.num_cores + i)
                .collect(),
            core_node,
        }
    }

    /// Whether the placement is what the benchmark needs.
    pub fn is_correct(&self) -> bool {
        self.cores_elsewhere.is_empty() && self.neighbours_on_core_node.is_empty()
    }

    /// `#` lines that say what is wrong and what the numbers then measure; empty when
    /// the placement is correct.
    pub fn warnings(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if !self.neighbours_on_core_node.is_empty() {
            lines.push(format!(
                "# WARNING placement: neighbour ranks {} share the core node {} with the core \
                 ranks; their messages go through shared memory, so these rates measure \
                 intra-node messaging, not the network",
                ranks(&self.neighbours_on_core_node),
                self.core_node
            ));
        }
        if !self.cores_elsewhere.is_empty() {
            lines.push(format!(
                "# WARNING placement: core ranks {} are not on the core node {} (rank 0's \
                 node); the rates are not those of one node",
                ranks(&self.cores_elsewhere),
                self.core_node
            ));
        }
        if !lines.is_empty() {
            lines.push(
                "# WARNING placement: put ranks 0..num_cores-1 on one node and the others \
                 elsewhere; `xylem place sqmr` prints a command line that does"
                    .to_string(),
            );
        }
        lines
    }
}

/// A compact list of ranks: `1-3 7 9-10`.
pub fn ranks(list: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < list.len() {
        let start = list[i];
        let mut end = start;
        while i + 1 < list.len() && list[i + 1] == end + 1 {
            i += 1;
            end = list[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_correct_layout_has_no_warning() {
        let t = Topology {
            num_cores: 2,
            num_nbors: 2,
        };
        let p = Placement::check(&t, &hosts(&["n1", "n1", "n2", "n3", "n2", "n3"]));
        assert!(p.is_correct());
        assert!(p.warnings().is_empty());
    }

    #[test]
    fn one_machine_warns_about_every_neighbour() {
        let t = Topology {
            num_cores: 1,
            num_nbors: 3,
        };
        let p = Placement::check(&t, &hosts(&["box", "box", "box", "box"]));
        assert_eq!(p.neighbours_on_core_node, [1, 2, 3]);
        assert!(p.cores_elsewhere.is_empty());
        let w = p.warnings();
        assert!(
            w[0].contains("neighbour ranks 1-3 share the core node box"),
            "{w:?}"
        );
        assert!(w[0].contains("shared memory"));
        assert!(w.iter().all(|l| l.starts_with('#')));
    }

    #[test]
    fn a_core_rank_away_from_rank_0_is_named() {
        let t = Topology {
            num_cores: 3,
            num_nbors: 1,
        };
        let p = Placement::check(&t, &hosts(&["a", "b", "a", "c", "c", "c"]));
        assert_eq!(p.cores_elsewhere, [1]);
        assert!(p.neighbours_on_core_node.is_empty());
        assert!(p.warnings()[0].contains("core ranks 1 are not on the core node a"));
    }

    #[test]
    fn rank_lists_are_compact() {
        assert_eq!(ranks(&[1, 2, 3, 7, 9, 10]), "1-3 7 9-10");
        assert_eq!(ranks(&[4]), "4");
        assert_eq!(ranks(&[]), "");
    }
}
