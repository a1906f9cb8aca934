//! The library stack a job loads on this host, and each library's parameter registry
//! ([`crate::registry`]) as the library itself gives it.
//!
//! The MPI library is the one the program loads (`ldd`), or the one beside the first
//! launcher on PATH; the transport libraries are those it and its network components
//! load. A tool is only believed for the very file the job loads: `ldd TOOL` must resolve
//! the library to the same path (another UCX's `ucx_info` on PATH would answer for a
//! library the job does not load). libfabric, and a UCX without its tool (the copies MPI
//! wheels bundle), are asked through their own API ([`libprobe`]) in a child process —
//! this program again, started with [`REGISTRY_REQUEST_ENV`] — never in the caller: a
//! libfabric initialized before the job's settings are in the environment keeps the
//! values it read (a rank's `FI_TCP_IFACE` would be lost), and a library that crashes
//! costs only its registry. The readers run side by side: the first rank of each host
//! pays for the slowest, not their sum.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::flavour::Flavour;
use crate::registry::{Family, Registry, Stack};

/// The variable that starts a program of the suite as a registry reader instead of its
/// run: `KIND PATH` (`ucx /opt/x/libucp.so.0`, `libfabric /opt/x/libfabric.so.1`). Every
/// program calls [`answer_registry_request`] first in `main`.
pub const REGISTRY_REQUEST_ENV: &str = "XYLEM_REGISTRY_OF";

/// When this process was started to read a transport library's registry
/// ([`REGISTRY_REQUEST_ENV`]), prints it ([`libprobe`]) and leaves: 0 when read, 1 with
/// the reason on stderr. Otherwise returns at once. Call first in `main`.
pub fn answer_registry_request() {
    let Some(request) = std::env::var_os(REGISTRY_REQUEST_ENV) else {
        return;
    };
    let request = request.to_string_lossy().into_owned();
    let (kind, path) = request.split_once(' ').unwrap_or((&request, ""));
    let read = match kind {
        "ucx" => libprobe::ucx(Path::new(path)).map_err(|e| e.to_string()),
        "libfabric" => libprobe::libfabric(Path::new(path)).map_err(|e| e.to_string()),
        other => Err(format!(
            "{REGISTRY_REQUEST_ENV}: unknown library kind `{other}` (ucx or libfabric)"
        )),
    };
    use std::io::Write;
    let code = match read {
        Ok(text) => match std::io::stdout().write_all(text.as_bytes()) {
            Ok(()) => 0,
            Err(_) => 1,
        },
        Err(why) => {
            let _ = writeln!(std::io::stderr(), "{why}");
            1
        }
    };
    std::process::exit(code)
}

/// Reads the registries of the libraries `flavour`'s job loads here: the MPI library
/// `mpi` (see [`mpi_library`], [`mapped_mpi_library`]) and the transports it loads.
pub fn read(flavour: Flavour, mpi: Option<PathBuf>, prober: &Path) -> Stack {
    let mut stack = read_loaded(flavour, mpi, prober);
    // A library that lacks a parameter, for the tests: names taken out of every registry
    // as if the library did not have them (no real library here lacks what the TCP path
    // sets).
    if let Ok(names) = std::env::var(TEST_DROP_ENV) {
        for r in &mut stack.registries {
            for n in names.split(',') {
                r.params.remove(n);
            }
        }
    }
    stack
}

/// The test hook of [`read`]: a comma list of parameter names to take out of the
/// registries read.
pub const TEST_DROP_ENV: &str = "XYLEM_TEST_REGISTRY_DROP";

fn read_loaded(flavour: Flavour, mpi: Option<PathBuf>, prober: &Path) -> Stack {
    let direct = mpi.as_deref().map(linked).unwrap_or_default();
    // The MPI library's tool and the transports the library links itself are read side
    // by side (each is a process of its own that takes a few tenths of a second); the
    // transports that only its network components load are known once the tool has said
    // where they are.
    let (own, mut transports) = std::thread::scope(|s| {
        let own = s.spawn(|| mpi_registry(flavour, mpi.as_deref()));
        let transports = read_transports(&direct, prober, &[]);
        (own.join().unwrap_or_default(), transports)
    });
    let seen: Vec<Family> = transports.iter().map(|(f, _)| *f).collect();
    transports.extend(read_transports(&own.components, prober, &seen));
    transports.sort_by_key(|(f, _)| *f);
    let mut stack = Stack::default();
    match own.registry {
        Some(Ok(r)) => stack.registries.push(r),
        Some(Err(unread)) => stack.unread.push(unread),
        None => {}
    }
    for (family, read) in transports {
        match read {
            Ok(r) => stack.registries.push(r),
            Err(why) => stack.unread.push((family, why)),
        }
    }
    stack
}

