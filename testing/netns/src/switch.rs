//! Many MPI hosts on one switch: [`Fabric::create`] builds `n` network namespaces
//! (`xys1`, `xys2`, …), each with one interface `eth0` cabled to a port of a Linux bridge
//! in a switch namespace (`xysw`), all in 10.40.0.0/24 (host `k`, from 0, at
//! `10.40.0.{k+1}`). Each host has its own host name, mount table and `/etc/hosts`, as
//! on [`crate::Cluster`]. A host's cable can be throttled in both directions
//! ([`Fabric::throttle_host`], `tc tbf` on both ends), or only the traffic between two
//! hosts ([`Fabric::throttle_between`], an `htb` class per direction): a slow node and a
//! slow link, for the scan to find.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use crate::{agent_script, hold_mount_namespace, host_command, job_env, sh, stop_host_namespaces};
use crate::{Family, Installation, Job, Unavailable};

/// The switch's namespace.
const SWITCH: &str = "xysw";

/// The hosts' subnet, first three octets.
pub const SUBNET: &str = "10.40.0";

/// The most hosts a fabric has (names and addresses stay simple below that).
pub const MAX_HOSTS: usize = 32;

/// A running fabric of hosts on one switch. Dropping it removes everything it made.
pub struct Fabric {
    hosts: Vec<String>,
    dir: tempfile::TempDir,
    agent: PathBuf,
    holders: Vec<Child>,
    _lock: mpitest::JobLock,
}

fn host_name(k: usize) -> String {
    format!("xys{}", k + 1)
}

fn all_host_names() -> Vec<String> {
    (0..MAX_HOSTS).map(host_name).collect()
}

fn teardown() {
    let hosts = all_host_names();
    stop_host_namespaces(&hosts);
    for host in hosts.iter().map(String::as_str).chain([SWITCH]) {
        if Path::new("/run/netns").join(host).exists() {
            let _ = Command::new("ip").args(["netns", "del", host]).output();
        }
        let _ = fs::remove_dir_all(Path::new("/etc/netns").join(host));
    }
}

fn netns(host: &str, argv: &[&str]) -> Result<String, String> {
    let mut full = vec!["ip", "netns", "exec", host];
    full.extend_from_slice(argv);
    sh(&full)
}

impl Fabric {
    /// Builds a fabric of `n` hosts (2 to [`MAX_HOSTS`]), or says why it cannot be built.
    pub fn create(n: usize) -> Result<Fabric, Unavailable> {
        assert!((2..=MAX_HOSTS).contains(&n), "a fabric of {n} hosts");
        let lock = mpitest::JobLock::acquire();
        let uid = sh(&["id", "-u"]).map_err(Unavailable)?;
        if uid.trim() != "0" {
            return Err(Unavailable(format!(
                "network namespaces need root (uid is {})",
                uid.trim()
            )));
        }
        teardown();
        let dir = tempfile::tempdir().map_err(|e| Unavailable(e.to_string()))?;
        let agent = dir.path().join("agent");
        let mut fabric = Fabric {
            hosts: (0..n).map(host_name).collect(),
            dir,
            agent,
            holders: Vec::new(),
            _lock: lock,
        };
        fabric.build().map_err(|e| {
            teardown();
            Unavailable(e)
        })?;
        Ok(fabric)
    }

