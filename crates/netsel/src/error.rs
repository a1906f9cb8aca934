//! Error types: grammar errors point at the offending item and list what is accepted;
//! resolution and translation errors name the host and what it has.

use thiserror::Error;

/// The accepted human names, for error messages.
pub const ACCEPTED_NETWORKS: &str =
    "a human name (ib, infiniband, roce, iwarp, eth, ethernet, usnic, opa, omnipath, efa), \
an interface or device name with an optional port (eth0, mlx5_0, mlx5_0:1), \
or a CIDR (10.20.0.0/16, fd00:30::/64)";

/// The accepted qualifiers, for error messages.
pub const ACCEPTED_QUALIFIERS: &str =
    "tcp, ucx (alias yalla), ofi, verbs (aliases openib, btl), mtl, usnic, psm2, psm, efa";

/// A malformed `--enable`/`--disable` list. Positions count items from 1.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GrammarError {
    /// Both `--enable` and `--disable` were given.
    #[error("--enable and --disable are mutually exclusive: give one list (use only these, or use all but these)")]
    BothSwitches,
    /// Neither switch was given where one is required.
    #[error("give --enable LIST or --disable LIST; an item is NETWORK[:QUALIFIER], NETWORK being {ACCEPTED_NETWORKS}")]
    NoSwitch,
    /// The list is empty.
    #[error("{switch} needs a list of NETWORK[:QUALIFIER] items separated by commas, got an empty list; NETWORK is {ACCEPTED_NETWORKS}")]
    EmptyList {
        /// `--enable` or `--disable`.
        switch: &'static str,
    },
    /// Two commas in a row, or a leading or trailing comma.
    #[error("item {position} is empty (two commas in a row, or a leading or trailing comma); an item is NETWORK[:QUALIFIER], NETWORK being {ACCEPTED_NETWORKS}")]
    EmptyItem {
        /// Position of the empty item.
        position: usize,
    },
    /// A space inside an item.
    #[error("item {position} `{item}` contains a space; spaces are allowed only around commas")]
    Space {
        /// Position of the item.
        position: usize,
        /// The item as given.
        item: String,
    },
    /// `:tcp` or similar with nothing before it.
    #[error(
        "item {position} `{item}` has no network before the `:`; NETWORK is {ACCEPTED_NETWORKS}"
    )]
    EmptyName {
        /// Position of the item.
        position: usize,
        /// The item as given.
        item: String,
    },
    /// A character that no interface name contains.
    #[error("item {position} `{item}`: `{character}` cannot be part of an interface or device name (letters, digits and _ - . @ are accepted); NETWORK is {ACCEPTED_NETWORKS}")]
    BadName {
        /// Position of the item.
        position: usize,
        /// The item as given.
        item: String,
        /// The first bad character.
        character: char,
    },
    /// A qualifier that is not known.
    #[error("item {position} `{item}`: unknown qualifier `{qualifier}`; known qualifiers: {ACCEPTED_QUALIFIERS}")]
    UnknownQualifier {
        /// Position of the item.
        position: usize,
        /// The item as given.
        item: String,
        /// The unknown qualifier.
        qualifier: String,
    },
    /// A trailing `:`.
    #[error("item {position} `{item}` ends with `:` but no qualifier; known qualifiers: {ACCEPTED_QUALIFIERS}")]
    EmptyQualifier {
        /// Position of the item.
        position: usize,
        /// The item as given.
        item: String,
    },
    /// A qualifier written alone, as if it were a network.
    #[error("item {position} `{item}` is a qualifier, not a network; write NETWORK:QUALIFIER, e.g. `{hint}`")]
    QualifierAsNetwork {
        /// Position of the item.
        position: usize,
        /// The item as given.
        item: String,
        /// A suggested spelling.
        hint: String,
    },
    /// More than `NAME:PORT:QUALIFIER`.
    #[error("item {position} `{item}` has too many `:` parts; accepted: NAME, NAME:QUALIFIER, NAME:PORT, NAME:PORT:QUALIFIER, ADDR/LEN, ADDR/LEN:QUALIFIER (known qualifiers: {ACCEPTED_QUALIFIERS})")]
    TooManyParts {
        /// Position of the item.
        position: usize,
        /// The item as given.
        item: String,
    },
    /// A port on a human name (`ib:1`).
    #[error("item {position} `{item}`: a port number only goes with a device name (mlx5_0:1), not with a human name")]
    PortOnHumanName {
        /// Position of the item.
        position: usize,
        /// The item as given.
        item: String,
    },
    /// A port number that does not fit.
    #[error("item {position} `{item}`: port `{port}` is not a valid port number")]
    BadPort {
        /// Position of the item.
        position: usize,
        /// The item as given.
        item: String,
        /// The port text.
        port: String,
    },
    /// The address part of a CIDR does not parse.
    #[error("item {position} `{item}`: `{address}` is not an IPv4 or IPv6 address; a CIDR is ADDR/LEN, e.g. 10.20.0.0/16 or fd00:30::/64")]
    BadAddress {
        /// Position of the item.
        position: usize,
        /// The item as given.
        item: String,
        /// The address text.
        address: String,
    },
    /// The prefix length is not a number in range.
    #[error("item {position} `{item}`: prefix length `{length}` is not a number from 0 to {max}")]
    BadPrefixLength {
        /// Position of the item.
        position: usize,
        /// The item as given.
        item: String,
        /// The prefix length text.
        length: String,
        /// 32 for IPv4, 128 for IPv6.
        max: u16,
    },
    /// A bare address.
    #[error("item {position} `{item}` is an address without a prefix length; write a CIDR, e.g. `{example}`")]
    AddressWithoutPrefix {
        /// Position of the item.
        position: usize,
        /// The item as given.
        item: String,
        /// The same address as a CIDR.
        example: String,
    },
}
