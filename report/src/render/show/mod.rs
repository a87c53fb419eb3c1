//! `show`: a result document as text, like the seed posts' tables.
//!
//! For each document: the run and the host; the targets; the summary table
//! of `bench_core::verdict::table` (one row per target: cached, buffered, seqrd,
//! seqwr, rndrd, rndwr in MB/s, then the analysis lines when the document
//! has them) with the test each column takes; the all-at-once runs; then per
//! target every test's figures, the seek profile, the zone rates outside to
//! inside, and the latency percentiles, then its surface scan when it has
//! one ([`crate::figures::scan`]). Every heading names its unit (MB/s = 10^6 B/s,
//! MiB = 2^20 B, GB = 10^9 B, µs = 10^-6 s, ms = 10^-3 s, IOPS =
//! requests/s). A test that was skipped or failed shows as such, never as
//! a number.
//!
//! The text goes to a terminal: [`render`] passes its own text through
//! `bench_core::vocab::console::safe_lines` and adds bench-core's (the verdict
//! block, the summary table), already safe, as it is, so that a device
//! string is escaped once.

use std::collections::BTreeSet;

use bench_core::document::result::{
    AllAtOnce, DirStats, Figure, ResultDoc, Status, StepResult, SurfaceScan, TargetInfo, TestResult,
};
use bench_core::spec::Workload;
use bench_core::verdict::analysis::Metric;
use bench_core::vocab::console::safe_lines;

use crate::figures::metric::{lat_percentile, main_step, metric_label, metric_plain};
use crate::figures::text::{self, table, Align};
use crate::read::Loaded;

/// The summary table's columns: header, workload, whether the write rate is
/// shown (the console table's own, so the two never disagree).
pub use bench_core::verdict::table::COLUMNS;

/// The latency percentiles shown, in percent.
pub const PERCENTILES: [f64; 6] = [50.0, 90.0, 95.0, 99.0, 99.9, 99.99];

/// Every document, one after another, separated by a blank line.
pub fn render_all(docs: &[Loaded]) -> String {
    docs.iter().map(render).collect::<Vec<_>>().join("\n")
}

/// One document, console-safe: its own text through
/// [`safe_lines`], bench-core's (the verdict block, the summary table, the
/// analysis lines), already safe, as it is (escaped once, never twice).
pub fn render(loaded: &Loaded) -> String {
    let doc = &loaded.doc;
    let mut out = safe_lines(&format!("== {}\n", loaded.file));
    out.push_str(&crate::figures::verdict::show_text(doc));
    let mut raw = String::from("\n");
    raw.push_str(&run_lines(doc));
    raw.push('\n');

    raw.push_str("targets (size in MiB = 2^20 B):\n");
    raw.push_str(&targets_table(&doc.targets));
    raw.push('\n');
    out.push_str(&safe_lines(&raw));

    // The console's table, then which test each column takes, then the analysis.
    let mut plain = doc.clone();
    plain.analysis.clear();
    plain.health_analysis.clear();
    out.push_str(&bench_core::verdict::table::render(&plain));
    out.push_str(&safe_lines(&columns_legend(doc)));
    if !doc.analysis.is_empty() {
        out.push('\n');
        out.push_str(&bench_core::verdict::table::render_analysis(&doc.analysis));
    }
    // The rest is this tool's own text.
    let safe = out;
    let mut out = String::new();
    if !doc.health_analysis.is_empty() {
        out.push_str("\nhealth analysis:\n");
        for l in &doc.health_analysis {
            out.push_str(&format!("  {}: {}\n", l.kind, l.message));
        }
    }

    for a in &doc.all_at_once {
        out.push('\n');
        out.push_str(&all_at_once(doc, a));
    }

    // Each target's tests, found once (not every test per target).
    let by_target = doc.tests_by_target();
    for t in &doc.targets {
        out.push('\n');
        out.push_str(&target_detail(t, ResultDoc::tests_of(&by_target, &t.path)));
        if let Some(s) = &t.surface_scan {
            out.push_str(&surface_scan(s));
        }
        if let Some(b) = &t.burn_in {
            out.push_str(&burn_in(b));
        }
        if let Some(p) = &t.precondition {
            out.push_str(&precondition(p));
        }
    }
    let paths: std::collections::HashSet<&str> = doc.targets.iter().map(|g| g.path.as_str()).collect();
    let orphans: Vec<&TestResult> = doc
        .tests
        .iter()
        .filter(|t| !paths.contains(t.target.as_str()))
        .collect();
    if !orphans.is_empty() {
        out.push_str("\ntests on targets the document does not list:\n");
        for t in orphans {
            out.push_str(&format!(
                "  {} on {}: {}\n",
                t.name,
                t.target,
                text::status_text(&t.status)
            ));
        }
    }
    safe + &safe_lines(&out)
}

