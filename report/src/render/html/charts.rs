//! The charts of one result document, kind by kind ([`charts`]): the surface curve, the seek
//! profile, the latency percentiles, and the arrays, layers and all-at-once runs against what
//! was expected of them, with each array's or layer's note and members table.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use bench_core::document::result::{Analysis, AnalysisKind, DirStats, ResultDoc, Status, TargetInfo, TestResult};
use bench_core::spec::Workload;
use bench_core::verdict::analysis::{metrics, Metric};

use super::format::{axis_value, escape, fmt_mb, fmt_mbps, fmt_metric, fmt_ns, meter, metric_axis, num, time_unit};
use super::svg::{
    bar_chart, decades, figure, legend, line_chart, nines, value_axis, Axis, Bar, Group, Point, Scale, Series, Shape,
    BOTTOM, H, LEFT, RIGHT, TOP, W,
};
use super::Chart;

/// The test named `name` on `target`.
pub(super) fn find<'a>(doc: &'a ResultDoc, target: &str, name: &str) -> Option<&'a TestResult> {
    doc.tests.iter().find(|t| t.target == target && t.name == name)
}

pub(super) fn target<'a>(doc: &'a ResultDoc, path: &str) -> Option<&'a TargetInfo> {
    doc.targets.iter().find(|t| t.path == path)
}

/// A target as legends name it: path, then the array or layer it is, or its serial.
pub(super) fn target_name(doc: &ResultDoc, path: &str) -> String {
    name_of(target(doc, path), path)
}

/// [`target_name`] of the target `t` found at `path`.
fn name_of(t: Option<&TargetInfo>, path: &str) -> String {
    match t {
        Some(TargetInfo { stack: Some(s), .. }) => format!("{path} ({} {})", s.level, s.name),
        Some(TargetInfo { serial: Some(sn), .. }) if !sn.is_empty() => format!("{path} ({sn})"),
        _ => path.to_string(),
    }
}

/// A document's targets by path and tests by name, found once for the
/// charts that go through every test (not every target or test per test).
struct Index<'a> {
    targets: HashMap<&'a str, &'a TargetInfo>,
    by_name: HashMap<&'a str, Vec<&'a TestResult>>,
}

impl<'a> Index<'a> {
    fn of(doc: &'a ResultDoc) -> Index<'a> {
        let mut targets = HashMap::with_capacity(doc.targets.len());
        for t in &doc.targets {
            // The first of a path, as `target` finds it.
            targets.entry(t.path.as_str()).or_insert(t);
        }
        let mut by_name: HashMap<&str, Vec<&TestResult>> = HashMap::new();
        for t in &doc.tests {
            by_name.entry(t.name.as_str()).or_default().push(t);
        }
        Index { targets, by_name }
    }

    fn target(&self, path: &str) -> Option<&'a TargetInfo> {
        self.targets.get(path).copied()
    }

    fn name(&self, path: &str) -> String {
        name_of(self.target(path), path)
    }

    /// The tests named `name`, in document order.
    fn named(&self, name: &str) -> &[&'a TestResult] {
        self.by_name.get(name).map_or(&[], Vec::as_slice)
    }
}

/// The names of the tests of `doc` in the order first run, with their workload.
pub(super) fn test_names(doc: &ResultDoc) -> Vec<(&str, Workload)> {
    let mut seen = HashSet::new();
    let mut names: Vec<(&str, Workload)> = Vec::new();
    for t in &doc.tests {
        if seen.insert(t.name.as_str()) {
            names.push((&t.name, t.workload));
        }
    }
    names
}

pub(super) fn finite_pos(v: f64) -> bool {
    v.is_finite() && v >= 0.0
}

/// Surface curves: one chart per zones test, one series per target.
/// The surface series of the zones test `name`: per target, each step's
/// read MB/s at the middle of its range as a percentage of the target's size
/// (surface steps as dots, the three zones as squares).
#[cfg(test)]
pub(super) fn surface_series(doc: &ResultDoc, name: &str) -> Vec<Series> {
    surface_series_in(&Index::of(doc), name)
}

