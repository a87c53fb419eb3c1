//! Exact running statistics and per-interval samples.

use alloc::borrow::Cow;
use alloc::vec::Vec;

use crate::document::result::{LatStats, Samples};
use crate::engine::hist::Histogram;
use crate::vocab::units::Nanos;

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
    ///
    /// Welford (1962): `mean += d / n`, `m2 += d * (v - mean_new)`.
    #[allow(clippy::cast_precision_loss)] // latencies and counts far below 2^53
    pub fn add(&mut self, v: u64) {
        if self.n == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.n += 1;
        let x = v as f64;
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
    }

    /// Combine with another stream's statistics.
    ///
    /// Chan, Golub and LeVeque (1979): with `d = mean_b - mean_a`,
    /// `mean = mean_a + d * n_b / n`, `m2 = m2_a + m2_b + d^2 * n_a * n_b / n`.
    #[allow(clippy::cast_precision_loss)] // counts far below 2^53
    pub fn merge(&mut self, o: &Running) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = o.clone();
            return;
        }
        let na = self.n as f64;
        let nb = o.n as f64;
        let n = na + nb;
        let delta = o.mean - self.mean;
        self.mean += delta * nb / n;
        self.m2 += o.m2 + delta * delta * na * nb / n;
        self.n += o.n;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }

    /// Values counted.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// Smallest value, `None` if empty.
    pub fn min(&self) -> Option<u64> {
        (self.n > 0).then_some(self.min)
    }

    /// Largest value, `None` if empty.
    pub fn max(&self) -> Option<u64> {
        (self.n > 0).then_some(self.max)
    }

    /// Mean, `None` if empty.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then_some(self.mean)
    }

    /// Sample standard deviation (divisor n - 1), as fio's `calc_lat`
    /// (stat.c) computes it from the same Welford sums: `sqrt(S / (n - 1))`,
    /// 0 for a single value; `None` if empty.
    #[allow(clippy::cast_precision_loss)] // counts far below 2^53
    pub fn stddev(&self) -> Option<f64> {
        match self.n {
            0 => None,
            1 => Some(0.0),
            n => Some(libm::sqrt((self.m2 / (n - 1) as f64).max(0.0))),
        }
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
        Some(LatStats {
            min: self.running.min()?,
            max: self.running.max()?,
            mean: self.running.mean()?,
            stddev: self.running.stddev()?,
            percentiles: self.hist.percentiles(),
        })
    }
}

/// The most samples a step keeps per direction ([`Buckets`]): 10,000, an
/// hour at 360 ms or a day at 8.64 s. A step that would take more (no
/// runtime to bound it in advance, or its requests ran far past it) keeps
/// them at a wider interval: the given one doubled until they fit.
pub const MAX_SAMPLES: u64 = 10_000;

/// Bytes and completions per interval since a start time.
///
/// # Invariants
/// - `bytes` and `ios` hold at most [`MAX_SAMPLES`] intervals each: a
///   completion past them doubles `interval` (adjacent intervals summed)
///   until it falls inside, so memory is bounded by the count, whatever
///   the step's length or the interval asked for.
/// - `interval` is the width asked for times a power of two.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Buckets {
    /// Interval width.
    pub interval: Nanos,
    /// Bytes completed in interval i.
    pub bytes: Vec<u64>,
    /// Requests completed in interval i.
    pub ios: Vec<u64>,
}

/// Sum adjacent pairs of `v` (interval `2i` and `2i + 1` become `i`).
fn halve(v: &mut Vec<u64>) {
    let n = v.len().div_ceil(2);
    for i in 0..n {
        v[i] = v[2 * i] + v.get(2 * i + 1).copied().unwrap_or(0);
    }
    v.truncate(n);
}

impl Buckets {
    /// Empty buckets of the given width (must be > 0).
    ///
    /// # Panics
    /// If `interval` is zero.
    pub fn new(interval: Nanos) -> Buckets {
        assert!(interval.0 > 0, "sample interval must be > 0");
        Buckets {
            interval,
            bytes: Vec::new(),
            ios: Vec::new(),
        }
    }

