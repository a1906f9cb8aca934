//! Jobs on the cluster: `srun` with a time limit (and the one Slurm bug it works round),
//! the commands `xylem place` gives, and what each MPI needs under `srun`.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::{Cluster, Installation, Job};

impl Cluster {
    /// Runs `argv` (a Slurm client such as `srun …`) against the cluster under
    /// `timeout -k 5 LIMIT`, with `env` added, and collects its output. A test never
    /// calls [`mpitest::launch`] while it holds a cluster: the cluster holds the job lock.
    pub fn run(&self, limit: Duration, argv: &[&str], env: &[(&str, &str)]) -> Job {
        let attempt = |extra: &[(&str, &str)]| {
            let mut command = self.command("timeout");
            command
                .args(["-k", "5"])
                .arg(limit.as_secs().max(1).to_string())
                .args(argv);
            for (key, value) in env.iter().chain(extra) {
                command.env(key, value);
            }
            // A cut request leaves the ranks waiting in MPI_Init until the time limit:
            // the attempt ends as soon as slurmstepd has said so.
            mpitest::run_until(
                command,
                Path::new(argv.first().copied().unwrap_or("srun")),
                pmi1_request_cut,
            )
        };
        let mut job = attempt(&[]);
        if let Some(task) = segfaulted_task(&job) {
            // One CI run (Open MPI 4.1.4 under `--mpi=pmix`, four namespace nodes) lost a
            // task to SIGSEGV during the benchmark's first collective, the other ranks
            // already past MPI_Init and a TCP connection to it reset; 25 runs here, 13 of
            // them beside a CPU hog, never did it again. The benchmark's own code there is
            // safe Rust, so the job runs once more, the first attempt printed; a second
            // crash is the test's failure.
            eprintln!(
                "NOTE: {task} of {argv:?} died of SIGSEGV; running it once more. \
                 The first attempt:\n{}",
                job.stderr
            );
            job = attempt(&[]);
        }
        if !pmi1_line_misread(&job) {
            return job;
        }
        // Slurm 22.05's pmi2 plugin takes a PMI-1 request from one read of at most 1024
        // bytes (its source says "TODO: read until newline"); a longer `cmd=put` line is
        // cut, and the job dies in MPI_Init before a payload byte moves. MPICH 5 puts its
        // UCX business card in segments whose encoded length depends on the bytes of the
        // card, and the card it allgathers carries bytes of the heap beyond the address
        // (pointers and strings in the line of a CI run). The job runs once more with
        // fresh allocations zeroed (glibc's MALLOC_PERTURB_=255), which encode short;
        // if that is cut too, MPICH 5 runs it a last time on its other netmod, ch4:ofi
        // (libfabric's tcp provider), whose addresses are a few dozen bytes, and the
        // selection applies to it as to UCX. A refusal after that is the test's failure.
        eprintln!(
            "NOTE: slurmstepd cut a PMI-1 request; running {argv:?} once more \
             with MALLOC_PERTURB_=255"
        );
        let zeroed = [("MALLOC_PERTURB_", "255")];
        let job = attempt(&zeroed);
        if !pmi1_line_misread(&job) || Installation::from_env() != Installation::Mpich5 {
            return job;
        }
        eprintln!(
            "NOTE: slurmstepd cut a PMI-1 request again; running {argv:?} a last time on \
             MPICH 5's ch4:ofi netmod (MPIR_CVAR_CH4_NETMOD=ofi, FI_PROVIDER=tcp)"
        );
        attempt(&[
            zeroed[0],
            ("MPIR_CVAR_CH4_NETMOD", "ofi"),
            ("FI_PROVIDER", "tcp"),
        ])
    }

    /// The `srun` command that the `place` crate gives for `layout` with `program args`
    /// (what `xylem place … --launcher srun` prints), its host file written into the
    /// cluster's directory; its `argv` and `env` are ready for [`Cluster::run`].
    pub fn placed_srun(
        &self,
        layout: &place::Layout,
        mpi: place::Mpi,
        program: &Path,
        args: &[String],
    ) -> place::Command {
        let hostfile = self.dir.path().join("hosts.txt");
        let command = place::Command::new(
            layout,
            place::Launcher::Srun,
            Some(mpi),
            hostfile.to_str().expect("a UTF-8 temporary path"),
            program.to_str().expect("a UTF-8 program path"),
            args,
        )
        .expect("the layout and launcher fit");
        fs::write(&hostfile, &command.file.contents)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", hostfile.display()));
        command
    }
}

