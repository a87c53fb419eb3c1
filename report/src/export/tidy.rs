//! `export --format csv` and `export --format parquet`: the documents as
//! two tidy tables for DuckDB, pandas, Spark or a spreadsheet, and the
//! Parquet figures table read back ([`read_parquet`]) for `fleet`.
//!
//! **The figures table** ([`FigureRow`], [`figure_rows`]): one row per
//! document, target, test, step and figure, each row carrying the identity
//! of its machine, disk and run, so that no join is needed:
//!
//! - identity of the run: `file` (the document's file name as given),
//!   `machine` (as `fleet` names it: DMI product serial, else host name,
//!   else file name) and `machine_by` (`serial`, `hostname`, `file`: which
//!   one it is), `machine_serial` (the DMI product serial as the document
//!   has it), `hostname`, `host_model` (DMI vendor and product, as `fleet`
//!   gives it), `cpu_model`, `profile`, `run_started` (a timestamp: UTC,
//!   nanoseconds; in CSV as RFC 3339) and `run_started_unix_ns`,
//!   `schema_version` (the document's `schema`), `tool_version`;
//! - the target: `disk` (its path), `target_kind` (`disk` for a block
//!   device, `md raid0` / `md raid1` ... for an md array, the layer's kind
//!   for a device-mapper layer (`crypt`, `linear`, `luks`, `lvm`), else the
//!   document's kind: `file`, `simulated`, `absent`), `disk_serial`,
//!   `disk_model`, `disk_firmware`, `transport`, `disk_wwn`,
//!   `disk_verdict`, `disk_verdict_reason` and `disk_verdict_rule` (its
//!   acceptance verdict, `pass` / `warn` / `fail`, and the message and rule
//!   of the check that gave it; all null in a document without
//!   `acceptance`, the reason and rule null for a pass);
//! - the test: `run` (`alone`, or `all_at_once` for a disk's result in an
//!   all-at-once run), `test` (its name), `workload`, `status` (the state
//!   as the document spells it: `ok`, `skipped`, `error`, `interrupted`,
//!   `timeout`) and `status_detail` (the reason or message; null for ok);
//! - the figure: `step` (null for the test's `summary`, else the step's
//!   label), `label` (the section or step a labelled summary figure is of:
//!   `seek_ns` and `per_step`; null otherwise), `figure` (its name, see
//!   below), `value` (a double, in base units) and `unit` (`B`, `B/s`,
//!   `IOPS` (requests per second), `ns`, `count`, `ratio`).
//!
//! The figures: every number of the test's summary that is present
//! (`read_bytes_per_sec`, `write_bytes_per_sec`, `read_iops`, `write_iops`,
//! `lat_mean_ns`, `command_overhead_ns`, and each `seek_ns` and `per_step`
//! entry with its label); then for each step, its numbers named by their
//! path in the step's JSON: `bs`, `iodepth`, `jobs`, `range_start`,
//! `range_end`, `runtime_ns`, `verified_bytes`, `filled_bytes`,
//! `lowest_lat_mean_ns`, and for each of `read`, `write`, `flush` that is
//! present, `read.bytes`, `read.ios`, `read.bytes_per_sec`, `read.iops`,
//! `read.samples.interval_ns`, `read.samples.cv`, and for each of its
//! latencies (`lat_ns`, `clat_ns`, `slat_ns`) `read.lat_ns.min`, `.max`,
//! `.mean`, `.stddev` and one per percentile, `read.lat_ns.p99.9` (the `p`
//! as the document writes it). Left out: series (per-interval samples,
//! passes, members' counters, steady-state waits), indices into them
//! (`chosen_pass`, `lowest_lat_pass`) and text (the engine).
//!
//! A test without a summary figure (a skipped test, an error before the
//! first step, a test whose figures are all its steps') has one row with
//! `step`, `figure`, `value` and `unit` null, before any other, so that
//! failures show in the table and every test has a row with `step` null
//! (a reader that wants each test's status, as `fleet`, reads only those);
//! a target without a test has no row.
//!
//! Order: documents as given, targets in document order, each target's
//! tests in document order (all-at-once results after the tests run
//! alone), a test's summary figures before its steps'.
//!
//! **The run table** ([`RunRow`], [`run_rows`]): one row per document.
//!
//! **Files**: `-o fleet.parquet` writes the figures to `fleet.parquet` and
//! the runs to `fleet.runs.parquet` ([`runs_path`]); the same for CSV. Both
//! are written a document at a time ([`Export`]: a CSV row as it comes, a
//! Parquet row group each [`ROW_GROUP`] rows, so an export of any number
//! of documents holds one row group) under temporary names, and renamed
//! over the names once whole ([`crate::output::Replacing`]); a bad
//! document leaves both names as they were.
//!
//! **CSV**: a header row, then RFC 4180 rows ending in CRLF; a null is an
//! empty field; numbers are the shortest decimal that reads back the same
//! float; `run_started` is RFC 3339 UTC with nanoseconds. Text is written
//! through [`crate::export::csv::defused`] (a `'` before a leading `=`, `+`, `-`,
//! `@`) as the other CSV is, so a spreadsheet does not run it.
//!
//! **Parquet**: strings are `BYTE_ARRAY` (`STRING`), doubles `DOUBLE`,
//! integers and nanoseconds `INT64`, `run_started` `INT64`
//! `TIMESTAMP(NANOS, UTC)`; a column that can be null is `OPTIONAL`, the
//! others `REQUIRED`; row groups of [`ROW_GROUP`] rows; zstd. The file's
//! key-value metadata holds `bootbench.table` = `figures/1` or `runs/1`
//! ([`TABLE_KEY`]), which [`read_parquet`] checks.
//!
//! Both tables are described by one list of columns each
//! ([`FIGURE_COLUMNS`], [`RUN_COLUMNS`]): the CSV header, the Parquet
//! schema and the reader follow it, so they cannot drift apart.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bench_core::result::{
    Acceptance, DirStats, LatStats, ResultDoc, Status, StepResult, TargetInfo, TargetKind, TestResult, Verdict,
};
use bench_core::spec::Workload;
use parquet::basic::{Compression, ZstdLevel};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use crate::read::Loaded;

