//! `sqmr` under a real launcher: topologies, schedule, rates, JSON, verbose, validation.

mod common;

use common::{parse, sqmr, Installation};

const SHORT: &[&str] = &[
    "--num_iters",
    "60",
    "--max_msgsize",
    "256",
    "--win_size",
    "4",
];

fn args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut all: Vec<&str> = SHORT.to_vec();
    all.extend_from_slice(extra);
    all
}

fn assert_sane_table(stdout: &str, cores: u64, nbors: u64) {
    let t = parse(stdout);
    assert_eq!(
        (t.tasks_per_node, t.neighbours, t.iterations, t.window),
        (cores, nbors, 60, 4)
    );
    let sizes: Vec<u64> = t.rows.iter().map(|r| r.msgsize).collect();
    assert_eq!(sizes, [0, 1, 2, 4, 8, 16, 32, 64, 128, 256]);
    let iters: Vec<u64> = t.rows.iter().map(|r| r.iters).collect();
    assert_eq!(iters, [60, 48, 39, 32, 26, 21, 17, 14, 12, 10]);
    for row in &t.rows {
        let [(avg, avg_mib), (max, _), (min, _)] = row.rates;
        assert!(min > 0.0 && min <= avg && avg <= max, "{row:?}");
        let expected_mib = avg * row.msgsize as f64 / 1_048_576.0;
        assert!(
            (avg_mib - expected_mib).abs() <= 0.01 + expected_mib * 1e-6,
            "{row:?}"
        );
    }
    // The reference's header comes first, untouched.
    assert_eq!(
        t.lines[0],
        "# SQMR v1.1.0 - MPI maximal message rate benchmark"
    );
    assert!(t.lines[1].starts_with("# Run at ") && t.lines[1].contains(", with rank 0 on "));
    // The column header is the last `#` line before the first row; our own `#` lines
    // (version, placement warnings) come after the table.
    let first_row = t
        .lines
        .iter()
        .position(|l| !l.starts_with('#') && !l.is_empty())
        .expect("a row");
    assert!(
        t.lines[first_row - 1].starts_with("# msgsize iters"),
        "{:?}",
        &t.lines[..first_row]
    );
    let last_row = t
        .lines
        .iter()
        .rposition(|l| !l.starts_with('#') && !l.is_empty())
        .expect("a row");
    assert!(
        t.lines[last_row + 1..]
            .iter()
            .any(|l| l.starts_with("# xylem sqmr ")),
        "{:?}",
        &t.lines[last_row..]
    );
}

#[test]
fn one_core_one_neighbour() {
    let job = sqmr(2, &args(&[]));
    assert!(job.success(), "{job:#?}");
    assert_sane_table(&job.stdout, 1, 1);
    // One sample per size, as in the reference: no lines about repeats.
    assert!(!job.stdout.contains("# repeat"), "{}", job.stdout);
}

#[test]
fn one_core_two_neighbours() {
    let job = sqmr(3, &args(&["--num_cores", "1", "--num_nbors=2"]));
    assert!(job.success(), "{job:#?}");
    assert_sane_table(&job.stdout, 1, 2);
}

#[test]
fn two_cores_one_neighbour_each_by_default() {
    let job = sqmr(4, &args(&[]));
    assert!(job.success(), "{job:#?}");
    assert_sane_table(&job.stdout, 2, 1);
}

#[test]
fn one_machine_gets_the_placement_warning_and_still_completes() {
    let job = sqmr(2, &args(&[]));
    assert!(job.success(), "{job:#?}");
    let warning = job
        .stdout
        .lines()
        .find(|l| l.starts_with("# WARNING placement: neighbour ranks 1 share the core node"))
        .unwrap_or_else(|| panic!("no placement warning in\n{}", job.stdout));
    assert!(warning.contains("shared memory"));
}

