//! A pattern's calls: a known count with no collective among them, or the time-driven
//! loop of the first write, batches between global termination checks.
//!
//! The time-driven loop overlaps its checks with its calls: from the first call on, each
//! batch's check is a non-blocking all-reduce that completes while the next batch runs
//! (each call tests it, which moves it on in libraries that progress only inside MPI
//! calls), and the batch after that is planned from it ([`BatchPlanner::next_overlapped`]);
//! the second batch, planned before any result, is one call, as the first. A rank that is
//! ahead no longer waits in the check for the slowest one; it writes on, and meets it in
//! the barrier that ends the pattern. The pattern ends on a blocking check of every call
//! ([`Step::Closing`], [`Step::Measure`]), which is also the agreement the closing sync
//! needs.
//! `--check-every-call` keeps the reference's blocking check after every call.
//!
//! Nothing else of b_eff_io's runs between the calls: no look at the file system (the
//! room it has is taken before the timed window, [`PartitionRun::room`]), no
//! communicator queries, no output files (written between patterns).

use super::call::Tally;
use super::{flag, PartitionRun};
use crate::batch::{BatchPlanner, Step};
use crate::patterns::{Pattern, PatternType};
use crate::schedule::{pattern_time, Access};
use benchkit::max_all;
use mpi::collective::SystemOperation;
use mpi::traits::*;
use mpiio::File;
use std::path::Path;

/// How many calls a pattern makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Calls {
    /// Exactly this many, with no global check among them: rewrite and read (what the
    /// write put in the file, every byte), the writes of types 3 and 4 (the segment
    /// plan's counts), the pattern that opens a segment and the filler that closes it.
    Exactly(u64),
    /// As many as fit the budget, with global checks between growing batches: the
    /// writes of types 0 to 2.
    Budget,
}

/// The room the file system holding `dir` has (bytes in its free blocks, for anyone,
/// root included), `u64::MAX` when it cannot be asked.
fn free_bytes(dir: &Path) -> u64 {
    nix::sys::statvfs::statvfs(dir).map_or(u64::MAX, |s| {
        s.blocks_free().saturating_mul(s.fragment_size())
    })
}

/// The room for a write pattern, taken before its timed window and agreed by every rank
/// of the partition ([`PartitionRun::room`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Room {
    /// The fewest free bytes any rank's file system has.
    pub(super) least_free: u64,
    /// The most bytes each rank may write: its host's free bytes over the partition's
    /// ranks on that host, the least over all hosts.
    pub(super) per_rank: u64,
}

impl Room {
    /// Room enough for anything (a read, a rewrite: no file grows).
    pub(super) const ANY: Room = Room {
        least_free: u64::MAX,
        per_rank: u64::MAX,
    };

    /// Whether `calls` calls of `bytes_per_call` on each of `ranks` ranks may have filled
    /// the file system: what every rank wrote together is more than the least room any
    /// rank saw. Then the ranks check the file's size together before the closing sync
    /// ([`PartitionRun::end_pattern`]).
    pub(super) fn may_be_full(&self, ranks: u64, calls: u64, bytes_per_call: u64) -> bool {
        ranks.saturating_mul(calls).saturating_mul(bytes_per_call) > self.least_free
    }
}

