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
//!
//! The table is written by family, each file with its probes, their second
//! checks and the test cases that find them: `partitions.rs`, `raid.rs`,
//! `layers.rs` (volume managers, block layers, encryption, swap) and
//! `filesystems.rs` (with the formats that need code of their own);
//! `probe.rs` holds the table's vocabulary.

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

mod filesystems;
mod layers;
mod partitions;
mod probe;
mod raid;

pub use filesystems::UBERBLOCK_LE;
use probe::Probe;
pub use raid::MD_MAGIC;

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

/// The formats, family by family in the order their hits are reported:
/// partition tables, RAID, volume managers, encryption and block layers,
/// filesystems (then the formats with code of their own).
static FAMILIES: [&[Probe]; 4] = [partitions::PROBES, raid::PROBES, layers::PROBES, filesystems::PROBES];

/// Every probe of the table, in order.
fn probes() -> impl Iterator<Item = &'static Probe> {
    FAMILIES.iter().flat_map(|f| f.iter())
}

/// The signature scan over bytes already read (see [`read_plan`]).
pub fn scan(r: &Regions<'_>) -> Vec<Signature> {
    let lb = u64::from(r.logical_block);
    let mut found = Vec::new();
    let mut offsets = Vec::new();
    for probe in probes() {
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
    for special in filesystems::SPECIAL {
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
        for probe in probes() {
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
    pub(super) type Writes = Vec<(u64, Vec<u8>)>;

    /// A case: what to write, and the hits it must give (any order).
    pub(super) struct Case {
        pub(super) name: &'static str,
        pub(super) writes: Vec<(u64, Vec<u8>)>,
        pub(super) want: Vec<(&'static str, u64)>,
    }

    pub(super) fn case(name: &'static str, writes: Vec<(u64, Vec<u8>)>, want: Vec<(&'static str, u64)>) -> Case {
        Case { name, writes, want }
    }

    /// One magic at one offset, found as `what` there.
    pub(super) fn one(what: &'static str, off: u64, magic: &[u8]) -> Case {
        case(what, vec![(off, magic.to_vec())], vec![(what, off)])
    }

    pub(super) fn boot_sig() -> (u64, Vec<u8>) {
        (510, vec![0x55, 0xAA])
    }

    /// Every family's cases on a target of `s` bytes with logical blocks
    /// of `lb` bytes.
    fn cases(s: u64, lb: u64) -> Vec<Case> {
        let mut v = partitions::tests::cases(s);
        v.extend(raid::tests::cases(s, lb));
        v.extend(layers::tests::cases(s));
        v.extend(filesystems::tests::cases(s));
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
            let cases = [
                partitions::tests::near_misses(s),
                raid::tests::near_misses(s),
                layers::tests::near_misses(s),
                filesystems::tests::near_misses(s),
            ];
            for (name, writes) in cases.into_iter().flatten() {
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
