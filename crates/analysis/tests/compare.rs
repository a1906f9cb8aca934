//! Comparisons of the fixtures, as tables and JSON.

mod common;

use analysis::compare::{compare, json, text};
use common::run;

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
    let (analysis::load::Document::Sqmr(x), analysis::load::Document::Sqmr(y)) =
        (&a.document, &b.document)
    else {
        panic!()
    };
    let at = |d: &sqmr::report::json::Document| {
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
    if let analysis::load::Document::BEffIo(d) = &mut b.document {
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

fn sqmr(r: &analysis::Run) -> &sqmr::report::json::Document {
    match &r.document {
        analysis::load::Document::Sqmr(d) => d,
        _ => panic!("not sqmr"),
    }
}

#[test]
fn sqmr_intervals_say_which_sizes_differ_beyond_them() {
    let (a, b) = (run("sqmr-r7-a.json"), run("sqmr-p5-b.json"));
    let c = compare(&a, &b).unwrap();
    let (x, y) = (sqmr(&a), sqmr(&b));
    for r in c.rows.iter().filter(|r| r.unit == "msgs/s") {
        let size = r.msgsize.unwrap();
        let at = |d: &sqmr::report::json::Document| {
            d.sizes
                .iter()
                .find(|s| s.msgsize == size)
                .unwrap()
                .statistics
                .summary
                .clone()
        };
        let (sa, sb) = (at(x), at(y));
        // The row's values are the medians, and the ratio theirs.
        assert_eq!((r.a, r.b), (Some(sa.median), Some(sb.median)));
        assert_eq!(r.ratio, Some(sb.median / sa.median));
        let ia = [sa.ci95.low.unwrap(), sa.ci95.high.unwrap()];
        let ib = [sb.ci95.low.unwrap(), sb.ci95.high.unwrap()];
        assert_eq!((r.a_ci95, r.b_ci95), (Some(ia), Some(ib)));
        assert_eq!(r.differ, Some(ia[1] < ib[0] || ib[1] < ia[0]), "{r:?}");
    }
    let summary = c.intervals.unwrap();
    assert_eq!(summary.compared, 14);
    let differ = c
        .rows
        .iter()
        .filter(|r| r.unit == "msgs/s" && r.differ == Some(true))
        .count();
    assert_eq!(summary.differ, differ);
}

#[test]
fn sqmr_a_size_moved_beyond_its_interval_differs_and_the_others_overlap() {
    let a = run("sqmr-r7-a.json");
    let mut b = a.clone();
    b.label = "faster".into();
    if let analysis::load::Document::Sqmr(d) = &mut b.document {
        let s = d.sizes.iter_mut().find(|s| s.msgsize == 1024).unwrap();
        for r in [&mut s.rates.average, &mut s.rates.max, &mut s.rates.min] {
            r.msgs_per_s *= 2.0;
            r.mib_per_s *= 2.0;
        }
        let st = &mut s.statistics.summary;
        st.min *= 2.0;
        st.median *= 2.0;
        st.max *= 2.0;
        st.ci95.low = st.ci95.low.map(|v| v * 2.0);
        st.ci95.high = st.ci95.high.map(|v| v * 2.0);
        // And its loops rose one after the other: not independent.
        let rising = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        s.statistics.independence = sqmr::independence::check(&rising);
        assert!(s.statistics.independence.as_ref().unwrap().dependent);
    }
    let c = compare(&a, &b).unwrap();
    for r in &c.rows {
        let moved = r.msgsize == Some(1024);
        // Bandwidth too: its interval is the rate's times the size.
        assert_eq!(r.differ, Some(moved), "{r:?}");
        if moved {
            assert!((r.ratio.unwrap() - 2.0).abs() < 1e-12);
        } else if r.a != Some(0.0) {
            assert_eq!(r.ratio, Some(1.0));
        }
    }
    assert_eq!(
        c.intervals,
        Some(analysis::compare::IntervalSummary {
            compared: 14,
            differ: 1,
            a_not_independent: vec![],
            b_not_independent: vec![1024],
        })
    );

    let table = text(&c);
    let lines: Vec<&str> = table.lines().collect();
    let head = lines.iter().rfind(|l| l.starts_with("what ")).unwrap();
    assert!(
        head.contains("  A 95% CI  ") && head.ends_with("  B 95% CI  CIs"),
        "{head}"
    );
    let line = |size: &str| {
        *lines
            .iter()
            .find(|l| l.starts_with(&format!("{size} B ")) && l.contains("msgs/s"))
            .unwrap()
    };
    assert!(line("1024").ends_with("  differ"), "{}", line("1024"));
    assert!(line("512").ends_with("  overlap"), "{}", line("512"));
    // The interval cells: low..high of A, then of B (twice A's here).
    let (lo, hi) = r_ci(&c, 1024);
    assert!(
        line("1024").contains(&format!("{lo:.0}..{hi:.0}")),
        "{}",
        line("1024")
    );
    assert_eq!(
        *lines.last().unwrap(),
        "# loops not independent (a trend or phases) in A at none, in B at 1024 B: there the \
         intervals understate how much a run varies, and a difference is weaker evidence"
    );
    assert_eq!(
        lines[lines.len() - 2],
        "# 1 of 14 sizes with intervals in both differ beyond them (95 % intervals of the \
         median do not overlap; B/A is then the ratio of the medians)"
    );

    let v: serde_json::Value = serde_json::from_str(&json(&c)).unwrap();
    assert_eq!(v["intervals"]["compared"], 14);
    assert_eq!(v["intervals"]["differ"], 1);
    assert_eq!(
        v["intervals"]["b_not_independent"],
        serde_json::json!([1024])
    );
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["msgsize"] == 1024 && r["unit"] == "msgs/s")
        .unwrap();
    assert_eq!(row["differ"], true);
    assert_eq!(row["a_ci95"].as_array().unwrap().len(), 2);
    assert!((row["ratio"].as_f64().unwrap() - 2.0).abs() < 1e-12);
}

fn r_ci(c: &analysis::compare::Comparison, size: u64) -> (f64, f64) {
    let r = c
        .rows
        .iter()
        .find(|r| r.msgsize == Some(size) && r.unit == "msgs/s")
        .unwrap();
    let [lo, hi] = r.a_ci95.unwrap();
    (lo, hi)
}

#[test]
fn sqmr_without_intervals_on_one_side_gives_no_verdict() {
    let c = compare(&run("sqmr-r7-a.json"), &run("sqmr-a.json")).unwrap();
    assert!(c
        .rows
        .iter()
        .all(|r| r.differ.is_none() && r.b_ci95.is_none()));
    assert!(c
        .rows
        .iter()
        .filter(|r| r.msgsize != Some(0))
        .all(|r| r.a_ci95.is_some()));
    assert_eq!(c.intervals, None);
    // B ran one loop per size: said, for B only.
    assert_eq!(c.single_samples, ["B"]);
    let table = text(&c);
    assert!(
        table.contains("# single samples: B ran one timed loop per size, so its ratios"),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("1024 B ") && l.ends_with("  -")),
        "{table}"
    );
    // Neither side with intervals: no interval columns, and the ratios are said to be of
    // single loops.
    let c = compare(&run("sqmr-a.json"), &run("sqmr-b.json")).unwrap();
    assert!(!text(&c).contains("CI"));
    assert!(
        text(&c).contains("# single samples: A and B ran one timed loop per size, so their"),
        "{}",
        text(&c)
    );
    let v: serde_json::Value = serde_json::from_str(&json(&c)).unwrap();
    assert!(v.get("intervals").is_none());
    assert_eq!(v["single_samples"], serde_json::json!(["A", "B"]));
    // Both repeated: nothing said.
    let c = compare(&run("sqmr-r7-a.json"), &run("sqmr-p5-b.json")).unwrap();
    assert!(c.single_samples.is_empty());
    assert!(!text(&c).contains("single samples"));
    assert!(v["rows"][2].get("a_ci95").is_none() && v["rows"][2].get("differ").is_none());
}
