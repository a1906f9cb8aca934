//! The file-system checks at the start of a run (collective): the mount under the run
//! directory on every rank, then, on a small probe file in it, whether a byte-range lock
//! that rank 0 holds is seen by the other ranks, and whether a write that the last rank
//! makes under a lock through its open file (not synced) is seen by the others, reading
//! under the lock through the files they already had open and had read: what MPI-IO's
//! shared file pointer does with its pointer file. A client that
//! caches file data without hearing of other clients' writes (a FUSE mount with the
//! kernel's page cache, for one) fails the second check, and type 1 would then give ranks
//! overlapping offsets.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use nix::fcntl::{fcntl, FcntlArg};
use nix::libc;

use super::broadcast_bytes_from;
use crate::filesystem::{mount_of, FileSystem, Mount, Probe};
use benchkit::agree_message as agree;

/// The probe file's name in the run directory.
const PROBE: &str = ".fsprobe";
const FIRST: [u8; 8] = *b"xylem-A\n";
const SECOND: [u8; 8] = *b"xylem-B\n";

/// The mount that holds `dir`, as this rank sees it.
fn local_mount(dir: &Path) -> Mount {
    let path = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    std::fs::read_to_string("/proc/self/mountinfo")
        .ok()
        .and_then(|t| mount_of(&t, &path.to_string_lossy()))
        .unwrap_or_default()
}

/// The lowest rank for which `local` holds, with its processor name.
fn first_rank(world: &SimpleCommunicator, local: bool) -> Option<(usize, String)> {
    let size = world.size();
    let mine = if local { world.rank() } else { size };
    let mut first = size;
    world.all_reduce_into(&mine, &mut first, SystemOperation::min());
    if first == size {
        return None;
    }
    let name = broadcast_bytes_from(world, first, benchkit::processor_name().as_bytes());
    Some((first as usize, String::from_utf8_lossy(&name).into_owned()))
}

/// A byte-range lock of `kind` (`F_WRLCK`, `F_UNLCK`) over the probe bytes.
fn probe_range(kind: libc::c_int) -> libc::flock {
    libc::flock {
        l_type: kind as libc::c_short,
        l_whence: libc::SEEK_SET as libc::c_short,
        l_start: 0,
        l_len: FIRST.len() as libc::off_t,
        l_pid: 0,
    }
}

fn lock(file: &File, kind: libc::c_int) -> nix::Result<libc::c_int> {
    fcntl(file.as_raw_fd(), FcntlArg::F_SETLK(&probe_range(kind)))
}

/// Whether another process holds a write lock on the probe bytes, as `file` sees it.
fn lock_seen(file: &File) -> nix::Result<bool> {
    let mut l = probe_range(libc::F_WRLCK);
    fcntl(file.as_raw_fd(), FcntlArg::F_GETLK(&mut l))?;
    Ok(l.l_type != libc::F_UNLCK as libc::c_short)
}

fn read_probe(file: &File) -> std::io::Result<[u8; 8]> {
    let mut buf = [0u8; 8];
    file.read_exact_at(&mut buf, 0)?;
    Ok(buf)
}

