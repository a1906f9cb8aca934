//! The parameter registries of the libraries a job loads, and every setting of a
//! translation checked against them.
//!
//! A library ignores a variable it does not know, and takes a component or provider it
//! lacks as "none found": a selection that names either runs somewhere the user did not
//! ask for, or not at all, and says nothing. Each registry here is read from the library
//! itself, as its own tool prints it (Open MPI's `ompi_info --all --parsable`, UCX's
//! `ucx_info -c -f`, libfabric's `fi_info -e` and `fi_info -l`, Intel MPI's `impi_info -a -e`,
//! MPICH's `mpivars`); [`check`] names every setting the loaded library would not read as
//! written. Reading the tools is the caller's business (`xylem net`); this module only
//! parses and compares, so that it is tested on the tools' real output.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;

use crate::settings::{Knob, Setting};

/// The kind of library a registry describes, which decides the variables it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Open MPI: its MCA parameters (`OMPI_MCA_<name>`) and components.
    OpenMpi,
    /// UCX: `UCX_*`.
    Ucx,
    /// libfabric: `FI_*`, and its providers.
    Libfabric,
    /// Intel MPI: `I_MPI_*`.
    IntelMpi,
    /// MPICH: its control variables, `MPIR_CVAR_*`.
    Mpich,
}

impl Family {
    /// The family that reads the environment variable `env`, if one of these does.
    pub fn reading(env: &str) -> Option<Family> {
        const PREFIXES: [(&str, Family); 5] = [
            ("OMPI_MCA_", Family::OpenMpi),
            ("UCX_", Family::Ucx),
            ("FI_", Family::Libfabric),
            ("I_MPI_", Family::IntelMpi),
            ("MPIR_CVAR_", Family::Mpich),
        ];
        PREFIXES
            .iter()
            .find(|(p, _)| env.starts_with(p))
            .map(|&(_, f)| f)
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Family::OpenMpi => "Open MPI",
            Family::Ucx => "UCX",
            Family::Libfabric => "libfabric",
            Family::IntelMpi => "Intel MPI",
            Family::Mpich => "MPICH",
        })
    }
}

/// One parameter a library registers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Param {
    /// The values it accepts, when the library names them (an enumeration, or Open MPI's
    /// "valid values:" in its help); empty when any value of its type is read.
    pub valid: Vec<String>,
    /// The name it is an older spelling of, when it is a synonym.
    pub synonym_of: Option<String>,
}

/// The parameters, and for Open MPI the components of each framework or for libfabric
/// its providers, of one library as it registers them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Registry {
    /// What it describes.
    pub family: Family,
    /// The library and its version as it names itself (`libfabric 1.20.1-impi`).
    pub name: String,
    /// Its parameters by the name they are set with (`btl_tcp_if_include` for Open MPI,
    /// the environment variable for the others).
    pub params: BTreeMap<String, Param>,
    /// Open MPI: framework → its components; libfabric: `"provider"` → the providers.
    pub components: BTreeMap<String, BTreeSet<String>>,
}

impl Registry {
    fn new(family: Family, name: &str) -> Registry {
        Registry {
            family,
            name: name.to_string(),
            params: BTreeMap::new(),
            components: BTreeMap::new(),
        }
    }

