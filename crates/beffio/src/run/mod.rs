//! The execution layer: start-up, run directory, partitions, the three access methods,
//! collective error handling and the reports.

pub mod cache;
pub mod exec;
pub mod fsprobe;
mod kept;
pub mod progress;
pub mod quiet;
pub mod rundir;

use crate::hints::{parse_hints_file, Hints};
use crate::options::{MemorySetting, Options, Sabotage};
use crate::outputs::Outputs;
use crate::patterns::{mpart, pattern_table, PatternType, PATTERN_COUNT};
use crate::report::{self, RunInfo};
use crate::results::{AccessResult, PartitionResult, PatternResult, TypeTotal};
use crate::schedule::{check_partitions, default_partitions, partition_time, run_time, Access};
use crate::segment::segment_plan;
use crate::validity::{invalid_reasons, verdict, ValidityInput};
use benchkit::{agree_message as agree, max_all, sum_all};
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use benchkit::Exit;

/// Runs b_eff_io on `world` with the process arguments `args` and the outcome of the
/// network selection made before `MPI_Init`; returns the exit code every rank agreed on.
pub fn run(
    world: &SimpleCommunicator,
    args: Vec<std::ffi::OsString>,
    network: benchkit::network::Outcome,
    watchdog: &benchkit::watchdog::Watchdog,
) -> i32 {
    let rank = world.rank();
    let opts = match Options::parse_with_long_version(
        args,
        benchkit::long_version(env!("CARGO_PKG_VERSION")),
    ) {
        Ok(o) => o,
        Err(e) if e.exit_code() == 0 => {
            // --help, --version: rank 0 prints, and every rank leaves with its outcome.
            let printed = match rank {
                0 => outfile::stdout::write(&e.render().to_string())
                    .map_err(|e| crate::outputs::stdout_failure(&e)),
                _ => Ok(()),
            };
            return benchkit::agree(world, printed).map_or_else(|agreed| agreed.code, |()| 0);
        }
        Err(e) => {
            if rank == 0 {
                let _ = e.print();
            }
            return e.exit_code();
        }
    };
    // The selection: agreed, checked across hosts (warnings, or errors with --strict).
    let network =
        match benchkit::network::agree_selection(world, network, opts.network.strict, "b_eff_io: ")
        {
            Ok(applied) => applied.and_then(|a| a.record),
            Err(agreed) => return agreed.code,
        };
    let n = world.size() as usize;
    let parts = opts
        .partitions
        .clone()
        .unwrap_or_else(|| default_partitions(n));
    if let Err(msg) = check_partitions(&parts, n) {
        if rank == 0 {
            outfile::eprintln!("b_eff_io: error: {msg}");
        }
        return 2;
    }
    let hints = match load_hints(world, &opts) {
        Ok(h) => h,
        Err(code) => return code,
    };
    let signal = Arc::new(AtomicUsize::new(0));
    let dir_slot: Arc<Mutex<Option<Arc<rundir::RunDir>>>> = Arc::new(Mutex::new(None));
    // Every rank removes the run directory on a signal: the launcher may kill the
    // ranks soon after, and whichever rank runs last leaves nothing behind.
    install_signals(&signal, &dir_slot, !opts.keep);

    let given = Given {
        parts: &parts,
        hints: &hints,
        network,
    };
    match run_checked(world, &opts, given, &signal, &dir_slot, watchdog) {
        Ok(code) => code,
        Err(msg) => {
            if rank == 0 && !msg.is_empty() {
                outfile::eprintln!("b_eff_io: error: {msg}");
            }
            failure_code(signal.load(Ordering::SeqCst), &msg)
        }
    }
}

