//! Software RAID (md's superblocks, libblkid's `linux_raid.c`) and the
//! firmware RAID formats at the end of a disk.

use super::probe::At::{Block, Calc, Sector, Start};
use super::probe::{p, pc, Probe};
use super::{Regions, KIB};

/// md superblock magic 0xa92b4efc, little-endian (0.90 is host-endian: on
/// a big-endian machine's disk it is the other way round).
pub const MD_MAGIC: [u8; 4] = 0xa92b_4efc_u32.to_le_bytes();

/// [`MD_MAGIC`] big-endian: md 0.90 written by a big-endian machine.
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

/// The RAID formats, in the order their hits are reported.
pub(super) static PROBES: &[Probe] = &[
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
];

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::device::signatures::tests::{case, one, Case, Writes};
    use alloc::vec;
    use alloc::vec::Vec;

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

    /// This family's formats on a target of `s` bytes, each where it must be found.
    pub(in crate::device::signatures) fn cases(s: u64, lb: u64) -> Vec<Case> {
        let last = |k: u64| (s / 512 - k) * 512;
        let last_lb = |k: u64| (s / lb - k) * lb;
        let md = MD_MAGIC.to_vec();
        let v = vec![
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
        ];
        v
    }

    /// Bytes like this family's formats that must not be found as one
    /// (a magic off its place, a failed second check) on a target of
    /// `s` bytes.
    pub(in crate::device::signatures) fn near_misses(s: u64) -> Vec<(&'static str, Writes)> {
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
        vec![
            ("md magic at no superblock place", vec![(4000, MD_MAGIC.to_vec())]),
            ("big-endian md magic at 0", vec![(0, MD_MAGIC_BE.to_vec())]),
            (
                "IMSM in the last sector",
                vec![(last(1), b"Intel Raid ISM Cfg Sig. ".to_vec())],
            ),
            (
                "DDF two sectors from the end",
                vec![(last(2), b"\xDE\x11\xDE\x11".to_vec())],
            ),
            ("LSI one sector early", vec![(last(2), b"$XIDE$".to_vec())]),
            ("JMicron with a bad checksum", vec![(last(1), bad_jm)]),
            ("VIA with a bad checksum", vec![(last(1), bad_via)]),
            ("Silicon Image with a bad checksum", vec![(last(1), bad_sil)]),
            (
                "NVIDIA with a wrong length",
                vec![(last(2), b"NVIDIA  \x1f\x00\x00\x00".to_vec())],
            ),
            ("Adaptec without DPTM", vec![(last(1), b"\x37\xFC\x4D\x1E".to_vec())]),
        ]
    }
}
