//! fio's log-linear latency histogram (fio `stat.h`: FIO_IO_U_PLAT_BITS = 6,
//! FIO_IO_U_PLAT_VAL = 64, FIO_IO_U_PLAT_GROUP_NR = 29, 1856 buckets, values
//! in nanoseconds). Exact below 128 ns; each later power-of-two group is cut
//! into 64 equal buckets, so the relative error is at most 1/128 (~0.8%).
//! Values above the last group are clamped into the last bucket.

use alloc::vec::Vec;

use crate::result::Percentile;

/// Bits of each group that select the bucket.
pub const PLAT_BITS: u32 = 6;
/// Buckets per group.
pub const PLAT_VAL: u64 = 1 << PLAT_BITS;
/// Groups.
pub const PLAT_GROUP_NR: u32 = 29;
/// Buckets in all.
pub const PLAT_NR: usize = (PLAT_GROUP_NR as usize) * (PLAT_VAL as usize);

/// fio's default percentile list.
pub const FIO_PERCENTILES: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// A latency histogram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    buckets: Vec<u64>,
    count: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new()
    }
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Histogram {
        todo!()
    }
    /// The bucket index of a value (fio `plat_val_to_idx`).
    pub fn index(ns: u64) -> usize {
        todo!()
    }
    /// The representative value of a bucket: its midpoint (fio `plat_idx_to_val`).
    pub fn value(idx: usize) -> u64 {
        todo!()
    }
    /// Count one value.
    pub fn record(&mut self, ns: u64) {
        todo!()
    }
    /// Values counted.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// Add another histogram's counts.
    pub fn merge(&mut self, other: &Histogram) {
        todo!()
    }
    /// The p-th percentile (0 < p <= 100) as fio computes it: the value of the
    /// first bucket whose cumulative count reaches p% of the total; `None` if empty.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        todo!()
    }
    /// fio's default list of percentiles; empty if nothing was counted.
    pub fn percentiles(&self) -> Vec<Percentile> {
        todo!()
    }
}
