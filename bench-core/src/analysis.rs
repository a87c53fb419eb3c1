//! What the figures say about arrays, layers and all-at-once runs: each
//! measured figure against the figure expected from the devices it is built
//! of, and the efficiency `measured / expected`; and which disk is the odd
//! one out among disks of the same model and firmware.
//!
//! The inputs are a finished [`ResultDoc`]: the targets' [`StackInfo`] (which
//! members an md array has, which device a dm layer sits on), the tests run on
//! each target alone, and the [`AllAtOnce`] runs. Figures are compared only
//! between tests of the same name (so the same workload and parameters), and
//! only when every figure a rule needs is there and its test ended `ok`: a
//! missing member figure gives no line, never a made-up one.
//!
//! # Which figures
//! Sequential workloads (`buffered_read`, `direct_read`, `seq_read`, and for
//! layers and all-at-once also `zones`) compare read throughput; `seq_write`
//! (and `commit`) write throughput; `rand_read` (and `iops_sweep`) read IOPS;
//! `rand_write` write IOPS; `rand_rw` both read and write IOPS. For the
//! workloads of several steps the figure is the summary's headline
//! (`crate::plan::summarize`): `zones` the mean over its surface points,
//! `iops_sweep` its highest IOPS, `commit` its commit-size step
//! (`flush_every_N`).
//! `cached_read` measures the page cache, and `seek_profile`,
//! `command_overhead` and `slog` (one write and flush at a time) are
//! latencies: none of them is analysed. Arrays have
//! rules for the sequential and random workloads only (`zones`, `commit` and
//! `iops_sweep` on an array give no line).
//!
//! # Array rules (md), N members, "slowest" = the member with the lowest
//! figure for the same test, QD = iodepth x jobs of the test
//! Sequential throughput:
//! - `raid0`: N x slowest member (every stripe waits for its slowest chunk).
//! - `linear`: the member the test's range starts on (members are
//!   concatenated in order, each rounded down to the chunk size).
//! - `raid1` read: the member(s) md read from, from the kernel's counters
//!   (below); without them one member, the slowest (one reader reads from
//!   one mirror; the kernel picks which, so the slowest is the
//!   conservative expectation).
//! - `raid1` write: the slowest member (every write goes to every member).
//! - `raid5`: (N-1) x slowest, read and write (write assumes full stripes,
//!   no read-modify-write).
//! - `raid6`: (N-2) x slowest, read and write (likewise).
//! - `raid10`: read N/2 x slowest for `near2` (the default) and `offset2`,
//!   N x slowest for `far2`; write N/2 x slowest (each block is written twice).
//!
//! Random IOPS (each request lands on one member, at most QD members busy;
//! the members' figures come from the same test, so at a high QD this is an
//! upper bound where a member's IOPS grow with its queue depth):
//! - `raid0`: min(N, QD) x slowest, read and write.
//! - `linear`: each member the range covers serves its share of the
//!   requests: 1 / sum(share_i / IOPS_i).
//! - `raid1` read: the slowest member (conservative, as above); write: the
//!   slowest member.
//! - `raid5` read: min(N, QD) x slowest; write: min(N, 2 x QD) x slowest / 4
//!   (read-modify-write: 4 member I/Os per write, 2 at a time).
//! - `raid6` read: min(N, QD) x slowest; write: min(N, 3 x QD) x slowest / 6
//!   (6 member I/Os per write, 3 at a time).
//! - `raid10` read: min(N, QD) x slowest; write: min(N, 2 x QD) x slowest / 2
//!   (each write goes to 2 members).
//!
//! # The kernel's counters (`StepResult::members`)
//! Where the test's main step has them (a real array or layer), each
//! `array` and `layer` line carries every device right beneath with its
//! share of the bytes and its utilization ([`MemberShare`]). Mirrored reads
//! (`raid1`, `raid10`) are expected from the members md read from, each by
//! its share of the bytes read: at QD 1 on raid1 they take turns,
//! 1 / sum(share / figure); otherwise they read at once, min(figure /
//! share). A member busy at least [`BUSY`] of the window is `limited_by`.
//!
//! # Layers (dm)
//! Each figure of a layer's test against the same figure of the same test on
//! the device beneath: `expected` is the figure beneath and `efficiency` the
//! ratio (1.0 = the layer costs nothing). A direct-I/O line's rule says
//! what the cost comes from (crypt: the cipher's CPU time; linear:
//! nothing expected); a layer far slower through the page cache than
//! direct, with less readahead than the device beneath, gets a
//! `readahead` line ([`READAHEAD_GAP`]).
//!
//! # The odd disk out
//! The whole disks (no array or layer) with a known model and firmware,
//! grouped by both; in a group of two or more, for each test that ended
//! `ok` on every disk of the group, a disk whose figure is more than 10%
//! below the group's median ([`OUTLIER_BELOW`]; of two disks the median is
//! their mean) gets an `outlier` line: `measured` its figure, `expected`
//! the median, `from` the group. Two disks of one model and firmware that
//! read at 59 and 83 MB/s (the fileserver post's) are 17% apart from
//! their mean of 71: the slower one is the outlier.
//!
//! # All at once
//! The sum of every disk's figure in the run together against the sum of the
//! same disks' figures each alone; `limited_by` names the disk whose figure
//! dropped most (a shared controller or bus shows here).

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use crate::plan::MAIN_LABEL;
use crate::result::{
    AllAtOnce, Analysis, Health, HealthLine, HealthReading, MemberIo, MemberShare, ResultDoc, StackInfo, Status,
    StepResult, Summary, TargetInfo, TestResult,
};
use crate::spec::Workload;
use crate::units::MB;

/// One figure of a test's summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// `read_bytes_per_sec`.
    ReadBps,
    /// `write_bytes_per_sec`.
    WriteBps,
    /// `read_iops`.
    ReadIops,
    /// `write_iops`.
    WriteIops,
}

impl Metric {
    /// The summary field's name.
    pub const fn name(self) -> &'static str {
        match self {
            Metric::ReadBps => "read_bytes_per_sec",
            Metric::WriteBps => "write_bytes_per_sec",
            Metric::ReadIops => "read_iops",
            Metric::WriteIops => "write_iops",
        }
    }

    /// The metric of that summary field name.
    pub fn from_name(name: &str) -> Option<Metric> {
        [Metric::ReadBps, Metric::WriteBps, Metric::ReadIops, Metric::WriteIops]
            .into_iter()
            .find(|m| m.name() == name)
    }

    /// The value in a summary.
    pub const fn get(self, s: &Summary) -> Option<f64> {
        match self {
            Metric::ReadBps => s.read_bytes_per_sec,
            Metric::WriteBps => s.write_bytes_per_sec,
            Metric::ReadIops => s.read_iops,
            Metric::WriteIops => s.write_iops,
        }
    }

    /// True for reads.
    pub const fn is_read(self) -> bool {
        matches!(self, Metric::ReadBps | Metric::ReadIops)
    }

    /// True for IOPS, false for bytes per second.
    pub const fn is_iops(self) -> bool {
        matches!(self, Metric::ReadIops | Metric::WriteIops)
    }

    /// A value of this metric in words with its unit: `20.5 MB/s`, `812 IOPS`.
    pub fn show(self, v: f64) -> String {
        if self.is_iops() {
            format!("{v:.0} IOPS")
        } else {
            #[allow(clippy::cast_precision_loss)] // 10^6 is exact in f64
            let mb = v / MB as f64;
            format!("{mb:.1} MB/s")
        }
    }
}

/// The figures analysed for a workload (see the module docs).
pub const fn metrics(workload: Workload) -> &'static [Metric] {
    match workload {
        Workload::BufferedRead | Workload::DirectRead | Workload::SeqRead | Workload::Zones => &[Metric::ReadBps],
        Workload::SeqWrite | Workload::Commit => &[Metric::WriteBps],
        Workload::RandRead | Workload::IopsSweep => &[Metric::ReadIops],
        Workload::RandWrite => &[Metric::WriteIops],
        Workload::RandRw => &[Metric::ReadIops, Metric::WriteIops],
        Workload::CachedRead | Workload::SeekProfile | Workload::CommandOverhead | Workload::Slog => &[],
    }
}

/// How an array workload touches its members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    Sequential,
    Random,
}

/// The access kind an array rule exists for, if any.
const fn array_access(workload: Workload) -> Option<Access> {
    match workload {
        Workload::BufferedRead | Workload::DirectRead | Workload::SeqRead | Workload::SeqWrite => {
            Some(Access::Sequential)
        }
        Workload::RandRead | Workload::RandWrite | Workload::RandRw => Some(Access::Random),
        _ => None,
    }
}

/// Every analysis line of a finished document: arrays (in target order,
/// each test, each figure), then layers, then all-at-once runs.
pub fn analyze(doc: &ResultDoc) -> Vec<Analysis> {
    let mut out = Vec::new();
    for t in &doc.targets {
        if let Some(st) = t.stack.as_ref().filter(|s| s.kind == "md") {
            analyze_array(doc, t, st, &mut out);
        }
    }
    for t in &doc.targets {
        if let Some(st) = t.stack.as_ref().filter(|s| s.kind != "md") {
            analyze_layer(doc, t, st, &mut out);
        }
    }
    analyze_readahead(doc, &mut out);
    for a in &doc.all_at_once {
        analyze_all_at_once(doc, a, &mut out);
    }
    analyze_outliers(doc, &mut out);
    out
}

/// How far below its group's median a disk's figure may be before it is an
/// outlier: more than 10% below (figure < 0.9 x median).
pub const OUTLIER_BELOW: f64 = 0.10;

/// A layer's buffered reads this far below its direct ones (relative to
/// the device beneath, both) are worth explaining: a `readahead` line when
/// the layer's readahead is also smaller than the device's beneath.
pub const READAHEAD_GAP: f64 = 0.20;

/// A member this busy (its time with I/O in flight over the step's
/// window) was the bottleneck: `limited_by` names it.
pub const BUSY: f64 = 0.90;

/// The median of `v` (not empty): the middle value, or the mean of the two
/// middle ones.
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// One disk's figure in a [`FleetGroup`].
#[derive(Clone, Debug, PartialEq)]
pub struct FleetEntry {
    /// Which document (index into the documents given to [`fleet`]).
    pub doc: usize,
    /// The disk's path in that document.
    pub target: String,
    /// Its serial number, when known.
    pub serial: Option<String>,
    /// The figure, in the metric's unit.
    pub value: f64,
}

/// What the disks of a [`fleet`] group share besides the test: their model
/// and firmware.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskModel {
    /// The model.
    pub model: String,
    /// The firmware revision.
    pub firmware: String,
}

impl DiskModel {
    /// A target's model and firmware, when both are known.
    pub fn of(t: &TargetInfo) -> Option<DiskModel> {
        Some(DiskModel {
            model: t.model.clone()?,
            firmware: t.firmware.clone()?,
        })
    }
}

/// The disks of one key (by default one model and firmware, [`DiskModel`]),
/// over one or many documents, with one test's figure each: the test of that
/// name that ended `ok`, and its figure usable.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetGroup<K = DiskModel> {
    /// What the disks share: [`fleet`]'s model and firmware, or the key of
    /// [`fleet_by`].
    pub key: K,
    /// The test's name.
    pub test: String,
    /// Its workload.
    pub workload: Workload,
    /// The figure compared.
    pub metric: Metric,
    /// Each disk's figure, in document and target order.
    pub entries: Vec<FleetEntry>,
    /// Their median (of an even count, the mean of the two middle ones).
    pub median: f64,
    /// The lowest figure.
    pub min: f64,
    /// The highest figure.
    pub max: f64,
}

