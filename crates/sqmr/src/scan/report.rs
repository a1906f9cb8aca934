//! The scan's document (`--json`) and its table.

use serde::{Deserialize, Serialize};

use super::verdict::{Figures, Metric};
use super::{Node, Outcome, PairRun, Settings};

/// The document's layout version.
pub const SCAN_SCHEMA_VERSION: u32 = 1;

/// What `sqmr --scan --json` writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScanDocument {
    /// Always `"sqmr"`.
    pub benchmark: String,
    /// Always `"scan"`: tells it from a document of the message-rate schedule.
    pub mode: String,
    /// The layout's version ([`SCAN_SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The xylem version that wrote it.
    pub version: String,
    /// Whether the scan ran to its verdict.
    pub complete: bool,
    /// Why it stopped before (a stall), when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// `--enable/--disable` as resolved on rank 0's host.
    pub network_selection: Option<String>,
    /// `--enable/--disable` as data: the items, and per host what they selected and the
    /// library's settings made for it (absent without a selection, and in documents of
    /// earlier releases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<benchkit::network::SelectionRecord>,
    /// What produced it.
    pub provenance: Option<benchkit::provenance::Provenance>,
    /// The scan.
    pub scan: Scan,
}

impl ScanDocument {
    /// Reads a scan document: its layout, its version (up to [`SCAN_SCHEMA_VERSION`]), and
    /// pairs that name nodes of the document with figures no run refuses (finite, not
    /// negative).
    pub fn from_json(text: &str) -> Result<ScanDocument, String> {
        let doc: ScanDocument = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if doc.mode != "scan" {
            return Err(format!("\"mode\" is \"{}\", not \"scan\"", doc.mode));
        }
        if doc.schema_version > SCAN_SCHEMA_VERSION {
            return Err(format!(
                "schema_version {} is newer than this program reads (up to {SCAN_SCHEMA_VERSION})",
                doc.schema_version
            ));
        }
        let hosts: std::collections::HashSet<&str> =
            doc.scan.nodes.iter().map(|n| n.host.as_str()).collect();
        let known = |h: &str| hosts.contains(h);
        for (k, p) in doc.scan.pairs.iter().enumerate() {
            if !known(&p.a) || !known(&p.b) {
                return Err(format!(
                    "scan.pairs[{k}] names a host that is not in scan.nodes"
                ));
            }
            for r in std::iter::once(&p.first).chain(&p.remeasured) {
                for (what, v) in [("msgs_per_s", r.msgs_per_s), ("mib_per_s", r.mib_per_s)] {
                    if !(v.is_finite() && v >= 0.0) {
                        return Err(format!(
                            "scan.pairs[{k}]: {what} is {v}, which no run gives"
                        ));
                    }
                }
            }
        }
        Ok(doc)
    }
}

/// The scan's settings, nodes, pairs and verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Scan {
    /// How it ran.
    pub settings: Settings,
    /// Every node, in the order of its lowest rank.
    pub nodes: Vec<ScanNode>,
    /// Every pair measured in the scan's rounds, in round order.
    pub pairs: Vec<ScanPair>,
    /// How many node pairs the nodes make: `pairs` measured of these (all of them up to
    /// the all-pairs limit, or with `--scan-rounds all`). 0 in documents from before it
    /// was written.
    #[serde(default)]
    pub pairs_possible: usize,
    /// The hosts flagged slow.
    pub flagged_nodes: Vec<String>,
    /// The links flagged slow, by their two hosts.
    pub flagged_links: Vec<[String; 2]>,
    /// Seconds from the first round to the verdict.
    pub wall_s: f64,
}

/// One node's figures and verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScanNode {
    /// Its processor name.
    pub host: String,
    /// Its ranks.
    pub ranks: usize,
    /// The partners it was measured with.
    pub partners: usize,
    /// Median over its partners of the message rate per rank pair (messages per second,
    /// sent and received).
    pub msgs_per_s: Option<f64>,
    /// That over the median of all nodes.
    pub rate_ratio: Option<f64>,
    /// Median over its partners of the bandwidth per rank pair (MiB per second, sent and
    /// received).
    pub mib_per_s: Option<f64>,
    /// That over the median of all nodes.
    pub bandwidth_ratio: Option<f64>,
    /// The metrics in which it is slow (after re-measurement).
    pub slow: Vec<String>,
    /// Whether it was suspected after the first rounds.
    pub suspected: bool,
    /// Whether it is flagged: suspected, and slow again when re-measured.
    pub flagged: bool,
    /// The verdict in words, as the table shows it.
    pub verdict: String,
}

