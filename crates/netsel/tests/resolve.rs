//! Resolution on the fixture hosts: what is used, what is left out and why.

mod common;

use common::{host, sel};
use netsel::resolve;

fn used(fixture: &str, args: &str) -> (Vec<String>, Vec<String>) {
    let r = resolve(&sel(args), &host(fixture)).unwrap_or_else(|e| panic!("{args}: {e}"));
    (
        r.ip.iter().map(|u| u.name.clone()).collect(),
        r.ports.iter().map(|p| p.id()).collect(),
    )
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn human_names_pick_the_right_family() {
    let cases: Vec<(&str, &str, &[&str], &[&str])> = vec![
        ("ib-ipoib", "--enable ib", &[], &["mlx5_0:1"]),
        ("ib-ipoib", "--enable ib:tcp", &["ib0"], &[]),
        ("ib-ipoib", "--enable eth", &["eth0"], &[]),
        ("roce", "--enable roce", &[], &["mlx5_0:1"]),
        ("roce", "--enable eth", &["ens1f0", "eth0"], &["mlx5_0:1"]),
        ("roce", "--enable eth:tcp", &["ens1f0", "eth0"], &[]),
        ("roce", "--enable roce:tcp", &["ens1f0"], &[]),
        ("iwarp", "--enable iwarp", &[], &["cxgb4_0:1"]),
        ("iwarp", "--enable eth:verbs", &[], &["cxgb4_0:1"]),
        ("usnic", "--enable usnic", &[], &["usnic_0:1"]),
        ("opa", "--enable opa", &[], &["hfi1_0:1"]),
        ("opa", "--enable opa:tcp", &["ib0"], &[]),
        ("bond", "--enable eth", &["bond0"], &[]),
        ("ipv6", "--enable ethernet", &["eth0", "eth1"], &[]),
    ];
    for (fx, args, ip, ports) in cases {
        assert_eq!(used(fx, args), (strs(ip), strs(ports)), "{fx} {args}");
    }
}

#[test]
fn names_ports_and_cidrs() {
    let cases: Vec<(&str, &str, &[&str], &[&str])> = vec![
        ("ib-ipoib", "--enable ib0", &["ib0"], &["mlx5_0:1"]),
        ("ib-ipoib", "--enable ib0:tcp", &["ib0"], &[]),
        ("ib-ipoib", "--enable mlx5_0:1", &["ib0"], &["mlx5_0:1"]),
        ("ib-ipoib", "--enable mlx5_0:1:verbs", &[], &["mlx5_0:1"]),
        ("ib-ipoib", "--enable MLX5_0:ucx", &["ib0"], &["mlx5_0:1"]),
        ("ib-ipoib", "--enable 10.30.0.0/16", &["ib0"], &["mlx5_0:1"]),
        ("ib-ipoib", "--enable fd00:30::/64:tcp", &["ib0"], &[]),
        (
            "roce",
            "--enable 10.40.0.0/24:ucx",
            &["ens1f0"],
            &["mlx5_0:1"],
        ),
        ("ipv6", "--enable fd00:91::/64", &["eth1"], &[]),
        ("iwarp", "--enable 10.51.0.0/24:tcp", &["ens2"], &[]),
        (
            "bond",
            "--enable 10.80.0.0/16,172.17.0.0/16",
            &["bond0", "docker0"],
            &[],
        ),
    ];
    for (fx, args, ip, ports) in cases {
        assert_eq!(used(fx, args), (strs(ip), strs(ports)), "{fx} {args}");
    }
}

#[test]
fn disable_keeps_the_rest() {
    let cases: Vec<(&str, &str, &[&str], &[&str])> = vec![
        // The fabric, TCP over its IPoIB netdev included; `:verbs` keeps to its ports.
        ("ib-ipoib", "--disable ib", &["eth0"], &[]),
        ("ib-ipoib", "--disable ib:verbs", &["eth0", "ib0"], &[]),
        ("ib-ipoib", "--disable eth0", &["ib0"], &["mlx5_0:1"]),
        ("roce", "--disable eth:tcp", &[], &["mlx5_0:1"]),
        ("bond", "--disable docker0", &["bond0"], &[]),
        ("ipv6", "--disable fd00:90::/64", &["eth1"], &[]),
    ];
    for (fx, args, ip, ports) in cases {
        assert_eq!(used(fx, args), (strs(ip), strs(ports)), "{fx} {args}");
    }
    // A RoCE NIC is an Ethernet NIC first: `--disable roce` keeps it for TCP, and says so.
    let r = resolve(&sel("--disable roce"), &host("roce")).unwrap();
    let kept = r.ip.iter().find(|u| u.name == "ens1f0").unwrap();
    assert!(
        kept.reasons[0].contains("whose Ethernet stays for TCP (`--disable ens1f0` takes it too)"),
        "{:?}",
        kept.reasons
    );
    let r = resolve(&sel("--disable eth0"), &host("ib-ipoib")).unwrap();
    assert_eq!(r.excluded_ip, vec!["eth0"]);
    let why = r.left_out.iter().find(|l| l.what == "eth0").unwrap();
    assert!(
        why.reason.contains("--disable item `eth0`"),
        "{}",
        why.reason
    );
}

#[test]
fn every_decision_has_a_reason() {
    let r = resolve(&sel("--enable ib"), &host("ib-ipoib")).unwrap();
    let reason = |what: &str| {
        r.left_out
            .iter()
            .find(|l| l.what == what)
            .map(|l| l.reason.clone())
            .unwrap_or_else(|| panic!("{what} should be left out: {:?}", r.left_out))
    };
    assert!(reason("lo").contains("loopback"));
    assert!(reason("mlx5_1:1").contains("not active"));
    assert!(reason("eth0").contains("not named"));
    assert!(r.ports[0].reasons[0].contains("`ib`"));
    let b = resolve(&sel("--enable eth"), &host("bond")).unwrap();
    let eth0 = b.left_out.iter().find(|l| l.what == "eth0").unwrap();
    assert!(eth0.reason.contains("enslaved to bond0"), "{}", eth0.reason);
    let docker = b.left_out.iter().find(|l| l.what == "docker0").unwrap();
    assert!(docker.reason.contains("not named"));
}

#[test]
fn unmatched_items_are_reported_with_what_the_host_has() {
    let r = resolve(&sel("--enable ib0,eth7"), &host("ib-ipoib")).unwrap();
    assert_eq!(r.unmatched.len(), 1);
    assert_eq!(r.unmatched[0].item, "eth7");
    assert!(r.unmatched[0].host_has.contains("ib0"));
}

#[test]
fn nothing_left_is_an_error_naming_the_host() {
    let e = resolve(&sel("--enable ib"), &host("bond"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("node-bond"), "{e}");
    assert!(e.contains("matched nothing: `ib`"), "{e}");
    assert!(
        e.contains("bond0 (ethernet, virtual, 10.80.0.10/24)"),
        "{e}"
    );
    let e = resolve(&sel("--disable eth0,eth1"), &host("ipv6"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--disable eth0,eth1 leaves host node-v6 with no network"),
        "{e}"
    );
    // A port that is down does not count.
    let e = resolve(&sel("--enable mlx5_1"), &host("ib-ipoib"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("node-ib"), "{e}");
    assert!(
        e.contains("mlx5_1:1 is left out: port is not active (state 1: DOWN)"),
        "{e}"
    );
    let e = resolve(&sel("--enable lo"), &host("ib-ipoib"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("lo is loopback; process loopback"), "{e}");
}

#[test]
fn eth_falls_back_to_virtual_links_only_where_no_nic_exists() {
    use netsel::{Host, Netdev, NetdevKind};
    let veth = |name: &str, addr: &str| Netdev {
        name: name.into(),
        kind: NetdevKind::Ethernet,
        ifindex: None,
        is_virtual: true,
        hardware_backed: false,
        driver: None,
        operstate: Some("up".into()),
        master: None,
        lower: vec![],
        addrs: vec![addr.parse().unwrap()],
        pkey: None,
        is_bridge: false,
    };
    let mut namespace = Host {
        hostname: "h1".into(),
        netdevs: vec![veth("data0", "10.20.0.1/24"), veth("data1", "10.30.0.1/24")],
        verbs: vec![],
    };
    let r = resolve(&sel("--enable ethernet"), &namespace).unwrap();
    let names: Vec<&str> = r.ip.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, ["data0", "data1"]);
    // With one NIC on the host, the virtual links are container plumbing again.
    let mut nic = veth("eno1", "10.1.0.1/24");
    nic.is_virtual = false;
    nic.hardware_backed = true;
    namespace.netdevs.push(nic);
    let r = resolve(&sel("--enable ethernet"), &namespace).unwrap();
    let names: Vec<&str> = r.ip.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, ["eno1"]);
}

#[test]
fn interfaces_come_in_kernel_order_not_name_order() {
    use netsel::{Host, Netdev, NetdevKind};
    let link = |name: &str, index: u32, addr: &str| Netdev {
        name: name.into(),
        kind: NetdevKind::Ethernet,
        ifindex: Some(index),
        is_virtual: false,
        hardware_backed: true,
        driver: Some("virtio_net".into()),
        operstate: Some("up".into()),
        master: None,
        lower: vec![],
        addrs: vec![addr.parse().unwrap()],
        pkey: None,
        is_bridge: false,
    };
    let host = Host {
        hostname: "h1".into(),
        netdevs: vec![
            link("data0", 3, "10.20.0.1/24"),
            link("data1", 4, "10.30.0.1/24"),
            link("mgmt0", 2, "10.10.0.1/24"),
        ],
        verbs: vec![],
    };
    let r = resolve(&sel("--enable data1,eth"), &host).unwrap();
    let names: Vec<&str> = r.ip.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, ["mgmt0", "data0", "data1"]);
}

#[test]
fn a_qib_hca_is_matched_by_ib_not_by_opa() {
    assert_eq!(used("qib", "--enable ib"), (vec![], strs(&["qib0:1"])));
    assert_eq!(
        used("qib", "--enable infiniband:tcp"),
        (strs(&["ib0"]), vec![])
    );
    assert_eq!(
        used("qib", "--enable qib0"),
        (strs(&["ib0"]), strs(&["qib0:1"]))
    );
    let r = resolve(&sel("--enable ib"), &host("qib")).unwrap();
    assert!(r.ports[0].is_truescale());
    assert_eq!(r.ports[0].driver.as_deref(), Some("ib_qib"));
    let e = resolve(&sel("--enable opa"), &host("qib"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("matched nothing: `opa`"), "{e}");
    assert_eq!(used("qib", "--disable ib"), (strs(&["eth0"]), vec![]));
}

#[test]
fn every_item_that_matches_nothing_is_warned_about() {
    use netsel::format::selection_warnings;
    use netsel::UnmatchedKind;
    let has = "(it has: eth0, ib0, lo, mlx5_0:1, mlx5_1:1)";
    let cases: Vec<(&str, UnmatchedKind, String)> = vec![
        (
            "--disable typo0",
            UnmatchedKind::Nothing,
            format!("--disable: typo0 matches nothing on host node-ib {has}"),
        ),
        (
            "--enable eth0,typo0",
            UnmatchedKind::Nothing,
            format!("--enable: typo0 matches nothing on host node-ib {has}"),
        ),
        (
            "--enable eth0,mlx5_1",
            UnmatchedKind::Unusable,
            format!("--enable: mlx5_1 matches nothing usable on host node-ib: mlx5_1:1 is left out: port is not active (state 1: DOWN) {has}"),
        ),
        (
            "--disable mlx5_1:1",
            UnmatchedKind::Unusable,
            format!("--disable: mlx5_1:1 matches nothing usable on host node-ib: mlx5_1:1 is left out: port is not active (state 1: DOWN) {has}"),
        ),
        (
            "--enable eth0,lo",
            UnmatchedKind::AlwaysKept,
            "--enable: lo is ignored on host node-ib: lo is loopback; process loopback and shared memory are always kept and cannot be selected".to_string(),
        ),
        (
            "--enable eth0,127.0.0.0/8",
            UnmatchedKind::AlwaysKept,
            "--enable: 127.0.0.0/8 is ignored on host node-ib: lo is loopback; process loopback and shared memory are always kept and cannot be selected".to_string(),
        ),
        (
            "--disable lo",
            UnmatchedKind::AlwaysKept,
            "--disable: lo is ignored on host node-ib: lo is loopback; process loopback and shared memory are always kept and cannot be selected".to_string(),
        ),
        (
            "--enable eth0,self",
            UnmatchedKind::AlwaysKept,
            "--enable: self is ignored on host node-ib: `self` means process loopback; process loopback and shared memory are always kept and cannot be selected".to_string(),
        ),
        (
            "--disable SM",
            UnmatchedKind::AlwaysKept,
            "--disable: sm is ignored on host node-ib: `sm` means shared memory; process loopback and shared memory are always kept and cannot be selected".to_string(),
        ),
    ];
    for (args, kind, line) in cases {
        let r = resolve(&sel(args), &host("ib-ipoib")).unwrap_or_else(|e| panic!("{args}: {e}"));
        assert_eq!(r.unmatched.len(), 1, "{args}: {:?}", r.unmatched);
        assert_eq!(r.unmatched[0].kind, kind, "{args}");
        assert_eq!(selection_warnings(&r), vec![line], "{args}");
    }
    // Items that match: no warning.
    for args in [
        "--enable eth0,ib",
        "--disable eth0",
        "--enable 10.30.0.0/16",
    ] {
        let r = resolve(&sel(args), &host("ib-ipoib")).unwrap();
        assert!(
            selection_warnings(&r).is_empty(),
            "{args}: {:?}",
            r.unmatched
        );
    }
    // When nothing is left, the error carries them too.
    let e = resolve(&sel("--enable typo0,lo"), &host("ib-ipoib")).unwrap_err();
    let kinds: Vec<UnmatchedKind> = e.unmatched.iter().map(|u| u.kind).collect();
    assert_eq!(kinds, [UnmatchedKind::Nothing, UnmatchedKind::AlwaysKept]);
}

#[test]
fn each_enable_item_records_what_it_reached() {
    let r = resolve(&sel("--enable mlx5_0:1,eth0,typo0"), &host("ib-ipoib")).unwrap();
    let items: Vec<(String, Vec<String>, Vec<String>)> = r
        .items
        .iter()
        .map(|m| (m.item.to_string(), m.ip.clone(), m.ports.clone()))
        .collect();
    assert_eq!(
        items,
        vec![
            ("mlx5_0:1".to_string(), strs(&["ib0"]), strs(&["mlx5_0:1"])),
            ("eth0".to_string(), strs(&["eth0"]), vec![]),
        ]
    );
    assert!(resolve(&sel("--disable eth0"), &host("ib-ipoib"))
        .unwrap()
        .items
        .is_empty());
}
