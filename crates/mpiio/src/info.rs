//! `MPI_Info`: the hints given to `MPI_File_open` and `MPI_File_set_info`, and the ones a
//! library reports back (`MPI_File_get_info`).
//!
//! Errors of the `MPI_Info_*` calls go to the error handler of `MPI_COMM_WORLD`, which
//! aborts the job by default, so every key and value is checked here first
//! ([`check_hint`]): what MPI would refuse comes back as [`Error::Invalid`] instead.

use crate::error::{check, Error, Result};
use mpi::ffi;
use std::ffi::CString;
use std::mem::MaybeUninit;
use std::os::raw::{c_char, c_int};

/// The longest key this MPI library takes, in bytes (`MPI_MAX_INFO_KEY` less one: Open
/// MPI refuses a key of `MPI_MAX_INFO_KEY` characters).
pub const MAX_INFO_KEY_LEN: usize = ffi::MPI_MAX_INFO_KEY as usize - 1;
/// The longest value this MPI library takes, in bytes (`MPI_MAX_INFO_VAL` less one).
pub const MAX_INFO_VALUE_LEN: usize = ffi::MPI_MAX_INFO_VAL as usize - 1;

/// Whether `key` and `value` can be given to `MPI_Info_set` of this library: neither
/// empty, no NUL byte, the key at most [`MAX_INFO_KEY_LEN`] bytes, the value at most
/// [`MAX_INFO_VALUE_LEN`]. The `Err` says what is wrong.
pub fn check_hint(key: &str, value: &str) -> std::result::Result<(), String> {
    if key.is_empty() {
        return Err("the hint's key is empty".into());
    }
    if value.is_empty() {
        return Err(format!("hint '{key}': the value is empty"));
    }
    if key.contains('\0') || value.contains('\0') {
        return Err(format!("hint '{key}': contains a NUL byte"));
    }
    if key.len() > MAX_INFO_KEY_LEN {
        return Err(format!(
            "hint key '{key}' has {} bytes; this MPI library takes at most {MAX_INFO_KEY_LEN} \
             (MPI_MAX_INFO_KEY)",
            key.len()
        ));
    }
    if value.len() > MAX_INFO_VALUE_LEN {
        return Err(format!(
            "hint '{key}': the value has {} bytes; this MPI library takes at most \
             {MAX_INFO_VALUE_LEN} (MPI_MAX_INFO_VAL)",
            value.len()
        ));
    }
    Ok(())
}

/// An `MPI_Info` object created here, freed on drop.
pub(crate) struct Info {
    raw: ffi::MPI_Info,
}

impl Info {
    /// A new info object holding `hints` (`MPI_Info_create`, `MPI_Info_set`); a later
    /// entry for the same key replaces an earlier one, as `MPI_Info_set` does. `call` and
    /// `file` name the MPI-IO call the hints are for, in errors.
    pub(crate) fn with<K, V>(hints: &[(K, V)], call: &'static str, file: &str) -> Result<Info>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        // Everything is checked before the first MPI call: MPI_Info errors abort the job.
        let mut pairs = Vec::with_capacity(hints.len());
        for (key, value) in hints {
            let (key, value) = (key.as_ref(), value.as_ref());
            check_hint(key, value).map_err(|reason| Error::Invalid {
                call,
                file: file.to_string(),
                reason,
            })?;
            // No NUL inside: check_hint refused those.
            let invalid = |_| Error::Invalid {
                call,
                file: file.to_string(),
                reason: format!("hint '{key}': contains a NUL byte"),
            };
            pairs.push((
                CString::new(key).map_err(invalid)?,
                CString::new(value).map_err(invalid)?,
            ));
        }
        let mut raw = MaybeUninit::<ffi::MPI_Info>::uninit();
        // SAFETY: `raw` is a valid out-pointer for one info handle.
        let rc = unsafe { ffi::MPI_Info_create(raw.as_mut_ptr()) };
        check(rc, "MPI_Info_create", file)?;
        // SAFETY: MPI_Info_create succeeded, so it wrote a valid handle; from here on drop
        // frees it.
        let raw = unsafe { raw.assume_init() };
        let info = Info { raw };
        for (key, value) in &pairs {
            // SAFETY: `info.raw` is a valid info handle; `key` and `value` are
            // NUL-terminated strings within MPI's length limits (check_hint) that outlive
            // the call, which copies them.
            let rc = unsafe { ffi::MPI_Info_set(info.raw, key.as_ptr(), value.as_ptr()) };
            check(rc, "MPI_Info_set", file)?;
        }
        Ok(info)
    }

    /// Takes ownership of `raw`, a handle MPI created for the caller (as
    /// `MPI_File_get_info` does); it is freed on drop.
    pub(crate) fn from_raw(raw: ffi::MPI_Info) -> Info {
        Info { raw }
    }

