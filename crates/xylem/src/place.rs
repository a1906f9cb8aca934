//! `xylem place sqmr ...`: a launcher command line and its host file, from the `place`
//! crate.
//!
//! Without `--out` it prints a shell script that writes the file (a here-document) and
//! runs the command; with `--out DIR` it writes the file into DIR and prints the command.
//! The first line, starting with `#`, says where every rank goes.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use place::{Command, Launcher, Layout, Mpi, Request, Topology};

/// `xylem place ...`.
#[derive(Debug, Subcommand)]
pub enum PlaceCommand {
    /// sqmr: core ranks on the core node, each core's neighbours spread over the others.
    Sqmr(SqmrArgs),
}

/// The options of `xylem place sqmr`.
#[derive(Debug, Args)]
pub struct SqmrArgs {
    /// Ranks on the core node (1 to 1048576; the job, num_cores × (1 + num_nbors)
    /// ranks, at most 1048576 too).
    #[arg(long = "num_cores", visible_alias = "num-cores", value_name = "N",
          value_parser = rank_count())]
    pub num_cores: u64,
    /// Neighbour ranks per core rank (1 to 1048576).
    #[arg(
        long = "num_nbors",
        visible_alias = "num-nbors",
        value_name = "N",
        default_value_t = 1,
        value_parser = rank_count()
    )]
    pub num_nbors: u64,
    /// The node under test.
    #[arg(long = "core-node", visible_alias = "core_node", value_name = "NODE")]
    pub core_node: String,
    /// Every node the job may use, the core node among them: NODE,NODE,...
    #[arg(long, value_name = "LIST", value_delimiter = ',', required = true)]
    pub nodes: Vec<String>,
    /// srun (Slurm, arbitrary distribution), mpirun (Open MPI, rankfile) or mpiexec
    /// (MPICH hydra, machine file).
    #[arg(long, value_name = "LAUNCHER", value_parser = parse_launcher)]
    pub launcher: Launcher,
    /// The MPI library sqmr was built with (openmpi or mpich): under srun it adds the
    /// --mpi plugin that library needs (pmix or pmi2).
    #[arg(long, value_name = "MPI", value_parser = parse_mpi)]
    pub mpi: Option<Mpi>,
    /// The most ranks a node may take (its cores, or its Slurm CPUs).
    #[arg(long = "slots-per-node", value_name = "N")]
    pub slots_per_node: Option<usize>,
    /// Write the file into DIR (created if missing) and print only the command.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The sqmr binary to name in the command.
    #[arg(long, value_name = "PATH", default_value = "sqmr")]
    pub program: String,
    /// More sqmr options (after `--`).
    #[arg(last = true, value_name = "SQMR_ARGS")]
    pub extra: Vec<String>,
}

/// A rank count: 1 to [`place::MAX_RANKS`], refused by clap (exit 2, naming the option
/// and the range) before anything is allocated.
fn rank_count() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..=place::MAX_RANKS as u64)
}

fn parse_launcher(s: &str) -> Result<Launcher, String> {
    s.parse()
}

fn parse_mpi(s: &str) -> Result<Mpi, String> {
    s.parse()
}

/// Runs `xylem place ...` and returns the exit code: 0, or 2 when the layout or the
/// command cannot be made, or 1 when the file or standard output cannot be written (141
/// when standard output is a closed pipe).
pub fn main(command: PlaceCommand) -> ExitCode {
    match run(command) {
        Ok(text) => crate::out::print("xylem place: ", &text),
        Err((code, message)) => {
            outfile::eprintln!("xylem place: {message}");
            ExitCode::from(code)
        }
    }
}

