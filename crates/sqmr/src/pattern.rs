//! The contents `--validate` puts in every message and checks on arrival.
//!
//! A message's bytes depend on the sending rank, the message size and the iteration, so
//! a message from the wrong peer, of the wrong iteration or with a damaged byte is told
//! apart from the right one.

/// The byte at `index` of a message from `sender` of `size` bytes in `iteration`.
#[inline]
fn byte(seed: u64, index: usize) -> u8 {
    (seed
        .wrapping_add(index as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        >> 56) as u8
}

fn seed(sender: usize, size: usize, iteration: u64) -> u64 {
    (sender as u64)
        .wrapping_mul(0x1000_0000_01B3)
        .wrapping_add((size as u64) << 32)
        .wrapping_add(iteration.wrapping_mul(0x2545_F491_4F6C_DD1D))
}

/// Fills `buffer` with the message of `sender` in `iteration` (the buffer's length is the
/// message size).
pub fn fill(buffer: &mut [u8], sender: usize, iteration: u64) {
    let s = seed(sender, buffer.len(), iteration);
    for (i, b) in buffer.iter_mut().enumerate() {
        *b = byte(s, i);
    }
}

/// The first index at which `buffer` differs from the message of `sender` in
/// `iteration`, or `None` when it is intact.
pub fn first_mismatch(buffer: &[u8], sender: usize, iteration: u64) -> Option<usize> {
    let s = seed(sender, buffer.len(), iteration);
    buffer
        .iter()
        .enumerate()
        .position(|(i, &b)| b != byte(s, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_intact_message_passes_and_a_flipped_byte_is_found() {
        let mut m = vec![0u8; 1000];
        fill(&mut m, 3, 17);
        assert_eq!(first_mismatch(&m, 3, 17), None);
        m[421] ^= 0x01;
        assert_eq!(first_mismatch(&m, 3, 17), Some(421));
    }

    #[test]
    fn the_wrong_sender_or_iteration_is_found() {
        let mut m = vec![0u8; 64];
        fill(&mut m, 3, 17);
        assert!(first_mismatch(&m, 4, 17).is_some());
        assert!(first_mismatch(&m, 3, 18).is_some());
    }

    #[test]
    fn empty_messages_are_always_intact() {
        assert_eq!(first_mismatch(&[], 1, 1), None);
    }
}
