//! Signs of life between ranks, and waits that leave the processor to the ranks that work.
//!
//! A rank that waits for others while they work (the ranks outside a b_eff_io partition)
//! cannot tell from its own progress whether the job moves. The rank that works for them
//! sends it a pulse whenever its watchdog says one is due ([`Progress::pulse_due`]: a
//! quarter of the stall timeout, so a few messages an hour), and a last message when the
//! work is done; the waiting rank counts each pulse as progress ([`Heartbeat::listen`]).
//! A rank that stops stops its pulses, and the ranks waiting for it notice within the
//! timeout and a half (the half covers one long call of the working rank between two
//! pulses).
//!
//! The pulses travel on a communicator of their own (a duplicate of the world), so no
//! message of the benchmark can match one. They are one byte, sent with the standard
//! send: on every library here a message that small is sent eagerly and the call returns
//! at once, without waiting for the receiver.
//!
//! A waiting rank polls instead of blocking ([`Heartbeat::listen`], [`quiet_barrier`]):
//! several libraries spin in a blocking wait, and a spinning rank on a node with more
//! ranks than cores takes the processor from the ranks it waits for.

use std::ops::Range;
use std::time::Duration;

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Tag;

use crate::watchdog::Progress;

/// A sign of life.
const PULSE: Tag = 1;
/// The work waited for is done.
const DONE: Tag = 2;

/// How long a waiting rank sleeps between two looks.
const POLL: Duration = Duration::from_millis(2);

/// The communicator the pulses travel on.
pub struct Heartbeat {
    comm: SimpleCommunicator,
}

impl std::fmt::Debug for Heartbeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Heartbeat").finish_non_exhaustive()
    }
}

impl Heartbeat {
    /// The heartbeat of `world`'s ranks (collective over `world`).
    pub fn new(world: &SimpleCommunicator) -> Heartbeat {
        Heartbeat {
            comm: world.duplicate(),
        }
    }

    /// A pulse to every rank of `to`.
    pub fn pulse(&self, to: Range<i32>) {
        self.send(to, PULSE);
    }

    /// The work is done: every rank of `to` stops listening.
    pub fn done(&self, to: Range<i32>) {
        self.send(to, DONE);
    }

    fn send(&self, to: Range<i32>, tag: Tag) {
        for r in to {
            self.comm.process_at_rank(r).send_with_tag(&0u8, tag);
        }
    }

    /// Waits, without spinning, until rank `from` says its work is done; every pulse it
    /// sends meanwhile is this rank's progress. The caller says where it waits and gives
    /// the wait its allowance ([`Progress::wait`], [`listening_allowance`]).
    pub fn listen(&self, from: i32, progress: &Progress) {
        let source = self.comm.process_at_rank(from);
        loop {
            match source.immediate_probe() {
                Some(status) => {
                    let tag = status.tag();
                    let _ = source.receive_with_tag::<u8>(tag);
                    progress.tick();
                    if tag == DONE {
                        return;
                    }
                }
                None => std::thread::sleep(POLL),
            }
        }
    }
}

/// What a listening rank allows beyond the timeout: half of it, for one long call of the
/// working rank between its pulses (a call longer than the timeout is the working rank's
/// own stall, which it reports).
pub fn listening_allowance(progress: &Progress) -> Duration {
    progress.timeout().map_or(Duration::ZERO, |t| t / 2)
}

/// A barrier over `comm` that waits without spinning (`MPI_Ibarrier`, tested between
/// short sleeps), a step of progress once every rank is there.
pub fn quiet_barrier(comm: &SimpleCommunicator, progress: Option<&Progress>) {
    let mut request = comm.immediate_barrier();
    loop {
        match request.test() {
            Ok(_) => break,
            Err(pending) => request = pending,
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    if let Some(p) = progress {
        p.tick();
    }
}
