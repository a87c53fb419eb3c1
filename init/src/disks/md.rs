//! An md RAID member's superblock, read from where each metadata version
//! puts it (the kernel's `include/uapi/linux/raid/md_p.h`, mdadm's
//! `super0.c` and `super1.c`), and the arrays its members make, as `mdadm
//! --examine` and `mdadm --assemble --readonly` see them:
//! - 0.90: 4096 bytes, host-endian (little on x86), at the last 64 KiB
//!   boundary of the device less 64 KiB; the checksum is the 32-bit sum
//!   of its 1024 words, folded.
//! - 1.x: little-endian, 256 bytes plus two bytes per device role; 1.1 at
//!   byte 0, 1.2 at 4 KiB, 1.0 at the device's end less 8 KiB, rounded
//!   down to 4 KiB; the checksum is the 32-bit sum of its words, carries
//!   folded in.
//!
//! Read only: nothing here writes, assembles or asks the kernel anything.

use std::collections::BTreeMap;

use super::bytes::Bytes;

use bench_core::document::result::MdMember;
use bench_core::vocab::stack::RaidLevel;

/// The md magic, the first word of every superblock.
const MAGIC: u32 = 0xa92b_4efc;
/// 0.90's reserved area at the end of a device, and its superblock size.
const V090_RESERVED: u64 = 64 << 10;
const V090_BYTES: usize = 4096;
/// The most of a 1.x superblock read: its 256 bytes and 384 roles
/// (mdadm's `MAX_DEVS`), in 4 KiB.
const V1_BYTES: usize = 4096;
/// The most slots an array of each metadata may have: md's `max_disks`
/// (0.90: MD_SB_DISKS, the 27 disk descriptors its superblock holds;
/// 1.x: (4096 - 256) / 2 = 1920, the roles a 4 KiB superblock holds, as
/// the kernel's super_1_validate sets it). A superblock saying more is
/// not believed.
pub const MAX_SLOTS_V090: u32 = 27;
pub const MAX_SLOTS_V1: u32 = (4096 - 256) / 2;
/// 1.x: `resync_offset` when the array is in sync.
const MAX_SECTOR: u64 = u64::MAX;
/// 1.x device roles that are not a slot.
const ROLE_SPARE: u16 = 0xffff;
const ROLE_FAULTY: u16 = 0xfffe;
const ROLE_JOURNAL: u16 = 0xfffd;
/// 1.x feature bits.
const FEATURE_BITMAP: u32 = 1;
const FEATURE_RESHAPE: u32 = 4;
const FEATURE_REPLACEMENT: u32 = 16;
const FEATURE_JOURNAL: u32 = 512;
const FEATURE_PPL: u32 = 1024;
/// 0.90 disk-descriptor state bits.
const DISK_FAULTY: u32 = 1;
const DISK_ACTIVE: u32 = 2;
const DISK_SYNC: u32 = 4;
/// 0.90 array state: clean; an internal bitmap.
const SB_CLEAN: u32 = 1;
const SB_BITMAP: u32 = 1 << 8;

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn le64(b: &[u8], at: usize) -> u64 {
    u64::from(le32(b, at)) | (u64::from(le32(b, at + 4)) << 32)
}

/// A 64-bit sum's carries folded into 32 bits, as mdadm's checksums do
/// (the fold's own carry is dropped, as its 32-bit result drops it).
fn fold(sum: u64) -> u32 {
    let f = ((sum & 0xffff_ffff) + (sum >> 32)).to_le_bytes();
    u32::from_le_bytes([f[0], f[1], f[2], f[3]])
}

/// 16 bytes as mdadm prints an md UUID: four groups of eight hex digits.
fn uuid_text(b: &[u8]) -> String {
    b.chunks(4)
        .map(|c| c.iter().map(|x| format!("{x:02x}")).collect::<String>())
        .collect::<Vec<_>>()
        .join(":")
}