/// The key of the Parquet file's key-value metadata that names the table.
pub const TABLE_KEY: &str = "bootbench.table";
/// Its value in the figures table: table and version.
pub const FIGURES_TABLE: &str = "figures/1";
/// Its value in the run table.
pub const RUNS_TABLE: &str = "runs/1";
/// Rows per Parquet row group: the rows an export holds at a time (a
/// quick-profile document of four disks has about 4,000).
pub const ROW_GROUP: usize = 32_768;

/// One row of the figures table (see the module doc for each column).
#[derive(Clone, Debug, PartialEq)]
pub struct FigureRow {
    pub file: String,
    pub machine: String,
    /// `serial`, `hostname` or `file` ([`crate::read::machine::IdBy::word`]).
    pub machine_by: String,
    pub machine_serial: Option<String>,
    pub hostname: Option<String>,
    pub host_model: Option<String>,
    pub cpu_model: Option<String>,
    pub profile: Option<String>,
    /// When the run started, nanoseconds since the Unix epoch (UTC).
    pub run_started_unix_ns: i64,
    /// The document's `schema`.
    pub schema_version: String,
    pub tool_version: String,
    /// The target's path.
    pub disk: String,
    pub target_kind: String,
    pub disk_serial: Option<String>,
    pub disk_model: Option<String>,
    pub disk_firmware: Option<String>,
    pub transport: Option<String>,
    pub disk_wwn: Option<String>,
    /// `pass`, `warn`, `fail`; `None` without `acceptance`.
    pub disk_verdict: Option<String>,
    /// The check that gave the verdict; `None` for a pass or no verdict.
    pub disk_verdict_reason: Option<String>,
    /// The rule of that check (`limit`, `peers`, ...), as the document
    /// spells it.
    pub disk_verdict_rule: Option<String>,
    /// `alone` or `all_at_once`.
    pub run: String,
    pub test: String,
    pub workload: String,
    pub status: String,
    pub status_detail: Option<String>,
    /// `None` for a summary figure, else the step's label.
    pub step: Option<String>,
    /// The label of a `seek_ns` or `per_step` summary figure.
    pub label: Option<String>,
    /// `None` only on the one row of a test without a summary figure.
    pub figure: Option<String>,
    pub value: Option<f64>,
    pub unit: Option<String>,
}

/// One row of the run table: one document.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRow {
    pub file: String,
    pub machine: String,
    pub machine_by: String,
    pub machine_serial: Option<String>,
    pub hostname: Option<String>,
    pub host_model: Option<String>,
    pub cpu_model: Option<String>,
    pub profile: Option<String>,
    pub config_source: String,
    pub run_started_unix_ns: i64,
    pub duration_ns: i64,
    /// The run's status: `ok`, `error`, `interrupted`.
    pub status: String,
    /// The run's error, when it has one.
    pub error: Option<String>,
    pub schema_version: String,
    pub tool_version: String,
    /// Targets in the document.
    pub targets: i64,
    /// Test results run alone (all-at-once results not counted).
    pub tests: i64,
    /// The run's acceptance verdict; `None` without `acceptance` (and so
    /// the three counts).
    pub verdict: Option<String>,
    pub targets_pass: Option<i64>,
    pub targets_warn: Option<i64>,
    pub targets_fail: Option<i64>,
}

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
        (Some(s), _) if s.kind == bench_core::result::StackClass::Md => format!("md {}", s.level),
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

/// A column's type, in both formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Text: Parquet `BYTE_ARRAY (STRING)`.
    Text,
    /// A float: `DOUBLE`.
    Double,
    /// An integer: `INT64`.
    Int,
    /// Nanoseconds since the Unix epoch: `INT64 (TIMESTAMP(NANOS, UTC))`,
    /// RFC 3339 in CSV.
    Timestamp,
}

/// One cell's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell<'a> {
    Text(Option<&'a str>),
    Double(Option<f64>),
    Int(Option<i64>),
}

/// One column of a table: its name, type, whether it may be null, and
/// how a row gives its value.
pub struct Column<R> {
    pub name: &'static str,
    pub kind: Kind,
    pub optional: bool,
    pub get: fn(&R) -> Cell<'_>,
}

impl<R> std::fmt::Debug for Column<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {:?}{}",
            self.name,
            self.kind,
            if self.optional { "?" } else { "" }
        )
    }
}

