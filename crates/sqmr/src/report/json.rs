//! The `--json` document: configuration, environment, and every measurement, per size.
//!
//! Rank 0 writes it: once before the first size and again after each size with
//! `"complete": false`, and a last time with `"complete": true`, each version renamed into
//! place whole, so a run that dies midway (or fills its disk) still leaves valid JSON of
//! the sizes it finished.

use serde::{Deserialize, Serialize};

use crate::config::{Config, WARMUP_ITERATIONS};
use crate::placement::Placement;
use crate::rates::Rates;

/// The whole document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// Always `"sqmr"`: tells readers which kind of result this is.
    pub benchmark: String,
    /// The xylem version that wrote it.
    pub version: String,
    /// The reference version whose output format the text keeps.
    pub reference_version: String,
    /// Whether every size of the schedule finished.
    pub complete: bool,
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
    /// One entry per finished size.
    pub sizes: Vec<SizeResult>,
    /// With `--validate`: what was checked and found.
    pub validation: Option<Validation>,
}

/// Where the run happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
pub struct SizeResult {
    /// Message size in bytes.
    pub msgsize: u64,
    /// Timed iterations.
    pub iters: u64,
    /// Messages counted (sends and receives of all core ranks).
    pub messages: f64,
    /// Every core rank's elapsed seconds, in rank order.
    pub core_elapsed_s: Vec<f64>,
    /// The three rates of the text row.
    pub rates: Rates,
}

/// What `--validate` checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
            version: env!("CARGO_PKG_VERSION").into(),
            reference_version: crate::report::text::REFERENCE_VERSION.into(),
            complete: false,
            date,
            config,
            warmup_iterations: WARMUP_ITERATIONS,
            environment,
            placement,
            network_selection: None,
            sizes: Vec::new(),
            validation: None,
        }
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
    use crate::rates::{rates, Times};

    fn document() -> Document {
        let config = Config {
            num_cores: 1,
            num_nbors: 2,
            num_iters: 16,
            win_size: 4,
            min_msgsize: 0,
            max_msgsize: 8,
            validate: true,
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
        d.sizes.push(SizeResult {
            msgsize: 8,
            iters: 16,
            messages: 128.0,
            core_elapsed_s: vec![0.5],
            rates: rates(128.0, 8, 1, Times::of(&[0.5])),
        });
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
    }

    #[test]
    fn the_document_reads_back_to_itself() {
        let d = document();
        let back: Document = serde_json::from_str(&d.to_json()).unwrap();
        assert_eq!(back, d);
    }
}
