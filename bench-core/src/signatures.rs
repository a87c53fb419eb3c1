//! The signature scan: which data structures a target holds, from the
//! places their on-disk formats put them.
//!
//! The list is util-linux libblkid's (its `superblocks/` and `partitions/`
//! probes: magic, offset, and for formats at the end of a disk the offset
//! from the end), written here as data: a table of [`Probe`]s, each a name,
//! the places its magic may sit (from the start, from the end, or computed
//! from the size) and the magic strings, with a second check only where a
//! magic of one or two bytes would otherwise match ordinary data, or where
//! libblkid makes one that costs nothing. A few formats need code of their
//! own (ZFS labels and uberblocks, the XFS external log, the UDF volume
//! recognition sequence).
//!
//! This is a safety check, not an identification: where libblkid needs a
//! checksum to tell a format from a look-alike, a magic in place is enough
//! here to refuse a write (the user can still allow overwriting), so the
//! checks below are cheap field checks, never parsers.
//!
//! Left out of libblkid's list, and why:
//! - `luks_opal` (a LUKS2 header on an OPAL-locked drive): its header at
//!   byte 0 is found as LUKS; the lock query needs an ioctl, not bytes.
//! - `atari` partition tables: no magic, only heuristics over partition
//!   entries that ordinary data would match.
//! - `dasd` (s390 DASD labels): needs the device's geometry ioctls, and
//!   bootbench runs on x86_64.
//! - zoned btrfs' superblock at the start of zone 1, and the zone-relative
//!   places of other zoned formats: the zone size needs BLKREPORTZONE
//!   (zone 0's copy, at byte 64, is checked).
//! - ISO9660/UDF sessions after the first (libblkid's `session_offset`
//!   hint comes from a CD-ROM ioctl): optical media only.
//! - `minix`, `unixware`, `solaris_x86` and `bsd` nested partition tables
//!   inside a DOS partition: the DOS table that holds them is refused
//!   first. (Their places on a whole disk, where there is no DOS table, are
//!   checked.)
//! - BitLocker To Go's magic (`EB 58 90 "MSWIN4.1"`): it is the boot sector
//!   of every FAT32 volume Windows formats, which the FAT32 probe refuses;
//!   libblkid tells them apart only by parsing the FVE metadata.
//!
//! Beyond libblkid: btrfs' superblock mirrors at 64 MiB and 256 GiB (a
//! btrfs whose first superblock was wiped is still recoverable from them),
//! the GPT backup header for 4096-byte blocks as well as 512, and the
//! end-of-disk RAID formats for the device's logical block size as well as
//! the 512-byte sectors libblkid assumes.
//!
//! Everything here is pure (no I/O): [`read_plan`] says which byte ranges
//! to read, [`scan`] looks at them. So the unit tests and the fuzz target
//! (`fuzz/fuzz_targets/signatures.rs`) run it on memory, and the same code
//! guards PID 1's write grants and `bootbench-image flash`.

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

/// A data structure found on a target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// What it is (`GPT partition table`, `ext2/3/4 filesystem`, ...).
    pub what: &'static str,
    /// Byte offset of the magic from the start of the target.
    pub offset: u64,
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (magic at byte {})", self.what, self.offset)
    }
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

/// Bytes read from the start of a target: every start-anchored probe but
/// the windows below (the deepest are UFS at 256 KiB + 1372 and ZFS's
/// second label, which ends at 512 KiB).
pub const HEAD: u64 = MIB;
/// Bytes read from the end: Promise's metadata sits up to 3087 sectors
/// (1.5 MiB) before the end, ZFS's last two labels in the last 768 KiB,
/// bcachefs' last superblock 1 MiB before it.
pub const TAIL: u64 = 2 * MIB;
/// Fixed places beyond [`HEAD`] read as one [`WINDOW`] each: LUKS2
/// secondary headers (1, 2, 4 MiB), VMFS (1 and 2 MiB), bcachefs' second
/// superblock (2 MiB), btrfs' superblock mirrors (64 MiB, 256 GiB).
pub const WINDOWS: [u64; 5] = [MIB, 2 * MIB, 4 * MIB, 64 * MIB, 256 << 30];
/// Length of each window.
pub const WINDOW: u64 = 4 * KIB;
/// Every range the plan reads starts at a multiple of this (O_DIRECT).
pub const ALIGN: u64 = 4096;

/// The byte ranges (`start`, `len`) of a target of `size` bytes that
/// [`scan`] looks at: the first [`HEAD`] bytes, the last [`TAIL`] (from a
/// multiple of [`ALIGN`]), and the [`WINDOWS`] inside the target, sorted,
/// overlaps merged.
pub fn read_plan(size: u64) -> Vec<(u64, u64)> {
    let tail_start = size.saturating_sub(TAIL) & !(ALIGN - 1);
    let mut ranges: Vec<(u64, u64)> = vec![(0, HEAD.min(size)), (tail_start, size - tail_start)];
    for w in WINDOWS {
        if w < size {
            ranges.push((w, WINDOW.min(size - w)));
        }
    }
    merge(ranges)
}

/// Sort `(start, len)` ranges and merge those that overlap or touch;
/// empty ones are dropped.
pub fn merge(mut ranges: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    ranges.retain(|r| r.1 > 0);
    ranges.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (start, len) in ranges {
        if let Some(last) = out.last_mut() {
            let last_end = last.0 + last.1;
            if start <= last_end {
                last.1 = last_end.max(start + len) - last.0;
                continue;
            }
        }
        out.push((start, len));
    }
    out
}

/// The bytes of a target that were read: some ranges of a target of `size`
/// bytes whose logical block size is `logical_block`.
#[derive(Clone, Debug)]
pub struct Regions<'a> {
    size: u64,
    logical_block: u32,
    parts: Vec<(u64, &'a [u8])>,
}

impl<'a> Regions<'a> {
    /// `parts` are (offset, bytes) pairs; bytes past `size` are ignored.
    pub fn new(size: u64, logical_block: u32, parts: Vec<(u64, &'a [u8])>) -> Regions<'a> {
        Regions {
            size,
            logical_block,
            parts,
        }
    }

    /// The target's size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// `len` bytes at `offset`, if they lie inside the target and were read.
    pub fn get(&self, offset: u64, len: usize) -> Option<&'a [u8]> {
        let end = offset.checked_add(u64::try_from(len).ok()?)?;
        if end > self.size {
            return None;
        }
        self.parts.iter().find_map(|&(start, bytes)| {
            let rel = usize::try_from(offset.checked_sub(start)?).ok()?;
            bytes.get(rel..rel.checked_add(len)?)
        })
    }

    fn is(&self, offset: u64, magic: &[u8]) -> bool {
        self.get(offset, magic.len()) == Some(magic)
    }

    fn array<const N: usize>(&self, offset: u64) -> Option<[u8; N]> {
        self.get(offset, N)?.try_into().ok()
    }

    fn le16(&self, offset: u64) -> Option<u16> {
        self.array(offset).map(u16::from_le_bytes)
    }

    fn be16(&self, offset: u64) -> Option<u16> {
        self.array(offset).map(u16::from_be_bytes)
    }

    fn le32(&self, offset: u64) -> Option<u32> {
        self.array(offset).map(u32::from_le_bytes)
    }

    fn be32(&self, offset: u64) -> Option<u32> {
        self.array(offset).map(u32::from_be_bytes)
    }

    fn le64(&self, offset: u64) -> Option<u64> {
        self.array(offset).map(u64::from_le_bytes)
    }
}

/// Where a magic sits.
#[derive(Clone, Copy, Debug)]
enum At {
    /// This many bytes from the start.
    Start(u64),
    /// This many bytes before the end (libblkid's negative `kboff`).
    End(u64),
    /// In the `back`-th 512-byte sector counted from the end (1: the last
    /// whole one), `plus` bytes into it: libblkid's
    /// `((size / 0x200) - back) * 0x200`.
    Sector { back: u64, plus: u64 },
    /// As `Sector`, for 512-byte sectors and for the device's logical
    /// blocks (4Kn disks put firmware RAID metadata and the GPT backup
    /// header in their last 4096-byte blocks); also for 4096-byte blocks
    /// when `always_4k`.
    Block { back: u64, plus: u64, always_4k: bool },
    /// Computed from the size (`None`: the device is too small).
    Calc(fn(u64) -> Option<u64>),
}

impl At {
    /// The offsets this place stands for on a target of `size` bytes with
    /// logical blocks of `lb` bytes.
    fn resolve(self, size: u64, lb: u64, out: &mut Vec<u64>) {
        let back_from_end = |bs: u64, back: u64, plus: u64| -> Option<u64> {
            let blocks = size / bs;
            blocks.checked_sub(back)?.checked_mul(bs)?.checked_add(plus)
        };
        match self {
            At::Start(o) => out.push(o),
            At::End(n) => out.extend(size.checked_sub(n)),
            At::Sector { back, plus } => out.extend(back_from_end(512, back, plus)),
            At::Block { back, plus, always_4k } => {
                for bs in [512, lb, if always_4k { 4096 } else { 512 }] {
                    if bs >= 512 {
                        out.extend(back_from_end(bs, back, plus));
                    }
                }
            }
            At::Calc(f) => out.extend(f(size)),
        }
    }
}

/// A second check, given the target's bytes and the offset where the
/// magic matched.
type Check = fn(&Regions<'_>, u64) -> bool;

/// One format: found where any of `magics` sits at any of `at` and `check`
/// (if any) agrees.
struct Probe {
    what: &'static str,
    at: &'static [At],
    magics: &'static [&'static [u8]],
    check: Option<Check>,
}

const fn p(what: &'static str, at: &'static [At], magics: &'static [&'static [u8]]) -> Probe {
    Probe {
        what,
        at,
        magics,
        check: None,
    }
}

