//! b_eff_io across the two namespace hosts on a GlusterFS volume (netns::gluster): every
//! rank on its own host's FUSE client, every pattern type, the files' markers checked on
//! read, the bytes found on both hosts' bricks. And what such a file system exposes: MPI-IO's
//! shared file pointer (type 1) where clients do not see each other's writes through open
//! files, a corrupted chunk written through one client and read through another, what
//! `--drop-cache` cannot reach, and a collective-buffering hint under ROMIO.

use std::path::Path;

use netns::gluster::{Layout, Volume, COHERENT_MOUNT, COHERENT_SETTINGS};
use netns::{Cluster, Family, Installation, Job};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_b_eff_io");

/// How a test's volume is set up.
#[derive(Clone, Copy, PartialEq)]
enum Clients {
    /// As GlusterFS does by default: the kernel's page cache, write-behind.
    Default,
    /// No kernel page cache (`direct-io-mode=enable`), write-behind on.
    DirectIo,
    /// No page cache and no write-behind: what ROMIO's shared file pointer needs.
    Coherent,
}

/// The volume for a test; `None` after saying why it cannot be had.
fn volume(cluster: &Cluster, layout: Layout, clients: Clients) -> Option<Volume<'_>> {
    let (options, settings) = match clients {
        Clients::Default => (&[][..], &[][..]),
        Clients::DirectIo => (COHERENT_MOUNT, &[][..]),
        Clients::Coherent => (COHERENT_MOUNT, COHERENT_SETTINGS),
    };
    match Volume::start(cluster, layout, options, settings) {
        Ok(v) => Some(v),
        Err(why) => {
            mpitest::unavailable(&format!("no GlusterFS volume across the hosts: {why}"));
            None
        }
    }
}

/// Runs `test` on a fresh volume across the namespace hosts (with the installation under
/// test and the mount point), or returns after saying why there is none.
fn on_volume(
    layout: Layout,
    clients: Clients,
    test: impl FnOnce(&Cluster, Installation, &Volume, &str),
) {
    let Some(cluster) = netns::cluster_or_skip() else {
        return;
    };
    let Some(volume) = volume(&cluster, layout, clients) else {
        return;
    };
    let mnt = volume.mount_point().display().to_string();
    test(&cluster, Installation::from_env(), &volume, &mnt);
}

fn run(cluster: &Cluster, mpi: Installation, args: &[&str]) -> Job {
    let mut argv = vec![BIN];
    argv.extend_from_slice(args);
    let job = cluster.launch(mpi, &argv, &[]);
    assert!(
        !job.timed_out,
        "b_eff_io {args:?} hit the time limit: {job:#?}"
    );
    job
}

fn json(path: &Path) -> Value {
    mpitest::read_document(path)
}

/// Every pattern type's weighted figure, per access method, is a number above zero.
fn assert_every_type_measured(doc: &Value) {
    for part in doc["partitions"].as_array().unwrap() {
        for access in ["write", "rewrite", "read"] {
            let types = part["types"][access].as_array().unwrap();
            assert_eq!(types.len(), 5, "{access}: {types:?}");
            for t in types {
                assert!(t["bytes"].as_u64().unwrap() > 0, "{access}: {t}");
                assert!(t["weighted_mb_s"].as_f64().unwrap() > 0.0, "{access}: {t}");
            }
        }
    }
}

fn short_args<'a>(mnt: &'a str, json: &'a str) -> Vec<&'a str> {
    vec![
        "-T",
        "4",
        "-p",
        mnt,
        "--memory-per-process",
        "16M",
        "--json",
        json,
    ]
}

