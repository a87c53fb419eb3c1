//! PID 1's attestation checked by `verify`, end to end on the host: swtpm
//! (Debian's TPM 2.0 engine, .ci/deps) plays the machine's TPM, the test
//! plays its firmware (a crypto-agile event log whose events it extends
//! into the TPM, as firmware does), init's `boot::attest` measures and
//! quotes a document as PID 1 does, and `bootbench-report verify` says
//! what it proves; a changed figure, another key, a log that is not the
//! TPM's, and a document without a TPM are each named.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use bench_core::boot::eventlog::{ALG_SHA256, EV_NO_ACTION};
use bench_core::document::result::ResultDoc;
use bootbench_init::boot::attest;
use bootbench_init::sys::tpm::{Socket, Tpm};

struct Swtpm(Child, u16, PathBuf);

impl Drop for Swtpm {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        let _ = std::fs::remove_dir_all(&self.2);
    }
}

fn port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn swtpm(dir: &Path) -> Swtpm {
    std::fs::create_dir_all(dir).unwrap();
    let (p, c) = (port(), port());
    let child = Command::new("swtpm")
        .args(["socket", "--tpm2", "--flags", "not-need-init,startup-clear"])
        .arg("--tpmstate")
        .arg(format!("dir={}", dir.display()))
        .args([
            "--server",
            &format!("type=tcp,port={p}"),
            "--ctrl",
            &format!("type=tcp,port={c}"),
        ])
        .stdout(Stdio::null())
        .spawn()
        .expect("swtpm (Debian's swtpm package, installed by .ci/deps)");
    Swtpm(child, p, dir.to_owned())
}

