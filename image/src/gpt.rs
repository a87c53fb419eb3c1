//! A GUID Partition Table (UEFI spec 2.10, chapter 5): protective MBR, primary header at LBA 1,
//! 128 entries of 128 bytes from LBA 2, and the backup entries and header at the end of the disk.
//! 512-byte sectors. [`write`] lays one out in a disk image in memory; [`read`] reads a header and
//! its entries back from any disk (a file, a slice in a `Cursor`) and checks both CRCs. This is
//! the one implementation of the format in bootbench's host tools: bootbench-qemu finds the
//! stick's ESP with it and the end-to-end tests rewrite a partition GUID with it.

use std::fmt;
use std::io::{self, Cursor, Read, Seek, SeekFrom, Write};

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    /// Type GUID, on-disk order (all zero: an unused entry).
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

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}

fn guid_at(b: &[u8], o: usize) -> [u8; 16] {
    b[o..o + 16].try_into().expect("16 bytes")
}

impl Partition {
    /// The 128-byte entry (the name cut at 36 UTF-16 code units).
    pub fn to_entry(&self) -> [u8; 128] {
        let mut e = [0u8; 128];
        e[0..16].copy_from_slice(&self.type_guid);
        e[16..32].copy_from_slice(&self.unique_guid);
        e[32..40].copy_from_slice(&self.first_lba.to_le_bytes());
        e[40..48].copy_from_slice(&self.last_lba.to_le_bytes());
        e[48..56].copy_from_slice(&self.attributes.to_le_bytes());
        for (i, u) in self.name.encode_utf16().take(36).enumerate() {
            e[56 + 2 * i..58 + 2 * i].copy_from_slice(&u.to_le_bytes());
        }
        e
    }

    /// Reads an entry (its first 128 bytes: what a larger entry adds is reserved); the name ends
    /// at the first NUL, unpaired surrogates become U+FFFD.
    pub fn from_entry(e: &[u8]) -> Partition {
        let units: Vec<u16> = e[56..128]
            .chunks_exact(2)
            .map(|u| u16::from_le_bytes([u[0], u[1]]))
            .take_while(|&u| u != 0)
            .collect();
        Partition {
            type_guid: guid_at(e, 0),
            unique_guid: guid_at(e, 16),
            first_lba: u64_at(e, 32),
            last_lba: u64_at(e, 40),
            attributes: u64_at(e, 48),
            name: String::from_utf16_lossy(&units),
        }
    }

    /// Whether the entry is in use (its type GUID is not zero).
    pub fn is_used(&self) -> bool {
        self.type_guid != [0; 16]
    }
}

/// A GPT header: the fields of UEFI 2.10 table 5.5 (revision 1.0, 92 bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The LBA holding this header.
    pub my_lba: u64,
    /// The LBA of the other header (the backup's for the primary and the other way round).
    pub alt_lba: u64,
    /// First LBA a partition may use.
    pub first_usable: u64,
    /// Last LBA a partition may use.
    pub last_usable: u64,
    /// Disk GUID, on-disk order.
    pub disk_guid: [u8; 16],
    /// First LBA of this header's entry array.
    pub entries_lba: u64,
    /// Entries in the array.
    pub entry_count: u32,
    /// Bytes per entry (128 times a power of two).
    pub entry_size: u32,
    /// CRC-32 of the entry array (`entry_count * entry_size` bytes).
    pub entries_crc: u32,
}

/// Header bytes bootbench writes (revision 1.0); a reader takes up to a sector.
const HEADER_SIZE: u32 = 92;
/// The largest entry array [`read`] takes: 1 MiB (the spec's minimum is 16 KiB, what every
/// partitioning tool writes).
const MAX_ENTRIES_BYTES: u64 = 1 << 20;

impl Header {
    /// The header's sector: the 92 bytes, their CRC computed with the CRC field zero, then zeros.
    pub fn to_sector(&self) -> [u8; 512] {
        let mut h = [0u8; 512];
        h[0..8].copy_from_slice(b"EFI PART");
        h[8..12].copy_from_slice(&0x0001_0000u32.to_le_bytes()); // revision 1.0
        h[12..16].copy_from_slice(&HEADER_SIZE.to_le_bytes());
        h[24..32].copy_from_slice(&self.my_lba.to_le_bytes());
        h[32..40].copy_from_slice(&self.alt_lba.to_le_bytes());
        h[40..48].copy_from_slice(&self.first_usable.to_le_bytes());
        h[48..56].copy_from_slice(&self.last_usable.to_le_bytes());
        h[56..72].copy_from_slice(&self.disk_guid);
        h[72..80].copy_from_slice(&self.entries_lba.to_le_bytes());
        h[80..84].copy_from_slice(&self.entry_count.to_le_bytes());
        h[84..88].copy_from_slice(&self.entry_size.to_le_bytes());
        h[88..92].copy_from_slice(&self.entries_crc.to_le_bytes());
        let crc = crc32fast::hash(&h[..HEADER_SIZE as usize]);
        h[16..20].copy_from_slice(&crc.to_le_bytes());
        h
    }

