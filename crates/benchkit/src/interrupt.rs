//! SIGINT and SIGTERM as a user means them: stop soon, on every rank together, keep what
//! was measured, and leave with exit code 128 + the signal.
//!
//! [`Interrupt::install`] records the first SIGINT or SIGTERM in a flag (a second one of
//! the same kind kills the process at once, as without a handler). The benchmark calls
//! [`Interrupt::agree`] between its steps: a collective that tells every rank whether any
//! rank was interrupted, so that all of them stop at the same step, finalize and leave
//! with the same code; the launcher then reports 128 + signal, as the README says.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use mpi::collective::SystemOperation;
use mpi::traits::*;

/// The exit code of a run stopped by signal `signal`.
pub fn exit_code(signal: i32) -> i32 {
    128 + signal
}

/// The signal's conventional name, for messages.
pub fn name(signal: i32) -> &'static str {
    match signal {
        2 => "SIGINT",
        15 => "SIGTERM",
        _ => "a signal",
    }
}

/// The flag the handlers set.
#[derive(Debug, Clone)]
pub struct Interrupt {
    caught: Arc<AtomicUsize>,
}

impl Interrupt {
    /// Installs the handlers for SIGINT and SIGTERM. Where they cannot be installed the
    /// signals keep their default action (the run is killed), which is said.
    pub fn install(program: &str) -> Interrupt {
        let caught = Arc::new(AtomicUsize::new(0));
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // The second signal of a kind takes the default action: a user who presses
            // Ctrl-C twice does not wait for the end of a step.
            let armed = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let second = signal_hook::flag::register_conditional_default(signal, armed.clone());
            let first = signal_hook::flag::register_usize(signal, caught.clone(), signal as usize);
            let armed_flag = signal_hook::flag::register(signal, armed);
            if second.is_err() || first.is_err() || armed_flag.is_err() {
                outfile::eprintln!(
                    "{program}: warning: cannot handle {}; it will end the run at once",
                    name(signal)
                );
            }
        }
        Interrupt { caught }
    }

    /// The signal caught on this rank, if any.
    pub fn caught(&self) -> Option<i32> {
        match self.caught.load(Ordering::SeqCst) {
            0 => None,
            s => i32::try_from(s).ok(),
        }
    }

    /// Whether any rank of `comm` was interrupted (a collective call: every rank must call
    /// it at the same step). Returns the signal, the same on every rank.
    pub fn agree<C: Communicator>(&self, comm: &C) -> Option<i32> {
        let mine = self.caught().unwrap_or(0);
        let mut any = 0i32;
        comm.all_reduce_into(&mine, &mut any, SystemOperation::max());
        (any != 0).then_some(any)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names() {
        assert_eq!(exit_code(2), 130);
        assert_eq!(exit_code(15), 143);
        assert_eq!(name(2), "SIGINT");
        assert_eq!(name(15), "SIGTERM");
    }

    #[test]
    fn a_caught_signal_is_recorded_and_a_second_one_would_be_fatal() {
        let interrupt = Interrupt::install("test");
        assert_eq!(interrupt.caught(), None);
        // Raise the signal in this process; the handler records it.
        signal_hook::low_level::raise(signal_hook::consts::SIGTERM).unwrap();
        assert_eq!(interrupt.caught(), Some(15));
    }
}
