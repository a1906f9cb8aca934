//! What this host offers, read from Linux.

/// `MemAvailable` from `/proc/meminfo`, in bytes, when it can be read.
pub fn memory_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo(&text, "MemAvailable:")
}

fn parse_meminfo(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_lines_are_read_in_bytes() {
        let text = "MemTotal:       24576000 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(
            parse_meminfo(text, "MemAvailable:"),
            Some(20_000_000 * 1024)
        );
        assert_eq!(parse_meminfo(text, "Missing:"), None);
    }
}