/// The exit code of a failed run, the same on every rank: 128 + the signal when a rank
/// was interrupted (this one, or the one whose agreed message says so: a launcher that
/// ORs its ranks' codes, as hydra does, would otherwise report 130 | 1 = 131), else 1.
fn failure_code(local_signal: usize, agreed_message: &str) -> i32 {
    const SAID: &str = "interrupted by signal ";
    let from_message = agreed_message.find(SAID).and_then(|at| {
        let digits: String = agreed_message[at + SAID.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse::<i32>().ok()
    });
    match (local_signal, from_message) {
        (0, None) => Exit::Failure.code(),
        (0, Some(s)) => Exit::Signal(s).code(),
        (s, _) => Exit::Signal(i32::try_from(s).unwrap_or(0)).code(),
    }
}

fn install_signals(
    signal: &Arc<AtomicUsize>,
    dir: &Arc<Mutex<Option<Arc<rundir::RunDir>>>>,
    remove: bool,
) {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    let (signal, dir) = (signal.clone(), dir.clone());
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for s in signals.forever() {
                signal.store(s as usize, Ordering::SeqCst);
                // Remove the files at once: the launcher may kill us before the next check.
                if remove {
                    if let Some(d) = dir.lock().ok().and_then(|g| g.clone()) {
                        let _ = d.remove();
                    }
                }
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
fn read_hints_file(path: &Path, shown: &str) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| {
        format!(
            "cannot read the hints file (-i) '{shown}': {}",
            rundir::cause(&e)
        )
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        format!("hints file '{shown}', line {line}: not UTF-8 text")
    })?;
    parse_hints_file(shown, &text)?;
    Ok(text)
}

/// The hints of the run, the same on every rank: `--hint`s and the `-i` hints file, which
/// rank 0 reads and checks and sends to the others. A file that cannot be read or has a
/// bad line stops every rank with exit code 2 (bad input) and one message, before
/// anything is created.
fn load_hints(world: &SimpleCommunicator, opts: &Options) -> Result<Hints, i32> {
    let global = opts.hints.clone();
    let Some(path) = &opts.hints_file else {
        return Ok(Hints { global, file: None });
    };
    let shown = path.display().to_string();
    let local = match world.rank() {
        0 => read_hints_file(path, &shown)
            .map_err(|m| benchkit::Failure::new(2, format!("b_eff_io: error: {m}"))),
        _ => Ok(String::new()),
    };
    let text = benchkit::agree(world, local).map_err(|agreed| agreed.code)?;
    let text = String::from_utf8(broadcast_bytes(world, text.as_bytes())).map_err(|_| 2)?;
    // Rank 0 has checked this text; the others parse the same bytes alike.
    let file = parse_hints_file(&shown, &text).map_err(|_| 2)?;
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

fn memory_per_process(world: &SimpleCommunicator, setting: MemorySetting) -> (u64, u64) {
    let local = world.split_shared(world.rank());
    let mem_total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| crate::validity::parse_meminfo_total(&t))
        .unwrap_or(0);
    let leader = local.rank() == 0;
    let cache_bound = sum_all(world, if leader { mem_total } else { 0 });
    let per = match setting {
        MemorySetting::PerProcess(b) => b,
        MemorySetting::Detect => mem_total / local.size() as u64,
    };
    // Every rank uses rank 0's value so all ranks plan the same MPART.
    let mut agreed = per;
    world.process_at_rank(0).broadcast_into(&mut agreed);
    (agreed, cache_bound)
}

/// What the run was given besides its options: the partitions, the hints and the network
/// selection (on rank 0, every host's).
struct Given<'a> {
    parts: &'a [usize],
    hints: &'a Hints,
    network: Option<benchkit::network::SelectionRecord>,
}

