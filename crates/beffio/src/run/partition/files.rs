//! A type's file: its path, its opening, the views and hints of its patterns, and the
//! messages that name it.

use super::{context, PartitionRun, Stopped};
use crate::hints::{before_pattern, FileHints, Hint, PatternHints};
use crate::patterns::{Pattern, PatternType};
use crate::schedule::Access;
use mpi::topology::SimpleCommunicator;
use mpiio::{AccessMode, Datatype, File};
use std::path::{Path, PathBuf};

pub(super) struct Open {
    pub(super) file: File,
    /// The file's path as MPI-IO was given it.
    pub(super) path: PathBuf,
    /// Type 0's (and `--noshared` type 1's) displacement: bytes all ranks wrote before.
    pub(super) base: u64,
    /// Types 3 and 4: the segment of each rank.
    pub(super) segment: u64,
    /// Bytes this rank has written through this handle.
    pub(super) written: u64,
    /// The hints given at open and as the library reported them after.
    pub(super) hints: Option<FileHints>,
    /// Keys that a pattern's own hints changed from their values at open.
    changed: Vec<String>,
}

impl PartitionRun<'_> {
    /// The path of `file` (as MPI-IO sees it) for messages.
    pub(super) fn shown(&self, file: &Path) -> PathBuf {
        self.setup.run_dir.join(file)
    }

    /// The message of an MPI-IO failure, naming the file by its full path. A run (or
    /// partition) directory removed or replaced since the last check is the cause, said
    /// first: the library only sees a file that is not there.
    pub(super) fn io_message(&self, e: mpiio::Error) -> String {
        let full = self.shown(Path::new(e.file())).display().to_string();
        let e = e.with_file(full);
        if let Some(gone) = self
            .setup
            .held
            .missing()
            .or_else(|| self.partition_missing(&e))
        {
            format!("{gone} ({e})")
        } else if let Some(cause) = e.cause() {
            format!("{e} ({})", cause.advice())
        } else {
            e.to_string()
        }
    }

    /// After a "no such file" failure: whether this partition's directory is gone. A
    /// removal of the whole run directory (`rm -r`, a scratch purge) empties it from the
    /// leaves up, so its subdirectories vanish before its name does.
    pub(super) fn partition_missing(&self, e: &mpiio::Error) -> Option<String> {
        e.is_no_such_file().then(|| self.partition_gone()).flatten()
    }

    /// Whether this partition's directory is no longer there (as a directory).
    pub(super) fn partition_gone(&self) -> Option<String> {
        (!self
            .setup
            .held
            .dir()
            .is_real_dir(self.setup.dir.as_os_str()))
        .then(|| {
            format!(
                "the partition directory '{}' was removed (or renamed) by another process \
                 while the run used it",
                self.shown(&self.setup.dir).display()
            )
        })
    }

    /// Whether `path` (a file this run wrote, to be opened again) is no longer there.
    pub(super) fn file_gone(&self, path: &Path) -> Option<String> {
        matches!(self.setup.held.dir().stat(path.as_os_str()), Ok(None)).then(|| {
            format!(
                "'{}', written by this run, was removed (or renamed) by another process while \
                 the run used it",
                self.shown(path).display()
            )
        })
    }

    pub(super) fn file_path(&self, ptype: PatternType) -> PathBuf {
        match ptype {
            PatternType::Separate => self.setup.dir.join(format!("type2.{}", self.rank)),
            t => self.setup.dir.join(format!("type{}", t.index())),
        }
    }

    pub(super) fn strided(&self, ptype: PatternType) -> bool {
        ptype == PatternType::Scatter || (ptype == PatternType::Shared && self.setup.noshared)
    }

    /// Opens the type's file (collectively, but for type 2) and sets the segment view of
    /// types 3 and 4. Every step that may fail on some ranks only is agreed on before the
    /// next collective one.
    pub(super) fn open(
        &self,
        ptype: PatternType,
        access: Access,
        segment: u64,
    ) -> Result<Open, Stopped> {
        Stopped::agree(self.setup.comm, self.interrupted())?;
        // A run directory removed (or replaced) meanwhile is said on every rank, before
        // the library's own error path (Open MPI 4.1 crashed in it) is reached. `rm -r`
        // empties it from the leaves up, so the partition's directory and the file to
        // reopen are looked at too: the run directory's name stays while they go.
        let path = self.file_path(ptype);
        let gone = self
            .setup
            .held
            .missing()
            .or_else(|| self.partition_gone())
            .or_else(|| {
                (access != Access::Write)
                    .then(|| self.file_gone(&path))
                    .flatten()
            });
        Stopped::agree(self.setup.comm, gone)?;
        self.feedback.watch.at(format!(
            "partition n={}, opening the type {} file for {}",
            self.n(),
            ptype.index(),
            access.name()
        ));
        // As 2.1 opens them: read-write for the writes. A collective write whose file
        // domain has holes is a read-modify-write in ROMIO's two-phase I/O; ROMIO asks
        // for read access itself where it can, but Intel MPI's on a GlusterFS mount
        // (its NFS driver) kept the write-only descriptor and failed type 4's
        // `MPI_File_write_all` with "Must open file with MPI_MODE_RDWR for
        // read-modify-write".
        let mode = match access {
            Access::Write => AccessMode::CREATE | AccessMode::READ_WRITE,
            Access::Rewrite => AccessMode::READ_WRITE,
            Access::Read => AccessMode::READ_ONLY,
        };
        let given: Vec<Hint> = self.setup.hints.at_open(self.n() as usize, access, ptype);
        let opened = if ptype == PatternType::Separate {
            File::open_with_info(&SimpleCommunicator::self_comm(), &path, mode, &given)
        } else {
            File::open_with_info(self.setup.comm, &path, mode, &given)
        };
        let failure = opened.as_ref().err().map(|e| self.io_message(e.clone()));
        if let Err(e) = Stopped::agree(self.setup.comm, failure) {
            // Closing is collective: ranks whose open succeeded cannot close alone.
            if let Ok(file) = opened {
                if ptype == PatternType::Separate {
                    let _ = file.close();
                } else {
                    file.abandon();
                }
            }
            return Err(e);
        }
        // Every rank's open succeeded (agreed above).
        let Ok(file) = opened else {
            return Err(Stopped::said(benchkit::Exit::Failure));
        };
        // Rank 0's report is the one shown (its type 2 file stands for the others').
        let hints = (!self.setup.hints.is_empty()).then(|| FileHints {
            access,
            ptype,
            reported: file.info(),
            given,
            patterns: Vec::new(),
        });
        let mut open = Open {
            file,
            path,
            base: 0,
            segment,
            written: 0,
            hints,
            changed: Vec::new(),
        };
        if matches!(
            ptype,
            PatternType::Segmented | PatternType::SegmentedCollective
        ) {
            let u = Datatype::of::<u64>();
            let view = open
                .file
                .set_view((self.rank as u64 * segment) as i64, &u, &u);
            Stopped::agree(self.setup.comm, view.err().map(|e| self.io_message(e)))?;
        }
        Ok(open)
    }

    /// Before pattern `p`: the hints file's hints for its chunk size, and the values at
    /// open of keys an earlier pattern changed, with `MPI_File_set_info` (collective, the
    /// same on every rank); recorded with what the library reports after.
    pub(super) fn pattern_hints(
        &self,
        open: &mut Open,
        p: &Pattern,
        access: Access,
    ) -> Result<(), Stopped> {
        if !self.setup.hints.per_pattern() {
            return Ok(());
        }
        let Some(log) = open.hints.as_mut() else {
            return Ok(());
        };
        let want = self
            .setup
            .hints
            .for_pattern(self.n() as usize, access, p, self.table[1].chunk);
        let (set, changed) = before_pattern(&want, &open.changed, &log.given, &log.reported);
        open.changed = changed;
        if set.is_empty() {
            return Ok(());
        }
        let done = open.file.set_info(&set);
        Stopped::agree(
            self.setup.comm,
            done.err()
                .map(|e| format!("{}: {}", context(access, p), self.io_message(e))),
        )?;
        log.patterns.push(PatternHints {
            number: p.number,
            chunk: p.chunk,
            given: set,
            reported: open.file.info(),
        });
        Ok(())
    }

    /// The view of a strided type (0, and 1 with `--noshared`) for pattern `p`
    /// (collective): from the type's base on, each rank sees its own chunk of every `n`
    /// chunks.
    pub(super) fn set_strided_view(&self, open: &mut Open, p: &Pattern) -> Result<(), Stopped> {
        let chunk_words = (p.chunk / 8) as usize;
        let u = Datatype::of::<u64>();
        let filetype = Datatype::contiguous(chunk_words, &u)
            .and_then(|c| c.resized(0, (self.n() * p.chunk) as isize));
        let made = filetype.as_ref().err().map(|e| self.io_message(e.clone()));
        Stopped::agree(self.setup.comm, made)?;
        if let Ok(ft) = &filetype {
            let view = open
                .file
                .set_view((open.base + self.rank as u64 * p.chunk) as i64, &u, ft);
            Stopped::agree(self.setup.comm, view.err().map(|e| self.io_message(e)))?;
        }
        Ok(())
    }
}
