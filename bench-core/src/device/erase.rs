//! A disk's erase support from its identify data ([`EraseSupport`]): the
//! fields openSeaChest's `--showEraseSupport` reads. Parsing only.
//!
//! - NVMe Identify Controller (NVMe Base 2.0, 5.17.2.1): OACS (bytes
//!   256-257) bit 1 Format NVM; FNA (byte 524) bit 0 format applies to all
//!   namespaces, bit 1 secure erase applies to all namespaces, bit 2
//!   cryptographic erase supported; SANICAP (bytes 328-331) bit 0 crypto
//!   erase, bit 1 block erase, bit 2 overwrite.
//! - ATA IDENTIFY DEVICE (ACS-3, 7.12.7): word 59 bit 12 the Sanitize
//!   feature set, bit 13 CRYPTO SCRAMBLE, bit 14 OVERWRITE, bit 15 BLOCK
//!   ERASE; word 82 bit 1 the Security feature set; word 128 bit 0
//!   supported, 1 enabled, 2 locked, 3 frozen, 5 enhanced erase supported;
//!   words 89 and 90 the normal and enhanced erase times (bits 14:0 in
//!   units of 2 minutes, 0 no estimate, 32767 more than 65532 minutes).

use alloc::string::String;
use alloc::vec::Vec;

use crate::document::result::{EraseMethod, EraseSupport};

/// The support an NVMe controller's Identify Controller page gives.
pub fn nvme(ctrl: &[u8; 4096]) -> EraseSupport {
    let oacs = u16::from_le_bytes([ctrl[256], ctrl[257]]);
    let sanicap = u32::from_le_bytes([ctrl[328], ctrl[329], ctrl[330], ctrl[331]]);
    let fna = ctrl[524];
    let mut supported = Vec::new();
    for (bit, m) in [
        (0, EraseMethod::NvmeSanitizeCrypto),
        (1, EraseMethod::NvmeSanitizeBlock),
        (2, EraseMethod::NvmeSanitizeOverwrite),
    ] {
        if sanicap & (1 << bit) != 0 {
            supported.push(m);
        }
    }
    if oacs & 0x2 != 0 {
        if fna & 0x4 != 0 {
            supported.push(EraseMethod::NvmeFormatCrypto);
        }
        supported.push(EraseMethod::NvmeFormatUserData);
    }
    EraseSupport {
        source: String::from("nvme_identify_controller"),
        supported,
        frozen: None,
        locked: None,
        security_enabled: None,
        erase_minutes: None,
        enhanced_erase_minutes: None,
        applies_to_all_namespaces: (oacs & 0x2 != 0).then_some(fna & 0x3 != 0),
        error: None,
    }
}

/// An ATA erase time word: minutes, or `None` when the disk gives none.
fn erase_time(w: u16) -> Option<u32> {
    match w & 0x7fff {
        0 => None,
        n => Some(u32::from(n) * 2),
    }
}

/// The support an ATA IDENTIFY DEVICE page gives.
pub fn ata(page: &[u8; 512]) -> EraseSupport {
    let word = |i: usize| u16::from_le_bytes([page[2 * i], page[2 * i + 1]]);
    let (w59, w82, w128) = (word(59), word(82), word(128));
    let mut supported = Vec::new();
    if w59 & (1 << 12) != 0 {
        for (bit, m) in [
            (13, EraseMethod::AtaSanitizeCrypto),
            (15, EraseMethod::AtaSanitizeBlock),
            (14, EraseMethod::AtaSanitizeOverwrite),
        ] {
            if w59 & (1 << bit) != 0 {
                supported.push(m);
            }
        }
    }
    // Word 82 (and 128 bit 0) say the Security feature set; 0xffff is a
    // word the disk does not fill.
    let security = w82 != 0xffff && w82 & 0x2 != 0 && w128 & 0x1 != 0;
    if security {
        if w128 & (1 << 5) != 0 {
            supported.push(EraseMethod::AtaSecurityEnhancedErase);
        }
        supported.push(EraseMethod::AtaSecurityErase);
    }
    EraseSupport {
        source: String::from("ata_identify"),
        supported,
        frozen: security.then_some(w128 & (1 << 3) != 0),
        locked: security.then_some(w128 & (1 << 2) != 0),
        security_enabled: security.then_some(w128 & (1 << 1) != 0),
        erase_minutes: security.then(|| erase_time(word(89))).flatten(),
        enhanced_erase_minutes: security.then(|| erase_time(word(90))).flatten(),
        applies_to_all_namespaces: None,
        error: None,
    }
}

