//! The firmware's TPM event log (what Linux shows in
//! `/sys/kernel/security/tpm0/binary_bios_measurements`), parsed into an
//! [`EventLog`], and its replay into the PCR values the log stands for.
//! Pure: bytes in, records out; the digests are computed by the caller's
//! hash ([`EventLog::replay`]). The parser takes any byte slice and never
//! panics (the fuzz target holds it to that).
//!
//! Layout: TCG PC Client Platform Firmware Profile Specification (PFP),
//! version 1.05, section 10 ("Event Logging"), little-endian throughout:
//!
//! - The first event is a `TCG_PCR_EVENT` (the SHA-1 format of TPM 1.2):
//!   PCR index (u32), event type (u32), a 20-byte digest, event size (u32),
//!   event data. In a crypto-agile log it is an `EV_NO_ACTION` whose data
//!   is the `TCG_EfiSpecIdEvent` (10.4.5.1): the signature
//!   `"Spec ID Event03\0"` (16 bytes), platform class (u32), spec version
//!   minor, major, errata and `uintnSize` (u8 each), the number of
//!   algorithms (u32), for each its `TPM_ALG_ID` (u16) and digest size
//!   (u16), then the vendor information's size (u8) and bytes.
//! - Every later event is a `TCG_PCR_EVENT2` (10.2.2): PCR index (u32),
//!   event type (u32), a `TPML_DIGEST_VALUES` (a count, u32, then for each
//!   digest its `TPM_ALG_ID`, u16, and as many bytes as the Spec ID event
//!   gives that algorithm), event size (u32), event data.
//! - An `EV_NO_ACTION` event is not extended into its PCR (its digests are
//!   zero). One whose data begins `"StartupLocality\0"` (9.4.5.3) gives the
//!   locality the TPM was started from (a u8 after the signature): PCR 0
//!   then starts with that value in its last byte instead of zero.
//!
//! A log in the SHA-1 format only (TPM 1.2 firmware, no Spec ID event) is
//! refused: bootbench quotes SHA-256 banks.

use alloc::vec::Vec;

/// `TPM_ALG_SHA1`.
pub const ALG_SHA1: u16 = 0x0004;
/// `TPM_ALG_SHA256`.
pub const ALG_SHA256: u16 = 0x000B;
/// `TPM_ALG_SHA384`.
pub const ALG_SHA384: u16 = 0x000C;
/// `TPM_ALG_SHA512`.
pub const ALG_SHA512: u16 = 0x000D;

/// `EV_NO_ACTION`: logged, never extended.
pub const EV_NO_ACTION: u32 = 0x0000_0003;
/// `EV_SEPARATOR`: the end of the pre-OS measurements of a PCR.
pub const EV_SEPARATOR: u32 = 0x0000_0004;
/// `EV_IPL`: what a boot loader measures (GRUB: its commands into PCR 8,
/// the files it loads into PCR 9).
pub const EV_IPL: u32 = 0x0000_000D;
/// `EV_EFI_BOOT_SERVICES_APPLICATION`: an EFI application the firmware
/// (or shim) started, its Authenticode digest (shim, GRUB, the kernel).
pub const EV_EFI_BOOT_SERVICES_APPLICATION: u32 = 0x8000_0003;

/// The Spec ID event's signature.
const SPEC_ID: &[u8; 16] = b"Spec ID Event03\0";
/// The Startup Locality event's signature.
const STARTUP_LOCALITY: &[u8; 16] = b"StartupLocality\0";
/// The PCRs of a PC Client TPM.
pub const PCRS: usize = 24;

