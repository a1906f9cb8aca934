//! `sqmr --scan` on hosts that share one switch (netns::switch): a host whose cable is
//! throttled is flagged alone (at 2 Mbit/s within the scan's time bound), a host starved
//! of CPU is flagged and not cleared by its re-measurement, a throttled path between two
//! hosts that are fine with the others is reported as a link, and with nothing throttled
//! nothing is flagged; healthy scans under MPICH 4 flag nothing. On one host the scan is
//! refused, naming the hosts.

mod common;

use std::path::Path;

use netns::switch::{fabric_or_skip, Fabric};
use netns::{Installation, Job};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_sqmr");

/// The throttle: far below what the veths carry here (gigabytes per second), far above
/// what the small messages need.
const THROTTLE_MBIT: u32 = 100;

/// The share of a core a CPU-starved host's rank gets.
const STARVED_PERCENT: u32 = 10;

/// A host too slow for one window of the bandwidth measurement in its time.
const CRAWL_MBIT: u32 = 2;

/// The hosts share this machine's two cores: ranks waiting for a message give theirs up
/// (Open MPI), so that two ranks that share a core do not spin through each other's time.
const SHARED_CORES: &[(&str, &str)] = &[("OMPI_MCA_mpi_yield_when_idle", "1")];

fn scan(fabric: &Fabric, per_host: usize, name: &str, extra: &[&str]) -> (Job, Value) {
    let json = fabric.dir().join(format!("{name}.json"));
    let mut args = vec![BIN, "--scan", "--json", json.to_str().unwrap()];
    args.extend_from_slice(extra);
    let job = fabric.launch(Installation::from_env(), per_host, &args, SHARED_CORES, 240);
    assert!(!job.timed_out, "{name}: {job:#?}");
    eprintln!("{name}:\n{}", job.stdout);
    let doc = read(&json, &job);
    // For the analysis crate's fixtures: the documents, kept where this names.
    if let Some(keep) = std::env::var_os("XYLEM_KEEP_SCAN_JSON") {
        let to = Path::new(&keep).join(format!("{name}.json"));
        std::fs::copy(&json, &to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    }
    (job, doc)
}

fn read(path: &Path, job: &Job) -> Value {
    if !path.exists() {
        panic!("{}: no document\n{job:#?}", path.display());
    }
    mpitest::read_document(path)
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// The line of the table that names `host`.
fn line_of<'a>(stdout: &'a str, host: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(host))
        .unwrap_or_else(|| panic!("no line for {host} in\n{stdout}"))
}

/// The scan ended with exit 4, flagging `host` as the one slow node.
fn assert_flagged_node(job: &Job, doc: &Value, host: &str) {
    netns::assert_exit_code(Installation::from_env(), job, 4);
    assert_eq!(
        strings(&doc["scan"]["flagged_nodes"]),
        vec![host.to_string()],
        "{doc}"
    );
}

/// The fabric for a scan test, under the installation whose waiting ranks can be told
/// to give up their core ([`SHARED_CORES`]) and whose launcher passes a rank's exit code on
/// across the namespace hosts; `None` after saying why not.
fn fabric(n: usize) -> Option<Fabric> {
    let mpi = Installation::from_env();
    if mpi != Installation::OpenMpi4 {
        eprintln!(
            "NOTE: the fabric scan tests run under Open MPI 4: the hydra libraries' ranks poll \
             for messages without yielding, and on this machine's two cores a pair whose \
             ranks share a core measures a fraction of the others; Open MPI 5's prterun \
             ended by a signal (no exit code) after a rank exited 4 across these hosts \
             (now {})",
            mpi.name()
        );
        return None;
    }
    fabric_or_skip(n)
}