/// What `show` says of `e`: the methods, or `none`, then what stands in
/// the way (frozen, locked).
pub fn summary(e: &EraseSupport) -> String {
    let mut out = if e.supported.is_empty() {
        String::from("none")
    } else {
        let names: Vec<&str> = e.supported.iter().map(|m| m.name()).collect();
        names.join(", ")
    };
    if e.frozen == Some(true) {
        out.push_str("; security frozen (a power cycle unfreezes it)");
    }
    if e.locked == Some(true) {
        out.push_str("; locked by a password");
    }
    if let Some(err) = &e.error {
        out.push_str("; ");
        out.push_str(err);
    }
    out
}

/// The order `auto` picks a purge in: the methods that erase every block
/// (the PTS's purge), fastest first, ATA security erase where the disk has
/// no sanitize; overwrites (hours) only when asked.
pub const AUTO_ORDER: [EraseMethod; 8] = [
    EraseMethod::NvmeSanitizeCrypto,
    EraseMethod::NvmeSanitizeBlock,
    EraseMethod::NvmeFormatCrypto,
    EraseMethod::NvmeFormatUserData,
    EraseMethod::AtaSanitizeCrypto,
    EraseMethod::AtaSanitizeBlock,
    EraseMethod::AtaSecurityEnhancedErase,
    EraseMethod::AtaSecurityErase,
];

/// The user password a security erase sets first (the erase clears it):
/// said in the record and the README, so a disk left with it after a
/// failed erase can be unlocked (`hdparm --security-disable bootbench`).
pub const SECURITY_PASSWORD: &[u8] = b"bootbench";

/// The purge to run on a disk of `support` for the config's `asked`
/// (`None`: `auto`), or why none may run: the disk does not say it
/// supports the method; an ATA disk frozen or locked for security erase;
/// an NVMe command that would erase other namespaces than the one
/// granted (`namespaces`: the controller's active namespaces; Sanitize
/// always works on the whole NVM subsystem, Format on every namespace
/// when FNA says so).
pub fn choose(asked: Option<EraseMethod>, support: &EraseSupport, namespaces: usize) -> Result<EraseMethod, String> {
    if let Some(e) = &support.error {
        return Err(alloc::format!("the disk's erase support could not be read ({e})"));
    }
    let method = match asked {
        Some(m) if support.supported.contains(&m) => m,
        Some(m) => {
            return Err(alloc::format!(
                "the disk does not support {} (it supports: {})",
                m.name(),
                summary(support)
            ))
        }
        None => *AUTO_ORDER
            .iter()
            .find(|m| support.supported.contains(m))
            .ok_or_else(|| {
                alloc::format!(
                    "the disk supports no purge bootbench runs (it supports: {})",
                    summary(support)
                )
            })?,
    };
    if support.locked == Some(true) {
        return Err(String::from("the disk is locked by a password: nothing is erased"));
    }
    let security = matches!(
        method,
        EraseMethod::AtaSecurityErase | EraseMethod::AtaSecurityEnhancedErase
    );
    if security && support.frozen == Some(true) {
        return Err(String::from(
            "the disk's security is frozen (SECURITY FREEZE LOCK, usually by the BIOS): a security erase is \
             refused until a power cycle (hot-plug the disk, or suspend and resume, and run again)",
        ));
    }
    if security && support.security_enabled == Some(true) {
        return Err(String::from(
            "the disk has a user password set: bootbench erases no disk whose password it does not know",
        ));
    }
    let whole_subsystem = matches!(
        method,
        EraseMethod::NvmeSanitizeCrypto | EraseMethod::NvmeSanitizeBlock | EraseMethod::NvmeSanitizeOverwrite
    ) || (matches!(method, EraseMethod::NvmeFormatCrypto | EraseMethod::NvmeFormatUserData)
        && support.applies_to_all_namespaces == Some(true));
    if whole_subsystem && namespaces != 1 {
        return Err(alloc::format!(
            "{} erases every namespace of the controller, and it has {namespaces}: only a controller of one \
             namespace is purged",
            method.name()
        ));
    }
    Ok(method)
}

