//! Host discovery from a sysfs root (default `/sys`) plus the host's IP addresses.
//!
//! Addresses come from `getifaddrs` (through the `if-addrs` crate) for the live host.
//! A fixture tree replaces that with a file `addrs` at its root (not part of real
//! sysfs), one `IF ADDR/PREFIX` per line, `#` comments allowed; and a file `hostname`
//! names the fixture host.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use ipnet::IpNet;

use crate::host::{Gid, Host, Netdev, NetdevKind, VerbsDevice, VerbsKind, VerbsPort};

/// The default sysfs root.
pub const DEFAULT_SYSFS: &str = "/sys";

/// Where IP addresses come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddressSource {
    /// The live host, via `getifaddrs`.
    Live,
    /// A file of `IF ADDR/PREFIX` lines.
    File(PathBuf),
}

/// How to discover a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    /// The sysfs root.
    pub sysfs: PathBuf,
    /// Where addresses come from.
    pub addresses: AddressSource,
    /// The host name to report; `None` reads the live host name.
    pub hostname: Option<String>,
}

/// A failure to read the host's networks.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// The sysfs root has no `class/net`.
    #[error("cannot read network interfaces under {path}: {source}")]
    Sysfs {
        /// The directory that could not be read.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// `getifaddrs` failed.
    #[error("cannot read this host's IP addresses: {0}")]
    Addresses(io::Error),
    /// A malformed line in an address file.
    #[error("{path}:{line}: expected `IF ADDR/PREFIX`, got `{text}`")]
    AddressFile {
        /// The file.
        path: PathBuf,
        /// Line number from 1.
        line: usize,
        /// The line.
        text: String,
    },
}

impl Discovery {
    /// Discovery of the live host: `/sys` and `getifaddrs`.
    pub fn live() -> Discovery {
        Discovery {
            sysfs: PathBuf::from(DEFAULT_SYSFS),
            addresses: AddressSource::Live,
            hostname: None,
        }
    }

    /// Discovery of a sysfs root: a fixture tree's `addrs` and `hostname` files are used
    /// when present, otherwise the live host's addresses and name.
    pub fn at(root: impl Into<PathBuf>) -> Discovery {
        let sysfs: PathBuf = root.into();
        let addr_file = sysfs.join("addrs");
        let addresses = if addr_file.is_file() {
            AddressSource::File(addr_file)
        } else {
            AddressSource::Live
        };
        let hostname = fs::read_to_string(sysfs.join("hostname"))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
        Discovery {
            sysfs,
            addresses,
            hostname,
        }
    }

    /// Reads the host.
    pub fn discover(&self) -> Result<Host, DiscoveryError> {
        let addrs = match &self.addresses {
            AddressSource::Live => live_addresses()?,
            AddressSource::File(p) => file_addresses(p)?,
        };
        let net_dir = self.sysfs.join("class/net");
        let mut netdevs = Vec::new();
        for name in list_dir(&net_dir).map_err(|source| DiscoveryError::Sysfs {
            path: net_dir.clone(),
            source,
        })? {
            netdevs.push(read_netdev(&net_dir.join(&name), &name, &addrs));
        }
        netdevs.sort_by(|a, b| a.name.cmp(&b.name));
        mark_hardware_backed(&mut netdevs);
        let ib_dir = self.sysfs.join("class/infiniband");
        let mut verbs: Vec<VerbsDevice> = list_dir(&ib_dir)
            .unwrap_or_default()
            .into_iter()
            .map(|name| read_verbs(&ib_dir.join(&name), &name))
            .collect();
        let cxi_dir = self.sysfs.join("class/cxi");
        verbs.extend(
            list_dir(&cxi_dir)
                .unwrap_or_default()
                .into_iter()
                .map(|name| read_cxi(&cxi_dir.join(&name), &name, &net_dir)),
        );
        verbs.sort_by(|a, b| a.name.cmp(&b.name));
        let hostname = self.hostname.clone().unwrap_or_else(live_hostname);
        Ok(Host {
            hostname,
            netdevs,
            verbs,
        })
    }
}

/// The live host name: `/proc/sys/kernel/hostname`, else `$HOSTNAME`, else `localhost`.
pub fn live_hostname() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_string())
}

fn list_dir(dir: &Path) -> io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in fs::read_dir(dir)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if !name.starts_with('.') {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

fn read_trimmed(path: &Path) -> Option<String> {
    fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The last component of a symlink's target (a driver link's target names the driver).
fn link_name(path: &Path) -> Option<String> {
    fs::read_link(path)
        .ok()
        .and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned()))
}

