//! Translation per flavour against expected settings, plus flavour detection and the
//! conflict policy.

mod common;

use common::{environment, error, host, plan_on, sel, settings};
use netsel::{plan, Flavour, MpichDevice};

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn open_mpi_41_paths() {
    let cases: Vec<(&str, &str, &[&str])> = vec![
        (
            "bond",
            "--enable 10.80.0.0/24",
            &[
                "OMPI_MCA_pml=ob1",
                "OMPI_MCA_btl=self,vader,tcp",
                "OMPI_MCA_btl_tcp_if_include=bond0",
            ],
        ),
        (
            "bond",
            "--disable docker0",
            &[
                "OMPI_MCA_pml=ob1",
                "OMPI_MCA_btl=self,vader,tcp",
                "OMPI_MCA_btl_tcp_if_exclude=127.0.0.1/8,sppp,docker0",
            ],
        ),
        (
            "ib-ipoib",
            "--enable ib",
            &[
                "OMPI_MCA_pml=ucx",
                "OMPI_MCA_btl=self,vader",
                "UCX_NET_DEVICES=mlx5_0:1",
            ],
        ),
        (
            "ib-ipoib",
            "--enable ib:verbs",
            &[
                "OMPI_MCA_pml=ob1",
                "OMPI_MCA_btl=self,vader,openib",
                "OMPI_MCA_btl_openib_if_include=mlx5_0:1",
                "OMPI_MCA_btl_openib_allow_ib=1",
            ],
        ),
        (
            "ib-ipoib",
            "--enable ib:tcp",
            &[
                "OMPI_MCA_pml=ob1",
                "OMPI_MCA_btl=self,vader,tcp",
                "OMPI_MCA_btl_tcp_if_include=ib0",
            ],
        ),
        (
            "ib-ipoib",
            "--enable fd00:30::/64:tcp",
            &[
                "OMPI_MCA_pml=ob1",
                "OMPI_MCA_btl=self,vader,tcp",
                "OMPI_MCA_btl_tcp_if_include=ib0",
            ],
        ),
        (
            "roce",
            "--enable eth",
            &[
                "OMPI_MCA_pml=ucx",
                "OMPI_MCA_btl=self,vader",
                "OMPI_MCA_pml_ucx_tls=any",
                "OMPI_MCA_pml_ucx_devices=any",
                "UCX_NET_DEVICES=mlx5_0:1,ens1f0,eth0",
            ],
        ),
        (
            "roce",
            "--enable eth:ucx",
            &[
                "OMPI_MCA_pml=ucx",
                "OMPI_MCA_btl=self,vader",
                "OMPI_MCA_pml_ucx_tls=any",
                "OMPI_MCA_pml_ucx_devices=any",
                "UCX_NET_DEVICES=mlx5_0:1,ens1f0,eth0",
            ],
        ),
        (
            "ipv6",
            "--enable eth1:ucx",
            &[
                "OMPI_MCA_pml=ucx",
                "OMPI_MCA_btl=self,vader",
                "OMPI_MCA_pml_ucx_tls=any",
                "OMPI_MCA_pml_ucx_devices=any",
                "UCX_NET_DEVICES=eth1",
            ],
        ),
        // iWARP through libfabric's verbs, which needs no rdmacm CPC in openib.
        (
            "iwarp",
            "--enable iwarp",
            &[
                "OMPI_MCA_pml=cm",
                "OMPI_MCA_mtl=ofi",
                "OMPI_MCA_btl=self,vader",
                "OMPI_MCA_mtl_ofi_provider_include=verbs;ofi_rxm",
                "FI_PROVIDER=verbs;ofi_rxm",
                "FI_VERBS_DEVICE_NAME=cxgb4_0",
                "FI_VERBS_IFACE=ens2",
            ],
        ),
        // openib when asked for, with the CPC iWARP needs.
        (
            "iwarp",
            "--enable iwarp:verbs",
            &[
                "OMPI_MCA_pml=ob1",
                "OMPI_MCA_btl=self,vader,openib",
                "OMPI_MCA_btl_openib_if_include=cxgb4_0:1",
                "OMPI_MCA_btl_openib_cpc_include=rdmacm",
            ],
        ),
        (
            "usnic",
            "--enable usnic",
            &[
                "OMPI_MCA_pml=ob1",
                "OMPI_MCA_btl=self,vader,usnic",
                "OMPI_MCA_btl_usnic_if_include=usnic_0",
            ],
        ),
        (
            "opa",
            "--enable opa",
            &[
                "OMPI_MCA_pml=cm",
                "OMPI_MCA_mtl=psm2",
                "OMPI_MCA_btl=self,vader",
                "HFI_UNIT=0",
                "HFI_PORT=1",
            ],
        ),
        (
            "opa",
            "--enable opa:ofi",
            &[
                "OMPI_MCA_pml=cm",
                "OMPI_MCA_mtl=ofi",
                "OMPI_MCA_btl=self,vader",
                "OMPI_MCA_mtl_ofi_provider_include=psm2",
                "FI_PROVIDER=psm2",
                "HFI_UNIT=0",
                "HFI_PORT=1",
            ],
        ),
        (
            "ipv6",
            "--enable eth0:ofi",
            &[
                "OMPI_MCA_pml=cm",
                "OMPI_MCA_mtl=ofi",
                "OMPI_MCA_btl=self,vader",
                "OMPI_MCA_mtl_ofi_provider_exclude=shm,sockets",
                "FI_PROVIDER=tcp",
                "FI_TCP_IFACE=eth0",
            ],
        ),
    ];
    for (fx, args, want) in cases {
        assert_eq!(settings(fx, args, "openmpi-4.1"), strs(want), "{fx} {args}");
    }
}

#[test]
fn open_mpi_50_differs_where_it_must() {
    assert_eq!(
        settings("ipv6", "--enable fd00:91::/64", "openmpi-5.0"),
        strs(&[
            "OMPI_MCA_pml=ob1",
            "OMPI_MCA_btl=self,sm,tcp",
            "OMPI_MCA_btl_tcp_if_include=eth1",
        ])
    );
    // No openib in 5.0: iWARP goes through OFI verbs.
    assert_eq!(
        settings("iwarp", "--enable iwarp", "openmpi-5.0"),
        strs(&[
            "OMPI_MCA_pml=cm",
            "OMPI_MCA_mtl=ofi",
            "OMPI_MCA_btl=self,sm,ofi",
            "OMPI_MCA_mtl_ofi_provider_include=verbs;ofi_rxm",
            "FI_PROVIDER=verbs;ofi_rxm",
            "FI_VERBS_DEVICE_NAME=cxgb4_0",
            "FI_VERBS_IFACE=ens2",
        ])
    );
    let e = error("ib-ipoib", "--enable ib:verbs", "openmpi-5.0");
    assert!(e.contains("removed the openib BTL"), "{e}");
}

#[test]
fn open_mpi_qualifiers_must_agree() {
    let e = error("roce", "--enable eth0:tcp,mlx5_0:ucx", "openmpi-4.1");
    assert!(e.contains("node-roce") && e.contains("several"), "{e}");
    // An unqualified IB port cannot ride the TCP path on 5.0.
    let e = error("ib-ipoib", "--enable eth0:tcp,ib", "openmpi-5.0");
    assert!(e.contains("cannot reach mlx5_0:1"), "{e}");
}

