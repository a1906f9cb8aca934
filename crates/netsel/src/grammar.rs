//! The `--enable|--disable NETWORK[:QUALIFIER],...` grammar: parsing, printing and the
//! proposal's "did the user name this value?" query.
//!
//! Parsing rules (see the crate README for the tricky cases):
//! - items are separated by commas; spaces around an item are ignored, spaces inside
//!   one are an error; an empty list or an empty item is an error;
//! - an item that contains `/` is a CIDR: `ADDR/LEN[:QUALIFIER]` (the address of an IPv6
//!   CIDR contains colons; the qualifier can only come after the prefix length);
//! - otherwise the item is split at `:`: `NAME`, `NAME:QUALIFIER`, `NAME:PORT` or
//!   `NAME:PORT:QUALIFIER`, where a part that is all digits is a port;
//! - everything is case-insensitive and is stored in lower case.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use ipnet::IpNet;
use serde::Serialize;

use crate::error::GrammarError;

/// Whether the list names the networks to use or the networks to avoid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// `--enable`: use only these networks.
    Enable,
    /// `--disable`: use every network except these.
    Disable,
}

impl Mode {
    /// The command-line switch for this mode (`--enable` or `--disable`).
    pub fn switch(self) -> &'static str {
        match self {
            Mode::Enable => "--enable",
            Mode::Disable => "--disable",
        }
    }
}

/// A network family a user names in words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HumanName {
    /// InfiniBand (`ib`, `infiniband`): IB verbs ports and the IPoIB netdevs on them.
    Infiniband,
    /// RDMA over Converged Ethernet (`roce`).
    Roce,
    /// iWARP RNICs (`iwarp`).
    Iwarp,
    /// Ethernet (`eth`, `ethernet`): hardware-backed Ethernet netdevs, and RoCE,
    /// iWARP and usNIC devices.
    Ethernet,
    /// Cisco usNIC (`usnic`).
    Usnic,
    /// Intel/Cornelis Omni-Path (`opa`, `omnipath`, `omni-path`).
    OmniPath,
    /// AWS Elastic Fabric Adapter (`efa`): `efa_N` devices, driven by libfabric's `efa`
    /// provider only.
    Efa,
    /// HPE Slingshot-11 (`slingshot`, `cxi`): Cassini NICs `cxiN`, driven by libfabric's
    /// `cxi` provider; their `hsnN` netdevs only with `:tcp`.
    Slingshot,
}

/// Every accepted spelling of a human name, with what it means.
pub const HUMAN_NAMES: &[(&str, HumanName)] = &[
    ("ib", HumanName::Infiniband),
    ("infiniband", HumanName::Infiniband),
    ("roce", HumanName::Roce),
    ("iwarp", HumanName::Iwarp),
    ("eth", HumanName::Ethernet),
    ("ethernet", HumanName::Ethernet),
    ("usnic", HumanName::Usnic),
    ("opa", HumanName::OmniPath),
    ("omnipath", HumanName::OmniPath),
    ("omni-path", HumanName::OmniPath),
    ("efa", HumanName::Efa),
    ("slingshot", HumanName::Slingshot),
    ("cxi", HumanName::Slingshot),
];

impl HumanName {
    /// The canonical (shortest common) spelling, used when printing.
    pub fn as_str(self) -> &'static str {
        match self {
            HumanName::Infiniband => "ib",
            HumanName::Roce => "roce",
            HumanName::Iwarp => "iwarp",
            HumanName::Ethernet => "eth",
            HumanName::Usnic => "usnic",
            HumanName::OmniPath => "opa",
            HumanName::Efa => "efa",
            HumanName::Slingshot => "slingshot",
        }
    }

    /// Looks a (lower-case) word up among the human names.
    pub fn lookup(word: &str) -> Option<HumanName> {
        HUMAN_NAMES
            .iter()
            .find(|(w, _)| *w == word)
            .map(|(_, h)| *h)
    }
}

