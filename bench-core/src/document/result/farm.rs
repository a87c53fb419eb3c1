//! Seagate FARM in the document: the record [`crate::device::farm`]
//! decodes from the ATA general purpose log A6h or the SCSI log page 3Dh
//! subpage 03h (the field tables, with each field's page and qword, are
//! there).

use alloc::string::String;
use serde::{Deserialize, Serialize};

/// The transport a FARM log came by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FarmTransport {
    /// ATA general purpose log A6h.
    Ata,
    /// SCSI log page 3Dh subpage 03h.
    Scsi,
}

/// A FARM log, decoded. Every field is None where the drive marks it not
/// supported or not valid, or where the transport's layout has no such
/// field (SCSI has no spindle hours, head flight hours, head load events
/// nor spin-up time in its drive information parameter).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Farm {
    /// Where it came from (None only in `Default`).
    pub transport: Option<FarmTransport>,
    /// Log major version.
    pub major_version: Option<u64>,
    /// Log minor version.
    pub minor_version: Option<u64>,
    /// Pages (ATA) or parameters (SCSI) supported.
    pub pages_supported: Option<u64>,
    /// Log size, bytes.
    pub log_size_bytes: Option<u64>,
    /// Page size, bytes (ATA only).
    pub page_size_bytes: Option<u64>,
    /// Maximum heads supported.
    pub heads_supported: Option<u64>,
    /// Serial number.
    pub serial: Option<String>,
    /// World wide name, the two halves joined.
    pub wwn: Option<u64>,
    /// Model number (ATA, log 2.14 on) or product ID (SCSI parameter 6).
    pub model: Option<String>,
    /// Firmware revision.
    pub firmware: Option<String>,
    /// Device capacity, logical sectors.
    pub capacity_sectors: Option<u64>,
    /// Number of heads.
    pub heads: Option<u64>,
    /// Power-on hours: the figure a SMART reset does not touch.
    pub power_on_hours: Option<u64>,
    /// Spindle power-on hours.
    pub spindle_power_on_hours: Option<u64>,
    /// Head flight hours.
    pub head_flight_hours: Option<u64>,
    /// Head load events.
    pub head_load_events: Option<u64>,
    /// Power cycles.
    pub power_cycles: Option<u64>,
    /// Hardware resets.
    pub hardware_resets: Option<u64>,
    /// SMART spin-up time, milliseconds.
    pub spin_up_time_ms: Option<u64>,
    /// Read commands, total.
    pub read_commands: Option<u64>,
    /// Write commands, total.
    pub write_commands: Option<u64>,
    /// Random read commands.
    pub random_reads: Option<u64>,
    /// Random write commands.
    pub random_writes: Option<u64>,
    /// Logical sectors written.
    pub sectors_written: Option<u64>,
    /// Logical sectors read.
    pub sectors_read: Option<u64>,
    /// Unrecoverable read errors.
    pub unrecoverable_read_errors: Option<u64>,
    /// Unrecoverable write errors.
    pub unrecoverable_write_errors: Option<u64>,
    /// Reallocated sectors (ATA).
    pub reallocated_sectors: Option<u64>,
    /// Reallocation candidate sectors (ATA).
    pub reallocation_candidates: Option<u64>,
    /// Read recovery attempts (ATA).
    pub read_recovery_attempts: Option<u64>,
    /// Mechanical start retries.
    pub mechanical_start_retries: Option<u64>,
    /// Interface CRC errors (ATA).
    pub interface_crc_errors: Option<u64>,
    /// Uncorrectable errors, SMART attribute 187's raw value (ATA).
    pub uncorrectable_errors: Option<u64>,
    /// Current temperature, °C.
    pub temperature_c: Option<i64>,
    /// Highest temperature, °C.
    pub highest_temperature_c: Option<i64>,
    /// Lowest temperature, °C.
    pub lowest_temperature_c: Option<i64>,
    /// Specified maximum operating temperature, °C.
    pub max_operating_temperature_c: Option<i64>,
    /// Specified minimum operating temperature, °C.
    pub min_operating_temperature_c: Option<i64>,
    /// Raw read error rate (ATA reliability page).
    pub error_rate_raw: Option<u64>,
    /// Raw seek error rate (ATA reliability page).
    pub seek_error_rate_raw: Option<u64>,
    /// High priority unload events (ATA reliability page).
    pub high_priority_unload_events: Option<u64>,
    /// Helium pressure threshold tripped.
    pub helium_pressure_tripped: Option<bool>,
    /// LBAs corrected by the parity sector (ATA reliability page).
    pub lbas_corrected_by_parity: Option<u64>,
    /// Recording: SMR or CMR (ATA page 1, SCSI parameter 6).
    pub recording: Option<FarmRecording>,
    /// The drive has been depopulated (heads taken out of use).
    pub depopulated: Option<bool>,
    /// Date of assembly, "YYWW".
    pub date_of_assembly: Option<String>,
}

/// The recording technology FARM names. farmprint.cpp's
/// `farm_get_recording_type` reads the low two bits, 1 SMR and 2 CMR
/// (farmcmds.h's comment, "0 for SMR and 1 for CMR", disagrees; the
/// printing code is followed here); other values are None.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FarmRecording {
    /// Shingled magnetic recording.
    Smr,
    /// Conventional magnetic recording.
    Cmr,
}
