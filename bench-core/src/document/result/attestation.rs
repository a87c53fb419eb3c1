//! A run's attestation in the document: what PID 1 measured into the TPM
//! and the TPM's quote over it, for `bootbench-report verify` (docs/results.md,
//! "Attestation"). PID 1 extends PCR [`ATTESTATION_PCR`] with the SHA-256 of
//! the config it runs, then with the SHA-256 of the document without this
//! block (its compact JSON: [`crate::document::frame::compact_json`] of any
//! form of it, this member cut); that digest is also the quote's qualifying
//! data. The byte strings are base64 (standard alphabet, padded); digests
//! lower-case hex.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

/// The PCR bootbench extends: 15, which no firmware, shim or GRUB
/// measures into, and which (unlike 16 and 23) software cannot reset.
pub const ATTESTATION_PCR: u8 = 15;

/// The PCRs a quote covers: the firmware's, shim's and GRUB's (0 to 9) and
/// bootbench's own.
pub const QUOTED_PCRS: [u8; 11] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ATTESTATION_PCR];

/// The run's attestation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attestation {
    /// The TPM device used (`/dev/tpmrm0`); absent when the machine has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Why the block carries no quote, or what failed (no TPM; a command
    /// the TPM refused, naming it and its response code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The PCR bootbench extended ([`ATTESTATION_PCR`]).
    pub pcr: u8,
    /// SHA-256 of the config text the run ran, the first extend.
    pub config_sha256: String,
    /// SHA-256 of the document without this block, the second extend and
    /// the quote's qualifying data (with a [`Attestation::nonce`], part of it).
    pub document_sha256: String,
    /// A verifier's nonce (hex, 8 to 32 bytes), fetched from
    /// `bootbench.nonce_url=` before the run: the quote's qualifying data is
    /// then the SHA-256 of the document's digest followed by the nonce, so
    /// the document is proved to be younger than the nonce.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    /// The SHA-256 bank's values of the quoted PCRs, read after the quote.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pcrs: Vec<PcrValue>,
    /// The quote, absent when none was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<Quote>,
    /// The endorsement key's certificate, where the TPM holds one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ek_certificate: Option<EkCertificate>,
    /// The firmware's event log (`binary_bios_measurements`), base64;
    /// absent when the kernel shows none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_log: Option<String>,
}

/// A PCR's value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcrValue {
    /// The PCR's index.
    pub index: u8,
    /// Its SHA-256 bank's value, hex.
    pub sha256: String,
}

/// A TPM 2.0 quote and the key that signed it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quote {
    /// The signed `TPMS_ATTEST`, base64.
    pub attest: String,
    /// Its `TPMT_SIGNATURE`, base64.
    pub signature: String,
    /// The attestation key's `TPMT_PUBLIC`, base64.
    pub key_public: String,
    /// The key's name (its name algorithm and digest of its public area),
    /// hex: the same on every boot of the machine until its TPM is cleared.
    pub key_name: String,
}

/// The endorsement key's certificate, as the TPM's maker stored it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EkCertificate {
    /// Its NV index (0x01C0000A for the ECC key's, 0x01C00002 for the RSA key's).
    pub nv_index: u32,
    /// The certificate (DER), base64.
    pub der: String,
}
