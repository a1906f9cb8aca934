//! What produced a result, as both benchmarks' JSON documents record it (`provenance`):
//! the command line, the program and the MPI library it was built against and ran on,
//! every host with its ranks, the kernel and CPU of rank 0's host, the batch job, and
//! when the run started and ended. Gathered once at the start ([`gather`], MPI side);
//! what is read from the machine here needs no MPI.

use serde::{Deserialize, Serialize};

/// The environment variables that name a batch job, in the order they are looked at.
pub const JOB_ID_VARIABLES: [&str; 6] = [
    "SLURM_JOB_ID",
    "PBS_JOBID",
    "LSB_JOBID",
    "FLUX_JOB_ID",
    "COBALT_JOBID",
    "JOB_ID",
];

/// A host of the job and how many ranks ran there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HostRanks {
    /// Its MPI processor name.
    pub name: String,
    /// Ranks on it.
    pub ranks: usize,
    /// Its lowest rank.
    pub first_rank: usize,
}

/// What produced a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Provenance {
    /// The program (`sqmr`, `b_eff_io`).
    pub program: String,
    /// Its version.
    pub version: String,
    /// Its command line as rank 0 got it (lossy where an argument is not UTF-8).
    pub command_line: Vec<String>,
    /// The MPI library of the `mpi.h` it was built against (`Open MPI 4.1.4`).
    pub mpi_built_against: String,
    /// The MPI library it ran on (`MPI_Get_library_version`, first line and device).
    pub mpi_runs_on: String,
    /// Every host of the job, in the order of their lowest rank.
    pub hosts: Vec<HostRanks>,
    /// Rank 0's kernel: `uname -srvm`.
    pub kernel: String,
    /// Rank 0's CPU model (`/proc/cpuinfo`), empty when unknown.
    pub cpu_model: String,
    /// The batch job's id, when run in one.
    pub job_id: Option<String>,
    /// The variable it came from (`SLURM_JOB_ID`, `PBS_JOBID`, …).
    pub job_id_variable: Option<String>,
    /// Start of the run (RFC 3339).
    pub started: String,
    /// A name for this run, the same in its JSON and on every CSV row: the batch job (or
    /// rank 0's host and process id) and the start time, `job-123456-20261205T084045Z`
    /// or `n001-4242-20261205T084045Z` ([`run_id`]). Empty in documents of earlier
    /// releases.
    #[serde(default)]
    pub run_id: String,
    /// End of the run (RFC 3339); absent in the versions written before the end
    /// (last, so that those versions and the final one share every field before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
}

/// The columns every CSV row of both benchmarks ends with, so that rows of many runs
/// concatenated still say which run, host, MPI and date they are of ([`Provenance::csv_fields`]).
pub const CSV_COLUMNS: &str = "run_id,host,mpi,date";

impl Provenance {
    /// The values of [`CSV_COLUMNS`]: the run id, rank 0's host, the MPI library it ran on
    /// in a few words, the start time. Commas are left out of the values, so no field
    /// ever needs quoting.
    pub fn csv_fields(&self) -> String {
        let host = self.hosts.first().map_or("", |h| h.name.as_str());
        [
            self.run_id.as_str(),
            host,
            &short_library(&self.mpi_runs_on),
            self.started.as_str(),
        ]
        .map(|v| v.replace([',', '\n', '\r', '"'], " "))
        .join(",")
    }
}

/// The values of [`CSV_COLUMNS`] for a document's provenance, or empty fields for a
/// document without one.
pub fn csv_fields(provenance: Option<&Provenance>) -> String {
    match provenance {
        Some(p) => p.csv_fields(),
        None => ",".repeat(CSV_COLUMNS.matches(',').count()),
    }
}

