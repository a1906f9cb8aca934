//! What a result is, in a few words: for the lines under a plot's title, the summary's
//! headings and the comparison's notes. What could make its figures mislead — a run
//! within one node, a run cut short, a b_eff_io run that is NOT VALID — is said apart, as
//! a caution, so that it is drawn where nobody misses it.

use ::beffio::report::json::Document as BeffioDoc;
use ::sqmr::report::json::Document as SqmrDoc;
use benchkit::provenance::short_library;

/// Where an sqmr run's ranks were, and so what its rates measure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqmrKind {
    /// Core ranks on one node, every neighbour elsewhere: the network.
    AcrossNodes {
        /// The node under test.
        core_node: String,
        /// How many other nodes held the neighbours.
        other_nodes: usize,
    },
    /// Every rank on one node: shared memory, not the network.
    WithinOneNode {
        /// The node.
        node: String,
    },
    /// Some neighbours on the core node or some core ranks elsewhere: a mix of both.
    Mixed {
        /// The node under test.
        core_node: String,
    },
}

impl SqmrKind {
    /// The kind of `doc`'s run, from its placement and hosts.
    pub fn of(doc: &SqmrDoc) -> SqmrKind {
        let p = &doc.placement;
        let core_node = p.core_node.clone();
        let other_nodes = hosts(doc).iter().filter(|h| **h != core_node).count();
        if p.cores_elsewhere.is_empty() && p.neighbours_on_core_node.is_empty() {
            SqmrKind::AcrossNodes {
                core_node,
                other_nodes,
            }
        } else if other_nodes == 0 {
            SqmrKind::WithinOneNode { node: core_node }
        } else {
            SqmrKind::Mixed { core_node }
        }
    }

    /// A heading: "message rate of node n1 against 4 other nodes".
    pub fn heading(&self) -> String {
        match self {
            SqmrKind::AcrossNodes {
                core_node,
                other_nodes,
            } => format!(
                "message rate of node {core_node} against {other_nodes} other node{}",
                plural(*other_nodes)
            ),
            SqmrKind::WithinOneNode { node } => {
                format!("message rate within one node ({node}: shared memory, not the network)")
            }
            SqmrKind::Mixed { core_node } => {
                format!("message rate of node {core_node}, some partners on the same node (mixed)")
            }
        }
    }

    /// The caution to draw, if the rates are not the network's alone.
    pub fn caution(&self) -> Option<String> {
        match self {
            SqmrKind::AcrossNodes { .. } => None,
            SqmrKind::WithinOneNode { node } => Some(format!(
                "every rank on {node}: the rates are of shared memory, not of the network"
            )),
            SqmrKind::Mixed { core_node } => Some(format!(
                "neighbour ranks on the core node {core_node} (or core ranks elsewhere): the \
                 rates mix shared memory and the network"
            )),
        }
    }
}

/// The distinct hosts of an sqmr run's ranks.
fn hosts(doc: &SqmrDoc) -> std::collections::BTreeSet<&str> {
    doc.environment.hosts.iter().map(String::as_str).collect()
}

/// Message sizes in words: "0 B, 4096 B".
pub fn sizes_text(sizes: &[u64]) -> String {
    sizes
        .iter()
        .map(|size| format!("{size} B"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A document's date as minutes, UTC ("2026-12-05 08:40 UTC"); the text as it is when it
/// does not read as a date.
pub fn when(date: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(date) {
        Ok(t) => t
            .with_timezone(&chrono::Utc)
            .format("%Y-%m-%d %H:%M UTC")
            .to_string(),
        Err(_) => date.to_string(),
    }
}

/// One line on an sqmr result: its node(s), ranks, MPI and date.
pub fn sqmr_line(doc: &SqmrDoc) -> String {
    let ranks = doc.environment.ranks;
    let hosts = hosts(doc);
    format!(
        "core node {}, {ranks} rank{} on {} host{}, {}, {}",
        doc.placement.core_node,
        plural(ranks),
        hosts.len(),
        plural(hosts.len()),
        short_library(&doc.environment.mpi_library),
        when(&doc.date)
    )
}

/// The cautions of an sqmr result: where its ranks were, a run cut short, sizes whose
/// loops were not independent.
pub fn sqmr_cautions(doc: &SqmrDoc) -> Vec<String> {
    let mut out: Vec<String> = SqmrKind::of(doc).caution().into_iter().collect();
    if !doc.complete {
        out.push(format!(
            "INCOMPLETE: the run stopped after {} size{}{}",
            doc.sizes.len(),
            plural(doc.sizes.len()),
            doc.stopped
                .as_deref()
                .map(|why| format!(" ({why})"))
                .unwrap_or_default()
        ));
    }
    let dependent = doc.dependent_sizes();
    if !dependent.is_empty() {
        out.push(format!(
            "loops not independent at {}: their intervals are too narrow",
            sizes_text(&dependent)
        ));
    }
    out
}

/// One line on a b_eff_io result: processes, path, MPI and date.
pub fn beffio_line(doc: &BeffioDoc) -> String {
    let mpi = doc
        .provenance
        .as_ref()
        .map(|p| format!(", {}", short_library(&p.mpi_runs_on)))
        .unwrap_or_default();
    format!(
        "{} process{} on {}{mpi}, {}",
        doc.processes,
        if doc.processes == 1 { "" } else { "es" },
        doc.path,
        when(&doc.date)
    )
}

/// The cautions of a b_eff_io result: NOT VALID with its reasons, a run cut short.
pub fn beffio_cautions(doc: &BeffioDoc) -> Vec<String> {
    let mut out = Vec::new();
    if !doc.valid {
        out.push(format!("NOT VALID: {}", doc.invalid_reasons.join("; ")));
    }
    if !doc.complete {
        out.push("INCOMPLETE: the run stopped before its schedule ended".to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_to_the_minute_in_utc() {
        assert_eq!(
            when("2026-12-01T20:19:45.565084439+00:00"),
            "2026-12-01 20:19 UTC"
        );
        assert_eq!(when("2026-12-01T21:19:45+01:00"), "2026-12-01 20:19 UTC");
        assert_eq!(when("yesterday"), "yesterday");
    }
}
