//! ReFrame performance logs: where ReFrame's records of xylem's checks meet our reports.
//!
//! ReFrame's `filelog` handler writes one file per system, partition and check: a header
//! line naming the columns, then one line per run and environment, fields separated by
//! `|`. Every performance variable `VAR` has the columns `VAR_value` and `VAR_unit` (and
//! `VAR_ref`, `VAR_lower_thres`, `VAR_upper_thres`, `VAR_result` when the format has
//! them). This module reads any such file whose header has `job_completion_time`: the
//! layout of `reframe/settings.py`, and ReFrame's default layout (`result|
//! job_completion_time|…`) too. A header line may come again further down (ReFrame writes
//! a new one when the format changes); the lines after it follow it.
//!
//! The records become [`Series`]: one per (system, partition, environment, check,
//! variable), points in time order, so that a month of nightly runs reads as a trend
//! ([`text`], [`json`]) or a plot of value against date ([`plot`]). Times are read as
//! written (`YYYY-MM-DDTHH:MM:SS`, the default of ReFrame's `datefmt`); a zone suffix is
//! kept in the text but not applied.

use chrono::{DateTime, NaiveDate, NaiveTime};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;
use serde::Serialize;

use crate::error::Error;
use crate::load::Result;
use crate::plot::{draw_error, font, render, style, Format};

/// The column every perflog header has (and no record has as a value).
pub const TIME_COLUMN: &str = "job_completion_time";

/// One measurement of one variable.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// `job_completion_time` as written.
    pub time: String,
    /// The same as days since 1970-01-01 (fractional), for ordering and plotting.
    pub day: f64,
    /// The figure.
    pub value: f64,
    /// `VAR_result` (`pass`, `fail`, `xfail`), when the log has it.
    pub result: Option<String>,
    /// `VAR_ref`, when the log has it and it is a number.
    pub reference: Option<f64>,
}

/// Every point of one variable of one check in one environment on one partition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    /// `system:partition` (what the log's columns say, empty when it has none).
    pub system: String,
    /// The programming environment (for xylem's checks: the MPI installation).
    pub environ: String,
    /// The check's name (`name`, else `display_name`, else the file's name).
    pub check: String,
    /// The performance variable.
    pub variable: String,
    /// Its unit (the first record's).
    pub unit: String,
    /// In time order.
    pub points: Vec<Point>,
}

impl Series {
    /// The label of the series in tables and legends.
    pub fn label(&self) -> String {
        format!("{} {} {}", self.system, self.environ, self.check)
    }

    /// The median of the values (the lower middle for an even count).
    pub fn median(&self) -> f64 {
        let mut v: Vec<f64> = self.points.iter().map(|p| p.value).collect();
        v.sort_by(f64::total_cmp);
        v[(v.len() - 1) / 2]
    }
}

/// Days since 1970-01-01 of `YYYY-MM-DDTHH:MM:SS…` (a space for the `T` too), or `None`.
pub fn day_of(time: &str) -> Option<f64> {
    let (date, clock) = time.get(..10).zip(time.get(11..19))?;
    let date = NaiveDate::parse_from_str(date, "%Y-%m-%d").ok()?;
    let clock = NaiveTime::parse_from_str(clock, "%H:%M:%S").ok()?;
    let seconds = date.and_time(clock).and_utc().timestamp();
    Some(seconds as f64 / 86_400.0)
}

/// The date `YYYY-MM-DD` of days since 1970-01-01 (the plot's ticks).
pub fn date_of(day: f64) -> String {
    DateTime::from_timestamp((day.floor() as i64) * 86_400, 0).map_or_else(
        || format!("day {day}"),
        |t| t.format("%Y-%m-%d").to_string(),
    )
}

/// A header line: its columns, and where each column a record needs is, found once per
/// header so that a record is read in time linear in its fields.
struct Header<'t> {
    /// The column names.
    columns: Vec<&'t str>,
    /// The first position of every name.
    index: HashMap<&'t str, usize>,
    /// Per performance variable: its name, and the positions of its value, unit, result
    /// and reference columns.
    variables: Vec<VariableColumns<'t>>,
}

