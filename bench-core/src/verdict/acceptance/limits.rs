//! Declared limits: floors on a test's bytes/s and IOPS, ceilings on its
//! latency, for the tests of one name or one workload, on the targets a
//! filter selects.
//!
//! The figures are the test's summary (its headline, see
//! `crate::engine::plan::summarize`) for floors, and its main step's latency
//! ([`crate::document::result::DirStats::lat_ns`], fio's `lat`: from the request's
//! start to its completion) for ceilings. A test that did not end `ok`
//! is the errors rule's; a figure the test has not got is a warning (the
//! limit could not be checked).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::{check, tests_on, Severity};
use crate::document::result::{
    Check, CheckRule, DirStats, LatStats, Metric, ResultDoc, Status, TargetInfo, TestResult, Verdict,
};
use crate::spec::Workload;
use crate::vocab::glob::fnmatch;

/// Which targets a limit applies to; every field given must match (an
/// absent fact does not match).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiskFilter {
    /// A glob on the model (`fnmatch`, `ST4000*`).
    pub model: Option<String>,
    /// The transport (`sata`, `nvme`, `sas`, ...).
    pub transport: Option<String>,
    /// Spinning (true) or not.
    pub rotational: Option<bool>,
    /// At least this size, bytes.
    pub min_size: Option<u64>,
    /// At most this size, bytes.
    pub max_size: Option<u64>,
}

impl DiskFilter {
    /// Whether `t` is selected.
    pub fn selects(&self, t: &TargetInfo) -> bool {
        let model = self
            .model
            .as_ref()
            .is_none_or(|g| t.model.as_ref().is_some_and(|m| fnmatch(g, m.trim())));
        let transport = self
            .transport
            .as_ref()
            .is_none_or(|want| t.transport.as_ref() == Some(want));
        let rotational = self.rotational.is_none_or(|want| t.rotational == Some(want));
        let min = self.min_size.is_none_or(|m| t.size_bytes >= m);
        let max = self.max_size.is_none_or(|m| t.size_bytes <= m);
        model && transport && rotational && min && max
    }
}

/// A direction of I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Reads.
    Read,
    /// Writes.
    Write,
}

impl Direction {
    /// `read` or `write`.
    pub const fn name(self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
        }
    }
}

/// A latency figure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LatStat {
    /// The mean.
    Mean,
    /// The largest.
    Max,
    /// A percentile the results hold (`crate::engine::hist::FIO_PERCENTILES`).
    Percentile(f64),
}

impl LatStat {
    /// Its value in `lat`, nanoseconds; `None` for a percentile not there.
    fn of(self, lat: &LatStats) -> Option<f64> {
        match self {
            LatStat::Mean => Some(lat.mean),
            #[allow(clippy::cast_precision_loss)] // nanoseconds below 2^53
            LatStat::Max => Some(lat.max as f64),
            #[allow(clippy::cast_precision_loss)]
            LatStat::Percentile(p) => lat
                .percentiles
                .iter()
                .find(|x| (x.p - p).abs() < 1e-9)
                .map(|x| x.ns as f64),
        }
    }

    /// Its name in a figure: `mean`, `max`, `p99`, `p99.9`.
    pub fn name(self) -> String {
        match self {
            LatStat::Mean => String::from("mean"),
            LatStat::Max => String::from("max"),
            LatStat::Percentile(p) => format!("p{p}"),
        }
    }
}

/// A ceiling on one latency figure of one direction.
#[derive(Clone, Debug, PartialEq)]
pub struct Ceiling {
    /// Reads or writes.
    pub direction: Direction,
    /// Which figure.
    pub stat: LatStat,
    /// The ceiling, nanoseconds.
    pub ns: u64,
}

/// One declared limit.
#[derive(Clone, Debug, PartialEq)]
pub struct Limit {
    /// Where it was declared: `acceptance.limits[0]`.
    pub source: String,
    /// The tests of this name...
    pub test: Option<String>,
    /// ...or of this workload.
    pub workload: Option<Workload>,
    /// The targets it applies to.
    pub only: DiskFilter,
    /// Floors: the figure must be at least the value (bytes/s or IOPS).
    pub floors: Vec<(Metric, f64)>,
    /// Ceilings on latency.
    pub ceilings: Vec<Ceiling>,
    /// What a target that misses it gets.
    pub severity: Severity,
}

impl DiskFilter {
    /// The filter in words: `rotational, model ST4000*, at least 1000000000000 B`;
    /// `every target` without one.
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(r) = self.rotational {
            parts.push(String::from(if r { "rotational" } else { "non-rotational" }));
        }
        if let Some(m) = &self.model {
            parts.push(format!("model {m}"));
        }
        if let Some(t) = &self.transport {
            parts.push(format!("transport {t}"));
        }
        if let Some(b) = self.min_size {
            parts.push(format!("at least {b} B"));
        }
        if let Some(b) = self.max_size {
            parts.push(format!("at most {b} B"));
        }
        if parts.is_empty() {
            String::from("every target")
        } else {
            parts.join(", ")
        }
    }
}

