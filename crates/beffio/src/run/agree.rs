//! Collective agreement on failures: every rank learns about a failure on any rank before
//! the next collective step, gets the same message and leaves with the same exit code.
//! These carry plain messages; the caller picks the exit code.

use mpi::collective::SystemOperation;
use mpi::traits::*;

const MESSAGE_BYTES: usize = 2048;

/// Collective: `Err(message)` on every rank if `local` is `Some` on any rank (the message
/// of the lowest failing rank, prefixed with it when the job has several ranks).
pub fn agree<C: Communicator>(comm: &C, local: Option<String>) -> Result<(), String> {
    let size = comm.size();
    let mine = if local.is_some() { comm.rank() } else { size };
    let mut first = size;
    comm.all_reduce_into(&mine, &mut first, SystemOperation::min());
    if first == size {
        return Ok(());
    }
    let mut buf = [0u8; MESSAGE_BYTES];
    if comm.rank() == first {
        let text = local.unwrap_or_default();
        let bytes = text.as_bytes();
        let n = bytes.len().min(MESSAGE_BYTES);
        buf[..n].copy_from_slice(&bytes[..n]);
    }
    comm.process_at_rank(first).broadcast_into(&mut buf[..]);
    let end = buf.iter().position(|&b| b == 0).unwrap_or(MESSAGE_BYTES);
    let text = String::from_utf8_lossy(&buf[..end]).into_owned();
    Err(if size > 1 && !text.starts_with("rank ") {
        format!("rank {first}: {text}")
    } else {
        text
    })
}

/// Collective maximum of a few values.
pub fn max_all<C: Communicator, const K: usize>(comm: &C, values: [f64; K]) -> [f64; K] {
    let mut out = [0.0; K];
    comm.all_reduce_into(&values[..], &mut out[..], SystemOperation::max());
    out
}

/// Collective sum.
pub fn sum_all<C: Communicator>(comm: &C, value: u64) -> u64 {
    let mut out = 0u64;
    comm.all_reduce_into(&value, &mut out, SystemOperation::sum());
    out
}