#[test]
fn json_agrees_with_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    let path_text = path.to_str().unwrap();
    let csv_path = dir.path().join("run.csv");
    let job = sqmr(
        3,
        &args(&[
            "--num_cores=1",
            "--num_nbors=2",
            "--json",
            path_text,
            "--csv",
            csv_path.to_str().unwrap(),
        ]),
    );
    assert!(job.success(), "{job:#?}");
    let table = parse(&job.stdout);
    let doc: serde_json::Value = mpitest::read_document(&path);
    assert_eq!(doc["benchmark"], "sqmr");
    assert_eq!(doc["complete"], true);
    assert_eq!(doc["config"]["num_nbors"], 2);
    assert_eq!(doc["environment"]["ranks"], 3);
    mpitest::assert_provenance(&doc, "sqmr", 3, "--num_nbors=2");
    let library = doc["environment"]["mpi_library"].as_str().unwrap();
    let folded = library.split_whitespace().collect::<Vec<_>>().join(" ");
    let mpi = Installation::from_env();
    assert!(
        folded.contains(mpi.library_marker()),
        "built against another MPI than XYLEM_TEST_MPI says: {library}"
    );
    let sizes = doc["sizes"].as_array().unwrap();
    assert_eq!(sizes.len(), table.rows.len());
    for (size, row) in sizes.iter().zip(&table.rows) {
        assert_eq!(size["msgsize"], row.msgsize);
        assert_eq!(size["iters"], row.iters);
        assert_eq!(size["core_elapsed_s"].as_array().unwrap().len(), 1);
        let avg = size["rates"]["average"]["msgs_per_s"].as_f64().unwrap();
        assert!(
            (avg - row.rates[0].0).abs() <= 0.005 + avg * 1e-9,
            "{avg} vs {row:?}"
        );
        let msgs = size["messages"].as_f64().unwrap();
        assert_eq!(msgs, (4 * 2 * 2) as f64 * row.iters as f64);
    }
    // The CSV: a header, then one row per size, agreeing with the table.
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("msgsize,iters,"), "{csv}");
    // The eleven figures; the run's columns (id, host, MPI, date) follow them.
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').take(11).map(|f| f.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), table.rows.len(), "{csv}");
    for (row, text) in rows.iter().zip(&table.rows) {
        assert_eq!((row[0], row[1]), (text.msgsize as f64, text.iters as f64));
        assert!(
            (row[3] - text.rates[0].0).abs() <= 0.005 + row[3] * 1e-9,
            "{row:?}"
        );
    }
    // JSON never goes to standard output.
    assert!(!job.stdout.contains('{'));
}

#[test]
fn an_existing_json_file_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keep.json");
    std::fs::write(&path, "precious").unwrap();
    let job = sqmr(2, &args(&["--json", path.to_str().unwrap()]));
    assert_ne!(job.code, Some(0));
    assert!(job.stderr.contains("the file exists"), "{}", job.stderr);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "precious");
    assert!(
        job.stdout.lines().all(|l| l.starts_with('#')),
        "nothing ran: {}",
        job.stdout
    );
}

#[test]
fn verbose_prints_the_mapping_and_hosts_in_rank_order_before_the_header() {
    let job = sqmr(4, &args(&["--verbose", "--num_cores=1", "--num_nbors=3"]));
    assert!(job.success(), "{job:#?}");
    let lines: Vec<&str> = job.stdout.lines().collect();
    assert_eq!(
        &lines[..6],
        &[
            "# num_cores 1",
            "# num_nbors 3",
            "# num_iters 60",
            "# win_size 4",
            "# min_msgsize 0",
            "# max_msgsize 256"
        ]
    );
    assert_eq!(lines[6], "");
    assert_eq!(lines[7], "# core rank 0 has neighbor ranks 1 2 3");
    assert_eq!(lines[8], "");
    for rank in 0..4 {
        assert!(
            lines[9 + rank].starts_with(&format!("# rank {rank} is on ")),
            "{}",
            lines[9 + rank]
        );
    }
    assert_eq!(
        lines[13],
        "# SQMR v1.1.0 - MPI maximal message rate benchmark"
    );
}

