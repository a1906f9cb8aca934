//! The execution layer: start-up, run directory, partitions, the three access methods,
//! collective error handling and the reports.

pub mod cache;
mod config;
pub mod fsprobe;
mod holder;
mod kept;
pub mod partition;
pub mod progress;
pub mod quiet;
pub mod rundir;
pub mod stopped;

use crate::hints::{parse_hints_file, Hints, HintsFileError};
use crate::options::Options;
use crate::outputs::Outputs;
use crate::patterns::PatternType;
use crate::report::{self, RunInfo};
use crate::results::{PartitionResult, PatternResult};
use crate::schedule::{partition_time, run_time, Access};
use crate::validity::{invalid_reasons, verdict, ValidityInput};
use benchkit::keeper::Keeper;
use benchkit::{max_all, Agreed};
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use benchkit::Exit;
use stopped::Stopped;

/// Runs b_eff_io on every rank of `world` (a collective call): the options as the binary
/// parsed them, the outcome of the network selection made before `MPI_Init`. Every rank
/// leaves with the same outcome: `Err` with the exit code they agreed on.
pub fn run(
    world: &SimpleCommunicator,
    parsed: Result<Options, clap::Error>,
    network: benchkit::network::Outcome,
    watchdog: &benchkit::watchdog::Watchdog,
) -> Result<(), Agreed> {
    let Some(config) = config::Config::check(world, parsed, network)? else {
        return Ok(());
    };
    let signal = Arc::new(AtomicUsize::new(0));
    let holder = holder::Holder::new(config.opts.keep);
    install_signals(&signal, &holder);
    run_checked(world, &config, &signal, &holder, watchdog)
}

/// The exit of a run stopped by `stop`, the same on every rank (see [`Stopped::exit`]),
/// its message said by rank 0.
fn leave(world: &SimpleCommunicator, stop: &Stopped, signal: &AtomicUsize) -> Agreed {
    if world.rank() == 0 && !stop.message().is_empty() {
        outfile::eprintln!("b_eff_io: error: {}", stop.message());
    }
    let local = i32::try_from(signal.load(Ordering::SeqCst))
        .ok()
        .filter(|&s| s != 0);
    Agreed {
        code: stop.exit(local).code(),
    }
}

/// The signal thread: SIGINT and SIGTERM are noted for the run to stop at its next
/// check, and the run directory is let go at once ([`holder::Holder::abort`]).
fn install_signals(signal: &Arc<AtomicUsize>, holder: &Arc<holder::Holder>) {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    let (signal, holder) = (signal.clone(), holder.clone());
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for s in signals.forever() {
                signal.store(s as usize, Ordering::SeqCst);
                // Removed at once: the launcher may kill us before the next check.
                let _ = holder.abort();
            }
        });
    // Only the signal thread takes SIGINT/SIGTERM: a main thread stuck in a long fsync
    // would otherwise hold the signal until the launcher's SIGKILL. Threads started later
    // inherit the mask.
    if spawned.is_ok() {
        let mut set = nix::sys::signal::SigSet::empty();
        set.add(nix::sys::signal::Signal::SIGINT);
        set.add(nix::sys::signal::Signal::SIGTERM);
        let _ = nix::sys::signal::pthread_sigmask(
            nix::sys::signal::SigmaskHow::SIG_BLOCK,
            Some(&set),
            None,
        );
    }
}

/// Rank 0's `path`, on every rank: its bytes as they are (a path need not be UTF-8), of
/// any length (the length goes first).
fn broadcast_path(world: &SimpleCommunicator, path: &Path) -> PathBuf {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let bytes = broadcast_bytes(world, path.as_os_str().as_bytes());
    PathBuf::from(std::ffi::OsString::from_vec(bytes))
}

/// Rank 0's `mine`, on every rank (the length goes first; other ranks' `mine` is unused).
fn broadcast_bytes(world: &SimpleCommunicator, mine: &[u8]) -> Vec<u8> {
    broadcast_bytes_from(world, 0, mine)
}