/// A disk's health: the headline, before/after/delta, each test's
/// highest temperature, the SMART attributes.
fn health_detail(h: &bench_core::document::result::Health) -> String {
    let mut out = crate::figures::health::headline(h);
    out.push('\n');
    let mut rows = vec![vec!["figure".into(), "before".into(), "after".into(), "delta".into()]];
    rows.extend(crate::figures::health::rows(h).into_iter().map(Vec::from));
    if rows.len() > 1 {
        out.push_str(&table(&rows, &[Align::Left, Align::Right, Align::Right, Align::Right]));
    }
    let temps = crate::figures::health::per_test(&h.tests);
    if !temps.is_empty() {
        out.push_str(&format!("highest temperature per test: {}\n", temps.join("; ")));
    }
    let farm = crate::figures::health::farm(h);
    if !farm.is_empty() {
        let mut rows = vec![vec!["FARM (before the tests)".into(), String::new()]];
        rows.extend(farm.into_iter().map(Vec::from));
        out.push_str(&table(&rows, &[Align::Left, Align::Right]));
    }
    let attrs = crate::figures::health::attributes(h);
    if !attrs.is_empty() {
        let mut rows: Vec<Vec<String>> = vec![["id", "attribute", "current", "worst", "threshold", "raw", ""]
            .iter()
            .map(|s| s.to_string())
            .collect()];
        rows.extend(attrs.into_iter().map(Vec::from));
        out.push_str("SMART attributes (the last reading):\n");
        out.push_str(&table(
            &rows,
            &[
                Align::Right,
                Align::Left,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Left,
            ],
        ));
    }
    out
}

/// A target's surface scan: its facts, the reads per time class, the
/// unreadable and the recovered LBAs, the slowest reads, and the zone
/// curve as a text chart ([`crate::figures::scan`]).
fn surface_scan(s: &SurfaceScan) -> String {
    use crate::figures::scan;
    let mut out =
        String::from("surface scan (MB/s = 10^6 B/s, MiB = 2^20 B, GB = 10^9 B, ms = 10^-3 s, LBA = logical block):\n");
    for (name, value) in scan::facts(s) {
        out.push_str(&format!("  {name}: {value}\n"));
    }
    out.push_str("reads by time, from submission to completion:\n");
    let rows: Vec<Vec<String>> = scan::classes(s)
        .into_iter()
        .map(|(label, reads)| vec![label, reads.to_string()])
        .collect();
    out.push_str(&indent(&table(&rows, &[Align::Left, Align::Right])));
    for (what, lbas) in [
        ("unreadable LBAs (no read returned them)", &s.unreadable_lbas),
        ("recovered LBAs (a retry returned them)", &s.recovered_lbas),
    ] {
        out.push_str(&format!(
            "{}: {}\n",
            scan::lba_heading(what, lbas),
            scan::lba_list(lbas)
        ));
    }
    let slowest = scan::slowest_rows(s);
    if slowest.is_empty() {
        out.push_str("slowest reads: none\n");
    } else {
        out.push_str(&format!("the {} slowest reads:\n", slowest.len()));
        let mut rows = vec![["LBA", "length B", "time ms"].map(String::from).to_vec()];
        rows.extend(slowest.into_iter().map(Vec::from));
        out.push_str(&indent(&table(&rows, &[Align::Right; 3])));
    }
    let zones = scan::zone_rows(s);
    if zones.is_empty() {
        out.push_str("zones: none\n");
    } else {
        let lines = scan::zone_lines(s, scan::MAX_ZONE_LINES);
        let per = lines.first().map_or(1, |l| l.zones);
        out.push_str(&format!(
            "zones, read MB/s by position on the disk (GB from its first byte, outside to inside), {} zones{}:\n",
            s.zones.len(),
            if per > 1 {
                format!(", {per} a line")
            } else {
                String::new()
            }
        ));
        out.push_str(&indent(&table(&zones, &[Align::Right, Align::Right, Align::Left])));
    }
    out
}

/// A target's burn-in: its facts, a row per pass, and the unwritable,
/// unreadable and mismatched LBAs ([`crate::figures::burnin`]).
fn burn_in(b: &bench_core::document::result::BurnIn) -> String {
    use crate::figures::{burnin, scan};
    let mut out = String::from("burn-in (MB/s = 10^6 B/s, MiB = 2^20 B, LBA = logical block):\n");
    for (name, value) in burnin::facts(b) {
        out.push_str(&format!("  {name}: {value}\n"));
    }
    let mut rows = vec![burnin::PASS_HEADING.map(String::from).to_vec()];
    rows.extend(burnin::pass_rows(b).into_iter().map(Vec::from));
    let mut align = [Align::Right; 9];
    (align[1], align[8]) = (Align::Left, Align::Left);
    out.push_str(&indent(&table(&rows, &align)));
    for (what, lbas) in burnin::lba_lists(b) {
        out.push_str(&format!(
            "{}: {}\n",
            scan::lba_heading(what, lbas),
            scan::lba_list(lbas)
        ));
    }
    out
}

