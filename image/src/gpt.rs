//! The stick's GUID Partition Table: protective MBR, primary header at LBA 1, 128 entries of 128
//! bytes from LBA 2, and the backup entries and header at the end of the disk, in 512-byte
//! sectors. [`write`] lays one out in a disk image in memory; [`read`] reads a header and its
//! entries back from any disk (a file, a slice in a `Cursor`) with [`bench_core::device::gpt`], the one
//! reader of the format, which PID 1 uses too. bootbench-qemu finds the stick's ESP with it and
//! the end-to-end tests rewrite a partition GUID with it.

use std::io::{self, Cursor, Read, Seek, SeekFrom, Write};

use bench_core::device::gpt::ReadError;
pub use bench_core::device::gpt::{GptError, Header, Partition, Table, ENTRY_SIZE};

/// Bytes per logical block.
pub const SECTOR: u64 = 512;
/// Entries in each partition entry array.
pub const ENTRIES: u32 = 128;
/// Sectors holding one entry array (128 * 128 / 512).
pub const ENTRY_SECTORS: u64 = 32;

/// The EFI system partition type, C12A7328-F81F-11D2-BA4B-00A0C93EC93B.
pub const ESP_TYPE: &str = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B";
/// Partition attribute bit 2: legacy BIOS bootable (what syslinux's gptmbr.bin looks for).
pub const ATTR_LEGACY_BIOS_BOOTABLE: u64 = 1 << 2;

/// A GUID in its on-disk byte order from the text form of a constant; panics on a bad one.
pub fn guid(text: &str) -> [u8; 16] {
    bench_core::device::gpt::guid(text).unwrap_or_else(|| panic!("bad GUID {text}"))
}

/// Reads the header at `lba` (1 for the primary, the primary's `alt_lba` for the backup) and its
/// entry array, and checks them ([`bench_core::device::gpt::read`]). A table that is not good is an
/// `InvalidData` error holding the [`GptError`].
pub fn read<D: Read + Seek>(disk: &mut D, lba: u64) -> io::Result<Table> {
    bench_core::device::gpt::read(SECTOR, lba, |at, buf| {
        disk.seek(SeekFrom::Start(at))?;
        disk.read_exact(buf)
    })
    .map_err(|e| match e {
        ReadError::Io { err, .. } => err,
        ReadError::Format(e) => io::Error::new(io::ErrorKind::InvalidData, e),
    })
}

/// Writes the entry array at `entries_lba` and the header (its CRC computed) at `my_lba`.
pub fn write_table<D: Write + Seek>(table: &Table, disk: &mut D) -> io::Result<()> {
    disk.seek(SeekFrom::Start(table.header.entries_lba * SECTOR))?;
    disk.write_all(&table.entries)?;
    disk.seek(SeekFrom::Start(table.header.my_lba * SECTOR))?;
    disk.write_all(&table.header.to_sector())
}

/// The disk's layout limits: first and last usable LBA for `total_sectors`.
pub fn usable(total_sectors: u64) -> (u64, u64) {
    (2 + ENTRY_SECTORS, total_sectors - 2 - ENTRY_SECTORS)
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
    let (first_usable, last_usable) = usable(total);
    let mut entries = vec![0u8; (ENTRIES * ENTRY_SIZE) as usize];
    for (p, e) in parts.iter().zip(entries.chunks_exact_mut(ENTRY_SIZE as usize)) {
        e.copy_from_slice(&p.to_entry());
    }
    let primary = Table {
        header: Header {
            my_lba: 1,
            alt_lba: total - 1,
            first_usable,
            last_usable,
            disk_guid: *disk_guid,
            entries_lba: 2,
            entry_count: ENTRIES,
            entry_size: ENTRY_SIZE,
            entries_crc: crc32fast::hash(&entries),
        },
        entries,
    };
    let backup = Table {
        header: Header {
            my_lba: total - 1,
            alt_lba: 1,
            entries_lba: total - 1 - ENTRY_SECTORS,
            ..primary.header.clone()
        },
        entries: primary.entries.clone(),
    };
    disk[..512].copy_from_slice(&protective_mbr(total, boot_code));
    let mut cursor = Cursor::new(disk);
    for table in [primary, backup] {
        write_table(&table, &mut cursor).expect("a disk of whole sectors, larger than both tables, holds them");
    }
}

#[cfg(test)]
#[allow(clippy::cast_possible_truncation)] // test images are a few MiB: their byte offsets fit usize and u32
mod tests {
    use super::*;

    fn esp(first_lba: u64, last_lba: u64) -> Partition {
        Partition {
            type_guid: guid(ESP_TYPE),
            unique_guid: guid("01234567-89AB-CDEF-0123-456789ABCDEF"),
            first_lba,
            last_lba,
            attributes: ATTR_LEGACY_BIOS_BOOTABLE,
            name: "EFI system".into(),
        }
    }

    /// A disk of `total` sectors with the ESP of [`esp`] in slot 0.
    fn disk(total: u64) -> Vec<u8> {
        let mut disk = vec![0u8; (total * SECTOR) as usize];
        write(
            &mut disk,
            &guid("FEDCBA98-7654-3210-FEDC-BA9876543210"),
            &[esp(2048, 4000)],
            Some(&[0xAB; 500]),
        );
        disk
    }

    fn read_at(disk: &[u8], lba: u64) -> io::Result<Table> {
        read(&mut Cursor::new(disk), lba)
    }

