//! One run of `sqmr`, from parsed options to the last row.
//!
//! Every check that can fail is agreed on by all ranks ([`benchkit::agree`]) before the next
//! collective step, so that all of them report through rank 0 (or the first failing rank)
//! and leave together with the same exit code.

use std::path::PathBuf;

use benchkit::keeper::{Keeper, Moment, Record};
use benchkit::{agree, Agreed, Failure};
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;

use crate::config::{Config, HostLimits};
use crate::exec::buffers::PAGE;
use crate::exec::run::{Checked, Runner};
use crate::options::{Options, USAGE};
use crate::placement::Placement;
use crate::rates::{messages, rates, Times};
use crate::report::csv;
use crate::report::json::{Document, Environment, SizeResult, Validation};
use crate::report::output::OutputFile;
use crate::report::text;
use crate::schedule;
use crate::topology::Topology;
use benchkit::Exit;

mod scan;

/// Runs the benchmark on every rank of `world` (a collective call).
pub fn run(
    world: &SimpleCommunicator,
    parsed: Result<Options, clap::Error>,
    network: benchkit::network::Outcome,
    watchdog: &benchkit::watchdog::Watchdog,
) -> Result<(), Agreed> {
    let Some(options) = benchkit::options_or_leave(world, parsed, stdout_failure)? else {
        return Ok(());
    };
    // The selection: agreed, checked across hosts (warnings, or errors with --strict).
    let network = benchkit::network::agree_selection(world, network, options.network.strict, "")?;
    if options.scan {
        return scan::run(world, &options, network, watchdog);
    }
    let config = checked_config(world, &options)?;
    let results = Results::begin(world, &options, &config, network)?;
    if world.rank() == 0 {
        // At a stall, the files' last version says why the run stopped.
        watchdog.on_stall(results.stall_hook(|| {}));
    }
    let checked = measure_sizes(world, &options, &config, &results, watchdog)?;
    let verdict = validation_verdict(world, &config, checked);
    let finished = Results::finish(&results, &config, verdict.summary);
    agree(world, finished)?;
    agree(world, verdict.local)
}

/// The run's configuration, checked against the world and this host (agreed), and what
/// each node's ranks are about to allocate against its memory: refused before
/// allocating.
fn checked_config(world: &SimpleCommunicator, options: &Options) -> Result<Config, Agreed> {
    let limits = HostLimits {
        available_bytes: crate::host::memory_available(),
        request_bytes: std::mem::size_of::<mpi::ffi::MPI_Request>() as u64,
        page_bytes: PAGE as u64,
    };
    let checked = Config::check(options, world.size() as usize, limits).map_err(|d| {
        Failure::new(
            Exit::Usage.code(),
            format!("{d}\nUsage: {USAGE}\nRun 'sqmr --help' for more.\n"),
        )
    });
    let config = agree(world, checked)?;
    // What each rank is about to allocate, summed over the ranks of each node, against
    // the node's MemAvailable and the job's memory cgroup.
    let need = u64::try_from(config.rank_bytes(world.rank() as usize, limits)).unwrap_or(u64::MAX);
    let fits = benchkit::memory::agree_fits(world, need).map_err(|m| {
        Failure::new(
            Exit::Usage.code(),
            format!("ERROR {m}; lower --win_size or --max_msgsize"),
        )
    });
    agree(world, fits)?;
    Ok(config)
}

/// Where the results go: on rank 0 the document and the `--json` and `--csv` files
/// (each rewritten whole as its next version), elsewhere nothing.
struct Results {
    document: Option<Document>,
    repeats: bool,
}

/// The `--json` and `--csv` files, each let go after a version it could not take.
struct ResultFiles {
    json: Option<OutputFile>,
    csv: Option<OutputFile>,
}