/// A target's preconditioning: its facts, and the rounds as a text chart
/// (`*` on the last window's rounds) ([`crate::figures::burnin`]).
fn precondition(p: &bench_core::document::result::Precondition) -> String {
    use crate::figures::burnin;
    let mut out = String::from("preconditioning (MB/s = 10^6 B/s, MiB = 2^20 B, IOPS = writes/s):\n");
    for (name, value) in burnin::precondition_facts(p) {
        out.push_str(&format!("  {name}: {value}\n"));
    }
    let (unit, _) = burnin::precondition_unit(p);
    let mut rows = vec![vec!["round".to_string(), unit.to_string(), String::new()]];
    rows.extend(burnin::round_rows(p).into_iter().map(Vec::from));
    out.push_str(&indent(&table(&rows, &[Align::Right, Align::Right, Align::Left])));
    out
}

/// The run and the host, in a few lines.
fn run_lines(doc: &ResultDoc) -> String {
    let r = &doc.run;
    let mut out = format!(
        "{} {}, schema {}; profile {}, config {}; started {}, took {:.1} s; seed {}; {}; run {}\n",
        doc.tool.name,
        doc.tool.version,
        doc.schema,
        r.profile.as_deref().unwrap_or("-"),
        r.config_source,
        text::utc(r.started_unix_ns),
        Duration(r.duration_ns).secs(),
        r.seed,
        if r.simulated { "simulated disks" } else { "real disks" },
        r.status,
    );
    if let Some(e) = &r.error {
        out.push_str(&format!("run error: {e}\n"));
    }
    let h = &doc.host;
    let machine: Vec<&str> = [h.sys_vendor.as_deref(), h.product_name.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    out.push_str(&format!(
        "host {}: {}; cpu {}, {} cores; memory {}; kernel {}{}\n",
        h.hostname.as_deref().unwrap_or("-"),
        if machine.is_empty() {
            "-".into()
        } else {
            machine.join(" ")
        },
        h.cpu_model.as_deref().unwrap_or("-"),
        h.cores.map_or_else(|| "-".into(), |c| c.to_string()),
        h.memory_bytes.map_or_else(|| "-".into(), text::bytes),
        h.kernel.as_deref().unwrap_or("-"),
        boot_facts(h),
    ));
    if let Some(a) = &doc.attestation {
        out.push_str(&format!("attestation: {}\n", text::attestation(a)));
    }
    out
}

/// `; booted by UEFI, Secure Boot on, lockdown integrity`, for the facts the document has.
fn boot_facts(h: &bench_core::document::result::Host) -> String {
    let mut facts = Vec::new();
    if let Some(f) = &h.firmware {
        facts.push(format!("booted by {}", f.to_uppercase()));
    }
    match h.secure_boot {
        Some(true) => facts.push("Secure Boot on".into()),
        Some(false) if h.firmware.as_deref() == Some("uefi") => facts.push("Secure Boot off".into()),
        _ => {}
    }
    if let Some(l) = &h.lockdown {
        facts.push(format!("lockdown {l}"));
    }
    if facts.is_empty() {
        String::new()
    } else {
        format!("; {}", facts.join(", "))
    }
}

/// Nanoseconds as seconds for display.
struct Duration(u64);

impl Duration {
    #[allow(clippy::cast_precision_loss)] // display with one decimal
    fn secs(&self) -> f64 {
        self.0 as f64 / 1e9
    }
}

fn opt(s: Option<&str>) -> String {
    s.filter(|s| !s.is_empty()).unwrap_or("-").to_owned()
}

/// What an array or layer is built of, in words; `-` for a disk.
pub fn stack_words(t: &TargetInfo) -> String {
    let Some(s) = &t.stack else { return "-".into() };
    let mut w = format!("{} {} {}", s.kind, s.level, s.name);
    if !s.members.is_empty() {
        w.push_str(&format!(" of {}", s.members.join(" + ")));
    }
    if let Some(on) = &s.on {
        w.push_str(&format!(" on {on}"));
    }
    if let Some(c) = s.chunk_bytes {
        w.push_str(&format!(", chunk {c} B"));
    }
    if let Some(l) = &s.layout {
        w.push_str(&format!(", layout {l}"));
    }
    if let Some(m) = &s.mode {
        w.push_str(&format!(", {m}"));
    }
    w
}

fn targets_table(targets: &[TargetInfo]) -> String {
    let mut rows = vec![[
        "target",
        "kind",
        "model",
        "serial",
        "firmware",
        "transport",
        "MiB",
        "rotational",
        "writable",
        "built as",
    ]
    .map(String::from)
    .to_vec()];
    for t in targets {
        rows.push(vec![
            t.path.clone(),
            t.kind.to_string(),
            opt(t.model.as_deref()),
            opt(t.serial.as_deref()),
            opt(t.firmware.as_deref()),
            opt(t.transport.as_deref()),
            text::mib(t.size_bytes),
            t.rotational.map_or("-", |r| if r { "yes" } else { "no" }).into(),
            if t.writable { "yes" } else { "no" }.into(),
            stack_words(t),
        ]);
    }
    use Align::{Left as L, Right as R};
    table(&rows, &[L, L, L, L, L, L, R, L, L, L])
}

/// Which test each summary column takes: per column, the workload, the
/// figure, and the names of the tests it took across targets.
fn columns_legend(doc: &ResultDoc) -> String {
    let mut rows = vec![["column", "workload", "figure", "test (first ok on each target)"]
        .map(String::from)
        .to_vec()];
    let by_target = doc.tests_by_target();
    for (col, w, write) in COLUMNS {
        let mut names = BTreeSet::new();
        for t in &doc.targets {
            let on: Vec<&TestResult> = ResultDoc::tests_of(&by_target, &t.path)
                .iter()
                .copied()
                .filter(|x| x.workload == w)
                .collect();
            if let Some(x) = on.iter().find(|x| x.status == Status::Ok).or(on.first()) {
                names.insert(x.name.as_str());
            }
        }
        rows.push(vec![
            col.into(),
            w.name().into(),
            if write { "write MB/s" } else { "read MB/s" }.into(),
            if names.is_empty() {
                "(none run)".into()
            } else {
                names.into_iter().collect::<Vec<_>>().join(", ")
            },
        ]);
    }
    let mut out = String::from("columns (MB/s = 10^6 B/s):\n");
    out.push_str(&indent(&table(&rows, &[Align::Left; 4])));
    out
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("  {l}\n")).collect()
}

