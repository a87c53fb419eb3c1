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
//!   document, and quotes over the nonce it fetched from a live verifier
//!   (nginx; `bootbench.nonce_url=` added to the stick's grub.cfg, so
//!   GRUB measures it too). The document carries the quote, the nonce, the
//!   PCR values, the key and the event log. `verify` with the stick image
//!   and the nonce proves every point but the key (nothing enrolled it); the same document with one
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

use bootbench_e2e::{
    artifacts, assert_schema_valid, boot_tpm, disks, stick_copy, the_document, Collector, Scratch, Via, GUEST_HTTP,
};
use bootbench_qemu::stick;
use bootbench_report::verify::doc::{verify, Given, Outcome, Point};
use bootbench_report::verify::image::StickFiles;
use serde_json::json;
use std::path::Path;

/// The points of `verify` on `bytes` with the stick image `img`.
fn verified(bytes: &[u8], img: &Path, key: Option<&str>) -> Vec<Point> {
    let files = StickFiles::read(&|p| stick::read_file(img, p)).expect("the stick's files");
    let given = Given {
        key,
        nonce: Some(NONCE),
        image: Some(&files),
    };
    verify(bytes, &given).expect("an attestation block")
}

/// The nonce the live verifier serves for `a1`'s boot.
const NONCE: &str = "a1a1a1a1b2b2b2b2c3c3c3c3d4d4d4d4";

/// The stick copy `img` sends PID 1 for a nonce to `url` (its grub.cfg's
/// kernel command line: GRUB measures the change too).
fn ask_for_a_nonce(dir: &Path, img: &Path, url: &str) {
    let cfg = String::from_utf8(stick::read_file(img, "EFI/BOOT/grub.cfg").unwrap()).unwrap();
    let with_nonce = cfg.replacen(
        "linuxefi /vmlinuz ",
        &format!("linuxefi /vmlinuz bootbench.nonce_url={url} "),
        1,
    );
    assert_ne!(cfg, with_nonce, "{cfg}");
    let local = dir.join("grub.cfg");
    std::fs::write(&local, with_nonce).unwrap();
    stick::put_file(img, &local, "/EFI/BOOT/grub.cfg").unwrap();
}

/// `bytes` with one figure changed (the first digit of the first
/// throughput), in the file's own text.
fn one_figure_changed(bytes: &[u8]) -> Vec<u8> {
    let key = "\"bytes_per_sec\": ";
    let at = String::from_utf8_lossy(bytes)
        .find(key)
        .expect("a throughput in the document")
        + key.len();
    let mut changed = bytes.to_vec();
    assert!(changed[at].is_ascii_digit(), "a figure at byte {at}");
    changed[at] = if changed[at] == b'9' { b'1' } else { changed[at] + 1 };
    changed
}

/// A copy of the stick image `img` whose initramfs differs by one byte.
fn initramfs_changed(dir: &Path, img: &Path) -> std::path::PathBuf {
    let other = dir.join("other.img");
    std::fs::copy(img, &other).unwrap();
    let mut initrd = stick::read_file(&other, "initrd.img").unwrap();
    let mid = initrd.len() / 2;
    initrd[mid] ^= 1;
    let local = dir.join("initrd.img");
    std::fs::write(&local, &initrd).unwrap();
    stick::put_file(&other, &local, "/initrd.img").unwrap();
    other
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
    // A live verifier: nginx serves this boot's nonce; grub.cfg sends PID 1 to it.
    let www = dir.join("www");
    std::fs::create_dir_all(&www).unwrap();
    std::fs::write(www.join("nonce"), format!("{NONCE}\n")).unwrap();
    let Some(verifier) = Collector::start(&dir.join("nginx"), &www) else {
        return;
    };
    ask_for_a_nonce(&dir, &img, &format!("{GUEST_HTTP}/nonce"));
    let outcome_ = boot_tpm(&a, &dir, Via::Uefi, &img, &specs, &[verifier.port()]);
    let (name, _, doc) = the_document(&outcome_);
    assert_schema_valid(&doc);
    let att = &doc["attestation"];
    assert_eq!(att["device"], "/dev/tpmrm0", "{att}");
    assert!(att.get("error").is_none(), "{att}");
    assert_eq!(att["pcr"], 15);
    assert_eq!(att["nonce"], NONCE, "{att}");
    assert!(
        verifier.requests().iter().any(|r| r.starts_with("GET /nonce")),
        "{:?}",
        verifier.requests()
    );
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
        "the freshness",
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

    // One figure changed: the digest and the quote fail, naming the digests.
    let points = verified(&one_figure_changed(&bytes), &img, None);
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

    // A stick whose initramfs differs by one byte: that measurement fails, nothing else.
    let points = verified(&bytes, &initramfs_changed(&dir, &img), None);
    let failed: Vec<&Point> = points.iter().filter(|p| p.outcome == Outcome::Failed).collect();
    assert_eq!(failed.len(), 1, "{points:#?}");
    assert_eq!(failed[0].what, "the initramfs");
    assert!(
        failed[0].detail.contains("/initrd.img measured into PCR 9 as "),
        "{}",
        failed[0].detail
    );
}
