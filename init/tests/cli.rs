//! End-to-end tests of `bootbench-init`: the simulated pipeline (compared
//! with a snapshot), real runs on loop devices over files in /dev/shm (the
//! tests create and remove them; they need root and `losetup`), the write
//! interlock, and bad input.
//!
//! Regenerate the snapshot with `UPDATE_SNAPSHOTS=1 cargo test -p bootbench-init --test cli`.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use bench_core::spec::Workload;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_bootbench-init");
const PHRASE: &str = "I understand this destroys data";
const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");
/// Size of every loop device's backing file.
const LOOP_BYTES: usize = 64 << 20;

mod common;
use common::{random_bytes, unique, Loop, ShmFile};

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run bootbench-init")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn schema(name: &str) -> Value {
    let p = Path::new(MANIFEST).join("..").join("schema").join(name);
    serde_json::from_str(&std::fs::read_to_string(&p).expect("read schema")).expect("schema is JSON")
}

fn assert_valid(schema_name: &str, doc: &Value) {
    let s = schema(schema_name);
    let v = jsonschema::validator_for(&s).expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .take(10)
        .collect();
    assert!(
        errors.is_empty(),
        "document does not match {schema_name}:\n{}",
        errors.join("\n")
    );
}

/// `list --json`'s entry for `dev`, checked against the result schema's
/// target (what `list --json` prints is an array of them).
/// `list --json --stacks`'s object, checked against the result schema's stacks.
fn assert_stacks_valid(st: &Value) {
    let mut s = schema("bootbench.result-1.schema.json");
    let defs = s["$defs"].take();
    let v = jsonschema::validator_for(&serde_json::json!({"$ref": "#/$defs/stacks", "$defs": defs}))
        .expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(st)
        .map(|x| format!("{x} at {}", x.instance_path))
        .take(10)
        .collect();
    assert!(
        errors.is_empty(),
        "the stacks do not match the schema:\n{}",
        errors.join("\n")
    );
}

fn listed(list: &Value, dev: &str) -> Value {
    let e = list
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == dev)
        .unwrap_or_else(|| panic!("{dev} not listed"))
        .clone();
    let mut s = schema("bootbench.result-1.schema.json");
    let defs = s["$defs"].take();
    let target = serde_json::json!({"$ref": "#/$defs/target", "$defs": defs});
    let v = jsonschema::validator_for(&target).expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(&e)
        .map(|x| format!("{x} at {}", x.instance_path))
        .take(10)
        .collect();
    assert!(
        errors.is_empty(),
        "{dev}'s entry does not match the target schema:\n{}",
        errors.join("\n")
    );
    e
}

/// The results document on stdout of a successful run.
fn doc_of(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "stderr:\n{}", stderr(o));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("stdout is exactly one JSON document");
    assert_valid("bootbench.result-1.schema.json", &doc);
    doc
}

fn tests_of<'a>(doc: &'a Value, target: &str) -> Vec<&'a Value> {
    doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["target"] == target)
        .collect()
}

fn workload_writes(name: &str) -> bool {
    Workload::from_name(name).expect("known workload").writes()
}

/// A config file (removed on drop).
fn config(json: &Value) -> ShmFile {
    assert_valid("bootbench.config-1.schema.json", json);
    ShmFile::new("config.json", serde_json::to_string_pretty(json).unwrap().as_bytes())
}

// ---------------------------------------------------------------- simulate

/// The document without the fields that change from run to run or machine
/// to machine.
fn normalised(mut doc: Value) -> Value {
    doc["run"]["started_unix_ns"] = Value::from(0);
    doc["run"]["duration_ns"] = Value::from(0);
    for k in [
        "hostname",
        "sys_vendor",
        "product_name",
        "product_serial",
        "cpu_model",
        "cores",
        "memory_bytes",
        "kernel",
        "firmware",
        "secure_boot",
        "lockdown",
    ] {
        doc["host"][k] = Value::Null;
    }
    doc
}

/// Every float to 10 significant digits.
fn rounded(v: Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap();
            let r: f64 = format!("{x:.9e}").parse().unwrap();
            serde_json::Number::from_f64(r).map_or(Value::Null, Value::Number)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(rounded).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, rounded(v))).collect()),
        other => other,
    }
}

#[test]
fn simulate_quick_full_pipeline_is_deterministic_and_matches_the_snapshot() {
    let a = run(&["run", "--simulate", "--profile", "quick"]);
    let doc = doc_of(&a);
    assert_eq!(doc["run"]["simulated"], true);
    assert_eq!(doc["run"]["status"], "ok");
    let targets: Vec<&str> = doc["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["path"].as_str().unwrap())
        .collect();
    assert_eq!(targets, vec!["sim:hdd:1G", "sim:ssd:256M"]);
    for t in &targets {
        let tests = tests_of(&doc, t);
        for w in Workload::ALL {
            let found: Vec<_> = tests.iter().filter(|x| x["workload"] == w.name()).collect();
            assert!(!found.is_empty(), "{} missing on {t}", w.name());
            for x in found {
                assert_eq!(x["status"]["state"], "ok", "{} on {t}: {}", w.name(), x["status"]);
            }
        }
    }
    // The summary table goes to stderr, with its unit.
    assert!(stderr(&a).contains("MB/s"), "{}", stderr(&a));

    let b = run(&["run", "--simulate", "--profile", "quick"]);
    let doc_b = doc_of(&b);
    assert_ne!(doc["run"]["started_unix_ns"], Value::from(0));
    assert_eq!(normalised(doc.clone()), normalised(doc_b), "two simulated runs differ");

    // The snapshot holds floats to 10 significant digits, so that a change
    // in the last bits of a computation's rounding does not count as a change
    // of results; the comparison of the two runs above is exact.
    let snap_path = Path::new(MANIFEST).join("tests/snapshots/simulate_quick.json");
    let got = serde_json::to_string_pretty(&rounded(normalised(doc))).unwrap() + "\n";
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(snap_path.parent().unwrap()).unwrap();
        std::fs::write(&snap_path, &got).unwrap();
    }
    let want = std::fs::read_to_string(&snap_path).expect("snapshot exists (UPDATE_SNAPSHOTS=1 makes it)");
    assert!(
        got == want,
        "simulated results differ from {}; rerun with UPDATE_SNAPSHOTS=1 if the change is intended",
        snap_path.display()
    );
}

#[test]
fn simulate_writes_results_to_out_and_never_overwrites() {
    let dir = PathBuf::from("/dev/shm").join(unique("outdir"));
    std::fs::create_dir(&dir).unwrap();
    let out = dir.join("r.json");
    let out_s = out.to_str().unwrap();
    let cfg = config(&serde_json::json!({"tests": [{"workload": "rand_read", "runtime": "100ms"}]}));
    let o = run(&[
        "run",
        "--simulate",
        "--config",
        cfg.path(),
        "--target",
        "sim:ssd:64M",
        "--out",
        out_s,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "nothing on stdout with --out");
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_valid("bootbench.result-1.schema.json", &doc);
    assert_eq!(doc["tests"][0]["status"]["state"], "ok");
    // Only the results file is left in the directory (no temp file).
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);

    let before = std::fs::read(&out).unwrap();
    let o = run(&["run", "--simulate", "--config", cfg.path(), "--out", out_s]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("exists") && stderr(&o).contains(out_s),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read(&out).unwrap(),
        before,
        "an existing results file is never overwritten"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn help_version_and_bad_options() {
    let o = run(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("bootbench-init run"));
    let o = run(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains(env!("CARGO_PKG_VERSION")));
    for args in [&["run", "--bogus"][..], &["frob"], &[], &["validate"]] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty());
    }
    assert!(stderr(&run(&["run", "--bogus"])).contains("--bogus"));
}

// ---------------------------------------------------------------- loop devices

#[test]
fn quick_profile_on_a_loop_device_reads_and_skips_writes_without_destructive() {
    let lo = Loop::new(LOOP_BYTES, &[]);
    let before = lo.hash();
    let cfg = config(&serde_json::json!({"profile": "quick", "defaults": {"runtime": "200ms"}}));
    let doc = doc_of(&run(&["run", "--config", cfg.path(), "--target", &lo.dev]));
    assert_eq!(doc["run"]["simulated"], false);
    assert_eq!(doc["targets"][0]["kind"], "block");
    assert_eq!(doc["targets"][0]["writable"], false);
    let tests = tests_of(&doc, &lo.dev);
    for w in Workload::ALL {
        let t: Vec<_> = tests.iter().filter(|t| t["workload"] == w.name()).collect();
        assert!(!t.is_empty(), "{} missing", w.name());
        for t in t {
            if w.writes() {
                assert_eq!(t["status"]["state"], "skipped", "{}", t["name"]);
                assert!(
                    t["status"]["reason"].as_str().unwrap().contains("destructive"),
                    "{}",
                    t["status"]
                );
                assert!(t["steps"].as_array().unwrap().is_empty());
            } else {
                assert_eq!(t["status"]["state"], "ok", "{}: {}", t["name"], t["status"]);
                assert!(!t["steps"].as_array().unwrap().is_empty());
            }
        }
    }
    assert_eq!(lo.hash(), before, "a read-only run changed the device");
}

/// A surface scan of a loop device (`surface_scan`, before the tests):
/// every byte of it read once, in reads of `bs`, every read in a time
/// class, the zones holding every byte, nothing unreadable; then a quarter
/// of a 4 MiB area from 1 MiB, spread over it. The device is unchanged.
#[test]
fn a_surface_scan_reads_every_block_once_and_writes_nothing() {
    let lo = Loop::new(LOOP_BYTES, &[(0, &common::random_bytes(LOOP_BYTES, 11))]);
    let before = lo.hash();
    let size = u64::try_from(LOOP_BYTES).unwrap();
    let tests = serde_json::json!([{"workload": "seq_read", "size": "1M"}]);
    for (scan, area, planned) in [
        (serde_json::json!({"bs": "256k", "zones": 4}), (0, size), size),
        (
            serde_json::json!({"bs": "256k", "offset": "1M", "length": "4M", "coverage": "25%", "iodepth": 1}),
            (1 << 20, 5 << 20),
            1 << 20,
        ),
    ] {
        let cfg = config(&serde_json::json!({"tests": tests, "surface_scan": scan}));
        let plan = String::from_utf8(run(&["validate", cfg.path(), "--target", &lo.dev]).stdout).unwrap();
        assert!(
            plan.lines().any(|l| l.starts_with("surface scan: every disk, ")),
            "{plan}"
        );
        let out = run(&["run", "--config", cfg.path(), "--target", &lo.dev]);
        let doc = doc_of(&out);
        assert_valid("bootbench.result-1.schema.json", &doc);
        let s = &doc["targets"][0]["surface_scan"];
        assert_eq!(s["end"], "done", "{scan}: {s}");
        assert_eq!(
            (s["start_byte"].as_u64(), s["end_byte"].as_u64()),
            (Some(area.0), Some(area.1)),
            "{scan}"
        );
        assert_eq!(s["planned_bytes"], planned, "{scan}");
        assert_eq!(s["read_bytes"], planned, "{scan}: every planned byte read");
        assert_eq!(s["reads"], planned / (256 << 10), "{scan}");
        let classes: u64 = s["classes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["reads"].as_u64().unwrap())
            .sum();
        assert_eq!(classes, planned / (256 << 10), "{scan}: every read in a class");
        let zoned: u64 = s["zones"]
            .as_array()
            .unwrap()
            .iter()
            .map(|z| z["bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(zoned, planned, "{scan}: the zones hold every byte");
        assert_eq!(s["unreadable_lbas"], serde_json::json!([]), "{scan}");
        assert!(stderr(&out).contains("surface scan done"), "{}", stderr(&out));
        assert_eq!(doc["tests"][0]["status"]["state"], "ok", "the tests run after the scan");
    }
    assert_eq!(lo.hash(), before, "a surface scan changed the device");
}

/// A burn-in (`burn_in`, after the scan and before the tests) writes and
/// reads back every block of the granted disk only: badblocks' four
/// patterns, each pass whole, nothing bad, the disk left holding the last
/// pattern under bootbench's scratch label; the disk beside it (not
/// granted) unchanged. The label makes it blank for the next run, whose
/// random-order burn-in of 8 MiB writes and checks every 4 KiB block.
#[test]
fn a_burn_in_writes_and_checks_every_block_of_the_granted_disk_only() {
    let a = Loop::zeroed(LOOP_BYTES);
    let b = Loop::new(LOOP_BYTES, &[]);
    let b0 = b.hash();
    let size = u64::try_from(LOOP_BYTES).unwrap();
    let tests = serde_json::json!([{"workload": "seq_read", "size": "1M"}]);
    let cfg = config(&serde_json::json!({"tests": tests, "targets": [a.dev, b.dev],
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [a.dev]}, "burn_in": {"bs": "256k"}}));
    let plan = String::from_utf8(run(&["validate", cfg.path()]).stdout).unwrap();
    assert!(
        plan.lines()
            .any(|l| l.starts_with(&format!("burn-in (WRITES, destroys the data of): {};", a.dev))),
        "{plan}"
    );
    let out = run(&["run", "--config", cfg.path()]);
    let doc = doc_of(&out);
    assert_valid("bootbench.result-1.schema.json", &doc);
    let r = &doc["targets"][0]["burn_in"];
    assert_eq!(
        (r["end"].as_str(), r["mode"].as_str()),
        (Some("done"), Some("sequential")),
        "{r}"
    );
    let passes = r["passes"].as_array().unwrap();
    let names: Vec<&str> = passes.iter().map(|p| p["pattern"].as_str().unwrap()).collect();
    assert_eq!(names, ["0xaa", "0x55", "0xff", "0x00"]);
    for p in passes {
        assert_eq!(p["end"], "done", "{p}");
        assert_eq!(
            (p["written_bytes"].as_u64(), p["verified_bytes"].as_u64()),
            (Some(size), Some(size))
        );
        assert_eq!(
            (p["writes"].as_u64(), p["reads"].as_u64()),
            (Some(size >> 18), Some(size >> 18))
        );
        for k in ["unwritable_lbas", "unreadable_lbas", "mismatched_lbas"] {
            assert_eq!(p[k], serde_json::json!([]), "{k}: {p}");
        }
    }
    assert!(doc["targets"][1].get("burn_in").is_none(), "B is not burnt in");
    assert_eq!(
        doc["tests"][0]["status"]["state"], "ok",
        "the tests run after the burn-in"
    );
    let data = std::fs::read(&a.file.0).unwrap();
    assert!(data[4096..].iter().all(|&x| x == 0), "the last pattern, 0x00, is on A");
    assert!(stderr(&out).contains("scratch label written"), "{}", stderr(&out));
    assert_eq!(b.hash(), b0, "the disk not granted is unchanged");

    let cfg = config(&serde_json::json!({"tests": tests, "targets": [a.dev],
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [a.dev]},
        "burn_in": {"mode": "random", "loops": 1, "offset": "1M", "length": "8M"}}));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    let r = &doc["targets"][0]["burn_in"];
    assert_eq!(
        (r["end"].as_str(), r["mode"].as_str()),
        (Some("done"), Some("random")),
        "{r}"
    );
    assert_eq!((r["bs"].as_u64(), r["iodepth"].as_u64()), (Some(4096), Some(32)));
    let p = &r["passes"][0];
    assert_eq!(
        (p["pattern"].as_str(), p["order"].as_str()),
        (Some("random"), Some("random"))
    );
    assert_eq!(
        (p["written_bytes"].as_u64(), p["verified_bytes"].as_u64()),
        (Some(8 << 20), Some(8 << 20))
    );
    assert_eq!((p["writes"].as_u64(), p["reads"].as_u64()), (Some(2048), Some(2048)));
    assert_eq!(p["mismatched_lbas"], serde_json::json!([]));
    let data = std::fs::read(&a.file.0).unwrap();
    assert!(
        data[1 << 20..9 << 20].chunks(4096).all(|b| b.iter().any(|&x| x != 0)),
        "random data in every block"
    );
    assert!(data[9 << 20..].iter().all(|&x| x == 0), "nothing written past the area");
    assert_eq!(b.hash(), b0);
}

/// A byte changed behind the burn-in's back, between a pass's writes and
/// its reads: a second writer rewrites one byte of the loop device's
/// backing file with 0x00 over and over while the run burns the device in
/// with 0xaa and 0x55. Every pass reports exactly that byte's logical
/// block as mismatched, and nothing else.
#[test]
fn a_byte_changed_behind_the_burn_ins_back_is_reported_by_its_lba() {
    use std::os::unix::fs::FileExt;
    use std::sync::atomic::{AtomicBool, Ordering};
    let a = Loop::zeroed(LOOP_BYTES);
    let at: u64 = (40 << 20) + 3 * 4096 + 17;
    let tests = serde_json::json!([{"workload": "seq_read", "size": "1M"}]);
    let cfg = config(&serde_json::json!({"tests": tests, "targets": [a.dev],
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [a.dev]},
        "burn_in": {"bs": "256k", "patterns": ["0xaa", "0x55"], "max_bad": 100}}));
    let stop = AtomicBool::new(false);
    let backing = std::fs::OpenOptions::new().write(true).open(&a.file.0).unwrap();
    let out = std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                backing.write_at(&[0u8], at).unwrap();
                std::thread::yield_now();
            }
        });
        let out = run(&["run", "--config", cfg.path()]);
        stop.store(true, Ordering::Relaxed);
        out
    });
    // The verdict fails the disk (acceptance.burn_in.mismatched): exit 3.
    assert_eq!(out.status.code(), Some(3), "stderr:\n{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_valid("bootbench.result-1.schema.json", &doc);
    let r = &doc["targets"][0]["burn_in"];
    let passes = r["passes"].as_array().unwrap();
    assert_eq!(passes.len(), 2, "{r}");
    for p in passes {
        assert_eq!(p["mismatched_lbas"], serde_json::json!([at / 512]), "{p}");
        assert_eq!(p["unwritable_lbas"], serde_json::json!([]), "{p}");
        assert_eq!(p["unreadable_lbas"], serde_json::json!([]), "{p}");
    }
    assert_eq!(r["mismatched_lbas"], serde_json::json!([at / 512]), "{r}");
}

