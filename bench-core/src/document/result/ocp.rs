//! The OCP SMART / Health Information Extended log (NVMe log page C0h) in
//! the document: the record [`crate::device::ocp`] decodes (each field's
//! byte offsets are in its doc comment).

use alloc::string::String;
use serde::{Deserialize, Serialize};

/// A raw count with the drive's normalized value beside it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawNormalized {
    /// The raw count.
    pub raw: u64,
    /// The normalized value (100 is new).
    pub normalized: u16,
}

/// The DSSD specification version the drive claims (bytes 98-103).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DssdVersion {
    /// Major version (byte 103).
    pub major: u8,
    /// Minor version (bytes 101-102).
    pub minor: u16,
    /// Point version (bytes 99-100).
    pub point: u16,
    /// Errata version (byte 98).
    pub errata: u8,
}

/// The C0h log, decoded; fields of a later log page version than the
/// drive reports are None.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OcpSmart {
    /// Log page version (bytes 494-495).
    pub log_page_version: u16,
    /// Physical media units written, bytes (0-15).
    #[serde(with = "wide")]
    pub physical_media_written_bytes: u128,
    /// Physical media units read, bytes (16-31).
    #[serde(with = "wide")]
    pub physical_media_read_bytes: u128,
    /// Bad user NAND blocks (32-37 raw, 38-39 normalized).
    pub bad_user_nand_blocks: RawNormalized,
    /// Bad system NAND blocks (40-45 raw, 46-47 normalized).
    pub bad_system_nand_blocks: RawNormalized,
    /// XOR recovery count (48-55).
    pub xor_recovery_count: u64,
    /// Uncorrectable read error count (56-63).
    pub uncorrectable_read_errors: u64,
    /// Soft ECC error count (64-71).
    pub soft_ecc_errors: u64,
    /// End-to-end correction counts, detected (72-75).
    pub end_to_end_detected: u32,
    /// End-to-end correction counts, corrected (76-79).
    pub end_to_end_corrected: u32,
    /// System data percent used (80).
    pub system_data_used_pct: u8,
    /// Refresh counts (81-87, 7 bytes).
    pub refresh_counts: u64,
    /// Maximum user data erase count (88-91).
    pub user_data_erase_count_max: u32,
    /// Minimum user data erase count (92-95).
    pub user_data_erase_count_min: u32,
    /// Thermal throttling events (96).
    pub thermal_throttling_events: u8,
    /// Current thermal throttling status (97; 0 is not throttling).
    pub thermal_throttling_status: u8,
    /// PCIe correctable error count (104-111).
    pub pcie_correctable_errors: u64,
    /// Incomplete shutdowns (112-115).
    pub incomplete_shutdowns: u32,
    /// Percent free blocks (120).
    pub free_blocks_pct: u8,
    /// Capacitor health (128-129), percent.
    pub capacitor_health: u16,
    /// Unaligned I/O (136-143).
    pub unaligned_io: u64,
    /// Security version number (144-151).
    pub security_version: u64,
    /// Total NUSE, namespace utilization (152-159).
    pub total_nuse: u64,
    /// PLP start count (160-175).
    #[serde(with = "wide")]
    pub plp_start_count: u128,
    /// Endurance estimate (176-191).
    #[serde(with = "wide")]
    pub endurance_estimate: u128,
    /// DSSD specification version (98-103; version 2 on).
    pub dssd_version: Option<DssdVersion>,
    /// NVMe base errata version (130; version 2 on).
    pub nvme_base_errata_version: Option<u8>,
    /// PCIe link retraining count (192-199; version 2 on).
    pub pcie_link_retraining_count: Option<u64>,
    /// Power state change count (200-207; version 2 on).
    pub power_state_change_count: Option<u64>,
    /// NVMe command set errata version (131; version 4 on).
    pub nvme_command_set_errata_version: Option<u8>,
    /// Lowest permitted firmware revision (208-215; version 4 on).
    pub lowest_permitted_firmware_revision: Option<u64>,
    /// The fields of version 5 on.
    pub v5: Option<OcpSmartV5>,
    /// Form factor (223; version 6 on).
    pub form_factor: Option<u8>,
    /// Bad NAND blocks of dies in use (358-363 raw, 364-365 normalized;
    /// version 6 on).
    pub die_in_use_bad_nand_blocks: Option<RawNormalized>,
}

/// The fields log page version 5 added.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OcpSmartV5 {
    /// NVMe over PCIe errata version (132).
    pub nvme_over_pcie_errata_version: u8,
    /// NVMe-MI errata version (133).
    pub nvme_mi_errata_version: u8,
    /// Total media dies (216-217).
    pub total_media_dies: u16,
    /// Total die failure tolerance (218-219).
    pub total_die_failure_tolerance: u16,
    /// Media dies offline (220-221).
    pub media_dies_offline: u16,
    /// Maximum temperature recorded, °C (222).
    pub max_temperature_recorded: u8,
    /// NAND average erase count (224-231).
    pub nand_avg_erase_count: u64,
    /// Command timeouts (232-235).
    pub command_timeouts: u32,
    /// System area program fail count (236-239 raw, 240 normalized).
    pub system_area_program_fails: RawNormalized,
    /// System area uncorrectable read count (244-247 raw, 248 normalized).
    pub system_area_uncorrectable_reads: RawNormalized,
    /// System area erase fail count (252-255 raw, 256 normalized).
    pub system_area_erase_fails: RawNormalized,
    /// Max peak power capability (260-261).
    pub max_peak_power_capability: u16,
    /// Current max average power (262-263).
    pub current_max_avg_power: u16,
    /// Lifetime power consumed (264-269, 6 bytes).
    pub lifetime_power_consumed: u64,
    /// DSSD firmware revision, ASCII (270-277).
    pub dssd_firmware_revision: String,
    /// DSSD firmware build UUID, its 16 bytes in hex in page order
    /// (278-293).
    pub dssd_firmware_build_uuid: String,
    /// DSSD firmware build label, ASCII (294-357).
    pub dssd_firmware_build_label: String,
}

/// The log's 16-byte counters in JSON: a number while they fit 64 bits
/// (every real drive's), the decimal digits as a string beyond (a JSON
/// number past 2^64 is refused or rounded by most readers, serde_json's
/// `Value` among them).
mod wide {
    use alloc::string::{String, ToString};
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
        match u64::try_from(*v) {
            Ok(n) => s.serialize_u64(n),
            Err(_) => s.serialize_str(&v.to_string()),
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Wide {
        Small(u64),
        Big(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
        match Wide::deserialize(d)? {
            Wide::Small(n) => Ok(u128::from(n)),
            Wide::Big(s) => s.parse().map_err(D::Error::custom),
        }
    }
}
