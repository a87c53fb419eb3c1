//! A baseline: per disk model and firmware, the median and spread of each
//! figure over earlier runs (a fleet's), which `bootbench-report baseline`
//! writes and the config's `acceptance.baseline` reads; a disk more than N%
//! below its model's median fails.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::{check, tests_on, Severity};
use crate::document::result::{Check, CheckRule, Metric, ResultDoc, Status, TargetInfo, Verdict};
use crate::spec::Workload;
use crate::verdict::analysis::{groups_by, metrics, DiskModel};

/// The schema identifier of a baseline file.
pub const BASELINE_SCHEMA: &str = "bootbench.baseline/1";

/// The largest figure a baseline holds: 10^15 bytes/s (a petabyte a
/// second) or requests/s, far above any disk; a baseline above it is
/// refused ([`Baseline::check`]).
pub const BASELINE_MAX: f64 = 1e15;

/// A baseline file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// Always [`BASELINE_SCHEMA`].
    pub schema: String,
    /// How many result documents it was made from.
    pub documents: u64,
    /// One entry per model, firmware, test and figure.
    pub figures: Vec<BaselineFigure>,
}

/// One figure of one model and firmware over earlier runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineFigure {
    /// The disks' model.
    pub model: String,
    /// Their firmware revision.
    pub firmware: String,
    /// The test's name.
    pub test: String,
    /// Its workload.
    pub workload: Workload,
    /// The figure.
    pub metric: Metric,
    /// How many figures (disk runs) it summarises.
    pub count: u64,
    /// Their median, in the metric's unit.
    pub median: f64,
    /// The lowest.
    pub min: f64,
    /// The highest.
    pub max: f64,
}

impl Baseline {
    /// The baseline of `docs`: every whole disk with a known model and
    /// firmware, each `ok` test and analysed figure, grouped by model,
    /// firmware, test and figure (one figure is a group too).
    pub fn of(docs: &[&ResultDoc]) -> Baseline {
        // The fleet view's groups (the same figures, median, lowest and
        // highest), a group of one disk run included.
        let figures = groups_by(docs, |_, t| DiskModel::of(t), 1)
            .into_iter()
            .map(|g| BaselineFigure {
                model: g.key.model,
                firmware: g.key.firmware,
                test: g.test,
                workload: g.workload,
                metric: g.metric,
                count: g.entries.len() as u64,
                median: g.median,
                min: g.min,
                max: g.max,
            })
            .collect();
        Baseline {
            schema: String::from(BASELINE_SCHEMA),
            documents: docs.len() as u64,
            figures,
        }
    }

    /// A baseline as read is one only with [`BASELINE_SCHEMA`]; else what
    /// it has instead, in words (`has schema "x"; expected "..."`).
    pub fn check_schema(&self) -> Result<(), String> {
        if self.schema == BASELINE_SCHEMA {
            Ok(())
        } else {
            Err(format!("has schema {:?}; expected {BASELINE_SCHEMA:?}", self.schema))
        }
    }

