//! `MPI_File`: open, view, transfer, sync, close.

use crate::datatype::Datatype;
use crate::error::{check, count, Error, Result};
use crate::info::Info;
use crate::mode::AccessMode;
use crate::Offset;
use bytemuck::AnyBitPattern;
use mpi::datatype::Equivalence;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::Communicator;
use std::ffi::CString;
use std::mem::MaybeUninit;
use std::os::raw::{c_int, c_void};
use std::path::Path;

/// Where a seek counts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whence {
    /// `MPI_SEEK_SET`.
    Set,
    /// `MPI_SEEK_CUR`.
    Current,
    /// `MPI_SEEK_END`.
    End,
}

impl Whence {
    fn raw(self) -> c_int {
        (match self {
            Whence::Set => ffi::MPI_SEEK_SET,
            Whence::Current => ffi::MPI_SEEK_CUR,
            Whence::End => ffi::MPI_SEEK_END,
        }) as c_int
    }
}

/// An open MPI file. Errors are returned (`MPI_ERRORS_RETURN`), never fatal.
///
/// Close it with [`File::close`] on every rank of its communicator (closing is collective);
/// a `File` dropped while open is closed as well, ignoring errors.
#[derive(Debug)]
pub struct File {
    raw: ffi::MPI_File,
    name: String,
}

type WriteFn = unsafe extern "C" fn(
    ffi::MPI_File,
    *const c_void,
    c_int,
    ffi::MPI_Datatype,
    *mut ffi::MPI_Status,
) -> c_int;
type ReadFn = unsafe extern "C" fn(
    ffi::MPI_File,
    *mut c_void,
    c_int,
    ffi::MPI_Datatype,
    *mut ffi::MPI_Status,
) -> c_int;

/// Whether `MPI_Finalize` has been called (no more MPI calls allowed then).
pub(crate) fn mpi_finalized() -> bool {
    let mut flag: c_int = 0;
    // SAFETY: MPI_Finalized may be called at any time; `flag` is a valid out-pointer.
    unsafe { ffi::MPI_Finalized(&mut flag) };
    flag != 0
}

fn c_path(path: &Path, call: &'static str) -> Result<(CString, String)> {
    let name = path.display().to_string();
    let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| Error::Invalid {
        call,
        file: name.clone(),
        reason: "the file name contains a NUL byte".into(),
    })?;
    Ok((c, name))
}

impl File {
    /// Opens `path` collectively on `comm` with `mode` (`MPI_File_open`, `MPI_INFO_NULL`),
    /// and makes its errors returnable.
    pub fn open<C>(comm: &C, path: &Path, mode: AccessMode) -> Result<File>
    where
        C: Communicator + AsRaw<Raw = ffi::MPI_Comm>,
    {
        Self::open_with_info::<C, &str, &str>(comm, path, mode, &[])
    }