fn read_netdev(dir: &Path, name: &str, addrs: &[(String, IpNet)]) -> Netdev {
    let kind = read_trimmed(&dir.join("type"))
        .and_then(|t| t.parse().ok())
        .map(NetdevKind::from_arphrd)
        .unwrap_or(NetdevKind::Other(0));
    let device = dir.join("device");
    let is_virtual = !device.exists();
    let driver = if is_virtual {
        None
    } else {
        link_name(&device.join("driver"))
    };
    let lower = list_dir(dir)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|e| e.strip_prefix("lower_").map(str::to_string))
        .collect();
    Netdev {
        name: name.to_string(),
        kind,
        ifindex: read_trimmed(&dir.join("ifindex")).and_then(|i| i.parse().ok()),
        is_virtual,
        hardware_backed: !is_virtual,
        driver,
        operstate: read_trimmed(&dir.join("operstate")),
        master: link_name(&dir.join("master")),
        lower,
        addrs: addrs
            .iter()
            // getifaddrs names IPv4 aliases `eth0:1`; they belong to `eth0`.
            .filter(|(ifname, _)| ifname.split(':').next() == Some(name))
            .map(|(_, a)| *a)
            .collect(),
        pkey: read_trimmed(&dir.join("pkey"))
            .and_then(|p| u16::from_str_radix(p.trim_start_matches("0x"), 16).ok()),
        is_bridge: dir.join("bridge").is_dir(),
    }
}