fn run_checked(
    world: &SimpleCommunicator,
    opts: &Options,
    given: Given<'_>,
    signal: &Arc<AtomicUsize>,
    dir_slot: &Arc<Mutex<Option<Arc<rundir::RunDir>>>>,
    watchdog: &benchkit::watchdog::Watchdog,
) -> Result<i32, String> {
    let Given {
        parts,
        hints,
        network,
    } = given;
    let rank = world.rank();
    let n = world.size() as usize;
    let (memory, cache_bound) = memory_per_process(world, opts.memory());
    let mpart = mpart(memory);
    if let Some(code) = exec::refuse_short_memory(world, parts, mpart, opts.posix_baseline) {
        return Ok(code);
    }
    let now = chrono::Local::now();
    let mut info = RunInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        date: now.to_rfc3339(),
        host: benchkit::processor_name(),
        processes: n,
        memory_per_process: memory,
        mpart,
        scheduled_time_s: opts.time,
        partitions: parts.to_vec(),
        path: opts.path.display().to_string(),
        cache_bound,
        noshared: opts.noshared,
        drop_cache: opts.drop_cache,
        check_every_call: opts.check_every_call,
        machine_memory: opts.machine_memory(),
        nounique: opts.nounique,
        rewrite: opts.rewrite,
        keep: opts.keep,
        error_messages: opts.error_messages,
        hints: hints.clone(),
        // Rank 0's, once its output files are reserved (below).
        prefix: None,
        system: report::v21::System::this_machine(),
        file_system: Default::default(),
        ranks_per_core: ranks_per_core(world),
        provenance: None,
        network,
    };
    // Collective: every rank's host, gathered on rank 0.
    info.provenance =
        benchkit::provenance::gather(world, "b_eff_io", &info.version, info.date.clone());

    // The output files, reserved by rank 0 before anything runs, agreed by all; they are
    // released (dropped) on every way out of here.
    let reserved = match rank {
        0 => Outputs::reserve(opts),
        _ => Ok(Outputs::none()),
    };
    let outputs = match benchkit::agree(world, reserved) {
        Ok(outputs) => outputs,
        Err(agreed) => return Ok(agreed.code),
    };
    // The files' header names the prefix they were written under (rank 0's).
    if let Some(prefix) = outputs.summary_prefix() {
        info.prefix = Some(prefix.to_string());
    }
    // What is measured is kept: rank 0 writes the finished partitions and the patterns of
    // the current one after each pattern and partition (`"complete": false` until the
    // end), at a stall (on the watchdog's thread) and when the run stops on an error or a
    // signal.
    let kept = Arc::new(kept::Kept::new(
        outputs,
        opts.time,
        opts.noshared,
        opts.keep,
    ));
    // Rank 0 writes a version after the patterns on a thread of its own, until the end.
    let writer = (rank == 0).then(|| kept.start_writer());
    if rank == 0 {
        let kept = kept.clone();
        watchdog.on_stall(Box::new(move |stall| kept.stalled(&stall.reason())));
    }
    // The run directory, created by rank 0, agreed by all; every rank holds it by a
    // descriptor from here on (rank 0 from its creation), and removes it through that.
    let mut created = None;
    let mut failure = None;
    if rank == 0 {
        match rundir::RunDir::create(
            &opts.path,
            &now.format("%Y%m%dT%H%M%S").to_string(),
            std::process::id(),
        ) {
            Ok(d) => created = Some(Arc::new(d)),
            Err(e) => failure = Some(e),
        }
    }
    agree(world, failure)?;
    let shown = created
        .as_ref()
        .map(|d| d.path().to_path_buf())
        .unwrap_or_default();
    let dir = broadcast_path(world, &shown);
    let held = match created {
        Some(d) => Ok(d),
        None => rundir::RunDir::open(&dir).map(Arc::new),
    };
    if let (Ok(d), Ok(mut g)) = (&held, dir_slot.lock()) {
        *g = Some(d.clone());
    }
    if let (Ok(d), Ok(mut g)) = (&held, kept.held.lock()) {
        *g = Some(d.clone());
    }
    let visible = held.as_ref().err().cloned();
    // A header that cannot be printed stops the run before it starts (said already).
    let mut unprinted = None;
    let outcome = agree(world, visible)
        .map(|()| {
            if let Ok(d) = &held {
                info.file_system = fsprobe::probe(world, &dir, d.dir());
            }
        })
        .and_then(|()| {
            print_header(world, opts, &info, &dir).map_err(|agreed| {
                unprinted = Some(agreed.code);
                String::new()
            })
        })
        .and_then(|()| {
            // Inside the run directory MPI-IO sees short relative names, whatever the
            // length of --path; the working directory comes back when `inside` drops.
            let inside = held
                .as_ref()
                .map_err(Clone::clone)
                .and_then(|d| rundir::Workdir::enter(d));
            agree(world, inside.as_ref().err().cloned())?;
            if let Ok(mut i) = kept.info.lock() {
                *i = Some(info.clone());
            }
            let watch = Watch {
                progress: watchdog.progress(),
                held: held.as_ref().map_err(Clone::clone)?,
                kept: &kept,
            };
            run_partitions(world, opts, &info, signal, &dir, &watch)
        });
    world.barrier();
    if let (0, Ok(d)) = (rank, &held) {
        let done = if opts.keep {
            // Kept on purpose: later runs and --clean leave it alone.
            d.mark_kept()
        } else {
            d.remove()
        };
        if let Err(e) = done {
            outfile::eprintln!("b_eff_io: warning: {e}");
        }
    }
    if let Some(code) = unprinted {
        return Ok(code);
    }
    match outcome {
        Err(e) => {
            // The partitions finished before the failure are kept; with none, no file.
            drop(writer);
            if rank == 0 && kept.measured_any() {
                let why = if e.is_empty() {
                    "stopped by an error (see standard error)".to_string()
                } else {
                    format!("stopped: {}", e.lines().next().unwrap_or_default())
                };
                kept.write_partial(&why);
            }
            Err(e)
        }
        Ok(results) => {
            // Rank 0 is in every partition, so its count is the run's.
            let [errors] = max_all(
                world,
                [results.iter().map(|p| p.errors()).sum::<u64>() as f64],
            );
            // The last step: only rank 0 reports, and leaves with its own code.
            drop(writer);
            let outputs = kept.take_outputs();
            let reported = match rank {
                0 => report_all(opts, &info, &results, outputs),
                _ => 0,
            };
            if rank == 0 && errors > 0.0 {
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
            Ok(match reported {
                0 if errors > 0.0 => Exit::DataErrors.code(),
                code => code,
            })
        }
    }
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
/// directory they check before each open, the finished partitions to keep.
pub(crate) struct Watch<'a> {
    /// The watchdog's progress counter.
    pub progress: benchkit::watchdog::Progress,
    /// The run directory, by its descriptor.
    pub held: &'a Arc<rundir::RunDir>,
    kept: &'a Arc<kept::Kept>,
}

