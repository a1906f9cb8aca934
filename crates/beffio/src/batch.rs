//! The geometric batch planner for time-driven patterns (the paper's proposed fix).
//!
//! Between two global checks a pattern runs a batch of calls; batches grow 1, 2, 4, … and
//! are capped by how many calls the measured rate says still fit, so a pattern costs
//! O(log r) checks and stops at most one batch after its budget. Every rank feeds the same
//! globally agreed elapsed time, so every rank gets the same batches. With the checks
//! overlapped ([`BatchPlanner::next_after`]) a batch is planned before the check of the
//! one before it is known (the second, before any: one call, as the first): batches grow
//! by the golden ratio, and a pattern stops at most two batches after its budget, so one
//! call longer than the budget is followed by one more.
//!
//! No batch planned from a check is shorter than a quarter of the budget at the rate
//! measured ([`MIN_BATCH_SHARE`]): a check overlapped with a batch of a few microseconds
//! cannot complete in it on a loaded node (every rank must be scheduled to take part), and
//! the rank would wait for it at the batch's end. A pattern of short calls so makes a
//! handful of checks, each with time to complete while calls run; the batch that takes
//! the rest of the budget, an eighth of it at most ([`LAST_BATCH_SHARE`]), none.

/// The shortest batch planned from a check, as a share of the budget, at the rate measured.
pub const MIN_BATCH_SHARE: f64 = 1.0 / 4.0;

/// The longest batch that may end a pattern with no check while it runs, as a share of the
/// budget, at the rate measured ([`BatchPlanner::is_last`]).
pub const LAST_BATCH_SHARE: f64 = 1.0 / 8.0;

/// Plans the batches of one time-driven pattern.
#[derive(Debug, Clone)]
pub struct BatchPlanner {
    budget: f64,
    extra_per_call: f64,
    next_size: u64,
    checks: u64,
    every_call: bool,
    stopped: bool,
    /// The last check [`Self::next_after`] was given: calls then, seconds.
    last_known: Option<(u64, f64)>,
    /// Whether the batch last planned takes the rest of the budget.
    last: bool,
}

impl BatchPlanner {
    /// A planner for `budget` seconds. `extra_per_call` is time each call will cost later
    /// (its share of the closing sync, estimated from what was measured so far).
    pub fn new(budget: f64, extra_per_call: f64) -> Self {
        BatchPlanner {
            budget,
            extra_per_call: extra_per_call.max(0.0),
            next_size: 1,
            checks: 0,
            every_call: false,
            stopped: false,
            last_known: None,
            last: false,
        }
    }

    /// The reference's protocol: one global check after every call (for comparison runs).
    pub fn check_every_call(mut self) -> Self {
        self.every_call = true;
        self
    }

    /// The first batch: always one call, so every pattern runs at least once.
    pub fn first(&mut self) -> u64 {
        self.next_size = 1;
        1
    }

    /// After a batch: `done` calls so far took `elapsed` seconds (agreed by all ranks).
    /// Returns the next batch size, or `None` to stop.
    pub fn next(&mut self, done: u64, elapsed: f64) -> Option<u64> {
        let loop_rate = if done > 0 { elapsed / done as f64 } else { 0.0 };
        self.plan(done, elapsed, loop_rate).map(|(size, _)| size)
    }

    /// [`Self::next`], with no batch shorter than [`MIN_BATCH_SHARE`] of the budget at
    /// `loop_rate` seconds a call; with the batch, how many calls fit in the rest.
    fn plan(&mut self, done: u64, elapsed: f64, loop_rate: f64) -> Option<(u64, f64)> {
        self.checks += 1;
        if self.stopped || done == 0 {
            self.stopped = true;
            return None;
        }
        let per_call = elapsed / done as f64 + self.extra_per_call;
        let remaining = self.left(done, elapsed);
        if remaining <= 0.0 {
            self.stopped = true;
            return None;
        }
        let fit = if per_call > 0.0 {
            (remaining / per_call).floor()
        } else {
            f64::MAX
        };
        if fit < 1.0 {
            self.stopped = true;
            return None;
        }
        if self.every_call {
            return Some((1, fit));
        }
        self.next_size = self.next_size.saturating_mul(2).max(self.floor(loop_rate));
        let size = (self.next_size as f64).min(fit) as u64;
        Some((size.max(1), fit))
    }

    /// The budget's seconds left after `done` calls that took `elapsed` seconds, their
    /// share of the closing sync counted.
    fn left(&self, done: u64, elapsed: f64) -> f64 {
        self.budget - elapsed - self.extra_per_call * done as f64
    }

