//! What a run keeps of its measurements before its end, as the record of
//! [`benchkit::keeper`]: rank 0's keeper writes a version of every output file
//! (`"complete": false`) between two patterns, on the main thread, at most once per
//! [`VERSION_INTERVAL`] (no pattern is timed while it renders or syncs a file: the cost
//! is the partition's untimed time), after every partition, and a last one when the run
//! stops (a signal, an error, a stall seen by the watchdog's thread) or completes.

use crate::outputs::{Outputs, Texts};
use crate::report::{self, RunInfo};
use crate::results::{PartitionResult, PatternResult, UnfinishedPartition};
use crate::schedule::Access;
use crate::validity::{invalid_reasons, ValidityInput};
use benchkit::keeper::{Keeper, Moment, Record};
use std::time::Duration;

/// The least time between two versions written as the patterns go: a version costs a few
/// milliseconds (rendered, written and synced), patterns last from a fraction of a
/// second, and the run waits for each.
pub(crate) const VERSION_INTERVAL: Duration = Duration::from_secs(1);

/// The most of the run's time the versions written as it goes may take: on a file system
/// where one takes long (syncs of a busy parallel file system), they come less often.
pub(crate) const VERSION_SHARE: f64 = 0.02;

/// The measurements so far, on rank 0 (empty elsewhere).
#[derive(Default)]
pub(crate) struct Kept {
    /// The run's description, once the partitions start: nothing is written before.
    info: Option<RunInfo>,
    /// The partitions finished so far.
    finished: Vec<PartitionResult>,
    /// The partition running now: the patterns it measured so far.
    current: Option<UnfinishedPartition>,
    /// Whether the earlier `PREFIX.sum` and `.prot` were moved aside (at the first pattern).
    earlier_kept: bool,
}

/// What one version is made of.
pub(crate) struct Snapshot {
    info: RunInfo,
    finished: Vec<PartitionResult>,
    current: Option<UnfinishedPartition>,
}

impl Kept {
    /// The keeper of a run whose output files are `outputs` (rank 0's; none elsewhere).
    pub fn keeper(outputs: Outputs) -> Keeper<Kept> {
        Keeper::new(Kept::default(), outputs)
    }

    /// The run described itself: versions may be written from now on.
    pub fn describe(&mut self, info: RunInfo) {
        self.info = Some(info);
    }

    /// Whether anything was measured: a finished partition or a pattern of the current one.
    pub fn measured_any(&self) -> bool {
        !self.finished.is_empty() || self.current.as_ref().is_some_and(|u| u.measured() > 0)
    }

    /// Pattern `r` of the partition of `processes` (scheduled `scheduled_s`) was measured
    /// under `access`. Returns whether it is the run's first, when the earlier
    /// `PREFIX.sum` and `.prot` are to be moved aside ([`pattern_done`]).
    fn pattern(
        &mut self,
        processes: usize,
        scheduled_s: f64,
        access: Access,
        r: &PatternResult,
    ) -> bool {
        let u = self
            .current
            .get_or_insert_with(UnfinishedPartition::default);
        if u.processes != processes {
            *u = UnfinishedPartition {
                processes,
                scheduled_s,
                access: Default::default(),
            };
        }
        u.access[access.index()].push(r.clone());
        !std::mem::replace(&mut self.earlier_kept, true)
    }

    /// Partition `r` finished.
    fn partition(&mut self, r: PartitionResult) {
        self.finished.push(r);
        self.current = None;
    }
}

/// Rank 0, on the main thread: pattern `r` of the partition of `processes` (scheduled
/// `scheduled_s`) was measured under `access`; a version of it is written now, between
/// two patterns, when the last is [`VERSION_INTERVAL`] old and its cost no more than
/// [`VERSION_SHARE`] of the time since (a failure is not said: the
/// previous version stays, and the last version says it). At the first, the run has gone
/// ahead: the earlier `PREFIX.sum` and `.prot` are moved to their numbered names and
/// said (standard error is held back during a pattern).
pub(crate) fn pattern_done(
    keeper: &Keeper<Kept>,
    processes: usize,
    scheduled_s: f64,
    access: Access,
    r: &PatternResult,
) {
    if keeper.with(|k| k.pattern(processes, scheduled_s, access, r)) {
        keeper.with_files(Outputs::keep_earlier);
    }
    let _ = keeper.version_if_due(VERSION_INTERVAL, VERSION_SHARE);
}

/// Rank 0: partition `r` finished; a version with it is written at once (a failure is
/// not said: the previous version stays, and the last version says it).
pub(crate) fn partition_done(keeper: &Keeper<Kept>, r: PartitionResult) {
    keeper.with(|k| k.partition(r));
    let _ = keeper.version();
}

impl Record for Kept {
    type Snapshot = Snapshot;
    type Files = Outputs;

    fn snapshot(&mut self, _: Moment<'_>) -> Option<Snapshot> {
        Some(Snapshot {
            info: self.info.clone()?,
            finished: self.finished.clone(),
            current: self.current.clone().filter(|u| u.measured() > 0),
        })
    }

    /// Every output file as of `moment`: the finished partitions and, before the end,
    /// the patterns of the current one; the criteria of validity from the run's own
    /// description (`-T`, `--noshared`), and while the run goes on or after it stopped,
    /// why it is not finished.
    fn write(outputs: &mut Outputs, s: Snapshot, moment: Moment<'_>) -> Result<(), String> {
        if outputs.is_empty() {
            return Ok(());
        }
        let errors: u64 = s.finished.iter().map(|p| p.errors()).sum::<u64>()
            + s.current.as_ref().map_or(0, |u| {
                u.access.iter().flatten().map(|r| r.errors).sum::<u64>()
            });
        let mut reasons = invalid_reasons(&ValidityInput {
            scheduled_time_s: s.info.scheduled_time_s,
            shared_pointer: !s.info.noshared,
            data_errors: errors,
        });
        match moment {
            Moment::Running => reasons.push("the run is not finished yet".to_string()),
            Moment::Stopped(why) => reasons.push(format!("the run did not finish: {why}")),
            Moment::Complete => {}
        }
        let mut doc = report::json::document(&s.info, &s.finished, &reasons);
        doc.complete = moment.complete();
        doc.stopped = moment.stopped();
        if moment.is_last() {
            doc.mark_ended();
        }
        let mut prot = report::v21::protocol_file(&s.info, &s.finished);
        if let Some(u) = &s.current {
            doc.warnings.extend(crate::anomalies::unfinished(u));
            doc.unfinished = Some(u.into());
            prot.push_str(&report::v21::unfinished_protocol(s.finished.len(), u));
        }
        let json = match serde_json::to_string_pretty(&doc) {
            Ok(text) => text + "\n",
            Err(e) => {
                return Err(format!(
                    "b_eff_io: error: cannot render the JSON document: {e}"
                ))
            }
        };
        let texts = Texts {
            csv: report::csv::render(&doc),
            json,
            sum: report::v21::summary_file(&s.info, &s.finished),
            prot,
        };
        // A version written as the run goes keeps the reservations; the last releases
        // them, each file written whole or absent.
        let failures = match moment {
            Moment::Running => outputs.write_version(&texts),
            _ => std::mem::replace(outputs, Outputs::none()).write(&texts),
        };
        match failures.is_empty() {
            true => Ok(()),
            false => Err(failures.join("\n")),
        }
    }

    fn release(outputs: &mut Outputs) {
        drop(std::mem::replace(outputs, Outputs::none()));
    }
}
