//! The document's digest: the split of its last member, pretty or compact.

use super::*;
use bench_core::document::result::{Attestation, ResultDoc};

fn doc() -> ResultDoc {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/qemu-4disks-quick.json"
    ))
    .expect("fixture");
    serde_json::from_str(&text).expect("a document")
}

#[test]
fn the_document_without_its_attestation_is_what_was_measured() {
    let mut d = doc();
    d.attestation = None;
    let measured = serde_json::to_vec(&d).unwrap();
    d.attestation = Some(Attestation {
        pcr: 15,
        config_sha256: "ab".repeat(32),
        document_sha256: "cd".repeat(32),
        error: Some("no TPM".into()),
        ..Attestation::default()
    });
    for bytes in [serde_json::to_vec(&d).unwrap(), serde_json::to_vec_pretty(&d).unwrap()] {
        let (without, block) = split(&bytes).expect("an attestation member");
        assert_eq!(without, measured);
        let a: Attestation = serde_json::from_slice(&block).unwrap();
        assert_eq!(a.error.as_deref(), Some("no TPM"));
    }
    // No attestation, or not last: nothing to split.
    assert_eq!(split(&measured), None);
    assert_eq!(split(br#"{"attestation":{},"a":1}"#), None);
}

#[test]
fn a_document_without_a_quote_proves_nothing_and_says_why() {
    let mut d = doc();
    d.attestation = None;
    let measured = serde_json::to_vec(&d).unwrap();
    let digest = hex(ring::digest::digest(&SHA256, &measured).as_ref());
    d.attestation = Some(Attestation {
        pcr: 15,
        config_sha256: "ab".repeat(32),
        document_sha256: digest,
        error: Some("no TPM (/dev/tpmrm0: No such file or directory)".into()),
        ..Attestation::default()
    });
    let bytes = serde_json::to_vec_pretty(&d).unwrap();
    let points = verify(&bytes, &Given::default()).unwrap();
    assert_eq!(points[0].outcome, Outcome::Proved, "{points:?}");
    assert_eq!(points[1].outcome, Outcome::NotProved);
    assert!(points[1].detail.contains("no TPM"), "{}", points[1].detail);
    // One figure changed: the digest fails, naming both.
    let text = String::from_utf8(bytes)
        .unwrap()
        .replacen("\"seed\": ", "\"seed\": 1", 1);
    let points = verify(text.as_bytes(), &Given::default()).unwrap();
    assert_eq!(points[0].outcome, Outcome::Failed, "{points:?}");
    assert!(points[0].detail.contains("it changed after it was measured"));
    assert!(verify(&measured, &Given::default())
        .unwrap_err()
        .contains("no attestation block"));
}
