//! The signature scan (`bench_core::device::signatures::scan`, which guards every
//! write PID 1 grants and every `bootbench-image flash`): on any device contents, size and block size it never panics,
//! only reports magic inside the device, and always finds a signature
//! planted where its on-disk format puts it (md 0.90 and 1.0, firmware RAID,
//! the GPT backup, DRBD, bcachefs and ZFS at the end, for every device size).
//!
//! Input: bytes 0..8 = device size (little-endian, cut to 1 TiB), byte 8 =
//! which signature to plant, byte 9 = the logical block size (even: 512,
//! odd: 4096), the rest = device contents (repeated).
#![no_main]

use libfuzzer_sys::fuzz_target;

use bench_core::device::signatures::{read_plan, scan, Regions, MD_MAGIC, UBERBLOCK_LE};

const KIB: u64 = 1024;
const MIB: u64 = 1 << 20;

/// Signatures as their formats place them: (name, offset, magic); `None`
/// when the device is too small to hold it. These are written out from the
/// formats, not taken from the scan's table, so the two check each other.
fn plant(kind: u8, size: u64, lb: u64) -> Option<(&'static str, u64, &'static [u8])> {
    let sectors = size / 512;
    let from_end = |bs: u64, back: u64| (size / bs).checked_sub(back).map(|b| b * bs);
    Some(match kind % 24 {
        0 => ("ext2/3/4 filesystem", 1080, &[0x53, 0xEF]),
        1 => ("XFS filesystem", 0, b"XFSB"),
        2 => ("btrfs filesystem", 65600, b"_BHRfS_M"),
        3 => ("LUKS header", 0, b"LUKS\xba\xbe"),
        4 => ("md superblock v1.1", 0, &MD_MAGIC),
        5 => ("md superblock v1.2", 4096, &MD_MAGIC),
        // md.h: MD_NEW_SIZE_SECTORS(x) = (x & ~(128 - 1)) - 128 sectors.
        6 => ("md superblock v0.90", ((sectors & !127).checked_sub(128)?) * 512, &MD_MAGIC),
        // md's super_1_load for 1.0: (sectors - 16) & ~7.
        7 => ("md superblock v1.0", ((sectors.checked_sub(16)?) & !7) * 512, &MD_MAGIC),
        8 => ("LVM2 physical volume", 512, b"LABELONE"),
        9 => ("ISO9660 filesystem", 32769, b"CD001"),
        10 => ("Linux swap", 4086, b"SWAPSPACE2"),
        11 => ("NTFS filesystem", 3, b"NTFS    "),
        // GPT: the backup header is in the last logical block.
        12 => ("GPT backup header", from_end(lb, 1)?, b"EFI PART"),
        // SNIA DDF: the anchor header in the last block.
        13 => ("SNIA DDF RAID metadata", from_end(lb, 1)?, b"\xDE\x11\xDE\x11"),
        // Intel IMSM: the second-to-last block.
        14 => ("Intel IMSM/VROC RAID metadata", from_end(lb, 2)?, b"Intel Raid ISM Cfg Sig. "),
        15 => ("LSI MegaRAID metadata", from_end(512, 1)?, b"$XIDE$"),
        16 => ("Promise FastTrak RAID metadata", from_end(512, 3087)?, b"Promise Technology, Inc."),
        17 => (
            "bcache superblock",
            4096 + 24,
            b"\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81",
        ),
        18 => (
            "bcachefs superblock",
            size.checked_sub(MIB)? + 24,
            b"\xc6\x85\x73\xf6\x66\xce\x90\xa9\xd9\x6a\x60\xcf\x80\x3d\xf7\xef",
        ),
        // DRBD internal metadata: the last 4 KiB, magic at byte 60.
        19 => ("DRBD metadata", size.checked_sub(4096)? + 60, b"\x83\x74\x02\x6d"),
        20 => ("LUKS2 secondary header", MIB, b"SKUL\xba\xbe"),
        21 => ("btrfs superblock mirror", 64 * MIB + 64, b"_BHRfS_M"),
        // ZFS: label 2 starts 512 KiB before the 256 KiB-aligned end; its
        // uberblock ring 128 KiB into it (the first slot).
        22 => {
            let end = size - size % (256 * KIB);
            ("ZFS uberblock", end.checked_sub(512 * KIB)? + 128 * KIB, &UBERBLOCK_LE)
        }
        _ => ("VMFS volume", MIB, b"\x0d\xd0\x01\xc0"),
    })
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 10 {
        return;
    }
    let size = u64::from_le_bytes(data[..8].try_into().unwrap()) % (1 << 40);
    let kind = data[8];
    let lb: u32 = if data[9] % 2 == 0 { 512 } else { 4096 };
    let fill = &data[10..];
    let byte = |off: u64| -> u8 {
        if fill.is_empty() {
            0
        } else {
            fill[usize::try_from(off % fill.len() as u64).unwrap()]
        }
    };
    // What scan_device reads: the ranges of the plan.
    let plan = read_plan(size);
    let mut bufs: Vec<(u64, Vec<u8>)> = plan.iter().map(|&(s, l)| (s, (s..s + l).map(byte).collect())).collect();

    // Never a panic, and every report is backed by bytes inside the device.
    let parts = bufs.iter().map(|(s, b)| (*s, b.as_slice())).collect();
    for s in scan(&Regions::new(size, lb, parts)) {
        assert!(s.offset < size, "{s} on a device of {size} bytes");
    }

    // A planted signature is always found.
    let Some((what, off, magic)) = plant(kind, size, u64::from(lb)) else { return };
    let end = off + magic.len() as u64;
    if end > size {
        return;
    }
    let mut inside = true;
    for (i, &b) in magic.iter().enumerate() {
        let at = off + i as u64;
        let mut put = false;
        for (s, buf) in &mut bufs {
            if at >= *s && at < *s + buf.len() as u64 {
                buf[usize::try_from(at - *s).unwrap()] = b;
                put = true;
            }
        }
        inside &= put;
    }
    // Every place a format puts its magic is read, for every size.
    assert!(inside, "{what} at {off} on a device of {size} bytes is not read by {plan:?}");
    let parts = bufs.iter().map(|(s, b)| (*s, b.as_slice())).collect();
    let found = scan(&Regions::new(size, lb, parts));
    assert!(
        // md's magic is the same in every version: at offset 0 of a device
        // under 128 KiB, 0.90's place is 1.1's, and either name refuses.
        found
            .iter()
            .any(|s| s.offset == off && (s.what == what || (what.starts_with("md ") && s.what.starts_with("md ")))),
        "{what} at {off} on a device of {size} bytes (blocks of {lb}) not found: {found:?}"
    );
});
