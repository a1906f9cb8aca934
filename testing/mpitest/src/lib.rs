//! Launching real MPI jobs from integration tests.
//!
//! - The MPI installation is chosen by `XYLEM_TEST_MPI`: one of [`Installation::NAMES`]
//!   (`openmpi4`, the default, `mpich4`, `openmpi5`, `mpich5`, `intelmpi`). It must be the
//!   one the binaries under test were built against: `scripts/with-mpi NAME -- cargo test`
//!   sets it together with that installation's compiler, launcher and libraries, and
//!   `make test` runs the suite so on each of the five.
//! - Jobs run one at a time, across test binaries and processes, behind a file lock:
//!   several launchers at once on a two-core machine crawl and time out.
//! - Every job runs under `timeout`, so a hang fails the test instead of the whole run.

pub mod hostile;
pub mod procs;
pub mod schema;

pub use schema::read_document;

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// The variable naming the MPI installation the tests launch with.
pub const TEST_MPI_ENV: &str = "XYLEM_TEST_MPI";

/// One of the five MPI installations xylem is tested against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Installation {
    /// Debian's Open MPI 4.1 (`mpicc`, `mpirun`).
    OpenMpi4,
    /// Debian's MPICH 4.0, ch4:ucx (`mpicc.mpich`, `mpiexec.mpich`).
    Mpich4,
    /// Open MPI 5.0 from the Python registry (`mpicc`, `mpirun` of PRRTE).
    OpenMpi5,
    /// MPICH 5.0 from the Python registry, ch4:ucx and ofi (`mpicc`, `mpiexec.hydra`).
    Mpich5,
    /// Intel MPI 2021.13 from the Python registry (`mpicc`, `mpiexec.hydra`).
    IntelMpi,
}

/// The launcher family of an installation: what its command lines look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Open MPI's `mpirun` (ORTE in 4.1, PRRTE in 5).
    OpenMpi,
    /// Hydra's `mpiexec` (MPICH and Intel MPI).
    Hydra,
}

