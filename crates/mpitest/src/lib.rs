//! Launching real MPI jobs from integration tests.
//!
//! - The MPI library is chosen by `XYLEM_MPI` (`openmpi`, the default, or `mpich`); it must
//!   be the one the binaries under test were built against (`make test` sets both).
//! - Jobs run one at a time, across test binaries and processes, behind a file lock:
//!   several launchers at once on a two-core machine crawl and time out.
//! - Every job runs under `timeout`, so a hang fails the test instead of the whole run.

use std::fs::File;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// The MPI library a job is launched with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// Open MPI's `mpirun`.
    OpenMpi,
    /// MPICH's hydra `mpiexec.mpich`.
    Mpich,
}

impl Flavour {
    /// The flavour named by `XYLEM_MPI`; panics on a value it does not know.
    pub fn from_env() -> Flavour {
        match std::env::var("XYLEM_MPI").as_deref() {
            Err(_) | Ok("") | Ok("openmpi") => Flavour::OpenMpi,
            Ok("mpich") => Flavour::Mpich,
            Ok(other) => panic!("XYLEM_MPI={other}: expected openmpi or mpich"),
        }
    }

    /// A word found in `MPI_Get_library_version` of this flavour.
    pub fn library_marker(self) -> &'static str {
        match self {
            Flavour::OpenMpi => "Open MPI",
            Flavour::Mpich => "MPICH",
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
pub fn launch(flavour: Flavour, ranks: usize, exe: &Path, args: &[&str], limit: Duration) -> Job {
    launch_with_env(flavour, ranks, exe, args, &[], limit)
}

/// As [`launch`], with extra environment variables for the ranks.
pub fn launch_with_env(
    flavour: Flavour,
    ranks: usize,
    exe: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    limit: Duration,
) -> Job {
    let _lock = JobLock::acquire();
    let mut command = command(flavour, ranks, exe, args, limit);
    for (key, value) in env {
        command.env(key, value);
    }
    run(command, exe)
}

/// The command line of a job of `ranks` ranks running `exe args` with `flavour`'s
/// launcher under `timeout` (`limit`, then SIGKILL 5 s later). The caller runs it,
/// holding the [`JobLock`].
pub fn command(
    flavour: Flavour,
    ranks: usize,
    exe: &Path,
    args: &[&str],
    limit: Duration,
) -> Command {
    let mut command = Command::new("timeout");
    command
        .arg("-k")
        .arg("5")
        .arg(format!("{}", limit.as_secs().max(1)));
    match flavour {
        Flavour::OpenMpi => {
            command
                .arg("mpirun")
                .args(["--oversubscribe", "--bind-to", "none", "-n"])
                .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        }
        Flavour::Mpich => {
            command.arg("mpiexec.mpich").arg("-n");
        }
    }
    command.arg(ranks.to_string()).arg(exe).args(args);
    command
}

/// Runs a prepared command (the caller holds the [`JobLock`] and has put the time limit
/// in the command line, with `timeout -k 5 SECONDS` first) and collects its output.
pub fn run(mut command: Command, what: &Path) -> Job {
    let start = Instant::now();
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot start the launcher for {}: {e}", what.display()));
    let code = output.status.code();
    Job {
        code,
        timed_out: code == Some(124) || code == Some(137),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
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
