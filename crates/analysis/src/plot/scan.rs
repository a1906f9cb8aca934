//! `sqmr --scan`: the node-by-node matrix as a heat map, one panel for the message rate and
//! one for the bandwidth. A cell is a pair of nodes, coloured by the pair's figure per rank
//! pair (the better of its measurement and re-measurement) over the median pair: red below
//! the scan's threshold, through yellow at it, to green at the median and above; grey where
//! the pair was not measured. A flagged link's cells are framed in black; a flagged node's
//! name is marked `SLOW` on both axes.

use plotters::coord::ranged1d::SegmentedCoord;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::draw_error;
use super::style;
use crate::load::Result;
use ::sqmr::scan::report::{Scan, ScanDocument, ScanPair};

/// The most nodes whose names are written on the axes; above, every n-th.
pub const MAX_NAMED: usize = 48;

/// Above this many nodes the names under the x axis are written upwards.
pub const ROTATE_ABOVE: usize = 8;

/// The picture's size for `nodes` nodes.
pub fn size(nodes: usize) -> (u32, u32) {
    let cell = (560 / nodes.max(1)).clamp(4, 60) as u32;
    let side = cell * nodes.max(1) as u32;
    (2 * side + 2 * 220, side + 200)
}

/// The title.
pub const TITLE: &str = "sqmr --scan: each pair of nodes over the median pair";

/// Which figure a panel shows.
#[derive(Clone, Copy)]
enum Figure {
    Rate,
    Bandwidth,
}

impl Figure {
    fn caption(self) -> &'static str {
        match self {
            Figure::Rate => "message rate (8 B)",
            Figure::Bandwidth => "bandwidth (1 MiB)",
        }
    }

    /// The pair's figure per rank pair: the better of its two measurements.
    fn of(self, p: &ScanPair) -> f64 {
        let pick = |r: &::sqmr::scan::PairRun| {
            let v = match self {
                Figure::Rate => r.msgs_per_s,
                Figure::Bandwidth => r.mib_per_s,
            };
            v / r.rank_pairs.max(1) as f64
        };
        let first = pick(&p.first);
        p.remeasured.as_ref().map_or(first, |r| first.max(pick(r)))
    }
}

/// Every pair's figure over the median pair's, by node indices; `None` where not measured.
fn ratios(scan: &Scan, figure: Figure) -> Vec<Vec<Option<f64>>> {
    let n = scan.nodes.len();
    let index = |host: &str| scan.nodes.iter().position(|x| x.host == host);
    let values: Vec<f64> = scan.pairs.iter().map(|p| figure.of(p)).collect();
    let median = ::sqmr::scan::verdict::median(&values).filter(|m| *m > 0.0);
    let mut m = vec![vec![None; n]; n];
    for (p, v) in scan.pairs.iter().zip(&values) {
        if let (Some(a), Some(b), Some(med)) = (index(&p.a), index(&p.b), median) {
            m[a][b] = Some(v / med);
            m[b][a] = Some(v / med);
        }
    }
    m
}

/// The colour of a ratio: red (0) to yellow (the threshold) to green (1 and above).
pub fn colour(ratio: f64, threshold: f64) -> RGBColor {
    let lerp = |a: u8, b: u8, t: f64| (a as f64 + (b as f64 - a as f64) * t.clamp(0.0, 1.0)) as u8;
    let (red, yellow, green) = ((215, 48, 39), (254, 224, 139), (26, 152, 80));
    let (from, to, t) = if ratio < threshold {
        (red, yellow, ratio / threshold)
    } else {
        (
            yellow,
            green,
            (ratio - threshold) / (1.0 - threshold).max(1e-9),
        )
    };
    RGBColor(
        lerp(from.0, to.0, t),
        lerp(from.1, to.1, t),
        lerp(from.2, to.2, t),
    )
}

/// Draws the scan of `doc` on `root`.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, doc: &ScanDocument) -> Result<()> {
    let font = super::font::FAMILY;
    let root = root
        .titled(TITLE, (font, style::TITLE))
        .map_err(draw_error)?;
    let (note, body) = root.split_vertically(48);
    let scan = &doc.scan;
    let lines = [
        format!(
            "per rank pair, the better of measurement and re-measurement; red below {:.2}, \
             green at 1 and above, grey: not measured; framed: flagged link",
            scan.settings.threshold
        ),
        verdict(scan, doc.complete),
    ];
    for (k, line) in lines.iter().enumerate() {
        note.draw_text(
            line,
            &(font, style::TICK).into_text_style(&note),
            (20, 2 + 20 * k as i32),
        )
        .map_err(draw_error)?;
    }
    let (w, _) = body.dim_in_pixel();
    let (left, right) = body.split_horizontally(w / 2);
    panel(&left, scan, Figure::Rate)?;
    panel(&right, scan, Figure::Bandwidth)
}