/// The 0.90 superblock in `sb` (4096 bytes), `Ok(None)` without the magic.
pub fn parse_v090(sb: &[u8], at: u64) -> Result<Option<MdMember>, String> {
    if sb.len() < V090_BYTES || le32(sb, 0) != MAGIC {
        return Ok(None);
    }
    let w = |i: usize| le32(sb, 4 * i);
    if (w(1), w(2)) != (0, 90) {
        return Ok(None);
    }
    // The checksum: every word summed with the checksum's own word as 0,
    // the carries folded in (mdadm's calc_sb0_csum).
    let sum = fold((0..1024).filter(|&i| i != 38).map(|i| u64::from(w(i))).sum());
    if sum != w(38) {
        return Err(format!(
            "an md 0.90 superblock at byte {at} with a bad checksum ({:#x}, computed {sum:#x})",
            w(38)
        ));
    }
    if w(10) > MAX_SLOTS_V090 {
        return Err(format!(
            "an md 0.90 superblock at byte {at} with {} slots (raid_disks), more than the {MAX_SLOTS_V090} its \
             format holds (MD_SB_DISKS); not believed",
            w(10)
        ));
    }
    let level = i32::from_le_bytes(w(7).to_le_bytes());
    let uuid = [w(5), w(13), w(14), w(15)]
        .iter()
        .map(|x| format!("{x:08x}"))
        .collect::<Vec<_>>()
        .join(":");
    // This device's own descriptor (word 992): its slot when active and in sync.
    let this = |k: usize| w(992 + k);
    let (role, device_state) = if this(4) & DISK_FAULTY != 0 {
        (None, "faulty")
    } else if this(4) & (DISK_ACTIVE | DISK_SYNC) == DISK_ACTIVE | DISK_SYNC {
        (Some(this(3)), "active")
    } else {
        (None, "spare")
    };
    let events = (u64::from(w(40)) << 32) | u64::from(w(39));
    Ok(Some(MdMember {
        metadata: "0.90".into(),
        array_uuid: uuid,
        name: None,
        level: RaidLevel::from_number(level),
        layout: RaidLevel::from_number(level).layout_name(w(64)),
        chunk_bytes: RaidLevel::from_number(level).chunked().then_some(u64::from(w(65))),
        raid_disks: w(10),
        role,
        device_state: device_state.into(),
        device_uuid: None,
        events,
        clean: w(33) & SB_CLEAN != 0,
        component_bytes: u64::from(w(8)) * 1024,
        data_offset_bytes: 0,
        superblock_offset_bytes: at,
        bitmap: w(33) & SB_BITMAP != 0,
        created_unix: u64::from(w(6)),
        updated_unix: u64::from(w(32)),
        features: Vec::new(),
    }))
}

