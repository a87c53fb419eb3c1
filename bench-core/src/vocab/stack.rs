//! The vocabulary of storage stacks, one definition each: md levels and
//! layouts (with the kernel's numbers), dm layer kinds, ciphers, and the
//! level a result document gives an array or a layer ([`StackLevel`]).
//! Their serde names are the config's, the kernel's and the document's;
//! code compares the enums, never their names.

use alloc::format;
use alloc::string::{String, ToString};
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
        crate::vocab::names::name_of(&self)
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
        crate::vocab::names::name_of(&self)
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
        crate::vocab::names::name_of(&self)
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
        crate::vocab::names::name_of(&self)
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

/// An md level as a superblock numbers it (the 0.90 and 1.x superblocks'
/// `level`): every level md has, by the name mdadm prints; `Other` a
/// number md does not name (`level N`). In documents, its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RaidLevel {
    /// -5.
    Faulty,
    /// -4.
    Multipath,
    /// -1.
    Linear,
    /// 0.
    Raid0,
    /// 1.
    Raid1,
    /// 4.
    Raid4,
    /// 5.
    Raid5,
    /// 6.
    Raid6,
    /// 10.
    Raid10,
    /// Any other number.
    Other(i32),
}

/// RAID5's (and RAID6's) parity placements 4 and 5, beside [`MdLayout`]'s
/// four (drivers/md/raid5.h ALGORITHM_PARITY_0, ALGORITHM_PARITY_N).
const PARITY_FIRST: u32 = 4;
const PARITY_LAST: u32 = 5;

impl RaidLevel {
    /// The level of superblock number `n`.
    pub fn from_number(n: i32) -> RaidLevel {
        match n {
            -5 => RaidLevel::Faulty,
            -4 => RaidLevel::Multipath,
            -1 => RaidLevel::Linear,
            0 => RaidLevel::Raid0,
            1 => RaidLevel::Raid1,
            4 => RaidLevel::Raid4,
            5 => RaidLevel::Raid5,
            6 => RaidLevel::Raid6,
            10 => RaidLevel::Raid10,
            n => RaidLevel::Other(n),
        }
    }

    /// Its superblock number.
    pub fn number(self) -> i32 {
        match self {
            RaidLevel::Faulty => -5,
            RaidLevel::Multipath => -4,
            RaidLevel::Linear => -1,
            RaidLevel::Raid0 => 0,
            RaidLevel::Raid1 => 1,
            RaidLevel::Raid4 => 4,
            RaidLevel::Raid5 => 5,
            RaidLevel::Raid6 => 6,
            RaidLevel::Raid10 => 10,
            RaidLevel::Other(n) => n,
        }
    }

    /// Its name, as mdadm prints it: `raid5`, `linear`, `level 7`.
    pub fn name(self) -> String {
        match self {
            RaidLevel::Faulty => "faulty".to_string(),
            RaidLevel::Multipath => "multipath".to_string(),
            RaidLevel::Linear => "linear".to_string(),
            RaidLevel::Other(n) => format!("level {n}"),
            l => format!("raid{}", l.number()),
        }
    }

    /// The level [`RaidLevel::name`] names.
    pub fn parse(name: &str) -> Option<RaidLevel> {
        let n = match name {
            "faulty" => -5,
            "multipath" => -4,
            "linear" => -1,
            _ => {
                if let Some(n) = name.strip_prefix("level ") {
                    let n: i32 = n.parse().ok()?;
                    // A named level is never written as a number.
                    return matches!(RaidLevel::from_number(n), RaidLevel::Other(_)).then_some(RaidLevel::Other(n));
                }
                let n: i32 = name.strip_prefix("raid")?.parse().ok()?;
                return match RaidLevel::from_number(n) {
                    RaidLevel::Other(_) | RaidLevel::Faulty | RaidLevel::Multipath | RaidLevel::Linear => None,
                    l if l.name() == name => Some(l),
                    _ => None,
                };
            }
        };
        Some(RaidLevel::from_number(n))
    }

    /// The level bootbench assembles, if it is one.
    pub fn md_level(self) -> Option<MdLevel> {
        MdLevel::ALL.into_iter().find(|l| l.number() == self.number())
    }

    /// Whether chunks mean something (striped levels).
    pub fn chunked(self) -> bool {
        matches!(
            self,
            RaidLevel::Raid0 | RaidLevel::Raid4 | RaidLevel::Raid5 | RaidLevel::Raid6 | RaidLevel::Raid10
        )
    }

