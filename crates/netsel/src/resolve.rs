//! Resolution of a selection on one host: which IP interfaces and which verbs ports to
//! use, each with the reason, and what is left out and why.
//!
//! What an item reaches on the host:
//!
//! | item | verbs ports | IP interfaces |
//! |---|---|---|
//! | `ib`, `opa`, `roce`, `iwarp`, `usnic` | ports of that kind | only with `:tcp`: the netdevs behind those ports |
//! | `slingshot` (`cxi`) | Slingshot NICs (`cxiN:1`) | only with `:tcp`: their `hsnN` netdevs |
//! | `eth` | RoCE, iWARP and usNIC ports | hardware-backed Ethernet netdevs (bonds and VLANs over NICs included; veth, bridges without NICs, docker0 not; nor Slingshot's `hsnN`); on a host with no hardware-backed Ethernet at all (a container, a namespace), every Ethernet netdev |
//! | a netdev name | the ports whose netdev it is | that netdev |
//! | a verbs device name, with optional port | its ports (or that port) | the netdevs behind them |
//! | a CIDR | the ports whose netdev has an address inside | netdevs with an address inside |
//!
//! A qualifier then narrows: `tcp` keeps only IP interfaces; `verbs`, `psm2`, `psm`, `usnic`,
//! `efa`, `cxi` and `opx` keep only RDMA ports; `ucx`, `ofi` and `mtl` keep both. Loopback, netdevs without an
//! address and ports that are not ACTIVE are never candidates.
//!
//! An item that matches nothing usable on the host (a typo, a port that is down, `lo`,
//! `self`) is recorded in [`Resolution::unmatched`], for `--enable` and `--disable` alike,
//! so that every front end can say so ([`Unmatched::warning`],
//! [`crate::format::selection_warnings`]).

use std::collections::BTreeSet;

use ipnet::IpNet;
use serde::Serialize;

use crate::grammar::{HumanName, Item, Mode, Network, Qualifier, Selection};
use crate::host::{is_truescale, Gid, Host, Netdev, NetdevKind, VerbsDevice, VerbsKind, VerbsPort};

/// An IP interface chosen for use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IpUse {
    /// Netdev name as the host spells it.
    pub name: String,
    /// Its addresses.
    pub addrs: Vec<IpNet>,
    /// The kind of netdev.
    pub kind: NetdevKind,
    /// Its InfiniBand partition key, for an IPoIB netdev.
    pub pkey: Option<u16>,
    /// True for a Linux bridge.
    pub is_bridge: bool,
    /// Qualifiers of the items that chose it (empty: no qualifier given).
    pub qualifiers: BTreeSet<Qualifier>,
    /// True when an item without qualifier chose it.
    pub unqualified: bool,
    /// Why it is used.
    pub reasons: Vec<String>,
}

/// A verbs port chosen for use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortUse {
    /// Verbs device name.
    pub device: String,
    /// Port number.
    pub port: u32,
    /// The device's kind.
    pub kind: VerbsKind,
    /// The device's driver (`mlx5_core`, `hfi1`, `ib_qib`), if known: it picks the path
    /// (PSM for TrueScale `qib`, PSM2 for Omni-Path `hfi1`).
    pub driver: Option<String>,
    /// Netdevs behind the port.
    pub netdevs: Vec<String>,
    /// The port's GID entries that name a netdev (RoCE).
    pub gids: Vec<Gid>,
    /// The device's NUMA node, when sysfs gives it.
    pub numa_node: Option<u32>,
    /// Qualifiers of the items that chose it.
    pub qualifiers: BTreeSet<Qualifier>,
    /// True when an item without qualifier chose it.
    pub unqualified: bool,
    /// Why it is used.
    pub reasons: Vec<String>,
}

impl PortUse {
    /// `dev:port`.
    pub fn id(&self) -> String {
        format!("{}:{}", self.device, self.port)
    }

    /// True for a port of a TrueScale (`qib`) HCA, reached through PSM.
    pub fn is_truescale(&self) -> bool {
        is_truescale(self.driver.as_deref(), &self.device)
    }
}

/// What one `--enable` item reached on this host (usable targets only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ItemMatch {
    /// The item.
    pub item: Item,
    /// The IP interfaces it chose.
    pub ip: Vec<String>,
    /// The verbs ports (`dev:port`) it chose.
    pub ports: Vec<String>,
}