/// One pair's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScanPair {
    /// The first node's host.
    pub a: String,
    /// The second node's host.
    pub b: String,
    /// The first measurement.
    pub first: PairRun,
    /// The re-measurement, when the pair was suspect.
    pub remeasured: Option<PairRun>,
    /// The better rate per rank pair over what its nodes reach with others.
    pub rate_ratio: Option<f64>,
    /// The same for the bandwidth.
    pub bandwidth_ratio: Option<f64>,
    /// Whether it is flagged as a slow link.
    pub flagged: bool,
}

/// `ok`, or for a figure below `threshold` that the spread test kept from being slow,
/// why: `ok (bandwidth 0.58 of the median, 1.4 scaled MADs below the others: within
/// their spread, 3 flag)`.
fn ok_words(f: &Figures, threshold: f64) -> String {
    let why: Vec<String> = Metric::BOTH
        .into_iter()
        .filter_map(|m| {
            let j = f.get(m);
            let ratio = j.ratio.filter(|r| *r < threshold)?;
            let below = j.mads_below?;
            Some(format!(
                "{} {ratio:.2} of the median, {below:.1} scaled MADs below the others: within \
                 their spread, {} flag",
                m.name(),
                super::verdict::MADS
            ))
        })
        .collect();
    if why.is_empty() {
        "ok".to_string()
    } else {
        format!("ok ({})", why.join("; "))
    }
}

fn slow_words(f: &Figures) -> Vec<String> {
    f.slow_in()
        .into_iter()
        .map(|m| m.name().to_string())
        .collect()
}

impl Scan {
    /// The scan's part of the document.
    pub fn new(settings: Settings, nodes: &[Node], outcome: &Outcome, wall_s: f64) -> Scan {
        let threshold = settings.threshold;
        let scan_nodes = nodes
            .iter()
            .enumerate()
            .map(|(n, node)| {
                let (partners, figures) = &outcome.verdict.nodes[n];
                let suspected = outcome.suspected_nodes.contains(&n);
                let flagged = outcome.flagged_nodes.contains(&n);
                let verdict = if *partners == 0 {
                    "not measured".to_string()
                } else if flagged {
                    format!("SLOW ({})", slow_words(figures).join(", "))
                } else if suspected {
                    "ok when re-measured".to_string()
                } else {
                    ok_words(figures, threshold)
                };
                ScanNode {
                    host: node.host.clone(),
                    ranks: node.ranks.len(),
                    partners: *partners,
                    msgs_per_s: figures.rate.value,
                    rate_ratio: figures.rate.ratio,
                    mib_per_s: figures.bandwidth.value,
                    bandwidth_ratio: figures.bandwidth.ratio,
                    slow: slow_words(figures),
                    suspected,
                    flagged,
                    verdict,
                }
            })
            .collect();
        let flagged_links: std::collections::HashSet<usize> =
            outcome.flagged_links.iter().copied().collect();
        let pairs = outcome
            .pairs
            .iter()
            .enumerate()
            .map(|(k, (first, again))| {
                let f = &outcome.verdict.pairs[k];
                ScanPair {
                    a: nodes[first.a].host.clone(),
                    b: nodes[first.b].host.clone(),
                    first: *first,
                    remeasured: *again,
                    rate_ratio: f.rate.ratio,
                    bandwidth_ratio: f.bandwidth.ratio,
                    flagged: flagged_links.contains(&k),
                }
            })
            .collect();
        Scan {
            settings,
            nodes: scan_nodes,
            pairs,
            pairs_possible: pairs_possible(nodes.len()),
            flagged_nodes: outcome
                .flagged_nodes
                .iter()
                .map(|&n| nodes[n].host.clone())
                .collect(),
            flagged_links: outcome
                .flagged_links
                .iter()
                .map(|&k| {
                    let r = &outcome.pairs[k].0;
                    [nodes[r.a].host.clone(), nodes[r.b].host.clone()]
                })
                .collect(),
            wall_s,
        }
    }

