//! What a host has, as discovery sees it: netdevs and verbs devices.

use std::fmt;

use ipnet::IpNet;
use serde::Serialize;

/// The kind of a netdev, from `/sys/class/net/IF/type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NetdevKind {
    /// Type 1: Ethernet (also veth, bridge, bond, VLAN, Wi-Fi).
    Ethernet,
    /// Type 32: InfiniBand (IPoIB, also on Omni-Path).
    Ipoib,
    /// Type 772: loopback.
    Loopback,
    /// Any other ARPHRD type.
    Other(u32),
}

impl NetdevKind {
    /// The kind for an ARPHRD number.
    pub fn from_arphrd(n: u32) -> NetdevKind {
        match n {
            1 => NetdevKind::Ethernet,
            32 => NetdevKind::Ipoib,
            772 => NetdevKind::Loopback,
            other => NetdevKind::Other(other),
        }
    }
}

impl fmt::Display for NetdevKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetdevKind::Ethernet => f.write_str("ethernet"),
            NetdevKind::Ipoib => f.write_str("ipoib"),
            NetdevKind::Loopback => f.write_str("loopback"),
            NetdevKind::Other(n) => write!(f, "type-{n}"),
        }
    }
}

/// One network interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Netdev {
    /// Interface name (`eth0`, `ib0`, `bond0`).
    pub name: String,
    /// Kind from the ARPHRD type.
    pub kind: NetdevKind,
    /// The kernel's interface index (`ifindex`), when sysfs gives it: the order in which
    /// the kernel, and so Open MPI, enumerates interfaces.
    pub ifindex: Option<u32>,
    /// True when the netdev has no `device` link (veth, bridge, bond, VLAN, dummy).
    pub is_virtual: bool,
    /// True when the netdev is physical or sits on physical netdevs (a bond or VLAN
    /// over a NIC), following its `lower_*` links.
    pub hardware_backed: bool,
    /// Driver name from `device/driver` (`mlx5_core`, `enic`, `hfi1`), if physical.
    pub driver: Option<String>,
    /// `operstate` (`up`, `down`, `unknown`), if readable.
    pub operstate: Option<String>,
    /// The bond or bridge this netdev is enslaved to, from its `master` link.
    pub master: Option<String>,
    /// Netdevs below this one (`lower_*` links: bond slaves, VLAN parent).
    pub lower: Vec<String>,
    /// IPv4 and IPv6 addresses with prefix length.
    pub addrs: Vec<IpNet>,
    /// The InfiniBand partition key of an IPoIB netdev (`pkey`, e.g. `0x8001` for
    /// `ib0.8001`; `0xffff` is the default partition).
    pub pkey: Option<u16>,
    /// True for a Linux bridge (`bridge/` in sysfs).
    pub is_bridge: bool,
}

impl Netdev {
    /// True when the netdev can carry MPI traffic over IP: not loopback and with an address.
    pub fn carries_ip(&self) -> bool {
        self.kind != NetdevKind::Loopback && !self.addrs.is_empty()
    }

    /// True when any address lies in `net`.
    pub fn in_network(&self, net: &IpNet) -> bool {
        self.addrs.iter().any(|a| net.contains(&a.addr()))
    }
}

/// The kind of a verbs device, from `node_type`, the link layer and the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VerbsKind {
    /// `1: CA` with InfiniBand link layer.
    Infiniband,
    /// `1: CA` with Ethernet link layer.
    Roce,
    /// `4: RNIC`.
    Iwarp,
    /// `5: usNIC` or `6: usNIC UDP`.
    Usnic,
    /// An InfiniBand-like CA driven by `hfi1`: Omni-Path. (A `qib` HCA, QLogic/Intel
    /// TrueScale, is InfiniBand: its link layer says so; only its path differs, see
    /// [`is_truescale`].)
    OmniPath,
    /// An AWS Elastic Fabric Adapter (driver `efa`, devices `efa_N`): node type `7:
    /// unspecified`, link layer `Unknown`, no netdev; libfabric's `efa` provider drives
    /// it, UCX does not.
    Efa,
    /// An HPE Slingshot-11 NIC (Cassini, kernel driver `cxi_ss1`), read from
    /// `/sys/class/cxi/cxiN` rather than `class/infiniband`: one port, an Ethernet netdev
    /// `hsnN` beside it; libfabric's `cxi` provider drives it, UCX does not.
    Slingshot,
    /// Anything else.
    Other,
}

impl fmt::Display for VerbsKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            VerbsKind::Infiniband => "infiniband",
            VerbsKind::Roce => "roce",
            VerbsKind::Iwarp => "iwarp",
            VerbsKind::Usnic => "usnic",
            VerbsKind::OmniPath => "omnipath",
            VerbsKind::Efa => "efa",
            VerbsKind::Slingshot => "slingshot",
            VerbsKind::Other => "other",
        })
    }
}

/// One port of a verbs device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerbsPort {
    /// Port number (from 1).
    pub number: u32,
    /// `link_layer`: `InfiniBand` or `Ethernet`.
    pub link_layer: Option<String>,
    /// `state`, e.g. `4: ACTIVE`.
    pub state: Option<String>,
    /// Netdevs behind the port (`gid_attrs/ndevs/*`, else `device/net/`).
    pub netdevs: Vec<String>,
    /// The port's GID table entries that name a netdev (RoCE): index, netdev, type.
    pub gids: Vec<Gid>,
}

