//! Rank 0's part of `sqmr --scan` at scale, on synthetic figures: the first judgement of
//! every pair, the re-measurement rounds of the suspects, and the verdict with their
//! re-measurements (`scan::suspects`, `Suspects::rounds`, `scan::assemble`). The other
//! ranks wait while rank 0 does it, once after the scan's rounds and once after the
//! re-measurements.
//!
//! For 1,000, 10,000 and 30,000 nodes in 16 rounds and in the default 64, the pairs wobbling by
//! ±25 % and a third of them just below the threshold (each one a figure the outlier test
//! weighs), one node slow: the seconds of the whole judgement, median of 5.
//!
//! `cargo bench -p sqmr --bench scan_verdict` prints them and appends them to
//! `bench/out/scan-verdict.txt`.

use std::io::Write;
use std::time::Instant;

use sqmr::scan::{assemble, suspects, synthetic, DEFAULT_ROUNDS, DEFAULT_THRESHOLD};

/// One whole judgement of `n` nodes in `rounds` rounds: seconds, and whether the slow node
/// was the one flagged.
fn judge(n: usize, rounds: usize) -> (f64, bool) {
    let slow = n / 3;
    let first = synthetic::first_rounds_in(n, slow, rounds);
    let start = Instant::now();
    let suspects = suspects(n, &first, DEFAULT_THRESHOLD);
    let again = synthetic::remeasured_after(&suspects.rounds(rounds), slow, rounds);
    let outcome = assemble(n, &first, &again, DEFAULT_THRESHOLD);
    (
        start.elapsed().as_secs_f64(),
        outcome.flagged_nodes == vec![slow],
    )
}

fn main() {
    let mut lines = vec![format!(
        "# {} scan_verdict: nodes, rounds, pairs, seconds (median of 5), slow node found",
        chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ")
    )];
    for rounds in [synthetic::ROUNDS, DEFAULT_ROUNDS] {
        for n in [1_000, 10_000, 30_000] {
            let mut runs: Vec<(f64, bool)> = (0..5).map(|_| judge(n, rounds)).collect();
            runs.sort_by(|a, b| a.0.total_cmp(&b.0));
            let found = runs.iter().all(|r| r.1);
            let pairs = n / 2 * rounds;
            lines.push(format!("{n} {rounds} {pairs} {:.3} {found}", runs[2].0));
        }
    }
    let text = lines.join("\n") + "\n";
    print!("{text}");
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../bench/out/scan-verdict.txt"
    );
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = written {
        eprintln!("scan_verdict: cannot append to {path}: {e}");
        std::process::exit(1);
    }
}
