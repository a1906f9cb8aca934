//! The one keeper of a benchmark's result documents while it runs: every version of the
//! output files, whoever asks for it (the main thread as results arrive, between two
//! measurements and at most once per interval ([`Keeper::version_if_due`]), so that no
//! measurement is timed while a file is written; the watchdog's thread at a stall; the
//! end of the run), goes through here, and each says what it is
//! ([`Moment`]): a version of a run still going says in `"stopped"` that a file left
//! like that was ended from outside; the last one is either complete or says why the run
//! stopped, and nothing is written after it.
//!
//! The benchmark's results are a [`Record`], its output files the record's `Files`; the
//! keeper holds each behind a lock of its own. A version takes the files' lock, then a
//! snapshot of the record under the record's lock (a copy, the lock held for that only),
//! then renders and writes it: the main thread, which only ever takes the record's lock
//! between versions, never waits for a file to be written, and versions reach the files
//! in the order of their snapshots (a last version is never older than one before it). A thread that is not the main one (a stall, a signal) never waits long for
//! a lock: the main thread may be stuck in a write itself, and the files then keep their
//! last version, which says it is not the last.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

/// How long a thread other than the main one waits for the record before it gives up.
pub const LOCK_WAIT: Duration = Duration::from_secs(5);

/// What a version of the files is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment<'a> {
    /// The run goes on; another version will replace this one.
    Running,
    /// The run stopped before its end, for this reason: the last version.
    Stopped(&'a str),
    /// The run is complete: the last version.
    Complete,
}

impl Moment<'_> {
    /// The document's `"stopped"`: why a file left as this version is incomplete (for a
    /// running version: that it was ended from outside if nothing replaced it), `None`
    /// for a complete run.
    pub fn stopped(self) -> Option<String> {
        match self {
            Moment::Running => Some(crate::stall::NOT_REPLACED.to_string()),
            Moment::Stopped(why) => Some(why.to_string()),
            Moment::Complete => None,
        }
    }

    /// The document's `"complete"`.
    pub fn complete(self) -> bool {
        self == Moment::Complete
    }

    /// Whether this is the last version (the run's end is recorded in it).
    pub fn is_last(self) -> bool {
        self != Moment::Running
    }
}

/// A benchmark's results, as the keeper holds them, and how a version of them reaches
/// its output files.
pub trait Record: Send + 'static {
    /// What one version is made from: a copy of the results as of its moment.
    type Snapshot: Send;
    /// The output files.
    type Files: Send + 'static;

    /// The snapshot of `moment`, taken under the record's lock (keep it a copy: the main
    /// thread may wait for it); `None` when there is nothing to write (not rank 0, or
    /// the run has not described itself yet).
    fn snapshot(&mut self, moment: Moment<'_>) -> Option<Self::Snapshot>;

    /// Renders `snapshot` and writes it as every output file's version of `moment`. A
    /// failure is the complete message to print (a version written as the run goes that
    /// fails leaves the previous one in place; the caller decides whether to say it).
    fn write(
        files: &mut Self::Files,
        snapshot: Self::Snapshot,
        moment: Moment<'_>,
    ) -> Result<(), String>;

    /// After the last version: the files are let go (their reservations released), since
    /// the process may end without its drops.
    fn release(files: &mut Self::Files);
}

/// The keeper of one run's record; clones share it.
pub struct Keeper<R: Record> {
    shared: Arc<Shared<R>>,
}

impl<R: Record> Clone for Keeper<R> {
    fn clone(&self) -> Self {
        Keeper {
            shared: self.shared.clone(),
        }
    }
}

struct Shared<R: Record> {
    record: Mutex<R>,
    files: Mutex<R::Files>,
    /// The last version was written: nothing more is.
    ended: AtomicBool,
    /// When [`Keeper::version_if_due`] last began one, and what it cost.
    last_version: Mutex<Option<(Instant, Duration)>>,
}

