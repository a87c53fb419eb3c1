//! Volume managers, caches and block layers, encryption, swap and
//! hibernation images.

use super::probe::At::{Calc, End, Start};
use super::probe::{p, pc, Probe};
use super::{Regions, KIB, MIB};

/// DRBD's internal metadata in the last 4 KiB-aligned 4 KiB block, magic
/// at byte 60 of it (libblkid assumes the size is a multiple of 4 KiB and
/// looks at size - 4096; this covers the other sizes).
fn drbd_aligned(size: u64) -> Option<u64> {
    (size & !(4 * KIB - 1)).checked_sub(4 * KIB).map(|o| o + 60)
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

/// The volume managers, layers, encryption and swap formats, in the
/// order their hits are reported.
pub(super) static PROBES: &[Probe] = &[
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
];

#[cfg(test)]
pub(super) mod tests {
    use crate::device::signatures::tests::{case, one, Case, Writes};
    use crate::device::signatures::MIB;
    use alloc::vec;
    use alloc::vec::Vec;

    /// This family's formats on a target of `s` bytes, each where it must be found.
    pub(in crate::device::signatures) fn cases(s: u64) -> Vec<Case> {
        let mut v = vec![
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
        v
    }

    /// Bytes like this family's formats that must not be found as one
    /// (a magic off its place, a failed second check) on a target of
    /// `s` bytes.
    pub(in crate::device::signatures) fn near_misses(s: u64) -> Vec<(&'static str, Writes)> {
        vec![
            ("truncated LUKS magic", vec![(0, b"LUKS".to_vec())]),
            (
                "bcache magic without its offset",
                vec![(4096, b"\xc6\x85\x73\xf6\x4e\x1a\x45\xca".to_vec())],
            ),
            (
                "DRBD magic at the block start",
                vec![(s - 4096, b"\x83\x74\x02\x6d".to_vec())],
            ),
            ("LVM1 magic, version 0", vec![(0, b"HM\x00\x00".to_vec())]),
            ("Core Storage magic alone", vec![(88, b"CS".to_vec())]),
            (
                "LUKS2 secondary header off its places",
                vec![(0x6000, b"SKUL\xba\xbe".to_vec())],
            ),
            ("swap magic off its places", vec![(0x2ff6, b"SWAPSPACE2".to_vec())]),
        ]
    }
}