#[test]
fn every_pattern_type_runs_across_hosts_with_its_bytes_checked_and_spread_over_both_bricks() {
    on_volume(
        Layout::Distributed,
        Clients::Coherent,
        |cluster, mpi, volume, mnt| {
            let out = cluster.dir().join("run.json");
            let mut args = short_args(mnt, out.to_str().unwrap());
            args.extend(["--keep", "--drop-cache"]);
            if mpi.family() == Family::Hydra {
                // ROMIO's shared pointer overlapped even on this volume in 1 of 9 runs of
                // bench-beffio-gluster.sh (MPICH 4, -T 20): type 1 with individual pointers.
                args.push("--noshared");
            }
            let job = run(cluster, mpi, &args);
            assert!(job.success(), "{job:#?}");
            let doc = json(&out);
            assert_every_type_measured(&doc);
            assert_eq!(
                doc["file_system"]["mount"]["fs_type"], "fuse.glusterfs",
                "{doc}"
            );
            assert_eq!(doc["file_system"]["locks"]["result"], "seen", "{doc}");
            assert_eq!(doc["file_system"]["visibility"]["result"], "seen", "{doc}");
            assert!(
                job.stdout.contains("file system       fuse.glusterfs"),
                "{}",
                job.stdout
            );
            // The FUSE client's caches are beyond --drop-cache, and the run says so.
            let limit = doc["drop_cache_limit"].as_str().unwrap_or_default();
            assert!(limit.contains("fuse.glusterfs client"), "{doc}");
            // Every read was checked against the markers (exit 0: no data errors); the files,
            // kept, lie on both hosts' bricks and add up to at least what the largest partition
            // wrote into its type 2 files alone.
            let (a, b) = (volume.brick_bytes(0), volume.brick_bytes(1));
            assert!(
                a > 0 && b > 0,
                "bricks hold {a} and {b} bytes: {:#?}",
                [volume.brick_files(0), volume.brick_files(1)]
            );
            let written: u64 = doc["partitions"][0]["types"]["write"][2]["bytes"]
                .as_u64()
                .unwrap();
            assert!(
                a + b >= written,
                "bricks hold {a} + {b} bytes, type 2 wrote {written}"
            );
            eprintln!(
                "bricks: {} {a} bytes, {} {b} bytes",
                netns::HOSTS[0],
                netns::HOSTS[1]
            );
        },
    );
}

