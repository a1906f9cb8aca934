//! The `--json` document: configuration, environment, and every measurement, per size.
//!
//! Rank 0 writes it: once before the first size and again after each size with
//! `"complete": false`, and a last time with `"complete": true`, each version renamed into
//! place whole, so a run that dies midway (or fills its disk) still leaves valid JSON of
//! the sizes it finished.
//!
//! Schema version 2 (`"schema_version"`; documents without it are version 1) added, per
//! size, every sample of `--repeat`/`--precision` (`"samples"`), which of them the row
//! shows (`"median_sample"`), their minimum, median, maximum and the 95 % confidence
//! interval of the median (`"statistics"`), what ended the repeats (`"stopped_by"`) and
//! the size's wall time; and `"repeat"` and `"precision"` to the configuration. Every
//! field of version 1 is kept with its meaning: a size's `"core_elapsed_s"` and `"rates"`
//! are the row's, the median sample's.

use serde::{Deserialize, Serialize};

use crate::config::{Config, MAX_MESSAGE_BYTES, WARMUP_ITERATIONS};
use crate::independence::{self, Independence};
use crate::placement::Placement;
use crate::rates::{rates, Rate, Rates, Times};
use crate::schedule::Step;
use crate::stats::Measured;
use crate::stats::{self, Stop, Summary};

/// The version of the document's layout.
pub const SCHEMA_VERSION: u32 = 2;

/// What a size's statistics are of.
pub const STATISTIC: &str = "rates.average.msgs_per_s";

/// The version of a document without `schema_version`.
fn version_1() -> u32 {
    1
}

/// Why a text is not a sqmr document.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Not JSON, or not this document's layout.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// JSON of another benchmark.
    #[error("not a sqmr document (\"benchmark\" is {0})")]
    Benchmark(String),
    /// A layout newer than this program knows.
    #[error("schema_version {0} is newer than this program reads (up to {SCHEMA_VERSION})")]
    Newer(u64),
    /// A value no run can give (a negative or enormous rate, zero cores).
    #[error("{field} is {value}, which no run gives; expected {expected}")]
    Absurd {
        /// Where it is, as a path of fields: `sizes[3].rates.average.msgs_per_s`.
        field: String,
        /// The value as read.
        value: String,
        /// What a run gives, in words.
        expected: String,
    },
}

/// The largest rate a document may hold, in messages or MiB per second: a million times
/// any node's, yet far from where sums and products of rates overflow.
pub const MAX_RATE: f64 = 1e15;

/// The longest time a document may hold, in seconds (about 31 years).
pub const MAX_SECONDS: f64 = 1e9;

/// The most messages one sample may count: far beyond any run (at 10^9 messages per
/// second, 30 years).
pub const MAX_MESSAGES: f64 = 1e18;

/// The check of one number: finite and within `0..=max`, else [`ReadError::Absurd`]
/// naming `field` (made only then, so checking a document costs no allocation).
fn within(value: f64, max: f64, field: impl FnOnce() -> String) -> Result<(), ReadError> {
    if value.is_finite() && (0.0..=max).contains(&value) {
        return Ok(());
    }
    Err(ReadError::Absurd {
        field: field(),
        value: shown(value),
        expected: format!("a number from 0 to {max:e}"),
    })
}

/// A number as a message shows it: `-5`, `1e308` (not 309 digits).
pub fn shown(value: f64) -> String {
    if value != 0.0 && !(1e-6..1e15).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        value.to_string()
    }
}

/// The check of a count: at least `min`, at most `max`.
fn count(value: u64, min: u64, max: u64, field: &str) -> Result<(), ReadError> {
    if (min..=max).contains(&value) {
        return Ok(());
    }
    Err(ReadError::Absurd {
        field: field.to_string(),
        value: value.to_string(),
        expected: format!("a whole number from {min} to {max}"),
    })
}

/// The check of a rate and its bandwidth.
fn rate(r: &Rate, field: &dyn Fn() -> String) -> Result<(), ReadError> {
    within(r.msgs_per_s, MAX_RATE, || format!("{}.msgs_per_s", field()))?;
    within(r.mib_per_s, MAX_RATE, || format!("{}.mib_per_s", field()))
}

