//! Cross-host reachability of the selected networks, and the one-line encoding a rank
//! sends to rank 0.

mod common;

use common::plan_on;
use netsel::reach::DecodeError;
use netsel::{unreachable_pairs, HostNetworks, SelectedInterface, SelectedPort, VerbsKind};
use proptest::prelude::*;

fn h(name: &str, ifaces: &[(&str, &[&str])], ports: &[(&str, VerbsKind)]) -> HostNetworks {
    HostNetworks {
        hostname: name.into(),
        interfaces: ifaces
            .iter()
            .map(|(n, nets)| SelectedInterface {
                name: n.to_string(),
                networks: nets.iter().map(|a| a.parse().unwrap()).collect(),
            })
            .collect(),
        ports: ports
            .iter()
            .map(|(id, kind)| SelectedPort {
                id: id.to_string(),
                kind: *kind,
            })
            .collect(),
    }
}

fn pairs(hosts: &[HostNetworks]) -> Vec<(String, String)> {
    unreachable_pairs(hosts)
        .into_iter()
        .map(|p| (p.first, p.second))
        .collect()
}

#[test]
fn hosts_on_different_subnets_get_one_warning_naming_both() {
    let hosts = [
        h("h1", &[("data0", &["10.20.0.1/24"])], &[]),
        h("h2", &[("data1", &["10.30.0.2/24"])], &[]),
    ];
    let p = unreachable_pairs(&hosts);
    assert_eq!(p.len(), 1);
    assert_eq!((p[0].first.as_str(), p[0].second.as_str()), ("h1", "h2"));
    assert_eq!(
        p[0].warning,
        "WARNING network selection: h1 (data0 10.20.0.1/24) and h2 (data1 10.30.0.2/24) share no selected network; the kernel will route their traffic by destination, outside the selection"
    );
}

#[test]
fn a_shared_subnet_is_reachable_whatever_the_prefix_lengths() {
    let a = h("a", &[("data0", &["10.20.0.1/16"])], &[]);
    let b = h("b", &[("data0", &["10.20.5.2/24"])], &[]);
    let c = h(
        "c",
        &[("eth0", &["192.168.1.3/24"]), ("eth1", &["10.20.5.3/24"])],
        &[],
    );
    // b and d: neither address lies in the other's /24, though both lie in a's /16.
    let d = h("d", &[("eth1", &["10.20.9.4/24"])], &[]);
    assert_eq!(
        pairs(&[a.clone(), b.clone(), d]),
        vec![("b".to_string(), "d".to_string())]
    );
    assert!(pairs(&[a.clone(), b.clone(), c.clone()]).is_empty());
    let v6a = h("v6a", &[("eth0", &["fd00:90::11/64"])], &[]);
    let v6b = h("v6b", &[("eth0", &["fd00:90::12/64"])], &[]);
    let v6c = h("v6c", &[("eth1", &["fd00:91::13/64"])], &[]);
    assert_eq!(
        pairs(&[v6a, v6b, v6c]),
        vec![
            ("v6a".to_string(), "v6c".to_string()),
            ("v6b".to_string(), "v6c".to_string())
        ]
    );
    // IPv4 against IPv6 never shares a subnet.
    let v4 = h("v4", &[("eth0", &["10.0.0.1/8"])], &[]);
    let v6 = h("v6", &[("eth0", &["fd00::1/8"])], &[]);
    assert_eq!(pairs(&[v4, v6]).len(), 1);
}

#[test]
fn link_local_and_loopback_addresses_do_not_count() {
    let a = h(
        "a",
        &[("data0", &["10.20.0.1/24", "fe80::1/64", "169.254.1.1/16"])],
        &[],
    );
    let b = h(
        "b",
        &[("data1", &["10.30.0.2/24", "fe80::2/64", "169.254.2.2/16"])],
        &[],
    );
    let p = unreachable_pairs(&[a, b]);
    assert_eq!(p.len(), 1);
    assert!(
        p[0].warning
            .contains("a (data0 10.20.0.1/24 fe80::1/64 169.254.1.1/16) and b"),
        "{}",
        p[0].warning
    );
}

#[test]
fn verbs_only_selections_reach_each_other_on_the_same_kind_of_fabric() {
    let ib1 = h("ib1", &[], &[("mlx5_0:1", VerbsKind::Infiniband)]);
    let ib2 = h("ib2", &[], &[("mlx5_1:1", VerbsKind::Infiniband)]);
    let roce = h("roce", &[], &[("mlx5_0:1", VerbsKind::Roce)]);
    let ip = h("ip", &[("eth0", &["10.0.0.1/24"])], &[]);
    assert_eq!(
        pairs(&[ib1.clone(), ib2.clone(), roce.clone(), ip]),
        vec![
            ("ib1".to_string(), "roce".to_string()),
            ("ib1".to_string(), "ip".to_string()),
            ("ib2".to_string(), "roce".to_string()),
            ("ib2".to_string(), "ip".to_string()),
            ("roce".to_string(), "ip".to_string()),
        ]
    );
    let w = &unreachable_pairs(&[ib1, roce])[0].warning;
    assert!(
        w.contains("ib1 (mlx5_0:1 infiniband) and roce (mlx5_0:1 roce)"),
        "{w}"
    );
    // A fabric in common is enough, even when the IP sides differ.
    let a = h(
        "a",
        &[("data0", &["10.20.0.1/24"])],
        &[("mlx5_0:1", VerbsKind::Infiniband)],
    );
    let b = h(
        "b",
        &[("data1", &["10.30.0.2/24"])],
        &[("mlx5_0:1", VerbsKind::Infiniband)],
    );
    assert!(pairs(&[a, b]).is_empty());
}