/// The 1.x superblock in `sb` (read at byte `at` of the device), `minor`
/// being 0, 1 or 2 by where it was found; `Ok(None)` without the magic.
pub fn parse_v1(sb: &[u8], minor: u8, at: u64) -> Result<Option<MdMember>, String> {
    if sb.len() < 256 || le32(sb, 0) != MAGIC || le32(sb, 4) != 1 {
        return Ok(None);
    }
    // Where the superblock says it is must be where it was found: a 1.2
    // superblock's bytes seen from a 1.1 offset of a nested device are not
    // this device's.
    if le64(sb, 144) != at / 512 {
        return Ok(None);
    }
    let max_dev = le32(sb, 220) as usize;
    let len = 256 + 2 * max_dev;
    if len > sb.len() {
        return Err(format!(
            "an md 1.{minor} superblock at byte {at} with {max_dev} device roles (max_dev), more than the \
             {MAX_SLOTS_V1} a 1.x superblock holds (md's max_disks); not believed"
        ));
    }
    let mut sum: u64 = 0;
    for i in (0..len & !3).step_by(4) {
        if i != 216 {
            sum += u64::from(le32(sb, i));
        }
    }
    if len % 4 == 2 {
        sum += u64::from(u16::from_le_bytes([sb[len - 2], sb[len - 1]]));
    }
    let csum = fold(sum);
    if csum != le32(sb, 216) {
        return Err(format!(
            "an md 1.{minor} superblock at byte {at} with a bad checksum ({:#x}, computed {csum:#x})",
            le32(sb, 216)
        ));
    }
    if le32(sb, 92) > MAX_SLOTS_V1 {
        return Err(format!(
            "an md 1.{minor} superblock at byte {at} with {} slots (raid_disks), more than the {MAX_SLOTS_V1} md \
             allows a 1.x array (max_disks); not believed",
            le32(sb, 92)
        ));
    }
    let features = le32(sb, 8);
    let level = i32::from_le_bytes(le32(sb, 72).to_le_bytes());
    let dev_number = le32(sb, 160) as usize;
    let role = (dev_number < max_dev).then(|| u16::from_le_bytes([sb[256 + 2 * dev_number], sb[257 + 2 * dev_number]]));
    let (role, device_state) = match role {
        None | Some(ROLE_SPARE) => (None, "spare"),
        Some(ROLE_FAULTY) => (None, "faulty"),
        Some(ROLE_JOURNAL) => (None, "journal"),
        Some(r) => (Some(u32::from(r)), "active"),
    };
    let name_end = sb[32..64].iter().position(|&c| c == 0).unwrap_or(32);
    let name = String::from_utf8_lossy(&sb[32..32 + name_end]).into_owned();
    let mut named = Vec::new();
    for (bit, what) in [
        (FEATURE_RESHAPE, "reshape"),
        (FEATURE_REPLACEMENT, "replacement"),
        (FEATURE_JOURNAL, "journal"),
        (FEATURE_PPL, "ppl"),
    ] {
        if features & bit != 0 {
            named.push(what.to_string());
        }
    }
    Ok(Some(MdMember {
        metadata: format!("1.{minor}"),
        array_uuid: uuid_text(&sb[16..32]),
        name: (!name.is_empty()).then_some(name),
        level: RaidLevel::from_number(level),
        layout: RaidLevel::from_number(level).layout_name(le32(sb, 76)),
        chunk_bytes: RaidLevel::from_number(level)
            .chunked()
            .then_some(u64::from(le32(sb, 88)) * 512),
        raid_disks: le32(sb, 92),
        role,
        device_state: device_state.into(),
        device_uuid: Some(uuid_text(&sb[168..184])),
        events: le64(sb, 200),
        clean: le64(sb, 208) == MAX_SECTOR,
        // The used size (`size`), which raid0 leaves 0: then the data area's.
        component_bytes: match le64(sb, 80) {
            0 => le64(sb, 136),
            used => used,
        }
        .saturating_mul(512),
        data_offset_bytes: le64(sb, 128).saturating_mul(512),
        superblock_offset_bytes: at,
        bitmap: features & FEATURE_BITMAP != 0,
        created_unix: le64(sb, 64) & 0xff_ffff_ffff,
        updated_unix: le64(sb, 192) & 0xff_ffff_ffff,
        features: named,
    }))
}

/// Where each metadata version's superblock is on a device of `size` bytes.
pub fn locations(size: u64) -> [(&'static str, u64); 4] {
    let sectors = size / 512;
    let v10 = (sectors.saturating_sub(16) & !7) * 512;
    let v090 = (size & !(V090_RESERVED - 1)).saturating_sub(V090_RESERVED);
    [("1.1", 0), ("1.2", 4096), ("1.0", v10), ("0.90", v090)]
}

/// The md superblock on a device of `size` bytes, read-only: the one found
/// where its version puts it (the newest by creation time when more than
/// one is, as mdadm's `guess_super` picks), `Ok(None)` when there is none,
/// `Err` for a superblock whose checksum is wrong (mdadm ignores it too).
pub fn read(f: &dyn Bytes) -> Result<Option<MdMember>, String> {
    let size = f.size();
    let mut found: Option<MdMember> = None;
    let mut bad = None;
    for (version, at) in locations(size) {
        let len = if version == "0.90" { V090_BYTES } else { V1_BYTES };
        if at + len as u64 > size {
            continue;
        }
        let mut buf = vec![0u8; len];
        if f.read_at(&mut buf, at).is_err() {
            continue;
        }
        let got = match version {
            "0.90" => parse_v090(&buf, at),
            v => parse_v1(&buf, v.as_bytes()[2] - b'0', at),
        };
        match got {
            Ok(Some(m)) if found.as_ref().is_none_or(|f| m.created_unix > f.created_unix) => found = Some(m),
            Ok(_) => {}
            Err(e) => bad = Some(e),
        }
    }
    match (found, bad) {
        (Some(m), _) => Ok(Some(m)),
        (None, Some(e)) => Err(e),
        (None, None) => Ok(None),
    }
}

/// An array as its members' superblocks make it: what `mdadm --assemble
/// --readonly` would bring up, and why not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayView {
    pub uuid: String,
    pub name: Option<String>,
    pub metadata: String,
    pub level: RaidLevel,
    pub layout: Option<String>,
    pub chunk_bytes: Option<u64>,
    pub raid_disks: u32,
    /// Each slot's device path, `None` where no current member holds it.
    pub slots: Vec<Option<String>>,
    /// Current members that are spares or faulty.
    pub others: Vec<(String, String)>,
    /// Members whose event count is behind the newest (mdadm leaves them out).
    pub stale: Vec<String>,
    pub clean: bool,
    /// Whether enough slots are present for the level to run (degraded or not).
    pub startable: bool,
    /// Why the array can never start, whatever members are present: fewer
    /// slots than its level needs ([`impossible`]).
    pub impossible: Option<String>,
}

