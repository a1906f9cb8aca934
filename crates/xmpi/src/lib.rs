//! The thin MPI plumbing that xylem's benchmarks share.
//!
//! - [`Mpi`] starts MPI and, when dropped, finalizes it; [`Mpi::exit`] finalizes and then
//!   leaves with an exit code, so that every rank leaves cleanly.
//! - [`agree`] turns a check that may fail on some ranks only into one verdict that every
//!   rank shares: the failing rank with the lowest number prints its message, and every
//!   rank returns the same exit code. This is the normal error path of a benchmark;
//!   `MPI_Abort` stays the last resort.
//! - [`gather_strings`] collects one string per rank (host names) on a root rank.
//! - [`library_version`] names the MPI library; it can be called before `MPI_Init`.
//! - [`launch::check`] stops silent singletons (a launcher's N tasks, each a world of 1).
//! - [`memory`] checks per node what the ranks are about to allocate against the node's
//!   `MemAvailable` and the job's memory cgroup limit ([`memory::agree_fits`]).
//! - [`network::apply`] applies `--enable/--disable` to the environment before `MPI_Init`;
//!   [`network::agree_selection`] agrees on the outcome after it and checks it across hosts.

pub mod constants;
pub mod interrupt;
pub mod launch;
pub mod memory;
pub mod network;
pub mod panic;

use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{Root, *};

/// A running MPI environment. Finalizes MPI when dropped.
pub struct Mpi {
    universe: mpi::environment::Universe,
}

/// Why MPI could not be started.
#[derive(Debug)]
pub struct AlreadyInitialized;

impl std::fmt::Display for AlreadyInitialized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MPI was already initialized in this process")
    }
}

impl std::error::Error for AlreadyInitialized {}

impl Mpi {
    /// Calls `MPI_Init`. Everything that must be in the environment before it (network
    /// selection) has to be set by then.
    ///
    /// A task that its launcher counted among N > 1 but that MPI started as a world of
    /// one (MPICH under `srun --mpi=pmix`, say) does not run on alone: it prints
    /// [`launch::Singleton`]'s message, finalizes and exits with [`launch::EXIT_CODE`].
    pub fn init() -> Result<Self, AlreadyInitialized> {
        let mpi = mpi::initialize()
            .map(|universe| Mpi { universe })
            .ok_or(AlreadyInitialized)?;
        let size = usize::try_from(mpi.world().size()).unwrap_or(0);
        if let Err(singleton) = launch::check_process(size, &library_version()) {
            eprintln!("{singleton}");
            mpi.exit(launch::EXIT_CODE);
        }
        Ok(mpi)
    }

    /// `MPI_COMM_WORLD`.
    pub fn world(&self) -> SimpleCommunicator {
        self.universe.world()
    }

    /// Finalizes MPI, flushes standard output and leaves the process with `code`.
    pub fn exit(self, code: i32) -> ! {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        drop(self);
        std::process::exit(code)
    }
}

/// The start of every benchmark: applies `--enable/--disable` to this process's
/// environment (while it has one thread), then starts MPI. The outcome of the selection
/// is returned, not acted on, so that the ranks can agree on it
/// ([`network::agree_selection`]); a process that cannot start MPI at all says so as
/// `program` and leaves.
pub fn start(
    program: &str,
    enable: Option<&str>,
    disable: Option<&str>,
) -> (Mpi, network::Outcome) {
    let network = network::apply(enable, disable);
    match Mpi::init() {
        Ok(mpi) => {
            let rank = mpi.world().rank();
            panic::install(program, rank);
            panic::test_panic(rank);
            (mpi, network)
        }
        Err(e) => {
            eprintln!("{program}: {e}");
            std::process::exit(1);
        }
    }
}

/// A failure found by a check on one rank: the exit code to leave with and the message to
/// print on standard error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// Exit code, non-zero.
    pub code: i32,
    /// The complete text to print, newline included where wanted.
    pub message: String,
}

impl Failure {
    /// A failure with exit code `code` and message `message`.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        debug_assert!(code != 0, "a failure needs a non-zero exit code");
        Failure {
            code,
            message: message.into(),
        }
    }
}

/// The verdict every rank shares after [`agree`] found a failure somewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Agreed {
    /// The exit code every rank should leave with (the largest code any rank reported).
    pub code: i32,
}