const fn pc(what: &'static str, at: &'static [At], magics: &'static [&'static [u8]], check: Check) -> Probe {
    Probe {
        what,
        at,
        magics,
        check: Some(check),
    }
}

use At::{Block, Calc, End, Sector, Start};

/// md superblock magic 0xa92b4efc, little-endian (0.90 is host-endian: on
/// a big-endian machine's disk it is the other way round).
pub const MD_MAGIC: [u8; 4] = 0xa92b_4efc_u32.to_le_bytes();
const MD_MAGIC_BE: [u8; 4] = 0xa92b_4efc_u32.to_be_bytes();

/// md 0.90: the last 64 KiB-aligned 64 KiB block (md.h MD_NEW_SIZE_SECTORS).
fn md_090(size: u64) -> Option<u64> {
    const K64: u64 = 64 * KIB;
    if size < 2 * K64 {
        return None;
    }
    Some((size & !(K64 - 1)) - K64)
}

/// md 1.0: 8 KiB before the end, rounded down to 4 KiB (super_1_load).
fn md_10(size: u64) -> Option<u64> {
    if size < 16 * KIB {
        return None;
    }
    Some((size - 8 * KIB) & !(4 * KIB - 1))
}

/// DRBD's internal metadata in the last 4 KiB-aligned 4 KiB block, magic
/// at byte 60 of it (libblkid assumes the size is a multiple of 4 KiB and
/// looks at size - 4096; this covers the other sizes).
fn drbd_aligned(size: u64) -> Option<u64> {
    (size & !(4 * KIB - 1)).checked_sub(4 * KIB).map(|o| o + 60)
}

fn mbr_entries_used(r: &Regions<'_>, _: u64) -> bool {
    r.get(446, 64).is_some_and(|e| e.iter().any(|&b| b != 0))
}

fn mbr_entries_empty(r: &Regions<'_>, at: u64) -> bool {
    !mbr_entries_used(r, at)
}

fn boot_signature(r: &Regions<'_>, _: u64) -> bool {
    r.is(510, &[0x55, 0xAA])
}

/// Sun disk label: the XOR of its 256 big-endian words is zero.
fn sun_checksum(r: &Regions<'_>, _: u64) -> bool {
    r.get(0, 512).is_some_and(|b| {
        b.chunks_exact(2)
            .fold(0u16, |x, w| x ^ u16::from_be_bytes([w[0], w[1]]))
            == 0
    })
}

/// Apple partition map: the driver descriptor's block size, then a
/// partition map entry ("PM") at the start of block 1.
fn mac_map(r: &Regions<'_>, _: u64) -> bool {
    r.be16(2)
        .is_some_and(|bs| (512..=4096).contains(&bs) && r.is(u64::from(bs), b"PM"))
}

/// Ultrix: pt_valid (the word after the magic) is 1.
fn ultrix_valid(r: &Regions<'_>, at: u64) -> bool {
    r.le32(at + 4) == Some(1)
}

/// JMicron: the 64 little-endian words of the 128-byte record sum to 0 or
/// 1, and the RAID level is at most 5.
fn jmicron(r: &Regions<'_>, at: u64) -> bool {
    let Some(b) = r.get(at, 128) else { return false };
    let sum = b
        .chunks_exact(2)
        .fold(0u16, |s, w| s.wrapping_add(u16::from_le_bytes([w[0], w[1]])));
    sum <= 1 && b[48] <= 5
}

/// VIA: version at most 2 and the 8-bit sum of the first 50 bytes in byte 50.
fn via(r: &Regions<'_>, at: u64) -> bool {
    let Some(b) = r.get(at, 51) else { return false };
    b[2] <= 2 && b[..50].iter().fold(0u8, |s, &x| s.wrapping_add(x)) == b[50]
}

/// Silicon Image: magic at byte 96 of the sector; disk number under 8 and
/// checksum1 (the negated sum of the 159 words before it).
fn silicon(r: &Regions<'_>, at: u64) -> bool {
    let Some(b) = at.checked_sub(96).and_then(|s| r.get(s, 320)) else {
        return false;
    };
    let sum = b[..318]
        .chunks_exact(2)
        .fold(0u16, |s, w| s.wrapping_add(u16::from_le_bytes([w[0], w[1]])));
    b[278] < 8 && sum.wrapping_neg() == u16::from_le_bytes([b[318], b[319]])
}

/// NVIDIA: the record's length field is 30 words.
fn nvidia(r: &Regions<'_>, at: u64) -> bool {
    r.le32(at + 8) == Some(30)
}

/// Adaptec: "DPTM" at byte 256 as well as the magic at 0.
fn adaptec(r: &Regions<'_>, at: u64) -> bool {
    r.is(at + 256, b"DPTM")
}

/// NILFS2: revision level 2 and a sane superblock length (at 6 and 8
/// bytes from the magic's superblock start, which is 6 before the magic).
fn nilfs(r: &Regions<'_>, at: u64) -> bool {
    let sb = at - 6;
    r.le32(sb) == Some(2) && r.le16(sb + 8).is_some_and(|n| (20..=1024).contains(&n))
}

/// NILFS2's backup superblock also records the device size.
fn nilfs_backup(r: &Regions<'_>, at: u64) -> bool {
    nilfs(r, at) && r.le64(at - 6 + 32) == Some(r.size())
}

/// HFS: a non-zero allocation block size, a multiple of 512.
fn hfs(r: &Regions<'_>, at: u64) -> bool {
    r.be32(at + 20).is_some_and(|s| s != 0 && s % 512 == 0)
}

/// HFS+/HFSX: version 4 or 5, and a power-of-two block size of 512 or more.
fn hfsplus(r: &Regions<'_>, at: u64) -> bool {
    r.be16(at + 2).is_some_and(|v| v == 4 || v == 5) && r.be32(at + 40).is_some_and(|s| s >= 512 && s.is_power_of_two())
}

/// Minix: a zero log zone size and a non-zero inode count, in either
/// byte order (v1/v2: magic 16 bytes into the superblock, v3: 24).
fn minix(r: &Regions<'_>, at: u64) -> bool {
    let sb = 1024;
    if at == sb + 16 {
        r.le16(sb + 10) == Some(0) && r.le16(sb).is_some_and(|n| n != 0)
    } else {
        r.le16(sb + 12) == Some(0) && r.le32(sb).is_some_and(|n| n != 0)
    }
}