impl ArrayView {
    /// Slots without a current member.
    pub fn missing(&self) -> usize {
        self.slots.iter().filter(|s| s.is_none()).count()
    }

    /// The array's state in a word or two, as mdadm's `State :` says it.
    pub fn state(&self) -> String {
        let mut s = String::from(if self.clean { "clean" } else { "active, not clean" });
        if let Some(why) = &self.impossible {
            s.push_str(", cannot start: ");
            s.push_str(why);
        } else if self.missing() > 0 {
            s.push_str(if self.startable {
                ", degraded"
            } else {
                ", too few members to start"
            });
        }
        s
    }
}

/// Why an array of `level` with `slots` slots (raid10: of `layout`) can
/// never start, whatever members are present: fewer slots than the level
/// needs ([`RaidLevel::min_slots`]); raid10 copies (near x far) not 2 to the slot
/// count (the kernel's raid10 refuses such a layout).
pub fn impossible(level: RaidLevel, layout: u32, slots: usize) -> Option<String> {
    if let Some(min) = level.min_slots() {
        if slots < min {
            return Some(format!(
                "{level} needs at least {min} slot(s) and its superblock has {slots}"
            ));
        }
    }
    if level == RaidLevel::Raid10 {
        let copies = (layout & 0xff).max(1) as usize * ((layout >> 8) & 0xff).max(1) as usize;
        if copies < 2 || copies > slots {
            return Some(format!(
                "raid10 keeping {copies} cop(ies) of each chunk on {slots} slot(s); md runs 2 to {slots}"
            ));
        }
    }
    None
}

/// The arrays the members found make, grouped by array UUID, in UUID
/// order. `members` pairs each device's path with its superblock;
/// `layouts` is not needed: raid10's layout number comes back from its name.
pub fn arrays(members: &[(String, MdMember)]) -> Vec<ArrayView> {
    let mut by_uuid: BTreeMap<&str, Vec<&(String, MdMember)>> = BTreeMap::new();
    for m in members {
        by_uuid.entry(m.1.array_uuid.as_str()).or_default().push(m);
    }
    by_uuid
        .into_values()
        .map(|group| {
            let newest = group.iter().map(|(_, m)| m.events).max().unwrap_or(0);
            let current: Vec<_> = group.iter().filter(|(_, m)| m.events == newest).collect();
            let head = &current[0].1;
            let mut slots = vec![None; head.raid_disks as usize];
            let mut others = Vec::new();
            for (path, m) in &current {
                match m.role {
                    Some(r) if (r as usize) < slots.len() && slots[r as usize].is_none() => {
                        slots[r as usize] = Some(path.clone());
                    }
                    _ => others.push((path.clone(), m.device_state.clone())),
                }
            }
            let present: Vec<bool> = slots.iter().map(Option::is_some).collect();
            let layout = layout_number(head.level, head.layout.as_deref());
            let impossible = impossible(head.level, layout, slots.len());
            ArrayView {
                uuid: head.array_uuid.clone(),
                name: head.name.clone(),
                metadata: head.metadata.clone(),
                level: head.level,
                layout: head.layout.clone(),
                chunk_bytes: head.chunk_bytes,
                raid_disks: head.raid_disks,
                startable: impossible.is_none() && head.level.enough(layout, &present),
                impossible,
                slots,
                others,
                stale: group
                    .iter()
                    .filter(|(_, m)| m.events != newest)
                    .map(|(p, _)| p.clone())
                    .collect(),
                clean: current.iter().all(|(_, m)| m.clean),
            }
        })
        .collect()
}

