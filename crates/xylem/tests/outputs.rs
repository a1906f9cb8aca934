//! `xylem`'s output files and standard output as a user hits their faults: `xylem plot -o`
//! on a full disk or onto an existing file, every command with standard output on
//! `/dev/full` or a closed pipe.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn report_fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../analysis/tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn sysfs_fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../netsel/tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn xylem(args: &[&str], stdout: Stdio) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xylem"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

fn dev_full() -> Stdio {
    Stdio::from(
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap(),
    )
}

/// A pipe whose reader has gone.
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Stdio::from(writer)
}

/// Every command that writes to standard output, as a user would type it.
fn commands(dir: &Path) -> Vec<(String, Vec<String>)> {
    let sqmr = report_fixture("sqmr-a.json");
    let gen_dir = dir.join("man").display().to_string();
    let place = "place sqmr --num_cores 2 --num_nbors 1 --core-node n1 --nodes n1,n2 \
                 --launcher mpirun";
    [
        ("xylem compare: ", format!("compare {sqmr} {sqmr}")),
        ("xylem compare: ", format!("compare {sqmr} {sqmr} --json")),
        (
            "xylem: ",
            format!("net show --sysfs {}", sysfs_fixture("roce")),
        ),
        ("xylem: ", "net show".to_string()),
        (
            "xylem: ",
            format!(
                "net resolve --enable ib --mpi openmpi-4.1 --sysfs {}",
                sysfs_fixture("ib-ipoib")
            ),
        ),
        ("xylem place: ", place.to_string()),
        ("xylem gen: ", format!("gen man {gen_dir}")),
        ("xylem: ", "--help".to_string()),
        ("xylem: ", "--version".to_string()),
        ("xylem: ", "plot --help".to_string()),
    ]
    .into_iter()
    .map(|(prefix, line)| {
        (
            prefix.to_string(),
            line.split_whitespace().map(String::from).collect(),
        )
    })
    .collect()
}

#[test]
fn every_command_on_a_full_device_exits_1_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for (prefix, args) in commands(dir.path()) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = xylem(&args, dev_full());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(
            stderr,
            format!("{prefix}cannot write to standard output: No space left on device\n"),
            "{args:?}"
        );
    }
}

#[test]
fn every_command_on_a_closed_pipe_exits_141_quietly() {
    let dir = tempfile::tempdir().unwrap();
    for (_, args) in commands(dir.path()) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = xylem(&args, closed_pipe());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}");
    }
}

#[test]
fn plot_never_overwrites_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("rates.svg");
    std::fs::write(&svg, "precious").unwrap();
    let out = xylem(
        &[
            "plot",
            &report_fixture("sqmr-a.json"),
            "-o",
            svg.to_str().unwrap(),
        ],
        Stdio::null(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "xylem plot: {}: the file exists; it is never overwritten, so remove it or choose \
             another name\n",
            svg.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&svg).unwrap(), "precious");
    assert_eq!(mpitest::dir_entries(dir.path()), ["rates.svg"]);

    // --force replaces the regular file the user named, whole, and says so.
    let out = xylem(
        &[
            "plot",
            &report_fixture("sqmr-a.json"),
            "-o",
            svg.to_str().unwrap(),
            "--force",
        ],
        Stdio::null(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stderr,
        format!("xylem plot: {} replaced (--force)\n", svg.display())
    );
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    assert_eq!(mpitest::dir_entries(dir.path()), ["rates.svg"]);

    // Not a link, though: --force does not make a link or a directory a file to replace.
    let link = dir.path().join("link.svg");
    std::os::unix::fs::symlink(&svg, &link).unwrap();
    let out = xylem(
        &[
            "plot",
            &report_fixture("sqmr-a.json"),
            "-o",
            link.to_str().unwrap(),
            "--force",
        ],
        Stdio::null(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a symbolic link has that name"));
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
}

/// A 64 KiB tmpfs filled but for one page of 4 KiB (room for a reservation, not for a
/// picture), unmounted when dropped; `None` after `SKIPPED` (under `CI=true`: a failure)
/// where it cannot be mounted.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn nearly_full(name: &str) -> Option<Tmpfs> {
        let dir = std::env::temp_dir().join(format!("xylem-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mounted = Command::new("mount")
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
        std::fs::write(dir.join("filler"), vec![0u8; 15 * 4096]).unwrap();
        Some(Tmpfs(dir))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn plot_on_a_full_disk_leaves_no_partial_file_and_exits_1() {
    let Some(fs) = Tmpfs::nearly_full("plot-full") else {
        return;
    };
    for (fixture, name) in [("sqmr-a.json", "rates.svg"), ("beffio-a.json", "io.png")] {
        let picture = fs.0.join(name);
        let out = xylem(
            &[
                "plot",
                &report_fixture(fixture),
                "-o",
                picture.to_str().unwrap(),
            ],
            Stdio::null(),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert_eq!(
            stderr,
            format!(
                "xylem plot: {}: cannot write it: No space left on device\n",
                picture.display()
            )
        );
        assert_eq!(mpitest::dir_entries(&fs.0), ["filler"], "{name}");
    }
}
