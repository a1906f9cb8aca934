//! xylem's ReFrame checks (`reframe/checks/xylem_checks.py`), run by ReFrame itself on
//! both systems of `reframe/settings.py`: `xylem-local` (this machine, each MPI's own
//! launcher) and `xylem-slurm` (a local two-node Slurm of this crate: `sbatch`, ReFrame's
//! `squeue` scheduler, `srun`). Each run goes through `scripts/reframe-run.sh` (small
//! sizes) for the MPI installation under test (`XYLEM_TEST_MPI`), with the binaries
//! beside this test, and must pass every check and append one record per check to the
//! performance log, each variable a positive number in its unit. A third test makes two
//! checks fail on purpose (inter-node figures asked of one machine, a network that does
//! not exist), so that a check that cannot fail would be noticed.
//!
//! `make test` runs them for openmpi4 and mpich4 (`XYLEM_REFRAME_MPIS` lists others);
//! `make reframe` runs them with release binaries (`XYLEM_BIN_DIR`) and keeps the
//! performance log under `results/reframe/` (`XYLEM_REFRAME_RESULTS`). ReFrame comes from
//! `.reframe/` (scripts/install-deps.sh); where it is missing the tests skip, and under
//! `CI=true` fail.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use slurmtest::{cluster_or_skip, sibling_binary, Family, Installation, Job};

/// A whole ReFrame session ends within this.
const LIMIT: Duration = Duration::from_secs(900);

/// The MPI installations the tests run ReFrame for unless `XYLEM_REFRAME_MPIS` says.
const DEFAULT_MPIS: &str = "openmpi4 mpich4";

/// Every check with its performance variables and their units.
const CHECKS: [(&str, &[(&str, &str)]); 3] = [
    ("sqmr_check", SQMR_VARIABLES),
    ("sqmr_netsel_check", SQMR_VARIABLES),
    (
        "b_eff_io_check",
        &[
            ("b_eff_io", "MB/s"),
            ("b_eff_io_2_1", "MB/s"),
            ("write", "MB/s"),
            ("rewrite", "MB/s"),
            ("read", "MB/s"),
        ],
    ),
];
const SQMR_VARIABLES: &[(&str, &str)] = &[
    ("rate_0B", "msg/s"),
    ("rate_8B", "msg/s"),
    ("peak_bw", "MiB/s"),
];

fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the checkout of this crate")
}

/// Where one ReFrame session writes: its stage/output folders and report, and the
/// performance log folder (shared by the sessions of `make reframe`, which append).
struct Session {
    out: PathBuf,
    perflogs: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

impl Session {
    fn new(system: &str, mpi: Installation, keep: bool) -> Session {
        match std::env::var_os("XYLEM_REFRAME_RESULTS").filter(|_| keep) {
            Some(results) => {
                let results = PathBuf::from(results);
                let stamp = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap()
                    .as_secs();
                Session {
                    out: results.join(format!("{stamp}-{system}-{}", mpi.name())),
                    perflogs: results.join("perflogs"),
                    _temp: None,
                }
            }
            None => {
                let temp = tempfile::Builder::new()
                    .prefix("xylem-reframe-")
                    .tempdir()
                    .expect("a temporary directory");
                Session {
                    out: temp.path().join("out"),
                    perflogs: temp.path().join("perflogs"),
                    _temp: Some(temp),
                }
            }
        }
    }

