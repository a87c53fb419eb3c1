//! What the disks hold, for `list`: on each disk, an md superblock, an LVM
//! physical volume, a LUKS header, firmware RAID metadata; then the stacks
//! these make, read the way the kernel would map them but without asking
//! it: each md array from its members' superblocks (its slots, what is
//! missing or stale, whether it would start), and what the array's own
//! start holds (LUKS, an LVM PV) read through the array's geometry from
//! its members; each volume group from the newest metadata of its PVs,
//! with the PVs present and missing and which volumes bootbench could
//! open read-only. Nothing is written, assembled or activated.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use bench_core::document::result::{
    LuksInfo, LvInfo, LvmLv, LvmPv, LvmVg, MdArrayInfo, MdMember, MdOther, PartitionHolds, Stacks, TargetInfo, VgInfo,
    VgPvInfo,
};

pub use super::bytes::{Bytes, Device};
use super::md::{self, ArrayView};
use super::{luks, lvm};
use bench_core::vocab::stack::RaidLevel;

/// An md array read through its members: each request mapped to the
/// member and place the level's layout puts it (the kernel's raid0,
/// raid1, raid5 and raid10 mappings), never reconstructed from parity.
pub struct ArrayBytes<'a> {
    pub level: RaidLevel,
    pub layout: u32,
    pub chunk: u64,
    /// Each slot's device and data offset, `None` where it is missing.
    pub slots: Vec<Option<(&'a dyn Bytes, u64)>>,
    /// The part of each member the array uses, bytes.
    pub component: u64,
}

impl std::fmt::Debug for ArrayBytes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArrayBytes")
            .field("level", &self.level)
            .field("layout", &self.layout)
            .field("chunk", &self.chunk)
            .field(
                "slots",
                &self.slots.iter().map(|s| s.map(|(_, off)| off)).collect::<Vec<_>>(),
            )
            .field("component", &self.component)
            .finish()
    }
}

/// A slot number or a length as a `usize` (past `usize::MAX` it is no
/// slot and no length: the lookup fails, never wraps).
fn ix(x: u64) -> usize {
    usize::try_from(x).unwrap_or(usize::MAX)
}

impl ArrayBytes<'_> {
    /// Where the array's byte `at` is: (slot, byte on the member past the
    /// data offset), for each copy there is (raid1 and raid10: several).
    fn map(&self, at: u64) -> Option<Vec<(usize, u64)>> {
        let n = self.slots.len() as u64;
        let chunk = self.chunk.max(512);
        let (c, within) = (at / chunk, at % chunk);
        Some(match self.level {
            RaidLevel::Raid1 => (0..self.slots.len()).map(|s| (s, at)).collect(),
            RaidLevel::Linear => {
                let s = at / self.component.max(1);
                vec![(ix(s), at % self.component.max(1))]
            }
            RaidLevel::Raid0 => vec![(ix(c % n), (c / n) * chunk + within)],
            // raid5's six parity placements (md's numbers 0 to 5); raid4's is 5.
            RaidLevel::Raid4 | RaidLevel::Raid5 if self.layout <= 5 => {
                let data = n - 1;
                let (stripe, mut dd) = (c / data, c % data);
                let pd = match self.layout {
                    0 | 2 => data - stripe % n,
                    1 | 3 => stripe % n,
                    4 => 0,
                    _ => data,
                };
                dd = match self.layout {
                    0 | 1 if self.level == RaidLevel::Raid5 => dd + u64::from(dd >= pd),
                    2 | 3 if self.level == RaidLevel::Raid5 => (pd + 1 + dd) % n,
                    4 => dd + 1,
                    _ => dd,
                };
                vec![(ix(dd), stripe * chunk + within)]
            }
            // raid6's default layout: P then Q rotate left, data after them.
            RaidLevel::Raid6 if self.layout == 2 => {
                let data = n - 2;
                let (stripe, dd) = (c / data, c % data);
                let pd = n - 1 - stripe % n;
                vec![(ix((pd + 2 + dd) % n), stripe * chunk + within)]
            }
            RaidLevel::Raid10 => {
                let near = u64::from(self.layout & 0xff).max(1);
                (0..near)
                    .map(|j| {
                        let p = c * near + j;
                        (ix(p % n), (p / n) * chunk + within)
                    })
                    .collect()
            }
            _ => return None,
        })
    }

    /// The array's size from its level and its members' used size.
    fn array_size(&self) -> u64 {
        let n = self.slots.len() as u64;
        match self.level {
            RaidLevel::Raid1 => self.component,
            RaidLevel::Raid0 | RaidLevel::Linear => self.component.saturating_mul(n),
            RaidLevel::Raid4 | RaidLevel::Raid5 => self.component.saturating_mul(n.saturating_sub(1)),
            RaidLevel::Raid6 => self.component.saturating_mul(n.saturating_sub(2)),
            RaidLevel::Raid10 => self.component.saturating_mul(n) / u64::from(self.layout & 0xff).max(1),
            _ => 0,
        }
    }
}