/// Rank `from`'s `mine`, on every rank.
pub(crate) fn broadcast_bytes_from(world: &SimpleCommunicator, from: i32, mine: &[u8]) -> Vec<u8> {
    let root = world.process_at_rank(from);
    let mut len = mine.len() as u64;
    root.broadcast_into(&mut len);
    let mut buf = vec![0u8; usize::try_from(len).unwrap_or(0)];
    if world.rank() == from && buf.len() == mine.len() {
        buf.copy_from_slice(mine);
    }
    if !buf.is_empty() {
        root.broadcast_into(&mut buf[..]);
    }
    buf
}

/// The text of the hints file `path` (`shown` names it), checked: a file that cannot be
/// read, is not UTF-8 or has a bad line is an error naming it (and the line and field).
/// It is read through the bounded reader: a regular file only (a FIFO, a device or a
/// directory is refused at once, never waited on) of at most
/// [`crate::hints::MAX_HINTS_FILE_BYTES`].
fn read_hints_file(path: &Path, shown: &str) -> Result<String, HintsFileError> {
    use outfile::input::InputError;
    let cap = crate::hints::MAX_HINTS_FILE_BYTES;
    let bytes = outfile::input::read(path, cap).map_err(|e| {
        let cause = match &e {
            InputError::NotRegular { kind, .. } => {
                format!("it is {kind}, not a regular file; give the path of a regular file")
            }
            InputError::TooLarge { cap, .. } => format!(
                "it holds more than the {cap} bytes ({} MiB) a hints file may hold (a hints \
                 file is a few lines); is this the right file?",
                cap >> 20
            ),
            InputError::Io { error, .. } => rundir::cause(error),
        };
        HintsFileError::Unreadable {
            path: shown.to_string(),
            cause,
        }
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        HintsFileError::NotText {
            path: shown.to_string(),
            line: good.iter().filter(|&&b| b == b'\n').count() + 1,
        }
    })?;
    parse_hints_file(shown, &text)?;
    Ok(text)
}

/// The hints of the run, the same on every rank: `--hint`s and the `-i` hints file, which
/// rank 0 reads and checks and sends to the others. A file that cannot be read or has a
/// bad line stops every rank with exit code 2 (bad input) and one message, before
/// anything is created.
pub(super) fn load_hints(world: &SimpleCommunicator, opts: &Options) -> Result<Hints, Agreed> {
    let global = opts.hints.clone();
    let Some(path) = &opts.hints_file else {
        return Ok(Hints { global, file: None });
    };
    // Shown in messages, the header and the files: a name with a control character is
    // shown with it visibly escaped.
    let shown = outfile::shown::path(path);
    let usage = |e: HintsFileError| {
        benchkit::Failure::new(Exit::Usage.code(), format!("b_eff_io: error: {e}"))
    };
    let local = match world.rank() {
        0 => read_hints_file(path, &shown).map_err(usage),
        _ => Ok(String::new()),
    };
    let text = benchkit::agree(world, local)?;
    // Rank 0 has checked this text; the others parse the same bytes alike.
    let text = String::from_utf8_lossy(&broadcast_bytes(world, text.as_bytes())).into_owned();
    let file = benchkit::agree(world, parse_hints_file(&shown, &text).map_err(usage))?;
    Ok(Hints {
        global,
        file: Some(file),
    })
}

/// Ranks per available core on rank 0's node, on every rank (collective).
fn ranks_per_core(world: &SimpleCommunicator) -> Option<f64> {
    let local = world.split_shared(world.rank());
    let cores = std::thread::available_parallelism().map_or(0, |c| c.get());
    let mut ratio = if cores > 0 {
        local.size() as f64 / cores as f64
    } else {
        0.0
    };
    world.process_at_rank(0).broadcast_into(&mut ratio);
    (ratio > 0.0).then_some(ratio)
}