impl Results {
    /// Reserves the files, gathers the hosts, and writes the preamble and the first
    /// version of each file (no sizes yet, "complete": false), kept from then on by one
    /// keeper. Collective.
    fn begin(
        world: &SimpleCommunicator,
        options: &Options,
        config: &Config,
        network: Option<benchkit::network::Applied>,
    ) -> Result<Keeper<Results>, Agreed> {
        let files = match world.rank() {
            0 => create_outputs(options),
            _ => Ok((None, None)),
        };
        let (json, csv) = agree(world, files)?;
        let started = chrono::Local::now();
        let hosts = benchkit::gather_strings(world, 0, &benchkit::processor_name());
        let topology = Topology {
            num_cores: config.num_cores,
            num_nbors: config.num_nbors,
        };
        let document = hosts.map(|hosts| {
            let placement = Placement::check(&topology, &hosts);
            let environment = Environment {
                mpi_library: benchkit::library_version(),
                ranks: hosts.len(),
                core_hosts: hosts[..config.num_cores].to_vec(),
                hosts,
            };
            let mut doc =
                Document::new(config.clone(), started.to_rfc3339(), environment, placement);
            if let Some(applied) = network {
                doc.network_selection = Some(applied.summary);
                doc.network = applied.record;
            }
            doc.provenance = Some(benchkit::provenance::describe(
                "sqmr",
                env!("CARGO_PKG_VERSION"),
                &doc.environment.hosts,
                started.to_rfc3339(),
            ));
            doc
        });
        let preamble = document
            .as_ref()
            .map(|doc| preamble(config, doc, options.verbose, &started));
        let results = Keeper::new(
            Results {
                document,
                repeats: config.repeats(),
            },
            ResultFiles { json, csv },
        );
        let begun = results.version().map_err(file_failure).and_then(|()| {
            preamble.map_or(Ok(()), |text| {
                outfile::stdout::write(&text).map_err(stdout_failure)
            })
        });
        agree(world, begun)?;
        Ok(results)
    }

    /// Writes the document's next version to the `--json` and `--csv` files.
    /// Adds a measured size: the files first, which keep it even if the table cannot be
    /// printed, then its row — marked `*` when the size ran far slower than the one
    /// before ([`crate::anomalies`]), with a `WARNING` line on stderr; the size before is judged
    /// again now that its other neighbour is known.
    fn add(
        keeper: &Keeper<Results>,
        step: schedule::Step,
        size: SizeResult,
    ) -> Result<(), Failure> {
        let Some(row) = keeper.with(|r| r.push(step, size)) else {
            return Ok(());
        };
        keeper
            .version()
            .map_err(file_failure)
            .and_then(|()| outfile::stdout::line(&row).map_err(stdout_failure))
    }

    /// The size in the document, judged with its neighbours: its row of the table
    /// (`None` off rank 0).
    fn push(&mut self, step: schedule::Step, size: SizeResult) -> Option<String> {
        let doc = self.document.as_mut()?;
        let mut row = text::row(step.msgsize, step.iters, &size.rates);
        doc.sizes.push(size);
        for anomaly in crate::anomalies::judge(&doc.sizes) {
            if doc.warnings.iter().any(|w| w.msgsize == anomaly.msgsize) {
                continue;
            }
            if anomaly.msgsize == step.msgsize {
                row += " *";
            }
            outfile::eprintln!("WARNING {}", anomaly.message);
            doc.warnings.push(anomaly);
        }
        Some(row)
    }

    /// The last version: `--validate`'s summary, "complete": true, and the `#` lines
    /// after the rows.
    fn finish(
        keeper: &Keeper<Results>,
        config: &Config,
        validation: Option<Validation>,
    ) -> Result<(), Failure> {
        let postscript = keeper.with(|r| {
            let doc = r.document.as_mut()?;
            doc.validation = validation;
            for anomaly in crate::anomalies::judge(&doc.sizes) {
                if !doc.warnings.iter().any(|w| w.msgsize == anomaly.msgsize) {
                    outfile::eprintln!("WARNING {}", anomaly.message);
                    doc.warnings.push(anomaly);
                }
            }
            Some(postscript(doc, config))
        });
        keeper.complete().map_err(file_failure)?;
        postscript.map_or(Ok(()), |text| {
            outfile::stdout::write(&text).map_err(stdout_failure)
        })
    }
}

impl Record for Results {
    type Snapshot = (Document, bool);
    type Files = ResultFiles;

