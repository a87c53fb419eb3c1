//! A TPM 2.0 quote checked the way a verifier must: the attestation key's
//! public area (`TPMT_PUBLIC`) is a restricted signing key; the signed
//! structure (`TPMS_ATTEST`) is a quote the TPM generated; its signature
//! (`TPMT_SIGNATURE`) is the key's over those exact bytes; its qualifying
//! data is what the verifier expects; and its PCR digest is the digest of
//! the PCR values the verifier computed for the selection it names.
//!
//! Layouts: TPM 2.0 Library Part 2, "Structures": `TPMS_ATTEST` (10.12.12),
//! `TPMS_QUOTE_INFO` (10.12.4), `TPMT_SIGNATURE` (11.3.4), `TPMT_PUBLIC`
//! (12.2.4); unmarshaled by the `tpm2-protocol` crate. The key's name is its
//! name algorithm (2 bytes, big-endian) followed by that algorithm's digest
//! of the marshaled `TPMT_PUBLIC` (Part 1, 16, "Names"). The PCR digest is
//! the quote's hash of the selected PCRs' values concatenated, bank by bank
//! in the selection's order, each bank's PCRs in ascending order (Part 3,
//! `TPM2_Quote`; Part 1, `PCRComputeCurrentDigest`). The signature is
//! checked with `ring`: ECDSA P-256 or P-384, RSASSA-PKCS1-v1_5 and
//! RSASSA-PSS, over SHA-256 or SHA-384.

use std::fmt;

use ring::digest::{digest, Algorithm, SHA256, SHA384, SHA512};
use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey, VerificationAlgorithm};
use tpm2_protocol::data::{
    TpmAlgId, TpmEccCurve, TpmSt, TpmaObject, TpmsAttest, TpmtPublic, TpmtSignature, TpmuAsymScheme, TpmuAttest,
    TpmuPublicId, TpmuPublicParms, TpmuSignature,
};
use tpm2_protocol::TpmUnmarshal;

/// What a checked quote says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quoted {
    /// The attestation key's name (name algorithm and digest of its public
    /// area), lower-case hex: what `--expect-key` compares.
    pub key_name: String,
    /// The banks and PCRs the quote covers: (`TPM_ALG_ID`, PCR index).
    pub pcrs: Vec<(u16, u8)>,
    /// The TPM's clock (ms), reset and restart counts when it signed.
    pub clock: (u64, u32, u32),
    /// The TPM's firmware version.
    pub firmware_version: u64,
}

/// Why a quote does not prove what it claims.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QuoteError {
    /// A structure does not unmarshal (which, and the crate's error).
    Malformed(&'static str, String),
    /// The key is not a restricted signing key the TPM holds.
    Key(String),
    /// The attestation is not a quote the TPM generated.
    NotAQuote(String),
    /// The signature's scheme is not one this verifier checks.
    Scheme(String),
    /// The signature does not verify under the key.
    Signature,
    /// The qualifying data is not what was expected.
    QualifyingData {
        /// Hex of what was expected.
        expected: String,
        /// Hex of what the quote carries.
        quoted: String,
    },
    /// The verifier has no value for a PCR the quote covers.
    NoPcr(u16, u8),
    /// The PCR digest is not the digest of the PCR values computed.
    PcrDigest {
        /// Hex of the digest of the values computed.
        computed: String,
        /// Hex of the quote's.
        quoted: String,
    },
}

impl fmt::Display for QuoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuoteError::Malformed(what, e) => write!(f, "quote: the {what} does not unmarshal: {e}"),
            QuoteError::Key(why) => write!(f, "quote: the attestation key {why}"),
            QuoteError::NotAQuote(why) => write!(f, "quote: the attestation {why}"),
            QuoteError::Scheme(s) => write!(f, "quote: the signature's scheme {s} is not one this verifier checks"),
            QuoteError::Signature => write!(f, "quote: the signature does not verify under the attestation key"),
            QuoteError::QualifyingData { expected, quoted } => write!(
                f,
                "quote: the qualifying data is {quoted}, expected {expected} (the document's digest, with the nonce if any)"
            ),
            QuoteError::NoPcr(alg, pcr) => write!(f, "quote: no value for PCR {pcr} of bank {alg:#06x}"),
            QuoteError::PcrDigest { computed, quoted } => write!(
                f,
                "quote: the PCR digest is {quoted}; the PCR values computed give {computed}"
            ),
        }
    }
}

