//! The run directory: created fresh under `--path`, removed unless `--keep`.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// Creates `<base>/b_eff_io.<timestamp>.<pid>/`; fails (naming the path) if `base` is
/// missing, not a directory, not writable, or the directory exists.
pub fn create(base: &Path, stamp: &str, pid: u32) -> Result<PathBuf, String> {
    let meta = std::fs::metadata(base)
        .map_err(|e| format!("cannot use --path '{}': {}", base.display(), cause(&e)))?;
    if !meta.is_dir() {
        return Err(format!(
            "cannot use --path '{}': not a directory",
            base.display()
        ));
    }
    let dir = base.join(format!("b_eff_io.{stamp}.{pid}"));
    std::fs::create_dir(&dir).map_err(|e| {
        format!(
            "cannot create the run directory '{}' under --path '{}': {}",
            dir.display(),
            base.display(),
            cause(&e)
        )
    })?;
    Ok(dir)
}

/// Removes the run directory and everything in it. Other ranks may be removing it at
/// the same time (after a signal) or still creating files in it, so a failed attempt is
/// retried for up to a second, until the directory is gone.
pub fn remove(dir: &Path) -> Result<(), String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    loop {
        match std::fs::remove_dir_all(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound && !dir.exists() => return Ok(()),
            Err(e) if std::time::Instant::now() >= deadline => {
                return Err(format!("cannot remove '{}': {}", dir.display(), cause(&e)))
            }
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(2)),
        }
    }
}

/// A plain description of an I/O error (with the errno text).
pub fn cause(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(28) => "no space left on device (ENOSPC)".into(),
        Some(30) => "read-only file system (EROFS)".into(),
        Some(13) => "permission denied (EACCES)".into(),
        Some(2) => "no such file or directory (ENOENT)".into(),
        Some(17) => "already exists (EEXIST)".into(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_fresh_and_removed() {
        let base = std::env::temp_dir().join(format!("beffio-rundir-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let dir = create(&base, "t", 1).unwrap();
        assert!(dir.is_dir());
        assert!(create(&base, "t", 1)
            .unwrap_err()
            .contains("already exists"));
        std::fs::write(dir.join("f"), b"x").unwrap();
        remove(&dir).unwrap();
        assert!(!dir.exists());
        let err = create(&base.join("missing"), "t", 1).unwrap_err();
        assert!(err.contains("missing") && err.contains("ENOENT"), "{err}");
        std::fs::write(base.join("file"), b"x").unwrap();
        assert!(create(&base.join("file"), "t", 1)
            .unwrap_err()
            .contains("not a directory"));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
