//! The fabrics `FABRICS.md` documents, each with the fixture host of `tests/fixtures/`
//! modelled on it and the selection its rows translate: the table's test plans them,
//! and the registry check of every MPI installation (`crates/sqmr/tests/net_detect.rs`)
//! checks their settings against the libraries' own registries.

/// Fabric, fixture, selection.
pub const FABRICS: &[(&str, &str, &str)] = &[
    ("Ethernet, TCP", "bond", "--enable 10.80.0.0/24"),
    ("InfiniBand", "ib-ipoib", "--enable ib"),
    (
        "InfiniBand partition (ib0.8001)",
        "ib-pkey",
        "--enable ib0.8001",
    ),
    ("RoCE", "roce", "--enable roce"),
    (
        "RoCE v2 on a VLAN (bond0.200)",
        "roce-vlan",
        "--enable bond0.200",
    ),
    ("iWARP", "iwarp", "--enable iwarp"),
    ("usNIC", "usnic", "--enable usnic"),
    ("Omni-Path (PSM2, the default)", "opa", "--enable opa"),
    ("Omni-Path Express (OPX)", "opa", "--enable opa:opx"),
    ("TrueScale (qib)", "qib", "--enable ib"),
    ("AWS EFA", "efa", "--enable efa"),
    ("HPE Slingshot-11", "slingshot", "--enable slingshot"),
    ("Four InfiniBand rails", "ib-4rail", "--enable ib"),
];
