//! fio's log-linear latency histogram (fio `stat.h`: FIO_IO_U_PLAT_BITS = 6,
//! FIO_IO_U_PLAT_VAL = 64, FIO_IO_U_PLAT_GROUP_NR = 29, 1856 buckets, values
//! in nanoseconds). Exact below 128 ns; each later power-of-two group is cut
//! into 64 equal buckets, so the relative error is at most 1/128 (~0.8%).
//! Values above the last group are clamped into the last bucket.

use alloc::vec;
use alloc::vec::Vec;

use crate::document::result::Percentile;

/// Bits of each group that select the bucket.
pub const PLAT_BITS: u32 = 6;
/// Buckets per group.
pub const PLAT_VAL: u64 = 1 << PLAT_BITS;
/// Groups.
pub const PLAT_GROUP_NR: u32 = 29;
/// Buckets in all.
pub const PLAT_NR: usize = (PLAT_GROUP_NR as usize) << PLAT_BITS;

/// fio's default percentile list.
pub const FIO_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99,
];

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
        Histogram {
            buckets: vec![0; PLAT_NR],
            count: 0,
        }
    }

    /// The bucket index of a value (fio `plat_val_to_idx`).
    ///
    /// Values below `2 * PLAT_VAL` (128) are their own index. Above, the most
    /// significant bit picks the group and the next `PLAT_BITS` bits the
    /// bucket within it; values past the last group land in the last bucket.
    pub fn index(ns: u64) -> usize {
        if ns < 2 * PLAT_VAL {
            // < 128: exact conversion.
            return usize::try_from(ns).unwrap_or(PLAT_NR - 1);
        }
        let msb = 63 - ns.leading_zeros(); // >= 7 here
        let error_bits = msb - PLAT_BITS;
        let base = u64::from(error_bits + 1) * PLAT_VAL;
        let offset = (ns >> error_bits) & (PLAT_VAL - 1);
        let idx = (base + offset).min(PLAT_NR as u64 - 1);
        // idx < PLAT_NR, which is a usize.
        usize::try_from(idx).unwrap_or(PLAT_NR - 1)
    }

    /// The representative value of a bucket: its midpoint (fio `plat_idx_to_val`).
    ///
    /// fio computes `base + (k + 0.5) * 2^error_bits` in floating point and
    /// truncates; since `error_bits >= 1` above index 128 the product is an
    /// integer, so the integer form here is identical.
    ///
    /// # Panics
    /// If `idx >= PLAT_NR` (fio asserts the same).
    pub fn value(idx: usize) -> u64 {
        assert!(idx < PLAT_NR, "histogram index {idx} out of range");
        // idx < 1856 fits in u64 and u32.
        let i = idx as u64;
        if i < 2 * PLAT_VAL {
            return i;
        }
        #[allow(clippy::cast_possible_truncation)] // i < 1856, so i >> 6 < 29
        let error_bits = (i >> PLAT_BITS) as u32 - 1;
        let base = 1_u64 << (error_bits + PLAT_BITS);
        let k = i % PLAT_VAL;
        base + (k << error_bits) + (1_u64 << (error_bits - 1))
    }

    /// Count one value.
    pub fn record(&mut self, ns: u64) {
        self.buckets[Histogram::index(ns)] += 1;
        self.count += 1;
    }

    /// Values counted.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Add another histogram's counts.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a += *b;
        }
        self.count += other.count;
    }

    /// The p-th percentile (0 < p <= 100) as fio computes it: the value of the
    /// first bucket whose cumulative count reaches p% of the total; `None` if empty
    /// or if `p` is outside `(0, 100]`.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        if self.count == 0 || !(p > 0.0 && p <= 100.0) {
            return None;
        }
        self.walk(&[p]).first().map(|q| q.ns)
    }

    /// fio's default list of percentiles; empty if nothing was counted.
    pub fn percentiles(&self) -> Vec<Percentile> {
        if self.count == 0 {
            return Vec::new();
        }
        self.walk(&FIO_PERCENTILES)
    }

    /// fio `calc_clat_percentiles`: one pass over the buckets for a sorted
    /// list, with fio's floating-point test `sum >= p / 100 * N`.
    #[allow(clippy::cast_precision_loss)] // fio compares in double too
    fn walk(&self, sorted: &[f64]) -> Vec<Percentile> {
        let mut out = Vec::with_capacity(sorted.len());
        let total = self.count as f64;
        let mut sum = 0_u64;
        let mut j = 0;
        for (idx, &c) in self.buckets.iter().enumerate() {
            if j == sorted.len() {
                break;
            }
            sum += c;
            while j < sorted.len() && sum as f64 >= sorted[j] / 100.0 * total {
                out.push(Percentile {
                    p: sorted[j],
                    ns: Histogram::value(idx),
                });
                j += 1;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::rng::Rng;

    #[test]
    fn constants_match_fio() {
        assert_eq!(PLAT_VAL, 64);
        assert_eq!(PLAT_NR, 1856);
    }

    #[test]
    fn small_values_are_exact() {
        for v in 0..128_u64 {
            let i = Histogram::index(v);
            assert_eq!(i as u64, v);
            assert_eq!(Histogram::value(i), v);
        }
    }

    #[test]
    fn known_indices_and_values() {
        // (value, index, bucket midpoint), worked by hand from fio's formulas.
        let cases: [(u64, usize, u64); 9] = [
            (128, 128, 129), // msb 7, 1 error bit: buckets of 2
            (129, 128, 129),
            (130, 129, 131),
            (255, 191, 255),
            (256, 192, 258),                       // msb 8, buckets of 4
            (1000, 317, 1004),                     // msb 9, e=3: 256 + (1000>>3)&63 = 317; [1000, 1008)
            ((1 << 34) - 1, 1855, 17_112_760_320), // last bucket: 2^33 + 63.5 * 2^27
            (1 << 34, 1855, 17_112_760_320),       // clamped
            (u64::MAX, 1855, 17_112_760_320),      // clamped
        ];
        for (v, idx, mid) in cases {
            assert_eq!(Histogram::index(v), idx, "index({v})");
            assert_eq!(Histogram::value(idx), mid, "value({idx})");
        }
    }

    #[test]
    fn every_bucket_round_trips_and_indices_are_monotone() {
        for idx in 0..PLAT_NR {
            assert_eq!(Histogram::index(Histogram::value(idx)), idx, "bucket {idx}");
        }
        let mut prev = 0;
        let mut v = 0_u64;
        while v < (1 << 35) {
            let i = Histogram::index(v);
            assert!(i >= prev, "index not monotone at {v}");
            prev = i;
            v += 1 + v / 300;
        }
    }

    #[test]
    fn relative_error_at_most_one_128th() {
        let mut r = Rng::new(3);
        let check = |v: u64| {
            let got = Histogram::value(Histogram::index(v));
            let err = got.abs_diff(v);
            // err / v <= 1/128, in integers.
            assert!(err * 128 <= v, "v={v} got={got}");
        };
        for v in 0..100_000 {
            check(v);
        }
        for _ in 0..100_000 {
            // Log-uniform over the unclamped range [1, 2^34).
            let bits = r.below(34) + 1;
            check(r.below(1 << bits).max(1));
        }
    }

    #[test]
    fn percentile_of_uniform_1_to_10000() {
        let mut h = Histogram::new();
        for v in 1..=10_000 {
            h.record(v);
        }
        assert_eq!(h.count(), 10_000);
        for p in FIO_PERCENTILES {
            let got = h.percentile(p).unwrap();
            // The exact p-th percentile: the ceil(p% * N)-th smallest value.
            #[allow(clippy::cast_precision_loss)] // k <= 10_000 is exact in f64
            let rank = (1..=10_000_u64).find(|&k| k as f64 >= p / 100.0 * 10_000.0).unwrap();
            let err = got.abs_diff(rank);
            assert!(err * 128 <= rank, "p{p}: got {got}, exact {rank}");
        }
        // Exact where buckets are exact (values < 128).
        assert_eq!(h.percentile(1.0), Some(100));
        // p = 50: 5000th value; 5000 is in msb-12 group, buckets of 64:
        // base 4096, k = (5000 >> 6) & 63 = 14 -> 4096 + 14.5 * 64 = 5024.
        assert_eq!(h.percentile(50.0), Some(5024));
        assert_eq!(h.percentile(100.0), Some(Histogram::value(Histogram::index(10_000))));
    }

    #[test]
    fn percentile_uses_first_bucket_reaching_p() {
        let mut h = Histogram::new();
        for v in 1..=100 {
            h.record(v);
        }
        let cases = [
            (1.0, 1),
            (5.0, 5),
            (50.0, 50),
            (99.0, 99),
            (99.5, 100),
            (99.99, 100),
            (100.0, 100),
        ];
        for (p, want) in cases {
            assert_eq!(h.percentile(p), Some(want), "p{p}");
        }
        // Skewed: 90 values of 10 and 10 values of 20.
        let mut s = Histogram::new();
        for _ in 0..90 {
            s.record(10);
        }
        for _ in 0..10 {
            s.record(20);
        }
        assert_eq!(s.percentile(90.0), Some(10));
        assert_eq!(s.percentile(90.01), Some(20));
        assert_eq!(s.percentile(0.0), None);
        assert_eq!(s.percentile(100.5), None);
        assert_eq!(Histogram::new().percentile(50.0), None);
    }

    #[test]
    fn merge_equals_recording_both_streams() {
        let mut r = Rng::new(11);
        let a_vals: Vec<u64> = (0..5000).map(|_| r.below(1 << 30)).collect();
        let b_vals: Vec<u64> = (0..3000).map(|_| r.below(1 << 20)).collect();
        let mut a = Histogram::new();
        let mut b = Histogram::new();
        let mut both = Histogram::new();
        for &v in &a_vals {
            a.record(v);
            both.record(v);
        }
        for &v in &b_vals {
            b.record(v);
            both.record(v);
        }
        a.merge(&b);
        assert_eq!(a, both);
        assert_eq!(a.count(), 8000);
        assert_eq!(a.percentiles(), both.percentiles());
    }

    #[test]
    fn percentiles_list() {
        assert!(Histogram::new().percentiles().is_empty());
        assert!(Histogram::default().percentiles().is_empty());
        let mut h = Histogram::new();
        for v in (1..=1000).rev() {
            h.record(v * 37);
        }
        let ps = h.percentiles();
        assert_eq!(ps.len(), FIO_PERCENTILES.len());
        for (q, p) in ps.iter().zip(FIO_PERCENTILES) {
            assert_eq!(q.p, p);
            assert_eq!(Some(q.ns), h.percentile(p));
        }
        assert!(ps.windows(2).all(|w| w[0].ns <= w[1].ns));
        // One value: every percentile is its bucket.
        let mut one = Histogram::new();
        one.record(5000);
        assert!(one.percentiles().iter().all(|q| q.ns == 5024));
    }
}
