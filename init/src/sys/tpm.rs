//! A TPM 2.0, spoken to directly: the commands of a measured run's
//! attestation (issue 51), marshaled by the `tpm2-protocol` crate, sent to
//! the kernel's resource-managed device `/dev/tpmrm0` (or any
//! [`Transport`]: the tests' is swtpm's TCP port). Nothing here writes a
//! disk; the TPM's state changes only by the PCR extends and the transient
//! attestation key, which [`Tpm::flush`] removes.
//!
//! - [`Tpm::pcr_extend`]: `TPM2_PCR_Extend` of a SHA-256 digest.
//! - [`Tpm::pcr_read`]: `TPM2_PCR_Read` of SHA-256 PCRs.
//! - [`Tpm::create_ak`]: `TPM2_CreatePrimary` under the endorsement
//!   hierarchy with [`ak_template`]: an ECC P-256 restricted signing key,
//!   ECDSA with SHA-256. A primary key is derived from the hierarchy's seed
//!   and the template, so a machine's key is the same at every boot (until
//!   its TPM is cleared).
//! - [`Tpm::quote`]: `TPM2_Quote` of SHA-256 PCRs with the caller's
//!   qualifying data.
//! - [`Tpm::nv_read`]: an NV index whole (`TPM2_NV_ReadPublic`, then
//!   `TPM2_NV_Read` in chunks): the endorsement key's certificate.
//! - [`Tpm::flush`] sends `TPM2_FlushContext`.
//!
//! Authorization is the password session with an empty password
//! (`TPM_RS_PW`): the endorsement hierarchy's and the key's. A TPM whose
//! owner set an endorsement password refuses the key; the run then records
//! the TPM's answer.

use std::io::{self, Read, Write};

use tpm2_protocol::basic::TpmHandle;
use tpm2_protocol::data::{
    Tpm2bData, Tpm2bPublic, TpmAlgId, TpmCc, TpmEccCurve, TpmRh, TpmSt, TpmaObject, TpmaSession, TpmlDigestValues,
    TpmlPcrSelection, TpmsAuthCommand, TpmsEccParms, TpmsEccPoint, TpmsPcrSelect, TpmsPcrSelection, TpmsSchemeHash,
    TpmtEccScheme, TpmtHa, TpmtKdfScheme, TpmtPublic, TpmtSigScheme, TpmtSymDefObject, TpmuAsymScheme, TpmuHa,
    TpmuPublicId, TpmuPublicParms, TpmuSigScheme,
};
use tpm2_protocol::frame::{
    tpm_marshal_command, TpmCreatePrimaryCommand, TpmCreatePrimaryResponse, TpmFlushContextCommand,
    TpmFlushContextResponse, TpmFrame, TpmNvReadCommand, TpmNvReadPublicCommand, TpmNvReadPublicResponse,
    TpmNvReadResponse, TpmPcrExtendCommand, TpmPcrExtendResponse, TpmPcrReadCommand, TpmPcrReadResponse,
    TpmQuoteCommand, TpmQuoteResponse, TpmResponse, TpmUnmarshalBody,
};
use tpm2_protocol::{TpmMarshal, TpmWriter};

/// The largest command or response this client sends or takes (the TPM
/// 2.0 PC Client's `MAX_COMMAND_SIZE` / `MAX_RESPONSE_SIZE`).
pub const MAX_FRAME: usize = 4096;

/// Where commands go: one command in, its response out.
pub trait Transport {
    /// Send `command`, return the whole response.
    fn transact(&mut self, command: &[u8]) -> io::Result<Vec<u8>>;
}

/// The kernel's TPM device (`/dev/tpmrm0`, `/dev/tpm0`): a write of a whole
/// command, a read of its whole response.
impl Transport for std::fs::File {
    fn transact(&mut self, command: &[u8]) -> io::Result<Vec<u8>> {
        self.write_all(command)?;
        let mut buf = vec![0u8; MAX_FRAME];
        let n = self.read(&mut buf)?;
        buf.truncate(n);
        Ok(buf)
    }
}

/// A TPM simulator's command port (swtpm's `--server type=tcp`): the same
/// command stream as the kernel's device, framed by the size field of each
/// response's header. For trying the attestation without a TPM, and the
/// tests.
#[derive(Debug)]
pub struct Socket(pub std::net::TcpStream);

