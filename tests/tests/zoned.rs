//! End to end in QEMU (TCG): zoned drives are judged as what they are
//! (docs/acceptance.md, "Zoned drives"). Same harness as `e2e.rs`; tests
//! tiered by name (`z` for zoned).
//!
//! - `z1`: an NVMe ZNS namespace (QEMU's `nvme-ns` with `zoned=true`: 16
//!   zones of 4 MiB, 3 MiB of each writable, at most 4 open and 6 active)
//!   beside an ordinary virtio disk, with a config that reads both, would
//!   write the namespace at random (granted; it has no conventional zone) and
//!   burn it in at random. The namespace's zones
//!   are found and recorded before and after the run (the model, the zone
//!   size and capacity, the limits, every zone empty both times: nothing
//!   opened, wrote or reset a zone), the console says them, the reads
//!   run on both disks, the write test and the random burn-in are not run
//!   on the namespace and say why (host-managed), the surface scan reads only
//!   what holds data on it (nothing, every zone empty; the other disk
//!   whole), the zones rule passes, the run ends without an error, and
//!   neither disk's bytes changed.
//! - `z2`: a host-managed SCSI disk (ZBC): the kernel's `scsi_debug`, which
//!   the image `make test` boots carries (`EXTRA_MODULES=scsi_debug`), loaded
//!   because the kernel command line names it (`bootbench.modules=`) with
//!   its parameters the standard way (`scsi_debug.zbc=managed`, 64 MiB in 16
//!   zones of 4 MiB, the first 2 conventional, at most 4 open;
//!   `vpd_use_hostno=0` makes its unit serial `2000` whatever the SCSI host
//!   number), beside an ordinary virtio disk, with reads, a write test and a
//!   surface scan, the scsi_debug disk granted. The document records the
//!   module loaded with its parameters; the disk is found host-managed with
//!   its conventional zones counted, its zone report after the run equals
//!   the one before (no write pointer moved: scsi_debug keeps its data in
//!   the guest's RAM, so the report is the proof, not a checksum), the
//!   reads run, the write test (through the page cache: it could reach a
//!   zone out of order) is refused for being host-managed, the scan
//!   reads the conventional zones only (every sequential zone is empty),
//!   the run ends ok, and the virtio disk's bytes did not change.
//! - `z4`: the burn-in on a granted ZNS namespace goes zone by zone: the
//!   zones of its area, each reset before each of its two passes, written
//!   to its capacity and read back, left full as the config asks; a
//!   sequential write then writes the next zone part way. The zone report
//!   after the run shows those zones full, the next one open at its write
//!   pointer, the others empty. The machine then reboots into a second run,
//!   as a server whose operator boots the stick again does (QEMU's ZNS keeps
//!   its zones across a reset, not across a restart of QEMU): its surface
//!   scan meets a partly written namespace (three full zones, one closed part
//!   way, four empty) and reads exactly what the zones hold, with no
//!   unreadable block. After both runs the namespace's backing file holds
//!   the last pattern in each burnt zone's capacity, the write in the next
//!   zone, nothing in the gaps past the capacities or in the zones past
//!   them; the other disk unchanged.

use bootbench_e2e::{
    artifacts, assert_schema_valid, boot, boot_runs, checksum, disks, disks_with_contents, path_of, status_of,
    stick_copy, target_by_serial, tests_at, tests_on, the_document, the_documents, Scratch, Via,
};
use serde_json::json;

const CONFIRM: &str = "I understand this destroys data";