fn run_partitions(
    world: &SimpleCommunicator,
    opts: &Options,
    info: &RunInfo,
    signal: &Arc<AtomicUsize>,
    dir: &Path,
    watch: &Watch<'_>,
) -> Result<Vec<PartitionResult>, String> {
    let (parts, mpart) = (&info.partitions, info.mpart);
    let rank = world.rank() as usize;
    let n = world.size() as usize;
    let total = run_time(opts.time, parts, n);
    let progress = progress::Progress::new(rank == 0, total);
    let mut results = Vec::new();
    for (i, &size) in parts.iter().enumerate() {
        let color = if rank < size {
            Color::with_value(0)
        } else {
            Color::undefined()
        };
        let sub = world.split_by_color(color);
        let outcome = match &sub {
            Some(comm) => {
                // Relative: the working directory is the run directory.
                let sub_dir = PathBuf::from(format!("p{i}.n{size}"));
                let made = if comm.rank() == 0 {
                    std::fs::create_dir(&sub_dir).err().map(|e| {
                        format!(
                            "cannot create '{}': {}",
                            dir.join(&sub_dir).display(),
                            rundir::cause(&e)
                        )
                    })
                } else {
                    None
                };
                let time_s = partition_time(opts.time, size, n);
                let keep_pattern = |a: Access, r: &PatternResult| {
                    if rank == 0 {
                        watch.kept.pattern_done(size, time_s, a, r);
                    }
                };
                agree(comm, made).and_then(|()| {
                    let mut part = exec::Partition {
                        comm,
                        dir: sub_dir,
                        run_dir: dir.to_path_buf(),
                        table: pattern_table(mpart),
                        time_s,
                        noshared: opts.noshared,
                        every_call: opts.check_every_call,
                        posix_baseline: exec::Baseline::asked(opts.posix_baseline),
                        signal: signal.clone(),
                        wbuf: crate::markers::write_buffer((mpart / 8) as usize),
                        rbuf: crate::markers::read_buffer((mpart / 8) as usize),
                        sync_seen: exec::SyncSeen::default(),
                        progress: progress.clone(),
                        watch: watch.progress.clone(),
                        held: watch.held,
                        hints: &info.hints,
                        file_system: &info.file_system,
                        hint_log: Vec::new(),
                        error_limit: opts.error_limit(),
                        on_pattern: &keep_pattern,
                    };
                    run_partition(&mut part, opts.drop_cache, opts.sabotage())
                })
            }
            None => Err(String::new()),
        };
        // Ranks outside the partition wait here; a failure inside reaches everyone.
        watch.progress.at(format!(
            "the end of partition n={size}, waiting for every rank"
        ));
        let failure = match (&sub, &outcome) {
            (Some(_), Err(e)) => Some(e.clone()),
            _ => None,
        };
        agree(world, failure)?;
        if let Ok(r) = outcome {
            if rank == 0 {
                if let Some(w) = crate::anomalies::partition(&r, info.ranks_per_core) {
                    progress.interject(&format!("b_eff_io: WARNING {}", w.message));
                }
                watch.kept.partition_done(r.clone());
            }
            results.push(r);
        }
    }
    progress.finish();
    Ok(results)
}