macro_rules! columns {
    ($row:ty: $($name:ident $kind:ident $opt:tt,)*) => {
        &[$(Column::<$row> {
            name: stringify!($name),
            kind: Kind::$kind,
            optional: $opt,
            get: |r: &$row| columns!(@cell r $name $kind $opt),
        },)*]
    };
    (@cell $r:ident $name:ident Text false) => { Cell::Text(Some($r.$name.as_str())) };
    (@cell $r:ident $name:ident Text true) => { Cell::Text($r.$name.as_deref()) };
    (@cell $r:ident $name:ident Double true) => { Cell::Double($r.$name) };
    (@cell $r:ident $name:ident Int false) => { Cell::Int(Some($r.$name)) };
    (@cell $r:ident $name:ident Int true) => { Cell::Int($r.$name) };
    (@cell $r:ident $name:ident Timestamp false) => { Cell::Int(Some($r.run_started_unix_ns)) };
}

/// The figures table's columns, in order (`run_started` is the timestamp
/// of `run_started_unix_ns`).
pub const FIGURE_COLUMNS: &[Column<FigureRow>] = columns!(FigureRow:
    file Text false,
    machine Text false,
    machine_by Text false,
    machine_serial Text true,
    hostname Text true,
    host_model Text true,
    cpu_model Text true,
    profile Text true,
    run_started Timestamp false,
    run_started_unix_ns Int false,
    schema_version Text false,
    tool_version Text false,
    disk Text false,
    target_kind Text false,
    disk_serial Text true,
    disk_model Text true,
    disk_firmware Text true,
    transport Text true,
    disk_wwn Text true,
    disk_verdict Text true,
    disk_verdict_reason Text true,
    disk_verdict_rule Text true,
    run Text false,
    test Text false,
    workload Text false,
    status Text false,
    status_detail Text true,
    step Text true,
    label Text true,
    figure Text true,
    value Double true,
    unit Text true,
);

/// The run table's columns, in order.
pub const RUN_COLUMNS: &[Column<RunRow>] = columns!(RunRow:
    file Text false,
    machine Text false,
    machine_by Text false,
    machine_serial Text true,
    hostname Text true,
    host_model Text true,
    cpu_model Text true,
    profile Text true,
    config_source Text false,
    run_started Timestamp false,
    run_started_unix_ns Int false,
    duration_ns Int false,
    status Text false,
    error Text true,
    schema_version Text false,
    tool_version Text false,
    targets Int false,
    tests Int false,
    verdict Text true,
    targets_pass Int true,
    targets_warn Int true,
    targets_fail Int true,
);

/// Where the run table of an export to `p` goes: `.runs` before the
/// extension (`fleet.parquet` -> `fleet.runs.parquet`), appended without
/// one (`fleet` -> `fleet.runs`).
pub fn runs_path(p: &Path) -> PathBuf {
    let stem = p
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let name = match p.extension() {
        Some(ext) => format!("{stem}.runs.{}", ext.to_string_lossy()),
        None => format!("{stem}.runs"),
    };
    p.with_file_name(name)
}

/// `unix_ns` as RFC 3339 UTC with nanoseconds; negative (before 1970, not
/// from a real run) as the number.
fn rfc3339(unix_ns: i64) -> String {
    u64::try_from(unix_ns).map_or_else(|_| unix_ns.to_string(), crate::export::ocptv::rfc3339)
}

/// One row of a table as CSV fields (see the module doc).
fn csv_record<R>(cols: &[Column<R>], r: &R) -> Vec<String> {
    cols.iter()
        .map(|c| {
            let mut cell = String::new();
            match ((c.get)(r), c.kind) {
                (Cell::Text(Some(s)), _) => cell.push_str(&crate::export::csv::defused(s)),
                (Cell::Double(Some(v)), _) => {
                    let _ = write!(cell, "{v}");
                }
                (Cell::Int(Some(v)), Kind::Timestamp) => cell = rfc3339(v),
                (Cell::Int(Some(v)), _) => {
                    let _ = write!(cell, "{v}");
                }
                (Cell::Text(None) | Cell::Double(None) | Cell::Int(None), _) => {}
            }
            cell
        })
        .collect()
}

/// The Parquet message type of a table's columns.
pub fn message_type<R>(table: &str, cols: &[Column<R>]) -> String {
    let mut m = format!("message {table} {{\n");
    for c in cols {
        let rep = if c.optional { "optional" } else { "required" };
        let ty = match c.kind {
            Kind::Text => "binary",
            Kind::Double => "double",
            Kind::Int | Kind::Timestamp => "int64",
        };
        let logical = match c.kind {
            Kind::Text => " (STRING)",
            Kind::Timestamp => " (TIMESTAMP(NANOS,true))",
            Kind::Double | Kind::Int => "",
        };
        let _ = writeln!(m, "  {rep} {ty} {}{logical};", c.name);
    }
    m.push('}');
    m
}

/// The definition levels of an optional column (1 present, 0 null), or
/// `None` for a required one.
fn levels(optional: bool, present: impl Iterator<Item = bool>) -> Option<Vec<i16>> {
    optional.then(|| present.map(i16::from).collect())
}

/// The writer properties of a table: zstd, [`ROW_GROUP`] rows a group at
/// most, and `bootbench.table` in the key-value metadata.
fn props(table: &str) -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(ROW_GROUP))
        .set_key_value_metadata(Some(vec![KeyValue::new(TABLE_KEY.to_owned(), table.to_owned())]))
        .set_created_by(format!("bootbench-report {}", env!("CARGO_PKG_VERSION")))
        .build()
}