/// Where one variable's columns are.
struct VariableColumns<'t> {
    name: &'t str,
    value: usize,
    unit: Option<usize>,
    result: Option<usize>,
    reference: Option<usize>,
}

impl<'t> Header<'t> {
    fn new(columns: Vec<&'t str>) -> Header<'t> {
        let mut index = HashMap::with_capacity(columns.len());
        for (k, c) in columns.iter().enumerate() {
            index.entry(*c).or_insert(k);
        }
        let find = |name: String| index.get(name.as_str()).copied();
        let variables = columns
            .iter()
            .enumerate()
            .filter_map(|(k, c)| {
                let name = c.strip_suffix("_value")?;
                Some(VariableColumns {
                    name,
                    value: k,
                    unit: find(format!("{name}_unit")),
                    result: find(format!("{name}_result")),
                    reference: find(format!("{name}_ref")),
                })
            })
            .collect();
        Header {
            columns,
            index,
            variables,
        }
    }

    /// The field of column `name` in `fields`, unless it is empty or `None`.
    fn get(&self, fields: &[&'t str], name: &str) -> Option<&'t str> {
        self.index.get(name).and_then(|&k| present(fields[k]))
    }
}

/// A field, unless it is empty or `None` (what ReFrame logs for a missing value).
fn present(field: &str) -> Option<&str> {
    Some(field).filter(|v| !v.is_empty() && *v != "None")
}

/// The field at `at`, if the header has the column and the field is [`present`].
fn field_at<'t>(fields: &[&'t str], at: Option<usize>) -> Option<&'t str> {
    at.and_then(|k| present(fields[k]))
}

/// The largest value a perflog record may hold: the JSON readers' bound on a rate
/// (`sqmr::report::json::MAX_RATE`, 10^15 messages or MiB per second, a million times
/// any node's), above every figure of xylem's checks (rates, bandwidths, b_eff_io, times).
pub const MAX_VALUE: f64 = sqmr::report::json::MAX_RATE;

