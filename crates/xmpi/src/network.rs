//! `--enable/--disable`: network selection applied to this process before `MPI_Init`,
//! for every benchmark of the suite.
//!
//! Each rank resolves the selection against its own host and sets the MPI library's
//! settings in its own environment, so that every component of the library honours the
//! one switch. A failure is not reported here: MPI starts with the environment
//! untouched, and the ranks agree on the failure and leave together (no rank leaves
//! alone before `MPI_Init`, which would leave the others hanging).

/// What the selection did on this host: a one-line summary for the report.
pub type Applied = Option<String>;

/// Applies the selection given by the `--enable` and `--disable` lists, if any, to this
/// process's environment. Call before `MPI_Init`, while the process has one thread.
/// The error is the complete message to print.
pub fn apply(enable: Option<&str>, disable: Option<&str>) -> Result<Applied, String> {
    if enable.is_none() && disable.is_none() {
        return Ok(None);
    }
    let selection =
        netsel::Selection::from_switches(enable, disable).map_err(|e| format!("ERROR {e}"))?;
    let version = crate::library_version();
    let flavour = netsel::Flavour::detect(&version).ok_or_else(|| {
        format!(
            "ERROR {}: cannot tell which MPI library this is from its version string ({}), \
             so there is no translation for it",
            switch(&selection),
            crate::library_summary()
        )
    })?;
    let report = netsel::apply_to_env(&selection, flavour).map_err(|e| format!("ERROR {e}"))?;
    let settings: Vec<String> = report
        .translation
        .settings
        .iter()
        .map(|s| {
            let (k, v) = s.env_pair();
            format!("{k}={v}")
        })
        .collect();
    Ok(Some(format!(
        "{} on {}: {}",
        switch(&selection),
        report.host.hostname,
        settings.join(" ")
    )))
}

fn switch(selection: &netsel::Selection) -> String {
    format!("{} {}", selection.mode.switch(), selection.list())
}