/// Write `rows` as one row group.
fn write_group<R, W: std::io::Write + Send>(
    w: &mut SerializedFileWriter<W>,
    cols: &[Column<R>],
    rows: &[R],
) -> parquet::errors::Result<()> {
    let mut rg = w.next_row_group()?;
    let mut i = 0;
    while let Some(mut col) = rg.next_column()? {
        let c = &cols[i];
        i += 1;
        let cells: Vec<Cell> = rows.iter().map(|r| (c.get)(r)).collect();
        match c.kind {
            Kind::Text => {
                let v: Vec<Option<&str>> = cells
                    .iter()
                    .map(|x| if let Cell::Text(s) = x { *s } else { None })
                    .collect();
                let values: Vec<ByteArray> = v.iter().flatten().map(|s| ByteArray::from(*s)).collect();
                let def = levels(c.optional, v.iter().map(Option::is_some));
                col.typed::<ByteArrayType>()
                    .write_batch(&values, def.as_deref(), None)?;
            }
            Kind::Double => {
                let v: Vec<Option<f64>> = cells
                    .iter()
                    .map(|x| if let Cell::Double(d) = x { *d } else { None })
                    .collect();
                let values: Vec<f64> = v.iter().flatten().copied().collect();
                let def = levels(c.optional, v.iter().map(Option::is_some));
                col.typed::<DoubleType>().write_batch(&values, def.as_deref(), None)?;
            }
            Kind::Int | Kind::Timestamp => {
                let v: Vec<Option<i64>> = cells
                    .iter()
                    .map(|x| if let Cell::Int(d) = x { *d } else { None })
                    .collect();
                let values: Vec<i64> = v.iter().flatten().copied().collect();
                let def = levels(c.optional, v.iter().map(Option::is_some));
                col.typed::<Int64Type>().write_batch(&values, def.as_deref(), None)?;
            }
        }
        col.close()?;
    }
    rg.close()?;
    Ok(())
}

/// The formats of an export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// CSV (see the module doc).
    Csv,
    /// Parquet.
    Parquet,
}

/// Where one table's rows go as they come.
enum Sink<R: 'static> {
    Csv(csv::Writer<std::io::BufWriter<std::fs::File>>),
    Parquet {
        w: SerializedFileWriter<std::io::BufWriter<std::fs::File>>,
        /// The rows of the row group being gathered.
        rows: Vec<R>,
    },
}

/// One table written as its rows come: a CSV row at once, a Parquet row
/// group each [`ROW_GROUP`] rows; under its temporary name until
/// [`Table::finish`].
struct Table<R: 'static> {
    out: crate::output::Replacing,
    cols: &'static [Column<R>],
    sink: Sink<R>,
    path: PathBuf,
}

/// A write error, naming the file.
fn cannot(path: &Path, e: &dyn std::fmt::Display) -> String {
    format!("{}: cannot write: {e}", path.display())
}

impl<R: 'static> Table<R> {
    fn create(format: Format, path: &Path, table: &str, cols: &'static [Column<R>]) -> Result<Table<R>, String> {
        let out = crate::output::Replacing::create(path).map_err(|e| cannot(path, &e))?;
        let file = std::io::BufWriter::new(out.writer().map_err(|e| cannot(path, &e))?);
        let sink = match format {
            Format::Csv => {
                let mut w = csv::WriterBuilder::new()
                    .terminator(csv::Terminator::CRLF)
                    .from_writer(file);
                w.write_record(cols.iter().map(|c| c.name))
                    .map_err(|e| cannot(path, &e))?;
                Sink::Csv(w)
            }
            Format::Parquet => {
                let name = table.split('/').next().unwrap_or(table);
                let schema = parse_message_type(&message_type(name, cols)).map_err(|e| cannot(path, &e))?;
                let w = SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props(table)))
                    .map_err(|e| cannot(path, &e))?;
                Sink::Parquet { w, rows: Vec::new() }
            }
        };
        Ok(Table {
            out,
            cols,
            sink,
            path: path.to_path_buf(),
        })
    }

    fn push(&mut self, r: R) -> Result<(), String> {
        let cols = self.cols;
        let done = match &mut self.sink {
            Sink::Csv(w) => w.write_record(csv_record(cols, &r)).map_err(|e| e.to_string()),
            Sink::Parquet { w, rows } => {
                rows.push(r);
                if rows.len() < ROW_GROUP {
                    return Ok(());
                }
                let done = write_group(w, cols, rows).map_err(|e| e.to_string());
                rows.clear();
                done
            }
        };
        done.map_err(|e| cannot(&self.path, &e))
    }

    /// The rest written, the file given its name.
    fn finish(self) -> Result<(), String> {
        let path = self.path;
        let mut f = match self.sink {
            Sink::Csv(w) => w.into_inner().map_err(|e| cannot(&path, e.error()))?,
            Sink::Parquet { mut w, rows } => {
                if !rows.is_empty() {
                    write_group(&mut w, self.cols, &rows).map_err(|e| cannot(&path, &e))?;
                }
                w.into_inner().map_err(|e| cannot(&path, &e))?
            }
        };
        std::io::Write::flush(&mut f).map_err(|e| cannot(&path, &e))?;
        self.out.commit().map_err(|e| cannot(&path, &e))
    }
}

/// An export being written: both tables, a document at a time, so that
/// only a row group of rows (Parquet) or none (CSV) is held, whatever the
/// number of documents. Nothing has its name before [`Export::finish`];
/// dropped before, both temporary files are removed.
pub struct Export {
    figures: Table<FigureRow>,
    runs: Table<RunRow>,
}