    /// Open MPI's registry from `ompi_info --all --parsable`: its lines
    /// `mca:FRAMEWORK:COMPONENT:param:NAME:FIELD:…` give each parameter, its enumerators,
    /// the "valid values:" its help names and its synonyms, and the components found.
    pub fn open_mpi(name: &str, parsable: &str) -> Registry {
        let mut r = Registry::new(Family::OpenMpi, name);
        for line in parsable.lines() {
            let f: Vec<&str> = line.splitn(7, ':').collect();
            if f.len() < 6 || f[0] != "mca" || f[3] != "param" {
                continue;
            }
            let (framework, component, param, field) = (f[1], f[2], f[4], f[5]);
            let rest = f.get(6).copied().unwrap_or("");
            if component != "base" {
                r.components
                    .entry(framework.to_string())
                    .or_default()
                    .insert(component.to_string());
            }
            let entry = r.params.entry(param.to_string()).or_default();
            match field {
                // `enumerator:value:N:NAME`
                "enumerator" => {
                    if let Some((n, name)) =
                        rest.strip_prefix("value:").and_then(|v| v.split_once(':'))
                    {
                        entry.valid.push(name.to_string());
                        entry.valid.push(n.to_string());
                    }
                }
                "help" => {
                    if let Some(values) = valid_values_in_help(rest) {
                        entry.valid.extend(values);
                    }
                }
                "synonym_of" => {
                    entry.synonym_of = rest.strip_prefix("name:").map(str::to_string);
                }
                // `synonym:name:ALIAS`: the alias is known too, as this one's.
                "synonym" => {
                    if let Some(alias) = rest.strip_prefix("name:") {
                        let p = param.to_string();
                        r.params.entry(alias.to_string()).or_default().synonym_of = Some(p);
                    }
                }
                _ => {}
            }
        }
        r
    }

    /// UCX's registry from `ucx_info -c -f` (or `-c`): its `UCX_NAME=VALUE` lines, and
    /// the values a `syntax:` line of the full form lists.
    pub fn ucx(name: &str, config: &str) -> Registry {
        let mut r = Registry::new(Family::Ucx, name);
        let mut syntax: Option<Vec<String>> = None;
        for line in config.lines() {
            if let Some(s) = line.strip_prefix("# syntax:") {
                syntax = enumerated_syntax(s.trim());
                continue;
            }
            // `# inherits:  UCX_RC_PKEY, UCX_IB_PKEY`: the general names a transport's
            // variable is also set by, which ucx_info does not list on their own.
            if let Some(names) = line.strip_prefix("# inherits:") {
                for n in names
                    .split(',')
                    .map(str::trim)
                    .filter(|n| n.starts_with("UCX_"))
                {
                    r.params.entry(n.to_string()).or_default();
                }
                continue;
            }
            if let Some((var, _)) = line.split_once('=') {
                if var.starts_with("UCX_") && !var.contains(' ') {
                    let valid = syntax.take().unwrap_or_default();
                    r.params.insert(
                        var.to_string(),
                        Param {
                            valid,
                            synonym_of: None,
                        },
                    );
                    continue;
                }
            }
            if !line.starts_with('#') {
                syntax = None;
            }
        }
        r
    }

    /// libfabric's registry from `fi_info -e` (its `# FI_NAME: Type` lines) and
    /// `fi_info -l` (its `provider:` lines).
    pub fn libfabric(name: &str, env: &str, list: &str) -> Registry {
        let mut r = Registry::new(Family::Libfabric, name);
        for line in env.lines() {
            if let Some((var, _)) = line.strip_prefix("# ").and_then(|l| l.split_once(':')) {
                if var.starts_with("FI_") && !var.contains(' ') {
                    r.params.insert(var.to_string(), Param::default());
                }
            }
        }
        let providers = r.components.entry("provider".into()).or_default();
        for line in list.lines() {
            if let Some(p) = line.strip_suffix(':') {
                if !p.starts_with(' ') && !p.is_empty() {
                    providers.insert(p.to_string());
                }
            }
        }
        r
    }

    /// Intel MPI's registry from `impi_info -a -e`: the `I_MPI_*` names that begin a line.
    pub fn intel_mpi(name: &str, impi_info: &str) -> Registry {
        let mut r = Registry::new(Family::IntelMpi, name);
        for line in impi_info.lines() {
            // `-a` begins a line with the name; the table form with ` |NAME`.
            let word = line.trim().trim_start_matches('|').trim();
            if word.starts_with("I_MPI_")
                && word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            {
                r.params.insert(word.to_string(), Param::default());
            }
        }
        r
    }

