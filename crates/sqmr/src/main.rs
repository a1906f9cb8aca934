//! The `sqmr` binary: parse, select the networks, start MPI, run, and leave with the code
//! every rank agreed on.

fn main() {
    // Started only to read a bundled transport library's registry (netsel::stack): that,
    // and nothing else.
    benchkit::answer_registry_request();
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
    // From here (before MPI_Init) a rank that makes no progress for the stall timeout
    // ends the job; MPI_Finalize has a bound of its own.
    let (mpi, network, watchdog) = benchkit::start("sqmr", enable, disable, stall);
    let world = mpi.world();
    let code = match sqmr::app::run(&world, options, network, &watchdog) {
        Ok(()) => 0,
        Err(agreed) => agreed.code,
    };
    benchkit::finish(mpi, watchdog, code)
}
