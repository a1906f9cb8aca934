//! MPI constants the `mpi` crate does not export, read from the library's own `mpi.h`
//! (`c/constants.c`, compiled by this crate's build script).

use mpi::ffi::MPI_Datatype;

extern "C" {
    fn xylem_mpi_byte() -> MPI_Datatype;
}

/// `MPI_BYTE`: untyped bytes, what the sqmr reference sends.
pub fn byte() -> MPI_Datatype {
    // SAFETY: the function only returns the MPI_BYTE handle of the library it was
    // compiled against (the same one the mpi crate links); it reads no memory of ours
    // and needs no initialised MPI.
    unsafe { xylem_mpi_byte() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_is_its_own_handle_not_uint8() {
        // SAFETY: reading an initialised constant exported by the MPI shim library.
        let uint8 = unsafe { mpi::ffi::RSMPI_UINT8_T };
        // SAFETY: as above.
        let null = unsafe { mpi::ffi::RSMPI_DATATYPE_NULL };
        assert_ne!(byte(), uint8);
        assert_ne!(byte(), null);
    }
}
