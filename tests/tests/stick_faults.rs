//! End to end in QEMU (TCG): the boot stick failing, and PID 1's worker
//! failing, while results are saved. Six short boots (one 64 MiB virtio disk, one
//! 4 MiB read each), same harness as `e2e.rs`:
//! - `f1`: a stick whose FAT has every free cluster marked bad (a worn-out
//!   stick: files read, nothing new can be written, the kernel's FAT driver
//!   fails the write with ENOSPC): the console says why, the result comes
//!   out framed on the serial console, the stick's earlier result file is
//!   byte-identical and no other file is left in `/results`.
//! - `f2`: a forced panic in PID 1's worker after the first test (the test-only key
//!   `bootbench.test_panic=after_first_test`): PID 1 saves what ran
//!   (framed on the console and on the stick, the same bytes) and powers
//!   off; the kernel never panics.
//! - `f3`: QEMU killed (SIGKILL) half-way through the result write (the
//!   test-only key `bootbench.test_hold=mid_result_write` stops the write
//!   there, so the kill is not a matter of timing): the earlier result is
//!   byte-identical and no file a reader takes for a result is added; what
//!   the cut write left is a temp file that the stick copy passes over.
//!
//! - `f4`: a write-protected stick (QEMU `readonly=on`): PID 1 mounts it
//!   read-only, still reads its config, says the stick is read-only, and
//!   the result comes out framed; the stick image is byte-identical.
//! - `f5`: the worker aborts after the first test (the test-only key
//!   `bootbench.test_abort=after_first_test`: SIGABRT, no panic hook runs):
//!   PID 1 saves what it reported (stick and console, the same bytes),
//!   marked with how the worker ended, and powers off; no kernel panic.
//! - `f6`: a `bootbench.json` one byte over 1 MiB: an error document naming
//!   the file, the size and the bound; nothing runs; a clean power off.
//!
//! Not covered here: a FAT the kernel refuses to mount; init's unit tests
//! cover failed mounts.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use bootbench_e2e::{
    artifacts, assert_schema_valid, boot, disks, scratch, status_of, stick_copy, the_document, Via, BOOT_TIMEOUT,
};
use bootbench_qemu::cmdline::{self, Boot, Chipset, Machine};
use bootbench_qemu::run;
use bootbench_qemu::stick;
use serde_json::{json, Value};

/// The result file already on the stick before each boot (PID 1 names the
/// machine `unknown`: QEMU gives no DMI serial).
const EARLIER_NAME: &str = "unknown-1.json";
const EARLIER: &[u8] = b"{\"earlier\": \"a result from an earlier boot\"}\n";

/// Boots in this file one at a time (also when run with several threads).
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Two short reads, so a panic after the first leaves one result out.
fn config() -> Value {
    json!({"tests": [
        {"workload": "seq_read", "name": "first", "bs": "1M", "size": "4M"},
        {"workload": "seq_read", "name": "second", "bs": "1M", "size": "4M"}
    ]})
}

/// A stick copy with the config and the earlier result on it.
fn stick_with_earlier(a: &bootbench_e2e::Artifacts, dir: &Path) -> std::path::PathBuf {
    let img = stick_copy(a, dir, Some(&config()));
    let local = dir.join(EARLIER_NAME);
    std::fs::write(&local, EARLIER).unwrap();
    stick::put_file(&img, &local, &format!("/results/{EARLIER_NAME}")).unwrap();
    img
}

/// The earlier result, copied off the stick: present and byte-identical.
fn assert_earlier_intact(img: &Path, dir: &Path) -> Vec<String> {
    let out = dir.join("copied");
    let copied = stick::copy_results(img, &out).expect("copy the stick's results");
    assert!(copied.contains(&EARLIER_NAME.to_string()), "{copied:?}");
    assert_eq!(
        std::fs::read(out.join(EARLIER_NAME)).unwrap(),
        EARLIER,
        "the earlier result is byte-identical"
    );
    copied
}

