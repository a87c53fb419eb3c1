//! Capacity a disk holds beyond what the host sees: an ATA Host Protected
//! Area or Device Configuration Overlay, NVMe capacity outside every
//! namespace (parsed by [`crate::device::capacity`]). bootbench only reads these,
//! never changes them.

use alloc::string::String;
use core::fmt;
use serde::{Deserialize, Serialize};

closed_set! {
    /// Where a [`HiddenCapacity`] comes from.
    pub enum CapacitySource ("snake_case") {
        /// ATA: READ NATIVE MAX ADDRESS EXT against IDENTIFY DEVICE's
        /// user-addressable sectors, and DEVICE CONFIGURATION IDENTIFY.
        AtaHpa,
        /// NVMe: Identify Controller's TNVMCAP and UNVMCAP against the
        /// active namespaces' sizes.
        NvmeCapacity,
    }
}

/// A disk's capacity beyond what the host sees, as the disk answers it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HiddenCapacity {
    /// The commands asked ([`CapacitySource`]).
    pub source: CapacitySource,
    /// Bytes the host sees: ATA, IDENTIFY's user-addressable sectors x the
    /// logical sector size; NVMe, the sum over the active namespaces of
    /// NSZE x the LBA size.
    pub visible_bytes: u64,
    /// Bytes the device holds: ATA, (READ NATIVE MAX ADDRESS EXT's last
    /// LBA + 1) x the logical sector size; NVMe, TNVMCAP. `None` when not
    /// answered (see `error`).
    pub native_bytes: Option<u64>,
    /// `native_bytes - visible_bytes` (0 when nothing is hidden); `None`
    /// without `native_bytes`.
    pub hidden_bytes: Option<u64>,
    /// ATA: the largest capacity a Device Configuration Overlay allows
    /// (DEVICE CONFIGURATION IDENTIFY's maximum LBA + 1, x the logical
    /// sector size), when the drive answers it.
    pub dco_bytes: Option<u64>,
    /// NVMe: UNVMCAP, the capacity in no namespace, as reported (`None`
    /// where TNVMCAP is not reported either).
    pub unallocated_bytes: Option<u64>,
    /// What was not answered, and why (`; `-separated).
    pub error: Option<String>,
}
