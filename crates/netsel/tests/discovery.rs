//! Discovery from the fixture sysfs trees.

mod common;

use common::{fixture, host};
use netsel::discovery::file_addresses;
use netsel::{Discovery, NetdevKind, VerbsKind};

#[test]
fn infiniband_hca_with_ipoib() {
    let h = host("ib-ipoib");
    assert_eq!(h.hostname, "node-ib");
    let ib0 = h.netdev("ib0").unwrap();
    assert_eq!(ib0.kind, NetdevKind::Ipoib);
    assert!(!ib0.is_virtual);
    assert_eq!(ib0.driver.as_deref(), Some("mlx5_core"));
    assert_eq!(ib0.addrs.len(), 2, "IPv4 and IPv6");
    let lo = h.netdev("lo").unwrap();
    assert_eq!(lo.kind, NetdevKind::Loopback);
    assert!(lo.is_virtual);
    let mlx = h.verbs_device("mlx5_0").unwrap();
    assert_eq!(mlx.kind, VerbsKind::Infiniband);
    assert_eq!(mlx.node_type.as_deref(), Some("1: CA"));
    assert_eq!(mlx.ports[0].number, 1);
    assert_eq!(mlx.ports[0].link_layer.as_deref(), Some("InfiniBand"));
    assert!(mlx.ports[0].is_active());
    assert_eq!(mlx.ports[0].netdevs, vec!["ib0"], "from device/net");
    assert!(!h.verbs_device("mlx5_1").unwrap().ports[0].is_active());
}

#[test]
fn roce_iwarp_usnic_opa_kinds() {
    let roce = host("roce");
    let m = roce.verbs_device("mlx5_0").unwrap();
    assert_eq!(m.kind, VerbsKind::Roce);
    assert_eq!(
        m.ports[0].netdevs,
        vec!["ens1f0"],
        "from gid_attrs/ndevs, deduplicated"
    );
    let iw = host("iwarp");
    assert_eq!(iw.verbs_device("cxgb4_0").unwrap().kind, VerbsKind::Iwarp);
    let us = host("usnic");
    let u = us.verbs_device("usnic_0").unwrap();
    assert_eq!(u.kind, VerbsKind::Usnic);
    assert_eq!(us.netdev("enp6s0").unwrap().driver.as_deref(), Some("enic"));
    let opa = host("opa");
    let hfi = opa.verbs_device("hfi1_0").unwrap();
    assert_eq!(hfi.kind, VerbsKind::OmniPath);
    assert_eq!(hfi.driver.as_deref(), Some("hfi1"));
    assert_eq!(opa.netdev("ib0").unwrap().kind, NetdevKind::Ipoib);
    let efa = host("efa");
    for name in ["efa_0", "efa_1"] {
        let d = efa.verbs_device(name).unwrap();
        assert_eq!(d.kind, VerbsKind::Efa, "{name}");
        assert_eq!(d.driver.as_deref(), Some("efa"));
        assert!(d.ports[0].netdevs.is_empty());
    }
    // By its driver whatever its node type, or by its name.
    use netsel::discovery::verbs_kind;
    assert_eq!(
        verbs_kind(Some("1: CA"), Some("efa"), "rdmap0", &[]),
        VerbsKind::Efa
    );
    assert_eq!(verbs_kind(None, None, "efa_2", &[]), VerbsKind::Efa);
}

/// Slingshot-11 (fixture `slingshot`): each `class/cxi/cxiN` is a NIC of one port with its
/// `hsnN` netdev (the same PCI function), its driver and NUMA node; the netdev is Ethernet
/// to the kernel, backed by the NIC; the link comes from the netdev's state.
#[test]
fn slingshot_nics_are_read_from_class_cxi_with_netdev_and_numa_node() {
    let h = host("slingshot");
    for n in 0..4u32 {
        let name = format!("cxi{n}");
        let d = h.verbs_device(&name).unwrap();
        assert_eq!(d.kind, VerbsKind::Slingshot, "{name}");
        assert_eq!(d.driver.as_deref(), Some("cxi_ss1"));
        assert_eq!(d.numa_node, Some(n));
        assert_eq!(d.ports.len(), 1);
        assert_eq!(d.ports[0].netdevs, vec![format!("hsn{n}")]);
        assert!(d.ports[0].is_active());
        let hsn = h.netdev(&format!("hsn{n}")).unwrap();
        assert_eq!(hsn.kind, NetdevKind::Ethernet);
        assert!(!hsn.is_virtual && hsn.hardware_backed);
        assert_eq!(hsn.driver.as_deref(), Some("cxi_ss1"));
    }
    assert!(
        h.summary().contains("cxi2:1 (slingshot)"),
        "{}",
        h.summary()
    );
}

/// A Slingshot NIC whose netdev is down (or `unknown` without carrier) is not active, as
/// the cxi provider sees it; `unknown` with carrier 1 is.
#[test]
fn a_slingshot_link_follows_its_netdev() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("ss");
    let status = std::process::Command::new("cp")
        .args(["-a"])
        .arg(fixture("slingshot"))
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::write(copy.join("class/net/hsn1/operstate"), "down\n").unwrap();
    std::fs::write(copy.join("class/net/hsn2/operstate"), "unknown\n").unwrap();
    std::fs::write(copy.join("class/net/hsn2/carrier"), "0\n").unwrap();
    std::fs::write(copy.join("class/net/hsn3/operstate"), "unknown\n").unwrap();
    std::fs::write(copy.join("class/net/hsn3/carrier"), "1\n").unwrap();
    let h = netsel::Discovery::at(&copy).discover().unwrap();
    let active = |d: &str| h.verbs_device(d).unwrap().ports[0].is_active();
    assert!(active("cxi0"));
    assert!(!active("cxi1"));
    assert!(!active("cxi2"));
    assert!(active("cxi3"));
}

