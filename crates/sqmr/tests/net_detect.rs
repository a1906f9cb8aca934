//! `xylem net resolve --program PROGRAM` takes the MPI flavour from the library PROGRAM
//! loads, on each of the five installations — also under MPICH 4, where Debian's Open
//! MPI `ompi_info` comes first on PATH and answered before; every fabric's settings held
//! against the registries of the libraries loaded; the libfabric release the settings
//! follow; and the TCP path's settings read, by each library's verbose switch's word.

use std::path::{Path, PathBuf};
use std::process::Command;

use netns::{build_pingpong, Installation};

fn xylem() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_sqmr")).with_file_name("xylem")
}

#[test]
fn the_library_a_program_loads_decides_the_flavour() {
    let mpi = Installation::from_env();
    let expected = match mpi {
        Installation::OpenMpi4 => "openmpi-4.1",
        Installation::Mpich4 | Installation::Mpich5 => "mpich-ucx",
        Installation::OpenMpi5 => "openmpi-5.0",
        Installation::IntelMpi => "intel",
    };
    let dir = tempfile::tempdir().unwrap();
    let program = build_pingpong(mpi, dir.path());
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../netsel/tests/fixtures/ib-ipoib");
    let out = Command::new(xylem())
        .args(["net", "resolve", "--enable", "eth0", "--sysfs"])
        .arg(&fixture)
        .arg("--program")
        .arg(&program)
        .env_remove("XYLEM_MPI")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stderr}", mpi.name());
    assert!(
        stdout.starts_with(&format!("host node-ib: --enable eth0 for {expected}\n")),
        "{}: {stdout}",
        mpi.name()
    );
    assert!(
        stdout.contains(&format!(
            "note: MPI flavour {expected} from the MPI library {} loads",
            program.display()
        )),
        "{}: {stdout}",
        mpi.name()
    );
}

/// One row of FABRICS.md as `xylem net resolve --format json` planned it for this
/// installation's program, with its registry check.
struct Row {
    fabric: &'static str,
    selection: &'static str,
    /// `None`: the flavour refuses the selection on that fabric.
    report: Option<serde_json::Value>,
}

impl Row {
    fn settings(&self) -> Vec<String> {
        self.report.as_ref().map_or_else(Vec::new, |r| {
            r["translation"]["settings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    format!(
                        "{}={}",
                        s["env"].as_str().unwrap(),
                        s["value"].as_str().unwrap()
                    )
                })
                .collect()
        })
    }

    fn registry(&self) -> &serde_json::Value {
        &self.report.as_ref().expect("a planned row")["registry"]
    }

    /// The settings the check found the library will not read as written.
    fn findings(&self) -> Vec<String> {
        self.report.as_ref().map_or_else(Vec::new, |_| {
            self.registry()["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    format!(
                        "{}: {} {}",
                        f["setting"].as_str().unwrap(),
                        f["library"].as_str().unwrap(),
                        f["problem"].as_str().unwrap()
                    )
                })
                .collect()
        })
    }

    fn finds(&self, text: &str) -> bool {
        self.findings().iter().any(|f| f.contains(text))
    }
}

/// Every fabric of FABRICS.md planned for this installation's own program (its fixture
/// host's devices, this machine's libraries), two at a time.
fn plan_every_fabric(mpi: Installation) -> Vec<Row> {
    let program = Path::new(env!("CARGO_BIN_EXE_sqmr"));
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../netsel/tests/fixtures");
    let plan = |&(fabric, fixture, selection): &(&'static str, &'static str, &'static str)| {
        let out = Command::new(xylem())
            .args(["net", "resolve", "--format", "json", "--sysfs"])
            .arg(fixtures.join(fixture))
            .arg("--program")
            .arg(program)
            .args(selection.split_whitespace())
            .env_remove("XYLEM_MPI")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let report = match out.status.code() {
            Some(0) => Some(serde_json::from_slice(&out.stdout).unwrap()),
            // A flavour that has no path to the fabric refuses it, saying so.
            Some(1) if stderr.contains("cannot reach") || stderr.contains("has no `") => None,
            _ => panic!(
                "{}: {fabric} ({selection}): {:?}\n{stderr}",
                mpi.name(),
                out.status
            ),
        };
        Row {
            fabric,
            selection,
            report,
        }
    };
    let rows = netsel::table::FABRICS;
    let (first, second) = rows.split_at(rows.len() / 2);
    std::thread::scope(|s| {
        let other = s.spawn(|| second.iter().map(plan).collect::<Vec<_>>());
        let mut all: Vec<Row> = first.iter().map(plan).collect();
        all.extend(other.join().unwrap());
        all
    })
}

