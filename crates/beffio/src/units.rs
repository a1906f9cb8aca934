//! Units: binary sizes for chunks, decimal MB/s for bandwidths (as the reference).

/// One kB = 1024 bytes (chunk sizes are binary).
pub const KB: u64 = 1024;
/// One MB = 1024² bytes (chunk sizes are binary).
pub const MB: u64 = 1024 * 1024;
/// One GB = 1024³ bytes.
pub const GB: u64 = 1024 * 1024 * 1024;
/// Bytes per element: every transfer moves 8-byte elements, so all sizes are multiples of 8.
pub const ELEMENT: u64 = 8;
/// Bandwidths are reported in MB/s with MB = 10^6 bytes, like the reference.
pub const BANDWIDTH_MB: f64 = 1e6;

/// Bandwidth in MB/s (10^6 B/s) for `bytes` moved in `seconds`; 0 when no time passed.
pub fn mb_per_s(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 / seconds / BANDWIDTH_MB
    } else {
        0.0
    }
}

/// A chunk size written the way the tables show it: `1 kB`, `32 kB+8`, `1 MB`, `3 MB`, `517 B`.
pub fn format_size(bytes: u64) -> String {
    for (unit, name) in [(GB, "GB"), (MB, "MB"), (KB, "kB")] {
        if bytes >= unit {
            match bytes % unit {
                0 => return format!("{} {}", bytes / unit, name),
                8 => return format!("{} {}+8", bytes / unit, name),
                _ => {}
            }
        }
    }
    format!("{bytes} B")
}

/// Parses a size of at least one byte by the grammar every xylem benchmark shares
/// ([`benchkit::size`]: `4096`, `512k`, `64M`, `64MiB`, `1.5G`).
pub fn parse_size(text: &str) -> Result<u64, String> {
    benchkit::size::positive_u64(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_format_like_the_tables() {
        assert_eq!(format_size(KB), "1 kB");
        assert_eq!(format_size(KB + 8), "1 kB+8");
        assert_eq!(format_size(32 * KB + 8), "32 kB+8");
        assert_eq!(format_size(MB + 8), "1 MB+8");
        assert_eq!(format_size(8 * MB), "8 MB");
        assert_eq!(format_size(GB), "1 GB");
        assert_eq!(format_size(1000), "1000 B");
    }

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("512k"), Ok(512 * KB));
        assert_eq!(parse_size("64M"), Ok(64 * MB));
        assert_eq!(parse_size("2GB"), Ok(2 * GB));
        assert_eq!(parse_size("1.5G"), Ok(3 * GB / 2));
        assert!(parse_size("0").is_err());
        assert!(parse_size("-1M").is_err());
        assert!(parse_size("lots").is_err());
        assert!(parse_size("0.1").is_err());
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        assert!(parse_size("18446744073709551616")
            .unwrap_err()
            .contains("largest accepted size is 18446744073709551615 bytes"));
        assert!(parse_size("16777216T").is_err());
        assert!(parse_size("17179869184G").is_err());
        assert_eq!(parse_size("17179869183G"), Ok(17_179_869_183 * GB));
        assert!(parse_size("1e30").is_err());
        assert!(parse_size("16777216.5T").is_err());
    }

    #[test]
    fn bandwidth_is_decimal_megabytes() {
        assert_eq!(mb_per_s(2_000_000, 1.0), 2.0);
        assert_eq!(mb_per_s(5, 0.0), 0.0);
    }
}
