//! Hex digits as bytes: the digests and nonces of an attestation, read by
//! PID 1 (a verifier's nonce) and by `bootbench-report verify` alike.

use alloc::vec::Vec;

/// The bytes of `s`, two hex digits each (either case); `None` for an odd
/// length or a character that is not a hex digit.
pub fn decode(s: &str) -> Option<Vec<u8>> {
    // `from_str_radix` alone would take a sign: "+1" is not two digits.
    if s.len() % 2 != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_of_digits_or_nothing() {
        assert_eq!(decode("00aBff"), Some(alloc::vec![0x00, 0xab, 0xff]));
        assert_eq!(decode(""), Some(Vec::new()));
        assert_eq!(decode("abc"), None, "odd");
        assert_eq!(decode("0g"), None, "not a digit");
        assert_eq!(decode("+1"), None, "a sign is not a digit");
        assert_eq!(decode("é1"), None, "a character of two bytes");
    }
}
