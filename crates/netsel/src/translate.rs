//! Translation of a resolution into the settings of one MPI flavour.
//!
//! The runtime control path (Open MPI's `oob_tcp_if_include`, PRRTE's `prte_if_include`,
//! Hydra's `HYDRA_IFACE`) is deliberately NOT steered: the selection is about the data
//! path, and by the time a rank (or `xylem net exec` under `mpirun`) runs, the launcher
//! has already wired its control connections; setting them from inside a rank can only
//! break the rank-to-daemon link. Instead a note gives the launcher option to use.

use serde::Serialize;

use crate::flavour::Flavour;
use crate::grammar::Mode;
use crate::host::VerbsKind;
use crate::partition::{partition_number, scope, Scope};
use crate::path::{choose, Chosen, Path, Provider};
use crate::resolve::{LeftOut, Resolution};
use crate::settings::{env, mca, Knob, Setting};
use crate::versions::{Libraries, LIBFABRIC_EFA_IFACE, LIBFABRIC_OPX_PORT, LIBFABRIC_VERBS_LISTS};

/// Open MPI's default `btl_tcp_if_exclude`; an exclude list replaces it, so it is put back.
pub const OMPI_TCP_DEFAULT_EXCLUDE: &str = "127.0.0.1/8,sppp";

/// Settings for one flavour on one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Translation {
    /// The flavour translated for.
    pub flavour: Flavour,
    /// The chosen path, in words.
    pub path: String,
    /// Why this path.
    pub path_reason: String,
    /// The settings, in order.
    pub settings: Vec<Setting>,
    /// Targets the path or a one-value knob cannot carry.
    pub left_out: Vec<LeftOut>,
    /// Notes: the control path and launcher options.
    pub notes: Vec<String>,
    /// What the selection loses on this host, each naming what was lost: a fast fabric
    /// driven over TCP without `:tcp`, devices a one-value knob cannot hold (multi-rail),
    /// a partition or VLAN that cannot reach RDMA, an interface the transport refuses.
    /// Front ends print them as warnings; `--strict` makes them errors.
    pub warnings: Vec<String>,
}

/// A selection that this flavour cannot honour on this host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("host {hostname}: {message}")]
pub struct TranslationError {
    /// The host.
    pub hostname: String,
    /// What is wrong.
    pub message: String,
}

/// Translates a resolution for a flavour, each setting in the form of the newest
/// libraries ([`translate_for`] with nothing known of them).
pub fn translate(res: &Resolution, flavour: Flavour) -> Result<Translation, TranslationError> {
    translate_for(res, flavour, &Libraries::UNKNOWN)
}

/// Translates a resolution for a flavour whose job loads `libs`: a setting that the loaded
/// release reads in another form, or not at all, takes the form it reads, and what that
/// form cannot hold is said as a loss ([`crate::versions`]).
pub fn translate_for(
    res: &Resolution,
    flavour: Flavour,
    libs: &Libraries,
) -> Result<Translation, TranslationError> {
    let chosen = choose(res, flavour).map_err(|message| TranslationError {
        hostname: res.hostname.clone(),
        message,
    })?;
    let mut t = Translation {
        flavour,
        path: chosen.path.to_string(),
        path_reason: chosen.reason.clone(),
        settings: Vec::new(),
        left_out: chosen.left_out.clone(),
        notes: Vec::new(),
        warnings: Vec::new(),
    };
    let scope = scope(res, &chosen.ports);
    t.warnings.extend(scope.warnings.iter().cloned());
    let on = Job {
        res,
        chosen: &chosen,
        scope: &scope,
        libs,
    };
    match flavour {
        Flavour::OpenMpi { .. } => open_mpi(&on, flavour, &mut t),
        Flavour::Mpich { .. } => mpich(&on, &mut t),
        Flavour::IntelMpi => intel(&on, &mut t),
        Flavour::Mvapich2 => mvapich2(&on, &mut t),
        Flavour::CrayMpich => cray_mpich(&on, &mut t),
    }
    scope_kept(&scope, &mut t);
    crate::downgrade::check(res, &chosen, flavour, &mut t.warnings);
    control_path_note(&chosen, flavour, &mut t);
    for w in &mut t.warnings {
        *w = format!("host {}: {w}", res.hostname);
    }
    Ok(t)
}

/// The knobs that keep RDMA traffic in a selected partition, and in a selected VLAN's
/// GID; a path that set none of them has no such knob, which is a loss to say.
const PARTITION_KNOBS: [&str; 4] = [
    "UCX_IB_PKEY",
    "OMPI_MCA_btl_openib_pkey",
    "MV2_DEFAULT_PKEY",
    "FI_VERBS_IFACE",
];
/// libfabric's verbs path (`verbs;ofi_rxm`) sets its connections up through rdmacm on the
/// address of `FI_VERBS_IFACE`'s netdev, whose GID is the VLAN's: that knob keeps the
/// VLAN (its `FI_VERBS_GID_IDX` is read only by datagram endpoints, which rxm never opens).
const GID_KNOBS: [&str; 4] = [
    "UCX_IB_GID_INDEX",
    "OMPI_MCA_btl_openib_gid_index",
    "FI_VERBS_IFACE",
    "MV2_DEFAULT_GID_INDEX",
];

