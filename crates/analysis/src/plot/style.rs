//! Colours, fonts and number formats shared by the plots.

use plotters::style::RGBColor;

/// Series colours, in order; they repeat after the last.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
];

/// The colour of series `i`.
pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Title font size.
pub const TITLE: u32 = 24;
/// Panel caption font size.
pub const CAPTION: u32 = 20;
/// Axis description and legend font size.
pub const LABEL: u32 = 16;
/// Tick label font size.
pub const TICK: u32 = 14;

/// A byte count as a tick label: 1, 512, 4K, 64K, 1M, 2G.
pub fn bytes(v: f64) -> String {
    let v = v.round();
    for (factor, suffix) in [(1u64 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")] {
        let f = factor as f64;
        if v >= f && (v / f).fract() == 0.0 {
            return format!("{}{suffix}", v / f);
        }
    }
    format!("{v}")
}

/// A positive value as a short tick label: 3, 250, 1.5k, 20M, 1G.
pub fn si(v: f64) -> String {
    let (scaled, suffix) = if v >= 1e9 {
        (v / 1e9, "G")
    } else if v >= 1e6 {
        (v / 1e6, "M")
    } else if v >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let text = if scaled >= 100.0 || scaled.fract() == 0.0 {
        format!("{scaled:.0}")
    } else if scaled >= 10.0 {
        format!("{scaled:.1}")
    } else {
        format!("{scaled:.2}")
    };
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    format!("{text}{suffix}")
}

/// The largest magnitude an axis reaches (and the inverse, the smallest positive value a
/// log axis reaches); values beyond are drawn at its edge. Far beyond any figure, and far
/// enough from `f64::MAX` that a range's margins and its span stay finite: plotters' tick
/// search (`compute_f64_key_points`) loops forever on a range with an infinite end or
/// span, so every range handed to it is made by the functions here.
pub const AXIS_LIMIT: f64 = 1e300;

/// The finite values among `values`, each within ±[`AXIS_LIMIT`]: what the ranges below
/// are made of, and what is drawn in them (plotters' mapping of a point far outside its
/// range overflows).
pub fn on_axis(values: impl IntoIterator<Item = f64>) -> impl Iterator<Item = f64> {
    values
        .into_iter()
        .filter(|v| v.is_finite())
        .map(|v| v.clamp(-AXIS_LIMIT, AXIS_LIMIT))
}

/// A log axis range that holds `values` (positive finite ones) with a margin; `None` if
/// none. Both ends are finite and positive.
pub fn log_range(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = on_axis(values)
        .filter(|v| *v > 0.0)
        .map(|v| v.max(1.0 / AXIS_LIMIT))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    (lo <= hi).then(|| (lo / 1.5, hi * 1.5))
}

/// A linear axis range from 0 (or a tenth below the lowest value, when one is negative)
/// to a tenth above the highest value (1 when none is positive). Values that are not
/// finite are left out; both ends are finite and the range is never empty.
pub fn linear_range(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = on_axis(values).fold((0.0f64, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let hi = if hi > 0.0 { hi * 1.1 } else { 1.0 };
    (lo * 1.1, hi)
}

/// A range of days (since 1970) that holds `days` (finite ones): runs within a day get
/// half a day more on either side.
pub fn day_range(days: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = on_axis(days).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if lo > hi {
        return (-0.5, 0.5);
    }
    if hi - lo < 1.0 {
        return (lo - 0.5, hi + 0.5);
    }
    (lo, hi)
}

/// Ticks of a log axis from `lo` to `hi`: 1, 2 and 5 times the powers of ten in range,
/// only the powers when that would give more than 12.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Vec::new();
    }
    let first = lo.log10().floor() as i32;
    let last = hi.log10().ceil() as i32;
    let within = |steps: &[f64]| -> Vec<f64> {
        (first..=last)
            .flat_map(|e| steps.iter().map(move |m| m * 10f64.powi(e)))
            .filter(|v| *v >= lo && *v <= hi)
            .collect()
    };
    let fine = within(&[1.0, 2.0, 5.0]);
    if fine.len() <= 12 {
        fine
    } else {
        within(&[1.0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(bytes(1.0), "1");
        assert_eq!(bytes(4096.0), "4K");
        assert_eq!(bytes(4194304.0), "4M");
        assert_eq!(bytes(1536.0), "1536");
        assert_eq!(bytes(1000.0), "1000");
        assert_eq!(si(12_500_000.0), "12.5M");
        assert_eq!(si(3.0), "3");
        assert_eq!(si(1500.0), "1.5k");
        assert_eq!(si(250.0), "250");
        assert_eq!(log_range([0.0, 2.0, 8.0]), Some((2.0 / 1.5, 12.0)));
        assert_eq!(log_range([0.0]), None);
        assert_eq!(
            log_ticks(60.0, 3000.0),
            vec![100.0, 200.0, 500.0, 1000.0, 2000.0]
        );
        assert_eq!(log_ticks(0.5, 2e9).len(), 10);
        assert!(log_ticks(0.0, 1.0).is_empty());
    }

    #[test]
    fn ranges_are_finite_whatever_the_values() {
        let huge = [f64::INFINITY, f64::NAN, 1e308, f64::MAX, -f64::MAX, 5e-324];
        let (lo, hi) = log_range(huge).unwrap();
        assert!(lo > 0.0 && hi.is_finite() && lo < hi, "{lo} {hi}");
        let (lo, hi) = linear_range(huge);
        assert!(lo.is_finite() && hi.is_finite() && (hi - lo).is_finite() && lo < hi);
        assert_eq!(linear_range([2.0, 10.0]), (0.0, 11.0));
        assert_eq!(linear_range([f64::NAN]), (0.0, 1.0));
        assert_eq!(linear_range([-10.0, 0.0]), (-11.0, 1.0));
        assert_eq!(day_range([3.0]), (2.5, 3.5));
        assert_eq!(day_range([1.0, 5.0]), (1.0, 5.0));
        assert_eq!(day_range([f64::INFINITY]), (-0.5, 0.5));
    }
}
