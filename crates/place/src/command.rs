//! From a layout to a launcher command line and its file.

use std::fmt;
use std::str::FromStr;

use crate::{Error, Layout};

/// The program that starts the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launcher {
    /// Slurm's `srun` with `--distribution=arbitrary` and `SLURM_HOSTFILE`.
    Srun,
    /// Open MPI's `mpirun` with `--rankfile`.
    Mpirun,
    /// MPICH's hydra `mpiexec` with `-f` (a machine file).
    Mpiexec,
}

impl Launcher {
    /// Every launcher, in the order `--help` lists them.
    pub const ALL: [Launcher; 3] = [Launcher::Srun, Launcher::Mpirun, Launcher::Mpiexec];

    /// The launcher's command name.
    pub fn name(self) -> &'static str {
        match self {
            Launcher::Srun => "srun",
            Launcher::Mpirun => "mpirun",
            Launcher::Mpiexec => "mpiexec",
        }
    }

    /// The name of the file the command needs, when the caller has no better one.
    pub fn default_file_name(self) -> &'static str {
        match self {
            Launcher::Srun => "hosts.txt",
            Launcher::Mpirun => "rankfile.txt",
            Launcher::Mpiexec => "machinefile.txt",
        }
    }

    /// The MPI library the launcher belongs to (`None` for `srun`, which starts either).
    pub fn owner(self) -> Option<Mpi> {
        match self {
            Launcher::Srun => None,
            Launcher::Mpirun => Some(Mpi::OpenMpi),
            Launcher::Mpiexec => Some(Mpi::Mpich),
        }
    }
}

impl fmt::Display for Launcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Launcher {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Launcher::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| format!("unknown launcher {s:?}: expected srun, mpirun or mpiexec"))
    }
}

/// The MPI library the benchmark was built with; under `srun` it picks the PMI plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mpi {
    /// Open MPI: `srun --mpi=pmix`.
    OpenMpi,
    /// MPICH: `srun --mpi=pmi2`.
    Mpich,
}

impl Mpi {
    /// The `srun --mpi=` plugin this library needs.
    pub fn srun_plugin(self) -> &'static str {
        match self {
            Mpi::OpenMpi => "pmix",
            Mpi::Mpich => "pmi2",
        }
    }
}

impl fmt::Display for Mpi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mpi::OpenMpi => "Open MPI",
            Mpi::Mpich => "MPICH",
        })
    }
}

impl FromStr for Mpi {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "openmpi" => Ok(Mpi::OpenMpi),
            "mpich" => Ok(Mpi::Mpich),
            other => Err(format!("unknown MPI {other:?}: expected openmpi or mpich")),
        }
    }
}

/// The file a command reads: where it goes and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostFile {
    /// The path as the command line names it.
    pub path: String,
    /// The whole text, newline-terminated.
    pub contents: String,
}

/// A complete launch: environment, command line, and the file it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Variables to set for the launcher.
    pub env: Vec<(String, String)>,
    /// The launcher and its arguments, then the program and its arguments.
    pub argv: Vec<String>,
    /// The host file, rankfile or machine file.
    pub file: HostFile,
}

impl Command {
    /// The command that starts `program` (with `--num_cores` and `--num_nbors` from the
    /// layout, then `extra`) placed as `layout` says, reading its file from `file_path`.
    /// `mpi` names the library the program was built with: under `srun` it adds the
    /// `--mpi=` plugin that library needs (without it, the cluster's `MpiDefault` must
    /// be right); with `mpirun` or `mpiexec` it must be that launcher's own library.
    pub fn new(
        layout: &Layout,
        launcher: Launcher,
        mpi: Option<Mpi>,
        file_path: &str,
        program: &str,
        extra: &[String],
    ) -> Result<Command, Error> {
        if let (Some(owner), Some(mpi)) = (launcher.owner(), mpi) {
            if owner != mpi {
                return Err(Error::LauncherMismatch {
                    launcher,
                    owner,
                    mpi,
                    hint: match mpi {
                        Mpi::OpenMpi => "use --launcher mpirun (or srun)",
                        Mpi::Mpich => "use --launcher mpiexec (or srun)",
                    },
                });
            }
        }
        let ranks = layout.ranks().to_string();
        let mut env = Vec::new();
        let mut argv: Vec<String> = vec![launcher.name().to_string()];
        let contents = match launcher {
            Launcher::Srun => {
                env.push(("SLURM_HOSTFILE".to_string(), file_path.to_string()));
                argv.extend(["-n".into(), ranks, "--distribution=arbitrary".into()]);
                if let Some(mpi) = mpi {
                    argv.push(format!("--mpi={}", mpi.srun_plugin()));
                }
                lines(layout, |r| format!("{}\n", layout.host_of(r)))
            }
            Launcher::Mpirun => {
                argv.extend(["-n".into(), ranks, "--rankfile".into(), file_path.into()]);
                lines(layout, |r| {
                    format!(
                        "rank {r}={} slot={}\n",
                        layout.host_of(r),
                        layout.slot_of(r)
                    )
                })
            }
            Launcher::Mpiexec => {
                argv.extend(["-n".into(), ranks, "-f".into(), file_path.into()]);
                layout
                    .runs()
                    .into_iter()
                    .map(|(h, n)| format!("{h}:{n}\n"))
                    .collect()
            }
        };
        let shape = layout.shape();
        argv.push(program.to_string());
        argv.push(format!("--num_cores={}", shape.num_cores));
        argv.push(format!("--num_nbors={}", shape.num_nbors));
        argv.extend(extra.iter().cloned());
        Ok(Command {
            env,
            argv,
            file: HostFile {
                path: file_path.to_string(),
                contents,
            },
        })
    }

