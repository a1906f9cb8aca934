//! The namespaces of the nodes: each slurmd in a mount and UTS namespace of its own
//! (and in its host's network namespace when the nodes have one).

use std::fmt::Write as _;
use std::process::Command;

/// Shell commands (each followed by `&& `) that mount again, in a fresh sysfs, the file
/// systems this machine has under `/sys/fs/cgroup` (a mount table in `/proc/mounts`
/// form), in table order so that parents come first. A cgroup hierarchy mounted again
/// with the same options is the same hierarchy, so the node's slurmd sees the machine's.
pub(crate) fn remount_cgroups(mounts: &str) -> String {
    let mut out = String::new();
    for line in mounts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 || !(f[1] == "/sys/fs/cgroup" || f[1].starts_with("/sys/fs/cgroup/")) {
            continue;
        }
        let _ = write!(
            out,
            "mkdir -p '{dir}' && mount -t {fstype} -o '{opts}' {source} '{dir}' && ",
            dir = f[1],
            fstype = f[2],
            opts = f[3],
            source = f[0]
        );
    }
    out
}

/// `program`, inside network namespace `ns` when there is one. `ip netns exec` enters it
/// and execs the program, so the child's pid is the program's either way.
pub(crate) fn in_namespace(ns: Option<&str>, program: &str) -> Command {
    match ns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns, program]);
            c
        }
        None => Command::new(program),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_mounts_are_repeated_in_order() {
        let table = "sysfs /sys sysfs rw 0 0\n\
                     tmpfs /sys/fs/cgroup tmpfs rw,mode=755 0 0\n\
                     cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n\
                     cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n\
                     tmpfs /dev/shm tmpfs rw 0 0\n";
        assert_eq!(
            remount_cgroups(table),
            "mkdir -p '/sys/fs/cgroup' && mount -t tmpfs -o 'rw,mode=755' tmpfs '/sys/fs/cgroup' && \
             mkdir -p '/sys/fs/cgroup/cpu' && mount -t cgroup -o 'rw,cpu' cgroup '/sys/fs/cgroup/cpu' && \
             mkdir -p '/sys/fs/cgroup/unified' && mount -t cgroup2 -o 'rw' cgroup2 '/sys/fs/cgroup/unified' && "
        );
        assert_eq!(
            remount_cgroups("cgroup2 /sys/fs/cgroupfoo cgroup2 rw 0 0"),
            ""
        );
    }
}
