//! Runs the MPI-IO checks as a job of 2 ranks under the launcher of the MPI that
//! `XYLEM_TEST_MPI` names (this binary relaunches itself).

use mpi::topology::Communicator;
use mpi::traits::*;
use mpiio::{AccessMode, Datatype, Error, File, Whence};
use std::path::{Path, PathBuf};

const CHILD: &str = "MPIIO_TEST_DIR";

/// One named check run on every rank.
type Check = (&'static str, fn(&mpi::topology::SimpleCommunicator, &Path));

fn main() {
    match std::env::var_os(CHILD) {
        Some(dir) => child(Path::new(&dir)),
        None => parent(),
    }
}

fn parent() {
    let dir = std::env::temp_dir().join(format!("mpiio-test.{}", std::process::id()));
    std::fs::create_dir(&dir).expect("create test dir");
    let exe = std::env::current_exe().unwrap();
    let _lock = mpitest::JobLock::acquire();
    let status = mpitest::command(
        mpitest::Installation::from_env(),
        2,
        &exe,
        &[],
        std::time::Duration::from_secs(120),
    )
    .env(CHILD, &dir)
    .status()
    .expect("run the launcher");
    let leftover: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    std::fs::remove_dir_all(&dir).ok();
    if !status.success() {
        println!("0 passed, 1 failed");
        panic!("mpirun failed: {status}");
    }
    assert!(leftover.is_empty(), "files left behind: {leftover:?}");
    println!("1 passed, 0 failed");
}

fn child(dir: &Path) {
    let universe = mpi::initialize().unwrap();
    let world = universe.world();
    let checks: [Check; 6] = [
        ("strided view with write_all/read_all", strided_view),
        ("ordered shared pointer", ordered),
        ("independent files and explicit offsets", independent),
        ("errors name the call and the file", errors),
        ("subarray and vector types", derived_types),
        ("hints given at open and read back", hints),
    ];
    for (name, check) in checks {
        check(&world, dir);
        world.barrier();
        if world.rank() == 0 {
            eprintln!("mpiio check ok: {name}");
        }
    }
}

fn path(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

fn strided_view(world: &mpi::topology::SimpleCommunicator, dir: &Path) {
    let (rank, n) = (world.rank() as u64, world.size() as u64);
    let p = path(dir, "strided");
    let words = 4usize; // a chunk of 4 u64
    let chunk = Datatype::contiguous(words, &Datatype::of::<u64>()).unwrap();
    let tiled = chunk.resized(0, (n as usize * words * 8) as isize).unwrap();
    let mut f = File::open(world, &p, AccessMode::CREATE | AccessMode::WRITE_ONLY).unwrap();
    f.set_view(
        (rank as usize * words * 8) as i64,
        &Datatype::of::<u64>(),
        &tiled,
    )
    .unwrap();
    let buf: Vec<u64> = (0..3 * words as u64).map(|i| rank * 1000 + i).collect();
    f.write_all(&buf).unwrap();
    f.sync().unwrap();
    assert_eq!(f.size().unwrap() as u64, 3 * n * words as u64 * 8);
    f.close().unwrap();
    // Read with the same view: each rank gets its own chunks back.
    let mut f = File::open(world, &p, AccessMode::READ_ONLY).unwrap();
    f.set_view(
        (rank as usize * words * 8) as i64,
        &Datatype::of::<u64>(),
        &tiled,
    )
    .unwrap();
    let mut back = vec![0u64; buf.len()];
    f.read_all(&mut back).unwrap();
    assert_eq!(back, buf);
    // Plain view: chunks alternate by rank.
    f.set_view(0, &Datatype::of::<u64>(), &Datatype::of::<u64>())
        .unwrap();
    let mut all = vec![0u64; 3 * n as usize * words];
    f.read_at(0, &mut all).unwrap();
    for (c, chunk) in all.chunks(words).enumerate() {
        let owner = c as u64 % n;
        let seq = c as u64 / n;
        assert_eq!(chunk[0], owner * 1000 + seq * words as u64, "chunk {c}");
    }
    f.close().unwrap();
    world.barrier();
    if rank == 0 {
        File::delete(&p).unwrap();
    }
}

fn ordered(world: &mpi::topology::SimpleCommunicator, dir: &Path) {
    let rank = world.rank() as u64;
    let p = path(dir, "ordered");
    let mut f = File::open(world, &p, AccessMode::CREATE | AccessMode::READ_WRITE).unwrap();
    for i in 0..3u64 {
        f.write_ordered(&[rank, i]).unwrap();
    }
    f.sync().unwrap();
    world.barrier();
    f.seek_shared(0, Whence::Set).unwrap();
    for i in 0..3u64 {
        let mut back = [0u64; 2];
        f.read_ordered(&mut back).unwrap();
        assert_eq!(back, [rank, i]);
    }
    assert_eq!(
        f.position_shared().unwrap(),
        3 * 2 * 8 * world.size() as i64
    );
    f.close().unwrap();
    world.barrier();
    if rank == 0 {
        File::delete(&p).unwrap();
    }
}

fn independent(world: &mpi::topology::SimpleCommunicator, dir: &Path) {
    let rank = world.rank();
    let own = mpi::topology::SimpleCommunicator::self_comm();
    let p = path(dir, &format!("own.{rank}"));
    let mut f = File::open(&own, &p, AccessMode::CREATE | AccessMode::WRITE_ONLY).unwrap();
    f.write(&[7u8; 100]).unwrap();
    f.write_at(200, &[9u8; 10]).unwrap();
    assert_eq!(f.position().unwrap(), 100);
    assert_eq!(f.size().unwrap(), 210);
    f.close().unwrap();
    let mut f = File::open(&own, &p, AccessMode::READ_ONLY).unwrap();
    let mut back = [0u8; 100];
    f.read(&mut back).unwrap();
    assert_eq!(back, [7u8; 100]);
    // Reading past the end is a short transfer.
    f.seek(205, Whence::Set).unwrap();
    let mut tail = [0u8; 10];
    match f.read(&mut tail) {
        Err(Error::Short {
            requested: 10,
            moved: 5,
            ..
        }) => {}
        other => panic!("expected a short read, got {other:?}"),
    }
    f.close().unwrap();
    File::delete(&p).unwrap();
}

fn errors(world: &mpi::topology::SimpleCommunicator, dir: &Path) {
    let p = path(dir, "missing/file");
    let err = File::open(world, &p, AccessMode::READ_ONLY).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("MPI_File_open"), "{text}");
    assert!(text.contains("missing/file"), "{text}");
    assert_eq!(err.file(), p.display().to_string());
    let err = File::delete(&path(dir, "never-there")).unwrap_err();
    assert!(err.to_string().contains("MPI_File_delete"), "{err}");
}

fn derived_types(_world: &mpi::topology::SimpleCommunicator, _dir: &Path) {
    let base = Datatype::of::<f64>();
    let sub = Datatype::subarray(&[4, 6], &[2, 3], &[1, 2], &base).unwrap();
    assert_eq!(sub.size().unwrap(), 6 * 8);
    assert_eq!(sub.extent().unwrap(), (0, 4 * 6 * 8));
    let vec = Datatype::vector(3, 2, 5, &base).unwrap();
    assert_eq!(vec.size().unwrap(), 6 * 8);
    assert_eq!(vec.extent().unwrap(), (0, (2 * 5 + 2) * 8));
    let r = vec.resized(0, 1000).unwrap();
    assert_eq!(r.extent().unwrap(), (0, 1000));
}

/// What the library reports for `key` among `info`.
fn reported<'a>(info: &'a [(String, String)], key: &str) -> Option<&'a str> {
    info.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// Hints at open, read back with `File::info`, and changed with `File::set_info`. What a
