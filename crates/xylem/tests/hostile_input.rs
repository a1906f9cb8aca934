//! `xylem`'s readers and `xylem place` against input no run writes: a FIFO (no writer),
//! a device, a file over the cap, values no run gives, inputs of 100,000 sizes or columns,
//! rank counts past sqmr's limits, a node named `EOF`; and its standard streams full or
//! closed. Every child runs with a deadline (killed past it, and the test fails), and the
//! input files are checked byte for byte afterwards.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What a finished child left: its status, standard output and standard error.
struct Ran {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Ran {
    fn code(&self) -> Option<i32> {
        self.status.code()
    }
}

/// Runs `command` with its output in files (no pipe to fill), for at most `limit`: past
/// it the child is killed and the test fails, naming `what`.
fn run_within(mut command: Command, limit: Duration, what: &str) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
    command
        .stdin(Stdio::null())
        .stdout(File::create(&out).unwrap())
        .stderr(File::create(&err).unwrap());
    let mut child = command.spawn().unwrap();
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}; killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
    Ran {
        status,
        stdout: read(&out),
        stderr: read(&err),
    }
}

/// A refusal must come at once: well within this (a hang is killed at it).
const PROMPT: Duration = Duration::from_secs(30);

/// A hang guard for the large inputs, not a timing: quadratic work at 100,000 rows
/// (a debug build) would take far longer.
const LARGE: Duration = Duration::from_secs(600);

fn xylem(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_xylem"));
    c.args(args);
    c
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../analysis/tests/fixtures")
        .join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// The files of `dir` (names and bytes), to compare before and after a run.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let kind = e.file_type().unwrap();
            let bytes = if kind.is_file() {
                std::fs::read(e.path()).unwrap()
            } else {
                format!("{kind:?}").into_bytes()
            };
            (name, bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_fifo_given_to_any_reader_is_refused_at_once_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("result.json");
    mkfifo(&fifo);
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    mkfifo(&folder.join("sqmr.json"));
    let picture = dir.path().join("p.svg");
    let before = snapshot(dir.path());
    let cases: [(&str, Vec<&str>, PathBuf); 5] = [
        ("compare", vec!["compare", s(&fifo), s(&fifo)], fifo.clone()),
        (
            "plot",
            vec!["plot", s(&fifo), "-o", s(&picture)],
            fifo.clone(),
        ),
        (
            "summary",
            vec!["summary", s(&folder)],
            folder.join("sqmr.json"),
        ),
        ("perflog", vec!["perflog", s(&fifo)], fifo.clone()),
        (
            "perflog -o",
            vec!["perflog", s(&fifo), "-o", s(&picture)],
            fifo.clone(),
        ),
    ];
    for (what, args, named) in cases {
        let ran = run_within(xylem(&args), PROMPT, what);
        assert_eq!(ran.code(), Some(1), "{what}: {}", ran.stderr);
        let wanted = format!(
            "{}: not a regular file but a FIFO; give the path of a regular file",
            named.display()
        );
        assert!(ran.stderr.contains(&wanted), "{what}: {}", ran.stderr);
        assert_eq!(ran.stdout, "", "{what}");
        // No picture, no reservation left; the FIFO is still a FIFO.
        assert_eq!(snapshot(dir.path()), before, "{what}");
    }
}

#[test]
fn a_device_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let picture = dir.path().join("p.svg");
    for (what, args) in [
        ("compare", vec!["compare", "/dev/zero", "/dev/null"]),
        ("perflog", vec!["perflog", "/dev/zero"]),
        ("plot", vec!["plot", "/dev/urandom", "-o", s(&picture)]),
    ] {
        let ran = run_within(xylem(&args), PROMPT, what);
        assert_eq!(ran.code(), Some(1), "{what}: {}", ran.stderr);
        assert!(
            ran.stderr
                .contains(": not a regular file but a character device"),
            "{what}: {}",
            ran.stderr
        );
    }
    assert_eq!(
        snapshot(dir.path()),
        Vec::new(),
        "no picture, no reservation"
    );
}