    /// The overlapped loop's next batch: `known` is the last check whose result is known
    /// (calls then, the slowest rank's seconds), none before the first; `done_now` calls
    /// have been made. Before any result the batch is one call, as the first; after,
    /// [`Self::next_after`].
    pub fn next_overlapped(&mut self, known: Option<(u64, f64)>, done_now: u64) -> Option<u64> {
        match known {
            None => Some(self.first()),
            Some((done, elapsed)) => self.next_after(done, elapsed, done_now - done),
        }
    }

    /// Whether the batch [`Self::next_after`] planned last takes the rest of the budget,
    /// no more than an eighth of it ([`LAST_BATCH_SHARE`]): the pattern ends after it, and
    /// no check is needed while it runs. (A check would only find that nothing more fits,
    /// or, the rate having been taken for slower than it is, plan a tail of ever smaller
    /// batches, each waiting for its check.)
    pub fn is_last(&self) -> bool {
        self.last
    }

    /// The fewest calls a batch makes when a call takes `per_call` seconds in the loop
    /// (the sync's share aside: it is not spent there): a quarter of the budget's worth
    /// ([`MIN_BATCH_SHARE`]), at least one.
    fn floor(&self, per_call: f64) -> u64 {
        self.calls_in(MIN_BATCH_SHARE, per_call)
    }

    /// How many calls of `per_call` seconds `share` of the budget holds, at least one.
    fn calls_in(&self, share: f64, per_call: f64) -> u64 {
        if per_call > 0.0 {
            // Saturates at u64::MAX for a rate beyond any count.
            ((self.budget * share / per_call).floor() as u64).max(1)
        } else {
            u64::MAX
        }
    }