impl Bytes for ArrayBytes<'_> {
    fn size(&self) -> u64 {
        self.array_size()
    }

    fn read_at(&self, buf: &mut [u8], at: u64) -> Result<(), String> {
        let chunk = self.chunk.max(512);
        let mut done = 0usize;
        while done < buf.len() {
            let pos = at + done as u64;
            // A request never crosses a chunk (raid1: any length stays on one member).
            let room = if self.level == RaidLevel::Raid1 {
                buf.len() - done
            } else {
                ix(chunk - pos % chunk)
            };
            let len = room.min(buf.len() - done);
            let copies = self.map(pos).ok_or_else(|| {
                format!(
                    "a {} array of layout {}, which bootbench does not map",
                    self.level, self.layout
                )
            })?;
            let (dev, off) = copies
                .iter()
                .find_map(|&(s, o)| {
                    self.slots
                        .get(s)
                        .copied()
                        .flatten()
                        .map(|(d, data)| (d, data.checked_add(o)))
                })
                .ok_or_else(|| format!("the array's byte {pos} is on a missing member"))?;
            // A data offset from a superblock never wraps to another place.
            let off = off.ok_or_else(|| format!("the array's byte {pos} is past 2^64 on its member"))?;
            dev.read_at(&mut buf[done..done + len], off)?;
            done += len;
        }
        Ok(())
    }
}

/// What one device (a disk or an array) holds at its start.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Found {
    pub luks: Option<LuksInfo>,
    pub md: Option<MdMember>,
    pub lvm: Option<LvmPv>,
    pub firmware_raid: Option<String>,
    pub unreadable: Vec<String>,
}

/// Intel Matrix Storage's signature, in the second-last sector; SNIA
/// DDF's anchor magic (big-endian), in the last one.
const IMSM_SIGNATURE: &[u8] = b"Intel Raid ISM Cfg Sig. ";
const DDF_MAGIC: u32 = 0xde11_de11;

/// Read what `dev` holds: each kind of metadata where it lives; one that
/// is there but does not parse is named in `unreadable`.
pub fn examine(dev: &dyn Bytes, md_too: bool) -> Found {
    let mut f = Found::default();
    let size = dev.size();
    if size < 8192 {
        return f;
    }
    if md_too {
        match md::read(dev) {
            Ok(m) => f.md = m,
            Err(e) => f.unreadable.push(e),
        }
        let mut tail = [0u8; 1024];
        if dev.read_at(&mut tail, size - 1024).is_ok() {
            if tail[..IMSM_SIGNATURE.len()] == *IMSM_SIGNATURE {
                f.firmware_raid = Some("Intel IMSM (Matrix Storage / VROC)".into());
            } else if u32::from_be_bytes([tail[512], tail[513], tail[514], tail[515]]) == DDF_MAGIC {
                f.firmware_raid = Some("SNIA DDF".into());
            }
        }
    }
    // An md member's data is the array's, not its own: with 0.90 and 1.0
    // (superblock at the end) its start is the array's start (raid1) or
    // first chunk (striped levels), and raid5's parity of a chunk beside an
    // empty one copies it. A LUKS header or PV label seen there belongs to
    // the array (read through it), as LVM's md component detection says.
    if f.md.is_some() {
        return f;
    }
    match luks::read(dev) {
        Ok(l) => f.luks = l,
        Err(e) => f.unreadable.push(e),
    }
    match lvm::read(dev) {
        Ok(p) => f.lvm = p,
        Err(e) => f.unreadable.push(e),
    }
    f
}

/// Read what each disk holds into its `md`, `lvm`, `luks`,
/// `firmware_raid` and `holds_unreadable`, and its partitions' into
/// `partitions` (read-only; a device that cannot be opened says nothing).
/// A plain read has no timeout: [`read_bounded`] bounds the whole.
pub fn read(disks: &mut [TargetInfo]) {
    read_in(crate::sysfs::root(), Path::new("/dev"), disks);
}

/// [`read`] with the sysfs root and the directory of device nodes given.
pub fn read_in(sys: &Path, dev: &Path, disks: &mut [TargetInfo]) {
    for d in disks {
        if let Ok(dev) = Device::open(&d.path, d.size_bytes) {
            let f = examine(&dev, true);
            d.luks = f.luks;
            d.md = f.md;
            d.lvm = f.lvm;
            d.firmware_raid = f.firmware_raid;
            d.holds_unreadable = f.unreadable;
        }
        let name = Path::new(&d.path).file_name().and_then(|n| n.to_str()).unwrap_or("");
        d.partitions = partitions(sys, name)
            .into_iter()
            .filter_map(|(part, start_bytes, size_bytes)| {
                let path = dev.join(&part).display().to_string();
                let f = examine(&Device::open(&path, size_bytes).ok()?, true);
                let holds = f.md.is_some() || f.lvm.is_some() || f.luks.is_some() || !f.unreadable.is_empty();
                holds.then_some(PartitionHolds {
                    path,
                    start_bytes,
                    size_bytes,
                    md: f.md,
                    lvm: f.lvm,
                    luks: f.luks,
                    holds_unreadable: f.unreadable,
                })
            })
            .collect();
    }
}

