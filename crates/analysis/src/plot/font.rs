//! The font of the plots' text, found at run time.
//!
//! plotters lays out (and for PNG rasterises) text with a TrueType font that must be
//! registered first. We ship none: `$XYLEM_FONT` names one, else the first of the usual
//! Debian/Fedora/Arch places of DejaVu Sans or Liberation Sans that exists
//! (`scripts/install-deps.sh` installs `fonts-dejavu-core`). SVG files name the generic
//! `sans-serif` family, so viewers use their own font.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::Error;

/// The font family name the plots use.
pub const FAMILY: &str = "sans-serif";

/// Where fonts are looked for, in order, after `$XYLEM_FONT`.
pub const CANDIDATES: [&str; 6] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
];

static REGISTERED: OnceLock<std::result::Result<PathBuf, String>> = OnceLock::new();

/// Registers the font once; every later call returns the first call's outcome.
pub fn ensure() -> Result<(), Error> {
    let outcome = REGISTERED.get_or_init(|| {
        let wanted = std::env::var_os("XYLEM_FONT").map(PathBuf::from);
        let path = find(wanted.as_deref(), &CANDIDATES)?;
        register(&path)?;
        Ok(path)
    });
    outcome
        .as_ref()
        .map(|_| ())
        .map_err(|e| Error::Font(e.clone()))
}

/// The font to use: `wanted` if given (it must exist), else the first candidate that does.
pub fn find(wanted: Option<&Path>, candidates: &[&str]) -> Result<PathBuf, String> {
    if let Some(path) = wanted {
        return if path.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(format!("XYLEM_FONT={} is not a file", path.display()))
        };
    }
    candidates
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "none of {} exists; install fonts-dejavu-core (scripts/install-deps.sh does) \
                 or set XYLEM_FONT to a .ttf file",
                candidates.join(", ")
            )
        })
}

fn register(path: &Path) -> Result<(), String> {
    let bytes =
        outfile::input::read(path, crate::load::MAX_INPUT_BYTES).map_err(|e| e.to_string())?;
    // plotters keeps fonts for the life of the process: the bytes live as long.
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    plotters::style::register_font(FAMILY, plotters::style::FontStyle::Normal, bytes)
        .map_err(|_| format!("{}: not a TrueType font plotters can read", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_font_is_explained() {
        let e = find(None, &["/nonexistent/a.ttf"]).unwrap_err();
        assert!(
            e.contains("fonts-dejavu-core") && e.contains("XYLEM_FONT"),
            "{e}"
        );
        let e = find(Some(Path::new("/nonexistent/b.ttf")), &[]).unwrap_err();
        assert!(e.contains("XYLEM_FONT=/nonexistent/b.ttf"), "{e}");
    }
}