/// One entry of a RoCE port's GID table (`ports/N/gids/I`, `gid_attrs/ndevs/I`,
/// `gid_attrs/types/I`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Gid {
    /// The GID index.
    pub index: u32,
    /// The netdev the entry belongs to (a VLAN has entries of its own).
    pub netdev: String,
    /// `RoCE v2` or `IB/RoCE v1`, when sysfs gives it.
    pub kind: Option<String>,
    /// The GID as sysfs prints it (`0000:0000:0000:0000:0000:ffff:0a28:c806` for an
    /// IPv4 address).
    pub gid: Option<String>,
}

impl Gid {
    /// True for a RoCE v2 entry.
    pub fn is_roce_v2(&self) -> bool {
        self.kind
            .as_deref()
            .is_some_and(|k| k.eq_ignore_ascii_case("roce v2"))
    }

    /// True when the GID carries an IPv4 address (`::ffff:a.b.c.d`).
    pub fn is_ipv4(&self) -> bool {
        self.gid
            .as_deref()
            .is_some_and(|g| g.starts_with("0000:0000:0000:0000:0000:ffff:"))
    }

    /// True for a link-local GID (`fe80::/64`), the one every netdev has.
    pub fn is_link_local(&self) -> bool {
        self.gid.as_deref().is_some_and(|g| g.starts_with("fe80:"))
    }
}

impl VerbsPort {
    /// True when the port state is `4: ACTIVE` (or unknown: then we do not guess).
    pub fn is_active(&self) -> bool {
        self.state
            .as_deref()
            .map(|s| s.trim_start().starts_with('4') || s.contains("ACTIVE"))
            .unwrap_or(true)
    }
}

/// One RDMA device: a verbs device under `/sys/class/infiniband`, or a Slingshot NIC
/// under `/sys/class/cxi` (kind [`VerbsKind::Slingshot`], one port numbered 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerbsDevice {
    /// Device name (`mlx5_0`, `hfi1_0`, `usnic_0`).
    pub name: String,
    /// `node_type` as read, e.g. `1: CA`.
    pub node_type: Option<String>,
    /// Kind derived from node type, link layer and driver.
    pub kind: VerbsKind,
    /// Driver from `device/driver`.
    pub driver: Option<String>,
    /// Ports, by number.
    pub ports: Vec<VerbsPort>,
    /// The NUMA node of the device (`device/numa_node`), when sysfs gives one (`-1`, a
    /// machine without NUMA, reads as none).
    pub numa_node: Option<u32>,
}

/// True for a QLogic/Intel TrueScale HCA (kernel driver `qib`, PCI driver name
/// `ib_qib`, devices `qib0`, ...): InfiniBand by its link layer, but reached through PSM
/// (Open MPI 4's `mtl psm`) rather than UCX, which does not support it.
pub fn is_truescale(driver: Option<&str>, device: &str) -> bool {
    matches!(driver, Some("qib") | Some("ib_qib")) || device.starts_with("qib")
}

impl VerbsDevice {
    /// True for a TrueScale (`qib`) HCA; see [`is_truescale`].
    pub fn is_truescale(&self) -> bool {
        is_truescale(self.driver.as_deref(), &self.name)
    }
}

/// Everything discovery found on one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Host {
    /// The host name, for messages.
    pub hostname: String,
    /// Netdevs, sorted by name.
    pub netdevs: Vec<Netdev>,
    /// Verbs devices, sorted by name.
    pub verbs: Vec<VerbsDevice>,
}

impl Host {
    /// The netdev of this name, case-insensitively.
    pub fn netdev(&self, name: &str) -> Option<&Netdev> {
        self.netdevs
            .iter()
            .find(|n| n.name.eq_ignore_ascii_case(name))
    }

    /// The verbs device of this name, case-insensitively.
    pub fn verbs_device(&self, name: &str) -> Option<&VerbsDevice> {
        self.verbs
            .iter()
            .find(|v| v.name.eq_ignore_ascii_case(name))
    }

    /// The names of everything the host has, for short messages: its netdevs (loopback
    /// included) in the kernel's order (`ifindex`, then name), then every verbs port as
    /// `dev:port`: `lo, eth0, ib0, mlx5_0:1`.
    pub fn names(&self) -> Vec<String> {
        let mut netdevs: Vec<&Netdev> = self.netdevs.iter().collect();
        netdevs.sort_by_key(|n| (n.ifindex.unwrap_or(u32::MAX), n.name.clone()));
        netdevs
            .into_iter()
            .map(|n| n.name.clone())
            .chain(
                self.verbs
                    .iter()
                    .flat_map(|v| v.ports.iter().map(|p| format!("{}:{}", v.name, p.number))),
            )
            .collect()
    }

    /// A one-line summary of what the host has, for error messages:
    /// `eth0 (ethernet, 10.0.0.1/24), ib0 (ipoib), mlx5_0:1 (infiniband)`.
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        for n in self
            .netdevs
            .iter()
            .filter(|n| n.kind != NetdevKind::Loopback)
        {
            let mut desc = vec![n.kind.to_string()];
            if n.is_virtual {
                desc.push("virtual".into());
            }
            desc.extend(n.addrs.iter().map(|a| a.to_string()));
            parts.push(format!("{} ({})", n.name, desc.join(", ")));
        }
        for v in &self.verbs {
            for p in &v.ports {
                parts.push(format!("{}:{} ({})", v.name, p.number, v.kind));
            }
        }
        if parts.is_empty() {
            "no network besides loopback".to_string()
        } else {
            parts.join(", ")
        }
    }
}
