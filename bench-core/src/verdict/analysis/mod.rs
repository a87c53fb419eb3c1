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
//! [`StackInfo`]: crate::document::result::StackInfo
//! [`AllAtOnce`]: crate::document::result::AllAtOnce
//!
//! # Which figures
//! Sequential workloads (`buffered_read`, `direct_read`, `seq_read`, and for
//! layers and all-at-once also `zones`) compare read throughput; `seq_write`
//! (and `commit`) write throughput; `rand_read` (and `iops_sweep`) read IOPS;
//! `rand_write` write IOPS; `rand_rw` both read and write IOPS. For the
//! workloads of several steps the figure is the summary's headline
//! (`crate::engine::plan::summarize`): `zones` the mean over its surface points,
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
//!
//! # The code
//! [`analyze`] runs each kind of analysis in turn, each in a file of its
//! own: `array.rs` (md arrays), `layer.rs` (dm layers and readahead),
//! `all_at_once.rs`, `fleet.rs` (the odd disk out, and the fleet view of
//! many documents); `health_lines.rs` reads the health readings and the
//! throughput samples ([`analyze_health`], [`throughput_drops`]);
//! `placement.rs` the disks whose interrupts are served on another NUMA
//! node than their tests' threads ([`remote_irqs`]).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::document::result::{Analysis, MemberIo, MemberShare, ResultDoc, StackClass, Status, StepResult, TestResult};
use crate::engine::plan::MAIN_LABEL;
use crate::spec::Workload;

mod all_at_once;
mod array;
mod fleet;
mod health_lines;
mod layer;
mod placement;
#[cfg(test)]
pub(crate) mod testutil;

use all_at_once::analyze_all_at_once;
use array::analyze_array;
pub use array::BUSY;
use fleet::analyze_outliers;
pub use fleet::{fleet, fleet_by, is_outlier, median, DiskModel, FleetEntry, FleetGroup, OUTLIER_BELOW};
pub(crate) use fleet::{groups_by, peer_groups};
pub(crate) use health_lines::failed_why;
pub use health_lines::{
    analyze_health, halves, throughput_drops, DROP_MIN_HALF_NS, DROP_MIN_SAMPLES, THROUGHPUT_DROP, WATCHED_COUNTERS,
};
pub use layer::READAHEAD_GAP;
use layer::{analyze_layer, analyze_readahead};
pub use placement::remote_irqs;

pub use crate::document::result::Metric;

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

/// Whether `st` is an existing LVM volume striped over its PVs, all of
/// them, in one segment (its `table` one `striped N ...` line with N its
/// members): compared with them as raid0 is.
fn striped_volume(st: &crate::document::result::StackInfo) -> bool {
    let n = st.members.len();
    st.level == crate::vocab::stack::StackLevel::Lvm
        && n > 1
        && st.options.get("table").is_some_and(|t| {
            let f: Vec<&str> = t.split_whitespace().collect();
            !t.contains(';')
                && f.get(2) == Some(&"striped")
                && f.get(3).and_then(|x| x.parse::<usize>().ok()) == Some(n)
        })
}

/// Every analysis line of a finished document: arrays (in target order,
/// each test, each figure), then layers, then all-at-once runs.
pub fn analyze(doc: &ResultDoc) -> Vec<Analysis> {
    let mut out = Vec::new();
    for t in &doc.targets {
        if let Some(st) = t
            .stack
            .as_ref()
            .filter(|s| s.kind == StackClass::Md || striped_volume(s))
        {
            analyze_array(doc, t, st, &mut out);
        }
    }
    for t in &doc.targets {
        if let Some(st) = t.stack.as_ref().filter(|s| s.kind != StackClass::Md) {
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

/// The step whose figures are `test`'s summary ([`MAIN_LABEL`]), if any.
pub(crate) fn main_step(test: &TestResult) -> Option<&StepResult> {
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

/// A share as a whole percentage: `100%`.
fn pct(v: f64) -> String {
    format!("{:.0}%", v * 100.0)
}

/// Readahead in words: `128 KiB`.
fn kib(bytes: u64) -> String {
    format!("{} KiB", bytes / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_and_units_in_words() {
        assert_eq!(factor(2.0), "2");
        assert_eq!(factor(1.5), "1.5");
        assert_eq!(factor(0.25), "0.25");
        assert_eq!(Metric::ReadBps.show(10_049_999.0), "10.0 MB/s");
        assert_eq!(Metric::WriteIops.show(812.4), "812 IOPS");
        assert_eq!(Metric::from_name("write_iops"), Some(Metric::WriteIops));
    }
}
