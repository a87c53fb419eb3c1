//! The GUID Partition Table (UEFI spec 2.10, chapter 5), read and checked
//! from any disk: the header (signature, size, CRC, where it says it is) and
//! its entry array (size, CRC), for any logical block size. The one reader
//! of the format in bootbench: PID 1 finds the boot partition's PARTUUID
//! with it, bootbench-image writes its stick with these types and checks it,
//! bootbench-qemu finds the stick's ESP and the end-to-end tests rewrite a
//! partition GUID.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::document::frame::crc32;

/// Bytes per partition entry (the smallest entry size; larger ones add reserved bytes).
pub const ENTRY_SIZE: u32 = 128;

/// A GUID in its on-disk byte order (the first three fields little-endian)
/// from its text form (`C12A7328-F81F-11D2-BA4B-00A0C93EC93B`, either case);
/// `None` unless 32 hex digits in the 8-4-4-4-12 groups.
pub fn guid(text: &str) -> Option<[u8; 16]> {
    let b = text.as_bytes();
    if b.len() != 36 || [8, 13, 18, 23].iter().any(|&i| b[i] != b'-') {
        return None;
    }
    let hex: Vec<u8> = b
        .iter()
        .filter(|c| **c != b'-')
        .map(|c| char::from(*c).to_digit(16).and_then(|d| u8::try_from(d).ok()))
        .collect::<Option<_>>()?;
    let mut be = [0u8; 16];
    for (i, v) in be.iter_mut().enumerate() {
        *v = hex[2 * i] << 4 | hex[2 * i + 1];
    }
    let mut out = be;
    out[0..4].copy_from_slice(&[be[3], be[2], be[1], be[0]]);
    out[4..6].copy_from_slice(&[be[5], be[4]]);
    out[6..8].copy_from_slice(&[be[7], be[6]]);
    Some(out)
}

/// The text form of an on-disk GUID, lowercase (as the kernel shows a PARTUUID).
pub fn guid_text(b: &[u8; 16]) -> String {
    alloc::format!(
        "{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
        b[3],
        b[2],
        b[1],
        b[0],
        b[5],
        b[4],
        b[7],
        b[6],
        b[8],
        b[9],
        b[10],
        b[11],
        b[12],
        b[13],
        b[14],
        b[15]
    )
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
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
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
            name: char::decode_utf16(units)
                .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
                .collect(),
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
        let crc = crc32(&h[..HEADER_SIZE as usize]);
        h[16..20].copy_from_slice(&crc.to_le_bytes());
        h
    }

    /// Parses the header sector read from `lba` and checks its signature, size, CRC, that it says
    /// it is at `lba`, and that its entry array is of a size [`read`] takes.
    pub fn parse(sector: &[u8], lba: u64) -> Result<Header, GptError> {
        if sector.len() < 512 || &sector[0..8] != b"EFI PART" {
            return Err(GptError::NoSignature { lba });
        }
        let size = u32_at(sector, 12);
        let Some(len) = usize::try_from(size).ok().filter(|n| (92..=512).contains(n)) else {
            return Err(GptError::HeaderSize { lba, size });
        };
        let mut copy = sector[..len].to_vec();
        copy[16..20].fill(0);
        if crc32(&copy) != u32_at(sector, 16) {
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
    pub fn entries_len(&self, lba: u64) -> Result<usize, GptError> {
        let bytes = u64::from(self.entry_count) * u64::from(self.entry_size);
        if self.entry_size < ENTRY_SIZE || !self.entry_size.is_power_of_two() || bytes > MAX_ENTRIES_BYTES {
            return Err(GptError::EntryArray {
                lba,
                count: self.entry_count,
                size: self.entry_size,
            });
        }
        usize::try_from(bytes).map_err(|_| GptError::EntryArray {
            lba,
            count: self.entry_count,
            size: self.entry_size,
        })
    }
}

/// Why a GPT could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GptError {
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
    /// The table at `lba` names LBA `at`, beyond 2^64 bytes.
    Beyond { lba: u64, at: u64 },
}

impl fmt::Display for GptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
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
            GptError::Beyond { lba, at } => write!(f, "GPT header at LBA {lba}: LBA {at} is beyond 2^64 bytes"),
        }
    }
}

/// Why a GPT could not be read from a disk: the disk's read failed (or it
/// ends early), or what was read is not a good table.
#[derive(Debug)]
pub enum ReadError<E> {
    /// Reading the header or the entries of the table at `lba` failed.
    Io {
        /// The header's LBA.
        lba: u64,
        /// The disk's error.
        err: E,
    },
    /// The table at that LBA is not a good one.
    Format(GptError),
}