impl<K> FleetGroup<K> {
    /// True when `value` is more than [`OUTLIER_BELOW`] below the median:
    /// the one outlier rule, of a document's `outlier` lines and of every
    /// fleet view.
    pub fn is_outlier(&self, value: f64) -> bool {
        value < self.median * (1.0 - OUTLIER_BELOW)
    }

    /// The entries more than [`OUTLIER_BELOW`] below the median.
    pub fn outliers(&self) -> impl Iterator<Item = &FleetEntry> {
        self.entries.iter().filter(move |e| self.is_outlier(e.value))
    }
}

/// The fleet view of many documents (one machine's runs or many
/// machines'): every whole disk (no array or layer) with a known model and
/// firmware, grouped by model, firmware, test name and analysed figure;
/// the groups of two or more disks, in the order first seen. The same rule
/// as a document's `outlier` lines, across documents: an entry more than
/// 10% below its group's median is an outlier ([`FleetGroup::outliers`]).
pub fn fleet(docs: &[&ResultDoc]) -> Vec<FleetGroup> {
    fleet_by(docs, |_, t| DiskModel::of(t))
}

/// [`fleet`] with another key: every whole disk (no array or layer) for
/// which `key(document, disk)` is `Some`, grouped by that key, test name
/// and analysed figure; the groups of two or more disks, in the order first
/// seen, with their median, lowest and highest figure. A host tool groups
/// by the machine's model and the disk's this way, with the same median
/// and the same outlier rule.
pub fn fleet_by<K: PartialEq + Clone>(
    docs: &[&ResultDoc],
    key: impl Fn(&ResultDoc, &TargetInfo) -> Option<K>,
) -> Vec<FleetGroup<K>> {
    let mut groups: Vec<FleetGroup<K>> = Vec::new();
    for (i, doc) in docs.iter().enumerate() {
        for t in doc.targets.iter().filter(|t| t.stack.is_none()) {
            let Some(k) = key(doc, t) else {
                continue;
            };
            for test in doc
                .tests
                .iter()
                .filter(|x| x.target == t.path && x.status == Status::Ok)
            {
                for &metric in metrics(test.workload) {
                    let Some(value) = usable(metric.get(&test.summary)) else {
                        continue;
                    };
                    let entry = FleetEntry {
                        doc: i,
                        target: t.path.clone(),
                        serial: t.serial.clone(),
                        value,
                    };
                    let same = |g: &&mut FleetGroup<K>| g.key == k && g.test == test.name && g.metric == metric;
                    match groups.iter_mut().find(|g| same(g)) {
                        Some(g) => g.entries.push(entry),
                        None => groups.push(FleetGroup {
                            key: k.clone(),
                            test: test.name.clone(),
                            workload: test.workload,
                            metric,
                            entries: vec![entry],
                            median: 0.0,
                            min: 0.0,
                            max: 0.0,
                        }),
                    }
                }
            }
        }
    }
    groups.retain(|g| g.entries.len() >= 2);
    for g in &mut groups {
        let mut v: Vec<f64> = g.entries.iter().map(|e| e.value).collect();
        g.median = median(&mut v);
        (g.min, g.max) = (v[0], v[v.len() - 1]);
    }
    groups
}

/// The odd disk out: the whole disks (no array or layer) grouped by model
/// and firmware (both known); in a group of two or more, for each test
/// every disk of the group ran `ok` and each figure analysed for its
/// workload, a disk more than [`OUTLIER_BELOW`] below the group's median
/// gets a line (`outlier`: measured = its figure, expected = the median,
/// `from` = the group), in target order.
fn analyze_outliers(doc: &ResultDoc, out: &mut Vec<Analysis>) {
    // The document's own fleet; a group counts only when every whole disk
    // of its model and firmware is in it (a disk whose test failed or was
    // not run leaves the group without a line).
    let disks = |model: &str, fw: &str| {
        doc.targets
            .iter()
            .filter(|t| t.stack.is_none() && t.model.as_deref() == Some(model) && t.firmware.as_deref() == Some(fw))
            .count()
    };
    for g in fleet(&[doc]) {
        if g.entries.len() != disks(&g.key.model, &g.key.firmware) {
            continue;
        }
        for e in g.outliers() {
            out.push(Analysis {
                kind: "outlier".into(),
                target: e.target.clone(),
                test: g.test.clone(),
                workload: g.workload,
                metric: g.metric.name().into(),
                measured: e.value,
                expected: g.median,
                efficiency: e.value / g.median,
                rule: format!(
                    "outlier: {:.0}% below the median of its group ({} disks of model {}, firmware {}: {})",
                    (1.0 - e.value / g.median) * 100.0,
                    g.entries.len(),
                    g.key.model,
                    g.key.firmware,
                    g.metric.show(g.median)
                ),
                limited_by: None,
                from: g.entries.iter().map(|x| x.target.clone()).collect(),
                members: Vec::new(),
            });
        }
    }
}

/// The first `ok` test named `test` on `target`.
fn find<'a>(doc: &'a ResultDoc, target: &str, test: &str) -> Option<&'a TestResult> {
    doc.tests
        .iter()
        .find(|t| t.target == target && t.name == test && t.status == Status::Ok)
}

/// A usable figure: present, finite and above zero.
fn usable(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite() && *v > 0.0)
}

/// `metric` of the `ok` test named `test` on `target`.
fn figure(doc: &ResultDoc, target: &str, test: &str, metric: Metric) -> Option<f64> {
    usable(find(doc, target, test).and_then(|t| metric.get(&t.summary)))
}

/// A factor in words: `2`, `1.5`, `0.25`.
fn factor(f: f64) -> String {
    let mut s = format!("{f:.2}");
    while s.ends_with('0') {
        s.pop();
    }
    if s.ends_with('.') {
        s.pop();
    }
    s
}

/// The expectation of one rule.
struct Expect {
    value: f64,
    rule: String,
    limited_by: Option<String>,
}

/// `k x slowest` with the rule text `head (k x figure)`.
fn times_slowest(head: &str, k: f64, slowest: (&str, f64), metric: Metric) -> Expect {
    Expect {
        value: k * slowest.1,
        rule: format!("{head} ({} x {})", factor(k), metric.show(slowest.1)),
        limited_by: Some(slowest.0.into()),
    }
}

/// Member byte ranges of a linear array, in order: `(start, end)`; `None` if
/// a member's size is unknown.
fn linear_extents(doc: &ResultDoc, st: &StackInfo) -> Option<Vec<(u64, u64)>> {
    let chunk = st.chunk_bytes.filter(|c| *c > 0).unwrap_or(1);
    let mut start = 0u64;
    let mut v = Vec::with_capacity(st.members.len());
    for m in &st.members {
        let size = doc.targets.iter().find(|t| t.path == *m).map(|t| t.size_bytes)?;
        let size = size / chunk * chunk;
        if size == 0 {
            return None;
        }
        v.push((start, start + size));
        start += size;
    }
    Some(v)
}

/// QD: iodepth x jobs of `test`, each at least 1.
fn queue_depth(test: &TestResult) -> u64 {
    u64::from(test.params.iodepth.max(1)) * u64::from(test.params.jobs.max(1))
}

/// The step whose figures are `test`'s summary ([`MAIN_LABEL`]), if any.
fn main_step(test: &TestResult) -> Option<&StepResult> {
    test.steps.iter().find(|s| s.label == MAIN_LABEL)
}

/// The accounting of `test`'s main step for the devices right beneath
/// `parent`, in their order there (`under`); empty when the step has none.
fn accounting<'a>(test: &'a TestResult, parent: &str, under: &[String]) -> Vec<&'a MemberIo> {
    let Some(main) = main_step(test) else {
        return Vec::new();
    };
    under
        .iter()
        .filter_map(|u| main.members.iter().find(|m| m.path == *u && m.parent == parent))
        .collect()
}

/// The analysis line's view of the accounting.
fn shares(acc: &[&MemberIo]) -> Vec<MemberShare> {
    acc.iter()
        .map(|m| MemberShare {
            path: m.path.clone(),
            share: m.share,
            utilization: m.utilization,
            read_bytes: m.read_bytes,
            write_bytes: m.write_bytes,
        })
        .collect()
}

/// The busiest member, if it was busy at least [`BUSY`] of the time.
fn busiest<'a>(acc: &[&'a MemberIo]) -> Option<&'a MemberIo> {
    acc.iter()
        .copied()
        .filter(|m| m.utilization >= BUSY)
        .reduce(|a, b| if b.utilization > a.utilization { b } else { a })
}

/// A share as a whole percentage: `100%`.
fn pct(v: f64) -> String {
    format!("{:.0}%", v * 100.0)
}

/// Mirrored reads (raid1, raid10) from what md actually read: each
/// member's figure weighted by its share of the bytes read. One request
/// at a time (QD 1), the members take turns: 1 / sum(share / figure).
/// With more in flight they read at once, and the one with the most
/// work for its speed finishes last: min(figure / share). `None` when
/// nothing was read from them.
fn mirrored_read(level: &str, qd: u64, figs: &[(&str, f64)], acc: &[&MemberIo], metric: Metric) -> Option<Expect> {
    let total: u64 = acc.iter().map(|m| m.read_bytes).sum();
    if total == 0 || acc.len() != figs.len() {
        return None;
    }
    #[allow(clippy::cast_precision_loss)] // byte counts; a share
    let read: Vec<(&str, f64, f64)> = figs
        .iter()
        .zip(acc)
        .map(|(&(p, f), m)| (p, f, m.read_bytes as f64 / total as f64))
        .filter(|r| r.2 > 0.0)
        .collect();
    let serial = qd <= 1 && level == "raid1";
    let value = if serial {
        1.0 / read.iter().map(|(_, f, sh)| sh / f).sum::<f64>()
    } else {
        read.iter().map(|(_, f, sh)| f / sh).fold(f64::INFINITY, f64::min)
    };
    let who: Vec<String> = read
        .iter()
        .map(|(p, f, sh)| format!("{p} {} at {}", pct(*sh), metric.show(*f)))
        .collect();
    let how = if read.len() == 1 {
        "the member md read from"
    } else if serial {
        "the members md read from, in turn: 1 / sum(share / figure)"
    } else {
        "the members md read from, at once: min(figure / share)"
    };
    let limited_by = if read.len() == 1 {
        Some(read[0].0.into())
    } else {
        read.iter()
            .copied()
            .reduce(|a, b| if b.2 / b.1 > a.2 / a.1 { b } else { a })
            .map(|r| r.0.into())
    };
    Some(Expect {
        value,
        rule: format!("{level} read: {how} ({}; the kernel's counters)", who.join(", ")),
        limited_by,
    })
}

