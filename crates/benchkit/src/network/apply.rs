//! `--enable/--disable`: network selection applied to this process before `MPI_Init`,
//! for every benchmark of the suite, and checked across hosts after it.
//!
//! Each rank resolves the selection against its own host and sets the MPI library's
//! settings in its own environment, so that every component of the library honours the
//! one switch. A failure is not reported here: MPI starts with the environment
//! untouched, and the ranks agree on the failure and leave together (no rank leaves
//! alone before `MPI_Init`, which would leave the others hanging).
//!
//! After `MPI_Init`, [`agree_selection`] (called by every benchmark) agrees on that
//! outcome, gathers every rank's warnings and selected networks on rank 0 and prints,
//! once: each distinct item that matches nothing on a host, and each pair of hosts whose
//! selected networks share nothing. With `--strict` either is an error that every rank
//! leaves with ([`EXIT_CODE`]).

use mpi::collective::SystemOperation;
use mpi::traits::*;

use serde::{Deserialize, Serialize};

use super::record::{merge_hosts, EnvSetting, HostSelection, SelectionRecord};
use crate::{Agreed, Failure};

/// The exit code of a selection that cannot be applied, or that `--strict` refuses: bad
/// input, as for the benchmarks' other options.
pub const EXIT_CODE: i32 = crate::Exit::Usage.code();

/// What the selection did on this host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// One line for the report: `--enable eth0,typo0 on host1: OMPI_MCA_pml=ob1 ...`.
    pub summary: String,
    /// One line per item that matches nothing usable on this host, or that can never be
    /// selected ([`netsel::format::selection_warnings`]).
    pub warnings: Vec<String>,
    /// What the translation loses on this host (a fast fabric over TCP, rails a knob
    /// cannot hold, a partition or VLAN that cannot reach RDMA): [`netsel::Translation`]'s
    /// warnings, each naming its host.
    pub losses: Vec<String>,
    /// What the registry check could not check, or found read under another name
    /// ([`netsel::Report::registry_notes`]; made by the first rank of each host): said,
    /// never refused.
    pub notes: Vec<String>,
    /// This host's selected networks ([`netsel::HostNetworks::encode`]).
    pub networks: String,
    /// What the selection resolved to here, for the documents.
    pub host: HostSelection,
    /// On rank 0 after [`agree_selection`]: every host's, for the documents.
    pub record: Option<SelectionRecord>,
    /// Enable or disable.
    pub mode: netsel::Mode,
    /// The items as given, normalised.
    pub items: Vec<String>,
}

impl Applied {
    /// The selection as given: `--enable eth0,typo0`.
    pub fn switch(&self) -> String {
        format!("{} {}", self.mode.switch(), self.items.join(","))
    }
}

/// The outcome of [`apply`] on one rank: `Ok(None)` without a selection, the complete
/// message to print on failure.
pub type Outcome = Result<Option<Applied>, String>;

/// Applies the selection given by the `--enable` and `--disable` lists, if any, to this
/// process's environment. Call before `MPI_Init`, while the process has one thread.
/// The error is the complete message to print.
pub fn apply(enable: Option<&str>, disable: Option<&str>) -> Outcome {
    if enable.is_none() && disable.is_none() {
        return Ok(None);
    }
    let selection =
        netsel::Selection::from_switches(enable, disable).map_err(|e| format!("ERROR {e}"))?;
    let version = crate::library_version();
    let flavour = netsel::Flavour::detect_with_env(&version, |k| std::env::var(k).ok())
        .ok_or_else(|| {
            format!(
                "ERROR {}: cannot tell which MPI library this is from its version string \
                 ({}), so there is no translation for it",
                switch(&selection),
                crate::library_summary()
            )
        })?;
    // The first rank of each host checks every setting against the registries of the
    // libraries this process loads (netsel::stack); its findings are losses like the
    // translation's, said once per host and refused under --strict.
    let report = if first_rank_on_host() {
        netsel::apply_to_env_checked(&selection, flavour)
    } else {
        netsel::apply_to_env(&selection, flavour)
    }
    .map_err(|e| format!("ERROR {e}"))?;
    let networks = netsel::HostNetworks::from_report(&report);
    let host = HostSelection {
        host: report.host.hostname.clone(),
        ranks: 1,
        flavour: report.translation.flavour.to_string(),
        path: report.translation.path.clone(),
        interfaces: networks
            .interfaces
            .iter()
            .map(|i| {
                let mut words = vec![i.name.clone()];
                words.extend(i.networks.iter().map(ToString::to_string));
                words.join(" ")
            })
            .collect(),
        ports: networks.ports.iter().map(|p| p.id.clone()).collect(),
        settings: report
            .translation
            .settings
            .iter()
            .map(|s| {
                let (variable, value) = s.env_pair();
                EnvSetting { variable, value }
            })
            .collect(),
    };
    let settings: Vec<String> = host
        .settings
        .iter()
        .map(|s| format!("{}={}", s.variable, s.value))
        .collect();
    Ok(Some(Applied {
        summary: format!(
            "{} on {}: {}",
            switch(&selection),
            report.host.hostname,
            settings.join(" ")
        ),
        warnings: netsel::format::selection_warnings(&report.resolution),
        losses: report.translation.warnings.clone(),
        notes: report.registry_notes(),
        networks: networks.encode(),
        host,
        record: None,
        mode: selection.mode,
        items: selection.items.iter().map(ToString::to_string).collect(),
    }))
}

