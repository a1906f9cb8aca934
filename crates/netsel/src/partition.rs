//! Partitions and VLANs on RDMA ports: the InfiniBand partition key that an IPoIB child
//! netdev (`ib0.8001`) stands for, and the RoCE v2 GID index of a VLAN netdev
//! (`bond0.200` over `mlx5_bond_0`), so that RDMA traffic stays in the partition or VLAN
//! the selection names instead of the port's default.
//!
//! A port's partition or GID is decided only by the netdevs the selection itself names
//! behind that port (its IP interfaces, or a netdev named with an RDMA qualifier, as in
//! `ib0.8001:verbs`): a selection by port or by kind (`mlx5_0:1`, `ib`) keeps the
//! library's default. The knobs are process-wide (one `UCX_IB_PKEY`, one
//! `FI_VERBS_GID_IDX`), so ports that need different values are a warning and the
//! default is kept.

use crate::host::VerbsKind;
use crate::resolve::{PortUse, Resolution};

/// The partition key of the default partition (`0xffff`, full membership).
const DEFAULT_PKEY: u16 = 0xffff;

/// The partition bits of a key (the top bit is the membership type).
pub(crate) fn partition_number(pkey: u16) -> u16 {
    pkey & 0x7fff
}

/// What the selected netdevs mean on the RDMA ports a path drives.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Scope {
    /// The partition key for every InfiniBand port, when the selection names a partition.
    pub pkey: Option<u16>,
    /// The RoCE v2 GID index for every RoCE port, when the selection names one of
    /// several netdevs on a port (a VLAN).
    pub gid_index: Option<u32>,
    /// The netdev each port's connections are set up on (`FI_VERBS_IFACE`): the one the
    /// selection names behind the port, else the port's first.
    pub netdev: Vec<(String, Option<String>)>,
    /// What could not be honoured.
    pub warnings: Vec<String>,
}

impl Scope {
    /// The netdev for a port (by `dev:port`).
    pub fn netdev_of(&self, port: &str) -> Option<&str> {
        self.netdev
            .iter()
            .find(|(p, _)| p == port)
            .and_then(|(_, n)| n.as_deref())
    }
}

/// The netdevs behind a port that the selection names, for IP traffic or only for their
/// partition or VLAN ([`Resolution::scope`]).
fn named_netdevs<'r>(res: &'r Resolution, port: &PortUse) -> Vec<&'r crate::resolve::IpUse> {
    res.ip
        .iter()
        .chain(&res.scope)
        .filter(|u| port.netdevs.contains(&u.name))
        .collect()
}

/// One value for every port, or a warning when they disagree (each value as `show`
/// prints it).
fn agree<T: Copy + PartialEq>(
    values: &[(String, T)],
    what: &str,
    show: impl Fn(T) -> String,
    warnings: &mut Vec<String>,
) -> Option<T> {
    let (_, first) = values.first()?;
    if values.iter().all(|(_, v)| v == first) {
        return Some(*first);
    }
    let list: Vec<String> = values
        .iter()
        .map(|(p, v)| format!("{p}: {}", show(*v)))
        .collect();
    warnings.push(format!(
        "the selected ports need different {what}s ({}), and the library takes one per job: its default is used",
        list.join(", ")
    ));
    None
}

/// The partition key, GID index and setup netdev the selection means on `ports`.
pub(crate) fn scope(res: &Resolution, ports: &[PortUse]) -> Scope {
    let mut s = Scope::default();
    let mut pkeys: Vec<(String, u16)> = Vec::new();
    let mut gids: Vec<(String, u32)> = Vec::new();
    for p in ports {
        let named = named_netdevs(res, p);
        s.netdev.push((
            p.id(),
            named
                .first()
                .map(|u| u.name.clone())
                .or_else(|| p.netdevs.first().cloned()),
        ));
        if named.is_empty() {
            continue;
        }
        match p.kind {
            VerbsKind::Infiniband => {
                let keys: Vec<u16> = named
                    .iter()
                    .map(|u| u.pkey.unwrap_or(DEFAULT_PKEY))
                    .collect();
                let first = keys[0];
                if keys
                    .iter()
                    .any(|k| partition_number(*k) != partition_number(first))
                {
                    let list: Vec<String> = named
                        .iter()
                        .zip(&keys)
                        .map(|(u, k)| format!("{} 0x{k:04x}", u.name))
                        .collect();
                    s.warnings.push(format!(
                        "{} is named through netdevs of several partitions ({}); its RDMA traffic stays in the default partition",
                        p.id(),
                        list.join(", ")
                    ));
                } else if partition_number(first) != partition_number(DEFAULT_PKEY) {
                    pkeys.push((p.id(), first));
                }
            }
            VerbsKind::Roce if p.netdevs.len() > 1 => {
                let [u] = named[..] else {
                    s.warnings.push(format!(
                        "{} is named through several of its netdevs ({}); its RDMA traffic uses the library's default GID",
                        p.id(),
                        named.iter().map(|u| u.name.as_str()).collect::<Vec<_>>().join(", ")
                    ));
                    continue;
                };
                let has_v4 = u.addrs.iter().any(|a| a.addr().is_ipv4());
                let mut v2: Vec<&crate::host::Gid> = p
                    .gids
                    .iter()
                    .filter(|g| g.netdev == u.name && g.is_roce_v2() && !g.is_link_local())
                    .collect();
                v2.sort_by_key(|g| (g.is_ipv4() != has_v4, g.index));
                match v2.first() {
                    Some(g) => gids.push((p.id(), g.index)),
                    None => s.warnings.push(format!(
                        "{} has no RoCE v2 GID of {} (gid_attrs lists none with an address); its RDMA traffic uses the library's default GID, which may be another VLAN's",
                        p.id(),
                        u.name
                    )),
                }
            }
            _ => {}
        }
    }
    s.pkey = agree(
        &pkeys,
        "partition key",
        |k| format!("0x{k:04x}"),
        &mut s.warnings,
    );
    s.gid_index = agree(&gids, "GID index", |g| g.to_string(), &mut s.warnings);
    s
}
