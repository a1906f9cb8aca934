//! What b_eff_io learns about the file system under `--path` before it measures: its type
//! and source (from the mount table), whether the ranks see each other's byte-range locks,
//! and whether a write through one rank's open file is seen through the others' open files
//! (what MPI-IO's shared file pointer needs of a file system that several hosts mount).
//! The probing itself is in [`crate::run::fsprobe`]; this module holds the facts and
//! their wording.

use serde::{Deserialize, Serialize};

/// One line of `/proc/self/mountinfo`, the fields b_eff_io reports.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Mount {
    /// Where it is mounted.
    pub mount_point: String,
    /// The file system type, with its subtype for FUSE (`fuse.glusterfs`).
    pub fs_type: String,
    /// What is mounted (`10.10.0.1:/xylem`, `/dev/vda`).
    pub source: String,
}

/// Undoes the octal escapes (`\040` for a space) of the mount table's paths.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = bytes
            .get(i + 1..i + 4)
            .filter(|_| bytes[i] == b'\\')
            .and_then(|d| std::str::from_utf8(d).ok())
            .filter(|d| d.bytes().all(|b| b.is_ascii_digit() && b < b'8'))
            .and_then(|d| u8::from_str_radix(d, 8).ok());
        if let Some(b) = escaped {
            out.push(b);
            i += 4;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount that holds `path` (absolute, symbolic links resolved), from the text of a
/// `mountinfo` table: the last mounted of those with the longest mount point above it.
pub fn mount_of(mountinfo: &str, path: &str) -> Option<Mount> {
    let under = |point: &str| {
        point == "/"
            || path == point
            || path
                .strip_prefix(point)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    let mut best: Option<Mount> = None;
    for line in mountinfo.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let Some(sep) = fields.iter().position(|f| *f == "-") else {
            continue;
        };
        let (Some(point), Some(fs_type), Some(source)) =
            (fields.get(4), fields.get(sep + 1), fields.get(sep + 2))
        else {
            continue;
        };
        let point = unescape(point);
        if !under(&point) {
            continue;
        }
        if best
            .as_ref()
            .is_some_and(|b| b.mount_point.len() > point.len())
        {
            continue;
        }
        best = Some(Mount {
            mount_point: point,
            fs_type: fs_type.to_string(),
            source: unescape(source),
        });
    }
    best
}

/// The outcome of one cross-rank check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Probe {
    /// Every other rank saw what rank 0 (or the last rank) did.
    Seen,
    /// The lowest rank that did not, and its host.
    NotSeen {
        /// That rank.
        rank: usize,
        /// Its processor name.
        host: String,
    },
    /// The check itself failed (the lowest failing rank's message).
    Failed {
        /// What failed.
        message: String,
    },
    /// One rank: nothing to check against.
    OneRank,
}

impl Probe {
    /// How the header says it: `seen across ranks`, `NOT seen across ranks (rank 1 on n2)`.
    fn describe(&self) -> String {
        match self {
            Probe::Seen => "seen across ranks".to_string(),
            Probe::NotSeen { rank, host } => {
                format!("NOT seen across ranks (rank {rank} on {host})")
            }
            Probe::Failed { message } => format!("not checked: {message}"),
            Probe::OneRank => "not checked (one rank)".to_string(),
        }
    }

    /// Whether the check found the property missing.
    pub fn missing(&self) -> bool {
        matches!(self, Probe::NotSeen { .. })
    }
}

/// The file system of the run, as rank 0 sees it, with the cross-rank checks.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileSystem {
    /// Rank 0's mount of the run directory.
    pub mount: Mount,
    /// Ranks whose mount has another type than rank 0's (the lowest, with its type).
    pub other_type: Option<String>,
    /// A write lock that rank 0 holds on the probe file, seen by every other rank.
    pub locks: Option<Probe>,
    /// A write under a lock through the last rank's open probe file (not synced), seen by
    /// every other rank under the lock through the file it had open (and had read) before.
    pub visibility: Option<Probe>,
}

/// Whether `fs_type` is a FUSE file system, whose client process may cache beside the
/// kernel.
pub fn is_fuse(fs_type: &str) -> bool {
    fs_type == "fuse" || fs_type == "fuseblk" || fs_type.starts_with("fuse.")
}

impl FileSystem {
    /// The header's `file system` line.
    pub fn header_line(&self) -> String {
        let m = &self.mount;
        let mut out = format!("{} {} on {}", m.fs_type, m.source, m.mount_point);
        if let Some(other) = &self.other_type {
            out += &format!("; other ranks see another type: {other}");
        }
        if let Some(p) = &self.locks {
            out += &format!("; byte-range locks {}", p.describe());
        }
        if let Some(p) = &self.visibility {
            out += &format!("; writes through open files {}", p.describe());
        }
        out
    }