/// A direct kernel boot of the artifacts with `stick` (write-protected if
/// `readonly`), the disks of `specs` and `append` on the command line, for
/// the tests that drive `run` themselves.
fn direct_machine(
    a: &bootbench_e2e::Artifacts,
    dir: &Path,
    stick: &Path,
    specs: &[bootbench_qemu::disk::DiskSpec],
    append: &str,
    readonly: bool,
) -> Machine {
    let accel = std::env::var("BOOTBENCH_ACCEL").unwrap_or_else(|_| "tcg".into());
    Machine {
        chipset: Chipset::Pc,
        accel: run::choose_accel(accel.parse().expect("BOOTBENCH_ACCEL"), &a.vmlinuz, dir),
        memory_mib: 1024,
        cpus: 2,
        serial_log: dir.join("serial.log"),
        extra_serials: Vec::new(),
        system_serial: None,
        boot: Boot::Direct {
            kernel: a.vmlinux.clone(),
            initrd: Some(a.initramfs.clone()),
            append: cmdline::default_append(append),
        },
        stick: Some(stick.to_path_buf()),
        stick_readonly: readonly,
        reboots: false,
        disks: run::prepare_disks(specs, dir).expect("prepare disks"),
        net: None,
        numa: None,
        tpm: None,
    }
}

#[test]
fn f1_stick_with_a_damaged_fat_results_on_serial_earlier_file_intact() {
    let Some(a) = artifacts("f1_damaged_fat") else { return };
    let _turn = one_at_a_time();
    let dir = scratch("f1_damaged_fat");
    let specs = disks(&["virtio,size=64M,serial=SF-FAT"]);
    let img = stick_with_earlier(&a, &dir);
    let marked = stick::mark_free_clusters_bad(&img).expect("damage the FAT");
    assert!(marked > 0);
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (name, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 2);
    assert!(tests.iter().all(|t| status_of(t) == "ok"), "{tests:?}");
    assert_eq!(name, "unknown.json", "the frame names no stick file");
    assert!(
        outcome.serial.contains("no results file written: the stick is full"),
        "the console says why no file was written"
    );
    assert!(outcome.serial.contains("No space left on device"), "with the errno");
    let all = stick::list_dir_all(&img, "/results").unwrap();
    assert_eq!(all, [EARLIER_NAME], "nothing else in /results, not even a temp file");
    assert_eq!(assert_earlier_intact(&img, &dir), [EARLIER_NAME]);
}

/// Boot with the test-only `key` that ends the worker after the first
/// test, and check what PID 1 saved: powered off (QEMU exited 0) without a
/// kernel panic, one good frame whose document is `error` with a message
/// that starts with `why`, holds the first test (`ok`), and is on the
/// stick under the frame's name, the same bytes, beside the earlier result.
/// Returns the console log.
fn the_first_test_is_saved_after(test: &str, serial: &str, key: &str, why: &str) -> Option<String> {
    let a = artifacts(test)?;
    let _turn = one_at_a_time();
    let dir = scratch(test);
    let specs = disks(&[&format!("virtio,size=64M,serial={serial}")]);
    let img = stick_with_earlier(&a, &dir);
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, key);
    let (name, bytes, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert!(!outcome.serial.contains("Kernel panic"), "PID 1 never exited");
    assert!(outcome.serial.contains("finishing: poweroff"));
    assert_eq!(doc["run"]["status"], "error", "run: {}", doc["run"]);
    let error = doc["run"]["error"].as_str().unwrap_or_default();
    assert!(error.starts_with(why), "{error}");
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 1, "what ran so far: the first test");
    assert_eq!(tests[0]["name"], "first");
    assert_eq!(status_of(&tests[0]), "ok");
    assert_eq!(name, "unknown-2.json");
    let copied = assert_earlier_intact(&img, &dir);
    assert_eq!(copied, [EARLIER_NAME, "unknown-2.json"]);
    assert_eq!(
        bench_core::document::frame::compact_json(&std::fs::read(dir.join("copied/unknown-2.json")).unwrap()),
        bytes
    );
    Some(outcome.serial)
}

#[test]
fn f2_forced_panic_in_the_worker_saves_what_ran_and_powers_off() {
    let Some(serial) = the_first_test_is_saved_after(
        "f2_forced_panic",
        "SF-PANIC",
        "bootbench.test_panic=after_first_test",
        "interrupted after 1 test(s): the worker process panicked (test-only forced panic",
    ) else {
        return;
    };
    assert!(serial.contains("PANIC: "), "the hook logged the panic");
    assert!(serial.contains("test-only forced panic"), "the forced one");
}

