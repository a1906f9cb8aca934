//! `xylem summary DIR`: the headline figures of a results folder as Markdown on standard
//! output (crate `analysis` writes it).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

/// `xylem summary` arguments.
#[derive(Debug, Args)]
pub struct SummaryArgs {
    /// A folder holding sqmr.json and/or b_eff_io.json (as `make demo` writes them).
    #[arg(value_name = "DIR")]
    pub folder: PathBuf,
}

/// Runs `xylem summary`.
pub fn main(args: SummaryArgs) -> ExitCode {
    match analysis::summary::of_folder(&args.folder) {
        Ok(text) => crate::out::print("xylem summary: ", &text),
        Err(e) => {
            outfile::eprintln!("xylem summary: {e}");
            ExitCode::from(1)
        }
    }
}
