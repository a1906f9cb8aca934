//! The MPI-IO calls of each pattern type and the time-driven loop.

use super::progress::Progress;
use crate::batch::BatchPlanner;
use crate::hints::{before_pattern, FileHints, Hint, Hints, PatternHints};
use crate::markers::{check_with_limit, stamp, ChunkId, DataError};
use crate::patterns::{Pattern, PatternType, Role};
use crate::results::{patterns_time_s, PatternResult, PosixBaseline, TypeTotal};
use crate::schedule::{pattern_time, Access};
use crate::segment::SegmentPlan;
use benchkit::{agree_message as agree, max_all, sum_all};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpiio::{AccessMode, Datatype, File, Whence};
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
    /// The factor on rewrite's and read's budgets (1; less only in tests).
    pub reread_budget: f64,
    /// `--posix-baseline`: `Some` when asked for, holding the measurement once made.
    pub posix_baseline: Option<Option<PosixBaseline>>,
    /// Signal number received, 0 if none.
    pub signal: Arc<AtomicUsize>,
    /// Write buffer (MPART bytes).
    pub wbuf: Vec<u64>,
    /// Read buffer (MPART bytes).
    pub rbuf: Vec<u64>,
    /// Sync seconds and bytes written so far, to budget the next sync.
    pub sync_seen: (f64, u64),
    /// Progress reporter (rank 0 prints).
    pub progress: Progress,
    /// The MPI-IO hints to give (`--hint`, `-i`).
    pub hints: &'a Hints,
    /// The file system and what the checks at start found.
    pub file_system: &'a crate::filesystem::FileSystem,
    /// What was given and reported of the hints, per file in run order (when any given).
    pub hint_log: Vec<FileHints>,
    /// `-e`: data errors named per pattern and rank.
    pub error_limit: usize,
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

/// The bytes each rank allocates for its buffers: the write and the read buffer of MPART
/// each, and with `--posix-baseline` a byte copy of the write buffer.
pub fn buffer_bytes(mpart: u64, posix_baseline: bool) -> u64 {
    mpart.saturating_mul(if posix_baseline { 3 } else { 2 })
}

/// The calls each pattern made in one partition, by pattern number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counts {
    /// By the write: where each pattern's data lies in the file.
    pub written: Vec<u64>,
    /// By the last access: how many calls the next one may repeat.
    pub readable: Vec<u64>,
}

impl Counts {
    /// No calls yet, for `patterns` patterns.
    pub fn new(patterns: usize) -> Self {
        Counts {
            written: vec![0; patterns],
            readable: vec![0; patterns],
        }
    }
}

/// How many calls a pattern makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Calls {
    /// Exactly this many, unbudgeted: the pattern that opens a segment and the filler
    /// that closes it (one call each).
    Exactly(u64),
    /// As many as fit the pattern's time budget, but no more than this: rewrite and read
    /// (not beyond what the write put in the file) and the writes of types 3 and 4
    /// (not beyond the segment's plan). The termination rule applies to them as to
    /// every pattern, so a slow moment cannot stretch a run far past its schedule.
    AtMost(u64),
    /// As many as fit the budget: the writes of types 0 to 2.
    Budget,
}

