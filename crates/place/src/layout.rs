//! Which node every rank goes to.

use std::collections::BTreeSet;

use crate::Error;
pub use sqmr::topology::Topology;

/// What to place, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The job.
    pub shape: Topology,
    /// The node under test; it takes every core rank.
    pub core_node: String,
    /// Every node the job may use, the core node among them, in the order the neighbours
    /// are dealt over them.
    pub nodes: Vec<String>,
    /// The most ranks one node may take (its cores or Slurm CPUs); `None` for no limit.
    pub slots_per_node: Option<usize>,
}

/// The node of every rank of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    shape: Topology,
    core_node: String,
    hosts: Vec<String>,
}

fn check_name(name: &str) -> Result<(), Error> {
    let bad = |c: char| c.is_whitespace() || matches!(c, ',' | ':' | '=' | '#');
    if name.is_empty() || name.chars().any(bad) {
        Err(Error::BadNodeName(name.to_string()))
    } else {
        Ok(())
    }
}

impl Layout {
    /// Places the job: ranks `0..num_cores` on the core node, and neighbour `j` (counted
    /// from rank `num_cores`) on the `j mod m`-th of the `m` other nodes, in the order of
    /// `nodes`. One core rank's neighbours are consecutive, so they land on different
    /// nodes whenever `num_nbors ≤ m`, and no other node takes more than one rank above
    /// any other — the smallest load per node any layout can have.
    pub fn plan(request: &Request) -> Result<Layout, Error> {
        let Topology {
            num_cores,
            num_nbors,
        } = request.shape;
        if num_cores == 0 {
            return Err(Error::NoCores);
        }
        if num_nbors == 0 {
            return Err(Error::NoNeighbours);
        }
        let ranks = request.shape.ranks().ok_or(Error::TooManyRanks {
            num_cores,
            num_nbors,
        })?;
        if request.slots_per_node == Some(0) {
            return Err(Error::NoSlots);
        }
        if request.nodes.is_empty() {
            return Err(Error::NoNodes);
        }
        let mut seen = BTreeSet::new();
        for node in &request.nodes {
            check_name(node)?;
            if !seen.insert(node.as_str()) {
                return Err(Error::DuplicateNode(node.clone()));
            }
        }
        check_name(&request.core_node)?;
        if !seen.contains(request.core_node.as_str()) {
            return Err(Error::CoreNodeNotListed {
                core: request.core_node.clone(),
                nodes: request.nodes.join(","),
            });
        }
        let others: Vec<&String> = request
            .nodes
            .iter()
            .filter(|n| **n != request.core_node)
            .collect();
        if others.is_empty() {
            return Err(Error::NoOtherNodes(request.core_node.clone()));
        }
        if let Some(slots) = request.slots_per_node {
            if num_cores > slots {
                return Err(Error::CoreNodeTooSmall {
                    node: request.core_node.clone(),
                    slots,
                    num_cores,
                });
            }
            let neighbours = ranks - num_cores;
            let per_node = neighbours.div_ceil(others.len());
            if per_node > slots {
                return Err(Error::NeighboursDoNotFit {
                    neighbours,
                    nodes: others.len(),
                    slots,
                    capacity: others.len() * slots,
                    needed: neighbours.div_ceil(slots),
                    per_node,
                });
            }
        }
        let mut hosts = Vec::with_capacity(ranks);
        hosts.extend(std::iter::repeat_n(request.core_node.clone(), num_cores));
        hosts.extend((0..ranks - num_cores).map(|j| others[j % others.len()].clone()));
        Ok(Layout {
            shape: request.shape,
            core_node: request.core_node.clone(),
            hosts,
        })
    }

    /// The job's shape.
    pub fn shape(&self) -> Topology {
        self.shape
    }

    /// The core node.
    pub fn core_node(&self) -> &str {
        &self.core_node
    }

    /// The node of every rank, in rank order.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// Ranks in the job.
    pub fn ranks(&self) -> usize {
        self.hosts.len()
    }

