//! Partitions and time budgets.

use crate::patterns::U_TOTAL;

/// The three access methods, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Access {
    /// First write: time-driven.
    Write,
    /// Rewrite of the same file with the write's repeat counts.
    Rewrite,
    /// Read back with the write's repeat counts; checks the markers.
    Read,
}

impl Access {
    /// All access methods in run order.
    pub const ALL: [Access; 3] = [Access::Write, Access::Rewrite, Access::Read];

    /// The name used in tables, JSON keys and protocol lines.
    pub fn name(self) -> &'static str {
        match self {
            Access::Write => "write",
            Access::Rewrite => "rewrite",
            Access::Read => "read",
        }
    }

    /// The name of a figure's panel, as the paper says it (`first write`, `rewrite`, `read`).
    pub fn title(self) -> &'static str {
        match self {
            Access::Write => "first write",
            Access::Rewrite => "rewrite",
            Access::Read => "read",
        }
    }

    /// Index 0..2 in run order.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The default partitions for a job of `n` processes: `n`, then `⌊n/2⌋` when ≥ 1 and ≠ n.
pub fn default_partitions(n: usize) -> Vec<usize> {
    let mut parts = vec![n];
    let half = n / 2;
    if half >= 1 && half != n {
        parts.push(half);
    }
    parts
}

/// What is wrong with `--partitions` for a job of its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PartitionsError {
    /// No partition at all.
    #[error("--partitions: the list is empty")]
    Empty,
    /// A partition of 0 processes or of more than the job has.
    #[error("--partitions: {size} is outside 1..{n} (the job has {n} processes)")]
    Outside {
        /// The partition.
        size: usize,
        /// The job's processes.
        n: usize,
    },
    /// A partition given twice.
    #[error("--partitions: {0} is listed twice")]
    Twice(usize),
}

/// Checks user partitions against the job size: each in `1..=n`, no duplicates.
pub fn check_partitions(parts: &[usize], n: usize) -> Result<(), PartitionsError> {
    if parts.is_empty() {
        return Err(PartitionsError::Empty);
    }
    for (i, &size) in parts.iter().enumerate() {
        if size == 0 || size > n {
            return Err(PartitionsError::Outside { size, n });
        }
        if parts[..i].contains(&size) {
            return Err(PartitionsError::Twice(size));
        }
    }
    Ok(())
}

/// Scheduled time of a partition of `n` of `total` processes: `T·n/N`.
pub fn partition_time(t: f64, n: usize, total: usize) -> f64 {
    t * n as f64 / total as f64
}

/// Scheduled time of one access method in a partition: a third.
pub fn access_time(partition_time: f64) -> f64 {
    partition_time / 3.0
}

/// A pattern's time budget `Tp = T_partition/3 · U/64`.
pub fn pattern_time(partition_time: f64, u: u32) -> f64 {
    access_time(partition_time) * f64::from(u) / f64::from(U_TOTAL)
}

/// The whole run's scheduled time: the sum of its partitions' times.
pub fn run_time(t: f64, parts: &[usize], total: usize) -> f64 {
    parts.iter().map(|&n| partition_time(t, n, total)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_partitions_are_full_then_half() {
        assert_eq!(default_partitions(1), vec![1]);
        assert_eq!(default_partitions(2), vec![2, 1]);
        assert_eq!(default_partitions(3), vec![3, 1]);
        assert_eq!(default_partitions(64), vec![64, 32]);
    }

    #[test]
    fn partitions_are_checked_against_n() {
        assert!(check_partitions(&[4, 2], 4).is_ok());
        assert_eq!(
            check_partitions(&[5], 4).unwrap_err().to_string(),
            "--partitions: 5 is outside 1..4 (the job has 4 processes)"
        );
        assert_eq!(
            check_partitions(&[0], 4),
            Err(PartitionsError::Outside { size: 0, n: 4 })
        );
        assert_eq!(
            check_partitions(&[2, 1, 2], 4).unwrap_err().to_string(),
            "--partitions: 2 is listed twice"
        );
        assert_eq!(check_partitions(&[], 4), Err(PartitionsError::Empty));
    }

    #[test]
    fn budgets_follow_t_n_over_n_thirds_and_units() {
        assert_eq!(partition_time(600.0, 32, 64), 300.0);
        assert_eq!(access_time(600.0), 200.0);
        // U = 4 of 64 in a 600 s partition: 200 s · 4/64 = 12.5 s.
        assert_eq!(pattern_time(600.0, 4), 12.5);
        assert_eq!(pattern_time(600.0, 0), 0.0);
        // A default run on 2 processes: 600 s + 300 s = 15 minutes.
        assert_eq!(run_time(600.0, &default_partitions(2), 2), 900.0);
    }

    #[test]
    fn pattern_budgets_of_one_access_add_up_to_a_third() {
        let table = crate::patterns::pattern_table(4 * crate::units::MB);
        let sum: f64 = table.iter().map(|p| pattern_time(90.0, p.u)).sum();
        assert!((sum - 30.0).abs() < 1e-9);
    }
}