    /// Parses the header sector read from `lba` and checks its signature, size, CRC, that it says
    /// it is at `lba`, and that its entry array is of a size [`read`] takes.
    pub fn parse(sector: &[u8; 512], lba: u64) -> Result<Header, GptError> {
        if &sector[0..8] != b"EFI PART" {
            return Err(GptError::NoSignature { lba });
        }
        let size = u32_at(sector, 12);
        let Some(len) = usize::try_from(size).ok().filter(|n| (92..=512).contains(n)) else {
            return Err(GptError::HeaderSize { lba, size });
        };
        let mut copy = sector[..len].to_vec();
        copy[16..20].fill(0);
        if crc32fast::hash(&copy) != u32_at(sector, 16) {
            return Err(GptError::HeaderCrc { lba });
        }
        let h = Header {
            my_lba: u64_at(sector, 24),
            alt_lba: u64_at(sector, 32),
            first_usable: u64_at(sector, 40),
            last_usable: u64_at(sector, 48),
            disk_guid: guid_at(sector, 56),
            entries_lba: u64_at(sector, 72),
            entry_count: u32_at(sector, 80),
            entry_size: u32_at(sector, 84),
            entries_crc: u32_at(sector, 88),
        };
        if h.my_lba != lba {
            return Err(GptError::NotHere { lba, my_lba: h.my_lba });
        }
        h.entries_len(lba)?;
        Ok(h)
    }

    /// Bytes of the entry array, when its entry size and length are ones [`read`] takes.
    fn entries_len(&self, lba: u64) -> Result<usize, GptError> {
        let bytes = u64::from(self.entry_count) * u64::from(self.entry_size);
        if self.entry_size < ENTRY_SIZE || !self.entry_size.is_power_of_two() || bytes > MAX_ENTRIES_BYTES {
            return Err(GptError::EntryArray {
                lba,
                count: self.entry_count,
                size: self.entry_size,
            });
        }
        Ok(usize::try_from(bytes).expect("at most 1 MiB"))
    }
}

/// Why a GPT could not be read.
#[derive(Debug)]
pub enum GptError {
    /// Reading (or writing) the header or entries of the table at `lba` failed, or the disk ends
    /// before them.
    Io { lba: u64, err: io::Error },
    /// No `EFI PART` signature at `lba`.
    NoSignature { lba: u64 },
    /// The header size is under 92 bytes or over a sector.
    HeaderSize { lba: u64, size: u32 },
    /// The header's CRC does not match it.
    HeaderCrc { lba: u64 },
    /// The header read from `lba` says it is at `my_lba`.
    NotHere { lba: u64, my_lba: u64 },
    /// The entry size is not 128 times a power of two, or the array is over 1 MiB.
    EntryArray { lba: u64, count: u32, size: u32 },
    /// The entry array's CRC does not match the header's.
    EntriesCrc { lba: u64 },
}

impl fmt::Display for GptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GptError::Io { lba, err } => write!(f, "GPT at LBA {lba}: {err}"),
            GptError::NoSignature { lba } => write!(f, "no GPT header (EFI PART) at LBA {lba}"),
            GptError::HeaderSize { lba, size } => {
                write!(f, "GPT header at LBA {lba}: size {size}, expected 92 to 512 bytes")
            }
            GptError::HeaderCrc { lba } => write!(f, "GPT header at LBA {lba}: bad header CRC"),
            GptError::NotHere { lba, my_lba } => {
                write!(f, "GPT header at LBA {lba}: says it is at LBA {my_lba}")
            }
            GptError::EntryArray { lba, count, size } => write!(
                f,
                "GPT header at LBA {lba}: {count} entries of {size} bytes, expected entries of 128 bytes \
                 times a power of two, at most 1 MiB in all"
            ),
            GptError::EntriesCrc { lba } => write!(f, "GPT header at LBA {lba}: bad partition entries CRC"),
        }
    }
}

impl std::error::Error for GptError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GptError::Io { err, .. } => Some(err),
            _ => None,
        }
    }
}

impl From<GptError> for io::Error {
    fn from(e: GptError) -> io::Error {
        let kind = match &e {
            GptError::Io { err, .. } => err.kind(),
            _ => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, e)
    }
}

/// One header and its entry array, as read (both checked) or as about to be written.
#[derive(Debug, Clone)]
pub struct Table {
    /// The header.
    pub header: Header,
    /// The entry array: `entry_count` entries of `entry_size` bytes.
    pub entries: Vec<u8>,
}

