//! The figures every renderer takes from a document the same way: a
//! metric's label and value ([`metric_label`], [`metric_plain`]), a test's
//! main step ([`main_step`]) and a latency percentile ([`percentile`]).
//! `show`, `compare`, `fleet`, the HTML report and `csv` share them, so a
//! figure reads the same wherever it is shown.

use bench_core::document::result::{DirStats, LatStats, StepResult, TestResult};
use bench_core::verdict::analysis::Metric;

use super::text;

/// A metric's figure as a label with its unit.
pub fn metric_label(m: Metric) -> &'static str {
    match m {
        Metric::ReadBps => "read MB/s",
        Metric::WriteBps => "write MB/s",
        Metric::ReadIops => "read IOPS",
        Metric::WriteIops => "write IOPS",
    }
}

/// A metric's value without unit (the label has it).
pub fn metric_plain(m: Metric, v: f64) -> String {
    if m.is_iops() {
        text::iops(v)
    } else {
        text::mb_per_sec(v)
    }
}

/// The main step of a test: the one labelled `main`, else the only step.
pub fn main_step(x: &TestResult) -> Option<&StepResult> {
    x.steps
        .iter()
        .find(|s| s.label == bench_core::engine::plan::MAIN_LABEL)
        .or_else(|| (x.steps.len() == 1).then(|| &x.steps[0]))
}

/// The latency percentile `p` of `d` (its `lat_ns`), nanoseconds.
pub fn percentile(d: &DirStats, p: f64) -> Option<u64> {
    lat_percentile(&d.lat_ns, p)
}

/// The percentile `p` of `l`, nanoseconds.
pub fn lat_percentile(l: &LatStats, p: f64) -> Option<u64> {
    l.percentiles.iter().find(|q| (q.p - p).abs() < 1e-9).map(|q| q.ns)
}