/// One all-at-once run: each disk's figure together and alone.
fn all_at_once(doc: &ResultDoc, a: &AllAtOnce) -> String {
    // The analysed figures of the workload, else whichever the results have.
    let mut metrics: Vec<Metric> = bench_core::verdict::analysis::metrics(a.workload).to_vec();
    if metrics.is_empty() {
        metrics = [Metric::ReadBps, Metric::WriteBps, Metric::ReadIops, Metric::WriteIops]
            .into_iter()
            .filter(|m| a.results.iter().any(|r| m.get(&r.summary).is_some()))
            .collect();
    }
    let mut out = format!(
        "all at once: {} ({}) on {} disks together, each against the same test alone (MB/s = 10^6 B/s, IOPS = requests/s):\n",
        a.test,
        a.workload.name(),
        a.results.len()
    );
    let mut rows = vec![["target", "figure", "together", "alone", "together/alone"]
        .map(String::from)
        .to_vec()];
    let by_target = doc.tests_by_target();
    for r in &a.results {
        let alone = ResultDoc::tests_of(&by_target, &r.target)
            .iter()
            .copied()
            .find(|t| t.name == a.test);
        for &m in &metrics {
            if m.get(&r.summary).is_none() && alone.is_none_or(|t| m.get(&t.summary).is_none()) {
                continue;
            }
            let show = |t: &TestResult| -> String {
                text::status_word(t)
                    .unwrap_or_else(|| m.get(&t.summary).map_or_else(|| "-".into(), |v| metric_plain(m, v)))
            };
            let tog = show(r);
            let alo = alone.map_or_else(|| "not run".into(), show);
            let rat = match (m.get(&r.summary), alone.and_then(|t| m.get(&t.summary))) {
                (Some(x), Some(y)) if r.status == Status::Ok && alone.is_some_and(|t| t.status == Status::Ok) => {
                    text::ratio(y, x)
                }
                _ => "-".into(),
            };
            rows.push(vec![r.target.clone(), metric_label(m).into(), tog, alo, rat]);
        }
    }
    if rows.len() == 1 {
        out.push_str("  no throughput or IOPS figure to set side by side\n");
        return out;
    }
    use Align::{Left as L, Right as R};
    out.push_str(&indent(&table(&rows, &[L, L, R, R, R])));
    out.push_str(&scaling(doc, a, &metrics));
    out
}

