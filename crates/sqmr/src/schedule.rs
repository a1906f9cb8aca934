//! The sizes and iteration counts of a run.
//!
//! Sizes start at `min_msgsize` and double while they do not exceed `max_msgsize`; a size
//! of 0 is followed by 1. The first size runs `num_iters` iterations, and each next size a
//! fifth fewer, rounded down (`iters - iters / 5`), which keeps counts of 1 to 4 constant.

/// One step of the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// Message size in bytes.
    pub msgsize: u64,
    /// Timed iterations at this size.
    pub iters: u64,
}

/// The steps from `min` to `max` bytes, starting with `num_iters` iterations.
pub fn steps(min: u64, max: u64, num_iters: u64) -> Vec<Step> {
    let mut out = Vec::new();
    let mut size = Some(min);
    let mut iters = num_iters;
    while let Some(msgsize) = size.filter(|&s| s <= max) {
        out.push(Step { msgsize, iters });
        iters -= iters / 5;
        size = if msgsize == 0 {
            Some(1)
        } else {
            msgsize.checked_mul(2)
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_sequence_has_24_sizes_and_the_reference_counts() {
        let s = steps(0, 4_194_304, 4096);
        let iters: Vec<u64> = s.iter().map(|s| s.iters).collect();
        assert_eq!(
            iters,
            [
                4096, 3277, 2622, 2098, 1679, 1344, 1076, 861, 689, 552, 442, 354, 284, 228, 183,
                147, 118, 95, 76, 61, 49, 40, 32, 26
            ]
        );
        let sizes: Vec<u64> = s.iter().map(|s| s.msgsize).collect();
        let mut expected = vec![0];
        expected.extend((0..=22).map(|p| 1u64 << p));
        assert_eq!(sizes, expected);
    }

    #[test]
    fn an_odd_start_doubles_from_itself() {
        let sizes: Vec<u64> = steps(3, 100, 10).iter().map(|s| s.msgsize).collect();
        assert_eq!(sizes, [3, 6, 12, 24, 48, 96]);
    }

    #[test]
    fn small_counts_stay_and_never_reach_zero() {
        let iters: Vec<u64> = steps(1, 1 << 20, 6).iter().map(|s| s.iters).collect();
        assert_eq!(&iters[..4], &[6, 5, 4, 4]);
        assert!(iters[3..].iter().all(|&i| i == 4), "{iters:?}");
        let ones: Vec<u64> = steps(1, 1024, 1).iter().map(|s| s.iters).collect();
        assert!(ones.iter().all(|&i| i == 1));
    }

    #[test]
    fn doubling_stops_before_overflow() {
        let s = steps(1 << 62, u64::MAX, 5);
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].msgsize, 1 << 63);
    }

    #[test]
    fn equal_bounds_give_one_size_and_zero_max_gives_only_zero() {
        assert_eq!(
            steps(64, 64, 7),
            [Step {
                msgsize: 64,
                iters: 7
            }]
        );
        assert_eq!(
            steps(0, 0, 7),
            [Step {
                msgsize: 0,
                iters: 7
            }]
        );
    }
}
