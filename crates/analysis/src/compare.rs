//! Two results side by side: per message size (sqmr) or per pattern (b_eff_io), both
//! values and the ratio B/A, as a text table or JSON.
//!
//! Rows are matched by message size, or by partition size, access method and pattern
//! number; a row only one result has shows `-` (JSON `null`) for the other and the ratio.
//!
//! sqmr results whose sizes were repeated (`--repeat`, `--precision`) carry a 95 %
//! confidence interval of each size's median; where both have one, the row says whether
//! the two differ beyond them (the intervals do not overlap) — the ratio B/A is then that
//! of the medians. Overlapping intervals do not prove the runs equal; they only show no
//! difference the samples can vouch for.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use beffio::patterns::type_label;
use beffio::report::json as beffio_doc;
use beffio::schedule::Access;
use beffio::units::format_size;
use sqmr::rates::Rate;
use sqmr::report::json as sqmr_doc;

use crate::error::Error;
use crate::load::{Document, Result, Run};

/// A comparison of two results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// `"sqmr"` or `"b_eff_io"`.
    pub benchmark: &'static str,
    /// The label of A.
    pub a: String,
    /// The label of B.
    pub b: String,
    /// The headline figures.
    pub headline: Vec<Row>,
    /// The figures row by row.
    pub rows: Vec<Row>,
    /// sqmr with intervals: how many sizes both results have intervals for, and how many
    /// of those differ beyond them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intervals: Option<IntervalSummary>,
    /// sqmr: which of the two ran one timed loop per size (`"A"`, `"B"`), whose ratios
    /// no interval vouches for; empty when both repeated their sizes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub single_samples: Vec<&'static str>,
}

/// How many sizes differ beyond their intervals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IntervalSummary {
    /// Sizes at which both results have a 95 % interval of the median.
    pub compared: usize,
    /// Of those, the sizes whose intervals do not overlap.
    pub differ: usize,
    /// The sizes whose loops in A were not independent (a trend or phases): there the
    /// interval understates how much a run varies, and `differ` is weaker evidence.
    pub a_not_independent: Vec<u64>,
    /// The same for B.
    pub b_not_independent: Vec<u64>,
}

/// One compared figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// What is compared: `"1024 B msgs/s"`, `"n=2 write pattern 12 (type 1 shared, 32 kB)"`.
    pub name: String,
    /// The message size (sqmr).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub msgsize: Option<u64>,
    /// The partition's processes (b_eff_io).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<usize>,
    /// The access method (b_eff_io).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access: Option<&'static str>,
    /// The pattern number (b_eff_io).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<usize>,
    /// The unit of the values.
    pub unit: &'static str,
    /// A's value.
    pub a: Option<f64>,
    /// B's value.
    pub b: Option<f64>,
    /// B / A (of the medians, for repeated sqmr sizes).
    pub ratio: Option<f64>,
    /// A's 95 % confidence interval of the median, `[low, high]` (sqmr, repeated sizes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a_ci95: Option<[f64; 2]>,
    /// B's 95 % confidence interval of the median.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b_ci95: Option<[f64; 2]>,
    /// Whether A and B differ beyond their intervals (they do not overlap); present when
    /// both have one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differ: Option<bool>,
}

impl Row {
    fn new(name: String, unit: &'static str, a: Option<f64>, b: Option<f64>) -> Row {
        let ratio = match (a, b) {
            (Some(a), Some(b)) if a != 0.0 => Some(b / a),
            _ => None,
        };
        Row {
            name,
            msgsize: None,
            partition: None,
            access: None,
            pattern: None,
            unit,
            a,
            b,
            ratio,
            a_ci95: None,
            b_ci95: None,
            differ: None,
        }
    }

    /// Sets the intervals of A and B, and whether they are apart.
    fn with_intervals(mut self, a: Option<[f64; 2]>, b: Option<[f64; 2]>) -> Row {
        self.a_ci95 = a;
        self.b_ci95 = b;
        self.differ = match (a, b) {
            (Some(x), Some(y)) => Some(apart(x, y)),
            _ => None,
        };
        self
    }
}