#[test]
fn the_control_path_is_not_steered_but_the_note_says_how() {
    let r = plan_on("bond", "--enable bond0", "openmpi-4.1").unwrap();
    assert!(!r
        .translation
        .settings
        .iter()
        .any(|s| s.knob.env_name().contains("oob")));
    assert!(r.translation.notes[0].contains("--mca oob_tcp_if_include bond0"));
    let r = plan_on("bond", "--enable bond0", "openmpi-5.0").unwrap();
    assert!(r.translation.notes[0].contains("--prtemca prte_if_include bond0"));
    let r = plan_on("bond", "--enable bond0", "mpich").unwrap();
    assert!(r.translation.notes[0].contains("-iface bond0"));
}

#[test]
fn mpich_devices() {
    let cases: Vec<(&str, &str, &str, &[&str])> = vec![
        (
            "ib-ipoib",
            "--enable ib",
            "mpich-ucx",
            &["UCX_NET_DEVICES=mlx5_0:1"],
        ),
        (
            "ib-ipoib",
            "--enable 10.30.0.0/16",
            "mpich-ucx",
            &["UCX_NET_DEVICES=mlx5_0:1,ib0"],
        ),
        (
            "bond",
            "--enable eth:tcp",
            "mpich-ucx",
            &["UCX_NET_DEVICES=bond0", "UCX_TLS=self,sm,tcp"],
        ),
        (
            "roce",
            "--enable roce:verbs",
            "mpich-ucx",
            &["UCX_NET_DEVICES=mlx5_0:1", "UCX_TLS=self,sm,rc,ud"],
        ),
        (
            "bond",
            "--enable bond0",
            "mpich-ofi",
            &["FI_PROVIDER=tcp", "FI_TCP_IFACE=bond0"],
        ),
        (
            "ib-ipoib",
            "--enable ib",
            "mpich-ofi",
            &[
                "FI_PROVIDER=verbs;ofi_rxm",
                "FI_VERBS_DEVICE_NAME=mlx5_0",
                "FI_VERBS_IFACE=ib0",
            ],
        ),
        (
            "opa",
            "--enable opa",
            "mpich-ofi",
            &["FI_PROVIDER=psm2", "HFI_UNIT=0", "HFI_PORT=1"],
        ),
        (
            "usnic",
            "--enable usnic",
            "mpich-ofi",
            &["FI_PROVIDER=usnic"],
        ),
        (
            "ipv6",
            "--enable eth1",
            "mpich-nemesis",
            &["MPIR_CVAR_NEMESIS_TCP_NETWORK_IFACE=eth1"],
        ),
    ];
    for (fx, args, fl, want) in cases {
        assert_eq!(settings(fx, args, fl), strs(want), "{fx} {args} {fl}");
    }
    let e = error("ib-ipoib", "--enable ib", "mpich-nemesis");
    assert!(
        e.contains("cannot reach mlx5_0:1") || e.contains("no single"),
        "{e}"
    );
    let e = error("ib-ipoib", "--enable ib:psm2", "mpich-ucx");
    assert!(e.contains("no `psm2` path") && e.contains("ch4:ucx"), "{e}");
}

#[test]
fn one_interface_knobs_leave_the_rest_out_with_a_reason() {
    let r = plan_on("ipv6", "--enable eth", "mpich-nemesis").unwrap();
    let l = &r.translation.left_out;
    assert_eq!(l.len(), 1, "{l:?}");
    assert_eq!(l[0].what, "eth1");
    assert!(l[0].reason.contains("takes one interface"));
}

#[test]
fn intel_and_mvapich2() {
    assert_eq!(
        settings("ib-ipoib", "--enable ib", "intel"),
        strs(&[
            "I_MPI_FABRICS=shm:ofi",
            "I_MPI_OFI_PROVIDER=mlx",
            "UCX_NET_DEVICES=mlx5_0:1",
        ])
    );
    assert_eq!(
        settings("bond", "--enable eth", "intel"),
        strs(&[
            "I_MPI_FABRICS=shm:ofi",
            "I_MPI_OFI_PROVIDER=tcp",
            "FI_PROVIDER=tcp",
            "FI_TCP_IFACE=bond0",
        ])
    );
    assert_eq!(
        settings("roce", "--enable roce", "mvapich2"),
        strs(&["MV2_IBA_HCA=mlx5_0", "MV2_DEFAULT_PORT=1", "MV2_USE_RoCE=1"])
    );
    let e = error("bond", "--enable eth", "mvapich2");
    assert!(e.contains("node-bond") && e.contains("mvapich2"), "{e}");
}

#[test]
fn disable_leaves_out_what_the_path_cannot_reach() {
    // Host with IB and Ethernet on MVAPICH2: disabling nothing relevant keeps IB only.
    let r = plan_on("ib-ipoib", "--disable eth0", "mvapich2").unwrap();
    assert!(r.translation.left_out.iter().any(|l| l.what == "ib0"));
    let s: Vec<String> = r
        .translation
        .settings
        .iter()
        .map(|s| s.env_pair().0)
        .collect();
    assert!(s.contains(&"MV2_IBA_HCA".to_string()));
}

#[test]
fn flavour_detection_from_version_strings() {
    let cases: Vec<(&str, Flavour)> = vec![
        (
            "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022",
            Flavour::OpenMpi { major: 4, minor: 1 },
        ),
        ("mpirun (Open MPI) 5.0.3\n\nOpen MPI v5.0.3", Flavour::OpenMpi { major: 5, minor: 0 }),
        (
            "MPICH Version:      4.0.2\nMPICH Release date: Thu Apr  7 12:34:45 CDT 2022\nMPICH ABI:          14:2:2\nMPICH Device:       ch4:ucx\n",
            Flavour::Mpich { device: MpichDevice::Ch4Ucx },
        ),
        (
            "MPICH Version: 4.1\nMPICH Device: ch4:ofi",
            Flavour::Mpich { device: MpichDevice::Ch4Ofi },
        ),
        (
            "MPICH Version: 3.3\nMPICH Device: ch3:nemesis",
            Flavour::Mpich { device: MpichDevice::Ch3Nemesis },
        ),
        (
            "MPICH Version: 4.0.2\nMPICH Device: ch4:ucx\nMPICH configure: --with-device=ch4:ofi",
            Flavour::Mpich { device: MpichDevice::Ch4Ucx },
        ),
        ("mpirun (Open MPI) 4.1.4\n", Flavour::OpenMpi { major: 4, minor: 1 }),
        ("Intel(R) MPI Library 2021.6 for Linux* OS", Flavour::IntelMpi),
        ("MVAPICH2 Version      :\t2.3.7", Flavour::Mvapich2),
    ];
    for (text, want) in cases {
        assert_eq!(Flavour::detect(text), Some(want), "{text}");
    }
    assert_eq!(Flavour::detect("something else"), None);
    assert_eq!(
        "OpenMPI-5.0".parse::<Flavour>().unwrap(),
        Flavour::OpenMpi { major: 5, minor: 0 }
    );
    assert!("lam"
        .parse::<Flavour>()
        .unwrap_err()
        .to_string()
        .contains("mpich-ofi"));
}

#[test]
fn a_users_own_setting_is_never_overridden() {
    let h = host("bond");
    let f: Flavour = "openmpi-4.1".parse().unwrap();
    let s = sel("--enable bond0");
    let env = environment(&[("OMPI_MCA_btl_tcp_if_include", "eth9")]);
    let e = plan(&s, f, &h, &env).unwrap_err().to_string();
    assert!(
        e.contains("OMPI_MCA_btl_tcp_if_include=eth9 (the selection needs bond0)"),
        "{e}"
    );
    assert!(e.contains("node-bond"), "{e}");
    let env = environment(&[("OMPI_MCA_btl_tcp_if_exclude", "docker0")]);
    let e = plan(&s, f, &h, &env).unwrap_err().to_string();
    assert!(e.contains("needs it unset"), "{e}");
    // The same value is fine and reported as already set.
    let env = environment(&[("OMPI_MCA_pml", "ob1"), ("UNRELATED", "x")]);
    let r = plan(&s, f, &h, &env).unwrap();
    assert_eq!(r.already_set, vec!["OMPI_MCA_pml"]);
    assert_eq!(r.to_apply().count(), r.translation.settings.len() - 1);
}

