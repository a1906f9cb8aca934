//! The versions of the transport libraries a job loads, where a version decides the form
//! of a setting: libfabric reads `FI_VERBS_DEVICE_NAME` and `FI_VERBS_IFACE` as comma lists
//! from 2.6 (as one prefix before), `FI_EFA_IFACE` from 2.0 and `FI_OPX_PORT` from 2.1.
//!
//! Every rank of a host must choose the same settings, and only the first reads the
//! libraries' registries ([`crate::stack`], a few tenths of a second): the versions here
//! are what each rank can know at once and alike. A rank takes them from the libraries
//! its MPI library links, which are mapped before `MPI_Init` ([`Libraries::of_this_process`]);
//! `xylem net` takes them from the same files as the loader resolves them for the
//! program's MPI library ([`Libraries::linked_by`]). A library that MPI only opens in
//! `MPI_Init` (Intel MPI's libfabric) is not known: its settings then take the form of
//! the newest release, and the registry check says when the loaded one reads it
//! otherwise.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// A library's API version: major and minor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Version {
    /// The major number.
    pub major: u32,
    /// The minor number.
    pub minor: u32,
}

impl Version {
    /// `major.minor`.
    pub const fn new(major: u32, minor: u32) -> Version {
        Version { major, minor }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The first libfabric that reads `FI_VERBS_DEVICE_NAME` and `FI_VERBS_IFACE` as lists.
pub const LIBFABRIC_VERBS_LISTS: Version = Version::new(2, 6);
/// The first libfabric with `FI_EFA_IFACE`.
pub const LIBFABRIC_EFA_IFACE: Version = Version::new(2, 0);
/// The first libfabric with `FI_OPX_PORT`.
pub const LIBFABRIC_OPX_PORT: Version = Version::new(2, 1);

/// The versions of the transport libraries a job loads, as far as they are known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Libraries {
    /// libfabric's API version (`fi_version()`).
    pub libfabric: Option<Version>,
}

impl Libraries {
    /// Nothing known: every setting takes the form of the newest release.
    pub const UNKNOWN: Libraries = Libraries { libfabric: None };

    /// The libraries mapped in this process: in a rank before `MPI_Init`, those its MPI
    /// library links.
    pub fn of_this_process() -> Libraries {
        Libraries::of_files(crate::stack::mapped_files())
    }

    /// The libraries the MPI library at `mpi` links, as the loader resolves them (`ldd`).
    pub fn linked_by(mpi: &Path) -> Libraries {
        Libraries::of_files(crate::stack::linked(mpi))
    }

    /// The versions of the first libfabric among `files`.
    fn of_files(files: impl IntoIterator<Item = PathBuf>) -> Libraries {
        let libfabric = files
            .into_iter()
            .find(|p| crate::stack::file_name_is(p, |n| n.starts_with("libfabric.so")))
            .and_then(|p| libprobe::libfabric_version(&p).ok())
            .map(|(major, minor)| Version::new(major, minor));
        Libraries { libfabric }
    }

    /// Whether the loaded libfabric is `at_least` that version: `None` when unknown.
    pub fn libfabric_from(&self, at_least: Version) -> Option<bool> {
        self.libfabric.map(|v| v >= at_least)
    }

    /// The loaded libfabric's version when it is known to be older than `than` (a form it
    /// does not read): what a translation names when it writes the older form.
    pub fn libfabric_before(&self, than: Version) -> Option<Version> {
        self.libfabric.filter(|&v| v < than)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_by_major_then_minor() {
        assert!(Version::new(1, 20) < LIBFABRIC_EFA_IFACE);
        assert!(Version::new(2, 5) < LIBFABRIC_VERBS_LISTS);
        assert!(Version::new(2, 10) > LIBFABRIC_VERBS_LISTS);
        assert_eq!(Version::new(1, 17).to_string(), "1.17");
        let old = Libraries {
            libfabric: Some(Version::new(1, 17)),
        };
        assert_eq!(old.libfabric_from(LIBFABRIC_EFA_IFACE), Some(false));
        assert_eq!(Libraries::UNKNOWN.libfabric_from(LIBFABRIC_EFA_IFACE), None);
    }

    #[test]
    fn files_without_libfabric_know_nothing() {
        let l = Libraries::of_files([PathBuf::from("/usr/lib/libmpi.so.40")]);
        assert_eq!(l, Libraries::UNKNOWN);
    }
}
