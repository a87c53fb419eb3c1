//! End to end in QEMU (TCG): disk health before and after the tests, one
//! boot with a SATA disk (ahci + ide-hd) and an NVMe disk. The figures
//! expected are what QEMU 7.2 (Debian 12's) answers, from its source:
//!
//! - hw/ide/core.c `smart_attributes` and `cmd_smart`: seven attributes
//!   (1, 3, 4, 5, 9, 12, 190) with thresholds 6, 0, 20, 36, 0, 0, 50; power-on
//!   hours (9) raw 1; airflow temperature (190) raw bytes 1f 00 1f 1f 00 00,
//!   31 °C, current 0x45; RETURN STATUS C2h/4Fh (no `smart_errors`). The
//!   table is constant: before and after are equal.
//! - hw/nvme/ctrl.c `nvme_smart_info`: composite temperature NVME_TEMPERATURE
//!   = 0x143 (323 K, 50 °C), critical warning 0 (below temp_thresh_hi), data
//!   units DIV_ROUND_UP(512-byte sectors, 1000) of what the namespace read,
//!   power-on hours from the virtual clock (0 in a short boot), spare and
//!   percentage used 0; Identify Controller WCTEMP 0x157 (343 K, 70 °C),
//!   CCTEMP 0x175 (373 K, 100 °C). Data read grows by what the tests read.
//!
//! - hw/ide/core.c `cmd_smart` SMART_EXECUTE_OFFLINE: subcommands 0, 1, 2
//!   are taken (any other aborts), each writes at once the next of 21
//!   self-test descriptors: [subcommand, 00h "completed without error",
//!   34h, 12h (life timestamp 0x1234 = 4660 hours)], the index at byte 508
//!   of SMART READ LOG 06h; SMART READ DATA byte 363 is that descriptor's
//!   status byte (0), 367 = 19h (no conveyance), 372 = 2 minutes for a
//!   short test. hw/nvme/ctrl.c: OACS = NS_MGMT | FORMAT | DBBUF, no
//!   Device Self-test (bit 4), which QEMU does not implement.
//!
//! Hidden capacity, read once before the tests (only reading commands):
//!
//! - hw/ide/core.c `cmd_read_native_max` answers READ NATIVE MAX ADDRESS
//!   EXT with `nb_sectors - 1` in the LBA registers (with the device's LBA
//!   bit set), and `ide_identify` puts `nb_sectors` in words 100-103 (word
//!   83 bit 10 set): a 64 MiB disk is 131072 sectors visible and native,
//!   nothing hidden. Its `ide_cmd_table` has no entry for B1h (DEVICE
//!   CONFIGURATION), so DEVICE CONFIGURATION IDENTIFY is aborted (sense key
//!   ABORTED COMMAND): no DCO figure, the refusal recorded.
//! - hw/nvme/ctrl.c `nvme_init_ctrl` never sets TNVMCAP or UNVMCAP (both
//!   0: not reported), so only the visible size is known: the one namespace
//!   (nsid 1, from the active namespace list), NSZE 131072 x 512 bytes.
//!
//! Proves: the SG_IO ATA PASS-THROUGH and NVMe admin paths work on the real
//! kernel and parse to QEMU's values; the NVMe temperature is sampled during
//! a test; the delta holds what the tests did; a short SMART self-test is
//! started, polled and read back from the AHCI disk's self-test log, and the
//! NVMe controller's lack of Device Self-test is recorded as such. Does not prove: failing or
//! changing SMART values (QEMU's are constant; the analysis lines for those
//! are unit-tested in bench-core), SCSI log pages (QEMU's scsi-hd has none).

use bootbench_e2e::{
    artifacts, assert_schema_valid, boot, checksum, disks, disks_with_contents, status_of, stick_copy,
    target_by_serial, tests_on, the_document, Scratch, Via,
};
use serde_json::{json, Value};

/// Bytes per NVMe data unit.
const UNIT: u64 = 512_000;

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an unsigned integer: {v}"))
}