/// The series in the text of one perflog (`source` names it in errors and is the check's
/// name when the log has no name column), merged into `into`. A value is checked as the
/// JSON readers check a figure: one that is not a finite number (`inf` from a performance
/// function that divided by a zero time, `nan`), negative or above [`MAX_VALUE`] is
/// refused, naming its line and column; a value that is not a number at all (`None`,
/// what a failed run logs) is skipped.
pub fn parse_into(
    text: &str,
    source: &str,
    into: &mut BTreeMap<(String, String, String, String), Series>,
) -> Result<()> {
    let bad = |line: usize, what: String| Error::Empty {
        path: format!("{source}, line {line}"),
        what,
    };
    let fallback_check = Path::new(source)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut header: Option<Header> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('|').collect();
        if fields.contains(&TIME_COLUMN) {
            header = Some(Header::new(fields));
            continue;
        }
        let Some(head) = &header else {
            return Err(bad(
                n,
                format!(
                    "a record before any header line; a ReFrame perflog (filelog handler) \
                     starts with a header naming `{TIME_COLUMN}`"
                ),
            ));
        };
        if fields.len() != head.columns.len() {
            return Err(bad(
                n,
                format!(
                    "{} fields where the header has {} columns",
                    fields.len(),
                    head.columns.len()
                ),
            ));
        }
        let get = |name: &str| head.get(&fields, name);
        let time = get(TIME_COLUMN).unwrap_or_default().to_string();
        let Some(day) = day_of(&time) else {
            return Err(bad(
                n,
                format!("`{TIME_COLUMN}` is {time:?}, not YYYY-MM-DDTHH:MM:SS"),
            ));
        };
        let system = match (get("system"), get("partition")) {
            (Some(s), Some(p)) => format!("{s}:{p}"),
            (Some(s), None) => s.to_string(),
            _ => String::new(),
        };
        let environ = get("environ").unwrap_or_default().to_string();
        let check = get("name")
            .or_else(|| get("display_name"))
            .unwrap_or(&fallback_check)
            .to_string();
        for var in &head.variables {
            let field = fields[var.value];
            // A failed run logs `None` for what it could not measure.
            let Ok(value) = field.parse::<f64>() else {
                continue;
            };
            if !value.is_finite() {
                return Err(bad(
                    n,
                    format!(
                        "column `{}` is {field:?}, not a finite number (a performance \
                         function that divided by a zero time?); fix or remove the record",
                        head.columns[var.value]
                    ),
                ));
            }
            if !(0.0..=MAX_VALUE).contains(&value) {
                return Err(bad(
                    n,
                    format!(
                        "column `{}` is {}, which no run gives; expected a number from 0 to \
                         {MAX_VALUE:e}; fix or remove the record",
                        head.columns[var.value],
                        sqmr::report::json::shown(value)
                    ),
                ));
            }
            let key = (
                system.clone(),
                environ.clone(),
                check.clone(),
                var.name.to_string(),
            );
            let series = into.entry(key).or_insert_with(|| Series {
                system: system.clone(),
                environ: environ.clone(),
                check: check.clone(),
                variable: var.name.to_string(),
                unit: field_at(&fields, var.unit).unwrap_or_default().to_string(),
                points: Vec::new(),
            });
            series.points.push(Point {
                time: time.clone(),
                day,
                value,
                result: field_at(&fields, var.result).map(str::to_string),
                reference: field_at(&fields, var.reference)
                    .and_then(|r| r.parse().ok())
                    .filter(|r: &f64| r.is_finite()),
            });
        }
    }
    if header.is_none() {
        return Err(Error::Empty {
            path: source.to_string(),
            what: format!("no header line naming `{TIME_COLUMN}`: not a ReFrame perflog"),
        });
    }
    Ok(())
}

/// Every series of the perflogs `files`, those of `variables` only when it is not empty,
/// each in time order; an error when there is none.
pub fn load_files(files: &[&Path], variables: &[String]) -> Result<Vec<Series>> {
    let mut all = BTreeMap::new();
    for path in files {
        let text = crate::load::read_input(path)?;
        parse_into(&text, &path.display().to_string(), &mut all)?;
    }
    let wanted: BTreeSet<&str> = variables.iter().map(String::as_str).collect();
    let mut series: Vec<Series> = all
        .into_values()
        .filter(|s| wanted.is_empty() || wanted.contains(s.variable.as_str()))
        .collect();
    for s in &mut series {
        s.points.sort_by(|a, b| a.day.total_cmp(&b.day));
    }
    if series.is_empty() {
        let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
        return Err(Error::Empty {
            path: names.join(", "),
            what: if variables.is_empty() {
                "no performance figure in these perflogs".to_string()
            } else {
                format!("no figure of {} in these perflogs", variables.join(", "))
            },
        });
    }
    Ok(series)
}

/// A table: per series its runs, first and last time, minimum, median, maximum, the
/// last value and its ratio to the median, and how many runs failed that variable.
pub fn text(series: &[Series]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<46} {:<14} {:>4} {:<19} {:<19} {:>14} {:>14} {:>14} {:>14} {:>7} {:>5}  unit",
        "system environ check",
        "variable",
        "runs",
        "first",
        "last",
        "min",
        "median",
        "max",
        "last",
        "last/md",
        "fail"
    );
    for s in series {
        let values = s.points.iter().map(|p| p.value);
        let min = values.clone().fold(f64::INFINITY, f64::min);
        let max = values.fold(f64::NEG_INFINITY, f64::max);
        let median = s.median();
        let (first, last) = (&s.points[0], &s.points[s.points.len() - 1]);
        let fails = s
            .points
            .iter()
            .filter(|p| p.result.as_deref() == Some("fail"))
            .count();
        let ratio = if median != 0.0 {
            format!("{:.3}", last.value / median)
        } else {
            "-".to_string()
        };
        let _ = writeln!(
            out,
            "{:<46} {:<14} {:>4} {:<19} {:<19} {:>14.3} {:>14.3} {:>14.3} {:>14.3} {:>7} {:>5}  {}",
            s.label(),
            s.variable,
            s.points.len(),
            short_time(&first.time),
            short_time(&last.time),
            min,
            median,
            max,
            last.value,
            ratio,
            fails,
            s.unit
        );
    }
    out
}

