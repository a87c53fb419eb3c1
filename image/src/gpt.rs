//! A GUID Partition Table (UEFI spec 2.10, chapter 5) for a disk image in memory: protective MBR,
//! primary header at LBA 1, 128 entries of 128 bytes from LBA 2, and the backup entries and header
//! at the end of the disk. 512-byte sectors.

/// Bytes per logical block.
pub const SECTOR: u64 = 512;
/// Entries in each partition entry array.
pub const ENTRIES: u32 = 128;
/// Bytes per partition entry.
pub const ENTRY_SIZE: u32 = 128;
/// Sectors holding one entry array (128 * 128 / 512).
pub const ENTRY_SECTORS: u64 = 32;

/// The EFI system partition type, C12A7328-F81F-11D2-BA4B-00A0C93EC93B.
pub const ESP_TYPE: &str = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B";
/// Partition attribute bit 2: legacy BIOS bootable (what syslinux's gptmbr.bin looks for).
pub const ATTR_LEGACY_BIOS_BOOTABLE: u64 = 1 << 2;

/// A GUID in its on-disk byte order (the first three fields little-endian) from the text form.
pub fn guid(text: &str) -> [u8; 16] {
    let hex: Vec<u8> = text
        .bytes()
        .filter(|b| *b != b'-')
        .map(|b| match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => panic!("bad GUID {text}"),
        })
        .collect();
    assert_eq!(hex.len(), 32, "bad GUID {text}");
    let mut be = [0u8; 16];
    for (i, b) in be.iter_mut().enumerate() {
        *b = hex[2 * i] << 4 | hex[2 * i + 1];
    }
    let mut out = be;
    out[0..4].copy_from_slice(&[be[3], be[2], be[1], be[0]]);
    out[4..6].copy_from_slice(&[be[5], be[4]]);
    out[6..8].copy_from_slice(&[be[7], be[6]]);
    out
}

/// One partition.
#[derive(Debug, Clone)]
pub struct Partition {
    /// Type GUID, on-disk order.
    pub type_guid: [u8; 16],
    /// Unique GUID, on-disk order.
    pub unique_guid: [u8; 16],
    /// First LBA (inclusive).
    pub first_lba: u64,
    /// Last LBA (inclusive).
    pub last_lba: u64,
    /// Attribute bits.
    pub attributes: u64,
    /// Name (UTF-16LE on disk, at most 36 code units).
    pub name: String,
}

/// The disk's layout limits: first and last usable LBA for `total_sectors`.
pub fn usable(total_sectors: u64) -> (u64, u64) {
    (2 + ENTRY_SECTORS, total_sectors - 2 - ENTRY_SECTORS)
}

fn entries_bytes(parts: &[Partition]) -> Vec<u8> {
    let mut out = vec![0u8; (ENTRIES * ENTRY_SIZE) as usize];
    for (p, e) in parts.iter().zip(out.chunks_mut(ENTRY_SIZE as usize)) {
        e[0..16].copy_from_slice(&p.type_guid);
        e[16..32].copy_from_slice(&p.unique_guid);
        e[32..40].copy_from_slice(&p.first_lba.to_le_bytes());
        e[40..48].copy_from_slice(&p.last_lba.to_le_bytes());
        e[48..56].copy_from_slice(&p.attributes.to_le_bytes());
        for (i, u) in p.name.encode_utf16().take(36).enumerate() {
            e[56 + 2 * i..58 + 2 * i].copy_from_slice(&u.to_le_bytes());
        }
    }
    out
}

