//! Everything that can go wrong, each error naming the file it is about.

use std::path::PathBuf;

/// An error of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be read: it is missing, not a regular file (a FIFO, a device),
    /// or larger than [`crate::load::MAX_INPUT_BYTES`]. The message names it.
    #[error("{0}")]
    Read(#[from] outfile::input::InputError),
    /// The file is not JSON at all.
    #[error("{path}: not a JSON document: {source}")]
    NotJson {
        /// The file.
        path: PathBuf,
        /// Where the parser stopped.
        source: serde_json::Error,
    },
    /// The JSON has no `"benchmark"` field, or names a benchmark we do not know.
    #[error(
        "{path}: not a sqmr or b_eff_io result ({found}); expected a document written by \
         `sqmr --json` or `b_eff_io --json`"
    )]
    UnknownKind {
        /// The file.
        path: PathBuf,
        /// What was found instead, in words.
        found: String,
    },
    /// The JSON says which benchmark wrote it, but lacks a field the reports need.
    #[error("{path}: a {kind} result, but malformed: {reason}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// The benchmark it claims to be.
        kind: &'static str,
        /// The field that is missing or of the wrong type, or a newer schema version.
        reason: String,
    },
    /// Results of different benchmarks given together.
    #[error("{first} is a {first_kind} result but {other} is a {other_kind} result; give results of one benchmark")]
    MixedKinds {
        /// The first file.
        first: String,
        /// Its kind.
        first_kind: &'static str,
        /// The first file of another kind.
        other: String,
        /// Its kind.
        other_kind: &'static str,
    },
    /// A result with nothing to plot or compare.
    #[error("{path}: {what}")]
    Empty {
        /// The file.
        path: String,
        /// What is missing.
        what: String,
    },
    /// No usable font for the text of a plot.
    #[error("no font for the plot's text: {0}")]
    Font(String),
    /// Drawing failed.
    #[error("drawing the plot failed: {0}")]
    Draw(String),
    /// A usage error: wrong output name, labels, and the like.
    #[error("{0}")]
    Usage(String),
}
