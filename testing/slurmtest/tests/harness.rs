//! The harness itself: nodes come up idle, each slurmd has its own host name, /dev/shm
//! and PMIx directory, and dropping the cluster stops every daemon it started.

use std::time::Duration;

use slurmtest::cluster_or_skip;

#[test]
fn nodes_have_their_own_host_name_shm_and_pmix_dir_and_stop_on_drop() {
    let Some(cluster) = cluster_or_skip(2) else {
        return;
    };
    let job = cluster.run(
        Duration::from_secs(30),
        &[
            "srun",
            "-N",
            "2",
            "-n",
            "2",
            "--mpi=none",
            "sh",
            "-c",
            "touch /dev/shm/xylem-mark-$SLURM_NODEID; \
             echo $SLURMD_NODENAME $(hostname) $(ls /dev/shm | grep -c xylem-mark)",
        ],
        &[],
    );
    assert!(job.success(), "{job:#?}");
    let mut lines: Vec<&str> = job.stdout.lines().collect();
    lines.sort();
    // Each node sees its own name as host name and only its own mark in /dev/shm.
    assert_eq!(lines, ["n1 n1 1", "n2 n2 1"], "{job:#?}");
    let pids: Vec<u32> = ["slurmctld", "slurmd-n1", "slurmd-n2"]
        .iter()
        .map(|name| {
            std::fs::read_to_string(cluster.dir().join(format!("{name}.pid")))
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        })
        .collect();
    let conf = cluster.conf();
    for pid in &pids {
        let cmd = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap();
        assert!(cmd.contains(conf.to_str().unwrap()), "{cmd}");
    }
    let dir = cluster.dir().to_path_buf();
    drop(cluster);
    for pid in pids {
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "pid {pid} still runs after the cluster was dropped"
        );
    }
    assert!(!dir.exists(), "{} is left behind", dir.display());
}
