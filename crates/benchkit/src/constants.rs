//! MPI constants the `mpi` crate does not export, read from the library's own `mpi.h`
//! (`c/constants.c`, compiled by this crate's build script).

use mpi::ffi::MPI_Datatype;

extern "C" {
    fn xylem_mpi_byte() -> MPI_Datatype;
    fn xylem_mpi_header() -> *const std::os::raw::c_char;
}

/// `MPI_BYTE`: untyped bytes, what the sqmr reference sends.
pub fn byte() -> MPI_Datatype {
    // SAFETY: the function only returns the MPI_BYTE handle of the library it was
    // compiled against (the same one the mpi crate links); it reads no memory of ours
    // and needs no initialised MPI.
    unsafe { xylem_mpi_byte() }
}

/// The MPI library this binary was built against, as its `mpi.h` names it:
/// `Open MPI 4.1.4`, `MPICH 4.0.2`, `Intel MPI 2021.13.1`.
pub fn header_library() -> String {
    // SAFETY: the function returns a pointer to a string literal of the C shim: static,
    // NUL-terminated, never freed; it needs no initialised MPI.
    let name = unsafe { std::ffi::CStr::from_ptr(xylem_mpi_header()) };
    name.to_string_lossy().into_owned()
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

    #[test]
    fn the_header_names_a_library_and_a_version() {
        let name = header_library();
        let known = ["Open MPI ", "MPICH ", "Intel MPI ", "MVAPICH2 "];
        assert!(known.iter().any(|k| name.starts_with(k)), "{name}");
        assert!(name.chars().any(|c| c.is_ascii_digit()), "{name}");
    }
}
