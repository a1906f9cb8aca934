//! `apply_with` sets this process's environment (its own test binary: it changes the
//! process environment, which no other test here reads).

mod common;

use common::{fixture, sel};
use netsel::{apply_with, Discovery, Flavour};

#[test]
fn apply_sets_mca_parameters_in_env_form_and_refuses_conflicts() {
    let flavour: Flavour = "openmpi-4.1".parse().unwrap();
    std::env::remove_var("OMPI_MCA_btl_tcp_if_include");
    let report = apply_with(
        &sel("--enable eth"),
        flavour,
        &Discovery::at(fixture("bond")),
    )
    .unwrap();
    assert_eq!(std::env::var("OMPI_MCA_pml").unwrap(), "ob1");
    assert_eq!(
        std::env::var("OMPI_MCA_btl_tcp_if_include").unwrap(),
        "bond0"
    );
    assert_eq!(report.resolution.hostname, "node-bond");
    // Applying again is fine: every value is already ours.
    let again = apply_with(
        &sel("--enable eth"),
        flavour,
        &Discovery::at(fixture("bond")),
    )
    .unwrap();
    assert_eq!(again.already_set.len(), again.translation.settings.len());
    // A different selection now conflicts with what is set, and changes nothing.
    let e = apply_with(
        &sel("--enable docker0"),
        flavour,
        &Discovery::at(fixture("bond")),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("OMPI_MCA_btl_tcp_if_include=bond0 (the selection needs docker0)"),
        "{e}"
    );
    assert_eq!(
        std::env::var("OMPI_MCA_btl_tcp_if_include").unwrap(),
        "bond0"
    );
}