/// LVM1: label version 1 or 2.
fn lvm1(r: &Regions<'_>, at: u64) -> bool {
    r.le16(at + 2).is_some_and(|v| v == 1 || v == 2)
}

/// Apple Core Storage: version 1 and checksum algorithm 1.
fn core_storage(r: &Regions<'_>, at: u64) -> bool {
    let sb = at - 88;
    r.le16(sb + 8) == Some(1) && r.le32(sb + 90) == Some(1)
}

/// The formats, in the order their hits are reported: partition tables,
/// RAID and volume managers, encryption and block layers, filesystems.
static PROBES: &[Probe] = &[
    // ---- partition tables (libblkid partitions/)
    pc("MBR partition table", &[Start(510)], &[&[0x55, 0xAA]], mbr_entries_used),
    pc("MBR boot signature", &[Start(510)], &[&[0x55, 0xAA]], mbr_entries_empty),
    p("GPT partition table", &[Start(512), Start(4096)], &[b"EFI PART"]),
    // The backup header in the last logical block, found also when the
    // primary and the protective MBR are gone.
    p(
        "GPT backup header",
        &[Block {
            back: 1,
            plus: 0,
            always_4k: true,
        }],
        &[b"EFI PART"],
    ),
    p("SGI disk label", &[Start(0)], &[b"\x0B\xE5\xA9\x41"]),
    pc("Sun disk label", &[Start(508)], &[b"\xDA\xBE"], sun_checksum),
    p("AIX disk label", &[Start(0)], &[b"\xC9\xC2\xD4\xC1"]),
    p(
        "BSD disk label",
        &[Start(512), Start(64), Start(128)],
        &[b"\x57\x45\x56\x82"],
    ),
    p("Solaris x86 VTOC", &[Start(512 + 12)], &[b"\xEE\xDE\x0D\x60"]),
    p("UnixWare VTOC", &[Start(29 * 512 + 4)], &[b"\x0D\x60\xE5\xCA"]),
    pc("Apple partition map", &[Start(0)], &[b"ER"], mac_map),
    pc(
        "Ultrix disk label",
        &[Start(31 * 512 + 440)],
        &[b"\x57\x29\x03\x00"],
        ultrix_valid,
    ),
    // ---- software RAID (libblkid linux_raid.c)
    p("md superblock v1.1", &[Start(0)], &[&MD_MAGIC]),
    p("md superblock v1.2", &[Start(4096)], &[&MD_MAGIC]),
    p("md superblock v0.90", &[Calc(md_090)], &[&MD_MAGIC, &MD_MAGIC_BE]),
    p("md superblock v1.0", &[Calc(md_10)], &[&MD_MAGIC]),
    // ---- firmware RAID, at the end of the disk
    p(
        "SNIA DDF RAID metadata",
        &[
            Block {
                back: 1,
                plus: 0,
                always_4k: false,
            },
            Block {
                back: 257,
                plus: 0,
                always_4k: false,
            },
        ],
        &[b"\xDE\x11\xDE\x11"],
    ),
    p(
        "Intel IMSM/VROC RAID metadata",
        &[Block {
            back: 2,
            plus: 0,
            always_4k: false,
        }],
        &[b"Intel Raid ISM Cfg Sig. "],
    ),
    p(
        "LSI MegaRAID metadata",
        &[Block {
            back: 1,
            plus: 0,
            always_4k: false,
        }],
        &[b"$XIDE$"],
    ),
    p(
        "Promise FastTrak RAID metadata",
        &[
            Sector { back: 63, plus: 0 },
            Sector { back: 255, plus: 0 },
            Sector { back: 256, plus: 0 },
            Sector { back: 16, plus: 0 },
            Sector { back: 399, plus: 0 },
            Sector { back: 591, plus: 0 },
            Sector { back: 675, plus: 0 },
            Sector { back: 735, plus: 0 },
            Sector { back: 911, plus: 0 },
            Sector { back: 974, plus: 0 },
            Sector { back: 991, plus: 0 },
            Sector { back: 951, plus: 0 },
            Sector { back: 3087, plus: 0 },
        ],
        &[b"Promise Technology, Inc."],
    ),
    pc(
        "NVIDIA RAID metadata",
        &[Block {
            back: 2,
            plus: 0,
            always_4k: false,
        }],
        &[b"NVIDIA  "],
        nvidia,
    ),
    pc(
        "Silicon Image RAID metadata",
        &[Block {
            back: 1,
            plus: 96,
            always_4k: false,
        }],
        &[b"\x00\x00\x00\x2F"],
        silicon,
    ),
    pc(
        "VIA RAID metadata",
        &[Block {
            back: 1,
            plus: 0,
            always_4k: false,
        }],
        &[b"\x55\xAA"],
        via,
    ),
    pc(
        "JMicron RAID metadata",
        &[Block {
            back: 1,
            plus: 0,
            always_4k: false,
        }],
        &[b"JM"],
        jmicron,
    ),
    pc(
        "Adaptec RAID metadata",
        &[Block {
            back: 1,
            plus: 0,
            always_4k: false,
        }],
        &[b"\x37\xFC\x4D\x1E"],
        adaptec,
    ),
    p(
        "HighPoint RAID metadata",
        &[
            Block {
                back: 11,
                plus: 0,
                always_4k: false,
            },
            Start(4608 + 32),
        ],
        &[b"\xF3\x16\x78\x5A", b"\xFD\x16\x78\x5A", b"\xF0\x16\x78\x5A"],
    ),
    // ---- volume managers, caches, block layers
    p(
        "LVM2 physical volume",
        &[Start(0), Start(512), Start(1024), Start(1536)],
        &[b"LABELONE"],
    ),
    p(
        "LVM2 physical volume header",
        &[Start(0x18), Start(0x218), Start(0x418), Start(0x618)],
        &[b"LVM2 001"],
    ),
    pc("LVM1 physical volume", &[Start(0)], &[b"HM"], lvm1),
    p("LVM snapshot COW store", &[Start(0)], &[b"SnAp"]),
    p(
        "bcache superblock",
        &[Start(4096 + 24)],
        &[b"\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81"],
    ),
    p(
        "bcachefs superblock",
        &[Start(4096 + 24), Start(2 * MIB + 24), End(MIB - 24)],
        &[b"\xc6\x85\x73\xf6\x66\xce\x90\xa9\xd9\x6a\x60\xcf\x80\x3d\xf7\xef"],
    ),
    p("Ceph BlueStore label", &[Start(0)], &[b"bluestore block device"]),
    p(
        "DRBD metadata",
        &[End(4096 - 60), Calc(drbd_aligned)],
        &[b"\x83\x74\x02\x6b", b"\x83\x74\x02\x6c", b"\x83\x74\x02\x6d"],
    ),
    p("DRBD manage control volume", &[Start(0)], &[b"$DRBDmgr=q"]),
    p("DRBD proxy data log", &[Start(0)], &[b"DRBDdlh*"]),
    p("dm-verity hash device", &[Start(0)], &[b"verity\0\0"]),
    p("dm-integrity superblock", &[Start(0)], &[b"integrt\0"]),
    p("VDO volume", &[Start(0)], &[b"dmvdo001"]),
    p(
        "Stratis block device",
        &[Start(512 + 4), Start(9 * 512 + 4)],
        &[b"!Stra0tis\x86\xff\x02^\x41rh"],
    ),
    p("VMFS volume", &[Start(MIB)], &[b"\x0d\xd0\x01\xc0"]),
    p("UBI volume", &[Start(0)], &[b"UBI#"]),
    p("mpool device", &[Start(0)], &[b"mpoolDev"]),
    p("Oracle ASM disk", &[Start(32)], &[b"ORCLDISK"]),
    // ---- encryption
    p("LUKS header", &[Start(0)], &[b"LUKS\xba\xbe"]),
    p(
        "LUKS2 secondary header",
        &[
            Start(0x4000),
            Start(0x8000),
            Start(0x1_0000),
            Start(0x2_0000),
            Start(0x4_0000),
            Start(0x8_0000),
            Start(0x10_0000),
            Start(0x20_0000),
            Start(0x40_0000),
        ],
        &[b"SKUL\xba\xbe"],
    ),
    p(
        "BitLocker volume",
        &[Start(0)],
        &[b"\xeb\x52\x90-FVE-FS-", b"\xeb\x58\x90-FVE-FS-"],
    ),
    pc("Apple Core Storage volume", &[Start(88)], &[b"CS"], core_storage),
    // ---- swap and hibernation images
    p(
        "Linux swap",
        &[Start(0xff6), Start(0x1ff6), Start(0x3ff6), Start(0x7ff6), Start(0xfff6)],
        &[b"SWAPSPACE2", b"SWAP-SPACE"],
    ),
    p(
        "hibernation image",
        &[Start(0xff6), Start(0x1ff6), Start(0x3ff6), Start(0x7ff6), Start(0xfff6)],
        &[b"S1SUSPEND", b"S2SUSPEND", b"ULSUSPEND", b"LINHIB0001"],
    ),
    p(
        "TuxOnIce hibernation image",
        &[Start(0)],
        &[b"\xed\xc3\x02\xe9\x98\x56\xe5\x0c"],
    ),
    // ---- filesystems
    p("ext2/3/4 filesystem", &[Start(1080)], &[b"\x53\xEF"]),
    p("XFS filesystem", &[Start(0)], &[b"XFSB"]),
    p("btrfs filesystem", &[Start(65600), Start(64)], &[b"_BHRfS_M"]),
    p(
        "btrfs superblock mirror",
        &[Start(64 * MIB + 64), Start((256 << 30) + 64)],
        &[b"_BHRfS_M"],
    ),
    pc(
        "FAT12/16 filesystem",
        &[Start(54)],
        &[b"FAT12   ", b"FAT16   ", b"FAT     ", b"MSDOS"],
        boot_signature,
    ),
    pc(
        "FAT32 filesystem",
        &[Start(82)],
        &[b"FAT32   ", b"MSWIN"],
        boot_signature,
    ),
    p("NTFS filesystem", &[Start(3)], &[b"NTFS    "]),
    p("exFAT filesystem", &[Start(3)], &[b"EXFAT   "]),
    p("ReFS filesystem", &[Start(0)], &[b"\0\0\0ReFS\0"]),
    p("ISO9660 filesystem", &[Start(32769)], &[b"CD001"]),
    p("High Sierra filesystem", &[Start(32768 + 9)], &[b"CDROM"]),
    p("JFS filesystem", &[Start(32768)], &[b"JFS1"]),
    p(
        "ReiserFS filesystem",
        &[Start(8192 + 0x34), Start(65536 + 0x34), Start(8192 + 20)],
        &[b"ReIsErFs", b"ReIsEr2Fs", b"ReIsEr3Fs"],
    ),
    p("Reiser4 filesystem", &[Start(65536)], &[b"ReIsEr4"]),
    p("F2FS filesystem", &[Start(1024)], &[b"\x10\x20\xF5\xF2"]),
    p("EROFS filesystem", &[Start(1024)], &[b"\xe2\xe1\xf5\xe0"]),
    pc("NILFS2 filesystem", &[Start(1024 + 6)], &[b"\x34\x34"], nilfs),
    pc(
        "NILFS2 backup superblock",
        &[Sector { back: 8, plus: 6 }],
        &[b"\x34\x34"],
        nilfs_backup,
    ),
    pc("HFS filesystem", &[Start(1024)], &[b"BD"], hfs),
    pc("HFS+ filesystem", &[Start(1024)], &[b"H+", b"HX"], hfsplus),
    p("APFS container", &[Start(32)], &[b"NXSB"]),
    p(
        "UFS filesystem",
        &[
            Start(1372),
            Start(8192 + 1372),
            Start(65536 + 1372),
            Start(262_144 + 1372),
        ],
        &[
            &0x0001_1954_u32.to_le_bytes(),
            &0x0001_1954_u32.to_be_bytes(),
            &0x1954_0119_u32.to_le_bytes(),
            &0x1954_0119_u32.to_be_bytes(),
            &0x0019_5612_u32.to_le_bytes(),
            &0x0019_5612_u32.to_be_bytes(),
            &0x0009_5014_u32.to_le_bytes(),
            &0x0009_5014_u32.to_be_bytes(),
            &0x0061_2195_u32.to_le_bytes(),
            &0x0061_2195_u32.to_be_bytes(),
            &0x0523_1994_u32.to_le_bytes(),
            &0x0523_1994_u32.to_be_bytes(),
        ],
    ),
    p("HPFS filesystem", &[Start(0x2000)], &[b"\x49\xe8\x95\xf9"]),
    p(
        "System V filesystem",
        &[
            Start(1016),
            Start(9 * 1024 + 1016),
            Start(15 * 1024 + 1016),
            Start(18 * 1024 + 1016),
        ],
        &[b"\x20\x7e\x18\xfd", b"\xfd\x18\x7e\x20"],
    ),
    // libblkid looks at 2048; the superblock's s_magic field is at 2040.
    p(
        "Xenix filesystem",
        &[Start(2048), Start(1024 + 1016)],
        &[b"\x2b\x55\x44", b"\x44\x55\x2b"],
    ),
    p(
        "cramfs filesystem",
        &[Start(0)],
        &[b"\x45\x3d\xcd\x28", b"\x28\xcd\x3d\x45"],
    ),
    p("romfs filesystem", &[Start(0)], &[b"-rom1fs-"]),
    p("ScoutFS filesystem", &[Start(65536 + 4)], &[b"\x8b\x42\x3c\x10"]),
    pc(
        "Minix filesystem",
        &[Start(1024 + 16)],
        &[
            b"\x7f\x13",
            b"\x8f\x13",
            b"\x13\x7f",
            b"\x13\x8f",
            b"\x68\x24",
            b"\x78\x24",
            b"\x24\x68",
            b"\x24\x78",
        ],
        minix,
    ),
    pc(
        "Minix filesystem",
        &[Start(1024 + 24)],
        &[b"\x5a\x4d", b"\x4d\x5a"],
        minix,
    ),
    p("GFS/GFS2 filesystem", &[Start(65536)], &[b"\x01\x16\x19\x70"]),
    p("OCFS filesystem", &[Start(8192)], &[b"OracleCFS"]),
    p(
        "OCFS2 filesystem",
        &[Start(1024), Start(2048), Start(4096), Start(8192)],
        &[b"OCFSV2"],
    ),
    p("VxFS filesystem", &[Start(1024)], &[b"\xf5\xfc\x01\xa5"]),
    p("VxFS filesystem", &[Start(8192)], &[b"\xa5\x01\xfc\xf5"]),
    p("SquashFS filesystem", &[Start(0)], &[b"hsqs", b"sqsh"]),
    p("NetWare filesystem", &[Start(4096)], &[b"SPB5"]),
    p("UBIFS filesystem", &[Start(0)], &[b"\x31\x18\x10\x06"]),
    p("BFS filesystem", &[Start(0)], &[b"\xce\xfa\xad\x1b"]),
    p("BeFS filesystem", &[Start(32), Start(512 + 32)], &[b"BFS1", b"1SFB"]),
    p("VMFS filesystem", &[Start(2 * MIB)], &[b"\x5e\xf1\xab\x2f"]),
    p("EXFS filesystem", &[Start(0)], &[b"EXFS"]),
    p("zonefs filesystem", &[Start(0)], &[b"SFOZ"]),
];

