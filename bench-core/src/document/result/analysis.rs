//! The analysis lines of a document: a measured figure of an array, a
//! layer or an all-at-once run against the figure expected from the
//! devices it is built of (`crate::verdict::analysis`).

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::{AnalysisKind, Metric};
use crate::spec::Workload;

/// One line of the analysis: a measured figure against the figure expected
/// from the devices it is built of.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// What is compared ([`AnalysisKind`]).
    pub kind: AnalysisKind,
    /// The array's or layer's path; `all at once` for an all-at-once run.
    pub target: String,
    /// The test's name.
    pub test: String,
    /// Its workload.
    pub workload: Workload,
    /// Which figure of the summary ([`Metric`]).
    pub metric: Metric,
    /// Measured, in the metric's unit (bytes per second or per second).
    pub measured: f64,
    /// Expected from the devices beneath, same unit.
    pub expected: f64,
    /// measured / expected (for a layer: its ratio to the device beneath).
    pub efficiency: f64,
    /// The rule, in words, with the figures it used, e.g.
    /// `raid0: N x slowest member (2 x 10.0 MB/s)`.
    pub rule: String,
    /// The device whose figure limits the expectation (the slowest member),
    /// when the rule uses one; for all-at-once, the disk that lost most.
    pub limited_by: Option<String>,
    /// The devices whose figures the expectation comes from.
    pub from: Vec<String>,
    /// What each device right beneath the array or layer did during the
    /// test's main step, from the kernel's counters ([`MemberIo`]), in
    /// member order: which member did the work, and how busy it was.
    /// Empty (absent) without accounting (a simulated run, a disk, an
    /// outlier or all-at-once line, older documents).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<MemberShare>,
}

/// One member's part in an analysed test, from its [`MemberIo`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemberShare {
    /// The member, as its [`TargetInfo::path`].
    pub path: String,
    /// Its share of the bytes its siblings moved ([`MemberIo::share`]).
    pub share: f64,
    /// Its time busy over the window ([`MemberIo::utilization`]).
    pub utilization: f64,
    /// Bytes read from it.
    pub read_bytes: u64,
    /// Bytes written to it.
    pub write_bytes: u64,
}