#[test]
fn a_file_over_the_cap_is_refused_and_the_cap_is_in_the_help() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    // Sparse: no disk is used.
    File::create(&big)
        .unwrap()
        .set_len(analysis::MAX_INPUT_BYTES + 1)
        .unwrap();
    let before = snapshot(dir.path());
    for (what, args) in [
        ("compare", vec!["compare", s(&big), s(&big)]),
        ("perflog", vec!["perflog", s(&big)]),
    ] {
        let ran = run_within(xylem(&args), PROMPT, what);
        assert_eq!(ran.code(), Some(1), "{what}: {}", ran.stderr);
        let wanted = format!(
            "{}: {} bytes, more than the {} bytes",
            big.display(),
            analysis::MAX_INPUT_BYTES + 1,
            analysis::MAX_INPUT_BYTES
        );
        assert!(ran.stderr.contains(&wanted), "{what}: {}", ran.stderr);
    }
    assert_eq!(snapshot(dir.path()), before);
    assert_eq!(analysis::MAX_INPUT_BYTES, 256 << 20);
    for reader in ["compare", "plot", "summary", "perflog"] {
        let ran = run_within(xylem(&[reader, "--help"]), PROMPT, reader);
        assert!(ran.status.success(), "{reader}");
        assert!(
            ran.stdout
                .contains("Input files must be regular files of at most 256 MiB"),
            "{reader} --help: {}",
            ran.stdout
        );
    }
}

#[test]
fn a_perflog_value_that_is_not_finite_is_refused_naming_its_column() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("check.log");
    std::fs::write(
        &log,
        "job_completion_time|name|rate_value|rate_unit|bw_value|bw_unit\n\
         2026-01-01T00:00:00|c|10|msg/s|5|MB/s\n\
         2026-01-02T00:00:00|c|12|msg/s|inf|MB/s\n",
    )
    .unwrap();
    let picture = dir.path().join("trend.svg");
    let before = snapshot(dir.path());
    for (what, args) in [
        ("perflog", vec!["perflog", s(&log)]),
        ("perflog -o", vec!["perflog", s(&log), "-o", s(&picture)]),
    ] {
        let ran = run_within(xylem(&args), PROMPT, what);
        assert_eq!(ran.code(), Some(1), "{what}: {}", ran.stderr);
        assert!(
            ran.stderr.contains(&format!(
                "{}, line 3: column `bw_value` is \"inf\", not a finite number",
                log.display()
            )),
            "{what}: {}",
            ran.stderr
        );
        assert_eq!(snapshot(dir.path()), before, "{what}");
    }
    // Without the record, the same log plots.
    let text = std::fs::read_to_string(&log)
        .unwrap()
        .replace("|inf|", "|7|");
    std::fs::write(&log, text).unwrap();
    let ran = run_within(
        xylem(&["perflog", s(&log), "-o", s(&picture)]),
        LARGE,
        "plot",
    );
    assert!(ran.status.success(), "{}", ran.stderr);
    assert!(std::fs::read_to_string(&picture).unwrap().contains("<svg"));
}

/// Writes `fixture` with `edit` applied to its JSON into `dir` as `name`.
fn edited(
    dir: &Path,
    fixture_name: &str,
    name: &str,
    edit: impl Fn(&mut serde_json::Value),
) -> PathBuf {
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture(fixture_name)).unwrap()).unwrap();
    edit(&mut v);
    let path = dir.join(name);
    std::fs::write(&path, v.to_string()).unwrap();
    path
}