fn header(
    my_lba: u64,
    alt_lba: u64,
    entries_lba: u64,
    total_sectors: u64,
    disk_guid: &[u8; 16],
    entries_crc: u32,
) -> [u8; 512] {
    let (first, last) = usable(total_sectors);
    let mut h = [0u8; 512];
    h[0..8].copy_from_slice(b"EFI PART");
    h[8..12].copy_from_slice(&0x0001_0000u32.to_le_bytes()); // revision 1.0
    h[12..16].copy_from_slice(&92u32.to_le_bytes()); // header size
    h[24..32].copy_from_slice(&my_lba.to_le_bytes());
    h[32..40].copy_from_slice(&alt_lba.to_le_bytes());
    h[40..48].copy_from_slice(&first.to_le_bytes());
    h[48..56].copy_from_slice(&last.to_le_bytes());
    h[56..72].copy_from_slice(disk_guid);
    h[72..80].copy_from_slice(&entries_lba.to_le_bytes());
    h[80..84].copy_from_slice(&ENTRIES.to_le_bytes());
    h[84..88].copy_from_slice(&ENTRY_SIZE.to_le_bytes());
    h[88..92].copy_from_slice(&entries_crc.to_le_bytes());
    let crc = crc32fast::hash(&h[..92]); // computed with the CRC field (16..20) zero
    h[16..20].copy_from_slice(&crc.to_le_bytes());
    h
}

/// The protective MBR: one partition of type 0xEE covering the disk from LBA 1; `boot_code`
/// (at most 440 bytes, e.g. syslinux's gptmbr.bin) at the start.
pub fn protective_mbr(total_sectors: u64, boot_code: Option<&[u8]>) -> [u8; 512] {
    let mut m = [0u8; 512];
    if let Some(code) = boot_code {
        let n = code.len().min(440);
        m[..n].copy_from_slice(&code[..n]);
    }
    let e = &mut m[446..462];
    e[0] = 0x00; // not active
    e[1..4].copy_from_slice(&[0x00, 0x02, 0x00]); // CHS of LBA 1
    e[4] = 0xEE;
    e[5..8].copy_from_slice(&[0xFF, 0xFF, 0xFF]);
    e[8..12].copy_from_slice(&1u32.to_le_bytes());
    let size = u32::try_from(total_sectors - 1).unwrap_or(u32::MAX);
    e[12..16].copy_from_slice(&size.to_le_bytes());
    m[510] = 0x55;
    m[511] = 0xAA;
    m
}

/// Writes the protective MBR, both headers and both entry arrays into `disk` (its length a whole
/// number of sectors).
pub fn write(disk: &mut [u8], disk_guid: &[u8; 16], parts: &[Partition], boot_code: Option<&[u8]>) {
    let total = disk.len() as u64 / SECTOR;
    let entries = entries_bytes(parts);
    let crc = crc32fast::hash(&entries);
    let at = |lba: u64| usize::try_from(lba * SECTOR).expect("an in-memory image fits in usize");
    disk[..512].copy_from_slice(&protective_mbr(total, boot_code));
    disk[at(1)..at(2)].copy_from_slice(&header(1, total - 1, 2, total, disk_guid, crc));
    disk[at(2)..at(2) + entries.len()].copy_from_slice(&entries);
    let backup_entries = total - 1 - ENTRY_SECTORS;
    disk[at(backup_entries)..at(backup_entries) + entries.len()].copy_from_slice(&entries);
    disk[at(total - 1)..at(total)].copy_from_slice(&header(total - 1, 1, backup_entries, total, disk_guid, crc));
}

#[cfg(test)]
#[allow(clippy::cast_possible_truncation)] // test images are a few MiB: their byte offsets fit usize and u32
pub(crate) mod tests {
    use super::*;

    /// A parsed, CRC-checked header: (my_lba, alt_lba, first_usable, last_usable, entries_lba, entries).
    pub(crate) struct Parsed {
        pub my_lba: u64,
        pub alt_lba: u64,
        pub first_usable: u64,
        pub last_usable: u64,
        pub entries: Vec<u8>,
    }

    fn u32_at(b: &[u8], o: usize) -> u32 {
        u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
    }
    fn u64_at(b: &[u8], o: usize) -> u64 {
        u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
    }

