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

use mpitest::procs::{processes_in_mount_namespace, signal};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use mpitest::{Family, Installation, Job};

/// Prefix of every cluster directory in the temporary directory.
const DIR_PREFIX: &str = "xylem-slurm-";

/// How the cluster is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Nodes, named `n1` … `nN`.
    pub nodes: usize,
    /// CPUs each node declares (more than the machine has is fine, and needed for jobs of
    /// many ranks).
    pub cpus_per_node: usize,
    /// `MpiDefault` (tests pass `--mpi=` explicitly anyway).
    pub mpi_default: String,
    /// How long to wait for every node to become idle.
    pub start_limit: Duration,
    /// Network namespaces for the nodes, or `None` for this machine's network.
    pub networks: Option<NodeNetworks>,
}

/// Nodes in network namespaces of their own, made beforehand (the `netns` crate's hosts):
/// node `i` runs in `namespaces[i]` and is reached at `addresses[i]`; the controller and
/// every command of [`Cluster::command`] (so `srun`) run in the first namespace, as on a
/// login node that is also a compute node. The namespaces' owner holds
/// [`mpitest::JobLock`]; a cluster on them does not take it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeNetworks {
    /// `ip netns` names, one per node.
    pub namespaces: Vec<String>,
    /// Each node's address on the control network, reachable from every namespace.
    pub addresses: Vec<String>,
}

impl Config {
    /// `nodes` nodes of 16 CPUs, `MpiDefault=pmix`, 30 s to come up.
    pub fn nodes(nodes: usize) -> Config {
        Config {
            nodes,
            cpus_per_node: 16,
            mpi_default: "pmix".to_string(),
            start_limit: Duration::from_secs(30),
            networks: None,
        }
    }

    /// One node per network namespace, as [`NodeNetworks`] describes.
    pub fn in_namespaces(networks: NodeNetworks) -> Config {
        assert_eq!(networks.namespaces.len(), networks.addresses.len());
        Config {
            networks: Some(networks.clone()),
            ..Config::nodes(networks.namespaces.len())
        }
    }
}

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

/// One daemon the cluster started.
struct Daemon {
    name: String,
    child: Child,
    pid_file: PathBuf,
    /// `/proc/PID/ns/mnt` of a slurmd: every process in it belongs to that node.
    mount_ns: Option<PathBuf>,
}

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

/// Ports that are free now on 127.0.0.1 (bound and released at once).
fn free_ports(n: usize) -> Result<Vec<u16>, String> {
    let listeners: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("cannot find a free port: {e}"))?;
    listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.port()))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())
}

fn short_hostname() -> Result<String, String> {
    let out = Command::new("hostname")
        .arg("-s")
        .output()
        .map_err(|e| format!("hostname -s: {e}"))?;
    let name = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if name.is_empty() {
        Err("hostname -s printed nothing".to_string())
    } else {
        Ok(name)
    }
}

/// Shell commands (each followed by `&& `) that mount again, in a fresh sysfs, the file
/// systems this machine has under `/sys/fs/cgroup` (a mount table in `/proc/mounts`
/// form), in table order so that parents come first. A cgroup hierarchy mounted again
/// with the same options is the same hierarchy, so the node's slurmd sees the machine's.
fn remount_cgroups(mounts: &str) -> String {
    let mut out = String::new();
    for line in mounts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 || !(f[1] == "/sys/fs/cgroup" || f[1].starts_with("/sys/fs/cgroup/")) {
            continue;
        }
        let _ = write!(
            out,
            "mkdir -p '{dir}' && mount -t {fstype} -o '{opts}' {source} '{dir}' && ",
            dir = f[1],
            fstype = f[2],
            opts = f[3],
            source = f[0]
        );
    }
    out
}

/// `program`, inside network namespace `ns` when there is one. `ip netns exec` enters it
/// and execs the program, so the child's pid is the program's either way.
fn in_namespace(ns: Option<&str>, program: &str) -> Command {
    match ns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns, program]);
            c
        }
        None => Command::new(program),
    }
}

/// The command line of process `pid`, NUL separators as spaces.
fn cmdline(pid: u32) -> Option<String> {
    fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
}

fn read_pid(file: &Path) -> Option<u32> {
    fs::read_to_string(file).ok()?.trim().parse().ok()
}