#[test]
fn validate_passes_on_a_clean_run() {
    let job = sqmr(3, &args(&["--validate", "--num_cores=1", "--num_nbors=2"]));
    assert!(job.success(), "{job:#?}");
    let summary = job
        .stdout
        .lines()
        .find(|l| l.starts_with("# validate: ") && l.contains("messages checked"))
        .unwrap();
    // 3 ranks: core checks 2 peers x 4 slots, each neighbour 4 slots, per iteration.
    let iterations: u64 = [60u64, 48, 39, 32, 26, 21, 17, 14, 12, 10]
        .iter()
        .map(|i| i + 10)
        .sum();
    let expected = iterations * (8 + 4 + 4);
    assert_eq!(
        summary,
        format!("# validate: {expected} messages checked, 0 corrupted")
    );
}

#[test]
fn validate_detects_a_corrupted_message() {
    let job = sqmr(2, &args(&["--validate", "--corrupt-one-message"]));
    assert_eq!(job.code, Some(3), "{job:#?}");
    assert!(job.stdout.contains("# validate: "), "{}", job.stdout);
    let errors: Vec<&str> = job
        .stderr
        .lines()
        .filter(|l| l.starts_with("ERROR --validate"))
        .collect();
    assert_eq!(errors.len(), 1, "one rank reports: {}", job.stderr);
    assert!(
        errors[0].contains("4 of "),
        "the window of 4 messages is damaged: {}",
        errors[0]
    );
    assert!(
        errors[0].contains("from rank 1, msgsize 1, iteration 10"),
        "{}",
        errors[0]
    );
}

#[test]
fn an_iteration_count_of_days_is_announced_before_the_first_loop() {
    // 2^32 + 1 iterations at 0 B: hours on any machine. rank 0 says so after the
    // warm-up; the test stops the job after a few seconds.
    let job = mpitest::launch(
        Installation::from_env(),
        2,
        std::path::Path::new(env!("CARGO_BIN_EXE_sqmr")),
        &["--num_iters=4294967297", "--max_msgsize=0"],
        std::time::Duration::from_secs(12),
    );
    assert!(job.timed_out, "{job:#?}");
    let said: Vec<&str> = mpitest::program_lines(&job.stderr)
        .into_iter()
        .filter(|l| l.starts_with("WARNING run time: the warm-up ran "))
        .collect();
    assert_eq!(said.len(), 1, "{}", job.stderr);
    assert!(
        said[0].contains("so the first loop of 4294967297 iterations takes about ")
            && said[0].contains("lower --num_iters"),
        "{}",
        said[0]
    );
    // And a usual run says nothing of the kind.
    let job = sqmr(2, &args(&[]));
    assert!(job.success(), "{job:#?}");
    assert!(!job.stderr.contains("WARNING run time"), "{}", job.stderr);
}

#[test]
fn help_prints_once_and_exits_zero() {
    let job = sqmr(2, &["--help"]);
    assert!(job.success(), "{job:#?}");
    assert_eq!(
        job.stdout.matches("Usage: sqmr").count(),
        1,
        "{}",
        job.stdout
    );
    assert!(job.stdout.contains("node aggregates"));
}