/// What the MPI library's own tool said: its registry (none for a library with no reader)
/// and the libraries its network components load.
#[derive(Default)]
struct OwnRegistry {
    registry: Option<Result<Registry, (Family, String)>>,
    components: Vec<PathBuf>,
}

/// The variable that makes Intel MPI load another libfabric than its own, in `MPI_Init`
/// (`I_MPI_OFI_LIBRARY=/opt/cray/libfabric/…/libfabric.so.1`).
pub const INTEL_OFI_LIBRARY_ENV: &str = "I_MPI_OFI_LIBRARY";

/// The registry of the MPI library `mpi` of `flavour`, read with its own tool.
fn mpi_registry(flavour: Flavour, mpi: Option<&Path>) -> OwnRegistry {
    let mut own = OwnRegistry::default();
    match flavour {
        Flavour::OpenMpi { .. } => {
            let tool = mpi
                .and_then(|lib| tool_reading(lib, "ompi_info", &[]))
                .or_else(|| beside_launcher("ompi_info"));
            own.registry = Some(
                match tool
                    .as_deref()
                    .and_then(|t| run(t, &["--all", "--parsable"]))
                {
                    Some(text) => {
                        let version = field(&text, "ompi:version:full:").unwrap_or("?");
                        if let Some(dir) = field(&text, "path:pkglibdir:") {
                            for c in ["mca_pml_ucx.so", "mca_osc_ucx.so", "mca_mtl_ofi.so"] {
                                own.components.extend(linked(&Path::new(dir).join(c)));
                            }
                        }
                        Ok(Registry::open_mpi(&format!("Open MPI {version}"), &text))
                    }
                    None => Err((
                        Family::OpenMpi,
                        "no ompi_info of this Open MPI answered".into(),
                    )),
                },
            );
        }
        Flavour::IntelMpi => {
            let tool = beside_launcher("impi_info")
                .or_else(|| mpi.and_then(|lib| tool_reading(lib, "impi_info", &[])));
            own.registry = Some(match tool.as_deref().and_then(|t| run(t, &["-a", "-e"])) {
                Some(text) => Ok(Registry::intel_mpi(
                    &format!(
                        "Intel MPI {}",
                        version_beside(tool.as_deref(), "mpiexec", &["--version"], "Version ")
                    ),
                    &text,
                )),
                None => Err((Family::IntelMpi, "no impi_info answered".into())),
            });
            // The libfabric it loads in MPI_Init: the one I_MPI_OFI_LIBRARY names, else its
            // own (found through its providers, which link it).
            if let Some(named) = std::env::var_os(INTEL_OFI_LIBRARY_ENV) {
                let named = PathBuf::from(named);
                if named.is_file() {
                    own.components.push(named);
                }
            }
            // Its mlx provider is UCX.
            if let Some(dir) = std::env::var_os("FI_PROVIDER_PATH") {
                own.components
                    .extend(linked(&Path::new(&dir).join("libmlx-fi.so")));
            }
        }
        Flavour::Mpich { .. } => {
            let tool = mpi.and_then(|lib| tool_reading(lib, "mpivars", &[]));
            own.registry = Some(match tool.as_deref().and_then(|t| run(t, &[])) {
                Some(text) => Ok(Registry::mpich(
                    &format!(
                        "MPICH {}",
                        version_beside(tool.as_deref(), "mpichversion", &[], "MPICH Version:")
                    ),
                    &text,
                )),
                None => Err((Family::Mpich, "no mpivars of this MPICH answered".into())),
            });
        }
        Flavour::Mvapich2 | Flavour::CrayMpich => {}
    }
    own
}

