//! `sqmr --json/--csv` in a folder that a hostile user can write to, as root runs it: links
//! planted at the names a writer used to derive from its PID, a FIFO as the reservation
//! (a whole job used to hang on it), and every file the job creates in the folder traced
//! with `strace -f`. The victim's files must be byte-identical afterwards.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{sqmr, Installation};
use mpitest::hostile::{self, Victim};

const SHORT: [&str; 6] = [
    "--num_iters",
    "40",
    "--max_msgsize",
    "64",
    "--win_size",
    "4",
];

fn outputs(dir: &Path) -> Vec<String> {
    let json = dir.join("s.json").display().to_string();
    let csv = dir.join("s.csv").display().to_string();
    let mut args: Vec<String> = SHORT.iter().map(|s| s.to_string()).collect();
    args.extend(["--json".into(), json, "--csv".into(), csv]);
    args
}

#[test]
fn planted_links_and_a_fifo_cannot_turn_sqmr_against_its_user() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    let victim = Victim::new(tmp.path());
    let names = hostile::next_pids(2000).flat_map(|pid| {
        ["s.json", "s.csv"].into_iter().flat_map(move |n| {
            [
                format!(".{n}.tmp.{pid}"),
                format!(".{n}.xylem-reservation.tmp.{pid}"),
            ]
        })
    });
    assert_eq!(hostile::plant_links(&shared, names, &victim.file()), 8000);
    let args = outputs(&shared);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let job = sqmr(2, &args);
    assert!(job.success(), "{job:#?}");
    victim.assert_untouched();
    for name in ["s.json", "s.csv"] {
        let meta = std::fs::symlink_metadata(shared.join(name)).unwrap();
        assert!(meta.is_file(), "{name}: {meta:?}");
    }
    // A FIFO as the reservation of the next name: every rank leaves at once with the
    // bad-input code, the FIFO named.
    let fifo = shared.join(".t.json.xylem-reservation");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let t = shared.join("t.json").display().to_string();
    let job = sqmr(2, &[&SHORT[..], &["--json", &t]].concat());
    assert_eq!(job.code, Some(2), "{job:#?}");
    assert!(
        job.stderr.contains("not a regular file but a FIFO"),
        "{}",
        job.stderr
    );
    assert!(job.elapsed < Duration::from_secs(60), "{job:#?}");
    victim.assert_untouched();
}

#[test]
fn every_file_sqmr_creates_in_the_output_folder_is_created_exclusively() {
    let tmp = tempfile::tempdir().unwrap();
    let args = outputs(tmp.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let command = mpitest::command(
        Installation::from_env(),
        2,
        Path::new(env!("CARGO_BIN_EXE_sqmr")),
        &args,
        Duration::from_secs(240),
    );
    let lock = mpitest::JobLock::acquire();
    let (output, made) = hostile::creations_in(&command, tmp.path());
    drop(lock);
    assert!(output.status.success(), "{output:?}");
    // The reservations' candidates and a temporary file per version, at least.
    assert!(made.len() >= 4, "{made:#?}");
    let plain: Vec<_> = made.iter().filter(|c| !c.is_exclusive()).collect();
    assert!(
        plain.is_empty(),
        "created without O_EXCL|O_NOFOLLOW: {plain:#?}"
    );
}