/// The partitions of the disk `name` (sysfs `block/NAME/NAMEp?N`, the
/// entries with a `partition` file), in name order: (kernel name, start,
/// size), bytes.
pub fn partitions(sys: &Path, name: &str) -> Vec<(String, u64, u64)> {
    if name.is_empty() {
        return Vec::new();
    }
    let dir = sys.join("block").join(name);
    let sectors = |p: &Path| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect())
        .unwrap_or_default();
    names.sort();
    names
        .into_iter()
        .filter(|e| e.starts_with(name) && dir.join(e).join("partition").exists())
        .filter_map(|e| {
            let start = sectors(&dir.join(&e).join("start"))?;
            let size = sectors(&dir.join(&e).join("size"))?;
            Some((e, start * 512, size * 512))
        })
        .collect()
}

/// What [`read_bounded`] could not read in time.
pub const HOLDS_TIMEOUT: &str = "not read: a disk did not answer in time";

/// [`read`] on a thread of its own, waited for up to `limit`: the booted
/// console's listing must not hang on a dying disk's first sector. On
/// time, the disks come back with what they hold; past it, as they were,
/// with the reason (the thread is left to finish or hang on its own).
pub fn read_bounded(disks: &[TargetInfo], limit: std::time::Duration) -> Result<Vec<TargetInfo>, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let mut copy = disks.to_vec();
    std::thread::Builder::new()
        .name("holds".into())
        .spawn(move || {
            read(&mut copy);
            let _ = tx.send(copy);
        })
        .map_err(|e| format!("not read: {e}"))?;
    rx.recv_timeout(limit)
        .map_err(|_| format!("{HOLDS_TIMEOUT} ({} s)", limit.as_secs()))
}

/// A size in binary units for a listing line: `64 KiB`, `32 MiB`.
fn binary(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024 && v % 1024 == 0 && u < UNITS.len() - 1 {
        v /= 1024;
        u += 1;
    }
    format!("{v} {}", UNITS[u])
}

fn luks_line(l: &LuksInfo) -> String {
    format!(
        "LUKS{} container uuid {} label {} cipher {} key {} data from byte {}{}; {} keyslot(s) in use",
        l.version,
        l.uuid,
        l.label.as_deref().unwrap_or("-"),
        l.cipher,
        l.key_bits.map_or("-".to_string(), |b| format!("{b} bits")),
        l.data_offset_bytes,
        l.sector_size.map_or(String::new(), |s| format!(" in sectors of {s} B")),
        l.keyslots
    )
}

fn md_line(m: &MdMember) -> String {
    format!(
        "md member (metadata {}) of array uuid {} name {} {}{}{} slot {} of {} ({}), events {}, data from byte {}",
        m.metadata,
        m.array_uuid,
        m.name.as_deref().unwrap_or("-"),
        m.level,
        m.layout.as_ref().map_or(String::new(), |l| format!(" {l}")),
        m.chunk_bytes.map_or(String::new(), |c| format!(" chunk {}", binary(c))),
        m.role.map_or("-".to_string(), |r| r.to_string()),
        m.raid_disks,
        m.device_state,
        m.events,
        m.data_offset_bytes
    )
}

fn pv_line(p: &LvmPv) -> String {
    format!(
        "LVM physical volume uuid {} of volume group {}",
        p.pv_uuid,
        p.vg.as_ref().map_or("- (no metadata on it)".to_string(), |v| format!(
            "{} (seqno {})",
            v.name, v.seqno
        ))
    )
}

/// The `holds:` lines under a disk.
pub fn lines(d: &TargetInfo) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(m) = &d.md {
        out.push(format!("  holds: {}", md_line(m)));
    }
    if let Some(l) = &d.luks {
        out.push(format!("  holds: {}", luks_line(l)));
    }
    if let Some(p) = &d.lvm {
        out.push(format!("  holds: {}", pv_line(p)));
    }
    if let Some(fw) = &d.firmware_raid {
        out.push(format!("  holds: firmware RAID metadata ({fw}), not assembled"));
    }
    for u in &d.holds_unreadable {
        out.push(format!("  holds: unreadable metadata: {u}"));
    }
    for p in &d.partitions {
        let at = format!(
            "  holds: on {} (from byte {}, {} B):",
            p.path, p.start_bytes, p.size_bytes
        );
        if let Some(m) = &p.md {
            out.push(format!("{at} {}", md_line(m)));
        }
        if let Some(l) = &p.luks {
            out.push(format!("{at} {}", luks_line(l)));
        }
        if let Some(v) = &p.lvm {
            out.push(format!("{at} {}", pv_line(v)));
        }
        for u in &p.holds_unreadable {
            out.push(format!("{at} unreadable metadata: {u}"));
        }
    }
    out
}