impl fmt::Display for HumanName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The code path a user asks for with `:QUALIFIER`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Qualifier {
    /// Plain TCP sockets (Open MPI's TCP BTL, UCX's or libfabric's TCP transport).
    Tcp,
    /// UCX (Open MPI's UCX PML; the proposal's `yalla` is an alias).
    Ucx,
    /// libfabric (Open MPI's OFI MTL, MPICH's ch4:ofi).
    Ofi,
    /// Native verbs (Open MPI 4.x openib BTL; aliases `openib`, `btl`).
    Verbs,
    /// Open MPI's MTL path (`pml cm`), with OFI or PSM2 as the MTL.
    Mtl,
    /// Cisco usNIC (Open MPI's usnic BTL, libfabric's usnic provider).
    Usnic,
    /// Omni-Path PSM2 (Open MPI's psm2 MTL, libfabric's psm2 provider).
    Psm2,
    /// TrueScale PSM (Open MPI 4's psm MTL) for `qib` InfiniBand HCAs.
    Psm,
    /// AWS EFA through libfabric's `efa` provider.
    Efa,
    /// HPE Slingshot-11 through libfabric's `cxi` provider.
    Cxi,
    /// Omni-Path through libfabric's `opx` provider (Omni-Path Express).
    Opx,
}

/// Every accepted spelling of a qualifier.
pub const QUALIFIERS: &[(&str, Qualifier)] = &[
    ("tcp", Qualifier::Tcp),
    ("ucx", Qualifier::Ucx),
    ("yalla", Qualifier::Ucx),
    ("ofi", Qualifier::Ofi),
    ("verbs", Qualifier::Verbs),
    ("openib", Qualifier::Verbs),
    ("btl", Qualifier::Verbs),
    ("mtl", Qualifier::Mtl),
    ("usnic", Qualifier::Usnic),
    ("psm2", Qualifier::Psm2),
    ("psm", Qualifier::Psm),
    ("efa", Qualifier::Efa),
    ("cxi", Qualifier::Cxi),
    ("opx", Qualifier::Opx),
];

impl Qualifier {
    /// The canonical spelling, used when printing.
    pub fn as_str(self) -> &'static str {
        match self {
            Qualifier::Tcp => "tcp",
            Qualifier::Ucx => "ucx",
            Qualifier::Ofi => "ofi",
            Qualifier::Verbs => "verbs",
            Qualifier::Mtl => "mtl",
            Qualifier::Usnic => "usnic",
            Qualifier::Psm2 => "psm2",
            Qualifier::Psm => "psm",
            Qualifier::Efa => "efa",
            Qualifier::Cxi => "cxi",
            Qualifier::Opx => "opx",
        }
    }

    /// Looks a (lower-case) word up among the qualifiers.
    pub fn lookup(word: &str) -> Option<Qualifier> {
        QUALIFIERS.iter().find(|(w, _)| *w == word).map(|(_, q)| *q)
    }
}

impl fmt::Display for Qualifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an item names.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "value")]
pub enum Network {
    /// A network family in words (`ib`, `ethernet`, ...).
    Human(HumanName),
    /// A netdev or verbs device name (`eth0`, `mlx5_0`), lower case, with an optional port.
    Device {
        /// The device or interface name, lower case.
        name: String,
        /// The port (`mlx5_0:1`), if given.
        port: Option<u32>,
    },
    /// An IPv4 or IPv6 network; host bits are cleared when parsing.
    Cidr(IpNet),
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Network::Human(h) => write!(f, "{h}"),
            Network::Device { name, port: None } => f.write_str(name),
            Network::Device {
                name,
                port: Some(p),
            } => write!(f, "{name}:{p}"),
            Network::Cidr(net) => write!(f, "{net}"),
        }
    }
}

/// One item of the list: a network and an optional qualifier.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Item {
    /// What the item names.
    pub network: Network,
    /// The code path asked for, if any.
    pub qualifier: Option<Qualifier>,
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.qualifier {
            Some(q) => write!(f, "{}:{q}", self.network),
            None => write!(f, "{}", self.network),
        }
    }
}

