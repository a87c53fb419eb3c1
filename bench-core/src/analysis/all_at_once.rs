//! All-at-once runs: every disk's figure together against the same disks'
//! figures each alone.

use crate::result::AnalysisKind;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::{figure, metrics, usable};
use crate::result::{AllAtOnce, Analysis, ResultDoc, Status};

/// The lines of one all-at-once run.
pub(super) fn analyze_all_at_once(doc: &ResultDoc, a: &AllAtOnce, out: &mut Vec<Analysis>) {
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
            kind: AnalysisKind::AllAtOnce,
            target: "all at once".into(),
            test: a.test.clone(),
            workload: a.workload,
            metric,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::{close, disk, doc, test, MBS};
    use crate::analysis::{analyze, Metric};
    use crate::spec::Workload;
    use alloc::vec;

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
        assert_eq!(a[0].kind, AnalysisKind::AllAtOnce);
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
}