/// [`surface_series`] through the document's [`Index`].
fn surface_series_in(ix: &Index, name: &str) -> Vec<Series> {
    let mut series = Vec::new();
    for t in ix.named(name) {
        let size = ix
            .target(&t.target)
            .map(|ti| ti.size_bytes)
            .filter(|&s| s > 0)
            .or_else(|| t.steps.iter().map(|s| s.range_end).max())
            .unwrap_or(0);
        if size == 0 {
            continue;
        }
        let mut points = Vec::new();
        for st in &t.steps {
            let Some(bps) = st.read.as_ref().map(|r| r.bytes_per_sec).filter(|v| finite_pos(*v)) else {
                continue;
            };
            let mid = (st.range_start as f64 + st.range_end as f64) / 2.0;
            let pos = (mid / size as f64 * 100.0).clamp(0.0, 100.0);
            let shape = if st.label.starts_with("surface_") {
                Shape::Dot
            } else {
                Shape::Square
            };
            points.push(Point {
                x: pos,
                y: bps / 1e6,
                tip: format!("{} at {}% of the target: {}", st.label, num(pos), fmt_mbps(bps)),
                shape,
            });
        }
        if !points.is_empty() {
            series.push(Series {
                name: ix.name(&t.target),
                points,
            });
        }
    }
    series
}

