//! `b_eff_io` under the faults a user hits: a full disk (a real tmpfs, as root), a very
//! long `--path`, the leftovers of a killed run, sizes that overflow, a memory cgroup too
//! small for the buffers. One job at a time, each with a time limit.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use beffio::run::rundir::{host_name, OWNER_FILE};
use mpitest::{Installation, Job, JobLock};

const BIN: &str = env!("CARGO_BIN_EXE_b_eff_io");

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("beffio-fault-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `b_eff_io args` on `ranks` ranks within `limit`; the caller holds the [`JobLock`].
fn job(ranks: usize, args: &[&str], limit: Duration) -> Job {
    let command = mpitest::command(Installation::from_env(), ranks, Path::new(BIN), args, limit);
    mpitest::run(command, Path::new(BIN))
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// A tmpfs mounted for the life of the value, unmounted when it drops.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `size` (`16m`) at `dir`, or says why it cannot
    /// ([`mpitest::unavailable`]) and returns `None`.
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        if !is_root() {
            mpitest::unavailable("mounting a tmpfs for a full disk needs root");
            return None;
        }
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        if !mounted.status.success() {
            mpitest::unavailable(&format!(
                "cannot mount a tmpfs at {}: {}",
                dir.display(),
                String::from_utf8_lossy(&mounted.stderr).trim()
            ));
            return None;
        }
        Some(Tmpfs(dir.to_path_buf()))
    }

    fn free_bytes(&self) -> u64 {
        let s = nix::sys::statvfs::statvfs(&self.0).unwrap();
        s.blocks_free() * s.fragment_size()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        for _ in 0..50 {
            let done = Command::new("umount")
                .arg(&self.0)
                .stderr(Stdio::null())
                .status();
            if done.is_ok_and(|s| s.success()) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn error_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("b_eff_io: error"))
        .collect()
}

/// Fault 1: three ranks on a full 16 MB disk used to end in different collectives (rank 0
/// in MPI_Barrier, the others in MPI_File_sync) and hang until killed, 4 runs in 5.
#[test]
fn three_ranks_on_a_full_disk_leave_together_with_one_message() {
    let _lock = JobLock::acquire();
    let base = scratch("full3");
    let disk = base.join("disk");
    std::fs::create_dir(&disk).unwrap();
    let Some(tmpfs) = Tmpfs::mount(&disk, "16m") else {
        return;
    };
    std::fs::write(disk.join("precious"), b"keep me").unwrap();
    let free_before = tmpfs.free_bytes();
    let disk_arg = disk.display().to_string();
    for attempt in 1..=3 {
        let json = base.join(format!("x{attempt}.json"));
        let j = job(
            3,
            &[
                "-T",
                "4",
                "-p",
                &disk_arg,
                "--memory-per-process",
                "8M",
                "--json",
                json.to_str().unwrap(),
            ],
            Duration::from_secs(60),
        );
        let seconds = j.elapsed.as_secs_f64();
        eprintln!("attempt {attempt}: exit {:?} after {seconds:.1} s", j.code);
        assert!(!j.timed_out, "attempt {attempt} hung: {j:#?}");
        assert_eq!(j.code, Some(1), "attempt {attempt}: {j:#?}");
        let errors = error_lines(&j.stderr);
        assert_eq!(errors.len(), 1, "one message: {}", j.stderr);
        assert!(
            errors[0].contains(&format!("'{disk_arg}/b_eff_io.")) && errors[0].contains(" is full"),
            "the message names the file: {}",
            errors[0]
        );
        assert!(seconds < 30.0, "took {seconds:.1} s to leave");
        assert_kept_or_absent(&json, &j.stderr);
        // The run directory is gone, the user's file stays, the space is free again.
        assert_eq!(mpitest::dir_entries(&disk), ["precious"], "{}", j.stderr);
        assert_eq!(std::fs::read(disk.join("precious")).unwrap(), b"keep me");
        assert!(
            tmpfs.free_bytes() + (64 << 10) >= free_before,
            "{} of {free_before} bytes free",
            tmpfs.free_bytes()
        );
    }
    drop(tmpfs);
    std::fs::remove_dir_all(&base).unwrap();
}

/// The number of the pattern a message names (`write pattern 3 (type 0): …`).
fn pattern_named(line: &str) -> Option<(String, usize)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    words.windows(3).find_map(|w| {
        let access = w[0].trim_start_matches("rank").trim_start_matches(':');
        (w[1] == "pattern" && ["write", "rewrite", "read"].contains(&access))
            .then(|| w[2].parse().ok().map(|n| (access.to_string(), n)))
            .flatten()
    })
}

