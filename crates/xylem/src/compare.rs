//! `xylem compare A.json B.json [--json]`: two results of one benchmark side by side.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

/// `xylem compare` arguments.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The base result (A).
    #[arg(value_name = "A.json")]
    pub a: PathBuf,
    /// The result compared with it (B); ratios are B/A.
    #[arg(value_name = "B.json")]
    pub b: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `xylem compare`.
pub fn main(args: CompareArgs) -> ExitCode {
    let compared = analysis::load_file(&args.a, None)
        .and_then(|a| Ok((a, analysis::load_file(&args.b, None)?)))
        .and_then(|(a, b)| analysis::compare::compare(&a, &b));
    match compared {
        Ok(c) if args.json => crate::out::print("xylem compare: ", &analysis::compare::json(&c)),
        Ok(c) => crate::out::print("xylem compare: ", &analysis::compare::text(&c)),
        Err(e) => {
            outfile::eprintln!("xylem compare: {e}");
            ExitCode::from(1)
        }
    }
}