/// ZFS vdev labels: 256 KiB each, two at the start and two at the end (the
/// end ones aligned down to 256 KiB): vdev_label_offset.
const ZFS_LABEL: u64 = 256 * KIB;

fn zfs_label_offsets(size: u64) -> Vec<u64> {
    let mut v = vec![0, ZFS_LABEL];
    if let Some(end) = (size - size % ZFS_LABEL).checked_sub(4 * ZFS_LABEL) {
        v.extend([end + 2 * ZFS_LABEL, end + 3 * ZFS_LABEL]);
    }
    v
}

/// A label's nvlist (16 KiB into it): XDR-encoded (1), endianness 0 or 1,
/// reserved bytes zero, nvlist version 0, then a first pair of sane length
/// whose name is a lower-case identifier ("version" in every pool).
fn zfs_nvlist(r: &Regions<'_>, at: u64) -> bool {
    let Some(h) = r.get(at, 32) else { return false };
    let be = |i: usize| u32::from_be_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
    let first = be(12);
    let namelen = usize::try_from(be(20)).unwrap_or(usize::MAX);
    h[0] == 1
        && h[1] <= 1
        && h[2] == 0
        && h[3] == 0
        && be(4) == 0
        && (16..=112 * 1024).contains(&first)
        && (1..=64).contains(&namelen)
        && r.get(at + 24, namelen).is_some_and(|n| {
            n.iter()
                .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
        })
}

