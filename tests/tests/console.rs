//! End to end in QEMU (TCG): the console cannot be made to lie. One direct
//! boot (about 20 s under TCG) with disks whose identity strings try to forge a result:
//! a SATA disk whose model is the frame's begin marker, and three USB disks
//! whose serials (the USB iSerialNumber, which the kernel passes on as it
//! is, line breaks included) hold a whole version-1 frame, a forged boot
//! announce, and a version-2 frame of that forged nonce. Afterwards:
//!
//! - exactly one document is cut out of the console, the real one (the
//!   stick's copy, byte for byte), and no frame was forged, damaged or
//!   refused: no forged marker ever starts a line;
//! - the console shows the hostile strings escaped (`\n`, `BOOTBENCH\x2d`),
//!   each on the line that names it (the disk line, the plan's target line);
//! - the results document keeps the true strings (JSON escapes them);
//! - booted with `loglevel=7`, each of bootbench's console lines shows once
//!   and whole (no echo of its /dev/kmsg copy).

use bench_core::document::frame::crc32;
use bootbench_e2e::{artifacts, boot, disks, scratch, stick_copy, Via};
use bootbench_qemu::stick;
use serde_json::{json, Value};

/// The SATA model: the begin marker itself (ATA models hold 40 characters).
const MODEL: &str = "BOOTBENCH-RESULT-BEGIN";

/// The forged serials: a complete frame of the old format for the document
/// `{}` (base64 `e30=`), a forged announce, a version-2 frame of the forged
/// nonce. No spaces (a serial with one is printed quoted), no commas; each
/// begins with a word so that the serial, trimmed, still has its line
/// break before the marker; at most 126 characters (a USB string).
fn forged_serials() -> [String; 3] {
    let crc = crc32(b"{}");
    let nonce = "f0".repeat(16);
    let serials = [
        format!("F1\nBOOTBENCH-RESULT-BEGINv1name=forged-v1.jsonbytes=2crc32={crc:08x}\ne30=\nBOOTBENCH-RESULT-END"),
        format!("F2\nBOOTBENCH-BOOTv2nonce={nonce}"),
        format!(
            "F3\nBOOTBENCH-RESULT-BEGINv2nonce={nonce}name=fv2.jsonbytes=2crc32={crc:08x}\ne30=\nBOOTBENCH-RESULT-END"
        ),
    ];
    for s in &serials {
        assert!(s.len() <= 126 && !s.contains(' ') && !s.contains(','), "{s:?}");
    }
    serials
}

/// `s` as a disk spec value (`guest_serial=` is percent-escaped).
fn spec_value(s: &str) -> String {
    s.replace('%', "%25").replace('\n', "%0A")
}

/// How the console must show `s`: line breaks as `\n`, the marker's dash
/// as `\x2d`.
fn escaped(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('\n', "\\n")
        .replace("BOOTBENCH-", "BOOTBENCH\\x2d")
}

fn target_by_serial<'a>(doc: &'a Value, serial: &str) -> &'a Value {
    doc["targets"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["serial"] == serial))
        .unwrap_or_else(|| panic!("no target with serial {serial:?} in {}", doc["targets"]))
}

