//! The output files of a run (`--json`, `--csv`): created new before the first size, so
//! that a bad path fails at once — an existing file is an error, never overwritten — and
//! rewritten whole after every size, so that a run that dies midway leaves what it
//! finished.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

/// One output file of this run.
#[derive(Debug)]
pub struct OutputFile {
    option: &'static str,
    path: PathBuf,
}

impl OutputFile {
    /// Creates the file for `option` (`--json`, `--csv`), which must not exist yet; the
    /// error is the message to print.
    pub fn create(option: &'static str, path: &Path) -> Result<OutputFile, String> {
        match OpenOptions::new().write(true).create_new(true).open(path) {
            Ok(_) => Ok(OutputFile {
                option,
                path: path.to_path_buf(),
            }),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => Err(format!(
                "ERROR {option} {}: the file exists; sqmr never overwrites a file, so remove \
                 it or choose another path",
                path.display()
            )),
            Err(e) => Err(format!(
                "ERROR {option} {}: cannot create it: {e}",
                path.display()
            )),
        }
    }

    /// Replaces the contents with `text`, synced to disk.
    pub fn write(&self, text: &str) -> std::io::Result<()> {
        let mut file = File::create(&self.path)?;
        file.write_all(text.as_bytes())?;
        file.sync_data()
    }

    /// Removes the file (it is this run's own).
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }

    /// The option that named it.
    pub fn option(&self) -> &'static str {
        self.option
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_new_or_refused_and_then_rewritten_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        let file = OutputFile::create("--csv", &path).unwrap();
        file.write("a,b\n1,2\n").unwrap();
        file.write("a,b\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a,b\n");
        let e = OutputFile::create("--csv", &path).unwrap_err();
        assert!(e.contains("--csv") && e.contains("exists"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a,b\n");
        let e = OutputFile::create("--json", &dir.path().join("no/such/dir.json")).unwrap_err();
        assert!(
            e.starts_with("ERROR --json") && e.contains("cannot create"),
            "{e}"
        );
        file.remove();
        assert!(!path.exists());
    }
}
