//! The tidy export (report/src/export/tidy/): CSV and Parquet files read back
//! by readers bootbench did not write (DuckDB's Python package and
//! Python's csv module, tests/tidy_read.py), their rows and values checked
//! against the documents' JSON walked here on its own; the guide's (docs/reports.md) DuckDB
//! query run as written; the Parquet reader's round trip and its errors.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use bootbench_report::export::tidy;
use bootbench_report::read::{load, Loaded};
use serde_json::{json, Value};

mod common;
mod rack;

use common::*;

/// The Python that `.ci/deps` installs DuckDB into (BOOTBENCH_PYTHON
/// overrides it).
fn python() -> PathBuf {
    std::env::var_os("BOOTBENCH_PYTHON").map_or_else(|| PathBuf::from("/opt/bootbench/venv/bin/python3"), PathBuf::from)
}

/// The documents of the test, written to `dir`: RACK-01 of the rack (DMI
/// serial and model, four disks, write tests skipped), the raid0 run (an
/// md array, all-at-once runs), the read error (a test that failed before
/// its first step) and the health run with a verdict that fails a disk.
fn documents(dir: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    let rack = rack::write(dir, &rack::three_with_a_slow_disk()[..1]);
    paths.push(PathBuf::from(&rack[0]));
    for name in [RAID_A, READ_ERROR] {
        let p = dir.join(name);
        fs::copy(fixtures().join(name), &p).unwrap();
        paths.push(p);
    }
    let p = dir.join("health-verdict.json");
    fs::write(&p, with_verdict(true)).unwrap();
    paths.push(p);
    paths
}

/// One expected figure: (file, disk, run, test, step, label, figure) and its value.
type Key = (
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// A step's keys that hold numbers the export leaves out (the module doc):
/// text with numbers in it, and indices into the series.
const LEFT_OUT: [&str; 3] = ["engine", "chosen_pass", "lowest_lat_pass"];

/// Every number of a step's JSON `v` under `path`, as the module doc names
/// them: outside arrays (series: samples, passes, members, steady-state
/// waits), a percentile list as `pP`.
fn walk(path: &str, v: &Value, out: &mut Vec<(String, f64)>) {
    match v {
        Value::Number(n) => out.push((path.to_owned(), n.as_f64().unwrap())),
        Value::Object(o) => {
            for (k, x) in o {
                if path.is_empty() && LEFT_OUT.contains(&k.as_str()) {
                    continue;
                }
                let name = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                if k == "percentiles" {
                    for p in x.as_array().unwrap() {
                        let pct = p["p"].as_f64().unwrap();
                        out.push((format!("{path}.p{pct}"), p["ns"].as_f64().unwrap()));
                    }
                } else {
                    walk(&name, x, out);
                }
            }
        }
        // Arrays are series; null is absent; strings and booleans are not figures.
        _ => {}
    }
}

/// The figures of the documents, from their JSON alone.
fn expected(paths: &[PathBuf]) -> BTreeMap<Key, Option<f64>> {
    let mut want = BTreeMap::new();
    for p in paths {
        let file = p.display().to_string();
        let d: Value = serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap();
        let mut tests: Vec<(&str, &Value)> = d["tests"].as_array().unwrap().iter().map(|t| ("alone", t)).collect();
        for a in d["all_at_once"].as_array().into_iter().flatten() {
            tests.extend(a["results"].as_array().unwrap().iter().map(|t| ("all_at_once", t)));
        }
        for (run, t) in tests {
            let key = |step: Option<&str>, label: Option<&str>, figure: Option<&str>| -> Key {
                (
                    file.clone(),
                    t["target"].as_str().unwrap().to_owned(),
                    run.to_owned(),
                    t["name"].as_str().unwrap().to_owned(),
                    step.map(String::from),
                    label.map(String::from),
                    figure.map(String::from),
                )
            };
            let before = want.len();
            let mut summary = false;
            for (k, v) in t["summary"].as_object().unwrap() {
                match v {
                    Value::Number(n) => {
                        want.insert(key(None, None, Some(k)), n.as_f64());
                        summary = true;
                    }
                    Value::Array(a) => {
                        for f in a {
                            want.insert(key(None, f["label"].as_str(), Some(k)), f["value"].as_f64());
                            summary = true;
                        }
                    }
                    _ => {}
                }
            }
            // A test without a summary figure: one row with step null.
            if !summary {
                want.insert(key(None, None, None), None);
            }
            for s in t["steps"].as_array().unwrap() {
                let mut figs = Vec::new();
                walk("", s, &mut figs);
                for (name, v) in figs {
                    let old = want.insert(key(s["label"].as_str(), None, Some(&name)), Some(v));
                    assert!(old.is_none(), "{file}: two figures {name} in step {}", s["label"]);
                }
            }
            assert!(want.len() > before);
        }
    }
    want
}

fn s(v: &Value) -> Option<String> {
    v.as_str().map(String::from)
}

/// Run tests/tidy_read.py over the export; what it read.
fn read_back(figures: &Path, runs: &Path, csv: &Path, runs_csv: &Path, dir: &Path) -> Value {
    let readme = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/reports.md")).unwrap();
    let (_, after) = readme
        .split_once("<!-- tidy-query -->")
        .expect("docs/reports.md's query");
    let sql = after
        .split("```sql")
        .nth(1)
        .and_then(|x| x.split("```").next())
        .unwrap();
    let sql = sql.replace("'fleet.parquet'", &format!("'{}'", figures.display()));
    let query = dir.join("query.sql");
    fs::write(&query, sql).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tidy_read.py");
    let py = python();
    let o = Command::new(&py)
        .arg(&script)
        .args([figures, runs, csv, runs_csv, &query, dir])
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}: DuckDB's Python reads the export back; run .ci/deps (make deps) to install it",
                py.display()
            )
        });
    assert!(
        o.status.success(),
        "{} tidy_read.py failed ({:?}); run .ci/deps (make deps) if DuckDB is missing:\n{}",
        py.display(),
        o.status,
        stderr(&o)
    );
    serde_json::from_slice(&o.stdout).expect("tidy_read.py prints JSON")
}