/// Whether this process is the first its launcher started on this host (local rank 0 of
/// Open MPI, hydra, Slurm or PMIx), or one whose launcher does not say.
fn first_rank_on_host() -> bool {
    [
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "MPI_LOCALRANKID",
        "SLURM_LOCALID",
        "PMIX_LOCAL_RANK",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok())
    .is_none_or(|r| r.trim() == "0")
}

fn switch(selection: &netsel::Selection) -> String {
    format!("{} {}", selection.mode.switch(), selection.list())
}

/// The start of every benchmark's run, after `MPI_Init` (a collective call: every rank of
/// `comm` must make it).
///
/// 1. Agrees on `outcome`: if the selection failed on any rank, the first failing rank
///    prints its message and every rank gets [`EXIT_CODE`].
/// 2. When a selection was given: gathers every rank's warnings and selected networks on
///    rank 0, which prints on stderr, once, each distinct unmatched item of each host and
///    one `WARNING network selection: ...` line per pair of hosts whose selected networks
///    share nothing ([`HostCheck`]).
/// 3. With `strict`, any such line is an error: rank 0 says so in one message and every
///    rank gets [`EXIT_CODE`]. Without it the run goes on.
///
/// Every line printed starts with `prefix` (`""`, or `"b_eff_io: "`). Returns this rank's
/// [`Applied`] for the report.
pub fn agree_selection<C: Communicator>(
    comm: &C,
    outcome: Outcome,
    strict: bool,
    prefix: &str,
) -> Result<Option<Applied>, Agreed> {
    let local = outcome.map_err(|m| Failure::new(EXIT_CODE, format!("{prefix}{m}")));
    let mut applied = crate::agree(comm, local)?;
    // Every rank takes part in the gather, or none: whether any rank selected (and asked
    // for --strict) is agreed first, so that ranks given other options cannot hang.
    let mine = [
        i32::from(applied.is_some()),
        i32::from(applied.is_some() && strict),
    ];
    let mut any = [0i32; 2];
    comm.all_reduce_into(&mine[..], &mut any[..], SystemOperation::max());
    if any[0] == 0 {
        return Ok(applied);
    }
    let strict = any[1] != 0;
    let payload = applied.as_ref().map(payload).unwrap_or_default();
    let verdict = match crate::gather_strings(comm, 0, &payload) {
        Some(payloads) => {
            let check = HostCheck::from_payloads(&payloads);
            for line in check.lines() {
                outfile::eprintln!("{prefix}{line}");
            }
            if let Some(a) = applied.as_mut() {
                a.record = Some(check.record(a));
            }
            let switch = applied
                .as_ref()
                .map_or_else(|| "the selection".to_string(), Applied::switch);
            match check.strict_refusal(&switch) {
                Some(message) if strict => {
                    Err(Failure::new(EXIT_CODE, format!("{prefix}{message}")))
                }
                _ => Ok(()),
            }
        }
        None => Ok(()),
    };
    if strict {
        crate::agree(comm, verdict)?;
    }
    Ok(applied)
}

/// What one rank sends rank 0 (JSON): its host's encoded networks, its warnings and its
/// resolution.
pub fn payload(applied: &Applied) -> String {
    let p = Payload {
        networks: applied.networks.clone(),
        warnings: applied.warnings.clone(),
        losses: applied.losses.clone(),
        notes: applied.notes.clone(),
        host: applied.host.clone(),
    };
    serde_json::to_string(&p).unwrap_or_default()
}

