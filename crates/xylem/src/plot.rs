//! `xylem plot RESULT.json... -o FILE.svg|png [--label L]...`: the plot of one or more
//! results of one benchmark (crate `analysis` draws it).
//!
//! The picture is an output file like the benchmarks' (crate `outfile`): its name is
//! reserved before the results are read (an existing file is refused, never
//! overwritten unless `--force` names a regular file to replace), and the picture is
//! written to a temporary file renamed into place, so a full disk leaves no partial SVG
//! or empty PNG.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

/// `xylem plot` arguments.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// Results written by `sqmr --json` or `b_eff_io --json` (all of one benchmark), or one
    /// `sqmr --scan --json` document (drawn as a heat map of its node pairs).
    #[arg(required = true, value_name = "RESULT.json")]
    pub results: Vec<PathBuf>,
    /// The picture to write (a new file, never overwritten unless --force): its name ends
    /// in .svg or .png.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Replace FILE if it is an existing regular file (the new picture is put in its place
    /// whole; a link, directory or device there is still refused).
    #[arg(long)]
    pub force: bool,
    /// The legend label of each result, in order (default: the file name without .json).
    #[arg(long, value_name = "LABEL")]
    pub label: Vec<String>,
}

/// Runs `xylem plot`.
pub fn main(args: PlotArgs) -> ExitCode {
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            outfile::eprintln!("xylem plot: {e}");
            ExitCode::from(1)
        }
    }
}

/// The results, each with its label.
fn load(args: &PlotArgs) -> Result<Vec<analysis::Run>, analysis::Error> {
    args.results
        .iter()
        .enumerate()
        .map(|(i, path)| analysis::load_file(path, args.label.get(i).map(String::as_str)))
        .collect()
}

fn run(args: &PlotArgs) -> Result<(), analysis::Error> {
    if args.label.len() > args.results.len() {
        return Err(analysis::Error::Usage(format!(
            "{} labels for {} results",
            args.label.len(),
            args.results.len()
        )));
    }
    let format = analysis::plot::Format::from_path(&args.output)?;
    let existing = std::fs::symlink_metadata(&args.output).is_ok_and(|m| m.is_file());
    if args.force && existing {
        let bytes = analysis::plot::plot(&load(args)?, format)?;
        outfile::replace(&args.output, &bytes)
            .map_err(|e| analysis::Error::Usage(e.to_string()))?;
        outfile::eprintln!("xylem plot: {} replaced (--force)", args.output.display());
        return Ok(());
    }
    let mut picture = outfile::Reservation::reserve(&args.output)
        .map_err(|e| analysis::Error::Usage(e.to_string()))?;
    if let Some(notice) = picture.replaced_notice() {
        outfile::eprintln!("xylem plot: warning: {notice}");
    }
    let bytes = analysis::plot::plot(&load(args)?, format)?;
    picture
        .write(&bytes)
        .and_then(|()| picture.release())
        .map_err(|e| analysis::Error::Usage(e.to_string()))
}
