//! The MPI-IO calls of each pattern type and the time-driven loop.

use super::progress::Progress;
use crate::batch::BatchPlanner;
use crate::hints::{before_pattern, FileHints, Hint, Hints, PatternHints};
use crate::markers::{check_with_limit, stamp, ChunkId, DataError};
use crate::patterns::{Pattern, PatternType, Role};
use crate::results::{patterns_time_s, PatternResult, PosixBaseline, TypeTotal};
use crate::schedule::{pattern_time, Access};
use crate::segment::SegmentPlan;
use benchkit::{agree_message as agree, agree_message_max, gather_all, max_all, message_of};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpiio::{AccessMode, Datatype, File};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Everything a partition's patterns need.
pub struct Partition<'a> {
    /// The partition's communicator.
    pub comm: &'a SimpleCommunicator,
    /// The partition's directory, as MPI-IO is given it: relative to the working
    /// directory, which is the run directory while the partitions run
    /// ([`super::rundir::Workdir`]).
    pub dir: PathBuf,
    /// The run directory's absolute path, to name files in messages.
    pub run_dir: PathBuf,
    /// The pattern table.
    pub table: Vec<Pattern>,
    /// Scheduled time of this partition (T·n/N).
    pub time_s: f64,
    /// `--noshared`.
    pub noshared: bool,
    /// `--check-every-call`.
    pub every_call: bool,
    /// `--posix-baseline`: whether asked for, and the measurement once made.
    pub posix_baseline: Baseline,
    /// Signal number received, 0 if none.
    pub signal: Arc<AtomicUsize>,
    /// Write buffer (MPART bytes).
    pub wbuf: Vec<u64>,
    /// Read buffer (MPART bytes).
    pub rbuf: Vec<u64>,
    /// The syncs of the writes so far, to budget the next sync.
    pub sync_seen: SyncSeen,
    /// Progress reporter (rank 0 prints).
    pub progress: Progress,
    /// The watchdog's progress counter: a tick per call, the pattern as the place.
    pub watch: benchkit::watchdog::Progress,
    /// The run directory, by its descriptor: checked before each open.
    pub held: &'a std::sync::Arc<super::rundir::RunDir>,
    /// The MPI-IO hints to give (`--hint`, `-i`).
    pub hints: &'a Hints,
    /// The file system and what the checks at start found.
    pub file_system: &'a crate::filesystem::FileSystem,
    /// What was given and reported of the hints, per file in run order (when any given).
    pub hint_log: Vec<FileHints>,
    /// `-e`: data errors named per pattern and rank.
    pub error_limit: usize,
    /// Called with each pattern measured (the run keeps it at once).
    pub on_pattern: &'a dyn Fn(Access, &PatternResult),
}

struct Open {
    file: File,
    /// The file's path as MPI-IO was given it.
    path: PathBuf,
    /// Type 0's (and `--noshared` type 1's) displacement: bytes all ranks wrote before.
    base: u64,
    /// Types 3 and 4: the segment of each rank.
    segment: u64,
    /// Bytes this rank has written through this handle.
    written: u64,
    /// The hints given at open and as the library reported them after.
    hints: Option<FileHints>,
    /// Keys that a pattern's own hints changed from their values at open.
    changed: Vec<String>,
}

/// `--posix-baseline` through a partition's run: not asked for, asked for and not yet
/// measured, or measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Baseline {
    /// Not asked for.
    Off,
    /// Asked for; measured after the first write of type 2's largest chunk.
    Wanted,
    /// The measurement.
    Measured(PosixBaseline),
}

impl Baseline {
    /// `Wanted` when `asked`, else `Off`.
    pub fn asked(asked: bool) -> Self {
        if asked {
            Baseline::Wanted
        } else {
            Baseline::Off
        }
    }

    /// The measurement, once made.
    pub fn measured(self) -> Option<PosixBaseline> {
        match self {
            Baseline::Measured(b) => Some(b),
            Baseline::Off | Baseline::Wanted => None,
        }
    }
}

/// The closing syncs of the writes so far: their seconds and the bytes they followed,
/// from which the next write's budget expects its own sync.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SyncSeen {
    seconds: f64,
    bytes: u64,
}

impl SyncSeen {
    /// Counts a sync of `seconds` after `bytes` written.
    fn add(&mut self, seconds: f64, bytes: u64) {
        self.seconds += seconds;
        self.bytes += bytes;
    }

    /// The seconds a sync after `bytes` should take at the rate seen so far (0 before
    /// any).
    fn expected_s(&self, bytes: u64) -> f64 {
        if self.bytes == 0 {
            0.0
        } else {
            self.seconds / self.bytes as f64 * bytes as f64
        }
    }
}