    /// MPICH's registry from `mpivars`: its `MPIR_CVAR_NAME=VALUE` lines.
    pub fn mpich(name: &str, mpivars: &str) -> Registry {
        let mut r = Registry::new(Family::Mpich, name);
        for line in mpivars.lines() {
            let word = line.trim_start();
            if let Some(var) = word
                .split(['=', ' ', '\t'])
                .next()
                .filter(|v| v.starts_with("MPIR_CVAR_"))
            {
                r.params.insert(var.to_string(), Param::default());
            }
        }
        r
    }

    /// The providers of a libfabric registry (those `fi_info -l` lists, and those whose
    /// own `FI_<PROVIDER>_` variables it registers: a provider without a device here still
    /// registers them).
    fn has_provider(&self, provider: &str) -> bool {
        if self
            .components
            .get("provider")
            .is_some_and(|p| p.contains(provider))
        {
            return true;
        }
        let prefix = format!("FI_{}_", provider.to_ascii_uppercase());
        self.params.keys().any(|k| k.starts_with(&prefix))
    }

    /// The provider a libfabric variable `FI_<PROVIDER>_…` belongs to, when this
    /// libfabric has that provider but registered none of its variables: libfabric 2
    /// providers (verbs among them) define theirs only once they find a device.
    fn silent_provider_of(&self, name: &str) -> Option<String> {
        if self.family != Family::Libfabric {
            return None;
        }
        let rest = name.strip_prefix("FI_")?;
        self.components
            .get("provider")?
            .iter()
            .filter(|p| {
                let prefix = format!("{}_", p.to_ascii_uppercase());
                rest.starts_with(&prefix)
                    && !self.params.keys().any(|k| k[3..].starts_with(&prefix))
            })
            .max_by_key(|p| p.len())
            .cloned()
    }
}

/// `a, b` of a help text's "(valid values: a, b)".
fn valid_values_in_help(help: &str) -> Option<Vec<String>> {
    let start = help.find("(valid values: ")? + "(valid values: ".len();
    let end = help[start..].find(')')? + start;
    Some(
        help[start..end]
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect(),
    )
}

/// The words of a UCX `syntax:` line that enumerates them (`[A|B|C]`); `None` for the
/// others (numbers, lists, strings).
fn enumerated_syntax(s: &str) -> Option<Vec<String>> {
    let inner = s.strip_prefix('[')?.strip_suffix(']')?;
    let words: Vec<String> = inner.split('|').map(|w| w.trim().to_string()).collect();
    words
        .iter()
        .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .then_some(words)
}

/// The libraries of one host's job, as far as their registries could be read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stack {
    /// The registries read.
    pub registries: Vec<Registry>,
    /// The libraries whose registry could not be read, each with why.
    pub unread: Vec<(Family, String)>,
}

impl Stack {
    fn of(&self, family: Family) -> Option<&Registry> {
        self.registries.iter().find(|r| r.family == family)
    }
}

/// A setting the loaded library will not read as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// `NAME=VALUE` as set.
    pub setting: String,
    /// The library that should read it (`Open MPI 4.1.4`).
    pub library: String,
    /// What it lacks.
    pub problem: String,
    /// What happens instead.
    pub outcome: String,
}

impl Finding {
    /// The warning a front end prints.
    pub fn warning(&self) -> String {
        format!(
            "{}: {} {}; {}",
            self.setting, self.library, self.problem, self.outcome
        )
    }
}

/// What [`check`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Checked {
    /// The libraries whose registries were read (`UCX 1.20.1`).
    pub libraries: Vec<String>,
    /// How many settings were compared with a registry.
    pub checked: usize,
    /// The settings the library will not read as written.
    pub findings: Vec<Finding>,
    /// The settings read under a name the library keeps for an older one (a synonym,
    /// often deprecated): read, but worth saying.
    pub renamed: Vec<String>,
    /// The settings that could not be checked, one line per reason (no registry read):
    /// `A=1 B=2: not checked (why)`.
    pub unchecked: Vec<String>,
}

