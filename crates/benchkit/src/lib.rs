//! What every xylem benchmark binary is built from, so that they behave alike.
//!
//! Without MPI (the benchmarks' MPI-free cores use these too):
//! - [`exit`]: one exit-code type (0 to 6, 128 + signal) and the one table of what each
//!   program's codes mean, which the man pages are made from;
//! - [`keeper`]: the one keeper of a benchmark's result documents while it runs (every
//!   version, running, stopped or complete, from whichever thread);
//! - [`size`]: one grammar for byte counts on the command line (`4096`, `64K`, `64MiB`,
//!   `1.5G`), with the ranges each option takes;
//! - [`network`]: one definition of `--enable`, `--disable` and `--strict`;
//! - [`progress`]: progress on standard error, live on a terminal, plain lines otherwise;
//! - [`stall`]: one definition of `--stall-timeout`;
//! - [`local_ranks`]: the job's other ranks on this host that cannot take part (stopped,
//!   exited), as `/proc` shows them, for a rank that waits for every other.
//!
//! With the default `mpi` feature, the MPI side of a benchmark's life:
//! - [`start`]: network selection into the environment before `MPI_Init`
//!   ([`network::apply`]), then MPI; [`Mpi::exit`] finalizes and leaves with a code;
//! - [`agree`](mod@agree): one verdict on a check that may fail on some ranks only, the
//!   lowest failing rank's message printed once, every rank leaving with the same code;
//!   [`network::agree_selection`] does it for the network selection, across hosts;
//! - [`launch`] stops silent singletons (a launcher's N tasks, each a world of 1);
//! - [`memory`] checks per node what the ranks are about to allocate against the node's
//!   `MemAvailable` and the job's memory cgroup limit;
//! - [`interrupt`] and [`panic`]: SIGINT/SIGTERM and panics as agreed exits;
//! - [`watchdog`]: a rank that makes no progress for the stall timeout ends the job
//!   (exit 6) instead of hanging it, naming itself, its host and where it waited;
//! - [`heartbeat`]: the pulses that tell a waiting rank the ranks it waits for still
//!   work, and a barrier that waits without spinning;
//! - [`constants`]: MPI constants the `mpi` crate does not export (`MPI_BYTE`).
//!
//! The output-file layer every binary shares is the `outfile` crate (no MPI either).

pub mod exit;
pub mod keeper;
pub mod local_ranks;
pub mod network;
pub mod progress;
pub mod provenance;
pub mod size;
pub mod stall;

#[cfg(feature = "mpi")]
pub mod agree;
#[cfg(feature = "mpi")]
pub mod constants;
#[cfg(feature = "mpi")]
pub mod heartbeat;
#[cfg(feature = "mpi")]
pub mod init_note;
#[cfg(feature = "mpi")]
pub mod interrupt;
#[cfg(feature = "mpi")]
pub mod launch;
#[cfg(feature = "mpi")]
pub mod memory;
#[cfg(feature = "mpi")]
pub mod panic;
#[cfg(feature = "mpi")]
pub mod start;
#[cfg(feature = "mpi")]
pub mod watchdog;

#[cfg(feature = "mpi")]
pub use agree::{
    agree, agree_failure_max, agree_message, gather_all, gather_strings, max_all, message_of,
    options_or_leave, sum_all, Agreed, Failure,
};
pub use exit::Exit;
/// Call first in `main`: a process started only to read a transport library's registry
/// for the network check does that and leaves ([`netsel::stack`]).
#[cfg(feature = "mpi")]
pub use netsel::stack::answer_registry_request;
#[cfg(feature = "mpi")]
pub use start::{
    finish, library_summary, library_version, long_version, processor_name, start, wtime,
    AlreadyInitialized, Mpi,
};
