//! sqmr: message rate and bandwidth against message size, log–log, one panel each; per
//! result the average as a line with points and the min–max band (slowest and fastest
//! core rank) around it, with a legend of the results' labels. A result whose sizes were
//! repeated (`--repeat`, `--precision`) also gets an error bar per size: the 95 %
//! confidence interval of the median sample's average rate.
//!
//! Size 0 has no place on a log axis and is left out (its bandwidth is 0 anyway).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::draw_error;
use super::style::{self, colour};
use crate::load::Result;
use ::sqmr::rates::Rate;
use ::sqmr::report::json::Document;

/// Width and height of the picture without the lines on the results under its title.
pub const SIZE: (u32, u32) = (1400, 600);

/// Width and height of the picture of `docs`: [`SIZE`] and the lines on the results.
pub fn size(docs: &[(&str, &Document)]) -> (u32, u32) {
    (
        SIZE.0,
        SIZE.1 + super::notes::height(&super::notes::sqmr(docs)),
    )
}

/// The title of the picture.
pub const TITLE: &str = "sqmr: message rate and bandwidth";
/// The x axis description (both panels).
pub const X_DESC: &str = "message size (bytes)";
/// The rate panel's y axis description.
pub const RATE_DESC: &str = "message rate (msgs/s)";
/// The bandwidth panel's y axis description.
pub const BANDWIDTH_DESC: &str = "bandwidth (MiB/s)";
/// The note under the title.
pub const NOTE: &str = "line: average over the core ranks; band: slowest to fastest core rank";
/// The note under the title when a result has intervals.
pub const NOTE_INTERVALS: &str = "line: average over the core ranks (of the median sample); \
band: slowest to fastest core rank; bars: 95 % confidence interval of the median";
/// Stroke width of the error bars (the lines are 2, the legend swatches 3).
pub const BAR_WIDTH: u32 = 1;
/// Half the width of an error bar's caps, as a factor on the log size axis.
pub const CAP: f64 = 1.12;

/// Draws `docs` (label, document) on `root`.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    docs: &[(&str, &Document)],
) -> Result<()> {
    let root = root
        .titled(TITLE, (super::font::FAMILY, style::TITLE))
        .map_err(draw_error)?;
    let lines = super::notes::sqmr(docs);
    let (about, root) = root.split_vertically(super::notes::height(&lines));
    super::notes::draw(&about, &lines)?;
    let (note, body) = root.split_vertically(24);
    let with_intervals = docs
        .iter()
        .any(|(_, d)| !intervals(d, |r| r.msgs_per_s).is_empty());
    note.draw_text(
        if with_intervals { NOTE_INTERVALS } else { NOTE },
        &(super::font::FAMILY, style::TICK).into_text_style(&note),
        (20, 2),
    )
    .map_err(draw_error)?;
    let (left, right) = body.split_horizontally(SIZE.0 / 2);
    panel(&left, Panel::RATE, docs)?;
    panel(&right, Panel::BANDWIDTH, docs)
}

/// The points (size, average, min, max) of a document with `pick` applied, sizes > 0 and
/// values > 0 only.
pub fn points(doc: &Document, pick: fn(&Rate) -> f64) -> Vec<(f64, f64, f64, f64)> {
    doc.sizes
        .iter()
        .filter(|s| s.msgsize > 0)
        .map(|s| {
            let r = &s.rates;
            (
                s.msgsize as f64,
                pick(&r.average),
                pick(&r.min),
                pick(&r.max),
            )
        })
        .filter(|p| p.1 > 0.0 && p.2 > 0.0 && p.3 > 0.0)
        .collect()
}

/// The error bars (size, low, high) of a document's intervals with `pick` applied,
/// sizes > 0 and bounds > 0 only; empty when it has none (one sample per size).
pub fn intervals(doc: &Document, pick: fn(&Rate) -> f64) -> Vec<(f64, f64, f64)> {
    doc.sizes
        .iter()
        .filter(|s| s.msgsize > 0)
        .filter_map(|s| s.interval(pick).map(|(lo, hi)| (s.msgsize as f64, lo, hi)))
        .filter(|b| b.1 > 0.0 && b.2 > 0.0)
        .collect()
}

