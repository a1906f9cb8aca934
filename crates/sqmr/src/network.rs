//! `--enable/--disable`: network selection applied to this process before `MPI_Init`.
//!
//! Each rank resolves the selection against its own host and sets the MPI library's
//! settings in its own environment, so that every component of the library honours the
//! one switch. A failure is not reported here: MPI starts with the environment
//! untouched, and the ranks agree on the failure and leave together (no rank leaves
//! alone before `MPI_Init`, which would leave the others hanging).

use crate::options::Options;

/// What the selection did on this host: a one-line summary for the report.
pub type Applied = Option<String>;

/// Applies the selection of `options`, if any, to this process's environment. Call
/// before `MPI_Init`, while the process has one thread.
pub fn apply(options: &Options) -> Result<Applied, String> {
    if options.enable.is_none() && options.disable.is_none() {
        return Ok(None);
    }
    let selection =
        netsel::Selection::from_switches(options.enable.as_deref(), options.disable.as_deref())
            .map_err(|e| format!("ERROR {e}"))?;
    let version = xmpi::library_version();
    let flavour = netsel::Flavour::detect(&version).ok_or_else(|| {
        format!(
            "ERROR {}: cannot tell which MPI library this is from its version string ({}), \
             so there is no translation for it",
            switch(&selection),
            xmpi::library_summary()
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