/// A binary of the workspace built beside the running test: `target/<profile>/NAME`, found
/// from the test executable (`target/<profile>/deps/…`). Panics with what to build when it
/// is missing (`cargo test --workspace` builds every binary first).
pub fn sibling_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its own path");
    let profile = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test runs from target/<profile>/deps");
    let path = profile.join(name);
    assert!(
        path.is_file(),
        "{} is missing: build it into the same target directory first \
         (cargo test --workspace does; or cargo build -p <its crate>)",
        path.display()
    );
    path
}

/// The `srun --mpi=` plugin that starts `mpi`'s ranks here: PMIx for Open MPI, Slurm's
/// PMI-2 for the hydra libraries.
pub fn srun_plugin(mpi: Installation) -> &'static str {
    if mpi.is_open_mpi() {
        "--mpi=pmix"
    } else {
        "--mpi=pmi2"
    }
}

/// What the ranks of `mpi` need in their environment under `srun`, beyond the
/// launcher's: Intel MPI finds Slurm's PMI-2 only through `I_MPI_PMI_LIBRARY` (it
/// carries no PMI-2 client of its own that `srun --mpi=pmi2` could talk to).
pub fn srun_env(mpi: Installation) -> Vec<(&'static str, String)> {
    match mpi {
        Installation::IntelMpi => vec![("I_MPI_PMI_LIBRARY", slurm_pmi2_library())],
        _ => Vec::new(),
    }
}

/// Slurm's PMI-2 client library (`libpmi2.so` of the libpmi2 package).
pub fn slurm_pmi2_library() -> String {
    let candidates = [
        "/usr/lib/x86_64-linux-gnu/libpmi2.so.0",
        "/usr/lib/x86_64-linux-gnu/libpmi2.so",
        "/usr/lib64/libpmi2.so",
        "/usr/lib/libpmi2.so",
    ];
    candidates
        .iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or(&candidates[0])
        .to_string()
}

/// Whether `job` failed because slurmstepd's pmi2 plugin cut a PMI-1 request it read in
/// pieces (its messages `value not properly terminated` and `request not begin with
/// 'cmd='`), rather than for anything the program did.
pub fn pmi1_line_misread(job: &Job) -> bool {
    !job.success() && pmi1_request_cut(&job.stderr)
}

/// Whether `stderr` holds slurmstepd's two messages of a cut PMI-1 request.
fn pmi1_request_cut(stderr: &str) -> bool {
    stderr.contains("mpi/pmi2: value not properly terminated")
        && stderr.contains("mpi/pmi2: request not begin with 'cmd='")
}

/// The task that `srun` reports killed by SIGSEGV (`srun: error: n4: task 3: Segmentation
/// fault`), if any.
fn segfaulted_task(job: &Job) -> Option<String> {
    job.stderr.lines().find_map(|l| {
        let rest = l.strip_prefix("srun: error: ")?;
        let (_, task) = rest.split_once(": ")?;
        let (task, what) = task.split_once(": ")?;
        (what.trim() == "Segmentation fault").then(|| task.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(code: i32, stderr: &str) -> Job {
        Job {
            code: Some(code),
            timed_out: false,
            stdout: String::new(),
            stderr: stderr.to_string(),
            elapsed: Duration::from_millis(120),
        }
    }

    #[test]
    fn only_slurms_cut_pmi1_request_counts_as_misread() {
        // As slurmstepd printed it in a CI run (MPICH 5, Slurm 22.05.8).
        let cut =
            "slurmstepd-n1: error: mpi/pmi2: value not properly terminated in client request\n\
                   slurmstepd-n1: error: mpi/pmi2: request not begin with 'cmd='\n\
                   slurmstepd-n1: error: mpi/pmi2: invalid client request\n";
        assert!(pmi1_line_misread(&job(15, cut)));
        assert!(!pmi1_line_misread(&job(0, cut)));
        assert!(!pmi1_line_misread(&job(
            15,
            "Fatal error in MPI_Init: other MPI error"
        )));
    }

    #[test]
    fn a_task_srun_reports_segfaulted_is_named() {
        // As srun printed it in a CI run (Open MPI 4.1.4, --mpi=pmix).
        let crash =
            "[n3][[13986,19801],2][btl_tcp.c:559:mca_btl_tcp_recv_blocking] recv(19) failed\n\
                     srun: error: n4: task 3: Segmentation fault\n\
                     srun: error: n1: task 0: Exited with exit code 6\n";
        assert_eq!(segfaulted_task(&job(139, crash)).as_deref(), Some("task 3"));
        let exited = "srun: error: n1: task 0: Exited with exit code 6\n";
        assert_eq!(segfaulted_task(&job(6, exited)), None);
    }
}
