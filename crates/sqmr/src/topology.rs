//! Who talks to whom: core ranks and their neighbours.
//!
//! Core rank `c` (0 ≤ c < num_cores) has the neighbours `num_cores + c·num_nbors + k`
//! for k in 0..num_nbors; a neighbour rank serves exactly one core rank.

/// The role of one rank in the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// A rank on the node under test, with its neighbours in order.
    Core {
        /// The neighbour ranks of this core rank.
        neighbours: Vec<usize>,
    },
    /// A rank on another node that serves one core rank.
    Neighbour {
        /// The core rank it serves.
        core: usize,
    },
}

/// The mapping of a job of `num_cores · (1 + num_nbors)` ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Topology {
    /// Ranks on the core node.
    pub num_cores: usize,
    /// Neighbours per core rank.
    pub num_nbors: usize,
}

impl Topology {
    /// Ranks in the job, `num_cores · (1 + num_nbors)`, or `None` when that overflows.
    pub fn ranks(&self) -> Option<usize> {
        self.num_nbors
            .checked_add(1)
            .and_then(|n| n.checked_mul(self.num_cores))
    }

    /// The neighbours of core rank `core`.
    pub fn neighbours_of(&self, core: usize) -> std::ops::Range<usize> {
        let first = self.num_cores + core * self.num_nbors;
        first..first + self.num_nbors
    }

    /// The role of `rank`.
    pub fn role(&self, rank: usize) -> Role {
        if rank < self.num_cores {
            Role::Core {
                neighbours: self.neighbours_of(rank).collect(),
            }
        } else {
            Role::Neighbour {
                core: (rank - self.num_cores) / self.num_nbors,
            }
        }
    }

    /// The ranks `rank` exchanges messages with.
    pub fn peers(&self, rank: usize) -> Vec<usize> {
        match self.role(rank) {
            Role::Core { neighbours } => neighbours,
            Role::Neighbour { core } => vec![core],
        }
    }

    /// Whether `rank` is a core rank.
    pub fn is_core(&self, rank: usize) -> bool {
        rank < self.num_cores
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manuals_example_of_8_cores_and_4_neighbours() {
        let t = Topology {
            num_cores: 8,
            num_nbors: 4,
        };
        assert_eq!(t.neighbours_of(0), 8..12);
        assert_eq!(t.neighbours_of(1), 12..16);
        assert_eq!(t.neighbours_of(7), 36..40);
        assert_eq!(t.role(8), Role::Neighbour { core: 0 });
        assert_eq!(t.role(11), Role::Neighbour { core: 0 });
        assert_eq!(t.role(12), Role::Neighbour { core: 1 });
        assert_eq!(t.role(39), Role::Neighbour { core: 7 });
        assert_eq!(t.ranks(), Some(40));
        let huge = Topology {
            num_cores: usize::MAX / 2,
            num_nbors: 2,
        };
        assert_eq!(huge.ranks(), None);
    }

    #[test]
    fn every_neighbour_serves_exactly_one_core_that_names_it() {
        for (cores, nbors) in [(1, 1), (1, 2), (2, 1), (3, 5), (8, 4)] {
            let t = Topology {
                num_cores: cores,
                num_nbors: nbors,
            };
            let world = cores * (1 + nbors);
            for rank in cores..world {
                let Role::Neighbour { core } = t.role(rank) else {
                    panic!("rank {rank} should be a neighbour");
                };
                assert!(t.peers(core).contains(&rank));
                let serving = (0..cores).filter(|&c| t.peers(c).contains(&rank)).count();
                assert_eq!(serving, 1);
            }
        }
    }

    #[test]
    fn peers_are_symmetric() {
        let t = Topology {
            num_cores: 2,
            num_nbors: 3,
        };
        assert_eq!(t.peers(1), vec![5, 6, 7]);
        assert_eq!(t.peers(6), vec![1]);
        assert!(t.is_core(1) && !t.is_core(2));
    }
}
