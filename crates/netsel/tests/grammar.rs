//! Table-driven grammar tests and the print/parse round trip.

use netsel::grammar::{HumanName, Item, Mode, Network, Qualifier, Selection};
use netsel::GrammarError;
use proptest::prelude::*;

fn dev(name: &str, port: Option<u32>, q: Option<Qualifier>) -> Item {
    Item {
        network: Network::Device {
            name: name.into(),
            port,
        },
        qualifier: q,
    }
}

fn human(h: HumanName, q: Option<Qualifier>) -> Item {
    Item {
        network: Network::Human(h),
        qualifier: q,
    }
}

fn cidr(s: &str, q: Option<Qualifier>) -> Item {
    Item {
        network: Network::Cidr(s.parse().unwrap()),
        qualifier: q,
    }
}

#[test]
fn valid_lists_parse_to_items() {
    use HumanName::{Ethernet, Infiniband, Iwarp, OmniPath, Roce};
    use Qualifier::{Mtl, Ofi, Psm2, Tcp, Ucx, Verbs};
    let table: Vec<(&str, Vec<Item>)> = vec![
        ("ib", vec![human(Infiniband, None)]),
        ("InfiniBand", vec![human(Infiniband, None)]),
        ("ETHERNET:TCP", vec![human(Ethernet, Some(Tcp))]),
        ("eth:usnic", vec![human(Ethernet, Some(Qualifier::Usnic))]),
        ("roce,iwarp", vec![human(Roce, None), human(Iwarp, None)]),
        (
            "opa:psm2, omnipath",
            vec![human(OmniPath, Some(Psm2)), human(OmniPath, None)],
        ),
        ("usnic", vec![human(HumanName::Usnic, None)]),
        ("ib:PSM", vec![human(Infiniband, Some(Qualifier::Psm))]),
        ("ib:yalla", vec![human(Infiniband, Some(Ucx))]),
        ("ib:btl", vec![human(Infiniband, Some(Verbs))]),
        ("ib:openib", vec![human(Infiniband, Some(Verbs))]),
        ("ib:mtl", vec![human(Infiniband, Some(Mtl))]),
        ("eth0", vec![dev("eth0", None, None)]),
        ("usnic_0", vec![dev("usnic_0", None, None)]),
        ("mlx5_0:1", vec![dev("mlx5_0", Some(1), None)]),
        ("mlx5_0:ucx", vec![dev("mlx5_0", None, Some(Ucx))]),
        ("MLX5_0:1:UCX", vec![dev("mlx5_0", Some(1), Some(Ucx))]),
        ("bond0.100", vec![dev("bond0.100", None, None)]),
        ("10.20.0.0/16", vec![cidr("10.20.0.0/16", None)]),
        ("10.20.3.4/16", vec![cidr("10.20.0.0/16", None)]),
        ("10.20.0.0/16:tcp", vec![cidr("10.20.0.0/16", Some(Tcp))]),
        ("fd00:30::/64", vec![cidr("fd00:30::/64", None)]),
        ("FD00:30::/64:ofi", vec![cidr("fd00:30::/64", Some(Ofi))]),
        ("0.0.0.0/0", vec![cidr("0.0.0.0/0", None)]),
        (
            "  eth0 ,\tib0:tcp ",
            vec![dev("eth0", None, None), dev("ib0", None, Some(Tcp))],
        ),
    ];
    for (text, want) in table {
        let got = Selection::parse(Mode::Enable, text)
            .unwrap_or_else(|e| panic!("`{text}` should parse: {e}"));
        assert_eq!(got.items, want, "parsing `{text}`");
    }
}

#[test]
fn malformed_lists_are_rejected_with_the_item_named() {
    let table: Vec<(&str, &str)> = vec![
        ("", "empty list"),
        ("   ", "empty list"),
        ("ib,,eth0", "item 2 is empty"),
        ("ib,", "item 2 is empty"),
        (",ib", "item 1 is empty"),
        ("ib:foo", "unknown qualifier `foo`"),
        ("eth0:1:bogus", "unknown qualifier `bogus`"),
        ("ib:", "ends with `:`"),
        ("10.0.0.0/33", "prefix length `33`"),
        ("fd00::/129", "prefix length `129`"),
        ("10.0.0.0/", "prefix length ``"),
        ("10.0.0.0/x", "prefix length `x`"),
        ("10.0.0.300/8", "is not an IPv4 or IPv6 address"),
        ("10.1.2.3", "without a prefix length"),
        ("fd00::1", "without a prefix length"),
        ("eth 0", "contains a space"),
        ("ib:1", "port number only goes with a device name"),
        ("mlx5_0:1:ucx:tcp", "too many"),
        (":tcp", "no network before"),
        ("tcp", "is a qualifier, not a network"),
        ("eth$0", "`$` cannot be part"),
    ];
    for (text, want) in table {
        let err = Selection::parse(Mode::Enable, text)
            .expect_err(&format!("`{text}` should be rejected"));
        let msg = err.to_string();
        assert!(
            msg.contains(want),
            "`{text}`: `{msg}` should contain `{want}`"
        );
    }
}