#[test]
fn values_no_run_gives_are_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let negative = edited(dir.path(), "sqmr-a.json", "negative.json", |v| {
        v["sizes"][3]["rates"]["average"]["msgs_per_s"] = (-250.0).into()
    });
    let huge = edited(dir.path(), "sqmr-a.json", "huge.json", |v| {
        v["sizes"][2]["rates"]["max"]["mib_per_s"] = 1e308.into()
    });
    let nobody = edited(dir.path(), "beffio-a.json", "nobody.json", |v| {
        v["processes"] = 0.into()
    });
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    std::fs::copy(&huge, folder.join("sqmr.json")).unwrap();
    let picture = dir.path().join("p.svg");
    let before = snapshot(dir.path());
    let good = fixture("sqmr-b.json");
    let cases: [(Vec<&str>, &str); 5] = [
        (
            vec!["compare", s(&good), s(&negative)],
            "negative.json: a sqmr result, but malformed: sizes[3].rates.average.msgs_per_s \
             is -250, which no run gives; expected a number from 0 to 1e15",
        ),
        (
            vec!["plot", s(&huge), "-o", s(&picture)],
            "huge.json: a sqmr result, but malformed: sizes[2].rates.max.mib_per_s is 1e308, \
             which no run gives",
        ),
        (
            vec!["summary", s(&folder)],
            "sqmr.json: a sqmr result, but malformed: sizes[2].rates.max.mib_per_s is 1e308",
        ),
        (
            vec!["compare", s(&nobody), s(&nobody)],
            "nobody.json: a b_eff_io result, but malformed: processes is 0, which no run gives",
        ),
        (
            vec!["plot", s(&nobody), "-o", s(&picture)],
            "nobody.json: a b_eff_io result, but malformed: processes is 0",
        ),
    ];
    for (args, wanted) in cases {
        let ran = run_within(xylem(&args), PROMPT, args[0]);
        assert_eq!(ran.code(), Some(1), "{args:?}: {}", ran.stderr);
        assert!(ran.stderr.contains(wanted), "{args:?}: {}", ran.stderr);
        assert_eq!(ran.stdout, "", "{args:?}");
        assert_eq!(snapshot(dir.path()), before, "{args:?}");
    }
}

#[test]
fn compare_of_100000_sizes_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let many = edited(dir.path(), "sqmr-a.json", "many.json", |v| {
        let size = v["sizes"][1].clone();
        let sizes: Vec<serde_json::Value> = (1..=100_000u64)
            .map(|n| {
                let mut s = size.clone();
                s["msgsize"] = n.into();
                s
            })
            .collect();
        v["sizes"] = sizes.into();
    });
    let before = snapshot(dir.path());
    // Within 1 GiB of address space: reading two files of 100,000 sizes took 2 GB.
    let mut c = Command::new("bash");
    c.args(["-c", "ulimit -v 1048576 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_xylem"))
        .args(["compare", s(&many), s(&many)]);
    let ran = run_within(c, LARGE, "compare");
    assert!(ran.status.success(), "{}", ran.stderr);
    // A rate row and a bandwidth row per size, each with the ratio 1.
    let rows = ran.stdout.lines().filter(|l| l.ends_with("1.000")).count();
    let start: String = ran.stdout.chars().take(2000).collect();
    assert_eq!(rows, 2 * 100_000 + 2, "{start}");
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn perflog_of_100000_columns_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("wide.log");
    let n = 100_000;
    let mut header = vec!["job_completion_time".to_string(), "name".to_string()];
    let mut record = vec!["2026-01-01T00:00:00".to_string(), "c".to_string()];
    for i in 0..n {
        header.extend([format!("v{i}_value"), format!("v{i}_unit")]);
        record.extend([format!("{i}.5"), "s".to_string()]);
    }
    std::fs::write(
        &log,
        format!("{}\n{}\n", header.join("|"), record.join("|")),
    )
    .unwrap();
    let before = snapshot(dir.path());
    let ran = run_within(xylem(&["perflog", s(&log)]), LARGE, "perflog");
    assert!(ran.status.success(), "{}", ran.stderr);
    // The header line, then one series per variable.
    assert_eq!(ran.stdout.lines().count(), 1 + n);
    assert!(ran.stdout.contains(" v99999 "), "the last column is read");
    assert_eq!(snapshot(dir.path()), before);
    // So many variables do not make one picture, but say so.
    let picture = dir.path().join("wide.svg");
    let ran = run_within(xylem(&["perflog", s(&log), "-o", s(&picture)]), LARGE, "-o");
    assert_eq!(ran.code(), Some(1), "{}", ran.stderr);
    assert!(
        ran.stderr
            .contains("100000 performance variables to plot, more than the 32 panels"),
        "{}",
        ran.stderr
    );
    assert_eq!(snapshot(dir.path()), before);
}