    /// The raw handle, valid while `self` lives.
    pub(crate) fn as_raw(&self) -> ffi::MPI_Info {
        self.raw
    }

    /// Every key and value, in MPI's order (`MPI_Info_get_nkeys`, `MPI_Info_get_nthkey`,
    /// `MPI_Info_get_valuelen`, `MPI_Info_get`). A call that fails ends the list there.
    pub(crate) fn entries(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut n: c_int = 0;
        // SAFETY: `self.raw` is a valid info handle and `n` a valid out-pointer.
        let rc = unsafe { ffi::MPI_Info_get_nkeys(self.raw, &mut n) };
        if rc != ffi::MPI_SUCCESS as c_int {
            return out;
        }
        for i in 0..n.max(0) {
            // The standard asks for room for MPI_MAX_INFO_KEY characters and the NUL.
            let mut key = vec![0 as c_char; ffi::MPI_MAX_INFO_KEY as usize + 1];
            // SAFETY: `self.raw` is valid, `i` is below its number of keys, and `key` holds
            // MPI_MAX_INFO_KEY + 1 characters, as much as MPI writes.
            let rc = unsafe { ffi::MPI_Info_get_nthkey(self.raw, i, key.as_mut_ptr()) };
            if rc != ffi::MPI_SUCCESS as c_int {
                break;
            }
            let key = until_nul(&key);
            let Ok(c_key) = CString::new(key.clone()) else {
                continue;
            };
            let (mut len, mut flag): (c_int, c_int) = (0, 0);
            // SAFETY: valid handle, a NUL-terminated key that outlives the call, and two
            // valid out-pointers.
            let rc = unsafe {
                ffi::MPI_Info_get_valuelen(self.raw, c_key.as_ptr(), &mut len, &mut flag)
            };
            if rc != ffi::MPI_SUCCESS as c_int {
                break;
            }
            if flag == 0 || len < 0 {
                continue;
            }
            // `len` characters and the NUL MPI_Info_get adds.
            let mut value = vec![0 as c_char; len as usize + 1];
            // SAFETY: valid handle and key; `value` has room for `len` characters and the
            // terminating NUL, and MPI_Info_get writes at most `len` characters and a NUL;
            // `flag` is a valid out-pointer.
            let rc = unsafe {
                ffi::MPI_Info_get(self.raw, c_key.as_ptr(), len, value.as_mut_ptr(), &mut flag)
            };
            if rc != ffi::MPI_SUCCESS as c_int {
                break;
            }
            if flag != 0 {
                out.push((
                    String::from_utf8_lossy(&key).into_owned(),
                    String::from_utf8_lossy(&until_nul(&value)).into_owned(),
                ));
            }
        }
        out
    }
}

/// The bytes of a C string buffer up to its first NUL (all of it when there is none: the
/// scan never leaves the buffer).
fn until_nul(buf: &[c_char]) -> Vec<u8> {
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    buf[..end].iter().map(|&c| c as u8).collect()
}

impl Drop for Info {
    fn drop(&mut self) {
        if !crate::file::mpi_finalized() {
            // SAFETY: `self.raw` is a valid handle owned by this value and freed exactly
            // once, here, while MPI is running; MPI sets it to MPI_INFO_NULL.
            unsafe {
                ffi::MPI_Info_free(&mut self.raw);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_that_mpi_would_refuse_are_caught_first() {
        assert_eq!(check_hint("cb_buffer_size", "1048576"), Ok(()));
        assert!(check_hint("", "x").unwrap_err().contains("key is empty"));
        assert!(check_hint("k", "").unwrap_err().contains("value is empty"));
        assert!(check_hint("k\0", "v").unwrap_err().contains("NUL"));
        let long_key = "k".repeat(MAX_INFO_KEY_LEN + 1);
        let e = check_hint(&long_key, "v").unwrap_err();
        assert!(e.contains("MPI_MAX_INFO_KEY"), "{e}");
        assert_eq!(check_hint(&"k".repeat(MAX_INFO_KEY_LEN), "v"), Ok(()));
        let long_value = "v".repeat(MAX_INFO_VALUE_LEN + 1);
        assert!(check_hint("k", &long_value)
            .unwrap_err()
            .contains("MPI_MAX_INFO_VAL"));
    }

    #[test]
    fn c_strings_end_at_the_first_nul_or_the_buffer() {
        let buf: Vec<c_char> = b"ab\0cd".iter().map(|&b| b as c_char).collect();
        assert_eq!(until_nul(&buf), b"ab");
        let buf: Vec<c_char> = b"abc".iter().map(|&b| b as c_char).collect();
        assert_eq!(until_nul(&buf), b"abc");
    }
}
