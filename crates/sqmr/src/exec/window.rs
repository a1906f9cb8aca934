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
        let recv_reqs = self.recvs.as_mut_ptr();
        let send_reqs = self.sends.as_mut_ptr();
        let mut slot = 0usize;
        for _ in 0..self.win_size {
            for &peer in &self.peers {
                let recv_ptr = recv_base.wrapping_add(slot * recv_stride) as *mut c_void;
                // SAFETY: the receive buffer holds `size` bytes at `recv_ptr` and the send
                // buffer `size` bytes (both asserted above); both borrows outlive the
                // Waitall calls below, which complete every request before this function
                // returns. `slot < slots`, so both request pointers are in bounds. The
                // communicator's error handler is MPI_ERRORS_ARE_FATAL, so the return codes
                // carry no information and are not read (as in the reference).
                unsafe {
                    ffi::MPI_Irecv(
                        recv_ptr,
                        count,
                        self.datatype,
                        peer,
                        TAG,
                        self.comm,
                        recv_reqs.add(slot),
                    );
                    ffi::MPI_Isend(
                        send_ptr,
                        count,
                        self.datatype,
                        peer,
                        TAG,
                        self.comm,
                        send_reqs.add(slot),
                    );
                }
                slot += 1;
            }
        }
        // SAFETY: both arrays hold `slots` requests posted above (slots fits in an int,
        // checked in `new`); completed requests are set back to MPI_REQUEST_NULL by MPI.
        unsafe {
            ffi::MPI_Waitall(slots as c_int, send_reqs, self.statuses_ignore);
            ffi::MPI_Waitall(slots as c_int, recv_reqs, self.statuses_ignore);
        }
    }
}
