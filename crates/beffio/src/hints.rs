//! MPI-IO hints: `--hint KEY=VALUE` for every file the benchmark opens, and 2.1's hints
//! file (`-i FILE`) for hints per partition, access method, pattern type and chunk size.
//!
//! The hints file has one hint per line, in 2.1's grammar:
//!
//! ```text
//! <proc_num> <access> <pat_type> <chunk_size> <key> <value>
//! ```
//!
//! - `proc_num`: `all` or a partition size (a number of processes);
//! - `access`: `all`, `write`, `rewrite` or `read`;
//! - `pat_type`: `all`, `scatter` (type 0), `shared` (1), `separated` (2), `segmented` (3)
//!   or `seg_coll` (4);
//! - `chunk_size`: `all` or `on_open` (given to `MPI_File_open`), `Lmax` (the MPART
//!   patterns), or one of the chunk sizes `1024`, `1032`, `32768`, `32776`, `1048576`,
//!   `1048584` (given with `MPI_File_set_info` before each pattern of that chunk size `l`);
//! - `key`, `value`: the hint.
//!
//! Blank lines and comments (from a field that starts with `#` to the end of the line) are
//! skipped. A bad line is refused naming the file, the line and the field.
//!
//! At each open the file gets the `--hint` pairs first, then the hints file's matching
//! `all`/`on_open` lines in file order; a later value of a key replaces an earlier one, as
//! `MPI_Info_set` does.

use crate::patterns::{Pattern, PatternType, Role};
use crate::schedule::Access;
use std::fmt;

/// One hint: key and value.
pub type Hint = (String, String);

/// The most bytes a hints file (`-i`) may hold: 1 MiB. A 2.1 hints file is a few lines
/// (one line per partition, access method, type, chunk size and key: some ten thousand
/// lines at most fit in it), so a larger file is the wrong file, refused before it is read.
pub const MAX_HINTS_FILE_BYTES: u64 = 1 << 20;

/// The chunk sizes a hints file may name (2.1's list).
pub const CHUNK_SIZES: [u64; 6] = [1024, 1032, 32768, 32776, 1_048_576, 1_048_584];

/// `proc_num`: which partitions a line is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Procs {
    /// `all`.
    All,
    /// The partition of this many processes.
    Size(usize),
}

/// `access`: which access methods a line is for (`None`: all).
pub type AccessSel = Option<Access>;
/// `pat_type`: which pattern types a line is for (`None`: all).
pub type TypeSel = Option<PatternType>;

/// `chunk_size`: when a line's hint is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chunk {
    /// `all`: at open, so for every pattern of the file.
    All,
    /// `on_open`: at open.
    OnOpen,
    /// `Lmax`: before each pattern whose chunk is MPART.
    Lmax,
    /// Before each pattern whose chunk `l` is this many bytes.
    Bytes(u64),
}

/// One line of a hints file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HintLine {
    /// Line number, from 1.
    pub line: usize,
    /// `proc_num`.
    pub procs: Procs,
    /// `access`.
    pub access: AccessSel,
    /// `pat_type`.
    pub ptype: TypeSel,
    /// `chunk_size`.
    pub chunk: Chunk,
    /// The hint's key.
    pub key: String,
    /// The hint's value.
    pub value: String,
}

/// A parsed hints file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HintsFile {
    /// The path as it was given (`-i`), for messages and reports.
    pub path: String,
    /// Its hint lines, in file order.
    pub lines: Vec<HintLine>,
}

/// The 2.1 name of a pattern type in a hints file.
pub fn type_word(t: PatternType) -> &'static str {
    match t {
        PatternType::Scatter => "scatter",
        PatternType::Shared => "shared",
        PatternType::Separate => "separated",
        PatternType::Segmented => "segmented",
        PatternType::SegmentedCollective => "seg_coll",
    }
}

impl fmt::Display for HintLine {
    /// The line as a hints file would hold it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let procs = match self.procs {
            Procs::All => "all".to_string(),
            Procs::Size(n) => n.to_string(),
        };
        let access = self.access.map_or("all", Access::name);
        let ptype = self.ptype.map_or("all", type_word);
        let chunk = match self.chunk {
            Chunk::All => "all".to_string(),
            Chunk::OnOpen => "on_open".to_string(),
            Chunk::Lmax => "Lmax".to_string(),
            Chunk::Bytes(b) => b.to_string(),
        };
        write!(
            f,
            "{procs} {access} {ptype} {chunk} {} {}",
            self.key, self.value
        )
    }
}

