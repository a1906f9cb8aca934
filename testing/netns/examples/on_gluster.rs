//! Runs an MPI program across the two namespace hosts on a GlusterFS volume spread over
//! them, then stops everything: b_eff_io on a small distributed file system, on one
//! machine (as root).
//!
//! ```text
//! cargo run -p netns --example on_gluster -- [--mpi NAME] [--replicated]
//!     [-o MOUNT_OPTION]... [--set KEY=VALUE]... -- PROGRAM ARGS...
//! ```
//!
//! `@MNT` in the program's arguments stands for the volume's mount point (the same path on
//! both hosts, each through its own FUSE client). `--set` is `gluster volume set` before
//! the mount. After the run, the bytes written to and read from each host's brick
//! (Gluster's profile counters) and those left in files on it are printed; the program's
//! exit status is this one's.

use netns::gluster::{Layout, Volume, VOLUME};
use netns::{Installation, HOSTS};

fn usage(why: &str) -> ! {
    eprintln!(
        "on_gluster: {why}\nusage: on_gluster [--mpi NAME] [--replicated] [-o MOUNT_OPTION]... \
         [--set KEY=VALUE]... -- PROGRAM ARGS...\n  NAME: one of {}",
        Installation::NAMES.join(", ")
    );
    std::process::exit(2)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut mpi = Installation::from_env();
    let mut layout = Layout::Distributed;
    let (mut options, mut sets) = (Vec::new(), Vec::new());
    let mut program = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--mpi" => {
                let name = args.next().unwrap_or_else(|| usage("--mpi needs a name"));
                mpi = Installation::from_name(&name)
                    .unwrap_or_else(|| usage(&format!("--mpi {name}: unknown installation")));
            }
            "--replicated" => layout = Layout::Replicated,
            "-o" => options.push(args.next().unwrap_or_else(|| usage("-o needs an option"))),
            "--set" => {
                let kv = args
                    .next()
                    .unwrap_or_else(|| usage("--set needs KEY=VALUE"));
                let (k, v) = kv
                    .split_once('=')
                    .unwrap_or_else(|| usage(&format!("--set {kv}: expected KEY=VALUE")));
                sets.push((k.to_string(), v.to_string()));
            }
            "--" => {
                program.extend(args.by_ref());
            }
            other => usage(&format!("unexpected argument '{other}'")),
        }
    }
    if program.is_empty() {
        usage("no program given after --");
    }
    let cluster = netns::Cluster::create().unwrap_or_else(|e| {
        eprintln!("on_gluster: cannot build the namespace hosts: {}", e.0);
        std::process::exit(1)
    });
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let code = run(&cluster, mpi, layout, &options, &sets, &program).unwrap_or_else(|e| {
        eprintln!("on_gluster: {e}");
        1
    });
    drop(cluster);
    std::process::exit(code)
}

/// Starts the volume, runs the program, prints the bricks' bytes; the volume is stopped
/// when this returns, whichever way.
fn run(
    cluster: &netns::Cluster,
    mpi: Installation,
    layout: Layout,
    options: &[&str],
    sets: &[(String, String)],
    program: &[String],
) -> Result<i32, String> {
    let sets: Vec<(&str, &str)> = sets.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let volume = Volume::start(cluster, layout, options, &sets)?;
    let mnt = volume.mount_point().display().to_string();
    let argv: Vec<String> = program.iter().map(|a| a.replace("@MNT", &mnt)).collect();
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    eprintln!(
        "on_gluster: {} volume '{VOLUME}' on {} (mounted at {mnt}), {}",
        match layout {
            Layout::Distributed => "distributed",
            Layout::Replicated => "replicated",
        },
        HOSTS.join(" and "),
        mpi.name()
    );
    volume.profile_start()?;
    let job = cluster.launch(mpi, &argv, &[]);
    print!("{}", job.stdout);
    eprint!("{}", job.stderr);
    // What reached each brick (Gluster's own counters), whether or not the program removed
    // its files; and what is left on it.
    let traffic = volume.brick_traffic()?;
    for (h, host) in HOSTS.iter().enumerate() {
        eprintln!(
            "on_gluster: brick on {host}: {} bytes written and {} bytes read through it \
             (gluster volume profile), {} bytes left in files",
            traffic[h].written,
            traffic[h].read,
            volume.brick_bytes(h)
        );
    }
    if job.timed_out {
        return Err("the job hit its time limit".into());
    }
    Ok(job.code.unwrap_or(1))
}