#[test]
fn the_shared_file_pointer_on_a_caching_mount_works_under_open_mpi_and_under_romio_passes_or_stops_with_the_reason(
) {
    on_volume(
        Layout::Distributed,
        Clients::Default,
        |cluster, mpi, _, mnt| {
            let out = cluster.dir().join("cached.json");
            let job = run(cluster, mpi, &short_args(mnt, out.to_str().unwrap()));
            let header_says = "writes through open files NOT seen across ranks (rank 0 on xyh1)";
            assert!(job.stdout.contains(header_says), "{job:#?}");
            match mpi.family() {
                // Open MPI's lockedfile component works on it: every type, no data errors.
                Family::OpenMpi => {
                    assert!(job.success(), "{job:#?}");
                    assert_every_type_measured(&json(&out));
                }
                // ROMIO reads its pointer file through the client's page cache: overlapping
                // offsets, caught by the file's size after the write (exit 1) or by the markers on
                // read (exit 3), and said with what would work; then the run with --noshared.
                // It is a race: the overlap needs a pointer move that the other host's cache
                // hides, which happened in 5 of 5 runs under MPICH 4 here and in 1 of 2 under Intel
                // MPI. A run without one passes its checks like any other.
                Family::Hydra if job.success() => {
                    eprintln!(
                        "NOTE: no pointer move was hidden this time; the run passed its checks"
                    );
                    assert_every_type_measured(&json(&out));
                }
                Family::Hydra => {
                    let intel_255 = mpi == Installation::IntelMpi && job.code == Some(255);
                    assert!(matches!(job.code, Some(1 | 3)) || intel_255, "{job:#?}");
                    let own = mpitest::program_lines(&job.stderr);
                    assert!(
                        own.iter().any(
                            |l| l.contains("direct-io-mode=enable") && l.contains("--noshared")
                        ),
                        "{}",
                        job.stderr
                    );
                    let stopped = !out.exists() || json(&out)["complete"] == false;
                    if stopped {
                        // Stopped at the short file: at most the patterns measured before
                        // it, kept as the run went.
                        assert!(job.code == Some(1) || intel_255, "{job:#?}");
                    } else {
                        // Completed, the read found the overlaps (3, or Intel's 255 for it): the
                        // JSON counts the data errors, all of them in type 1.
                        assert!(job.code == Some(3) || intel_255, "{job:#?}");
                        let doc = json(&out);
                        let errors = |t: u64| -> u64 {
                            doc["partitions"][0]["access"]["read"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .filter(|p| p["type"] == t)
                                .map(|p| p["errors"].as_u64().unwrap())
                                .sum()
                        };
                        assert!(errors(1) > 0, "{doc}");
                        assert_eq!((0..5).map(errors).sum::<u64>(), errors(1), "{doc}");
                    }
                    // With individual pointers for type 1 the run completes, NOT VALID.
                    let noshared = cluster.dir().join("noshared.json");
                    let mut args = short_args(mnt, noshared.to_str().unwrap());
                    args.push("--noshared");
                    let job = run(cluster, mpi, &args);
                    assert!(job.success(), "{job:#?}");
                    let doc = json(&noshared);
                    assert_eq!(doc["valid"], false);
                    assert_every_type_measured(&doc);
                }
            }
        },
    );
}

#[test]
fn a_chunk_corrupted_on_the_volume_between_write_and_read_is_found() {
    on_volume(
        Layout::Distributed,
        Clients::Coherent,
        |cluster, mpi, _, mnt| {
            let out = cluster.dir().join("corrupt.json");
            let mut args = short_args(mnt, out.to_str().unwrap());
            args.push("--test-corrupt-file");
            let job = run(cluster, mpi, &args);
            // Rank 0 overwrites the head of its type 2 file through its host's client before the
            // read; the read finds it, and the run ends with the data-error code.
            netns::assert_exit_code(mpi, &job, 3);
            assert!(job.stderr.contains("data errors on read"), "{}", job.stderr);
        },
    );
}

#[test]
fn a_replicated_volume_holds_every_byte_on_both_hosts() {
    on_volume(
        Layout::Replicated,
        Clients::DirectIo,
        |cluster, mpi, volume, mnt| {
            let out = cluster.dir().join("replicated.json");
            let mut args = short_args(mnt, out.to_str().unwrap());
            args.push("--keep");
            if mpi.family() == Family::Hydra {
                // On a replicated volume ROMIO's shared file pointer has no working setting here:
                // with write-behind on, one client's pointer move reaches the other late and type
                // 1 overlaps; with it off, writes never return from the FUSE client (a rank blocked
                // in fuse_direct_io, GlusterFS 10.3, under either MPI). Individual pointers, NOT
                // VALID.
                args.push("--noshared");
            }
            let job = run(cluster, mpi, &args);
            assert!(job.success(), "{job:#?}");
            let doc = json(&out);
            assert_every_type_measured(&doc);
            eprintln!(
                "replicated volume, direct-io clients: writes under a lock {}",
                doc["file_system"]["visibility"]["result"]
            );
            let (a, b) = (volume.brick_bytes(0), volume.brick_bytes(1));
            assert!(a > 0, "{doc}");
            assert_eq!(a, b, "both bricks hold the same files");
        },
    );
}

#[test]
fn a_collective_buffering_hint_reaches_romio_on_the_volume() {
    let mpi = Installation::from_env();
    if mpi.family() != Family::Hydra {
        eprintln!(
            "NOTE: romio_cb_write is a ROMIO hint; {} uses ompio",
            mpi.name()
        );
        return;
    }
    on_volume(
        Layout::Distributed,
        Clients::Coherent,
        |cluster, mpi, _, mnt| {
            for value in ["enable", "disable"] {
                let out = cluster.dir().join(format!("cb-{value}.json"));
                let hint = format!("romio_cb_write={value}");
                let mut args = short_args(mnt, out.to_str().unwrap());
                // The hint is the subject, not ROMIO's shared file pointer, which overlapped
                // even on this volume now and then (exit 3, in a CI run too): individual
                // pointers for type 1, as in the test above.
                args.extend(["--hint", &hint, "--noshared"]);
                let job = run(cluster, mpi, &args);
                assert!(job.success(), "{job:#?}");
                let doc = json(&out);
                assert_eq!(doc["hints"]["romio_cb_write"], value, "{doc}");
                let reported = &doc["partitions"][0]["hints"][0]["reported"]["romio_cb_write"];
                assert_eq!(reported, value, "{doc}");
                let t0 = &doc["partitions"][0]["types"]["write"][0];
                eprintln!(
                    "romio_cb_write={value}: type 0 write {} MB/s, weighted {} MB/s",
                    t0["bandwidth_mb_s"], t0["weighted_mb_s"]
                );
            }
        },
    );
}