impl std::fmt::Debug for Export {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Export({} and {})",
            self.figures.path.display(),
            self.runs.path.display()
        )
    }
}

impl Export {
    /// Start the export of `format` to `figures` and `runs`.
    pub fn create(format: Format, figures: &Path, runs: &Path) -> Result<Export, String> {
        Ok(Export {
            figures: Table::create(format, figures, FIGURES_TABLE, FIGURE_COLUMNS)?,
            runs: Table::create(format, runs, RUNS_TABLE, RUN_COLUMNS)?,
        })
    }

    /// Add one document's rows.
    pub fn add(&mut self, l: &Loaded) -> Result<(), String> {
        let one = std::slice::from_ref(l);
        for r in figure_rows(one) {
            self.figures.push(r)?;
        }
        for r in run_rows(one) {
            self.runs.push(r)?;
        }
        Ok(())
    }

    /// Write what is left and give both files their names.
    pub fn finish(self) -> Result<(), String> {
        self.figures.finish()?;
        self.runs.finish()
    }
}

/// Write the tables of `docs` in `format` to `figures` and `runs` (see the
/// module doc), each replaced atomically.
pub fn write(format: Format, docs: &[Loaded], figures: &Path, runs: &Path) -> Result<(), String> {
    let mut e = Export::create(format, figures, runs)?;
    for l in docs {
        e.add(l)?;
    }
    e.finish()
}

/// [`write`] as CSV.
pub fn write_csv(docs: &[Loaded], figures: &Path, runs: &Path) -> Result<(), String> {
    write(Format::Csv, docs, figures, runs)
}

/// [`write`] as Parquet.
pub fn write_parquet(docs: &[Loaded], figures: &Path, runs: &Path) -> Result<(), String> {
    write(Format::Parquet, docs, figures, runs)
}

/// Whether `path` starts with Parquet's magic `PAR1` (a cheap test, before
/// [`parquet_table`] reads the footer); false if it cannot be read.
pub fn is_parquet(path: &Path) -> bool {
    use std::io::Read as _;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| &magic == b"PAR1")
}

/// Open `path` as Parquet, with the `bootbench.table` of its metadata
/// (`None` in a Parquet file bootbench did not write).
fn open(path: &Path) -> Result<(SerializedFileReader<std::fs::File>, Option<String>), String> {
    let file = path.display();
    if !is_parquet(path) {
        return Err(format!("{file}: not a Parquet file (it does not start with PAR1)"));
    }
    // Its footer bounded by the file before the parquet crate allocates
    // by it.
    crate::export::parquet_footer::check(path)?;
    let f = std::fs::File::open(path).map_err(|e| format!("{file}: cannot read: {e}"))?;
    let r = SerializedFileReader::new(f).map_err(|e| format!("{file}: not a readable Parquet file: {e}"))?;
    let table = r
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == TABLE_KEY))
        .and_then(|k| k.value.clone());
    Ok((r, table))
}

/// The table a bootbench Parquet export holds: `figures/1` or `runs/1`
/// (its `bootbench.table` metadata); an error naming the file if it is not
/// Parquet or not bootbench's.
pub fn parquet_table(path: &Path) -> Result<String, String> {
    let (_, table) = open(path)?;
    table.ok_or_else(|| {
        format!(
            "{}: a Parquet file, but not a bootbench export (no `{TABLE_KEY}` in its metadata)",
            path.display()
        )
    })
}

/// Read the figures table of a Parquet export back (see the module doc):
/// columns found by name, in any order; an error naming the file if it is
/// not one (a run table, a foreign Parquet file, another version) or a
/// column is missing or of another type.
pub fn read_parquet(path: &Path) -> Result<Vec<FigureRow>, String> {
    let mut out = Vec::new();
    for_each_figure_row(path, |r| out.push(r))?;
    Ok(out)
}

/// [`read_parquet`] a row at a time, in the file's order, without holding
/// the table: `fleet` reads an export of any size this way.
pub fn for_each_figure_row(path: &Path, each: impl FnMut(FigureRow)) -> Result<(), String> {
    rows(path, false, each)
}

/// [`for_each_figure_row`] of the rows whose `step` is null only: each
/// test's summary figures, or its one row without (see the module doc),
/// the rest skipped before they are made rows. What `fleet` reads.
pub fn for_each_summary_row(path: &Path, each: impl FnMut(FigureRow)) -> Result<(), String> {
    rows(path, true, each)
}

