//! One run of `sqmr`, from parsed options to the last row.
//!
//! Every check that can fail is agreed on by all ranks ([`xmpi::agree`]) before the next
//! collective step, so that all of them report through rank 0 (or the first failing rank)
//! and leave together with the same exit code.

use std::path::PathBuf;

use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use xmpi::{agree, Agreed, Failure};

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

/// Exit code for a run that could not do its work (a file that cannot be written).
pub const EXIT_FAILURE: i32 = 1;
/// Exit code for bad input: options, job size, limits.
pub const EXIT_USAGE: i32 = 2;
/// Exit code for a run in which `--validate` found damaged messages.
pub const EXIT_CORRUPTED: i32 = 3;

/// Runs the benchmark on every rank of `world` (a collective call).
pub fn run(
    world: &SimpleCommunicator,
    parsed: Result<Options, clap::Error>,
    network: xmpi::network::Outcome,
) -> Result<(), Agreed> {
    let rank = world.rank();
    let options = match parsed {
        Ok(options) => options,
        Err(e) if e.exit_code() == 0 => {
            if rank == 0 {
                print!("{}", e.render());
            }
            return Ok(());
        }
        Err(e) => {
            let message = format!("{}", e.render());
            return agree(world, Err(Failure::new(EXIT_USAGE, message)));
        }
    };
    // The selection: agreed, checked across hosts (warnings, or errors with --strict).
    let network = xmpi::network::agree_selection(world, network, options.strict, "")?
        .map(|applied| applied.summary);
    let limits = HostLimits {
        available_bytes: crate::host::memory_available(),
        request_bytes: std::mem::size_of::<mpi::ffi::MPI_Request>() as u64,
        page_bytes: PAGE as u64,
    };
    let checked = Config::check(&options, world.size() as usize, limits).map_err(|d| {
        Failure::new(
            EXIT_USAGE,
            format!("{d}\nUsage: {USAGE}\nRun 'sqmr --help' for more.\n"),
        )
    });
    let config = agree(world, checked)?;

    let files = match rank {
        0 => create_outputs(&options),
        _ => Ok((None, None)),
    };
    let (mut json, mut csv) = agree(world, files)?;

    let started = chrono::Local::now();
    let hosts = xmpi::gather_strings(world, 0, &xmpi::processor_name());
    let topology = Topology {
        num_cores: config.num_cores,
        num_nbors: config.num_nbors,
    };
    let mut document = hosts.map(|hosts| {
        let placement = Placement::check(&topology, &hosts);
        let environment = Environment {
            mpi_library: xmpi::library_version(),
            ranks: hosts.len(),
            core_hosts: hosts[..config.num_cores].to_vec(),
            hosts,
        };
        let mut doc = Document::new(config.clone(), started.to_rfc3339(), environment, placement);
        doc.network_selection = network.clone();
        doc
    });
    if let Some(doc) = &document {
        print_preamble(&config, doc, options.verbose, &started);
    }

    let corrupt = options.corrupt_one_message && rank as usize == config.num_cores;
    let mut runner = Runner::new(world, &config, corrupt);
    for step in schedule::steps(config.min_msgsize, config.max_msgsize, config.num_iters) {
        let times = runner.step(step);
        let written = match (&mut document, times) {
            (Some(doc), Some(elapsed)) => {
                let msgs = messages(
                    config.win_size,
                    config.num_nbors,
                    config.num_cores,
                    step.iters,
                );
                let row_rates = rates(msgs, step.msgsize, config.num_cores, Times::of(&elapsed));
                println!("{}", text::row(step.msgsize, step.iters, &row_rates));
                doc.sizes.push(SizeResult {
                    msgsize: step.msgsize,
                    iters: step.iters,
                    messages: msgs,
                    core_elapsed_s: elapsed,
                    rates: row_rates,
                });
                write_output(&mut json, || doc.to_json())
                    .and_then(|()| write_output(&mut csv, || csv::render(&doc.sizes)))
            }
            _ => Ok(()),
        };
        agree(world, written)?;
    }

    let verdict = validation_verdict(world, &config, runner.checked);
    let finished = match &mut document {
        Some(doc) => {
            doc.validation = verdict.summary;
            doc.complete = true;
            if let Some(v) = verdict.summary {
                println!(
                    "# validate: {} messages checked, {} corrupted",
                    v.messages_checked, v.corrupted
                );
            }
            // The CSV rows are all written; only the JSON changes at the end.
            write_output(&mut json, || doc.to_json())
        }
        None => Ok(()),
    };
    agree(world, finished)?;
    agree(world, verdict.local)
}

fn print_preamble(
    config: &Config,
    doc: &Document,
    verbose: bool,
    started: &chrono::DateTime<chrono::Local>,
) {
    let env = &doc.environment;
    if verbose {
        print!("{}", text::verbose(config, &env.hosts));
    }
    let date = started.format("%m/%d/%y %H:%M:%S").to_string();
    print!("{}", text::header(config, &date, &env.hosts[0]));
    println!(
        "# xylem sqmr {}, {}",
        env!("CARGO_PKG_VERSION"),
        xmpi::library_summary()
    );
    if let Some(network) = &doc.network_selection {
        println!("# network selection (rank 0's host): {network}");
    }
    for line in doc.placement.warnings() {
        println!("{line}");
    }
    if config.validate {
        println!(
            "# validate: one receive buffer per pending receive, every message checked; \
             the rates include the checking"
        );
    }
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
            EXIT_CORRUPTED,
            format!(
                "ERROR --validate: {} of {} messages arrived corrupted; the first on rank {} \
                 from rank {}, msgsize {}, iteration {} (warm-up included), byte {}",
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

/// Creates the `--json` and `--csv` files (rank 0); if the second cannot be created the
/// first is removed again, so a refused run leaves nothing behind.
fn create_outputs(options: &Options) -> Result<(Option<OutputFile>, Option<OutputFile>), Failure> {
    let create = |option, path: &Option<PathBuf>| {
        path.as_deref()
            .map(|p| OutputFile::create(option, p))
            .transpose()
            .map_err(|message| Failure::new(EXIT_USAGE, message))
    };
    let json = create("--json", &options.json)?;
    match create("--csv", &options.csv) {
        Ok(csv) => Ok((json, csv)),
        Err(failure) => {
            if let Some(j) = &json {
                j.remove();
            }
            Err(failure)
        }
    }
}

/// Writes `text()` to `file` when there is one; on failure removes the file (it is ours)
/// and says why.
fn write_output(
    file: &mut Option<OutputFile>,
    text: impl FnOnce() -> String,
) -> Result<(), Failure> {
    let Some(out) = file.as_ref() else {
        return Ok(());
    };
    let Err(e) = out.write(&text()) else {
        return Ok(());
    };
    out.remove();
    let message = format!(
        "ERROR {} {}: cannot write the results: {e} (the table on standard output is \
         complete up to here)",
        out.option(),
        out.path().display()
    );
    *file = None;
    Err(Failure::new(EXIT_FAILURE, message))
}
