//! `b_eff_io`'s output files (`--json`, `--csv`, `--prefix`) and standard output as a user
//! hits their faults: SIGKILL of a rank, a full disk, a name in use, standard output on
//! `/dev/full` or a closed pipe. One job at a time, each with a time limit.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mpitest::{Installation, Job};

const BIN: &str = env!("CARGO_BIN_EXE_b_eff_io");

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("beffio-out-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn b_eff_io(ranks: usize, args: &[&str]) -> Job {
    let job = mpitest::launch(
        Installation::from_env(),
        ranks,
        Path::new(BIN),
        args,
        Duration::from_secs(120),
    );
    assert!(!job.timed_out, "{args:?} hit the time limit: {job:#?}");
    job
}

/// `b_eff_io args`, each rank started by `bash -c script b_eff_io args...`, so that the
/// ranks' own standard output can be pointed somewhere (the launcher's is not theirs).
fn wrapped(ranks: usize, script: &str, args: &[&str]) -> Job {
    let mut all = vec!["-c", script, BIN];
    all.extend_from_slice(args);
    let job = mpitest::launch(
        Installation::from_env(),
        ranks,
        Path::new("/bin/bash"),
        &all,
        Duration::from_secs(120),
    );
    assert!(!job.timed_out, "{args:?} hit the time limit: {job:#?}");
    job
}

const TO_DEV_FULL: &str = r#"exec "$0" "$@" >/dev/full"#;
const TO_CLOSED_PIPE: &str = r#"set -o pipefail; "$0" "$@" | true"#;

fn visible(dir: &Path) -> Vec<String> {
    mpitest::dir_entries(dir)
        .into_iter()
        .filter(|n| !n.starts_with('.'))
        .collect()
}

/// A short run's options with its scratch path and the four output files in `out`.
fn run_args<'a>(t: &'a str, path: &'a str, out: &'a [String; 3]) -> Vec<&'a str> {
    vec![
        "-T",
        t,
        "-p",
        path,
        "--memory-per-process",
        "256M",
        "--json",
        &out[0],
        "--csv",
        &out[1],
        "--prefix",
        &out[2],
    ]
}

fn outputs_in(dir: &Path) -> [String; 3] {
    ["r.json", "r.csv", "r"].map(|n| dir.join(n).display().to_string())
}

