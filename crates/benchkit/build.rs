//! With the `mpi` feature: compiles `c/constants.c` against the MPI library that the mpi
//! crate builds with (the same probe: `$MPICC`, else `mpicc`), for the constants its shim
//! does not export, and the name and version of the library whose `mpi.h` it is (with
//! the directories of its headers and libraries, for `--version`); and `c/init_note.c`,
//! the note said when a job ends inside `MPI_Init`.

fn main() {
    println!("cargo:rerun-if-changed=c/constants.c");
    println!("cargo:rerun-if-changed=c/init_note.c");
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
    // Where the library's mpi.h and libraries were found, for `--version`.
    let dirs = |paths: &[std::path::PathBuf]| {
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(":")
    };
    println!(
        "cargo:rustc-env=XYLEM_MPI_INCLUDE_DIRS={}",
        dirs(&library.include_paths)
    );
    println!(
        "cargo:rustc-env=XYLEM_MPI_LIB_DIRS={}",
        dirs(&library.lib_paths)
    );
    let mut build = cc::Build::new();
    build.file("c/constants.c");
    build.file("c/init_note.c");
    for dir in &library.include_paths {
        build.include(dir);
    }
    build.compile("xylem_mpi_constants");
}
