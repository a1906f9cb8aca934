//! A Slurm cluster of several nodes on one machine, for tests that launch with `srun`.
//!
//! [`Cluster::start`] writes `slurm.conf` and `mpi.conf` into a private temporary
//! directory, starts one `slurmctld` and one `slurmd` per node (`n1`, `n2`, …; Debian's
//! Slurm allows several slurmds per machine), and waits until every node is idle. Each
//! slurmd runs in a mount and UTS namespace of its own, with
//!
//! - its node name as host name, so that `MPI_Get_processor_name` differs per node as on a
//!   real cluster;
//! - a private tmpfs on `/dev/shm`, since Open MPI's shared-memory segments are named
//!   after the host and would collide between "nodes";
//! - a private PMIx client directory bind-mounted over `PMIxCliTmpDirBase`, since the
//!   PMIx plugin's per-step directories would collide too.
//!
//! Authentication is off (`auth/none`, `cred/none`: no munge), there is no accounting
//! and no cgroup, and the nodes declare more CPUs than the machine has
//! (`SlurmdParameters=config_overrides`), so that jobs of many ranks are not queued for
//! ever. The daemons run in the foreground as children of the test; dropping the
//! [`Cluster`] cancels its jobs and stops exactly the daemons it started (checked against
//! their pid files) and every process left in their node namespaces — nothing else.
//! A cluster left behind by a test process that was killed is stopped the same way the
//! next time a cluster starts. The cluster holds [`mpitest::JobLock`] while it lives, so
//! it never runs beside another MPI job of the suite.
//!
//! Where a cluster cannot start at all (not root, no Slurm binaries), [`Cluster::start`]
//! returns [`StartError::Unavailable`] with the reason, and a test must say that it
//! skips; [`StartError::Failed`] means the daemons were there but did not come up, which
//! is a failure.

#![forbid(unsafe_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

mod config;
mod daemons;
mod jobs;
mod namespaces;

pub use config::{Config, NodeNetworks};
pub use jobs::{pmi1_line_misread, sibling_binary, slurm_pmi2_library, srun_env, srun_plugin};
pub use mpitest::{Family, Installation, Job};

use daemons::{stop_leftovers, Daemon};
use namespaces::in_namespace;

/// Prefix of every cluster directory in the temporary directory.
const DIR_PREFIX: &str = "xylem-slurm-";

/// Why a cluster did not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartError {
    /// This machine cannot run one (not root, Slurm not installed): skip, saying why.
    Unavailable(String),
    /// The daemons are there but the cluster did not come up: fail.
    Failed(String),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::Unavailable(why) => write!(f, "no local Slurm cluster here: {why}"),
            StartError::Failed(why) => write!(f, "the local Slurm cluster did not start: {why}"),
        }
    }
}

impl std::error::Error for StartError {}

/// A running local Slurm cluster. Dropping it stops everything it started.
pub struct Cluster {
    dir: tempfile::TempDir,
    nodes: Vec<String>,
    slurmds: Vec<Daemon>,
    slurmctld: Option<Daemon>,
    /// The namespace of the controller and of [`Cluster::command`], if any.
    head_namespace: Option<String>,
    /// `None` when the namespaces' owner holds the lock.
    _lock: Option<mpitest::JobLock>,
}

/// Whether `program` is an executable file on `PATH` (or under `/usr/sbin`, where
/// Debian puts the daemons).
fn on_path(program: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .any(|dir| dir.join(program).is_file())
}

fn is_root() -> Result<bool, String> {
    let out = Command::new("id")
        .arg("-u")
        .output()
        .map_err(|e| format!("id -u: {e}"))?;
    Ok(String::from_utf8_lossy(&out.stdout).trim() == "0")
}

impl Cluster {
    /// Starts a cluster of `nodes` nodes with the defaults of [`Config::nodes`].
    pub fn start(nodes: usize) -> Result<Cluster, StartError> {
        Cluster::start_with(&Config::nodes(nodes))
    }

