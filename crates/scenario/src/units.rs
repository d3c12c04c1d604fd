//! Quantities with units, written as `tc` and Mahimahi users write them: `"20ms"`, `"12Mbps"`,
//! `"375KB"`, `"250pkt"`.
//!
//! | kind | suffixes (case-insensitive) | engine unit |
//! |---|---|---|
//! | time | `ns`, `us`, `ms`, `s`, `min` | nanoseconds |
//! | rate | `bps`, `Kbps`, `Mbps`, `Gbps`, `kbit`, `mbit`, `gbit` (decimal, *bits* per second) | bit/s |
//! | size | `B`, `KB`, `MB`, `GB` (decimal), `KiB`, `MiB`, `GiB` (binary) | bytes |
//! | queue limit | a size, or `pkt` / `pkts` | [`QueueLimit`] |
//!
//! Note that, unlike `tc`, `Kbps` here means kilo*bits* per second (as the scenario format says);
//! `kbit` is accepted as the `tc` spelling of the same thing.
//!
//! Numbers may be fractional and may be separated from the unit by spaces (`"1.5 Mbps"`). They are
//! read as exact decimals (no binary floating point), multiplied by the unit and rounded to the
//! nearest engine unit, halves up. Negative numbers, a missing or unknown unit and values that do
//! not fit in 64 bits are rejected with a message that lists the accepted units.
//!
//! The parsers return `Err(message)`; the caller knows the key and wraps it in a
//! [`ScenarioError`](crate::ScenarioError).

use crate::spec::{Nanos, QueueLimit};

/// The kinds of quantity, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    Time,
    Rate,
    Size,
    QueueLimit,
}

impl Quantity {
    /// What a value of this kind looks like, for "expected ..." messages.
    pub fn expected(self) -> &'static str {
        match self {
            Quantity::Time => r#"a time like "20ms" (units: ns, us, ms, s, min)"#,
            Quantity::Rate => {
                r#"a rate like "20Mbps" (units: bps, Kbps, Mbps, Gbps, kbit, mbit, gbit)"#
            }
            Quantity::Size => r#"a size like "375KB" (units: B, KB, MB, GB, KiB, MiB, GiB)"#,
            Quantity::QueueLimit => {
                r#"a queue limit like "250pkt" or "375KB" (units: pkt, pkts, B, KB, MB, GB, KiB, MiB, GiB)"#
            }
        }
    }

    /// Unit suffixes (lower case) and how many engine units one of them is.
    fn units(self) -> &'static [(&'static str, u128)] {
        match self {
            Quantity::Time => TIME_UNITS,
            Quantity::Rate => RATE_UNITS,
            Quantity::Size => SIZE_UNITS,
            Quantity::QueueLimit => SIZE_UNITS,
        }
    }
}

/// Time suffixes in nanoseconds.
const TIME_UNITS: &[(&str, u128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("min", 60_000_000_000),
];

/// Rate suffixes in bits per second (decimal prefixes, as tc's `kbit`).
const RATE_UNITS: &[(&str, u128)] = &[
    ("bps", 1),
    ("kbps", 1_000),
    ("mbps", 1_000_000),
    ("gbps", 1_000_000_000),
    ("kbit", 1_000),
    ("mbit", 1_000_000),
    ("gbit", 1_000_000_000),
];

/// Size suffixes in bytes.
const SIZE_UNITS: &[(&str, u128)] = &[
    ("b", 1),
    ("kb", 1_000),
    ("mb", 1_000_000),
    ("gb", 1_000_000_000),
    ("kib", 1 << 10),
    ("mib", 1 << 20),
    ("gib", 1 << 30),
];

/// Packet suffixes of a queue limit.
const PACKET_UNITS: &[&str] = &["pkt", "pkts"];

/// Fractional digits kept when reading a number; further digits change a value by less than
/// 10^-18 of a unit and are dropped.
const MAX_FRACTION_DIGITS: u32 = 18;

/// Parses a time (`"20ms"`, `"1.5s"`, `"0s"`) into nanoseconds.
pub fn parse_time(text: &str) -> Result<Nanos, String> {
    parse_scaled(text, Quantity::Time)
}

/// Parses a rate (`"12Mbps"`, `"500kbit"`) into bits per second.
pub fn parse_rate(text: &str) -> Result<u64, String> {
    parse_scaled(text, Quantity::Rate)
}

/// Parses a size (`"375KB"`, `"64KiB"`) into bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    parse_scaled(text, Quantity::Size)
}