#[test]
fn c1_device_strings_cannot_forge_a_result_frame() {
    let Some(a) = artifacts("c1") else { return };
    let dir = scratch("c1-console");
    let config = json!({"tests": [{"workload": "seq_read", "name": "r", "bs": "1M", "size": "1M"}]});
    let img = stick_copy(&a, &dir, Some(&config));
    let serials = forged_serials();
    let specs: Vec<String> = vec![
        format!("sata,size=16M,serial=C1-MODEL,model={MODEL}"),
        format!("usb,size=16M,serial=C1-F1,guest_serial={}", spec_value(&serials[0])),
        format!("usb,size=16M,serial=C1-F2,guest_serial={}", spec_value(&serials[1])),
        format!("usb,size=16M,serial=C1-F3,guest_serial={}", spec_value(&serials[2])),
    ];
    let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
    // loglevel=7, as a user debugging a server sets it: the kernel echoes
    // info-level /dev/kmsg records to the console.
    let outcome = boot(&a, &dir, Via::Direct, &img, &disks(&specs), "loglevel=7");
    let log = &outcome.serial;
    let tail = || {
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(60)..].join("\n")
    };
    assert!(
        outcome.status.success(),
        "QEMU: {}; serial tail:\n{}",
        outcome.status,
        tail()
    );
    // PID 1's last line says it hands over to the kernel's power-off (what
    // the harness gives a grace after, run::REBOOT_GRACE).
    let pid1_last = log
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        .rfind(|l| l.starts_with("bootbench: ") || l.contains("] bootbench: "));
    assert!(
        pid1_last.is_some_and(|l| l.ends_with("bootbench: calling reboot(2): poweroff")),
        "PID 1's last line: {pid1_last:?}"
    );

    // Every frame the decoder found: only the real one, and it is good.
    let frames: Vec<String> = outcome
        .frames
        .iter()
        .map(|f| match f {
            Ok(f) => format!("good {}", f.name),
            Err(e) => format!("bad: {e}"),
        })
        .collect();
    assert_eq!(
        frames,
        ["good unknown-1.json"],
        "exactly the real document, nothing forged, damaged or refused; serial tail:\n{}",
        tail()
    );
    let real = outcome.documents().next().expect("the real document");
    let doc: Value = serde_json::from_slice(&real.bytes).expect("JSON");
    assert_eq!(doc["run"]["status"], "ok", "{}", doc["run"]);
    // The same bytes as the stick's file of this boot.
    let copied = dir.join("copied");
    stick::copy_results(&img, &copied).expect("copy the stick's results");
    assert_eq!(
        bench_core::document::frame::compact_json(&std::fs::read(copied.join("unknown-1.json")).expect("on the stick")),
        real.bytes,
        "the serial copy is the stick's file, as compact JSON"
    );

    // The document keeps the true strings.
    let sata = doc["targets"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["serial"] == "C1-MODEL"))
        .unwrap_or_else(|| panic!("no SATA target in {}", doc["targets"]));
    assert_eq!(sata["model"], MODEL, "the ATA model as IDENTIFY gives it");
    for s in &serials {
        assert_eq!(target_by_serial(&doc, s)["transport"], "usb");
    }

    // Each of bootbench's lines is on the console once and whole at this
    // loglevel: not also echoed from /dev/kmsg, which the kernel prints
    // with its own timestamp (and which then interleaved with the first
    // copy mid-line).
    let ours: Vec<&str> = log
        .lines()
        .filter_map(|l| l.split_once("] bootbench: ").map(|(_, m)| m))
        .collect();
    assert!(ours.len() > 20, "bootbench's lines on the console: {}", ours.len());
    // The kernel prints an echoed record as it is written, right after the
    // direct copy: the same line twice in a row. (The same text may recur
    // apart, as one test's line under each target's plan does.)
    let twice: Vec<&[&str]> = ours.windows(2).filter(|w| w[0] == w[1]).collect();
    assert!(twice.is_empty(), "lines shown twice: {twice:?}");
    let merged: Vec<&str> = log.lines().filter(|l| l.matches("bootbench: ").count() > 1).collect();
    assert!(merged.is_empty(), "two records on one line: {merged:?}");

    // No forged marker starts a console line: one announce, one frame.
    let starting = |word: &str| log.lines().filter(|l| l.trim_start().starts_with(word)).count();
    assert_eq!(
        starting("BOOTBENCH-BOOT"),
        1,
        "only PID 1's announce; serial tail:\n{}",
        tail()
    );
    assert_eq!(starting("BOOTBENCH-RESULT-BEGIN"), 1, "only the real frame");
    assert_eq!(starting("BOOTBENCH-RESULT-END"), 1, "only the real frame's end");
    // The console shows them escaped: bootbench's disk lines.
    assert!(
        log.contains(&format!("model {}", escaped(MODEL))),
        "the model escaped: {}",
        escaped(MODEL)
    );
    for s in &serials {
        let want = format!("serial {} firmware", escaped(s));
        assert!(
            log.contains(&want),
            "the disk line keeps the serial on it, escaped: {want}"
        );
        let want = format!("serial {}, wwn", escaped(s));
        assert!(log.contains(&want), "the plan's line too: {want}");
    }
}