const FIELDS: [&str; 6] = [
    "proc_num",
    "access",
    "pat_type",
    "chunk_size",
    "key",
    "value",
];

/// What is wrong with a hints file (`-i`): each names the file, and the line (and field)
/// where that applies.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HintsFileError {
    /// It cannot be read.
    #[error("cannot read the hints file (-i) '{path}': {cause}")]
    Unreadable {
        /// The file, as given.
        path: String,
        /// Why, in words.
        cause: String,
    },
    /// It is not UTF-8 text from this line on.
    #[error("hints file '{path}', line {line}: not UTF-8 text")]
    NotText {
        /// The file, as given.
        path: String,
        /// The first line that is not.
        line: usize,
    },
    /// A field of a line is wrong (missing, not a value it may have, or one too many).
    #[error(
        "hints file '{path}', line {line}, field {}{}: {what}",
        .field + 1,
        FIELDS.get(*.field).map_or(String::new(), |name| format!(" ({name})"))
    )]
    Field {
        /// The file, as given.
        path: String,
        /// The line, from 1.
        line: usize,
        /// The field, from 0; [`FIELDS`]`.len()` for one after the value.
        field: usize,
        /// What is wrong with it, and what would do.
        what: String,
    },
}

/// Parses the text of a hints file; `path` names it in messages. A bad line is an error
/// naming the file, the line and the field: `hints file 'h', line 3, field 2 (access):
/// 'wirte' is not one of all, write, rewrite, read`.
pub fn parse_hints_file(path: &str, text: &str) -> Result<HintsFile, HintsFileError> {
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let number = i + 1;
        let fields: Vec<&str> = raw
            .split_whitespace()
            .take_while(|f| !f.starts_with('#'))
            .collect();
        if fields.is_empty() {
            continue;
        }
        let at = |field: usize, what: String| HintsFileError::Field {
            path: path.to_string(),
            line: number,
            field,
            what,
        };
        // Printable text only: a field is shown in messages, the header and the files.
        if let Some((k, c)) = fields
            .iter()
            .enumerate()
            .find_map(|(k, f)| f.chars().find(|c| c.is_control()).map(|c| (k, c)))
        {
            return Err(at(k, control_text(c)));
        }
        if fields.len() < FIELDS.len() {
            let missing = fields.len();
            return Err(at(
                missing,
                format!(
                    "missing; a line is <proc_num> <access> <pat_type> <chunk_size> <key> \
                     <value>, this one has {} field{}",
                    fields.len(),
                    if fields.len() == 1 { "" } else { "s" }
                ),
            ));
        }
        if fields.len() > FIELDS.len() {
            return Err(at(
                FIELDS.len(),
                format!(
                    "'{}' after the value (a line has 6 fields; a comment starts with #)",
                    fields[6]
                ),
            ));
        }
        let word = |k: usize| fields[k].to_ascii_lowercase();
        let procs = match word(0).as_str() {
            "all" => Procs::All,
            w => match w.parse::<usize>() {
                Ok(0) => return Err(at(0, "a partition has at least 1 process".into())),
                Ok(n) => Procs::Size(n),
                Err(_) => {
                    return Err(at(
                        0,
                        format!("'{}' is neither all nor a number of processes", fields[0]),
                    ))
                }
            },
        };
        let access = match word(1).as_str() {
            "all" => None,
            "write" => Some(Access::Write),
            "rewrite" => Some(Access::Rewrite),
            "read" => Some(Access::Read),
            _ => {
                return Err(at(
                    1,
                    format!("'{}' is not one of all, write, rewrite, read", fields[1]),
                ))
            }
        };
        let ptype = match word(2).as_str() {
            "all" => None,
            w => match PatternType::ALL.iter().find(|&&t| type_word(t) == w) {
                Some(&t) => Some(t),
                None => {
                    return Err(at(
                        2,
                        format!(
                            "'{}' is not one of all, scatter, shared, separated, segmented, \
                             seg_coll",
                            fields[2]
                        ),
                    ))
                }
            },
        };
        let chunk = match word(3).as_str() {
            "all" => Chunk::All,
            "on_open" => Chunk::OnOpen,
            "lmax" => Chunk::Lmax,
            w => match w.parse::<u64>() {
                Ok(b) if CHUNK_SIZES.contains(&b) => Chunk::Bytes(b),
                _ => {
                    return Err(at(
                        3,
                        format!(
                            "'{}' is not one of all, on_open, Lmax, 1024, 1032, 32768, 32776, \
                             1048576, 1048584",
                            fields[3]
                        ),
                    ))
                }
            },
        };
        let (key, value) = (fields[4], fields[5]);
        // The key alone first (with a stand-in value), so the message names the right field.
        if let Err(e) = check(key, "x") {
            return Err(at(4, e));
        }
        if let Err(e) = check(key, value) {
            return Err(at(5, e));
        }
        lines.push(HintLine {
            line: number,
            procs,
            access,
            ptype,
            chunk,
            key: key.to_string(),
            value: value.to_string(),
        });
    }
    Ok(HintsFile {
        path: path.to_string(),
        lines,
    })
}

