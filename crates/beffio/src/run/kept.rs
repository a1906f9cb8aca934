//! What a run keeps of its measurements before its end: rank 0 writes a version of every
//! output file (`"complete": false`) after every pattern, through a thread of its own so
//! that the measurement never waits for it, after every partition, and a last one when
//! the run stops (a signal, an error, a stall seen by the watchdog's thread).

use super::rundir;
use crate::outputs::Outputs;
use crate::report::{self, RunInfo};
use crate::results::{PartitionResult, PatternResult, UnfinishedPartition};
use crate::schedule::Access;
use crate::validity::{invalid_reasons, ValidityInput};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The least time between two versions written as the patterns go: a version costs a few
/// milliseconds, patterns last from a fraction of a second.
const VERSION_INTERVAL: Duration = Duration::from_millis(500);

/// How long a version waits for a lock the main thread holds before it gives up.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// What the run keeps for the versions of its output files written before its end.
pub(crate) struct Kept {
    /// The output files (rank 0), until the last version takes them.
    outputs: Mutex<Option<Outputs>>,
    /// The partitions finished so far.
    pub finished: Mutex<Vec<PartitionResult>>,
    /// The partition running now: the patterns it measured so far.
    current: Mutex<Option<UnfinishedPartition>>,
    /// The run's description, once the partitions start.
    pub info: Mutex<Option<RunInfo>>,
    /// `-T`, for the validity criteria.
    time_s: f64,
    /// `--noshared`.
    noshared: bool,
    /// The run directory, for the watchdog to remove at a stall (unless `--keep`).
    pub held: Mutex<Option<Arc<rundir::RunDir>>>,
    /// `--keep`.
    keep: bool,
    /// Whether a pattern finished since the writer's last version.
    pending: Mutex<bool>,
    /// Wakes the writer.
    wake: Condvar,
    /// Tells the writer to end.
    done: AtomicBool,
    /// Whether the earlier `PREFIX.sum` and `.prot` were moved aside (at the first pattern).
    earlier_kept: AtomicBool,
}

impl Kept {
    /// Keeps `outputs` (rank 0's files; none on other ranks) for a run of `-T time_s`.
    pub fn new(outputs: Outputs, time_s: f64, noshared: bool, keep: bool) -> Kept {
        Kept {
            outputs: Mutex::new(Some(outputs)),
            finished: Mutex::new(Vec::new()),
            current: Mutex::new(None),
            info: Mutex::new(None),
            time_s,
            noshared,
            held: Mutex::new(None),
            keep,
            pending: Mutex::new(false),
            wake: Condvar::new(),
            done: AtomicBool::new(false),
            earlier_kept: AtomicBool::new(false),
        }
    }

    /// The output files, for the final report; versions written after this do nothing.
    pub fn take_outputs(&self) -> Outputs {
        self.outputs
            .lock()
            .ok()
            .and_then(|mut o| o.take())
            .unwrap_or_else(Outputs::none)
    }

    /// Whether anything was measured: a finished partition or a pattern of the current one.
    pub fn measured_any(&self) -> bool {
        self.finished.lock().is_ok_and(|f| !f.is_empty())
            || self
                .current
                .lock()
                .is_ok_and(|c| c.as_ref().is_some_and(|u| u.measured() > 0))
    }

    /// Rank 0, on the main thread: pattern `r` of the partition of `processes` (scheduled
    /// `scheduled_s`) was measured under `access`; the writer makes a version of it. At
    /// the first, the run has gone ahead: the earlier `PREFIX.sum` and `.prot` are moved
    /// to their numbered names and said, here between two patterns (standard error is
    /// held back during one), not on the writer's thread.
    pub fn pattern_done(
        &self,
        processes: usize,
        scheduled_s: f64,
        access: Access,
        r: &PatternResult,
    ) {
        if !self.earlier_kept.swap(true, Ordering::SeqCst) {
            if let Some(outputs) = self.outputs.lock().ok().as_mut().and_then(|o| o.as_mut()) {
                outputs.keep_earlier();
            }
        }
        if let Ok(mut current) = self.current.lock() {
            let u = current.get_or_insert_with(UnfinishedPartition::default);
            if u.processes != processes {
                *u = UnfinishedPartition {
                    processes,
                    scheduled_s,
                    access: Default::default(),
                };
            }
            u.access[access.index()].push(r.clone());
        }
        if let Ok(mut p) = self.pending.lock() {
            *p = true;
            self.wake.notify_all();
        }
    }

    /// Rank 0: partition `r` finished; a version with it is written at once.
    pub fn partition_done(&self, r: PartitionResult) {
        if let Ok(mut f) = self.finished.lock() {
            f.push(r);
        }
        if let Ok(mut c) = self.current.lock() {
            *c = None;
        }
        self.write_version(None);
    }

    /// Rank 0: starts the thread that writes a version after the patterns; it ends when
    /// the returned guard drops.
    pub fn start_writer(self: &Arc<Kept>) -> Writer {
        let kept = self.clone();
        let handle = std::thread::Builder::new()
            .name("b_eff_io versions".into())
            .spawn(move || kept.writer_loop())
            .ok();
        Writer {
            kept: self.clone(),
            handle,
        }
    }

