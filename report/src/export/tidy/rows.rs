//! The rows of the two tables ([`figure_rows`], [`run_rows`]): every
//! figure of a document with the identity of its machine, disk and run, and
//! one row per document (see the module doc of [`super`]).

use bench_core::document::result::{
    Acceptance, DirStats, LatStats, ResultDoc, Status, StepResult, TargetInfo, TargetKind, TestResult, Verdict,
};
use bench_core::spec::Workload;

use crate::read::Loaded;

use super::{FigureRow, RunRow};

/// A u64 of the document as a Parquet INT64 (nanoseconds since 1970 fit
/// until 2262; counts and sizes far below).
fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// A count as an INT64.
fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// What a run's rows share: the run's identity.
struct RunId {
    file: String,
    machine: String,
    machine_by: String,
    machine_serial: Option<String>,
    hostname: Option<String>,
    host_model: Option<String>,
    cpu_model: Option<String>,
    profile: Option<String>,
    run_started_unix_ns: i64,
    schema_version: String,
    tool_version: String,
}

impl RunId {
    fn of(l: &Loaded) -> RunId {
        let (by, machine) = crate::read::machine::machine_id(l);
        let d = &l.doc;
        RunId {
            file: l.file.clone(),
            machine,
            machine_by: by.word().to_owned(),
            machine_serial: d.host.product_serial.clone(),
            hostname: d.host.hostname.clone(),
            host_model: crate::read::machine::host_model(&d.host),
            cpu_model: d.host.cpu_model.clone(),
            profile: d.run.profile.clone(),
            run_started_unix_ns: int(d.run.started_unix_ns),
            schema_version: d.schema.clone(),
            tool_version: d.tool.version.clone(),
        }
    }
}

/// A target's `target_kind` (see the module doc).
pub fn target_kind(t: &TargetInfo) -> String {
    match (&t.stack, t.kind) {
        (Some(s), _) if s.kind == bench_core::document::result::StackClass::Md => format!("md {}", s.level),
        (Some(s), _) => s.level.to_string(),
        (None, TargetKind::Block) => "disk".into(),
        (None, k) => k.name().to_owned(),
    }
}

/// Whether a `target_kind` of the figures table is a whole disk (no md
/// array or device-mapper layer): `disk`, or a kind of target without a
/// stack (`file`, `simulated`, `absent`).
pub fn whole_disk(kind: &str) -> bool {
    kind == "disk"
        || TargetKind::ALL
            .iter()
            .any(|k| *k != TargetKind::Block && k.name() == kind)
}

/// A status's detail: the reason or message, with the operation and offset
/// of an I/O error; `None` for ok.
fn status_detail(s: &Status) -> Option<String> {
    match s {
        Status::Ok => None,
        Status::Error {
            errno,
            op,
            offset,
            message,
        } => Some(format!(
            "{message} (errno {errno}, {} at offset {offset})",
            crate::figures::text::op_name(*op)
        )),
        Status::Skipped { reason } => Some(reason.clone()),
        Status::Interrupted { message } | Status::Timeout { message } => Some(message.clone()),
    }
}

