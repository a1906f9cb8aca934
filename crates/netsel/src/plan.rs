//! The whole pipeline on one host — resolve, translate, check against the current
//! environment — and applying the result to this process before `MPI_Init`.
//!
//! Conflict policy: a user's own setting of a knob we would set (or of a knob that must
//! stay unset beside ours, like `btl_tcp_if_exclude` beside `btl_tcp_if_include`) is an
//! error listing every such knob, unless the user's value means the same as ours (then it
//! is kept and reported as "already set"). Values are compared by meaning, not text
//! ([`crate::settings::same_meaning`]): `UCX_TLS=tcp,self` agrees with `self,sm,tcp`,
//! `UCX_NET_DEVICES=eth0,mlx5_0:1` with `mlx5_0:1,eth0`. We never override silently and never keep a value
//! that would contradict the selection, because a half-applied selection is worse than
//! none.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::discovery::{Discovery, DiscoveryError};
use crate::error::GrammarError;
use crate::flavour::Flavour;
use crate::grammar::Selection;
use crate::host::Host;
use crate::resolve::{resolve, NoNetwork, Resolution};
use crate::settings::Setting;
use crate::translate::{translate_for, Translation, TranslationError};
use crate::versions::Libraries;

/// A knob the user already set differently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conflict {
    /// The environment variable.
    pub variable: String,
    /// The user's value.
    pub user_value: String,
    /// What we would set, or `None` when ours requires it to be unset.
    pub ours: Option<String>,
}

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.ours {
            Some(v) => write!(
                f,
                "{}={} (the selection needs {v})",
                self.variable, self.user_value
            ),
            None => write!(
                f,
                "{}={} (the selection needs it unset)",
                self.variable, self.user_value
            ),
        }
    }
}

