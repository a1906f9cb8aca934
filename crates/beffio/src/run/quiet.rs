//! The MPI library's own lines on standard error, held back while a pattern's transfers run.
//!
//! Open MPI 4.1's OMPIO prints one line for every failed `pwritev`
//! (`mca_fbtl_posix_pwritev: error in writev:No space left on device`) — tens of thousands
//! on a full disk — and may still report the collective write as a success. It prints them
//! on its show-help stream (`opal_output(1, …)`), which no MCA variable switches off, and
//! `OPAL_OUTPUT_STDERR_FD` would silence every other message of the library as well.
//!
//! So while a [`Capture`] lives, file descriptor 2 of this process writes into an anonymous
//! memory file (`memfd_create`); when it ends, descriptor 2 is restored and what was caught
//! is passed on: a single line as it was, more as one line that counts them and quotes
//! the first ([`summary`]), so that each rank prints at most one line per pattern. Only the main thread prints in b_eff_io, and
//! never while a capture runs (progress is printed between patterns).
//!
//! The limit: a process that dies while capturing (a crash inside the library) takes what
//! was caught with it; the launcher still reports the signal.

use std::io::{Read, Seek, SeekFrom};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

/// Up to this many caught lines are passed on unchanged.
pub const VERBATIM_LINES: usize = 1;
/// Longest quotation of the first line in a summary, in characters.
const QUOTE_CHARS: usize = 200;

/// Standard error of this process, held back until [`Capture::finish`] or drop.
#[derive(Debug)]
pub struct Capture {
    saved: Option<OwnedFd>,
    sink: std::fs::File,
    label: String,
}

impl Capture {
    /// Starts holding back standard error; `label` names the rank and the step in the
    /// summary (`rank 1, write pattern 3`). `None` when it cannot (nothing is held back then).
    pub fn start(label: impl Into<String>) -> Option<Capture> {
        let sink = nix::sys::memfd::memfd_create(
            c"b_eff_io-stderr",
            nix::sys::memfd::MemFdCreateFlag::MFD_CLOEXEC,
        )
        .ok()?;
        let saved = std::io::stderr().as_fd().try_clone_to_owned().ok()?;
        nix::unistd::dup2(sink.as_raw_fd(), 2).ok()?;
        Some(Capture {
            saved: Some(saved),
            sink: std::fs::File::from(sink),
            label: label.into(),
        })
    }

    /// Restores standard error and passes on what was caught (see [`summary`]).
    pub fn finish(mut self) {
        self.restore();
    }

    fn restore(&mut self) {
        let Some(saved) = self.saved.take() else {
            return;
        };
        if nix::unistd::dup2(saved.as_raw_fd(), 2).is_err() {
            return;
        }
        let mut caught = Vec::new();
        let read = self
            .sink
            .seek(SeekFrom::Start(0))
            .and_then(|_| self.sink.read_to_end(&mut caught));
        if read.is_ok() {
            if let Some(text) = summary(&caught, &self.label) {
                outfile::eprint!("{text}");
            }
        }
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.restore();
    }
}

/// What to print for the bytes `caught` on standard error during the step `label`:
/// nothing for nothing, up to [`VERBATIM_LINES`] lines unchanged (with a final newline),
/// else one line `b_eff_io: LABEL: the MPI library printed N lines on standard error
/// (muted), the first: "…"`.
pub fn summary(caught: &[u8], label: &str) -> Option<String> {
    if caught.is_empty() {
        return None;
    }
    let text = String::from_utf8_lossy(caught);
    let lines = text.lines().count();
    if lines <= VERBATIM_LINES {
        let mut out = text.into_owned();
        if !out.ends_with('\n') {
            out.push('\n');
        }
        return Some(out);
    }
    let first = text.lines().next().unwrap_or_default();
    let mut quote: String = first.chars().take(QUOTE_CHARS).collect();
    if quote.len() < first.len() {
        quote.push('…');
    }
    Some(format!(
        "b_eff_io: {label}: the MPI library printed {lines} lines on standard error \
         (muted), the first: \"{quote}\"\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_lines_pass_unchanged_many_are_counted() {
        assert_eq!(summary(b"", "rank 0"), None);
        assert_eq!(summary(b"one", "rank 0").unwrap(), "one\n");
        assert!(summary(b"one\ntwo", "rank 0")
            .unwrap()
            .contains("printed 2 lines"));
        let flood =
            "mca_fbtl_posix_pwritev: error in writev:No space left on device\n".repeat(5000);
        let s = summary(flood.as_bytes(), "rank 1, write pattern 3").unwrap();
        assert_eq!(
            s,
            "b_eff_io: rank 1, write pattern 3: the MPI library printed 5000 lines on \
             standard error (muted), the first: \"mca_fbtl_posix_pwritev: error in \
             writev:No space left on device\"\n"
        );
        let long = format!("{}\na\nb\nc\n", "x".repeat(500));
        let s = summary(long.as_bytes(), "r").unwrap();
        assert!(s.contains(&format!("\"{}…\"", "x".repeat(200))), "{s}");
    }

    #[test]
    fn a_capture_holds_back_descriptor_2_and_restores_it() {
        // Writes through descriptor 2 go into the capture; afterwards it is the old one.
        let before = nix::sys::stat::fstat(2).unwrap();
        let capture = Capture::start("test").unwrap();
        let during = nix::sys::stat::fstat(2).unwrap();
        assert_ne!(
            (before.st_dev, before.st_ino),
            (during.st_dev, during.st_ino)
        );
        nix::unistd::write(std::io::stderr(), b"held back\n").unwrap();
        assert!(capture.sink.metadata().unwrap().len() == 10);
        capture.finish();
        let after = nix::sys::stat::fstat(2).unwrap();
        assert_eq!((before.st_dev, before.st_ino), (after.st_dev, after.st_ino));
    }
}