/// Lower-case hex.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `ring`'s digest algorithm of a TPM hash algorithm.
fn hash_of(alg: TpmAlgId) -> Option<&'static Algorithm> {
    match alg {
        TpmAlgId::Sha256 => Some(&SHA256),
        TpmAlgId::Sha384 => Some(&SHA384),
        TpmAlgId::Sha512 => Some(&SHA512),
        _ => None,
    }
}

/// Check a quote: the key's public area, the attestation, its signature;
/// `qualifying` the data the quote must carry; `pcr` the value the verifier
/// computed for a bank's PCR (from the event log, say).
pub fn check_quote(
    public: &[u8],
    attest: &[u8],
    sig: &[u8],
    qualifying: &[u8],
    pcr: &dyn Fn(u16, u8) -> Option<Vec<u8>>,
) -> Result<Quoted, QuoteError> {
    let key = whole::<TpmtPublic>(public, "attestation key's public area")?;
    let name_hash = hash_of(key.name_alg)
        .ok_or_else(|| QuoteError::Key(format!("has the name algorithm {:#06x}", key.name_alg.value())))?;
    let mut key_name = key.name_alg.value().to_be_bytes().to_vec();
    key_name.extend_from_slice(digest(name_hash, public).as_ref());
    let attrs = key.object_attributes;
    for (flag, what) in [
        (TpmaObject::RESTRICTED, "restricted"),
        (TpmaObject::SIGN_ENCRYPT, "sign"),
        (TpmaObject::FIXED_TPM, "fixedTPM"),
        (TpmaObject::SENSITIVE_DATA_ORIGIN, "sensitiveDataOrigin"),
    ] {
        if !attrs.contains(flag) {
            return Err(QuoteError::Key(format!("lacks the {what} attribute")));
        }
    }
    let a = whole::<TpmsAttest>(attest, "attestation")?;
    if a.attest_type != TpmSt::AttestQuote {
        return Err(QuoteError::NotAQuote(format!(
            "is of type {:#06x}, not a quote (TPM_ST_ATTEST_QUOTE)",
            a.attest_type.value()
        )));
    }
    let TpmuAttest::Quote(info) = &a.attested else {
        return Err(QuoteError::NotAQuote("carries no quote information".to_string()));
    };
    verify_signature(&key, attest, &whole::<TpmtSignature>(sig, "signature")?)?;
    if &*a.extra_data != qualifying {
        return Err(QuoteError::QualifyingData {
            expected: hex(qualifying),
            quoted: hex(&a.extra_data),
        });
    }
    // The quote's PCR digest uses the key's signing hash.
    let mut values = Vec::new();
    let mut pcrs = Vec::new();
    for sel in info.pcr_select.iter() {
        for (byte, bits) in sel.pcr_select.iter().enumerate() {
            for bit in 0..8u8 {
                if bits & (1 << bit) != 0 {
                    let n = u8::try_from(byte * 8).unwrap_or(u8::MAX).saturating_add(bit);
                    let alg = sel.hash.value();
                    values.extend(pcr(alg, n).ok_or(QuoteError::NoPcr(alg, n))?);
                    pcrs.push((alg, n));
                }
            }
        }
    }
    let computed = digest(signing_hash(&key)?, &values);
    if computed.as_ref() != &*info.pcr_digest {
        return Err(QuoteError::PcrDigest {
            computed: hex(computed.as_ref()),
            quoted: hex(&info.pcr_digest),
        });
    }
    Ok(Quoted {
        key_name: hex(&key_name),
        pcrs,
        clock: (
            a.clock_info.clock.value(),
            a.clock_info.reset_count.value(),
            a.clock_info.restart_count.value(),
        ),
        firmware_version: a.firmware_version.value(),
    })
}