/// The scaling runs of an all-at-once test (`scaling`): the sum of each
/// figure on the first 2, 4, ... disks at once and on all, against the
/// same disks' sum alone; empty without them.
fn scaling(doc: &ResultDoc, a: &AllAtOnce, metrics: &[Metric]) -> String {
    if a.scaling.is_empty() {
        return String::new();
    }
    let by_target = doc.tests_by_target();
    let alone = |targets: &mut dyn Iterator<Item = &String>, m: Metric| -> Option<f64> {
        targets
            .map(|t| {
                ResultDoc::tests_of(&by_target, t)
                    .iter()
                    .find(|x| x.name == a.test && x.status == Status::Ok)
                    .and_then(|x| m.get(&x.summary))
            })
            .sum()
    };
    let mut rows = vec![["disks", "figure", "sum together", "sum alone", "together/alone"]
        .map(String::from)
        .to_vec()];
    let all = bench_core::document::result::ScalingPoint {
        targets: a.results.iter().map(|r| r.target.clone()).collect(),
        ok: a.results.iter().all(|r| r.status == Status::Ok),
        read_bytes_per_sec: a.results.iter().map(|r| r.summary.read_bytes_per_sec).sum(),
        write_bytes_per_sec: a.results.iter().map(|r| r.summary.write_bytes_per_sec).sum(),
        read_iops: a.results.iter().map(|r| r.summary.read_iops).sum(),
        write_iops: a.results.iter().map(|r| r.summary.write_iops).sum(),
    };
    for p in a.scaling.iter().chain(std::iter::once(&all)) {
        for &m in metrics {
            let Some(t) = m.of_point(p) else { continue };
            let together = if p.ok { metric_plain(m, t) } else { "not all ok".into() };
            let al = alone(&mut p.targets.iter(), m);
            let ratio = match al {
                Some(al) if p.ok => text::ratio(al, t),
                _ => "-".into(),
            };
            rows.push(vec![
                p.targets.len().to_string(),
                metric_label(m).into(),
                together,
                al.map_or_else(|| "-".into(), |v| metric_plain(m, v)),
                ratio,
            ]);
        }
    }
    use Align::{Left as L, Right as R};
    let mut out = String::from("  scaling: the sum on the first disks at once, as disks are added:\n");
    out.push_str(&indent(&indent(&table(&rows, &[R, L, R, R, R]))));
    out
}

/// Everything about one target.
/// A failed NVMe disk's telemetry log: where it was saved beside the
/// document, its size and SHA-256, or why it was not kept.
fn telemetry_line(t: &bench_core::document::result::Telemetry) -> String {
    let areas: Vec<String> = t.data_areas.iter().map(u8::to_string).collect();
    let kept = match (&t.file, &t.sha256) {
        (Some(file), Some(sha)) => format!(
            "saved beside the document as <its name less .json>.{file}: {} B, data areas [{}], SHA-256 {sha}",
            t.bytes,
            areas.join(", ")
        ),
        _ => "not kept".to_string(),
    };
    let why = t.error.as_ref().map_or(String::new(), |e| format!(" ({e})"));
    format!(
        "telemetry log (NVMe log page {:02X}h, of a failed disk): {kept}{why}\n",
        t.log_id
    )
}

fn target_detail(t: &TargetInfo, tests: &[&TestResult]) -> String {
    let mut out = format!(
        "-- {} ({}, serial {}, {})\n",
        t.path,
        opt(t.model.as_deref()),
        opt(t.serial.as_deref()),
        text::bytes(t.size_bytes)
    );
    if let Some(r) = &t.write_refusal {
        out.push_str(&format!("{r}\n"));
    }
    if let Some(s) = &t.stack {
        for n in &s.notes {
            out.push_str(&format!("note: {n}\n"));
        }
    }
    if let Some(h) = &t.health {
        out.push_str(&health_detail(h));
    }
    if let Some(e) = &t.erase_support {
        out.push_str(&format!(
            "erase support (the disk's {}; nothing was erased): {}\n",
            e.source,
            bench_core::device::erase::summary(e)
        ));
    }
    if let Some(l) = &t.link {
        for (when, r) in [("before the run", &l.before), ("after the run", &l.after)] {
            if let Some(r) = r {
                out.push_str(&format!("link {when}: {}\n", bench_core::device::link::summary(r)));
                for e in &r.errors {
                    out.push_str(&format!("  not read: {e}\n"));
                }
            }
        }
    }
    if let Some(tl) = &t.telemetry {
        out.push_str(&telemetry_line(tl));
    }
    if tests.is_empty() {
        out.push_str("no tests on this target\n");
        return out;
    }
    out.push_str(&tests_table(tests));
    // Why tests did not run or failed, each distinct status once.
    let mut why: Vec<(String, Vec<&str>)> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for x in tests.iter().filter(|x| x.status != Status::Ok) {
        let s = text::status_text(&x.status);
        match at.get(&s) {
            Some(&i) => why[i].1.push(&x.name),
            None => {
                at.insert(s.clone(), why.len());
                why.push((s, vec![&x.name]));
            }
        }
    }
    for (s, names) in why {
        out.push_str(&format!("  {}: {s}\n", names.join(", ")));
    }
    let ok = |w: Workload| tests.iter().filter(move |x| x.workload == w && x.status == Status::Ok);
    for x in ok(Workload::SeekProfile) {
        out.push_str(&seek_profile(x));
    }
    for x in ok(Workload::Zones) {
        out.push_str(&zones(x));
    }
    for x in ok(Workload::IopsSweep) {
        out.push_str(&iops_sweep(x));
    }
    for x in ok(Workload::Commit) {
        out.push_str(&commit(x));
    }
    for x in ok(Workload::Slog) {
        out.push_str(&slog(x));
    }
    out.push_str(&tool_units(tests));
    out.push_str(&passes(tests));
    out.push_str(&steady(tests));
    out.push_str(&latency(tests));
    out
}

