//! The proof that network selection is real: two hosts in network namespaces, joined by
//! a control link and two data links whose interfaces have different names on the two
//! hosts, a real MPI job between them, and the links' byte counters. The selected data
//! link must carry at least 90 % of the payload, every other data link less than 64 KiB
//! from either host.
//!
//! For every data path the MPI installation under test offers here (`XYLEM_TEST_MPI`;
//! [`paths`]), the jobs are: `sqmr --enable CIDR` (in-process, before MPI_Init), and under
//! `xylem net exec --enable <both hosts' names>` a plain C ping-pong (point-to-point), an
//! `MPI_Put` and an `MPI_Get` over a window of 4 MiB, and an `MPI_Allreduce` of 4 MiB, each
//! 16 times. The default path also runs `sqmr --disable`, and a selection that leaves no
//! network. Skips, saying so, where namespaces cannot be made (fails under `CI=true`).

use std::path::{Path, PathBuf};

use netns::{
    build_onesided, build_pingpong, delta, sqmr_proof_payload, Cluster, Counters, Installation,
    Job, CONTROL, DATA_A, DATA_B, SQMR_PROOF_ARGS,
};

fn xylem() -> PathBuf {
    let path = Path::new(env!("CARGO_BIN_EXE_sqmr")).with_file_name("xylem");
    assert!(
        path.exists(),
        "{} is missing: build the workspace (cargo test --workspace builds it)",
        path.display()
    );
    path
}

/// One data path of an MPI library: how the selection asks for it, what else the job
/// needs, and how to tell from the job's output that it was the one taken.
struct DataPath {
    /// Its name in the PROOF lines.
    name: &'static str,
    /// The qualifier appended to every item of the selection (`:ucx`), or "".
    qualifier: &'static str,
    /// Extra environment of the job.
    env: &'static [(&'static str, &'static str)],
    /// A line fragment the job prints (with `env`) when this path carried it.
    witness: Option<&'static str>,
}

/// Every data path each installation offers between two hosts on Ethernet here.
fn paths(mpi: Installation) -> Vec<DataPath> {
    let ob1 = DataPath {
        name: "ob1/tcp",
        qualifier: "",
        env: &[("OMPI_MCA_pml_base_verbose", "10")],
        witness: Some("select: component ob1 selected"),
    };
    let ompi_ucx = DataPath {
        name: "pml ucx",
        qualifier: ":ucx",
        env: &[("OMPI_MCA_pml_base_verbose", "10")],
        witness: Some("select: component ucx selected"),
    };
    match mpi {
        Installation::OpenMpi4 => vec![
            ob1,
            ompi_ucx,
            // Without Debian's site file (which happens to turn osc ucx off), osc ucx
            // once carried one-sided traffic over a link the selection had left out.
            DataPath {
                name: "ob1/tcp without Debian's site file",
                qualifier: "",
                env: &[
                    ("OMPI_MCA_pml_base_verbose", "10"),
                    ("OMPI_MCA_mca_base_param_files", "/dev/null"),
                ],
                witness: Some("select: component ob1 selected"),
            },
        ],
        Installation::OpenMpi5 => vec![
            ob1,
            ompi_ucx,
            DataPath {
                name: "cm/mtl ofi",
                qualifier: ":ofi",
                env: &[("OMPI_MCA_pml_base_verbose", "10")],
                witness: Some("select: component cm selected"),
            },
        ],
        Installation::Mpich4 => vec![DataPath {
            name: "ch4:ucx",
            qualifier: "",
            env: &[],
            witness: None,
        }],
        Installation::Mpich5 => vec![
            DataPath {
                name: "ch4:ucx",
                qualifier: "",
                env: &[],
                witness: None,
            },
            DataPath {
                name: "ch4:ofi (tcp)",
                qualifier: "",
                env: &[("MPIR_CVAR_CH4_NETMOD", "ofi")],
                witness: None,
            },
        ],
        Installation::IntelMpi => vec![DataPath {
            name: "ofi (tcp)",
            qualifier: "",
            env: &[("I_MPI_DEBUG", "5")],
            witness: Some("libfabric provider: tcp"),
        }],
    }
}

struct Outcome {
    job: Job,
    delta: Counters,
}

