//! A repair for what fatfs 0.3 writes into new directories: it gives `.` and `..` long-name (LFN)
//! entries of their own, so they are not the first two slots as the FAT specification requires
//! (fsck.fat: "Expected a valid '.' entry in this slot"), and on FAT32 it points `..` of a
//! top-level directory at the root cluster instead of 0. This walks the finished file system and
//! rewrites the head of every subdirectory to `.`, `..`, then the freed slots marked deleted.

use std::io::{Error, ErrorKind, Result};

use crate::fat::BootSector;

const ENTRY: usize = 32;
const ATTR_DIR: u8 = 0x10;
const ATTR_LFN: u8 = 0x0F;
const DELETED: u8 = 0xE5;

/// The geometry of a FAT volume, from its boot sector.
#[derive(Debug, Clone, Copy)]
struct Geometry {
    bytes_per_sector: usize,
    cluster_bytes: usize,
    fat_start: usize,
    /// Bits per FAT entry: 12, 16 or 32.
    fat_bits: u32,
    /// Byte offset of the FAT12/16 fixed root directory, and its size (0 on FAT32).
    root_start: usize,
    root_bytes: usize,
    data_start: usize,
    /// First cluster of the FAT32 root directory (0 on FAT12/16).
    root_cluster: u32,
    /// Data clusters (numbered from 2).
    clusters: usize,
    /// Byte offset of the FAT32 FSInfo sector (0 on FAT12/16).
    fsinfo: usize,
}

