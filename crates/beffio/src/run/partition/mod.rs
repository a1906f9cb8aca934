//! One partition's run: its patterns under the three access methods, and what each
//! pattern's calls, checks and end give.
//!
//! By concern: [`files`] opens a type's file and sets the views and hints of its
//! patterns; [`call`] makes one call of a pattern; [`timed`] runs a pattern's calls, a
//! known count or a time-driven loop with its termination checks; [`ending`] ends a
//! pattern (the agreement, the sync, the file's size); [`outcome`] makes its result;
//! [`posix`] the `--posix-baseline` measurement; [`between`] what happens between write
//! and read (a dropped cache, the test aids).

mod between;
mod call;
mod ending;
mod files;
mod outcome;
mod posix;
mod timed;

use super::progress::Progress;
use super::stopped::Stopped;
use crate::hints::{FileHints, Hints};
use crate::options::Sabotage;
use crate::pagebuf::PageAligned;
use crate::patterns::{pattern_table, Pattern, PatternType, Role, PATTERN_COUNT};
use crate::results::{patterns_time_s, AccessResult, PartitionResult, PatternResult, TypeTotal};
use crate::schedule::Access;
use crate::segment::{segment_plan, SegmentPlan};
use benchkit::{max_all, Agreed, Exit};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ending::Closing;
use files::Open;
use timed::Calls;

pub use ending::{expected_end, SIZE_SETTLE_S};
pub use posix::Baseline;

/// What a partition runs, fixed for its whole run.
pub struct Setup<'a> {
    /// The partition's communicator.
    pub comm: &'a SimpleCommunicator,
    /// The partition's directory, as MPI-IO is given it: relative to the working
    /// directory, which is the run directory while the partitions run
    /// ([`super::rundir::Workdir`]).
    pub dir: PathBuf,
    /// The run directory's absolute path, to name files in messages.
    pub run_dir: PathBuf,
    /// The run directory, by its descriptor: checked before each open.
    pub held: &'a Arc<super::rundir::RunDir>,
    /// MPART: the largest chunk in memory (bytes), which sizes the pattern table.
    pub mpart: u64,
    /// Scheduled time of this partition (T·n/N).
    pub time_s: f64,
    /// `--noshared`.
    pub noshared: bool,
    /// `--check-every-call`.
    pub every_call: bool,
    /// `-e`: data errors named per pattern and rank.
    pub error_limit: usize,
    /// The MPI-IO hints to give (`--hint`, `-i`).
    pub hints: &'a Hints,
    /// The file system and what the checks at start found.
    pub file_system: &'a crate::filesystem::FileSystem,
    /// Signal number received, 0 if none.
    pub signal: Arc<AtomicUsize>,
}

/// Where a partition reports its progress as it goes.
pub struct Feedback<'a> {
    /// Progress reporter (rank 0 prints).
    pub progress: Progress,
    /// The watchdog's progress counter: a tick per call, the pattern as the place.
    pub watch: benchkit::watchdog::Progress,
    /// Called with each pattern measured (the run keeps it at once).
    pub on_pattern: &'a dyn Fn(Access, &PatternResult),
    /// On the partition's rank 0 when ranks outside it wait: where their pulses go
    /// (sent when the watchdog says one is due, between calls).
    pub beacon: Option<Beacon<'a>>,
}

/// The ranks outside a partition, waiting for it, and the heartbeat that reaches them.
pub struct Beacon<'a> {
    /// The world's heartbeat.
    pub heartbeat: &'a benchkit::heartbeat::Heartbeat,
    /// The waiting ranks (world ranks).
    pub to: std::ops::Range<i32>,
}

impl Beacon<'_> {
    /// A pulse to every waiting rank.
    pub fn pulse(&self) {
        self.heartbeat.pulse(self.to.clone());
    }
}

/// One partition's run: its setup, its feedback, and what it holds while it runs.
pub struct PartitionRun<'a> {
    setup: Setup<'a>,
    feedback: Feedback<'a>,
    /// The pattern table.
    table: Vec<Pattern>,
    /// Write buffer (MPART bytes).
    wbuf: PageAligned<u64>,
    /// Read buffer (MPART bytes).
    rbuf: PageAligned<u64>,
    /// The syncs of the writes so far, to budget the next sync.
    sync_seen: SyncSeen,
    /// `--posix-baseline`: whether asked for, and the measurement once made.
    posix_baseline: Baseline,
    /// What was given and reported of the hints, per file in run order (when any given).
    hint_log: Vec<FileHints>,
    /// This rank in the partition, and the partition's size: asked of the communicator
    /// once, not in a timed window.
    rank: usize,
    ranks: u64,
    /// The partition's ranks on this rank's host (set when the run starts).
    host_ranks: u64,
}

