//! No silent singletons: a launcher that started N > 1 tasks, and an MPI library that did
//! not hear of them.
//!
//! When the launcher and the MPI library do not speak the same process-management
//! interface (MPICH under `srun --mpi=pmix` or `--mpi=none`; a program built for one MPI
//! started by the other's `mpiexec`), `MPI_Init` does not fail: every task becomes its own
//! world of one rank, runs the whole benchmark alone and exits 0. [`check`] compares the
//! world size with what the launcher put in the environment and, when they disagree that
//! way, returns a [`Singleton`] whose text says what happened and the likely fix.
//!
//! Which variables count, most trusted first:
//!
//! 1. the MPI launcher's own world size: `OMPI_COMM_WORLD_SIZE` (Open MPI's `mpirun`),
//!    `PMI_SIZE` (MPICH's hydra, and Slurm's `pmi2` plugin), `PMIX_SIZE` and
//!    `MPI_UNIVERSE_SIZE` where a launcher sets them. When one is present it decides alone:
//!    it describes the MPI job this process belongs to even inside a larger Slurm step
//!    (ranks started by `mpirun` inside `salloc`/`sbatch` inherit Slurm variables of the
//!    allocation or of the daemon step, which say nothing about this job).
//! 2. otherwise Slurm's task count for a task that `srun` started: `SLURM_STEP_NUM_TASKS`
//!    (or, from older `srun`s, `SLURM_NTASKS`) — but only with `SLURM_PROCID` and a
//!    numeric `SLURM_STEP_ID`, i.e. in a job step's task. A batch script or an `salloc`
//!    shell carries the allocation's `SLURM_NTASKS` without being one of N tasks, so a
//!    program started there directly (a true singleton) is not flagged.

use std::fmt;

/// The exit code of a process that stops because it is a silent singleton.
pub const EXIT_CODE: i32 = crate::Exit::Singleton.code();

/// Who started the tasks, as far as the environment tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartedBy {
    /// Slurm's `srun`.
    Srun,
    /// Open MPI's `mpirun`/`mpiexec`.
    OpenMpiRun,
    /// A PMI launcher: MPICH's hydra `mpiexec`, or `srun --mpi=pmi2`.
    Pmi,
    /// A PMIx launcher.
    Pmix,
}

/// What the launcher said: how many tasks, through which variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launched {
    /// The launcher.
    pub started_by: StartedBy,
    /// The variable that gave the count.
    pub variable: &'static str,
    /// Tasks started.
    pub tasks: usize,
    /// This task's number, where the environment gives it.
    pub task: Option<usize>,
}

/// The MPI library of this process, for the fix to suggest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    /// Open MPI.
    OpenMpi,
    /// MPICH or a derivative.
    Mpich,
    /// Not recognised.
    Other,
}

impl Library {
    /// The library named by an `MPI_Get_library_version` string.
    pub fn from_version(version: &str) -> Library {
        if version.contains("Open MPI") {
            Library::OpenMpi
        } else if version.contains("MPICH") {
            Library::Mpich
        } else {
            Library::Other
        }
    }
}

/// A task that the launcher counted among N > 1 but that MPI started as a world of 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Singleton {
    /// What the launcher said.
    pub launched: Launched,
    /// The MPI library of this process.
    pub library: Library,
    /// `SLURM_MPI_TYPE`, the `srun --mpi` plugin in use, where set.
    pub srun_plugin: Option<String>,
}

fn number(env: &dyn Fn(&str) -> Option<String>, name: &str) -> Option<usize> {
    env(name).and_then(|v| v.trim().parse().ok())
}

/// What the launcher of this process said about the number of tasks, read through `env`
/// (a variable's value by name; `std::env::var(..).ok()` in a real process). `None`
/// when nothing says this process is one of several tasks.
pub fn launched(env: &dyn Fn(&str) -> Option<String>) -> Option<Launched> {
    let mpi_launchers: [(&'static str, StartedBy, &'static str); 4] = [
        (
            "OMPI_COMM_WORLD_SIZE",
            StartedBy::OpenMpiRun,
            "OMPI_COMM_WORLD_RANK",
        ),
        ("PMI_SIZE", StartedBy::Pmi, "PMI_RANK"),
        ("PMIX_SIZE", StartedBy::Pmix, "PMIX_RANK"),
        ("MPI_UNIVERSE_SIZE", StartedBy::Pmi, "PMI_RANK"),
    ];
    for (variable, started_by, rank) in mpi_launchers {
        if let Some(tasks) = number(env, variable) {
            return Some(Launched {
                started_by,
                variable,
                tasks,
                task: number(env, rank),
            });
        }
    }
    let task = number(env, "SLURM_PROCID")?;
    // A job step's task: batch scripts and the extern/interactive steps have no numeric
    // step id (or none at all).
    number(env, "SLURM_STEP_ID").or_else(|| number(env, "SLURM_STEPID"))?;
    for variable in ["SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"] {
        if let Some(tasks) = number(env, variable) {
            return Some(Launched {
                started_by: StartedBy::Srun,
                variable,
                tasks,
                task: Some(task),
            });
        }
    }
    None
}

