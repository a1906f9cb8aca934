//! Settings in the form the loaded libfabric reads (`netsel::versions`): lists of verbs
//! devices and netdevs from 2.6 (one name before, the other rails said lost),
//! `FI_EFA_IFACE` from 2.0 (before, every EFA device is used: said when the selection
//! leaves one out), `FI_OPX_PORT` from 2.1; and `FI_VERBS_IFACE`'s exact match of an
//! interface's name.

mod common;

use std::collections::BTreeMap;

use common::{host, sel};
use netsel::versions::{Libraries, Version};
use netsel::{plan_for, Flavour, Report};

fn with_libfabric(major: u32, minor: u32) -> Libraries {
    Libraries {
        libfabric: Some(Version::new(major, minor)),
    }
}

fn plan_with(fx: &str, args: &str, flavour: &str, libs: &Libraries) -> Report {
    let f: Flavour = flavour.parse().unwrap();
    plan_for(&sel(args), f, &host(fx), &BTreeMap::new(), libs)
        .unwrap_or_else(|e| panic!("{fx} {args} {flavour}: {e}"))
}

fn settings_of(r: &Report) -> Vec<String> {
    r.translation
        .settings
        .iter()
        .map(|s| format!("{}={}", s.env, s.value))
        .collect()
}

#[test]
fn four_rails_before_libfabric_2_6_keep_the_first_and_say_the_others() {
    let old = plan_with(
        "ib-4rail",
        "--enable ib",
        "mpich-ofi",
        &with_libfabric(1, 17),
    );
    let s = settings_of(&old);
    assert!(s.contains(&"FI_VERBS_DEVICE_NAME=mlx5_0".into()), "{s:?}");
    // The netdevs' common prefix `ib` takes them all and nothing else: every release.
    assert!(s.contains(&"FI_VERBS_IFACE=ib".into()), "{s:?}");
    let lost: Vec<&str> = old
        .translation
        .left_out
        .iter()
        .map(|l| l.what.as_str())
        .collect();
    assert_eq!(lost, ["mlx5_1", "mlx5_2", "mlx5_3"]);
    let w = &old.translation.warnings;
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(
        w[0].contains("mlx5_1 is not used: FI_VERBS_DEVICE_NAME holds one name in libfabric 1.17 (a list from 2.6)"),
        "{w:?}"
    );
    // 2.6 reads the list, without a note; unknown keeps the list with the note.
    let new = plan_with(
        "ib-4rail",
        "--enable ib",
        "mpich-ofi",
        &with_libfabric(2, 6),
    );
    assert!(settings_of(&new).contains(&"FI_VERBS_DEVICE_NAME=mlx5_0,mlx5_1,mlx5_2,mlx5_3".into()));
    assert!(
        new.translation.warnings.is_empty(),
        "{:?}",
        new.translation.warnings
    );
    assert!(!new.translation.notes.iter().any(|n| n.contains("from 2.6")));
    let unknown = plan_with("ib-4rail", "--enable ib", "mpich-ofi", &Libraries::UNKNOWN);
    assert!(unknown
        .translation
        .notes
        .iter()
        .any(|n| n.contains("from 2.6")));
    // Every device of the host: the common prefix, whatever the release.
    let all = plan_with(
        "ib-4rail",
        "--disable eth0",
        "mpich-ofi",
        &with_libfabric(1, 17),
    );
    assert!(settings_of(&all).contains(&"FI_VERBS_DEVICE_NAME=mlx5_".into()));
}

#[test]
fn efa_before_libfabric_2_0_sets_no_iface_and_says_what_is_used() {
    // Both devices selected: nothing is lost, a note says why nothing is set.
    let both = plan_with("efa", "--enable efa", "mpich-ofi", &with_libfabric(1, 20));
    assert_eq!(settings_of(&both), ["FI_PROVIDER=efa"]);
    assert!(
        both.translation.warnings.is_empty(),
        "{:?}",
        both.translation.warnings
    );
    assert!(
        both.translation
            .notes
            .iter()
            .any(|n| n.contains("has no FI_EFA_IFACE (from 2.0)")),
        "{:?}",
        both.translation.notes
    );
    // One of two: the other is used all the same, a loss said (refused under --strict).
    let one = plan_with("efa", "--enable efa_1", "mpich-ofi", &with_libfabric(1, 20));
    assert_eq!(settings_of(&one), ["FI_PROVIDER=efa"]);
    let w = &one.translation.warnings;
    assert!(
        w.len() == 1 && w[0].contains("uses every EFA device of the host, efa_0 too"),
        "{w:?}"
    );
    let new = plan_with("efa", "--enable efa_1", "mpich-ofi", &with_libfabric(2, 0));
    assert_eq!(settings_of(&new), ["FI_PROVIDER=efa", "FI_EFA_IFACE=efa_1"]);
}

#[test]
fn opx_before_libfabric_2_1_sets_no_port() {
    let old = plan_with(
        "opa",
        "--enable opa:opx",
        "mpich-ofi",
        &with_libfabric(2, 0),
    );
    assert_eq!(
        settings_of(&old),
        ["FI_PROVIDER=opx", "FI_OPX_HFI_SELECT=0"]
    );
    assert!(old
        .translation
        .notes
        .iter()
        .any(|n| n.contains("no FI_OPX_PORT (from 2.1)")));
    let new = plan_with(
        "opa",
        "--enable opa:opx",
        "mpich-ofi",
        &with_libfabric(2, 1),
    );
    assert!(settings_of(&new).contains(&"FI_OPX_PORT=1".into()));
}

#[test]
fn verbs_iface_takes_an_interface_of_that_very_name() {
    // ib0 exists, so FI_VERBS_IFACE=ib0 is ib0 alone, not its child ib0.8001: no warning.
    let unknown = plan_with("ib-pkey", "--enable ib0", "mpich-ofi", &Libraries::UNKNOWN);
    let w = netsel::format::report_warnings(&unknown);
    assert!(!w.iter().any(|w| w.contains("also takes")), "{w:?}");
    let r = plan_with(
        "ib-pkey",
        "--enable ib0",
        "mpich-ofi",
        &with_libfabric(1, 17),
    );
    assert!(settings_of(&r).contains(&"FI_VERBS_IFACE=ib0".into()));
}