/// Something the host has that will not be used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeftOut {
    /// The interface or `dev:port`.
    pub what: String,
    /// Why.
    pub reason: String,
}

/// Why an item matched nothing usable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnmatchedKind {
    /// The host has nothing of that name, kind or address (a typo, or another host's
    /// interface).
    Nothing,
    /// It names something the host has but cannot use (a port that is down, a netdev
    /// without an address).
    Unusable,
    /// It names process loopback or shared memory (`lo`, `127.0.0.0/8`, `self`, `sm`),
    /// which are always kept and cannot be selected: the item is ignored.
    AlwaysKept,
}

/// An item that matched nothing usable on this host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unmatched {
    /// The item as printed.
    pub item: String,
    /// Why, when the item names something the host has but cannot use (empty otherwise).
    pub why: String,
    /// What the host has, for the message.
    pub host_has: String,
    /// `--enable` or `--disable`.
    pub switch: &'static str,
    /// What kind of miss it is.
    pub kind: UnmatchedKind,
    /// The host.
    pub hostname: String,
    /// The names of what the host has ([`Host::names`]).
    pub host_names: Vec<String>,
}

impl Unmatched {
    /// The one-line warning for this item, e.g. `--enable: typo0 matches nothing on host
    /// h1 (it has: lo, eth0, ib0, mlx5_0:1)`. Front ends prefix their name (`xylem: `).
    pub fn warning(&self) -> String {
        let has = self.host_names.join(", ");
        match self.kind {
            UnmatchedKind::Nothing => format!(
                "{}: {} matches nothing on host {} (it has: {has})",
                self.switch, self.item, self.hostname
            ),
            UnmatchedKind::Unusable => format!(
                "{}: {} matches nothing usable on host {}: {} (it has: {has})",
                self.switch, self.item, self.hostname, self.why
            ),
            UnmatchedKind::AlwaysKept => format!(
                "{}: {} is ignored on host {}: {}",
                self.switch, self.item, self.hostname, self.why
            ),
        }
    }
}

/// Names that mean process loopback or shared memory, which are always kept.
const ALWAYS_KEPT_NAMES: &[(&str, &str)] = &[
    ("self", "process loopback"),
    ("sm", "shared memory"),
    ("shm", "shared memory"),
    ("vader", "shared memory"),
];

/// The reason process loopback and shared memory cannot be selected.
const ALWAYS_KEPT: &str =
    "process loopback and shared memory are always kept and cannot be selected";

/// The outcome of resolving a selection on one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resolution {
    /// The host name.
    pub hostname: String,
    /// Enable or disable.
    pub mode: Mode,
    /// The list as given (normalised).
    pub list: String,
    /// IP interfaces to use.
    pub ip: Vec<IpUse>,
    /// Verbs ports to use.
    pub ports: Vec<PortUse>,
    /// Netdevs named only for the partition or VLAN of the RDMA ports behind them: an
    /// RDMA qualifier took them off IP use (`ib0.8001:verbs`), but their partition key or
    /// VLAN GID still scopes the ports' traffic.
    pub scope: Vec<IpUse>,
    /// IP interfaces matched by `--disable` items (for exclude lists).
    pub excluded_ip: Vec<String>,
    /// Verbs ports matched by `--disable` items.
    pub excluded_ports: Vec<String>,
    /// What is not used, and why.
    pub left_out: Vec<LeftOut>,
    /// Items (of `--enable` or `--disable`) that matched nothing usable.
    pub unmatched: Vec<Unmatched>,
    /// What each `--enable` item reached (empty for `--disable`), in the order given.
    pub items: Vec<ItemMatch>,
    /// The names of every netdev and RDMA device of the host, for knobs that match by
    /// prefix (`FI_VERBS_DEVICE_NAME=mlx5_` must not also take a device left out).
    pub devices: Vec<String>,
    /// The RDMA devices of the host with their kinds, for knobs a library may lack (an
    /// older libfabric without `FI_EFA_IFACE` uses every EFA device: which are those).
    pub rdma: Vec<(String, VerbsKind)>,
}

