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

/// The most ranks a layout may have. sqmr measures one node: its core ranks share that
/// node and each has a few neighbours, so a real job has hundreds or thousands of ranks;
/// a million is far beyond any, and keeps the launcher file (a line per rank for srun
/// and mpirun) to tens of megabytes. sqmr itself takes at most `i32::MAX` ranks (MPI
/// counts ranks in an `int`), far above this.
pub const MAX_RANKS: usize = 1 << 20;

/// The longest node name accepted: a DNS name is at most 253 characters.
pub const MAX_NODE_NAME: usize = 253;

/// The node of every rank of a job. Nothing is stored per rank: the node of a rank
/// follows from its number ([`Layout::host_of`]), so a layout costs memory in its nodes
/// only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    shape: Topology,
    ranks: usize,
    core_node: String,
    /// The nodes besides the core node, in the order of the request.
    others: Vec<String>,
}

fn check_name(name: &str) -> Result<(), Error> {
    let bad = |c: char| c.is_whitespace() || matches!(c, ',' | ':' | '=' | '#');
    if name.is_empty() || name.len() > MAX_NODE_NAME || name.chars().any(bad) {
        Err(Error::BadNodeName(name.to_string()))
    } else {
        Ok(())
    }
}

/// The ranks of `shape`, if a layout may have that many ([`MAX_RANKS`]).
fn ranks_of(shape: Topology) -> Result<usize, Error> {
    let Topology {
        num_cores,
        num_nbors,
    } = shape;
    if num_cores == 0 {
        return Err(Error::NoCores);
    }
    if num_nbors == 0 {
        return Err(Error::NoNeighbours);
    }
    shape
        .ranks()
        .filter(|&r| r <= MAX_RANKS)
        .ok_or(Error::TooManyRanks {
            num_cores,
            num_nbors,
        })
}

impl Layout {
    /// Places the job: ranks `0..num_cores` on the core node, and neighbour `j` (counted
    /// from rank `num_cores`) on the `j mod m`-th of the `m` other nodes, in the order of
    /// `nodes`. One core rank's neighbours are consecutive, so they land on different
    /// nodes whenever `num_nbors ≤ m`, and no other node takes more than one rank above
    /// any other — the smallest load per node any layout can have. A job of more than
    /// [`MAX_RANKS`] ranks is refused before anything is allocated.
    pub fn plan(request: &Request) -> Result<Layout, Error> {
        let ranks = ranks_of(request.shape)?;
        let num_cores = request.shape.num_cores;
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
        let others: Vec<String> = request
            .nodes
            .iter()
            .filter(|n| **n != request.core_node)
            .cloned()
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
                    capacity: others.len().saturating_mul(slots),
                    needed: neighbours.div_ceil(slots),
                    per_node,
                });
            }
        }
        Ok(Layout {
            shape: request.shape,
            ranks,
            core_node: request.core_node.clone(),
            others,
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

    /// The index among the other nodes of neighbour rank `rank`'s node, and its slot
    /// there (how many ranks of that node come before it).
    fn neighbour_place(&self, rank: usize) -> (usize, usize) {
        let j = rank - self.shape.num_cores;
        (j % self.others.len(), j / self.others.len())
    }

    /// The node of `rank` (`rank < self.ranks()`).
    pub fn host_of(&self, rank: usize) -> &str {
        if rank < self.shape.num_cores {
            &self.core_node
        } else {
            &self.others[self.neighbour_place(rank).0]
        }
    }

    /// The node of every rank, in rank order.
    pub fn hosts(&self) -> Vec<&str> {
        (0..self.ranks).map(|r| self.host_of(r)).collect()
    }

    /// Ranks in the job.
    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// The position of `rank` among the ranks of its node (0 for the lowest rank there):
    /// the slot an Open MPI rankfile gives it.
    pub fn slot_of(&self, rank: usize) -> usize {
        if rank < self.shape.num_cores {
            rank
        } else {
            self.neighbour_place(rank).1
        }
    }

    /// Ranks per node, nodes in the order they first take a rank.
    pub fn per_node(&self) -> Vec<(&str, usize)> {
        let neighbours = self.ranks - self.shape.num_cores;
        let m = self.others.len();
        let others = self
            .others
            .iter()
            .enumerate()
            .map(|(i, node)| {
                (
                    node.as_str(),
                    neighbours / m + usize::from(i < neighbours % m),
                )
            })
            .filter(|(_, n)| *n > 0);
        std::iter::once((self.core_node.as_str(), self.shape.num_cores))
            .chain(others)
            .collect()
    }

    /// Runs of consecutive ranks on one node, in rank order (what a hydra machine file
    /// lists: `host:count` per run).
    pub fn runs(&self) -> Vec<(&str, usize)> {
        let mut runs: Vec<(&str, usize)> = Vec::new();
        for host in (0..self.ranks).map(|r| self.host_of(r)) {
            match runs.last_mut() {
                Some((h, n)) if *h == host => *n += 1,
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
            let mine: BTreeSet<&str> = s.neighbours_of(c).map(|r| hosts[r]).collect();
            assert!(!mine.contains(layout.core_node()));
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
    fn slots_and_loads_agree_with_counting_the_hosts() {
        for (cores, nbors, n) in [(3, 5, 3), (5, 2, 8), (1, 1, 2), (7, 3, 4), (2, 9, 5)] {
            let layout = Layout::plan(&request(cores, nbors, "n2", nodes(n))).unwrap();
            let hosts = layout.hosts();
            let mut counted: Vec<(&str, usize)> = Vec::new();
            for (r, host) in hosts.iter().enumerate() {
                let before = hosts[..r].iter().filter(|h| *h == host).count();
                assert_eq!(layout.slot_of(r), before, "rank {r} of {cores}x{nbors}/{n}");
                match counted.iter_mut().find(|(h, _)| h == host) {
                    Some((_, k)) => *k += 1,
                    None => counted.push((host, 1)),
                }
            }
            assert_eq!(layout.per_node(), counted, "{cores}x{nbors}/{n}");
        }
    }

    #[test]
    fn the_rank_count_is_bounded_before_anything_is_allocated() {
        let most = Layout::plan(&request(1, MAX_RANKS - 1, "n1", nodes(2))).unwrap();
        assert_eq!(most.ranks(), MAX_RANKS);
        assert_eq!(most.host_of(MAX_RANKS - 1), "n2");
        for (cores, nbors) in [
            (1, MAX_RANKS),
            (10_000_000, 1),
            (8, 1 << 32),
            (usize::MAX, 2),
        ] {
            let e = Layout::plan(&request(cores, nbors, "n1", nodes(2))).unwrap_err();
            assert_eq!(
                e,
                Error::TooManyRanks {
                    num_cores: cores,
                    num_nbors: nbors
                }
            );
        }
        let e = Layout::plan(&request(8, 1 << 32, "n1", nodes(2))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--num_cores 8 with --num_nbors 4294967296 makes 34359738376 ranks \
             (num_cores × (1 + num_nbors)); at most 1048576 are accepted (sqmr measures one \
             node: its cores and a few neighbours each)"
        );
        let long = "n".repeat(MAX_NODE_NAME + 1);
        let e = Layout::plan(&request(1, 1, "n1", vec!["n1".into(), long.clone()])).unwrap_err();
        assert_eq!(e, Error::BadNodeName(long));
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