/// The transport libraries (UCX, libfabric) among `loaded`, but for the families in
/// `skip`, each read in a thread of its own.
fn read_transports(
    loaded: &[PathBuf],
    prober: &Path,
    skip: &[Family],
) -> Vec<(Family, Result<Registry, String>)> {
    let wanted = [
        ("libucp.so", Family::Ucx),
        ("libfabric.so", Family::Libfabric),
    ];
    std::thread::scope(|s| {
        let readers: Vec<_> = wanted
            .into_iter()
            .filter(|(_, family)| !skip.contains(family))
            .filter_map(|(stem, family)| {
                let lib = loaded
                    .iter()
                    .find(|p| file_name_is(p, |n| n.starts_with(stem)))?;
                Some((family, s.spawn(move || read_transport(lib, family, prober))))
            })
            .collect();
        readers
            .into_iter()
            .map(|(family, reader)| {
                let read = reader
                    .join()
                    .unwrap_or_else(|_| Err("its reader failed".into()));
                (family, read)
            })
            .collect()
    })
}

/// The registry of the transport library `lib`. UCX's `ucx_info` answers at once and is
/// used when it reads this very file. libfabric is always asked through its API, in one
/// child: `fi_info` would load and start every provider once for its parameters and once
/// more for its providers; `fi_info --version`, beside it, only names the release
/// (`1.20.1-impi`), which the API does not (`1.20`).
fn read_transport(lib: &Path, family: Family, prober: &Path) -> Result<Registry, String> {
    match family {
        Family::Ucx => match tool_reading(lib, "ucx_info", &[]) {
            Some(tool) => run(&tool, &["-v"])
                .zip(run(&tool, &["-c", "-f"]))
                .map(|(v, c)| Registry::ucx(&format!("UCX {}", ucx_version(&v)), &c))
                .ok_or_else(|| format!("{} did not answer", tool.display())),
            None => asked_through_its_api(lib, family, prober),
        },
        _ => std::thread::scope(|s| {
            let release = s.spawn(|| {
                let tool = tool_reading(lib, "fi_info", &["libfabric"])?;
                let text = run(&tool, &["--version"])?;
                field(&text, "libfabric: ").map(str::to_string)
            });
            let mut registry = asked_through_its_api(lib, family, prober)?;
            if let Ok(Some(release)) = release.join() {
                registry.name = format!("libfabric {release}");
            }
            Ok(registry)
        }),
    }
}

/// The registry of `lib` read through its API by `prober` (this program) in a child.
fn asked_through_its_api(lib: &Path, family: Family, prober: &Path) -> Result<Registry, String> {
    let kind = if family == Family::Ucx {
        "ucx"
    } else {
        "libfabric"
    };
    let text = match (prober.to_str(), lib.to_str()) {
        (Some(exe), Some(path)) => {
            run_tool_with(&[exe], &[(REGISTRY_REQUEST_ENV, &format!("{kind} {path}"))])
                .filter(|t| t.starts_with("libfabric: ") || t.starts_with("# Version "))
                .ok_or_else(|| "the child that reads it failed".to_string())
        }
        _ => Err(format!("{} is not a UTF-8 path", lib.display())),
    }
    .map_err(|why| format!("{family} {} could not be read: {why}", lib.display()))?;
    let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
    Ok(match family {
        Family::Ucx => Registry::ucx(&format!("UCX {}", ucx_version(first)), rest),
        _ => {
            let (env, list) = rest
                .split_once(libprobe::PROVIDERS_MARK)
                .unwrap_or((rest, ""));
            Registry::libfabric(
                &format!(
                    "libfabric {}",
                    first.strip_prefix("libfabric: ").unwrap_or("?")
                ),
                env,
                list,
            )
        }
    })
}

/// The version of `ucx_info -v`'s `# Version 1.13.1` line.
fn ucx_version(text: &str) -> &str {
    text.lines()
        .find_map(|l| l.strip_prefix("# Version "))
        .map(str::trim)
        .unwrap_or("?")
}

/// The MPI library of `program`, or else the one the MPI tools beside the first launcher
/// on PATH load.
pub fn mpi_library(program: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = program.and_then(program_path) {
        if let Ok(Some(lib)) = library_of(&p) {
            return Some(lib);
        }
    }
    ["ompi_info", "impi_info", "mpivars", "mpichversion"]
        .iter()
        .filter_map(|t| beside_launcher(t))
        .flat_map(|t| linked(&t))
        .find(|l| file_name_is(l, is_mpi_library))
}

/// The MPI library this process has mapped (`/proc/self/maps`): a benchmark's own,
/// before `MPI_Init` too (the dynamic loader mapped it at start).
pub fn mapped_mpi_library() -> Option<PathBuf> {
    mapped_files()
        .into_iter()
        .find(|p| file_name_is(p, is_mpi_library))
}

