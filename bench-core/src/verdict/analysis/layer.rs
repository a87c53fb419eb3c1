//! dm layers: each figure against the same figure on the device beneath,
//! and why a layer reads slower through the page cache (readahead).

use crate::document::result::{AnalysisKind, StackClass};
use crate::vocab::stack::StackLevel;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::{accounting, figure, find, kib, main_step, metrics, pct, shares, usable};
use crate::document::result::Metric;
use crate::document::result::{Analysis, ResultDoc, StackInfo, Status, TargetInfo, TestResult};
use crate::spec::Workload;

/// A layer's buffered reads this far below its direct ones (relative to
/// the device beneath, both) are worth explaining: a `readahead` line when
/// the layer's readahead is also smaller than the device's beneath.
pub const READAHEAD_GAP: f64 = 0.20;

/// The lines of one dm layer.
pub(super) fn analyze_layer(doc: &ResultDoc, t: &TargetInfo, st: &StackInfo, out: &mut Vec<Analysis>) {
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
                kind: AnalysisKind::Layer,
                target: t.path.clone(),
                test: test.name.clone(),
                workload: test.workload,
                metric,
                measured,
                expected: beneath,
                efficiency: measured / beneath,
                rule: format!(
                    "{}: against the device beneath ({on}, {}){}",
                    st.level,
                    metric.show(beneath),
                    layer_cost(st.level, buffered(test))
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
fn layer_cost(level: StackLevel, buffered: bool) -> &'static str {
    match (level, buffered) {
        (_, true) => "",
        (StackLevel::Crypt, false) => "; direct I/O: the cost is the cipher's CPU time",
        (StackLevel::Linear | StackLevel::Lvm, false) => "; direct I/O: a linear map should cost nothing",
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
pub(super) fn analyze_readahead(doc: &ResultDoc, out: &mut Vec<Analysis>) {
    let mut found = Vec::new();
    for t in doc
        .targets
        .iter()
        .filter(|t| t.stack.as_ref().is_some_and(|s| s.kind != StackClass::Md))
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
            .filter(|a| a.kind == AnalysisKind::Layer && a.target == t.path && a.metric == Metric::ReadBps)
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
            kind: AnalysisKind::Readahead,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::analysis::analyze;
    use crate::verdict::analysis::testutil::{close, disk, dm, doc, md, test, MBS};

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
        assert_eq!(a[0].kind, AnalysisKind::Layer);
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
                .filter(|a| a.kind == AnalysisKind::Readahead)
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
}