/// The content of a [`payload`].
#[derive(Debug, Serialize, Deserialize)]
struct Payload {
    networks: String,
    warnings: Vec<String>,
    #[serde(default)]
    losses: Vec<String>,
    #[serde(default)]
    notes: Vec<String>,
    host: HostSelection,
}

/// Adds the lines of `new` not yet in `lines`, each on one line: a host's line comes once
/// however many of its ranks sent it.
fn add_distinct(lines: &mut Vec<String>, new: Vec<String>) {
    for w in new {
        let w = w.replace('\n', " ");
        if !lines.contains(&w) {
            lines.push(w);
        }
    }
}

/// The cross-host findings of rank 0, from every rank's [`payload`] in rank order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostCheck {
    /// The distinct unmatched-item warnings of all hosts, in rank order (each names its
    /// host, so one line per host and item however many ranks share the host).
    pub unmatched: Vec<String>,
    /// The distinct losses of all hosts' translations ([`Applied::losses`]), in rank order.
    pub losses: Vec<String>,
    /// The distinct registry notes of all hosts ([`Applied::notes`]), in rank order.
    pub notes: Vec<String>,
    /// The warnings of [`netsel::unreachable_pairs`], one per pair of hosts.
    pub unreachable: Vec<String>,
    /// Ranks whose networks could not be read (`rank N: why`); they are left out of the
    /// pair check.
    pub unreadable: Vec<String>,
    /// Every readable rank's resolution, merged by host ([`merge_hosts`]).
    pub hosts: Vec<HostSelection>,
}

/// The start of every warning [`HostCheck::lines`] prints.
pub const WARNING: &str = "WARNING network selection: ";

/// The start of every note [`HostCheck::lines`] prints.
pub const NOTE: &str = "note network selection: ";

impl HostCheck {
    /// Reads the payloads (an empty one, from a rank without a selection, is skipped),
    /// deduplicates the warnings and finds the unreachable pairs.
    pub fn from_payloads(payloads: &[String]) -> HostCheck {
        let mut check = HostCheck::default();
        let mut hosts = Vec::new();
        let mut resolved = Vec::new();
        for (rank, text) in payloads.iter().enumerate() {
            if text.is_empty() {
                continue;
            }
            let p: Payload = match serde_json::from_str(text) {
                Ok(p) => p,
                Err(e) => {
                    check.unreadable.push(format!("rank {rank}: {e}"));
                    continue;
                }
            };
            match netsel::HostNetworks::decode(&p.networks) {
                Ok(h) => hosts.push(h),
                Err(e) => check.unreadable.push(format!("rank {rank}: {e}")),
            }
            add_distinct(&mut check.unmatched, p.warnings);
            add_distinct(&mut check.losses, p.losses);
            add_distinct(&mut check.notes, p.notes);
            resolved.push(p.host);
        }
        check.hosts = merge_hosts(resolved);
        check.unreachable = netsel::unreachable_pairs(&hosts)
            .into_iter()
            .map(|p| p.warning)
            .collect();
        check
    }

    /// What the documents record: `applied`'s items with every host's resolution and
    /// the findings.
    pub fn record(&self, applied: &Applied) -> SelectionRecord {
        SelectionRecord {
            mode: applied.mode.switch().trim_start_matches('-').to_string(),
            items: applied.items.clone(),
            hosts: self.hosts.clone(),
            unmatched: self.unmatched.clone(),
            unreachable: self.unreachable.clone(),
        }
    }

