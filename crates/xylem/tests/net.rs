//! `xylem net ...` end to end against the netsel fixture sysfs trees.

use std::path::PathBuf;

use assert_cmd::Command;
use predicates::prelude::*;

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../netsel/tests/fixtures")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// `xylem` with a clean slate: no user MPI settings leak in from the test's environment.
fn xylem() -> Command {
    let mut c = Command::cargo_bin("xylem").unwrap();
    for (k, _) in std::env::vars() {
        if k.starts_with("OMPI_")
            || k.starts_with("UCX_")
            || k.starts_with("FI_")
            || k.starts_with("MPIR_")
            || k.starts_with("PMI_")
            || k == "XYLEM_MPI"
        {
            c.env_remove(k);
        }
    }
    c
}

#[test]
fn show_prints_a_table() {
    xylem()
        .args(["net", "show", "--sysfs", &fixture("roce")])
        .assert()
        .success()
        .stdout(predicate::str::contains("host node-roce"))
        .stdout(predicate::str::contains("ens1f0"))
        .stdout(predicate::str::contains("mlx5_0:1     roce"));
}

#[test]
fn show_json_is_valid_json() {
    let out = xylem()
        .args(["net", "show", "--json", "--sysfs", &fixture("opa")])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hostname"], "node-opa");
    assert_eq!(v["verbs"][0]["kind"], "omnipath");
}

#[test]
fn resolve_text_shows_use_left_out_and_settings() {
    xylem()
        .args([
            "net",
            "resolve",
            "--enable",
            "10.80.0.0/24",
            "--mpi",
            "openmpi-4.1",
        ])
        .args(["--sysfs", &fixture("bond")])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "bond0 (ethernet 10.80.0.10/24): named by --enable item `10.80.0.0/24`",
        ))
        .stdout(predicate::str::contains("docker0: not named by --enable"))
        .stdout(predicate::str::contains(
            "OMPI_MCA_btl_tcp_if_include=bond0",
        ))
        .stdout(predicate::str::contains("--mca btl_tcp_if_include bond0"));
}

#[test]
fn resolve_sh_is_export_lines() {
    // Disabling ib leaves eth0 and ib0 for TCP; FI_TCP_IFACE takes one of them.
    xylem()
        .args([
            "net",
            "resolve",
            "--disable",
            "ib",
            "--mpi",
            "mpich-ofi",
            "--format",
            "sh",
        ])
        .args(["--sysfs", &fixture("ib-ipoib")])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "export FI_PROVIDER=tcp\nexport FI_TCP_IFACE=eth0\n",
        ));
    xylem()
        .args(["net", "resolve", "--disable", "ib", "--mpi", "mpich-ofi"])
        .args(["--sysfs", &fixture("ib-ipoib")])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "ib0: FI_TCP_IFACE takes one interface",
        ));
    // Values with shell metacharacters are quoted.
    xylem()
        .args([
            "net",
            "resolve",
            "--enable",
            "ib",
            "--mpi",
            "mpich-ofi",
            "--format",
            "sh",
        ])
        .args(["--sysfs", &fixture("ib-ipoib")])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "export FI_PROVIDER='verbs;ofi_rxm'\n",
        ));
}

#[test]
fn resolve_json_carries_settings() {
    let out = xylem()
        .args([
            "net",
            "resolve",
            "--enable",
            "mlx5_0:1:ucx",
            "--mpi",
            "openmpi-5.0",
            "--format",
            "json",
        ])
        .args(["--sysfs", &fixture("ib-ipoib")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let settings = v["translation"]["settings"].as_array().unwrap();
    let net = settings
        .iter()
        .find(|s| s["knob"]["name"] == "UCX_NET_DEVICES")
        .unwrap();
    assert_eq!(net["value"], "mlx5_0:1,ib0");
    assert_eq!(net["env"], "UCX_NET_DEVICES");
    assert!(settings
        .iter()
        .any(|s| s["env"] == "OMPI_MCA_pml" && s["value"] == "ucx"));
    assert_eq!(v["resolution"]["hostname"], "node-ib");
}

#[test]
fn grammar_errors_exit_2_with_the_item() {
    xylem()
        .args([
            "net",
            "resolve",
            "--enable",
            "ib,,eth0",
            "--mpi",
            "openmpi-4.1",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("item 2 is empty"));
    xylem()
        .args([
            "net",
            "resolve",
            "--enable",
            "ib:fast",
            "--mpi",
            "openmpi-4.1",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown qualifier `fast`"))
        .stderr(predicate::str::contains("psm2"));
    xylem()
        .args([
            "net",
            "resolve",
            "--enable",
            "ib",
            "--disable",
            "eth",
            "--mpi",
            "openmpi-4.1",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("mutually exclusive"));
    xylem()
        .args([
            "net",
            "resolve",
            "--enable",
            "10.0.0.0/40",
            "--mpi",
            "openmpi-4.1",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("prefix length `40`"));
    xylem()
        .args(["net", "resolve", "--enable", "ib", "--mpi", "lam"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown MPI flavour"));
}

#[test]
fn no_network_is_an_error_naming_the_host() {
    xylem()
        .args(["net", "resolve", "--enable", "ib", "--mpi", "mpich"])
        .args(["--sysfs", &fixture("ipv6")])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "leaves host node-v6 with no network",
        ))
        .stderr(predicate::str::contains("eth0 (ethernet, fd00:90::11/64"));
}

#[test]
fn a_users_setting_is_a_conflict() {
    xylem()
        .env("OMPI_MCA_btl_tcp_if_include", "eth9")
        .args([
            "net",
            "resolve",
            "--enable",
            "bond0",
            "--mpi",
            "openmpi-4.1",
        ])
        .args(["--sysfs", &fixture("bond")])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("OMPI_MCA_btl_tcp_if_include=eth9"));
}

#[test]
fn exec_sets_the_environment_and_runs_the_program() {
    xylem()
        .args(["net", "exec", "--enable", "ib:tcp", "--mpi", "openmpi-4.1"])
        .args(["--sysfs", &fixture("ib-ipoib"), "--", "sh", "-c"])
        .arg("echo \"$OMPI_MCA_pml $OMPI_MCA_btl_tcp_if_include $1\"")
        .arg("sh")
        .arg("arg-one")
        .assert()
        .success()
        .stdout("ob1 ib0 arg-one\n");
}

#[test]
fn exec_flavour_from_the_environment_variable() {
    xylem()
        .env("XYLEM_MPI", "mpich-nemesis")
        .args([
            "net",
            "exec",
            "--enable",
            "eth1",
            "--sysfs",
            &fixture("ipv6"),
        ])
        .args([
            "--",
            "sh",
            "-c",
            "echo $MPIR_CVAR_NEMESIS_TCP_NETWORK_IFACE",
        ])
        .assert()
        .success()
        .stdout("eth1\n");
}

#[test]
fn exec_failures() {
    xylem()
        .args(["net", "exec", "--enable", "bond0", "--mpi", "openmpi-4.1"])
        .args(["--sysfs", &fixture("bond"), "--", "/nonexistent/program"])
        .assert()
        .code(127)
        .stderr(predicate::str::contains(
            "cannot execute /nonexistent/program",
        ));
    // A bad selection never runs the program.
    xylem()
        .args(["net", "exec", "--enable", "opa", "--mpi", "openmpi-4.1"])
        .args(["--sysfs", &fixture("bond"), "--", "sh", "-c", "echo ran"])
        .assert()
        .code(1)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("node-bond"));
}
