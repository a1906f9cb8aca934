//! `sqmr`'s output files and standard output as a user hits their faults: SIGKILL mid-run,
//! a full disk, a reservation of another run, standard output on `/dev/full` or a closed
//! pipe.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{parse, sqmr, Installation, Job, Tmpfs};

const SHORT: [&str; 6] = [
    "--num_iters",
    "60",
    "--max_msgsize",
    "256",
    "--win_size",
    "4",
];

/// `sqmr args` on `ranks` ranks, each started by `bash -c script sqmr args...`, so that
/// the ranks' own standard output can be pointed somewhere (the launcher's is not theirs).
fn wrapped(ranks: usize, script: &str, args: &[&str]) -> Job {
    let mut all = vec!["-c", script, env!("CARGO_BIN_EXE_sqmr")];
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

/// The ranks' standard output is the full device.
const TO_DEV_FULL: &str = r#"exec "$0" "$@" >/dev/full"#;
/// The ranks' standard output is a pipe whose reader has gone; bash's exit status is
/// sqmr's.
const TO_CLOSED_PIPE: &str = r#"set -o pipefail; "$0" "$@" | true"#;

/// The lines of the job's own standard error (the launcher's banners and teardown lines
/// left out, [`mpitest::program_lines`]) that contain `needle`.
fn lines_with<'a>(text: &'a str, needle: &str) -> Vec<&'a str> {
    mpitest::program_lines(text)
        .into_iter()
        .filter(|l| l.contains(needle))
        .collect()
}

fn read_json(path: &Path) -> serde_json::Value {
    mpitest::read_document(path)
}

#[test]
fn a_full_disk_keeps_the_last_complete_json_and_fails() {
    // Room for the reservation, one version and one new version of up to 8 KiB each (the
    // document of one size is 4.3 KB under MPICH, whose version string is long, and grows
    // by about 1.6 KB a size): the JSON outgrows it after a few sizes of the 18.
    let Some(fs) = Tmpfs::with_free_pages("full", 5) else {
        return;
    };
    let json = fs.dir.join("run.json");
    let mut args = SHORT.to_vec();
    args[3] = "64K";
    args.extend(["--json", json.to_str().unwrap()]);
    let job = sqmr(2, &args);
    let left = mpitest::dir_entries(&fs.dir);
    let doc = json.exists().then(|| read_json(&json));
    drop(fs);
    assert_eq!(job.code, Some(1), "{job:#?}");
    let errors = lines_with(&job.stderr, "ERROR");
    assert_eq!(errors.len(), 1, "{}", job.stderr);
    assert!(
        errors[0].starts_with("ERROR --json ")
            && errors[0].contains("cannot write it: No space left on device")
            && errors[0].contains("keeps its last complete version"),
        "{}",
        errors[0]
    );
    // The reservation is gone, and no temporary file is left: only the last version.
    assert_eq!(left, ["filler", "run.json"]);
    let doc = doc.unwrap();
    assert_eq!(doc["complete"], false);
    let sizes = doc["sizes"].as_array().unwrap().len();
    assert!((1..17).contains(&sizes), "{sizes} sizes");
    // The table stops where the file does.
    assert_eq!(parse(&job.stdout).rows.len(), sizes, "{}", job.stdout);
}

