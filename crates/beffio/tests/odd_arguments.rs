//! Arguments as a user's shell may give them: paths that are not UTF-8 work (MPI-IO gets
//! their bytes), for `-p` and for the output files, in b_eff_io and sqmr.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use mpitest::Installation;

#[test]
fn paths_that_are_not_utf8_work() {
    let _lock = mpitest::JobLock::acquire();
    let base = tempfile::tempdir().unwrap();
    let odd = base.path().join(OsStr::from_bytes(b"bad\xffutf8"));
    std::fs::create_dir(&odd).unwrap();
    let json = odd.join(OsStr::from_bytes(b"out\xfe.json"));
    let exe = Path::new(env!("CARGO_BIN_EXE_b_eff_io"));
    let output = mpitest::command(
        Installation::from_env(),
        2,
        exe,
        &["-T", "2", "--memory-per-process", "8M"],
        Duration::from_secs(120),
    )
    .arg("-p")
    .arg(&odd)
    .arg("--json")
    .arg(&json)
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(
        doc["b_eff_io_mb_s"].as_f64().is_some_and(|b| b > 0.0),
        "{doc}"
    );
    // Only the JSON is left: the run directory went away.
    let left: Vec<_> = std::fs::read_dir(&odd)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, [json.file_name().unwrap()], "{left:?}");

    let sqmr = exe.with_file_name("sqmr");
    let sqmr_json = odd.join(OsStr::from_bytes(b"rates\xfd.json"));
    let output = mpitest::command(
        Installation::from_env(),
        2,
        &sqmr,
        &["--num_iters", "5", "--max_msgsize", "8"],
        Duration::from_secs(120),
    )
    .arg("--json")
    .arg(&sqmr_json)
    .output()
    .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&sqmr_json).unwrap()).unwrap();
    assert_eq!(doc["complete"], true, "{doc}");
}