    fn build(&mut self) -> Result<(), String> {
        sh(&["ip", "netns", "add", SWITCH])?;
        sh(&["ip", "-n", SWITCH, "link", "add", "br0", "type", "bridge"])?;
        sh(&["ip", "-n", SWITCH, "link", "set", "br0", "up"])?;
        let mut hosts_file = String::from("127.0.0.1 localhost\n");
        for (k, host) in self.hosts.iter().enumerate() {
            hosts_file += &format!("{SUBNET}.{} {host}\n", k + 1);
        }
        for (k, host) in self.hosts.iter().enumerate() {
            sh(&["ip", "netns", "add", host])?;
            for key in ["all", "default"] {
                let setting = format!("net.ipv6.conf.{key}.disable_ipv6=1");
                netns(host, &["sysctl", "-qw", &setting])?;
            }
            sh(&["ip", "-n", host, "link", "set", "lo", "up"])?;
            let port = format!("p{}", k + 1);
            sh(&[
                "ip", "link", "add", "eth0", "netns", host, "type", "veth", "peer", "name", &port,
                "netns", SWITCH,
            ])?;
            sh(&["ip", "-n", SWITCH, "link", "set", &port, "master", "br0"])?;
            sh(&["ip", "-n", SWITCH, "link", "set", &port, "up"])?;
            let address = format!("{SUBNET}.{}/24", k + 1);
            sh(&["ip", "-n", host, "addr", "add", &address, "dev", "eth0"])?;
            sh(&["ip", "-n", host, "link", "set", "eth0", "up"])?;
            let etc = Path::new("/etc/netns").join(host);
            fs::create_dir_all(&etc).map_err(|e| format!("{}: {e}", etc.display()))?;
            fs::write(etc.join("hosts"), &hosts_file).map_err(|e| e.to_string())?;
        }
        for host in &self.hosts {
            self.holders.push(hold_mount_namespace(host)?);
        }
        let holders: Vec<(&str, u32)> = self
            .hosts
            .iter()
            .zip(&self.holders)
            .map(|(h, c)| (h.as_str(), c.id()))
            .collect();
        fs::write(&self.agent, agent_script(&holders)).map_err(|e| e.to_string())?;
        sh(&["chmod", "+x", self.agent.to_str().unwrap()])?;
        for host in &self.hosts {
            let ready = (0..100).any(|_| {
                let state =
                    netns(host, &["cat", "/sys/class/net/eth0/operstate"]).unwrap_or_default();
                let up = state.trim() == "up";
                if !up {
                    std::thread::sleep(Duration::from_millis(50));
                }
                up
            });
            if !ready {
                return Err(format!("eth0 on {host} did not come up"));
            }
        }
        // The bridge forwards once its ports have left the listening state.
        for k in 1..self.hosts.len() {
            let peer = format!("{SUBNET}.{}", k + 1);
            let answered = (0..20)
                .any(|_| netns(&self.hosts[0], &["ping", "-c", "1", "-W", "1", &peer]).is_ok());
            if !answered {
                return Err(format!(
                    "{} does not answer {} across the switch",
                    self.hosts[k], self.hosts[0]
                ));
            }
        }
        Ok(())
    }

    /// The hosts' names, in order.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// A scratch directory that lives as long as the fabric.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Limits host `k`'s cable to `mbit` megabits per second in both directions: `tbf` on
    /// its `eth0` (what it sends) and on its switch port (what it receives).
    pub fn throttle_host(&self, k: usize, mbit: u32) -> Result<(), String> {
        let rate = format!("{mbit}mbit");
        let port = format!("p{}", k + 1);
        for (ns, dev) in [(self.hosts[k].as_str(), "eth0"), (SWITCH, port.as_str())] {
            netns(
                ns,
                &[
                    "tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate", &rate, "burst",
                    "64kbit", "latency", "100ms",
                ],
            )?;
        }
        Ok(())
    }

    /// Limits the traffic between hosts `a` and `b` to `mbit` megabits per second each
    /// way, leaving their traffic with every other host alone: on each one's `eth0`, an
    /// `htb` class for packets to the other.
    pub fn throttle_between(&self, a: usize, b: usize, mbit: u32) -> Result<(), String> {
        let rate = format!("{mbit}mbit");
        for (from, to) in [(a, b), (b, a)] {
            let host = self.hosts[from].as_str();
            let dst = format!("{SUBNET}.{}/32", to + 1);
            netns(
                host,
                &[
                    "tc", "qdisc", "replace", "dev", "eth0", "root", "handle", "1:", "htb",
                    "default", "10",
                ],
            )?;
            netns(
                host,
                &[
                    "tc", "class", "replace", "dev", "eth0", "parent", "1:", "classid", "1:10",
                    "htb", "rate", "100gbit",
                ],
            )?;
            netns(
                host,
                &[
                    "tc", "class", "replace", "dev", "eth0", "parent", "1:", "classid", "1:20",
                    "htb", "rate", &rate, "ceil", &rate,
                ],
            )?;
            netns(
                host,
                &[
                    "tc", "filter", "replace", "dev", "eth0", "parent", "1:", "protocol", "ip",
                    "prio", "1", "u32", "match", "ip", "dst", &dst, "flowid", "1:20",
                ],
            )?;
        }
        Ok(())
    }