    fn perflog(&self, system: &str, partition: &str, check: &str) -> PathBuf {
        self.perflogs
            .join(system)
            .join(partition)
            .join(format!("{check}.log"))
    }
}

/// The installation under test, when ReFrame is to run for it and is installed.
fn installation() -> Option<Installation> {
    let mpi = Installation::from_env();
    let wanted = std::env::var("XYLEM_REFRAME_MPIS").unwrap_or_else(|_| DEFAULT_MPIS.into());
    if !wanted.split_whitespace().any(|name| name == mpi.name()) {
        slurmtest::skip(&format!(
            "the ReFrame checks run for {wanted} (XYLEM_REFRAME_MPIS), not {}",
            mpi.name()
        ));
        return None;
    }
    let reframe = checkout().join(".reframe/bin/reframe");
    if !reframe.is_file() {
        mpitest::unavailable(&format!(
            "{} is missing (scripts/install-deps.sh installs ReFrame)",
            reframe.display()
        ));
        return None;
    }
    Some(mpi)
}

/// The directory of the binaries under test: `XYLEM_BIN_DIR`, or the one beside this test.
fn bin_dir() -> String {
    if let Ok(dir) = std::env::var("XYLEM_BIN_DIR") {
        return dir;
    }
    sibling_binary("b_eff_io");
    let sqmr = sibling_binary("sqmr");
    sqmr.parent().unwrap().display().to_string()
}

/// `scripts/reframe-run.sh SYSTEM OUT MPI -- extra…` as argv, and its environment.
fn reframe_argv(
    system: &str,
    session: &Session,
    mpi: Installation,
    extra: &[&str],
) -> (Vec<String>, Vec<(&'static str, String)>) {
    let mut argv = vec![
        checkout()
            .join("scripts/reframe-run.sh")
            .display()
            .to_string(),
        system.to_string(),
        session.out.display().to_string(),
        mpi.name().to_string(),
        "--".to_string(),
    ];
    argv.extend(extra.iter().map(|s| s.to_string()));
    let env = vec![
        ("XYLEM_BIN_DIR", bin_dir()),
        ("XYLEM_PERFLOG_DIR", session.perflogs.display().to_string()),
    ];
    (argv, env)
}

/// Runs ReFrame on `xylem-local`, holding the job lock (its jobs are MPI jobs).
fn run_local(session: &Session, mpi: Installation, extra: &[&str]) -> Job {
    run_local_with(session, mpi, extra, &[])
}

/// [`run_local`] with more environment for ReFrame (and so for `reframe/settings.py`).
fn run_local_with(
    session: &Session,
    mpi: Installation,
    extra: &[&str],
    more_env: &[(&'static str, &str)],
) -> Job {
    let (argv, mut env) = reframe_argv("xylem-local", session, mpi, extra);
    env.extend(more_env.iter().map(|(k, v)| (*k, v.to_string())));
    let _lock = mpitest::JobLock::acquire();
    let mut command = Command::new("timeout");
    command
        .args(["-k", "5"])
        .arg(LIMIT.as_secs().to_string())
        .args(&argv)
        .envs(env);
    let job = mpitest::run(command, Path::new(&argv[0]));
    assert!(!job.timed_out, "ReFrame hit the time limit: {}", show(&job));
    job
}

fn show(job: &Job) -> String {
    format!(
        "exit {:?} after {:.0} s\n--- stdout\n{}\n--- stderr\n{}",
        job.code,
        job.elapsed.as_secs_f64(),
        job.stdout,
        job.stderr
    )
}

/// The test cases of ReFrame's run report: (check name, (result, fail reason)).
fn report(session: &Session) -> BTreeMap<String, (String, String)> {
    let path = session.out.join("report.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("no ReFrame report {}: {e}", path.display()));
    let doc: serde_json::Value = serde_json::from_str(&text).expect("the report is JSON");
    doc["runs"][0]["testcases"]
        .as_array()
        .expect("the report lists its test cases")
        .iter()
        .map(|t| {
            let s = |key: &str| t[key].as_str().unwrap_or_default().to_string();
            (s("name"), (s("result"), s("fail_reason")))
        })
        .collect()
}

/// The data lines of a performance log (its header first), as maps column → value.
fn perflog_records(path: &Path) -> Vec<BTreeMap<String, String>> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut header: Vec<String> = Vec::new();
    let mut records = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        let fields: Vec<String> = line.split('|').map(str::to_string).collect();
        if fields.iter().any(|f| f == "job_completion_time") {
            header = fields;
            continue;
        }
        assert!(
            !header.is_empty(),
            "{}: a record before the header",
            path.display()
        );
        records.push(header.iter().cloned().zip(fields).collect());
    }
    records
}

/// Runs every check on `system`/`partition` with `run`, and checks the outcome: ReFrame
/// passed, the report has each check passed, and each perflog got one new record of
/// this environment with every variable positive in its unit.
fn passes_every_check(
    system: &str,
    partition: &str,
    mpi: Installation,
    session: &Session,
    run: impl FnOnce() -> Job,
) {
    let before: Vec<usize> = CHECKS
        .iter()
        .map(|(check, _)| perflog_records(&session.perflog(system, partition, check)).len())
        .collect();
    let job = run();
    eprintln!(
        "{system}, {}: {:.0} s",
        mpi.name(),
        job.elapsed.as_secs_f64()
    );
    assert!(job.success(), "ReFrame failed: {}", show(&job));
    let cases = report(session);
    assert_eq!(cases.len(), CHECKS.len(), "{cases:?}");
    for ((check, variables), before) in CHECKS.iter().zip(before) {
        assert_eq!(
            cases.get(*check).map(|(r, _)| r.as_str()),
            Some("pass"),
            "{check}: {cases:?}"
        );
        let path = session.perflog(system, partition, check);
        let records = perflog_records(&path);
        assert_eq!(
            records.len(),
            before + 1,
            "{}: one new record expected",
            path.display()
        );
        let record = records.last().unwrap();
        assert_eq!(record["result"], "pass", "{record:?}");
        assert_eq!(record["environ"], mpi.name(), "{record:?}");
        assert_eq!(record["system"], system, "{record:?}");
        assert_eq!(record["partition"], partition, "{record:?}");
        for (variable, unit) in *variables {
            let value: f64 = record[&format!("{variable}_value")]
                .parse()
                .unwrap_or_else(|e| panic!("{check} {variable}: {e}: {record:?}"));
            assert!(
                value.is_finite() && value > 0.0,
                "{check} {variable} = {value}"
            );
            assert_eq!(record[&format!("{variable}_unit")], *unit, "{record:?}");
            assert_eq!(record[&format!("{variable}_result")], "pass", "{record:?}");
        }
    }
}

#[test]
fn reframe_checks_pass_on_the_local_system() {
    let Some(mpi) = installation() else {
        return;
    };
    let partition = match mpi.family() {
        Family::OpenMpi => "mpirun",
        Family::Hydra => "hydra",
    };
    // The binaries from PATH, as a module puts them there: the environments name no
    // xylem_bin (the Slurm test below runs with it).
    let session = Session::new("xylem-local", mpi, true);
    passes_every_check("xylem-local", partition, mpi, &session, || {
        run_local_with(&session, mpi, &[], &[("XYLEM_BINARIES_ON_PATH", "1")])
    });
    let scripts = job_scripts(&session.out);
    assert_eq!(scripts.len(), CHECKS.len(), "{scripts:?}");
    for script in scripts {
        let text = std::fs::read_to_string(&script).unwrap();
        assert!(
            text.lines()
                .any(|l| l.contains(" sqmr ") || l.contains(" b_eff_io ")),
            "{}: the program by its bare name:\n{text}",
            script.display()
        );
        for program in ["sqmr", "b_eff_io"] {
            let full = format!("{}/{program}", bin_dir());
            assert!(
                !text.contains(&full),
                "{}: {full}:\n{text}",
                script.display()
            );
        }
    }
}

/// The job scripts ReFrame kept under `dir` (`rfm_job.sh` in each check's output folder).
fn job_scripts(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "rfm_job.sh")
                && path.components().any(|c| c.as_os_str() == "output")
            {
                found.push(path);
            }
        }
    }
    found
}