    /// Double the interval width: adjacent intervals summed.
    fn widen(&mut self) {
        self.interval = Nanos(self.interval.0.saturating_mul(2));
        halve(&mut self.bytes);
        halve(&mut self.ios);
    }

    /// Widen until the width is at least `interval` (a power-of-two
    /// multiple of this one's: both grew from the same width).
    fn widen_to(&mut self, interval: Nanos) {
        while self.interval < interval {
            self.widen();
        }
    }

    /// Count a completion of `bytes` at `since_start` after the start.
    /// Interval `i` holds completions in `[i * interval, (i + 1) * interval)`;
    /// one past [`MAX_SAMPLES`] widens the intervals first.
    pub fn record(&mut self, since_start: Nanos, bytes: u64) {
        while since_start.0 / self.interval.0 >= MAX_SAMPLES {
            self.widen();
        }
        let i = usize::try_from(since_start.0 / self.interval.0).unwrap_or(usize::MAX);
        if self.bytes.len() <= i {
            self.bytes.resize(i + 1, 0);
        }
        if self.ios.len() <= i {
            self.ios.resize(i + 1, 0);
        }
        self.bytes[i] += bytes;
        self.ios[i] += 1;
    }

    /// Add another job's buckets interval by interval, at the wider of
    /// the two widths (both are the step's width times a power of two).
    pub fn merge(&mut self, o: &Buckets) {
        self.widen_to(o.interval);
        let mut o = Cow::Borrowed(o);
        if o.interval < self.interval {
            o.to_mut().widen_to(self.interval);
        }
        add_by_index(&mut self.bytes, &o.bytes);
        add_by_index(&mut self.ios, &o.ios);
    }

    /// The result form, keeping only the intervals that ended before
    /// `runtime` (the partial last one is dropped), with their CV.
    ///
    /// There are `floor(runtime / interval)` samples: interval `i` is kept if
    /// `(i + 1) * interval <= runtime`; intervals without completions count
    /// as zero. Rates are `bytes * 1e9 / interval_ns` and `ios * 1e9 / interval_ns`.
    /// A runtime of more than [`MAX_SAMPLES`] intervals (requests that ran
    /// long past the last completion counted) widens them first, so the
    /// samples never number more than that.
    #[allow(clippy::cast_precision_loss)] // byte counts per interval far below 2^53
    pub fn to_samples(&self, runtime: Nanos) -> Samples {
        let mut b = Cow::Borrowed(self);
        while runtime.0 / b.interval.0 > MAX_SAMPLES {
            b.to_mut().widen();
        }
        let w = b.interval.0;
        let n = runtime
            .0
            .checked_div(w)
            .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
        let per_sec = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0) as f64 * 1e9 / w as f64;
        let bytes_per_sec: Vec<f64> = (0..n).map(|i| per_sec(&b.bytes, i)).collect();
        let iops: Vec<f64> = (0..n).map(|i| per_sec(&b.ios, i)).collect();
        let cv = cv(&bytes_per_sec);
        Samples {
            interval_ns: w,
            bytes_per_sec,
            iops,
            cv,
        }
    }
}

fn add_by_index(a: &mut Vec<u64>, b: &[u64]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x += *y;
    }
}