    /// Opens `path` collectively on `comm` with `mode` and the MPI-IO hints `hints`
    /// (`(key, value)` pairs, a later one replacing an earlier one of the same key; none:
    /// `MPI_INFO_NULL`), and makes its errors returnable. The library may ignore a hint;
    /// [`File::info`] says which values it uses. A key or value that MPI would refuse
    /// ([`crate::check_hint`]) is an [`Error::Invalid`], before any MPI call.
    pub fn open_with_info<C, K, V>(
        comm: &C,
        path: &Path,
        mode: AccessMode,
        hints: &[(K, V)],
    ) -> Result<File>
    where
        C: Communicator + AsRaw<Raw = ffi::MPI_Comm>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let call = "MPI_File_open";
        let (c, name) = c_path(path, call)?;
        // Freed when it goes out of scope: MPI_File_open keeps its own copy of the hints.
        let info = if hints.is_empty() {
            None
        } else {
            Some(Info::with(hints, call, &name)?)
        };
        let raw_info = match &info {
            Some(info) => info.as_raw(),
            // SAFETY: reading MPI_INFO_NULL, a constant the mpi crate's shim defines and
            // never writes.
            None => unsafe { ffi::RSMPI_INFO_NULL },
        };
        // SAFETY: setting the default file error handler (on MPI_FILE_NULL) to the predefined
        // ERRORS_RETURN handler; both handles are constants provided by MPI.
        let rc =
            unsafe { ffi::MPI_File_set_errhandler(ffi::RSMPI_FILE_NULL, ffi::RSMPI_ERRORS_RETURN) };
        check(rc, "MPI_File_set_errhandler", &name)?;
        let mut raw = MaybeUninit::<ffi::MPI_File>::uninit();
        // SAFETY: `comm.as_raw()` is a valid communicator for the call, `c` is a
        // NUL-terminated string that outlives it, `raw_info` is MPI_INFO_NULL or the handle
        // of `info`, which lives until after the call, and `raw` is a valid out-pointer.
        let rc = unsafe {
            ffi::MPI_File_open(
                comm.as_raw(),
                c.as_ptr(),
                mode.bits(),
                raw_info,
                raw.as_mut_ptr(),
            )
        };
        drop(info);
        check(rc, call, &name)?;
        // SAFETY: MPI_File_open succeeded, so it wrote a valid file handle.
        let raw = unsafe { raw.assume_init() };
        let file = File { raw, name };
        // SAFETY: a valid open file handle and the predefined ERRORS_RETURN handler.
        let rc = unsafe { ffi::MPI_File_set_errhandler(file.raw, ffi::RSMPI_ERRORS_RETURN) };
        check(rc, "MPI_File_set_errhandler", &file.name)?;
        Ok(file)
    }

    /// Gives the open file new hints (`MPI_File_set_info`, collective: every rank of the
    /// file's communicator passes the same ones). Checked as for [`File::open_with_info`];
    /// no hints: nothing is called.
    pub fn set_info<K, V>(&mut self, hints: &[(K, V)]) -> Result<()>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        if hints.is_empty() {
            return Ok(());
        }
        let call = "MPI_File_set_info";
        let info = Info::with(hints, call, &self.name)?;
        // SAFETY: valid open handle and a valid info handle that outlives the call (MPI
        // copies what it keeps).
        let rc = unsafe { ffi::MPI_File_set_info(self.raw, info.as_raw()) };
        check(rc, call, &self.name)
    }

    /// The hints the library reports for the open file (`MPI_File_get_info`, then every
    /// key with `MPI_Info_get_nkeys`, `MPI_Info_get_nthkey`, `MPI_Info_get_valuelen` and
    /// `MPI_Info_get`), in its order. Libraries differ: ROMIO reports every hint it uses,
    /// defaults included; Open MPI 4.1 reports what was given at open. Empty when the
    /// library reports nothing or `MPI_File_get_info` fails; not collective.
    pub fn info(&self) -> Vec<(String, String)> {
        let mut raw = MaybeUninit::<ffi::MPI_Info>::uninit();
        // SAFETY: valid open handle; `raw` is a valid out-pointer for one info handle.
        let rc = unsafe { ffi::MPI_File_get_info(self.raw, raw.as_mut_ptr()) };
        if rc != ffi::MPI_SUCCESS as c_int {
            return Vec::new();
        }
        // SAFETY: MPI_File_get_info succeeded, so it wrote a new info handle that the
        // caller owns and must free (Info's drop does).
        let info = Info::from_raw(unsafe { raw.assume_init() });
        info.entries()
    }

    /// Deletes `path` (`MPI_File_delete`). Not collective.
    pub fn delete(path: &Path) -> Result<()> {
        let call = "MPI_File_delete";
        let (c, name) = c_path(path, call)?;
        // SAFETY: `c` is NUL-terminated and outlives the call; MPI_INFO_NULL is a constant.
        let rc = unsafe { ffi::MPI_File_delete(c.as_ptr(), ffi::RSMPI_INFO_NULL) };
        check(rc, call, &name)
    }

    /// The file's name as it was opened.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Gives up the handle without closing it. For a collective open that succeeded here
    /// but failed on other ranks: closing is collective too, so a close here would wait for
    /// ranks that never call it. The handle is lost until `MPI_Finalize`.
    pub fn abandon(self) {
        std::mem::forget(self);
    }

    /// Closes the file (collective).
    pub fn close(mut self) -> Result<()> {
        let result = self.close_raw();
        std::mem::forget(self);
        result
    }

    fn close_raw(&mut self) -> Result<()> {
        // SAFETY: `self.raw` is an open handle (close is only reached once, from `close` or
        // `drop`); MPI sets it to MPI_FILE_NULL.
        let rc = unsafe { ffi::MPI_File_close(&mut self.raw) };
        check(rc, "MPI_File_close", &self.name)
    }

    /// Sets the view (`MPI_File_set_view`, datarep "native"): the file starts at byte
    /// `displacement`, counts in `etype` elements and shows this rank the `filetype` tiling.
    pub fn set_view(
        &mut self,
        displacement: Offset,
        etype: &Datatype,
        filetype: &Datatype,
    ) -> Result<()> {
        let rep = c"native";
        // SAFETY: valid open handle and datatypes that live across the call; `rep` is a
        // NUL-terminated constant; MPI_INFO_NULL is a constant.
        let rc = unsafe {
            ffi::MPI_File_set_view(
                self.raw,
                displacement,
                etype.as_raw(),
                filetype.as_raw(),
                rep.as_ptr(),
                ffi::RSMPI_INFO_NULL,
            )
        };
        check(rc, "MPI_File_set_view", &self.name)
    }

    /// Moves the individual file pointer (`MPI_File_seek`), in etypes of the view.
    pub fn seek(&mut self, offset: Offset, whence: Whence) -> Result<()> {
        // SAFETY: valid open handle.
        let rc = unsafe { ffi::MPI_File_seek(self.raw, offset, whence.raw()) };
        check(rc, "MPI_File_seek", &self.name)
    }

    /// Moves the shared file pointer (`MPI_File_seek_shared`, collective).
    pub fn seek_shared(&mut self, offset: Offset, whence: Whence) -> Result<()> {
        // SAFETY: valid open handle.
        let rc = unsafe { ffi::MPI_File_seek_shared(self.raw, offset, whence.raw()) };
        check(rc, "MPI_File_seek_shared", &self.name)
    }

    /// The individual file pointer in etypes (`MPI_File_get_position`).
    pub fn position(&self) -> Result<Offset> {
        let mut pos: ffi::MPI_Offset = 0;
        // SAFETY: valid open handle and out-pointer.
        let rc = unsafe { ffi::MPI_File_get_position(self.raw, &mut pos) };
        check(rc, "MPI_File_get_position", &self.name)?;
        Ok(pos)
    }

    /// The shared file pointer in etypes (`MPI_File_get_position_shared`).
    pub fn position_shared(&self) -> Result<Offset> {
        let mut pos: ffi::MPI_Offset = 0;
        // SAFETY: valid open handle and out-pointer.
        let rc = unsafe { ffi::MPI_File_get_position_shared(self.raw, &mut pos) };
        check(rc, "MPI_File_get_position_shared", &self.name)?;
        Ok(pos)
    }

    /// Size of the file in bytes (`MPI_File_get_size`).
    pub fn size(&self) -> Result<Offset> {
        let mut size: ffi::MPI_Offset = 0;
        // SAFETY: valid open handle and out-pointer.
        let rc = unsafe { ffi::MPI_File_get_size(self.raw, &mut size) };
        check(rc, "MPI_File_get_size", &self.name)?;
        Ok(size)
    }

    /// Flushes written data to the storage device as far as MPI can (`MPI_File_sync`, collective).
    pub fn sync(&mut self) -> Result<()> {
        // SAFETY: valid open handle.
        let rc = unsafe { ffi::MPI_File_sync(self.raw) };
        check(rc, "MPI_File_sync", &self.name)
    }

    /// Independent write at the individual pointer (`MPI_File_write`).
    pub fn write<T: Equivalence>(&mut self, buf: &[T]) -> Result<()> {
        self.write_with("MPI_File_write", ffi::MPI_File_write, buf)
    }

    /// Collective write at the individual pointers (`MPI_File_write_all`).
    pub fn write_all<T: Equivalence>(&mut self, buf: &[T]) -> Result<()> {
        self.write_with("MPI_File_write_all", ffi::MPI_File_write_all, buf)
    }

    /// Collective write at the shared pointer in rank order (`MPI_File_write_ordered`).
    pub fn write_ordered<T: Equivalence>(&mut self, buf: &[T]) -> Result<()> {
        self.write_with("MPI_File_write_ordered", ffi::MPI_File_write_ordered, buf)
    }

    /// Independent read at the individual pointer (`MPI_File_read`).
    pub fn read<T: Equivalence + AnyBitPattern>(&mut self, buf: &mut [T]) -> Result<()> {
        self.read_with("MPI_File_read", ffi::MPI_File_read, buf)
    }

    /// Collective read at the individual pointers (`MPI_File_read_all`).
    pub fn read_all<T: Equivalence + AnyBitPattern>(&mut self, buf: &mut [T]) -> Result<()> {
        self.read_with("MPI_File_read_all", ffi::MPI_File_read_all, buf)
    }

    /// Collective read at the shared pointer in rank order (`MPI_File_read_ordered`).
    pub fn read_ordered<T: Equivalence + AnyBitPattern>(&mut self, buf: &mut [T]) -> Result<()> {
        self.read_with("MPI_File_read_ordered", ffi::MPI_File_read_ordered, buf)
    }

    /// Independent write at an explicit offset in etypes (`MPI_File_write_at`).
    pub fn write_at<T: Equivalence>(&mut self, offset: Offset, buf: &[T]) -> Result<()> {
        let call = "MPI_File_write_at";
        let n = count(buf.len(), call, &self.name)?;
        let dt = T::equivalent_datatype();
        let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
        // SAFETY: `buf` holds `n` elements of `T`, described by `dt`, and lives across the
        // blocking call; `status` is a valid out-pointer.
        let rc = unsafe {
            ffi::MPI_File_write_at(
                self.raw,
                offset,
                buf.as_ptr().cast(),
                n,
                dt.as_raw(),
                status.as_mut_ptr(),
            )
        };
        self.finish(rc, call, &status, dt.as_raw(), buf.len())
    }

    /// Independent read at an explicit offset in etypes (`MPI_File_read_at`).
    pub fn read_at<T: Equivalence + AnyBitPattern>(
        &mut self,
        offset: Offset,
        buf: &mut [T],
    ) -> Result<()> {
        let call = "MPI_File_read_at";
        let n = count(buf.len(), call, &self.name)?;
        let dt = T::equivalent_datatype();
        let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
        // SAFETY: `buf` has room for `n` elements of `T`, described by `dt`, and is borrowed
        // mutably across the blocking call; `status` is a valid out-pointer.
        let rc = unsafe {
            ffi::MPI_File_read_at(
                self.raw,
                offset,
                buf.as_mut_ptr().cast(),
                n,
                dt.as_raw(),
                status.as_mut_ptr(),
            )
        };
        self.finish(rc, call, &status, dt.as_raw(), buf.len())
    }

    fn write_with<T: Equivalence>(
        &mut self,
        call: &'static str,
        f: WriteFn,
        buf: &[T],
    ) -> Result<()> {
        let n = count(buf.len(), call, &self.name)?;
        let dt = T::equivalent_datatype();
        let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
        // SAFETY: `f` is one of MPI's blocking write functions; `buf` holds `n` elements of
        // `T`, described by `dt`, and lives across the call; `status` is a valid out-pointer.
        let rc = unsafe {
            f(
                self.raw,
                buf.as_ptr().cast(),
                n,
                dt.as_raw(),
                status.as_mut_ptr(),
            )
        };
        self.finish(rc, call, &status, dt.as_raw(), buf.len())
    }

    fn read_with<T: Equivalence + AnyBitPattern>(
        &mut self,
        call: &'static str,
        f: ReadFn,
        buf: &mut [T],
    ) -> Result<()> {
        let n = count(buf.len(), call, &self.name)?;
        let dt = T::equivalent_datatype();
        let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
        // SAFETY: `f` is one of MPI's blocking read functions; `buf` has room for `n`
        // elements of `T` (any bit pattern is a valid `Equivalence` type's value), is borrowed
        // mutably across the call; `status` is a valid out-pointer.
        let rc = unsafe {
            f(
                self.raw,
                buf.as_mut_ptr().cast(),
                n,
                dt.as_raw(),
                status.as_mut_ptr(),
            )
        };
        self.finish(rc, call, &status, dt.as_raw(), buf.len())
    }

    #[inline]
    fn finish(
        &self,
        rc: c_int,
        call: &'static str,
        status: &MaybeUninit<ffi::MPI_Status>,
        dt: ffi::MPI_Datatype,
        requested: usize,
    ) -> Result<()> {
        check(rc, call, &self.name)?;
        // SAFETY: the call succeeded, so MPI filled in the status.
        let status = unsafe { status.assume_init_ref() };
        let mut moved: c_int = 0;
        // SAFETY: `status` is initialised and `dt` is the datatype of the transfer.
        let rc = unsafe { ffi::MPI_Get_count(status, dt, &mut moved) };
        check(rc, "MPI_Get_count", &self.name)?;
        if moved < 0 || moved as usize != requested {
            return Err(self.short(call, requested, moved));
        }
        Ok(())
    }

    /// The error of a call that moved `moved` of `requested` elements.
    #[cold]
    #[inline(never)]
    fn short(&self, call: &'static str, requested: usize, moved: c_int) -> Error {
        Error::Short {
            call,
            file: self.name.clone(),
            requested,
            moved: moved.max(0) as usize,
        }
    }
}

impl Drop for File {
    fn drop(&mut self) {
        if !mpi_finalized() {
            let _ = self.close_raw();
        }
    }
}