/// Runs the checks in `dir` (the run directory, visible on every rank) and returns what
/// they found; every rank gets the same answer. A check that cannot run says why in its
/// result; none of this stops the run.
pub fn probe(world: &SimpleCommunicator, dir: &Path, held: &outfile::SafeDir) -> FileSystem {
    let rank = world.rank();
    let last = world.size() - 1;
    let mine = local_mount(dir);
    let root = broadcast_bytes_from(world, 0, mine.fs_type.as_bytes());
    let other_type =
        first_rank(world, mine.fs_type.as_bytes() != root.as_slice()).map(|(r, host)| {
            let theirs = broadcast_bytes_from(world, r as i32, mine.fs_type.as_bytes());
            format!("{} (rank {r} on {host})", String::from_utf8_lossy(&theirs))
        });
    let mut fs = FileSystem {
        mount: mine,
        other_type,
        locks: None,
        visibility: None,
    };
    if last == 0 {
        fs.locks = Some(Probe::OneRank);
        fs.visibility = Some(Probe::OneRank);
        return fs;
    }
    let path = dir.join(PROBE);
    let failed = |message: String| Some(Probe::Failed { message });
    let made = (rank == 0)
        .then(|| {
            // In the run directory by its descriptor, created exclusively.
            held.create_new(PROBE, 0o600)
                .and_then(|f| f.write_all_at(&FIRST, 0).and_then(|()| f.sync_all()))
                .err()
                .map(|e| format!("cannot write '{}': {e}", path.display()))
        })
        .flatten();
    if let Err(m) = agree(world, made) {
        fs.locks = failed(m.clone());
        fs.visibility = failed(m);
        return fs;
    }
    let opened = held.open_existing(PROBE);
    let check = match &opened {
        Ok(f) => read_probe(f).map(|bytes| (f, bytes == FIRST)),
        Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
    }
    .map_err(|e| format!("cannot read '{}': {e}", path.display()));
    let outcome = agree(world, check.as_ref().err().cloned()).map(|()| check.unwrap());
    match outcome {
        Err(m) => {
            fs.locks = failed(m.clone());
            fs.visibility = failed(m);
        }
        Ok((file, fresh)) => {
            fs.locks = Some(check_locks(world, file));
            fs.visibility = Some(check_visibility(world, file, fresh));
        }
    }
    drop(opened);
    world.barrier();
    if rank == 0 {
        let _ = held.unlink(PROBE);
    }
    fs
}

/// A check's outcome: its agreed error, else the first rank that did not see, else seen.
fn verdict(result: Result<(), String>, missing: Option<(usize, String)>) -> Probe {
    match (result, missing) {
        (Err(message), _) => Probe::Failed { message },
        (Ok(()), Some((rank, host))) => Probe::NotSeen { rank, host },
        (Ok(()), None) => Probe::Seen,
    }
}

fn check_locks(world: &SimpleCommunicator, file: &File) -> Probe {
    let rank = world.rank();
    let taken = (rank == 0)
        .then(|| {
            lock(file, libc::F_WRLCK)
                .err()
                .map(|e| format!("fcntl F_SETLK: {e}"))
        })
        .flatten();
    if let Err(message) = agree(world, taken) {
        return Probe::Failed { message };
    }
    let seen = (rank != 0).then(|| lock_seen(file));
    let error = match &seen {
        Some(Err(e)) => Some(format!("fcntl F_GETLK: {e}")),
        _ => None,
    };
    let result = agree(world, error);
    let missing = first_rank(world, matches!(seen, Some(Ok(false))));
    if rank == 0 {
        let _ = lock(file, libc::F_UNLCK);
    }
    world.barrier();
    verdict(result, missing)
}

/// Takes a blocking write lock on the probe bytes, runs `f`, and unlocks: how MPI-IO's
/// shared file pointer reads and moves its pointer.
fn under_lock<T>(file: &File, f: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
    fcntl(
        file.as_raw_fd(),
        FcntlArg::F_SETLKW(&probe_range(libc::F_WRLCK)),
    )?;
    let out = f();
    fcntl(
        file.as_raw_fd(),
        FcntlArg::F_SETLKW(&probe_range(libc::F_UNLCK)),
    )?;
    out
}

/// `fresh`: whether this rank's first read saw rank 0's write. The last rank then writes
/// under a lock, without syncing, as a shared file pointer does; every other rank reads
/// under the lock through the file it has open.
fn check_visibility(world: &SimpleCommunicator, file: &File, fresh: bool) -> Probe {
    let writer = world.size() - 1;
    let rank = world.rank();
    let wrote = (rank == writer)
        .then(|| {
            under_lock(file, || file.write_all_at(&SECOND, 0))
                .err()
                .map(|e| format!("cannot write the probe file under a lock: {e}"))
        })
        .flatten();
    // The agreement orders the write before every other rank's read.
    if let Err(message) = agree(world, wrote) {
        return Probe::Failed { message };
    }
    let now = (rank != writer).then(|| under_lock(file, || read_probe(file)));
    let error = match &now {
        Some(Err(e)) => Some(format!("cannot read the probe file under a lock: {e}")),
        _ => None,
    };
    let result = agree(world, error);
    let stale = !fresh || matches!(now, Some(Ok(bytes)) if bytes != SECOND);
    let missing = first_rank(world, stale);
    verdict(result, missing)
}
