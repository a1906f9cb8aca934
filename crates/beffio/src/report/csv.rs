//! The `--csv` file: one row per pattern and access method of every partition, with a
//! header row.
//!
//! The fields are numbers and fixed identifiers (`write`, `seg-coll`), so the rows are
//! plain comma-joined values that never need quoting, and the benchmark takes no CSV
//! library. The file is built from the same [`Document`] as `--json`.

use super::json::Document;
use crate::patterns::PatternType;

/// The header row.
pub const HEADER: &str = "partition,access,pattern,type,type_name,chunk_bytes,memory_bytes,u,\
scheduled_s,repeats,bytes,time_s,sync_s,bandwidth_mb_s,errors";

/// The whole file: the header, then the rows of each partition in run order, access
/// methods in run order (write, rewrite, read), patterns in table order.
pub fn render(doc: &Document) -> String {
    let mut out = String::from(HEADER);
    out.push('\n');
    for part in &doc.partitions {
        let a = &part.access;
        for (access, patterns) in [
            ("write", &a.write),
            ("rewrite", &a.rewrite),
            ("read", &a.read),
        ] {
            for p in patterns {
                let type_name = PatternType::ALL.get(p.ptype).map_or("", |t| t.name());
                let fields = [
                    part.processes.to_string(),
                    access.to_string(),
                    p.number.to_string(),
                    p.ptype.to_string(),
                    type_name.to_string(),
                    p.chunk_bytes.to_string(),
                    p.memory_bytes.to_string(),
                    p.u.to_string(),
                    p.scheduled_s.to_string(),
                    p.repeats.to_string(),
                    p.bytes.to_string(),
                    p.time_s.to_string(),
                    p.sync_s.to_string(),
                    p.bandwidth_mb_s.to_string(),
                    p.errors.to_string(),
                ];
                out += &fields.join(",");
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::json::{Partition, Pattern, PerAccess};
    use super::*;

    fn pattern(number: usize, ptype: usize, bw: f64) -> Pattern {
        Pattern {
            number,
            ptype,
            chunk_bytes: 1024,
            memory_bytes: 1 << 20,
            u: 2,
            scheduled_s: 0.5,
            repeats: 3,
            bytes: 6 << 20,
            time_s: 0.25,
            sync_s: 0.125,
            bandwidth_mb_s: bw,
            errors: 0,
        }
    }

    fn partition(processes: usize) -> Partition {
        Partition {
            processes,
            scheduled_time_s: 30.0,
            wall_time_s: 31.0,
            b_eff_io_mb_s: 1.0,
            b_eff_io_2_1_mb_s: 1.0,
            segment_bytes: 0,
            cache_ratio: PerAccess {
                write: 0.0,
                rewrite: 0.0,
                read: 0.0,
            },
            cache_dominated: PerAccess {
                write: true,
                rewrite: true,
                read: true,
            },
            access: PerAccess {
                write: vec![pattern(0, 0, 1.5), pattern(9, 1, 2.5)],
                rewrite: vec![pattern(0, 0, 3.0)],
                read: vec![pattern(42, 4, 4.0)],
            },
        }
    }

    fn document() -> Document {
        Document {
            benchmark: "b_eff_io",
            version: "0".into(),
            date: "d".into(),
            host: "h".into(),
            processes: 2,
            scheduled_time_s: 30.0,
            memory_per_process_bytes: 1,
            mpart_bytes: 2 << 20,
            path: "/tmp".into(),
            drop_cache: false,
            noshared: false,
            cache_bound_bytes: 1,
            b_eff_io_mb_s: 1.0,
            b_eff_io_2_1_mb_s: 1.0,
            best_partition: 2,
            valid: false,
            invalid_reasons: vec![],
            partitions: vec![partition(2), partition(1)],
        }
    }

    #[test]
    fn one_row_per_pattern_and_access_method() {
        let text = render(&document());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], HEADER);
        assert_eq!(lines.len(), 1 + 2 * 4);
        let width = HEADER.split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == width));
        assert_eq!(
            lines[1],
            "2,write,0,0,scatter,1024,1048576,2,0.5,3,6291456,0.25,0.125,1.5,0"
        );
        assert!(lines[2].starts_with("2,write,9,1,shared,"), "{}", lines[2]);
        assert!(lines[3].starts_with("2,rewrite,0,0,scatter,"));
        assert!(lines[4].starts_with("2,read,42,4,seg-coll,"));
        assert!(lines[5].starts_with("1,write,0,"));
    }
}