#[test]
fn a_throttled_host_is_flagged_alone_and_nothing_is_flagged_without_it() {
    let Some(fabric) = fabric(4) else {
        return;
    };
    let hosts = fabric.hosts().to_vec();

    // Each round (two measurements of 1.5 s, and the barriers) lasts longer than the stall
    // timeout: a rank sitting out a round, or whose pair finished first, is waiting for
    // the round, not stalled.
    let (job, doc) = scan(
        &fabric,
        1,
        "healthy",
        &["--scan-time", "1.5", "--stall-timeout", "2"],
    );
    assert_eq!(job.code, Some(0), "{job:#?}");
    assert!(!job.stderr.contains("STALL"), "{}", job.stderr);
    assert!(
        job.elapsed > std::time::Duration::from_secs(3 * 3),
        "three rounds of more than 3 s each: {job:#?}"
    );
    assert_eq!(doc["complete"], true);
    assert_eq!(doc["mode"], "scan");
    let nodes = doc["scan"]["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 4, "{doc}");
    assert!(
        nodes
            .iter()
            .all(|n| n["flagged"] == false && n["partners"] == 3),
        "{doc}"
    );
    assert_eq!(
        doc["scan"]["pairs"].as_array().unwrap().len(),
        6,
        "every pair once: {doc}"
    );
    assert!(
        doc["scan"]["flagged_links"].as_array().unwrap().is_empty(),
        "{doc}"
    );
    assert!(
        job.stdout.contains("# scan: no node or link flagged"),
        "{}",
        job.stdout
    );
    assert!(!job.stdout.contains("SLOW ("), "{}", job.stdout);

    fabric.throttle_host(2, THROTTLE_MBIT).unwrap();
    let (job, doc) = scan(&fabric, 1, "throttled", &[]);
    assert_flagged_node(&job, &doc, &hosts[2]);
    assert!(
        doc["scan"]["flagged_links"].as_array().unwrap().is_empty(),
        "{doc}"
    );
    let slow = line_of(&job.stdout, &hosts[2]);
    assert!(
        slow.contains("SLOW (") && slow.contains("bandwidth"),
        "{}",
        job.stdout
    );
    for (k, host) in hosts.iter().enumerate().filter(|(k, _)| *k != 2) {
        assert!(
            !line_of(&job.stdout, host).contains("SLOW"),
            "{k}: {}",
            job.stdout
        );
    }
    let ratio = doc["scan"]["nodes"][2]["bandwidth_ratio"].as_f64().unwrap();
    assert!(ratio < 0.5, "{doc}");
    // Its pairs were measured again before it was flagged.
    let remeasured = doc["scan"]["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| !p["remeasured"].is_null())
        .count();
    assert!(remeasured >= 3, "{doc}");

    // The same host at 2 Mbit/s: one window of 4 x 1 MiB each way would take 17 s, twice
    // per measurement, in each of its 3 pairs and their re-measurements (over two minutes
    // before the probe). Each of those measurements is now the 64 KiB probe, and the scan
    // ends within a few times its planned 3 s of measurements.
    fabric.throttle_host(2, CRAWL_MBIT).unwrap();
    let (job, doc) = scan(&fabric, 1, "crawling", &[]);
    assert_flagged_node(&job, &doc, &hosts[2]);
    let planned = job
        .stdout
        .lines()
        .find(|l| l.starts_with("# planned: 3.0 s of measurements (3 rounds of 2 x 0.50 s)"));
    assert!(planned.is_some(), "{}", job.stdout);
    let wall = doc["scan"]["wall_s"].as_f64().unwrap();
    assert!(
        wall < 6.0 * 3.0,
        "the scan took {wall} s for 3 s planned and as much again re-measured: {doc}"
    );
    let ratio = doc["scan"]["nodes"][2]["bandwidth_ratio"].as_f64().unwrap();
    assert!(ratio < 0.1, "2 Mbit/s against gigabytes per second: {doc}");
    // The document says which bandwidths are the probe's: every measurement of the
    // crawling host's pairs (a healthy pair's probe may be slowed past the window's
    // time by a busy core, so the others are not asserted).
    for p in doc["scan"]["pairs"].as_array().unwrap() {
        if p["a"] == hosts[2].as_str() || p["b"] == hosts[2].as_str() {
            assert_eq!(p["first"]["probed"], 1, "{p}");
        }
    }
}

#[test]
fn a_throttled_path_between_two_hosts_is_a_slow_link() {
    let Some(fabric) = fabric(4) else {
        return;
    };
    let mpi = Installation::from_env();
    let hosts = fabric.hosts().to_vec();

    // First, host 1 starved of CPU (its rank held to a tenth of a core, as a node whose
    // cores other work took): flagged, and not cleared by its re-measurement, whose rounds
    // keep every other node busy as the first rounds did.
    let starved = match netns::cpu::Starved::start(&hosts[1], "sqmr", STARVED_PERCENT) {
        Ok(s) => s,
        Err(why) => {
            mpitest::unavailable(&why);
            return;
        }
    };
    let (job, doc) = scan(&fabric, 1, "starved", &[]);
    assert_eq!(starved.finish(), 1, "host 1's rank was held: {job:#?}");
    assert_flagged_node(&job, &doc, &hosts[1]);
    assert!(
        line_of(&job.stdout, &hosts[1]).contains("SLOW ("),
        "{}",
        job.stdout
    );
    fabric.throttle_between(0, 3, THROTTLE_MBIT).unwrap();
    let (job, doc) = scan(&fabric, 1, "link", &[]);
    netns::assert_exit_code(mpi, &job, 4);
    assert!(
        doc["scan"]["flagged_nodes"].as_array().unwrap().is_empty(),
        "{doc}"
    );
    let links: Vec<Vec<String>> = doc["scan"]["flagged_links"]
        .as_array()
        .unwrap()
        .iter()
        .map(strings)
        .collect();
    assert_eq!(
        links,
        vec![vec![hosts[0].clone(), hosts[3].clone()]],
        "{doc}"
    );
    let link = job
        .stdout
        .lines()
        .find(|l| l.contains("link ") && l.contains("SLOW (link)"))
        .unwrap_or_else(|| panic!("no link line in\n{}", job.stdout));
    assert!(
        link.contains(&hosts[0]) && link.contains(&hosts[3]),
        "{link}"
    );
}

#[test]
fn a_scan_on_one_host_is_refused_naming_it() {
    let job = common::sqmr(2, &["--scan"]);
    assert_eq!(job.code, Some(2), "{job:#?}");
    assert!(
        job.stderr.contains("--scan")
            && job.stderr.contains("3 or more hosts")
            && job.stderr.contains("2 ranks"),
        "{}",
        job.stderr
    );
    assert!(job.stdout.is_empty(), "{}", job.stdout);
}

/// The time of a scan per node count (`scripts/bench-scan.sh`; not part of `make test`):
/// healthy fabrics of `SCAN_NODES` hosts (default 4 8 16), one rank each, a line per run
/// appended to `bench/out/scan.txt`.
#[test]
#[ignore = "a benchmark: scripts/bench-scan.sh"]
fn scan_time_per_node_count() {
    let counts: Vec<usize> = std::env::var("SCAN_NODES")
        .unwrap_or_else(|_| "4 8 16".into())
        .split_whitespace()
        .map(|n| n.parse().expect("SCAN_NODES: node counts"))
        .collect();
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/out/scan.txt");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    for n in counts {
        let Some(fabric) = fabric(n) else {
            return;
        };
        let (job, doc) = scan(&fabric, 1, &format!("bench-{n}"), &[]);
        assert_eq!(job.code, Some(0), "{job:#?}");
        let scan = &doc["scan"];
        let line = format!(
            "nodes {n} ranks {n} rounds {} pairs {} remeasured {} scan_s {:.2} job_s {:.2} flagged {} ({})\n",
            scan["settings"]["rounds"],
            scan["pairs"].as_array().unwrap().len(),
            scan["pairs"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| !p["remeasured"].is_null())
                .count(),
            scan["wall_s"].as_f64().unwrap(),
            job.elapsed.as_secs_f64(),
            scan["flagged_nodes"].as_array().unwrap().len()
                + scan["flagged_links"].as_array().unwrap().len(),
            Installation::from_env().name(),
        );
        eprint!("{line}");
        use std::io::Write;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&out)
            .and_then(|mut f| f.write_all(line.as_bytes()))
            .unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    }
}

