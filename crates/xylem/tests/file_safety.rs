//! `xylem`'s writers in a folder that a hostile user can write to, as root would run them:
//! links planted at the names a writer used to derive from its PID, a FIFO, a link to
//! `/dev/zero` and a huge sparse file as the reservation, a reservation of a run on
//! another host that is gone, a link at a generated file's name. Each case checks that the
//! victim's files are byte-identical afterwards and that the program ends promptly.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use mpitest::hostile::{self, Victim};

fn sqmr_json() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../analysis/tests/fixtures/sqmr-a.json")
        .display()
        .to_string()
}

fn xylem() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_xylem"));
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// `xylem plot sqmr-a.json -o OUT`, ended after 60 s at most (a hang fails the test).
fn plot(out: &Path) -> (Option<i32>, String) {
    let mut child = xylem()
        .args(["plot", &sqmr_json(), "-o"])
        .arg(out)
        .spawn()
        .unwrap();
    let status = hostile::wait_at_most(&mut child, Duration::from_secs(60));
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    let status = status.unwrap_or_else(|| panic!("xylem plot -o {} hung", out.display()));
    (status.code(), stderr)
}

fn folder() -> (tempfile::TempDir, PathBuf, Victim) {
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    let victim = Victim::new(tmp.path());
    (tmp, shared, victim)
}

#[test]
fn links_planted_at_pid_derived_names_are_never_followed() {
    let (_tmp, shared, victim) = folder();
    let names = hostile::next_pids(3000).flat_map(|pid| {
        [
            format!(".plot.svg.tmp.{pid}"),
            format!(".plot.svg.xylem-reservation.tmp.{pid}"),
            format!(".plot.svg.xylem-reservation.stale.{pid}"),
        ]
    });
    let planted = hostile::plant_links(&shared, names, &victim.file());
    assert_eq!(planted, 9000);
    let out = shared.join("plot.svg");
    let (code, stderr) = plot(&out);
    assert_eq!(code, Some(0), "{stderr}");
    victim.assert_untouched();
    let meta = std::fs::symlink_metadata(&out).unwrap();
    assert!(meta.is_file(), "plot.svg is not a regular file: {meta:?}");
    assert!(std::fs::read_to_string(&out).unwrap().contains("<svg"));
    eprintln!("victim checksum after: {}", victim.checksum());
}

#[test]
fn a_link_at_the_output_name_is_refused_and_left() {
    let (_tmp, shared, victim) = folder();
    let out = shared.join("plot.svg");
    std::os::unix::fs::symlink(victim.file(), &out).unwrap();
    let (code, stderr) = plot(&out);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("plot.svg: a symbolic link has that name"),
        "{stderr}"
    );
    victim.assert_untouched();
}

#[test]
fn hostile_reservation_files_end_the_run_at_once() {
    let (_tmp, shared, victim) = folder();
    let out = shared.join("plot.svg");
    let marker = shared.join(".plot.svg.xylem-reservation");
    // A FIFO with no writer: an open for reading would wait forever.
    assert!(Command::new("mkfifo")
        .arg(&marker)
        .status()
        .unwrap()
        .success());
    let (code, stderr) = plot(&out);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("not a regular file but a FIFO"), "{stderr}");
    assert!(stderr.contains(&marker.display().to_string()), "{stderr}");
    std::fs::remove_file(&marker).unwrap();
    // A link to /dev/zero: a read would never end.
    std::os::unix::fs::symlink("/dev/zero", &marker).unwrap();
    let (code, stderr) = plot(&out);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");
    std::fs::remove_file(&marker).unwrap();
    // A sparse file of 2 GiB: a read would take 2 GiB of memory.
    std::fs::File::create(&marker)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let (code, stderr) = plot(&out);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("more than a marker's 4096"), "{stderr}");
    assert!(!out.exists());
    // Each was left as it was.
    assert_eq!(std::fs::metadata(&marker).unwrap().len(), 2 << 30);
    victim.assert_untouched();
}

/// A reservation as a run on another host writes it, its lease renewed `age` ago.
fn foreign_reservation(marker: &Path, age: Duration) {
    let holder = outfile::Holder {
        host: "node-elsewhere".into(),
        pid: 4242,
        lease_s: Some(outfile::owner::LEASE_RENEW_S),
        ..outfile::Holder::this_process()
    };
    std::fs::write(marker, holder.to_text("plot.svg")).unwrap();
    let then = std::time::SystemTime::now() - age;
    std::fs::File::options()
        .write(true)
        .open(marker)
        .unwrap()
        .set_modified(then)
        .unwrap();
}

#[test]
fn a_reservation_from_another_host_expires_with_its_lease() {
    let (_tmp, shared, _victim) = folder();
    let out = shared.join("plot.svg");
    let marker = shared.join(".plot.svg.xylem-reservation");
    // Renewed a minute ago: its run may be alive there, so it stands, and the message
    // says which file to remove.
    foreign_reservation(&marker, Duration::from_secs(60));
    let (code, stderr) = plot(&out);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("node-elsewhere")
            && stderr.contains(&format!("remove {}", marker.display()))
            && stderr.contains("expires"),
        "{stderr}"
    );
    // Last renewed 20 minutes ago: the run is gone, and its reservation is replaced.
    foreign_reservation(&marker, Duration::from_secs(20 * 60));
    let (code, stderr) = plot(&out);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("process 4242 on node-elsewhere, which is gone, is replaced"),
        "{stderr}"
    );
    assert!(out.is_file() && !marker.exists());
}

#[test]
fn every_file_plot_creates_is_created_exclusively() {
    let (_tmp, shared, _victim) = folder();
    let out = shared.join("plot.svg");
    let mut command = xylem();
    command.args(["plot", &sqmr_json(), "-o"]).arg(&out);
    let (output, made) = hostile::creations_in(&command, &shared);
    assert!(output.status.success(), "{output:?}");
    // The reservation's candidate and the picture's temporary file, at least.
    assert!(made.len() >= 2, "{made:#?}");
    let unsafe_: Vec<_> = made.iter().filter(|c| !c.is_exclusive()).collect();
    assert!(
        unsafe_.is_empty(),
        "created without O_EXCL|O_NOFOLLOW: {unsafe_:#?}"
    );
}

/// `xylem place … --out DIR`: it writes DIR/rankfile.txt with `outfile::replace`.
fn place_into(dir: &Path) -> Command {
    let mut command = xylem();
    command
        .args([
            "place",
            "sqmr",
            "--num_cores",
            "2",
            "--num_nbors",
            "1",
            "--core-node",
            "n1",
            "--nodes",
            "n1,n2",
            "--launcher",
            "mpirun",
            "--out",
        ])
        .arg(dir);
    command
}

#[test]
fn a_generated_file_replaces_a_planted_link_not_its_target() {
    let (_tmp, shared, victim) = folder();
    std::os::unix::fs::symlink(victim.file(), shared.join("rankfile.txt")).unwrap();
    let status = place_into(&shared).output().unwrap();
    assert!(status.status.success(), "{status:?}");
    victim.assert_untouched();
    let meta = std::fs::symlink_metadata(shared.join("rankfile.txt")).unwrap();
    assert!(meta.is_file(), "{meta:?}");
    let (output, made) = hostile::creations_in(&place_into(&shared), &shared);
    assert!(output.status.success(), "{output:?}");
    assert!(
        !made.is_empty() && made.iter().all(|c| c.is_exclusive()),
        "{made:#?}"
    );
}
