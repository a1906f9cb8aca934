//! Who holds a reservation, and whether that process is still there.

use std::fmt;
use std::io::ErrorKind;
use std::time::{SystemTime, UNIX_EPOCH};

/// The process that holds a reservation, as its reservation file records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Its process id.
    pub pid: u32,
    /// The name of its host (`/proc/sys/kernel/hostname`).
    pub host: String,
    /// The name of its program (`sqmr`, `b_eff_io`, `xylem`).
    pub program: String,
    /// When it reserved the file, in seconds since the Unix epoch.
    pub started_unix_s: u64,
    /// The boot id of its host (`/proc/sys/kernel/random/boot_id`): a process of an
    /// earlier boot is gone even if its PID is in use again.
    pub boot_id: Option<String>,
    /// The start time of the process in clock ticks since boot (field 22 of
    /// `/proc/PID/stat`): a process with its PID but another start time is another process.
    pub process_start: Option<u64>,
}

/// Whether the holder of a reservation still runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Liveness {
    /// It runs on this host: its reservation stands.
    Alive,
    /// It is gone from this host (killed, or the host rebooted): its reservation may be
    /// replaced.
    Gone,
    /// This process cannot tell (another host, no `/proc`): the reservation stands; the
    /// text says why.
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
        }
    }

    /// The reservation file's text for the target named `name`.
    pub fn to_text(&self, name: &str) -> String {
        let mut text = format!(
            "{HEADER}\ntarget {name}\npid {}\nhost {}\nprogram {}\nstarted {}\n",
            self.pid, self.host, self.program, self.started_unix_s
        );
        if let Some(id) = &self.boot_id {
            text += &format!("boot_id {id}\n");
        }
        if let Some(start) = self.process_start {
            text += &format!("process_start {start}\n");
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
        };
        for line in text.lines() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
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
                "process_start" => holder.process_start = Some(number(value)?),
                _ => {}
            }
        }
        holder.pid = pid.ok_or("no 'pid' line")?;
        holder.host = host.ok_or("no 'host' line")?;
        Ok(holder)
    }

    /// Whether it still runs, as far as this process can tell.
    pub fn liveness(&self) -> Liveness {
        if self.host != this_host() {
            return Liveness::Unknown(format!(
                "{} is another host than this one ({}), where this process cannot look",
                self.host,
                this_host()
            ));
        }
        if !std::path::Path::new("/proc/self").exists() {
            return Liveness::Unknown("there is no /proc here to look for it".into());
        }
        if let (Some(then), Some(now)) = (&self.boot_id, boot_id()) {
            if *then != now {
                return Liveness::Gone;
            }
        }
        match std::fs::read_to_string(format!("/proc/{}/stat", self.pid)) {
            Err(e) if e.kind() == ErrorKind::NotFound => Liveness::Gone,
            Err(_) => Liveness::Alive,
            Ok(stat) => match parse_stat(&stat) {
                Some((state, _)) if state == 'Z' || state == 'X' => Liveness::Gone,
                Some((_, start)) if self.process_start.is_some_and(|s| s != start) => {
                    Liveness::Gone
                }
                _ => Liveness::Alive,
            },
        }
    }
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
pub(crate) fn this_host() -> String {
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

fn now_unix_s() -> u64 {
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
        assert_eq!(gone.liveness(), Liveness::Gone);
        // This PID, but another process's start time: the PID was reused.
        let reused = Holder {
            process_start: me.process_start.map(|s| s + 1),
            ..me.clone()
        };
        assert_eq!(reused.liveness(), Liveness::Gone);
        // Another boot.
        let rebooted = Holder {
            boot_id: Some("not-this-boot".into()),
            ..me.clone()
        };
        assert_eq!(rebooted.liveness(), Liveness::Gone);
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