impl<R: Record> Keeper<R> {
    /// Keeps `record`, whose versions go to `files`.
    pub fn new(record: R, files: R::Files) -> Keeper<R> {
        Keeper {
            shared: Arc::new(Shared {
                record: Mutex::new(record),
                files: Mutex::new(files),
                ended: AtomicBool::new(false),
                last_version: Mutex::new(None),
            }),
        }
    }

    /// The record, for the main thread to change or read (it waits for the lock).
    pub fn with<T>(&self, f: impl FnOnce(&mut R) -> T) -> T {
        f(&mut lock(&self.shared.record))
    }

    /// The files, for the main thread (it waits for a version being written).
    pub fn with_files<T>(&self, f: impl FnOnce(&mut R::Files) -> T) -> T {
        f(&mut lock(&self.shared.files))
    }

    /// Whether the last version was written.
    pub fn ended(&self) -> bool {
        self.shared.ended.load(Ordering::SeqCst)
    }

    /// A version of the running record, now, on this thread.
    pub fn version(&self) -> Result<(), String> {
        self.shared.write(Moment::Running, None)
    }

    /// A version of the running record, now, on this thread, unless the last one this
    /// way began less than `interval` ago, or less than its own cost over `share` ago
    /// (the first always is): for a caller between two measurements, whose files cost it
    /// one version per interval at most, and at most `share` of its time however slow the
    /// file system. Returns whether one was written (or failed: the error).
    pub fn version_if_due(&self, interval: Duration, share: f64) -> Result<bool, String> {
        let start = Instant::now();
        {
            let last = lock(&self.shared.last_version);
            if let Some((began, cost)) = *last {
                let wait = interval.max(cost.div_f64(share.max(f64::MIN_POSITIVE)));
                if start.duration_since(began) < wait {
                    return Ok(false);
                }
            }
        }
        let written = self.version();
        *lock(&self.shared.last_version) = Some((start, start.elapsed()));
        written.map(|()| true)
    }

    /// The last version: the run stopped for `why`. The record's lock is waited for [`LOCK_WAIT`] at most (nothing is written
    /// then: the files keep their last version, which says it is not the last).
    pub fn stop(&self, why: &str) -> Result<(), String> {
        self.shared
            .write(Moment::Stopped(why), Some(Instant::now() + LOCK_WAIT))
    }

    /// The last version: the run is complete.
    pub fn complete(&self) -> Result<(), String> {
        self.shared.write(Moment::Complete, None)
    }

    /// The end without a last version (nothing was measured that a file should keep):
    /// the files are let go as they are.
    pub fn abandon(&self) {
        let mut files = lock(&self.shared.files);
        if !self.shared.ended.swap(true, Ordering::SeqCst) {
            R::release(&mut files);
        }
    }

    /// A watchdog hook: at a stall, the last version with the stall's reason (a failure
    /// to write it said), then `after` (what else must go before the process ends).
    #[cfg(feature = "mpi")]
    pub fn stall_hook(&self, after: impl Fn() + Send + Sync + 'static) -> crate::watchdog::Hook {
        let keeper = self.clone();
        Box::new(move |stall| {
            if let Err(message) = keeper.stop(&stall.reason()) {
                outfile::eprintln!("{message}");
            }
            after();
        })
    }
}

impl<R: Record> Shared<R> {
    /// The version of `moment`: the files locked, then the snapshot taken under the
    /// record's lock (held only for that), then written; each lock waited for until
    /// `deadline` at most. Nothing after the last version.
    ///
    /// The snapshot is taken once the files are held, so versions reach the files in the
    /// order of their snapshots: a last version whose snapshot was older than a running
    /// version written while it waited (a signal taken just before the main thread
    /// recorded a pattern and wrote it) would put the older record back — and a launcher
    /// that kills the process between two files left them from different versions (a CSV
    /// with a pattern the JSON beside it did not have).
    fn write(&self, moment: Moment<'_>, deadline: Option<Instant>) -> Result<(), String> {
        if self.ended.load(Ordering::SeqCst) {
            return Ok(());
        }
        let Some(mut files) = lock_until(&self.files, deadline) else {
            return Ok(());
        };
        // Under the files' lock: a version that waited for it while the last one was
        // written is dropped.
        if self.ended.load(Ordering::SeqCst) {
            return Ok(());
        }
        let snapshot = match lock_until(&self.record, deadline) {
            Some(mut record) => record.snapshot(moment),
            None => return Ok(()),
        };
        if moment.is_last() {
            self.ended.store(true, Ordering::SeqCst);
        }
        let written = match snapshot {
            Some(s) => R::write(&mut files, s, moment),
            None => Ok(()),
        };
        if moment.is_last() {
            R::release(&mut files);
        }
        written
    }
}

