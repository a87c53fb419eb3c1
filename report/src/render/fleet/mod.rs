//! `fleet PATH...`: the machines and disks of many documents (a rack of
//! machines, or one machine's runs) in one report. `compare` ends with its
//! last part ([`section`]) over its two documents; `html` and `fleet
//! --html` draw the same view ([`crate::render::html`]).
//!
//! - Inputs ([`gather`]): each path a result document or a directory, whose
//!   `*.json` files (not its subdirectories') are read in natural name
//!   order ([`natural_cmp`]), on every core. A file
//!   that is not a result document this tool reads is skipped (the caller
//!   warns, naming it and why); a path that cannot be read at all, or no
//!   document in any, is an error.
//! - Memory: of each document only its [`Digest`] is kept, what the
//!   reports show (`state`: per whole disk its identity and each figure
//!   bench-core judges, per document its machine and verdicts), so a fleet
//!   of any size costs a few hundred bytes per disk, not its documents.
//! - Machines ([`machine_id`]): a machine is its DMI product serial, else its
//!   host name, else its document's file name, and the report says which.
//!   Serials and host names that firmware or the kernel fill in when nobody
//!   did (`To Be Filled By O.E.M.`, `Default string`, all zeros; `(none)`,
//!   the host name of a booted stick; `localhost`) name no machine: machines
//!   that all say so would be one.
//! - Groups: every whole disk (no array or layer) of every document with a
//!   known model and firmware, by disk model and firmware
//!   (as [`bench_core::verdict::analysis::fleet`] groups them, with its median and
//!   outlier rule, each disk named by index: [`Group`]), and by the
//!   machine's model (DMI vendor and product) with the disk's model and
//!   firmware (as [`bench_core::verdict::analysis::fleet_by`]): within a host model, disks of
//!   another model are not compared, so a machine with an SSD and a hard
//!   disk does not make the disk an outlier. For each test and figure: how
//!   many disks on how many machines, the median, the spread, and the
//!   outliers by bench-core's rule (more than [`OUTLIER_BELOW`] below the
//!   group's median, the rule of a document's `outlier` lines). The same
//!   disk in two documents counts twice.
//! - The text ([`render`]) opens with what a person acts on, as long as
//!   the disk models and tests make it whatever the number of machines
//!   ([`summary`]): how many machines and disks, each group
//!   by disk model and firmware with its median, 10th percentile, minimum
//!   and outliers per test and figure, and the slowest disks themselves
//!   (failed tests first, then by how far below their group's median),
//!   [`SUMMARY_CAP`] of them and "and N more". `--all` adds every
//!   document, machine and disk, and every group's disks.
//! - Machines sort naturally by name ([`natural_cmp`]: `m2` before `m10`).

use std::cmp::Ordering;
use std::collections::HashSet;

use bench_core::verdict::analysis::{DiskModel, OUTLIER_BELOW};

use crate::figures::metric::{metric_label, metric_plain};
use crate::figures::text::{self, table, Align};
use crate::read::Loaded;

mod state;

pub use state::{
    files, gather, outliers, slim, Builder, Cell, Column, Digest, DiskDigest, DiskRow, DiskView, Doc, Entry, Fleet,
    GatherError, Gathered, Group, HostDisk, BATCH,
};

// ---------------------------------------------------------------- machines

pub use crate::read::machine::{host_model, machine_id, IdBy};

/// One machine of the fleet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Its name: the serial, host name or file name ([`Machine::by`]).
    pub name: std::sync::Arc<str>,
    /// Which one the name is.
    pub by: IdBy,
    /// The host model ([`host_model`]) of its first document that has one
    /// (one copy for every machine of the model).
    pub model: Option<std::sync::Arc<str>>,
    /// The CPU model of its first document that has one.
    pub cpu: Option<std::sync::Arc<str>>,
    /// Its documents (indexes into the documents).
    pub docs: Vec<usize>,
    /// Its whole disks over all its documents, told apart by serial (else
    /// by path).
    pub disks: usize,
}

// ---------------------------------------------------------------- the view

/// How a group's key reads in a report.
pub trait Key {
    /// In a heading: `model M, firmware F`.
    fn heading(&self) -> String;
    /// As the name of a chart's row, a line or two: `M F`.
    fn lines(&self) -> Vec<String>;
}

