//! The output files of a run — `--json`, `--csv`, and `--prefix`'s `PREFIX.sum` and
//! `PREFIX.prot` — on the `outfile` crate, and the checked writes of the text report to
//! standard output.
//!
//! Rank 0 reserves every file before the run ([`Outputs::reserve`]), so that a bad path,
//! an existing `--json` or `--csv` file (refused, never overwritten; an earlier
//! `PREFIX.sum` or `PREFIX.prot` is kept under a numbered name, as a 2.1 job script that
//! writes the same names on every run needs) or a name another live run is writing
//! fails in the first second and not after a 15-minute run; every rank agrees on the
//! outcome. An earlier `PREFIX.sum` or `PREFIX.prot` is moved to its numbered name only
//! once the run measured its first pattern ([`Outputs::keep_earlier`]), so that a run
//! refused at its start leaves it in place. A reservation left by a killed run is
//! replaced, and said on stderr. After each
//! partition every file gets a version with the partitions finished so far
//! ([`Outputs::write_version`]), and at the end its last ([`Outputs::write`]); each
//! version goes to a temporary file put in place whole, so a run that dies, hangs or
//! fills its disk leaves no empty or partial file behind, only complete versions and its
//! (hidden) reservation when it was killed outright.

use std::path::PathBuf;

use outfile::Reservation;

use crate::options::Options;
use benchkit::Exit;

/// The texts of the output files at the end of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Texts {
    /// The `--json` document.
    pub json: String,
    /// The `--csv` rows.
    pub csv: String,
    /// `PREFIX.sum`: the summary in 2.1's layout ([`crate::report::v21::summary_file`]).
    pub sum: String,
    /// `PREFIX.prot`: the protocol in 2.1's layout ([`crate::report::v21::protocol_file`]).
    pub prot: String,
}

/// Which of [`Texts`] an output file takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Json,
    Csv,
    Sum,
    Prot,
}

/// The reserved output files of this run (none on ranks other than 0).
#[derive(Debug, Default)]
pub struct Outputs {
    files: Vec<Output>,
}

/// One reserved output file.
#[derive(Debug)]
struct Output {
    /// The option that named it, for messages.
    option: &'static str,
    kind: Kind,
    file: Reservation,
    /// Whether where its earlier file is kept was said.
    kept_said: bool,
}

/// The prefix of the `.sum` and `.prot` files without `-f`, as in 2.1.
pub const DEFAULT_PREFIX: &str = "b_eff_io";

impl Outputs {
    /// No output files (ranks other than 0, or no options for them).
    pub fn none() -> Outputs {
        Outputs::default()
    }

    /// Reserves every output file `opts` asks for (rank 0, before the run). A killed
    /// run's reservation that is replaced is said on stderr. On failure the files
    /// reserved so far are released again, and the failure carries the exit code
    /// (2, [`Exit::Usage`], for a name that exists or is taken, 1 for an I/O error) and
    /// the message.
    pub fn reserve(opts: &Options) -> Result<Outputs, benchkit::Failure> {
        let mut out = Outputs::none();
        if let Some(p) = &opts.json {
            out.reserve_one("--json", Kind::Json, p.clone())?;
        }
        if let Some(p) = &opts.csv {
            out.reserve_one("--csv", Kind::Csv, p.clone())?;
        }
        match &opts.prefix {
            Some(prefix) => out.reserve_summary("--prefix", prefix)?,
            // 2.1 writes b_eff_io.sum and .prot where it runs.
            None => out.reserve_summary_or_own("--prefix (default b_eff_io)", DEFAULT_PREFIX)?,
        }
        Ok(out)
    }

    /// [`Outputs::reserve_summary`] for a prefix the user did not choose: when its names
    /// are taken (another live run writes them: a second job started in the same folder),
    /// `PREFIX.<pid>` instead of refusing to run, said on stderr.
    fn reserve_summary_or_own(
        &mut self,
        option: &'static str,
        prefix: &str,
    ) -> Result<(), benchkit::Failure> {
        match self.reserve_summary(option, prefix) {
            Err(held) if held.code == Exit::Usage.code() => {
                let own = format!("{prefix}.{}", std::process::id());
                self.reserve_summary(option, &own)?;
                outfile::eprintln!(
                    "b_eff_io: note: {} (this run writes {own}.sum and {own}.prot)",
                    held.message.trim_start_matches("b_eff_io: error: ")
                );
                Ok(())
            }
            other => other,
        }
    }