impl Installation {
    /// How the installation's `mpi.h` names its library, up to the major version (what
    /// `--version` says the binary was built against).
    pub fn header_library_prefix(self) -> &'static str {
        match self {
            Installation::OpenMpi4 => "Open MPI 4.",
            Installation::Mpich4 => "MPICH 4.",
            Installation::OpenMpi5 => "Open MPI 5.",
            Installation::Mpich5 => "MPICH 5.",
            Installation::IntelMpi => "Intel MPI 2021.",
        }
    }

    /// Every installation's name, in the order `make test` runs them.
    pub const NAMES: [&'static str; 5] = ["openmpi4", "mpich4", "openmpi5", "mpich5", "intelmpi"];

    /// The installation named by `XYLEM_TEST_MPI` (unset: `openmpi4`); panics on a value it
    /// does not know.
    pub fn from_env() -> Installation {
        match std::env::var(TEST_MPI_ENV).as_deref() {
            Err(_) | Ok("") => Installation::OpenMpi4,
            Ok(name) => Installation::from_name(name).unwrap_or_else(|| {
                panic!(
                    "{TEST_MPI_ENV}={name}: expected one of {}",
                    Installation::NAMES.join(", ")
                )
            }),
        }
    }

    /// The installation called `name`.
    pub fn from_name(name: &str) -> Option<Installation> {
        Some(match name {
            "openmpi4" => Installation::OpenMpi4,
            "mpich4" => Installation::Mpich4,
            "openmpi5" => Installation::OpenMpi5,
            "mpich5" => Installation::Mpich5,
            "intelmpi" => Installation::IntelMpi,
            _ => return None,
        })
    }

    /// Its name, as `scripts/with-mpi` and `make build MPI=` spell it.
    pub fn name(self) -> &'static str {
        match self {
            Installation::OpenMpi4 => "openmpi4",
            Installation::Mpich4 => "mpich4",
            Installation::OpenMpi5 => "openmpi5",
            Installation::Mpich5 => "mpich5",
            Installation::IntelMpi => "intelmpi",
        }
    }

    /// Its launcher family.
    pub fn family(self) -> Family {
        match self {
            Installation::OpenMpi4 | Installation::OpenMpi5 => Family::OpenMpi,
            Installation::Mpich4 | Installation::Mpich5 | Installation::IntelMpi => Family::Hydra,
        }
    }

    /// Whether it is an Open MPI.
    pub fn is_open_mpi(self) -> bool {
        self.family() == Family::OpenMpi
    }

    /// Whether it comes from the Python registry (a prefix of its own under `.mpi/`).
    pub fn in_prefix(self) -> bool {
        matches!(
            self,
            Installation::OpenMpi5 | Installation::Mpich5 | Installation::IntelMpi
        )
    }

    /// The compiler wrapper: `$MPICC` when it is set (`scripts/with-mpi` sets it),
    /// else the installation's own name for it.
    pub fn mpicc(self) -> String {
        if let Ok(mpicc) = std::env::var("MPICC") {
            if !mpicc.is_empty() {
                return mpicc;
            }
        }
        match self {
            Installation::Mpich4 => "mpicc.mpich".into(),
            _ => "mpicc".into(),
        }
    }

    /// The launcher program. For the installations in a prefix it is taken beside
    /// `$MPICC` and must exist there: a test run outside `scripts/with-mpi` would otherwise
    /// start another library's launcher.
    pub fn launcher(self) -> PathBuf {
        let name = match self {
            Installation::OpenMpi4 | Installation::OpenMpi5 => "mpirun",
            Installation::Mpich4 => "mpiexec.mpich",
            Installation::Mpich5 | Installation::IntelMpi => "mpiexec.hydra",
        };
        if !self.in_prefix() {
            return PathBuf::from(name);
        }
        let mpicc = PathBuf::from(self.mpicc());
        let beside = mpicc.parent().map(|dir| dir.join(name));
        match beside {
            Some(path) if mpicc.is_absolute() && path.exists() => path,
            _ => panic!(
                "{}: MPICC={} does not point into its prefix; run the tests under \
                 `scripts/with-mpi {} -- cargo test` (make test does)",
                self.name(),
                mpicc.display(),
                self.name()
            ),
        }
    }

    /// A piece of `MPI_Get_library_version` that only this installation prints.
    pub fn library_marker(self) -> &'static str {
        match self {
            Installation::OpenMpi4 => "Open MPI v4.",
            Installation::Mpich4 => "MPICH Version: 4.",
            Installation::OpenMpi5 => "Open MPI v5.",
            Installation::Mpich5 => "MPICH Version: 5.",
            Installation::IntelMpi => "Intel(R) MPI Library",
        }
    }

    /// The launcher's arguments before the rank count: oversubscription and no binding
    /// for Open MPI (these machines have two cores), nothing for hydra.
    fn launcher_options(self) -> &'static [&'static str] {
        match self.family() {
            Family::OpenMpi => &["--oversubscribe", "--bind-to", "none"],
            Family::Hydra => &[],
        }
    }
}

/// The result of one job.
#[derive(Debug)]
pub struct Job {
    /// Exit code of the launcher (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Whether the time limit ended it.
    pub timed_out: bool,
    /// Everything on standard output.
    pub stdout: String,
    /// Everything on standard error.
    pub stderr: String,
    /// Wall time of the launcher.
    pub elapsed: Duration,
}