/// ZFS uberblock magic 0x00bab10c as a 64-bit word in either byte order.
pub const UBERBLOCK_LE: [u8; 8] = 0x00ba_b10c_u64.to_le_bytes();
const UBERBLOCK_BE: [u8; 8] = 0x00ba_b10c_u64.to_be_bytes();

/// Each label's nvlist, and the first uberblock of its ring (128 KiB into
/// the label, slots of 1 KiB or larger powers of two: every 1 KiB is
/// looked at).
fn zfs(r: &Regions<'_>, out: &mut Vec<Signature>) {
    for label in zfs_label_offsets(r.size()) {
        let nv = label + 16 * KIB;
        if zfs_nvlist(r, nv) {
            out.push(Signature {
                what: "ZFS label",
                offset: nv,
            });
        }
        let ring = label + 128 * KIB;
        if let Some(offset) = (0..128)
            .map(|i| ring + i * KIB)
            .find(|&o| r.is(o, &UBERBLOCK_LE) || r.is(o, &UBERBLOCK_BE))
        {
            out.push(Signature {
                what: "ZFS uberblock",
                offset,
            });
        }
    }
}

/// An XFS external log: a log record header (0xFEEDBABE, a version of 1
/// or 2, a non-zero length) at the start of any of the first 512 sectors.
fn xfs_log(r: &Regions<'_>, out: &mut Vec<Signature>) {
    let found = (0..512u64).map(|i| i * 512).find(|&o| {
        r.is(o, b"\xFE\xED\xBA\xBE")
            && r.be32(o + 8).is_some_and(|v| v != 0 && v & !3 == 0)
            && r.be32(o + 12).is_some_and(|n| n != 0 && n <= 0x7fff_ffff)
    });
    if let Some(offset) = found {
        out.push(Signature {
            what: "XFS external log",
            offset,
        });
    }
}

/// The ECMA-167 volume recognition sequence (UDF): descriptors of 2048
/// bytes (or of the block size, up to 4096) from 32 KiB, each with a
/// five-letter identifier at byte 1. CD001 alone is ISO9660 (its own probe).
fn udf(r: &Regions<'_>, out: &mut Vec<Signature>) {
    const IDS: [&[u8]; 6] = [b"BEA01", b"BOOT2", b"CDW02", b"NSR02", b"NSR03", b"TEA01"];
    for step in [2048u64, 4096] {
        let found = (0..16u64)
            .map(|i| 32768 + i * step + 1)
            .find(|&o| IDS.iter().any(|id| r.is(o, id)));
        if let Some(offset) = found {
            out.push(Signature {
                what: "UDF (ECMA-167) volume",
                offset,
            });
            return;
        }
    }
}

