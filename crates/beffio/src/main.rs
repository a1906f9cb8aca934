//! `b_eff_io`: the effective I/O bandwidth benchmark. Thin front over [`beffio::run`].

fn main() {
    // A closed standard stream must not become the number of an output file.
    outfile::stdout::guard_standard_streams();
    // Arguments as the OS gives them: a path need not be UTF-8 (std::env::args would
    // panic on one).
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let options = beffio::options::Options::parse_args(&args);
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
    let (mpi, network) = benchkit::start("b_eff_io", enable, disable);
    let code = beffio::run::run(&mpi.world(), args, network);
    mpi.exit(code)
}
