//! `fleet FILE...`: the disks of many documents (one machine's runs, or many
//! machines') grouped by model and firmware, for each test and figure: how
//! many, the median, the spread, and the odd ones out (more than 10% below
//! the group's median, the rule of a document's `outlier` lines; see
//! [`bench_core::analysis::fleet`]). `compare` ends with the same section
//! over its two documents.

use bench_core::analysis::{fleet, FleetGroup, OUTLIER_BELOW};

use crate::read::Loaded;
use crate::show::{metric_label, metric_plain};
use crate::text::{table, Align};

/// The whole `fleet` output.
pub fn render(docs: &[Loaded]) -> String {
    let mut out = format!(
        "fleet of {} document(s): whole disks grouped by model and firmware; MB/s = 10^6 B/s, IOPS = requests/s; \
         an outlier is more than {:.0}% below its group's median\n",
        docs.len(),
        OUTLIER_BELOW * 100.0
    );
    for (i, d) in docs.iter().enumerate() {
        out.push_str(&format!("  [{}] {} ({})\n", i + 1, d.file, host_of(d)));
    }
    let s = section(docs);
    if s.is_empty() {
        out.push_str("\nno model and firmware with two or more disks that ran the same test\n");
    } else {
        out.push_str(&s);
    }
    out
}

/// One block per group (model, firmware, test, figure), or nothing when no
/// group has two disks.
pub fn section(docs: &[Loaded]) -> String {
    let refs: Vec<&bench_core::result::ResultDoc> = docs.iter().map(|l| &l.doc).collect();
    let mut out = String::new();
    for g in fleet(&refs) {
        out.push('\n');
        out.push_str(&group(&g));
    }
    out
}

fn host_of(d: &Loaded) -> String {
    let h = &d.doc.host;
    let name = h.hostname.as_deref().unwrap_or("-");
    format!("host {name}, started {}", crate::text::utc(d.doc.run.started_unix_ns))
}

fn group(g: &FleetGroup) -> String {
    let spread = if g.median > 0.0 {
        format!(" ({:.0}% of the median)", (g.max - g.min) / g.median * 100.0)
    } else {
        String::new()
    };
    let mut out = format!(
        "-- model {}, firmware {}: test {} ({}), {}: {} disks, median {}, spread {}-{}{spread}\n",
        g.key.model,
        g.key.firmware,
        g.test,
        g.workload.name(),
        metric_label(g.metric),
        g.entries.len(),
        metric_plain(g.metric, g.median),
        metric_plain(g.metric, g.min),
        metric_plain(g.metric, g.max),
    );
    let outliers: Vec<_> = g.outliers().collect();
    let mut rows = vec![["doc", "target", "serial", metric_label(g.metric), "vs median", ""]
        .map(String::from)
        .to_vec()];
    for e in &g.entries {
        let odd = outliers.iter().any(|o| std::ptr::eq(*o, e));
        rows.push(vec![
            format!("[{}]", e.doc + 1),
            e.target.clone(),
            e.serial.clone().unwrap_or_else(|| "-".into()),
            metric_plain(g.metric, e.value),
            format!("{:+.0}%", (e.value / g.median - 1.0) * 100.0),
            if odd { "outlier".into() } else { String::new() },
        ]);
    }
    use Align::{Left as L, Right as R};
    out.push_str(&table(&rows, &[L, L, L, R, R, L]));
    out
}
