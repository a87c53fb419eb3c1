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
        todo!()
    }
}

/// Parse a size in bytes.
pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    todo!()
}

/// What a size error expects, for messages: `a size such as 4k, 1M, 16KiB, 1GB`.
pub const EXPECTED: &str = "a size such as 4096, 4k, 1M, 16KiB or 1GB (k, K, KiB = 1024; kB = 1000)";