/// What one pattern's calls gave on this rank, while its time-driven loop runs.
#[derive(Debug, Default)]
struct Tally {
    /// Calls made (or passed over after a failure).
    done: u64,
    /// The first failed call's message.
    first_error: Option<String>,
    /// Data errors found reading.
    data_errors: u64,
    /// The first `-e` of them, named.
    details: Vec<DataError>,
    /// Global termination checks made.
    checks: u64,
    /// Seconds spent in them.
    check_s: f64,
}

/// One rank's times of a pattern, before the slowest rank's are taken.
#[derive(Debug, Clone, Copy)]
struct LocalTimes {
    /// Barrier to barrier.
    time_s: f64,
    /// In the closing sync.
    sync_s: f64,
    /// In the calls, without the checks.
    io_s: f64,
    /// In the termination checks.
    check_s: f64,
}

/// What ending a pattern gave on this rank.
#[derive(Debug)]
struct Ended {
    /// Barrier to barrier.
    time_s: f64,
    /// In the closing sync.
    sync_s: f64,
    /// The sync's failure, or a file that does not hold what was written: this rank's,
    /// not yet agreed on.
    failure: Option<String>,
}

/// A flag as a value of a maximum reduction.
fn flag(set: bool) -> f64 {
    f64::from(u8::from(set))
}

/// The bytes each rank allocates for its buffers: the write and the read buffer of MPART
/// each, and with `--posix-baseline` a byte copy of the write buffer.
pub fn buffer_bytes(mpart: u64, posix_baseline: bool) -> u64 {
    mpart.saturating_mul(if posix_baseline { 3 } else { 2 })
}

/// The calls each pattern's write made in one partition, by pattern number: where its
/// data lies in the file, and how often rewrite and read repeat it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counts {
    /// Write calls by pattern number.
    pub written: Vec<u64>,
}

impl Counts {
    /// No calls yet, for `patterns` patterns.
    pub fn new(patterns: usize) -> Self {
        Counts {
            written: vec![0; patterns],
        }
    }
}

/// How many calls a pattern makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Calls {
    /// Exactly this many, with no global check among them: rewrite and read (what the
    /// write put in the file, every byte), the writes of types 3 and 4 (the segment
    /// plan's counts), the pattern that opens a segment and the filler that closes it.
    Exactly(u64),
    /// As many as fit the budget, with global checks between growing batches: the
    /// writes of types 0 to 2.
    Budget,
}

/// Where a file of type `ptype` ends once each of `ranks` ranks has written `written`
/// bytes into it (every rank writes as much as the others): type 2's file is the rank's
/// own, types 3 and 4 give each rank a segment of `segment` bytes, types 0 and 1
/// interleave the ranks' chunks.
pub fn expected_end(ptype: PatternType, ranks: u64, segment: u64, written: u64) -> u64 {
    match ptype {
        PatternType::Separate => written,
        PatternType::Segmented | PatternType::SegmentedCollective => {
            ranks.saturating_sub(1) * segment + written
        }
        PatternType::Scatter | PatternType::Shared => ranks * written,
    }
}

/// `write pattern 3 (type 0)`: where a message comes from.
/// How long a file's size may take to show every rank's writes on a client of a cluster
/// file system before a short file counts as bytes lost (seconds).
pub const SIZE_SETTLE_S: u64 = 5;

fn context(access: Access, p: &Pattern) -> String {
    format!(
        "{} pattern {} (type {})",
        access.name(),
        p.number,
        p.ptype.index()
    )
}

/// Collective, before any buffer is allocated: whether the buffers of the ranks of each
/// node fit in what the node gives (`MemAvailable`, the memory cgroup limit;
/// [`benchkit::memory`]). Ranks beyond the largest of `partitions` allocate nothing. On a
/// shortage rank 0 says so, naming the host and both figures, and every rank gets
/// `Some(2)`.
pub fn refuse_short_memory(
    world: &SimpleCommunicator,
    partitions: &[usize],
    mpart: u64,
    posix_baseline: bool,
) -> Option<i32> {
    let largest = partitions.iter().copied().max().unwrap_or(0);
    let need = if (world.rank() as usize) < largest {
        buffer_bytes(mpart, posix_baseline)
    } else {
        0
    };
    let shortage = benchkit::memory::agree_fits(world, need).err()?;
    if world.rank() == 0 {
        outfile::eprintln!(
            "b_eff_io: error: not enough memory for the buffers ({} bytes per process, \
             MPART = {mpart} bytes): {shortage}; ask for less with --memory-per-process",
            buffer_bytes(mpart, posix_baseline)
        );
    }
    Some(2)
}

