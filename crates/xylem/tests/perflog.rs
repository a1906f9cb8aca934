//! `xylem perflog` as a user runs it, on ReFrame performance logs of real runs of the
//! checks under `reframe/` (the analysis crate's fixtures, `perflog/`).

use std::path::PathBuf;

use assert_cmd::Command;
use predicates::prelude::*;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../analysis/tests/fixtures/perflog")
        .join(name)
}

fn xylem() -> Command {
    Command::cargo_bin("xylem").unwrap()
}

/// The fixture's records as (environ, column → value), read here without the report
/// crate, to compare the command's output with.
fn records(name: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('|').collect();
    lines
        .map(|l| {
            header
                .iter()
                .map(|c| c.to_string())
                .zip(l.split('|').map(str::to_string))
                .collect()
        })
        .collect()
}

#[test]
fn json_has_every_point_of_the_perflog() {
    let out = xylem()
        .args(["perflog", "--json"])
        .arg(fixture("xylem-slurm-sqmr_check.log"))
        .arg(fixture("xylem-local-hydra-b_eff_io_check.log"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let series = doc["series"].as_array().unwrap();
    // sqmr: 2 environments × 3 variables; b_eff_io: 1 × 5.
    assert_eq!(series.len(), 2 * 3 + 5, "{doc}");
    for record in records("xylem-slurm-sqmr_check.log") {
        for variable in ["rate_0B", "rate_8B", "peak_bw"] {
            let s = series
                .iter()
                .find(|s| s["environ"] == record["environ"].as_str() && s["variable"] == variable)
                .unwrap_or_else(|| panic!("no {variable} of {}", record["environ"]));
            assert_eq!(s["system"], "xylem-slurm:nodes");
            assert_eq!(s["check"], "sqmr_check");
            assert_eq!(s["unit"], record[&format!("{variable}_unit")].as_str());
            let point = &s["points"][0];
            let value: f64 = record[&format!("{variable}_value")].parse().unwrap();
            // serde_json reads floats back to within an ulp or so.
            let got = point["value"].as_f64().unwrap();
            assert!(
                (got - value).abs() <= value.abs() * 1e-12,
                "{got} vs {value}"
            );
            assert_eq!(point["time"], record["job_completion_time"].as_str());
            assert_eq!(point["result"], "pass");
        }
    }
}

#[test]
fn table_and_plot_of_one_variable() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("rate.svg");
    let out = xylem()
        .args(["perflog", "--var", "rate_0B", "-o"])
        .arg(&svg)
        .arg(fixture("xylem-slurm-sqmr_check.log"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let table = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = table.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{table}");
    for record in records("xylem-slurm-sqmr_check.log") {
        let row = rows
            .iter()
            .find(|r| r.contains(&format!(" {} sqmr_check", record["environ"])))
            .unwrap_or_else(|| panic!("no row of {}: {table}", record["environ"]));
        let value: f64 = record["rate_0B_value"].parse().unwrap();
        assert!(row.contains(&format!("{value:.3}")), "{row}");
        assert!(row.ends_with("msg/s"), "{row}");
    }
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(str::trim))
        .collect();
    assert!(texts.contains(&"rate_0B"), "{texts:?}");
    assert!(
        texts.iter().any(|t| t.contains("mpich4 sqmr_check")),
        "{texts:?}"
    );
    // The picture is never overwritten.
    xylem()
        .args(["perflog", "-o"])
        .arg(&svg)
        .arg(fixture("xylem-slurm-sqmr_check.log"))
        .assert()
        .failure()
        .stderr(predicate::str::contains("xylem perflog:"));
}

/// A value no run gives (negative, absurdly large) is refused as the JSON readers refuse
/// one, naming the file, the line and the column; the table is not printed.
#[test]
fn values_no_run_gives_are_refused_naming_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    for (value, shown) in [("-5", "-5"), ("1e308", "1e308")] {
        let log = dir.path().join("check.log");
        std::fs::write(
            &log,
            format!(
                "job_completion_time|system|partition|environ|name|bw_value|bw_unit\n\
                 2026-01-01T00:00:00|s|p|e|c|10|MB/s\n\
                 2026-01-02T00:00:00|s|p|e|c|{value}|MB/s\n"
            ),
        )
        .unwrap();
        xylem()
            .arg("perflog")
            .arg(&log)
            .assert()
            .code(1)
            .stdout("")
            .stderr(format!(
                "xylem perflog: {}, line 3: column `bw_value` is {shown}, which no run gives; \
                 expected a number from 0 to 1e15; fix or remove the record\n",
                log.display()
            ));
    }
}

#[test]
fn what_is_not_a_perflog_is_refused_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("result.json");
    std::fs::write(&bad, "{\"benchmark\": \"sqmr\"}\n").unwrap();
    xylem().arg("perflog").arg(&bad).assert().code(1).stderr(
        predicate::str::contains("result.json")
            .and(predicate::str::contains("a record before any header line")),
    );
    xylem()
        .args(["perflog", "--var", "nosuch"])
        .arg(fixture("xylem-slurm-sqmr_check.log"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no figure of nosuch"));
}