fn scope_kept(scope: &Scope, t: &mut Translation) {
    let set = |knobs: &[&str]| t.settings.iter().any(|s| knobs.contains(&s.env.as_str()));
    let mut lost = Vec::new();
    if let Some(k) = scope.pkey {
        if !set(&PARTITION_KNOBS) {
            lost.push(format!(
                "{}'s {} path has no partition setting: its RDMA traffic stays in the default partition, not 0x{k:04x}",
                t.flavour, t.path
            ));
        }
    }
    if let Some(g) = scope.gid_index {
        if !set(&GID_KNOBS) {
            lost.push(format!(
                "{}'s {} path has no GID setting: its RDMA traffic uses the library's default GID, not {g} (the selected VLAN's)",
                t.flavour, t.path
            ));
        }
    }
    t.warnings.extend(lost);
}

/// What every translation step reads: the resolution, the chosen path and what the
/// selected netdevs mean on its RDMA ports.
struct Job<'a> {
    res: &'a Resolution,
    chosen: &'a Chosen,
    scope: &'a Scope,
    libs: &'a Libraries,
}

/// Leaves a selected target out because a knob holds fewer than were selected, and says
/// so as a warning too: the selection asked for it.
fn lose(t: &mut Translation, what: String, reason: String) {
    t.warnings.push(format!("{what} is not used: {reason}"));
    t.left_out.push(LeftOut { what, reason });
}

fn names(chosen: &Chosen) -> Vec<String> {
    chosen.ip.iter().map(|u| u.name.clone()).collect()
}

fn port_ids(chosen: &Chosen) -> Vec<String> {
    chosen.ports.iter().map(|p| p.id()).collect()
}

fn ucx_devices(chosen: &Chosen) -> String {
    let mut v = port_ids(chosen);
    v.extend(names(chosen));
    v.join(",")
}

/// Keeps the first IP interface for a knob that takes one; the rest are lost, said.
fn first_ip(chosen: &Chosen, knob: &str, t: &mut Translation) -> Option<String> {
    let mut it = chosen.ip.iter();
    let first = it.next()?.name.clone();
    for u in it {
        lose(
            t,
            u.name.clone(),
            format!("{knob} takes one interface; {first} was taken"),
        );
    }
    Some(first)
}

/// The distinct devices of the chosen ports, in order.
fn devices(chosen: &Chosen) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for p in &chosen.ports {
        if !v.contains(&p.device) {
            v.push(p.device.clone());
        }
    }
    v
}

/// How a libfabric verbs knob matches the names it is given (`verbs_info.c`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Matching {
    /// `FI_VERBS_DEVICE_NAME`: a device whose name starts with the value, in any case.
    Prefix,
    /// `FI_VERBS_IFACE`: the interface of exactly that name when there is one, else every
    /// interface whose name starts with it.
    ExactElsePrefix,
}

impl Matching {
    /// Whether the value `v` takes the name `d` on a host whose names are `all`.
    fn takes(self, v: &str, d: &str, all: &[String]) -> bool {
        match self {
            Matching::Prefix => d.to_ascii_lowercase().starts_with(&v.to_ascii_lowercase()),
            Matching::ExactElsePrefix if all.iter().any(|n| n == v) => d == v,
            Matching::ExactElsePrefix => d.starts_with(v),
        }
    }
}

/// The value of a libfabric verbs knob that names `names` (`FI_VERBS_DEVICE_NAME`,
/// `FI_VERBS_IFACE`): one name; several by a common prefix that takes all of them and
/// nothing else of the host (read alike by every release); else a comma list, which
/// libfabric reads from 2.6 — an older one takes the list as one name and finds nothing,
/// so for a release known to be older the first name is kept and the others are said
/// lost; with the release unknown the list is kept, with a note. A name that also takes
/// names left out (`mlx5_1` takes `mlx5_10`) is a warning.
fn verbs_value(on: &Job, names: &[String], knob: &str, m: Matching, t: &mut Translation) -> String {
    let all = &on.res.devices;
    let taken = |v: &str| -> Vec<&String> { all.iter().filter(|d| m.takes(v, d, all)).collect() };
    let takes_only = |v: &str| taken(v).iter().all(|d| names.contains(d));
    let common = names.iter().skip(1).fold(names[0].clone(), |acc, n| {
        acc.chars()
            .zip(n.chars())
            .take_while(|(a, b)| a == b)
            .map(|(a, _)| a)
            .collect()
    });
    if names.len() > 1
        && !common.is_empty()
        && takes_only(&common)
        && names.iter().all(|n| m.takes(&common, n, all))
    {
        return common;
    }
    let kept: &[String] = match on.libs.libfabric_before(LIBFABRIC_VERBS_LISTS) {
        Some(v) if names.len() > 1 => {
            for n in &names[1..] {
                lose(
                    t,
                    n.clone(),
                    format!(
                        "{knob} holds one name in libfabric {v} (a list from {LIBFABRIC_VERBS_LISTS}), and no prefix takes only the selected ones; {} was taken",
                        names[0]
                    ),
                );
            }
            &names[..1]
        }
        _ => names,
    };
    for n in kept.iter().filter(|n| !takes_only(n)) {
        let also: Vec<&str> = taken(n)
            .into_iter()
            .filter(|d| !names.contains(d))
            .map(String::as_str)
            .collect();
        t.warnings.push(format!(
            "{knob} matches by prefix: {n} also takes {}, which the selection leaves out",
            also.join(", ")
        ));
    }
    if kept.len() > 1 && on.libs.libfabric.is_none() {
        t.notes.push(format!(
            "{knob} lists {} names: libfabric reads a list from {LIBFABRIC_VERBS_LISTS}; an older one takes the value as one name and finds nothing, and the job stops",
            kept.len()
        ));
    }
    kept.join(",")
}

