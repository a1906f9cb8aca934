//! Chunk markers: the first and last 8 bytes of every chunk encode the access
//! method, pattern, rank and the chunk's sequence number; read checks them.

use crate::pagebuf::PageAligned;
use crate::schedule::Access;

/// Most errors recorded in detail per pattern (all are counted).
pub const ERROR_DETAIL_LIMIT: usize = 10;

/// The marker value of one chunk. Bits: 63–62 access (write 1, rewrite 2), 61–56 pattern,
/// 55–32 rank, 31–0 chunk sequence number. Never zero, so holes are detected.
pub fn marker(access: Access, pattern: usize, rank: usize, seq: u64) -> u64 {
    let a: u64 = match access {
        Access::Write => 1,
        Access::Rewrite | Access::Read => 2,
    };
    (a << 62)
        | ((pattern as u64 & 0x3f) << 56)
        | ((rank as u64 & 0xff_ffff) << 32)
        | (seq & 0xffff_ffff)
}

/// The tail marker: the bitwise complement of the head, so a shifted chunk is caught.
pub fn tail_marker(head: u64) -> u64 {
    !head
}

/// Identity of the chunks in one call's buffer.
#[derive(Debug, Clone, Copy)]
pub struct ChunkId {
    /// The access method that wrote the data (read expects rewrite's markers).
    pub access: Access,
    /// Pattern number.
    pub pattern: usize,
    /// Rank that wrote the chunks.
    pub rank: usize,
    /// Sequence number of the buffer's first chunk within the pattern.
    pub first_seq: u64,
}

/// Writes head and tail markers into every `chunk_words`-long chunk of `buf`. A chunk of
/// one word (a filler of 8 bytes) carries the head only; one of none (a filler of 0
/// bytes) nothing. Not inlined: a function of its own, the data validation's cost per
/// call is measured apart from the rest (scripts/bench-beffio-instructions.sh).
#[inline(never)]
pub fn stamp(buf: &mut [u64], chunk_words: usize, id: ChunkId) {
    if chunk_words == 0 {
        return;
    }
    for (j, chunk) in buf.chunks_exact_mut(chunk_words).enumerate() {
        let head = marker(id.access, id.pattern, id.rank, id.first_seq + j as u64);
        chunk[0] = head;
        if chunk_words > 1 {
            chunk[chunk_words - 1] = tail_marker(head);
        }
    }
}

/// A write buffer of `words` words filled with a fixed pseudo-random sequence
/// (xorshift64*). Every page is written before any timing starts: a buffer that was only
/// allocated maps the kernel's shared zero page, and copying from it into the page cache
/// ran at a fifth of the speed of a written buffer here (276 against 1823 MB/s for 8 MiB
/// `pwrite`s). And the data are not zeros, which some storage compresses or never writes.
/// It begins on a page boundary ([`crate::pagebuf`]).
pub fn write_buffer(words: usize) -> PageAligned<u64> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    PageAligned::new((0..words).map(|_| {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }))
}

/// A read buffer of `words` words with every page written (see [`write_buffer`]), on a
/// page boundary.
pub fn read_buffer(words: usize) -> PageAligned<u64> {
    PageAligned::filled(words, u64::MAX)
}

/// One chunk whose markers were wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataError {
    /// The chunk's sequence number within the pattern.
    pub seq: u64,
    /// Expected head marker.
    pub expected: u64,
    /// Head marker found.
    pub head: u64,
    /// Tail marker found.
    pub tail: u64,
}

impl std::fmt::Display for DataError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "chunk {}: expected marker {:#018x}, found head {:#018x} tail {:#018x}",
            self.seq, self.expected, self.head, self.tail
        )
    }
}

