//! The timed loop over all sizes, and the aggregation of the core ranks' times.

use mpi::topology::{Color, Communicator, SimpleCommunicator};
use mpi::traits::*;

use crate::config::{Config, WARMUP_ITERATIONS};
use crate::exec::buffers::AlignedBuffer;
use crate::exec::window::Window;
use crate::pattern;
use crate::schedule::Step;
use crate::topology::Topology;

/// What one size gave: on rank 0, every core rank's elapsed seconds; elsewhere nothing.
pub type CoreTimes = Option<Vec<f64>>;

/// A message that `--validate` found damaged (the first one on a rank).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Corruption {
    /// The receiving rank.
    pub rank: usize,
    /// The rank that sent it.
    pub from: usize,
    /// Message size.
    pub msgsize: usize,
    /// Iteration at that size, warm-up included.
    pub iteration: u64,
    /// First damaged byte.
    pub byte: usize,
}

/// What `--validate` counted on this rank.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Checked {
    /// Messages checked.
    pub messages: u64,
    /// Messages found damaged.
    pub corrupted: u64,
    /// The first damaged one.
    pub first: Option<Corruption>,
}

/// The benchmark on one rank: buffers, window, and the communicator of the core ranks.
pub struct Runner<'a> {
    world: &'a SimpleCommunicator,
    cores: SimpleCommunicator,
    rank: usize,
    is_core: bool,
    peers: Vec<usize>,
    window: Window,
    send: AlignedBuffer,
    recv: AlignedBuffer,
    validate: bool,
    corrupt_one: bool,
    corrupted_once: bool,
    /// What `--validate` found so far on this rank.
    pub checked: Checked,
}

impl<'a> Runner<'a> {
    /// Prepares this rank (a collective call: it splits off the core ranks'
    /// communicator). `corrupt_one` is the test aid that damages one message.
    pub fn new(world: &'a SimpleCommunicator, config: &Config, corrupt_one: bool) -> Self {
        let rank = world.rank() as usize;
        let topology = Topology {
            num_cores: config.num_cores,
            num_nbors: config.num_nbors,
        };
        let is_core = topology.is_core(rank);
        let cores = world
            .split_by_color(Color::with_value(if is_core { 0 } else { 1 }))
            .expect("every rank has a colour");
        let peers = topology.peers(rank);
        let window = Window::new(world, &peers, config.win_size);
        let max = config.max_msgsize as usize;
        let receive_slots = if config.validate { window.slots() } else { 1 };
        Runner {
            world,
            cores,
            rank,
            is_core,
            peers,
            send: AlignedBuffer::zeroed(max),
            recv: AlignedBuffer::zeroed(max * receive_slots),
            window,
            validate: config.validate,
            corrupt_one,
            corrupted_once: false,
            checked: Checked::default(),
        }
    }

    /// Runs one size (a collective call on every rank) and returns, on rank 0, every
    /// core rank's elapsed time.
    pub fn step(&mut self, step: Step) -> CoreTimes {
        let size = step.msgsize as usize;
        let total = WARMUP_ITERATIONS + step.iters;
        self.world.barrier();
        let elapsed = if self.validate {
            self.timed_validated(size, total)
        } else {
            self.timed(size, total)
        };
        self.gather_core_times(elapsed)
    }

    /// The plain loop: exactly the reference's calls, nothing else.
    fn timed(&mut self, size: usize, total: u64) -> f64 {
        let send = self.send.as_slice();
        let recv = self.recv.as_mut_slice();
        let mut clock = Clock::new(self.world, self.is_core);
        for iteration in 0..total {
            clock.tick(iteration);
            self.window.iterate(send, recv, size, 0);
        }
        clock.elapsed()
    }

    /// The loop with `--validate`: own receive buffer per slot, every message filled
    /// and checked.
    fn timed_validated(&mut self, size: usize, total: u64) -> f64 {
        let mut clock = Clock::new(self.world, self.is_core);
        for iteration in 0..total {
            clock.tick(iteration);
            let send = &mut self.send.as_mut_slice()[..size];
            pattern::fill(send, self.rank, iteration);
            if self.corrupt_one
                && !self.corrupted_once
                && size > 0
                && iteration == WARMUP_ITERATIONS
            {
                send[0] ^= 0xFF;
                self.corrupted_once = true;
            }
            self.window
                .iterate(self.send.as_slice(), self.recv.as_mut_slice(), size, size);
            self.check(size, iteration);
        }
        clock.elapsed()
    }

    fn check(&mut self, size: usize, iteration: u64) {
        let recv = self.recv.as_slice();
        for slot in 0..self.window.slots() {
            let from = self.peers[slot % self.peers.len()];
            let message = &recv[slot * size..(slot + 1) * size];
            self.checked.messages += 1;
            if let Some(byte) = pattern::first_mismatch(message, from, iteration) {
                self.checked.corrupted += 1;
                self.checked.first.get_or_insert(Corruption {
                    rank: self.rank,
                    from,
                    msgsize: size,
                    iteration,
                    byte,
                });
            }
        }
    }

    fn gather_core_times(&self, elapsed: f64) -> CoreTimes {
        if !self.is_core {
            return None;
        }
        let root = self.cores.process_at_rank(0);
        if self.cores.rank() == 0 {
            let mut all = vec![0.0f64; self.cores.size() as usize];
            root.gather_into_root(&elapsed, &mut all[..]);
            Some(all)
        } else {
            root.gather_into(&elapsed);
            None
        }
    }
}

/// The timing of one size: after the warm-up, a barrier over all ranks, then the core
/// ranks read the clock; they read it again at the end.
struct Clock<'a> {
    world: &'a SimpleCommunicator,
    is_core: bool,
    start: f64,
}

impl<'a> Clock<'a> {
    fn new(world: &'a SimpleCommunicator, is_core: bool) -> Self {
        Clock {
            world,
            is_core,
            start: 0.0,
        }
    }

    /// Called at the start of every iteration; starts the clock at the first timed one.
    #[inline]
    fn tick(&mut self, iteration: u64) {
        if iteration == WARMUP_ITERATIONS {
            self.world.barrier();
            if self.is_core {
                self.start = mpi::time();
            }
        }
    }

    /// Seconds since the start on a core rank, 0 elsewhere.
    fn elapsed(&self) -> f64 {
        if self.is_core {
            mpi::time() - self.start
        } else {
            0.0
        }
    }
}
