//! Everything `sqmr` writes: the reference's text table and our JSON document.

pub mod json;
pub mod text;
