//! A watchdog per rank: a stalled node never hangs the job.
//!
//! The benchmark's main thread reports its progress ([`Progress::tick`], a counter, cheap
//! enough for every iteration of a timed loop; [`Progress::at`] says where it is: a
//! message size and whom it waits for, a pattern, `MPI_Finalize`). A thread of its own
//! looks once a second; when the counter has not moved for the stall timeout, it acts
//! without MPI (the main thread is stuck inside it, and MPI was started for one thread):
//! it prints one line on standard error naming this rank, its host, how long it has
//! waited and where, runs the benchmark's hook (rank 0 writes its files once more with
//! `"complete": false` and the reason), and ends the process with
//! [`Exit::Stalled`](crate::Exit::Stalled) (`_exit`: no exit handler of the MPI library
//! runs, since one may wait on the lock the stuck thread holds). The launcher then ends
//! the other ranks, the stopped one included.
//!
//! No rank decides for another: every rank that waits notices by itself, so the job ends
//! whichever rank stopped, rank 0 included. A rank that is stopped outright (SIGSTOP, a
//! node that froze) cannot report; the ranks that wait for it name it in their line.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the watchdog looks.
const LOOK_EVERY: Duration = Duration::from_millis(500);

/// What a rank reports of its progress; cloned into whatever does the work.
#[derive(Debug, Clone)]
pub struct Progress {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    ticks: AtomicU64,
    place: Mutex<String>,
    /// The exit code at a stall: [`Exit::Stalled`](crate::Exit::Stalled), or the run's
    /// own once its results are written ([`Watchdog::finalizing`]).
    code: AtomicI32,
}

impl Progress {
    /// One step done (an iteration, a call): the counter moves.
    #[inline]
    pub fn tick(&self) {
        self.shared.ticks.fetch_add(1, Ordering::Relaxed);
    }

    /// Where this rank is now (`message size 1024 B, waiting for rank 3 on n2`), and a
    /// step done.
    pub fn at(&self, place: impl Into<String>) {
        if let Ok(mut p) = self.shared.place.lock() {
            *p = place.into();
        }
        self.tick();
    }

    /// Where this rank said it was last.
    pub fn place(&self) -> String {
        self.shared
            .place
            .lock()
            .map(|p| p.clone())
            .unwrap_or_default()
    }
}

/// A stall, as the rank that noticed it tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stall {
    /// The program (`sqmr`, `b_eff_io`).
    pub program: String,
    /// This rank.
    pub rank: i32,
    /// Its host.
    pub host: String,
    /// Seconds without progress.
    pub idle_s: u64,
    /// Where it was ([`Progress::at`]).
    pub place: String,
    /// The exit code the process leaves with.
    pub code: i32,
}

impl Stall {
    /// The one line on standard error: `sqmr: STALL: rank 0 on n1 made no progress for
    /// 60 s at message size 1 B (waiting for rank 1 on n2); the job stops (exit 6)`.
    pub fn line(&self) -> String {
        format!(
            "{}: STALL: rank {} on {} made no progress for {} s at {}; the job stops (exit {}), \
             the output files keep what was measured",
            self.program, self.rank, self.host, self.idle_s, self.place, self.code
        )
    }

    /// The reason recorded in the JSON (`"complete": false`).
    pub fn reason(&self) -> String {
        format!(
            "stalled: rank {} on {} made no progress for {} s at {}",
            self.rank, self.host, self.idle_s, self.place
        )
    }
}

/// What the watchdog runs before it ends the process (rank 0: write the files once more).
pub type Hook = Box<dyn Fn(&Stall) + Send + Sync>;

/// One rank's watchdog; dropping it (or [`Watchdog::stop`]) stops it.
pub struct Watchdog {
    progress: Progress,
    hook: Arc<Mutex<Option<Hook>>>,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Watchdog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watchdog")
            .field("progress", &self.progress)
            .finish_non_exhaustive()
    }
}

/// How long a rank that has printed its last line waits before it ends the job (its own
/// exit, or `MPI_Abort`): launchers forward a rank's output asynchronously and dropped the
/// line when the end came first (Open MPI's mpirun at a stall, MPICH 5's hydra at a panic).
pub const FORWARD_PAUSE: Duration = Duration::from_millis(200);

impl Watchdog {
    /// Starts watching this rank: `timeout` without progress ends the process (see the
    /// module). `None` for the timeout (`--stall-timeout 0`) watches nothing.
    pub fn start(program: &str, rank: i32, host: &str, timeout: Option<Duration>) -> Watchdog {
        Self::start_with(program, rank, host, timeout, |stall| {
            // The line went out before the hook; a moment for the launcher to forward it.
            std::thread::sleep(FORWARD_PAUSE);
            signal_hook::low_level::exit(stall.code)
        })
    }

