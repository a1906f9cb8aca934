//! `make install` as a centre runs it: it installs nothing on the machine (no package
//! manager, no MPI), and `scripts/install.sh` puts stripped binaries, man pages and
//! completions under a prefix; the installed sqmr names the MPI it was built against.

use std::path::{Path, PathBuf};
use std::process::Command;

const SQMR: &str = env!("CARGO_BIN_EXE_sqmr");

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The ELF section names of `file`, by `readelf`.
fn sections(file: &Path) -> String {
    let out = Command::new("readelf")
        .arg("-S")
        .arg("-W")
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "readelf -S {}", file.display());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn make_install_installs_nothing_on_the_machine() {
    for mpi in ["", "MPI=openmpi4"] {
        let out = Command::new("make")
            .args(["-n", "install", "PREFIX=/opt/xylem"])
            .args((!mpi.is_empty()).then_some(mpi))
            .current_dir(repository())
            .output()
            .unwrap();
        let plan = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{plan}");
        // `make CARGO=…` may name another cargo.
        assert!(plan.contains(" build --release --workspace"), "{plan}");
        assert!(plan.contains("scripts/install.sh"), "{plan}");
        for forbidden in ["install-deps", "apt-get", "pip"] {
            assert!(
                !plan.contains(forbidden),
                "make install {mpi} runs {forbidden}:\n{plan}"
            );
        }
    }
}

#[test]
fn install_puts_stripped_binaries_man_pages_and_completions_under_the_prefix() {
    let bin = Path::new(SQMR).parent().unwrap();
    if !bin.join("b_eff_io").is_file() || !bin.join("xylem").is_file() {
        // `cargo test --workspace` (make test) builds all three beside each other.
        mpitest::unavailable("b_eff_io and xylem are not built beside sqmr (cargo test -p sqmr?)");
        return;
    }
    let prefix = tempfile::tempdir().unwrap();
    let out = Command::new(repository().join("scripts/install.sh"))
        .env("PREFIX", prefix.path())
        .env("XYLEM_BIN_DIR", bin)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for p in ["sqmr", "b_eff_io", "xylem"] {
        let installed = prefix.path().join("bin").join(p);
        let built = sections(&bin.join(p));
        let shipped = sections(&installed);
        assert!(
            built.contains(".debug_line"),
            "{p} was built with line tables"
        );
        for section in [".debug_line", ".debug_info", ".symtab"] {
            assert!(
                !shipped.contains(section),
                "{p} is not stripped: it has {section}"
            );
        }
        let (small, large) = (
            std::fs::metadata(&installed).unwrap().len(),
            std::fs::metadata(bin.join(p)).unwrap().len(),
        );
        assert!(small * 2 < large, "{p}: {small} bytes installed of {large}");
        assert!(prefix
            .path()
            .join(format!("share/man/man1/{p}.1"))
            .is_file());
        assert!(prefix
            .path()
            .join(format!("share/bash-completion/completions/{p}"))
            .is_file());
    }
    // The schemas, as the repository publishes them.
    for name in [
        "sqmr-2.schema.json",
        "sqmr-scan-1.schema.json",
        "b_eff_io-2.schema.json",
    ] {
        let installed = prefix.path().join("share/xylem/schemas").join(name);
        let published = mpitest::schema::schema_dir().join(name);
        assert_eq!(
            std::fs::read_to_string(&installed).unwrap(),
            std::fs::read_to_string(&published).unwrap(),
            "{name}"
        );
    }
    // The installed sqmr says which MPI it was built against.
    let job = mpitest::run(
        mpitest::command(
            mpitest::Installation::from_env(),
            1,
            &prefix.path().join("bin/sqmr"),
            &["--version"],
            std::time::Duration::from_secs(60),
        ),
        &prefix.path().join("bin/sqmr"),
    );
    let prefix_name = mpitest::Installation::from_env().header_library_prefix();
    assert!(
        job.stdout
            .contains(&format!("\nbuilt against: {prefix_name}")),
        "{job:#?}"
    );
}
