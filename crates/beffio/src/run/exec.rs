//! The MPI-IO calls of each pattern type (spec §3) and the time-driven loop (spec §4).

use super::agree::{agree, max_all, sum_all};
use super::progress::Progress;
use crate::batch::BatchPlanner;
use crate::markers::{check, stamp, ChunkId, DataError};
use crate::patterns::{Pattern, PatternType, Role};
use crate::results::{PatternResult, PosixBaseline, TypeTotal};
use crate::schedule::{pattern_time, Access};
use crate::segment::SegmentPlan;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpiio::{AccessMode, Datatype, File};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Everything a partition's patterns need.
pub struct Partition<'a> {
    /// The partition's communicator.
    pub comm: &'a SimpleCommunicator,
    /// The run directory.
    pub dir: PathBuf,
    /// The pattern table.
    pub table: Vec<Pattern>,
    /// Scheduled time of this partition (T·n/N).
    pub time_s: f64,
    /// `--noshared`.
    pub noshared: bool,
    /// `--check-every-call`.
    pub every_call: bool,
    /// `--posix-baseline`: `Some` when asked for, holding the measurement once made.
    pub posix_baseline: Option<Option<PosixBaseline>>,
    /// Signal number received, 0 if none.
    pub signal: Arc<AtomicUsize>,
    /// Write buffer (MPART bytes).
    pub wbuf: Vec<u64>,
    /// Read buffer (MPART bytes).
    pub rbuf: Vec<u64>,
    /// Sync seconds and bytes written so far, to budget the next sync.
    pub sync_seen: (f64, u64),
    /// Progress reporter (rank 0 prints).
    pub progress: Progress,
}

struct Open {
    file: File,
    /// Type 0's (and `--noshared` type 1's) displacement: bytes all ranks wrote before.
    base: u64,
}

fn io<T>(r: mpiio::Result<T>) -> Result<T, String> {
    r.map_err(|e| {
        if e.is_no_space() {
            format!("{e} (is the disk full?)")
        } else {
            e.to_string()
        }
    })
}

