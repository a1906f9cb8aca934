//! How fast the kernel copies between the page cache and a buffer, by where the buffer
//! begins: on a page boundary (as b_eff_io's and IOR's buffers do) or 16 bytes past one
//! (where `malloc` puts a block of MiBs). Writes a file of SIZE MiB in DIR, then, in
//! interleaved rounds, reads it whole with `pread`s of each chunk size into either buffer
//! and writes it whole from either; prints the median GB/s of each as a Markdown table.
//!
//! ```text
//! cargo run --release -p beffio --example page_copy -- DIR [SIZE_MIB] [ROUNDS]
//! ```

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::time::Instant;

const PAGE: usize = 4096;
const CHUNKS: [usize; 3] = [32 << 10, 1 << 20, 16 << 20];
const OFFSETS: [usize; 2] = [0, 16];

fn usage() -> ! {
    eprintln!("usage: page_copy DIR [SIZE_MIB (256)] [ROUNDS (7)]");
    std::process::exit(2)
}

fn number(arg: Option<String>, default: usize) -> usize {
    arg.map_or(default, |a| a.parse().unwrap_or_else(|_| usage()))
}

/// Seconds to move the whole file (`size` bytes) in calls of `chunk` bytes through `buf`.
fn pass(file: &File, buf: &mut [u8], chunk: usize, size: usize, write: bool) -> f64 {
    let t0 = Instant::now();
    for offset in (0..size).step_by(chunk) {
        let part = &mut buf[..chunk.min(size - offset)];
        let done = if write {
            file.write_all_at(part, offset as u64)
        } else {
            file.read_exact_at(part, offset as u64)
        };
        done.unwrap_or_else(|e| panic!("page_copy: at byte {offset}: {e}"));
    }
    t0.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| usage());
    let size = number(args.next(), 256) << 20;
    let rounds = number(args.next(), 7).max(1);
    let path = std::path::Path::new(&dir).join(format!("page_copy.{}", std::process::id()));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("page_copy: cannot create {}: {e}", path.display()));
    // A buffer of the largest chunk, a page of slack, every byte written (no zero pages).
    let largest = CHUNKS[CHUNKS.len() - 1];
    let mut storage = vec![0x5au8; largest + 2 * PAGE];
    let aligned = storage.as_ptr().align_offset(PAGE);
    pass(&file, &mut storage[aligned..], largest, size, true);
    file.sync_all().expect("page_copy: fsync");
    // seconds[(write, chunk, offset)]
    let mut seconds = std::collections::BTreeMap::<(bool, usize, usize), Vec<f64>>::new();
    for _ in 0..rounds {
        for write in [false, true] {
            for chunk in CHUNKS {
                for offset in OFFSETS {
                    let buf = &mut storage[aligned + offset..];
                    let s = pass(&file, buf, chunk, size, write);
                    seconds.entry((write, chunk, offset)).or_default().push(s);
                }
            }
        }
    }
    drop(file);
    std::fs::remove_file(&path).expect("page_copy: remove the file");
    println!("| access | chunk | on a page, GB/s | 16 bytes past, GB/s | ratio |");
    println!("|---|---:|---:|---:|---:|");
    for write in [false, true] {
        for chunk in CHUNKS {
            let rate =
                |offset| size as f64 / median(seconds[&(write, chunk, offset)].clone()) / 1e9;
            let (on, past) = (rate(0), rate(16));
            println!(
                "| {} | {} KiB | {on:.1} | {past:.1} | {:.2} |",
                if write { "write" } else { "read" },
                chunk >> 10,
                past / on
            );
        }
    }
}
