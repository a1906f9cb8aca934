//! The settings a translation produces: environment variables and Open MPI MCA
//! parameters, each with the reason, and the knobs that must stay unset beside it.

use std::fmt;

use serde::Serialize;

/// Where a setting goes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "name")]
pub enum Knob {
    /// A plain environment variable (`UCX_NET_DEVICES`).
    Env(String),
    /// An Open MPI MCA parameter (`btl_tcp_if_include`), set as `OMPI_MCA_<name>`
    /// in the environment or given as `--mca <name> <value>`.
    Mca(String),
}

/// The environment prefix of Open MPI MCA parameters.
pub const MCA_ENV_PREFIX: &str = "OMPI_MCA_";

impl Knob {
    /// The environment variable that carries this knob.
    pub fn env_name(&self) -> String {
        match self {
            Knob::Env(n) => n.clone(),
            Knob::Mca(n) => format!("{MCA_ENV_PREFIX}{n}"),
        }
    }
}

impl fmt::Display for Knob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Knob::Env(n) => f.write_str(n),
            Knob::Mca(n) => write!(f, "mca:{n}"),
        }
    }
}

/// One knob set to one value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Setting {
    /// The knob.
    pub knob: Knob,
    /// The environment variable that carries it (`OMPI_MCA_pml`, `UCX_NET_DEVICES`).
    pub env: String,
    /// Its value.
    pub value: String,
    /// Why.
    pub reason: String,
    /// Knobs that must not be set at the same time (e.g. the exclude list beside an
    /// include list); a user's setting of one of them is a conflict.
    pub must_be_unset: Vec<Knob>,
}

impl Setting {
    /// A setting without mutually exclusive companions.
    pub fn new(knob: Knob, value: impl Into<String>, reason: impl Into<String>) -> Setting {
        Setting {
            env: knob.env_name(),
            knob,
            value: value.into(),
            reason: reason.into(),
            must_be_unset: Vec::new(),
        }
    }

    /// Adds a knob that must stay unset beside this one.
    pub fn excluding(mut self, knob: Knob) -> Setting {
        self.must_be_unset.push(knob);
        self
    }

    /// `NAME=VALUE` in environment form.
    pub fn env_pair(&self) -> (String, String) {
        (self.knob.env_name(), self.value.clone())
    }

    /// True when a user's own value of this setting's variable means the same as ours
    /// (see [`same_meaning`]).
    pub fn agrees_with(&self, user_value: &str) -> bool {
        same_meaning(&self.knob.env_name(), user_value, &self.value)
    }

    /// `--mca NAME VALUE` for MCA parameters, `None` for plain variables.
    pub fn mca_args(&self) -> Option<[String; 3]> {
        match &self.knob {
            Knob::Mca(n) => Some(["--mca".into(), n.clone(), self.value.clone()]),
            Knob::Env(_) => None,
        }
    }
}

/// How a variable's value is compared with a user's own setting of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Meaning {
    /// The exact text (trimmed): where order matters (`btl_tcp_if_include`, whose order
    /// must be the kernel's) or the value is one word.
    Exact,
    /// A comma list whose order does not matter, with an optional leading `^` (exclude).
    Set,
    /// `UCX_TLS`: a set of transports, `self`, `sm` and `shm` aside (loopback and shared
    /// memory are always kept, whether listed or not).
    UcxTls,
}

fn meaning(variable: &str) -> Meaning {
    match variable {
        "UCX_TLS" => Meaning::UcxTls,
        "UCX_NET_DEVICES"
        | "OMPI_MCA_btl"
        | "OMPI_MCA_btl_tcp_if_exclude"
        | "OMPI_MCA_btl_openib_if_include"
        | "OMPI_MCA_btl_usnic_if_include"
        | "OMPI_MCA_mtl_ofi_provider_include"
        | "OMPI_MCA_mtl_ofi_provider_exclude"
        | "OMPI_MCA_pml_ucx_tls"
        | "OMPI_MCA_pml_ucx_devices" => Meaning::Set,
        _ => Meaning::Exact,
    }
}

fn as_set(value: &str, ignore: &[&str]) -> (bool, std::collections::BTreeSet<String>) {
    let v = value.trim();
    let (negated, list) = match v.strip_prefix('^') {
        Some(rest) => (true, rest),
        None => (false, v),
    };
    let items = list
        .split(',')
        .map(str::trim)
        .filter(|i| !i.is_empty() && !ignore.contains(i))
        .map(str::to_string)
        .collect();
    (negated, items)
}

/// True when two values of the environment variable `variable` (as set in the
/// environment: `OMPI_MCA_btl`, `UCX_TLS`) mean the same to the library: comma lists
/// whose order does not matter compare as sets (`UCX_NET_DEVICES`, `OMPI_MCA_btl`, the
/// exclude lists), `UCX_TLS` as a set of transports with `self`, `sm` and `shm` aside
/// (`tcp,self` means what `self,sm,tcp` means), everything else (including
/// `btl_tcp_if_include`, whose order matters) as trimmed text.
pub fn same_meaning(variable: &str, a: &str, b: &str) -> bool {
    match meaning(variable) {
        Meaning::Exact => a.trim() == b.trim(),
        Meaning::Set => as_set(a, &[]) == as_set(b, &[]),
        Meaning::UcxTls => {
            let lower = |v: &str| v.to_ascii_lowercase();
            let ignore = ["self", "sm", "shm"];
            as_set(&lower(a), &ignore) == as_set(&lower(b), &ignore)
        }
    }
}

/// Shorthand for an environment setting.
pub(crate) fn env(name: &str, value: impl Into<String>, reason: impl Into<String>) -> Setting {
    Setting::new(Knob::Env(name.to_string()), value, reason)
}

/// Shorthand for an MCA setting.
pub(crate) fn mca(name: &str, value: impl Into<String>, reason: impl Into<String>) -> Setting {
    Setting::new(Knob::Mca(name.to_string()), value, reason)
}
