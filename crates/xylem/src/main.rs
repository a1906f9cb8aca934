//! `xylem`: the umbrella command of the xylem MPI benchmarks. For now `xylem net ...`:
//! show this host's networks, resolve a network selection (dry run), or resolve it and
//! exec a program with the settings in its environment.

#![forbid(unsafe_code)]

mod cli;
mod detect;
mod net;
mod place;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match cli.command {
        cli::Command::Net { command } => match net::run(command) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("xylem: {}", e.message);
                ExitCode::from(e.code)
            }
        },
        cli::Command::Place { command } => place::main(command),
    }
}