#[test]
fn h1_sata_smart_and_nvme_health_log_before_and_after() {
    let Some(a) = artifacts("h1_health") else {
        return;
    };
    let scratch = Scratch::new("h1_health");
    let dir = scratch.0.clone();
    let specs = disks(&[
        "sata,size=64M,serial=E2E-HEALTH-SATA",
        "nvme,size=64M,serial=E2E-HEALTH-NVME",
    ]);
    let config = json!({"tests": [
        {"workload": "seq_read", "name": "seq_read_1m", "bs": "1M", "size": "4M"},
        {"workload": "rand_read", "name": "rand_read_4k", "bs": "4k", "length": "32M", "runtime": "3s"}
    ], "self_test": "short"});
    // Data on both disks: the health, self-test and capacity commands and
    // the reads must leave every byte as it was.
    let (files, before) = disks_with_contents(&specs, &dir, |i| Some(300 + i as u64));
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);
    let after: Vec<_> = files.iter().map(|f| checksum(f).unwrap()).collect();
    assert_eq!(before, after, "a disk changed");

    the_sata_disk_answers_qemus_constant_smart_table(&doc);
    the_nvme_disk_answers_qemus_health_log_before_and_after(&doc);
    the_nvme_delta_holds_what_the_tests_read(&doc);
    the_nvme_temperature_is_sampled_during_the_long_test_only(&doc);
    nothing_to_report_and_the_console_says_it(&doc, &outcome.serial);
    the_sata_short_self_test_is_read_back_and_nvme_has_none(&doc, &outcome.serial);
    the_hidden_capacity_is_what_qemu_answers(&doc, &outcome.serial);
    the_erase_support_is_what_qemu_answers(&doc, &outcome.serial);
    the_verdicts_hold_the_self_tests(&doc);
}

