//! Reading result files and telling their kind from `"benchmark"`.

use std::path::Path;

use crate::error::Error;
use beffio::report::json as beffio_doc;
use sqmr::report::json as sqmr_doc;
use sqmr::scan::report::ScanDocument;

/// A result of this crate's functions.
pub type Result<T> = std::result::Result<T, Error>;

/// The two kinds of result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Written by `sqmr --json`.
    Sqmr,
    /// Written by `b_eff_io --json`.
    BEffIo,
    /// Written by `sqmr --scan --json`.
    SqmrScan,
}

impl Kind {
    /// The benchmark's name as its JSON spells it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Sqmr => "sqmr",
            Kind::BEffIo => "b_eff_io",
            Kind::SqmrScan => "sqmr --scan",
        }
    }
}

/// The document of one result.
#[derive(Debug, Clone, PartialEq)]
pub enum Document {
    /// A sqmr result.
    Sqmr(sqmr_doc::Document),
    /// A b_eff_io result.
    BEffIo(beffio_doc::Document),
    /// A scan of the nodes by `sqmr --scan`.
    SqmrScan(Box<ScanDocument>),
}

/// One loaded result and the label it goes by in legends and tables.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Label: `--label` or the file name without `.json`.
    pub label: String,
    /// Where it was read from, for messages.
    pub source: String,
    /// The document.
    pub document: Document,
}

impl Run {
    /// The kind of the result.
    pub fn kind(&self) -> Kind {
        match self.document {
            Document::Sqmr(_) => Kind::Sqmr,
            Document::BEffIo(_) => Kind::BEffIo,
            Document::SqmrScan(_) => Kind::SqmrScan,
        }
    }
}

/// The most bytes read from one input file: a result's JSON, a perflog, a font. A result
/// of 32 sizes with 1000 samples each from 128 core ranks is about 150 MB, a year of
/// nightly perflog records well under 1 MB, so a larger file is the wrong file, refused
/// before it fills memory.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// What the readers' `--help` says about their input files (and the man pages with it).
pub fn input_rules() -> String {
    format!(
        "Input files must be regular files of at most {} MiB: a FIFO, a device or a larger \
         file is refused, naming it. Values no run can give (negative or infinite rates, \
         zero processes, ...) are refused, naming the field or column.",
        MAX_INPUT_BYTES >> 20
    )
}

/// The text of the input file `path`: a regular file of at most [`MAX_INPUT_BYTES`],
/// read without blocking on a FIFO and without reading past the cap.
pub fn read_input(path: &Path) -> Result<String> {
    Ok(outfile::input::read_to_string(path, MAX_INPUT_BYTES)?)
}

/// Reads `path`; the label is `label` or the file's name without its `.json`.
pub fn load_file(path: &Path, label: Option<&str>) -> Result<Run> {
    let text = read_input(path)?;
    let document = parse(&text, path)?;
    let label = label
        .map(str::to_string)
        .unwrap_or_else(|| default_label(path));
    Ok(Run {
        label,
        source: path.display().to_string(),
        document,
    })
}

/// The label of a file without `--label`: its name without `.json`.
pub fn default_label(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    name.strip_suffix(".json")
        .map(str::to_string)
        .unwrap_or(name)
}

/// The one field that tells the kind of a document; the others are skipped unread.
#[derive(serde::Deserialize)]
struct Head {
    benchmark: Option<serde_json::Value>,
    mode: Option<serde_json::Value>,
}

/// Parses the JSON `text` of the file `path` (named in errors).
pub fn parse(text: &str, path: &Path) -> Result<Document> {
    // Checked as JSON first, without building a tree of it: the document's own reader
    // builds the only one.
    serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(|source| Error::NotJson {
        path: path.to_path_buf(),
        source,
    })?;
    let unknown = |found: String| Error::UnknownKind {
        path: path.to_path_buf(),
        found,
    };
    // (serde would also read a struct from an array of its fields.)
    let head = serde_json::from_str::<Head>(text)
        .ok()
        .filter(|_| text.trim_start().starts_with('{'));
    let Some(head) = head else {
        return Err(unknown("not a JSON object".into()));
    };
    let kind = match head.benchmark {
        None => return Err(unknown("no \"benchmark\" field".into())),
        Some(serde_json::Value::String(s)) if s == "sqmr" && head.mode.is_some() => {
            if head.mode != Some(serde_json::Value::String("scan".into())) {
                return Err(unknown(format!(
                    "a sqmr document whose \"mode\" is {}, not \"scan\"",
                    head.mode.unwrap_or_default()
                )));
            }
            Kind::SqmrScan
        }
        Some(serde_json::Value::String(s)) if s == "sqmr" => Kind::Sqmr,
        Some(serde_json::Value::String(s)) if s == "b_eff_io" => Kind::BEffIo,
        Some(other) => return Err(unknown(format!("\"benchmark\" is {other}"))),
    };
    let malformed = |reason: String| Error::Malformed {
        path: path.to_path_buf(),
        kind: kind.name(),
        reason,
    };
    match kind {
        Kind::Sqmr => sqmr_doc::Document::from_json(text)
            .map(Document::Sqmr)
            .map_err(|e| malformed(e.to_string())),
        Kind::BEffIo => beffio_doc::Document::from_json(text)
            .map(Document::BEffIo)
            .map_err(|e| malformed(e.to_string())),
        Kind::SqmrScan => ScanDocument::from_json(text)
            .map(|d| Document::SqmrScan(Box::new(d)))
            .map_err(malformed),
    }
}

/// Checks that all `runs` are of one kind and returns it.
pub fn one_kind(runs: &[Run]) -> Result<Kind> {
    let Some(first) = runs.first() else {
        return Err(Error::Usage("no result given".into()));
    };
    match runs.iter().find(|r| r.kind() != first.kind()) {
        None => Ok(first.kind()),
        Some(other) => Err(Error::MixedKinds {
            first: first.source.clone(),
            first_kind: first.kind().name(),
            other: other.source.clone(),
            other_kind: other.kind().name(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text, Path::new("r.json")).unwrap_err().to_string()
    }

    #[test]
    fn bad_documents_are_named_and_explained() {
        assert!(err("{").starts_with("r.json: not a JSON document"));
        assert!(err("[1]").contains("not a JSON object"));
        assert!(err("{\"a\": 1}").contains("no \"benchmark\" field"));
        assert!(err("{\"benchmark\": \"ior\"}").contains("\"benchmark\" is \"ior\""));
        let e = err("{\"benchmark\": \"sqmr\", \"sizes\": 3}");
        assert!(e.starts_with("r.json: a sqmr result, but malformed"), "{e}");
        let e = err("{\"benchmark\": \"sqmr\", \"mode\": \"scan\", \"scan\": {}}");
        assert!(
            e.starts_with("r.json: a sqmr --scan result, but malformed"),
            "{e}"
        );
        let e = err("{\"benchmark\": \"sqmr\", \"mode\": \"x\"}");
        assert!(e.contains("whose \"mode\" is \"x\""), "{e}");
        let e = err("{\"benchmark\": \"b_eff_io\"}");
        assert!(
            e.starts_with("r.json: a b_eff_io result, but malformed"),
            "{e}"
        );
    }

    #[test]
    fn labels_default_to_the_file_name() {
        assert_eq!(default_label(Path::new("/a/b/run-1.json")), "run-1");
        assert_eq!(default_label(Path::new("x.txt")), "x.txt");
    }
}
