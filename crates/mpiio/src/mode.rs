//! File access modes (`MPI_MODE_*`).

use mpi::ffi;
use std::ops::BitOr;
use std::os::raw::c_int;

/// A set of `MPI_MODE_*` flags for [`File::open`](crate::File::open).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessMode(c_int);

impl AccessMode {
    /// `MPI_MODE_RDONLY`.
    pub const READ_ONLY: AccessMode = AccessMode(ffi::MPI_MODE_RDONLY as c_int);
    /// `MPI_MODE_WRONLY`.
    pub const WRITE_ONLY: AccessMode = AccessMode(ffi::MPI_MODE_WRONLY as c_int);
    /// `MPI_MODE_RDWR`.
    pub const READ_WRITE: AccessMode = AccessMode(ffi::MPI_MODE_RDWR as c_int);
    /// `MPI_MODE_CREATE`.
    pub const CREATE: AccessMode = AccessMode(ffi::MPI_MODE_CREATE as c_int);
    /// `MPI_MODE_EXCL`: fail if the file exists.
    pub const EXCLUSIVE: AccessMode = AccessMode(ffi::MPI_MODE_EXCL as c_int);
    /// `MPI_MODE_DELETE_ON_CLOSE`.
    pub const DELETE_ON_CLOSE: AccessMode = AccessMode(ffi::MPI_MODE_DELETE_ON_CLOSE as c_int);
    /// `MPI_MODE_UNIQUE_OPEN` (lets the library delay syncs; b_eff_io does not use it).
    pub const UNIQUE_OPEN: AccessMode = AccessMode(ffi::MPI_MODE_UNIQUE_OPEN as c_int);
    /// `MPI_MODE_APPEND`.
    pub const APPEND: AccessMode = AccessMode(ffi::MPI_MODE_APPEND as c_int);

    /// The raw flag word.
    pub fn bits(self) -> c_int {
        self.0
    }

    /// Whether all flags of `other` are set.
    pub fn contains(self, other: AccessMode) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for AccessMode {
    type Output = AccessMode;
    fn bitor(self, rhs: AccessMode) -> AccessMode {
        AccessMode(self.0 | rhs.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_combine() {
        let m = AccessMode::CREATE | AccessMode::WRITE_ONLY | AccessMode::EXCLUSIVE;
        assert!(m.contains(AccessMode::CREATE));
        assert!(m.contains(AccessMode::WRITE_ONLY));
        assert!(!m.contains(AccessMode::READ_ONLY) || AccessMode::READ_ONLY.bits() == 0);
        assert_ne!(AccessMode::CREATE.bits(), AccessMode::EXCLUSIVE.bits());
    }
}
