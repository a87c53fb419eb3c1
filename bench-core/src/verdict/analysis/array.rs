//! md arrays: each figure against the figure expected from the members'
//! (the module docs' "Array rules").

use crate::document::result::AnalysisKind;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::{accounting, factor, figure, metrics, pct, shares, usable};
use crate::document::result::Metric;
use crate::document::result::{Analysis, MemberIo, ResultDoc, StackInfo, Status, TargetInfo, TestResult};
use crate::spec::Workload;
use crate::vocab::stack::{MdLayout, StackLevel};

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

/// A member this busy (its time with I/O in flight over the step's
/// window) was the bottleneck: `limited_by` names it.
pub const BUSY: f64 = 0.90;

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

/// The busiest member, if it was busy at least [`BUSY`] of the time.
fn busiest<'a>(acc: &[&'a MemberIo]) -> Option<&'a MemberIo> {
    acc.iter()
        .copied()
        .filter(|m| m.utilization >= BUSY)
        .reduce(|a, b| if b.utilization > a.utilization { b } else { a })
}

/// Mirrored reads (raid1, raid10) from what md actually read: each
/// member's figure weighted by its share of the bytes read. One request
/// at a time (QD 1), the members take turns: 1 / sum(share / figure).
/// With more in flight they read at once, and the one with the most
/// work for its speed finishes last: min(figure / share). `None` when
/// nothing was read from them.
fn mirrored_read(
    level: StackLevel,
    qd: u64,
    figs: &[(&str, f64)],
    acc: &[&MemberIo],
    metric: Metric,
) -> Option<Expect> {
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
    let serial = qd <= 1 && level == StackLevel::Raid1;
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
    use StackLevel as L;
    let level = st.level;
    let e = match (level, access, read) {
        (L::Raid0, Access::Sequential, _) => times_slowest("raid0: N x slowest member", nf, slowest, metric),
        // An existing LVM volume striped over N PVs (see `striped_volume`).
        (L::Lvm, Access::Sequential, _) => times_slowest("lvm striped: N x slowest PV", nf, slowest, metric),
        (L::Lvm, Access::Random, _) => {
            times_slowest("lvm striped random: min(N, QD) x slowest PV", busy(1), slowest, metric)
        }
        (L::Raid0, Access::Random, _) => {
            times_slowest("raid0 random: min(N, QD) x slowest member", busy(1), slowest, metric)
        }
        (L::Raid1, _, true) => times_slowest(
            "raid1 read: one member, the slowest (the kernel picks which; conservative)",
            1.0,
            slowest,
            metric,
        ),
        (L::Raid1, _, false) => times_slowest("raid1 write: every member writes, the slowest", 1.0, slowest, metric),
        (L::Raid5, Access::Sequential, _) if n >= 2 => {
            times_slowest("raid5: (N-1) x slowest member", nf - 1.0, slowest, metric)
        }
        (L::Raid6, Access::Sequential, _) if n >= 3 => {
            times_slowest("raid6: (N-2) x slowest member", nf - 2.0, slowest, metric)
        }
        (L::Raid5 | L::Raid6 | L::Raid10, Access::Random, true) => times_slowest(
            &format!("{level} random read: min(N, QD) x slowest member"),
            busy(1),
            slowest,
            metric,
        ),
        (L::Raid5, Access::Random, false) => times_slowest(
            "raid5 random write: min(N, 2 x QD) x slowest member / 4 (read-modify-write)",
            busy(2) / 4.0,
            slowest,
            metric,
        ),
        (L::Raid6, Access::Random, false) => times_slowest(
            "raid6 random write: min(N, 3 x QD) x slowest member / 6 (read-modify-write)",
            busy(3) / 6.0,
            slowest,
            metric,
        ),
        (L::Raid10, Access::Random, false) => times_slowest(
            "raid10 random write: min(N, 2 x QD) x slowest member / 2 (two copies)",
            busy(2) / 2.0,
            slowest,
            metric,
        ),
        (L::Raid10, Access::Sequential, true)
            if st
                .layout
                .as_deref()
                .and_then(crate::vocab::names::from_name::<MdLayout>)
                == Some(MdLayout::Far2) =>
        {
            times_slowest("raid10 far2 read: N x slowest member", nf, slowest, metric)
        }
        (L::Raid10, Access::Sequential, true) => {
            times_slowest("raid10 read: N/2 x slowest member", nf / 2.0, slowest, metric)
        }
        (L::Raid10, Access::Sequential, false) => times_slowest(
            "raid10 write: N/2 x slowest member (two copies)",
            nf / 2.0,
            slowest,
            metric,
        ),
        (L::Linear, _, _) => return linear_rule(doc, st, test, access, metric, figs),
        _ => return None,
    };
    Some(e)
}

