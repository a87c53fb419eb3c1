//! What an md array or a dm layer that bootbench built (or found) is built of.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::{StackClass, StackMode};

/// What an array or a layer is built of.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StackInfo {
    /// An array (`md`) or a layer (`dm`).
    pub kind: StackClass,
    /// The name given in the config.
    pub name: String,
    /// md: the level (`linear`, `raid0`, `raid1`, `raid5`, `raid6`,
    /// `raid10`); dm: the layer kind (`crypt`, `linear`; `luks` for an
    /// existing LUKS container, `lvm` for an existing LVM logical volume).
    pub level: crate::vocab::stack::StackLevel,
    /// md: the member devices in array order, as their [`TargetInfo::path`];
    /// `lvm`: the physical volumes its table uses, in order (empty for a
    /// layer).
    #[serde(default)]
    pub members: Vec<String>,
    /// dm: the device beneath, as its [`TargetInfo::path`] (`None` for an array).
    #[serde(default)]
    pub on: Option<String>,
    /// md: chunk size, bytes.
    #[serde(default)]
    pub chunk_bytes: Option<u64>,
    /// md: the layout (`left-symmetric`, `near2`, ...).
    #[serde(default)]
    pub layout: Option<String>,
    /// dm: the layer's options as text (`cipher`, `key_bits`, `sector_size`,
    /// `offset_bytes`, ...; an existing array: `uuid`, `metadata`,
    /// `md_name`; an existing LUKS container: `uuid`, `version`, `cipher`,
    /// `key_bits`, `sector_size`, `data_offset_bytes`; an existing LVM
    /// volume: `lv`, `lv_uuid`, `vg_uuid`,
    /// `seqno` and `table`, its dm table as `dmsetup table` prints it over
    /// the paths of `members`, segments joined by `; `); never a key.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// How it differs from what mdadm, cryptsetup or LVM would build (e.g.
    /// "no write-intent bitmap (mdadm's default has one)").
    #[serde(default)]
    pub notes: Vec<String>,
    /// How the kernel runs it ([`StackMode`]); `None` when it was not
    /// assembled.
    #[serde(default)]
    pub mode: Option<StackMode>,
}
