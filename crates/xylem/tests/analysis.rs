//! `xylem plot`, `xylem compare` and `xylem gen` as a user runs them, on the report
//! crate's fixtures.

use std::path::PathBuf;

use assert_cmd::Command;
use predicates::prelude::*;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../analysis/tests/fixtures")
        .join(name)
}

fn xylem() -> Command {
    Command::cargo_bin("xylem").unwrap()
}

#[test]
fn plot_writes_svg_and_png_with_the_labels() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("s.svg");
    xylem()
        .arg("plot")
        .arg(fixture("sqmr-a.json"))
        .arg(fixture("sqmr-b.json"))
        .arg("-o")
        .arg(&svg)
        .args(["--label", "eth", "--label", "ib"])
        .assert()
        .success();
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let labels: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(str::trim))
        .filter(|t| *t == "eth" || *t == "ib")
        .collect();
    assert_eq!(labels.len(), 4, "{labels:?}");

    let png = dir.path().join("b.png");
    xylem()
        .arg("plot")
        .arg(fixture("beffio-a.json"))
        .arg("--output")
        .arg(&png)
        .assert()
        .success();
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
}

#[test]
fn plot_errors_name_the_file_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"benchmark\": \"hpl\"}").unwrap();
    let out = dir.path().join("x.svg");
    xylem()
        .arg("plot")
        .arg(&bad)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "xylem plot: {}",
            bad.display()
        )))
        .stderr(predicate::str::contains("not a sqmr or b_eff_io result"))
        .stderr(predicate::str::contains("panicked").not());
    assert!(!out.exists());
    xylem()
        .arg("plot")
        .arg(fixture("sqmr-a.json"))
        .args(["-o", "x.pdf"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("must end in .svg or .png"));
    xylem()
        .arg("plot")
        .arg(fixture("sqmr-a.json"))
        .args(["-o", "x.svg", "--label", "a", "--label", "b"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("2 labels for 1 results"));
}

#[test]
fn compare_prints_a_table_or_json() {
    xylem()
        .arg("compare")
        .arg(fixture("sqmr-a.json"))
        .arg(fixture("sqmr-b.json"))
        .assert()
        .success()
        .stdout(predicate::str::contains("# A: sqmr-a\n# B: sqmr-b\n"))
        .stdout(predicate::str::is_match(r"(?m)^4096 B +msgs/s +\d+ +\d+ +0\.\d{3}$").unwrap());
    let out = xylem()
        .arg("compare")
        .arg(fixture("beffio-a.json"))
        .arg(fixture("beffio-a.json"))
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["benchmark"], "b_eff_io");
    assert_eq!(v["rows"].as_array().unwrap().len(), 258);
    assert_eq!(v["headline"][0]["ratio"], 1.0);
    xylem()
        .arg("compare")
        .arg(fixture("sqmr-a.json"))
        .arg(fixture("beffio-a.json"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("give results of one benchmark"));
}

#[test]
fn gen_writes_man_pages_and_completions() {
    let dir = tempfile::tempdir().unwrap();
    xylem()
        .args(["gen", "man"])
        .arg(dir.path().join("man"))
        .assert()
        .success()
        .stdout(predicate::str::contains("sqmr.1"))
        .stdout(predicate::str::contains("xylem-plot.1"));
    for page in [
        "sqmr.1",
        "b_eff_io.1",
        "xylem.1",
        "xylem-compare.1",
        "xylem-gen-man.1",
    ] {
        assert!(dir.path().join("man").join(page).is_file(), "{page}");
    }
    xylem()
        .args(["gen", "completions"])
        .arg(dir.path().join("c"))
        .assert()
        .success();
    for file in ["bash/xylem.bash", "zsh/_sqmr", "fish/b_eff_io.fish"] {
        assert!(dir.path().join("c").join(file).is_file(), "{file}");
    }
}

#[test]
fn repeated_results_get_error_bars_and_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("ci.svg");
    xylem()
        .arg("plot")
        .arg(fixture("sqmr-r7-a.json"))
        .arg(fixture("sqmr-p5-b.json"))
        .arg("-o")
        .arg(&svg)
        .assert()
        .success();
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    assert!(doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .any(|n| n
            .text()
            .is_some_and(|t| t.contains("bars: 95 % confidence interval"))));
    // 13 sizes above 0 in two panels, a bar each, for both results.
    for colour in ["#1F77B4", "#D62728"] {
        let bars = doc
            .descendants()
            .filter(|n| n.has_tag_name("polyline"))
            .filter(|n| {
                n.attribute("stroke") == Some(colour) && n.attribute("stroke-width") == Some("1")
            })
            .count();
        assert_eq!(bars, 26, "{colour}");
    }

    xylem()
        .arg("compare")
        .arg(fixture("sqmr-r7-a.json"))
        .arg(fixture("sqmr-p5-b.json"))
        .assert()
        .success()
        .stdout(predicate::str::contains("A 95% CI"))
        .stdout(predicate::str::is_match(r"(?m)^1024 B +msgs/s +\d+ +\d+ +\d\.\d{3} +\d+\.\.\d+ +\d+\.\.\d+  (differ|overlap)$").unwrap())
        .stdout(predicate::str::is_match(r"(?m)^# \d+ of 14 sizes with intervals in both differ beyond them").unwrap());
    let out = xylem()
        .arg("compare")
        .arg(fixture("sqmr-r7-a.json"))
        .arg(fixture("sqmr-p5-b.json"))
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["intervals"]["compared"], 14);
    let rates: Vec<&serde_json::Value> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["unit"] == "msgs/s")
        .collect();
    assert_eq!(rates.len(), 14);
    let differ = rates.iter().filter(|r| r["differ"] == true).count();
    assert_eq!(v["intervals"]["differ"], differ);
    for r in rates {
        let (a, b) = (&r["a_ci95"], &r["b_ci95"]);
        let apart = a[1].as_f64() < b[0].as_f64() || b[1].as_f64() < a[0].as_f64();
        assert_eq!(r["differ"], apart, "{r}");
    }
}

