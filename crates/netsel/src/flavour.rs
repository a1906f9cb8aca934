//! MPI library flavours: named explicitly or detected from a library version string
//! (`MPI_Get_library_version`, `ompi_info --version`, `mpichversion`).

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// MPICH's network device, which decides which knobs work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MpichDevice {
    /// `ch4:ucx` (Debian's build).
    Ch4Ucx,
    /// `ch4:ofi`.
    Ch4Ofi,
    /// `ch3:nemesis` (TCP).
    Ch3Nemesis,
}

/// An MPI library family with what matters for translation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "library")]
pub enum Flavour {
    /// Open MPI, by major and minor version.
    OpenMpi {
        /// Major version (4 or 5).
        major: u32,
        /// Minor version.
        minor: u32,
    },
    /// MPICH with its device.
    Mpich {
        /// The network device.
        device: MpichDevice,
    },
    /// Intel MPI (libfabric based).
    IntelMpi,
    /// MVAPICH2 (verbs based).
    Mvapich2,
}

/// The spellings `Flavour::from_str` accepts, for messages.
pub const FLAVOUR_NAMES: &str = "openmpi-4.1, openmpi-5.0 (or openmpi-X.Y, ompi4, ompi5), mpich-ucx, mpich-ofi, mpich-nemesis (or mpich = ch4:ucx), intel, mvapich2";

impl fmt::Display for Flavour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Flavour::OpenMpi { major, minor } => write!(f, "openmpi-{major}.{minor}"),
            Flavour::Mpich { device } => f.write_str(match device {
                MpichDevice::Ch4Ucx => "mpich-ucx",
                MpichDevice::Ch4Ofi => "mpich-ofi",
                MpichDevice::Ch3Nemesis => "mpich-nemesis",
            }),
            Flavour::IntelMpi => f.write_str("intel"),
            Flavour::Mvapich2 => f.write_str("mvapich2"),
        }
    }
}

/// A flavour name that is not known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown MPI flavour `{0}`; known: {FLAVOUR_NAMES}")]
pub struct UnknownFlavour(pub String);

impl FromStr for Flavour {
    type Err = UnknownFlavour;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        let ompi = |major, minor| Ok(Flavour::OpenMpi { major, minor });
        match lower.as_str() {
            "ompi4" | "openmpi4" | "openmpi-4" | "openmpi" | "ompi" => return ompi(4, 1),
            "ompi5" | "openmpi5" | "openmpi-5" => return ompi(5, 0),
            "mpich" | "mpich-ucx" | "mpich:ch4:ucx" | "ch4:ucx" => {
                return Ok(Flavour::Mpich {
                    device: MpichDevice::Ch4Ucx,
                })
            }
            "mpich-ofi" | "mpich:ch4:ofi" | "ch4:ofi" => {
                return Ok(Flavour::Mpich {
                    device: MpichDevice::Ch4Ofi,
                })
            }
            "mpich-nemesis" | "mpich:ch3:nemesis" | "ch3:nemesis" | "mpich-ch3" => {
                return Ok(Flavour::Mpich {
                    device: MpichDevice::Ch3Nemesis,
                })
            }
            "intel" | "intelmpi" | "intel-mpi" | "impi" => return Ok(Flavour::IntelMpi),
            "mvapich2" | "mvapich" | "mv2" => return Ok(Flavour::Mvapich2),
            _ => {}
        }
        if let Some(v) = lower
            .strip_prefix("openmpi-")
            .or_else(|| lower.strip_prefix("ompi-"))
        {
            if let Some((major, minor)) = parse_version(v) {
                return ompi(major, minor);
            }
        }
        Err(UnknownFlavour(s.to_string()))
    }
}

fn parse_version(v: &str) -> Option<(u32, u32)> {
    let v = v.trim_start_matches('v');
    let mut parts = v.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    Some((major, minor))
}

impl Flavour {
    /// Detects the flavour from a library version string, e.g. `Open MPI v4.1.4, package:
    /// Debian OpenMPI, ...` or MPICH's multi-line `MPICH Version: 4.0.2 ... MPICH Device:
    /// ch4:ucx`. MPICH without a device line is taken as ch4:ucx with a note-worthy guess:
    /// callers that know better should say so explicitly.
    pub fn detect(version: &str) -> Option<Flavour> {
        let lower = version.to_ascii_lowercase();
        if let Some(pos) = lower.find("open mpi v") {
            let rest = &lower[pos + "open mpi v".len()..];
            let (major, minor) = parse_version(rest)?;
            return Some(Flavour::OpenMpi { major, minor });
        }
        if let Some(pos) = lower.find("(open mpi) ") {
            let (major, minor) = parse_version(&lower[pos + "(open mpi) ".len()..])?;
            return Some(Flavour::OpenMpi { major, minor });
        }
        if lower.contains("intel(r) mpi") || lower.contains("intel mpi") {
            return Some(Flavour::IntelMpi);
        }
        if lower.contains("mvapich2") || lower.contains("mvapich") {
            return Some(Flavour::Mvapich2);
        }
        if lower.contains("mpich") {
            // Prefer the `MPICH Device:` line: the configure line may name other devices.
            let device_text = lower
                .lines()
                .find(|l| l.contains("mpich device"))
                .unwrap_or(&lower);
            let device = if device_text.contains("ch4:ofi") {
                MpichDevice::Ch4Ofi
            } else if device_text.contains("ch3:nemesis") || device_text.contains("ch3:sock") {
                MpichDevice::Ch3Nemesis
            } else {
                MpichDevice::Ch4Ucx
            };
            return Some(Flavour::Mpich { device });
        }
        None
    }

    /// True for Open MPI 5 and later (no openib, `sm` instead of `vader`, PRRTE).
    pub fn is_ompi5(self) -> bool {
        matches!(self, Flavour::OpenMpi { major, .. } if major >= 5)
    }
}
