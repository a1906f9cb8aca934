//! A watchdog per rank: a stalled node never hangs the job.
//!
//! The benchmark's main thread reports its progress ([`Progress::tick`], a counter, cheap
//! enough for every iteration of a timed loop; [`Progress::at`] says where it is: a
//! message size and whom it waits for, a pattern, `MPI_Finalize`). A thread of its own
//! looks twice a second; when the counter has not moved for the stall timeout, it acts
//! without MPI (the main thread is stuck inside it, and MPI was started for one thread):
//! it prints one line on the standard error the process started with (a line said while
//! the benchmark holds its standard error back still reaches the terminal) naming this
//! rank, its host, how long it has waited and where, runs the benchmark's hook (rank 0
//! writes its files once more with `"complete": false` and the reason), and ends the
//! process with [`Exit::Stalled`](crate::Exit::Stalled) (`_exit`: no exit handler of the
//! MPI library runs, since one may wait on the lock the stuck thread holds). The launcher
//! then ends the other ranks, the stopped one included.
//!
//! # What counts as a stall: the job's progress, not this rank's
//!
//! A rank that waits while others work (outside a b_eff_io partition, behind a slower
//! rank at the end of a pattern, sitting out a scan round) makes no progress of its own,
//! and is not stalled. Such a wait says what it waits for, in one of two ways:
//!
//! - **an allowance** ([`Progress::allow`], [`Progress::wait`]): the wait may last that
//!   much longer than the timeout — the planned length of what it waits for, or as long
//!   as this rank took for the same work (a peer half as fast is not a stall);
//! - **pulses** ([`crate::heartbeat`]): a rank that works sends the waiting ranks a sign
//!   of life whenever this watchdog says one is due ([`Progress::pulse_due`], a quarter
//!   of the timeout); each pulse received counts as the waiting rank's progress.
//!
//! So the rule the benchmarks state in `--help`: a rank is stalled when nothing it waits
//! for has moved for the timeout; a healthy run of any length never reaches it.
//!
//! No rank decides for another: every rank that waits notices by itself, so the job ends
//! whichever rank stopped, rank 0 included. A rank that is stopped outright (SIGSTOP, a
//! node that froze) cannot report; the ranks that wait for it name it in their line.
//!
//! # The whole life of a rank
//!
//! The watchdog starts before `MPI_Init` ([`Watchdog::before_init`]: a rank frozen at
//! start-up leaves the others waiting inside `MPI_Init`, and they say so), and it bounds
//! `MPI_Finalize` ([`Watchdog::finalizing`]: [`FINALIZE_BOUND`] at most, leaving with the
//! run's own code, since the results were written before).

use std::io::Write;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the watchdog looks.
const LOOK_EVERY: Duration = Duration::from_millis(500);

/// The longest `MPI_Finalize` may take once the results are written (never more than the
/// stall timeout): a library that hangs there costs this, not the timeout.
pub const FINALIZE_BOUND: Duration = Duration::from_secs(30);

/// Where a rank is until `MPI_Init` returns.
pub const AT_INIT: &str = "MPI_Init, waiting for every rank of the job to start MPI \
                           (a rank frozen at start-up or a node that is down holds the others there)";

