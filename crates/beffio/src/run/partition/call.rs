//! One call of a pattern: a write (or rewrite) with its markers stamped, or a read with
//! its markers checked; a rank that stopped moves no data.

use super::{context, PartitionRun};
use crate::markers::{check_with_limit, stamp, ChunkId, DataError};
use crate::patterns::{Pattern, PatternType};
use crate::schedule::Access;
use mpiio::File;

/// What one pattern's calls gave on this rank, while its time-driven loop runs.
#[derive(Debug, Default)]
pub(super) struct Tally {
    /// Calls made (or passed over after a failure).
    pub(super) done: u64,
    /// The first failed call's message.
    pub(super) first_error: Option<String>,
    /// Data errors found reading.
    pub(super) data_errors: u64,
    /// The first `-e` of them, named.
    pub(super) details: Vec<DataError>,
    /// Global termination checks made.
    pub(super) checks: u64,
    /// Seconds spent in them.
    pub(super) check_s: f64,
    /// Whether the last step of the calls was a global check that saw every call and found
    /// no rank failed or interrupted: the agreement the closing sync needs is made.
    pub(super) checked_end: bool,
    /// Whether the calls stopped because the file system has no room for more.
    pub(super) out_of_space: bool,
}

impl PartitionRun<'_> {
    /// The next call of pattern `p` (the `tally.done`-th), counted in `tally` with its
    /// first failure and the data errors it found. A rank that failed or was interrupted
    /// stops moving data: it passes over its further calls, and makes its `collective`
    /// ones, which the other ranks wait in, with no data. The failure or the signal is
    /// agreed on at the pattern's end (or at the next global check).
    pub(super) fn call(
        &mut self,
        file: &mut File,
        p: &Pattern,
        access: Access,
        collective: bool,
        tally: &mut Tally,
    ) {
        self.feedback.watch.tick();
        self.pulse_if_due();
        let stopped = tally.first_error.is_some() || self.signal() != 0;
        if stopped && !collective {
            tally.done += 1;
            return;
        }
        let id = ChunkId {
            access,
            pattern: p.number,
            rank: self.rank,
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
    pub(super) fn write_call(
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
    pub(super) fn read_call(
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
            self.setup.error_limit,
        ))
    }
}
