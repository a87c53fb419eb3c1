//! End to end in QEMU (TCG): the real kernel, initramfs and USB image from
//! `make image`. Tiered by name, fastest first (libtest runs them in name
//! order with --test-threads=1; boots are serialized anyway). Each boot is
//! bounded by `BOOT_TIMEOUT`; each uses small disks and a short explicit test
//! list so it stays short under TCG.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

use bootbench_e2e::{
    artifacts, assert_schema_valid, boot, checksum, disks, disks_with_contents, path_of, scratch, status_of,
    stick_copy, target_by_serial, tests_on, the_document, Via,
};
use bootbench_qemu::stick;
use serde_json::{json, Value};

const CONFIRM: &str = "I understand this destroys data";

/// A short read-only test list for boots that check plumbing, not figures.
fn short_reads() -> Value {
    json!({"tests": [{"workload": "seq_read", "name": "seq_read_1m", "bs": "1M", "size": "4M"}]})
}

#[test]
fn t1_invalid_config_gives_error_document_poweroff_and_no_disk_changed() {
    let Some(a) = artifacts("t1_invalid_config") else {
        return;
    };
    let dir = scratch("t1_invalid_config");
    let specs = disks(&[
        "sata,size=64M,serial=E2E-INV-SATA",
        "virtio,size=64M,serial=E2E-INV-VIRTIO",
    ]);
    let (files, before) = disks_with_contents(&specs, &dir, |i| Some(100 + i as u64));
    // Unknown key, and a write test with destructive naming a disk: must not get anywhere near a write.
    let config = json!({
        "tests": [{"workload": "seq_write", "bs": "1M", "size": "4M"}],
        "destructive": {"confirm": CONFIRM, "countdown": 0, "targets": [{"serial": "E2E-INV-SATA"}]},
        "no_such_key": true
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "error", "run: {}", doc["run"]);
    let why = doc["run"]["error"].as_str().unwrap_or_default();
    assert!(why.contains("no_such_key"), "the error names the bad key: {why:?}");
    assert!(outcome.serial.contains("no_such_key"), "the console says why");
    let after: Vec<_> = files.iter().map(|f| checksum(f).unwrap()).collect();
    assert_eq!(before, after, "no disk changed");
}

/// Every transport, each disk found by its QEMU serial and the stick left
/// out. Two SATA disks share a model and firmware, the second throttled to
/// 4 MiB/s: the analysis names it the odd disk out (`outlier`) against the
/// median of the two.
#[test]
fn t2_direct_boot_each_transport_identified_by_serial_stick_excluded() {
    let Some(a) = artifacts("t2_direct_each_transport") else {
        return;
    };
    let dir = scratch("t2_direct_each_transport");
    let specs = disks(&[
        "sata,size=64M,serial=E2E-SATA-1,model=E2E SATA MODEL,rotation=7200",
        "sata,size=64M,serial=E2E-SATA-2,model=E2E SATA MODEL,rotation=7200,bps=4M",
        "nvme,size=64M,serial=E2E-NVME-1",
        "virtio,size=64M,serial=E2E-VIRTIO-1",
        "usb,size=64M,serial=E2E-USB-1",
    ]);
    let img = stick_copy(&a, &dir, Some(&short_reads()));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);
    // PID 1 holds the CPU wake-up latency limit while it measures (the
    // initramfs's devtmpfs has /dev/cpu_dma_latency; nothing else holds one).
    let wake = &doc["run"]["cpu_dma_latency"];
    assert_eq!(
        (
            &wake["requested_us"],
            &wake["held"],
            &wake["during_us"],
            &wake["before_us"]
        ),
        (&json!(0), &json!(true), &json!(0), &json!(2_000_000_000)),
        "{wake}"
    );
    let serials: BTreeSet<&str> = doc["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["serial"].as_str())
        .collect();
    let want: BTreeSet<&str> = specs.iter().map(|d| d.serial.as_str()).collect();
    assert_eq!(serials, want, "every disk by its QEMU serial, the boot stick excluded");
    assert_eq!(
        doc["targets"].as_array().unwrap().len(),
        specs.len(),
        "nothing else is a target"
    );
    for d in &specs {
        let t = target_by_serial(&doc, &d.serial);
        assert_eq!(t["transport"], d.transport.name(), "{}: {t}", d.serial);
        assert_eq!(t["size_bytes"], d.size, "{}", d.serial);
        let tests = tests_on(&doc, &d.serial);
        assert_eq!(tests.len(), 1, "{}", d.serial);
        assert_eq!(status_of(tests[0]), "ok", "{}: {}", d.serial, tests[0]["status"]);
    }
    assert_eq!(target_by_serial(&doc, "E2E-SATA-1")["model"], "E2E SATA MODEL");
    assert_eq!(target_by_serial(&doc, "E2E-SATA-1")["rotational"], true);

    let (sata1, sata2) = (
        path_of(target_by_serial(&doc, "E2E-SATA-1")),
        path_of(target_by_serial(&doc, "E2E-SATA-2")),
    );
    let outliers: Vec<&Value> = doc["analysis"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["kind"] == "outlier")
        .collect();
    assert_eq!(outliers.len(), 1, "one odd disk out: {}", doc["analysis"]);
    let l = outliers[0];
    eprintln!("outlier: {l}");
    assert_eq!(
        (l["target"].as_str(), l["test"].as_str()),
        (Some(sata2), Some("seq_read_1m")),
        "{l}"
    );
    // `from` is in target order, and the kernel may name either SATA disk sda.
    let mut from: Vec<&str> = l["from"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    from.sort_unstable();
    let mut both = vec![sata1, sata2];
    both.sort_unstable();
    assert_eq!(from, both, "{l}");
    let figure = |p: &str| {
        tests_on(&doc, if p == sata1 { "E2E-SATA-1" } else { "E2E-SATA-2" })[0]["summary"]["read_bytes_per_sec"]
            .as_f64()
            .unwrap()
    };
    let median = (figure(sata1) + figure(sata2)) / 2.0;
    assert!((l["expected"].as_f64().unwrap() - median).abs() <= median * 1e-9, "{l}");
    assert!((l["measured"].as_f64().unwrap() - figure(sata2)).abs() <= 1.0, "{l}");
    let rule = l["rule"].as_str().unwrap();
    assert!(
        rule.starts_with("outlier: ") && rule.contains("(2 disks of model E2E SATA MODEL, firmware "),
        "{rule}"
    );
}

#[test]
fn t3_usb_ovmf_boot_stick_result_equals_serial_copy() {
    let Some(a) = artifacts("t3_usb_ovmf") else { return };
    let dir = scratch("t3_usb_ovmf");
    let specs = disks(&["virtio,size=64M,serial=E2E-UEFI-1"]);
    let img = stick_copy(&a, &dir, Some(&short_reads()));
    let before = stick::list_dir(&img, "/results").unwrap();
    let outcome = boot(&a, &dir, Via::Uefi, &img, &specs, "");
    let (name, bytes, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    let after = stick::list_dir(&img, "/results").unwrap();
    let new: Vec<&String> = after.iter().filter(|n| !before.contains(n)).collect();
    assert_eq!(new.len(), 1, "one new result file on the stick: {after:?}");
    let base = Path::new(&name).file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(*new[0], base, "the serial frame names the stick's file");
    let copied = stick::copy_results(&img, &dir.join("results")).unwrap();
    assert!(copied.contains(new[0]));
    let on_stick = std::fs::read(dir.join("results").join(new[0])).unwrap();
    assert_eq!(
        bench_core::document::frame::compact_json(&on_stick),
        bytes,
        "the stick's file is the serial copy, pretty (the frame carries it compact)"
    );
    assert!(on_stick.len() > bytes.len(), "the stick keeps the pretty document");
}

/// Write tests on the one disk `destructive` names, with every disk's tests
/// at once (`parallel`) and a countdown first: the other disks are read
/// meanwhile and stay byte-identical.
#[test]
fn t4_write_tests_on_one_disk_leave_every_other_disk_identical() {
    let Some(a) = artifacts("t4_write_isolation") else {
        return;
    };
    let dir = scratch("t4_write_isolation");
    let specs = disks(&[
        "sata,size=64M,serial=E2E-W-TARGET",
        "sata,size=64M,serial=E2E-W-SATA",
        "nvme,size=64M,serial=E2E-W-NVME",
        "virtio,size=64M,serial=E2E-W-VIRTIO",
    ]);
    // The target starts blank (all zeros, sparse): a disk that holds data is
    // refused even without a signature. The others hold data.
    let (files, before) = disks_with_contents(&specs, &dir, |i| (i > 0).then_some(200 + i as u64));
    // All four disks at once (parallel): the target's writes run while the
    // others are read.
    let config = json!({
        "tests": [
            {"workload": "seq_write", "name": "sw", "bs": "1M", "size": "8M"},
            {"workload": "rand_write", "name": "rw", "bs": "4k", "size": "8M", "runtime": "1s"},
            {"workload": "seq_read", "name": "sr", "bs": "1M", "size": "8M"}
        ],
        "parallel": true,
        "destructive": {"confirm": CONFIRM, "targets": [{"serial": "E2E-W-TARGET"}], "countdown": "3s"}
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    // The console names the disk it may write, and only it, and counts down.
    let warn = outcome
        .serial
        .lines()
        .find(|l| l.contains("WRITES AHEAD"))
        .unwrap_or_else(|| panic!("no countdown on the console"));
    assert!(
        warn.contains("(serial E2E-W-TARGET") && !warn.contains("E2E-W-SATA") && warn.contains("it begins in 3 s"),
        "{warn}"
    );
    for l in ["countdown: 2 s", "countdown: 1 s", "countdown over: the run begins"] {
        assert!(outcome.serial.contains(l), "{l} not on the console");
    }
    for t in tests_on(&doc, "E2E-W-TARGET") {
        assert_eq!(status_of(t), "ok", "{}: {}", t["name"], t["status"]);
    }
    for other in ["E2E-W-SATA", "E2E-W-NVME", "E2E-W-VIRTIO"] {
        for t in tests_on(&doc, other) {
            let want = if t["name"] == "sr" { "ok" } else { "skipped" };
            assert_eq!(status_of(t), want, "{other} {}: {}", t["name"], t["status"]);
        }
    }
    // Every disk started before any test ended (the endings are said once
    // all are done).
    let first_end = outcome.serial.find("[test ").expect("test endings on the console");
    assert_eq!(
        outcome.serial[..first_end].matches("benchmarks started on ").count(),
        4,
        "every disk started at once"
    );
    let after: Vec<_> = files.iter().map(|f| checksum(f).unwrap()).collect();
    assert_ne!(before[0], after[0], "the destructive target was written");
    assert_eq!(before[1..], after[1..], "every other disk byte-identical");
}

/// One boot for both accuracy checks: a virtio disk throttled to 20 MiB/s and
/// one to 100 IOPS, each running seq_read 1M and rand_read 4k at QD1.
fn accuracy_doc() -> Option<&'static Value> {
    static DOC: OnceLock<Option<Value>> = OnceLock::new();
    DOC.get_or_init(|| {
        let a = artifacts("t5_accuracy")?;
        let dir = scratch("t5_accuracy");
        let specs = disks(&[
            "virtio,size=256M,serial=E2E-BPS20,bps=20M",
            "virtio,size=256M,serial=E2E-IOPS100,iops=100",
        ]);
        let config = json!({
            "defaults": {"iodepth": 1, "ramp_time": "1s", "runtime": "4s"},
            "tests": [
                {"workload": "seq_read", "name": "seq_read_1m", "bs": "1M"},
                {"workload": "rand_read", "name": "rand_read_4k", "bs": "4k"}
            ]
        });
        let img = stick_copy(&a, &dir, Some(&config));
        let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
        let (_, _, doc) = the_document(&outcome);
        assert_schema_valid(&doc);
        Some(doc)
    })
    .as_ref()
}

fn figure(doc: &Value, serial: &str, test: &str, key: &str) -> f64 {
    let t = tests_on(doc, serial)
        .into_iter()
        .find(|t| t["name"] == test)
        .unwrap_or_else(|| panic!("{test} on {serial}"));
    assert_eq!(status_of(t), "ok", "{test} on {serial}: {}", t["status"]);
    t["summary"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("{test} on {serial}: no {key}: {}", t["summary"]))
}

#[test]
fn t5_accuracy_20_mib_per_s_throttle_reads_at_20_mib_per_s_within_5_percent() {
    let Some(doc) = accuracy_doc() else { return };
    let rate = figure(doc, "E2E-BPS20", "seq_read_1m", "read_bytes_per_sec");
    let truth = 20.0 * 1024.0 * 1024.0;
    eprintln!("seq_read 1M on a 20 MiB/s disk: {:.3} MiB/s", rate / 1024.0 / 1024.0);
    assert!((rate / truth - 1.0).abs() <= 0.05, "{rate} B/s vs {truth} B/s");
}

#[test]
fn t5_accuracy_100_iops_throttle_gives_100_random_read_iops_within_5_percent() {
    let Some(doc) = accuracy_doc() else { return };
    let iops = figure(doc, "E2E-IOPS100", "rand_read_4k", "read_iops");
    eprintln!("rand_read 4k QD1 on a 100 IOPS disk: {iops:.2} IOPS");
    assert!((iops / 100.0 - 1.0).abs() <= 0.05, "{iops} IOPS vs 100");
}

/// A server's BMC takes serial-over-LAN from COM2: with a second serial
/// port, the boot writes its announce line, the framed document and the
/// table there too, and a complete, verified frame is cut out of each
/// port's log: the same document, under the same boot's nonce. The
/// console's own port gets each frame once.
#[test]
fn t6_results_on_every_serial_port() {
    let Some(a) = artifacts("t6_every_serial_port") else {
        return;
    };
    let dir = scratch("t6_every_serial_port");
    let specs = disks(&["virtio,size=16M,serial=E2E-COM2-1"]);
    let img = stick_copy(&a, &dir, Some(&short_reads()));
    let com2 = dir.join("com2.log");
    let outcome =
        bootbench_e2e::boot_with_serials(&a, &dir, Via::Direct, &img, &specs, "", std::slice::from_ref(&com2));
    let (name, bytes, doc) = the_document(&outcome);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);
    assert!(
        outcome.serial.contains("the results also go to serial port(s) ttyS1"),
        "the console says where else the results go"
    );
    let text = String::from_utf8_lossy(&std::fs::read(&com2).expect("COM2's log")).into_owned();
    let frames = bench_core::document::frame::decode(&text);
    let damaged: Vec<String> = frames
        .iter()
        .filter_map(|f| f.as_ref().err())
        .map(ToString::to_string)
        .collect();
    assert!(damaged.is_empty(), "COM2: damaged frames {damaged:?}");
    let ok: Vec<&bench_core::document::frame::Frame> = frames.iter().filter_map(|f| f.as_ref().ok()).collect();
    assert_eq!(ok.len(), 1, "one document on COM2:\n{text}");
    assert_eq!(
        (ok[0].name.as_str(), &ok[0].bytes),
        (name.as_str(), &bytes),
        "the console's document"
    );
    let console_nonce = outcome.documents().next().and_then(|f| f.nonce);
    assert!(
        ok[0].nonce.is_some() && ok[0].nonce == console_nonce,
        "the same boot's nonce"
    );
    assert!(
        text.contains("throughput in MB/s"),
        "the table follows the frame on COM2"
    );
    assert_eq!(outcome.documents().count(), 1, "the console's port has it once");

    // The config's `serial_ports: []` keeps the results to the console.
    let mut config = short_reads();
    config["serial_ports"] = json!([]);
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome =
        bootbench_e2e::boot_with_serials(&a, &dir, Via::Direct, &img, &specs, "", std::slice::from_ref(&com2));
    let (_, _, doc) = the_document(&outcome);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);
    let text = std::fs::read(&com2).unwrap_or_default();
    assert!(
        !String::from_utf8_lossy(&text).contains("BOOTBENCH-"),
        "nothing on COM2 with serial_ports []"
    );
}
