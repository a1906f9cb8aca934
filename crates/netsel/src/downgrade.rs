//! What a translation loses without saying so elsewhere: a fast fabric driven over TCP on
//! its netdev when no item asked for `:tcp`, an interface the chosen transport refuses,
//! and a selection that leaves only the network the launcher controls the job through.
//! Each is a warning of the translation ([`crate::Translation::warnings`]); `--strict`
//! makes them errors.

use std::collections::BTreeMap;
use std::net::IpAddr;

use crate::flavour::Flavour;
use crate::grammar::Qualifier;
use crate::host::Host;
use crate::path::{Chosen, Path};
use crate::resolve::Resolution;
use crate::translate::Translation;

/// Slurm's address of the node `srun` was started on (`SLURM_LAUNCH_NODE_IPADDR`): the
/// launcher's end of the job's control connections.
pub const SLURM_LAUNCH_ADDRESS: &str = "SLURM_LAUNCH_NODE_IPADDR";

/// Warnings for the chosen path: RDMA ports carried over TCP on their netdev without
/// `:tcp`, and bridges given to UCX.
pub(crate) fn check(
    res: &Resolution,
    chosen: &Chosen,
    flavour: Flavour,
    warnings: &mut Vec<String>,
) {
    for p in res.ports.iter().filter(|p| !chosen.ports.contains(p)) {
        let over_tcp: Vec<&str> = chosen
            .ip
            .iter()
            .filter(|u| p.netdevs.contains(&u.name) && !u.qualifiers.contains(&Qualifier::Tcp))
            .map(|u| u.name.as_str())
            .collect();
        if let Some(first) = over_tcp.first() {
            warnings.push(format!(
                "{} ({}) is driven over TCP on {}: {flavour}'s {} path cannot drive it; write `{first}:tcp` if TCP is meant, or run with a library that drives {}",
                p.id(),
                p.kind,
                over_tcp.join(", "),
                chosen.path,
                p.kind
            ));
        }
    }
    let ucx = matches!(
        chosen.path,
        Path::Ucx | Path::UcxTcp | Path::UcxVerbs | Path::IntelMlx
    );
    for u in chosen.ip.iter().filter(|u| ucx && u.is_bridge) {
        warnings.push(format!(
            "{} is a bridge, which UCX's tcp transport does not use (MPICH over UCX stops in MPI_Init with \"Destination is unreachable\"): select the NIC under it instead",
            u.name
        ));
    }
}

/// A warning when everything the translation uses lies on the network of the launcher's
/// control connections (Slurm's launch node address) while the host has other networks:
/// the job would measure, or load, the management network. `None` when no launcher
/// address is known, or when the host has nothing else.
pub fn control_only(
    host: &Host,
    res: &Resolution,
    t: &Translation,
    environment: &BTreeMap<String, String>,
) -> Option<String> {
    let launcher: IpAddr = environment.get(SLURM_LAUNCH_ADDRESS)?.trim().parse().ok()?;
    let left = |what: &str| t.left_out.iter().any(|l| l.what == what);
    let ports_used = res.ports.iter().filter(|p| !left(&p.id())).count();
    let used: Vec<&str> = res
        .ip
        .iter()
        .filter(|u| !left(&u.name))
        .map(|u| u.name.as_str())
        .collect();
    if ports_used > 0 || used.is_empty() {
        return None;
    }
    let on_control = |name: &str| {
        host.netdev(name).is_some_and(|n| {
            n.addrs
                .iter()
                .any(|a| a.contains(&launcher) || a.addr() == launcher)
        })
    };
    if !used.iter().all(|n| on_control(n)) {
        return None;
    }
    let others: Vec<String> = host
        .netdevs
        .iter()
        .filter(|n| n.carries_ip() && !used.contains(&n.name.as_str()))
        .map(|n| n.name.clone())
        .chain(host.verbs.iter().flat_map(|v| {
            v.ports
                .iter()
                .map(move |p| format!("{}:{}", v.name, p.number))
        }))
        .collect();
    if others.is_empty() {
        return None;
    }
    Some(format!(
        "host {}: the selection leaves only {}, the network of the launcher's control connections ({SLURM_LAUNCH_ADDRESS}={launcher}): the job's data goes over the management network, not over {}",
        res.hostname,
        used.join(", "),
        others.join(", ")
    ))
}
