//! The existing storage the disks hold, in the document: md superblocks,
//! LVM metadata and LUKS headers as `list` reads them (read-only), the
//! arrays and volume groups they make, and what each partition holds.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

/// A LUKS container's header (LUKS1: the phdr; LUKS2: the binary header
/// and its JSON metadata), as `cryptsetup luksDump` shows it, without the
/// salts and digests.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LuksInfo {
    /// 1 or 2.
    pub version: u32,
    /// The container's UUID.
    pub uuid: String,
    /// LUKS2's label, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The data's cipher: `aes-xts-plain64` (LUKS1: name and mode joined).
    pub cipher: String,
    /// The volume key's size, bits (LUKS1's key bytes; LUKS2: the first
    /// keyslot's key size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_bits: Option<u32>,
    /// Where the encrypted data starts, bytes from the start of the disk.
    pub data_offset_bytes: u64,
    /// LUKS2: the data's encryption sector size, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sector_size: Option<u32>,
    /// Keyslots in use.
    pub keyslots: u32,
}

/// An md RAID member's superblock, as `mdadm --examine` shows it: the
/// array it belongs to and this device's place in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MdMember {
    /// The superblock's version: `0.90`, `1.0`, `1.1` or `1.2`.
    pub metadata: String,
    /// The array's UUID, as mdadm prints it (four groups of eight hex digits).
    pub array_uuid: String,
    /// The array's name (1.x: `host:name` as mdadm wrote it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `raid0`, `raid1`, `raid4`, `raid5`, `raid6`, `raid10`, `linear`, ...
    pub level: crate::vocab::stack::RaidLevel,
    /// raid4/5/6: the parity layout (`left-symmetric`); raid10: the copies (`near=2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// The chunk size of striped levels, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_bytes: Option<u64>,
    /// The slots of the whole array.
    pub raid_disks: u32,
    /// This device's slot, when it holds one (not a spare, not faulty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<u32>,
    /// `active`, `spare`, `faulty` or `journal`.
    pub device_state: String,
    /// 1.x: this device's own UUID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_uuid: Option<String>,
    /// The superblock's update count: a member behind the others is stale.
    pub events: u64,
    /// Whether the array was stopped in sync (no resync pending).
    pub clean: bool,
    /// The part of this device the array uses, bytes.
    pub component_bytes: u64,
    /// Where the array's data starts on this device, bytes.
    pub data_offset_bytes: u64,
    /// Where the superblock is on this device, bytes.
    pub superblock_offset_bytes: u64,
    /// Whether the array has an internal write-intent bitmap.
    pub bitmap: bool,
    /// When the array was created and this superblock last written, Unix seconds.
    pub created_unix: u64,
    pub updated_unix: u64,
    /// 1.x features bootbench names (`reshape`, `replacement`, `journal`, `ppl`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
}

/// An LVM physical volume: its label and the volume group its newest
/// committed metadata describes, as `pvs`, `vgs` and `lvs` show them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LvmPv {
    /// The PV's UUID, as LVM prints it (`xxxxxx-xxxx-...`).
    pub pv_uuid: String,
    /// The device size the label records, bytes.
    pub device_size_bytes: u64,
    /// The volume group, absent for a PV in none (or whose metadata area is empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vg: Option<LvmVg>,
}

/// A volume group from its metadata text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LvmVg {
    pub name: String,
    pub uuid: String,
    /// The metadata's sequence number: the highest is the newest.
    pub seqno: u64,
    /// The extent size, bytes.
    pub extent_bytes: u64,
    /// The VG's physical volumes (`pv0`, ...), each with its UUID.
    pub pvs: Vec<LvmVgPv>,
    /// The logical volumes, hidden ones (pool and RAID sub-volumes) included.
    pub lvs: Vec<LvmLv>,
}

/// A physical volume as the VG's metadata names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LvmVgPv {
    /// Its name in the metadata (`pv0`).
    pub name: String,
    pub uuid: String,
    /// The device path the metadata last saw it at (a hint only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_hint: Option<String>,
    /// Where its first extent starts, bytes from the PV's start.
    pub pe_start_bytes: u64,
    pub pe_count: u64,
}

