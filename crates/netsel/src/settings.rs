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

    /// `--mca NAME VALUE` for MCA parameters, `None` for plain variables.
    pub fn mca_args(&self) -> Option<[String; 3]> {
        match &self.knob {
            Knob::Mca(n) => Some(["--mca".into(), n.clone(), self.value.clone()]),
            Knob::Env(_) => None,
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
