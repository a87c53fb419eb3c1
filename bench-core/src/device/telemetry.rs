//! The NVMe telemetry log's header (host-initiated, log page 07h; the
//! controller-initiated log 08h has the same header), parsed into a
//! [`TelemetryHeader`]: which vendor can read it, where its data areas end,
//! and how many bytes to fetch for data areas 1 and 2. Pure: bytes in, a
//! record out; init reads the log and saves it. The parser takes any byte
//! slice and never panics (the fuzz target holds it to that).
//!
//! Layout: libnvme (github linux-nvme/libnvme) `src/nvme/types.h`
//! `struct nvme_telemetry_log`: byte 0 log identifier, 1-4 reserved, 5-7
//! IEEE OUI, 8-9 data area 1 last block, 10-11 data area 2 last block,
//! 12-13 data area 3 last block, 14-15 reserved, 16-19 data area 4 last
//! block, 20-379 reserved, 380 host-initiated scope, 381 host-initiated
//! data generation number, 382 controller-initiated data available, 383
//! controller-initiated data generation number, 384-511 reason identifier;
//! little-endian. Data area 4 exists only when Identify Controller's LPA
//! bit 6 (`NVME_CTRL_LPA_DA4_TELEMETRY`) is set and the host enabled it
//! (Host Behavior Support's ETDAS). The log is in 512-byte blocks, block 0
//! the header, so the bytes up to the end of data area n are 512 x (its
//! last block + 1), and a last block of 0 means an empty area, as libnvme's
//! `nvme_get_telemetry_log` (`src/nvme/linux.c`) reads it.

use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

/// Bytes of the header, and of each of the log's blocks.
pub const BLOCK: usize = 512;
/// Log identifier of the host-initiated telemetry log.
pub const LID_HOST: u8 = 0x07;
/// Log identifier of the controller-initiated telemetry log.
pub const LID_CONTROLLER: u8 = 0x08;

/// Why a telemetry header was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TelemetryError {
    /// Fewer bytes than the header.
    Short {
        /// Bytes given.
        got: usize,
    },
    /// The log identifier is neither 07h nor 08h.
    LogIdentifier {
        /// The identifier found.
        got: u8,
    },
}

impl core::fmt::Display for TelemetryError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            TelemetryError::Short { got } => write!(f, "telemetry header too short: {got} bytes, {BLOCK} needed"),
            TelemetryError::LogIdentifier { got } => write!(f, "log identifier {got:#04x} is not a telemetry log"),
        }
    }
}

/// A telemetry log's header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TelemetryHeader {
    /// Log identifier (byte 0): 07h host-initiated, 08h
    /// controller-initiated.
    pub log_identifier: u8,
    /// IEEE OUI of the vendor that can read the data (bytes 5-7, least
    /// significant byte first).
    pub ieee_oui: u32,
    /// Data area 1 last block (bytes 8-9).
    pub data_area_1_last_block: u16,
    /// Data area 2 last block (bytes 10-11).
    pub data_area_2_last_block: u16,
    /// Data area 3 last block (bytes 12-13).
    pub data_area_3_last_block: u16,
    /// Data area 4 last block (bytes 16-19), where data area 4 is
    /// supported and enabled.
    pub data_area_4_last_block: Option<u32>,
    /// Host-initiated data generation number (byte 381).
    pub host_generation: u8,
    /// Controller-initiated data available (byte 382 is 1).
    pub controller_data_available: bool,
    /// Controller-initiated data generation number (byte 383).
    pub controller_generation: u8,
    /// Reason identifier, vendor specific (bytes 384-511).
    pub reason_identifier: Vec<u8>,
}

impl TelemetryHeader {
    /// Bytes of the log up to the end of data area 1, the header block
    /// included; the header alone when the area is empty.
    pub fn area_1_bytes(&self) -> u64 {
        (u64::from(self.data_area_1_last_block) + 1) * BLOCK as u64
    }

    /// Bytes of the log up to the end of data area 2 (areas 1 and 2 and
    /// the header); never less than [`Self::area_1_bytes`].
    pub fn area_2_bytes(&self) -> u64 {
        let last = self.data_area_2_last_block.max(self.data_area_1_last_block);
        (u64::from(last) + 1) * BLOCK as u64
    }
}