    /// The scan before its verdict: the nodes with their partners so far and the pairs
    /// measured (`runs`, with their re-measurements in `again`), nothing judged or flagged.
    pub fn partial(
        settings: Settings,
        nodes: &[Node],
        runs: &[PairRun],
        again: &[PairRun],
        wall_s: f64,
    ) -> Scan {
        let latest = super::remeasurements(again);
        let mut partners = vec![0usize; nodes.len()];
        for r in runs {
            partners[r.a] += 1;
            partners[r.b] += 1;
        }
        Scan {
            settings,
            nodes: nodes
                .iter()
                .zip(partners)
                .map(|(node, partners)| ScanNode {
                    host: node.host.clone(),
                    ranks: node.ranks.len(),
                    partners,
                    msgs_per_s: None,
                    rate_ratio: None,
                    mib_per_s: None,
                    bandwidth_ratio: None,
                    slow: Vec::new(),
                    suspected: false,
                    flagged: false,
                    verdict: "not judged: the scan did not finish".into(),
                })
                .collect(),
            pairs: runs
                .iter()
                .map(|r| ScanPair {
                    a: nodes[r.a].host.clone(),
                    b: nodes[r.b].host.clone(),
                    first: *r,
                    remeasured: latest.get(&r.pair()).copied(),
                    rate_ratio: None,
                    bandwidth_ratio: None,
                    flagged: false,
                })
                .collect(),
            pairs_possible: pairs_possible(nodes.len()),
            flagged_nodes: Vec::new(),
            flagged_links: Vec::new(),
            wall_s,
        }
    }

    /// `128 of 136 pairs`, or `all 6 pairs`: what the scan measured of what it could.
    fn coverage(&self) -> String {
        let measured = self.pairs.len();
        if self.pairs_possible > 0 && measured >= self.pairs_possible {
            format!("all {measured} pairs")
        } else {
            format!(
                "{measured} of {} pairs (--scan-rounds all measures every pair)",
                self.pairs_possible
            )
        }
    }

    /// The flagged links in words: `A - B`.
    pub fn flagged_link_names(&self) -> Vec<String> {
        self.flagged_links
            .iter()
            .map(|[a, b]| format!("{a} - {b}"))
            .collect()
    }

    /// Whether anything is flagged.
    pub fn flagged(&self) -> bool {
        !self.flagged_nodes.is_empty() || !self.flagged_links.is_empty()
    }
}

/// The first lines of the scan's output: what it does and by which rule.
pub fn header(settings: &Settings, nodes: &[Node]) -> String {
    let ranks: Vec<usize> = nodes.iter().map(|n| n.ranks.len()).collect();
    let per_node = match (ranks.iter().min(), ranks.iter().max()) {
        (Some(a), Some(b)) if a == b => {
            format!("{a} rank{} per node", if *a == 1 { "" } else { "s" })
        }
        (Some(a), Some(b)) => format!("{a} to {b} ranks per node"),
        _ => String::new(),
    };
    format!(
        "# sqmr --scan: {} nodes, {per_node}, {} round{} of disjoint node pairs ({})\n\
         # each pair: {} B messages for {:.2} s (rate, window {}), {} B for {:.2} s (bandwidth, window {})\n\
         # SLOW: below {:.2} of the median and, in logarithms, {} scaled MADs below the others; again when re-measured\n\
         # planned: {:.1} s of measurements ({} rounds of 2 x {:.2} s), then the suspects again; a measurement \
         lasts at most about 3 times its time, a link too slow for one window measured by a {} KiB probe\n",
        nodes.len(),
        settings.rounds,
        if settings.rounds == 1 { "" } else { "s" },
        if settings.all_pairs { "every pair" } else { "not every pair: --scan-rounds" },
        settings.small_bytes,
        settings.seconds,
        settings.window_small,
        settings.large_bytes,
        settings.seconds,
        settings.window_large,
        settings.threshold,
        settings.mads,
        planned_s(settings),
        settings.rounds,
        settings.seconds,
        crate::scan::PROBE_BYTES >> 10,
    )
}