/// `xylem place sqmr` with `args` under a 1 GiB address-space limit: a rank count that
/// got as far as allocating per rank would fail on it.
fn place_limited(args: &[&str]) -> Ran {
    let mut c = Command::new("bash");
    c.args(["-c", "ulimit -v 1048576 && exec \"$0\" place sqmr \"$@\""])
        .arg(env!("CARGO_BIN_EXE_xylem"))
        .args(args);
    run_within(c, PROMPT, "place")
}

#[test]
fn place_refuses_rank_counts_past_the_limit_naming_the_option() {
    let nodes = ["--core-node", "a", "--nodes", "a,b", "--launcher", "srun"];
    let cases: [(&[&str], &str); 3] = [
        (
            &["--num_cores", "8", "--num_nbors", "4294967296"],
            "invalid value '4294967296' for '--num_nbors <N>': 4294967296 is not in \
             1..=1048576",
        ),
        (
            &["--num_cores", "10000000"],
            "invalid value '10000000' for '--num_cores <N>': 10000000 is not in 1..=1048576",
        ),
        (
            &["--num_cores", "1000", "--num_nbors", "2000"],
            "xylem place: --num_cores 1000 with --num_nbors 2000 makes 2001000 ranks \
             (num_cores × (1 + num_nbors)); at most 1048576 are accepted",
        ),
    ];
    for (counts, wanted) in cases {
        let mut args = counts.to_vec();
        args.extend(nodes);
        let ran = place_limited(&args);
        assert_eq!(ran.code(), Some(2), "{args:?}: {}", ran.stderr);
        assert!(ran.stderr.contains(wanted), "{args:?}: {}", ran.stderr);
        assert_eq!(ran.stdout, "", "{args:?}");
    }
    // The most accepted is laid out within the same limit.
    let mut args = vec!["--num_cores", "1", "--num_nbors", "1048575"];
    args.extend(nodes);
    let ran = place_limited(&args);
    assert!(ran.status.success(), "{}", ran.stderr);
    assert_eq!(ran.stdout.lines().filter(|l| *l == "b").count(), 1_048_575);
}

/// The script `xylem place sqmr … --launcher LAUNCHER` prints, run by bash in `dir` with
/// a stand-in launcher on PATH that records its arguments.
fn run_placed_script(dir: &Path, launcher: &str, nodes: &str, core: &str) -> String {
    let args = [
        "place",
        "sqmr",
        "--num_cores",
        "2",
        "--num_nbors",
        "2",
        "--core-node",
        core,
        "--nodes",
        nodes,
        "--launcher",
        launcher,
    ];
    let ran = run_within(xylem(&args), PROMPT, "place");
    assert!(ran.status.success(), "{}", ran.stderr);
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let stand_in = bin.join(launcher);
    std::fs::write(&stand_in, "#!/bin/sh\necho \"$@\" > launched\n").unwrap();
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&stand_in, mode).unwrap();
    let mut bash = Command::new("bash");
    bash.arg("-c")
        .arg(&ran.stdout)
        .current_dir(dir)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()));
    let script = run_within(bash, PROMPT, "the script");
    assert!(script.status.success(), "{}\n{}", ran.stdout, script.stderr);
    let launched = std::fs::read_to_string(dir.join("launched")).unwrap();
    assert!(
        launched.contains("sqmr --num_cores=2 --num_nbors=2"),
        "{launched}"
    );
    ran.stdout
}

