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

use crate::result::{EraseMethod, EraseSupport};

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

#[cfg(test)]
mod tests {
    use super::*;

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
