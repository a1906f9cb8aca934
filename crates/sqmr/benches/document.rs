//! The cost of sqmr's `--json` file in a large job, on synthetic ranks: the document is
//! put in place as a new complete version after every size (a run cut short keeps what it
//! measured), and its per-rank data (every rank's host) come before the sizes, so that
//! each version shares them with the one before and [`outfile::Reservation::write`]
//! copies them in the kernel instead of writing them again.
//!
//! For 100,000 ranks on 100,000 hosts and 102,400 ranks on 800 hosts (128 core ranks,
//! the 26 sizes of 0 B to 16 MiB, one sample each, as `--repeat 1`): the final document's
//! size and bytes per rank, the bytes the process wrote over the run's 27 versions
//! (after each size, then the final one), and the seconds all versions took, written as
//! whole files (`write_with`) and with the shared head copied (`write`), interleaved.
//!
//! `cargo bench -p sqmr --bench document` prints the medians of 5 runs of each and writes
//! them to `bench/out/document.txt`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use outfile::Reservation;
use sqmr::config::Config;
use sqmr::placement::Placement;
use sqmr::report::json::{Document, Environment, SizeResult};
use sqmr::schedule::steps;
use sqmr::stats::{Measured, Stop};

const CORES: usize = 128;

fn document(ranks: usize, per_host: usize) -> (Document, Vec<SizeResult>) {
    let hosts: Vec<String> = (0..ranks)
        .map(|r| format!("nid{:06}", r / per_host))
        .collect();
    let config = Config {
        num_cores: CORES,
        num_nbors: ranks / CORES - 1,
        num_iters: 4096,
        win_size: 10,
        min_msgsize: 0,
        max_msgsize: 16 << 20,
        validate: false,
        repeat: 1,
        precision: None,
    };
    let environment = Environment {
        mpi_library: "Open MPI v4.1.4".into(),
        ranks,
        core_hosts: hosts[..CORES].to_vec(),
        hosts: hosts.clone(),
    };
    let placement = Placement {
        core_node: hosts[0].clone(),
        cores_elsewhere: vec![],
        neighbours_on_core_node: vec![],
    };
    let started = "2026-12-05T11:00:00+00:00".to_string();
    let mut doc = Document::new(config, started.clone(), environment, placement);
    doc.provenance = Some(benchkit::provenance::describe(
        "sqmr", "bench", &hosts, started,
    ));
    let sizes = steps(0, 16 << 20, 4096)
        .into_iter()
        .enumerate()
        .filter_map(|(i, step)| {
            let times = (0..CORES)
                .map(|c| 0.5 + (i * CORES + c) as f64 * 1e-7)
                .collect();
            let measured = Measured {
                samples: vec![times],
                stop: Stop::Repeat,
                wall_s: 1.0,
            };
            SizeResult::from_samples(step, (2 * CORES * 10) as f64 * step.iters as f64, measured)
        })
        .collect();
    (doc, sizes)
}

/// One run's versions, as sqmr writes them: after every size, then the final one.
/// Returns the seconds and the bytes the process wrote.
fn run(dir: &Path, start: &Document, sizes: &[SizeResult], share: bool) -> (f64, u64) {
    let path = dir.join(if share { "shared.json" } else { "whole.json" });
    let _ = std::fs::remove_file(&path);
    let mut file = Reservation::reserve(&path).expect("reserve");
    let mut doc = start.clone();
    let mut written = 0;
    let t = Instant::now();
    let mut put = |doc: &Document, written: &mut u64| {
        let text = doc.to_json();
        if share {
            file.write(text.as_bytes()).expect("write");
            *written += file.last_write().written;
        } else {
            file.write_with(|out| out.write_all(text.as_bytes()))
                .expect("write");
            *written += text.len() as u64;
        }
    };
    for size in sizes {
        doc.sizes.push(size.clone());
        put(&doc, &mut written);
    }
    doc.complete = true;
    doc.mark_ended();
    put(&doc, &mut written);
    let seconds = t.elapsed().as_secs_f64();
    let read = std::fs::read_to_string(&path).expect("read back");
    assert_eq!(
        read,
        doc.to_json(),
        "the last version is the final document"
    );
    file.release().expect("release");
    (seconds, written)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut out = String::new();
    for (ranks, per_host) in [(100_000, 1), (102_400, 128)] {
        let (start, sizes) = document(ranks, per_host);
        let (mut whole_s, mut shared_s) = (Vec::new(), Vec::new());
        let (mut whole_b, mut shared_b) = (0, 0);
        for _ in 0..5 {
            let (s, b) = run(dir.path(), &start, &sizes, false);
            whole_s.push(s);
            whole_b = b;
            let (s, b) = run(dir.path(), &start, &sizes, true);
            shared_s.push(s);
            shared_b = b;
        }
        let mut last = start.clone();
        last.sizes = sizes.clone();
        let final_len = last.to_json().len();
        let (w, s) = (median(whole_s), median(shared_s));
        let line = format!(
            "{ranks} ranks on {} hosts, {} versions: final document {:.2} MB ({:.1} B per \
             rank); written whole {:.1} MB in {w:.3} s, head shared {:.1} MB in {s:.3} s \
             (ratio {:.2}; medians of 5, interleaved)\n",
            ranks / per_host,
            sizes.len() + 1,
            final_len as f64 / 1e6,
            final_len as f64 / ranks as f64,
            whole_b as f64 / 1e6,
            shared_b as f64 / 1e6,
            s / w,
        );
        print!("{line}");
        out += &line;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/out");
    std::fs::create_dir_all(&dir).expect("bench/out");
    std::fs::write(dir.join("document.txt"), out).expect("bench/out/document.txt");
}