/// NVMe Format NVM (opcode 80h) CDW10 that keeps namespace format
/// `flbas` (Identify Namespace byte 26: bits 3:0 and 6:5 the format's
/// index, bit 4 metadata at the end of each block) and protection `dps`
/// (byte 29: bits 2:0 the type, bit 3 first eight bytes) and erases with
/// Secure Erase Settings `ses` (1 user data erase, 2 cryptographic
/// erase); NVMe Base 2.0, 5.23.
pub const fn nvme_format_cdw10(flbas: u8, dps: u8, ses: u8) -> u32 {
    let lbaf_lo = (flbas & 0x0f) as u32;
    let lbaf_hi = ((flbas >> 5) & 0x03) as u32;
    let mset = ((flbas >> 4) & 1) as u32;
    let pi = (dps & 0x07) as u32;
    let pil = ((dps >> 3) & 1) as u32;
    lbaf_lo | (mset << 4) | (pi << 5) | (pil << 8) | (((ses & 0x7) as u32) << 9) | (lbaf_hi << 12)
}

/// NVMe Sanitize (opcode 84h) action of `m` (CDW10 SANACT, bits 2:0): 2h
/// block erase, 3h overwrite, 4h crypto erase; `None` for other methods.
/// NVMe Base 2.0, 5.24.
pub const fn nvme_sanact(m: EraseMethod) -> Option<u32> {
    match m {
        EraseMethod::NvmeSanitizeBlock => Some(2),
        EraseMethod::NvmeSanitizeOverwrite => Some(3),
        EraseMethod::NvmeSanitizeCrypto => Some(4),
        _ => None,
    }
}

/// Where a sanitize stands, from the Sanitize Status log page (LID 81h;
/// NVMe Base 2.0, 5.16.1.25: SPROG bytes 1:0, SSTAT bytes 3:2 with the
/// status in bits 2:0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SanitizeState {
    /// Never sanitized (0h).
    Never,
    /// The last sanitize completed (1h; 4h: without deallocating).
    Done,
    /// In progress (2h), this fraction done.
    InProgress(f64),
    /// The last sanitize failed (3h).
    Failed,
    /// A status this code does not know.
    Other(u16),
}

/// The sanitize state in a Sanitize Status log page.
pub fn nvme_sanitize_state(log: &[u8]) -> SanitizeState {
    let sprog = u16::from_le_bytes([log[0], log[1]]);
    let sstat = u16::from_le_bytes([log[2], log[3]]);
    match sstat & 0x7 {
        0 => SanitizeState::Never,
        1 | 4 => SanitizeState::Done,
        2 => SanitizeState::InProgress(f64::from(sprog) / 65536.0),
        3 => SanitizeState::Failed,
        s => SanitizeState::Other(s),
    }
}

/// The ATA SANITIZE DEVICE feature (ACS-3, 7.30) of `m`, with the value its
/// LBA field must hold: CRYPTO SCRAMBLE EXT (0011h, "Cryp"), BLOCK ERASE
/// EXT (0012h, "BkEr"), OVERWRITE EXT (0014h, "Ow" and the pattern in the
/// count); `None` for other methods. SANITIZE STATUS EXT is feature 0000h.
pub const fn ata_sanitize_feature(m: EraseMethod) -> Option<(u16, u64)> {
    match m {
        EraseMethod::AtaSanitizeCrypto => Some((0x0011, 0x4372_7970)),
        EraseMethod::AtaSanitizeBlock => Some((0x0012, 0x0000_426B_4572)),
        EraseMethod::AtaSanitizeOverwrite => Some((0x0014, 0x0000_4F57_0000_0000)),
        _ => None,
    }
}

/// The ATA registers a command with CK_COND returned in the sense data's
/// ATA Status Return descriptor (09h; SAT-3 12.2.2.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtaRegs {
    /// ERROR.
    pub error: u8,
    /// STATUS (bit 0 ERR).
    pub status: u8,
    /// COUNT 15:0.
    pub count: u16,
    /// LBA 47:0.
    pub lba: u64,
}