#[test]
fn z1_a_zns_namespace_is_read_and_never_written_or_reset() {
    let Some(a) = artifacts("z1_zns") else {
        return;
    };
    let scratch = Scratch::new("z1_zns");
    let dir = scratch.0.clone();
    let specs = disks(&[
        "nvme,size=64M,serial=Z1-ZNS,ns=1,zone_size=4M,zone_capacity=3M,max_open=4,max_active=6",
        "virtio,size=64M,serial=Z1-PLAIN",
    ]);
    // The namespace blank (a disk a grant may write), the other random.
    let (files, before) = disks_with_contents(&specs, &dir, |i| (i == 1).then_some(4_049));
    let config = json!({
        "tests": [
            {"workload": "seq_read", "name": "seq_read_1m", "bs": "1M", "size": "8M"},
            {"workload": "rand_read", "name": "rand_read_4k", "bs": "4K", "size": "8M", "runtime": "1s"},
            {"workload": "rand_write", "name": "rand_write_4k", "bs": "4K", "size": "4M"}
        ],
        "surface_scan": {},
        "burn_in": {"disks": ["Z1-ZNS"], "length": "8M", "mode": "random"},
        "destructive": {"confirm": CONFIRM, "countdown": 0, "targets": [{"serial": "Z1-ZNS"}]}
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);

    let zns = target_by_serial(&doc, "Z1-ZNS");
    let z = &zns["zoned"];
    assert_eq!(z["model"], "host_managed", "{z}");
    let b = &z["before"];
    assert_eq!(
        (
            &b["zones"],
            &b["zone_size_bytes"],
            &b["zone_capacity_bytes"],
            &b["max_open_zones"],
            &b["max_active_zones"],
            &b["conventional_zones"],
        ),
        (
            &json!(16),
            &json!(4 << 20),
            &json!(3 << 20),
            &json!(4),
            &json!(6),
            &json!(0)
        ),
        "{z}"
    );
    assert_eq!(b["states"]["empty"], 16, "{z}");
    assert_eq!(b["written_bytes"], 0, "{z}");
    assert_eq!(z["after"], z["before"], "the zones after the run are as before: {z}");
    assert!(target_by_serial(&doc, "Z1-PLAIN").get("zoned").is_none(), "not zoned");
    assert!(
        outcome.serial.contains(
            "/dev/nvme0n1: zoned host-managed: 16 zones of 4194304 bytes (4 MiB), capacity 3145728 bytes (3 MiB), 0 conventional; open zones: at most 4, active zones: at most 6; before the run: 16 empty"
        ),
        "the console says the zones"
    );
    assert!(outcome.serial.contains("; after the run: 16 empty"), "and after");

    for serial in ["Z1-ZNS", "Z1-PLAIN"] {
        let tests = tests_on(&doc, serial);
        for name in ["seq_read_1m", "rand_read_4k"] {
            let t = tests.iter().find(|t| t["name"] == name).expect("the read ran");
            assert_eq!(status_of(t), "ok", "{serial} {name}: {}", t["status"]);
        }
    }
    let write = tests_on(&doc, "Z1-ZNS")
        .into_iter()
        .find(|t| t["name"] == "rand_write_4k")
        .expect("the write test is in the document");
    assert_eq!(status_of(write), "skipped", "{}", write["status"]);
    assert!(
        write["status"].to_string().contains("host-managed zoned disk"),
        "skipped for being host-managed: {}",
        write["status"]
    );
    // The scan read what held data on the namespace (nothing: every zone
    // empty), never a block past a write pointer; the other disk whole.
    let scan = &zns["surface_scan"];
    assert_eq!(
        (
            &scan["end"],
            &scan["data_bytes"],
            &scan["read_bytes"],
            &scan["failed_reads"]
        ),
        (&json!("done"), &json!(0), &json!(0), &json!(0)),
        "{scan}"
    );
    let plain = &target_by_serial(&doc, "Z1-PLAIN")["surface_scan"];
    assert_eq!(
        (&plain["end"], &plain["read_bytes"]),
        (&json!("done"), &json!(64 << 20)),
        "{plain}"
    );
    assert!(plain.get("data_bytes").is_none(), "{plain}");
    let burn = zns["burn_in"]["error"].as_str().unwrap_or_default();
    let why = "a random burn-in is not run on a host-managed zoned disk";
    assert!(
        burn.starts_with(why),
        "the random burn-in says why it did not run: {burn}"
    );
    let zones_check = rule_check(&doc, "Z1-ZNS", "zones");
    assert_eq!(zones_check["verdict"], "pass", "{zones_check}");

    let after: Vec<_> = files.iter().map(|f| checksum(f).unwrap()).collect();
    for (i, d) in specs.iter().enumerate() {
        assert_eq!(before[i], after[i], "{} changed", d.name());
    }
}

#[test]
fn z2_a_host_managed_scsi_disk_from_scsi_debug_is_read_and_never_written() {
    let Some(a) = artifacts("z2_scsi_debug") else {
        return;
    };
    let scratch = Scratch::new("z2_scsi_debug");
    let dir = scratch.0.clone();
    let specs = disks(&["virtio,size=64M,serial=Z2-PLAIN"]);
    let (files, before) = disks_with_contents(&specs, &dir, |_| Some(4_051));
    // scsi_debug's unit serial (VPD page 80h) is its LU number, 2000 with vpd_use_hostno=0.
    let config = json!({
        "tests": [
            {"workload": "seq_read", "name": "seq_read_1m", "bs": "1M", "size": "8M"},
            {"workload": "rand_read", "name": "rand_read_4k", "bs": "4K", "size": "8M", "runtime": "1s"},
            {"workload": "seq_write", "name": "seq_write_1m", "bs": "1M", "size": "4M", "direct": false}
        ],
        "surface_scan": {},
        "destructive": {"confirm": CONFIRM, "countdown": 0, "targets": [{"serial": "2000"}]}
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let params = "zbc=managed dev_size_mb=64 zone_size_mb=4 zone_nr_conv=2 zone_max_open=4 vpd_use_hostno=0";
    let append: Vec<String> = std::iter::once("bootbench.modules=scsi_debug".to_string())
        .chain(params.split(' ').map(|p| format!("scsi_debug.{p}")))
        .collect();
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, &append.join(" "));
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);

    // The module: loaded, with the command line's parameters, in the document and on the console.
    assert_eq!(
        doc["host"]["modules"],
        json!([{"name": "scsi_debug", "params": params, "status": "loaded"}]),
        "{}",
        doc["host"]
    );
    assert!(
        outcome.serial.contains(&format!(
            "module scsi_debug ({params}), named by bootbench.modules: loaded"
        )),
        "the console says it"
    );
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);

    let sd = doc["targets"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["model"] == "scsi_debug"))
        .unwrap_or_else(|| panic!("no scsi_debug disk in {}", doc["targets"]));
    assert_eq!(sd["serial"], "2000", "its unit serial: {sd}");
    assert_eq!(sd["writable"], true, "granted by its serial: {sd}");
    let z = &sd["zoned"];
    assert_eq!(z["model"], "host_managed", "{z}");
    let b = &z["before"];
    assert_eq!(
        (
            &b["zones"],
            &b["zone_size_bytes"],
            &b["conventional_zones"],
            &b["max_open_zones"],
            &b["states"]["empty"],
            &b["states"]["not_write_pointer"],
            &b["written_bytes"],
        ),
        (
            &json!(16),
            &json!(4 << 20),
            &json!(2),
            &json!(4),
            &json!(14),
            &json!(2),
            &json!(0)
        ),
        "{z}"
    );
    assert_eq!(z["after"], z["before"], "no write pointer moved, no zone changed: {z}");

    let path = path_of(sd);
    let tests = tests_at(&doc, path);
    for name in ["seq_read_1m", "rand_read_4k"] {
        let t = tests
            .iter()
            .find(|t| t["name"] == name)
            .expect("the read is in the document");
        assert_eq!(status_of(t), "ok", "{name}: {}", t["status"]);
    }
    let write = tests
        .iter()
        .find(|t| t["name"] == "seq_write_1m")
        .expect("the write test is in the document");
    assert_eq!(status_of(write), "skipped", "{}", write["status"]);
    assert!(
        write["status"].to_string().contains("host-managed zoned disk"),
        "skipped for being host-managed: {}",
        write["status"]
    );
    // The scan read the two conventional zones (8 MiB) and no block of a sequential zone
    // (every one empty), with no failed read; the other disk whole.
    let scan = &sd["surface_scan"];
    assert_eq!(
        (
            &scan["end"],
            &scan["data_bytes"],
            &scan["read_bytes"],
            &scan["failed_reads"]
        ),
        (&json!("done"), &json!(8 << 20), &json!(8 << 20), &json!(0)),
        "{scan}"
    );
    let plain = target_by_serial(&doc, "Z2-PLAIN");
    assert!(plain.get("zoned").is_none(), "not zoned: {plain}");
    assert_eq!(
        (&plain["surface_scan"]["end"], &plain["surface_scan"]["read_bytes"]),
        (&json!("done"), &json!(64 << 20)),
        "{}",
        plain["surface_scan"]
    );
    let after: Vec<_> = files.iter().map(|f| checksum(f).unwrap()).collect();
    assert_eq!(before, after, "the virtio disk changed");
}