pub(super) fn surface_charts(doc: &ResultDoc) -> Vec<String> {
    let mut charts = Vec::new();
    let ix = Index::of(doc);
    for (name, _) in test_names(doc).into_iter().filter(|(_, w)| *w == Workload::Zones) {
        let series = surface_series_in(&ix, name);
        if series.is_empty() {
            continue;
        }
        let max = series.iter().flat_map(|s| &s.points).map(|p| p.y).fold(0.0, f64::max);
        let y = value_axis("Read throughput (MB/s, 10^6 bytes/s)".into(), max * 1.05, num);
        let x = Axis {
            label: "Position on the target (% of its size; 0 = first byte = outside of a disk, 100 = inside)".into(),
            scale: Scale::linear((0.0, 100.0), (LEFT, W - RIGHT)),
            ticks: [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
                .into_iter()
                .map(|v| (v, format!("{v}%")))
                .collect(),
        };
        let title = format!("Surface transfer curve: {name}");
        let svg = line_chart(Chart::Surface, &title, &x, &y, &series);
        let names: Vec<String> = series.iter().map(|s| s.name.clone()).collect();
        charts.push(figure(
            &title,
            &svg,
            &legend(&names),
            &[
                "Line and dots: the surface points (surface_NN), evenly spaced from outside to inside; \
               squares: the outside, middle and inside zones (diskinfo -t), larger reads."
                    .to_string(),
            ],
        ));
    }
    charts
}

/// Seek profiles: one chart per seek_profile test, bars per section and target.
pub(super) fn seek_charts(doc: &ResultDoc) -> Vec<String> {
    let mut charts = Vec::new();
    let ix = Index::of(doc);
    for (name, _) in test_names(doc).into_iter().filter(|(_, w)| *w == Workload::SeekProfile) {
        let runs: Vec<&TestResult> = ix
            .named(name)
            .iter()
            .copied()
            .filter(|t| t.summary.seek_ns.iter().any(|f| finite_pos(f.value)))
            .collect();
        if runs.is_empty() {
            continue;
        }
        let mut sections: Vec<&str> = Vec::new();
        for t in &runs {
            for f in &t.summary.seek_ns {
                if !sections.contains(&f.label.as_str()) {
                    sections.push(&f.label);
                }
            }
        }
        let max = runs
            .iter()
            .flat_map(|t| &t.summary.seek_ns)
            .map(|f| f.value)
            .filter(|v| finite_pos(*v))
            .fold(0.0, f64::max);
        let (div, unit) = time_unit(max);
        let names: Vec<String> = runs.iter().map(|t| ix.name(&t.target)).collect();
        let groups: Vec<Group> = sections
            .iter()
            .map(|sec| Group {
                label: (*sec).to_string(),
                bars: runs
                    .iter()
                    .enumerate()
                    .filter_map(|(i, t)| {
                        let v = t.summary.seek_ns.iter().find(|f| f.label == *sec)?.value;
                        finite_pos(v).then(|| Bar {
                            key: i,
                            label: String::new(),
                            value: v / div,
                            text: String::new(),
                            tip: format!("{}, {sec}: {}", names[i], fmt_ns(v)),
                        })
                    })
                    .collect(),
                expected: None,
            })
            .collect();
        let title = format!("Seek profile: {name}");
        let svg = bar_chart(
            Chart::Seek,
            &title,
            format!("Mean time per read ({unit})"),
            num,
            &groups,
        );
        charts.push(figure(
            &title,
            &svg,
            &legend(&names),
            &[
                "diskinfo -t's sections: full, half and quarter stroke, short forward and backward seeks, \
               sequential reads at the outside and the inside; one logical block per read."
                    .to_string(),
            ],
        ));
    }
    charts
}

/// Latency percentile curves: one chart per test (not seek_profile, zones
/// or command_overhead, which have their own figures), one curve per
/// target, step and direction.
pub(super) fn latency_charts(doc: &ResultDoc) -> Vec<String> {
    let mut charts = Vec::new();
    let own = [Workload::SeekProfile, Workload::Zones, Workload::CommandOverhead];
    let ix = Index::of(doc);
    for (name, _) in test_names(doc).into_iter().filter(|(_, w)| !own.contains(w)) {
        let mut series = Vec::new();
        for t in ix.named(name) {
            let many_steps = t.steps.len() > 1;
            for st in &t.steps {
                for (dir, stats) in [("read", &st.read), ("write", &st.write)] {
                    let Some(DirStats { lat_ns, clat_ns, .. }) = stats else {
                        continue;
                    };
                    // fio's clat, as its percentiles are printed; lat before clat existed.
                    let points: Vec<Point> = clat_ns
                        .as_ref()
                        .unwrap_or(lat_ns)
                        .percentiles
                        .iter()
                        .filter(|p| p.ns > 0 && p.p.is_finite() && p.p > 0.0)
                        .map(|p| Point {
                            x: nines(p.p),
                            y: p.ns as f64,
                            tip: format!("p{}: {}", p.p, fmt_ns(p.ns as f64)),
                            shape: Shape::Dot,
                        })
                        .collect();
                    if points.is_empty() {
                        continue;
                    }
                    let mut sname = ix.name(&t.target);
                    if many_steps {
                        if matches!(t.workload, Workload::IopsSweep | Workload::Slog) {
                            // The sweep's and slog's steps are labelled by their request size in bytes.
                            let _ = write!(sname, " · bs {} B", st.label);
                        } else {
                            let _ = write!(sname, " · {}", st.label);
                        }
                    }
                    let _ = write!(sname, " · {dir}");
                    series.push(Series { name: sname, points });
                }
            }
        }
        if series.is_empty() {
            continue;
        }
        let ys = || series.iter().flat_map(|s| &s.points).map(|p| p.y);
        let lo = ys().fold(f64::INFINITY, f64::min);
        let hi = ys().fold(0.0, f64::max);
        let dec = decades(lo, hi);
        let y = Axis {
            label: "Completion latency (log scale)".into(),
            scale: Scale::log10(
                (dec[0], dec.last().copied().unwrap_or(dec[0] * 10.0)),
                (H - BOTTOM, TOP),
            ),
            ticks: dec.iter().map(|&d| (d, fmt_ns(d))).collect(),
        };
        let xmax = series
            .iter()
            .flat_map(|s| &s.points)
            .map(|p| p.x)
            .fold(2.0, f64::max)
            .ceil();
        let x = Axis {
            label: "Percentile (nines scale: 0, 90, 99, 99.9 ... %)".into(),
            scale: Scale::linear((0.0, xmax), (LEFT, W - RIGHT)),
            ticks: [50.0, 90.0, 99.0, 99.9, 99.99, 99.999]
                .into_iter()
                .filter(|&p| nines(p) <= xmax + 1e-9)
                .map(|p| (nines(p), format!("{p}%")))
                .collect(),
        };
        let title = format!("Latency percentiles: {name}");
        let svg = line_chart(Chart::Latency, &title, &x, &y, &series);
        let names: Vec<String> = series.iter().map(|s| s.name.clone()).collect();
        charts.push(figure(&title, &svg, &legend(&names), &[]));
    }
    charts
}

/// An array's or layer's line under its chart: its note, then what each
/// member did ([`members_table`]).
pub(super) fn line_note(a: &Analysis) -> String {
    let mut s = analysis_note(a);
    s.push_str(&members_table(a));
    s
}

/// What each device right beneath an array or layer did during the test's
/// main step (`Analysis.members`, from the kernel's counters), in member
/// order: its share of the bytes the members moved and its utilization
/// (time busy over the step), each 0-100% with a bar, and its bytes read
/// and written. Empty for a line without them (no accounting, older
/// documents).
pub(super) fn members_table(a: &Analysis) -> String {
    if a.members.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "<table class=\"members\"><caption>Members of {} during {} (kernel I/O counters of its main step)</caption>\
         <thead><tr><th>Member</th><th>Share of the bytes moved</th><th>Utilization (time busy)</th><th>Read</th>\
         <th>Written</th></tr></thead><tbody>",
        escape(&a.target),
        escape(&a.test)
    );
    for m in &a.members {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&m.path),
            meter(m.share),
            meter(m.utilization),
            fmt_mb(m.read_bytes),
            fmt_mb(m.write_bytes)
        );
    }
    out.push_str("</tbody></table>");
    out
}