    /// The document as of `moment` (rank 0).
    fn snapshot(&mut self, moment: Moment<'_>) -> Option<(Document, bool)> {
        let doc = self.document.as_mut()?;
        doc.complete = moment.complete();
        doc.stopped = moment.stopped();
        if moment.is_last() {
            doc.mark_ended();
        }
        Some((doc.clone(), self.repeats))
    }

    /// The document in the `--json` and `--csv` files.
    fn write(
        files: &mut ResultFiles,
        (doc, repeats): (Document, bool),
        _: Moment<'_>,
    ) -> Result<(), String> {
        write_output(&mut files.json, || doc.to_json())
            .and_then(|()| {
                let run = benchkit::provenance::csv_fields(doc.provenance.as_ref());
                write_output(&mut files.csv, || csv::render(&doc.sizes, repeats, &run))
            })
            .map_err(|f| f.message)
    }

    fn release(files: &mut ResultFiles) {
        drop(files.json.take());
        drop(files.csv.take());
    }
}

/// A version of the output files that could not be written: the run stops (exit 1).
fn file_failure(message: String) -> Failure {
    Failure::new(Exit::Failure.code(), message)
}

/// Measures every size of the schedule, each result agreed written before the next;
/// SIGINT or SIGTERM stops every rank after the same size, the files keeping what was
/// done. Returns what `--validate` checked on this rank.
fn measure_sizes(
    world: &SimpleCommunicator,
    options: &Options,
    config: &Config,
    results: &Keeper<Results>,
    watchdog: &benchkit::watchdog::Watchdog,
) -> Result<Checked, Agreed> {
    let rank = world.rank();
    let interrupt = benchkit::interrupt::Interrupt::install("sqmr");
    let corrupt = options.corrupts_one_message() && rank as usize == config.num_cores;
    let mut runner = Runner::new(world, config, corrupt);
    runner.watch(watchdog.progress());
    let plan = config.plan();
    let steps = schedule::steps(config.min_msgsize, config.max_msgsize, config.num_iters);
    let loops = plan.precision.map_or(plan.repeat, |p| p.min_samples);
    runner.forecast(crate::forecast::timed_iterations(&steps, loops));
    for step in steps {
        let msgs = messages(
            config.win_size,
            config.num_nbors,
            config.num_cores,
            step.iters,
        );
        let average = |elapsed: &[f64]| {
            rates(msgs, step.msgsize, elapsed.len(), Times::of(elapsed))
                .average
                .msgs_per_s
        };
        let measured = runner.measure(step, &plan, average);
        let written = match measured.and_then(|m| SizeResult::from_samples(step, msgs, m)) {
            Some(size) => Results::add(results, step, size),
            None => Ok(()),
        };
        // The agreements wait for every rank: a rank stopped here would otherwise fall
        // between two sizes, its pause in neither.
        let agreeing = mpi::time();
        agree(world, written)?;
        let signalled = interrupt.agree(world);
        runner.between_sizes(mpi::time() - agreeing);
        if let Some(signal) = signalled {
            if rank == 0 {
                outfile::eprintln!(
                    "ERROR interrupted by {} (signal {signal}): stopped after message size {}; \
                     the --json and --csv files keep the sizes measured so far",
                    benchkit::interrupt::name(signal),
                    step.msgsize
                );
            }
            return Err(Agreed {
                code: benchkit::interrupt::exit_code(signal),
            });
        }
    }
    Ok(runner.checked)
}

/// Everything standard output carries before the first row: `--verbose`'s lines and the
/// reference's header, whose column line is the last before the rows, as in 1.1.0.
fn preamble(
    config: &Config,
    doc: &Document,
    verbose: bool,
    started: &chrono::DateTime<chrono::Local>,
) -> String {
    let env = &doc.environment;
    let mut out = String::new();
    if verbose {
        out += &text::verbose(config, &env.hosts);
    }
    let date = started.format("%m/%d/%y %H:%M:%S").to_string();
    out += &text::header(config, &date, &env.hosts[0]);
    out
}

