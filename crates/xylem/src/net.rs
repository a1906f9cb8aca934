//! `xylem net show|resolve|exec`.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::process::Command;

use netsel::format::{host_table, report_sh, report_text, selection_warnings};
use netsel::{plan, Discovery, Host, Report, Selection};

use crate::cli::{Format, NetCommand, SelectionArgs};
use crate::detect::{detect_flavour, parse_flavour, DetectError};

/// A failure with its exit code.
#[derive(Debug)]
pub struct NetError {
    /// The message, printed after `xylem: ` (nothing when it is empty).
    pub message: String,
    /// The exit code: 2 for bad input (a malformed selection, an unknown flavour in
    /// `--mpi` or `$XYLEM_MPI`, a warning under `--strict`), 1 for a host that
    /// cannot honour the selection or when standard output cannot be written, 141 when it
    /// is a closed pipe, 127 when the program cannot be executed.
    pub code: u8,
}

impl NetError {
    fn new(code: u8, message: impl Into<String>) -> NetError {
        NetError {
            message: message.into(),
            code,
        }
    }
}

impl From<netsel::Error> for NetError {
    fn from(e: netsel::Error) -> NetError {
        let code = if matches!(e, netsel::Error::Grammar(_)) {
            2
        } else {
            1
        };
        NetError::new(code, e.to_string())
    }
}

/// Runs one `net` subcommand.
pub fn run(command: NetCommand) -> Result<(), NetError> {
    match command {
        NetCommand::Show { sysfs, json } => {
            let host = discover(sysfs.as_deref())?;
            if json {
                print(&(to_json(&host)? + "\n"))
            } else {
                print(&host_table(&host))
            }
        }
        NetCommand::Resolve { selection, format } => {
            let report = resolve(&selection, true)?;
            match format {
                Format::Text => print(&report_text(&report)),
                Format::Sh => print(&report_sh(&report)),
                Format::Json => print(&(to_json(&report)? + "\n")),
            }
        }
        NetCommand::Exec {
            selection,
            verbose,
            program,
        } => {
            // With -v the report, warnings included, goes to stderr anyway.
            let report = resolve(&selection, !verbose)?;
            if verbose {
                outfile::eprint!("{}", report_text(&report));
            }
            let mut cmd = Command::new(&program[0]);
            cmd.args(&program[1..]);
            for s in report.to_apply() {
                let (k, v) = s.env_pair();
                cmd.env(k, v);
            }
            let err = cmd.exec();
            Err(NetError::new(
                127,
                format!("cannot execute {}: {err}", program[0].to_string_lossy()),
            ))
        }
    }
}

/// Writes `text` to standard output: a failure is exit 1 with its message, or a quiet
/// exit 141 (an empty message) when the pipe is closed.
fn print(text: &str) -> Result<(), NetError> {
    outfile::stdout::write(text).map_err(|e| {
        let code = u8::try_from(outfile::stdout::exit_code(&e)).unwrap_or(1);
        NetError::new(code, outfile::stdout::message(&e).unwrap_or_default())
    })
}

fn discover(sysfs: Option<&std::path::Path>) -> Result<Host, NetError> {
    let d = match sysfs {
        Some(dir) => Discovery::at(dir),
        None => Discovery::live(),
    };
    d.discover().map_err(|e| NetError::new(1, e.to_string()))
}

/// Resolves and plans on this host. Items that match nothing usable, and what the
/// translation loses (a fast fabric over TCP, rails a knob cannot hold, a partition or
/// VLAN that cannot reach RDMA), are named on stderr (when `warn`; the text report names
/// them too) and, with `--strict`, refuse the selection with exit 2.
fn resolve(args: &SelectionArgs, warn: bool) -> Result<Report, NetError> {
    let selection = Selection::from_switches(
        args.network.enable.as_deref(),
        args.network.disable.as_deref(),
    )
    .map_err(|e| NetError::new(2, e.to_string()))?;
    let flavour = match &args.mpi {
        Some(name) => parse_flavour("--mpi", name).map_err(|e| NetError::new(2, e))?,
        None => match detect_flavour() {
            Ok((f, _)) => f,
            Err(DetectError::BadName(e)) => return Err(NetError::new(2, e)),
            Err(DetectError::Undetected(e)) => return Err(NetError::new(1, e)),
        },
    };
    let host = discover(args.sysfs.as_deref())?;
    let environment: BTreeMap<String, String> = std::env::vars().collect();
    let planned = plan(&selection, flavour, &host, &environment);
    // The items that matched nothing, then what the translation loses on this host.
    let unmatched: Vec<String> = match &planned {
        Ok(report) => selection_warnings(&report.resolution),
        Err(_) => match netsel::resolve(&selection, &host) {
            Ok(res) => selection_warnings(&res),
            Err(none) => none.unmatched.iter().map(|u| u.warning()).collect(),
        },
    };
    let lost: Vec<String> = planned
        .as_ref()
        .map(|r| r.translation.warnings.clone())
        .unwrap_or_default();
    if warn || args.network.strict || planned.is_err() {
        // A failed plan has no report to carry them: say them here.
        for w in unmatched.iter().chain(&lost) {
            outfile::eprintln!("xylem: {w}");
        }
    }
    if args.network.strict && !(unmatched.is_empty() && lost.is_empty()) {
        let mut parts = Vec::new();
        if !unmatched.is_empty() {
            parts.push(format!(
                "{} of {selection} {} nothing on host {}",
                plural(unmatched.len(), "item", "items"),
                if unmatched.len() == 1 {
                    "selects"
                } else {
                    "select"
                },
                host.hostname
            ));
        }
        if !lost.is_empty() {
            parts.push(format!(
                "{selection} loses on host {} what {} name",
                host.hostname,
                plural(lost.len(), "warning", "warnings"),
            ));
        }
        return Err(NetError::new(
            2,
            format!(
                "--strict: {} (see the warnings above); fix the list or drop --strict",
                parts.join("; ")
            ),
        ));
    }
    planned.map_err(NetError::from)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String, NetError> {
    serde_json::to_string_pretty(v).map_err(|e| NetError::new(1, format!("cannot write JSON: {e}")))
}