pub(super) fn analysis_note(a: &Analysis) -> String {
    let mut s = format!(
        "{} {}: measured {}, expected {}, efficiency {}%. Rule: {}.",
        escape(&a.test),
        a.metric,
        escape(&fmt_metric(a.metric, a.measured)),
        escape(&fmt_metric(a.metric, a.expected)),
        num(a.efficiency * 100.0),
        escape(&a.rule)
    );
    if let Some(l) = &a.limited_by {
        let _ = write!(s, " Limited by {}.", escape(l));
    }
    s
}

/// Arrays: one chart per array analysis line: each member alone, the
/// array, and the expected figure as a dashed line over the array's bar.
pub(super) fn array_charts(doc: &ResultDoc) -> Vec<String> {
    let mut charts = Vec::new();
    for a in doc.analysis.iter().filter(|a| a.kind == AnalysisKind::Array) {
        let m = a.metric;
        if !finite_pos(a.measured) {
            continue;
        }
        let members: Vec<String> = match target(doc, &a.target).and_then(|t| t.stack.as_ref()) {
            Some(s) if !s.members.is_empty() => s.members.clone(),
            _ => a.from.clone(),
        };
        let member_bars: Vec<Bar> = members
            .iter()
            .filter_map(|p| {
                let v = find(doc, p, &a.test).and_then(|t| m.get(&t.summary))?;
                finite_pos(v).then(|| Bar {
                    key: 0,
                    label: p.clone(),
                    value: axis_value(m, v),
                    text: num(axis_value(m, v)),
                    tip: format!("{} alone, {}: {}", target_name(doc, p), a.test, fmt_metric(m, v)),
                })
            })
            .collect();
        let mut groups = Vec::new();
        if !member_bars.is_empty() {
            groups.push(Group {
                label: "members, each alone".into(),
                bars: member_bars,
                expected: None,
            });
        }
        let expected = finite_pos(a.expected).then(|| {
            (
                axis_value(m, a.expected),
                format!("expected {}", fmt_metric(m, a.expected)),
            )
        });
        groups.push(Group {
            label: "array".into(),
            bars: vec![Bar {
                key: 1,
                label: a.target.clone(),
                value: axis_value(m, a.measured),
                text: num(axis_value(m, a.measured)),
                tip: format!(
                    "{}, {}: {} ({}% of expected)",
                    target_name(doc, &a.target),
                    a.test,
                    fmt_metric(m, a.measured),
                    num(a.efficiency * 100.0)
                ),
            }],
            expected,
        });
        let title = format!("{} · {} · {}", target_name(doc, &a.target), a.test, a.metric);
        let svg = bar_chart(Chart::Array, &title, metric_axis(m), num, &groups);
        let names = vec!["member alone".to_string(), "array (dashed line: expected)".to_string()];
        charts.push(figure(&title, &svg, &legend(&names), &[line_note(a)]));
    }
    charts
}

