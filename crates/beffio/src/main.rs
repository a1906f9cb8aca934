//! `b_eff_io`: the effective I/O bandwidth benchmark. Thin front over [`beffio::run`].

fn main() {
    // Started only to read a bundled transport library's registry (netsel::stack): that,
    // and nothing else.
    benchkit::answer_registry_request();
    // A closed standard stream must not become the number of an output file.
    outfile::stdout::guard_standard_streams();
    // Arguments as the OS gives them: a path need not be UTF-8 (std::env::args would
    // panic on one).
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // Parsed once: the run gets the outcome, --help and usage errors included.
    let options = beffio::options::Options::parse_with_long_version(
        args,
        benchkit::long_version(env!("CARGO_PKG_VERSION")),
    );
    if let Ok(beffio::options::Options {
        clean: Some(dir), ..
    }) = &options
    {
        // No MPI for cleaning up; under a launcher only its first task cleans.
        let task = benchkit::launch::launched(&|k| std::env::var(k).ok()).and_then(|l| l.task);
        std::process::exit(match task {
            Some(t) if t > 0 => 0,
            _ => beffio::run::rundir::clean_command(dir),
        });
    }
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
    let (mpi, network, watchdog) = benchkit::start("b_eff_io", enable, disable, stall);
    let world = mpi.world();
    let code = match beffio::run::run(&world, options, network, &watchdog) {
        Ok(()) => 0,
        Err(agreed) => agreed.code,
    };
    benchkit::finish(mpi, watchdog, code)
}