/// Every way the pipeline can fail.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A malformed list.
    #[error(transparent)]
    Grammar(#[from] GrammarError),
    /// The host could not be read.
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
    /// Nothing left to use.
    #[error(transparent)]
    NoNetwork(#[from] NoNetwork),
    /// The flavour cannot honour the selection.
    #[error(transparent)]
    Translation(#[from] TranslationError),
    /// The user set knobs differently.
    #[error("host {hostname}: already set in the environment, and never overridden silently: {}; unset them or drop the selection", list_conflicts(.conflicts))]
    Conflicts {
        /// The host.
        hostname: String,
        /// The knobs.
        conflicts: Vec<Conflict>,
    },
}

fn list_conflicts(c: &[Conflict]) -> String {
    c.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The full outcome on one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// What the host has.
    pub host: Host,
    /// What was matched and left out.
    pub resolution: Resolution,
    /// The settings for the flavour.
    pub translation: Translation,
    /// Settings the user had already set to a value that means the same (kept as the
    /// user set them).
    pub already_set: Vec<String>,
    /// The settings compared with the registries of the libraries the job loads, when a
    /// front end read them ([`crate::registry`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registry: Option<crate::registry::Checked>,
    /// The versions of the transport libraries the settings were written for
    /// ([`crate::versions`]; unknown ones are null).
    pub libraries: Libraries,
}

impl Report {
    /// The settings to apply (those not already set to the same value).
    pub fn to_apply(&self) -> impl Iterator<Item = &Setting> {
        self.translation
            .settings
            .iter()
            .filter(|s| !self.already_set.contains(&s.knob.env_name()))
    }

    /// Checks every setting against the registries of `stack` ([`crate::registry`]):
    /// what a library will not read as written becomes a warning naming this host (a
    /// loss, refused under `--strict`); the count, the settings read under another name
    /// and those that could not be checked become notes; the result is kept in
    /// [`Report::registry`].
    pub fn check_against(&mut self, stack: &crate::registry::Stack) {
        let host = &self.host.hostname;
        let checked = crate::registry::check(&self.translation.settings, stack);
        self.translation.warnings.extend(
            checked
                .findings
                .iter()
                .map(|f| format!("host {host}: {}", f.warning())),
        );
        self.translation.notes.push(format!(
            "{} of {} settings checked against the registries of {}",
            checked.checked,
            self.translation.settings.len(),
            if checked.libraries.is_empty() {
                "no library".to_string()
            } else {
                checked.libraries.join(", ")
            }
        ));
        self.registry = Some(checked);
        let notes = self.registry_notes();
        self.translation.notes.extend(notes);
    }

    /// What [`Report::check_against`] notes beyond its count: the settings read under
    /// another name, and those it could not check, each naming this host.
    pub fn registry_notes(&self) -> Vec<String> {
        let host = &self.host.hostname;
        self.registry.as_ref().map_or_else(Vec::new, |c| {
            let renamed = c.renamed.iter().map(|r| format!("host {host}: {r}"));
            let unchecked = c
                .unchecked
                .iter()
                .map(|u| format!("host {host}: not checked against the library: {u}"));
            renamed.chain(unchecked).collect()
        })
    }
}

/// Resolves and translates on a discovered host, checking against an environment; each
/// setting in the form of the newest libraries ([`plan_for`] with nothing known of them).
pub fn plan(
    selection: &Selection,
    flavour: Flavour,
    host: &Host,
    environment: &BTreeMap<String, String>,
) -> Result<Report, Error> {
    plan_for(selection, flavour, host, environment, &Libraries::UNKNOWN)
}

/// [`plan`] for a job that loads `libs`: each setting in the form those releases read
/// ([`crate::translate::translate_for`]).
pub fn plan_for(
    selection: &Selection,
    flavour: Flavour,
    host: &Host,
    environment: &BTreeMap<String, String>,
    libs: &Libraries,
) -> Result<Report, Error> {
    let resolution = resolve(selection, host)?;
    let mut translation = translate_for(&resolution, flavour, libs)?;
    if let Some(w) = crate::downgrade::control_only(host, &resolution, &translation, environment) {
        translation.warnings.push(w);
    }
    let mut conflicts = Vec::new();
    let mut already_set = Vec::new();
    for s in &translation.settings {
        let name = s.knob.env_name();
        if let Some(user) = environment.get(&name) {
            if s.agrees_with(user) {
                already_set.push(name.clone());
            } else {
                conflicts.push(Conflict {
                    variable: name.clone(),
                    user_value: user.clone(),
                    ours: Some(s.value.clone()),
                });
            }
        }
        for other in &s.must_be_unset {
            let oname = other.env_name();
            if let Some(user) = environment.get(&oname) {
                conflicts.push(Conflict {
                    variable: oname,
                    user_value: user.clone(),
                    ours: None,
                });
            }
        }
    }
    if !conflicts.is_empty() {
        return Err(Error::Conflicts {
            hostname: host.hostname.clone(),
            conflicts,
        });
    }
    Ok(Report {
        host: host.clone(),
        resolution,
        translation,
        already_set,
        registry: None,
        libraries: *libs,
    })
}

/// Discovers this host, plans against this process's environment and sets the
/// environment (MCA parameters as `OMPI_MCA_*`). Call before `MPI_Init`, before any
/// other thread starts.
pub fn apply_to_env(selection: &Selection, flavour: Flavour) -> Result<Report, Error> {
    apply_with(selection, flavour, &Discovery::live())
}

/// Like [`apply_to_env`], with every setting checked first against the registries of
/// the libraries this process loads ([`crate::stack`]: its mapped MPI library and the
/// transports that links; a bundled one asked by a child of this program, whose `main`
/// must call [`crate::stack::answer_registry_request`] first) — before the environment
/// changes, since a set `FI_PROVIDER` narrows what libfabric registers. See
/// [`Report::check_against`].
pub fn apply_to_env_checked(selection: &Selection, flavour: Flavour) -> Result<Report, Error> {
    apply_after(selection, flavour, &Discovery::live(), |report| {
        // Bundled transports are read by a child of this program (which answers
        // crate::stack::REGISTRY_REQUEST_ENV first in its main).
        let me = std::env::current_exe().unwrap_or_default();
        let stack = crate::stack::read(flavour, crate::stack::mapped_mpi_library(), &me);
        report.check_against(&stack);
    })
}

/// Like [`apply_to_env`] with an explicit discovery (e.g. a fixture sysfs root).
pub fn apply_with(
    selection: &Selection,
    flavour: Flavour,
    discovery: &Discovery,
) -> Result<Report, Error> {
    apply_after(selection, flavour, discovery, |_| {})
}

/// Plans on the discovered host against this process's environment, lets `before`
/// see the report while the environment is still unchanged, then sets the environment.
fn apply_after(
    selection: &Selection,
    flavour: Flavour,
    discovery: &Discovery,
    before: impl FnOnce(&mut Report),
) -> Result<Report, Error> {
    let host = discovery.discover()?;
    let environment: BTreeMap<String, String> = std::env::vars().collect();
    // What every rank of the host knows alike: the libraries its MPI library links.
    let libs = Libraries::of_this_process();
    let mut report = plan_for(selection, flavour, &host, &environment, &libs)?;
    before(&mut report);
    for s in report.to_apply() {
        let (k, v) = s.env_pair();
        std::env::set_var(k, v);
    }
    Ok(report)
}