fn read_json(path: &std::path::Path) -> serde_json::Value {
    mpitest::read_document(path)
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn repeat_keeps_every_sample_and_the_row_is_the_median_one() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let csv = dir.path().join("r.csv");
    let job = sqmr(
        2,
        &args(&[
            "--repeat",
            "7",
            "--json",
            json.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
        ]),
    );
    assert!(job.success(), "{job:#?}");
    // The table keeps its shape; the figures of the repeats come after it.
    assert_sane_table(&job.stdout, 1, 1);
    let table = parse(&job.stdout);
    let doc = read_json(&json);
    assert_eq!(doc["schema_version"], 2);
    assert_eq!(doc["config"]["repeat"], 7);
    let sizes = doc["sizes"].as_array().unwrap();
    assert_eq!(sizes.len(), table.rows.len());
    let mut dependent = 0;
    for (size, row) in sizes.iter().zip(&table.rows) {
        let samples = size["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 7, "{size}");
        assert_eq!(size["stopped_by"], "repeat");
        let st = &size["statistics"];
        assert_eq!(st["samples"], 7);
        let (min, median, max) = (f(&st["min"]), f(&st["median"]), f(&st["max"]));
        assert!(min <= median && median <= max, "{st}");
        let (low, high) = (f(&st["ci95"]["low"]), f(&st["ci95"]["high"]));
        assert!(low <= median && median <= high, "{st}");
        assert!(min <= low && high <= max, "{st}");
        assert_eq!(st["ci95"]["ranks"], serde_json::json!([1, 7]));
        // The row is the median sample: in the JSON exactly, in the text to 2 decimals.
        let m = size["median_sample"].as_u64().unwrap() as usize;
        let chosen = &samples[m];
        assert_eq!(chosen["rates"], size["rates"]);
        assert_eq!(chosen["core_elapsed_s"], size["core_elapsed_s"]);
        assert_eq!(f(&chosen["rates"]["average"]["msgs_per_s"]), median);
        let averages: Vec<f64> = samples
            .iter()
            .map(|s| f(&s["rates"]["average"]["msgs_per_s"]))
            .collect();
        // Equal samples happen (the timer's resolution): the median is the fourth of seven
        // in order, so at most three lie below it and at most three above.
        let below = averages.iter().filter(|&&a| a < median).count();
        let above = averages.iter().filter(|&&a| a > median).count();
        assert!(below <= 3 && above <= 3, "{averages:?}");
        // The independence tests ran on the samples in the order run: Kendall's S
        // recomputed from them, the p-values probabilities, the verdict theirs.
        let ind = &st["independence"];
        let s: i64 = (0..7)
            .flat_map(|i| (i + 1..7).map(move |j| (i, j)))
            .map(|(i, j)| (averages[j] > averages[i]) as i64 - (averages[j] < averages[i]) as i64)
            .sum();
        assert_eq!(ind["trend"]["s"], s, "{ind}");
        let (pt, pr) = (f(&ind["trend"]["p_value"]), f(&ind["runs"]["p_value"]));
        assert!(
            (0.0..=1.0).contains(&pt) && (0.0..=1.0).contains(&pr),
            "{ind}"
        );
        assert_eq!(ind["dependent"], pt < 0.005 || pr < 0.005, "{ind}");
        dependent += usize::from(pt < 0.005 || pr < 0.005);
        for (i, (name, _)) in [("average", 0), ("max", 1), ("min", 2)].iter().enumerate() {
            let rate = f(&size["rates"][name]["msgs_per_s"]);
            assert!(
                (rate - row.rates[i].0).abs() <= 0.005 + rate * 1e-12,
                "{rate} {row:?}"
            );
        }
    }
    // One `# repeat:` line per size after the table, each after the last row.
    let last_row = table
        .lines
        .iter()
        .rposition(|l| !l.starts_with('#'))
        .unwrap();
    let per_size: Vec<&String> = table.lines[last_row..]
        .iter()
        .filter(|l| l.starts_with("# repeat: ") && l.ends_with("  repeat"))
        .collect();
    assert_eq!(per_size.len(), sizes.len(), "{}", job.stdout);
    // Every flagged size has its line; with none, one line says so.
    let flagged = job.stdout.matches("# repeat: NOT INDEPENDENT ").count();
    assert_eq!(flagged, dependent, "{}", job.stdout);
    assert_eq!(
        job.stdout
            .contains("# repeat: independence: no trend or phases in any size tested"),
        dependent == 0,
        "{}",
        job.stdout
    );
    assert!(!table.lines[..last_row]
        .iter()
        .any(|l| l.starts_with("# repeat")));
    // The CSV: one row per sample, the median ones flagged.
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&header[11..14], ["sample", "samples", "is_median"]);
    // Every row ends with the run's id (the JSON's), host, MPI and date.
    assert_eq!(&header[20..], ["run_id", "host", "mpi", "date"]);
    let run_id = doc["provenance"]["run_id"].as_str().unwrap();
    assert!(!run_id.is_empty());
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 7 * sizes.len());
    assert_eq!(rows.iter().filter(|r| r[13] == "1").count(), sizes.len());
    assert!(
        rows.iter()
            .all(|r| r.len() == 24 && r[20] == run_id && r[23] == doc["provenance"]["started"]),
        "{text}"
    );
}