#[test]
fn export_reads_back_in_duckdb_and_csv_with_the_documents_figures() {
    let dir = scratch("tidy");
    let paths = documents(&dir);
    let docs: Vec<Loaded> = paths.iter().map(|p| load(p).unwrap()).collect();
    let [figures, runs, csv, runs_csv] = export_as_a_user_does(&dir, &paths, &docs);
    let got = read_back(&figures, &runs, &csv, &runs_csv, &dir);
    let docs_json: Vec<Value> = paths
        .iter()
        .map(|p| serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap())
        .collect();
    let rows = got["figures_rows"].as_array().unwrap();
    duckdb_reads_the_metadata_and_types(&got);
    let want = every_row_is_a_figure_of_the_json(&got, &paths);
    the_identity_columns_are_the_documents(rows, &paths, &docs_json);
    the_run_table_has_a_row_per_document(&got, &docs_json);
    the_reports_query_finds_the_slowest_disks(&got, rows, &paths, &docs_json);
    the_csv_holds_the_same_rows(&got, rows, paths.len());
    // The reader: our own rows back, whatever the columns' order; errors
    // that name the file and what is wrong.
    let mine = tidy::figure_rows(&docs);
    assert_eq!(mine.len(), want);
    the_reader_reads_our_rows_and_names_what_is_wrong(&dir, &mine, &figures, &runs, &csv);
    the_summary_reader_reads_only_what_it_is_asked(&dir, &mine, &figures);
    let _ = fs::remove_dir_all(&dir);
}