/// Whether two intervals `[low, high]` do not overlap.
pub fn apart(x: [f64; 2], y: [f64; 2]) -> bool {
    x[1] < y[0] || y[1] < x[0]
}

/// Compares `a` with `b` (of one kind), in time linear in their rows (and a log).
pub fn compare(a: &Run, b: &Run) -> Result<Comparison> {
    if a.kind() != b.kind() {
        return Err(Error::MixedKinds {
            first: a.source.clone(),
            first_kind: a.kind().name(),
            other: b.source.clone(),
            other_kind: b.kind().name(),
        });
    }
    let kind = a.kind();
    let (headline, rows) = match (&a.document, &b.document) {
        (Document::Sqmr(x), Document::Sqmr(y)) => sqmr_rows(x, y),
        (Document::BEffIo(x), Document::BEffIo(y)) => beffio_rows(x, y),
        (Document::SqmrScan(_), Document::SqmrScan(_)) => {
            return Err(Error::Usage(format!(
                "{} and {} are scans of nodes (sqmr --scan): compare compares message-rate \
                 and b_eff_io results; plot each scan (xylem plot SCAN.json -o scan.svg)",
                a.source, b.source
            )))
        }
        _ => return Err(Error::Usage("results of different kinds".into())),
    };
    // One verdict per size: the rate rows (a bandwidth row repeats its size's verdict).
    let verdicts: Vec<bool> = rows
        .iter()
        .filter(|r| r.unit == "msgs/s")
        .filter_map(|r| r.differ)
        .collect();
    let intervals = (!verdicts.is_empty()).then(|| IntervalSummary {
        compared: verdicts.len(),
        differ: verdicts.iter().filter(|&&d| d).count(),
        a_not_independent: not_independent(&a.document),
        b_not_independent: not_independent(&b.document),
    });
    let single_samples = [("A", &a.document), ("B", &b.document)]
        .into_iter()
        .filter(|(_, d)| single_loops(d))
        .map(|(name, _)| name)
        .collect();
    Ok(Comparison {
        benchmark: kind.name(),
        a: a.label.clone(),
        b: b.label.clone(),
        headline,
        rows,
        intervals,
        single_samples,
    })
}

/// Whether an sqmr result ran one timed loop per size (no `--repeat`, no `--precision`).
fn single_loops(document: &Document) -> bool {
    match document {
        Document::Sqmr(d) => !d.sizes.is_empty() && d.sizes.iter().all(|s| s.samples.len() <= 1),
        _ => false,
    }
}

/// The message sizes of an sqmr result whose loops were found not independent.
fn not_independent(document: &Document) -> Vec<u64> {
    match document {
        Document::Sqmr(d) => d.dependent_sizes(),
        _ => Vec::new(),
    }
}

fn sqmr_rows<'a>(a: &'a sqmr_doc::Document, b: &'a sqmr_doc::Document) -> (Vec<Row>, Vec<Row>) {
    type Peak = fn(&sqmr_doc::Document) -> Option<(u64, f64)>;
    let peak = |d: &sqmr_doc::Document, f: Peak| f(d).map(|p| p.1);
    let headline = vec![
        Row::new(
            "peak message rate".into(),
            "msgs/s",
            peak(a, sqmr_doc::Document::peak_rate),
            peak(b, sqmr_doc::Document::peak_rate),
        ),
        Row::new(
            "peak bandwidth".into(),
            "MiB/s",
            peak(a, sqmr_doc::Document::peak_bandwidth),
            peak(b, sqmr_doc::Document::peak_bandwidth),
        ),
    ];
    let (by_a, by_b) = (
        by_key(&a.sizes, |s| s.msgsize),
        by_key(&b.sizes, |s| s.msgsize),
    );
    let mut rows = Vec::new();
    for size in union(&by_a, &by_b) {
        let (x, y) = (by_a.get(&size).copied(), by_b.get(&size).copied());
        for (unit, pick) in [
            ("msgs/s", (|r: &Rate| r.msgs_per_s) as fn(&Rate) -> f64),
            ("MiB/s", |r: &Rate| r.mib_per_s),
        ] {
            let value = |s: Option<&sqmr_doc::SizeResult>| s.map(|s| pick(&s.rates.average));
            let interval = |s: Option<&sqmr_doc::SizeResult>| {
                s.and_then(|s| s.interval(pick)).map(|(lo, hi)| [lo, hi])
            };
            let mut row = Row::new(format!("{size} B"), unit, value(x), value(y))
                .with_intervals(interval(x), interval(y));
            row.msgsize = Some(size);
            rows.push(row);
        }
    }
    (headline, rows)
}

