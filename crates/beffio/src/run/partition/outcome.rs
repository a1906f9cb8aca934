//! A pattern's result: every rank's figures gathered once, the slowest rank's time and
//! parts, the data errors, and what the next patterns need of it.

use super::call::Tally;
use super::files::Open;
use super::{flag, LocalTimes, PartitionRun, Stopped};
use crate::markers::DataError;
use crate::patterns::Pattern;
use crate::results::PatternResult;
use crate::schedule::Access;
use benchkit::{gather_all, Exit};

impl PartitionRun<'_> {
    /// Prints this rank's named data errors of pattern `p` on standard error.
    pub(super) fn print_data_errors(&self, p: &Pattern, access: Access, details: &[DataError]) {
        // One write per line, so that the lines of ranks printing at once stay whole.
        let lines: String = details
            .iter()
            .map(|d| {
                format!(
                    "b_eff_io: data error, rank {}, pattern {} ({}): {d}\n",
                    self.rank,
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
    pub(super) fn pattern_result(
        &self,
        p: Pattern,
        access: Access,
        budget: f64,
        tally: &Tally,
        local: LocalTimes,
        failure: Option<String>,
    ) -> Result<PatternResult, Stopped> {
        self.print_data_errors(&p, access, &tally.details);
        let all = gather_all(
            self.setup.comm,
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
        // A pattern's own failures are I/O failures: exit 1 on every rank.
        if let Some(first) = all.iter().position(|v| v[5] > 0.0) {
            return Err(Stopped::of_rank(
                self.setup.comm,
                first as i32,
                Exit::Failure,
                failure,
            ));
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
    pub(super) fn note_for_next_patterns(
        &mut self,
        open: &mut Open,
        access: Access,
        r: &PatternResult,
    ) {
        if access == Access::Write {
            self.sync_seen.add(r.sync_s, r.bytes);
        }
        let p = &r.pattern;
        if self.strided(p.ptype) {
            open.base += self.n() * p.chunk * r.repeats * p.chunks_per_call();
        }
    }
}
