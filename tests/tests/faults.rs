//! End to end in QEMU (TCG): faulty and missing disks in an unattended run.
//! Same harness as `e2e.rs` (the image from `make image`, one boot at a
//! time). `f2` (below) boots a disk with a write error. `f1`, one boot,
//! four disks named by serial in the config:
//!
//! - `F-OK`: healthy; every test `ok` with complete figures.
//! - `F-ERR`: a blkdebug read error (EIO) at sector 8192 (byte 4 MiB): the
//!   test that reads there (8 MiB from the start) is `error` with errno
//!   5, op read, offset 4 MiB, and the target's other tests (which do not
//!   reach 4 MiB) run `ok`. The kernel logs the failed request
//!   (block/blk-mq.c `blk_print_req_error`: `I/O error, dev vdX, sector
//!   8192 op 0x0:(READ) ...`): the document's `kernel_log` holds that line
//!   for F-ERR and the test `seq_8m`, with sector 8192 (and a line for the
//!   rest of the same 1 MiB read when QEMU merged its parts); no line names F-OK.
//! - `F-SLOW`: throttled to 5 IOPS, with the config's test-only
//!   `test_deadline` at 6 s: 8 sequential 1 MiB reads finish `ok`; 200 QD1
//!   random reads (~15 s even with QEMU's bursts, 0.1 s on the others) end
//!   as `timeout` at the deadline (the request in flight returns, nothing
//!   is abandoned); a QD128 test's 128 requests need ~25 s to
//!   drain, longer than the deadline plus the 10 s grace after the stop, so
//!   its I/O is abandoned (said in its message), and the target's later test
//!   is skipped as hung. (1 IOPS kept the boot stick from appearing in time
//!   under TCG: the kernel's partition scan of the throttled disk.)
//! - `F-ABSENT`: named in the config, not attached: its tests are skipped
//!   with the reason; everything else runs.
//!
//! And: `run.status` is `error` naming the absent disk and the hung one, the
//! document is schema-valid, the run bound is printed at the start (console)
//! and recorded (`run.bound_ns`), and the machine powers off.
//!
//! Not proved here: a hang inside an md/dm stack (unit tests cover the run
//! loop with a stack backend; md/dm stop refuses with EBUSY while the
//! abandoned thread holds the device open, which teardown reports).

use bootbench_e2e::{
    artifacts, assert_schema_valid, boot, checksum, disks, disks_with_contents, path_of, scratch, stick_copy,
    target_by_serial, tests_on, the_document, Via,
};
use serde_json::{json, Value};

fn state(t: &Value) -> &str {
    t["status"]["state"].as_str().unwrap_or("?")
}

fn by_name<'a>(tests: &[&'a Value], name: &str) -> &'a Value {
    tests
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no test {name} in {tests:?}"))
}