#[test]
fn precision_records_what_ended_each_size() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("p.json");
    let job = sqmr(
        3,
        &args(&[
            "--num_cores=1",
            "--num_nbors=2",
            "--precision",
            "50",
            "--max-time-per-size",
            "5",
            "--json",
            json.to_str().unwrap(),
        ]),
    );
    assert!(job.success(), "{job:#?}");
    assert_sane_table(&job.stdout, 1, 2);
    assert!(
        job.stdout.contains(
            "# precision: each size repeated until the interval's half-width \
             is within 50% of the median, tested from 6 samples on, at most 1000 samples or 5 s"
        ),
        "{}",
        job.stdout
    );
    let doc = read_json(&json);
    assert_eq!(doc["config"]["precision"]["percent"], 50.0);
    assert_eq!(doc["config"]["precision"]["max_time_per_size_s"], 5.0);
    for size in doc["sizes"].as_array().unwrap() {
        let n = size["samples"].as_array().unwrap().len();
        let hw = size["statistics"]["ci95"]["half_width_percent"].as_f64();
        match size["stopped_by"].as_str().unwrap() {
            "precision" => assert!(n >= 6 && hw.unwrap() <= 50.0, "{size}"),
            "time cap" => assert!(f(&size["wall_s"]) >= 5.0, "{size}"),
            other => panic!("stopped by {other}: {size}"),
        }
    }

    // A precision no run reaches: every size ends at its (short) time cap, on every rank.
    let capped = dir.path().join("c.json");
    let job = sqmr(
        2,
        &args(&[
            "--precision=0.000001",
            "--max-time-per-size=0.02",
            "--max_msgsize=4",
            "--json",
            capped.to_str().unwrap(),
        ]),
    );
    assert!(job.success(), "{job:#?}");
    let doc = read_json(&capped);
    for size in doc["sizes"].as_array().unwrap() {
        assert_eq!(size["stopped_by"], "time cap", "{size}");
        assert!(f(&size["wall_s"]) >= 0.02, "{size}");
    }
}

#[test]
fn validate_checks_every_sample_of_a_repeated_size() {
    let job = sqmr(2, &args(&["--validate", "--repeat=3"]));
    assert!(job.success(), "{job:#?}");
    let summary = job
        .stdout
        .lines()
        .find(|l| l.starts_with("# validate: ") && l.contains("messages checked"))
        .unwrap();
    // 2 ranks, 4 slots each, per iteration: one warm-up and three timed loops per size.
    let iterations: u64 = [60u64, 48, 39, 32, 26, 21, 17, 14, 12, 10]
        .iter()
        .map(|i| 3 * i + 10)
        .sum();
    assert_eq!(
        summary,
        format!(
            "# validate: {} messages checked, 0 corrupted",
            iterations * 8
        )
    );
}

#[test]
fn version_names_the_mpi_library_it_was_built_against_and_runs_on() {
    let job = sqmr(1, &["--version"]);
    assert!(job.success(), "{job:#?}");
    let lines: Vec<&str> = job.stdout.lines().collect();
    assert!(lines[0].starts_with("sqmr "), "{}", job.stdout);
    let prefix = Installation::from_env().header_library_prefix();
    assert!(
        lines[1].starts_with(&format!("built against: {prefix}"))
            && lines[1].contains("(mpi.h in /"),
        "{}",
        job.stdout
    );
    assert!(lines[2].starts_with("runs on: "), "{}", job.stdout);
    // The library it runs on is the one it was built against: no warning.
    assert_eq!(lines.len(), 3, "{}", job.stdout);
}
