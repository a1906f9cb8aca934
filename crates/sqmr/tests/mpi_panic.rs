//! A panic on one rank ends the whole job with one message, instead of leaving the other
//! ranks waiting in a collective (benchkit's panic hook calls `MPI_Abort`). The hook's test
//! switch `XYLEM_TEST_PANIC_RANK` makes rank 1 panic right after start-up, while rank 0
//! goes on into the first collective.

use std::path::Path;
use std::time::Duration;

use mpitest::Installation;

#[test]
fn a_panic_on_one_rank_aborts_the_job_with_one_message() {
    for exe in [
        env!("CARGO_BIN_EXE_sqmr").to_string(),
        Path::new(env!("CARGO_BIN_EXE_sqmr"))
            .with_file_name("b_eff_io")
            .display()
            .to_string(),
    ] {
        let exe = Path::new(&exe);
        if !exe.exists() {
            panic!("{} is missing: build the workspace first", exe.display());
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().display().to_string();
        let args: Vec<&str> = if exe.ends_with("sqmr") {
            vec!["--num_iters", "5", "--max_msgsize", "8"]
        } else {
            vec!["-T", "3", "-p", &path]
        };
        let job = mpitest::launch_with_env(
            Installation::from_env(),
            2,
            exe,
            &args,
            &[("XYLEM_TEST_PANIC_RANK", "1")],
            Duration::from_secs(60),
        );
        assert!(!job.timed_out, "{}: the job hung: {job:#?}", exe.display());
        assert!(
            job.code.is_some_and(|c| c != 0),
            "{}: {job:#?}",
            exe.display()
        );
        let lines: Vec<&str> = job
            .stderr
            .lines()
            .filter(|l| l.contains("rank 1: internal error"))
            .collect();
        assert_eq!(lines.len(), 1, "{}: {}", exe.display(), job.stderr);
        assert!(
            lines[0].contains("XYLEM_TEST_PANIC_RANK=1 asked this rank to panic"),
            "{}",
            lines[0]
        );
        eprintln!(
            "{}: exit {:?} after {:.1} s",
            exe.display(),
            job.code,
            job.elapsed.as_secs_f64()
        );
    }
}
