//! A GlusterFS volume across the cluster's hosts, for b_eff_io on a distributed file system.
//!
//! [`Volume::start`] runs one `glusterd` per host, each in its host's network namespace and
//! in a mount namespace of its own in which its state (`/var/lib/glusterd`), its sockets
//! (`/run`) and its logs (`/var/log/glusterfs`) are directories under [`STATE_ROOT`], so the
//! two daemons are two servers. The first probes the second, a volume of one brick per host
//! is created ([`Layout::Distributed`]: each file on one of the bricks; [`Layout::Replicated`]:
//! every file on both) and started, and every host mounts it with the FUSE client at the
//! same path ([`Volume::mount_point`]), in the host's own mount namespace: a rank on `xyh2`
//! goes through `xyh2`'s client, as on a real cluster.
//!
//! Everything runs under [`STATE_ROOT`], a fixed path, and every process it starts names
//! that path on its command line: dropping the volume, or the next start after a test that
//! was killed, stops exactly those processes and removes the directory. The mounts live in
//! the hosts' mount namespaces only and go with them.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{Cluster, CONTROL, HOSTS};
use mpitest::procs;

/// Where the volume's daemons keep their state, bricks and logs, and where it is mounted.
pub const STATE_ROOT: &str = "/tmp/xylem-gluster";
/// The volume's name.
pub const VOLUME: &str = "xylem";

/// Client mount options under which a write through one client's open file is what the
/// next reader on another client gets: no kernel page cache between the ranks and the file.
/// With [`COHERENT_SETTINGS`], what ROMIO's shared file pointer needs here.
pub const COHERENT_MOUNT: &[&str] = &["direct-io-mode=enable"];
/// Volume settings that go with [`COHERENT_MOUNT`]: the clients' write-behind, which
/// acknowledges a write before the servers have it, off.
pub const COHERENT_SETTINGS: &[(&str, &str)] = &[("performance.write-behind", "off")];

/// How the volume places files on the bricks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Each file on one brick, chosen by a hash of its name.
    Distributed,
    /// Every file on both bricks (`replica 2`).
    Replicated,
}

/// A started, mounted volume. Dropping it unmounts it and stops its daemons.
pub struct Volume<'c> {
    cluster: &'c Cluster,
    glusterd: Vec<Child>,
    mounted: Vec<bool>,
}

fn host_dir(host: usize) -> PathBuf {
    Path::new(STATE_ROOT).join(HOSTS[host])
}

fn address(host: usize) -> String {
    format!("{}.{}", CONTROL.subnet, host + 1)
}

