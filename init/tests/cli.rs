//! End-to-end tests of `bootbench-init`: the simulated pipeline (compared
//! with a snapshot), a quick run on a loop device, bad input, validation,
//! the analysis and acceptance of real runs, and the live command's
//! uploads. The whole-disk passes are in `cli_passes.rs`, `list` in
//! `cli_list.rs`, the write interlock and signals in `cli_safety.rs`;
//! their helpers in `common/cli.rs`. Loop devices over files in /dev/shm
//! need root and `losetup`.
//!
//! Regenerate the snapshot with `UPDATE_SNAPSHOTS=1 cargo test -p bootbench-init --test cli`.

use std::path::{Path, PathBuf};

use bench_core::spec::Workload;
use serde_json::Value;

mod common;
use common::cli::{assert_valid, config, doc_of, run, stderr, tests_of, LOOP_BYTES, MANIFEST, PHRASE};
use common::{unique, Loop, ShmFile};

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
