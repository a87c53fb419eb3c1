//! An NVMe disk's host-initiated telemetry log (log page 07h) in the
//! document: read when the disk fails acceptance, saved beside the document
//! as the evidence a vendor's RMA asks for, and named here with its size and
//! checksum. The bytes themselves are never in the document.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

/// The telemetry log captured from a disk that failed acceptance.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Telemetry {
    /// The log page: 7 (host-initiated telemetry).
    pub log_id: u8,
    /// Bytes of the log read (the header block and the data areas in
    /// `data_areas`), bytes; 0 when nothing was kept.
    pub bytes: u64,
    /// SHA-256 of those bytes, lower-case hex; absent when nothing was
    /// kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// The data areas read after the header: `[1, 2]`, `[1]` when the drive
    /// has no data area 2, `[]` when its data areas are empty.
    #[serde(default)]
    pub data_areas: Vec<u8>,
    /// Where the bytes are saved: beside the document, under the document's
    /// file name less `.json`, a dot, and this
    /// ([`crate::boot::stick::beside`]): `SN1-3.json` and
    /// `nvme0n1.telemetry.bin` give `SN1-3.nvme0n1.telemetry.bin`, on the
    /// stick's `results/` as at the results URL. Absent when nothing was
    /// kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Why the log, or part of it, was not read or kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
