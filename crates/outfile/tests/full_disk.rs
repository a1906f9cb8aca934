//! A real full disk: a tmpfs of 64 KiB, filled but for a few pages (needs root to mount;
//! elsewhere the test says `SKIPPED`, and under `CI=true` it fails).

use std::path::{Path, PathBuf};
use std::process::Command;

use outfile::Reservation;

/// A small tmpfs, unmounted when dropped.
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    /// Mounts a 64 KiB tmpfs and fills it but for `free_pages` pages of 4 KiB.
    fn with_free_pages(name: &str, free_pages: usize) -> Option<Tmpfs> {
        let dir = std::env::temp_dir().join(format!("outfile-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(&dir)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if !mounted {
            let _ = std::fs::remove_dir(&dir);
            mpitest::unavailable(&format!(
                "cannot mount a tmpfs at {} (needs root)",
                dir.display()
            ));
            return None;
        }
        let fs = Tmpfs { dir };
        std::fs::write(fs.dir.join("filler"), vec![0u8; (16 - free_pages) * 4096]).unwrap();
        Some(fs)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn names(dir: &Path) -> Vec<String> {
    mpitest::dir_entries(dir)
}

#[test]
fn a_full_disk_keeps_the_last_complete_version() {
    let Some(fs) = Tmpfs::with_free_pages("keep", 3) else {
        return;
    };
    let path = fs.dir.join("r.json");
    let mut r = Reservation::reserve(&path).unwrap();
    r.write(b"{\"sizes\": [0]}\n").unwrap();
    r.write(b"{\"sizes\": [0, 1]}\n").unwrap();
    // Two pages do not fit beside the reservation and the previous version.
    let big = format!("{{\"sizes\": [{}]}}\n", "0, ".repeat(3000));
    let e = r.write(big.as_bytes()).unwrap_err();
    assert_eq!(
        e.io_error().and_then(std::io::Error::raw_os_error),
        Some(28),
        "{e}"
    );
    assert!(
        e.to_string()
            .ends_with("cannot write it: No space left on device"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"sizes\": [0, 1]}\n"
    );
    assert_eq!(
        names(&fs.dir),
        [".r.json.xylem-reservation", "filler", "r.json"]
    );
    r.release().unwrap();
    assert_eq!(names(&fs.dir), ["filler", "r.json"]);
}

#[test]
fn a_full_disk_leaves_no_partial_first_version() {
    let Some(fs) = Tmpfs::with_free_pages("first", 2) else {
        return;
    };
    let path = fs.dir.join("plot.png");
    let mut r = Reservation::reserve(&path).unwrap();
    let e = r
        .write_with(|out| {
            for _ in 0..4 {
                out.write_all(&[7u8; 4096])?;
            }
            Ok(())
        })
        .unwrap_err();
    assert!(!e.is_conflict(), "{e}");
    drop(r);
    assert_eq!(names(&fs.dir), ["filler"]);
}

#[test]
fn a_disk_too_full_for_the_reservation_fails_at_once() {
    let Some(fs) = Tmpfs::with_free_pages("none", 0) else {
        return;
    };
    let e = Reservation::reserve(fs.dir.join("r.json")).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("cannot create it: No space left on device"),
        "{e}"
    );
    assert_eq!(names(&fs.dir), ["filler"]);
}