    /// The command as one shell line: `NAME=VALUE … launcher args … program args …`,
    /// every word quoted where the shell needs it.
    pub fn shell_line(&self) -> String {
        self.env
            .iter()
            .map(|(k, v)| format!("{k}={}", shell_quote(v)))
            .chain(self.argv.iter().map(|a| shell_quote(a)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// A shell script that writes the file (a here-document) and then runs the command.
    /// The here-document ends at a line that is not in the file ([`delimiter`]).
    pub fn script(&self) -> String {
        let mut contents = self.file.contents.clone();
        if !contents.is_empty() && !contents.ends_with('\n') {
            contents.push('\n');
        }
        let end = delimiter(&contents);
        format!(
            "cat > {} <<'{end}'\n{contents}{end}\n{}\n",
            shell_quote(&self.file.path),
            self.shell_line()
        )
    }
}

/// The line that ends a here-document of `contents`: `XYLEM:EOF`, which no line of a
/// file this crate writes can be (a node name has no `:`, a rankfile line starts with
/// `rank `, a machine file line ends in a count), or, for contents made elsewhere,
/// `XYLEM:EOF1`, `XYLEM:EOF2`, … whichever is not a line of it. A node named `EOF` can
/// never end the document early.
pub fn delimiter(contents: &str) -> String {
    const BASE: &str = "XYLEM:EOF";
    let taken: std::collections::HashSet<&str> =
        contents.lines().filter(|l| l.starts_with(BASE)).collect();
    std::iter::once(BASE.to_string())
        .chain((1..).map(|n| format!("{BASE}{n}")))
        .find(|d| !taken.contains(d.as_str()))
        .expect("fewer lines are taken than there are numbers")
}

/// The text of one line per rank of `layout`.
fn lines(layout: &Layout, line: impl Fn(usize) -> String) -> String {
    let mut text = String::new();
    for r in 0..layout.ranks() {
        text.push_str(&line(r));
    }
    text
}

/// `word` as the shell reads it back: unchanged when it is made of safe characters only,
/// otherwise in single quotes.
pub fn shell_quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-+./:=,@%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Request, Topology};

    fn layout(num_cores: usize, num_nbors: usize, n: usize) -> Layout {
        Layout::plan(&Request {
            shape: Topology {
                num_cores,
                num_nbors,
            },
            core_node: "n1".into(),
            nodes: (1..=n).map(|i| format!("n{i}")).collect(),
            slots_per_node: None,
        })
        .unwrap()
    }

    #[test]
    fn srun_gets_one_line_per_rank_and_the_plugin_of_the_library() {
        let l = layout(2, 2, 3);
        let c = Command::new(&l, Launcher::Srun, Some(Mpi::Mpich), "/tmp/h", "sqmr", &[]).unwrap();
        assert_eq!(c.file.contents, "n1\nn1\nn2\nn3\nn2\nn3\n");
        assert_eq!(
            c.shell_line(),
            "SLURM_HOSTFILE=/tmp/h srun -n 6 --distribution=arbitrary --mpi=pmi2 \
             sqmr --num_cores=2 --num_nbors=2"
        );
        let c = Command::new(&l, Launcher::Srun, Some(Mpi::OpenMpi), "h", "sqmr", &[]).unwrap();
        assert!(c.argv.contains(&"--mpi=pmix".to_string()));
    }

    #[test]
    fn an_open_mpi_rankfile_numbers_slots_per_node() {
        let c = Command::new(
            &layout(2, 2, 3),
            Launcher::Mpirun,
            None,
            "ranks.txt",
            "./sqmr",
            &["--max_msgsize=64".to_string()],
        )
        .unwrap();
        assert_eq!(
            c.file.contents,
            "rank 0=n1 slot=0\nrank 1=n1 slot=1\nrank 2=n2 slot=0\nrank 3=n3 slot=0\n\
             rank 4=n2 slot=1\nrank 5=n3 slot=1\n"
        );
        assert_eq!(
            c.shell_line(),
            "mpirun -n 6 --rankfile ranks.txt ./sqmr --num_cores=2 --num_nbors=2 --max_msgsize=64"
        );
        assert!(c.env.is_empty());
    }

    #[test]
    fn a_hydra_machine_file_lists_runs_in_rank_order() {
        let c = Command::new(
            &layout(8, 4, 5),
            Launcher::Mpiexec,
            Some(Mpi::Mpich),
            "m",
            "sqmr",
            &[],
        )
        .unwrap();
        let lines: Vec<&str> = c.file.contents.lines().collect();
        assert_eq!(lines.len(), 1 + 32);
        assert_eq!(
            &lines[..6],
            ["n1:8", "n2:1", "n3:1", "n4:1", "n5:1", "n2:1"]
        );
        assert_eq!(
            c.shell_line(),
            "mpiexec -n 40 -f m sqmr --num_cores=8 --num_nbors=4"
        );
        // Neighbour runs never repeat the previous host, so hydra keeps them apart.
        let runs = layout(1, 1, 2).runs().len();
        assert_eq!(runs, 2);
    }

    #[test]
    fn a_launcher_of_the_other_library_is_refused() {
        let l = layout(1, 1, 2);
        let e = Command::new(&l, Launcher::Mpirun, Some(Mpi::Mpich), "f", "sqmr", &[]).unwrap_err();
        assert!(e.to_string().contains("use --launcher mpiexec"), "{e}");
        let e =
            Command::new(&l, Launcher::Mpiexec, Some(Mpi::OpenMpi), "f", "sqmr", &[]).unwrap_err();
        assert!(e.to_string().contains("Open MPI"), "{e}");
    }

    #[test]
    fn the_script_writes_the_file_then_runs() {
        let c = Command::new(
            &layout(1, 1, 2),
            Launcher::Srun,
            None,
            "my hosts",
            "sqmr",
            &[],
        )
        .unwrap();
        assert_eq!(
            c.script(),
            "cat > 'my hosts' <<'XYLEM:EOF'\nn1\nn2\nXYLEM:EOF\nSLURM_HOSTFILE='my hosts' \
             srun -n 2 --distribution=arbitrary sqmr --num_cores=1 --num_nbors=1\n"
        );
    }

    #[test]
    fn the_here_document_ends_at_a_line_not_in_the_file() {
        assert_eq!(delimiter("EOF\nn2\n"), "XYLEM:EOF");
        assert_eq!(
            delimiter("XYLEM:EOF\nXYLEM:EOF1\nXYLEM:EOF3\n"),
            "XYLEM:EOF2"
        );
        let mut c = Command::new(&layout(1, 1, 2), Launcher::Srun, None, "h", "sqmr", &[]).unwrap();
        c.file.contents = "XYLEM:EOF\nEOF\nlast without newline".into();
        let script = c.script();
        assert!(
            script.starts_with(
                "cat > h <<'XYLEM:EOF1'\nXYLEM:EOF\nEOF\nlast without newline\nXYLEM:EOF1\n"
            ),
            "{script}"
        );
    }

    #[test]
    fn quoting_leaves_plain_words_alone() {
        assert_eq!(shell_quote("--num_cores=8"), "--num_cores=8");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
    }

    #[test]
    fn names_parse_back() {
        for l in Launcher::ALL {
            assert_eq!(l.name().parse::<Launcher>().unwrap(), l);
        }
        assert!("ssh".parse::<Launcher>().is_err());
        assert_eq!("mpich".parse::<Mpi>().unwrap(), Mpi::Mpich);
        assert!("intel".parse::<Mpi>().is_err());
    }
}