/// Coefficient of variation (sample stddev, divisor n - 1 as fio's
/// `calc_lat`, / mean); `None` with fewer than two values or a zero mean.
#[allow(clippy::cast_precision_loss)] // sample counts far below 2^53
pub fn cv(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if mean == 0.0 {
        return None;
    }
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    Some(libm::sqrt(var) / mean)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::result::Percentile;
    use crate::vocab::rng::Rng;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(f64::MIN_POSITIVE)
    }

    // The roots of stddev and cv come from `libm::sqrt` (core has no
    // `f64::sqrt` without std). These tests hold it to what the figures in
    // the result documents rely on: IEEE 754's correctly rounded root.

    #[test]
    fn sqrt_of_known_squares_is_exact() {
        let cases = [
            (0.0, 0.0),
            (1.0, 1.0),
            (4.0, 2.0),
            (9.0, 3.0),
            (0.25, 0.5),
            (1e10, 1e5),
            (144.0, 12.0),
            (1e-300, 1e-150),
        ];
        for (x, r) in cases {
            assert_eq!(libm::sqrt(x), r, "sqrt({x})");
        }
        for k in 1..=200_000_u32 {
            let r = f64::from(k);
            assert_eq!(libm::sqrt(r * r), r, "sqrt({k}^2)");
        }
    }

    #[test]
    fn sqrt_special_values() {
        assert!(libm::sqrt(-1.0).is_nan());
        assert!(libm::sqrt(f64::NAN).is_nan());
        assert_eq!(libm::sqrt(f64::INFINITY), f64::INFINITY);
        assert_eq!(libm::sqrt(-0.0), 0.0);
    }

    #[test]
    fn sqrt_matches_std_correctly_rounded() {
        // The tests run with std, whose sqrt is correctly rounded (IEEE 754).
        assert_eq!(libm::sqrt(2.0), core::f64::consts::SQRT_2);
        let mut r = Rng::new(17);
        for _ in 0..100_000 {
            // Random finite positive doubles across the whole exponent range,
            // subnormals included.
            let x = f64::from_bits(r.below(0x7FF0_0000_0000_0000 - 1) + 1);
            assert_eq!(libm::sqrt(x).to_bits(), x.sqrt().to_bits(), "sqrt({x:e})");
        }
        for x in [
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::MIN_POSITIVE / 3.0,
            5e-324,
            1e-310,
            1e300,
        ] {
            assert_eq!(libm::sqrt(x).to_bits(), x.sqrt().to_bits(), "sqrt({x:e})");
        }
    }

    #[test]
    fn running_hand_computed() {
        // The textbook example: mean 5, population stddev 2, so the sample
        // stddev (fio's, n - 1) is sqrt(32 / 7).
        let mut r = Running::default();
        for v in [2, 4, 4, 4, 5, 5, 7, 9] {
            r.add(v);
        }
        assert_eq!(r.count(), 8);
        assert_eq!(r.min(), Some(2));
        assert_eq!(r.max(), Some(9));
        assert_eq!(r.mean(), Some(5.0));
        assert_eq!(r.stddev(), Some(libm::sqrt(32.0 / 7.0)));

        let mut one = Running::default();
        one.add(42);
        assert_eq!(
            (one.min(), one.max(), one.mean(), one.stddev()),
            (Some(42), Some(42), Some(42.0), Some(0.0))
        );
    }

    #[test]
    fn running_empty() {
        let r = Running::default();
        assert_eq!(
            (r.count(), r.min(), r.max(), r.mean(), r.stddev()),
            (0, None, None, None, None)
        );
    }

    #[test]
    fn running_merge_equals_concatenation() {
        let mut rng = Rng::new(23);
        let vals: Vec<u64> = (0..10_000).map(|_| 1_000 + rng.below(5_000_000)).collect();
        for split in [0, 1, 3_333, 9_999, 10_000] {
            let mut a = Running::default();
            let mut b = Running::default();
            let mut all = Running::default();
            for &v in &vals[..split] {
                a.add(v);
            }
            for &v in &vals[split..] {
                b.add(v);
            }
            for &v in &vals {
                all.add(v);
            }
            a.merge(&b);
            assert_eq!(a.count(), all.count());
            assert_eq!(a.min(), all.min());
            assert_eq!(a.max(), all.max());
            assert!(close(a.mean().unwrap(), all.mean().unwrap(), 1e-9), "split {split}");
            assert!(close(a.stddev().unwrap(), all.stddev().unwrap(), 1e-9), "split {split}");
        }
        // Two-sample hand check: {1,3} + {5,7,9}: mean 5, sample var (16+4+0+4+16)/4 = 10.
        let mut x = Running::default();
        let mut y = Running::default();
        x.add(1);
        x.add(3);
        for v in [5, 7, 9] {
            y.add(v);
        }
        x.merge(&y);
        assert_eq!(x.mean(), Some(5.0));
        assert!(close(x.stddev().unwrap(), 10.0_f64.sqrt(), 1e-15));
    }

    #[test]
    fn latency_to_stats() {
        assert_eq!(Latency::default().to_stats(), None);
        let mut l = Latency::default();
        for v in [100, 200, 300] {
            l.record(v);
        }
        let s = l.to_stats().unwrap();
        assert_eq!((s.min, s.max, s.mean), (100, 300, 200.0));
        // fio's n - 1: sqrt(20000 / 2) = 100 (the population figure would be sqrt(20000 / 3)).
        assert!(close(s.stddev, 100.0, 1e-15));
        assert_eq!(s.percentiles.len(), 17);
        // 100 is exact; 200 sits in bucket [200, 202) -> 201; 300 in [300, 304) -> 302.
        let at = |p: f64| s.percentiles.iter().find(|q| q.p == p).map(|q| q.ns);
        assert_eq!(at(1.0), Some(100));
        assert_eq!(at(30.0), Some(100));
        assert_eq!(at(40.0), Some(201));
        assert_eq!(at(60.0), Some(201));
        assert_eq!(at(70.0), Some(302));
        assert_eq!(s.percentiles.last(), Some(&Percentile { p: 99.99, ns: 302 }));

        let mut m = Latency::default();
        m.record(50);
        m.merge(&l);
        let ms = m.to_stats().unwrap();
        assert_eq!((ms.min, ms.max, ms.mean), (50, 300, 162.5));
        assert_eq!(m.hist.count(), 4);
    }

    #[test]
    fn buckets_to_samples_hand_computed() {
        let ms = |v: u64| Nanos::from_millis(v);
        let mut b = Buckets::new(ms(500));
        b.record(ms(100), 1000);
        b.record(ms(400), 500);
        b.record(ms(750), 2000);
        b.record(ms(1600), 4000); // in the 4th interval, [1.5 s, 2 s)
        assert_eq!(b.bytes, [1500, 2000, 0, 4000]);
        assert_eq!(b.ios, [2, 1, 0, 1]);

        // 1.75 s: three whole intervals; the 4th is partial and dropped.
        let s = b.to_samples(ms(1750));
        assert_eq!(s.interval_ns, 500_000_000);
        assert_eq!(s.bytes_per_sec, [3000.0, 4000.0, 0.0]);
        assert_eq!(s.iops, [4.0, 2.0, 0.0]);
        // Sample stddev (n - 1): sqrt(13_000_000 / 3) / (7000 / 3).
        assert!(close(s.cv.unwrap(), 0.892_142_571_199_771_1, 1e-12));

        // An interval that ends exactly at the runtime is kept.
        assert_eq!(b.to_samples(ms(2000)).bytes_per_sec, [3000.0, 4000.0, 0.0, 8000.0]);
        assert_eq!(b.to_samples(Nanos(1_999_999_999)).bytes_per_sec.len(), 3);
        // Past the last completion: padded with zeros.
        assert_eq!(
            b.to_samples(ms(3000)).bytes_per_sec,
            [3000.0, 4000.0, 0.0, 8000.0, 0.0, 0.0]
        );
        // Shorter than one interval: no samples, no CV.
        let short = b.to_samples(ms(499));
        assert!(short.bytes_per_sec.is_empty() && short.iops.is_empty());
        assert_eq!(short.cv, None);
        // A completion exactly on a boundary belongs to the next interval.
        let mut e = Buckets::new(ms(500));
        e.record(ms(500), 7);
        assert_eq!(e.bytes, [0, 7]);
    }

    #[test]
    fn buckets_merge_by_index() {
        let w = Nanos::from_secs(1);
        let mut a = Buckets::new(w);
        let mut b = Buckets::new(w);
        let mut both = Buckets::new(w);
        let events = [
            (0, 1, true),
            (1_500, 2, true),
            (200, 10, false),
            (1_100, 20, false),
            (2_900, 30, false),
        ];
        for (t, bytes, to_a) in events {
            let t = Nanos::from_millis(t);
            if to_a {
                a.record(t, bytes)
            } else {
                b.record(t, bytes)
            }
            both.record(t, bytes);
        }
        a.merge(&b);
        assert_eq!(a.bytes, [11, 22, 30]);
        assert_eq!(a.ios, [2, 2, 1]);
        assert_eq!(a, both);
        // Merging the longer into the shorter and back gives the same.
        let mut c = Buckets::new(w);
        c.merge(&both);
        assert_eq!(c, both);
    }

    /// However fine the interval and however late a completion, a job's
    /// buckets hold at most MAX_SAMPLES intervals: the width doubles
    /// (adjacent intervals summed) and nothing counted is lost.
    #[test]
    fn buckets_stay_within_max_samples_by_widening() {
        let us = Nanos(1_000);
        let mut b = Buckets::new(us);
        // A request every 4 us for 80 ms: 20,000 completions over 80,000 intervals.
        for i in 0..20_000u64 {
            b.record(Nanos(i * 4_000 + 1_000), 4096);
        }
        assert!(b.bytes.len() as u64 <= MAX_SAMPLES, "{} intervals", b.bytes.len());
        assert_eq!(b.bytes.len(), b.ios.len());
        assert_eq!(
            b.interval,
            Nanos(8_000),
            "1 us doubled three times fits 80 ms in 10,000"
        );
        assert_eq!(b.ios.iter().sum::<u64>(), 20_000);
        assert_eq!(b.bytes.iter().sum::<u64>(), 20_000 * 4096);
        // A constant rate stays constant at the wider interval.
        assert!(b.ios.iter().all(|&n| n == 2), "two completions in every 8 us");
        // One completion a day later still fits.
        b.record(Nanos::from_secs(86_400), 1);
        assert!(b.bytes.len() as u64 <= MAX_SAMPLES);
        assert_eq!(b.ios.iter().sum::<u64>(), 20_001);
        // Samples over a runtime far past the buckets: at most MAX_SAMPLES.
        let s = Buckets::new(Nanos(1)).to_samples(Nanos::from_secs(5));
        assert_eq!(s.interval_ns, 524_288, "1 ns doubled until 5 s is 10,000 or fewer");
        assert_eq!(s.bytes_per_sec.len(), 9_536, "5 s / 524,288 ns");
    }

    /// Jobs whose buckets were widened differently merge at the wider
    /// width, every count kept, either way round.
    #[test]
    fn buckets_of_different_widths_merge_at_the_wider() {
        let w = Nanos(1_000);
        let (mut fine, mut wide) = (Buckets::new(w), Buckets::new(w));
        fine.record(Nanos(1_500), 1);
        fine.record(Nanos(2_500), 2);
        wide.record(Nanos(3_500), 4);
        wide.record(Nanos(40_000_000), 8);
        assert!(wide.interval > fine.interval);
        let mut a = fine.clone();
        a.merge(&wide);
        let mut b = wide.clone();
        b.merge(&fine);
        assert_eq!(a, b);
        assert_eq!(a.interval, wide.interval);
        assert_eq!(a.bytes.iter().sum::<u64>(), 15);
        assert_eq!(a.bytes[0], 7, "the first three within the first wide interval");
    }

    #[test]
    fn cv_cases() {
        assert_eq!(cv(&[]), None);
        assert_eq!(cv(&[5.0]), None);
        assert_eq!(cv(&[0.0, 0.0]), None);
        // Sample stddev (n - 1): {1, 3} has sqrt(2), mean 2.
        assert_eq!(cv(&[1.0, 3.0]), Some(libm::sqrt(2.0) / 2.0));
        assert_eq!(cv(&[7.0, 7.0, 7.0]), Some(0.0));
        assert_eq!(
            cv(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]),
            Some(libm::sqrt(32.0 / 7.0) / 5.0)
        );
    }
}