/// libfabric efa: every selected device (`FI_EFA_IFACE`, a comma list, fi_efa(7)), which
/// the library spreads its ranks over. A libfabric known to be older than 2.0 has no such
/// variable and uses every EFA device: nothing is set, and a selection that leaves some
/// out is said to lose that.
fn efa_devices(on: &Job, t: &mut Translation) {
    let devs = devices(on.chosen);
    if devs.is_empty() {
        return;
    }
    if let Some(v) = on.libs.libfabric_before(LIBFABRIC_EFA_IFACE) {
        let others: Vec<&str> = on
            .res
            .rdma
            .iter()
            .filter(|(d, kind)| *kind == VerbsKind::Efa && !devs.contains(d))
            .map(|(d, _)| d.as_str())
            .collect();
        let note = format!(
            "libfabric {v} has no FI_EFA_IFACE (from {LIBFABRIC_EFA_IFACE}): its efa provider uses every EFA device of the host"
        );
        if others.is_empty() {
            t.notes.push(note);
        } else {
            t.warnings.push(format!(
                "{note}, {} too, which the selection leaves out",
                others.join(", ")
            ));
        }
        return;
    }
    t.settings.push(env(
        "FI_EFA_IFACE",
        devs.join(","),
        "libfabric efa provider: only the selected devices",
    ));
}

fn ofi_settings(on: &Job, prov: Provider, t: &mut Translation) {
    let chosen = on.chosen;
    t.settings.push(
        env(
            "FI_PROVIDER",
            prov.fi_name(),
            "libfabric: only this provider",
        )
        .excluding(Knob::Env("MPIR_CVAR_OFI_USE_PROVIDER".into())),
    );
    match prov {
        Provider::Tcp => {
            if let Some(i) = first_ip(chosen, "FI_TCP_IFACE", t) {
                t.settings.push(env(
                    "FI_TCP_IFACE",
                    i,
                    "libfabric tcp provider: the selected interface",
                ));
            }
        }
        Provider::Verbs => verbs_devices(on, t),
        // Both take a comma list (fi_efa(7), fi_cxi(7)): every selected device stays, and
        // the library spreads its ranks over them (multi-rail).
        Provider::Efa => efa_devices(on, t),
        Provider::Cxi => device_list(
            chosen,
            "FI_CXI_DEVICE_NAME",
            "libfabric cxi provider: only the selected NICs",
            t,
        ),
        Provider::Opx => opx_hfi_select(on, t),
        Provider::Psm2 => psm2_devices(chosen, t),
        Provider::Usnic => {}
    }
}

/// `knob` set to every selected device as a comma list, when there is one.
fn device_list(chosen: &Chosen, knob: &str, reason: &str, t: &mut Translation) {
    let devs = devices(chosen);
    if !devs.is_empty() {
        t.settings.push(env(knob, devs.join(","), reason));
    }
}

/// How a library writes a partition key: the partition number alone (0 to 0x7fff: UCX,
/// openib), or the whole key with its membership bit (MVAPICH2).
#[derive(Clone, Copy)]
enum PkeyForm {
    Number,
    Key,
}

/// The settings that keep RDMA traffic in the partition and on the VLAN GID the selected
/// netdevs name (see [`crate::partition`]), in the knobs of one library (`who` in the
/// reasons); a library without one of the knobs passes `None` for it.
fn keep_scope(
    scope: &Scope,
    who: &str,
    make: fn(&str, String, String) -> Setting,
    pkey: Option<(&str, PkeyForm)>,
    gid: Option<&str>,
    t: &mut Translation,
) {
    if let (Some(k), Some((knob, form))) = (scope.pkey, pkey) {
        let value = match form {
            PkeyForm::Number => format!("0x{:x}", partition_number(k)),
            PkeyForm::Key => format!("0x{k:04x}"),
        };
        t.settings.push(make(
            knob,
            value,
            format!("{who}: the partition of the selected IPoIB netdev"),
        ));
    }
    if let (Some(g), Some(knob)) = (scope.gid_index, gid) {
        t.settings.push(make(
            knob,
            g.to_string(),
            format!("{who}: the RoCE v2 GID of the selected VLAN netdev"),
        ));
    }
}

