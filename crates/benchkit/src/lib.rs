//! What every xylem benchmark binary is built from, so that they behave alike:
//!
//! - [`exit`]: one exit-code type (0, 1, 2, 3, 5, 128 + signal) with its meaning;
//! - [`size`]: one grammar for byte counts on the command line (`4096`, `64K`, `64MiB`,
//!   `1.5G`), with the ranges each option takes;
//! - [`network`]: one definition of `--enable`, `--disable` and `--strict`;
//! - [`progress`]: progress on standard error, live on a terminal, plain lines otherwise.
//!
//! Nothing here needs MPI: the benchmarks' MPI-free cores (options, plans, documents)
//! use it as their MPI execution does.

pub mod exit;
pub mod network;
pub mod progress;
pub mod size;

pub use exit::Exit;