/// Parses a queue limit: packets (`"250pkt"`) or a size (`"375KB"`).
pub fn parse_queue_limit(text: &str) -> Result<QueueLimit, String> {
    let kind = Quantity::QueueLimit;
    let (number, unit) = split_number_unit(text, kind)?;
    let unit_lower = unit.to_ascii_lowercase();
    if PACKET_UNITS.contains(&unit_lower.as_str()) {
        let packets = scale(&number, 1).ok_or_else(|| too_large(text, kind))?;
        return u32::try_from(packets)
            .map(QueueLimit::Packets)
            .map_err(|_| too_large(text, kind));
    }
    let bytes = scale_with_unit(text, &number, &unit_lower, kind)?;
    Ok(QueueLimit::Bytes(bytes))
}

/// Reads `text` as a number followed by one of `kind`'s units, in engine units.
fn parse_scaled(text: &str, kind: Quantity) -> Result<u64, String> {
    let (number, unit) = split_number_unit(text, kind)?;
    scale_with_unit(text, &number, &unit.to_ascii_lowercase(), kind)
}

fn scale_with_unit(
    text: &str,
    number: &Decimal,
    unit_lower: &str,
    kind: Quantity,
) -> Result<u64, String> {
    let multiplier = kind
        .units()
        .iter()
        .find(|(name, _)| *name == unit_lower)
        .map(|&(_, m)| m)
        .ok_or_else(|| rejected(text, kind, ""))?;
    scale(number, multiplier).ok_or_else(|| too_large(text, kind))
}

/// An exact non-negative decimal: `mantissa / 10^scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Decimal {
    mantissa: u128,
    scale: u32,
}