#[test]
fn z4_a_granted_zns_namespace_is_burnt_in_zone_by_zone_then_scanned_partly_written() {
    let Some(a) = artifacts("z4_zns_burn") else {
        return;
    };
    let scratch = Scratch::new("z4_zns_burn");
    let dir = scratch.0.clone();
    const MIB: u64 = 1 << 20;
    let specs = disks(&[
        "nvme,size=32M,serial=Z4-ZNS,ns=1,zone_size=4M,zone_capacity=3M,max_open=2,max_active=2",
        "virtio,size=16M,serial=Z4-PLAIN",
    ]);
    let (files, before) = disks_with_contents(&specs, &dir, |i| (i == 1).then_some(4_049));
    // Three zones' worth, the last pattern 0xaa, zones left full; then 1 MiB
    // into zone 3; a scan first in each run.
    let config = json!({
        "tests": [
            {"workload": "seq_read", "name": "seq_read_1m", "bs": "1M", "size": "1M"},
            {"workload": "seq_write", "name": "seq_write_zone_3", "bs": "1M", "offset": "12M", "length": "1M"}
        ],
        "surface_scan": {},
        "burn_in": {"disks": ["Z4-ZNS"], "length": "12M", "patterns": ["0x55", "0xaa"], "zones_after": "full"},
        "destructive": {"confirm": CONFIRM, "countdown": 0, "targets": [{"serial": "Z4-ZNS"}]}
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot_runs(&a, &dir, &img, &specs, "", 2);
    let docs = the_documents(&outcome);
    assert_eq!(docs.len(), 2, "two runs");
    let first = &docs[0];
    assert_schema_valid(first);
    assert_eq!(first["run"]["status"], "ok", "run: {}", first["run"]);

    let zns = target_by_serial(first, "Z4-ZNS");
    let burn = &zns["burn_in"];
    assert_eq!((&burn["end"], &burn["error"]), (&json!("done"), &json!(null)), "{burn}");
    assert_eq!(
        burn["zones"],
        json!({"sequential": 3, "conventional": 0, "skipped": 0, "resets": 6, "after": "full"}),
        "three zones, each reset before each of two passes and kept full: {burn}"
    );
    for p in burn["passes"].as_array().expect("passes") {
        assert_eq!(
            (&p["end"], &p["written_bytes"], &p["verified_bytes"]),
            (&json!("done"), &json!(9 * MIB), &json!(9 * MIB)),
            "each pass writes and reads back the three zones' capacities: {p}"
        );
    }
    for k in ["unwritable_lbas", "unreadable_lbas", "mismatched_lbas"] {
        assert_eq!(burn[k], json!([]), "{k}: {burn}");
    }
    assert!(
        outcome.serial.contains("zone by zone over 3 zones, each left full"),
        "the console says how it goes"
    );
    let z = &zns["zoned"];
    assert_eq!(z["before"]["states"]["empty"], 8, "{z}");
    assert_eq!(
        (
            &z["after"]["states"]["full"],
            &z["after"]["states"]["implicit_open"],
            &z["after"]["states"]["empty"],
            &z["after"]["written_bytes"]
        ),
        (&json!(3), &json!(1), &json!(4), &json!(10 * MIB)),
        "the zone report after the first run: {z}"
    );
    let w = tests_on(first, "Z4-ZNS")
        .into_iter()
        .find(|t| t["name"] == "seq_write_zone_3")
        .expect("the write is in the document");
    assert_eq!(status_of(w), "ok", "{}", w["status"]);
    assert_eq!(w["steps"][0]["write"]["bytes"], MIB, "1 MiB into zone 3: {w}");

    the_second_run_scans_a_partly_written_namespace(&docs[1]);

    // The namespace's bytes: 0xaa in each burnt zone's capacity, the write's
    // 1 MiB at zone 3's start, nothing (its blank zeros) in the gaps past the
    // capacities and in the zones past them.
    let data = std::fs::read(&files[0]).expect("the namespace's backing file");
    for (k, zone) in data.chunks(4 << 20).enumerate() {
        let (written, rest) = zone.split_at(3 << 20);
        match k {
            0..=2 => assert!(written.iter().all(|&b| b == 0xaa), "zone {k} holds the last pattern"),
            3 => {
                let (w, unwritten) = written.split_at(1 << 20);
                assert!(w.iter().any(|&b| b != 0), "zone 3 holds the write");
                assert!(
                    unwritten.iter().all(|&b| b == 0),
                    "zone 3: nothing past its write pointer"
                );
            }
            _ => assert!(written.iter().all(|&b| b == 0), "zone {k} untouched"),
        }
        assert!(rest.iter().all(|&b| b == 0), "zone {k}: nothing past its capacity");
    }
    assert_eq!(before[1], checksum(&files[1]).unwrap(), "the other disk unchanged");
}

/// The second run of `z4` (the same plan, rebooted into): it found the
/// namespace as the first left it (zone 3, open part way at the reboot, is
/// closed by the controller's shutdown), and its surface scan, which runs
/// before the run writes anything, read exactly the data the zones hold (the
/// three full zones' capacities and zone 3 up to its write pointer: 10 MiB)
/// with no failed read and no unreadable block; the zones rule passes.
fn the_second_run_scans_a_partly_written_namespace(doc: &serde_json::Value) {
    const MIB: u64 = 1 << 20;
    assert_schema_valid(doc);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);
    let zns = target_by_serial(doc, "Z4-ZNS");
    let b = &zns["zoned"]["before"];
    assert_eq!(
        (
            &b["states"]["full"],
            &b["states"]["closed"],
            &b["states"]["empty"],
            &b["written_bytes"]
        ),
        (&json!(3), &json!(1), &json!(4), &json!(10 * MIB)),
        "the second run finds the zones the first left: {b}"
    );
    let scan = &zns["surface_scan"];
    assert_eq!(
        (
            &scan["end"],
            &scan["data_bytes"],
            &scan["read_bytes"],
            &scan["failed_reads"]
        ),
        (&json!("done"), &json!(10 * MIB), &json!(10 * MIB), &json!(0)),
        "the scan read what the zones hold, nothing unreadable: {scan}"
    );
    assert_eq!(scan["unreadable_lbas"], json!([]), "{scan}");
    assert_eq!(rule_check(doc, "Z4-ZNS", "zones")["verdict"], "pass");
    assert_eq!(rule_check(doc, "Z4-ZNS", "surface_scan")["verdict"], "pass");
}

/// The acceptance verdict's check of `rule` on the disk of `serial`.
fn rule_check<'a>(doc: &'a serde_json::Value, serial: &str, rule: &str) -> &'a serde_json::Value {
    doc["acceptance"]["targets"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["serial"] == serial))
        .and_then(|t| t["checks"].as_array())
        .and_then(|cs| cs.iter().find(|c| c["rule"] == rule))
        .unwrap_or_else(|| panic!("no {rule} check of {serial}"))
}

