//! How long a run will take at least, from the pace of the first size's warm-up: said
//! before the first timed loop when it is far beyond a usual run, so that a mistyped
//! `--num_iters 4294967297` costs seconds, not days.
//!
//! Pure: plain numbers in, a line of text out.

use crate::schedule::Step;

/// A run forecast to take longer than this (seconds) is announced.
pub const ANNOUNCE_ABOVE_S: f64 = 600.0;

/// The timed iterations of a run at least: every size's count times the loops each size
/// runs at least (`--repeat`, or `--precision`'s first test).
pub fn timed_iterations(steps: &[Step], loops_per_size: u64) -> u128 {
    steps
        .iter()
        .map(|s| u128::from(s.iters) * u128::from(loops_per_size.max(1)))
        .sum()
}

/// The line to print when `iterations` at `seconds_per_iteration` (the first size's
/// pace, the fastest a size goes) take longer than [`ANNOUNCE_ABOVE_S`]; `None` otherwise.
/// `first` is the first size's timed iterations.
pub fn announcement(seconds_per_iteration: f64, first: &Step, iterations: u128) -> Option<String> {
    let total = seconds_per_iteration * iterations as f64;
    if !(total.is_finite() && total > ANNOUNCE_ABOVE_S) {
        return None;
    }
    Some(format!(
        "WARNING run time: the warm-up ran {} an iteration at {} B, so the first loop of {} \
         iterations takes about {} and the run's {iterations} timed iterations at least {}; \
         stop it (Ctrl-C, or scancel) and lower --num_iters if that was not meant",
        duration(seconds_per_iteration),
        first.msgsize,
        first.iters,
        duration(seconds_per_iteration * first.iters as f64),
        duration(total)
    ))
}

/// Seconds in the unit that reads best: "3.2 µs", "41 s", "2.5 h", "49.7 days".
pub fn duration(seconds: f64) -> String {
    const UNITS: [(f64, &str); 3] = [(86_400.0, "days"), (3_600.0, "h"), (60.0, "min")];
    if let Some((size, name)) = UNITS.iter().find(|(size, _)| seconds >= 2.0 * size) {
        return format!("{:.1} {name}", seconds / size);
    }
    match seconds {
        s if s >= 1.0 => format!("{s:.0} s"),
        s if s >= 1e-3 => format!("{:.1} ms", s * 1e3),
        s => format!("{:.1} µs", s * 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::steps;

    #[test]
    fn a_mistyped_iteration_count_is_announced_with_its_days() {
        let plan = steps(0, 4_194_304, 4_294_967_297);
        let iterations = timed_iterations(&plan, 1);
        // 4294967297 · (1 + 0.8 + 0.8² + …) over 24 sizes: about five times the first.
        assert!(iterations > 4 * 4_294_967_297 && iterations < 5 * 4_294_967_297);
        let line = announcement(2e-6, &plan[0], iterations).unwrap();
        assert!(line.starts_with("WARNING run time: the warm-up ran 2.0 µs an iteration at 0 B, so the first loop of 4294967297 iterations takes about 2.4 h"), "{line}");
        assert!(line.contains(" at least 11.9 h; "), "{line}");
        assert!(line.contains("lower --num_iters"), "{line}");
    }

    #[test]
    fn a_usual_run_says_nothing() {
        let plan = steps(0, 4_194_304, 4096);
        let iterations = timed_iterations(&plan, 9);
        // Even at a slow 1 ms an iteration, 9 loops of the default counts are 3 minutes.
        assert!(announcement(1e-3, &plan[0], iterations).is_none());
        assert!(announcement(f64::NAN, &plan[0], iterations).is_none());
        assert!(announcement(10e-3, &plan[0], iterations).is_some());
    }

    #[test]
    fn durations_read_in_their_unit() {
        assert_eq!(duration(3.2e-6), "3.2 µs");
        assert_eq!(duration(0.0412), "41.2 ms");
        assert_eq!(duration(41.0), "41 s");
        assert_eq!(duration(150.0), "2.5 min");
        assert_eq!(duration(9000.0), "2.5 h");
        assert_eq!(duration(4_294_967_297.0 * 1e-3), "49.7 days");
    }
}