#[test]
fn f3_qemu_killed_mid_result_write_leaves_earlier_results_and_no_partial_result() {
    let Some(a) = artifacts("f3_killed_mid_write") else {
        return;
    };
    let _turn = one_at_a_time();
    let dir = scratch("f3_killed_mid_write");
    let specs = disks(&["virtio,size=64M,serial=SF-KILL"]);
    let img = stick_with_earlier(&a, &dir);
    let machine = direct_machine(&a, &dir, &img, &specs, "bootbench.test_hold=mid_result_write", false);
    let marker = "test hold: results write stopped half-way";
    let outcome =
        run::boot_until(&machine, &dir, BOOT_TIMEOUT, &|serial| serial.contains(marker)).expect("boot until the hold");
    assert!(outcome.serial.contains(marker), "held mid-write");
    assert!(!outcome.status.success(), "killed, not powered off: {}", outcome.status);
    assert!(outcome.frames.is_empty(), "killed before the serial copy");
    // The cut write left its temp file (hidden, not a result's name) ...
    let all = stick::list_dir_all(&img, "/results").unwrap();
    let temps: Vec<&String> = all.iter().filter(|n| n.as_str() != EARLIER_NAME).collect();
    assert_eq!(temps.len(), 1, "the cut write's temp file: {all:?}");
    assert!(
        temps[0].starts_with(".unknown-2.json.tmp-"),
        "a temp name, not a result's: {all:?}"
    );
    // ... which no reader takes for a result; the earlier one is intact.
    let (copied, passed) = stick::copy_results_checked(&img, &dir.join("checked")).unwrap();
    assert_eq!(copied, [EARLIER_NAME]);
    assert_eq!(passed.len(), 1, "{passed:?}");
    assert_eq!(assert_earlier_intact(&img, &dir), [EARLIER_NAME]);
}

#[test]
fn f4_write_protected_stick_config_read_results_on_serial_stick_unchanged() {
    let Some(a) = artifacts("f4_readonly_stick") else {
        return;
    };
    let _turn = one_at_a_time();
    let dir = scratch("f4_readonly_stick");
    let specs = disks(&["virtio,size=64M,serial=SF-RO"]);
    let img = stick_with_earlier(&a, &dir);
    let before = std::fs::read(&img).unwrap();
    let machine = direct_machine(&a, &dir, &img, &specs, "", true);
    let outcome = run::boot(&machine, &dir, BOOT_TIMEOUT).expect("boot");
    let (name, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    // The stick's config ran (its two tests), not the built-in profile.
    let names: Vec<&str> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(names, ["first", "second"], "the stick's config was read");
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);
    assert!(
        outcome
            .serial
            .contains("no results file written: the stick is read-only"),
        "the console says why no file was written"
    );
    assert_eq!(name, "unknown.json", "the frame names no stick file");
    assert!(outcome.status.success(), "powered off: {}", outcome.status);
    assert!(
        std::fs::read(&img).unwrap() == before,
        "the write-protected stick is byte-identical"
    );
}

#[test]
fn f5_the_worker_aborting_after_the_first_test_is_saved_by_pid_1() {
    let Some(serial) = the_first_test_is_saved_after(
        "f5_forced_abort",
        "SF-ABORT",
        "bootbench.test_abort=after_first_test",
        "interrupted after 1 test(s): the worker process ended by signal 6 (SIGABRT)",
    ) else {
        return;
    };
    assert!(serial.contains("test-only forced abort"), "the forced one");
    assert!(!serial.contains("PANIC"), "an abort runs no panic hook");
}

#[test]
fn f6_an_oversized_config_is_an_error_document_and_a_clean_power_off() {
    let Some(a) = artifacts("f6_oversized_config") else {
        return;
    };
    let _turn = one_at_a_time();
    let dir = scratch("f6_oversized_config");
    let specs = disks(&["virtio,size=64M,serial=SF-BIG"]);
    let img = stick_copy(&a, &dir, None);
    // Valid JSON, one byte over the bound: the size alone refuses it.
    let mut text = String::from("{\"profile\": \"quick\"");
    text.push_str(&" ".repeat((1 << 20) - text.len()));
    text.push('}');
    let local = dir.join("bootbench.json");
    std::fs::write(&local, &text).unwrap();
    stick::put_file(&img, &local, "/bootbench.json").unwrap();
    let disk = specs[0].backing_file(&dir.join("disks"));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert!(!outcome.serial.contains("Kernel panic"));
    assert!(outcome.serial.contains("finishing: poweroff"));
    assert_eq!(doc["run"]["status"], "error", "run: {}", doc["run"]);
    let why = doc["run"]["error"].as_str().unwrap_or_default();
    assert_eq!(
        why,
        "/mnt/stick/bootbench.json is 1048577 bytes or more; expected a config of at most 1 MiB (1048576 bytes)"
    );
    assert!(doc["tests"].as_array().is_some_and(Vec::is_empty), "nothing ran");
    let zeros = std::fs::read(&disk).unwrap();
    assert!(zeros.iter().all(|&b| b == 0), "the disk is untouched");
}