/// The expectation for `metric` of `test` on array `st` from its members'
/// figures `figs` (in member order, all present).
fn array_rule(
    doc: &ResultDoc,
    st: &StackInfo,
    test: &TestResult,
    access: Access,
    metric: Metric,
    figs: &[(&str, f64)],
) -> Option<Expect> {
    let n = figs.len();
    let slowest = figs.iter().copied().reduce(|a, b| if b.1 < a.1 { b } else { a })?;
    #[allow(clippy::cast_precision_loss)] // member counts are tiny
    let nf = n as f64;
    let qd = queue_depth(test);
    // min(N, k x QD) as a float.
    #[allow(clippy::cast_precision_loss)] // member counts and queue depths are tiny
    let busy = |k: u64| n.min(usize::try_from(k.saturating_mul(qd)).unwrap_or(usize::MAX)) as f64;
    let read = metric.is_read();
    let level = st.level.as_str();
    let e = match (level, access, read) {
        ("raid0", Access::Sequential, _) => times_slowest("raid0: N x slowest member", nf, slowest, metric),
        ("raid0", Access::Random, _) => {
            times_slowest("raid0 random: min(N, QD) x slowest member", busy(1), slowest, metric)
        }
        ("raid1", _, true) => times_slowest(
            "raid1 read: one member, the slowest (the kernel picks which; conservative)",
            1.0,
            slowest,
            metric,
        ),
        ("raid1", _, false) => times_slowest("raid1 write: every member writes, the slowest", 1.0, slowest, metric),
        ("raid5", Access::Sequential, _) if n >= 2 => {
            times_slowest("raid5: (N-1) x slowest member", nf - 1.0, slowest, metric)
        }
        ("raid6", Access::Sequential, _) if n >= 3 => {
            times_slowest("raid6: (N-2) x slowest member", nf - 2.0, slowest, metric)
        }
        ("raid5" | "raid6" | "raid10", Access::Random, true) => times_slowest(
            &format!("{level} random read: min(N, QD) x slowest member"),
            busy(1),
            slowest,
            metric,
        ),
        ("raid5", Access::Random, false) => times_slowest(
            "raid5 random write: min(N, 2 x QD) x slowest member / 4 (read-modify-write)",
            busy(2) / 4.0,
            slowest,
            metric,
        ),
        ("raid6", Access::Random, false) => times_slowest(
            "raid6 random write: min(N, 3 x QD) x slowest member / 6 (read-modify-write)",
            busy(3) / 6.0,
            slowest,
            metric,
        ),
        ("raid10", Access::Random, false) => times_slowest(
            "raid10 random write: min(N, 2 x QD) x slowest member / 2 (two copies)",
            busy(2) / 2.0,
            slowest,
            metric,
        ),
        ("raid10", Access::Sequential, true) if st.layout.as_deref() == Some("far2") => {
            times_slowest("raid10 far2 read: N x slowest member", nf, slowest, metric)
        }
        ("raid10", Access::Sequential, true) => {
            times_slowest("raid10 read: N/2 x slowest member", nf / 2.0, slowest, metric)
        }
        ("raid10", Access::Sequential, false) => times_slowest(
            "raid10 write: N/2 x slowest member (two copies)",
            nf / 2.0,
            slowest,
            metric,
        ),
        ("linear", Access::Sequential, _) => {
            let ext = linear_extents(doc, st)?;
            let at = test.params.offset.0;
            let i = ext.iter().position(|&(s, e)| s <= at && at < e)?;
            let (path, v) = figs[i];
            Expect {
                value: v,
                rule: format!("linear: the member the range starts on ({path}, {})", metric.show(v)),
                limited_by: Some(path.into()),
            }
        }
        ("linear", Access::Random, _) => {
            let ext = linear_extents(doc, st)?;
            let total = ext.last().map_or(0, |e| e.1);
            let start = test.params.offset.0;
            let end = test
                .params
                .length
                .map_or(total, |l| start.saturating_add(l.0).min(total));
            if end <= start {
                return None;
            }
            // Time per request: each member's share of the range / its IOPS.
            let mut per_req = 0.0;
            let mut covered = Vec::new();
            for (&(s, e), &(path, v)) in ext.iter().zip(figs) {
                let overlap = e.min(end).saturating_sub(s.max(start));
                if overlap > 0 {
                    #[allow(clippy::cast_precision_loss)] // a share; rounding is irrelevant
                    let share = overlap as f64 / (end - start) as f64;
                    per_req += share / v;
                    covered.push(path);
                }
            }
            if per_req <= 0.0 {
                return None;
            }
            let limited_by = if covered.len() == 1 {
                Some(covered[0].into())
            } else {
                None
            };
            Expect {
                value: 1.0 / per_req,
                rule: format!(
                    "linear random: 1 / sum(share / member IOPS) over {} member(s) the range covers",
                    covered.len()
                ),
                limited_by,
            }
        }
        _ => return None,
    };
    Some(e)
}

/// The lines of one md array.
fn analyze_array(doc: &ResultDoc, t: &TargetInfo, st: &StackInfo, out: &mut Vec<Analysis>) {
    if st.members.is_empty() {
        return;
    }
    for test in doc
        .tests
        .iter()
        .filter(|x| x.target == t.path && x.status == Status::Ok)
    {
        let Some(access) = array_access(test.workload) else {
            continue;
        };
        for &metric in metrics(test.workload) {
            let Some(measured) = usable(metric.get(&test.summary)) else {
                continue;
            };
            let figs: Option<Vec<(&str, f64)>> = st
                .members
                .iter()
                .map(|m| figure(doc, m, &test.name, metric).map(|v| (m.as_str(), v)))
                .collect();
            let Some(figs) = figs else { continue };
            let acc = accounting(test, &t.path, &st.members);
            let qd = queue_depth(test);
            let mirrored = matches!(st.level.as_str(), "raid1" | "raid10") && metric.is_read();
            let rule = if mirrored {
                mirrored_read(&st.level, qd, &figs, &acc, metric)
            } else {
                None
            };
            let Some(mut e) = rule.or_else(|| array_rule(doc, st, test, access, metric, &figs)) else {
                continue;
            };
            if let Some(b) = busiest(&acc) {
                if e.limited_by.as_deref() != Some(b.path.as_str()) {
                    e.rule = format!("{}; busiest: {} ({} busy)", e.rule, b.path, pct(b.utilization));
                }
                e.limited_by = Some(b.path.clone());
            }
            if !(e.value.is_finite() && e.value > 0.0) {
                continue;
            }
            out.push(Analysis {
                kind: "array".into(),
                target: t.path.clone(),
                test: test.name.clone(),
                workload: test.workload,
                metric: metric.name().into(),
                measured,
                expected: e.value,
                efficiency: measured / e.value,
                rule: e.rule,
                limited_by: e.limited_by,
                from: st.members.clone(),
                members: shares(&acc),
            });
        }
    }
}

/// The lines of one dm layer.
fn analyze_layer(doc: &ResultDoc, t: &TargetInfo, st: &StackInfo, out: &mut Vec<Analysis>) {
    let Some(on) = st.on.as_deref() else { return };
    for test in doc
        .tests
        .iter()
        .filter(|x| x.target == t.path && x.status == Status::Ok)
    {
        for &metric in metrics(test.workload) {
            let Some(measured) = usable(metric.get(&test.summary)) else {
                continue;
            };
            let Some(beneath) = figure(doc, on, &test.name, metric) else {
                continue;
            };
            out.push(Analysis {
                kind: "layer".into(),
                target: t.path.clone(),
                test: test.name.clone(),
                workload: test.workload,
                metric: metric.name().into(),
                measured,
                expected: beneath,
                efficiency: measured / beneath,
                rule: format!(
                    "{}: against the device beneath ({on}, {}){}",
                    st.level,
                    metric.show(beneath),
                    layer_cost(&st.level, buffered(test))
                ),
                limited_by: None,
                from: vec![on.into()],
                members: shares(&accounting(test, &t.path, &[String::from(on)])),
            });
        }
    }
}

/// What a layer's direct-I/O figure shows of its own cost, in words to
/// add to its rule (nothing for a buffered test, whose page cache and
/// readahead have their say: see [`analyze_readahead`]).
fn layer_cost(level: &str, buffered: bool) -> &'static str {
    match (level, buffered) {
        (_, true) => "",
        ("crypt", false) => "; direct I/O: the cost is the cipher's CPU time",
        ("linear", false) => "; direct I/O: a linear map should cost nothing",
        _ => "",
    }
}

/// True when `test` read through the page cache: its main step's access,
/// or for a test without steps its workload and parameters.
fn buffered(test: &TestResult) -> bool {
    match main_step(test) {
        Some(main) => main.access == crate::io::Access::Buffered,
        None => match test.workload {
            Workload::BufferedRead | Workload::CachedRead => true,
            Workload::DirectRead => false,
            _ => !test.params.direct,
        },
    }
}

/// Readahead in words: `128 KiB`.
fn kib(bytes: u64) -> String {
    format!("{} KiB", bytes / 1024)
}

/// Why a layer costs more through the page cache: for each layer with
/// both buffered and direct read lines, when its worst buffered efficiency
/// is more than [`READAHEAD_GAP`] below its best direct one and its
/// `read_ahead_bytes` is smaller than the device's beneath, a `readahead`
/// line on the buffered test: `measured` the layer's figure, `expected`
/// the figure beneath, `efficiency` theirs, the rule naming both
/// readaheads and both efficiencies. A layer's direct reads show its own
/// cost (crypt: the cipher's CPU time; linear: none expected); the page
/// cache adds what readahead brings, and a layer with less of it than the
/// device beneath asks for smaller reads.
fn analyze_readahead(doc: &ResultDoc, out: &mut Vec<Analysis>) {
    let mut found = Vec::new();
    for t in doc
        .targets
        .iter()
        .filter(|t| t.stack.as_ref().is_some_and(|s| s.kind != "md"))
    {
        let Some(on) = t.stack.as_ref().and_then(|s| s.on.as_deref()) else {
            continue;
        };
        let Some(below) = doc.targets.iter().find(|x| x.path == on) else {
            continue;
        };
        let (Some(ra), Some(ra_below)) = (t.read_ahead_bytes, below.read_ahead_bytes) else {
            continue;
        };
        let lines: Vec<(&Analysis, bool)> = out
            .iter()
            .filter(|a| a.kind == "layer" && a.target == t.path && a.metric == Metric::ReadBps.name())
            .filter_map(|a| Some((a, buffered(find(doc, &a.target, &a.test)?))))
            .collect();
        let worst = lines
            .iter()
            .filter(|l| l.1)
            .map(|l| l.0)
            .reduce(|a, b| if b.efficiency < a.efficiency { b } else { a });
        let best_direct =
            lines
                .iter()
                .filter(|l| !l.1)
                .map(|l| l.0)
                .reduce(|a, b| if b.efficiency > a.efficiency { b } else { a });
        let (Some(w), Some(d)) = (worst, best_direct) else {
            continue;
        };
        if !(w.efficiency < d.efficiency * (1.0 - READAHEAD_GAP) && ra < ra_below) {
            continue;
        }
        found.push(Analysis {
            kind: "readahead".into(),
            rule: format!(
                "readahead {} on {} vs {} on {on}: buffered reads at {} of the device beneath ({}), direct reads at {} ({})",
                kib(ra),
                t.path,
                kib(ra_below),
                pct(w.efficiency),
                w.test,
                pct(d.efficiency),
                d.test
            ),
            limited_by: Some(t.path.clone()),
            from: vec![on.into()],
            members: Vec::new(),
            ..w.clone()
        });
    }
    out.extend(found);
}

