//! The output files of a run (`--json`, `--csv`), on the `outfile` crate: reserved before
//! the first size, so that a bad path or a name in use fails at once — an existing file
//! is refused, never overwritten — and then written whole after every size to a
//! temporary file that is renamed into place, so that the file is always one complete
//! version and a run that dies midway (or whose disk fills up) leaves the sizes it
//! finished.

use std::path::Path;

use outfile::Reservation;

/// One output file of this run.
#[derive(Debug)]
pub struct OutputFile {
    option: &'static str,
    file: Reservation,
}

impl OutputFile {
    /// Reserves the file for `option` (`--json`, `--csv`): it must not exist, and no other
    /// live run may be writing it. A reservation left by a killed run is replaced
    /// ([`OutputFile::replaced_notice`] says so).
    pub fn create(option: &'static str, path: &Path) -> Result<OutputFile, outfile::Error> {
        Reservation::reserve(path).map(|file| OutputFile { option, file })
    }

    /// The line to print when a killed run's reservation was replaced.
    pub fn replaced_notice(&self) -> Option<String> {
        self.file.replaced_notice()
    }

    /// Puts `text` in place as the file's next complete version. On failure the previous
    /// version stays, and the error is the message to print.
    pub fn write(&mut self, text: &str) -> Result<(), String> {
        self.file.write(text.as_bytes()).map_err(|e| {
            let kept = match self.file.versions() {
                0 => "nothing was written to it".to_string(),
                _ => "it keeps its last complete version".to_string(),
            };
            format!(
                "ERROR {} {e}; {kept}, and the table on standard output is complete up to here",
                self.option
            )
        })
    }

    /// The option that named it.
    pub fn option(&self) -> &'static str {
        self.option
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        self.file.path()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_new_or_refused_and_then_rewritten_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        let mut file = OutputFile::create("--csv", &path).unwrap();
        assert_eq!(
            (file.option(), file.path(), file.replaced_notice()),
            ("--csv", path.as_path(), None)
        );
        file.write("a,b\n1,2\n").unwrap();
        file.write("a,b\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a,b\n");
        drop(file);
        let e = OutputFile::create("--csv", &path).unwrap_err();
        assert!(e.is_conflict() && e.to_string().contains("exists"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a,b\n");
        let e = OutputFile::create("--json", &dir.path().join("no/such/dir.json")).unwrap_err();
        assert!(
            !e.is_conflict() && e.to_string().contains("cannot create"),
            "{e}"
        );
    }
}
