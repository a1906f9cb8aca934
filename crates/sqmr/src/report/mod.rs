//! Everything `sqmr` writes: the reference's text table, our JSON document and CSV rows.

pub mod csv;
pub mod json;
pub mod output;
pub mod text;