/// The layout number a member's superblock gave the array, from its name
/// ([`RaidLevel::layout_name`]'s): raid10's copies (1 without a name),
/// raid4, raid5 and raid6's parity placement (left-symmetric, md's
/// default, without a name or with one no number gives).
pub fn layout_number(level: RaidLevel, name: Option<&str>) -> u32 {
    match (level, name.and_then(|n| level.layout_number(n))) {
        (_, Some(n)) => n,
        (RaidLevel::Raid10, None) => 1,
        (_, None) => 2,
    }
}

/// Crafted superblocks with correct checksums, for tests.
#[cfg(test)]
pub(crate) mod craft {
    use super::*;

    fn put32(b: &mut [u8], at: usize, x: u32) {
        b[at..at + 4].copy_from_slice(&x.to_le_bytes());
    }

    /// A 0.90 superblock (4096 bytes) of `level` with `raid_disks` slots,
    /// this device active in `slot`, array UUID words all `uuid`.
    pub fn v090(level: i32, raid_disks: u32, slot: u32, uuid: u32) -> Vec<u8> {
        let mut sb = vec![0u8; V090_BYTES];
        put32(&mut sb, 0, MAGIC);
        put32(&mut sb, 8, 90);
        for w in [5, 13, 14, 15] {
            put32(&mut sb, 4 * w, uuid);
        }
        put32(&mut sb, 4 * 7, u32::from_le_bytes(level.to_le_bytes()));
        put32(&mut sb, 4 * 8, 1024); // size, KiB
        put32(&mut sb, 4 * 10, raid_disks);
        put32(&mut sb, 4 * 33, SB_CLEAN);
        put32(&mut sb, 4 * 65, 64 << 10);
        put32(&mut sb, 4 * (992 + 3), slot);
        put32(&mut sb, 4 * (992 + 4), DISK_ACTIVE | DISK_SYNC);
        let w = |i: usize| u64::from(le32(&sb, 4 * i));
        let sum = fold((0..1024).filter(|&i| i != 38).map(w).sum());
        put32(&mut sb, 4 * 38, sum);
        sb
    }

