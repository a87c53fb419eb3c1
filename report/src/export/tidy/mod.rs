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
//! are written a document at a time ([`Tables`]: a CSV row as it comes, a
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
//!
//! Here the tables' rows and columns; the rows made of documents in
//! `rows.rs`, written in `writer.rs`, the Parquet figures table read back
//! in `reader.rs`.

mod reader;
mod rows;
mod writer;

use std::path::{Path, PathBuf};

pub use reader::{for_each_figure_row, for_each_summary_row, is_parquet, parquet_table, read_parquet};
pub use rows::{figure_rows, run_rows, target_kind, whole_disk};
pub use writer::{message_type, write, write_csv, write_parquet, Tables};

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
#[derive(Clone, Debug, Default, PartialEq)]
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

/// How a value read back is put into a row: by the column's kind, `false`
/// where a required column's value is null. `Derived` for a column made of
/// another (`run_started`), which the reader does not read.
pub enum Set<R> {
    Text(fn(&mut R, Option<String>) -> bool),
    Double(fn(&mut R, Option<f64>) -> bool),
    Int(fn(&mut R, Option<i64>) -> bool),
    Derived,
}

impl Cell<'_> {
    /// Whether the cell has a value (is not null).
    pub fn is_some(&self) -> bool {
        match self {
            Cell::Text(v) => v.is_some(),
            Cell::Double(v) => v.is_some(),
            Cell::Int(v) => v.is_some(),
        }
    }
}

impl<R> std::fmt::Debug for Set<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Set::Text(_) => "Set::Text",
            Set::Double(_) => "Set::Double",
            Set::Int(_) => "Set::Int",
            Set::Derived => "Set::Derived",
        })
    }
}

/// One column of a table: its name, type, whether it may be null, how a
/// row gives its value and how a value read back is put into a row.
pub struct Column<R> {
    pub name: &'static str,
    pub kind: Kind,
    pub optional: bool,
    pub get: fn(&R) -> Cell<'_>,
    pub set: Set<R>,
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
            set: columns!(@set $row, $name $kind $opt),
        },)*]
    };
    (@set $row:ty, $name:ident Timestamp false) => { Set::Derived };
    (@set $row:ty, $name:ident $kind:ident false) => {
        Set::$kind(|r: &mut $row, v| v.map(|v| r.$name = v).is_some())
    };
    (@set $row:ty, $name:ident $kind:ident true) => { Set::$kind(|r: &mut $row, v| { r.$name = v; true }) };
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

#[cfg(test)]
mod tests {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::schema::parser::parse_message_type;

    use super::*;
    use crate::read::Loaded;

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
        let mut e = Tables::create(crate::cli::ExportFormat::Parquet, &f, &r).unwrap();
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
        // The summary rows alone, across batches and groups: every
        // column asked for, so each is the row as written.
        let names: Vec<&str> = FIGURE_COLUMNS.iter().map(|c| c.name).collect();
        let mut summary = Vec::new();
        for_each_summary_row(&f, &names, |r| summary.push(r)).unwrap();
        let want_summary: Vec<&FigureRow> = want.iter().filter(|r| r.step.is_none()).collect();
        assert_eq!(summary.iter().collect::<Vec<_>>(), want_summary);
        let (c, cr) = (dir.join("t.csv"), dir.join("t.runs.csv"));
        write_csv(&docs, &c, &cr).unwrap();
        let text = std::fs::read_to_string(&c).unwrap();
        assert_eq!(text.lines().count(), want.len() + 1, "a header and a line per row");
        assert_eq!(std::fs::read_to_string(&cr).unwrap().lines().count(), n + 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The Parquet export is the same byte for byte whatever the number
    /// of cores that make its rows and encode its row groups' columns, and
    /// the same as adding the documents one at a time; its rows are the
    /// documents' in order (each document named apart).
    #[test]
    fn parquet_export_is_the_same_on_any_number_of_cores() {
        let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/qemu-4disks-quick.json");
        let one = crate::read::load(&fx).unwrap();
        let n = 2 * ROW_GROUP / figure_rows(std::slice::from_ref(&one)).len() + 3;
        let docs: Vec<Loaded> = (0..n)
            .map(|i| {
                let mut l = crate::read::load(&fx).unwrap();
                l.file = format!("doc{i}.json");
                l
            })
            .collect();
        let dir = std::env::temp_dir().join(format!("bootbench-tidy-cores-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |threads: usize, batched: bool| {
            let f = dir.join(format!("t{threads}{batched}.parquet"));
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let mut t = Tables::create(crate::cli::ExportFormat::Parquet, &f, &runs_path(&f)).unwrap();
                if batched {
                    for batch in docs.chunks(5) {
                        t.add_all(batch).unwrap();
                    }
                } else {
                    for l in &docs {
                        t.add(l).unwrap();
                    }
                }
                t.finish().unwrap();
            });
            (std::fs::read(&f).unwrap(), std::fs::read(runs_path(&f)).unwrap(), f)
        };
        let (one_core, one_core_runs, f) = write(1, false);
        for (threads, batched) in [(1, true), (2, true), (4, true), (4, false)] {
            let (bytes, runs, _) = write(threads, batched);
            assert!(
                bytes == one_core,
                "{threads} threads, batched {batched}: the figures differ"
            );
            assert!(
                runs == one_core_runs,
                "{threads} threads, batched {batched}: the runs differ"
            );
        }
        assert_eq!(read_parquet(&f).unwrap(), figure_rows(&docs));
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
