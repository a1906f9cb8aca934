//! Owner markers: who holds a reservation or made a run directory, and whether that
//! process is still there. One format and one judgement for every marker xylem writes
//! (an output file's `.NAME.xylem-reservation`, b_eff_io's `b_eff_io.owner`), read only
//! through [`crate::SafeDir::read_marker`].
//!
//! A marker is text anyone with write access to the folder can forge. What it says is
//! used to decide whether a *marker* or a *run directory's contents* may be replaced or
//! removed, never to choose a path outside the folder: the caller also checks the
//! marker file's owner ([`Holder::owned_by_marker_file`]).

use std::fmt;
use std::io::ErrorKind;
use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds between two renewals of a reservation's lease (its file's modification time)
/// by the run that holds it.
pub const LEASE_RENEW_S: u64 = 60;

/// A reservation whose lease was last renewed this many renewal periods ago is expired,
/// wherever its holder ran: 10 × 60 s, long enough for a file server's clock a few
/// minutes off this host's and for a stalled renewal.
pub const LEASE_EXPIRY_PERIODS: u64 = 10;

/// The process that holds a reservation or made a run directory, as its marker records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Its process id.
    pub pid: u32,
    /// The name of its host (`/proc/sys/kernel/hostname`).
    pub host: String,
    /// The name of its program (`sqmr`, `b_eff_io`, `xylem`).
    pub program: String,
    /// When it made the marker, in seconds since the Unix epoch.
    pub started_unix_s: u64,
    /// The boot id of its host (`/proc/sys/kernel/random/boot_id`): a process of an
    /// earlier boot is gone even if its PID is in use again.
    pub boot_id: Option<String>,
    /// The start time of the process in clock ticks since boot (field 22 of
    /// `/proc/PID/stat`): a process with its PID but another start time is another process.
    pub process_start: Option<u64>,
    /// Its effective user id.
    pub uid: Option<u32>,
    /// The inode number of its PID namespace (`/proc/self/ns/pid`): its `pid` is a
    /// process id of that namespace, and a process of another namespace (a container on
    /// the same host) cannot look it up by that number. `None` in the markers of earlier
    /// releases.
    pub pid_ns: Option<u64>,
    /// Seconds between renewals of its lease, when it renews one (reservations).
    pub lease_s: Option<u64>,
    /// The name of its temporary file beside the marker, if it writes one.
    pub temp: Option<String>,
    /// When its run ended and kept what the marker guards on purpose (b_eff_io `--keep`).
    pub kept: Option<String>,
}

/// Whether the holder of a marker still runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Liveness {
    /// It runs on this host: its marker stands.
    Alive,
    /// It is gone (killed, the host rebooted, its lease expired), for the reason given:
    /// its marker may be replaced.
    Gone(String),
    /// This process cannot tell (another host, no `/proc`): the marker stands; the text
    /// says why.
    Unknown(String),
}

const HEADER: &str =
    "# xylem output-file reservation: the process below is writing the file named here";

impl Holder {
    /// This process, now.
    pub fn this_process() -> Holder {
        let pid = std::process::id();
        Holder {
            pid,
            host: this_host(),
            program: program_name(),
            started_unix_s: now_unix_s(),
            boot_id: boot_id(),
            process_start: process_start(pid),
            uid: Some(crate::safedir::euid()),
            pid_ns: pid_namespace("self"),
            lease_s: None,
            temp: None,
            kept: None,
        }
    }

    /// The reservation file's text for the target named `name`.
    pub fn to_text(&self, name: &str) -> String {
        self.render(HEADER, Some(name))
    }