/// The settings of a successful plan without Open MPI's one-sided and collective
/// component lists (`OMPI_MCA_osc`, `OMPI_MCA_coll`), which follow the path on their own
/// and are not what these tests are about.
fn path_settings(fx: &str, args: &str, fl: &str) -> Vec<String> {
    settings(fx, args, fl)
        .into_iter()
        .filter(|s| !s.starts_with("OMPI_MCA_osc=") && !s.starts_with("OMPI_MCA_coll="))
        .collect()
}

/// The settings and the left-out list of a successful plan.
fn settings_and_left_out(fx: &str, args: &str, fl: &str) -> (Vec<String>, Vec<(String, String)>) {
    let r = plan_on(fx, args, fl).unwrap_or_else(|e| panic!("{fx} {args} {fl}: {e}"));
    (
        path_settings(fx, args, fl),
        r.translation
            .left_out
            .iter()
            .map(|l| (l.what.clone(), l.reason.clone()))
            .collect(),
    )
}

#[test]
fn an_rdma_device_named_alone_takes_the_path_that_reaches_it() {
    // Naming a verbs device (or its netdev, or a CIDR of its netdev) names one device
    // reachable two ways; the RDMA side is taken and the netdev left out with the reason.
    let ib = ["mlx5_0:1", "mlx5_0", "ib0", "10.30.0.0/16", "MLX5_0"];
    let roce = ["mlx5_0:1", "mlx5_0", "ens1f0", "10.40.0.0/24"];
    /// Fixture, items, the netdev left out, flavour, expected settings.
    type Case<'a> = (&'a str, &'a [&'a str], &'a str, &'a str, &'a [&'a str]);
    let cases: Vec<Case> = vec![
        (
            "ib-ipoib",
            &ib,
            "ib0",
            "mvapich2",
            &["MV2_IBA_HCA=mlx5_0", "MV2_DEFAULT_PORT=1"],
        ),
        (
            "ib-ipoib",
            &ib,
            "ib0",
            "intel",
            &[
                "I_MPI_FABRICS=shm:ofi",
                "I_MPI_OFI_PROVIDER=mlx",
                "UCX_NET_DEVICES=mlx5_0:1",
            ],
        ),
        (
            "ib-ipoib",
            &ib,
            "ib0",
            "mpich-ofi",
            &[
                "FI_PROVIDER=verbs;ofi_rxm",
                "FI_VERBS_DEVICE_NAME=mlx5_0",
                "FI_VERBS_IFACE=ib0",
            ],
        ),
        (
            "roce",
            &roce,
            "ens1f0",
            "mvapich2",
            &["MV2_IBA_HCA=mlx5_0", "MV2_DEFAULT_PORT=1", "MV2_USE_RoCE=1"],
        ),
        (
            "roce",
            &roce,
            "ens1f0",
            "intel",
            &[
                "I_MPI_FABRICS=shm:ofi",
                "I_MPI_OFI_PROVIDER=mlx",
                "UCX_NET_DEVICES=mlx5_0:1",
            ],
        ),
        (
            "roce",
            &roce,
            "ens1f0",
            "mpich-ofi",
            &[
                "FI_PROVIDER=verbs;ofi_rxm",
                "FI_VERBS_DEVICE_NAME=mlx5_0",
                "FI_VERBS_IFACE=ens1f0",
            ],
        ),
    ];
    for (fx, items, netdev, fl, want) in cases {
        for item in items {
            let args = format!("--enable {item}");
            let (got, left_out) = settings_and_left_out(fx, &args, fl);
            assert_eq!(got, strs(want), "{fx} {args} {fl}");
            let (_, why) = left_out
                .iter()
                .find(|(w, _)| w == netdev)
                .unwrap_or_else(|| panic!("{fx} {args} {fl}: {netdev} left out? {left_out:?}"));
            assert!(
                why.contains("used through the verbs port mlx5_0:1"),
                "{why}"
            );
        }
    }
    // Where one path reaches both sides, both are still used (UCX takes the netdev too).
    assert_eq!(
        path_settings("ib-ipoib", "--enable mlx5_0:1", "mpich-ucx"),
        strs(&["UCX_NET_DEVICES=mlx5_0:1,ib0"])
    );
    // Omni-Path named by its device takes PSM2, not TCP over its IPoIB netdev.
    assert_eq!(
        path_settings("opa", "--enable hfi1_0", "openmpi-4.1"),
        strs(&[
            "OMPI_MCA_pml=cm",
            "OMPI_MCA_mtl=psm2",
            "OMPI_MCA_btl=self,vader",
            "HFI_UNIT=0",
            "HFI_PORT=1",
        ])
    );
    // A TCP-only library reaches the same device through its netdev.
    let (got, left_out) = settings_and_left_out("ib-ipoib", "--enable mlx5_0", "mpich-nemesis");
    assert_eq!(got, strs(&["MPIR_CVAR_NEMESIS_TCP_NETWORK_IFACE=ib0"]));
    assert!(left_out
        .iter()
        .any(|(w, why)| w == "mlx5_0:1" && why.contains("used through its netdev ib0")));
}

#[test]
fn a_qualifier_on_a_device_picks_its_rdma_side() {
    assert_eq!(
        path_settings("ib-ipoib", "--enable mlx5_0:1:ofi", "mpich-ofi"),
        strs(&[
            "FI_PROVIDER=verbs;ofi_rxm",
            "FI_VERBS_DEVICE_NAME=mlx5_0",
            "FI_VERBS_IFACE=ib0",
        ])
    );
    assert_eq!(
        path_settings("ib-ipoib", "--enable mlx5_0:1:mtl", "openmpi-4.1"),
        strs(&[
            "OMPI_MCA_pml=cm",
            "OMPI_MCA_mtl=ofi",
            "OMPI_MCA_btl=self,vader",
            "OMPI_MCA_mtl_ofi_provider_include=verbs;ofi_rxm",
            "FI_PROVIDER=verbs;ofi_rxm",
            "FI_VERBS_DEVICE_NAME=mlx5_0",
            "FI_VERBS_IFACE=ib0",
        ])
    );
    assert_eq!(
        path_settings("ib-ipoib", "--enable mlx5_0:tcp", "intel"),
        strs(&[
            "I_MPI_FABRICS=shm:ofi",
            "I_MPI_OFI_PROVIDER=tcp",
            "FI_PROVIDER=tcp",
            "FI_TCP_IFACE=ib0",
        ])
    );
}

