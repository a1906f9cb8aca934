//! `xylem net show|resolve|exec`.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::process::Command;

use netsel::format::{host_table, report_sh, report_text};
use netsel::{plan, Discovery, Flavour, Host, Report, Selection};

use crate::cli::{Format, NetCommand, SelectionArgs};
use crate::detect::detect_flavour;

/// A failure with its exit code.
#[derive(Debug)]
pub struct Failure {
    /// The message, printed after `xylem: `.
    pub message: String,
    /// The exit code: 2 for a malformed selection, 1 for everything else, 127 when
    /// the program cannot be executed.
    pub code: u8,
}

impl Failure {
    fn new(code: u8, message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code,
        }
    }
}

impl From<netsel::Error> for Failure {
    fn from(e: netsel::Error) -> Failure {
        let code = if matches!(e, netsel::Error::Grammar(_)) {
            2
        } else {
            1
        };
        Failure::new(code, e.to_string())
    }
}

/// Runs one `net` subcommand.
pub fn run(command: NetCommand) -> Result<(), Failure> {
    match command {
        NetCommand::Show { sysfs, json } => {
            let host = discover(sysfs.as_deref())?;
            if json {
                println!("{}", to_json(&host)?);
            } else {
                print!("{}", host_table(&host));
            }
            Ok(())
        }
        NetCommand::Resolve { selection, format } => {
            let report = resolve(&selection)?;
            match format {
                Format::Text => print!("{}", report_text(&report)),
                Format::Sh => print!("{}", report_sh(&report)),
                Format::Json => println!("{}", to_json(&report)?),
            }
            Ok(())
        }
        NetCommand::Exec {
            selection,
            verbose,
            program,
        } => {
            let report = resolve(&selection)?;
            if verbose {
                eprint!("{}", report_text(&report));
            }
            let mut cmd = Command::new(&program[0]);
            cmd.args(&program[1..]);
            for s in report.to_apply() {
                let (k, v) = s.env_pair();
                cmd.env(k, v);
            }
            let err = cmd.exec();
            Err(Failure::new(
                127,
                format!("cannot execute {}: {err}", program[0].to_string_lossy()),
            ))
        }
    }
}

fn discover(sysfs: Option<&std::path::Path>) -> Result<Host, Failure> {
    let d = match sysfs {
        Some(dir) => Discovery::at(dir),
        None => Discovery::live(),
    };
    d.discover().map_err(|e| Failure::new(1, e.to_string()))
}

fn resolve(args: &SelectionArgs) -> Result<Report, Failure> {
    let selection = Selection::from_switches(args.enable.as_deref(), args.disable.as_deref())
        .map_err(|e| Failure::new(2, e.to_string()))?;
    let flavour = match &args.mpi {
        Some(name) => name
            .parse::<Flavour>()
            .map_err(|e| Failure::new(2, e.to_string()))?,
        None => detect_flavour().map_err(|e| Failure::new(1, e))?.0,
    };
    let host = discover(args.sysfs.as_deref())?;
    let environment: BTreeMap<String, String> = std::env::vars().collect();
    Ok(plan(&selection, flavour, &host, &environment)?)
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String, Failure> {
    serde_json::to_string_pretty(v).map_err(|e| Failure::new(1, format!("cannot write JSON: {e}")))
}
