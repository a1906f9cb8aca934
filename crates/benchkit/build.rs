//! With the `mpi` feature: compiles `c/constants.c` against the MPI library that the mpi
//! crate builds with (the same probe: `$MPICC`, else `mpicc`), for the constants its shim
//! does not export.

fn main() {
    println!("cargo:rerun-if-changed=c/constants.c");
    // Without the `mpi` feature the crate holds no MPI code and needs no MPI library.
    if std::env::var_os("CARGO_FEATURE_MPI").is_none() {
        return;
    }
    println!("cargo:rerun-if-env-changed=MPICC");
    let library = match build_probe_mpi::probe() {
        Ok(library) => library,
        Err(errors) => {
            for e in errors {
                println!("cargo:warning=MPI probe: {e}");
            }
            panic!("benchkit: cannot find an MPI library (set MPICC or put mpicc on PATH)");
        }
    };
    let mut build = cc::Build::new();
    build.file("c/constants.c");
    for dir in &library.include_paths {
        build.include(dir);
    }
    build.compile("xylem_mpi_constants");
}