fn short_time(time: &str) -> &str {
    time.get(..19).unwrap_or(time)
}

/// Every series with all its points, as one JSON document.
pub fn json(series: &[Series]) -> String {
    #[derive(Serialize)]
    struct Out<'a> {
        source: &'static str,
        series: &'a [Series],
    }
    let mut text = serde_json::to_string_pretty(&Out {
        source: "reframe perflog",
        series,
    })
    .expect("series serialise");
    text.push('\n');
    text
}

/// Width of the picture, and height of each variable's panel.
pub const WIDTH: u32 = 1200;
/// Height of one variable's panel.
pub const PANEL_HEIGHT: u32 = 360;

/// Value against date, one panel per variable (in the order of the first series that has
/// it), one line with points per series, as the bytes of an SVG or PNG file.
pub fn plot(series: &[Series], format: Format) -> Result<Vec<u8>> {
    if series.is_empty() {
        return Err(Error::Usage("no series to plot".to_string()));
    }
    let panels = panels(series);
    if panels.len() > MAX_PANELS {
        return Err(Error::Usage(format!(
            "{} performance variables to plot, more than the {MAX_PANELS} panels one picture \
             holds; choose some with --var NAME",
            panels.len()
        )));
    }
    font::ensure()?;
    let height = PANEL_HEIGHT * panels.len() as u32 + 40;
    render(
        (WIDTH, height),
        format,
        |root| draw(root, &panels),
        |root| draw(root, &panels),
    )
}

/// The most panels (variables) one picture holds.
pub const MAX_PANELS: usize = 32;

/// One panel: a variable and its series, each with its index in `series` (its colour).
type Panel<'s> = (&'s str, Vec<(usize, &'s Series)>);

/// The series grouped by variable, variables in the order of the first series that has
/// each.
fn panels(series: &[Series]) -> Vec<Panel<'_>> {
    let mut panels: Vec<Panel<'_>> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    for (i, s) in series.iter().enumerate() {
        let k = *at.entry(s.variable.as_str()).or_insert_with(|| {
            panels.push((s.variable.as_str(), Vec::new()));
            panels.len() - 1
        });
        panels[k].1.push((i, s));
    }
    panels
}

