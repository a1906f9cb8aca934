//! The library stack a job loads on this host, and each library's parameter registry as
//! its own tool prints it ([`netsel::registry`]).
//!
//! The MPI library is the one the program loads (`ldd`), or the one beside the first
//! launcher on PATH; the transport libraries are those it and its network components
//! load. A tool is only believed for the very file the job loads: `ldd TOOL` must resolve
//! the library to the same path (another UCX's `ucx_info` on PATH would answer for a
//! library the job does not load). A library without such a tool is named as not checked.

use std::path::{Path, PathBuf};
use std::process::Command;

use netsel::flavour::Flavour;
use netsel::registry::{Family, Registry, Stack};

use crate::detect::run_tool;
use crate::library::library_of;

/// Reads the registries of the libraries `flavour`'s job loads here (`program`'s, when
/// named).
pub fn read(flavour: Flavour, program: Option<&Path>) -> Stack {
    let mut stack = Stack::default();
    let mpi = mpi_library(program);
    let mut loaded: Vec<PathBuf> = Vec::new();
    match flavour {
        Flavour::OpenMpi { .. } => {
            let tool = mpi
                .as_deref()
                .and_then(|lib| tool_reading(lib, "ompi_info", &[]))
                .or_else(|| beside_launcher("ompi_info"));
            match tool
                .as_deref()
                .and_then(|t| run(t, &["--all", "--parsable"]))
            {
                Some(text) => {
                    let version = field(&text, "ompi:version:full:").unwrap_or("?");
                    stack
                        .registries
                        .push(Registry::open_mpi(&format!("Open MPI {version}"), &text));
                    if let Some(dir) = field(&text, "path:pkglibdir:") {
                        for c in ["mca_pml_ucx.so", "mca_osc_ucx.so", "mca_mtl_ofi.so"] {
                            loaded.extend(linked(&Path::new(dir).join(c)));
                        }
                    }
                }
                None => stack.unread.push((
                    Family::OpenMpi,
                    "no ompi_info of this Open MPI answered".into(),
                )),
            }
        }
        Flavour::IntelMpi => {
            let tool = beside_launcher("impi_info").or_else(|| {
                mpi.as_deref()
                    .and_then(|lib| tool_reading(lib, "impi_info", &[]))
            });
            match tool.as_deref().and_then(|t| run(t, &["-a", "-e"])) {
                Some(text) => stack.registries.push(Registry::intel_mpi(
                    &format!(
                        "Intel MPI {}",
                        version_beside(tool.as_deref(), "mpiexec", &["--version"], "Version ")
                    ),
                    &text,
                )),
                None => stack
                    .unread
                    .push((Family::IntelMpi, "no impi_info answered".into())),
            }
            // Its mlx provider is UCX.
            if let Some(dir) = std::env::var_os("FI_PROVIDER_PATH") {
                loaded.extend(linked(&Path::new(&dir).join("libmlx-fi.so")));
            }
        }
        Flavour::Mpich { .. } => {
            let tool = mpi
                .as_deref()
                .and_then(|lib| tool_reading(lib, "mpivars", &[]));
            match tool.as_deref().and_then(|t| run(t, &[])) {
                Some(text) => stack.registries.push(Registry::mpich(
                    &format!(
                        "MPICH {}",
                        version_beside(tool.as_deref(), "mpichversion", &[], "MPICH Version:")
                    ),
                    &text,
                )),
                None => stack
                    .unread
                    .push((Family::Mpich, "no mpivars of this MPICH answered".into())),
            }
        }
        Flavour::Mvapich2 | Flavour::CrayMpich => {}
    }
    if let Some(lib) = &mpi {
        loaded.extend(linked(lib));
    }
    transport(&mut stack, &loaded, "libucp.so", "ucx_info", Family::Ucx);
    transport(
        &mut stack,
        &loaded,
        "libfabric.so",
        "fi_info",
        Family::Libfabric,
    );
    stack
}

/// The registry of the transport library `stem` among `loaded`, read with its `tool`.
fn transport(stack: &mut Stack, loaded: &[PathBuf], stem: &str, tool: &str, family: Family) {
    let Some(lib) = loaded.iter().find(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(stem))
    }) else {
        return;
    };
    let read = match tool_reading(lib, tool, &["libfabric"]) {
        Some(tool) => match family {
            Family::Ucx => run(&tool, &["-v"])
                .zip(run(&tool, &["-c", "-f"]))
                .map(|(v, c)| Registry::ucx(&format!("UCX {}", ucx_version(&v)), &c)),
            _ => run(&tool, &["--version"])
                .zip(run(&tool, &["-e"]))
                .zip(run(&tool, &["-l"]))
                .map(|((v, e), l)| {
                    let version = field(&v, "libfabric: ").unwrap_or("?");
                    Registry::libfabric(&format!("libfabric {version}"), &e, &l)
                }),
        }
        .ok_or_else(|| format!("{} did not answer", tool.display())),
        // No tool reads this copy: the library is asked in a process of its own.
        None => in_process(lib, family),
    };
    match read {
        Ok(r) => stack.registries.push(r),
        Err(why) => stack.unread.push((family, why)),
    }
}

/// The registry of `lib` read in-process by `xylem net registry-of` (a child, so that a
/// library that crashes or hangs costs only its registry).
fn in_process(lib: &Path, family: Family) -> Result<Registry, String> {
    let kind = if family == Family::Ucx {
        "ucx"
    } else {
        "libfabric"
    };
    let me = std::env::current_exe().map_err(|e| format!("cannot tell where xylem is: {e}"))?;
    let (Some(me), Some(path)) = (me.to_str(), lib.to_str()) else {
        return Err(format!("{} is not a UTF-8 path", lib.display()));
    };
    let text = run_tool(&[me, "net", "registry-of", kind, path])
        .filter(|t| !t.starts_with("xylem:"))
        .ok_or_else(|| {
            format!(
                "no tool beside the {family} the job loads, {}, and it could not be read in-process",
                lib.display()
            )
        })?;
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
fn mpi_library(program: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = program.and_then(crate::library::program_path) {
        if let Ok(Some(lib)) = library_of(&p) {
            return Some(lib);
        }
    }
    ["ompi_info", "impi_info", "mpivars", "mpichversion"]
        .iter()
        .filter_map(|t| beside_launcher(t))
        .flat_map(|t| linked(&t))
        .find(|l| {
            l.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(crate::library::is_mpi_library)
        })
}

/// The tool `name` beside the first launcher on PATH.
fn beside_launcher(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .find(|dir| ["mpirun", "mpiexec"].iter().any(|l| dir.join(l).is_file()))
        .map(|d| d.join(name))
        .filter(|t| t.is_file())
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
            l.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{stem}.so")))
                && std::fs::canonicalize(l).ok().as_ref() == Some(&target)
        })
    })
}

/// The libraries `object` loads, as `ldd` resolves them here.
fn linked(object: &Path) -> Vec<PathBuf> {
    if !object.is_file() {
        return Vec::new();
    }
    let Ok(out) = Command::new("ldd").arg(object).output() else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().split_once(" => "))
        .map(|(_, rest)| rest.split(" (").next().unwrap_or_default().trim())
        .filter(|p| p.starts_with('/'))
        .map(PathBuf::from)
        .collect()
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