/// The points of one error bar at `x` from `low` to `high`: the lower cap, up, the upper
/// cap (one polyline, retracing its caps' middles).
pub fn bar(x: f64, low: f64, high: f64) -> Vec<(f64, f64)> {
    vec![
        (x / CAP, low),
        (x * CAP, low),
        (x, low),
        (x, high),
        (x / CAP, high),
        (x * CAP, high),
    ]
}

/// What one panel shows.
struct Panel {
    caption: &'static str,
    y_desc: &'static str,
    pick: fn(&Rate) -> f64,
    legend: SeriesLabelPosition,
}

impl Panel {
    const RATE: Panel = Panel {
        caption: "message rate",
        y_desc: RATE_DESC,
        pick: |r| r.msgs_per_s,
        legend: SeriesLabelPosition::LowerLeft,
    };
    const BANDWIDTH: Panel = Panel {
        caption: "bandwidth",
        y_desc: BANDWIDTH_DESC,
        pick: |r| r.mib_per_s,
        legend: SeriesLabelPosition::UpperLeft,
    };
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    what: Panel,
    docs: &[(&str, &Document)],
) -> Result<()> {
    let Panel {
        caption,
        y_desc,
        pick,
        legend,
    } = what;
    let series: Vec<Vec<(f64, f64, f64, f64)>> =
        docs.iter().map(|(_, d)| points(d, pick)).collect();
    let bars: Vec<Vec<(f64, f64, f64)>> = docs.iter().map(|(_, d)| intervals(d, pick)).collect();
    let all = || series.iter().flatten();
    let sizes = all().map(|p| p.0).chain(all().map(|p| p.0 * 1.2));
    let (x0, x1) = style::log_range(sizes).unwrap_or((0.5, 2.0));
    let bounds = bars.iter().flatten().flat_map(|b| [b.1, b.2]);
    let values = all().flat_map(|p| [p.1, p.2, p.3]).chain(bounds);
    let (y0, y1) = style::log_range(values).unwrap_or((0.1, 10.0));
    let font = super::font::FAMILY;
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (font, style::CAPTION))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(
            (x0..x1).log_scale().base(2.0),
            (y0..y1)
                .log_scale()
                .with_key_points(style::log_ticks(y0, y1)),
        )
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .x_desc(X_DESC)
        .y_desc(y_desc)
        .axis_desc_style((font, style::LABEL))
        .label_style((font, style::TICK))
        .x_labels(12)
        .x_label_formatter(&|v| style::bytes(*v))
        .y_label_formatter(&|v| style::si(*v))
        .max_light_lines(0)
        .draw()
        .map_err(draw_error)?;
    for (i, (((label, _), pts), bars)) in docs.iter().zip(&series).zip(&bars).enumerate() {
        let c = colour(i);
        let band: Vec<(f64, f64)> = pts
            .iter()
            .map(|p| (p.0, p.3))
            .chain(pts.iter().rev().map(|p| (p.0, p.2)))
            .collect();
        chart
            .draw_series(std::iter::once(Polygon::new(band, c.mix(0.2).filled())))
            .map_err(draw_error)?;
        chart
            .draw_series(LineSeries::new(
                pts.iter().map(|p| (p.0, p.1)),
                c.stroke_width(2),
            ))
            .map_err(draw_error)?
            // A file name or a label given: control characters shown, not drawn.
            .label(outfile::shown::text(label))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], c.stroke_width(3)));
        chart
            .draw_series(pts.iter().map(|p| Circle::new((p.0, p.1), 3, c.filled())))
            .map_err(draw_error)?;
        chart
            .draw_series(
                bars.iter()
                    .map(|b| PathElement::new(bar(b.0, b.1, b.2), c.stroke_width(BAR_WIDTH))),
            )
            .map_err(draw_error)?;
    }
    chart
        .configure_series_labels()
        .position(legend)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((font, style::LABEL))
        .draw()
        .map_err(draw_error)
}
