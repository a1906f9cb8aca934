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

/// Runs `script` in bash with Lmod's shell functions, or says why there is no Lmod.
fn with_lmod(script: &str) -> Option<std::process::Output> {
    let init = Path::new("/usr/share/lmod/lmod/init/bash");
    if !init.is_file() {
        mpitest::unavailable("no Lmod (/usr/share/lmod/lmod/init/bash; Debian: lmod)");
        return None;
    }
    let full = format!("set -e; source {}; {script}", init.display());
    Some(Command::new("bash").args(["-c", &full]).output().unwrap())
}

#[test]
fn install_writes_an_lmod_module_file_that_loads_the_mpi_and_puts_the_programs_first() {
    let bin = Path::new(SQMR).parent().unwrap();
    if !bin.join("xylem").is_file() {
        mpitest::unavailable("xylem is not built beside sqmr (cargo test -p sqmr?)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("opt/xylem");
    let modules = dir.path().join("modules");
    // The site's MPI module that xylem's module loads.
    std::fs::create_dir_all(modules.join("site-mpi")).unwrap();
    std::fs::write(
        modules.join("site-mpi/1.0.lua"),
        "setenv(\"SITE_MPI_LOADED\", \"yes\")\n",
    )
    .unwrap();
    let modulefile = modules.join("xylem/0.1.0.lua");
    let install = |modulefile: &Path| {
        Command::new(repository().join("scripts/install.sh"))
            .env("PREFIX", &prefix)
            .env("XYLEM_BIN_DIR", bin)
            .env("MODULEFILE", modulefile)
            .env("MPI_MODULE", "site-mpi/1.0")
            .output()
            .unwrap()
    };
    let out = install(&modulefile);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Installing again replaces the module file it wrote.
    let out = install(&modulefile);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let Some(out) = with_lmod(&format!(
        "module use {}; module load xylem/0.1.0; command -v sqmr; echo \"$SITE_MPI_LOADED\"; \
         echo \"$XYLEM_SCHEMAS\"; module help xylem 2>&1",
        modules.display()
    )) else {
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        prefix.join("bin/sqmr").to_str().unwrap(),
        "{stdout}"
    );
    assert_eq!(lines[1], "yes", "the MPI module is loaded: {stdout}");
    assert!(
        Path::new(lines[2]).join("sqmr-2.schema.json").is_file(),
        "{stdout}"
    );
    assert!(stdout.contains("xylem 0.1.0: MPI benchmarks"), "{stdout}");

    // A file of the user's at the module file's path is neither replaced nor installed over.
    let theirs = dir.path().join("theirs.lua");
    std::fs::write(&theirs, "-- the site's own module\n").unwrap();
    let other_prefix = dir.path().join("elsewhere");
    let out = Command::new(repository().join("scripts/install.sh"))
        .env("PREFIX", &other_prefix)
        .env("XYLEM_BIN_DIR", bin)
        .env("MODULEFILE", &theirs)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("exists and is not one that xylem's install wrote"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&theirs).unwrap(),
        "-- the site's own module\n"
    );
    assert!(
        !other_prefix.exists(),
        "nothing installed after the refusal"
    );
}