impl Job {
    /// Whether the job exited with code 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// Runs `exe args` as a job of `ranks` ranks with `flavour`, within `limit`, holding the
/// global job lock for the duration.
pub fn launch(mpi: Installation, ranks: usize, exe: &Path, args: &[&str], limit: Duration) -> Job {
    launch_with_env(mpi, ranks, exe, args, &[], limit)
}

/// As [`launch`], with extra environment variables for the ranks.
pub fn launch_with_env(
    mpi: Installation,
    ranks: usize,
    exe: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    limit: Duration,
) -> Job {
    let _lock = JobLock::acquire();
    let mut command = command(mpi, ranks, exe, args, limit);
    for (key, value) in env {
        command.env(key, value);
    }
    run(command, exe)
}

/// The command line of a job of `ranks` ranks running `exe args` with `mpi`'s
/// launcher under `timeout` (`limit`, then SIGKILL 5 s later). The caller runs it,
/// holding the [`JobLock`].
pub fn command(
    mpi: Installation,
    ranks: usize,
    exe: &Path,
    args: &[&str],
    limit: Duration,
) -> Command {
    let mut command = Command::new("timeout");
    command
        .arg("-k")
        .arg("5")
        .arg(format!("{}", limit.as_secs().max(1)))
        .arg(mpi.launcher())
        .args(mpi.launcher_options())
        .arg("-n");
    if mpi.is_open_mpi() {
        command
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    }
    command
        .arg(ranks.to_string())
        .arg(exe)
        .args(args)
        .current_dir(jobs_dir());
    command
}

/// The working directory of the tests' MPI jobs (a caller may set another on the command):
/// b_eff_io without `-f` writes `b_eff_io.sum` and `b_eff_io.prot` where it runs, as 2.1
/// does, and those belong neither in the checkout nor in a folder a test lists. A folder
/// of this user's in the temporary directory, made on first use; anything else at its
/// name (a link, another user's folder) stops the test.
pub fn jobs_dir() -> PathBuf {
    let uid = rustix::process::geteuid().as_raw();
    let dir = std::env::temp_dir().join(format!("xylem-test-jobs-{uid}"));
    match std::fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => panic!("cannot make the jobs' folder {}: {e}", dir.display()),
    }
    let meta = std::fs::symlink_metadata(&dir)
        .unwrap_or_else(|e| panic!("cannot inspect {}: {e}", dir.display()));
    use std::os::unix::fs::MetadataExt;
    assert!(
        meta.is_dir() && meta.uid() == uid,
        "{} is not a folder of this user's (uid {uid}): {meta:?}",
        dir.display()
    );
    dir
}

/// Runs a prepared command (the caller holds the [`JobLock`] and has put the time limit
/// in the command line, with `timeout -k 5 SECONDS` first) and collects its output.
pub fn run(command: Command, what: &Path) -> Job {
    run_until(command, what, |_| false)
}

/// [`run`], stopped early when `give_up` says so of the standard error printed so far
/// (called after each line): the launcher gets a SIGTERM (`timeout` passes it on to its
/// command), for a failure that shows itself in a message long before the time limit
/// would end the job.
pub fn run_until(
    mut command: Command,
    what: &Path,
    give_up: impl Fn(&str) -> bool + Send + 'static,
) -> Job {
    let start = Instant::now();
    // As `Command::output` would: no standard input, both outputs captured.
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start the launcher for {}: {e}", what.display()));
    let mut stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let stdout = thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        bytes
    });
    let hopeless = Arc::new(AtomicBool::new(false));
    let stderr = {
        let hopeless = hopeless.clone();
        thread::spawn(move || {
            let mut reader = BufReader::new(stderr);
            let mut bytes = Vec::new();
            let mut said = false;
            loop {
                match reader.read_until(b'\n', &mut bytes) {
                    Ok(0) | Err(_) => break,
                    Ok(_) if !said && give_up(&String::from_utf8_lossy(&bytes)) => {
                        said = true;
                        hopeless.store(true, Ordering::Relaxed);
                    }
                    Ok(_) => {}
                }
            }
            bytes
        })
    };
    // The child is signalled only while it has not been waited for, so its pid is its own.
    let mut signalled = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => panic!("cannot wait for the launcher of {}: {e}", what.display()),
        }
        if !signalled && hopeless.load(Ordering::Relaxed) {
            signalled = true;
            let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("a child's pid");
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
        thread::sleep(Duration::from_millis(20));
    };
    let stdout = stdout.join().expect("the stdout reader");
    let stderr = stderr.join().expect("the stderr reader");
    let code = status.code();
    // `timeout` says 124 (or 137) when its TERM ended the job; when the job outlived the TERM,
    // the KILL that follows goes to timeout's whole process group, itself included, so it dies
    // of SIGKILL without a code.
    let killed = std::os::unix::process::ExitStatusExt::signal(&status) == Some(9);
    Job {
        code,
        timed_out: code == Some(124) || code == Some(137) || killed,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        elapsed: start.elapsed(),
    }
}