/// Formats that need code rather than a table row.
static SPECIAL: &[fn(&Regions<'_>, &mut Vec<Signature>)] = &[zfs, xfs_log, udf];

/// The signature scan over bytes already read (see [`read_plan`]).
pub fn scan(r: &Regions<'_>) -> Vec<Signature> {
    let lb = u64::from(r.logical_block);
    let mut found = Vec::new();
    let mut offsets = Vec::new();
    for probe in PROBES {
        offsets.clear();
        for at in probe.at {
            at.resolve(r.size, lb, &mut offsets);
        }
        offsets.sort_unstable();
        offsets.dedup();
        for &offset in &offsets {
            let hit = probe.magics.iter().any(|m| r.is(offset, m)) && probe.check.is_none_or(|c| c(r, offset));
            if hit {
                found.push(Signature {
                    what: probe.what,
                    offset,
                });
            }
        }
    }
    for special in SPECIAL {
        special(r, &mut found);
    }
    found
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Every place a table row may look at on a target of `size` bytes
    /// with logical blocks of `lb` bytes, with the longest magic's length.
    pub fn places(size: u64, lb: u64) -> Vec<(&'static str, u64, usize)> {
        let mut v = Vec::new();
        for probe in PROBES {
            let mut offs = Vec::new();
            for at in probe.at {
                at.resolve(size, lb, &mut offs);
            }
            let len = probe.magics.iter().map(|m| m.len()).max().unwrap_or(0);
            v.extend(offs.into_iter().map(|o| (probe.what, o, len)));
        }
        v
    }

    #[test]
    fn the_plan_reads_every_place_the_table_looks_at() {
        for size in [4 * MIB, 64 * MIB + 12345, 300 << 30, (1 << 40) + 4096 * 3] {
            for lb in [512, 4096] {
                let plan = read_plan(size);
                for (what, off, len) in places(size, lb) {
                    let end = off + len as u64;
                    if end > size {
                        continue;
                    }
                    assert!(
                        plan.iter().any(|&(s, l)| s <= off && end <= s + l),
                        "{what} at {off} (size {size}, lb {lb}) is not read by {plan:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_plan_is_aligned_merged_and_small() {
        for size in [0, 1, 4095, MIB, 3 * MIB + 7, 64 * MIB, 1 << 40] {
            let plan = read_plan(size);
            let total: u64 = plan.iter().map(|r| r.1).sum();
            assert!(total <= HEAD + TAIL + 5 * WINDOW, "{size}: {plan:?}");
            for w in plan.windows(2) {
                assert!(w[0].0 + w[0].1 < w[1].0, "{size}: not merged: {plan:?}");
            }
            for &(s, l) in &plan {
                assert_eq!(s % ALIGN, 0, "{size}: {plan:?}");
                assert!(s + l <= size, "{size}: {plan:?}");
            }
        }
        assert_eq!(read_plan(MIB), vec![(0, MIB)]);
        assert_eq!(read_plan(3 * MIB), vec![(0, 3 * MIB)]);
        assert_eq!(
            read_plan(1 << 40),
            vec![
                (0, MIB + WINDOW),
                (2 * MIB, WINDOW),
                (4 * MIB, WINDOW),
                (64 * MIB, WINDOW),
                (256 << 30, WINDOW),
                ((1 << 40) - TAIL, TAIL)
            ]
        );
    }

    /// Scan a target of `size` bytes, zeros but for `writes`, as the
    /// device scan would: only the ranges of the read plan are seen.
    pub fn scan_writes(size: u64, lb: u32, writes: &[(u64, Vec<u8>)]) -> Vec<(&'static str, u64)> {
        let plan = read_plan(size);
        let mut bufs: Vec<(u64, Vec<u8>)> = plan
            .iter()
            .map(|&(s, l)| (s, vec![0u8; usize::try_from(l).unwrap()]))
            .collect();
        for (off, bytes) in writes {
            for (i, &b) in bytes.iter().enumerate() {
                let at = off + i as u64;
                assert!(at < size, "a write at {at} past the end of {size}");
                for (s, buf) in &mut bufs {
                    if let Some(rel) = at.checked_sub(*s).and_then(|r| usize::try_from(r).ok()) {
                        if rel < buf.len() {
                            buf[rel] = b;
                        }
                    }
                }
            }
        }
        let parts = bufs.iter().map(|(s, b)| (*s, b.as_slice())).collect();
        let mut got: Vec<_> = scan(&Regions::new(size, lb, parts))
            .into_iter()
            .map(|s| (s.what, s.offset))
            .collect();
        got.sort_unstable();
        got
    }

    /// (offset, bytes) to put on a blank target.
    type Writes = Vec<(u64, Vec<u8>)>;

    /// A case: what to write, and the hits it must give (any order).
    struct Case {
        name: &'static str,
        writes: Vec<(u64, Vec<u8>)>,
        want: Vec<(&'static str, u64)>,
    }

    fn case(name: &'static str, writes: Vec<(u64, Vec<u8>)>, want: Vec<(&'static str, u64)>) -> Case {
        Case { name, writes, want }
    }

    /// One magic at one offset, found as `what` there.
    fn one(what: &'static str, off: u64, magic: &[u8]) -> Case {
        case(what, vec![(off, magic.to_vec())], vec![(what, off)])
    }

    fn boot_sig() -> (u64, Vec<u8>) {
        (510, vec![0x55, 0xAA])
    }

    /// A Sun label: the magic and the checksum that makes the XOR zero.
    fn sun_label() -> Vec<u8> {
        let mut b = vec![0u8; 512];
        b[..9].copy_from_slice(b"SUN0 cyl ");
        b[508..510].copy_from_slice(b"\xDA\xBE");
        let x = b[..510]
            .chunks_exact(2)
            .fold(0u16, |x, w| x ^ u16::from_be_bytes([w[0], w[1]]));
        b[510..512].copy_from_slice(&x.to_be_bytes());
        b
    }

    fn jmicron_record() -> Vec<u8> {
        let mut b = vec![0u8; 128];
        b[..2].copy_from_slice(b"JM");
        b[2..4].copy_from_slice(&0x0001u16.to_le_bytes());
        b[48] = 1; // raid1
        let sum = b
            .chunks_exact(2)
            .fold(0u16, |s, w| s.wrapping_add(u16::from_le_bytes([w[0], w[1]])));
        b[4..6].copy_from_slice(&sum.wrapping_neg().to_le_bytes());
        b
    }

    fn via_record() -> Vec<u8> {
        let mut b = vec![0u8; 51];
        b[..2].copy_from_slice(&0xAA55u16.to_le_bytes());
        b[2] = 1;
        b[3] = 3; // disk bit mask
        b[50] = b[..50].iter().fold(0u8, |s, &x| s.wrapping_add(x));
        b
    }

    fn silicon_record() -> Vec<u8> {
        let mut b = vec![0u8; 512];
        b[96..100].copy_from_slice(&0x2F00_0000u32.to_le_bytes());
        b[0x104..0x106].copy_from_slice(&1u16.to_le_bytes());
        b[278] = 1;
        let sum = b[..318]
            .chunks_exact(2)
            .fold(0u16, |s, w| s.wrapping_add(u16::from_le_bytes([w[0], w[1]])));
        b[318..320].copy_from_slice(&sum.wrapping_neg().to_le_bytes());
        b
    }

    /// The start of a ZFS label's nvlist: XDR, one "version" pair.
    pub fn zfs_nvlist_head() -> Vec<u8> {
        let mut b = vec![1, 1, 0, 0];
        for w in [0u32, 1, 40, 48, 7] {
            b.extend(w.to_be_bytes());
        }
        b.extend(b"version\0");
        for w in [8u32, 1] {
            b.extend(w.to_be_bytes());
        }
        b.extend(5000u64.to_be_bytes());
        b
    }

    fn nilfs_sb(dev_size: u64) -> Vec<u8> {
        let mut b = vec![0u8; 40];
        b[0..4].copy_from_slice(&2u32.to_le_bytes());
        b[6..8].copy_from_slice(&0x3434u16.to_le_bytes());
        b[8..10].copy_from_slice(&1024u16.to_le_bytes());
        b[32..40].copy_from_slice(&dev_size.to_le_bytes());
        b
    }

    fn cases(s: u64, lb: u64) -> Vec<Case> {
        let last = |k: u64| (s / 512 - k) * 512;
        let last_lb = |k: u64| (s / lb - k) * lb;
        let md = MD_MAGIC.to_vec();
        let mut part = vec![0u8; 16];
        part[4] = 0x83;
        let mut v = vec![
            // partition tables
            case(
                "MBR with an entry",
                vec![boot_sig(), (446, part)],
                vec![("MBR partition table", 510)],
            ),
            case("MBR boot sector", vec![boot_sig()], vec![("MBR boot signature", 510)]),
            one("GPT partition table", 512, b"EFI PART"),
            one("GPT partition table", 4096, b"EFI PART"),
            one("GPT backup header", last(1), b"EFI PART"),
            one("GPT backup header", (s / 4096 - 1) * 4096, b"EFI PART"),
            one("SGI disk label", 0, b"\x0B\xE5\xA9\x41"),
            case("Sun disk label", vec![(0, sun_label())], vec![("Sun disk label", 508)]),
            one("AIX disk label", 0, b"\xC9\xC2\xD4\xC1"),
            one("BSD disk label", 512, b"\x57\x45\x56\x82"),
            one("BSD disk label", 64, b"\x57\x45\x56\x82"),
            one("Solaris x86 VTOC", 524, b"\xEE\xDE\x0D\x60"),
            one("UnixWare VTOC", 14852, b"\x0D\x60\xE5\xCA"),
            case(
                "Apple partition map",
                vec![(0, b"ER\x02\x00".to_vec()), (512, b"PM".to_vec())],
                vec![("Apple partition map", 0)],
            ),
            case(
                "Ultrix disk label",
                vec![(16312, b"\x57\x29\x03\x00\x01\x00\x00\x00".to_vec())],
                vec![("Ultrix disk label", 16312)],
            ),
            // md
            one("md superblock v1.1", 0, &md),
            one("md superblock v1.2", 4096, &md),
            one("md superblock v0.90", md_090(s).unwrap(), &md),
            one("md superblock v0.90", md_090(s).unwrap(), &MD_MAGIC_BE),
            one("md superblock v1.0", md_10(s).unwrap(), &md),
            // firmware RAID
            one("SNIA DDF RAID metadata", last(1), b"\xDE\x11\xDE\x11"),
            one("SNIA DDF RAID metadata", last(257), b"\xDE\x11\xDE\x11"),
            one("SNIA DDF RAID metadata", last_lb(1), b"\xDE\x11\xDE\x11"),
            one(
                "Intel IMSM/VROC RAID metadata",
                last(2),
                b"Intel Raid ISM Cfg Sig. 1.3.00",
            ),
            one(
                "Intel IMSM/VROC RAID metadata",
                last_lb(2),
                b"Intel Raid ISM Cfg Sig. 1.3.00",
            ),
            one("LSI MegaRAID metadata", last(1), b"$XIDE$"),
            one("Promise FastTrak RAID metadata", last(63), b"Promise Technology, Inc."),
            one(
                "Promise FastTrak RAID metadata",
                last(3087),
                b"Promise Technology, Inc.",
            ),
            case(
                "NVIDIA RAID metadata",
                vec![(last(2), b"NVIDIA  \x1e\x00\x00\x00".to_vec())],
                vec![("NVIDIA RAID metadata", last(2))],
            ),
            case(
                "Silicon Image RAID metadata",
                vec![(last(1), silicon_record())],
                vec![("Silicon Image RAID metadata", last(1) + 96)],
            ),
            case(
                "VIA RAID metadata",
                vec![(last(1), via_record())],
                vec![("VIA RAID metadata", last(1))],
            ),
            case(
                "JMicron RAID metadata",
                vec![(last(1), jmicron_record())],
                vec![("JMicron RAID metadata", last(1))],
            ),
            case(
                "Adaptec RAID metadata",
                vec![
                    (last(1), b"\x37\xFC\x4D\x1E".to_vec()),
                    (last(1) + 256, b"DPTM".to_vec()),
                ],
                vec![("Adaptec RAID metadata", last(1))],
            ),
            one("HighPoint RAID metadata", last(11), b"\xF3\x16\x78\x5A"),
            one("HighPoint RAID metadata", 4640, b"\xF0\x16\x78\x5A"),
            // volume managers, caches, layers
            one("LVM2 physical volume", 512, b"LABELONE"),
            one("LVM2 physical volume", 0, b"LABELONE"),
            one("LVM2 physical volume", 1024, b"LABELONE"),
            one("LVM2 physical volume", 1536, b"LABELONE"),
            one("LVM2 physical volume header", 0x218, b"LVM2 001"),
            one("LVM1 physical volume", 0, b"HM\x01\x00"),
            one("LVM snapshot COW store", 0, b"SnAp"),
            one(
                "bcache superblock",
                4120,
                b"\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81",
            ),
            one(
                "bcachefs superblock",
                4120,
                b"\xc6\x85\x73\xf6\x66\xce\x90\xa9\xd9\x6a\x60\xcf\x80\x3d\xf7\xef",
            ),
            one(
                "bcachefs superblock",
                s - MIB + 24,
                b"\xc6\x85\x73\xf6\x66\xce\x90\xa9\xd9\x6a\x60\xcf\x80\x3d\xf7\xef",
            ),
            one("Ceph BlueStore label", 0, b"bluestore block device\n"),
            one("DRBD metadata", s - 4096 + 60, b"\x83\x74\x02\x6d"),
            one("DRBD metadata", (s & !4095) - 4096 + 60, b"\x83\x74\x02\x6b"),
            one("DRBD manage control volume", 0, b"$DRBDmgr=q"),
            one("DRBD proxy data log", 0, b"DRBDdlh*"),
            one("dm-verity hash device", 0, b"verity\0\0"),
            one("dm-integrity superblock", 0, b"integrt\0"),
            one("VDO volume", 0, b"dmvdo001"),
            one("Stratis block device", 516, b"!Stra0tis\x86\xff\x02^\x41rh"),
            one("Stratis block device", 4612, b"!Stra0tis\x86\xff\x02^\x41rh"),
            one("VMFS volume", MIB, b"\x0d\xd0\x01\xc0"),
            one("UBI volume", 0, b"UBI#"),
            one("mpool device", 0, b"mpoolDev"),
            one("Oracle ASM disk", 32, b"ORCLDISK"),
            // encryption
            one("LUKS header", 0, b"LUKS\xba\xbe\x00\x02"),
            one("BitLocker volume", 0, b"\xeb\x58\x90-FVE-FS-"),
            case(
                "Apple Core Storage volume",
                vec![(8, vec![1, 0]), (88, b"CS\x01\x00\x00\x00".to_vec())],
                vec![("Apple Core Storage volume", 88)],
            ),
            // swap
            one("hibernation image", 0xff6, b"S1SUSPEND"),
            one("TuxOnIce hibernation image", 0, b"\xed\xc3\x02\xe9\x98\x56\xe5\x0c"),
            // filesystems
            one("ext2/3/4 filesystem", 1080, b"\x53\xEF"),
            one("XFS filesystem", 0, b"XFSB"),
            one("btrfs filesystem", 65600, b"_BHRfS_M"),
            one("btrfs filesystem", 64, b"_BHRfS_M"),
            case(
                "FAT16",
                vec![(54, b"FAT16   ".to_vec()), boot_sig()],
                vec![("MBR boot signature", 510), ("FAT12/16 filesystem", 54)],
            ),
            case(
                "FAT12",
                vec![(54, b"FAT12   ".to_vec()), boot_sig()],
                vec![("MBR boot signature", 510), ("FAT12/16 filesystem", 54)],
            ),
            case(
                "FAT32",
                vec![(82, b"FAT32   ".to_vec()), boot_sig()],
                vec![("MBR boot signature", 510), ("FAT32 filesystem", 82)],
            ),
            one("NTFS filesystem", 3, b"NTFS    "),
            one("exFAT filesystem", 3, b"EXFAT   "),
            one("ReFS filesystem", 0, b"\0\0\0ReFS\0"),
            one("ISO9660 filesystem", 32769, b"CD001"),
            one("High Sierra filesystem", 32777, b"CDROM"),
            one("JFS filesystem", 32768, b"JFS1"),
            one("ReiserFS filesystem", 65536 + 0x34, b"ReIsEr2Fs"),
            one("ReiserFS filesystem", 8192 + 0x34, b"ReIsErFs"),
            one("Reiser4 filesystem", 65536, b"ReIsEr4"),
            one("F2FS filesystem", 1024, b"\x10\x20\xF5\xF2"),
            one("EROFS filesystem", 1024, b"\xe2\xe1\xf5\xe0"),
            case("NILFS2", vec![(1024, nilfs_sb(s))], vec![("NILFS2 filesystem", 1030)]),
            case(
                "NILFS2 backup",
                vec![(last(8), nilfs_sb(s))],
                vec![("NILFS2 backup superblock", last(8) + 6)],
            ),
            case(
                "HFS",
                vec![(1024, b"BD".to_vec()), (1044, 4096u32.to_be_bytes().to_vec())],
                vec![("HFS filesystem", 1024)],
            ),
            case(
                "HFS+",
                vec![(1024, b"H+\x00\x04".to_vec()), (1064, 4096u32.to_be_bytes().to_vec())],
                vec![("HFS+ filesystem", 1024)],
            ),
            one("APFS container", 32, b"NXSB"),
            one("UFS filesystem", 65536 + 1372, &0x1954_0119_u32.to_le_bytes()),
            one("UFS filesystem", 8192 + 1372, &0x0001_1954_u32.to_be_bytes()),
            one("HPFS filesystem", 8192, b"\x49\xe8\x95\xf9"),
            one("System V filesystem", 9 * 1024 + 1016, b"\x20\x7e\x18\xfd"),
            one("Xenix filesystem", 2040, b"\x44\x55\x2b\x00"),
            one("cramfs filesystem", 0, b"\x45\x3d\xcd\x28"),
            one("romfs filesystem", 0, b"-rom1fs-"),
            one("ScoutFS filesystem", 65540, b"\x8b\x42\x3c\x10"),
            case(
                "Minix v1",
                vec![(1024, 16u16.to_le_bytes().to_vec()), (1040, b"\x7f\x13".to_vec())],
                vec![("Minix filesystem", 1040)],
            ),
            case(
                "Minix v3",
                vec![(1024, 16u32.to_le_bytes().to_vec()), (1048, b"\x5a\x4d".to_vec())],
                vec![("Minix filesystem", 1048)],
            ),
            one("GFS/GFS2 filesystem", 65536, b"\x01\x16\x19\x70"),
            one("OCFS filesystem", 8192, b"OracleCFS"),
            one("OCFS2 filesystem", 2048, b"OCFSV2"),
            one("VxFS filesystem", 1024, b"\xf5\xfc\x01\xa5"),
            one("VxFS filesystem", 8192, b"\xa5\x01\xfc\xf5"),
            one("SquashFS filesystem", 0, b"hsqs"),
            one("NetWare filesystem", 4096, b"SPB5"),
            one("UBIFS filesystem", 0, b"\x31\x18\x10\x06"),
            one("BFS filesystem", 0, b"\xce\xfa\xad\x1b"),
            one("BeFS filesystem", 544, b"BFS1"),
            one("VMFS filesystem", 2 * MIB, b"\x5e\xf1\xab\x2f"),
            one("EXFS filesystem", 0, b"EXFS"),
            one("zonefs filesystem", 0, b"SFOZ"),
            // formats with code of their own
            case(
                "ZFS labels",
                vec![
                    (16 * KIB, zfs_nvlist_head()),
                    (ZFS_LABEL + 16 * KIB, zfs_nvlist_head()),
                    (ZFS_LABEL + 128 * KIB + 5 * KIB, UBERBLOCK_LE.to_vec()),
                ],
                vec![
                    ("ZFS label", 16 * KIB),
                    ("ZFS label", ZFS_LABEL + 16 * KIB),
                    ("ZFS uberblock", ZFS_LABEL + 133 * KIB),
                ],
            ),
            case(
                "XFS external log",
                vec![(
                    4096,
                    b"\xFE\xED\xBA\xBE\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x80\x00".to_vec(),
                )],
                vec![("XFS external log", 4096)],
            ),
            case(
                "UDF",
                vec![
                    (32769, b"BEA01".to_vec()),
                    (34817, b"NSR03".to_vec()),
                    (36865, b"TEA01".to_vec()),
                ],
                vec![("UDF (ECMA-167) volume", 32769)],
            ),
            case(
                "UDF on 4096-byte blocks, no BEA01",
                vec![(32768 + 4096 + 1, b"NSR02".to_vec())],
                vec![("UDF (ECMA-167) volume", 32768 + 4096 + 1)],
            ),
        ];
        for off in [
            0x4000, 0x8000, 0x1_0000, 0x2_0000, 0x4_0000, 0x8_0000, 0x10_0000, 0x20_0000, 0x40_0000,
        ] {
            if off + 8 <= s {
                v.push(one("LUKS2 secondary header", off, b"SKUL\xba\xbe\x00\x02"));
            }
        }
        for off in [0xff6, 0x1ff6, 0x3ff6, 0x7ff6, 0xfff6] {
            v.push(one("Linux swap", off, b"SWAPSPACE2"));
            v.push(one("Linux swap", off, b"SWAP-SPACE"));
        }
        // The two end labels of a pool (aligned down to 256 KiB).
        let end = (s - s % ZFS_LABEL) - 4 * ZFS_LABEL;
        v.push(case(
            "ZFS end labels",
            vec![
                (end + 2 * ZFS_LABEL + 16 * KIB, zfs_nvlist_head()),
                (end + 3 * ZFS_LABEL + 128 * KIB, UBERBLOCK_BE.to_vec()),
            ],
            vec![
                ("ZFS label", end + 2 * ZFS_LABEL + 16 * KIB),
                ("ZFS uberblock", end + 3 * ZFS_LABEL + 128 * KIB),
            ],
        ));
        if s > 64 * MIB + 4096 {
            v.push(one("btrfs superblock mirror", 64 * MIB + 64, b"_BHRfS_M"));
        }
        v
    }

    /// Two sizes that are not multiples of 64 KiB (one not even of 512,
    /// as a regular file may be), and a 4Kn disk.
    const SIZES: [(u64, u32); 3] = [
        (3 * MIB + 12345, 512),
        ((300 * MIB) + 9 * 512, 512),
        (80 * MIB + 3 * 4096, 4096),
    ];

    #[test]
    fn each_format_is_found_at_its_place() {
        let mut n = 0;
        for (size, lb) in SIZES {
            for c in cases(size, u64::from(lb)) {
                let mut want = c.want.clone();
                want.sort_unstable();
                want.dedup();
                assert_eq!(
                    scan_writes(size, lb, &c.writes),
                    want,
                    "{} on a target of {size} bytes (blocks of {lb})",
                    c.name
                );
                n += 1;
            }
        }
        assert!(n > 400, "{n} cases");
    }

    #[test]
    fn blank_and_tiny_targets_have_no_signatures() {
        for (size, lb) in SIZES {
            assert_eq!(scan_writes(size, lb, &[]), vec![]);
        }
        for size in [0, 1, 100, 511, 4096, 65536] {
            assert_eq!(scan_writes(size, 512, &[]), vec![], "{size}");
        }
        // Magic cut off by the end of a tiny target is not read past it.
        assert_eq!(
            scan_writes(5, 512, &[(0, b"XFSB".to_vec())]),
            vec![("XFS filesystem", 0)]
        );
        assert_eq!(scan_writes(3, 512, &[(0, b"XFS".to_vec())]), vec![]);
    }

    #[test]
    fn near_misses_are_not_signatures() {
        for (s, lb) in SIZES {
            let last = |k: u64| (s / 512 - k) * 512;
            let bad_jm = {
                let mut r = jmicron_record();
                r[10] ^= 0x10; // (a sum of 1 is valid too)
                r
            };
            let bad_via = {
                let mut r = via_record();
                r[50] ^= 1;
                r
            };
            let bad_sil = {
                let mut r = silicon_record();
                r[318] ^= 1;
                r
            };
            let bad_nv = {
                let mut r = zfs_nvlist_head();
                r[0] = 2; // not XDR
                r
            };
            let cases: Vec<(&str, Writes)> = vec![
                ("boot signature one byte off", vec![(511, vec![0x55, 0xAA])]),
                ("GPT one byte off", vec![(513, b"EFI PART".to_vec())]),
                ("GPT backup one byte off", vec![(last(1) + 1, b"EFI PART".to_vec())]),
                ("big-endian ext magic", vec![(1080, vec![0xEF, 0x53])]),
                ("FAT label without a boot signature", vec![(54, b"FAT16   ".to_vec())]),
                ("md magic at no superblock place", vec![(4000, MD_MAGIC.to_vec())]),
                ("big-endian md magic at 0", vec![(0, MD_MAGIC_BE.to_vec())]),
                ("ISO one byte off", vec![(32768, b"CD001".to_vec())]),
                ("truncated LUKS magic", vec![(0, b"LUKS".to_vec())]),
                (
                    "IMSM in the last sector",
                    vec![(last(1), b"Intel Raid ISM Cfg Sig. ".to_vec())],
                ),
                (
                    "DDF two sectors from the end",
                    vec![(last(2), b"\xDE\x11\xDE\x11".to_vec())],
                ),
                ("LSI one sector early", vec![(last(2), b"$XIDE$".to_vec())]),
                (
                    "bcache magic without its offset",
                    vec![(4096, b"\xc6\x85\x73\xf6\x4e\x1a\x45\xca".to_vec())],
                ),
                (
                    "DRBD magic at the block start",
                    vec![(s - 4096, b"\x83\x74\x02\x6d".to_vec())],
                ),
                ("JMicron with a bad checksum", vec![(last(1), bad_jm)]),
                ("VIA with a bad checksum", vec![(last(1), bad_via)]),
                ("Silicon Image with a bad checksum", vec![(last(1), bad_sil)]),
                ("Sun magic without its checksum", vec![(508, b"\xDA\xBE".to_vec())]),
                ("Apple driver record without a map", vec![(0, b"ER\x02\x00".to_vec())]),
                ("Ultrix label not valid", vec![(16312, b"\x57\x29\x03\x00".to_vec())]),
                ("LVM1 magic, version 0", vec![(0, b"HM\x00\x00".to_vec())]),
                ("Core Storage magic alone", vec![(88, b"CS".to_vec())]),
                ("HFS without a block size", vec![(1024, b"BD".to_vec())]),
                ("HFS+ of version 3", vec![(1024, b"H+\x00\x03".to_vec())]),
                ("Minix magic without inodes", vec![(1040, b"\x7f\x13".to_vec())]),
                ("NILFS2 magic alone", vec![(1030, b"\x34\x34".to_vec())]),
                ("NILFS2 backup for another size", vec![(last(8), nilfs_sb(s + 512))]),
                (
                    "NVIDIA with a wrong length",
                    vec![(last(2), b"NVIDIA  \x1f\x00\x00\x00".to_vec())],
                ),
                ("Adaptec without DPTM", vec![(last(1), b"\x37\xFC\x4D\x1E".to_vec())]),
                (
                    "XFS log record of version 0",
                    vec![(4096, b"\xFE\xED\xBA\xBE".to_vec())],
                ),
                (
                    "XFS log record off a sector",
                    vec![(4100, b"\xFE\xED\xBA\xBE\0\0\0\x01\0\0\0\x02\0\0\x80\0".to_vec())],
                ),
                ("ZFS nvlist not XDR", vec![(16 * KIB, bad_nv)]),
                (
                    "uberblock magic off a 1 KiB slot",
                    vec![(128 * KIB + 512, UBERBLOCK_LE.to_vec())],
                ),
                (
                    "uberblock magic before the ring",
                    vec![(100 * KIB, UBERBLOCK_LE.to_vec())],
                ),
                ("UDF identifier off by one", vec![(32770, b"NSR02".to_vec())]),
                (
                    "LUKS2 secondary header off its places",
                    vec![(0x6000, b"SKUL\xba\xbe".to_vec())],
                ),
                ("swap magic off its places", vec![(0x2ff6, b"SWAPSPACE2".to_vec())]),
            ];
            for (name, writes) in cases {
                assert_eq!(scan_writes(s, lb, &writes), vec![], "{name} (size {s})");
            }
        }
    }
    #[test]
    fn merge_joins_touching_and_overlapping_ranges() {
        assert_eq!(
            merge(vec![(10, 5), (0, 10), (12, 10), (30, 0), (40, 1)]),
            vec![(0, 22), (40, 1)]
        );
    }
}
