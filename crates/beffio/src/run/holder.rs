//! The run directory's one holder on each rank: held by its descriptor from its creation
//! (or, on other ranks, their first look at it), let go once, by whoever comes first: the
//! end of the run, the signal thread (the launcher may kill the ranks soon after a
//! signal, so every rank removes it at once, and whichever runs last leaves nothing), or
//! the watchdog at a stall.

use std::sync::{Arc, Mutex};

use super::rundir::{RunDir, RunDirError};

/// The run directory of this rank, until it is let go.
pub(crate) struct Holder {
    dir: Mutex<Option<Arc<RunDir>>>,
    /// `--keep`: the run directory stays.
    keep: bool,
}

impl Holder {
    /// A holder of nothing yet, for a run with (`keep`) or without `--keep`.
    pub fn new(keep: bool) -> Arc<Holder> {
        Arc::new(Holder {
            dir: Mutex::new(None),
            keep,
        })
    }

    /// Holds `dir` from now on.
    pub fn hold(&self, dir: Arc<RunDir>) {
        *self.lock() = Some(dir);
    }

    /// The run is over (rank 0, after every rank left the directory): removed, or with
    /// `--keep` marked as kept on purpose (later runs and `--clean` leave it alone).
    /// Nothing when it was let go already.
    pub fn end(&self) -> Result<(), RunDirError> {
        match self.take() {
            Some(d) if self.keep => d.mark_kept(),
            Some(d) => d.remove(),
            None => Ok(()),
        }
    }

    /// The run is cut short (a signal, a stall): removed at once unless `--keep`.
    pub fn abort(&self) -> Result<(), RunDirError> {
        if self.keep {
            return Ok(());
        }
        self.take().map_or(Ok(()), |d| d.remove())
    }

    fn take(&self) -> Option<Arc<RunDir>> {
        self.lock().take()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Arc<RunDir>>> {
        self.dir
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