    /// The marker's text: `header` (a line that says what the marker is), the target if
    /// there is one, then one `key value` line per field.
    pub fn render(&self, header: &str, target: Option<&str>) -> String {
        let mut text = format!("{header}\n");
        if let Some(name) = target {
            text += &format!("target {name}\n");
        }
        text += &format!(
            "pid {}\nhost {}\nprogram {}\nstarted {}\n",
            self.pid, self.host, self.program, self.started_unix_s
        );
        let optional = [
            ("boot_id", self.boot_id.clone()),
            ("process_start", self.process_start.map(|v| v.to_string())),
            ("uid", self.uid.map(|v| v.to_string())),
            ("pid_ns", self.pid_ns.map(|v| v.to_string())),
            ("lease", self.lease_s.map(|v| v.to_string())),
            ("temp", self.temp.clone()),
            ("kept", self.kept.clone()),
        ];
        for (key, value) in optional {
            if let Some(value) = value {
                text += &format!("{key} {value}\n");
            }
        }
        text
    }

    /// Reads a reservation file's text; the error says what is missing or malformed.
    pub fn parse(text: &str) -> Result<Holder, String> {
        let mut pid = None;
        let mut host = None;
        let mut holder = Holder {
            pid: 0,
            host: String::new(),
            program: "?".into(),
            started_unix_s: 0,
            boot_id: None,
            process_start: None,
            uid: None,
            pid_ns: None,
            lease_s: None,
            temp: None,
            kept: None,
        };
        for line in text.lines() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            // `key value`, or `key=value` as b_eff_io's markers of earlier releases wrote.
            let (key, value) = match (line.split_once(' '), line.split_once('=')) {
                (Some((k, _)), Some((k2, v2))) if k2.len() < k.len() => (k2, v2),
                (Some(kv), _) | (None, Some(kv)) => kv,
                (None, None) => (line, ""),
            };
            let (key, value) = (key.trim(), value.trim());
            let number = |v: &str| {
                v.parse::<u64>()
                    .map_err(|_| format!("'{key}' is not a number: '{v}'"))
            };
            match key {
                "pid" => {
                    pid = Some(
                        value
                            .parse::<u32>()
                            .map_err(|_| format!("'pid' is not a process id: '{value}'"))?,
                    )
                }
                "host" => host = Some(value.to_string()),
                "program" => holder.program = value.to_string(),
                "started" => holder.started_unix_s = number(value)?,
                "boot_id" => holder.boot_id = Some(value.to_string()),
                "process_start" | "start_ticks" => holder.process_start = Some(number(value)?),
                "uid" => {
                    holder.uid = Some(
                        value
                            .parse::<u32>()
                            .map_err(|_| format!("'uid' is not a user id: '{value}'"))?,
                    )
                }
                "pid_ns" => holder.pid_ns = Some(number(value)?),
                "lease" => holder.lease_s = Some(number(value)?),
                "temp" => holder.temp = Some(value.to_string()),
                "kept" => holder.kept = Some(value.to_string()),
                _ => {}
            }
        }
        holder.pid = pid.ok_or("no 'pid' line")?;
        holder.host = host.filter(|h| !h.is_empty()).ok_or("no 'host' line")?;
        Ok(holder)
    }

    /// Whether the marker file (whose owner is `file_uid`) was written by the user it
    /// names: a marker that names another user than the one who owns the file is forged.
    /// A marker without a `uid` line (an earlier release's) is judged by the file alone.
    pub fn owned_by_marker_file(&self, file_uid: u32) -> bool {
        self.uid.is_none_or(|uid| uid == file_uid)
    }

    /// [`Holder::liveness`], and for a holder on another host its lease: a marker whose
    /// file (modified at `renewed_unix_s`) has not been renewed for
    /// [`LEASE_EXPIRY_PERIODS`] of its holder's periods is gone.
    pub fn liveness_with_lease(&self, renewed_unix_s: i64) -> Liveness {
        match self.liveness() {
            Liveness::Unknown(why) => match self.lease_s {
                Some(period) if period > 0 => {
                    let age = now_unix_s() as i64 - renewed_unix_s;
                    let expiry = period.saturating_mul(LEASE_EXPIRY_PERIODS);
                    if age > expiry as i64 {
                        Liveness::Gone(format!(
                            "its lease expired: a running xylem renews it every {period} s, \
                             and it was last renewed {} ago",
                            age_text(age as u64)
                        ))
                    } else {
                        Liveness::Unknown(format!(
                            "{why}; its lease was renewed {} ago and expires {} after a \
                             renewal",
                            age_text(age.max(0) as u64),
                            age_text(expiry)
                        ))
                    }
                }
                _ => Liveness::Unknown(why),
            },
            other => other,
        }
    }

    /// Whether it still runs, as far as this process can tell.
    ///
    /// A process is looked up by its number in `/proc`, which only works from its own
    /// PID namespace: from another one (a container on the same host, or the host for a
    /// process in a container) the same number names another process or none. So:
    ///
    /// - another host, or no `/proc` of this process's namespace: it cannot tell;
    /// - another boot id: gone (the host restarted; this holds across namespaces);
    /// - the marker names this process's PID namespace: gone when no process has its
    ///   number, or the one that has it is a zombie or started at another time;
    /// - the marker names another namespace, or none (an earlier release's marker): it
    ///   runs if a process with its number and start time is visible here; else, from the
    ///   host's initial PID namespace, which sees the processes of every namespace with
    ///   their numbers in their own (`NSpid` in `/proc/N/status`), it is gone only when
    ///   no process of any namespace has its number there and its start time; from any
    ///   other namespace this process cannot tell.
    pub fn liveness(&self) -> Liveness {
        self.liveness_in(&View::here())
    }

    fn liveness_in(&self, view: &View) -> Liveness {
        if self.host != view.host {
            return Liveness::Unknown(format!(
                "{} is another host than this one ({}), where this process cannot look",
                self.host, view.host
            ));
        }
        if !view.proc_ok {
            return Liveness::Unknown(
                "there is no /proc here that shows this process's own PID namespace, to look \
                 for it"
                    .into(),
            );
        }
        if let (Some(then), Some(now)) = (&self.boot_id, &view.boot_id) {
            if then != now {
                return Liveness::Gone(format!(
                    "{} has restarted since process {} made it",
                    self.host, self.pid
                ));
            }
        }
        let here = self.in_this_namespace();
        let same_namespace = self.pid_ns.is_some() && self.pid_ns == view.pid_ns;
        if same_namespace || matches!(here, Liveness::Alive) {
            return here;
        }
        let (pid, host) = (self.pid, &self.host);
        if view.pid_ns == Some(INITIAL_PID_NS) {
            return match self.in_any_namespace() {
                Some(_) => Liveness::Alive,
                None => Liveness::Gone(format!(
                    "no process {pid} runs on {host} in any PID namespace{}",
                    if self.process_start.is_some() {
                        " (with its start time)"
                    } else {
                        ""
                    }
                )),
            };
        }
        let theirs = match self.pid_ns {
            Some(ns) => format!("PID namespace pid:[{ns}]"),
            None => "a PID namespace its marker does not name (an earlier release's)".into(),
        };
        let mine = view
            .pid_ns
            .map_or("unknown".into(), |ns| format!("pid:[{ns}]"));
        Liveness::Unknown(format!(
            "process {pid} ran in {theirs}, and this process (in PID namespace {mine}, not \
             the host's initial one) cannot see the processes of other namespaces; look \
             from the namespace of that run, or from the host's"
        ))
    }

    /// [`Holder::liveness`] for a process of this process's PID namespace.
    fn in_this_namespace(&self) -> Liveness {
        let (pid, host) = (self.pid, &self.host);
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                Liveness::Gone(format!("no process {pid} runs on {host}"))
            }
            Err(_) => Liveness::Alive,
            Ok(stat) => match parse_stat(&stat) {
                Some((state, _)) if state == 'Z' || state == 'X' => {
                    Liveness::Gone(format!("process {pid} on {host} has exited"))
                }
                Some((_, start)) if self.process_start.is_some_and(|s| s != start) => {
                    Liveness::Gone(format!(
                        "pid {pid} on {host} now belongs to another process"
                    ))
                }
                _ => Liveness::Alive,
            },
        }
    }

    /// From the host's initial PID namespace: the process of any namespace whose number
    /// in its own namespace is the holder's, with its start time (and its namespace, where
    /// this process may read it), as its number here; `None` when there is none. A process whose
    /// entry cannot be read counts as a match: the answer errs towards "it runs".
    fn in_any_namespace(&self) -> Option<u32> {
        let entries = std::fs::read_dir("/proc").ok()?;
        for entry in entries.flatten() {
            let Some(n) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(status) = std::fs::read_to_string(format!("/proc/{n}/status")) else {
                continue;
            };
            if innermost_pid(&status).unwrap_or(n) != self.pid {
                continue;
            }
            let stat = std::fs::read_to_string(format!("/proc/{n}/stat")).ok();
            match stat.as_deref().and_then(parse_stat) {
                Some((state, _)) if state == 'Z' || state == 'X' => continue,
                Some((_, start)) if self.process_start.is_some_and(|s| s != start) => continue,
                _ => {}
            }
            let ns = pid_namespace(&n.to_string());
            if self.pid_ns.is_some() && ns.is_some() && ns != self.pid_ns {
                continue;
            }
            return Some(n);
        }
        None
    }
}