/// Every device that was read, a disk or a partition: its path, size, md
/// superblock and PV.
fn sources(disks: &[TargetInfo]) -> Vec<Source<'_>> {
    let mut out = Vec::new();
    for d in disks {
        out.push((d.path.clone(), d.size_bytes, d.md.as_ref(), d.lvm.as_ref()));
        for p in &d.partitions {
            out.push((p.path.clone(), p.size_bytes, p.md.as_ref(), p.lvm.as_ref()));
        }
    }
    out
}

/// An md array with the members that make it.
#[derive(Debug)]
pub struct Array {
    pub view: ArrayView,
    /// What the array's own start holds, when it could be read.
    pub found: Option<Found>,
    /// The array's size from its level and members, bytes.
    pub size_bytes: u64,
}

/// The md arrays the disks' superblocks make, each with what its start
/// holds (read through its members when every slot it needs is there).
pub fn md_arrays(disks: &[TargetInfo]) -> Vec<Array> {
    let all = sources(disks);
    let members: Vec<(String, MdMember)> = all
        .iter()
        .filter_map(|(path, _, m, _)| m.map(|m| (path.clone(), m.clone())))
        .collect();
    md::arrays(&members)
        .into_iter()
        .map(|view| {
            let (found, size_bytes) = open_array(&all, &view, &members);
            Array {
                view,
                found,
                size_bytes,
            }
        })
        .collect()
}

type Source<'a> = (String, u64, Option<&'a MdMember>, Option<&'a LvmPv>);

fn open_array(all: &[Source<'_>], view: &ArrayView, members: &[(String, MdMember)]) -> (Option<Found>, u64) {
    read_array(all, view, members, |bytes| {
        let size = bytes.size();
        if !view.startable || size == 0 {
            return (None, size);
        }
        (Some(examine(bytes, false)), size)
    })
    .unwrap_or((None, 0))
}

/// `f` on the array `view` read through its members (`None` when none of
/// its members' superblocks is among `members`).
fn read_array<R>(
    all: &[Source<'_>],
    view: &ArrayView,
    members: &[(String, MdMember)],
    f: impl FnOnce(&dyn Bytes) -> R,
) -> Option<R> {
    let (_, head) = members.iter().find(|(_, m)| m.array_uuid == view.uuid)?;
    let mut devs: Vec<Option<(Device, u64)>> = Vec::new();
    for slot in &view.slots {
        devs.push(slot.as_ref().and_then(|path| {
            let (_, size, m, _) = all.iter().find(|(p, ..)| p == path)?;
            Some((Device::open(path, *size).ok()?, (*m)?.data_offset_bytes))
        }));
    }
    let bytes = ArrayBytes {
        level: view.level,
        layout: md::layout_number(head.level, head.layout.as_deref()),
        chunk: view.chunk_bytes.unwrap_or(64 << 10),
        slots: devs
            .iter()
            .map(|s| s.as_ref().map(|(d, off)| (d as &dyn Bytes, *off)))
            .collect(),
        component: head.component_bytes,
    };
    Some(f(&bytes))
}

/// `f` on the md array `uuid` of the disks, read through its members (never
/// assembled): `None` when the disks make no such array.
pub fn with_array<R>(disks: &[TargetInfo], uuid: &str, f: impl FnOnce(&dyn Bytes) -> R) -> Option<R> {
    let all = sources(disks);
    let members: Vec<(String, MdMember)> = all
        .iter()
        .filter_map(|(path, _, m, _)| m.map(|m| (path.clone(), m.clone())))
        .collect();
    let view = md::arrays(&members).into_iter().find(|v| v.uuid == uuid)?;
    read_array(&all, &view, &members, f)
}

/// Every LUKS container on the disks, their partitions and at the start of
/// the `arrays`: (its UUID, where, its header).
pub fn luks_containers(disks: &[TargetInfo], arrays: &[Array]) -> Vec<(PvAt, LuksInfo)> {
    let mut out = Vec::new();
    for d in disks {
        if let Some(l) = &d.luks {
            out.push((PvAt::Device(d.path.clone()), l.clone()));
        }
        for p in &d.partitions {
            if let Some(l) = &p.luks {
                out.push((PvAt::Device(p.path.clone()), l.clone()));
            }
        }
    }
    for a in arrays {
        if let Some(l) = a.found.as_ref().and_then(|f| f.luks.as_ref()) {
            let at = PvAt::Array {
                uuid: a.view.uuid.clone(),
                name: a.view.name.clone(),
            };
            out.push((at, l.clone()));
        }
    }
    out
}

/// Where a physical volume (or a LUKS container) was found: on a device
/// (a disk or a partition), at the start of an md array, or inside an
/// opened LUKS container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PvAt {
    /// A disk's or a partition's path.
    Device(String),
    /// An md array, by its UUID, with its name when it has one.
    Array { uuid: String, name: Option<String> },
    /// The data of the LUKS container of this UUID, opened with its key.
    Luks(String),
}

impl std::fmt::Display for PvAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PvAt::Device(p) => f.write_str(p),
            PvAt::Array { uuid, name } => write!(f, "md:{}", name.as_deref().unwrap_or(uuid)),
            PvAt::Luks(uuid) => write!(f, "luks:{uuid}"),
        }
    }
}

