//! The scan's rounds over MPI: the ranks of paired nodes exchange windows of messages,
//! rank `j` of one node with rank `j` of the other, for a fixed time per size.
//!
//! Every round starts and ends with a barrier, so that the pairs of a round load the
//! network together and no pair overlaps the next round. Within a pair the side on the
//! node of lower index keeps the time: after each batch of iterations it tells its
//! partner the size of the next batch, or 0 to stop (a message of its own tag, outside
//! the timed part). Batches double while the time allows, so the count overshoots the
//! time by less than one batch.
//!
//! **Bounded on a slow link.** Before the windows of a measurement that moves more than
//! [`PROBE_BYTES`] per iteration, the pair exchanges one message of that size: when the
//! probe says one iteration would not fit in the measurement's time (4 × 1 MiB each way
//! take 17 s at 2 Mbit/s), the pair is measured by what the probe moved and stops there —
//! a link too slow to measure is itself the finding, and its round does not wait for it.
//! So a measurement lasts at most about three times its time (a warm-up iteration and a
//! last batch that each fit in it), plus the probe.

use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;

use crate::exec::buffers::AlignedBuffer;
use crate::exec::window::Window;
use crate::scan::pairing::Pair;
use crate::scan::{Node, PairRun, Settings, PROBE_BYTES};

/// The tag of the messages that carry the next batch's size.
const DECISION_TAG: i32 = 2;

/// One rank's part in the scan.
pub struct Scanner<'a> {
    world: &'a SimpleCommunicator,
    /// The node of every rank.
    node_of: Vec<u32>,
    /// Every node's ranks.
    nodes: Vec<Vec<usize>>,
    /// This rank's index among its node's ranks.
    local: usize,
    settings: Settings,
    send: AlignedBuffer,
    recv: AlignedBuffer,
    progress: Option<benchkit::watchdog::Progress>,
    /// Every node's host name, on rank 0 (for the watchdog's line elsewhere: the index).
    hosts: Option<Vec<String>>,
}

impl<'a> Scanner<'a> {
    /// This rank's part, from every rank's node index (the same on every rank).
    pub fn new(
        world: &'a SimpleCommunicator,
        node_of: Vec<u32>,
        settings: Settings,
        progress: benchkit::watchdog::Progress,
    ) -> Self {
        let count = node_of.iter().map(|&n| n as usize + 1).max().unwrap_or(0);
        let mut nodes = vec![Vec::new(); count];
        for (rank, &n) in node_of.iter().enumerate() {
            nodes[n as usize].push(rank);
        }
        let rank = world.rank() as usize;
        let local = nodes[node_of[rank] as usize]
            .iter()
            .position(|&r| r == rank)
            .expect("a rank is on its node");
        let largest = settings.large_bytes.max(settings.small_bytes);
        Scanner {
            world,
            node_of,
            nodes,
            local,
            settings,
            send: AlignedBuffer::zeroed(largest),
            recv: AlignedBuffer::zeroed(largest),
            progress: Some(progress),
            hosts: None,
        }
    }

    /// Names the nodes in the watchdog's lines (host names known on this rank).
    pub fn name_nodes(&mut self, hosts: Vec<String>) {
        self.hosts = Some(hosts);
    }

    fn node_name(&self, n: usize) -> String {
        match &self.hosts {
            Some(h) => h[n].clone(),
            None => format!("node {n} (rank {})", self.nodes[n][0]),
        }
    }

    /// Runs one round of `pairs` (the same list on every rank; a collective call).
    /// Returns, on rank 0, what each pair measured.
    pub fn round(&mut self, pairs: &[Pair], round: usize) -> Option<Vec<PairRun>> {
        let rank = self.world.rank() as usize;
        let me = self.node_of[rank] as usize;
        // My pair, my partner rank, and whether I keep the time.
        let mine = pairs.iter().position(|&(a, b)| a == me || b == me);
        let partner = mine.and_then(|k| {
            let (a, b) = pairs[k];
            let other = if a == me { b } else { a };
            let k_pairs = self.nodes[a].len().min(self.nodes[b].len());
            (self.local < k_pairs).then(|| (self.nodes[other][self.local], a == me, other))
        });
        // Every rank may wait in this round for the pairs still measuring (it sits the
        // round out, or its pair was faster): the round's planned length, each of its two
        // measurements allowed twice its time, is no stall.
        let allowance = std::time::Duration::from_secs_f64(4.0 * self.settings.seconds);
        if let Some(p) = &self.progress {
            let place = match partner {
                Some((peer, _, other)) => format!(
                    "scan round {}, exchanging with rank {peer} on {}",
                    round + 1,
                    self.node_name(other)
                ),
                None => format!(
                    "scan round {}, sitting it out (waiting for the pairs that measure)",
                    round + 1
                ),
            };
            p.wait(place, allowance);
        }
        self.quiet_barrier();
        let small = partner.map(|(peer, lower, _)| {
            self.exchange(
                peer,
                lower,
                self.settings.small_bytes,
                self.settings.window_small,
            )
        });
        self.quiet_barrier();
        let large = partner.map(|(peer, lower, _)| {
            self.exchange(
                peer,
                lower,
                self.settings.large_bytes,
                self.settings.window_large,
            )
        });
        self.quiet_barrier();
        // The time keepers report: pair index, messages per second, MiB per second, and
        // whether that bandwidth is the probe's.
        let report = match (mine, partner, small, large) {
            (Some(k), Some((_, true, _)), Some(s), Some(l)) => {
                [k as f64, s.rate, l.mib_per_s, f64::from(u8::from(l.probed))]
            }
            _ => [-1.0, 0.0, 0.0, 0.0],
        };
        self.gather(pairs, round, report)
    }