    /// A baseline as read, checked as a config is ([`Baseline::check_schema`]
    /// first): each figure's `count` at least 1; its `median`, `min` and
    /// `max` numbers above 0 and at most [`BASELINE_MAX`], with `min` <=
    /// `median` <= `max`; no two figures of the same model, firmware, test
    /// and metric; `documents` at least 1 when it holds a figure. The first
    /// wrong field in words, naming it, its value and what is expected
    /// (`figures[2].median: -5 is not above 0; expected ...`).
    pub fn check(&self) -> Result<(), String> {
        self.check_schema()?;
        if !self.figures.is_empty() && self.documents == 0 {
            return Err(format!(
                "documents: 0 with {} figure(s); expected the number of result documents the figures come from (at least 1)",
                self.figures.len()
            ));
        }
        let mut seen = alloc::collections::BTreeMap::new();
        for (i, f) in self.figures.iter().enumerate() {
            let at = format!("figures[{i}]");
            if f.count == 0 {
                return Err(format!(
                    "{at}.count: 0; expected the number of disk runs the figure summarises (at least 1)"
                ));
            }
            for (name, v) in [("median", f.median), ("min", f.min), ("max", f.max)] {
                if !(v > 0.0 && v <= BASELINE_MAX) {
                    return Err(format!(
                        "{at}.{name}: {v:e} is out of range; expected a figure in {} above 0 and at most {BASELINE_MAX:e}",
                        if f.metric.is_iops() { "requests/s" } else { "bytes/s" }
                    ));
                }
            }
            if f.min > f.median || f.median > f.max {
                return Err(format!(
                    "{at}: min {:e}, median {:e}, max {:e} are out of order; expected min <= median <= max",
                    f.min, f.median, f.max
                ));
            }
            let key = (&f.model, &f.firmware, &f.test, f.metric.name());
            if let Some(first) = seen.insert(key, i) {
                return Err(format!(
                    "{at}: model {:?}, firmware {:?}, test {:?}, metric {} again (as figures[{first}]); expected one \
                     figure per model, firmware, test and metric",
                    f.model,
                    f.firmware,
                    f.test,
                    f.metric.name()
                ));
            }
        }
        Ok(())
    }

    /// The figure of `t`'s model and firmware for `test` and `metric`.
    fn find(&self, t: &TargetInfo, test: &str, metric: Metric) -> Option<&BaselineFigure> {
        let key = DiskModel::of(t)?;
        self.figures
            .iter()
            .find(|f| f.model == key.model && f.firmware == key.firmware && f.test == test && f.metric == metric)
    }
}

/// The baseline rule: the figures, where they came from, how far below
/// fails, and what a disk below gets.
#[derive(Clone, Debug, PartialEq)]
pub struct BaselineRule {
    /// The baseline's figures.
    pub baseline: Baseline,
    /// Where it was read from (`baseline.json on the stick`).
    pub from: String,
    /// How far below the median fails, as a fraction.
    pub below: f64,
    /// What a disk below gets.
    pub severity: Severity,
}

impl BaselineRule {
    /// Each `ok` test's analysed figures of whole disk `t` against its
    /// model's baseline; nothing for a disk whose model the baseline does
    /// not hold.
    pub(super) fn check(&self, doc: &ResultDoc, t: &TargetInfo, out: &mut Vec<Check>) {
        let Some(fails) = self.severity.verdict() else {
            return;
        };
        if t.stack.is_some() {
            return;
        }
        for test in tests_on(doc, t).filter(|x| x.status == Status::Ok) {
            for &metric in metrics(test.workload) {
                let (Some(v), Some(b)) = (metric.get(&test.summary), self.baseline.find(t, &test.name, metric)) else {
                    continue;
                };
                let floor = b.median * (1.0 - self.below);
                let held = v >= floor;
                // A share of the median only of a median above 0 (a
                // checked baseline's always is; one made in code may not
                // be): never `inf%` or `NaN%`.
                let how_far = if b.median > 0.0 && b.median.is_finite() && v.is_finite() {
                    format!(
                        "{:.1}% {}",
                        (1.0 - v / b.median).abs() * 100.0,
                        if v < b.median { "below" } else { "above" }
                    )
                } else {
                    String::from("a median not above 0 sets no floor")
                };
                out.push(check(
                    CheckRule::Baseline,
                    if held { Verdict::Pass } else { fails },
                    Some(&test.name),
                    metric.name(),
                    Some(v),
                    Some(floor),
                    &format!("acceptance.baseline ({})", self.from),
                    format!(
                        "{}: {metric} {} against its model's baseline median {} over {} runs ({how_far}; at most {:.0}% below)",
                        test.name,
                        metric.show(v),
                        metric.show(b.median),
                        b.count,
                        self.below * 100.0
                    ),
                ));
            }
        }
    }
}