/// `for_each_summary_row`: the rows whose `step` is null, in order, with
/// only the columns asked for (the others empty), from our file and from
/// DuckDB's (its own pages and encodings, columns reversed); a file
/// without a column not asked for is read (DuckDB's copy without `unit`),
/// one without a column asked for is refused naming it, as is a name the
/// table does not have.
fn the_summary_reader_reads_only_what_it_is_asked(dir: &Path, mine: &[tidy::FigureRow], figures: &Path) {
    let asked = [
        "file",
        "disk",
        "test",
        "status",
        "figure",
        "value",
        "run_started_unix_ns",
    ];
    let want: Vec<tidy::FigureRow> = mine
        .iter()
        .filter(|r| r.step.is_none())
        .map(|r| tidy::FigureRow {
            file: r.file.clone(),
            disk: r.disk.clone(),
            test: r.test.clone(),
            status: r.status.clone(),
            figure: r.figure.clone(),
            value: r.value,
            run_started_unix_ns: r.run_started_unix_ns,
            ..tidy::FigureRow::default()
        })
        .collect();
    assert!(want.len() < mine.len() / 4, "{} of {} rows", want.len(), mine.len());
    assert!(
        want.iter().any(|r| r.figure.is_none()),
        "a test without a summary figure"
    );
    let missing = dir.join("missing.parquet");
    for f in [figures.to_path_buf(), dir.join("reordered.parquet"), missing.clone()] {
        let mut got = Vec::new();
        tidy::for_each_summary_row(&f, &asked, |r| got.push(r)).unwrap();
        assert_eq!(got, want, "{}", f.display());
    }
    let e = tidy::for_each_summary_row(&missing, &["file", "unit"], |_| {}).unwrap_err();
    assert!(
        e.contains(&missing.display().to_string()) && e.contains("no column `unit`"),
        "{e}"
    );
    let e = tidy::for_each_summary_row(figures, &["file", "speed"], |_| {}).unwrap_err();
    assert!(e.contains("no column `speed`"), "{e}");
}

