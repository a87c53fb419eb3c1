//! Units as types: byte counts, nanoseconds and rates never mix by accident.
//!
//! Conversions widen explicitly; the few narrowing ones are checked.

use core::fmt;
use core::ops::{Add, AddAssign, Sub};
use serde::{Deserialize, Serialize};

/// A count of bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Bytes(pub u64);

/// A duration or a point on a monotonic clock, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Nanos(pub u64);

/// 10^6 bytes: the unit of "MB/s" in every rendering (GNU dd, CrystalDiskMark).
pub const MB: u64 = 1_000_000;
/// 2^20 bytes: the unit of "MiB/s" in every rendering (hdparm's "MB/sec").
pub const MIB: u64 = 1 << 20;
/// 2^10 bytes.
pub const KIB: u64 = 1 << 10;
/// 2^30 bytes.
pub const GIB: u64 = 1 << 30;
/// Nanoseconds per second.
pub const NS_PER_SEC: u64 = 1_000_000_000;

impl Nanos {
    /// Whole seconds.
    pub const fn from_secs(s: u64) -> Self {
        Nanos(s * NS_PER_SEC)
    }
    /// Whole milliseconds.
    pub const fn from_millis(ms: u64) -> Self {
        Nanos(ms * 1_000_000)
    }
    /// Seconds as a float, for rates.
    #[allow(clippy::cast_precision_loss)]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// `self - earlier`, or zero if the clock is behind.
    pub const fn saturating_sub(self, earlier: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(earlier.0))
    }
}

impl Bytes {
    /// The number of whole `unit`-sized blocks.
    pub const fn blocks(self, unit: u64) -> u64 {
        self.0 / unit
    }
    /// True if a multiple of `unit` (which must not be zero).
    pub const fn is_multiple_of(self, unit: u64) -> bool {
        self.0 % unit == 0
    }
}

impl Add for Nanos {
    type Output = Nanos;
    fn add(self, o: Nanos) -> Nanos {
        Nanos(self.0 + o.0)
    }
}
impl AddAssign for Nanos {
    fn add_assign(&mut self, o: Nanos) {
        self.0 += o.0;
    }
}
impl Sub for Nanos {
    type Output = Nanos;
    fn sub(self, o: Nanos) -> Nanos {
        Nanos(self.0 - o.0)
    }
}
impl Add for Bytes {
    type Output = Bytes;
    fn add(self, o: Bytes) -> Bytes {
        Bytes(self.0 + o.0)
    }
}
impl AddAssign for Bytes {
    fn add_assign(&mut self, o: Bytes) {
        self.0 += o.0;
    }
}

/// Bytes per second over an interval; `None` for an empty interval.
#[allow(clippy::cast_precision_loss)]
pub fn rate(bytes: Bytes, over: Nanos) -> Option<f64> {
    (over.0 > 0).then(|| bytes.0 as f64 * 1e9 / over.0 as f64)
}

/// Events per second over an interval; `None` for an empty interval.
#[allow(clippy::cast_precision_loss)]
pub fn per_sec(count: u64, over: Nanos) -> Option<f64> {
    (over.0 > 0).then(|| count as f64 * 1e9 / over.0 as f64)
}

impl fmt::Display for Bytes {
    /// Plain bytes with the unit: `4096 B`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} B", self.0)
    }
}

impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ns", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(rate(Bytes(MIB), Nanos::from_secs(1)), Some(1_048_576.0));
        assert_eq!(rate(Bytes(1), Nanos(0)), None);
        assert_eq!(per_sec(10, Nanos::from_millis(500)), Some(20.0));
    }
}