/// Agrees on a check over all ranks of `comm` (a collective call: every rank must call it).
///
/// When no rank failed, returns the local value. Otherwise the failing rank with the lowest
/// number prints its message on standard error (nothing if it is empty) and every rank
/// gets the same [`Agreed`] exit code, so that all of them can finalize and leave together.
pub fn agree<T, C: Communicator>(comm: &C, local: Result<T, Failure>) -> Result<T, Agreed> {
    let my_code: i32 = match &local {
        Ok(_) => 0,
        Err(f) => f.code.max(1),
    };
    let mut code = 0i32;
    comm.all_reduce_into(&my_code, &mut code, SystemOperation::max());
    let local = match local {
        Ok(value) if code == 0 => return Ok(value),
        other => other,
    };
    let me = comm.rank();
    let candidate = if my_code != 0 { me } else { i32::MAX };
    let mut first = i32::MAX;
    comm.all_reduce_into(&candidate, &mut first, SystemOperation::min());
    if let Err(f) = &local {
        // An empty message stays quiet (a closed standard output pipe, say).
        if me == first && !f.message.is_empty() {
            eprint!("{}", f.message);
            if !f.message.ends_with('\n') {
                eprintln!();
            }
        }
    }
    Err(Agreed { code })
}

/// Gathers one string from every rank of `comm` on rank `root`, in rank order
/// (a collective call). Returns `Some` on the root, `None` elsewhere. Strings are sent
/// as fixed-width byte records as wide as the longest one, so nothing is cut.
pub fn gather_strings<C: Communicator>(comm: &C, root: i32, mine: &str) -> Option<Vec<String>> {
    let len = i32::try_from(mine.len()).expect("a host name fits in an int");
    let mut width = 0i32;
    comm.all_reduce_into(&len, &mut width, SystemOperation::max());
    let width = usize::try_from(width).expect("the widest string has a non-negative length");
    if width == 0 {
        // Nothing to send (and MPI refuses a gather of empty buffers): every rank knows.
        let size = usize::try_from(comm.size()).expect("a communicator size is positive");
        return (comm.rank() == root).then(|| vec![String::new(); size]);
    }
    let mut record = vec![0u8; width];
    record[..mine.len()].copy_from_slice(mine.as_bytes());
    let root_process = comm.process_at_rank(root);
    if comm.rank() == root {
        let size = usize::try_from(comm.size()).expect("a communicator size is positive");
        let mut all = vec![0u8; width * size];
        root_process.gather_into_root(&record[..], &mut all[..]);
        Some(
            all.chunks(width)
                .map(|chunk| {
                    let end = chunk.iter().position(|&b| b == 0).unwrap_or(chunk.len());
                    String::from_utf8_lossy(&chunk[..end]).into_owned()
                })
                .collect(),
        )
    } else {
        root_process.gather_into(&record[..]);
        None
    }
}

/// The MPI library's own version string (`MPI_Get_library_version`), trimmed; callable
/// before `MPI_Init`.
pub fn library_version() -> String {
    mpi::environment::library_version()
        .map(|s| s.trim_end_matches(['\0', '\n', ' ']).to_string())
        .unwrap_or_else(|_| "unknown MPI library".to_string())
}

/// A one-line name of the MPI library: the first line of [`library_version`] with its
/// white space folded, plus the device line where the library prints one (MPICH).
pub fn library_summary() -> String {
    summarize_version(&library_version())
}

fn summarize_version(full: &str) -> String {
    let fold = |line: &str| line.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut summary = fold(full.lines().next().unwrap_or(""));
    if let Some(device) = full
        .lines()
        .find(|l| l.trim_start().starts_with("MPICH Device:"))
    {
        summary = format!("{summary}, {}", fold(device));
    }
    summary
}

/// This process's MPI processor name (usually the host name).
pub fn processor_name() -> String {
    mpi::environment::processor_name().unwrap_or_else(|_| "unknown".to_string())
}

/// `MPI_Wtime`.
pub fn wtime() -> f64 {
    mpi::time()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_summaries_are_one_line() {
        let mpich =
            "MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 2022\nMPICH Device:\tch4:ucx\n";
        assert_eq!(
            summarize_version(mpich),
            "MPICH Version: 4.0.2, MPICH Device: ch4:ucx"
        );
        let ompi = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022";
        assert_eq!(summarize_version(ompi), ompi);
    }
}
