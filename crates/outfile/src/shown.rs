//! Paths and texts as a terminal should show them: names are chosen by whoever made the
//! file, and a name may hold a newline (to forge a line of output), terminal escape
//! sequences (sent to the terminal of whoever reads the output, often root's) or bytes
//! that are not UTF-8. Everything that could act on a terminal or break a line is shown
//! as a visible escape instead:
//!
//! - `\n`, `\r`, `\t` as such; other ASCII control characters and DEL as `\xNN`
//!   (`\x1b` for ESC);
//! - the C1 control characters (U+0080–U+009F, which some terminals obey like ESC
//!   sequences), the line and paragraph separators (U+2028, U+2029) and the
//!   bidirectional formatting characters (which reorder what is shown around them) as
//!   `\u{NNNN}`;
//! - a byte that is not part of valid UTF-8 as `\xNN`;
//! - the backslash itself as `\\`, so that a shown name is never ambiguous.
//!
//! Every other character, non-ASCII letters included, is shown as it is.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// `path` for a message or a line of output, control characters and invalid UTF-8
/// escaped visibly.
pub fn path(path: &Path) -> String {
    bytes(path.as_os_str().as_bytes())
}

/// `text` (a field read from a file: a host name, a marker's value) for a message or a
/// line of output, control characters escaped visibly.
pub fn text(text: &str) -> String {
    bytes(text.as_bytes())
}

/// Bytes (mostly UTF-8) for a message, control characters and invalid UTF-8 escaped.
pub fn bytes(raw: &[u8]) -> String {
    let mut out = String::with_capacity(raw.len());
    for chunk in raw.utf8_chunks() {
        for c in chunk.valid().chars() {
            push_char(&mut out, c);
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

fn push_char(out: &mut String, c: char) {
    match c {
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c.is_ascii_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
        c if c.is_control() || is_format_trap(c) => {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32))
        }
        c => out.push(c),
    }
}

/// Line and paragraph separators, and the characters that reorder text around them
/// (bidirectional marks, embeddings, overrides and isolates).
fn is_format_trap(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn plain_names_are_shown_as_they_are() {
        assert_eq!(
            path(Path::new("/scratch/b_eff_io.1.2")),
            "/scratch/b_eff_io.1.2"
        );
        assert_eq!(path(Path::new("/home/zoë/données")), "/home/zoë/données");
    }

    #[test]
    fn a_name_cannot_forge_a_line_nor_reach_the_terminal() {
        let forged = Path::new(
            "/s/b_eff_io.1\nb_eff_io: --clean: removed '/home/bob/thesis'\x1b]0;x\x07\x1b[2K",
        );
        let shown = path(forged);
        assert!(!shown.chars().any(|c| c.is_control()), "{shown}");
        assert_eq!(
            shown,
            "/s/b_eff_io.1\\nb_eff_io: --clean: removed '/home/bob/thesis'\\x1b]0;x\\x07\\x1b[2K"
        );
        assert_eq!(text("a\rb\tc\u{7f}"), "a\\rb\\tc\\x7f");
        // C1 controls (CSI is U+009B), separators and a right-to-left override.
        assert_eq!(
            text("x\u{9b}2Jy\u{2028}z\u{202e}gpj.exe"),
            "x\\u{009b}2Jy\\u{2028}z\\u{202e}gpj.exe"
        );
    }

    #[test]
    fn invalid_utf8_and_backslashes_are_unambiguous() {
        let raw = OsStr::from_bytes(b"/s/a\xffb\xc3");
        assert_eq!(path(Path::new(raw)), "/s/a\\xffb\\xc3");
        // A name that spells an escape is told from one that needed it.
        assert_eq!(path(Path::new("a\\nb")), "a\\\\nb");
        assert_ne!(path(Path::new("a\\nb")), path(Path::new("a\nb")));
    }
}
