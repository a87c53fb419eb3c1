//! The quote check against a quote made by a real TPM engine: Debian's
//! swtpm 0.7 (a TPM 2.0 simulator) driven by tpm2-tools 5.4, as
//! `tests/fixtures/tpm/README.md` says; tpm2-tools' `tpm2_checkquote`
//! accepted it. PCRs 0-9 of the SHA-256 bank are zero (no firmware booted
//! the simulator), PCR 15 was extended once with SHA-256("config"), and the
//! qualifying data is SHA-256("doc").

use super::*;

fn fixture(name: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tpm")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn sha256(parts: &[&[u8]]) -> Vec<u8> {
    let mut c = ring::digest::Context::new(&SHA256);
    for p in parts {
        c.update(p);
    }
    c.finish().as_ref().to_vec()
}

/// The PCR values the fixture's TPM held.
fn pcrs(alg: u16, n: u8) -> Option<Vec<u8>> {
    match (alg, n) {
        (0x000B, 0..=9) => Some(vec![0; 32]),
        (0x000B, 15) => Some(sha256(&[&[0; 32], &sha256(&[b"config"])])),
        _ => None,
    }
}

struct Quote {
    public: Vec<u8>,
    attest: Vec<u8>,
    sig: Vec<u8>,
    nonce: Vec<u8>,
}

fn quote() -> Quote {
    Quote {
        public: fixture("ak.public"),
        attest: fixture("quote.attest"),
        sig: fixture("quote.sig"),
        nonce: sha256(&[b"doc"]),
    }
}

fn check(q: &Quote, pcr: &dyn Fn(u16, u8) -> Option<Vec<u8>>) -> Result<Quoted, QuoteError> {
    check_quote(&q.public, &q.attest, &q.sig, &q.nonce, pcr)
}

#[test]
fn a_quote_from_a_real_tpm_checks() {
    let q = quote();
    let ok = check(&q, &pcrs).expect("the quote checks");
    let mut want: Vec<(u16, u8)> = (0..10).map(|n| (0x000B, n)).collect();
    want.push((0x000B, 15));
    assert_eq!(ok.pcrs, want);
    // The key's name: SHA-256 (000b) and the digest of its public area.
    assert_eq!(ok.key_name, format!("000b{}", hex(&sha256(&[&q.public]))));
    assert_eq!(ok.key_name.len(), 68);
}

#[test]
fn a_changed_byte_anywhere_fails_and_says_what() {
    let q = quote();
    // The qualifying data (a document changed after the quote): named, both digests.
    let mut other = quote();
    other.nonce = sha256(&[b"doc2"]);
    match check(&other, &pcrs) {
        Err(QuoteError::QualifyingData { expected, quoted }) => {
            assert_eq!(expected, hex(&other.nonce));
            assert_eq!(quoted, hex(&q.nonce));
        }
        r => panic!("{r:?}"),
    }
    // A PCR value that differs from the one quoted: the PCR digest.
    let changed = |alg, n| if n == 15 { Some(vec![1; 32]) } else { pcrs(alg, n) };
    let e = check(&q, &changed).unwrap_err();
    assert!(matches!(e, QuoteError::PcrDigest { .. }), "{e:?}");
    assert!(e.to_string().contains("the PCR digest is "), "{e}");
    assert_eq!(check(&q, &|_, _| None), Err(QuoteError::NoPcr(0x000B, 0)));
    // Every byte of the attestation and of the signature's r and s: never accepted.
    for i in 0..q.attest.len() {
        let mut bad = quote();
        bad.attest[i] ^= 0x01;
        assert!(
            check(&bad, &pcrs).is_err(),
            "attestation byte {i} changed, still accepted"
        );
    }
    for i in 0..q.sig.len() {
        let mut bad = quote();
        bad.sig[i] ^= 0x01;
        assert!(
            check(&bad, &pcrs).is_err(),
            "signature byte {i} changed, still accepted"
        );
    }
    // The clock (bytes 0x4c-0x53) is signed: changed, the signature fails.
    let mut bad = quote();
    bad.attest[0x50] ^= 0x80;
    assert_eq!(check(&bad, &pcrs), Err(QuoteError::Signature));
}

#[test]
fn another_key_or_a_key_that_may_sign_anything_is_refused() {
    let q = quote();
    // The key's x coordinate changed: another key, the signature fails.
    let mut bad = quote();
    let last = bad.public.len() - 40;
    bad.public[last] ^= 0x01;
    assert_eq!(check(&bad, &pcrs), Err(QuoteError::Signature));
    // Not restricted (bit 16 of the attributes, bytes 4-7): such a key signs
    // any data, so a "quote" it signed proves nothing.
    let mut bad = quote();
    bad.public[5] &= !0x01;
    assert_eq!(
        check(&bad, &pcrs),
        Err(QuoteError::Key("lacks the restricted attribute".to_string()))
    );
    // Trailing bytes and a cut structure are malformed, naming which.
    let mut bad = quote();
    bad.sig.push(0);
    assert!(matches!(check(&bad, &pcrs), Err(QuoteError::Malformed("signature", _))));
    let bad = Quote {
        attest: q.attest[..40].to_vec(),
        ..quote()
    };
    assert!(matches!(
        check(&bad, &pcrs),
        Err(QuoteError::Malformed("attestation", _))
    ));
}