/// Checks a world of `world_size` ranks against the launcher's count (see the module
/// notes). `library_version` is `MPI_Get_library_version`'s text; `env` reads a variable.
pub fn check(
    world_size: usize,
    library_version: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), Singleton> {
    match launched(env) {
        Some(launched) if world_size == 1 && launched.tasks > 1 => Err(Singleton {
            launched,
            library: Library::from_version(library_version),
            srun_plugin: env("SLURM_MPI_TYPE").filter(|p| !p.is_empty()),
        }),
        _ => Ok(()),
    }
}

/// [`check`] on this process's environment.
pub fn check_process(world_size: usize, library_version: &str) -> Result<(), Singleton> {
    check(world_size, library_version, &|name| {
        std::env::var(name).ok()
    })
}

impl Singleton {
    fn fix(&self) -> String {
        let srun = self.launched.started_by == StartedBy::Srun || self.srun_plugin.is_some();
        let plugin = match &self.srun_plugin {
            Some(p) => format!(" (this srun used --mpi={p})"),
            None => String::new(),
        };
        match (srun, self.library) {
            (true, Library::Mpich) => format!(
                "this program is built with MPICH, which under srun needs --mpi=pmi2{plugin}: \
                 srun --mpi=pmi2 ..."
            ),
            (true, Library::OpenMpi) => format!(
                "this program is built with Open MPI, which under srun needs --mpi=pmix{plugin}: \
                 srun --mpi=pmix ..."
            ),
            (true, Library::Other) => format!(
                "pass srun the --mpi plugin this MPI library supports{plugin}: --mpi=pmi2 for \
                 MPICH, --mpi=pmix for Open MPI (srun --mpi=list shows them)"
            ),
            (false, Library::Mpich) => {
                "this program is built with MPICH but was started by another MPI's launcher: \
                 use MPICH's mpiexec (mpiexec.mpich on Debian), or srun --mpi=pmi2"
                    .to_string()
            }
            (false, Library::OpenMpi) => {
                "this program is built with Open MPI but was started by another MPI's \
                 launcher: use Open MPI's mpirun, or srun --mpi=pmix"
                    .to_string()
            }
            (false, Library::Other) => {
                "start it with the launcher of the MPI library it was built with".to_string()
            }
        }
    }
}

impl fmt::Display for Singleton {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let who = match self.launched.started_by {
            StartedBy::Srun => "srun",
            StartedBy::OpenMpiRun => "Open MPI's mpirun",
            StartedBy::Pmi => "the PMI launcher",
            StartedBy::Pmix => "the PMIx launcher",
        };
        let task = match self.launched.task {
            Some(t) => format!("task {t} of {}", self.launched.tasks),
            None => format!("one of {} tasks", self.launched.tasks),
        };
        write!(
            f,
            "ERROR launch: {who} started {} tasks ({}={}), but MPI sees a world of 1 rank in \
             {task}: the launcher and the MPI library did not connect, so every task runs \
             alone as its own singleton and nothing would be measured between ranks. \
             Likely fix: {}.",
            self.launched.tasks,
            self.launched.variable,
            self.launched.tasks,
            self.fix()
        )
    }
}

impl std::error::Error for Singleton {}

#[cfg(test)]
mod tests {
    use super::*;

