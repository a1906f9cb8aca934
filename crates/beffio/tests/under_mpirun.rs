//! End-to-end runs of `b_eff_io` under a real launcher (the MPI installation that `XYLEM_TEST_MPI` names),
//! one at a time, short `-T`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("beffio-it-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn mpirun(n: usize, args: &[&str]) -> Command {
    mpitest::command(
        mpitest::Installation::from_env(),
        n,
        Path::new(env!("CARGO_BIN_EXE_b_eff_io")),
        args,
        Duration::from_secs(120),
    )
}

fn run(n: usize, args: &[&str]) -> (Output, f64) {
    let start = Instant::now();
    let out = mpirun(n, args).output().expect("start mpirun");
    (out, start.elapsed().as_secs_f64())
}

/// The bandwidth in MB/s of `bytes` in `seconds`, as b_eff_io computes it.
fn mb_s(bytes: f64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes / seconds / 1e6
    } else {
        0.0
    }
}

/// A partition's figures recomputed from its JSON fields with the README's formulas:
/// the paper's `Σ U·bw / Σ U` over every pattern of the three access methods, each type's
/// `bytes / (open_s + Σ its patterns' time_s + close_s)` per access method, and from
/// those the 2.1 figure `sqrt(write_mean × read_mean)`.
fn figures_from_json(p: &serde_json::Value) -> (f64, [[f64; 5]; 3], f64) {
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    let (mut sum, mut units) = (0.0, 0u64);
    let mut types = [[0.0; 5]; 3];
    for (a, access) in ["write", "rewrite", "read"].iter().enumerate() {
        let patterns = p["access"][access].as_array().unwrap();
        for x in patterns {
            let u = x["u"].as_u64().unwrap();
            sum += u as f64 * mb_s(f(&x["bytes"]), f(&x["time_s"]));
            units += u;
        }
        for (t, ty) in p["types"][access].as_array().unwrap().iter().enumerate() {
            assert_eq!(ty["type"], t);
            let mine = || patterns.iter().filter(|x| x["type"] == t);
            let bytes: u64 = mine().map(|x| x["bytes"].as_u64().unwrap()).sum();
            assert_eq!(ty["bytes"], bytes);
            let patterns_s = mine().fold(0.0, |s, x| s + f(&x["time_s"]));
            let time = f(&ty["open_s"]) + patterns_s + f(&ty["close_s"]);
            assert!(time <= f(&ty["wall_s"]) + 1e-6, "{ty}");
            types[a][t] = mb_s(bytes as f64, time);
        }
    }
    let [w, rw, r] = types;
    let write_mean = (w[0] + rw[0] + w[1..].iter().sum::<f64>()) / 6.0;
    let read_mean = (2.0 * r[0] + r[1] + r[2] + r[3] + r[4]) / 6.0;
    (sum / units as f64, types, (write_mean * read_mean).sqrt())
}

/// Whether `printed` (a `{:.3}` figure) is `value` to the printed precision.
fn same_to_3_decimals(value: f64, printed: &str) -> bool {
    let shown: f64 = printed.parse().unwrap();
    (value - shown).abs() <= 5e-4 * (1.0 + 1e-9)
}

/// The printed figures and `total` rows of standard output against those recomputed from
/// the JSON document.
fn check_figures_recompute(doc: &serde_json::Value, stdout: &str) {
    let parts = doc["partitions"].as_array().unwrap();
    let totals: Vec<Vec<&str>> = stdout
        .lines()
        .filter(|l| l.starts_with("total "))
        .map(|l| l.split_whitespace().skip(1).collect())
        .collect();
    assert_eq!(totals.len(), 3 * parts.len(), "{stdout}");
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.starts_with("weighted "))
            .count(),
        3 * parts.len()
    );
    for (i, p) in parts.iter().enumerate() {
        let (paper, types, fig21) = figures_from_json(p);
        let n = p["processes"].as_u64().unwrap();
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("partition n = {n}: b_eff_io = ")))
            .unwrap_or_else(|| panic!("no figures of n = {n} in\n{stdout}"));
        let words: Vec<&str> = line.split_whitespace().collect();
        // partition n = 2: b_eff_io = X MB/s (paper, U-weighted), Y MB/s (2.1 formula), …
        assert!(same_to_3_decimals(paper, words[6]), "{paper} vs {line}");
        assert!(same_to_3_decimals(fig21, words[10]), "{fig21} vs {line}");
        for a in 0..3 {
            let row = &totals[3 * i + a];
            assert_eq!(row.len(), 5, "{row:?}");
            for t in 0..5 {
                assert!(
                    same_to_3_decimals(types[a][t], row[t]),
                    "n = {n}, access {a}, type {t}: {} vs {}",
                    types[a][t],
                    row[t]
                );
            }
        }
    }
}