fn rows(path: &Path, summary_only: bool, mut each: impl FnMut(FigureRow)) -> Result<(), String> {
    let file = path.display();
    let (r, table) = open(path)?;
    match table.as_deref() {
        Some(FIGURES_TABLE) => {}
        Some(RUNS_TABLE) => {
            return Err(format!(
                "{file}: bootbench's run table (`{TABLE_KEY}` = {RUNS_TABLE}), not its figures table: give the \
                 figures file (the one without `.runs`)"
            ))
        }
        Some(other) => {
            return Err(format!(
                "{file}: bootbench table `{other}`; this tool reads `{FIGURES_TABLE}`"
            ))
        }
        None => {
            return Err(format!(
                "{file}: a Parquet file, but not a bootbench export (no `{TABLE_KEY}` in its metadata)"
            ))
        }
    }
    let names: Vec<String> = r
        .metadata()
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.name().to_owned())
        .collect();
    let at = |name: &str| {
        names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| format!("{file}: no column `{name}` in the figures table"))
    };
    let ix = FigureIx {
        file: at("file")?,
        machine: at("machine")?,
        machine_by: at("machine_by")?,
        machine_serial: at("machine_serial")?,
        hostname: at("hostname")?,
        host_model: at("host_model")?,
        cpu_model: at("cpu_model")?,
        profile: at("profile")?,
        run_started_unix_ns: at("run_started_unix_ns")?,
        schema_version: at("schema_version")?,
        tool_version: at("tool_version")?,
        disk: at("disk")?,
        target_kind: at("target_kind")?,
        disk_serial: at("disk_serial")?,
        disk_model: at("disk_model")?,
        disk_firmware: at("disk_firmware")?,
        transport: at("transport")?,
        disk_wwn: at("disk_wwn")?,
        disk_verdict: at("disk_verdict")?,
        disk_verdict_reason: at("disk_verdict_reason")?,
        disk_verdict_rule: at("disk_verdict_rule")?,
        run: at("run")?,
        test: at("test")?,
        workload: at("workload")?,
        status: at("status")?,
        status_detail: at("status_detail")?,
        step: at("step")?,
        label: at("label")?,
        figure: at("figure")?,
        value: at("value")?,
        unit: at("unit")?,
    };
    let mut rows_seen = 0;
    for g in 0..r.num_row_groups() {
        let rg = r.get_row_group(g).map_err(|e| format!("{file}: row group {g}: {e}"))?;
        // Checked by parquet_footer: at least 0, at most what each column
        // chunk holds; still read a batch at a time, never allocated by.
        let n = usize::try_from(rg.metadata().num_rows()).unwrap_or(0);
        let mut readers: Vec<Option<(ChunkReader, i16)>> = (0..names.len()).map(|_| None).collect();
        for i in ix.all() {
            let max_def = rg.metadata().column(i).column_descr().max_def_level();
            let reader = rg
                .get_column_reader(i)
                .map_err(|e| format!("{file}: column `{}`: {e}", names[i]))?;
            readers[i] = Some((ChunkReader::of(reader), max_def));
        }
        let mut done = 0;
        while done < n {
            let batch = (n - done).min(BATCH_ROWS);
            // Each column's next `batch` rows, by its typed reader: a
            // batch at a time, not a record of fields per row.
            let mut cols: Vec<Option<Values>> = (0..names.len()).map(|_| None).collect();
            for i in ix.all() {
                if let Some((c, max_def)) = readers[i].as_mut() {
                    let got = c
                        .read(batch, *max_def)
                        .map_err(|e| format!("{e}"))
                        .and_then(|(v, read)| {
                            if read < batch {
                                Err(format!("its pages end after {} of the group's {n} rows", done + read))
                            } else {
                                Ok(v)
                            }
                        });
                    cols[i] = Some(got.map_err(|e| format!("{file}: row group {g}: column `{}`: {e}", names[i]))?);
                }
            }
            let mut cell = Cells {
                file: &file,
                names: &names,
                cols,
                row: 0,
                first: rows_seen,
            };
            for row in 0..batch {
                cell.row = row;
                if summary_only && cell.is_set(ix.step) {
                    continue;
                }
                each(FigureRow {
                    file: cell.text(ix.file)?,
                    machine: cell.text(ix.machine)?,
                    machine_by: cell.text(ix.machine_by)?,
                    machine_serial: cell.opt_text(ix.machine_serial)?,
                    hostname: cell.opt_text(ix.hostname)?,
                    host_model: cell.opt_text(ix.host_model)?,
                    cpu_model: cell.opt_text(ix.cpu_model)?,
                    profile: cell.opt_text(ix.profile)?,
                    run_started_unix_ns: cell.int(ix.run_started_unix_ns)?,
                    schema_version: cell.text(ix.schema_version)?,
                    tool_version: cell.text(ix.tool_version)?,
                    disk: cell.text(ix.disk)?,
                    target_kind: cell.text(ix.target_kind)?,
                    disk_serial: cell.opt_text(ix.disk_serial)?,
                    disk_model: cell.opt_text(ix.disk_model)?,
                    disk_firmware: cell.opt_text(ix.disk_firmware)?,
                    transport: cell.opt_text(ix.transport)?,
                    disk_wwn: cell.opt_text(ix.disk_wwn)?,
                    disk_verdict: cell.opt_text(ix.disk_verdict)?,
                    disk_verdict_reason: cell.opt_text(ix.disk_verdict_reason)?,
                    disk_verdict_rule: cell.opt_text(ix.disk_verdict_rule)?,
                    run: cell.text(ix.run)?,
                    test: cell.text(ix.test)?,
                    workload: cell.text(ix.workload)?,
                    status: cell.text(ix.status)?,
                    status_detail: cell.opt_text(ix.status_detail)?,
                    step: cell.opt_text(ix.step)?,
                    label: cell.opt_text(ix.label)?,
                    figure: cell.opt_text(ix.figure)?,
                    value: cell.opt_double(ix.value)?,
                    unit: cell.opt_text(ix.unit)?,
                });
            }
            done += batch;
            rows_seen += batch;
        }
    }
    Ok(())
}

/// Rows read of each column at a time: what the reader holds, whatever a
/// row group's `num_rows` says.
const BATCH_ROWS: usize = 8192;

