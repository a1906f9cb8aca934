//! The contents `--validate` puts in every message and checks on arrival.
//!
//! A message's bytes depend on the sending rank, the message size and the iteration, so
//! a message from the wrong peer, of the wrong iteration, cut short (a receive buffer
//! still holding an earlier iteration's message) or with a damaged byte is told apart
//! from the right one.
//!
//! The message of `sender` in `iteration` at `size` bytes is the size's [`base`] (pseudo
//! random bytes, made once per size) XOR its [`key`], eight bytes repeated over the
//! message. Each key byte is the iteration's low byte plus an offset drawn from the
//! sender and the size, so every byte of a message differs from the same byte of each of
//! the 255 iterations before and after it (a receive that landed only partly, leaving an
//! earlier message's bytes, is always found), and a wrong sender or size differs in all
//! but about one in 256 bytes. Messages repeat every 256 iterations; one that late cannot
//! be matched, since MPI keeps one sender's messages in order.
//!
//! The receiver checks a message in one pass over it and the base, a word at a time
//! ([`is_message`]: message XOR key against the base, the differences OR-ed together,
//! which the compiler vectorises), without writing the expected bytes anywhere; only a
//! message that differs is searched for its first damaged byte ([`first_difference`]).

/// splitmix64's finalizer: a well-mixed word of `z`.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Fills `buffer` with the base bytes of messages of `buffer.len()` bytes.
pub fn base(buffer: &mut [u8]) {
    let seed = mix((buffer.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut chunks = buffer.chunks_exact_mut(8);
    let mut i = 0u64;
    for chunk in &mut chunks {
        chunk.copy_from_slice(&mix(seed.wrapping_add(i)).to_le_bytes());
        i += 1;
    }
    let tail = chunks.into_remainder();
    let last = mix(seed.wrapping_add(i)).to_le_bytes();
    let n = tail.len();
    tail.copy_from_slice(&last[..n]);
}

/// The key of the message of `sender` at `size` bytes in `iteration`: its eight bytes
/// (little-endian) are the iteration's low byte plus eight offsets of the sender and size.
#[inline]
pub fn key(sender: usize, size: usize, iteration: u64) -> u64 {
    let offsets = mix((sender as u64)
        .wrapping_mul(0x1000_0000_01B3)
        .wrapping_add((size as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)))
    .to_le_bytes();
    let low = iteration as u8;
    u64::from_le_bytes(offsets.map(|o| o.wrapping_add(low)))
}

/// Writes `base XOR key` (the key's little-endian bytes repeated) into `out`; both are
/// one message long.
#[inline]
pub fn apply(out: &mut [u8], base: &[u8], key: u64) {
    assert_eq!(out.len(), base.len(), "a message and its base");
    let bytes = key.to_le_bytes();
    let mut outs = out.chunks_exact_mut(8);
    let mut bases = base.chunks_exact(8);
    for (o, b) in (&mut outs).zip(&mut bases) {
        let mut word = [0u8; 8];
        word.copy_from_slice(b);
        o.copy_from_slice(&(u64::from_le_bytes(word) ^ key).to_le_bytes());
    }
    for ((o, b), k) in outs
        .into_remainder()
        .iter_mut()
        .zip(bases.remainder())
        .zip(bytes)
    {
        *o = b ^ k;
    }
}

/// Whether `message` is `base XOR key` (the key's little-endian bytes repeated): the
/// message with that key, checked in one pass over both, nothing written.
#[inline]
pub fn is_message(message: &[u8], base: &[u8], key: u64) -> bool {
    if message.len() != base.len() {
        return false;
    }
    let word = |b: &[u8]| {
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        u64::from_le_bytes(w)
    };
    let mut messages = message.chunks_exact(8);
    let mut bases = base.chunks_exact(8);
    let diff = (&mut messages)
        .zip(&mut bases)
        .fold(0u64, |d, (m, b)| d | (word(m) ^ word(b) ^ key));
    let tail = messages
        .remainder()
        .iter()
        .zip(bases.remainder())
        .zip(key.to_le_bytes())
        .fold(0u8, |d, ((m, b), k)| d | (m ^ b ^ k));
    diff == 0 && tail == 0
}

/// Fills `buffer` with the message of `sender` in `iteration` (the buffer's length is the
/// message size): the base, then the key over it.
#[cfg(test)]
pub fn fill(buffer: &mut [u8], sender: usize, iteration: u64) {
    base(buffer);
    let k = key(sender, buffer.len(), iteration);
    let bytes = k.to_le_bytes();
    for (i, b) in buffer.iter_mut().enumerate() {
        *b ^= bytes[i % 8];
    }
}

/// The first index at which `a` and `b` differ (or where the shorter ends), `None` when
/// they are equal.
pub fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    if a == b {
        return None;
    }
    Some(
        a.iter()
            .zip(b)
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len())),
    )
}