/// The rows as a table: settings checked against a registry, and what was found.
fn verdicts(mpi: Installation, rows: &[Row]) -> String {
    let mut out = format!(
        "| fabric ({}) | settings | checked | not read as written |\n|---|---|---|---|\n",
        mpi.name()
    );
    for r in rows {
        let (checked, found) = match &r.report {
            None => ("refused".to_string(), String::new()),
            Some(_) => (
                r.registry()["checked"].to_string(),
                r.findings().join("<br>"),
            ),
        };
        out.push_str(&format!(
            "| {} (`{}`) | {} | {checked} | {found} |\n",
            r.fabric,
            r.selection,
            r.settings().len()
        ));
    }
    out
}

#[test]
fn every_fabric_setting_is_checked_against_the_registries_of_the_libraries_loaded() {
    let mpi = Installation::from_env();
    let rows = plan_every_fabric(mpi);
    let table = verdicts(mpi, &rows);
    eprintln!("{table}");
    let tcp = &rows[0];
    assert_eq!(tcp.fabric, "Ethernet, TCP");
    // The TCP path, proven by bytes on every installation, is read as written.
    assert_eq!(tcp.findings(), Vec::<String>::new(), "{table}");
    // Every setting of it checked, on all five.
    let checked = tcp.registry()["checked"].as_u64().unwrap() as usize;
    assert!(checked == tcp.settings().len(), "{table}");
    let row = |fabric: &str, selection: &str| {
        rows.iter()
            .find(|r| r.fabric == fabric && r.selection == selection)
            .unwrap_or_else(|| panic!("no row {fabric}"))
    };
    match mpi {
        Installation::OpenMpi4 => {
            // Debian's Open MPI 4.1.4: openib knows only the udcm CPC, so iWARP goes
            // through libfabric's verbs, every setting of which this Open MPI and its
            // libfabric 1.17 read; that libfabric has neither an efa nor a cxi provider,
            // nor FI_EFA_IFACE (from 2.0).
            let iwarp = row("iWARP", "--enable iwarp");
            assert!(
                iwarp
                    .settings()
                    .contains(&"FI_PROVIDER=verbs;ofi_rxm".to_string()),
                "{table}"
            );
            assert!(iwarp.findings().is_empty(), "{table}");
            // UCX 1.13 reads UCX_IB_PKEY as the name every IB transport inherits.
            let pkey = row("InfiniBand partition (ib0.8001)", "--enable ib0.8001");
            assert!(pkey.settings().contains(&"UCX_IB_PKEY=0x1".to_string()));
            assert!(!pkey.finds("UCX_IB_PKEY"), "{table}");
            let efa = row("AWS EFA", "--enable efa");
            assert!(efa.finds("FI_EFA_IFACE=efa_0"), "{table}");
            assert!(efa.finds("has no provider efa"), "{table}");
        }
        Installation::IntelMpi => {
            // Intel MPI 2021.13 loads its own libfabric 1.20.1-impi: no cxi, no opx.
            let ss = row("HPE Slingshot-11", "--enable slingshot");
            assert!(
                ss.finds("I_MPI_OFI_PROVIDER=cxi: libfabric 1.20.1-impi has no provider cxi"),
                "{table}"
            );
            let opx = row("Omni-Path Express (OPX)", "--enable opa:opx");
            assert!(opx.finds("has no provider opx"), "{table}");
        }
        Installation::Mpich5 | Installation::OpenMpi5 => {
            // The wheels bundle UCX 1.20.1 and libfabric 2.5 without ucx_info or
            // fi_info: both are read through their APIs, by a child (XYLEM_REGISTRY_OF).
            let libraries = tcp.registry()["libraries"].to_string();
            assert!(libraries.contains("\"UCX 1.20.1\""), "{libraries}");
            if mpi == Installation::OpenMpi5 {
                assert!(libraries.contains("\"libfabric 2.5\""), "{libraries}");
                // FI_EFA_IFACE exists from libfabric 2.0 (1.17 lacks it: Open MPI 4 above).
                let efa = row("AWS EFA", "--enable efa");
                assert!(efa
                    .settings()
                    .iter()
                    .any(|s| s.starts_with("FI_EFA_IFACE=")));
                assert!(efa.findings().is_empty(), "{table}");
            }
        }
        Installation::Mpich4 => {}
    }
}