#[test]
fn a_killed_run_leaves_no_json_or_a_complete_one() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let marker = dir.path().join(".run.json.xylem-reservation");
    let sqmr = Path::new(env!("CARGO_BIN_EXE_sqmr"));
    let args = [
        "--num_iters",
        "2000",
        "--win_size",
        "4",
        "--json",
        json.to_str().unwrap(),
    ];
    let _lock = mpitest::JobLock::acquire();
    let child = mpitest::command(
        Installation::from_env(),
        2,
        sqmr,
        &args,
        Duration::from_secs(120),
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Read it while it is being rewritten: every version a reader sees is complete.
    let start = Instant::now();
    let mut reads = 0;
    loop {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no JSON with 4 sizes after {reads} reads"
        );
        if let Ok(text) = std::fs::read_to_string(&json) {
            let doc: serde_json::Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("a reader saw an incomplete version ({e}):\n{text}"));
            mpitest::schema::assert_matches_schema(&doc);
            reads += 1;
            if doc["sizes"].as_array().unwrap().len() >= 4 {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    // SIGKILL rank 0, the writer: its process id is in the reservation.
    let holder = outfile::Holder::parse(&std::fs::read_to_string(&marker).unwrap()).unwrap();
    let killed = Command::new("kill")
        .args(["-KILL", &holder.pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success(), "{:?}", out.status);
    // The file is one complete version, never cut short.
    let doc = read_json(&json);
    assert_eq!(doc["complete"], false);
    assert!(doc["sizes"].as_array().unwrap().len() >= 4);
    // The visible files: only the JSON (a killed run's reservation and unfinished
    // version are hidden, and replaced by the next run that reserves the name).
    let visible: Vec<String> = mpitest::dir_entries(dir.path())
        .into_iter()
        .filter(|n| !n.starts_with('.'))
        .collect();
    assert_eq!(visible, ["run.json"]);
    drop(_lock);
    // The next run with the same name is refused: the file exists (exit 2).
    let job = common::sqmr(
        2,
        &[&SHORT[..], &["--json", json.to_str().unwrap()]].concat(),
    );
    assert_eq!(job.code, Some(2), "{job:#?}");
    assert_eq!(
        lines_with(&job.stderr, "the file exists").len(),
        1,
        "{}",
        job.stderr
    );
    assert_eq!(read_json(&json), doc);
}

#[test]
fn an_output_name_that_is_not_a_new_file_is_named_for_what_it_is() {
    // A directory, a device and `-` (standard output elsewhere): each refused at once
    // with exit 2 and one line on every rank's behalf saying what has the name; nothing
    // named `-` is created.
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (dir.path().to_str().unwrap(), "a directory has that name"),
        ("/dev/null", "a character device has that name"),
        ("-", "-: output goes to files only, not to standard output"),
    ];
    // The ranks run in the folder, where a file `-` would appear.
    let script = format!(r#"cd '{}' && exec "$0" "$@""#, dir.path().display());
    for (target, said) in cases {
        let job = wrapped(2, &script, &[&SHORT[..], &["--json", target]].concat());
        assert_eq!(job.code, Some(2), "{target}: {job:#?}");
        assert_eq!(lines_with(&job.stderr, said).len(), 1, "{}", job.stderr);
        assert!(!job.stdout.contains("msgsize"), "{target}: {}", job.stdout);
    }
    assert!(mpitest::dir_entries(dir.path()).is_empty());
}

/// A reservation file as a process `pid` of this host would have left it.
fn reservation_of(pid: u32, name: &str) -> String {
    let holder = outfile::Holder {
        pid,
        process_start: None,
        ..outfile::Holder::this_process()
    };
    holder.to_text(name)
}

#[test]
fn a_stale_reservation_is_replaced_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    // A process that has come and gone.
    let mut gone = Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    std::fs::write(
        dir.path().join(".r.json.xylem-reservation"),
        reservation_of(pid, "r.json"),
    )
    .unwrap();
    let job = sqmr(
        2,
        &[&SHORT[..], &["--json", json.to_str().unwrap()]].concat(),
    );
    assert!(job.success(), "{job:#?}");
    let notice = lines_with(&job.stderr, "which is gone, is replaced");
    assert_eq!(
        notice,
        [format!(
            "WARNING --json: a reservation of {} by process {pid} on {}, which is gone, is replaced",
            json.display(),
            outfile::Holder::this_process().host
        )],
        "{}",
        job.stderr
    );
    assert_eq!(read_json(&json)["complete"], true);
    assert_eq!(mpitest::dir_entries(dir.path()), ["r.json"]);
}

#[test]
fn a_live_reservation_refuses_the_run_naming_the_other_process() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let json = dir.path().join("r.json");
    let mut other = Command::new("sleep").arg("120").spawn().unwrap();
    let marker = dir.path().join(".r.csv.xylem-reservation");
    std::fs::write(&marker, reservation_of(other.id(), "r.csv")).unwrap();
    let job = sqmr(
        2,
        &[
            &SHORT[..],
            &[
                "--json",
                json.to_str().unwrap(),
                "--csv",
                csv.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    let pid = other.id();
    other.kill().unwrap();
    other.wait().unwrap();
    assert_eq!(job.code, Some(2), "{job:#?}");
    let errors = lines_with(&job.stderr, "ERROR");
    assert_eq!(errors.len(), 1, "{}", job.stderr);
    assert!(
        errors[0].starts_with("ERROR --csv ")
            && errors[0].contains("another run is writing it")
            && errors[0].contains(&format!("process {pid} ")),
        "{}",
        errors[0]
    );
    // Nothing ran, and the --json reservation was let go again.
    assert_eq!(job.stdout, "");
    assert_eq!(
        mpitest::dir_entries(dir.path()),
        [".r.csv.xylem-reservation"]
    );
}

#[test]
fn stdout_on_a_full_device_stops_every_rank_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let job = wrapped(
        2,
        TO_DEV_FULL,
        &[&SHORT[..], &["--json", json.to_str().unwrap()]].concat(),
    );
    assert_eq!(job.code, Some(1), "{job:#?}");
    assert_eq!(
        mpitest::program_lines(&job.stderr),
        ["ERROR cannot write to standard output: No space left on device"],
        "{}",
        job.stderr
    );
    // The JSON it had begun stays valid, marked incomplete.
    assert_eq!(read_json(&json)["complete"], false);
    assert_eq!(mpitest::dir_entries(dir.path()), ["r.json"]);
}

#[test]
fn a_closed_stdout_pipe_stops_every_rank_quietly() {
    let job = wrapped(2, TO_CLOSED_PIPE, &SHORT);
    assert_eq!(job.code, Some(141), "{job:#?}");
    assert!(
        mpitest::program_lines(&job.stderr).is_empty(),
        "{}",
        job.stderr
    );
}

#[test]
fn help_on_a_full_device_or_a_closed_pipe() {
    let job = wrapped(1, TO_DEV_FULL, &["--help"]);
    assert_eq!(job.code, Some(1), "{job:#?}");
    assert_eq!(
        mpitest::program_lines(&job.stderr),
        ["ERROR cannot write to standard output: No space left on device"],
        "{}",
        job.stderr
    );
    let job = wrapped(1, TO_CLOSED_PIPE, &["--version"]);
    assert_eq!(job.code, Some(141), "{job:#?}");
    assert!(
        mpitest::program_lines(&job.stderr).is_empty(),
        "{}",
        job.stderr
    );
}