    /// What `--drop-cache` cannot drop on this file system, if anything.
    pub fn drop_cache_limit(&self) -> Option<String> {
        is_fuse(&self.mount.fs_type).then(|| {
            format!(
                "--drop-cache drops the kernel's cached pages of the files; the caches of the \
                 {} client process itself (GlusterFS: io-cache, quick-read) cannot be dropped \
                 from here, so reads may still come from its memory",
                self.mount.fs_type
            )
        })
    }

    /// What a type-1 (shared file pointer) failure most likely means here, from the checks.
    pub fn shared_pointer_advice(&self) -> String {
        let mut out = String::from(
            "type 1 uses MPI-IO's shared file pointer, which needs, across hosts, byte-range \
             locks and writes that every client sees through its open files (Open MPI: \
             sharedfp 'lockedfile'; 'sm' works within one node only; MPICH and Intel MPI: \
             ROMIO's locked pointer file)",
        );
        if self.visibility.as_ref().is_some_and(Probe::missing) {
            out += &format!(
                "; this file system's clients do not see each other's writes through open \
                 files (checked at start), so ranks got overlapping offsets{}",
                if self.mount.fs_type == "fuse.glusterfs" {
                    ": a mount with -o direct-io-mode=enable (no kernel page cache) and the \
                     clients' write-behind off (gluster volume set VOLUME \
                     performance.write-behind off) makes such overlaps rarer, not impossible"
                } else {
                    ""
                }
            );
        }
        if self.locks.as_ref().is_some_and(Probe::missing) {
            out += "; this file system's byte-range locks are not seen across ranks";
        }
        out + "; --noshared runs type 1 with individual file pointers (NOT VALID)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
30 22 0:26 / /tmp rw shared:9 - tmpfs tmpfs rw
41 30 0:40 / /tmp/xylem\\040gluster/mnt rw,relatime - fuse.glusterfs 10.10.0.1:/xylem rw,user_id=0
42 30 0:41 / /tmp/xylem rw - tmpfs other rw";

    #[test]
    fn the_deepest_mount_above_the_path_is_its_file_system() {
        let m = mount_of(TABLE, "/tmp/xylem gluster/mnt/b_eff_io.1").unwrap();
        assert_eq!(m.fs_type, "fuse.glusterfs");
        assert_eq!(m.source, "10.10.0.1:/xylem");
        assert_eq!(m.mount_point, "/tmp/xylem gluster/mnt");
        assert_eq!(mount_of(TABLE, "/tmp/xylem").unwrap().source, "other");
        // A name that merely starts like a mount point is not under it.
        assert_eq!(mount_of(TABLE, "/tmp/xylemx").unwrap().fs_type, "tmpfs");
        assert_eq!(mount_of(TABLE, "/tmp/xylemx").unwrap().source, "tmpfs");
        assert_eq!(mount_of(TABLE, "/home/u").unwrap().fs_type, "ext4");
        assert_eq!(mount_of("", "/x"), None);
    }

    #[test]
    fn a_later_mount_on_the_same_point_hides_the_earlier() {
        let table =
            "1 0 0:1 / / rw - ext4 a rw\n2 1 0:2 / /m rw - tmpfs b rw\n3 1 0:3 / /m rw - xfs c rw";
        assert_eq!(mount_of(table, "/m/f").unwrap().fs_type, "xfs");
    }

    fn gluster(visibility: Probe) -> FileSystem {
        FileSystem {
            mount: Mount {
                mount_point: "/mnt".into(),
                fs_type: "fuse.glusterfs".into(),
                source: "h:/v".into(),
            },
            other_type: None,
            locks: Some(Probe::Seen),
            visibility: Some(visibility),
        }
    }

    #[test]
    fn the_header_line_says_what_the_checks_found() {
        let fs = gluster(Probe::NotSeen {
            rank: 1,
            host: "xyh2".into(),
        });
        assert_eq!(
            fs.header_line(),
            "fuse.glusterfs h:/v on /mnt; byte-range locks seen across ranks; writes through \
             open files NOT seen across ranks (rank 1 on xyh2)"
        );
        assert!(fs.shared_pointer_advice().contains("direct-io-mode=enable"));
        assert!(!gluster(Probe::Seen)
            .shared_pointer_advice()
            .contains("direct-io-mode"));
        assert!(fs
            .drop_cache_limit()
            .unwrap()
            .contains("fuse.glusterfs client"));
        let mut local = fs.clone();
        local.mount.fs_type = "ext4".into();
        assert_eq!(local.drop_cache_limit(), None);
    }
}
