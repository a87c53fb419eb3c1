//! The acceptance verdict in `bootbench-report`: `baseline` (the figures
//! the config's `acceptance.baseline` reads; init/tests/cli.rs runs
//! `bootbench-init run --simulate` against the golden baseline written
//! here), `show` and `html` opening with the verdict, `compare` and `fleet`
//! counting verdicts by model, and `export`.

use std::fs;
use std::path::Path;

use bench_core::acceptance::Baseline;
use serde_json::{json, Value};

mod common;
mod rack;

use common::*;

/// A schema of schema/.
fn schema(name: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema").join(name);
    serde_json::from_str(&fs::read_to_string(&p).expect("read the schema")).expect("the schema is JSON")
}

/// `doc` is valid against `schema`; the first errors otherwise.
fn assert_valid(schema: &Value, doc: &Value, what: &str) {
    let v = jsonschema::validator_for(schema).expect("the schema compiles");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .take(10)
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match its schema:\n{}",
        errors.join("\n")
    );
}

/// Run with `args`; it succeeds and says only that it wrote `out`.
fn wrote(args: &[&str], out: &Path) {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {:?}\n{}", o.status, stderr(&o));
    assert!(o.stdout.is_empty(), "{}", stdout(&o));
    assert_eq!(stderr(&o), format!("wrote {}\n", out.display()));
}

/// The baseline in `path`, checked against its schema and read as
/// bootbench-init reads it.
fn read_baseline(path: &Path) -> Baseline {
    let text = fs::read_to_string(path).expect("the baseline is written");
    let v: Value = serde_json::from_str(&text).expect("the baseline is JSON");
    assert_valid(&schema("bootbench.baseline-1.schema.json"), &v, "the baseline");
    serde_json::from_str(&text).expect("bench-core reads the baseline")
}

/// The figure of `model`, `test` and `metric` in `b`.
fn figure<'a>(b: &'a Baseline, model: &str, test: &str, metric: &str) -> &'a bench_core::acceptance::BaselineFigure {
    b.figures
        .iter()
        .find(|f| f.model == model && f.test == test && f.metric.name() == metric)
        .unwrap_or_else(|| panic!("no {model} {test} {metric} in {b:?}"))
}

/// `test`'s `field` on `target` in the document `doc` (JSON text).
fn summary(doc: &str, target: &str, test: &str, field: &str) -> f64 {
    let v: Value = serde_json::from_str(doc).unwrap();
    v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["target"] == target && t["name"] == test)
        .and_then(|t| t["summary"][field].as_f64())
        .unwrap_or_else(|| panic!("no {test} {field} on {target}"))
}

/// `baseline` over the rack's three machines (RACK-03's SATA SSD 30%
/// slower, RACK-02 3% faster): each model and firmware, test and figure
/// has the median, lowest and highest of its three disks, counted 3; the
/// virtio disk (no model) is left out. The file is valid against
/// schema/bootbench.baseline-1.schema.json and is replaced when written
/// again, as `html -o`'s page.
#[test]
fn baseline_holds_each_models_median_lowest_highest_and_count() {
    let dir = scratch("baseline-rack");
    let machines = rack::three_with_a_slow_disk();
    let docs = rack::write(&dir.join("docs"), &machines);
    let out = dir.join("baseline.json");
    fs::write(&out, "an earlier baseline").unwrap();
    let mut args: Vec<&str> = vec!["baseline"];
    args.extend(docs.iter().map(String::as_str));
    args.extend(["-o", out.to_str().unwrap()]);
    wrote(&args, &out);
    let b = read_baseline(&out);
    assert_eq!((b.schema.as_str(), b.documents), ("bootbench.baseline/1", 3));
    let texts: Vec<String> = machines.iter().map(rack::document).collect();
    for (test, field) in [
        ("seq_read_1m_qd1_j1", "read_bytes_per_sec"),
        ("rand_read_4k_qd1_j1", "read_iops"),
    ] {
        let [r1, r2, r3] = [0, 1, 2].map(|i| summary(&texts[i], "/dev/sda", test, field));
        assert!(r3 < r1 && r1 < r2, "{r1} {r2} {r3}");
        let f = figure(&b, "BOOTBENCH SATA SSD 2", test, field);
        assert_eq!((f.count, f.median, f.min, f.max), (3, r1, r3, r2), "{test} {field}");
        assert_eq!(f.firmware, "2.5+");
        let hdd = figure(&b, "BOOTBENCH SATA HDD 1", test, field);
        let h1 = summary(&texts[0], "/dev/sdb", test, field);
        assert_eq!((hdd.count, hdd.median, hdd.min), (3, h1, h1), "{test} {field}");
        assert_eq!(hdd.max, summary(&texts[1], "/dev/sdb", test, field));
    }
    let models: std::collections::BTreeSet<&str> = b.figures.iter().map(|f| f.model.as_str()).collect();
    assert_eq!(
        models.into_iter().collect::<Vec<_>>(),
        ["BOOTBENCH SATA HDD 1", "BOOTBENCH SATA SSD 2", "QEMU NVMe Ctrl"]
    );
    assert!(b
        .figures
        .iter()
        .all(|f| f.count == 3 && f.min <= f.median && f.median <= f.max));
    let _ = fs::remove_dir_all(&dir);
}

