//! The distributed file system harness itself: a GlusterFS volume across the two hosts that
//! each host reaches through its own client, that spreads (or replicates) files over both
//! hosts' bricks, and that leaves no process, mount or directory behind. If this fails, the
//! b_eff_io runs on it mean nothing. It needs no MPI, so it runs in one MPI part only.

use std::fs;
use std::path::Path;

use netns::gluster::{Layout, Volume, STATE_ROOT, VOLUME};
use netns::{Installation, HOSTS};

fn in_this_part() -> bool {
    let mpi = Installation::from_env();
    if mpi != Installation::OpenMpi4 {
        eprintln!("NOTE: the volume harness needs no MPI; it runs in the openmpi4 part");
        return false;
    }
    true
}

fn volume_or_skip<'c>(cluster: &'c netns::Cluster, layout: Layout) -> Option<Volume<'c>> {
    match Volume::start(cluster, layout, &[], &[]) {
        Ok(v) => Some(v),
        Err(why) => {
            mpitest::unavailable(&format!("no GlusterFS volume: {why}"));
            None
        }
    }
}

/// Runs `script` with `sh -c` on host `host`; its standard output.
fn sh_on(cluster: &netns::Cluster, host: usize, script: &str) -> String {
    let out = cluster
        .on_host(host, &["sh", "-c", script])
        .output()
        .unwrap();
    assert!(out.status.success(), "{script} on {}: {out:?}", HOSTS[host]);
    String::from_utf8(out.stdout).unwrap()
}

/// Whether any process's mount table names `path`, and whether any process's command line
/// names the volume's state directory.
fn leftovers(path: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let needle = path.to_str().unwrap();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(table) = fs::read_to_string(format!("/proc/{pid}/mountinfo")) {
            if table.lines().any(|l| l.contains(needle)) {
                found.push(format!("process {pid} has {needle} mounted"));
            }
        }
        if let Ok(cmd) = fs::read(format!("/proc/{pid}/cmdline")) {
            let cmd_text = String::from_utf8_lossy(&cmd);
            // The self-heal daemon of a replicated volume names the volume, not the path.
            let ours = cmd_text.contains(STATE_ROOT) || cmd_text.contains(&format!("shd/{VOLUME}"));
            if pid != std::process::id() && ours {
                found.push(format!(
                    "process {pid} runs {}",
                    String::from_utf8_lossy(&cmd)
                ));
            }
        }
    }
    found
}

#[test]
fn a_distributed_volume_spreads_files_over_both_hosts_and_leaves_nothing() {
    if !in_this_part() {
        return;
    }
    let Some(cluster) = netns::cluster_or_skip() else {
        return;
    };
    let Some(volume) = volume_or_skip(&cluster, Layout::Distributed) else {
        return;
    };
    let mnt = volume.mount_point();
    // Each host through its own client: written on one host, read on the other.
    let m = mnt.display();
    sh_on(
        &cluster,
        0,
        &format!("for i in $(seq 1 16); do echo file$i > {m}/f$i; done"),
    );
    assert_eq!(sh_on(&cluster, 1, &format!("cat {m}/f7")), "file7\n");
    let clients = sh_on(&cluster, 1, &format!("grep ' {m} ' /proc/self/mounts"));
    assert!(clients.contains("fuse.glusterfs"), "{clients}");
    // Not mounted on this machine itself: only in the hosts' namespaces.
    assert!(!fs::read_to_string("/proc/self/mounts")
        .unwrap()
        .contains(&*m.to_string()));
    let on = |h: usize| {
        fs::read_dir(volume.brick(h))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with('f'))
            .count()
    };
    assert_eq!(on(0) + on(1), 16);
    assert!(on(0) > 0 && on(1) > 0, "{} and {} files", on(0), on(1));
    assert_eq!(
        volume.brick_bytes(0) + volume.brick_bytes(1),
        (1..=16).map(|i: u64| 6 + u64::from(i >= 10)).sum::<u64>()
    );
    drop(volume);
    assert_eq!(leftovers(&mnt), Vec::<String>::new());
    assert!(!Path::new(STATE_ROOT).exists());
}

#[test]
fn a_replicated_volume_holds_every_file_on_both_hosts() {
    if !in_this_part() {
        return;
    }
    let Some(cluster) = netns::cluster_or_skip() else {
        return;
    };
    let Some(volume) = volume_or_skip(&cluster, Layout::Replicated) else {
        return;
    };
    let m = volume.mount_point().display().to_string();
    sh_on(
        &cluster,
        1,
        &format!("head -c 100000 /dev/zero > {m}/z; sync {m}/z"),
    );
    assert_eq!(volume.brick_bytes(0), 100_000);
    assert_eq!(volume.brick_bytes(1), 100_000);
    assert_eq!(
        sh_on(&cluster, 0, &format!("wc -c < {m}/z")).trim(),
        "100000"
    );
    let mnt = volume.mount_point();
    drop(volume);
    assert_eq!(leftovers(&mnt), Vec::<String>::new());
}