/// Layers: one chart per unit (MB/s, IOPS): for each layer analysis line,
/// the device beneath and the layer.
pub(super) fn layer_charts(doc: &ResultDoc) -> Vec<String> {
    let mut charts = Vec::new();
    let lines: Vec<(&Analysis, Metric)> = doc
        .analysis
        .iter()
        .filter(|a| a.kind == AnalysisKind::Layer && finite_pos(a.measured) && finite_pos(a.expected))
        .map(|a| (a, a.metric))
        .collect();
    for iops in [false, true] {
        let these: Vec<&(&Analysis, Metric)> = lines.iter().filter(|(_, m)| m.is_iops() == iops).collect();
        if these.is_empty() {
            continue;
        }
        let groups: Vec<Group> = these
            .iter()
            .map(|(a, m)| {
                let beneath = target(doc, &a.target)
                    .and_then(|t| t.stack.as_ref())
                    .and_then(|s| s.on.clone())
                    .or_else(|| a.from.first().cloned())
                    .unwrap_or_else(|| "beneath".into());
                let overhead = (1.0 - a.efficiency) * 100.0;
                Group {
                    label: format!(
                        "{} · {} · {}",
                        target_name(doc, &a.target),
                        a.test,
                        if m.is_read() { "read" } else { "write" }
                    ),
                    bars: vec![
                        Bar {
                            key: 0,
                            label: beneath.clone(),
                            value: axis_value(*m, a.expected),
                            text: num(axis_value(*m, a.expected)),
                            tip: format!("{beneath} (beneath), {}: {}", a.test, fmt_metric(*m, a.expected)),
                        },
                        Bar {
                            key: 1,
                            label: a.target.clone(),
                            value: axis_value(*m, a.measured),
                            text: format!("{} ({}%)", num(axis_value(*m, a.measured)), num(a.efficiency * 100.0)),
                            tip: format!(
                                "{}, {}: {}; {}% of the device beneath, overhead {}%",
                                target_name(doc, &a.target),
                                a.test,
                                fmt_metric(*m, a.measured),
                                num(a.efficiency * 100.0),
                                num(overhead)
                            ),
                        },
                    ],
                    expected: None,
                }
            })
            .collect();
        let unit = if iops { "IOPS" } else { "MB/s" };
        let title = format!("Layer overhead ({unit})");
        let axis = if iops {
            "IOPS (requests/s)".to_string()
        } else {
            "Throughput (MB/s, 10^6 bytes/s)".to_string()
        };
        let svg = bar_chart(Chart::Layer, &title, axis, num, &groups);
        let names = vec!["device beneath".to_string(), "layer (% of beneath)".to_string()];
        let notes: Vec<String> = these.iter().map(|(a, _)| line_note(a)).collect();
        charts.push(figure(&title, &svg, &legend(&names), &notes));
    }
    charts
}