impl Key for DiskModel {
    fn heading(&self) -> String {
        format!("model {}, firmware {}", self.model, self.firmware)
    }

    fn lines(&self) -> Vec<String> {
        vec![format!("{} {}", self.model, self.firmware)]
    }
}

impl Key for HostDisk {
    fn heading(&self) -> String {
        format!("host {}, disk {}", self.host, self.disk.heading())
    }

    fn lines(&self) -> Vec<String> {
        let mut v = vec![self.host.clone()];
        v.extend(self.disk.lines());
        v
    }
}

/// `groups` gathered by test and figure, in the order first seen (each
/// list holds the groups of one test and figure, never none).
pub fn by_test<K>(groups: &[Group<K>]) -> Vec<Vec<&Group<K>>> {
    let mut out: Vec<Vec<&Group<K>>> = Vec::new();
    for g in groups {
        match out.iter_mut().find(|v| v[0].test == g.test && v[0].metric == g.metric) {
            Some(v) => v.push(g),
            None => out.push(vec![g]),
        }
    }
    out
}

/// The spread of a group as a share of its median: `193%`; empty for a
/// median of zero.
pub fn spread_share<K>(g: &Group<K>) -> Option<f64> {
    (g.median > 0.0).then(|| (g.max - g.min) / g.median * 100.0)
}

/// A figure against its group's median: `+4%`, `-30%`.
pub fn against<K>(g: &Group<K>, v: f64) -> String {
    if g.median > 0.0 {
        format!("{:+.0}%", (v / g.median - 1.0) * 100.0)
    } else {
        "-".into()
    }
}

// ---------------------------------------------------------------- text

/// The units and the rule, said once at the top.
fn rule_line() -> String {
    format!(
        "MB/s = 10^6 B/s, IOPS = requests/s; an outlier is more than {:.0}% below its group's median \
         (bench-core's rule, as a document's outlier lines)",
        OUTLIER_BELOW * 100.0
    )
}

/// How many of the slowest disks the summary names before "and N more".
pub const SUMMARY_CAP: usize = 10;

/// `a` against `b` as a person orders names: runs of digits by their value
/// (`m2` before `m10`, `m02` beside `m2`), everything else by character;
/// names equal so are ordered by their bytes.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) if p.is_ascii_digit() && q.is_ascii_digit() => {
                let run = |s: &[u8]| s.iter().take_while(|c| c.is_ascii_digit()).count();
                let (n, m) = (run(x), run(y));
                let trim = |d: &'_ [u8]| {
                    let z = d.iter().take_while(|&&c| c == b'0').count();
                    d[z..].to_vec()
                };
                let (u, v) = (trim(&x[..n]), trim(&y[..m]));
                let by_value = u.len().cmp(&v.len()).then_with(|| u.cmp(&v));
                if by_value != Ordering::Equal {
                    return by_value;
                }
                (x, y) = (&x[n..], &y[m..]);
            }
            (Some(p), Some(q)) => {
                if p != q {
                    return p.cmp(q);
                }
                (x, y) = (&x[1..], &y[1..]);
            }
        }
    }
}

/// The nearest-rank `p`th percentile of `values` (0 < p <= 100); `None`
/// for none.
fn percentile(values: &[f64], p: f64) -> Option<f64> {
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(f64::total_cmp);
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v.get(rank.max(1) - 1).copied()
}

/// One of the summary's slowest disks.
struct Slow<'r> {
    row: &'r DiskRow,
    /// The tests that did not end ok and were not skipped.
    failed: Vec<&'r str>,
    /// Its lowest figure against its group's median, with the test and
    /// figure: (ratio, column, value).
    worst: Option<(f64, &'r Column, f64)>,
    /// How many of its figures are outliers.
    outliers: usize,
}

