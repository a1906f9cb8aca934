//! The network-selection proof under `srun`: two Slurm nodes, each slurmd in a network
//! namespace of its own (the `netns` crate's two hosts, joined by a control link and two
//! data links), the controller and `srun` on the first. sqmr selects a data link with
//! `--enable`/`--disable`, resolved on each node before `MPI_Init`, and a plain C MPI
//! program runs under `xylem net exec`; the links' byte counters must show the selected
//! one carried the payload and the other nothing. The MPI installation that `XYLEM_TEST_MPI` names (the
//! binaries beside this test were built against it).

use std::time::Duration;

use netns::{
    build_pingpong, delta, sqmr_proof_payload, Installation, CONTROL, DATA_A, DATA_B, HOSTS,
    SQMR_PROOF_ARGS,
};
use slurmtest::{sibling_binary, skip, Cluster, Config, NodeNetworks, StartError};

const LIMIT: Duration = Duration::from_secs(120);

#[test]
fn network_selection_under_srun_moves_the_bytes() {
    let hosts = match netns::Cluster::create() {
        Ok(h) => h,
        Err(why) => {
            return skip(&format!(
                "network namespaces cannot be made here: {}",
                why.0
            ))
        }
    };
    let networks = NodeNetworks {
        namespaces: HOSTS.map(String::from).to_vec(),
        addresses: (1..=HOSTS.len())
            .map(|j| format!("{}.{j}", CONTROL.subnet))
            .collect(),
    };
    let cluster = match Cluster::start_with(&Config::in_namespaces(networks)) {
        Ok(c) => c,
        Err(StartError::Unavailable(why)) => return skip(&format!("no local Slurm: {why}")),
        Err(e) => panic!("{e}"),
    };
    let mpi = Installation::from_env();
    let plugin = slurmtest::srun_plugin(mpi);
    // The namespaces share this machine's memory, and UCX or libfabric would carry the
    // messages through shared memory between them; real nodes cannot.
    let own = slurmtest::srun_env(mpi);
    let mut env: Vec<(&str, &str)> = netns::network_defaults(mpi).to_vec();
    env.extend(own.iter().map(|(k, v)| (*k, v.as_str())));
    // `srun -N 2 -n 2 PROGRAM…`, one task per node; the counters' change while it ran.
    let measure = |program: &[&str]| -> (slurmtest::Job, netns::Counters) {
        let mut argv = vec!["srun", plugin, "-N", "2", "-n", "2"];
        argv.extend_from_slice(program);
        let before = hosts.counters();
        let job = cluster.run(LIMIT, &argv, &env);
        let after = hosts.counters();
        assert!(
            job.success(),
            "{argv:?}: {job:#?}\nslurmctld:\n{}",
            cluster.log_tail("slurmctld", 30)
        );
        (job, delta(&before, &after))
    };
    let sqmr = sibling_binary("sqmr");
    // The two hosts name their interfaces differently: a list by name names both.
    let disable = format!("{},{}", DATA_A.both(), CONTROL.both());
    for (option, list, selected, other) in [
        (
            "--enable",
            "10.20.0.0/24".to_string(),
            DATA_A.name,
            DATA_B.name,
        ),
        ("--disable", disable, DATA_B.name, DATA_A.name),
    ] {
        let list = list.as_str();
        let mut program = vec![sqmr.to_str().unwrap(), "--verbose", option, list];
        program.extend(SQMR_PROOF_ARGS);
        let (job, d) = measure(&program);
        // One rank on each node: the processor names are the node names.
        for (rank, node) in ["n1", "n2"].iter().enumerate() {
            let line = format!("# rank {rank} is on {node}");
            assert!(
                job.stdout.contains(&line),
                "{line} missing:\n{}",
                job.stdout
            );
        }
        assert!(
            job.stdout.contains(&format!(
                "# network selection (rank 0's host): {option} {list}"
            )),
            "{}",
            job.stdout
        );
        netns::assert_carried(
            &d,
            sqmr_proof_payload(),
            &[selected],
            &[other],
            &format!("srun sqmr {option} {list}"),
            &job.stderr,
        );
    }

    // Any MPI program: each task resolves the selection on its node, then execs it.
    let pingpong = build_pingpong(mpi, hosts.dir());
    let xylem = sibling_binary("xylem");
    let data_b = DATA_B.both();
    let (job, d) = measure(&[
        xylem.to_str().unwrap(),
        "net",
        "exec",
        "--enable",
        &data_b,
        "--",
        pingpong.to_str().unwrap(),
    ]);
    assert!(
        job.stdout.contains("payload_each_way 52428800"),
        "{}",
        job.stdout
    );
    netns::assert_carried(
        &d,
        50 << 20,
        &[DATA_B.name],
        &[DATA_A.name],
        &format!("srun xylem net exec --enable {data_b} -- pingpong"),
        &job.stderr,
    );
}