/// The Open MPI frameworks whose parameter of the same name is a component list.
const FRAMEWORKS: [&str; 5] = ["pml", "btl", "mtl", "osc", "coll"];

/// Every setting compared with the registry of the library that reads it.
pub fn check(settings: &[Setting], stack: &Stack) -> Checked {
    let mut out = Checked {
        libraries: stack.registries.iter().map(|r| r.name.clone()).collect(),
        ..Checked::default()
    };
    // Why a setting was not checked → the settings: said once per reason.
    let mut unread: Vec<(String, Vec<String>)> = Vec::new();
    let mut not_checked =
        |why: String, shown: String| match unread.iter_mut().find(|(w, _)| *w == why) {
            Some((_, all)) => all.push(shown),
            None => unread.push((why, vec![shown])),
        };
    for s in settings {
        let shown = format!("{}={}", s.env, s.value);
        let Some(family) = Family::reading(&s.env) else {
            not_checked(
                "no registry of the library that reads it is known to xylem".into(),
                shown,
            );
            continue;
        };
        let Some(reg) = stack.of(family) else {
            let why = stack
                .unread
                .iter()
                .find(|(f, _)| *f == family)
                .map(|(_, why)| why.clone())
                .unwrap_or_else(|| format!("the job loads no {family} that xylem found"));
            not_checked(format!("not checked ({why})"), shown);
            continue;
        };
        let (Knob::Mca(name) | Knob::Env(name)) = &s.knob;
        let Some(param) = reg.params.get(name) else {
            if let Some(p) = reg.silent_provider_of(name) {
                not_checked(
                    format!(
                        "not checked ({} has the provider {p}, which defines its variables only once it finds a device, and it found none here)",
                        reg.name
                    ),
                    shown,
                );
                continue;
            }
            out.checked += 1;
            out.findings.push(Finding::new(
                &shown,
                reg,
                format!("has no parameter {name}"),
                "the library ignores it and uses its default",
            ));
            continue;
        };
        out.checked += 1;
        if let Some(newer) = &param.synonym_of {
            out.renamed.push(format!(
                "{shown}: {} reads {name} as another name of {newer}",
                reg.name
            ));
        }
        let found = if family == Family::OpenMpi && FRAMEWORKS.contains(&name.as_str()) {
            missing_components(&shown, reg, name, &s.value)
        } else if family == Family::Libfabric && name == "FI_PROVIDER"
            || family == Family::IntelMpi && name == "I_MPI_OFI_PROVIDER"
        {
            let fabric = match family {
                Family::Libfabric => Some(reg),
                _ => stack.of(Family::Libfabric),
            };
            fabric.and_then(|f| missing_providers(&shown, f, &s.value))
        } else {
            refused_values(&shown, reg, name, param, &s.value)
        };
        out.findings.extend(found);
    }
    out.unchecked = unread
        .into_iter()
        .map(|(why, shown)| format!("{}: {why}", shown.join(" ")))
        .collect();
    out
}

impl Finding {
    fn new(shown: &str, library: &Registry, problem: String, outcome: &str) -> Finding {
        Finding {
            setting: shown.to_string(),
            library: library.name.clone(),
            problem,
            outcome: outcome.to_string(),
        }
    }
}

/// An Open MPI framework's include list naming components this build lacks; an exclude
/// list (`^`) naming one excludes nothing more, and is fine.
fn missing_components(
    shown: &str,
    reg: &Registry,
    framework: &str,
    value: &str,
) -> Option<Finding> {
    if value.starts_with('^') {
        return None;
    }
    let have = reg.components.get(framework);
    let missing: Vec<&str> = value
        .split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty() && !have.is_some_and(|h| h.contains(*c)))
        .collect();
    (!missing.is_empty()).then(|| {
        Finding::new(
            shown,
            reg,
            format!(
                "has no {framework} component {} (it has {})",
                missing.join(", "),
                have.map(|h| h.iter().cloned().collect::<Vec<_>>().join(", "))
                    .unwrap_or_else(|| "none".into())
            ),
            "MPI_Init fails: a requested component was not found",
        )
    })
}