fn connect(s: &Swtpm) -> Tpm<Socket> {
    for _ in 0..100 {
        if let Ok(c) = TcpStream::connect(("127.0.0.1", s.1)) {
            return Tpm::new(Socket(c));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("swtpm did not listen");
}

fn sha256(b: &[u8]) -> [u8; 32] {
    attest::sha256(b)
}

/// A crypto-agile log (SHA-256 bank only) of `events` (PCR, data): each
/// event's digest is the SHA-256 of its data.
fn event_log(events: &[(u32, &[u8])]) -> Vec<u8> {
    let mut spec = b"Spec ID Event03\0".to_vec();
    spec.extend(0u32.to_le_bytes());
    spec.extend([0, 2, 0, 2]);
    spec.extend(1u32.to_le_bytes());
    spec.extend(ALG_SHA256.to_le_bytes());
    spec.extend(32u16.to_le_bytes());
    spec.push(0);
    let mut log = Vec::new();
    log.extend(0u32.to_le_bytes());
    log.extend(EV_NO_ACTION.to_le_bytes());
    log.extend([0u8; 20]);
    log.extend(u32::try_from(spec.len()).unwrap().to_le_bytes());
    log.extend(spec);
    for (pcr, data) in events {
        log.extend(pcr.to_le_bytes());
        log.extend(0x8000_0003u32.to_le_bytes());
        log.extend(1u32.to_le_bytes());
        log.extend(ALG_SHA256.to_le_bytes());
        log.extend(sha256(data));
        log.extend(u32::try_from(data.len()).unwrap().to_le_bytes());
        log.extend(*data);
    }
    log
}

fn document() -> ResultDoc {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/qemu-4disks-quick.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn verify(dir: &Path, bytes: &[u8], key: Option<&str>) -> (bool, String) {
    verify_with(dir, bytes, key.map(|k| ["--expect-key", k]).as_slice())
}

/// `bootbench-report verify` of `bytes` with `args` after the document.
fn verify_with(dir: &Path, bytes: &[u8], args: &[[&str; 2]]) -> (bool, String) {
    let f = dir.join("doc.json");
    std::fs::write(&f, bytes).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_bootbench-report"));
    c.arg("verify").arg(&f);
    for a in args {
        c.args(a);
    }
    let o = c.output().unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
    )
}

/// A measured run: the firmware's events extended, the config measured,
/// the document measured and quoted; its pretty JSON.
fn measured(sw: &Swtpm, events: &[(u32, &[u8])], log: Vec<u8>) -> (Vec<u8>, String) {
    measured_with(sw, events, log, None)
}

/// [`measured`] with a verifier's nonce.
fn measured_with(sw: &Swtpm, events: &[(u32, &[u8])], log: Vec<u8>, nonce: Option<&[u8]>) -> (Vec<u8>, String) {
    let mut tpm = connect(sw);
    for (pcr, data) in events {
        tpm.pcr_extend(u8::try_from(*pcr).unwrap(), &sha256(data)).unwrap();
    }
    let mut said = Vec::new();
    let m = attest::begin_with(
        Ok(("swtpm".to_string(), tpm)),
        Some(log),
        b"{\"profile\":\"quick\"}",
        nonce.map(<[u8]>::to_vec),
        &mut |l| said.push(l.to_string()),
    );
    let mut doc = document();
    attest::finish(m, &mut doc, &mut |l| said.push(l.to_string()));
    let a = doc.attestation.as_ref().unwrap();
    assert_eq!(a.error, None, "{said:?}");
    let key = a.quote.as_ref().unwrap().key_name.clone();
    (serde_json::to_vec_pretty(&doc).unwrap(), key)
}

#[test]
fn a_measured_document_verifies_and_a_changed_one_does_not() {
    let dir = std::env::temp_dir().join(format!("bootbench-attest-{}", std::process::id()));
    let sw = swtpm(&dir.join("tpm"));
    let events: [(u32, &[u8]); 3] = [(0, b"firmware"), (4, b"shim"), (9, b"/vmlinuz")];
    let (bytes, key) = measured(&sw, &events, event_log(&events));

    let (ok, out) = verify(&dir, &bytes, Some(&key));
    assert!(ok, "{out}");
    assert!(out.contains("the document's digest: proved"), "{out}");
    assert!(out.contains("the quote: proved: signed by key 000b"), "{out}");
    assert!(out.contains("over PCRs 0,1,2,3,4,5,6,7,8,9,15"), "{out}");
    assert!(out.contains("the key: proved"), "{out}");
    // Without --expect-key: the key is not proved, the run still verifies.
    let (ok, out) = verify(&dir, &bytes, None);
    assert!(ok && out.contains("the key: not proved"), "{out}");
    // Another machine's key expected: failed.
    let (ok, out) = verify(&dir, &bytes, Some("000b00"));
    assert!(!ok && out.contains("the key: FAILED"), "{out}");
    // The key of an earlier document of the machine (its quote proved): proved.
    let earlier = dir.join("earlier.json");
    std::fs::write(&earlier, &bytes).unwrap();
    let (ok, out) = verify(&dir, &bytes, Some(earlier.to_str().unwrap()));
    assert!(
        ok && out.contains(&format!("the key: proved: {key}, the key expected")),
        "{out}"
    );

    // One figure changed: the digest fails, naming both digests.
    let text = String::from_utf8(bytes.clone()).unwrap();
    let changed = text.replacen("\"bytes_per_sec\": ", "\"bytes_per_sec\": 9", 1);
    assert_ne!(changed, text);
    let (ok, out) = verify(&dir, changed.as_bytes(), Some(&key));
    assert!(!ok && out.contains("the document's digest: FAILED"), "{out}");
    assert!(out.contains("it changed after it was measured"), "{out}");
    // A digest changed to match the changed document: the quote fails on its qualifying data.
    let mut doc: ResultDoc = serde_json::from_str(&changed).unwrap();
    let mut a = doc.attestation.take().unwrap();
    a.document_sha256 = digests(&sha256(&serde_json::to_vec(&doc).unwrap()));
    doc.attestation = Some(a);
    let forged = serde_json::to_vec_pretty(&doc).unwrap();
    let (ok, out) = verify(&dir, &forged, Some(&key));
    assert!(!ok && out.contains("the document's digest: proved"), "{out}");
    assert!(
        out.contains("the quote: FAILED: quote: the qualifying data is"),
        "{out}"
    );
    // An earlier document whose quote is not proved names no key.
    std::fs::write(&earlier, &forged).unwrap();
    let (ok, out) = verify(&dir, &bytes, Some(earlier.to_str().unwrap()));
    assert!(
        !ok && out.contains("its quote is not proved: quote: the qualifying data is"),
        "{out}"
    );
    // Keys reordered (the attestation no longer last): nothing to verify.
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let (ok, out) = verify(&dir, &serde_json::to_vec(&v).unwrap(), Some(&key));
    assert!(!ok && out.contains("no attestation block (its last member)"), "{out}");
}

fn digests(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn a_log_that_is_not_the_tpms_or_no_tpm_proves_nothing() {
    let dir = std::env::temp_dir().join(format!("bootbench-attest-log-{}", std::process::id()));
    let sw = swtpm(&dir.join("tpm"));
    let events: [(u32, &[u8]); 2] = [(0, b"firmware"), (4, b"shim")];
    // The log claims another shim than the one extended.
    let (bytes, key) = measured(&sw, &events, event_log(&[(0, b"firmware"), (4, b"other shim")]));
    let (ok, out) = verify(&dir, &bytes, Some(&key));
    assert!(
        !ok && out.contains("the quote: FAILED: quote: the PCR digest is"),
        "{out}"
    );

    // No TPM: the run goes on, the block says so, nothing is proved but the digest.
    let m = attest::begin_with::<Socket>(
        Err("no TPM (/dev/tpmrm0: not found)".into()),
        None,
        b"{}",
        None,
        &mut |_| {},
    );
    let mut doc = document();
    attest::finish(m, &mut doc, &mut |_| {});
    let bytes = serde_json::to_vec(&doc).unwrap();
    let (ok, out) = verify(&dir, &bytes, None);
    assert!(!ok, "{out}");
    assert!(out.contains("the document's digest: proved"), "{out}");
    assert!(
        out.contains("the quote: not proved: no quote: no TPM (/dev/tpmrm0: not found)"),
        "{out}"
    );
}

#[test]
fn a_nonce_in_the_quote_proves_the_document_younger_than_it() {
    let dir = std::env::temp_dir().join(format!("bootbench-attest-nonce-{}", std::process::id()));
    let sw = swtpm(&dir.join("tpm"));
    let events: [(u32, &[u8]); 1] = [(0, b"firmware")];
    let nonce = [0x5a_u8; 16];
    let hex_nonce = digests(&nonce);
    let (bytes, _) = measured_with(&sw, &events, event_log(&events), Some(&nonce));
    let doc: ResultDoc = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        doc.attestation.as_ref().unwrap().nonce.as_deref(),
        Some(hex_nonce.as_str())
    );

    let (ok, out) = verify_with(&dir, &bytes, &[["--expect-nonce", &hex_nonce]]);
    assert!(ok, "{out}");
    assert!(out.contains("with the document's digest and the nonce"), "{out}");
    assert!(
        out.contains(&format!(
            "the freshness: proved: the quote covers nonce {hex_nonce}, the one expected"
        )),
        "{out}"
    );
    // Without --expect-nonce: the nonce is shown, not proved to be the verifier's.
    let (ok, out) = verify_with(&dir, &bytes, &[]);
    assert!(
        ok && out.contains("the freshness: not proved: the quote covers nonce"),
        "{out}"
    );
    // Another nonce expected (a replayed document): failed.
    let other = "00".repeat(16);
    let (ok, out) = verify_with(&dir, &bytes, &[["--expect-nonce", &other]]);
    assert!(
        !ok && out.contains(&format!(
            "the freshness: FAILED: nonce {hex_nonce}, not the one expected ({other})"
        )),
        "{out}"
    );
    // The block's nonce rewritten to the one expected: the quote no longer covers it.
    let text = String::from_utf8(bytes.clone()).unwrap();
    let rewritten = text.replace(&hex_nonce, &other);
    let (ok, out) = verify_with(&dir, rewritten.as_bytes(), &[["--expect-nonce", &other]]);
    assert!(
        !ok && out.contains("the quote: FAILED: quote: the qualifying data is"),
        "{out}"
    );
    assert!(out.contains("the freshness: not proved: nonce"), "{out}");
    // A document without a nonce, a nonce expected: failed.
    let (plain, _) = measured(&sw, &events, event_log(&events));
    let (ok, out) = verify_with(&dir, &plain, &[["--expect-nonce", &hex_nonce]]);
    assert!(
        !ok && out.contains("the freshness: FAILED: the document carries no nonce"),
        "{out}"
    );
}