#[test]
fn where_a_qualifier_is_needed_the_error_names_it_and_the_fix_works() {
    let cases: Vec<(&str, &str, &str, &str)> = vec![
        (
            "ib-ipoib",
            "--enable ib,eth0",
            "mpich-ofi",
            "--enable ib:tcp,eth0",
        ),
        (
            "ib-ipoib",
            "--enable ib,eth0",
            "intel",
            "--enable ib:tcp,eth0",
        ),
        (
            "ib-ipoib",
            "--enable ib",
            "mpich-nemesis",
            "--enable ib:tcp",
        ),
        (
            "ib-ipoib",
            "--enable eth0:tcp,ib",
            "openmpi-5.0",
            "--enable eth0:tcp,ib:tcp",
        ),
        ("qib", "--enable ib", "mpich-ucx", "--enable ib:tcp"),
    ];
    for (fx, args, fl, fix) in cases {
        let e = error(fx, args, fl);
        assert!(e.contains("qualifier `:tcp`"), "{fx} {args} {fl}: {e}");
        assert!(e.ends_with(fix), "{fx} {args} {fl}: {e}");
        // The suggested list works.
        plan_on(fx, fix, fl).unwrap_or_else(|e| panic!("{fix} {fl}: {e}"));
    }
    // No qualifier helps plain Ethernet on MVAPICH2: none is suggested.
    let e = error("bond", "--enable eth", "mvapich2");
    assert!(e.contains("cannot reach bond0 (named by `eth`)"), "{e}");
    assert!(!e.contains("qualifier"), "{e}");
}

#[test]
fn truescale_qib_is_infiniband_through_psm() {
    let cases: Vec<(&str, &str, &[&str])> = vec![
        (
            "--enable ib",
            "openmpi-4.1",
            &[
                "OMPI_MCA_pml=cm",
                "OMPI_MCA_mtl=psm",
                "OMPI_MCA_btl=self,vader",
                "IPATH_UNIT=0",
                "IPATH_PORT=1",
            ],
        ),
        (
            "--enable qib0",
            "openmpi-4.1",
            &[
                "OMPI_MCA_pml=cm",
                "OMPI_MCA_mtl=psm",
                "OMPI_MCA_btl=self,vader",
                "IPATH_UNIT=0",
                "IPATH_PORT=1",
            ],
        ),
        (
            "--enable ib:psm",
            "openmpi-4.1",
            &[
                "OMPI_MCA_pml=cm",
                "OMPI_MCA_mtl=psm",
                "OMPI_MCA_btl=self,vader",
                "IPATH_UNIT=0",
                "IPATH_PORT=1",
            ],
        ),
        (
            "--enable ib:verbs",
            "openmpi-4.1",
            &[
                "OMPI_MCA_pml=ob1",
                "OMPI_MCA_btl=self,vader,openib",
                "OMPI_MCA_btl_openib_if_include=qib0:1",
                "OMPI_MCA_btl_openib_allow_ib=1",
            ],
        ),
        (
            "--enable ib",
            "openmpi-5.0",
            &[
                "OMPI_MCA_pml=cm",
                "OMPI_MCA_mtl=ofi",
                "OMPI_MCA_btl=self,sm,ofi",
                "OMPI_MCA_mtl_ofi_provider_include=verbs;ofi_rxm",
                "FI_PROVIDER=verbs;ofi_rxm",
                "FI_VERBS_DEVICE_NAME=qib0",
                "FI_VERBS_IFACE=ib0",
            ],
        ),
        (
            "--enable ib",
            "intel",
            &[
                "I_MPI_FABRICS=shm:ofi",
                "I_MPI_OFI_PROVIDER=verbs;ofi_rxm",
                "FI_PROVIDER=verbs;ofi_rxm",
                "FI_VERBS_DEVICE_NAME=qib0",
                "FI_VERBS_IFACE=ib0",
            ],
        ),
        (
            "--enable ib",
            "mvapich2",
            &["MV2_IBA_HCA=qib0", "MV2_DEFAULT_PORT=1"],
        ),
        (
            "--enable ib:tcp",
            "openmpi-4.1",
            &[
                "OMPI_MCA_pml=ob1",
                "OMPI_MCA_btl=self,vader,tcp",
                "OMPI_MCA_btl_tcp_if_include=ib0",
            ],
        ),
    ];
    for (args, fl, want) in cases {
        assert_eq!(
            path_settings("qib", args, fl),
            strs(want),
            "qib {args} {fl}"
        );
    }
    let e = error("qib", "--enable ib:psm", "openmpi-5.0");
    assert!(e.contains("removed the psm MTL"), "{e}");
    let e = error("qib", "--enable ib:ucx", "openmpi-4.1");
    assert!(e.contains("cannot reach qib0:1"), "{e}");
    let e = error("qib", "--enable opa", "openmpi-4.1");
    assert!(
        e.contains("node-qib") && e.contains("matched nothing: `opa`"),
        "{e}"
    );
}

#[test]
fn a_users_setting_that_means_the_same_is_not_a_conflict() {
    let agree = |fx: &str, args: &str, fl: &str, var: &str, value: &str| {
        let f: Flavour = fl.parse().unwrap();
        let r = plan(&sel(args), f, &host(fx), &environment(&[(var, value)]))
            .unwrap_or_else(|e| panic!("{var}={value} with {args}: {e}"));
        assert_eq!(r.already_set, vec![var.to_string()], "{var}={value}");
        assert!(
            !r.to_apply().any(|s| s.env == var),
            "the user's value is kept"
        );
    };
    let conflict = |fx: &str, args: &str, fl: &str, var: &str, value: &str| {
        let f: Flavour = fl.parse().unwrap();
        let e = plan(&sel(args), f, &host(fx), &environment(&[(var, value)]))
            .expect_err(&format!("{var}={value} should conflict with {args}"))
            .to_string();
        assert!(
            e.contains(&format!("{var}={value} (the selection needs")),
            "{e}"
        );
    };
    // UCX_TLS: a set of transports, order and self/sm aside.
    for v in [
        "tcp,self",
        "self,sm,tcp",
        "tcp",
        " sm , tcp ",
        "TCP,self,shm",
    ] {
        agree("ib-ipoib", "--enable eth0:tcp", "mpich", "UCX_TLS", v);
    }
    for v in ["rc,self", "tcp,rc", "^tcp", "all"] {
        conflict("ib-ipoib", "--enable eth0:tcp", "mpich", "UCX_TLS", v);
    }
    agree("roce", "--enable roce:verbs", "mpich", "UCX_TLS", "ud,rc");
    // UCX_NET_DEVICES: a set of devices.
    agree(
        "roce",
        "--enable eth",
        "mpich",
        "UCX_NET_DEVICES",
        "eth0,mlx5_0:1,ens1f0",
    );
    conflict(
        "roce",
        "--enable eth",
        "mpich",
        "UCX_NET_DEVICES",
        "eth0,mlx5_0:1",
    );
    // Open MPI's BTL include list is a set; the TCP interface list keeps its order.
    agree(
        "bond",
        "--enable bond0",
        "openmpi-4.1",
        "OMPI_MCA_btl",
        "tcp,vader,self",
    );
    conflict(
        "bond",
        "--enable bond0",
        "openmpi-4.1",
        "OMPI_MCA_btl",
        "self,tcp",
    );
    agree(
        "roce",
        "--enable eth:tcp",
        "openmpi-4.1",
        "OMPI_MCA_btl_tcp_if_include",
        "ens1f0,eth0",
    );
    conflict(
        "roce",
        "--enable eth:tcp",
        "openmpi-4.1",
        "OMPI_MCA_btl_tcp_if_include",
        "eth0,ens1f0",
    );
    agree(
        "bond",
        "--disable docker0",
        "openmpi-4.1",
        "OMPI_MCA_btl_tcp_if_exclude",
        "docker0,sppp,127.0.0.1/8",
    );
}

