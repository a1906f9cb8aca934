//! `--stall-timeout SECONDS`, one definition for every benchmark (the watchdog that acts
//! on it is [`crate::watchdog`], with MPI).

use std::time::Duration;

use clap::Args;

/// The default, in seconds: no progress for this long ends the job. Far above the
/// longest step of a healthy run (a window of the largest messages, a barrier of 100,000
/// ranks, a file sync on a busy parallel file system), and far below the hours a stalled
/// job would otherwise burn until its time limit.
pub const DEFAULT_STALL_TIMEOUT_S: u64 = 300;

/// The largest timeout accepted: a week.
pub const MAX_STALL_TIMEOUT_S: u64 = 7 * 24 * 3600;

/// What `"stopped"` says in a version of the output files written while the run goes on:
/// a run that ends replaces it (complete, or saying why it stopped), so a document that
/// still says this was left by a run ended from outside.
pub const NOT_REPLACED: &str = "the run went on after this version of the file was written \
     and did not replace it: it was ended from outside (killed, its node lost, or a stall \
     noticed on another rank; see the job's standard error)";

/// The stall option of a benchmark.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct StallArgs {
    /// End the job (exit 6) when nothing a rank waits for moves for SECONDS: a rank that
    /// waits while others work (outside a partition, sitting out a scan round, behind a
    /// slower rank) is not stalled, so a healthy run of any length never reaches it. The
    /// files keep what was measured, marked incomplete, and one line names the rank, its
    /// host and where it waited. From before MPI_Init to MPI_Finalize (bounded by 30 s
    /// at most). 0 turns it off
    #[arg(long = "stall-timeout", visible_alias = "stall_timeout", value_name = "SECONDS",
          default_value_t = DEFAULT_STALL_TIMEOUT_S, value_parser = parse_timeout)]
    pub stall_timeout: u64,
}

impl Default for StallArgs {
    fn default() -> Self {
        StallArgs {
            stall_timeout: DEFAULT_STALL_TIMEOUT_S,
        }
    }
}

impl StallArgs {
    /// The timeout, `None` when turned off.
    pub fn timeout(&self) -> Option<Duration> {
        (self.stall_timeout > 0).then(|| Duration::from_secs(self.stall_timeout))
    }
}

/// Whole seconds, 0 to [`MAX_STALL_TIMEOUT_S`].
pub fn parse_timeout(text: &str) -> Result<u64, String> {
    let value: u64 = text
        .parse()
        .ok()
        .filter(|_| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| {
            format!("'{text}' is not a number of seconds (0 to {MAX_STALL_TIMEOUT_S}; 0: off)")
        })?;
    if value > MAX_STALL_TIMEOUT_S {
        return Err(format!(
            "{value} s is more than a week ({MAX_STALL_TIMEOUT_S} s); give 0 to turn the \
             watchdog off"
        ));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_zero_and_limits() {
        assert_eq!(parse_timeout("60"), Ok(60));
        assert_eq!(parse_timeout("0"), Ok(0));
        assert!(parse_timeout("-1")
            .unwrap_err()
            .contains("not a number of seconds"));
        assert!(parse_timeout("1e3").is_err() && parse_timeout("").is_err());
        assert!(parse_timeout("604801")
            .unwrap_err()
            .contains("more than a week"));
        assert_eq!(
            StallArgs::default().timeout(),
            Some(Duration::from_secs(300))
        );
        assert_eq!(StallArgs { stall_timeout: 0 }.timeout(), None);
    }
}