/// The disks of `f` that failed a test or are an outlier in one, failed
/// ones first, then the furthest below their group's median.
fn slowest(f: &Fleet) -> Vec<Slow<'_>> {
    let mut out = Vec::new();
    for r in &f.rows {
        let cells = f.cells(r);
        let mut s = Slow {
            row: r,
            failed: Vec::new(),
            worst: None,
            outliers: outliers(&cells),
        };
        for (col, (c, cell)) in f.columns.iter().zip(&cells).enumerate() {
            match cell {
                Cell::Marker(m) if m != "skip" && !s.failed.contains(&c.test.as_str()) => {
                    s.failed.push(c.test.as_str());
                }
                Cell::Figure { value, outlier: true } => {
                    let median = f.group_of(r.disk, col).map(|g| g.median);
                    if let Some(m) = median.filter(|m| *m > 0.0) {
                        let ratio = value / m;
                        if s.worst.is_none_or(|(w, _, _)| ratio < w) {
                            s.worst = Some((ratio, c, *value));
                        }
                    }
                }
                _ => {}
            }
        }
        if !s.failed.is_empty() || s.outliers > 0 {
            out.push(s);
        }
    }
    // Failed first (`false` before `true`), then by the worst ratio.
    out.sort_by(|a, b| {
        a.failed.is_empty().cmp(&b.failed.is_empty()).then_with(|| {
            let r = |s: &Slow| s.worst.map_or(f64::INFINITY, |(w, _, _)| w);
            r(a).total_cmp(&r(b))
        })
    });
    out
}

/// The summary the text opens with: counts, the acceptance verdicts by
/// model (at most [`SUMMARY_CAP`] failed disks named), the groups by disk
/// model and firmware (median, 10th percentile, minimum and outliers of
/// each test's figure), and the slowest disks, at most [`SUMMARY_CAP`].
pub fn summary(f: &Fleet) -> String {
    let disks: usize = f.machines.iter().map(|m| m.disks).sum();
    let slow = slowest(f);
    let failed = slow.iter().filter(|s| !s.failed.is_empty()).count();
    let outlying = slow.iter().filter(|s| s.outliers > 0).count();
    let mut out = format!(
        "{} machine(s), {disks} disk(s); {} group(s) by disk model and firmware; {outlying} disk(s) an outlier, \
         {failed} with a failed test\n",
        f.machines.len(),
        f.by_disk
            .iter()
            .map(|g| (&g.key.model, &g.key.firmware))
            .collect::<HashSet<_>>()
            .len(),
    );
    out.push('\n');
    out.push_str(&crate::figures::verdict::by_model_text_of(
        &f.acceptances(),
        SUMMARY_CAP,
    ));
    if f.by_disk.is_empty() {
        out.push_str("\nno model and firmware with two or more disks that ran the same test\n");
    } else {
        out.push_str("\ngroups by disk model and firmware: per test and figure, its disks and their median, 10th percentile and minimum\n");
        let mut rows = vec![[
            "model", "firmware", "test", "figure", "disks", "median", "p10", "min", "outliers",
        ]
        .map(String::from)
        .to_vec()];
        for g in &f.by_disk {
            let values: Vec<f64> = g.entries.iter().map(|e| e.value).collect();
            rows.push(vec![
                g.key.model.clone(),
                g.key.firmware.clone(),
                g.test.clone(),
                metric_label(g.metric).into(),
                g.entries.len().to_string(),
                metric_plain(g.metric, g.median),
                percentile(&values, 10.0).map_or_else(|| "-".into(), |v| metric_plain(g.metric, v)),
                metric_plain(g.metric, g.min),
                g.outliers().count().to_string(),
            ]);
        }
        use Align::{Left as L, Right as R};
        out.push_str(&table(&rows, &[L, L, L, L, R, R, R, R, R]));
    }
    if slow.is_empty() {
        out.push_str("\nno disk failed a test or is an outlier of its group\n");
        return out;
    }
    out.push_str(&format!(
        "\nthe slowest disks: those that failed a test, then the outliers, furthest below their group's median first ({} in all)\n",
        slow.len()
    ));
    let mut rows = vec![[
        "machine",
        "doc",
        "disk",
        "serial",
        "model",
        "firmware",
        "worst figure",
        "vs median",
        "outliers",
        "failed",
    ]
    .map(String::from)
    .to_vec()];
    for s in slow.iter().take(SUMMARY_CAP) {
        let t = f.disk(s.row.disk);
        let (worst, vs) = s.worst.map_or_else(
            || ("-".to_string(), "-".to_string()),
            |(ratio, c, v)| {
                (
                    format!("{} {} {}", c.test, metric_plain(c.metric, v), metric_label(c.metric)),
                    format!("{:+.0}%", (ratio - 1.0) * 100.0),
                )
            },
        );
        rows.push(vec![
            f.machines[s.row.machine].name.to_string(),
            format!("[{}]", s.row.doc + 1),
            t.path.to_owned(),
            opt(t.serial),
            opt(t.model),
            opt(t.firmware),
            worst,
            vs,
            s.outliers.to_string(),
            if s.failed.is_empty() {
                "-".into()
            } else {
                s.failed.join(" ")
            },
        ]);
    }
    use Align::{Left as L, Right as R};
    out.push_str(&table(&rows, &[L, L, L, L, L, L, L, R, R, L]));
    if slow.len() > SUMMARY_CAP {
        out.push_str(&format!(
            "and {} more (`fleet --all` lists every machine and disk)\n",
            slow.len() - SUMMARY_CAP
        ));
    }
    out
}