#[test]
fn same_meaning_compares_lists_by_what_they_mean() {
    use netsel::same_meaning;
    assert!(same_meaning("UCX_TLS", "tcp,self", "self,sm,tcp"));
    assert!(same_meaning("UCX_TLS", "^rc,self", "^rc"));
    assert!(!same_meaning("UCX_TLS", "^tcp", "tcp"));
    assert!(!same_meaning("UCX_TLS", "rc_verbs", "rc"));
    assert!(same_meaning("UCX_NET_DEVICES", "b,a", "a,b,a"));
    assert!(!same_meaning("UCX_NET_DEVICES", "MLX5_0:1", "mlx5_0:1"));
    assert!(same_meaning("OMPI_MCA_btl", "^openib,tcp", "^tcp,openib"));
    assert!(!same_meaning("OMPI_MCA_btl", "^tcp", "tcp"));
    assert!(!same_meaning("OMPI_MCA_btl_tcp_if_include", "b,a", "a,b"));
    assert!(same_meaning("OMPI_MCA_pml", " ucx", "ucx"));
    assert!(!same_meaning(
        "FI_PROVIDER",
        "ofi_rxm;verbs",
        "verbs;ofi_rxm"
    ));
    assert!(!same_meaning("MV2_IBA_HCA", "b:a", "a:b"));
}

#[test]
fn flavour_aliases_and_mpich_5_and_intel_detection() {
    let ucx = Flavour::Mpich {
        device: MpichDevice::Ch4Ucx,
    };
    let ofi = Flavour::Mpich {
        device: MpichDevice::Ch4Ofi,
    };
    let names: Vec<(&str, Flavour)> = vec![
        ("openmpi4", Flavour::OpenMpi { major: 4, minor: 1 }),
        ("openmpi5", Flavour::OpenMpi { major: 5, minor: 0 }),
        ("mpich4", ucx),
        ("MPICH5", ucx),
        ("intelmpi", Flavour::IntelMpi),
        ("intel", Flavour::IntelMpi),
    ];
    for (name, want) in names {
        assert_eq!(name.parse::<Flavour>(), Ok(want), "{name}");
    }
    let listed = "lam".parse::<Flavour>().unwrap_err().to_string();
    for name in ["openmpi4", "openmpi5", "mpich4", "mpich5", "intelmpi"] {
        assert!(listed.contains(name), "{listed} should list {name}");
    }

    let mpich5 = "MPICH Version:      5.0.2\nMPICH Release date: Mon Jun  2 10:00:00 CDT 2025\nMPICH ABI:          17:0:5\nMPICH Device:       ch4:ucx ofi\n";
    assert_eq!(Flavour::detect(mpich5), Some(ucx));
    let env = |value: Option<&'static str>| {
        move |k: &str| {
            (k == "MPIR_CVAR_CH4_NETMOD")
                .then_some(value)
                .flatten()
                .map(String::from)
        }
    };
    assert_eq!(Flavour::detect_with_env(mpich5, env(None)), Some(ucx));
    assert_eq!(
        Flavour::detect_with_env(mpich5, env(Some("ofi"))),
        Some(ofi)
    );
    assert_eq!(
        Flavour::detect_with_env(mpich5, env(Some(" OFI "))),
        Some(ofi)
    );
    assert_eq!(
        Flavour::detect_with_env(mpich5, env(Some("ucx"))),
        Some(ucx)
    );
    assert_eq!(
        Flavour::detect_with_env(mpich5, env(Some("bogus"))),
        Some(ucx)
    );
    let ofi_first = "MPICH Version: 5.0.2\nMPICH Device: ch4:ofi ucx\n";
    assert_eq!(Flavour::detect_with_env(ofi_first, env(None)), Some(ofi));
    assert_eq!(
        Flavour::detect_with_env(ofi_first, env(Some("ucx"))),
        Some(ucx)
    );
    // One netmod built in: the variable cannot change it.
    let single = "MPICH Version: 4.0.2\nMPICH Device: ch4:ucx\n";
    assert_eq!(
        Flavour::detect_with_env(single, env(Some("ofi"))),
        Some(ucx)
    );
    let nemesis = "MPICH Version: 3.3\nMPICH Device: ch3:nemesis\n";
    assert_eq!(
        Flavour::detect_with_env(nemesis, env(Some("ofi"))),
        Some(Flavour::Mpich {
            device: MpichDevice::Ch3Nemesis
        })
    );
    let intel = "Intel(R) MPI Library 2021.13 for Linux* OS\n";
    assert_eq!(Flavour::detect(intel), Some(Flavour::IntelMpi));
    assert_eq!(
        Flavour::detect_with_env(intel, env(Some("ofi"))),
        Some(Flavour::IntelMpi)
    );
    assert_eq!(
        Flavour::detect("Open MPI v5.0.3, package: Open MPI Distribution"),
        Some(Flavour::OpenMpi { major: 5, minor: 0 })
    );
}

/// AWS EFA (fixture `efa`: two `efa_N` devices, node type 7, no netdev): libfabric's efa
/// provider on every flavour that has libfabric, with every selected device kept
/// (`FI_EFA_IFACE` takes a list); UCX, which does not drive EFA, is refused with a message
/// that says which libraries do.
#[test]
fn efa_goes_through_the_efa_provider_with_every_selected_device() {
    let ompi = |btl: &str| {
        vec![
            "OMPI_MCA_pml=cm".to_string(),
            "OMPI_MCA_mtl=ofi".to_string(),
            format!("OMPI_MCA_btl={btl}"),
            "OMPI_MCA_mtl_ofi_provider_include=efa".to_string(),
            "FI_PROVIDER=efa".to_string(),
            "FI_EFA_IFACE=efa_0,efa_1".to_string(),
        ]
    };
    assert_eq!(
        settings("efa", "--enable efa", "openmpi-4.1"),
        ompi("self,vader")
    );
    assert_eq!(
        settings("efa", "--enable efa", "openmpi-5.0"),
        ompi("self,sm,ofi")
    );
    assert_eq!(
        settings("efa", "--enable efa", "mpich-ofi"),
        strs(&["FI_PROVIDER=efa", "FI_EFA_IFACE=efa_0,efa_1"])
    );
    assert_eq!(
        settings("efa", "--enable efa", "intel"),
        strs(&[
            "I_MPI_FABRICS=shm:ofi",
            "I_MPI_OFI_PROVIDER=efa",
            "FI_PROVIDER=efa",
            "FI_EFA_IFACE=efa_0,efa_1",
            "I_MPI_MULTIRAIL=1",
        ])
    );
    // One device by name, with or without the qualifier; the rest by --disable.
    for args in [
        "--enable efa_1",
        "--enable efa_1:efa",
        "--disable efa_0,ens5",
    ] {
        assert_eq!(
            settings("efa", args, "mpich-ofi"),
            strs(&["FI_PROVIDER=efa", "FI_EFA_IFACE=efa_1"]),
            "{args}"
        );
    }
    let e = error("efa", "--enable efa", "mpich-ucx");
    assert!(
        e.contains("cannot reach efa_0:1") && e.contains("which UCX does not use"),
        "{e}"
    );
    let e = error("efa", "--enable efa:efa", "mpich-ucx");
    assert!(e.contains("no `efa` path") && e.contains("ch4:ofi"), "{e}");
    // The ENA netdev is plain Ethernet, not EFA.
    assert_eq!(
        settings("efa", "--enable ens5", "mpich-ofi"),
        strs(&["FI_PROVIDER=tcp", "FI_TCP_IFACE=ens5"])
    );
}

