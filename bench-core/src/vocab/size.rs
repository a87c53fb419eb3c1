//! Sizes as users write them: `4k`, `1M`, `16KiB`, `1GB`, with GNU dd's
//! meanings: `k`/`K`/`KiB` = 1024, `kB` = 1000, `M`/`MiB` = 1024^2,
//! `MB` = 1000^2, and so on for G, T, P, E; `b` = 512, `c` = 1, `w` = 2;
//! a plain number is bytes.

use core::fmt;

/// Why a size string was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SizeError {
    /// Empty string.
    Empty,
    /// No digits at the start.
    NoNumber,
    /// The suffix is not one of dd's.
    BadSuffix,
    /// The value does not fit in 64 bits.
    Overflow,
}

impl fmt::Display for SizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SizeError::Empty => "empty size",
            SizeError::NoNumber => "a size must start with digits (no sign, no spaces)",
            SizeError::BadSuffix => {
                "unknown size suffix (dd's: c, w, b, k/K/KiB, kB/KB, M/MiB, MB, G/GiB, GB, T/TiB, TB, P/PiB, PB, E/EiB, EB; whole numbers only)"
            }
            SizeError::Overflow => "size does not fit in 64 bits (at most 16 EiB - 1 byte)",
        })
    }
}

/// Parse a size in bytes.
///
/// Digits first (no sign, no decimal point, no spaces anywhere), then at
/// most one dd suffix: none or `c` = 1, `w` = 2, `b` = 512; `k`, `K`, `KiB`
/// = 1024 and `kB`, `KB` = 1000; for `M`, `G`, `T`, `P`, `E` the bare letter
/// and `<letter>iB` are powers of 1024 and `<letter>B` powers of 1000.
/// The suffix is checked before the value, so `99999999999999999999q` is a
/// [`SizeError::BadSuffix`].
pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    if s.is_empty() {
        return Err(SizeError::Empty);
    }
    let digits_end = s.bytes().position(|b| !b.is_ascii_digit()).unwrap_or(s.len());
    if digits_end == 0 {
        return Err(SizeError::NoNumber);
    }
    let (digits, suffix) = s.split_at(digits_end);
    let unit = multiplier(suffix).ok_or(SizeError::BadSuffix)?;
    let mut n: u64 = 0;
    for b in digits.bytes() {
        n = n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(b - b'0')))
            .ok_or(SizeError::Overflow)?;
    }
    n.checked_mul(unit).ok_or(SizeError::Overflow)
}

/// The byte multiplier of a dd suffix; `None` if it is not one.
fn multiplier(suffix: &str) -> Option<u64> {
    match suffix {
        "" | "c" => return Some(1),
        "w" => return Some(2),
        "b" => return Some(512),
        _ => {}
    }
    let mut chars = suffix.chars();
    let power = match chars.next()? {
        'k' | 'K' => 1,
        'M' => 2,
        'G' => 3,
        'T' => 4,
        'P' => 5,
        'E' => 6,
        _ => return None,
    };
    let base: u64 = match chars.as_str() {
        "" | "iB" => 1024,
        "B" => 1000,
        _ => return None,
    };
    // 1024^6 = 2^60 and 1000^6 = 10^18 both fit in u64.
    base.checked_pow(power)
}

/// What a size error expects, for messages: `a size such as 4k, 1M, 16KiB, 1GB`.
pub const EXPECTED: &str = "a size such as 4096, 4k, 1M, 16KiB or 1GB (k, K, KiB = 1024; kB = 1000)";

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn accepted_sizes() {
        let cases: &[(&str, u64)] = &[
            ("0", 0),
            ("4096", 4096),
            ("007", 7),
            ("1c", 1),
            ("3w", 6),
            ("2b", 1024),
            ("4k", 4096),
            ("4K", 4096),
            ("16KiB", 16_384),
            ("1kB", 1000),
            ("1KB", 1000),
            ("1M", 1 << 20),
            ("1MiB", 1 << 20),
            ("1MB", 1_000_000),
            ("1G", 1 << 30),
            ("1GiB", 1 << 30),
            ("1GB", 1_000_000_000),
            ("2T", 2 << 40),
            ("2TiB", 2 << 40),
            ("2TB", 2_000_000_000_000),
            ("3P", 3 << 50),
            ("3PB", 3_000_000_000_000_000),
            ("15E", 15 << 60),
            ("15EiB", 15 << 60),
            ("18EB", 18_000_000_000_000_000_000),
            ("18446744073709551615", u64::MAX),
            ("18446744073709551615c", u64::MAX),
        ];
        for &(s, want) in cases {
            assert_eq!(parse_size(s), Ok(want), "{s:?}");
        }
    }

    #[test]
    fn refused_sizes() {
        use SizeError::*;
        let cases: &[(&str, SizeError)] = &[
            ("", Empty),
            ("k", NoNumber),
            ("KiB", NoNumber),
            ("-1", NoNumber),
            ("+1", NoNumber),
            (" 4k", NoNumber),
            ("4k ", BadSuffix),
            ("4 k", BadSuffix),
            ("4q", BadSuffix),
            ("1.5M", BadSuffix),
            ("4m", BadSuffix),
            ("4g", BadSuffix),
            ("4KIB", BadSuffix),
            ("4Kib", BadSuffix),
            ("4kk", BadSuffix),
            ("4MiBs", BadSuffix),
            ("4Z", BadSuffix),
            ("99999999999999999999q", BadSuffix),
            ("18446744073709551616", Overflow),
            ("99999999999999999999999", Overflow),
            ("16E", Overflow),
            ("16EiB", Overflow),
            ("19EB", Overflow),
            ("36028797018963968b", Overflow), // 2^55 * 512 = 2^64
        ];
        for (s, want) in cases {
            assert_eq!(parse_size(s).as_ref(), Err(want), "{s:?}");
        }
    }

    #[test]
    fn messages_say_what_was_wrong() {
        let cases = [
            (SizeError::Empty, "empty"),
            (SizeError::NoNumber, "digits"),
            (SizeError::BadSuffix, "suffix"),
            (SizeError::Overflow, "64 bits"),
        ];
        for (e, word) in cases {
            assert!(e.to_string().contains(word), "{e:?}: {e}");
        }
    }
}
