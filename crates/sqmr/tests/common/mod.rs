//! Shared by the integration tests: launch `sqmr` and read its output back.

#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

pub use mpitest::{Installation, Job};

/// Launches the `sqmr` under test on `ranks` ranks.
pub fn sqmr(ranks: usize, args: &[&str]) -> Job {
    let job = mpitest::launch(
        Installation::from_env(),
        ranks,
        Path::new(env!("CARGO_BIN_EXE_sqmr")),
        args,
        Duration::from_secs(120),
    );
    assert!(
        !job.timed_out,
        "sqmr {args:?} on {ranks} ranks hit the time limit: {job:#?}"
    );
    job
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub msgsize: u64,
    pub iters: u64,
    /// average, max, min: (msgs/s, MiB/s)
    pub rates: [(f64, f64); 3],
}

/// The header values and the rows of a run's standard output.
#[derive(Debug)]
pub struct Table {
    pub lines: Vec<String>,
    pub tasks_per_node: u64,
    pub neighbours: u64,
    pub iterations: u64,
    pub window: u64,
    pub rows: Vec<Row>,
}

/// Parses the whole of standard output: every line is either a `#` line, blank (only
/// in `--verbose`), or a row of exactly eight fields.
pub fn parse(stdout: &str) -> Table {
    let lines: Vec<String> = stdout.lines().map(str::to_string).collect();
    let value = |name: &str| -> u64 {
        let line = lines
            .iter()
            .find(|l| l.starts_with(&format!("# {name}")) && l.contains(':'))
            .unwrap_or_else(|| panic!("no header line '{name}' in\n{stdout}"));
        line.rsplit(": ").next().unwrap().trim().parse().unwrap()
    };
    let mut rows = Vec::new();
    for line in &lines {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields.len(), 8, "a row has eight fields: {line:?}");
        let f = |i: usize| -> f64 { fields[i].parse().unwrap() };
        rows.push(Row {
            msgsize: fields[0].parse().unwrap(),
            iters: fields[1].parse().unwrap(),
            rates: [(f(2), f(3)), (f(4), f(5)), (f(6), f(7))],
        });
    }
    Table {
        tasks_per_node: value("MPI tasks per node"),
        neighbours: value("Neighbor tasks"),
        iterations: value("Iterations per message size"),
        window: value("Send/Recv operations per iteration"),
        lines,
        rows,
    }
}

/// A small tmpfs for a full disk, unmounted when dropped. Mounting needs root: elsewhere
/// [`Tmpfs::with_free_pages`] says `SKIPPED` (under `CI=true` it fails) and returns `None`.
pub struct Tmpfs {
    pub dir: std::path::PathBuf,
}

impl Tmpfs {
    /// Mounts a 64 KiB tmpfs and fills it but for `free_pages` pages of 4 KiB.
    pub fn with_free_pages(name: &str, free_pages: usize) -> Option<Tmpfs> {
        let dir = std::env::temp_dir().join(format!("sqmr-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(&dir)
            .output()
            .is_ok_and(|o| o.status.success());
        if !mounted {
            let _ = std::fs::remove_dir(&dir);
            mpitest::unavailable(&format!(
                "cannot mount a tmpfs at {} (needs root)",
                dir.display()
            ));
            return None;
        }
        let fs = Tmpfs { dir };
        std::fs::write(fs.dir.join("filler"), vec![0u8; (16 - free_pages) * 4096]).unwrap();
        Some(fs)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.dir).status();
        let _ = std::fs::remove_dir(&self.dir);
    }
}