/// A volume group: its newest metadata among its PVs, and where each PV
/// that is here was found (its UUID, where). Built by [`Vg::new`], which
/// indexes the PVs by their metadata names once: every lookup by name is
/// a map's, so listing a volume group is linear in its PVs and stripes
/// (metadata of 100,000 PVs and stripes took 86 s when each stripe
/// scanned every PV).
#[derive(Clone, Debug)]
pub struct Vg {
    pub meta: LvmVg,
    pub found: Vec<(String, PvAt)>,
    /// Each PV's metadata name (the first PV of a name) to its index in
    /// `meta.pvs` and, when it is here, its index in `found` (the first
    /// found of its UUID).
    by_name: HashMap<String, (usize, Option<usize>)>,
}

/// The most PV names a "missing" reason lists before it counts the rest.
const MISSING_NAMED: usize = 20;

impl Vg {
    /// A volume group of the metadata `meta` with the PVs `found` here
    /// (UUID, where), indexed by the PVs' names.
    pub fn new(meta: LvmVg, found: Vec<(String, PvAt)>) -> Vg {
        let mut by_uuid: HashMap<&str, usize> = HashMap::with_capacity(found.len());
        for (i, (uuid, _)) in found.iter().enumerate() {
            by_uuid.entry(uuid.as_str()).or_insert(i);
        }
        let mut by_name = HashMap::with_capacity(meta.pvs.len());
        for (i, p) in meta.pvs.iter().enumerate() {
            by_name
                .entry(p.name.clone())
                .or_insert_with(|| (i, by_uuid.get(p.uuid.as_str()).copied()));
        }
        Vg { meta, found, by_name }
    }

    /// The metadata's PV named `pv_name` (`pv0`).
    pub fn pv(&self, pv_name: &str) -> Option<&bench_core::document::result::LvmVgPv> {
        self.by_name.get(pv_name).map(|&(i, _)| &self.meta.pvs[i])
    }

    /// Where the PV the metadata names `pv_name` (`pv0`) is, if here.
    pub fn at(&self, pv_name: &str) -> Option<&PvAt> {
        let (_, found) = self.by_name.get(pv_name)?;
        found.map(|f| &self.found[f].1)
    }

    /// The PVs (metadata names) the volume's segments use that are not
    /// here, each once, in the order the segments first use them.
    pub fn missing_for(&self, lv: &LvmLv) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        lv.segments
            .iter()
            .flat_map(|s| s.stripes.iter().map(|(pv, _)| pv))
            .filter(|pv| self.at(pv).is_none() && seen.insert(pv.as_str()))
            .cloned()
            .collect()
    }

    /// Why the volume cannot be opened read-only here: its kind, or a PV
    /// missing (the first [`MISSING_NAMED`] named, the rest counted).
    pub fn not_opened(&self, lv: &LvmLv) -> Option<String> {
        if let Some(why) = &lv.not_opened {
            return Some(why.clone());
        }
        let missing = self.missing_for(lv);
        (!missing.is_empty()).then(|| {
            let mut names = missing[..missing.len().min(MISSING_NAMED)].join(", ");
            if missing.len() > MISSING_NAMED {
                let _ = write!(names, " and {} more", missing.len() - MISSING_NAMED);
            }
            format!("its PV(s) {names} are missing")
        })
    }
}

/// The volume groups whose PVs are on the disks (and their partitions),
/// at the start of the `arrays` or `inside` opened LUKS containers: each
/// from the newest metadata (the highest seqno) of its PVs.
pub fn volume_groups(disks: &[TargetInfo], arrays: &[Array], inside: &[(PvAt, LvmPv)]) -> Vec<Vg> {
    let mut pvs: Vec<(PvAt, &LvmPv)> = sources(disks)
        .into_iter()
        .filter_map(|(path, _, _, pv)| pv.map(|p| (PvAt::Device(path), p)))
        .collect();
    for a in arrays {
        if let Some(p) = a.found.as_ref().and_then(|f| f.lvm.as_ref()) {
            let at = PvAt::Array {
                uuid: a.view.uuid.clone(),
                name: a.view.name.clone(),
            };
            pvs.push((at, p));
        }
    }
    pvs.extend(inside.iter().map(|(at, p)| (at.clone(), p)));
    // Each VG's newest metadata and the PVs found, then indexed once.
    type Newest<'a> = (&'a LvmVg, Vec<(String, PvAt)>);
    let mut vgs: BTreeMap<&str, Newest<'_>> = BTreeMap::new();
    for (at, pv) in pvs {
        let Some(vg) = &pv.vg else { continue };
        let e = vgs.entry(vg.uuid.as_str()).or_insert_with(|| (vg, Vec::new()));
        if vg.seqno > e.0.seqno {
            e.0 = vg;
        }
        e.1.push((pv.pv_uuid.clone(), at));
    }
    vgs.into_values()
        .map(|(meta, found)| Vg::new(meta.clone(), found))
        .collect()
}