/// The JSON records the selection as data: the item, and for each of the two hosts (one
/// rank each) the data interface it selected (link A, by that host's name for it) and the
/// library's settings made for it.
fn assert_selection_recorded(doc: &serde_json::Value, item: &str) {
    let net = &doc["network"];
    assert_eq!(net["mode"], "enable", "{net}");
    assert_eq!(net["items"], serde_json::json!([item]), "{net}");
    let hosts = net["hosts"].as_array().expect("network.hosts");
    let names: Vec<&str> = hosts.iter().map(|h| h["host"].as_str().unwrap()).collect();
    assert_eq!(names, ["xyh1", "xyh2"], "{net}");
    // The link has another name on each host.
    for (h, name) in hosts.iter().zip([DATA_A.name, DATA_A.peer]) {
        assert_eq!(h["ranks"], 1, "{h}");
        let interfaces = h["interfaces"].as_array().unwrap();
        assert!(
            interfaces.len() == 1
                && interfaces[0]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("{name} ")),
            "{h}"
        );
        let settings = h["settings"].as_array().unwrap();
        assert!(!settings.is_empty(), "{h}");
        assert!(settings
            .iter()
            .all(|s| s["variable"].is_string() && s["value"].is_string()));
    }
    assert!(net["unmatched"].as_array().unwrap().is_empty(), "{net}");
    assert!(net["unreachable"].as_array().unwrap().is_empty(), "{net}");
}