/// `T` from all of `bytes`, nothing left over.
fn whole<T: TpmUnmarshal>(bytes: &[u8], what: &'static str) -> Result<T, QuoteError> {
    match T::unmarshal(bytes) {
        Ok((v, [])) => Ok(v),
        Ok((_, rest)) => Err(QuoteError::Malformed(what, format!("{} bytes left over", rest.len()))),
        Err(e) => Err(QuoteError::Malformed(what, format!("{e:?}"))),
    }
}

/// The hash of the key's signing scheme.
fn signing_hash(key: &TpmtPublic) -> Result<&'static Algorithm, QuoteError> {
    let details = match &key.parameters {
        TpmuPublicParms::Ecc(p) => Some(&p.scheme.details),
        TpmuPublicParms::Rsa(p) => Some(&p.scheme.details),
        _ => None,
    };
    let alg = match details {
        Some(TpmuAsymScheme::Hash(h)) => Some(h.hash_alg),
        _ => None,
    };
    alg.and_then(hash_of)
        .ok_or_else(|| QuoteError::Key("has no signing scheme with SHA-256, SHA-384 or SHA-512".to_string()))
}

/// The signature over `attest` under `key`.
fn verify_signature(key: &TpmtPublic, attest: &[u8], sig: &TpmtSignature) -> Result<(), QuoteError> {
    let scheme = || QuoteError::Scheme(format!("{:#06x}", sig.sig_alg.value()));
    match (&key.parameters, &key.unique, &sig.signature) {
        (TpmuPublicParms::Ecc(p), TpmuPublicId::Ecc(point), TpmuSignature::Ecdsa(s)) => {
            let (alg, size): (&dyn VerificationAlgorithm, usize) = match (p.curve_id, s.hash) {
                (TpmEccCurve::NistP256, TpmAlgId::Sha256) => (&signature::ECDSA_P256_SHA256_FIXED, 32),
                (TpmEccCurve::NistP384, TpmAlgId::Sha384) => (&signature::ECDSA_P384_SHA384_FIXED, 48),
                _ => return Err(scheme()),
            };
            let mut pk = vec![4u8];
            pk.extend(padded(&point.x, size)?);
            pk.extend(padded(&point.y, size)?);
            let mut rs = padded(&s.signature_r, size)?;
            rs.extend(padded(&s.signature_s, size)?);
            UnparsedPublicKey::new(alg, pk)
                .verify(attest, &rs)
                .map_err(|_| QuoteError::Signature)
        }
        (TpmuPublicParms::Rsa(p), TpmuPublicId::Rsa(n), TpmuSignature::Rsassa(s) | TpmuSignature::Rsapss(s)) => {
            let pss = matches!(sig.signature, TpmuSignature::Rsapss(_));
            let alg: &signature::RsaParameters = match (pss, s.hash) {
                (false, TpmAlgId::Sha256) => &signature::RSA_PKCS1_2048_8192_SHA256,
                (false, TpmAlgId::Sha384) => &signature::RSA_PKCS1_2048_8192_SHA384,
                (true, TpmAlgId::Sha256) => &signature::RSA_PSS_2048_8192_SHA256,
                (true, TpmAlgId::Sha384) => &signature::RSA_PSS_2048_8192_SHA384,
                _ => return Err(scheme()),
            };
            // An exponent of 0 in the public area means the default, 2^16 + 1.
            let e = match p.exponent.value() {
                0 => 65_537u32,
                e => e,
            };
            RsaPublicKeyComponents {
                n: &**n,
                e: &e.to_be_bytes()[..],
            }
            .verify(alg, attest, &s.sig)
            .map_err(|_| QuoteError::Signature)
        }
        _ => Err(scheme()),
    }
}

/// A big-endian integer left-padded to `size` bytes.
fn padded(b: &[u8], size: usize) -> Result<Vec<u8>, QuoteError> {
    if b.len() > size {
        return Err(QuoteError::Malformed(
            "signature",
            format!("a {}-byte ECC parameter", b.len()),
        ));
    }
    let mut v = vec![0u8; size - b.len()];
    v.extend_from_slice(b);
    Ok(v)
}

#[cfg(test)]
mod tests;
