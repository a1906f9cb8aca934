//! The lines under a picture's title: what each result is (nodes, ranks, MPI, date) and,
//! in red, what could make its figures mislead (a run within one node, a run cut short,
//! NOT VALID), so that the picture carries its caveats wherever it is pasted.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::draw_error;
use super::style;
use crate::describe;
use crate::load::Result;

/// The height of one line, in pixels.
pub const LINE_HEIGHT: u32 = 20;
/// The colour of a caution.
pub const CAUTION: RGBColor = RGBColor(190, 0, 0);

/// One line: its text and whether it is a caution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The words.
    pub text: String,
    /// Drawn in [`CAUTION`] red.
    pub caution: bool,
}

/// The lines of some results: per result one line on what it is, then its cautions, each
/// led by the result's label when there are several.
pub fn lines<D>(
    docs: &[(&str, &D)],
    about: impl Fn(&D) -> String,
    cautions: impl Fn(&D) -> Vec<String>,
) -> Vec<Line> {
    let several = docs.len() > 1;
    let mut out = Vec::new();
    for (label, doc) in docs {
        let lead = if several {
            format!("{label}: ")
        } else {
            String::new()
        };
        out.push(Line {
            text: format!("{lead}{}", about(doc)),
            caution: false,
        });
        out.extend(cautions(doc).into_iter().map(|c| Line {
            text: format!("{lead}{c}"),
            caution: true,
        }));
    }
    out
}

/// The lines of sqmr results.
pub fn sqmr(docs: &[(&str, &::sqmr::report::json::Document)]) -> Vec<Line> {
    lines(docs, describe::sqmr_line, describe::sqmr_cautions)
}

/// The lines of b_eff_io results.
pub fn beffio(docs: &[(&str, &::beffio::report::json::Document)]) -> Vec<Line> {
    lines(docs, describe::beffio_line, describe::beffio_cautions)
}

/// The height `lines` take.
pub fn height(lines: &[Line]) -> u32 {
    LINE_HEIGHT * lines.len() as u32
}

/// Draws `lines` on `area`, one under the other.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, lines: &[Line]) -> Result<()> {
    for (i, line) in lines.iter().enumerate() {
        let colour = if line.caution { CAUTION } else { BLACK };
        let font = (super::font::FAMILY, style::TICK)
            .into_font()
            .color(&colour);
        // Fields of the documents: control characters shown, never drawn (nor put in
        // an SVG, where they are not XML).
        let text = outfile::shown::text(&line.text);
        area.draw_text(&text, &font, (20, 2 + LINE_HEIGHT as i32 * i as i32))
            .map_err(draw_error)?;
    }
    Ok(())
}
