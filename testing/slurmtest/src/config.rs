//! How the cluster is built: its [`Config`], the nodes' networks, and the `slurm.conf`
//! written from them.

use std::fmt::Write as _;
use std::process::Command;
use std::time::Duration;

use crate::Cluster;

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

/// Ports that are free now on 127.0.0.1 (bound and released at once).
pub(crate) fn free_ports(n: usize) -> Result<Vec<u16>, String> {
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

pub(crate) fn short_hostname() -> Result<String, String> {
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

impl Cluster {
    pub(crate) fn slurm_conf(&self, config: &Config, host: &str, ports: &[u16]) -> String {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ports_are_distinct() {
        let ports = free_ports(5).unwrap();
        let mut sorted = ports.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 5);
    }

    #[test]
    fn config_defaults() {
        let c = Config::nodes(3);
        assert_eq!(c.nodes, 3);
        assert!(c.cpus_per_node >= 8);
    }
}
