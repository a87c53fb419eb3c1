//! PID 1's measured run (issue 51): the config's digest extended into the
//! TPM before anything runs ([`begin`]), and at the end the document's
//! digest extended and quoted, with what a verifier needs, in the
//! document's `attestation` block ([`finish`]). A machine without a TPM
//! runs as any other: the block says there is none. Nothing here touches
//! a disk; the TPM changes only by the two extends of PCR 15 and the
//! transient attestation key, flushed before the block is written.

use std::fs::{File, OpenOptions};

use bench_core::document::frame::base64_encode;
use bench_core::document::result::{
    Attestation, EkCertificate, PcrValue, Quote, ResultDoc, ATTESTATION_PCR, QUOTED_PCRS,
};

use crate::disks::telemetry::sha256_hex;
use crate::sys::tpm::{Tpm, TpmFail, Transport};

/// Where the kernel shows the firmware's event log.
const EVENT_LOG: &str = "/sys/kernel/security/tpm0/binary_bios_measurements";
/// The TPM devices, the resource-managed one first.
const DEVICES: [&str; 2] = ["/dev/tpmrm0", "/dev/tpm0"];
/// The endorsement key certificates' NV indices (TCG EK Credential Profile
/// 2.0, 2.2.1.5): the ECC NIST P-256 key's, then the RSA 2048 key's.
const EK_CERT_INDICES: [u32; 2] = [0x01C0_000A, 0x01C0_0002];

/// SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    let d = ring::digest::digest(&ring::digest::SHA256, bytes);
    d.as_ref().try_into().unwrap_or([0; 32])
}

