//! Results people can look at: plots (SVG and PNG), side-by-side comparisons and the
//! headline figures of `sqmr` and `b_eff_io` JSON results.
//!
//! Pure: JSON text in, SVG/PNG bytes or text out. The kind of a result is read from its
//! `"benchmark"` field; only the fields the reports use are read, so a document with more
//! fields (a newer writer) still loads.
//!
//! - [`load`]: read a file, tell its kind, give [`load::Run`] with a label;
//! - [`sqmr`] and [`beffio`]: the fields of each document that the reports use;
//! - [`plot`]: the plots; [`compare`]: the comparisons;
//! - [`perflog`]: ReFrame performance logs of xylem's checks, as series over time.

#![forbid(unsafe_code)]

pub mod beffio;
pub mod compare;
pub mod error;
pub mod load;
pub mod perflog;
pub mod plot;
pub mod sqmr;

pub use error::Error;
pub use load::{load_file, parse, Kind, Result, Run};