/// The run once its configuration is checked: its output files reserved, the run
/// directory, the run's description, the partitions, and the report.
fn run_checked(
    world: &SimpleCommunicator,
    config: &config::Config,
    signal: &Arc<AtomicUsize>,
    holder: &Arc<holder::Holder>,
    watchdog: &benchkit::watchdog::Watchdog,
) -> Result<(), Agreed> {
    let rank = world.rank();
    let opts = &config.opts;
    let now = chrono::Local::now();
    // The output files, reserved by rank 0 before anything runs, agreed by all; from here
    // their one keeper writes every version of them and lets them go on every way out.
    let reserved = match rank {
        0 => Outputs::reserve(opts),
        _ => Ok(Outputs::none()),
    };
    let outputs = benchkit::agree(world, reserved)?;
    // The files' header names the prefix they were written under (rank 0's).
    let prefix = outputs.summary_prefix().map(str::to_string);
    let keeper = kept::Kept::keeper(outputs);
    // Rank 0 writes a version between patterns (kept::pattern_done); at a stall (on the
    // watchdog's thread) the last version says why, and the run directory goes.
    if rank == 0 {
        let holder = holder.clone();
        watchdog.on_stall(keeper.stall_hook(move || {
            if let Err(e) = holder.abort() {
                outfile::eprintln!("b_eff_io: warning: {e}");
            }
        }));
    }
    let stamp = now.format("%Y%m%dT%H%M%S").to_string();
    let (dir, held) = match hold_run_dir(world, &opts.path, &stamp) {
        Ok(held) => held,
        Err(stop) => {
            keeper.abandon();
            return Err(leave(world, &stop, signal));
        }
    };
    holder.hold(held.clone());
    let file_system = fsprobe::probe(world, &dir, held.dir());
    let info = run_info(world, config, prefix, file_system, &now);
    let watch = Watch {
        progress: watchdog.progress(),
        held: &held,
        keeper: &keeper,
    };
    let outcome = measure(world, opts, &info, &dir, &watch, signal);
    // Rank 0 removes the run directory and writes every output file (syncing each) while
    // the others wait for it: that step may take one timeout more than the timeout.
    let progress = watchdog.progress();
    progress.wait(
        "the end of the run (rank 0 removes the run directory and writes the output files)",
        progress.timeout().unwrap_or_default(),
    );
    world.barrier();
    if rank == 0 {
        if let Err(e) = holder.end() {
            outfile::eprintln!("b_eff_io: warning: {e}");
        }
    }
    let results = match outcome {
        Ok(results) => results,
        Err(Measured::Unprinted(agreed)) => {
            keeper.abandon();
            return Err(agreed);
        }
        Err(Measured::Stopped(stop)) => {
            // The partitions finished before the failure are kept; with none, no file.
            if keeper.with(|k| k.measured_any()) {
                let why = if stop.message().is_empty() {
                    "stopped by an error (see standard error)".to_string()
                } else {
                    format!(
                        "stopped: {}",
                        stop.message().lines().next().unwrap_or_default()
                    )
                };
                if let Err(message) = keeper.stop(&why) {
                    outfile::eprintln!("{message}");
                }
            } else {
                keeper.abandon();
            }
            return Err(leave(world, &stop, signal));
        }
    };
    // Rank 0 is in every partition, so its count is the run's.
    let [errors] = max_all(
        world,
        [results.iter().map(|p| p.errors()).sum::<u64>() as f64],
    );
    // The last step: only rank 0 reports (each failure said as it happens), and every
    // rank leaves with its code.
    let reported = match rank {
        0 => report_all(&keeper, &info, &results),
        _ => Ok(()),
    };
    if rank == 0 && errors > 0.0 {
        say_data_errors(&info, &results, errors);
    }
    benchkit::agree(world, reported)?;
    if errors > 0.0 {
        return Err(Agreed {
            code: Exit::DataErrors.code(),
        });
    }
    Ok(())
}

/// How the measurement part of a run ended when it did not give its results.
enum Measured {
    /// The header could not be printed: said already, every rank leaves with the code.
    Unprinted(Agreed),
    /// A partition (or the steps before them) stopped.
    Stopped(Stopped),
}

