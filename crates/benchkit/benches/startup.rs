//! Rank 0's start-up work for a large job, on synthetic ranks: the memory check over
//! every rank's need ([`benchkit::memory::shortage`]) and the provenance's host list
//! ([`benchkit::provenance::hosts_of`]), at 100,000 ranks on 100,000 hosts and at
//! 102,400 ranks on 800 hosts (128 per host). Every other rank waits while rank 0 does
//! this, so it must stay linear in the ranks.
//!
//! `cargo bench -p benchkit --bench startup [-- RANKS...]` prints the median of 5 runs of
//! each and writes them to `bench/out/startup.txt`.

use benchkit::memory::{shortage, CgroupLimit, NodeMemory, RankNeed};
use benchkit::provenance::hosts_of;
use std::path::PathBuf;
use std::time::Instant;

fn ranks(count: usize, per_host: usize) -> Vec<RankNeed> {
    (0..count)
        .map(|r| RankNeed {
            host: format!("nid{:06}", r / per_host),
            need: 1 << 30,
            memory: NodeMemory {
                available: Some(512 << 30),
                cgroup: Some(CgroupLimit {
                    bytes: 1 << 40,
                    file: PathBuf::from(format!(
                        "/sys/fs/cgroup/slurm/job_{}/memory.max",
                        r / per_host
                    )),
                }),
            },
        })
        .collect()
}

fn median_seconds(mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[2]
}

fn main() {
    let mut cases = vec![(100_000, 1), (102_400, 128)];
    let asked: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if !asked.is_empty() {
        cases = asked.iter().map(|&n| (n, 1)).collect();
    }
    let mut out = String::new();
    for (count, per_host) in cases {
        let all = ranks(count, per_host);
        let names: Vec<String> = all.iter().map(|r| r.host.clone()).collect();
        let memory = median_seconds(|| assert!(shortage(&all).is_none()));
        let hosts = median_seconds(|| assert_eq!(hosts_of(&names).len(), count / per_host));
        let line = format!(
            "{count} ranks on {} hosts: memory check {memory:.4} s, host list {hosts:.4} s \
             (medians of 5)\n",
            count / per_host
        );
        print!("{line}");
        out += &line;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/out");
    std::fs::create_dir_all(&dir).expect("bench/out");
    std::fs::write(dir.join("startup.txt"), out).expect("bench/out/startup.txt");
}