    /// Reads and checks the header at `lba` (signature, header CRC, entries CRC).
    pub(crate) fn parse_header(disk: &[u8], lba: u64) -> Result<Parsed, String> {
        let h = &disk[(lba * SECTOR) as usize..][..512];
        if &h[0..8] != b"EFI PART" {
            return Err(format!("no signature at LBA {lba}"));
        }
        let size = u32_at(h, 12) as usize;
        if size != 92 {
            return Err(format!("header size {size}"));
        }
        let mut copy = h[..size].to_vec();
        copy[16..20].fill(0);
        if crc32fast::hash(&copy) != u32_at(h, 16) {
            return Err(format!("header CRC at LBA {lba}"));
        }
        let entries_lba = u64_at(h, 72);
        let n = u32_at(h, 80) as usize * u32_at(h, 84) as usize;
        let entries = disk[(entries_lba * SECTOR) as usize..][..n].to_vec();
        if crc32fast::hash(&entries) != u32_at(h, 88) {
            return Err(format!("entries CRC at LBA {lba}"));
        }
        Ok(Parsed {
            my_lba: u64_at(h, 24),
            alt_lba: u64_at(h, 32),
            first_usable: u64_at(h, 40),
            last_usable: u64_at(h, 48),
            entries,
        })
    }

    /// (type GUID, first, last, attributes) of entry `i`.
    pub(crate) fn entry(p: &Parsed, i: usize) -> ([u8; 16], u64, u64, u64) {
        let e = &p.entries[i * 128..][..128];
        (
            e[0..16].try_into().unwrap(),
            u64_at(e, 32),
            u64_at(e, 40),
            u64_at(e, 48),
        )
    }

    #[test]
    fn guid_byte_order() {
        assert_eq!(
            guid(ESP_TYPE),
            [0x28, 0x73, 0x2A, 0xC1, 0x1F, 0xF8, 0xD2, 0x11, 0xBA, 0x4B, 0x00, 0xA0, 0xC9, 0x3E, 0xC9, 0x3B]
        );
    }

    #[test]
    fn headers_and_crcs() {
        let total = 4096u64;
        let mut disk = vec![0u8; (total * SECTOR) as usize];
        let part = Partition {
            type_guid: guid(ESP_TYPE),
            unique_guid: guid("01234567-89AB-CDEF-0123-456789ABCDEF"),
            first_lba: 2048,
            last_lba: 4000,
            attributes: ATTR_LEGACY_BIOS_BOOTABLE,
            name: "EFI system".into(),
        };
        write(
            &mut disk,
            &guid("FEDCBA98-7654-3210-FEDC-BA9876543210"),
            &[part],
            Some(&[0xAB; 500]),
        );
        let primary = parse_header(&disk, 1).unwrap();
        let backup = parse_header(&disk, total - 1).unwrap();
        assert_eq!((primary.my_lba, primary.alt_lba), (1, total - 1));
        assert_eq!((backup.my_lba, backup.alt_lba), (total - 1, 1));
        assert_eq!((primary.first_usable, primary.last_usable), (34, total - 34));
        assert_eq!(primary.entries, backup.entries);
        assert_eq!(entry(&primary, 0), (guid(ESP_TYPE), 2048, 4000, 4));
        assert_eq!(entry(&primary, 1), ([0; 16], 0, 0, 0));
        // Protective MBR: boot code clipped to 440 bytes, 0xEE entry, signature.
        assert!(disk[..440].iter().all(|&b| b == 0xAB));
        assert!(disk[440..446].iter().all(|&b| b == 0));
        assert_eq!(disk[446 + 4], 0xEE);
        assert_eq!(u32_at(&disk, 446 + 8), 1);
        assert_eq!(u32_at(&disk, 446 + 12), (total - 1) as u32);
        assert_eq!(&disk[510..512], &[0x55, 0xAA]);
        // A flipped byte in the entries breaks the CRC the reader checks.
        disk[(2 * SECTOR) as usize + 40] ^= 1;
        assert_eq!(parse_header(&disk, 1).err().as_deref(), Some("entries CRC at LBA 1"));
        assert!(
            parse_header(&disk, total - 1).is_ok(),
            "the backup has its own copy of the entries"
        );
    }
}