fn measure(cluster: &Cluster, mpi: Installation, program: &[&str], path: &DataPath) -> Outcome {
    let before = cluster.counters();
    let job = cluster.launch(mpi, program, path.env);
    let after = cluster.counters();
    assert!(job.success(), "{} {program:?}: {job:#?}", path.name);
    if let Some(witness) = path.witness {
        assert!(
            job.stdout.contains(witness) || job.stderr.contains(witness),
            "{} {program:?}: the path did not say `{witness}`:\n{}\n{}",
            path.name,
            job.stdout,
            job.stderr
        );
    }
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

/// `list` with `qualifier` after every item.
fn qualified(list: &str, qualifier: &str) -> String {
    list.split(',')
        .map(|item| format!("{item}{qualifier}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn network_selection_moves_the_bytes_on_every_path() {
    let mpi = Installation::from_env();
    let Some(cluster) = netns::cluster_or_skip() else {
        return;
    };
    let sqmr = env!("CARGO_BIN_EXE_sqmr");
    let xylem = xylem();
    let xylem = xylem.to_str().unwrap();
    let pingpong = build_pingpong(mpi, cluster.dir());
    let pingpong = pingpong.to_str().unwrap();
    let onesided = build_onesided(mpi, cluster.dir());
    let onesided = onesided.to_str().unwrap();
    let ping_payload = 50u64 << 20;
    let onesided_payload = 16u64 * (4 << 20);
    let sqmr_bytes = sqmr_proof_payload();

    for path in paths(mpi) {
        let label = |what: &str| format!("{} {}: {what}", mpi.name(), path.name);

        // sqmr, CIDR, in-process.
        let cidr = qualified(&DATA_A.cidr(), path.qualifier);
        let json = cluster
            .dir()
            .join(format!("selection-{}.json", path.name.replace('/', "-")));
        let _ = std::fs::remove_file(&json);
        let mut args = vec![sqmr, "--enable", &cidr, "--json", json.to_str().unwrap()];
        args.extend(SQMR_PROOF_ARGS);
        let o = measure(&cluster, mpi, &args, &path);
        assert!(
            o.job.stdout.contains(&format!(
                "# network selection (rank 0's host): --enable {cidr}"
            )),
            "{}",
            o.job.stdout
        );
        assert_selection_recorded(&mpitest::read_document(&json), &cidr);
        assert_carried(
            &o,
            sqmr_bytes,
            &[DATA_A.name],
            &[DATA_B.name],
            &label(&format!("sqmr --enable {cidr}")),
        );

        // A plain MPI program under xylem net exec, by interface names that differ on
        // the two hosts.
        let names = qualified(&DATA_B.both(), path.qualifier);
        let o = measure(
            &cluster,
            mpi,
            &[xylem, "net", "exec", "--enable", &names, "--", pingpong],
            &path,
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
            &label(&format!("net exec --enable {names} -- pingpong")),
        );

        // One-sided traffic and a collective, on the other link.
        let names = qualified(&DATA_A.both(), path.qualifier);
        for mode in ["put", "get", "allreduce"] {
            let o = measure(
                &cluster,
                mpi,
                &[
                    xylem, "net", "exec", "--enable", &names, "--", onesided, mode,
                ],
                &path,
            );
            let said = format!("payload {mode} {onesided_payload}");
            assert!(o.job.stdout.contains(&said), "{said}: {}", o.job.stdout);
            assert_carried(
                &o,
                onesided_payload,
                &[DATA_A.name],
                &[DATA_B.name],
                &label(&format!("net exec --enable {names} -- onesided {mode}")),
            );
        }
    }

    let default = &paths(mpi)[0];
    // sqmr, interface names, --disable: data A and the control link off leaves data B.
    let disable = format!("{},{}", DATA_A.both(), CONTROL.both());
    let mut args = vec![sqmr, "--disable", &disable];
    args.extend(SQMR_PROOF_ARGS);
    let o = measure(&cluster, mpi, &args, default);
    assert_carried(
        &o,
        sqmr_bytes,
        &[DATA_B.name],
        &[DATA_A.name],
        &format!("{} {}: sqmr --disable {disable}", mpi.name(), default.name),
    );

    // A selection that leaves the hosts no network: every rank on both hosts stops
    // together with one clear message, before the benchmark starts; no hang.
    let mut args = vec![sqmr, "--disable", "ethernet"];
    args.extend(SQMR_PROOF_ARGS);
    let job = cluster.launch(mpi, &args, &[]);
    netns::assert_exit_code(mpi, &job, 2);
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

    // Selections that cannot reach each other: host 1's data A beside host 2's data B.
    // Where the library starts anyway (the kernel routes by destination, so traffic
    // would leave outside the selection), the ranks' check after MPI_Init gives one
    // warning naming both hosts, and with --strict every rank stops with exit code 2.
    // A library that checks reachability itself (UCX under MPICH 5: "no route") refuses
    // in MPI_Init; either way no benchmark row is printed under --strict.
    let crossed = format!("{},{}", DATA_A.name, DATA_B.peer);
    let crossed_json = cluster.dir().join("crossed.json");
    let _ = std::fs::remove_file(&crossed_json);
    let mut args = vec![
        sqmr,
        "--enable",
        &crossed,
        "--max_msgsize",
        "8",
        "--num_iters",
        "5",
        "--json",
        crossed_json.to_str().unwrap(),
    ];
    let job = cluster.launch(mpi, &args, &[]);
    let warnings: Vec<&str> = job
        .stderr
        .lines()
        .filter(|l| l.starts_with("WARNING network selection") && l.contains("share no"))
        .collect();
    let refused_by_library = !job.success() && job.stderr.contains("MPI_Init");
    if refused_by_library {
        // Each rank named its host's choice on its way out of MPI_Init.
        for (host, iface) in [("xyh1", DATA_A.name), ("xyh2", DATA_B.peer)] {
            let said = format!(
                "sqmr: MPI_Init did not complete on host {host} under --enable {crossed}, which selected there: {iface} "
            );
            assert!(job.stderr.contains(&said), "{said}\n{}", job.stderr);
        }
    }
    if !refused_by_library {
        assert!(job.success(), "{job:#?}");
        assert_eq!(warnings.len(), 1, "{}", job.stderr);
        assert!(
            warnings[0].contains("xyh1") && warnings[0].contains("xyh2"),
            "{}",
            warnings[0]
        );
        // The JSON has the pair too, and each host's own choice.
        let doc = mpitest::read_document(&crossed_json);
        let net = &doc["network"];
        assert_eq!(net["unreachable"].as_array().unwrap().len(), 1, "{net}");
        assert_eq!(net["hosts"].as_array().unwrap().len(), 2, "{net}");
        args.truncate(args.len() - 2);
        args.push("--strict");
        let job = cluster.launch(mpi, &args, &[]);
        netns::assert_exit_code(mpi, &job, 2);
        assert!(
            !job.stdout.lines().any(|l| !l.starts_with('#')),
            "{}",
            job.stdout
        );
    }
    eprintln!(
        "CROSSED {} --enable {crossed}: {}",
        mpi.name(),
        if refused_by_library {
            "refused by the library in MPI_Init".to_string()
        } else {
            warnings[0].to_string()
        }
    );

    // Before any job: `xylem net check` through the same launcher names both hosts'
    // choices and the pair they cut apart (exit 3), whatever the library would do; the
    // straight selection passes (exit 0).
    let net_check = |list: &str| {
        let mut words: Vec<String> = [xylem, "net", "check", "--enable", list, "--"]
            .map(String::from)
            .to_vec();
        words.extend(cluster.launcher_words(mpi));
        cluster.run_on_first_host(mpi, &words, 60)
    };
    let job = net_check(&crossed);
    assert_eq!(job.code, Some(3), "{job:#?}");
    assert!(
        job.stdout.contains("host xyh1: data0 ")
            && job.stdout.contains("host xyh2: ens1f1 ")
            && job.stdout.contains("share no selected network"),
        "{job:#?}"
    );
    assert!(
        job.stderr
            .contains("the selection partitions the hosts: 1 pair of 2 hosts"),
        "{job:#?}"
    );
    eprintln!(
        "NET CHECK {} --enable {crossed}: {}",
        mpi.name(),
        job.stdout.trim().replace('\n', " | ")
    );
    let straight = format!("{},{}", DATA_A.name, DATA_A.peer);
    let job = net_check(&straight);
    assert_eq!(job.code, Some(0), "{job:#?}");

    // A human name: on these hosts every link is virtual Ethernet, so `ethernet` names all
    // three, and together they carry the payload.
    let o = measure(
        &cluster,
        mpi,
        &[xylem, "net", "exec", "--enable", "ethernet", "--", pingpong],
        default,
    );
    assert_carried(
        &o,
        ping_payload,
        &[DATA_A.name, DATA_B.name, CONTROL.name],
        &[],
        &format!(
            "{} {}: net exec --enable ethernet",
            mpi.name(),
            default.name
        ),
    );
}