/// libfabric verbs: every selected device (`FI_VERBS_DEVICE_NAME`), connections set up on
/// the netdev the selection names behind each port (`FI_VERBS_IFACE`: an IPoIB child
/// such as `ib0.8001` puts the connections in its partition, a VLAN netdev on its VLAN),
/// and the RoCE v2 GID of a selected VLAN with it (rdmacm binds to the netdev's address;
/// `FI_VERBS_GID_IDX` is read by datagram endpoints only, which `ofi_rxm` never opens).
fn verbs_devices(on: &Job, t: &mut Translation) {
    let devs = devices(on.chosen);
    if devs.is_empty() {
        return;
    }
    let value = verbs_value(on, &devs, "FI_VERBS_DEVICE_NAME", Matching::Prefix, t);
    t.settings.push(env(
        "FI_VERBS_DEVICE_NAME",
        value,
        "libfabric verbs provider: the selected devices",
    ));
    let mut netdevs: Vec<String> = Vec::new();
    for p in &on.chosen.ports {
        if let Some(n) = on.scope.netdev_of(&p.id()) {
            if !netdevs.iter().any(|x| x == n) {
                netdevs.push(n.to_string());
            }
        }
    }
    if !netdevs.is_empty() {
        let value = verbs_value(on, &netdevs, "FI_VERBS_IFACE", Matching::ExactElsePrefix, t);
        t.settings.push(env(
            "FI_VERBS_IFACE",
            value,
            "libfabric verbs provider: the netdevs of the selected ports (connection setup; a partition's or VLAN's netdev keeps the connections in it)",
        ));
    }
    // The partition and the VLAN's GID follow the netdev the connections are set up on
    // (rdmacm resolves its address): FI_VERBS_GID_IDX is read by datagram endpoints only.
}

/// PSM2 (Open MPI's `mtl psm2`, libfabric's `psm2`): one HFI by `HFI_UNIT`/`HFI_PORT`;
/// several by PSM2's multi-rail (`PSM2_MULTIRAIL=1`, `PSM2_MULTIRAIL_MAP=unit:port,…`, as
/// Open MPI's documentation of Omni-Path gives them), so every selected HFI is used.
fn psm2_devices(chosen: &Chosen, t: &mut Translation) {
    let rails: Vec<(String, u32, String)> = chosen
        .ports
        .iter()
        .filter(|p| p.kind == VerbsKind::OmniPath)
        .map(|p| (hfi_unit(&p.device), p.port, p.device.clone()))
        .collect();
    match &rails[..] {
        [] => {}
        [(unit, port, device)] => {
            t.settings.push(env(
                "HFI_UNIT",
                unit.clone(),
                format!("PSM2: the HFI of {device}"),
            ));
            t.settings
                .push(env("HFI_PORT", port.to_string(), "PSM2: the selected port"));
        }
        several => {
            t.settings.push(env(
                "PSM2_MULTIRAIL",
                "1",
                "PSM2: multi-rail, every selected HFI",
            ));
            t.settings.push(env(
                "PSM2_MULTIRAIL_MAP",
                several
                    .iter()
                    .map(|(u, p, _)| format!("{u}:{p}"))
                    .collect::<Vec<_>>()
                    .join(","),
                "PSM2: the rails, as unit:port",
            ));
        }
    }
}

/// The HFI unit of an `hfi1_N` device (`N`).
fn hfi_unit(device: &str) -> String {
    device.rsplit('_').next().unwrap_or("0").to_string()
}

/// `FI_OPX_HFI_SELECT` (fi_opx(7)): one HFI as its unit; several, each on a NUMA node of
/// its own, as `numa:UNIT:NODE` selectors, so that each rank opens the HFI of its NUMA
/// node (every selected HFI used); otherwise the first, the others left out. `FI_OPX_PORT`
/// when the selected ports share one number.
fn opx_hfi_select(on: &Job, t: &mut Translation) {
    let chosen = on.chosen;
    let mut hfis: Vec<(&str, Option<u32>)> = chosen
        .ports
        .iter()
        .map(|p| (p.device.as_str(), p.numa_node))
        .collect();
    hfis.dedup();
    let Some(&(first, _)) = hfis.first() else {
        return;
    };
    let mut nodes: Vec<u32> = hfis.iter().filter_map(|(_, n)| *n).collect();
    nodes.sort_unstable();
    nodes.dedup();
    if hfis.len() > 1 && nodes.len() == hfis.len() {
        let selectors: Vec<String> = hfis
            .iter()
            .filter_map(|(d, n)| n.map(|n| format!("numa:{}:{n}", hfi_unit(d))))
            .collect();
        t.settings.push(env(
            "FI_OPX_HFI_SELECT",
            selectors.join(","),
            "libfabric opx provider: each rank the selected HFI of its NUMA node",
        ));
    } else {
        for (d, _) in hfis.iter().skip(1) {
            lose(
                t,
                (*d).to_string(),
                format!(
                    "FI_OPX_HFI_SELECT spreads HFIs by NUMA node, and the selected HFIs do not each have one of their own; {first} was taken"
                ),
            );
        }
        t.settings.push(env(
            "FI_OPX_HFI_SELECT",
            hfi_unit(first),
            format!("libfabric opx provider: the HFI of {first}"),
        ));
    }
    let mut ports: Vec<u32> = chosen.ports.iter().map(|p| p.port).collect();
    ports.sort_unstable();
    ports.dedup();
    if let [port] = ports[..] {
        if let Some(v) = on.libs.libfabric_before(LIBFABRIC_OPX_PORT) {
            // An Omni-Path HFI has one port: the one OPX takes.
            t.notes.push(format!(
                "libfabric {v} has no FI_OPX_PORT (from {LIBFABRIC_OPX_PORT}): its opx provider takes the HFI's port"
            ));
        } else {
            t.settings.push(env(
                "FI_OPX_PORT",
                port.to_string(),
                "libfabric opx provider: the selected port",
            ));
        }
    }
}

