//! The `--csv` file: one row per pattern and access method of every partition, with a
//! header row.
//!
//! The fields are numbers and fixed identifiers (`write`, `seg-coll`), so the rows are
//! plain comma-joined values that never need quoting, and the benchmark takes no CSV
//! library. The file is built from the same [`Document`] as `--json`.

use serde_json::Value;

use super::json::Document;
use crate::patterns::PatternType;

/// The header row.
pub const HEADER: &str = "partition,access,pattern,type,type_name,chunk_bytes,memory_bytes,u,\
scheduled_s,repeats,bytes,time_s,sync_s,bandwidth_mb_s,errors";

/// The pattern fields of the columns after `type_name`, as the JSON names them.
const PATTERN_FIELDS: [&str; 9] = [
    "chunk_bytes",
    "memory_bytes",
    "u",
    "scheduled_s",
    "repeats",
    "bytes",
    "time_s",
    "sync_s",
    "bandwidth_mb_s",
];

/// The whole file: the header, then the rows of each partition in run order, access
/// methods in run order (write, rewrite, read), patterns in table order.
pub fn render(doc: &Document) -> String {
    let run = benchkit::provenance::csv_fields(doc.provenance.as_ref());
    render_value(&serde_json::to_value(doc).unwrap_or(Value::Null), &run)
}

/// [`render`] of the document as JSON, so the rows follow the JSON field for field. The
/// patterns of the partition a stopped run was in (`unfinished`) come last, in the same
/// columns: a partition's figures are in the JSON only. Every row ends with `run`, the
/// values of [`benchkit::provenance::CSV_COLUMNS`] (run id, host, MPI, date).
pub fn render_value(doc: &Value, run: &str) -> String {
    let mut out = format!("{HEADER},{}\n", benchkit::provenance::CSV_COLUMNS);
    if let Some(parts) = doc["partitions"].as_array() {
        for part in parts {
            rows(part, run, &mut out);
        }
    }
    if doc["unfinished"].is_object() {
        rows(&doc["unfinished"], run, &mut out);
    }
    out
}

/// The rows of one partition: access methods in run order, patterns in table order.
fn rows(part: &Value, run: &str, out: &mut String) {
    for access in ["write", "rewrite", "read"] {
        let Some(patterns) = part["access"][access].as_array() else {
            continue;
        };
        for p in patterns {
            let ptype = p["type"].as_u64().unwrap_or(u64::MAX);
            let type_name = PatternType::ALL
                .get(ptype as usize)
                .map_or("", |t| t.name());
            let mut fields = vec![
                field(&part["processes"]),
                access.to_string(),
                field(&p["number"]),
                field(&p["type"]),
                type_name.to_string(),
            ];
            fields.extend(PATTERN_FIELDS.iter().map(|name| field(&p[*name])));
            fields.push(field(&p["errors"]));
            fields.push(run.to_string());
            *out += &fields.join(",");
            out.push('\n');
        }
    }
}

/// A JSON number as a CSV field (empty when missing).
fn field(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The run's columns, as `Provenance::csv_fields` gives them.
    const RUN: &str = "job-77-20261205T084045Z,n1,MPICH 4.0.2,2026-12-05T08:40:45+00:00";

    fn pattern(number: usize, ptype: usize, bw: f64) -> Value {
        json!({
            "number": number, "type": ptype, "chunk_bytes": 1024, "memory_bytes": 1 << 20,
            "u": 2, "scheduled_s": 0.5, "repeats": 3, "bytes": 6 << 20, "time_s": 0.25,
            "sync_s": 0.125, "bandwidth_mb_s": bw, "errors": 0
        })
    }

    fn partition(processes: usize) -> Value {
        json!({
            "processes": processes,
            "access": {
                "write": [pattern(0, 0, 1.5), pattern(9, 1, 2.5)],
                "rewrite": [pattern(0, 0, 3.0)],
                "read": [pattern(42, 4, 4.0)]
            }
        })
    }

    #[test]
    fn one_row_per_pattern_and_access_method() {
        let text = render_value(&json!({"partitions": [partition(2), partition(1)]}), RUN);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], format!("{HEADER},run_id,host,mpi,date"));
        assert_eq!(lines.len(), 1 + 2 * 4);
        let width = HEADER.split(',').count() + 4;
        assert!(lines.iter().all(|l| l.split(',').count() == width));
        assert_eq!(
            lines[1],
            format!("2,write,0,0,scatter,1024,1048576,2,0.5,3,6291456,0.25,0.125,1.5,0,{RUN}")
        );
        assert!(lines[2].starts_with("2,write,9,1,shared,"), "{}", lines[2]);
        assert!(lines[3].starts_with("2,rewrite,0,0,scatter,"));
        assert!(lines[4].starts_with("2,read,42,4,seg-coll,"));
        assert!(lines[5].starts_with("1,write,0,"));
    }

    #[test]
    fn the_unfinished_partition_comes_last() {
        let mut cut = partition(1);
        cut["access"]["rewrite"] = json!([]);
        cut["access"].as_object_mut().unwrap().remove("read");
        let text = render_value(
            &json!({"partitions": [partition(2)], "unfinished": cut}),
            RUN,
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + 4 + 2, "{text}");
        assert!(lines[5].starts_with("1,write,0,0,scatter,"), "{}", lines[5]);
        assert!(lines[6].starts_with("1,write,9,1,shared,"), "{}", lines[6]);
    }

    #[test]
    fn a_real_run_gives_43_rows_per_access_method_and_partition() {
        // A `b_eff_io -T 6` run on 2 ranks (partitions 2 and 1), kept with the plots' tests.
        let text = include_str!("../../../analysis/tests/fixtures/beffio-a.json");
        let doc: Value = serde_json::from_str(text).unwrap();
        let csv = render_value(&doc, RUN);
        let rows: Vec<Vec<&str>> = csv
            .lines()
            .skip(1)
            .map(|l| l.split(',').collect())
            .collect();
        assert_eq!(rows.len(), 2 * 3 * 43);
        let read_42 = &doc["partitions"][1]["access"]["read"][42];
        let last = rows.last().unwrap();
        assert_eq!(&last[..5], ["1", "read", "42", "4", "seg-coll"]);
        assert_eq!(last[13], read_42["bandwidth_mb_s"].to_string());
        assert!(rows.iter().all(|r| r.iter().all(|f| !f.is_empty())));
    }
}