/// The registers in descriptor-format sense data (72h/73h), or `None`.
pub fn ata_registers(sense: &[u8]) -> Option<AtaRegs> {
    if !matches!(sense.first()? & 0x7f, 0x72 | 0x73) {
        return None;
    }
    let end = (8 + usize::from(*sense.get(7)?)).min(sense.len());
    let mut at = 8;
    while at + 2 <= end {
        let dlen = usize::from(sense[at + 1]);
        if sense[at] == 0x09 && dlen >= 12 && at + 14 <= sense.len() {
            let d = &sense[at..at + 14];
            let b = |i: usize| u64::from(d[i]);
            return Some(AtaRegs {
                error: d[3],
                status: d[13],
                count: u16::from_be_bytes([d[4], d[5]]),
                lba: b(7) | b(9) << 8 | b(11) << 16 | b(6) << 24 | b(8) << 32 | b(10) << 40,
            });
        }
        at += 2 + dlen;
    }
    None
}

/// Where an ATA sanitize stands, from SANITIZE STATUS EXT's registers
/// (ACS-3 7.30.7: COUNT bit 15 completed without error, bit 14 in
/// progress; LBA 15:0 the progress, of 65536; STATUS ERR: the last one
/// failed).
pub fn ata_sanitize_state(r: &AtaRegs) -> SanitizeState {
    if r.status & 0x01 != 0 {
        SanitizeState::Failed
    } else if r.count & (1 << 14) != 0 {
        #[allow(clippy::cast_possible_truncation)] // the low 16 bits
        let p = r.lba as u16;
        SanitizeState::InProgress(f64::from(p) / 65536.0)
    } else if r.count & (1 << 15) != 0 {
        SanitizeState::Done
    } else {
        SanitizeState::Never
    }
}

/// The ATA PASS-THROUGH(16) command block for SANITIZE DEVICE (B4h,
/// 48-bit, non-data, CK_COND so the registers come back) with `feature`
/// and `lba` ([`ata_sanitize_feature`]; feature 0 with LBA 0 is SANITIZE
/// STATUS EXT, which erases nothing).
pub fn ata_sanitize_cdb(feature: u16, lba: u64) -> [u8; 16] {
    let [f_hi, f_lo] = feature.to_be_bytes();
    let l = lba.to_le_bytes();
    [
        0x85,
        3 << 1 | 1, // non-data, extended
        0x20,       // ck_cond; no transfer
        f_hi,
        f_lo,
        0,
        0, // count
        l[3],
        l[0], // LBA 7:0
        l[4],
        l[1], // LBA 15:8
        l[5],
        l[2], // LBA 23:16
        0x40, // device: LBA
        0xb4, // SANITIZE DEVICE
        0,
    ]
}

/// ATA Security feature set commands (ACS-3 7.33-7.37).
pub mod security {
    /// SECURITY SET PASSWORD (PIO data-out, one block).
    pub const SET_PASSWORD: u8 = 0xf1;
    /// SECURITY ERASE PREPARE (non-data).
    pub const ERASE_PREPARE: u8 = 0xf3;
    /// SECURITY ERASE UNIT (PIO data-out, one block).
    pub const ERASE_UNIT: u8 = 0xf4;
    /// SECURITY DISABLE PASSWORD (PIO data-out, one block).
    pub const DISABLE_PASSWORD: u8 = 0xf6;
}

/// The ATA PASS-THROUGH(16) command block for a Security command:
/// 28-bit, CK_COND (the registers come back in the sense data), and PIO
/// data-out of one 512-byte block (count 1) when `data_out`, else
/// non-data; DEVICE bit 6 (LBA) set, as hdparm sends them.
pub fn ata_security_cdb(command: u8, data_out: bool) -> [u8; 16] {
    let (protocol, flags, count) = if data_out {
        // ck_cond, t_dir to the device (0), byte_block, t_length in the count.
        (5u8, 0x26u8, 1u8)
    } else {
        (3, 0x20, 0)
    };
    [
        0x85,
        protocol << 1,
        flags,
        0,
        0,
        0,
        count,
        0,
        0,
        0,
        0,
        0,
        0,
        0x40,
        command,
        0,
    ]
}

/// The 512-byte block of SECURITY SET PASSWORD (`erase` `None`: word 0
/// bit 0 user password, bit 8 high security), SECURITY ERASE UNIT
/// (`Some(enhanced)`: bit 1 enhanced) or SECURITY DISABLE PASSWORD (as
/// set's): words 1-16 the password, zero-padded to 32 bytes.
pub fn ata_security_block(erase: Option<bool>, password: &[u8]) -> [u8; 512] {
    let mut b = [0u8; 512];
    if erase == Some(true) {
        b[0] = 0x02;
    }
    let n = password.len().min(32);
    b[2..2 + n].copy_from_slice(&password[..n]);
    b
}