/// The tests that waited for steady state before they were measured
/// (fio's `ss`), a line per wait ([`text::steady_lines`]); empty if none.
fn steady(tests: &[&TestResult]) -> String {
    let lines: Vec<String> = tests.iter().flat_map(|x| text::steady_lines(x)).collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from("steady state before measuring (fio's ss; the wait is not measured):\n");
    for l in lines {
        out.push_str(&format!("  {l}\n"));
    }
    out
}

/// The steps of several passes (`params.passes`, `params.warmup`), each
/// pass's MB/s with the warm-up and the one reported marked, the lowest
/// mean latency of the measured passes (CrystalDiskMark's latency, chosen
/// on its own), and the steps that filled their range first; empty if none.
fn passes(tests: &[&TestResult]) -> String {
    // (test, step, each pass's cell, lowest mean latency)
    let mut steps: Vec<(String, String, Vec<String>, String)> = Vec::new();
    let mut fills = String::new();
    for x in tests {
        for st in &x.steps {
            match st.filled_bytes {
                Some(0) => fills.push_str(&format!(
                    "  {} {}: not filled (the target may not be written): it read the data already there\n",
                    x.name, st.label
                )),
                Some(n) => fills.push_str(&format!(
                    "  {} {}: {} filled with random data first (untimed)\n",
                    x.name,
                    st.label,
                    text::bytes(n)
                )),
                None => {}
            }
            if st.passes.is_empty() {
                continue;
            }
            let cells = st
                .passes
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let mark = match text::pass_mark(st, i) {
                        text::PassMark::Warmup => " w",
                        text::PassMark::Reported => " *",
                        text::PassMark::Measured => "  ",
                    };
                    format!("{}{mark}", text::mb_per_sec(p.bytes_per_sec))
                })
                .collect();
            let lowest = text::lowest_latency(st).map_or_else(
                || "-".to_string(),
                |(ns, pass)| format!("{} (pass {pass})", text::us(ns)),
            );
            steps.push((x.name.clone(), st.label.clone(), cells, lowest));
        }
    }
    let mut out = String::new();
    if !steps.is_empty() {
        let n = steps.iter().map(|s| s.2.len()).max().unwrap_or(0);
        let mut head = vec!["test".to_string(), "step".to_string()];
        head.extend((1..=n).map(|i| format!("pass {i}")));
        head.push("lowest mean lat us".to_string());
        let mut rows = vec![head];
        for (name, label, mut cells, lowest) in steps {
            cells.resize(n, String::new());
            let mut row = vec![name, label];
            row.extend(cells);
            row.push(lowest);
            rows.push(row);
        }
        let mut align = vec![Align::Left, Align::Left];
        align.extend(std::iter::repeat_n(Align::Right, n + 1));
        out.push_str(
            "passes, MB/s (10^6 B/s) of reads and writes together, in the order run \
             (w = warm-up, never counted; * = the pass reported, the fastest); the lowest \
             mean latency of the measured passes, microseconds, as CrystalDiskMark reports it:\n",
        );
        out.push_str(&indent(&table(&rows, &align)));
    }
    if !fills.is_empty() {
        out.push_str("fill before the test:\n");
        out.push_str(&fills);
    }
    out
}

fn tests_table(tests: &[&TestResult]) -> String {
    let mut rows = vec![[
        "test",
        "workload",
        "bs B",
        "qd",
        "jobs",
        "status",
        "read MB/s",
        "write MB/s",
        "read IOPS",
        "write IOPS",
        "mean lat µs",
        "overhead µs/cmd",
    ]
    .map(String::from)
    .to_vec()];
    for x in tests {
        let s = &x.summary;
        // A test that did not end ok shows a marker, never a figure.
        let fig = |v: Option<f64>, f: fn(f64) -> String| -> String {
            text::marker(&x.status).unwrap_or_else(|| v.map_or_else(|| "-".into(), f))
        };
        rows.push(vec![
            x.name.clone(),
            x.workload.name().into(),
            x.params.bs.0.to_string(),
            x.params.iodepth.to_string(),
            x.params.jobs.to_string(),
            match text::errno(&x.status) {
                Some(e) => format!("error (errno {e})"),
                None => text::state(&x.status),
            },
            fig(s.read_bytes_per_sec, text::mb_per_sec),
            fig(s.write_bytes_per_sec, text::mb_per_sec),
            fig(s.read_iops, text::iops),
            fig(s.write_iops, text::iops),
            fig(s.lat_mean_ns, text::us),
            fig(s.command_overhead_ns, text::us),
        ]);
    }
    use Align::{Left as L, Right as R};
    let mut out = String::from(
        "tests (MB/s = 10^6 B/s, IOPS = requests/s, µs = 10^-6 s; skip = skipped, err = failed, - = no such figure):\n",
    );
    out.push_str(&table(&rows, &[L, L, R, R, R, L, R, R, R, R, R, R]));
    out
}

