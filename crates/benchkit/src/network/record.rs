//! The network selection of a run as data for the JSON documents: the items given, and
//! per host what they resolved to and the MPI library's settings made for them, merged
//! from every rank on rank 0 ([`SelectionRecord`]).

use serde::{Deserialize, Serialize};

/// What `--enable`/`--disable` did in a run, host by host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SelectionRecord {
    /// `enable` (only these networks) or `disable` (every network but these).
    pub mode: String,
    /// The items as given, normalised (`ib:ucx`, `eth0`, `10.20.0.0/16`).
    pub items: Vec<String>,
    /// Every host of the job that applied the selection, in the order of its lowest rank.
    pub hosts: Vec<HostSelection>,
    /// Items that selected nothing on a host, one line per host and item (the warnings
    /// printed).
    pub unmatched: Vec<String>,
    /// Pairs of hosts whose selected networks share nothing, one line per pair.
    pub unreachable: Vec<String>,
}

/// What the selection resolved to on one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HostSelection {
    /// The host's name as the selection saw it.
    pub host: String,
    /// Ranks on it that applied the selection.
    pub ranks: usize,
    /// The MPI library flavour the settings were made for (`openmpi`, `mpich-ofi`, …).
    pub flavour: String,
    /// The code path chosen, in words.
    pub path: String,
    /// The IP interfaces selected, with their addresses (`data0 10.20.0.1/24`).
    pub interfaces: Vec<String>,
    /// The verbs ports selected (`mlx5_0:1`).
    pub ports: Vec<String>,
    /// The library's settings, as environment variables, in the order made.
    pub settings: Vec<EnvSetting>,
}

/// One environment variable of the library's settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EnvSetting {
    /// The variable (`OMPI_MCA_btl_tcp_if_include`).
    pub variable: String,
    /// Its value.
    pub value: String,
}

impl HostSelection {
    /// Whether `other` (another rank's) is the same resolution, the rank count aside.
    fn same_as(&self, other: &HostSelection) -> bool {
        HostSelection {
            ranks: other.ranks,
            ..self.clone()
        } == *other
    }
}

/// Merges every rank's [`HostSelection`] (in rank order) into one entry per host and
/// resolution, counting its ranks: ranks of one host that resolved differently (other
/// options, another environment) keep entries of their own.
pub fn merge_hosts(ranks: impl IntoIterator<Item = HostSelection>) -> Vec<HostSelection> {
    let mut hosts: Vec<HostSelection> = Vec::new();
    for r in ranks {
        match hosts.iter_mut().find(|h| h.same_as(&r)) {
            Some(h) => h.ranks += r.ranks,
            None => hosts.push(r),
        }
    }
    hosts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(host: &str, value: &str) -> HostSelection {
        HostSelection {
            host: host.into(),
            ranks: 1,
            flavour: "openmpi".into(),
            path: "TCP sockets (ob1, tcp BTL)".into(),
            interfaces: vec![format!("data0 {value}")],
            ports: vec![],
            settings: vec![EnvSetting {
                variable: "OMPI_MCA_btl_tcp_if_include".into(),
                value: value.into(),
            }],
        }
    }

    #[test]
    fn ranks_of_a_host_become_one_entry_in_the_order_of_the_lowest_rank() {
        let merged = merge_hosts([
            on("h1", "10.0.0.1/24"),
            on("h2", "10.0.0.2/24"),
            on("h1", "10.0.0.1/24"),
            on("h2", "10.0.0.2/24"),
            on("h1", "10.0.0.1/24"),
        ]);
        assert_eq!(merged.len(), 2);
        assert_eq!((merged[0].host.as_str(), merged[0].ranks), ("h1", 3));
        assert_eq!((merged[1].host.as_str(), merged[1].ranks), ("h2", 2));
    }

    #[test]
    fn a_rank_that_resolved_otherwise_keeps_its_own_entry() {
        let merged = merge_hosts([on("h1", "10.0.0.1/24"), on("h1", "10.9.0.1/24")]);
        assert_eq!(merged.len(), 2, "{merged:?}");
        assert!(merged.iter().all(|h| h.ranks == 1));
    }

    #[test]
    fn it_reads_back_from_its_json() {
        let record = SelectionRecord {
            mode: "enable".into(),
            items: vec!["data0".into()],
            hosts: merge_hosts([on("h1", "10.0.0.1/24")]),
            unmatched: vec![],
            unreachable: vec![],
        };
        let text = serde_json::to_string(&record).unwrap();
        assert_eq!(
            serde_json::from_str::<SelectionRecord>(&text).unwrap(),
            record
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["hosts"][0]["settings"][0]["variable"],
            "OMPI_MCA_btl_tcp_if_include"
        );
    }
}
