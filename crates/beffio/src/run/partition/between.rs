//! Between rewrite and read: the page cache dropped (`--drop-cache`), and the test aids'
//! damage to rank 0's separate file.

use super::{PartitionRun, Stopped};
use crate::options::Sabotage;
use crate::run::{cache, rundir};
use mpi::traits::*;
use std::path::Path;

impl PartitionRun<'_> {
    /// The test aids (collective): `--test-corrupt-file` and `--test-truncate-file` done by
    /// rank 0 to its separate file, agreed on.
    pub(super) fn damage(&self, sabotage: Sabotage) -> Result<(), Stopped> {
        if sabotage == Sabotage::None {
            return Ok(());
        }
        let done = (self.setup.comm.rank() == 0)
            .then(|| {
                damage(&self.setup.dir.join("type2.0"), sabotage)
                    .err()
                    .map(|e| format!("{e} (in '{}')", self.setup.run_dir.display()))
            })
            .flatten();
        Stopped::agree(self.setup.comm, done)
    }

    /// Asks the kernel to drop the benchmark files' cached pages (each rank its own files;
    /// collective, agreed on).
    pub(super) fn drop_page_cache(&self) -> Result<(), Stopped> {
        let rank = self.setup.comm.rank();
        let mut names = vec![format!("type2.{rank}")];
        if rank == 0 {
            names.extend(["type0", "type1", "type3", "type4"].map(String::from));
        }
        let mut failure = None;
        for name in names {
            let path = self.setup.dir.join(name);
            if let Err(e) = cache::drop_file_cache(&path) {
                failure.get_or_insert(format!(
                    "cannot drop the cache of '{}': {}",
                    self.setup.run_dir.join(&path).display(),
                    rundir::cause(&e)
                ));
            }
        }
        Stopped::agree(self.setup.comm, failure)
    }
}

/// `--test-corrupt-file` replaces the first 8 bytes of `path` (a chunk's head marker) by
/// a value no marker has, `--test-truncate-file` cuts `path` to half its length, each
/// through the file system as any other writer would.
fn damage(path: &Path, sabotage: Sabotage) -> Result<(), String> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::OpenOptions::new().write(true).open(path);
    match sabotage {
        Sabotage::None => Ok(()),
        Sabotage::Corrupt => {
            file.and_then(|f| f.write_all_at(&0x5a5a_5a5a_5a5a_5a5au64.to_le_bytes(), 0))
        }
        Sabotage::Truncate => file.and_then(|f| f.set_len(f.metadata()?.len() / 2)),
    }
    .map_err(|e| format!("cannot damage '{}': {}", path.display(), rundir::cause(&e)))
}
