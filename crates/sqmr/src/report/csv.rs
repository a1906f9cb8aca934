//! The `--csv` file: one row per finished message size, with a header row.
//!
//! Every field is a number, so the rows are plain comma-joined values (no quoting is ever
//! needed) and the benchmark takes no CSV library. Rank 0 reserves the file before the
//! run (an existing file is an error, never overwritten) and writes it whole after each
//! size, like the JSON document, so a run that dies midway leaves the sizes it finished.

use super::json::SizeResult;

/// The header row.
pub const HEADER: &str = "msgsize,iters,messages,\
avg_msgs_per_s,avg_mib_per_s,max_msgs_per_s,max_mib_per_s,min_msgs_per_s,min_mib_per_s,\
core_elapsed_min_s,core_elapsed_max_s";

/// The whole file for `sizes`: the header, then one row per size, each line ended.
pub fn render(sizes: &[SizeResult]) -> String {
    let mut out = String::from(HEADER);
    out.push('\n');
    for s in sizes {
        let r = &s.rates;
        let min = s
            .core_elapsed_s
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let max = s
            .core_elapsed_s
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let fields = [
            s.msgsize.to_string(),
            s.iters.to_string(),
            s.messages.to_string(),
            r.average.msgs_per_s.to_string(),
            r.average.mib_per_s.to_string(),
            r.max.msgs_per_s.to_string(),
            r.max.mib_per_s.to_string(),
            r.min.msgs_per_s.to_string(),
            r.min.mib_per_s.to_string(),
            finite(min),
            finite(max),
        ];
        out += &fields.join(",");
        out.push('\n');
    }
    out
}

/// A number, or an empty field when there is none (no core times).
fn finite(v: f64) -> String {
    if v.is_finite() {
        v.to_string()
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rates::{rates, Times};

    fn size(msgsize: u64, elapsed: Vec<f64>) -> SizeResult {
        SizeResult {
            msgsize,
            iters: 16,
            messages: 128.0,
            rates: rates(128.0, msgsize, elapsed.len(), Times::of(&elapsed)),
            core_elapsed_s: elapsed,
        }
    }

    #[test]
    fn one_row_per_size_under_the_header() {
        let text = render(&[size(0, vec![0.5]), size(8, vec![0.25, 0.5])]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], HEADER);
        let columns = HEADER.split(',').count();
        assert_eq!(columns, 11);
        assert_eq!(lines[1], "0,16,128,256,0,256,0,256,0,0.5,0.5");
        let row: Vec<f64> = lines[2].split(',').map(|f| f.parse().unwrap()).collect();
        assert_eq!(row.len(), columns);
        // 2 cores, mean time 0.375 s: 128 / 0.375 msgs/s on average; max from 0.25 s.
        assert_eq!(row[3], 128.0 / 0.375);
        assert_eq!(row[5], 512.0);
        assert_eq!(row[6], 512.0 * 8.0 / 1_048_576.0);
        assert_eq!(row[7], 256.0);
        assert_eq!((row[9], row[10]), (0.25, 0.5));
    }
}