/// The whole `fleet` text: the summary ([`summary`]); with `all`, then the
/// documents, the machines, every machine and disk in one table, the groups
/// by host model, and by disk model and firmware, with their disks.
pub fn render(f: &Fleet, all: bool) -> String {
    let mut out = format!(
        "fleet of {} document(s) from {} machine(s); {}\n",
        f.docs.len(),
        f.machines.len(),
        rule_line()
    );
    out.push_str(&summary(f));
    if !all {
        out.push_str(
            "\nevery document, machine and disk, and each group's disks: `fleet --all`, `fleet --html FILE`\n",
        );
        return out;
    }
    out.push('\n');
    for (i, d) in f.docs.iter().enumerate() {
        out.push_str(&format!(
            "  [{}] {} (machine {}, started {})\n",
            i + 1,
            d.file,
            f.machine_name(i),
            text::utc(d.started_unix_ns)
        ));
    }
    out.push('\n');
    out.push_str(&crate::figures::verdict::by_model_text_of(&f.acceptances(), usize::MAX));
    out.push_str(
        "\nmachines (a machine is its DMI product serial, else its host name, else its document's file name: \
         `by` says which)\n",
    );
    out.push_str(&machines_table(f));
    out.push_str(&format!(
        "\nevery machine and disk: per test the figure bench-core judges (MB/s = 10^6 B/s, IOPS = requests/s), \
         from the disk's first run of it that ended ok; skip = skipped, err = failed, - = not run; \
         * = outlier of its disk model and firmware group (more than {:.0}% below its median)\n",
        OUTLIER_BELOW * 100.0
    ));
    out.push_str(&disks_table(f));
    out.push_str("\nby host model (DMI vendor and product), and within it by disk model and firmware:\n");
    if f.by_host.is_empty() {
        out.push_str("no host model with two or more disks of one model and firmware that ran the same test\n");
    }
    for g in &f.by_host {
        out.push('\n');
        out.push_str(&group(f, g));
    }
    out.push_str("\nby disk model and firmware:\n");
    if f.by_disk.is_empty() {
        out.push_str("no model and firmware with two or more disks that ran the same test\n");
    } else {
        out.push_str(&groups_text(f));
    }
    out
}

/// The groups by disk model and firmware alone (what `compare` ends
/// with), or nothing when no group has two disks.
pub fn section(docs: &[Loaded]) -> String {
    groups_text(&Fleet::new(docs))
}

fn groups_text(f: &Fleet) -> String {
    let mut out = String::new();
    for g in &f.by_disk {
        out.push('\n');
        out.push_str(&group(f, g));
    }
    out
}

fn opt(s: Option<&str>) -> String {
    s.unwrap_or("-").to_owned()
}

fn machines_table(f: &Fleet) -> String {
    let mut rows = vec![["machine", "by", "host model", "CPU", "disks", "documents"]
        .map(String::from)
        .to_vec()];
    for m in &f.machines {
        rows.push(vec![
            m.name.to_string(),
            m.by.word().into(),
            opt(m.model.as_deref()),
            opt(m.cpu.as_deref()),
            m.disks.to_string(),
            m.docs
                .iter()
                .map(|d| format!("[{}]", d + 1))
                .collect::<Vec<_>>()
                .join(" "),
        ]);
    }
    use Align::{Left as L, Right as R};
    table(&rows, &[L, L, L, L, R, L])
}

