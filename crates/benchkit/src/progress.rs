//! Progress on standard error: one live line rewritten in place on a terminal (with a
//! bar of the scheduled time), plain lines otherwise (a log file, a batch job's output).
//! Progress is best effort: a failed write to standard error is not the run's failure.

use std::io::{IsTerminal, Write};
use std::time::Instant;

/// A progress reporter for a run scheduled to take a known time.
#[derive(Debug, Clone)]
pub struct Progress {
    enabled: bool,
    live: bool,
    start: Instant,
    scheduled_s: f64,
}

impl Progress {
    /// A reporter for a run scheduled to take `scheduled_s`; silent unless `enabled`
    /// (the rank that reports); live when standard error is a terminal.
    pub fn new(enabled: bool, scheduled_s: f64) -> Self {
        Progress {
            enabled,
            live: enabled && std::io::stderr().is_terminal(),
            start: Instant::now(),
            scheduled_s,
        }
    }

    /// Seconds since the start, and the scheduled seconds left (0 when overdue).
    pub fn times(&self) -> (f64, f64) {
        let elapsed = self.start.elapsed().as_secs_f64();
        (elapsed, (self.scheduled_s - elapsed).max(0.0))
    }

    /// Shows `line` (no newline in it): in place after the bar on a terminal, as a line
    /// of its own otherwise.
    pub fn show(&self, line: &str) {
        if !self.enabled {
            return;
        }
        let text = if self.live {
            let (elapsed, _) = self.times();
            format!("\r[{}] {line}\x1b[K", bar(elapsed / self.scheduled_s, 20))
        } else {
            format!("{line}\n")
        };
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
    }

    /// Writes `line` as a line of its own (a warning): on a terminal the live line is
    /// cleared first, and the next [`Progress::show`] draws it again below.
    pub fn interject(&self, line: &str) {
        if !self.enabled {
            return;
        }
        let text = if self.live {
            format!("\r\x1b[K{line}\n")
        } else {
            format!("{line}\n")
        };
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
    }

    /// Ends the live line.
    pub fn finish(&self) {
        if self.live {
            let _ = writeln!(std::io::stderr());
        }
    }
}

/// A bar of `width` cells, the fraction `done` (clamped to 0..1) of them filled.
pub fn bar(done: f64, width: usize) -> String {
    let filled = (done.clamp(0.0, 1.0) * width as f64).ceil() as usize;
    (0..width)
        .map(|i| if i < filled { '#' } else { '.' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_fill_with_the_fraction_done() {
        assert_eq!(bar(0.0, 4), "....");
        assert_eq!(bar(0.5, 4), "##..");
        assert_eq!(bar(0.51, 4), "###.");
        assert_eq!(bar(2.0, 4), "####");
        assert_eq!(bar(f64::NAN, 4).len(), 4);
    }

    #[test]
    fn a_disabled_reporter_has_nothing_live() {
        let p = Progress::new(false, 10.0);
        assert!(!p.live);
        let (elapsed, left) = p.times();
        assert!(elapsed >= 0.0 && left <= 10.0);
        p.show("x");
        p.finish();
    }
}
