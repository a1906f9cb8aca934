//! The harness itself: a job between the two hosts crosses the data links, and pinning
//! Open MPI's TCP transport by hand moves all of it onto one link. If this fails, the
//! network-selection proofs built on the harness mean nothing.

use netns::{build_pingpong, delta, Installation, DATA_A, DATA_B, HOSTS};

#[test]
fn a_hand_pinned_open_mpi_job_uses_only_the_pinned_link() {
    let mpi = Installation::from_env();
    if !mpi.is_open_mpi() {
        eprintln!(
            "SKIPPED: this harness check uses Open MPI parameters (XYLEM_TEST_MPI={})",
            mpi.name()
        );
        return;
    }
    let Some(cluster) = netns::cluster_or_skip() else {
        return;
    };
    let exe = build_pingpong(mpi, cluster.dir());
    let before = cluster.counters();
    let job = cluster.launch(
        mpi,
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
