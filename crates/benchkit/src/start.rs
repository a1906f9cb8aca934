//! Start-up: network selection into the environment, then `MPI_Init` ([`start`]);
//! [`Mpi`] finalizes when dropped and [`Mpi::exit`] leaves with an exit code; the MPI
//! library's identification and the processor name.

use mpi::collective::CommunicatorCollectives;
use mpi::topology::{Communicator, SimpleCommunicator};

use crate::watchdog::Watchdog;
use crate::{launch, network, panic};

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
            outfile::eprintln!("{singleton}");
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
/// environment (while it has one thread), starts the rank's watchdog (`stall`, the stall
/// timeout: from here a rank that never arrives, or stops, ends the job), then starts MPI
/// and names the rank to the watchdog. The outcome of the selection is returned, not acted
/// on, so that the ranks can agree on it ([`network::agree_selection`]); a process that
/// cannot start MPI at all says so as `program` and leaves.
pub fn start(
    program: &str,
    enable: Option<&str>,
    disable: Option<&str>,
    stall: Option<std::time::Duration>,
) -> (Mpi, network::Outcome, Watchdog) {
    let network = network::apply(enable, disable);
    if let Ok(Some(applied)) = &network {
        crate::init_note::arm(&init_note(program, applied));
    }
    // After the selection: the watchdog's thread must not see the environment change.
    let watchdog = Watchdog::before_init(program, stall);
    let started = Mpi::init();
    crate::init_note::disarm();
    match started {
        Ok(mpi) => {
            let rank = mpi.world().rank();
            watchdog.identify(rank, &processor_name());
            panic::install(program, rank);
            panic::test_panic(rank);
            (mpi, network, watchdog)
        }
        Err(e) => {
            outfile::eprintln!("{program}: {e}");
            std::process::exit(1);
        }
    }
}

/// The end of every benchmark, with the `code` every rank agreed on: the ranks meet once
/// more without spinning (a rank stopped before the end is named by the stall of the
/// others, instead of a job whose other ranks left with 0 and whose launcher waits for
/// ever), then `MPI_Finalize` under its own bound ([`Watchdog::finalizing`]), and the
/// process leaves with `code`.
pub fn finish(mpi: Mpi, watchdog: Watchdog, code: i32) -> ! {
    let world = mpi.world();
    let progress = watchdog.progress();
    progress.at("the end of the run, waiting for every rank to finish");
    crate::watchdog::test_stop_at_end(world.rank());
    crate::heartbeat::quiet_barrier(&world, Some(&progress));
    // Every rank is here now; one blocking barrier more lets each rank's last messages be
    // acknowledged while its peers still progress. Without it MPICH 4 over UCX hung in
    // MPI_Finalize in 10 of 15 two-host runs: a rank whose endpoint flush waited for a
    // peer already blocked in Finalize's PMI barrier.
    world.barrier();
    watchdog.finalizing(code);
    mpi.exit(code)
}

/// What a rank says when the job ends inside `MPI_Init` under a network selection: its
/// host's choice, so that the ranks' lines together name every host's networks.
fn init_note(program: &str, applied: &network::Applied) -> String {
    let nets = netsel::HostNetworks::decode(&applied.networks)
        .map(|h| h.describe())
        .unwrap_or_else(|_| applied.networks.clone());
    format!(
        "{program}: MPI_Init did not complete on host {} under {}, which selected there: {nets}. \
         If another host's selected networks share no subnet with these, the library could \
         not connect them: `xylem net check {} -- LAUNCHER ARGS` compares every host's before a job.\n",
        applied.host.host,
        applied.switch(),
        applied.switch()
    )
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

/// What `--version` prints after the program's name: `version`, the MPI library the
/// binary was built against (with the directories of its `mpi.h` and libraries: a centre
/// keeps one build per MPI) and the one it runs on, said plainly when that is another.
pub fn long_version(version: &str) -> String {
    let built = crate::constants::header_library();
    let runs = library_summary();
    let dirs = |list: &str| match list {
        "" => "unknown".to_string(),
        l => l.replace(':', ", "),
    };
    let mut out = format!(
        "{version}\nbuilt against: {built} (mpi.h in {}; libraries in {})\nruns on: {runs}",
        dirs(env!("XYLEM_MPI_INCLUDE_DIRS")),
        dirs(env!("XYLEM_MPI_LIB_DIRS")),
    );
    if !same_library(&built, &runs) {
        out += &format!(
            "\nwarning: this is not the MPI library the binary was built against ({built}): \
             load that one, or build against this one"
        );
    }
    out
}

/// Whether the library `runs` (its [`library_summary`]) is the one of the header `built`
/// ([`crate::constants::header_library`]): the same family, and the header's major and
/// minor version in its words (Intel MPI names no patch level at run time).
fn same_library(built: &str, runs: &str) -> bool {
    let Some((family, version)) = built.rsplit_once(' ') else {
        return false;
    };
    let family_word = family.split_whitespace().next().unwrap_or(family);
    let major_minor: String = version.split('.').take(2).collect::<Vec<_>>().join(".");
    runs.contains(family_word) && runs.contains(&major_minor)
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
    fn the_built_and_running_libraries_are_compared_by_family_and_version() {
        let ompi = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4";
        assert!(same_library("Open MPI 4.1.4", ompi));
        assert!(!same_library("Open MPI 5.0.11", ompi));
        assert!(!same_library("MPICH 4.1.4", ompi));
        let mpich = "MPICH Version: 4.0.2, MPICH Device: ch4:ucx";
        assert!(same_library("MPICH 4.0.2", mpich));
        assert!(!same_library("MPICH 5.0.2", mpich));
        let intel = "Intel(R) MPI Library 2021.13 for Linux* OS";
        assert!(same_library("Intel MPI 2021.13.1", intel));
        assert!(!same_library("MPICH 3.4a2", intel));
        assert!(!same_library("", intel));
    }

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