impl Limit {
    /// The limit in words: `tests seq_read_1m: read_bytes_per_sec >= 100.0
    /// MB/s, on rotational`.
    pub fn describe(&self) -> String {
        let mut tests = Vec::new();
        if let Some(t) = &self.test {
            tests.push(format!("test {t}"));
        }
        if let Some(w) = self.workload {
            tests.push(format!("workload {}", w.name()));
        }
        let mut limits: Vec<String> = self
            .floors
            .iter()
            .map(|(m, v)| format!("{m} >= {}", m.show(*v)))
            .collect();
        #[allow(clippy::cast_precision_loss)] // nanoseconds below 2^53
        limits.extend(self.ceilings.iter().map(|c| {
            format!(
                "{} latency {} <= {}",
                c.direction.name(),
                c.stat.name(),
                ns_text(c.ns as f64)
            )
        }));
        format!(
            "{}: {}, on {}",
            tests.join(", "),
            limits.join(", "),
            self.only.describe()
        )
    }

    /// Whether `test` on `t` is one this limit is for.
    fn applies(&self, t: &TargetInfo, test: &TestResult) -> bool {
        let named = self.test.as_ref().is_none_or(|n| *n == test.name);
        let workload = self.workload.is_none_or(|w| w == test.workload);
        named && workload && self.only.selects(t)
    }
}

/// Every limit on every test of `t` it applies to, in the limits' order.
pub(super) fn check_limits(doc: &ResultDoc, t: &TargetInfo, limits: &[Limit], out: &mut Vec<Check>) {
    for limit in limits {
        let Some(fails) = limit.severity.verdict() else {
            continue;
        };
        for test in tests_on(doc, t).filter(|x| limit.applies(t, x) && x.status == Status::Ok) {
            floors(test, limit, fails, out);
            ceilings(test, limit, fails, out);
        }
    }
}

/// A figure the limit needs that the test has not got: a warning.
fn missing(test: &TestResult, figure: &str, limit: &Limit, out: &mut Vec<Check>) {
    out.push(Check {
        rule: CheckRule::Limit,
        verdict: Verdict::Warn,
        test: Some(test.name.clone()),
        figure: Some(figure.to_string()),
        value: None,
        limit: None,
        source: limit.source.clone(),
        message: format!("{}: no {figure} to hold to the limit", test.name),
    });
}

fn floors(test: &TestResult, limit: &Limit, fails: Verdict, out: &mut Vec<Check>) {
    for &(metric, floor) in &limit.floors {
        let Some(v) = metric.get(&test.summary).filter(|v| v.is_finite()) else {
            missing(test, metric.name(), limit, out);
            continue;
        };
        let held = v >= floor;
        let message = format!(
            "{}: {metric} {} {} the floor {}",
            test.name,
            metric.show(v),
            if held { "at or above" } else { "below" },
            metric.show(floor)
        );
        out.push(check(
            CheckRule::Limit,
            if held { Verdict::Pass } else { fails },
            Some(&test.name),
            metric.name(),
            Some(v),
            Some(floor),
            &limit.source,
            message,
        ));
    }
}

fn ceilings(test: &TestResult, limit: &Limit, fails: Verdict, out: &mut Vec<Check>) {
    let main = crate::verdict::analysis::main_step(test);
    for c in &limit.ceilings {
        let figure = format!("{}_lat_{}_ns", c.direction.name(), c.stat.name());
        let dir: Option<&DirStats> = main.and_then(|s| match c.direction {
            Direction::Read => s.read.as_ref(),
            Direction::Write => s.write.as_ref(),
        });
        let Some(v) = dir.filter(|d| d.ios > 0).and_then(|d| c.stat.of(&d.lat_ns)) else {
            missing(test, &figure, limit, out);
            continue;
        };
        #[allow(clippy::cast_precision_loss)] // nanoseconds below 2^53
        let ceiling = c.ns as f64;
        let held = v <= ceiling;
        let message = format!(
            "{}: {} latency {} {} {} the ceiling {}",
            test.name,
            c.direction.name(),
            c.stat.name(),
            ns_text(v),
            if held { "at or below" } else { "above" },
            ns_text(ceiling)
        );
        out.push(check(
            CheckRule::Limit,
            if held { Verdict::Pass } else { fails },
            Some(&test.name),
            &figure,
            Some(v),
            Some(ceiling),
            &limit.source,
            message,
        ));
    }
}

/// Nanoseconds in words with their unit: `812 ns`, `48.2 us`, `2.50 ms`,
/// `1.20 s` (`us` = microseconds, ASCII for serial consoles).
pub fn ns_text(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}
