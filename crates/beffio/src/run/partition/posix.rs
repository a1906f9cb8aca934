//! `--posix-baseline`: the bytes of the separate-file pattern with the largest chunk,
//! written again with plain POSIX calls right after it.

use super::{PartitionRun, Stopped};
use crate::results::{PatternResult, PosixBaseline};
use benchkit::max_all;
use mpi::traits::*;

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

impl PartitionRun<'_> {
    /// Writes the bytes of `r` (a separate-file pattern) again with plain POSIX calls,
    /// every rank into a file of its own, timed as the patterns are.
    pub(super) fn posix_write(&mut self, r: &PatternResult) -> Result<PosixBaseline, Stopped> {
        use std::io::Write;
        let path = self.setup.dir.join(format!("posix.{}", self.rank));
        let words = (r.pattern.memory / 8) as usize;
        // On a page boundary, as the patterns' buffers are, and the one byte copy that
        // buffer_bytes counts (no vector in between).
        let mut buf = crate::pagebuf::PageAligned::filled(words * 8, 0u8);
        for (bytes, word) in buf.chunks_exact_mut(8).zip(&self.wbuf[..words]) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
        self.setup.comm.barrier();
        let t0 = mpi::time();
        let outcome = std::fs::File::create_new(&path).and_then(|mut f| {
            for _ in 0..r.repeats {
                f.write_all(&buf)?;
            }
            let ts = mpi::time();
            f.sync_all()?;
            Ok(mpi::time() - ts)
        });
        self.setup.comm.barrier();
        let local = mpi::time() - t0;
        let _ = std::fs::remove_file(&path);
        let failure = outcome.as_ref().err().map(|e| {
            format!(
                "--posix-baseline: cannot write '{}': {}",
                self.shown(&path).display(),
                crate::run::rundir::cause(e)
            )
        });
        Stopped::agree(self.setup.comm, failure)?;
        let sync = outcome.unwrap_or_default();
        let [time_s, sync_s] = max_all(self.setup.comm, [local, sync]);
        Ok(PosixBaseline {
            pattern: r.pattern.number,
            bytes: r.bytes,
            time_s,
            sync_s,
        })
    }
}
