//! The plots: sqmr's rate and bandwidth curves, b_eff_io's rows of three panels, and
//! `sqmr --scan`'s node-by-node heat map.
//!
//! Both are drawn with plotters on any backend: SVG as text, PNG through an RGB buffer
//! encoded by [`png`](mod@png_file). Text is laid out with a TrueType font found at
//! run time ([`font`]).

pub mod beffio;
pub mod font;
pub mod notes;
pub mod png_file;
pub mod scan;
pub mod sqmr;
pub mod style;

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::Error;
use crate::load::{one_kind, Document, Kind, Result, Run};

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Scalable vector graphics.
    Svg,
    /// A PNG picture.
    Png,
}

impl Format {
    /// The format an output file's name asks for: `.svg` or `.png` (any case).
    pub fn from_path(path: &Path) -> Result<Format> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match ext.as_deref() {
            Some("svg") => Ok(Format::Svg),
            Some("png") => Ok(Format::Png),
            _ => Err(Error::Usage(format!(
                "{}: the output name must end in .svg or .png",
                path.display()
            ))),
        }
    }
}

/// The plot of `runs` (all of one kind) in `format`, as the bytes of the file.
pub fn plot(runs: &[Run], format: Format) -> Result<Vec<u8>> {
    let kind = one_kind(runs)?;
    for run in runs {
        if let Some(what) = nothing_to_plot(&run.document) {
            return Err(Error::Empty {
                path: run.source.clone(),
                what: what.into(),
            });
        }
    }
    if kind == Kind::BEffIo {
        let rows = beffio::rows(&beffio_docs(runs));
        if rows > beffio::MAX_ROWS {
            return Err(Error::Usage(format!(
                "{rows} partitions to plot, more than the {} rows one picture holds; plot \
                 fewer results at a time",
                beffio::MAX_ROWS
            )));
        }
    }
    if kind == Kind::SqmrScan && runs.len() > 1 {
        return Err(Error::Usage(format!(
            "{} scans given: a picture holds one scan (its nodes on both axes)",
            runs.len()
        )));
    }
    font::ensure()?;
    let size = match kind {
        Kind::Sqmr => sqmr::size(&sqmr_docs(runs)),
        Kind::BEffIo => beffio::size(&beffio_docs(runs)),
        Kind::SqmrScan => scan::size(scan_doc(runs).map_or(0, |d| d.scan.nodes.len())),
    };
    render(
        size,
        format,
        |root| draw(root, kind, runs),
        |root| draw(root, kind, runs),
    )
}

/// A picture of `size` pixels in `format`, as the bytes of the file: `svg` or `png` draws
/// it (the same drawing function, once per backend).
pub fn render(
    size: (u32, u32),
    format: Format,
    svg: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<()>,
    png: impl FnOnce(&DrawingArea<BitMapBackend, Shift>) -> Result<()>,
) -> Result<Vec<u8>> {
    match format {
        Format::Svg => {
            let mut text = String::new();
            {
                let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
                svg(&root)?;
                root.present().map_err(draw_error)?;
            }
            Ok(text.into_bytes())
        }
        Format::Png => {
            let mut pixels = vec![0u8; size.0 as usize * size.1 as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut pixels, size).into_drawing_area();
                png(&root)?;
                root.present().map_err(draw_error)?;
            }
            png_file::encode(&pixels, size)
        }
    }
}

/// Why a document gives an empty plot, if it does.
pub fn nothing_to_plot(document: &Document) -> Option<&'static str> {
    match document {
        Document::Sqmr(d) => {
            let positive = |d: &::sqmr::report::json::Document| {
                sqmr::points(d, |r| r.msgs_per_s).len() + sqmr::points(d, |r| r.mib_per_s).len()
            };
            (positive(d) == 0).then_some("no message size above 0 with rates above 0 to plot")
        }
        Document::SqmrScan(d) if d.scan.pairs.is_empty() => Some("no pair of nodes measured"),
        Document::SqmrScan(_) => None,
        Document::BEffIo(d) if d.partitions.is_empty() => Some("no partition to plot"),
        Document::BEffIo(d) => {
            let measured = d.partitions.iter().any(|p| {
                ::beffio::schedule::Access::ALL
                    .iter()
                    .flat_map(|a| p.access.of(*a))
                    .any(|p| p.u > 0 && p.bandwidth_mb_s > 0.0)
            });
            (!measured).then_some("no measured pattern with a bandwidth above 0 to plot")
        }
    }
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    kind: Kind,
    runs: &[Run],
) -> Result<()> {
    root.fill(&WHITE).map_err(draw_error)?;
    match kind {
        Kind::Sqmr => sqmr::draw(root, &sqmr_docs(runs)),
        Kind::BEffIo => beffio::draw(root, &beffio_docs(runs)),
        Kind::SqmrScan => match scan_doc(runs) {
            Some(doc) => scan::draw(root, doc),
            None => Ok(()),
        },
    }
}

fn scan_doc(runs: &[Run]) -> Option<&::sqmr::scan::report::ScanDocument> {
    runs.iter().find_map(|r| match &r.document {
        Document::SqmrScan(d) => Some(&**d),
        _ => None,
    })
}

fn sqmr_docs(runs: &[Run]) -> Vec<(&str, &::sqmr::report::json::Document)> {
    runs.iter()
        .filter_map(|r| match &r.document {
            Document::Sqmr(d) => Some((r.label.as_str(), d)),
            _ => None,
        })
        .collect()
}

fn beffio_docs(runs: &[Run]) -> Vec<(&str, &::beffio::report::json::Document)> {
    runs.iter()
        .filter_map(|r| match &r.document {
            Document::BEffIo(d) => Some((r.label.as_str(), d)),
            _ => None,
        })
        .collect()
}

/// A plotters error as ours.
pub(crate) fn draw_error<E: std::error::Error + Send + Sync>(
    e: plotters::drawing::DrawingAreaErrorKind<E>,
) -> Error {
    Error::Draw(e.to_string())
}
