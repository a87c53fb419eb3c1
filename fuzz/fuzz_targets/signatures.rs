//! init's signature scan (`safety::scan`, which guards every write): on any
//! device contents and size it never panics, only reports magic that is
//! there, and always finds a signature planted where its on-disk format
//! puts it (md 0.90 and 1.0 at the end, for every device size).
//!
//! Input: bytes 0..8 = device size (little-endian, cut to 1 TiB), byte 8 =
//! which signature to plant, the rest = device contents (repeated).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../init/src/safety/mod.rs"]
mod safety;

const HEAD: u64 = 128 << 10;
const TAIL: u64 = 128 << 10;
const MD: [u8; 4] = 0xa92b_4efc_u32.to_le_bytes();

/// Signatures as their formats place them: (name, offset, magic); `None`
/// when the device is too small to hold it.
fn plant(kind: u8, size: u64) -> Option<(&'static str, u64, &'static [u8])> {
    let sectors = size / 512;
    Some(match kind % 12 {
        0 => ("ext2/3/4 filesystem", 1080, &[0x53, 0xEF]),
        1 => ("XFS filesystem", 0, b"XFSB"),
        2 => ("btrfs filesystem", 65600, b"_BHRfS_M"),
        3 => ("LUKS header", 0, b"LUKS\xba\xbe"),
        4 => ("md superblock v1.1", 0, &MD),
        5 => ("md superblock v1.2", 4096, &MD),
        // md.h: MD_NEW_SIZE_SECTORS(x) = (x & ~(128 - 1)) - 128 sectors.
        6 => ("md superblock v0.90", ((sectors & !127).checked_sub(128)?) * 512, &MD),
        // md's super_1_load for 1.0: (sectors - 16) & ~7.
        7 => ("md superblock v1.0", ((sectors.checked_sub(16)?) & !7) * 512, &MD),
        8 => ("LVM2 physical volume", 512, b"LABELONE"),
        9 => ("ISO9660 filesystem", 32769, b"CD001"),
        10 => ("Linux swap", 4086, b"SWAPSPACE2"),
        _ => ("NTFS filesystem", 3, b"NTFS    "),
    })
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 9 {
        return;
    }
    let size = u64::from_le_bytes(data[..8].try_into().unwrap()) % (1 << 40);
    let kind = data[8];
    let fill = &data[9..];
    let byte = |off: u64| -> u8 {
        if fill.is_empty() {
            0
        } else {
            fill[usize::try_from(off % fill.len() as u64).unwrap()]
        }
    };
    // What signatures() reads: the head and the tail of the device.
    let head_len = HEAD.min(size);
    let tail_start = size.saturating_sub(TAIL);
    let mut head: Vec<u8> = (0..head_len).map(byte).collect();
    let mut tail: Vec<u8> = (tail_start..size).map(byte).collect();

    // Never a panic, and every report is backed by bytes inside the device.
    for s in safety::scan(&head, &tail, tail_start, size) {
        assert!(s.offset < size, "{s} on a device of {size} bytes");
    }

    // A planted signature is always found.
    let Some((what, off, magic)) = plant(kind, size) else { return };
    let end = off + magic.len() as u64;
    if end > size {
        return;
    }
    for (i, &b) in magic.iter().enumerate() {
        let at = off + i as u64;
        if at < head_len {
            head[usize::try_from(at).unwrap()] = b;
        }
        if at >= tail_start {
            tail[usize::try_from(at - tail_start).unwrap()] = b;
        }
    }
    let inside = end <= head_len || off >= tail_start;
    let found = safety::scan(&head, &tail, tail_start, size);
    assert!(
        // md's magic is the same in every version: at offset 0 of a device
        // under 128 KiB, 0.90's place is 1.1's, and either name refuses.
        !inside
            || found
                .iter()
                .any(|s| s.offset == off && (s.what == what || (what.starts_with("md ") && s.what.starts_with("md ")))),
        "{what} at {off} on a device of {size} bytes not found: {found:?}"
    );
});
