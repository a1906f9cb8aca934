//! b_eff_io's one checked configuration: the options as parsed, with everything the
//! ranks must agree on before anything is created (the network selection, the
//! partitions, the hints, the memory per process and MPART, the buffers each host is
//! about to hold), checked once, collectively; the rest of the run reads it from here.

use benchkit::{sum_all, Agreed, Exit};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::hints::Hints;
use crate::options::{MemorySetting, Options};
use crate::patterns::mpart;
use crate::schedule::{check_partitions, default_partitions};

/// The run's configuration, the same on every rank (rank 0's network record aside).
pub(crate) struct Config {
    /// The options as parsed.
    pub opts: Options,
    /// The partition sizes, in run order, checked against the job's size.
    pub parts: Vec<usize>,
    /// `--hint`s and the `-i` hints file, read and checked by rank 0.
    pub hints: Hints,
    /// Memory per process in bytes (rank 0's, on every rank).
    pub memory: u64,
    /// MPART: the largest chunk, from the memory per process.
    pub mpart: u64,
    /// Memory that could cache the files: MemTotal summed over the nodes.
    pub cache_bound: u64,
    /// Every host's network selection (rank 0; `None` elsewhere or without one).
    pub network: Option<benchkit::network::SelectionRecord>,
}

impl Config {
    /// Checks `parsed` and the job's facts on every rank of `world` (collective): `None`
    /// after `--help` or `--version`; a bad option, selection, partition list, hints file
    /// or a buffer a host cannot hold is every rank's exit 2, said once, before anything
    /// is created.
    pub fn check(
        world: &SimpleCommunicator,
        parsed: Result<Options, clap::Error>,
        network: benchkit::network::Outcome,
    ) -> Result<Option<Config>, Agreed> {
        let Some(opts) =
            benchkit::options_or_leave(world, parsed, |e| crate::outputs::stdout_failure(&e))?
        else {
            return Ok(None);
        };
        // The selection: agreed, checked across hosts (warnings, or errors with --strict).
        let network =
            benchkit::network::agree_selection(world, network, opts.network.strict, "b_eff_io: ")?
                .and_then(|a| a.record);
        let parts = checked_partitions(world, &opts)?;
        let hints = super::load_hints(world, &opts)?;
        let (memory, cache_bound) = memory_per_process(world, opts.memory());
        let mpart = mpart(memory);
        super::partition::refuse_short_memory(world, &parts, mpart, opts.posix_baseline)?;
        Ok(Some(Config {
            opts,
            parts,
            hints,
            memory,
            mpart,
            cache_bound,
            network,
        }))
    }
}

/// The partitions to run (`--partitions`, else the whole job and its half), checked
/// against the job's size: a bad list is every rank's exit 2.
fn checked_partitions(world: &SimpleCommunicator, opts: &Options) -> Result<Vec<usize>, Agreed> {
    let n = world.size() as usize;
    let parts = opts
        .partitions
        .clone()
        .unwrap_or_else(|| default_partitions(n));
    let checked = check_partitions(&parts, n)
        .map(|()| parts)
        .map_err(|m| benchkit::Failure::new(Exit::Usage.code(), format!("b_eff_io: error: {m}")));
    benchkit::agree(world, checked)
}

/// The memory per process (rank 0's, on every rank, so that all plan the same MPART) and
/// the memory that could cache the files (collective).
fn memory_per_process(world: &SimpleCommunicator, setting: MemorySetting) -> (u64, u64) {
    let local = world.split_shared(world.rank());
    let mem_total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| crate::validity::parse_meminfo_total(&t))
        .unwrap_or(0);
    let leader = local.rank() == 0;
    let cache_bound = sum_all(world, if leader { mem_total } else { 0 });
    let per = match setting {
        MemorySetting::PerProcess(b) => b,
        MemorySetting::Detect => mem_total / local.size() as u64,
    };
    let mut agreed = per;
    world.process_at_rank(0).broadcast_into(&mut agreed);
    (agreed, cache_bound)
}
