//! `xylem`: the umbrella command of the xylem MPI benchmarks. `xylem net ...`: show this
//! host's networks, resolve a network selection (dry run), or resolve it and exec a
//! program with the settings in its environment; `xylem place ...`: launcher command
//! lines; `xylem plot`, `xylem compare`, `xylem summary`: results to look at; `xylem perflog`: ReFrame
//! performance logs as series over time; `xylem gen`: man pages and shell completions.

#![forbid(unsafe_code)]

mod cli;
mod compare;
mod crosscheck;
mod detect;
mod gen;
mod library;
mod manual;
mod net;
mod out;
mod perflog;
mod place;
mod plot;
mod summary;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Started only to read a bundled transport library's registry (netsel::stack): that,
    // and nothing else.
    netsel::stack::answer_registry_request();
    // Before anything opens a file: a closed standard stream is taken by /dev/null, and a
    // closed standard output makes every write to it fail (exit 1, said on stderr).
    outfile::stdout::guard_standard_streams();
    // An interactive command: a standard output closed with `>&-` (which Rust's runtime
    // has turned into /dev/null, read-write) is an error, not output lost with exit 0.
    outfile::stdout::refuse_runtime_null();
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        // --help and --version go to standard output, checked like every other write.
        Err(e) if !e.use_stderr() => return out::print("xylem: ", &e.render().to_string()),
        Err(e) => {
            let _ = e.print();
            return out::code(e.exit_code());
        }
    };
    match cli.command {
        cli::Command::Net { command } => match net::run(command) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                // An empty message: a closed standard output pipe, left quiet.
                if !e.message.is_empty() {
                    outfile::eprintln!("xylem: {}", e.message);
                }
                ExitCode::from(e.code)
            }
        },
        cli::Command::Place { command } => place::main(command),
        cli::Command::Plot(args) => plot::main(args),
        cli::Command::Compare(args) => compare::main(args),
        cli::Command::Summary(args) => summary::main(args),
        cli::Command::Perflog(args) => perflog::main(args),
        cli::Command::Gen { command } => gen::main(command),
    }
}
