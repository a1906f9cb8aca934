//! Scale runs on a local Slurm of 16 nodes (not part of `make test`: ignored; run by
//! `scripts/bench-slurm-scale.sh`): sqmr placed by the place crate, MPICH at 128 ranks
//! (64 cores × 1 neighbour) and Open MPI at 32 ranks (16 × 1), small sizes (SCALE_CORES and
//! SCALE_LIMIT override the core ranks and the 1200 s limit). Appends one
//! line per run to `bench/out/slurm-scale.txt` with the command and its wall time.

use std::io::Write;
use std::time::Duration;

use place::{Layout, Mpi, Request, Topology};
use slurmtest::{sibling_binary, Cluster, Config, Installation, StartError};

#[test]
#[ignore = "scale run: scripts/bench-slurm-scale.sh"]
fn sqmr_on_sixteen_nodes() {
    let installation = Installation::from_env();
    let (mpi, num_cores, name) = if installation.is_open_mpi() {
        (Mpi::OpenMpi, 16, installation.name())
    } else {
        (Mpi::Mpich, 64, installation.name())
    };
    // SCALE_CORES overrides the core ranks, to find where a scale stops working.
    let num_cores = std::env::var("SCALE_CORES")
        .ok()
        .map(|v| v.parse().expect("SCALE_CORES is a number of core ranks"))
        .unwrap_or(num_cores);
    let mut config = Config::nodes(16);
    config.cpus_per_node = 64;
    let started = std::time::Instant::now();
    let cluster = match Cluster::start_with(&config) {
        Ok(c) => c,
        Err(StartError::Unavailable(why)) => {
            slurmtest::skip(&why);
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let layout = Layout::plan(&Request {
        shape: Topology {
            num_cores,
            num_nbors: 1,
        },
        core_node: "n1".to_string(),
        nodes: cluster.nodes().to_vec(),
        slots_per_node: Some(config.cpus_per_node),
    })
    .unwrap();
    let extra: Vec<String> = ["--num_iters", "20", "--max_msgsize", "8", "--win_size", "1"]
        .map(String::from)
        .to_vec();
    let command = cluster.placed_srun(&layout, mpi, &sibling_binary("sqmr"), &extra);
    let argv: Vec<&str> = command.argv.iter().map(String::as_str).collect();
    let env: Vec<(&str, &str)> = command
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let cluster_up = started.elapsed();
    // SCALE_LIMIT (seconds) overrides the time limit of the job.
    let limit = std::env::var("SCALE_LIMIT")
        .ok()
        .map(|v| v.parse().expect("SCALE_LIMIT is a number of seconds"))
        .unwrap_or(1200);
    let job = cluster.run(Duration::from_secs(limit), &argv, &env);
    assert!(job.success(), "{job:#?}");
    assert!(
        !job.stdout.contains("# WARNING placement"),
        "{}",
        job.stdout
    );
    let rows = job
        .stdout
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .count();
    assert_eq!(rows, 5, "{}", job.stdout);
    let line =
        format!(
        "{name}: {} ranks on 16 nodes ({}), wall {:.1} s (cluster up in {:.1} s, {} build): {}\n",
        layout.ranks(),
        layout.summary(),
        job.elapsed.as_secs_f64(),
        cluster_up.as_secs_f64(),
        if cfg!(debug_assertions) { "debug" } else { "release" },
        command
            .shell_line()
            .replace(cluster.dir().to_str().unwrap(), "$DIR")
    );
    eprint!("{line}");
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out.join("slurm-scale.txt"))
        .unwrap()
        .write_all(line.as_bytes())
        .unwrap();
}
