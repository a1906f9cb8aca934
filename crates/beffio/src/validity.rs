//! VALID / NOT VALID and the page-cache ratio.

/// The shortest scheduled time of the full partition that can give a valid run (seconds).
pub const MIN_VALID_TIME_S: f64 = 600.0;
/// Release 2.1's own shortest scheduled time for a valid run (seconds): what the files in
/// its layout (`.sum`) say, since its scripts and readers know that rule.
pub const MIN_VALID_TIME_2_1_S: f64 = 1800.0;

/// Whose rule of the scheduled time decides: xylem's ([`MIN_VALID_TIME_S`], the JSON and
/// the text output) or release 2.1's ([`MIN_VALID_TIME_2_1_S`], its `.sum` layout). The
/// other two criteria are the same in both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// xylem's.
    Xylem,
    /// Release 2.1's.
    Release21,
}

impl Rule {
    /// The shortest scheduled time of a valid run, in seconds.
    pub fn min_time_s(self) -> f64 {
        match self {
            Rule::Xylem => MIN_VALID_TIME_S,
            Rule::Release21 => MIN_VALID_TIME_2_1_S,
        }
    }
}

/// The three criteria of a valid run, each met or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Criteria {
    /// The scheduled time reaches the rule's minimum.
    pub time: bool,
    /// Type 1 used the shared file pointer.
    pub shared_pointer: bool,
    /// No data errors.
    pub no_errors: bool,
}

impl Criteria {
    /// Whether all three are met.
    pub fn valid(&self) -> bool {
        self.time && self.shared_pointer && self.no_errors
    }
}

/// The criteria of `input` under `rule`.
pub fn criteria(input: &ValidityInput, rule: Rule) -> Criteria {
    Criteria {
        time: input.scheduled_time_s >= rule.min_time_s(),
        shared_pointer: input.shared_pointer,
        no_errors: input.data_errors == 0,
    }
}
/// Below this many times the cache bound, an access method is cache-dominated.
pub const CACHE_FACTOR: f64 = 20.0;

/// What decides validity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValidityInput {
    /// `-T`: scheduled time of the full partition in seconds.
    pub scheduled_time_s: f64,
    /// Whether type 1 used the shared file pointer (not `--noshared`).
    pub shared_pointer: bool,
    /// Data errors over the whole run.
    pub data_errors: u64,
}

/// The failed criteria, empty for a valid run.
pub fn invalid_reasons(input: &ValidityInput) -> Vec<String> {
    let met = criteria(input, Rule::Xylem);
    let mut reasons = Vec::new();
    if !met.time {
        reasons.push(format!(
            "scheduled time T = {} s is below {} s",
            input.scheduled_time_s, MIN_VALID_TIME_S
        ));
    }
    if !met.shared_pointer {
        reasons.push("the shared file pointer was not used (--noshared)".to_string());
    }
    if !met.no_errors {
        reasons.push(format!("{} data errors on read", input.data_errors));
    }
    reasons
}

/// The verdict line: `VALID` or `NOT VALID (reason; reason)`.
pub fn verdict(reasons: &[String]) -> String {
    if reasons.is_empty() {
        "VALID".to_string()
    } else {
        format!("NOT VALID ({})", reasons.join("; "))
    }
}

/// Bytes moved as a multiple of the memory that could cache them (`bound` bytes).
pub fn cache_ratio(bytes: u64, bound: u64) -> f64 {
    if bound == 0 {
        f64::INFINITY
    } else {
        bytes as f64 / bound as f64
    }
}

/// Whether a ratio is below 20×: the page cache may explain the bandwidth.
pub fn cache_dominated(ratio: f64) -> bool {
    ratio < CACHE_FACTOR
}

/// `MemTotal` in bytes from the text of `/proc/meminfo`.
pub fn parse_meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line.split_whitespace().skip(1);
    let value: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") | None => Some(value * 1024),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_run_without_errors_is_valid() {
        let input = ValidityInput {
            scheduled_time_s: 600.0,
            shared_pointer: true,
            data_errors: 0,
        };
        assert!(invalid_reasons(&input).is_empty());
        assert_eq!(verdict(&invalid_reasons(&input)), "VALID");
    }

    #[test]
    fn every_failed_criterion_is_named() {
        let input = ValidityInput {
            scheduled_time_s: 30.0,
            shared_pointer: false,
            data_errors: 3,
        };
        let reasons = invalid_reasons(&input);
        assert_eq!(reasons.len(), 3);
        assert!(reasons[0].contains("T = 30 s is below 600 s"));
        assert!(reasons[1].contains("--noshared"));
        assert!(reasons[2].contains("3 data errors"));
        assert!(verdict(&reasons).starts_with("NOT VALID ("));
    }

    #[test]
    fn release_2_1_asks_for_thirty_minutes_where_xylem_asks_for_ten() {
        let input = ValidityInput {
            scheduled_time_s: 1200.0,
            shared_pointer: true,
            data_errors: 0,
        };
        assert!(criteria(&input, Rule::Xylem).valid());
        let c = criteria(&input, Rule::Release21);
        assert!(!c.valid() && !c.time && c.shared_pointer && c.no_errors);
        let long = ValidityInput {
            scheduled_time_s: 1800.0,
            ..input
        };
        assert!(criteria(&long, Rule::Release21).valid());
    }

    #[test]
    fn cache_ratio_and_the_20x_flag() {
        assert_eq!(cache_ratio(40, 2), 20.0);
        assert!(!cache_dominated(cache_ratio(40, 2)));
        assert!(cache_dominated(cache_ratio(39, 2)));
        assert!(cache_ratio(1, 0).is_infinite());
    }

    #[test]
    fn meminfo_total_in_bytes() {
        let text = "MemTotal:       24576000 kB\nMemFree:        1000 kB\n";
        assert_eq!(parse_meminfo_total(text), Some(24_576_000 * 1024));
        assert_eq!(parse_meminfo_total("MemFree: 1 kB"), None);
    }
}