fn u16_at(b: &[u8], o: usize) -> usize {
    usize::from(u16::from_le_bytes([b[o], b[o + 1]]))
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
fn as_usize(v: u32) -> usize {
    usize::try_from(v).expect("usize is at least 32 bits on the hosts this tool runs on")
}

fn bad(msg: &str) -> Error {
    Error::new(ErrorKind::InvalidData, format!("FAT repair: {msg}"))
}

impl Geometry {
    /// The geometry in `vol`'s boot sector ([`BootSector`]: the FAT type by its cluster count),
    /// refused unless the whole volume it describes is in `vol`.
    fn read(vol: &[u8]) -> Result<Self> {
        let b = BootSector::read(vol).map_err(|e| bad(&e.to_string()))?;
        // Every offset below is inside the volume the boot sector describes.
        let whole = b.total_sectors.checked_mul(b.bytes_per_sector);
        if whole.is_none_or(|bytes| usize::try_from(bytes).map_or(true, |bytes| bytes > vol.len())) {
            return Err(bad("the boot sector describes a volume larger than the partition"));
        }
        let size = |v: u64| usize::try_from(v).map_err(|_| bad("volume larger than memory"));
        Ok(Self {
            bytes_per_sector: size(b.bytes_per_sector)?,
            cluster_bytes: size(b.cluster_bytes())?,
            fat_start: size(b.fat_start(0))?,
            fat_bits: b.fat_type.bits(),
            root_start: size(b.root_start())?,
            root_bytes: size(b.root_bytes())?,
            data_start: size(b.data_start())?,
            root_cluster: b.root_cluster,
            clusters: size(b.clusters)?,
            fsinfo: size(b.fsinfo_sector * b.bytes_per_sector)?,
        })
    }

    fn cluster_range(&self, c: u32) -> std::ops::Range<usize> {
        let start = self.data_start + (as_usize(c) - 2) * self.cluster_bytes;
        start..start + self.cluster_bytes
    }

    /// The next cluster in the chain, or None at its end.
    fn next(&self, vol: &[u8], c: u32) -> Option<u32> {
        let c = as_usize(c);
        let (v, end) = match self.fat_bits {
            12 => {
                let o = self.fat_start + c * 3 / 2;
                let pair = u16_at(vol, o);
                let v = if c % 2 == 0 { pair & 0xFFF } else { pair >> 4 };
                (u32::try_from(v).ok()?, 0xFF8)
            }
            16 => (u32::try_from(u16_at(vol, self.fat_start + c * 2)).ok()?, 0xFFF8),
            _ => (u32_at(vol, self.fat_start + c * 4) & 0x0FFF_FFFF, 0x0FFF_FFF8),
        };
        (v >= 2 && v < end).then_some(v)
    }

    /// Byte ranges of a directory: the fixed root (cluster 0 on FAT12/16) or a cluster chain.
    fn dir_ranges(&self, vol: &[u8], first: u32) -> Result<Vec<std::ops::Range<usize>>> {
        if first == 0 {
            return Ok(std::iter::once(self.root_start..self.root_start + self.root_bytes).collect());
        }
        let mut out = Vec::new();
        let mut c = Some(first);
        while let Some(cl) = c {
            if out.len() > vol.len() / self.cluster_bytes {
                return Err(bad("cluster chain loops"));
            }
            let r = self.cluster_range(cl);
            if r.end > vol.len() {
                return Err(bad("cluster outside the volume"));
            }
            out.push(r);
            c = self.next(vol, cl);
        }
        Ok(out)
    }
}

fn first_cluster(e: &[u8]) -> u32 {
    (u32::from(u16::from_le_bytes([e[20], e[21]])) << 16) | u32::from(u16::from_le_bytes([e[26], e[27]]))
}

fn set_first_cluster(e: &mut [u8], c: u32) {
    let [a, b, hi_a, hi_b] = c.to_le_bytes();
    e[20..22].copy_from_slice(&[hi_a, hi_b]);
    e[26..28].copy_from_slice(&[a, b]);
}

/// Rewrites every subdirectory so `.` and `..` are its first two entries with no LFN entries, and
/// `..` of a top-level directory points at cluster 0.
pub fn fix_dot_entries(vol: &mut [u8]) -> Result<()> {
    let g = Geometry::read(vol)?;
    debug_assert!(g.bytes_per_sector >= 512);
    let root = g.root_cluster; // 0 on FAT12/16: the fixed root
    let mut stack = vec![root];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        seen += 1;
        if seen > vol.len() / ENTRY {
            return Err(bad("directory tree loops"));
        }
        // Collect the subdirectories of `dir`.
        for r in g.dir_ranges(vol, dir)? {
            for e in vol[r].chunks(ENTRY) {
                if e[0] == 0 {
                    break;
                }
                if e[0] == DELETED || e[11] == ATTR_LFN || e[11] & ATTR_DIR == 0 || e[0] == b'.' {
                    continue;
                }
                stack.push(first_cluster(e));
            }
        }
        if dir == root {
            continue;
        }
        // The head of this subdirectory: find its `.` and `..` short entries, put them first.
        let head = g.cluster_range(dir);
        let slots = vol[head.clone()].chunks(ENTRY).count();
        let find = |vol: &[u8], name: &[u8; 11]| {
            (0..slots).find(|&i| {
                let e = &vol[head.start + i * ENTRY..][..ENTRY];
                e[11] != ATTR_LFN && e[0] != DELETED && &e[..11] == name
            })
        };
        let dot = find(vol, b".          ").ok_or_else(|| bad("directory without '.'"))?;
        let dotdot = find(vol, b"..         ").ok_or_else(|| bad("directory without '..'"))?;
        // fatfs writes them first; anything else before them would be a real entry: refuse.
        for i in 0..=dot.max(dotdot) {
            let attr = vol[head.start + i * ENTRY + 11];
            if i != dot && i != dotdot && attr != ATTR_LFN {
                return Err(bad("an entry precedes '.' or '..'"));
            }
        }
        let mut dot_e = vol[head.start + dot * ENTRY..][..ENTRY].to_vec();
        let mut dotdot_e = vol[head.start + dotdot * ENTRY..][..ENTRY].to_vec();
        set_first_cluster(&mut dot_e, dir);
        if first_cluster(&dotdot_e) == root {
            set_first_cluster(&mut dotdot_e, 0);
        }
        // Slots before the later of the two held only the dot entries and their LFNs.
        for i in 0..=dot.max(dotdot) {
            let e = &mut vol[head.start + i * ENTRY..][..ENTRY];
            match i {
                0 => e.copy_from_slice(&dot_e),
                1 => e.copy_from_slice(&dotdot_e),
                _ => {
                    e.fill(0);
                    e[0] = DELETED;
                }
            }
        }
    }
    if g.fat_bits == 32 {
        set_fsinfo_free(vol, &g);
    }
    Ok(())
}

/// Records the free cluster count in the FAT32 FSInfo sector (fatfs leaves it "unknown").
fn set_fsinfo_free(vol: &mut [u8], g: &Geometry) {
    let fsinfo = g.fsinfo;
    if fsinfo == 0 || &vol[fsinfo..fsinfo + 4] != b"RRaA" {
        return;
    }
    let free = (2..g.clusters + 2)
        .filter(|&c| u32_at(vol, g.fat_start + c * 4) & 0x0FFF_FFFF == 0)
        .count();
    if let Ok(free) = u32::try_from(free) {
        vol[fsinfo + 488..fsinfo + 492].copy_from_slice(&free.to_le_bytes());
    }
}