    /// The lines to print on stderr: the unmatched items, the losses, the unreadable
    /// ranks, the unreachable pairs, each starting with [`WARNING`]; then the registry
    /// notes, each starting with [`NOTE`].
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .unmatched
            .iter()
            .chain(&self.losses)
            .map(|w| format!("{WARNING}{w}"))
            .collect();
        out.extend(
            self.unreadable
                .iter()
                .map(|u| format!("{WARNING}{u}; that host is left out of the cross-host check")),
        );
        out.extend(self.unreachable.iter().map(|w| {
            if w.starts_with(WARNING) {
                w.clone()
            } else {
                format!("{WARNING}{w}")
            }
        }));
        out.extend(self.notes.iter().map(|n| format!("{NOTE}{n}")));
        out
    }

    /// The one message with which `--strict` refuses `switch` (`--enable eth0,typo0`),
    /// or `None` when no item went unmatched, no host lost anything and every pair of
    /// hosts shares a network.
    /// Unreadable ranks are not the user's doing and do not count.
    pub fn strict_refusal(&self, switch: &str) -> Option<String> {
        let mut findings = Vec::new();
        match self.unmatched.len() {
            0 => {}
            1 => findings.push("1 item selects nothing on a host".to_string()),
            n => findings.push(format!(
                "{n} items select nothing on a host (counted once per host)"
            )),
        }
        match self.losses.len() {
            0 => {}
            1 => findings.push("1 warning names what the selection loses on a host".to_string()),
            n => findings.push(format!(
                "{n} warnings name what the selection loses on a host (counted once per host)"
            )),
        }
        match self.unreachable.len() {
            0 => {}
            1 => findings.push("1 pair of hosts shares no selected network".to_string()),
            n => findings.push(format!("{n} pairs of hosts share no selected network")),
        }
        if findings.is_empty() {
            return None;
        }
        Some(format!(
            "ERROR network selection: --strict refuses {switch}: {}; see the warnings \
             above, and fix the list or drop --strict",
            findings.join(", and ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(networks: &str, warnings: &[&str]) -> Applied {
        let host = networks.split(' ').nth(1).unwrap_or("?").to_string();
        Applied {
            summary: String::new(),
            warnings: warnings.iter().map(|w| w.to_string()).collect(),
            losses: Vec::new(),
            notes: Vec::new(),
            networks: networks.into(),
            host: HostSelection {
                host,
                ranks: 1,
                flavour: "openmpi".into(),
                path: "TCP".into(),
                interfaces: vec![],
                ports: vec![],
                settings: vec![EnvSetting {
                    variable: "OMPI_MCA_btl_tcp_if_include".into(),
                    value: "data0".into(),
                }],
            },
            record: None,
            mode: netsel::Mode::Enable,
            items: vec!["data0".into(), "typo0".into()],
        }
    }

    const H1: &str = "netsel1 h1 ip:data0=10.20.0.1/24";
    const H1_TYPO: &str = "--enable: typo0 matches nothing on host h1 (it has: data0, lo)";
    const H2_TYPO: &str = "--enable: typo0 matches nothing on host h2 (it has: data0, lo)";

    #[test]
    fn a_payload_carries_the_networks_the_warnings_and_the_resolution() {
        let a = applied(H1, &[H1_TYPO, "two\nlines"]);
        let p = payload(&a);
        let check = HostCheck::from_payloads(&[p]);
        assert_eq!(check.unmatched, vec![H1_TYPO, "two lines"]);
        assert!(check.unreachable.is_empty() && check.unreadable.is_empty());
        assert_eq!(check.hosts, vec![a.host.clone()]);
        let record = check.record(&a);
        assert_eq!(record.mode, "enable");
        assert_eq!(record.items, ["data0", "typo0"]);
        assert_eq!(record.hosts[0].settings[0].value, "data0");
        assert_eq!(record.unmatched, vec![H1_TYPO, "two lines"]);
    }

    #[test]
    fn the_record_has_one_entry_per_host_with_its_rank_count() {
        let h2 = "netsel1 h2 ip:data0=10.20.0.2/24";
        let payloads: Vec<String> = [applied(H1, &[]), applied(H1, &[]), applied(h2, &[])]
            .iter()
            .map(payload)
            .collect();
        let check = HostCheck::from_payloads(&payloads);
        let hosts: Vec<(&str, usize)> = check
            .hosts
            .iter()
            .map(|h| (h.host.as_str(), h.ranks))
            .collect();
        assert_eq!(hosts, [("h1", 2), ("h2", 1)]);
    }

    #[test]
    fn a_payload_that_is_not_one_is_an_unreadable_rank() {
        let check = HostCheck::from_payloads(&["netsel1 h1 ip:data0=10.20.0.1/24".into()]);
        assert_eq!(check.unreadable.len(), 1, "{check:?}");
        assert!(check.unreadable[0].starts_with("rank 0: "), "{check:?}");
    }

    #[test]
    fn warnings_are_printed_once_per_host_and_item_in_rank_order() {
        let h2 = "netsel1 h2 ip:data0=10.20.0.2/24";
        let payloads: Vec<String> = [
            applied(H1, &[H1_TYPO]),
            applied(H1, &[H1_TYPO]),
            applied(h2, &[H2_TYPO]),
            applied(h2, &[H2_TYPO]),
        ]
        .iter()
        .map(payload)
        .collect();
        let check = HostCheck::from_payloads(&payloads);
        assert_eq!(check.unmatched, vec![H1_TYPO, H2_TYPO]);
        assert!(check.unreachable.is_empty(), "{check:?}");
        assert_eq!(
            check.lines(),
            vec![format!("{WARNING}{H1_TYPO}"), format!("{WARNING}{H2_TYPO}")]
        );
        let refusal = check.strict_refusal("--enable data0,typo0").unwrap();
        assert_eq!(
            refusal,
            "ERROR network selection: --strict refuses --enable data0,typo0: 2 items select \
             nothing on a host (counted once per host); see the warnings above, and fix the \
             list or drop --strict"
        );
    }

    #[test]
    fn losses_are_printed_once_per_host_and_refused_under_strict() {
        const LOSS: &str = "host h1: hfi1_0:1 (omnipath) is driven over TCP on ib0: …";
        let mut a = applied(H1, &[]);
        a.losses = vec![LOSS.to_string()];
        let payloads: Vec<String> = [&a, &a].iter().map(|a| payload(a)).collect();
        let check = HostCheck::from_payloads(&payloads);
        assert_eq!(check.losses, vec![LOSS]);
        assert_eq!(check.lines(), vec![format!("{WARNING}{LOSS}")]);
        let refusal = check.strict_refusal("--disable eth0").unwrap();
        assert!(
            refusal.contains("--strict refuses --disable eth0: 1 warning names what the selection loses on a host"),
            "{refusal}"
        );
        assert_eq!(
            HostCheck::from_payloads(&[payload(&applied(H1, &[]))]).strict_refusal("x"),
            None
        );
    }

    #[test]
    fn hosts_without_a_shared_subnet_are_one_warning_per_pair() {
        let payloads: Vec<String> = [
            H1,
            H1,
            "netsel1 h2 ip:data0=10.30.0.2/24",
            "netsel1 h3 ip:data0=10.20.0.3/24",
        ]
        .iter()
        .map(|n| payload(&applied(n, &[])))
        .collect();
        let check = HostCheck::from_payloads(&payloads);
        assert!(check.unmatched.is_empty());
        assert_eq!(check.unreachable.len(), 2, "{check:?}");
        let lines = check.lines();
        assert!(lines[0].starts_with(WARNING), "{lines:?}");
        assert!(
            lines[0].contains("h1 (data0 10.20.0.1/24) and h2 (data0 10.30.0.2/24)"),
            "{lines:?}"
        );
        assert!(
            lines[1].contains("h2 (data0 10.30.0.2/24) and h3"),
            "{lines:?}"
        );
        let refusal = check.strict_refusal("--enable data0").unwrap();
        assert!(
            refusal.contains("--strict refuses --enable data0: 2 pairs of hosts share no"),
            "{refusal}"
        );
    }

    #[test]
    fn both_findings_are_named_in_the_one_refusal() {
        let payloads = vec![
            payload(&applied(H1, &[H1_TYPO])),
            payload(&applied("netsel1 h2 ip:data1=10.30.0.2/24", &[])),
        ];
        let refusal = HostCheck::from_payloads(&payloads)
            .strict_refusal("--enable data0,data1,typo0")
            .unwrap();
        assert!(
            refusal.contains(
                "1 item selects nothing on a host, and 1 pair of hosts shares no selected \
                 network"
            ),
            "{refusal}"
        );
    }

    #[test]
    fn a_clean_selection_has_nothing_to_say() {
        let payloads = vec![
            payload(&applied(H1, &[])),
            payload(&applied("netsel1 h2 ip:data0=10.20.0.2/24", &[])),
            String::new(),
        ];
        let check = HostCheck::from_payloads(&payloads);
        assert!(check.unmatched.is_empty() && check.unreachable.is_empty());
        assert!(check.unreadable.is_empty());
        assert_eq!(check.hosts.len(), 2);
        assert!(check.lines().is_empty());
        assert_eq!(check.strict_refusal("--enable data0"), None);
    }

    #[test]
    fn an_unreadable_rank_is_named_and_left_out_without_failing_strict() {
        let payloads = vec![
            payload(&applied(H1, &[])),
            payload(&applied("netsel9 h2 whatever", &[])),
        ];
        let check = HostCheck::from_payloads(&payloads);
        assert_eq!(check.unreadable.len(), 1, "{check:?}");
        assert!(check.unreadable[0].starts_with("rank 1: "), "{check:?}");
        assert!(check.unreachable.is_empty());
        let lines = check.lines();
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].ends_with("that host is left out of the cross-host check"),
            "{lines:?}"
        );
        assert_eq!(check.strict_refusal("--enable data0"), None);
    }
}