impl From<Stopped> for Measured {
    fn from(stop: Stopped) -> Self {
        Measured::Stopped(stop)
    }
}

/// What the run says of itself in every output, on every rank, made in one step from
/// its configuration, rank 0's output prefix and the file system probed under the run
/// directory (collective: every rank's host is gathered, and rank 0's node's ranks per
/// core).
fn run_info(
    world: &SimpleCommunicator,
    config: &config::Config,
    prefix: Option<String>,
    file_system: crate::filesystem::FileSystem,
    now: &chrono::DateTime<chrono::Local>,
) -> RunInfo {
    let opts = &config.opts;
    let version = env!("CARGO_PKG_VERSION").to_string();
    let date = now.to_rfc3339();
    let provenance = benchkit::provenance::gather(world, "b_eff_io", &version, date.clone());
    RunInfo {
        version,
        date,
        host: benchkit::processor_name(),
        processes: world.size() as usize,
        memory_per_process: config.memory,
        mpart: config.mpart,
        scheduled_time_s: opts.time,
        partitions: config.parts.clone(),
        path: opts.path.display().to_string(),
        cache_bound: config.cache_bound,
        noshared: opts.noshared,
        drop_cache: opts.drop_cache,
        check_every_call: opts.check_every_call,
        machine_memory: opts.machine_memory(),
        nounique: opts.nounique,
        rewrite: opts.rewrite,
        keep: opts.keep,
        error_messages: opts.error_messages,
        hints: config.hints.clone(),
        prefix,
        system: report::v21::System::this_machine(),
        file_system,
        ranks_per_core: ranks_per_core(world),
        provenance,
        network: config.network.clone(),
    }
}

/// The run directory under `base`, created by rank 0 and agreed by all: its path on
/// every rank, and the directory held by its descriptor.
fn hold_run_dir(
    world: &SimpleCommunicator,
    base: &Path,
    stamp: &str,
) -> Result<(PathBuf, Arc<rundir::RunDir>), Stopped> {
    let mut created = None;
    let mut failure = None;
    if world.rank() == 0 {
        match rundir::RunDir::create(base, stamp, std::process::id()) {
            Ok(d) => created = Some(Arc::new(d)),
            Err(e) => failure = Some(benchkit::Failure::new(e.exit().code(), e.to_string())),
        }
    }
    Stopped::agree(world, failure)?;
    let shown = created
        .as_ref()
        .map(|d| d.path().to_path_buf())
        .unwrap_or_default();
    let dir = broadcast_path(world, &shown);
    let held = match created {
        Some(d) => Ok(d),
        None => rundir::RunDir::open(&dir).map(Arc::new),
    };
    let seen = held
        .as_ref()
        .err()
        .map(|e| benchkit::Failure::new(e.exit().code(), e.to_string()));
    if let Err(stop) = Stopped::agree(world, seen) {
        // Created for nothing: rank 0 removes it again.
        if let (0, Ok(d)) = (world.rank(), &held) {
            if let Err(e) = d.remove() {
                outfile::eprintln!("b_eff_io: warning: {e}");
            }
        }
        return Err(stop);
    }
    // Every rank opened it (agreed above).
    let Ok(held) = held else {
        return Err(Stopped::said(Exit::Failure));
    };
    Ok((dir, held))
}

/// The measurements, in the run directory `dir` (held in `watch`): the file system
/// probed, the header printed, the partitions run.
fn measure(
    world: &SimpleCommunicator,
    opts: &Options,
    info: &RunInfo,
    dir: &Path,
    watch: &Watch<'_>,
    signal: &Arc<AtomicUsize>,
) -> Result<Vec<PartitionResult>, Measured> {
    print_header(world, opts, info, dir).map_err(Measured::Unprinted)?;
    // Inside the run directory MPI-IO sees short relative names, whatever the length of
    // --path; the working directory comes back when `inside` drops.
    let inside = rundir::Workdir::enter(watch.held);
    Stopped::agree(world, inside.as_ref().err().map(ToString::to_string))?;
    watch.keeper.with(|k| k.describe(info.clone()));
    Ok(run_partitions(world, opts, info, signal, dir, watch)?)
}