/// The erase support each disk gives, from its identify data (read-only
/// commands, and the disks' checksums above prove nothing was erased):
/// QEMU 7.2's NVMe controller sets OACS's Format NVM bit and nothing of
/// Sanitize or FNA (user data erase only, on the namespace named); its
/// IDE disk has neither the Sanitize nor the Security feature set. The
/// console says both.
fn the_erase_support_is_what_qemu_answers(doc: &Value, serial: &str) {
    let sata = &target_by_serial(doc, "E2E-HEALTH-SATA")["erase_support"];
    assert_eq!(
        (&sata["source"], &sata["supported"], &sata["frozen"], &sata["error"]),
        (&json!("ata_identify"), &json!([]), &Value::Null, &Value::Null),
        "{sata}"
    );
    let nvme = &target_by_serial(doc, "E2E-HEALTH-NVME")["erase_support"];
    assert_eq!(
        (&nvme["source"], &nvme["supported"], &nvme["applies_to_all_namespaces"]),
        (
            &json!("nvme_identify_controller"),
            &json!(["nvme_format_user_data"]),
            &json!(false)
        ),
        "{nvme}"
    );
    for (disk, what) in [
        ("E2E-HEALTH-SATA", "none"),
        ("E2E-HEALTH-NVME", "nvme_format_user_data"),
    ] {
        let path = target_by_serial(doc, disk)["path"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let want = format!("{path}: erase support (read only, nothing erased): {what}");
        assert!(serial.contains(&want), "{want}");
    }
}

/// The acceptance verdicts under the default rules: the SATA disk's
/// self-test completed without error (a passing check, the disk PASS);
/// the NVMe disk's is not supported, a warning: nothing could be said.
fn the_verdicts_hold_the_self_tests(doc: &Value) {
    let a = &doc["acceptance"];
    assert_eq!(a["rules"], "defaults", "{a}");
    let verdict = |serial: &str| {
        let path = &target_by_serial(doc, serial)["path"];
        a["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| &t["target"] == path)
            .unwrap_or_else(|| panic!("no verdict for {serial}: {a}"))
            .clone()
    };
    let self_test = |v: &Value| {
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["rule"] == "self_test")
            .unwrap_or_else(|| panic!("no self-test check: {v}"))
            .clone()
    };
    let sata = verdict("E2E-HEALTH-SATA");
    assert_eq!(
        (sata["verdict"].as_str(), self_test(&sata)["verdict"].as_str()),
        (Some("pass"), Some("pass")),
        "{sata}"
    );
    let nvme = verdict("E2E-HEALTH-NVME");
    assert_eq!(
        (nvme["verdict"].as_str(), self_test(&nvme)["verdict"].as_str()),
        (Some("warn"), Some("warn")),
        "{nvme}"
    );
    assert!(
        self_test(&nvme)["message"]
            .as_str()
            .unwrap()
            .starts_with("short self-test: not_supported"),
        "{nvme}"
    );
    assert_eq!(a["verdict"], "warn");
}

/// The short self-test, before the benchmarks: on the AHCI disk started
/// (EXECUTE OFF-LINE IMMEDIATE 01h), polled (byte 363: 0, done) and read
/// back from the self-test log's new descriptor; on the NVMe disk not
/// supported (OACS bit 4 clear), nothing sent.
fn the_sata_short_self_test_is_read_back_and_nvme_has_none(doc: &Value, serial: &str) {
    let sata = &target_by_serial(doc, "E2E-HEALTH-SATA")["self_test"];
    eprintln!("sata self-test: {sata}");
    assert_eq!(sata["kind"], "short");
    assert_eq!(sata["outcome"], "completed", "{sata}");
    assert_eq!(sata["passed"], true);
    assert_eq!(
        sata["source"], "ata_self_test_log",
        "the log's new descriptor, not the status byte alone"
    );
    assert_eq!(sata["power_on_hours"], 0x1234, "QEMU's life timestamp");
    assert_eq!(sata["remaining_pct"], 0);
    assert_eq!((&sata["failing_lba"], &sata["segment"]), (&Value::Null, &Value::Null));
    assert_eq!(
        sata["estimate_ns"],
        2 * 60 * 1_000_000_000u64,
        "SMART data byte 372: 2 minutes"
    );
    assert_eq!(sata["error"], Value::Null);
    assert!(sata["duration_ns"].is_u64());
    let nvme = &target_by_serial(doc, "E2E-HEALTH-NVME")["self_test"];
    eprintln!("nvme self-test: {nvme}");
    assert_eq!(nvme["kind"], "short");
    assert_eq!(nvme["outcome"], "not_supported", "{nvme}");
    assert_eq!((&nvme["passed"], &nvme["source"]), (&Value::Null, &json!("none")));
    assert_eq!(
        nvme["error"],
        "the controller does not support Device Self-test (Identify Controller OACS bit 4 clear)"
    );
    // The console: the start with the device's estimate, and both results.
    assert!(
        serial.contains("short self-test started (the device estimates 2 min; waiting at most 4 min)"),
        "console"
    );
    assert!(serial.contains("short self-test: completed without error (SMART self-test log)"));
    assert!(serial.contains("short self-test: not supported (the controller does not support Device Self-test"));
}

/// SATA: ATA SMART through the SCSI-ATA translation.
fn the_sata_disk_answers_qemus_constant_smart_table(doc: &Value) {
    let sata = &target_by_serial(doc, "E2E-HEALTH-SATA")["health"];
    eprintln!("sata health: {sata}");
    for when in ["before", "after"] {
        let r = &sata[when];
        assert_eq!(r["source"], "ata_smart", "{when}: {r}");
        assert_eq!(r["error"], Value::Null, "{when}: everything answered: {r}");
        assert_eq!(r["smart_passed"], true, "{when}");
        assert_eq!(r["power_on_hours"], 1, "{when}");
        assert_eq!(r["temperature_c"], 31, "{when}");
        assert_eq!(r["temperature_k"], Value::Null, "{when}");
        assert_eq!(r["counters"]["reallocated_sectors"], 0, "{when}");
        assert_eq!(r["counters"]["power_cycles"], 0, "{when}");
        assert_eq!(r["counters"].get("pending_sectors"), None, "QEMU has no attribute 197");
        let attrs = r["attributes"].as_array().unwrap();
        let got: Vec<(u64, u64, u64)> = attrs
            .iter()
            .map(|a| (u(&a["id"]), u(&a["current"]), u(&a["threshold"])))
            .collect();
        assert_eq!(
            got,
            [
                (1, 100, 6),
                (3, 100, 0),
                (4, 100, 20),
                (5, 100, 36),
                (9, 100, 0),
                (12, 100, 0),
                (190, 0x45, 50)
            ],
            "{when}"
        );
        let a190 = attrs.iter().find(|a| a["id"] == 190).unwrap();
        assert_eq!(u(&a190["raw"]), 0x1f1f_001f, "{when}");
        assert!(attrs.iter().all(|a| a["failing"] == false), "{when}");
    }
    assert_eq!(sata["before"], sata["after"], "QEMU's SMART table is constant");
    assert!(
        sata["delta"].as_object().unwrap().values().all(|v| v == 0),
        "{}",
        sata["delta"]
    );
    let temps = sata["tests"].as_array().unwrap();
    assert_eq!(temps.len(), 2, "one per test: {temps:?}");
    for t in temps {
        assert_eq!(t["source"], "before_after", "ATA is not sampled during a test: {t}");
        assert_eq!(t["samples"], 2, "{t}");
        assert_eq!(t["max_temperature_c"], 31, "{t}");
    }
}

/// The NVMe disk's health figures (the health log and Identify Controller).
fn nvme_health(doc: &Value) -> &Value {
    &target_by_serial(doc, "E2E-HEALTH-NVME")["health"]
}

/// NVMe: the health log and Identify Controller, before and after the tests.
fn the_nvme_disk_answers_qemus_health_log_before_and_after(doc: &Value) {
    let nvme = nvme_health(doc);
    eprintln!("nvme health: {nvme}");
    for when in ["before", "after"] {
        let r = &nvme[when];
        assert_eq!(r["source"], "nvme_smart_log", "{when}: {r}");
        assert_eq!(r["error"], Value::Null, "{when}: {r}");
        assert_eq!(r["smart_passed"], true, "{when}");
        assert_eq!(r["temperature_k"], 323, "{when}");
        assert_eq!(r["temperature_c"], 50, "{when}");
        assert_eq!(r["warning_temperature_c"], 70, "{when}");
        assert_eq!(r["critical_temperature_c"], 100, "{when}");
        assert_eq!(r["power_on_hours"], 0, "{when}");
        assert_eq!(r["counters"]["media_errors"], 0, "{when}");
        let n = &r["nvme"];
        assert_eq!(n["critical_warning"], 0, "{when}");
        assert_eq!(
            (&n["available_spare_pct"], &n["percentage_used"]),
            (&json!(0), &json!(0)),
            "{when}"
        );
        assert_eq!(
            u(&r["counters"]["data_read_bytes"]),
            u(&n["data_units_read"]) * UNIT,
            "{when}"
        );
    }
}

/// What the tests read (O_DIRECT, so every byte reached the device) is what
/// the NVMe health log's delta says was read.
fn the_nvme_delta_holds_what_the_tests_read(doc: &Value) {
    let nvme = nvme_health(doc);
    let tests = tests_on(doc, "E2E-HEALTH-NVME");
    assert!(tests.iter().all(|t| status_of(t) == "ok"));
    let read: u64 = tests
        .iter()
        .flat_map(|t| t["steps"].as_array().unwrap())
        .filter_map(|s| s["read"]["bytes"].as_u64())
        .sum();
    let ios: u64 = tests
        .iter()
        .flat_map(|t| t["steps"].as_array().unwrap())
        .filter_map(|s| s["read"]["ios"].as_u64())
        .sum();
    let d_bytes = nvme["delta"]["data_read_bytes"].as_i64().unwrap();
    let d_cmds = nvme["delta"]["host_read_commands"].as_i64().unwrap();
    eprintln!("nvme: tests read {read} bytes in {ios} requests; the log's delta: {d_bytes} bytes, {d_cmds} commands");
    // QEMU rounds each reading up to a whole data unit: the delta is the
    // bytes read within one unit.
    assert!(
        (d_bytes - i64::try_from(read).unwrap()).abs() <= i64::try_from(UNIT).unwrap(),
        "delta {d_bytes} vs read {read}"
    );
    assert!(
        d_cmds >= i64::try_from(ios).unwrap(),
        "{d_cmds} commands for {ios} requests"
    );
    assert_eq!(nvme["delta"]["data_written_bytes"], 0, "nothing written");
    assert_eq!(nvme["delta"]["media_errors"], 0);
}

/// The NVMe temperature is sampled during the 3 s random read; the short
/// sequential read is only sampled around it.
fn the_nvme_temperature_is_sampled_during_the_long_test_only(doc: &Value) {
    let temps = nvme_health(doc)["tests"].as_array().unwrap();
    assert_eq!(temps.len(), 2, "{temps:?}");
    let rand = temps.iter().find(|t| t["test"] == "rand_read_4k").unwrap();
    assert_eq!(rand["source"], "during", "{rand}");
    // Before, after, and once a second during its 3 s (and its ramp).
    assert!(u(&rand["samples"]) >= 2 + 2, "{rand}");
    assert_eq!(rand["max_temperature_c"], 50, "{rand}");
    // The 4 MiB read takes well under the 1 s interval: only around it.
    let seq = temps.iter().find(|t| t["test"] == "seq_read_1m").unwrap();
    assert_eq!(
        (&seq["source"], &seq["samples"]),
        (&json!("before_after"), &json!(2)),
        "{seq}"
    );
}

/// Nothing to report: no failed status, no counter gained, the warning
/// temperature (70 °C) not reached. (A throughput drop under TCG is
/// possible and not what this test is about.)
fn nothing_to_report_and_the_console_says_it(doc: &Value, serial: &str) {
    let lines: Vec<&Value> = doc
        .get("health_analysis")
        .and_then(Value::as_array)
        .map(|v| v.iter().collect())
        .unwrap_or_default();
    eprintln!("health analysis: {lines:?}");
    assert!(lines.iter().all(|l| l["kind"] == "throughput_drop"), "{lines:?}");
    // The console says it.
    assert!(
        serial.contains("health before its tests: ata_smart, status ok, 31 °C, 1 h powered on"),
        "console"
    );
    assert!(serial.contains("health after its tests: nvme_smart_log, status ok, 50 °C"));
}

/// READ NATIVE MAX ADDRESS EXT against IDENTIFY on the SATA disk, DCO
/// refused; the NVMe namespace's size with TNVMCAP unreported.
fn the_hidden_capacity_is_what_qemu_answers(doc: &Value, serial: &str) {
    let sata = &target_by_serial(doc, "E2E-HEALTH-SATA")["hidden_capacity"];
    eprintln!("sata hidden capacity: {sata}");
    assert_eq!(sata["source"], "ata_hpa", "{sata}");
    assert_eq!(sata["visible_bytes"], 64u64 << 20);
    assert_eq!(sata["native_bytes"], 64u64 << 20, "nb_sectors - 1 is the last LBA");
    assert_eq!(sata["hidden_bytes"], 0);
    assert_eq!(sata["dco_bytes"], Value::Null);
    assert_eq!(sata["unallocated_bytes"], Value::Null);
    assert_eq!(
        sata["error"],
        "DEVICE CONFIGURATION IDENTIFY: not answered (SCSI status 0x02, host 0x0, driver 0x8, \
         sense key 0xb: aborted (not supported or refused))",
        "{sata}"
    );
    let nvme = &target_by_serial(doc, "E2E-HEALTH-NVME")["hidden_capacity"];
    eprintln!("nvme hidden capacity: {nvme}");
    assert_eq!(nvme["source"], "nvme_capacity", "{nvme}");
    assert_eq!(nvme["visible_bytes"], 64u64 << 20);
    for field in ["native_bytes", "hidden_bytes", "dco_bytes", "unallocated_bytes"] {
        assert_eq!(nvme[field], Value::Null, "{field}: {nvme}");
    }
    assert_eq!(
        nvme["error"], "TNVMCAP is 0: the controller does not report its total capacity",
        "{nvme}"
    );
    assert!(
        serial.contains("hidden capacity (ata_hpa): 67108864 bytes visible, 67108864 native, 0 hidden"),
        "console"
    );
}

/// The purge before preconditioning (`precondition.purge: "auto"`), on two
/// granted disks that hold data: the NVMe disk is purged with its own
/// Format NVM (user data erase, the only one QEMU 7.2's controller has),
/// then preconditioned on its first 8 MiB; every byte past them, random
/// before, reads zero after, so the purge reached the whole namespace. The
/// SATA disk supports no purge: refused with why, not preconditioned,
/// nothing written. A disk not named is byte-identical.
#[test]
fn h2_a_granted_nvme_disk_is_purged_before_preconditioning() {
    let Some(a) = artifacts("h2_purge") else {
        return;
    };
    let scratch = Scratch::new("h2_purge");
    let dir = scratch.0.clone();
    let specs = disks(&[
        "nvme,size=32M,serial=E2E-PURGE-NVME",
        "sata,size=32M,serial=E2E-PURGE-SATA",
        "virtio,size=32M,serial=E2E-PURGE-KEEP",
    ]);
    let config = json!({
        "tests": [{"workload": "seq_read", "name": "seq_read_1m", "bs": "1M", "size": "1M"}],
        "destructive": {
            "confirm": "I understand this destroys data",
            "countdown": 0,
            "targets": [{"serial": "E2E-PURGE-NVME"}, {"serial": "E2E-PURGE-SATA"}],
            "allow_overwrite_signatures": true
        },
        "precondition": {"purge": "auto", "length": "8M", "round": "200ms", "max_rounds": 4, "window": 3, "iodepth": 4}
    });
    let (files, before) = disks_with_contents(&specs, &dir, |i| Some(700 + i as u64));
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    let nv = &target_by_serial(&doc, "E2E-PURGE-NVME")["precondition"];
    assert_eq!(nv["purge"]["asked"], "auto", "{nv}");
    assert_eq!(nv["purge"]["method"], "nvme_format_user_data", "{nv}");
    assert_eq!(nv["purge"]["done"], true, "{nv}");
    assert!(
        nv["rounds"].as_array().is_some_and(|r| !r.is_empty()),
        "preconditioned after: {nv}"
    );
    let data = std::fs::read(&files[0]).unwrap();
    assert!(
        data[8 << 20..].iter().all(|&b| b == 0),
        "every byte past the preconditioned area reads zero after the format"
    );
    assert!(
        data[1 << 20..8 << 20].iter().any(|&b| b != 0),
        "the area written after the purge"
    );
    let sata = &target_by_serial(&doc, "E2E-PURGE-SATA")["precondition"];
    assert_eq!(
        (&sata["purge"]["done"], &sata["purge"]["method"]),
        (&json!(false), &Value::Null),
        "{sata}"
    );
    assert!(
        sata["purge"]["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("the disk supports no purge bootbench runs")),
        "{sata}"
    );
    assert_eq!(sata["end"], "error", "{sata}");
    assert!(sata["rounds"].as_array().is_some_and(Vec::is_empty));
    assert_eq!(
        checksum(&files[1]).unwrap(),
        before[1],
        "the SATA disk: nothing written"
    );
    assert_eq!(
        checksum(&files[2]).unwrap(),
        before[2],
        "the disk not named is unchanged"
    );
    assert!(
        outcome
            .serial
            .contains("purge (auto): nvme_format_user_data done after"),
        "the console says the purge"
    );
}