impl PartitionRun<'_> {
    /// Pattern `p`'s time budget (seconds) and the planner of its batches (used by the
    /// time-driven writes), which expects each call to add its bytes' share of the
    /// closing sync, at the rate the partition's writes have measured so far.
    /// A pattern of `room` is given no more calls than its ranks have room for.
    pub(super) fn batch_planner(
        &self,
        p: &Pattern,
        access: Access,
        room: Room,
    ) -> (f64, BatchPlanner) {
        let budget = pattern_time(self.setup.time_s, p.u);
        let extra = if access == Access::Write {
            self.sync_seen.expected_s(p.memory * self.n())
        } else {
            0.0
        };
        let mut planner = BatchPlanner::new(budget, extra);
        if let Some(calls) = room.per_rank.checked_div(p.memory) {
            planner = planner.with_call_limit(calls);
        }
        if self.setup.every_call {
            planner = planner.check_every_call();
        }
        (budget, planner)
    }

    /// The calls of pattern `p`, begun at `t0`: exactly the count asked for, with no
    /// collective among them but the calls themselves, or (a time-driven write) batches
    /// as `planner` sizes them, each followed by a global check
    /// ([`Self::termination_check`]).
    pub(super) fn pattern_calls(
        &mut self,
        file: &mut File,
        p: &Pattern,
        access: Access,
        calls: Calls,
        mut planner: BatchPlanner,
        t0: f64,
    ) -> Tally {
        let mut tally = Tally::default();
        let collective = calls_collectively(p.ptype);
        match calls {
            Calls::Exactly(n) => {
                for _ in 0..n {
                    self.call(file, p, access, collective, &mut tally);
                }
            }
            Calls::Budget if !self.setup.every_call => {
                self.overlapped_calls(file, p, access, &mut planner, t0, &mut tally);
            }
            Calls::Budget => {
                let mut batch = planner.first();
                loop {
                    tally.checked_end = false;
                    for _ in 0..batch {
                        self.call(file, p, access, collective, &mut tally);
                    }
                    let Some(elapsed) = self.termination_check(t0, &mut tally) else {
                        break;
                    };
                    match planner.next(tally.done, elapsed) {
                        Some(b) => batch = b,
                        None => {
                            // The check that stopped the pattern saw every call.
                            tally.checked_end = true;
                            break;
                        }
                    }
                }
            }
        }
        tally.out_of_space = planner.out_of_space();
        tally
    }

    /// The time-driven loop with its checks overlapped (see the module's documentation):
    /// the first call, then for each further batch a check of where the calls stand, made
    /// while that batch runs, and a blocking check when the planner asks for one (after a
    /// batch that takes the rest of the budget, [`Step::Closing`], or on its own,
    /// [`Step::Measure`]); the pattern ends on what a check measured. The second batch
    /// is planned before any check is known: one call, as the first. Every rank makes the
    /// same batches: each is planned from checks every rank has the same result of.
    fn overlapped_calls(
        &mut self,
        file: &mut File,
        p: &Pattern,
        access: Access,
        planner: &mut BatchPlanner,
        t0: f64,
        tally: &mut Tally,
    ) {
        let collective = calls_collectively(p.ptype);
        for _ in 0..planner.first() {
            self.call(file, p, access, collective, tally);
        }
        // The last check whose result is known: calls done then, the slowest rank's time.
        let mut basis: Option<(u64, f64)> = None;
        loop {
            let batch = match planner.next_overlapped(basis, tally.done) {
                Step::Stop => return,
                Step::Batch(batch) => batch,
                step @ (Step::Closing(_) | Step::Measure) => {
                    // The calls that take the rest of the budget, if any, then a blocking
                    // check of every call: should the planner stop now, it saw them all.
                    tally.checked_end = false;
                    let closing = if let Step::Closing(n) = step { n } else { 0 };
                    for _ in 0..closing {
                        self.call(file, p, access, collective, tally);
                    }
                    let Some(elapsed) = self.termination_check(t0, tally) else {
                        return;
                    };
                    basis = Some((tally.done, elapsed));
                    tally.checked_end = true;
                    continue;
                }
            };
            tally.checked_end = false;
            let voted_at = tally.done;
            let tc = mpi::time();
            let vote = self.vote(t0, tally);
            let mut result = [0.0f64; 2];
            let mut waited = 0.0;
            mpi::request::scope(|scope| {
                let mut pending = Some(self.setup.comm.immediate_all_reduce_into(
                    scope,
                    &vote,
                    &mut result,
                    SystemOperation::max(),
                ));
                waited += mpi::time() - tc;
                for _ in 0..batch {
                    self.call(file, p, access, collective, tally);
                    if let Some(request) = pending.take() {
                        let tt = mpi::time();
                        pending = request.test().err();
                        waited += mpi::time() - tt;
                    }
                }
                if let Some(request) = pending {
                    let tw = mpi::time();
                    request.wait();
                    waited += mpi::time() - tw;
                }
            });
            tally.checks += 1;
            tally.check_s += waited;
            match verdict(result) {
                Some(elapsed) => basis = Some((voted_at, elapsed)),
                None => return,
            }
        }
    }

    /// This rank's part of a global check: its time since `t0`, and whether it failed or
    /// was interrupted.
    fn vote(&self, t0: f64, tally: &Tally) -> [f64; 2] {
        let local_fail = tally.first_error.is_some() || self.signal() != 0;
        [mpi::time() - t0, flag(local_fail)]
    }

    /// The global check between two batches (collective, blocking): the slowest rank's
    /// time since `t0`, or `None` when the pattern stops because a rank failed or was
    /// interrupted.
    pub(super) fn termination_check(&self, t0: f64, tally: &mut Tally) -> Option<f64> {
        let vote = self.vote(t0, tally);
        tally.checks += 1;
        let tc = mpi::time();
        let result = max_all(self.setup.comm, vote);
        tally.check_s += mpi::time() - tc;
        verdict(result)
    }

    /// The room the partition's file systems have for pattern `p`'s writes (collective,
    /// before its timed window): each rank's free bytes, and its share of its host's,
    /// the least of each over the partition. A rewrite or a read makes no file grow.
    pub(super) fn room(&self, access: Access) -> Room {
        if access != Access::Write {
            return Room::ANY;
        }
        let free = free_bytes(&self.setup.dir);
        let mine = [free, free / self.host_ranks.max(1)];
        let mut least = [0u64; 2];
        self.setup
            .comm
            .all_reduce_into(&mine, &mut least, SystemOperation::min());
        Room {
            least_free: least[0],
            per_rank: least[1],
        }
    }
}

/// What a global check's result says: the slowest rank's time, or `None` when the pattern
/// stops because a rank failed or was interrupted.
fn verdict([elapsed, fail]: [f64; 2]) -> Option<f64> {
    (fail == 0.0).then_some(elapsed)
}

/// Whether the calls of a pattern of `ptype` are collective, so that the other ranks wait
/// in each: types 0, 1 and 4 (type 0 and `--noshared` type 1 through the strided view).
fn calls_collectively(ptype: PatternType) -> bool {
    matches!(
        ptype,
        PatternType::Scatter | PatternType::Shared | PatternType::SegmentedCollective
    )
}