/// Fault 2: Open MPI's collective writes on a full disk report success with full counts;
/// the run printed bandwidths of 26 to 293 GB/s and 67,000 library lines before failing
/// at type 1.
#[test]
fn a_full_disk_gives_no_figures_and_few_lines() {
    let _lock = JobLock::acquire();
    let base = scratch("full2");
    let disk = base.join("disk");
    std::fs::create_dir(&disk).unwrap();
    let Some(tmpfs) = Tmpfs::mount(&disk, "40m") else {
        return;
    };
    let files = ["x.json", "x.csv", "x.sum", "x.prot"].map(|f| base.join(f));
    let prefix = base.join("x").display().to_string();
    let j = job(
        2,
        &[
            "-T",
            "4",
            "-p",
            disk.to_str().unwrap(),
            "--memory-per-process",
            "8M",
            "--json",
            files[0].to_str().unwrap(),
            "--csv",
            files[1].to_str().unwrap(),
            "--prefix",
            &prefix,
        ],
        Duration::from_secs(60),
    );
    let left = mpitest::dir_entries(&disk);
    drop(tmpfs);
    eprintln!("exit {:?} after {:.1} s", j.code, j.elapsed.as_secs_f64());
    assert!(!j.timed_out, "{j:#?}");
    assert_eq!(j.code, Some(1), "{j:#?}");
    let lines = j.stderr.lines().count();
    assert!(lines < 20, "{lines} lines on stderr:\n{}", j.stderr);
    let errors = error_lines(&j.stderr);
    assert_eq!(errors.len(), 1, "{}", j.stderr);
    let (access, failed) = pattern_named(errors[0])
        .unwrap_or_else(|| panic!("the message names the pattern: {}", errors[0]));
    assert_eq!(access, "write", "{}", errors[0]);
    // Figures only for the patterns whose bytes were found in their file.
    for line in j.stderr.lines().filter(|l| l.contains("MB/s")) {
        let (a, n) = pattern_named(line).unwrap_or_else(|| panic!("a figure: {line}"));
        assert!(
            a == "write" && n < failed,
            "{line} (pattern {failed} failed)"
        );
    }
    assert!(
        j.stdout
            .lines()
            .all(|l| !l.contains("MB/s") || l.starts_with("units")),
        "a figure on stdout:\n{}",
        j.stdout
    );
    assert!(!j.stdout.contains("b_eff_io = "), "{}", j.stdout);
    assert_kept_or_absent(&files[0], &j.stderr);
    assert!(left.is_empty(), "left behind: {left:?}");
    std::fs::remove_dir_all(&base).unwrap();
}

/// After a failed run the JSON is absent (nothing was measured), or it keeps what was
/// measured before the failure, `"complete": false` with the reason.
fn assert_kept_or_absent(json: &Path, stderr: &str) {
    let Ok(text) = std::fs::read_to_string(json) else {
        return;
    };
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    mpitest::schema::assert_matches_schema(&doc);
    assert_eq!(doc["complete"], false, "{text}\n{stderr}");
    // What was measured: finished partitions, or patterns of the one the run was in.
    let unfinished = ["write", "rewrite", "read"]
        .iter()
        .filter_map(|a| doc["unfinished"]["access"][a].as_array())
        .any(|p| !p.is_empty());
    assert!(
        !doc["partitions"].as_array().unwrap().is_empty() || unfinished,
        "{text}"
    );
    assert!(
        doc["stopped"]
            .as_str()
            .is_some_and(|s| s.starts_with("stopped: ")),
        "{text}"
    );
}