#[test]
fn f1_read_error_slow_and_hung_disk_and_absent_disk_the_rest_runs() {
    let Some(a) = artifacts("f1_faults") else {
        return;
    };
    let dir = scratch("f1_faults");
    let specs = disks(&[
        "virtio,size=64M,serial=F-OK",
        "virtio,size=64M,serial=F-ERR,fault=read_aio:5:8192",
        "virtio,size=64M,serial=F-SLOW,iops=5",
    ]);
    let config = json!({
        "targets": [{"serial": "F-OK"}, {"serial": "F-ERR"}, {"serial": "F-SLOW"}, {"serial": "F-ABSENT"}],
        "test_deadline": "6s",
        "tests": [
            {"workload": "seq_read", "name": "seq_8m", "bs": "1M", "size": "8M"},
            {"workload": "rand_read", "name": "rand_qd1", "bs": "4k", "iodepth": 1, "length": "2M", "size": "800k", "runtime": "60s"},
            {"workload": "rand_read", "name": "rand_qd128", "bs": "4k", "iodepth": 128, "length": "2M", "runtime": "2s"},
            {"workload": "seq_read", "name": "seq_after", "bs": "1M", "size": "2M"}
        ]
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);

    the_run_bound_is_printed_before_the_first_test_and_recorded(&doc, &outcome.serial);
    the_healthy_disk_runs_every_test_with_figures(&doc);
    the_read_error_fails_only_the_test_that_reaches_it(&doc);
    the_kernel_logged_the_read_error_for_that_disk_and_test(&doc, &outcome.serial);
    the_slow_disk_times_out_then_abandons_its_io_then_is_skipped_as_hung(&doc);
    the_absent_disk_is_listed_and_its_tests_skipped_with_the_reason(&doc);
    the_run_is_an_error_naming_the_absent_and_the_hung_disk(&doc);
}

/// The bound: printed before the first test, and recorded.
fn the_run_bound_is_printed_before_the_first_test_and_recorded(doc: &Value, serial: &str) {
    let bound_line = serial
        .lines()
        .position(|l| l.contains("run bound: at most"))
        .expect("the run bound on the console");
    let first_test = serial
        .lines()
        .position(|l| l.contains("[test 1/"))
        .expect("a test line");
    assert!(bound_line < first_test, "the bound comes first");
    // 12 tests that run (the absent disk's 4 do not) at 6 s plus 10 s grace each.
    assert_eq!(
        doc["run"]["bound_ns"],
        json!(12u64 * 16_000_000_000),
        "run: {}",
        doc["run"]
    );
}

/// Healthy: everything ok, with figures.
fn the_healthy_disk_runs_every_test_with_figures(doc: &Value) {
    let ok = tests_on(doc, "F-OK");
    assert_eq!(ok.len(), 4);
    for t in &ok {
        assert_eq!(state(t), "ok", "{}", t["status"]);
        let steps = t["steps"].as_array().expect("steps");
        assert!(!steps.is_empty(), "{}", t["name"]);
        assert!(
            steps.iter().all(|s| s["read"]["ios"].as_u64().unwrap_or(0) > 0),
            "{}",
            t["name"]
        );
    }
}

/// Read error at 4 MiB: that test is error with errno, op, offset; the others ok.
fn the_read_error_fails_only_the_test_that_reaches_it(doc: &Value) {
    let err = tests_on(doc, "F-ERR");
    let e = by_name(&err, "seq_8m");
    assert_eq!(state(e), "error", "{}", e["status"]);
    assert_eq!(e["status"]["errno"], 5);
    assert_eq!(e["status"]["op"], "read");
    assert_eq!(e["status"]["offset"], 4u64 << 20);
    assert!(
        e["status"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("offset 4194304") && m.contains("errno 5")),
        "{}",
        e["status"]
    );
    assert_eq!(state(by_name(&err, "rand_qd1")), "ok");
    assert_eq!(state(by_name(&err, "rand_qd128")), "ok");
    assert_eq!(state(by_name(&err, "seq_after")), "ok");
}

/// The kernel's `I/O error, dev vdX, sector 8192` line: in the document,
/// attributed to F-ERR and its test `seq_8m`; F-OK has none; the console
/// said it as it came. The block layer may split the failing 1 MiB read
/// (its segment limit) and QEMU's virtio-blk merge the parts again, so
/// that the part after the failing sector fails with it: such a line is
/// for the same disk and test, within the same 1 MiB read.
fn the_kernel_logged_the_read_error_for_that_disk_and_test(doc: &Value, serial: &str) {
    let err = bootbench_e2e::target_by_serial(doc, "F-ERR");
    let (path, name) = (err["path"].as_str().unwrap(), err["name"].as_str().unwrap());
    let lines: Vec<&Value> = doc["kernel_log"]
        .as_array()
        .map(|v| v.iter().collect())
        .unwrap_or_default();
    eprintln!("kernel log: {lines:#?}");
    let io: Vec<&&Value> = lines.iter().filter(|l| l["kind"] == "io_error").collect();
    assert!(!io.is_empty(), "an io_error line: {lines:?}");
    for l in &io {
        assert_eq!(l["target"], path, "{l}");
        assert_eq!(l["test"], "seq_8m", "{l}");
        let sector = l["sector"].as_u64().unwrap_or(0);
        assert!(
            (8192..8192 + 2048).contains(&sector),
            "within the failing 1 MiB read: {l}"
        );
        assert_eq!(l["level"], 3, "{l}");
        let want = format!("I/O error, dev {name}, sector {sector} op 0x0:(READ)");
        assert!(l["text"].as_str().unwrap().starts_with(&want), "{l}");
    }
    assert!(
        io.iter().any(|l| l["sector"] == 8192),
        "the failing sector's line: {io:?}"
    );
    let ok = bootbench_e2e::target_by_serial(doc, "F-OK")["path"].clone();
    assert!(lines.iter().all(|l| l["target"] != ok), "{lines:?}");
    let status = &doc["kernel_log_status"];
    assert_eq!(status["error"], Value::Null, "{status}");
    assert_eq!(status["overwritten"], 0, "{status}");
    assert!(status["watched"].as_array().unwrap().contains(&json!(path)), "{status}");
    assert!(
        serial.contains(&format!(
            "kernel: {path} during seq_8m: io_error: I/O error, dev {name}, sector 8192"
        )),
        "console"
    );
}

/// 5 IOPS: timeout at the deadline; then abandoned; then skipped as hung.
fn the_slow_disk_times_out_then_abandons_its_io_then_is_skipped_as_hung(doc: &Value) {
    let slow = tests_on(doc, "F-SLOW");
    assert_eq!(state(by_name(&slow, "seq_8m")), "ok");
    let t1 = by_name(&slow, "rand_qd1");
    assert_eq!(state(t1), "timeout", "{}", t1["status"]);
    let done = t1["steps"][0]["read"]["ios"].as_u64().unwrap_or(0);
    assert!(
        done > 0 && done < 200,
        "the timed-out test keeps what it did: {done} reads"
    );
    assert!(
        !t1["status"]["message"].as_str().unwrap_or("").contains("abandoned"),
        "{}",
        t1["status"]
    );
    let t2 = by_name(&slow, "rand_qd128");
    assert_eq!(state(t2), "timeout", "{}", t2["status"]);
    assert!(
        t2["status"]["message"].as_str().unwrap_or("").contains("I/O abandoned"),
        "{}",
        t2["status"]
    );
    let t3 = by_name(&slow, "seq_after");
    assert_eq!(state(t3), "skipped", "{}", t3["status"]);
    assert!(
        t3["status"]["reason"].as_str().unwrap_or("").contains("hung"),
        "{}",
        t3["status"]
    );
}

/// Absent: a target of kind absent, its tests skipped with the reason.
fn the_absent_disk_is_listed_and_its_tests_skipped_with_the_reason(doc: &Value) {
    let absent = doc["targets"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["serial"] == "F-ABSENT"))
        .expect("the absent disk is listed");
    assert_eq!(absent["kind"], "absent");
    let gone = tests_on(doc, "F-ABSENT");
    assert_eq!(gone.len(), 4);
    for t in &gone {
        assert_eq!(state(t), "skipped");
        assert!(
            t["status"]["reason"]
                .as_str()
                .unwrap_or("")
                .contains("no whole disk has serial F-ABSENT"),
            "{}",
            t["status"]
        );
    }
}

