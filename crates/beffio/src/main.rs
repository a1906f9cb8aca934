//! `b_eff_io`: the effective I/O bandwidth benchmark. Thin front over [`beffio::run`].

fn main() {
    let code = {
        let Some(universe) = mpi::initialize() else {
            eprintln!("b_eff_io: error: MPI could not be initialised");
            std::process::exit(1);
        };
        let world = universe.world();
        beffio::run::run(&world, std::env::args().collect())
    };
    std::process::exit(code);
}
