//! `verify DOC`: what a result document's attestation proves, point by
//! point, and what it does not.
//!
//! 1. The document as received: its compact JSON
//!    ([`bench_core::document::frame::compact_json`], the same whether the
//!    file is pretty or compact) without its last member, `attestation`,
//!    hashes to the block's `document_sha256` (a single changed byte
//!    elsewhere fails here).
//! 2. The quote: under the key it names, over the PCRs it names, with that
//!    digest as its qualifying data ([`super::quote::check_quote`]); the
//!    PCR values it covers are computed, not taken from the document: PCRs
//!    0 to 9 by replaying the firmware's event log
//!    ([`bench_core::boot::eventlog`]), PCR 15 from its reset value
//!    extended with the config's digest and then the document's.
//! 3. The key: equal to the one expected (`--expect-key`), or only known
//!    to be this TPM's if it was enrolled: without the endorsement
//!    certificate's chain to the TPM's maker, or a credential activation,
//!    nothing here ties the key to a real TPM.
//! 4. The freshness: the nonce the quote covers (the qualifying data is
//!    then the SHA-256 of the digest followed by the nonce) is the one the
//!    verifier issued (`--expect-nonce`).
//! 5. With `--image`: the event log's measurements of shim, GRUB, its
//!    configuration, the kernel and the initramfs are those of the stick's
//!    files, nothing else was started or read, and the config the run
//!    measured is the stick's ([`super::image`]).

use bench_core::boot::eventlog::{parse_event_log, EventLog, ALG_SHA256};
use bench_core::document::frame::{base64_decode, compact_json};
use bench_core::document::result::{Attestation, ATTESTATION_PCR};
use ring::digest::{digest, Context, SHA256};

use super::image::{check, expected, StickFiles};
pub use super::point::{Outcome, Point};
use super::quote::{check_quote, hex, Quoted};

/// The compact JSON of the document without its `attestation` member,
/// and that member's JSON; `None` when the document has no such last
/// member.
pub fn split(doc: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let c = compact_json(doc);
    let key = b",\"attestation\":";
    let at = c.windows(key.len()).rposition(|w| w == key)?;
    let block = c.get(at + key.len()..c.len().checked_sub(1)?)?;
    if c.last() != Some(&b'}') || serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(block).is_err() {
        return None;
    }
    let mut without = c[..at].to_vec();
    without.push(b'}');
    Some((without, block.to_vec()))
}

/// SHA-256 of `parts` one after the other: a PCR extend is
/// `sha256(&[pcr, digest])`, and the event log's replay hashes the same way.
fn sha256(parts: &[&[u8]]) -> Vec<u8> {
    let mut c = Context::new(&SHA256);
    for p in parts {
        c.update(p);
    }
    c.finish().as_ref().to_vec()
}

/// What the verifier holds besides the document: each point it makes
/// provable.
#[derive(Clone, Copy, Debug, Default)]
pub struct Given<'a> {
    /// The key name the document must be signed by (`--expect-key`).
    pub key: Option<&'a str>,
    /// The nonce the verifier issued for this run (`--expect-nonce`, hex).
    pub nonce: Option<&'a str>,
    /// The files of the stick it must have booted from (`--image`, [`super::image`]).
    pub image: Option<&'a StickFiles>,
}

/// The verdict on document `bytes`, point by point, with what the
/// verifier holds (`given`). An `Err` when there is nothing to verify.
pub fn verify(bytes: &[u8], given: &Given<'_>) -> Result<Vec<Point>, String> {
    let (without, a, log) = opened(bytes)?;
    let expected = given.image.map(expected).transpose()?;
    let computed = digest(&SHA256, &without);
    let mut points = vec![digest_point(&a, computed.as_ref())];
    let quoted = match &log {
        Some(Err(e)) => Err(e.clone()),
        Some(Ok(l)) => quote_point(&a, Some(l), computed.as_ref()),
        None => quote_point(&a, None, computed.as_ref()),
    };
    let key = quoted.as_ref().ok().map(|q| q.key_name.clone());
    let proved_log = key.is_some() && log.is_some();
    points.push(match quoted {
        Ok(q) => Point {
            what: "the quote",
            outcome: Outcome::Proved,
            detail: format!(
                "signed by key {} over PCRs {} (SHA-256) with the document's digest{}; the PCR values replayed from the event log and the two extends of PCR {ATTESTATION_PCR}",
                q.key_name,
                q.pcrs.iter().map(|p| p.1.to_string()).collect::<Vec<_>>().join(","),
                if a.nonce.is_some() { " and the nonce" } else { "" }
            ),
        },
        Err(e) => Point {
            what: "the quote",
            outcome: if a.quote.is_none() { Outcome::NotProved } else { Outcome::Failed },
            detail: e,
        },
    });
    points.push(key_point(given.key, key.as_deref()));
    points.push(nonce_point(given.nonce, a.nonce.as_deref(), key.is_some()));
    if let Some(expected) = expected {
        let log = log.as_ref().and_then(|l| l.as_ref().ok());
        let config = given.image.and_then(|f| f.config.as_deref());
        points.extend(check(log, &expected, config, &a.config_sha256, proved_log));
    }
    Ok(points)
}

/// The key that signed an earlier document's quote, proved as [`verify`]
/// proves it (a machine's key from an earlier run, for `--expect-key`);
/// why not, when the document's quote is not proved.
pub fn proved_key(bytes: &[u8]) -> Result<String, String> {
    let (without, a, log) = opened(bytes)?;
    let log = log.transpose().map_err(|e| format!("its quote is not proved: {e}"))?;
    let computed = digest(&SHA256, &without);
    quote_point(&a, log.as_ref(), computed.as_ref())
        .map(|q| q.key_name)
        .map_err(|e| format!("its quote is not proved: {e}"))
}

