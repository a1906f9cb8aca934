//! The geometric batch planner for time-driven patterns (the paper's proposed fix).
//!
//! Between two global checks a pattern runs a batch of calls; batches grow 1, 2, 4, … and
//! are capped by how many calls the measured rate says still fit, so a pattern costs
//! O(log r) checks and stops at most one batch after its budget. Every rank feeds the same
//! globally agreed elapsed time, so every rank gets the same batches. With the checks
//! overlapped ([`BatchPlanner::next_after`]) a batch is planned before the check of the
//! one before it is known: batches grow by the golden ratio, and a pattern stops at most
//! two batches after its budget.

/// Plans the batches of one time-driven pattern.
#[derive(Debug, Clone)]
pub struct BatchPlanner {
    budget: f64,
    extra_per_call: f64,
    done: u64,
    next_size: u64,
    checks: u64,
    every_call: bool,
    stopped: bool,
}

impl BatchPlanner {
    /// A planner for `budget` seconds. `extra_per_call` is time each call will cost later
    /// (its share of the closing sync, estimated from what was measured so far).
    pub fn new(budget: f64, extra_per_call: f64) -> Self {
        BatchPlanner {
            budget,
            extra_per_call: extra_per_call.max(0.0),
            done: 0,
            next_size: 1,
            checks: 0,
            every_call: false,
            stopped: false,
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
        self.checks += 1;
        self.done = done;
        if self.stopped || done == 0 {
            self.stopped = true;
            return None;
        }
        let per_call = elapsed / done as f64 + self.extra_per_call;
        let remaining = self.budget - elapsed - self.extra_per_call * done as f64;
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
            return Some(1);
        }
        self.next_size = self.next_size.saturating_mul(2);
        let size = (self.next_size as f64).min(fit) as u64;
        Some(size.max(1))
    }

    /// After a batch whose global check is still under way (the overlapped loop): the
    /// last check known says `done` calls took `elapsed` seconds, and `in_flight` calls
    /// have been made since, taken to run at the rate it showed. Returns the batch after
    /// them, or `None` to stop. Nothing is known of the calls in flight, so the batch is
    /// at most as many calls as were checked: the calls not yet checked are never more than
    /// twice those checked, batches still grow geometrically (by the golden ratio), and a
    /// pattern whose calls slow down stops at most two batches after its budget.
    pub fn next_after(&mut self, done: u64, elapsed: f64, in_flight: u64) -> Option<u64> {
        if done == 0 {
            return self.next(0, elapsed);
        }
        let projected = elapsed + in_flight as f64 * (elapsed / done as f64);
        let size = self.next(done + in_flight, projected)?.min(done);
        self.next_size = size;
        Some(size)
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

    /// As [`simulate`], but as the overlapped loop plans: the first batch checked at once,
    /// then each batch planned from the check of the batch before the last. Returns
    /// (calls, elapsed, checks, the last two batches' duration).
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
        let Some(second) = p.next(done, elapsed) else {
            return (done, elapsed, p.checks, elapsed);
        };
        let mut basis = (done, elapsed);
        run(second, &mut done, &mut elapsed);
        while let Some(next) = p.next_after(basis.0, basis.1, done - basis.0) {
            // The check is made here, and known once the next batch has run.
            let voted = (done, elapsed);
            run(next, &mut done, &mut elapsed);
            basis = voted;
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
    fn the_overlapped_plan_stops_after_one_call_longer_than_the_budget() {
        let (calls, _, checks, _) = simulate_overlapped(1.0, |_| 5.0);
        assert_eq!((calls, checks), (1, 1));
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
