//! A disk's health in the document: its readings before and after its
//! tests (ATA SMART, the NVMe SMART/health log, SCSI log pages), the
//! temperature during each test, and the health analysis's lines.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::HealthKind;
use super::{Farm, OcpSmart};

/// A disk's health before and after its tests (ATA SMART, the NVMe
/// SMART/health log, SCSI log pages), read with the device's own commands.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Health {
    /// Read just before the disk's first test.
    pub before: HealthReading,
    /// Read just after its last test; `None` when it was not read (the disk
    /// hung or could not be opened, or answered nothing before).
    pub after: Option<HealthReading>,
    /// `after - before` of every counter in both readings' `counters`
    /// (same names and units); empty without an `after`.
    #[serde(default)]
    pub delta: BTreeMap<String, i64>,
    /// The temperature during each of the disk's tests, in the order run
    /// (empty when the disk answered nothing before its tests).
    #[serde(default)]
    pub tests: Vec<TestTemperature>,
}

/// One health reading of a disk. Whatever the device did not answer is
/// `None` or absent; `error` says why.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HealthReading {
    /// Where the figures come from: `ata_smart` (SMART READ DATA, READ
    /// THRESHOLDS and RETURN STATUS through ATA PASS-THROUGH(16)),
    /// `nvme_smart_log` (Get Log Page 02h), `scsi_log_sense` (LOG SENSE
    /// pages 0Dh, 02h, 03h, 15h), or `none` (nothing answered: see `error`).
    pub source: String,
    /// Why some or all of it could not be read (every reason,
    /// `; `-separated); `None` when everything asked was answered.
    #[serde(default)]
    pub error: Option<String>,
    /// The device's overall verdict: ATA SMART RETURN STATUS (`false`:
    /// threshold exceeded), NVMe critical warning = 0; `None` when unknown.
    #[serde(default)]
    pub smart_passed: Option<bool>,
    /// Temperature, degrees Celsius (ATA attribute 194 or 190, NVMe
    /// composite temperature - 273, SCSI temperature page).
    #[serde(default)]
    pub temperature_c: Option<i32>,
    /// NVMe: the composite temperature as reported, kelvins.
    #[serde(default)]
    pub temperature_k: Option<u16>,
    /// The temperature the device warns at, degrees Celsius (NVMe WCTEMP
    /// from Identify Controller; SCSI reference temperature).
    #[serde(default)]
    pub warning_temperature_c: Option<i32>,
    /// The temperature the device calls critical, degrees Celsius (NVMe
    /// CCTEMP).
    #[serde(default)]
    pub critical_temperature_c: Option<i32>,
    /// Hours powered on (ATA attribute 9, NVMe power-on hours, SCSI
    /// accumulated power-on minutes / 60 from log page 15h).
    #[serde(default)]
    pub power_on_hours: Option<u64>,
    /// Counters, by name, each in the unit its name gives (a count unless
    /// it ends in `_bytes`): `reallocated_sectors` (ATA 5),
    /// `pending_sectors` (197), `offline_uncorrectable` (198),
    /// `crc_errors` (199), `power_cycles`; NVMe `media_errors`,
    /// `error_log_entries`, `data_read_bytes`, `data_written_bytes` (data
    /// units x 512 000), `host_read_commands`, `host_write_commands`,
    /// `unsafe_shutdowns`, `warning_temperature_minutes`,
    /// `critical_temperature_minutes`; SCSI `read_uncorrected_errors`,
    /// `write_uncorrected_errors`, `grown_defects` (entries in the grown
    /// defect list, READ DEFECT DATA (10)).
    #[serde(default)]
    pub counters: BTreeMap<String, u64>,
    /// NVMe: the rest of the SMART/health log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvme: Option<NvmeHealth>,
    /// ATA: every SMART attribute, in the device's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<SmartAttribute>,
    /// Seagate FARM (ATA general purpose log A6h, SCSI log page 3Dh
    /// subpage 03h), decoded; read once, in the reading before the tests,
    /// on a drive that offers it; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub farm: Option<Farm>,
    /// NVMe: the OCP SMART / Health Information Extended log (log page
    /// C0h with the OCP GUID), decoded; absent on a drive without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ocp: Option<OcpSmart>,
}

/// The NVMe SMART/health log's figures that are not counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NvmeHealth {
    /// Critical warning bits (byte 0): 0 spare below threshold, 1
    /// temperature, 2 reliability degraded, 3 read-only, 4 volatile
    /// backup failed, 5 persistent memory region read-only.
    pub critical_warning: u8,
    /// Available spare, percent.
    pub available_spare_pct: u8,
    /// The spare threshold the device warns at, percent.
    pub available_spare_threshold_pct: u8,
    /// Percentage of the rated endurance used (may exceed 100).
    pub percentage_used: u8,
    /// Data units read (each 1000 x 512 bytes), as reported.
    pub data_units_read: u64,
    /// Data units written (each 1000 x 512 bytes), as reported.
    pub data_units_written: u64,
}

/// One ATA SMART attribute.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SmartAttribute {
    /// The attribute's number (1-255).
    pub id: u8,
    /// Its usual name (smartmontools'), `None` for one not known here.
    pub name: Option<String>,
    /// Flags (bit 0: pre-failure).
    pub flags: u16,
    /// Normalised current value (1-253, higher is better).
    pub current: u8,
    /// Worst normalised value seen.
    pub worst: u8,
    /// The threshold from READ THRESHOLDS; `None` when not read.
    pub threshold: Option<u8>,
    /// The raw value (48 bits, little endian), as stored.
    pub raw: u64,
    /// `current <= threshold` with a threshold above 0 (smartctl's
    /// FAILING_NOW).
    pub failing: bool,
}

/// The temperature during one test.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestTemperature {
    /// The test's name.
    pub test: String,
    /// How it was sampled: `during` (NVMe: the health log every sample
    /// interval while the test ran, besides right before and after; the
    /// admin queue does not disturb the I/O queues), `before_after` (right
    /// before and right after the test only: ATA, whose SMART commands are
    /// not queued and would drain NCQ, SCSI, and an NVMe test shorter than
    /// the interval), `hwmon` (a hwmon sensor during the test; not used
    /// yet).
    pub source: String,
    /// Readings taken.
    pub samples: u32,
    /// The highest reading, degrees Celsius; `None` without one.
    pub max_temperature_c: Option<i32>,
}

/// One line of the health analysis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HealthLine {
    /// What it says ([`HealthKind`]).
    pub kind: HealthKind,
    /// The disk, as its [`TargetInfo::path`].
    pub target: String,
    /// The test, for `temperature` during a test and `throughput_drop`.
    #[serde(default)]
    pub test: Option<String>,
    /// The figure: a counter's or attribute's name, `temperature_c`,
    /// `read_bytes_per_sec` / `write_bytes_per_sec`, `smart_status`.
    pub what: String,
    /// Before (the first half's mean for `throughput_drop`), in the
    /// figure's unit.
    #[serde(default)]
    pub before: Option<f64>,
    /// After (the second half's mean; the highest temperature), same unit.
    #[serde(default)]
    pub after: Option<f64>,
    /// The limit crossed (threshold, warning temperature), same unit.
    #[serde(default)]
    pub limit: Option<f64>,
    /// In words, with the figures.
    pub message: String,
}