/// `m` locked (a poisoned lock taken as it is).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `m` locked, unless it stays locked past `deadline` (`None`: waits as long as it takes).
fn lock_until<T>(m: &Mutex<T>, deadline: Option<Instant>) -> Option<MutexGuard<'_, T>> {
    let Some(deadline) = deadline else {
        return Some(lock(m));
    };
    loop {
        match m.try_lock() {
            Ok(g) => return Some(g),
            Err(TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(TryLockError::WouldBlock) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record whose files keep every version they were given.
    struct Log;

    #[derive(Default)]
    struct LogFiles {
        versions: Arc<Mutex<Vec<String>>>,
        released: Arc<AtomicBool>,
        fail: bool,
    }

    impl Record for Log {
        type Snapshot = String;
        type Files = LogFiles;

        fn snapshot(&mut self, moment: Moment<'_>) -> Option<String> {
            Some(format!(
                "complete={} stopped={}",
                moment.complete(),
                moment.stopped().unwrap_or_else(|| "-".into())
            ))
        }

        fn write(files: &mut LogFiles, line: String, _: Moment<'_>) -> Result<(), String> {
            if files.fail {
                return Err("disk full".into());
            }
            files.versions.lock().unwrap().push(line);
            Ok(())
        }

        fn release(files: &mut LogFiles) {
            files.released.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn running_versions_say_they_are_not_the_last_and_nothing_follows_the_last() {
        let files = LogFiles::default();
        let (versions, released) = (files.versions.clone(), files.released.clone());
        let keeper = Keeper::new(Log, files);
        keeper.version().unwrap();
        keeper.stop("STALL: rank 1 on h2").unwrap();
        // After the last version: neither a running one nor another last one.
        keeper.version().unwrap();
        keeper.complete().unwrap();
        let v = versions.lock().unwrap().clone();
        assert_eq!(v.len(), 2, "{v:?}");
        assert!(v[0].contains("complete=false") && v[0].contains("went on after this version"));
        assert_eq!(v[1], "complete=false stopped=STALL: rank 1 on h2");
        assert!(released.load(Ordering::SeqCst));
        assert!(keeper.ended());
    }

    #[test]
    fn a_complete_run_says_nothing_stopped_it() {
        let files = LogFiles::default();
        let versions = files.versions.clone();
        let keeper = Keeper::new(Log, files);
        keeper.complete().unwrap();
        assert_eq!(*versions.lock().unwrap(), ["complete=true stopped=-"]);
    }

    #[test]
    fn a_stop_gives_up_on_a_record_the_main_thread_holds() {
        let files = LogFiles::default();
        let versions = files.versions.clone();
        let keeper = Keeper::new(Log, files);
        let stuck = keeper.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let holder = std::thread::spawn(move || {
            stuck.with(|_| {
                tx.send(()).unwrap();
                std::thread::sleep(LOCK_WAIT + Duration::from_secs(1));
            })
        });
        rx.recv().unwrap();
        let t = Instant::now();
        keeper.stop("stalled").unwrap();
        assert!(t.elapsed() < LOCK_WAIT + Duration::from_millis(900));
        assert!(versions.lock().unwrap().is_empty());
        holder.join().unwrap();
    }

    /// A record of one number, whose files keep every version's.
    struct Counter(u32);

    impl Record for Counter {
        type Snapshot = u32;
        type Files = Arc<Mutex<Vec<u32>>>;

        fn snapshot(&mut self, _: Moment<'_>) -> Option<u32> {
            Some(self.0)
        }

        fn write(files: &mut Self::Files, n: u32, _: Moment<'_>) -> Result<(), String> {
            files.lock().unwrap().push(n);
            Ok(())
        }

        fn release(_: &mut Self::Files) {}
    }

    #[test]
    fn a_last_version_that_waited_for_the_files_is_not_older_than_the_record() {
        // A signal's last version waits while a version holds the files; meanwhile the
        // main thread records more. The last version has it: what a version writes is the
        // record as it is when the files are its, never a snapshot from before the wait.
        let written = Arc::new(Mutex::new(Vec::new()));
        let keeper = Keeper::new(Counter(0), written.clone());
        let (holding, held) = std::sync::mpsc::channel();
        let writer = keeper.clone();
        let holder = std::thread::spawn(move || {
            writer.with_files(|_| {
                holding.send(()).unwrap();
                std::thread::sleep(Duration::from_millis(300));
            })
        });
        held.recv().unwrap();
        let signal = keeper.clone();
        let stopper = std::thread::spawn(move || signal.stop("interrupted by signal 15"));
        std::thread::sleep(Duration::from_millis(100));
        keeper.with(|c| c.0 = 1);
        holder.join().unwrap();
        stopper.join().unwrap().unwrap();
        assert_eq!(*written.lock().unwrap(), [1]);
    }

    /// A record whose files take 50 ms to write.
    struct Slow;

    impl Record for Slow {
        type Snapshot = ();
        type Files = Arc<Mutex<Vec<Instant>>>;

        fn snapshot(&mut self, _: Moment<'_>) -> Option<()> {
            Some(())
        }

        fn write(files: &mut Self::Files, (): (), _: Moment<'_>) -> Result<(), String> {
            std::thread::sleep(Duration::from_millis(50));
            files.lock().unwrap().push(Instant::now());
            Ok(())
        }

        fn release(_: &mut Self::Files) {}
    }

    #[test]
    fn slow_versions_take_no_more_than_their_share_of_the_time() {
        let written = Arc::new(Mutex::new(Vec::new()));
        let keeper = Keeper::new(Slow, written.clone());
        // Due every millisecond, but a tenth of the time at most: 500 ms between the
        // starts of two versions that each take 50 ms or more.
        let t = Instant::now();
        while written.lock().unwrap().len() < 3 && t.elapsed() < Duration::from_secs(30) {
            keeper
                .version_if_due(Duration::from_millis(1), 0.1)
                .unwrap();
            std::thread::sleep(Duration::from_millis(1));
        }
        let ends = written.lock().unwrap().clone();
        assert_eq!(ends.len(), 3);
        for pair in ends.windows(2) {
            assert!(pair[1] - pair[0] >= Duration::from_millis(500), "{ends:?}");
        }
    }

    #[test]
    fn versions_between_measurements_are_written_at_most_once_per_interval() {
        let files = LogFiles::default();
        let versions = files.versions.clone();
        let keeper = Keeper::new(Log, files);
        let interval = Duration::from_millis(100);
        assert_eq!(keeper.version_if_due(interval, 1.0), Ok(true));
        // At once again: not due.
        assert_eq!(keeper.version_if_due(interval, 1.0), Ok(false));
        let mut when = vec![Instant::now()];
        let t = Instant::now();
        while when.len() < 3 && t.elapsed() < Duration::from_secs(20) {
            if keeper.version_if_due(interval, 1.0).unwrap() {
                when.push(Instant::now());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        assert_eq!(when.len(), 3, "due again after {interval:?}");
        for pair in when.windows(2) {
            assert!(pair[1] - pair[0] >= interval, "{when:?}");
        }
        assert_eq!(versions.lock().unwrap().len(), 3);
        assert!(versions.lock().unwrap()[0].contains("complete=false"));
        let failing = Keeper::new(
            Log,
            LogFiles {
                fail: true,
                ..LogFiles::default()
            },
        );
        assert_eq!(
            failing.version_if_due(interval, 1.0),
            Err("disk full".to_string())
        );
        assert_eq!(failing.complete(), Err("disk full".to_string()));
    }
}
