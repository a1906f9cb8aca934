//! Cross-host reachability of a selection (the pure part): which pairs of hosts have
//! selected networks that share no IP subnet, so that their traffic would leave through
//! interfaces outside the selection (the kernel routes by destination), or stop.
//!
//! Each rank knows only its own host. The intended use: every rank encodes its host's
//! selected networks with [`HostNetworks::encode`] (one short line), rank 0 gathers the
//! lines, decodes them with [`HostNetworks::decode`] and prints the warnings of
//! [`unreachable_pairs`].
//!
//! Two hosts reach each other through the selection when
//! - an address of one host's selected interfaces lies inside a selected network of the
//!   other (both directions are tried: `10.20.0.1/16` and `10.20.5.2/24` share a subnet);
//!   link-local (`fe80::/10`, `169.254.0.0/16`) and loopback addresses are left aside,
//!   because every link has them and they say nothing about which link; or
//! - both selected verbs ports of the same kind of fabric (InfiniBand with InfiniBand,
//!   RoCE with RoCE, ...): RDMA fabrics carry no IP subnet to compare, and one fabric kind
//!   per cluster is the common case, so that is taken as reachable.

use std::fmt;
use std::net::IpAddr;

use ipnet::IpNet;
use serde::Serialize;

use crate::host::VerbsKind;
use crate::plan::Report;

/// One selected IP interface of a host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SelectedInterface {
    /// Interface name (`data0`).
    pub name: String,
    /// Its addresses with prefix length (`10.20.0.1/24`, `fd00:20::1/64`).
    pub networks: Vec<IpNet>,
}

/// One selected verbs port of a host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SelectedPort {
    /// `dev:port` (`mlx5_0:1`).
    pub id: String,
    /// The kind of fabric.
    pub kind: VerbsKind,
}

/// What one host selected: its name, its selected IP interfaces and verbs ports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostNetworks {
    /// The host name.
    pub hostname: String,
    /// Selected IP interfaces.
    pub interfaces: Vec<SelectedInterface>,
    /// Selected verbs ports.
    pub ports: Vec<SelectedPort>,
}

/// A pair of hosts whose selected networks share nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnreachablePair {
    /// The first host's name (in the order given).
    pub first: String,
    /// The second host's name.
    pub second: String,
    /// The one-line warning naming both hosts and their selected networks.
    pub warning: String,
}

/// A line that [`HostNetworks::decode`] cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot decode selected networks `{text}`: {why}")]
pub struct DecodeError {
    /// The text given.
    pub text: String,
    /// What is wrong.
    pub why: String,
}

/// The first word of an encoded line: the format and its version.
pub const ENCODING_TAG: &str = "netsel1";

impl HostNetworks {
    /// What a report selected on its host: the IP interfaces and verbs ports the
    /// translation uses (what it left out, e.g. a second interface of a one-interface
    /// knob, is not selected).
    pub fn from_report(report: &Report) -> HostNetworks {
        let left_out = |what: &str| report.translation.left_out.iter().any(|l| l.what == what);
        HostNetworks {
            hostname: report.resolution.hostname.clone(),
            interfaces: report
                .resolution
                .ip
                .iter()
                .filter(|u| !left_out(&u.name))
                .map(|u| SelectedInterface {
                    name: u.name.clone(),
                    networks: u.addrs.clone(),
                })
                .collect(),
            ports: report
                .resolution
                .ports
                .iter()
                .filter(|p| !left_out(&p.id()))
                .map(|p| SelectedPort {
                    id: p.id(),
                    kind: p.kind,
                })
                .collect(),
        }
    }

    /// One line, stable across versions of this crate that keep [`ENCODING_TAG`]:
    ///
    /// ```text
    /// netsel1 HOST [ip:NAME=ADDR/LEN,ADDR/LEN ...] [rdma:DEV:PORT=KIND ...]
    /// ```
    ///
    /// Words are separated by one space; in HOST and NAME, `%`, space, `=`, `,` and any
    /// byte outside printable ASCII are written `%XX` (hex). KIND is `infiniband`, `roce`,
    /// `iwarp`, `usnic`, `omnipath` or `other`. E.g.
    /// `netsel1 h1 ip:data0=10.20.0.1/24,fd00:20::1/64 rdma:mlx5_0:1=infiniband`.
    pub fn encode(&self) -> String {
        let mut words = vec![ENCODING_TAG.to_string(), escape(&self.hostname)];
        for i in &self.interfaces {
            let nets: Vec<String> = i.networks.iter().map(IpNet::to_string).collect();
            words.push(format!("ip:{}={}", escape(&i.name), nets.join(",")));
        }
        for p in &self.ports {
            words.push(format!("rdma:{}={}", escape(&p.id), p.kind));
        }
        words.join(" ")
    }

