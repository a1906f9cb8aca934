//! Comparisons of the fixtures, as tables and JSON.

mod common;

use common::run;
use report::compare::{compare, json, text};

#[test]
fn sqmr_sizes_side_by_side_with_ratios() {
    let (a, b) = (run("sqmr-a.json"), run("sqmr-b.json"));
    let c = compare(&a, &b).unwrap();
    assert_eq!(
        (c.benchmark, c.a.as_str(), c.b.as_str()),
        ("sqmr", "sqmr-a", "sqmr-b")
    );
    // 0 B .. 4 KiB: 14 sizes, a rate row and a bandwidth row each.
    assert_eq!(c.rows.len(), 28);
    let row = c
        .rows
        .iter()
        .find(|r| r.msgsize == Some(1024) && r.unit == "msgs/s")
        .unwrap();
    let (report::load::Document::Sqmr(x), report::load::Document::Sqmr(y)) =
        (&a.document, &b.document)
    else {
        panic!()
    };
    let at = |d: &report::sqmr::Document| {
        d.sizes
            .iter()
            .find(|s| s.msgsize == 1024)
            .unwrap()
            .rates
            .average
            .msgs_per_s
    };
    assert_eq!(row.a, Some(at(x)));
    assert_eq!(row.b, Some(at(y)));
    assert_eq!(row.ratio, Some(at(y) / at(x)));
    // Bandwidth at 0 B is 0: no ratio.
    let zero = c
        .rows
        .iter()
        .find(|r| r.msgsize == Some(0) && r.unit == "MiB/s")
        .unwrap();
    assert_eq!(zero.ratio, None);
    let peak = &c.headline[0];
    assert_eq!(peak.name, "peak message rate");
    assert_eq!(peak.a, x.peak_rate().map(|p| p.1));

    let table = text(&c);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[1], "# A: sqmr-a");
    assert_eq!(lines[2], "# B: sqmr-b");
    let line_1k = lines
        .iter()
        .find(|l| l.starts_with("1024 B ") && l.contains("msgs/s"))
        .unwrap();
    let ratio: f64 = line_1k.split_whitespace().last().unwrap().parse().unwrap();
    assert!((ratio - at(y) / at(x)).abs() < 1e-3, "{line_1k}");

    let v: serde_json::Value = serde_json::from_str(&json(&c)).unwrap();
    assert_eq!(v["benchmark"], "sqmr");
    assert_eq!(v["rows"].as_array().unwrap().len(), 28);
    let r0 = &v["rows"][1];
    assert_eq!(
        (r0["msgsize"].as_u64(), r0["unit"].as_str()),
        (Some(0), Some("MiB/s"))
    );
    assert!(r0["ratio"].is_null());
}

#[test]
fn beffio_patterns_side_by_side() {
    let a = run("beffio-a.json");
    let mut b = a.clone();
    b.label = "half".into();
    if let report::load::Document::BEffIo(d) = &mut b.document {
        d.b_eff_io_mb_s /= 2.0;
        for p in &mut d.partitions[0].access.read {
            p.bandwidth_mb_s /= 2.0;
        }
        d.partitions.pop();
    }
    let c = compare(&a, &b).unwrap();
    assert_eq!(c.benchmark, "b_eff_io");
    assert_eq!(c.headline[0].ratio, Some(0.5));
    assert_eq!(c.headline.len(), 3);
    // Partition 1 only in A: no B value, no ratio.
    assert_eq!(c.headline[2].name, "b_eff_io of partition n=1");
    assert_eq!((c.headline[2].b, c.headline[2].ratio), (None, None));
    // 2 partitions x 3 access methods x 43 patterns.
    assert_eq!(c.rows.len(), 258);
    for r in c.rows.iter().filter(|r| r.partition == Some(2)) {
        let want = if r.access == Some("read") { 0.5 } else { 1.0 };
        assert!((r.ratio.unwrap() - want).abs() < 1e-12, "{r:?}");
    }
    assert!(c
        .rows
        .iter()
        .filter(|r| r.partition == Some(1))
        .all(|r| r.b.is_none()));
    let table = text(&c);
    assert!(
        table.contains("n=2 read #13 type 1 shared 1 kB "),
        "{table}"
    );
    let v: serde_json::Value = serde_json::from_str(&json(&c)).unwrap();
    assert_eq!(v["rows"][0]["access"], "write");
    assert_eq!(v["rows"][0]["pattern"], 0);
}

#[test]
fn different_benchmarks_do_not_compare() {
    let e = compare(&run("sqmr-a.json"), &run("beffio-a.json")).unwrap_err();
    assert!(
        e.to_string().contains("give results of one benchmark"),
        "{e}"
    );
}