/// The twins of hdparm, sysbench, dd and diskinfo (`bench_core::engine::profile::tool_figure`)
/// that ended ok, each figure in its tool's unit beside MB/s; empty if none.
/// The per-step rates of `zones` (read) and `slog` (write) get a row each;
/// `slog`'s also diskinfo -S's time per write (`TS`: `usec/IO`, write and
/// flush).
fn tool_units(tests: &[&TestResult]) -> String {
    let mut rows: Vec<Vec<String>> = vec![["test", "figure", "as the tool prints it", "MB/s"]
        .map(String::from)
        .to_vec()];
    for x in tests.iter().filter(|x| x.status == Status::Ok) {
        for (dir, v) in [
            ("read", x.summary.read_bytes_per_sec),
            ("write", x.summary.write_bytes_per_sec),
        ] {
            let Some(v) = v else { continue };
            if let Some(tool) = bench_core::engine::profile::tool_figure(&x.name, v) {
                rows.push(vec![x.name.clone(), dir.into(), tool, text::mb_per_sec(v)]);
            }
        }
        let dir = match x.workload {
            Workload::Zones => "read",
            Workload::Slog => "write",
            _ => continue,
        };
        for f in &x.summary.per_step {
            let Some(tool) = bench_core::engine::profile::tool_figure(&x.name, f.value) else {
                continue;
            };
            let (label, tool) = match x.workload {
                Workload::Slog => {
                    let us = x.steps.iter().find(|s| s.label == f.label).and_then(ns_per_write);
                    let tool = match us {
                        Some(ns) => format!("{:.1} usec/IO = {tool}", ns / 1e3),
                        None => tool,
                    };
                    (format!("{dir} {} B", f.label), tool)
                }
                _ => (format!("{dir} {}", f.label), tool),
            };
            rows.push(vec![x.name.clone(), label, tool, text::mb_per_sec(f.value)]);
        }
    }
    if rows.len() == 1 {
        return String::new();
    }
    use Align::{Left as L, Right as R};
    let mut out = String::from(
        "in the tools' units (hdparm MB/sec = 2^20 B/s; sysbench MiB/s = 2^20 B/s; dd MB/s = 10^6 B/s, SI-scaled as dd prints it; \
         diskinfo kbytes/sec = 2^10 B/s, Mbytes/s = 2^20 B/s, usec/IO = µs per write and its flush):\n",
    );
    out.push_str(&table(&rows, &[L, L, R, R]));
    out
}

/// A labelled row of figures under its heading, or the status.
fn figures_block(heading: &str, x: &TestResult, figs: &[Figure], show: fn(f64) -> String) -> String {
    let mut out = format!("{heading} ({}):\n", x.name);
    if x.status != Status::Ok {
        out.push_str(&format!("  {}\n", text::status_text(&x.status)));
        return out;
    }
    if figs.is_empty() {
        out.push_str("  no figures\n");
        return out;
    }
    let rows = vec![
        figs.iter().map(|f| f.label.clone()).collect::<Vec<_>>(),
        figs.iter().map(|f| show(f.value)).collect(),
    ];
    out.push_str(&indent(&table(&rows, &vec![Align::Right; figs.len()])));
    out
}

fn seek_profile(x: &TestResult) -> String {
    figures_block(
        "seek profile, mean time per read in µs",
        x,
        &x.summary.seek_ns,
        text::us,
    )
}

/// The index of a surface point label (`surface_07` -> 7).
fn surface_index(label: &str) -> Option<u32> {
    label.strip_prefix("surface_").and_then(|n| n.parse().ok())
}

fn zones(x: &TestResult) -> String {
    let figs = &x.summary.per_step;
    let order = |l: &str| match l {
        "outside" => Some(0),
        "middle" => Some(1),
        "inside" => Some(2),
        _ => None,
    };
    let mut named: Vec<Figure> = figs.iter().filter(|f| order(&f.label).is_some()).cloned().collect();
    named.sort_by_key(|f| order(&f.label));
    let mut surface: Vec<(u32, Figure)> = figs
        .iter()
        .filter_map(|f| surface_index(&f.label).map(|i| (i, f.clone())))
        .collect();
    surface.sort_by_key(|(i, _)| *i);
    let other: Vec<Figure> = figs
        .iter()
        .filter(|f| order(&f.label).is_none() && surface_index(&f.label).is_none())
        .cloned()
        .collect();
    let mut out = figures_block("zone rates outside to inside, read MB/s", x, &named, text::mb_per_sec);
    if x.status == Status::Ok && !surface.is_empty() {
        let pts: Vec<Figure> = surface
            .into_iter()
            .map(|(i, f)| Figure {
                label: i.to_string(),
                value: f.value,
            })
            .collect();
        out.push_str(&format!(
            "surface curve, {} points outside (0) to inside, read MB/s:\n",
            pts.len()
        ));
        let rows = vec![
            pts.iter().map(|f| f.label.clone()).collect::<Vec<_>>(),
            pts.iter().map(|f| text::mb_per_sec(f.value)).collect(),
        ];
        out.push_str(&indent(&table(&rows, &vec![Align::Right; pts.len()])));
    }
    if x.status == Status::Ok && !other.is_empty() {
        out.push_str(&figures_block("other steps, read MB/s", x, &other, text::mb_per_sec));
    }
    out
}

