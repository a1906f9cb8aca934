//! `--enable`, `--disable` and `--strict`: the network selection every benchmark takes,
//! declared once (flatten [`NetworkArgs`] into a clap parser); with the `mpi` feature also
//! its application to the environment before `MPI_Init` ([`apply`](fn@apply)) and the
//! agreement on it across ranks and hosts after ([`agree_selection`]), from `apply.rs`;
//! and what the documents record of it ([`SelectionRecord`]).

use clap::Args;

mod record;
pub use record::{merge_hosts, EnvSetting, HostSelection, SelectionRecord};

#[cfg(feature = "mpi")]
mod apply;
#[cfg(feature = "mpi")]
pub use apply::*;

/// The network-selection options of a benchmark.
#[derive(Debug, Clone, Default, PartialEq, Eq, Args)]
pub struct NetworkArgs {
    /// Use only these networks: NETWORK[:QUALIFIER],... (names like ib or eth,
    /// interfaces like eth0 or mlx5_0:1, CIDRs), resolved on each host before MPI starts
    #[arg(long, value_name = "LIST", conflicts_with = "disable")]
    pub enable: Option<String>,

    /// Use every network but these: NETWORK[:QUALIFIER],...
    #[arg(long, value_name = "LIST")]
    pub disable: Option<String>,

    /// With --enable/--disable: refuse (exit 2; a benchmark on every rank) when an item
    /// matches nothing usable on a host or names what can never be selected (lo, self,
    /// shared memory), and a benchmark also when two hosts' selected networks share no
    /// subnet; without it these are warnings on stderr and the run goes on
    #[arg(long)]
    pub strict: bool,
}

impl NetworkArgs {
    /// The lists as [`crate::start`] (and netsel) take them.
    pub fn lists(&self) -> (Option<&str>, Option<&str>) {
        (self.enable.as_deref(), self.disable.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        network: NetworkArgs,
    }

    #[test]
    fn enable_and_disable_exclude_each_other_and_strict_goes_with_either() {
        let cli = Cli::try_parse_from(["b", "--enable", "eth0,ib", "--strict"]).unwrap();
        assert_eq!(cli.network.lists(), (Some("eth0,ib"), None));
        assert!(cli.network.strict);
        let cli = Cli::try_parse_from(["b", "--disable=ib"]).unwrap();
        assert_eq!(cli.network.lists(), (None, Some("ib")));
        let e = Cli::try_parse_from(["b", "--enable", "a", "--disable", "b"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ArgumentConflict);
    }
}