impl Transport for Socket {
    fn transact(&mut self, command: &[u8]) -> io::Result<Vec<u8>> {
        self.0.write_all(command)?;
        let mut head = [0u8; 10];
        self.0.read_exact(&mut head)?;
        let size = u32::from_be_bytes([head[2], head[3], head[4], head[5]]) as usize;
        if !(10..=MAX_FRAME).contains(&size) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a response of {size} bytes"),
            ));
        }
        let mut resp = head.to_vec();
        resp.resize(size, 0);
        self.0.read_exact(&mut resp[10..])?;
        Ok(resp)
    }
}

/// Why a command did not give its answer.
#[derive(Debug)]
pub enum TpmFail {
    /// The device could not be written or read.
    Io(io::Error),
    /// A command could not be marshaled or its response unmarshaled.
    Protocol(String),
    /// The TPM answered with this response code.
    Rc(TpmCc, u32),
}

impl std::fmt::Display for TpmFail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TpmFail::Io(e) => write!(f, "TPM: {e}"),
            TpmFail::Protocol(e) => write!(f, "TPM: {e}"),
            TpmFail::Rc(cc, rc) => write!(f, "TPM: {cc:?} answered response code {rc:#x}"),
        }
    }
}

impl From<io::Error> for TpmFail {
    fn from(e: io::Error) -> TpmFail {
        TpmFail::Io(e)
    }
}

fn protocol(what: &str) -> impl Fn(tpm2_protocol::TpmError) -> TpmFail + '_ {
    move |e| TpmFail::Protocol(format!("{what}: {e:?}"))
}

/// The attestation key's template (TPM 2.0 Part 2, 12.2.4 `TPMT_PUBLIC`):
/// ECC NIST P-256, name algorithm SHA-256, attributes fixedTPM,
/// fixedParent, sensitiveDataOrigin, userWithAuth, restricted, sign (what
/// `tpm2_createprimary -G ecc256:ecdsa-sha256:null -a
/// 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign'`
/// sends), no policy, no symmetric algorithm, scheme ECDSA with SHA-256,
/// no KDF, an empty unique field. The same template under the same seed
/// gives the same key.
pub fn ak_template() -> TpmtPublic {
    TpmtPublic {
        object_type: TpmAlgId::Ecc,
        name_alg: TpmAlgId::Sha256,
        object_attributes: TpmaObject::FIXED_TPM
            | TpmaObject::FIXED_PARENT
            | TpmaObject::SENSITIVE_DATA_ORIGIN
            | TpmaObject::USER_WITH_AUTH
            | TpmaObject::RESTRICTED
            | TpmaObject::SIGN_ENCRYPT,
        auth_policy: Default::default(),
        parameters: TpmuPublicParms::Ecc(TpmsEccParms {
            symmetric: TpmtSymDefObject::default(),
            scheme: TpmtEccScheme {
                scheme: TpmAlgId::Ecdsa,
                details: TpmuAsymScheme::Hash(TpmsSchemeHash {
                    hash_alg: TpmAlgId::Sha256,
                }),
            },
            curve_id: TpmEccCurve::NistP256,
            kdf: TpmtKdfScheme::default(),
        }),
        unique: TpmuPublicId::Ecc(TpmsEccPoint::default()),
    }
}

/// The attestation key in the TPM: its transient handle and its
/// `TPMT_PUBLIC`, marshaled (what the verifier hashes into its name).
#[derive(Clone, Debug)]
pub struct Ak {
    /// The transient handle ([`Tpm::flush`] it).
    pub handle: u32,
    /// The key's public area, marshaled.
    pub public: Vec<u8>,
}

/// A TPM behind a [`Transport`].
pub struct Tpm<T: Transport> {
    t: T,
}

impl<T: Transport> std::fmt::Debug for Tpm<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tpm")
    }
}

/// The empty password session.
fn password() -> TpmsAuthCommand {
    TpmsAuthCommand {
        session_handle: TpmHandle::new(TpmRh::Pw.value()),
        nonce: Default::default(),
        session_attributes: TpmaSession::default(),
        hmac: Default::default(),
    }
}