/// The selection leaves the host without any network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoNetwork {
    /// The host.
    pub hostname: String,
    /// `--enable` or `--disable`.
    pub switch: &'static str,
    /// The list.
    pub list: String,
    /// What the host has.
    pub host_has: String,
    /// The items that matched nothing usable (see [`Resolution::unmatched`]).
    pub unmatched: Vec<Unmatched>,
}

impl std::fmt::Display for NoNetwork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} leaves host {} with no network{}; it has: {}",
            self.switch,
            self.list,
            self.hostname,
            self.detail(),
            self.host_has
        )
    }
}

impl std::error::Error for NoNetwork {}

impl NoNetwork {
    /// The items that matched nothing, for the message: ` (matched nothing: `ib`, `lo`
    /// (lo is loopback; ...))`, or empty.
    pub fn detail(&self) -> String {
        if self.unmatched.is_empty() {
            return String::new();
        }
        let items: Vec<String> = self
            .unmatched
            .iter()
            .map(|u| {
                if u.why.is_empty() {
                    format!("`{}`", u.item)
                } else {
                    format!("`{}` ({})", u.item, u.why)
                }
            })
            .collect();
        format!(" (matched nothing: {})", items.join(", "))
    }
}

#[derive(Default)]
struct Matches {
    ip: Vec<String>,
    ports: Vec<(String, u32)>,
    /// Netdevs an RDMA qualifier took off IP use whose partition or VLAN the item still
    /// names for its ports (`ib0.8001:verbs`).
    scope: Vec<String>,
    /// The Ethernet netdevs of the RDMA NICs the item names (RoCE, iWARP, usNIC): what a
    /// `--disable` of the fabric leaves for TCP, said.
    nic_of: Vec<String>,
}

fn netdevs_behind(host: &Host, kinds: &[VerbsKind]) -> Vec<String> {
    let mut out: Vec<String> = host
        .verbs
        .iter()
        .filter(|v| kinds.contains(&v.kind))
        .flat_map(|v| v.ports.iter().flat_map(|p| p.netdevs.iter().cloned()))
        .collect();
    out.sort();
    out.dedup();
    out
}

fn ports_of(host: &Host, kinds: &[VerbsKind]) -> Vec<(String, u32)> {
    host.verbs
        .iter()
        .filter(|v| kinds.contains(&v.kind))
        .flat_map(|v| v.ports.iter().map(|p| (v.name.clone(), p.number)))
        .collect()
}

fn ports_behind_netdevs(host: &Host, names: &[String]) -> Vec<(String, u32)> {
    host.verbs
        .iter()
        .flat_map(|v| {
            v.ports
                .iter()
                .filter(|p| p.netdevs.iter().any(|n| names.contains(n)))
                .map(|p| (v.name.clone(), p.number))
        })
        .collect()
}

fn human_kinds(h: HumanName) -> &'static [VerbsKind] {
    match h {
        HumanName::Infiniband => &[VerbsKind::Infiniband],
        HumanName::Roce => &[VerbsKind::Roce],
        HumanName::Iwarp => &[VerbsKind::Iwarp],
        HumanName::Usnic => &[VerbsKind::Usnic],
        HumanName::OmniPath => &[VerbsKind::OmniPath],
        HumanName::Efa => &[VerbsKind::Efa],
        HumanName::Slingshot => &[VerbsKind::Slingshot],
        HumanName::Ethernet => &[VerbsKind::Roce, VerbsKind::Iwarp, VerbsKind::Usnic],
    }
}

/// The netdevs `eth` names: the hardware-backed Ethernet ones, so that container
/// plumbing (docker0, veth) stays out on a real node; where the host has none (inside a
/// container or a network namespace, whose only links are virtual), every Ethernet one.
/// The `hsnN` netdevs of Slingshot NICs are Ethernet to the kernel but belong to
/// `slingshot`: `eth` leaves them out, so that it never means TCP over the fast fabric.
fn ethernet_netdevs(host: &Host) -> Vec<String> {
    let slingshot = netdevs_behind(host, &[VerbsKind::Slingshot]);
    let ethernet = || {
        host.netdevs
            .iter()
            .filter(|n| n.kind == NetdevKind::Ethernet && !slingshot.contains(&n.name))
    };
    let backed: Vec<String> = ethernet()
        .filter(|n| n.hardware_backed)
        .map(|n| n.name.clone())
        .collect();
    if backed.is_empty() {
        ethernet().map(|n| n.name.clone()).collect()
    } else {
        backed
    }
}