/// A linear array's expectation: sequential, the member the test's range
/// starts on; random, each member the range covers by its share of it
/// (`None` if a member's size is unknown or the range is empty).
fn linear_rule(
    doc: &ResultDoc,
    st: &StackInfo,
    test: &TestResult,
    access: Access,
    metric: Metric,
    figs: &[(&str, f64)],
) -> Option<Expect> {
    let ext = linear_extents(doc, st)?;
    match access {
        Access::Sequential => {
            let at = test.params.offset.0;
            let i = ext.iter().position(|&(s, e)| s <= at && at < e)?;
            let (path, v) = figs[i];
            Some(Expect {
                value: v,
                rule: format!("linear: the member the range starts on ({path}, {})", metric.show(v)),
                limited_by: Some(path.into()),
            })
        }
        Access::Random => {
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
            Some(Expect {
                value: 1.0 / per_req,
                rule: format!(
                    "linear random: 1 / sum(share / member IOPS) over {} member(s) the range covers",
                    covered.len()
                ),
                limited_by,
            })
        }
    }
}

/// The lines of one md array.
pub(super) fn analyze_array(doc: &ResultDoc, t: &TargetInfo, st: &StackInfo, out: &mut Vec<Analysis>) {
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
            let mirrored = st.level.mirrored() && metric.is_read();
            let rule = if mirrored {
                mirrored_read(st.level, qd, &figs, &acc, metric)
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
                kind: AnalysisKind::Array,
                target: t.path.clone(),
                test: test.name.clone(),
                workload: test.workload,
                metric,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::plan::MAIN_LABEL;
    use crate::verdict::analysis::analyze;
    use crate::verdict::analysis::testutil::{close, disk, dm, doc, md, test, with_qd, MBS};
    use crate::vocab::units::Bytes;
    use alloc::vec;

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
            (l.kind.name(), l.target.as_str(), l.test.as_str()),
            ("array", "/dev/md0", "seq_read")
        );
        assert_eq!(l.metric.name(), "read_bytes_per_sec");
        assert!(close(l.expected, 20.0 * MBS), "{}", l.expected);
        assert!(close(l.measured, 19.0 * MBS));
        assert!(close(l.efficiency, 0.95), "{}", l.efficiency);
        assert_eq!(l.limited_by.as_deref(), Some("/dev/b"));
        assert_eq!(l.rule, "raid0: N x slowest member (2 x 10.0 MB/s)");
        assert_eq!(l.from, vec!["/dev/a", "/dev/b"]);
    }

    /// An existing LVM volume striped over two PVs is compared with them
    /// as raid0 is; one that spans them in two linear segments is not.
    #[test]
    fn a_volume_striped_over_20_and_10_expects_2_x_10() {
        let volume = |table: &str| {
            let mut t = dm("/dev/dm-0", "lvm", "");
            let st = t.stack.as_mut().unwrap();
            st.on = None;
            st.members = vec!["/dev/a".into(), "/dev/b".into()];
            st.options.insert("table".into(), table.into());
            t
        };
        let tests = || {
            vec![
                test("/dev/a", Workload::SeqRead, Metric::ReadBps, 20.0 * MBS),
                test("/dev/b", Workload::SeqRead, Metric::ReadBps, 10.0 * MBS),
                test("/dev/dm-0", Workload::SeqRead, Metric::ReadBps, 19.0 * MBS),
            ]
        };
        let d = doc(
            vec![
                disk("/dev/a", 1 << 30),
                disk("/dev/b", 1 << 30),
                volume("0 32768 striped 2 128 /dev/a 2048 /dev/b 2048"),
            ],
            tests(),
        );
        let a = analyze(&d);
        assert_eq!(a.len(), 1, "{a:?}");
        assert_eq!(a[0].kind.name(), "array");
        assert!(close(a[0].expected, 20.0 * MBS), "{}", a[0].expected);
        assert_eq!(a[0].rule, "lvm striped: N x slowest PV (2 x 10.0 MB/s)");
        assert_eq!(a[0].limited_by.as_deref(), Some("/dev/b"));
        let spanning = doc(
            vec![
                disk("/dev/a", 1 << 30),
                disk("/dev/b", 1 << 30),
                volume("0 16384 linear /dev/a 2048; 16384 16384 linear /dev/b 2048"),
            ],
            tests(),
        );
        assert!(analyze(&spanning).is_empty(), "{:?}", analyze(&spanning));
    }

    /// `t` with a main step whose accounting beneath `parent` is
    /// `(member, bytes read, bytes written, utilization)`; shares are of
    /// the bytes, as the capture computes them.
    fn with_members(mut t: TestResult, parent: &str, m: &[(&str, u64, u64, f64)]) -> TestResult {
        use crate::document::result::{MemberSamples, StepResult};
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
            steady_state: Vec::new(),
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
            assert_eq!(a[0].metric, metric);
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
}
