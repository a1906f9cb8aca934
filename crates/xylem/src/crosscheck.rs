//! The libraries' own view of the host beside sysfs: when `fi_info` (libfabric) or
//! `ucx_info` (UCX) is on PATH, the provider and devices a translation chose are looked
//! up in what they list, and a disagreement is a warning naming both sides — a provider
//! libfabric does not have here, a device UCX does not see. The tools on PATH may belong
//! to another build of the library than the one the job loads; the warning says which
//! tool answered.

use netsel::Report;

use netsel::stack::run_tool;

/// The value of one of the translation's settings.
fn setting<'r>(report: &'r Report, env: &str) -> Option<&'r str> {
    report
        .translation
        .settings
        .iter()
        .find(|s| s.env == env)
        .map(|s| s.value.as_str())
}

/// The names a comma list holds.
fn list(value: &str) -> Vec<&str> {
    value
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .collect()
}

/// The values of `key: VALUE` lines (`domain: mlx5_0`, `Device: eth0`), in order.
fn field_values<'t>(text: &'t str, key: &str) -> Vec<&'t str> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start_matches(|c: char| c == '#' || c.is_whitespace());
            l.strip_prefix(key)
                .and_then(|r| r.strip_prefix(':'))
                .map(str::trim)
        })
        .collect()
}

/// What `fi_info -p PROVIDER` and `ucx_info -d` say against the translation's choice,
/// one warning per disagreement (`host H: …`). Tools that are not on PATH say nothing.
pub fn cross_check(report: &Report) -> Vec<String> {
    let mut out = Vec::new();
    let host = &report.resolution.hostname;
    if let Some(provider) = setting(report, "FI_PROVIDER") {
        let core = provider.split(';').next().unwrap_or(provider);
        let devices: Vec<&str> = [
            "FI_CXI_DEVICE_NAME",
            "FI_VERBS_DEVICE_NAME",
            "FI_EFA_IFACE",
            "FI_TCP_IFACE",
        ]
        .iter()
        .filter_map(|k| setting(report, k))
        .flat_map(list)
        .collect();
        out.extend(check_fi_info(
            host,
            core,
            &devices,
            run_tool(&["fi_info", "-p", core]),
        ));
    }
    if let Some(devices) = setting(report, "UCX_NET_DEVICES") {
        out.extend(check_ucx_info(
            host,
            &list(devices),
            run_tool(&["ucx_info", "-d"]),
        ));
    }
    out
}

/// `fi_info -p PROVIDER`'s answer (`None`: not on PATH or no answer) against the
/// provider and devices chosen.
pub fn check_fi_info(
    host: &str,
    provider: &str,
    devices: &[&str],
    answer: Option<String>,
) -> Vec<String> {
    let Some(text) = answer else {
        return Vec::new();
    };
    let domains = field_values(&text, "domain");
    if domains.is_empty() {
        return vec![format!(
            "host {host}: fi_info lists no `{provider}` provider here, which the selection's settings name from sysfs: the job would find no provider (is this libfabric built with it, or is another on the library path?)"
        )];
    }
    let mut out = Vec::new();
    for d in devices {
        if !domains.iter().any(|x| x.starts_with(d)) {
            let mut seen: Vec<&str> = domains.clone();
            seen.dedup();
            out.push(format!(
                "host {host}: fi_info -p {provider} lists the domains {}, not {d}, which sysfs shows and the selection names",
                seen.join(", ")
            ));
        }
    }
    out
}

/// `ucx_info -d`'s answer against the devices chosen.
pub fn check_ucx_info(host: &str, devices: &[&str], answer: Option<String>) -> Vec<String> {
    let Some(text) = answer else {
        return Vec::new();
    };
    let mut seen = field_values(&text, "Device");
    seen.sort_unstable();
    seen.dedup();
    devices
        .iter()
        .filter(|d| !seen.contains(d))
        .map(|d| {
            format!(
                "host {host}: ucx_info -d lists no device {d} (it lists {}), which sysfs shows and UCX_NET_DEVICES names: UCX will not use it",
                seen.join(", ")
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const UCX: &str = "#      Transport: tcp\n#         Device: lo\n#      Transport: tcp\n#         Device: eth0\n#      Transport: rc_verbs\n#         Device: mlx5_0:1\n";

    #[test]
    fn ucx_info_devices_are_compared_with_the_list() {
        assert!(check_ucx_info("h", &["mlx5_0:1", "eth0"], Some(UCX.into())).is_empty());
        let w = check_ucx_info("h", &["mlx5_1:1"], Some(UCX.into()));
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with(
                "host h: ucx_info -d lists no device mlx5_1:1 (it lists eth0, lo, mlx5_0:1)"
            ),
            "{w:?}"
        );
        assert!(check_ucx_info("h", &["x"], None).is_empty());
    }

    #[test]
    fn fi_info_providers_and_domains_are_compared() {
        let tcp = "provider: tcp;ofi_rxm\n    fabric: 192.0.2.0/24\n    domain: eth0\n";
        assert!(check_fi_info("h", "tcp", &["eth0"], Some(tcp.into())).is_empty());
        let w = check_fi_info("h", "tcp", &["eth1"], Some(tcp.into()));
        assert!(w[0].contains("lists the domains eth0, not eth1"), "{w:?}");
        let w = check_fi_info("h", "cxi", &["cxi0"], Some("fi_getinfo: -61\n".into()));
        assert!(w[0].contains("no `cxi` provider"), "{w:?}");
        // A verbs prefix matches the domains it names.
        let verbs = "provider: verbs;ofi_rxm\n    domain: mlx5_0\nprovider: verbs;ofi_rxm\n    domain: mlx5_1\n";
        assert!(check_fi_info("h", "verbs", &["mlx5_"], Some(verbs.into())).is_empty());
    }
}
