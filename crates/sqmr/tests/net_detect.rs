//! `xylem net resolve --program PROGRAM` takes the MPI flavour from the library PROGRAM
//! loads, on each of the five installations — also under MPICH 4, where Debian's Open
//! MPI `ompi_info` comes first on PATH and answered before.

use std::path::{Path, PathBuf};
use std::process::Command;

use netns::{build_pingpong, Installation};

fn xylem() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_sqmr")).with_file_name("xylem")
}

#[test]
fn the_library_a_program_loads_decides_the_flavour() {
    let mpi = Installation::from_env();
    let expected = match mpi {
        Installation::OpenMpi4 => "openmpi-4.1",
        Installation::Mpich4 | Installation::Mpich5 => "mpich-ucx",
        Installation::OpenMpi5 => "openmpi-5.0",
        Installation::IntelMpi => "intel",
    };
    let dir = tempfile::tempdir().unwrap();
    let program = build_pingpong(mpi, dir.path());
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../netsel/tests/fixtures/ib-ipoib");
    let out = Command::new(xylem())
        .args(["net", "resolve", "--enable", "eth0", "--sysfs"])
        .arg(&fixture)
        .arg("--program")
        .arg(&program)
        .env_remove("XYLEM_MPI")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stderr}", mpi.name());
    assert!(
        stdout.starts_with(&format!("host node-ib: --enable eth0 for {expected}\n")),
        "{}: {stdout}",
        mpi.name()
    );
    assert!(
        stdout.contains(&format!(
            "note: MPI flavour {expected} from the MPI library {} loads",
            program.display()
        )),
        "{}: {stdout}",
        mpi.name()
    );
}