#[test]
fn a_node_named_eof_round_trips_through_the_pasted_script() {
    let cases = [
        ("srun", "hosts.txt", "EOF\nEOF\nn2\nXYLEM\nn2\nXYLEM\n"),
        (
            "mpiexec",
            "machinefile.txt",
            "EOF:2\nn2:1\nXYLEM:1\nn2:1\nXYLEM:1\n",
        ),
        (
            "mpirun",
            "rankfile.txt",
            "rank 0=EOF slot=0\nrank 1=EOF slot=1\nrank 2=n2 slot=0\nrank 3=XYLEM slot=0\n\
             rank 4=n2 slot=1\nrank 5=XYLEM slot=1\n",
        ),
    ];
    for (launcher, file, wanted) in cases {
        let dir = tempfile::tempdir().unwrap();
        // `XYLEM:EOF` is no node name (`:`), so it is refused; `EOF` and `XYLEM` are fine.
        let refused = run_within(
            xylem(&[
                "place",
                "sqmr",
                "--num_cores",
                "1",
                "--core-node",
                "a",
                "--nodes",
                "a,XYLEM:EOF",
                "--launcher",
                launcher,
            ]),
            PROMPT,
            "place",
        );
        assert_eq!(refused.code(), Some(2), "{}", refused.stderr);
        let script = run_placed_script(dir.path(), launcher, "EOF,n2,XYLEM", "EOF");
        let written = std::fs::read_to_string(dir.path().join(file)).unwrap();
        assert_eq!(written, wanted, "{script}");
    }
}

#[test]
fn a_full_standard_error_does_not_change_the_exit_code_of_a_warning() {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../netsel/tests/fixtures/bond");
    let mut c = xylem(&[
        "net",
        "resolve",
        "--enable",
        "bond0,nosuch0",
        "--mpi",
        "openmpi4",
        "--sysfs",
        s(&fixture),
    ]);
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(File::options().write(true).open("/dev/full").unwrap());
    let mut child = c.spawn().unwrap();
    let deadline = Instant::now() + PROMPT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "still running");
        std::thread::sleep(Duration::from_millis(20));
    };
    // 0, as with a writable stderr (where it warns that nosuch0 matches nothing); not 101.
    assert_eq!(status.code(), Some(0));
    let ran = run_within(
        {
            let mut c = xylem(&["net", "resolve", "--enable", "bond0,nosuch0", "--mpi"]);
            c.args(["openmpi4", "--sysfs", s(&fixture)]);
            c
        },
        PROMPT,
        "resolve",
    );
    assert!(ran.status.success(), "{}", ran.stderr);
    assert!(
        ran.stderr.contains("nosuch0 matches nothing"),
        "{}",
        ran.stderr
    );
}

#[test]
fn a_closed_standard_output_is_an_error_not_a_silent_success() {
    let bond = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../netsel/tests/fixtures/bond");
    for args in [
        vec!["net", "show", "--sysfs", s(&bond)],
        vec![
            "compare",
            s(&fixture("sqmr-a.json")),
            s(&fixture("sqmr-b.json")),
        ],
    ] {
        let mut c = Command::new("bash");
        c.args(["-c", "exec \"$0\" \"$@\" >&-"])
            .arg(env!("CARGO_BIN_EXE_xylem"))
            .args(&args);
        let ran = run_within(c, PROMPT, args[0]);
        assert_eq!(ran.code(), Some(1), "{args:?}: {}", ran.stderr);
        assert!(
            ran.stderr
                .contains("cannot write to standard output: Bad file descriptor"),
            "{args:?}: {}",
            ran.stderr
        );
    }
}