    /// Reserves `PREFIX.sum` and `PREFIX.prot` (both or neither), keeping earlier files of
    /// those names under numbered names.
    fn reserve_summary(
        &mut self,
        option: &'static str,
        prefix: &str,
    ) -> Result<(), benchkit::Failure> {
        let sum = self.reserve_one(option, Kind::Sum, PathBuf::from(format!("{prefix}.sum")));
        let both = sum.and_then(|()| {
            self.reserve_one(option, Kind::Prot, PathBuf::from(format!("{prefix}.prot")))
        });
        if both.is_err() {
            self.files
                .retain(|o| !matches!(o.kind, Kind::Sum | Kind::Prot));
        }
        both
    }

    /// Reserves one file for `option`; says on stderr what was replaced. An earlier file
    /// to keep stays in place until [`Outputs::keep_earlier`] (or the first version).
    fn reserve_one(
        &mut self,
        option: &'static str,
        kind: Kind,
        path: PathBuf,
    ) -> Result<(), benchkit::Failure> {
        // A 2.1 job script writes the same PREFIX.sum and PREFIX.prot on every run: the
        // earlier ones are kept under numbered names, not refused (once the run goes
        // ahead).
        let reserved = match kind {
            Kind::Sum | Kind::Prot => Reservation::reserve_keeping_earlier(&path),
            Kind::Json | Kind::Csv => Reservation::reserve(&path),
        };
        let file = reserved.map_err(|e| {
            let code = if e.is_conflict() {
                Exit::Usage.code()
            } else {
                Exit::Failure.code()
            };
            benchkit::Failure::new(code, format!("b_eff_io: error: {option} {e}"))
        })?;
        if let Some(notice) = file.replaced_notice() {
            outfile::eprintln!("b_eff_io: warning: {option}: {notice}");
        }
        self.files.push(Output {
            option,
            kind,
            file,
            kept_said: false,
        });
        Ok(())
    }

    /// The run goes ahead (rank 0, once its first pattern is measured, on the main
    /// thread): the earlier `PREFIX.sum` and `PREFIX.prot` are moved to their numbered
    /// names, each said on stderr. A file that cannot be moved is left for the first
    /// version, which tries again and says the error.
    pub fn keep_earlier(&mut self) {
        for o in &mut self.files {
            // An error resurfaces at the next write, which reports it.
            let _ = o.file.keep_earlier();
            o.say_kept();
        }
    }

    /// The prefix of the `.sum` and `.prot` files this run writes (`-f`, or the default
    /// `b_eff_io`, or that with the process id when another live run holds the default);
    /// `None` on ranks other than 0.
    pub fn summary_prefix(&self) -> Option<&str> {
        self.files
            .iter()
            .find(|o| o.kind == Kind::Sum)
            .and_then(|o| o.file.path().to_str()?.strip_suffix(".sum"))
    }

    /// Whether any file is reserved.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Writes every file once, complete, and releases it. Returns one message per file
    /// that could not be written (it is then absent, never partial).
    pub fn write(self, texts: &Texts) -> Vec<String> {
        let mut failures = Vec::new();
        for mut o in self.files {
            let written = o.file.write(o.kind.text(texts).as_bytes());
            o.say_kept();
            if let Err(e) = written.and_then(|()| o.file.release()) {
                failures.push(format!("b_eff_io: error: {} {e}", o.option));
            }
        }
        failures
    }

    /// Puts a version of every file in place before the end (the reservations stay): the
    /// partitions finished so far, or what a stopped run measured. Returns the messages of
    /// the files that could not be written (their previous version stays).
    pub fn write_version(&mut self, texts: &Texts) -> Vec<String> {
        let mut failures = Vec::new();
        for o in &mut self.files {
            let written = o.file.write(o.kind.text(texts).as_bytes());
            o.say_kept();
            if let Err(e) = written {
                failures.push(format!("b_eff_io: error: {} {e}", o.option));
            }
        }
        failures
    }
}