/// The items of `list` by `key`, the first of each key.
fn by_key<T, K: Ord>(list: &[T], key: impl Fn(&T) -> K) -> BTreeMap<K, &T> {
    let mut map = BTreeMap::new();
    for item in list {
        map.entry(key(item)).or_insert(item);
    }
    map
}

/// The keys of both maps, ascending, each once.
fn union<K: Ord + Copy, V>(a: &BTreeMap<K, V>, b: &BTreeMap<K, V>) -> Vec<K> {
    let keys: BTreeSet<K> = a.keys().chain(b.keys()).copied().collect();
    keys.into_iter().collect()
}

fn beffio_rows<'a>(
    a: &'a beffio_doc::Document,
    b: &'a beffio_doc::Document,
) -> (Vec<Row>, Vec<Row>) {
    let mut headline = vec![Row::new(
        "b_eff_io".into(),
        "MB/s",
        Some(a.b_eff_io_mb_s),
        Some(b.b_eff_io_mb_s),
    )];
    let by_processes = |d: &'a beffio_doc::Document| by_key(&d.partitions, |p| p.processes);
    let (parts_a, parts_b) = (by_processes(a), by_processes(b));
    let mut rows = Vec::new();
    // The largest partition first, as b_eff_io runs them.
    for n in union(&parts_a, &parts_b).into_iter().rev() {
        let (pa, pb) = (parts_a.get(&n).copied(), parts_b.get(&n).copied());
        let mut h = Row::new(
            format!("b_eff_io of partition n={n}"),
            "MB/s",
            pa.as_ref().map(|p| p.b_eff_io_mb_s),
            pb.as_ref().map(|p| p.b_eff_io_mb_s),
        );
        h.partition = Some(n);
        headline.push(h);
        for access in Access::ALL {
            let patterns = |p: Option<&'a beffio_doc::Partition>| {
                by_key(p.map_or(&[][..], |p| p.access.of(access)), |p| p.number)
            };
            let (la, lb) = (patterns(pa), patterns(pb));
            for number in union(&la, &lb) {
                let (x, y) = (la.get(&number).copied(), lb.get(&number).copied());
                let Some(shape) = x.or(y) else { continue };
                let mut row = Row::new(
                    format!(
                        "n={n} {} #{number} {} {}",
                        access.name(),
                        type_label(shape.ptype),
                        format_size(shape.chunk_bytes)
                    ),
                    "MB/s",
                    x.map(|p| p.bandwidth_mb_s),
                    y.map(|p| p.bandwidth_mb_s),
                );
                row.partition = Some(n);
                row.access = Some(access.name());
                row.pattern = Some(number);
                rows.push(row);
            }
        }
    }
    (headline, rows)
}

/// A value for the table: 4 significant figures or so, `-` for none.
fn cell(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v.abs() >= 1e5 => format!("{v:.0}"),
        Some(v) => format!("{v:.2}"),
    }
}

/// An interval for the table: `low..high`, `-` for none.
fn interval_cell(v: Option<[f64; 2]>) -> String {
    match v {
        None => "-".into(),
        Some([lo, hi]) => format!("{}..{}", cell(Some(lo)), cell(Some(hi))),
    }
}

