//! A safe MPI-IO layer over the `mpi` crate's raw bindings.
//!
//! - [`File`]: open/close/delete, views, individual and shared file pointers, collective,
//!   independent and ordered reads and writes, sync, size.
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
mod mode;

pub use datatype::Datatype;
pub use error::{Error, ErrorClass, Result};
pub use file::{File, Whence};
pub use mode::AccessMode;

/// `MPI_Offset`: byte offsets and sizes in files.
pub type Offset = i64;