fn disks_table(f: &Fleet) -> String {
    let mut head: Vec<String> = ["machine", "doc", "disk", "model", "firmware", "serial"]
        .map(String::from)
        .to_vec();
    let mut units: Vec<String> = vec![String::new(); head.len()];
    for c in &f.columns {
        head.push(c.test.clone());
        units.push(metric_label(c.metric).into());
    }
    head.push(String::new());
    let mut rows = vec![head, units];
    for r in &f.rows {
        let t = f.disk(r.disk);
        let cells = f.cells(r);
        let mut row = vec![
            f.machines[r.machine].name.to_string(),
            format!("[{}]", r.doc + 1),
            t.path.to_owned(),
            opt(t.model),
            opt(t.firmware),
            opt(t.serial),
        ];
        for (c, cell) in f.columns.iter().zip(&cells) {
            row.push(match cell {
                Cell::Figure { value, outlier } => {
                    format!("{}{}", metric_plain(c.metric, *value), if *outlier { "*" } else { " " })
                }
                Cell::Marker(m) => format!("{m} "),
                Cell::NotRun => "- ".into(),
            });
        }
        row.push(if outliers(&cells) > 0 {
            "outlier".into()
        } else {
            String::new()
        });
        rows.push(row);
    }
    let mut align = vec![Align::Left; 6];
    align.extend(f.columns.iter().map(|_| Align::Right));
    align.push(Align::Left);
    table(&rows, &align)
}

fn group<K: Key>(f: &Fleet, g: &Group<K>) -> String {
    let spread = spread_share(g).map_or_else(String::new, |s| format!(" ({s:.0}% of the median)"));
    let mut out = format!(
        "-- {}: test {} ({}), {}: {} disks on {} machine(s), median {}, spread {}-{}{spread}\n",
        g.key.heading(),
        g.test,
        g.workload.name(),
        metric_label(g.metric),
        g.entries.len(),
        f.machines_in(g),
        metric_plain(g.metric, g.median),
        metric_plain(g.metric, g.min),
        metric_plain(g.metric, g.max),
    );
    let mut rows = vec![[
        "doc",
        "machine",
        "disk",
        "serial",
        metric_label(g.metric),
        "vs median",
        "",
    ]
    .map(String::from)
    .to_vec()];
    for e in &g.entries {
        let t = f.disk(e.disk());
        rows.push(vec![
            format!("[{}]", f.doc_of(e) + 1),
            f.machine_name(f.doc_of(e)).to_owned(),
            t.path.to_owned(),
            opt(t.serial),
            metric_plain(g.metric, e.value),
            against(g, e.value),
            if g.is_outlier(e.value) {
                "outlier".into()
            } else {
                String::new()
            },
        ]);
    }
    use Align::{Left as L, Right as R};
    out.push_str(&table(&rows, &[L, L, L, L, R, R, L]));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_naturally() {
        let mut v = vec![
            "m10",
            "m2",
            "m1",
            "rack-10-b",
            "rack-9-b",
            "m02",
            "M3",
            "m",
            "m2a",
            "m2-1.json",
            "m10-1.json",
        ];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            [
                "M3",
                "m",
                "m1",
                "m02",
                "m2",
                "m2-1.json",
                "m2a",
                "m10",
                "m10-1.json",
                "rack-9-b",
                "rack-10-b"
            ]
        );
        assert_eq!(
            natural_cmp("m007", "m7"),
            "m007".cmp("m7"),
            "equal values: by their bytes"
        );
        assert_eq!(
            natural_cmp("x99999999999999999999999", "x100000000000000000000000"),
            Ordering::Less
        );
    }

    #[test]
    fn percentile_is_the_nearest_rank() {
        let v: Vec<f64> = (1..=26).map(f64::from).collect();
        assert_eq!(percentile(&v, 10.0), Some(3.0));
        assert_eq!(percentile(&v[..10], 10.0), Some(1.0));
        assert_eq!(percentile(&[5.0], 10.0), Some(5.0));
        assert_eq!(percentile(&[], 10.0), None);
    }
}
