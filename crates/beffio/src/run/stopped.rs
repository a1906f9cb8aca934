//! Why a run stops once its ranks have agreed on it: the one error type of the execution
//! layer, carrying the exit it ends with.

use benchkit::{agree_failure_max, message_of, Exit, Failure};
use mpi::topology::Communicator;

/// A failure every rank of a communicator knows alike (agreed on): the lowest failing
/// rank's message, or an empty one when the failure was said already, and the exit every
/// rank leaves with (the largest code any failing rank asked for: an interrupt wins over
/// the failure it caused, bad input over a failure). A rank-local failure becomes one
/// only through an agreement ([`Stopped::agree`] and its kin), so a rank cannot stop
/// alone by mistake.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Stopped {
    message: String,
    exit: Exit,
}

impl Stopped {
    /// Agrees on `local` over `comm` (a collective call): `Err` on every rank when it is
    /// `Some` on any, with the lowest failing rank's message and the largest exit code
    /// asked for.
    pub fn agree<C: Communicator, F: Into<Failure>>(
        comm: &C,
        local: Option<F>,
    ) -> Result<(), Stopped> {
        Self::agree_max(comm, local, []).map(|[]| ())
    }

    /// [`Stopped::agree`] and the maximum of each of `values` over the ranks, in one
    /// reduction ([`agree_failure_max`]).
    pub fn agree_max<C: Communicator, F: Into<Failure>, const K: usize>(
        comm: &C,
        local: Option<F>,
        values: [f64; K],
    ) -> Result<[f64; K], Stopped> {
        agree_failure_max(comm, local.map(Into::into), values).map_err(|f| Stopped {
            message: f.message,
            exit: Exit::from_code(f.code),
        })
    }

    /// The failure of rank `first`, which every rank of `comm` knows to be the lowest
    /// failing one, ending with `exit`, which every rank knows too (a collective call:
    /// the `local` message of `first` reaches every rank).
    pub fn of_rank<C: Communicator>(
        comm: &C,
        first: i32,
        exit: Exit,
        local: Option<String>,
    ) -> Stopped {
        Stopped {
            message: message_of(comm, first, local),
            exit,
        }
    }

    /// A failure every rank learnt of from an agreement that printed it already (or
    /// that concerns ranks outside this one's communicator): nothing more to say.
    pub fn said(exit: Exit) -> Stopped {
        Stopped {
            message: String::new(),
            exit,
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
            exit: self.exit,
        }
    }

    /// This failure again, for an agreement over a wider communicator (the ranks
    /// outside a partition learn of it with its exit).
    pub fn failure(&self) -> Failure {
        Failure::new(self.exit.code(), self.message.clone())
    }

    /// The exit, the same on every rank: 128 + the signal when this rank was interrupted
    /// (`local_signal`), else the agreed one (128 + the signal another rank was
    /// interrupted by: a launcher that ORs its ranks' codes, as hydra does, would
    /// otherwise report 130 | 1 = 131).
    pub fn exit(&self, local_signal: Option<i32>) -> Exit {
        local_signal.map_or(self.exit, Exit::Signal)
    }
}

/// The failure of a signal received (`None` for none): exit 128 + the signal.
pub fn interrupted_by(signal: usize) -> Option<Failure> {
    let s = i32::try_from(signal).ok().filter(|&s| s != 0)?;
    Some(Failure::new(
        Exit::Signal(s).code(),
        format!("interrupted by signal {s}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stopped(message: &str, exit: Exit) -> Stopped {
        Stopped {
            message: message.to_string(),
            exit,
        }
    }

    #[test]
    fn the_agreed_exit_is_every_ranks_unless_this_rank_was_interrupted() {
        let other = stopped("rank 0: interrupted by signal 2", Exit::Signal(2));
        assert_eq!(other.exit(None), Exit::Signal(2));
        assert_eq!(other.exit(None).code(), 130);
        assert_eq!(other.exit(Some(15)).code(), 143);
        let planted = stopped(
            "cannot use --path 'p': a link another user planted",
            Exit::Usage,
        );
        assert_eq!(planted.exit(None).code(), 2);
        assert_eq!(Stopped::said(Exit::Failure).exit(None), Exit::Failure);
    }

    #[test]
    fn a_signal_is_a_failure_with_its_exit_and_a_message_alone_is_exit_1() {
        let failure = interrupted_by(15).unwrap();
        assert_eq!(Exit::from_code(failure.code), Exit::Signal(15));
        assert_eq!(failure.message, "interrupted by signal 15");
        assert_eq!(interrupted_by(0), None);
        assert_eq!(Failure::from("disk full".to_string()).code, 1);
    }

    #[test]
    fn a_line_is_added_after_the_message_and_the_exit_kept() {
        let s = stopped("rank 1: write pattern 9 (type 1): failed", Exit::Usage)
            .with_line("b_eff_io: advice");
        assert_eq!(
            s.message(),
            "rank 1: write pattern 9 (type 1): failed\nb_eff_io: advice"
        );
        assert_eq!(s.failure().code, Exit::Usage.code());
    }
}