/// library reports differs: MPICH's ROMIO reports every hint it uses (its defaults too),
/// and takes `cb_buffer_size` and its own `romio_cb_write`; Open MPI 4.1 (ompio, which
/// reads `cb_buffer_size` as its buffer per aggregator) reports exactly the hints it was
/// given at open, known to it or not, and nothing without them. Other installations: a
/// key reported must carry the given value.
fn hints(world: &mpi::topology::SimpleCommunicator, dir: &Path) {
    let mpi = mpitest::Installation::from_env();
    let p = path(dir, "hinted");
    let mode = AccessMode::CREATE | AccessMode::WRITE_ONLY;
    let given: Vec<(&str, &str)> = if mpi.is_open_mpi() {
        vec![("cb_buffer_size", "1048576")]
    } else {
        vec![("cb_buffer_size", "1048576"), ("romio_cb_write", "enable")]
    };
    let mut f = File::open_with_info(world, &p, mode, &given).unwrap();
    let info = f.info();
    let strict = matches!(
        mpi,
        mpitest::Installation::OpenMpi4
            | mpitest::Installation::Mpich4
            | mpitest::Installation::Mpich5
    );
    for (key, value) in &given {
        match reported(&info, key) {
            Some(v) => assert_eq!(v, *value, "{key} in {info:?}"),
            None => assert!(!strict, "{} did not report {key}: {info:?}", mpi.name()),
        }
    }
    if mpi == mpitest::Installation::OpenMpi4 {
        // ompio echoes what it was given, and only that.
        let expected: Vec<(String, String)> = given
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(info, expected);
    }
    if !mpi.is_open_mpi() && strict {
        // ROMIO reports its own hints besides the given ones.
        assert!(reported(&info, "cb_nodes").is_some(), "{info:?}");
        assert!(info.len() > given.len(), "{info:?}");
    }
    f.write_all(&[1u64; 16]).unwrap();
    // Changed while open: ROMIO takes romio_cb_write then.
    f.set_info(&[("romio_cb_write", "disable")]).unwrap();
    if !mpi.is_open_mpi() && strict {
        assert_eq!(reported(&f.info(), "romio_cb_write"), Some("disable"));
    }
    f.write_all(&[2u64; 16]).unwrap();
    f.close().unwrap();
    // No hints: MPI_INFO_NULL; Open MPI 4.1 then reports nothing.
    let f = File::open(world, &p, AccessMode::READ_ONLY).unwrap();
    if mpi == mpitest::Installation::OpenMpi4 {
        assert!(f.info().is_empty(), "{:?}", f.info());
    }
    f.close().unwrap();
    // What MPI would refuse (and abort the job for) is an error here, on every rank.
    let long = "k".repeat(mpiio::MAX_INFO_KEY_LEN + 1);
    match File::open_with_info(world, &p, mode, &[(long.as_str(), "1")]) {
        Err(Error::Invalid { call, reason, .. }) => {
            assert_eq!(call, "MPI_File_open");
            assert!(reason.contains("MPI_MAX_INFO_KEY"), "{reason}");
        }
        other => panic!("expected an invalid hint, got {other:?}"),
    }
    world.barrier();
    if world.rank() == 0 {
        File::delete(&p).unwrap();
    }
}