/// Serialises jobs across processes with an advisory lock on a file in the temp dir.
/// Held by [`launch`] for one job, or by a caller for a longer setup; never take it twice
/// in one process (the second take would wait forever).
pub struct JobLock(File);

impl JobLock {
    /// Waits for the lock and holds it until dropped.
    pub fn acquire() -> JobLock {
        let path = std::env::temp_dir().join("xylem-mpi-jobs.lock");
        let file = File::create(&path)
            .unwrap_or_else(|e| panic!("cannot create the job lock {}: {e}", path.display()));
        file.lock()
            .unwrap_or_else(|e| panic!("cannot take the job lock {}: {e}", path.display()));
        JobLock(file)
    }
}

impl Drop for JobLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// The names in `dir`, sorted: what a test checks a run left behind.
pub fn dir_entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The lines of a job's `stderr` that its program printed: without a launcher's report of a
/// non-zero exit (Open MPI's between `-----` rules, hydra's lines of `=`) and without the
/// `[host:pid] PMIX ERROR: …` lines that Open MPI 5's `prterun` may print while it tears such
/// a job down (its PMIx server finds the exited rank's connection gone: `PMIX_ERR_UNREACH`).
pub fn program_lines(stderr: &str) -> Vec<&str> {
    let mut inside = false;
    stderr
        .lines()
        .filter(|l| {
            if l.starts_with("-----") {
                inside = !inside;
                return false;
            }
            !inside && !l.starts_with('=') && !is_pmix_teardown(l)
        })
        .collect()
}

/// `[host:pid] PMIX ERROR: PMIX_ERR_UNREACH in file …`, printed by the launcher, not a rank.
fn is_pmix_teardown(line: &str) -> bool {
    line.starts_with('[')
        && line
            .split_once("] ")
            .is_some_and(|(_, rest)| rest.starts_with("PMIX ERROR: PMIX_ERR_UNREACH"))
}

/// Checks the exit code of a job that a stall ended, as the launcher reports it.
///
/// Open MPI's `mpirun` passes on the stalled rank's 6. Hydra passes on the first code it
/// collects: the rank's 6, or the end of the rank that a test stopped (SIGSTOP) — killed
/// by hydra (9, 137, 255), or hung up by the kernel (code 1, hydra's box saying
/// `Hangup (signal 1)`), which sends SIGHUP to a stopped process whose process group is
/// orphaned when its sibling leaves. `output` is what the job printed (its standard
/// error, with its standard output where the test kept it).
pub fn assert_stalled_code(code: Option<i32>, output: &str) {
    let family = Installation::from_env().family();
    let accepted: &[i32] = match family {
        Family::OpenMpi => &[6],
        Family::Hydra => &[6, 9, 137, 255],
    };
    let hung_up =
        family == Family::Hydra && code == Some(1) && output.contains("Hangup (signal 1)");
    assert!(
        code.is_some_and(|c| accepted.contains(&c)) || hung_up,
        "exit {code:?}, expected one of {accepted:?} (or 1 after hydra's `Hangup (signal 1)`):\n{output}"
    );
}