/// Splits `"1.5 Mbps"` into the number 1.5 and the unit `"Mbps"`, rejecting an empty text, a
/// missing unit, a negative or malformed number.
fn split_number_unit(text: &str, kind: Quantity) -> Result<(Decimal, &str), String> {
    let trimmed = text.trim();
    let unit_start = trimmed
        .find(|c: char| c.is_alphabetic())
        .unwrap_or(trimmed.len());
    let (number_text, unit) = trimmed.split_at(unit_start);
    let number_text = number_text.trim_end();
    let unit = unit.trim();
    if let Some(positive) = number_text.strip_prefix('-') {
        if parse_decimal(positive) != Err(NumberError::Malformed) {
            return Err(rejected(text, kind, " (negative values are not accepted)"));
        }
    }
    match (parse_decimal(number_text), unit.is_empty()) {
        (Ok(number), false) => Ok((number, unit)),
        (Ok(_), true) => Err(rejected(text, kind, " (the unit is missing)")),
        (Err(NumberError::TooLarge), _) => Err(too_large(text, kind)),
        (Err(NumberError::Malformed), _) => Err(rejected(text, kind, "")),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NumberError {
    Malformed,
    TooLarge,
}

/// Reads `"12"`, `"1.5"`, `".5"`, `"5."` (and a leading `+`) exactly.
fn parse_decimal(text: &str) -> Result<Decimal, NumberError> {
    let text = text.strip_prefix('+').unwrap_or(text);
    let (int_part, frac_part) = text.split_once('.').unwrap_or((text, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int_part.is_empty() && frac_part.is_empty())
        || !all_digits(int_part)
        || !all_digits(frac_part)
    {
        return Err(NumberError::Malformed);
    }
    let push_digit = |mantissa: u128, b: u8| {
        mantissa
            .checked_mul(10)
            .and_then(|m| m.checked_add(u128::from(b - b'0')))
            .ok_or(NumberError::TooLarge)
    };
    let mut mantissa: u128 = 0;
    for b in int_part.bytes() {
        mantissa = push_digit(mantissa, b)?;
    }
    let mut scale = 0;
    for b in frac_part.bytes().take(MAX_FRACTION_DIGITS as usize) {
        mantissa = push_digit(mantissa, b)?;
        scale += 1;
    }
    Ok(Decimal { mantissa, scale })
}

/// `number × multiplier`, rounded to the nearest integer (halves up); `None` if it exceeds u64.
fn scale(number: &Decimal, multiplier: u128) -> Option<u64> {
    let divisor = 10u128.pow(number.scale);
    let product = number.mantissa.checked_mul(multiplier)?;
    let round_up = 2 * (product % divisor) >= divisor && divisor > 1;
    let rounded = product / divisor + u128::from(round_up);
    u64::try_from(rounded).ok()
}

fn rejected(text: &str, kind: Quantity, hint: &str) -> String {
    format!("expected {}, got {text:?}{hint}", kind.expected())
}

fn too_large(text: &str, kind: Quantity) -> String {
    rejected(text, kind, " (too large)")
}

/// Formats nanoseconds for messages, exactly: `1500000000` → `"1.5s"`, `20000000` → `"20ms"`.
pub fn format_time(ns: Nanos) -> String {
    format_exact(
        ns,
        &[
            (1_000_000_000, "s"),
            (1_000_000, "ms"),
            (1_000, "us"),
            (1, "ns"),
        ],
        "0s",
    )
}

/// Formats bits per second for messages, exactly: `12000000` → `"12Mbps"`.
pub fn format_rate(bps: u64) -> String {
    format_exact(
        bps,
        &[
            (1_000_000_000, "Gbps"),
            (1_000_000, "Mbps"),
            (1_000, "Kbps"),
            (1, "bps"),
        ],
        "0bps",
    )
}

/// Writes `value` in the largest unit it reaches, with as many decimals as needed to be exact.
fn format_exact(value: u64, units: &[(u64, &str)], zero: &str) -> String {
    let Some(&(size, name)) = units.iter().find(|(size, _)| value >= *size) else {
        return zero.to_string();
    };
    let whole = value / size;
    let rest = value % size;
    if rest == 0 {
        return format!("{whole}{name}");
    }
    let digits = size.ilog10() as usize;
    let fraction = format!("{rest:0digits$}");
    format!("{whole}.{}{name}", fraction.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(parse_time("20ms"), Ok(20_000_000));
        assert_eq!(parse_time("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_time("0s"), Ok(0));
        assert_eq!(parse_time("7ns"), Ok(7));
        assert_eq!(parse_time("250us"), Ok(250_000));
        assert_eq!(parse_time("2min"), Ok(120_000_000_000));
        assert_eq!(parse_time("0.1s"), Ok(100_000_000));
        assert_eq!(parse_time(".5ms"), Ok(500_000));
        assert_eq!(parse_time("5.ms"), Ok(5_000_000));
        assert_eq!(parse_time("+3s"), Ok(3_000_000_000));
    }

    #[test]
    fn suffixes_are_case_insensitive_and_may_follow_a_space() {
        assert_eq!(parse_time("20MS"), Ok(20_000_000));
        assert_eq!(parse_time("1 S"), Ok(1_000_000_000));
        assert_eq!(parse_time("  3 Min "), Ok(180_000_000_000));
        assert_eq!(parse_rate("12MBPS"), Ok(12_000_000));
        assert_eq!(parse_size("64kib"), Ok(65_536));
    }

    #[test]
    fn rounding_is_to_the_nearest_engine_unit() {
        assert_eq!(parse_time("1.4ns"), Ok(1));
        assert_eq!(parse_time("1.5ns"), Ok(2));
        assert_eq!(parse_time("0.0000000015s"), Ok(2));
        assert_eq!(parse_time("0.0000000014999s"), Ok(1));
        assert_eq!(parse_rate("1.0005Kbps"), Ok(1_001));
        assert_eq!(parse_size("1.2B"), Ok(1));
        assert_eq!(parse_size("0.0001KiB"), Ok(0));
        assert_eq!(parse_queue_limit("2.5pkt"), Ok(QueueLimit::Packets(3)));
        // Digits past the 18th decimal are dropped without harm.
        assert_eq!(parse_time("1.0000000000000000000001s"), Ok(1_000_000_000));
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("12Mbps"), Ok(12_000_000));
        assert_eq!(parse_rate("500kbit"), Ok(500_000));
        assert_eq!(parse_rate("1.5Mbps"), Ok(1_500_000));
        assert_eq!(parse_rate("10Gbps"), Ok(10_000_000_000));
        assert_eq!(parse_rate("1gbit"), Ok(1_000_000_000));
        assert_eq!(parse_rate("2mbit"), Ok(2_000_000));
        assert_eq!(parse_rate("64Kbps"), Ok(64_000));
        assert_eq!(parse_rate("300bps"), Ok(300));
        assert_eq!(parse_rate("0Mbps"), Ok(0));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("375KB"), Ok(375_000));
        assert_eq!(parse_size("10MB"), Ok(10_000_000));
        assert_eq!(parse_size("64KiB"), Ok(65_536));
        assert_eq!(parse_size("6MiB"), Ok(6_291_456));
        assert_eq!(parse_size("1GiB"), Ok(1_073_741_824));
        assert_eq!(parse_size("2GB"), Ok(2_000_000_000));
        assert_eq!(parse_size("1500B"), Ok(1500));
        assert_eq!(parse_size("1.5KB"), Ok(1500));
    }

    #[test]
    fn queue_limits() {
        assert_eq!(parse_queue_limit("250pkt"), Ok(QueueLimit::Packets(250)));
        assert_eq!(parse_queue_limit("1000pkts"), Ok(QueueLimit::Packets(1000)));
        assert_eq!(parse_queue_limit("10PKT"), Ok(QueueLimit::Packets(10)));
        assert_eq!(parse_queue_limit("375KB"), Ok(QueueLimit::Bytes(375_000)));
        assert_eq!(parse_queue_limit("64KiB"), Ok(QueueLimit::Bytes(65_536)));
        let err = parse_queue_limit("5000000000pkt").unwrap_err();
        assert!(err.contains("too large"), "{err}");
    }

    #[test]
    fn unknown_unit_lists_the_accepted_ones() {
        assert_eq!(
            parse_rate("20 furlongs").unwrap_err(),
            r#"expected a rate like "20Mbps" (units: bps, Kbps, Mbps, Gbps, kbit, mbit, gbit), got "20 furlongs""#
        );
        let err = parse_time("20m").unwrap_err();
        assert!(
            err.contains("units: ns, us, ms, s, min") && err.contains(r#""20m""#),
            "{err}"
        );
        let err = parse_size("20Mbps").unwrap_err();
        assert!(err.contains("KiB"), "{err}");
        let err = parse_queue_limit("20 packets").unwrap_err();
        assert!(err.contains("pkt, pkts"), "{err}");
    }

    #[test]
    fn bad_numbers_are_rejected() {
        for bad in [
            "", "  ", "ms", "abc", "NaN", "nanms", "infs", "1.2.3s", "1e3ms", "--1s", "1,5s", ".",
        ] {
            let err = parse_time(bad).unwrap_err();
            assert!(err.starts_with("expected a time like"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn negative_values_are_rejected() {
        let err = parse_rate("-5Mbps").unwrap_err();
        assert!(err.contains("negative values are not accepted"), "{err}");
        let err = parse_time("-0.5s").unwrap_err();
        assert!(err.contains("negative"), "{err}");
    }

    #[test]
    fn a_missing_unit_is_rejected() {
        let err = parse_time("20").unwrap_err();
        assert!(err.contains("unit is missing"), "{err}");
        let err = parse_rate("0").unwrap_err();
        assert!(err.contains("unit is missing"), "{err}");
    }

    #[test]
    fn values_past_u64_are_rejected() {
        assert_eq!(parse_rate("18446744073709551615bps"), Ok(u64::MAX));
        assert!(parse_rate("18446744073709551616bps")
            .unwrap_err()
            .contains("too large"));
        assert!(parse_time("600000000000min")
            .unwrap_err()
            .contains("too large"));
        assert!(parse_time(&"9".repeat(60)).is_err());
        assert!(parse_time(&format!("{}s", "9".repeat(60)))
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn formatting_is_exact() {
        assert_eq!(format_time(1_500_000_000), "1.5s");
        assert_eq!(format_time(20_000_000), "20ms");
        assert_eq!(format_time(0), "0s");
        assert_eq!(format_time(1_000_001), "1.000001ms");
        assert_eq!(format_time(7), "7ns");
        assert_eq!(format_rate(12_000_000), "12Mbps");
        assert_eq!(format_rate(1_500), "1.5Kbps");
        assert_eq!(format_rate(0), "0bps");
        for ns in [
            1,
            999,
            1_000,
            123_456_789,
            60_000_000_000,
            1_234_567_890_123,
        ] {
            assert_eq!(parse_time(&format_time(ns)), Ok(ns));
        }
    }
}