    /// The fewest slots md runs an array of this level with (mdadm's and
    /// the kernel's checks at creation and run): linear, raid0, raid1,
    /// multipath and faulty 1, raid4, raid5 and raid10 2, raid6 4. `None`:
    /// a level md does not name.
    pub fn min_slots(self) -> Option<usize> {
        match self {
            RaidLevel::Linear | RaidLevel::Raid0 | RaidLevel::Raid1 | RaidLevel::Multipath | RaidLevel::Faulty => {
                Some(1)
            }
            RaidLevel::Raid4 | RaidLevel::Raid5 | RaidLevel::Raid10 => Some(2),
            RaidLevel::Raid6 => Some(4),
            RaidLevel::Other(_) => None,
        }
    }

    /// Layout number `layout`'s name, as mdadm prints it: raid4's, raid5's
    /// and raid6's parity placement, raid10's copies (`near=2`,
    /// `far=2`, `offset=2`); `None` for a level without layouts.
    pub fn layout_name(self, layout: u32) -> Option<String> {
        let r5 = |l: u32| -> Option<&'static str> {
            match l {
                PARITY_FIRST => Some("parity-first"),
                PARITY_LAST => Some("parity-last"),
                l => MdLayout::ALL
                    .into_iter()
                    .find(|m| m.fits(MdLevel::Raid5) && u32::try_from(m.number()) == Ok(l))
                    .map(MdLayout::name),
            }
        };
        match self {
            RaidLevel::Raid4 => Some("parity-last".to_string()),
            RaidLevel::Raid5 => Some(r5(layout).map_or(format!("layout {layout}"), ToString::to_string)),
            RaidLevel::Raid6 => Some(match layout {
                8 => "rotating-zero-restart".to_string(),
                9 => "rotating-n-restart".to_string(),
                10 => "rotating-n-continue".to_string(),
                16..=20 => r5(layout - 16).map_or(format!("layout {layout}"), |n| format!("{n}-6")),
                l => r5(l).map_or(format!("layout {l}"), ToString::to_string),
            }),
            RaidLevel::Raid10 => {
                let (near, far) = (layout & 0xff, (layout >> 8) & 0xff);
                let mut parts = Vec::new();
                if near > 1 {
                    parts.push(format!("near={near}"));
                }
                if far > 1 {
                    let kind = if layout & 0x10000 != 0 { "offset" } else { "far" };
                    parts.push(format!("{kind}={far}"));
                }
                Some(if parts.is_empty() {
                    "near=1".to_string()
                } else {
                    parts.join(", ")
                })
            }
            _ => None,
        }
    }

    /// The layout number [`RaidLevel::layout_name`] gives `name`, or
    /// `None` when it gives no number that name.
    pub fn layout_number(self, name: &str) -> Option<u32> {
        if self == RaidLevel::Raid10 {
            let mut layout = 0;
            for part in name.split(", ") {
                let (kind, n) = part.split_once('=')?;
                let n: u32 = n.parse().ok().filter(|n| (1..=0xff).contains(n))?;
                layout |= match kind {
                    "near" => n,
                    "far" => n << 8,
                    "offset" => (n << 8) | 0x10000,
                    _ => return None,
                };
            }
            if layout & 0xff == 0 {
                layout |= 1;
            }
            return (self.layout_name(layout).as_deref() == Some(name)).then_some(layout);
        }
        if self == RaidLevel::Raid4 {
            // raid4 keeps its parity on the last member, whatever the number.
            return (name == "parity-last").then_some(PARITY_LAST);
        }
        let candidates = (0..=20).chain(name.strip_prefix("layout ").and_then(|n| n.parse().ok()));
        let mut found = None;
        for l in candidates {
            if self.layout_name(l).as_deref() == Some(name) {
                found = Some(l);
                break;
            }
        }
        found
    }

    /// Whether the slots `present` are enough for this level to run
    /// (mdadm's `enough()`): linear and raid0 need every slot, raid1 one,
    /// raid4 and raid5 all but one, raid6 all but two, raid10 (of
    /// `layout`) one copy of every chunk.
    pub fn enough(self, layout: u32, present: &[bool]) -> bool {
        let n = present.len();
        let have = present.iter().filter(|&&p| p).count();
        match self {
            RaidLevel::Raid1 | RaidLevel::Multipath => have >= 1,
            RaidLevel::Raid4 | RaidLevel::Raid5 => have + 1 >= n,
            RaidLevel::Raid6 => have + 2 >= n,
            RaidLevel::Raid10 => {
                let near = (layout & 0xff).max(1) as usize;
                let copies = near * ((layout >> 8) & 0xff).max(1) as usize;
                if n == 0 {
                    return false;
                }
                let mut first = 0;
                loop {
                    if !(0..copies).any(|k| present[(first + k) % n]) {
                        return false;
                    }
                    first = (first + near) % n;
                    if first == 0 {
                        return true;
                    }
                }
            }
            _ => have == n,
        }
    }
}