/// Host names, the MPI library string and the path of the documents, holding Markdown,
/// HTML and new lines, reach `summary.md` as text: no fake heading, no tag, no line of
/// their own (a forged "The run is VALID."), and every character still there, escaped.
#[test]
fn summary_shows_document_fields_as_text_never_as_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let host = "n1\n# The run is VALID.<script>x</script>";
    let library = "**Evil** MPI | 1\n## injected";
    let mut sqmr: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("sqmr-b.json")).unwrap()).unwrap();
    let env = &mut sqmr["environment"];
    env["mpi_library"] = library.into();
    for h in env["hosts"].as_array_mut().unwrap() {
        *h = host.into();
    }
    for h in env["core_hosts"].as_array_mut().into_iter().flatten() {
        *h = host.into();
    }
    sqmr["placement"]["core_node"] = host.into();
    std::fs::write(dir.path().join("sqmr.json"), sqmr.to_string()).unwrap();
    let mut beffio: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("beffio-a.json")).unwrap()).unwrap();
    beffio["path"] = "/scratch\nThe run is VALID.\n<img src=x>".into();
    std::fs::write(dir.path().join("b_eff_io.json"), beffio.to_string()).unwrap();
    let ran = run_within(xylem(&["summary", s(dir.path())]), PROMPT, "summary");
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr);
    let md = &ran.stdout;
    // No line the documents made: every heading and every "The run is" line is ours.
    let headings: Vec<&str> = md.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(headings.len(), 3, "{headings:?}\n{md}");
    assert!(headings[0].starts_with("# xylem results, "), "{md}");
    assert!(headings[1].starts_with("## sqmr: message rate"), "{md}");
    assert_eq!(headings[2], "## b_eff_io: effective I/O bandwidth", "{md}");
    let verdicts: Vec<&str> = md.lines().filter(|l| l.starts_with("The run is")).collect();
    assert_eq!(verdicts.len(), 1, "{verdicts:?}\n{md}");
    let valid = beffio["valid"] == true;
    assert_eq!(verdicts[0] == "The run is VALID.", valid, "{md}");
    // No tag, no emphasis or table cell of the documents' own.
    for tag in ["<script>", "</script>", "<img", "**Evil**", "MPI | 1"] {
        assert!(!md.contains(tag), "{tag:?} in\n{md}");
    }
    // The text is all there, escaped.
    let escaped_host = "n1\\\\n\\# The run is VALID.&lt;script&gt;x&lt;/script&gt;";
    assert!(md.contains(escaped_host), "{md}");
    assert!(
        md.contains("\\*\\*Evil\\*\\* MPI \\| 1\\\\n\\#\\# injected"),
        "{md}"
    );
    assert!(
        md.contains("path /scratch\\\\nThe run is VALID.\\\\n&lt;img src=x&gt;."),
        "{md}"
    );
}

/// Whether `text` holds a control character other than a line break or a tab.
fn has_control(text: &str) -> bool {
    text.chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
}

#[test]
fn names_and_fields_with_terminal_escapes_are_shown_not_sent() {
    let dir = tempfile::tempdir().unwrap();
    // A file name and document fields that would retitle the terminal and clear it.
    let evil = edited(
        dir.path(),
        "sqmr-a.json",
        "evil\u{1b}]0;pwned\u{7}.json",
        |v| {
            v["environment"]["mpi_library"] = "MPI \u{1b}[2J\u{1b}[31mFAKE".into();
            v["environment"]["hosts"][0] = "node\u{1b}]0;x\u{7}".into();
        },
    );
    let ran = run_within(
        xylem(&["compare", s(&evil), s(&fixture("sqmr-a.json"))]),
        PROMPT,
        "compare",
    );
    assert!(ran.status.success(), "{}", ran.stderr);
    assert!(!has_control(&ran.stdout), "{:?}", ran.stdout);
    assert!(
        ran.stdout.contains("evil\\x1b]0;pwned\\x07"),
        "{}",
        ran.stdout
    );
    // The picture's notes and legend: shown too, and the SVG stays XML.
    let svg = dir.path().join("p.svg");
    let ran = run_within(
        xylem(&["plot", s(&evil), s(&fixture("sqmr-a.json")), "-o", s(&svg)]),
        PROMPT,
        "plot",
    );
    assert!(ran.status.success(), "{}", ran.stderr);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(!has_control(&text), "a control character in the SVG");
    assert!(
        text.contains("evil\\x1b]0;pwned\\x07"),
        "the legend names the file"
    );
    roxmltree::Document::parse(&text).expect("the SVG is XML");
}