/// Healthy scans under MPICH 4 (hydra) flag nothing. On this machine's two cores the scan
/// runs on 3 hosts: a round then has one pair, whose two ranks poll without yielding (as
/// hydra's ranks do) each on a core of its own, and the host that sits out waits without
/// spinning. On 4 hosts two pairs of polling ranks share the two cores, and whichever pair
/// the scheduler crowds measures a fraction of the others (here: 3 and 4 false alarms in
/// two series of 9 healthy scans) — the machine, not the fabric. MPICH 4.0.2's
/// `MPI_Finalize` hangs across these hosts now and then after the verdict (its own, as
/// mpiGraph's does): bounded by the stall timeout, after which hydra reports what it makes
/// of ranks that leave while it waits for them (255 or 1); the verdict is the document's.
#[test]
fn healthy_scans_under_mpich_flag_nothing() {
    let mpi = Installation::from_env();
    if mpi != Installation::Mpich4 {
        eprintln!(
            "NOTE: the healthy-scan series runs under MPICH 4 (hydra's polling ranks); now {}",
            mpi.name()
        );
        return;
    }
    let Some(fabric) = fabric_or_skip(3) else {
        return;
    };
    for k in 0..3 {
        let name = format!("healthy-{k}");
        let json = fabric.dir().join(format!("{name}.json"));
        let args = [
            BIN,
            "--scan",
            "--stall-timeout",
            "5",
            "--json",
            json.to_str().unwrap(),
        ];
        let job = fabric.launch(mpi, 1, &args, &[], 120);
        assert!(!job.timed_out, "{name}: {job:#?}");
        let doc = read(&json, &job);
        assert_eq!(doc["complete"], true, "{name}: {doc}");
        let flagged = |what: &str| doc["scan"][what].as_array().unwrap().len();
        assert_eq!(
            (flagged("flagged_nodes"), flagged("flagged_links")),
            (0, 0),
            "{name}: {}",
            job.stdout
        );
        assert!(
            job.stdout
                .contains("# scan: no node or link flagged (3 nodes, all 3 pairs"),
            "{name}: {}",
            job.stdout
        );
        // Exit 4 is the one code a healthy scan must never give.
        assert_ne!(job.code, Some(4), "{name}: {job:#?}");
    }
}