#[test]
fn a_killed_run_leaves_no_empty_files_and_the_next_run_replaces_its_reservations() {
    let path = scratch("kill-path");
    let out = scratch("kill-out");
    let files = outputs_in(&out);
    let marker = out.join(".r.json.xylem-reservation");
    let lock = mpitest::JobLock::acquire();
    let child = mpitest::command(
        Installation::from_env(),
        2,
        Path::new(BIN),
        &run_args("60", path.to_str().unwrap(), &files),
        Duration::from_secs(120),
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Wait until the run is under way: reservations made, files in the run directory.
    let start = Instant::now();
    let running = || {
        marker.exists()
            && mpitest::dir_entries(&path)
                .iter()
                .any(|d| !mpitest::dir_entries(&path.join(d)).is_empty())
    };
    while !running() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SIGKILL rank 0, which holds the reservations: its process id is in them.
    let holder = outfile::Holder::parse(&std::fs::read_to_string(&marker).unwrap()).unwrap();
    let killed = Command::new("kill")
        .args(["-KILL", &holder.pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let killed_out = child.wait_with_output().unwrap();
    assert!(!killed_out.status.success());
    drop(lock);
    // No empty file: the hidden reservations say who held them, and the visible files
    // (if a pattern was measured before the kill) are whole versions of what was.
    for name in mpitest::dir_entries(&out) {
        let len = std::fs::metadata(out.join(&name)).unwrap().len();
        assert!(len > 0, "{name} is empty");
    }
    let kept = visible(&out);
    if !kept.is_empty() {
        assert_eq!(kept, ["r.csv", "r.json", "r.prot", "r.sum"]);
        let text = std::fs::read_to_string(&files[0]).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        mpitest::schema::assert_matches_schema(&doc);
        assert_eq!(doc["complete"], false, "{text}");
        // The user keeps them elsewhere before running again under the same names.
        for name in &kept {
            std::fs::remove_file(out.join(name)).unwrap();
        }
    }
    // The next run with the same names: accepted, and says so for each file.
    let _ = std::fs::remove_dir_all(&path);
    std::fs::create_dir_all(&path).unwrap();
    let job = b_eff_io(2, &run_args("1", path.to_str().unwrap(), &files));
    assert!(job.success(), "{job:#?}");
    let notices: Vec<&str> = job
        .stderr
        .lines()
        .filter(|l| l.contains("which is gone, is replaced"))
        .collect();
    let expected: Vec<String> = [
        ("--json", &files[0]),
        ("--csv", &files[1]),
        ("--prefix", &format!("{}.sum", files[2])),
        ("--prefix", &format!("{}.prot", files[2])),
    ]
    .iter()
    .map(|(option, file)| {
        format!(
            "b_eff_io: warning: {option}: a reservation of {file} by process {} on {}, \
             which is gone, is replaced",
            holder.pid, holder.host
        )
    })
    .collect();
    assert_eq!(notices, expected, "{}", job.stderr);
    assert_eq!(
        mpitest::dir_entries(&out),
        ["r.csv", "r.json", "r.prot", "r.sum"]
    );
    let doc: serde_json::Value = mpitest::read_document(Path::new(&files[0]));
    assert_eq!(doc["benchmark"], "b_eff_io");
    // Every CSV row ends with the run's id (the JSON's), rank 0's host, MPI and date.
    let csv = std::fs::read_to_string(&files[1]).unwrap();
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .ends_with(",errors,run_id,host,mpi,date"));
    let p = &doc["provenance"];
    let tail = format!(
        ",{},{},",
        p["run_id"].as_str().unwrap(),
        p["hosts"][0]["name"].as_str().unwrap()
    );
    let started = format!(",{}", p["started"].as_str().unwrap());
    let rows: Vec<&str> = lines.collect();
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .all(|r| r.contains(&tail) && r.ends_with(&started) && r.split(',').count() == 19),
        "{csv}"
    );
    std::fs::remove_dir_all(&path).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn an_existing_output_file_refuses_the_run_with_exit_2() {
    let path = scratch("exists-path");
    let out = scratch("exists-out");
    let files = outputs_in(&out);
    std::fs::write(&files[1], "precious").unwrap();
    let job = b_eff_io(2, &run_args("1", path.to_str().unwrap(), &files));
    assert_eq!(job.code, Some(2), "{job:#?}");
    let errors: Vec<&str> = mpitest::program_lines(&job.stderr)
        .into_iter()
        .filter(|l| l.contains("error"))
        .collect();
    assert_eq!(
        errors,
        [format!(
            "b_eff_io: error: --csv {}: the file exists; it is never overwritten, so remove \
             it or choose another name",
            files[1]
        )],
        "{}",
        job.stderr
    );
    assert_eq!(std::fs::read_to_string(&files[1]).unwrap(), "precious");
    // The --json reservation was let go; no run directory was made.
    assert_eq!(mpitest::dir_entries(&out), ["r.csv"]);
    assert!(mpitest::dir_entries(&path).is_empty());
    std::fs::remove_dir_all(&path).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
}

/// A run refused at its start, in its reservations (`PREFIX.prot` is a folder: exit 2)
/// or after them (a `--path` that is not there: exit 1), leaves an earlier `PREFIX.sum`
/// where it was, byte for byte, and says nothing of keeping it; `-f DIR/` (which would
/// write the hidden `DIR/.sum`) is refused with exit 2, naming the prefix that would do.
#[test]
fn a_refused_run_leaves_an_earlier_sum_in_place_and_says_nothing_of_it() {
    let path = scratch("refused-path");
    let out = scratch("refused-out");
    let prefix = out.join("p");
    let sum = out.join("p.sum");
    let earlier = "earlier summary\n".repeat(100);
    std::fs::write(&sum, &earlier).unwrap();
    let unchanged = |what: &str, job: &Job| {
        assert_eq!(std::fs::read_to_string(&sum).unwrap(), earlier, "{what}");
        assert!(
            !job.stderr.contains("kept as") && !job.stderr.contains("this run writes"),
            "{what}: {}",
            job.stderr
        );
    };
    std::fs::create_dir(out.join("p.prot")).unwrap();
    let args = [
        "-T",
        "1",
        "-p",
        path.to_str().unwrap(),
        "-f",
        prefix.to_str().unwrap(),
    ];
    let job = b_eff_io(2, &args);
    assert_eq!(job.code, Some(2), "{job:#?}");
    assert!(
        job.stderr
            .contains(&format!("{}: ", out.join("p.prot").display())),
        "{}",
        job.stderr
    );
    unchanged("a folder as PREFIX.prot", &job);
    assert_eq!(mpitest::dir_entries(&out), ["p.prot", "p.sum"]);
    std::fs::remove_dir(out.join("p.prot")).unwrap();
    let gone = path.join("gone");
    let args = [
        "-T",
        "1",
        "-p",
        gone.to_str().unwrap(),
        "-f",
        prefix.to_str().unwrap(),
    ];
    let job = b_eff_io(2, &args);
    assert_eq!(job.code, Some(1), "{job:#?}");
    assert!(
        job.stderr.contains(gone.to_str().unwrap()),
        "{}",
        job.stderr
    );
    unchanged("a --path that is not there", &job);
    assert_eq!(mpitest::dir_entries(&out), ["p.sum"]);
    // A prefix that names a folder.
    let folder = format!("{}/", out.display());
    let job = b_eff_io(2, &["-T", "1", "-p", path.to_str().unwrap(), "-f", &folder]);
    assert_eq!(job.code, Some(2), "{job:#?}");
    assert!(
        job.stderr.contains(&format!(
            "'{folder}' names a folder, not the start of a file name"
        )) && job.stderr.contains(&format!("{}/b_eff_io", out.display())),
        "{}",
        job.stderr
    );
    assert_eq!(mpitest::dir_entries(&out), ["p.sum"]);
    assert!(mpitest::dir_entries(&path).is_empty());
    std::fs::remove_dir_all(&path).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
}

/// A 64 KiB tmpfs filled but for `free_pages` pages of 4 KiB; `None` (after saying
/// `SKIPPED`, or failing under `CI=true`) where it cannot be mounted.
fn full_tmpfs(name: &str, free_pages: usize) -> Option<PathBuf> {
    let dir = scratch(name);
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&dir)
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        let _ = std::fs::remove_dir(&dir);
        mpitest::unavailable(&format!(
            "cannot mount a tmpfs at {} (needs root)",
            dir.display()
        ));
        return None;
    }
    std::fs::write(dir.join("filler"), vec![0u8; (16 - free_pages) * 4096]).unwrap();
    Some(dir)
}

