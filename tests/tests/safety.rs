//! End to end in QEMU (TCG): bootbench never writes where the config did not
//! say so, and nothing it sets up in the kernel does either (issue 10).
//! Same harness as `e2e.rs`; tests tiered by name (`d` for data safety).
//!
//! What each test proves:
//! - `d1`: md arrays over disks that are not writable run read-only in the
//!   kernel. raid1 and raid5 over members nobody named writable, with a
//!   blkdebug read error (reads only: a repair write would succeed) on a
//!   member at a sector the tests read: the arrays' reads complete, the
//!   results record `mode` `read-only`, and every member image is
//!   byte-identical afterwards. A read-write array would repair the error by
//!   writing the sector back (from the other mirror, or rebuilt from
//!   parity), onto a disk nobody named. A linear layer on the raid1 is
//!   loaded read-only too (DM_READONLY_FLAG; the kernel reports it so).
//! - `d2`: a grant names exactly one whole disk. An NVMe controller with
//!   two namespaces (both report the controller's serial) and that serial
//!   in `destructive`: a config error naming both namespaces (with their
//!   WWNs, which name one each), and neither namespace nor a bystander
//!   changes. Before, the serial granted both namespaces and both were
//!   written.

use bootbench_e2e::{
    artifacts, assert_schema_valid, boot, by_stack, checksum, disks, fill_random, path_of, status_of, stick_copy,
    tests_on, the_document, Scratch, Via,
};
use serde_json::{json, Value};

const CONFIRM: &str = "I understand this destroys data";

/// The tests on the target at `path`.
fn tests_at<'a>(doc: &'a Value, path: &str) -> Vec<&'a Value> {
    doc["tests"]
        .as_array()
        .map(|t| t.iter().filter(|t| t["target"] == path).collect())
        .unwrap_or_default()
}

#[test]
fn d1_arrays_over_disks_not_writable_are_read_only_and_repair_nothing() {
    let Some(a) = artifacts("d1_read_only_arrays") else {
        return;
    };
    let scratch = Scratch::new("d1_read_only_arrays");
    let dir = scratch.0.clone();
    // Sector 8192 = 4 MiB into a member. raid1: each mirror fails at its own
    // sector (4 MiB and 6 MiB), so whichever mirror md reads from meets an
    // error while the other holds the block. raid5 (3 members, 64 KiB
    // chunks, left-symmetric): member 0's 4 MiB is stripe 64, a data chunk
    // (stripe 64's parity is on member 1), at 8 MiB into the array.
    let specs = disks(&[
        "virtio,size=32M,serial=D1-R1-A,fault=read_aio:5:8192:read",
        "virtio,size=32M,serial=D1-R1-B,fault=read_aio:5:12288:read",
        "virtio,size=32M,serial=D1-R5-A,fault=read_aio:5:8192:read",
        "virtio,size=32M,serial=D1-R5-B",
        "virtio,size=32M,serial=D1-R5-C",
    ]);
    let files: Vec<_> = specs.iter().map(|d| d.backing_file(&dir.join("disks"))).collect();
    std::fs::create_dir_all(dir.join("disks")).unwrap();
    for (i, (d, f)) in specs.iter().zip(&files).enumerate() {
        fill_random(f, d.size, 700 + i as u64).unwrap();
    }
    let before: Vec<_> = files.iter().map(|f| checksum(f).unwrap()).collect();
    let m = |s: &str| json!({"serial": s});
    let config = json!({
        "defaults": {"iodepth": 1, "jobs": 1},
        "tests": [{"workload": "seq_read", "name": "seq_read_16m", "bs": "1M", "size": "16M"}],
        "arrays": [
            {"name": "r1", "level": "raid1", "members": [m("D1-R1-A"), m("D1-R1-B")]},
            {"name": "r5", "level": "raid5", "chunk": "64k", "members": [m("D1-R5-A"), m("D1-R5-B"), m("D1-R5-C")]}
        ],
        "layers": [{"name": "lv", "kind": "linear", "on": "r1"}]
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    for name in ["r1", "r5", "lv"] {
        let t = by_stack(&doc, name);
        assert_eq!(t["stack"]["mode"], "read-only", "{name}: {}", t["stack"]);
        let tests = tests_at(&doc, path_of(t));
        assert_eq!(tests.len(), 1, "{name}");
        assert_eq!(
            status_of(tests[0]),
            "ok",
            "{name}: a read-only array reads around a member's error: {}",
            tests[0]["status"]
        );
    }
    // The member alone meets its error: the fault is real.
    for serial in ["D1-R1-A", "D1-R1-B", "D1-R5-A"] {
        let alone = tests_on(&doc, serial);
        assert_eq!(status_of(alone[0]), "error", "{serial}: {}", alone[0]["status"]);
    }
    assert!(
        outcome.serial.contains("no md or dm device remains"),
        "stacks torn down"
    );
    let after: Vec<_> = files.iter().map(|f| checksum(f).unwrap()).collect();
    for (i, d) in specs.iter().enumerate() {
        assert_eq!(
            before[i], after[i],
            "{}: a member nobody named writable changed",
            d.serial
        );
    }
}

#[test]
fn d2_a_serial_shared_by_two_nvme_namespaces_grants_nothing() {
    let Some(a) = artifacts("d2_shared_serial") else {
        return;
    };
    let scratch = Scratch::new("d2_shared_serial");
    let dir = scratch.0.clone();
    let specs = disks(&[
        "nvme,size=16M,serial=D2-NVME,ns=1",
        "nvme,size=16M,serial=D2-NVME,ns=2",
        "virtio,size=16M,serial=D2-BYSTANDER",
    ]);
    let files: Vec<_> = specs.iter().map(|d| d.backing_file(&dir.join("disks"))).collect();
    std::fs::create_dir_all(dir.join("disks")).unwrap();
    // The namespaces blank (zeros: writable but for the shared serial), the bystander random.
    fill_random(&files[2], specs[2].size, 710).unwrap();
    let before: Vec<_> = files
        .iter()
        .zip(&specs)
        .map(|(f, d)| {
            if !f.exists() {
                std::fs::File::create(f).and_then(|h| h.set_len(d.size)).unwrap();
            }
            checksum(f).unwrap()
        })
        .collect();
    let config = json!({
        "tests": [{"workload": "seq_write", "name": "seq_write_1m", "bs": "1M", "size": "4M"}],
        "destructive": {"confirm": CONFIRM, "targets": [{"serial": "D2-NVME"}]}
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "error", "run: {}", doc["run"]);
    let why = doc["run"]["error"].as_str().unwrap_or_default();
    assert!(
        why.starts_with("destructive.targets[0]: serial D2-NVME names 2 devices: /dev/nvme0n1 (WWN ")
            && why.contains(", /dev/nvme0n2 (WWN "),
        "the error names both namespaces: {why:?}"
    );
    assert!(doc["tests"].as_array().is_some_and(Vec::is_empty), "nothing ran");
    let after: Vec<_> = files.iter().map(|f| checksum(f).unwrap()).collect();
    for (i, d) in specs.iter().enumerate() {
        assert_eq!(before[i], after[i], "{} changed", d.name());
    }
}
