//! The part that talks to MPI: buffers, the window of requests, the timed loop.

pub mod buffers;
pub mod run;
pub mod scan;
pub mod window;