/// A provider list naming providers the libfabric `fabric` lacks.
fn missing_providers(shown: &str, fabric: &Registry, value: &str) -> Option<Finding> {
    let missing: Vec<&str> = value
        .trim_start_matches('^')
        .split([';', ','])
        .map(str::trim)
        .filter(|p| !p.is_empty() && !fabric.has_provider(p))
        .collect();
    // Intel MPI loads its own libfabric unless I_MPI_OFI_LIBRARY names another (read in
    // MPI_Init; its I_MPI_OFI_LIBRARY_INTERNAL only steers the environment scripts).
    let outcome = if fabric.name.ends_with("-impi") {
        "no provider is found and MPI_Init fails; this is Intel MPI's own libfabric: \
         I_MPI_OFI_LIBRARY=PATH makes Intel MPI load a libfabric that has the provider \
         (HPE's for cxi, Cornelis' for opx), which xylem then checks"
    } else {
        "no provider is found and MPI_Init fails"
    };
    (!missing.is_empty()).then(|| {
        Finding::new(
            shown,
            fabric,
            format!("has no provider {}", missing.join(", ")),
            outcome,
        )
    })
}

/// The values of a comma list outside the ones `param` accepts, when it names them.
fn refused_values(
    shown: &str,
    reg: &Registry,
    name: &str,
    param: &Param,
    value: &str,
) -> Option<Finding> {
    if param.valid.is_empty() {
        return None;
    }
    let bad: Vec<&str> = value
        .split(',')
        .map(str::trim)
        .filter(|v| !param.valid.iter().any(|ok| ok.eq_ignore_ascii_case(v)))
        .collect();
    (!bad.is_empty()).then(|| {
        Finding::new(
            shown,
            reg,
            format!(
                "does not accept {} for {name} (it accepts {})",
                bad.join(", "),
                param.valid.join(", ")
            ),
            "the setting is refused, and what it selects is not used",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{env, mca};

    /// Lines of Debian's Open MPI 4.1.4 `ompi_info --all --parsable`.
    const OMPI_4_1_4: &str = "\
mca:btl:base:param:btl:value:^uct,openib,ofi
mca:btl:openib:param:btl_openib_cpc_include:value:
mca:btl:openib:param:btl_openib_cpc_include:help:Method used to select OpenFabrics connections (valid values: udcm)
mca:btl:openib:param:btl_openib_pkey:value:0
mca:btl:openib:param:btl_openib_pkey:synonym:name:btl_openib_ib_pkey_val
mca:btl:tcp:param:btl_tcp_if_include:value:
mca:btl:self:param:btl_self_free_list_num:value:0
mca:btl:ofi:param:btl_ofi_mode:value:2
mca:btl:vader:param:btl_vader_single_copy_mechanism:enumerator:value:1:cma
mca:pml:base:param:pml:value:^ucx
mca:pml:ob1:param:pml_ob1_priority:value:20
mca:pml:ucx:param:pml_ucx_tls:value:rc_verbs,ud_verbs
";

    fn stack(r: Registry) -> Stack {
        Stack {
            registries: vec![r],
            unread: Vec::new(),
        }
    }

    #[test]
    fn open_mpi_parameters_components_and_valid_values_are_read() {
        let r = Registry::open_mpi("Open MPI 4.1.4", OMPI_4_1_4);
        assert!(r.params.contains_key("btl_tcp_if_include"));
        assert_eq!(r.params["btl_openib_cpc_include"].valid, ["udcm"]);
        assert_eq!(
            r.params["btl_openib_ib_pkey_val"].synonym_of.as_deref(),
            Some("btl_openib_pkey")
        );
        assert_eq!(
            r.components["btl"].iter().collect::<Vec<_>>(),
            ["ofi", "openib", "self", "tcp", "vader"]
        );
        let c = check(
            &[
                mca("btl", "self,vader,tcp", ""),
                mca("btl_tcp_if_include", "eth0", ""),
                mca("pml", "^ucx,yalla", ""),
            ],
            &stack(r),
        );
        assert_eq!((c.checked, c.findings.len()), (3, 0), "{c:#?}");
    }

    #[test]
    fn what_this_open_mpi_cannot_read_is_named() {
        let r = Registry::open_mpi("Open MPI 4.1.4", OMPI_4_1_4);
        let c = check(
            &[
                mca("btl_openib_cpc_include", "rdmacm", ""),
                mca("btl", "self,vader,ofi,usnic", ""),
                mca("btl_tcp_if_inclde", "eth0", ""),
                mca("btl_openib_ib_pkey_val", "0x1", ""),
            ],
            &stack(r),
        );
        let w: Vec<String> = c.findings.iter().map(Finding::warning).collect();
        assert_eq!(w.len(), 3, "{w:#?}");
        assert!(
            w[0].contains("does not accept rdmacm for btl_openib_cpc_include (it accepts udcm)")
        );
        assert!(
            w[1].contains("has no btl component usnic (it has"),
            "{}",
            w[1]
        );
        assert!(w[2].contains("has no parameter btl_tcp_if_inclde"));
        assert_eq!(
            c.renamed,
            ["OMPI_MCA_btl_openib_ib_pkey_val=0x1: Open MPI 4.1.4 reads btl_openib_ib_pkey_val as another name of btl_openib_pkey"]
        );
    }

    #[test]
    fn libfabric_variables_and_providers_are_read() {
        // `fi_info -e` and `fi_info -l` of Intel MPI 2021.13's libfabric 1.20.1-impi.
        let env_text = "# FI_PROVIDER: String\n# Only use specified provider (default: all available)\n\n# FI_TCP_IFACE: String\n# FI_VERBS_IFACE: String\n";
        let list = "psm2:\n    version: 120.10\nmlx:\n    version: 1.4\nverbs:\n    version: 120.10\nofi_rxm:\n    version: 120.10\ntcp:\n    version: 120.10\n";
        let r = Registry::libfabric("libfabric 1.20.1-impi", env_text, list);
        let s = stack(r);
        let ok = check(
            &[
                env("FI_PROVIDER", "verbs;ofi_rxm", ""),
                env("FI_TCP_IFACE", "eth0", ""),
            ],
            &s,
        );
        assert!(ok.findings.is_empty(), "{ok:#?}");
        let bad = check(
            &[
                env("FI_PROVIDER", "cxi", ""),
                env("FI_EFA_IFACE", "efa_0", ""),
            ],
            &s,
        );
        let w: Vec<String> = bad.findings.iter().map(Finding::warning).collect();
        assert_eq!(
            w,
            [
                "FI_PROVIDER=cxi: libfabric 1.20.1-impi has no provider cxi; no provider is found and MPI_Init fails; this is Intel MPI's own libfabric: I_MPI_OFI_LIBRARY=PATH makes Intel MPI load a libfabric that has the provider (HPE's for cxi, Cornelis' for opx), which xylem then checks",
                "FI_EFA_IFACE=efa_0: libfabric 1.20.1-impi has no parameter FI_EFA_IFACE; the library ignores it and uses its default",
            ]
        );
    }

    #[test]
    fn a_provider_without_a_device_here_leaves_its_variables_unchecked() {
        // libfabric 2.5 in-process: verbs registered, its variables not defined (no
        // device); cxi not there at all.
        let r = Registry::libfabric(
            "libfabric 2.5",
            "# FI_PROVIDER: \n# FI_TCP_IFACE: \n# FI_EFA_IFACE: \n",
            "efa:\nverbs:\nofi_rxm:\ntcp:\n",
        );
        let c = check(
            &[
                env("FI_PROVIDER", "verbs;ofi_rxm", ""),
                env("FI_VERBS_IFACE", "ib0", ""),
                env("FI_CXI_DEVICE_NAME", "cxi0", ""),
            ],
            &stack(r),
        );
        assert_eq!(c.checked, 2, "{c:#?}");
        assert_eq!(c.findings.len(), 1, "{c:#?}");
        assert!(c.findings[0]
            .problem
            .contains("no parameter FI_CXI_DEVICE_NAME"));
        assert_eq!(c.unchecked.len(), 1);
        assert!(c.unchecked[0]
            .contains("has the provider verbs, which defines its variables only once"));
    }

    #[test]
    fn intel_mpi_providers_are_those_of_the_libfabric_it_loads() {
        let impi = Registry::intel_mpi(
            "Intel MPI 2021.13",
            "I_MPI_FABRICS \n  MPI Datatype:\n    MPI_CHAR\n |I_MPI_OFI_PROVIDER\n    I_MPI_OFI_PROVIDER=<name>\n",
        );
        assert_eq!(
            impi.params.keys().collect::<Vec<_>>(),
            ["I_MPI_FABRICS", "I_MPI_OFI_PROVIDER"]
        );
        let fabric = Registry::libfabric("libfabric 1.20.1-impi", "", "tcp:\nmlx:\n");
        let s = Stack {
            registries: vec![impi, fabric],
            unread: Vec::new(),
        };
        let c = check(&[env("I_MPI_OFI_PROVIDER", "opx", "")], &s);
        assert_eq!(c.findings.len(), 1, "{c:#?}");
        assert_eq!(c.findings[0].library, "libfabric 1.20.1-impi");
        let c = check(&[env("I_MPI_OFI_PROVIDER", "mlx", "")], &s);
        assert!(c.findings.is_empty(), "{c:#?}");
    }

    #[test]
    fn ucx_and_mpich_names_are_read_and_unread_libraries_are_said() {
        let ucx = Registry::ucx(
            "UCX 1.13.1",
            "#\n# syntax:    [FATAL|ERROR|WARN]\n#\nUCX_LOG_LEVEL=WARN\n\nUCX_NET_DEVICES=all\n# syntax:    comma-separated list of: string\nUCX_TLS=all\n\
             # inherits:  UCX_RC_PKEY, UCX_IB_PKEY\n#\nUCX_RC_VERBS_PKEY=auto\n",
        );
        assert_eq!(
            ucx.params["UCX_LOG_LEVEL"].valid,
            ["FATAL", "ERROR", "WARN"]
        );
        assert!(ucx.params["UCX_TLS"].valid.is_empty());
        let mpich = Registry::mpich(
            "MPICH 4.0.2",
            "344 MPI Control Variables\n\tMPIR_CVAR_OFI_USE_PROVIDER=\tSCOPE_LOCAL\n",
        );
        assert!(mpich.params.contains_key("MPIR_CVAR_OFI_USE_PROVIDER"));
        let s = Stack {
            registries: vec![ucx],
            unread: vec![(
                Family::Libfabric,
                "no fi_info beside /x/libfabric.so.1".into(),
            )],
        };
        let c = check(
            &[
                env("UCX_NET_DEVICES", "eth0", ""),
                env("UCX_IB_PKEY", "0x1", ""),
                env("UCX_IB_GID_INDEX", "7", ""),
                env("UCX_LOG_LEVEL", "chatty", ""),
                env("FI_PROVIDER", "tcp", ""),
                env("MV2_IBA_HCA", "mlx5_0", ""),
            ],
            &s,
        );
        assert_eq!(c.checked, 4);
        assert_eq!(c.findings.len(), 2, "{c:#?}");
        assert!(c.findings[0]
            .problem
            .contains("no parameter UCX_IB_GID_INDEX"));
        assert!(c.findings[1].problem.contains("does not accept chatty"));
        assert_eq!(
            c.unchecked,
            [
                "FI_PROVIDER=tcp: not checked (no fi_info beside /x/libfabric.so.1)",
                "MV2_IBA_HCA=mlx5_0: no registry of the library that reads it is known to xylem",
            ]
        );
    }
}