#[test]
fn b_eff_io_gets_a_time_limit_from_its_schedule() {
    // What ReFrame makes of the check (--describe runs no job): T for the full partition
    // plus the half, a quarter more, and 5 minutes.
    let Some(_) = installation() else {
        return;
    };
    for (t, limit) in [(600, 1425.0), (60, 412.0)] {
        let out = Command::new(checkout().join(".reframe/bin/reframe"))
            .current_dir(checkout())
            .args(["-C", "reframe/settings.py", "--system", "xylem-local"])
            .args([
                "-c",
                "reframe/checks/xylem_checks.py",
                "-n",
                "b_eff_io_check",
            ])
            .args(["-S", &format!("b_eff_io_check.scheduled_time={t}")])
            .arg("--describe")
            .env("XYLEM_BIN_DIR", bin_dir())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let start = text.find('[').expect("a JSON list");
        let doc: serde_json::Value = serde_json::from_str(&text[start..]).unwrap();
        let checks = doc.as_array().unwrap();
        assert!(!checks.is_empty(), "{text}");
        for check in checks {
            assert_eq!(
                check["time_limit"].as_f64(),
                Some(limit),
                "T = {t}: {check}"
            );
        }
    }
}

#[test]
fn reframe_checks_pass_through_the_local_slurm() {
    let Some(mpi) = installation() else {
        return;
    };
    let Some(cluster) = cluster_or_skip(2) else {
        return;
    };
    let session = Session::new("xylem-slurm", mpi, true);
    passes_every_check("xylem-slurm", "nodes", mpi, &session, || {
        let (argv, env) = reframe_argv("xylem-slurm", &session, mpi, &[]);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let job = cluster.run(LIMIT, &argv, &env);
        assert!(
            !job.timed_out,
            "ReFrame hit the time limit: {}\nslurmctld:\n{}",
            show(&job),
            cluster.log_tail("slurmctld", 30)
        );
        job
    });
}