/// The hints of a run: `--hint`s and the hints file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hints {
    /// `--hint KEY=VALUE`, for every open, in command-line order.
    pub global: Vec<Hint>,
    /// `-i FILE`.
    pub file: Option<HintsFile>,
}

/// What is wrong with a field holding the control character `c`.
fn control_text(c: char) -> String {
    format!(
        "holds the control character {}; hints are printable text",
        outfile::shown::text(&c.to_string())
    )
}

/// Whether `key` and `value` can be given to MPI: neither empty, no NUL byte, no other
/// control character (a key or value is shown on the terminal and in the files), and (with
/// the `mpi` feature) within this MPI library's `MPI_MAX_INFO_KEY` and `MPI_MAX_INFO_VAL`.
/// The `Err` says what is wrong.
pub fn check(key: &str, value: &str) -> Result<(), String> {
    if key.is_empty() {
        return Err("the hint's key is empty".into());
    }
    if value.is_empty() {
        return Err(format!("hint '{key}': the value is empty"));
    }
    if key.contains('\0') || value.contains('\0') {
        return Err(format!(
            "hint '{}': contains a NUL byte",
            outfile::shown::text(key)
        ));
    }
    if let Some(c) = key.chars().chain(value.chars()).find(|c| c.is_control()) {
        return Err(format!(
            "hint '{}': {}",
            outfile::shown::text(key),
            control_text(c)
        ));
    }
    #[cfg(feature = "mpi")]
    mpiio::check_hint(key, value)?;
    Ok(())
}

/// `hints` with one entry per key: the last value of a key, at the place of its first
/// appearance (what `MPI_Info_set` makes of them, one after the other).
pub fn merged(hints: impl IntoIterator<Item = Hint>) -> Vec<Hint> {
    let mut out: Vec<Hint> = Vec::new();
    for (key, value) in hints {
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => out.push((key, value)),
        }
    }
    out
}

impl Hints {
    /// Whether no hint at all was given.
    pub fn is_empty(&self) -> bool {
        self.global.is_empty() && self.file.as_ref().is_none_or(|f| f.lines.is_empty())
    }

    fn lines_for(
        &self,
        procs: usize,
        access: Access,
        ptype: PatternType,
    ) -> impl Iterator<Item = &HintLine> {
        self.file
            .iter()
            .flat_map(|f| f.lines.iter())
            .filter(move |l| matches!(l.procs, Procs::All) || l.procs == Procs::Size(procs))
            .filter(move |l| l.access.is_none_or(|a| a == access))
            .filter(move |l| l.ptype.is_none_or(|t| t == ptype))
    }

    /// The hints for `MPI_File_open` of type `ptype`'s file under `access` in the
    /// partition of `procs` processes: `--hint`s, then the file's `all` and `on_open`
    /// lines that match, merged ([`merged`]).
    pub fn at_open(&self, procs: usize, access: Access, ptype: PatternType) -> Vec<Hint> {
        let from_file = self
            .lines_for(procs, access, ptype)
            .filter(|l| matches!(l.chunk, Chunk::All | Chunk::OnOpen))
            .map(|l| (l.key.clone(), l.value.clone()));
        merged(self.global.iter().cloned().chain(from_file))
    }

