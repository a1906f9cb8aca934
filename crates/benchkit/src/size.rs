//! Byte counts on the command line, one grammar for every option of every benchmark:
//! an optional sign, digits with an optional fraction, and an optional binary unit —
//! `k`, `m`, `g` or `t`, alone or followed by `b` or `ib` (`64M`, `64MB` and `64MiB` are
//! all 64 · 2^20 bytes) — or a bare `b`; any case. A fraction must come to whole bytes
//! (`1.5K` is 1536, `0.5` is refused). Each option then takes its range of the result:
//! [`positive_u64`] (b_eff_io's memory sizes) or [`signed_i64`] (sqmr's message sizes,
//! whose reference diagnoses a negative value itself).

/// The units and their factors, longest spelling first.
const UNITS: [(&str, u128); 13] = [
    ("kib", 1 << 10),
    ("mib", 1 << 20),
    ("gib", 1 << 30),
    ("tib", 1 << 40),
    ("kb", 1 << 10),
    ("mb", 1 << 20),
    ("gb", 1 << 30),
    ("tb", 1 << 40),
    ("k", 1 << 10),
    ("m", 1 << 20),
    ("g", 1 << 30),
    ("t", 1 << 40),
    ("b", 1),
];

/// Examples of the grammar, for messages.
pub const EXAMPLES: &str = "4096, 512k, 64M, 64MiB, 1.5G";

/// Parses `text` by the grammar of this module into a signed number of bytes. The
/// `Err` names `text` and what would be accepted.
pub fn parse(text: &str) -> Result<i128, String> {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    let (number, factor) = UNITS
        .iter()
        .find_map(|(unit, factor)| lower.strip_suffix(unit).map(|n| (n, *factor)))
        .unwrap_or((&lower, 1));
    let not_a_size =
        || format!("'{text}' is not a size (digits, optionally a fraction and a unit: {EXAMPLES})");
    let too_large = || format!("'{text}' is more bytes than this program can count");
    let (negative, unsigned) = match number.trim_end().strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (
            false,
            number
                .trim_end()
                .strip_prefix('+')
                .unwrap_or(number.trim_end()),
        ),
    };
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty())
        || !digits(whole)
        || !digits(fraction)
        || (unsigned.ends_with('.') && fraction.is_empty())
    {
        return Err(not_a_size());
    }
    // Exact arithmetic: the value times 10^fraction digits, then the unit, then back.
    let scale = 10u128
        .checked_pow(u32::try_from(fraction.len()).map_err(|_| too_large())?)
        .ok_or_else(too_large)?;
    let mantissa: u128 = format!("{whole}{fraction}")
        .trim_start_matches('0')
        .parse::<u128>()
        .or_else(|e| match e.kind() {
            std::num::IntErrorKind::Empty => Ok(0),
            _ => Err(too_large()),
        })?;
    let scaled = mantissa.checked_mul(factor).ok_or_else(too_large)?;
    if scaled % scale != 0 {
        return Err(format!(
            "'{text}' is not a whole number of bytes ({EXAMPLES} are)"
        ));
    }
    let bytes = i128::try_from(scaled / scale).map_err(|_| too_large())?;
    Ok(if negative { -bytes } else { bytes })
}

/// A size of at least one byte that fits 64 bits (b_eff_io's memory per process).
pub fn positive_u64(text: &str) -> Result<u64, String> {
    let bytes = parse(text)?;
    if bytes <= 0 {
        return Err(format!("'{text}' must be a positive size"));
    }
    u64::try_from(bytes).map_err(|_| {
        format!(
            "'{}' is more bytes than 64 bits can count; the largest accepted size is {} bytes",
            text.trim(),
            u64::MAX
        )
    })
}

/// A size that fits a signed 64-bit integer, negative ones included (sqmr passes them on
/// to its reference diagnostics).
pub fn signed_i64(text: &str) -> Result<i64, String> {
    let bytes = parse(text)?;
    i64::try_from(bytes).map_err(|_| format!("'{text}' does not fit in a 64-bit integer"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: i128 = 1 << 10;
    const M: i128 = 1 << 20;
    const G: i128 = 1 << 30;

    #[test]
    fn every_spelling_of_a_unit_is_binary() {
        for (text, bytes) in [
            ("4096", 4096),
            ("64K", 64 * K),
            ("64k", 64 * K),
            ("64KiB", 64 * K),
            ("64kb", 64 * K),
            ("4M", 4 * M),
            ("64MiB", 64 * M),
            ("64MB", 64 * M),
            ("1gib", G),
            ("2T", 2 * 1024 * G),
            ("1.5G", 3 * G / 2),
            ("1.5K", 1536),
            ("17", 17),
            ("17B", 17),
            ("+8", 8),
            ("-5", -5),
            ("-1M", -M),
            (" 2K ", 2 * K),
            ("0", 0),
            ("0.0", 0),
        ] {
            assert_eq!(parse(text), Ok(bytes), "{text}");
        }
    }

    #[test]
    fn what_is_not_a_size_says_what_would_be() {
        for text in [
            "", "K", "lots", "4X", "1e3", "0x10", "1.", ".", "--1", "1.5.2", "1 K M",
        ] {
            let e = parse(text).unwrap_err();
            assert!(
                e.contains(&format!("'{text}'")) && e.contains(EXAMPLES),
                "{text}: {e}"
            );
        }
        let e = parse("0.5").unwrap_err();
        assert!(e.contains("not a whole number of bytes"), "{e}");
        assert!(parse("0.1").is_err());
        assert!(parse("99999999999999999999999999999999999999999T").is_err());
    }

    #[test]
    fn each_range_refuses_what_it_cannot_hold() {
        assert_eq!(positive_u64("18446744073709551615"), Ok(u64::MAX));
        let e = positive_u64("18446744073709551616").unwrap_err();
        assert!(
            e.contains("largest accepted size is 18446744073709551615 bytes"),
            "{e}"
        );
        assert!(positive_u64("16777216T").is_err());
        assert_eq!(positive_u64("17179869183G"), Ok(17_179_869_183 << 30));
        assert!(positive_u64("16777216.5T").is_err());
        assert!(positive_u64("0")
            .unwrap_err()
            .contains("must be a positive size"));
        assert!(positive_u64("-1M").is_err());
        assert_eq!(signed_i64("-5"), Ok(-5));
        assert_eq!(signed_i64("9223372036854775807"), Ok(i64::MAX));
        let e = signed_i64("9999999999999G").unwrap_err();
        assert!(e.contains("does not fit in a 64-bit integer"), "{e}");
    }
}