/// On one machine, sqmr's neighbour shares the core rank's node: a check that asks for
/// inter-node figures must fail on the placement, and a selection of a network that no
/// host has must fail the network check (sqmr refuses it, exit status 2).
#[test]
fn reframe_checks_fail_on_a_bad_placement_or_selection() {
    let Some(mpi) = installation() else {
        return;
    };
    let session = Session::new("xylem-local", mpi, false);
    let job = run_local(
        &session,
        mpi,
        &[
            "-n",
            "^sqmr",
            "-S",
            "sqmr_check.require_internode=true",
            "-S",
            "sqmr_netsel_check.network=nosuchnet0",
        ],
    );
    assert!(!job.success(), "ReFrame passed: {}", show(&job));
    let cases = report(&session);
    let (result, why) = &cases["sqmr_check"];
    assert_eq!(result, "fail", "{cases:?}");
    assert!(
        why.contains("not placed for inter-node figures"),
        "{why}\n{}",
        show(&job)
    );
    let (result, why) = &cases["sqmr_netsel_check"];
    assert_eq!(result, "fail", "{cases:?}");
    assert!(
        why.contains("sqmr exited with status 2") && why.contains("nosuchnet0"),
        "{why}\n{}",
        show(&job)
    );
}

#[test]
fn the_build_fixture_builds_xylem_with_the_environments_mpi_and_the_check_runs_it() {
    let Some(mpi) = installation() else {
        return;
    };
    if mpi != Installation::OpenMpi4 {
        // A release build of the workspace per run: once, in the Open MPI 4 part.
        slurmtest::skip("the build fixture is run under openmpi4 only (a release build)");
        return;
    }
    let session = Session::new("xylem-local", mpi, false);
    // `make test` names a target folder that EasyBuild's release build filled already.
    let shared = std::env::var("XYLEM_TEST_RELEASE_TARGET").ok();
    let target = shared.map(|t| format!("xylem_build.target_dir={t}"));
    let mut args = vec!["-n", "sqmr_built_check"];
    if let Some(t) = &target {
        args.extend(["-S", t.as_str()]);
    }
    let job = run_local_with(&session, mpi, &args, &[("XYLEM_REFRAME_BUILD", "1")]);
    eprintln!(
        "build fixture and check: {:.0} s",
        job.elapsed.as_secs_f64()
    );
    assert!(job.success(), "ReFrame failed: {}", show(&job));
    let cases = report(&session);
    assert_eq!(
        cases.get("sqmr_built_check").map(|(r, _)| r.as_str()),
        Some("pass"),
        "{cases:?}"
    );
    assert!(
        cases.keys().any(|name| name.starts_with("xylem_build")),
        "the fixture ran as a test case of its own: {cases:?}"
    );
    // The job ran the sqmr the fixture installed into its stage, not the one under test.
    let scripts = job_scripts(&session.out);
    assert_eq!(scripts.len(), 1, "{scripts:?}");
    let text = std::fs::read_to_string(&scripts[0]).unwrap();
    assert!(
        text.contains("/install/bin/sqmr ") && text.contains("xylem_build"),
        "{}:\n{text}",
        scripts[0].display()
    );
    assert!(!text.contains(&format!("{}/sqmr", bin_dir())), "{text}");
}
