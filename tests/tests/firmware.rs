//! End to end in QEMU (TCG): the same stick under the firmware servers have.
//!
//! - `b1`: OVMF's Secure Boot build with Microsoft's keys enrolled and
//!   Secure Boot on. Debian's signed chain boots (shim, signed by
//!   Microsoft; GRUB and the kernel, signed by Debian), the kernel locks
//!   itself down (`integrity`) and loads only signed modules, and every step
//!   PID 1 takes still works under lockdown: Debian's modules load (the
//!   disks' drivers, md, dm-crypt), SG_IO (ATA IDENTIFY of the SATA disk),
//!   BLKFLSBUF (the buffered and cached reads of the quick profile), an md
//!   raid1 and a dm-crypt layer on it assembled read-only, the stick mounted
//!   read-write for the results, and the power-off. The document records
//!   `firmware: uefi`, `secure_boot: true`, `lockdown: integrity`, and an
//!   attestation block without a quote that says the machine has no TPM
//!   (the run goes on); every disk is byte-identical afterwards.
//! - `b2`: SeaBIOS: the stick's syslinux boots it, the stick is found by the
//!   id in its kernel options, the results land on it, and the document
//!   records `firmware: bios`, `secure_boot: false`.
//!
//! Not proven here: a real server's firmware (its own keys, its dbx), nor
//! Secure Boot with a machine owner key of one's own.

use bootbench_e2e::{
    artifacts, assert_schema_valid, boot, by_stack, checksum, disks, disks_with_contents, path_of, status_of,
    stick_copy, target_by_serial, tests_at, the_document, Scratch, Via,
};
use bootbench_qemu::stick;
use serde_json::{json, Value};

/// The tests run on the target at `path`, each with its status.
fn statuses<'a>(doc: &'a Value, path: &str) -> Vec<(&'a str, &'a str)> {
    tests_at(doc, path)
        .into_iter()
        .map(|t| (t["name"].as_str().unwrap_or_default(), status_of(t)))
        .collect()
}

#[test]
fn b1_secure_boot_runs_the_quick_profile_under_lockdown() {
    let Some(a) = artifacts("b1_secure_boot") else {
        return;
    };
    let scratch = Scratch::new("b1_secure_boot");
    let dir = scratch.0.clone();
    let specs = disks(&[
        "sata,size=32M,serial=SB-SATA,model=BOOTBENCH SB",
        "virtio,size=32M,serial=SB-M1",
        "virtio,size=32M,serial=SB-M2",
    ]);
    let (files, before) = disks_with_contents(&specs, &dir, |i| Some(1400 + i as u64));
    let config = json!({
        "profile": "quick",
        "parallel": true,
        "targets": [{"serial": "SB-SATA"}],
        "arrays": [{"name": "r1", "level": "raid1", "members": [{"serial": "SB-M1"}, {"serial": "SB-M2"}]}],
        "layers": [{"name": "luks", "kind": "crypt", "on": "r1", "cipher": "aes-xts-plain64", "key_bits": 512}]
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::SecureBoot, &img, &specs, "");
    let (name, bytes, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert!(
        outcome.serial.contains("EFI stub: UEFI Secure Boot is enabled."),
        "the kernel saw Secure Boot on"
    );
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);
    assert_eq!(doc["run"]["profile"], "quick");
    let host = &doc["host"];
    assert_eq!(
        (&host["firmware"], &host["secure_boot"], &host["lockdown"]),
        (&json!("uefi"), &json!(true), &json!("integrity")),
        "{host}"
    );
    // No TPM: the run went on, and its attestation block says why it has no quote.
    let att = &doc["attestation"];
    assert!(
        att.get("quote").is_none() && att.get("device").is_none() && att.get("pcrs").is_none(),
        "{att}"
    );
    assert!(
        att["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("no TPM (/dev/tpmrm0: ")),
        "{att}"
    );
    // SG_IO: the SATA disk's identity came from ATA IDENTIFY.
    let sata = target_by_serial(&doc, "SB-SATA");
    assert_eq!(sata["model"], "BOOTBENCH SB", "{sata}");
    // Every read test of the quick profile ran on the disk, the array and the
    // layer (the write tests are skipped: nothing is writable).
    for path in [
        path_of(sata),
        path_of(by_stack(&doc, "r1")),
        path_of(by_stack(&doc, "luks")),
    ] {
        let runs = statuses(&doc, path);
        let ok: Vec<&str> = runs.iter().filter(|(_, s)| *s == "ok").map(|(n, _)| *n).collect();
        assert!(
            ok.iter().any(|n| n.starts_with("buffered_read"))
                && ok.iter().any(|n| n.starts_with("cached_read"))
                && ok.len() >= 5,
            "{path}: the read tests ran: {runs:?}"
        );
        assert!(
            runs.iter().all(|(_, s)| matches!(*s, "ok" | "skipped")),
            "{path}: nothing failed: {runs:?}"
        );
    }
    assert!(
        outcome.serial.contains("by GRUB's probe --part-uuid"),
        "the stick is the partition GRUB was loaded from"
    );
    // The results on the stick, as on the console; the disks untouched.
    let copied = stick::copy_results(&img, &dir.join("copied")).expect("results on the stick");
    assert_eq!(copied, std::slice::from_ref(&name));
    assert_eq!(
        bench_core::document::frame::compact_json(&std::fs::read(dir.join("copied").join(&name)).expect("copied")),
        bytes
    );
    for (i, d) in specs.iter().enumerate() {
        assert_eq!(before[i], checksum(&files[i]).unwrap(), "{} byte-identical", d.serial);
    }
}

#[test]
fn b2_legacy_bios_boots_the_stick_with_syslinux() {
    let Some(a) = artifacts("b2_legacy_bios") else {
        return;
    };
    let scratch = Scratch::new("b2_legacy_bios");
    let dir = scratch.0.clone();
    let specs = disks(&["virtio,size=32M,serial=BIOS-V1"]);
    let config = json!({
        "tests": [{"workload": "seq_read", "name": "seqrd_1m", "bs": "1M", "runtime": "2s"}]
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Bios, &img, &specs, "");
    let (name, bytes, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);
    assert!(outcome.serial.contains("SYSLINUX"), "syslinux booted it");
    let host = &doc["host"];
    assert_eq!(
        (&host["firmware"], &host["secure_boot"]),
        (&json!("bios"), &json!(false)),
        "{host}"
    );
    let disk = target_by_serial(&doc, "BIOS-V1");
    assert_eq!(statuses(&doc, path_of(disk)), [("seqrd_1m", "ok")]);
    assert!(
        outcome
            .serial
            .contains("by bootbench.stick= on the kernel command line"),
        "no EFI variable, no GRUB: the stick's own id"
    );
    let copied = stick::copy_results(&img, &dir.join("copied")).expect("results on the stick");
    assert_eq!(copied, std::slice::from_ref(&name));
    assert_eq!(
        bench_core::document::frame::compact_json(&std::fs::read(dir.join("copied").join(&name)).expect("copied")),
        bytes
    );
}