/// The files this process has mapped (`/proc/self/maps`), in the order of their mappings;
/// none when it cannot be read.
pub(crate) fn mapped_files() -> Vec<PathBuf> {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .map(PathBuf::from)
        .collect()
}

/// The first directory on PATH that holds an MPI launcher (`mpirun`, `mpiexec`).
pub fn launcher_dir() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .find(|dir| ["mpirun", "mpiexec"].iter().any(|l| dir.join(l).is_file()))
}

/// The tool `name` beside the first launcher on PATH.
fn beside_launcher(name: &str) -> Option<PathBuf> {
    launcher_dir().map(|d| d.join(name)).filter(|t| t.is_file())
}

/// Whether `path`'s file name is UTF-8 and passes `test`.
pub(crate) fn file_name_is(path: &Path, test: impl FnOnce(&str) -> bool) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(test)
}

/// The tool `name` that loads `lib` itself: looked for in the `bin` folders above the
/// library (and their `subdirs`), then on PATH, and believed only when `ldd` resolves
/// the library's file name to the same file.
fn tool_reading(lib: &Path, name: &str, subdirs: &[&str]) -> Option<PathBuf> {
    let file = lib.file_name()?.to_str()?;
    let stem = file.split(".so").next().unwrap_or(file);
    let target = std::fs::canonicalize(lib).ok()?;
    let mut candidates: Vec<PathBuf> = Vec::new();
    for up in lib.ancestors().skip(1).take(4) {
        candidates.push(up.join("bin").join(name));
        for s in subdirs {
            candidates.push(up.join("bin").join(s).join(name));
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join(name)));
    }
    candidates.into_iter().filter(|c| c.is_file()).find(|c| {
        linked(c).iter().any(|l| {
            file_name_is(l, |n| n.starts_with(&format!("{stem}.so")))
                && std::fs::canonicalize(l).ok().as_ref() == Some(&target)
        })
    })
}

/// The libraries `object` loads, as `ldd` resolves them here.
pub(crate) fn linked(object: &Path) -> Vec<PathBuf> {
    if !object.is_file() {
        return Vec::new();
    }
    let Ok(out) = Command::new("ldd").arg(object).output() else {
        return Vec::new();
    };
    ldd_entries(&String::from_utf8_lossy(&out.stdout))
        .map(|(_, path)| path)
        .filter(|p| p.starts_with('/'))
        .map(PathBuf::from)
        .collect()
}

/// `ldd`'s `NAME => PATH (ADDRESS)` lines as `(NAME, PATH)`; PATH is `not found` for a
/// library the loader cannot find.
fn ldd_entries(text: &str) -> impl Iterator<Item = (&str, &str)> {
    text.lines().filter_map(|l| {
        let (name, rest) = l.trim().split_once(" => ")?;
        Some((name, rest.split(" (").next().unwrap_or_default().trim()))
    })
}

/// Runs `tool args` (bounded); its output.
fn run(tool: &Path, args: &[&str]) -> Option<String> {
    let t = tool.to_str()?;
    let mut words = vec![t];
    words.extend_from_slice(args);
    run_tool(&words)
}

/// The rest of the first line of `text` that begins with `prefix`.
fn field<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .map(str::trim)
}

/// The version that `command args`, beside `tool`, prints after `marker` (`mpichversion`'s
/// `MPICH Version:  4.0.2`, `mpiexec --version`'s `Version 2021.13`), or `?`.
fn version_beside(tool: Option<&Path>, command: &str, args: &[&str], marker: &str) -> String {
    tool.and_then(Path::parent)
        .map(|dir| dir.join(command))
        .and_then(|c| run(&c, args))
        .and_then(|text| {
            let at = text.find(marker)? + marker.len();
            text[at..].split_whitespace().next().map(str::to_string)
        })
        .unwrap_or_else(|| "?".into())
}

/// How long a tool may take.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(5);

/// Runs a tool with a timeout ([`TOOL_TIMEOUT`]); its stdout and stderr, or `None`.
pub fn run_tool(cmd: &[&str]) -> Option<String> {
    run_tool_with(cmd, &[])
}