    fn gather(&self, pairs: &[Pair], round: usize, report: [f64; 4]) -> Option<Vec<PairRun>> {
        let root = self.world.process_at_rank(0);
        if self.world.rank() != 0 {
            root.gather_into(&report[..]);
            return None;
        }
        let mut all = vec![0.0f64; 4 * self.world.size() as usize];
        root.gather_into_root(&report[..], &mut all[..]);
        let mut runs: Vec<PairRun> = pairs
            .iter()
            .map(|&(a, b)| PairRun {
                a,
                b,
                round,
                rank_pairs: 0,
                msgs_per_s: 0.0,
                mib_per_s: 0.0,
                probed: 0,
            })
            .collect();
        for chunk in all.chunks_exact(4) {
            if chunk[0] >= 0.0 {
                let run = &mut runs[chunk[0] as usize];
                run.rank_pairs += 1;
                run.msgs_per_s += chunk[1];
                run.mib_per_s += chunk[2];
                run.probed += usize::from(chunk[3] > 0.0);
            }
        }
        Some(runs)
    }

    /// A barrier that waits without spinning: the ranks that sit out a round, or finished
    /// first, leave the processor to the ranks still measuring (on a node with more ranks
    /// than cores, a spinning idle rank slows the pairs it waits for).
    fn quiet_barrier(&self) {
        benchkit::heartbeat::quiet_barrier(self.world, self.progress.as_ref());
    }

    /// Exchanges windows of `size`-byte messages with `peer` for the settings' time;
    /// returns the messages (both ways) and MiB per second as this side measured them.
    fn exchange(&mut self, peer: usize, keeper: bool, size: usize, window: usize) -> Exchanged {
        if let Some(probed) = self.probe(peer, keeper, size, window) {
            return probed;
        }
        let (world, seconds) = (self.world, self.settings.seconds);
        let mut w = Window::new(world, &[peer], window);
        let send = self.send.as_slice();
        let recv = self.recv.as_mut_slice();
        // One iteration of warm-up: connections made, buffers registered.
        w.iterate(send, recv, size, 0);
        let mut batch: u64 = 1;
        let mut iterations: u64 = 0;
        let mut elapsed = 0.0f64;
        loop {
            let start = mpi::time();
            for _ in 0..batch {
                w.iterate(send, recv, size, 0);
                if let Some(p) = &self.progress {
                    p.tick();
                }
            }
            elapsed += mpi::time() - start;
            iterations += batch;
            let next = decide(world, peer, keeper, || {
                next_batch(batch, iterations, elapsed, seconds)
            });
            if next == 0 {
                break;
            }
            batch = next;
        }
        Exchanged::of(2 * window as u64 * iterations, size, elapsed, false)
    }

    /// Before iterations of `window` messages of `size` bytes that move more than
    /// [`PROBE_BYTES`]: one message of that size each way. When the time keeper finds that
    /// one iteration would not fit in the measurement's time at the probe's rate, it says
    /// so to its partner, and both return the probe's figures (messages both ways and MiB
    /// per second); `None` goes on with the measurement.
    fn probe(
        &mut self,
        peer: usize,
        keeper: bool,
        size: usize,
        window: usize,
    ) -> Option<Exchanged> {
        let per_iteration = size.saturating_mul(window);
        if per_iteration <= PROBE_BYTES {
            return None;
        }
        let mut w = Window::new(self.world, &[peer], 1);
        let start = mpi::time();
        w.iterate(
            self.send.as_slice(),
            self.recv.as_mut_slice(),
            PROBE_BYTES,
            0,
        );
        let took = (mpi::time() - start).max(f64::MIN_POSITIVE);
        if let Some(p) = &self.progress {
            p.tick();
        }
        let go = decide(self.world, peer, keeper, || {
            let iteration = took * per_iteration as f64 / PROBE_BYTES as f64;
            u64::from(fits(iteration, self.settings.seconds))
        });
        (go == 0).then(|| Exchanged::of(2, PROBE_BYTES, took, true))
    }
}

/// What one side of a pair measured in one exchange.
#[derive(Debug, Clone, Copy)]
struct Exchanged {
    /// Messages per second, both ways.
    rate: f64,
    /// MiB per second, both ways.
    mib_per_s: f64,
    /// Whether the figures are the probe's (one message of [`PROBE_BYTES`] each way).
    probed: bool,
}

