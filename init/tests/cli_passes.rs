//! `bootbench-init run`'s whole-disk passes on loop devices over files in
//! /dev/shm: the surface scan, the burn-in, preconditioning, and a test
//! that waits for steady state (root and `losetup` needed).

use serde_json::Value;

mod common;
use common::cli::{assert_valid, config, doc_of, run, stderr, LOOP_BYTES, PHRASE};
use common::Loop;

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
