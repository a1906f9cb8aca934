//! Choosing one code path (PML/MTL/BTL set, MPICH device transport, provider) that
//! reaches everything a resolution kept, honouring the qualifiers.
//!
//! Qualifiers force a path; items without one take the flavour's preferred path that
//! reaches all of them. With `--enable`, a kept target the chosen path cannot reach is an
//! error (the user named it); with `--disable`, it is left out with the reason.

use std::fmt;

use serde::Serialize;

use crate::flavour::{Flavour, MpichDevice};
use crate::grammar::{Mode, Qualifier};
use crate::host::VerbsKind;
use crate::resolve::{IpUse, LeftOut, PortUse, Resolution};

/// A libfabric provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// `tcp`.
    Tcp,
    /// `verbs;ofi_rxm` (InfiniBand, RoCE, iWARP).
    Verbs,
    /// `usnic`.
    Usnic,
    /// `psm2` (Omni-Path).
    Psm2,
}

impl Provider {
    /// The name libfabric's `FI_PROVIDER` takes.
    pub fn fi_name(self) -> &'static str {
        match self {
            Provider::Tcp => "tcp",
            Provider::Verbs => "verbs;ofi_rxm",
            Provider::Usnic => "usnic",
            Provider::Psm2 => "psm2",
        }
    }

    fn for_port(kind: VerbsKind) -> Provider {
        match kind {
            VerbsKind::Usnic => Provider::Usnic,
            VerbsKind::OmniPath => Provider::Psm2,
            _ => Provider::Verbs,
        }
    }
}

/// A code path inside one MPI library.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Path {
    /// Open MPI `pml ob1` with BTLs (tcp, openib on 4.x, usnic).
    Ob1,
    /// UCX with all its transports (Open MPI `pml ucx`, MPICH ch4:ucx).
    Ucx,
    /// UCX restricted to TCP (`UCX_TLS=self,sm,tcp`).
    UcxTcp,
    /// UCX restricted to RDMA transports (`UCX_TLS=self,sm,rc,ud`).
    UcxVerbs,
    /// Open MPI `pml cm` with `mtl psm2`.
    CmPsm2,
    /// libfabric with one provider (Open MPI `pml cm`+`mtl ofi`, MPICH ch4:ofi, Intel MPI).
    Ofi(Provider),
    /// MPICH ch3:nemesis TCP.
    NemesisTcp,
    /// Intel MPI's `mlx` provider (UCX underneath).
    IntelMlx,
    /// MVAPICH2's native verbs channel.
    Mvapich2Verbs,
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Ob1 => f.write_str("ob1 (BTLs)"),
            Path::Ucx => f.write_str("ucx"),
            Path::UcxTcp => f.write_str("ucx (tcp transport only)"),
            Path::UcxVerbs => f.write_str("ucx (rdma transports only)"),
            Path::CmPsm2 => f.write_str("cm + mtl psm2"),
            Path::Ofi(p) => write!(f, "ofi (provider {})", p.fi_name()),
            Path::NemesisTcp => f.write_str("ch3:nemesis tcp"),
            Path::IntelMlx => f.write_str("ofi (provider mlx)"),
            Path::Mvapich2Verbs => f.write_str("mvapich2 verbs"),
        }
    }
}

/// Something a path must reach.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target<'a> {
    Ip(&'a IpUse),
    Port(&'a PortUse),
}

impl Target<'_> {
    fn name(&self) -> String {
        match self {
            Target::Ip(u) => u.name.clone(),
            Target::Port(p) => p.id(),
        }
    }

    fn qualifiers(&self) -> Vec<Qualifier> {
        match self {
            Target::Ip(u) => u.qualifiers.iter().copied().collect(),
            Target::Port(p) => p.qualifiers.iter().copied().collect(),
        }
    }

    fn provider(&self) -> Provider {
        match self {
            Target::Ip(_) => Provider::Tcp,
            Target::Port(p) => Provider::for_port(p.kind),
        }
    }
}

/// The outcome of choosing.
#[derive(Debug, Clone)]
pub(crate) struct Chosen {
    pub path: Path,
    pub ip: Vec<IpUse>,
    pub ports: Vec<PortUse>,
    pub left_out: Vec<LeftOut>,
    pub reason: String,
}

fn is_rdma_native(kind: VerbsKind) -> bool {
    matches!(kind, VerbsKind::Infiniband | VerbsKind::Roce)
}

