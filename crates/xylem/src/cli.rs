//! The command line (clap derive).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// xylem: MPI benchmarks and tools.
#[derive(Debug, Parser)]
#[command(name = "xylem", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Network selection: show, resolve (dry run), exec.
    Net {
        /// The `net` subcommand.
        #[command(subcommand)]
        command: NetCommand,
    },
    /// Placement: a launcher command line (and the file it needs) that puts a benchmark's
    /// ranks where its numbers mean what they say.
    Place {
        /// The benchmark to place.
        #[command(subcommand)]
        command: crate::place::PlaceCommand,
    },
    /// Plot results of sqmr or b_eff_io as SVG or PNG.
    #[command(after_help = analysis::input_rules())]
    Plot(crate::plot::PlotArgs),
    /// Two results of one benchmark side by side, with ratios.
    #[command(after_help = analysis::input_rules())]
    Compare(crate::compare::CompareArgs),
    /// The headline figures of a results folder (its sqmr.json and b_eff_io.json) as
    /// Markdown, with links to their plots and files.
    #[command(after_help = analysis::input_rules())]
    Summary(crate::summary::SummaryArgs),
    /// ReFrame performance logs as series over time: a trend table, JSON or a plot.
    #[command(after_help = analysis::input_rules())]
    Perflog(crate::perflog::PerflogArgs),
    /// Man pages and shell completions of sqmr, b_eff_io and xylem; the results' JSON
    /// Schemas.
    Gen {
        /// What to generate.
        #[command(subcommand)]
        command: crate::gen::GenCommand,
    },
}

/// `xylem net ...`.
#[derive(Debug, Subcommand)]
pub enum NetCommand {
    /// This host's networks as the resolver sees them.
    Show {
        /// Sysfs root to read (a fixture tree may carry `addrs` and `hostname` files).
        #[arg(long, value_name = "DIR")]
        sysfs: Option<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Dry run: what the selection uses and leaves out on this host, and the exact settings.
    Resolve {
        /// The selection.
        #[command(flatten)]
        selection: SelectionArgs,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Resolve on this host, set the environment, and exec PROGRAM.
    ///
    /// Each host resolves on its own, so nothing here compares hosts: to check before
    /// launching, `xylem net check --enable LIST -- LAUNCHER ARGS` (one rank per host).
    Exec {
        /// The selection.
        #[command(flatten)]
        selection: SelectionArgs,
        /// Print the resolution report to stderr before exec.
        #[arg(long, short)]
        verbose: bool,
        /// The program and its arguments (after `--`).
        #[arg(required = true, trailing_var_arg = true, value_name = "PROGRAM")]
        program: Vec<OsString>,
    },
    /// Before a job: resolve the selection on every host of a launch and find the pairs
    /// of hosts whose selected networks share nothing (the job would stop in MPI_Init,
    /// or take other links).
    ///
    /// Runs `LAUNCHER ARGS xylem net resolve …` (this xylem, at the same path on every
    /// host), e.g. `xylem net check --enable ib -- mpirun --host n1,n2 --map-by node -n 2`
    /// or `-- srun -N 4 --ntasks-per-node=1`, prints each host's selected networks and
    /// one line per pair of hosts that cannot reach each other. Exit 0 when every pair
    /// can, 3 when the selection partitions the hosts, 1 when the launch failed.
    Check {
        /// The selection.
        #[command(flatten)]
        selection: SelectionArgs,
        /// The launcher and its arguments (after `--`), one rank per host.
        #[arg(required = true, trailing_var_arg = true, value_name = "LAUNCHER")]
        launcher: Vec<OsString>,
    },
}

/// `--enable|--disable LIST [--mpi FLAVOUR] [--sysfs DIR]`.
#[derive(Debug, Args)]
pub struct SelectionArgs {
    /// --enable, --disable, --strict.
    #[command(flatten)]
    pub network: benchkit::network::NetworkArgs,
    /// MPI flavour: openmpi-4.1, openmpi-5.0 (openmpi4, openmpi5), mpich-ucx (mpich,
    /// mpich4, mpich5), mpich-ofi, mpich-nemesis, intel (intelmpi), mvapich2,
    /// cray-mpich. Default: $XYLEM_MPI, else the library of --program (or of exec's
    /// PROGRAM), else the version tools on PATH.
    #[arg(long, value_name = "FLAVOUR")]
    pub mpi: Option<String>,
    /// The MPI program the job runs: without --mpi, the MPI library it loads (as `ldd`
    /// finds it here) decides the flavour. `exec` takes its PROGRAM.
    #[arg(long = "program", value_name = "PATH")]
    pub program_path: Option<PathBuf>,
    /// Sysfs root to read (default /sys).
    #[arg(long, value_name = "DIR")]
    pub sysfs: Option<PathBuf>,
}

/// Output formats of `resolve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Human-readable report.
    Text,
    /// `export NAME=VALUE` lines.
    Sh,
    /// One JSON document.
    Json,
    /// The selected networks in one line (`netsel1 HOST …`), as `net check` gathers them.
    Networks,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Clap's own checks of the whole command tree (unique argument names in every
    /// subcommand), which otherwise run only when that subcommand is parsed.
    #[test]
    fn the_command_line_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