/// The event log of an attestation, parsed, or why not; `None`: it has none.
type Log = Option<Result<EventLog, String>>;

/// A document opened for verifying: its compact JSON without the
/// attestation, the attestation, and its event log.
fn opened(bytes: &[u8]) -> Result<(Vec<u8>, Attestation, Log), String> {
    let (without, block) = split(bytes).ok_or("the document has no attestation block (its last member)")?;
    let a: Attestation = serde_json::from_slice(&block).map_err(|e| format!("the attestation block: {e}"))?;
    let log = a.event_log.as_ref().map(|l| {
        base64_decode(l)
            .map_err(|e| format!("the event log: {e}"))
            .and_then(|b| parse_event_log(&b).map_err(|e| format!("the event log: {e}")))
    });
    Ok((without, a, log))
}

/// The document as received against the digest the block says was measured.
fn digest_point(a: &Attestation, computed: &[u8]) -> Point {
    let same = hex(computed) == a.document_sha256;
    Point {
        what: "the document's digest",
        outcome: if same { Outcome::Proved } else { Outcome::Failed },
        detail: if same {
            format!("SHA-256 {} of the document without its attestation", a.document_sha256)
        } else {
            format!(
                "the document as received hashes to {}, the block says {}: it changed after it was measured",
                hex(computed),
                a.document_sha256
            )
        },
    }
}

/// The key that signed a proved quote (`got`) against the one expected.
fn key_point(want: Option<&str>, got: Option<&str>) -> Point {
    let (outcome, detail) = match (want, got) {
        (Some(want), Some(got)) if want.eq_ignore_ascii_case(got) => {
            (Outcome::Proved, format!("{got}, the key expected"))
        }
        (Some(want), Some(got)) => (Outcome::Failed, format!("{got}, not the key expected ({want})")),
        (_, Some(got)) => (
            Outcome::NotProved,
            format!(
                "{got}: known to be this machine's TPM only if it was enrolled (--expect-key); no endorsement certificate chain or credential activation was checked"
            ),
        ),
        (_, None) => (
            Outcome::NotProved,
            "no key is proved: the quote is not".to_string(),
        ),
    };
    Point {
        what: "the key",
        outcome,
        detail,
    }
}

/// The nonce the quote covers (`got`, proved when `quoted`) against the one
/// the verifier issued: what proves the document is younger than the request.
fn nonce_point(want: Option<&str>, got: Option<&str>, quoted: bool) -> Point {
    let (outcome, detail) = match (want, got) {
        (Some(want), Some(got)) if want.eq_ignore_ascii_case(got) && quoted => (
            Outcome::Proved,
            format!("the quote covers nonce {got}, the one expected: the document was made after it was issued"),
        ),
        (Some(want), Some(got)) if want.eq_ignore_ascii_case(got) => (
            Outcome::NotProved,
            format!("nonce {got}, the one expected, but the quote that would cover it is not proved"),
        ),
        (Some(want), Some(got)) => (Outcome::Failed, format!("nonce {got}, not the one expected ({want})")),
        (Some(want), None) => (
            Outcome::Failed,
            format!("the document carries no nonce; expected {want}: it may be older than the request"),
        ),
        (None, Some(got)) => (
            Outcome::NotProved,
            format!("the quote covers nonce {got}; whether the verifier issued it is not checked (--expect-nonce)"),
        ),
        (None, None) => (
            Outcome::NotProved,
            "no nonce: nothing proves when the document was made (bootbench.nonce_url=)".to_string(),
        ),
    };
    Point {
        what: "the freshness",
        outcome,
        detail,
    }
}

/// The quote checked against the values computed for its PCRs (PCRs 0 to
/// 9 replayed from `log`).
fn quote_point(a: &Attestation, log: Option<&EventLog>, doc_digest: &[u8]) -> Result<Quoted, String> {
    let q = a
        .quote
        .as_ref()
        .ok_or_else(|| format!("no quote: {}", a.error.as_deref().unwrap_or("none was made")))?;
    let b = |s: &str, what: &str| base64_decode(s).map_err(|e| format!("the quote's {what}: {e}"));
    let (public, attest, sig) = (
        b(&q.key_public, "key")?,
        b(&q.attest, "attestation")?,
        b(&q.signature, "signature")?,
    );
    let replayed = match log {
        Some(log) => Some(log.replay(ALG_SHA256, &sha256).map_err(|e| e.to_string())?),
        None => None,
    };
    let config = bench_core::vocab::hex::decode(&a.config_sha256).ok_or("the config's digest is not hex")?;
    let own = sha256(&[&sha256(&[&[0; 32], &config]), doc_digest]);
    let pcr = |alg: u16, n: u8| -> Option<Vec<u8>> {
        if alg != ALG_SHA256 {
            return None;
        }
        if n == ATTESTATION_PCR {
            return Some(own.clone());
        }
        replayed.as_ref().and_then(|r| r.get(usize::from(n)).cloned())
    };
    let nonce = match &a.nonce {
        Some(n) => Some(bench_core::vocab::hex::decode(n).ok_or("the nonce is not hex")?),
        None => None,
    };
    let qualifying = match &nonce {
        Some(n) => sha256(&[doc_digest, n]),
        None => doc_digest.to_vec(),
    };
    check_quote(&public, &attest, &sig, &qualifying, &pcr).map_err(|e| match (e, &a.event_log) {
        (super::quote::QuoteError::NoPcr(_, n), None) => {
            format!("PCR {n} cannot be computed: the document carries no event log")
        }
        (e, _) => e.to_string(),
    })
}

#[cfg(test)]
mod tests;