impl<'a> PartitionRun<'a> {
    /// The run of `setup`, its buffers allocated (MPART each; see [`buffer_bytes`]).
    pub fn new(setup: Setup<'a>, feedback: Feedback<'a>, posix_baseline: bool) -> Self {
        let words = (setup.mpart / 8) as usize;
        PartitionRun {
            table: pattern_table(setup.mpart),
            wbuf: crate::markers::write_buffer(words),
            rbuf: crate::markers::read_buffer(words),
            sync_seen: SyncSeen::default(),
            posix_baseline: Baseline::asked(posix_baseline),
            hint_log: Vec::new(),
            rank: setup.comm.rank() as usize,
            ranks: setup.comm.size() as u64,
            host_ranks: 1,
            setup,
            feedback,
        }
    }

    /// Runs the partition (collective over its communicator): write, rewrite and read of
    /// every type in turn, the segment plan of types 3 and 4 from the writes of types 0
    /// to 2, the page cache dropped before read when `drop_cache`, `sabotage` done to
    /// rank 0's separate file before read (the test aids).
    pub fn run(mut self, drop_cache: bool, sabotage: Sabotage) -> Result<PartitionResult, Stopped> {
        let start = mpi::time();
        self.host_ranks = self.setup.comm.split_shared(self.setup.comm.rank()).size() as u64;
        // The calls each pattern's write made, by pattern number: where its data lies in
        // the file, and how often rewrite and read repeat it.
        let mut written = vec![0u64; PATTERN_COUNT];
        let mut access: [AccessResult; 3] = Default::default();
        let mut plan = None;
        for a in Access::ALL {
            if a == Access::Read {
                self.damage(sabotage)?;
                if drop_cache {
                    self.drop_page_cache()?;
                }
            }
            let mut patterns = Vec::with_capacity(PATTERN_COUNT);
            let mut types = [TypeTotal::default(); 5];
            for t in PatternType::ALL {
                if a == Access::Write && t == PatternType::Segmented {
                    plan = Some(segment_plan(
                        &self.table,
                        self.setup.mpart,
                        &written[0..9],
                        &written[9..17],
                        &written[17..25],
                    ));
                }
                let (r, total) =
                    self.run_type(t, a, &mut written, plan.as_ref())
                        .map_err(|stop| match t {
                            PatternType::Shared
                                if !stop.message().is_empty() && !explained(stop.message()) =>
                            {
                                let advice = self.setup.file_system.shared_pointer_advice();
                                stop.with_line(&format!("b_eff_io: {advice}"))
                            }
                            _ => stop,
                        })?;
                patterns.extend(r);
                types[t.index()] = total;
            }
            access[a.index()] = AccessResult { patterns, types };
        }
        let wall_s = mpi::time() - start;
        Ok(PartitionResult {
            posix_baseline: self.posix_baseline.measured(),
            processes: self.ranks as usize,
            scheduled_s: self.setup.time_s,
            segment_bytes: plan.map_or(0, |p| p.segment),
            access,
            wall_s,
            hints: self.hint_log,
        })
    }

    /// A pulse to the ranks waiting outside the partition, when the watchdog says one is
    /// due (a load and a branch otherwise; nothing on ranks without a beacon).
    #[inline]
    fn pulse_if_due(&self) {
        if let Some(beacon) = &self.feedback.beacon {
            if self.feedback.watch.pulse_due() {
                beacon.pulse();
            }
        }
    }

    fn n(&self) -> u64 {
        self.ranks
    }

    /// The signal received, 0 for none.
    fn signal(&self) -> usize {
        self.setup.signal.load(Ordering::SeqCst)
    }

    /// `interrupted by signal N` once a signal was received.
    fn interrupted(&self) -> Option<benchkit::Failure> {
        super::stopped::interrupted_by(self.signal())
    }

