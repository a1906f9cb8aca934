//! Agreement of all ranks on a check that may fail on some of them only: one verdict,
//! the same exit code on every rank, the message of the lowest failing rank — printed
//! where it happened ([`agree`]) or carried to every rank ([`agree_message`], for the
//! caller to print once) — so that the ranks finalize and leave together instead of
//! hanging in the next collective. `MPI_Abort` stays the last resort.

use mpi::collective::SystemOperation;
use mpi::topology::Communicator;
use mpi::traits::{Root, *};

/// A failure found by a check on one rank: the exit code to leave with and the message to
/// print on standard error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// Exit code, non-zero.
    pub code: i32,
    /// The complete text to print, newline included where wanted.
    pub message: String,
}

/// A bare message is a failure: exit code 1 ([`crate::Exit::Failure`]).
impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure::new(crate::Exit::Failure.code(), message)
    }
}

impl Failure {
    /// A failure with exit code `code` and message `message`.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        debug_assert!(code != 0, "a failure needs a non-zero exit code");
        Failure {
            code,
            message: message.into(),
        }
    }
}

/// The verdict every rank shares after [`agree`] found a failure somewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Agreed {
    /// The exit code every rank should leave with (the largest code any rank reported).
    pub code: i32,
}

/// Agrees on a check over all ranks of `comm` (a collective call: every rank must call it).
///
/// When no rank failed, returns the local value. Otherwise the failing rank with the lowest
/// number prints its message on standard error (nothing if it is empty) and every rank
/// gets the same [`Agreed`] exit code, so that all of them can finalize and leave together.
pub fn agree<T, C: Communicator>(comm: &C, local: Result<T, Failure>) -> Result<T, Agreed> {
    let my_code: i32 = match &local {
        Ok(_) => 0,
        Err(f) => f.code.max(1),
    };
    let mut code = 0i32;
    comm.all_reduce_into(&my_code, &mut code, SystemOperation::max());
    let local = match local {
        Ok(value) if code == 0 => return Ok(value),
        other => other,
    };
    let first = lowest_failing(comm, my_code != 0);
    if let Err(f) = &local {
        // An empty message stays quiet (a closed standard output pipe, say).
        if first == Some(comm.rank()) && !f.message.is_empty() {
            outfile::eprint!("{}", f.message);
            if !f.message.ends_with('\n') {
                outfile::eprintln!();
            }
        }
    }
    Err(Agreed { code })
}

/// A benchmark's parsed command line, agreed by every rank of `comm` (a collective call):
/// `Some` to run; `None` after `--help` or `--version`, which rank 0 has printed on
/// standard output (every rank leaves with exit 0, or with `stdout_failure`'s failure when
/// that write failed); a usage error is every rank's exit 2, said once.
pub fn options_or_leave<C: Communicator, T>(
    comm: &C,
    parsed: Result<T, clap::Error>,
    stdout_failure: impl FnOnce(std::io::Error) -> Failure,
) -> Result<Option<T>, Agreed> {
    let outcome = match parsed {
        Ok(options) => Ok(Some(options)),
        Err(e) if e.exit_code() == 0 => match comm.rank() {
            0 => outfile::stdout::write(&e.render().to_string())
                .map(|()| None)
                .map_err(stdout_failure),
            _ => Ok(None),
        },
        Err(e) => Err(Failure::new(
            crate::Exit::Usage.code(),
            e.render().to_string(),
        )),
    };
    agree(comm, outcome)
}

/// Gathers one string from every rank of `comm` on rank `root`, in rank order
/// (a collective call). Returns `Some` on the root, `None` elsewhere. Strings are sent
/// as fixed-width byte records as wide as the longest one, so nothing is cut.
pub fn gather_strings<C: Communicator>(comm: &C, root: i32, mine: &str) -> Option<Vec<String>> {
    let len = i32::try_from(mine.len()).expect("a host name fits in an int");
    let mut width = 0i32;
    comm.all_reduce_into(&len, &mut width, SystemOperation::max());
    let width = usize::try_from(width).expect("the widest string has a non-negative length");
    if width == 0 {
        // Nothing to send (and MPI refuses a gather of empty buffers): every rank knows.
        let size = usize::try_from(comm.size()).expect("a communicator size is positive");
        return (comm.rank() == root).then(|| vec![String::new(); size]);
    }
    let mut record = vec![0u8; width];
    record[..mine.len()].copy_from_slice(mine.as_bytes());
    let root_process = comm.process_at_rank(root);
    if comm.rank() == root {
        let size = usize::try_from(comm.size()).expect("a communicator size is positive");
        let mut all = vec![0u8; width * size];
        root_process.gather_into_root(&record[..], &mut all[..]);
        Some(
            all.chunks(width)
                .map(|chunk| {
                    let end = chunk.iter().position(|&b| b == 0).unwrap_or(chunk.len());
                    String::from_utf8_lossy(&chunk[..end]).into_owned()
                })
                .collect(),
        )
    } else {
        root_process.gather_into(&record[..]);
        None
    }
}