/// 2.1's `eps/` scripts over the `.sum` file, with the system's `awk`, `sed` and `grep`:
/// per partition its `Summary` line, 7 rows per access method in its block and one
/// `total-<access>` row each.
fn check_sum_with_2_1_rules(sum_path: &Path, partitions: &[u64]) {
    let sh = |script: &str| -> String {
        let out = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg("sh")
            .arg(sum_path)
            .output()
            .expect("sh");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let found = sh(
        "awk '/Summary of file I\\/O bandwidth accumulated on .+ processes with .+ MByte\\/PE/ \
         { print $8 }' \"$1\"",
    );
    let listed: Vec<u64> = found.lines().map(|l| l.trim().parse().unwrap()).collect();
    assert_eq!(listed, partitions, "{found}");
    for access in ["write", "rewrite", "read"] {
        let rows = sh(&format!(
            "awk '/.* PEs      total-{access} .* .* .* .* .*/' \"$1\""
        ));
        assert_eq!(rows.lines().count(), partitions.len(), "{access}: {rows}");
    }
    for n in partitions {
        for grep in [" write  ", " rewrite", " read   "] {
            let rows = sh(&format!(
                "sed -n -e '/Sum.* {n} proc/,/these.* {n} proc/p' \"$1\" | grep '{grep}' \
                 | awk '$3 ~ /^[0-9]+$/ && $6 + 0 == $6'"
            ));
            assert_eq!(rows.lines().count(), 7, "n = {n}, {grep:?}: {rows}");
        }
    }
}

/// Every pattern line of a `.prot`, `t= T = IO+ REST+CHECK+SYNC …`: the four parts add up
/// to T, to the rounding of the printed digits.
fn assert_protocol_parts_add_up(prot: &str) {
    let mut lines = 0;
    for line in prot
        .lines()
        .filter(|l| l.starts_with("n=") && l.contains(" t="))
    {
        let after = &line[line.find(" t=").unwrap() + 3..];
        let (t, rest) = after.split_once('=').unwrap();
        let t: f64 = t.trim().parse().unwrap();
        // " 0.008+ 0.000+0.005+0.050 0.001 …": four parts joined by '+', padded.
        let mut pieces: Vec<&str> = rest.splitn(4, '+').collect();
        let last = pieces.pop().unwrap().split_whitespace().next().unwrap();
        pieces.push(last);
        let parts: Vec<f64> = pieces.iter().map(|v| v.trim().parse().unwrap()).collect();
        assert_eq!(parts.len(), 4, "{line}");
        let sum: f64 = parts.iter().sum();
        assert!(
            (sum - t).abs() <= 0.005 + 0.002,
            "{sum} against t = {t}: {line}"
        );
        lines += 1;
    }
    assert!(lines >= 3 * 43, "{lines} pattern lines:\n{prot}");
}

/// Runs `b_eff_io -T 3` on `n` ranks with `extra` options and checks everything a run
/// must deliver; returns the JSON document and stdout.
fn check_run(n: usize, extra: &[&str]) -> (serde_json::Value, String) {
    let _lock = mpitest::JobLock::acquire();
    let dir = scratch(&format!("ok{n}{}", extra.join("").replace('-', "")));
    std::fs::write(dir.join("precious"), b"keep me").unwrap();
    let json = dir.join("out.json");
    let prefix = dir.join("sum").display().to_string();
    let t = 3.0;
    let mut args = vec![
        "-T",
        "3",
        "-p",
        dir.to_str().unwrap(),
        "--memory-per-process",
        "256M",
        "--json",
        json.to_str().unwrap(),
        "--prefix",
        &prefix,
    ];
    args.extend_from_slice(extra);
    let (out, wall) = run(n, &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "n={n}: {}\n{stdout}\n{stderr}",
        out.status
    );
    // The run directory is gone; the user's file is untouched; only the asked-for outputs exist.
    assert_eq!(
        mpitest::dir_entries(&dir),
        ["out.json", "precious", "sum.prot", "sum.sum"]
    );
    assert_eq!(std::fs::read(dir.join("precious")).unwrap(), b"keep me");
    assert_protocol_parts_add_up(&std::fs::read_to_string(dir.join("sum.prot")).unwrap());
    let doc: serde_json::Value = mpitest::read_document(&json);
    assert_eq!(doc["benchmark"], "b_eff_io");
    assert_eq!(doc["processes"], n);
    mpitest::assert_provenance(&doc, "b_eff_io", n, "--memory-per-process");
    let parts = doc["partitions"].as_array().unwrap();
    let expected_parts = if n == 1 { 1 } else { 2 };
    assert_eq!(parts.len(), expected_parts);
    let mut scheduled = 0.0;
    for p in parts {
        scheduled += p["scheduled_time_s"].as_f64().unwrap();
        let bytes = |a: &str| -> Vec<u64> {
            p["access"][a]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x["bytes"].as_u64().unwrap())
                .collect()
        };
        for a in ["write", "rewrite", "read"] {
            let list = p["access"][a].as_array().unwrap();
            assert_eq!(list.len(), 43, "{a}");
            for x in list {
                assert!(x["repeats"].as_u64().unwrap() >= 1, "{a} {x}");
                assert_eq!(x["errors"], 0, "{a} {x}");
                assert!(x["bandwidth_mb_s"].as_f64().unwrap() > 0.0);
                // The parts are the slowest rank's: they fit in its time.
                let f = |k: &str| x[k].as_f64().unwrap();
                assert!(
                    f("io_s") + f("check_s") + f("sync_s") <= f("time_s") + 1e-9,
                    "{a} {x}"
                );
            }
        }
        // Rewrite and read repeat every write call, and read checks every byte written.
        let (write, rewrite, read) = (bytes("write"), bytes("rewrite"), bytes("read"));
        assert_eq!(write, rewrite, "rewrite moved other bytes than write");
        assert_eq!(write, read, "read moved other bytes than write");
        // No global check inside a pattern whose count is known: rewrite, read, and the
        // writes of types 3 and 4 (the segment plan's counts).
        for a in ["write", "rewrite", "read"] {
            for x in p["access"][a].as_array().unwrap() {
                let known = a != "write" || x["type"].as_u64().unwrap() >= 3;
                if known {
                    assert_eq!(x["checks"], 0, "{a} {x}");
                    assert_eq!(x["check_s"], 0.0, "{a} {x}");
                }
            }
        }
        // The time-driven writes (types 0 to 2, each with a time of its own) check where
        // they stand: overlapped, a check per batch but the first, and at least two calls
        // (the second is made before the first one's check is known); with
        // `--check-every-call`, a blocking check after every call.
        let every_call = extra.contains(&"--check-every-call");
        for x in p["access"]["write"].as_array().unwrap() {
            if x["type"].as_u64().unwrap() > 2 || x["scheduled_s"].as_f64().unwrap() == 0.0 {
                continue;
            }
            let (repeats, checks) = (
                x["repeats"].as_u64().unwrap(),
                x["checks"].as_u64().unwrap(),
            );
            if every_call {
                assert_eq!(checks, repeats, "{x}");
            } else {
                // A check per batch, the first call's aside, and a blocking check where
                // the calls in flight were projected past the budget (none or one on a
                // steady rate; a second where the rate fell twice).
                assert!(repeats >= 2 && (1..=repeats + 1).contains(&checks), "{x}");
            }
        }
        // Types 3 and 4 fill every rank's segment exactly: the filler completes it.
        let ranks = p["processes"].as_u64().unwrap();
        let segment = p["segment_bytes"].as_u64().unwrap();
        for t in [3, 4] {
            let written: u64 = p["access"]["write"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|x| x["type"] == t)
                .map(|x| x["bytes"].as_u64().unwrap())
                .sum();
            assert_eq!(written, segment * ranks, "type {t}");
        }
        // The time outside the timed windows is said, and is what the rest leaves.
        let timed: f64 = ["write", "rewrite", "read"]
            .iter()
            .flat_map(|a| p["access"][*a].as_array().unwrap())
            .map(|x| x["time_s"].as_f64().unwrap())
            .sum();
        let wall = p["wall_time_s"].as_f64().unwrap();
        let untimed = p["untimed_s"].as_f64().unwrap();
        // The time-driven writes that ended before nine tenths of their budget, counted.
        let early = p["access"]["write"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| {
                x["type"].as_u64().unwrap() <= 2
                    && x["u"].as_u64().unwrap() > 0
                    && x["time_s"].as_f64().unwrap() < 0.9 * x["scheduled_s"].as_f64().unwrap()
            })
            .count();
        assert_eq!(
            p["write_patterns_ended_early"].as_u64(),
            Some(early as u64),
            "{p}"
        );
        assert!(
            (wall - timed - untimed).abs() < 1e-6,
            "{wall} {timed} {untimed}"
        );
        assert!(
            stdout.contains(&format!(
                "took {wall:.1} s ({untimed:.1} s of it outside the patterns' timed windows)"
            )),
            "{stdout}"
        );
        assert!(p["segment_bytes"].as_u64().unwrap() % (1 << 20) == 0);
    }
    assert!(
        (scheduled
            - if n == 1 {
                t
            } else {
                t + t * (n / 2) as f64 / n as f64
            })
        .abs()
            < 1e-9
    );
    // Text and JSON agree on the headline.
    let headline = format!(
        "b_eff_io = {:.3} MB/s on ",
        doc["b_eff_io_mb_s"].as_f64().unwrap()
    );
    assert!(stdout.contains(&headline), "{headline} not in\n{stdout}");
    assert!(stdout.contains("NOT VALID (scheduled time T = 3 s is below 600 s"));
    assert_eq!(doc["valid"], false);
    assert_eq!(
        doc["invalid_reasons"][0],
        "scheduled time T = 3 s is below 600 s"
    );
    // Both figures and the `total` rows recompute from the JSON.
    check_figures_recompute(&doc, &stdout);
    // Protocol in 2.1's layout: 3·43 pattern lines, 3·5 type lines and 3 access method
    // lines per partition (and `#` lines on hints when given).
    let prot = std::fs::read_to_string(dir.join("sum.prot")).unwrap();
    let count = |start: &str| prot.lines().filter(|l| l.starts_with(start)).count();
    assert_eq!(count("n="), 3 * 43 * expected_parts, "{prot}");
    assert_eq!(
        count(" total pattern type: "),
        3 * 5 * expected_parts,
        "{prot}"
    );
    assert_eq!(
        count(" total access method: "),
        3 * expected_parts,
        "{prot}"
    );
    assert_eq!(count(" total partition: "), expected_parts, "{prot}");
    if !extra.contains(&"--hint") {
        assert_eq!(count("#"), 0, "{prot}");
    }
    let sizes: Vec<u64> = parts
        .iter()
        .map(|p| p["processes"].as_u64().unwrap())
        .collect();
    check_sum_with_2_1_rules(&dir.join("sum.sum"), &sizes);
    // Wall time within 1.1× the scheduled time plus start-up.
    assert!(
        wall <= 1.1 * scheduled + 15.0,
        "took {wall} s for {scheduled} s"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    (doc, stdout.into_owned())
}

#[test]
fn one_rank_runs_every_pattern() {
    let (doc, _) = check_run(1, &[]);
    assert_eq!(doc["invalid_reasons"].as_array().unwrap().len(), 1);
}

#[test]
fn two_ranks_run_every_pattern() {
    let (doc, stdout) = check_run(2, &[]);
    assert!(doc["partitions"][0].get("posix_baseline").is_none());
    assert_eq!(doc["check_every_call"], false);
    assert_eq!(doc["noshared"], false);
    assert_eq!(doc["drop_cache"], false);
    assert!(stdout.contains("flags             none"), "{stdout}");
}

#[test]
fn the_reference_protocol_checks_after_every_call() {
    let (doc, stdout) = check_run(2, &["--check-every-call"]);
    assert_eq!(doc["check_every_call"], true);
    assert!(stdout.contains("--check-every-call"), "{stdout}");
}

#[test]
fn three_ranks_run_every_pattern() {
    check_run(3, &[]);
}

#[test]
fn noshared_runs_type_1_without_the_shared_pointer_and_is_not_valid() {
    let (doc, stdout) = check_run(3, &["--noshared"]);
    assert_eq!(doc["noshared"], true);
    let reasons = doc["invalid_reasons"].as_array().unwrap();
    assert!(
        reasons
            .iter()
            .any(|r| r == "the shared file pointer was not used (--noshared)"),
        "{reasons:?}"
    );
    assert!(stdout.contains("the shared file pointer was not used (--noshared)"));
    assert!(stdout.contains("flags             --noshared"), "{stdout}");
    // Type 1 moved data in every access method (check_run saw every pattern run and read
    // back what was written, markers included).
    for a in ["write", "rewrite", "read"] {
        let type1: u64 = doc["partitions"][0]["access"][a]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["type"] == 1)
            .map(|p| p["bytes"].as_u64().unwrap())
            .sum();
        assert!(type1 > 0, "{a}");
    }
}

