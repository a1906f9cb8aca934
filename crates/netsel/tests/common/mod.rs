//! Shared helpers: fixture hosts and a plan shortcut.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use netsel::{plan, Discovery, Flavour, Host, Report, Selection};

/// The fixture tree of this name.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Discovers a fixture host.
pub fn host(name: &str) -> Host {
    Discovery::at(fixture(name))
        .discover()
        .unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// Parses `--enable LIST` / `--disable LIST`.
pub fn sel(args: &str) -> Selection {
    let (switch, list) = args.split_once(' ').expect("SWITCH LIST");
    match switch {
        "--enable" => Selection::from_switches(Some(list), None).unwrap(),
        "--disable" => Selection::from_switches(None, Some(list)).unwrap(),
        other => panic!("bad switch {other}"),
    }
}

/// Plans on a fixture with an empty environment.
pub fn plan_on(fixture_name: &str, args: &str, flavour: &str) -> Result<Report, netsel::Error> {
    let flavour: Flavour = flavour.parse().unwrap();
    plan(&sel(args), flavour, &host(fixture_name), &BTreeMap::new())
}

/// The settings of a successful plan as `NAME=VALUE` strings, in order.
pub fn settings(fixture_name: &str, args: &str, flavour: &str) -> Vec<String> {
    all_settings(fixture_name, args, flavour)
        .into_iter()
        .filter(|s| !is_one_sided_or_collective(s))
        .collect()
}

/// Open MPI's one-sided and collective component lists, which every Open MPI
/// translation ends with (tested on their own).
pub fn is_one_sided_or_collective(setting: &str) -> bool {
    setting.starts_with("OMPI_MCA_osc=") || setting.starts_with("OMPI_MCA_coll=")
}

/// Every setting of a plan, as `NAME=VALUE`.
pub fn all_settings(fixture_name: &str, args: &str, flavour: &str) -> Vec<String> {
    let r = plan_on(fixture_name, args, flavour)
        .unwrap_or_else(|e| panic!("{fixture_name} {args} {flavour}: {e}"));
    r.translation
        .settings
        .iter()
        .map(|s| {
            let (k, v) = s.env_pair();
            format!("{k}={v}")
        })
        .collect()
}

/// The error message of a failing plan.
pub fn error(fixture_name: &str, args: &str, flavour: &str) -> String {
    match plan_on(fixture_name, args, flavour) {
        Ok(r) => panic!(
            "{fixture_name} {args} {flavour} should fail, got {:?}",
            r.translation.settings
        ),
        Err(e) => e.to_string(),
    }
}

/// An environment from pairs.
pub fn environment(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
