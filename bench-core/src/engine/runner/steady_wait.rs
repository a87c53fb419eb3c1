//! A job's wait for steady state before its measured part ([`Step::steady`],
//! fio's `ss`, `ss_dur`, `ss_ramp`, `ss_interval`).
//!
//! From the end of the step's ramp, after `ss_ramp`, the completions are
//! counted in intervals of `ss_interval`; as each interval ends, its IOPS
//! and bytes per second are kept, and once `ss_dur` of them are there the
//! last window is judged as fio's `steadystate.c` does
//! (`steadystate_deviation`: the largest distance of a figure from the
//! window's mean; `steadystate_slope`: the least-squares slope of the
//! figures against their index), as a percentage of the mean with a `%`
//! limit, and the wait is over when that is below the limit. Else it is
//! over at `ss_max` from its start, not attained.
//!
//! [`Step::steady`]: crate::spec::Step::steady

use alloc::vec::Vec;

use crate::document::result::{SteadyJudged, SteadyWait};
use crate::spec::{SteadyCriterion, SteadyMetric, SteadySpec};
use crate::vocab::units::Nanos;

/// Judge one window of figures against `c`: `None` for fewer than two.
pub fn judge(ys: &[f64], c: &SteadyCriterion) -> Option<(SteadyJudged, bool)> {
    if ys.len() < 2 {
        return None;
    }
    #[allow(clippy::cast_precision_loss)] // a window of at most 10000 figures
    let n = ys.len() as f64;
    let mean = ys.iter().sum::<f64>() / n;
    let max_deviation = ys.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max);
    let xm = (n - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in ys.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)] // an index in the window
        let dx = i as f64 - xm;
        sxy += dx * (y - mean);
        sxx += dx * dx;
    }
    let slope = sxy / sxx;
    let raw = if c.slope { slope.abs() } else { max_deviation };
    let criterion = if c.pct { 100.0 * raw / mean } else { raw };
    // With a `%` limit, a window of mean 0 (nothing completed) is never
    // steady: its criterion is not a number.
    let steady = criterion.is_finite() && criterion < c.limit;
    Some((
        SteadyJudged {
            mean,
            max_deviation,
            slope,
            criterion,
        },
        steady,
    ))
}

/// One job's wait: the intervals so far and the decision once made.
pub(super) struct Wait {
    spec: SteadySpec,
    /// The wait's start (the end of the step's ramp).
    start: Nanos,
    /// The start of the interval being counted.
    cur: Nanos,
    ios: u64,
    bytes: u64,
    iops: Vec<f64>,
    bw: Vec<f64>,
    judged: Option<SteadyJudged>,
    /// Attained or not, and when the wait ended.
    decided: Option<(bool, Nanos)>,
}

impl Wait {
    /// A wait that starts at `start`.
    pub(super) fn new(spec: SteadySpec, start: Nanos) -> Wait {
        Wait {
            spec,
            start,
            cur: start + spec.ss_ramp,
            ios: 0,
            bytes: 0,
            iops: Vec::new(),
            bw: Vec::new(),
            judged: None,
            decided: None,
        }
    }

    /// A read or write of `bytes` that completed at `at`.
    pub(super) fn count(&mut self, at: Nanos, bytes: u64) {
        if self.decided.is_some() || at < self.cur {
            return;
        }
        self.close_until(at);
        if self.decided.is_none() {
            self.ios += 1;
            self.bytes += bytes;
        }
    }

    /// Close every interval that ended by `now`, judging the window after
    /// each, until the wait is decided.
    fn close_until(&mut self, now: Nanos) {
        let width = Nanos(self.spec.ss_interval.0.max(1));
        while self.decided.is_none() && now >= self.cur + width {
            let secs = width.as_secs_f64();
            #[allow(clippy::cast_precision_loss)] // counts far below 2^53
            let (iops, bw) = (self.ios as f64 / secs, self.bytes as f64 / secs);
            self.iops.push(iops);
            self.bw.push(bw);
            (self.ios, self.bytes) = (0, 0);
            self.cur += width;
            let window = self.spec.window();
            let figures = match self.spec.ss.metric {
                SteadyMetric::Iops => &self.iops,
                SteadyMetric::Bw => &self.bw,
            };
            if figures.len() >= window {
                if let Some((j, steady)) = judge(&figures[figures.len() - window..], &self.spec.ss) {
                    self.judged = Some(j);
                    if steady {
                        self.decided = Some((true, self.cur));
                    }
                }
            }
        }
    }

    /// Whether the wait is over at `now`: attained, or `ss_max` after its
    /// start.
    pub(super) fn over(&mut self, now: Nanos) -> bool {
        self.close_until(now);
        if self.decided.is_none() && now >= self.start + self.spec.ss_max {
            self.decided = Some((false, now));
        }
        self.decided.is_some()
    }