/// Rank 0 prints the header before the first partition; every rank learns whether it
/// could (collective), and a failure stops them all with its code.
fn print_header(
    world: &SimpleCommunicator,
    opts: &Options,
    info: &RunInfo,
    dir: &Path,
) -> Result<(), benchkit::Agreed> {
    let printed = match world.rank() {
        0 => {
            let total = run_time(opts.time, &info.partitions, world.size() as usize);
            let text = format!(
                "{}run directory     {}\nscheduled total   {total} s\n",
                report::text::header(info),
                dir.display()
            );
            outfile::stdout::write(&text).map_err(|e| crate::outputs::stdout_failure(&e))
        }
        _ => Ok(()),
    };
    benchkit::agree(world, printed)
}

/// What the partitions report as they go: their progress to the watchdog, the run
/// directory they check before each open, the finished patterns and partitions to keep.
pub(crate) struct Watch<'a> {
    /// The watchdog's progress counter.
    pub progress: benchkit::watchdog::Progress,
    /// The run directory, by its descriptor.
    pub held: &'a Arc<rundir::RunDir>,
    keeper: &'a Keeper<kept::Kept>,
}

/// Runs every partition in turn (collective over `world`): the ranks of each run it, the
/// others wait for them; a failure inside one stops every rank.
fn run_partitions(
    world: &SimpleCommunicator,
    opts: &Options,
    info: &RunInfo,
    signal: &Arc<AtomicUsize>,
    dir: &Path,
    watch: &Watch<'_>,
) -> Result<Vec<PartitionResult>, Stopped> {
    let parts = &info.partitions;
    let rank = world.rank() as usize;
    let n = world.size() as usize;
    let total = run_time(opts.time, parts, n);
    let progress = progress::Progress::new(rank == 0, total);
    // The ranks outside a partition wait for it; its rank 0 (the world's) tells them it
    // still works, so that a long partition is not their stall.
    let heartbeat = benchkit::heartbeat::Heartbeat::new(world);
    let root_host =
        String::from_utf8_lossy(&broadcast_bytes(world, info.host.as_bytes())).into_owned();
    let mut results = Vec::new();
    for (i, &size) in parts.iter().enumerate() {
        let color = if rank < size {
            Color::with_value(0)
        } else {
            Color::undefined()
        };
        // The ranks outside, when this rank is the partition's rank 0 and there are any.
        let beacon_to = Some(size as i32..n as i32).filter(|w| rank == 0 && !w.is_empty());
        if let Some(to) = &beacon_to {
            // Connections made before any timed window.
            heartbeat.pulse(to.clone());
        }
        // Ranks outside the partition have no result and no failure of their own.
        let outcome = world.split_by_color(color).map(|comm| {
            // Relative: the working directory is the run directory.
            let sub_dir = PathBuf::from(format!("p{i}.n{size}"));
            let made = (comm.rank() == 0)
                .then(|| std::fs::create_dir(&sub_dir).err())
                .flatten()
                .map(|e| {
                    format!(
                        "cannot create '{}': {}",
                        dir.join(&sub_dir).display(),
                        rundir::cause(&e)
                    )
                });
            let time_s = partition_time(opts.time, size, n);
            let keep_pattern = |a: Access, r: &PatternResult| {
                if rank == 0 {
                    kept::pattern_done(watch.keeper, size, time_s, a, r);
                }
            };
            Stopped::agree(&comm, made)?;
            let setup = partition::Setup {
                comm: &comm,
                dir: sub_dir,
                run_dir: dir.to_path_buf(),
                held: watch.held,
                mpart: info.mpart,
                time_s,
                noshared: opts.noshared,
                every_call: opts.check_every_call,
                error_limit: opts.error_limit(),
                hints: &info.hints,
                file_system: &info.file_system,
                signal: signal.clone(),
            };
            let feedback = partition::Feedback {
                progress: progress.clone(),
                watch: watch.progress.clone(),
                on_pattern: &keep_pattern,
                beacon: beacon_to.clone().map(|to| partition::Beacon {
                    heartbeat: &heartbeat,
                    to,
                }),
            };
            partition::PartitionRun::new(setup, feedback, opts.posix_baseline)
                .run(opts.drop_cache, opts.sabotage())
        });
        if outcome.is_none() {
            // Outside: rank 0's pulses are this rank's progress until it says the
            // partition is over (whether it ended well or not).
            watch.progress.wait(
                format!(
                    "outside partition n={size}, waiting for it (rank 0 on {root_host} \
                     tells its progress)"
                ),
                benchkit::heartbeat::listening_allowance(&watch.progress),
            );
            heartbeat.listen(0, &watch.progress);
        } else if let Some(to) = beacon_to {
            heartbeat.done(to);
        }
        // A failure inside reaches everyone.
        watch.progress.at(format!(
            "the end of partition n={size}, waiting for every rank"
        ));
        let failure = match &outcome {
            Some(Err(stop)) => Some(stop.failure()),
            _ => None,
        };
        Stopped::agree(world, failure)?;
        if let Some(Ok(r)) = outcome {
            if rank == 0 {
                if let Some(w) = crate::anomalies::partition(&r, info.ranks_per_core) {
                    progress.interject(&format!("b_eff_io: WARNING {}", w.message));
                }
                kept::partition_done(watch.keeper, r.clone());
            }
            results.push(r);
        }
    }
    progress.finish();
    Ok(results)
}

