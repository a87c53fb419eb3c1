//! `bench_core::vocab::size::parse_size` on any text: never panics, and agrees with
//! a 128-bit reference computation of digits x dd multiplier.
#![no_main]

use bench_core::vocab::size::{parse_size, SizeError};
use libfuzzer_sys::fuzz_target;

/// The multiplier of a dd suffix, written out independently of size.rs.
fn reference_unit(suffix: &str) -> Option<u128> {
    const K: u128 = 1024;
    const D: u128 = 1000;
    Some(match suffix {
        "" | "c" => 1,
        "w" => 2,
        "b" => 512,
        "k" | "K" | "KiB" | "kiB" => K,
        "kB" | "KB" => D,
        "M" | "MiB" => K.pow(2),
        "MB" => D.pow(2),
        "G" | "GiB" => K.pow(3),
        "GB" => D.pow(3),
        "T" | "TiB" => K.pow(4),
        "TB" => D.pow(4),
        "P" | "PiB" => K.pow(5),
        "PB" => D.pow(5),
        "E" | "EiB" => K.pow(6),
        "EB" => D.pow(6),
        _ => return None,
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let got = parse_size(s);
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let want = if s.is_empty() {
        Err(SizeError::Empty)
    } else if digits == 0 {
        Err(SizeError::NoNumber)
    } else {
        match reference_unit(&s[digits..]) {
            None => Err(SizeError::BadSuffix),
            Some(unit) => {
                // Saturating at u128::MAX keeps "too big" too big.
                let n = s[..digits]
                    .bytes()
                    .fold(0u128, |n, b| n.saturating_mul(10).saturating_add(u128::from(b - b'0')));
                u64::try_from(n.saturating_mul(unit)).map_err(|_| SizeError::Overflow)
            }
        }
    };
    assert_eq!(got, want, "parse_size({s:?})");
    if let Ok(n) = got {
        // A plain number of bytes reads back as itself.
        assert_eq!(parse_size(&n.to_string()), Ok(n));
    }
    // The message of any error is printable.
    if let Err(e) = got {
        assert!(!e.to_string().is_empty());
    }
});
