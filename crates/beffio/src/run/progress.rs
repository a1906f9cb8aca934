//! Progress on standard error (rank 0): a live line on a terminal, plain lines otherwise.

use crate::results::PatternResult;
use crate::schedule::Access;
use std::io::{IsTerminal, Write};
use std::time::Instant;

/// Reports where the run is and how long is left.
#[derive(Debug, Clone)]
pub struct Progress {
    enabled: bool,
    live: bool,
    start: Instant,
    scheduled_s: f64,
}

impl Progress {
    /// A reporter for a run scheduled to take `scheduled_s`; silent unless `enabled`.
    pub fn new(enabled: bool, scheduled_s: f64) -> Self {
        Progress {
            enabled,
            live: enabled && std::io::stderr().is_terminal(),
            start: Instant::now(),
            scheduled_s,
        }
    }

    /// After each pattern.
    pub fn pattern(&self, n: usize, access: Access, r: &PatternResult) {
        if !self.enabled {
            return;
        }
        let elapsed = self.start.elapsed().as_secs_f64();
        let left = (self.scheduled_s - elapsed).max(0.0);
        let line = format!(
            "b_eff_io: n={n} {} pattern {:2} (type {}) {:>10.3} MB/s | elapsed {:.1} s, about {:.1} s left",
            access.name(),
            r.pattern.number,
            r.pattern.ptype.index(),
            r.bandwidth_mb_s(),
            elapsed,
            left
        );
        let mut err = std::io::stderr().lock();
        if self.live {
            let done = (elapsed / self.scheduled_s).clamp(0.0, 1.0);
            let bar: String = (0..20)
                .map(|i| if (i as f64) < done * 20.0 { '#' } else { '.' })
                .collect();
            let _ = write!(err, "\r[{bar}] {line}\x1b[K");
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    }

    /// Ends the live line.
    pub fn finish(&self) {
        if self.live {
            eprintln!();
        }
    }
}
