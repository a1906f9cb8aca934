//! Rank placement for xylem's benchmarks, computed without MPI.
//!
//! `sqmr` measures one node: its core ranks `0..num_cores` must share the node under test,
//! and core rank `c`'s neighbours `num_cores + c·num_nbors + k` (k in `0..num_nbors`) must
//! sit on other nodes. This crate turns the shape of a job, the core node and the node
//! list into
//!
//! 1. a [`Layout`]: the node of every rank, with the neighbours dealt round-robin over the
//!    other nodes, so that the neighbours of one core rank land on different nodes
//!    whenever there are enough of them and every other node carries the same load (±1);
//! 2. a [`Command`]: the launcher command line plus the one file it needs — a Slurm host
//!    file for `srun --distribution=arbitrary` (`SLURM_HOSTFILE`), an Open MPI rankfile
//!    for `mpirun --rankfile`, or a hydra machine file for MPICH's `mpiexec -f`.
//!
//! Layouts that the nodes cannot hold (a core node missing from the list, no node for the
//! neighbours, a `slots_per_node` limit too small) are refused with an [`Error`] that
//! says what to change.
//!
//! ```
//! use place::{Command, Launcher, Layout, Request, Topology};
//!
//! let request = Request {
//!     shape: Topology { num_cores: 2, num_nbors: 2 },
//!     core_node: "n1".into(),
//!     nodes: vec!["n1".into(), "n2".into(), "n3".into()],
//!     slots_per_node: None,
//! };
//! let layout = Layout::plan(&request).unwrap();
//! assert_eq!(layout.hosts(), ["n1", "n1", "n2", "n3", "n2", "n3"]);
//! let command = Command::new(&layout, Launcher::Srun, None, "hosts.txt", "sqmr", &[]).unwrap();
//! assert_eq!(
//!     command.shell_line(),
//!     "SLURM_HOSTFILE=hosts.txt srun -n 6 --distribution=arbitrary sqmr --num_cores=2 --num_nbors=2"
//! );
//! ```

#![forbid(unsafe_code)]

mod command;
mod layout;

pub use command::{shell_quote, Command, HostFile, Launcher, Mpi};
pub use layout::{Layout, Request, Topology, MAX_NODE_NAME, MAX_RANKS};

/// `num_cores × (1 + num_nbors)` in words, also when it overflows.
fn ranks_text(num_cores: usize, num_nbors: usize) -> String {
    (num_cores as u128 * (1 + num_nbors as u128)).to_string()
}

/// Why a layout or a command cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// `num_cores` is zero.
    #[error("--num_cores must be at least 1")]
    NoCores,
    /// `num_nbors` is zero.
    #[error("--num_nbors must be at least 1")]
    NoNeighbours,
    /// The job would have more than [`MAX_RANKS`] ranks.
    #[error(
        "--num_cores {num_cores} with --num_nbors {num_nbors} makes {} ranks \
         (num_cores × (1 + num_nbors)); at most {MAX_RANKS} are accepted (sqmr measures \
         one node: its cores and a few neighbours each)",
        ranks_text(*num_cores, *num_nbors)
    )]
    TooManyRanks {
        /// Core ranks asked for.
        num_cores: usize,
        /// Neighbours per core asked for.
        num_nbors: usize,
    },
    /// `slots_per_node` is zero.
    #[error("--slots-per-node must be at least 1")]
    NoSlots,
    /// The node list is empty.
    #[error("no nodes given (--nodes n1,n2,...)")]
    NoNodes,
    /// A node name that no launcher file can carry.
    #[error(
        "node name {0:?} is not usable: a name must be non-empty, at most {MAX_NODE_NAME} \
         characters, and have no white space, ',', ':', '=' or '#'"
    )]
    BadNodeName(String),
    /// A node listed twice.
    #[error("node {0} appears twice in --nodes; list every node once")]
    DuplicateNode(String),
    /// The core node is not among the nodes.
    #[error("the core node {core} is not in the node list ({nodes}); add it to --nodes")]
    CoreNodeNotListed {
        /// The core node asked for.
        core: String,
        /// The node list, comma-separated.
        nodes: String,
    },
    /// Only the core node was given.
    #[error(
        "the neighbour ranks need at least one node besides the core node {0}; \
         add nodes to --nodes"
    )]
    NoOtherNodes(String),
    /// The core node cannot hold the core ranks.
    #[error(
        "the core node {node} has {slots} slots but all {num_cores} core ranks must share it; \
         lower --num_cores to {slots} or raise --slots-per-node to {num_cores}"
    )]
    CoreNodeTooSmall {
        /// The core node.
        node: String,
        /// Its slots.
        slots: usize,
        /// Core ranks that must share it.
        num_cores: usize,
    },
    /// The other nodes cannot hold the neighbour ranks.
    #[error(
        "{neighbours} neighbour ranks do not fit on {nodes} other node(s) of {slots} slots \
         ({capacity} slots in all); give at least {needed} nodes besides the core node, \
         raise --slots-per-node to {per_node}, or lower --num_cores/--num_nbors"
    )]
    NeighboursDoNotFit {
        /// Neighbour ranks in the job.
        neighbours: usize,
        /// Nodes besides the core node.
        nodes: usize,
        /// Slots per node.
        slots: usize,
        /// `nodes · slots`.
        capacity: usize,
        /// Nodes besides the core node that would do at this slot count.
        needed: usize,
        /// Slots per node that would do with these nodes.
        per_node: usize,
    },
    /// `--mpi` names a library the launcher does not belong to.
    #[error("{launcher} is {owner}'s launcher, but --mpi says {mpi}; {hint}")]
    LauncherMismatch {
        /// The launcher.
        launcher: Launcher,
        /// The library it belongs to.
        owner: Mpi,
        /// The library asked for.
        mpi: Mpi,
        /// What to use instead.
        hint: &'static str,
    },
}