/// Checks every chunk of `buf`; returns the number of bad chunks and adds details to
/// `details`, up to `limit` of them (2.1's `-e`; [`ERROR_DETAIL_LIMIT`] by default).
pub fn check_with_limit(
    buf: &[u64],
    chunk_words: usize,
    id: ChunkId,
    details: &mut Vec<DataError>,
    limit: usize,
) -> u64 {
    if chunk_words == 0 {
        return 0;
    }
    let mut bad = 0;
    for (j, chunk) in buf.chunks_exact(chunk_words).enumerate() {
        let seq = id.first_seq + j as u64;
        let expected = marker(id.access, id.pattern, id.rank, seq);
        let (head, tail) = (chunk[0], chunk[chunk_words - 1]);
        if head != expected || (chunk_words > 1 && tail != tail_marker(expected)) {
            bad += 1;
            if details.len() < limit {
                details.push(DataError {
                    seq,
                    expected,
                    head,
                    tail,
                });
            }
        }
    }
    bad
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(buf: &[u64], chunk_words: usize, id: ChunkId, details: &mut Vec<DataError>) -> u64 {
        check_with_limit(buf, chunk_words, id, details, ERROR_DETAIL_LIMIT)
    }

    fn id(access: Access, seq: u64) -> ChunkId {
        ChunkId {
            access,
            pattern: 7,
            rank: 3,
            first_seq: seq,
        }
    }

    #[test]
    fn markers_are_distinct_and_never_zero() {
        let a = marker(Access::Write, 7, 3, 10);
        assert_ne!(a, 0);
        assert_ne!(a, marker(Access::Rewrite, 7, 3, 10));
        assert_ne!(a, marker(Access::Write, 8, 3, 10));
        assert_ne!(a, marker(Access::Write, 7, 4, 10));
        assert_ne!(a, marker(Access::Write, 7, 3, 11));
        // Read checks what the rewrite left behind.
        assert_eq!(
            marker(Access::Read, 7, 3, 10),
            marker(Access::Rewrite, 7, 3, 10)
        );
    }

    #[test]
    fn stamped_buffer_checks_clean() {
        let mut buf = vec![0u64; 4 * 129];
        stamp(&mut buf, 129, id(Access::Rewrite, 40));
        let mut details = Vec::new();
        assert_eq!(check(&buf, 129, id(Access::Read, 40), &mut details), 0);
        assert!(details.is_empty());
    }

    #[test]
    fn buffers_hold_data_on_every_page() {
        let w = write_buffer(1 << 16);
        assert_eq!(w.len(), 1 << 16);
        // Every page (512 words) holds non-zero data, and no two words repeat nearby.
        assert!(w.chunks(512).all(|page| page.iter().all(|&x| x != 0)));
        assert!(w.windows(2).all(|p| p[0] != p[1]));
        assert_eq!(write_buffer(4)[..], write_buffer(4)[..]);
        let r = read_buffer(1000);
        assert!(r.len() == 1000 && r.iter().all(|&x| x == u64::MAX));
    }

    #[test]
    fn corruption_and_stale_data_are_counted() {
        let mut buf = vec![0u64; 4 * 129];
        stamp(&mut buf, 129, id(Access::Write, 0));
        let mut details = Vec::new();
        // The rewrite never happened: every chunk is stale.
        assert_eq!(check(&buf, 129, id(Access::Read, 0), &mut details), 4);
        stamp(&mut buf, 129, id(Access::Rewrite, 0));
        buf[2 * 129 - 1] ^= 1; // tail of chunk 1
        details.clear();
        assert_eq!(check(&buf, 129, id(Access::Read, 0), &mut details), 1);
        assert_eq!(details[0].seq, 1);
        assert!(details[0].to_string().contains("chunk 1"));
    }

    #[test]
    fn details_are_limited_but_errors_all_counted() {
        let buf = vec![0u64; 50 * 2];
        let mut details = Vec::new();
        assert_eq!(check(&buf, 2, id(Access::Read, 0), &mut details), 50);
        assert_eq!(details.len(), ERROR_DETAIL_LIMIT);
        // -e 3, -e 0.
        details.clear();
        assert_eq!(
            check_with_limit(&buf, 2, id(Access::Read, 0), &mut details, 3),
            50
        );
        assert_eq!(details.len(), 3);
        details.clear();
        assert_eq!(
            check_with_limit(&buf, 2, id(Access::Read, 0), &mut details, 0),
            50
        );
        assert!(details.is_empty());
    }

    #[test]
    fn fillers_of_one_word_or_none_check_clean() {
        let mut details = Vec::new();
        let mut one = vec![0u64; 1];
        stamp(&mut one, 1, id(Access::Rewrite, 0));
        assert_eq!(one[0], marker(Access::Rewrite, 7, 3, 0));
        assert_eq!(check(&one, 1, id(Access::Read, 0), &mut details), 0);
        one[0] ^= 1;
        assert_eq!(check(&one, 1, id(Access::Read, 0), &mut details), 1);
        let mut none: Vec<u64> = Vec::new();
        stamp(&mut none, 0, id(Access::Rewrite, 0));
        assert_eq!(check(&none, 0, id(Access::Read, 0), &mut details), 0);
    }
}