/// Which path a qualifier forces for one target, or why it cannot.
fn qualifier_path(flavour: Flavour, q: Qualifier, t: &Target) -> Result<Path, String> {
    let unsupported = |what: &str| Err(format!("{flavour} has no `{q}` path ({what})"));
    match flavour {
        Flavour::OpenMpi { .. } => match q {
            Qualifier::Tcp | Qualifier::Usnic => Ok(Path::Ob1),
            Qualifier::Verbs if flavour.is_ompi5() => {
                unsupported("Open MPI 5 removed the openib BTL; use :ucx or :ofi")
            }
            Qualifier::Verbs => Ok(Path::Ob1),
            Qualifier::Ucx => Ok(Path::Ucx),
            Qualifier::Psm2 => Ok(Path::CmPsm2),
            Qualifier::Mtl => Ok(match t.provider() {
                Provider::Psm2 => Path::CmPsm2,
                p => Path::Ofi(p),
            }),
            Qualifier::Ofi => Ok(Path::Ofi(t.provider())),
        },
        Flavour::Mpich {
            device: MpichDevice::Ch4Ucx,
        } => match q {
            Qualifier::Tcp => Ok(Path::UcxTcp),
            Qualifier::Ucx => Ok(Path::Ucx),
            Qualifier::Verbs => Ok(Path::UcxVerbs),
            _ => unsupported("this MPICH is built with the ch4:ucx device"),
        },
        Flavour::Mpich {
            device: MpichDevice::Ch4Ofi,
        } => match q {
            Qualifier::Tcp => Ok(Path::Ofi(Provider::Tcp)),
            Qualifier::Verbs => Ok(Path::Ofi(Provider::Verbs)),
            Qualifier::Usnic => Ok(Path::Ofi(Provider::Usnic)),
            Qualifier::Psm2 => Ok(Path::Ofi(Provider::Psm2)),
            Qualifier::Ofi | Qualifier::Mtl => Ok(Path::Ofi(t.provider())),
            Qualifier::Ucx => unsupported("this MPICH is built with the ch4:ofi device"),
        },
        Flavour::Mpich {
            device: MpichDevice::Ch3Nemesis,
        } => match q {
            Qualifier::Tcp => Ok(Path::NemesisTcp),
            _ => unsupported("ch3:nemesis only speaks TCP"),
        },
        Flavour::IntelMpi => match q {
            Qualifier::Tcp => Ok(Path::Ofi(Provider::Tcp)),
            Qualifier::Verbs => Ok(Path::Ofi(Provider::Verbs)),
            Qualifier::Psm2 => Ok(Path::Ofi(Provider::Psm2)),
            Qualifier::Ucx => Ok(Path::IntelMlx),
            Qualifier::Ofi | Qualifier::Mtl => Ok(Path::Ofi(t.provider())),
            Qualifier::Usnic => unsupported("Intel MPI does not support usNIC"),
        },
        Flavour::Mvapich2 => match q {
            Qualifier::Verbs => Ok(Path::Mvapich2Verbs),
            _ => unsupported("MVAPICH2 uses its own verbs channel"),
        },
    }
}

/// Whether a path reaches a target on this flavour.
fn serves(flavour: Flavour, path: Path, t: &Target) -> bool {
    match (path, t) {
        (Path::Ob1, Target::Ip(_)) => true,
        (Path::Ob1, Target::Port(p)) => match p.kind {
            VerbsKind::Usnic => true,
            VerbsKind::Infiniband | VerbsKind::Roce | VerbsKind::Iwarp => !flavour.is_ompi5(),
            _ => false,
        },
        (Path::Ucx, Target::Ip(_)) => true,
        (Path::Ucx | Path::UcxVerbs | Path::IntelMlx, Target::Port(p)) => is_rdma_native(p.kind),
        (Path::UcxTcp | Path::NemesisTcp, Target::Ip(_)) => true,
        (Path::CmPsm2, Target::Port(p)) => p.kind == VerbsKind::OmniPath,
        (Path::Ofi(prov), t) => t.provider() == prov,
        (Path::Mvapich2Verbs, Target::Port(p)) => {
            matches!(
                p.kind,
                VerbsKind::Infiniband | VerbsKind::Roce | VerbsKind::Iwarp
            )
        }
        _ => false,
    }
}

