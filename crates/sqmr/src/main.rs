//! The `sqmr` binary: parse, start MPI, run, leave with the code every rank agreed on.

fn main() {
    let options = sqmr::options::Options::parse_from_args(std::env::args_os());
    // Network selection goes into the environment before MPI_Init reads it.
    let network = match &options {
        Ok(o) => xmpi::network::apply(o.enable.as_deref(), o.disable.as_deref()),
        Err(_) => Ok(None),
    };
    let mpi = match xmpi::Mpi::init() {
        Ok(mpi) => mpi,
        Err(e) => {
            eprintln!("sqmr: {e}");
            std::process::exit(1);
        }
    };
    let code = {
        let world = mpi.world();
        match sqmr::app::run(&world, options, network) {
            Ok(()) => 0,
            Err(agreed) => agreed.code,
        }
    };
    mpi.exit(code)
}
