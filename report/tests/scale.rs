//! The report tools on large documents (issue 46, point 8): `show`,
//! `fleet` and `html` are linear in the document, not quadratic. Not timed:
//! each test runs a size that took minutes before (a lookup of every
//! test, or every target, for each target or test: 20,000 disks, 60,000
//! tests of one disk) and checks what the output says of every disk and
//! test; a quadratic scan back in any of these paths makes it run for
//! minutes again (release build, before: `show` of 20,000 disks 44 s,
//! `fleet` of 50,000 disks 89 s, `fleet` and `html` of 60,000 skipped tests
//! tens of seconds; the debug build these tests run is slower still).

use std::fs;
use std::path::Path;

use serde_json::Value;

mod common;

use common::*;

/// The quick 4-disk fixture with its targets and tests replaced by
/// `targets` and `tests` (made from its first target, one of its `ok`
/// seq_read tests, one step kept, and one of its skipped tests).
fn document(dir: &Path, name: &str, disks: usize, skipped: usize) -> String {
    let mut d: Value =
        serde_json::from_str(&fs::read_to_string(fixtures().join("qemu-4disks-quick.json")).unwrap()).unwrap();
    let t0 = d["targets"][0].clone();
    let path0 = t0["path"].as_str().unwrap().to_owned();
    let tests = d["tests"].as_array().unwrap().clone();
    let ok = tests
        .iter()
        .find(|x| x["status"]["state"] == "ok" && x["workload"] == "seq_read" && x["target"] == path0.as_str())
        .unwrap()
        .clone();
    let skip = tests
        .iter()
        .find(|x| x["status"]["state"] == "skipped")
        .unwrap()
        .clone();
    let mut targets = Vec::new();
    let mut out = Vec::new();
    for i in 0..disks {
        let mut t = t0.clone();
        t["path"] = format!("/dev/d{i}").into();
        t["name"] = format!("d{i}").into();
        t["serial"] = format!("S{i:08}").into();
        t["model"] = format!("MODEL {}", i % 7).into();
        targets.push(t);
        let mut x = ok.clone();
        x["target"] = format!("/dev/d{i}").into();
        x["steps"] = Value::Array(x["steps"].as_array().unwrap()[..1].to_vec());
        x["summary"]["read_bytes_per_sec"] = (1e8 + i as f64).into();
        out.push(x);
    }
    for i in 0..skipped {
        let mut x = skip.clone();
        x["target"] = "/dev/d0".into();
        x["name"] = format!("skipped_{i}").into();
        // A reason of its own each: `show` lists each distinct reason once.
        x["status"]["reason"] = format!("reason {i}").into();
        out.push(x);
    }
    d["targets"] = Value::Array(targets);
    d["tests"] = Value::Array(out);
    let p = dir.join(name);
    fs::write(&p, d.to_string()).unwrap();
    p.display().to_string()
}

/// 20,000 disks of one test each: `show` details each disk once and lists
/// it in the summary table; `fleet` counts them all; `html` writes the page
/// with each disk's series.
#[test]
fn twenty_thousand_disks_show_fleet_and_html() {
    const N: usize = 20_000;
    let dir = scratch("scale-disks");
    let doc = document(&dir, "disks.json", N, 0);
    let shown = ok(&["show", &doc]);
    for i in [0, 1, N / 2, N - 1] {
        assert_eq!(shown.matches(&format!("\n-- /dev/d{i} (")).count(), 1, "/dev/d{i}");
    }
    assert_eq!(shown.matches("\n-- /dev/d").count(), N);
    // A line in the targets table and one in the summary table each.
    assert_eq!(
        shown.lines().filter(|l| l.starts_with("/dev/d")).count(),
        2 * N,
        "the targets and summary tables"
    );
    let fleet = ok(&["fleet", &doc]);
    assert!(
        fleet.contains(&format!("1 machine(s), {N} disk(s); 7 group(s)")),
        "{fleet}"
    );
    let page = dir.join("disks.html");
    let o = run(&["html", &doc, "-o", page.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = fs::read_to_string(&page).unwrap();
    assert!(html.contains("/dev/d19999 (S00019999)"));
    fs::remove_dir_all(&dir).unwrap();
}

/// One disk with 60,000 skipped tests (and one ok): `show` lists each
/// reason once with its test; `fleet` reads the disk (one disk is no
/// group); `html` writes the page.
#[test]
fn sixty_thousand_skipped_tests_of_one_disk_show_fleet_and_html() {
    const N: usize = 60_000;
    let dir = scratch("scale-tests");
    let doc = document(&dir, "tests.json", 1, N);
    let shown = ok(&["show", &doc]);
    for i in [0, 1, N / 2, N - 1] {
        assert!(
            shown.contains(&format!("\n  skipped_{i}: skipped: reason {i}\n")),
            "skipped_{i}"
        );
    }
    let fleet = ok(&["fleet", "--all", &doc]);
    assert!(fleet.contains("1 machine(s), 1 disk(s); 0 group(s)"), "{fleet}");
    let page = dir.join("tests.html");
    let o = run(&["html", &doc, "-o", page.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    fs::remove_dir_all(&dir).unwrap();
}
