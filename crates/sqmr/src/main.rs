//! The `sqmr` binary: parse, select the networks, start MPI, run, and leave with the code
//! every rank agreed on.

fn main() {
    let options = sqmr::options::Options::parse_from_args(std::env::args_os());
    let (enable, disable) = match &options {
        Ok(o) => o.network.lists(),
        Err(_) => (None, None),
    };
    let (mpi, network) = benchkit::start("sqmr", enable, disable);
    let code = match sqmr::app::run(&mpi.world(), options, network) {
        Ok(()) => 0,
        Err(agreed) => agreed.code,
    };
    mpi.exit(code)
}
