//! b_eff_io, the effective I/O bandwidth benchmark on MPI-IO.
//!
//! The MPI-free core, public for the readers of its documents: [`options`], the
//! [`patterns`] table, the [`schedule`] of partitions and time budgets, [`units`], the
//! [`filesystem`] a run reports, and the [`report`] formats (the JSON document, read back
//! by `analysis` and `xylem`). Inside: the MPI-IO hints (`--hint`, 2.1's hints file), the
//! results, the figures and the validity rules.
//!
//! With the default `mpi` feature: [`run`], the execution (the geometric batch planner,
//! the segment rule of types 3 and 4, the MPI-IO calls), and
//! [`outputs`], the output files and checked standard output. Without it the crate builds
//! with no MPI library; the parts only the execution uses are then unused.

#![cfg_attr(not(feature = "mpi"), allow(dead_code))]

pub mod anomalies;
#[cfg(feature = "mpi")]
mod batch;
mod figures;
pub mod filesystem;
mod hints;
mod markers;
pub mod options;
#[cfg(feature = "mpi")]
pub mod outputs;
mod pagebuf;
pub mod patterns;
pub mod report;
mod results;
#[cfg(feature = "mpi")]
pub mod run;
pub mod schedule;
mod segment;
pub mod units;
mod validity;
