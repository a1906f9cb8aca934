//! A note for a job that ends inside `MPI_Init` (`c/init_note.c`): a library that cannot
//! connect the hosts of a job — a network selection that cuts them apart — stops it there,
//! before [`crate::network::agree_selection`] can compare the hosts. Armed before
//! `MPI_Init` with this host's selection, said on standard error if the process leaves
//! before `MPI_Init` returned, disarmed once it has.

use std::ffi::CString;

extern "C" {
    fn xylem_arm_init_note(text: *const std::os::raw::c_char) -> std::os::raw::c_int;
    fn xylem_disarm_init_note();
}

/// Keeps `text` to say at exit until [`disarm`]; `false` when it cannot be registered.
pub fn arm(text: &str) -> bool {
    let Ok(c) = CString::new(text.replace('\0', " ")) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call; the C
    // side copies it into a static buffer (bounded) and registers its exit handler once.
    unsafe { xylem_arm_init_note(c.as_ptr()) == 0 }
}

/// `MPI_Init` returned: the note is not said.
pub fn disarm() {
    // SAFETY: only clears a flag of the C side; no memory of ours is touched.
    unsafe { xylem_disarm_init_note() }
}