impl Partition<'_> {
    fn rank(&self) -> usize {
        self.comm.rank() as usize
    }
    fn n(&self) -> u64 {
        self.comm.size() as u64
    }

    fn interrupted(&self) -> Option<String> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            s => Some(format!("interrupted by signal {s}")),
        }
    }

    fn file_path(&self, ptype: PatternType) -> PathBuf {
        match ptype {
            PatternType::Separate => self.dir.join(format!("type2.{}", self.rank())),
            t => self.dir.join(format!("type{}", t.index())),
        }
    }

    fn strided(&self, ptype: PatternType) -> bool {
        ptype == PatternType::Scatter || (ptype == PatternType::Shared && self.noshared)
    }

    fn open(&self, ptype: PatternType, access: Access, segment: u64) -> Result<Open, String> {
        if let Some(why) = self.interrupted() {
            return Err(why);
        }
        let mode = match access {
            Access::Write => AccessMode::CREATE | AccessMode::WRITE_ONLY,
            Access::Rewrite => AccessMode::WRITE_ONLY,
            Access::Read => AccessMode::READ_ONLY,
        };
        let path = self.file_path(ptype);
        let file = if ptype == PatternType::Separate {
            File::open(&SimpleCommunicator::self_comm(), &path, mode)
        } else {
            File::open(self.comm, &path, mode)
        };
        let mut open = Open {
            file: io(file)?,
            base: 0,
        };
        if matches!(
            ptype,
            PatternType::Segmented | PatternType::SegmentedCollective
        ) {
            let u = Datatype::of::<u64>();
            io(open
                .file
                .set_view((self.rank() as u64 * segment) as i64, &u, &u))?;
        }
        Ok(open)
    }

    /// Runs all patterns of one type under one access method. `counts` holds the write
    /// repeat counts (filled in by write, used by rewrite and read).
    pub fn run_type(
        &mut self,
        ptype: PatternType,
        access: Access,
        counts: &mut [u64],
        segment: Option<&SegmentPlan>,
    ) -> Result<(Vec<PatternResult>, TypeTotal), String> {
        let patterns: Vec<Pattern> = self
            .table
            .iter()
            .filter(|p| p.ptype == ptype)
            .copied()
            .collect();
        let first = patterns[0].number;
        let seg_bytes = segment.map_or(0, |s| s.segment);
        self.comm.barrier();
        let t0 = mpi::time();
        let opened = self.open(ptype, access, seg_bytes);
        let failure = opened.as_ref().err().cloned();
        agree(self.comm, failure)?;
        let mut open = opened.expect("agreed");
        let mut results = Vec::with_capacity(patterns.len());
        for mut p in patterns {
            if p.role == Role::Filler {
                let filler = segment.map_or(0, |s| s.filler);
                p.chunk = filler;
                p.memory = filler;
            }
            let fixed = match (access, p.role, ptype) {
                (_, Role::Open, _) | (_, Role::Filler, _) => Some(1),
                (Access::Write, _, PatternType::Segmented | PatternType::SegmentedCollective) => {
                    Some(segment.expect("segment plan").repeats[p.number - first])
                }
                (Access::Write, _, _) => None,
                _ => Some(counts[p.number]),
            };
            let r = self.run_pattern(&mut open, p, access, fixed)?;
            counts[p.number] = r.repeats;
            let largest = p.chunk == self.table[1].chunk && p.role == Role::Measured;
            if matches!(self.posix_baseline, Some(None))
                && access == Access::Write
                && ptype == PatternType::Separate
                && largest
            {
                self.posix_baseline = Some(Some(self.posix_write(&r)?));
            }
            self.progress.pattern(self.comm.size() as usize, access, &r);
            results.push(r);
        }
        let closed = open.file.close();
        agree(self.comm, closed.err().map(|e| e.to_string()))?;
        self.comm.barrier();
        let [time_s] = max_all(self.comm, [mpi::time() - t0]);
        let bytes = results.iter().map(|r| r.bytes).sum();
        Ok((results, TypeTotal { bytes, time_s }))
    }

    /// Writes the bytes of `r` (a separate-file pattern) again with plain POSIX calls,
    /// every rank into a file of its own, timed as the patterns are.
    fn posix_write(&mut self, r: &PatternResult) -> Result<PosixBaseline, String> {
        use std::io::Write;
        let path = self.dir.join(format!("posix.{}", self.rank()));
        let words = (r.pattern.memory / 8) as usize;
        let buf: Vec<u8> = self.wbuf[..words]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        self.comm.barrier();
        let t0 = mpi::time();
        let outcome = std::fs::File::create_new(&path).and_then(|mut f| {
            for _ in 0..r.repeats {
                f.write_all(&buf)?;
            }
            let ts = mpi::time();
            f.sync_all()?;
            Ok(mpi::time() - ts)
        });
        self.comm.barrier();
        let local = mpi::time() - t0;
        let _ = std::fs::remove_file(&path);
        let failure = outcome.as_ref().err().map(|e| {
            format!(
                "--posix-baseline: cannot write '{}': {}",
                path.display(),
                super::rundir::cause(e)
            )
        });
        agree(self.comm, failure)?;
        let sync = outcome.unwrap_or_default();
        let [time_s, sync_s] = max_all(self.comm, [local, sync]);
        Ok(PosixBaseline {
            pattern: r.pattern.number,
            bytes: r.bytes,
            time_s,
            sync_s,
        })
    }

    fn run_pattern(
        &mut self,
        open: &mut Open,
        p: Pattern,
        access: Access,
        fixed: Option<u64>,
    ) -> Result<PatternResult, String> {
        let (n, rank) = (self.n(), self.rank());
        let words = (p.memory / 8) as usize;
        let chunk_words = (p.chunk / 8) as usize;
        let per_call = p.chunks_per_call();
        let strided = self.strided(p.ptype);
        if strided {
            let u = Datatype::of::<u64>();
            let view = Datatype::contiguous(chunk_words, &u)
                .and_then(|c| c.resized(0, (n * p.chunk) as isize))
                .and_then(|ft| {
                    open.file
                        .set_view((open.base + rank as u64 * p.chunk) as i64, &u, &ft)
                });
            agree(self.comm, view.err().map(|e| e.to_string()))?;
        }
        let budget = pattern_time(self.time_s, p.u);
        let extra = if self.sync_seen.1 > 0 {
            self.sync_seen.0 / self.sync_seen.1 as f64 * (p.memory * n) as f64
        } else {
            0.0
        };
        let mut planner = BatchPlanner::new(budget, extra);
        if self.every_call {
            planner = planner.check_every_call();
        }
        let mut first_error: Option<String> = None;
        let mut details: Vec<DataError> = Vec::new();
        let mut data_errors = 0u64;
        let mut done = 0u64;
        let mut checks = 0u64;
        self.comm.barrier();
        let t0 = mpi::time();
        let mut batch = fixed.unwrap_or_else(|| planner.first());
        loop {
            for _ in 0..batch {
                let id = ChunkId {
                    access,
                    pattern: p.number,
                    rank,
                    first_seq: done * per_call,
                };
                let collective = strided
                    || matches!(
                        p.ptype,
                        PatternType::Shared | PatternType::SegmentedCollective
                    );
                if first_error.is_some() && !collective {
                    done += 1;
                    continue;
                }
                let r = match access {
                    Access::Write | Access::Rewrite => {
                        let buf = &mut self.wbuf[..words];
                        stamp(buf, chunk_words, id);
                        let f = &mut open.file;
                        match p.ptype {
                            _ if strided => f.write_all(buf),
                            PatternType::Shared => f.write_ordered(buf),
                            PatternType::Separate | PatternType::Segmented => f.write(buf),
                            _ => f.write_all(buf),
                        }
                    }
                    Access::Read => {
                        let buf = &mut self.rbuf[..words];
                        let f = &mut open.file;
                        let r = match p.ptype {
                            _ if strided => f.read_all(buf),
                            PatternType::Shared => f.read_ordered(buf),
                            PatternType::Separate | PatternType::Segmented => f.read(buf),
                            _ => f.read_all(buf),
                        };
                        if r.is_ok() {
                            data_errors += check(buf, chunk_words, id, &mut details);
                        }
                        r
                    }
                };
                if let Err(e) = r {
                    first_error.get_or_insert_with(|| io::<()>(Err(e)).unwrap_err());
                }
                done += 1;
            }
            if fixed.is_some() {
                break;
            }
            let local_fail = first_error.is_some() || self.interrupted().is_some();
            checks += 1;
            let [elapsed, fail] = max_all(
                self.comm,
                [mpi::time() - t0, f64::from(u8::from(local_fail))],
            );
            if fail > 0.0 {
                break;
            }
            match planner.next(done, elapsed) {
                Some(b) => batch = b,
                None => break,
            }
        }
        let mut sync_s = 0.0;
        if access != Access::Read && first_error.is_none() {
            let ts = mpi::time();
            if let Err(e) = open.file.sync() {
                first_error = Some(e.to_string());
            }
            sync_s = mpi::time() - ts;
        }
        self.comm.barrier();
        let local = mpi::time() - t0;
        agree(self.comm, first_error.or_else(|| self.interrupted()))?;
        let [time_s, sync_s] = max_all(self.comm, [local, sync_s]);
        for d in &details {
            eprintln!(
                "b_eff_io: data error, rank {rank}, pattern {} ({}): {d}",
                p.number,
                access.name()
            );
        }
        let errors = sum_all(self.comm, data_errors);
        let bytes = done * p.memory * n;
        if access == Access::Write {
            self.sync_seen.0 += sync_s;
            self.sync_seen.1 += bytes;
        }
        if strided {
            open.base += n * p.chunk * done * per_call;
        }
        Ok(PatternResult {
            pattern: p,
            scheduled_s: budget,
            repeats: done,
            bytes,
            time_s,
            sync_s,
            errors,
            checks,
        })
    }
}