/// A selection of SHA-256 PCRs.
fn sha256_selection(pcrs: &[u8]) -> Result<TpmlPcrSelection, TpmFail> {
    let mut bits = [0u8; 3];
    for &p in pcrs {
        let byte = bits
            .get_mut(usize::from(p / 8))
            .ok_or_else(|| TpmFail::Protocol(format!("PCR {p}: a PC Client TPM has 0 to 23")))?;
        *byte |= 1 << (p % 8);
    }
    let mut list = TpmlPcrSelection::new();
    list.try_push(TpmsPcrSelection {
        hash: TpmAlgId::Sha256,
        pcr_select: TpmsPcrSelect::try_from(&bits[..]).map_err(protocol("PCR selection"))?,
    })
    .map_err(protocol("PCR selection"))?;
    Ok(list)
}

impl<T: Transport> Tpm<T> {
    /// The TPM behind `t`.
    pub fn new(t: T) -> Tpm<T> {
        Tpm { t }
    }

    /// One command and its response body.
    fn call<C: TpmFrame, R: TpmUnmarshalBody>(&mut self, cmd: &C, auth: bool) -> Result<R, TpmFail> {
        self.call_raw(cmd, auth).map(|(r, _)| r)
    }

    /// [`Tpm::call`], with the response's bytes.
    fn call_raw<C: TpmFrame, R: TpmUnmarshalBody>(&mut self, cmd: &C, auth: bool) -> Result<(R, Vec<u8>), TpmFail> {
        let mut buf = [0u8; MAX_FRAME];
        let mut w = TpmWriter::new(&mut buf);
        let sessions = if auth { vec![password()] } else { Vec::new() };
        let tag = if auth { TpmSt::Sessions } else { TpmSt::NoSessions };
        tpm_marshal_command(cmd, tag, &sessions, &mut w).map_err(protocol("marshaling the command"))?;
        let n = w.len();
        // TPM_RC_YIELDED, TPM_RC_TESTING and TPM_RC_RETRY: the TPM did not
        // start the command and asks for it again, as a TSS sends it again.
        let mut tries = 0;
        let resp = loop {
            let resp = self.t.transact(&buf[..n])?;
            let rc = u32::from_be_bytes(resp.get(6..10).and_then(|b| b.try_into().ok()).unwrap_or([0xff; 4]));
            tries += 1;
            match rc {
                0 => break resp,
                0x908 | 0x90A | 0x922 if tries < 50 => std::thread::sleep(std::time::Duration::from_millis(20)),
                _ => return Err(TpmFail::Rc(cmd.cc(), rc)),
            }
        };
        let r = TpmResponse::cast(&resp).map_err(protocol("the response"))?;
        let body = r.unmarshal::<R>().map_err(protocol("unmarshaling the response"))?;
        Ok((body, resp))
    }

    /// Extend SHA-256 PCR `pcr` with `digest`.
    pub fn pcr_extend(&mut self, pcr: u8, digest: &[u8; 32]) -> Result<(), TpmFail> {
        let mut digests = TpmlDigestValues::new();
        digests
            .try_push(TpmtHa {
                hash_alg: TpmAlgId::Sha256,
                digest: TpmuHa::Digest(digest[..].try_into().map_err(protocol("the digest"))?),
            })
            .map_err(protocol("the digest"))?;
        let cmd = TpmPcrExtendCommand {
            handles: [TpmHandle::new(u32::from(pcr))],
            digests,
        };
        self.call::<_, TpmPcrExtendResponse>(&cmd, true).map(|_| ())
    }

    /// The values of SHA-256 PCRs `pcrs`, in ascending order of index (a
    /// TPM answers at most 8 per command: asked in turn).
    pub fn pcr_read(&mut self, pcrs: &[u8]) -> Result<Vec<(u8, Vec<u8>)>, TpmFail> {
        let mut sorted = pcrs.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut out = Vec::new();
        for chunk in sorted.chunks(8) {
            let cmd = TpmPcrReadCommand {
                handles: [],
                pcr_selection_in: sha256_selection(chunk)?,
            };
            let r: TpmPcrReadResponse = self.call(&cmd, false)?;
            if r.pcr_values.len() != chunk.len() {
                return Err(TpmFail::Protocol(format!(
                    "PCR_Read: {} values for {} PCRs",
                    r.pcr_values.len(),
                    chunk.len()
                )));
            }
            out.extend(chunk.iter().zip(r.pcr_values.iter()).map(|(&p, v)| (p, v.to_vec())));
        }
        Ok(out)
    }