#[test]
fn errors_list_what_is_accepted() {
    let msg = Selection::parse(Mode::Enable, "ib:foo")
        .unwrap_err()
        .to_string();
    for q in [
        "tcp",
        "ucx",
        "yalla",
        "ofi",
        "verbs",
        "openib",
        "mtl",
        "usnic",
        "psm2",
        "psm2, psm",
        "efa",
    ] {
        assert!(msg.contains(q), "`{msg}` should list `{q}`");
    }
    let msg = Selection::parse(Mode::Disable, "").unwrap_err().to_string();
    assert!(msg.contains("--disable") && msg.contains("infiniband") && msg.contains("CIDR"));
}

#[test]
fn both_switches_and_none_are_errors() {
    assert_eq!(
        Selection::from_switches(Some("ib"), Some("eth")),
        Err(GrammarError::BothSwitches)
    );
    assert_eq!(
        Selection::from_switches(None, None),
        Err(GrammarError::NoSwitch)
    );
    let s = Selection::from_switches(None, Some("eth0")).unwrap();
    assert_eq!(s.mode, Mode::Disable);
}

#[test]
fn names_answers_the_proposal_query() {
    let s = Selection::parse(Mode::Enable, "eth,mlx5_0:1,10.20.0.0/16,ib0:tcp").unwrap();
    assert!(s.names("eth"));
    assert!(s.names("ETHERNET"), "aliases count");
    assert!(!s.names("ib"));
    assert!(s.names("mlx5_0"), "device named through one of its ports");
    assert!(s.names("mlx5_0:1"));
    assert!(!s.names("mlx5_0:2"));
    assert!(s.names("10.20.5.0/16"), "host bits cleared");
    assert!(!s.names("10.20.0.0/24"));
    assert!(s.names("IB0"));
    assert!(!s.names("eth0"));
    assert!(!s.names("not a value"));
}

#[test]
fn selection_from_str_takes_the_switch() {
    let s: Selection = "--disable=ib,eth0".parse().unwrap();
    assert_eq!(s.mode, Mode::Disable);
    assert_eq!(s.list(), "ib,eth0");
    assert_eq!("ib".parse::<Selection>(), Err(GrammarError::NoSwitch));
    assert!(matches!(
        "--enable".parse::<Selection>(),
        Err(GrammarError::EmptyList { .. })
    ));
}

#[test]
fn display_prints_switch_and_canonical_list() {
    let s = Selection::parse(
        Mode::Disable,
        " Ethernet:TCP , MLX5_0:1:yalla,fd00:30::1/64:btl",
    )
    .unwrap();
    assert_eq!(
        s.to_string(),
        "--disable eth:tcp,mlx5_0:1:ucx,fd00:30::/64:verbs"
    );
}

fn arb_item() -> impl Strategy<Value = Item> {
    let qual = prop::option::of(prop::sample::select(vec![
        Qualifier::Tcp,
        Qualifier::Ucx,
        Qualifier::Ofi,
        Qualifier::Verbs,
        Qualifier::Mtl,
        Qualifier::Usnic,
        Qualifier::Psm2,
        Qualifier::Psm,
    ]));
    let human = prop::sample::select(vec![
        HumanName::Infiniband,
        HumanName::Roce,
        HumanName::Iwarp,
        HumanName::Ethernet,
        HumanName::Usnic,
        HumanName::OmniPath,
    ])
    .prop_map(Network::Human);
    let device = ("[a-z][a-z0-9_.@-]{0,10}", prop::option::of(0u32..64))
        .prop_filter("not a human name or qualifier", |(n, _)| {
            HumanName::lookup(n).is_none() && Qualifier::lookup(n).is_none()
        })
        .prop_map(|(name, port)| Network::Device { name, port });
    let v4 = (any::<u32>(), 0u8..=32).prop_map(|(a, l)| {
        Network::Cidr(
            ipnet::IpNet::new(std::net::Ipv4Addr::from(a).into(), l)
                .unwrap()
                .trunc(),
        )
    });
    let v6 = (any::<u128>(), 0u8..=128).prop_map(|(a, l)| {
        Network::Cidr(
            ipnet::IpNet::new(std::net::Ipv6Addr::from(a).into(), l)
                .unwrap()
                .trunc(),
        )
    });
    (prop_oneof![human, device, v4, v6], qual)
        .prop_map(|(network, qualifier)| Item { network, qualifier })
}

proptest! {
    #[test]
    fn printed_selection_parses_back(items in prop::collection::vec(arb_item(), 1..6), enable in any::<bool>()) {
        let mode = if enable { Mode::Enable } else { Mode::Disable };
        let s = Selection { mode, items };
        let back = Selection::parse(mode, &s.list()).map_err(|e| TestCaseError::fail(format!("{}: {e}", s.list())))?;
        prop_assert_eq!(&back, &s);
        let whole: Selection = s.to_string().parse().map_err(|e| TestCaseError::fail(format!("{s}: {e}")))?;
        prop_assert_eq!(whole, s);
    }
}