/// The inode number of the host's initial PID namespace, fixed by the kernel
/// (`PROC_PID_INIT_INO`).
pub const INITIAL_PID_NS: u64 = 0xEFFF_FFFC;

/// What this process can see of its host's processes.
#[derive(Debug, Clone)]
struct View {
    host: String,
    /// Whether `/proc` is there and shows this process's own PID namespace (a `/proc`
    /// mounted for another namespace shows other numbers).
    proc_ok: bool,
    boot_id: Option<String>,
    pid_ns: Option<u64>,
}

impl View {
    fn here() -> View {
        let proc_ok = std::fs::read_link("/proc/self")
            .is_ok_and(|p| p.as_os_str() == std::process::id().to_string().as_str());
        View {
            host: this_host(),
            proc_ok,
            boot_id: boot_id(),
            pid_ns: pid_namespace("self"),
        }
    }
}

/// The inode number of the PID namespace of `/proc/<which>` (`self` or a number).
fn pid_namespace(which: &str) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/{which}/ns/pid"))
        .ok()
        .map(|m| m.ino())
}

/// A process's number in its own (innermost) PID namespace, from its `/proc/N/status`:
/// the last number of the `NSpid:` line (Linux 4.1 and later).
fn innermost_pid(status: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("NSpid:"))
        .and_then(|ids| ids.split_whitespace().last())
        .and_then(|id| id.parse().ok())
}