/// The flavour's paths in order of preference when no qualifier decides.
fn preferences(flavour: Flavour, has_native_rdma: bool) -> Vec<Path> {
    let ofi_all = [
        Path::Ofi(Provider::Verbs),
        Path::Ofi(Provider::Psm2),
        Path::Ofi(Provider::Usnic),
        Path::Ofi(Provider::Tcp),
    ];
    match flavour {
        Flavour::OpenMpi { .. } => {
            let mut v = if has_native_rdma {
                vec![Path::Ucx, Path::Ob1]
            } else {
                vec![Path::Ob1, Path::Ucx]
            };
            v.push(Path::CmPsm2);
            v.extend(ofi_all);
            v
        }
        Flavour::Mpich {
            device: MpichDevice::Ch4Ucx,
        } => vec![Path::Ucx],
        Flavour::Mpich {
            device: MpichDevice::Ch4Ofi,
        } => ofi_all.to_vec(),
        Flavour::Mpich {
            device: MpichDevice::Ch3Nemesis,
        } => vec![Path::NemesisTcp],
        Flavour::IntelMpi => {
            let mut v = vec![Path::IntelMlx];
            v.extend([
                Path::Ofi(Provider::Verbs),
                Path::Ofi(Provider::Psm2),
                Path::Ofi(Provider::Tcp),
            ]);
            v
        }
        Flavour::Mvapich2 => vec![Path::Mvapich2Verbs],
    }
}

/// Chooses the path for a resolution on a flavour.
pub(crate) fn choose(res: &Resolution, flavour: Flavour) -> Result<Chosen, String> {
    let targets: Vec<Target> = res
        .ip
        .iter()
        .map(Target::Ip)
        .chain(res.ports.iter().map(Target::Port))
        .collect();
    let mut forced: Vec<(Path, String)> = Vec::new();
    for t in &targets {
        for q in t.qualifiers() {
            let p = qualifier_path(flavour, q, t)?;
            if !forced.iter().any(|(f, _)| *f == p) {
                forced.push((p, format!("{}:{q}", t.name())));
            }
        }
    }
    if forced.len() > 1 {
        return Err(format!(
            "{flavour} uses one path per job, but the qualifiers ask for several: {}",
            forced
                .iter()
                .map(|(p, why)| format!("{p} for {why}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let has_native = res.ports.iter().any(|p| is_rdma_native(p.kind));
    let (path, reason) = match forced.first() {
        Some((p, why)) => (*p, format!("the qualifier of {why} asks for it")),
        None => {
            let prefs = preferences(flavour, has_native);
            let all = prefs
                .iter()
                .find(|p| targets.iter().all(|t| serves(flavour, **p, t)));
            match (all, res.mode) {
                (Some(p), _) => (*p, "the preferred path that reaches everything selected".to_string()),
                (None, Mode::Enable) => {
                    return Err(format!(
                        "no single {flavour} path reaches all of {}; split the selection or pick one with a qualifier",
                        targets.iter().map(Target::name).collect::<Vec<_>>().join(", ")
                    ))
                }
                (None, Mode::Disable) => {
                    let best = prefs
                        .iter()
                        .max_by_key(|p| {
                            // Prefer reaching RDMA ports, then the count; ties keep order.
                            let n = targets.iter().filter(|t| serves(flavour, **p, t)).count();
                            let rdma = targets
                                .iter()
                                .filter(|t| matches!(t, Target::Port(_)) && serves(flavour, **p, t))
                                .count();
                            (rdma, n, std::cmp::Reverse(prefs.iter().position(|x| x == *p)))
                        })
                        .copied()
                        .ok_or_else(|| format!("{flavour} has no usable path"))?;
                    (best, "no single path reaches everything left; this one reaches the most".to_string())
                }
            }
        }
    };
    let mut left_out = Vec::new();
    let mut unreached = Vec::new();
    for t in &targets {
        if !serves(flavour, path, t) {
            unreached.push(t.name());
        }
    }
    if !unreached.is_empty() {
        if res.mode == Mode::Enable {
            return Err(format!(
                "{flavour}: the {path} path cannot reach {}, which the selection also names; drop it or use a qualifier it can share",
                unreached.join(", ")
            ));
        }
        for name in &unreached {
            left_out.push(LeftOut {
                what: name.clone(),
                reason: format!("{flavour}'s {path} path cannot reach it"),
            });
        }
    }
    let ip = res
        .ip
        .iter()
        .filter(|u| serves(flavour, path, &Target::Ip(u)))
        .cloned()
        .collect();
    let ports = res
        .ports
        .iter()
        .filter(|u| serves(flavour, path, &Target::Port(u)))
        .cloned()
        .collect();
    Ok(Chosen {
        path,
        ip,
        ports,
        left_out,
        reason,
    })
}