/// A virtual netdev over physical ones (bond, VLAN) counts as hardware-backed.
fn mark_hardware_backed(netdevs: &mut [Netdev]) {
    // Stacks are shallow; iterate to a fixed point.
    for _ in 0..netdevs.len() {
        let backed: Vec<String> = netdevs
            .iter()
            .filter(|n| n.hardware_backed)
            .map(|n| n.name.clone())
            .collect();
        let mut changed = false;
        for n in netdevs.iter_mut() {
            if !n.hardware_backed && n.lower.iter().any(|l| backed.contains(l)) {
                n.hardware_backed = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

fn read_verbs(dir: &Path, name: &str) -> VerbsDevice {
    let node_type = read_trimmed(&dir.join("node_type"));
    let driver = link_name(&dir.join("device/driver"));
    let device_net = list_dir(&dir.join("device/net")).unwrap_or_default();
    let ports_dir = dir.join("ports");
    let mut ports: Vec<VerbsPort> = list_dir(&ports_dir)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|p| p.parse::<u32>().ok())
        .map(|number| {
            let pdir = ports_dir.join(number.to_string());
            let mut netdevs: Vec<String> = list_dir(&pdir.join("gid_attrs/ndevs"))
                .unwrap_or_default()
                .into_iter()
                .filter_map(|idx| read_trimmed(&pdir.join("gid_attrs/ndevs").join(idx)))
                .collect();
            netdevs.sort();
            netdevs.dedup();
            if netdevs.is_empty() {
                netdevs = device_net.clone();
            }
            VerbsPort {
                number,
                link_layer: read_trimmed(&pdir.join("link_layer")),
                state: read_trimmed(&pdir.join("state")),
                netdevs,
                gids: read_gids(&pdir),
            }
        })
        .collect();
    ports.sort_by_key(|p| p.number);
    let kind = verbs_kind(node_type.as_deref(), driver.as_deref(), name, &ports);
    VerbsDevice {
        name: name.to_string(),
        node_type,
        kind,
        driver,
        ports,
        numa_node: numa_node(&dir.join("device")),
    }
}

/// The GID table entries of a port that name a netdev, by index: the kernel lists one
/// per GID in `gid_attrs/ndevs/I` (unused entries cannot be read), with its type in
/// `gid_attrs/types/I` and the GID in `gids/I`.
fn read_gids(port: &Path) -> Vec<Gid> {
    let ndevs = port.join("gid_attrs/ndevs");
    let mut gids: Vec<Gid> = list_dir(&ndevs)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|i| {
            let index: u32 = i.parse().ok()?;
            Some(Gid {
                index,
                netdev: read_trimmed(&ndevs.join(&i))?,
                kind: read_trimmed(&port.join("gid_attrs/types").join(&i)),
                gid: read_trimmed(&port.join("gids").join(&i)),
            })
        })
        .collect();
    gids.sort_by_key(|g| g.index);
    gids
}

/// The NUMA node of a PCI device directory; `-1` (no NUMA) and absence read as none.
fn numa_node(device: &Path) -> Option<u32> {
    read_trimmed(&device.join("numa_node")).and_then(|n| n.parse().ok())
}

/// A Slingshot NIC under `class/cxi/cxiN`, read as libfabric's `cxi` provider reads it
/// (`prov/cxi/src/cxip_if.c`): its netdev is the one whose `device` is the same PCI
/// function (here `device/net/`), and its link is that netdev's: up when `operstate` is
/// `up`, or `unknown` with `carrier` 1. The NIC has one port, numbered 1 here.
fn read_cxi(dir: &Path, name: &str, net_dir: &Path) -> VerbsDevice {
    let device = dir.join("device");
    let netdevs = list_dir(&device.join("net")).unwrap_or_default();
    let link_up = netdevs.first().map(|n| {
        let state = read_trimmed(&net_dir.join(n).join("operstate"));
        match state.as_deref() {
            Some("up") => true,
            Some("unknown") | None => {
                read_trimmed(&net_dir.join(n).join("carrier")).as_deref() == Some("1")
            }
            Some(_) => false,
        }
    });
    let state = match link_up {
        Some(true) => Some("4: ACTIVE".to_string()),
        Some(false) => Some("1: DOWN".to_string()),
        // No netdev: the provider cannot read a link either; do not guess.
        None => None,
    };
    VerbsDevice {
        name: name.to_string(),
        node_type: None,
        kind: VerbsKind::Slingshot,
        driver: link_name(&device.join("driver")),
        ports: vec![VerbsPort {
            number: 1,
            link_layer: None,
            state,
            netdevs,
            gids: Vec::new(),
        }],
        numa_node: numa_node(&device),
    }
}

/// The kind of a verbs device from its `node_type`, driver, name and ports' link
/// layers: the `efa` driver (or an `efa_N` name) is EFA whatever its node type; `4: RNIC`
/// is iWARP, `5`/`6` usNIC; a `1: CA` is RoCE when a port's link layer is Ethernet, else
/// Omni-Path when driven by `hfi1`, else InfiniBand (`qib` included).
pub fn verbs_kind(
    node_type: Option<&str>,
    driver: Option<&str>,
    name: &str,
    ports: &[VerbsPort],
) -> VerbsKind {
    if driver == Some("efa") || name.starts_with("efa_") {
        return VerbsKind::Efa;
    }
    let number = node_type
        .and_then(|t| t.split(':').next())
        .and_then(|n| n.trim().parse::<u32>().ok());
    match number {
        Some(4) => VerbsKind::Iwarp,
        Some(5) | Some(6) => VerbsKind::Usnic,
        Some(1) => {
            // The port's link layer says what the network is: Ethernet is RoCE,
            // InfiniBand is InfiniBand, whatever the driver. Among InfiniBand link layers,
            // `hfi1` is Omni-Path (a fabric of its own); `qib` (TrueScale) stays InfiniBand,
            // its driver only picks the path (PSM), see `host::is_truescale`.
            let ethernet = ports.iter().any(|p| {
                p.link_layer
                    .as_deref()
                    .is_some_and(|l| l.eq_ignore_ascii_case("ethernet"))
            });
            if ethernet {
                VerbsKind::Roce
            } else if driver == Some("hfi1") || name.starts_with("hfi1_") {
                VerbsKind::OmniPath
            } else {
                VerbsKind::Infiniband
            }
        }
        _ => VerbsKind::Other,
    }
}

fn live_addresses() -> Result<Vec<(String, IpNet)>, DiscoveryError> {
    let ifaces = if_addrs::get_if_addrs().map_err(DiscoveryError::Addresses)?;
    let mut out = Vec::new();
    for iface in ifaces {
        let (ip, len) = match &iface.addr {
            if_addrs::IfAddr::V4(a) => (std::net::IpAddr::V4(a.ip), a.prefixlen),
            if_addrs::IfAddr::V6(a) => (std::net::IpAddr::V6(a.ip), a.prefixlen),
        };
        if let Ok(net) = IpNet::new(ip, len) {
            out.push((iface.name.clone(), net));
        }
    }
    Ok(out)
}

/// Reads an address file: one `IF ADDR/PREFIX` per line; blank lines and `#` comments
/// are skipped.
pub fn file_addresses(path: &Path) -> Result<Vec<(String, IpNet)>, DiscoveryError> {
    let text = fs::read_to_string(path).map_err(|source| DiscoveryError::Sysfs {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let bad = || DiscoveryError::AddressFile {
            path: path.to_path_buf(),
            line: i + 1,
            text: raw.to_string(),
        };
        let mut words = line.split_whitespace();
        let (Some(ifname), Some(addr), None) = (words.next(), words.next(), words.next()) else {
            return Err(bad());
        };
        let net: IpNet = addr.parse().map_err(|_| bad())?;
        out.push((ifname.to_string(), net));
    }
    Ok(out)
}
