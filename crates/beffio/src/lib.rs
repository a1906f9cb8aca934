//! b_eff_io, the effective I/O bandwidth benchmark on MPI-IO.
//!
//! The pure layer (no MPI): [`options`], the [`patterns`] table, the [`schedule`] of
//! partitions and time budgets, the geometric [`batch`] planner, the [`segment`] rule of
//! types 3 and 4, chunk [`markers`], the MPI-IO [`hints`] (`--hint`, 2.1's hints file),
//! [`results`] types, the [`figures`], [`validity`] and the [`report`] formats; the output files and checked standard output in [`outputs`]. The
//! execution layer lives in [`run`].

pub mod batch;
pub mod figures;
pub mod filesystem;
pub mod hints;
pub mod markers;
pub mod options;
#[cfg(feature = "mpi")]
pub mod outputs;
pub mod patterns;
pub mod report;
pub mod results;
#[cfg(feature = "mpi")]
pub mod run;
pub mod schedule;
pub mod segment;
pub mod units;
pub mod validity;
