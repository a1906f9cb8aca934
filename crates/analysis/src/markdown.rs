//! Text from documents (host names, the MPI library's string, paths, reasons) as a field
//! of the Markdown that `xylem summary` writes: shown as the text it is, never as
//! Markdown or HTML of its own.
//!
//! A host name or a library string is whatever the machine or a document's author made
//! it; in `summary.md` it must not become a heading, a table cell, a link, emphasis or an
//! HTML tag, nor begin a line of its own. [`field`] escapes:
//!
//! - control characters (a newline, a terminal escape) and the characters that break or
//!   reorder lines, shown visibly as `outfile::shown` shows them on a terminal (`\n`,
//!   `\x1b`, `\u{2028}`), so that a field is always one piece of one line;
//! - `<`, `>` and `&` as the HTML entities `&lt;`, `&gt;`, `&amp;` (no tag, no entity of
//!   its own);
//! - every other character that makes Markdown within a line (`\`, `` ` ``, `*`, `_`,
//!   `[`, `]`, `#`, `|`, `~`, `$`) with a backslash, which CommonMark and GitHub render
//!   as the character itself. Those that act only at the start of a line (`-`, `+`, `=`,
//!   `>`, `1.`) cannot: a field never starts one, the summary puts words before each.

use std::borrow::Cow;

/// `text` (read from a document or the file system) as one Markdown field: rendered as
/// the same characters (control characters visibly escaped), never as markup.
pub fn field(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut one = [0u8; 4];
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c if is_markup(c) => {
                out.push('\\');
                out.push(c);
            }
            c => {
                let shown = outfile::shown::text(c.encode_utf8(&mut one));
                if shown.len() == c.len_utf8() {
                    out.push(c);
                } else {
                    // A visible escape such as `\n`: its backslash escaped in turn, so
                    // that it renders as written.
                    out.push_str(&shown.replace('\\', "\\\\"));
                }
            }
        }
    }
    Cow::Owned(out)
}

/// ASCII punctuation that makes Markdown within a line: code, emphasis, links and images
/// (`[` starts both), a heading's closing `#`s, table cells, strike-through, math.
fn is_markup(c: char) -> bool {
    matches!(
        c,
        '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '|' | '~' | '$'
    )
}

fn needs_escape(c: char) -> bool {
    matches!(c, '<' | '>' | '&') || is_markup(c) || c.is_control() || !c.is_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_kept_as_it_is() {
        assert!(matches!(field("node17.cluster"), Cow::Borrowed(_)));
        assert_eq!(
            field("Open MPI v4.1.4, package: Debian"),
            "Open MPI v4.1.4, package: Debian"
        );
        assert_eq!(field("zoë"), "zoë");
    }

    #[test]
    fn markup_html_and_new_lines_are_escaped() {
        let host = "n1\n# The run is VALID.<script>x</script>";
        assert_eq!(
            field(host),
            "n1\\\\n\\# The run is VALID.&lt;script&gt;x&lt;/script&gt;"
        );
        assert_eq!(field("**x** | y"), "\\*\\*x\\*\\* \\| y");
        assert_eq!(field("![a](http://e)"), "!\\[a\\](http://e)");
        assert_eq!(field("node-17_a (x)"), "node-17\\_a (x)");
        assert_eq!(field("a\\b"), "a\\\\b");
        assert_eq!(field("\x1b[2J\r\u{2028}"), "\\\\x1b\\[2J\\\\r\\\\u{2028}");
        for text in [host, "a\r\nb", "x\u{2029}y", "\u{85}"] {
            let shown = field(text);
            assert!(
                !shown
                    .chars()
                    .any(|c| c.is_control() || c == '\u{2028}' || c == '\u{2029}'),
                "{shown:?}"
            );
        }
    }
}