/// All at once: one chart per run and metric: each disk alone and while
/// all ran, and the sums from the analysis line.
pub(super) fn all_at_once_charts(doc: &ResultDoc) -> Vec<String> {
    let mut charts = Vec::new();
    for run in &doc.all_at_once {
        for &m in metrics(run.workload) {
            let mut groups: Vec<Group> = run
                .results
                .iter()
                .filter_map(|r| {
                    let together = m.get(&r.summary).filter(|v| finite_pos(*v) && r.status == Status::Ok)?;
                    let mut bars = Vec::new();
                    if let Some(alone) = find(doc, &r.target, &run.test)
                        .filter(|t| t.status == Status::Ok)
                        .and_then(|t| m.get(&t.summary))
                        .filter(|v| finite_pos(*v))
                    {
                        bars.push(Bar {
                            key: 0,
                            label: "alone".into(),
                            value: axis_value(m, alone),
                            text: num(axis_value(m, alone)),
                            tip: format!("{} alone: {}", target_name(doc, &r.target), fmt_metric(m, alone)),
                        });
                    }
                    bars.push(Bar {
                        key: 1,
                        label: "all".into(),
                        value: axis_value(m, together),
                        text: num(axis_value(m, together)),
                        tip: format!(
                            "{} with all the others: {}",
                            target_name(doc, &r.target),
                            fmt_metric(m, together)
                        ),
                    });
                    Some(Group {
                        label: target_name(doc, &r.target),
                        bars,
                        expected: None,
                    })
                })
                .collect();
            if groups.is_empty() {
                continue;
            }
            let line = doc
                .analysis
                .iter()
                .find(|a| a.kind == AnalysisKind::AllAtOnce && a.test == run.test && a.metric == m);
            let mut notes = Vec::new();
            if let Some(a) = line.filter(|a| finite_pos(a.measured) && finite_pos(a.expected)) {
                groups.push(Group {
                    label: "sum of all disks".into(),
                    bars: vec![
                        Bar {
                            key: 0,
                            label: "alone".into(),
                            value: axis_value(m, a.expected),
                            text: num(axis_value(m, a.expected)),
                            tip: format!("sum of each disk alone: {}", fmt_metric(m, a.expected)),
                        },
                        Bar {
                            key: 1,
                            label: "all".into(),
                            value: axis_value(m, a.measured),
                            text: format!("{} ({}%)", num(axis_value(m, a.measured)), num(a.efficiency * 100.0)),
                            tip: format!(
                                "sum while all ran: {} ({}% of the sum alone)",
                                fmt_metric(m, a.measured),
                                num(a.efficiency * 100.0)
                            ),
                        },
                    ],
                    expected: None,
                });
                notes.push(analysis_note(a));
            }
            let title = format!("All at once: {} · {}", run.test, m.name());
            let svg = bar_chart(Chart::AllAtOnce, &title, metric_axis(m), num, &groups);
            let names = vec!["each disk alone".to_string(), "all disks together".to_string()];
            charts.push(figure(&title, &svg, &legend(&names), &notes));
        }
    }
    charts
}

