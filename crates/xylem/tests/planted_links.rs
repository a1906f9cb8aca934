//! `xylem`'s writers when another user planted a link as a *parent* folder in a shared
//! folder (`ln -s ~bob/job /shared/place`) and root names a path through it: `xylem place
//! --out`, `xylem plot -o … --force`, `xylem gen completions|man`. Each is refused with
//! a message naming the link, and the victim's files stay byte-identical; a link of the
//! caller's own is still followed. Needs root (to make files of `nobody`): elsewhere the
//! tests say `SKIPPED`, and under `CI=true` they fail.

use std::os::unix::fs::{lchown, symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use mpitest::hostile::{self, Victim};

use hostile::NOBODY;

/// A shared folder (`mode`, root's) and, beside it, the victim's folder (nobody's, with
/// `plot.svg` among its files); `None` after `SKIPPED` where this process is not root.
fn shared(mode: u32) -> Option<(tempfile::TempDir, PathBuf, Victim)> {
    if !hostile::is_root() {
        mpitest::unavailable("a link of another user needs root to make (chown to nobody)");
        return None;
    }
    let tmp = tempfile::tempdir().unwrap();
    let victim_dir = tmp.path().join("victim");
    std::fs::create_dir(&victim_dir).unwrap();
    std::fs::write(victim_dir.join("plot.svg"), "<svg>bob's plot</svg>\n").unwrap();
    std::fs::write(victim_dir.join("rankfile.txt"), "bob's rankfile\n").unwrap();
    let victim = Victim::new(tmp.path());
    for entry in hostile::snapshot(&victim.dir) {
        lchown(&entry.0, Some(NOBODY), Some(NOBODY)).unwrap();
    }
    lchown(&victim.dir, Some(NOBODY), Some(NOBODY)).unwrap();
    let shared = hostile::shared_folder(tmp.path(), mode);
    Some((tmp, shared, victim))
}

/// Plants `shared/place` → the victim's folder, owned by `uid`; returns it.
fn plant(shared: &Path, victim: &Victim, uid: u32) -> PathBuf {
    hostile::plant_parent(shared, &victim.dir, uid)
}

/// Runs `xylem ARGS` for at most 60 s (a hang fails the test): its exit code and
/// standard error.
fn xylem(args: &[&Path]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_xylem"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (code, stderr, _) = hostile::finish_within(&mut child, Duration::from_secs(60));
    (code, stderr)
}

fn p(s: &str) -> &Path {
    Path::new(s)
}

/// Asserts that `stderr` refuses `link` by the rule, naming it, its owner and its folder.
fn assert_refused(stderr: &str, link: &Path) {
    let folder = link.parent().unwrap();
    for part in [
        format!(
            "{} is a symbolic link owned by nobody (uid 65534)",
            link.display()
        ),
        format!("in {}, a folder of root (uid 0)", folder.display()),
        "give a real directory, or a link owned by you or by root (uid 0)".to_string(),
    ] {
        assert!(stderr.contains(&part), "{part:?} not in: {stderr}");
    }
}

fn place_args(out: &Path) -> Vec<&Path> {
    let mut args: Vec<&Path> = [
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
    ]
    .into_iter()
    .map(p)
    .collect();
    args.push(out);
    args
}

#[test]
fn place_out_through_a_planted_link_is_refused() {
    // Sticky (as /tmp) and not (a group project folder made world-writable).
    for mode in [0o1777, 0o777] {
        let Some((_tmp, shared, victim)) = shared(mode) else {
            return;
        };
        let place = plant(&shared, &victim, NOBODY);
        let (code, stderr) = xylem(&place_args(&place));
        assert_eq!(code, Some(2), "mode {mode:o}: {stderr}");
        assert!(stderr.starts_with("xylem place: --out "), "{stderr}");
        assert_refused(&stderr, &place);
        // A folder below it is not made in the victim's folder either.
        let (code, stderr) = xylem(&place_args(&place.join("new")));
        assert_eq!(code, Some(2), "{stderr}");
        assert_refused(&stderr, &place);
        victim.assert_untouched();
    }
}

#[test]
fn a_link_of_the_caller_is_still_followed() {
    let Some((_tmp, shared, victim)) = shared(0o1777) else {
        return;
    };
    // Root's own link: root named it, so it leads where root said.
    let place = plant(&shared, &victim, 0);
    let (code, stderr) = xylem(&place_args(&place));
    assert_eq!(code, Some(0), "{stderr}");
    let written = std::fs::read_to_string(victim.dir.join("rankfile.txt")).unwrap();
    assert_ne!(written, "bob's rankfile\n");
}

#[test]
fn plot_force_through_a_planted_link_is_refused() {
    let Some((_tmp, shared, victim)) = shared(0o777) else {
        return;
    };
    let place = plant(&shared, &victim, NOBODY);
    let json = Path::new(env!("CARGO_MANIFEST_DIR")).join("../analysis/tests/fixtures/sqmr-a.json");
    let out = place.join("plot.svg");
    for force in [true, false] {
        let mut args = vec![p("plot"), &json, p("-o"), &out];
        if force {
            args.push(p("--force"));
        }
        let (code, stderr) = xylem(&args);
        assert_eq!(code, Some(1), "--force {force}: {stderr}");
        assert!(stderr.starts_with("xylem plot: "), "{stderr}");
        assert_refused(&stderr, &place);
        victim.assert_untouched();
    }
}

#[test]
fn gen_through_a_planted_link_is_refused() {
    let Some((_tmp, shared, victim)) = shared(0o1777) else {
        return;
    };
    let place = plant(&shared, &victim, NOBODY);
    for what in ["completions", "man"] {
        let (code, stderr) = xylem(&[p("gen"), p(what), &place]);
        assert_eq!(code, Some(1), "gen {what}: {stderr}");
        assert!(stderr.starts_with("xylem gen: "), "{stderr}");
        assert_refused(&stderr, &place);
        victim.assert_untouched();
    }
    // A planted link as the shell's folder inside a real folder others can write.
    let real = shared.join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o777)).unwrap();
    let bash = real.join("bash");
    symlink(&victim.dir, &bash).unwrap();
    lchown(&bash, Some(NOBODY), Some(NOBODY)).unwrap();
    let (code, stderr) = xylem(&[p("gen"), p("completions"), &real]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_refused(&stderr, &bash);
    victim.assert_untouched();
}
