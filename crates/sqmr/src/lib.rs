//! `sqmr`, the Sequoia message-rate benchmark, on MPI.
//!
//! Layers, from pure to MPI:
//! - [`options`], [`config`], [`topology`], [`schedule`], [`rates`], [`placement`],
//!   the message pattern, [`stats`], [`anomalies`] and [`report`]: plain data in, plain
//!   data out, tested without MPI;
//! - the execution (`exec`): buffers, the raw request window (the only `unsafe`), the timed loop;
//! - [`app`]: one run from parsed options to printed rows, with every failure agreed on
//!   by all ranks so that they leave together.
//!
//! The execution and [`app`] need the default `mpi` feature; without it the crate builds with
//! no MPI library, so that readers of its documents (`xylem`) use the writer's own types;
//! the parts only the execution uses are then unused.

#![cfg_attr(not(feature = "mpi"), allow(dead_code))]

pub mod anomalies;
#[cfg(feature = "mpi")]
pub mod app;
pub mod config;
#[cfg(feature = "mpi")]
mod exec;
pub mod forecast;
mod host;
pub mod independence;
pub mod options;
mod pattern;
pub mod placement;
pub mod rates;
pub mod report;
pub mod scan;
pub mod schedule;
pub mod stats;
pub mod topology;
