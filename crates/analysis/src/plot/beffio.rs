//! b_eff_io: the paper's Figure 2. Per partition a row of three panels (first write,
//! rewrite, read): bandwidth on a log axis against the chunk size on disk (1 kB, 1 kB+8,
//! 32 kB, 32 kB+8, 1 MB, 1 MB+8, MPART, evenly spaced), one line per pattern type; the
//! partition's b_eff_io in the row's title. All panels share one bandwidth scale so rows
//! and panels compare at a glance.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::draw_error;
use super::style::{self, colour};
use crate::load::Result;
use ::beffio::patterns::type_label;
use ::beffio::report::json::{type_curve, types, Document, Partition};
use ::beffio::report::table::row_sizes;
use ::beffio::schedule::Access;
use ::beffio::units::{format_size, MB};

/// Width of the picture.
pub const WIDTH: u32 = 1500;
/// Height of one partition's row.
pub const ROW_HEIGHT: u32 = 430;
/// Width of the legend strip right of each row's panels.
pub const LEGEND_WIDTH: u32 = 170;
/// The x axis description.
pub const X_DESC: &str = "chunk size on disk";
/// The y axis description.
pub const Y_DESC: &str = "bandwidth (MB/s, 10^6 B/s)";

/// The most partition rows one picture holds (a PNG of 64 rows is 1500 × 27520 pixels).
pub const MAX_ROWS: usize = 64;

/// The rows of the picture of `docs`: one per partition of each.
pub fn rows(docs: &[(&str, &Document)]) -> usize {
    docs.iter().map(|(_, d)| d.partitions.len()).sum()
}

/// Width and height of the picture of `docs`: one row per partition of each, at most
/// [`MAX_ROWS`] ([`super::plot`] refuses more).
pub fn size(docs: &[(&str, &Document)]) -> (u32, u32) {
    let rows = rows(docs).clamp(1, MAX_ROWS);
    (WIDTH, ROW_HEIGHT * rows as u32 + header_height(docs))
}

/// The height of the lines on the results above the rows (with a margin).
fn header_height(docs: &[(&str, &Document)]) -> u32 {
    super::notes::height(&super::notes::beffio(docs)) + 8
}

/// The title of a partition's row; the label is given when several results are plotted.
pub fn row_title(label: Option<&str>, doc: &Document, part: &Partition) -> String {
    let prefix = label
        .map(|l| format!("{}: ", outfile::shown::text(l)))
        .unwrap_or_default();
    format!(
        "{prefix}partition of {} process{}, b_eff_io = {:.1} MB/s (T = {} s, MPART = {} MB)",
        part.processes,
        if part.processes == 1 { "" } else { "es" },
        part.b_eff_io_mb_s,
        doc.scheduled_time_s,
        doc.mpart_bytes / MB
    )
}

