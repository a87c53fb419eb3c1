//! Hidden capacity, from the device's own answers (PID 1 sends the
//! commands: init's `disks/capacity.rs`; every one of them only reads).
//!
//! ATA (ACS-2): IDENTIFY DEVICE's user-addressable sectors (words 100-103
//! when the 48-bit feature set is supported, word 83 bit 10; else words
//! 60-61) against READ NATIVE MAX ADDRESS EXT (27h), whose answer, the
//! last native LBA, comes back in the ATA registers of the sense data
//! (SAT-3 12.2.2.6: the ATA Status Return descriptor of descriptor-format
//! sense, as libata's `ata_gen_passthru_sense` fills it with CK_COND set):
//! a difference is a Host Protected Area. DEVICE CONFIGURATION IDENTIFY
//! (B1h feature C2h) gives, in words 3-6, the largest LBA a Device
//! Configuration Overlay allows.
//!
//! NVMe (1.4, figures 247 and 249): Identify Controller's TNVMCAP (bytes
//! 280-295) and UNVMCAP (296-311), both 128-bit, against the sum over the
//! active namespaces (CNS 02h) of NSZE (Identify Namespace bytes 0-7) x
//! the LBA size of the format in use (FLBAS, byte 26; LBA format n at
//! 128 + 4n, LBADS in its byte 2).

use crate::device::health::le_bytes as le;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::document::result::{CapacitySource, HiddenCapacity};

/// Why an answer was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CapacityError {
    /// Fewer bytes than the structure needs.
    Short {
        /// Bytes needed.
        need: usize,
        /// Bytes given.
        got: usize,
    },
    /// The sense data carries no ATA registers.
    NoRegisters,
    /// The registers are the 28-bit ones only (no EXTEND bit, or fixed
    /// format with the LBA's upper bytes nonzero): a 48-bit LBA is not there.
    Not48Bit,
    /// The device ended the command with an error: its STATUS and ERROR
    /// registers (ERROR bit 2, ABRT: the command is not supported or was
    /// refused).
    DeviceError {
        /// STATUS.
        status: u8,
        /// ERROR.
        error: u8,
    },
    /// A word or field that must be valid is not: which, and its value.
    Invalid(&'static str, u64),
    /// The DCO page's checksum byte (511, with the signature A5h in byte
    /// 510) does not make its 512 bytes sum to 0 mod 256.
    Checksum(u8),
}

impl core::fmt::Display for CapacityError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            CapacityError::Short { need, got } => write!(f, "too short: {got} bytes, {need} needed"),
            CapacityError::NoRegisters => f.write_str("the sense data carries no ATA registers"),
            CapacityError::Not48Bit => f.write_str("the sense data carries no 48-bit LBA"),
            CapacityError::DeviceError { status, error } => write!(
                f,
                "the device ended it with an error (status {status:#04x}, error {error:#04x}{})",
                if error & 0x04 != 0 { ": aborted" } else { "" }
            ),
            CapacityError::Invalid(what, v) => write!(f, "{what} is not valid ({v:#x})"),
            CapacityError::Checksum(sum) => write!(f, "bad checksum: the page sums to {sum:#04x}, not 0"),
        }
    }
}

fn need(b: &[u8], n: usize) -> Result<(), CapacityError> {
    if b.len() < n {
        Err(CapacityError::Short { need: n, got: b.len() })
    } else {
        Ok(())
    }
}

/// ATA word `w` of a 512-byte page.
fn word(page: &[u8], w: usize) -> u16 {
    u16::from_le_bytes([page[2 * w], page[2 * w + 1]])
}