/// HPE Slingshot-11 (fixture `slingshot`: four Cassini NICs `cxi0..3`, their `hsnN`
/// netdevs, a management network `nmn0`): libfabric's cxi provider with every selected NIC
/// kept (`FI_CXI_DEVICE_NAME` takes a list) on every flavour that has libfabric, Cray
/// MPICH with its own provider variable; TCP over an `hsnN` netdev only with `:tcp`.
#[test]
fn slingshot_goes_through_cxi_with_every_selected_nic() {
    let all = "FI_CXI_DEVICE_NAME=cxi0,cxi1,cxi2,cxi3";
    let ompi = |btl: &str, devices: &str| {
        vec![
            "OMPI_MCA_pml=cm".to_string(),
            "OMPI_MCA_mtl=ofi".to_string(),
            format!("OMPI_MCA_btl={btl}"),
            "OMPI_MCA_mtl_ofi_provider_include=cxi".to_string(),
            "FI_PROVIDER=cxi".to_string(),
            devices.to_string(),
        ]
    };
    for args in [
        "--enable slingshot",
        "--enable cxi",
        "--enable slingshot:cxi",
        "--enable hsn0,hsn1,hsn2,hsn3",
        "--enable 10.100.0.0/16",
        "--disable nmn0",
    ] {
        assert_eq!(
            settings("slingshot", args, "openmpi-5.0"),
            ompi("self,sm,ofi", all),
            "{args}"
        );
        assert_eq!(
            settings("slingshot", args, "openmpi-4.1"),
            ompi("self,vader", all),
            "{args}"
        );
        assert_eq!(
            settings("slingshot", args, "mpich-ofi"),
            strs(&["FI_PROVIDER=cxi", all]),
            "{args}"
        );
        assert_eq!(
            settings("slingshot", args, "intel"),
            strs(&[
                "I_MPI_FABRICS=shm:ofi",
                "I_MPI_OFI_PROVIDER=cxi",
                "FI_PROVIDER=cxi",
                all,
                "I_MPI_MULTIRAIL=1"
            ]),
            "{args}"
        );
        assert_eq!(
            settings("slingshot", args, "cray-mpich"),
            strs(&["MPICH_OFI_USE_PROVIDER=cxi", "FI_PROVIDER=cxi", all]),
            "{args}"
        );
    }
    // A netdev, a NIC or its qualifier picks that NIC alone, through cxi.
    for args in [
        "--enable hsn1",
        "--enable hsn1:ofi",
        "--enable cxi1",
        "--enable cxi1:cxi",
    ] {
        assert_eq!(
            settings("slingshot", args, "cray-mpich"),
            strs(&[
                "MPICH_OFI_USE_PROVIDER=cxi",
                "FI_PROVIDER=cxi",
                "FI_CXI_DEVICE_NAME=cxi1"
            ]),
            "{args}"
        );
    }
    // TCP over the fabric's netdev only when asked for; `eth` is the management network.
    assert_eq!(
        settings("slingshot", "--enable hsn0:tcp", "mpich-ofi"),
        strs(&["FI_PROVIDER=tcp", "FI_TCP_IFACE=hsn0"])
    );
    assert_eq!(
        settings("slingshot", "--enable slingshot:tcp", "openmpi-5.0"),
        strs(&[
            "OMPI_MCA_pml=ob1",
            "OMPI_MCA_btl=self,sm,tcp",
            "OMPI_MCA_btl_tcp_if_include=hsn0,hsn1,hsn2,hsn3"
        ])
    );
    assert_eq!(
        settings("slingshot", "--enable eth", "mpich-ofi"),
        strs(&["FI_PROVIDER=tcp", "FI_TCP_IFACE=nmn0"])
    );
    // The left-out netdevs say where their NIC went.
    let r = plan_on("slingshot", "--enable hsn2", "cray-mpich").unwrap();
    let why = r
        .translation
        .left_out
        .iter()
        .find(|l| l.what == "hsn2")
        .map(|l| l.reason.clone())
        .unwrap_or_default();
    assert!(why.contains("cxi2:1"), "{why}");
    // Several NICs: a note on how Cray MPICH spreads ranks over them, with NUMA nodes.
    let r = plan_on("slingshot", "--enable slingshot", "cray-mpich").unwrap();
    assert!(
        r.translation
            .notes
            .iter()
            .any(|n| n.contains("MPICH_OFI_NIC_POLICY") && n.contains("cxi3 on NUMA node 3")),
        "{:?}",
        r.translation.notes
    );
    // UCX does not drive Slingshot: refused, naming what does and the :tcp way.
    let e = error("slingshot", "--enable hsn0", "mpich-ucx");
    assert!(
        e.contains("cannot reach cxi0:1")
            && e.contains("cxi provider alone")
            && e.contains("--enable hsn0:tcp"),
        "{e}"
    );
    let e = error("slingshot", "--enable slingshot:cxi", "mpich-ucx");
    assert!(e.contains("no `cxi` path"), "{e}");
    let e = error("slingshot", "--enable cxi0:ucx", "cray-mpich");
    assert!(e.contains("cray-mpich-ucx"), "{e}");
}

/// Cray MPICH names itself in its version string; `cray-mpich-ucx` is MPICH over UCX.
#[test]
fn cray_mpich_is_detected_and_named() {
    for text in [
        "MPI VERSION    : CRAY MPICH version 8.1.28.15 (ANL base 3.4a2)\nMPI BUILD INFO : Sat Nov 18 12:00 2023 (git hash 1b7e6a1)",
        "CRAY MPICH version 9.0.1.112 (ANL base 4.1.2)",
    ] {
        assert_eq!(Flavour::detect(text), Some(Flavour::CrayMpich), "{text}");
    }
    for name in ["cray-mpich", "craympich", "Cray"] {
        assert_eq!(name.parse::<Flavour>(), Ok(Flavour::CrayMpich), "{name}");
    }
    assert_eq!(
        "cray-mpich-ucx".parse::<Flavour>(),
        Ok(Flavour::Mpich {
            device: MpichDevice::Ch4Ucx
        })
    );
    assert_eq!(Flavour::CrayMpich.to_string(), "cray-mpich");
}

/// Omni-Path Express: `:opx` takes libfabric's opx provider on every flavour that has
/// libfabric (PSM2 stays the default), with the HFI by unit, or, for HFIs on NUMA nodes
/// of their own (fixture `opa-dual`), one `numa:UNIT:NODE` selector each so that every
/// selected HFI is used.
#[test]
fn omni_path_express_is_taken_when_asked_for() {
    let one = ["FI_PROVIDER=opx", "FI_OPX_HFI_SELECT=0", "FI_OPX_PORT=1"];
    for args in [
        "--enable opa:opx",
        "--enable hfi1_0:opx",
        "--enable ib0,opa:opx",
    ] {
        assert_eq!(settings("opa", args, "mpich-ofi"), strs(&one), "{args}");
    }
    let mut ompi = strs(&[
        "OMPI_MCA_pml=cm",
        "OMPI_MCA_mtl=ofi",
        "OMPI_MCA_btl=self,sm,ofi",
        "OMPI_MCA_mtl_ofi_provider_include=opx",
    ]);
    ompi.extend(strs(&one));
    assert_eq!(settings("opa", "--enable opa:opx", "openmpi-5.0"), ompi);
    let mut intel = strs(&["I_MPI_FABRICS=shm:ofi", "I_MPI_OFI_PROVIDER=opx"]);
    intel.extend(strs(&one));
    assert_eq!(settings("opa", "--enable opa:opx", "intel"), intel);
    // Without the qualifier, PSM2 as before.
    assert_eq!(
        settings("opa", "--enable opa", "mpich-ofi"),
        strs(&["FI_PROVIDER=psm2", "HFI_UNIT=0", "HFI_PORT=1"])
    );
    // Two HFIs, NUMA nodes 0 and 1: both kept, by NUMA node; one named: that one.
    assert_eq!(
        settings("opa-dual", "--enable opa:opx", "mpich-ofi"),
        strs(&[
            "FI_PROVIDER=opx",
            "FI_OPX_HFI_SELECT=numa:0:0,numa:1:1",
            "FI_OPX_PORT=1"
        ])
    );
    assert_eq!(
        settings("opa-dual", "--enable hfi1_1:opx", "mpich-ofi"),
        strs(&["FI_PROVIDER=opx", "FI_OPX_HFI_SELECT=1", "FI_OPX_PORT=1"])
    );
    let e = error("opa", "--enable opa:opx", "mpich-ucx");
    assert!(e.contains("no `opx` path"), "{e}");
    let e = error("opa", "--enable opa:opx", "cray-mpich");
    assert!(e.contains("no `opx` path"), "{e}");
}