    fn writer_loop(&self) {
        loop {
            {
                let Ok(mut pending) = self.pending.lock() else {
                    return;
                };
                while !*pending && !self.done.load(Ordering::SeqCst) {
                    pending = match self.wake.wait(pending) {
                        Ok(p) => p,
                        Err(_) => return,
                    };
                }
                if self.done.load(Ordering::SeqCst) {
                    return;
                }
                *pending = false;
            }
            self.write_version(None);
            // At most one version per interval; a pattern finished meanwhile waits for
            // the next one.
            let until = Instant::now() + VERSION_INTERVAL;
            let Ok(mut pending) = self.pending.lock() else {
                return;
            };
            while !self.done.load(Ordering::SeqCst) {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                pending = match self.wake.wait_timeout(pending, left) {
                    Ok((p, _)) => p,
                    Err(_) => return,
                };
            }
        }
    }

    /// Rank 0: a version of every output file with what was measured so far,
    /// `"complete": false`, and `why` when the run has stopped (`None`: it goes on; then
    /// the files stay reserved for the next version, else this is their last).
    /// Never waits long for the main thread: a lock it holds (the main thread stuck in a
    /// write itself) is given up after a few seconds.
    pub fn write_version(&self, stopped: Option<&str>) {
        let deadline = Instant::now() + LOCK_WAIT;
        // Copies, so that the main thread never waits for a file to be written.
        let (Some(finished), Some(current), Some(info)) = (
            lock_until(&self.finished, deadline).map(|f| f.clone()),
            lock_until(&self.current, deadline).map(|c| c.clone()),
            lock_until(&self.info, deadline).and_then(|i| i.clone()),
        ) else {
            return;
        };
        let Some(mut outputs) = lock_until(&self.outputs, deadline) else {
            return;
        };
        let Some(files) = outputs.as_mut() else {
            return;
        };
        if files.is_empty() {
            return;
        }
        let current = current.filter(|u| u.measured() > 0);
        let errors: u64 = finished.iter().map(|p| p.errors()).sum::<u64>()
            + current.as_ref().map_or(0, |u| {
                u.access.iter().flatten().map(|r| r.errors).sum::<u64>()
            });
        let mut reasons = invalid_reasons(&ValidityInput {
            scheduled_time_s: self.time_s,
            shared_pointer: !self.noshared,
            data_errors: errors,
        });
        reasons.push(match stopped {
            Some(why) => format!("the run did not finish: {why}"),
            None => "the run is not finished yet".to_string(),
        });
        let mut doc = report::json::document(&info, &finished, &reasons);
        doc.complete = false;
        // Said in every version: one the run could not replace (the process killed, its
        // node lost, a stall noticed on another rank) tells why it is incomplete.
        doc.stopped = Some(stopped.unwrap_or(benchkit::stall::NOT_REPLACED).to_string());
        if stopped.is_some() {
            doc.mark_ended();
        }
        let mut prot = report::v21::protocol_file(&info, &finished);
        if let Some(u) = &current {
            doc.warnings.extend(crate::anomalies::unfinished(u));
            doc.unfinished = Some(u.into());
            prot.push_str(&report::v21::unfinished_protocol(finished.len(), u));
        }
        let texts = crate::outputs::Texts {
            json: serde_json::to_string_pretty(&doc).map_or(String::new(), |t| t + "\n"),
            csv: report::csv::render(&doc),
            sum: report::v21::summary_file(&info, &finished),
            prot,
        };
        // A version written as the run goes that fails (a full disk) is not said: the
        // previous one stays, and the last version says the error once.
        let failures = match stopped {
            None => {
                files.write_version(&texts);
                Vec::new()
            }
            Some(_) => outputs.take().map_or_else(Vec::new, |o| o.write(&texts)),
        };
        for failure in failures {
            outfile::eprintln!("{failure}");
        }
    }

    /// At a stall, on the watchdog's thread: the last version of the files, then the run
    /// directory removed (unless `--keep`), since the process ends at once after this.
    pub fn stalled(&self, why: &str) {
        self.write_partial(why);
        if self.keep {
            return;
        }
        let deadline = Instant::now() + LOCK_WAIT;
        if let Some(held) = lock_until(&self.held, deadline).and_then(|g| g.clone()) {
            if let Err(e) = held.remove() {
                outfile::eprintln!("b_eff_io: warning: {e}");
            }
        }
    }

    /// The last version of a run that stopped before its end, saying why.
    pub fn write_partial(&self, why: &str) {
        self.write_version(Some(why));
    }
}

/// The writer thread of [`Kept::start_writer`]: dropping it ends the thread (after the
/// version it may be writing).
pub(crate) struct Writer {
    kept: Arc<Kept>,
    handle: Option<JoinHandle<()>>,
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.kept.done.store(true, Ordering::SeqCst);
        if let Ok(_pending) = self.kept.pending.lock() {
            self.kept.wake.notify_all();
        }
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// `m` locked, unless it stays locked past `deadline`.
fn lock_until<T>(m: &Mutex<T>, deadline: Instant) -> Option<MutexGuard<'_, T>> {
    loop {
        match m.try_lock() {
            Ok(g) => return Some(g),
            Err(std::sync::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50))
            }
            Err(std::sync::TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(_) => return None,
        }
    }
}