/// Rank 0's report at the end: the summary on standard output, and the last version of
/// every output file through the keeper, each written whole. Failures are said here;
/// `Err` with the exit code (1 when something could not be written, 141 when standard
/// output is a closed pipe) and no more to say. The files are written even when standard
/// output fails.
fn report_all(
    keeper: &Keeper<kept::Kept>,
    info: &RunInfo,
    results: &[PartitionResult],
) -> Result<(), benchkit::Failure> {
    let errors: u64 = results.iter().map(|p| p.errors()).sum();
    let reasons = invalid_reasons(&ValidityInput {
        scheduled_time_s: info.scheduled_time_s,
        shared_pointer: !info.noshared,
        data_errors: errors,
    });
    let mut summary = String::new();
    for p in results {
        let ratios = report::cache_ratios(info, p);
        summary.push_str(&format!("\npartition n = {}\n", p.processes));
        summary.push_str(&report::table::partition_table(p, info.mpart, ratios));
        summary.push_str(&report::text::partition_figures(p));
        summary.push_str(&report::text::hints_block(p));
    }
    if let Some(line) = report::text::headline(info, results, &verdict(&reasons)) {
        summary.push('\n');
        summary.push_str(&line);
    }
    let printed = outfile::stdout::write(&summary);
    let mut code = 0;
    if let Err(message) = keeper.complete() {
        outfile::eprintln!("{message}");
        code = Exit::Failure.code();
    }
    if let Err(e) = printed {
        let failure = crate::outputs::stdout_failure(&e);
        if !failure.message.is_empty() {
            outfile::eprintln!("{}", failure.message);
        }
        code = code.max(failure.code);
    }
    match code {
        0 => Ok(()),
        code => Err(benchkit::Failure::new(code, "")),
    }
}

/// Rank 0's word on `errors` data errors found by read, and the shared file pointer's
/// advice when type 1 has some.
fn say_data_errors(info: &RunInfo, results: &[PartitionResult], errors: f64) {
    outfile::eprintln!("b_eff_io: error: {errors} data errors on read (see above)");
    let shared = |p: &PartitionResult| {
        p.access
            .iter()
            .flat_map(|a| &a.patterns)
            .filter(|r| r.pattern.ptype == PatternType::Shared)
            .map(|r| r.errors)
            .sum::<u64>()
    };
    if results.iter().map(shared).sum::<u64>() > 0 {
        outfile::eprintln!(
            "b_eff_io: the data errors include type 1: {}",
            info.file_system.shared_pointer_advice()
        );
    }
}