/// Fault 3: a `--path` of 202 characters or more aborted inside Open MPI's
/// shared-file-pointer component (`*** buffer overflow detected ***`).
#[test]
fn a_250_character_path_works() {
    let base = scratch("long");
    let mut long = base.clone();
    while long.as_os_str().len() < 250 {
        let room = 250 - long.as_os_str().len() - 1;
        long.push("d".repeat(room.clamp(1, 40)));
    }
    assert_eq!(long.as_os_str().len(), 250);
    std::fs::create_dir_all(&long).unwrap();
    let json = base.join("r.json");
    let _lock = JobLock::acquire();
    let j = job(
        2,
        &[
            "-T",
            "2",
            "-p",
            long.to_str().unwrap(),
            "--memory-per-process",
            "8M",
            "--json",
            json.to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    assert!(j.success(), "{j:#?}");
    assert!(
        j.stdout
            .contains(&format!("run directory     {}/b_eff_io.", long.display())),
        "{}",
        j.stdout
    );
    assert!(
        mpitest::dir_entries(&long).is_empty(),
        "the run directory stays"
    );
    let doc: serde_json::Value = mpitest::read_document(&json);
    assert_eq!(doc["benchmark"], "b_eff_io");
    assert_eq!(doc["path"], long.display().to_string());
    std::fs::remove_dir_all(&base).unwrap();
}

fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// A marker in the `key=value` form of earlier releases, with the PID namespace this
/// release records (without it, only the host's initial PID namespace can judge it).
fn marker(pid: u32) -> String {
    use std::os::unix::fs::MetadataExt;
    let ns = std::fs::metadata("/proc/self/ns/pid").unwrap().ino();
    format!(
        "b_eff_io run directory\npid={pid}\nhost={}\npid_ns={ns}\n",
        host_name()
    )
}

/// A directory named like a run directory, with 1 MiB in it and, if given, a marker.
fn fake_run_dir(base: &Path, name: &str, marker: Option<String>) -> PathBuf {
    let dir = base.join(name);
    std::fs::create_dir_all(dir.join("p0.n2")).unwrap();
    std::fs::write(dir.join("p0.n2/type0"), vec![7u8; 1 << 20]).unwrap();
    if let Some(text) = marker {
        std::fs::write(dir.join(OWNER_FILE), text).unwrap();
    }
    dir
}

/// `b_eff_io --clean DIR`, started directly: it needs no MPI launcher.
fn clean(dir: &Path) -> std::process::Output {
    Command::new("timeout")
        .args(["-k", "5", "30", BIN, "--clean"])
        .arg(dir)
        .output()
        .unwrap()
}

/// Fault 4: a killed run's directory stayed, and the next run said nothing about it.
#[test]
fn a_leftover_run_directory_is_reported_by_the_next_run_and_removed_by_clean() {
    let base = scratch("leftover");
    std::fs::write(base.join("notes.txt"), b"mine").unwrap();
    let dead = dead_pid();
    let leftover = fake_run_dir(
        &base,
        &format!("b_eff_io.20200101T000000.{dead}"),
        Some(marker(dead)),
    );
    let _lock = JobLock::acquire();
    let j = job(
        1,
        &[
            "-T",
            "1",
            "-p",
            base.to_str().unwrap(),
            "--memory-per-process",
            "8M",
        ],
        Duration::from_secs(120),
    );
    assert!(j.success(), "{j:#?}");
    let said: Vec<&str> = j
        .stderr
        .lines()
        .filter(|l| l.contains(&leftover.display().to_string()))
        .collect();
    assert_eq!(said.len(), 1, "{}", j.stderr);
    assert!(
        said[0].starts_with("b_eff_io: warning: found '")
            && said[0].contains(&format!("(pid {dead} on {})", host_name()))
            && said[0].contains("whose process is gone")
            && said[0].contains("MiB, ")
            && said[0].contains(&format!("b_eff_io --clean {}", base.display())),
        "{}",
        said[0]
    );
    assert!(
        leftover.exists(),
        "a run reports leftovers, --clean removes them"
    );
    let out = clean(&base);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        stdout.contains(&format!("removed '{}'", leftover.display())),
        "{stdout}"
    );
    assert!(stdout.contains("removed 1 run directory"), "{stdout}");
    assert_eq!(mpitest::dir_entries(&base), ["notes.txt"]);
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn clean_keeps_what_b_eff_io_did_not_make_and_what_still_runs() {
    let base = scratch("keep");
    let bare = fake_run_dir(&base, "b_eff_io.20200101T000000.1", None);
    let alive = fake_run_dir(
        &base,
        "b_eff_io.20200101T000000.2",
        Some(marker(std::process::id())),
    );
    let junk = fake_run_dir(&base, "b_eff_io.20200101T000000.3", Some("hello\n".into()));
    // Not named like a run directory: never looked at, whatever it holds.
    let other = fake_run_dir(&base, "results", Some(marker(dead_pid())));
    let out = clean(&base);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let line = |dir: &Path| {
        stdout
            .lines()
            .find(|l| l.contains(&format!("'{}'", dir.display())))
            .unwrap_or_else(|| panic!("{} not named in\n{stdout}", dir.display()))
            .to_string()
    };
    assert!(line(&bare).contains("kept") && line(&bare).contains("without an owner marker"));
    assert!(line(&junk).contains("kept") && line(&junk).contains("is not a b_eff_io owner marker"));
    for dir in [&bare, &junk] {
        assert!(line(dir).contains("nothing trustworthy says b_eff_io made it"));
    }
    assert!(
        line(&alive).contains("kept") && line(&alive).contains("still runs"),
        "{stdout}"
    );
    assert!(!stdout.contains(&other.display().to_string()), "{stdout}");
    assert!(stdout.contains("removed 0 run directories"), "{stdout}");
    assert!(bare.exists() && alive.exists() && junk.exists() && other.exists());
    std::fs::remove_dir_all(&base).unwrap();
}

/// The processes whose command line mentions `needle` (a unique scratch path).
fn processes_mentioning(needle: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
        .collect()
}

/// The whole story: SIGKILL of the launcher and every rank leaves the run directory with
/// its marker; `--clean` removes it.
#[test]
fn a_run_killed_outright_is_cleaned_by_clean() {
    let base = scratch("kill9");
    let lock = JobLock::acquire();
    let mut child = mpitest::command(
        Installation::from_env(),
        2,
        Path::new(BIN),
        &[
            "-T",
            "60",
            "-p",
            base.to_str().unwrap(),
            "--memory-per-process",
            "8M",
        ],
        Duration::from_secs(120),
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let start = Instant::now();
    let run_dir = loop {
        let dirs = mpitest::dir_entries(&base);
        if let Some(d) = dirs.first() {
            let p0 = base.join(d).join("p0.n2");
            if p0.is_dir() && !mpitest::dir_entries(&p0).is_empty() {
                break base.join(d);
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(500));
    let victims = processes_mentioning(base.to_str().unwrap());
    assert!(victims.len() >= 3, "launcher and ranks: {victims:?}");
    let mut kill = Command::new("kill");
    kill.arg("-KILL");
    for pid in &victims {
        kill.arg(pid.to_string());
    }
    let _ = kill.stderr(Stdio::null()).status();
    let _ = child.wait();
    drop(lock);
    assert!(run_dir.join(OWNER_FILE).is_file(), "{}", run_dir.display());
    // The ranks may take a moment to be reaped.
    let start = Instant::now();
    let out = loop {
        let out = clean(&base);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if stdout.contains("removed '") || start.elapsed() > Duration::from_secs(10) {
            break (out, stdout);
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(out.0.status.code(), Some(0), "{:?}", out.0);
    assert!(
        out.1.contains(&format!("removed '{}'", run_dir.display())),
        "{}",
        out.1
    );
    assert!(mpitest::dir_entries(&base).is_empty());
    std::fs::remove_dir_all(&base).unwrap();
}

/// Fault 5: `-MB 17592186044416` (2^64 bytes) wrapped to 0 bytes and ran.
#[test]
fn a_size_that_overflows_is_refused_with_exit_2() {
    let _lock = JobLock::acquire();
    let j = job(2, &["-MB", "17592186044416"], Duration::from_secs(60));
    assert_eq!(j.code, Some(2), "{j:#?}");
    assert!(
        j.stderr.contains("--memory-per-process-mb")
            && j.stderr
                .contains("largest accepted value is 17592186044415"),
        "{}",
        j.stderr
    );
    assert_eq!(j.stderr.matches("error:").count(), 1, "{}", j.stderr);
}

/// A memory cgroup of `limit` bytes below this process's own (cgroup v1 or v2), removed
/// when it drops.
struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    fn create(limit: u64) -> Result<Cgroup, String> {
        let own = std::fs::read_to_string("/proc/self/cgroup").map_err(|e| e.to_string())?;
        let parsed = benchkit::memory::parse_own_cgroups(&own);
        let name = format!("beffio-test-{}", std::process::id());
        let (dir, file) = match (&parsed.v1_memory, &parsed.v2) {
            (Some(path), _) if Path::new("/sys/fs/cgroup/memory").is_dir() => (
                Path::new("/sys/fs/cgroup/memory")
                    .join(path.trim_start_matches('/'))
                    .join(&name),
                "memory.limit_in_bytes",
            ),
            (_, Some(path)) => (
                Path::new("/sys/fs/cgroup")
                    .join(path.trim_start_matches('/'))
                    .join(&name),
                "memory.max",
            ),
            _ => return Err(format!("no memory cgroup in /proc/self/cgroup: {own}")),
        };
        std::fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        let group = Cgroup { dir };
        std::fs::write(group.dir.join(file), limit.to_string())
            .map_err(|e| format!("{file}: {e}"))?;
        Ok(group)
    }

    /// `command`, started inside the cgroup.
    fn wrap(&self, command: &Command) -> Command {
        let mut inside = Command::new("sh");
        inside
            .arg("-c")
            .arg(r#"echo $$ > "$0/cgroup.procs" && exec "$@""#)
            .arg(&self.dir)
            .arg(command.get_program())
            .args(command.get_args());
        for (key, value) in command.get_envs() {
            match value {
                Some(v) => inside.env(key, v),
                None => inside.env_remove(key),
            };
        }
        inside
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Fault 6: the memory was checked per rank; the ranks of a node share it and their
/// job's cgroup limit.
#[test]
fn buffers_beyond_the_cgroup_limit_of_the_node_are_refused() {
    if !is_root() {
        mpitest::unavailable("creating a memory cgroup needs root");
        return;
    }
    let group = match Cgroup::create(3 << 30) {
        Ok(g) => g,
        Err(why) => {
            mpitest::unavailable(&format!("cannot create a memory cgroup: {why}"));
            return;
        }
    };
    let base = scratch("cgroup");
    let _lock = JobLock::acquire();
    // MPART is capped at 1 GiB: two buffers of it per rank, 4 GiB for two ranks, each
    // rank's 2 GiB within the limit of 3 GiB.
    let command = mpitest::command(
        Installation::from_env(),
        2,
        Path::new(BIN),
        &[
            "-T",
            "2",
            "-p",
            base.to_str().unwrap(),
            "--memory-per-process",
            "256G",
            "--json",
            base.join("r.json").to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    let j = mpitest::run(group.wrap(&command), Path::new(BIN));
    assert_eq!(j.code, Some(2), "{j:#?}");
    let errors = error_lines(&j.stderr);
    assert_eq!(errors.len(), 1, "{}", j.stderr);
    let limit_file = group
        .dir
        .join(if group.dir.starts_with("/sys/fs/cgroup/memory") {
            "memory.limit_in_bytes"
        } else {
            "memory.max"
        });
    assert!(
        errors[0].contains("its 2 ranks need 4.0 GiB (4294967296 bytes)")
            && errors[0].contains("MemAvailable is ")
            && errors[0].contains(&format!(
                "the memory cgroup limit is 3.0 GiB (3221225472 bytes, {})",
                limit_file.display()
            )),
        "{}",
        errors[0]
    );
    assert!(mpitest::dir_entries(&base).is_empty(), "nothing is created");
    drop(group);
    std::fs::remove_dir_all(&base).unwrap();
}