/// Open MPI: the PML (and BTLs or MTL) of the chosen path, their interface and device
/// lists, then the one-sided and collective components.
fn open_mpi(on: &Job, flavour: Flavour, t: &mut Translation) {
    let sm = if flavour.is_ompi5() { "sm" } else { "vader" };
    let chosen = on.chosen;
    match chosen.path {
        Path::Ob1 => open_mpi_ob1(on, sm, t),
        Path::Ucx | Path::UcxTcp | Path::UcxVerbs | Path::IntelMlx => open_mpi_ucx(on, sm, t),
        Path::CmPsm2 => open_mpi_psm2(chosen, sm, t),
        Path::CmPsm => open_mpi_psm(chosen, sm, t),
        Path::Ofi(prov) => open_mpi_ofi(on, prov, sm, t),
        Path::NemesisTcp | Path::Mvapich2Verbs => {}
    }
    open_mpi_one_sided_and_collectives(chosen, flavour, t);
}

/// Why the PML is set even where it is Open MPI's default.
const DEBIAN_SITE: &str =
    "set explicitly: Debian's openmpi-mca-params.conf disables ucx, ofi and openib";

/// `pml` set to `value` for the chosen path.
fn open_mpi_pml(chosen: &Chosen, value: &str) -> Setting {
    mca(
        "pml",
        value,
        format!("data path {}; {DEBIAN_SITE}", chosen.path),
    )
}

/// The BTLs of a path that does not use them for the network: loopback and shared memory
/// (`sm` is `vader` before Open MPI 5).
fn open_mpi_net_free_btl(sm: &str) -> Setting {
    mca(
        "btl",
        format!("self,{sm}"),
        "only loopback and shared-memory BTLs, so no BTL opens other networks",
    )
}

/// `pml ob1`: the BTLs of the selected networks (tcp, openib, usnic) and each one's
/// interface or device list.
fn open_mpi_ob1(on: &Job, sm: &str, t: &mut Translation) {
    let (res, chosen) = (on.res, on.chosen);
    t.settings.push(open_mpi_pml(chosen, "ob1"));
    let mut btls = vec!["self".to_string(), sm.to_string()];
    let has = |k: &[VerbsKind]| chosen.ports.iter().any(|p| k.contains(&p.kind));
    if !chosen.ip.is_empty() {
        btls.push("tcp".into());
    }
    if has(&OPENIB_KINDS) {
        btls.push("openib".into());
    }
    if has(&[VerbsKind::Usnic]) {
        btls.push("usnic".into());
    }
    t.settings.push(mca(
        "btl",
        btls.join(","),
        "include list: self and shared memory kept, plus the network BTLs selected",
    ));
    open_mpi_tcp_interfaces(res, chosen, t);
    open_mpi_openib_ports(on, t);
    open_mpi_usnic_devices(chosen, t);
}

/// The verbs kinds that Open MPI 4's openib BTL drives.
const OPENIB_KINDS: [VerbsKind; 3] = [VerbsKind::Infiniband, VerbsKind::Roce, VerbsKind::Iwarp];

/// The TCP BTL's interfaces: `--enable` as an include list of the resolved names,
/// `--disable` as an exclude list with Open MPI's default exclusions put back.
fn open_mpi_tcp_interfaces(res: &Resolution, chosen: &Chosen, t: &mut Translation) {
    if !chosen.ip.is_empty() {
        match res.mode {
            Mode::Enable => t.settings.push(
                mca(
                    "btl_tcp_if_include",
                    names(chosen).join(","),
                    "TCP BTL: the interfaces resolved on this host (names, never a name the host lacks)",
                )
                .excluding(Knob::Mca("btl_tcp_if_exclude".into())),
            ),
            Mode::Disable => {
                let mut v = vec![OMPI_TCP_DEFAULT_EXCLUDE.to_string()];
                v.extend(res.excluded_ip.iter().cloned());
                t.settings.push(
                    mca(
                        "btl_tcp_if_exclude",
                        v.join(","),
                        "TCP BTL: default exclusions (loopback, sppp) put back, plus the disabled interfaces",
                    )
                    .excluding(Knob::Mca("btl_tcp_if_include".into())),
                );
            }
        }
    }
}

/// The openib BTL's `dev:port` list and what InfiniBand, RoCE and iWARP need besides.
fn open_mpi_openib_ports(on: &Job, t: &mut Translation) {
    let chosen = on.chosen;
    let has = |k: &[VerbsKind]| chosen.ports.iter().any(|p| k.contains(&p.kind));
    let openib: Vec<String> = chosen
        .ports
        .iter()
        .filter(|p| OPENIB_KINDS.contains(&p.kind))
        .map(|p| p.id())
        .collect();
    if !openib.is_empty() {
        t.settings.push(
            mca(
                "btl_openib_if_include",
                openib.join(","),
                "openib BTL: the selected dev:port",
            )
            .excluding(Knob::Mca("btl_openib_if_exclude".into())),
        );
        if has(&[VerbsKind::Infiniband]) {
            t.settings.push(mca(
                "btl_openib_allow_ib",
                "1",
                "Open MPI 4 refuses InfiniBand in openib unless allowed",
            ));
        }
        if has(&[VerbsKind::Roce, VerbsKind::Iwarp]) {
            t.settings.push(mca(
                "btl_openib_cpc_include",
                "rdmacm",
                "RoCE and iWARP connect through RDMA CM",
            ));
        }
        keep_scope(
            on.scope,
            "openib BTL",
            mca,
            Some(("btl_openib_pkey", PkeyForm::Number)),
            Some("btl_openib_gid_index"),
            t,
        );
    }
}

