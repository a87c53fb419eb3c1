//! The stick's measurements against event logs built event by event; the
//! device paths are those OVMF logged for shim and GRUB in a QEMU boot of
//! the stick (the e2e test `a1` checks a real boot's log end to end).

use super::*;
use bench_core::boot::eventlog::{AlgSize, Digest, Event, SpecId};

/// OVMF's device path of shim started from the USB stick's boot option:
/// ACPI, PCI, USB, hard drive (GPT partition 1), file path, end.
const SHIM_DP: &str = "02010c00d041030a0000000001010600000203050600000004012a0001000000000800000000000000f8000000000000e439f1c67832134d9ffd05b1fafed8080202040430005c004500460049005c0042004f004f0054005c0042004f004f0054005800360034002e0045004600490000007fff0400";
/// GRUB started by shim: the file path node alone.
const GRUB_DP: &str =
    "040430005c004500460049005c0042004f004f0054005c0067007200750062007800360034002e0065006600690000007fff0400";

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A `UEFI_IMAGE_LOAD_EVENT` of device path `dp`.
fn image_load(dp: &[u8]) -> Vec<u8> {
    let mut d = Vec::new();
    d.extend(0x3d00_0000u64.to_le_bytes());
    d.extend(4096u64.to_le_bytes());
    d.extend(0u64.to_le_bytes());
    d.extend(u64::try_from(dp.len()).unwrap().to_le_bytes());
    d.extend(dp);
    d
}

fn event(pcr: u32, event_type: u32, sha: &[u8], data: Vec<u8>) -> Event {
    Event {
        offset: 0,
        pcr,
        event_type,
        digests: vec![Digest {
            alg: ALG_SHA256,
            bytes: sha.to_vec(),
        }],
        data,
    }
}

fn log(events: Vec<Event>) -> EventLog {
    EventLog {
        spec: SpecId {
            platform_class: 0,
            version: (2, 0, 0),
            uintn_size: 2,
            algorithms: vec![AlgSize {
                alg: ALG_SHA256,
                size: 32,
            }],
            vendor_info: Vec::new(),
        },
        startup_locality: None,
        events,
    }
}

/// The five measurements, digests 1 to 5 in every byte.
fn five() -> Vec<Expected> {
    let e = |what, pcr, event_type, path, n: u8| Expected {
        what,
        pcr,
        event_type,
        path,
        sha256: vec![n; 32],
    };
    vec![
        e("shim", 4, EV_EFI_BOOT_SERVICES_APPLICATION, "/EFI/BOOT/BOOTX64.EFI", 1),
        e("GRUB", 4, EV_EFI_BOOT_SERVICES_APPLICATION, "/EFI/BOOT/grubx64.efi", 2),
        e("GRUB's configuration", 9, EV_IPL, "/EFI/BOOT/grub.cfg", 3),
        e("the kernel", 9, EV_IPL, "/vmlinuz", 4),
        e("the initramfs", 9, EV_IPL, "/initrd.img", 5),
    ]
}

/// The boot of the stick as GRUB and OVMF log it, digests as in [`five`],
/// with GRUB's commands in PCR 8 between.
fn booted() -> Vec<Event> {
    let app = EV_EFI_BOOT_SERVICES_APPLICATION;
    vec![
        event(4, app, &[1; 32], image_load(&unhex(SHIM_DP))),
        event(4, app, &[2; 32], image_load(&unhex(GRUB_DP))),
        event(
            8,
            EV_IPL,
            &[9; 32],
            b"grub_cmd: source (hd0,gpt1)/EFI/BOOT/grub.cfg\0".to_vec(),
        ),
        event(9, EV_IPL, &[3; 32], b"(hd0,gpt1)/EFI/BOOT/grub.cfg\0".to_vec()),
        event(9, EV_IPL, &[4; 32], b"/vmlinuz\0".to_vec()),
        event(9, EV_IPL, &[5; 32], b"/initrd.img\0".to_vec()),
    ]
}

fn config_hex(c: &[u8]) -> String {
    hex(digest(&SHA256, c).as_ref())
}

fn outcomes(points: &[Point]) -> Vec<(&str, Outcome)> {
    points.iter().map(|p| (p.what, p.outcome)).collect()
}

#[test]
fn the_device_paths_name_the_files_with_forward_slashes() {
    let app = EV_EFI_BOOT_SERVICES_APPLICATION;
    assert_eq!(event_path(app, &image_load(&unhex(SHIM_DP))), "/EFI/BOOT/BOOTX64.EFI");
    assert_eq!(event_path(app, &image_load(&unhex(GRUB_DP))), "/EFI/BOOT/grubx64.efi");
    assert_eq!(event_path(EV_IPL, b"/vmlinuz\0"), "/vmlinuz");
    // Truncated or empty data names nothing, and does not panic.
    assert_eq!(event_path(app, &image_load(&unhex(SHIM_DP))[..40]), "");
    assert_eq!(event_path(app, &[]), "");
    assert!(names("(hd0,gpt1)/EFI/BOOT/GRUB.CFG", "/EFI/BOOT/grub.cfg"));
    assert!(!names("/boot/vmlinuz-old", "/vmlinuz"));
}

