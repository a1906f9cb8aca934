//! `xylem perflog PERFLOG... [--var NAME]... [--json] [-o FILE.svg|png]`: the records of
//! ReFrame performance logs (of xylem's checks under `reframe/`, or any ReFrame check) as
//! series over time, one per system, partition, environment, check and variable: a
//! table of each series' trend, every point as JSON, or a plot of value against date.
//!
//! The picture is an output file like `xylem plot`'s: its name is reserved before the
//! logs are read (an existing file is refused), and it is written whole and renamed
//! into place.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

/// `xylem perflog` arguments.
#[derive(Debug, Args)]
pub struct PerflogArgs {
    /// ReFrame performance logs (filelog handler: `PERFLOGDIR/SYSTEM/PARTITION/CHECK.log`).
    #[arg(required = true, value_name = "PERFLOG")]
    pub logs: Vec<PathBuf>,
    /// Only these performance variables (repeatable; e.g. rate_0B, peak_bw, b_eff_io).
    #[arg(long = "var", value_name = "NAME")]
    pub variables: Vec<String>,
    /// Print every point as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also plot value against date, one panel per variable, into this new file (.svg or
    /// .png).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Runs `xylem perflog`.
pub fn main(args: PerflogArgs) -> ExitCode {
    match run(&args) {
        Ok(text) => crate::out::print("xylem perflog: ", &text),
        Err(e) => {
            outfile::eprintln!("xylem perflog: {e}");
            ExitCode::from(1)
        }
    }
}

fn run(args: &PerflogArgs) -> Result<String, analysis::Error> {
    let usage = |e: outfile::Error| analysis::Error::Usage(e.to_string());
    let picture = match &args.output {
        Some(path) => {
            let format = analysis::plot::Format::from_path(path)?;
            let reservation = outfile::Reservation::reserve(path).map_err(usage)?;
            if let Some(notice) = reservation.replaced_notice() {
                outfile::eprintln!("xylem perflog: warning: {notice}");
            }
            Some((format, reservation))
        }
        None => None,
    };
    let logs: Vec<&Path> = args.logs.iter().map(PathBuf::as_path).collect();
    let series = analysis::perflog::load_files(&logs, &args.variables)?;
    if let Some((format, mut reservation)) = picture {
        let bytes = analysis::perflog::plot(&series, format)?;
        reservation
            .write(&bytes)
            .and_then(|()| reservation.release())
            .map_err(usage)?;
    }
    Ok(if args.json {
        analysis::perflog::json(&series)
    } else {
        analysis::perflog::text(&series)
    })
}