/// The seconds of measurement the rounds of `settings` plan (re-measurements aside).
pub fn planned_s(settings: &Settings) -> f64 {
    settings.rounds as f64 * 2.0 * settings.seconds
}

fn figure(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"))
}

fn ratio(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"))
}

/// The table: a line per node, then a line per flagged link, then the verdict line.
pub fn table(scan: &Scan) -> String {
    let width = scan
        .nodes
        .iter()
        .map(|n| n.host.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!(
        "# {:<width$} {:>5} {:>8} {:>14} {:>6} {:>12} {:>6}  verdict\n",
        "node", "ranks", "partners", "msgs/s", "ratio", "MiB/s", "ratio"
    );
    out += "# (figures per rank pair: the median over the node's partners)\n";
    for n in &scan.nodes {
        out += &format!(
            "  {:<width$} {:>5} {:>8} {:>14} {:>6} {:>12} {:>6}  {}\n",
            n.host,
            n.ranks,
            n.partners,
            figure(n.msgs_per_s),
            ratio(n.rate_ratio),
            figure(n.mib_per_s),
            ratio(n.bandwidth_ratio),
            n.verdict
        );
    }
    for p in scan.pairs.iter().filter(|p| p.flagged) {
        let k = p.first.rank_pairs.max(1) as f64;
        let again = p.remeasured.unwrap_or(p.first);
        // The figure shown is the better of the two measurements; say which it is, and
        // when its bandwidth is the probe's.
        let better = if again.mib_per_s > p.first.mib_per_s {
            again
        } else {
            p.first
        };
        let how = match (p.remeasured.is_some(), better.probed > 0) {
            (true, true) => " (re-measured; bandwidth by the 64 KiB probe)",
            (true, false) => " (re-measured)",
            (false, true) => " (bandwidth by the 64 KiB probe)",
            (false, false) => "",
        };
        out += &format!(
            "  link {} - {}: {:.1} msgs/s ({} of expected), {:.1} MiB/s ({} of expected) per rank pair{how}  SLOW (link)\n",
            p.a,
            p.b,
            p.first.msgs_per_s.max(again.msgs_per_s) / k,
            ratio(p.rate_ratio),
            better.mib_per_s / k,
            ratio(p.bandwidth_ratio),
        );
    }
    // A link slow in message rate with a healthy bandwidth that the rule for the rate
    // alone did not flag: said, so that a reader of the ratios sees why.
    // (Re-measured with neither node suspected: it was measured again as a link.)
    let threshold = scan.settings.threshold;
    let suspected: std::collections::HashSet<&str> = scan
        .nodes
        .iter()
        .filter(|n| n.suspected)
        .map(|n| n.host.as_str())
        .collect();
    for p in scan.pairs.iter().filter(|p| {
        !p.flagged
            && p.remeasured.is_some()
            && p.rate_ratio.is_some_and(|r| r < threshold)
            && p.bandwidth_ratio.is_some_and(|r| r >= threshold)
            && !suspected.contains(p.a.as_str())
            && !suspected.contains(p.b.as_str())
    }) {
        out += &format!(
            "# link {} - {}: message rate {} of expected with its bandwidth {}: not flagged on the rate alone (that takes below {:.2} in both measurements)\n",
            p.a,
            p.b,
            ratio(p.rate_ratio),
            ratio(p.bandwidth_ratio),
            super::RATE_ALONE_SHARE * threshold,
        );
    }
    out += &verdict_line(scan);
    out
}

/// How many pairs `nodes` nodes make.
pub fn pairs_possible(nodes: usize) -> usize {
    nodes * nodes.saturating_sub(1) / 2
}

/// The last line: what was flagged, or that nothing was, and of how many pairs.
pub fn verdict_line(scan: &Scan) -> String {
    if !scan.flagged() {
        return format!(
            "# scan: no node or link flagged ({} nodes, {}, {:.1} s)\n",
            scan.nodes.len(),
            scan.coverage(),
            scan.wall_s
        );
    }
    let mut parts = Vec::new();
    if !scan.flagged_nodes.is_empty() {
        parts.push(format!(
            "slow node{}: {}",
            plural(scan.flagged_nodes.len()),
            scan.flagged_nodes.join(", ")
        ));
    }
    if !scan.flagged_links.is_empty() {
        let links = scan.flagged_link_names();
        parts.push(format!(
            "slow link{}: {}",
            plural(links.len()),
            links.join(", ")
        ));
    }
    format!(
        "# scan: {} ({} nodes, {}, {:.1} s)\n",
        parts.join("; "),
        scan.nodes.len(),
        scan.coverage(),
        scan.wall_s
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::{assemble, nodes_of, pairing::round_robin};

    /// The first `rounds` rounds of `nodes` nodes, every pair at 10^6 msgs/s and
    /// `1000 × bandwidth(a, b)` MiB/s.
    fn runs_of(
        nodes: usize,
        rounds: usize,
        bandwidth: impl Fn(usize, usize) -> f64,
    ) -> Vec<PairRun> {
        round_robin(nodes, rounds)
            .into_iter()
            .enumerate()
            .flat_map(|(round, pairs)| pairs.into_iter().map(move |(a, b)| (round, a, b)))
            .map(|(round, a, b)| PairRun {
                a,
                b,
                round,
                rank_pairs: 1,
                msgs_per_s: 1e6,
                mib_per_s: 1000.0 * bandwidth(a, b),
                probed: 0,
            })
            .collect()
    }

    fn scan_of(slow: impl Fn(usize, usize) -> f64) -> Scan {
        let names: Vec<String> = ["n1", "n2", "n3", "n4", "n5"].map(String::from).to_vec();
        let nodes = nodes_of(&names);
        let runs = runs_of(5, usize::MAX, slow);
        let settings = Settings::new(5, 10, 16, 0.5, 0.7);
        let outcome = assemble(5, &runs, &runs, 0.7);
        Scan::new(settings, &nodes, &outcome, 3.0)
    }

    #[test]
    fn the_table_marks_the_slow_node_and_the_last_line_names_it() {
        let scan = scan_of(|a, b| if a == 3 || b == 3 { 0.1 } else { 1.0 });
        assert_eq!(scan.flagged_nodes, vec!["n4".to_string()]);
        let text = table(&scan);
        let line = |host: &str| {
            text.lines()
                .find(|l| l.split_whitespace().next() == Some(host))
                .unwrap()
                .to_string()
        };
        assert!(line("n4").ends_with("SLOW (bandwidth)"), "{text}");
        assert!(line("n1").ends_with("  ok"), "{text}");
        assert!(
            text.ends_with("# scan: slow node: n4 (5 nodes, all 10 pairs, 3.0 s)\n"),
            "{text}"
        );
        let doc = serde_json::to_value(&scan).unwrap();
        assert_eq!(doc["nodes"][3]["flagged"], true);
        assert_eq!(doc["nodes"][3]["slow"][0], "bandwidth");
        assert_eq!(doc["pairs"].as_array().unwrap().len(), 10);
    }

    #[test]
    fn a_node_below_the_threshold_that_is_ok_says_why() {
        use crate::scan::verdict::Judged;
        let within = Figures {
            rate: Judged {
                value: Some(1e6),
                ratio: Some(0.95),
                slow: false,
                mads_below: None,
            },
            bandwidth: Judged {
                value: Some(580.0),
                ratio: Some(0.58),
                slow: false,
                mads_below: Some(1.4),
            },
        };
        assert_eq!(
            ok_words(&within, 0.7),
            "ok (bandwidth 0.58 of the median, 1.4 scaled MADs below the others: within \
             their spread, 3 flag)"
        );
        assert_eq!(ok_words(&Figures::default(), 0.7), "ok");
        // In a table: nodes spread over a factor of 6, no node flagged; the slowest at 0.69
        // of the median, 2.2 scaled MADs below the others.
        let f = |n: usize| [0.3f64, 0.45, 0.8, 1.3, 1.8][n];
        let scan = scan_of(|a, b| (f(a) * f(b)).sqrt());
        assert!(scan.flagged_nodes.is_empty(), "{}", table(&scan));
        assert!(
            scan.nodes[0]
                .verdict
                .starts_with("ok (bandwidth 0.69 of the median, 2.2 scaled")
                && scan.nodes[0]
                    .verdict
                    .contains("scaled MADs below the others"),
            "{}",
            table(&scan)
        );
    }

    #[test]
    fn a_scan_of_some_pairs_says_how_many_of_how_many() {
        // 17 nodes in 16 rounds (`--scan-rounds 16`): 8 pairs a round, 128 of the 136.
        let names: Vec<String> = (1..=17).map(|k| format!("n{k}")).collect();
        let nodes = nodes_of(&names);
        let settings = Settings::new(17, 10, 16, 0.5, 0.7);
        assert!(!settings.all_pairs);
        let runs = runs_of(17, settings.rounds, |_, _| 1.0);
        let outcome = assemble(17, &runs, &[], 0.7);
        let scan = Scan::new(settings, &nodes, &outcome, 9.0);
        assert_eq!(scan.pairs_possible, 136);
        assert!(
            table(&scan).ends_with(
                "# scan: no node or link flagged (17 nodes, 128 of 136 pairs \
                 (--scan-rounds all measures every pair), 9.0 s)\n"
            ),
            "{}",
            table(&scan)
        );
        let doc = serde_json::to_value(&scan).unwrap();
        assert_eq!(doc["pairs_possible"], 136);
        assert_eq!(doc["pairs"].as_array().unwrap().len(), 128);
        // --scan-rounds all: every pair.
        assert!(Settings::new(17, 10, usize::MAX, 0.5, 0.7).all_pairs);
    }

    #[test]
    fn a_slow_link_gets_its_line_and_a_healthy_scan_says_so() {
        let scan = scan_of(|a, b| if (a, b) == (0, 2) { 0.2 } else { 1.0 });
        assert!(scan.flagged_nodes.is_empty());
        assert_eq!(
            scan.flagged_links,
            vec![["n1".to_string(), "n3".to_string()]]
        );
        let text = table(&scan);
        assert!(
            text.contains("  link n1 - n3: ") && text.contains("SLOW (link)"),
            "{text}"
        );
        assert!(
            text.ends_with("# scan: slow link: n1 - n3 (5 nodes, all 10 pairs, 3.0 s)\n"),
            "{text}"
        );
        let scan = scan_of(|_, _| 1.0);
        assert!(!scan.flagged());
        assert!(table(&scan)
            .ends_with("# scan: no node or link flagged (5 nodes, all 10 pairs, 3.0 s)\n"));
    }

    #[test]
    fn a_link_slow_in_rate_alone_is_flagged_far_out_and_said_when_not() {
        // The link n1 - n3 at `rate` of everyone's message rate, its bandwidth as theirs,
        // measured twice the same.
        let scan_at = |rate: f64| {
            let names: Vec<String> = ["n1", "n2", "n3", "n4", "n5"].map(String::from).to_vec();
            let runs: Vec<PairRun> = runs_of(5, usize::MAX, |_, _| 1.0)
                .into_iter()
                .map(|r| match (r.a, r.b) {
                    (0, 2) => PairRun {
                        msgs_per_s: 1e6 * rate,
                        ..r
                    },
                    _ => r,
                })
                .collect();
            let outcome = assemble(5, &runs, &runs, 0.7);
            Scan::new(
                Settings::new(5, 10, 16, 0.5, 0.7),
                &nodes_of(&names),
                &outcome,
                3.0,
            )
        };
        let far = scan_at(0.2);
        assert_eq!(
            far.flagged_links,
            vec![["n1".to_string(), "n3".to_string()]]
        );
        let near = scan_at(0.5);
        assert!(!near.flagged(), "{near:?}");
        let text = table(&near);
        assert!(
            text.contains(
                "# link n1 - n3: message rate 0.50 of expected with its bandwidth 1.00: not \
                 flagged on the rate alone (that takes below 0.35 in both measurements)"
            ),
            "{text}"
        );
    }
}