/// How long to wait for SECURITY ERASE UNIT: twice the disk's own
/// estimate (IDENTIFY word 89 or 90) and 10 minutes, or 12 hours when it
/// gives none; milliseconds.
pub fn ata_security_erase_timeout_ms(support: &EraseSupport, enhanced: bool) -> u32 {
    let minutes = if enhanced {
        support.enhanced_erase_minutes
    } else {
        support.erase_minutes
    };
    let m = minutes.map_or(12 * 60, |m| m.saturating_mul(2).saturating_add(10));
    m.saturating_mul(60_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `auto` takes the fastest whole-disk purge the disk supports; a method
    /// asked for must be supported; frozen, locked or password-protected ATA
    /// disks and NVMe commands that would reach other namespaces are refused
    /// with the reason.
    #[test]
    fn the_purge_is_chosen_from_the_support_and_refused_with_the_reason() {
        let mut c = [0u8; 4096];
        c[256] = 0x02;
        let nv = nvme(&c);
        assert_eq!(choose(None, &nv, 1), Ok(EraseMethod::NvmeFormatUserData));
        assert_eq!(
            choose(None, &nv, 3),
            Ok(EraseMethod::NvmeFormatUserData),
            "FNA 0: this namespace only"
        );
        let e = choose(Some(EraseMethod::NvmeSanitizeBlock), &nv, 1).unwrap_err();
        assert_eq!(
            e,
            "the disk does not support nvme_sanitize_block (it supports: nvme_format_user_data)"
        );
        c[328] = 0x02;
        c[524] = 0x01;
        let nv = nvme(&c);
        assert_eq!(choose(None, &nv, 1), Ok(EraseMethod::NvmeSanitizeBlock));
        let e = choose(None, &nv, 2).unwrap_err();
        assert!(
            e.starts_with("nvme_sanitize_block erases every namespace of the controller, and it has 2"),
            "{e}"
        );
        let e = choose(Some(EraseMethod::NvmeFormatUserData), &nv, 2).unwrap_err();
        assert!(e.starts_with("nvme_format_user_data erases every namespace"), "{e}");
        assert!(choose(None, &nvme(&[0u8; 4096]), 1)
            .unwrap_err()
            .starts_with("the disk supports no purge"));

        // An ATA disk with security erase only: the enhanced one, unless
        // security is frozen or a password is set.
        fn set(p: &mut [u8; 512], w: usize, v: u16) {
            p[2 * w..2 * w + 2].copy_from_slice(&v.to_le_bytes());
        }
        let mut p = [0u8; 512];
        set(&mut p, 82, 0x0002);
        set(&mut p, 128, 0x0001 | (1 << 5));
        let at = ata(&p);
        assert_eq!(choose(None, &at, 1), Ok(EraseMethod::AtaSecurityEnhancedErase));
        assert_eq!(
            choose(Some(EraseMethod::AtaSecurityErase), &at, 1),
            Ok(EraseMethod::AtaSecurityErase)
        );
        let mut frozen = at.clone();
        frozen.frozen = Some(true);
        assert!(choose(None, &frozen, 1)
            .unwrap_err()
            .starts_with("the disk's security is frozen"));
        let mut pw = at;
        pw.security_enabled = Some(true);
        assert!(choose(None, &pw, 1)
            .unwrap_err()
            .starts_with("the disk has a user password set"));
        // Sanitize on a disk locked by a password: refused.
        set(&mut p, 59, (1 << 12) | (1 << 15));
        set(&mut p, 128, 0x0001 | (1 << 2));
        let locked = ata(&p);
        assert_eq!(
            choose(None, &locked, 1).unwrap_err(),
            "the disk is locked by a password: nothing is erased"
        );
        set(&mut p, 128, 0x0001);
        assert_eq!(choose(None, &ata(&p), 1), Ok(EraseMethod::AtaSanitizeBlock));
        let mut err = nvme(&c);
        err.error = Some("EIO".into());
        assert!(choose(None, &err, 1)
            .unwrap_err()
            .starts_with("the disk's erase support could not be read"));
    }

    /// The commands' fields, worked from the specifications' layouts.
    #[test]
    fn purge_commands_are_encoded_as_the_specifications_lay_them_out() {
        // FLBAS 0x15: format 5 (low bits), metadata at the end; DPS 0x09:
        // type 1, first eight bytes; SES 1.
        assert_eq!(
            nvme_format_cdw10(0x15, 0x09, 1),
            5 | (1 << 4) | (1 << 5) | (1 << 8) | (1 << 9)
        );
        // Format 17 = 0x11: low bits 1, high bits (FLBAS 6:5) 1.
        assert_eq!(nvme_format_cdw10(0x21, 0, 2), 1 | (2 << 9) | (1 << 12));
        assert_eq!(nvme_sanact(EraseMethod::NvmeSanitizeCrypto), Some(4));
        assert_eq!(nvme_sanact(EraseMethod::NvmeSanitizeBlock), Some(2));
        assert_eq!(nvme_sanact(EraseMethod::NvmeFormatUserData), None);
        let mut log = [0u8; 512];
        assert_eq!(nvme_sanitize_state(&log), SanitizeState::Never);
        log[0..2].copy_from_slice(&0x8000u16.to_le_bytes());
        log[2] = 2;
        assert_eq!(nvme_sanitize_state(&log), SanitizeState::InProgress(0.5));
        log[2] = 0x01 | (1 << 3);
        assert_eq!(nvme_sanitize_state(&log), SanitizeState::Done);
        log[2] = 3;
        assert_eq!(nvme_sanitize_state(&log), SanitizeState::Failed);
        // "Cryp", "BkEr" and "Ow" in the LBA fields, as ACS-3 7.30 spells them.
        assert_eq!(
            ata_sanitize_feature(EraseMethod::AtaSanitizeCrypto),
            Some((0x11, 0x4372_7970))
        );
        assert_eq!(
            ata_sanitize_feature(EraseMethod::AtaSanitizeBlock),
            Some((0x12, 0x426B_4572))
        );
        assert_eq!(ata_sanitize_feature(EraseMethod::AtaSecurityErase), None);
        // BLOCK ERASE EXT: features 0012h, LBA 0000_426B_4572h spread over
        // the high and low bytes of ATA PASS-THROUGH(16) (SAT-3 12.2.2.4).
        let c = ata_sanitize_cdb(0x0012, 0x426B_4572);
        assert_eq!(c[..3], [0x85, 0x07, 0x20]);
        assert_eq!((c[3], c[4]), (0x00, 0x12));
        assert_eq!(
            (c[7], c[8], c[9], c[10], c[11], c[12]),
            (0x42, 0x72, 0x00, 0x45, 0x00, 0x6B)
        );
        assert_eq!((c[13], c[14]), (0x40, 0xb4));
        // SANITIZE STATUS EXT's answer: in progress at a quarter; done; failed.
        let mut sense = [0u8; 22];
        sense[0] = 0x72;
        sense[7] = 14;
        sense[8] = 0x09;
        sense[9] = 12;
        sense[8 + 4] = 0x40; // count bit 14
        sense[8 + 7] = 0x00;
        sense[8 + 9] = 0x40; // LBA 15:8: 0x4000 of 0x10000
        sense[8 + 13] = 0x50;
        let r = ata_registers(&sense).unwrap();
        assert_eq!((r.count, r.lba, r.status), (0x4000, 0x4000, 0x50));
        assert_eq!(ata_sanitize_state(&r), SanitizeState::InProgress(0.25));
        sense[8 + 4] = 0x80;
        assert_eq!(ata_sanitize_state(&ata_registers(&sense).unwrap()), SanitizeState::Done);
        sense[8 + 13] = 0x51;
        assert_eq!(
            ata_sanitize_state(&ata_registers(&sense).unwrap()),
            SanitizeState::Failed
        );
        sense[0] = 0x70;
        assert_eq!(ata_registers(&sense), None);
        // Security: SET PASSWORD and ERASE UNIT as PIO data-out of one
        // block, ERASE PREPARE non-data; the blocks as ACS-3 lays them out.
        assert_eq!(
            ata_security_cdb(security::SET_PASSWORD, true),
            [0x85, 0x0a, 0x26, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x40, 0xf1, 0]
        );
        assert_eq!(
            ata_security_cdb(security::ERASE_PREPARE, false),
            [0x85, 0x06, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0xf3, 0]
        );
        let b = ata_security_block(Some(true), SECURITY_PASSWORD);
        assert_eq!((b[0], b[1]), (0x02, 0x00), "user password, enhanced");
        assert_eq!(&b[2..11], b"bootbench");
        assert!(b[11..].iter().all(|&x| x == 0));
        assert_eq!(ata_security_block(None, SECURITY_PASSWORD)[0], 0, "user, high security");
        assert_eq!(
            ata_security_block(Some(false), &[b'x'; 40])[2..34],
            [b'x'; 32],
            "at most 32 bytes"
        );
        let mut s = EraseSupport {
            source: String::from("ata_identify"),
            supported: Vec::new(),
            frozen: Some(false),
            locked: Some(false),
            security_enabled: Some(false),
            erase_minutes: Some(120),
            enhanced_erase_minutes: None,
            applies_to_all_namespaces: None,
            error: None,
        };
        assert_eq!(ata_security_erase_timeout_ms(&s, false), 250 * 60_000);
        assert_eq!(ata_security_erase_timeout_ms(&s, true), 12 * 3600 * 1000);
        s.erase_minutes = None;
        assert_eq!(ata_security_erase_timeout_ms(&s, false), 12 * 3600 * 1000);
    }

    #[test]
    fn nvme_sanitize_format_and_crypto_erase_from_their_bits() {
        let mut c = [0u8; 4096];
        assert!(nvme(&c).supported.is_empty(), "no bit: nothing");
        assert_eq!(nvme(&c).applies_to_all_namespaces, None);
        c[256] = 0x02; // OACS: Format NVM
        assert_eq!(nvme(&c).supported, [EraseMethod::NvmeFormatUserData]);
        c[524] = 0x04 | 0x01; // FNA: crypto erase, format applies to all namespaces
        c[328] = 0x03; // SANICAP: crypto and block erase
        let e = nvme(&c);
        assert_eq!(
            e.supported,
            [
                EraseMethod::NvmeSanitizeCrypto,
                EraseMethod::NvmeSanitizeBlock,
                EraseMethod::NvmeFormatCrypto,
                EraseMethod::NvmeFormatUserData
            ]
        );
        assert_eq!(e.applies_to_all_namespaces, Some(true));
        assert_eq!(
            summary(&e),
            "nvme_sanitize_crypto, nvme_sanitize_block, nvme_format_crypto, nvme_format_user_data"
        );
    }

    #[test]
    fn ata_sanitize_and_security_erase_with_frozen_and_times() {
        let mut p = [0u8; 512];
        let mut set = |w: usize, v: u16| p[2 * w..2 * w + 2].copy_from_slice(&v.to_le_bytes());
        set(59, (1 << 12) | (1 << 13) | (1 << 15));
        set(82, 0x0002);
        set(128, 0x0001 | (1 << 3) | (1 << 5));
        set(89, 60); // 120 minutes
        set(90, 0x8000 | 5); // 10 minutes (bit 15 is the format flag)
        let e = ata(&p);
        assert_eq!(
            e.supported,
            [
                EraseMethod::AtaSanitizeCrypto,
                EraseMethod::AtaSanitizeBlock,
                EraseMethod::AtaSecurityEnhancedErase,
                EraseMethod::AtaSecurityErase
            ]
        );
        assert_eq!(
            (e.frozen, e.locked, e.security_enabled),
            (Some(true), Some(false), Some(false))
        );
        assert_eq!((e.erase_minutes, e.enhanced_erase_minutes), (Some(120), Some(10)));
        assert!(summary(&e).ends_with("; security frozen (a power cycle unfreezes it)"));
        // Sanitize's method bits without its feature bit, and an unfilled
        // word 82: nothing.
        let mut q = [0u8; 512];
        q[118..120].copy_from_slice(&(1u16 << 13).to_le_bytes());
        q[164..166].copy_from_slice(&0xffffu16.to_le_bytes());
        q[256..258].copy_from_slice(&1u16.to_le_bytes());
        let e = ata(&q);
        assert!(e.supported.is_empty() && e.frozen.is_none(), "{e:?}");
        assert_eq!(summary(&e), "none");
    }
}