/// The netdevs that carry IP over the fabric `h` itself: those behind its ports, and
/// for InfiniBand and Omni-Path every IPoIB netdev of the kind (`ib0`, a partition's
/// `ib0.8001`).
fn fabric_netdevs(host: &Host, h: HumanName) -> Vec<String> {
    let mut ip = netdevs_behind(host, human_kinds(h));
    if matches!(h, HumanName::Infiniband | HumanName::OmniPath) {
        let opa = h == HumanName::OmniPath;
        ip.extend(
            host.netdevs
                .iter()
                .filter(|n| {
                    n.kind == NetdevKind::Ipoib && (n.driver.as_deref() == Some("hfi1")) == opa
                })
                .map(|n| n.name.clone()),
        );
    }
    ip
}

/// The fabrics whose netdevs exist only to carry IP over the fabric (IPoIB, Slingshot's
/// `hsn`): `--disable` of the fabric takes them too. The NICs of RoCE, iWARP and usNIC
/// are Ethernet NICs first, and stay for TCP (said).
fn fabric_owns_its_netdevs(h: HumanName) -> bool {
    matches!(
        h,
        HumanName::Infiniband | HumanName::OmniPath | HumanName::Slingshot
    )
}

fn item_matches(host: &Host, mode: Mode, item: &Item) -> Matches {
    let mut m = Matches::default();
    match &item.network {
        Network::Human(h) => {
            m.ports = ports_of(host, human_kinds(*h));
            // `--disable ib` means the fabric, not only its RDMA: TCP over its own netdevs
            // goes too (`ib:verbs` keeps to the ports).
            let whole_fabric = mode == Mode::Disable && item.qualifier.is_none();
            m.ip = match h {
                HumanName::Ethernet => ethernet_netdevs(host),
                _ if item.qualifier == Some(Qualifier::Tcp) => fabric_netdevs(host, *h),
                _ if whole_fabric && fabric_owns_its_netdevs(*h) => fabric_netdevs(host, *h),
                _ => Vec::new(),
            };
            if whole_fabric && !fabric_owns_its_netdevs(*h) && *h != HumanName::Ethernet {
                m.nic_of = netdevs_behind(host, human_kinds(*h));
            }
        }
        Network::Device { name, port } => {
            if let Some(n) = host.netdev(name) {
                if port.is_none() {
                    m.ip.push(n.name.clone());
                    m.ports = ports_behind_netdevs(host, std::slice::from_ref(&n.name));
                }
            }
            if let Some(v) = host.verbs_device(name) {
                for p in v
                    .ports
                    .iter()
                    .filter(|p| port.is_none() || *port == Some(p.number))
                {
                    m.ports.push((v.name.clone(), p.number));
                    m.ip.extend(p.netdevs.iter().cloned());
                }
            }
        }
        Network::Cidr(net) => {
            m.ip = host
                .netdevs
                .iter()
                .filter(|n| n.in_network(net))
                .map(|n| n.name.clone())
                .collect();
            m.ports = ports_behind_netdevs(host, &m.ip);
        }
    }
    match item.qualifier {
        Some(Qualifier::Tcp) => m.ports.clear(),
        Some(
            Qualifier::Verbs
            | Qualifier::Psm2
            | Qualifier::Psm
            | Qualifier::Usnic
            | Qualifier::Efa
            | Qualifier::Cxi
            | Qualifier::Opx,
        ) => {
            // A netdev named by its own name keeps its meaning for the RDMA ports behind
            // it (the partition of `ib0.8001`, the VLAN of `bond0.200`): the qualifier
            // only takes it off IP use.
            if matches!(item.network, Network::Device { port: None, .. }) {
                m.scope = m
                    .ip
                    .iter()
                    .filter(|n| !ports_behind_netdevs(host, std::slice::from_ref(*n)).is_empty())
                    .cloned()
                    .collect();
            }
            m.ip.clear()
        }
        _ => {}
    }
    m.ip.sort();
    m.ip.dedup();
    m.ports.sort();
    m.ports.dedup();
    m
}