    /// Starts a cluster as `config` says, or says why it cannot.
    pub fn start_with(config: &Config) -> Result<Cluster, StartError> {
        let unavailable = StartError::Unavailable;
        if !is_root().map_err(unavailable)? {
            return Err(StartError::Unavailable(
                "slurmd must run as root to start job steps (not root here)".to_string(),
            ));
        }
        let missing: Vec<&str> = [
            "slurmctld",
            "slurmd",
            "srun",
            "sinfo",
            "squeue",
            "scancel",
            "unshare",
        ]
        .into_iter()
        .filter(|p| !on_path(p))
        .collect();
        if !missing.is_empty() {
            return Err(StartError::Unavailable(format!(
                "not installed: {} (scripts/install-deps.sh installs slurm-wlm slurmctld \
                 slurmd slurm-client)",
                missing.join(", ")
            )));
        }
        // The daemons' ports are free when chosen, but another process (an MPI job's
        // TCP port, a test beside this one) may take one before the daemon binds it: then
        // the cluster starts again on other ports, at most three times.
        let mut attempt = 1;
        loop {
            let lock = config.networks.is_none().then(mpitest::JobLock::acquire);
            stop_leftovers();
            let failed = StartError::Failed;
            let dir = tempfile::Builder::new()
                .prefix(DIR_PREFIX)
                .tempdir()
                .map_err(|e| failed(format!("cannot make the cluster directory: {e}")))?;
            let nodes: Vec<String> = (1..=config.nodes).map(|i| format!("n{i}")).collect();
            let mut cluster = Cluster {
                dir,
                nodes,
                slurmds: Vec::new(),
                slurmctld: None,
                head_namespace: config.networks.as_ref().map(|n| n.namespaces[0].clone()),
                _lock: lock,
            };
            // On failure, dropping `cluster` stops whatever did start.
            match cluster.boot(config) {
                Ok(()) => return Ok(cluster),
                Err(e) if e.contains("Address already in use") && attempt < 3 => {
                    eprintln!("slurmtest: a daemon's port was taken meanwhile; starting again");
                    drop(cluster);
                    attempt += 1;
                }
                Err(e) => return Err(failed(e)),
            }
        }
    }

    /// The node names, `n1` first.
    pub fn nodes(&self) -> &[String] {
        &self.nodes
    }

    /// The cluster's private directory (configuration, state, logs); a scratch place for
    /// host files too.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The `slurm.conf` that clients must be given (`SLURM_CONF`).
    pub fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    /// `program` with `SLURM_CONF` pointing at this cluster, in the cluster directory,
    /// and without the Slurm, PMI and Open MPI variables of the test's own environment;
    /// inside the first node's network namespace when the nodes have their own.
    pub fn command(&self, program: &str) -> Command {
        let mut command = in_namespace(self.head_namespace.as_deref(), program);
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            if ["SLURM_", "PMI_", "PMIX_", "OMPI_"]
                .iter()
                .any(|p| key.starts_with(p))
            {
                command.env_remove(key.as_ref());
            }
        }
        command
            .env("SLURM_CONF", self.conf())
            .current_dir(self.dir.path());
        command
    }

    /// The tail of a daemon's log (`slurmctld` or `slurmd-n1`, …), for failure messages.
    pub fn log_tail(&self, name: &str, lines: usize) -> String {
        let text =
            fs::read_to_string(self.dir.path().join(format!("{name}.log"))).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What a test prints when it does not apply to the MPI under test, then returns.
pub fn skip(why: &str) {
    eprintln!("SKIPPED: {why}");
}

/// The cluster for a test: `Some` when it started, `None` after printing
/// `SKIPPED: …` when this machine cannot run one (under `CI=true` that fails instead);
/// panics when it should have started but did not.
pub fn cluster_or_skip(nodes: usize) -> Option<Cluster> {
    match Cluster::start(nodes) {
        Ok(cluster) => Some(cluster),
        Err(StartError::Unavailable(why)) => {
            mpitest::unavailable(&format!("no local Slurm cluster: {why}"));
            None
        }
        Err(e @ StartError::Failed(_)) => panic!("{e}"),
    }
}
