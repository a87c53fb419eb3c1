//! Partition tables (libblkid's `partitions/`): DOS/MBR, GPT and its
//! backup header, and the disk labels of other systems.

use super::probe::At::{Block, Start};
use super::probe::{p, pc, Probe};
use super::Regions;

fn mbr_entries_used(r: &Regions<'_>, _: u64) -> bool {
    r.get(446, 64).is_some_and(|e| e.iter().any(|&b| b != 0))
}

fn mbr_entries_empty(r: &Regions<'_>, at: u64) -> bool {
    !mbr_entries_used(r, at)
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

/// The partition tables, in the order their hits are reported.
pub(super) static PROBES: &[Probe] = &[
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
];

#[cfg(test)]
pub(super) mod tests {
    use super::super::tests::{boot_sig, case, one, Case, Writes};
    use alloc::vec;
    use alloc::vec::Vec;

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

    /// This family's formats on a target of `s` bytes, each where it must be found.
    pub(in crate::device::signatures) fn cases(s: u64) -> Vec<Case> {
        let last = |k: u64| (s / 512 - k) * 512;
        let mut part = vec![0u8; 16];
        part[4] = 0x83;
        let v = vec![
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
        ];
        v
    }

    /// Bytes like this family's formats that must not be found as one
    /// (a magic off its place, a failed second check) on a target of
    /// `s` bytes.
    pub(in crate::device::signatures) fn near_misses(s: u64) -> Vec<(&'static str, Writes)> {
        let last = |k: u64| (s / 512 - k) * 512;
        vec![
            ("boot signature one byte off", vec![(511, vec![0x55, 0xAA])]),
            ("GPT one byte off", vec![(513, b"EFI PART".to_vec())]),
            ("GPT backup one byte off", vec![(last(1) + 1, b"EFI PART".to_vec())]),
            ("Sun magic without its checksum", vec![(508, b"\xDA\xBE".to_vec())]),
            ("Apple driver record without a map", vec![(0, b"ER\x02\x00".to_vec())]),
            ("Ultrix label not valid", vec![(16312, b"\x57\x29\x03\x00".to_vec())]),
        ]
    }
}
