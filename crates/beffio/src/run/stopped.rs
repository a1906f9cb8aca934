//! Why a run stops once its ranks have agreed on it: the one error type of the execution
//! layer, and how it becomes an exit code.

use benchkit::{agree_message, agree_message_max, message_of, Exit};
use mpi::topology::Communicator;

/// A failure every rank of a communicator knows alike (agreed on): the lowest failing
/// rank's message, or an empty one when the failure was said already. A rank-local
/// message becomes one only through an agreement ([`Stopped::agree`] and its kin), so a
/// rank cannot stop alone by mistake.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Stopped {
    message: String,
}

/// What a message names when a rank was interrupted.
const INTERRUPTED: &str = "interrupted by signal ";

impl Stopped {
    /// Agrees on `local` over `comm` (a collective call): `Err` on every rank when it is
    /// `Some` on any, with the lowest failing rank's message.
    pub fn agree<C: Communicator>(comm: &C, local: Option<String>) -> Result<(), Stopped> {
        agree_message(comm, local).map_err(|message| Stopped { message })
    }

    /// [`Stopped::agree`] and the maximum of each of `values` over the ranks, in one
    /// reduction.
    pub fn agree_max<C: Communicator, const K: usize>(
        comm: &C,
        local: Option<String>,
        values: [f64; K],
    ) -> Result<[f64; K], Stopped> {
        agree_message_max(comm, local, values).map_err(|message| Stopped { message })
    }

    /// The failure of rank `first`, which every rank of `comm` knows to be the lowest
    /// failing one (a collective call: its `local` message reaches every rank).
    pub fn of_rank<C: Communicator>(comm: &C, first: i32, local: Option<String>) -> Stopped {
        Stopped {
            message: message_of(comm, first, local),
        }
    }

    /// A failure every rank learnt of from an agreement that printed it already (or
    /// that concerns ranks outside this one's communicator): nothing more to say.
    pub fn said() -> Stopped {
        Stopped {
            message: String::new(),
        }
    }

    /// The message, empty when it was said already.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same failure with `more` on a line of its own after the message (the same on
    /// every rank when `more` is).
    pub fn with_line(self, more: &str) -> Stopped {
        Stopped {
            message: format!("{}\n{more}", self.message),
        }
    }

    /// The signal a rank was interrupted by, when the message says so.
    pub fn signal(&self) -> Option<i32> {
        let at = self.message.find(INTERRUPTED)?;
        let digits: String = self.message[at + INTERRUPTED.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    }

    /// The exit, the same on every rank: 128 + the signal when a rank was interrupted
    /// (`local_signal` on this one, or the one the agreed message names: a launcher that
    /// ORs its ranks' codes, as hydra does, would otherwise report 130 | 1 = 131), else
    /// a failure.
    pub fn exit(&self, local_signal: Option<i32>) -> Exit {
        match local_signal.or_else(|| self.signal()) {
            Some(s) => Exit::Signal(s),
            None => Exit::Failure,
        }
    }
}

/// The message of a signal received (`None` for none), as [`Stopped::signal`] reads it.
pub fn interrupted_by(signal: usize) -> Option<String> {
    (signal != 0).then(|| format!("{INTERRUPTED}{signal}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stopped(message: &str) -> Stopped {
        Stopped {
            message: message.to_string(),
        }
    }

    #[test]
    fn an_interrupt_on_another_rank_gives_every_rank_its_code() {
        let other = stopped("rank 0: interrupted by signal 2");
        assert_eq!(other.exit(None), Exit::Signal(2));
        assert_eq!(other.exit(None).code(), 130);
        assert_eq!(other.exit(Some(15)).code(), 143);
        assert_eq!(
            stopped("rank 0: No space left on device").exit(None),
            Exit::Failure
        );
        assert_eq!(Stopped::said().exit(None), Exit::Failure);
    }

    #[test]
    fn the_signal_message_is_read_back() {
        let said = interrupted_by(15).unwrap();
        assert_eq!(stopped(&said).signal(), Some(15));
        assert_eq!(interrupted_by(0), None);
    }

    #[test]
    fn a_line_is_added_after_the_message() {
        let s = stopped("rank 1: write pattern 9 (type 1): failed").with_line("b_eff_io: advice");
        assert_eq!(
            s.message(),
            "rank 1: write pattern 9 (type 1): failed\nb_eff_io: advice"
        );
    }
}