/// UCX's partition and GID of the selected netdevs (`UCX_IB_PKEY` takes the partition
/// number, 0 to 0x7fff; `UCX_IB_GID_INDEX` the GID index).
fn ucx_scope(scope: &Scope, t: &mut Translation) {
    keep_scope(
        scope,
        "UCX",
        env,
        Some(("UCX_IB_PKEY", PkeyForm::Number)),
        Some("UCX_IB_GID_INDEX"),
        t,
    );
}

/// The usnic BTL's devices.
fn open_mpi_usnic_devices(chosen: &Chosen, t: &mut Translation) {
    let usnic: Vec<String> = chosen
        .ports
        .iter()
        .filter(|p| p.kind == VerbsKind::Usnic)
        .map(|p| p.device.clone())
        .collect();
    if !usnic.is_empty() {
        t.settings.push(
            mca(
                "btl_usnic_if_include",
                usnic.join(","),
                "usnic BTL: the selected devices",
            )
            .excluding(Knob::Mca("btl_usnic_if_exclude".into())),
        );
    }
}

/// `pml ucx`: shared memory and loopback BTLs only, the gate of pml ucx opened where the
/// selection is not mlx* RDMA, and UCX's device list.
fn open_mpi_ucx(on: &Job, sm: &str, t: &mut Translation) {
    let chosen = on.chosen;
    t.settings.push(open_mpi_pml(chosen, "ucx"));
    t.settings.push(open_mpi_net_free_btl(sm));
    // Open MPI's pml ucx refuses to run unless it sees an mlx* device with an
    // RDMA transport (pml_ucx_devices=mlx*, pml_ucx_tls=rc_verbs,...); a
    // selection of TCP interfaces or other RDMA NICs needs that gate opened.
    let gated = !chosen.ip.is_empty() || chosen.ports.iter().any(|p| !p.device.starts_with("mlx"));
    if gated {
        let why = "pml ucx only accepts mlx* RDMA devices by default; the selection names others";
        t.settings.push(mca("pml_ucx_tls", "any", why));
        t.settings.push(mca("pml_ucx_devices", "any", why));
    }
    t.settings.push(env(
        "UCX_NET_DEVICES",
        ucx_devices(chosen),
        "UCX: only these devices (dev:port for RDMA, interface names for TCP)",
    ));
    ucx_scope(on.scope, t);
}

/// `pml cm` with `mtl psm2` (Omni-Path): the HFI unit and port.
fn open_mpi_psm2(chosen: &Chosen, sm: &str, t: &mut Translation) {
    t.settings.push(open_mpi_pml(chosen, "cm"));
    t.settings
        .push(mca("mtl", "psm2", "Omni-Path through PSM2"));
    t.settings.push(open_mpi_net_free_btl(sm));
    psm2_devices(chosen, t);
}

/// `pml cm` with `mtl psm` (TrueScale): the unit and port.
fn open_mpi_psm(chosen: &Chosen, sm: &str, t: &mut Translation) {
    t.settings.push(open_mpi_pml(chosen, "cm"));
    t.settings
        .push(mca("mtl", "psm", "TrueScale (qib) InfiniBand through PSM"));
    t.settings.push(open_mpi_net_free_btl(sm));
    if let Some(p) = chosen.ports.first() {
        let unit: String = p
            .device
            .chars()
            .rev()
            .take_while(char::is_ascii_digit)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let unit = if unit.is_empty() {
            "0".to_string()
        } else {
            unit
        };
        t.settings.push(env(
            "IPATH_UNIT",
            unit,
            format!("PSM: the unit of {}", p.device),
        ));
        t.settings.push(env(
            "IPATH_PORT",
            p.port.to_string(),
            "PSM: the selected port",
        ));
    }
}

/// `pml cm` with `mtl ofi`: the provider, then libfabric's own settings.
fn open_mpi_ofi(on: &Job, prov: Provider, sm: &str, t: &mut Translation) {
    let chosen = on.chosen;
    t.settings.push(open_mpi_pml(chosen, "cm"));
    t.settings.push(mca("mtl", "ofi", "the OFI MTL"));
    t.settings.push(open_mpi_net_free_btl(sm));
    if prov == Provider::Tcp {
        t.settings.push(
            mca(
                "mtl_ofi_provider_exclude",
                "shm,sockets",
                "the default exclude list contains tcp; overridden so the tcp provider can be used",
            )
            .excluding(Knob::Mca("mtl_ofi_provider_include".into())),
        );
    } else {
        t.settings.push(
            mca(
                "mtl_ofi_provider_include",
                prov.fi_name(),
                "OFI MTL: only this provider",
            )
            .excluding(Knob::Mca("mtl_ofi_provider_exclude".into())),
        );
    }
    ofi_settings(on, prov, t);
}

