//! The vocabulary of storage stacks, one definition each: md levels and
//! layouts (with the kernel's numbers), dm layer kinds, ciphers, and the
//! level a result document gives an array or a layer ([`StackLevel`]).
//! Their serde names are the config's, the kernel's and the document's;
//! code compares the enums, never their names.

use alloc::vec::Vec;
use core::fmt;

use serde::{Deserialize, Serialize};

/// An md level; its serde name is the config's and the kernel's
/// `/sys/block/mdN/md/level`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MdLevel {
    Linear,
    Raid0,
    Raid1,
    Raid5,
    Raid6,
    Raid10,
}

impl MdLevel {
    /// Every level, in config order.
    pub const ALL: [MdLevel; 6] = [
        MdLevel::Linear,
        MdLevel::Raid0,
        MdLevel::Raid1,
        MdLevel::Raid5,
        MdLevel::Raid6,
        MdLevel::Raid10,
    ];

    /// The kernel's level number (LEVEL_LINEAR = -1).
    pub fn number(self) -> i32 {
        match self {
            MdLevel::Linear => -1,
            MdLevel::Raid0 => 0,
            MdLevel::Raid1 => 1,
            MdLevel::Raid5 => 5,
            MdLevel::Raid6 => 6,
            MdLevel::Raid10 => 10,
        }
    }

    /// The config name (`linear`, `raid0`, ...), also the kernel's
    /// `/sys/block/mdN/md/level`: serde's.
    pub fn name(self) -> &'static str {
        crate::names::name_of(&self)
    }

    /// The fewest members the kernel runs this level with (all in sync).
    pub fn min_members(self) -> usize {
        match self {
            MdLevel::Linear => 1,
            MdLevel::Raid0 | MdLevel::Raid1 | MdLevel::Raid10 => 2,
            MdLevel::Raid5 => 3,
            MdLevel::Raid6 => 4,
        }
    }

    /// The personality module (as named in modules.dep).
    pub fn module(self) -> &'static str {
        match self {
            MdLevel::Linear => "linear",
            MdLevel::Raid0 => "raid0",
            MdLevel::Raid1 => "raid1",
            MdLevel::Raid5 | MdLevel::Raid6 => "raid456",
            MdLevel::Raid10 => "raid10",
        }
    }

    /// Whether the chunk size means anything (striped levels).
    pub fn striped(self) -> bool {
        matches!(self, MdLevel::Raid0 | MdLevel::Raid5 | MdLevel::Raid6 | MdLevel::Raid10)
    }
}

impl fmt::Display for MdLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A layout for RAID5/6 (parity placement) or RAID10 (copy placement);
/// its serde name is the config's (mdadm's long names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MdLayout {
    LeftAsymmetric,
    RightAsymmetric,
    LeftSymmetric,
    RightSymmetric,
    Near2,
    Far2,
    Offset2,
}

impl MdLayout {
    /// Every layout.
    pub const ALL: [MdLayout; 7] = [
        MdLayout::LeftAsymmetric,
        MdLayout::RightAsymmetric,
        MdLayout::LeftSymmetric,
        MdLayout::RightSymmetric,
        MdLayout::Near2,
        MdLayout::Far2,
        MdLayout::Offset2,
    ];

    /// The kernel's layout number. RAID5/6 (drivers/md/raid5.h
    /// ALGORITHM_*): left-asymmetric 0, right-asymmetric 1, left-symmetric 2,
    /// right-symmetric 3. RAID10 (raid10.c setup_geo): bits 0-7 near copies,
    /// bits 8-15 far copies, bit 16 far copies are offset: near2 = 0x102,
    /// far2 = 0x201, offset2 = 0x10201 (mdadm's n2, f2, o2).
    pub fn number(self) -> i32 {
        match self {
            MdLayout::LeftAsymmetric => 0,
            MdLayout::RightAsymmetric => 1,
            MdLayout::LeftSymmetric => 2,
            MdLayout::RightSymmetric => 3,
            MdLayout::Near2 => (1 << 8) | 2,
            MdLayout::Far2 => (2 << 8) | 1,
            MdLayout::Offset2 => (1 << 16) | (2 << 8) | 1,
        }
    }