/// The lines of one all-at-once run.
fn analyze_all_at_once(doc: &ResultDoc, a: &AllAtOnce, out: &mut Vec<Analysis>) {
    if a.results.is_empty() {
        return;
    }
    for &metric in metrics(a.workload) {
        // (disk, together, alone) for every disk, or no line.
        let per_disk: Option<Vec<(&str, f64, f64)>> = a
            .results
            .iter()
            .map(|r| {
                let together = usable(metric.get(&r.summary)).filter(|_| r.status == Status::Ok)?;
                let alone = figure(doc, &r.target, &a.test, metric)?;
                Some((r.target.as_str(), together, alone))
            })
            .collect();
        let Some(per_disk) = per_disk else { continue };
        let measured: f64 = per_disk.iter().map(|d| d.1).sum();
        let expected: f64 = per_disk.iter().map(|d| d.2).sum();
        let worst = per_disk
            .iter()
            .copied()
            .reduce(|x, y| if y.1 / y.2 < x.1 / x.2 { y } else { x })
            .map(|d| String::from(d.0));
        let alone: Vec<String> = per_disk.iter().map(|d| metric.show(d.2)).collect();
        out.push(Analysis {
            kind: "all_at_once".into(),
            target: "all at once".into(),
            test: a.test.clone(),
            workload: a.workload,
            metric: metric.name().into(),
            measured,
            expected,
            efficiency: measured / expected,
            rule: format!(
                "all at once: sum of each disk alone ({} disks: {})",
                per_disk.len(),
                alone.join(" + ")
            ),
            limited_by: worst,
            from: per_disk.iter().map(|d| String::from(d.0)).collect(),
            members: Vec::new(),
        });
    }
}

/// A test whose throughput in the second half of a step is this far below
/// its first half is flagged (`throughput_drop`): more than 20% (second
/// half mean < 0.8 x first half mean). A disk at a steady state varies by a
/// few percent from interval to interval under direct I/O (the samples'
/// `cv`); an SSD whose SLC write cache runs out falls by half or more, and
/// thermal throttling by tens of percent, so 20% over half a test is well
/// above the noise and well below what those do.
pub const THROUGHPUT_DROP: f64 = 0.20;

/// Intervals a step needs for the halves to be compared: two in each half.
pub const DROP_MIN_SAMPLES: usize = 4;

/// How long each half of a step must last for a drop to be reported (2 s):
/// a cache runs out and a drive heats up over seconds to minutes, while
/// a step of a second, sampled every 100 ms, swings by 20% on its own (a
/// throttled disk's burst, a queue filling up).
pub const DROP_MIN_HALF_NS: u64 = 2_000_000_000;

/// Workloads with a steady state to fall from: sequential and random
/// transfers. Not the page cache's (cached and buffered reads), nor
/// workloads whose steps change what they ask on purpose (seek profile,
/// zones, command overhead, the IOPS sweep, commit and slog patterns).
fn steady(w: Workload) -> bool {
    matches!(
        w,
        Workload::SeqRead
            | Workload::SeqWrite
            | Workload::RandRead
            | Workload::RandWrite
            | Workload::RandRw
            | Workload::DirectRead
    )
}

/// The counters whose rise during a run is reported (`counter_gained`):
/// the ones that mean the medium or the link is failing.
pub const WATCHED_COUNTERS: [&str; 7] = [
    "reallocated_sectors",
    "pending_sectors",
    "offline_uncorrectable",
    "crc_errors",
    "media_errors",
    "read_uncorrected_errors",
    "write_uncorrected_errors",
];

/// The health analysis of a finished document: for each disk with a
/// `health` record, a failed SMART status (or an NVMe critical warning),
/// ATA attributes at or below their threshold, watched counters
/// ([`WATCHED_COUNTERS`]) gained between before and after, the warning
/// temperature reached (any reading: before, after, the highest during a
/// test) or time spent above it (NVMe's warning temperature time rising);
/// and for every test a throughput drop ([`throughput_drops`]).
pub fn analyze_health(doc: &ResultDoc) -> Vec<HealthLine> {
    let mut out = Vec::new();
    for t in &doc.targets {
        if let Some(h) = &t.health {
            health_lines(&t.path, h, &mut out);
        }
    }
    for test in &doc.tests {
        // A rotational disk's sequential throughput falls across its range
        // by itself (the inner zones are slower): not a drop to report.
        let rotational = doc
            .targets
            .iter()
            .find(|t| t.path == test.target)
            .and_then(|t| t.rotational)
            .unwrap_or(false);
        if rotational && sequential(test.workload) {
            continue;
        }
        out.extend(throughput_drops(test));
    }
    out
}

/// Workloads that move through their range in order.
fn sequential(w: Workload) -> bool {
    matches!(
        w,
        Workload::SeqRead | Workload::SeqWrite | Workload::BufferedRead | Workload::DirectRead | Workload::Zones
    )
}

fn line(kind: &str, target: &str, test: Option<&str>, what: &str, message: String) -> HealthLine {
    HealthLine {
        kind: kind.into(),
        target: target.into(),
        test: test.map(Into::into),
        what: what.into(),
        before: None,
        after: None,
        limit: None,
        message,
    }
}

/// Why a reading's status is failed, in words.
fn failed_why(r: &HealthReading) -> String {
    match &r.nvme {
        Some(n) => format!(
            "NVMe critical warning {:#04x}: {}",
            n.critical_warning,
            crate::health::nvme_warning_text(n.critical_warning)
        ),
        None => "SMART RETURN STATUS: threshold exceeded".into(),
    }
}

fn health_lines(path: &str, h: &Health, out: &mut Vec<HealthLine>) {
    let before_failed = h.before.smart_passed == Some(false);
    let after_failed = h.after.as_ref().is_some_and(|a| a.smart_passed == Some(false));
    if before_failed || after_failed {
        let when = match (before_failed, after_failed) {
            (true, true) => "before and after the run",
            (true, false) => "before the run",
            _ => "after the run (it passed before)",
        };
        let r = if after_failed {
            h.after.as_ref().unwrap_or(&h.before)
        } else {
            &h.before
        };
        out.push(line(
            "smart_failed",
            path,
            None,
            "smart_status",
            format!("{path}: health status failed {when}: {}", failed_why(r)),
        ));
    }
    let last = h.after.as_ref().unwrap_or(&h.before);
    for a in last.attributes.iter().filter(|a| a.failing) {
        let name = a.name.as_deref().unwrap_or("unknown");
        let mut l = line(
            "attribute_failing",
            path,
            None,
            name,
            format!(
                "{path}: SMART attribute {} ({name}) at {} is at or below its threshold {}",
                a.id,
                a.current,
                a.threshold.unwrap_or(0)
            ),
        );
        l.after = Some(f64::from(a.current));
        l.limit = a.threshold.map(f64::from);
        out.push(l);
    }
    if let Some(after) = &h.after {
        for name in WATCHED_COUNTERS {
            let (Some(&b), Some(&a)) = (h.before.counters.get(name), after.counters.get(name)) else {
                continue;
            };
            if a > b {
                let mut l = line(
                    "counter_gained",
                    path,
                    None,
                    name,
                    format!("{path}: {name} rose from {b} to {a} during the run (+{})", a - b),
                );
                l.before = Some(b as f64);
                l.after = Some(a as f64);
                out.push(l);
            }
        }
    }
    temperature_lines(path, h, out);
}

fn temperature_lines(path: &str, h: &Health, out: &mut Vec<HealthLine>) {
    let warning = h
        .before
        .warning_temperature_c
        .or(h.after.as_ref().and_then(|a| a.warning_temperature_c));
    if let Some(w) = warning {
        // The highest reading, and where it was taken.
        let mut readings: Vec<(Option<i32>, Option<&str>)> = vec![(h.before.temperature_c, None)];
        readings.extend(h.tests.iter().map(|t| (t.max_temperature_c, Some(t.test.as_str()))));
        readings.push((h.after.as_ref().and_then(|a| a.temperature_c), None));
        let mut hot: Option<(i32, Option<&str>)> = None;
        for (t, test) in readings {
            if let Some(t) = t {
                if hot.is_none_or(|(m, _)| t > m) {
                    hot = Some((t, test));
                }
            }
        }
        if let Some((t, test)) = hot.filter(|(t, _)| *t >= w) {
            let during = test.map_or_else(|| "a health reading".into(), |n| format!("test {n}"));
            let mut l = line(
                "temperature",
                path,
                test,
                "temperature_c",
                format!("{path}: reached {t} °C, at or above its warning temperature {w} °C ({during})"),
            );
            l.after = Some(f64::from(t));
            l.limit = Some(f64::from(w));
            out.push(l);
            return;
        }
    }
    // The device's own count of minutes above its warning temperature.
    let minutes = "warning_temperature_minutes";
    if let Some(after) = &h.after {
        if let (Some(&b), Some(&a)) = (h.before.counters.get(minutes), after.counters.get(minutes)) {
            if a > b {
                let mut l = line(
                    "temperature",
                    path,
                    None,
                    minutes,
                    format!(
                        "{path}: {} minute(s) above its warning temperature during the run (the device's count: {b} -> {a})",
                        a - b
                    ),
                );
                l.before = Some(b as f64);
                l.after = Some(a as f64);
                out.push(l);
            }
        }
    }
}

/// The means of the first and the second half of `v` (an odd middle
/// sample left out), when each half has at least two samples.
pub fn halves(v: &[f64]) -> Option<(f64, f64)> {
    if v.len() < DROP_MIN_SAMPLES {
        return None;
    }
    let h = v.len() / 2;
    let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
    Some((mean(&v[..h]), mean(&v[v.len() - h..])))
}

