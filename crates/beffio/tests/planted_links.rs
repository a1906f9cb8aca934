//! `b_eff_io` when another user planted a link as a *parent* folder in a shared folder
//! (`ln -s ~bob/job /shared/place`) and root names a path through it: the run directory's
//! base (`-p`), `--json`, `--csv`, `--prefix` and `--clean`. Each is refused at once with
//! a message naming the link, its owner and the folder, and the victim's files stay
//! byte-identical. Needs root (to make a link of `nobody`): elsewhere the test says
//! `SKIPPED`, and under `CI=true` it fails.

use std::os::unix::fs::{lchown, symlink};
use std::path::{Path, PathBuf};
use std::time::Duration;

use beffio::run::rundir::{host_name, OWNER_FILE};
use mpitest::hostile::{self, Victim};
use mpitest::Installation;

const BIN: &str = env!("CARGO_BIN_EXE_b_eff_io");
use hostile::NOBODY;
/// A run directory of the victim's, left by a process that is gone.
const RUN: &str = "b_eff_io.20200101T000000.1";

/// `tmp/shared` (mode `mode`, root's), `tmp/real` (root's, 0700, for what is not under
/// test), the victim's folder (nobody's), and `tmp/shared/place`, nobody's link to it.
fn planted(mode: u32) -> Option<(tempfile::TempDir, PathBuf, PathBuf, Victim)> {
    if !hostile::is_root() {
        mpitest::unavailable("a link of another user needs root to make (chown to nobody)");
        return None;
    }
    let tmp = tempfile::tempdir().unwrap();
    // Among the victim's files, a run directory of theirs whose process is gone: what
    // `--clean` removes when it reaches it.
    let run = tmp.path().join("victim").join(RUN);
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(
        run.join(OWNER_FILE),
        format!(
            "b_eff_io run directory\npid=999999\nhost={}\nuid={NOBODY}\n",
            host_name()
        ),
    )
    .unwrap();
    std::fs::write(run.join("type0"), vec![7u8; 4096]).unwrap();
    for path in [run.join(OWNER_FILE), run.join("type0"), run] {
        lchown(&path, Some(NOBODY), Some(NOBODY)).unwrap();
    }
    let victim = Victim::new(tmp.path());
    lchown(&victim.dir, Some(NOBODY), Some(NOBODY)).unwrap();
    let shared = hostile::shared_folder(tmp.path(), mode);
    let place = hostile::plant_parent(&shared, &victim.dir, NOBODY);
    let real = tmp.path().join("real");
    std::fs::create_dir(&real).unwrap();
    Some((tmp, place, real, victim))
}

#[test]
fn every_path_through_a_planted_link_is_refused() {
    for mode in [0o1777, 0o777] {
        let Some((_tmp, place, real, victim)) = planted(mode) else {
            return;
        };
        let at = |dir: &Path, name: &str| dir.join(name).display().to_string();
        let real_s = real.display().to_string();
        let place_s = place.display().to_string();
        let cases: [(&str, Vec<String>); 4] = [
            ("-p", vec!["-p".into(), place_s.clone()]),
            (
                "--json",
                vec![
                    "-p".into(),
                    real_s.clone(),
                    "--json".into(),
                    at(&place, "r.json"),
                ],
            ),
            (
                "--csv",
                vec![
                    "-p".into(),
                    real_s.clone(),
                    "--csv".into(),
                    at(&place, "r.csv"),
                ],
            ),
            (
                "--prefix",
                vec![
                    "-p".into(),
                    real_s.clone(),
                    "--prefix".into(),
                    at(&place, "r"),
                ],
            ),
        ];
        for (option, mut args) in cases {
            args.extend(["-T", "4", "--memory-per-process", "16M"].map(String::from));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let job = mpitest::launch(
                Installation::from_env(),
                2,
                Path::new(BIN),
                &args,
                Duration::from_secs(120),
            );
            assert!(!job.timed_out, "{option}: {job:#?}");
            // Bad input, as the exit-code table has it, on every path.
            assert_eq!(job.code, Some(2), "mode {mode:o}, {option}: {job:#?}");
            let said = format!(
                "{} is a symbolic link owned by nobody (uid 65534) in {}, a folder of root \
                 (uid 0) that others can write (mode {mode:04o})",
                place.display(),
                place.parent().unwrap().display()
            );
            assert!(
                job.stderr.contains(&said),
                "{option}: {said:?} not in {}",
                job.stderr
            );
            assert!(
                job.stderr
                    .contains("give a real directory, or a link owned by you or by root"),
                "{}",
                job.stderr
            );
            // Refused before the run: no pattern ran.
            assert!(job.elapsed < Duration::from_secs(30), "{option}: {job:#?}");
            eprintln!("mode {mode:o}, {option}: exit {:?}", job.code);
            victim.assert_untouched();
        }
        // Nothing was made in the real folder either (no run directory of a refused run).
        assert!(
            mpitest::dir_entries(&real).is_empty(),
            "{:?}",
            mpitest::dir_entries(&real)
        );
    }
}

/// The victim's stale run directory behind the planted link: `--clean` would remove it if
/// it followed the link.
fn clean(place: &Path) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(BIN)
        .arg("--clean")
        .arg(place)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn clean_through_a_planted_link_is_refused() {
    let Some((_tmp, place, _real, victim)) = planted(0o1777) else {
        return;
    };
    let (code, stdout, stderr) = clean(&place);
    assert_eq!(code, Some(2), "bad input: {stdout} {stderr}");
    assert!(
        stderr.contains(&format!(
            "{} is a symbolic link owned by nobody (uid 65534)",
            place.display()
        )),
        "{stderr}"
    );
    assert!(!stdout.contains("removed '"), "{stdout}");
    victim.assert_untouched();
    // The same link made by root is root's to follow: the stale run directory goes (so
    // the refusal above is the rule's, not a marker this test got wrong).
    std::fs::remove_file(&place).unwrap();
    symlink(&victim.dir, &place).unwrap();
    let (code, stdout, stderr) = clean(&place);
    assert_eq!(code, Some(0), "{stdout} {stderr}");
    assert!(!victim.dir.join(RUN).exists(), "{stdout} {stderr}");
}