/// One segment per node: plotters' segmented range over `a..b` holds the values `a..=b`.
fn segments(n: usize) -> SegmentedCoord<plotters::coord::types::RangedCoordi32> {
    (0..(n as i32 - 1).max(0)).into_segmented()
}

fn verdict(scan: &Scan, complete: bool) -> String {
    if !complete {
        return "NOT COMPLETE: the scan stopped before its verdict; the pairs measured so far"
            .into();
    }
    let mut parts = Vec::new();
    if !scan.flagged_nodes.is_empty() {
        parts.push(format!("slow: {}", scan.flagged_nodes.join(", ")));
    }
    if !scan.flagged_links.is_empty() {
        let links = scan.flagged_link_names();
        parts.push(format!("slow links: {}", links.join(", ")));
    }
    if parts.is_empty() {
        format!("nothing flagged ({} nodes)", scan.nodes.len())
    } else {
        parts.join("; ")
    }
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    scan: &Scan,
    figure: Figure,
) -> Result<()> {
    let font = super::font::FAMILY;
    let n = scan.nodes.len();
    let m = ratios(scan, figure);
    let every = n.div_ceil(MAX_NAMED).max(1);
    let name = |i: usize| -> String {
        match scan.nodes.get(i) {
            Some(node) if i.is_multiple_of(every) => {
                if node.flagged {
                    format!("{} SLOW", node.host)
                } else {
                    node.host.clone()
                }
            }
            _ => String::new(),
        }
    };
    // Cell i is segment i; its name sits at its middle.
    let label = |v: &SegmentValue<i32>| match v {
        SegmentValue::CenterOf(i) => name(*i as usize),
        _ => String::new(),
    };
    let mut chart = ChartBuilder::on(area)
        .caption(figure.caption(), (font, style::CAPTION))
        .margin(12)
        .x_label_area_size(if n > ROTATE_ABOVE { 110 } else { 40 })
        .y_label_area_size(160)
        .build_cartesian_2d(segments(n), segments(n))
        .map_err(draw_error)?;
    let x_style = if n > ROTATE_ABOVE {
        (font, style::TICK)
            .into_font()
            .transform(FontTransform::Rotate90)
    } else {
        (font, style::TICK).into_font()
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .label_style((font, style::TICK))
        .x_labels(n + 1)
        .y_labels(n + 1)
        .x_label_formatter(&label)
        .y_label_formatter(&label)
        .x_label_style(x_style)
        .draw()
        .map_err(draw_error)?;
    let cell = |i: usize, j: usize| (SegmentValue::Exact(i as i32), SegmentValue::Exact(j as i32));
    let threshold = scan.settings.threshold;
    let cells = (0..n)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .map(|(i, j)| {
            let fill = match m[i][j] {
                _ if i == j => RGBColor(255, 255, 255),
                Some(r) => colour(r, threshold),
                None => RGBColor(190, 190, 190),
            };
            Rectangle::new([cell(i, j), cell(i + 1, j + 1)], fill.filled())
        });
    chart.draw_series(cells).map_err(draw_error)?;
    let index = |host: &str| scan.nodes.iter().position(|x| x.host == host);
    let frames = scan.flagged_links.iter().flat_map(|[a, b]| {
        let (a, b) = (index(a), index(b));
        a.zip(b)
            .map(|(a, b)| [(a, b), (b, a)])
            .into_iter()
            .flatten()
            .map(|(i, j)| Rectangle::new([cell(i, j), cell(i + 1, j + 1)], BLACK.stroke_width(3)))
    });
    chart.draw_series(frames).map_err(draw_error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_run_from_red_through_yellow_to_green() {
        assert_eq!(colour(0.0, 0.7), RGBColor(215, 48, 39));
        assert_eq!(colour(0.7, 0.7), RGBColor(254, 224, 139));
        assert_eq!(colour(1.0, 0.7), RGBColor(26, 152, 80));
        assert_eq!(colour(3.0, 0.7), RGBColor(26, 152, 80));
    }

    #[test]
    fn the_picture_grows_with_the_nodes_within_bounds() {
        assert_eq!(size(4), (2 * 240 + 440, 240 + 200));
        let (w, h) = size(1000);
        assert!(w <= 2 * 4000 + 440 && h >= 200, "{w}x{h}");
    }
}