/// The stacks the disks make: the md arrays and the volume groups (the
/// newest metadata of each, its PVs found or missing, its visible volumes
/// and whether bootbench could open them).
pub fn stacks(disks: &[TargetInfo]) -> Stacks {
    let mut st = Stacks::default();
    let arrays = md_arrays(disks);
    for a in &arrays {
        let v = a.view.clone();
        let found = a.found.clone().unwrap_or_default();
        st.md_arrays.push(MdArrayInfo {
            state: v.state(),
            uuid: v.uuid,
            name: v.name,
            metadata: v.metadata,
            level: v.level,
            layout: v.layout,
            chunk_bytes: v.chunk_bytes,
            raid_disks: v.raid_disks,
            slots: v.slots,
            others: v
                .others
                .into_iter()
                .map(|(path, state)| MdOther { path, state })
                .collect(),
            stale: v.stale,
            clean: v.clean,
            startable: v.startable,
            size_bytes: a.size_bytes,
            luks: found.luks,
            lvm: found.lvm,
            holds_unreadable: found.unreadable,
        });
    }
    for g in volume_groups(disks, &arrays, &[]) {
        let vg = &g.meta;
        let lvs = vg
            .lvs
            .iter()
            .filter(|l| l.visible)
            .map(|lv| LvInfo {
                name: lv.name.clone(),
                size_bytes: lv.size_bytes,
                segment_types: lv.segments.iter().map(|s| s.kind.clone()).collect(),
                not_opened: g.not_opened(lv),
            })
            .collect();
        st.volume_groups.push(VgInfo {
            name: vg.name.clone(),
            uuid: vg.uuid.clone(),
            seqno: vg.seqno,
            extent_bytes: vg.extent_bytes,
            pvs: vg
                .pvs
                .iter()
                .map(|p| VgPvInfo {
                    name: p.name.clone(),
                    uuid: p.uuid.clone(),
                    found_at: g.at(&p.name).map(ToString::to_string),
                })
                .collect(),
            lvs,
        });
    }
    st
}

