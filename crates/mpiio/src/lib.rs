//! Safe MPI-IO.
