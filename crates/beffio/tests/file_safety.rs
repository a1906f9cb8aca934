//! `b_eff_io` in a `--path` and an output folder that a hostile user can write to, as root
//! runs it: links planted at the names a writer used to derive from its PID, a fake owner
//! marker in the folder given to `--clean`, the run directory renamed away mid-run and
//! replaced by a link, and every file the job creates in the folder traced with
//! `strace -f`. The victim's files must be byte-identical afterwards.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use beffio::run::rundir::{host_name, OWNER_FILE};
use mpitest::hostile::{self, Victim};
use mpitest::{Installation, JobLock};

const BIN: &str = env!("CARGO_BIN_EXE_b_eff_io");

fn shared_folder() -> (tempfile::TempDir, PathBuf, Victim) {
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    let victim = Victim::new(tmp.path());
    (tmp, shared, victim)
}

/// A short run with its run directory and its four output files in `shared`.
fn args(shared: &Path, t: &str) -> Vec<String> {
    let out = |n: &str| shared.join(n).display().to_string();
    [
        "-T",
        t,
        "-p",
        &shared.display().to_string(),
        "--memory-per-process",
        "64M",
        "--json",
        &out("r.json"),
        "--csv",
        &out("r.csv"),
        "--prefix",
        &out("r"),
    ]
    .map(String::from)
    .to_vec()
}

fn command(args: &[String], limit: Duration) -> Command {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    mpitest::command(Installation::from_env(), 2, Path::new(BIN), &args, limit)
}

#[test]
fn links_planted_at_pid_derived_names_are_never_followed() {
    let (_tmp, shared, victim) = shared_folder();
    let names = hostile::next_pids(1500).flat_map(|pid| {
        ["r.json", "r.csv", "r.sum", "r.prot"]
            .into_iter()
            .flat_map(move |n| {
                [
                    format!(".{n}.tmp.{pid}"),
                    format!(".{n}.xylem-reservation.tmp.{pid}"),
                ]
            })
    });
    assert_eq!(hostile::plant_links(&shared, names, &victim.file()), 12_000);
    let lock = JobLock::acquire();
    let job = mpitest::run(
        command(&args(&shared, "4"), Duration::from_secs(240)),
        Path::new(BIN),
    );
    drop(lock);
    assert!(job.success(), "{job:#?}");
    victim.assert_untouched();
    for name in ["r.json", "r.csv", "r.sum", "r.prot"] {
        let meta = std::fs::symlink_metadata(shared.join(name)).unwrap();
        assert!(meta.is_file(), "{name}: {meta:?}");
    }
}

#[test]
fn every_file_b_eff_io_creates_in_the_folder_is_created_exclusively() {
    let (_tmp, shared, _victim) = shared_folder();
    let lock = JobLock::acquire();
    let (output, made) = hostile::creations_in(
        &command(&args(&shared, "4"), Duration::from_secs(300)),
        &shared,
    );
    drop(lock);
    assert!(output.status.success(), "{output:?}");
    // Four reservations and at least one version of each output.
    assert!(made.len() >= 8, "{made:#?}");
    let plain: Vec<_> = made.iter().filter(|c| !c.is_exclusive()).collect();
    assert!(
        plain.is_empty(),
        "created without O_EXCL|O_NOFOLLOW: {plain:#?}"
    );
}

#[test]
fn clean_never_removes_the_folder_it_is_given_nor_follows_links() {
    let (tmp, shared, victim) = shared_folder();
    // Anyone can write three lines into the shared folder itself...
    let forged = format!("b_eff_io run directory\npid=999999\nhost={}\n", host_name());
    std::fs::write(shared.join(OWNER_FILE), &forged).unwrap();
    std::fs::write(shared.join("someone-else.dat"), b"their data").unwrap();
    // ... and put a link named like a run directory to the victim, with a marker in it.
    std::fs::write(victim.dir.join(OWNER_FILE), &forged).unwrap();
    let victim = Victim::new(tmp.path());
    std::os::unix::fs::symlink(&victim.dir, shared.join("b_eff_io.20200101T000000.1")).unwrap();
    let out = Command::new(BIN)
        .arg("--clean")
        .arg(&shared)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        stdout.contains("never removes the directory it is given") && stdout.contains("removed 0"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read(shared.join("someone-else.dat")).unwrap(),
        b"their data"
    );
    assert_eq!(
        std::fs::read_to_string(shared.join(OWNER_FILE)).unwrap(),
        forged
    );
    victim.assert_untouched();
}

#[test]
fn a_run_directory_swapped_for_a_link_mid_run_does_not_redirect_the_clean_up() {
    let (_tmp, shared, victim) = shared_folder();
    let lock = JobLock::acquire();
    let mut child = command(&args(&shared, "20"), Duration::from_secs(300))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the run directory and the first benchmark file in it.
    let started = Instant::now();
    let run_dir = loop {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no run directory"
        );
        let found = std::fs::read_dir(&shared)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("b_eff_io.")
                    && p.is_dir()
            });
        if let Some(d) = found {
            if d.join("p0.n2").exists() || d.join("p0.n1").exists() {
                break d;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Rename it away, and put a link to the victim in its place.
    let moved = shared.join("moved-away");
    std::fs::rename(&run_dir, &moved).unwrap();
    std::os::unix::fs::symlink(&victim.dir, &run_dir).unwrap();
    let status = hostile::wait_at_most(&mut child, Duration::from_secs(280));
    drop(lock);
    let status = status.expect("b_eff_io hung after its run directory was swapped");
    let stderr = {
        use std::io::Read;
        let mut s = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut s);
        s
    };
    victim.assert_untouched();
    // The link stays; what was removed is the run's own files, through its descriptor.
    assert!(std::fs::symlink_metadata(&run_dir).unwrap().is_symlink());
    let left: Vec<_> = std::fs::read_dir(&moved).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}\n{stderr}");
    eprintln!("exit {status:?}; victim checksum {}", victim.checksum());
}