/// The warnings of a plan (unmatched items and what the translation loses).
fn warnings(fixture_name: &str, args: &str, flavour: &str) -> Vec<String> {
    let r = plan_on(fixture_name, args, flavour)
        .unwrap_or_else(|e| panic!("{fixture_name} {args} {flavour}: {e}"));
    netsel::format::report_warnings(&r)
}

/// An IPoIB child (`ib0.8001`, fixture `ib-pkey`) puts the RDMA traffic in its partition
/// on every flavour: UCX's partition number, openib's, MVAPICH2's key, libfabric verbs by
/// the child netdev; the parent or the HCA by name keeps the default partition.
#[test]
fn an_ipoib_child_sets_its_partition_for_rdma() {
    assert_eq!(
        settings("ib-pkey", "--enable ib0.8001", "mpich-ucx"),
        strs(&["UCX_NET_DEVICES=mlx5_0:1,ib0.8001", "UCX_IB_PKEY=0x1"])
    );
    assert_eq!(
        settings("ib-pkey", "--enable ib0.8001", "openmpi-4.1"),
        strs(&[
            "OMPI_MCA_pml=ucx",
            "OMPI_MCA_btl=self,vader",
            "OMPI_MCA_pml_ucx_tls=any",
            "OMPI_MCA_pml_ucx_devices=any",
            "UCX_NET_DEVICES=mlx5_0:1,ib0.8001",
            "UCX_IB_PKEY=0x1"
        ])
    );
    // A qualifier takes the child off IP use, never its partition off the port.
    assert_eq!(
        settings("ib-pkey", "--enable ib0.8001:verbs", "openmpi-4.1"),
        strs(&[
            "OMPI_MCA_pml=ob1",
            "OMPI_MCA_btl=self,vader,openib",
            "OMPI_MCA_btl_openib_if_include=mlx5_0:1",
            "OMPI_MCA_btl_openib_allow_ib=1",
            "OMPI_MCA_btl_openib_pkey=0x1",
        ])
    );
    assert_eq!(
        settings("ib-pkey", "--enable ib0.8001:verbs", "mpich-ucx"),
        strs(&[
            "UCX_NET_DEVICES=mlx5_0:1",
            "UCX_TLS=self,sm,rc,ud",
            "UCX_IB_PKEY=0x1"
        ])
    );
    assert!(settings("ib-pkey", "--enable ib0.8001:verbs", "mpich-ofi")
        .contains(&"FI_VERBS_IFACE=ib0.8001".to_string()));
    assert!(settings("ib-pkey", "--enable ib0.8001:verbs", "mvapich2")
        .contains(&"MV2_DEFAULT_PKEY=0x8001".to_string()));
    let w = warnings("ib-pkey", "--enable ib0.8001:verbs", "mpich-ucx");
    assert!(!w.iter().any(|w| w.contains("ib0.8001")), "{w:?}");
    assert_eq!(
        settings("ib-pkey", "--enable ib0.8001", "mpich-ofi"),
        strs(&[
            "FI_PROVIDER=verbs;ofi_rxm",
            "FI_VERBS_DEVICE_NAME=mlx5_0",
            "FI_VERBS_IFACE=ib0.8001"
        ])
    );
    assert_eq!(
        settings("ib-pkey", "--enable ib0.8001", "mvapich2"),
        strs(&[
            "MV2_IBA_HCA=mlx5_0",
            "MV2_DEFAULT_PORT=1",
            "MV2_DEFAULT_PKEY=0x8001"
        ])
    );
    // The default partition: no key.
    for args in ["--enable ib0", "--enable ib", "--enable mlx5_0"] {
        let s = settings("ib-pkey", args, "mpich-ucx");
        assert!(!s.iter().any(|s| s.contains("PKEY")), "{args}: {s:?}");
    }
    // Both partitions named: the default kept, said.
    let w = warnings("ib-pkey", "--enable ib0,ib0.8001", "mpich-ucx");
    assert!(
        w.iter()
            .any(|w| w.contains("several partitions") && w.contains("ib0.8001 0x8001")),
        "{w:?}"
    );
}

/// A RoCE VLAN netdev (`bond0.200` over `mlx5_bond_0`, fixture `roce-vlan`) sets the
/// index of its RoCE v2 GID with its IPv4 address (7), read from the port's GID table.
#[test]
fn a_roce_vlan_sets_its_rocev2_gid_index() {
    assert_eq!(
        settings("roce-vlan", "--enable bond0.200", "mpich-ucx"),
        strs(&[
            "UCX_NET_DEVICES=mlx5_bond_0:1,bond0.200",
            "UCX_IB_GID_INDEX=7"
        ])
    );
    // libfabric verbs (verbs;ofi_rxm) keeps the VLAN by the netdev rdmacm binds to: its
    // FI_VERBS_GID_IDX is read by datagram endpoints only, so it is not set, and the VLAN
    // is not said lost.
    assert_eq!(
        settings("roce-vlan", "--enable bond0.200", "mpich-ofi"),
        strs(&[
            "FI_PROVIDER=verbs;ofi_rxm",
            "FI_VERBS_DEVICE_NAME=mlx5_bond_0",
            "FI_VERBS_IFACE=bond0.200",
        ])
    );
    let w = warnings("roce-vlan", "--enable bond0.200", "mpich-ofi");
    assert!(!w.iter().any(|w| w.contains("GID")), "{w:?}");
    assert_eq!(
        settings("roce-vlan", "--enable bond0", "mpich-ucx"),
        strs(&["UCX_NET_DEVICES=mlx5_bond_0:1,bond0", "UCX_IB_GID_INDEX=3"])
    );
    // A qualifier takes the VLAN netdev off IP use, never its GID off the port.
    let s = settings("roce-vlan", "--enable bond0.200:verbs", "openmpi-4.1");
    assert!(
        s.contains(&"OMPI_MCA_btl_openib_gid_index=7".to_string()),
        "{s:?}"
    );
    let s = settings("roce-vlan", "--enable bond0.200:verbs", "mpich-ofi");
    assert!(s.contains(&"FI_VERBS_IFACE=bond0.200".to_string()), "{s:?}");
    assert!(
        !s.iter().any(|s| s.starts_with("FI_VERBS_GID_IDX")),
        "{s:?}"
    );
    let s = settings("roce-vlan", "--enable 10.41.0.0/24", "mvapich2");
    assert!(s.contains(&"MV2_DEFAULT_GID_INDEX=7".to_string()), "{s:?}");
}