#[test]
fn bond_is_virtual_but_hardware_backed_docker_is_not() {
    let h = host("bond");
    let bond = h.netdev("bond0").unwrap();
    assert!(bond.is_virtual);
    assert!(bond.hardware_backed);
    assert_eq!(bond.lower, vec!["eth0", "eth1"]);
    let eth0 = h.netdev("eth0").unwrap();
    assert_eq!(eth0.master.as_deref(), Some("bond0"));
    assert!(eth0.addrs.is_empty());
    let docker = h.netdev("docker0").unwrap();
    assert!(docker.is_virtual && !docker.hardware_backed);
    assert!(h.verbs.is_empty());
}

#[test]
fn ipv6_only_host() {
    let h = host("ipv6");
    assert!(h
        .netdevs
        .iter()
        .flat_map(|n| n.addrs.iter())
        .all(|a| matches!(a, ipnet::IpNet::V6(_))));
    assert_eq!(h.netdev("eth0").unwrap().addrs.len(), 2);
}

#[test]
fn summary_names_what_the_host_has() {
    let s = host("ib-ipoib").summary();
    assert!(s.contains("ib0 (ipoib, 10.30.0.5/16"), "{s}");
    assert!(s.contains("mlx5_0:1 (infiniband)"), "{s}");
    assert!(!s.contains("lo ("), "{s}");
}

#[test]
fn missing_sysfs_and_bad_address_file_are_errors() {
    let d = Discovery::at("/nonexistent/sysfs");
    let e = d.discover().unwrap_err().to_string();
    assert!(e.contains("/nonexistent/sysfs/class/net"), "{e}");
    let dir = std::env::temp_dir().join(format!("netsel-addrs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("addrs");
    std::fs::write(&f, "eth0 10.0.0.1/24\neth1 nonsense\n").unwrap();
    assert!(file_addresses(&dir.join("missing"))
        .unwrap_err()
        .to_string()
        .contains("missing"));
    let e = file_addresses(&f).unwrap_err().to_string();
    assert!(e.contains(":2:") && e.contains("nonsense"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(fixture("roce").join("addrs").is_file());
}

#[test]
fn a_qib_hca_is_infiniband_not_omni_path() {
    let h = host("qib");
    assert_eq!(h.hostname, "node-qib");
    let qib = h.verbs_device("qib0").unwrap();
    assert_eq!(qib.kind, VerbsKind::Infiniband);
    assert_eq!(qib.driver.as_deref(), Some("ib_qib"));
    assert_eq!(qib.ports[0].link_layer.as_deref(), Some("InfiniBand"));
    assert_eq!(qib.ports[0].netdevs, vec!["ib0"]);
    assert!(qib.is_truescale());
    assert!(!host("opa").verbs_device("hfi1_0").unwrap().is_truescale());
    assert!(!host("ib-ipoib")
        .verbs_device("mlx5_0")
        .unwrap()
        .is_truescale());
}

#[test]
fn the_link_layer_decides_the_network_the_driver_only_omni_path() {
    use netsel::discovery::verbs_kind;
    use netsel::VerbsPort;
    let port = |ll: &str| VerbsPort {
        number: 1,
        link_layer: Some(ll.into()),
        state: Some("4: ACTIVE".into()),
        netdevs: vec![],
        gids: vec![],
    };
    let ib = [port("InfiniBand")];
    let eth = [port("Ethernet")];
    let ca = Some("1: CA");
    assert_eq!(
        verbs_kind(ca, Some("qib"), "qib0", &ib),
        VerbsKind::Infiniband
    );
    assert_eq!(
        verbs_kind(ca, Some("ib_qib"), "qib1", &ib),
        VerbsKind::Infiniband
    );
    assert_eq!(
        verbs_kind(ca, Some("hfi1"), "hfi1_0", &ib),
        VerbsKind::OmniPath
    );
    assert_eq!(verbs_kind(ca, None, "hfi1_1", &ib), VerbsKind::OmniPath);
    assert_eq!(
        verbs_kind(ca, Some("mlx5_core"), "mlx5_0", &ib),
        VerbsKind::Infiniband
    );
    assert_eq!(
        verbs_kind(ca, Some("mlx5_core"), "mlx5_0", &eth),
        VerbsKind::Roce
    );
    assert_eq!(verbs_kind(ca, Some("qib"), "qib0", &eth), VerbsKind::Roce);
    assert_eq!(
        verbs_kind(Some("4: RNIC"), Some("iw_cxgb4"), "cxgb4_0", &eth),
        VerbsKind::Iwarp
    );
    assert_eq!(
        verbs_kind(Some("6: usNIC UDP"), Some("enic"), "usnic_0", &eth),
        VerbsKind::Usnic
    );
}

#[test]
fn host_names_are_netdevs_then_verbs_ports() {
    assert_eq!(
        host("ib-ipoib").names(),
        vec!["eth0", "ib0", "lo", "mlx5_0:1", "mlx5_1:1"]
    );
    let mut h = host("bond");
    for (i, n) in h.netdevs.iter_mut().enumerate() {
        n.ifindex = Some(10 - i as u32);
    }
    assert_eq!(h.names(), vec!["lo", "eth1", "eth0", "docker0", "bond0"]);
}