/// The check of the three rates of a row.
fn rates_of(r: &Rates, field: &dyn Fn() -> String) -> Result<(), ReadError> {
    rate(&r.average, &|| format!("{}.average", field()))?;
    rate(&r.max, &|| format!("{}.max", field()))?;
    rate(&r.min, &|| format!("{}.min", field()))
}

/// The check of the core ranks' elapsed times.
fn times(elapsed: &[f64], field: &dyn Fn() -> String) -> Result<(), ReadError> {
    for (k, t) in elapsed.iter().enumerate() {
        within(*t, MAX_SECONDS, || format!("{}[{k}]", field()))?;
    }
    Ok(())
}

impl Config {
    /// Refuses what no run of sqmr accepts: a count of 0, a message larger than one MPI
    /// call sends, sizes the wrong way round.
    fn check_read(&self) -> Result<(), ReadError> {
        let most = i32::MAX as u64;
        count(self.num_cores as u64, 1, most, "config.num_cores")?;
        count(self.num_nbors as u64, 1, most, "config.num_nbors")?;
        count(self.num_iters, 1, u64::MAX, "config.num_iters")?;
        count(self.win_size as u64, 1, most, "config.win_size")?;
        count(self.repeat, 1, u64::MAX, "config.repeat")?;
        count(self.max_msgsize, 0, MAX_MESSAGE_BYTES, "config.max_msgsize")?;
        count(self.min_msgsize, 0, self.max_msgsize, "config.min_msgsize")?;
        if let Some(p) = &self.precision {
            within(p.percent, f64::MAX, || "config.precision.percent".into())?;
            within(p.max_time_per_size_s, MAX_SECONDS, || {
                "config.precision.max_time_per_size_s".into()
            })?;
        }
        Ok(())
    }
}

impl SizeResult {
    /// Refuses what no run gives: negative, infinite or enormous rates and times, a
    /// median sample that is not there.
    fn check_read(&self, i: usize) -> Result<(), ReadError> {
        let at = |name: &str| format!("sizes[{i}].{name}");
        count(self.msgsize, 0, MAX_MESSAGE_BYTES, &at("msgsize"))?;
        count(self.iters, 1, u64::MAX, &at("iters"))?;
        within(self.messages, MAX_MESSAGES, || at("messages"))?;
        times(&self.core_elapsed_s, &|| at("core_elapsed_s"))?;
        rates_of(&self.rates, &|| at("rates"))?;
        for (k, sample) in self.samples.iter().enumerate() {
            times(&sample.core_elapsed_s, &|| {
                at(&format!("samples[{k}].core_elapsed_s"))
            })?;
            rates_of(&sample.rates, &|| at(&format!("samples[{k}].rates")))?;
        }
        let Some(last) = self.samples.len().checked_sub(1) else {
            return Err(ReadError::Absurd {
                field: at("samples"),
                value: "empty".into(),
                expected: "at least one sample".into(),
            });
        };
        count(
            self.median_sample as u64,
            0,
            last as u64,
            &at("median_sample"),
        )?;
        let s = &self.statistics.summary;
        for (name, value) in [("min", s.min), ("median", s.median), ("max", s.max)] {
            within(value, MAX_RATE, || at(&format!("statistics.{name}")))?;
        }
        let ci = &s.ci95;
        within(ci.level, 1.0, || at("statistics.ci95.level"))?;
        for (name, value, max) in [
            ("low", ci.low, MAX_RATE),
            ("high", ci.high, MAX_RATE),
            ("coverage", ci.coverage, 1.0),
            ("half_width_percent", ci.half_width_percent, MAX_RATE),
        ] {
            if let Some(v) = value {
                within(v, max, || at(&format!("statistics.ci95.{name}")))?;
            }
        }
        if let Some(wall) = self.wall_s {
            within(wall, MAX_SECONDS, || at("wall_s"))?;
        }
        Ok(())
    }
}