fn umount(dir: &Path) {
    let _ = Command::new("umount").arg(dir).status();
    let _ = std::fs::remove_dir(dir);
}

#[test]
fn an_output_file_on_a_full_disk_is_absent_not_partial() {
    // Room for the reservation, not for the document.
    let Some(full) = full_tmpfs("full-out", 1) else {
        return;
    };
    let path = scratch("full-path");
    let json = full.join("r.json");
    let job = b_eff_io(
        2,
        &[
            "-T",
            "1",
            "-p",
            path.to_str().unwrap(),
            "--memory-per-process",
            "256M",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let left = mpitest::dir_entries(&full);
    umount(&full);
    assert_eq!(job.code, Some(1), "{job:#?}");
    assert_eq!(
        mpitest::program_lines(&job.stderr)
            .into_iter()
            .filter(|l| l.contains("error"))
            .collect::<Vec<_>>(),
        [format!(
            "b_eff_io: error: --json {}: cannot write it: No space left on device",
            json.display()
        )],
        "{}",
        job.stderr
    );
    // The table still went to standard output.
    assert!(job.stdout.contains("b_eff_io = "), "{}", job.stdout);
    assert_eq!(left, ["filler"]);
    assert!(mpitest::dir_entries(&path).is_empty());
    std::fs::remove_dir_all(&path).unwrap();
}

#[test]
fn stdout_on_a_full_device_stops_every_rank_with_one_line() {
    let path = scratch("devfull-path");
    let out = scratch("devfull-out");
    let files = outputs_in(&out);
    let job = wrapped(
        2,
        TO_DEV_FULL,
        &run_args("1", path.to_str().unwrap(), &files),
    );
    assert_eq!(job.code, Some(1), "{job:#?}");
    assert_eq!(
        mpitest::program_lines(&job.stderr),
        ["b_eff_io: error: cannot write to standard output: No space left on device"],
        "{}",
        job.stderr
    );
    // Nothing left: no output file, no reservation, no run directory.
    assert!(mpitest::dir_entries(&out).is_empty());
    assert!(mpitest::dir_entries(&path).is_empty());
    std::fs::remove_dir_all(&path).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_closed_stdout_pipe_stops_every_rank_quietly() {
    let path = scratch("pipe-path");
    // The .sum and .prot in a folder of their own: no earlier ones to keep and say so.
    let out = scratch("pipe-out");
    let prefix = out.join("b_eff_io");
    let job = wrapped(
        2,
        TO_CLOSED_PIPE,
        &[
            "-T",
            "1",
            "-p",
            path.to_str().unwrap(),
            "--memory-per-process",
            "256M",
            "-f",
            prefix.to_str().unwrap(),
        ],
    );
    assert_eq!(job.code, Some(141), "{job:#?}");
    assert!(
        mpitest::program_lines(&job.stderr).is_empty(),
        "{}",
        job.stderr
    );
    assert!(mpitest::dir_entries(&path).is_empty());
    std::fs::remove_dir_all(&path).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn help_on_a_full_device_or_a_closed_pipe() {
    let job = wrapped(1, TO_DEV_FULL, &["--help"]);
    assert_eq!(job.code, Some(1), "{job:#?}");
    assert_eq!(
        mpitest::program_lines(&job.stderr),
        ["b_eff_io: error: cannot write to standard output: No space left on device"],
        "{}",
        job.stderr
    );
    let job = wrapped(2, TO_CLOSED_PIPE, &["--version"]);
    assert_eq!(job.code, Some(141), "{job:#?}");
    assert!(
        mpitest::program_lines(&job.stderr).is_empty(),
        "{}",
        job.stderr
    );
}
