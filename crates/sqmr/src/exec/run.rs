//! The timed loops of each size, the repeats, and the aggregation of the core ranks' times.

use mpi::topology::{Color, Communicator, SimpleCommunicator};
use mpi::traits::*;

use crate::config::{Config, WARMUP_ITERATIONS};
use crate::exec::buffers::AlignedBuffer;
use crate::exec::window::Window;
use crate::forecast;
use crate::pattern;
use crate::schedule::Step;
use crate::stats::{Measured, Plan, Stop};
use crate::topology::Topology;

/// What one timed loop gave: on rank 0, every core rank's elapsed seconds; elsewhere
/// nothing.
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
    /// Iteration at that size, warm-up and earlier samples included.
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

/// Where the base bytes start in their buffer: half a page past the page-aligned send
/// buffer's start, so that for messages up to 2 KiB the two use different cache sets.
const BASE_SKEW: usize = 2048;

/// The distance between two receive slots under `--validate`: the message rounded up to
/// a cache line, plus one line, so that slot `j` starts `j` lines further into the cache
/// sets than a page-multiple stride would put it. With page-aligned slots, the ten
/// pending messages of 2 KiB all fall into the same half of the L1 sets and evict each
/// other before they are checked.
fn validated_stride(size: usize) -> usize {
    size.next_multiple_of(64) + 64
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
    /// With `--validate`: the base bytes of the current size's messages, from byte
    /// [`BASE_SKEW`] on.
    base: AlignedBuffer,
    validate: bool,
    /// Iterations run at the current size (warm-up and earlier samples included): the
    /// iteration the pattern of `--validate` depends on.
    iteration: u64,
    corrupt_one: bool,
    corrupted_once: bool,
    /// What `--validate` found so far on this rank.
    pub checked: Checked,
    /// Where the watchdog learns of this rank's progress (one tick per iteration).
    progress: Option<benchkit::watchdog::Progress>,
    /// Whom this rank exchanges messages with, in words, for the watchdog's line.
    partners: String,
    /// Until the first size's warm-up: the run's timed iterations at least, for
    /// [`forecast::announcement`].
    forecast: Option<u128>,
    /// Seconds spent since the last size in agreements across ranks (whether its results
    /// were written, whether a signal came): counted in the next size's wall time, so that
    /// a rank stopped between two sizes is not hidden between them.
    between: f64,
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
        let (receive_slots, stride) = if config.validate {
            (window.slots(), validated_stride(max))
        } else {
            (1, max)
        };
        let pattern = if config.validate { max + BASE_SKEW } else { 0 };
        Runner {
            world,
            cores,
            rank,
            is_core,
            peers,
            send: AlignedBuffer::zeroed(max),
            recv: AlignedBuffer::zeroed(stride * receive_slots),
            base: AlignedBuffer::zeroed(pattern),
            window,
            validate: config.validate,
            iteration: 0,
            corrupt_one,
            corrupted_once: false,
            checked: Checked::default(),
            progress: None,
            partners: String::new(),
            forecast: None,
            between: 0.0,
        }
    }

    /// Reports this rank's progress to `progress` from now on: where it is at each size
    /// (with whom it exchanges messages, by rank and host) and a tick per iteration.
    /// Collective: every rank learns its peers' host names.
    pub fn watch(&mut self, progress: benchkit::watchdog::Progress) {
        let hosts = peer_hosts(self.world, &self.peers);
        let role = if self.is_core {
            "neighbour rank"
        } else {
            "core rank"
        };
        let listed: Vec<String> = self
            .peers
            .iter()
            .zip(&hosts)
            .take(8)
            .map(|(p, h)| format!("{p} on {h}"))
            .collect();
        let more = self.peers.len().saturating_sub(listed.len());
        self.partners = format!(
            "waiting for {role}{} {}{}",
            if self.peers.len() > 1 { "s" } else { "" },
            listed.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
        self.progress = Some(progress);
    }

    /// Announces, on rank 0 before the first timed loop, a run of at least
    /// `timed_iterations` that the first warm-up's pace makes far longer than usual.
    pub fn forecast(&mut self, timed_iterations: u128) {
        self.forecast = Some(timed_iterations);
    }

    /// Counts `seconds` (spent after a size in agreements across ranks) into the next
    /// size's wall time.
    pub fn between_sizes(&mut self, seconds: f64) {
        self.between += seconds.max(0.0);
    }

    /// Runs one size (a collective call on every rank): a barrier, the warm-up, then
    /// timed loops of `step.iters` iterations, each after a barrier, as many as `plan`
    /// says. `value` turns one loop's core times into the figure `--precision` judges
    /// (the average rate). Returns, on rank 0, every loop's core times.
    ///
    /// Without `--precision` every rank knows the count; with it rank 0 decides after
    /// each loop and broadcasts the decision, so that all ranks stop together.
    pub fn measure(
        &mut self,
        step: Step,
        plan: &Plan,
        value: impl Fn(&[f64]) -> f64,
    ) -> Option<Measured> {
        let size = step.msgsize as usize;
        if let Some(p) = &self.progress {
            p.at(format!("message size {size} B, {}", self.partners));
        }
        let started = mpi::time() - std::mem::take(&mut self.between);
        if self.validate {
            pattern::base(&mut self.base.as_mut_slice()[BASE_SKEW..BASE_SKEW + size]);
        }
        self.world.barrier();
        self.iteration = 0;
        match self.forecast.take() {
            None => self.iterations(size, WARMUP_ITERATIONS),
            Some(total) => {
                // The first half makes the connections; the second gives the pace.
                let first_half = WARMUP_ITERATIONS / 2;
                self.iterations(size, first_half);
                let t0 = mpi::time();
                self.iterations(size, WARMUP_ITERATIONS - first_half);
                let pace = (mpi::time() - t0) / (WARMUP_ITERATIONS - first_half) as f64;
                if self.rank == 0 {
                    if let Some(line) = forecast::announcement(pace, &step, total) {
                        outfile::eprintln!("{line}");
                    }
                }
            }
        }
        let mut samples = Vec::new();
        let mut values = Vec::new();
        let mut count = 0u64;
        let stop = loop {
            let times = self.sample(size, step.iters);
            count += 1;
            if let Some(times) = times {
                values.push(value(&times));
                samples.push(times);
            }
            let stop = match plan.precision {
                None => (count >= plan.repeat).then_some(Stop::Repeat),
                Some(_) => {
                    let mine = plan.decide(&values, mpi::time() - started);
                    self.agree_stop(mine)
                }
            };
            if let Some(stop) = stop {
                break stop;
            }
        };
        let wall_s = mpi::time() - started;
        (self.world.rank() == 0).then_some(Measured {
            samples,
            stop,
            wall_s,
        })
    }

    /// Rank 0's decision, on every rank.
    fn agree_stop(&self, mine: Option<Stop>) -> Option<Stop> {
        let mut code = mine.map_or(0, Stop::code);
        self.world.process_at_rank(0).broadcast_into(&mut code);
        Stop::from_code(code)
    }

    /// One timed loop: a barrier over all ranks, then the core ranks read the clock,
    /// run the iterations and read it again.
    fn sample(&mut self, size: usize, iters: u64) -> CoreTimes {
        self.world.barrier();
        let start = if self.is_core { mpi::time() } else { 0.0 };
        self.iterations(size, iters);
        let elapsed = if self.is_core {
            mpi::time() - start
        } else {
            0.0
        };
        self.gather_core_times(elapsed)
    }

    fn iterations(&mut self, size: usize, count: u64) {
        if self.validate {
            self.validated(size, count);
        } else {
            self.plain(size, count);
        }
        self.iteration += count;
    }

    /// The plain loop: exactly the reference's calls, and a counter for the watchdog.
    fn plain(&mut self, size: usize, count: u64) {
        let send = self.send.as_slice();
        let recv = self.recv.as_mut_slice();
        match &self.progress {
            Some(p) => self.window.repeat(send, recv, size, count, || p.tick()),
            None => self.window.repeat(send, recv, size, count, || {}),
        }
    }

    /// The loop with `--validate`: own receive buffer per slot, every message made from
    /// the size's base (one XOR pass) and checked.
    fn validated(&mut self, size: usize, count: u64) {
        for iteration in self.iteration..self.iteration + count {
            let send = &mut self.send.as_mut_slice()[..size];
            let key = pattern::key(self.rank, size, iteration);
            pattern::apply(
                send,
                &self.base.as_slice()[BASE_SKEW..BASE_SKEW + size],
                key,
            );
            if self.corrupt_one
                && !self.corrupted_once
                && size > 0
                && iteration == WARMUP_ITERATIONS
            {
                send[0] ^= 0xFF;
                self.corrupted_once = true;
            }
            self.window.iterate(
                self.send.as_slice(),
                self.recv.as_mut_slice(),
                size,
                validated_stride(size),
            );
            self.check(size, iteration);
            if let Some(p) = &self.progress {
                p.tick();
            }
        }
    }

    /// Checks every received message of `iteration` against its peer's key, one pass over
    /// each; only a damaged one gets its expected bytes made, to find the first bad byte.
    fn check(&mut self, size: usize, iteration: u64) {
        let slots = self.window.slots();
        let peers = self.peers.len();
        let stride = validated_stride(size);
        let recv = self.recv.as_slice();
        let base = &self.base.as_slice()[BASE_SKEW..BASE_SKEW + size];
        self.checked.messages += slots as u64;
        for (p, &from) in self.peers.iter().enumerate() {
            let key = pattern::key(from, size, iteration);
            for slot in (p..slots).step_by(peers) {
                let message = &recv[slot * stride..slot * stride + size];
                if pattern::is_message(message, base, key) {
                    continue;
                }
                let mut expected = vec![0u8; size];
                pattern::apply(&mut expected, base, key);
                let byte = pattern::first_difference(message, &expected).unwrap_or(0);
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
        if let Some(p) = &self.progress {
            p.tick();
        }
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

/// The processor names of `peers`, exchanged pairwise: a core rank goes through its
/// neighbours in order, and each neighbour has that core rank as its only peer, so every
/// exchange finds its partner waiting.
fn peer_hosts(world: &SimpleCommunicator, peers: &[usize]) -> Vec<String> {
    const LEN: usize = 256;
    let mut mine = [0u8; LEN];
    let name = benchkit::processor_name();
    let n = name.len().min(LEN);
    mine[..n].copy_from_slice(&name.as_bytes()[..n]);
    peers
        .iter()
        .map(|&p| {
            let mut theirs = [0u8; LEN];
            let peer = world.process_at_rank(p as i32);
            mpi::point_to_point::send_receive_into(&mine[..], &peer, &mut theirs[..], &peer);
            let end = theirs.iter().position(|&b| b == 0).unwrap_or(LEN);
            String::from_utf8_lossy(&theirs[..end]).into_owned()
        })
        .collect()
}
