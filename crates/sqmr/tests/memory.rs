//! Memory is checked per node: ranks sharing a host add up. Each rank alone fits in the
//! host's MemAvailable, the two together do not, and sqmr refuses before allocating
//! (exit 2 on every rank, one message naming the host and both figures).

use std::path::Path;
use std::time::Duration;

use mpitest::Installation;

fn mem_available() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("MemAvailable:"))
        .expect("MemAvailable in /proc/meminfo");
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

#[test]
fn ranks_on_one_host_are_added_up() {
    // With --validate a rank holds max_msgsize · (win_size + 3) bytes of buffers
    // (num_nbors 1: a send buffer, a receive buffer per slot, the pattern's base and the
    // expected message): choose win_size so that one rank needs about 60 % of
    // MemAvailable.
    let message: u64 = 2_147_483_647;
    let available = mem_available();
    let win = (available * 6 / 10 / message).saturating_sub(3);
    if win < 1 {
        mpitest::unavailable(&format!(
            "MemAvailable is {available} bytes: too little for a 2 GiB message test"
        ));
        return;
    }
    let win_arg = format!("--win_size={win}");
    let size = format!("{message}");
    let job = mpitest::launch(
        Installation::from_env(),
        2,
        Path::new(env!("CARGO_BIN_EXE_sqmr")),
        &[
            "--validate",
            &win_arg,
            "--min_msgsize",
            &size,
            "--max_msgsize",
            &size,
        ],
        Duration::from_secs(60),
    );
    assert_eq!(job.code, Some(2), "{job:#?}");
    let errors: Vec<&str> = job
        .stderr
        .lines()
        .filter(|l| l.starts_with("ERROR host "))
        .collect();
    assert_eq!(errors.len(), 1, "{}", job.stderr);
    assert!(
        errors[0].contains("its 2 ranks need") && errors[0].contains("MemAvailable is"),
        "{}",
        errors[0]
    );
    assert!(job.stdout.is_empty(), "{}", job.stdout);
}