/// The stacks in lines, for the end of the listing.
pub fn stack_lines(st: &Stacks) -> Vec<String> {
    let mut out = Vec::new();
    if !st.md_arrays.is_empty() {
        out.push("md arrays (from their members' superblocks; nothing assembled):".to_string());
    }
    for v in &st.md_arrays {
        let slots: Vec<String> = v
            .slots
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{i} {}", s.as_deref().unwrap_or("missing")))
            .collect();
        let mut line = format!(
            "  array uuid {} name {} {}{}{}, metadata {}, {} ({} B), {} slot(s): {}; {}",
            v.uuid,
            v.name.as_deref().unwrap_or("-"),
            v.level,
            v.layout.as_ref().map_or(String::new(), |l| format!(" {l}")),
            v.chunk_bytes.map_or(String::new(), |c| format!(" chunk {}", binary(c))),
            v.metadata,
            binary(v.size_bytes),
            v.size_bytes,
            v.raid_disks,
            slots.join(", "),
            v.state
        );
        for o in &v.others {
            let _ = write!(line, "; {} {}", o.path, o.state);
        }
        if !v.stale.is_empty() {
            let _ = write!(line, "; stale (events behind, left out): {}", v.stale.join(", "));
        }
        out.push(line);
        if let Some(l) = &v.luks {
            out.push(format!("    holds: {}", luks_line(l)));
        }
        if let Some(p) = &v.lvm {
            out.push(format!("    holds: {}", pv_line(p)));
        }
        for u in &v.holds_unreadable {
            out.push(format!("    holds: unreadable metadata: {u}"));
        }
    }
    if !st.volume_groups.is_empty() {
        out.push("LVM volume groups (from the newest metadata on their PVs; nothing activated):".to_string());
    }
    for vg in &st.volume_groups {
        let pv_text: Vec<String> = vg
            .pvs
            .iter()
            .map(|p| format!("{} {}", p.name, p.found_at.as_deref().unwrap_or("missing")))
            .collect();
        out.push(format!(
            "  volume group {} uuid {} seqno {}, extent {}, PVs: {}",
            vg.name,
            vg.uuid,
            vg.seqno,
            binary(vg.extent_bytes),
            pv_text.join(", ")
        ));
        for lv in &vg.lvs {
            out.push(format!(
                "    volume {}/{} {} ({} B), {} segment(s) {}: {}",
                vg.name,
                lv.name,
                binary(lv.size_bytes),
                lv.size_bytes,
                lv.segment_types.len(),
                lv.segment_types.join("+"),
                lv.not_opened
                    .as_ref()
                    .map_or("can be opened read-only".to_string(), |why| format!(
                        "not opened: {why}"
                    ))
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::disks::bytes::Mem;

    /// A superblock whose slot count is past md's limits (a correct
    /// checksum, raid_disks 0xffffffff) is not believed: no member, no
    /// array, and the listing's `holds: unreadable metadata` says why.
    #[test]
    fn an_md_superblock_with_slots_past_mds_limits_is_listed_as_not_believed() {
        let size = 1usize << 20;
        let v090_at = size - (64 << 10);
        for (at, sb) in [
            (4096, md::craft::v1(1, u32::MAX, 4, 0, 4096, 7)),
            (4096, md::craft::v1(5, 20_000_000, 4, 0, 4096, 7)),
            (v090_at, md::craft::v090(1, u32::MAX, 0, 7)),
        ] {
            let mut disk = vec![0u8; size];
            disk[at..at + sb.len()].copy_from_slice(&sb);
            let f = examine(&Mem(disk), true);
            assert_eq!(f.md, None);
            assert!(
                f.unreadable.len() == 1
                    && f.unreadable[0].contains("slots")
                    && f.unreadable[0].contains("not believed"),
                "{:?}",
                f.unreadable
            );
            let t = TargetInfo {
                path: "/dev/x".into(),
                holds_unreadable: f.unreadable,
                ..TargetInfo::default()
            };
            assert!(
                lines(&t)[0].starts_with("  holds: unreadable metadata: an md"),
                "{:?}",
                lines(&t)
            );
            assert!(md_arrays(&[t]).is_empty());
        }
    }

    /// The volume group (`n` PVs, the first here and the rest
    /// missing; one volume of `n` stripes, all on the missing `pv1`) on a
    /// PV of the disk `/dev/x`.
    fn wide_vg(n: usize, stripe_on: impl Fn(usize) -> usize) -> TargetInfo {
        let vg = LvmVg {
            name: "wide".into(),
            uuid: "VG".into(),
            seqno: 1,
            extent_bytes: 4 << 20,
            pvs: (0..n)
                .map(|i| bench_core::document::result::LvmVgPv {
                    name: format!("pv{i}"),
                    uuid: format!("U{i}"),
                    device_hint: None,
                    pe_start_bytes: 1 << 20,
                    pe_count: 1,
                })
                .collect(),
            lvs: vec![LvmLv {
                name: "lv".into(),
                uuid: "L".into(),
                size_bytes: (n as u64) << 22,
                visible: true,
                segments: vec![bench_core::document::result::LvmSegment {
                    start_extent: 0,
                    extent_count: n as u64,
                    kind: "striped".into(),
                    stripe_bytes: Some(64 << 10),
                    stripes: (0..n).map(|i| (format!("pv{}", stripe_on(i)), 0)).collect(),
                }],
                not_opened: None,
            }],
        };
        TargetInfo {
            path: "/dev/x".into(),
            lvm: Some(LvmPv {
                pv_uuid: "U0".into(),
                device_size_bytes: 1 << 30,
                vg: Some(vg),
            }),
            ..TargetInfo::default()
        }
    }

    /// The listing: 100,000 PVs (one here) and a volume of
    /// 100,000 stripes on a missing PV, listed in one pass over each
    /// (PVs and stripes found by name, never by scanning every PV for
    /// each: 86 s in `list --all` before); the missing PV named once.
    /// `WIDE_VG_N` sets another count (to measure by hand).
    #[test]
    fn a_volume_group_of_100000_pvs_and_stripes_is_listed() {
        let n: usize = std::env::var("WIDE_VG_N")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(100_000);
        let t0 = std::time::Instant::now();
        let st = stacks(&[wide_vg(n, |_| 1)]);
        let out = stack_lines(&st);
        eprintln!("{n} PVs and stripes: stacks and lines in {:?}", t0.elapsed());
        let vg = &st.volume_groups[0];
        assert_eq!(vg.pvs.len(), n);
        assert_eq!(vg.pvs[0].found_at.as_deref(), Some("/dev/x"));
        assert!(vg.pvs[1..].iter().all(|p| p.found_at.is_none()));
        assert_eq!(vg.lvs[0].not_opened.as_deref(), Some("its PV(s) pv1 are missing"));
        assert!(out.iter().any(|l| l.ends_with("not opened: its PV(s) pv1 are missing")));
    }

    /// A volume whose stripes alternate between two missing PVs names
    /// each once (not once per stripe); past 20 missing PVs, the rest are
    /// counted.
    #[test]
    fn missing_pvs_are_named_once_each() {
        let st = stacks(&[wide_vg(6, |i| 1 + i % 2)]);
        assert_eq!(
            st.volume_groups[0].lvs[0].not_opened.as_deref(),
            Some("its PV(s) pv1, pv2 are missing")
        );
        let st = stacks(&[wide_vg(30, |i| i)]);
        let names: Vec<String> = (1..=20).map(|i| format!("pv{i}")).collect();
        assert_eq!(
            st.volume_groups[0].lvs[0].not_opened,
            Some(format!("its PV(s) {} and 9 more are missing", names.join(", ")))
        );
    }

    /// A raid5 left-symmetric over three members of four 512-byte chunks
    /// each (data offset 8): the array's bytes come back in the kernel's
    /// order (stripe 0: D0 D1 P; stripe 1: D3 P D2, as left-symmetric
    /// rotates the parity left and starts the data after it).
    #[test]
    fn raid5_left_symmetric_maps_as_the_kernel_does() {
        let chunk = 512u64;
        let cz = ix(chunk);
        // Fill each member chunk with a byte naming (member, stripe).
        let member = |m: u8| {
            let mut v = vec![0xeeu8; 8];
            for s in 0..4u8 {
                v.extend(std::iter::repeat_n(m * 16 + s, cz));
            }
            Mem(v)
        };
        let ms = [member(0), member(1), member(2)];
        let a = ArrayBytes {
            level: RaidLevel::Raid5,
            layout: 2,
            chunk,
            slots: ms.iter().map(|m| Some((m as &dyn Bytes, 8u64))).collect(),
            component: 4 * chunk,
        };
        assert_eq!(a.size(), 8 * chunk);
        let mut all = vec![0u8; 8 * cz];
        a.read_at(&mut all, 0).unwrap();
        let order: Vec<u8> = all.chunks(cz).map(|c| c[0]).collect();
        // Stripe 0: parity on member 2, data on 0, 1; stripe 1: parity on 1,
        // data on 2 then 0; stripe 2: parity on 0, data on 1, 2; stripe 3 as 0.
        assert_eq!(order, vec![0x00, 0x10, 0x21, 0x01, 0x12, 0x22, 0x03, 0x13]);
        // A parity placement bootbench does not map (raid5's number 9,
        // raid6's left-symmetric-6) is said, never read as left-symmetric.
        for (level, layout) in [(RaidLevel::Raid5, 9), (RaidLevel::Raid6, 18)] {
            let b = ArrayBytes {
                level,
                layout,
                chunk,
                slots: ms.iter().map(|m| Some((m as &dyn Bytes, 8u64))).collect(),
                component: 4 * chunk,
            };
            let e = b.read_at(&mut all, 0).unwrap_err();
            assert!(e.contains("which bootbench does not map"), "{level} {layout}: {e}");
        }
    }

    /// A disk's partitions from sysfs: the entries with a `partition`
    /// file, in name order, start and size in bytes; other entries
    /// (queue, holders) are not partitions.
    #[test]
    fn partitions_from_sysfs() {
        let t = crate::testutil::TempDir::new("parts");
        let disk = t.0.join("block/nvme0n1");
        for (p, start, size) in [("nvme0n1p2", 2050, 100), ("nvme0n1p1", 2048, 2)] {
            let d = disk.join(p);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("partition"), "1\n").unwrap();
            std::fs::write(d.join("start"), format!("{start}\n")).unwrap();
            std::fs::write(d.join("size"), format!("{size}\n")).unwrap();
        }
        std::fs::create_dir_all(disk.join("queue")).unwrap();
        assert_eq!(
            partitions(&t.0, "nvme0n1"),
            vec![
                ("nvme0n1p1".to_string(), 2048 * 512, 2 * 512),
                ("nvme0n1p2".to_string(), 2050 * 512, 100 * 512)
            ]
        );
        assert!(partitions(&t.0, "sda").is_empty());
        assert!(partitions(&t.0, "").is_empty());
    }

    /// A raid1 with its first slot missing is read from the second; a
    /// raid0 with a slot missing cannot be read there.
    #[test]
    fn missing_members() {
        let m = Mem((0..64u8).collect());
        let r1 = ArrayBytes {
            level: RaidLevel::Raid1,
            layout: 0,
            chunk: 0,
            slots: vec![None, Some((&m as &dyn Bytes, 16))],
            component: 48,
        };
        let mut b = [0u8; 4];
        r1.read_at(&mut b, 2).unwrap();
        assert_eq!(b, [18, 19, 20, 21]);
        // A member's data offset near 2^64 (from its superblock) is no
        // place on it: an error, never a wrapped read at its start.
        let far = ArrayBytes {
            level: RaidLevel::Raid1,
            layout: 0,
            chunk: 0,
            slots: vec![Some((&m as &dyn Bytes, u64::MAX - 10))],
            component: 48,
        };
        assert!(far.read_at(&mut b, 20).unwrap_err().contains("past 2^64"));
        let r0 = ArrayBytes {
            level: RaidLevel::Raid0,
            layout: 0,
            chunk: 512,
            slots: vec![Some((&m as &dyn Bytes, 0)), None],
            component: 48,
        };
        assert!(r0.read_at(&mut [0u8; 4], 512).unwrap_err().contains("missing member"));
    }
}