/// `z3`: on a granted NVMe ZNS namespace (16 zones of 4 MiB, 3 MiB of each
/// writable, at most 4 open and 6 active) beside an ordinary disk that is
/// not granted, a verifying sequential write 4 deep over zones 1 to 3
/// (bytes 4 MiB to 16 MiB), bound by a runtime far longer than it needs,
/// runs zone-aware: the three zones reset first, each written from its
/// start to its capacity (never into the gap up to the next zone), one
/// zone at a time, the walk ending at the area's end (9 MiB written and
/// verified, none wrapped onto a full zone); the zone report after the run
/// shows exactly those three zones full and the others empty (no scratch
/// label: zone 0 is sequential, and the console says why), the test's record says so, and the drive's answer to a read past a write pointer
/// is recorded (QEMU's ZNS returns data: true). A sequential read then
/// reads its whole area (the drive allows it). A random write is refused
/// on the namespace naming the zone model (no conventional zone), and is
/// not run on the ordinary disk, which is not granted and is unchanged.
#[test]
fn z3_a_granted_zns_namespace_is_written_at_its_write_pointers() {
    let Some(a) = artifacts("z3_zns_writes") else {
        return;
    };
    let scratch = Scratch::new("z3_zns_writes");
    let dir = scratch.0.clone();
    let specs = disks(&[
        "nvme,size=64M,serial=Z3-ZNS,ns=1,zone_size=4M,zone_capacity=3M,max_open=4,max_active=6",
        "virtio,size=64M,serial=Z3-PLAIN",
    ]);
    let (files, before) = disks_with_contents(&specs, &dir, |i| (i == 1).then_some(4_051));
    let config = json!({
        "tests": [
            {"workload": "seq_write", "name": "seq_write_zones", "bs": "1M", "iodepth": 4,
             "offset": "4M", "length": "12M", "runtime": "30s", "verify": true},
            {"workload": "seq_read", "name": "seq_read_1m", "bs": "1M", "size": "4M"},
            {"workload": "rand_write", "name": "rand_write_4k", "bs": "4K", "size": "1M"}
        ],
        "destructive": {"confirm": CONFIRM, "countdown": 0, "targets": [{"serial": "Z3-ZNS"}]}
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);

    let zns = target_by_serial(&doc, "Z3-ZNS");
    let z = &zns["zoned"];
    assert_eq!(
        z["reads_past_write_pointer"], true,
        "QEMU's ZNS returns data past the write pointer: {z}"
    );
    let tests = tests_on(&doc, "Z3-ZNS");
    let find = |name: &str| {
        *tests
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} is in the document"))
    };
    let w = find("seq_write_zones");
    assert_eq!(status_of(w), "ok", "{}", w["status"]);
    assert_eq!(
        w["zones"],
        json!({"mode": "write_pointers", "area_bytes": 9 << 20, "extents": 3, "zones_reset": 3, "zones_written": 3}),
        "{}",
        w["zones"]
    );
    let step = &w["steps"][0];
    assert_eq!(
        step["write"]["bytes"],
        9 << 20,
        "the walk ends at the area's end: {step}"
    );
    assert_eq!(step["verified_bytes"], 9 << 20, "everything written read back: {step}");
    let after = &z["after"];
    // Zones 1 to 3 full, the rest empty: no scratch label in zone 0.
    assert_eq!(
        (
            &after["states"]["full"],
            &after["states"]["implicit_open"],
            &after["states"]["empty"],
            &after["written_bytes"]
        ),
        (&json!(3), &json!(0), &json!(13), &json!(9 << 20)),
        "zones 1 to 3 full, the rest empty: {z}"
    );
    assert!(
        outcome
            .serial
            .contains("no scratch label: a host-managed zoned disk whose first zone is sequential"),
        "the console says why the namespace has no label"
    );
    assert_eq!(z["before"]["states"]["empty"], 16, "{z}");
    assert!(
        outcome
            .serial
            .contains("zone-aware: sequential writes at the write pointers"),
        "the console says how the test met the zones"
    );
    let r = find("seq_read_1m");
    assert_eq!(status_of(r), "ok", "{}", r["status"]);
    assert_eq!(r["zones"]["mode"], "whole_area", "{}", r["zones"]);
    let rw = find("rand_write_4k");
    assert_eq!(status_of(rw), "skipped", "{}", rw["status"]);
    assert!(
        rw["status"].to_string().contains(
            "host-managed zoned disk with no conventional zones: random writes are refused by sequential-write-required zones"
        ),
        "{}",
        rw["status"]
    );
    for t in tests_on(&doc, "Z3-PLAIN") {
        if t["name"] != "seq_read_1m" {
            assert_eq!(status_of(t), "skipped", "not granted: {}", t["status"]);
        }
        assert!(t.get("zones").is_none(), "not zoned: {t}");
    }
    assert_eq!(
        before[1],
        checksum(&files[1]).unwrap(),
        "the disk that is not granted is unchanged"
    );
}