impl fmt::Display for Holder {
    /// `process 1234 (sqmr) on node001, started 5 min ago`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "process {} ({}) on {}",
            self.pid, self.program, self.host
        )?;
        if self.started_unix_s > 0 {
            let age = now_unix_s().saturating_sub(self.started_unix_s);
            write!(f, ", started {} ago", age_text(age))?;
        }
        Ok(())
    }
}

/// `42 s`, `5 min`, `3 h 2 min`, `2 days`.
fn age_text(seconds: u64) -> String {
    match seconds {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min", s / 60),
        s if s < 2 * 86400 => format!("{} h {} min", s / 3600, s % 3600 / 60),
        s => format!("{} days", s / 86400),
    }
}

/// The state and the start time of a process from its `/proc/PID/stat` line. The command
/// name (field 2) is in parentheses and may hold spaces and parentheses itself, so the
/// fields are counted from the last `)`.
fn parse_stat(stat: &str) -> Option<(char, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    // Field 3 is fields[0]; the start time is field 22.
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// This host's name (of this UTS namespace), or `unknown`.
pub fn this_host() -> String {
    read_trimmed("/proc/sys/kernel/hostname")
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()))
        .unwrap_or_else(|| "unknown".into())
}

fn boot_id() -> Option<String> {
    read_trimmed("/proc/sys/kernel/random/boot_id")
}

fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&stat).map(|(_, start)| start)
}