/// One figure before the identity is added: (step, label, name, value, unit).
type Fig = (Option<String>, Option<String>, String, f64, &'static str);

/// The summary's figures of `t`, in the order of its fields.
fn summary_figures(t: &TestResult, out: &mut Vec<Fig>) {
    let s = &t.summary;
    for (name, v, unit) in [
        ("read_bytes_per_sec", s.read_bytes_per_sec, "B/s"),
        ("write_bytes_per_sec", s.write_bytes_per_sec, "B/s"),
        ("read_iops", s.read_iops, "IOPS"),
        ("write_iops", s.write_iops, "IOPS"),
        ("lat_mean_ns", s.lat_mean_ns, "ns"),
        ("command_overhead_ns", s.command_overhead_ns, "ns"),
    ] {
        if let Some(v) = v {
            out.push((None, None, name.into(), v, unit));
        }
    }
    for f in &s.seek_ns {
        out.push((None, Some(f.label.clone()), "seek_ns".into(), f.value, "ns"));
    }
    // Summary::per_step: IOPS for iops_sweep, bytes per second otherwise.
    let unit = if t.workload == Workload::IopsSweep {
        "IOPS"
    } else {
        "B/s"
    };
    for f in &s.per_step {
        out.push((None, Some(f.label.clone()), "per_step".into(), f.value, unit));
    }
}

/// A latency's figures, named `PREFIX.min` ... `PREFIX.p99.9`.
fn lat_figures(step: &str, prefix: &str, l: &LatStats, out: &mut Vec<Fig>) {
    let mut push = |name: String, v: f64| out.push((Some(step.into()), None, name, v, "ns"));
    push(format!("{prefix}.min"), l.min as f64);
    push(format!("{prefix}.max"), l.max as f64);
    push(format!("{prefix}.mean"), l.mean);
    push(format!("{prefix}.stddev"), l.stddev);
    for p in &l.percentiles {
        push(format!("{prefix}.p{}", p.p), p.ns as f64);
    }
}

/// One direction's figures, named `DIR.bytes` ...
fn dir_figures(step: &str, dir: &str, d: &DirStats, out: &mut Vec<Fig>) {
    let label = Some(step.to_owned());
    for (name, v, unit) in [
        ("bytes", d.bytes as f64, "B"),
        ("ios", d.ios as f64, "count"),
        ("bytes_per_sec", d.bytes_per_sec, "B/s"),
        ("iops", d.iops, "IOPS"),
    ] {
        out.push((label.clone(), None, format!("{dir}.{name}"), v, unit));
    }
    lat_figures(step, &format!("{dir}.lat_ns"), &d.lat_ns, out);
    if let Some(l) = &d.clat_ns {
        lat_figures(step, &format!("{dir}.clat_ns"), l, out);
    }
    if let Some(l) = &d.slat_ns {
        lat_figures(step, &format!("{dir}.slat_ns"), l, out);
    }
    out.push((
        label.clone(),
        None,
        format!("{dir}.samples.interval_ns"),
        d.samples.interval_ns as f64,
        "ns",
    ));
    if let Some(cv) = d.samples.cv {
        out.push((label, None, format!("{dir}.samples.cv"), cv, "ratio"));
    }
}

/// A step's figures (see the module doc).
fn step_figures(s: &StepResult, out: &mut Vec<Fig>) {
    let label = Some(s.label.clone());
    let opt = |v: Option<u64>| v.map(|v| v as f64);
    for (name, v, unit) in [
        ("bs", Some(f64::from(s.bs)), "B"),
        ("iodepth", Some(f64::from(s.iodepth)), "count"),
        ("jobs", Some(f64::from(s.jobs)), "count"),
        ("range_start", Some(s.range_start as f64), "B"),
        ("range_end", Some(s.range_end as f64), "B"),
        ("runtime_ns", Some(s.runtime_ns as f64), "ns"),
        ("verified_bytes", opt(s.verified_bytes), "B"),
        ("filled_bytes", opt(s.filled_bytes), "B"),
        ("lowest_lat_mean_ns", s.lowest_lat_mean_ns, "ns"),
    ] {
        if let Some(v) = v {
            out.push((label.clone(), None, name.into(), v, unit));
        }
    }
    for (dir, d) in [("read", &s.read), ("write", &s.write), ("flush", &s.flush)] {
        if let Some(d) = d {
            dir_figures(&s.label, dir, d, out);
        }
    }
}

/// Every figure of a test, summary first, then its steps in order.
fn test_figures(t: &TestResult) -> Vec<Fig> {
    let mut out = Vec::new();
    summary_figures(t, &mut out);
    for s in &t.steps {
        step_figures(s, &mut out);
    }
    out
}

/// A target's verdict and its reason, from the document's acceptance.
fn verdict_of(a: Option<&Acceptance>, path: &str) -> [Option<String>; 3] {
    let Some(t) = a.and_then(|a| a.targets.iter().find(|t| t.target == path)) else {
        return [None, None, None];
    };
    let reason = crate::figures::verdict::first_reason(t);
    [
        Some(t.verdict.name().to_owned()),
        reason.map(|c| c.message.clone()),
        reason.map(|c| c.rule.name().to_owned()),
    ]
}

/// The rows of one test on one target.
fn test_rows(id: &RunId, doc: &ResultDoc, target: &TargetInfo, run: &str, t: &TestResult, out: &mut Vec<FigureRow>) {
    let [disk_verdict, disk_verdict_reason, disk_verdict_rule] = verdict_of(doc.acceptance.as_ref(), &target.path);
    let row = |fig: Option<Fig>| {
        let (step, label, figure, value, unit) = match fig {
            Some((step, label, name, v, unit)) => (step, label, Some(name), Some(v), Some(unit)),
            None => (None, None, None, None, None),
        };
        FigureRow {
            file: id.file.clone(),
            machine: id.machine.clone(),
            machine_by: id.machine_by.clone(),
            machine_serial: id.machine_serial.clone(),
            hostname: id.hostname.clone(),
            host_model: id.host_model.clone(),
            cpu_model: id.cpu_model.clone(),
            profile: id.profile.clone(),
            run_started_unix_ns: id.run_started_unix_ns,
            schema_version: id.schema_version.clone(),
            tool_version: id.tool_version.clone(),
            disk: target.path.clone(),
            target_kind: target_kind(target),
            disk_serial: target.serial.clone(),
            disk_model: target.model.clone(),
            disk_firmware: target.firmware.clone(),
            transport: target.transport.clone(),
            disk_wwn: target.wwn.clone(),
            disk_verdict: disk_verdict.clone(),
            disk_verdict_reason: disk_verdict_reason.clone(),
            disk_verdict_rule: disk_verdict_rule.clone(),
            run: run.to_owned(),
            test: t.name.clone(),
            workload: t.workload.name().to_owned(),
            status: crate::figures::text::state(&t.status),
            status_detail: status_detail(&t.status),
            step,
            label,
            figure,
            value,
            unit: unit.map(str::to_owned),
        }
    };
    let figs = test_figures(t);
    // Every test has a row with step null: its summary's, else this one.
    if !figs.iter().any(|f| f.0.is_none()) {
        out.push(row(None));
    }
    out.extend(figs.into_iter().map(|f| row(Some(f))));
}

/// The figures table of `docs` (see the module doc).
pub fn figure_rows(docs: &[Loaded]) -> Vec<FigureRow> {
    let mut out = Vec::new();
    for l in docs {
        let id = RunId::of(l);
        let doc = &l.doc;
        for target in &doc.targets {
            for t in doc.tests.iter().filter(|t| t.target == target.path) {
                test_rows(&id, doc, target, "alone", t, &mut out);
            }
            for a in &doc.all_at_once {
                for t in a.results.iter().filter(|t| t.target == target.path) {
                    test_rows(&id, doc, target, "all_at_once", t, &mut out);
                }
            }
        }
    }
    out
}

/// The run table of `docs`: one row per document.
pub fn run_rows(docs: &[Loaded]) -> Vec<RunRow> {
    docs.iter()
        .map(|l| {
            let id = RunId::of(l);
            let d = &l.doc;
            let a = d.acceptance.as_ref();
            let n = |v: Verdict| a.map(|a| count(a.targets.iter().filter(|t| t.verdict == v).count()));
            RunRow {
                file: id.file,
                machine: id.machine,
                machine_by: id.machine_by,
                machine_serial: id.machine_serial,
                hostname: id.hostname,
                host_model: id.host_model,
                cpu_model: id.cpu_model,
                profile: id.profile,
                config_source: d.run.config_source.clone(),
                run_started_unix_ns: id.run_started_unix_ns,
                duration_ns: int(d.run.duration_ns),
                status: d.run.status.name().to_owned(),
                error: d.run.error.clone(),
                schema_version: id.schema_version,
                tool_version: id.tool_version,
                targets: count(d.targets.len()),
                tests: count(d.tests.len()),
                verdict: a.map(|a| a.verdict.name().to_owned()),
                targets_pass: n(Verdict::Pass),
                targets_warn: n(Verdict::Warn),
                targets_fail: n(Verdict::Fail),
            }
        })
        .collect()
}