/// Four InfiniBand rails (fixture `ib-4rail`): every rail kept by every flavour that can
/// hold several, in the form the library reads; a one-value knob that loses rails says so.
#[test]
fn every_rail_is_kept_or_the_loss_is_said() {
    // libfabric verbs: the devices as a list (their common prefix `mlx5_` would also take
    // the RoCE NIC mlx5_4), the netdevs by their prefix `ib`.
    let r = plan_on("ib-4rail", "--enable ib", "mpich-ofi").unwrap();
    let s: Vec<String> = r
        .translation
        .settings
        .iter()
        .map(|s| format!("{}={}", s.env, s.value))
        .collect();
    assert_eq!(
        s,
        strs(&[
            "FI_PROVIDER=verbs;ofi_rxm",
            "FI_VERBS_DEVICE_NAME=mlx5_0,mlx5_1,mlx5_2,mlx5_3",
            "FI_VERBS_IFACE=ib"
        ])
    );
    assert!(
        r.translation.notes.iter().any(|n| n.contains("from 2.6")),
        "{:?}",
        r.translation.notes
    );
    assert!(
        r.translation.warnings.is_empty(),
        "{:?}",
        r.translation.warnings
    );
    // Every device of the host: the common prefix, which every version reads.
    assert_eq!(
        settings("ib-4rail", "--disable eth0", "mpich-ofi")[1],
        "FI_VERBS_DEVICE_NAME=mlx5_",
    );
    // UCX and Intel MPI keep all four.
    assert_eq!(
        settings("ib-4rail", "--enable ib", "mpich-ucx"),
        strs(&["UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"])
    );
    assert!(settings("ib-4rail", "--enable ib", "intel").contains(&"I_MPI_MULTIRAIL=1".into()));
    // MPICH's ch3:nemesis takes one interface: the other rails are lost, said.
    let w = warnings("ib-4rail", "--enable ib:tcp", "mpich-nemesis");
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(
        w[0].starts_with("host node-rails: ib1 is not used: MPIR_CVAR_NEMESIS_TCP_NETWORK_IFACE takes one interface"),
        "{w:?}"
    );
    // PSM2 with two HFIs: PSM2's multi-rail.
    assert_eq!(
        settings("opa-dual", "--enable opa", "mpich-ofi"),
        strs(&[
            "FI_PROVIDER=psm2",
            "PSM2_MULTIRAIL=1",
            "PSM2_MULTIRAIL_MAP=0:1,1:1"
        ])
    );
}

/// Never downgraded in silence: a fast fabric over TCP without `:tcp`, a bridge given to
/// UCX, an empty device list, the launcher's control network alone.
#[test]
fn downgrades_are_said() {
    // Omni-Path under MPICH over UCX: the HFI is reached only as IPoIB.
    let w = warnings("opa", "--disable eth0", "mpich-ucx");
    assert!(
        w.iter().any(
            |w| w.contains("hfi1_0:1 (omnipath) is driven over TCP on ib0")
                && w.contains("`ib0:tcp`")
        ),
        "{w:?}"
    );
    assert!(warnings("opa", "--enable ib0:tcp", "mpich-ucx").is_empty());
    // Slingshot under UCX: every NIC over TCP on its hsn netdev.
    let w = warnings("slingshot", "--disable nmn0", "mpich-ucx");
    assert_eq!(
        w.iter()
            .filter(|w| w.contains("(slingshot) is driven over TCP"))
            .count(),
        4,
        "{w:?}"
    );
    assert!(warnings("slingshot", "--disable nmn0", "cray-mpich").is_empty());
    // A bridge under UCX.
    let w = warnings("bond", "--enable docker0", "mpich-ucx");
    assert!(w.iter().any(|w| w.contains("docker0 is a bridge")), "{w:?}");
    assert!(warnings("bond", "--enable docker0", "openmpi-4.1").is_empty());
    // Nothing the library can reach: an error, never an empty list.
    let e = error("efa", "--disable ens5", "mpich-ucx");
    assert!(
        e.contains("can reach none of what --disable leaves (efa_0:1, efa_1:1)")
            && e.contains("which UCX does not use"),
        "{e}"
    );
    // Only the launcher's control network left (Slurm's launch node on nmn0's subnet).
    let env = environment(&[("SLURM_LAUNCH_NODE_IPADDR", "10.252.0.1")]);
    let flavour: Flavour = "cray-mpich".parse().unwrap();
    let host = host("slingshot");
    let r = plan(&sel("--enable eth"), flavour, &host, &env).unwrap();
    let w = netsel::format::report_warnings(&r);
    assert!(
        w.iter().any(|w| w
            .contains("leaves only nmn0, the network of the launcher's control connections")
            && w.contains("cxi0:1")),
        "{w:?}"
    );
    let r = plan(&sel("--enable slingshot"), flavour, &host, &env).unwrap();
    assert!(netsel::format::report_warnings(&r).is_empty());
}

/// A partition a path has no setting for is said: TrueScale through PSM (Open MPI 4's
/// `mtl psm`) with an IPoIB child selected on it.
#[test]
fn a_partition_without_a_setting_is_a_loss() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("qib");
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(common::fixture("qib"))
        .arg(&root)
        .status()
        .unwrap();
    assert!(ok.success());
    let child = root.join("class/net/ib0.8002");
    std::fs::create_dir_all(child.join("device")).unwrap();
    for (f, v) in [("type", "32"), ("operstate", "up"), ("pkey", "0x8002")] {
        std::fs::write(child.join(f), format!("{v}\n")).unwrap();
    }
    std::fs::create_dir_all(root.join("class/infiniband/qib0/device/net/ib0.8002")).unwrap();
    let mut addrs = std::fs::read_to_string(root.join("addrs")).unwrap();
    addrs.push_str("ib0.8002 10.33.0.11/16\n");
    std::fs::write(root.join("addrs"), addrs).unwrap();
    let host = netsel::Discovery::at(&root).discover().unwrap();
    let flavour: Flavour = "openmpi-4.1".parse().unwrap();
    let r = plan(&sel("--enable ib0.8002"), flavour, &host, &environment(&[])).unwrap();
    assert_eq!(r.translation.path, "cm + mtl psm");
    assert!(
        r.translation
            .warnings
            .iter()
            .any(|w| w.contains("has no partition setting") && w.contains("0x8002")),
        "{:?}",
        r.translation.warnings
    );
}

/// A qualifier never forces a provider the path cannot use: Open MPI's ofi MTL needs
/// tagged messages, which libfabric's usnic provider lacks (usNIC goes through the usnic
/// BTL); Cray's libfabric has no usnic and no psm2 provider; Intel MPI has no usNIC.
#[test]
fn ofi_and_mtl_qualifiers_refuse_providers_the_path_cannot_use() {
    for flavour in ["openmpi-4.1", "openmpi-5.0"] {
        for q in ["ofi", "mtl"] {
            let e = error("usnic", &format!("--enable usnic:{q}"), flavour);
            assert!(e.contains("needs tagged messages (FI_TAGGED)"), "{e}");
        }
        // The BTL still reaches it.
        assert!(settings("usnic", "--enable usnic:usnic", flavour)
            .iter()
            .any(|s| s.starts_with("OMPI_MCA_btl_usnic_if_include=")));
    }
    for (fx, args) in [("usnic", "--enable usnic:ofi"), ("opa", "--enable opa:mtl")] {
        let e = error(fx, args, "cray-mpich");
        assert!(e.contains("Cray's libfabric has neither"), "{e}");
    }
    assert!(error("usnic", "--enable usnic:ofi", "intel").contains("does not support usNIC"));
    // MPICH ch4:ofi keeps its usnic provider.
    assert_eq!(
        settings("usnic", "--enable usnic:ofi", "mpich-ofi"),
        strs(&["FI_PROVIDER=usnic"])
    );
}