    /// Runs `program` with `per_host` ranks on every host (ranks in host order), launched
    /// from the first host with `mpi`'s launcher, under `timeout` (`seconds`). `env` goes
    /// to the launcher; [`crate::network_defaults`] keep messages off shared memory.
    pub fn launch(
        &self,
        mpi: Installation,
        per_host: usize,
        program: &[&str],
        env: &[(&str, &str)],
        seconds: u64,
    ) -> Job {
        let command = self.command(mpi, per_host, program, env, seconds);
        mpitest::run(command, Path::new(program[0]))
    }

    /// The command of [`Fabric::launch`], for a caller that starts it itself.
    pub fn command(
        &self,
        mpi: Installation,
        per_host: usize,
        program: &[&str],
        env: &[(&str, &str)],
        seconds: u64,
    ) -> Command {
        let total = (per_host * self.hosts.len()).to_string();
        let agent = self.agent.to_str().unwrap().to_string();
        let launcher = mpi.launcher().display().to_string();
        let hosts: Vec<String> = self
            .hosts
            .iter()
            .map(|h| format!("{h}:{per_host}"))
            .collect();
        let hosts = hosts.join(",");
        let subnet = format!("{SUBNET}.0/24");
        let mut inner: Vec<String> = ["timeout", "-k", "5", &seconds.to_string()]
            .map(String::from)
            .to_vec();
        match mpi.family() {
            Family::OpenMpi => {
                let (option, agent_key) = if mpi == Installation::OpenMpi5 {
                    ("--prtemca", "plm_ssh_agent")
                } else {
                    ("--mca", "plm_rsh_agent")
                };
                inner.extend(
                    [
                        &launcher,
                        "--allow-run-as-root",
                        "--host",
                        &hosts,
                        "-n",
                        &total,
                        option,
                        agent_key,
                        &agent,
                        option,
                        "oob_tcp_if_include",
                        &subnet,
                        "--mca",
                        "btl_tcp_if_include",
                        &subnet,
                    ]
                    .map(String::from),
                );
            }
            Family::Hydra => inner.extend(
                [
                    &launcher,
                    "-launcher",
                    "ssh",
                    "-launcher-exec",
                    &agent,
                    "-iface",
                    "eth0",
                    "-hosts",
                    &hosts,
                    "-n",
                    &total,
                ]
                .map(String::from),
            ),
        }
        inner.extend(program.iter().map(|s| s.to_string()));
        let mut command = self.on_host(0, &inner);
        job_env(&mut command, mpi, env);
        command
    }

    /// A command that runs `argv` on host `k`, in its namespaces, with its host name.
    pub fn on_host<S: AsRef<std::ffi::OsStr>>(&self, k: usize, argv: &[S]) -> Command {
        host_command(self.holders[k].id(), &self.hosts[k], argv)
    }
}

/// A fabric of `n` hosts for a test: `Some` when it could be built, `None` after printing
/// `SKIPPED: …` (under `CI=true` that fails the test instead).
pub fn fabric_or_skip(n: usize) -> Option<Fabric> {
    match Fabric::create(n) {
        Ok(f) => Some(f),
        Err(why) => {
            mpitest::unavailable(&format!("a switched fabric cannot be made here: {}", why.0));
            None
        }
    }
}

impl Drop for Fabric {
    fn drop(&mut self) {
        teardown();
        for holder in &mut self.holders {
            let _ = holder.kill();
            let _ = holder.wait();
        }
    }
}
