//! The benchmarks under `srun` on a local multi-node Slurm, for the MPI installation that
//! `XYLEM_TEST_MPI` names (the binaries beside this test were built against it): sqmr placed across
//! nodes, b_eff_io over two partitions, and the silent-singleton stop.

use std::time::Duration;

use place::{Layout, Mpi, Request, Topology};
use slurmtest::{cluster_or_skip, sibling_binary, Cluster, Family, Installation, Job};

/// Every srun of these tests ends within this.
const LIMIT: Duration = Duration::from_secs(120);

/// Short sqmr runs: small sizes, few iterations.
const SHORT: &[&str] = &[
    "--num_iters",
    "40",
    "--max_msgsize",
    "64",
    "--win_size",
    "2",
    "--verbose",
];

fn mpi() -> Mpi {
    match Installation::from_env().family() {
        Family::OpenMpi => Mpi::OpenMpi,
        Family::Hydra => Mpi::Mpich,
    }
}

/// `--mpi=` for the installation under test.
fn plugin() -> String {
    format!("--mpi={}", mpi().srun_plugin())
}

/// Environment for the ranks: what the installation needs under srun
/// ([`slurmtest::srun_env`]). (MPICH's UCX then picks its own transports; forcing
/// `UCX_TLS=tcp,self` made MPICH 4.0.2 hang in `MPI_Finalize` after a complete run of
/// 2 × 2 ranks here.)
fn rank_env() -> Vec<(&'static str, String)> {
    slurmtest::srun_env(Installation::from_env())
}

fn run(cluster: &Cluster, argv: &[&str], env: &[(&str, &str)]) -> Job {
    let own = rank_env();
    let mut all: Vec<(&str, &str)> = own.iter().map(|(k, v)| (*k, v.as_str())).collect();
    all.extend_from_slice(env);
    let job = cluster.run(LIMIT, argv, &all);
    eprintln!("{:.1} s: {}", job.elapsed.as_secs_f64(), argv.join(" "));
    assert!(
        !job.timed_out,
        "{argv:?} hit the time limit: {job:#?}\nslurmctld:\n{}",
        cluster.log_tail("slurmctld", 30)
    );
    job
}

/// Checks sqmr's standard output: `#` lines and 8-field rows only, the expected sizes,
/// no placement warning, and every rank on the node the layout gave it (the processor
/// names of `--verbose`, which are the node names here).
fn assert_placed_run(job: &Job, hosts: &[String], num_cores: usize, num_nbors: usize) {
    assert!(job.success(), "{job:#?}");
    let mut rows = 0;
    let mut seen = vec![None; hosts.len()];
    for line in job.stdout.lines() {
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# rank ") {
            if let Some((rank, host)) = rest.split_once(" is on ") {
                let rank: usize = rank.parse().unwrap();
                seen[rank] = Some(host.to_string());
            }
            continue;
        }
        if line.starts_with('#') {
            assert!(
                !line.starts_with("# WARNING placement"),
                "placement check failed: {line}\n{job:#?}"
            );
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields.len(), 8, "a row has eight fields: {line:?}");
        for f in &fields[2..] {
            let v: f64 = f.parse().unwrap();
            assert!(v >= 0.0, "{line}");
        }
        assert!(fields[2].parse::<f64>().unwrap() > 0.0, "{line}");
        rows += 1;
    }
    // Sizes 0, 1, 2, …, 64.
    assert_eq!(rows, 8, "{}", job.stdout);
    let seen: Vec<String> = seen
        .into_iter()
        .map(|h| h.expect("every rank's host is printed"))
        .collect();
    assert_eq!(seen, hosts, "processor names per rank");
    let line = |name: &str| {
        job.stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name:?} line in\n{}", job.stdout))
            .rsplit(": ")
            .next()
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(line("# MPI tasks per node"), num_cores.to_string());
    assert_eq!(line("# Neighbor tasks"), num_nbors.to_string());
}

