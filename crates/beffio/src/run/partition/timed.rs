//! A pattern's calls: a known count with no collective among them, or the time-driven
//! loop of the first write, batches between global termination checks.

use super::call::Tally;
use super::{flag, PartitionRun};
use crate::batch::BatchPlanner;
use crate::patterns::{Pattern, PatternType};
use crate::schedule::{pattern_time, Access};
use benchkit::max_all;
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

    /// The global check between two batches (collective): the slowest rank's time since
    /// `t0`, or `None` when the pattern stops because a rank failed or was interrupted
    /// or, writing, found no free block left.
    pub(super) fn termination_check(
        &self,
        access: Access,
        t0: f64,
        tally: &mut Tally,
    ) -> Option<f64> {
        let local_fail = tally.first_error.is_some() || self.signal() != 0;
        let full = access == Access::Write && no_free_block(&self.setup.dir);
        tally.checks += 1;
        let tc = mpi::time();
        let [elapsed, fail, full] = max_all(
            self.setup.comm,
            [mpi::time() - t0, flag(local_fail), flag(full)],
        );
        tally.check_s += mpi::time() - tc;
        // A full disk ends the pattern early; the file's size decides at its end
        // ([`Self::end_pattern`]) whether it took what was written.
        if fail > 0.0 || full > 0.0 {
            None
        } else {
            Some(elapsed)
        }
    }
}
