//! Fixtures: real results of short runs (see tests/fixtures/README.md).

#![allow(dead_code)]

use std::path::PathBuf;

use analysis::Run;

/// The path of fixture `name`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Fixture `name` loaded with its default label.
pub fn run(name: &str) -> Run {
    analysis::load_file(&fixture(name), None).unwrap()
}

/// The colour of series `i` as the SVG writes it (`#1F77B4`).
pub fn hex(i: usize) -> String {
    let c = analysis::plot::style::colour(i);
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}