/// What a host offers before any item is applied: IP interfaces with an address (not
/// loopback) and active verbs ports, and what is left out from the start and why.
struct Candidates<'h> {
    ip: Vec<&'h Netdev>,
    ports: Vec<(&'h VerbsDevice, &'h VerbsPort)>,
    left_out: Vec<LeftOut>,
}

impl<'h> Candidates<'h> {
    fn of(host: &'h Host) -> Self {
        let mut c = Candidates {
            ip: Vec::new(),
            ports: Vec::new(),
            left_out: Vec::new(),
        };
        for n in &host.netdevs {
            if n.kind == NetdevKind::Loopback {
                c.leave_out(n.name.clone(), format!("loopback: {ALWAYS_KEPT}"));
            } else if n.addrs.is_empty() {
                let why = match &n.master {
                    Some(m) => format!("no IP address (enslaved to {m})"),
                    None => "no IP address".to_string(),
                };
                c.leave_out(n.name.clone(), why);
            } else {
                c.ip.push(n);
            }
        }
        for v in &host.verbs {
            for p in &v.ports {
                if p.is_active() {
                    c.ports.push((v, p));
                } else {
                    c.leave_out(
                        format!("{}:{}", v.name, p.number),
                        format!(
                            "port is not active (state {})",
                            p.state.as_deref().unwrap_or("unknown")
                        ),
                    );
                }
            }
        }
        c
    }

    fn leave_out(&mut self, what: String, reason: String) {
        self.left_out.push(LeftOut { what, reason });
    }

    fn netdev(&self, name: &str) -> Option<&'h Netdev> {
        self.ip.iter().find(|c| c.name == name).copied()
    }

    fn port(&self, device: &str, number: u32) -> Option<(&'h VerbsDevice, &'h VerbsPort)> {
        self.ports
            .iter()
            .find(|(v, p)| v.name == device && p.number == number)
            .copied()
    }

    /// Whether `m` reaches any candidate.
    fn reached_by(&self, m: &Matches) -> bool {
        m.ip.iter().any(|n| self.netdev(n).is_some())
            || m.ports.iter().any(|(d, n)| self.port(d, *n).is_some())
    }
}

/// What a selection's items chose, excluded and missed, before the check that something
/// is left.
#[derive(Default)]
struct Chosen {
    ip: Vec<IpUse>,
    ports: Vec<PortUse>,
    scope: Vec<IpUse>,
    excluded_ip: Vec<String>,
    excluded_ports: Vec<String>,
    unmatched: Vec<Unmatched>,
    items: Vec<ItemMatch>,
}

fn ip_use(n: &Netdev, unqualified: bool, reasons: Vec<String>) -> IpUse {
    IpUse {
        name: n.name.clone(),
        addrs: n.addrs.clone(),
        kind: n.kind,
        pkey: n.pkey,
        is_bridge: n.is_bridge,
        qualifiers: BTreeSet::new(),
        unqualified,
        reasons,
    }
}

fn port_use(v: &VerbsDevice, p: &VerbsPort, unqualified: bool, reasons: Vec<String>) -> PortUse {
    PortUse {
        device: v.name.clone(),
        port: p.number,
        kind: v.kind,
        driver: v.driver.clone(),
        netdevs: p.netdevs.clone(),
        gids: p.gids.clone(),
        numa_node: v.numa_node,
        qualifiers: BTreeSet::new(),
        unqualified,
        reasons,
    }
}

