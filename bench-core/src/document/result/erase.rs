//! What a disk says of its own erase commands (`erase_support`), read
//! from its identify data before the run, as openSeaChest's
//! `--showEraseSupport` lists them: the ground a purge (the PTS's step
//! before preconditioning) stands on. Nothing here erases.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde::{Deserialize, Serialize};

closed_set! {
    /// An erase command a disk may support.
    pub enum EraseMethod ("snake_case") {
        /// NVMe Sanitize, crypto erase (SANICAP bit 0).
        NvmeSanitizeCrypto,
        /// NVMe Sanitize, block erase (SANICAP bit 1).
        NvmeSanitizeBlock,
        /// NVMe Sanitize, overwrite (SANICAP bit 2).
        NvmeSanitizeOverwrite,
        /// NVMe Format NVM with cryptographic erase (OACS bit 1, FNA bit 2).
        NvmeFormatCrypto,
        /// NVMe Format NVM with user data erase (OACS bit 1).
        NvmeFormatUserData,
        /// ATA SANITIZE CRYPTO SCRAMBLE EXT (IDENTIFY word 59 bit 13).
        AtaSanitizeCrypto,
        /// ATA SANITIZE BLOCK ERASE EXT (word 59 bit 15).
        AtaSanitizeBlock,
        /// ATA SANITIZE OVERWRITE EXT (word 59 bit 14).
        AtaSanitizeOverwrite,
        /// ATA SECURITY ERASE UNIT, enhanced (word 128 bit 5).
        AtaSecurityEnhancedErase,
        /// ATA SECURITY ERASE UNIT, normal (word 82 bit 1 / word 128 bit 0).
        AtaSecurityErase,
    }
}

/// A disk's erase support.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EraseSupport {
    /// Where it was read: `ata_identify` (IDENTIFY DEVICE) or
    /// `nvme_identify_controller`.
    pub source: String,
    /// The methods the disk says it supports, the fastest and most
    /// thorough kinds first (sanitize crypto, block, overwrite, then
    /// format or security erase).
    pub supported: Vec<EraseMethod>,
    /// ATA: the security feature set is frozen (SECURITY FREEZE LOCK,
    /// usually by the BIOS): SECURITY ERASE UNIT is refused until a power
    /// cycle.
    #[serde(default)]
    pub frozen: Option<bool>,
    /// ATA: the disk is locked by a password.
    #[serde(default)]
    pub locked: Option<bool>,
    /// ATA: a user password is set (security enabled).
    #[serde(default)]
    pub security_enabled: Option<bool>,
    /// ATA: the disk's estimate of a normal security erase, minutes (word
    /// 89; `None` when it gives none).
    #[serde(default)]
    pub erase_minutes: Option<u32>,
    /// ATA: the same for an enhanced security erase (word 90).
    #[serde(default)]
    pub enhanced_erase_minutes: Option<u32>,
    /// NVMe: a format or secure erase applies to every namespace of the
    /// controller (FNA bits 0 and 1), not only the one named.
    #[serde(default)]
    pub applies_to_all_namespaces: Option<bool>,
    /// Why it could not be read, when it could not.
    pub error: Option<String>,
}
