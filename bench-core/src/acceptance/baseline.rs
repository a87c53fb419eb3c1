//! A baseline: per disk model and firmware, the median and spread of each
//! figure over earlier runs (a fleet's), which `bootbench-report baseline`
//! writes and the config's `acceptance.baseline` reads; a disk more than N%
//! below its model's median fails.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::{check, tests_on, Severity};
use crate::analysis::{groups_by, metrics, DiskModel};
use crate::result::{Check, CheckRule, Metric, ResultDoc, Status, TargetInfo, Verdict};
use crate::spec::Workload;

/// The schema identifier of a baseline file.
pub const BASELINE_SCHEMA: &str = "bootbench.baseline/1";

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
                out.push(check(
                    CheckRule::Baseline,
                    if held { Verdict::Pass } else { fails },
                    Some(&test.name),
                    metric.name(),
                    Some(v),
                    Some(floor),
                    &format!("acceptance.baseline ({})", self.from),
                    format!(
                        "{}: {metric} {} against its model's baseline median {} over {} runs ({:.1}% {}; at most {:.0}% below)",
                        test.name,
                        metric.show(v),
                        metric.show(b.median),
                        b.count,
                        (1.0 - v / b.median).abs() * 100.0,
                        if v < b.median { "below" } else { "above" },
                        self.below * 100.0
                    ),
                ));
            }
        }
    }
}
