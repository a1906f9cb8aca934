//! The window of non-blocking requests: the only raw MPI calls of `sqmr`.
//!
//! One iteration posts, for each window slot and each peer, a receive then a send
//! (tag 1) of `MPI_BYTE`s, into two contiguous request arrays, then completes all sends
//! and all receives with one `MPI_Waitall` each — the reference's sequence and datatype,
//! with nothing added.
//! The arrays are allocated once; an iteration allocates nothing.

use std::os::raw::{c_int, c_void};

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;

/// The message tag of every message, as in the reference.
pub const TAG: c_int = 1;

/// Request arrays and the fixed arguments of every call.
pub struct Window {
    comm: ffi::MPI_Comm,
    datatype: ffi::MPI_Datatype,
    statuses_ignore: *mut ffi::MPI_Status,
    peers: Vec<c_int>,
    win_size: usize,
    sends: Vec<ffi::MPI_Request>,
    recvs: Vec<ffi::MPI_Request>,
}

impl Window {
    /// A window of `win_size` slots per peer over `comm`. `peers` must be ranks of `comm`,
    /// and `win_size · peers.len()` must fit in an `int` (checked by the configuration).
    pub fn new(comm: &SimpleCommunicator, peers: &[usize], win_size: usize) -> Self {
        let slots = win_size * peers.len();
        assert!(c_int::try_from(slots).is_ok(), "window of {slots} requests");
        // SAFETY: reading an initialised constant exported by the MPI shim library.
        let (null, statuses_ignore) =
            unsafe { (ffi::RSMPI_REQUEST_NULL, ffi::RSMPI_STATUSES_IGNORE) };
        Window {
            comm: comm.as_raw(),
            datatype: benchkit::constants::byte(),
            statuses_ignore,
            peers: peers
                .iter()
                .map(|&p| c_int::try_from(p).expect("a rank fits in an int"))
                .collect(),
            win_size,
            sends: vec![null; slots],
            recvs: vec![null; slots],
        }
    }

    /// Pending receives (and sends) per iteration.
    pub fn slots(&self) -> usize {
        self.sends.len()
    }

    /// One iteration with messages of `size` bytes. Receive slot `j` lands at
    /// `recv[j · recv_stride..]`: a stride of 0 shares one receive buffer between all
    /// slots, as the reference does. Slot `j` talks to peer `j % peers`.
    #[inline]
    pub fn iterate(&mut self, send: &[u8], recv: &mut [u8], size: usize, recv_stride: usize) {
        let slots = self.slots();
        assert!(send.len() >= size, "send buffer smaller than a message");
        assert!(
            slots == 0 || recv.len() >= (slots - 1) * recv_stride + size,
            "receive buffer smaller than the window"
        );
        let count = size as c_int;
        let send_ptr = send.as_ptr() as *const c_void;
        let recv_base = recv.as_mut_ptr();
        match self.peers[..] {
            // One peer and one receive buffer (the benchmark's own loop with one
            // neighbour, and every neighbour rank): nothing varies but the requests.
            [peer] if recv_stride == 0 => self.post_to_one(send_ptr, recv_base.cast(), count, peer),
            _ => self.post_to_all(send_ptr, recv_base, count, recv_stride),
        }
        self.complete(slots as c_int);
    }

    /// `count` iterations with messages of `size` bytes, every receive into the one buffer
    /// `recv` (as the reference), `each` called after each: [`Window::iterate`] with a
    /// stride of 0, its checks and its choice of loop made once, not per iteration.
    #[inline]
    pub fn repeat(
        &mut self,
        send: &[u8],
        recv: &mut [u8],
        size: usize,
        count: u64,
        mut each: impl FnMut(),
    ) {
        assert!(send.len() >= size, "send buffer smaller than a message");
        assert!(recv.len() >= size, "receive buffer smaller than a message");
        let slots = self.slots() as c_int;
        let bytes = size as c_int;
        let send_ptr = send.as_ptr() as *const c_void;
        let recv_ptr = recv.as_mut_ptr();
        let one = match self.peers[..] {
            [peer] => Some(peer),
            _ => None,
        };
        for _ in 0..count {
            match one {
                Some(peer) => self.post_to_one(send_ptr, recv_ptr.cast(), bytes, peer),
                None => self.post_to_all(send_ptr, recv_ptr, bytes, 0),
            }
            self.complete(slots);
            each();
        }
    }

    /// Completes every send, then every receive, of the window just posted (`slots` of
    /// each, [`Window::slots`]).
    #[inline(always)]
    fn complete(&mut self, slots: c_int) {
        // SAFETY: both arrays hold `slots` requests, posted before this call (slots fits in
        // an int, checked in `new`); completed requests are set back to MPI_REQUEST_NULL
        // by MPI.
        unsafe {
            ffi::MPI_Waitall(slots, self.sends.as_mut_ptr(), self.statuses_ignore);
            ffi::MPI_Waitall(slots, self.recvs.as_mut_ptr(), self.statuses_ignore);
        }
    }

    /// Posts the window's receives and sends to `peer` alone, every receive into `recv`.
    /// The caller checked that both buffers hold `count` bytes.
    #[inline(always)]
    fn post_to_one(&mut self, send: *const c_void, recv: *mut c_void, count: c_int, peer: c_int) {
        let (datatype, comm) = (self.datatype, self.comm);
        let mut r = self.recvs.as_mut_ptr();
        let mut s = self.sends.as_mut_ptr();
        // SAFETY: `r` and `s` walk the two request arrays, `slots` elements each, and stop
        // at the end of the receives' array (`end`, one past its last element, never
        // dereferenced). The buffers hold `count` bytes (asserted by `iterate`) and outlive
        // the Waitall calls that complete every request before `iterate` returns. The
        // communicator's error handler is MPI_ERRORS_ARE_FATAL, so the return codes carry
        // no information and are not read (as in the reference).
        unsafe {
            let end = r.add(self.recvs.len());
            while r != end {
                ffi::MPI_Irecv(recv, count, datatype, peer, TAG, comm, r);
                ffi::MPI_Isend(send, count, datatype, peer, TAG, comm, s);
                r = r.add(1);
                s = s.add(1);
            }
        }
    }

    /// Posts the window's receives and sends, slot `j` to peer `j % peers`, receive `j`
    /// at `recv + j · stride`. The caller checked that the buffers are large enough.
    fn post_to_all(&mut self, send: *const c_void, recv: *mut u8, count: c_int, stride: usize) {
        let (datatype, comm) = (self.datatype, self.comm);
        let recv_reqs = self.recvs.as_mut_ptr();
        let send_reqs = self.sends.as_mut_ptr();
        let mut slot = 0usize;
        for _ in 0..self.win_size {
            for &peer in &self.peers {
                let recv_ptr = recv.wrapping_add(slot * stride) as *mut c_void;
                // SAFETY: the receive buffer holds `count` bytes at `recv_ptr` and the send
                // buffer `count` bytes (asserted by `iterate`); both outlive the Waitall
                // calls that complete every request before `iterate` returns. `slot <
                // slots`, so both request pointers are in bounds. Return codes: as in
                // `post_to_one`.
                unsafe {
                    ffi::MPI_Irecv(
                        recv_ptr,
                        count,
                        datatype,
                        peer,
                        TAG,
                        comm,
                        recv_reqs.add(slot),
                    );
                    ffi::MPI_Isend(send, count, datatype, peer, TAG, comm, send_reqs.add(slot));
                }
                slot += 1;
            }
        }
    }
}
