//! Filesystems, and the formats that need code of their own: ZFS labels
//! and uberblocks, the XFS external log, the UDF volume recognition
//! sequence.

use alloc::vec;
use alloc::vec::Vec;

use super::probe::At::{Sector, Start};
use super::probe::{p, pc, Probe};
use super::{Regions, Signature, KIB, MIB};

/// A FAT boot sector: the boot signature 0x55 0xAA at byte 510.
fn boot_signature(r: &Regions<'_>, _: u64) -> bool {
    r.is(510, &[0x55, 0xAA])
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

/// The filesystems found by a magic, in the order their hits are reported.
pub(super) static PROBES: &[Probe] = &[
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
pub(super) static SPECIAL: &[fn(&Regions<'_>, &mut Vec<Signature>)] = &[zfs, xfs_log, udf];

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::device::signatures::tests::{boot_sig, case, one, Case, Writes};
    use alloc::vec;

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

    /// This family's formats on a target of `s` bytes, each where it must be found.
    pub(in crate::device::signatures) fn cases(s: u64) -> Vec<Case> {
        let mut v = magic_cases(s);
        v.extend(own_code_cases(s));
        v
    }

    /// The filesystems found by their magic.
    fn magic_cases(s: u64) -> Vec<Case> {
        let last = |k: u64| (s / 512 - k) * 512;
        let mut v = vec![
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
        ];
        if s > 64 * MIB + 4096 {
            v.push(one("btrfs superblock mirror", 64 * MIB + 64, b"_BHRfS_M"));
        }
        v
    }

    /// The formats with code of their own: ZFS, the XFS external log, UDF.
    fn own_code_cases(s: u64) -> Vec<Case> {
        let mut v = vec![
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
        v
    }

    /// Bytes like this family's formats that must not be found as one
    /// (a magic off its place, a failed second check) on a target of
    /// `s` bytes.
    pub(in crate::device::signatures) fn near_misses(s: u64) -> Vec<(&'static str, Writes)> {
        let last = |k: u64| (s / 512 - k) * 512;
        let bad_nv = {
            let mut r = zfs_nvlist_head();
            r[0] = 2; // not XDR
            r
        };
        vec![
            ("big-endian ext magic", vec![(1080, vec![0xEF, 0x53])]),
            ("FAT label without a boot signature", vec![(54, b"FAT16   ".to_vec())]),
            ("ISO one byte off", vec![(32768, b"CD001".to_vec())]),
            ("HFS without a block size", vec![(1024, b"BD".to_vec())]),
            ("HFS+ of version 3", vec![(1024, b"H+\x00\x03".to_vec())]),
            ("Minix magic without inodes", vec![(1040, b"\x7f\x13".to_vec())]),
            ("NILFS2 magic alone", vec![(1030, b"\x34\x34".to_vec())]),
            ("NILFS2 backup for another size", vec![(last(8), nilfs_sb(s + 512))]),
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
        ]
    }
}