fn run_partition(
    part: &mut exec::Partition,
    drop_cache: bool,
    sabotage: Sabotage,
) -> Result<PartitionResult, String> {
    let start = mpi::time();
    let mut counts = exec::Counts::new(PATTERN_COUNT);
    let mut access: [AccessResult; 3] = Default::default();
    let mut plan = None;
    for a in Access::ALL {
        if a == Access::Read && sabotage != Sabotage::None {
            let done = (part.comm.rank() == 0)
                .then(|| {
                    damage(&part.dir.join("type2.0"), sabotage)
                        .err()
                        .map(|e| format!("{e} (in '{}')", part.run_dir.display()))
                })
                .flatten();
            agree(part.comm, done)?;
        }
        if a == Access::Read && drop_cache {
            drop_page_cache(part)?;
        }
        let mut patterns = Vec::with_capacity(PATTERN_COUNT);
        let mut types = [TypeTotal::default(); 5];
        for t in PatternType::ALL {
            if a == Access::Write && t == PatternType::Segmented {
                let mpart = part.table[1].chunk;
                plan = Some(segment_plan(
                    &part.table,
                    mpart,
                    &counts.written[0..9],
                    &counts.written[9..17],
                    &counts.written[17..25],
                ));
            }
            let (r, total) =
                part.run_type(t, a, &mut counts, plan.as_ref())
                    .map_err(|e| match t {
                        PatternType::Shared if !e.is_empty() && !explained(&e) => format!(
                            "{e}\nb_eff_io: {}",
                            part.file_system.shared_pointer_advice()
                        ),
                        _ => e,
                    })?;
            patterns.extend(r);
            types[t.index()] = total;
        }
        access[a.index()] = AccessResult { patterns, types };
    }
    let wall_s = mpi::time() - start;
    Ok(PartitionResult {
        posix_baseline: part.posix_baseline.measured(),
        processes: part.comm.size() as usize,
        scheduled_s: part.time_s,
        segment_bytes: plan.map_or(0, |p| p.segment),
        access,
        wall_s,
        hints: std::mem::take(&mut part.hint_log),
    })
}

/// Whether a failure's message already names its cause (a full or read-only file system,
/// a quota, a stale handle, a short read, …): then it is not the shared file pointer's,
/// and type 1's advice about that pointer would mislead.
fn explained(message: &str) -> bool {
    mpiio::Cause::ALL
        .iter()
        .any(|cause| message.contains(cause.advice()))
}