/// The quote's qualifying data: the document's digest, or with a
/// verifier's nonce the SHA-256 of the digest followed by the nonce
/// (`verify` computes the same, [`bench_core::document::result::Attestation::nonce`]).
pub fn qualifying_data(digest: &[u8; 32], nonce: Option<&[u8]>) -> [u8; 32] {
    match nonce {
        Some(n) => sha256(&[digest.as_slice(), n].concat()),
        None => *digest,
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A run being measured: the TPM (or why none), what was extended.
pub struct Measuring<T: Transport = File> {
    tpm: Result<(String, Tpm<T>), String>,
    config_sha256: [u8; 32],
    event_log: Option<Vec<u8>>,
    /// A verifier's nonce ([`bench_core::boot::cmdline::Key::NonceUrl`]).
    nonce: Option<Vec<u8>>,
    error: Option<String>,
}

impl<T: Transport> std::fmt::Debug for Measuring<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Measuring")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

/// Open the machine's TPM, read the firmware's event log, and extend PCR
/// [`ATTESTATION_PCR`] with the SHA-256 of `config` (the text the run
/// runs); `nonce`, a verifier's, goes into the quote ([`finish`]). Says on
/// the console what it did.
pub fn begin(config: &[u8], nonce: Option<Vec<u8>>, log: &mut dyn FnMut(&str)) -> Measuring {
    let event_log = std::fs::read(EVENT_LOG).ok().filter(|l| !l.is_empty());
    begin_with(open(), event_log, config, nonce, log)
}

/// [`begin`] with the TPM (its name, or why there is none) and the event
/// log given.
pub fn begin_with<T: Transport>(
    tpm: Result<(String, Tpm<T>), String>,
    event_log: Option<Vec<u8>>,
    config: &[u8],
    nonce: Option<Vec<u8>>,
    log: &mut dyn FnMut(&str),
) -> Measuring<T> {
    let config_sha256 = sha256(config);
    let mut m = Measuring {
        tpm,
        config_sha256,
        event_log,
        nonce,
        error: None,
    };
    match &mut m.tpm {
        Ok((dev, tpm)) => match tpm.pcr_extend(ATTESTATION_PCR, &config_sha256) {
            Ok(()) => log(&format!(
                "attestation: {dev}: the config's SHA-256 {} extended into PCR {ATTESTATION_PCR}; the firmware's event log: {}",
                hex(&config_sha256),
                m.event_log.as_ref().map_or("none".to_string(), |l| format!("{} bytes", l.len()))
            )),
            Err(e) => {
                log(&format!("attestation: {dev}: extending PCR {ATTESTATION_PCR}: {e}; no quote"));
                m.error = Some(format!("extending PCR {ATTESTATION_PCR} with the config's digest: {e}"));
            }
        },
        Err(why) => log(&format!("attestation: {why}: the document carries no quote")),
    }
    m
}

/// The first TPM device that opens for reading and writing.
fn open() -> Result<(String, Tpm<File>), String> {
    let mut whys = Vec::new();
    for dev in DEVICES {
        match OpenOptions::new().read(true).write(true).open(dev) {
            Ok(f) => return Ok((dev.to_string(), Tpm::new(f))),
            Err(e) => whys.push(format!("{dev}: {e}")),
        }
    }
    Err(format!("no TPM ({})", whys.join("; ")))
}

/// Measure the finished `doc` and put the attestation in it: its digest
/// (the compact JSON without the block) extended into PCR
/// [`ATTESTATION_PCR`], quoted with that digest as qualifying data (with a
/// nonce: SHA-256 of the digest followed by the nonce), the PCR values, the
/// key, the endorsement certificate and the event log. `doc` must not
/// change afterwards.
pub fn finish<T: Transport>(m: Measuring<T>, doc: &mut ResultDoc, log: &mut dyn FnMut(&str)) {
    doc.attestation = None;
    let bytes = serde_json::to_vec(&*doc).unwrap_or_default();
    let digest = sha256(&bytes);
    let mut a = Attestation {
        device: None,
        error: m.error,
        pcr: ATTESTATION_PCR,
        config_sha256: hex(&m.config_sha256),
        document_sha256: hex(&digest),
        nonce: m.nonce.as_deref().map(hex),
        pcrs: Vec::new(),
        quote: None,
        ek_certificate: None,
        event_log: m.event_log.as_deref().map(base64_encode),
    };
    match m.tpm {
        Err(why) => a.error = Some(why),
        Ok((dev, mut tpm)) => {
            a.device = Some(dev.clone());
            if a.error.is_none() {
                match quote(&mut tpm, &digest, m.nonce.as_deref(), &mut a) {
                    Ok(()) => log(&format!(
                        "attestation: {dev}: the document's SHA-256 {} extended into PCR {ATTESTATION_PCR} and quoted (key {})",
                        a.document_sha256,
                        a.quote.as_ref().map_or("", |q| q.key_name.as_str())
                    )),
                    Err(e) => {
                        log(&format!("attestation: {dev}: {e}; no quote"));
                        a.error = Some(e.to_string());
                    }
                }
            }
        }
    }
    doc.attestation = Some(a);
}

/// The extend, the key, the quote, the PCRs, the certificate; the key
/// flushed whatever happens after it was made.
fn quote<T: Transport>(
    tpm: &mut Tpm<T>,
    digest: &[u8; 32],
    nonce: Option<&[u8]>,
    a: &mut Attestation,
) -> Result<(), TpmFail> {
    tpm.pcr_extend(ATTESTATION_PCR, digest)?;
    let ak = tpm.create_ak()?;
    let qualifying = qualifying_data(digest, nonce);
    let quoted = tpm.quote(&ak, &qualifying, &QUOTED_PCRS);
    let flushed = tpm.flush(ak.handle);
    let (attest, signature) = quoted?;
    flushed?;
    a.quote = Some(Quote {
        attest: base64_encode(&attest),
        signature: base64_encode(&signature),
        key_public: base64_encode(&ak.public),
        key_name: format!("000b{}", sha256_hex(&ak.public)),
    });
    a.pcrs = tpm
        .pcr_read(&QUOTED_PCRS)?
        .into_iter()
        .map(|(index, v)| PcrValue { index, sha256: hex(&v) })
        .collect();
    for index in EK_CERT_INDICES {
        if let Some(der) = tpm.nv_read(index)? {
            a.ek_certificate = Some(EkCertificate {
                nv_index: index,
                der: base64_encode(&der),
            });
            break;
        }
    }
    Ok(())
}
