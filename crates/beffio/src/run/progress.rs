//! Progress on standard error (rank 0), one line per pattern, on benchkit's terminal
//! layer (a live line on a terminal, plain lines otherwise).

use crate::results::PatternResult;
use crate::schedule::Access;

/// Reports where the run is and how long is left.
#[derive(Debug, Clone)]
pub struct Progress(benchkit::progress::Progress);

impl Progress {
    /// A reporter for a run scheduled to take `scheduled_s`; silent unless `enabled`.
    pub fn new(enabled: bool, scheduled_s: f64) -> Self {
        Progress(benchkit::progress::Progress::new(enabled, scheduled_s))
    }

    /// After each pattern of partition `n`.
    pub fn pattern(&self, n: usize, access: Access, r: &PatternResult) {
        let (elapsed, left) = self.0.times();
        self.0.show(&format!(
            "b_eff_io: n={n} {} pattern {:2} (type {}) {:>10.3} MB/s | elapsed {:.1} s, about {:.1} s left",
            access.name(),
            r.pattern.number,
            r.pattern.ptype.index(),
            r.bandwidth_mb_s(),
            elapsed,
            left
        ));
    }

    /// A line of its own on standard error (a warning), the live line going on after it.
    pub fn interject(&self, line: &str) {
        self.0.interject(line);
    }

    /// Ends the live line.
    pub fn finish(&self) {
        self.0.finish();
    }
}
