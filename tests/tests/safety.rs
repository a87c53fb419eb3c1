//! End to end in QEMU (TCG): bootbench never writes where the config did not
//! say so, and nothing it sets up in the kernel does either (docs/safety.md).
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
//! - `d3`: the stick is the partition the machine booted from. An old
//!   bootbench image on an internal NVMe disk (another build: another
//!   partition GUID), whose config would write a bystander, beside the
//!   real stick booted under UEFI: the stick's config runs (the partition
//!   GRUB was loaded from names it: `probe --part-uuid`, passed on), its results go to the stick, the old
//!   image and the bystander are byte-identical. Before, the first
//!   labelled FAT by name (the NVMe's) was taken, its config ran and wrote
//!   the bystander.
//! - `d4`: the same two sticks, booted directly (no EFI variable, no
//!   `bootbench.stick=`): neither can be told to be the boot stick, so no
//!   config is read from either, the read-only default runs, the results
//!   come out on the console only, and both images and the bystander are
//!   byte-identical.

use std::path::{Path, PathBuf};

use bootbench_e2e::{
    artifacts, assert_schema_valid, boot, by_stack, checksum, disks, disks_with_contents, path_of, set_partition_guid,
    status_of, stick_copy, tests_at, tests_on, the_document, Artifacts, Scratch, Via,
};
use bootbench_qemu::stick;
use serde_json::json;

const CONFIRM: &str = "I understand this destroys data";

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
    let (files, before) = disks_with_contents(&specs, &dir, |i| Some(700 + i as u64));
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
    // The namespaces blank (zeros: writable but for the shared serial), the bystander random.
    let (files, before) = disks_with_contents(&specs, &dir, |i| (i == 2).then_some(710));
    let config = json!({
        "tests": [{"workload": "seq_write", "name": "seq_write_1m", "bs": "1M", "size": "4M"}],
        "destructive": {"confirm": CONFIRM, "countdown": 0, "targets": [{"serial": "D2-NVME"}]}
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

/// The real stick (its config runs one read named `from_the_boot_stick`)
/// and an old image of another build (another partition GUID) whose
/// config would write the bystander `D-BYSTANDER`, as the backing file of
/// an NVMe disk; and the disk specs: the old image's NVMe, the bystander.
fn two_sticks(a: &Artifacts, dir: &Path) -> (PathBuf, PathBuf, Vec<bootbench_qemu::disk::DiskSpec>) {
    let real = stick_copy(
        a,
        dir,
        Some(&json!({"tests": [{"workload": "seq_read", "name": "from_the_boot_stick", "bs": "1M", "size": "4M"}]})),
    );
    let old_dir = dir.join("old");
    std::fs::create_dir_all(&old_dir).unwrap();
    let old = stick_copy(
        a,
        &old_dir,
        Some(&json!({
            "tests": [{"workload": "seq_write", "name": "from_the_old_image", "bs": "1M", "size": "4M"}],
            "destructive": {"confirm": CONFIRM, "countdown": 0, "targets": [{"serial": "D-BYSTANDER"}]}
        })),
    );
    set_partition_guid(&old, "0ddba11c-0000-4000-8000-000000000001").unwrap();
    let specs = disks(&[
        &format!("nvme,size=128M,serial=D-OLDIMAGE,file={}", old.display()),
        "virtio,size=64M,serial=D-BYSTANDER",
    ]);
    (real, old, specs)
}

#[test]
fn d3_uefi_the_stick_is_the_partition_the_machine_booted_from() {
    let Some(a) = artifacts("d3_boot_partition") else {
        return;
    };
    let scratch = Scratch::new("d3_boot_partition");
    let dir = scratch.0.clone();
    let (real, old, specs) = two_sticks(&a, &dir);
    let bystander = specs[1].backing_file(&dir.join("disks"));
    let before = (checksum(&old).unwrap(), real.clone());
    let outcome = boot(&a, &dir, Via::Uefi, &real, &specs, "");
    let (name, bytes, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    let names: Vec<&str> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default())
        .collect();
    assert!(
        !names.is_empty() && names.iter().all(|n| *n == "from_the_boot_stick"),
        "the boot stick's config ran: {names:?}"
    );
    assert!(
        outcome.serial.contains("(the boot partition ") && outcome.serial.contains("by GRUB's probe --part-uuid"),
        "the console says how the stick was found"
    );
    // The results on the boot stick; the old image and the bystander untouched.
    let copied = stick::copy_results(&before.1, &dir.join("copied")).unwrap();
    assert_eq!(copied, std::slice::from_ref(&name));
    assert_eq!(
        bench_core::document::frame::compact_json(&std::fs::read(dir.join("copied").join(&name)).unwrap()),
        bytes
    );
    assert_eq!(checksum(&old).unwrap(), before.0, "the old image is byte-identical");
    let zeros = std::fs::read(&bystander).unwrap();
    assert!(zeros.iter().all(|&b| b == 0), "the bystander is untouched");
}

#[test]
fn d4_two_sticks_and_no_way_to_tell_read_no_config_and_write_no_stick() {
    let Some(a) = artifacts("d4_two_sticks") else {
        return;
    };
    let scratch = Scratch::new("d4_two_sticks");
    let dir = scratch.0.clone();
    let (real, old, specs) = two_sticks(&a, &dir);
    let bystander = specs[1].backing_file(&dir.join("disks"));
    let before = (checksum(&real).unwrap(), checksum(&old).unwrap());
    // The read-only default (standard), not the sticks' configs; the
    // command line's profile (quick, to keep the boot short) still applies.
    let outcome = boot(&a, &dir, Via::Direct, &real, &specs, "bootbench.profile=quick");
    let (name, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(
        doc["run"]["profile"], "quick",
        "the read-only default ran: {}",
        doc["run"]
    );
    assert_eq!(doc["run"]["config_source"], "builtin");
    let targets: Vec<&str> = doc["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["serial"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(targets, ["D-BYSTANDER"], "neither stick's disk is a target");
    assert!(
        outcome
            .serial
            .contains("no boot stick trusted: 2 FATs labelled BOOTBENCH"),
        "the console says why"
    );
    assert_eq!(name, "unknown.json", "no stick file");
    assert_eq!(checksum(&real).unwrap(), before.0, "the real stick is byte-identical");
    assert_eq!(checksum(&old).unwrap(), before.1, "the old image is byte-identical");
    let zeros = std::fs::read(&bystander).unwrap();
    assert!(zeros.iter().all(|&b| b == 0), "the bystander is untouched");
}