    /// A 1.x superblock (4096 bytes, found at byte `at`) of `level` with
    /// `raid_disks` slots and `max_dev` roles, this device (number 0) in
    /// `slot`, the other roles spare; array UUID bytes all `uuid`.
    pub fn v1(level: i32, raid_disks: u32, max_dev: u32, slot: u16, at: u64, uuid: u8) -> Vec<u8> {
        let mut sb = vec![0u8; V1_BYTES];
        put32(&mut sb, 0, MAGIC);
        put32(&mut sb, 4, 1);
        sb[16..32].fill(uuid);
        put32(&mut sb, 72, u32::from_le_bytes(level.to_le_bytes()));
        sb[80..88].copy_from_slice(&2048u64.to_le_bytes()); // size, sectors
        put32(&mut sb, 88, 128); // chunk, sectors
        put32(&mut sb, 92, raid_disks);
        sb[128..136].copy_from_slice(&2048u64.to_le_bytes()); // data offset
        sb[144..152].copy_from_slice(&(at / 512).to_le_bytes());
        sb[208..216].copy_from_slice(&MAX_SECTOR.to_le_bytes());
        put32(&mut sb, 220, max_dev);
        let len = (256 + 2 * max_dev as usize).min(V1_BYTES);
        for r in (256..len).step_by(2) {
            sb[r..r + 2].copy_from_slice(&ROLE_SPARE.to_le_bytes());
        }
        if max_dev > 0 {
            sb[256..258].copy_from_slice(&slot.to_le_bytes());
        }
        let mut sum: u64 = 0;
        for i in (0..len & !3).step_by(4) {
            if i != 216 {
                sum += u64::from(le32(&sb, i));
            }
        }
        if len % 4 == 2 {
            sum += u64::from(u16::from_le_bytes([sb[len - 2], sb[len - 1]]));
        }
        put32(&mut sb, 216, fold(sum));
        sb
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// md's own limits on an array's slots: 27 for 0.90 (its disk
    /// descriptors), 1920 for 1.x (the roles a 4 KiB superblock holds);
    /// a superblock with a correct checksum past them is not believed
    /// (a record saying why), never allocated by.
    #[test]
    fn slot_counts_past_mds_limits_are_not_believed() {
        let m = parse_v090(&craft::v090(1, 27, 0, 7), 0).unwrap().unwrap();
        assert_eq!((m.raid_disks, m.role), (27, Some(0)));
        for n in [28, 20_000_000, u32::MAX] {
            let e = parse_v090(&craft::v090(1, n, 0, 7), 0).unwrap_err();
            assert!(
                e.contains(&format!("with {n} slots")) && e.contains("27") && e.contains("not believed"),
                "{e}"
            );
        }
        let m = parse_v1(&craft::v1(1, 1920, 1920, 0, 4096, 7), 2, 4096)
            .unwrap()
            .unwrap();
        assert_eq!((m.raid_disks, m.role), (1920, Some(0)));
        for n in [1921, 20_000_000, u32::MAX] {
            let e = parse_v1(&craft::v1(1, n, 4, 0, 4096, 7), 2, 4096).unwrap_err();
            assert!(
                e.contains(&format!("with {n} slots")) && e.contains("1920") && e.contains("not believed"),
                "{e}"
            );
        }
        // max_dev past the 1920 roles a superblock holds.
        let e = parse_v1(&craft::v1(1, 2, 1921, 0, 4096, 7), 2, 4096).unwrap_err();
        assert!(e.contains("1921 device roles") && e.contains("not believed"), "{e}");
    }

    /// Where each version sits on a 64 MiB + 5 sector device.
    #[test]
    fn the_superblock_locations() {
        let size = (64 << 20) + 5 * 512;
        let l = locations(size);
        assert_eq!(l[0], ("1.1", 0));
        assert_eq!(l[1], ("1.2", 4096));
        // (131077 - 16) & !7 = 131056 sectors.
        assert_eq!(l[2], ("1.0", 131_056 * 512));
        // 64 MiB rounded down to 64 KiB, less 64 KiB.
        assert_eq!(l[3], ("0.90", (64 << 20) - (64 << 10)));
    }

    /// mdadm's enough(): which members a degraded array can lose.
    #[test]
    fn enough_members_by_level() {
        use RaidLevel::{Raid0, Raid1, Raid10, Raid5, Raid6};
        assert!(Raid1.enough(0, &[false, true]));
        assert!(!Raid1.enough(0, &[false, false]));
        assert!(Raid5.enough(2, &[true, false, true]));
        assert!(!Raid5.enough(2, &[true, false, false]));
        assert!(Raid6.enough(2, &[false, true, false, true]));
        assert!(!Raid0.enough(0, &[true, false]));
        // raid10 near=2 on 4: slots 0,1 mirror each other, 2,3 too.
        assert!(Raid10.enough(0x102, &[true, false, false, true]));
        assert!(!Raid10.enough(0x102, &[false, false, true, true]));
        assert_eq!(layout_number(Raid10, Some("near=2")), 2);
        assert_eq!(layout_number(Raid10, Some("far=2")), 0x201);
        assert_eq!(layout_number(Raid10, Raid10.layout_name(0x10201).as_deref()), 0x10201);
        assert_eq!(layout_number(Raid10, None), 1);
        assert_eq!(layout_number(Raid5, None), 2);
        // A raid6 layout other than the default keeps its own number (it
        // was read as left-symmetric before: its bytes mapped wrongly).
        assert_eq!(layout_number(Raid6, Some("left-symmetric-6")), 18);
        assert_eq!(layout_number(Raid5, Some("right-asymmetric")), 1);
    }

    /// The names mdadm prints for levels and layouts.
    #[test]
    fn level_and_layout_names() {
        assert_eq!(RaidLevel::from_number(5).name(), "raid5");
        assert_eq!(RaidLevel::from_number(-1).name(), "linear");
        assert_eq!(RaidLevel::Raid5.layout_name(2).as_deref(), Some("left-symmetric"));
        assert_eq!(RaidLevel::Raid6.layout_name(18).as_deref(), Some("left-symmetric-6"));
        assert_eq!(RaidLevel::Raid10.layout_name(0x102).as_deref(), Some("near=2"));
        assert_eq!(RaidLevel::Raid10.layout_name(0x201).as_deref(), Some("far=2"));
        assert_eq!(RaidLevel::Raid1.layout_name(0), None);
    }

    /// An array with fewer slots than its level needs is not startable,
    /// and its state says why: at each level's minimum and one below.
    #[test]
    fn an_array_with_fewer_slots_than_its_level_needs_cannot_start() {
        let view = |level: i32, layout: Option<&str>, slots: u32, present: u32| {
            let members: Vec<(String, MdMember)> = (0..present)
                .map(|i| {
                    let sb = craft::v1(level, slots, 4, u16::try_from(i).unwrap(), 4096, 9);
                    let mut m = parse_v1(&sb, 2, 4096).unwrap().unwrap();
                    m.layout = layout.map(str::to_string);
                    (format!("/dev/d{i}"), m)
                })
                .collect();
            arrays(&members).remove(0)
        };
        // (level, layout, slots at the minimum)
        for (level, layout, min) in [
            (-1, None, 1),
            (0, None, 1),
            (1, None, 1),
            (5, Some("left-symmetric"), 2),
            (6, Some("left-symmetric"), 4),
            (10, Some("near=2"), 2),
        ] {
            let name = RaidLevel::from_number(level).name();
            let v = view(level, layout, min, min);
            assert!(v.startable && v.impossible.is_none(), "{name} at {min}: {v:?}");
            assert_eq!(v.state(), "clean");
            let below = min - 1;
            // A member present for each slot there is (a 0-slot array's
            // member holds no slot: raid_disks 0, role 0).
            let v = view(level, layout, below, below.max(1));
            assert!(!v.startable, "{name} at {below}: {v:?}");
            let want = format!("{name} needs at least {min} slot(s) and its superblock has {below}");
            assert_eq!(v.impossible.as_deref(), Some(want.as_str()));
            assert_eq!(v.state(), format!("clean, cannot start: {want}"));
        }
        // raid10's copies: 2 to the slot count.
        assert!(view(10, Some("near=3"), 3, 3).startable);
        let v = view(10, Some("near=3"), 2, 2);
        assert!(!v.startable);
        assert!(
            v.state()
                .contains("raid10 keeping 3 cop(ies) of each chunk on 2 slot(s)"),
            "{}",
            v.state()
        );
        assert!(!view(10, Some("near=1"), 2, 2).startable);
    }

    /// No magic, nothing; a 1.x superblock found away from where it says
    /// it is belongs to another device.
    #[test]
    fn no_magic_or_a_misplaced_superblock_is_nothing() {
        assert_eq!(parse_v1(&[0u8; 4096], 2, 4096), Ok(None));
        assert_eq!(parse_v090(&[0u8; 4096], 0), Ok(None));
        let mut sb = vec![0u8; 4096];
        sb[..4].copy_from_slice(&MAGIC.to_le_bytes());
        sb[4] = 1;
        sb[144] = 8; // says: at sector 8
        assert_eq!(parse_v1(&sb, 1, 0), Ok(None));
        assert!(parse_v1(&sb, 2, 4096).unwrap_err().contains("bad checksum"));
    }
}