/// The charts of `kind` for `doc` (empty when it has no data for them).
pub(super) fn charts(doc: &ResultDoc, kind: Chart) -> Vec<String> {
    match kind {
        Chart::Surface => surface_charts(doc),
        Chart::Seek => seek_charts(doc),
        Chart::Latency => latency_charts(doc),
        Chart::Array => array_charts(doc),
        Chart::Layer => layer_charts(doc),
        Chart::AllAtOnce => all_at_once_charts(doc),
        // Over all the documents: fleet_section.
        Chart::Fleet => Vec::new(),
        // In each target's surface scan section: scan::sections.
        Chart::SurfaceScan => Vec::new(),
        // In each target's preconditioning section: scan::sections.
        Chart::SteadyState => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::html::render;
    use crate::render::html::tests::{charts_of, doc, loaded, marks, omitted, QUICK, STACKS};

    #[test]
    fn a_run_without_arrays_draws_surface_seek_and_latency_and_notes_the_rest() {
        let html = render(&[loaded("quick.json", doc(QUICK))]);
        for kind in [Chart::Surface, Chart::Seek, Chart::Latency] {
            let charts = charts_of(&html, kind);
            assert!(!charts.is_empty(), "{} drawn", kind.id());
            assert!(charts.iter().all(|c| marks(c) > 0), "{} has data marks", kind.id());
            assert_eq!(omitted(&html, kind), 0, "{} not noted as missing", kind.id());
        }
        for kind in [Chart::Array, Chart::Layer, Chart::AllAtOnce] {
            assert!(charts_of(&html, kind).is_empty(), "no {} chart", kind.id());
            assert_eq!(omitted(&html, kind), 1, "{} noted as missing", kind.id());
        }
        // One surface chart with a series per disk: 8 surface dots and 3 zone squares each.
        let surface = charts_of(&html, Chart::Surface);
        assert_eq!(surface.len(), 1);
        assert_eq!(surface[0].matches("<g class=\"series\"").count(), 4);
        assert_eq!(surface[0].matches("<circle class=\"mark\"").count(), 4 * 8);
        assert_eq!(surface[0].matches("<rect class=\"mark square\"").count(), 4 * 3);
        // Seek: 7 sections x 4 disks.
        assert_eq!(marks(charts_of(&html, Chart::Seek)[0]), 28);
        // Latency: every test with percentiles but seek_profile, zones and command_overhead.
        let latency = charts_of(&html, Chart::Latency);
        assert_eq!(
            latency.len(),
            6,
            "cached, buffered, direct, seq_read, rand_read, iops_sweep"
        );
        assert!(html.contains("Completion latency (log scale)"));
        assert!(
            html.contains("/dev/sda (BB-SATA-0002) · bs 4096 B · read"),
            "sweep steps name their size"
        );
        assert!(html.contains("Read throughput (MB/s, 10^6 bytes/s)"));
        assert!(html.contains("Mean time per read (µs)"));
    }

    #[test]
    fn a_run_with_stacks_draws_every_chart() {
        let html = render(&[loaded("stacks.json", doc(STACKS))]);
        for kind in Chart::ALL {
            let charts = charts_of(&html, kind);
            assert!(!charts.is_empty(), "{} drawn", kind.id());
            assert!(charts.iter().all(|c| marks(c) > 0), "{} has data marks", kind.id());
            assert_eq!(omitted(&html, kind), 0, "{}", kind.id());
        }
        // Arrays: one chart per analysis line, each with both members, the
        // array, and the expected line.
        let arrays = charts_of(&html, Chart::Array);
        assert_eq!(arrays.len(), 2, "seq_read and rand_read on md0");
        for a in &arrays {
            assert_eq!(a.matches("class=\"mark bar\"").count(), 3, "2 members + the array");
            assert_eq!(a.matches("class=\"mark expected\"").count(), 1);
        }
        assert!(arrays[0].contains("expected 27.9 MB/s"), "{}", arrays[0]);
        // Layers: MB/s (seq_read, seq_write) and IOPS (rand_read), two bars each.
        let layers = charts_of(&html, Chart::Layer);
        assert_eq!(layers.len(), 2);
        assert_eq!(layers[0].matches("class=\"mark bar\"").count(), 4);
        assert_eq!(layers[1].matches("class=\"mark bar\"").count(), 2);
        // All at once: seq_read (MB/s) and rand_read (IOPS): 4 disks x 2 + the sums.
        let together = charts_of(&html, Chart::AllAtOnce);
        assert_eq!(together.len(), 2);
        for c in &together {
            assert_eq!(c.matches("class=\"mark bar\"").count(), 4 * 2 + 2);
        }
    }

    #[test]
    fn seek_bars_go_on_a_log_axis_when_figures_span_more_than_twenty_times() {
        let d = doc(QUICK);
        let linear = seek_charts(&d).concat();
        assert!(linear.contains("Mean time per read (µs)<"), "linear axis: {linear}");
        // One target 100 times faster (an SSD next to a disk): log axis, decades.
        let mut d = doc(QUICK);
        for t in d.tests.iter_mut().filter(|t| t.target == "/dev/sda") {
            for f in &mut t.summary.seek_ns {
                f.value /= 100.0;
            }
        }
        let log = seek_charts(&d).concat();
        assert!(log.contains("Mean time per read (µs) (log scale)"), "{log}");
        for tick in [">1.00<", ">10.0<", ">100<", ">1000<"] {
            assert!(log.contains(tick), "decade tick {tick}");
        }
        // Every bar still stands on the axis and inside the plot.
        for (i, _) in log.match_indices("<rect class=\"mark bar\"") {
            let tag = &log[i..i + log[i..].find('>').unwrap()];
            let num_of = |k: &str| -> f64 {
                let j = tag.find(&format!(" {k}=\"")).unwrap() + k.len() + 3;
                tag[j..j + tag[j..].find('"').unwrap()].parse().unwrap()
            };
            let (y, h) = (num_of("y"), num_of("height"));
            assert!(y >= TOP - 0.1 && (y + h - (H - BOTTOM)).abs() < 0.2, "{tag}");
        }
    }

    #[test]
    fn the_surface_runs_from_outside_to_inside() {
        let d = doc(QUICK);
        let series = surface_series(&d, "zones");
        assert_eq!(series.len(), 4);
        for s in &series {
            let dots: Vec<f64> = s.points.iter().filter(|p| p.shape == Shape::Dot).map(|p| p.x).collect();
            assert_eq!(dots.len(), 8, "{}", s.name);
            assert!(dots.windows(2).all(|w| w[0] < w[1]), "{}: {dots:?}", s.name);
            assert!(dots[0] < 2.0 && dots[7] > 98.0, "{}: {dots:?}", s.name);
            // The squares: outside near 0, middle near 50, inside near 100.
            let zones: Vec<f64> = s
                .points
                .iter()
                .filter(|p| p.shape == Shape::Square)
                .map(|p| p.x)
                .collect();
            assert_eq!(zones.len(), 3);
            assert!(
                zones[0] < 5.0 && (zones[1] - 50.0).abs() < 5.0 && zones[2] > 95.0,
                "{zones:?}"
            );
        }
        // The y values are the steps' MB/s.
        let t = d.tests.iter().find(|t| t.name == "zones").unwrap();
        let first = t.steps.iter().find(|s| s.label == "surface_00").unwrap();
        let want = first.read.as_ref().unwrap().bytes_per_sec / 1e6;
        assert!(series[0].points.iter().any(|p| (p.y - want).abs() < 1e-9));
    }

    #[test]
    fn a_chart_without_data_is_omitted_with_a_note() {
        let mut d = doc(QUICK);
        // No zones steps with reads, no seek figures.
        for t in &mut d.tests {
            if t.workload == Workload::Zones {
                for s in &mut t.steps {
                    s.read = None;
                }
            }
            if t.workload == Workload::SeekProfile {
                t.summary.seek_ns.clear();
            }
        }
        let html = render(&[loaded("q.json", d)]);
        for kind in [Chart::Surface, Chart::Seek] {
            assert!(charts_of(&html, kind).is_empty(), "{}", kind.id());
            assert_eq!(omitted(&html, kind), 1, "{}", kind.id());
        }
        assert!(!charts_of(&html, Chart::Latency).is_empty());
        // No tests at all: every chart is a note.
        let mut empty = doc(QUICK);
        empty.tests.clear();
        let html = render(&[loaded("e.json", empty)]);
        for kind in Chart::ALL {
            assert!(charts_of(&html, kind).is_empty(), "{}", kind.id());
            assert_eq!(omitted(&html, kind), 1, "{}", kind.id());
        }
        assert!(render(&[]).contains("No result documents."));
    }
}