    /// Reads a line written by [`HostNetworks::encode`].
    pub fn decode(text: &str) -> Result<HostNetworks, DecodeError> {
        let bad = |why: &str| DecodeError {
            text: text.to_string(),
            why: why.to_string(),
        };
        let mut words = text.trim().split(' ');
        if words.next() != Some(ENCODING_TAG) {
            return Err(bad(&format!("it does not start with `{ENCODING_TAG}`")));
        }
        let hostname = match words.next() {
            Some(h) if !h.is_empty() => {
                unescape(h).ok_or_else(|| bad("bad %-escape in the host name"))?
            }
            _ => return Err(bad("no host name")),
        };
        let mut out = HostNetworks {
            hostname,
            interfaces: Vec::new(),
            ports: Vec::new(),
        };
        for word in words {
            if let Some(rest) = word.strip_prefix("ip:") {
                let (name, nets) = rest
                    .split_once('=')
                    .ok_or_else(|| bad(&format!("`{word}` has no `=`")))?;
                let name =
                    unescape(name).ok_or_else(|| bad(&format!("bad %-escape in `{word}`")))?;
                let networks = nets
                    .split(',')
                    .filter(|n| !n.is_empty())
                    .map(|n| {
                        n.parse::<IpNet>()
                            .map_err(|_| bad(&format!("`{n}` is not ADDR/LEN")))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                out.interfaces.push(SelectedInterface { name, networks });
            } else if let Some(rest) = word.strip_prefix("rdma:") {
                let (id, kind) = rest
                    .rsplit_once('=')
                    .ok_or_else(|| bad(&format!("`{word}` has no `=`")))?;
                let id = unescape(id).ok_or_else(|| bad(&format!("bad %-escape in `{word}`")))?;
                let kind = parse_kind(kind)
                    .ok_or_else(|| bad(&format!("unknown fabric kind `{kind}`")))?;
                out.ports.push(SelectedPort { id, kind });
            } else {
                return Err(bad(&format!("unknown word `{word}`")));
            }
        }
        Ok(out)
    }

    /// `data0 10.20.0.1/24, mlx5_0:1 infiniband`, or `nothing` when nothing is selected.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .interfaces
            .iter()
            .map(|i| {
                let nets: Vec<String> = i.networks.iter().map(IpNet::to_string).collect();
                if nets.is_empty() {
                    i.name.clone()
                } else {
                    format!("{} {}", i.name, nets.join(" "))
                }
            })
            .collect();
        parts.extend(self.ports.iter().map(|p| format!("{} {}", p.id, p.kind)));
        if parts.is_empty() {
            "nothing".to_string()
        } else {
            parts.join(", ")
        }
    }

    /// True when the two hosts' selected networks share an IP subnet or a kind of fabric
    /// (see the module documentation).
    pub fn reaches(&self, other: &HostNetworks) -> bool {
        let nets = |h: &HostNetworks| -> Vec<IpNet> {
            h.interfaces
                .iter()
                .flat_map(|i| i.networks.iter().copied())
                .filter(|n| !is_link_scoped(n.addr()))
                .collect()
        };
        let (mine, theirs) = (nets(self), nets(other));
        let ip = mine.iter().any(|a| {
            theirs
                .iter()
                .any(|b| a.contains(&b.addr()) || b.contains(&a.addr()))
        });
        let fabric = self
            .ports
            .iter()
            .any(|p| other.ports.iter().any(|q| q.kind == p.kind));
        ip || fabric
    }
}

impl fmt::Display for HostNetworks {
    /// `HOST (what it selected)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.hostname, self.describe())
    }
}

/// The pairs of hosts whose selected networks share no IP subnet and no kind of fabric,
/// each with its warning line, e.g.
/// `WARNING network selection: h1 (data0 10.20.0.1/24) and h2 (data1 10.30.0.2/24) share no
/// selected network; the kernel will route their traffic by destination, outside the
/// selection`.
///
/// Hosts are compared once per name (a host given several times, once per rank, counts
/// once: its first entry is used); pairs come in the order the hosts are first given.
pub fn unreachable_pairs(hosts: &[HostNetworks]) -> Vec<UnreachablePair> {
    let mut unique: Vec<&HostNetworks> = Vec::new();
    for h in hosts {
        if !unique.iter().any(|u| u.hostname == h.hostname) {
            unique.push(h);
        }
    }
    let mut out = Vec::new();
    for (i, a) in unique.iter().enumerate() {
        for b in &unique[i + 1..] {
            if !a.reaches(b) {
                out.push(UnreachablePair {
                    first: a.hostname.clone(),
                    second: b.hostname.clone(),
                    warning: format!(
                        "WARNING network selection: {a} and {b} share no selected network; the kernel will route their traffic by destination, outside the selection"
                    ),
                });
            }
        }
    }
    out
}

/// Link-local and loopback addresses: present on every link, so they say nothing about
/// which link two hosts share.
fn is_link_scoped(a: IpAddr) -> bool {
    match a {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_link_local(),
        IpAddr::V6(v6) => v6.is_loopback() || (v6.segments()[0] & 0xffc0) == 0xfe80,
    }
}

fn parse_kind(s: &str) -> Option<VerbsKind> {
    Some(match s {
        "infiniband" => VerbsKind::Infiniband,
        "roce" => VerbsKind::Roce,
        "iwarp" => VerbsKind::Iwarp,
        "usnic" => VerbsKind::Usnic,
        "omnipath" => VerbsKind::OmniPath,
        "efa" => VerbsKind::Efa,
        "slingshot" => VerbsKind::Slingshot,
        "other" => VerbsKind::Other,
        _ => return None,
    })
}

fn escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_graphic() && !matches!(b, b'%' | b'=' | b',') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn unescape(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
