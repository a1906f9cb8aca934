//! SIGINT as a user sends it (Ctrl-C reaches the launcher; `kill -INT` one rank): the job
//! stops on every rank, exits with 128 + 2, says so once, and keeps what was measured.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use mpitest::Installation;

/// The pid of rank `rank` of a running job of `exe`, found by its executable and the
/// launcher's rank variable in its environment.
fn rank_pid(exe: &Path, rank: u32) -> Option<i32> {
    let want = exe.canonicalize().ok()?;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let dir = entry.path();
        if std::fs::read_link(dir.join("exe")).ok().as_deref() != Some(want.as_path()) {
            continue;
        }
        let environ = std::fs::read(dir.join("environ")).unwrap_or_default();
        let is_rank = environ.split(|&b| b == 0).any(|v| {
            let v = String::from_utf8_lossy(v);
            v == format!("OMPI_COMM_WORLD_RANK={rank}") || v == format!("PMI_RANK={rank}")
        });
        if is_rank {
            return Some(pid);
        }
    }
    None
}

fn interrupt_rank_zero(exe: &Path, args: &[&str], json: &Path) -> (Option<i32>, String, f64) {
    let _lock = mpitest::JobLock::acquire();
    let child = mpitest::command(
        Installation::from_env(),
        2,
        exe,
        args,
        Duration::from_secs(120),
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Wait until the run is under way (its JSON exists), then interrupt rank 0.
    let start = Instant::now();
    while !json.exists() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    let pid = rank_pid(exe, 0).expect("rank 0 is running");
    let sent = Instant::now();
    std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        sent.elapsed().as_secs_f64(),
    )
}

fn sibling(name: &str) -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_sqmr")).with_file_name(name)
}

#[test]
fn sigint_to_rank_0_stops_sqmr_with_130_and_keeps_the_json() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("rates.json");
    let json_arg = json.display().to_string();
    let exe = Path::new(env!("CARGO_BIN_EXE_sqmr"));
    let (code, stderr, seconds) = interrupt_rank_zero(
        exe,
        &[
            "--num_iters",
            "200000",
            "--max_msgsize",
            "64",
            "--json",
            &json_arg,
        ],
        &json,
    );
    assert_eq!(code, Some(130), "{stderr}");
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("interrupted by SIGINT"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["complete"], false, "{doc}");
    eprintln!("sqmr: SIGINT to rank 0 -> exit 130 after {seconds:.1} s");
}

#[test]
fn sigint_to_rank_0_stops_b_eff_io_with_130_keeping_only_what_was_measured() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("io.json");
    let reservation = dir.path().join(".io.json.xylem-reservation");
    let path = dir.path().display().to_string();
    let json_arg = json.display().to_string();
    let exe = sibling("b_eff_io");
    let (code, stderr, seconds) = interrupt_rank_zero(
        &exe,
        &[
            "-T",
            "60",
            "-p",
            &path,
            "--memory-per-process",
            "16M",
            "--json",
            &json_arg,
        ],
        &reservation,
    );
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("interrupted by signal 2"), "{stderr}");
    // No run directory, no reservation: at most the JSON of the patterns measured
    // before the signal, saying why it stopped.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        left.is_empty() || left == [json.file_name().unwrap()],
        "left behind: {left:?}"
    );
    if let Ok(text) = std::fs::read_to_string(&json) {
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        mpitest::schema::assert_matches_schema(&doc);
        assert_eq!(doc["complete"], false, "{text}");
        assert!(
            doc["stopped"]
                .as_str()
                .is_some_and(|s| s.contains("interrupted by signal 2")),
            "{text}"
        );
    }
    eprintln!("b_eff_io: SIGINT to rank 0 -> exit 130 after {seconds:.1} s");
}
