//! The `sqmr` binary: parse, start MPI, run, leave with the code every rank agreed on.

fn main() {
    let options = sqmr::options::Options::parse_from_args(std::env::args_os());
    let mpi = match xmpi::Mpi::init() {
        Ok(mpi) => mpi,
        Err(e) => {
            eprintln!("sqmr: {e}");
            std::process::exit(1);
        }
    };
    let code = {
        let world = mpi.world();
        match sqmr::app::run(&world, options) {
            Ok(()) => 0,
            Err(agreed) => agreed.code,
        }
    };
    mpi.exit(code)
}
