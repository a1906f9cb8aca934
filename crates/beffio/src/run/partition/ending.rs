//! The end of a pattern: a failure or a signal agreed on, the closing sync, the barrier
//! that ends the timed window, and the check that the file holds what was written.

use super::files::Open;
use super::{context, PartitionRun, Stopped};
use crate::patterns::{Pattern, PatternType};
use crate::schedule::Access;
use mpi::traits::*;

/// What ending a pattern gave on this rank.
#[derive(Debug)]
pub(super) struct Ended {
    /// Barrier to barrier.
    pub(super) time_s: f64,
    /// In the closing sync.
    pub(super) sync_s: f64,
    /// The sync's failure, or a file that does not hold what was written: this rank's,
    /// not yet agreed on.
    pub(super) failure: Option<String>,
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
/// What the calls of a pattern leave for its end.
#[derive(Debug)]
pub(super) struct Closing {
    /// The calls made (or passed over after a failure).
    pub(super) done: u64,
    /// This rank's first failed call, not yet agreed on.
    pub(super) failure: Option<String>,
    /// A global check after the last call found no rank failed or interrupted: every
    /// rank will make the sync, and no agreement is needed before it.
    pub(super) checked: bool,
    /// The ranks wrote more than the least room a rank's file system had before the
    /// pattern, or stopped for want of room (the same on every rank): the file's size is
    /// checked together before the sync, which a full disk can make some ranks leave
    /// while others wait in it.
    pub(super) may_be_full: bool,
}

/// How long a file's size may take to show every rank's writes on a client of a cluster
/// file system before a short file counts as bytes lost (seconds).
pub const SIZE_SETTLE_S: u64 = 5;

impl PartitionRun<'_> {
    /// The steps that end pattern `p` after its `done` calls (collective): a failure or
    /// a signal on any rank agreed on (unless a check after the last call already found
    /// none, `closing.checked`), for writes `MPI_File_sync`, the barrier that ends the
    /// timed window, and for writes the check that the file holds what was written (made
    /// together before the sync when the file system may be full). A failure of the sync
    /// or of that check is this rank's alone until [`Self::pattern_result`] agrees on it.
    pub(super) fn end_pattern(
        &mut self,
        open: &mut Open,
        p: &Pattern,
        access: Access,
        t0: f64,
        closing: Closing,
    ) -> Result<Ended, Stopped> {
        let Closing {
            done,
            failure,
            checked,
            may_be_full,
        } = closing;
        let writes = access != Access::Read;
        // From here this rank may wait for slower ones (the agreement, the sync, the
        // barrier): as long as it took itself is no stall, a peer half as fast is healthy.
        self.feedback
            .watch
            .allow(std::time::Duration::from_secs_f64(
                (mpi::time() - t0).max(0.0),
            ));
        // Every rank learns of a failure on any rank before the sync, a collective call
        // that a failing rank would otherwise skip while the others wait in it, unless the
        // check that ended the calls found none (every rank knows it alike). A signal
        // after that check is agreed on at the next pattern's end.
        debug_assert!(!checked || failure.is_none());
        if !checked {
            Stopped::agree(
                self.setup.comm,
                failure
                    .map(benchkit::Failure::from)
                    .or_else(|| self.interrupted()),
            )?;
        }
        if writes {
            open.written += done * p.memory;
        }
        if writes && may_be_full {
            // On a full disk some ranks' MPI_File_sync can fail before the barrier inside
            // it while the others wait in that barrier (Open MPI 5's ompio does), and no
            // agreement of ours can reach them there. So the ranks first check together
            // that the file holds what was written, and stop before the sync when not.
            Stopped::agree(
                self.setup.comm,
                self.short_file(p, access, open, open.written),
            )?;
        }
        let mut sync_s = 0.0;
        let mut synced = Ok(());
        if writes {
            let ts = mpi::time();
            synced = open.file.sync();
            sync_s = mpi::time() - ts;
        }
        self.setup.comm.barrier();
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

    /// After a write pattern's sync: whether the file holds what was written into it. A
    /// file system that refuses bytes while the library reports success (Open MPI 4.1's
    /// collective writes on a full disk) leaves a file shorter than that.
    pub(super) fn short_file(
        &self,
        p: &Pattern,
        access: Access,
        open: &Open,
        written: u64,
    ) -> Option<String> {
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
                    .setup
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
}