/// A baseline of documents without a disk of known model and firmware
/// holds no figure: written all the same, with a warning that it checks
/// nothing; a file that is not a result document writes nothing (exit 2).
#[test]
fn baseline_warns_when_empty_and_writes_nothing_from_bad_input() {
    let dir = scratch("baseline-empty");
    let out = dir.join("b.json");
    let o = run(&["baseline", &fx(READ_ERROR), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("bootbench-report: warning: the baseline of 1 document(s) holds no figure"),
        "{}",
        stderr(&o)
    );
    assert!(read_baseline(&out).figures.is_empty());
    let bad = dir.join("bad.json");
    fs::write(&bad, "{\"schema\": \"bootbench.result/1\"}").unwrap();
    let out2 = dir.join("b2.json");
    let o = run(&["baseline", bad.to_str().unwrap(), "-o", out2.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("does not match bootbench.result/1"),
        "{}",
        stderr(&o)
    );
    assert!(!out2.exists());
    let _ = fs::remove_dir_all(&dir);
}

/// The simulated run's snapshot (init/tests/snapshots/simulate_quick.json),
/// its figures times `scale`, as JSON text.
fn simulated(scale: f64) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../init/tests/snapshots/simulate_quick.json");
    let mut d: Value = serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap();
    for t in d["tests"].as_array_mut().unwrap() {
        for k in ["read_bytes_per_sec", "write_bytes_per_sec", "read_iops", "write_iops"] {
            if let Some(v) = t["summary"][k].as_f64() {
                t["summary"][k] = json!(v * scale);
            }
        }
    }
    d.to_string()
}

/// The baseline of three simulated runs, their figures 1, 2 and 3 times
/// the simulator's: each median is twice the simulator's figure. It is
/// the golden file `baseline-simulated.json`, which init/tests/cli.rs
/// gives `bootbench-init run --simulate` as its `acceptance.baseline`
/// (a simulated disk is then 50% below its model's median).
#[test]
fn baseline_of_simulated_runs_is_the_golden_file_init_reads() {
    let dir = scratch("baseline-sim");
    let docs: Vec<String> = [1.0, 2.0, 3.0]
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let p = dir.join(format!("sim-{i}.json"));
            fs::write(&p, simulated(*s)).unwrap();
            p.display().to_string()
        })
        .collect();
    let out = dir.join("baseline.json");
    wrote(
        &["baseline", &docs[0], &docs[1], &docs[2], "-o", out.to_str().unwrap()],
        &out,
    );
    let b = read_baseline(&out);
    let one = simulated(1.0);
    assert!(b.figures.len() >= 10, "{b:?}");
    for f in &b.figures {
        assert_eq!(f.firmware, "sim");
        let target = if f.model.contains("HDD") {
            "sim:hdd:1G"
        } else {
            "sim:ssd:256M"
        };
        let v = summary(&one, target, &f.test, f.metric.name());
        let near = |x: f64, want: f64| (x - want).abs() <= want * 1e-12;
        assert!(
            f.count == 3 && near(f.median, v * 2.0) && near(f.min, v) && near(f.max, v * 3.0),
            "{f:?}: {v}"
        );
    }
    golden("baseline-simulated.json", &fs::read_to_string(&out).unwrap());
    let _ = fs::remove_dir_all(&dir);
}
