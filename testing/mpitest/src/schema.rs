//! The result documents the tests read, checked against the JSON Schemas the repository
//! publishes (`schemas/`, written by `xylem gen schemas`): a document that does not match
//! its schema fails the test that reads it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The folder of the published schemas.
pub fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas")
}

/// The schema file a document claims by its `benchmark`, `scan` and `schema_version`.
pub fn schema_file(doc: &serde_json::Value) -> PathBuf {
    let benchmark = doc["benchmark"]
        .as_str()
        .unwrap_or_else(|| panic!("a result document names its benchmark: {doc}"));
    let version = doc["schema_version"].as_u64().unwrap_or(1);
    let name = match (benchmark, doc.get("scan").is_some()) {
        ("sqmr", true) => format!("sqmr-scan-{version}"),
        (b, _) => format!("{b}-{version}"),
    };
    schema_dir().join(format!("{name}.schema.json"))
}

/// The validator of schema `file`, compiled once per test process (tests that poll a
/// document while a run rewrites it check every version they read).
fn validator(file: &Path) -> &'static jsonschema::Validator {
    static COMPILED: OnceLock<Mutex<HashMap<PathBuf, &'static jsonschema::Validator>>> =
        OnceLock::new();
    let mut compiled = COMPILED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    compiled.entry(file.to_path_buf()).or_insert_with(|| {
        let text = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("{}: {e} (xylem gen schemas schemas)", file.display()));
        let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
        let validator = jsonschema::validator_for(&schema)
            .unwrap_or_else(|e| panic!("{} is not a schema: {e}", file.display()));
        Box::leak(Box::new(validator))
    })
}

/// Panics, listing every violation, unless `doc` matches the schema it claims.
pub fn assert_matches_schema(doc: &serde_json::Value) {
    let file = schema_file(doc);
    let validator = validator(&file);
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the document does not match {}:\n{}\n{doc}",
        file.display(),
        errors.join("\n")
    );
}

/// Reads the JSON document at `path`, checks it against its schema and returns it.
pub fn read_document(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not complete JSON ({e}):\n{text}", path.display()));
    assert_matches_schema(&doc);
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_that_breaks_its_schema_is_caught() {
        let mut doc = serde_json::json!({
            "benchmark": "sqmr", "schema_version": 2, "complete": true
        });
        let caught = std::panic::catch_unwind(|| assert_matches_schema(&doc));
        assert!(caught.is_err(), "a document missing most fields passed");
        doc["complete"] = serde_json::json!("yes");
        assert!(std::panic::catch_unwind(|| assert_matches_schema(&doc)).is_err());
        assert!(schema_file(&doc).ends_with("sqmr-2.schema.json"));
        let scan = serde_json::json!({"benchmark": "sqmr", "schema_version": 1, "scan": {}});
        assert!(schema_file(&scan).ends_with("sqmr-scan-1.schema.json"));
    }
}
