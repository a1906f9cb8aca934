//! Datatypes for buffers and file views: predefined ones and owned derived ones.

use crate::error::{check, count, Result};
use mpi::datatype::Equivalence;
use mpi::ffi;
use mpi::raw::AsRaw;
use std::mem::MaybeUninit;
use std::os::raw::c_int;

/// An MPI datatype: either predefined (borrowed from MPI) or derived and committed
/// (freed on drop).
#[derive(Debug)]
pub struct Datatype {
    raw: ffi::MPI_Datatype,
    owned: bool,
}

const CALL_SITE: &str = "(datatype)";

impl Datatype {
    /// The predefined datatype equivalent to `T` (e.g. `u8` → `MPI_UINT8_T`).
    pub fn of<T: Equivalence>() -> Datatype {
        Datatype {
            raw: T::equivalent_datatype().as_raw(),
            owned: false,
        }
    }

    /// The raw handle.
    pub fn as_raw(&self) -> ffi::MPI_Datatype {
        self.raw
    }

    /// `count` consecutive copies of `base` (`MPI_Type_contiguous`), committed.
    pub fn contiguous(count_: usize, base: &Datatype) -> Result<Datatype> {
        let call = "MPI_Type_contiguous";
        let n = count(count_, call, CALL_SITE)?;
        Self::derive(call, |out| {
            // SAFETY: `base.raw` is a valid datatype for the lifetime of `base`; `out` is a
            // valid out-pointer for one handle.
            unsafe { ffi::MPI_Type_contiguous(n, base.raw, out) }
        })
    }

    /// `count` blocks of `block` elements, `stride` elements apart (`MPI_Type_vector`), committed.
    pub fn vector(count_: usize, block: usize, stride: usize, base: &Datatype) -> Result<Datatype> {
        let call = "MPI_Type_vector";
        let (n, b, s) = (
            count(count_, call, CALL_SITE)?,
            count(block, call, CALL_SITE)?,
            count(stride, call, CALL_SITE)?,
        );
        Self::derive(call, |out| {
            // SAFETY: as in `contiguous`: valid base handle and out-pointer.
            unsafe { ffi::MPI_Type_vector(n, b, s, base.raw, out) }
        })
    }

    /// A C-order sub-array of `subsizes` at `starts` in an array of `sizes` (`MPI_Type_create_subarray`), committed.
    pub fn subarray(
        sizes: &[usize],
        subsizes: &[usize],
        starts: &[usize],
        base: &Datatype,
    ) -> Result<Datatype> {
        let call = "MPI_Type_create_subarray";
        let conv = |v: &[usize]| -> Result<Vec<c_int>> {
            v.iter().map(|&x| count(x, call, CALL_SITE)).collect()
        };
        let (sz, sub, st) = (conv(sizes)?, conv(subsizes)?, conv(starts)?);
        if sz.len() != sub.len() || sz.len() != st.len() || sz.is_empty() {
            return Err(crate::Error::Invalid {
                call,
                file: CALL_SITE.into(),
                reason: "sizes, subsizes and starts must have the same non-zero length".into(),
            });
        }
        let ndims = count(sz.len(), call, CALL_SITE)?;
        Self::derive(call, |out| {
            // SAFETY: the three arrays hold `ndims` ints each and outlive the call; base and
            // out are valid.
            unsafe {
                ffi::MPI_Type_create_subarray(
                    ndims,
                    sz.as_ptr(),
                    sub.as_ptr(),
                    st.as_ptr(),
                    ffi::MPI_ORDER_C as c_int,
                    base.raw,
                    out,
                )
            }
        })
    }

    /// This type with lower bound `lb` and extent `extent` bytes (`MPI_Type_create_resized`), committed.
    // The casts are to MPI_Aint, which is isize under Open MPI but i64 under MPICH.
    #[allow(clippy::unnecessary_cast)]
    pub fn resized(&self, lb: isize, extent: isize) -> Result<Datatype> {
        Self::derive("MPI_Type_create_resized", |out| {
            // MPI_Aint is pointer-sized by definition (isize under Open MPI, i64 under
            // MPICH on 64-bit Linux), so these conversions are lossless.
            let (lb, extent) = (lb as ffi::MPI_Aint, extent as ffi::MPI_Aint);
            // SAFETY: `self.raw` is valid while `self` lives; `out` is a valid out-pointer.
            unsafe { ffi::MPI_Type_create_resized(self.raw, lb, extent, out) }
        })
    }

    /// Size in bytes of the data in one element of this type (`MPI_Type_size`).
    pub fn size(&self) -> Result<usize> {
        let mut size: c_int = 0;
        // SAFETY: valid handle and out-pointer.
        let rc = unsafe { ffi::MPI_Type_size(self.raw, &mut size) };
        check(rc, "MPI_Type_size", CALL_SITE)?;
        Ok(size.max(0) as usize)
    }

    /// Lower bound and extent in bytes (`MPI_Type_get_extent`).
    // The casts are from MPI_Aint, which is isize under Open MPI but i64 under MPICH.
    #[allow(clippy::unnecessary_cast)]
    pub fn extent(&self) -> Result<(isize, isize)> {
        let (mut lb, mut extent): (ffi::MPI_Aint, ffi::MPI_Aint) = (0, 0);
        // SAFETY: valid handle and two out-pointers.
        let rc = unsafe { ffi::MPI_Type_get_extent(self.raw, &mut lb, &mut extent) };
        check(rc, "MPI_Type_get_extent", CALL_SITE)?;
        Ok((lb as isize, extent as isize))
    }

    fn derive(
        call: &'static str,
        make: impl FnOnce(*mut ffi::MPI_Datatype) -> c_int,
    ) -> Result<Datatype> {
        let mut raw = MaybeUninit::<ffi::MPI_Datatype>::uninit();
        check(make(raw.as_mut_ptr()), call, CALL_SITE)?;
        // SAFETY: the constructor returned MPI_SUCCESS, so it wrote a valid handle.
        let raw = unsafe { raw.assume_init() };
        let mut dt = Datatype { raw, owned: true };
        // SAFETY: `dt.raw` is a freshly created, not yet committed derived type; if the commit
        // fails, drop frees it.
        let rc = unsafe { ffi::MPI_Type_commit(&mut dt.raw) };
        check(rc, "MPI_Type_commit", CALL_SITE)?;
        Ok(dt)
    }
}

impl Drop for Datatype {
    fn drop(&mut self) {
        if self.owned && !crate::file::mpi_finalized() {
            // SAFETY: an owned handle was created by us, is freed exactly once here, and MPI
            // is still running.
            unsafe {
                ffi::MPI_Type_free(&mut self.raw);
            }
        }
    }
}