#[test]
fn drop_cache_is_used_and_said() {
    let (doc, stdout) = check_run(2, &["--drop-cache"]);
    assert_eq!(doc["drop_cache"], true);
    assert!(
        stdout.contains("--drop-cache (page cache dropped between write and read)"),
        "{stdout}"
    );
    // Dropping the cache does not make a run invalid.
    assert_eq!(doc["invalid_reasons"].as_array().unwrap().len(), 1);
}

#[test]
fn missing_path_stops_every_rank_with_the_path_named() {
    let _lock = mpitest::JobLock::acquire();
    let dir = scratch("missing");
    let missing = dir.join("nope");
    let (out, _) = run(
        2,
        &[
            "-T",
            "3",
            "-p",
            missing.to_str().unwrap(),
            "--json",
            dir.join("j.json").to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(missing.to_str().unwrap()) && stderr.contains("ENOENT"),
        "{stderr}"
    );
    assert!(
        mpitest::dir_entries(&dir).is_empty(),
        "left behind: {:?}",
        mpitest::dir_entries(&dir)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_options_are_rejected() {
    let _lock = mpitest::JobLock::acquire();
    let (out, _) = run(2, &["-T", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must be positive"));
    let (out, _) = run(2, &["--partitions", "3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("outside 1..2"));
    // 2.1's -adapt, refused as 2.1 refuses it for benchmarking; a negative -T.
    let (out, _) = run(2, &["-MB", "64", "-MT", "128", "-adapt"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr
            .matches("-adapt is not allowed for benchmarking")
            .count(),
        1,
        "{stderr}"
    );
    let (out, _) = run(2, &["-T", "-5"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("-T takes a positive number of seconds") && !stderr.contains("unexpected"),
        "{stderr}"
    );
}

#[test]
fn version_names_the_mpi_library_it_was_built_against_and_runs_on() {
    let _lock = mpitest::JobLock::acquire();
    let (out, _) = run(1, &["--version"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let mpi = mpitest::Installation::from_env();
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("b_eff_io "), "{stdout}");
    assert!(
        lines[1].starts_with(&format!("built against: {}", mpi.header_library_prefix()))
            && lines[1].contains("(mpi.h in /"),
        "{stdout}"
    );
    assert!(lines[2].starts_with("runs on: "), "{stdout}");
    // The library it runs on is the one it was built against: no warning.
    assert_eq!(lines.len(), 3, "{stdout}");
}

/// The installations whose hint reports the tests know: Open MPI 4.1 reports the hints
/// given at open, MPICH's ROMIO every hint it uses.
fn reports_hints_known() -> bool {
    matches!(
        mpitest::Installation::from_env(),
        mpitest::Installation::OpenMpi4
            | mpitest::Installation::Mpich4
            | mpitest::Installation::Mpich5
    )
}

/// A line of a 2.1 job script runs unchanged (T shortened), twice, as a script run again
/// would: `-MB` with `-MT`, the hints file `-i hints` relative to the working directory,
/// `-rewrite`, `-nounique`, `-e`, no `-f`: `b_eff_io.sum` and `b_eff_io.prot` where it
/// runs, read by 2.1's `beffio_eps` text stages after each run.
#[test]
fn a_2_1_job_script_line_runs_unchanged() {
    let _lock = mpitest::JobLock::acquire();
    let dir = scratch("job21");
    let data = dir.join("data");
    std::fs::create_dir(&data).unwrap();
    // A hint at every open, and one for the 1 kB patterns of the separate files under write
    // (MPI_File_set_info before pattern 21; ROMIO's data sieving, echoed by Open MPI).
    let hints = "# hints of the job script\n\
                 all all all on_open cb_buffer_size 1048576\n\
                 \n\
                 2 write separated 1024 romio_ds_write disable   # 1 kB only\n";
    std::fs::write(dir.join("hints"), hints).unwrap();
    let args = [
        "-MB",
        "64",
        "-MT",
        "128",
        "-T",
        "10",
        "-N",
        "2",
        "-p",
        data.to_str().unwrap(),
        "-rewrite",
        "-nounique",
        "-e",
        "5",
        "-i",
        "hints",
    ];
    let out = mpirun(2, &args).current_dir(&dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}\n{stdout}\n{stderr}", out.status);
    // The protocol and summary files where -f put them, the hints file untouched, the run
    // directory gone.
    assert_eq!(
        mpitest::dir_entries(&dir),
        ["b_eff_io.prot", "b_eff_io.sum", "data", "hints"]
    );
    assert!(mpitest::dir_entries(&data).is_empty());
    assert_eq!(std::fs::read_to_string(dir.join("hints")).unwrap(), hints);
    let sum = std::fs::read_to_string(dir.join("b_eff_io.sum")).unwrap();
    for needle in [
        "MEMORY_PER_PROCESSOR =   64 MBytes",
        "Maximum chunk size   =    2.000 MBytes\n",
        "-N  2 T=10, MT=128 MBytes -i hints, -nounique, -rewrite\n",
        "PREFIX=b_eff_io\n",
        "Summary of file I/O bandwidth accumulated on   2 processes with   64 MByte/PE\n",
        "   2 PEs      total-write   ",
        "  bw_pat2= ",
        "NOT VALID for comparison of different systems\n",
        // Release 2.1's own time rule, in the file that claims its layout.
        "  criterion 1: scheduled time 0.2 min >= 30 min -- NOT reached\n",
        "  criterion 3: error count (0) == 0 -- reached\n",
        ", NOT VALID (see above)\n",
    ] {
        assert!(sum.contains(needle), "missing {needle:?} in\n{sum}");
    }
    check_sum_with_2_1_rules(&dir.join("b_eff_io.sum"), &[2]);
    for text in [&*stdout] {
        for needle in [
            "memory/process    64 MB (67108864 bytes)",
            "MPART             2 MB",
            "machine memory    the job's 2 processes × 64 MB = 128 MB are 100.0 % of the \
             machine's 128 MB (-MT)",
            "partitions        2\n",
            "hints file 'hints': 2 hint lines",
            "line 2: all all all on_open cb_buffer_size 1048576",
            "line 4: 2 write separated 1024 romio_ds_write disable",
            "-rewrite (accepted: rewrite always runs)",
            "-nounique (accepted",
            "-e 5 (data errors named per pattern and rank)",
            "MPI-IO hints of partition n = 2",
            "  write   type 0 scatter   open: cb_buffer_size=1048576 → ",
            "  read    type 4 seg-coll  open: cb_buffer_size=1048576 → ",
            "  write   type 2 separate  pattern 21 (1 kB): romio_ds_write=disable → ",
            "b_eff_io = ",
            "NOT VALID (scheduled time T = 10 s is below 600 s)",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in\n{text}");
        }
        // One partition (-N 2), 15 files (3 access methods × 5 types).
        assert!(!text.contains("partition n = 1"), "{text}");
        assert_eq!(
            text.matches(" open: cb_buffer_size=1048576").count(),
            15,
            "{text}"
        );
        if reports_hints_known() {
            assert_eq!(
                text.matches(" open: cb_buffer_size=1048576 → 1048576")
                    .count(),
                15,
                "{text}"
            );
        }
    }
    let prot = std::fs::read_to_string(dir.join("b_eff_io.prot")).unwrap();
    assert!(prot.contains(
        "\n# memory: the job's 2 processes × 64 MB = 128 MB are 100.0 % of the machine's 128 MB (-MT)\n"
    ), "{prot}");
    assert!(
        prot.contains("# hints file line 4: 2 write separated 1024 romio_ds_write disable\n"),
        "{prot}"
    );
    assert!(
        prot.contains("# hint 2 write 2 open cb_buffer_size 1048576 "),
        "{prot}"
    );
    assert!(
        prot.contains("# hint 2 write 2 21 romio_ds_write disable "),
        "{prot}"
    );
    // Pattern 22 gets the value at open back, as the library reported it after the open
    // (Open MPI 4.1 reports no value for a key not given at open: nothing to set back).
    if mpitest::Installation::from_env() == mpitest::Installation::Mpich4 {
        assert!(
            prot.contains("# hint 2 write 2 22 romio_ds_write automatic automatic\n"),
            "{prot}"
        );
    }
    if reports_hints_known() {
        assert!(
            prot.contains("# hint 2 write 2 open cb_buffer_size 1048576 1048576\n"),
            "{prot}"
        );
    }
    let data_lines = prot.lines().filter(|l| l.starts_with("n=")).count();
    assert_eq!(data_lines, 3 * 43, "{prot}");
    assert!(prot.contains(" t_op="), "{prot}");

    // The script runs again: the earlier files are kept under numbered
    // names and said on stderr, the new ones take the names the script reads. `-d -keep`:
    // the later wins, so the run directory stays, and the header says -keep.
    let mut again: Vec<&str> = args.to_vec();
    again[5] = "4";
    again.extend(["-d", "-keep"]);
    let out = mpirun(2, &again).current_dir(&dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}\n{stderr}", out.status);
    assert_eq!(
        mpitest::dir_entries(&dir),
        [
            "b_eff_io.prot",
            "b_eff_io.prot.1",
            "b_eff_io.sum",
            "b_eff_io.sum.1",
            "data",
            "hints"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("b_eff_io.sum.1")).unwrap(),
        sum
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("b_eff_io.prot.1")).unwrap(),
        prot
    );
    for kept in ["b_eff_io.sum", "b_eff_io.prot"] {
        let note = format!(
            "b_eff_io: note: --prefix (default b_eff_io): the earlier {kept} is kept as {kept}.1; this run writes {kept}"
        );
        assert!(stderr.contains(&note), "missing {note:?} in\n{stderr}");
    }
    let sum = std::fs::read_to_string(dir.join("b_eff_io.sum")).unwrap();
    assert!(
        sum.contains("-N  2 T=4, MT=128 MBytes -i hints, -nounique, -rewrite, -keep\n"),
        "{sum}"
    );
    assert_eq!(
        mpitest::dir_entries(&data).len(),
        1,
        "the run directory stays"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A bad line of the hints file is bad input: exit code 2 on every rank, one message that
/// names the file, the line and the field, and nothing created.
#[test]
fn a_bad_hints_file_line_stops_every_rank_with_one_message() {
    let _lock = mpitest::JobLock::acquire();
    let dir = scratch("badhints");
    let hints = dir.join("hints");
    std::fs::write(
        &hints,
        "all all all on_open cb_nodes 1\n2 wirte all all cb_nodes 1\n",
    )
    .unwrap();
    let json = dir.join("out.json");
    let (out, _) = run(
        2,
        &[
            "-T",
            "3",
            "-p",
            dir.to_str().unwrap(),
            "-i",
            hints.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let expected = format!(
        "b_eff_io: error: hints file '{}', line 2, field 2 (access): 'wirte' is not one of \
         all, write, rewrite, read",
        hints.display()
    );
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.contains("hints file"))
            .collect::<Vec<_>>(),
        [expected.as_str()],
        "{stderr}"
    );
    assert_eq!(mpitest::dir_entries(&dir), ["hints"]);
    // A hints file that is not there.
    let (out, _) = run(
        2,
        &["-T", "3", "-p", dir.to_str().unwrap(), "-i", "nowhere"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr
            .matches("cannot read the hints file (-i) 'nowhere'")
            .count(),
        1,
        "{stderr}"
    );
    assert_eq!(mpitest::dir_entries(&dir), ["hints"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A hints file that is not a regular file of at most 1 MiB is refused at once through
/// the bounded reader: a FIFO (with no writer: an open that would block), `/dev/zero` (a
/// read that would never end) and a 2 MiB file each stop every rank within seconds with
/// exit code 2 and one message naming the file; nothing is created, nothing waited on.
#[test]
fn a_hints_file_that_is_not_a_small_regular_file_is_refused_at_once() {
    let _lock = mpitest::JobLock::acquire();
    let dir = scratch("oddhints");
    let fifo = dir.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("run mkfifo");
    assert!(made.success());
    let big = dir.join("big");
    let line = "all all all on_open cb_nodes 1\n";
    std::fs::write(&big, line.repeat((2 << 20) / line.len())).unwrap();
    let cases = [
        (
            fifo.clone(),
            "it is a FIFO, not a regular file; give the path of a regular file",
        ),
        (
            PathBuf::from("/dev/zero"),
            "it is a character device, not a regular file; give the path of a regular file",
        ),
        (
            big.clone(),
            "it holds more than the 1048576 bytes (1 MiB) a hints file may hold",
        ),
    ];
    for (hints, why) in cases {
        let (out, seconds) = run(
            2,
            &[
                "-T",
                "3",
                "-p",
                dir.to_str().unwrap(),
                "-i",
                hints.to_str().unwrap(),
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {stderr}", hints.display());
        assert!(seconds < 30.0, "{}: {seconds} s\n{stderr}", hints.display());
        let said: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("hints file"))
            .collect();
        assert_eq!(said.len(), 1, "{stderr}");
        let expected = format!(
            "b_eff_io: error: cannot read the hints file (-i) '{}': {why}",
            hints.display()
        );
        assert!(said[0].starts_with(&expected), "{stderr}");
        assert!(!stderr.contains("STALL"), "{stderr}");
        assert_eq!(mpitest::dir_entries(&dir), ["big", "fifo"]);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--hint` reaches every open, and the JSON holds what was given and reported.
#[test]
fn command_line_hints_are_given_and_reported() {
    let (doc, stdout) = check_run(2, &["--hint", "cb_buffer_size=1048576"]);
    assert_eq!(doc["hints"]["cb_buffer_size"], "1048576");
    assert!(doc["hints_file"].is_null());
    assert!(stdout.contains("MPI-IO hints      --hint cb_buffer_size=1048576 (every open)"));
    for p in doc["partitions"].as_array().unwrap() {
        let files = p["hints"].as_array().unwrap();
        assert_eq!(files.len(), 15, "{p}");
        for f in files {
            assert_eq!(f["given"]["cb_buffer_size"], "1048576", "{f}");
            if reports_hints_known() {
                assert_eq!(f["reported"]["cb_buffer_size"], "1048576", "{f}");
            }
            assert!(f["patterns"].as_array().unwrap().is_empty());
        }
    }
}

/// An interface of this host that a selection can name: up, not loopback, with an IPv4
/// address (the first such in name order). Read from `/sys/class/net` and `ip -o -4 addr`.
fn usable_interface() -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir("/sys/class/net")
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let read = |name: &str, file: &str| {
        std::fs::read_to_string(format!("/sys/class/net/{name}/{file}"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    names.into_iter().find(|name| {
        let has_ipv4 = Command::new("ip")
            .args(["-o", "-4", "addr", "show", "dev", name])
            .output()
            .is_ok_and(|o| {
                o.status.success() && String::from_utf8_lossy(&o.stdout).contains(" inet ")
            });
        name != "lo" && read(name, "type") != "772" && read(name, "operstate") == "up" && has_ipv4
    })
}

#[test]
fn strict_refuses_an_item_matching_nothing_on_every_rank_with_one_message() {
    let Some(interface) = usable_interface() else {
        mpitest::unavailable("no interface besides lo is up with an IPv4 address");
        return;
    };
    let _lock = mpitest::JobLock::acquire();
    let dir = scratch("strict");
    let list = format!("{interface},typo0");
    let (out, _) = run(
        2,
        &[
            "-T",
            "3",
            "-p",
            dir.to_str().unwrap(),
            "--enable",
            &list,
            "--strict",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let lines = |needle: &str| stderr.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(
        lines("b_eff_io: WARNING network selection: --enable: typo0 matches nothing on host"),
        1,
        "{stderr}"
    );
    assert_eq!(
        lines("b_eff_io: ERROR network selection: --strict refuses --enable"),
        1,
        "{stderr}"
    );
    assert!(
        mpitest::dir_entries(&dir).is_empty(),
        "no run directory: {:?}",
        mpitest::dir_entries(&dir)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_json_records_the_selection_per_host_with_what_matched_nothing() {
    let Some(interface) = usable_interface() else {
        mpitest::unavailable("no interface besides lo is up with an IPv4 address");
        return;
    };
    let _lock = mpitest::JobLock::acquire();
    let dir = scratch("selection");
    let json = dir.join("run.json");
    let list = format!("{interface},typo0");
    let (out, _) = run(
        2,
        &[
            "-T",
            "2",
            "--memory-per-process",
            "8M",
            "-p",
            dir.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "--enable",
            &list,
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let doc = mpitest::read_document(&json);
    let net = &doc["network"];
    assert_eq!(net["mode"], "enable", "{net}");
    assert_eq!(
        net["items"],
        serde_json::json!([interface, "typo0"]),
        "{net}"
    );
    // Both ranks on this host: one entry, with the interface and its settings.
    let hosts = net["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 1, "{net}");
    assert_eq!(hosts[0]["ranks"], 2, "{net}");
    assert!(
        hosts[0]["interfaces"][0]
            .as_str()
            .unwrap()
            .starts_with(&format!("{interface} ")),
        "{net}"
    );
    assert!(
        !hosts[0]["settings"].as_array().unwrap().is_empty(),
        "{net}"
    );
    let unmatched = net["unmatched"].as_array().unwrap();
    assert_eq!(unmatched.len(), 1, "{net}");
    assert!(unmatched[0].as_str().unwrap().contains("typo0"), "{net}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn mount_tmpfs(dir: &Path, opts: &str) -> bool {
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", opts, "tmpfs"])
        .arg(dir)
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        mpitest::unavailable(&format!(
            "cannot mount a tmpfs at {} (needs root)",
            dir.display()
        ));
    }
    ok
}

fn umount(dir: &Path) {
    let _ = Command::new("umount").arg(dir).status();
}

#[test]
fn full_disk_stops_cleanly_and_leaves_nothing() {
    let _lock = mpitest::JobLock::acquire();
    let dir = scratch("full");
    if !mount_tmpfs(&dir, "size=3m") {
        return;
    }
    let (out, _) = run(
        2,
        &[
            "-T",
            "6",
            "-p",
            dir.to_str().unwrap(),
            "--memory-per-process",
            "256M",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let left = mpitest::dir_entries(&dir);
    umount(&dir);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains(dir.to_str().unwrap()), "{stderr}");
    assert!(left.is_empty(), "left behind: {left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn read_only_path_is_refused() {
    let _lock = mpitest::JobLock::acquire();
    let dir = scratch("ro");
    if !mount_tmpfs(&dir, "ro,size=1m") {
        return;
    }
    let (out, _) = run(2, &["-T", "3", "-p", dir.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    umount(&dir);
    assert!(!out.status.success());
    assert!(
        stderr.contains(dir.to_str().unwrap()) && stderr.contains("EROFS"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// SIGTERM reaches every rank, as a batch system sends it at a time limit or a cancel
/// (Slurm signals every task and waits KillWait seconds before SIGKILL). A SIGTERM to
/// mpirun itself is forwarded with only a second before its SIGKILL
/// (odls_base_sigkill_timeout), so cleanup there is best-effort.
#[test]
fn sigterm_removes_the_files_and_fails() {
    let _lock = mpitest::JobLock::acquire();
    let dir = scratch("term");
    let child = mpirun(
        2,
        &[
            "-T",
            "60",
            "-p",
            dir.to_str().unwrap(),
            "--memory-per-process",
            "256M",
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Wait until the run directory has files in it.
    let start = Instant::now();
    while mpitest::dir_entries(&dir).is_empty() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        !mpitest::dir_entries(&dir).is_empty(),
        "the run never started"
    );
    // Only the ranks: their command lines start with the program (the launcher's and
    // `timeout`'s mention it too, further on).
    let pattern = format!("^{} .*{}", env!("CARGO_BIN_EXE_b_eff_io"), dir.display());
    let signalled = Command::new("pkill")
        .args(["-TERM", "-f", &pattern])
        .status()
        .unwrap();
    assert!(signalled.success(), "no rank found to signal");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    std::thread::sleep(Duration::from_millis(500));
    let left: Vec<String> = mpitest::dir_entries(&dir)
        .iter()
        .flat_map(|e| {
            let inner = dir.join(e);
            let mut all = vec![e.clone()];
            if inner.is_dir() {
                all.extend(
                    mpitest::dir_entries(&inner)
                        .into_iter()
                        .map(|i| format!("{e}/{i}")),
                );
            }
            all
        })
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}\n{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A 2-rank `-T 2` run in a fresh scratch folder `label` with the test aid `damage`
/// (`--test-corrupt-file`, `--test-truncate-file`): the folder, its JSON and the run.
fn damaged_run(label: &str, damage: &str) -> (PathBuf, PathBuf, Output) {
    let dir = scratch(label);
    let json = dir.join("out.json");
    let (out, _) = run(
        2,
        &[
            "-T",
            "2",
            "-p",
            dir.to_str().unwrap(),
            "--memory-per-process",
            "256M",
            "--json",
            json.to_str().unwrap(),
            damage,
        ],
    );
    (dir, json, out)
}

#[test]
fn data_corrupted_on_disk_is_found_and_fails_the_run() {
    let _lock = mpitest::JobLock::acquire();
    let (dir, json, out) = damaged_run("corrupt", "--test-corrupt-file");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("b_eff_io: data error, rank 0, pattern 17 (read)"),
        "{stderr}"
    );
    assert!(stderr.contains("data errors on read"), "{stderr}");
    let doc: serde_json::Value = mpitest::read_document(&json);
    assert_eq!(doc["valid"], false);
    assert!(doc["invalid_reasons"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r.as_str().unwrap().contains("data errors on read")));
    // Exactly one chunk per partition is bad: the first of rank 0's separate file.
    for p in doc["partitions"].as_array().unwrap() {
        for a in ["write", "rewrite", "read"] {
            for x in p["access"][a].as_array().unwrap() {
                let expected = u64::from(a == "read" && x["number"] == 17);
                assert_eq!(x["errors"], expected, "{a} {x}");
            }
        }
    }
    assert!(stdout.contains("NOT VALID"), "{stdout}");
    assert_eq!(mpitest::dir_entries(&dir), ["out.json"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_cut_short_is_said_to_be_cut_short_not_a_full_disk() {
    let _lock = mpitest::JobLock::acquire();
    let (dir, json, out) = damaged_run("truncate", "--test-truncate-file");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("b_eff_io: error: "))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("(read)") || errors[0].contains("read pattern"),
        "{}",
        errors[0]
    );
    assert!(
        errors[0].contains("type2.0")
            && errors[0].contains("the file ends before the bytes asked for"),
        "{}",
        errors[0]
    );
    assert!(!stderr.contains("full"), "{stderr}");
    assert!(!stderr.contains("shared file pointer"), "{stderr}");
    let doc: serde_json::Value = mpitest::read_document(&json);
    assert_eq!(doc["complete"], false);
    assert_eq!(mpitest::dir_entries(&dir), ["out.json"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn posix_baseline_repeats_the_largest_separate_file_pattern() {
    let (doc, stdout) = check_run(2, &["--posix-baseline"]);
    for p in doc["partitions"].as_array().unwrap() {
        let b = &p["posix_baseline"];
        let pattern = &p["access"]["write"][18];
        assert_eq!(b["pattern"], 18, "{b}");
        assert_eq!(pattern["type"], 2);
        assert_eq!(pattern["chunk_bytes"], doc["mpart_bytes"]);
        assert_eq!(b["bytes"], pattern["bytes"]);
        assert!(b["time_s"].as_f64().unwrap() > 0.0);
        assert!(b["sync_s"].as_f64().unwrap() <= b["time_s"].as_f64().unwrap());
    }
    assert!(stdout.contains("posix baseline: pattern 18's "), "{stdout}");
}