/// The PFP's name of an event type, where it has one.
pub fn event_type_name(t: u32) -> Option<&'static str> {
    Some(match t {
        0x0000_0000 => "EV_PREBOOT_CERT",
        0x0000_0001 => "EV_POST_CODE",
        EV_NO_ACTION => "EV_NO_ACTION",
        EV_SEPARATOR => "EV_SEPARATOR",
        0x0000_0005 => "EV_ACTION",
        0x0000_0006 => "EV_EVENT_TAG",
        0x0000_0007 => "EV_S_CRTM_CONTENTS",
        0x0000_0008 => "EV_S_CRTM_VERSION",
        0x0000_0009 => "EV_CPU_MICROCODE",
        0x0000_000A => "EV_PLATFORM_CONFIG_FLAGS",
        0x0000_000B => "EV_TABLE_OF_DEVICES",
        0x0000_000C => "EV_COMPACT_HASH",
        EV_IPL => "EV_IPL",
        0x0000_000E => "EV_IPL_PARTITION_DATA",
        0x0000_000F => "EV_NONHOST_CODE",
        0x0000_0010 => "EV_NONHOST_CONFIG",
        0x0000_0011 => "EV_NONHOST_INFO",
        0x0000_0012 => "EV_OMIT_BOOT_DEVICE_EVENTS",
        0x8000_0001 => "EV_EFI_VARIABLE_DRIVER_CONFIG",
        0x8000_0002 => "EV_EFI_VARIABLE_BOOT",
        EV_EFI_BOOT_SERVICES_APPLICATION => "EV_EFI_BOOT_SERVICES_APPLICATION",
        0x8000_0004 => "EV_EFI_BOOT_SERVICES_DRIVER",
        0x8000_0005 => "EV_EFI_RUNTIME_SERVICES_DRIVER",
        0x8000_0006 => "EV_EFI_GPT_EVENT",
        0x8000_0007 => "EV_EFI_ACTION",
        0x8000_0008 => "EV_EFI_PLATFORM_FIRMWARE_BLOB",
        0x8000_0009 => "EV_EFI_HANDOFF_TABLES",
        0x8000_000A => "EV_EFI_PLATFORM_FIRMWARE_BLOB2",
        0x8000_000B => "EV_EFI_HANDOFF_TABLES2",
        0x8000_000C => "EV_EFI_VARIABLE_BOOT2",
        0x8000_00E0 => "EV_EFI_VARIABLE_AUTHORITY",
        _ => return None,
    })
}

/// Why an event log was not accepted: where (the byte offset of the event)
/// and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogError {
    /// The log ends inside an event.
    Short {
        /// Byte offset of the event.
        at: usize,
    },
    /// The first event is not the crypto-agile Spec ID event.
    NotCryptoAgile,
    /// The Spec ID event names an algorithm twice, none, or one with a
    /// digest of no bytes or over 64.
    SpecId,
    /// An event's digest is of an algorithm the Spec ID event does not name.
    Algorithm {
        /// Byte offset of the event.
        at: usize,
        /// The `TPM_ALG_ID` found.
        alg: u16,
    },
    /// An event carries more digests than the log has algorithms.
    DigestCount {
        /// Byte offset of the event.
        at: usize,
        /// The count found.
        count: u32,
    },
    /// A PCR index past the 24 a PC Client TPM has (other than the
    /// `EV_NO_ACTION` events, which are not extended).
    Pcr {
        /// Byte offset of the event.
        at: usize,
        /// The index found.
        pcr: u32,
    },
}

impl core::fmt::Display for LogError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LogError::Short { at } => write!(f, "event log: the event at byte {at} runs past the end"),
            LogError::NotCryptoAgile => write!(
                f,
                "event log: the first event is not the Spec ID event (\"Spec ID Event03\"): \
                 not a crypto-agile log (TCG PC Client PFP 10.4.5.1)"
            ),
            LogError::SpecId => write!(
                f,
                "event log: the Spec ID event's algorithms are not a list of distinct algorithms with digests of 1 to 64 bytes"
            ),
            LogError::Algorithm { at, alg } => write!(
                f,
                "event log: the event at byte {at} has a digest of algorithm {alg:#06x}, which the Spec ID event does not name"
            ),
            LogError::DigestCount { at, count } => write!(
                f,
                "event log: the event at byte {at} has {count} digests, more than the log's algorithms"
            ),
            LogError::Pcr { at, pcr } => {
                write!(f, "event log: the event at byte {at} extends PCR {pcr}; a PC Client TPM has 0 to 23")
            }
        }
    }
}

