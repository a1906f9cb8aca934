//! Open MPI's one-sided (`osc`) and collective (`coll`) components follow the selected
//! path: every Open MPI translation names the osc components that carry their bytes over
//! it (never `osc ucx` beside a BTL path, which would pick its own devices) and leaves
//! out the collective components with a transport of their own.

mod common;

use common::{all_settings, is_one_sided_or_collective};

fn one_sided_and_collective(fixture: &str, args: &str, flavour: &str) -> Vec<String> {
    all_settings(fixture, args, flavour)
        .into_iter()
        .filter(|s| is_one_sided_or_collective(s))
        .collect()
}

#[test]
fn osc_and_coll_follow_the_path() {
    let cases: [(&str, &str, &str, [&str; 2]); 6] = [
        (
            "bond",
            "--enable 10.80.0.0/24",
            "openmpi-4.1",
            ["OMPI_MCA_osc=sm,pt2pt", "OMPI_MCA_coll=^hcoll,ucc"],
        ),
        (
            "bond",
            "--enable 10.80.0.0/24",
            "openmpi-5.0",
            ["OMPI_MCA_osc=sm,rdma", "OMPI_MCA_coll=^hcoll,ucc"],
        ),
        (
            "bond",
            "--enable 10.80.0.0/24:ucx",
            "openmpi-4.1",
            ["OMPI_MCA_osc=sm,ucx", "OMPI_MCA_coll=^hcoll,ucc"],
        ),
        (
            "ib-ipoib",
            "--enable ib",
            "openmpi-5.0",
            ["OMPI_MCA_osc=sm,ucx", "OMPI_MCA_coll=^hcoll,ucc"],
        ),
        (
            "bond",
            "--disable docker0",
            "openmpi-4.1",
            ["OMPI_MCA_osc=sm,pt2pt", "OMPI_MCA_coll=^hcoll,ucc"],
        ),
        (
            "bond",
            "--enable 10.80.0.0/24:ofi",
            "openmpi-4.1",
            ["OMPI_MCA_osc=sm,pt2pt", "OMPI_MCA_coll=^hcoll,ucc"],
        ),
    ];
    for (fixture, args, flavour, want) in cases {
        assert_eq!(
            one_sided_and_collective(fixture, args, flavour),
            want,
            "{fixture} {args} {flavour}"
        );
    }
}

/// On an RDMA provider (Slingshot's cxi, EFA, OPX, verbs for iWARP) Open MPI 5's osc rdma
/// needs a BTL between hosts: the OFI BTL, on the provider the MTL uses.
#[test]
fn open_mpi_5_over_an_rdma_provider_keeps_the_ofi_btl_for_osc_rdma() {
    for (fixture, args, provider) in [
        ("slingshot", "--enable slingshot", "cxi"),
        ("efa", "--enable efa", "efa"),
        ("opa", "--enable opa:opx", "opx"),
        ("iwarp", "--enable iwarp", "verbs;ofi_rxm"),
    ] {
        let all = all_settings(fixture, args, "openmpi-5.0");
        for want in [
            "OMPI_MCA_pml=cm".to_string(),
            "OMPI_MCA_btl=self,sm,ofi".to_string(),
            format!("OMPI_MCA_mtl_ofi_provider_include={provider}"),
            "OMPI_MCA_osc=sm,rdma".to_string(),
        ] {
            assert!(
                all.contains(&want),
                "{fixture}: {want} missing from {all:?}"
            );
        }
    }
    // Open MPI 4.1 keeps osc pt2pt over the MTL there, and no network BTL.
    let all = all_settings("slingshot", "--enable slingshot", "openmpi-4.1");
    assert!(
        all.contains(&"OMPI_MCA_btl=self,vader".to_string()),
        "{all:?}"
    );
}

#[test]
fn open_mpi_5_over_ofi_keeps_a_tcp_btl_for_osc_rdma_on_the_same_interfaces() {
    let all = all_settings("bond", "--enable 10.80.0.0/24:ofi", "openmpi-5.0");
    for want in [
        "OMPI_MCA_pml=cm",
        "OMPI_MCA_mtl=ofi",
        "OMPI_MCA_btl=self,sm,tcp",
        "OMPI_MCA_btl_tcp_if_include=bond0",
        "OMPI_MCA_osc=sm,rdma",
    ] {
        assert!(all.iter().any(|s| s == want), "{want} missing from {all:?}");
    }
}

#[test]
fn other_libraries_get_no_open_mpi_components() {
    for flavour in ["mpich-ucx", "mpich-ofi", "intel"] {
        let all = all_settings("bond", "--enable 10.80.0.0/24", flavour);
        assert!(
            !all.iter().any(|s| s.starts_with("OMPI_MCA_")),
            "{flavour}: {all:?}"
        );
    }
}
