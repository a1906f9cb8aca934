//! Choosing one code path (PML/MTL/BTL set, MPICH device transport, provider) that
//! reaches everything a resolution kept, honouring the qualifiers.
//!
//! Qualifiers force a path; items without one take the flavour's preferred path that
//! reaches all of them. With `--enable`, every item must be reached: an item reaches
//! *devices*, and a verbs port together with the netdev behind it (`mlx5_0:1` and `ib0`)
//! is one device, reached when the path reaches either — the RDMA side preferred (the
//! path reaching the most verbs ports wins, then the flavour's order), the other side
//! left out with the reason. A device the path cannot reach at all is an error (the user
//! named it) that names the qualifier to add where one would help; with `--disable`,
//! what the path cannot reach is left out with the reason.

use std::fmt;

use serde::Serialize;

use crate::flavour::{Flavour, MpichDevice};
use crate::grammar::{Item, Mode, Qualifier};
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
    /// `efa` (AWS Elastic Fabric Adapter).
    Efa,
    /// `cxi` (HPE Slingshot-11).
    Cxi,
    /// `opx` (Omni-Path Express), only when asked for with `:opx`.
    Opx,
}

impl Provider {
    /// The name libfabric's `FI_PROVIDER` takes.
    pub fn fi_name(self) -> &'static str {
        match self {
            Provider::Tcp => "tcp",
            Provider::Verbs => "verbs;ofi_rxm",
            Provider::Usnic => "usnic",
            Provider::Psm2 => "psm2",
            Provider::Efa => "efa",
            Provider::Cxi => "cxi",
            Provider::Opx => "opx",
        }
    }

    fn for_port(kind: VerbsKind) -> Provider {
        match kind {
            VerbsKind::Usnic => Provider::Usnic,
            VerbsKind::OmniPath => Provider::Psm2,
            VerbsKind::Efa => Provider::Efa,
            VerbsKind::Slingshot => Provider::Cxi,
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
    /// Open MPI `pml cm` with `mtl psm2` (Omni-Path).
    CmPsm2,
    /// Open MPI 4 `pml cm` with `mtl psm` (TrueScale `qib` InfiniBand).
    CmPsm,
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
            Path::CmPsm => f.write_str("cm + mtl psm"),
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

    fn provider(&self) -> Provider {
        match self {
            Target::Ip(_) => Provider::Tcp,
            Target::Port(p) => Provider::for_port(p.kind),
        }
    }

    fn is_port(&self) -> bool {
        matches!(self, Target::Port(_))
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

/// Why a UCX-only flavour cannot reach an EFA device, and what can.
const EFA_NEEDS_OFI: &str = "EFA is driven by libfabric's efa provider alone, which UCX does \
     not use: run with an MPICH built with ch4:ofi, Open MPI or Intel MPI";

/// Why a UCX-only flavour cannot reach a Slingshot NIC, and what can.
const CXI_NEEDS_OFI: &str = "Slingshot-11 is driven by libfabric's cxi provider alone, which UCX \
     does not use: run with Cray MPICH, Open MPI 5 (mtl ofi), an MPICH built with ch4:ofi or \
     Intel MPI over a libfabric that has cxi";

/// The hint for devices only libfabric reaches (EFA, Slingshot), when any is among
/// those a flavour cannot reach.
fn ofi_only_hint<'a>(targets: impl IntoIterator<Item = &'a Target<'a>>) -> Option<&'static str> {
    targets.into_iter().find_map(|t| match t {
        Target::Port(p) if p.kind == VerbsKind::Efa => Some(EFA_NEEDS_OFI),
        Target::Port(p) if p.kind == VerbsKind::Slingshot => Some(CXI_NEEDS_OFI),
        _ => None,
    })
}

/// True for ports UCX drives with its RDMA transports: InfiniBand and RoCE, but not
/// TrueScale (`qib`), which UCX does not support.
fn ucx_reaches(p: &PortUse) -> bool {
    matches!(p.kind, VerbsKind::Infiniband | VerbsKind::Roce) && !p.is_truescale()
}

/// Why Open MPI's OFI MTL cannot drive usNIC.
const USNIC_UNTAGGED: &str = "the ofi MTL needs tagged messages (FI_TAGGED), which libfabric's \
     usnic provider does not have; Open MPI reaches usNIC through its usnic BTL (`:usnic`, or \
     no qualifier)";

/// Which path a qualifier forces for one target, or why it cannot.
fn qualifier_path(flavour: Flavour, q: Qualifier, t: &Target) -> Result<Path, String> {
    let unsupported = |what: &str| Err(format!("{flavour} has no `{q}` path ({what})"));
    let truescale = matches!(t, Target::Port(p) if p.is_truescale());
    match flavour {
        Flavour::OpenMpi { .. } => match q {
            Qualifier::Tcp | Qualifier::Usnic => Ok(Path::Ob1),
            Qualifier::Verbs if flavour.is_ompi5() => {
                unsupported("Open MPI 5 removed the openib BTL; use :ucx or :ofi")
            }
            Qualifier::Verbs => Ok(Path::Ob1),
            Qualifier::Ucx => Ok(Path::Ucx),
            Qualifier::Psm2 => Ok(Path::CmPsm2),
            Qualifier::Psm if flavour.is_ompi5() => {
                unsupported("Open MPI 5 removed the psm MTL; use :ofi")
            }
            Qualifier::Psm => Ok(Path::CmPsm),
            Qualifier::Mtl | Qualifier::Ofi if t.provider() == Provider::Usnic => {
                unsupported(USNIC_UNTAGGED)
            }
            Qualifier::Mtl if truescale && !flavour.is_ompi5() => Ok(Path::CmPsm),
            Qualifier::Mtl => Ok(match t.provider() {
                Provider::Psm2 => Path::CmPsm2,
                p => Path::Ofi(p),
            }),
            Qualifier::Ofi => Ok(Path::Ofi(t.provider())),
            Qualifier::Efa => Ok(Path::Ofi(Provider::Efa)),
            Qualifier::Cxi => Ok(Path::Ofi(Provider::Cxi)),
            Qualifier::Opx => Ok(Path::Ofi(Provider::Opx)),
        },
        Flavour::Mpich {
            device: MpichDevice::Ch4Ucx,
        } => match q {
            Qualifier::Tcp => Ok(Path::UcxTcp),
            Qualifier::Ucx => Ok(Path::Ucx),
            Qualifier::Verbs => Ok(Path::UcxVerbs),
            Qualifier::Efa => unsupported(EFA_NEEDS_OFI),
            Qualifier::Cxi => unsupported(CXI_NEEDS_OFI),
            Qualifier::Opx => unsupported(
                "OPX is a libfabric provider, which UCX does not use: run with an MPICH built with ch4:ofi, Open MPI or Intel MPI",
            ),
            _ => unsupported("this MPICH is built with the ch4:ucx device"),
        },
        Flavour::Mpich {
            device: MpichDevice::Ch4Ofi,
        } => match q {
            Qualifier::Tcp => Ok(Path::Ofi(Provider::Tcp)),
            Qualifier::Verbs => Ok(Path::Ofi(Provider::Verbs)),
            Qualifier::Usnic => Ok(Path::Ofi(Provider::Usnic)),
            Qualifier::Psm2 => Ok(Path::Ofi(Provider::Psm2)),
            Qualifier::Efa => Ok(Path::Ofi(Provider::Efa)),
            Qualifier::Cxi => Ok(Path::Ofi(Provider::Cxi)),
            Qualifier::Opx => Ok(Path::Ofi(Provider::Opx)),
            Qualifier::Ofi | Qualifier::Mtl => Ok(Path::Ofi(t.provider())),
            Qualifier::Ucx => unsupported("this MPICH is built with the ch4:ofi device"),
            Qualifier::Psm => unsupported("PSM is Open MPI 4's psm MTL; use :verbs"),
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
            Qualifier::Efa => Ok(Path::Ofi(Provider::Efa)),
            Qualifier::Cxi => Ok(Path::Ofi(Provider::Cxi)),
            Qualifier::Opx => Ok(Path::Ofi(Provider::Opx)),
            Qualifier::Ucx => Ok(Path::IntelMlx),
            Qualifier::Usnic => unsupported("Intel MPI does not support usNIC"),
            Qualifier::Ofi | Qualifier::Mtl if t.provider() == Provider::Usnic => {
                unsupported("Intel MPI does not support usNIC")
            }
            Qualifier::Ofi | Qualifier::Mtl => Ok(Path::Ofi(t.provider())),
            Qualifier::Psm => unsupported("PSM is Open MPI 4's psm MTL; use :verbs"),
        },
        Flavour::Mvapich2 => match q {
            Qualifier::Verbs => Ok(Path::Mvapich2Verbs),
            _ => unsupported("MVAPICH2 uses its own verbs channel"),
        },
        Flavour::CrayMpich => match q {
            Qualifier::Tcp => Ok(Path::Ofi(Provider::Tcp)),
            Qualifier::Verbs => Ok(Path::Ofi(Provider::Verbs)),
            Qualifier::Cxi => Ok(Path::Ofi(Provider::Cxi)),
            Qualifier::Efa => Ok(Path::Ofi(Provider::Efa)),
            Qualifier::Ofi | Qualifier::Mtl
                if matches!(t.provider(), Provider::Usnic | Provider::Psm2) =>
            {
                unsupported(
                    "Cray's libfabric has neither the usnic nor the psm2 provider; Cray MPICH supports Slingshot (cxi), verbs and tcp",
                )
            }
            Qualifier::Ofi | Qualifier::Mtl => Ok(Path::Ofi(t.provider())),
            Qualifier::Ucx => unsupported(
                "this Cray MPICH is its libfabric build; HPE's UCX build is `--mpi cray-mpich-ucx`",
            ),
            Qualifier::Psm2 | Qualifier::Psm | Qualifier::Usnic | Qualifier::Opx => {
                unsupported("Cray MPICH supports Slingshot (cxi), verbs and tcp")
            }
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
        (Path::Ucx | Path::UcxVerbs | Path::IntelMlx, Target::Port(p)) => ucx_reaches(p),
        (Path::UcxTcp | Path::NemesisTcp, Target::Ip(_)) => true,
        (Path::CmPsm2, Target::Port(p)) => p.kind == VerbsKind::OmniPath,
        (Path::CmPsm, Target::Port(p)) => p.is_truescale() && !flavour.is_ompi5(),
        // OPX drives what PSM2 drives (hfi1), when asked for.
        (Path::Ofi(Provider::Opx), Target::Port(p)) => p.kind == VerbsKind::OmniPath,
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
fn preferences(flavour: Flavour, res: &Resolution) -> Vec<Path> {
    let has_native_rdma = res.ports.iter().any(ucx_reaches);
    let has_truescale = res.ports.iter().any(PortUse::is_truescale);
    let has_iwarp = res.ports.iter().any(|p| p.kind == VerbsKind::Iwarp);
    let ofi_all = [
        Path::Ofi(Provider::Cxi),
        Path::Ofi(Provider::Verbs),
        Path::Ofi(Provider::Psm2),
        Path::Ofi(Provider::Efa),
        Path::Ofi(Provider::Usnic),
        Path::Ofi(Provider::Tcp),
    ];
    match flavour {
        Flavour::OpenMpi { .. } => {
            let mut v = if has_native_rdma {
                vec![Path::Ucx, Path::Ob1]
            } else if has_truescale && !flavour.is_ompi5() {
                vec![Path::CmPsm, Path::Ob1, Path::Ucx]
            } else if has_iwarp {
                // iWARP through libfabric's verbs (the ofi MTL), as on Open MPI 5: openib
                // reaches it only with its rdmacm CPC, which builds without librdmacm lack
                // (Debian's 4.1.4 has udcm alone) — openib then drops out and the job runs
                // TCP over the same NIC. `:verbs` still asks for openib.
                vec![Path::Ofi(Provider::Verbs), Path::Ob1, Path::Ucx]
            } else {
                vec![Path::Ob1, Path::Ucx]
            };
            v.push(Path::CmPsm2);
            if !v.contains(&Path::CmPsm) {
                v.push(Path::CmPsm);
            }
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
                Path::Ofi(Provider::Cxi),
                Path::Ofi(Provider::Verbs),
                Path::Ofi(Provider::Psm2),
                Path::Ofi(Provider::Efa),
                Path::Ofi(Provider::Tcp),
            ]);
            v
        }
        Flavour::Mvapich2 => vec![Path::Mvapich2Verbs],
        // Slingshot-11 through cxi; Slingshot-10 (Mellanox NICs) through verbs.
        Flavour::CrayMpich => vec![
            Path::Ofi(Provider::Cxi),
            Path::Ofi(Provider::Verbs),
            Path::Ofi(Provider::Efa),
            Path::Ofi(Provider::Tcp),
        ],
    }
}

/// One device an `--enable` item reaches: a verbs port with the netdevs behind it that
/// the item also chose, or a lone IP interface. Reached when any of its targets is.
struct Unit<'a> {
    /// Index into `Resolution::items`.
    item: usize,
    targets: Vec<Target<'a>>,
}

impl Unit<'_> {
    fn reached(&self, flavour: Flavour, path: Path) -> bool {
        self.targets.iter().any(|t| serves(flavour, path, t))
    }

    fn names(&self) -> String {
        self.targets
            .iter()
            .map(Target::name)
            .collect::<Vec<_>>()
            .join("/")
    }
}

/// The devices of each `--enable` item.
fn units(res: &Resolution) -> Vec<Unit<'_>> {
    let mut out = Vec::new();
    for (i, m) in res.items.iter().enumerate() {
        let ports: Vec<&PortUse> = m
            .ports
            .iter()
            .filter_map(|id| res.ports.iter().find(|p| &p.id() == id))
            .collect();
        let ips: Vec<&IpUse> =
            m.ip.iter()
                .filter_map(|n| res.ip.iter().find(|u| &u.name == n))
                .collect();
        for p in &ports {
            let mut targets = vec![Target::Port(p)];
            // A Slingshot NIC is reached through cxi, never by TCP on its `hsnN` netdev
            // unless the item asks for `:tcp` (which keeps the netdev alone).
            if p.kind != VerbsKind::Slingshot {
                targets.extend(
                    ips.iter()
                        .filter(|u| p.netdevs.contains(&u.name))
                        .map(|u| Target::Ip(u)),
                );
            }
            out.push(Unit { item: i, targets });
        }
        for u in ips
            .iter()
            .filter(|u| !ports.iter().any(|p| p.netdevs.contains(&u.name)))
        {
            out.push(Unit {
                item: i,
                targets: vec![Target::Ip(u)],
            });
        }
    }
    out
}

fn item_label(res: &Resolution, i: usize) -> String {
    res.items
        .get(i)
        .map(|m| m.item.to_string())
        .unwrap_or_default()
}

/// The selection that would work with `:tcp` added to some items, when one would: the
/// flavour's TCP path must reach every device once the items whose devices it misses
/// carry their netdevs over TCP, and agree with every qualifier already given.
fn tcp_hint(
    res: &Resolution,
    flavour: Flavour,
    units: &[Unit],
    allowed: &[(usize, Vec<Path>)],
) -> Option<String> {
    let probe = units.first()?.targets.first()?;
    let tcp = qualifier_path(flavour, Qualifier::Tcp, probe).ok()?;
    if !allowed.iter().all(|(_, ps)| ps.contains(&tcp)) {
        return None;
    }
    let mut fix = Vec::new();
    for u in units.iter().filter(|u| !u.reached(flavour, tcp)) {
        let m = res.items.get(u.item)?;
        let has_netdev = u
            .targets
            .iter()
            .any(|t| matches!(t, Target::Port(p) if !p.netdevs.is_empty()));
        if m.item.qualifier.is_some() || !has_netdev {
            return None;
        }
        if !fix.contains(&u.item) {
            fix.push(u.item);
        }
    }
    if fix.is_empty() {
        return None;
    }
    let list: Vec<String> = res
        .items
        .iter()
        .enumerate()
        .map(|(i, m)| {
            if fix.contains(&i) {
                Item {
                    network: m.item.network.clone(),
                    qualifier: Some(Qualifier::Tcp),
                }
                .to_string()
            } else {
                m.item.to_string()
            }
        })
        .collect();
    let which: Vec<String> = fix
        .iter()
        .map(|i| format!("`{}`", item_label(res, *i)))
        .collect();
    Some(format!(
        "add the qualifier `:tcp` to {} to carry it over TCP on its netdev ({tcp}): --enable {}",
        which.join(", "),
        list.join(",")
    ))
}

/// Chooses the path for a resolution on a flavour.
pub(crate) fn choose(res: &Resolution, flavour: Flavour) -> Result<Chosen, String> {
    let (path, reason) = match res.mode {
        Mode::Enable => choose_enable(res, flavour)?,
        Mode::Disable => choose_disable(res, flavour)?,
    };
    let mut left_out = Vec::new();
    let served_ports: Vec<&PortUse> = res
        .ports
        .iter()
        .filter(|p| serves(flavour, path, &Target::Port(p)))
        .collect();
    for u in res
        .ip
        .iter()
        .filter(|u| !serves(flavour, path, &Target::Ip(u)))
    {
        let twin = served_ports.iter().find(|p| p.netdevs.contains(&u.name));
        let reason = match (twin, res.mode) {
            (Some(p), Mode::Enable) => format!(
                "{flavour}'s {path} path cannot reach it; its device is used through the verbs port {}",
                p.id()
            ),
            _ => format!("{flavour}'s {path} path cannot reach it"),
        };
        left_out.push(LeftOut {
            what: u.name.clone(),
            reason,
        });
    }
    for p in res
        .ports
        .iter()
        .filter(|p| !serves(flavour, path, &Target::Port(p)))
    {
        let twin = res
            .ip
            .iter()
            .find(|u| p.netdevs.contains(&u.name) && serves(flavour, path, &Target::Ip(u)));
        let reason = match (twin, res.mode) {
            (Some(u), Mode::Enable) => format!(
                "{flavour}'s {path} path cannot reach it; its device is used through its netdev {}",
                u.name
            ),
            _ => format!("{flavour}'s {path} path cannot reach it"),
        };
        left_out.push(LeftOut {
            what: p.id(),
            reason,
        });
    }
    let ip = res
        .ip
        .iter()
        .filter(|u| serves(flavour, path, &Target::Ip(u)))
        .cloned()
        .collect();
    let ports = served_ports.into_iter().cloned().collect();
    Ok(Chosen {
        path,
        ip,
        ports,
        left_out,
        reason,
    })
}

/// `--enable`: every device of every item must be reached.
fn choose_enable(res: &Resolution, flavour: Flavour) -> Result<(Path, String), String> {
    let units = units(res);
    // Qualifiers: each qualified item allows the paths its qualifier gives for its
    // targets (verbs ports first); the path must be allowed by all of them.
    let mut allowed: Vec<(usize, Vec<Path>)> = Vec::new();
    for (i, m) in res.items.iter().enumerate() {
        let Some(q) = m.item.qualifier else { continue };
        let mut paths = Vec::new();
        for u in units.iter().filter(|u| u.item == i) {
            let mut targets = u.targets.clone();
            targets.sort_by_key(|t| !t.is_port());
            for t in &targets {
                let p = qualifier_path(flavour, q, t)?;
                if !paths.contains(&p) {
                    paths.push(p);
                }
            }
        }
        allowed.push((i, paths));
    }
    let prefs = preferences(flavour, res);
    let candidates: Vec<Path> = match allowed.first() {
        None => prefs.clone(),
        Some((_, first)) => {
            let mut both: Vec<Path> = first
                .iter()
                .copied()
                .filter(|p| allowed.iter().all(|(_, ps)| ps.contains(p)))
                .collect();
            both.sort_by_key(|p| prefs.iter().position(|x| x == p).unwrap_or(usize::MAX));
            if both.is_empty() {
                return Err(format!(
                    "{flavour} uses one path per job, but the qualifiers ask for several: {}",
                    allowed
                        .iter()
                        .map(|(i, ps)| format!(
                            "{} for `{}`",
                            ps.iter()
                                .map(Path::to_string)
                                .collect::<Vec<_>>()
                                .join(" or "),
                            item_label(res, *i)
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            both
        }
    };
    let ports_reached = |p: Path| {
        res.ports
            .iter()
            .filter(|u| serves(flavour, p, &Target::Port(u)))
            .count()
    };
    let best = candidates
        .iter()
        .enumerate()
        .filter(|(_, p)| units.iter().all(|u| u.reached(flavour, **p)))
        .max_by_key(|(pos, p)| (ports_reached(**p), std::cmp::Reverse(*pos)))
        .map(|(_, p)| *p);
    if let Some(path) = best {
        let everything = res.ip.iter().all(|u| serves(flavour, path, &Target::Ip(u)))
            && res
                .ports
                .iter()
                .all(|u| serves(flavour, path, &Target::Port(u)));
        let reason = match allowed.first() {
            Some((i, _)) => format!("the qualifier of `{}` asks for it", item_label(res, *i)),
            None if everything => "the preferred path that reaches everything selected".to_string(),
            None => "the preferred path that reaches every selected device (a verbs port rather than the netdev behind it)".to_string(),
        };
        return Ok((path, reason));
    }
    Err(enable_failure(res, flavour, &units, &candidates, &allowed))
}

/// Why no path reaches every device an `--enable` list names, with the qualifier that
/// would help where one would.
fn enable_failure(
    res: &Resolution,
    flavour: Flavour,
    units: &[Unit],
    candidates: &[Path],
    allowed: &[(usize, Vec<Path>)],
) -> String {
    let unreached =
        |p: Path| -> Vec<&Unit> { units.iter().filter(|u| !u.reached(flavour, p)).collect() };
    let describe = |us: &[&Unit]| -> String {
        us.iter()
            .map(|u| format!("{} (named by `{}`)", u.names(), item_label(res, u.item)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some((i, _)) = allowed.first() {
        // The qualifiers decide the path; name what it misses.
        let path = candidates
            .iter()
            .copied()
            .min_by_key(|p| unreached(*p).len())
            .unwrap_or(Path::Ob1);
        let missed = unreached(path);
        let hint = tcp_hint(res, flavour, units, allowed)
            .unwrap_or_else(|| "drop it or give it a qualifier that the path shares".to_string());
        return format!(
            "{flavour}: the {path} path (asked for by `{}`) cannot reach {}, which the selection also names; {hint}",
            item_label(res, *i),
            describe(&missed)
        );
    }
    let nowhere: Vec<&Unit> = units
        .iter()
        .filter(|u| !candidates.iter().any(|p| u.reached(flavour, *p)))
        .collect();
    if !nowhere.is_empty() {
        let ofi_only = ofi_only_hint(nowhere.iter().flat_map(|u| u.targets.iter()));
        let tcp = tcp_hint(res, flavour, units, allowed);
        let hint = match (ofi_only, tcp) {
            (Some(o), Some(t)) => format!("; {o}; or {t}"),
            (Some(o), None) => format!("; {o}"),
            (None, Some(t)) => format!("; {t}"),
            (None, None) => String::new(),
        };
        return format!(
            "{flavour} cannot reach {} on any of its paths ({}){hint}",
            describe(&nowhere),
            candidates
                .iter()
                .map(Path::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let per_path: Vec<String> = candidates
        .iter()
        .filter(|p| units.iter().any(|u| u.reached(flavour, **p)))
        .map(|p| format!("{p} cannot reach {}", describe(&unreached(*p))))
        .collect();
    let hint = tcp_hint(res, flavour, units, allowed).unwrap_or_else(|| {
        "split the selection, or pick one path with a qualifier on every item".to_string()
    });
    format!(
        "no single {flavour} path reaches all of {}: {}; {hint}",
        units.iter().map(Unit::names).collect::<Vec<_>>().join(", "),
        per_path.join("; ")
    )
}

/// `--disable`: the path that reaches the most of what is left, RDMA ports first.
fn choose_disable(res: &Resolution, flavour: Flavour) -> Result<(Path, String), String> {
    let targets: Vec<Target> = res
        .ip
        .iter()
        .map(Target::Ip)
        .chain(res.ports.iter().map(Target::Port))
        .collect();
    let prefs = preferences(flavour, res);
    if let Some(p) = prefs
        .iter()
        .find(|p| targets.iter().all(|t| serves(flavour, **p, t)))
    {
        return Ok((
            *p,
            "the preferred path that reaches everything selected".to_string(),
        ));
    }
    let best = prefs
        .iter()
        .enumerate()
        .max_by_key(|(pos, p)| {
            // Prefer reaching RDMA ports, then the count; ties keep order.
            let n = targets.iter().filter(|t| serves(flavour, **p, t)).count();
            let rdma = targets
                .iter()
                .filter(|t| t.is_port() && serves(flavour, **p, t))
                .count();
            (rdma, n, std::cmp::Reverse(*pos))
        })
        .map(|(_, p)| *p)
        .ok_or_else(|| format!("{flavour} has no usable path"))?;
    if !targets.iter().any(|t| serves(flavour, best, t)) {
        let what: Vec<String> = targets.iter().map(Target::name).collect();
        let hint = ofi_only_hint(targets.iter())
            .map(|h| format!("; {h}"))
            .unwrap_or_default();
        return Err(format!(
            "{flavour} can reach none of what {} leaves ({}): its device list would be empty{hint}",
            res.mode.switch(),
            what.join(", ")
        ));
    }
    Ok((
        best,
        "no single path reaches everything left; this one reaches the most".to_string(),
    ))
}