/// The whole document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Document {
    /// Always `"sqmr"`: tells readers which kind of result this is.
    pub benchmark: String,
    /// The version of the layout ([`SCHEMA_VERSION`]; 1 when the document has none).
    #[serde(default = "version_1")]
    pub schema_version: u32,
    /// The xylem version that wrote it.
    pub version: String,
    /// The reference version whose output format the text keeps.
    pub reference_version: String,
    /// Start of the run, local time, RFC 3339.
    pub date: String,
    /// The checked configuration.
    pub config: Config,
    /// Warm-up iterations before the timed ones at each size.
    pub warmup_iterations: u64,
    /// Where and on what it ran.
    pub environment: Environment,
    /// The placement check.
    pub placement: Placement,
    /// `--enable/--disable` as resolved on rank 0's host, with the settings made.
    pub network_selection: Option<String>,
    /// `--enable/--disable` as data: the items, and per host what they selected and the
    /// library's settings made for it (absent without a selection, and in documents of
    /// earlier releases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<benchkit::network::SelectionRecord>,
    /// What produced it: command line, MPI built against and run on, hosts, kernel, CPU,
    /// batch job, start and end (absent in documents of earlier releases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<benchkit::provenance::Provenance>,
    /// One entry per finished size.
    pub sizes: Vec<SizeResult>,
    /// Whether every size of the schedule finished.
    pub complete: bool,
    /// With `--validate`: what was checked and found.
    pub validation: Option<Validation>,
    /// Why the run stopped before its schedule ended (a stall: which rank, host and
    /// where); absent when it did not stop early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Sizes that ran far slower than their neighbours (a stall that recovered, a link
    /// that came back): flagged, not folded in silently.
    #[serde(default)]
    pub warnings: Vec<Anomaly>,
}

/// A size that ran far slower than the sizes beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Anomaly {
    /// What was seen: `slow_size`.
    pub kind: String,
    /// The size, in bytes.
    pub msgsize: u64,
    /// Its average rate, messages per second.
    pub msgs_per_s: f64,
    /// The rate it was compared with: the least its healthy neighbours allow it (the
    /// higher of the next size's rate and the last size's scaled by the ratio of the sizes).
    pub reference_msgs_per_s: f64,
    /// The size's wall time, in seconds.
    pub seconds: f64,
    /// The seconds it would have taken at the reference rate.
    pub expected_seconds: f64,
    /// The words of the warning.
    pub message: String,
}

/// Where the run happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Environment {
    /// `MPI_Get_library_version`, complete.
    pub mpi_library: String,
    /// Ranks in the job.
    pub ranks: usize,
    /// The processor names of the core ranks, in rank order.
    pub core_hosts: Vec<String>,
    /// The processor names of all ranks, in rank order.
    pub hosts: Vec<String>,
}

/// The measurements at one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SizeResult {
    /// Message size in bytes.
    pub msgsize: u64,
    /// Timed iterations (of each sample).
    pub iters: u64,
    /// Messages counted in one sample (sends and receives of all core ranks).
    pub messages: f64,
    /// Every core rank's elapsed seconds, in rank order, of the row's (median) sample.
    pub core_elapsed_s: Vec<f64>,
    /// The three rates of the text row: the median sample's.
    pub rates: Rates,
    /// Every timed loop of the size, in the order run.
    pub samples: Vec<Sample>,
    /// The index in `samples` of the row's sample: the one whose average rate is the
    /// median (for an even count the lower middle).
    pub median_sample: usize,
    /// Minimum, median and maximum of the samples' average rates, and the 95 %
    /// confidence interval of the median.
    pub statistics: Statistics,
    /// What ended the repeats: `"repeat"`, `"precision"`, `"time cap"`, `"sample cap"`.
    pub stopped_by: Stop,
    /// Seconds rank 0 spent on the size: the agreements after the size before it (which
    /// wait for every rank), barrier, warm-up and every sample (`None` in a document of
    /// version 1, which did not record it).
    pub wall_s: Option<f64>,
}

/// One timed loop of a size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Sample {
    /// Every core rank's elapsed seconds, in rank order.
    pub core_elapsed_s: Vec<f64>,
    /// The three rates of this loop.
    pub rates: Rates,
}

/// The statistics of a size's samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Statistics {
    /// What they are of: [`STATISTIC`], the average rate in messages per second (the
    /// bandwidths follow as rate · msgsize / 2^20).
    pub of: String,
    /// Count, minimum, median, maximum and interval.
    #[serde(flatten)]
    pub summary: Summary,
    /// Whether the samples, in the order run, look independent (a trend test and a runs
    /// test); `null` with fewer than 6 samples, and absent in documents of earlier
    /// releases.
    #[serde(default)]
    pub independence: Option<Independence>,
}

