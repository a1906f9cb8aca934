//! `b_eff_io` in a `--path` and an output folder that a hostile user can write to, as root
//! runs it: links planted at the names a writer used to derive from its PID, a fake owner
//! marker in the folder given to `--clean`, the run directory renamed away mid-run and
//! replaced by a link, every file the job creates in the folder traced with
//! `strace -f`, and another user swapping names while root's `--clean` removes. The
//! victim's files must be byte-identical afterwards.

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

/// The user the racer acts as: `nobody`.
const NOBODY: u32 = 65534;
/// The third user whose folder the racer moves: neither root nor the racer.
const THIRD: u32 = 4243;

/// Makes this thread (only) user `uid`, group `uid`, with no supplementary groups: the
/// kernel's credentials are per thread, so the rest of the test process stays root.
fn become_user(uid: u32) {
    use rustix::process::{Gid, Uid};
    rustix::thread::set_thread_groups(&[]).unwrap();
    rustix::thread::set_thread_res_gid(Gid::from_raw(uid), Gid::from_raw(uid), Gid::from_raw(uid))
        .unwrap();
    rustix::thread::set_thread_res_uid(Uid::from_raw(uid), Uid::from_raw(uid), Uid::from_raw(uid))
        .unwrap();
}

/// A run directory `base/name` of user `nobody` left by a dead process: a valid marker
/// (as this release writes it) and `files` empty files, 1000 to a subfolder.
fn left_behind(base: &Path, name: &str, dead: u32, files: usize) {
    let dir = base.join(name);
    std::fs::create_dir(&dir).unwrap();
    for i in 0..files {
        let sub = dir.join(format!("p0.n{}", i / 1000));
        if i % 1000 == 0 {
            std::fs::create_dir(&sub).unwrap();
        }
        std::fs::File::create(sub.join(format!("f{i}"))).unwrap();
    }
    let holder = outfile::Holder {
        pid: dead,
        process_start: None,
        ..outfile::Holder::this_process()
    };
    assert_eq!(holder.uid, Some(NOBODY));
    std::fs::write(
        dir.join(OWNER_FILE),
        holder.render(beffio::run::rundir::OWNER_HEADER, None),
    )
    .unwrap();
}

/// What the racer saw: whether it swapped the names, and when after waking.
#[derive(Debug)]
enum Race {
    Swapped,
    TooLate(String),
}

/// The racer, as `nobody`: makes two run directories in `base` (the first of 100,000
/// files), waits until `--clean` opens the first one's marker (inotify), then renames
/// that run directory away and the third user's folder `victim` to its name.
fn racer(base: PathBuf, victim: PathBuf, dead: u32, ready: std::sync::mpsc::Sender<()>) -> Race {
    use rustix::fs::inotify;
    become_user(NOBODY);
    let (big, small) = ("b_eff_io.20200101T000000.1", "b_eff_io.20200101T000000.2");
    left_behind(&base, big, dead, 100_000);
    left_behind(&base, small, dead, 10);
    let watch = inotify::init(inotify::CreateFlags::CLOEXEC).unwrap();
    inotify::add_watch(
        &watch,
        base.join(big).join(OWNER_FILE),
        inotify::WatchFlags::OPEN,
    )
    .unwrap();
    ready.send(()).unwrap();
    let mut fds = [rustix::event::PollFd::new(
        &watch,
        rustix::event::PollFlags::IN,
    )];
    let limit = rustix::event::Timespec {
        tv_sec: 60,
        tv_nsec: 0,
    };
    if rustix::event::poll(&mut fds, Some(&limit)).unwrap() == 0 {
        return Race::TooLate("--clean never opened the marker".into());
    }
    if let Err(e) = std::fs::rename(base.join(big), base.join("moved-away")) {
        return Race::TooLate(format!("renaming the run directory away: {e}"));
    }
    match std::fs::rename(&victim, base.join(big)) {
        Ok(()) => Race::Swapped,
        Err(e) => Race::TooLate(format!("renaming the victim in: {e}")),
    }
}

#[test]
fn clean_removes_only_what_it_examined_while_another_user_swaps_names() {
    if !mpitest::hostile::is_root() {
        return mpitest::unavailable("the race of --clean needs root, and a second user");
    }
    // On a tmpfs where there is one (/dev/shm): 100,000 files are made in a second or
    // two there, and in a minute on some disks.
    let shm = Path::new("/dev/shm");
    let tmp = if shm.is_dir() {
        tempfile::tempdir_in(shm)
    } else {
        tempfile::tempdir()
    }
    .unwrap();
    use std::os::unix::fs::{chown, PermissionsExt};
    let mode =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    mode(tmp.path(), 0o755);
    let started = Instant::now();
    let mut swapped = 0;
    for round in 0..3 {
        // The shared folder (sticky, as /tmp), and a project folder where the third
        // user's folder is (anyone may rename in it, as in a group's folder).
        let base = tmp.path().join(format!("shared{round}"));
        let project = tmp.path().join(format!("project{round}"));
        for dir in [&base, &project] {
            std::fs::create_dir(dir).unwrap();
        }
        mode(&base, 0o1777);
        mode(&project, 0o777);
        let victim = Victim::new(&project);
        for p in [
            victim.dir.clone(),
            victim.dir.join("sub"),
            victim.file(),
            victim.dir.join("sub/data"),
        ] {
            chown(&p, Some(THIRD), Some(THIRD)).unwrap();
        }
        mode(&victim.dir, 0o777);
        let dead = {
            let mut child = Command::new("true").spawn().unwrap();
            let pid = child.id();
            child.wait().unwrap();
            pid
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let racer = {
            let (base, victim) = (base.clone(), victim.dir.clone());
            std::thread::spawn(move || racer(base, victim, dead, tx))
        };
        rx.recv_timeout(Duration::from_secs(60))
            .expect("the racer did not set up");
        let out = Command::new("timeout")
            .args(["-k", "5", "120", BIN, "--clean"])
            .arg(&base)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let race = racer.join().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let big = base.join("b_eff_io.20200101T000000.1");
        let small = base.join("b_eff_io.20200101T000000.2");
        let line = |dir: &Path| {
            stdout
                .lines()
                .find(|l| l.contains(&format!("'{}'", dir.display())))
                .unwrap_or_else(|| panic!("{} not named in\n{stdout}", dir.display()))
                .to_string()
        };
        eprintln!("round {round}: {race:?}\n{stdout}");
        if let Race::TooLate(why) = &race {
            // Nothing was swapped in time: an ordinary clean-up.
            assert!(line(&big).contains("removed"), "{why}: {out:?}");
        } else {
            swapped += 1;
            // The third user's folder is under the run directory's name: --clean says
            // so, keeps it, and exits 1.
            assert!(
                line(&big).starts_with("b_eff_io: --clean: kept")
                    && line(&big).contains("replaced during --clean")
                    && line(&big).contains(&format!("a directory of user {THIRD}")),
                "{out:?}"
            );
            assert_eq!(out.status.code(), Some(1), "{out:?}");
            std::fs::rename(&big, &victim.dir).unwrap();
            // The run directory it examined, renamed away, is emptied.
            let left = mpitest::dir_entries(&base.join("moved-away"));
            assert!(left.is_empty(), "{left:?}");
        }
        victim.assert_untouched();
        assert!(line(&small).contains("removed"), "{out:?}");
        assert!(!small.exists());
    }
    eprintln!(
        "{swapped} of 3 rounds swapped the names mid-removal, in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        swapped >= 2,
        "the racer swapped the names in {swapped} of 3 rounds only: the race was not run"
    );
}