/// Draws `docs` (label, document) on `root`.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    docs: &[(&str, &Document)],
) -> Result<()> {
    let values = docs.iter().flat_map(|(_, d)| {
        d.partitions
            .iter()
            .flat_map(|p| Access::ALL.map(|a| p.access.of(a)))
            .flatten()
            .filter(|p| p.u > 0)
            .map(|p| p.bandwidth_mb_s)
    });
    let (y0, y1) = style::log_range(values).unwrap_or((1.0, 10.0));
    let (header, root) = root.split_vertically(header_height(docs));
    super::notes::draw(&header, &super::notes::beffio(docs))?;
    let rows: usize = docs.iter().map(|(_, d)| d.partitions.len()).sum();
    let areas = root.split_evenly((rows, 1));
    let several = docs.len() > 1;
    let mut row_areas = areas.iter();
    for (label, doc) in docs {
        for part in &doc.partitions {
            let Some(area) = row_areas.next() else { break };
            let title = row_title(several.then_some(*label), doc, part);
            let area = area
                .titled(&title, (super::font::FAMILY, style::TITLE))
                .map_err(draw_error)?;
            let (panels, strip) = area.split_horizontally(WIDTH - LEGEND_WIDTH);
            for (access, panel_area) in Access::ALL.iter().zip(panels.split_evenly((1, 3)).iter()) {
                panel(panel_area, *access, doc.mpart_bytes, part, (y0, y1))?;
            }
            legend(&strip, part)?;
        }
    }
    Ok(())
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    access: Access,
    mpart: u64,
    part: &Partition,
    (y0, y1): (f64, f64),
) -> Result<()> {
    let font = super::font::FAMILY;
    let patterns = part.access.of(access);
    let mut chart = ChartBuilder::on(area)
        .caption(access.title(), (font, style::CAPTION))
        .margin(10)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(
            -0.3f64..6.3f64,
            (y0..y1)
                .log_scale()
                .with_key_points(style::log_ticks(y0, y1)),
        )
        .map_err(draw_error)?;
    let axis = row_sizes(mpart);
    chart
        .configure_mesh()
        .x_desc(X_DESC)
        .y_desc(Y_DESC)
        .axis_desc_style((font, style::LABEL))
        .label_style((font, style::TICK))
        .x_labels(axis.len())
        .x_label_formatter(&|v| chunk_label(*v))
        .y_label_formatter(&|v| style::si(*v))
        .max_light_lines(0)
        .draw()
        .map_err(draw_error)?;
    for t in types(patterns) {
        let c = colour(t);
        let curve = type_curve(patterns, t, mpart);
        for segment in segments(&curve) {
            chart
                .draw_series(LineSeries::new(segment.iter().copied(), c.stroke_width(2)))
                .map_err(draw_error)?;
        }
        let points = curve
            .iter()
            .enumerate()
            .filter_map(|(x, v)| v.filter(|v| *v > 0.0).map(|v| (x as f64, v)));
        chart
            .draw_series(points.map(|p| Circle::new(p, 3, c.filled())))
            .map_err(draw_error)?;
    }
    Ok(())
}

/// The legend of a row, in the strip right of its panels: one line per pattern type.
fn legend<DB: DrawingBackend>(strip: &DrawingArea<DB, Shift>, part: &Partition) -> Result<()> {
    let mut present: Vec<usize> = Access::ALL
        .iter()
        .flat_map(|a| types(part.access.of(*a)))
        .collect();
    present.sort_unstable();
    present.dedup();
    let text = (super::font::FAMILY, style::LABEL).into_text_style(strip);
    let top = 90;
    for (row, t) in present.into_iter().enumerate() {
        let c = colour(t);
        let y = top + 28 * row as i32;
        strip
            .draw(&PathElement::new(vec![(6, y), (34, y)], c.stroke_width(3)))
            .map_err(draw_error)?;
        strip
            .draw(&Circle::new((20, y), 3, c.filled()))
            .map_err(draw_error)?;
        strip
            .draw(&Text::new(type_label(t), (42, y - 9), text.clone()))
            .map_err(draw_error)?;
    }
    Ok(())
}

/// The label of an x position: the chunk size's name at whole positions, nothing between.
fn chunk_label(v: f64) -> String {
    let i = v.round();
    if (v - i).abs() > 1e-6 || !(0.0..=6.0).contains(&i) {
        return String::new();
    }
    chunk_labels().swap_remove(i as usize)
}

/// The names of the x axis' positions: the summary table's chunk sizes ([`row_sizes`]) as
/// b_eff_io writes them, `MPART` last.
pub fn chunk_labels() -> Vec<String> {
    let mut labels: Vec<String> = row_sizes(0).iter().map(|&l| format_size(l)).collect();
    if let Some(last) = labels.last_mut() {
        *last = "MPART".into();
    }
    labels
}

/// The runs of consecutive present, positive values of a curve, as (x, value) points.
pub fn segments(curve: &[Option<f64>]) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current = Vec::new();
    for (x, v) in curve.iter().enumerate() {
        match v.filter(|v| *v > 0.0) {
            Some(v) => current.push((x as f64, v)),
            None if !current.is_empty() => out.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_split_the_lines() {
        let s = segments(&[Some(1.0), Some(2.0), None, Some(3.0), Some(0.0), Some(4.0)]);
        assert_eq!(
            s,
            vec![
                vec![(0.0, 1.0), (1.0, 2.0)],
                vec![(3.0, 3.0)],
                vec![(5.0, 4.0)]
            ]
        );
        assert_eq!(chunk_label(6.0), "MPART");
        assert_eq!(chunk_label(2.5), "");
    }
}