impl SizeResult {
    /// The result of `step` from what [`Measured`] holds: `msgs` messages per sample by
    /// the core ranks whose times are in each sample. `None` when it holds no sample.
    pub fn from_samples(step: Step, msgs: f64, measured: Measured) -> Option<SizeResult> {
        let samples: Vec<Sample> = measured
            .samples
            .into_iter()
            .map(|elapsed| Sample {
                rates: rates(msgs, step.msgsize, elapsed.len(), Times::of(&elapsed)),
                core_elapsed_s: elapsed,
            })
            .collect();
        let values: Vec<f64> = samples.iter().map(|s| s.rates.average.msgs_per_s).collect();
        let median_sample = stats::median_index(&values)?;
        let summary = stats::summarize(&values)?;
        let row = samples.get(median_sample)?.clone();
        Some(SizeResult {
            msgsize: step.msgsize,
            iters: step.iters,
            messages: msgs,
            core_elapsed_s: row.core_elapsed_s,
            rates: row.rates,
            samples,
            median_sample,
            statistics: Statistics {
                of: STATISTIC.into(),
                summary,
                independence: independence::check(&values),
            },
            stopped_by: measured.stop,
            wall_s: Some(measured.wall_s),
        })
    }
}

impl SizeResult {
    /// The 95 % interval of the median, when there is one, with `pick` applied to its
    /// bounds as rates of this size (so that bandwidths are bounded too).
    pub fn interval(&self, pick: fn(&Rate) -> f64) -> Option<(f64, f64)> {
        let ci = &self.statistics.summary.ci95;
        let rate = |msgs_per_s: f64| Rate {
            msgs_per_s,
            mib_per_s: msgs_per_s * self.msgsize as f64 / 1_048_576.0,
        };
        Some((pick(&rate(ci.low?)), pick(&rate(ci.high?))))
    }
}

/// A document of schema version 1 as it was written, read into types of its own (not
/// through a tree of JSON values, which takes tens of times the text's size): each size
/// lacks what version 2 added ([`Document::from_json`] fills it in).
#[derive(Deserialize)]
struct Version1 {
    benchmark: String,
    version: String,
    reference_version: String,
    complete: bool,
    date: String,
    config: Config,
    warmup_iterations: u64,
    environment: Environment,
    placement: Placement,
    network_selection: Option<String>,
    sizes: Vec<SizeVersion1>,
    validation: Option<Validation>,
}

/// A size of a version 1 document: one timed loop, nothing else recorded.
#[derive(Deserialize)]
struct SizeVersion1 {
    msgsize: u64,
    iters: u64,
    messages: f64,
    core_elapsed_s: Vec<f64>,
    rates: Rates,
}

impl From<SizeVersion1> for SizeResult {
    /// The one timed loop as the one sample: the median, its statistics those of one
    /// sample (no interval), stopped by `repeat`, no wall time.
    fn from(size: SizeVersion1) -> SizeResult {
        let average = size.rates.average.msgs_per_s;
        let summary = stats::summarize(&[average]).expect("one value has a summary");
        SizeResult {
            msgsize: size.msgsize,
            iters: size.iters,
            messages: size.messages,
            samples: vec![Sample {
                core_elapsed_s: size.core_elapsed_s.clone(),
                rates: size.rates,
            }],
            core_elapsed_s: size.core_elapsed_s,
            rates: size.rates,
            median_sample: 0,
            statistics: Statistics {
                of: STATISTIC.into(),
                summary,
                independence: None,
            },
            stopped_by: Stop::Repeat,
            wall_s: None,
        }
    }
}

impl From<Version1> for Document {
    fn from(v: Version1) -> Document {
        Document {
            benchmark: v.benchmark,
            schema_version: 1,
            version: v.version,
            reference_version: v.reference_version,
            complete: v.complete,
            date: v.date,
            config: v.config,
            warmup_iterations: v.warmup_iterations,
            environment: v.environment,
            placement: v.placement,
            network_selection: v.network_selection,
            network: None,
            sizes: v.sizes.into_iter().map(SizeResult::from).collect(),
            validation: v.validation,
            stopped: None,
            warnings: Vec::new(),
            provenance: None,
        }
    }
}

/// The fields that say what a text is, read before the rest (the others are skipped).
#[derive(Deserialize)]
struct Head {
    benchmark: Option<serde_json::Value>,
    schema_version: Option<serde_json::Value>,
}

