//! Network selection for MPI jobs, without an MPI dependency.
//!
//! One switch, `--enable|--disable NETWORK[:QUALIFIER],...`, parsed once
//! ([`grammar`]), resolved against each host's real interfaces ([`discovery`],
//! [`resolve`]) and translated into the settings of the MPI library in use
//! ([`flavour`], [`path`], [`translate`]). [`apply_to_env`] does it all for the
//! current process before `MPI_Init`; [`format`] prints reports and the warnings of
//! items that matched nothing ([`format::selection_warnings`]); [`reach`] finds pairs of
//! hosts whose selected networks share no subnet.
//!
//! ```
//! use netsel::{Mode, Selection};
//! let s = Selection::parse(Mode::Enable, "mlx5_0:1:ucx, 10.20.0.0/16").unwrap();
//! assert!(s.names("MLX5_0"));
//! assert_eq!(s.list(), "mlx5_0:1:ucx,10.20.0.0/16");
//! ```

#![forbid(unsafe_code)]

pub mod discovery;
pub mod downgrade;
pub mod error;
pub mod flavour;
pub mod format;
pub mod grammar;
pub mod host;
mod partition;
pub mod path;
pub mod plan;
pub mod reach;
pub mod registry;
pub mod resolve;
pub mod settings;
pub mod stack;
pub mod table;
pub mod translate;
pub mod versions;

pub use discovery::{AddressSource, Discovery, DiscoveryError};
pub use error::GrammarError;
pub use flavour::{Flavour, MpichDevice};
pub use grammar::{HumanName, Item, Mode, Network, Qualifier, Selection};
pub use host::{Gid, Host, Netdev, NetdevKind, VerbsDevice, VerbsKind, VerbsPort};
pub use plan::{
    apply_to_env, apply_to_env_checked, apply_with, plan, plan_for, Conflict, Error, Report,
};
pub use reach::{
    unreachable_pairs, HostNetworks, SelectedInterface, SelectedPort, UnreachablePair,
};
pub use resolve::{resolve, ItemMatch, Resolution, Unmatched, UnmatchedKind};
pub use settings::{same_meaning, Knob, Setting};
pub use translate::{translate, translate_for, Translation};
pub use versions::Libraries;