/// [`run_tool`] with `env` added to the tool's environment.
fn run_tool_with(cmd: &[&str], env: &[(&str, &str)]) -> Option<String> {
    let mut command = Command::new(cmd[0]);
    command.envs(env.iter().copied());
    // A tool run from inside a rank must not take the rank's place with its launcher: an
    // MPI tool (mpivars, impi_info) would talk to the launcher's PMI server on the
    // rank's socket, and the rank's own MPI_Init would then wait for ever.
    for (key, _) in std::env::vars_os() {
        if key.to_str().is_some_and(is_launcher_variable) {
            command.env_remove(&key);
        }
    }
    let mut child = command
        .args(&cmd[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    // Drain both pipes while waiting, so a chatty tool cannot block on a full pipe.
    let readers: Vec<_> = [
        child
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .flatten()
    .map(|mut r| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    })
    .collect();
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() < TOOL_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let mut text = String::new();
    for r in readers {
        text.push_str(&r.join().ok()?);
    }
    Some(text)
}

/// Whether `name` is a variable by which a launcher hands a rank its place in the job
/// (PMI, PMIx, hydra, Open MPI's runtime, Slurm's step), which a tool must not inherit.
/// A user's own MCA parameters stay: the job reads them too.
fn is_launcher_variable(name: &str) -> bool {
    const PREFIXES: [&str; 12] = [
        "PMI_",
        "PMIX_",
        "PMI2_",
        "HYDRA_",
        "HYDI_",
        "MPI_LOCAL",
        "OMPI_COMM_WORLD",
        "OMPI_UNIVERSE",
        "OMPI_MCA_orte_",
        "OMPI_MCA_ess",
        "OMPI_MCA_pmix",
        "SLURM_STEP",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
        || matches!(
            name,
            "OMPI_FILE_LOCATION" | "SLURM_PROCID" | "SLURM_LOCALID"
        )
}

/// The program as the shell would find it: a name without `/` is looked up on PATH.
pub fn program_path(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 || program.is_absolute() {
        return Some(program.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// True for the file name of an MPI library proper (not its Fortran, C++ or Java
/// bindings): `libmpi.so.40`, `libmpich.so.12`, Cray's `libmpi_cray.so.12` or
/// `libmpi_gnu_123.so.12`.
pub fn is_mpi_library(name: &str) -> bool {
    name.starts_with("libmpi.so")
        || name.starts_with("libmpich.so")
        || ["cray", "gnu", "intel", "amd", "nvidia", "aocc"]
            .iter()
            .any(|c| name.starts_with(&format!("libmpi_{c}")))
}

/// The MPI library `program` loads, from `ldd`'s `NAME => PATH (ADDRESS)` lines; `None`
/// when it loads none (not an MPI program, or a static one). An error when `ldd` cannot
/// read the program or names an MPI library it cannot find.
pub fn library_of(program: &Path) -> Result<Option<PathBuf>, String> {
    let out = Command::new("ldd")
        .arg(program)
        .output()
        .map_err(|e| format!("cannot run ldd on {}: {e}", program.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "ldd cannot read {}: {}",
            program.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    for (name, path) in ldd_entries(&text) {
        if !is_mpi_library(name) {
            continue;
        }
        if path == "not found" || path.is_empty() {
            return Err(format!(
                "{} needs {name}, which the loader does not find here (LD_LIBRARY_PATH?)",
                program.display()
            ));
        }
        return Ok(Some(PathBuf::from(path)));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_does_not_inherit_a_ranks_place_in_its_job() {
        for launcher in [
            "PMI_FD",
            "PMI_RANK",
            "PMIX_RANK",
            "MPI_LOCALRANKID",
            "OMPI_COMM_WORLD_RANK",
            "OMPI_MCA_orte_hnp_uri",
            "OMPI_MCA_ess_base_jobid",
            "HYDRA_CONTROL_FD",
            "SLURM_STEP_ID",
        ] {
            assert!(is_launcher_variable(launcher), "{launcher}");
        }
        for kept in [
            "OMPI_MCA_btl",
            "UCX_TLS",
            "FI_PROVIDER",
            "PATH",
            "LD_LIBRARY_PATH",
            "I_MPI_ROOT",
        ] {
            assert!(!is_launcher_variable(kept), "{kept}");
        }
    }

    #[test]
    fn only_the_mpi_library_itself_is_taken() {
        for yes in [
            "libmpi.so.40",
            "libmpich.so.12",
            "libmpi_cray.so.12",
            "libmpi_gnu_123.so.12",
        ] {
            assert!(is_mpi_library(yes), "{yes}");
        }
        for no in [
            "libmpi_mpifh.so.40",
            "libmpi_cxx.so.40",
            "libmpifort.so.12",
            "libm.so.6",
        ] {
            assert!(!is_mpi_library(no), "{no}");
        }
    }
}