fn program_name() -> String {
    std::env::args_os()
        .next()
        .map(std::path::PathBuf::from)
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .map(|n| n.replace(char::is_whitespace, "_"))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "?".into())
}

/// Seconds since the Unix epoch, now.
pub(crate) fn now_unix_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_reads_back() {
        let me = Holder::this_process();
        assert_eq!(me.pid, std::process::id());
        assert!(me.process_start.is_some(), "{me:?}");
        let text = me.to_text("run.json");
        assert!(text.starts_with(HEADER) && text.contains("\ntarget run.json\n"));
        assert_eq!(Holder::parse(&text).unwrap(), me);
        assert_eq!(me.liveness(), Liveness::Alive);
    }

    #[test]
    fn malformed_texts_are_named() {
        assert_eq!(Holder::parse("host a\n").unwrap_err(), "no 'pid' line");
        assert_eq!(Holder::parse("pid 7\n").unwrap_err(), "no 'host' line");
        assert!(Holder::parse("pid x\nhost a\n")
            .unwrap_err()
            .contains("'x'"));
        let h = Holder::parse("pid 7\nhost a\nfuture_key 1\n").unwrap();
        assert_eq!((h.pid, h.host.as_str(), h.program.as_str()), (7, "a", "?"));
    }

    #[test]
    fn gone_reused_and_foreign_holders() {
        let me = Holder::this_process();
        // No such process (PIDs stay below 2^22 on Linux).
        let gone = Holder {
            pid: 999_999_999,
            ..me.clone()
        };
        assert!(matches!(gone.liveness(), Liveness::Gone(why) if why.contains("no process")));
        // This PID, but another process's start time: the PID was reused.
        let reused = Holder {
            process_start: me.process_start.map(|s| s + 1),
            ..me.clone()
        };
        assert!(
            matches!(reused.liveness(), Liveness::Gone(why) if why.contains("another process"))
        );
        // Another boot.
        let rebooted = Holder {
            boot_id: Some("not-this-boot".into()),
            ..me.clone()
        };
        assert!(matches!(rebooted.liveness(), Liveness::Gone(why) if why.contains("restarted")));
        // Another host: cannot be checked, so it stands.
        let foreign = Holder {
            host: format!("{}-elsewhere", me.host),
            pid: 999_999_999,
            ..me.clone()
        };
        assert!(
            matches!(foreign.liveness(), Liveness::Unknown(why) if why.contains("another host"))
        );
    }

    /// A view from a PID namespace that is neither the marker's nor the initial one.
    fn from_a_container() -> View {
        View {
            pid_ns: Some(1),
            ..View::here()
        }
    }

    #[test]
    fn a_holder_of_another_pid_namespace_is_never_called_gone_unseen() {
        let me = Holder::this_process();
        assert!(me.pid_ns.is_some(), "{me:?}");
        // A process number that no process has here: in its own namespace it may run.
        let theirs = Holder {
            pid: 999_999_999,
            pid_ns: Some(2),
            ..me.clone()
        };
        let container = from_a_container();
        assert!(
            matches!(theirs.liveness_in(&container), Liveness::Unknown(why)
                if why.contains("pid:[2]") && why.contains("pid:[1]")
                    && why.contains("from the namespace of that run")),
            "{:?}",
            theirs.liveness_in(&container)
        );
        // The same from the host's initial namespace, which sees every process: gone.
        let host = View {
            pid_ns: Some(INITIAL_PID_NS),
            ..View::here()
        };
        assert!(
            matches!(theirs.liveness_in(&host), Liveness::Gone(why) if why.contains("any PID namespace")),
            "{:?}",
            theirs.liveness_in(&host)
        );
        // This process, as seen from the host: it runs (its number in its own namespace,
        // its start time).
        let me_elsewhere = Holder {
            pid_ns: Some(2),
            ..me.clone()
        };
        assert_eq!(me_elsewhere.liveness_in(&host), Liveness::Alive);
        // An earlier release's marker (no namespace) of a process not seen here: from a
        // container it cannot tell, from the host it is gone; one that is seen runs.
        let old = Holder {
            pid_ns: None,
            ..theirs.clone()
        };
        assert!(
            matches!(old.liveness_in(&container), Liveness::Unknown(why) if why.contains("earlier release")),
            "{:?}",
            old.liveness_in(&container)
        );
        assert!(matches!(old.liveness_in(&host), Liveness::Gone(_)));
        let old_me = Holder {
            pid_ns: None,
            ..me.clone()
        };
        assert_eq!(old_me.liveness_in(&container), Liveness::Alive);
        // Another boot is gone from anywhere, and so is a zombie-free dead process of
        // this very namespace.
        let rebooted = Holder {
            boot_id: Some("not-this-boot".into()),
            ..theirs.clone()
        };
        assert!(matches!(
            rebooted.liveness_in(&container),
            Liveness::Gone(_)
        ));
        let mine_dead = Holder {
            pid_ns: container.pid_ns,
            ..theirs
        };
        assert!(
            matches!(mine_dead.liveness_in(&container), Liveness::Gone(why) if why.contains("no process"))
        );
        // A /proc of another namespace shows other numbers: nothing is judged from it.
        let blind = View {
            proc_ok: false,
            ..View::here()
        };
        assert!(matches!(me.liveness_in(&blind), Liveness::Unknown(_)));
    }

    #[test]
    fn nspid_lines() {
        assert_eq!(innermost_pid("Name:\tx\nNSpid:\t4711\t12\t1\n"), Some(1));
        assert_eq!(innermost_pid("NSpid:\t4711\n"), Some(4711));
        assert_eq!(innermost_pid("Pid:\t4711\n"), None);
    }

    #[test]
    fn a_foreign_holder_expires_with_its_lease() {
        let foreign = Holder {
            host: "elsewhere".into(),
            lease_s: Some(60),
            ..Holder::this_process()
        };
        let now = now_unix_s() as i64;
        assert!(
            matches!(foreign.liveness_with_lease(now - 30), Liveness::Unknown(why) if why.contains("renewed 30 s ago")),
        );
        assert!(
            matches!(foreign.liveness_with_lease(now - 601), Liveness::Gone(why) if why.contains("lease expired")),
        );
        // Without a lease (an earlier release's marker) it stands.
        let old = Holder {
            lease_s: None,
            ..foreign
        };
        assert!(matches!(old.liveness_with_lease(0), Liveness::Unknown(_)));
    }

    #[test]
    fn both_separators_and_the_owner_check() {
        let h =
            Holder::parse("b_eff_io run directory\npid=7\nhost=a\nstart_ticks=9\nuid=5\n").unwrap();
        assert_eq!(
            (h.pid, h.host.as_str(), h.process_start, h.uid),
            (7, "a", Some(9), Some(5))
        );
        assert!(h.owned_by_marker_file(5) && !h.owned_by_marker_file(0));
        let h = Holder::parse("pid 7\nhost a b=c\n").unwrap();
        assert_eq!(h.host, "a b=c");
        let me = Holder {
            lease_s: Some(60),
            temp: Some(".x.tmp.0011".into()),
            kept: Some("2026-12-03T20:00:00+00:00".into()),
            ..Holder::this_process()
        };
        assert_eq!(Holder::parse(&me.render("# h", None)).unwrap(), me);
    }

    #[test]
    fn stat_lines_with_odd_command_names() {
        let mut fields = vec!["S"; 20];
        fields[19] = "4242";
        let line = format!("77 (a (b) c) {}", fields.join(" "));
        assert_eq!(parse_stat(&line), Some(('S', 4242)));
        assert_eq!(parse_stat("77 (x) Z 1"), None);
    }

    #[test]
    fn ages_read_naturally() {
        assert_eq!(age_text(5), "5 s");
        assert_eq!(age_text(300), "5 min");
        assert_eq!(age_text(3 * 3600 + 120), "3 h 2 min");
        assert_eq!(age_text(3 * 86400), "3 days");
    }
}