/// The comparison as a text table: a header naming A and B, the headline figures, then
/// one line per row. When sizes carry intervals, three more columns give A's and B's
/// 95 % interval of the median and the verdict (`differ`: they do not overlap,
/// `overlap`, or `-`), and a last line counts the sizes that differ.
pub fn text(c: &Comparison) -> String {
    // The labels hold file names and fields of the documents: shown with any control
    // character escaped, never sent to the terminal as it is.
    let mut out = format!(
        "# {} comparison\n# A: {}\n# B: {}\n",
        c.benchmark,
        outfile::shown::text(&c.a),
        outfile::shown::text(&c.b)
    );
    let width = c
        .headline
        .iter()
        .chain(&c.rows)
        .map(|r| r.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let with_intervals = c
        .rows
        .iter()
        .any(|r| r.a_ci95.is_some() || r.b_ci95.is_some());
    let ci_width = c
        .rows
        .iter()
        .flat_map(|r| [interval_cell(r.a_ci95), interval_cell(r.b_ci95)])
        .map(|t| t.len())
        .max()
        .unwrap_or(0)
        .max("B 95% CI".len());
    let columns = |name: &str, unit: &str, a: &str, b: &str, ratio: &str| {
        format!("{name:<width$}  {unit:<6}  {a:>14}  {b:>14}  {ratio:>7}")
    };
    let intervals =
        |a: &str, b: &str, verdict: &str| format!("  {a:>ci_width$}  {b:>ci_width$}  {verdict}");
    let line = |r: &Row, intervals_too: bool| {
        let ratio = r
            .ratio
            .map(|x| format!("{x:.3}"))
            .unwrap_or_else(|| "-".into());
        let mut text = columns(&r.name, r.unit, &cell(r.a), &cell(r.b), &ratio);
        if intervals_too {
            let verdict = match r.differ {
                Some(true) => "differ",
                Some(false) => "overlap",
                None => "-",
            };
            text += &intervals(&interval_cell(r.a_ci95), &interval_cell(r.b_ci95), verdict);
        }
        text + "\n"
    };
    let head = columns("what", "unit", "A", "B", "B/A") + "\n";
    out += &head;
    for r in &c.headline {
        out += &line(r, false);
    }
    out += "\n";
    if with_intervals {
        out += &(columns("what", "unit", "A", "B", "B/A")
            + &intervals("A 95% CI", "B 95% CI", "CIs")
            + "\n");
    } else {
        out += &head;
    }
    for r in &c.rows {
        out += &line(r, with_intervals);
    }
    if !c.single_samples.is_empty() {
        let (who, verb) = match c.single_samples.as_slice() {
            [one] => (format!("{one} ran"), "its"),
            _ => ("A and B ran".to_string(), "their"),
        };
        out += &format!(
            "# single samples: {who} one timed loop per size, so {verb} ratios carry no \
             interval: two single loops can differ by a large factor by chance on a busy or \
             shared machine; run with --repeat 9 (or --precision 2) to see whether a \
             difference is beyond the spread\n"
        );
    }
    if let Some(s) = &c.intervals {
        out += &format!(
            "# {} of {} sizes with intervals in both differ beyond them (95 % intervals of \
             the median do not overlap; B/A is then the ratio of the medians)\n",
            s.differ, s.compared
        );
        if !s.a_not_independent.is_empty() || !s.b_not_independent.is_empty() {
            let list = |sizes: &[u64]| match sizes {
                [] => "none".to_string(),
                _ => crate::describe::sizes_text(sizes),
            };
            out += &format!(
                "# loops not independent (a trend or phases) in A at {}, in B at {}: there \
                 the intervals understate how much a run varies, and a difference is weaker \
                 evidence\n",
                list(&s.a_not_independent),
                list(&s.b_not_independent)
            );
        }
    }
    out
}

/// The comparison as pretty JSON with a final newline.
pub fn json(c: &Comparison) -> String {
    let mut s = serde_json::to_string_pretty(c).expect("a comparison serializes");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_need_both_values_and_a_nonzero_base() {
        assert_eq!(
            Row::new("x".into(), "u", Some(2.0), Some(3.0)).ratio,
            Some(1.5)
        );
        assert_eq!(Row::new("x".into(), "u", Some(0.0), Some(3.0)).ratio, None);
        assert_eq!(Row::new("x".into(), "u", None, Some(3.0)).ratio, None);
    }
}
