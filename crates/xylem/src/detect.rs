//! Detecting the MPI flavour when `--mpi` is not given.
//!
//! Order: `$XYLEM_MPI` (a flavour name; a name that is not one is bad input, exit 2, as
//! for `--mpi`); then, when the program is known (`xylem net exec -- PROGRAM`, `xylem net
//! resolve --program PROGRAM`), the MPI library it loads ([`crate::library`]); then the
//! version tools, asked in an order
//! hinted by the launcher's environment — Open MPI's `mpirun` gives ranks
//! `OMPI_COMM_WORLD_SIZE`, Hydra gives `PMI_RANK`/`PMI_SIZE` — so that on a host with
//! both libraries the one launching us wins: `ompi_info --version`, `mpichversion`,
//! (each first from the directory of the first `mpirun`/`mpiexec` on PATH, then anywhere),
//! `mpiname -a` (MVAPICH2), `mpirun --version`. Each tool gets a few seconds; after the
//! first answer the other libraries' tools are asked too, and the flavours they name are
//! reported beside it: on a machine with several MPIs and no program named, the first tool
//! on PATH may not be the library the job loads.

use std::path::Path;

use netsel::Flavour;

use crate::library::{library_of, program_path, version_text};
use netsel::stack::launcher_dir;
pub(crate) use netsel::stack::run_tool;

/// The environment variable naming the flavour.
pub const FLAVOUR_ENV: &str = "XYLEM_MPI";

/// Why the flavour could not be found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DetectError {
    /// `$XYLEM_MPI` names no flavour: bad input, like a bad `--mpi`.
    BadName(String),
    /// No tool told which library is in use.
    Undetected(String),
}

/// Parses a flavour name given as `source` (`--mpi` or `XYLEM_MPI`); the message names the
/// source and the accepted names.
pub fn parse_flavour(source: &str, name: &str) -> Result<Flavour, String> {
    name.parse::<Flavour>()
        .map_err(|e| format!("{source}: {e}"))
}

/// A detected flavour and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detected {
    /// The flavour.
    pub flavour: Flavour,
    /// What told it: `$XYLEM_MPI`, the library a program loads, or a version tool.
    pub source: String,
    /// When version tools of other libraries on PATH name other flavours (a machine with
    /// several MPIs, no program named): which, so that the user can check.
    pub others: Vec<String>,
}

/// Finds the flavour, or explains what was tried. With `program` (the MPI program the
/// job runs), the library it loads decides before any version tool.
pub fn detect_flavour(program: Option<&Path>) -> Result<Detected, DetectError> {
    if let Ok(name) = std::env::var(FLAVOUR_ENV) {
        let f = parse_flavour(FLAVOUR_ENV, &name).map_err(DetectError::BadName)?;
        return Ok(Detected {
            flavour: f,
            source: format!("${FLAVOUR_ENV}"),
            others: Vec::new(),
        });
    }
    let mut tried = vec![format!("${FLAVOUR_ENV}")];
    if let Some(program) = program {
        match from_program(program) {
            Ok(Some(d)) => return Ok(d),
            Ok(None) => tried.push(format!("{} (loads no MPI library)", program.display())),
            Err(e) => tried.push(e),
        }
    }
    let ompi: &[&str] = &["ompi_info", "--version"];
    let mpich: &[&str] = &["mpichversion"];
    let mv2: &[&str] = &["mpiname", "-a"];
    let generic: &[&str] = &["mpirun", "--version"];
    let mpich_first = std::env::var_os("OMPI_COMM_WORLD_SIZE").is_none()
        && (std::env::var_os("PMI_RANK").is_some() || std::env::var_os("PMI_SIZE").is_some());
    let order = if mpich_first {
        [mpich, mv2, ompi, generic]
    } else {
        [ompi, mpich, mv2, generic]
    };
    // The tools beside the first launcher on PATH come first: on a machine with several
    // MPIs (Debian's beside one in a prefix of its own) that launcher is the MPI in use,
    // and another library's `ompi_info` further down PATH must not answer for it.
    let launcher_dir = launcher_dir();
    let beside: Vec<Vec<String>> = launcher_dir
        .iter()
        .flat_map(|dir| {
            order.iter().filter_map(move |cmd| {
                let tool = dir.join(cmd[0]);
                tool.is_file().then(|| {
                    let mut v = vec![tool.display().to_string()];
                    v.extend(cmd[1..].iter().map(|a| a.to_string()));
                    v
                })
            })
        })
        .collect();
    let anywhere = order
        .iter()
        .map(|cmd| cmd.iter().map(|a| a.to_string()).collect::<Vec<_>>());
    let mut found: Option<Detected> = None;
    // The flavours already in `found.others`, each said once.
    let mut other_flavours: Vec<Flavour> = Vec::new();
    for cmd in beside.into_iter().chain(anywhere) {
        let words: Vec<&str> = cmd.iter().map(String::as_str).collect();
        // Once one answered, only the other libraries' own tools are asked (not the
        // launcher), to say when they name another flavour.
        if found.is_some() && words[0].ends_with("mpirun") {
            continue;
        }
        if let Some(text) = run_tool(&words) {
            // MPIR_CVAR_CH4_NETMOD picks the netmod of an MPICH built with several.
            if let Some(f) = Flavour::detect_with_env(&text, |k| std::env::var(k).ok()) {
                let source = format!("`{}`", words.join(" "));
                match &mut found {
                    None => {
                        found = Some(Detected {
                            flavour: f,
                            source,
                            others: Vec::new(),
                        })
                    }
                    Some(d) if d.flavour != f && !other_flavours.contains(&f) => {
                        other_flavours.push(f);
                        d.others.push(format!("{f} (from {source})"));
                    }
                    Some(_) => {}
                }
            }
        }
    }
    if let Some(d) = found {
        return Ok(d);
    }
    tried.push("ompi_info --version, mpichversion, mpiname -a, mpirun --version".to_string());
    Err(DetectError::Undetected(format!(
        "cannot tell which MPI library is in use (tried {}); give --mpi FLAVOUR, or --program PATH",
        tried.join(", ")
    )))
}

/// The flavour of the MPI library `program` loads.
fn from_program(program: &Path) -> Result<Option<Detected>, String> {
    let path = program_path(program)
        .ok_or_else(|| format!("{} (not found on PATH)", program.display()))?;
    let Some(lib) = library_of(&path)? else {
        return Ok(None);
    };
    let text = version_text(&lib)?
        .ok_or_else(|| format!("{} (no MPI library's version text in it)", lib.display()))?;
    let flavour = Flavour::detect_with_env(&text, |k| std::env::var(k).ok())
        .ok_or_else(|| format!("{} (a library this version does not know)", lib.display()))?;
    Ok(Some(Detected {
        flavour,
        source: format!(
            "the MPI library {} loads ({})",
            path.display(),
            lib.display()
        ),
        others: Vec::new(),
    }))
}