impl<E: fmt::Display> fmt::Display for ReadError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io { lba, err } => write!(f, "GPT at LBA {lba}: {err}"),
            ReadError::Format(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for GptError {}

impl<E> From<GptError> for ReadError<E> {
    fn from(e: GptError) -> Self {
        ReadError::Format(e)
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
        self.header.entries_crc = crc32(&self.entries);
        true
    }
}

/// Reads the header at `lba` (1 for the primary, the primary's `alt_lba` for
/// the backup) and its entry array from a disk of `block`-byte logical
/// blocks through `read_at(byte offset, buffer)`, and checks them:
/// signature, header size and CRC, `my_lba`, entry array size and CRC.
pub fn read<E>(
    block: u64,
    lba: u64,
    mut read_at: impl FnMut(u64, &mut [u8]) -> Result<(), E>,
) -> Result<Table, ReadError<E>> {
    let mut sector = vec![0u8; usize::try_from(block.max(512)).unwrap_or(512)];
    let at = |l: u64| l.checked_mul(block).ok_or(GptError::Beyond { lba, at: l });
    read_at(at(lba)?, &mut sector).map_err(|err| ReadError::Io { lba, err })?;
    let header = Header::parse(&sector, lba)?;
    let mut entries = vec![0u8; header.entries_len(lba)?];
    read_at(at(header.entries_lba)?, &mut entries).map_err(|err| ReadError::Io { lba, err })?;
    if crc32(&entries) != header.entries_crc {
        return Err(GptError::EntriesCrc { lba }.into());
    }
    Ok(Table { header, entries })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ESP: &str = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B";

    #[test]
    fn guids_in_both_forms() {
        let g = guid(ESP).unwrap();
        assert_eq!(
            g,
            [0x28, 0x73, 0x2A, 0xC1, 0x1F, 0xF8, 0xD2, 0x11, 0xBA, 0x4B, 0x00, 0xA0, 0xC9, 0x3E, 0xC9, 0x3B]
        );
        assert_eq!(guid_text(&g), ESP.to_lowercase());
        assert_eq!(guid(&ESP.to_lowercase()), Some(g));
        for bad in [
            "",
            "C12A7328F81F11D2BA4B00A0C93EC93B",
            "C12A7328-F81F-11D2-BA4B-00A0C93EC93",
            "G12A7328-F81F-11D2-BA4B-00A0C93EC93B",
        ] {
            assert_eq!(guid(bad), None, "{bad}");
        }
    }

    /// A disk of `blocks` logical blocks of `lb` bytes with a primary table
    /// (entries at LBA 2) holding one partition in slot 3.
    fn disk(lb: usize, blocks: u64) -> Vec<u8> {
        let mut entries = vec![0u8; 128 * 128];
        let p = Partition {
            type_guid: guid(ESP).unwrap(),
            unique_guid: [7; 16],
            first_lba: 10,
            last_lba: 20,
            attributes: 4,
            name: "EFI system".into(),
        };
        entries[3 * 128..4 * 128].copy_from_slice(&p.to_entry());
        let h = Header {
            my_lba: 1,
            alt_lba: blocks - 1,
            first_usable: 6,
            last_usable: blocks - 6,
            disk_guid: [1; 16],
            entries_lba: 2,
            entry_count: 128,
            entry_size: 128,
            entries_crc: crc32(&entries),
        };
        let mut d = vec![0u8; lb * usize::try_from(blocks).unwrap()];
        d[lb..lb + 512].copy_from_slice(&h.to_sector());
        d[2 * lb..2 * lb + entries.len()].copy_from_slice(&entries);
        d
    }

    fn read_from(d: &[u8], lb: u64) -> Result<Table, ReadError<&'static str>> {
        read(lb, 1, |at, buf| {
            let at = usize::try_from(at).map_err(|_| "far")?;
            buf.copy_from_slice(d.get(at..at + buf.len()).ok_or("short")?);
            Ok(())
        })
    }

    #[test]
    fn reads_a_table_of_any_block_size() {
        for lb in [512usize, 4096] {
            let t = read_from(&disk(lb, 64), lb as u64).unwrap();
            let parts: Vec<_> = t.partitions().collect();
            assert_eq!(parts.len(), 1, "{lb}");
            let (i, p) = &parts[0];
            assert_eq!(
                (*i, p.first_lba, p.last_lba, p.unique_guid),
                (3, 10, 20, [7; 16]),
                "{lb}"
            );
            assert_eq!(p.name, "EFI system");
            assert_eq!(t.header.disk_guid, [1; 16]);
        }
        // A 4Kn disk read as if of 512-byte blocks has no header at LBA 1.
        assert!(matches!(
            read_from(&disk(4096, 64), 512),
            Err(ReadError::Format(GptError::NoSignature { lba: 1 }))
        ));
    }

    #[test]
    fn a_damaged_or_short_table_is_refused() {
        let good = disk(512, 64);
        let mut bad = good.clone();
        bad[2 * 512 + 3 * 128 + 20] ^= 1;
        assert!(matches!(
            read_from(&bad, 512),
            Err(ReadError::Format(GptError::EntriesCrc { lba: 1 }))
        ));
        let mut bad = good.clone();
        bad[512 + 40] ^= 1;
        assert!(matches!(
            read_from(&bad, 512),
            Err(ReadError::Format(GptError::HeaderCrc { lba: 1 }))
        ));
        assert!(matches!(
            read_from(&good[..2048], 512),
            Err(ReadError::Io { lba: 1, err: "short" })
        ));
        let e = read_from(&bad, 512).unwrap_err();
        assert_eq!(alloc::format!("{e}"), "GPT header at LBA 1: bad header CRC");
    }
}