#[test]
fn summary_gives_each_results_headline_figures_and_links() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("sqmr-b.json"), dir.path().join("sqmr.json")).unwrap();
    std::fs::copy(fixture("beffio-a.json"), dir.path().join("b_eff_io.json")).unwrap();
    let out = xylem().arg("summary").arg(dir.path()).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    // The figures, recomputed here from the JSON.
    let sqmr: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("sqmr-b.json")).unwrap()).unwrap();
    let sizes = sqmr["sizes"].as_array().unwrap();
    let avg = |s: &serde_json::Value, k: &str| s["rates"]["average"][k].as_f64().unwrap();
    let peak = sizes
        .iter()
        .max_by(|a, b| avg(a, "msgs_per_s").total_cmp(&avg(b, "msgs_per_s")))
        .unwrap();
    let rate = analysis::summary::grouped(avg(peak, "msgs_per_s"), 0);
    let at = analysis::summary::size(peak["msgsize"].as_u64().unwrap());
    assert!(
        text.contains(&format!("| peak message rate | {rate} msgs/s | {at} |")),
        "{text}"
    );
    assert!(
        text.contains("2 core rank(s) x 1 neighbour(s), window"),
        "{text}"
    );
    // The fixture ran on one machine: said in the heading and as a caution.
    assert!(
        text.contains("## sqmr: message rate within one node (vm: shared memory, not the network)"),
        "{text}"
    );
    assert!(
        text.contains(
            "**Caution:** every rank on vm: the rates are of shared memory, not of the network."
        ),
        "{text}"
    );
    let beffio: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("beffio-a.json")).unwrap()).unwrap();
    let figure = analysis::summary::grouped(beffio["b_eff_io_mb_s"].as_f64().unwrap(), 1);
    assert!(text.contains(&format!("| **{figure}** |")), "{text}");
    assert_eq!(text.matches("| partition n = ").count(), 2, "{text}");
    for link in [
        "(sqmr.svg)",
        "(sqmr.png)",
        "(b_eff_io.csv)",
        "(b_eff_io.txt)",
    ] {
        assert!(text.contains(link), "{link}: {text}");
    }
}

#[test]
fn summary_of_a_folder_without_results_or_with_a_wrong_one_fails_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    xylem()
        .arg("summary")
        .arg(dir.path())
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains(
            "no sqmr.json or b_eff_io.json to summarise",
        ));
    std::fs::copy(fixture("beffio-a.json"), dir.path().join("sqmr.json")).unwrap();
    xylem()
        .arg("summary")
        .arg(dir.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "sqmr.json: not the result its name says",
        ));
}
