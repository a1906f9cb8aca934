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
        (
            "iwarp",
            "--enable iwarp",
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
            "OMPI_MCA_btl=self,sm",
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
        ("opa", "--enable opa", "mpich-ofi", &["FI_PROVIDER=psm2"]),
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