/// Our own `#` lines, printed after the last row so that the reference's header and rows
/// stay together (a parser that takes the last `#` line before the rows as the column
/// header keeps working): the version and library, the network selection, placement
/// warnings, what `--validate` found, and with repeated sizes their statistics.
fn postscript(doc: &Document, config: &Config) -> String {
    let validate = config.validate;
    let mut out = format!(
        "# xylem sqmr {}, {}\n",
        env!("CARGO_PKG_VERSION"),
        benchkit::library_summary()
    );
    if let Some(network) = &doc.network_selection {
        // Interface and host names as the system gives them: control characters shown.
        out += &format!(
            "# network selection (rank 0's host): {}\n",
            outfile::shown::text(network)
        );
    }
    for line in doc.placement.warnings() {
        out += &line;
        out.push('\n');
    }
    if validate {
        out += "# validate: one receive buffer per pending receive, every message checked; \
                the rates include the checking\n";
    }
    if let Some(v) = &doc.validation {
        out += &format!(
            "# validate: {} messages checked, {} corrupted\n",
            v.messages_checked, v.corrupted
        );
    }
    if config.repeats() {
        out += &text::repeats(config, &doc.sizes);
    }
    for w in &doc.warnings {
        out += &format!("# WARNING {}\n", w.message);
    }
    out
}

/// A failed write to standard output, as every rank will leave: one line (none for a
/// closed pipe) and exit code 1, or 141 for a closed pipe.
fn stdout_failure(e: std::io::Error) -> Failure {
    let message = outfile::stdout::message(&e)
        .map(|m| format!("ERROR {m}"))
        .unwrap_or_default();
    Failure::new(outfile::stdout::exit_code(&e), message)
}

/// What `--validate` concluded: the summary (on every rank) and this rank's own verdict.
struct Verdict {
    summary: Option<Validation>,
    local: Result<(), Failure>,
}

fn validation_verdict(world: &SimpleCommunicator, config: &Config, checked: Checked) -> Verdict {
    if !config.validate {
        return Verdict {
            summary: None,
            local: Ok(()),
        };
    }
    let mine = [checked.messages, checked.corrupted];
    let mut total = [0u64; 2];
    world.all_reduce_into(&mine[..], &mut total[..], SystemOperation::sum());
    let summary = Validation {
        messages_checked: total[0],
        corrupted: total[1],
    };
    let local = match checked.first {
        Some(c) => Err(Failure::new(
            Exit::DataErrors.code(),
            format!(
                "ERROR --validate: {} of {} messages arrived corrupted; the first on rank {} \
                 from rank {}, msgsize {}, iteration {} (warm-up and earlier samples included), byte {}",
                summary.corrupted,
                summary.messages_checked,
                c.rank,
                c.from,
                c.msgsize,
                c.iteration,
                c.byte
            ),
        )),
        None => Ok(()),
    };
    Verdict {
        summary: Some(summary),
        local,
    }
}

/// Reserves the `--json` and `--csv` files (rank 0). A name that exists or that another
/// run is writing is bad input (exit 2), any other failure exit 1; if the second cannot
/// be reserved the first is released again, so a refused run leaves nothing behind.
fn create_outputs(options: &Options) -> Result<(Option<OutputFile>, Option<OutputFile>), Failure> {
    let create = |option, path: &Option<PathBuf>| -> Result<Option<OutputFile>, Failure> {
        let Some(path) = path.as_deref() else {
            return Ok(None);
        };
        let file = OutputFile::create(option, path).map_err(|e| {
            let code = if e.is_conflict() {
                Exit::Usage.code()
            } else {
                Exit::Failure.code()
            };
            Failure::new(code, format!("ERROR {option} {e}"))
        })?;
        if let Some(notice) = file.replaced_notice() {
            outfile::eprintln!("WARNING {option}: {notice}");
        }
        Ok(Some(file))
    };
    let json = create("--json", &options.json)?;
    let csv = create("--csv", &options.csv)?;
    Ok((json, csv))
}

/// Writes `text()` to `file` when there is one as its next complete version; on failure
/// the previous version stays, the file is let go and the run stops (exit 1).
fn write_output(
    file: &mut Option<OutputFile>,
    text: impl FnOnce() -> String,
) -> Result<(), Failure> {
    let Some(out) = file.as_mut() else {
        return Ok(());
    };
    let Err(message) = out.write(&text()) else {
        return Ok(());
    };
    *file = None;
    Err(Failure::new(Exit::Failure.code(), message))
}