impl Output {
    /// Says on stderr where the earlier file of this name is kept, once it was moved
    /// there (and only once).
    fn say_kept(&mut self) {
        if self.kept_said {
            return;
        }
        if let Some(kept) = self.file.kept_as() {
            let path = self.file.path();
            outfile::eprintln!(
                "b_eff_io: note: {}: the earlier {} is kept as {}; this run writes {}",
                self.option,
                path.display(),
                kept.display(),
                path.display()
            );
            self.kept_said = true;
        }
    }
}

impl Kind {
    /// Which of `texts` a file of this kind takes.
    fn text(self, texts: &Texts) -> &str {
        match self {
            Kind::Json => &texts.json,
            Kind::Csv => &texts.csv,
            Kind::Sum => &texts.sum,
            Kind::Prot => &texts.prot,
        }
    }
}

/// A failed write of the text report to standard output, as every rank will leave with
/// it: one line (none for a closed pipe), exit code 1 (141 for a closed pipe).
pub fn stdout_failure(e: &std::io::Error) -> benchkit::Failure {
    let message = outfile::stdout::message(e)
        .map(|m| format!("b_eff_io: error: {m}"))
        .unwrap_or_default();
    benchkit::Failure::new(outfile::stdout::exit_code(e), message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(dir: &std::path::Path) -> Options {
        let json = dir.join("r.json");
        let prefix = dir.join("p");
        Options::parse_args([
            "b_eff_io",
            "--json",
            json.to_str().unwrap(),
            "--prefix",
            prefix.to_str().unwrap(),
        ])
        .unwrap()
    }

    fn names(dir: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn reserved_at_start_written_complete_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let outputs = Outputs::reserve(&options(dir.path())).unwrap();
        // Only reservations while the run goes: no empty files.
        assert_eq!(
            names(dir.path()),
            [
                ".p.prot.xylem-reservation",
                ".p.sum.xylem-reservation",
                ".r.json.xylem-reservation"
            ]
        );
        let texts = Texts {
            json: "{}\n".into(),
            csv: "unused".into(),
            sum: "sum\n".into(),
            prot: "prot\n".into(),
        };
        assert!(outputs.write(&texts).is_empty());
        assert_eq!(names(dir.path()), ["p.prot", "p.sum", "r.json"]);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("p.sum")).unwrap(),
            "sum\n"
        );
    }

    #[test]
    fn an_existing_json_refuses_the_run_with_exit_2_and_releases_the_others() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("r.json"), "precious").unwrap();
        let failure = Outputs::reserve(&options(dir.path())).unwrap_err();
        assert_eq!(failure.code, Exit::Usage.code());
        assert!(
            failure.message.starts_with("b_eff_io: error: --json ")
                && failure.message.contains("r.json: the file exists"),
            "{}",
            failure.message
        );
        assert_eq!(names(dir.path()), ["r.json"]);
    }

    #[test]
    fn an_earlier_sum_and_prot_are_kept_numbered_as_a_rerun_of_a_job_script_needs() {
        let dir = tempfile::tempdir().unwrap();
        for run in ["first", "second"] {
            let prefix = dir.path().join("p");
            let opts = Options::parse_args(["b_eff_io", "-f", prefix.to_str().unwrap()]).unwrap();
            let outputs = Outputs::reserve(&opts).unwrap();
            let texts = Texts {
                sum: format!("{run} sum\n"),
                prot: format!("{run} prot\n"),
                ..Texts::default()
            };
            assert!(outputs.write(&texts).is_empty());
        }
        assert_eq!(
            names(dir.path()),
            ["p.prot", "p.prot.1", "p.sum", "p.sum.1"]
        );
        let read = |n: &str| std::fs::read_to_string(dir.path().join(n)).unwrap();
        assert_eq!(read("p.sum"), "second sum\n");
        assert_eq!(read("p.sum.1"), "first sum\n");
        assert_eq!(read("p.prot.1"), "first prot\n");
    }

    #[test]
    fn an_earlier_sum_stays_in_place_until_the_run_goes_ahead() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("p");
        std::fs::write(dir.path().join("p.sum"), "earlier sum\n").unwrap();
        // Refused at its start (.prot is a folder): p.sum is not moved, nothing is said.
        std::fs::create_dir(dir.path().join("p.prot")).unwrap();
        let opts = Options::parse_args(["b_eff_io", "-f", prefix.to_str().unwrap()]).unwrap();
        let failure = Outputs::reserve(&opts).unwrap_err();
        assert_eq!(failure.code, Exit::Usage.code(), "{}", failure.message);
        assert_eq!(names(dir.path()), ["p.prot", "p.sum"]);
        std::fs::remove_dir(dir.path().join("p.prot")).unwrap();
        // Reserved, then dropped before any pattern (refused later): still in place.
        drop(Outputs::reserve(&opts).unwrap());
        assert_eq!(names(dir.path()), ["p.sum"]);
        // Reserved and gone ahead: kept under its numbered name, once.
        let mut outputs = Outputs::reserve(&opts).unwrap();
        assert_eq!(names(dir.path())[2], "p.sum");
        outputs.keep_earlier();
        outputs.keep_earlier();
        assert!(outputs
            .files
            .iter()
            .all(|o| o.kept_said == o.file.kept_as().is_some()));
        let texts = Texts {
            sum: "sum\n".into(),
            prot: "prot\n".into(),
            ..Texts::default()
        };
        assert!(outputs.write(&texts).is_empty());
        assert_eq!(names(dir.path()), ["p.prot", "p.sum", "p.sum.1"]);
        let read = |n: &str| std::fs::read_to_string(dir.path().join(n)).unwrap();
        assert_eq!(read("p.sum.1"), "earlier sum\n");
        assert_eq!(read("p.sum"), "sum\n");
    }

    #[test]
    fn a_default_prefix_held_by_a_live_run_gives_way_to_one_of_this_run() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("b_eff_io");
        let prefix = prefix.to_str().unwrap();
        let other = Reservation::reserve(format!("{prefix}.prot")).unwrap();
        let mut out = Outputs::none();
        out.reserve_summary_or_own("--prefix (default b_eff_io)", prefix)
            .unwrap();
        let own = format!("{prefix}.{}", std::process::id());
        assert_eq!(out.summary_prefix(), Some(own.as_str()));
        let texts = Texts {
            sum: "sum\n".into(),
            prot: "prot\n".into(),
            ..Texts::default()
        };
        assert!(out.write(&texts).is_empty());
        other.release().unwrap();
        let pid = std::process::id();
        assert_eq!(
            names(dir.path()),
            [
                format!("b_eff_io.{pid}.prot"),
                format!("b_eff_io.{pid}.sum")
            ]
        );
        // A prefix the user chose is never swapped for another.
        let other = Reservation::reserve(format!("{prefix}.sum")).unwrap();
        let mut out = Outputs::none();
        let failure = out.reserve_summary("--prefix", prefix).unwrap_err();
        assert_eq!(failure.code, Exit::Usage.code());
        assert!(out.is_empty() && out.summary_prefix().is_none());
        drop(other);
    }

    #[test]
    fn a_missing_directory_is_exit_1() {
        let dir = tempfile::tempdir().unwrap();
        let failure = Outputs::reserve(&options(&dir.path().join("gone"))).unwrap_err();
        assert_eq!(failure.code, 1);
        assert!(failure.message.contains("No such file or directory"));
    }

    #[test]
    fn stdout_failures_are_said_once_or_quiet() {
        let full = stdout_failure(&std::io::Error::from_raw_os_error(28));
        assert_eq!(
            (full.code, full.message.as_str()),
            (
                1,
                "b_eff_io: error: cannot write to standard output: No space left on device"
            )
        );
        let pipe = stdout_failure(&std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert_eq!((pipe.code, pipe.message.as_str()), (141, ""));
    }
}
