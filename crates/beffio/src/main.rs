//! `b_eff_io`: the effective I/O bandwidth benchmark. Thin front over [`beffio::run`].

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // Network selection goes into the environment before MPI_Init reads it.
    let network = match beffio::options::Options::parse_args(&args) {
        Ok(o) => xmpi::network::apply(o.enable.as_deref(), o.disable.as_deref()),
        Err(_) => Ok(None),
    };
    let mpi = match xmpi::Mpi::init() {
        Ok(mpi) => mpi,
        Err(e) => {
            eprintln!("b_eff_io: error: {e}");
            std::process::exit(1);
        }
    };
    let code = beffio::run::run(&mpi.world(), args, network);
    mpi.exit(code)
}