fn iops_sweep(x: &TestResult) -> String {
    let figs: Vec<Figure> = x
        .summary
        .per_step
        .iter()
        .map(|f| Figure {
            label: format!("{} B", f.label),
            value: f.value,
        })
        .collect();
    figures_block("iops sweep, random reads by request size, IOPS", x, &figs, text::iops)
}

fn commit(x: &TestResult) -> String {
    figures_block("commit, write MB/s by step", x, &x.summary.per_step, text::mb_per_sec)
}

/// A step's time per write, ns: its runtime (writes and flushes, as
/// diskinfo -S times them) over its writes.
#[allow(clippy::cast_precision_loss)] // ns and counts far below 2^53
fn ns_per_write(s: &StepResult) -> Option<f64> {
    let w = s.write.as_ref().filter(|w| w.ios > 0)?;
    Some(s.runtime_ns as f64 / w.ios as f64)
}

/// `slog` (diskinfo -S): per write size, write MB/s and the time per
/// write with its flush.
fn slog(x: &TestResult) -> String {
    let mut out = format!(
        "slog, random writes each followed by a flush, one at a time, by write size ({}):\n",
        x.name
    );
    let steps: Vec<(&StepResult, &DirStats, f64)> = x
        .steps
        .iter()
        .filter_map(|s| Some((s, s.write.as_ref()?, ns_per_write(s)?)))
        .collect();
    if steps.is_empty() {
        out.push_str("  no figures\n");
        return out;
    }
    let mut rows = vec![
        vec!["size B".to_string()],
        vec!["write MB/s".to_string()],
        vec!["µs per write+flush".to_string()],
    ];
    for (s, w, ns) in &steps {
        rows[0].push(s.label.clone());
        rows[1].push(text::mb_per_sec(w.bytes_per_sec));
        rows[2].push(text::us(*ns));
    }
    let mut align = vec![Align::Left];
    align.resize(rows[0].len(), Align::Right);
    out.push_str(&indent(&table(&rows, &align)));
    out
}

/// The percentile's column name: `p99.9`.
pub fn percentile_name(p: f64) -> String {
    format!("p{p}")
}

/// Latency percentiles of each ok test's main step, per direction.
fn latency(tests: &[&TestResult]) -> String {
    let mut header: Vec<String> = vec![
        "test".into(),
        "dir".into(),
        "lat".into(),
        "ios".into(),
        "min".into(),
        "mean".into(),
    ];
    header.extend(PERCENTILES.iter().map(|&p| percentile_name(p)));
    header.push("max".into());
    let mut rows = vec![header];
    for x in tests.iter().filter(|x| x.status == Status::Ok) {
        let Some(step) = main_step(x) else { continue };
        for (dir, d) in [("read", &step.read), ("write", &step.write), ("flush", &step.flush)] {
            let Some(d) = d else { continue };
            if d.ios == 0 {
                continue;
            }
            // fio's clat, whose percentiles fio prints by default; lat in
            // documents from before clat was recorded.
            let (l, tag) = d.clat_ns.as_ref().map_or((&d.lat_ns, "lat"), |c| (c, "clat"));
            let mut row = vec![
                x.name.clone(),
                dir.into(),
                tag.into(),
                d.ios.to_string(),
                text::us_int(l.min),
                text::us(l.mean),
            ];
            row.extend(
                PERCENTILES
                    .iter()
                    .map(|&p| lat_percentile(l, p).map_or_else(|| "-".into(), text::us_int)),
            );
            row.push(text::us_int(l.max));
            rows.push(row);
        }
    }
    if rows.len() == 1 {
        return String::new();
    }
    let mut align = vec![Align::Left, Align::Left, Align::Left];
    align.resize(rows[0].len(), Align::Right);
    let mut out = String::from(
        "latency of the main step, µs (10^-6 s): clat = fio's (issue to completion, the percentiles fio prints), \
         lat = start to completion where no clat was recorded:\n",
    );
    out.push_str(&table(&rows, &align));
    out
}

#[cfg(test)]
mod tests;