/// `xylem net resolve --format json` of `--enable` this host's first interface for this
/// installation's sqmr, on the live host, its environment changed by `configure`: the
/// report.
fn resolve_live(mpi: Installation, configure: impl FnOnce(&mut Command)) -> serde_json::Value {
    let mut cmd = Command::new(xylem());
    cmd.args(["net", "resolve", "--format", "json", "--program"])
        .arg(env!("CARGO_BIN_EXE_sqmr"))
        .args(["--enable", &first_interface()])
        .env_remove("XYLEM_MPI");
    configure(&mut cmd);
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{}: {stderr}", mpi.name());
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The first interface of this host with an IPv4 address other than loopback.
fn first_interface() -> String {
    let out = Command::new("ip")
        .args(["-4", "-o", "addr"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .find(|name| *name != "lo")
        .expect("an interface with an IPv4 address besides lo")
        .to_string()
}

#[test]
fn a_setting_the_loaded_library_lacks_is_named_and_refused_under_strict() {
    let mpi = Installation::from_env();
    let iface = first_interface();
    // The interface setting of each library's TCP path, taken out of its registry (the
    // test hook of netsel::stack): as if the library the ranks load did not have it.
    let (lacking, shown) = match mpi {
        Installation::OpenMpi4 | Installation::OpenMpi5 => {
            ("btl_tcp_if_include", "OMPI_MCA_btl_tcp_if_include")
        }
        Installation::Mpich4 | Installation::Mpich5 => ("UCX_NET_DEVICES", "UCX_NET_DEVICES"),
        Installation::IntelMpi => ("FI_TCP_IFACE", "FI_TCP_IFACE"),
    };
    let sqmr = Path::new(env!("CARGO_BIN_EXE_sqmr"));
    let job = mpitest::launch_with_env(
        mpi,
        2,
        sqmr,
        &[
            "--enable",
            &iface,
            "--strict",
            "--num_iters",
            "5",
            "--max_msgsize",
            "8",
        ],
        &[(netsel::stack::TEST_DROP_ENV, lacking)],
        std::time::Duration::from_secs(60),
    );
    assert_eq!(job.code, Some(2), "{}: {job:#?}", mpi.name());
    let said = format!("{shown}={iface}");
    let line = job
        .stderr
        .lines()
        .find(|l| l.starts_with("WARNING network selection: host ") && l.contains(&said))
        .unwrap_or_else(|| panic!("{}: no warning on {said}: {}", mpi.name(), job.stderr));
    assert!(
        line.contains(&format!(
            "has no parameter {lacking}; the library ignores it"
        )),
        "{line}"
    );
    assert!(
        job.stderr.contains("--strict refuses --enable"),
        "{}",
        job.stderr
    );
    // Said once, by the first rank of the host, not once per rank.
    assert_eq!(job.stderr.matches(&said).count(), 1, "{}", job.stderr);
}

/// The libfabric release a setting's form follows (`netsel::versions`: lists from 2.6,
/// `FI_EFA_IFACE` from 2.0) is the one the program's MPI library links, read from that
/// very file, and it is the release its registry names: 2.5 in the MPICH 5 and Open MPI 5
/// wheels. Debian's Open MPI 4 (its ofi components open libfabric in `MPI_Init`), MPICH 4
/// (ch4:ucx) and Intel MPI (its own libfabric, opened in `MPI_Init`) link none, so a rank
/// knows none before `MPI_Init`: their settings take the newest form, which the registry
/// check of the host's first rank then holds against the library loaded.
#[test]
fn the_libfabric_release_followed_is_the_one_the_program_links() {
    let mpi = Installation::from_env();
    let report = resolve_live(mpi, |_| {});
    let linked = &report["libraries"]["libfabric"];
    let names = report["registry"]["libraries"].to_string();
    match mpi {
        Installation::Mpich5 | Installation::OpenMpi5 => {
            assert_eq!(
                (linked["major"].as_u64(), linked["minor"].as_u64()),
                (Some(2), Some(5)),
                "{}: {report}",
                mpi.name()
            );
            assert!(names.contains("\"libfabric 2.5"), "{}: {names}", mpi.name());
        }
        _ => assert!(linked.is_null(), "{}: {report}", mpi.name()),
    }
}

/// How one library's verbose switch says it read a setting, and how it names one it does
/// not know: Open MPI lists the registered parameters it took from the environment
/// (`mpi_show_mca_params=enviro`: `[host:pid] NAME=VALUE (environment)`), UCX warns of
/// every `UCX_*` variable it does not use (`unused env variable`), Intel MPI prints the
/// `I_MPI_*` values it holds and names an unknown one (`… environment variable is not
/// supported`) and its libfabric the providers `FI_PROVIDER` filtered out.
struct Verbose {
    /// The variables that make the library say what it read.
    switch: &'static [(&'static str, &'static str)],
    /// A misspelled variable of the library, which it must say it does not read: the
    /// proof that the output examined would show a setting the library ignores.
    planted: (&'static str, &'static str),
}

impl Verbose {
    fn of(mpi: Installation) -> Verbose {
        match mpi {
            Installation::OpenMpi4 | Installation::OpenMpi5 => Verbose {
                switch: &[("OMPI_MCA_mpi_show_mca_params", "enviro")],
                planted: ("OMPI_MCA_btl_tcp_if_includ", "lo"),
            },
            Installation::Mpich4 | Installation::Mpich5 => Verbose {
                switch: &[("UCX_LOG_LEVEL", "info")],
                planted: ("UCX_NET_DEVICE", "lo"),
            },
            Installation::IntelMpi => Verbose {
                switch: &[("I_MPI_DEBUG", "5"), ("FI_LOG_LEVEL", "info")],
                planted: ("I_MPI_OFI_PROVIDE", "tcp"),
            },
        }
    }

    /// Whether `output` shows the library reading `name=value`: `None` when it does,
    /// else why not. `None` too for a variable this switch says nothing of (`FI_TCP_IFACE`:
    /// its reading is proven by the bytes on each link, `netsel_proof.rs`).
    fn read(output: &str, name: &str, value: &str) -> Option<String> {
        let shown = |needle: &str| output.contains(needle);
        if let Some(param) = name.strip_prefix("OMPI_MCA_") {
            let line = format!("{param}={value} (environment)");
            (!shown(&line)).then(|| format!("Open MPI did not list `{line}`"))
        } else if name.starts_with("UCX_") {
            let unused = output.lines().any(|l| {
                l.contains("unused env")
                    && (l.contains(&format!(" {name} ")) || l.ends_with(&format!(" {name}")))
            });
            let listed = output.lines().any(|l| {
                l.contains("UCX_* env variables:") && l.contains(&format!("{name}={value}"))
            });
            match (unused, listed) {
                (false, true) => None,
                (true, _) => Some(format!("UCX said {name} is unused")),
                (false, false) => Some(format!("UCX did not list {name}={value}")),
            }
        } else if name.starts_with("I_MPI_") {
            if shown(&format!("{name} environment variable is not supported")) {
                Some(format!("Intel MPI does not support {name}"))
            } else {
                (!shown(&format!("MPI startup(): {name}={value}")))
                    .then(|| format!("Intel MPI did not print {name}={value}"))
            }
        } else if name == "FI_PROVIDER" {
            (!shown("filtered by provider include/exclude list"))
                .then(|| "libfabric filtered no provider by FI_PROVIDER".to_string())
        } else {
            None
        }
    }

    /// Whether `output` shows the planted variable said unknown (or, for Open MPI, not
    /// taken).
    fn refused(&self, output: &str) -> bool {
        let (name, value) = self.planted;
        Verbose::read(output, name, value).is_some()
    }
}

/// Every setting of the TCP path (the one row each installation here can run) read by
/// the library the ranks load, as its own verbose switch says, on a 2-rank job: the
/// setting is in the library's list of what it read, and a misspelled variable planted
/// beside it is said unknown, so the check would catch a setting the library ignores.
#[test]
fn each_setting_of_the_tcp_path_is_read_as_the_library_s_verbose_switch_says() {
    let mpi = Installation::from_env();
    let iface = first_interface();
    let verbose = Verbose::of(mpi);
    let mut env: Vec<(&str, &str)> = verbose.switch.to_vec();
    env.push(verbose.planted);
    let sqmr = Path::new(env!("CARGO_BIN_EXE_sqmr"));
    let job = mpitest::launch_with_env(
        mpi,
        2,
        sqmr,
        &["--enable", &iface, "--num_iters", "5", "--max_msgsize", "8"],
        &env,
        std::time::Duration::from_secs(60),
    );
    let output = format!("{}\n{}", job.stdout, job.stderr);
    assert_eq!(job.code, Some(0), "{}: {output}", mpi.name());
    // The settings as rank 0 reports them: `# network selection (rank 0's host): … on
    // HOST: NAME=VALUE …`.
    let line = job
        .stdout
        .lines()
        .find(|l| l.starts_with("# network selection (rank 0's host): "))
        .unwrap_or_else(|| panic!("{}: no selection line: {output}", mpi.name()));
    let settings: Vec<(&str, &str)> = line
        .split_whitespace()
        .filter_map(|w| w.split_once('='))
        .filter(|(k, _)| {
            k.starts_with(|c: char| c.is_ascii_uppercase())
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
        .collect();
    assert!(!settings.is_empty(), "{line}");
    let unread: Vec<String> = settings
        .iter()
        .filter_map(|(k, v)| Verbose::read(&output, k, v))
        .collect();
    assert!(unread.is_empty(), "{}: {unread:?}\n{output}", mpi.name());
    let (said, silent): (Vec<&(&str, &str)>, Vec<_>) = settings.iter().partition(|(k, _)| {
        k.starts_with("OMPI_MCA_")
            || k.starts_with("UCX_")
            || k.starts_with("I_MPI_")
            || *k == "FI_PROVIDER"
    });
    assert!(!said.is_empty(), "{line}");
    eprintln!(
        "{}: read as set, by the library's own word: {said:?}; its switch says nothing of {silent:?}",
        mpi.name()
    );
    assert!(
        verbose.refused(&output),
        "{}: the planted {} was not said unknown: {output}",
        mpi.name(),
        verbose.planted.0
    );
}

/// Intel MPI loads the libfabric `I_MPI_OFI_LIBRARY` names, in `MPI_Init` (its
/// `I_MPI_OFI_LIBRARY_INTERNAL` only steers its environment scripts): the way to a
/// provider its own libfabric lacks (cxi, opx). The registry check then reads that one —
/// here Debian's libfabric 1.17, which Open MPI 4 brings — and the job loads it too.
#[test]
fn intel_mpi_is_checked_against_the_libfabric_it_is_told_to_load() {
    let mpi = Installation::from_env();
    if mpi != Installation::IntelMpi {
        eprintln!("NOTE: {} is not Intel MPI: nothing to check", mpi.name());
        return;
    }
    let system = Path::new("/usr/lib/x86_64-linux-gnu/libfabric.so.1");
    if !system.is_file() {
        mpitest::unavailable(&format!(
            "no {} (Debian's libfabric1, which scripts/install-deps.sh installs with Open MPI 4)",
            system.display()
        ));
        return;
    }
    let resolve = |named: Option<&Path>| {
        let report = resolve_live(mpi, |cmd| {
            match named {
                Some(path) => cmd.env("I_MPI_OFI_LIBRARY", path),
                None => cmd.env_remove("I_MPI_OFI_LIBRARY"),
            };
        });
        report["registry"]["libraries"].to_string()
    };
    let own = resolve(None);
    assert!(own.contains("\"libfabric 1.20.1-impi\""), "{own}");
    let told = resolve(Some(system));
    assert!(told.contains("\"libfabric 1.17"), "{told}");
    assert!(!told.contains("-impi"), "{told}");
    // And Intel MPI loads it: its startup names the release.
    let sqmr = Path::new(env!("CARGO_BIN_EXE_sqmr"));
    let job = mpitest::launch_with_env(
        mpi,
        2,
        sqmr,
        &["--num_iters", "5", "--max_msgsize", "8"],
        &[
            ("I_MPI_OFI_LIBRARY", system.to_str().unwrap()),
            ("I_MPI_DEBUG", "5"),
            ("FI_PROVIDER", "tcp"),
        ],
        std::time::Duration::from_secs(60),
    );
    let output = format!("{}\n{}", job.stdout, job.stderr);
    assert_eq!(job.code, Some(0), "{output}");
    assert!(
        output.contains("MPI startup(): libfabric version: 1.17"),
        "{output}"
    );
}