/// Where each of [`FigureRow`]'s fields is in the file being read.
struct FigureIx {
    file: usize,
    machine: usize,
    machine_by: usize,
    machine_serial: usize,
    hostname: usize,
    host_model: usize,
    cpu_model: usize,
    profile: usize,
    run_started_unix_ns: usize,
    schema_version: usize,
    tool_version: usize,
    disk: usize,
    target_kind: usize,
    disk_serial: usize,
    disk_model: usize,
    disk_firmware: usize,
    transport: usize,
    disk_wwn: usize,
    disk_verdict: usize,
    disk_verdict_reason: usize,
    disk_verdict_rule: usize,
    run: usize,
    test: usize,
    workload: usize,
    status: usize,
    status_detail: usize,
    step: usize,
    label: usize,
    figure: usize,
    value: usize,
    unit: usize,
}

impl FigureIx {
    /// Every column the row is made of (the table's others are not read).
    fn all(&self) -> [usize; 31] {
        [
            self.file,
            self.machine,
            self.machine_by,
            self.machine_serial,
            self.hostname,
            self.host_model,
            self.cpu_model,
            self.profile,
            self.run_started_unix_ns,
            self.schema_version,
            self.tool_version,
            self.disk,
            self.target_kind,
            self.disk_serial,
            self.disk_model,
            self.disk_firmware,
            self.transport,
            self.disk_wwn,
            self.disk_verdict,
            self.disk_verdict_reason,
            self.disk_verdict_rule,
            self.run,
            self.test,
            self.workload,
            self.status,
            self.status_detail,
            self.step,
            self.label,
            self.figure,
            self.value,
            self.unit,
        ]
    }
}

/// A batch of rows of one column: each row's value, `None` for a null.
enum Values {
    Text(Vec<Option<ByteArray>>),
    Double(Vec<Option<f64>>),
    Int(Vec<Option<i64>>),
    /// A physical type the tables do not use.
    Other(&'static str),
}

impl Values {
    fn kind(&self) -> &'static str {
        match self {
            Values::Text(_) => "BYTE_ARRAY",
            Values::Double(_) => "DOUBLE",
            Values::Int(_) => "INT64",
            Values::Other(k) => k,
        }
    }
}

/// A column chunk being read, by its typed reader.
enum ChunkReader {
    Text(parquet::column::reader::ColumnReaderImpl<ByteArrayType>),
    Double(parquet::column::reader::ColumnReaderImpl<DoubleType>),
    Int(parquet::column::reader::ColumnReaderImpl<Int64Type>),
    Other(&'static str),
}

impl ChunkReader {
    fn of(reader: parquet::column::reader::ColumnReader) -> ChunkReader {
        use parquet::column::reader::ColumnReader as C;
        match reader {
            C::ByteArrayColumnReader(r) => ChunkReader::Text(r),
            C::DoubleColumnReader(r) => ChunkReader::Double(r),
            C::Int64ColumnReader(r) => ChunkReader::Int(r),
            C::BoolColumnReader(_) => ChunkReader::Other("BOOLEAN"),
            C::Int32ColumnReader(_) => ChunkReader::Other("INT32"),
            C::Int96ColumnReader(_) => ChunkReader::Other("INT96"),
            C::FloatColumnReader(_) => ChunkReader::Other("FLOAT"),
            C::FixedLenByteArrayColumnReader(_) => ChunkReader::Other("FIXED_LEN_BYTE_ARRAY"),
        }
    }

    /// The next `n` rows of a column whose values are present at
    /// definition level `max_def` (0: a required column, no levels), and
    /// how many there were (fewer than `n` where its pages end).
    fn read(&mut self, n: usize, max_def: i16) -> parquet::errors::Result<(Values, usize)> {
        Ok(match self {
            ChunkReader::Text(r) => read_all(r, n, max_def).map(|(v, got)| (Values::Text(v), got))?,
            ChunkReader::Double(r) => read_all(r, n, max_def).map(|(v, got)| (Values::Double(v), got))?,
            ChunkReader::Int(r) => read_all(r, n, max_def).map(|(v, got)| (Values::Int(v), got))?,
            ChunkReader::Other(k) => (Values::Other(k), n),
        })
    }
}

/// The next `n` rows of one column chunk (fewer where its pages end),
/// nulls in place, and how many.
fn read_all<T: parquet::data_type::DataType>(
    r: &mut parquet::column::reader::ColumnReaderImpl<T>,
    n: usize,
    max_def: i16,
) -> parquet::errors::Result<(Vec<Option<T::T>>, usize)> {
    let mut values = Vec::with_capacity(n);
    let mut def: Vec<i16> = Vec::with_capacity(n);
    let mut records = 0;
    while records < n {
        let levels = if max_def > 0 { Some(&mut def) } else { None };
        let (got, _, _) = r.read_records(n - records, levels, None, &mut values)?;
        if got == 0 {
            break;
        }
        records += got;
    }
    if max_def == 0 {
        return Ok((values.into_iter().map(Some).collect(), records));
    }
    let mut present = values.into_iter();
    Ok((
        def.iter()
            .map(|&d| if d == max_def { present.next() } else { None })
            .collect(),
        records,
    ))
}

/// The cells of the row group being read, taken a row at a time.
struct Cells<'a> {
    file: &'a dyn std::fmt::Display,
    names: &'a [String],
    cols: Vec<Option<Values>>,
    /// The row within the group.
    row: usize,
    /// The rows of the groups before.
    first: usize,
}