/// Stops daemons of clusters whose test process died without dropping them: a cluster
/// directory in the temporary directory whose owner (named in `owner`) is gone. Only
/// processes whose command line names that directory's `slurm.conf` are signalled.
fn stop_leftovers() {
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with(DIR_PREFIX) {
            continue;
        }
        let dir = entry.path();
        let owner_alive = read_pid(&dir.join("owner"))
            .is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
        if owner_alive {
            continue;
        }
        let conf = dir.join("slurm.conf").to_string_lossy().into_owned();
        let Ok(files) = fs::read_dir(&dir) else {
            continue;
        };
        let mut pids: Vec<u32> = files
            .flatten()
            .filter(|f| f.file_name().to_string_lossy().ends_with(".pid"))
            .filter_map(|f| read_pid(&f.path()))
            .filter(|pid| cmdline(*pid).is_some_and(|c| c.contains(&conf)))
            .collect();
        // The slurmds first, so that the controller sees them go.
        pids.sort_by_key(|pid| cmdline(*pid).is_some_and(|c| c.contains("slurmctld")));
        for pid in pids {
            if let Ok(ns) = fs::read_link(format!("/proc/{pid}/ns/mnt")) {
                let own = fs::read_link("/proc/self/ns/mnt").ok();
                if own.as_ref() != Some(&ns) {
                    for p in processes_in_mount_namespace(&ns) {
                        signal(p, "KILL");
                    }
                }
            }
            signal(pid, "KILL");
        }
        let _ = fs::remove_dir_all(&dir);
    }
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
        cluster.boot(config).map_err(failed)?;
        Ok(cluster)
    }

    fn boot(&mut self, config: &Config) -> Result<(), String> {
        let d = self.dir.path().to_path_buf();
        let io = |e: std::io::Error| e.to_string();
        fs::write(d.join("owner"), std::process::id().to_string()).map_err(io)?;
        for sub in ["state", "spool", "pmix"] {
            fs::create_dir_all(d.join(sub)).map_err(io)?;
        }
        for node in &self.nodes {
            fs::create_dir_all(d.join("spool").join(node)).map_err(io)?;
            fs::create_dir_all(d.join(format!("pmix-{node}"))).map_err(io)?;
        }
        let ports = free_ports(self.nodes.len() + 1)?;
        let host = short_hostname()?;
        fs::write(d.join("slurm.conf"), self.slurm_conf(config, &host, &ports)).map_err(io)?;
        fs::write(
            d.join("mpi.conf"),
            format!("PMIxCliTmpDirBase={}\n", d.join("pmix").display()),
        )
        .map_err(io)?;
        let conf = self.conf();

        let log = |name: &str| -> Result<Stdio, String> {
            fs::File::create(d.join(format!("{name}.out")))
                .map(Stdio::from)
                .map_err(|e| e.to_string())
        };
        let node_namespace = |i: usize| config.networks.as_ref().map(|n| n.namespaces[i].as_str());
        let mut ctld = in_namespace(node_namespace(0), "slurmctld");
        ctld.args(["-D", "-c", "-f"])
            .arg(&conf)
            .env("SLURM_CONF", &conf)
            .stdin(Stdio::null())
            .stdout(log("slurmctld")?)
            .stderr(log("slurmctld")?);
        let child = ctld
            .spawn()
            .map_err(|e| format!("cannot start slurmctld: {e}"))?;
        self.slurmctld = Some(Daemon {
            name: "slurmctld".to_string(),
            child,
            pid_file: d.join("slurmctld.pid"),
            mount_ns: None,
        });

        for (i, node) in self.nodes.clone().into_iter().enumerate() {
            // `ip netns exec` mounts a sysfs of the namespace (the ranks' network discovery
            // reads it) without the cgroup file systems under it, which slurmd needs.
            let cgroups = if config.networks.is_some() {
                let mounts = fs::read_to_string("/proc/self/mounts").map_err(io)?;
                remount_cgroups(&mounts)
            } else {
                String::new()
            };
            let script = format!(
                "{cgroups}mount --bind '{pmix_node}' '{pmix}' && \
                 mount -t tmpfs -o size=512m,mode=1777 tmpfs /dev/shm && \
                 hostname {node} && exec slurmd -D -f '{conf}' -N {node}",
                pmix_node = d.join(format!("pmix-{node}")).display(),
                pmix = d.join("pmix").display(),
                conf = conf.display(),
            );
            let child = in_namespace(node_namespace(i), "unshare")
                .args(["--mount", "--uts", "--propagation", "private", "sh", "-c"])
                .arg(&script)
                .env("SLURM_CONF", &conf)
                .stdin(Stdio::null())
                .stdout(log(&format!("slurmd-{node}"))?)
                .stderr(log(&format!("slurmd-{node}"))?)
                .spawn()
                .map_err(|e| format!("cannot start slurmd for {node}: {e}"))?;
            self.slurmds.push(Daemon {
                name: format!("slurmd {node}"),
                child,
                pid_file: d.join(format!("slurmd-{node}.pid")),
                mount_ns: None,
            });
        }
        self.wait_idle(config.start_limit)?;
        // unshare and sh exec into slurmd, so the child is the daemon: its pid file must
        // say so, and its mount namespace names the node's processes.
        for daemon in self.slurmds.iter_mut().chain(self.slurmctld.as_mut()) {
            let pid = daemon.child.id();
            match read_pid(&daemon.pid_file) {
                Some(p) if p == pid => {}
                other => {
                    return Err(format!(
                        "{} (pid {pid}) wrote pid {other:?} into {}",
                        daemon.name,
                        daemon.pid_file.display()
                    ))
                }
            }
            if daemon.name.starts_with("slurmd") {
                let ns = fs::read_link(format!("/proc/{pid}/ns/mnt"))
                    .map_err(|e| format!("{}: no mount namespace: {e}", daemon.name))?;
                if fs::read_link("/proc/self/ns/mnt").ok().as_ref() == Some(&ns) {
                    return Err(format!("{} shares the test's mount namespace", daemon.name));
                }
                daemon.mount_ns = Some(ns);
            }
        }
        Ok(())
    }

    fn slurm_conf(&self, config: &Config, host: &str, ports: &[u16]) -> String {
        let d = self.dir.path().display();
        let addresses: Vec<String> = match &config.networks {
            Some(n) => n.addresses.clone(),
            None => vec!["127.0.0.1".to_string(); self.nodes.len()],
        };
        let mut conf = format!(
            "# A local test cluster of xylem's slurmtest; everything lives in {d}.\n\
             ClusterName=xylemtest\n\
             SlurmctldHost={host}({ctld_addr})\n\
             SlurmctldPort={ctld_port}\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             AuthType=auth/none\n\
             CredType=cred/none\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\n\
             JobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\n\
             SchedulerType=sched/builtin\n\
             SelectType=select/cons_tres\n\
             SelectTypeParameters=CR_CPU\n\
             MpiDefault={mpi}\n\
             SlurmdParameters=config_overrides\n\
             ReturnToService=2\n\
             MinJobAge=30\n\
             KillWait=5\n\
             StateSaveLocation={d}/state\n\
             SlurmdSpoolDir={d}/spool/%n\n\
             SlurmctldPidFile={d}/slurmctld.pid\n\
             SlurmdPidFile={d}/slurmd-%n.pid\n\
             SlurmctldLogFile={d}/slurmctld.log\n\
             SlurmdLogFile={d}/slurmd-%n.log\n",
            ctld_port = ports[0],
            ctld_addr = addresses[0],
            mpi = config.mpi_default,
        );
        for ((node, port), addr) in self.nodes.iter().zip(&ports[1..]).zip(&addresses) {
            let _ = writeln!(
                conf,
                "NodeName={node} NodeHostname={host} NodeAddr={addr} Port={port} \
                 CPUs={} State=UNKNOWN",
                config.cpus_per_node
            );
        }
        conf += "PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
        conf
    }

    fn wait_idle(&mut self, limit: Duration) -> Result<(), String> {
        let start = Instant::now();
        let mut last = String::new();
        while start.elapsed() < limit {
            for daemon in self.slurmds.iter_mut().chain(self.slurmctld.as_mut()) {
                if let Ok(Some(status)) = daemon.child.try_wait() {
                    // The directory goes with the cluster: quote the daemon's own words.
                    let file = daemon.name.replace(' ', "-");
                    let tail = |ext: &str| {
                        let text =
                            fs::read_to_string(self.dir.path().join(format!("{file}.{ext}")))
                                .unwrap_or_default();
                        let lines: Vec<&str> = text.lines().collect();
                        lines[lines.len().saturating_sub(15)..].join("\n")
                    };
                    return Err(format!(
                        "{} exited ({status}); its output:\n{}\nits log:\n{}",
                        daemon.name,
                        tail("out"),
                        tail("log")
                    ));
                }
            }
            let out = self
                .command("sinfo")
                .args(["-h", "-N", "-o", "%N %t"])
                .output()
                .map_err(|e| format!("sinfo: {e}"))?;
            last = String::from_utf8_lossy(&out.stdout).into_owned();
            let idle = last
                .lines()
                .filter(|l| l.split_whitespace().nth(1) == Some("idle"))
                .count();
            if out.status.success() && idle == self.nodes.len() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(format!(
            "not every node idle after {limit:?}; sinfo says {:?}; logs in {}",
            last.trim(),
            self.dir.path().display()
        ))
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

    /// Runs `argv` (a Slurm client such as `srun …`) against the cluster under
    /// `timeout -k 5 LIMIT`, with `env` added, and collects its output. A test never
    /// calls [`mpitest::launch`] while it holds a cluster: the cluster holds the job lock.
    pub fn run(&self, limit: Duration, argv: &[&str], env: &[(&str, &str)]) -> Job {
        let attempt = |extra: &[(&str, &str)]| {
            let mut command = self.command("timeout");
            command
                .args(["-k", "5"])
                .arg(limit.as_secs().max(1).to_string())
                .args(argv);
            for (key, value) in env.iter().chain(extra) {
                command.env(key, value);
            }
            mpitest::run(command, Path::new(argv.first().copied().unwrap_or("srun")))
        };
        let job = attempt(&[]);
        if !pmi1_line_misread(&job) {
            return job;
        }
        // Slurm 22.05's pmi2 plugin takes a PMI-1 request from one read of at most 1024
        // bytes (its source says "TODO: read until newline"); a longer `cmd=put` line is
        // cut, and the job dies in MPI_Init before a payload byte moves. MPICH 5 puts its
        // UCX business card in segments whose encoded length depends on the bytes of the
        // card, and the card it allgathers carries bytes of the heap beyond the address
        // (pointers and strings in the line of a CI run). The job runs once more with
        // fresh allocations zeroed (glibc's MALLOC_PERTURB_=255), which encode short;
        // a second refusal is the test's failure.
        eprintln!(
            "NOTE: slurmstepd cut a PMI-1 request; running {argv:?} once more \
             with MALLOC_PERTURB_=255"
        );
        attempt(&[("MALLOC_PERTURB_", "255")])
    }

    /// The `srun` command that the `place` crate gives for `layout` with `program args`
    /// (what `xylem place … --launcher srun` prints), its host file written into the
    /// cluster's directory; its `argv` and `env` are ready for [`Cluster::run`].
    pub fn placed_srun(
        &self,
        layout: &place::Layout,
        mpi: place::Mpi,
        program: &Path,
        args: &[String],
    ) -> place::Command {
        let hostfile = self.dir.path().join("hosts.txt");
        let command = place::Command::new(
            layout,
            place::Launcher::Srun,
            Some(mpi),
            hostfile.to_str().expect("a UTF-8 temporary path"),
            program.to_str().expect("a UTF-8 program path"),
            args,
        )
        .expect("the layout and launcher fit");
        fs::write(&hostfile, &command.file.contents)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", hostfile.display()));
        command
    }

    /// The tail of a daemon's log (`slurmctld` or `slurmd-n1`, …), for failure messages.
    pub fn log_tail(&self, name: &str, lines: usize) -> String {
        let text =
            fs::read_to_string(self.dir.path().join(format!("{name}.log"))).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    fn stop(&mut self) {
        // Jobs first, so that no step is left running when its slurmd goes.
        let _ = self
            .command("timeout")
            .args(["10", "scancel", "--full", "--user=root"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            let out = self.command("timeout").args(["5", "squeue", "-h"]).output();
            match out {
                Ok(o) if o.status.success() && !o.stdout.is_empty() => {
                    std::thread::sleep(Duration::from_millis(100))
                }
                _ => break,
            }
        }
        for mut daemon in self.slurmds.drain(..) {
            stop_daemon(&mut daemon);
        }
        if let Some(mut daemon) = self.slurmctld.take() {
            stop_daemon(&mut daemon);
        }
    }
}

/// Stops one daemon the cluster started: SIGTERM, up to 10 s, then SIGKILL; then every
/// process left in its node's mount namespace (job steps of a test that timed out).
fn stop_daemon(daemon: &mut Daemon) {
    let pid = daemon.child.id();
    if let Some(p) = read_pid(&daemon.pid_file) {
        if p != pid {
            eprintln!(
                "slurmtest: {} has pid {pid} but its pid file says {p}; stopping {pid} only",
                daemon.name
            );
        }
    }
    if matches!(daemon.child.try_wait(), Ok(None)) {
        signal(pid, "TERM");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline && matches!(daemon.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(50));
        }
        if matches!(daemon.child.try_wait(), Ok(None)) {
            eprintln!(
                "slurmtest: {} did not stop on SIGTERM; killing",
                daemon.name
            );
            let _ = daemon.child.kill();
        }
    }
    let _ = daemon.child.wait();
    if let Some(ns) = &daemon.mount_ns {
        for p in processes_in_mount_namespace(ns) {
            signal(p, "KILL");
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A binary of the workspace built beside the running test: `target/<profile>/NAME`, found
/// from the test executable (`target/<profile>/deps/…`). Panics with what to build when it
/// is missing (`cargo test --workspace` builds every binary first).
pub fn sibling_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its own path");
    let profile = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test runs from target/<profile>/deps");
    let path = profile.join(name);
    assert!(
        path.is_file(),
        "{} is missing: build it into the same target directory first \
         (cargo test --workspace does; or cargo build -p <its crate>)",
        path.display()
    );
    path
}

/// What the ranks of `mpi` need in their environment under `srun`, beyond the
/// launcher's: Intel MPI finds Slurm's PMI-2 only through `I_MPI_PMI_LIBRARY` (it
/// carries no PMI-2 client of its own that `srun --mpi=pmi2` could talk to).
pub fn srun_env(mpi: Installation) -> Vec<(&'static str, String)> {
    match mpi {
        Installation::IntelMpi => vec![("I_MPI_PMI_LIBRARY", slurm_pmi2_library())],
        _ => Vec::new(),
    }
}

/// Slurm's PMI-2 client library (`libpmi2.so` of the libpmi2 package).
pub fn slurm_pmi2_library() -> String {
    let candidates = [
        "/usr/lib/x86_64-linux-gnu/libpmi2.so.0",
        "/usr/lib/x86_64-linux-gnu/libpmi2.so",
        "/usr/lib64/libpmi2.so",
        "/usr/lib/libpmi2.so",
    ];
    candidates
        .iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or(&candidates[0])
        .to_string()
}

/// Whether `job` failed because slurmstepd's pmi2 plugin cut a PMI-1 request it read in
/// pieces (its messages `value not properly terminated` and `request not begin with
/// 'cmd='`), rather than for anything the program did.
pub fn pmi1_line_misread(job: &Job) -> bool {
    !job.success()
        && job
            .stderr
            .contains("mpi/pmi2: value not properly terminated")
        && job
            .stderr
            .contains("mpi/pmi2: request not begin with 'cmd='")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn job(code: i32, stderr: &str) -> Job {
        Job {
            code: Some(code),
            timed_out: false,
            stdout: String::new(),
            stderr: stderr.to_string(),
            elapsed: Duration::from_millis(120),
        }
    }

    #[test]
    fn only_slurms_cut_pmi1_request_counts_as_misread() {
        // As slurmstepd printed it in a CI run (MPICH 5, Slurm 22.05.8).
        let cut =
            "slurmstepd-n1: error: mpi/pmi2: value not properly terminated in client request\n\
                   slurmstepd-n1: error: mpi/pmi2: request not begin with 'cmd='\n\
                   slurmstepd-n1: error: mpi/pmi2: invalid client request\n";
        assert!(pmi1_line_misread(&job(15, cut)));
        assert!(!pmi1_line_misread(&job(0, cut)));
        assert!(!pmi1_line_misread(&job(
            15,
            "Fatal error in MPI_Init: other MPI error"
        )));
    }

    #[test]
    fn free_ports_are_distinct() {
        let ports = free_ports(5).unwrap();
        let mut sorted = ports.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 5);
    }

    #[test]
    fn cgroup_mounts_are_repeated_in_order() {
        let table = "sysfs /sys sysfs rw 0 0\n\
                     tmpfs /sys/fs/cgroup tmpfs rw,mode=755 0 0\n\
                     cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n\
                     cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n\
                     tmpfs /dev/shm tmpfs rw 0 0\n";
        assert_eq!(
            remount_cgroups(table),
            "mkdir -p '/sys/fs/cgroup' && mount -t tmpfs -o 'rw,mode=755' tmpfs '/sys/fs/cgroup' && \
             mkdir -p '/sys/fs/cgroup/cpu' && mount -t cgroup -o 'rw,cpu' cgroup '/sys/fs/cgroup/cpu' && \
             mkdir -p '/sys/fs/cgroup/unified' && mount -t cgroup2 -o 'rw' cgroup2 '/sys/fs/cgroup/unified' && "
        );
        assert_eq!(
            remount_cgroups("cgroup2 /sys/fs/cgroupfoo cgroup2 rw 0 0"),
            ""
        );
    }

    #[test]
    fn config_defaults() {
        let c = Config::nodes(3);
        assert_eq!(c.nodes, 3);
        assert!(c.cpus_per_node >= 8);
    }
}