    const MPICH: &str = "MPICH Version:\t4.0.2\nMPICH Device:\tch4:ucx\n";
    const OMPI: &str = "Open MPI v4.1.4, package: Debian OpenMPI";

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let owned: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name: &str| {
            owned
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    /// What `srun -n 4` gives a task (the subset that matters).
    fn srun_task(procid: &str, plugin: &str) -> Vec<(&'static str, String)> {
        vec![
            ("SLURM_JOB_ID", "7".into()),
            ("SLURM_STEP_ID", "0".into()),
            ("SLURM_STEPID", "0".into()),
            ("SLURM_NTASKS", "4".into()),
            ("SLURM_STEP_NUM_TASKS", "4".into()),
            ("SLURM_PROCID", procid.into()),
            ("SLURM_MPI_TYPE", plugin.into()),
        ]
    }

    fn check_pairs(world: usize, version: &str, pairs: &[(&str, String)]) -> Result<(), Singleton> {
        let borrowed: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        check(world, version, &env(&borrowed))
    }

    #[test]
    fn mpich_under_srun_pmix_is_caught_on_every_task_with_the_fix() {
        for procid in ["0", "3"] {
            let e = check_pairs(1, MPICH, &srun_task(procid, "pmix")).unwrap_err();
            assert_eq!(e.launched.started_by, StartedBy::Srun);
            assert_eq!(e.launched.variable, "SLURM_STEP_NUM_TASKS");
            let text = e.to_string();
            assert!(text.contains("srun started 4 tasks"), "{text}");
            assert!(text.contains(&format!("task {procid} of 4")), "{text}");
            assert!(
                text.contains("MPICH, which under srun needs --mpi=pmi2"),
                "{text}"
            );
            assert!(text.contains("(this srun used --mpi=pmix)"), "{text}");
        }
    }

    #[test]
    fn open_mpi_under_srun_is_told_about_pmix() {
        let e = check_pairs(1, OMPI, &srun_task("1", "none")).unwrap_err();
        assert!(e
            .to_string()
            .contains("Open MPI, which under srun needs --mpi=pmix"));
        let mut unknown = srun_task("1", "none");
        unknown.retain(|(k, _)| *k != "SLURM_MPI_TYPE");
        let e = check_pairs(1, "Some MPI 1.0", &unknown).unwrap_err();
        assert!(e
            .to_string()
            .contains("--mpi=pmi2 for MPICH, --mpi=pmix for Open MPI"));
    }

    #[test]
    fn a_connected_world_is_fine() {
        assert!(check_pairs(4, MPICH, &srun_task("2", "pmi2")).is_ok());
        assert!(check(4, OMPI, &env(&[("OMPI_COMM_WORLD_SIZE", "4")])).is_ok());
    }

    #[test]
    fn one_task_is_a_singleton_by_choice() {
        assert!(check(1, MPICH, &env(&[])).is_ok());
        let mut one = srun_task("0", "pmix");
        for (k, v) in one.iter_mut() {
            if k.contains("TASKS") {
                *v = "1".into();
            }
        }
        assert!(check_pairs(1, MPICH, &one).is_ok());
        assert!(check(1, OMPI, &env(&[("OMPI_COMM_WORLD_SIZE", "1")])).is_ok());
    }

    #[test]
    fn a_singleton_in_a_batch_script_or_salloc_shell_is_not_flagged() {
        // sbatch -n 4: the batch script has the allocation's task count and is task 0 of
        // no job step.
        let batch = env(&[
            ("SLURM_JOB_ID", "7"),
            ("SLURM_NTASKS", "4"),
            ("SLURM_NPROCS", "4"),
            ("SLURM_PROCID", "0"),
        ]);
        assert!(check(1, MPICH, &batch).is_ok());
        let batch_step = env(&[
            ("SLURM_NTASKS", "4"),
            ("SLURM_PROCID", "0"),
            ("SLURM_STEP_ID", "batch"),
        ]);
        assert!(check(1, MPICH, &batch_step).is_ok());
        // salloc -n 4: the shell has no task number at all.
        let salloc = env(&[("SLURM_JOB_ID", "7"), ("SLURM_NTASKS", "4")]);
        assert!(check(1, OMPI, &salloc).is_ok());
    }

    #[test]
    fn the_mpi_launchers_count_wins_over_slurms() {
        // mpirun -n 1 inside an allocation whose daemons srun started: Slurm says 2 tasks,
        // the MPI job is one rank by request.
        let mut pairs = srun_task("1", "pmix");
        pairs.push(("OMPI_COMM_WORLD_SIZE", "1".into()));
        assert!(check_pairs(1, OMPI, &pairs).is_ok());
        // And the other way: mpiexec.mpich -n 3 of an Open MPI program in a 1-task step.
        let hydra = env(&[("PMI_SIZE", "3"), ("PMI_RANK", "2"), ("SLURM_PROCID", "0")]);
        let e = check(1, OMPI, &hydra).unwrap_err();
        assert_eq!(e.launched.variable, "PMI_SIZE");
        let text = e.to_string();
        assert!(
            text.contains("the PMI launcher started 3 tasks (PMI_SIZE=3)"),
            "{text}"
        );
        assert!(text.contains("task 2 of 3"), "{text}");
        assert!(text.contains("use Open MPI's mpirun"), "{text}");
    }

    #[test]
    fn an_mpich_program_under_open_mpis_mpirun_is_pointed_at_mpiexec() {
        let e = check(
            1,
            MPICH,
            &env(&[("OMPI_COMM_WORLD_SIZE", "2"), ("OMPI_COMM_WORLD_RANK", "1")]),
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("ERROR launch: Open MPI's mpirun started 2 tasks"));
        assert!(text.contains("mpiexec.mpich"), "{text}");
    }

    #[test]
    fn garbage_counts_are_ignored() {
        let e = env(&[("OMPI_COMM_WORLD_SIZE", "many"), ("PMI_SIZE", "")]);
        assert_eq!(launched(&e), None);
        assert!(check(1, OMPI, &e).is_ok());
    }

    #[test]
    fn library_names_come_from_the_version_string() {
        assert_eq!(Library::from_version(MPICH), Library::Mpich);
        assert_eq!(Library::from_version(OMPI), Library::OpenMpi);
        assert_eq!(Library::from_version("Intel(R) MPI"), Library::Other);
    }
}