/// What `--validate` checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Validation {
    /// Messages whose contents were checked, over all ranks.
    pub messages_checked: u64,
    /// Messages that did not carry the expected pattern.
    pub corrupted: u64,
}

impl Document {
    /// A document for a run that is about to start.
    pub fn new(
        config: Config,
        date: String,
        environment: Environment,
        placement: Placement,
    ) -> Self {
        Document {
            benchmark: "sqmr".into(),
            schema_version: SCHEMA_VERSION,
            version: env!("CARGO_PKG_VERSION").into(),
            reference_version: crate::report::text::REFERENCE_VERSION.into(),
            complete: false,
            date,
            config,
            warmup_iterations: WARMUP_ITERATIONS,
            environment,
            placement,
            network_selection: None,
            network: None,
            sizes: Vec::new(),
            validation: None,
            stopped: None,
            warnings: Vec::new(),
            provenance: None,
        }
    }

    /// Records the end of the run (now) in its provenance.
    pub fn mark_ended(&mut self) {
        if let Some(p) = &mut self.provenance {
            p.ended = Some(chrono::Local::now().to_rfc3339());
        }
    }

    /// Reads a document of any schema version up to [`SCHEMA_VERSION`]. A size of a
    /// version 1 document (one timed loop per size, nothing else recorded) reads as the
    /// one sample it was: `samples` holds it, it is the median, its statistics are those
    /// of one sample (no interval) and `stopped_by` is `repeat`; `wall_s` stays `None`.
    ///
    /// A value no run gives is refused, naming its field ([`ReadError::Absurd`]): a count
    /// of 0 where sqmr needs one (cores, neighbours, iterations, window, samples), a
    /// message larger than [`MAX_MESSAGE_BYTES`], a rate or time that is negative, not
    /// finite, or above [`MAX_RATE`] or [`MAX_SECONDS`]. Reading takes time linear in
    /// the text.
    pub fn from_json(text: &str) -> Result<Document, ReadError> {
        let head: Head = serde_json::from_str(text)?;
        // serde also reads a struct from an array of its fields: only an object will do.
        let object = text.trim_start().starts_with('{');
        match &head.benchmark {
            _ if !object => return Err(ReadError::Benchmark("missing".into())),
            Some(serde_json::Value::String(b)) if b == "sqmr" => {}
            other => {
                let found = other
                    .as_ref()
                    .map_or("missing".to_string(), |b| b.to_string());
                return Err(ReadError::Benchmark(found));
            }
        }
        let document: Document = match head.schema_version.as_ref() {
            Some(v) => match v.as_u64() {
                Some(v) if v > u64::from(SCHEMA_VERSION) => return Err(ReadError::Newer(v)),
                // Read straight from the text: no tree of it is built.
                _ => serde_json::from_str(text)?,
            },
            None => Document::from(serde_json::from_str::<Version1>(text)?),
        };
        document.check_read()?;
        Ok(document)
    }

    /// Refuses values no run gives (see [`Document::from_json`]).
    fn check_read(&self) -> Result<(), ReadError> {
        self.config.check_read()?;
        count(
            self.environment.ranks as u64,
            1,
            i32::MAX as u64,
            "environment.ranks",
        )?;
        for (i, size) in self.sizes.iter().enumerate() {
            size.check_read(i)?;
        }
        Ok(())
    }

    /// The message sizes whose loops were found not independent (a trend or phases).
    pub fn dependent_sizes(&self) -> Vec<u64> {
        self.sizes
            .iter()
            .filter(|s| {
                s.statistics
                    .independence
                    .as_ref()
                    .is_some_and(|i| i.dependent)
            })
            .map(|s| s.msgsize)
            .collect()
    }

    /// The peak average message rate and its size.
    pub fn peak_rate(&self) -> Option<(u64, f64)> {
        self.peak(|r| r.msgs_per_s)
    }

    /// The peak average bandwidth (MiB/s) and its size.
    pub fn peak_bandwidth(&self) -> Option<(u64, f64)> {
        self.peak(|r| r.mib_per_s)
    }