    /// The attestation key ([`ak_template`]) under the endorsement hierarchy.
    pub fn create_ak(&mut self) -> Result<Ak, TpmFail> {
        let cmd = TpmCreatePrimaryCommand {
            handles: [TpmHandle::new(TpmRh::Endorsement.value())],
            in_sensitive: Default::default(),
            in_public: Tpm2bPublic::from(ak_template()),
            outside_info: Default::default(),
            creation_pcr: TpmlPcrSelection::new(),
        };
        let r: TpmCreatePrimaryResponse = self.call(&cmd, true)?;
        let mut buf = [0u8; MAX_FRAME];
        let mut w = TpmWriter::new(&mut buf);
        r.out_public
            .inner
            .marshal(&mut w)
            .map_err(protocol("the key's public area"))?;
        let n = w.len();
        Ok(Ak {
            handle: r.handles[0].value(),
            public: buf[..n].to_vec(),
        })
    }

    /// A quote of SHA-256 PCRs `pcrs` by `ak` over `qualifying` (at most
    /// 64 bytes): the signed `TPMS_ATTEST` and its `TPMT_SIGNATURE`,
    /// marshaled.
    pub fn quote(&mut self, ak: &Ak, qualifying: &[u8], pcrs: &[u8]) -> Result<(Vec<u8>, Vec<u8>), TpmFail> {
        let cmd = TpmQuoteCommand {
            handles: [TpmHandle::new(ak.handle)],
            qualifying_data: Tpm2bData::try_from(qualifying).map_err(protocol("the qualifying data"))?,
            in_scheme: TpmtSigScheme {
                scheme: TpmAlgId::Null,
                details: TpmuSigScheme::Null,
            },
            pcr_select: sha256_selection(pcrs)?,
        };
        let (r, resp): (TpmQuoteResponse, Vec<u8>) = self.call_raw(&cmd, true)?;
        // The signature is over the TPMS_ATTEST's exact bytes: taken as the
        // TPM sent them (the response's parameters, after the header and
        // the parameter size, begin with the TPM2B_ATTEST), not remarshaled.
        let quoted = resp
            .get(14..16)
            .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
            .and_then(|n| resp.get(16..16 + n))
            .ok_or_else(|| TpmFail::Protocol("Quote: a short response".to_string()))?
            .to_vec();
        let mut buf = [0u8; MAX_FRAME];
        let mut w = TpmWriter::new(&mut buf);
        r.signature.marshal(&mut w).map_err(protocol("the signature"))?;
        let n = w.len();
        Ok((quoted, buf[..n].to_vec()))
    }

    /// NV index `index` whole, or `None` if the TPM has no such index.
    pub fn nv_read(&mut self, index: u32) -> Result<Option<Vec<u8>>, TpmFail> {
        let cmd = TpmNvReadPublicCommand {
            handles: [TpmHandle::new(index)],
        };
        let size = match self.call::<_, TpmNvReadPublicResponse>(&cmd, false) {
            Ok(r) => usize::from(r.nv_public.inner.data_size.value()),
            // TPM_RC_HANDLE (parameter 1): no such index.
            Err(TpmFail::Rc(_, rc)) if rc & 0xff == 0x8b => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut out = Vec::with_capacity(size);
        while out.len() < size {
            // TPM_PT_NV_BUFFER_MAX is at least 512 on a PC Client TPM.
            let take = (size - out.len()).min(512);
            let cmd = TpmNvReadCommand {
                handles: [TpmHandle::new(index), TpmHandle::new(index)],
                size: u16::try_from(take).unwrap_or(512).into(),
                offset: u16::try_from(out.len())
                    .map_err(|_| TpmFail::Protocol(format!("NV index {index:#x}: over 64 KiB")))?
                    .into(),
            };
            let r: TpmNvReadResponse = self.call(&cmd, true)?;
            if r.data.is_empty() {
                return Err(TpmFail::Protocol(format!("NV index {index:#x}: an empty read")));
            }
            out.extend_from_slice(&r.data);
        }
        Ok(Some(out))
    }

    /// Remove the transient object `handle` from the TPM.
    pub fn flush(&mut self, handle: u32) -> Result<(), TpmFail> {
        let cmd = TpmFlushContextCommand {
            handles: [],
            flush_handle: TpmHandle::new(handle),
        };
        self.call::<_, TpmFlushContextResponse>(&cmd, false).map(|_| ())
    }
}

#[cfg(test)]
mod tests;