/// An algorithm of the log and its digest size (the Spec ID event's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlgSize {
    /// `TPM_ALG_ID`.
    pub alg: u16,
    /// Bytes of its digest.
    pub size: u16,
}

/// The Spec ID event's facts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecId {
    /// 0 client, 1 server.
    pub platform_class: u32,
    /// Major, minor and errata of the PFP version the firmware follows.
    pub version: (u8, u8, u8),
    /// `uintnSize`: 1 for 32-bit UEFI, 2 for 64-bit.
    pub uintn_size: u8,
    /// The log's algorithms: each later event has a digest of each.
    pub algorithms: Vec<AlgSize>,
    /// Vendor information, opaque.
    pub vendor_info: Vec<u8>,
}

/// One digest of an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Digest {
    /// `TPM_ALG_ID`.
    pub alg: u16,
    /// The digest's bytes.
    pub bytes: Vec<u8>,
}

/// One event after the Spec ID event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Byte offset in the log.
    pub offset: usize,
    /// The PCR it extends.
    pub pcr: u32,
    /// Its event type (`EV_*`).
    pub event_type: u32,
    /// Its digests, one per algorithm the event gives.
    pub digests: Vec<Digest>,
    /// The event data.
    pub data: Vec<u8>,
}

impl Event {
    /// The digest of `alg`, if the event has one.
    pub fn digest(&self, alg: u16) -> Option<&[u8]> {
        self.digests.iter().find(|d| d.alg == alg).map(|d| d.bytes.as_slice())
    }
}

/// A parsed crypto-agile event log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventLog {
    /// The Spec ID event.
    pub spec: SpecId,
    /// The locality the TPM was started from, if the log says it
    /// (the Startup Locality event).
    pub startup_locality: Option<u8>,
    /// The events after the Spec ID event, in order.
    pub events: Vec<Event>,
}

/// A little-endian reader over the log; `None` past its end.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// A u32 length, then that many bytes.
    fn sized(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.u32()?).ok()?;
        self.take(n)
    }
}

/// The Spec ID event's data.
fn spec_id(data: &[u8]) -> Option<Result<SpecId, LogError>> {
    let mut c = Cursor { bytes: data, at: 0 };
    if c.take(16)? != SPEC_ID {
        return None;
    }
    let platform_class = c.u32()?;
    let (minor, major, errata, uintn_size) = (c.u8()?, c.u8()?, c.u8()?, c.u8()?);
    let n = c.u32()?;
    let mut algorithms: Vec<AlgSize> = Vec::new();
    for _ in 0..n {
        let a = AlgSize {
            alg: c.u16()?,
            size: c.u16()?,
        };
        if a.size == 0 || a.size > 64 || algorithms.iter().any(|b| b.alg == a.alg) {
            return Some(Err(LogError::SpecId));
        }
        algorithms.push(a);
    }
    if algorithms.is_empty() {
        return Some(Err(LogError::SpecId));
    }
    let vendor = usize::from(c.u8()?);
    let vendor_info = c.take(vendor)?.to_vec();
    Some(Ok(SpecId {
        platform_class,
        version: (major, minor, errata),
        uintn_size,
        algorithms,
        vendor_info,
    }))
}