/// Preconditioning (`precondition`, after the burn-in, before the tests)
/// of the granted disk only: the area (8 MiB from 1 MiB) written twice in
/// 128 KiB writes, then rounds of 4 KiB random writes until the last 3 are
/// steady or 8 rounds; the record's window figures are those of its last
/// rounds, and steady state is claimed exactly when they are within the
/// limits; nothing written outside the area; the disk not granted unchanged.
#[test]
fn preconditioning_fills_the_area_and_runs_rounds_to_steady_state() {
    let a = Loop::zeroed(LOOP_BYTES);
    let b = Loop::new(LOOP_BYTES, &[]);
    let b0 = b.hash();
    let tests = serde_json::json!([{"workload": "seq_read", "size": "1M"}]);
    let cfg = config(&serde_json::json!({"tests": tests, "targets": [a.dev, b.dev],
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [a.dev]},
        "precondition": {"offset": "1M", "length": "8M", "round": "100ms", "max_rounds": 8, "window": 3}}));
    let plan = String::from_utf8(run(&["validate", cfg.path()]).stdout).unwrap();
    assert!(
        plan.lines()
            .any(|l| l.starts_with(&format!("preconditioning (WRITES, destroys the data of): {};", a.dev))),
        "{plan}"
    );
    let out = run(&["run", "--config", cfg.path()]);
    let doc = doc_of(&out);
    assert_valid("bootbench.result-1.schema.json", &doc);
    let p = &doc["targets"][0]["precondition"];
    assert_eq!(p["fill"]["bytes"], 16 << 20, "{p}");
    assert_eq!(
        (p["figure"].as_str(), p["order"].as_str()),
        (Some("write_iops"), Some("random"))
    );
    let rounds = p["rounds"].as_array().unwrap();
    assert!((3..=8).contains(&rounds.len()), "{p}");
    let values: Vec<f64> = rounds.iter().map(|r| r["value"].as_f64().unwrap()).collect();
    for r in rounds {
        let (w, t) = (r["writes"].as_f64().unwrap(), r["time_ns"].as_f64().unwrap());
        assert!(
            w > 0.0 && (r["value"].as_f64().unwrap() - w * 1e9 / t).abs() < 1e-6 * w * 1e9 / t,
            "{r}"
        );
        assert_eq!(r["bytes"].as_f64().unwrap(), w * 4096.0);
    }
    let last = &values[values.len() - 3..];
    let mean = last.iter().sum::<f64>() / 3.0;
    let range = last.iter().copied().fold(f64::MIN, f64::max) - last.iter().copied().fold(f64::MAX, f64::min);
    let fit = (last[2] - last[0]).abs(); // the least-squares line over 3 points runs first to last
    assert!((p["window_mean"].as_f64().unwrap() - mean).abs() < 1e-6 * mean, "{p}");
    assert!((p["window_range"].as_f64().unwrap() - range).abs() < 1e-6 * mean, "{p}");
    assert!(
        (p["window_fit_excursion"].as_f64().unwrap() - fit).abs() < 1e-6 * mean,
        "{p}"
    );
    let steady = range <= 0.2 * mean && fit <= 0.1 * mean;
    match p["end"].as_str() {
        Some("steady") => {
            assert!(steady, "{p}");
            assert_eq!(p["steady_round"].as_u64(), Some(rounds.len() as u64));
        }
        Some("round_limit") => assert!(!steady && rounds.len() == 8, "{p}"),
        e => panic!("{e:?}: {p}"),
    }
    assert!(doc["targets"][1].get("precondition").is_none());
    assert_eq!(doc["tests"][0]["status"]["state"], "ok", "the tests run after");
    let data = std::fs::read(&a.file.0).unwrap();
    assert!(
        data[4096..1 << 20].iter().all(|&x| x == 0),
        "nothing written before the area"
    );
    assert!(data[9 << 20..].iter().all(|&x| x == 0), "nothing written past the area");
    assert!(
        data[1 << 20..9 << 20].chunks(4096).all(|c| c.iter().any(|&x| x != 0)),
        "the fill wrote every block"
    );
    assert_eq!(b.hash(), b0, "the disk not granted is unchanged");
}