    /// The config name: serde's.
    pub fn name(self) -> &'static str {
        crate::names::name_of(&self)
    }

    /// Whether this layout belongs to `level`.
    pub fn fits(self, level: MdLevel) -> bool {
        match self {
            MdLayout::Near2 | MdLayout::Far2 | MdLayout::Offset2 => level == MdLevel::Raid10,
            _ => matches!(level, MdLevel::Raid5 | MdLevel::Raid6),
        }
    }

    /// The layouts `level` takes, its default first (empty: none).
    pub fn all_for(level: MdLevel) -> Vec<MdLayout> {
        let default = MdLayout::default_for(level);
        default
            .into_iter()
            .chain(
                MdLayout::ALL
                    .into_iter()
                    .filter(|l| l.fits(level) && Some(*l) != default),
            )
            .collect()
    }

    /// The default layout of a level (mdadm's): left-symmetric for RAID5/6,
    /// near2 for RAID10; None for levels without one.
    pub fn default_for(level: MdLevel) -> Option<MdLayout> {
        match level {
            MdLevel::Raid5 | MdLevel::Raid6 => Some(MdLayout::LeftSymmetric),
            MdLevel::Raid10 => Some(MdLayout::Near2),
            _ => None,
        }
    }
}

impl fmt::Display for MdLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A layer's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LayerKind {
    /// dm-crypt (as LUKS2 sets it up, without a header).
    Crypt,
    /// dm-linear (as LVM maps a logical volume).
    Linear,
}

/// A crypt layer's cipher: the one it takes, LUKS2's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cipher {
    /// AES in XTS mode with the plain64 IV.
    #[default]
    #[serde(rename = "aes-xts-plain64")]
    AesXtsPlain64,
}

impl Cipher {
    /// Its name (the kernel's crypto spec): serde's.
    pub fn name(self) -> &'static str {
        crate::names::name_of(&self)
    }
}

/// What a result document calls an array's or a layer's level
/// (`StackInfo::level`): an md level, or a dm layer's kind (`linear` is
/// both: `StackInfo::kind` tells which), `luks` for an existing LUKS
/// container, `lvm` for an existing LVM logical volume.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StackLevel {
    /// md linear (members one after another), or dm-linear.
    #[default]
    Linear,
    /// md RAID0.
    Raid0,
    /// md RAID1.
    Raid1,
    /// md RAID5.
    Raid5,
    /// md RAID6.
    Raid6,
    /// md RAID10.
    Raid10,
    /// dm-crypt built by bootbench (no header).
    Crypt,
    /// An existing LUKS container, opened read-only.
    Luks,
    /// An existing LVM logical volume, opened read-only.
    Lvm,
}

impl StackLevel {
    /// Its name in the document: serde's.
    pub fn name(self) -> &'static str {
        crate::names::name_of(&self)
    }

    /// Whether every member holds a copy of every block (RAID1, RAID10):
    /// reads may come from any.
    pub fn mirrored(self) -> bool {
        matches!(self, StackLevel::Raid1 | StackLevel::Raid10)
    }
}

impl From<MdLevel> for StackLevel {
    fn from(l: MdLevel) -> StackLevel {
        match l {
            MdLevel::Linear => StackLevel::Linear,
            MdLevel::Raid0 => StackLevel::Raid0,
            MdLevel::Raid1 => StackLevel::Raid1,
            MdLevel::Raid5 => StackLevel::Raid5,
            MdLevel::Raid6 => StackLevel::Raid6,
            MdLevel::Raid10 => StackLevel::Raid10,
        }
    }
}

impl From<LayerKind> for StackLevel {
    fn from(k: LayerKind) -> StackLevel {
        match k {
            LayerKind::Crypt => StackLevel::Crypt,
            LayerKind::Linear => StackLevel::Linear,
        }
    }
}

impl fmt::Display for StackLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The document's names are today's strings, and read back.
    #[test]
    fn stack_levels_keep_their_names() {
        for (l, n) in [
            (StackLevel::Linear, "linear"),
            (StackLevel::Raid0, "raid0"),
            (StackLevel::Raid10, "raid10"),
            (StackLevel::Crypt, "crypt"),
            (StackLevel::Luks, "luks"),
            (StackLevel::Lvm, "lvm"),
        ] {
            assert_eq!(l.name(), n);
            assert_eq!(crate::names::from_name::<StackLevel>(n), Some(l));
        }
        for l in MdLevel::ALL {
            assert_eq!(StackLevel::from(l).name(), l.name());
        }
        assert_eq!(StackLevel::from(LayerKind::Crypt).name(), "crypt");
        assert_eq!(StackLevel::from(LayerKind::Linear).name(), "linear");
        assert_eq!(MdLayout::Offset2.number(), 0x10201);
        assert_eq!(MdLayout::Near2.name(), "near2");
    }
}