/// A name for a run: `job-ID-STAMP` in a batch job, else `HOST-PID-STAMP`, with the
/// start time as a compact UTC stamp (`20261205T084045Z`; the text as it is when it does
/// not read as RFC 3339).
pub fn run_id(job_id: Option<&str>, host: &str, pid: u32, started: &str) -> String {
    let stamp = chrono::DateTime::parse_from_rfc3339(started)
        .map(|t| {
            t.with_timezone(&chrono::Utc)
                .format("%Y%m%dT%H%M%SZ")
                .to_string()
        })
        .unwrap_or_else(|_| started.to_string());
    let who = match job_id {
        Some(id) => format!("job-{id}"),
        None => format!("{host}-{pid}"),
    };
    format!("{who}-{stamp}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The MPI library in a few words: the first line of its version text up to the first
/// comma (`Open MPI v4.1.4`; `MPICH Version: 4.0.2` becomes `MPICH 4.0.2`; Intel's
/// ` for Linux* OS` is left out), at most 48 characters.
pub fn short_library(library: &str) -> String {
    let first = library.lines().next().unwrap_or_default();
    let first = first.split(',').next().unwrap_or_default();
    let text = first
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("MPICH Version:", "MPICH");
    let text = text.split(" for Linux").next().unwrap_or_default();
    let mut short: String = text.chars().take(48).collect();
    if text.chars().count() > 48 {
        short.push('…');
    }
    short
}

/// The hosts of a job from each rank's processor name, in rank order: one entry per
/// host, in the order of its lowest rank. Linear in the ranks (a map keyed by name).
pub fn hosts_of(names: &[String]) -> Vec<HostRanks> {
    let mut index = std::collections::HashMap::new();
    let mut hosts: Vec<HostRanks> = Vec::new();
    for (rank, name) in names.iter().enumerate() {
        let i = *index.entry(name.as_str()).or_insert_with(|| {
            hosts.push(HostRanks {
                name: name.clone(),
                ranks: 0,
                first_rank: rank,
            });
            hosts.len() - 1
        });
        hosts[i].ranks += 1;
    }
    hosts
}

/// The batch job named by the first of [`JOB_ID_VARIABLES`] that `get` has: its id and
/// the variable.
pub fn job_id(get: &dyn Fn(&str) -> Option<String>) -> Option<(String, String)> {
    JOB_ID_VARIABLES.iter().find_map(|v| {
        get(v)
            .filter(|id| !id.trim().is_empty())
            .map(|id| (id, v.to_string()))
    })
}

/// This host's kernel, as `uname -srvm` prints it.
pub fn kernel() -> String {
    let read = |name: &str| {
        std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let machine = std::env::consts::ARCH;
    [read("ostype"), read("osrelease"), read("version")]
        .into_iter()
        .filter(|s| !s.is_empty())
        .chain(std::iter::once(machine.to_string()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The CPU model named in `cpuinfo` (`/proc/cpuinfo`'s text): the first `model name`
/// (x86), else the first `Model` or `cpu model` line (Arm, POWER, RISC-V); empty when none.
pub fn cpu_model_in(cpuinfo: &str) -> String {
    ["model name", "Model", "cpu model", "cpu"]
        .iter()
        .find_map(|key| {
            cpuinfo.lines().find_map(|line| {
                let (k, v) = line.split_once(':')?;
                (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_string())
            })
        })
        .unwrap_or_default()
}

/// This host's CPU model (see [`cpu_model_in`]), reading at most 1 MiB of `/proc/cpuinfo`.
pub fn cpu_model() -> String {
    use std::io::Read;
    let mut text = String::new();
    if let Ok(f) = std::fs::File::open("/proc/cpuinfo") {
        let _ = f.take(1 << 20).read_to_string(&mut text);
    }
    cpu_model_in(&text)
}

/// Rank 0's description of the run it is about to start: `hosts` holds every rank's
/// processor name in rank order (sqmr has them; [`gather`] collects them).
#[cfg(feature = "mpi")]
pub fn describe(program: &str, version: &str, hosts: &[String], started: String) -> Provenance {
    let (job_id, job_id_variable) = match job_id(&|k| std::env::var(k).ok()) {
        Some((id, variable)) => (Some(id), Some(variable)),
        None => (None, None),
    };
    Provenance {
        program: program.to_string(),
        version: version.to_string(),
        command_line: std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        mpi_built_against: crate::constants::header_library(),
        mpi_runs_on: crate::library_summary(),
        hosts: hosts_of(hosts),
        kernel: kernel(),
        cpu_model: cpu_model(),
        run_id: run_id(
            job_id.as_deref(),
            hosts.first().map_or("", String::as_str),
            std::process::id(),
            &started,
        ),
        job_id,
        job_id_variable,
        started,
        ended: None,
    }
}

/// [`describe`] after gathering every rank's processor name on rank 0 (collective); `None`
/// on the other ranks.
#[cfg(feature = "mpi")]
pub fn gather<C: mpi::traits::Communicator>(
    comm: &C,
    program: &str,
    version: &str,
    started: String,
) -> Option<Provenance> {
    let names = crate::gather_strings(comm, 0, &crate::processor_name())?;
    Some(describe(program, version, &names, started))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_named_by_its_job_or_its_process_and_its_start() {
        let started = "2026-12-05T09:40:45.123+01:00";
        assert_eq!(
            run_id(Some("123456"), "n001", 4242, started),
            "job-123456-20261205T084045Z"
        );
        assert_eq!(
            run_id(None, "n001", 4242, started),
            "n001-4242-20261205T084045Z"
        );
        // Nothing of a host name or job id can break a CSV field or a file name.
        assert_eq!(run_id(Some("12,3 4/x"), "h", 1, "now"), "job-12_3_4_x-now");
    }

    #[test]
    fn csv_fields_never_need_quoting() {
        let p = Provenance {
            program: "sqmr".into(),
            version: "0.1.0".into(),
            command_line: vec![],
            mpi_built_against: "Open MPI 4.1.4".into(),
            mpi_runs_on: "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4".into(),
            hosts: hosts_of(&["n1".to_string(), "n2".to_string()]),
            kernel: String::new(),
            cpu_model: String::new(),
            job_id: None,
            job_id_variable: None,
            started: "2026-12-05T08:40:45+00:00".into(),
            ended: None,
            run_id: "n1-42-20261205T084045Z".into(),
        };
        assert_eq!(
            p.csv_fields(),
            "n1-42-20261205T084045Z,n1,Open MPI v4.1.4,2026-12-05T08:40:45+00:00"
        );
        assert_eq!(
            CSV_COLUMNS.split(',').count(),
            p.csv_fields().split(',').count()
        );
        assert_eq!(
            CSV_COLUMNS.split(',').count(),
            csv_fields(None).split(',').count()
        );
        assert_eq!(
            short_library("MPICH Version:\t4.0.2\nMPICH Release date: Thu Apr  7"),
            "MPICH 4.0.2"
        );
        assert_eq!(
            short_library("Intel(R) MPI Library 2021.13 for Linux* OS\n"),
            "Intel(R) MPI Library 2021.13"
        );
        assert_eq!(short_library(""), "");
        assert_eq!(short_library(&"x".repeat(60)).chars().count(), 49);
    }

    #[test]
    fn hosts_are_counted_in_the_order_of_their_lowest_rank() {
        let names: Vec<String> = ["b", "a", "b", "c", "a"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let hosts = hosts_of(&names);
        let seen: Vec<(&str, usize, usize)> = hosts
            .iter()
            .map(|h| (h.name.as_str(), h.ranks, h.first_rank))
            .collect();
        assert_eq!(seen, [("b", 2, 0), ("a", 2, 1), ("c", 1, 3)]);
        // Linear: 100,000 ranks on 100,000 hosts are one pass.
        let many: Vec<String> = (0..100_000).map(|i| format!("n{i}")).collect();
        assert_eq!(hosts_of(&many).len(), 100_000);
    }

    #[test]
    fn the_first_batch_system_variable_names_the_job() {
        let env = |k: &str| match k {
            "PBS_JOBID" => Some("77.pbs".to_string()),
            "JOB_ID" => Some("5".to_string()),
            "SLURM_JOB_ID" => Some(" ".to_string()),
            _ => None,
        };
        assert_eq!(
            job_id(&env),
            Some(("77.pbs".to_string(), "PBS_JOBID".to_string()))
        );
        assert_eq!(job_id(&|_| None), None);
    }

    #[test]
    fn cpu_models_of_x86_and_arm() {
        let x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel\t\t: 1\nmodel name\t: AMD EPYC 7763 64-Core Processor\n";
        assert_eq!(cpu_model_in(x86), "AMD EPYC 7763 64-Core Processor");
        let arm =
            "processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd40\n\nModel\t: Raspberry Pi 4\n";
        assert_eq!(cpu_model_in(arm), "Raspberry Pi 4");
        assert_eq!(cpu_model_in(""), "");
    }

    #[test]
    fn the_kernel_names_the_system_and_the_machine() {
        let k = kernel();
        assert!(k.starts_with("Linux "), "{k}");
        assert!(k.ends_with(std::env::consts::ARCH), "{k}");
    }
}