impl Exchanged {
    /// `messages` of `size` bytes in `seconds`, by the probe or not.
    fn of(messages: u64, size: usize, seconds: f64, probed: bool) -> Exchanged {
        let rate = messages as f64 / seconds.max(f64::MIN_POSITIVE);
        Exchanged {
            rate,
            mib_per_s: rate * size as f64 / (1u64 << 20) as f64,
            probed,
        }
    }
}

/// The time keeper's decision, `decision()` on its side, sent to its partner `peer` (a
/// message of its own tag, outside the timed part); the partner's side receives it.
fn decide(
    world: &SimpleCommunicator,
    peer: usize,
    keeper: bool,
    decision: impl FnOnce() -> u64,
) -> u64 {
    let partner = world.process_at_rank(peer as i32);
    let mut d: u64 = 0;
    if keeper {
        d = decision();
        partner.send_with_tag(&d, DECISION_TAG);
    } else {
        partner.receive_into_with_tag(&mut d, DECISION_TAG);
    }
    d
}

/// Whether an iteration of `iteration` seconds (as a probe estimates it) fits in a
/// measurement of `seconds`.
fn fits(iteration: f64, seconds: f64) -> bool {
    iteration <= seconds
}

/// The next batch: 0 when `seconds` are up, else twice the last batch, or fewer when
/// that many would overshoot the time left by more than one iteration.
fn next_batch(last: u64, iterations: u64, elapsed: f64, seconds: f64) -> u64 {
    if elapsed >= seconds {
        return 0;
    }
    let per_iteration = elapsed / iterations as f64;
    let left = ((seconds - elapsed) / per_iteration.max(1e-9)).ceil();
    (last.saturating_mul(2) as f64).min(left).max(1.0) as u64
}

/// Every rank's processor name and the nodes they make, as rank 0 knows them.
pub type Named = (Vec<String>, Vec<Node>);

/// Every rank's node index, known on every rank (a collective call): rank 0 gathers the
/// processor names, groups them ([`crate::scan::nodes_of`]) and broadcasts an index per
/// rank. Returns the indices and, on rank 0, every rank's name and the nodes.
pub fn group_by_host(world: &SimpleCommunicator) -> (Vec<u32>, Option<Named>) {
    let names = benchkit::gather_strings(world, 0, &benchkit::processor_name());
    let size = world.size() as usize;
    let mut node_of = vec![0u32; size];
    let on_root = names.map(|names| {
        let nodes = crate::scan::nodes_of(&names);
        for (n, node) in nodes.iter().enumerate() {
            for &r in &node.ranks {
                node_of[r] = n as u32;
            }
        }
        (names, nodes)
    });
    world.process_at_rank(0).broadcast_into(&mut node_of[..]);
    (node_of, on_root)
}

/// `rounds` of pairs known on rank 0, on every rank (a collective call).
pub fn share_rounds(world: &SimpleCommunicator, rounds: Option<Vec<Vec<Pair>>>) -> Vec<Vec<Pair>> {
    let root = world.process_at_rank(0);
    // Flattened: per round its pair count, then the pairs.
    let mut flat: Vec<u64> = Vec::new();
    if let Some(rounds) = &rounds {
        for round in rounds {
            flat.push(round.len() as u64);
            for &(a, b) in round {
                flat.extend([a as u64, b as u64]);
            }
        }
    }
    let mut len = flat.len() as u64;
    root.broadcast_into(&mut len);
    flat.resize(len as usize, 0);
    root.broadcast_into(&mut flat[..]);
    let mut out = Vec::new();
    let mut i = 0;
    while i < flat.len() {
        let count = flat[i] as usize;
        let pairs = (0..count)
            .map(|k| (flat[i + 1 + 2 * k] as usize, flat[i + 2 + 2 * k] as usize))
            .collect();
        out.push(pairs);
        i += 1 + 2 * count;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{fits, next_batch};

    #[test]
    fn an_iteration_longer_than_the_measurement_is_not_made() {
        // 4 x 1 MiB at 2 Mbit/s: a 64 KiB probe takes 0.26 s, an iteration 16.8 s.
        assert!(!fits(0.26 * 64.0, 0.5));
        // The same on a link of gigabytes per second: 40 us, 2.6 ms.
        assert!(fits(40e-6 * 64.0, 0.5));
        assert!(fits(0.5, 0.5));
    }

    #[test]
    fn batches_double_until_the_time_is_nearly_up_then_stop() {
        assert_eq!(next_batch(1, 1, 0.001, 0.5), 2);
        assert_eq!(next_batch(64, 127, 0.127, 0.5), 128);
        // 0.1 s left at 1 ms per iteration: 100, not 256.
        assert_eq!(next_batch(128, 400, 0.4, 0.5), 100);
        assert_eq!(next_batch(100, 500, 0.5, 0.5), 0);
        // One iteration slower than the whole time: stop after it.
        assert_eq!(next_batch(1, 1, 2.0, 0.5), 0);
        assert_eq!(next_batch(1, 1, 0.0, 0.5), 2);
    }
}
