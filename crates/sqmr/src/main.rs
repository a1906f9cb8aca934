//! The `sqmr` binary: parse, select the networks, start MPI, run, and leave with the code
//! every rank agreed on.

use mpi::traits::Communicator;

fn main() {
    // Before MPI or any file is opened: a closed standard stream is taken by /dev/null,
    // and a closed standard output makes every write to it an error (exit 1).
    outfile::stdout::guard_standard_streams();
    let options = sqmr::options::Options::parse_with_long_version(
        std::env::args_os(),
        benchkit::long_version(env!("CARGO_PKG_VERSION")),
    );
    let (enable, disable) = match &options {
        Ok(o) => o.network.lists(),
        Err(_) => (None, None),
    };
    let stall = match &options {
        Ok(o) => o.stall.timeout(),
        Err(_) => benchkit::stall::StallArgs::default().timeout(),
    };
    let (mpi, network) = benchkit::start("sqmr", enable, disable);
    let world = mpi.world();
    // From here a rank that makes no progress for the stall timeout ends the job, and
    // MPI_Finalize is bounded by it too.
    let watchdog = benchkit::watchdog::Watchdog::start(
        "sqmr",
        world.rank(),
        &benchkit::processor_name(),
        stall,
    );
    let code = match sqmr::app::run(&world, options, network, &watchdog) {
        Ok(()) => 0,
        Err(agreed) => agreed.code,
    };
    watchdog.finalizing(code);
    mpi.exit(code)
}