/// Parse a telemetry log's first block. `data_area_4` says whether the
/// controller supports data area 4 (LPA bit 6) and the host enabled it
/// (ETDAS); without it bytes 16-19 are not read.
pub fn parse_telemetry_header(block: &[u8], data_area_4: bool) -> Result<TelemetryHeader, TelemetryError> {
    let Some(b) = block.get(..BLOCK) else {
        return Err(TelemetryError::Short { got: block.len() });
    };
    if b[0] != LID_HOST && b[0] != LID_CONTROLLER {
        return Err(TelemetryError::LogIdentifier { got: b[0] });
    }
    let u16_at = |at: usize| u16::from_le_bytes([b[at], b[at + 1]]);
    Ok(TelemetryHeader {
        log_identifier: b[0],
        ieee_oui: u32::from_le_bytes([b[5], b[6], b[7], 0]),
        data_area_1_last_block: u16_at(8),
        data_area_2_last_block: u16_at(10),
        data_area_3_last_block: u16_at(12),
        data_area_4_last_block: data_area_4.then(|| u32::from_le_bytes([b[16], b[17], b[18], b[19]])),
        host_generation: b[381],
        controller_data_available: b[382] == 1,
        controller_generation: b[383],
        reason_identifier: b[384..512].to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header built from libnvme's offsets: OUI 00-0C-CA as stored
    /// least significant byte first, areas ending at blocks 8, 40, 200 and
    /// 1000.
    fn header() -> Vec<u8> {
        let mut b = vec![0u8; BLOCK];
        b[0] = LID_HOST;
        b[5..8].copy_from_slice(&[0xca, 0x0c, 0x00]);
        b[8..10].copy_from_slice(&8u16.to_le_bytes());
        b[10..12].copy_from_slice(&40u16.to_le_bytes());
        b[12..14].copy_from_slice(&200u16.to_le_bytes());
        b[16..20].copy_from_slice(&1000u32.to_le_bytes());
        b[381] = 3;
        b[382] = 1;
        b[383] = 7;
        b[384] = 0x5a;
        b[511] = 0xa5;
        b
    }

    #[test]
    fn every_field_from_its_offset() {
        let h = parse_telemetry_header(&header(), true).unwrap();
        assert_eq!((h.log_identifier, h.ieee_oui), (LID_HOST, 0x000cca));
        assert_eq!(
            (
                h.data_area_1_last_block,
                h.data_area_2_last_block,
                h.data_area_3_last_block
            ),
            (8, 40, 200)
        );
        assert_eq!(h.data_area_4_last_block, Some(1000));
        assert_eq!(
            (h.host_generation, h.controller_data_available, h.controller_generation),
            (3, true, 7)
        );
        assert_eq!(h.reason_identifier.len(), 128);
        assert_eq!((h.reason_identifier[0], h.reason_identifier[127]), (0x5a, 0xa5));
        // The header block is counted.
        assert_eq!((h.area_1_bytes(), h.area_2_bytes()), (9 * 512, 41 * 512));
    }

    #[test]
    fn data_area_4_only_with_the_extended_flag() {
        assert_eq!(
            parse_telemetry_header(&header(), false).unwrap().data_area_4_last_block,
            None
        );
    }

    #[test]
    fn empty_areas_are_the_header_alone() {
        let mut b = header();
        b[8..12].fill(0);
        b[382] = 0;
        let h = parse_telemetry_header(&b, false).unwrap();
        assert_eq!(
            (h.area_1_bytes(), h.area_2_bytes(), h.controller_data_available),
            (512, 512, false)
        );
        // Area 2 never ends before area 1.
        b[8..10].copy_from_slice(&5u16.to_le_bytes());
        assert_eq!(parse_telemetry_header(&b, false).unwrap().area_2_bytes(), 6 * 512);
    }

    #[test]
    fn refusals() {
        let b = header();
        assert_eq!(
            parse_telemetry_header(&b[..511], true),
            Err(TelemetryError::Short { got: 511 })
        );
        let mut other = b.clone();
        other[0] = 0x02;
        assert_eq!(
            parse_telemetry_header(&other, true),
            Err(TelemetryError::LogIdentifier { got: 2 })
        );
        other[0] = LID_CONTROLLER;
        assert!(parse_telemetry_header(&other, true).is_ok());
    }
}