/// The run is an error naming the absent disk and the hung one; every test,
/// run or not, is in the document.
fn the_run_is_an_error_naming_the_absent_and_the_hung_disk(doc: &Value) {
    assert_eq!(doc["run"]["status"], "error");
    let why = doc["run"]["error"].as_str().unwrap_or("");
    assert!(why.contains("F-ABSENT") && why.contains("hung"), "{why}");
    assert_eq!(
        doc["tests"].as_array().map(Vec::len),
        Some(16),
        "every test is in the document"
    );
}

/// One boot: a blkdebug write error (EIO) at sector 8192 (byte 4 MiB) of a
/// disk named writable. Its 8 MiB sequential write is `error` with errno 5,
/// op write, offset 4 MiB; its read test (of the first 4 MiB: blkdebug fails
/// reads of that sector too), a healthy writable disk's write and read, and
/// a disk not named writable (its write refused, its read `ok`, its contents
/// byte-identical) all go on.
#[test]
fn f2_write_error_at_a_chosen_sector_the_rest_runs() {
    let Some(a) = artifacts("f2_write_error") else {
        return;
    };
    let dir = scratch("f2_write_error");
    let specs = disks(&[
        "virtio,size=64M,serial=F-WERR,fault=write_aio:5:8192",
        "virtio,size=64M,serial=F-WOK",
        "virtio,size=64M,serial=F-KEEP",
    ]);
    // F-WERR and F-WOK are left for `boot` to create sparse (all zeros):
    // the safety check grants only a blank disk. F-KEEP holds data.
    let keep = specs[2].backing_file(&dir.join("disks"));
    std::fs::create_dir_all(dir.join("disks")).unwrap();
    bootbench_e2e::fill_random(&keep, specs[2].size, 61).unwrap();
    let before = bootbench_e2e::checksum(&keep).unwrap();
    let config = json!({
        "tests": [
            {"workload": "seq_write", "name": "write_8m", "bs": "1M", "size": "8M"},
            {"workload": "seq_read", "name": "read_4m", "bs": "1M", "size": "4M"}
        ],
        "destructive": {
            "confirm": "I understand this destroys data",
            "countdown": 0,
            "targets": [{"serial": "F-WERR"}, {"serial": "F-WOK"}]
        }
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);

    let werr = tests_on(&doc, "F-WERR");
    let w = by_name(&werr, "write_8m");
    assert_eq!(state(w), "error", "{}", w["status"]);
    assert_eq!(w["status"]["errno"], 5);
    assert_eq!(w["status"]["op"], "write");
    assert_eq!(w["status"]["offset"], 4u64 << 20);
    assert_eq!(state(by_name(&werr, "read_4m")), "ok", "the disk's next test runs");
    let wok = tests_on(&doc, "F-WOK");
    for name in ["write_8m", "read_4m"] {
        let t = by_name(&wok, name);
        assert_eq!(state(t), "ok", "F-WOK {name}: {}", t["status"]);
    }
    let kept = tests_on(&doc, "F-KEEP");
    assert_eq!(state(by_name(&kept, "write_8m")), "skipped");
    assert_eq!(state(by_name(&kept, "read_4m")), "ok");
    assert_eq!(bootbench_e2e::checksum(&keep).unwrap(), before, "F-KEEP byte-identical");
    assert!(outcome.status.success(), "powered off: {}", outcome.status);
}

/// One boot, a surface scan of two disks at once before a short test,
/// every disk holding data:
/// - `S-ERR`: blkdebug read errors (EIO) at sectors 8192, 8200 and 100000:
///   the 1 MiB reads over them fail and are narrowed to exactly those three
///   LBAs; every other block is read; the kernel's I/O error lines for it
///   are in `kernel_log`, during `surface_scan`;
/// - `S-SLOW`: throttled to 16 MB/s (QEMU's `bps`): once QEMU's burst is
///   spent, its 1 MiB reads take about 65 ms each, 50 ms or more.
///
/// Neither disk has changed a byte.
#[test]
fn f3_surface_scan_narrows_read_errors_to_their_lbas_and_classes_a_slow_disk() {
    let Some(a) = artifacts("f3_scan") else {
        return;
    };
    let dir = scratch("f3_scan");
    let specs = disks(&[
        "virtio,size=64M,serial=S-ERR,fault=read_aio:5:8192,fault=read_aio:5:8200,fault=read_aio:5:100000",
        "virtio,size=32M,serial=S-SLOW,bps=16M",
    ]);
    let (files, before) = disks_with_contents(&specs, &dir, |i| Some(700 + i as u64));
    let config = json!({
        "targets": [{"serial": "S-ERR"}, {"serial": "S-SLOW"}],
        "tests": [{"workload": "seq_read", "name": "after", "bs": "1M", "size": "1M"}],
        "surface_scan": {"zones": 8}
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    let after: Vec<_> = files.iter().map(|f| checksum(f).unwrap()).collect();
    assert_eq!(before, after, "a scanned disk changed");

    let s = &target_by_serial(&doc, "S-ERR")["surface_scan"];
    assert_eq!(s["end"], "done", "{s}");
    assert_eq!(s["unreadable_lbas"], json!([8192, 8200, 100000]), "{s}");
    // Two reads cover the three sectors; QEMU's virtio-blk merges adjacent
    // requests in flight into one, so a neighbour (of the 4 in flight)
    // merged with a failing read fails with it (its blocks then all read
    // when narrowed).
    let failed = s["failed_reads"].as_u64().unwrap();
    assert!((2..=8).contains(&failed), "{s}");
    assert_eq!(s["read_bytes"], json!((64u64 << 20) - 3 * 512), "{s}");
    assert_eq!(s["recovered_lbas"], json!([]), "{s}");
    // The kernel logged the failed reads, during the scan, for that disk.
    let path = target_by_serial(&doc, "S-ERR")["path"].as_str().unwrap().to_string();
    let lines: Vec<&Value> = doc["kernel_log"]
        .as_array()
        .map(|a| a.iter().filter(|l| l["target"] == path.as_str()).collect())
        .unwrap_or_default();
    assert!(
        lines
            .iter()
            .any(|l| l["kind"] == "io_error" && l["test"] == "surface_scan"),
        "{}",
        doc["kernel_log"]
    );

    let s = &target_by_serial(&doc, "S-SLOW")["surface_scan"];
    assert_eq!((&s["end"], &s["reads"]), (&json!("done"), &json!(32)), "{s}");
    let class = |i: usize| s["classes"][i]["reads"].as_u64().unwrap();
    // At 16 MB/s a 1 MiB read takes about 65 ms, once QEMU's throttle has
    // let its first burst through (fast) and when its timer releases one
    // read at a time (it sometimes releases several after a longer wait).
    assert!(
        class(3) + class(4) + class(5) >= 16,
        "at least half the reads take 50 ms or more: {}",
        s["classes"]
    );
    for serial in ["S-ERR", "S-SLOW"] {
        assert_eq!(
            tests_on(&doc, serial)[0]["status"]["state"],
            "ok",
            "{serial}: the test after the scan"
        );
    }
    assert!(
        outcome.serial.contains("surface scan done"),
        "the console says each scan's end"
    );
}

/// One boot, a burn-in (badblocks' first two patterns) of the two disks
/// `destructive` names, then a short test:
/// - `B-WERR`: a blkdebug write error (EIO) at sector 8192: each pass's
///   1 MiB write over it fails, is narrowed, and exactly LBA 8192 is
///   unwritable in both passes; every other block is written and read back
///   with its pattern; the kernel's I/O error lines for it are in
///   `kernel_log`, during `burn_in`; the verdict fails it;
/// - `B-OK`: every block written and checked in both passes, no bad block,
///   the disk left holding the last pattern under the scratch label;
/// - `B-KEEP` (not named, holding data): no burn-in, byte-identical.
///
/// The test after the burn-in runs on every disk.
#[test]
fn f4_burn_in_records_an_unwritable_block_and_the_run_goes_on() {
    let Some(a) = artifacts("f4_burn") else {
        return;
    };
    let dir = scratch("f4_burn");
    let specs = disks(&[
        "virtio,size=32M,serial=B-WERR,fault=write_aio:5:8192",
        "virtio,size=32M,serial=B-OK",
        "virtio,size=32M,serial=B-KEEP",
    ]);
    let (files, before) = disks_with_contents(&specs, &dir, |i| (i == 2).then_some(71));
    let config = json!({
        "targets": [{"serial": "B-WERR"}, {"serial": "B-OK"}, {"serial": "B-KEEP"}],
        "tests": [{"workload": "seq_read", "name": "after", "bs": "1M", "size": "1M"}],
        "destructive": {
            "confirm": "I understand this destroys data",
            "countdown": 0,
            "targets": [{"serial": "B-WERR"}, {"serial": "B-OK"}]
        },
        "burn_in": {"patterns": ["0xaa", "0x55"]}
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(checksum(&files[2]).unwrap(), before[2], "B-KEEP changed");
    assert!(target_by_serial(&doc, "B-KEEP").get("burn_in").is_none());
    assert!(
        outcome.serial.contains("burn-in (WRITES, destroys the data of): "),
        "the booted plan says which disks the burn-in writes"
    );

    const SIZE: u64 = 32 << 20;
    let b = &target_by_serial(&doc, "B-WERR")["burn_in"];
    assert_eq!(b["end"], "done", "{b}");
    assert_eq!(b["unwritable_lbas"], json!([8192]), "{b}");
    assert_eq!(b["mismatched_lbas"], json!([]), "{b}");
    for p in b["passes"].as_array().unwrap() {
        assert_eq!(p["unwritable_lbas"], json!([8192]), "{p}");
        assert_eq!(p["written_bytes"], json!(SIZE - 512), "{p}");
        // QEMU's virtio-blk merges adjacent writes in flight, so a
        // neighbour merged with the failing write fails with it (its
        // blocks then written when narrowed).
        let failed = p["failed_writes"].as_u64().unwrap();
        assert!((1..=4).contains(&failed), "{p}");
        // The unwritable block may be unreadable too (it holds what it
        // held); every other block is read back.
        let unreadable = p["unreadable_lbas"].as_array().unwrap().len() as u64;
        assert!(unreadable <= 1, "{p}");
        assert_eq!(p["verified_bytes"], json!(SIZE - 512 * unreadable), "{p}");
    }
    let path = target_by_serial(&doc, "B-WERR")["path"].as_str().unwrap().to_string();
    assert!(
        doc["kernel_log"].as_array().is_some_and(|a| a
            .iter()
            .any(|l| l["target"] == path.as_str() && l["kind"] == "io_error" && l["test"] == "burn_in")),
        "{}",
        doc["kernel_log"]
    );
    let verdict = doc["acceptance"]["targets"]
        .as_array()
        .and_then(|v| v.iter().find(|t| t["serial"] == "B-WERR"))
        .expect("B-WERR's verdict");
    assert_eq!(verdict["verdict"], "fail", "{verdict}");

    let b = &target_by_serial(&doc, "B-OK")["burn_in"];
    assert_eq!(b["end"], "done", "{b}");
    for p in b["passes"].as_array().unwrap() {
        assert_eq!(
            (&p["written_bytes"], &p["verified_bytes"]),
            (&json!(SIZE), &json!(SIZE)),
            "{p}"
        );
        assert_eq!(p["failed_writes"], 0, "{p}");
    }
    let data = std::fs::read(&files[1]).unwrap();
    assert!(data[4096..].iter().all(|&x| x == 0x55), "B-OK holds the last pattern");
    for serial in ["B-WERR", "B-OK", "B-KEEP"] {
        assert_eq!(
            tests_on(&doc, serial)[0]["status"]["state"],
            "ok",
            "{serial}: the test after"
        );
    }
    assert!(
        outcome.serial.contains("burn-in done"),
        "the console says each burn-in's end"
    );
}

/// One boot, 24 disks (a storage server's bays): the surface scan reads all
/// 24 at once, each on its own thread (every disk's `started` line comes
/// before the first `done`), the burn-in writes the 12 that `destructive`
/// names at once, and the all-at-once read runs on all 24 together. Each
/// disk is scanned whole; each granted disk is verified whole; the 12 not
/// named are byte-identical and have no burn-in.
#[test]
fn f5_twenty_four_disks_are_scanned_and_burnt_in_at_once() {
    let Some(a) = artifacts("f5_24_disks") else {
        return;
    };
    let dir = scratch("f5_24_disks");
    let names: Vec<String> = (1..=24).map(|i| format!("M-{i:02}")).collect();
    let specs = disks(
        &names
            .iter()
            .map(|n| format!("virtio,size=16M,serial={n}"))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    // The first 12 blank (granted), the others holding data (not named).
    let (files, before) = disks_with_contents(&specs, &dir, |i| (i >= 12).then_some(900 + i as u64));
    let config = json!({
        "targets": names.iter().map(|n| json!({"serial": n})).collect::<Vec<_>>(),
        "tests": [{"workload": "seq_read", "name": "read", "bs": "1M", "size": "4M"}],
        "all_at_once": true,
        "scaling": true,
        "destructive": {
            "confirm": "I understand this destroys data",
            "countdown": 0,
            "targets": names[..12].iter().map(|n| json!({"serial": n})).collect::<Vec<_>>()
        },
        "surface_scan": {"zones": 4},
        "burn_in": {"patterns": ["0xaa"]}
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    for (i, n) in names.iter().enumerate() {
        let t = target_by_serial(&doc, n);
        let s = &t["surface_scan"];
        assert_eq!(
            (&s["end"], &s["read_bytes"]),
            (&json!("done"), &json!(16u64 << 20)),
            "{n}: {s}"
        );
        if i < 12 {
            let b = &t["burn_in"];
            assert_eq!(b["end"], "done", "{n}: {b}");
            assert_eq!(b["passes"][0]["verified_bytes"], json!(16u64 << 20), "{n}: {b}");
        } else {
            assert!(t.get("burn_in").is_none(), "{n}");
            assert_eq!(checksum(&files[i]).unwrap(), before[i], "{n} changed");
        }
    }
    // At once: every disk started before any finished.
    let serial = &outcome.serial;
    for (what, count) in [("surface scan", 24), ("burn-in", 12)] {
        let first_done = serial.find(&format!("{what} done")).expect(what);
        let started = serial[..first_done].matches(&format!("{what} started")).count();
        assert_eq!(started, count, "{what}: every disk started before the first ended");
    }
    let together = doc["all_at_once"].as_array().expect("all_at_once");
    assert_eq!(together.len(), 1);
    let results = together[0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 24, "every disk read together");
    assert!(results.iter().all(|r| r["status"]["state"] == "ok"), "{}", together[0]);
    // Each disk alone against together, in the analysis's all-at-once line.
    let line = |kind: &str| {
        doc["analysis"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["kind"] == kind && l["test"] == "read")
            .unwrap_or_else(|| panic!("no {kind} line: {}", doc["analysis"]))
            .clone()
    };
    let alone: f64 = names
        .iter()
        .map(|n| tests_on(&doc, n)[0]["summary"]["read_bytes_per_sec"].as_f64().unwrap())
        .sum();
    let all = line("all_at_once");
    assert!((all["expected"].as_f64().unwrap() / alone - 1.0).abs() < 1e-9, "{all}");
    // Scaling: the read on the first 2, 4, 8 and 16 disks at once before
    // all 24, each point's sum that of its disks' results.
    let points = together[0]["scaling"].as_array().expect("scaling points");
    let widths: Vec<usize> = points.iter().map(|p| p["targets"].as_array().unwrap().len()).collect();
    assert_eq!(widths, vec![2, 4, 8, 16]);
    for p in points {
        let t = p["targets"].as_array().unwrap();
        let first: Vec<String> = names[..t.len()]
            .iter()
            .map(|n| path_of(target_by_serial(&doc, n)).to_string())
            .collect();
        assert_eq!(
            t.iter().map(|v| v.as_str().unwrap().to_string()).collect::<Vec<_>>(),
            first
        );
        assert!(
            p["ok"] == true && p["read_bytes_per_sec"].as_f64().unwrap() > 0.0,
            "{p}"
        );
    }
    let scaling = line("scaling");
    let rule = scaling["rule"].as_str().unwrap();
    assert!(
        rule.starts_with("scaling: 1 disk: ") && rule.contains(", 16 disks: ") && rule.contains(", 24 disks: "),
        "{rule}"
    );
    assert!(
        rule.contains("; the sum stops growing past ") || rule.ends_with("; the sum grows with every disk added"),
        "{rule}"
    );
    eprintln!("f5: {rule}");
}

/// `parallel: true` on 24 virtio disks in one boot: every disk's
/// benchmarks start before any test ends, each disk runs its two tests in
/// order, the document holds them in disk and plan order, all `ok`; every
/// disk is byte-identical (reads only).
#[test]
fn f6_twenty_four_disks_are_benchmarked_at_once() {
    let Some(a) = artifacts("f6_24_parallel") else {
        return;
    };
    let dir = scratch("f6_24_parallel");
    let names: Vec<String> = (1..=24).map(|i| format!("P-{i:02}")).collect();
    let specs = disks(
        &names
            .iter()
            .map(|n| format!("virtio,size=16M,serial={n}"))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let (files, before) = disks_with_contents(&specs, &dir, |i| Some(1100 + i as u64));
    let config = json!({
        "targets": names.iter().map(|n| json!({"serial": n})).collect::<Vec<_>>(),
        "tests": [
            {"workload": "seq_read", "name": "read", "bs": "1M", "size": "4M"},
            {"workload": "rand_read", "name": "rand", "bs": "4k", "runtime": "500ms"}
        ],
        "parallel": true
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    let serial = &outcome.serial;
    let first_end = serial.find("[test ").expect("test endings");
    assert_eq!(
        serial[..first_end].matches("benchmarks started on ").count(),
        24,
        "every disk started before any test ended"
    );
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 48);
    for (i, n) in names.iter().enumerate() {
        let path = path_of(target_by_serial(&doc, n));
        for (k, name) in ["read", "rand"].iter().enumerate() {
            let t = &tests[2 * i + k];
            assert_eq!(
                (t["target"].as_str(), t["name"].as_str()),
                (Some(path), Some(*name)),
                "{n}"
            );
            assert_eq!(t["status"]["state"], "ok", "{n} {name}: {}", t["status"]);
        }
    }
    let after: Vec<_> = files.iter().map(|f| checksum(f).unwrap()).collect();
    assert_eq!(before, after, "reads only: every disk unchanged");
}