    /// The hints file's hints for pattern `p` (chunk `l`; `Lmax`: `l` = `mpart`) of the
    /// partition of `procs` processes under `access`, merged; none for a filler, whose
    /// chunk is the rest of a segment.
    pub fn for_pattern(&self, procs: usize, access: Access, p: &Pattern, mpart: u64) -> Vec<Hint> {
        if p.role == Role::Filler {
            return Vec::new();
        }
        let hits = self
            .lines_for(procs, access, p.ptype)
            .filter(|l| match l.chunk {
                Chunk::Bytes(b) => b == p.chunk,
                Chunk::Lmax => p.chunk == mpart,
                Chunk::All | Chunk::OnOpen => false,
            })
            .map(|l| (l.key.clone(), l.value.clone()));
        merged(hits)
    }

    /// Whether any line gives hints per chunk size (`Lmax` or a size).
    pub fn per_pattern(&self) -> bool {
        self.file.as_ref().is_some_and(|f| {
            f.lines
                .iter()
                .any(|l| matches!(l.chunk, Chunk::Lmax | Chunk::Bytes(_)))
        })
    }
}

/// The hints of one pattern that a hints file gives per chunk size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternHints {
    /// The pattern number.
    pub number: usize,
    /// Its chunk `l` in bytes.
    pub chunk: u64,
    /// What was given with `MPI_File_set_info` before it (the file's hints for its chunk
    /// size, and the values at open of the keys an earlier pattern changed).
    pub given: Vec<Hint>,
    /// What the library reported right after (`MPI_File_get_info`).
    pub reported: Vec<Hint>,
}

/// The hints of one file (one pattern type under one access method of a partition), as
/// rank 0 gave them and its library reported them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHints {
    /// The access method.
    pub access: Access,
    /// The pattern type.
    pub ptype: PatternType,
    /// Given to `MPI_File_open`.
    pub given: Vec<Hint>,
    /// Reported by `MPI_File_get_info` after the open.
    pub reported: Vec<Hint>,
    /// The patterns that got hints of their own.
    pub patterns: Vec<PatternHints>,
}

/// The value of `key` in `hints`.
pub fn value_of<'a>(hints: &'a [Hint], key: &str) -> Option<&'a str> {
    hints
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// What to give with `MPI_File_set_info` before a pattern, and the keys then changed from
/// their values at open: the pattern's own hints `want`, and for the keys that an earlier
/// pattern changed (`changed`) and this one does not set, their values at open (as given,
/// else as the library reported them after the open; a key with neither stays as it is).
pub fn before_pattern(
    want: &[Hint],
    changed: &[String],
    at_open: &[Hint],
    reported: &[Hint],
) -> (Vec<Hint>, Vec<String>) {
    let mut set = want.to_vec();
    for key in changed {
        if value_of(want, key).is_some() {
            continue;
        }
        if let Some(v) = value_of(at_open, key).or_else(|| value_of(reported, key)) {
            set.push((key.clone(), v.to_string()));
        }
    }
    let now_changed = want.iter().map(|(k, _)| k.clone()).collect();
    (set, now_changed)
}

