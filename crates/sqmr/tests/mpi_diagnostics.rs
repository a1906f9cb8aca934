//! Every diagnostic under a real launcher: the message once, the same non-zero exit on
//! every rank, no MPI error noise, no hang.

mod common;

use common::sqmr;

fn assert_diagnostic(ranks: usize, args: &[&str], message: &str) {
    let job = sqmr(ranks, args);
    assert!(!job.success(), "{args:?} should fail: {job:#?}");
    assert_eq!(job.code, Some(2), "{args:?}: {job:#?}");
    let count = job.stderr.lines().filter(|l| l.contains(message)).count();
    assert_eq!(
        count, 1,
        "{args:?}: '{message}' once on stderr:\n{}",
        job.stderr
    );
    assert!(
        !job.stderr.contains("MPI_ERR"),
        "no MPI error storm: {}",
        job.stderr
    );
    assert!(
        !job.stdout
            .lines()
            .any(|l| !l.starts_with('#') && !l.is_empty()),
        "no rows: {}",
        job.stdout
    );
}

#[test]
fn the_references_seven_diagnostics() {
    let cases: [(usize, &[&str], &str); 7] = [
        (1, &[], "ERROR Must specify num_cores > 0"),
        (2, &["--num_nbors=0"], "ERROR Must specify num_nbors > 0"),
        (2, &["--num_iters", "0"], "ERROR Must specify num_iters > 0"),
        (
            3,
            &["--num_cores=2"],
            "ERROR need exactly 4 ranks for num_cores 2 and num_nbors 1, have 3",
        ),
        (2, &["--win_size=-4"], "ERROR Must specify win_size > 0"),
        (
            2,
            &["--min_msgsize", "-5"],
            "ERROR Must specify min_msgsize >= 0",
        ),
        (
            2,
            &["--min_msgsize=64", "--max_msgsize=8"],
            "ERROR Must specify max_msgsize >= min_msgsize",
        ),
    ];
    for (ranks, args, message) in cases {
        assert_diagnostic(ranks, args, message);
    }
}

#[test]
fn diagnostics_come_with_a_usage_hint() {
    let job = sqmr(2, &["--num_nbors=0"]);
    assert!(
        job.stderr.contains("Usage: sqmr [--num_cores N]"),
        "{}",
        job.stderr
    );
}

#[test]
fn the_manuals_huge_window_names_the_memory_it_needs() {
    assert_diagnostic(
        2,
        &["--win_size=2147483648"],
        "ERROR win_size 2147483648 with num_nbors 1",
    );
    let job = sqmr(2, &["--win_size=2147483648"]);
    assert!(job.stderr.contains("GiB per core rank"), "{}", job.stderr);
}

#[test]
fn messages_past_the_int_count_are_refused() {
    assert_diagnostic(
        2,
        &["--max_msgsize=4G"],
        "ERROR max_msgsize 4294967296 is larger than 2147483647 bytes",
    );
}

#[test]
fn bad_values_and_unknown_options_are_usage_errors() {
    for (args, needle) in [
        (&["--num_cores=12abc"][..], "'12abc'"),
        (&["--win_size", "1e3"][..], "'1e3'"),
        (&["--num_iters="][..], "--num_iters"),
        (&["--max_msgsize=4294967297X"][..], "'4294967297X'"),
        (&["--no_such_option=1"][..], "--no_such_option"),
    ] {
        assert_diagnostic(2, args, needle);
    }
}

/// An interface of this host that a selection can name: up, not loopback, with an IPv4
/// address (the first such in name order, so the choice is stable). Read from
/// `/sys/class/net` and `ip -o -4 addr`.
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
        let has_ipv4 = std::process::Command::new("ip")
            .args(["-o", "-4", "addr", "show", "dev", name])
            .output()
            .is_ok_and(|o| {
                o.status.success() && String::from_utf8_lossy(&o.stdout).contains(" inet ")
            });
        name != "lo" && read(name, "type") != "772" && read(name, "operstate") == "up" && has_ipv4
    })
}

#[test]
fn an_item_matching_nothing_is_warned_about_once_and_strict_refuses_it() {
    let Some(interface) = usable_interface() else {
        mpitest::unavailable("no interface besides lo is up with an IPv4 address");
        return;
    };
    let list = format!("{interface},typo0");
    let args = ["--enable", &list, "--num_iters", "5", "--max_msgsize", "8"];
    let job = sqmr(2, &args);
    assert!(job.success(), "{args:?}: {job:#?}");
    let warnings: Vec<&str> = job.stderr.lines().filter(|l| l.contains("typo0")).collect();
    assert_eq!(
        warnings.len(),
        1,
        "one warning for two ranks on one host: {job:#?}"
    );
    assert!(
        warnings[0]
            .starts_with("WARNING network selection: --enable: typo0 matches nothing on host "),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[0].contains(&interface),
        "it names what the host has: {}",
        warnings[0]
    );
    // One host: no pair to warn about.
    assert!(
        !job.stderr.contains("share no selected network"),
        "{}",
        job.stderr
    );
    assert!(
        job.stdout.contains(&format!(
            "# network selection (rank 0's host): --enable {}",
            list.to_ascii_lowercase()
        )),
        "{}",
        job.stdout
    );
    let table = common::parse(&job.stdout);
    assert!(!table.rows.is_empty(), "{}", job.stdout);

    // With --strict: exit 2 on every rank, the warning and the refusal once, no rows.
    let mut strict = args.to_vec();
    strict.push("--strict");
    assert_diagnostic(
        2,
        &strict,
        "ERROR network selection: --strict refuses --enable",
    );
    let job = sqmr(2, &strict);
    let warned = job
        .stderr
        .lines()
        .filter(|l| l.contains("typo0 matches nothing on host"))
        .count();
    assert_eq!(warned, 1, "{}", job.stderr);
    assert!(
        job.stderr
            .contains("1 item selects nothing on a host; see the warnings above"),
        "{}",
        job.stderr
    );
}

#[test]
fn a_selection_that_matches_is_checked_in_silence() {
    let Some(interface) = usable_interface() else {
        mpitest::unavailable("no interface besides lo is up with an IPv4 address");
        return;
    };
    let job = sqmr(
        2,
        &[
            "--enable",
            &interface,
            "--strict",
            "--num_iters",
            "5",
            "--max_msgsize",
            "8",
        ],
    );
    assert!(job.success(), "{job:#?}");
    assert!(
        !job.stderr.contains("network selection"),
        "nothing to warn about: {}",
        job.stderr
    );
}