#[test]
fn a_boot_of_the_image_proves_every_measurement() {
    let cfg = b"{\"profile\":\"quick\"}";
    let points = check(Some(&log(booted())), &five(), Some(cfg), &config_hex(cfg), true);
    assert_eq!(
        outcomes(&points),
        [
            ("shim", Outcome::Proved),
            ("GRUB", Outcome::Proved),
            ("GRUB's configuration", Outcome::Proved),
            ("the kernel", Outcome::Proved),
            ("the initramfs", Outcome::Proved),
            ("nothing else", Outcome::Proved),
            ("the config", Outcome::Proved)
        ],
        "{points:#?}"
    );
    // Without a quote proving the log, a match is only what the log says.
    let points = check(Some(&log(booted())), &five(), Some(cfg), &config_hex(cfg), false);
    assert!(points.iter().all(|p| p.outcome == Outcome::NotProved), "{points:#?}");
    assert!(points[3].detail.contains("no quote proves it"), "{}", points[3].detail);
}

#[test]
fn another_initramfs_fails_naming_the_measurement_and_both_digests() {
    let mut events = booted();
    events[5] = event(9, EV_IPL, &[6; 32], b"/initrd.img\0".to_vec());
    let points = check(Some(&log(events)), &five(), None, "00", true);
    let p = points.iter().find(|p| p.what == "the initramfs").unwrap();
    assert_eq!(p.outcome, Outcome::Failed);
    assert!(
        p.detail
            .contains(&format!("/initrd.img measured into PCR 9 as {}", hex(&[6; 32])))
            && p.detail.contains(&format!("hashes to {}", hex(&[5; 32]))),
        "{}",
        p.detail
    );
    // The rest still hold; the stick without a config proves nothing of it.
    assert_eq!(
        points.iter().filter(|p| p.outcome == Outcome::Failed).count(),
        1,
        "{points:#?}"
    );
    assert_eq!(points.last().unwrap().outcome, Outcome::NotProved);
}

#[test]
fn what_the_image_does_not_hold_fails() {
    // Another application started after GRUB (a second kernel by chainloader), and a file
    // GRUB read that is not the stick's.
    let mut events = booted();
    let other = unhex(&GRUB_DP.replace("67007200750062", "66006f006f0062")); // grub -> foob
    events.push(event(4, EV_EFI_BOOT_SERVICES_APPLICATION, &[7; 32], image_load(&other)));
    events.push(event(9, EV_IPL, &[8; 32], b"/evil.img\0".to_vec()));
    let points = check(Some(&log(events)), &five(), None, "00", true);
    let p = points.iter().find(|p| p.what == "nothing else").unwrap();
    assert_eq!(p.outcome, Outcome::Failed, "{p:?}");
    assert!(
        p.detail.contains("PCR 4 /EFI/BOOT/foobx64.efi") && p.detail.contains("PCR 9 /evil.img"),
        "{}",
        p.detail
    );
}

#[test]
fn a_missing_measurement_or_log_and_another_config_are_named() {
    let mut events = booted();
    events.remove(4); // no kernel read by GRUB
    let cfg = b"{}";
    let points = check(
        Some(&log(events)),
        &five(),
        Some(cfg),
        &config_hex(b"{\"other\":1}"),
        true,
    );
    let kernel = points.iter().find(|p| p.what == "the kernel").unwrap();
    assert_eq!(kernel.outcome, Outcome::Failed);
    assert!(
        kernel.detail.contains("no measurement of /vmlinuz in PCR 9"),
        "{}",
        kernel.detail
    );
    let config = points.iter().find(|p| p.what == "the config").unwrap();
    assert_eq!(config.outcome, Outcome::Failed);
    assert!(config.detail.contains(&config_hex(cfg)), "{}", config.detail);
    // No event log: nothing about the chain is proved, nor failed.
    let points = check(None, &five(), None, "00", false);
    assert!(
        points.iter().all(|p| p.outcome == Outcome::NotProved) && points.len() == 6,
        "{points:#?}"
    );
}

#[test]
fn shim_that_is_not_a_pe_image_is_refused_by_name() {
    let files = StickFiles {
        shim: b"not a PE".to_vec(),
        ..StickFiles::default()
    };
    let e = expected(&files).unwrap_err();
    assert!(
        e.starts_with("the image's /EFI/BOOT/BOOTX64.EFI: not a PE image"),
        "{e}"
    );
}
