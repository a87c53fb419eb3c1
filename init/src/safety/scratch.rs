//! bootbench's own scratch label: a disk bootbench wrote holds random data
//! everywhere, which the data sampling would take for someone's data. So a
//! run marks each disk it wrote with this record, and the next run counts a
//! disk that carries a valid one as blank (its data is bootbench's own).
//!
//! The record is the first 4096 bytes of the disk (its first logical block,
//! whatever the block size): any real later use of the disk (a partition
//! table, a filesystem, an md member's data, a LUKS header or data area)
//! writes there and so destroys the label. The signature scan still
//! applies to a labelled disk, so a filesystem made on it later that left
//! byte 0 alone is still found and refused.
//!
//! Layout (little-endian): magic `BOOTBENCH-SCRATCH` (24 bytes, zero
//! padded) at 0, format version (u32) at 24, CRC-32 (IEEE, zlib's) of the
//! whole 4096 bytes with this field zero at 28, time written (Unix seconds,
//! u64) at 32, the disk's size in bytes (u64) at 40, then three strings,
//! each a u16 length and its UTF-8 bytes in a fixed field: the run's id at
//! 48 (128 bytes), the machine's name at 176 (128), bootbench's version at
//! 304 (64). Everything else is zero; in particular bytes 510 and 511 are,
//! so it is not an MBR, and no probe of the signature table matches it (a
//! unit test checks).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use bench_core::document::frame::crc32;

use crate::sys::buf::AlignedBuf;

use super::{device_size, read_region};

/// The record's length, and where it is: bytes 0..4096 of the disk.
pub const LABEL_BYTES: usize = 4096;
/// The first bytes of the record.
pub const MAGIC: &[u8; 17] = b"BOOTBENCH-SCRATCH";
/// The format version this code writes and reads.
pub const VERSION: u32 = 1;

const MAGIC_FIELD: usize = 24;
const CRC_AT: usize = 28;
const RUN_ID: (usize, usize) = (48, 128);
const MACHINE: (usize, usize) = (176, 128);
const BOOTBENCH: (usize, usize) = (304, 64);

/// What a scratch label records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScratchLabel {
    /// When it was written, Unix seconds.
    pub written_unix: u64,
    /// The id of the run that wrote the disk (at most 126 bytes are kept).
    pub run_id: String,
    /// The machine's name (at most 126 bytes are kept).
    pub machine: String,
    /// bootbench's version (at most 62 bytes are kept).
    pub bootbench_version: String,
    /// The disk's size in bytes when it was written; a label on a disk of
    /// another size is not valid.
    pub disk_size: u64,
}

/// `s` cut to at most `max` bytes at a character boundary.
fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn put_str(buf: &mut [u8], (at, field): (usize, usize), s: &str) {
    let s = cut(s, field - 2);
    let len = u16::try_from(s.len()).expect("a field is under 64 KiB");
    buf[at..at + 2].copy_from_slice(&len.to_le_bytes());
    buf[at + 2..at + 2 + s.len()].copy_from_slice(s.as_bytes());
}

fn get_str(buf: &[u8], (at, field): (usize, usize)) -> Option<String> {
    let len = usize::from(u16::from_le_bytes([buf[at], buf[at + 1]]));
    if len > field - 2 {
        return None;
    }
    String::from_utf8(buf[at + 2..at + 2 + len].to_vec()).ok()
}

fn u64_at(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(buf[at..at + 4].try_into().expect("4 bytes"))
}

/// The CRC of a record: over all of it, with the CRC field taken as zero.
fn record_crc(buf: &[u8]) -> u32 {
    let mut copy = buf[..LABEL_BYTES].to_vec();
    copy[CRC_AT..CRC_AT + 4].fill(0);
    crc32(&copy)
}