/// The test aids: `--test-corrupt-file` replaces the first 8 bytes of `path` (a chunk's
/// head marker) by a value no marker has, `--test-truncate-file` cuts `path` to half its
/// length, each through the file system as any other writer would.
fn damage(path: &Path, sabotage: Sabotage) -> Result<(), String> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::OpenOptions::new().write(true).open(path);
    match sabotage {
        Sabotage::None => Ok(()),
        Sabotage::Corrupt => {
            file.and_then(|f| f.write_all_at(&0x5a5a_5a5a_5a5a_5a5au64.to_le_bytes(), 0))
        }
        Sabotage::Truncate => file.and_then(|f| f.set_len(f.metadata()?.len() / 2)),
    }
    .map_err(|e| format!("cannot damage '{}': {}", path.display(), rundir::cause(&e)))
}

/// Asks the kernel to drop the benchmark files' cached pages (each rank its own files).
fn drop_page_cache(part: &exec::Partition) -> Result<(), String> {
    let rank = part.comm.rank();
    let mut names = vec![format!("type2.{rank}")];
    if rank == 0 {
        names.extend(["type0", "type1", "type3", "type4"].map(String::from));
    }
    let mut failure = None;
    for name in names {
        let path = part.dir.join(name);
        let r = cache::drop_file_cache(&path);
        if let Err(e) = r {
            failure.get_or_insert(format!(
                "cannot drop the cache of '{}': {}",
                part.run_dir.join(&path).display(),
                rundir::cause(&e)
            ));
        }
    }
    agree(part.comm, failure)
}

/// Rank 0's report at the end: the summary on standard output and every output file,
/// each written whole. Failures are said here; returns the exit code (0 when all went
/// out, 1 when something could not be written, 141 when standard output is a closed
/// pipe). The files are written even when standard output fails.
fn report_all(
    opts: &Options,
    info: &RunInfo,
    results: &[PartitionResult],
    outputs: Outputs,
) -> i32 {
    let errors: u64 = results.iter().map(|p| p.errors()).sum();
    let reasons = invalid_reasons(&ValidityInput {
        scheduled_time_s: opts.time,
        shared_pointer: !opts.noshared,
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
    if !outputs.is_empty() {
        let mut doc = report::json::document(info, results, &reasons);
        doc.mark_ended();
        let json = match serde_json::to_string_pretty(&doc) {
            Ok(text) => text + "\n",
            Err(e) => {
                outfile::eprintln!("b_eff_io: error: cannot render the JSON document: {e}");
                code = Exit::Failure.code();
                String::new()
            }
        };
        let texts = crate::outputs::Texts {
            csv: report::csv::render(&doc),
            json,
            sum: report::v21::summary_file(info, results),
            prot: report::v21::protocol_file(info, results),
        };
        for failure in outputs.write(&texts) {
            outfile::eprintln!("{failure}");
            code = Exit::Failure.code();
        }
    }
    if let Err(e) = printed {
        let failure = crate::outputs::stdout_failure(&e);
        if !failure.message.is_empty() {
            outfile::eprintln!("{}", failure.message);
        }
        code = code.max(failure.code);
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_with_a_named_cause_is_explained() {
        let e = format!(
            "rank 0: write pattern 9 (type 1): MPI_File_write_ordered failed on 'f': … ({})",
            mpiio::Cause::ReadOnly.advice()
        );
        assert!(explained(&e));
        assert!(!explained(
            "rank 0: write pattern 9 (type 1): MPI_File_write_ordered failed on 'f': \
             MPI_ERR_OTHER: known error not in list"
        ));
    }

    #[test]
    fn an_interrupt_on_another_rank_gives_every_rank_its_code() {
        assert_eq!(failure_code(0, "rank 0: interrupted by signal 2"), 130);
        assert_eq!(failure_code(15, "rank 1: interrupted by signal 2"), 143);
        assert_eq!(
            failure_code(0, "rank 0: No space left on device"),
            Exit::Failure.code()
        );
    }
}