/// One-sided and collective components that move data themselves, steered with the rest:
/// the `osc` component list names only components that carry their bytes over the
/// selected path, and the collective components with a transport of their own (`hcoll`,
/// `ucc`) are left out, since they would pick their own devices. Without this, `osc/ucx`
/// sent one-sided traffic over a link the selection had left out (Open MPI 4.1 with
/// `pml ob1`), and Debian's Open MPI 4.1 (whose site file disables `osc pt2pt`) had no
/// one-sided component at all between hosts over TCP.
fn open_mpi_one_sided_and_collectives(chosen: &Chosen, flavour: Flavour, t: &mut Translation) {
    let ompi5 = flavour.is_ompi5();
    let (osc, why) = match chosen.path {
        Path::Ob1 if ompi5 => (
            "sm,rdma",
            "one-sided: shared memory, else osc rdma over the selected BTLs (not osc ucx, which picks its own devices)",
        ),
        Path::Ob1 if chosen.ports.is_empty() => (
            "sm,pt2pt",
            "one-sided: shared memory, else osc pt2pt over the selected BTLs (Open MPI 4 has no RDMA over the TCP BTL; not osc ucx, which picks its own devices)",
        ),
        Path::Ob1 => (
            "sm,rdma,pt2pt",
            "one-sided: shared memory, osc rdma over the selected RDMA BTLs, else pt2pt (not osc ucx, which picks its own devices)",
        ),
        Path::Ucx | Path::UcxTcp | Path::UcxVerbs | Path::IntelMlx => (
            "sm,ucx",
            "one-sided: shared memory, else osc ucx on the selected UCX devices",
        ),
        Path::CmPsm2 | Path::CmPsm | Path::Ofi(_) if !ompi5 => (
            "sm,pt2pt",
            "one-sided: shared memory, else osc pt2pt over the selected MTL",
        ),
        Path::CmPsm2 | Path::CmPsm | Path::Ofi(_) => (
            "sm,rdma",
            "one-sided: shared memory, else osc rdma over the BTLs kept (not osc ucx, which picks its own devices)",
        ),
        Path::NemesisTcp | Path::Mvapich2Verbs => return,
    };
    t.settings.push(mca("osc", osc, why));
    if ompi5 && matches!(chosen.path, Path::Ofi(_)) && chosen.ip.is_empty() {
        // With pml cm only self and sm are kept, and osc rdma between hosts fails
        // ("BTLs attempted: self"). The OFI BTL drives the same provider as the MTL:
        // both read opal_common_ofi_provider_include (mtl_ofi_provider_include and
        // btl_ofi_provider_include are its other names, in 4.1 and 5.0).
        let btl = Knob::Mca("btl".into());
        if let Some(setting) = t.settings.iter_mut().find(|s| s.knob == btl) {
            setting.value = "self,sm,ofi".into();
            setting.reason =
                "self, shared memory and the OFI BTL on the MTL's provider, which osc rdma needs between hosts".into();
        }
    }
    if ompi5 && matches!(chosen.path, Path::Ofi(_)) && !chosen.ip.is_empty() {
        // osc rdma needs a BTL between hosts; with pml cm only self and sm are kept, so
        // the TCP BTL is put back, restricted to the selected interfaces.
        let btl = Knob::Mca("btl".into());
        if let Some(setting) = t.settings.iter_mut().find(|s| s.knob == btl) {
            setting.value = "self,sm,tcp".into();
            setting.reason =
                "self, shared memory and the TCP BTL, which osc rdma needs between hosts".into();
        }
        t.settings.push(
            mca(
                "btl_tcp_if_include",
                names(chosen).join(","),
                "TCP BTL, for osc rdma: the interfaces resolved on this host",
            )
            .excluding(Knob::Mca("btl_tcp_if_exclude".into())),
        );
    }
    t.settings.push(mca(
        "coll",
        "^hcoll,ucc",
        "collectives: not the components with a transport of their own, which would pick their own devices",
    ));
}

fn mpich(on: &Job, t: &mut Translation) {
    let chosen = on.chosen;
    match chosen.path {
        Path::Ucx | Path::UcxTcp | Path::UcxVerbs => {
            t.settings.push(env(
                "UCX_NET_DEVICES",
                ucx_devices(chosen),
                "ch4:ucx: only these devices",
            ));
            match chosen.path {
                Path::UcxTcp => t.settings.push(env(
                    "UCX_TLS",
                    "self,sm,tcp",
                    "qualifier tcp: UCX's TCP transport (loopback and shared memory kept)",
                )),
                Path::UcxVerbs => t.settings.push(env(
                    "UCX_TLS",
                    "self,sm,rc,ud",
                    "qualifier verbs: UCX's RDMA transports (loopback and shared memory kept)",
                )),
                _ => {}
            }
            ucx_scope(on.scope, t);
        }
        Path::Ofi(prov) => ofi_settings(on, prov, t),
        Path::NemesisTcp => {
            if let Some(i) = first_ip(chosen, "MPIR_CVAR_NEMESIS_TCP_NETWORK_IFACE", t) {
                t.settings.push(env(
                    "MPIR_CVAR_NEMESIS_TCP_NETWORK_IFACE",
                    i,
                    "ch3:nemesis TCP: the selected interface",
                ));
            }
        }
        _ => {}
    }
}

