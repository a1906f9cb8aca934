//! Plain-text and shell renderings of hosts and reports (JSON comes from `serde`).

use std::fmt::Write as _;

use crate::host::Host;
use crate::plan::Report;
use crate::resolve::Resolution;

/// The warning lines of a resolution, one per item that matched nothing usable on the
/// host (typos, another host's interface, a port that is down) or that can never be
/// selected (`lo`, `self`, shared memory), e.g.
/// `--enable: typo0 matches nothing on host h1 (it has: lo, eth0, ib0, mlx5_0:1)`.
/// Front ends print each on stderr with their own prefix (`xylem: `); with `--strict`
/// any line is an error. Empty when every item matched.
pub fn selection_warnings(res: &Resolution) -> Vec<String> {
    res.unmatched.iter().map(|u| u.warning()).collect()
}

/// Every warning of a plan: the items that matched nothing ([`selection_warnings`]), then
/// what the translation loses ([`crate::Translation::warnings`]). Front ends print each;
/// with `--strict` any is an error.
pub fn report_warnings(r: &Report) -> Vec<String> {
    let mut v = selection_warnings(&r.resolution);
    v.extend(r.translation.warnings.iter().cloned());
    v
}

/// A plain table of what the host has, as the resolver sees it.
pub fn host_table(host: &Host) -> String {
    let mut out = format!("host {}\n", host.hostname);
    let _ = writeln!(
        out,
        "{:<12} {:<9} {:<8} {:<11} {:<8} addresses",
        "netdev", "kind", "virtual", "driver", "state"
    );
    for n in &host.netdevs {
        let addrs: Vec<String> = n.addrs.iter().map(|a| a.to_string()).collect();
        let mut addr_text = addrs.join(" ");
        if let Some(m) = &n.master {
            addr_text = format!("{addr_text} (in {m})").trim().to_string();
        }
        let _ = writeln!(
            out,
            "{:<12} {:<9} {:<8} {:<11} {:<8} {}",
            n.name,
            n.kind.to_string(),
            if n.is_virtual { "yes" } else { "no" },
            n.driver.as_deref().unwrap_or("-"),
            n.operstate.as_deref().unwrap_or("-"),
            if addr_text.is_empty() {
                "-"
            } else {
                &addr_text
            }
        );
    }
    if !host.verbs.is_empty() {
        let _ = writeln!(
            out,
            "{:<12} {:<11} {:<11} {:<11} {:<11} netdevs",
            "verbs:port", "kind", "node_type", "link_layer", "state"
        );
        for v in &host.verbs {
            for p in &v.ports {
                let _ = writeln!(
                    out,
                    "{:<12} {:<11} {:<11} {:<11} {:<11} {}",
                    format!("{}:{}", v.name, p.number),
                    v.kind.to_string(),
                    v.node_type.as_deref().unwrap_or("-"),
                    p.link_layer.as_deref().unwrap_or("-"),
                    p.state.as_deref().unwrap_or("-"),
                    if p.netdevs.is_empty() {
                        "-".to_string()
                    } else {
                        p.netdevs.join(",")
                    }
                );
            }
        }
    }
    out
}

/// The dry run as text: used, left out, settings with reasons, notes.
pub fn report_text(r: &Report) -> String {
    let res = &r.resolution;
    let t = &r.translation;
    let mut out = format!(
        "host {}: {} {} for {}\n",
        res.hostname,
        res.mode.switch(),
        res.list,
        t.flavour
    );
    let _ = writeln!(out, "path: {} ({})", t.path, t.path_reason);
    let _ = writeln!(out, "use:");
    for u in &res.ip {
        if t.left_out.iter().any(|l| l.what == u.name) {
            continue;
        }
        let addrs: Vec<String> = u.addrs.iter().map(|a| a.to_string()).collect();
        let _ = writeln!(
            out,
            "  {} ({} {}): {}",
            u.name,
            u.kind,
            addrs.join(" "),
            u.reasons.join("; ")
        );
    }
    for p in &res.ports {
        if t.left_out.iter().any(|l| l.what == p.id()) {
            continue;
        }
        let _ = writeln!(out, "  {} ({}): {}", p.id(), p.kind, p.reasons.join("; "));
    }
    let _ = writeln!(out, "left out:");
    for l in res.left_out.iter().chain(t.left_out.iter()) {
        let _ = writeln!(out, "  {}: {}", l.what, l.reason);
    }
    for w in report_warnings(r) {
        let _ = writeln!(out, "warning: {w}");
    }
    let _ = writeln!(out, "settings:");
    for s in &t.settings {
        let (k, v) = s.env_pair();
        let kept = if r.already_set.contains(&k) {
            " [already set by the user to a value that means the same; kept]"
        } else {
            ""
        };
        let _ = writeln!(out, "  {k}={v}  # {}{kept}", s.reason);
    }
    let mca: Vec<String> = t
        .settings
        .iter()
        .filter_map(|s| s.mca_args())
        .map(|a| format!("{} {} {}", a[0], a[1], shell_quote(&a[2])))
        .collect();
    if !mca.is_empty() {
        let _ = writeln!(out, "as mpirun options: {}", mca.join(" "));
    }
    for n in &t.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// `export NAME='VALUE'` lines, one per setting, for `eval` in a shell.
pub fn report_sh(r: &Report) -> String {
    let mut out = format!(
        "# xylem net: host {} {} {} for {}\n",
        r.resolution.hostname,
        r.resolution.mode.switch(),
        r.resolution.list,
        r.translation.flavour
    );
    for s in &r.translation.settings {
        let (k, v) = s.env_pair();
        let _ = writeln!(out, "export {k}={}", shell_quote(&v));
    }
    out
}

/// Quotes a value for POSIX shells (single quotes; `'` written as `'\''`).
pub fn shell_quote(v: &str) -> String {
    if !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.,:/@^=+".contains(c))
    {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\'', "'\\''"))
    }
}