/// The 48-bit LBA registers of a non-data ATA PASS-THROUGH's sense data
/// (CK_COND set): descriptor format (72h/73h) with the ATA Status Return
/// descriptor (09h) and its EXTEND bit: LBA 7:0 at byte 7, 15:8 at 9,
/// 23:16 at 11, 31:24 at 6, 39:32 at 8, 47:40 at 10; or fixed format
/// (70h/71h, ASC/ASCQ 00h/1Dh) when the LBA's upper bytes are zero (byte
/// 8 bit 5 clear): LBA 7:0, 15:8, 23:16 at bytes 9-11. A STATUS with ERR
/// set is the device's refusal.
pub fn ata_sense_lba48(sense: &[u8]) -> Result<u64, CapacityError> {
    match sense.first().ok_or(CapacityError::NoRegisters)? & 0x7f {
        0x72 | 0x73 => {
            let len = usize::from(*sense.get(7).ok_or(CapacityError::NoRegisters)?);
            let end = (8 + len).min(sense.len());
            let mut at = 8;
            while at + 2 <= end {
                let dlen = usize::from(sense[at + 1]);
                if sense[at] == 0x09 && dlen >= 12 && at + 14 <= sense.len() {
                    let d = &sense[at..at + 14];
                    if d[13] & 0x01 != 0 {
                        return Err(CapacityError::DeviceError {
                            status: d[13],
                            error: d[3],
                        });
                    }
                    if d[2] & 0x01 == 0 {
                        return Err(CapacityError::Not48Bit);
                    }
                    let b = |i: usize| u64::from(d[i]);
                    return Ok(b(7) | b(9) << 8 | b(11) << 16 | b(6) << 24 | b(8) << 32 | b(10) << 40);
                }
                at += 2 + dlen;
            }
            Err(CapacityError::NoRegisters)
        }
        0x70 | 0x71 if sense.len() >= 14 && sense[12] == 0x00 && sense[13] == 0x1d => {
            // INFORMATION: ERROR, STATUS, DEVICE, COUNT at bytes 3-6.
            if sense[4] & 0x01 != 0 {
                return Err(CapacityError::DeviceError {
                    status: sense[4],
                    error: sense[3],
                });
            }
            if sense[8] & 0x20 != 0 {
                return Err(CapacityError::Not48Bit);
            }
            Ok(u64::from(sense[9]) | u64::from(sense[10]) << 8 | u64::from(sense[11]) << 16)
        }
        _ => Err(CapacityError::NoRegisters),
    }
}

/// What IDENTIFY DEVICE says of the capacity the host sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtaVisible {
    /// User-addressable sectors: words 100-103 with the 48-bit feature
    /// set (word 83 bit 10, the word valid: bits 15:14 = 01b), else words
    /// 60-61.
    pub sectors: u64,
    /// True when `sectors` came from words 100-103.
    pub lba48: bool,
    /// Logical sector size, bytes: 512 unless word 106 is valid (bits
    /// 15:14 = 01b) with bit 12 set, then words 117-118 x 2.
    pub sector_bytes: u32,
}

/// The visible capacity from an IDENTIFY DEVICE page (512 bytes).
pub fn ata_visible(page: &[u8]) -> Result<AtaVisible, CapacityError> {
    need(page, 512)?;
    let valid = |w: u16| w & 0xc000 == 0x4000;
    let w83 = word(page, 83);
    let lba48 = valid(w83) && w83 & (1 << 10) != 0;
    let sectors = if lba48 {
        le(&page[200..208])
    } else {
        le(&page[120..124])
    };
    let w106 = word(page, 106);
    let sector_bytes = if valid(w106) && w106 & (1 << 12) != 0 {
        let words = u32::from(word(page, 117)) | u32::from(word(page, 118)) << 16;
        if !(256..=32768).contains(&words) {
            return Err(CapacityError::Invalid(
                "IDENTIFY words 117-118 (logical sector words)",
                u64::from(words),
            ));
        }
        words * 2
    } else {
        512
    };
    Ok(AtaVisible {
        sectors,
        lba48,
        sector_bytes,
    })
}

/// The largest LBA a Device Configuration Overlay allows: DEVICE
/// CONFIGURATION IDENTIFY's words 3-6 (ACS-2 table 32), the page checked:
/// its revision (word 0) nonzero, and with the signature A5h in byte 510,
/// the checksum in byte 511.
pub fn ata_dco_max_lba(page: &[u8]) -> Result<u64, CapacityError> {
    need(page, 512)?;
    if word(page, 0) == 0 {
        return Err(CapacityError::Invalid("DCO revision (word 0)", 0));
    }
    if page[510] == 0xa5 {
        let sum = page[..512].iter().fold(0u8, |s, &b| s.wrapping_add(b));
        if sum != 0 {
            return Err(CapacityError::Checksum(sum));
        }
    }
    Ok(le(&page[6..14]))
}

/// Identify Controller's (TNVMCAP, UNVMCAP), bytes (saturated to u64).
pub fn nvme_ctrl_capacity(page: &[u8]) -> Result<(u64, u64), CapacityError> {
    need(page, 312)?;
    Ok((le(&page[280..296]), le(&page[296..312])))
}

/// The active namespace ids of a CNS 02h list (up to 1024 LE u32, ending
/// at the first 0).
pub fn nvme_ns_list(page: &[u8]) -> Vec<u32> {
    page.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .take_while(|&id| id != 0)
        .collect()
}

