//! All-at-once runs: every disk's figure together against the same disks'
//! figures each alone.

use crate::document::result::AnalysisKind;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::{figure, metrics, usable};
use crate::document::result::{AllAtOnce, Analysis, ResultDoc, Status};

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
        if !a.scaling.is_empty() {
            scaling_line(doc, a, metric, &per_disk, out);
        }
    }
}

/// Added disks that gain together less than this share of what they do
/// alone mark the end of the sum's growth.
pub const SCALING_GAIN: f64 = 0.5;

/// The scaling line of one figure of an all-at-once run with `scaling`:
/// the sum together at 1 disk (the first, alone), at each point and at
/// all of them (`per_disk`: each disk's figure together and alone), each
/// against the sum of the same disks alone; the sum stops growing at the
/// first point from which every later point's added disks gain less than
/// [`SCALING_GAIN`] of what they gain alone. No line when a point lacks a
/// figure.
fn scaling_line(
    doc: &ResultDoc,
    a: &AllAtOnce,
    metric: crate::document::result::Metric,
    per_disk: &[(&str, f64, f64)],
    out: &mut Vec<Analysis>,
) {
    let Some(&(first, _, first_alone)) = per_disk.first() else {
        return;
    };
    // (disks, sum together, sum alone)
    let mut points = vec![(1usize, first_alone, first_alone)];
    for p in &a.scaling {
        let together = usable(metric.of_point(p)).filter(|_| p.ok);
        let alone: Option<f64> = p.targets.iter().map(|t| figure(doc, t, &a.test, metric)).sum();
        let (Some(together), Some(alone)) = (together, alone) else {
            return;
        };
        points.push((p.targets.len(), together, alone));
    }
    let measured: f64 = per_disk.iter().map(|d| d.1).sum();
    let expected: f64 = per_disk.iter().map(|d| d.2).sum();
    points.push((per_disk.len(), measured, expected));
    // The first point past which every later one gains, from it, less than
    // SCALING_GAIN of what its added disks gain alone (one slow point
    // among growing ones is noise, not a limit).
    let stops = (0..points.len() - 1).find_map(|i| {
        let (_, t0, a0) = points[i];
        points[i + 1..]
            .iter()
            .all(|&(_, t, a)| a > a0 && t - t0 < SCALING_GAIN * (a - a0))
            .then_some(points[i].0)
    });
    let steps: Vec<String> = points
        .iter()
        .map(|(n, t, al)| {
            format!(
                "{n} {}: {} ({} alone)",
                if *n == 1 { "disk" } else { "disks" },
                metric.show(*t),
                metric.show(*al)
            )
        })
        .collect();
    let verdict = match stops {
        Some(n) => format!(
            "the sum stops growing past {n} {}: the disks added after it gain together less than half of what \
             they gain alone (a shared limit: the controller, its link, or the CPU)",
            if n == 1 { "disk" } else { "disks" }
        ),
        None => String::from("the sum grows with every disk added"),
    };
    out.push(Analysis {
        kind: AnalysisKind::Scaling,
        target: "all at once".into(),
        test: a.test.clone(),
        workload: a.workload,
        metric,
        measured,
        expected,
        efficiency: measured / expected,
        rule: format!("scaling: {}; {verdict}", steps.join(", ")),
        limited_by: None,
        from: core::iter::once(String::from(first))
            .chain(per_disk.iter().skip(1).map(|d| String::from(d.0)))
            .collect(),
        members: Vec::new(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Workload;
    use crate::verdict::analysis::testutil::{close, disk, doc, test, MBS};
    use crate::verdict::analysis::{analyze, Metric};
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
            scaling: Vec::new(),
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

    /// Eight disks of 100 MB/s alone behind a link that carries 250 MB/s:
    /// 1 disk 100, 2 disks 200, 4 disks 250, 8 disks 250; the sum stops
    /// growing past 2 disks (4 gain 50 of the 200 they gain alone). Without
    /// the limit it grows with every disk; a point without figures, no line.
    #[test]
    fn scaling_says_where_the_sum_stops_growing() {
        use crate::document::result::ScalingPoint;
        let names: Vec<String> = (0..8).map(|i| alloc::format!("/dev/d{i}")).collect();
        let with = |per_disk_together: f64, sums: [f64; 2]| {
            let targets = names.iter().map(|n| disk(n, 1 << 30)).collect();
            let tests = names
                .iter()
                .map(|n| test(n, Workload::SeqRead, Metric::ReadBps, 100.0 * MBS))
                .collect();
            let mut d = doc(targets, tests);
            let point = |k: usize, sum: f64| ScalingPoint {
                targets: names[..k].to_vec(),
                ok: true,
                read_bytes_per_sec: Some(sum),
                write_bytes_per_sec: None,
                read_iops: None,
                write_iops: None,
            };
            d.all_at_once.push(AllAtOnce {
                test: "seq_read".into(),
                workload: Workload::SeqRead,
                results: names
                    .iter()
                    .map(|n| test(n, Workload::SeqRead, Metric::ReadBps, per_disk_together))
                    .collect(),
                scaling: vec![point(2, sums[0]), point(4, sums[1])],
            });
            d
        };
        let limited = with(250.0 / 8.0 * MBS, [200.0 * MBS, 250.0 * MBS]);
        let a = analyze(&limited);
        let line = a
            .iter()
            .find(|l| l.kind == AnalysisKind::Scaling)
            .expect("a scaling line");
        assert!(
            close(line.measured, 250.0 * MBS) && close(line.expected, 800.0 * MBS),
            "{line:?}"
        );
        assert_eq!(
            line.rule,
            "scaling: 1 disk: 100.0 MB/s (100.0 MB/s alone), 2 disks: 200.0 MB/s (200.0 MB/s alone), \
             4 disks: 250.0 MB/s (400.0 MB/s alone), 8 disks: 250.0 MB/s (800.0 MB/s alone); the sum stops \
             growing past 2 disks: the disks added after it gain together less than half of what they gain alone \
             (a shared limit: the controller, its link, or the CPU)"
        );
        let free = with(95.0 * MBS, [195.0 * MBS, 390.0 * MBS]);
        let a = analyze(&free);
        let line = a.iter().find(|l| l.kind == AnalysisKind::Scaling).unwrap();
        assert!(
            line.rule.ends_with("; the sum grows with every disk added"),
            "{}",
            line.rule
        );
        // One slow point among growing ones is noise, not a limit.
        let dip = with(95.0 * MBS, [195.0 * MBS, 180.0 * MBS]);
        let a = analyze(&dip);
        let line = a.iter().find(|l| l.kind == AnalysisKind::Scaling).unwrap();
        assert!(
            line.rule.ends_with("; the sum grows with every disk added"),
            "{}",
            line.rule
        );
        let mut broken = free.clone();
        broken.all_at_once[0].scaling[1].ok = false;
        assert!(analyze(&broken).iter().all(|l| l.kind != AnalysisKind::Scaling));
        let mut plain = free;
        plain.all_at_once[0].scaling.clear();
        assert!(analyze(&plain).iter().all(|l| l.kind != AnalysisKind::Scaling));
    }
}
