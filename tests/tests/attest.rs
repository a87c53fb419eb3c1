//! End to end in QEMU (TCG): a document anyone can verify (docs/results.md,
//! "Attestation"). Same harness as `e2e.rs`; tests tiered by name (`a` for
//! attestation).
//!
//! - `a1`: the stick under OVMF (Secure Boot off) with a TPM 2.0 on the
//!   CRB interface played by swtpm. Debian's chain measures as it boots
//!   (the firmware shim into PCR 4, shim GRUB into PCR 4, GRUB its commands
//!   into PCR 8 and grub.cfg, the kernel and the initramfs into PCR 9);
//!   the kernel gets the firmware's event log from its EFI stub (GRUB's
//!   `linuxefi`); PID 1 extends PCR 15 with the config and then the
//!   document, and quotes. The document carries the quote, the PCR values,
//!   the key and the event log. `verify` with the stick image proves every
//!   point but the key (nothing enrolled it); the same document with one
//!   figure changed fails on its digest and on the quote's qualifying data,
//!   naming both digests; an image whose initramfs differs by one byte
//!   fails on the initramfs, naming the measurement and both digests, and
//!   on nothing else; the expected key passes, another fails.
//!
//! The one-byte-changed initramfs is checked against this boot's log rather
//! than booted: `verify` compares the log's measurement with the image's
//! file either way, and a boot of the changed stick would log the changed
//! digest, failing the same comparison from the other side.
//!
//! A boot without a TPM records an attestation block without a quote,
//! saying why: `b1` (firmware.rs) checks it.

use bootbench_e2e::{artifacts, assert_schema_valid, boot_tpm, disks, stick_copy, the_document, Scratch, Via};
use bootbench_qemu::stick;
use bootbench_report::verify::doc::{verify, Outcome, Point};
use bootbench_report::verify::image::StickFiles;
use serde_json::json;
use std::path::Path;

/// The points of `verify` on `bytes` with the stick image `img`.
fn verified(bytes: &[u8], img: &Path, key: Option<&str>) -> Vec<Point> {
    let files = StickFiles::read(&|p| stick::read_file(img, p)).expect("the stick's files");
    verify(bytes, key, Some(&files)).expect("an attestation block")
}

fn outcome<'a>(points: &'a [Point], what: &str) -> &'a Point {
    points
        .iter()
        .find(|p| p.what == what)
        .unwrap_or_else(|| panic!("no point {what}: {points:#?}"))
}

#[test]
fn a1_measured_boot_is_quoted_and_verifies_against_its_image() {
    let Some(a) = artifacts("a1_attestation") else {
        return;
    };
    let scratch = Scratch::new("a1_attestation");
    let dir = scratch.0.clone();
    let specs = disks(&["virtio,size=16M,serial=AT-V1"]);
    let config = json!({
        "tests": [{"workload": "seq_read", "name": "seqrd_1m", "bs": "1M", "runtime": "1s"}]
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome_ = boot_tpm(&a, &dir, Via::Uefi, &img, &specs, "");
    let (name, _, doc) = the_document(&outcome_);
    assert_schema_valid(&doc);
    let att = &doc["attestation"];
    assert_eq!(att["device"], "/dev/tpmrm0", "{att}");
    assert!(att.get("error").is_none(), "{att}");
    assert_eq!(att["pcr"], 15);
    for key in ["attest", "signature", "key_public", "key_name"] {
        assert!(
            att["quote"][key].as_str().is_some_and(|s| !s.is_empty()),
            "quote.{key}: {att}"
        );
    }
    assert!(att["event_log"].as_str().is_some_and(|s| s.len() > 1000), "{att}");
    let pcrs: Vec<u64> = att["pcrs"]
        .as_array()
        .expect("pcrs")
        .iter()
        .map(|p| p["index"].as_u64().unwrap())
        .collect();
    assert_eq!(pcrs, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15]);
    let key = att["quote"]["key_name"].as_str().unwrap().to_owned();

    // The document as it lands on the stick, the file a user is handed.
    let copied = dir.join("copied");
    stick::copy_results(&img, &copied).expect("results on the stick");
    let bytes = std::fs::read(copied.join(&name)).expect("the document on the stick");
    let points = verified(&bytes, &img, None);
    for p in &points {
        let expected = if p.what == "the key" {
            Outcome::NotProved
        } else {
            Outcome::Proved
        };
        assert_eq!(p.outcome, expected, "{points:#?}");
    }
    for what in [
        "shim",
        "GRUB",
        "GRUB's configuration",
        "the kernel",
        "the initramfs",
        "nothing else",
        "the config",
    ] {
        outcome(&points, what);
    }
    assert_eq!(
        outcome(&verified(&bytes, &img, Some(&key)), "the key").outcome,
        Outcome::Proved
    );
    assert_eq!(
        outcome(&verified(&bytes, &img, Some("000b00")), "the key").outcome,
        Outcome::Failed
    );

    // One figure changed (the first digit of the first throughput), in the
    // file's own text: the digest and the quote fail, naming the digests.
    let key_at = String::from_utf8_lossy(&bytes)
        .find("\"bytes_per_sec\": ")
        .expect("a throughput in the document");
    let at = key_at + "\"bytes_per_sec\": ".len();
    let mut changed = bytes.clone();
    assert!(changed[at].is_ascii_digit(), "a figure at byte {at}");
    changed[at] = if changed[at] == b'9' { b'1' } else { changed[at] + 1 };
    let points = verified(&changed, &img, None);
    let digest = outcome(&points, "the document's digest");
    assert_eq!(digest.outcome, Outcome::Failed);
    assert!(
        digest.detail.contains(att["document_sha256"].as_str().unwrap()),
        "{}",
        digest.detail
    );
    let quote = outcome(&points, "the quote");
    assert_eq!(quote.outcome, Outcome::Failed);
    assert!(quote.detail.contains("qualifying data"), "{}", quote.detail);

    // A stick whose initramfs differs by one byte.
    let other = dir.join("other.img");
    std::fs::copy(&img, &other).unwrap();
    let mut initrd = stick::read_file(&other, "initrd.img").unwrap();
    let mid = initrd.len() / 2;
    initrd[mid] ^= 1;
    let local = dir.join("initrd.img");
    std::fs::write(&local, &initrd).unwrap();
    stick::put_file(&other, &local, "/initrd.img").unwrap();
    let points = verified(&bytes, &other, None);
    let failed: Vec<&Point> = points.iter().filter(|p| p.outcome == Outcome::Failed).collect();
    assert_eq!(failed.len(), 1, "{points:#?}");
    assert_eq!(failed[0].what, "the initramfs");
    assert!(
        failed[0].detail.contains("/initrd.img measured into PCR 9 as "),
        "{}",
        failed[0].detail
    );
}
