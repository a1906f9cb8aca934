//! `sqmr --json/--csv` when another user planted a link as a *parent* folder in a shared
//! folder (`ln -s ~bob/job /shared/place`) and root names a path through it: refused at
//! once with the bad-input code and a message naming the link, its owner and the folder;
//! the victim's files stay byte-identical. Needs root (to make a link of `nobody`):
//! elsewhere the test says `SKIPPED`, and under `CI=true` it fails.

mod common;

use std::os::unix::fs::lchown;

use common::sqmr;
use mpitest::hostile::{self, Victim};

use hostile::NOBODY;

#[test]
fn outputs_through_a_planted_link_are_refused() {
    if !hostile::is_root() {
        mpitest::unavailable("a link of another user needs root to make (chown to nobody)");
        return;
    }
    for mode in [0o1777, 0o777] {
        let tmp = tempfile::tempdir().unwrap();
        let victim = Victim::new(tmp.path());
        lchown(&victim.dir, Some(NOBODY), Some(NOBODY)).unwrap();
        let shared = hostile::shared_folder(tmp.path(), mode);
        let place = hostile::plant_parent(&shared, &victim.dir, NOBODY);
        for option in ["--json", "--csv"] {
            let out = place.join("s.out").display().to_string();
            let job = sqmr(
                2,
                &["--num_iters", "40", "--max_msgsize", "64", option, &out],
            );
            assert_eq!(job.code, Some(2), "mode {mode:o}, {option}: {job:#?}");
            let said = format!(
                "{} is a symbolic link owned by nobody (uid 65534) in {}, a folder of root \
                 (uid 0) that others can write (mode {mode:04o})",
                place.display(),
                shared.display()
            );
            let lines: Vec<&str> = mpitest::program_lines(&job.stderr)
                .into_iter()
                .filter(|l| l.contains(&said))
                .collect();
            assert_eq!(
                lines.len(),
                1,
                "{option}: {said:?} not once in {}",
                job.stderr
            );
            assert!(
                lines[0].starts_with(&format!("ERROR {option} {out}: cannot create it: ")),
                "{}",
                lines[0]
            );
            assert!(!job.stdout.contains("msgsize"), "{}", job.stdout);
            victim.assert_untouched();
        }
    }
}