/// Parse a crypto-agile event log.
pub fn parse_event_log(bytes: &[u8]) -> Result<EventLog, LogError> {
    let mut c = Cursor { bytes, at: 0 };
    // The first event, in the SHA-1 format.
    let first = (|| {
        let (pcr, t) = (c.u32()?, c.u32()?);
        c.take(20)?;
        Some((pcr, t, c.sized()?))
    })();
    let spec = match first {
        Some((0, EV_NO_ACTION, data)) => match spec_id(data) {
            Some(s) => s?,
            None => return Err(LogError::NotCryptoAgile),
        },
        _ => return Err(LogError::NotCryptoAgile),
    };
    let mut log = EventLog {
        spec,
        startup_locality: None,
        events: Vec::new(),
    };
    while c.at < bytes.len() {
        let at = c.at;
        let event = next_event(&mut c, &log.spec.algorithms, at)?;
        if event.event_type == EV_NO_ACTION {
            if let Some(rest) = event.data.strip_prefix(STARTUP_LOCALITY) {
                log.startup_locality = rest.first().copied();
            }
        } else if event.pcr as usize >= PCRS {
            return Err(LogError::Pcr { at, pcr: event.pcr });
        }
        log.events.push(event);
    }
    Ok(log)
}

/// The `TCG_PCR_EVENT2` at `at`.
fn next_event(c: &mut Cursor<'_>, algs: &[AlgSize], at: usize) -> Result<Event, LogError> {
    let short = LogError::Short { at };
    let pcr = c.u32().ok_or(short.clone())?;
    let event_type = c.u32().ok_or(short.clone())?;
    let count = c.u32().ok_or(short.clone())?;
    if count as usize > algs.len() {
        return Err(LogError::DigestCount { at, count });
    }
    let mut digests = Vec::new();
    for _ in 0..count {
        let alg = c.u16().ok_or(short.clone())?;
        let size = algs
            .iter()
            .find(|a| a.alg == alg)
            .ok_or(LogError::Algorithm { at, alg })?
            .size;
        let bytes = c.take(usize::from(size)).ok_or(short.clone())?.to_vec();
        digests.push(Digest { alg, bytes });
    }
    let data = c.sized().ok_or(short)?.to_vec();
    Ok(Event {
        offset: at,
        pcr,
        event_type,
        digests,
        data,
    })
}

/// Why a log does not replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplayError {
    /// The log has no bank of this algorithm.
    NoBank(u16),
    /// An extended event lacks the bank's digest.
    Missing {
        /// Byte offset of the event.
        at: usize,
    },
    /// The hash gave a digest of another size than the log's.
    HashSize,
}

impl core::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ReplayError::NoBank(alg) => write!(f, "event log: no digests of algorithm {alg:#06x}"),
            ReplayError::Missing { at } => {
                write!(
                    f,
                    "event log: the event at byte {at} has no digest of the replayed algorithm"
                )
            }
            ReplayError::HashSize => write!(f, "event log: the hash's digest size is not the log's"),
        }
    }
}

impl EventLog {
    /// The 24 PCR values of the `alg` bank the log stands for: each PCR
    /// from its reset value (zero; PCR 0's last byte the startup locality),
    /// each event but `EV_NO_ACTION` extended in order: PCR = H(PCR ||
    /// digest). `hash` is `alg`'s hash of the concatenation of its parts.
    /// A PCR no event extends keeps its reset value.
    pub fn replay(&self, alg: u16, hash: &dyn Fn(&[&[u8]]) -> Vec<u8>) -> Result<Vec<Vec<u8>>, ReplayError> {
        let size = usize::from(
            self.spec
                .algorithms
                .iter()
                .find(|a| a.alg == alg)
                .ok_or(ReplayError::NoBank(alg))?
                .size,
        );
        let mut pcrs: Vec<Vec<u8>> = (0..PCRS).map(|_| alloc::vec![0u8; size]).collect();
        if let Some(l) = self.startup_locality {
            pcrs[0][size - 1] = l;
        }
        for e in self.events.iter().filter(|e| e.event_type != EV_NO_ACTION) {
            let d = e.digest(alg).ok_or(ReplayError::Missing { at: e.offset })?;
            let pcr = &mut pcrs[e.pcr as usize];
            let next = hash(&[pcr, d]);
            if next.len() != size {
                return Err(ReplayError::HashSize);
            }
            *pcr = next;
        }
        Ok(pcrs)
    }
}

#[cfg(test)]
mod tests;
