//! Page-aligned, zeroed (and written) message buffers, without `unsafe`: a slightly larger vector is
//! allocated and the aligned part of it is used.

/// Alignment of every message buffer.
pub const PAGE: usize = 4096;

/// A zeroed byte buffer whose usable part starts on a page boundary.
pub struct AlignedBuffer {
    storage: Vec<u8>,
    offset: usize,
    len: usize,
}

impl AlignedBuffer {
    /// A zeroed buffer of `len` usable bytes.
    pub fn zeroed(len: usize) -> Self {
        // Written, not just allocated: `vec![0; n]` maps the kernel's shared zero page
        // until first written, and copies out of never-written pages are slower than out of
        // a real buffer's. `resize` on fresh capacity writes every byte.
        #[allow(
            clippy::slow_vector_initialization,
            reason = "the writes are the point: vec! would leave the pages unmapped"
        )]
        let mut storage = Vec::with_capacity(len + PAGE);
        storage.resize(len + PAGE, 0u8);
        let offset = storage.as_ptr().align_offset(PAGE);
        assert!(offset < PAGE, "a byte vector can always be page-aligned");
        AlignedBuffer {
            storage,
            offset,
            len,
        }
    }

    /// The usable bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.storage[self.offset..self.offset + self.len]
    }

    /// The usable bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.storage[self.offset..self.offset + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_zeroed_and_sized() {
        for len in [0, 1, 4095, 4096, 100_000] {
            let mut b = AlignedBuffer::zeroed(len);
            assert_eq!(b.as_slice().len(), len);
            assert_eq!(b.as_slice().as_ptr() as usize % PAGE, 0);
            assert!(b.as_slice().iter().all(|&x| x == 0));
            if len > 0 {
                b.as_mut_slice()[len - 1] = 7;
                assert_eq!(b.as_slice()[len - 1], 7);
            }
        }
    }
}