/// `--enable`: the candidates some item names, each with the items' qualifiers and
/// reasons; the others are left out.
fn enable(
    host: &Host,
    selection: &Selection,
    per_item: &[(&Item, Matches)],
    c: &mut Candidates,
) -> Chosen {
    let mut out = Chosen::default();
    for (item, m) in per_item {
        if !c.reached_by(m) {
            out.unmatched
                .push(miss(host, selection.mode, item, m, &c.left_out));
            continue;
        }
        for name in &m.ip {
            let Some(n) = c.netdev(name) else { continue };
            let at = match out.ip.iter().position(|u| &u.name == name) {
                Some(at) => at,
                None => {
                    out.ip.push(ip_use(n, false, Vec::new()));
                    out.ip.len() - 1
                }
            };
            let entry = &mut out.ip[at];
            add_qualifier(&mut entry.qualifiers, &mut entry.unqualified, item);
            entry
                .reasons
                .push(format!("named by --enable item `{item}`"));
        }
        for (dev, num) in &m.ports {
            let Some((v, p)) = c.port(dev, *num) else {
                continue;
            };
            let at = match out
                .ports
                .iter()
                .position(|u| &u.device == dev && u.port == *num)
            {
                Some(at) => at,
                None => {
                    out.ports.push(port_use(v, p, false, Vec::new()));
                    out.ports.len() - 1
                }
            };
            let entry = &mut out.ports[at];
            add_qualifier(&mut entry.qualifiers, &mut entry.unqualified, item);
            entry
                .reasons
                .push(format!("{} port named by --enable item `{item}`", v.kind));
        }
        for name in &m.scope {
            let Some(n) = host.netdev(name) else { continue };
            if !out.scope.iter().any(|u| &u.name == name) {
                out.scope.push(ip_use(
                    n,
                    false,
                    vec![format!(
                        "--enable item `{item}` names it only for the partition or VLAN of the RDMA ports behind it"
                    )],
                ));
            }
        }
        out.items.push(ItemMatch {
            item: (*item).clone(),
            ip: m
                .ip
                .iter()
                .filter(|n| c.netdev(n).is_some())
                .cloned()
                .collect(),
            ports: m
                .ports
                .iter()
                .filter(|(d, n)| c.port(d, *n).is_some())
                .map(|(d, n)| format!("{d}:{n}"))
                .collect(),
        });
    }
    let list = selection.list();
    for n in c.ip.clone() {
        if out.ip.iter().any(|u| u.name == n.name) {
            continue;
        }
        let why = match out.scope.iter().find(|u| u.name == n.name) {
            Some(u) => format!("carries no IP traffic: {}", u.reasons.join("; ")),
            None => format!("not named by --enable {list}"),
        };
        c.leave_out(n.name.clone(), why);
    }
    for (v, p) in c.ports.clone() {
        if !out
            .ports
            .iter()
            .any(|u| u.device == v.name && u.port == p.number)
        {
            c.leave_out(
                format!("{}:{}", v.name, p.number),
                format!("{} port not named by --enable {list}", v.kind),
            );
        }
    }
    out
}

/// `--disable`: every candidate that no item matches; the matched ones are left out,
/// each with the first item that matched it.
fn disable(
    host: &Host,
    selection: &Selection,
    per_item: &[(&Item, Matches)],
    c: &mut Candidates,
) -> Chosen {
    let mut out = Chosen::default();
    for (item, m) in per_item {
        if !c.reached_by(m) {
            out.unmatched
                .push(miss(host, selection.mode, item, m, &c.left_out));
        }
    }
    let hit_by = |is_hit: &dyn Fn(&Matches) -> bool| -> Option<String> {
        per_item
            .iter()
            .find(|(_, m)| is_hit(m))
            .map(|(i, _)| i.to_string())
    };
    let list = selection.list();
    for n in c.ip.clone() {
        match hit_by(&|m: &Matches| m.ip.contains(&n.name)) {
            Some(item) => {
                out.excluded_ip.push(n.name.clone());
                c.leave_out(n.name.clone(), format!("matched --disable item `{item}`"));
            }
            None => {
                let mut why = format!("not matched by --disable {list}");
                if let Some(item) = hit_by(&|m: &Matches| m.nic_of.contains(&n.name)) {
                    why.push_str(&format!(
                        ": `{item}` disables the RDMA of this NIC, whose Ethernet stays for TCP (`--disable {}` takes it too)",
                        n.name
                    ));
                }
                out.ip.push(ip_use(n, true, vec![why]))
            }
        }
    }
    for (v, p) in c.ports.clone() {
        let id = format!("{}:{}", v.name, p.number);
        match hit_by(&|m: &Matches| m.ports.iter().any(|(d, n)| d == &v.name && *n == p.number)) {
            Some(item) => {
                out.excluded_ports.push(id.clone());
                c.leave_out(
                    id,
                    format!("{} port matched --disable item `{item}`", v.kind),
                );
            }
            None => out.ports.push(port_use(
                v,
                p,
                true,
                vec![format!("{} port not matched by --disable {list}", v.kind)],
            )),
        }
    }
    out
}