    /// The record, the wait having ended (or been stopped) by `now`.
    pub(super) fn record(self, now: Nanos) -> SteadyWait {
        let (attained, end) = self.decided.unwrap_or((false, now));
        SteadyWait {
            attained,
            wait_ns: end.saturating_sub(self.start).0,
            window: self.judged,
            iops: self.iops,
            bw: self.bw,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crit(s: &str) -> SteadyCriterion {
        SteadyCriterion::parse(s).unwrap()
    }

    /// fio's deviation test: the largest distance from the mean, as a
    /// percentage of it; the slope test: the least-squares slope per
    /// interval, as a percentage of the mean (numbers worked by hand).
    #[test]
    fn judged_as_fio_judges() {
        // Mean 100, farthest 10 from it: 10%.
        let (j, steady) = judge(&[90.0, 100.0, 110.0, 100.0], &crit("iops:10%")).unwrap();
        assert_eq!((j.mean, j.max_deviation, j.criterion), (100.0, 10.0, 10.0));
        assert!(!steady, "10% is not below 10%");
        assert!(judge(&[90.0, 100.0, 110.0, 100.0], &crit("iops:10.5%")).unwrap().1);
        // 100, 102, 104, 106: slope 2 per interval, mean 103: 1.94%.
        let (j, _) = judge(&[100.0, 102.0, 104.0, 106.0], &crit("iops_slope:2%")).unwrap();
        assert!((j.slope - 2.0).abs() < 1e-9, "{j:?}");
        assert!((j.criterion - 200.0 / 103.0).abs() < 1e-9, "{j:?}");
        assert!(judge(&[100.0, 102.0, 104.0, 106.0], &crit("iops_slope:2%")).unwrap().1);
        assert!(
            !judge(&[100.0, 102.0, 104.0, 106.0], &crit("iops_slope:1.9%"))
                .unwrap()
                .1
        );
        // A falling line counts by its size; an absolute limit is per interval.
        assert!(!judge(&[106.0, 104.0, 102.0, 100.0], &crit("bw_slope:1.9")).unwrap().1);
        assert!(judge(&[106.0, 104.0, 102.0, 100.0], &crit("bw_slope:2.1")).unwrap().1);
        // Nothing completed: never steady against a percentage.
        assert!(!judge(&[0.0, 0.0], &crit("iops:50%")).unwrap().1);
        assert!(judge(&[5.0], &crit("iops:50%")).is_none());
    }

    fn spec(ss: &str, dur: u64, ramp: u64, max: u64) -> SteadySpec {
        SteadySpec {
            ss: crit(ss),
            ss_dur: Nanos::from_secs(dur),
            ss_ramp: Nanos::from_secs(ramp),
            ss_interval: Nanos::from_secs(1),
            ss_max: Nanos::from_secs(max),
        }
    }

    /// Feed `rates[k]` completions of 4 KiB spread over second `k` of the
    /// wait (after its ramp), checking `over` after each second.
    fn feed(w: &mut Wait, start: Nanos, ramp: u64, rates: &[u64]) -> Option<usize> {
        for (k, &n) in rates.iter().enumerate() {
            let s = start + Nanos::from_secs(ramp + k as u64);
            for i in 0..n {
                w.count(s + Nanos(i * 1_000_000_000 / n.max(1)), 4096);
            }
            if w.over(s + Nanos::from_secs(1)) {
                return Some(k);
            }
        }
        None
    }

    /// A write rate that falls, then levels: the wait ends at the first
    /// second whose window of 5 is within 5% of its mean, not before; the
    /// ramp's completions are not counted.
    #[test]
    fn the_wait_ends_at_the_first_steady_window() {
        let start = Nanos::from_secs(10);
        let mut w = Wait::new(spec("iops:5%", 5, 2, 60), start);
        // Completions inside ss_ramp do not count.
        for i in 0..1000 {
            w.count(start + Nanos(i * 1_000_000), 4096);
        }
        let rates = [1000, 800, 600, 400, 300, 290, 300, 305, 295, 300, 300];
        let k = feed(&mut w, start, 2, &rates).expect("it levels");
        // Windows ending at seconds 4..: [400..300 ..] no; the window
        // 300 290 300 305 295 (seconds 4-8) is within 5%.
        assert_eq!(k, 8);
        let r = w.record(Nanos::from_secs(99));
        assert!(r.attained);
        assert_eq!(r.iops, rates[..=8].iter().map(|&n| n as f64).collect::<Vec<_>>());
        assert_eq!(r.bw[0], 1000.0 * 4096.0);
        assert_eq!(r.wait_ns, Nanos::from_secs(2 + 9).0);
        let j = r.window.unwrap();
        assert!((j.mean - 298.0).abs() < 1e-9 && j.criterion < 5.0, "{j:?}");
    }

    /// A rate that never levels: the wait ends at `ss_max`, not attained,
    /// with the last window judged.
    #[test]
    fn a_wait_that_never_levels_ends_at_its_max() {
        let start = Nanos(0);
        let mut w = Wait::new(spec("iops_slope:1%", 3, 0, 10), start);
        let rates: Vec<u64> = (0..20).map(|k| 1000 - 40 * k).collect();
        let k = feed(&mut w, start, 0, &rates).expect("ss_max ends it");
        assert_eq!(k, 9, "over at 10 s");
        let r = w.record(Nanos::from_secs(10));
        assert!(!r.attained);
        assert_eq!(r.wait_ns, Nanos::from_secs(10).0);
        assert_eq!(r.iops.len(), 10);
        assert!(r.window.unwrap().slope < -39.0);
    }
}