/// The first index at which `buffer` differs from the message of `sender` in
/// `iteration`, or `None` when it is intact (allocates the expected message: for tests
/// and single checks; the run compares against one prepared per sender and iteration).
#[cfg(test)]
pub fn first_mismatch(buffer: &[u8], sender: usize, iteration: u64) -> Option<usize> {
    let mut expected = vec![0u8; buffer.len()];
    fill(&mut expected, sender, iteration);
    first_difference(buffer, &expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_intact_message_passes_and_a_flipped_byte_is_found() {
        for size in [1, 7, 8, 9, 1000, 4096] {
            let mut m = vec![0u8; size];
            fill(&mut m, 3, 17);
            assert_eq!(first_mismatch(&m, 3, 17), None, "{size}");
            for at in [0, size / 2, size - 1] {
                let mut bad = m.clone();
                bad[at] ^= 0x01;
                assert_eq!(first_mismatch(&bad, 3, 17), Some(at), "{size} at {at}");
            }
        }
    }

    #[test]
    fn is_message_agrees_with_comparing_against_the_expected_bytes() {
        for size in [0usize, 1, 7, 8, 9, 63, 64, 65, 1000, 4096] {
            let mut base_bytes = vec![0u8; size];
            base(&mut base_bytes);
            let k = key(3, size, 17);
            let mut message = vec![0u8; size];
            apply(&mut message, &base_bytes, k);
            assert!(is_message(&message, &base_bytes, k), "size {size}");
            assert!(size == 0 || !is_message(&message, &base_bytes, key(3, size, 18)));
            for at in [0, size / 2, size.saturating_sub(1)] {
                if size == 0 {
                    continue;
                }
                let mut bad = message.clone();
                bad[at] ^= 0x10;
                assert!(!is_message(&bad, &base_bytes, k), "size {size}, byte {at}");
            }
            assert!(!is_message(&message[..size.saturating_sub(1)], &base_bytes, k) || size == 0);
        }
    }

    #[test]
    fn apply_makes_the_same_message_as_fill() {
        for size in [0, 1, 5, 8, 13, 64, 4099] {
            let mut b = vec![0u8; size];
            base(&mut b);
            let mut out = vec![0u8; size];
            apply(&mut out, &b, key(2, size, 300));
            let mut filled = vec![0u8; size];
            fill(&mut filled, 2, 300);
            assert_eq!(out, filled, "{size}");
        }
    }

    #[test]
    fn the_wrong_sender_size_or_iteration_is_found() {
        let mut m = vec![0u8; 64];
        fill(&mut m, 3, 17);
        assert!(first_mismatch(&m, 4, 17).is_some());
        assert!(first_mismatch(&m, 3, 18).is_some());
        // The prefix of a longer message is not a shorter one (the size is in the base).
        let mut short = vec![0u8; 32];
        fill(&mut short, 3, 17);
        assert_ne!(&m[..32], &short[..]);
        // A wrong sender differs almost everywhere.
        let mut other = vec![0u8; 4096];
        let mut right = vec![0u8; 4096];
        fill(&mut other, 1, 17);
        fill(&mut right, 2, 17);
        let same = other.iter().zip(&right).filter(|(x, y)| x == y).count();
        assert!(same <= 4096 / 8, "{same} equal bytes");
    }

    #[test]
    fn every_byte_differs_from_the_255_iterations_before_and_after() {
        // A receive that lands only partly leaves an earlier iteration's bytes behind:
        // none of them may pass for the new message's.
        let message = |iteration| {
            let mut m = vec![0u8; 24];
            fill(&mut m, 1, iteration);
            m
        };
        for now in [255u64, 256, 1000] {
            let m = message(now);
            for distance in 1..=255 {
                for other in [now - distance.min(now), now + distance] {
                    if other == now {
                        continue;
                    }
                    let o = message(other);
                    assert!(m.iter().zip(&o).all(|(x, y)| x != y), "{now} vs {other}");
                }
            }
        }
        // Every 256 iterations the message repeats.
        assert_eq!(message(10), message(266));
    }

    #[test]
    fn differences_are_located() {
        assert_eq!(first_difference(b"abc", b"abc"), None);
        assert_eq!(first_difference(b"abc", b"abd"), Some(2));
        assert_eq!(first_difference(b"ab", b"abc"), Some(2));
    }

    #[test]
    fn empty_messages_are_always_intact() {
        assert_eq!(first_mismatch(&[], 1, 1), None);
    }
}