/// A logical volume and its segments.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LvmLv {
    pub name: String,
    pub uuid: String,
    /// Extents of all its segments times the extent size, bytes.
    pub size_bytes: u64,
    /// Whether `lvs` shows it (pool and RAID sub-volumes are hidden).
    pub visible: bool,
    pub segments: Vec<LvmSegment>,
    /// Why bootbench would not open it as a read-only dm table (a thin,
    /// cache, RAID, mirror or snapshot volume); absent for linear and
    /// striped volumes, which it can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_opened: Option<String>,
}

/// One segment of a logical volume.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LvmSegment {
    pub start_extent: u64,
    pub extent_count: u64,
    /// `striped` (linear is striped over one), `thin`, `thin-pool`, `raid1`, ...
    #[serde(rename = "type")]
    pub kind: String,
    /// The stripe size of a striped segment over more than one PV, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stripe_bytes: Option<u64>,
    /// Where each stripe lies: a PV's name and its first extent there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stripes: Vec<(String, u64)>,
}

/// The stacks the disks' metadata makes, as `bootbench-init list --stacks
/// --json` prints them: each md array from its members' superblocks, each
/// LVM volume group from the newest metadata of its PVs. Nothing in it was
/// assembled or activated.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stacks {
    pub md_arrays: Vec<MdArrayInfo>,
    pub volume_groups: Vec<VgInfo>,
}

/// An md array as its members' superblocks make it: what `mdadm
/// --assemble --readonly` would bring up, and what the array's start holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MdArrayInfo {
    pub uuid: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub metadata: String,
    pub level: crate::vocab::stack::RaidLevel,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_bytes: Option<u64>,
    pub raid_disks: u32,
    /// Each slot's member (a device path), `null` where none is.
    pub slots: Vec<Option<String>>,
    /// Current members holding no slot: spares, faulty devices.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<MdOther>,
    /// Members whose event count is behind the newest: left out, as mdadm leaves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale: Vec<String>,
    /// Stopped in sync on every current member.
    pub clean: bool,
    /// Enough slots present for the level to run, degraded or not.
    pub startable: bool,
    /// `clean`, `active, not clean`, with `, degraded` or `, too few members to start`.
    pub state: String,
    /// The array's size from its level and members, bytes.
    pub size_bytes: u64,
    /// What the array's own start holds, read through its members.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub luks: Option<LuksInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lvm: Option<LvmPv>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holds_unreadable: Vec<String>,
}

/// An md member that holds no slot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MdOther {
    pub path: String,
    /// `spare`, `faulty` or `journal`.
    pub state: String,
}

/// A volume group from the newest metadata among its PVs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VgInfo {
    pub name: String,
    pub uuid: String,
    pub seqno: u64,
    pub extent_bytes: u64,
    /// Its PVs, each where it was found (`null`: missing).
    pub pvs: Vec<VgPvInfo>,
    /// Its visible logical volumes.
    pub lvs: Vec<LvInfo>,
}

/// A PV of a volume group and where it was found: a disk's path, or
/// `md:NAME` for an array's start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VgPvInfo {
    pub name: String,
    pub uuid: String,
    pub found_at: Option<String>,
}

/// A visible logical volume and whether bootbench could open it read-only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LvInfo {
    pub name: String,
    pub size_bytes: u64,
    /// Its segments' types, in order.
    pub segment_types: Vec<String>,
    /// Why it would not be opened (its type, or a missing PV); absent when it can be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_opened: Option<String>,
}

/// What a partition holds (its md superblock, LVM PV or LUKS header).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionHolds {
    /// The partition's device (`/dev/sda1`).
    pub path: String,
    /// Where it starts on the disk, and its size, bytes.
    pub start_bytes: u64,
    pub size_bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md: Option<MdMember>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lvm: Option<LvmPv>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub luks: Option<LuksInfo>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holds_unreadable: Vec<String>,
}