    /// [`Watchdog::start`] with what to do at the end instead of leaving (for tests).
    pub fn start_with<F>(
        program: &str,
        rank: i32,
        host: &str,
        timeout: Option<Duration>,
        end: F,
    ) -> Watchdog
    where
        F: Fn(&Stall) + Send + 'static,
    {
        let progress = Progress {
            shared: Arc::new(Shared {
                ticks: AtomicU64::new(0),
                place: Mutex::new("the start".into()),
                code: AtomicI32::new(crate::Exit::Stalled.code()),
            }),
        };
        let hook: Arc<Mutex<Option<Hook>>> = Arc::new(Mutex::new(None));
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = timeout.and_then(|timeout| {
            let watched = progress.clone();
            let hook = hook.clone();
            let (program, host) = (program.to_string(), host.to_string());
            std::thread::Builder::new()
                .name("watchdog".into())
                .spawn(move || {
                    let mut seen = watched.shared.ticks.load(Ordering::Relaxed);
                    let mut since = Instant::now();
                    loop {
                        match stopped.recv_timeout(LOOK_EVERY) {
                            Err(RecvTimeoutError::Timeout) => {}
                            _ => return,
                        }
                        let now = watched.shared.ticks.load(Ordering::Relaxed);
                        if now != seen {
                            seen = now;
                            since = Instant::now();
                            continue;
                        }
                        if since.elapsed() < timeout {
                            continue;
                        }
                        let stall = Stall {
                            program,
                            rank,
                            host,
                            idle_s: since.elapsed().as_secs(),
                            place: watched.place(),
                            code: watched.shared.code.load(Ordering::SeqCst),
                        };
                        // Said first: the hook may take seconds (files on a slow disk).
                        outfile::eprintln!("{}", stall.line());
                        if let Ok(guard) = hook.lock() {
                            if let Some(h) = guard.as_ref() {
                                h(&stall);
                            }
                        }
                        end(&stall);
                        return;
                    }
                })
                .ok()
        });
        Watchdog {
            progress,
            hook,
            stop: Some(stop),
            thread,
        }
    }

    /// The handle the work reports its progress to.
    pub fn progress(&self) -> Progress {
        self.progress.clone()
    }

    /// Sets what runs when a stall is noticed, before the line and the exit (rank 0
    /// writes its output files once more, `"complete": false` with [`Stall::reason`]).
    /// It runs on the watchdog's thread while the main thread is stuck: it must not wait
    /// for the main thread.
    pub fn on_stall(&self, hook: Hook) {
        if let Ok(mut h) = self.hook.lock() {
            *h = Some(hook);
        }
    }

    /// The results are written and the run leaves with `code`: what is left is
    /// `MPI_Finalize`. A finalize that does not return within the timeout ends the process
    /// with `code` (the hook is not run again: the files are complete).
    pub fn finalizing(&self, code: i32) {
        if let Ok(mut h) = self.hook.lock() {
            *h = None;
        }
        self.progress.shared.code.store(code, Ordering::SeqCst);
        self.progress
            .at("MPI_Finalize (the results were written before it)");
    }

    /// Stops watching.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.halt();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caught() -> (Arc<Mutex<Vec<Stall>>>, impl Fn(&Stall) + Send + 'static) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let into = seen.clone();
        (seen, move |s: &Stall| into.lock().unwrap().push(s.clone()))
    }

    #[test]
    fn a_rank_without_progress_is_reported_with_where_it_was() {
        let (seen, end) = caught();
        let dog = Watchdog::start_with("sqmr", 3, "n7", Some(Duration::from_secs(1)), end);
        let hooked = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = hooked.clone();
        dog.on_stall(Box::new(move |_| flag.store(true, Ordering::SeqCst)));
        dog.progress()
            .at("message size 8 B (waiting for rank 1 on n2)");
        let deadline = Instant::now() + Duration::from_secs(30);
        while seen.lock().unwrap().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let stalls = seen.lock().unwrap().clone();
        assert_eq!(stalls.len(), 1, "{stalls:?}");
        assert!(hooked.load(Ordering::SeqCst), "the hook ran first");
        let line = stalls[0].line();
        assert!(
            line.starts_with("sqmr: STALL: rank 3 on n7 made no progress for ")
                && line.contains("at message size 8 B (waiting for rank 1 on n2)")
                && line.contains("(exit 6)"),
            "{line}"
        );
        assert!(stalls[0].idle_s >= 1);
        assert!(stalls[0]
            .reason()
            .starts_with("stalled: rank 3 on n7 made no progress"));
    }

    #[test]
    fn a_hanging_finalize_leaves_with_the_runs_code() {
        let (seen, end) = caught();
        let dog = Watchdog::start_with("b_eff_io", 1, "n2", Some(Duration::from_secs(1)), end);
        dog.on_stall(Box::new(|_| {
            panic!("the files are complete: no hook at finalize")
        }));
        dog.finalizing(3);
        let deadline = Instant::now() + Duration::from_secs(30);
        while seen.lock().unwrap().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let stalls = seen.lock().unwrap().clone();
        assert_eq!(stalls.len(), 1);
        assert_eq!(stalls[0].code, 3);
        assert!(
            stalls[0].line().contains("at MPI_Finalize"),
            "{}",
            stalls[0].line()
        );
    }

    #[test]
    fn progress_keeps_it_quiet_and_zero_turns_it_off() {
        let (seen, end) = caught();
        let dog = Watchdog::start_with("b_eff_io", 0, "n1", Some(Duration::from_secs(1)), end);
        let progress = dog.progress();
        let until = Instant::now() + Duration::from_millis(2500);
        while Instant::now() < until {
            progress.tick();
            std::thread::sleep(Duration::from_millis(100));
        }
        dog.stop();
        assert!(seen.lock().unwrap().is_empty());
        let (seen, end) = caught();
        let off = Watchdog::start_with("sqmr", 0, "n1", None, end);
        std::thread::sleep(Duration::from_millis(1200));
        drop(off);
        assert!(seen.lock().unwrap().is_empty());
    }
}