fn output_text(
    what: &str,
    output: std::io::Result<std::process::Output>,
) -> Result<String, String> {
    let output = output.map_err(|e| format!("{what}: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "{what} failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout).trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// The processes whose command line names [`STATE_ROOT`] (glusterd, the bricks, the
/// clients), this one aside.
fn state_processes() -> Vec<u32> {
    procs::processes_where(|pid| {
        procs::cmdline(pid)
            .windows(STATE_ROOT.len())
            .any(|w| w == STATE_ROOT.as_bytes())
    })
}

/// Stops this module's processes: those that name [`STATE_ROOT`], and every process in the
/// mount namespaces of those that are not a host's own (the daemons' namespaces, where
/// glusterd also starts helpers that do not name it, such as the self-heal daemon of a
/// replicated volume). SIGTERM first, SIGKILL after 5 s.
fn stop_state_processes(cluster: &Cluster) {
    let ours = procs::mount_namespace(std::process::id());
    let hosts = cluster.host_mount_namespaces();
    let all = || -> Vec<u32> {
        let named = state_processes();
        let mut namespaces: Vec<PathBuf> = named
            .iter()
            .filter_map(|&p| procs::mount_namespace(p))
            .filter(|ns| Some(ns) != ours.as_ref() && !hosts.contains(ns))
            .collect();
        namespaces.sort();
        namespaces.dedup();
        let mut pids = named;
        for ns in &namespaces {
            pids.extend(procs::processes_in_mount_namespace(ns));
        }
        pids.sort_unstable();
        pids.dedup();
        pids
    };
    for pid in all() {
        procs::signal(pid, "TERM");
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && !all().is_empty() {
        std::thread::sleep(Duration::from_millis(50));
    }
    for pid in all() {
        procs::signal(pid, "KILL");
    }
}

impl<'c> Volume<'c> {
    /// Starts the daemons, creates the volume with `settings` (`gluster volume set`), starts
    /// it and mounts it on every host with the FUSE client's `options` (`-o`, e.g.
    /// `direct-io-mode=enable`); or says what failed, having stopped what it started.
    pub fn start(
        cluster: &'c Cluster,
        layout: Layout,
        options: &[&str],
        settings: &[(&str, &str)],
    ) -> Result<Self, String> {
        stop_state_processes(cluster);
        let _ = fs::remove_dir_all(STATE_ROOT);
        let mut volume = Volume {
            cluster,
            glusterd: Vec::new(),
            mounted: vec![false; HOSTS.len()],
        };
        volume.set_up(layout, options, settings)?;
        Ok(volume)
    }

    fn set_up(
        &mut self,
        layout: Layout,
        options: &[&str],
        settings: &[(&str, &str)],
    ) -> Result<(), String> {
        if Command::new("glusterd").arg("--version").output().is_err() {
            return Err("glusterd is not installed (Debian: glusterfs-server)".into());
        }
        for (host, name) in HOSTS.iter().enumerate() {
            let dir = host_dir(host);
            for sub in ["lib", "run", "log", "brick"] {
                fs::create_dir_all(dir.join(sub))
                    .map_err(|e| format!("{}: {e}", dir.join(sub).display()))?;
            }
            // The package's option groups and hook scripts, which `volume create` reads.
            output_text(
                "copying /var/lib/glusterd",
                Command::new("cp")
                    .args(["-a", "/var/lib/glusterd/."])
                    .arg(dir.join("lib"))
                    .output(),
            )?;
            let d = dir.display();
            let script = format!(
                "mount --bind {d}/lib /var/lib/glusterd && mount --bind {d}/run /run && \
                 mount --bind {d}/log /var/log/glusterfs && \
                 exec glusterd -N --log-level=INFO -l {d}/log/glusterd.log"
            );
            let child = self
                .cluster
                .on_host(
                    host,
                    &[
                        "unshare",
                        "--mount",
                        "--propagation",
                        "private",
                        "sh",
                        "-c",
                        &script,
                    ],
                )
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("starting glusterd on {}: {e}", name))?;
            self.glusterd.push(child);
        }
        for (host, name) in HOSTS.iter().enumerate() {
            self.wait_for("glusterd to answer", || {
                self.cli(host, &["peer", "status"]).is_ok()
            })
            .map_err(|e| format!("{e} on {}: {}", name, self.log_tail(host, "glusterd.log")))?;
        }
        self.cli(0, &["peer", "probe", &address(1)])?;
        self.wait_for("the peer to join", || {
            self.cli(0, &["peer", "status"])
                .is_ok_and(|s| s.contains("Peer in Cluster (Connected)"))
        })?;
        let mut create = vec!["volume".to_string(), "create".into(), VOLUME.into()];
        if layout == Layout::Replicated {
            create.extend(["replica".into(), "2".into()]);
        }
        create.extend(["transport".into(), "tcp".into()]);
        for host in 0..HOSTS.len() {
            create.push(format!("{}:{}", address(host), self.brick(host).display()));
        }
        // The bricks are directories of the machine's root file system, which Gluster
        // only accepts when told to.
        create.push("force".into());
        let create: Vec<&str> = create.iter().map(String::as_str).collect();
        self.cli(0, &create)?;
        // Both bricks lie on the machine's one file system, so its free space says nothing
        // about where a file should go; and DHT's default (`cluster.min-free-disk` 10 %)
        // sends every new file to the first brick once that file system is nine-tenths
        // full, as on a machine holding several builds: the "distributed" volume would then
        // hold everything on one host.
        let settings = [("cluster.min-free-disk", "0")].iter().chain(settings);
        for (key, value) in settings {
            self.cli(0, &["volume", "set", VOLUME, key, value])?;
        }
        self.cli(0, &["volume", "start", VOLUME])?;
        fs::create_dir_all(self.mount_point()).map_err(|e| e.to_string())?;
        self.mount(options)
    }

    fn mount(&mut self, options: &[&str]) -> Result<(), String> {
        for (host, name) in HOSTS.iter().enumerate() {
            let log = host_dir(host).join("log/client.log");
            let mut all = vec![format!("log-file={}", log.display())];
            all.extend(options.iter().map(|s| s.to_string()));
            let source = format!("{}:/{VOLUME}", address(host));
            let mnt = self.mount_point();
            let done = self
                .cluster
                .on_host(host, &["mount", "-t", "glusterfs", "-o", &all.join(",")])
                .arg(&source)
                .arg(&mnt)
                .output();
            output_text(&format!("mount {source} on {}", name), done)
                .map_err(|e| format!("{e}: {}", self.log_tail(host, "client.log")))?;
            self.mounted[host] = true;
            self.wait_for("the mount to show", || {
                self.cluster
                    .on_host(host, &["mountpoint", "-q"])
                    .arg(&mnt)
                    .status()
                    .is_ok_and(|s| s.success())
            })?;
        }
        // A client that has not reached every brick yet gives the directories made now a
        // layout without the missing ones: every file in them lands on the others.
        self.wait_for("every host's client to reach every brick", || {
            self.cli(0, &["volume", "status", VOLUME, "clients"])
                .is_ok_and(|s| every_brick_has_clients(&s, HOSTS.len()))
        })
    }

    fn unmount(&mut self) {
        let mnt = self.mount_point();
        for host in 0..HOSTS.len() {
            if !self.mounted[host] {
                continue;
            }
            let done = self.cluster.on_host(host, &["umount"]).arg(&mnt).output();
            if output_text("umount", done).is_err() {
                let _ = self
                    .cluster
                    .on_host(host, &["umount", "-l"])
                    .arg(&mnt)
                    .output();
            }
            self.mounted[host] = false;
        }
    }

    /// Mounts the volume again on every host, with the client options `options`.
    pub fn remount(&mut self, options: &[&str]) -> Result<(), String> {
        self.unmount();
        self.mount(options)
    }

    fn wait_for(&self, what: &str, mut ready: impl FnMut() -> bool) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if ready() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err(format!("timed out after 30 s waiting for {what}"))
    }

    /// Runs the `gluster` command line tool against host `host`'s daemon.
    pub fn cli(&self, host: usize, args: &[&str]) -> Result<String, String> {
        let pid = self.glusterd[host].id().to_string();
        let out = Command::new("nsenter")
            .args(["-t", &pid, "--mount", "--net", "gluster", "--mode=script"])
            .args(args)
            .output();
        output_text(&format!("gluster {}", args.join(" ")), out)
    }

    /// The path at which every host has the volume mounted.
    pub fn mount_point(&self) -> PathBuf {
        Path::new(STATE_ROOT).join("mnt")
    }

    /// Host `host`'s brick: the directory in which its server keeps its share of the files.
    pub fn brick(&self, host: usize) -> PathBuf {
        host_dir(host).join("brick")
    }

    /// The bytes of the files on host `host`'s brick (Gluster's own `.glusterfs` index,
    /// which holds hard links to the same files, left out).
    pub fn brick_bytes(&self, host: usize) -> u64 {
        self.brick_files(host).iter().map(|(_, len)| len).sum()
    }

    /// The files on host `host`'s brick, with their sizes, by path within the volume
    /// (Gluster's own `.glusterfs` index left out; DHT's zero-byte link files included).
    pub fn brick_files(&self, host: usize) -> Vec<(PathBuf, u64)> {
        fn walk(top: &Path, dir: &Path, found: &mut Vec<(PathBuf, u64)>) {
            let Ok(entries) = fs::read_dir(dir) else {
                return;
            };
            for e in entries.flatten() {
                if dir == top && e.file_name() == ".glusterfs" {
                    continue;
                }
                match e.file_type() {
                    Ok(t) if t.is_dir() => walk(top, &e.path(), found),
                    Ok(t) if t.is_file() => {
                        let len = e.metadata().map_or(0, |m| m.len());
                        let path = e.path();
                        found.push((path.strip_prefix(top).unwrap_or(&path).to_path_buf(), len));
                    }
                    _ => {}
                }
            }
        }
        let top = self.brick(host);
        let mut found = Vec::new();
        walk(&top, &top, &mut found);
        found.sort();
        found
    }

    /// Starts Gluster's per-brick I/O statistics (`gluster volume profile VOLUME start`),
    /// which [`Volume::brick_traffic`] reads: the bytes that reached each brick, whether
    /// or not the files are still there.
    pub fn profile_start(&self) -> Result<(), String> {
        self.cli(0, &["volume", "profile", VOLUME, "start"])
            .map(|_| ())
    }

    /// The bytes read and written on each host's brick since [`Volume::profile_start`],
    /// in host order (`gluster volume profile VOLUME info cumulative`).
    pub fn brick_traffic(&self) -> Result<Vec<BrickTraffic>, String> {
        let text = self.cli(0, &["volume", "profile", VOLUME, "info", "cumulative"])?;
        let bricks = parse_profile(&text);
        (0..HOSTS.len())
            .map(|h| {
                let brick = self.brick(h).display().to_string();
                bricks
                    .iter()
                    .find(|(name, _)| name.ends_with(&format!(":{brick}")))
                    .map(|(_, t)| *t)
                    .ok_or_else(|| format!("no brick {brick} in the volume's profile:\n{text}"))
            })
            .collect()
    }

    /// The last `lines` lines of one of host `host`'s logs (`glusterd.log`, `client.log`).
    pub fn log_tail(&self, host: usize, name: &str) -> String {
        let text = fs::read_to_string(host_dir(host).join("log").join(name)).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

/// What reached one brick: bytes read and written through it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BrickTraffic {
    /// Bytes read from the brick.
    pub read: u64,
    /// Bytes written to the brick.
    pub written: u64,
}

/// Whether `gluster volume status VOLUME clients` (`text`) shows every brick with at least
/// `clients` clients connected.
fn every_brick_has_clients(text: &str, clients: usize) -> bool {
    let counts: Vec<usize> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Clients connected"))
        .filter_map(|rest| rest.trim().trim_start_matches(':').trim().parse().ok())
        .collect();
    counts.len() == HOSTS.len() && counts.iter().all(|&n| n >= clients)
}

/// The bricks of `gluster volume profile … info cumulative`, each as `HOST:PATH` with its
/// cumulative `Data Read` and `Data Written`.
pub fn parse_profile(text: &str) -> Vec<(String, BrickTraffic)> {
    let mut out: Vec<(String, BrickTraffic)> = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix("Brick:") {
            out.push((name.trim().to_string(), BrickTraffic::default()));
            continue;
        }
        let bytes = |rest: &str| {
            rest.trim()
                .trim_end_matches("bytes")
                .trim()
                .parse::<u64>()
                .ok()
        };
        let Some((_, traffic)) = out.last_mut() else {
            continue;
        };
        if let Some(n) = line.strip_prefix("Data Read:").and_then(bytes) {
            traffic.read = n;
        } else if let Some(n) = line.strip_prefix("Data Written:").and_then(bytes) {
            traffic.written = n;
        }
    }
    out
}

impl Drop for Volume<'_> {
    fn drop(&mut self) {
        self.unmount();
        stop_state_processes(self.cluster);
        for child in &mut self.glusterd {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Err(e) = fs::remove_dir_all(STATE_ROOT) {
            eprintln!("netns::gluster: cannot remove {STATE_ROOT}: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_brick_short_of_clients_is_not_ready() {
        // The layout of `gluster volume status VOLUME clients` (GlusterFS 10).
        let status = |a: usize, b: usize| {
            format!(
                "Client connections for volume xylem\n\
                 ----------------------------------------------\n\
                 Brick : 10.10.0.1:/tmp/xylem-gluster/xyh1/brick\n\
                 Clients connected : {a}\n\
                 Hostname   BytesRead    BytesWritten       OpVersion\n\
                 10.10.0.1:49146   4736   3392   100000\n\
                 ----------------------------------------------\n\
                 Brick : 10.10.0.2:/tmp/xylem-gluster/xyh2/brick\n\
                 Clients connected : {b}\n\
                 ----------------------------------------------\n"
            )
        };
        assert!(every_brick_has_clients(&status(2, 2), 2));
        assert!(every_brick_has_clients(&status(3, 2), 2));
        assert!(!every_brick_has_clients(&status(2, 1), 2));
        assert!(!every_brick_has_clients(&status(0, 2), 2));
        assert!(!every_brick_has_clients("Volume xylem is not started", 2));
    }

    #[test]
    fn the_profile_gives_each_bricks_bytes() {
        // The layout of `gluster volume profile VOLUME info cumulative` (GlusterFS 10).
        let text = "\
Brick: xyh1:/tmp/xylem-gluster/xyh1/brick
-----------------------------------------
Cumulative Stats:
   Block Size:               4096b+                8192b+
 No. of Reads:                    0                     2
No. of Writes:                   12                     3
 %-latency   Avg-latency   Min-Latency   Max-Latency   No. of calls         Fop
 ---------   -----------   -----------   -----------   ------------        ----
      0.00       0.00 us       0.00 us       0.00 us              4     RELEASE

    Duration: 12 seconds
   Data Read: 163312632 bytes
Data Written: 323506548 bytes

Brick: xyh2:/tmp/xylem-gluster/xyh2/brick
-----------------------------------------
Cumulative Stats:
    Duration: 12 seconds
   Data Read: 0 bytes
Data Written: 4096 bytes
";
        let bricks = parse_profile(text);
        assert_eq!(bricks.len(), 2);
        assert_eq!(bricks[0].0, "xyh1:/tmp/xylem-gluster/xyh1/brick");
        assert_eq!(
            bricks[0].1,
            BrickTraffic {
                read: 163_312_632,
                written: 323_506_548
            }
        );
        assert_eq!(
            bricks[1].1,
            BrickTraffic {
                read: 0,
                written: 4096
            }
        );
        assert!(parse_profile("no bricks here").is_empty());
    }
}
