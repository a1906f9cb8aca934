//! The proof that network selection is real: two hosts in network namespaces, joined by
//! a control link and two data links named alike on both, a real MPI job between them,
//! and the links' byte counters. The selected data link must carry at least 90 % of the
//! payload, every other data link less than 64 KiB.
//!
//! Jobs: `sqmr --enable/--disable` (in-process, before MPI_Init) and a plain C MPI
//! program (50 × 1 MiB each way) under `xylem net exec`. Both MPI libraries (the one
//! `XYLEM_MPI` names). Skips, saying so, where namespaces cannot be made.

use std::path::{Path, PathBuf};

use netns::{
    build_pingpong, delta, sqmr_proof_payload, Cluster, Counters, Flavour, Job, CONTROL, DATA_A,
    DATA_B, SQMR_PROOF_ARGS,
};

fn cluster() -> Option<Cluster> {
    match Cluster::create() {
        Ok(c) => Some(c),
        Err(why) => {
            eprintln!("SKIPPED: network namespaces cannot be made here: {}", why.0);
            None
        }
    }
}

fn xylem() -> PathBuf {
    let path = Path::new(env!("CARGO_BIN_EXE_sqmr")).with_file_name("xylem");
    assert!(
        path.exists(),
        "{} is missing: build the workspace (cargo test --workspace builds it)",
        path.display()
    );
    path
}

struct Outcome {
    job: Job,
    delta: Counters,
}

fn measure(cluster: &Cluster, flavour: Flavour, program: &[&str]) -> Outcome {
    let before = cluster.counters();
    let job = cluster.launch(flavour, program, &[]);
    let after = cluster.counters();
    assert!(job.success(), "{program:?}: {job:#?}");
    Outcome {
        job,
        delta: delta(&before, &after),
    }
}

fn assert_carried(outcome: &Outcome, payload: u64, selected: &[&str], others: &[&str], what: &str) {
    netns::assert_carried(
        &outcome.delta,
        payload,
        selected,
        others,
        what,
        &outcome.job.stderr,
    );
}

#[test]
fn network_selection_moves_the_bytes() {
    let flavour = Flavour::from_env();
    let Some(cluster) = cluster() else { return };
    let sqmr = env!("CARGO_BIN_EXE_sqmr");
    let xylem = xylem();
    let xylem = xylem.to_str().unwrap();
    let pingpong = build_pingpong(flavour, cluster.dir());
    let pingpong = pingpong.to_str().unwrap();
    let ping_payload = 50u64 << 20;
    let sqmr_bytes = sqmr_proof_payload();

    // sqmr, CIDR, in-process.
    let mut args = vec![sqmr, "--enable", "10.20.0.0/24"];
    args.extend(SQMR_PROOF_ARGS);
    let o = measure(&cluster, flavour, &args);
    assert!(
        o.job
            .stdout
            .contains("# network selection (rank 0's host): --enable 10.20.0.0/24"),
        "{}",
        o.job.stdout
    );
    assert_carried(
        &o,
        sqmr_bytes,
        &[DATA_A.name],
        &[DATA_B.name],
        "sqmr --enable 10.20.0.0/24",
    );

    // sqmr, interface name, --disable: data0 and the control link off leaves data1.
    let mut args = vec![sqmr, "--disable", "data0,mgmt0"];
    args.extend(SQMR_PROOF_ARGS);
    let o = measure(&cluster, flavour, &args);
    assert_carried(
        &o,
        sqmr_bytes,
        &[DATA_B.name],
        &[DATA_A.name],
        "sqmr --disable data0,mgmt0",
    );

    // A plain MPI program under xylem net exec, interface name.
    let o = measure(
        &cluster,
        flavour,
        &[xylem, "net", "exec", "--enable", "data1", "--", pingpong],
    );
    assert!(
        o.job.stdout.contains("payload_each_way 52428800"),
        "{}",
        o.job.stdout
    );
    assert_carried(
        &o,
        ping_payload,
        &[DATA_B.name],
        &[DATA_A.name],
        "net exec --enable data1",
    );

    // CIDR through net exec, the other link.
    let o = measure(
        &cluster,
        flavour,
        &[
            xylem,
            "net",
            "exec",
            "--enable",
            "10.20.0.0/24",
            "--",
            pingpong,
        ],
    );
    assert_carried(
        &o,
        ping_payload,
        &[DATA_A.name],
        &[DATA_B.name],
        "net exec --enable 10.20.0.0/24",
    );

    // A selection that leaves the hosts no network: every rank on both hosts stops
    // together with one clear message, before the benchmark starts; no hang.
    let mut args = vec![sqmr, "--disable", "ethernet"];
    args.extend(SQMR_PROOF_ARGS);
    let job = cluster.launch(flavour, &args, &[]);
    assert_eq!(job.code, Some(2), "{job:#?}");
    let errors: Vec<&str> = job
        .stderr
        .lines()
        .filter(|l| l.starts_with("ERROR --disable eth"))
        .collect();
    assert_eq!(errors.len(), 1, "{}", job.stderr);
    assert!(errors[0].contains("no network"), "{}", errors[0]);
    assert!(
        !job.stdout.lines().any(|l| !l.starts_with('#')),
        "{}",
        job.stdout
    );

    // A human name: on these hosts every link is virtual Ethernet, so `ethernet` names all
    // three, and together they carry the payload.
    let o = measure(
        &cluster,
        flavour,
        &[xylem, "net", "exec", "--enable", "ethernet", "--", pingpong],
    );
    assert_carried(
        &o,
        ping_payload,
        &[DATA_A.name, DATA_B.name, CONTROL.name],
        &[],
        "net exec --enable ethernet",
    );
}

#[test]
fn a_qualifier_chooses_the_path() {
    if Flavour::from_env() != Flavour::OpenMpi {
        eprintln!("SKIPPED: qualifiers choose between Open MPI's paths (XYLEM_MPI=mpich)");
        return;
    }
    let Some(cluster) = cluster() else { return };
    let xylem = xylem();
    let xylem = xylem.to_str().unwrap();
    let pingpong = build_pingpong(Flavour::OpenMpi, cluster.dir());
    let pingpong = pingpong.to_str().unwrap();
    let payload = 50u64 << 20;
    for (list, path, link, other) in [
        ("data0:tcp", "ob1", DATA_A.name, DATA_B.name),
        ("data1:ucx", "ucx", DATA_B.name, DATA_A.name),
    ] {
        let before = cluster.counters();
        let job = cluster.launch(
            Flavour::OpenMpi,
            &[xylem, "net", "exec", "--enable", list, "--", pingpong],
            &[("OMPI_MCA_pml_base_verbose", "10")],
        );
        let after = cluster.counters();
        assert!(job.success(), "{list}: {job:#?}");
        let selected = format!("select: component {path} selected");
        assert!(
            job.stdout.contains(&selected) || job.stderr.contains(&selected),
            "{list}: the {path} path was not the one taken:\n{}\n{}",
            job.stdout,
            job.stderr
        );
        let o = Outcome {
            job,
            delta: delta(&before, &after),
        };
        assert_carried(
            &o,
            payload,
            &[link],
            &[other],
            &format!("net exec --enable {list}"),
        );
    }
}
