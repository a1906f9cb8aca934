//! The summary of a results folder as Markdown: the headline figures of `sqmr.json` and
//! `b_eff_io.json` and links to their plots, CSV, text and JSON (what `make demo` writes
//! as `summary.md`, through `xylem summary`).
//!
//! Every text that comes from a document or the file system (the folder's name, host
//! names, the MPI library, the path, the reasons and cautions that quote them) goes
//! through [`crate::markdown::field`]: it reads as what it is, never as a heading, a
//! table, a tag or a line of its own.

use std::fmt::Write;
use std::path::Path;

use beffio::report::json as beffio_doc;
use sqmr::report::json as sqmr_doc;

use crate::error::Error;
use crate::load::{load_file, Document, Result};

/// The result files a summary looks for in a folder, by the name `make demo` gives them.
pub const FILES: [&str; 2] = ["sqmr.json", "b_eff_io.json"];

/// The summary of `folder`: a title naming it, then a section per result present among
/// [`FILES`]. A folder with neither is an error, as is a result that does not read.
pub fn of_folder(folder: &Path) -> Result<String> {
    let mut sqmr = None;
    let mut beffio = None;
    for name in FILES {
        let path = folder.join(name);
        if !path.exists() {
            continue;
        }
        match load_file(&path, None)?.document {
            Document::Sqmr(d) if name == "sqmr.json" => sqmr = Some(d),
            Document::BEffIo(d) if name == "b_eff_io.json" => beffio = Some(d),
            _ => {
                return Err(Error::Usage(format!(
                    "{}: not the result its name says",
                    path.display()
                )))
            }
        }
    }
    if sqmr.is_none() && beffio.is_none() {
        return Err(Error::Usage(format!(
            "{}: no {} or {} to summarise",
            folder.display(),
            FILES[0],
            FILES[1]
        )));
    }
    let name = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| folder.display().to_string());
    Ok(markdown(&name, sqmr.as_ref(), beffio.as_ref()))
}

/// The summary of a folder called `name` holding these results.
pub fn markdown(
    name: &str,
    sqmr: Option<&sqmr_doc::Document>,
    beffio: Option<&beffio_doc::Document>,
) -> String {
    let mut parts = vec![format!("# xylem results, {}\n", md(name))];
    parts.extend(sqmr.map(sqmr_section));
    parts.extend(beffio.map(beffio_section));
    parts.join("\n")
}

/// A message size as the summary writes it: `64 KiB`, `4 MiB`, `1000 B`.
pub fn size(bytes: u64) -> String {
    for (factor, suffix) in [(1 << 20, "MiB"), (1 << 10, "KiB")] {
        if bytes >= factor && bytes.is_multiple_of(factor) {
            return format!("{} {suffix}", bytes / factor);
        }
    }
    format!("{bytes} B")
}

/// `1234567.8` as `1,234,568` with `decimals` = 0, `1,234,567.8` with 1.
pub fn grouped(value: f64, decimals: usize) -> String {
    let text = format!("{:.*}", decimals, value.abs());
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let mut out = String::new();
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    if !fraction.is_empty() {
        out.push('.');
        out.push_str(fraction);
    }
    if value < 0.0 {
        out.insert(0, '-');
    }
    out
}

/// A field from a document, escaped for Markdown.
fn md(text: &str) -> std::borrow::Cow<'_, str> {
    crate::markdown::field(text)
}

fn links(name: &str) -> String {
    format!(
        "[plot (SVG)]({name}.svg), [CSV]({name}.csv), [JSON]({name}.json), \
         [text]({name}.txt)\n\n![{name}]({name}.png)\n"
    )
}

fn sqmr_section(doc: &sqmr_doc::Document) -> String {
    let mut out = format!(
        "## sqmr: {}\n\n",
        md(&crate::describe::SqmrKind::of(doc).heading())
    );
    let c = &doc.config;
    let library = doc
        .environment
        .mpi_library
        .split(',')
        .next()
        .unwrap_or_default()
        .trim();
    let range = match (doc.sizes.first(), doc.sizes.last()) {
        (Some(first), Some(last)) => {
            format!("{} .. {}", size(first.msgsize), size(last.msgsize))
        }
        _ => "no size finished".into(),
    };
    let _ = writeln!(
        out,
        "{} core rank(s) x {} neighbour(s), window {}, {range}, {library}{}.\n",
        c.num_cores,
        c.num_nbors,
        c.win_size,
        if doc.complete { "" } else { " (INCOMPLETE)" },
        library = md(library),
    );
    for caution in crate::describe::sqmr_cautions(doc) {
        let _ = writeln!(out, "**Caution:** {}.\n", md(&caution));
    }
    out.push_str("| figure | value | at |\n| --- | ---: | ---: |\n");
    if let Some((at, rate)) = doc.peak_rate() {
        let _ = writeln!(
            out,
            "| peak message rate | {} msgs/s | {} |",
            grouped(rate, 0),
            size(at)
        );
    }
    if let Some((at, bw)) = doc.peak_bandwidth() {
        let _ = writeln!(
            out,
            "| peak bandwidth | {} MiB/s | {} |",
            grouped(bw, 1),
            size(at)
        );
    }
    out.push('\n');
    out + &links("sqmr")
}

fn beffio_section(doc: &beffio_doc::Document) -> String {
    let mut out = String::from("## b_eff_io: effective I/O bandwidth\n\n");
    let _ = writeln!(
        out,
        "{} processes, T = {} s, MPART = {} MB, path {}.\n",
        doc.processes,
        doc.scheduled_time_s,
        doc.mpart_bytes >> 20,
        md(&doc.path)
    );
    out.push_str("| figure | MB/s (10^6 B/s) |\n| --- | ---: |\n");
    let _ = writeln!(
        out,
        "| **b_eff_io** (best partition, n = {}) | **{}** |",
        doc.best_partition,
        grouped(doc.b_eff_io_mb_s, 1)
    );
    for p in &doc.partitions {
        let _ = writeln!(
            out,
            "| partition n = {} | {} |",
            p.processes,
            grouped(p.b_eff_io_mb_s, 1)
        );
    }
    out.push('\n');
    if doc.valid {
        out.push_str("The run is VALID.\n\n");
    } else {
        let _ = writeln!(
            out,
            "The run is NOT VALID: {}.\n",
            md(&doc.invalid_reasons.join("; "))
        );
    }
    out + &links("b_eff_io")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_thousands_read_as_in_the_tables() {
        assert_eq!(size(65536), "64 KiB");
        assert_eq!(size(4 << 20), "4 MiB");
        assert_eq!(size(1000), "1000 B");
        assert_eq!(size(0), "0 B");
        assert_eq!(grouped(1_234_567.8, 0), "1,234,568");
        assert_eq!(grouped(1_234_567.84, 1), "1,234,567.8");
        assert_eq!(grouped(999.0, 1), "999.0");
        assert_eq!(grouped(-1234.0, 0), "-1,234");
    }
}