/// A namespace's size in bytes from Identify Namespace: NSZE x 2^LBADS of
/// the format FLBAS selects (bits 3:0, and 6:5 above them when NLBAF, byte
/// 25, counts more than 16 formats).
pub fn nvme_ns_bytes(page: &[u8]) -> Result<u64, CapacityError> {
    need(page, 384)?;
    let nsze = le(&page[0..8]);
    let flbas = page[26];
    let nlbaf = page[25];
    let mut index = usize::from(flbas & 0x0f);
    if nlbaf >= 16 {
        index |= usize::from(flbas >> 5 & 0x03) << 4;
    }
    if index > usize::from(nlbaf) || index >= 64 {
        return Err(CapacityError::Invalid(
            "FLBAS (the LBA format in use)",
            u64::from(flbas),
        ));
    }
    let lbads = page[128 + 4 * index + 2];
    if !(9..=31).contains(&lbads) {
        return Err(CapacityError::Invalid(
            "LBADS (the LBA size exponent)",
            u64::from(lbads),
        ));
    }
    nsze.checked_mul(1u64 << lbads)
        .ok_or(CapacityError::Invalid("NSZE (namespace size)", nsze))
}

/// An ATA disk's record: `visible` from IDENTIFY, `native_max` the last
/// LBA READ NATIVE MAX ADDRESS EXT gave (or why not), `dco_max` DEVICE
/// CONFIGURATION IDENTIFY's largest LBA (or why not).
pub fn ata_hidden(
    visible: AtaVisible,
    native_max: Result<u64, String>,
    dco_max: Result<u64, String>,
) -> HiddenCapacity {
    let size = |lba: u64| lba.saturating_add(1).saturating_mul(u64::from(visible.sector_bytes));
    let visible_bytes = visible.sectors.saturating_mul(u64::from(visible.sector_bytes));
    let mut errors = Vec::new();
    let native_bytes = native_max.map(size).map_err(|e| errors.push(e)).ok();
    let dco_bytes = dco_max.map(size).map_err(|e| errors.push(e)).ok();
    HiddenCapacity {
        source: CapacitySource::AtaHpa,
        visible_bytes,
        native_bytes,
        hidden_bytes: native_bytes.map(|n| n.saturating_sub(visible_bytes)),
        dco_bytes,
        unallocated_bytes: None,
        error: (!errors.is_empty()).then(|| errors.join("; ")),
    }
}

/// An NVMe disk's record: `visible_bytes` the active namespaces' sizes
/// summed, `ctrl` Identify Controller's (TNVMCAP, UNVMCAP) or why not,
/// `errors` what else was not answered. A TNVMCAP of 0 is "not reported"
/// (NVMe 1.4: optional unless Namespace Management is supported), and
/// then UNVMCAP is not either.
pub fn nvme_hidden(visible_bytes: u64, ctrl: Result<(u64, u64), String>, mut errors: Vec<String>) -> HiddenCapacity {
    let (native_bytes, unallocated_bytes) = match ctrl {
        Ok((0, _)) => {
            errors.push("TNVMCAP is 0: the controller does not report its total capacity".into());
            (None, None)
        }
        Ok((t, u)) => (Some(t), Some(u)),
        Err(e) => {
            errors.push(e);
            (None, None)
        }
    };
    HiddenCapacity {
        source: CapacitySource::NvmeCapacity,
        visible_bytes,
        native_bytes,
        hidden_bytes: native_bytes.map(|n| n.saturating_sub(visible_bytes)),
        dco_bytes: None,
        unallocated_bytes,
        error: (!errors.is_empty()).then(|| errors.join("; ")),
    }
}

/// A one-line summary for the console.
pub fn summary(path: &str, h: &HiddenCapacity) -> String {
    let mut s = format!(
        "bootbench-init: {path} hidden capacity ({}): {} bytes visible",
        h.source, h.visible_bytes
    );
    if let (Some(n), Some(hidden)) = (h.native_bytes, h.hidden_bytes) {
        s.push_str(&format!(", {n} native, {hidden} hidden"));
    }
    if let Some(d) = h.dco_bytes {
        s.push_str(&format!(", DCO allows {d}"));
    }
    if let Some(u) = h.unallocated_bytes {
        s.push_str(&format!(", {u} unallocated"));
    }
    if let Some(e) = &h.error {
        s.push_str(&format!(" ({e})"));
    }
    s
}

#[cfg(test)]
mod tests;
