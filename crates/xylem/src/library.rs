//! Which MPI library a program will load, and which flavour that library is, read from
//! the library itself: `ldd` names the file the dynamic loader would map in this
//! environment (`LD_LIBRARY_PATH` and run paths included), and the library's own text —
//! the version and device strings that `MPI_Get_library_version` prints — says what it
//! is. Nothing is loaded or run but `ldd`.

use std::path::Path;

pub use netsel::stack::{library_of, program_path};

/// The most a library file may be to be read (Intel MPI's is 12 MB, MPICH's 42 MB).
const LARGEST_LIBRARY: u64 = 512 << 20;

/// The shortest run of printable bytes taken as a string.
const SHORTEST_STRING: usize = 4;

/// The runs of at least [`SHORTEST_STRING`] printable bytes (tab included) in `bytes`.
fn strings(bytes: &[u8]) -> impl Iterator<Item = &str> {
    bytes
        .split(|b| !(b.is_ascii_graphic() || *b == b' ' || *b == b'\t'))
        .filter(|run| run.len() >= SHORTEST_STRING)
        .filter_map(|run| std::str::from_utf8(run).ok())
}

/// `vX.Y.Z…` as Open MPI's repository revision string spells its version.
fn open_mpi_revision(s: &str) -> Option<&str> {
    let v = s.strip_prefix('v')?;
    let mut parts = v.splitn(3, '.');
    let numeric = |p: Option<&str>| p.is_some_and(|p| p.starts_with(|c: char| c.is_ascii_digit()));
    let (a, b, c) = (parts.next(), parts.next(), parts.next());
    (a.is_some_and(|a| !a.is_empty() && a.chars().all(|c| c.is_ascii_digit()))
        && numeric(b)
        && numeric(c))
    .then_some(v)
}

/// MPICH's device string (`ch4:ucx`, `ch4:ofi`, `ch3:nemesis`, `ch4:ucx ofi`).
fn is_mpich_device(s: &str) -> bool {
    let mut words = s.split(' ');
    let first = words.next().unwrap_or_default();
    (first.starts_with("ch4:") || first.starts_with("ch3:"))
        && first.len() > 4
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == ':' || c == ' ')
}

/// A library version text for [`netsel::Flavour::detect`], built from what the library
/// file holds, or `None` when it holds no MPI library's marks.
pub fn version_text_of(bytes: &[u8]) -> Option<String> {
    let (mut intel, mut cray, mut mvapich, mut ompi, mut mpich) =
        (false, false, false, false, false);
    let mut revision: Option<String> = None;
    let mut device: Option<String> = None;
    for s in strings(bytes) {
        intel |= s.contains("Intel(R) MPI Library");
        cray |= s.contains("CRAY MPICH");
        mvapich |= s.contains("MVAPICH2");
        ompi |= s.contains("Open MPI v%d") || s == "Open MPI";
        mpich |= s.contains("MPICH Version:");
        if revision.is_none() {
            revision = open_mpi_revision(s).map(str::to_string);
        }
        if device.is_none() && is_mpich_device(s) {
            device = Some(s.to_string());
        }
    }
    if intel {
        Some("Intel(R) MPI Library".to_string())
    } else if cray {
        Some("CRAY MPICH version".to_string())
    } else if mvapich {
        Some("MVAPICH2".to_string())
    } else if ompi {
        revision.map(|v| format!("Open MPI v{v}"))
    } else if mpich {
        Some(format!(
            "MPICH Version: ?\nMPICH Device: {}",
            device.as_deref().unwrap_or("?")
        ))
    } else {
        None
    }
}

/// The version text of the library file at `path` (see [`version_text_of`]).
pub fn version_text(path: &Path) -> Result<Option<String>, String> {
    let size = std::fs::metadata(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .len();
    if size > LARGEST_LIBRARY {
        return Err(format!(
            "{} is {size} bytes, more than an MPI library is",
            path.display()
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(version_text_of(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_mpi_is_known_by_its_revision_string() {
        let lib = b"\0Open MPI\0junk\0v4.1.4\0Open MPI v%d.%d.%d\0";
        assert_eq!(version_text_of(lib).as_deref(), Some("Open MPI v4.1.4"));
        let five = b"\0v5.0.11rc1\0Open MPI v%d.%d.%d\0";
        let f = netsel::Flavour::detect(&version_text_of(five).unwrap());
        assert_eq!(f, Some(netsel::Flavour::OpenMpi { major: 5, minor: 0 }));
    }

    #[test]
    fn mpich_is_known_with_its_device() {
        let lib = b"\0MPICH Version:\t%s\n\0ch4:ucx ofi\0";
        let text = version_text_of(lib).unwrap();
        assert_eq!(text, "MPICH Version: ?\nMPICH Device: ch4:ucx ofi");
        let ofi = b"\0MPICH Version:\t%s\n\0ch4:ofi\0";
        assert_eq!(
            netsel::Flavour::detect(&version_text_of(ofi).unwrap()),
            Some(netsel::Flavour::Mpich {
                device: netsel::MpichDevice::Ch4Ofi
            })
        );
    }

    #[test]
    fn vendors_come_before_the_mpich_inside_them() {
        let intel = b"\0MPICH Version:\t%s\n\0ch4:ofi\0Intel(R) MPI Library %s for Linux\0";
        assert_eq!(
            version_text_of(intel).as_deref(),
            Some("Intel(R) MPI Library")
        );
        let cray = b"\0MPICH Version:\0CRAY MPICH version %s\0";
        assert_eq!(
            netsel::Flavour::detect(&version_text_of(cray).unwrap()),
            Some(netsel::Flavour::CrayMpich)
        );
        assert_eq!(version_text_of(b"\0libc stuff\0v1.2.3\0"), None);
    }
}
