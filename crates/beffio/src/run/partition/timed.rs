//! A pattern's calls: a known count with no collective among them, or the time-driven
//! loop of the first write, batches between global termination checks.
//!
//! The time-driven loop overlaps its checks with its calls: from the first call on, each
//! batch's check is a non-blocking all-reduce that completes while the next batch runs
//! (each call tests it, which moves it on in libraries that progress only inside MPI
//! calls), and the batch after that is planned from it ([`BatchPlanner::next_overlapped`]);
//! the second batch, planned before any result, is one call, as the first. A rank that is
//! ahead no longer waits in the check for the slowest one; it writes on, and meets it in
//! the barrier that ends the pattern.
//! `--check-every-call` keeps the reference's blocking check after every call.

use super::call::Tally;
use super::{flag, PartitionRun};
use crate::batch::BatchPlanner;
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

/// Whether the file system holding `dir` has no free block left (for anyone, root
/// included). A hint only, to stop a time-driven write early: the file's size after the
/// sync decides.
pub(super) fn no_free_block(dir: &Path) -> bool {
    nix::sys::statvfs::statvfs(dir).is_ok_and(|s| s.blocks_free() == 0)
}
impl PartitionRun<'_> {
    /// Pattern `p`'s time budget (seconds) and the planner of its batches (used by the
    /// time-driven writes), which expects each call to add its bytes' share of the
    /// closing sync, at the rate the partition's writes have measured so far.
    pub(super) fn batch_planner(&self, p: &Pattern, access: Access) -> (f64, BatchPlanner) {
        let budget = pattern_time(self.setup.time_s, p.u);
        let extra = if access == Access::Write {
            self.sync_seen.expected_s(p.memory * self.n())
        } else {
            0.0
        };
        let mut planner = BatchPlanner::new(budget, extra);
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

    /// The time-driven loop with its checks overlapped (see the module's documentation):
    /// the first call, then for each further batch a check of where the calls stand, made
    /// while that batch runs, but for a last batch that takes the rest of the budget
    /// ([`BatchPlanner::is_last`]). The second batch is planned before any check is known:
    /// one call, as the first. Every rank makes the same batches: each is planned from
    /// checks every rank has the same result of.
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
        while let Some(batch) = planner.next_overlapped(basis, tally.done) {
            if planner.is_last() {
                // It takes the rest of the budget: no check is needed while it runs (a
                // rank's failure or signal is agreed on at the pattern's end).
                for _ in 0..batch {
                    self.call(file, p, access, collective, tally);
                }
                return;
            }
            let voted_at = tally.done;
            let tc = mpi::time();
            let vote = self.vote(access, t0, tally);
            let mut result = [0.0f64; 3];
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

    /// This rank's part of a global check: its time since `t0`, whether it failed or was
    /// interrupted, and (writing) whether it found no free block left.
    fn vote(&self, access: Access, t0: f64, tally: &Tally) -> [f64; 3] {
        let local_fail = tally.first_error.is_some() || self.signal() != 0;
        let full = access == Access::Write && no_free_block(&self.setup.dir);
        [mpi::time() - t0, flag(local_fail), flag(full)]
    }

    /// The global check between two batches (collective, blocking): the slowest rank's
    /// time since `t0`, or `None` when the pattern stops because a rank failed or was
    /// interrupted or, writing, found no free block left.
    pub(super) fn termination_check(
        &self,
        access: Access,
        t0: f64,
        tally: &mut Tally,
    ) -> Option<f64> {
        let vote = self.vote(access, t0, tally);
        tally.checks += 1;
        let tc = mpi::time();
        let result = max_all(self.setup.comm, vote);
        tally.check_s += mpi::time() - tc;
        verdict(result)
    }
}

/// What a global check's result says: the slowest rank's time, or `None` when the pattern
/// stops because a rank failed or was interrupted or the file system is full. A full disk
/// ends the pattern early; the file's size decides at its end
/// ([`PartitionRun::end_pattern`]) whether it took what was written.
fn verdict([elapsed, fail, full]: [f64; 3]) -> Option<f64> {
    if fail > 0.0 || full > 0.0 {
        None
    } else {
        Some(elapsed)
    }
}

/// Whether the calls of a pattern of `ptype` are collective, so that the other ranks wait
/// in each: types 0, 1 and 4 (type 0 and `--noshared` type 1 through the strided view).
fn calls_collectively(ptype: PatternType) -> bool {
    matches!(
        ptype,
        PatternType::Scatter | PatternType::Shared | PatternType::SegmentedCollective
    )
}