/// The finite points of a series as (day, value), each within the axes' reach.
fn drawn(s: &Series) -> Vec<(f64, f64)> {
    s.points
        .iter()
        .filter(|p| p.day.is_finite() && p.value.is_finite())
        .flat_map(|p| style::on_axis([p.day]).zip(style::on_axis([p.value])))
        .collect()
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    panels: &[Panel<'_>],
) -> Result<()> {
    root.fill(&WHITE).map_err(draw_error)?;
    let root = root
        .titled(
            "ReFrame performance log: value by date",
            (font::FAMILY, style::TITLE),
        )
        .map_err(draw_error)?;
    let areas = root.split_evenly((panels.len(), 1));
    for (panel, (variable, mine)) in areas.iter().zip(panels) {
        let points: Vec<(f64, f64)> = mine.iter().flat_map(|(_, s)| drawn(s)).collect();
        let (x0, x1) = style::day_range(points.iter().map(|p| p.0));
        let (y0, y1) = style::linear_range(points.iter().map(|p| p.1));
        // A few days or less: the ticks say the time of day too.
        let within_days = x1 - x0 < 3.0;
        let unit = &mine[0].1.unit;
        let mut chart = ChartBuilder::on(panel)
            .caption(*variable, (font::FAMILY, style::CAPTION))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(90)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_labels(8)
            .x_label_formatter(&|d| {
                if within_days {
                    let minutes = ((d - d.floor()) * 1440.0).round() as i64;
                    format!(
                        "{} {:02}:{:02}",
                        date_of(*d),
                        minutes / 60 % 24,
                        minutes % 60
                    )
                } else {
                    date_of(*d)
                }
            })
            .y_desc(unit.as_str())
            .label_style((font::FAMILY, style::TICK))
            .axis_desc_style((font::FAMILY, style::LABEL))
            .draw()
            .map_err(draw_error)?;
        for (i, s) in mine {
            let colour = style::colour(*i);
            let xy = drawn(s);
            chart
                .draw_series(LineSeries::new(xy.clone(), colour.stroke_width(2)))
                .map_err(draw_error)?
                .label(s.label())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(3))
                });
            chart
                .draw_series(xy.into_iter().map(|p| Circle::new(p, 3, colour.filled())))
                .map_err(draw_error)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font((font::FAMILY, style::TICK))
            .draw()
            .map_err(draw_error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_dates_round_trip() {
        assert_eq!(day_of("1970-01-01T00:00:00"), Some(0.0));
        assert_eq!(day_of("1970-01-02T12:00:00"), Some(1.5));
        let d = day_of("2026-12-02T15:16:39+0000").unwrap();
        assert_eq!(date_of(d), "2026-12-02");
        assert_eq!(
            date_of(day_of("2024-02-29 23:59:59").unwrap()),
            "2024-02-29"
        );
        assert_eq!(day_of("2026-13-02T15:16:39"), None);
        assert_eq!(day_of("yesterday"), None);
    }

    #[test]
    fn default_layout_and_repeated_headers_are_read() {
        // ReFrame's default format: result first, perf columns without _ref & co.
        let log = "result|job_completion_time|system|partition|environ|name|bw_value|bw_unit\n\
                   pass|2026-01-02T03:00:00|s|p|e|t|10.5|MB/s\n\
                   fail|2026-01-01T03:00:00|s|p|e|t|None|MB/s\n\
                   job_completion_time|name|bw_value|bw_unit|lat_value|lat_unit\n\
                   2026-01-03T03:00:00|t|12|MB/s|3|us\n";
        let mut all = BTreeMap::new();
        parse_into(log, "x/t.log", &mut all).unwrap();
        let series: Vec<&Series> = all.values().collect();
        assert_eq!(series.len(), 3, "{series:?}");
        let bw = all
            .get(&("s:p".into(), "e".into(), "t".into(), "bw".into()))
            .unwrap();
        assert_eq!(bw.points.len(), 1);
        assert_eq!(bw.points[0].value, 10.5);
        assert_eq!(bw.unit, "MB/s");
        // The second header has no system column: another series.
        assert!(all.contains_key(&(String::new(), String::new(), "t".into(), "lat".into())));
    }

    #[test]
    fn values_that_are_not_finite_are_refused_naming_the_column() {
        for value in ["inf", "-inf", "NaN", "infinity"] {
            let log = format!(
                "job_completion_time|name|bw_value|bw_unit|lat_value|lat_unit\n\
                 2026-01-01T00:00:00|t|1|MB/s|2|us\n\
                 2026-01-02T00:00:00|t|3|MB/s|{value}|us\n"
            );
            let e = parse_into(&log, "f.log", &mut BTreeMap::new()).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "f.log, line 3: column `lat_value` is {value:?}, not a finite number (a \
                     performance function that divided by a zero time?); fix or remove the \
                     record"
                )
            );
        }
        // Negative and absurd values, as the JSON readers refuse them.
        for (value, shown) in [("-5", "-5"), ("1e308", "1e308"), ("-0.5", "-0.5")] {
            let log = format!(
                "job_completion_time|name|bw_value|bw_unit\n\
                 2026-01-01T00:00:00|t|{value}|MB/s\n"
            );
            let e = parse_into(&log, "f.log", &mut BTreeMap::new()).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "f.log, line 2: column `bw_value` is {shown}, which no run gives; expected \
                     a number from 0 to 1e15; fix or remove the record"
                )
            );
        }
        // The bounds themselves are values a run may give.
        let log = "job_completion_time|name|bw_value\n\
                   2026-01-01T00:00:00|t|0\n\
                   2026-01-02T00:00:00|t|1e15\n";
        parse_into(log, "f.log", &mut BTreeMap::new()).unwrap();
        // `None` (a failed run) is skipped, not refused; a reference that is not finite
        // is no reference.
        let log = "job_completion_time|name|bw_value|bw_ref\n\
                   2026-01-01T00:00:00|t|None|1\n\
                   2026-01-02T00:00:00|t|3|inf\n";
        let mut all = BTreeMap::new();
        parse_into(log, "f.log", &mut all).unwrap();
        let bw = all.values().next().unwrap();
        assert_eq!(bw.points.len(), 1);
        assert_eq!(bw.points[0].reference, None);
    }

    fn series(variable: &str, values: &[f64]) -> Series {
        Series {
            system: "s:p".into(),
            environ: "e".into(),
            check: "c".into(),
            variable: variable.into(),
            unit: "MB/s".into(),
            points: values
                .iter()
                .enumerate()
                .map(|(i, &value)| Point {
                    time: String::new(),
                    day: 20_000.0 + i as f64,
                    value,
                    result: None,
                    reference: None,
                })
                .collect(),
        }
    }

    /// `plot` of `series`, or a failure when it has not finished within a minute.
    fn plot_within_a_minute(series: Vec<Series>, format: Format) -> Result<Vec<u8>> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(plot(&series, format));
        });
        rx.recv_timeout(std::time::Duration::from_secs(60))
            .expect("plot did not finish within a minute: a range it drew was not finite")
    }

    #[test]
    fn values_at_the_ends_of_the_floats_are_drawn_and_the_plot_ends() {
        // Such values never come out of parse_into; the axes must hold them anyway.
        let wild = [
            f64::INFINITY,
            f64::NAN,
            1e308,
            f64::MAX,
            -f64::MAX,
            3.0,
            5e-324,
        ];
        for format in [Format::Svg, Format::Png] {
            let bytes = plot_within_a_minute(
                vec![
                    series("a", &wild),
                    series("b", &[f64::INFINITY]),
                    series("c", &[1e308]),
                ],
                format,
            )
            .unwrap();
            assert!(!bytes.is_empty());
        }
    }

    #[test]
    fn more_variables_than_panels_are_refused() {
        let many: Vec<Series> = (0..=MAX_PANELS)
            .map(|i| series(&format!("v{i}"), &[1.0]))
            .collect();
        let e = plot(&many, Format::Svg).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("33 performance variables to plot, more than the 32 panels"),
            "{e}"
        );
    }

    #[test]
    fn what_is_not_a_perflog_is_named() {
        let mut all = BTreeMap::new();
        let e = parse_into("a|b\n1|2\n", "f.log", &mut all).unwrap_err();
        assert!(e.to_string().contains("before any header"), "{e}");
        let e = parse_into(
            "job_completion_time|x_value\n2026-01-01T00:00:00\n",
            "f",
            &mut all,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("1 fields where the header has 2"),
            "{e}"
        );
        let e = parse_into("job_completion_time|x_value\nnoon|1\n", "f", &mut all).unwrap_err();
        assert!(e.to_string().contains("not YYYY-MM-DD"), "{e}");
        let e = parse_into("", "empty.log", &mut all).unwrap_err();
        assert!(e.to_string().contains("not a ReFrame perflog"), "{e}");
    }
}
