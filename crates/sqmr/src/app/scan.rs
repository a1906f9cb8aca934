//! One `sqmr --scan`, from parsed options to the verdict and its exit code.
//!
//! Rank 0 groups the ranks by host and tells every rank its node; every rank computes the
//! same rounds; after each round rank 0 adds the pairs' figures to the `--json` file (a
//! new version, `"complete": false`), so a scan cut short keeps what it measured. Then the
//! suspects are measured again, rank 0 judges, writes the last version and prints the
//! table; a flagged node or link is every rank's exit code 4.

use benchkit::keeper::{Keeper, Moment, Record};
use benchkit::{agree, Agreed, Exit, Failure};
use mpi::topology::{Communicator, SimpleCommunicator};

use super::{create_outputs, file_failure, stdout_failure, write_output};
use crate::exec::scan::{group_by_host, share_rounds, Named, Scanner};
use crate::options::Options;
use crate::report::output::OutputFile;
use crate::scan::pairing::round_robin;
use crate::scan::report::{header, table, Scan, ScanDocument, SCAN_SCHEMA_VERSION};
use crate::scan::{
    assemble, suspects, Node, PairRun, Settings, DEFAULT_ROUNDS, DEFAULT_SECONDS, DEFAULT_THRESHOLD,
};

/// The largest window `--scan` takes.
const MAX_WINDOW: i64 = 1 << 20;

/// Runs the scan on every rank of `world` (a collective call).
pub(super) fn run(
    world: &SimpleCommunicator,
    options: &Options,
    network: Option<benchkit::network::Applied>,
    watchdog: &benchkit::watchdog::Watchdog,
) -> Result<(), Agreed> {
    let started = chrono::Local::now();
    let (node_of, on_root) = group_by_host(world);
    let count = node_of.iter().map(|&n| n as usize + 1).max().unwrap_or(0);
    let nodes = on_root.as_ref().map(|(_, nodes)| nodes.as_slice());
    let settings = agree(world, settings(options, count, nodes))?;
    let results = ScanResults::begin(world, options, &settings, on_root, network, &started)?;
    if world.rank() == 0 {
        watchdog.on_stall(results.stall_hook(|| {}));
    }
    let mut scanner = Scanner::new(world, node_of, settings.clone(), watchdog.progress());
    if let Some(hosts) = results.with(|r| {
        r.nodes
            .as_ref()
            .map(|nodes| nodes.iter().map(|n| n.host.clone()).collect())
    }) {
        scanner.name_nodes(hosts);
    }
    let interrupt = benchkit::interrupt::Interrupt::install("sqmr");
    let started_at = mpi::time();
    let rounds = round_robin(count, settings.rounds);
    let mut first = Vec::new();
    for (r, pairs) in rounds.iter().enumerate() {
        if let Some(runs) = scanner.round(pairs, r) {
            first.extend(runs);
        }
        let written = ScanResults::measured(&results, &first, &[], mpi::time() - started_at);
        agree(world, written)?;
        interrupted(world, &interrupt, r + 1)?;
    }
    // The suspects, measured once more: a slow node's pairs in as few rounds as they fit,
    // each suspect link alone (see `Suspects::rounds`), in as many rounds as the scan had
    // and at least the default's: a suspect left out would keep its one figure, and
    // a scan of few nodes on crowded cores has more suspect links than rounds.
    let limit = settings.rounds.max(DEFAULT_ROUNDS);
    let again_rounds = share_rounds(
        world,
        (world.rank() == 0).then(|| suspects(count, &first, settings.threshold).rounds(limit)),
    );
    let mut again = Vec::new();
    for (k, pairs) in again_rounds.iter().enumerate() {
        if let Some(runs) = scanner.round(pairs, rounds.len() + k) {
            again.extend(runs);
        }
        let written = ScanResults::measured(&results, &first, &again, mpi::time() - started_at);
        agree(world, written)?;
        interrupted(world, &interrupt, rounds.len() + k + 1)?;
    }
    let flagged = ScanResults::finish(&results, &first, &again, mpi::time() - started_at);
    let flagged = agree(world, flagged)?;
    agree(
        world,
        match flagged {
            // Said in the table's last line already.
            true => Err(Failure::new(Exit::Flagged.code(), "")),
            false => Ok(()),
        },
    )
}

/// The checked settings: 3 or more hosts, a window of 1 to 2^20.
fn settings(options: &Options, count: usize, nodes: Option<&[Node]>) -> Result<Settings, Failure> {
    if !(1..=MAX_WINDOW).contains(&options.win_size) {
        return Err(Failure::new(
            Exit::Usage.code(),
            format!(
                "ERROR --win_size {} with --scan: give 1 to {MAX_WINDOW}",
                options.win_size
            ),
        ));
    }
    if count < 3 {
        let hosts = nodes.map_or_else(String::new, |nodes| {
            let listed: Vec<String> = nodes
                .iter()
                .map(|n| {
                    format!(
                        "{} ({} rank{})",
                        n.host,
                        n.ranks.len(),
                        if n.ranks.len() == 1 { "" } else { "s" }
                    )
                })
                .collect();
            format!(": {}", listed.join(", "))
        });
        return Err(Failure::new(
            Exit::Usage.code(),
            format!(
                "ERROR --scan compares nodes with each other and needs ranks on 3 or more hosts \
                 (4 or more to tell a slow link from a slow node); this job has {count} host{}{hosts}",
                if count == 1 { "" } else { "s" }
            ),
        ));
    }
    Ok(Settings::new(
        count,
        options.win_size as usize,
        options.scan_rounds.unwrap_or(DEFAULT_ROUNDS),
        options.scan_time.unwrap_or(DEFAULT_SECONDS),
        options.scan_threshold.unwrap_or(DEFAULT_THRESHOLD),
    ))
}

