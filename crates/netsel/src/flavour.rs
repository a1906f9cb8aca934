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
    /// HPE Cray MPICH (`cray-mpich`, libfabric based: `cxi` on Slingshot-11), which has
    /// its own knobs (`MPICH_OFI_USE_PROVIDER`, `MPICH_OFI_NIC_POLICY`).
    CrayMpich,
}

/// The spellings `Flavour::from_str` accepts, for messages.
pub const FLAVOUR_NAMES: &str = "openmpi-4.1, openmpi-5.0 (or openmpi-X.Y, openmpi4, openmpi5, ompi4, ompi5), mpich-ucx, mpich-ofi, mpich-nemesis (or mpich, mpich4, mpich5 = ch4:ucx), intel (or intelmpi), mvapich2, cray-mpich (or craympich; cray-mpich-ucx = mpich-ucx)";

/// The environment variable with which MPICH 4 and later choose the ch4 netmod at run
/// time when the library was built with several (`MPICH Device: ch4:ucx ofi`).
pub const CH4_NETMOD_ENV: &str = "MPIR_CVAR_CH4_NETMOD";

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
            Flavour::CrayMpich => f.write_str("cray-mpich"),
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
            // MPICH 5's pip build lists both netmods (`ch4:ucx ofi`), ucx first and default.
            // HPE's UCX build of Cray MPICH (module `cray-mpich-ucx`, Slingshot-10) is
            // MPICH over UCX as far as the network goes.
            "mpich" | "mpich-ucx" | "mpich:ch4:ucx" | "ch4:ucx" | "mpich4" | "mpich-4"
            | "mpich5" | "mpich-5" | "cray-mpich-ucx" => {
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
            "cray-mpich" | "craympich" | "cray" | "cray-mpich-ofi" => {
                return Ok(Flavour::CrayMpich)
            }
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

/// The devices an (lower-case) MPICH version text names, in order, from its
/// `MPICH Device:` line (`ch4:ucx`, `ch4:ofi`, `ch3:nemesis`, or `ch4:ucx ofi` for a
/// ch4 built with both netmods, the first the default); without that line, from the
/// whole text, as before (the configure line may name other devices, so the device line
/// wins when present).
fn mpich_netmods(lower: &str) -> Vec<MpichDevice> {
    let line = lower.lines().find_map(|l| {
        l.find("mpich device")
            .map(|pos| &l[pos + "mpich device".len()..])
    });
    let Some(line) = line else {
        let device = if lower.contains("ch4:ofi") {
            MpichDevice::Ch4Ofi
        } else if lower.contains("ch3:nemesis") || lower.contains("ch3:sock") {
            MpichDevice::Ch3Nemesis
        } else {
            MpichDevice::Ch4Ucx
        };
        return vec![device];
    };
    let value = line.trim_start_matches(|c: char| c == ':' || c.is_whitespace());
    let mut out = Vec::new();
    let mut device = "";
    for word in value.split(|c: char| c.is_whitespace() || c == ',') {
        if word.is_empty() {
            continue;
        }
        let netmod = match word.split_once(':') {
            Some((dev, netmod)) => {
                device = dev;
                netmod
            }
            None => word,
        };
        let d = match (device, netmod) {
            ("ch4", "ucx") => MpichDevice::Ch4Ucx,
            ("ch4", "ofi") => MpichDevice::Ch4Ofi,
            ("ch3", "nemesis") | ("ch3", "sock") => MpichDevice::Ch3Nemesis,
            _ => continue,
        };
        if !out.contains(&d) {
            out.push(d);
        }
    }
    if out.is_empty() {
        out.push(MpichDevice::Ch4Ucx);
    }
    out
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
        // `MPI VERSION    : CRAY MPICH version 8.1.28.15 (ANL base 3.4a2)`: MPICH inside,
        // but with HPE's own network layer and knobs.
        if lower.contains("cray mpich") {
            return Some(Flavour::CrayMpich);
        }
        if lower.contains("mpich") {
            let device = mpich_netmods(&lower)
                .first()
                .copied()
                .unwrap_or(MpichDevice::Ch4Ucx);
            return Some(Flavour::Mpich { device });
        }
        None
    }

    /// Like [`Flavour::detect`], and for an MPICH whose `MPICH Device:` line lists several
    /// ch4 netmods (MPICH 5's pip build: `ch4:ucx ofi`, the first being the default), the
    /// one `MPIR_CVAR_CH4_NETMOD` picks at run time, looked up with `env` (e.g.
    /// `|k| std::env::var(k).ok()`). The variable is ignored when the device line names one
    /// netmod (the library has no other) or when it names a netmod the line does not list.
    pub fn detect_with_env(version: &str, env: impl Fn(&str) -> Option<String>) -> Option<Flavour> {
        let flavour = Flavour::detect(version)?;
        if !matches!(flavour, Flavour::Mpich { .. }) {
            return Some(flavour);
        }
        let netmods = mpich_netmods(&version.to_ascii_lowercase());
        if netmods.len() < 2 {
            return Some(flavour);
        }
        let chosen =
            env(CH4_NETMOD_ENV).and_then(|v| match v.trim().to_ascii_lowercase().as_str() {
                "ucx" => Some(MpichDevice::Ch4Ucx),
                "ofi" => Some(MpichDevice::Ch4Ofi),
                _ => None,
            });
        match chosen {
            Some(device) if netmods.contains(&device) => Some(Flavour::Mpich { device }),
            _ => Some(flavour),
        }
    }

    /// True for Open MPI 5 and later (no openib, `sm` instead of `vader`, PRRTE).
    pub fn is_ompi5(self) -> bool {
        matches!(self, Flavour::OpenMpi { major, .. } if major >= 5)
    }
}