    /// The position of `rank` among the ranks of its node (0 for the lowest rank there):
    /// the slot an Open MPI rankfile gives it.
    pub fn slot_of(&self, rank: usize) -> usize {
        let host = &self.hosts[rank];
        self.hosts[..rank].iter().filter(|h| *h == host).count()
    }

    /// Ranks per node, nodes in the order they first take a rank.
    pub fn per_node(&self) -> Vec<(&str, usize)> {
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for host in &self.hosts {
            match counts.iter_mut().find(|(h, _)| h == host) {
                Some((_, n)) => *n += 1,
                None => counts.push((host, 1)),
            }
        }
        counts
    }

    /// Runs of consecutive ranks on one node, in rank order (what a hydra machine file
    /// lists: `host:count` per run).
    pub fn runs(&self) -> Vec<(&str, usize)> {
        let mut runs: Vec<(&str, usize)> = Vec::new();
        for host in &self.hosts {
            match runs.last_mut() {
                Some((h, n)) if h == host => *n += 1,
                _ => runs.push((host, 1)),
            }
        }
        runs
    }

    /// One line that says what the layout is, e.g. `40 ranks: 8 core ranks on n1, 32
    /// neighbours (4 per core) over n2 n3 n4 n5 (8 each)`.
    pub fn summary(&self) -> String {
        let others: Vec<String> = self
            .per_node()
            .into_iter()
            .skip(1)
            .map(|(h, n)| format!("{h}:{n}"))
            .collect();
        format!(
            "{} ranks: {} core ranks on {}, {} neighbours ({} per core) over {}",
            self.ranks(),
            self.shape.num_cores,
            self.core_node,
            self.ranks() - self.shape.num_cores,
            self.shape.num_nbors,
            others.join(" ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("n{i}")).collect()
    }

    fn request(num_cores: usize, num_nbors: usize, core: &str, nodes: Vec<String>) -> Request {
        Request {
            shape: Topology {
                num_cores,
                num_nbors,
            },
            core_node: core.to_string(),
            nodes,
            slots_per_node: None,
        }
    }

    /// The properties sqmr's placement check wants, plus the spreading.
    fn assert_good(layout: &Layout) {
        let s = layout.shape();
        let hosts = layout.hosts();
        assert_eq!(hosts.len(), s.ranks().unwrap());
        for c in 0..s.num_cores {
            assert_eq!(hosts[c], layout.core_node(), "core rank {c}");
            let mine: BTreeSet<&String> = s.neighbours_of(c).map(|r| &hosts[r]).collect();
            assert!(!mine.contains(&layout.core_node().to_string()));
            let others = layout.per_node().len() - 1;
            assert_eq!(mine.len(), s.num_nbors.min(others), "core {c}: {mine:?}");
        }
        let loads: Vec<usize> = layout.per_node().iter().skip(1).map(|p| p.1).collect();
        assert!(loads.iter().max().unwrap() - loads.iter().min().unwrap() <= 1);
    }

    #[test]
    fn the_manuals_example_spreads_each_cores_neighbours_over_four_nodes() {
        let layout = Layout::plan(&request(8, 4, "n1", nodes(5))).unwrap();
        assert_good(&layout);
        assert_eq!(layout.ranks(), 40);
        assert_eq!(&layout.hosts()[8..12], ["n2", "n3", "n4", "n5"]);
        assert_eq!(&layout.hosts()[36..40], ["n2", "n3", "n4", "n5"]);
        assert_eq!(
            layout.per_node(),
            [("n1", 8), ("n2", 8), ("n3", 8), ("n4", 8), ("n5", 8)]
        );
        assert_eq!(
            layout.summary(),
            "40 ranks: 8 core ranks on n1, 32 neighbours (4 per core) over n2:8 n3:8 n4:8 n5:8"
        );
    }

    #[test]
    fn the_core_node_may_be_anywhere_in_the_list() {
        let layout = Layout::plan(&request(2, 2, "n3", nodes(3))).unwrap();
        assert_eq!(layout.hosts(), ["n3", "n3", "n1", "n2", "n1", "n2"]);
        assert_good(&layout);
    }

    #[test]
    fn more_neighbours_than_nodes_and_fewer_balance_the_load() {
        for (cores, nbors, n) in [(3, 5, 3), (64, 1, 16), (5, 2, 6), (1, 1, 2), (7, 3, 4)] {
            let layout = Layout::plan(&request(cores, nbors, "n1", nodes(n))).unwrap();
            assert_good(&layout);
        }
    }

    #[test]
    fn slots_are_counted_per_node() {
        let layout = Layout::plan(&request(2, 2, "n1", nodes(3))).unwrap();
        let slots: Vec<usize> = (0..layout.ranks()).map(|r| layout.slot_of(r)).collect();
        assert_eq!(slots, [0, 1, 0, 0, 1, 1]);
        assert_eq!(
            layout.runs(),
            [("n1", 2), ("n2", 1), ("n3", 1), ("n2", 1), ("n3", 1)]
        );
    }

    #[test]
    fn a_slot_limit_that_holds_is_accepted() {
        let mut r = request(8, 4, "n1", nodes(5));
        r.slots_per_node = Some(8);
        assert_good(&Layout::plan(&r).unwrap());
    }

    #[test]
    fn a_core_node_too_small_is_refused() {
        let mut r = request(8, 4, "n1", nodes(5));
        r.slots_per_node = Some(4);
        let e = Layout::plan(&r).unwrap_err();
        assert_eq!(
            e,
            Error::CoreNodeTooSmall {
                node: "n1".into(),
                slots: 4,
                num_cores: 8
            }
        );
        assert!(e.to_string().contains("raise --slots-per-node to 8"), "{e}");
    }

    #[test]
    fn neighbours_that_do_not_fit_say_how_many_nodes_would() {
        let mut r = request(8, 4, "n1", nodes(3));
        r.slots_per_node = Some(8);
        let e = Layout::plan(&r).unwrap_err();
        assert_eq!(
            e,
            Error::NeighboursDoNotFit {
                neighbours: 32,
                nodes: 2,
                slots: 8,
                capacity: 16,
                needed: 4,
                per_node: 16
            }
        );
        let text = e.to_string();
        assert!(
            text.contains("at least 4 nodes besides the core node"),
            "{text}"
        );
    }

    #[test]
    fn bad_requests_are_refused_with_their_reason() {
        let cases = [
            (request(0, 1, "n1", nodes(2)), Error::NoCores),
            (request(1, 0, "n1", nodes(2)), Error::NoNeighbours),
            (request(1, 1, "n1", vec![]), Error::NoNodes),
            (
                request(1, 1, "n9", nodes(2)),
                Error::CoreNodeNotListed {
                    core: "n9".into(),
                    nodes: "n1,n2".into(),
                },
            ),
            (
                request(1, 1, "n1", nodes(1)),
                Error::NoOtherNodes("n1".into()),
            ),
            (
                request(1, 1, "n1", vec!["n1".into(), "n2".into(), "n1".into()]),
                Error::DuplicateNode("n1".into()),
            ),
            (
                request(1, 1, "n1", vec!["n1".into(), "n2:4".into()]),
                Error::BadNodeName("n2:4".into()),
            ),
            (
                request(1, 1, "n1", vec!["n1".into(), "".into()]),
                Error::BadNodeName("".into()),
            ),
            (
                request(usize::MAX, 1, "n1", nodes(2)),
                Error::TooManyRanks {
                    num_cores: usize::MAX,
                    num_nbors: 1,
                },
            ),
        ];
        for (r, want) in cases {
            assert_eq!(Layout::plan(&r).unwrap_err(), want, "{r:?}");
        }
        let mut r = request(1, 1, "n1", nodes(2));
        r.slots_per_node = Some(0);
        assert_eq!(Layout::plan(&r).unwrap_err(), Error::NoSlots);
    }
}