/// Whether the file system holding `dir` has no free block left (for anyone, root
/// included). A hint only, to stop a time-driven write early: the file's size after the
/// sync decides.
fn no_free_block(dir: &Path) -> bool {
    nix::sys::statvfs::statvfs(dir).is_ok_and(|s| s.blocks_free() == 0)
}

impl Partition<'_> {
    fn rank(&self) -> usize {
        self.comm.rank() as usize
    }
    fn n(&self) -> u64 {
        self.comm.size() as u64
    }

    /// The path of `file` (as MPI-IO sees it) for messages.
    fn shown(&self, file: &Path) -> PathBuf {
        self.run_dir.join(file)
    }

    /// The message of an MPI-IO failure, naming the file by its full path. A run (or
    /// partition) directory removed or replaced since the last check is the cause, said
    /// first: the library only sees a file that is not there.
    fn io_message(&self, e: mpiio::Error) -> String {
        let full = self.shown(Path::new(e.file())).display().to_string();
        let e = e.with_file(full);
        if let Some(gone) = self.held.missing().or_else(|| self.partition_missing(&e)) {
            format!("{gone} ({e})")
        } else if let Some(cause) = e.cause() {
            format!("{e} ({})", cause.advice())
        } else {
            e.to_string()
        }
    }

    /// After a "no such file" failure: whether this partition's directory is gone. A
    /// removal of the whole run directory (`rm -r`, a scratch purge) empties it from the
    /// leaves up, so its subdirectories vanish before its name does.
    fn partition_missing(&self, e: &mpiio::Error) -> Option<String> {
        e.is_no_such_file().then(|| self.partition_gone()).flatten()
    }

    /// Whether this partition's directory is no longer there (as a directory).
    fn partition_gone(&self) -> Option<String> {
        (!self.held.dir().is_real_dir(self.dir.as_os_str())).then(|| {
            format!(
                "the partition directory '{}' was removed (or renamed) by another process \
                 while the run used it",
                self.shown(&self.dir).display()
            )
        })
    }

    /// Whether `path` (a file this run wrote, to be opened again) is no longer there.
    fn file_gone(&self, path: &Path) -> Option<String> {
        matches!(self.held.dir().stat(path.as_os_str()), Ok(None)).then(|| {
            format!(
                "'{}', written by this run, was removed (or renamed) by another process while \
                 the run used it",
                self.shown(path).display()
            )
        })
    }

    fn interrupted(&self) -> Option<String> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            s => Some(format!("interrupted by signal {s}")),
        }
    }

    fn file_path(&self, ptype: PatternType) -> PathBuf {
        match ptype {
            PatternType::Separate => self.dir.join(format!("type2.{}", self.rank())),
            t => self.dir.join(format!("type{}", t.index())),
        }
    }

    fn strided(&self, ptype: PatternType) -> bool {
        ptype == PatternType::Scatter || (ptype == PatternType::Shared && self.noshared)
    }

    /// Opens the type's file (collectively, but for type 2) and sets the segment view of
    /// types 3 and 4. Every step that may fail on some ranks only is agreed on before the
    /// next collective one.
    fn open(&self, ptype: PatternType, access: Access, segment: u64) -> Result<Open, String> {
        agree(self.comm, self.interrupted())?;
        // A run directory removed (or replaced) meanwhile is said on every rank, before
        // the library's own error path (Open MPI 4.1 crashed in it) is reached. `rm -r`
        // empties it from the leaves up, so the partition's directory and the file to
        // reopen are looked at too: the run directory's name stays while they go.
        let path = self.file_path(ptype);
        let gone = self
            .held
            .missing()
            .or_else(|| self.partition_gone())
            .or_else(|| {
                (access != Access::Write)
                    .then(|| self.file_gone(&path))
                    .flatten()
            });
        agree(self.comm, gone)?;
        self.watch.at(format!(
            "partition n={}, opening the type {} file for {}",
            self.n(),
            ptype.index(),
            access.name()
        ));
        let mode = match access {
            Access::Write => AccessMode::CREATE | AccessMode::WRITE_ONLY,
            Access::Rewrite => AccessMode::WRITE_ONLY,
            Access::Read => AccessMode::READ_ONLY,
        };
        let given: Vec<Hint> = self.hints.at_open(self.n() as usize, access, ptype);
        let opened = if ptype == PatternType::Separate {
            File::open_with_info(&SimpleCommunicator::self_comm(), &path, mode, &given)
        } else {
            File::open_with_info(self.comm, &path, mode, &given)
        };
        let failure = opened.as_ref().err().map(|e| self.io_message(e.clone()));
        if let Err(e) = agree(self.comm, failure) {
            // Closing is collective: ranks whose open succeeded cannot close alone.
            if let Ok(file) = opened {
                if ptype == PatternType::Separate {
                    let _ = file.close();
                } else {
                    file.abandon();
                }
            }
            return Err(e);
        }
        let file = match opened {
            Ok(f) => f,
            Err(e) => return Err(self.io_message(e)),
        };
        // Rank 0's report is the one shown (its type 2 file stands for the others').
        let hints = (!self.hints.is_empty()).then(|| FileHints {
            access,
            ptype,
            reported: file.info(),
            given,
            patterns: Vec::new(),
        });
        let mut open = Open {
            file,
            path,
            base: 0,
            segment,
            written: 0,
            hints,
            changed: Vec::new(),
        };
        if matches!(
            ptype,
            PatternType::Segmented | PatternType::SegmentedCollective
        ) {
            let u = Datatype::of::<u64>();
            let view = open
                .file
                .set_view((self.rank() as u64 * segment) as i64, &u, &u);
            agree(self.comm, view.err().map(|e| self.io_message(e)))?;
        }
        Ok(open)
    }

    /// Before pattern `p`: the hints file's hints for its chunk size, and the values at
    /// open of keys an earlier pattern changed, with `MPI_File_set_info` (collective, the
    /// same on every rank); recorded with what the library reports after.
    fn pattern_hints(&self, open: &mut Open, p: &Pattern, access: Access) -> Result<(), String> {
        if !self.hints.per_pattern() {
            return Ok(());
        }
        let Some(log) = open.hints.as_mut() else {
            return Ok(());
        };
        let want = self
            .hints
            .for_pattern(self.n() as usize, access, p, self.table[1].chunk);
        let (set, changed) = before_pattern(&want, &open.changed, &log.given, &log.reported);
        open.changed = changed;
        if set.is_empty() {
            return Ok(());
        }
        let done = open.file.set_info(&set);
        agree(
            self.comm,
            done.err()
                .map(|e| format!("{}: {}", context(access, p), self.io_message(e))),
        )?;
        log.patterns.push(PatternHints {
            number: p.number,
            chunk: p.chunk,
            given: set,
            reported: open.file.info(),
        });
        Ok(())
    }

    /// After a write pattern's sync: whether the file holds what was written into it. A
    /// file system that refuses bytes while the library reports success (Open MPI 4.1's
    /// collective writes on a full disk) leaves a file shorter than that.
    fn short_file(&self, p: &Pattern, access: Access, open: &Open, written: u64) -> Option<String> {
        let expected = expected_end(p.ptype, self.n(), open.segment, written);
        let name = self.shown(&open.path);
        // A client of a cluster file system may show another client's writes late in the
        // file's size (attribute caches: FUSE's and GlusterFS's 1 s, NFS's 3 s and more):
        // a short size is asked again until it is right or SIZE_SETTLE_S has passed.
        let settle = std::time::Instant::now() + std::time::Duration::from_secs(SIZE_SETTLE_S);
        let mut size = open.file.size();
        while matches!(size, Ok(s) if (s.max(0) as u64) < expected)
            && std::time::Instant::now() < settle
        {
            std::thread::sleep(std::time::Duration::from_millis(100));
            size = open.file.size();
        }
        match size {
            Err(e) => Some(format!("{}: {}", context(access, p), self.io_message(e))),
            Ok(size) if (size.max(0) as u64) < expected => Some(format!(
                "{}: '{}' holds {size} bytes, but {expected} bytes were written into it: {}",
                context(access, p),
                name.display(),
                if p.ptype == PatternType::Shared {
                    "the ranks' writes overlapped or the file system did not take them all"
                } else if self
                    .file_system
                    .visibility
                    .as_ref()
                    .is_some_and(|v| v.missing())
                {
                    "the file system did not take them all, or this client does not see the \
                     other clients' writes (see 'file system' in the header)"
                } else {
                    "the file system did not take them all: it is full, or a quota is exceeded"
                }
            )),
            Ok(_) => None,
        }
    }

    /// Runs all patterns of one type under one access method. `counts` holds each
    /// pattern's write calls, filled in by write; rewrite and read make exactly as many.
    pub fn run_type(
        &mut self,
        ptype: PatternType,
        access: Access,
        counts: &mut Counts,
        segment: Option<&SegmentPlan>,
    ) -> Result<(Vec<PatternResult>, TypeTotal), String> {
        let patterns: Vec<Pattern> = self
            .table
            .iter()
            .filter(|p| p.ptype == ptype)
            .copied()
            .collect();
        let first = patterns[0].number;
        let seg_bytes = segment.map_or(0, |s| s.segment);
        self.comm.barrier();
        let t0 = mpi::time();
        let mut open = self.open(ptype, access, seg_bytes)?;
        self.comm.barrier();
        let open_local = mpi::time() - t0;
        let mut results = Vec::with_capacity(patterns.len());
        for mut p in patterns {
            if p.role == Role::Filler {
                let filler = segment.map_or(0, |s| s.filler);
                p.chunk = filler;
                p.memory = filler;
            }
            let calls = match (access, p.role, ptype) {
                (_, Role::Open, _) | (_, Role::Filler, _) => Calls::Exactly(1),
                (Access::Write, _, PatternType::Segmented | PatternType::SegmentedCollective) => {
                    match segment.and_then(|s| s.repeats.get(p.number - first)) {
                        Some(&r) => Calls::Exactly(r),
                        None => return Err(format!("no segment plan for pattern {}", p.number)),
                    }
                }
                (Access::Write, _, _) => Calls::Budget,
                _ => Calls::Exactly(counts.written[p.number]),
            };
            self.pattern_hints(&mut open, &p, access)?;
            let r = self.run_pattern(&mut open, p, access, calls)?;
            if access == Access::Write {
                counts.written[p.number] = r.repeats;
            }
            let largest = p.chunk == self.table[1].chunk && p.role == Role::Measured;
            if self.posix_baseline == Baseline::Wanted
                && access == Access::Write
                && ptype == PatternType::Separate
                && largest
            {
                self.posix_baseline = Baseline::Measured(self.posix_write(&r)?);
            }
            self.progress.pattern(self.comm.size() as usize, access, &r);
            (self.on_pattern)(access, &r);
            if self.rank() == 0 {
                if let Some(w) = crate::anomalies::pattern(self.comm.size() as usize, access, &r) {
                    self.progress
                        .interject(&format!("b_eff_io: WARNING {}", w.message));
                }
            }
            results.push(r);
        }
        let tc = mpi::time();
        let closed = open.file.close();
        agree(self.comm, closed.err().map(|e| self.io_message(e)))?;
        self.comm.barrier();
        let end = mpi::time();
        if let Some(log) = open.hints {
            self.hint_log.push(log);
        }
        let [open_s, close_s, wall_s] = max_all(self.comm, [open_local, end - tc, end - t0]);
        let bytes = results.iter().map(|r| r.bytes).sum();
        let patterns_s = patterns_time_s(&results);
        Ok((
            results,
            TypeTotal {
                bytes,
                open_s,
                patterns_s,
                close_s,
                wall_s,
            },
        ))
    }

    /// Writes the bytes of `r` (a separate-file pattern) again with plain POSIX calls,
    /// every rank into a file of its own, timed as the patterns are.
    fn posix_write(&mut self, r: &PatternResult) -> Result<PosixBaseline, String> {
        use std::io::Write;
        let path = self.dir.join(format!("posix.{}", self.rank()));
        let words = (r.pattern.memory / 8) as usize;
        let buf: Vec<u8> = self.wbuf[..words]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        self.comm.barrier();
        let t0 = mpi::time();
        let outcome = std::fs::File::create_new(&path).and_then(|mut f| {
            for _ in 0..r.repeats {
                f.write_all(&buf)?;
            }
            let ts = mpi::time();
            f.sync_all()?;
            Ok(mpi::time() - ts)
        });
        self.comm.barrier();
        let local = mpi::time() - t0;
        let _ = std::fs::remove_file(&path);
        let failure = outcome.as_ref().err().map(|e| {
            format!(
                "--posix-baseline: cannot write '{}': {}",
                self.shown(&path).display(),
                super::rundir::cause(e)
            )
        });
        agree(self.comm, failure)?;
        let sync = outcome.unwrap_or_default();
        let [time_s, sync_s] = max_all(self.comm, [local, sync]);
        Ok(PosixBaseline {
            pattern: r.pattern.number,
            bytes: r.bytes,
            time_s,
            sync_s,
        })
    }

    /// Runs pattern `p` under `access`: its view (strided types), its calls as the time
    /// budget allows, the steps that end it, and its result. Collective; every rank makes
    /// the same collective calls in the same order, failures agreed on before the next.
    fn run_pattern(
        &mut self,
        open: &mut Open,
        p: Pattern,
        access: Access,
        calls: Calls,
    ) -> Result<PatternResult, String> {
        if self.strided(p.ptype) {
            self.set_strided_view(open, &p)?;
        }
        let (budget, planner) = self.batch_planner(&p, access);
        self.watch
            .at(format!("partition n={}, {}", self.n(), context(access, &p)));
        // The library's own lines on standard error wait until the pattern is over.
        let quiet =
            super::quiet::Capture::start(format!("rank {}, {}", self.rank(), context(access, &p)));
        self.comm.barrier();
        let t0 = mpi::time();
        let mut tally = self.pattern_calls(&mut open.file, &p, access, calls, planner, t0);
        let io_s = mpi::time() - t0 - tally.check_s;
        let failure = tally.first_error.take();
        let ended = self.end_pattern(open, &p, access, t0, tally.done, failure)?;
        if let Some(q) = quiet {
            q.finish();
        }
        let local = LocalTimes {
            time_s: ended.time_s,
            sync_s: ended.sync_s,
            io_s,
            check_s: tally.check_s,
        };
        let r = self.pattern_result(p, access, budget, &tally, local, ended.failure)?;
        self.note_for_next_patterns(open, access, &r);
        Ok(r)
    }

    /// The view of a strided type (0, and 1 with `--noshared`) for pattern `p`
    /// (collective): from the type's base on, each rank sees its own chunk of every `n`
    /// chunks.
    fn set_strided_view(&self, open: &mut Open, p: &Pattern) -> Result<(), String> {
        let chunk_words = (p.chunk / 8) as usize;
        let u = Datatype::of::<u64>();
        let filetype = Datatype::contiguous(chunk_words, &u)
            .and_then(|c| c.resized(0, (self.n() * p.chunk) as isize));
        let made = filetype.as_ref().err().map(|e| self.io_message(e.clone()));
        agree(self.comm, made)?;
        if let Ok(ft) = &filetype {
            let view =
                open.file
                    .set_view((open.base + self.rank() as u64 * p.chunk) as i64, &u, ft);
            agree(self.comm, view.err().map(|e| self.io_message(e)))?;
        }
        Ok(())
    }

    /// Pattern `p`'s time budget (seconds) and the planner of its batches (used by the
    /// time-driven writes), which expects each call to add its bytes' share of the
    /// closing sync, at the rate the partition's writes have measured so far.
    fn batch_planner(&self, p: &Pattern, access: Access) -> (f64, BatchPlanner) {
        let budget = pattern_time(self.time_s, p.u);
        let extra = if access == Access::Write {
            self.sync_seen.expected_s(p.memory * self.n())
        } else {
            0.0
        };
        let mut planner = BatchPlanner::new(budget, extra);
        if self.every_call {
            planner = planner.check_every_call();
        }
        (budget, planner)
    }

    /// The calls of pattern `p`, begun at `t0`: exactly the count asked for, with no
    /// collective among them but the calls themselves, or (a time-driven write) batches
    /// as `planner` sizes them, each followed by a global check
    /// ([`Self::termination_check`]).
    fn pattern_calls(
        &mut self,
        file: &mut File,
        p: &Pattern,
        access: Access,
        calls: Calls,
        mut planner: BatchPlanner,
        t0: f64,
    ) -> Tally {
        let mut tally = Tally::default();
        // Types 0, 1 and 4 call collectively (type 0 and `--noshared` type 1 through the
        // strided view): the other ranks wait in each such call.
        let collective = matches!(
            p.ptype,
            PatternType::Scatter | PatternType::Shared | PatternType::SegmentedCollective
        );
        match calls {
            Calls::Exactly(n) => {
                for _ in 0..n {
                    self.call(file, p, access, collective, &mut tally);
                }
            }
            Calls::Budget => {
                let mut batch = planner.first();
                loop {
                    for _ in 0..batch {
                        self.call(file, p, access, collective, &mut tally);
                    }
                    let Some(elapsed) = self.termination_check(access, t0, &mut tally) else {
                        break;
                    };
                    match planner.next(tally.done, elapsed) {
                        Some(b) => batch = b,
                        None => break,
                    }
                }
            }
        }
        tally
    }

    /// The next call of pattern `p` (the `tally.done`-th), counted in `tally` with its
    /// first failure and the data errors it found. A rank that failed or was interrupted
    /// stops moving data: it passes over its further calls, and makes its `collective`
    /// ones, which the other ranks wait in, with no data. The failure or the signal is
    /// agreed on at the pattern's end (or at the next global check).
    fn call(
        &mut self,
        file: &mut File,
        p: &Pattern,
        access: Access,
        collective: bool,
        tally: &mut Tally,
    ) {
        self.watch.tick();
        let stopped = tally.first_error.is_some() || self.signal.load(Ordering::Relaxed) != 0;
        if stopped && !collective {
            tally.done += 1;
            return;
        }
        let id = ChunkId {
            access,
            pattern: p.number,
            rank: self.rank(),
            first_seq: tally.done * p.chunks_per_call(),
        };
        let r = match access {
            Access::Write | Access::Rewrite => self.write_call(file, p, id, stopped),
            Access::Read => self
                .read_call(file, p, id, stopped, &mut tally.details)
                .map(|found| tally.data_errors += found),
        };
        if let Err(e) = r {
            if tally.first_error.is_none() {
                tally.first_error = Some(format!("{}: {}", context(access, p), self.io_message(e)));
            }
        }
        tally.done += 1;
    }

    /// One write (or rewrite) call of pattern `p`: the write buffer's markers stamped for
    /// `id`, then written individually, collectively or in rank order by pattern type;
    /// nothing written when `empty` (a stopped rank's part in a collective call).
    fn write_call(
        &mut self,
        file: &mut File,
        p: &Pattern,
        id: ChunkId,
        empty: bool,
    ) -> mpiio::Result<()> {
        let strided = self.strided(p.ptype);
        let words = if empty { 0 } else { (p.memory / 8) as usize };
        let buf = &mut self.wbuf[..words];
        stamp(buf, (p.chunk / 8) as usize, id);
        match p.ptype {
            _ if strided => file.write_all(buf),
            PatternType::Shared => file.write_ordered(buf),
            PatternType::Separate | PatternType::Segmented => file.write(buf),
            _ => file.write_all(buf),
        }
    }

    /// One read call of pattern `p`, individual, collective or in rank order by pattern
    /// type, and its markers checked against `id`: the data errors found (the first
    /// `-e` of the pattern named in `details`). Nothing read when `empty`.
    fn read_call(
        &mut self,
        file: &mut File,
        p: &Pattern,
        id: ChunkId,
        empty: bool,
        details: &mut Vec<DataError>,
    ) -> mpiio::Result<u64> {
        let strided = self.strided(p.ptype);
        let words = if empty { 0 } else { (p.memory / 8) as usize };
        let buf = &mut self.rbuf[..words];
        match p.ptype {
            _ if strided => file.read_all(buf),
            PatternType::Shared => file.read_ordered(buf),
            PatternType::Separate | PatternType::Segmented => file.read(buf),
            _ => file.read_all(buf),
        }?;
        if empty {
            return Ok(0);
        }
        let chunk_words = (p.chunk / 8) as usize;
        Ok(check_with_limit(
            buf,
            chunk_words,
            id,
            details,
            self.error_limit,
        ))
    }

    /// The global check between two batches (collective): the slowest rank's time since
    /// `t0`, or `None` when the pattern stops because a rank failed or was interrupted
    /// or, writing, found no free block left.
    fn termination_check(&self, access: Access, t0: f64, tally: &mut Tally) -> Option<f64> {
        let local_fail = tally.first_error.is_some() || self.interrupted().is_some();
        let full = access == Access::Write && no_free_block(&self.dir);
        tally.checks += 1;
        let tc = mpi::time();
        let [elapsed, fail, full] =
            max_all(self.comm, [mpi::time() - t0, flag(local_fail), flag(full)]);
        tally.check_s += mpi::time() - tc;
        // A full disk ends the pattern early; the file's size decides at its end
        // ([`Self::end_pattern`]) whether it took what was written.
        if fail > 0.0 || full > 0.0 {
            None
        } else {
            Some(elapsed)
        }
    }

    /// The steps that end pattern `p` after its `done` calls (collective): a failure or
    /// a signal on any rank agreed on (with, for writes, whether the file system is
    /// full, in the same reduction), for writes `MPI_File_sync`, the barrier that ends
    /// the timed window, and for writes the check that the file holds what was written.
    /// A failure of the sync or of that check is this rank's alone until
    /// [`Self::pattern_result`] agrees on it.
    fn end_pattern(
        &mut self,
        open: &mut Open,
        p: &Pattern,
        access: Access,
        t0: f64,
        done: u64,
        failure: Option<String>,
    ) -> Result<Ended, String> {
        let writes = access != Access::Read;
        // Every rank learns of a failure on any rank before the sync, a collective call
        // that a failing rank would otherwise skip while the others wait in it.
        let full = writes && no_free_block(&self.dir);
        let [full] = agree_message_max(
            self.comm,
            failure.or_else(|| self.interrupted()),
            [flag(full)],
        )?;
        if writes {
            open.written += done * p.memory;
        }
        if full > 0.0 {
            // On a full disk some ranks' MPI_File_sync can fail before the barrier inside
            // it while the others wait in that barrier (Open MPI 5's ompio does), and no
            // agreement of ours can reach them there. So the ranks first check together
            // that the file holds what was written, and stop before the sync when not.
            agree(self.comm, self.short_file(p, access, open, open.written))?;
        }
        let mut sync_s = 0.0;
        let mut synced = Ok(());
        if writes {
            let ts = mpi::time();
            synced = open.file.sync();
            sync_s = mpi::time() - ts;
        }
        self.comm.barrier();
        let time_s = mpi::time() - t0;
        let failure = match synced {
            Err(e) => Some(format!("{}: {}", context(access, p), self.io_message(e))),
            Ok(()) if writes => self.short_file(p, access, open, open.written),
            Ok(()) => None,
        };
        Ok(Ended {
            time_s,
            sync_s,
            failure,
        })
    }

    /// Prints this rank's named data errors of pattern `p` on standard error.
    fn print_data_errors(&self, p: &Pattern, access: Access, details: &[DataError]) {
        // One write per line, so that the lines of ranks printing at once stay whole.
        let lines: String = details
            .iter()
            .map(|d| {
                format!(
                    "b_eff_io: data error, rank {}, pattern {} ({}): {d}\n",
                    self.rank(),
                    p.number,
                    access.name()
                )
            })
            .collect();
        if !lines.is_empty() {
            let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), lines.as_bytes());
        }
    }

    /// The result of pattern `p` (collective, one all-gather of every rank's figures):
    /// the slowest rank's time and the parts of that same rank's time (so that they add
    /// up to it), the data errors of all ranks (each rank's named ones printed on the
    /// way), the bytes of all ranks; or the lowest failing rank's `failure`, on every rank.
    fn pattern_result(
        &self,
        p: Pattern,
        access: Access,
        budget: f64,
        tally: &Tally,
        local: LocalTimes,
        failure: Option<String>,
    ) -> Result<PatternResult, String> {
        self.print_data_errors(&p, access, &tally.details);
        let all = gather_all(
            self.comm,
            [
                local.time_s,
                local.sync_s,
                local.io_s,
                local.check_s,
                // Exact: counts far below 2^53.
                tally.data_errors as f64,
                flag(failure.is_some()),
            ],
        );
        if let Some(first) = all.iter().position(|v| v[5] > 0.0) {
            return Err(message_of(self.comm, first as i32, failure));
        }
        // The slowest rank, the lowest of equals.
        let slowest = (0..all.len()).fold(0, |s, i| if all[i][0] > all[s][0] { i } else { s });
        let [time_s, sync_s, io_s, check_s, ..] = all[slowest];
        let errors = all.iter().map(|v| v[4] as u64).sum();
        Ok(PatternResult {
            pattern: p,
            scheduled_s: budget,
            repeats: tally.done,
            bytes: tally.done * p.memory * self.n(),
            time_s,
            sync_s,
            errors,
            checks: tally.checks,
            io_s,
            check_s,
        })
    }

    /// What the next patterns need of `r`: a write's sync time for their budgets, and a
    /// strided type's new base past the chunks `r` covered.
    fn note_for_next_patterns(&mut self, open: &mut Open, access: Access, r: &PatternResult) {
        if access == Access::Write {
            self.sync_seen.add(r.sync_s, r.bytes);
        }
        let p = &r.pattern;
        if self.strided(p.ptype) {
            open.base += self.n() * p.chunk * r.repeats * p.chunks_per_call();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::MB;

    #[test]
    fn the_end_of_each_type_of_file() {
        // Three ranks, 5 MB each so far.
        assert_eq!(expected_end(PatternType::Scatter, 3, 0, 5 * MB), 15 * MB);
        assert_eq!(expected_end(PatternType::Shared, 3, 0, 5 * MB), 15 * MB);
        assert_eq!(expected_end(PatternType::Separate, 3, 0, 5 * MB), 5 * MB);
        // Segments of 8 MB: the last rank's segment ends the file.
        assert_eq!(
            expected_end(PatternType::Segmented, 3, 8 * MB, 5 * MB),
            21 * MB
        );
        assert_eq!(
            expected_end(PatternType::SegmentedCollective, 3, 8 * MB, 8 * MB),
            24 * MB
        );
    }

    #[test]
    fn buffers_are_two_mparts_and_three_with_the_posix_baseline() {
        assert_eq!(buffer_bytes(16 * MB, false), 32 * MB);
        assert_eq!(buffer_bytes(16 * MB, true), 48 * MB);
        assert_eq!(buffer_bytes(u64::MAX, false), u64::MAX);
    }
}