/// Checks the `provenance` of a finished run's JSON document `doc`: `program` with its
/// command line (holding `arg`), `ranks` ranks over its hosts, the MPI it was built
/// against (this installation's) and ran on, the kernel, and a start before its end.
pub fn assert_provenance(doc: &serde_json::Value, program: &str, ranks: usize, arg: &str) {
    let p = &doc["provenance"];
    assert_eq!(p["program"], program, "{p}");
    let words: Vec<&str> = p["command_line"]
        .as_array()
        .unwrap_or_else(|| panic!("no command line: {p}"))
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    assert!(words[0].ends_with(program), "{p}");
    assert!(words.contains(&arg), "{arg} not in {words:?}");
    let hosts = p["hosts"].as_array().unwrap();
    let counted: u64 = hosts.iter().map(|h| h["ranks"].as_u64().unwrap()).sum();
    assert_eq!(counted, ranks as u64, "{p}");
    assert_eq!(hosts[0]["first_rank"], 0, "{p}");
    let built = p["mpi_built_against"].as_str().unwrap();
    let prefix = Installation::from_env().header_library_prefix();
    assert!(built.starts_with(prefix), "{built} is not {prefix}…");
    assert!(!p["mpi_runs_on"].as_str().unwrap().is_empty(), "{p}");
    assert!(p["kernel"].as_str().unwrap().starts_with("Linux "), "{p}");
    let (started, ended) = (p["started"].as_str().unwrap(), p["ended"].as_str().unwrap());
    // RFC 3339 of one time zone sort as they happened.
    assert!(
        started.len() >= 20 && started <= ended,
        "{started} .. {ended}"
    );
}

/// Whether this run is CI's (`CI=true`), where a test that cannot set itself up fails.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// What a test does when what it needs (root, namespaces, a Slurm) cannot be set up here:
/// under `CI=true` it fails, naming `why`, since a green CI must mean that it ran;
/// elsewhere it prints `SKIPPED: why` and the caller returns.
pub fn unavailable(why: &str) {
    if in_ci() {
        panic!("CI=true, and this test cannot set itself up: {why}");
    }
    eprintln!("SKIPPED: {why}");
}

#[cfg(test)]
mod tests {
    use super::{program_lines, run, run_until};
    use std::path::Path;
    use std::process::Command;

    fn shell(script: &str) -> Command {
        let mut c = Command::new("timeout");
        c.args(["-k", "5", "60", "sh", "-c", script]);
        c
    }

    #[test]
    fn a_job_that_says_it_cannot_succeed_is_stopped_there() {
        let script = "echo one; echo 'fatal: no way' >&2; sleep 50; echo two";
        let job = run_until(shell(script), Path::new("sh"), |e| e.contains("no way"));
        assert!(!job.success(), "{job:#?}");
        assert_eq!(job.stdout, "one\n", "{job:#?}");
        assert_eq!(job.stderr, "fatal: no way\n", "{job:#?}");
        // Without the message, the same job runs to its end.
        let job = run(shell("echo one; echo note >&2; echo two"), Path::new("sh"));
        assert!(job.success() && job.stdout == "one\ntwo\n", "{job:#?}");
    }

    #[test]
    fn launcher_reports_are_not_the_programs_lines() {
        let stderr = "sqmr: error: one\n\
            --------------------------------------------------------------------------\n\
            prterun detected that one or more processes exited with non-zero status,\n\
            --------------------------------------------------------------------------\n\
            [vm:23528] PMIX ERROR: PMIX_ERR_UNREACH in file pmix_server.c at line 3146\n\
            ===================================================================================\n\
            [vm:1] PMIX ERROR: PMIX_ERR_NOT_FOUND in file x.c\n\
            sqmr: error: two";
        assert_eq!(
            program_lines(stderr),
            [
                "sqmr: error: one",
                "[vm:1] PMIX ERROR: PMIX_ERR_NOT_FOUND in file x.c",
                "sqmr: error: two"
            ]
        );
    }
}
