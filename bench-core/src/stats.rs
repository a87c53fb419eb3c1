//! Exact running statistics and per-interval samples.

use alloc::vec::Vec;

use crate::hist::Histogram;
use crate::result::{LatStats, Samples};
use crate::units::Nanos;

/// Exact min, max, mean and variance of a stream of values (Welford's
/// algorithm; merge by Chan et al.'s parallel formula).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Running {
    n: u64,
    min: u64,
    max: u64,
    mean: f64,
    m2: f64,
}

impl Running {
    /// Count one value.
    pub fn add(&mut self, v: u64) {
        todo!()
    }
    /// Combine with another stream's statistics.
    pub fn merge(&mut self, o: &Running) {
        todo!()
    }
    /// Values counted.
    pub fn count(&self) -> u64 {
        self.n
    }
    /// Smallest value, `None` if empty.
    pub fn min(&self) -> Option<u64> {
        todo!()
    }
    /// Largest value, `None` if empty.
    pub fn max(&self) -> Option<u64> {
        todo!()
    }
    /// Mean, `None` if empty.
    pub fn mean(&self) -> Option<f64> {
        todo!()
    }
    /// Population standard deviation, `None` if empty.
    pub fn stddev(&self) -> Option<f64> {
        todo!()
    }
}

/// Latency of one direction: exact running figures plus the histogram.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Latency {
    /// Exact figures.
    pub running: Running,
    /// Log-linear histogram for percentiles.
    pub hist: Histogram,
}

impl Latency {
    /// Count one latency.
    pub fn record(&mut self, ns: u64) {
        self.running.add(ns);
        self.hist.record(ns);
    }
    /// Combine.
    pub fn merge(&mut self, o: &Latency) {
        self.running.merge(&o.running);
        self.hist.merge(&o.hist);
    }
    /// The result form; `None` if nothing was counted.
    pub fn to_stats(&self) -> Option<LatStats> {
        todo!()
    }
}

/// Bytes and completions per interval since a start time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Buckets {
    /// Interval width.
    pub interval: Nanos,
    /// Bytes completed in interval i.
    pub bytes: Vec<u64>,
    /// Requests completed in interval i.
    pub ios: Vec<u64>,
}

impl Buckets {
    /// Empty buckets of the given width (must be > 0).
    pub fn new(interval: Nanos) -> Buckets {
        todo!()
    }
    /// Count a completion of `bytes` at `since_start` after the start.
    pub fn record(&mut self, since_start: Nanos, bytes: u64) {
        todo!()
    }
    /// Add another job's buckets interval by interval (same width).
    pub fn merge(&mut self, o: &Buckets) {
        todo!()
    }
    /// The result form, keeping only the intervals that ended before
    /// `runtime` (the partial last one is dropped), with their CV.
    pub fn to_samples(&self, runtime: Nanos) -> Samples {
        todo!()
    }
}

/// Coefficient of variation (population stddev / mean); `None` with fewer
/// than two values or a zero mean.
pub fn cv(values: &[f64]) -> Option<f64> {
    todo!()
}