impl FromStr for Item {
    type Err = GrammarError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_item(s, 1)
    }
}

/// A parsed `--enable` or `--disable` list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Selection {
    /// Enable (only these) or disable (all but these).
    pub mode: Mode,
    /// The items, in the order given.
    pub items: Vec<Item>,
}

impl Selection {
    /// Parses one list for the given mode.
    pub fn parse(mode: Mode, list: &str) -> Result<Selection, GrammarError> {
        if list.trim().is_empty() {
            return Err(GrammarError::EmptyList {
                switch: mode.switch(),
            });
        }
        let items = list
            .split(',')
            .enumerate()
            .map(|(i, raw)| parse_item(raw, i + 1))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Selection { mode, items })
    }

    /// Builds a selection from the two optional switches of a command line: exactly one
    /// must be given.
    pub fn from_switches(
        enable: Option<&str>,
        disable: Option<&str>,
    ) -> Result<Selection, GrammarError> {
        match (enable, disable) {
            (Some(_), Some(_)) => Err(GrammarError::BothSwitches),
            (Some(list), None) => Selection::parse(Mode::Enable, list),
            (None, Some(list)) => Selection::parse(Mode::Disable, list),
            (None, None) => Err(GrammarError::NoSwitch),
        }
    }

    /// The list part, printed so that it parses back to an equal selection.
    pub fn list(&self) -> String {
        self.items
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The proposal's query: did the user name this value? Case-insensitive.
    ///
    /// `value` is parsed like an item without a qualifier. Human names match through
    /// their aliases (`names("ethernet")` is true when the user wrote `eth`). A device
    /// name without a port matches an item naming that device with or without a port;
    /// with a port it matches an item with the same port or no port. CIDRs compare
    /// after their host bits are cleared. A value that does not parse is never named.
    pub fn names(&self, value: &str) -> bool {
        let Ok(asked) = parse_item(value, 1) else {
            return false;
        };
        self.items
            .iter()
            .any(|item| network_names(&item.network, &asked.network))
    }
}

fn network_names(given: &Network, asked: &Network) -> bool {
    match (given, asked) {
        (Network::Human(a), Network::Human(b)) => a == b,
        (Network::Cidr(a), Network::Cidr(b)) => a == b,
        (Network::Device { name: a, port: pa }, Network::Device { name: b, port: pb }) => {
            a == b && (pa.is_none() || pb.is_none() || pa == pb)
        }
        _ => false,
    }
}

impl fmt::Display for Selection {
    /// Prints `--enable LIST` or `--disable LIST`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.mode.switch(), self.list())
    }
}

impl FromStr for Selection {
    type Err = GrammarError;

    /// Parses what `Display` prints: `--enable LIST` or `--disable LIST` (also
    /// `--enable=LIST`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim_start();
        for mode in [Mode::Enable, Mode::Disable] {
            if let Some(rest) = s.strip_prefix(mode.switch()) {
                if let Some(list) = rest.strip_prefix('=').or_else(|| rest.strip_prefix(' ')) {
                    return Selection::parse(mode, list);
                }
                if rest.is_empty() {
                    return Selection::parse(mode, rest);
                }
            }
        }
        Err(GrammarError::NoSwitch)
    }
}

/// Characters accepted in a device or interface name besides ASCII letters and digits.
pub const NAME_PUNCTUATION: &str = "_-.@";

