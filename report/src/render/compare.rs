//! `compare A B`: two documents side by side with ratios B/A.
//!
//! Targets are matched by serial number; a target without a serial (an md
//! array, a dm layer, a file) or whose serial the other document lacks is
//! matched by the name of the array or layer in the config, then by path,
//! and the output says which targets were matched that way. Tests are
//! matched by name on matched targets. What is only in A or only in B is
//! listed. A test that was skipped or failed on either side shows its status
//! in place of the figure and no ratio.

use bench_core::document::result::{Analysis, ResultDoc, TargetInfo, TestResult};
use bench_core::verdict::analysis::Metric;

use crate::figures::metric::{main_step, metric_label, metric_plain, percentile};
use crate::figures::text::{self, table, Align};
use crate::read::Loaded;

/// How two targets were matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum How {
    /// Same serial number.
    Serial(String),
    /// Same array or layer name in the config (`md r0`).
    Stack(String),
    /// Same path; why the serial did not match.
    Path(String),
}

/// Pairs of targets (index in A, index in B) and how each was matched;
/// then the indexes only in A and only in B.
#[derive(Debug, Default)]
pub struct Matching {
    /// Matched pairs, in A's order.
    pub pairs: Vec<(usize, usize, How)>,
    /// Targets of A without a match.
    pub only_a: Vec<usize>,
    /// Targets of B without a match.
    pub only_b: Vec<usize>,
}