/// A test that waits for steady state (fio's `ss`) on a live loop device:
/// the wait's record is in the step, its intervals are those of the wait
/// (as many as it lasted), attained exactly when its last window meets the
/// criterion (else it lasted `ss_max`), the test is measured after it; the
/// document fits the schema, and a test without `ss` has no wait.
#[test]
fn a_test_waits_for_steady_state_before_it_is_measured() {
    let a = Loop::new(LOOP_BYTES, &[]);
    let tests = serde_json::json!([
        {"workload": "rand_read", "runtime": "500ms", "ss": "iops:30%", "ss_dur": "300ms",
         "ss_interval": "100ms", "ss_max": "2s"},
        {"workload": "seq_read", "size": "1M"}]);
    let cfg = config(&serde_json::json!({"tests": tests, "targets": [a.dev]}));
    let out = run(&["run", "--config", cfg.path()]);
    let doc = doc_of(&out);
    assert_valid("bootbench.result-1.schema.json", &doc);
    let t = &doc["tests"][0];
    assert_eq!(t["status"]["state"], "ok", "{t}");
    assert_eq!(t["params"]["steady_state"]["ss"], "iops:30%");
    assert_eq!(t["params"]["steady_state"]["ss_max"], 2_000_000_000u64);
    let waits = t["steps"][0]["steady_state"].as_array().expect("a wait per job");
    assert_eq!(waits.len(), 1);
    let w = &waits[0];
    let wait_ns = w["wait_ns"].as_u64().unwrap();
    let iops: Vec<f64> = w["iops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(iops.len(), w["bw"].as_array().unwrap().len());
    assert!(iops.iter().all(|&v| v > 0.0), "{w}");
    let last = &iops[iops.len().saturating_sub(3)..];
    let mean = last.iter().sum::<f64>() / last.len() as f64;
    let dev = last.iter().map(|v| (v - mean).abs()).fold(0.0, f64::max);
    if w["attained"] == true {
        assert!(iops.len() >= 3 && dev * 100.0 / mean < 30.0, "{w}");
        assert_eq!(
            wait_ns / 100_000_000,
            iops.len() as u64,
            "it ended at an interval's end: {w}"
        );
        assert!(
            (w["window"]["criterion"].as_f64().unwrap() - dev * 100.0 / mean).abs() < 1e-6,
            "{w}"
        );
    } else {
        assert!(wait_ns >= 2_000_000_000, "{w}");
    }
    // The runtime bound is checked before each request; the measured time
    // ends at the last completion before it, a request's time short of it.
    assert!(
        t["steps"][0]["runtime_ns"].as_u64().unwrap() >= 450_000_000,
        "measured after the wait: {}",
        t["steps"][0]
    );
    assert!(doc["tests"][1]["steps"][0].get("steady_state").is_none());
    assert!(doc["tests"][1]["params"].get("steady_state").is_none());
}

/// What a disk holds, in `list`: a LUKS2 and a LUKS1 container, their
/// headers written by Debian's cryptsetup (`luksFormat`, the fixtures of
/// issue 32), each on a loop device: version, UUID (as `cryptsetup
/// luksUUID` says), label, cipher, key size, where the data starts and the
/// keyslots in use, in the JSON and a `holds:` line under the disk; a
/// plain device holds nothing; nothing is written.
#[test]
fn list_shows_the_luks_containers_cryptsetup_made() {
    let cs = "cryptsetup";
    let key = ShmFile::new(&unique("luks-key"), &[7u8; 32]);
    let make = |args: &[&str]| -> (Loop, String) {
        let f = ShmFile::new(&unique("luks.img"), &vec![0u8; 32 << 20]);
        let mut cmd = Command::new(cs);
        cmd.args([
            "luksFormat",
            "--batch-mode",
            "--pbkdf-force-iterations",
            "1000",
            "--key-file",
            key.path(),
        ]);
        let o = cmd
            .args(args)
            .arg(f.path())
            .output()
            .expect("cryptsetup (Debian's cryptsetup-bin, .ci/deps installs it)");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let uuid = Command::new(cs).args(["luksUUID", f.path()]).output().unwrap();
        let uuid = String::from_utf8(uuid.stdout).unwrap().trim().to_string();
        (Loop::with_contents(std::fs::read(f.path()).unwrap()), uuid)
    };
    let (l2, u2) = make(&[
        "--type",
        "luks2",
        "--pbkdf",
        "pbkdf2",
        "--label",
        "bench",
        "--sector-size",
        "4096",
    ]);
    let (l1, u1) = make(&["--type", "luks1"]);
    let plain = Loop::zeroed(LOOP_BYTES);
    let (h2, h1) = (l2.hash(), l1.hash());
    let o = run(&["list", "--all", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let list: Value = serde_json::from_slice(&o.stdout).unwrap();
    let entry = |dev: &str| listed(&list, dev);
    assert_eq!(
        entry(&l2.dev)["luks"],
        serde_json::json!({"version": 2, "uuid": u2, "label": "bench", "cipher": "aes-xts-plain64",
            "key_bits": 512, "data_offset_bytes": 16u64 << 20, "sector_size": 4096, "keyslots": 1})
    );
    let e1 = entry(&l1.dev);
    assert_eq!(
        (
            e1["luks"]["version"].as_u64(),
            e1["luks"]["uuid"].as_str(),
            e1["luks"]["cipher"].as_str()
        ),
        (Some(1), Some(u1.as_str()), Some("aes-xts-plain64"))
    );
    assert_eq!(
        (e1["luks"]["key_bits"].as_u64(), e1["luks"]["keyslots"].as_u64()),
        (Some(512), Some(1))
    );
    assert_eq!(
        e1["luks"]["data_offset_bytes"].as_u64(),
        Some(4096 * 512),
        "LUKS1's payload offset, 4096 sectors"
    );
    assert!(entry(&plain.dev).get("luks").is_none());
    let text = String::from_utf8(run(&["list", "--all"]).stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(&format!("{} ", l2.dev)))
        .expect("listed");
    assert_eq!(
        lines[at + 1],
        format!(
            "  holds: LUKS2 container uuid {u2} label bench cipher aes-xts-plain64 key 512 bits data from byte \
             16777216 in sectors of 4096 B; 1 keyslot(s) in use"
        )
    );
    assert_eq!((l2.hash(), l1.hash()), (h2, h1), "list reads only");
}

/// An LVM command of Debian's lvm2 limited to `devs` (`--devices`: no
/// other disk of the machine is scanned or touched) and keeping no backup
/// of the metadata in /etc/lvm, its stdout.
fn lvm(args: &[&str], devs: &str) -> String {
    let o = Command::new("lvm")
        .args(args)
        .args(["--devices", devs])
        // No metadata backups of the test's VGs left in the host's /etc/lvm.
        .args(["--config", "backup { backup = 0 archive = 0 }"])
        .output()
        .expect("lvm (Debian's lvm2, .ci/deps installs it)");
    assert!(
        o.status.success(),
        "lvm {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// `list` into a pipe whose reader stops after the first line (`list |
/// head -1`): the list ends quietly with status 0, no panic on the
/// broken pipe.
#[test]
fn list_into_a_closed_pipe_ends_quietly() {
    let _many = Loop::zeroed(LOOP_BYTES);
    let mut child = Command::new(BIN)
        .args(["list", "--all"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before reading anything.
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
}

/// What two PVs hold, in `list`: a volume group written by Debian's lvm2
/// on two loop devices (pvcreate, vgcreate, and two volumes created
/// without device-mapper: a linear one and one striped over both PVs),
/// checked field by field against what `pvs`, `vgs` and `lvs` report of
/// the same devices; the text names the VG, its PVs and each volume as
/// openable read-only; nothing is written by list.
#[test]
fn list_shows_the_volume_group_lvm_made() {
    let (a, b) = (Loop::zeroed(LOOP_BYTES), Loop::zeroed(LOOP_BYTES));
    let devs = format!("{},{}", a.dev, b.dev);
    lvm(&["pvcreate", "-q", &a.dev, &b.dev], &devs);
    let vg = unique("vg").replace(['/', '.'], "_");
    lvm(&["vgcreate", "-q", &vg, &a.dev, &b.dev], &devs);
    let lvc = ["lvcreate", "-q", "--driverloaded", "n", "-an", "-Zn"];
    lvm(&[&lvc[..], &["-L", "8M", "-n", "lin", &vg]].concat(), &devs);
    lvm(
        &[&lvc[..], &["-i2", "-I64", "-L", "16M", "-n", "str", &vg]].concat(),
        &devs,
    );
    let report = |cmd: &str, fields: &str, key: &str| -> Vec<Value> {
        let out = lvm(
            &[
                cmd,
                "--reportformat",
                "json",
                "--units",
                "b",
                "--nosuffix",
                "-o",
                fields,
            ],
            &devs,
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        v["report"][0][key].as_array().unwrap().clone()
    };
    let pvs = report("pvs", "pv_name,pv_uuid,vg_uuid,dev_size,pe_start", "pv");
    let vgs = report("vgs", "vg_name,vg_uuid,vg_seqno,vg_extent_size", "vg");
    let lvs = report(
        "lvs",
        "lv_name,lv_uuid,lv_size,segtype,stripes,stripe_size,seg_start_pe,seg_size_pe",
        "lv",
    );
    let (ha, hb) = (a.hash(), b.hash());

    let o = run(&["list", "--all", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let list: Value = serde_json::from_slice(&o.stdout).unwrap();
    let entry = |dev: &str| listed(&list, dev);
    let num = |v: &Value| v.as_str().unwrap().parse::<u64>().unwrap();
    for pv in &pvs {
        let e = entry(pv["pv_name"].as_str().unwrap());
        let got = &e["lvm"];
        assert_eq!(got["pv_uuid"], pv["pv_uuid"], "{e}");
        assert_eq!(got["device_size_bytes"].as_u64(), Some(num(&pv["dev_size"])));
        let vgj = &got["vg"];
        assert_eq!((&vgj["name"], &vgj["uuid"]), (&vgs[0]["vg_name"], &vgs[0]["vg_uuid"]));
        assert_eq!(vgj["seqno"].as_u64(), Some(num(&vgs[0]["vg_seqno"])));
        assert_eq!(vgj["extent_bytes"].as_u64(), Some(num(&vgs[0]["vg_extent_size"])));
        let mine = vgj["pvs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["uuid"] == pv["pv_uuid"])
            .expect("the PV in its VG");
        assert_eq!(mine["pe_start_bytes"].as_u64(), Some(num(&pv["pe_start"])));
        assert_eq!(vgj["lvs"].as_array().unwrap().len(), lvs.len());
        for lv in &lvs {
            let l = vgj["lvs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|l| l["name"] == lv["lv_name"])
                .unwrap();
            assert_eq!(l["uuid"], lv["lv_uuid"]);
            assert_eq!(l["size_bytes"].as_u64(), Some(num(&lv["lv_size"])));
            let seg = &l["segments"][0];
            // lvs names a one-stripe segment linear; the metadata, striped.
            let kind = if lv["segtype"] == "linear" {
                "striped"
            } else {
                lv["segtype"].as_str().unwrap()
            };
            assert_eq!(seg["type"], kind);
            assert_eq!(seg["stripes"].as_array().unwrap().len() as u64, num(&lv["stripes"]));
            assert_eq!(seg["stripe_bytes"].as_u64().unwrap_or(0), num(&lv["stripe_size"]));
            assert_eq!(
                (seg["start_extent"].as_u64(), seg["extent_count"].as_u64()),
                (Some(num(&lv["seg_start_pe"])), Some(num(&lv["seg_size_pe"])))
            );
            assert!(l.get("not_opened").is_none(), "{l}");
        }
    }
    let text = String::from_utf8(run(&["list", "--all"]).stdout).unwrap();
    assert!(
        text.contains(&format!(
            "  holds: LVM physical volume uuid {} of volume group {vg} (seqno",
            pvs[0]["pv_uuid"].as_str().unwrap()
        )),
        "{text}"
    );
    let vg_line = text
        .lines()
        .find(|l| l.starts_with(&format!("  volume group {vg} ")))
        .expect("the VG line");
    assert!(
        vg_line.ends_with(&format!("PVs: pv0 {}, pv1 {}", a.dev, b.dev)),
        "{vg_line}"
    );
    for (lv, size) in [
        ("lin", "8 MiB (8388608 B), 1 segment(s) striped"),
        ("str", "16 MiB (16777216 B), 1 segment(s) striped"),
    ] {
        assert!(
            text.contains(&format!("    volume {vg}/{lv} {size}: can be opened read-only")),
            "{lv}: {text}"
        );
    }
    // `existing` plans each volume as the table LVM's own report makes of
    // it: each segment at the PV's first extent plus its own, in sectors.
    let segs = report(
        "lvs",
        "lv_name,seg_start_pe,seg_size_pe,stripes,stripe_size,seg_pe_ranges",
        "lv",
    );
    let ext = num(&vgs[0]["vg_extent_size"]) / 512;
    let pe_start = |dev: &str| num(&pvs.iter().find(|p| p["pv_name"] == dev).unwrap()["pe_start"]) / 512;
    let validate = |existing: Value| {
        let cfg = ShmFile::new(
            &unique("existing.json"),
            serde_json::json!({
                "existing": existing,
                "tests": [{"workload": "seq_read", "name": "r", "bs": "1M", "size": "1M"}]
            })
            .to_string()
            .as_bytes(),
        );
        run(&["validate", cfg.path()])
    };
    let o = validate(serde_json::json!([format!("{vg}/lin"), format!("{vg}/str")]));
    let plan = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{plan}{}", stderr(&o));
    for seg in &segs {
        let lv = seg["lv_name"].as_str().unwrap();
        let ranges: Vec<(&str, u64)> = seg["seg_pe_ranges"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .map(|r| {
                let (dev, pes) = r.rsplit_once(':').unwrap();
                (dev, pes.split('-').next().unwrap().parse().unwrap())
            })
            .collect();
        let start = num(&seg["seg_start_pe"]) * ext;
        let len = num(&seg["seg_size_pe"]) * ext;
        let at = |(dev, pe): &(&str, u64)| format!("{dev} {}", pe_start(dev) + pe * ext);
        let want = if num(&seg["stripes"]) == 1 {
            format!("{start} {len} linear {}", at(&ranges[0]))
        } else {
            format!(
                "{start} {len} striped {} {} {}",
                ranges.len(),
                num(&seg["stripe_size"]) / 512,
                ranges.iter().map(at).collect::<Vec<_>>().join(" ")
            )
        };
        assert!(
            plan.contains(&format!("the existing LVM volume {vg}/{lv}, read-only, table: {want}")),
            "{lv}: want {want:?} in {plan}"
        );
    }
    assert_eq!((a.hash(), b.hash()), (ha, hb), "list reads only");
    drop(b);
    // With one PV gone, naming the striped volume is an error; the linear
    // one, on the PV still here, is planned.
    let o = validate(serde_json::json!([format!("{vg}/str")]));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "existing[0]: \"{vg}/str\" cannot be opened read-only: its PV(s) pv1 are missing"
        )),
        "{}",
        stderr(&o)
    );
    let o = validate(serde_json::json!([format!("{vg}/lin")]));
    let plan = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{plan}{}", stderr(&o));
    assert!(
        plan.contains(&format!("the existing LVM volume {vg}/lin, read-only")),
        "{plan}"
    );
    // With one PV gone, the striped volume cannot be opened; the linear one
    // on the first PV still can.
    let text = String::from_utf8(run(&["list", "--all"]).stdout).unwrap();
    let vg_line = text
        .lines()
        .find(|l| l.starts_with(&format!("  volume group {vg} ")))
        .expect("the VG line");
    assert!(
        vg_line.ends_with(&format!("PVs: pv0 {}, pv1 missing", a.dev)),
        "{vg_line}"
    );
    assert!(
        text.contains(&format!(
            "    volume {vg}/str 16 MiB (16777216 B), 1 segment(s) striped: not opened: its PV(s) pv1 are missing"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "    volume {vg}/lin 8 MiB (8388608 B), 1 segment(s) striped: can be opened read-only"
        )),
        "{text}"
    );
}

/// `make image`'s output directory (Debian's kernel and its modules), where
/// the fixture guest boots from; `None` after saying so when it is missing
/// and CI is not set (in CI, a failure).
fn image_out(test: &str) -> Option<PathBuf> {
    let out = std::env::var_os("BOOTBENCH_OUT").map_or_else(|| Path::new(MANIFEST).join("../out"), PathBuf::from);
    if out.join("vmlinuz").exists() && out.join("kernel").is_dir() {
        return Some(out);
    }
    let msg = format!("{test}: {} has no vmlinuz and kernel/ (make image)", out.display());
    assert!(
        std::env::var_os("CI").is_none(),
        "{msg}; CI is set, so this is a failure"
    );
    eprintln!("SKIPPED {msg}");
    None
}

/// A directory of this test's own under the temporary directory, removed on drop.
struct TmpDir(PathBuf);

impl TmpDir {
    fn new(name: &str) -> TmpDir {
        let d = std::env::temp_dir().join(unique(name));
        std::fs::create_dir_all(&d).unwrap();
        TmpDir(d)
    }
}

impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `KEY=VALUE` lines (mdadm's --export) as pairs.
fn exported(text: &str) -> std::collections::HashMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The value of a `Key : value` line of `mdadm --examine`'s text.
fn examined<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(" : ")?;
        (k.trim() == key).then(|| v.trim())
    })
}

/// Firmware RAID metadata that Debian's mdadm wrote in the fixture guest
/// (`tests/fixtures/firmware.sh`): an Intel IMSM container (the guest has
/// no Intel option ROM: `IMSM_NO_PLATFORM=1`) and a SNIA DDF container,
/// each with a raid1 volume. `list` reports each disk's metadata as found,
/// as mdadm --examine names it, and assembles nothing: no md array comes
/// of them, and no disk changes.
#[test]
fn list_reports_firmware_raid_mdadm_made() {
    let Some(out) = image_out("list_firmware_raid") else {
        return;
    };
    let dir = TmpDir::new("fw-raid");
    let letters = ["a", "b", "c", "d"];
    let mut cmd = Command::new(Path::new(MANIFEST).join("../tests/fixtures/guest.sh"));
    cmd.arg("--out")
        .arg(&out)
        .arg("--script")
        .arg(Path::new(MANIFEST).join("../tests/fixtures/firmware.sh"));
    for l in letters {
        // DDF finds a 32 MiB disk too small for its metadata.
        cmd.arg("--disk")
            .arg(format!("{}:64M", dir.0.join(format!("{l}.img")).display()));
    }
    let o = cmd.output().expect("tests/fixtures/guest.sh");
    assert!(
        o.status.success(),
        "the fixture guest failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let console = std::fs::read_to_string(dir.0.join("a.img.console.log")).unwrap();
    let loops: Vec<Loop> = letters
        .iter()
        .map(|l| Loop::with_contents(std::fs::read(dir.0.join(format!("{l}.img"))).unwrap()))
        .collect();
    let hashes: Vec<u64> = loops.iter().map(Loop::hash).collect();
    let o = run(&["list", "--all", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let list: Value = serde_json::from_slice(&o.stdout).unwrap();
    for (i, l) in letters.iter().enumerate() {
        let magic = console
            .lines()
            .find_map(|x| x.strip_prefix(&format!("view vd{l} Magic : ")))
            .unwrap_or_else(|| panic!("mdadm --examine of vd{l}: {console}"));
        let want = match magic.trim() {
            "Intel Raid ISM Cfg Sig." => "Intel IMSM (Matrix Storage / VROC)",
            "de11de11" => "SNIA DDF",
            other => panic!("vd{l}: mdadm says {other:?}"),
        };
        let e = listed(&list, &loops[i].dev);
        assert_eq!(e["firmware_raid"], want, "vd{l}: {e}");
        assert!(e.get("md").is_none(), "no native md superblock: {e}");
    }
    let text = String::from_utf8(run(&["list", "--all"]).stdout).unwrap();
    for fw in ["Intel IMSM (Matrix Storage / VROC)", "SNIA DDF"] {
        assert!(
            text.contains(&format!("holds: firmware RAID metadata ({fw}), not assembled")),
            "{text}"
        );
    }
    let o = run(&["list", "--all", "--json", "--stacks"]);
    let st: Value = serde_json::from_slice(&o.stdout).unwrap();
    for a in st["md_arrays"].as_array().unwrap() {
        let slots = a["slots"].to_string();
        assert!(
            !loops.iter().any(|l| slots.contains(&format!("\"{}\"", l.dev))),
            "assembled from firmware RAID: {a}"
        );
    }
    for (i, l) in loops.iter().enumerate() {
        assert_eq!(l.hash(), hashes[i], "{} changed", l.dev);
    }
}

/// The stacks of the posts, made by Debian's mdadm, cryptsetup and lvm2
/// in a QEMU guest of Debian's kernel (`tests/fixtures/guest.sh`, the host
/// having no md or device-mapper): a raid1 (superblock 1.2) with LUKS2 on
/// it and LVM inside (post 000), a raid5 (0.90) under LVM (post 002), a
/// raid0 (1.1) under LVM, a raid1 (1.0) with LUKS1. On loop devices over
/// the images, `list --json` shows each member's superblock as `mdadm
/// --examine` does, field by field, and `list --json --stacks` each array
/// as the guest's `mdadm --detail`, `cryptsetup luksUUID`, `pvs`, `vgs` and
/// `lvs` saw it assembled: slots, size, the LUKS container and the PV at
/// the array's start (read through its members: raid5's and raid0's
/// chunks), the volume groups and their volumes; the VG inside LUKS stays
/// unseen. Then a raid5 member gone: degraded, still read; a raid0 member
/// gone: too few to start, its VG gone. No member changes.
#[test]
fn list_shows_the_md_arrays_and_stacks_mdadm_made() {
    let Some(out) = image_out("list_md_stacks") else {
        return;
    };
    let dir = TmpDir::new("md-stacks");
    let script = Path::new(MANIFEST).join("../tests/fixtures/stacks.sh");
    let letters = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"];
    let mut cmd = Command::new(Path::new(MANIFEST).join("../tests/fixtures/guest.sh"));
    cmd.arg("--out").arg(&out).arg("--script").arg(&script);
    for (i, l) in letters.iter().enumerate() {
        let size = if i < 2 { "64M" } else { "32M" };
        cmd.arg("--disk")
            .arg(format!("{}:{size}", dir.0.join(format!("{l}.img")).display()));
    }
    let o = cmd.output().expect("tests/fixtures/guest.sh");
    assert!(
        o.status.success(),
        "the fixture guest failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let console = std::fs::read_to_string(dir.0.join("a.img.console.log")).unwrap();
    // The guest's own views, each line tagged `view WHAT ...`.
    let view = |tag: &str| -> Vec<String> {
        console
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("view {tag} ")))
            .map(str::to_string)
            .collect()
    };
    let mut loops: Vec<Loop> = letters
        .iter()
        .map(|l| Loop::with_contents(std::fs::read(dir.0.join(format!("{l}.img"))).unwrap()))
        .collect();
    let hashes: Vec<u64> = loops.iter().map(Loop::hash).collect();
    let dev_of = |guest: &str, loops: &[Loop]| -> String {
        let i = letters.iter().position(|l| guest == format!("/dev/vd{l}")).unwrap();
        loops[i].dev.clone()
    };

    // Each member, as mdadm --examine on the host reads the same device.
    let o = run(&["list", "--all", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let list: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut arrays = std::collections::HashMap::new();
    for md in ["md0", "md1", "md2", "md3"] {
        let detail = exported(&view(md).join("\n"));
        for (k, guest_dev) in detail.iter().filter(|(k, _)| k.ends_with("_DEV")) {
            let dev = dev_of(guest_dev, &loops);
            let e = listed(&list, &dev);
            let m = &e["md"];
            let ex = Command::new("mdadm")
                .env("TZ", "UTC")
                .args(["--examine", &dev])
                .output()
                .unwrap();
            let ex = String::from_utf8(ex.stdout).unwrap();
            let exp = exported(
                &String::from_utf8(
                    Command::new("mdadm")
                        .args(["--examine", "--export", &dev])
                        .output()
                        .unwrap()
                        .stdout,
                )
                .unwrap(),
            );
            assert_eq!(m["array_uuid"].as_str(), Some(detail["MD_UUID"].as_str()), "{dev}: {m}");
            assert_eq!(m["metadata"].as_str(), Some(detail["MD_METADATA"].as_str()), "{dev}");
            assert_eq!(m["level"].as_str(), Some(detail["MD_LEVEL"].as_str()), "{dev}");
            assert_eq!(m["raid_disks"].to_string(), detail["MD_DEVICES"], "{dev}");
            assert_eq!(m["name"].as_str(), detail.get("MD_NAME").map(String::as_str), "{dev}");
            let role = &detail[&format!("{}_ROLE", k.strip_suffix("_DEV").unwrap())];
            assert_eq!(m["role"].to_string(), *role, "{dev}");
            assert_eq!(m["events"].to_string(), exp["MD_EVENTS"], "{dev}");
            // The times as --examine prints them (mdadm's --export of a 0.90
            // superblock gives its creation time as MD_UPDATE_TIME).
            for (field, key) in [("created_unix", "Creation Time"), ("updated_unix", "Update Time")] {
                let when = examined(&ex, key).unwrap();
                let o = Command::new("date")
                    .env("TZ", "UTC")
                    .args(["-d", when, "+%s"])
                    .output()
                    .unwrap();
                assert_eq!(
                    m[field].to_string(),
                    String::from_utf8(o.stdout).unwrap().trim(),
                    "{dev} {key}"
                );
            }
            assert_eq!(
                m["device_uuid"].as_str(),
                exp.get("MD_DEV_UUID").map(String::as_str),
                "{dev}"
            );
            assert_eq!(m["clean"], true, "{dev}: {}", examined(&ex, "State").unwrap_or("-"));
            assert_eq!(m["layout"].as_str(), examined(&ex, "Layout"), "{dev}");
            assert_eq!(
                m["chunk_bytes"].as_u64().map(|c| format!("{}K", c >> 10)).as_deref(),
                examined(&ex, "Chunk Size"),
                "{dev}"
            );
            if let Some(off) = examined(&ex, "Data Offset") {
                assert_eq!(
                    format!("{} sectors", m["data_offset_bytes"].as_u64().unwrap() / 512),
                    off,
                    "{dev}"
                );
            }
            if let Some(off) = examined(&ex, "Super Offset") {
                assert_eq!(
                    format!("{} sectors", m["superblock_offset_bytes"].as_u64().unwrap() / 512),
                    off,
                    "{dev}"
                );
            }
            assert!(
                e.get("lvm").is_none() && e.get("luks").is_none(),
                "{dev}: a member's data is its array's: {e}"
            );
            let size_kib = examined(&ex, "Array Size")
                .and_then(|s| s.split_whitespace().next())
                .map(str::to_string);
            arrays.insert(md, (detail.clone(), size_kib));
        }
    }
    assert_eq!(arrays.len(), 4);

    // The arrays and what they hold, as the guest's tools saw them assembled.
    let stacks = || -> Value {
        let o = run(&["list", "--all", "--json", "--stacks"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let st: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_stacks_valid(&st);
        st
    };
    let st = stacks();
    let array = |st: &Value, uuid: &str| -> Value {
        st["md_arrays"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["uuid"] == uuid)
            .unwrap_or_else(|| panic!("{uuid}: {st}"))
            .clone()
    };
    let pv_rows: Vec<Vec<String>> = view("pv")
        .iter()
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect();
    for (md, (detail, size_kib)) in &arrays {
        let a = array(&st, &detail["MD_UUID"]);
        let mut slots = vec![Value::Null; detail["MD_DEVICES"].parse().unwrap()];
        for (k, guest_dev) in detail.iter().filter(|(k, _)| k.ends_with("_DEV")) {
            let role: usize = detail[&format!("{}_ROLE", k.strip_suffix("_DEV").unwrap())]
                .parse()
                .unwrap();
            slots[role] = Value::String(dev_of(guest_dev, &loops));
        }
        assert_eq!(a["slots"], Value::Array(slots), "{md}");
        assert_eq!(
            (&a["state"], &a["startable"]),
            (&Value::from("clean"), &Value::from(true)),
            "{md}"
        );
        if let Some(kib) = size_kib {
            assert_eq!(
                a["size_bytes"].as_u64(),
                Some(kib.parse::<u64>().unwrap() * 1024),
                "{md}"
            );
        }
        let luks = view(md)
            .iter()
            .find_map(|l| l.strip_prefix("luks ").map(str::to_string));
        assert_eq!(a["luks"]["uuid"].as_str(), luks.as_deref(), "{md}: {a}");
        let pv = pv_rows.iter().find(|r| r[0] == format!("/dev/{md}"));
        assert_eq!(a["lvm"]["pv_uuid"].as_str(), pv.map(|r| r[1].as_str()), "{md}: {a}");
    }
    // The raid0's size, which mdadm --examine does not print: two members
    // of 31 MiB of data each (their 1 MiB data offset off 32 MiB).
    assert_eq!(
        array(&st, &arrays["md2"].0["MD_UUID"])["size_bytes"].as_u64(),
        Some(62 << 20)
    );
    let vgs: Vec<Vec<String>> = view("vg")
        .iter()
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect();
    let lvs: Vec<Vec<String>> = view("lv")
        .iter()
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect();
    let got_vgs = st["volume_groups"].as_array().unwrap();
    // vg0 is inside the LUKS container: unseen without its key.
    let mut names: Vec<&str> = got_vgs.iter().map(|v| v["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(names, ["vgfile", "vgr0"]);
    assert!(vgs.iter().any(|r| r[0] == "vg0"), "the guest made vg0 inside LUKS");
    for v in got_vgs {
        let row = vgs.iter().find(|r| r[0] == v["name"]).unwrap();
        assert_eq!(
            (
                v["uuid"].as_str(),
                v["seqno"].to_string(),
                v["extent_bytes"].to_string()
            ),
            (Some(row[1].as_str()), row[2].clone(), row[3].clone())
        );
        let pv = pv_rows.iter().find(|r| r[3] == row[1]).unwrap();
        assert_eq!(v["pvs"][0]["uuid"].as_str(), Some(pv[1].as_str()));
        let md = pv[0].trim_start_matches("/dev/");
        let a = array(&st, &arrays[md].0["MD_UUID"]);
        let at = format!("md:{}", a["name"].as_str().unwrap_or(a["uuid"].as_str().unwrap()));
        assert_eq!(v["pvs"][0]["found_at"].as_str(), Some(at.as_str()));
        let mine: Vec<(String, String, String)> = v["lvs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                (
                    l["name"].as_str().unwrap().to_string(),
                    l["size_bytes"].to_string(),
                    l["segment_types"][0].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let theirs: Vec<(String, String, String)> = lvs
            .iter()
            .filter(|r| r[0] == v["name"])
            .map(|r| {
                (
                    r[1].clone(),
                    r[2].clone(),
                    if r[3] == "linear" {
                        "striped".into()
                    } else {
                        r[3].clone()
                    },
                )
            })
            .collect();
        assert_eq!(mine, theirs);
        assert!(
            v["lvs"]
                .as_array()
                .unwrap()
                .iter()
                .all(|l| l.get("not_opened").is_none()),
            "{v}"
        );
    }
    let text = String::from_utf8(run(&["list", "--all"]).stdout).unwrap();
    assert!(
        text.contains("md arrays (from their members' superblocks; nothing assembled):"),
        "{text}"
    );
    let raid5 = &arrays["md1"].0["MD_UUID"];
    assert!(
        text.contains(&format!(
            "  array uuid {raid5} name - raid5 left-symmetric chunk 64 KiB, metadata 0.90, 65408 KiB (66977792 B), 3 slot(s): 0 {}, 1 {}, 2 {}; clean",
            loops[2].dev, loops[3].dev, loops[4].dev
        )),
        "{text}"
    );

    // The raid1 started without its second member and written through:
    // that member's events are behind (as mdadm --examine says), so it is
    // left out as stale and its slot is missing.
    let stale_uuid = console
        .lines()
        .find_map(|l| l.strip_prefix("stale md4 MD_UUID="))
        .expect("the stale raid1's UUID");
    let a = array(&st, stale_uuid);
    let (j, k) = (&loops[9].dev, &loops[10].dev);
    assert_eq!(a["slots"], serde_json::json!([j, null]), "{a}");
    assert_eq!(a["stale"], serde_json::json!([k]), "{a}");
    assert_eq!(
        (a["state"].as_str(), a["startable"].as_bool()),
        (Some("clean, degraded"), Some(true)),
        "{a}"
    );
    let events = |dev: &str| {
        let o = Command::new("mdadm")
            .args(["--examine", "--export", dev])
            .output()
            .unwrap();
        exported(&String::from_utf8(o.stdout).unwrap())["MD_EVENTS"]
            .parse::<u64>()
            .unwrap()
    };
    assert!(events(k) < events(j), "mdadm --examine: {k} is behind {j}");
    assert!(
        text.contains(&format!("; stale (events behind, left out): {k}")),
        "{text}"
    );

    // A config's `existing` names arrays from these superblocks: the plan
    // assembles the raid5 by its UUID and the raid0 by its md name (without
    // the host part) over the members found; a volume's name plans the
    // table LVM loaded for it in the guest (`dmsetup table`), over the array
    // beneath; a bad entry is an error naming it.
    let validate = |existing: Value| {
        let cfg = ShmFile::new(
            &unique("existing.json"),
            serde_json::json!({
                "existing": existing,
                "tests": [{"workload": "seq_read", "name": "r", "bs": "1M", "size": "1M"}]
            })
            .to_string()
            .as_bytes(),
        );
        run(&["validate", cfg.path()])
    };
    let o = validate(serde_json::json!([raid5, "stripe"]));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{plan}{}", stderr(&o));
    let short = &raid5.replace(':', "")[..8];
    for (name, members) in [
        (
            format!("md-{short}"),
            [2, 3, 4].map(|i| loops[i].dev.clone()).join(", "),
        ),
        ("stripe".to_string(), [5, 6].map(|i| loops[i].dev.clone()).join(", ")),
    ] {
        assert!(plan.contains(&format!("md:{name}")), "{name}: {plan}");
        assert!(plan.contains(&members), "{name} over {members}: {plan}");
    }
    assert!(!plan.contains("volume \""), "no volume unless named: {plan}");
    // The volumes on the raid5 and the raid0, by VG/LV: each array planned
    // beneath its volume, the volume's table LVM's, field by field (the
    // device beneath aside: the guest's md device, here the planned array).
    let o = validate(serde_json::json!(["vgfile/data", "vgr0/scratch"]));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{plan}{}", stderr(&o));
    let fields = |t: &str| -> Vec<String> {
        // Each `major:minor` or planned path becomes "DEV".
        t.split_whitespace()
            .map(|f| {
                if f.contains(':') {
                    "DEV".to_string()
                } else {
                    f.to_string()
                }
            })
            .collect()
    };
    for (lv, dm, array) in [
        ("vgfile/data", "vgfile-data", format!("md:md-{short}")),
        ("vgr0/scratch", "vgr0-scratch", "md:stripe".to_string()),
    ] {
        let want = view(&format!("table {dm}"));
        assert_eq!(want.len(), 1, "one segment in the guest: {want:?}");
        let line = plan
            .lines()
            .find(|l| l.contains(&format!("the existing LVM volume {lv}, read-only, table: ")))
            .unwrap_or_else(|| panic!("{lv}: {plan}"));
        let table = line.split("table: ").nth(1).unwrap();
        assert_eq!(
            fields(table),
            fields(&want[0]),
            "{lv}: ours {table:?}, LVM's {:?}",
            want[0]
        );
        assert!(table.contains(&array), "{lv} over {array}: {line}");
        assert!(plan.contains(&format!("volume {dm:?}")), "{plan}");
    }
    // The LUKS2 container on the raid1 "mirror" (post 000), named with its
    // key file: the raid1 planned beneath it, the container mapped where
    // cryptsetup mapped it in the guest (data offset, sector size), the VG
    // inside it seen through its key and its volume's table LVM's.
    let luks_of = |md: &str| {
        view(md)
            .iter()
            .find_map(|l| l.strip_prefix("luks ").map(str::to_string))
            .unwrap()
    };
    let (luks0, luks3) = (luks_of("md0"), luks_of("md3"));
    let key = ShmFile::new(&unique("md0.key"), b"fixture-key");
    let o = validate(serde_json::json!([{"luks": luks0, "key_file": key.path()}, "vg0/root"]));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{plan}{}", stderr(&o));
    let crypt = view("table cryptmd");
    let c: Vec<&str> = crypt[0].split_whitespace().collect();
    // 0 LEN crypt CIPHER KEY IV_OFFSET DEV OFFSET [N OPTIONS...]
    let sector = c.iter().find_map(|o| o.strip_prefix("sector_size:")).unwrap_or("512");
    let short = &luks0.replace('-', "")[..8];
    let want = format!(
        "container \"luks-{short}\": the existing LUKS2 container {luks0} on md:mirror, read-only: {} with a 512-bit \
         key from its key file (tried within 30 s), data from byte {}, sector {sector} B",
        c[3],
        c[7].parse::<u64>().unwrap() * 512
    );
    assert!(plan.contains(&want), "want {want:?} in {plan}");
    assert_eq!(c[5], "0", "iv offset 0: {crypt:?}");
    let root = view("table vg0-root");
    let line = plan
        .lines()
        .find(|l| l.contains("the existing LVM volume vg0/root, read-only, table: "))
        .unwrap_or_else(|| panic!("vg0/root: {plan}"));
    let table = line.split("table: ").nth(1).unwrap();
    assert_eq!(fields(table), fields(&root[0]), "ours {table:?}, LVM's {:?}", root[0]);
    assert!(table.contains(&format!("dm:luks-{short}")), "{line}");
    // With "all" beside it: every array that starts and every volume, the
    // one inside the container too.
    let o = validate(serde_json::json!(["all", {"luks": luks0, "key_file": key.path()}]));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{plan}{}", stderr(&o));
    for lv in ["vgfile/data", "vgr0/scratch", "vg0/root"] {
        assert!(
            plan.contains(&format!("the existing LVM volume {lv}, read-only")),
            "{lv}: {plan}"
        );
    }
    // LUKS1 on the raid1 (1.0) "old".
    let o = validate(serde_json::json!([{"luks": luks3, "key_file": key.path()}]));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{plan}{}", stderr(&o));
    assert!(
        plan.contains(&format!("the existing LUKS1 container {luks3} on md:old, read-only")),
        "{plan}"
    );
    // A wrong key, a missing key file, an unknown container: errors naming the entry.
    let wrong = ShmFile::new(&unique("wrong.key"), b"fixture-kez");
    for (entry, want) in [
        (
            serde_json::json!({"luks": luks0, "key_file": wrong.path()}),
            format!(
                "existing[0]: the LUKS container {luks0} on md:fixture:mirror: the key opens none of its 1 keyslot(s) in use"
            ),
        ),
        (
            serde_json::json!({"luks": luks0, "key_file": "/nonexistent/bootbench.key"}),
            "existing[0].key_file: /nonexistent/bootbench.key: No such file or directory".to_string(),
        ),
        (
            serde_json::json!({"luks": "nope", "key_file": key.path()}),
            "existing[0].luks: \"nope\" is no LUKS container on these disks; expected the UUID of one of: ".to_string(),
        ),
        (
            serde_json::json!({"luks": luks0}),
            "existing[0].key_file: missing; expected the path of a file".to_string(),
        ),
        (
            serde_json::json!({"luks": luks0, "key_file": key.path(), "passphrase": "x"}),
            "existing[0].passphrase: not a field of a LUKS entry".to_string(),
        ),
    ] {
        let o = validate(serde_json::json!([entry]));
        assert_eq!(o.status.code(), Some(2), "{entry}: {}", stderr(&o));
        assert!(stderr(&o).contains(&want), "{entry}: want {want:?}: {}", stderr(&o));
    }
    for (i, l) in loops.iter().enumerate() {
        assert_eq!(l.hash(), hashes[i], "{} changed by opening its containers", l.dev);
    }

    for (entry, want) in [
        (
            "vgfile/nope",
            "existing[0]: \"vgfile/nope\": the volume group vgfile has no volume \"nope\"; expected one of: data",
        ),
        (
            "vg0/root",
            // (Other tests' VGs may be listed too: the host's loop devices are shared.)
            "existing[0]: \"vg0/root\": no volume group \"vg0\" on these disks; expected one of: ",
        ),
        ("a/b/c", "existing[0]: \"a/b/c\" is not a volume's name; expected VG/LV"),
        (
            "nope",
            "existing[0]: \"nope\" is no md array on these disks; expected the name or UUID of one of:",
        ),
    ] {
        let o = validate(serde_json::json!([entry]));
        assert_eq!(o.status.code(), Some(2), "{entry}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{entry}: {}", stderr(&o));
        if entry == "vg0/root" {
            for vg in ["vgfile", "vgr0"] {
                assert!(stderr(&o).contains(vg), "{vg} listed: {}", stderr(&o));
            }
        }
    }

    // A raid5 member and a raid0 member gone.
    for (i, l) in loops.iter().enumerate() {
        assert_eq!(l.hash(), hashes[i], "{} changed", l.dev);
    }
    let (gone5, gone0) = (loops.remove(4), loops.remove(4));
    drop((gone5, gone0));
    let st = stacks();
    let a5 = array(&st, raid5);
    assert_eq!(a5["slots"][2], Value::Null, "{a5}");
    assert_eq!(
        (a5["state"].as_str(), a5["startable"].as_bool()),
        (Some("clean, degraded"), Some(true))
    );
    assert!(
        a5["lvm"]["vg"]["name"] == "vgfile",
        "the degraded raid5's start is still read: {a5}"
    );
    let a0 = array(&st, &arrays["md2"].0["MD_UUID"]);
    assert_eq!(
        (a0["state"].as_str(), a0["startable"].as_bool()),
        (Some("clean, too few members to start"), Some(false))
    );
    assert!(a0.get("lvm").is_none(), "{a0}");
    assert!(
        st["volume_groups"]
            .as_array()
            .unwrap()
            .iter()
            .all(|v| v["name"] != "vgr0"),
        "{st}"
    );
    for l in &loops {
        assert!(l.changed_at().is_none(), "{} changed", l.dev);
    }
}

/// A 4Kn device on a live system (a loop device with 4096-byte logical
/// blocks beside a 512-byte one): `list` shows each one's block sizes as the
/// kernel has them, in the text and the JSON; the quick profile's read tests
/// all run with direct I/O in requests, offsets and ranges aligned to 4096
/// (a misaligned O_DIRECT request on it fails with EINVAL, so `ok` proves
/// it), its writes skipped; a test of 512-byte requests there is refused
/// before anything runs, naming the field, the value and the block size.
#[test]
fn list_shows_block_sizes_and_a_4kn_device_gets_only_aligned_direct_io() {
    let lo4k = Loop::with_sector_size(vec![0u8; LOOP_BYTES], 4096);
    let lo512 = Loop::with_sector_size(vec![0u8; LOOP_BYTES], 512);
    let sysfs = |dev: &str, f: &str| -> u64 {
        let name = dev.strip_prefix("/dev/").unwrap();
        std::fs::read_to_string(format!("/sys/block/{name}/queue/{f}"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let o = run(&["list", "--all", "--json"]);
    assert_eq!(o.status.code(), Some(0), "stderr:\n{}", stderr(&o));
    let list: Value = serde_json::from_slice(&o.stdout).expect("list --json is JSON");
    let text = run(&["list", "--all"]);
    let text = String::from_utf8(text.stdout).unwrap();
    for (lo, logical) in [(&lo4k, 4096u64), (&lo512, 512)] {
        let physical = sysfs(&lo.dev, "physical_block_size");
        assert_eq!(
            sysfs(&lo.dev, "logical_block_size"),
            logical,
            "{}: the kernel's view",
            lo.dev
        );
        let entry = list
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["path"] == lo.dev.as_str())
            .unwrap_or_else(|| panic!("{} not in list --all --json: {list}", lo.dev));
        assert_eq!(
            (entry["logical_block_size"].as_u64(), entry["physical_block_size"].as_u64()),
            (Some(logical), Some(physical)),
            "{}: logical_block_size and physical_block_size in list --json, expected the kernel's {logical} and {physical}",
            lo.dev
        );
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{} ", lo.dev)))
            .unwrap_or_else(|| panic!("{} not in list --all:\n{text}", lo.dev));
        let want = format!("logical_block {logical} B physical_block {physical} B");
        assert!(
            line.contains(&want),
            "{}: expected {want:?} in the line {line:?}",
            lo.dev
        );
    }

    let cfg = config(&serde_json::json!({"profile": "quick", "defaults": {"runtime": "200ms"}}));
    let doc = doc_of(&run(&["run", "--config", cfg.path(), "--target", &lo4k.dev]));
    assert_eq!(doc["targets"][0]["logical_block_size"], 4096, "{}", doc["targets"][0]);
    let tests = tests_of(&doc, &lo4k.dev);
    assert_eq!(tests.len(), Workload::ALL.len(), "every workload of quick has a result");
    let mut direct_steps = 0;
    for t in &tests {
        let name = t["name"].as_str().unwrap();
        if workload_writes(t["workload"].as_str().unwrap()) {
            assert_eq!(t["status"]["state"], "skipped", "{name}: writes without a grant");
            continue;
        }
        assert_eq!(t["status"]["state"], "ok", "{name} on the 4Kn device: {}", t["status"]);
        for s in t["steps"].as_array().unwrap() {
            let (bs, start, end) = (
                s["bs"].as_u64().unwrap(),
                s["range_start"].as_u64().unwrap(),
                s["range_end"].as_u64().unwrap(),
            );
            if s["access"] == "direct" {
                direct_steps += 1;
                assert!(
                    bs >= 4096 && bs % 4096 == 0 && start % 4096 == 0 && end % 4096 == 0,
                    "{name} step {}: bs {bs}, range {start}..{end}: expected multiples of the 4096-byte logical block",
                    s["label"]
                );
            }
        }
    }
    assert!(
        direct_steps >= 10,
        "the quick profile's direct-I/O steps ran: {direct_steps}"
    );

    // 512-byte requests on a 4Kn device: refused with the reason, nothing run.
    let cfg = config(&serde_json::json!({"tests": [{"workload": "rand_read", "bs": "512", "runtime": "200ms"}]}));
    let o = run(&["run", "--config", cfg.path(), "--target", &lo4k.dev]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a refused config; stdout: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    let why = stderr(&o);
    assert!(
        why.contains("tests[0].bs") && why.contains("512") && why.contains("4096") && why.contains(&lo4k.dev),
        "the refusal names the field, the value, the block size and the device: {why}"
    );
}

/// `fill` on a real loop device: without a grant nothing is written (the
/// backing file is unchanged), the read test runs on the data there and
/// says so (`filled_bytes` 0); with one, exactly the test's range is
/// written once, every 512-byte block of it different and non-zero, the
/// rest of the device as it was (but the scratch label in its first
/// sector), and each pass is kept with the one reported.
#[test]
fn fill_writes_the_range_only_with_the_grant() {
    let test = serde_json::json!([{"workload": "seq_read", "bs": "64k", "offset": "1M", "length": "4M",
        "size": "1M", "fill": true, "passes": 2, "warmup": 1, "pause": "100ms"}]);
    let ro = Loop::new(LOOP_BYTES, &[]);
    let before = ro.hash();
    let cfg = config(&serde_json::json!({"tests": test, "targets": [ro.dev]}));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    let t = &doc["tests"][0];
    assert_eq!(t["status"]["state"], "ok", "{}", t["status"]);
    assert_eq!(t["steps"][0]["filled_bytes"], 0);
    assert_eq!(t["steps"][0]["passes"].as_array().unwrap().len(), 3);
    assert_eq!(ro.hash(), before, "a fill without a grant changed the device");

    let rw = Loop::zeroed(LOOP_BYTES);
    let cfg = config(&serde_json::json!({"tests": test, "targets": [rw.dev],
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [rw.dev]}}));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    let t = &doc["tests"][0];
    assert_eq!(t["status"]["state"], "ok", "{}", t["status"]);
    assert_eq!(t["steps"][0]["filled_bytes"], 4 << 20);
    assert_eq!(t["params"]["pause"], 100_000_000);
    let passes = t["steps"][0]["passes"].as_array().unwrap();
    let warm: Vec<bool> = passes.iter().map(|p| p["warmup"].as_bool().unwrap()).collect();
    assert_eq!(warm, [true, false, false]);
    let chosen = usize::try_from(t["steps"][0]["chosen_pass"].as_u64().unwrap()).unwrap();
    assert!(chosen >= 1);
    assert_eq!(passes[chosen]["bytes_per_sec"], t["steps"][0]["read"]["bytes_per_sec"]);
    let data = std::fs::read(&rw.file.0).unwrap();
    let mut seen = std::collections::HashSet::new();
    for b in data[1 << 20..5 << 20].chunks_exact(512) {
        assert!(b.iter().any(|&x| x != 0), "a block of the range left zero");
        assert!(seen.insert(b.to_vec()), "two blocks of the fill alike");
    }
    assert!(data[5 << 20..].iter().all(|&x| x == 0), "written past the range");
    assert!(
        data[64 << 10..1 << 20].iter().all(|&x| x == 0),
        "written before the range"
    );
}

#[test]
fn writes_change_only_the_permitted_target() {
    // A is blank (all zeros), as the safety check wants a disk it grants;
    // B holds data and is not named.
    let a = Loop::zeroed(LOOP_BYTES);
    let b = Loop::new(LOOP_BYTES, &[]);
    let (a0, b0) = (a.hash(), b.hash());
    let cfg = config(&serde_json::json!({
        "profile": "quick",
        "targets": [a.dev, {"path": b.dev}],
        "defaults": {"runtime": "200ms"},
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [a.dev]}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    assert_eq!(doc["targets"][0]["writable"], true);
    assert_eq!(doc["targets"][1]["writable"], false);
    let mut wrote = 0;
    for t in tests_of(&doc, &a.dev) {
        assert_eq!(t["status"]["state"], "ok", "{} on A: {}", t["name"], t["status"]);
        wrote += usize::from(workload_writes(t["workload"].as_str().unwrap()));
    }
    assert!(wrote >= 4, "every write workload ran on A");
    for t in tests_of(&doc, &b.dev) {
        let want = if workload_writes(t["workload"].as_str().unwrap()) {
            "skipped"
        } else {
            "ok"
        };
        assert_eq!(t["status"]["state"], want, "{} on B", t["name"]);
    }
    assert_ne!(a.hash(), a0, "the permitted target was written");
    assert_eq!(b.hash(), b0, "the other target is unchanged");
}

/// A loop device over part of a file (`losetup --offset --sizelimit`),
/// detached on drop.
struct LoopOver(String);

impl LoopOver {
    fn new(file: &str, offset: u64, size: Option<u64>, read_only: bool) -> LoopOver {
        let mut args = vec!["--direct-io=on".to_string(), "-f".into(), "--show".into()];
        args.extend(["--offset".into(), offset.to_string()]);
        if let Some(s) = size {
            args.extend(["--sizelimit".into(), s.to_string()]);
        }
        if read_only {
            args.push("-r".into());
        }
        args.push(file.into());
        let o = Command::new("losetup").args(&args).output().expect("losetup");
        assert!(o.status.success(), "losetup: {}", String::from_utf8_lossy(&o.stderr));
        LoopOver(String::from_utf8(o.stdout).unwrap().trim().to_string())
    }
}

impl Drop for LoopOver {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

/// A block device mounted at a fresh directory; unmounted (and the
/// directory removed) on drop.
struct Mounted(PathBuf);

impl Mounted {
    fn new(dev: &str) -> Mounted {
        let dir = common::shm_path("mnt");
        std::fs::create_dir(&dir).expect("mkdir");
        let st = Command::new("mount").arg(dev).arg(&dir).status().expect("mount");
        assert!(st.success(), "mount {dev}");
        Mounted(dir)
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Issue 46, 1: a mounted filesystem is never written through another
/// node of the same storage, `allow_overwrite_signatures` or not. An ext4
/// filesystem in the first 32 MiB of a 48 MiB file F is mounted through
/// loop device B (`--sizelimit 32M`). Granted with overwriting allowed: A,
/// a loop device over all of F, and F itself are refused, naming B and its
/// mount point; C, a loop device over F's last 16 MiB (no byte of B's), is
/// written; the filesystem's bytes are as they were, and it is whole after
/// (`e2fsck -fn`). With B unmounted but held open with O_EXCL by another
/// program, A is refused again, as claimed, and the filesystem's file is
/// still there.
#[test]
fn storage_in_use_is_never_written_through_another_node() {
    const FS: u64 = 32 << 20;
    let f = ShmFile::new("alias-fs.img", &vec![0u8; 48 << 20]);
    let b = LoopOver::new(f.path(), 0, Some(FS), false);
    // Inode tables and journal initialised now, not by a kernel thread
    // after the mount: nothing but this test writes the filesystem.
    let mk = Command::new("mkfs.ext4")
        .args(["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", &b.0])
        .status()
        .expect("mkfs.ext4");
    assert!(mk.success(), "mkfs.ext4 {}", b.0);
    let mnt = Mounted::new(&b.0);
    std::fs::write(mnt.0.join("kept"), b"the filesystem's own data").expect("write a file on it");
    let sync = Command::new("sync").status().expect("sync");
    assert!(sync.success());
    let fs_bytes = || std::fs::read(&f.0).unwrap()[..usize::try_from(FS).unwrap()].to_vec();
    let before = fs_bytes();
    let a = LoopOver::new(f.path(), 0, None, false);
    let c = LoopOver::new(f.path(), FS, None, false);
    let test = serde_json::json!([{"workload": "seq_write", "bs": "64k", "size": "1M"}]);
    let targets = serde_json::json!([a.0, f.path(), c.0]);
    let cfg = config(&serde_json::json!({
        "tests": test, "targets": targets,
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": targets, "allow_overwrite_signatures": true}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    let mount_point = mnt.0.to_str().unwrap();
    for (i, path) in [&a.0, &f.path().to_string()].into_iter().enumerate() {
        let t = &tests_of(&doc, path)[0];
        assert_eq!(t["status"]["state"], "skipped", "{path}: {}", t["status"]);
        let reason = t["status"]["reason"].as_str().unwrap();
        assert_eq!(
            reason,
            format!(
                "writes refused: {path} reaches the same storage as {}, which is mounted at {mount_point}; \
                 storage in use is never written, whatever node reaches it (allow_overwrite_signatures does not \
                 change that)",
                b.0
            )
        );
        assert_eq!(doc["targets"][i]["writable"], false);
        assert_eq!(doc["targets"][i]["write_refusal"].as_str(), Some(reason));
    }
    let t = &tests_of(&doc, &c.0)[0];
    assert_eq!(t["status"]["state"], "ok", "C shares no byte with B: {}", t["status"]);
    assert!(
        std::fs::read(&f.0).unwrap()[usize::try_from(FS).unwrap()..]
            .iter()
            .any(|&x| x != 0),
        "C was written"
    );
    let sync = Command::new("sync").status().expect("sync");
    assert!(sync.success());
    assert!(fs_bytes() == before, "not a byte of the mounted filesystem changed");
    drop(mnt);
    let fsck = Command::new("e2fsck").args(["-fn", &b.0]).output().expect("e2fsck");
    assert!(
        fsck.status.success(),
        "e2fsck -fn: {}",
        String::from_utf8_lossy(&fsck.stdout)
    );
    // B held by another program with O_EXCL, not mounted: A is refused as
    // claimed.
    let held = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&b.0)
        .expect("hold B exclusively");
    let cfg = config(&serde_json::json!({
        "tests": test, "targets": [a.0],
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [a.0], "allow_overwrite_signatures": true}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    let reason = doc["tests"][0]["status"]["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        reason.contains(&format!(
            "{} reaches the same storage as {}, which is claimed by an exclusive opener",
            a.0, b.0
        )),
        "{reason}"
    );
    drop(held);
    let again = Mounted::new(&b.0);
    assert_eq!(
        std::fs::read(again.0.join("kept")).expect("the file is there"),
        b"the filesystem's own data"
    );
}

/// Issue 46, 9: a device the kernel holds read-only (`losetup -r`) is a
/// refused grant, not a bad disk: its write test is skipped and its
/// burn-in ends `error`, both with the refusal; no unwritable block is
/// counted, the verdict is WARN (the burn-in did not run), not FAIL, and
/// `run` exits 0.
#[test]
fn a_read_only_device_is_a_refused_grant_not_a_failed_disk() {
    let f = ShmFile::new("ro.img", &vec![0u8; 4 << 20]);
    let r = LoopOver::new(f.path(), 0, None, true);
    let cfg = config(&serde_json::json!({
        "tests": [{"workload": "seq_write", "bs": "64k", "size": "1M"}], "targets": [r.0],
        "burn_in": {"patterns": ["0xaa"]},
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [r.0]}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    let want = format!(
        "writes refused: {} is read-only (the kernel's read-only flag is set: BLKROGET, the ro attribute): a \
         refused grant, not a disk error",
        r.0
    );
    assert_eq!(doc["tests"][0]["status"]["state"], "skipped");
    assert_eq!(doc["tests"][0]["status"]["reason"].as_str(), Some(want.as_str()));
    let t = &doc["targets"][0];
    assert_eq!(t["writable"], false);
    assert_eq!(t["write_refusal"].as_str(), Some(want.as_str()));
    assert_eq!(t["burn_in"]["end"], "error");
    assert_eq!(t["burn_in"]["error"].as_str(), Some(want.as_str()));
    assert_eq!(t["burn_in"]["unwritable_lbas"], serde_json::json!([]));
    assert_eq!(
        doc["acceptance"]["targets"][0]["verdict"], "warn",
        "{}",
        doc["acceptance"]
    );
    assert!(std::fs::read(&f.0).unwrap().iter().all(|&b| b == 0));
}

#[test]
fn signatures_refuse_writes_unless_overwriting_is_allowed() {
    let ext4 = Loop::new(LOOP_BYTES, &[(1080, &[0x53, 0xEF])]);
    let gpt = Loop::new(LOOP_BYTES, &[(510, &[0x55, 0xAA]), (512, b"EFI PART")]);
    for (lo, what) in [(&ext4, "ext2/3/4 filesystem"), (&gpt, "GPT partition table")] {
        let before = lo.hash();
        let test = serde_json::json!([{"workload": "seq_write", "bs": "64k", "size": "1M"}]);
        let cfg = config(&serde_json::json!({
            "tests": test, "targets": [lo.dev], "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [lo.dev]}
        }));
        let doc = doc_of(&run(&["run", "--config", cfg.path()]));
        let t = &doc["tests"][0];
        assert_eq!(t["status"]["state"], "skipped");
        let reason = t["status"]["reason"].as_str().unwrap();
        assert!(
            reason.contains(what) && reason.contains("allow_overwrite_signatures"),
            "{reason}"
        );
        assert_eq!(doc["targets"][0]["write_refusal"].as_str(), Some(reason));
        assert_eq!(lo.hash(), before);

        let cfg = config(&serde_json::json!({
            "tests": test, "targets": [lo.dev],
            "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [lo.dev], "allow_overwrite_signatures": true}
        }));
        let doc = doc_of(&run(&["run", "--config", cfg.path()]));
        assert_eq!(
            doc["tests"][0]["status"]["state"], "ok",
            "{}",
            doc["tests"][0]["status"]
        );
        assert_ne!(lo.hash(), before);
    }
}

/// No signature does not mean blank: a device named in "destructive" that
/// holds data (pseudo-random bytes, no signature) is refused with the
/// offset of the data, unless overwriting is allowed; an all-zero one is
/// granted and written.
#[test]
fn data_without_a_signature_refuses_writes_unless_overwriting_is_allowed() {
    let test = serde_json::json!([{"workload": "seq_write", "bs": "64k", "size": "1M"}]);
    let zero = Loop::zeroed(LOOP_BYTES);
    let before = zero.hash();
    let cfg = config(&serde_json::json!({
        "tests": test, "targets": [zero.dev], "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [zero.dev]}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    assert_eq!(doc["targets"][0]["writable"], true, "{}", doc["targets"][0]);
    assert_eq!(
        doc["tests"][0]["status"]["state"], "ok",
        "{}",
        doc["tests"][0]["status"]
    );
    assert_ne!(zero.hash(), before, "the all-zero device was written");

    let data = Loop::with_contents(random_bytes(LOOP_BYTES, 11));
    let before = data.hash();
    let cfg = config(&serde_json::json!({
        "tests": test, "targets": [data.dev], "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [data.dev]}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    let t = &doc["tests"][0];
    assert_eq!(t["status"]["state"], "skipped", "{}", t["status"]);
    let reason = t["status"]["reason"].as_str().unwrap();
    assert!(
        reason.contains(&data.dev)
            && reason.contains("holds data at offset")
            && reason.contains("allow_overwrite_signatures"),
        "{reason}"
    );
    assert_eq!(doc["targets"][0]["write_refusal"].as_str(), Some(reason));
    assert_eq!(data.hash(), before, "a device that holds data is not written");

    let cfg = config(&serde_json::json!({
        "tests": test, "targets": [data.dev],
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [data.dev], "allow_overwrite_signatures": true}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    assert_eq!(
        doc["tests"][0]["status"]["state"], "ok",
        "{}",
        doc["tests"][0]["status"]
    );
    assert_ne!(data.hash(), before, "with allow_overwrite_signatures it is written");
}

/// A disk bootbench wrote stays usable for the next run: the run gives it
/// bootbench's scratch label after its last write (the console says so),
/// and the next run counts it as blank though it holds this run's random
/// data; the same data without the label is refused. A run that only
/// reads labels nothing.
#[test]
fn a_disk_bootbench_wrote_is_labelled_and_granted_again() {
    let tests = serde_json::json!([{"workload": "rand_write", "bs": "4k", "size": "1M", "runtime": "200ms"}]);
    let lo = Loop::zeroed(LOOP_BYTES);
    let cfg = config(&serde_json::json!({
        "tests": tests, "targets": [lo.dev], "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [lo.dev]}
    }));
    let first = run(&["run", "--config", cfg.path()]);
    let doc = doc_of(&first);
    assert_eq!(
        doc["tests"][0]["status"]["state"], "ok",
        "{}",
        doc["tests"][0]["status"]
    );
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(stderr.contains("bootbench's scratch label written"), "{stderr}");
    let after_first = lo.hash();
    // Again: granted, and written.
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    assert_eq!(
        doc["tests"][0]["status"]["state"], "ok",
        "a labelled disk is granted again: {}",
        doc["tests"][0]["status"]
    );
    assert_ne!(lo.hash(), after_first, "written again");
    // The same kind of contents without the label: holds data.
    let mut unlabelled = std::fs::read(lo.file.path()).unwrap();
    unlabelled[..4096].copy_from_slice(&random_bytes(4096, 3));
    let data = Loop::with_contents(unlabelled);
    let cfg = config(&serde_json::json!({
        "tests": tests, "targets": [data.dev], "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [data.dev]}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    assert_eq!(
        doc["tests"][0]["status"]["state"], "skipped",
        "{}",
        doc["tests"][0]["status"]
    );
    // Reads only: no label.
    let zero = Loop::zeroed(LOOP_BYTES);
    let cfg = config(&serde_json::json!({
        "tests": [{"workload": "seq_read", "bs": "64k", "size": "1M"}],
        "targets": [zero.dev], "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [zero.dev]}
    }));
    let out = run(&["run", "--config", cfg.path()]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("scratch label"));
    assert!(
        std::fs::read(zero.file.path()).unwrap().iter().all(|&b| b == 0),
        "untouched"
    );
}

/// `self_test` on a loop device: it has no self-test commands (no SG_IO
/// ATA, no NVMe or SCSI self-test), so its self-test is recorded as
/// `not_supported` with the reason, the console says so, and the
/// benchmarks run as usual. A file target gets no self-test at all.
#[test]
fn a_loop_devices_self_test_is_not_supported_and_the_run_goes_on() {
    let lo = Loop::new(LOOP_BYTES, &[]);
    let before = lo.hash();
    let cfg = config(&serde_json::json!({
        "tests": [{"workload": "seq_read", "size": "1M"}],
        "targets": [lo.dev],
        "self_test": {"kind": "short", "max_wait": "1m"}
    }));
    let o = run(&["run", "--config", cfg.path()]);
    let doc = doc_of(&o);
    let st = &doc["targets"][0]["self_test"];
    assert_eq!(st["kind"], "short", "{st}");
    assert_eq!(st["outcome"], "not_supported", "{st}");
    assert_eq!(
        (&st["passed"], &st["source"]),
        (&Value::Null, &Value::from("none")),
        "{st}"
    );
    assert!(
        st["error"]
            .as_str()
            .unwrap()
            .starts_with("no self-test commands for transport"),
        "{st}"
    );
    assert_eq!(
        doc["tests"][0]["status"]["state"], "ok",
        "{}",
        doc["tests"][0]["status"]
    );
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{}: short self-test: not supported", lo.dev)),
        "{err}"
    );
    assert!(
        err.contains("the short self-test: at most 180 s"),
        "the run's bound counts the wait: {err}"
    );
    assert_eq!(lo.hash(), before);
}

#[test]
fn wrong_phrase_skips_writes_with_the_reason() {
    let lo = Loop::new(LOOP_BYTES, &[]);
    let before = lo.hash();
    let cfg = config(&serde_json::json!({
        "tests": [{"workload": "rand_write", "runtime": "100ms"}, {"workload": "rand_read", "runtime": "100ms"}],
        "targets": [lo.dev],
        "destructive": {"confirm": "yes please", "targets": [lo.dev]}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    assert_eq!(doc["tests"][0]["status"]["state"], "skipped");
    let reason = doc["tests"][0]["status"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("confirm") && reason.contains("yes please") && reason.contains(PHRASE),
        "{reason}"
    );
    assert_eq!(doc["tests"][1]["status"]["state"], "ok");
    assert_eq!(lo.hash(), before);
}

#[test]
fn bad_input_exits_2_with_a_message_and_writes_nothing() {
    let lo = Loop::new(LOOP_BYTES, &[]);
    let before = lo.hash();
    let dev = lo.dev.as_str();
    let destructive = serde_json::json!({"confirm": PHRASE, "targets": [dev]});
    let with =
        |tests: Value| serde_json::json!({"tests": tests, "targets": [dev], "destructive": destructive}).to_string();
    let missing = format!("/dev/shm/{}", unique("missing"));
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "malformed JSON",
            format!("{{\"tests\": [{{\"workload\": \"seq_write\"}}], \"targets\": [\"{dev}\"]"),
            vec!["line", "column"],
        ),
        (
            "unknown key",
            with(serde_json::json!([{"workload": "seq_write", "bsize": "4k"}])),
            vec!["bsize", "line"],
        ),
        (
            "bad size",
            with(serde_json::json!([{"workload": "seq_write", "bs": "4q"}])),
            vec!["tests[0].bs", "\"4q\"", "4k"],
        ),
        (
            "unaligned bs",
            with(serde_json::json!([{"workload": "seq_write", "bs": 1000}])),
            vec!["tests[0].bs", "1000", "512"],
        ),
        (
            "missing target",
            serde_json::json!({"tests": [{"workload": "seq_write"}], "targets": [missing], "destructive": destructive})
                .to_string(),
            vec!["targets[0]", &missing],
        ),
        (
            "too small",
            with(serde_json::json!([{"workload": "seq_write", "size": "1G"}])),
            vec!["tests[0].size", "1073741824", "67108864"],
        ),
        (
            "unknown profile",
            serde_json::json!({"profile": "fast", "targets": [dev], "destructive": destructive}).to_string(),
            vec!["profile", "\"fast\"", "quick"],
        ),
        (
            "unknown workload",
            with(serde_json::json!([{"workload": "rand_reed"}])),
            vec!["tests[0].workload", "rand_reed", "rand_read"],
        ),
        (
            "bad duration",
            with(serde_json::json!([{"workload": "seq_write", "runtime": "5q"}])),
            vec!["tests[0].runtime", "5q"],
        ),
    ];
    for (what, text, wants) in cases {
        let cfg = ShmFile::new("bad.json", text.as_bytes());
        for cmd in ["run", "validate"] {
            let args: Vec<&str> = if cmd == "run" {
                vec!["run", "--config", cfg.path()]
            } else {
                vec!["validate", cfg.path()]
            };
            let o = run(&args);
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{what} ({cmd}): {e}");
            assert!(o.stdout.is_empty(), "{what} ({cmd}): stdout must be empty");
            for w in &wants {
                assert!(e.contains(w), "{what} ({cmd}): {w:?} not in: {e}");
            }
            assert_eq!(e.trim().lines().count(), 1, "{what} ({cmd}): one line: {e}");
        }
    }
    // --target naming a missing path.
    let o = run(&["run", "--profile", "quick", "--target", &missing]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--target") && stderr(&o).contains(&missing),
        "{}",
        stderr(&o)
    );
    assert_eq!(lo.hash(), before, "bad input wrote to the device");
}

#[test]
fn validate_prints_the_plan() {
    let a = Loop::zeroed(LOOP_BYTES);
    let b = Loop::new(LOOP_BYTES, &[]);
    let cfg = config(&serde_json::json!({
        "targets": [a.dev, b.dev],
        "tests": [{"workload": "rand_read", "name": "rr"}, {"workload": "seq_write", "bs": "1M"}],
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [{"path": a.dev}]}
    }));
    let o = run(&["validate", cfg.path()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let line = |dev: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("target {dev}:")))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line(&a.dev).contains("writable: yes"), "{text}");
    assert!(
        line(&b.dev).contains("writable: no") && line(&b.dev).contains("does not name"),
        "{text}"
    );
    assert!(line(&a.dev).contains("67108864 B"), "{text}");
    assert!(text.contains("rr (rand_read): 1 step(s)"), "{text}");
    assert!(text.contains("(seq_write): skipped: writes refused"), "{text}");
    assert!(text.contains("cpu_dma_latency: held at 0 us"), "{text}");
    assert!(
        !text.lines().any(|l| l.starts_with("surface scan:")),
        "no scan asked: {text}"
    );
    // --target replaces the config's targets.
    let o = run(&["validate", cfg.path(), "--target", &b.dev]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains(&format!("target {}:", b.dev)) && !text.contains(&format!("target {}:", a.dev)),
        "{text}"
    );
}

#[test]
fn readme_config_example_is_valid() {
    let readme = std::fs::read_to_string(Path::new(MANIFEST).join("../docs/writing-a-config.md")).unwrap();
    let start = readme.find("```json\n").expect("the guide has a JSON example") + "```json\n".len();
    let len = readme[start..].find("```").unwrap();
    let example = &readme[start..start + len];
    let json: Value = serde_json::from_str(example).expect("the example is JSON");
    assert_valid("bootbench.config-1.schema.json", &json);
    // The real parser accepts it too (targets replaced by a simulated disk).
    let cfg = ShmFile::new("readme.json", example.as_bytes());
    let o = run(&["validate", cfg.path(), "--simulate", "--target", "sim:hdd:1G"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("rr_qd32 (rand_read)"));
}

/// A filesystem mounted in /dev/shm for a test (root needed): unmounted,
/// and its directory and image removed, on drop.
struct Mount {
    dir: PathBuf,
    image: Option<PathBuf>,
}

impl Mount {
    fn at(args: &[&str], source: &std::path::Path, image: Option<PathBuf>) -> Mount {
        let dir = common::shm_path("mnt");
        std::fs::create_dir(&dir).expect("mkdir");
        let st = Command::new("mount")
            .args(args)
            .arg(source)
            .arg(&dir)
            .status()
            .expect("mount (root needed)");
        assert!(st.success(), "mount {args:?} {} at {}", source.display(), dir.display());
        Mount { dir, image }
    }

    /// A tmpfs of `size` bytes.
    fn tmpfs(size: u64) -> Mount {
        Mount::at(
            &["-t", "tmpfs", "-o", &format!("size={size}")],
            std::path::Path::new("tmpfs"),
            None,
        )
    }

    /// A 16 MiB ext2 with 128-byte inodes (no birth time; a freed inode
    /// number goes to the next file made), over a loop device.
    fn ext2() -> Mount {
        let img = common::shm_path("ext2.img");
        std::fs::write(&img, vec![0u8; 16 << 20]).unwrap();
        let mkfs = Command::new("mkfs.ext2")
            .args(["-q", "-F", "-I", "128"])
            .arg(&img)
            .output()
            .expect("mkfs.ext2");
        assert!(mkfs.status.success(), "{}", String::from_utf8_lossy(&mkfs.stderr));
        Mount::at(&["-o", "loop", "-t", "ext2"], &img.clone(), Some(img))
    }

    fn remount_ro(&self) {
        let st = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&self.dir)
            .status()
            .unwrap();
        assert!(st.success(), "remount read-only");
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
        let _ = std::fs::remove_dir(&self.dir);
        if let Some(img) = &self.image {
            let _ = std::fs::remove_file(img);
        }
    }
}

/// `--out` where the document cannot be written is bad input found before
/// the run (exit 2, naming `--out`), and the run that would have written a
/// granted disk does not start: an empty name, a directory of /proc, a
/// read-only filesystem, a full one. Where it can, the run goes on and the
/// file holds exactly the document.
#[test]
fn an_out_that_cannot_be_written_is_refused_before_the_run() {
    let lo = Loop::zeroed(LOOP_BYTES);
    let cfg = config(&serde_json::json!({
        "targets": [lo.dev],
        "tests": [{"workload": "rand_write", "bs": "4k", "runtime": "200ms"}],
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [lo.dev]}
    }));
    let ro = Mount::tmpfs(1 << 20);
    ro.remount_ro();
    let full = Mount::tmpfs(64 << 10);
    let _ = std::fs::write(full.dir.join("filler"), vec![7u8; 1 << 20]);
    let cases = [
        (String::new(), "names no file"),
        ("/proc/bootbench-results.json".to_string(), "--out: create"),
        (
            ro.dir.join("r.json").to_str().unwrap().to_string(),
            "Read-only file system",
        ),
        (
            full.dir.join("r.json").to_str().unwrap().to_string(),
            "No space left on device",
        ),
    ];
    for (out, why) in &cases {
        let o = run(&["run", "--config", cfg.path(), "--out", out]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "--out {out:?}: {err}");
        assert!(err.contains("--out") && err.contains(why), "--out {out:?}: {err}");
        assert!(!err.contains("starting"), "--out {out:?}: nothing ran: {err}");
        assert!(o.stdout.is_empty());
        assert_eq!(lo.changed_at(), None, "--out {out:?}: the granted disk is untouched");
    }
    assert_eq!(
        common::names_in(&full.dir),
        vec!["filler"],
        "nothing left on the full filesystem"
    );
    let ok = std::env::temp_dir().join(unique("out-ok.json"));
    let o = run(&["run", "--config", cfg.path(), "--out", ok.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&std::fs::read(&ok).expect("written")).expect("exactly one document");
    std::fs::remove_file(&ok).ok();
    assert_eq!(doc["tests"][0]["status"]["state"], "ok");
}

/// Run `bootbench-init ARGS`, do `act(pid)` once a stderr line satisfies
/// `ready`, and wait: its exit status and all it said.
fn act_when(args: &[&str], ready: impl Fn(&str) -> bool, act: impl FnOnce(i32)) -> (std::process::ExitStatus, String) {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bootbench-init");
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let mut line = String::new();
    while err.read_line(&mut line).unwrap() > 0 {
        seen.push_str(&line);
        if ready(&line) {
            break;
        }
        line.clear();
    }
    act(i32::try_from(child.id()).unwrap());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    seen.push_str(&rest);
    (child.wait().unwrap(), seen)
}

/// [`act_when`] sending `signal`.
fn signal_when(args: &[&str], signal: i32, ready: impl Fn(&str) -> bool) -> (std::process::ExitStatus, String) {
    act_when(args, ready, |pid| {
        // SAFETY: kill(2) on the child we spawned and have not waited for.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    })
}

/// End to end: a disk and a granted file on ext2 with
/// 128-byte inodes (no birth time; a freed inode number goes to the next
/// file). During the disk's read test the file is deleted and another made
/// at its path, which on the old code got its inode number and was
/// overwritten by the write test. Held open since the plan, the granted
/// file keeps its inode: the write test on the path is refused and the
/// newcomer untouched.
#[test]
fn a_granted_file_replaced_during_the_run_is_not_written() {
    let mnt = Mount::ext2();
    let file = mnt.dir.join("target.img");
    std::fs::write(&file, vec![0u8; 4 << 20]).unwrap();
    let file = file.to_str().unwrap().to_string();
    let disk = Loop::new(LOOP_BYTES, &[]);
    let cfg = config(&serde_json::json!({
        "targets": [disk.dev, file],
        "tests": [
            {"workload": "rand_read", "name": "long", "runtime": "3s"},
            {"workload": "rand_write", "name": "later", "bs": "4k", "runtime": "200ms"}
        ],
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [file]}
    }));
    let out = std::env::temp_dir().join(unique("replaced-file.json"));
    let (status, seen) = act_when(
        &["run", "--config", cfg.path(), "--out", out.to_str().unwrap()],
        |line| line.contains(&format!("long on {}", disk.dev)) && line.contains(": main "),
        |_| {
            std::fs::remove_file(&file).unwrap();
            std::fs::write(&file, b"precious").unwrap();
        },
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("results written")).unwrap();
    std::fs::remove_file(&out).ok();
    assert_eq!(
        std::fs::read(&file).unwrap(),
        b"precious",
        "the newcomer is untouched: {seen}"
    );
    let later = tests_of(&doc, &file)
        .into_iter()
        .find(|t| t["name"] == "later")
        .unwrap();
    assert_ne!(later["status"]["state"], "ok", "{seen}");
    assert!(seen.contains("removed since the plan opened it"), "{seen}");
    assert_eq!(status.code(), Some(1), "the file target failed: {seen}");
}

/// SIGINT during a run: the running test stops after its requests in
/// flight and keeps what it measured (`interrupted`), the next test is
/// skipped, the results are written anyway, and the exit status is 130.
#[test]
fn sigint_stops_the_run_and_still_writes_the_results() {
    let lo = Loop::new(LOOP_BYTES, &[]);
    let cfg = config(&serde_json::json!({
        "targets": [lo.dev],
        "tests": [
            {"workload": "rand_read", "name": "long", "runtime": "60s"},
            {"workload": "seq_read", "name": "after", "runtime": "60s"}
        ]
    }));
    let out = std::env::temp_dir().join(unique("sigint.json"));
    // Once the first test has run a second (its first progress line).
    let (status, seen) = signal_when(
        &["run", "--config", cfg.path(), "--out", out.to_str().unwrap()],
        libc::SIGINT,
        |line| line.contains("long on") && line.contains(": main "),
    );
    assert_eq!(status.code(), Some(130), "{seen}");
    assert!(seen.contains("stopping: the running test ends"), "{seen}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("results written")).unwrap();
    std::fs::remove_file(&out).ok();
    assert_valid("bootbench.result-1.schema.json", &doc);
    assert_eq!(doc["run"]["status"], "interrupted");
    let tests = tests_of(&doc, &lo.dev);
    assert_eq!(tests[0]["status"]["state"], "interrupted", "{}", tests[0]["status"]);
    let ran = tests[0]["steps"][0]["runtime_ns"].as_u64().unwrap();
    assert!(ran < 60_000_000_000, "the 60 s test was cut short: {ran} ns");
    assert!(
        tests[0]["steps"][0]["read"]["ios"].as_u64().unwrap() > 0,
        "what ran is kept"
    );
    assert_eq!(tests[1]["status"]["state"], "skipped");
    assert!(
        tests[1]["status"]["reason"].as_str().unwrap().contains("interrupted"),
        "{}",
        tests[1]["status"]
    );
}

/// However the run ends, `--out` leaves nothing behind but the complete
/// document: killed mid-run (a second SIGINT, which exits at once; SIGKILL)
/// its directory holds nothing at all, where the old code left the
/// reserved `.NAME.tmp-PID` (1 MiB and more) beside it; stopped by one
/// SIGINT, only the document.
#[test]
fn an_out_file_leaves_nothing_behind_after_any_signal() {
    let lo = Loop::new(LOOP_BYTES, &[]);
    let cfg = config(&serde_json::json!({
        "targets": [lo.dev],
        "tests": [{"workload": "rand_read", "name": "long", "runtime": "60s"}]
    }));
    let names = |dir: &std::path::Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    // A second signal must reach the run before the first has ended it: the
    // child is stopped while both are sent (two different signals, as two
    // of one kind would merge while pending) and continued to take them.
    let second: &[i32] = &[libc::SIGSTOP, libc::SIGINT, libc::SIGTERM, libc::SIGCONT];
    for (signals, completes) in [
        (second, false),
        (&[libc::SIGKILL][..], false),
        (&[libc::SIGINT][..], true),
    ] {
        let dir = std::env::temp_dir().join(unique("out-dir"));
        std::fs::create_dir(&dir).unwrap();
        let out = dir.join("r.json");
        let (status, seen) = act_when(
            &["run", "--config", cfg.path(), "--out", out.to_str().unwrap()],
            |line| line.contains("long on") && line.contains(": main "),
            |pid| {
                for &sig in signals {
                    // SAFETY: kill(2) on the child we spawned and have not waited for.
                    assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
                }
            },
        );
        let left = names(&dir);
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(
            status.code(),
            if signals == [libc::SIGKILL] { None } else { Some(130) },
            "{seen}"
        );
        if completes {
            assert_eq!(left, vec!["r.json"], "the document only: {seen}");
        } else {
            assert!(!seen.contains("throughput in MB/s"), "the run did not complete: {seen}");
            if signals == second {
                assert!(seen.contains("second signal: exiting now"), "{seen}");
            }
            assert!(left.is_empty(), "signals {signals:?} left {left:?}: {seen}");
        }
    }
}

/// Interrupted before any write, a granted disk is left as it was: no
/// scratch label on it, though it was claimed for the write test that
/// never ran. Both ways a disk is granted: one holding data (a GPT disk's
/// first sectors here) with overwriting allowed, and a blank one without.
/// A second disk of the same run, whose tests never started, is left
/// untouched too.
#[test]
fn an_interrupt_before_any_write_leaves_granted_disks_untouched() {
    let mut gpt = random_bytes(LOOP_BYTES, 11);
    gpt[510..512].copy_from_slice(&[0x55, 0xAA]);
    gpt[512..520].copy_from_slice(b"EFI PART");
    for (data, overwrite) in [(gpt, true), (vec![0u8; LOOP_BYTES], false)] {
        let (a, b) = (Loop::with_contents(data), Loop::zeroed(LOOP_BYTES));
        let (before_a, before_b) = (a.hash(), b.hash());
        let cfg = config(&serde_json::json!({
            "targets": [a.dev, b.dev],
            "tests": [
                {"workload": "rand_read", "name": "long", "runtime": "60s"},
                {"workload": "rand_write", "name": "later", "runtime": "1s"}
            ],
            "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [a.dev, b.dev], "allow_overwrite_signatures": overwrite}
        }));
        let out = std::env::temp_dir().join(unique("interrupt-before-write.json"));
        let (status, seen) = signal_when(
            &["run", "--config", cfg.path(), "--out", out.to_str().unwrap()],
            libc::SIGINT,
            |line| line.contains("long on") && line.contains(": main "),
        );
        std::fs::remove_file(&out).ok();
        assert_eq!(status.code(), Some(130), "{seen}");
        assert!(seen.contains(&format!("{} may be written", a.dev)), "claimed: {seen}");
        assert!(!seen.contains("scratch label written"), "overwrite {overwrite}: {seen}");
        assert_eq!(
            a.hash(),
            before_a,
            "overwrite {overwrite}: the interrupted disk is untouched"
        );
        assert_eq!(
            b.hash(),
            before_b,
            "overwrite {overwrite}: the disk never reached is untouched"
        );
    }
}

/// The countdown before a run that may write: the console names the granted
/// disk (not the other one) and counts down; SIGINT during it ends the run
/// before its first step: every test is not run, both disks are unchanged,
/// and the document says so.
#[test]
fn an_interrupt_during_the_countdown_writes_nothing() {
    let (a, b) = (Loop::zeroed(LOOP_BYTES), Loop::zeroed(LOOP_BYTES));
    let (before_a, before_b) = (a.hash(), b.hash());
    let cfg = config(&serde_json::json!({
        "targets": [a.dev, b.dev],
        "tests": [{"workload": "seq_write", "size": "1M"}, {"workload": "seq_read", "size": "1M"}],
        "destructive": {"confirm": PHRASE, "targets": [a.dev], "countdown": "30s"}
    }));
    let out = std::env::temp_dir().join(unique("countdown.json"));
    let (status, seen) = signal_when(
        &["run", "--config", cfg.path(), "--out", out.to_str().unwrap()],
        libc::SIGINT,
        |line| line.contains("countdown: 28 s"),
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).expect("the document")).unwrap();
    std::fs::remove_file(&out).ok();
    assert_eq!(status.code(), Some(130), "{seen}");
    let warn = seen
        .lines()
        .find(|l| l.contains("WRITES AHEAD"))
        .unwrap_or_else(|| panic!("{seen}"));
    assert!(
        warn.contains(&format!("{} (serial", a.dev)) && !warn.contains(&b.dev) && warn.contains("it begins in 30 s"),
        "{warn}"
    );
    assert!(seen.contains("countdown: 29 s"), "{seen}");
    assert!(seen.contains("countdown interrupted: the run ends before its first step; nothing was written"));
    for t in doc["tests"].as_array().unwrap() {
        assert_eq!(
            (t["status"]["state"].as_str(), t["status"]["reason"].as_str()),
            (
                Some("skipped"),
                Some("not run: the run was interrupted (SIGINT or SIGTERM)")
            ),
            "{t}"
        );
    }
    assert_eq!((a.hash(), b.hash()), (before_a, before_b), "nothing written");
}

/// The workloads of several steps are analysed from a real run: on two
/// loop devices with `all_at_once`, `zones`, `iops_sweep` and `commit`
/// each get an all-at-once line whose figures are the summaries'
/// headlines (zones: the mean over its zones; iops_sweep: its highest
/// IOPS; commit: its commit-size step), together against the sum of each
/// disk alone.
#[test]
fn multi_step_workloads_get_analysis_lines_from_a_real_run() {
    let (a, b) = (Loop::zeroed(LOOP_BYTES), Loop::zeroed(LOOP_BYTES));
    let cfg = config(&serde_json::json!({
        "targets": [a.dev, b.dev],
        "tests": [
            {"workload": "zones", "name": "z", "zone_bytes": "2M", "points": 4},
            {"workload": "iops_sweep", "name": "i", "iodepth": 4, "runtime": "200ms"},
            {"workload": "commit", "name": "c", "bs": "16k", "size": "512k", "flush_every": 4}
        ],
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [{"path": a.dev}, {"path": b.dev}]},
        "all_at_once": true
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    let headline = |t: &Value, metric: &str| t["summary"][metric].as_f64().expect(metric);
    for (test, workload, metric) in [
        ("z", "zones", "read_bytes_per_sec"),
        ("i", "iops_sweep", "read_iops"),
        ("c", "commit", "write_bytes_per_sec"),
    ] {
        let alone: f64 = [&a.dev, &b.dev]
            .iter()
            .map(|dev| {
                let t = tests_of(&doc, dev).into_iter().find(|t| t["name"] == test).expect(test);
                assert_eq!(t["status"]["state"], "ok", "{test} on {dev}: {}", t["status"]);
                let per_step: Vec<(&str, f64)> = t["summary"]["per_step"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| (f["label"].as_str().unwrap(), f["value"].as_f64().unwrap()))
                    .collect();
                let surface: Vec<f64> = per_step
                    .iter()
                    .filter(|f| f.0.starts_with("surface_"))
                    .map(|f| f.1)
                    .collect();
                let want = match workload {
                    "zones" => {
                        assert_eq!(surface.len(), 4, "{test}: four surface points");
                        surface.iter().sum::<f64>() / 4.0
                    }
                    "iops_sweep" => per_step.iter().map(|f| f.1).fold(0.0, f64::max),
                    _ => {
                        assert!(per_step[0].0.starts_with("flush_every_") && per_step[0].0 != "flush_every_all");
                        per_step[0].1
                    }
                };
                let got = headline(t, metric);
                assert!((got - want).abs() <= want * 1e-9, "{test} on {dev}: {got} vs {want}");
                got
            })
            .sum();
        let line = doc["analysis"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["kind"] == "all_at_once" && l["test"] == test && l["metric"] == metric)
            .unwrap_or_else(|| panic!("no all_at_once line for {test}: {}", doc["analysis"]));
        assert_eq!(line["workload"], workload);
        let expected = line["expected"].as_f64().unwrap();
        assert!(
            (expected - alone).abs() <= alone * 1e-9,
            "{test}: {expected} vs {alone}"
        );
        let run = doc["all_at_once"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["test"] == test)
            .expect("the all-at-once run");
        let together: f64 = run["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| headline(r, metric))
            .sum();
        let measured = line["measured"].as_f64().unwrap();
        assert!(
            (measured - together).abs() <= together * 1e-9,
            "{test}: {measured} vs {together}"
        );
    }
}

// ---------------------------------------------------------------- acceptance

/// A declared floor on a loop device: one the device cannot reach (1 TB/s)
/// fails it, and the run exits with the documented status 3, the document
/// (valid, on stdout) carrying the check with the figure, the floor and
/// where it came from, and stderr ending with the verdict block; the same
/// run with only a floor any working device reaches (1 IOPS) passes with
/// exit 0. Neither writes the device.
#[test]
fn a_floor_the_disk_misses_fails_it_with_exit_3_and_the_verdict_block() {
    let lo = Loop::new(LOOP_BYTES, &[]);
    let before = lo.hash();
    let tests = serde_json::json!([{"workload": "seq_read", "name": "seq", "bs": "1M", "size": "8M"}]);
    let floor = |limit: Value| {
        config(&serde_json::json!({
            "tests": tests, "targets": [lo.dev],
            "acceptance": {"limits": [limit]}
        }))
    };
    let fails = floor(serde_json::json!({"test": "seq", "min_read_bytes_per_sec": "1000GB/s"}));
    let o = run(&["run", "--config", fails.path()]);
    assert_eq!(o.status.code(), Some(3), "stderr:\n{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("the document on stdout");
    assert_valid("bootbench.result-1.schema.json", &doc);
    assert_eq!(doc["run"]["status"], "ok");
    let a = &doc["acceptance"];
    assert_eq!(
        (a["verdict"].as_str(), a["rules"].as_str()),
        (Some("fail"), Some("config"))
    );
    let check = &a["targets"][0]["checks"][0];
    assert_eq!(check["rule"], "limit");
    assert_eq!(check["verdict"], "fail");
    assert_eq!(check["figure"], "read_bytes_per_sec");
    assert_eq!(check["limit"], 1e12);
    assert_eq!(check["value"], doc["tests"][0]["summary"]["read_bytes_per_sec"]);
    assert_eq!(check["source"], "acceptance.limits[0]");
    let err = stderr(&o);
    let block: Vec<&str> = err
        .lines()
        .skip_while(|l| !l.starts_with("== acceptance verdict"))
        .collect();
    assert!(block[0].starts_with("== acceptance verdict (rules: config) ="), "{err}");
    assert!(
        block[2].starts_with(&format!("{} -     FAIL    seq read ", lo.dev)),
        "{err}"
    );
    assert!(block[2].ends_with(" MB/s < 1000000.0 MB/s"), "{err}");
    assert_eq!(block[3], "run: FAIL (1 of 1 targets failed, 0 warned)");
    assert_eq!(block.len(), 4, "the block ends the output: {err}");
    assert!(block.iter().all(|l| l.chars().count() <= 79), "{err}");

    let passes = floor(serde_json::json!({"workload": "seq_read", "min_read_iops": 1}));
    let doc = doc_of(&run(&["run", "--config", passes.path()]));
    assert_eq!(doc["acceptance"]["verdict"], "pass");
    assert_eq!(doc["acceptance"]["targets"][0]["checks"][0]["verdict"], "pass");
    assert_eq!(lo.hash(), before, "an acceptance run that only read changed the device");
}

/// The baseline `bootbench-report baseline` wrote from three simulated runs
/// at 1, 2 and 3 times the simulator's figures (report/tests/acceptance.rs
/// checks it is that command's output): each median twice the simulator's.
/// A simulated run held to it is 50% below every median: with the default
/// 10% each disk fails on the baseline rule, exit 3, every check naming the
/// file; at 60% every baseline check holds and the run passes.
#[test]
fn a_baseline_from_bootbench_report_fails_a_disk_below_its_models_median() {
    let file = Path::new(MANIFEST).join("../report/tests/fixtures/golden/baseline-simulated.json");
    let file = file.to_str().unwrap();
    let cfg = |below: u32| {
        config(&serde_json::json!({
            "profile": "quick",
            "acceptance": {"baseline": {"file": file, "below_pct": below}}
        }))
    };
    let o = run(&["run", "--simulate", "--config", cfg(10).path()]);
    assert_eq!(o.status.code(), Some(3), "stderr:\n{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("the document on stdout");
    assert_valid("bootbench.result-1.schema.json", &doc);
    let targets = doc["acceptance"]["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 2);
    for t in targets {
        assert_eq!(t["verdict"], "fail", "{t}");
        let baseline: Vec<&Value> = t["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["rule"] == "baseline")
            .collect();
        assert!(baseline.len() >= 5, "{t}");
        for c in baseline {
            assert_eq!(c["verdict"], "fail", "{c}");
            assert!(c["source"].as_str().unwrap().contains(file), "{c}");
            let (v, limit) = (c["value"].as_f64().unwrap(), c["limit"].as_f64().unwrap());
            // The floor is 90% of a median twice the figure.
            assert!((limit - v * 1.8).abs() <= limit * 1e-6, "{c}");
            assert!(c["message"].as_str().unwrap().contains("(50.0% below;"), "{c}");
        }
    }
    let o = run(&["run", "--simulate", "--config", cfg(60).path()]);
    let doc = doc_of(&o);
    assert_eq!(doc["acceptance"]["verdict"], "pass", "{}", doc["acceptance"]);
    let checks = doc["acceptance"]["targets"][0]["checks"].as_array().unwrap();
    assert!(checks.iter().any(|c| c["rule"] == "baseline" && c["verdict"] == "pass"));
}

/// A nonsense baseline (a negative median; a count of 0; min above max) is
/// bad input, checked as the config is: exit 2, naming the config's field,
/// the file, the baseline's field, its value and what is expected.
#[test]
fn a_nonsense_baseline_is_bad_input_naming_its_field() {
    let golden = Path::new(MANIFEST).join("../report/tests/fixtures/golden/baseline-simulated.json");
    let good: Value = serde_json::from_str(&std::fs::read_to_string(golden).unwrap()).unwrap();
    for (field, value, says) in [
        (
            "median",
            serde_json::json!(-5e8),
            "figures[0].median: -5e8 is out of range; expected a figure in",
        ),
        (
            "count",
            serde_json::json!(0),
            "figures[0].count: 0; expected the number of disk runs",
        ),
        ("min", serde_json::json!(1e14), "figures[0]: min 1e14, median "),
    ] {
        let mut b = good.clone();
        b["figures"][0][field] = value;
        let file = ShmFile::new("nonsense-baseline.json", b.to_string().as_bytes());
        let cfg = config(&serde_json::json!({
            "profile": "quick",
            "acceptance": {"baseline": {"file": file.path()}}
        }));
        let o = run(&["validate", cfg.path(), "--simulate"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{field}: {err}");
        let want = format!("acceptance.baseline.file: {:?}: {says}", file.path());
        assert!(err.contains(&want), "{err}\nwant {want}");
    }
}

/// Each request a [`recorder`] took: its method, target and body.
type Recorded = std::sync::Arc<std::sync::Mutex<Vec<(String, String, Vec<u8>)>>>;

/// A stand-in HTTP server on the loopback for the live command's uploads:
/// records each request's method, target and body, answers 201.
fn recorder() -> (u16, Recorded) {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen: Recorded = Recorded::default();
    let s2 = seen.clone();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { return };
            let mut req = Vec::new();
            let mut buf = [0u8; 65536];
            let (head, body) = loop {
                let n = c.read(&mut buf).unwrap_or(0);
                req.extend_from_slice(&buf[..n]);
                if let Some(i) = req.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&req[..i]).to_string();
                    let len = head
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                    if req.len() >= i + 4 + len || n == 0 {
                        break (head, req[i + 4..].to_vec());
                    }
                }
                if n == 0 {
                    break (String::from_utf8_lossy(&req).to_string(), Vec::new());
                }
            };
            let mut w = head.split(' ');
            let (m, t) = (w.next().unwrap_or("").to_string(), w.next().unwrap_or("").to_string());
            // A GET (the free {n} lookup) finds nothing.
            let status = if m == "GET" { 404 } else { 201 };
            s2.lock().unwrap().push((m, t, body));
            let _ = write!(
                c,
                "HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
    });
    (port, seen)
}

/// The live command sends its document to `results_url` after writing
/// `--out` (the same bytes, `{machine}`, `{run}` and `{n}` filled in, the
/// query shown nowhere) and pushes its run to `metrics_url` while it runs
/// and at its end, as the booted run does.
#[test]
fn the_live_command_sends_its_document_and_pushes_its_metrics() {
    let (port, seen) = recorder();
    let dir = PathBuf::from("/dev/shm").join(unique("live-url"));
    std::fs::create_dir(&dir).unwrap();
    let out = dir.join("r.json");
    let cfg = config(&serde_json::json!({
        "tests": [{"workload": "rand_read", "name": "rr", "runtime": "100ms"}],
        "results_url": format!("http://127.0.0.1:{port}/r/{{machine}}/{{run}}-{{n}}.json?sig=SECRET"),
        "metrics_url": format!("http://127.0.0.1:{port}"),
        "metrics_interval": "1s"
    }));
    let o = run(&[
        "run",
        "--simulate",
        "--config",
        cfg.path(),
        "--target",
        "sim:ssd:64M",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("SECRET"), "{err}");
    let doc_bytes = std::fs::read(&out).unwrap();
    let seen = seen.lock().unwrap();
    let puts: Vec<_> = seen.iter().filter(|r| r.0 == "PUT" && r.1.starts_with("/r/")).collect();
    assert_eq!(puts.len(), 1, "{seen:?}");
    assert_eq!(puts[0].2, doc_bytes, "the document sent is the one written");
    let target = &puts[0].1;
    assert!(target.ends_with("-1.json?sig=SECRET"), "{target}");
    let shown = target.split('?').next().unwrap();
    assert!(
        err.contains(&format!("results sent to http://127.0.0.1:{port}{shown}")),
        "{err}"
    );
    assert!(!target.contains('{'), "{target}");
    // The metrics: at least the first push and the end, to the machine's group.
    let pushes: Vec<_> = seen
        .iter()
        .filter(|r| r.1.starts_with("/metrics/job/bootbench/instance/"))
        .collect();
    assert!(pushes.len() >= 2, "{seen:?}");
    assert!(pushes.iter().all(|r| r.0 == "PUT"), "{seen:?}");
    let first = String::from_utf8_lossy(&pushes[0].2).to_string();
    assert!(first.contains(",state=\"running\"} 1"), "{first}");
    let last = String::from_utf8_lossy(&pushes.last().unwrap().2).to_string();
    assert!(last.contains(",state=\"ok\"} 1"), "{last}");
    assert!(
        last.contains("bootbench_test_progress_ratio{") && last.contains("test=\"rr\"} 1"),
        "{last}"
    );
    assert!(last.contains("bootbench_run_verdict{"), "{last}");
    assert!(err.contains("metrics: ") && err.contains("push(es) sent"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
