//! The daemons: booting `slurmctld` and one `slurmd` per node, waiting until every node
//! is idle, and stopping exactly what was started (and what a killed test left behind).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use mpitest::procs::{processes_in_mount_namespace, signal};

use crate::config::{free_ports, short_hostname};
use crate::namespaces::{in_namespace, remount_cgroups};
use crate::{Cluster, Config, DIR_PREFIX};

/// One daemon the cluster started.
pub(crate) struct Daemon {
    name: String,
    child: Child,
    pid_file: PathBuf,
    /// `/proc/PID/ns/mnt` of a slurmd: every process in it belongs to that node.
    mount_ns: Option<PathBuf>,
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
pub(crate) fn stop_leftovers() {
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
    pub(crate) fn boot(&mut self, config: &Config) -> Result<(), String> {
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

    pub(crate) fn stop(&mut self) {
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