fn serial(t: &TargetInfo) -> Option<&str> {
    t.serial.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

fn stack_key(t: &TargetInfo) -> Option<String> {
    t.stack.as_ref().map(|s| format!("{} {}", s.kind, s.name))
}

/// Match the targets of `a` and `b`: by serial (a serial that appears on
/// more than one target of either side is not used), then by array or layer
/// name, then by path.
pub fn match_targets(a: &[TargetInfo], b: &[TargetInfo]) -> Matching {
    let unique = |ts: &[TargetInfo], s: &str| ts.iter().filter(|t| serial(t) == Some(s)).count() == 1;
    let mut b_used = vec![false; b.len()];
    let mut found: Vec<Option<(usize, How)>> = vec![None; a.len()];
    for (i, ta) in a.iter().enumerate() {
        let Some(s) = serial(ta) else { continue };
        if !unique(a, s) || !unique(b, s) {
            continue;
        }
        if let Some(j) = b.iter().position(|tb| serial(tb) == Some(s)) {
            b_used[j] = true;
            found[i] = Some((j, How::Serial(s.to_owned())));
        }
    }
    for (i, ta) in a.iter().enumerate() {
        if found[i].is_some() {
            continue;
        }
        let Some(k) = stack_key(ta) else { continue };
        if let Some(j) = (0..b.len()).find(|&j| !b_used[j] && stack_key(&b[j]).as_deref() == Some(k.as_str())) {
            b_used[j] = true;
            found[i] = Some((j, How::Stack(k)));
        }
    }
    for (i, ta) in a.iter().enumerate() {
        if found[i].is_some() {
            continue;
        }
        if let Some(j) = (0..b.len()).find(|&j| !b_used[j] && b[j].path == ta.path) {
            b_used[j] = true;
            let why = match (serial(ta), serial(&b[j])) {
                (None, None) => "no serial on either side".to_owned(),
                (Some(s), None) => format!("A's serial {s}, none in B"),
                (None, Some(s)) => format!("no serial in A, B's serial {s}"),
                (Some(x), Some(y)) if x == y => format!("serial {x} not unique"),
                (Some(x), Some(y)) => format!("serials differ: A {x}, B {y}"),
            };
            found[i] = Some((j, How::Path(why)));
        }
    }
    let mut m = Matching::default();
    for (i, f) in found.into_iter().enumerate() {
        match f {
            Some((j, how)) => m.pairs.push((i, j, how)),
            None => m.only_a.push(i),
        }
    }
    m.only_b = (0..b.len()).filter(|&j| !b_used[j]).collect();
    m
}

fn describe(t: &TargetInfo) -> String {
    let mut s = t.path.clone();
    if let Some(n) = serial(t) {
        s.push_str(&format!(" (serial {n})"));
    } else if let Some(k) = stack_key(t) {
        s.push_str(&format!(" ({k})"));
    }
    s
}

/// One figure of a test on both sides.
struct Row {
    figure: String,
    a: Cell,
    b: Cell,
}

/// A side's cell: a figure (raw, and as shown) or a word.
enum Cell {
    Value(f64, String),
    Word(String),
}

impl Cell {
    fn text(&self) -> &str {
        match self {
            Cell::Value(_, s) | Cell::Word(s) => s,
        }
    }
}

/// The figures of a test worth comparing: (label with unit, raw value, shown).
fn figures(t: &TestResult) -> Vec<(String, f64, String)> {
    let s = &t.summary;
    let mut out = Vec::new();
    for m in [Metric::ReadBps, Metric::WriteBps, Metric::ReadIops, Metric::WriteIops] {
        if let Some(v) = m.get(s) {
            out.push((metric_label(m).to_owned(), v, metric_plain(m, v)));
        }
    }
    if let Some(v) = s.lat_mean_ns {
        out.push(("mean lat µs".into(), v, text::us(v)));
    }
    if let Some(step) = main_step(t) {
        for (dir, d) in [("read", &step.read), ("write", &step.write)] {
            if let Some(p) = d.as_ref().and_then(|d| percentile(d, 99.0)) {
                #[allow(clippy::cast_precision_loss)] // latencies are far below 2^53 ns
                out.push((format!("{dir} p99 lat µs"), p as f64, text::us_int(p)));
            }
        }
    }
    if let Some(v) = s.command_overhead_ns {
        out.push(("overhead µs/cmd".into(), v, text::us(v)));
    }
    for f in &s.seek_ns {
        out.push((format!("seek {} µs", f.label), f.value, text::us(f.value)));
    }
    for f in &s.per_step {
        let (label, shown) = match t.workload {
            bench_core::spec::Workload::IopsSweep => (format!("{} B IOPS", f.label), text::iops(f.value)),
            bench_core::spec::Workload::Slog => (format!("{} B write MB/s", f.label), text::mb_per_sec(f.value)),
            _ => (format!("{} MB/s", f.label), text::mb_per_sec(f.value)),
        };
        out.push((label, f.value, shown));
    }
    out
}

/// The rows for one test on both sides.
fn test_rows(ta: &TestResult, tb: &TestResult) -> Vec<Row> {
    let fa = figures(ta);
    let fb = figures(tb);
    let mut labels: Vec<String> = fa.iter().map(|f| f.0.clone()).collect();
    for f in &fb {
        if !labels.contains(&f.0) {
            labels.push(f.0.clone());
        }
    }
    if labels.is_empty() {
        labels.push("status".into());
    }
    let cell = |t: &TestResult, fs: &[(String, f64, String)], label: &str| -> Cell {
        match text::status_word(t) {
            None => fs
                .iter()
                .find(|f| f.0 == label)
                .map_or_else(|| Cell::Word("-".into()), |f| Cell::Value(f.1, f.2.clone())),
            Some(w) => Cell::Word(w),
        }
    };
    labels
        .into_iter()
        .map(|l| Row {
            a: cell(ta, &fa, &l),
            b: cell(tb, &fb, &l),
            figure: l,
        })
        .collect()
}

/// Render the comparison of `a` and `b`.
pub fn render(a: &Loaded, b: &Loaded) -> String {
    let (da, db) = (&a.doc, &b.doc);
    let mut out = format!(
        "compare A = {} ({}, started {}) with B = {} ({}, started {})\n",
        a.file,
        run_words(da),
        text::utc(da.run.started_unix_ns),
        b.file,
        run_words(db),
        text::utc(db.run.started_unix_ns)
    );
    out.push_str(
        "ratio = B/A; MB/s = 10^6 B/s, IOPS = requests/s, µs = 10^-6 s; targets matched by serial, tests by name\n",
    );
    let m = match_targets(&da.targets, &db.targets);
    for (i, j, how) in &m.pairs {
        let (ta, tb) = (&da.targets[*i], &db.targets[*j]);
        out.push('\n');
        let how = match how {
            How::Serial(s) => format!("serial {s}"),
            How::Stack(k) => format!("matched by array/layer name {k}"),
            How::Path(why) => format!("matched by path ({why})"),
        };
        out.push_str(&format!("-- A {} = B {}: {how}\n", ta.path, tb.path));
        for (what, x, y) in [
            ("model", ta.model.as_deref(), tb.model.as_deref()),
            ("firmware", ta.firmware.as_deref(), tb.firmware.as_deref()),
        ] {
            if x != y {
                out.push_str(&format!("{what}: A {}, B {}\n", x.unwrap_or("-"), y.unwrap_or("-")));
            }
        }
        out.push_str(&target_tests(da, db, ta, tb));
    }
    out.push_str(&analysis(da, db, &m));
    let mut unmatched = Vec::new();
    for &i in &m.only_a {
        unmatched.push(format!("only in A: target {}", describe(&da.targets[i])));
    }
    for &j in &m.only_b {
        unmatched.push(format!("only in B: target {}", describe(&db.targets[j])));
    }
    if !unmatched.is_empty() {
        out.push('\n');
        for u in unmatched {
            out.push_str(&u);
            out.push('\n');
        }
    }
    out
}

fn run_words(d: &ResultDoc) -> String {
    format!(
        "{} {}, profile {}, run {}{}",
        d.tool.name,
        d.tool.version,
        d.run.profile.as_deref().unwrap_or("-"),
        d.run.status,
        if d.run.simulated { ", simulated" } else { "" }
    )
}

fn target_tests(da: &ResultDoc, db: &ResultDoc, ta: &TargetInfo, tb: &TargetInfo) -> String {
    let on =
        |d: &'_ ResultDoc, p: &str| -> Vec<usize> { (0..d.tests.len()).filter(|&k| d.tests[k].target == p).collect() };
    let (xa, xb) = (on(da, &ta.path), on(db, &tb.path));
    let mut rows = vec![["test", "figure", "A", "B", "B/A"].map(String::from).to_vec()];
    let mut only = Vec::new();
    let mut b_used = vec![false; xb.len()];
    for &k in &xa {
        let t1 = &da.tests[k];
        let Some(pos) = (0..xb.len()).find(|&q| !b_used[q] && db.tests[xb[q]].name == t1.name) else {
            only.push(format!("only in A: test {} on {}", t1.name, ta.path));
            continue;
        };
        b_used[pos] = true;
        let t2 = &db.tests[xb[pos]];
        for (n, r) in test_rows(t1, t2).into_iter().enumerate() {
            let ratio = match (&r.a, &r.b) {
                (Cell::Value(x, _), Cell::Value(y, _)) => text::ratio(*x, *y),
                _ => "-".into(),
            };
            rows.push(vec![
                if n == 0 { t1.name.clone() } else { String::new() },
                r.figure,
                r.a.text().to_owned(),
                r.b.text().to_owned(),
                ratio,
            ]);
        }
    }
    for (q, &k) in xb.iter().enumerate() {
        if !b_used[q] {
            only.push(format!("only in B: test {} on {}", db.tests[k].name, tb.path));
        }
    }
    let mut out = String::new();
    if rows.len() > 1 {
        use Align::{Left as L, Right as R};
        out.push_str(&table(&rows, &[L, L, R, R, R]));
    } else {
        out.push_str("no test in common\n");
    }
    for o in only {
        out.push_str(&o);
        out.push('\n');
    }
    out
}

/// A share as a bar of 10 and its percentage: `|#####     |  50%`.
fn share_bar(share: f64) -> String {
    format!(
        "{} {:>3.0}%",
        bench_core::verdict::table::share_bar(share, 10),
        share * 100.0
    )
}

/// The members of two matched analysis lines side by side, in member
/// order: each one's share of the bytes and its time busy (empty when
/// neither side has accounting).
fn member_pairs(x: &Analysis, y: &Analysis) -> Vec<Vec<String>> {
    let n = x.members.len().max(y.members.len());
    (0..n)
        .map(|i| {
            let side = |a: &Analysis| {
                a.members.get(i).map_or_else(
                    || ["-".to_string(), "-".to_string(), "-".to_string()],
                    |m| {
                        [
                            m.path.clone(),
                            share_bar(m.share),
                            format!("{:.0}%", m.utilization * 100.0),
                        ]
                    },
                )
            };
            let (first, test) = if i == 0 {
                (x.target.clone(), x.test.clone())
            } else {
                (String::new(), String::new())
            };
            let mut row = vec![first, test];
            row.extend(side(x));
            row.extend(side(y));
            row
        })
        .collect()
}

/// The analysis lines matched by kind, target (through the matching), test
/// and figure: efficiency on each side.
fn analysis(da: &ResultDoc, db: &ResultDoc, m: &Matching) -> String {
    if da.analysis.is_empty() && db.analysis.is_empty() {
        return String::new();
    }
    // A's target path -> B's target path.
    let map_path = |p: &str| -> Option<String> {
        if p == "all at once" {
            return Some(p.to_owned());
        }
        let i = da.targets.iter().position(|t| t.path == p)?;
        m.pairs
            .iter()
            .find(|(x, _, _)| *x == i)
            .map(|(_, j, _)| db.targets[*j].path.clone())
    };
    let same = |x: &Analysis, y: &Analysis| {
        x.kind == y.kind
            && x.test == y.test
            && x.metric == y.metric
            && map_path(&x.target).as_deref() == Some(&y.target)
    };
    let mut rows = vec![[
        "kind",
        "target A",
        "test",
        "figure",
        "measured A",
        "measured B",
        "B/A",
        "efficiency A",
        "efficiency B",
    ]
    .map(String::from)
    .to_vec()];
    let mut only = Vec::new();
    let mut member_rows: Vec<Vec<String>> = Vec::new();
    let mut b_used = vec![false; db.analysis.len()];
    for x in &da.analysis {
        let Some(j) = (0..db.analysis.len()).find(|&j| !b_used[j] && same(x, &db.analysis[j])) else {
            only.push(format!(
                "only in A: analysis {} {} {} {}",
                x.kind, x.target, x.test, x.metric
            ));
            continue;
        };
        b_used[j] = true;
        let y = &db.analysis[j];
        let mm = x.metric;
        let show = |v: f64| format!("{} {}", metric_plain(mm, v), if mm.is_iops() { "IOPS" } else { "MB/s" });
        rows.push(vec![
            x.kind.to_string(),
            x.target.clone(),
            x.test.clone(),
            x.metric.to_string(),
            show(x.measured),
            show(y.measured),
            text::ratio(x.measured, y.measured),
            format!("{:.1}%", x.efficiency * 100.0),
            format!("{:.1}%", y.efficiency * 100.0),
        ]);
        member_rows.extend(member_pairs(x, y));
    }
    for (j, y) in db.analysis.iter().enumerate() {
        if !b_used[j] {
            only.push(format!(
                "only in B: analysis {} {} {} {}",
                y.kind, y.target, y.test, y.metric
            ));
        }
    }
    let mut out = String::from("\nanalysis (measured vs expected from the devices beneath), A and B:\n");
    if rows.len() > 1 {
        use Align::{Left as L, Right as R};
        out.push_str(&table(&rows, &[L, L, L, L, R, R, R, R, R]));
    }
    if !member_rows.is_empty() {
        use Align::{Left as L, Right as R};
        out.push_str("\nmembers (share of the bytes moved beneath, time busy; the kernel's counters), A and B:\n");
        let mut rows = vec![[
            "target A", "test", "member A", "share A", "busy A", "member B", "share B", "busy B",
        ]
        .map(String::from)
        .to_vec()];
        rows.extend(member_rows);
        out.push_str(&table(&rows, &[L, L, L, L, R, L, L, R]));
    }
    for o in only {
        out.push_str(&o);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::document::result::StackInfo;

    fn t(path: &str, serial: Option<&str>) -> TargetInfo {
        TargetInfo {
            path: path.into(),
            serial: serial.map(String::from),
            ..TargetInfo::default()
        }
    }

    /// Two matched lines' members side by side in member order, a bar of
    /// each share and the time busy; a side without accounting shows `-`.
    #[test]
    fn members_of_matched_lines_side_by_side() {
        use bench_core::document::result::MemberShare;
        let m = |path: &str, share: f64, utilization: f64| MemberShare {
            path: path.into(),
            share,
            utilization,
            read_bytes: 0,
            write_bytes: 0,
        };
        let line = |members| Analysis {
            kind: bench_core::document::result::AnalysisKind::Array,
            target: "/dev/md0".into(),
            test: "seq".into(),
            workload: bench_core::spec::Workload::SeqRead,
            metric: bench_core::document::result::Metric::ReadBps,
            measured: 1.0,
            expected: 1.0,
            efficiency: 1.0,
            rule: String::new(),
            limited_by: None,
            from: Vec::new(),
            members,
        };
        let a = line(vec![m("/dev/vda", 1.0, 0.99), m("/dev/vdb", 0.0, 0.0)]);
        let b = line(vec![m("/dev/vdc", 0.5, 0.5)]);
        let rows = member_pairs(&a, &b);
        assert_eq!(
            rows,
            vec![
                [
                    "/dev/md0",
                    "seq",
                    "/dev/vda",
                    "|##########| 100%",
                    "99%",
                    "/dev/vdc",
                    "|#####     |  50%",
                    "50%"
                ]
                .map(String::from)
                .to_vec(),
                ["", "", "/dev/vdb", "|          |   0%", "0%", "-", "-", "-"]
                    .map(String::from)
                    .to_vec(),
            ]
        );
        assert!(member_pairs(&line(Vec::new()), &line(Vec::new())).is_empty());
    }

    #[test]
    fn matching_by_serial_then_stack_then_path() {
        let mut md_a = t("/dev/md127", None);
        md_a.stack = Some(StackInfo {
            kind: bench_core::document::result::StackClass::Md,
            name: "r0".into(),
            ..StackInfo::default()
        });
        let mut md_b = md_a.clone();
        md_b.path = "/dev/md126".into();
        let a = vec![
            t("/dev/sda", Some("S1")),
            t("/dev/sdb", Some("S2")),
            md_a,
            t("/dev/sdc", Some("OLD")),
            t("/dev/sdd", Some("GONE")),
        ];
        let b = vec![
            t("/dev/sdb", Some("S1")),
            t("/dev/sda", Some("S2")),
            t("/dev/sdc", Some("NEW")),
            md_b,
            t("/dev/sdx", Some("X")),
        ];
        let m = match_targets(&a, &b);
        assert_eq!(
            m.pairs,
            vec![
                (0, 0, How::Serial("S1".into())),
                (1, 1, How::Serial("S2".into())),
                (2, 3, How::Stack("md r0".into())),
                (3, 2, How::Path("serials differ: A OLD, B NEW".into())),
            ]
        );
        assert_eq!(m.only_a, vec![4]);
        assert_eq!(m.only_b, vec![4]);
    }

    #[test]
    fn a_repeated_serial_is_not_used() {
        let a = vec![t("/dev/sda", Some("DUP")), t("/dev/sdb", Some("DUP"))];
        let b = vec![t("/dev/sdb", Some("DUP")), t("/dev/sda", Some("DUP"))];
        let m = match_targets(&a, &b);
        assert_eq!(
            m.pairs,
            vec![
                (0, 1, How::Path("serial DUP not unique".into())),
                (1, 0, How::Path("serial DUP not unique".into())),
            ]
        );
    }
}