impl ScratchLabel {
    /// The 4096-byte record (strings longer than their field are cut at a
    /// character boundary).
    pub fn encode(&self) -> Vec<u8> {
        let mut buf = vec![0u8; LABEL_BYTES];
        buf[..MAGIC.len()].copy_from_slice(MAGIC);
        buf[MAGIC_FIELD..MAGIC_FIELD + 4].copy_from_slice(&VERSION.to_le_bytes());
        buf[32..40].copy_from_slice(&self.written_unix.to_le_bytes());
        buf[40..48].copy_from_slice(&self.disk_size.to_le_bytes());
        put_str(&mut buf, RUN_ID, &self.run_id);
        put_str(&mut buf, MACHINE, &self.machine);
        put_str(&mut buf, BOOTBENCH, &self.bootbench_version);
        let crc = record_crc(&buf);
        buf[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
        buf
    }

    /// The label in `buf` (the first 4096 bytes of a disk of `disk_size`
    /// bytes), if its magic, version and CRC are right and it records this
    /// size.
    pub fn decode(buf: &[u8], disk_size: u64) -> Option<ScratchLabel> {
        let buf = buf.get(..LABEL_BYTES)?;
        let mut magic = [0u8; MAGIC_FIELD];
        magic[..MAGIC.len()].copy_from_slice(MAGIC);
        if buf[..MAGIC_FIELD] != magic
            || u32_at(buf, MAGIC_FIELD) != VERSION
            || u32_at(buf, CRC_AT) != record_crc(buf)
            || u64_at(buf, 40) != disk_size
        {
            return None;
        }
        Some(ScratchLabel {
            written_unix: u64_at(buf, 32),
            disk_size,
            run_id: get_str(buf, RUN_ID)?,
            machine: get_str(buf, MACHINE)?,
            bootbench_version: get_str(buf, BOOTBENCH)?,
        })
    }
}

/// Write `label` at byte 0 of the disk behind `f` (one positioned write of
/// 4096 bytes from an aligned buffer, so an O_DIRECT descriptor takes it
/// too), then `fdatasync`. The caller holds the write permit for the disk.
pub fn write_scratch_label(f: &File, label: &ScratchLabel) -> io::Result<()> {
    let mut buf = AlignedBuf::new(LABEL_BYTES).ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
    buf.as_mut_slice()[..LABEL_BYTES].copy_from_slice(&label.encode());
    f.write_all_at(&buf.as_slice()[..LABEL_BYTES], 0)?;
    f.sync_data()
}

/// The scratch label of the disk behind `f`, if it has a valid one for its
/// present size (`None` too for a disk shorter than the record).
pub fn read_scratch_label(f: &File) -> io::Result<Option<ScratchLabel>> {
    let size = device_size(f)?;
    let buf = read_region(f, 0, LABEL_BYTES as u64)?;
    Ok(ScratchLabel::decode(&buf, size))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::device::signatures::{read_plan, scan, Regions};

    fn label(size: u64) -> ScratchLabel {
        ScratchLabel {
            written_unix: 1_760_000_000,
            run_id: "bench-7f3a".into(),
            machine: "r740-rack3".into(),
            bootbench_version: "0.1.0".into(),
            disk_size: size,
        }
    }

    #[test]
    fn round_trip() {
        let l = label(8 << 30);
        let buf = l.encode();
        assert_eq!(buf.len(), LABEL_BYTES);
        assert_eq!(ScratchLabel::decode(&buf, 8 << 30), Some(l));
    }

    #[test]
    fn a_damaged_record_or_another_size_is_not_a_label() {
        let size = 8 << 30;
        let buf = label(size).encode();
        // A flipped bit anywhere (inside a field, in the zeros, in the CRC).
        for at in [0, 25, 29, 33, 50, 200, 310, 4095] {
            let mut bad = buf.clone();
            bad[at] ^= 0x10;
            assert_eq!(ScratchLabel::decode(&bad, size), None, "bit flipped at {at}");
        }
        // Another version with a correct CRC.
        let mut v2 = buf.clone();
        v2[24] = 2;
        let crc = record_crc(&v2);
        v2[28..32].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(ScratchLabel::decode(&v2, size), None);
        // The disk's size changed (a bigger disk behind the same name, a
        // loop device over another file).
        assert_eq!(ScratchLabel::decode(&buf, size + 4096), None);
        assert_eq!(ScratchLabel::decode(&buf[..100], size), None);
    }

    #[test]
    fn long_strings_are_cut_at_a_character_boundary() {
        let mut l = label(1 << 30);
        l.machine = "é".repeat(100); // 200 bytes
        let got = ScratchLabel::decode(&l.encode(), 1 << 30).unwrap();
        assert_eq!(got.machine, "é".repeat(63)); // 126 bytes
    }

    #[test]
    fn the_label_is_no_signature() {
        for size in [1 << 20, (64 << 20) + 512] {
            let buf = label(size).encode();
            assert_eq!(&buf[510..512], &[0, 0]);
            let mut img = vec![0u8; usize::try_from(size).unwrap()];
            img[..LABEL_BYTES].copy_from_slice(&buf);
            let parts: Vec<(u64, &[u8])> = read_plan(size)
                .into_iter()
                .map(|(s, l)| {
                    let s_ = usize::try_from(s).unwrap();
                    (s, &img[s_..s_ + usize::try_from(l).unwrap()])
                })
                .collect();
            assert_eq!(scan(&Regions::new(size, 512, parts)), vec![], "size {size}");
        }
    }
}
