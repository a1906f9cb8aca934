//! The harness itself: a job between the two hosts crosses the data links, and pinning
//! Open MPI's TCP transport by hand moves all of it onto one link. If this fails, the
//! network-selection proofs built on the harness mean nothing.

use netns::{build_pingpong, delta, Cluster, Flavour, DATA_A, DATA_B, HOSTS};

fn cluster() -> Option<Cluster> {
    match Cluster::create() {
        Ok(c) => Some(c),
        Err(why) => {
            eprintln!("SKIPPED: cannot build network namespaces here: {}", why.0);
            None
        }
    }
}

#[test]
fn a_hand_pinned_open_mpi_job_uses_only_the_pinned_link() {
    if Flavour::from_env() != Flavour::OpenMpi {
        eprintln!("SKIPPED: this harness check uses Open MPI parameters (XYLEM_MPI=mpich)");
        return;
    }
    let Some(cluster) = cluster() else { return };
    let exe = build_pingpong(Flavour::OpenMpi, cluster.dir());
    let before = cluster.counters();
    let job = cluster.launch(
        Flavour::OpenMpi,
        &[exe.to_str().unwrap()],
        &[
            ("OMPI_MCA_pml", "ob1"),
            ("OMPI_MCA_btl", "self,tcp"),
            ("OMPI_MCA_btl_tcp_if_include", &DATA_B.cidr()),
        ],
    );
    let after = cluster.counters();
    assert!(job.success(), "{job:#?}");
    let payload: u64 = 50 << 20;
    let d = delta(&before, &after);
    let sent = |link: &str| d[&(HOSTS[0].to_string(), link.to_string())].0;
    assert!(sent(DATA_B.name) >= payload * 9 / 10, "{d:?}");
    assert!(sent(DATA_A.name) < 64 << 10, "{d:?}");
}