    /// The format error a read gave.
    fn format(e: &io::Error) -> &GptError {
        assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{e}");
        e.get_ref().and_then(|r| r.downcast_ref()).expect("a GptError")
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
        let mut disk = disk(total);
        let primary = read_at(&disk, 1).unwrap();
        let backup = read_at(&disk, total - 1).unwrap();
        let h = &primary.header;
        assert_eq!((h.my_lba, h.alt_lba, h.entries_lba), (1, total - 1, 2));
        assert_eq!(
            (backup.header.my_lba, backup.header.alt_lba, backup.header.entries_lba),
            (total - 1, 1, total - 33)
        );
        assert_eq!((h.first_usable, h.last_usable), (34, total - 34));
        assert_eq!(h.disk_guid, guid("FEDCBA98-7654-3210-FEDC-BA9876543210"));
        assert_eq!((h.entry_count, h.entry_size), (128, 128));
        assert_eq!(primary.entries, backup.entries);
        assert_eq!(primary.entry(0), Some(esp(2048, 4000)));
        assert_eq!(primary.entry(1).map(|p| p.is_used()), Some(false));
        assert_eq!(primary.entry(128), None);
        let used: Vec<usize> = primary.partitions().map(|(i, _)| i).collect();
        assert_eq!(used, [0]);
        // Protective MBR: boot code clipped to 440 bytes, 0xEE entry, signature.
        assert!(disk[..440].iter().all(|&b| b == 0xAB));
        assert!(disk[440..446].iter().all(|&b| b == 0));
        assert_eq!(disk[446 + 4], 0xEE);
        assert_eq!(disk[446 + 8..446 + 12], 1u32.to_le_bytes());
        assert_eq!(disk[446 + 12..446 + 16], ((total - 1) as u32).to_le_bytes());
        assert_eq!(&disk[510..512], &[0x55, 0xAA]);
        // A flipped byte in the entries breaks the CRC the reader checks.
        disk[(2 * SECTOR) as usize + 40] ^= 1;
        assert_eq!(
            format(&read_at(&disk, 1).unwrap_err()),
            &GptError::EntriesCrc { lba: 1 }
        );
        assert!(
            read_at(&disk, total - 1).is_ok(),
            "the backup has its own copy of the entries"
        );
    }

    #[test]
    fn partitions_round_trip_through_their_entries() {
        let mut p = esp(34, 99);
        p.name = "é".repeat(40);
        let back = Partition::from_entry(&p.to_entry());
        assert_eq!(back.name.chars().count(), 36, "cut at 36 code units");
        p.name = back.name.clone();
        assert_eq!(back, p);
        assert!(!Partition::from_entry(&[0; 128]).is_used());
    }

    #[test]
    fn damaged_or_missing_headers_are_refused_with_where() {
        let total = 4096u64;
        let good = disk(total);
        type Check = fn(&GptError) -> bool;
        let cases: [(usize, u8, Check); 4] = [
            (512, b'X', |e| matches!(e, GptError::NoSignature { lba: 1 })),
            (512 + 13, 2, |e| matches!(e, GptError::HeaderSize { lba: 1, size: 604 })),
            (512 + 40, 1, |e| matches!(e, GptError::HeaderCrc { lba: 1 })),
            (512 + 90, 1, |e| matches!(e, GptError::HeaderCrc { lba: 1 })),
        ];
        for (at, flip, want) in cases {
            let mut d = good.clone();
            d[at] ^= flip;
            let e = read_at(&d, 1).unwrap_err();
            assert!(want(format(&e)), "byte {at}: {e:?}");
            assert!(e.to_string().contains("LBA 1"), "{e}");
        }
        // The backup read as if it were at another LBA; an entry size the reader does not take.
        let mut moved = good.clone();
        moved.copy_within((total - 1) as usize * 512..total as usize * 512, 2048 * 512);
        assert!(matches!(
            format(&read_at(&moved, 2048).unwrap_err()),
            GptError::NotHere { lba: 2048, my_lba } if *my_lba == total - 1
        ));
        let mut header = read_at(&good, 1).unwrap().header;
        header.entry_size = 100;
        let mut odd = good.clone();
        odd[512..1024].copy_from_slice(&header.to_sector());
        assert!(matches!(
            format(&read_at(&odd, 1).unwrap_err()),
            GptError::EntryArray { size: 100, .. }
        ));
        // A disk that ends before its entries: the disk's own error.
        let e = read_at(&good[..1024 + 100], 1).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{e}");
    }

    #[test]
    fn a_new_unique_guid_is_written_back_with_both_crcs() {
        let total = 4096u64;
        let mut disk = disk(total);
        let new = guid("00112233-4455-6677-8899-AABBCCDDEEFF");
        let mut cursor = Cursor::new(&mut disk[..]);
        for lba in [1, total - 1] {
            let mut t = read(&mut cursor, lba).unwrap();
            assert!(t.set_unique_guid(0, new));
            assert!(!t.set_unique_guid(128, new), "past the array");
            write_table(&t, &mut cursor).unwrap();
        }
        for lba in [1, total - 1] {
            let t = read_at(&disk, lba).unwrap();
            assert_eq!(
                t.entry(0),
                Some(Partition {
                    unique_guid: new,
                    ..esp(2048, 4000)
                })
            );
        }
    }
}