    fn peak(&self, pick: fn(&Rate) -> f64) -> Option<(u64, f64)> {
        self.sizes
            .iter()
            .map(|s| (s.msgsize, pick(&s.rates.average)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The document as pretty JSON with a final newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("the document serializes");
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step() -> Step {
        Step {
            msgsize: 8,
            iters: 16,
        }
    }

    fn measured(samples: Vec<Vec<f64>>, stop: Stop) -> Measured {
        Measured {
            samples,
            stop,
            wall_s: 2.0,
        }
    }

    fn document() -> Document {
        let config = Config {
            num_cores: 1,
            num_nbors: 2,
            num_iters: 16,
            win_size: 4,
            min_msgsize: 0,
            max_msgsize: 8,
            validate: true,
            repeat: 1,
            precision: None,
        };
        let hosts = vec!["n1".to_string(), "n2".to_string(), "n2".to_string()];
        let environment = Environment {
            mpi_library: "Open MPI v4.1.4".into(),
            ranks: 3,
            core_hosts: hosts[..1].to_vec(),
            hosts,
        };
        let placement = Placement {
            core_node: "n1".into(),
            cores_elsewhere: vec![],
            neighbours_on_core_node: vec![],
        };
        let mut d = Document::new(
            config,
            "2026-12-01T18:43:18+00:00".into(),
            environment,
            placement,
        );
        d.sizes.extend(SizeResult::from_samples(
            step(),
            128.0,
            measured(vec![vec![0.5]], Stop::Repeat),
        ));
        d.validation = Some(Validation {
            messages_checked: 256,
            corrupted: 0,
        });
        d
    }

    #[test]
    fn the_document_has_the_documented_shape() {
        let v: serde_json::Value = serde_json::from_str(&document().to_json()).unwrap();
        assert_eq!(v["benchmark"], "sqmr");
        assert_eq!(v["complete"], false);
        assert_eq!(v["config"]["win_size"], 4);
        assert_eq!(v["config"]["validate"], true);
        assert_eq!(v["warmup_iterations"], 10);
        assert_eq!(v["environment"]["core_hosts"][0], "n1");
        assert_eq!(v["environment"]["ranks"], 3);
        let size = &v["sizes"][0];
        assert_eq!(size["msgsize"], 8);
        assert_eq!(size["core_elapsed_s"][0], 0.5);
        assert_eq!(size["rates"]["average"]["msgs_per_s"], 256.0);
        assert_eq!(size["rates"]["min"]["mib_per_s"], 256.0 * 8.0 / 1_048_576.0);
        assert_eq!(v["validation"]["messages_checked"], 256);
        assert_eq!(v["placement"]["core_node"], "n1");
        // Version 2: one sample, no interval, and why.
        assert_eq!(v["schema_version"], 2);
        assert_eq!(v["config"]["repeat"], 1);
        assert!(v["config"]["precision"].is_null());
        assert_eq!(size["samples"].as_array().unwrap().len(), 1);
        assert_eq!(size["samples"][0]["core_elapsed_s"][0], 0.5);
        assert_eq!(size["median_sample"], 0);
        assert_eq!(size["stopped_by"], "repeat");
        assert_eq!(size["wall_s"], 2.0);
        let st = &size["statistics"];
        assert_eq!(st["of"], "rates.average.msgs_per_s");
        assert_eq!(
            (st["samples"].as_u64(), st["median"].as_f64()),
            (Some(1), Some(256.0))
        );
        assert!(st["ci95"]["low"].is_null() && st["ci95"]["high"].is_null());
        assert_eq!(st["ci95"]["level"], 0.95);
        assert!(st["ci95"]["unavailable"]
            .as_str()
            .unwrap()
            .contains("6 samples"));
    }

    #[test]
    fn the_row_is_the_median_sample_and_every_sample_is_kept() {
        // 7 samples of 1 core: 128 messages in 0.5 s .. 0.8 s, out of order.
        let times = [0.6, 0.5, 0.8, 0.55, 0.7, 0.65, 0.75];
        let samples: Vec<Vec<f64>> = times.iter().map(|&t| vec![t]).collect();
        let size =
            SizeResult::from_samples(step(), 128.0, measured(samples, Stop::Repeat)).unwrap();
        assert_eq!(size.samples.len(), 7);
        // The median rate is 128 / 0.65, of sample 5.
        assert_eq!(size.median_sample, 5);
        assert_eq!(size.core_elapsed_s, vec![0.65]);
        assert_eq!(size.rates, size.samples[5].rates);
        let s = &size.statistics.summary;
        assert_eq!((s.min, s.median, s.max), (160.0, 128.0 / 0.65, 256.0));
        assert_eq!((s.ci95.low, s.ci95.high), (Some(160.0), Some(256.0)));
        assert!(SizeResult::from_samples(step(), 128.0, measured(vec![], Stop::Repeat)).is_none());
    }

    #[test]
    fn the_document_reads_back_to_itself() {
        let d = document();
        let back: Document = serde_json::from_str(&d.to_json()).unwrap();
        assert_eq!(back, d);
    }

    #[test]
    fn a_version_1_document_reads_as_one_sample_per_size() {
        let v2 = document();
        let mut v1: serde_json::Value = serde_json::from_str(&v2.to_json()).unwrap();
        v1.as_object_mut().unwrap().remove("schema_version");
        for key in [
            "samples",
            "median_sample",
            "statistics",
            "stopped_by",
            "wall_s",
        ] {
            v1["sizes"][0].as_object_mut().unwrap().remove(key);
        }
        let read = Document::from_json(&v1.to_string()).unwrap();
        assert_eq!(read.schema_version, 1);
        let (size, want) = (&read.sizes[0], &v2.sizes[0]);
        assert_eq!(size.samples, want.samples);
        assert_eq!(size.median_sample, 0);
        assert_eq!(size.statistics, want.statistics);
        assert_eq!(size.stopped_by, Stop::Repeat);
        assert_eq!(size.wall_s, None);
        assert_eq!(read.peak_rate(), Some((8, 256.0)));
    }

    /// The document with `edit` applied to its JSON, read back: the error's text.
    fn refused(edit: impl FnOnce(&mut serde_json::Value)) -> String {
        let mut v: serde_json::Value = serde_json::from_str(&document().to_json()).unwrap();
        edit(&mut v);
        Document::from_json(&v.to_string())
            .expect_err("an absurd value must be refused")
            .to_string()
    }

    #[test]
    fn values_no_run_gives_are_refused_naming_the_field() {
        let e = refused(|v| v["sizes"][0]["rates"]["average"]["msgs_per_s"] = (-5.0).into());
        assert_eq!(
            e,
            "sizes[0].rates.average.msgs_per_s is -5, which no run gives; expected a number \
             from 0 to 1e15"
        );
        let e =
            refused(|v| v["sizes"][0]["samples"][0]["rates"]["max"]["mib_per_s"] = 1e308.into());
        assert!(
            e.starts_with("sizes[0].samples[0].rates.max.mib_per_s is 1e308,"),
            "{e}"
        );
        let e = refused(|v| v["config"]["num_cores"] = 0.into());
        assert!(
            e.starts_with("config.num_cores is 0, which no run gives"),
            "{e}"
        );
        let e = refused(|v| v["sizes"][0]["core_elapsed_s"][0] = (-1.0).into());
        assert!(e.starts_with("sizes[0].core_elapsed_s[0] is -1"), "{e}");
        let e = refused(|v| v["sizes"][0]["median_sample"] = 3.into());
        assert!(
            e.contains("sizes[0].median_sample is 3") && e.contains("from 0 to 0"),
            "{e}"
        );
        let e = refused(|v| v["sizes"][0]["msgsize"] = (1u64 << 40).into());
        assert!(e.starts_with("sizes[0].msgsize is 1099511627776"), "{e}");
        let e = refused(|v| v["sizes"][0]["statistics"]["median"] = (-2.0).into());
        assert!(e.starts_with("sizes[0].statistics.median is -2"), "{e}");
        // The writer's own document reads.
        assert_eq!(
            Document::from_json(&document().to_json()).unwrap(),
            document()
        );
    }

    #[test]
    fn other_documents_are_refused_by_name() {
        let e = Document::from_json(r#"{"benchmark": "b_eff_io"}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"not a sqmr document ("benchmark" is "b_eff_io")"#
        );
        let mut newer: serde_json::Value = serde_json::from_str(&document().to_json()).unwrap();
        newer["schema_version"] = 3.into();
        let e = Document::from_json(&newer.to_string()).unwrap_err();
        assert!(e.to_string().contains("schema_version 3 is newer"), "{e}");
        assert!(Document::from_json("{").is_err());
    }
}