fn parse_item(raw: &str, position: usize) -> Result<Item, GrammarError> {
    let text = raw.trim();
    let err_item = || text.to_string();
    if text.is_empty() {
        return Err(GrammarError::EmptyItem { position });
    }
    if text.chars().any(char::is_whitespace) {
        return Err(GrammarError::Space {
            position,
            item: err_item(),
        });
    }
    let lower = text.to_ascii_lowercase();
    if lower.contains('/') {
        return parse_cidr_item(&lower, position);
    }
    if lower.contains("::") || lower.parse::<Ipv6Addr>().is_ok() {
        return Err(GrammarError::AddressWithoutPrefix {
            position,
            item: err_item(),
            example: format!("{lower}/128"),
        });
    }
    let mut parts = lower.split(':');
    let name = parts.next().unwrap_or_default();
    let rest: Vec<&str> = parts.collect();
    if name.parse::<Ipv4Addr>().is_ok() {
        return Err(GrammarError::AddressWithoutPrefix {
            position,
            item: err_item(),
            example: format!("{name}/32"),
        });
    }
    let (port, qualifier) = match rest.as_slice() {
        [] => (None, None),
        [one] if is_digits(one) => (Some(parse_port(one, position, text)?), None),
        [one] => (None, Some(parse_qualifier(one, position, text)?)),
        [p, q] if is_digits(p) => (
            Some(parse_port(p, position, text)?),
            Some(parse_qualifier(q, position, text)?),
        ),
        _ => {
            return Err(GrammarError::TooManyParts {
                position,
                item: err_item(),
            })
        }
    };
    let network = if let Some(h) = HumanName::lookup(name) {
        if port.is_some() {
            return Err(GrammarError::PortOnHumanName {
                position,
                item: err_item(),
            });
        }
        Network::Human(h)
    } else {
        check_name(name, position, text)?;
        if port.is_none() && qualifier.is_none() {
            if let Some(q) = Qualifier::lookup(name) {
                return Err(GrammarError::QualifierAsNetwork {
                    position,
                    item: err_item(),
                    hint: format!("eth:{q}"),
                });
            }
        }
        Network::Device {
            name: name.to_string(),
            port,
        }
    };
    Ok(Item { network, qualifier })
}

fn parse_cidr_item(lower: &str, position: usize) -> Result<Item, GrammarError> {
    let (addr_text, after) = lower.split_once('/').unwrap_or((lower, ""));
    let (len_text, qual_text) = match after.split_once(':') {
        Some((l, q)) => (l, Some(q)),
        None => (after, None),
    };
    let addr: IpAddr = addr_text.parse().map_err(|_| GrammarError::BadAddress {
        position,
        item: lower.to_string(),
        address: addr_text.to_string(),
    })?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let len: u8 = match len_text.parse::<u16>() {
        Ok(n) if is_digits(len_text) && n <= max => n as u8,
        _ => {
            return Err(GrammarError::BadPrefixLength {
                position,
                item: lower.to_string(),
                length: len_text.to_string(),
                max,
            })
        }
    };
    let net = IpNet::new(addr, len)
        .map_err(|_| GrammarError::BadPrefixLength {
            position,
            item: lower.to_string(),
            length: len_text.to_string(),
            max,
        })?
        .trunc();
    let qualifier = qual_text
        .map(|q| parse_qualifier(q, position, lower))
        .transpose()?;
    Ok(Item {
        network: Network::Cidr(net),
        qualifier,
    })
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn parse_port(s: &str, position: usize, item: &str) -> Result<u32, GrammarError> {
    s.parse().map_err(|_| GrammarError::BadPort {
        position,
        item: item.to_string(),
        port: s.to_string(),
    })
}

fn parse_qualifier(s: &str, position: usize, item: &str) -> Result<Qualifier, GrammarError> {
    if s.is_empty() {
        return Err(GrammarError::EmptyQualifier {
            position,
            item: item.to_string(),
        });
    }
    Qualifier::lookup(s).ok_or_else(|| GrammarError::UnknownQualifier {
        position,
        item: item.to_string(),
        qualifier: s.to_string(),
    })
}

fn check_name(name: &str, position: usize, item: &str) -> Result<(), GrammarError> {
    if name.is_empty() {
        return Err(GrammarError::EmptyName {
            position,
            item: item.to_string(),
        });
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || NAME_PUNCTUATION.contains(*c)))
    {
        return Err(GrammarError::BadName {
            position,
            item: item.to_string(),
            character: bad,
        });
    }
    Ok(())
}
