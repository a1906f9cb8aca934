//! Results people can look at: plots (SVG and PNG), side-by-side comparisons and the
//! headline figures of `sqmr` and `b_eff_io` JSON results.
//!
//! Pure: JSON text in, SVG/PNG bytes or text out. The kind of a result is read from its
//! `"benchmark"` field; each document is read with its writer's own type and reader
//! (`sqmr::report::json::Document::from_json`, `beffio::report::json::Document::from_json`,
//! built without MPI), which also read the older schema versions.
//!
//! - [`load`]: read a file, tell its kind, give [`load::Run`] with a label; every input
//!   file is read through [`read_input`]: a regular file of at most [`MAX_INPUT_BYTES`];
//! - [`plot`]: the plots; [`compare`]: the comparisons;
//! - [`perflog`]: ReFrame performance logs of xylem's checks, as series over time;
//! - [`summary`]: a results folder's headline figures as Markdown, every field from a
//!   document escaped by [`markdown::field`].

#![forbid(unsafe_code)]

pub mod compare;
pub mod describe;
pub mod error;
pub mod load;
pub mod markdown;
pub mod perflog;
pub mod plot;
pub mod summary;

pub use error::Error;
pub use load::{input_rules, load_file, parse, read_input, Kind, Result, Run, MAX_INPUT_BYTES};
