//! `xylem place sqmr ...` end to end.

use assert_cmd::Command;
use predicates::prelude::*;

fn place(args: &[&str]) -> assert_cmd::assert::Assert {
    Command::cargo_bin("xylem")
        .unwrap()
        .arg("place")
        .arg("sqmr")
        .args(args)
        .assert()
}

#[test]
fn srun_prints_a_script_with_the_host_file_and_the_plugin() {
    place(&[
        "--num_cores",
        "2",
        "--num_nbors",
        "2",
        "--core-node",
        "n1",
        "--nodes",
        "n1,n2,n3",
        "--launcher",
        "srun",
        "--mpi",
        "mpich",
    ])
    .success()
    .stdout(
        "# 6 ranks: 2 core ranks on n1, 4 neighbours (2 per core) over n2:2 n3:2\n\
         cat > hosts.txt <<'XYLEM:EOF'\nn1\nn1\nn2\nn3\nn2\nn3\nXYLEM:EOF\n\
         SLURM_HOSTFILE=hosts.txt srun -n 6 --distribution=arbitrary --mpi=pmi2 \
         sqmr --num_cores=2 --num_nbors=2\n",
    );
}

#[test]
fn out_writes_the_file_and_prints_the_command_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sub");
    place(&[
        "--num-cores",
        "8",
        "--num-nbors",
        "4",
        "--core-node",
        "n1",
        "--nodes",
        "n1,n2,n3,n4,n5",
        "--launcher",
        "mpirun",
        "--out",
        out.to_str().unwrap(),
        "--",
        "--max_msgsize",
        "64",
    ])
    .success()
    .stdout(predicate::str::contains(format!(
        "mpirun -n 40 --rankfile {}/rankfile.txt sqmr --num_cores=8 --num_nbors=4 --max_msgsize 64",
        out.display()
    )));
    let rankfile = std::fs::read_to_string(out.join("rankfile.txt")).unwrap();
    assert_eq!(rankfile.lines().count(), 40);
    assert!(rankfile.starts_with("rank 0=n1 slot=0\n"));
    assert!(rankfile.contains("rank 39=n5 slot=7\n"));
}

#[test]
fn hydra_gets_a_machine_file() {
    place(&[
        "--num_cores",
        "1",
        "--core-node",
        "b",
        "--nodes",
        "a,b",
        "--launcher",
        "mpiexec",
    ])
    .success()
    .stdout(predicate::str::contains(
        "cat > machinefile.txt <<'XYLEM:EOF'\nb:1\na:1\nXYLEM:EOF\nmpiexec -n 2 -f machinefile.txt",
    ));
}

#[test]
fn layouts_the_nodes_cannot_hold_fail_with_the_reason() {
    let base = ["--num_cores", "8", "--num_nbors", "4", "--launcher", "srun"];
    let cases: [(&[&str], &str); 4] = [
        (
            &["--core-node", "n9", "--nodes", "n1,n2"],
            "the core node n9 is not in the node list",
        ),
        (
            &["--core-node", "n1", "--nodes", "n1"],
            "at least one node besides the core node",
        ),
        (
            &[
                "--core-node",
                "n1",
                "--nodes",
                "n1,n2,n3",
                "--slots-per-node",
                "8",
            ],
            "give at least 4 nodes besides the core node",
        ),
        (
            &[
                "--core-node",
                "n1",
                "--nodes",
                "n1,n2",
                "--slots-per-node",
                "4",
            ],
            "raise --slots-per-node to 8",
        ),
    ];
    for (more, message) in cases {
        let mut args = base.to_vec();
        args.extend_from_slice(more);
        place(&args)
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(message));
    }
    place(&[
        "--num_cores",
        "1",
        "--core-node",
        "n1",
        "--nodes",
        "n1,n2",
        "--launcher",
        "mpirun",
        "--mpi",
        "mpich",
    ])
    .code(2)
    .stderr(predicate::str::contains("use --launcher mpiexec"));
}

#[test]
fn options_after_the_separator_are_parsed_by_sqmr_and_checked_against_the_placement() {
    let base = [
        "--num_cores",
        "2",
        "--num_nbors",
        "1",
        "--core-node",
        "n1",
        "--nodes",
        "n1,n2",
        "--launcher",
        "mpirun",
        "--",
    ];
    let with = |extra: &[&str]| {
        let mut v: Vec<&str> = base.to_vec();
        v.extend_from_slice(extra);
        place(&v)
    };
    with(&["--num_cores=3"]).code(2).stdout("").stderr(
        predicate::str::contains("--num_cores=3").and(predicate::str::contains(
            "the placement is for --num_cores 2",
        )),
    );
    with(&["-num_nbors=2"])
        .code(2)
        .stderr(predicate::str::contains("--num_nbors=2"));
    with(&["--max_msgsize", "12abc"])
        .code(2)
        .stderr(predicate::str::contains("do not parse").and(predicate::str::contains("12abc")));
    // The same values as the placement, and other options, pass through.
    with(&["--num_cores=2", "--max_msgsize", "64"])
        .success()
        .stdout(predicate::str::contains("--max_msgsize 64"));
}