/// The lowest rank of `comm` on which `failed` holds, `None` when it holds on none
/// (a collective call).
fn lowest_failing<C: Communicator>(comm: &C, failed: bool) -> Option<i32> {
    let mine = if failed { comm.rank() } else { comm.size() };
    let mut first = comm.size();
    comm.all_reduce_into(&mine, &mut first, SystemOperation::min());
    (first < comm.size()).then_some(first)
}

/// Agrees on a check whose failure is a message (a collective call): `Err` with the
/// message of the lowest failing rank on every rank if `local` is `Some` on any —
/// prefixed with `rank N: ` in a job of several ranks, unless it says so already — and
/// `Ok` on every rank otherwise. The message travels whole, however long.
pub fn agree_message<C: Communicator>(comm: &C, local: Option<String>) -> Result<(), String> {
    match lowest_failing(comm, local.is_some()) {
        None => Ok(()),
        Some(first) => Err(message_of(comm, first, local)),
    }
}

/// [`agree`] for a failure that every rank learns of, and [`max_all`], in one reduction
/// (a collective call): `Err` on every rank when `local` is `Some` on any, with the
/// largest exit code any failing rank gave and the lowest failing rank's message (carried
/// to every rank by [`message_of`], not printed); else the maximum of each of `values`
/// over the ranks.
pub fn agree_failure_max<C: Communicator, const K: usize>(
    comm: &C,
    local: Option<Failure>,
    values: [f64; K],
) -> Result<[f64; K], Failure> {
    // After the values: the code asked for, and the failing rank's key (the lowest
    // failing rank has the largest).
    let (code, key) = match &local {
        Some(f) => (
            f64::from(f.code.max(1)),
            f64::from(comm.size() - comm.rank()),
        ),
        None => (0.0, 0.0),
    };
    let mine: Vec<f64> = values.iter().copied().chain([code, key]).collect();
    let mut out = vec![0.0; K + 2];
    comm.all_reduce_into(&mine[..], &mut out[..], SystemOperation::max());
    if out[K + 1] > 0.0 {
        let first = comm.size() - out[K + 1] as i32;
        return Err(Failure {
            code: out[K] as i32,
            message: message_of(comm, first, local.map(|f| f.message)),
        });
    }
    let mut max = [0.0; K];
    max.copy_from_slice(&out[..K]);
    Ok(max)
}

/// Every rank's `values`, in rank order, on every rank (one all-gather, a collective call).
pub fn gather_all<C: Communicator, const K: usize>(comm: &C, values: [f64; K]) -> Vec<[f64; K]> {
    let size = usize::try_from(comm.size()).expect("a communicator size is positive");
    let mut all = vec![0.0; K * size];
    comm.all_gather_into(&values[..], &mut all[..]);
    all.chunks_exact(K)
        .map(|c| {
            let mut v = [0.0; K];
            v.copy_from_slice(c);
            v
        })
        .collect()
}

/// The message of rank `first` (its `local`), which every rank of `comm` knows to be the
/// lowest failing one, carried to every rank (a collective call) — prefixed with
/// `rank N: ` in a job of several ranks, unless it says so already.
pub fn message_of<C: Communicator>(comm: &C, first: i32, local: Option<String>) -> String {
    let text = if comm.rank() == first {
        local.unwrap_or_default()
    } else {
        String::new()
    };
    let root = comm.process_at_rank(first);
    let mut len = u64::try_from(text.len()).unwrap_or(u64::MAX);
    root.broadcast_into(&mut len);
    let mut buf = text.into_bytes();
    buf.resize(usize::try_from(len).unwrap_or(0), 0);
    if !buf.is_empty() {
        root.broadcast_into(&mut buf[..]);
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    if comm.size() > 1 && !text.starts_with("rank ") {
        format!("rank {first}: {text}")
    } else {
        text
    }
}

/// The collective maximum of a few values.
pub fn max_all<C: Communicator, const K: usize>(comm: &C, values: [f64; K]) -> [f64; K] {
    let mut out = [0.0; K];
    comm.all_reduce_into(&values[..], &mut out[..], SystemOperation::max());
    out
}

/// The collective sum of a count.
pub fn sum_all<C: Communicator>(comm: &C, value: u64) -> u64 {
    let mut out = 0u64;
    comm.all_reduce_into(&value, &mut out, SystemOperation::sum());
    out
}
