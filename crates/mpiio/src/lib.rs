//! A safe MPI-IO layer over the `mpi` crate's raw bindings.
//!
//! - [`File`]: open (with MPI-IO hints or without), close, delete, views, individual and
//!   shared file pointers, collective, independent and ordered reads and writes, sync,
//!   size, and the hints the library reports ([`File::info`]). Reads fill their buffer
//!   with the file's bytes, so they take only plain-data types (`bytemuck::AnyBitPattern`:
//!   any bytes are a valid value), never `bool`, `char` or references:
//!
//! ```compile_fail
//! fn read_flags(file: &mut mpiio::File, flags: &mut [bool]) {
//!     file.read(flags).unwrap(); // bool is not AnyBitPattern
//! }
//! ```
//!
//! ```no_run
//! fn read_words(file: &mut mpiio::File, words: &mut [u64]) -> mpiio::Result<()> {
//!     file.read(words)
//! }
//! ```
//! - [`Datatype`]: derived datatypes for file views (contiguous, vector, subarray, resized).
//! - [`Error`]: every MPI failure carries the failing call, the file name and MPI's own text.
//!
//! Files are switched to `MPI_ERRORS_RETURN`, so errors come back as values instead of
//! aborting the job; callers decide collectively what to do with them.
//!
//! All `unsafe` of the workspace's MPI-IO lives here, every block with a `SAFETY:` note.

mod datatype;
mod error;
mod file;
mod info;
mod mode;

pub use datatype::Datatype;
pub use error::{Cause, Error, ErrorClass, Result};
pub use file::{File, Whence};
pub use info::{check_hint, MAX_INFO_KEY_LEN, MAX_INFO_VALUE_LEN};
pub use mode::AccessMode;

/// `MPI_Offset`: byte offsets and sizes in files.
pub type Offset = i64;