/// Checks the sqmr options after `--` with sqmr's own parser: they must parse, and
/// must not contradict the placement (`--num_cores`, `--num_nbors`).
fn check_passed_on(num_cores: u64, num_nbors: u64, extra: &[String]) -> Result<(), String> {
    let parsed = sqmr::options::Options::parse_from_args(
        std::iter::once("sqmr".to_string()).chain(extra.iter().cloned()),
    )
    .map_err(|e| {
        let text = e.render().to_string();
        let first = text
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ");
        format!("the sqmr options after `--` do not parse: {first}")
    })?;
    if let Some(cores) = parsed.num_cores {
        if cores != num_cores as i64 {
            return Err(format!(
                "the sqmr options after `--` say --num_cores={cores}, but the placement is for \
                 --num_cores {num_cores}; give it once, to xylem place"
            ));
        }
    }
    let nbors_given = extra.iter().any(|a| {
        let bare = a.trim_start_matches('-');
        bare.starts_with("num_nbors") || bare.starts_with("num-nbors")
    });
    if nbors_given && parsed.num_nbors != num_nbors as i64 {
        return Err(format!(
            "the sqmr options after `--` say --num_nbors={}, but the placement is for \
             --num_nbors {num_nbors}; give it once, to xylem place",
            parsed.num_nbors
        ));
    }
    Ok(())
}

fn run(command: PlaceCommand) -> Result<String, (u8, String)> {
    let PlaceCommand::Sqmr(args) = command;
    check_passed_on(args.num_cores, args.num_nbors, &args.extra).map_err(|e| (2, e))?;
    // Both are at most place::MAX_RANKS (rank_count): they fit.
    let layout = Layout::plan(&Request {
        shape: Topology {
            num_cores: usize::try_from(args.num_cores).unwrap_or(usize::MAX),
            num_nbors: usize::try_from(args.num_nbors).unwrap_or(usize::MAX),
        },
        core_node: args.core_node.clone(),
        nodes: args.nodes.clone(),
        slots_per_node: args.slots_per_node,
    })
    .map_err(|e| (2, e.to_string()))?;
    let name = args.launcher.default_file_name();
    // The folder is walked (and made) refusing a link another user planted on the way
    // (crate outfile's rule); the file is then written in the folder reached.
    let (path, out_dir) = match &args.out {
        None => (name.to_string(), None),
        Some(dir) => {
            let held = outfile::SafeDir::create_all(dir).map_err(|e| {
                let code = if outfile::links::planted_link(&e).is_some() {
                    2
                } else {
                    1
                };
                (
                    code,
                    format!(
                        "--out {}: cannot create it: {}",
                        outfile::shown::path(dir),
                        outfile::cause(&e)
                    ),
                )
            })?;
            let dir = std::path::absolute(dir)
                .map_err(|e| (1, format!("cannot resolve {}: {e}", dir.display())))?;
            (dir.join(name).to_string_lossy().into_owned(), Some(held))
        }
    };
    let command = Command::new(
        &layout,
        args.launcher,
        args.mpi,
        &path,
        &args.program,
        &args.extra,
    )
    .map_err(|e| (2, e.to_string()))?;
    let mut text = format!("# {}\n", layout.summary());
    if args.launcher == Launcher::Srun && args.mpi.is_none() {
        text += "# srun: add --mpi=pmix for Open MPI or --mpi=pmi2 for MPICH unless the \
                 cluster's MpiDefault is right (or give --mpi openmpi|mpich)\n";
    }
    if let Some(held) = &out_dir {
        // A generated file, made again in place: replaced whole, never left partial.
        outfile::replace_in(held, name, command.file.contents.as_bytes())
            .map_err(|e| (1, e.to_string()))?;
        text += &command.shell_line();
        text.push('\n');
    } else {
        text += &command.script();
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// The help of `option` of `xylem place sqmr`.
    fn help(option: &str) -> String {
        let cli = crate::cli::Cli::command();
        let sqmr = cli
            .find_subcommand("place")
            .and_then(|p| p.find_subcommand("sqmr"))
            .expect("xylem place sqmr");
        let arg = sqmr
            .get_arguments()
            .find(|a| a.get_long() == Some(option))
            .expect("the option");
        arg.get_help().expect("its help").to_string()
    }

    #[test]
    fn the_help_states_the_rank_limit_of_the_place_crate() {
        let most = place::MAX_RANKS.to_string();
        assert!(help("num_cores").contains(&format!("1 to {most}")));
        assert!(help("num_cores").contains(&format!("at most {most}")));
        assert!(help("num_nbors").contains(&format!("1 to {most}")));
    }
}