/// `throughput_drop` lines of one test: each step and direction whose
/// per-interval throughput ([`crate::result::Samples`]) fell in its second
/// half by more than [`THROUGHPUT_DROP`] of its first. Only tests that ran
/// (`ok` or `timeout`) of a [`steady`] workload, with halves of at least
/// [`DROP_MIN_HALF_NS`].
pub fn throughput_drops(test: &TestResult) -> Vec<HealthLine> {
    let mut out = Vec::new();
    if !matches!(test.status, Status::Ok | Status::Timeout { .. }) || !steady(test.workload) {
        return out;
    }
    for s in &test.steps {
        for (dir, d) in [("read", &s.read), ("write", &s.write)] {
            let Some(d) = d else { continue };
            let half_ns = (d.samples.bytes_per_sec.len() / 2) as u64 * d.samples.interval_ns;
            if half_ns < DROP_MIN_HALF_NS {
                continue;
            }
            let Some((first, second)) = halves(&d.samples.bytes_per_sec) else {
                continue;
            };
            if first > 0.0 && second < first * (1.0 - THROUGHPUT_DROP) {
                let what = format!("{dir}_bytes_per_sec");
                let mut l = line(
                    "throughput_drop",
                    &test.target,
                    Some(&test.name),
                    &what,
                    format!(
                        "{} on {}: {dir} throughput fell {:.0}% in the second half of step {} \
                         ({:.1} -> {:.1} MB/s over {} intervals of {} ms; more than {:.0}%: \
                         thermal throttling, or an SSD's cache running out?)",
                        test.name,
                        test.target,
                        (1.0 - second / first) * 100.0,
                        s.label,
                        first / MB as f64,
                        second / MB as f64,
                        d.samples.bytes_per_sec.len(),
                        d.samples.interval_ns / 1_000_000,
                        THROUGHPUT_DROP * 100.0
                    ),
                );
                l.before = Some(first);
                l.after = Some(second);
                l.limit = Some(first * (1.0 - THROUGHPUT_DROP));
                out.push(l);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Host, RunInfo, Tool, SCHEMA};
    use crate::spec::Params;
    use crate::units::Bytes;
    use alloc::collections::BTreeMap;

    const MBS: f64 = 1e6;

    fn disk(path: &str, size: u64) -> TargetInfo {
        TargetInfo {
            path: path.into(),
            kind: "block".into(),
            size_bytes: size,
            logical_block_size: 512,
            physical_block_size: 512,
            ..TargetInfo::default()
        }
    }

    fn md(path: &str, level: &str, members: &[&str], layout: Option<&str>) -> TargetInfo {
        TargetInfo {
            stack: Some(StackInfo {
                kind: "md".into(),
                name: "a".into(),
                level: level.into(),
                members: members.iter().map(|m| String::from(*m)).collect(),
                on: None,
                chunk_bytes: Some(512 << 10),
                layout: layout.map(String::from),
                options: BTreeMap::new(),
                notes: Vec::new(),
                mode: None,
            }),
            ..disk(path, 1 << 30)
        }
    }

    fn dm(path: &str, kind: &str, on: &str) -> TargetInfo {
        TargetInfo {
            stack: Some(StackInfo {
                kind: "dm".into(),
                name: "l".into(),
                level: kind.into(),
                on: Some(on.into()),
                ..StackInfo::default()
            }),
            ..disk(path, 1 << 30)
        }
    }

    /// A test named after its workload with one figure set.
    fn test(target: &str, workload: Workload, metric: Metric, v: f64) -> TestResult {
        let mut summary = Summary::default();
        match metric {
            Metric::ReadBps => summary.read_bytes_per_sec = Some(v),
            Metric::WriteBps => summary.write_bytes_per_sec = Some(v),
            Metric::ReadIops => summary.read_iops = Some(v),
            Metric::WriteIops => summary.write_iops = Some(v),
        }
        TestResult {
            name: workload.name().into(),
            workload,
            target: target.into(),
            params: Params::defaults(),
            status: Status::Ok,
            steps: Vec::new(),
            summary,
        }
    }

    fn with_qd(mut t: TestResult, qd: u32) -> TestResult {
        t.params.iodepth = qd;
        t
    }

    fn doc(targets: Vec<TargetInfo>, tests: Vec<TestResult>) -> ResultDoc {
        ResultDoc {
            schema: SCHEMA.into(),
            tool: Tool {
                name: "bootbench".into(),
                version: "0".into(),
            },
            run: RunInfo {
                profile: None,
                config_source: "t".into(),
                started_unix_ns: 0,
                duration_ns: 0,
                seed: 1,
                simulated: false,
                status: "ok".into(),
                error: None,
                bound_ns: None,
                plan_id: None,
            },
            host: Host::default(),
            targets,
            tests,
            all_at_once: Vec::new(),
            analysis: Vec::new(),
            health_analysis: Vec::new(),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn raid0_of_20_and_10_expects_2_x_10_limited_by_the_slow_member() {
        let d = doc(
            vec![
                disk("/dev/a", 1 << 30),
                disk("/dev/b", 1 << 30),
                md("/dev/md0", "raid0", &["/dev/a", "/dev/b"], None),
            ],
            vec![
                test("/dev/a", Workload::SeqRead, Metric::ReadBps, 20.0 * MBS),
                test("/dev/b", Workload::SeqRead, Metric::ReadBps, 10.0 * MBS),
                test("/dev/md0", Workload::SeqRead, Metric::ReadBps, 19.0 * MBS),
            ],
        );
        let a = analyze(&d);
        assert_eq!(a.len(), 1, "{a:?}");
        let l = &a[0];
        assert_eq!(
            (l.kind.as_str(), l.target.as_str(), l.test.as_str()),
            ("array", "/dev/md0", "seq_read")
        );
        assert_eq!(l.metric, "read_bytes_per_sec");
        assert!(close(l.expected, 20.0 * MBS), "{}", l.expected);
        assert!(close(l.measured, 19.0 * MBS));
        assert!(close(l.efficiency, 0.95), "{}", l.efficiency);
        assert_eq!(l.limited_by.as_deref(), Some("/dev/b"));
        assert_eq!(l.rule, "raid0: N x slowest member (2 x 10.0 MB/s)");
        assert_eq!(l.from, vec!["/dev/a", "/dev/b"]);
    }

    /// `t` with a main step whose accounting beneath `parent` is
    /// `(member, bytes read, bytes written, utilization)`; shares are of
    /// the bytes, as the capture computes them.
    fn with_members(mut t: TestResult, parent: &str, m: &[(&str, u64, u64, f64)]) -> TestResult {
        use crate::result::{MemberSamples, StepResult};
        let total: u64 = m.iter().map(|x| x.1 + x.2).sum();
        #[allow(clippy::cast_precision_loss)]
        let members = m
            .iter()
            .map(|&(path, r, w, u)| MemberIo {
                path: path.into(),
                parent: parent.into(),
                reads: r / 4096,
                writes: w / 4096,
                read_bytes: r,
                write_bytes: w,
                busy_ns: 0,
                window_ns: 1,
                utilization: u,
                share: if total == 0 { 0.0 } else { (r + w) as f64 / total as f64 },
                samples: MemberSamples::default(),
            })
            .collect();
        t.steps = vec![StepResult {
            label: MAIN_LABEL.into(),
            access: crate::io::Access::Direct,
            bs: 1 << 20,
            iodepth: 1,
            jobs: 1,
            range_start: 0,
            range_end: 0,
            runtime_ns: 1,
            read: None,
            write: None,
            flush: None,
            verified_bytes: None,
            filled_bytes: None,
            passes: Vec::new(),
            chosen_pass: None,
            lowest_lat_pass: None,
            lowest_lat_mean_ns: None,
            engine: None,
            members,
        }];
        t
    }

    /// raid1 with the kernel's counters: a one-reader sequential read is
    /// expected at the speed of the mirror md read from, whichever it is
    /// (the post's fast-first array read at the fast disk's speed, the
    /// slow-first at the slow disk's), and the line names it and carries
    /// both members' shares. Without counters: the slowest, as before.
    #[test]
    fn raid1_reads_are_expected_from_the_mirror_md_read_from() {
        let targets = || {
            vec![
                disk("/dev/fast", 1 << 30),
                disk("/dev/slow", 1 << 30),
                md("/dev/md0", "raid1", &["/dev/fast", "/dev/slow"], None),
                md("/dev/md1", "raid1", &["/dev/slow", "/dev/fast"], None),
            ]
        };
        let alone = || {
            vec![
                test("/dev/fast", Workload::SeqRead, Metric::ReadBps, 130.0 * MBS),
                test("/dev/slow", Workload::SeqRead, Metric::ReadBps, 70.0 * MBS),
            ]
        };
        let arr = |path, v| test(path, Workload::SeqRead, Metric::ReadBps, v);
        let mut tests = alone();
        tests.push(with_members(
            arr("/dev/md0", 128.0 * MBS),
            "/dev/md0",
            &[("/dev/fast", 512 << 20, 0, 0.99), ("/dev/slow", 0, 0, 0.0)],
        ));
        tests.push(with_members(
            arr("/dev/md1", 69.0 * MBS),
            "/dev/md1",
            &[("/dev/slow", 256 << 20, 0, 0.98), ("/dev/fast", 0, 0, 0.0)],
        ));
        let a = analyze(&doc(targets(), tests));
        assert_eq!(a.len(), 2, "{a:?}");
        let (fast_first, slow_first) = (&a[0], &a[1]);
        assert!(close(fast_first.expected, 130.0 * MBS), "{fast_first:?}");
        assert_eq!(fast_first.limited_by.as_deref(), Some("/dev/fast"));
        assert_eq!(
            fast_first.rule,
            "raid1 read: the member md read from (/dev/fast 100% at 130.0 MB/s; the kernel's counters)"
        );
        assert!(close(slow_first.expected, 70.0 * MBS), "{slow_first:?}");
        assert_eq!(slow_first.limited_by.as_deref(), Some("/dev/slow"));
        let m: Vec<(&str, f64)> = slow_first.members.iter().map(|m| (m.path.as_str(), m.share)).collect();
        assert_eq!(m, [("/dev/slow", 1.0), ("/dev/fast", 0.0)], "in member order");

        // No counters: the conservative rule, no members.
        let mut tests = alone();
        tests.push(arr("/dev/md0", 128.0 * MBS));
        let a = analyze(&doc(targets(), tests));
        assert!(close(a[0].expected, 70.0 * MBS), "{a:?}");
        assert!(a[0].members.is_empty());
    }

    /// Reads spread over both mirrors: in turn at QD 1 (1 / sum(share /
    /// figure)), at once with more in flight (min(figure / share)).
    #[test]
    fn raid1_reads_from_both_mirrors_are_weighted_by_their_share() {
        let targets = vec![
            disk("/dev/a", 1 << 30),
            disk("/dev/b", 1 << 30),
            md("/dev/md0", "raid1", &["/dev/a", "/dev/b"], None),
        ];
        for (qd, want) in [(1, 1.0 / (0.5 / 100.0 + 0.5 / 50.0)), (8, 100.0)] {
            let tests = vec![
                with_qd(test("/dev/a", Workload::RandRead, Metric::ReadIops, 100.0), qd),
                with_qd(test("/dev/b", Workload::RandRead, Metric::ReadIops, 50.0), qd),
                with_members(
                    with_qd(test("/dev/md0", Workload::RandRead, Metric::ReadIops, 90.0), qd),
                    "/dev/md0",
                    &[("/dev/a", 1 << 20, 0, 0.5), ("/dev/b", 1 << 20, 0, 0.5)],
                ),
            ];
            let a = analyze(&doc(targets.clone(), tests));
            assert!(close(a[0].expected, want), "QD {qd}: {a:?}");
            assert_eq!(a[0].limited_by.as_deref(), Some("/dev/b"), "most work for its speed");
        }
    }

    /// `limited_by` names a member the counters show busy ([`BUSY`]) even
    /// where the rule's slowest is another; a member below it changes
    /// nothing.
    #[test]
    fn the_busiest_member_limits_the_array() {
        let targets = vec![
            disk("/dev/a", 1 << 30),
            disk("/dev/b", 1 << 30),
            md("/dev/md0", "raid0", &["/dev/a", "/dev/b"], None),
        ];
        for (util_a, want) in [(0.97, "/dev/a"), (0.5, "/dev/b")] {
            let tests = vec![
                test("/dev/a", Workload::SeqRead, Metric::ReadBps, 20.0 * MBS),
                test("/dev/b", Workload::SeqRead, Metric::ReadBps, 10.0 * MBS),
                with_members(
                    test("/dev/md0", Workload::SeqRead, Metric::ReadBps, 15.0 * MBS),
                    "/dev/md0",
                    &[("/dev/a", 1 << 20, 0, util_a), ("/dev/b", 1 << 20, 0, 0.6)],
                ),
            ];
            let a = analyze(&doc(targets.clone(), tests));
            assert_eq!(a[0].limited_by.as_deref(), Some(want), "{a:?}");
            assert!(close(a[0].expected, 20.0 * MBS), "the rule's figure stays: {a:?}");
            assert_eq!(
                a[0].rule.contains("busiest: /dev/a (97% busy)"),
                want == "/dev/a",
                "{a:?}"
            );
        }
    }

    /// (level, layout, members' figures in MB/s, workload, expected MB/s).
    type SeqCase<'a> = (&'a str, Option<&'a str>, &'a [f64], Workload, f64);

    /// Sequential rules, one case per level and direction.
    #[test]
    fn sequential_rules_per_level() {
        let cases: [SeqCase<'_>; 12] = [
            ("raid0", None, &[30.0, 10.0, 20.0], Workload::SeqRead, 30.0),
            ("raid0", None, &[30.0, 10.0, 20.0], Workload::SeqWrite, 30.0),
            ("raid1", None, &[30.0, 10.0], Workload::SeqRead, 10.0),
            ("raid1", None, &[30.0, 10.0], Workload::SeqWrite, 10.0),
            ("raid5", None, &[30.0, 10.0, 20.0], Workload::SeqRead, 20.0),
            ("raid5", None, &[10.0, 10.0, 10.0, 10.0], Workload::SeqWrite, 30.0),
            ("raid6", None, &[10.0, 10.0, 10.0, 10.0], Workload::SeqRead, 20.0),
            ("raid10", None, &[10.0, 20.0, 20.0, 20.0], Workload::SeqRead, 20.0),
            ("raid10", Some("near2"), &[10.0, 20.0, 20.0], Workload::SeqRead, 15.0),
            (
                "raid10",
                Some("far2"),
                &[10.0, 20.0, 20.0, 20.0],
                Workload::SeqRead,
                40.0,
            ),
            (
                "raid10",
                Some("far2"),
                &[10.0, 20.0, 20.0, 20.0],
                Workload::SeqWrite,
                20.0,
            ),
            ("raid0", None, &[10.0, 10.0], Workload::DirectRead, 20.0),
        ];
        for (level, layout, figs, w, want) in cases {
            let metric = metrics(w)[0];
            let names: Vec<String> = (0..figs.len()).map(|i| format!("/dev/m{i}")).collect();
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let mut targets: Vec<TargetInfo> = refs.iter().map(|p| disk(p, 1 << 30)).collect();
            targets.push(md("/dev/md0", level, &refs, layout));
            let mut tests: Vec<TestResult> = refs
                .iter()
                .zip(figs)
                .map(|(p, v)| test(p, w, metric, v * MBS))
                .collect();
            tests.push(test("/dev/md0", w, metric, 10.0 * MBS));
            let a = analyze(&doc(targets, tests));
            assert_eq!(a.len(), 1, "{level} {layout:?} {w:?}: {a:?}");
            assert!(
                close(a[0].expected, want * MBS),
                "{level} {layout:?} {w:?}: {}",
                a[0].expected
            );
            assert!(close(a[0].efficiency, 10.0 / want), "{level} {w:?}");
            let slowest = figs
                .iter()
                .enumerate()
                .min_by(|x, y| x.1.total_cmp(y.1))
                .map(|(i, _)| names[i].clone());
            assert_eq!(a[0].limited_by, slowest, "{level} {w:?}");
            assert!(a[0].rule.starts_with(level), "{}", a[0].rule);
        }
    }

    /// Random rules: (level, members' IOPS, workload, QD, expected IOPS).
    #[test]
    fn random_rules_per_level_and_queue_depth() {
        let cases: [(&str, &[f64], Workload, u32, f64); 10] = [
            ("raid0", &[100.0, 200.0], Workload::RandRead, 1, 100.0),
            ("raid0", &[100.0, 200.0], Workload::RandRead, 32, 200.0),
            ("raid0", &[100.0, 200.0, 300.0], Workload::RandWrite, 2, 200.0),
            ("raid1", &[100.0, 200.0], Workload::RandRead, 32, 100.0),
            ("raid1", &[100.0, 200.0], Workload::RandWrite, 32, 100.0),
            ("raid5", &[100.0, 100.0, 100.0, 100.0], Workload::RandRead, 32, 400.0),
            ("raid5", &[100.0, 100.0, 100.0, 100.0], Workload::RandWrite, 32, 100.0),
            ("raid5", &[100.0, 100.0, 100.0, 100.0], Workload::RandWrite, 1, 50.0),
            (
                "raid6",
                &[120.0, 120.0, 120.0, 120.0, 120.0, 120.0],
                Workload::RandWrite,
                32,
                120.0,
            ),
            ("raid10", &[100.0, 100.0, 100.0, 100.0], Workload::RandWrite, 32, 200.0),
        ];
        for (level, figs, w, qd, want) in cases {
            let metric = metrics(w)[0];
            let names: Vec<String> = (0..figs.len()).map(|i| format!("/dev/m{i}")).collect();
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let mut targets: Vec<TargetInfo> = refs.iter().map(|p| disk(p, 1 << 30)).collect();
            targets.push(md("/dev/md0", level, &refs, None));
            let mut tests: Vec<TestResult> = refs
                .iter()
                .zip(figs)
                .map(|(p, v)| with_qd(test(p, w, metric, *v), qd))
                .collect();
            tests.push(with_qd(test("/dev/md0", w, metric, 50.0), qd));
            let a = analyze(&doc(targets, tests));
            assert_eq!(a.len(), 1, "{level} {w:?} QD{qd}: {a:?}");
            assert!(
                close(a[0].expected, want),
                "{level} {w:?} QD{qd}: {} != {want}",
                a[0].expected
            );
            assert_eq!(a[0].metric, metric.name());
        }
    }

    #[test]
    fn linear_sequential_uses_the_member_the_range_starts_on() {
        let m = 64 << 20;
        let targets = vec![
            disk("/dev/a", m),
            disk("/dev/b", m),
            md("/dev/md0", "linear", &["/dev/a", "/dev/b"], None),
        ];
        let mut on_b = test("/dev/md0", Workload::SeqRead, Metric::ReadBps, 9.0 * MBS);
        on_b.params.offset = Bytes(m + 4096);
        let base = vec![
            test("/dev/a", Workload::SeqRead, Metric::ReadBps, 20.0 * MBS),
            test("/dev/b", Workload::SeqRead, Metric::ReadBps, 10.0 * MBS),
        ];
        let mut tests = base.clone();
        tests.push(test("/dev/md0", Workload::SeqRead, Metric::ReadBps, 19.0 * MBS));
        let a = analyze(&doc(targets.clone(), tests));
        assert_eq!(a.len(), 1);
        assert!(close(a[0].expected, 20.0 * MBS), "the first member at offset 0");
        assert_eq!(a[0].limited_by.as_deref(), Some("/dev/a"));
        let mut tests = base;
        tests.push(on_b);
        let a = analyze(&doc(targets, tests));
        assert!(close(a[0].expected, 10.0 * MBS), "past the first member: the second");
        assert_eq!(a[0].limited_by.as_deref(), Some("/dev/b"));
    }

    #[test]
    fn linear_random_weights_each_member_by_its_share() {
        // Members of 1 and 3 units: a quarter of the requests at 100 IOPS,
        // three quarters at 300: 1 / (0.25/100 + 0.75/300) = 200.
        let u = 16 << 20;
        let targets = vec![
            disk("/dev/a", u),
            disk("/dev/b", 3 * u),
            md("/dev/md0", "linear", &["/dev/a", "/dev/b"], None),
        ];
        let tests = vec![
            test("/dev/a", Workload::RandRead, Metric::ReadIops, 100.0),
            test("/dev/b", Workload::RandRead, Metric::ReadIops, 300.0),
            test("/dev/md0", Workload::RandRead, Metric::ReadIops, 190.0),
        ];
        let a = analyze(&doc(targets, tests));
        assert_eq!(a.len(), 1);
        assert!(close(a[0].expected, 200.0), "{}", a[0].expected);
        assert_eq!(a[0].limited_by, None);
    }

    #[test]
    fn layers_are_a_ratio_to_the_device_beneath() {
        let targets = vec![
            disk("/dev/a", 1 << 30),
            dm("/dev/dm-0", "crypt", "/dev/a"),
            dm("/dev/dm-1", "linear", "/dev/dm-0"),
        ];
        let tests = vec![
            test("/dev/a", Workload::SeqRead, Metric::ReadBps, 100.0 * MBS),
            test("/dev/a", Workload::RandRead, Metric::ReadIops, 1000.0),
            test("/dev/dm-0", Workload::SeqRead, Metric::ReadBps, 80.0 * MBS),
            test("/dev/dm-0", Workload::RandRead, Metric::ReadIops, 900.0),
            test("/dev/dm-1", Workload::SeqRead, Metric::ReadBps, 80.0 * MBS),
        ];
        let a = analyze(&doc(targets, tests));
        let got: Vec<(&str, &str, f64)> = a
            .iter()
            .map(|l| (l.target.as_str(), l.test.as_str(), l.efficiency))
            .collect();
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!((got[0].0, got[0].1), ("/dev/dm-0", "seq_read"));
        assert!(close(got[0].2, 0.8));
        assert_eq!((got[1].0, got[1].1), ("/dev/dm-0", "rand_read"));
        assert!(close(got[1].2, 0.9));
        assert_eq!(got[2].0, "/dev/dm-1");
        assert!(close(got[2].2, 1.0), "a layer on a layer: against that layer");
        assert_eq!(a[0].kind, "layer");
        assert_eq!(
            a[0].rule,
            "crypt: against the device beneath (/dev/a, 100.0 MB/s); direct I/O: the cost is the cipher's CPU time"
        );
        assert_eq!(a[2].from, vec!["/dev/dm-0"]);
    }

    /// A linear layer on an array: buffered reads (hdparm -t) at a third of
    /// the array's, direct ones at par, and a smaller readahead on the
    /// layer: a `readahead` line naming both readaheads. The same with
    /// equal readaheads, or buffered reads at par: none.
    #[test]
    fn a_layer_slow_through_the_page_cache_with_less_readahead_says_so() {
        let with_ra = |mut t: TargetInfo, kib: u64| {
            t.read_ahead_bytes = Some(kib * 1024);
            t
        };
        let case = |layer_ra: u64, buffered_layer: f64| {
            let targets = vec![
                with_ra(md("/dev/md0", "raid5", &[], None), 3072),
                with_ra(dm("/dev/dm-0", "linear", "/dev/md0"), layer_ra),
            ];
            let tests = vec![
                test("/dev/md0", Workload::BufferedRead, Metric::ReadBps, 300.0 * MBS),
                test("/dev/md0", Workload::DirectRead, Metric::ReadBps, 280.0 * MBS),
                test("/dev/dm-0", Workload::BufferedRead, Metric::ReadBps, buffered_layer),
                test("/dev/dm-0", Workload::DirectRead, Metric::ReadBps, 277.0 * MBS),
            ];
            analyze(&doc(targets, tests))
                .into_iter()
                .filter(|a| a.kind == "readahead")
                .collect::<Vec<_>>()
        };
        let a = case(128, 100.0 * MBS);
        assert_eq!(a.len(), 1, "{a:?}");
        assert_eq!(
            (a[0].target.as_str(), a[0].test.as_str()),
            ("/dev/dm-0", "buffered_read")
        );
        assert!(close(a[0].efficiency, 1.0 / 3.0), "{a:?}");
        assert_eq!(
            a[0].rule,
            "readahead 128 KiB on /dev/dm-0 vs 3072 KiB on /dev/md0: buffered reads at 33% of the device \
             beneath (buffered_read), direct reads at 99% (direct_read)"
        );
        assert!(case(3072, 100.0 * MBS).is_empty(), "same readahead: something else");
        assert!(case(128, 290.0 * MBS).is_empty(), "buffered at par");
    }

    #[test]
    fn missing_or_failed_member_figures_give_no_line() {
        let targets = vec![
            disk("/dev/a", 1 << 30),
            disk("/dev/b", 1 << 30),
            md("/dev/md0", "raid0", &["/dev/a", "/dev/b"], None),
        ];
        let array = test("/dev/md0", Workload::SeqRead, Metric::ReadBps, 19.0 * MBS);
        let a_ok = test("/dev/a", Workload::SeqRead, Metric::ReadBps, 20.0 * MBS);
        let mut b_failed = test("/dev/b", Workload::SeqRead, Metric::ReadBps, 10.0 * MBS);
        b_failed.status = Status::Error {
            errno: 5,
            op: crate::io::Op::Read,
            offset: 0,
            message: "EIO".into(),
        };
        let mut b_other_name = test("/dev/b", Workload::SeqRead, Metric::ReadBps, 10.0 * MBS);
        b_other_name.name = "seq_read_other".into();
        let b_no_figure = test("/dev/b", Workload::SeqRead, Metric::WriteBps, 10.0 * MBS);
        for (why, b) in [
            ("failed", Some(b_failed)),
            ("another test", Some(b_other_name)),
            ("no figure", Some(b_no_figure)),
            ("not run", None),
        ] {
            let mut tests = vec![a_ok.clone(), array.clone()];
            tests.extend(b);
            assert_eq!(analyze(&doc(targets.clone(), tests)), Vec::new(), "{why}");
        }
        // A layer whose device beneath has no figure: no line either.
        let t = vec![disk("/dev/a", 1 << 30), dm("/dev/dm-0", "crypt", "/dev/a")];
        let tests = vec![test("/dev/dm-0", Workload::SeqRead, Metric::ReadBps, 1.0)];
        assert_eq!(analyze(&doc(t, tests)), Vec::new());
    }

    #[test]
    fn cached_reads_and_arrays_without_a_rule_give_no_line() {
        let targets = vec![
            disk("/dev/a", 1 << 30),
            disk("/dev/b", 1 << 30),
            md("/dev/md0", "raid0", &["/dev/a", "/dev/b"], None),
        ];
        let mut tests = Vec::new();
        for w in [Workload::CachedRead, Workload::Zones] {
            for p in ["/dev/a", "/dev/b", "/dev/md0"] {
                tests.push(test(p, w, Metric::ReadBps, 5.0 * MBS));
            }
        }
        assert_eq!(analyze(&doc(targets, tests)), Vec::new());
    }

    #[test]
    fn all_at_once_is_the_sum_together_against_the_sum_alone() {
        let targets = vec![disk("/dev/a", 1 << 30), disk("/dev/b", 1 << 30)];
        let tests = vec![
            test("/dev/a", Workload::SeqRead, Metric::ReadBps, 20.0 * MBS),
            test("/dev/b", Workload::SeqRead, Metric::ReadBps, 10.0 * MBS),
        ];
        let mut d = doc(targets, tests);
        d.all_at_once.push(AllAtOnce {
            test: "seq_read".into(),
            workload: Workload::SeqRead,
            results: vec![
                test("/dev/a", Workload::SeqRead, Metric::ReadBps, 18.0 * MBS),
                test("/dev/b", Workload::SeqRead, Metric::ReadBps, 6.0 * MBS),
            ],
        });
        let a = analyze(&d);
        assert_eq!(a.len(), 1, "{a:?}");
        assert_eq!(a[0].kind, "all_at_once");
        assert!(close(a[0].measured, 24.0 * MBS));
        assert!(close(a[0].expected, 30.0 * MBS));
        assert!(close(a[0].efficiency, 0.8));
        assert_eq!(a[0].limited_by.as_deref(), Some("/dev/b"), "b kept 60%, a 90%");
        assert_eq!(
            a[0].rule,
            "all at once: sum of each disk alone (2 disks: 20.0 MB/s + 10.0 MB/s)"
        );
        // One disk without its figure alone: no line.
        d.tests.pop();
        assert_eq!(analyze(&d), Vec::new());
    }

    #[test]
    fn factors_and_units_in_words() {
        assert_eq!(factor(2.0), "2");
        assert_eq!(factor(1.5), "1.5");
        assert_eq!(factor(0.25), "0.25");
        assert_eq!(Metric::ReadBps.show(10_049_999.0), "10.0 MB/s");
        assert_eq!(Metric::WriteIops.show(812.4), "812 IOPS");
        assert_eq!(Metric::from_name("write_iops"), Some(Metric::WriteIops));
    }

    fn model(mut t: TargetInfo, m: &str, fw: Option<&str>) -> TargetInfo {
        t.model = Some(m.into());
        t.firmware = fw.map(String::from);
        t
    }

    /// The odd disk out: in a group of one model and firmware, a disk more
    /// than 10% below the median gets a line and the others none; exactly
    /// 10% below is not; a disk of another model, one without a firmware,
    /// and an array are no part of the group; a group of one gives none;
    /// a test that failed on one disk of the group gives none for it.
    #[test]
    fn outliers_against_the_median_of_model_and_firmware() {
        let t = |p: &str, v: f64| test(p, Workload::SeqRead, Metric::ReadBps, v * MBS);
        let d = doc(
            vec![
                model(disk("/dev/a", 1 << 30), "M1", Some("F1")),
                model(disk("/dev/b", 1 << 30), "M1", Some("F1")),
                model(disk("/dev/c", 1 << 30), "M1", Some("F1")),
                model(disk("/dev/d", 1 << 30), "M1", Some("F2")),
                model(disk("/dev/e", 1 << 30), "M1", None),
                md("/dev/md0", "raid0", &["/dev/a", "/dev/b"], None),
            ],
            vec![
                t("/dev/a", 100.0),
                t("/dev/b", 95.0),
                t("/dev/c", 80.0),
                t("/dev/d", 10.0),
                t("/dev/e", 10.0),
                t("/dev/md0", 10.0),
            ],
        );
        let lines: Vec<Analysis> = analyze(&d).into_iter().filter(|l| l.kind == "outlier").collect();
        assert_eq!(lines.len(), 1, "{lines:?}");
        let l = &lines[0];
        assert_eq!(
            (l.target.as_str(), l.test.as_str(), l.metric.as_str()),
            ("/dev/c", "seq_read", "read_bytes_per_sec")
        );
        assert!(close(l.measured, 80.0 * MBS) && close(l.expected, 95.0 * MBS));
        assert!(close(l.efficiency, 80.0 / 95.0));
        assert_eq!(l.from, vec!["/dev/a", "/dev/b", "/dev/c"]);
        assert_eq!(
            l.rule,
            "outlier: 16% below the median of its group (3 disks of model M1, firmware F1: 95.0 MB/s)"
        );
        assert_eq!(l.limited_by, None);

        // The post's pair: 59 and 83 MB/s, median 71; 90 against 100 is 5%
        // below their median of 95: none.
        for (slow, fast, want) in [(59.0, 83.0, true), (90.0, 100.0, false)] {
            let d = doc(
                vec![
                    model(disk("/dev/a", 1 << 30), "M", Some("F")),
                    model(disk("/dev/b", 1 << 30), "M", Some("F")),
                ],
                vec![t("/dev/a", slow), t("/dev/b", fast)],
            );
            let lines: Vec<Analysis> = analyze(&d).into_iter().filter(|l| l.kind == "outlier").collect();
            assert_eq!(lines.len(), usize::from(want), "{slow} and {fast}: {lines:?}");
            if want {
                assert_eq!(lines[0].target, "/dev/a");
                assert!(close(lines[0].expected, 71.0 * MBS));
            }
        }
        // Exactly 10% below the median of three: none.
        let d = doc(
            (["/dev/a", "/dev/b", "/dev/c"].map(|p| model(disk(p, 1 << 30), "M", Some("F")))).to_vec(),
            vec![t("/dev/a", 90.0), t("/dev/b", 100.0), t("/dev/c", 110.0)],
        );
        assert!(analyze(&d).iter().all(|l| l.kind != "outlier"));
        // A failed test on one disk of the group: no line for that test.
        let mut failed = t("/dev/b", 95.0);
        failed.status = Status::Error {
            errno: 5,
            op: crate::io::Op::Read,
            offset: 0,
            message: "read at offset 0 failed: errno 5".into(),
        };
        let d = doc(
            (["/dev/a", "/dev/b", "/dev/c"].map(|p| model(disk(p, 1 << 30), "M", Some("F")))).to_vec(),
            vec![t("/dev/a", 100.0), failed, t("/dev/c", 50.0)],
        );
        assert!(analyze(&d).iter().all(|l| l.kind != "outlier"));
    }

    /// The fleet over two documents: one model and firmware's disks from
    /// both in one group (59, 83 and 80 MB/s: median 80, the 59 an
    /// outlier), a model with one disk and an array in none, the same
    /// disk in two documents twice.
    #[test]
    fn fleet_groups_disks_across_documents() {
        let t = |p: &str, v: f64| test(p, Workload::SeqRead, Metric::ReadBps, v * MBS);
        let mut a0 = model(disk("/dev/a", 1 << 30), "M", Some("F"));
        a0.serial = Some("S-A".into());
        let d0 = doc(
            vec![
                a0,
                model(disk("/dev/b", 1 << 30), "M", Some("F")),
                md("/dev/md0", "raid0", &["/dev/a", "/dev/b"], None),
            ],
            vec![t("/dev/a", 59.0), t("/dev/b", 83.0), t("/dev/md0", 1.0)],
        );
        let d1 = doc(
            vec![
                model(disk("/dev/c", 1 << 30), "M", Some("F")),
                model(disk("/dev/d", 1 << 30), "N", Some("F")),
            ],
            vec![t("/dev/c", 80.0), t("/dev/d", 1.0)],
        );
        let g = fleet(&[&d0, &d1]);
        assert_eq!(g.len(), 1, "{g:?}");
        let g = &g[0];
        assert_eq!(
            (g.key.model.as_str(), g.key.firmware.as_str(), g.test.as_str()),
            ("M", "F", "seq_read")
        );
        assert_eq!(g.metric, Metric::ReadBps);
        let who: Vec<(usize, &str)> = g.entries.iter().map(|e| (e.doc, e.target.as_str())).collect();
        assert_eq!(who, vec![(0, "/dev/a"), (0, "/dev/b"), (1, "/dev/c")]);
        assert_eq!(g.entries[0].serial.as_deref(), Some("S-A"));
        assert!(close(g.median, 80.0 * MBS) && close(g.min, 59.0 * MBS) && close(g.max, 83.0 * MBS));
        let odd: Vec<&str> = g.outliers().map(|e| e.target.as_str()).collect();
        assert_eq!(odd, vec!["/dev/a"]);
        // The same document twice: each disk counted in each.
        assert_eq!(
            fleet(&[&d1, &d1]).iter().map(|g| g.entries.len()).collect::<Vec<_>>(),
            vec![2, 2]
        );
    }

    /// `fleet_by` with another key: the machine's model from the document
    /// (its host) with the disk's model. Two documents of host model H and
    /// one of G, each with one disk of model M: H's disks are a group of
    /// two with their median, G's one disk no group; a key of None leaves a
    /// disk out; `fleet` is `fleet_by` with `DiskModel::of`; the outlier
    /// rule is the same (`is_outlier` exactly at and just past 10% below).
    #[test]
    fn fleet_by_another_key_groups_and_judges_alike() {
        let t = |p: &str, v: f64| test(p, Workload::SeqRead, Metric::ReadBps, v * MBS);
        let on = |host: &str, v: f64| {
            let mut d = doc(
                vec![model(disk("/dev/a", 1 << 30), "M", Some("F"))],
                vec![t("/dev/a", v)],
            );
            d.host.product_name = Some(host.into());
            d
        };
        let (h0, h1, g0) = (on("H", 100.0), on("H", 60.0), on("G", 80.0));
        let docs = [&h0, &h1, &g0];
        let key = |d: &ResultDoc, t: &TargetInfo| Some((d.host.product_name.clone()?, DiskModel::of(t)?));
        let by = fleet_by(&docs, key);
        assert_eq!(by.len(), 1, "{by:?}");
        let g = &by[0];
        assert_eq!(
            g.key,
            (
                "H".to_string(),
                DiskModel {
                    model: "M".into(),
                    firmware: "F".into()
                }
            )
        );
        assert_eq!(g.entries.iter().map(|e| e.doc).collect::<Vec<_>>(), vec![0, 1]);
        assert!(close(g.median, 80.0 * MBS) && close(g.min, 60.0 * MBS) && close(g.max, 100.0 * MBS));
        assert_eq!(g.outliers().map(|e| e.doc).collect::<Vec<_>>(), vec![1]);
        assert!(!g.is_outlier(72.0 * MBS) && g.is_outlier(71.9 * MBS));
        // No key: no group.
        assert!(fleet_by(&docs, |_, _| None::<()>).is_empty());
        // The default key is the disk's model and firmware.
        let plain = fleet(&docs);
        assert_eq!(plain, fleet_by(&docs, |_, t| DiskModel::of(t)));
        assert_eq!(plain[0].entries.len(), 3);
    }

    /// A main step reading at `bps` in each interval of 1 s.
    fn sampled(target: &str, workload: Workload, bps: &[f64]) -> TestResult {
        use crate::io::Access;
        use crate::result::{DirStats, LatStats, Samples};
        let d = DirStats {
            bytes: 0,
            ios: 0,
            bytes_per_sec: 0.0,
            iops: 0.0,
            lat_ns: LatStats {
                min: 0,
                max: 0,
                mean: 0.0,
                stddev: 0.0,
                percentiles: Vec::new(),
            },
            clat_ns: None,
            slat_ns: None,
            samples: Samples {
                interval_ns: 1_000_000_000,
                bytes_per_sec: bps.to_vec(),
                iops: Vec::new(),
                cv: None,
            },
        };
        let step = StepResult {
            label: MAIN_LABEL.into(),
            access: Access::Direct,
            bs: 1 << 20,
            iodepth: 1,
            jobs: 1,
            range_start: 0,
            range_end: 1 << 30,
            runtime_ns: 0,
            read: Some(d),
            write: None,
            flush: None,
            verified_bytes: None,
            filled_bytes: None,
            passes: Vec::new(),
            chosen_pass: None,
            lowest_lat_pass: None,
            lowest_lat_mean_ns: None,
            engine: None,
            members: Vec::new(),
        };
        TestResult {
            steps: vec![step],
            ..test(target, workload, Metric::ReadBps, 0.0)
        }
    }

    #[test]
    fn throughput_drop_past_the_threshold_only() {
        // 100 MB/s, then 79: a 21% drop is flagged; 81 (19%) is not.
        let t = sampled(
            "/dev/nvme0n1",
            Workload::SeqWrite,
            &[100e6, 100e6, 100e6, 79e6, 79e6, 79e6],
        );
        let l = throughput_drops(&t);
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!(l[0].kind, "throughput_drop");
        assert_eq!(l[0].what, "read_bytes_per_sec");
        assert_eq!((l[0].before, l[0].after), (Some(100e6), Some(79e6)));
        assert!(l[0].message.contains("fell 21%"), "{}", l[0].message);
        let t = sampled("/dev/nvme0n1", Workload::SeqWrite, &[100e6, 100e6, 81e6, 81e6]);
        assert!(throughput_drops(&t).is_empty());
        // The page cache's reads and the seek profile have no steady state to fall from.
        for w in [
            Workload::CachedRead,
            Workload::BufferedRead,
            Workload::SeekProfile,
            Workload::Zones,
        ] {
            let t = sampled("/dev/nvme0n1", w, &[100e6, 100e6, 50e6, 50e6]);
            assert!(throughput_drops(&t).is_empty(), "{w:?}");
        }
        // Halves shorter than 2 s: a quick profile's second of 100 ms samples swings by itself.
        let mut t = sampled(
            "/dev/nvme0n1",
            Workload::RandRead,
            &[100e6; 5].iter().chain(&[50e6; 5]).copied().collect::<Vec<_>>(),
        );
        assert_eq!(throughput_drops(&t).len(), 1, "10 intervals of 1 s");
        for d in t.steps.iter_mut().filter_map(|s| s.read.as_mut()) {
            d.samples.interval_ns = 100_000_000;
        }
        assert!(throughput_drops(&t).is_empty(), "10 intervals of 100 ms");
        // An odd middle interval is left out of both halves.
        let t = sampled("/dev/nvme0n1", Workload::RandRead, &[100e6, 100e6, 1.0, 100e6, 100e6]);
        assert!(throughput_drops(&t).is_empty());
        // Too few intervals, a failed test: nothing.
        assert!(throughput_drops(&sampled("/d", Workload::RandRead, &[100e6, 10e6, 10e6])).is_empty());
        let mut t = sampled("/d", Workload::RandRead, &[100e6, 100e6, 10e6, 10e6]);
        t.status = Status::Skipped { reason: "x".into() };
        assert!(throughput_drops(&t).is_empty());
        // A rotational disk's sequential read slows by itself; random does not.
        let mut hdd = disk("/dev/sda", 1 << 30);
        hdd.rotational = Some(true);
        let seq = sampled("/dev/sda", Workload::SeqRead, &[100e6, 100e6, 50e6, 50e6]);
        let rnd = sampled("/dev/sda", Workload::RandRead, &[100e6, 100e6, 50e6, 50e6]);
        let lines = analyze_health(&doc(vec![hdd], vec![seq, rnd]));
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].test.as_deref(), Some("rand_read"));
    }

    fn reading(counters: &[(&str, u64)]) -> HealthReading {
        HealthReading {
            source: "ata_smart".into(),
            smart_passed: Some(true),
            counters: counters.iter().map(|(k, v)| (String::from(*k), *v)).collect(),
            ..HealthReading::default()
        }
    }

    fn with_health(path: &str, h: Health) -> TargetInfo {
        TargetInfo {
            health: Some(h),
            ..disk(path, 1 << 30)
        }
    }

    #[test]
    fn health_lines_for_status_counters_and_temperature() {
        use crate::result::{NvmeHealth, SmartAttribute, TestTemperature};
        // Nothing wrong: no line.
        let quiet = Health {
            before: reading(&[("reallocated_sectors", 3), ("data_read_bytes", 0)]),
            after: Some(reading(&[("reallocated_sectors", 3), ("data_read_bytes", 1 << 30)])),
            ..Health::default()
        };
        assert!(analyze_health(&doc(vec![with_health("/dev/sda", quiet)], vec![])).is_empty());

        // Sectors reallocated and pending during the run, status failed after.
        let mut after = reading(&[("reallocated_sectors", 11), ("pending_sectors", 1), ("crc_errors", 0)]);
        after.smart_passed = Some(false);
        after.attributes.push(SmartAttribute {
            id: 5,
            name: Some("reallocated_sector_count".into()),
            current: 30,
            worst: 30,
            threshold: Some(36),
            failing: true,
            ..SmartAttribute::default()
        });
        let h = Health {
            before: reading(&[("reallocated_sectors", 3), ("pending_sectors", 0), ("crc_errors", 0)]),
            after: Some(after),
            ..Health::default()
        };
        let lines = analyze_health(&doc(vec![with_health("/dev/sda", h)], vec![]));
        let kinds: Vec<(&str, &str)> = lines.iter().map(|l| (l.kind.as_str(), l.what.as_str())).collect();
        assert_eq!(
            kinds,
            [
                ("smart_failed", "smart_status"),
                ("attribute_failing", "reallocated_sector_count"),
                ("counter_gained", "reallocated_sectors"),
                ("counter_gained", "pending_sectors"),
            ]
        );
        assert!(
            lines[0].message.contains("after the run (it passed before)"),
            "{}",
            lines[0].message
        );
        assert!(lines[0].message.contains("threshold exceeded"));
        assert!(lines[2].message.contains("from 3 to 11"), "{}", lines[2].message);

        // NVMe: over the warning temperature during a test; the critical
        // warning in words.
        let mut nv = reading(&[("media_errors", 0)]);
        nv.warning_temperature_c = Some(70);
        nv.temperature_c = Some(50);
        let mut hot = nv.clone();
        hot.smart_passed = Some(false);
        hot.nvme = Some(NvmeHealth {
            critical_warning: 0x02,
            ..NvmeHealth::default()
        });
        let h = Health {
            before: nv.clone(),
            after: Some(hot),
            tests: vec![TestTemperature {
                test: "seq_write".into(),
                source: "during".into(),
                samples: 5,
                max_temperature_c: Some(72),
            }],
            ..Health::default()
        };
        let lines = analyze_health(&doc(vec![with_health("/dev/nvme0n1", h)], vec![]));
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].message.contains("temperature above or below a threshold"));
        assert_eq!(lines[1].kind, "temperature");
        assert_eq!(lines[1].test.as_deref(), Some("seq_write"));
        assert_eq!((lines[1].after, lines[1].limit), (Some(72.0), Some(70.0)));
        // Below the warning temperature: none; the device's own minutes
        // above it rising: one.
        let mut cool = nv.clone();
        cool.counters.insert("warning_temperature_minutes".into(), 4);
        let mut warmer = cool.clone();
        warmer.counters.insert("warning_temperature_minutes".into(), 6);
        let h = Health {
            before: cool.clone(),
            after: Some(cool.clone()),
            ..Health::default()
        };
        assert!(analyze_health(&doc(vec![with_health("/n", h)], vec![])).is_empty());
        let h = Health {
            before: cool,
            after: Some(warmer),
            ..Health::default()
        };
        let lines = analyze_health(&doc(vec![with_health("/n", h)], vec![]));
        assert_eq!(lines.len(), 1);
        assert!(lines[0].message.contains("2 minute(s)"), "{}", lines[0].message);
    }
}