#[test]
fn sqmr_one_core_one_neighbour_on_two_nodes() {
    let Some(cluster) = cluster_or_skip(2) else {
        return;
    };
    let sqmr = sibling_binary("sqmr");
    let mut argv = vec![
        "srun",
        "-N",
        "2",
        "-n",
        "2",
        "--ntasks-per-node=1",
        &plugin(),
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    argv.push(sqmr.display().to_string());
    argv.extend(["--num_cores", "1", "--num_nbors", "1"].map(String::from));
    argv.extend(SHORT.iter().map(|s| s.to_string()));
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let job = run(&cluster, &argv, &[]);
    assert_placed_run(&job, &["n1".to_string(), "n2".to_string()], 1, 1);
}

/// Runs sqmr as `xylem place sqmr … --launcher srun --mpi <flavour>` would: the place
/// crate's host file and command line, unchanged.
fn placed_sqmr(cluster: &Cluster, num_cores: usize, num_nbors: usize) -> (Job, Vec<String>) {
    let layout = Layout::plan(&Request {
        shape: Topology {
            num_cores,
            num_nbors,
        },
        core_node: "n1".to_string(),
        nodes: cluster.nodes().to_vec(),
        slots_per_node: Some(16),
    })
    .expect("the layout fits the cluster");
    let extra: Vec<String> = SHORT.iter().map(|s| s.to_string()).collect();
    let command = cluster.placed_srun(&layout, mpi(), &sibling_binary("sqmr"), &extra);
    let argv: Vec<&str> = command.argv.iter().map(String::as_str).collect();
    let env: Vec<(&str, &str)> = command
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let hosts = layout.hosts().into_iter().map(str::to_string).collect();
    (run(cluster, &argv, &env), hosts)
}

#[test]
fn sqmr_two_cores_two_neighbours_placed_by_the_place_crate() {
    let Some(cluster) = cluster_or_skip(2) else {
        return;
    };
    let (job, hosts) = placed_sqmr(&cluster, 2, 2);
    assert_eq!(hosts, ["n1", "n1", "n2", "n2", "n2", "n2"]);
    assert_placed_run(&job, &hosts, 2, 2);
}

#[test]
fn sqmr_placed_over_three_nodes_spreads_each_cores_neighbours() {
    let Some(cluster) = cluster_or_skip(3) else {
        return;
    };
    let (job, hosts) = placed_sqmr(&cluster, 2, 2);
    // Core 0's neighbours (ranks 2, 3) and core 1's (4, 5) each on n2 and n3.
    assert_eq!(hosts, ["n1", "n1", "n2", "n3", "n2", "n3"]);
    assert_placed_run(&job, &hosts, 2, 2);
}

#[test]
fn b_eff_io_on_two_nodes_four_tasks_two_partitions_and_cleans_up() {
    let Some(cluster) = cluster_or_skip(2) else {
        return;
    };
    let beffio = sibling_binary("b_eff_io");
    let dir = cluster.dir().join("io");
    std::fs::create_dir(&dir).unwrap();
    let json = cluster.dir().join("beffio.json");
    let job = run(
        &cluster,
        &[
            "srun",
            "-N",
            "2",
            "-n",
            "4",
            &plugin(),
            beffio.to_str().unwrap(),
            "-T",
            "10",
            "-N",
            "4,2",
            "-p",
            dir.to_str().unwrap(),
            "--memory-per-process",
            "64M",
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
    );
    assert!(job.success(), "{job:#?}");
    assert!(job.stdout.contains("b_eff_io = "), "{}", job.stdout);
    assert_eq!(
        mpitest::dir_entries(&dir),
        Vec::<String>::new(),
        "files left behind"
    );
    // Without -f, 2.1's b_eff_io.sum and .prot where the job ran (srun's working folder).
    let sum = std::fs::read_to_string(cluster.dir().join("b_eff_io.sum"))
        .unwrap_or_else(|e| panic!("no b_eff_io.sum where the job ran: {e}\n{job:#?}"));
    assert!(sum.contains("PREFIX=b_eff_io\n"), "{sum}");
    assert!(
        sum.contains("Summary of file I/O bandwidth accumulated on   4 processes"),
        "{sum}"
    );
    assert!(cluster.dir().join("b_eff_io.prot").is_file());
    let doc: serde_json::Value = mpitest::read_document(&json);
    assert_eq!(doc["processes"], 4, "{doc}");
    // The batch job and its two nodes are recorded.
    mpitest::assert_provenance(&doc, "b_eff_io", 4, "--memory-per-process");
    let p = &doc["provenance"];
    assert_eq!(p["job_id_variable"], "SLURM_JOB_ID", "{p}");
    assert!(
        p["job_id"]
            .as_str()
            .is_some_and(|id| id.parse::<u64>().is_ok()),
        "{p}"
    );
    assert_eq!(p["hosts"].as_array().unwrap().len(), 2, "{p}");
    let partitions: Vec<u64> = doc["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["processes"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(partitions, [4, 2], "{doc}");
}

/// Under the wrong plugin no copy runs the benchmark alone: MPICH 4.0 starts every task as
/// a world of 1, and xylem stops each copy with exit code 5 and one message naming the
/// plugin to use; MPICH 5 and Intel MPI refuse PMIx in `MPI_Init` themselves.
#[test]
fn hydra_libraries_under_srun_pmix_never_run_alone() {
    let mpi = Installation::from_env();
    if mpi.family() != Family::Hydra {
        slurmtest::skip(
            "the silent singleton is MPICH's (Open MPI under a wrong plugin fails by itself); \
             runs with the hydra installations (XYLEM_TEST_MPI=mpich4, mpich5, intelmpi)",
        );
        return;
    }
    let Some(cluster) = cluster_or_skip(2) else {
        return;
    };
    let sqmr = sibling_binary("sqmr");
    let job = run(
        &cluster,
        &[
            "srun",
            "-N",
            "2",
            "-n",
            "4",
            "--mpi=pmix",
            "--kill-on-bad-exit=0",
            sqmr.to_str().unwrap(),
            "--num_cores",
            "2",
            "--num_iters",
            "10",
            "--max_msgsize",
            "8",
        ],
        &[],
    );
    assert!(!job.success(), "{job:#?}");
    if mpi != Installation::Mpich4 {
        // The library itself refuses: MPICH 5 "unsupported PMI version PMIx", Intel MPI
        // "PMI2_Job_GetId returned 14". Nothing ran.
        assert!(job.stderr.contains("MPI_Init"), "{}", job.stderr);
        assert!(!job.stdout.contains("# SQMR"), "{}", job.stdout);
        return;
    }
    let errors: Vec<&str> = job
        .stderr
        .lines()
        .filter(|l| l.contains("ERROR launch: srun started 4 tasks"))
        .collect();
    assert_eq!(errors.len(), 4, "one error per copy:\n{}", job.stderr);
    for task in 0..4 {
        assert!(
            errors
                .iter()
                .any(|l| l.contains(&format!("task {task} of 4"))),
            "task {task}:\n{}",
            job.stderr
        );
    }
    assert!(
        errors.iter().all(|l| l.contains("--mpi=pmi2")),
        "{}",
        job.stderr
    );
    // No copy ran the benchmark on its own.
    assert!(!job.stdout.contains("# SQMR"), "{}", job.stdout);
}