/// SIGINT or SIGTERM: every rank leaves after the same round, the file keeping the rounds.
fn interrupted(
    world: &SimpleCommunicator,
    interrupt: &benchkit::interrupt::Interrupt,
    rounds_done: usize,
) -> Result<(), Agreed> {
    let Some(signal) = interrupt.agree(world) else {
        return Ok(());
    };
    if world.rank() == 0 {
        outfile::eprintln!(
            "ERROR interrupted by {} (signal {signal}): the scan stopped after {rounds_done} \
             round{}; the --json file keeps the pairs measured so far, without a verdict",
            benchkit::interrupt::name(signal),
            if rounds_done == 1 { "" } else { "s" }
        );
    }
    Err(Agreed {
        code: benchkit::interrupt::exit_code(signal),
    })
}

/// Rank 0's document and `--json` file; nothing elsewhere.
struct ScanResults {
    nodes: Option<Vec<Node>>,
    settings: Settings,
    document: Option<ScanDocument>,
}

impl ScanResults {
    /// Reserves the file, writes its first version and prints the header (collective).
    fn begin(
        world: &SimpleCommunicator,
        options: &Options,
        settings: &Settings,
        on_root: Option<Named>,
        network: Option<benchkit::network::Applied>,
        started: &chrono::DateTime<chrono::Local>,
    ) -> Result<Keeper<ScanResults>, Agreed> {
        let files = match world.rank() {
            0 => create_outputs(options).map(|(json, _)| json),
            _ => Ok(None),
        };
        let json = agree(world, files)?;
        let document = on_root.as_ref().map(|(hosts, nodes)| ScanDocument {
            benchmark: "sqmr".into(),
            mode: "scan".into(),
            schema_version: SCAN_SCHEMA_VERSION,
            version: env!("CARGO_PKG_VERSION").into(),
            // Set by each version (benchkit::keeper::Moment).
            complete: false,
            stopped: None,
            network_selection: network.as_ref().map(|a| a.summary.clone()),
            network: network.and_then(|a| a.record),
            provenance: Some(benchkit::provenance::describe(
                "sqmr",
                env!("CARGO_PKG_VERSION"),
                hosts,
                started.to_rfc3339(),
            )),
            scan: Scan::partial(settings.clone(), nodes, &[], &[], 0.0),
        });
        let nodes = on_root.map(|(_, nodes)| nodes);
        let header = nodes.as_ref().map(|nodes| header(settings, nodes));
        let results = Keeper::new(
            ScanResults {
                nodes,
                settings: settings.clone(),
                document,
            },
            json,
        );
        let begun = results.version().map_err(file_failure).and_then(|()| {
            header.map_or(Ok(()), |text| {
                outfile::stdout::write(&text).map_err(stdout_failure)
            })
        });
        agree(world, begun)?;
        Ok(results)
    }

    /// The pairs so far, without a verdict: the file's next version.
    fn measured(
        keeper: &Keeper<ScanResults>,
        first: &[PairRun],
        again: &[PairRun],
        wall_s: f64,
    ) -> Result<(), Failure> {
        keeper.with(|r| {
            if let (Some(doc), Some(nodes)) = (&mut r.document, &r.nodes) {
                doc.scan = Scan::partial(r.settings.clone(), nodes, first, again, wall_s);
            }
        });
        keeper.version().map_err(file_failure)
    }

    /// The verdict: the last version of the file and the table. Returns whether anything
    /// is flagged (on rank 0; `false` elsewhere).
    fn finish(
        keeper: &Keeper<ScanResults>,
        first: &[PairRun],
        again: &[PairRun],
        wall_s: f64,
    ) -> Result<bool, Failure> {
        let judged = keeper.with(|r| {
            let (Some(doc), Some(nodes)) = (&mut r.document, &r.nodes) else {
                return None;
            };
            let outcome = assemble(nodes.len(), first, again, r.settings.threshold);
            doc.scan = Scan::new(r.settings.clone(), nodes, &outcome, wall_s);
            Some((doc.scan.flagged(), table(&doc.scan)))
        });
        keeper.complete().map_err(file_failure)?;
        let Some((flagged, text)) = judged else {
            return Ok(false);
        };
        outfile::stdout::write(&text).map_err(stdout_failure)?;
        Ok(flagged)
    }
}

impl Record for ScanResults {
    type Snapshot = ScanDocument;
    type Files = Option<OutputFile>;

    /// The document as of `moment` (rank 0).
    fn snapshot(&mut self, moment: Moment<'_>) -> Option<ScanDocument> {
        let doc = self.document.as_mut()?;
        doc.complete = moment.complete();
        doc.stopped = moment.stopped();
        if moment.is_last() {
            if let Some(p) = &mut doc.provenance {
                p.ended = Some(chrono::Local::now().to_rfc3339());
            }
        }
        Some(doc.clone())
    }

    /// The document in the `--json` file.
    fn write(
        json: &mut Option<OutputFile>,
        doc: ScanDocument,
        _: Moment<'_>,
    ) -> Result<(), String> {
        write_output(json, || {
            serde_json::to_string_pretty(&doc).expect("a scan document serializes") + "\n"
        })
        .map_err(|f| f.message)
    }

    fn release(json: &mut Option<OutputFile>) {
        drop(json.take());
    }
}