/// What a rank reports of its progress; cloned into whatever does the work.
#[derive(Debug, Clone)]
pub struct Progress {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    /// Moved by the main thread only (a plain load and store: no locked instruction in a
    /// timed loop); the watchdog only asks whether it changed.
    ticks: AtomicU64,
    place: Mutex<String>,
    /// The exit code at a stall: [`Exit::Stalled`](crate::Exit::Stalled), or the run's
    /// own once its results are written ([`Watchdog::finalizing`]).
    code: AtomicI32,
    /// How long the current wait may last beyond the limit, in milliseconds
    /// ([`Progress::allow`]); back to 0 at every [`Progress::at`].
    allowance_ms: AtomicU64,
    /// How long no progress may last, in milliseconds: the stall timeout, then
    /// [`FINALIZE_BOUND`] at most.
    limit_ms: AtomicU64,
    /// Set by the watchdog every quarter of the limit, taken by [`Progress::pulse_due`].
    pulse_due: AtomicBool,
    /// This rank (from the launcher's environment before `MPI_Init`; -1 when unknown).
    rank: AtomicI32,
    host: Mutex<String>,
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl Progress {
    /// One step done (an iteration, a call): the counter moves.
    #[inline]
    pub fn tick(&self) {
        let t = &self.shared.ticks;
        t.store(t.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
    }

    /// Where this rank is now (`message size 1024 B, waiting for rank 3 on n2`), and a
    /// step done. The allowance of an earlier wait ends here.
    pub fn at(&self, place: impl Into<String>) {
        self.wait(place, Duration::ZERO);
    }

    /// Where this rank waits now, and how much longer than the timeout that wait may last
    /// without progress ([`Progress::allow`]); a step done.
    pub fn wait(&self, place: impl Into<String>, allowance: Duration) {
        if let Ok(mut p) = self.shared.place.lock() {
            *p = place.into();
        }
        self.allow(allowance);
        self.tick();
    }

    /// The wait from here to the next [`Progress::at`] may last `extra` beyond the timeout
    /// (the planned length of what it waits for; as long as this rank took for the same
    /// work). One store: cheap enough at the end of a timed window.
    #[inline]
    pub fn allow(&self, extra: Duration) {
        self.shared
            .allowance_ms
            .store(millis(extra), Ordering::Relaxed);
    }

    /// Whether the ranks waiting for this one are due a sign of life
    /// ([`crate::heartbeat`]); true once per quarter of the timeout, false without a
    /// watchdog. A load and a branch: cheap enough after every call of a timed loop.
    #[inline]
    pub fn pulse_due(&self) -> bool {
        let due = &self.shared.pulse_due;
        if due.load(Ordering::Relaxed) {
            due.store(false, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// The stall timeout in force (`None` without a watchdog).
    pub fn timeout(&self) -> Option<Duration> {
        match self.shared.limit_ms.load(Ordering::Relaxed) {
            0 => None,
            ms => Some(Duration::from_millis(ms)),
        }
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
    /// This rank (-1: not known yet, before `MPI_Init` under a launcher that does not say).
    pub rank: i32,
    /// Its host.
    pub host: String,
    /// Seconds without progress.
    pub idle_s: u64,
    /// Where it was ([`Progress::at`]).
    pub place: String,
    /// What this host shows of the job's ranks that cannot take part
    /// ([`crate::local_ranks::said`]): `on this host, rank 1 (pid 906) is stopped …`.
    pub seen: Option<String>,
    /// The exit code the process leaves with.
    pub code: i32,
}

impl Stall {
    /// Where it was, with what this host shows of the ranks that cannot come.
    fn place_seen(&self) -> String {
        match &self.seen {
            Some(seen) => format!("{}; {seen}", self.place),
            None => self.place.clone(),
        }
    }

    fn who(&self) -> String {
        match self.rank {
            r if r >= 0 => format!("rank {r} on {}", self.host),
            _ => format!("a rank on {} (its number not known yet)", self.host),
        }
    }

    /// The one line on standard error: `sqmr: STALL: rank 0 on n1 made no progress for
    /// 60 s at message size 1 B (waiting for rank 1 on n2); the job stops (exit 6)`.
    pub fn line(&self) -> String {
        format!(
            "{}: STALL: {} made no progress for {} s at {}; the job stops (exit {}), \
             the output files keep what was measured",
            self.program,
            self.who(),
            self.idle_s,
            self.place_seen(),
            self.code
        )
    }

    /// The reason recorded in the JSON (`"complete": false`).
    pub fn reason(&self) -> String {
        format!(
            "stalled: {} made no progress for {} s at {}",
            self.who(),
            self.idle_s,
            self.place_seen()
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

    /// [`Watchdog::start`] before `MPI_Init`: the rank as the launcher's environment gives
    /// it, the kernel's host name, and `MPI_Init` as the place ([`AT_INIT`]), so that a
    /// job one of whose ranks never arrives ends within the timeout. [`Watchdog::identify`]
    /// once MPI runs.
    pub fn before_init(program: &str, timeout: Option<Duration>) -> Watchdog {
        let rank = crate::launch::launched(&|k| std::env::var(k).ok())
            .and_then(|l| l.task)
            .and_then(|t| i32::try_from(t).ok())
            .unwrap_or(-1);
        // The kernel's host name: what MPI's processor name is on every library here.
        let dog = Self::start(program, rank, &outfile::owner::this_host(), timeout);
        dog.progress.at(AT_INIT);
        test_stop(rank);
        dog
    }

    /// The rank and host as MPI names them, once `MPI_Init` has returned.
    pub fn identify(&self, rank: i32, host: &str) {
        self.progress.shared.rank.store(rank, Ordering::SeqCst);
        if let Ok(mut h) = self.progress.shared.host.lock() {
            *h = host.to_string();
        }
        self.progress.at("the start, after MPI_Init");
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
                allowance_ms: AtomicU64::new(0),
                limit_ms: AtomicU64::new(timeout.map_or(0, |t| millis(t).max(1))),
                pulse_due: AtomicBool::new(false),
                rank: AtomicI32::new(rank),
                host: Mutex::new(host.to_string()),
            }),
        };
        let hook: Arc<Mutex<Option<Hook>>> = Arc::new(Mutex::new(None));
        let (stop, stopped) = mpsc::channel::<()>();
        // The standard error this process started with: the benchmark may hold fd 2 back
        // while a pattern runs, and a STALL line must reach the terminal all the same.
        let terminal = std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .map(std::fs::File::from);
        let thread = timeout.and_then(|_| {
            let watched = progress.clone();
            let hook = hook.clone();
            let program = program.to_string();
            std::thread::Builder::new()
                .name("watchdog".into())
                .spawn(move || {
                    let shared = &watched.shared;
                    let mut seen = shared.ticks.load(Ordering::Relaxed);
                    let mut since = Instant::now();
                    let mut pulsed = Instant::now();
                    loop {
                        match stopped.recv_timeout(LOOK_EVERY) {
                            Err(RecvTimeoutError::Timeout) => {}
                            _ => return,
                        }
                        let limit = Duration::from_millis(shared.limit_ms.load(Ordering::Relaxed));
                        if pulsed.elapsed() >= (limit / 4).max(LOOK_EVERY) {
                            shared.pulse_due.store(true, Ordering::Relaxed);
                            pulsed = Instant::now();
                        }
                        let now = shared.ticks.load(Ordering::Relaxed);
                        if now != seen {
                            seen = now;
                            since = Instant::now();
                            continue;
                        }
                        let allowance =
                            Duration::from_millis(shared.allowance_ms.load(Ordering::Relaxed));
                        if since.elapsed() < limit.saturating_add(allowance) {
                            continue;
                        }
                        let stall = Stall {
                            program,
                            rank: shared.rank.load(Ordering::SeqCst),
                            host: shared.host.lock().map(|h| h.clone()).unwrap_or_default(),
                            idle_s: since.elapsed().as_secs(),
                            place: watched.place(),
                            seen: crate::local_ranks::said(&crate::local_ranks::absent()),
                            code: shared.code.load(Ordering::SeqCst),
                        };
                        // Said first: the hook may take seconds (files on a slow disk).
                        say(terminal.as_ref(), &stall.line());
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
    /// `MPI_Finalize`. A finalize that does not return within [`FINALIZE_BOUND`] (or the
    /// timeout, when shorter) ends the process with `code` (the hook is not run again: the
    /// files are complete).
    pub fn finalizing(&self, code: i32) {
        if let Ok(mut h) = self.hook.lock() {
            *h = None;
        }
        let shared = &self.progress.shared;
        shared.code.store(code, Ordering::SeqCst);
        let limit = shared.limit_ms.load(Ordering::Relaxed);
        if limit > 0 {
            shared
                .limit_ms
                .store(limit.min(millis(FINALIZE_BOUND)), Ordering::Relaxed);
        }
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

/// The test hook: the launcher's rank this variable names stops itself (SIGSTOP) before
/// `MPI_Init`, as a rank on a node that froze at start-up.
pub const TEST_STOP_ENV: &str = "XYLEM_TEST_STOP_BEFORE_INIT";

/// The test hook: the rank this variable names stops itself (SIGSTOP) at the end of the
/// run, its results written, before it meets the others to finalize.
pub const TEST_STOP_AT_END_ENV: &str = "XYLEM_TEST_STOP_AT_END";

fn test_stop(rank: i32) {
    test_stop_if(TEST_STOP_ENV, rank);
}

/// [`TEST_STOP_AT_END_ENV`]'s hook, for [`crate::finish`].
pub(crate) fn test_stop_at_end(rank: i32) {
    test_stop_if(TEST_STOP_AT_END_ENV, rank);
}

fn test_stop_if(variable: &str, rank: i32) {
    if std::env::var(variable)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
        .is_some_and(|r| r == rank && r >= 0)
    {
        let _ = signal_hook::low_level::raise(signal_hook::consts::SIGSTOP);
    }
}

/// Writes `line` on the standard error the process started with (else on today's).
fn say(terminal: Option<&std::fs::File>, line: &str) {
    let written = terminal.is_some_and(|mut t| t.write_all(format!("{line}\n").as_bytes()).is_ok());
    if !written {
        outfile::eprintln!("{line}");
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

    /// Waits up to 30 s for a stall to be caught.
    fn caught_within(seen: &Arc<Mutex<Vec<Stall>>>, limit: Duration) -> Option<Duration> {
        let started = Instant::now();
        while started.elapsed() < limit {
            if !seen.lock().unwrap().is_empty() {
                return Some(started.elapsed());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    #[test]
    fn a_wait_with_an_allowance_is_not_a_stall_until_it_is_spent() {
        let (seen, end) = caught();
        let dog = Watchdog::start_with("b_eff_io", 2, "n3", Some(Duration::from_secs(1)), end);
        let progress = dog.progress();
        progress.wait("outside partition n=1", Duration::from_secs(2));
        // 1 s of timeout and 2 s of allowance: nothing before 3 s, a stall soon after.
        let after = caught_within(&seen, Duration::from_secs(30)).expect("a stall");
        assert!(after >= Duration::from_millis(2900), "{after:?}");
        assert!(seen.lock().unwrap()[0]
            .line()
            .contains("at outside partition n=1"));
        // The next place ends the allowance.
        let (seen, end) = caught();
        let dog = Watchdog::start_with("b_eff_io", 2, "n3", Some(Duration::from_secs(1)), end);
        dog.progress().wait("a long wait", Duration::from_secs(60));
        dog.progress().at("a pattern");
        let after = caught_within(&seen, Duration::from_secs(30)).expect("a stall");
        assert!(after < Duration::from_secs(10), "{after:?}");
    }

    #[test]
    fn pulses_fall_due_each_quarter_of_the_timeout_and_never_without_a_watchdog() {
        let (_seen, end) = caught();
        let dog = Watchdog::start_with("b_eff_io", 0, "n1", Some(Duration::from_secs(4)), end);
        let progress = dog.progress();
        let mut due = 0;
        let until = Instant::now() + Duration::from_millis(3500);
        while Instant::now() < until {
            progress.tick();
            due += usize::from(progress.pulse_due());
            std::thread::sleep(Duration::from_millis(20));
        }
        // Every second for 3.5 s: 3, taken once each.
        assert!((2..=4).contains(&due), "{due}");
        let (_seen, end) = caught();
        let off = Watchdog::start_with("b_eff_io", 0, "n1", None, end);
        std::thread::sleep(Duration::from_millis(1200));
        assert!(!off.progress().pulse_due());
        assert_eq!(off.progress().timeout(), None);
    }

    #[test]
    fn finalize_is_bounded_below_a_long_timeout_and_a_rank_unknown_before_init_is_said() {
        let (_seen, end) = caught();
        let dog = Watchdog::start_with("sqmr", 0, "n1", Some(Duration::from_secs(300)), end);
        assert_eq!(dog.progress().timeout(), Some(Duration::from_secs(300)));
        dog.finalizing(4);
        assert_eq!(dog.progress().timeout(), Some(FINALIZE_BOUND));
        let (_seen, end) = caught();
        let short = Watchdog::start_with("sqmr", 0, "n1", Some(Duration::from_secs(5)), end);
        short.finalizing(0);
        assert_eq!(short.progress().timeout(), Some(Duration::from_secs(5)));
        let (seen, end) = caught();
        let dog = Watchdog::start_with("sqmr", -1, "n4", Some(Duration::from_secs(1)), end);
        dog.progress().at(AT_INIT);
        caught_within(&seen, Duration::from_secs(30)).expect("a stall");
        let line = seen.lock().unwrap()[0].line();
        assert!(
            line.starts_with("sqmr: STALL: a rank on n4 (its number not known yet)")
                && line.contains("at MPI_Init, waiting for every rank"),
            "{line}"
        );
        dog.identify(3, "n4.cluster");
        assert_eq!(dog.progress().shared.rank.load(Ordering::SeqCst), 3);
    }
}