/// Resolves a selection on a host. Fails only when nothing is left to use.
pub fn resolve(selection: &Selection, host: &Host) -> Result<Resolution, NoNetwork> {
    let mut candidates = Candidates::of(host);
    let per_item: Vec<(&Item, Matches)> = selection
        .items
        .iter()
        .map(|i| (i, item_matches(host, selection.mode, i)))
        .collect();
    let mut chosen = match selection.mode {
        Mode::Enable => enable(host, selection, &per_item, &mut candidates),
        Mode::Disable => disable(host, selection, &per_item, &mut candidates),
    };
    if chosen.ip.is_empty() && chosen.ports.is_empty() {
        return Err(NoNetwork {
            hostname: host.hostname.clone(),
            switch: selection.mode.switch(),
            list: selection.list(),
            host_has: host.summary(),
            unmatched: chosen.unmatched,
        });
    }
    // Kernel interface order: Open MPI's TCP BTL pairs its modules with the peers'
    // addresses in the order of its include list, and an order other than the kernel's
    // makes it connect a module bound to one link to the peer's address on another, which
    // hangs (measured with Open MPI 4.1.4: `data0,data1,mgmt0` hangs where the kernel order
    // `mgmt0,data0,data1` runs).
    let position = |name: &str| {
        host.netdev(name)
            .map(|n| (n.ifindex.unwrap_or(u32::MAX), n.name.clone()))
            .unwrap_or((u32::MAX, name.to_string()))
    };
    chosen.ip.sort_by_key(|u| position(&u.name));
    Ok(Resolution {
        hostname: host.hostname.clone(),
        mode: selection.mode,
        list: selection.list(),
        ip: chosen.ip,
        ports: chosen.ports,
        scope: chosen.scope,
        excluded_ip: chosen.excluded_ip,
        excluded_ports: chosen.excluded_ports,
        left_out: candidates.left_out,
        unmatched: chosen.unmatched,
        items: chosen.items,
        devices: host
            .netdevs
            .iter()
            .map(|n| n.name.clone())
            .chain(host.verbs.iter().map(|v| v.name.clone()))
            .collect(),
        rdma: host
            .verbs
            .iter()
            .map(|v| (v.name.clone(), v.kind))
            .collect(),
    })
}

/// Describes an item that matched nothing usable: why, when it names something the host
/// has but cannot use, and whether it names loopback or shared memory.
fn miss(host: &Host, mode: Mode, item: &Item, m: &Matches, left_out: &[LeftOut]) -> Unmatched {
    let names: Vec<String> =
        m.ip.iter()
            .cloned()
            .chain(m.ports.iter().map(|(d, n)| format!("{d}:{n}")))
            .collect();
    let why: Vec<String> = left_out
        .iter()
        .filter(|l| names.contains(&l.what))
        .map(|l| format!("{} is left out: {}", l.what, l.reason))
        .collect();
    let loopback_only = !names.is_empty()
        && m.ports.is_empty()
        && m.ip.iter().all(|n| {
            host.netdev(n)
                .is_some_and(|d| d.kind == NetdevKind::Loopback)
        });
    let kept_word = match &item.network {
        Network::Device { name, port: None } if names.is_empty() => ALWAYS_KEPT_NAMES
            .iter()
            .find(|(w, _)| w == name)
            .map(|(_, what)| *what),
        _ => None,
    };
    let (kind, why) = if let Some(what) = kept_word {
        (
            UnmatchedKind::AlwaysKept,
            format!("`{item}` means {what}; {ALWAYS_KEPT}"),
        )
    } else if loopback_only {
        (
            UnmatchedKind::AlwaysKept,
            format!("{} is loopback; {ALWAYS_KEPT}", m.ip.join(", ")),
        )
    } else if why.is_empty() {
        (UnmatchedKind::Nothing, String::new())
    } else {
        (UnmatchedKind::Unusable, why.join("; "))
    };
    Unmatched {
        item: item.to_string(),
        why,
        host_has: host.summary(),
        switch: mode.switch(),
        kind,
        hostname: host.hostname.clone(),
        host_names: host.names(),
    }
}

fn add_qualifier(set: &mut BTreeSet<Qualifier>, unqualified: &mut bool, item: &Item) {
    match item.qualifier {
        Some(q) => {
            set.insert(q);
        }
        None => *unqualified = true,
    }
}
