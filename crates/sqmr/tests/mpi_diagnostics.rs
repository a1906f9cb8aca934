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
