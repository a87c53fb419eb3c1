//! A zoned disk's zones as the document records them: the zone model,
//! the zones' sizes and limits, and how many zones are in each state,
//! before the run and after it. Parsed from the kernel's zone report by
//! the device stage (`device/zones.rs`).

use alloc::string::String;

use serde::{Deserialize, Serialize};

/// The zone model of `/sys/block/X/queue/zoned`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZoneModel {
    /// "none": not zoned.
    None,
    /// "host-aware": zoned, random writes allowed (ZBC/ZAC host-aware).
    HostAware,
    /// "host-managed": zones must be written at their write pointer
    /// (ZBC/ZAC host-managed, NVMe ZNS).
    HostManaged,
}

impl core::fmt::Display for ZoneModel {
    /// As `queue/zoned` writes it: `none`, `host-aware`, `host-managed`.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            ZoneModel::None => "none",
            ZoneModel::HostAware => "host-aware",
            ZoneModel::HostManaged => "host-managed",
        })
    }
}

/// How [`ZoneSummary::zone_capacity_bytes`] was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CapacityKind {
    /// Every sequential zone has this capacity.
    Uniform,
    /// The sequential zones differ; this is the smallest.
    Smallest,
}

/// Zones counted by condition.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneStates {
    /// Empty (ZC1).
    pub empty: u64,
    /// Implicitly open (ZC2).
    pub implicit_open: u64,
    /// Explicitly open (ZC3).
    pub explicit_open: u64,
    /// Closed (ZC4).
    pub closed: u64,
    /// Full (ZC5).
    pub full: u64,
    /// Read-only (ZC6): a sign of a dying drive.
    pub read_only: u64,
    /// Offline (ZC7): a sign of a dying drive.
    pub offline: u64,
    /// Without a write pointer (conventional).
    pub not_write_pointer: u64,
    /// Reserved or unknown conditions.
    pub other: u64,
}

/// What a zoned disk is and where its zones stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneSummary {
    /// The zone model.
    pub model: ZoneModel,
    /// Zone size in bytes (`chunk_sectors`, else the first zone's length).
    pub zone_size_bytes: u64,
    /// Zone capacity in bytes over the sequential zones; None without one.
    pub zone_capacity_bytes: Option<u64>,
    /// Whether that capacity is every sequential zone's or the smallest.
    pub zone_capacity_kind: Option<CapacityKind>,
    /// Zones in the report.
    pub zones: u64,
    /// Conventional zones among them.
    pub conventional_zones: u64,
    /// Max open zones (0: no limit, as the kernel says).
    pub max_open_zones: u64,
    /// Max active zones (0: no limit).
    pub max_active_zones: u64,
    /// Zones by condition.
    pub states: ZoneStates,
    /// Bytes written in sequential zones: write pointer less start for
    /// open and closed zones, the capacity for full ones; read-only and
    /// offline zones count nothing (their write pointer is not valid).
    pub written_bytes: u64,
}

/// A zoned disk (`queue/zoned` not `none`): its zones before the run and
/// after it, from the kernel's zone report (BLKREPORTZONE).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zoned {
    /// The zone model (`queue/zoned`).
    pub model: ZoneModel,
    /// The zones when the disk was found, before anything ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<ZoneSummary>,
    /// The zones after the run's last test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<ZoneSummary>,
    /// Why a zone report could not be read (every reason, `; `-separated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A host-managed disk's answer to a read of one logical block at the
    /// write pointer of a zone that is not full, read when it was found:
    /// true, it returned data (the drive allows reads past the write
    /// pointer, and read tests read their whole area); false, it refused
    /// (read tests read only where the zones hold data); null, not asked
    /// (every zone is full or conventional, the disk is not host-managed,
    /// or an older document).
    #[serde(default)]
    pub reads_past_write_pointer: Option<bool>,
}

/// How a test met a host-managed zoned disk's zones (fio's
/// `zonemode=zbd`): the test's record says it ran zone-aware.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZoneUse {
    /// Sequential writes at the write pointers: the area's sequential
    /// zones reset first, each written from its start up to its capacity
    /// (never into the gap before the next zone), one zone open per job;
    /// its conventional zones written as any disk's.
    WritePointers,
    /// Random writes (and a mix's reads) only in the area's conventional
    /// zones.
    ConventionalZones,
    /// Reads only where the zones hold data (conventional zones, written
    /// zones up to their write pointer): the drive refuses reads past the
    /// write pointer, or was not asked.
    DataOnly,
    /// Reads of the whole area: the drive allows reads past the write
    /// pointer ([`Zoned::reads_past_write_pointer`]).
    WholeArea,
}

/// A test's record of how it ran on a host-managed zoned disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZonedTest {
    /// How it met the zones.
    pub mode: ZoneUse,
    /// Bytes of the disk the test's area was cut to (each run of it cut to
    /// whole requests), over its steps.
    pub area_bytes: u64,
    /// Runs of the disk that area is made of (a sequential zone's writable
    /// part, adjacent conventional zones or data, each one run).
    pub extents: u64,
    /// Sequential zones reset before each pass (BLKRESETZONE).
    pub zones_reset: u64,
    /// Of those, the zones that hold data after the test (from a zone
    /// report after it): the zones it wrote. `None` when not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones_written: Option<u64>,
}
