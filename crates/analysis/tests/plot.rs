//! Plots drawn from the fixtures, read back as SVG (roxmltree) and as PNG pixels.

mod common;

use analysis::plot::{beffio as bplot, notes, plot, png_file, sqmr as splot, Format};
use common::{hex, run};

fn svg(runs: &[analysis::Run]) -> String {
    String::from_utf8(plot(runs, Format::Svg).unwrap()).unwrap()
}

/// Every text of the SVG, trimmed.
fn texts(doc: &roxmltree::Document) -> Vec<String> {
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect()
}

fn count(texts: &[String], wanted: &str) -> usize {
    texts.iter().filter(|t| t.as_str() == wanted).count()
}

/// The point lists of the polylines with this stroke colour and width.
fn polylines(doc: &roxmltree::Document, colour: &str, width: &str) -> Vec<Vec<(f64, f64)>> {
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .filter(|n| {
            n.attribute("stroke") == Some(colour) && n.attribute("stroke-width") == Some(width)
        })
        .map(|n| points(n.attribute("points").unwrap_or("")))
        .collect()
}

fn points(text: &str) -> Vec<(f64, f64)> {
    text.split_whitespace()
        .map(|p| {
            let (x, y) = p.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect()
}

/// The filled polygons (bands) of this colour.
fn bands(doc: &roxmltree::Document, colour: &str) -> Vec<Vec<(f64, f64)>> {
    doc.descendants()
        .filter(|n| n.has_tag_name("polygon") && n.attribute("fill") == Some(colour))
        .map(|n| points(n.attribute("points").unwrap_or("")))
        .collect()
}

#[test]
fn sqmr_results_overlay_with_axes_legend_lines_and_bands() {
    let text = svg(&[run("sqmr-a.json"), run("sqmr-b.json")]);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let t = texts(&doc);
    assert_eq!(count(&t, splot::TITLE), 1, "{t:?}");
    assert_eq!(count(&t, splot::X_DESC), 2);
    assert_eq!(count(&t, splot::RATE_DESC), 1);
    assert_eq!(count(&t, splot::BANDWIDTH_DESC), 1);
    // One legend per panel, one entry per result.
    assert_eq!(count(&t, "sqmr-a"), 2);
    assert_eq!(count(&t, "sqmr-b"), 2);
    assert!(
        t.iter().any(|s| s == "4K") && t.iter().any(|s| s == "1K"),
        "{t:?}"
    );
    // Sizes 1 B .. 4 KiB: 13 points per average line, one line per panel and result,
    // and a band of 13 upper and 13 lower points around each.
    for series in 0..2 {
        let lines = polylines(&doc, &hex(series), "2");
        assert_eq!(lines.len(), 2, "series {series}");
        assert!(lines.iter().all(|l| l.len() == 13), "{lines:?}");
        let b = bands(&doc, &hex(series));
        assert_eq!(b.len(), 2);
        assert!(b.iter().all(|p| p.len() == 26));
        // Legend swatches are the wider strokes.
        assert_eq!(polylines(&doc, &hex(series), "3").len(), 2);
    }
    // sqmr-b ran 2 core ranks: its band has height somewhere; sqmr-a's (1 core) has none.
    let height = |band: &Vec<(f64, f64)>| {
        let n = band.len() / 2;
        (0..n)
            .map(|i| (band[i].1 - band[2 * n - 1 - i].1).abs())
            .fold(0.0, f64::max)
    };
    assert!(bands(&doc, &hex(1)).iter().all(|b| height(b) >= 2.0));
    assert!(bands(&doc, &hex(0)).iter().all(|b| height(b) < 1.0));
    // The band is max above and min below the average: on the page (y grows downwards)
    // upper <= line <= lower everywhere, strictly somewhere on each side.
    let lines_b = polylines(&doc, &hex(1), "2");
    for (band, line) in bands(&doc, &hex(1)).iter().zip(&lines_b) {
        let n = line.len();
        let (upper, lower) = (&band[..n], &band[n..]);
        for (i, p) in line.iter().enumerate() {
            assert_eq!(upper[i].0, p.0);
            assert!(upper[i].1 <= p.1 + 0.5 && p.1 <= lower[n - 1 - i].1 + 0.5);
        }
        assert!(
            (0..n).any(|i| upper[i].1 < line[i].1 - 1.0),
            "max above average"
        );
        assert!(
            (0..n).any(|i| lower[n - 1 - i].1 > line[i].1 + 1.0),
            "min below average"
        );
    }
    // Message rate falls from 1 B to 4 KiB: the last point of each rate line is lower on
    // the page (larger y) than the first.
    let rate_a = &polylines(&doc, &hex(0), "2")[0];
    assert!(rate_a.last().unwrap().1 > rate_a[0].1);
}

#[test]
fn labels_replace_the_file_names() {
    let mut a = run("sqmr-a.json");
    a.label = "before".into();
    let text = svg(&[a]);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let t = texts(&doc);
    assert_eq!(count(&t, "before"), 2);
    assert_eq!(count(&t, "sqmr-a"), 0);
    assert!(polylines(&doc, &hex(1), "2").is_empty());
}

#[test]
fn beffio_has_a_row_of_three_panels_per_partition() {
    let text = svg(&[run("beffio-a.json")]);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let t = texts(&doc);
    let titles: Vec<&String> = t.iter().filter(|s| s.contains("b_eff_io = ")).collect();
    assert_eq!(titles.len(), 2, "{t:?}");
    assert!(titles[0].starts_with("partition of 2 processes, b_eff_io = 2801.0 MB/s"));
    assert!(titles[1].starts_with("partition of 1 process, b_eff_io = 3886.8 MB/s"));
    for caption in ["first write", "rewrite", "read"] {
        assert_eq!(count(&t, caption), 2, "{caption}");
    }
    assert_eq!(count(&t, bplot::X_DESC), 6);
    assert_eq!(count(&t, bplot::Y_DESC), 6);
    for chunk in bplot::chunk_labels() {
        assert_eq!(count(&t, &chunk), 6, "{chunk}");
    }
    for ty in 0..5 {
        let label = beffio::patterns::type_label(ty);
        assert_eq!(count(&t, &label), 2, "{label}");
        // One unbroken line of 7 chunk sizes per panel, and a legend swatch per row.
        let lines = polylines(&doc, &hex(ty), "2");
        assert_eq!(lines.len(), 6, "type {ty}");
        assert!(lines.iter().all(|l| l.len() == 7));
        assert_eq!(polylines(&doc, &hex(ty), "3").len(), 2);
    }
}

#[test]
fn beffio_line_heights_follow_the_bandwidths() {
    // Read of partition 1, type 0: 1 MB (weighted 2 and 3) against 1 kB+8 (pattern 7).
    let r = run("beffio-a.json");
    let analysis::load::Document::BEffIo(doc) = &r.document else {
        panic!()
    };
    let read = &doc.partitions[1].access.read;
    let curve = beffio::report::json::type_curve(read, 0, doc.mpart_bytes);
    let text = svg(std::slice::from_ref(&r));
    let xml = roxmltree::Document::parse(&text).unwrap();
    let line = &polylines(&xml, &hex(0), "2")[5];
    let (kb8, mb) = (curve[1].unwrap(), curve[4].unwrap());
    // Higher bandwidth is higher on the page (smaller y).
    assert_eq!(kb8 > mb, line[1].1 < line[4].1, "{curve:?} {line:?}");
}

/// Pixels of exactly this colour.
fn pixels_of(rgb: &[u8], c: plotters::style::RGBColor) -> usize {
    rgb.chunks(3).filter(|p| p == &[c.0, c.1, c.2]).count()
}

#[test]
fn png_pictures_have_the_series_colours_and_text() {
    let bytes = plot(&[run("sqmr-a.json"), run("sqmr-b.json")], Format::Png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let (w, h, rgb) = png_file::decode(&bytes).unwrap();
    // Four lines under the title: what each result is, and that each ran within one node.
    assert_eq!(
        (w, h),
        (splot::SIZE.0, splot::SIZE.1 + 4 * notes::LINE_HEIGHT)
    );
    let colour = analysis::plot::style::colour;
    assert!(pixels_of(&rgb, colour(0)) > 1000, "series 0");
    assert!(pixels_of(&rgb, colour(1)) > 1000, "series 1");
    assert_eq!(pixels_of(&rgb, colour(2)), 0, "no third series");
    // Rendered glyphs: dark pixels beyond the axes' lines.
    let dark = rgb.chunks(3).filter(|p| p.iter().all(|&v| v < 80)).count();
    assert!(dark > 5000, "{dark}");

    let bytes = plot(&[run("beffio-a.json")], Format::Png).unwrap();
    let (w, h, rgb) = png_file::decode(&bytes).unwrap();
    // Two lines above the rows (what it is, NOT VALID) and a margin.
    assert_eq!(
        (w, h),
        (
            bplot::WIDTH,
            2 * bplot::ROW_HEIGHT + 2 * notes::LINE_HEIGHT + 8
        )
    );
    // The caution in red above the rows (its glyphs are anti-aliased: red-ish pixels,
    // not the colour itself).
    let header = (2 * notes::LINE_HEIGHT + 8) as usize * w as usize * 3;
    let red = rgb[..header]
        .chunks(3)
        .filter(|p| p[0] > 150 && p[1] < 80 && p[2] < 80)
        .count();
    assert!(red > 100, "{red}");
    for t in 0..5 {
        assert!(pixels_of(&rgb, colour(t)) > 500, "type {t}");
    }
}

#[test]
fn several_beffio_results_get_their_labels_in_the_titles() {
    let mut b = run("beffio-a.json");
    b.label = "after".into();
    let text = svg(&[run("beffio-a.json"), b]);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let t = texts(&doc);
    assert_eq!(
        t.iter()
            .filter(|s| s.starts_with("beffio-a: partition of"))
            .count(),
        2
    );
    assert_eq!(
        t.iter()
            .filter(|s| s.starts_with("after: partition of"))
            .count(),
        2
    );
    // 4 rows of 430 and, above them, two lines per result and a margin.
    assert!(
        text.starts_with("<svg width=\"1500\" height=\"1808\""),
        "{}",
        &text[..60]
    );
    // What each result is and, in red, that it is NOT VALID and why.
    let about: Vec<&String> = t
        .iter()
        .filter(|s| s.starts_with("after: 2 processes on ") && s.ends_with(" UTC"))
        .collect();
    assert_eq!(about.len(), 1, "{t:?}");
    assert_eq!(
        t.iter()
            .filter(|s| s.starts_with("after: NOT VALID: ") && s.contains("600"))
            .count(),
        1,
        "{t:?}"
    );
    let red = roxmltree::Document::parse(&text)
        .unwrap()
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter(|n| n.text().is_some_and(|s| s.contains("NOT VALID")))
        .filter(|n| n.attribute("fill") == Some("#BE0000"))
        .count();
    assert_eq!(red, 2, "the cautions are red");
}

#[test]
fn a_run_within_one_node_says_so_on_the_picture() {
    let text = svg(&[run("sqmr-a.json")]);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let t = texts(&doc);
    assert!(
        t.contains(
            &"core node vm, 2 ranks on 1 host, Open MPI v4.1.4, 2026-12-01 20:19 UTC".to_string()
        ),
        "{t:?}"
    );
    assert!(
        t.contains(
            &"every rank on vm: the rates are of shared memory, not of the network".to_string()
        ),
        "{t:?}"
    );
}

#[test]
fn sqmr_intervals_are_error_bars_around_the_medians() {
    let (a, b) = (run("sqmr-r7-a.json"), run("sqmr-p5-b.json"));
    let text = svg(&[a.clone(), b]);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let t = texts(&doc);
    assert_eq!(count(&t, splot::NOTE_INTERVALS), 1, "{t:?}");
    assert_eq!(count(&t, splot::NOTE), 0);
    let width = splot::BAR_WIDTH.to_string();
    for series in 0..2 {
        // Sizes 1 B .. 4 KiB, in both panels: 13 bars each, drawn after the line.
        let bars = polylines(&doc, &hex(series), &width);
        assert_eq!(bars.len(), 26, "series {series}");
        let lines = polylines(&doc, &hex(series), "2");
        for (panel, line) in lines.iter().enumerate() {
            for (i, p) in line.iter().enumerate() {
                let bar = &bars[13 * panel + i];
                assert_eq!(bar.len(), 6);
                // Centred on the point; the low cap below (larger y), the high cap above.
                assert!((bar[2].0 - p.0).abs() < 0.5 && (bar[3].0 - p.0).abs() < 0.5);
                let (low, high) = (bar[2].1, bar[3].1);
                assert!(
                    high <= p.1 + 0.5 && p.1 <= low + 0.5,
                    "{bar:?} around {p:?}"
                );
                assert!(
                    bar[0].0 < p.0 && p.0 < bar[1].0,
                    "a cap is wider than its bar"
                );
            }
        }
    }
    // The intervals are the documents': the first bar of A's rate panel spans its 1 B
    // interval, whose bounds are the min and max of its 7 samples.
    let analysis::load::Document::Sqmr(d) = &a.document else {
        panic!()
    };
    let one = d.sizes.iter().find(|s| s.msgsize == 1).unwrap();
    let st = &one.statistics.summary;
    assert_eq!(st.samples, 7);
    assert_eq!((st.ci95.low, st.ci95.high), (Some(st.min), Some(st.max)));
    assert_eq!(
        splot::intervals(d, |r| r.msgs_per_s)[0],
        (1.0, st.min, st.max)
    );
    // Results of one sample per size have none.
    let plain = svg(&[run("sqmr-a.json")]);
    let plain = roxmltree::Document::parse(&plain).unwrap();
    assert!(polylines(&plain, &hex(0), &width).is_empty());
    assert_eq!(count(&texts(&plain), splot::NOTE), 1);
}

#[test]
fn a_scan_is_a_heat_map_with_the_slow_node_named_on_both_axes() {
    use analysis::plot::scan as scanplot;
    let text = svg(&[run("scan-a.json")]);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let t = texts(&doc);
    assert_eq!(count(&t, scanplot::TITLE), 1, "{t:?}");
    // Both panels, both axes.
    assert_eq!(count(&t, "xys3 SLOW"), 4, "{t:?}");
    assert_eq!(count(&t, "xys1"), 4, "{t:?}");
    assert!(t.iter().any(|l| l == "slow: xys3"), "{t:?}");
    // The throttled node's bandwidth cells are red (at about 0.01 of the median, next to
    // the red end of the scale); every other measured cell is not.
    let red_end = scanplot::colour(0.0, 0.7);
    let near_red = |fill: &str| {
        let hex = |k: usize| i32::from_str_radix(&fill[1 + 2 * k..3 + 2 * k], 16).unwrap_or(-1);
        fill.len() == 7
            && [red_end.0, red_end.1, red_end.2]
                .iter()
                .enumerate()
                .all(|(k, &c)| (hex(k) - c as i32).abs() <= 8)
    };
    let reds = doc
        .descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("fill").is_some_and(near_red))
        .count();
    assert_eq!(
        reds, 6,
        "xys3 with its 3 partners, both ways, in the bandwidth panel"
    );
}

#[test]
fn one_scan_per_picture() {
    let e = plot(&[run("scan-a.json"), run("scan-a.json")], Format::Svg).unwrap_err();
    assert!(e.to_string().contains("a picture holds one scan"), "{e}");
}