#[test]
fn a_host_given_once_per_rank_is_compared_once() {
    let a = h("a", &[("data0", &["10.20.0.1/24"])], &[]);
    let b = h("b", &[("data1", &["10.30.0.2/24"])], &[]);
    let hosts = [a.clone(), a.clone(), b.clone(), b, a];
    assert_eq!(pairs(&hosts), vec![("a".to_string(), "b".to_string())]);
    assert!(unreachable_pairs(&[]).is_empty());
    let nothing = h("n", &[], &[]);
    let p = unreachable_pairs(&[nothing, h("m", &[("eth0", &["10.0.0.1/24"])], &[])]);
    assert!(
        p[0].warning
            .contains("n (nothing) and m (eth0 10.0.0.1/24)"),
        "{}",
        p[0].warning
    );
}

#[test]
fn the_encoding_is_one_stable_line_that_decodes_back() {
    let a = h(
        "h1",
        &[
            ("data0", &["10.20.0.1/24", "fd00:20::1/64"]),
            ("data1", &["10.30.0.1/24"]),
        ],
        &[("mlx5_0:1", VerbsKind::Infiniband)],
    );
    let line = a.encode();
    assert_eq!(
        line,
        "netsel1 h1 ip:data0=10.20.0.1/24,fd00:20::1/64 ip:data1=10.30.0.1/24 rdma:mlx5_0:1=infiniband"
    );
    assert_eq!(HostNetworks::decode(&line), Ok(a));
    assert_eq!(HostNetworks::decode("netsel1 h2"), Ok(h("h2", &[], &[])));
    // Separators inside names are escaped.
    let odd = h("my host", &[("a=b,c%d", &["10.0.0.1/8"])], &[]);
    assert_eq!(
        odd.encode(),
        "netsel1 my%20host ip:a%3Db%2Cc%25d=10.0.0.1/8"
    );
    assert_eq!(HostNetworks::decode(&odd.encode()), Ok(odd));
}

#[test]
fn decoding_garbage_is_an_error_naming_it() {
    for bad in [
        "",
        "netsel2 h1",
        "netsel1",
        "netsel1 h1 ip:data0",
        "netsel1 h1 ip:data0=10.0.0.1",
        "netsel1 h1 rdma:mlx5_0:1=warp",
        "netsel1 h1 eth0=10.0.0.1/8",
        "netsel1 h%zz",
    ] {
        let e: DecodeError = HostNetworks::decode(bad).unwrap_err();
        assert_eq!(e.text, bad);
        assert!(e.to_string().contains("cannot decode"), "{e}");
    }
}

#[test]
fn from_report_takes_what_the_translation_uses() {
    // MPICH nemesis takes one interface: eth1 is left out, so it is not selected.
    let r = plan_on("ipv6", "--enable eth", "mpich-nemesis").unwrap();
    let n = HostNetworks::from_report(&r);
    assert_eq!(
        n.encode(),
        "netsel1 node-v6 ip:eth0=fd00:90::11/64,fe80::5054:ff:fe00:11/64"
    );
    let r = plan_on("ib-ipoib", "--enable mlx5_0:1", "mvapich2").unwrap();
    assert_eq!(
        HostNetworks::from_report(&r).encode(),
        "netsel1 node-ib rdma:mlx5_0:1=infiniband"
    );
    let r = plan_on("ib-ipoib", "--enable 10.30.0.0/16", "mpich-ucx").unwrap();
    assert_eq!(
        HostNetworks::from_report(&r).encode(),
        "netsel1 node-ib ip:ib0=10.30.0.5/16,fd00:30::5/64 rdma:mlx5_0:1=infiniband"
    );
}

fn arb_host() -> impl Strategy<Value = HostNetworks> {
    let net = prop_oneof![
        (any::<u32>(), 0u8..=32).prop_map(|(a, l)| ipnet::IpNet::new(
            std::net::Ipv4Addr::from(a).into(),
            l
        )
        .unwrap()),
        (any::<u128>(), 0u8..=128).prop_map(|(a, l)| ipnet::IpNet::new(
            std::net::Ipv6Addr::from(a).into(),
            l
        )
        .unwrap()),
    ];
    let iface = ("\\PC{1,12}", prop::collection::vec(net, 0..3))
        .prop_map(|(name, networks)| SelectedInterface { name, networks });
    let kind = prop::sample::select(vec![
        VerbsKind::Infiniband,
        VerbsKind::Roce,
        VerbsKind::Iwarp,
        VerbsKind::Usnic,
        VerbsKind::OmniPath,
        VerbsKind::Efa,
        VerbsKind::Slingshot,
        VerbsKind::Other,
    ]);
    let port = ("\\PC{1,12}", kind).prop_map(|(id, kind)| SelectedPort { id, kind });
    (
        "\\PC{1,20}",
        prop::collection::vec(iface, 0..4),
        prop::collection::vec(port, 0..3),
    )
        .prop_map(|(hostname, interfaces, ports)| HostNetworks {
            hostname,
            interfaces,
            ports,
        })
}

proptest! {
    #[test]
    fn encoding_round_trips(host in arb_host()) {
        let line = host.encode();
        prop_assert!(!line.contains('\n'));
        prop_assert_eq!(HostNetworks::decode(&line), Ok(host));
    }
}