impl From<MdLevel> for RaidLevel {
    fn from(l: MdLevel) -> RaidLevel {
        RaidLevel::from_number(l.number())
    }
}

impl fmt::Display for RaidLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl Serialize for RaidLevel {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for RaidLevel {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RaidLevel, D::Error> {
        let s = String::deserialize(d)?;
        RaidLevel::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "{s:?} is not an md level; expected linear, raid0, raid1, raid4, raid5, raid6, raid10, \
                 multipath, faulty or \"level N\""
            ))
        })
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
            assert_eq!(crate::vocab::names::from_name::<StackLevel>(n), Some(l));
        }
        for l in MdLevel::ALL {
            assert_eq!(StackLevel::from(l).name(), l.name());
        }
        assert_eq!(StackLevel::from(LayerKind::Crypt).name(), "crypt");
        assert_eq!(StackLevel::from(LayerKind::Linear).name(), "linear");
        assert_eq!(MdLayout::Offset2.number(), 0x10201);
        assert_eq!(MdLayout::Near2.name(), "near2");
    }

    /// Every superblock level reads back from its name; every layout
    /// number from its name (the one table of names), and a name that
    /// no number gives reads as none.
    #[test]
    fn raid_levels_and_layouts_read_back_from_their_names() {
        for n in [-5, -4, -1, 0, 1, 4, 5, 6, 10, 2, 3, 7, -2, 99] {
            let l = RaidLevel::from_number(n);
            assert_eq!(l.number(), n);
            assert_eq!(RaidLevel::parse(&l.name()), Some(l), "{n}");
        }
        assert_eq!(RaidLevel::from_number(7).name(), "level 7");
        for bad in ["raid7", "level 5", "raid05", "RAID5", "", "raid-1"] {
            assert_eq!(RaidLevel::parse(bad), None, "{bad}");
        }
        assert_eq!(RaidLevel::Raid5.layout_name(2).as_deref(), Some("left-symmetric"));
        assert_eq!(RaidLevel::Raid6.layout_name(18).as_deref(), Some("left-symmetric-6"));
        assert_eq!(RaidLevel::Raid10.layout_name(0x102).as_deref(), Some("near=2"));
        assert_eq!(RaidLevel::Raid10.layout_name(0x10201).as_deref(), Some("offset=2"));
        for (l, numbers) in [
            (RaidLevel::Raid5, &[0u32, 1, 2, 3, 4, 5, 9, 77][..]),
            (
                RaidLevel::Raid6,
                &[0, 1, 2, 3, 4, 5, 8, 9, 10, 16, 17, 18, 19, 20, 21, 300][..],
            ),
            (RaidLevel::Raid10, &[0x102, 0x103, 0x201, 0x202, 0x10201][..]),
        ] {
            for &n in numbers {
                let name = l.layout_name(n).unwrap();
                let back = l.layout_number(&name).unwrap_or_else(|| panic!("{l} {n} {name}"));
                // RAID10's names leave out a far count of 1 (0x102 and 2
                // are both near=2): the name reads back to its geometry.
                if l == RaidLevel::Raid10 {
                    assert_eq!(l.layout_name(back).as_deref(), Some(name.as_str()), "{l} {n}");
                    assert_eq!(
                        (back & 0xff, ((back >> 8) & 0xff).max(1), back >> 16),
                        (n & 0xff, ((n >> 8) & 0xff).max(1), n >> 16)
                    );
                } else {
                    assert_eq!(back, n, "{l} {n} {name}");
                }
            }
        }
        // near=1 (one copy, far or not): mdadm names 0x101 and 1 alike.
        assert_eq!(RaidLevel::Raid10.layout_number("near=1"), Some(1));
        assert_eq!(RaidLevel::Raid4.layout_number("parity-last"), Some(5));
        assert_eq!(RaidLevel::Raid5.layout_number("left-symmetric-6"), None);
        assert_eq!(RaidLevel::Raid10.layout_number("near=2, sideways=3"), None);
        assert_eq!(RaidLevel::Raid10.layout_number("near=0"), None);
        assert_eq!(RaidLevel::Raid0.layout_number("near=2"), None);
    }
}