impl Table {
    /// Entry `i`; `None` past the array.
    pub fn entry(&self, i: usize) -> Option<Partition> {
        let size = usize::try_from(self.header.entry_size).ok()?;
        self.entries.chunks_exact(size).nth(i).map(Partition::from_entry)
    }

    /// The entries in use, with their index.
    pub fn partitions(&self) -> impl Iterator<Item = (usize, Partition)> + '_ {
        let size = usize::try_from(self.header.entry_size).unwrap_or(usize::MAX);
        self.entries
            .chunks_exact(size)
            .map(Partition::from_entry)
            .enumerate()
            .filter(|(_, p)| p.is_used())
    }

    /// Gives entry `i` the unique GUID `guid` (on-disk order) and the header the entries' new
    /// CRC; `false` (nothing changed) past the array.
    pub fn set_unique_guid(&mut self, i: usize, guid: [u8; 16]) -> bool {
        let size = usize::try_from(self.header.entry_size).unwrap_or(usize::MAX);
        let Some(e) = self.entries.chunks_exact_mut(size).nth(i) else {
            return false;
        };
        e[16..32].copy_from_slice(&guid);
        self.header.entries_crc = crc32fast::hash(&self.entries);
        true
    }

    /// Writes the entry array at `entries_lba` and the header (its CRC computed) at `my_lba`.
    pub fn write_to<D: Write + Seek>(&self, disk: &mut D) -> io::Result<()> {
        disk.seek(SeekFrom::Start(self.header.entries_lba * SECTOR))?;
        disk.write_all(&self.entries)?;
        disk.seek(SeekFrom::Start(self.header.my_lba * SECTOR))?;
        disk.write_all(&self.header.to_sector())
    }
}

/// Reads the header at `lba` (1 for the primary, the primary's `alt_lba` for the backup) and its
/// entry array, and checks them: signature, header size and CRC, `my_lba`, entries CRC.
pub fn read<D: Read + Seek>(disk: &mut D, lba: u64) -> Result<Table, GptError> {
    let io = |err| GptError::Io { lba, err };
    let at = |lba: u64| {
        lba.checked_mul(SECTOR)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "LBA beyond 2^64 bytes"))
    };
    let mut sector = [0u8; 512];
    disk.seek(SeekFrom::Start(at(lba).map_err(io)?)).map_err(io)?;
    disk.read_exact(&mut sector).map_err(io)?;
    let header = Header::parse(&sector, lba)?;
    let mut entries = vec![0u8; header.entries_len(lba)?];
    disk.seek(SeekFrom::Start(at(header.entries_lba).map_err(io)?))
        .map_err(io)?;
    disk.read_exact(&mut entries).map_err(io)?;
    if crc32fast::hash(&entries) != header.entries_crc {
        return Err(GptError::EntriesCrc { lba });
    }
    Ok(Table { header, entries })
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
        table
            .write_to(&mut cursor)
            .expect("a disk of whole sectors, larger than both tables, holds them");
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

    fn read_at(disk: &[u8], lba: u64) -> Result<Table, GptError> {
        read(&mut Cursor::new(disk), lba)
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
        assert_eq!(u32_at(&disk, 446 + 8), 1);
        assert_eq!(u32_at(&disk, 446 + 12), (total - 1) as u32);
        assert_eq!(&disk[510..512], &[0x55, 0xAA]);
        // A flipped byte in the entries breaks the CRC the reader checks.
        disk[(2 * SECTOR) as usize + 40] ^= 1;
        assert!(matches!(read_at(&disk, 1), Err(GptError::EntriesCrc { lba: 1 })));
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
            assert!(want(&e), "byte {at}: {e:?}");
            assert!(e.to_string().contains("LBA 1"), "{e}");
        }
        // The backup read as if it were at another LBA; an entry size the reader does not take.
        let mut moved = good.clone();
        moved.copy_within((total - 1) as usize * 512..total as usize * 512, 2048 * 512);
        assert!(matches!(
            read_at(&moved, 2048),
            Err(GptError::NotHere { lba: 2048, my_lba }) if my_lba == total - 1
        ));
        let mut header = read_at(&good, 1).unwrap().header;
        header.entry_size = 100;
        let mut odd = good.clone();
        odd[512..1024].copy_from_slice(&header.to_sector());
        assert!(matches!(read_at(&odd, 1), Err(GptError::EntryArray { size: 100, .. })));
        // A disk that ends before its entries: an I/O error, as an io::Error of that kind.
        let e = read_at(&good[..1024 + 100], 1).unwrap_err();
        assert!(matches!(e, GptError::Io { lba: 1, .. }), "{e:?}");
        assert_eq!(io::Error::from(e).kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(
            io::Error::from(GptError::HeaderCrc { lba: 1 }).kind(),
            io::ErrorKind::InvalidData
        );
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
            t.write_to(&mut cursor).unwrap();
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