/// A value as protocol lines and the summary show it: as it is when it is one word, else
/// quoted (ROMIO reports `romio_filesystem_type` as `UFS: Generic ROMIO driver ...`),
/// control characters (of a value the library reports) escaped by the quoting.
pub fn shown(value: &str) -> String {
    if value.is_empty()
        || value
            .chars()
            .any(|c| c.is_whitespace() || c == '"' || c.is_control() || !c.is_ascii())
    {
        format!("{value:?}")
    } else {
        value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patterns::pattern_table;
    use crate::units::MB;

    fn h(k: &str, v: &str) -> Hint {
        (k.to_string(), v.to_string())
    }

    const FILE: &str = "\
# b_eff_io hints
all  all     all       on_open  cb_buffer_size 1048576

2    write   scatter   all      romio_cb_write enable   # the strided writes
all  all     separated 1024     romio_ds_write disable
4    read    seg_coll  Lmax     cb_nodes       2
all  rewrite shared    1048584  striping_unit  65536
";

    #[test]
    fn the_2_1_grammar_parses() {
        let f = parse_hints_file("h", FILE).unwrap();
        assert_eq!(f.lines.len(), 5);
        assert_eq!(
            f.lines[1],
            HintLine {
                line: 4,
                procs: Procs::Size(2),
                access: Some(Access::Write),
                ptype: Some(PatternType::Scatter),
                chunk: Chunk::All,
                key: "romio_cb_write".into(),
                value: "enable".into(),
            }
        );
        assert_eq!(f.lines[2].chunk, Chunk::Bytes(1024));
        assert_eq!(f.lines[2].ptype, Some(PatternType::Separate));
        assert_eq!(f.lines[3].chunk, Chunk::Lmax);
        assert_eq!(f.lines[3].access, Some(Access::Read));
        assert_eq!(
            f.lines[4].to_string(),
            "all rewrite shared 1048584 striping_unit 65536"
        );
        for word in ["scatter", "shared", "separated", "segmented", "seg_coll"] {
            let line = format!("all all {word} all k v");
            assert!(parse_hints_file("h", &line).is_ok(), "{word}");
        }
        for size in [
            "1024", "1032", "32768", "32776", "1048576", "1048584", "on_open",
        ] {
            let line = format!("all all all {size} k v");
            assert!(parse_hints_file("h", &line).is_ok(), "{size}");
        }
        assert!(parse_hints_file("h", "\n  \n# only comments\n")
            .unwrap()
            .lines
            .is_empty());
    }

    #[test]
    fn a_bad_line_names_the_file_the_line_and_the_field() {
        let err = |text: &str| parse_hints_file("dir/hints", text).unwrap_err().to_string();
        assert_eq!(
            err("all all all all k v\n\nall wirte all all k v"),
            "hints file 'dir/hints', line 3, field 2 (access): 'wirte' is not one of all, \
             write, rewrite, read"
        );
        let e = err("none all all all k v");
        assert!(
            e.contains("line 1, field 1 (proc_num): 'none' is neither all"),
            "{e}"
        );
        assert!(err("0 all all all k v").contains("field 1 (proc_num): a partition has at least 1"));
        let e = err("all all strided all k v");
        assert!(
            e.contains("field 3 (pat_type): 'strided' is not one of all, scatter"),
            "{e}"
        );
        let e = err("all all all 4096 k v");
        assert!(
            e.contains("field 4 (chunk_size): '4096' is not one of all, on_open, Lmax"),
            "{e}"
        );
        let e = err("all all all all cb_nodes");
        assert!(e.contains("line 1, field 6 (value): missing"), "{e}");
        assert!(e.contains("this one has 5 fields"), "{e}");
        let e = err("all all all all k v w");
        assert!(e.contains("line 1, field 7: 'w' after the value"), "{e}");
        #[cfg(feature = "mpi")]
        {
            let long = "k".repeat(mpiio::MAX_INFO_KEY_LEN + 1);
            let e = err(&format!("all all all all {long} v"));
            assert!(
                e.contains("field 5 (key)") && e.contains("MPI_MAX_INFO_KEY"),
                "{e}"
            );
        }
    }

    #[test]
    fn opens_get_the_command_line_hints_then_the_matching_lines() {
        let hints = Hints {
            global: vec![h("cb_buffer_size", "4194304"), h("striping_factor", "4")],
            file: Some(parse_hints_file("h", FILE).unwrap()),
        };
        assert!(!hints.is_empty() && hints.per_pattern());
        // The file's on_open line replaces --hint's value of the same key, in its place.
        assert_eq!(
            hints.at_open(2, Access::Write, PatternType::Scatter),
            vec![
                h("cb_buffer_size", "1048576"),
                h("striping_factor", "4"),
                h("romio_cb_write", "enable")
            ]
        );
        // Another partition, access or type: only the lines for all.
        assert_eq!(
            hints.at_open(1, Access::Write, PatternType::Scatter),
            vec![h("cb_buffer_size", "1048576"), h("striping_factor", "4")]
        );
        assert_eq!(hints.at_open(2, Access::Read, PatternType::Shared).len(), 2);
        let only_global = Hints {
            global: vec![h("a", "1")],
            file: None,
        };
        assert_eq!(
            only_global.at_open(8, Access::Read, PatternType::Separate),
            vec![h("a", "1")]
        );
        assert!(!only_global.per_pattern());
        assert!(Hints::default().is_empty());
    }

    #[test]
    fn patterns_get_the_lines_of_their_chunk_size() {
        let hints = Hints {
            global: vec![],
            file: Some(parse_hints_file("h", FILE).unwrap()),
        };
        let mpart = 4 * MB;
        let t = pattern_table(mpart);
        // Pattern 21: type 2, 1 kB.
        assert_eq!(
            hints.for_pattern(2, Access::Write, &t[21], mpart),
            vec![h("romio_ds_write", "disable")]
        );
        // Pattern 22 is 32 kB+8; pattern 5 is type 0's 1 kB.
        assert!(hints
            .for_pattern(2, Access::Write, &t[22], mpart)
            .is_empty());
        assert!(hints.for_pattern(2, Access::Write, &t[5], mpart).is_empty());
        // Lmax: pattern 35, MPART of type 4, read in partition 4 only.
        assert_eq!(
            hints.for_pattern(4, Access::Read, &t[35], mpart),
            vec![h("cb_nodes", "2")]
        );
        assert!(hints.for_pattern(2, Access::Read, &t[35], mpart).is_empty());
        assert!(hints
            .for_pattern(4, Access::Write, &t[35], mpart)
            .is_empty());
        // 1 MB+8 of type 1 under rewrite.
        assert_eq!(
            hints.for_pattern(3, Access::Rewrite, &t[16], mpart),
            vec![h("striping_unit", "65536")]
        );
        // A filler never matches a chunk size.
        let mut filler = t[42];
        filler.chunk = 1024;
        let all_1024 = Hints {
            global: vec![],
            file: Some(parse_hints_file("h", "all all all 1024 k v").unwrap()),
        };
        assert!(all_1024
            .for_pattern(2, Access::Write, &filler, mpart)
            .is_empty());
        assert_eq!(
            all_1024.for_pattern(2, Access::Write, &t[38], mpart).len(),
            1
        );
    }

    #[test]
    fn keys_changed_for_a_pattern_get_their_open_values_back() {
        let at_open = vec![h("romio_cb_write", "enable")];
        let reported = vec![h("romio_cb_write", "enable"), h("cb_nodes", "1")];
        // The 1 kB pattern disables collective buffering and sets cb_nodes.
        let want = vec![h("romio_cb_write", "disable"), h("cb_nodes", "2")];
        let (set, changed) = before_pattern(&want, &[], &at_open, &reported);
        assert_eq!(set, want);
        assert_eq!(changed, ["romio_cb_write", "cb_nodes"]);
        // The next pattern sets nothing of its own: both go back.
        let (set, changed) = before_pattern(&[], &changed, &at_open, &reported);
        assert_eq!(set, vec![h("romio_cb_write", "enable"), h("cb_nodes", "1")]);
        assert!(changed.is_empty());
        // And then nothing is left to do.
        assert!(before_pattern(&[], &changed, &at_open, &reported)
            .0
            .is_empty());
        // A key without a known value at open stays as it is.
        let (set, _) = before_pattern(&[], &["x".to_string()], &at_open, &reported);
        assert!(set.is_empty());
    }

    #[test]
    fn merging_keeps_the_last_value_in_the_first_place() {
        assert_eq!(
            merged(vec![h("a", "1"), h("b", "2"), h("a", "3")]),
            vec![h("a", "3"), h("b", "2")]
        );
        assert_eq!(shown("enable"), "enable");
        assert_eq!(shown("UFS: Generic"), "\"UFS: Generic\"");
    }

    #[test]
    fn control_characters_are_refused_in_hints_and_escaped_in_reported_values() {
        let e = parse_hints_file("h", "all all all on_open cb\x1b[2J 1\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "hints file 'h', line 1, field 5 (key): holds the control character \\x1b; \
             hints are printable text"
        );
        let e = parse_hints_file("h", "all wr\x07ite all on_open cb 1\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("field 2 (access): holds the control character \\x07"),
            "{e}"
        );
        let e = check("cb\x1b", "1").unwrap_err();
        assert_eq!(
            e,
            "hint 'cb\\x1b': holds the control character \\x1b; hints are printable text"
        );
        assert!(check("cb_nodes", "1\u{9b}2J").is_err());
        // A value reported by the library is shown with its control characters escaped.
        assert_eq!(shown("UFS\x1b[2J"), "\"UFS\\u{1b}[2J\"");
        assert_eq!(shown("enable"), "enable");
    }
}
