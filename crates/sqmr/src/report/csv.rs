//! The `--csv` file: one row per finished message size, with a header row.
//!
//! Every field is a number, so the rows are plain comma-joined values (no quoting is ever
//! needed) and the benchmark takes no CSV library. Rank 0 reserves the file before the
//! run (an existing file is an error, never overwritten) and writes it whole after each
//! size, like the JSON document, so a run that dies midway leaves the sizes it finished.

use super::json::{Sample, SizeResult};

/// The header row.
pub const HEADER: &str = "msgsize,iters,messages,\
avg_msgs_per_s,avg_mib_per_s,max_msgs_per_s,max_mib_per_s,min_msgs_per_s,min_mib_per_s,\
core_elapsed_min_s,core_elapsed_max_s";

/// The columns added after [`HEADER`]'s when sizes are repeated: which sample the row
/// is, of how many, whether it is the table's (the median), the statistics of the
/// size's average rates (repeated on each of its rows), and what ended the repeats.
pub const SAMPLE_COLUMNS: &str = "sample,samples,is_median,\
samples_min_avg_msgs_per_s,samples_median_avg_msgs_per_s,samples_max_avg_msgs_per_s,\
ci95_low_avg_msgs_per_s,ci95_high_avg_msgs_per_s,stopped_by";

/// The whole file for `sizes`: the header, then one row per size, each line ended.
/// With `samples` (`--repeat` above 1 or `--precision`) one row per sample instead,
/// with [`SAMPLE_COLUMNS`] after the usual ones; the first eleven columns of a row are
/// then that sample's, and the rows with `is_median` 1 are the table's. Every row ends
/// with `run`, the values of [`benchkit::provenance::CSV_COLUMNS`] (run id, host, MPI,
/// date), so that rows of many runs concatenated keep what they are of.
pub fn render(sizes: &[SizeResult], samples: bool, run: &str) -> String {
    let mut out = String::from(HEADER);
    if samples {
        out.push(',');
        out += SAMPLE_COLUMNS;
    }
    out.push(',');
    out += benchkit::provenance::CSV_COLUMNS;
    out.push('\n');
    for s in sizes {
        if !samples {
            out += &figures(s, &s.core_elapsed_s, &s.rates).join(",");
            out.push(',');
            out += run;
            out.push('\n');
            continue;
        }
        let st = &s.statistics.summary;
        for (
            i,
            Sample {
                core_elapsed_s,
                rates,
            },
        ) in s.samples.iter().enumerate()
        {
            let mut fields = figures(s, core_elapsed_s, rates);
            fields.extend([
                i.to_string(),
                s.samples.len().to_string(),
                u8::from(i == s.median_sample).to_string(),
                st.min.to_string(),
                st.median.to_string(),
                st.max.to_string(),
                st.ci95.low.map(|v| v.to_string()).unwrap_or_default(),
                st.ci95.high.map(|v| v.to_string()).unwrap_or_default(),
                s.stopped_by.name().to_string(),
                run.to_string(),
            ]);
            out += &fields.join(",");
            out.push('\n');
        }
    }
    out
}

/// The eleven figures of one timed loop of size `s`.
fn figures(s: &SizeResult, elapsed: &[f64], r: &crate::rates::Rates) -> Vec<String> {
    let min = elapsed.iter().copied().fold(f64::INFINITY, f64::min);
    let max = elapsed.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    vec![
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
    ]
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
    use crate::schedule::Step;
    use crate::stats::Measured;
    use crate::stats::Stop;

    fn sampled(msgsize: u64, samples: Vec<Vec<f64>>) -> SizeResult {
        let step = Step { msgsize, iters: 16 };
        let measured = Measured {
            samples,
            stop: Stop::Repeat,
            wall_s: 1.0,
        };
        SizeResult::from_samples(step, 128.0, measured).unwrap()
    }

    /// The run's columns, as `Provenance::csv_fields` gives them.
    const RUN: &str = "n1-42-20261205T084045Z,n1,Open MPI v4.1.4,2026-12-05T08:40:45+00:00";

    fn size(msgsize: u64, elapsed: Vec<f64>) -> SizeResult {
        sampled(msgsize, vec![elapsed])
    }

    #[test]
    fn one_row_per_sample_with_the_statistics_when_repeated() {
        let samples = vec![vec![0.5], vec![0.25], vec![1.0]];
        let text = render(&[size(0, vec![0.5]), sampled(8, samples)], true, RUN);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(
            lines[0],
            format!("{HEADER},{SAMPLE_COLUMNS},run_id,host,mpi,date")
        );
        let columns = lines[0].split(',').count();
        assert_eq!(columns, 24);
        assert_eq!(
            lines[1],
            format!("0,16,128,256,0,256,0,256,0,0.5,0.5,0,1,1,256,256,256,,,repeat,{RUN}")
        );
        // Size 8: rates 256, 512, 128; the median is 256, sample 0, no interval.
        assert_eq!(
            &lines[2..],
            [
                format!("8,16,128,256,0.001953125,256,0.001953125,256,0.001953125,0.5,0.5,0,3,1,128,256,512,,,repeat,{RUN}"),
                format!("8,16,128,512,0.00390625,512,0.00390625,512,0.00390625,0.25,0.25,1,3,0,128,256,512,,,repeat,{RUN}"),
                format!("8,16,128,128,0.0009765625,128,0.0009765625,128,0.0009765625,1,1,2,3,0,128,256,512,,,repeat,{RUN}"),
            ]
        );
        assert!(lines.iter().all(|l| l.split(',').count() == columns));
    }

    #[test]
    fn one_row_per_size_under_the_header() {
        let text = render(&[size(0, vec![0.5]), size(8, vec![0.25, 0.5])], false, RUN);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], format!("{HEADER},run_id,host,mpi,date"));
        let columns = HEADER.split(',').count();
        assert_eq!(columns, 11);
        assert_eq!(
            lines[1],
            format!("0,16,128,256,0,256,0,256,0,0.5,0.5,{RUN}")
        );
        let row: Vec<f64> = lines[2]
            .split(',')
            .take(columns)
            .map(|f| f.parse().unwrap())
            .collect();
        assert_eq!(lines[2].split(',').count(), columns + 4);
        // 2 cores, mean time 0.375 s: 128 / 0.375 msgs/s on average; max from 0.25 s.
        assert_eq!(row[3], 128.0 / 0.375);
        assert_eq!(row[5], 512.0);
        assert_eq!(row[6], 512.0 * 8.0 / 1_048_576.0);
        assert_eq!(row[7], 256.0);
        assert_eq!((row[9], row[10]), (0.25, 0.5));
    }
}