/// The export to `fleet.parquet` and `fleet.csv` in `dir`, as a user runs
/// it (`export --format parquet|csv -o FILE DOC...`), after one with a file
/// that is not a document, which writes nothing; the library's writer
/// gives the same table. The figures and run tables, Parquet and CSV.
fn export_as_a_user_does(dir: &Path, paths: &[PathBuf], docs: &[Loaded]) -> [PathBuf; 4] {
    let figures = dir.join("fleet.parquet");
    let runs = tidy::runs_path(&figures);
    assert_eq!(runs, dir.join("fleet.runs.parquet"));
    let csv = dir.join("fleet.csv");
    let runs_csv = tidy::runs_path(&csv);
    let export = |format: &str, out: &Path, extra: &[&Path]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_bootbench-report"));
        c.args(["export", "--format", format, "-o"])
            .arg(out)
            .args(paths)
            .args(extra);
        c.output().unwrap()
    };
    // A file that is not a document: named, exit 2, and neither table written.
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{").unwrap();
    let o = export("parquet", &figures, &[&bad]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("bad.json") && err.contains("truncated"), "{err}");
    assert!(!figures.exists() && !runs.exists(), "nothing written: {err}");
    for (format, out) in [("parquet", &figures), ("csv", &csv)] {
        let o = export(format, out, &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    // The library's writer gives the same table.
    let again = dir.join("again.parquet");
    tidy::write_parquet(docs, &again, &tidy::runs_path(&again)).unwrap();
    assert_eq!(
        tidy::read_parquet(&again).unwrap(),
        tidy::read_parquet(&figures).unwrap()
    );
    [figures, runs, csv, runs_csv]
}

/// The metadata and the types, as DuckDB reads them.
fn duckdb_reads_the_metadata_and_types(got: &Value) {
    assert_eq!(got["figures_kv"], json!({"bootbench.table": "figures/1"}));
    assert_eq!(got["runs_kv"], json!({"bootbench.table": "runs/1"}));
    let schema: BTreeMap<String, Value> = got["figures_schema"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c[0].as_str().unwrap().to_owned(), c.clone()))
        .collect();
    let names: Vec<&str> = got["figures_schema"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c[0].as_str().unwrap())
        .collect();
    let cols: Vec<&str> = tidy::FIGURE_COLUMNS.iter().map(|c| c.name).collect();
    assert_eq!(names, cols);
    for (name, ty, rep, logical) in [
        ("value", "DOUBLE", "OPTIONAL", None),
        ("run_started_unix_ns", "INT64", "REQUIRED", None),
        ("disk", "BYTE_ARRAY", "REQUIRED", Some("StringType")),
        ("figure", "BYTE_ARRAY", "OPTIONAL", Some("StringType")),
        ("run_started", "INT64", "REQUIRED", Some("TimestampType")),
    ] {
        let c = &schema[name];
        assert_eq!((c[1].as_str(), c[2].as_str()), (Some(ty), Some(rep)), "{name}: {c}");
        if let Some(l) = logical {
            let l_got = c[3].as_str().unwrap_or_default();
            assert!(l_got.contains(l), "{name}: {c}");
        }
    }
    let ts = schema["run_started"][3].as_str().unwrap();
    assert!(ts.contains("isAdjustedToUTC=1") && ts.contains("NANOS"), "{ts}");
}

/// Every row, against the figures walked out of the JSON; how many there are.
fn every_row_is_a_figure_of_the_json(got: &Value, paths: &[PathBuf]) -> usize {
    let want = expected(paths);
    let rows = got["figures_rows"].as_array().unwrap();
    assert_eq!(got["figures_count"], json!(want.len()));
    let mut seen = BTreeMap::new();
    for r in rows {
        let key: Key = (
            s(&r[0]).unwrap(),
            s(&r[1]).unwrap(),
            s(&r[2]).unwrap(),
            s(&r[3]).unwrap(),
            s(&r[4]),
            s(&r[5]),
            s(&r[6]),
        );
        assert!(seen.insert(key, r[7].as_f64()).is_none(), "a row twice: {r}");
    }
    assert_eq!(seen.len(), want.len());
    for (k, v) in &want {
        assert_eq!(seen.get(k), Some(v), "{k:?}");
    }
    // For instance: the read error is one row without a figure, the write
    // tests skipped on the rack machine likewise.
    let err = rows
        .iter()
        .find(|r| r[0].as_str().unwrap().ends_with(READ_ERROR) && r[9] == "error")
        .unwrap();
    assert_eq!(
        (&err[6], &err[7], &err[8]),
        (&Value::Null, &Value::Null, &Value::Null),
        "{err}"
    );
    assert!(rows
        .iter()
        .any(|r| r[9] == "skipped" && r[3] == "seq_write_1m_qd1_j1" && r[6].is_null()));
    want.len()
}

/// The identity columns, per document.
fn the_identity_columns_are_the_documents(rows: &[Value], paths: &[PathBuf], docs_json: &[Value]) {
    for r in rows {
        let i = paths.iter().position(|p| p.display().to_string() == r[0]).unwrap();
        let d = &docs_json[i];
        let t = d["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["path"] == r[1])
            .unwrap();
        assert_eq!(r[15], t["serial"], "{r}");
        assert_eq!(r[16], t["model"], "{r}");
        let kind = match (&t["stack"], t["kind"].as_str()) {
            (Value::Object(st), _) if st["kind"] == "md" => format!("md {}", st["level"].as_str().unwrap()),
            (Value::Object(st), _) => st["level"].as_str().unwrap().to_owned(),
            (_, Some("block")) => "disk".into(),
            (_, k) => k.unwrap().to_owned(),
        };
        assert_eq!(r[10], json!(kind), "{r}");
        assert_eq!(r[20], d["run"]["started_unix_ns"], "{r}");
        // DuckDB holds timestamps with time zone to the microsecond.
        assert_eq!(r[19].as_i64().unwrap() / 1000, r[20].as_i64().unwrap() / 1000, "{r}");
        assert_eq!(r[21], d["schema"]);
        assert_eq!(r[13], d["host"]["product_serial"]);
        let tv = d["acceptance"]["targets"]
            .as_array()
            .and_then(|a| a.iter().find(|v| v["target"] == r[1]));
        let verdict = tv.map_or(Value::Null, |v| v["verdict"].clone());
        assert_eq!(r[17], verdict, "{r}");
        // The first check with the target's verdict, unless it passed.
        let reason = tv
            .filter(|v| v["verdict"] != "pass")
            .and_then(|v| v["checks"].as_array()?.iter().find(|c| c["verdict"] == v["verdict"]));
        assert_eq!(r[18], reason.map_or(Value::Null, |c| c["message"].clone()), "{r}");
        assert_eq!(r[22], reason.map_or(Value::Null, |c| c["rule"].clone()), "{r}");
        if verdict == "fail" {
            assert!(r[22].is_string(), "a failed disk names its rule: {r}");
        }
        if i == 0 {
            assert_eq!(
                (&r[11], &r[12], &r[14]),
                (&json!("RACK-01"), &json!("serial"), &json!("Dell Inc. PowerEdge R640"))
            );
        } else {
            // Neither a real serial nor a host name (`(none)`): the file.
            assert_eq!((&r[11], &r[12]), (&r[0], &json!("file")), "{r}");
        }
    }
    let failed: Vec<&Value> = rows.iter().filter(|r| r[17] == "fail").collect();
    assert!(!failed.is_empty());
    for r in failed {
        assert_eq!(r[16], "QEMU HARDDISK", "{r}");
        assert_eq!(r[22], "limit", "{r}");
        assert!(r[18].as_str().unwrap().contains("below the floor"), "{r}");
    }
    assert!(rows.iter().any(|r| r[10] == "md raid0" && r[2] == "alone"));
    assert!(rows
        .iter()
        .any(|r| r[2] == "all_at_once" && r[6] == "read_bytes_per_sec"));
}

/// The run table: a row per document, its counts, status and verdicts.
fn the_run_table_has_a_row_per_document(got: &Value, docs_json: &[Value]) {
    let run_rows = got["runs_rows"].as_array().unwrap();
    assert_eq!(run_rows.len(), docs_json.len());
    for (r, d) in run_rows.iter().zip(docs_json) {
        assert_eq!(r[3], json!(d["targets"].as_array().unwrap().len()));
        assert_eq!(r[4], json!(d["tests"].as_array().unwrap().len()));
        assert_eq!(r[10], d["run"]["started_unix_ns"]);
        assert_eq!(r[11], d["run"]["duration_ns"]);
        assert_eq!(r[12], d["run"]["status"]);
        match d["acceptance"]["targets"].as_array() {
            None => assert!(r[5].is_null() && r[6].is_null() && r[8].is_null(), "{r}"),
            Some(t) => {
                assert_eq!(r[5], d["acceptance"]["verdict"]);
                let n = |v: &str| json!(t.iter().filter(|x| x["verdict"] == v).count());
                assert_eq!((&r[6], &r[7], &r[8]), (&n("pass"), &n("warn"), &n("fail")), "{r}");
            }
        }
    }
}

/// docs/reports.md's query: the slowest whole disks of each model in
/// seq_read, computed here from the documents.
fn the_reports_query_finds_the_slowest_disks(got: &Value, rows: &[Value], paths: &[PathBuf], docs_json: &[Value]) {
    assert_eq!(
        got["query_columns"],
        json!([
            "disk_model",
            "machine",
            "disk",
            "disk_serial",
            "test",
            "read_mb_s",
            "slowest"
        ])
    );
    // (model, test) -> (read B/s, machine, disk) of each whole disk.
    type Groups = BTreeMap<(String, String), Vec<(f64, String, String)>>;
    let mut groups = Groups::new();
    for r in rows {
        let i = paths.iter().position(|p| p.display().to_string() == r[0]).unwrap();
        let t = docs_json[i]["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["target"] == r[1] && t["name"] == r[3])
            .cloned();
        let seq = t.is_some_and(|t| t["workload"] == "seq_read");
        let Some(model) = s(&r[16]) else { continue };
        if seq && r[10] == "disk" && r[2] == "alone" && r[4].is_null() && r[6] == "read_bytes_per_sec" {
            groups.entry((model, s(&r[3]).unwrap())).or_default().push((
                r[7].as_f64().unwrap(),
                s(&r[11]).unwrap(),
                s(&r[1]).unwrap(),
            ));
        }
    }
    let mut want_q = Vec::new();
    for ((model, test), mut v) in groups {
        v.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        for (val, machine, disk) in &v {
            let rank = v.iter().filter(|x| x.0 < *val).count() + 1;
            if rank > 3 {
                break;
            }
            want_q.push((
                model.clone(),
                test.clone(),
                rank,
                machine.clone(),
                disk.clone(),
                (val / 1e6 * 10.0).round() / 10.0,
            ));
        }
    }
    let got_q: Vec<_> = got["query_rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                s(&r[0]).unwrap(),
                s(&r[4]).unwrap(),
                usize::try_from(r[6].as_u64().unwrap()).unwrap(),
                s(&r[1]).unwrap(),
                s(&r[2]).unwrap(),
                r[5].as_f64().unwrap(),
            )
        })
        .collect();
    assert!(!want_q.is_empty());
    assert_eq!(got_q, want_q);
}

/// The CSV, as Python's csv module reads it: the same header, the same
/// rows in the same order, null as an empty field, each value the same
/// number; the run table's header and a row per document.
fn the_csv_holds_the_same_rows(got: &Value, rows: &[Value], documents: usize) {
    let cols: Vec<&str> = tidy::FIGURE_COLUMNS.iter().map(|c| c.name).collect();
    let csv_rows = got["figures_csv"].as_array().unwrap();
    assert_eq!(csv_rows[0], json!(cols));
    assert_eq!(csv_rows.len() - 1, rows.len());
    let at = |n: &str| cols.iter().position(|c| *c == n).unwrap();
    for (c, r) in csv_rows[1..].iter().zip(rows) {
        for (name, j) in [
            ("file", 0),
            ("disk", 1),
            ("test", 3),
            ("step", 4),
            ("figure", 6),
            ("unit", 8),
        ] {
            assert_eq!(
                c[at(name)].as_str().unwrap(),
                r[j].as_str().unwrap_or(""),
                "{name}: {c} / {r}"
            );
        }
        let v = c[at("value")].as_str().unwrap();
        assert_eq!(
            if v.is_empty() {
                None
            } else {
                Some(v.parse::<f64>().unwrap())
            },
            r[7].as_f64(),
            "{c}"
        );
        assert_eq!(c[at("run_started_unix_ns")].as_str().unwrap(), r[20].to_string());
        let ts = c[at("run_started")].as_str().unwrap();
        assert!(
            ts.ends_with('Z') && ts.len() == "2026-12-02T03:06:49.123456789Z".len(),
            "{ts}"
        );
    }
    let runs_csv_rows = got["runs_csv"].as_array().unwrap();
    assert_eq!(runs_csv_rows.len(), 1 + documents);
    assert_eq!(
        runs_csv_rows[0],
        json!(tidy::RUN_COLUMNS.iter().map(|c| c.name).collect::<Vec<_>>())
    );
}

/// The reader: `mine` back from the export, whatever the columns' order;
/// errors that name the file and what is wrong.
fn the_reader_reads_our_rows_and_names_what_is_wrong(
    dir: &Path,
    mine: &[tidy::FigureRow],
    figures: &Path,
    runs: &Path,
    csv: &Path,
) {
    assert_eq!(tidy::read_parquet(figures).unwrap(), mine);
    assert_eq!(tidy::read_parquet(&dir.join("reordered.parquet")).unwrap(), mine);
    let missing = dir.join("missing.parquet");
    let e = tidy::read_parquet(&missing).unwrap_err();
    assert!(
        e.contains(&missing.display().to_string()) && e.contains("`unit`"),
        "{e}"
    );
    let e = tidy::read_parquet(runs).unwrap_err();
    assert!(e.contains("run table"), "{e}");
    let foreign = dir.join("foreign.parquet");
    assert!(tidy::is_parquet(&foreign));
    let e = tidy::read_parquet(&foreign).unwrap_err();
    assert!(e.contains("not a bootbench export"), "{e}");
    assert!(!tidy::is_parquet(csv));
    let e = tidy::read_parquet(csv).unwrap_err();
    assert!(e.contains("not a Parquet file"), "{e}");
    assert_eq!(tidy::parquet_table(runs).unwrap(), tidy::RUNS_TABLE);
}