    /// Runs all patterns of one type under one access method. `written` holds each
    /// pattern's write calls, filled in by write; rewrite and read make exactly as many.
    fn run_type(
        &mut self,
        ptype: PatternType,
        access: Access,
        written: &mut [u64],
        segment: Option<&SegmentPlan>,
    ) -> Result<(Vec<PatternResult>, TypeTotal), Stopped> {
        let patterns: Vec<Pattern> = self
            .table
            .iter()
            .filter(|p| p.ptype == ptype)
            .copied()
            .collect();
        let first = patterns[0].number;
        let seg_bytes = segment.map_or(0, |s| s.segment);
        self.setup.comm.barrier();
        let t0 = mpi::time();
        let mut open = self.open(ptype, access, seg_bytes)?;
        self.setup.comm.barrier();
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
                        None => {
                            let missing = format!("no segment plan for pattern {}", p.number);
                            return Err(Stopped::agree(self.setup.comm, Some(missing))
                                .err()
                                .unwrap_or_else(|| Stopped::said(benchkit::Exit::Failure)));
                        }
                    }
                }
                (Access::Write, _, _) => Calls::Budget,
                _ => Calls::Exactly(written[p.number]),
            };
            self.pattern_hints(&mut open, &p, access)?;
            let r = self.run_pattern(&mut open, p, access, calls)?;
            if access == Access::Write {
                written[p.number] = r.repeats;
            }
            let largest = p.chunk == self.table[1].chunk && p.role == Role::Measured;
            if self.posix_baseline == Baseline::Wanted
                && access == Access::Write
                && ptype == PatternType::Separate
                && largest
            {
                self.posix_baseline = Baseline::Measured(self.posix_write(&r)?);
            }
            self.feedback
                .progress
                .pattern(self.ranks as usize, access, &r);
            (self.feedback.on_pattern)(access, &r);
            if self.rank == 0 {
                if let Some(w) = crate::anomalies::pattern(self.ranks as usize, access, &r) {
                    self.feedback
                        .progress
                        .interject(&format!("b_eff_io: WARNING {}", w.message));
                }
            }
            results.push(r);
        }
        let tc = mpi::time();
        let closed = open.file.close();
        Stopped::agree(self.setup.comm, closed.err().map(|e| self.io_message(e)))?;
        self.setup.comm.barrier();
        let end = mpi::time();
        if let Some(log) = open.hints {
            self.hint_log.push(log);
        }
        let [open_s, close_s, wall_s] = max_all(self.setup.comm, [open_local, end - tc, end - t0]);
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

    /// Runs pattern `p` under `access`: its view (strided types), its calls as the time
    /// budget allows, the steps that end it, and its result. Collective; every rank makes
    /// the same collective calls in the same order, failures agreed on before the next.
    fn run_pattern(
        &mut self,
        open: &mut Open,
        p: Pattern,
        access: Access,
        calls: Calls,
    ) -> Result<PatternResult, Stopped> {
        if self.strided(p.ptype) {
            self.set_strided_view(open, &p)?;
        }
        // The room for the writes, before the timed window.
        let room = self.room(access);
        let (budget, planner) = self.batch_planner(&p, access, room);
        self.feedback
            .watch
            .at(format!("partition n={}, {}", self.n(), context(access, &p)));
        self.pulse_if_due();
        // The library's own lines on standard error wait until the pattern is over.
        let quiet =
            super::quiet::Capture::start(format!("rank {}, {}", self.rank, context(access, &p)));
        self.setup.comm.barrier();
        let t0 = mpi::time();
        let mut tally = self.pattern_calls(&mut open.file, &p, access, calls, planner, t0);
        let io_s = mpi::time() - t0 - tally.check_s;
        let closing = Closing {
            done: tally.done,
            failure: tally.first_error.take(),
            checked: tally.checked_end,
            may_be_full: tally.out_of_space || room.may_be_full(self.n(), tally.done, p.memory),
        };
        let ended = self.end_pattern(open, &p, access, t0, closing)?;
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
}

/// Whether a failure's message already names its cause (a full or read-only file system,
/// a quota, a stale handle, a short read, …): then it is not the shared file pointer's,
/// and type 1's advice about that pointer would mislead.
fn explained(message: &str) -> bool {
    mpiio::Cause::ALL
        .iter()
        .any(|cause| message.contains(cause.advice()))
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

/// A flag as a value of a maximum reduction.
fn flag(set: bool) -> f64 {
    f64::from(u8::from(set))
}

/// The bytes each rank allocates for its buffers: the write and the read buffer of MPART
/// each, and with `--posix-baseline` a byte copy of the write buffer.
pub fn buffer_bytes(mpart: u64, posix_baseline: bool) -> u64 {
    mpart.saturating_mul(if posix_baseline { 3 } else { 2 })
}

/// `write pattern 3 (type 0)`: where a message comes from.
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
/// shortage rank 0 says so, naming the host and both figures, and every rank leaves with
/// exit code 2.
pub fn refuse_short_memory(
    world: &SimpleCommunicator,
    partitions: &[usize],
    mpart: u64,
    posix_baseline: bool,
) -> Result<(), Agreed> {
    let largest = partitions.iter().copied().max().unwrap_or(0);
    let need = if (world.rank() as usize) < largest {
        buffer_bytes(mpart, posix_baseline)
    } else {
        0
    };
    let Err(shortage) = benchkit::memory::agree_fits(world, need) else {
        return Ok(());
    };
    if world.rank() == 0 {
        outfile::eprintln!(
            "b_eff_io: error: not enough memory for the buffers ({} bytes per process, \
             MPART = {mpart} bytes): {shortage}; ask for less with --memory-per-process",
            buffer_bytes(mpart, posix_baseline)
        );
    }
    Err(Agreed {
        code: Exit::Usage.code(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::MB;

    #[test]
    fn buffers_are_two_mparts_and_three_with_the_posix_baseline() {
        assert_eq!(buffer_bytes(16 * MB, false), 32 * MB);
        assert_eq!(buffer_bytes(16 * MB, true), 48 * MB);
        assert_eq!(buffer_bytes(u64::MAX, false), u64::MAX);
    }

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
}
