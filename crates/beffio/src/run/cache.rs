//! `--drop-cache`: asks the kernel to forget the benchmark files' cached pages, so that the
//! read that follows has to fetch them from the file system.

use std::os::fd::AsRawFd;
use std::path::Path;

/// Writes back the file's dirty pages, then drops its clean ones from the page cache
/// (`fsync` + `posix_fadvise(POSIX_FADV_DONTNEED)` over the whole file). Pages that another
/// process maps or dirties again stay; the kernel treats the advice as a request.
pub fn drop_file_cache(path: &Path) -> std::io::Result<()> {
    let f = std::fs::File::open(path)?;
    f.sync_all()?;
    nix::fcntl::posix_fadvise(
        f.as_raw_fd(),
        0,
        0,
        nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED,
    )
    .map_err(std::io::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::process::Command;

    /// Resident bytes of `path` as `fincore` (util-linux) counts them, or `None` without it.
    fn resident_bytes(path: &Path) -> Option<u64> {
        let out = Command::new("fincore")
            .args(["--bytes", "--noheadings", "--output", "RES"])
            .arg(path)
            .output()
            .ok()?;
        assert!(out.status.success(), "fincore failed: {out:?}");
        Some(String::from_utf8_lossy(&out.stdout).trim().parse().unwrap())
    }

    #[test]
    fn the_pages_of_a_written_file_leave_the_cache() {
        let dir = std::env::temp_dir().join(format!("beffio-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fs = nix::sys::statfs::statfs(&dir).unwrap().filesystem_type();
        if fs == nix::sys::statfs::TMPFS_MAGIC {
            std::fs::remove_dir_all(&dir).unwrap();
            mpitest::unavailable(&format!(
                "{} is on tmpfs, whose pages never leave memory",
                dir.display()
            ));
            return;
        }
        let path = dir.join("f");
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(&vec![7u8; 8 << 20]).unwrap();
        drop(f);
        let Some(before) = resident_bytes(&path) else {
            std::fs::remove_dir_all(&dir).unwrap();
            mpitest::unavailable(
                "fincore (util-linux) is not installed, cannot see the page cache",
            );
            return;
        };
        assert!(before > 0, "a file just written has no cached bytes");
        drop_file_cache(&path).unwrap();
        let after = resident_bytes(&path).unwrap();
        let missing = drop_file_cache(&dir.join("missing"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            after * 8 < before,
            "{after} of {before} bytes still cached after the drop"
        );
        assert_eq!(missing.unwrap_err().kind(), std::io::ErrorKind::NotFound);
    }
}