impl Calls {
    /// The most calls the pattern may make.
    fn cap(self) -> u64 {
        match self {
            Calls::Exactly(n) | Calls::AtMost(n) => n,
            Calls::Budget => u64::MAX,
        }
    }
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
        eprintln!(
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

    /// The message of an MPI-IO failure, naming the file by its full path.
    fn io_message(&self, e: mpiio::Error) -> String {
        let full = self.shown(Path::new(e.file())).display().to_string();
        let e = e.with_file(full);
        if e.is_no_space() {
            format!("{e} (is the disk full?)")
        } else {
            e.to_string()
        }
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
        let mode = match access {
            Access::Write => AccessMode::CREATE | AccessMode::WRITE_ONLY,
            Access::Rewrite => AccessMode::WRITE_ONLY,
            Access::Read => AccessMode::READ_ONLY,
        };
        let path = self.file_path(ptype);
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
                    "the file system did not take them all (is the disk full?)"
                }
            )),
            Ok(_) => None,
        }
    }

    /// Runs all patterns of one type under one access method. `counts` holds each
    /// pattern's calls: `written` filled in by write (the file's layout), `readable` by
    /// every access (what the next one may repeat: rewrite and read stop at their budget,
    /// and read checks only what rewrite stamped).
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
                        Some(&r) => Calls::AtMost(r),
                        None => return Err(format!("no segment plan for pattern {}", p.number)),
                    }
                }
                (Access::Write, _, _) => Calls::Budget,
                _ => Calls::AtMost(counts.readable[p.number]),
            };
            self.pattern_hints(&mut open, &p, access)?;
            let r = self.run_pattern(&mut open, p, access, calls)?;
            counts.readable[p.number] = r.repeats;
            if access == Access::Write {
                counts.written[p.number] = r.repeats;
            } else {
                let skipped = counts.written[p.number].saturating_sub(r.repeats);
                self.skip_calls(&mut open, &p, skipped)?;
            }
            let largest = p.chunk == self.table[1].chunk && p.role == Role::Measured;
            if matches!(self.posix_baseline, Some(None))
                && access == Access::Write
                && ptype == PatternType::Separate
                && largest
            {
                self.posix_baseline = Some(Some(self.posix_write(&r)?));
            }
            self.progress.pattern(self.comm.size() as usize, access, &r);
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

    /// Moves past the calls of `p` that this access left out (it stopped at its budget
    /// before the write's count), so that the next pattern starts where the write put it:
    /// the strided types' base, the shared pointer (collective), or the individual one.
    fn skip_calls(&mut self, open: &mut Open, p: &Pattern, calls: u64) -> Result<(), String> {
        if calls == 0 {
            return Ok(());
        }
        let n = self.n();
        if self.strided(p.ptype) {
            open.base += n * p.chunk * calls * p.chunks_per_call();
            return Ok(());
        }
        let moved = match p.ptype {
            // The default view: offsets in bytes, the shared pointer moved by all ranks'.
            PatternType::Shared => open
                .file
                .seek_shared((calls * p.memory * n) as i64, Whence::Current),
            // A file of the rank's own, default view: bytes.
            PatternType::Separate => open.file.seek((calls * p.memory) as i64, Whence::Current),
            // The segment view's elementary type is a u64.
            _ => open
                .file
                .seek((calls * p.memory / 8) as i64, Whence::Current),
        };
        agree(self.comm, moved.err().map(|e| self.io_message(e)))
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

    fn run_pattern(
        &mut self,
        open: &mut Open,
        p: Pattern,
        access: Access,
        calls: Calls,
    ) -> Result<PatternResult, String> {
        let (n, rank) = (self.n(), self.rank());
        let words = (p.memory / 8) as usize;
        let chunk_words = (p.chunk / 8) as usize;
        let per_call = p.chunks_per_call();
        let strided = self.strided(p.ptype);
        if strided {
            let u = Datatype::of::<u64>();
            let filetype = Datatype::contiguous(chunk_words, &u)
                .and_then(|c| c.resized(0, (n * p.chunk) as isize));
            let made = filetype.as_ref().err().map(|e| self.io_message(e.clone()));
            agree(self.comm, made)?;
            if let Ok(ft) = &filetype {
                let view = open
                    .file
                    .set_view((open.base + rank as u64 * p.chunk) as i64, &u, ft);
                agree(self.comm, view.err().map(|e| self.io_message(e)))?;
            }
        }
        let scale = if access == Access::Write {
            1.0
        } else {
            self.reread_budget
        };
        let budget = pattern_time(self.time_s, p.u) * scale;
        let extra = if access != Access::Read && self.sync_seen.1 > 0 {
            self.sync_seen.0 / self.sync_seen.1 as f64 * (p.memory * n) as f64
        } else {
            0.0
        };
        let mut planner = BatchPlanner::new(budget, extra);
        if self.every_call {
            planner = planner.check_every_call();
        }
        let mut first_error: Option<String> = None;
        let mut details: Vec<DataError> = Vec::new();
        let mut data_errors = 0u64;
        let mut done = 0u64;
        let mut checks = 0u64;
        let mut check_local = 0.0;
        // The library's own lines on standard error wait until the pattern is over.
        let quiet = super::quiet::Capture::start(format!("rank {rank}, {}", context(access, &p)));
        self.comm.barrier();
        let t0 = mpi::time();
        let cap = calls.cap();
        let mut batch = match calls {
            Calls::Exactly(n) => n,
            Calls::AtMost(_) | Calls::Budget => planner.first().min(cap),
        };
        loop {
            for _ in 0..batch {
                let id = ChunkId {
                    access,
                    pattern: p.number,
                    rank,
                    first_seq: done * per_call,
                };
                let collective = strided
                    || matches!(
                        p.ptype,
                        PatternType::Shared | PatternType::SegmentedCollective
                    );
                if first_error.is_some() && !collective {
                    done += 1;
                    continue;
                }
                let r = match access {
                    Access::Write | Access::Rewrite => {
                        let buf = &mut self.wbuf[..words];
                        stamp(buf, chunk_words, id);
                        let f = &mut open.file;
                        match p.ptype {
                            _ if strided => f.write_all(buf),
                            PatternType::Shared => f.write_ordered(buf),
                            PatternType::Separate | PatternType::Segmented => f.write(buf),
                            _ => f.write_all(buf),
                        }
                    }
                    Access::Read => {
                        let buf = &mut self.rbuf[..words];
                        let f = &mut open.file;
                        let r = match p.ptype {
                            _ if strided => f.read_all(buf),
                            PatternType::Shared => f.read_ordered(buf),
                            PatternType::Separate | PatternType::Segmented => f.read(buf),
                            _ => f.read_all(buf),
                        };
                        if r.is_ok() {
                            data_errors += check_with_limit(
                                buf,
                                chunk_words,
                                id,
                                &mut details,
                                self.error_limit,
                            );
                        }
                        r
                    }
                };
                if let Err(e) = r {
                    if first_error.is_none() {
                        first_error =
                            Some(format!("{}: {}", context(access, &p), self.io_message(e)));
                    }
                }
                done += 1;
            }
            if matches!(calls, Calls::Exactly(_)) || done >= cap {
                break;
            }
            let local_fail = first_error.is_some() || self.interrupted().is_some();
            let full = access == Access::Write && no_free_block(&self.dir);
            checks += 1;
            let tc = mpi::time();
            let [elapsed, fail, full] = max_all(
                self.comm,
                [
                    mpi::time() - t0,
                    f64::from(u8::from(local_fail)),
                    f64::from(u8::from(full)),
                ],
            );
            check_local += mpi::time() - tc;
            // A full disk ends the pattern early; the file's size decides below whether
            // it took what was written.
            if fail > 0.0 || full > 0.0 {
                break;
            }
            match planner.next(done, elapsed) {
                Some(b) => batch = b.min(cap - done),
                None => break,
            }
        }
        let io_local = mpi::time() - t0 - check_local;
        // Every rank learns of a failure on any rank before the sync, a collective call
        // that a failing rank would otherwise skip while the others wait in it.
        agree(self.comm, first_error.or_else(|| self.interrupted()))?;
        // On a full disk some ranks' MPI_File_sync can fail before the barrier inside it
        // while the others wait in that barrier (Open MPI 5's ompio does), and no agreement
        // of ours can reach them there. So when the file system has no block left, the
        // ranks first check together that the file holds what was written, and stop
        // before the sync when it does not.
        if access != Access::Read {
            let [full] = max_all(self.comm, [f64::from(u8::from(no_free_block(&self.dir)))]);
            if full > 0.0 {
                let written = open.written + done * p.memory;
                agree(self.comm, self.short_file(&p, access, open, written))?;
            }
        }
        let mut sync_s = 0.0;
        let mut synced = Ok(());
        if access != Access::Read {
            let ts = mpi::time();
            synced = open.file.sync();
            sync_s = mpi::time() - ts;
        }
        self.comm.barrier();
        let local = mpi::time() - t0;
        agree(
            self.comm,
            synced
                .err()
                .map(|e| format!("{}: {}", context(access, &p), self.io_message(e))),
        )?;
        if access != Access::Read {
            open.written += done * p.memory;
            agree(self.comm, self.short_file(&p, access, open, open.written))?;
        }
        if let Some(q) = quiet {
            q.finish();
        }
        let [time_s, sync_s, io_s, check_s] =
            max_all(self.comm, [local, sync_s, io_local, check_local]);
        // One write per line, so that the lines of ranks printing at once stay whole.
        let lines: String = details
            .iter()
            .map(|d| {
                format!(
                    "b_eff_io: data error, rank {rank}, pattern {} ({}): {d}\n",
                    p.number,
                    access.name()
                )
            })
            .collect();
        if !lines.is_empty() {
            let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), lines.as_bytes());
        }
        let errors = sum_all(self.comm, data_errors);
        let bytes = done * p.memory * n;
        if access == Access::Write {
            self.sync_seen.0 += sync_s;
            self.sync_seen.1 += bytes;
        }
        if strided {
            open.base += n * p.chunk * done * per_call;
        }
        Ok(PatternResult {
            pattern: p,
            scheduled_s: budget,
            repeats: done,
            bytes,
            time_s,
            sync_s,
            errors,
            checks,
            io_s,
            check_s,
        })
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
