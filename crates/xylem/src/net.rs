//! `xylem net show|resolve|exec`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::Command;

use netsel::format::{host_table, report_sh, report_text, selection_warnings};
use netsel::{
    plan_for, unreachable_pairs, Discovery, Host, HostNetworks, Libraries, Report, Selection,
};

use crate::cli::{Format, NetCommand, SelectionArgs};
use crate::crosscheck::cross_check;
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
            // The text report shows the registry's notes; the other forms leave them to stderr.
            let checks = Checks::Registry {
                notes_to_stderr: !matches!(format, Format::Text),
            };
            let report = resolve(&selection, selection.program_path.as_deref(), true, checks)?;
            match format {
                Format::Text => print(&report_text(&report)),
                Format::Sh => print(&report_sh(&report)),
                Format::Json => print(&(to_json(&report)? + "\n")),
                Format::Networks => print(&(HostNetworks::from_report(&report).encode() + "\n")),
            }
        }
        NetCommand::Check {
            selection,
            launcher,
        } => check(&selection, &launcher),
        NetCommand::Exec {
            selection,
            verbose,
            program,
        } => {
            // With -v the report, warnings included, goes to stderr anyway.
            let program_path = selection
                .program_path
                .clone()
                .unwrap_or_else(|| std::path::PathBuf::from(&program[0]));
            let report = resolve(&selection, Some(&program_path), !verbose, Checks::None)?;
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

/// The exit code of `net check` when the selection partitions the hosts.
pub const PARTITIONED: u8 = 3;

/// The arguments that give `selection` to another `xylem net` command.
fn selection_words(selection: &SelectionArgs) -> Vec<OsString> {
    let mut words: Vec<OsString> = Vec::new();
    let mut pair = |flag: &str, value: Option<OsString>| {
        if let Some(v) = value {
            words.push(flag.into());
            words.push(v);
        }
    };
    pair("--enable", selection.network.enable.clone().map(Into::into));
    pair(
        "--disable",
        selection.network.disable.clone().map(Into::into),
    );
    pair("--mpi", selection.mpi.clone().map(Into::into));
    pair("--program", selection.program_path.clone().map(Into::into));
    pair("--sysfs", selection.sysfs.clone().map(Into::into));
    if selection.network.strict {
        words.push("--strict".into());
    }
    words
}

/// `net check`: every host of the launch resolves the selection (`net resolve --format
/// networks`, one line each on standard output), and the pairs of hosts that share no
/// selected network are named.
fn check(selection: &SelectionArgs, launcher: &[OsString]) -> Result<(), NetError> {
    Selection::from_switches(
        selection.network.enable.as_deref(),
        selection.network.disable.as_deref(),
    )
    .map_err(|e| NetError::new(2, e.to_string()))?;
    let me = std::env::current_exe()
        .map_err(|e| NetError::new(1, format!("cannot tell where this xylem is: {e}")))?;
    let mut cmd = Command::new(&launcher[0]);
    cmd.args(&launcher[1..])
        .arg(&me)
        .args(["net", "resolve", "--format", "networks"])
        .args(selection_words(selection))
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit());
    let shown = launcher
        .iter()
        .map(|w| w.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    let out = cmd
        .output()
        .map_err(|e| NetError::new(1, format!("cannot run the launcher `{shown}`: {e}")))?;
    let mut hosts: Vec<HostNetworks> = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let line = line.trim();
        if !line.starts_with(netsel::reach::ENCODING_TAG) {
            continue;
        }
        let h = HostNetworks::decode(line).map_err(|e| NetError::new(1, e.to_string()))?;
        if !hosts.iter().any(|x| x.hostname == h.hostname) {
            hosts.push(h);
        }
    }
    let mut text = String::new();
    for h in &hosts {
        text.push_str(&format!("host {}: {}\n", h.hostname, h.describe()));
    }
    let pairs = unreachable_pairs(&hosts);
    for p in &pairs {
        text.push_str(&format!("{}\n", p.warning));
    }
    print(&text)?;
    if !out.status.success() {
        return Err(NetError::new(
            1,
            format!(
                "the launch `{shown}` failed ({}); {} answered",
                out.status,
                plural(hosts.len(), "host", "hosts")
            ),
        ));
    }
    if hosts.is_empty() {
        return Err(NetError::new(
            1,
            format!("the launch `{shown}` ran, but no host answered with its networks"),
        ));
    }
    if !pairs.is_empty() {
        return Err(NetError::new(
            PARTITIONED,
            format!(
                "the selection partitions the hosts: {} of {} share no selected network (see above)",
                plural(pairs.len(), "pair", "pairs"),
                plural(hosts.len(), "host", "hosts")
            ),
        ));
    }
    Ok(())
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

/// What [`resolve`] checks the plan against besides the host's devices.
#[derive(Clone, Copy)]
enum Checks {
    /// Nothing more (`net exec`, which runs once per rank).
    None,
    /// The libraries' own tools: `fi_info`/`ucx_info` on the live host
    /// ([`crate::crosscheck`]) and the registries of the libraries the job loads
    /// ([`registry_check`]), whose notes go to stderr too when `notes_to_stderr`.
    Registry { notes_to_stderr: bool },
}

/// Resolves and plans on this host. Items that match nothing usable, and what the
/// translation loses (a fast fabric over TCP, rails a knob cannot hold, a partition or
/// VLAN that cannot reach RDMA) and, with [`Checks::Registry`] on the live host, what `fi_info` and
/// `ucx_info` disagree with ([`crate::crosscheck`]), are named on stderr (when `warn`; the text report names
/// them too) and, with `--strict`, refuse the selection with exit 2.
fn resolve(
    args: &SelectionArgs,
    program: Option<&std::path::Path>,
    warn: bool,
    checks: Checks,
) -> Result<Report, NetError> {
    let cross = matches!(checks, Checks::Registry { .. });
    let selection = Selection::from_switches(
        args.network.enable.as_deref(),
        args.network.disable.as_deref(),
    )
    .map_err(|e| NetError::new(2, e.to_string()))?;
    let (flavour, source) = match &args.mpi {
        Some(name) => (
            parse_flavour("--mpi", name).map_err(|e| NetError::new(2, e))?,
            None,
        ),
        None => match detect_flavour(program) {
            Ok(d) => {
                if !d.others.is_empty() {
                    outfile::eprintln!(
                        "xylem: note: the MPI flavour {} comes from {}, but other libraries are installed here: {}; name the program (--program, or exec's PROGRAM) or give --mpi",
                        d.flavour,
                        d.source,
                        d.others.join(", ")
                    );
                }
                let f = d.flavour;
                (f, Some(d))
            }
            Err(DetectError::BadName(e)) => return Err(NetError::new(2, e)),
            Err(DetectError::Undetected(e)) => return Err(NetError::new(1, e)),
        },
    };
    let host = discover(args.sysfs.as_deref())?;
    let environment: BTreeMap<String, String> = std::env::vars().collect();
    // The versions that decide a setting's form are those of the libraries the program's
    // MPI library links here (as each rank sees them, netsel::versions); a fixture tree is
    // another host, whose libraries are not known.
    let libs = match args.sysfs {
        None => netsel::stack::mpi_library(program)
            .map(|mpi| Libraries::linked_by(&mpi))
            .unwrap_or_default(),
        Some(_) => Libraries::UNKNOWN,
    };
    let mut planned = plan_for(&selection, flavour, &host, &environment, &libs);
    if let (Ok(report), true) = (&mut planned, cross && args.sysfs.is_none()) {
        // The live host only: the tools see this host, not a fixture tree.
        let found = cross_check(report);
        report.translation.warnings.extend(found);
    }
    if let (Ok(report), Checks::Registry { notes_to_stderr }) = (&mut planned, checks) {
        // The libraries are this host's, whatever tree the host's devices come from.
        registry_check(report, flavour, program, notes_to_stderr);
    }
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
    let mut report = planned.map_err(NetError::from)?;
    if let Some(d) = source {
        report.translation.notes.push(format!(
            "MPI flavour {} from {}{}",
            d.flavour,
            d.source,
            if d.others.is_empty() {
                String::new()
            } else {
                format!("; also installed: {}", d.others.join(", "))
            }
        ));
    }
    Ok(report)
}

/// Every setting of `report` checked against the registries of the libraries the job
/// loads here ([`netsel::stack`]): what a library will not read as written becomes a
/// warning (refused under `--strict`); what could not be checked or is read under another
/// name, a note (on stderr too when `warn`).
fn registry_check(
    report: &mut Report,
    flavour: netsel::Flavour,
    program: Option<&std::path::Path>,
    warn: bool,
) {
    // A bundled transport library without its tool is asked by a child of this xylem.
    let me = std::env::current_exe().unwrap_or_default();
    let stack = netsel::stack::read(flavour, netsel::stack::mpi_library(program), &me);
    report.check_against(&stack);
    if warn {
        for note in report.registry_notes() {
            outfile::eprintln!("xylem: note: {note}");
        }
    }
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