impl Cells<'_> {
    fn wrong(&self, i: usize, what: &str) -> String {
        format!(
            "{}: row {}: column `{}` {what}",
            self.file,
            self.first + self.row,
            self.names.get(i).map_or("?", String::as_str),
        )
    }

    fn opt_text(&mut self, i: usize) -> Result<Option<String>, String> {
        let row = self.row;
        let got = match self.cols.get_mut(i) {
            Some(Some(Values::Text(v))) => Ok(v.get_mut(row).and_then(Option::take)),
            Some(Some(other)) => Err(other.kind()),
            _ => Err("missing"),
        };
        match got {
            Ok(None) => Ok(None),
            Ok(Some(b)) => match String::from_utf8(b.data().to_vec()) {
                Ok(s) => Ok(Some(s)),
                Err(_) => Err(self.wrong(i, "is not UTF-8 text")),
            },
            Err(kind) => Err(self.wrong(i, &format!("is {kind}, not text"))),
        }
    }

    /// Whether column `i` has a value in this row (a text column).
    fn is_set(&self, i: usize) -> bool {
        matches!(self.cols.get(i), Some(Some(Values::Text(v))) if v.get(self.row).is_some_and(Option::is_some))
    }

    fn text(&mut self, i: usize) -> Result<String, String> {
        self.opt_text(i)?.ok_or_else(|| self.wrong(i, "is null, not text"))
    }

    fn opt_double(&mut self, i: usize) -> Result<Option<f64>, String> {
        match self.cols.get(i) {
            Some(Some(Values::Double(v))) => Ok(v.get(self.row).copied().flatten()),
            Some(Some(other)) => Err(self.wrong(i, &format!("is {}, not a double", other.kind()))),
            _ => Err(self.wrong(i, "is missing")),
        }
    }

    fn int(&mut self, i: usize) -> Result<i64, String> {
        match self.cols.get(i) {
            Some(Some(Values::Int(v))) => v
                .get(self.row)
                .copied()
                .flatten()
                .ok_or_else(|| self.wrong(i, "is null, not an INT64")),
            Some(Some(other)) => Err(self.wrong(i, &format!("is {}, not an INT64", other.kind()))),
            _ => Err(self.wrong(i, "is missing")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An export larger than a row group is written a group at a time and
    /// reads back row for row, in CSV as in Parquet; a file that was there
    /// is replaced only when the export is whole.
    #[test]
    fn exports_span_row_groups_and_replace_only_when_whole() {
        let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/qemu-4disks-quick.json");
        let one = crate::read::load(&fx).unwrap();
        let per = figure_rows(std::slice::from_ref(&one)).len();
        let n = ROW_GROUP / per + 2;
        let docs: Vec<Loaded> = (0..n).map(|_| crate::read::load(&fx).unwrap()).collect();
        let want = figure_rows(&docs);
        assert!(want.len() > ROW_GROUP, "{} rows", want.len());
        let dir = std::env::temp_dir().join(format!("bootbench-tidy-groups-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (f, r) = (dir.join("t.parquet"), dir.join("t.runs.parquet"));
        std::fs::write(&f, "old").unwrap();
        let mut e = Export::create(Format::Parquet, &f, &r).unwrap();
        for l in &docs {
            e.add(l).unwrap();
        }
        assert_eq!(
            std::fs::read(&f).unwrap(),
            b"old",
            "not replaced before the export is whole"
        );
        drop(e);
        assert_eq!(std::fs::read(&f).unwrap(), b"old", "an export dropped replaces nothing");
        assert!(!r.exists());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file left");
        write_parquet(&docs, &f, &r).unwrap();
        let groups = SerializedFileReader::new(std::fs::File::open(&f).unwrap())
            .unwrap()
            .metadata()
            .num_row_groups();
        assert_eq!(groups, want.len().div_ceil(ROW_GROUP));
        assert_eq!(read_parquet(&f).unwrap(), want);
        let (c, cr) = (dir.join("t.csv"), dir.join("t.runs.csv"));
        write_csv(&docs, &c, &cr).unwrap();
        let text = std::fs::read_to_string(&c).unwrap();
        assert_eq!(text.lines().count(), want.len() + 1, "a header and a line per row");
        assert_eq!(std::fs::read_to_string(&cr).unwrap().lines().count(), n + 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn runs_path_inserts_runs_before_the_extension() {
        for (p, want) in [
            ("fleet.parquet", "fleet.runs.parquet"),
            ("out/x.csv", "out/x.runs.csv"),
            ("fleet", "fleet.runs"),
            ("a.b/fleet", "a.b/fleet.runs"),
            ("/tmp/fleet.2026.parquet", "/tmp/fleet.2026.runs.parquet"),
        ] {
            assert_eq!(runs_path(Path::new(p)), PathBuf::from(want), "{p}");
        }
    }

    #[test]
    fn the_message_types_parse_and_name_every_column() {
        for (m, n) in [
            (message_type("figures", FIGURE_COLUMNS), FIGURE_COLUMNS.len()),
            (message_type("runs", RUN_COLUMNS), RUN_COLUMNS.len()),
        ] {
            let t = parse_message_type(&m).expect(&m);
            assert_eq!(t.get_fields().len(), n, "{m}");
        }
    }
}