    /// After a batch whose global check is still under way (the overlapped loop): the
    /// last check known says `done` calls took `elapsed` seconds, and `in_flight` calls
    /// have been made since, taken to run at the rate it showed. Returns the batch after
    /// them, or `None` to stop. Nothing is known of the calls in flight, so the batch is
    /// at most as many calls as were checked: the calls not yet checked are never more than
    /// twice those checked (or than the shortest batch, [`MIN_BATCH_SHARE`]), batches
    /// still grow geometrically (by the golden ratio), and a pattern whose calls slow down
    /// stops at most two batches after its budget.
    ///
    /// When only the projection of the calls in flight puts the pattern past its budget,
    /// the next batch is one call, whose check measures them: a rate taken from a few
    /// calls, one of them slowed by a rank descheduled between two calls, would otherwise
    /// stop a pattern of fast calls at a fraction of its budget.
    pub fn next_after(&mut self, done: u64, elapsed: f64, in_flight: u64) -> Option<u64> {
        if done == 0 || self.stopped {
            return self.next(done, elapsed);
        }
        let rate = elapsed / done as f64;
        let projected = elapsed + in_flight as f64 * rate;
        // The shortest batch at the rate of the calls between the last two checks, when
        // faster: the average keeps a slow start (a descheduled rank) long after it.
        let recent = match self.last_known.replace((done, elapsed)) {
            Some((d0, e0)) if done > d0 && elapsed > e0 => (elapsed - e0) / (done - d0) as f64,
            _ => rate,
        };
        let loop_rate = recent.min(rate);
        let cap = done.max(self.floor(loop_rate));
        if let Some((size, fit)) = self.plan(done + in_flight, projected, loop_rate) {
            let size = size.min(cap);
            self.next_size = size;
            self.last = size as f64 >= fit && size <= self.calls_in(LAST_BATCH_SHARE, loop_rate);
            return Some(size);
        }
        let past = self.left(done + in_flight, projected) < 0.0;
        let known_fits = self.left(done, elapsed) >= rate + self.extra_per_call;
        if in_flight > 0 && past && known_fits {
            self.stopped = false;
            self.next_size = 1;
            return Some(1);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a planner against a simulated clock where call `i` costs `cost(i)` seconds.
    /// Returns (calls, elapsed, checks, last batch duration).
    fn simulate(budget: f64, cost: impl Fn(u64) -> f64, every: bool) -> (u64, f64, u64, f64) {
        let mut p = BatchPlanner::new(budget, 0.0);
        if every {
            p = p.check_every_call();
        }
        let mut done = 0;
        let mut elapsed = 0.0;
        let mut batch = p.first();
        let mut last;
        loop {
            let start = elapsed;
            for _ in 0..batch {
                elapsed += cost(done);
                done += 1;
            }
            last = elapsed - start;
            match p.next(done, elapsed) {
                Some(b) => batch = b,
                None => break,
            }
        }
        (done, elapsed, p.checks, last)
    }

    #[test]
    fn constant_rate_fills_the_budget_with_log_checks() {
        let (calls, elapsed, checks, _) = simulate(10.0, |_| 0.001, false);
        assert!((9_990..=10_000).contains(&calls), "calls {calls}");
        assert!(elapsed <= 10.0 + 1e-9);
        // log2(10000) ≈ 13.3, plus the final batch and the stop check.
        assert!(checks <= 17, "checks {checks}");
    }

    #[test]
    fn never_overshoots_by_more_than_one_batch() {
        // The rate changes under the planner's feet: slow calls appear late.
        for slow_from in [3u64, 50, 500, 5_000] {
            let cost = move |i: u64| if i >= slow_from { 0.01 } else { 0.0005 };
            let (_, elapsed, _, last) = simulate(5.0, cost, false);
            assert!(elapsed - 5.0 <= last + 1e-9, "slow_from {slow_from}");
        }
        // Noisy rate.
        let noisy = |i: u64| 0.0005 + 0.002 * (((i * 7919) % 13) as f64 / 13.0);
        let (_, elapsed, _, last) = simulate(3.0, noisy, false);
        assert!(elapsed - 3.0 <= last + 1e-9);
    }

    #[test]
    fn checks_grow_logarithmically() {
        let (c1, _, k1, _) = simulate(1.0, |_| 1e-4, false);
        let (c2, _, k2, _) = simulate(100.0, |_| 1e-4, false);
        assert!(c2 >= 99 * c1);
        assert!(k2 <= k1 + 8, "k1 {k1} k2 {k2}");
        assert!(k2 <= 2 * (c2 as f64).log2() as u64);
    }

    #[test]
    fn a_call_longer_than_the_budget_runs_once() {
        let (calls, _, checks, _) = simulate(1.0, |_| 5.0, false);
        assert_eq!(calls, 1);
        assert_eq!(checks, 1);
    }

    #[test]
    fn zero_budget_still_runs_one_call() {
        let (calls, _, _, _) = simulate(0.0, |_| 0.1, false);
        assert_eq!(calls, 1);
    }

    #[test]
    fn every_call_mode_checks_after_each_call() {
        let (calls, _, checks, _) = simulate(1.0, |_| 0.01, true);
        assert_eq!(checks, calls);
    }

    /// As [`simulate`], but as the overlapped loop plans: the first call, a second batch of
    /// one call planned blind, then each batch planned from the check made before the
    /// batch before it. Returns (calls, elapsed, checks, the last two batches' duration).
    fn simulate_overlapped(budget: f64, cost: impl Fn(u64) -> f64) -> (u64, f64, u64, f64) {
        let mut p = BatchPlanner::new(budget, 0.0);
        let (mut done, mut elapsed) = (0, 0.0);
        let mut lasts = [0.0f64; 2];
        let mut run = |n: u64, done: &mut u64, elapsed: &mut f64| {
            let start = *elapsed;
            for _ in 0..n {
                *elapsed += cost(*done);
                *done += 1;
            }
            lasts = [lasts[1], *elapsed - start];
        };
        run(p.first(), &mut done, &mut elapsed);
        let mut basis: Option<(u64, f64)> = None;
        while let Some(next) = p.next_overlapped(basis, done) {
            if p.is_last() {
                run(next, &mut done, &mut elapsed);
                break;
            }
            // The check is made here, and known once the next batch has run.
            let voted = (done, elapsed);
            run(next, &mut done, &mut elapsed);
            basis = Some(voted);
        }
        (done, elapsed, p.checks, lasts[0] + lasts[1])
    }

    #[test]
    fn the_overlapped_plan_fills_the_budget_with_log_checks() {
        let (calls, elapsed, checks, _) = simulate_overlapped(10.0, |_| 0.001);
        assert!((9_900..=10_000).contains(&calls), "calls {calls}");
        assert!(elapsed <= 10.0 + 1e-9, "elapsed {elapsed}");
        // log_1.618(10000) ≈ 19, plus the last batches.
        assert!(checks <= 24, "checks {checks}");
    }

    #[test]
    fn the_overlapped_plan_overshoots_by_at_most_two_batches() {
        // The rate rises tenfold under the planner's feet: the batch in flight and the one
        // planned before the check showed it end late, by no more than they took.
        for slow_from in [3u64, 50, 500, 5_000] {
            let cost = move |i: u64| if i >= slow_from { 0.01 } else { 0.001 };
            let (calls, elapsed, _, last_two) = simulate_overlapped(5.0, cost);
            assert!(calls >= 2, "slow_from {slow_from}");
            assert!(
                elapsed - 5.0 <= last_two + 1e-9,
                "slow_from {slow_from}: {elapsed} s, the last two batches {last_two} s"
            );
        }
        let noisy = |i: u64| 0.0005 + 0.002 * (((i * 7919) % 13) as f64 / 13.0);
        let (_, elapsed, _, last_two) = simulate_overlapped(3.0, noisy);
        assert!(elapsed - 3.0 <= last_two + 1e-9, "{elapsed}");
        // A steady rate ends within its budget.
        let (_, elapsed, _, _) = simulate_overlapped(3.0, |_| 0.0005);
        assert!(elapsed <= 3.0 + 1e-9, "{elapsed}");
    }

    #[test]
    fn the_overlapped_plan_stops_two_calls_after_one_longer_than_the_budget() {
        // The second call is made before the first one's check is known.
        let (calls, _, checks, _) = simulate_overlapped(1.0, |_| 5.0);
        assert_eq!((calls, checks), (2, 1));
    }

    #[test]
    fn no_batch_planned_from_a_check_is_shorter_than_the_floor() {
        let budget = 0.156;
        // The floor for 20 µs calls: MIN_BATCH_SHARE of the budget's worth of them.
        let floor = (budget * MIN_BATCH_SHARE / 20e-6).floor() as u64;
        assert!(floor > 100, "{floor}");
        let mut p = BatchPlanner::new(budget, 0.0);
        assert_eq!(p.first(), 1);
        // The first call took 20 µs: the next batch is the floor, not two calls.
        let second = p.next(1, 20e-6).unwrap();
        assert_eq!(second, floor);
        // Planned with its check in flight: the floor, not the one call checked.
        let third = p.next_after(1, 20e-6, second).unwrap();
        assert_eq!(third, floor);
        // Within the rest of the budget all the same: 1,000 calls took 0.15 s, and of the
        // floor's calls only 40 fit in the 6 ms left.
        let mut q = BatchPlanner::new(budget, 0.0);
        q.first();
        assert!(q.calls_in(MIN_BATCH_SHARE, 0.00015) > 40);
        assert_eq!(q.next(1_000, 0.15).unwrap(), 40);
    }

    #[test]
    fn short_calls_make_a_handful_of_checks_each_with_time_to_complete() {
        // 1 KiB calls of 3 µs in a pattern of 0.156 s (type 2 at -T 30): 52,000 calls.
        let budget = 0.156;
        let (calls, elapsed, checks, _) = simulate_overlapped(budget, |_| 3e-6);
        assert!(elapsed <= budget + 1e-9, "{elapsed}");
        assert!(calls as f64 >= 0.9 * budget / 3e-6, "calls {calls}");
        // Batches of the floor or more, growing by the golden ratio.
        assert!(checks <= 10, "checks {checks}");
        // Every batch planned from a check lasts MIN_BATCH_SHARE of the budget or more (to
        // a call's rounding when it fills the rest), but the last, which takes what is left.
        let mut p = BatchPlanner::new(budget, 0.0);
        // The first call, and the second planned blind.
        assert_eq!((p.first(), p.first()), (1, 1));
        let mut batches = vec![];
        let (mut basis, mut done) = (1, 2);
        while let Some(b) = p.next_after(basis, basis as f64 * 3e-6, done - basis) {
            batches.push(b);
            basis = done;
            done += b;
            if p.is_last() {
                break;
            }
        }
        let (last, rest) = batches.split_last().unwrap();
        assert!(*last >= 1, "{batches:?}");
        for &b in rest {
            assert!(
                b as f64 * 3e-6 >= 0.99 * budget * MIN_BATCH_SHARE,
                "{batches:?}"
            );
        }
        assert!(batches.len() <= 9, "{batches:?}");
    }

    #[test]
    fn a_call_slowed_once_early_does_not_stop_the_pattern() {
        // 3 µs calls, but the second took 20 ms (a rank descheduled between two calls): the
        // rate of the first two says 10 ms a call, and the big batch in flight, planned from
        // the first, seems to end far past the budget. One call measures it, and the
        // pattern goes on to its budget.
        let budget = 0.156;
        let cost = |i: u64| if i == 1 { 0.02 } else { 3e-6 };
        let (calls, elapsed, checks, _) = simulate_overlapped(budget, cost);
        assert!(
            elapsed >= 0.9 * budget && elapsed <= budget + 1e-9,
            "{elapsed} s"
        );
        assert!(calls > 30_000, "calls {calls}");
        assert!(checks <= 12, "checks {checks}");
        // A rate that really slowed down still stops the pattern: the in-flight batch and
        // the one call after it are all it overshoots by.
        let cost = |i: u64| if i >= 2 { 0.01 } else { 3e-6 };
        let (_, elapsed, _, last_two) = simulate_overlapped(budget, cost);
        assert!(
            elapsed - budget <= last_two + 1e-9,
            "{elapsed} s, {last_two} s"
        );
    }

    #[test]
    fn sync_share_shortens_the_pattern() {
        let mut p = BatchPlanner::new(10.0, 0.001);
        p.first();
        // 1 call took 1 ms; with 1 ms of sync per call, about 10 s / 2 ms calls fit.
        let mut done = 1;
        let mut elapsed = 0.001;
        while let Some(b) = p.next(done, elapsed) {
            done += b;
            elapsed += b as f64 * 0.001;
        }
        assert!((4_900..=5_000).contains(&done), "done {done}");
    }
}