fn intel(on: &Job, t: &mut Translation) {
    let chosen = on.chosen;
    t.settings.push(env(
        "I_MPI_FABRICS",
        "shm:ofi",
        "shared memory within a node, libfabric between nodes",
    ));
    match chosen.path {
        Path::IntelMlx => {
            t.settings.push(
                env(
                    "I_MPI_OFI_PROVIDER",
                    "mlx",
                    "the mlx provider (UCX underneath)",
                )
                .excluding(Knob::Env("FI_PROVIDER".into())),
            );
            t.settings.push(env(
                "UCX_NET_DEVICES",
                ucx_devices(chosen),
                "UCX under the mlx provider: only these devices",
            ));
            ucx_scope(on.scope, t);
        }
        Path::Ofi(prov) => {
            t.settings.push(env(
                "I_MPI_OFI_PROVIDER",
                prov.fi_name(),
                "Intel MPI: only this libfabric provider",
            ));
            ofi_settings(on, prov, t);
        }
        _ => {}
    }
    if devices(chosen).len() > 1 {
        t.settings.push(env(
            "I_MPI_MULTIRAIL",
            "1",
            "Intel MPI: use every selected NIC (multi-rail; ranks are pinned to the nearest)",
        ));
    }
}

/// Cray MPICH: its own provider variable (intro_mpi: `MPICH_OFI_USE_PROVIDER`), then
/// libfabric's settings. Cray MPICH uses every NIC libfabric lists ("when multiple NICs
/// per node are available, MPI attempts to use them all"), one per rank, placed by
/// `MPICH_OFI_NIC_POLICY` (`BLOCK` by default): the device list keeps every selected NIC,
/// and a note names the NUMA nodes for `MPICH_OFI_NIC_POLICY=NUMA`.
fn cray_mpich(on: &Job, t: &mut Translation) {
    let chosen = on.chosen;
    let Path::Ofi(prov) = chosen.path else {
        return;
    };
    t.settings.push(env(
        "MPICH_OFI_USE_PROVIDER",
        prov.fi_name(),
        "Cray MPICH: only this libfabric provider",
    ));
    ofi_settings(on, prov, t);
    let mut nics: Vec<(&str, Option<u32>)> = chosen
        .ports
        .iter()
        .map(|p| (p.device.as_str(), p.numa_node))
        .collect();
    nics.dedup();
    if nics.len() > 1 {
        let placed: Vec<String> = nics
            .iter()
            .map(|(d, n)| match n {
                Some(n) => format!("{d} on NUMA node {n}"),
                None => format!("{d} (NUMA node unknown)"),
            })
            .collect();
        t.notes.push(format!(
            "Cray MPICH spreads the ranks of a node over the {} selected NICs ({}) by MPICH_OFI_NIC_POLICY (BLOCK unless set); NUMA gives each rank the NIC of its NUMA node",
            nics.len(),
            placed.join(", ")
        ));
    }
}

fn mvapich2(on: &Job, t: &mut Translation) {
    let chosen = on.chosen;
    t.settings.push(env(
        "MV2_IBA_HCA",
        devices(chosen).join(":"),
        "MVAPICH2: only these HCAs (colon-separated)",
    ));
    if let Some(first) = chosen.ports.first() {
        t.settings.push(env(
            "MV2_DEFAULT_PORT",
            first.port.to_string(),
            "MVAPICH2: the selected port",
        ));
        for p in chosen.ports.iter().filter(|p| p.port != first.port) {
            lose(
                t,
                p.id(),
                format!("MV2_DEFAULT_PORT takes one port; {} was taken", first.port),
            );
        }
    }
    keep_scope(
        on.scope,
        "MVAPICH2",
        env,
        Some(("MV2_DEFAULT_PKEY", PkeyForm::Key)),
        Some("MV2_DEFAULT_GID_INDEX"),
        t,
    );
    if chosen.ports.iter().any(|p| p.kind == VerbsKind::Roce) {
        t.settings
            .push(env("MV2_USE_RoCE", "1", "MVAPICH2: RoCE mode"));
    }
    if chosen.ports.iter().any(|p| p.kind == VerbsKind::Iwarp) {
        t.settings
            .push(env("MV2_USE_IWARP_MODE", "1", "MVAPICH2: iWARP mode"));
    }
}

fn control_path_note(chosen: &Chosen, flavour: Flavour, t: &mut Translation) {
    let ifaces = names(chosen).join(",");
    let hint = if ifaces.is_empty() {
        String::new()
    } else {
        match flavour {
            Flavour::OpenMpi { major: 4, .. } | Flavour::OpenMpi { major: 0..=3, .. } => {
                format!("; to steer it too, give the launcher --mca oob_tcp_if_include {ifaces}")
            }
            Flavour::OpenMpi { .. } => {
                format!("; to steer it too, give the launcher --prtemca prte_if_include {ifaces}")
            }
            Flavour::Mpich { .. } | Flavour::IntelMpi => {
                let first = ifaces.split(',').next().unwrap_or_default();
                format!("; to steer it too, give Hydra -iface {first} (or HYDRA_IFACE={first})")
            }
            Flavour::Mvapich2 | Flavour::CrayMpich => String::new(),
        }
    };
    t.notes.push(format!(
        "the runtime control path (launcher and daemons) is not steered, only the data path{hint}"
    ));
}
