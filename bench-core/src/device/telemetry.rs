//! The NVMe telemetry log's header (host-initiated, log page 07h; the
//! controller-initiated log 08h has the same header), parsed into a
//! [`TelemetryHeader`]: which vendor can read it, where its data areas end,
//! and how many bytes to fetch for data areas 1 and 2. Pure: bytes in, a
//! record out; init reads the log and saves it. The parser takes any byte
//! slice and never panics (the fuzz target holds it to that).
//!
//! Layout: libnvme (github linux-nvme/libnvme) `src/nvme/types.h`
//! `struct nvme_telemetry_log`: byte 0 log identifier, 1-4 reserved, 5-7
//! IEEE OUI, 8-9 data area 1 last block, 10-11 data area 2 last block,
//! 12-13 data area 3 last block, 14-15 reserved, 16-19 data area 4 last
//! block, 20-379 reserved, 380 host-initiated scope, 381 host-initiated
//! data generation number, 382 controller-initiated data available, 383
//! controller-initiated data generation number, 384-511 reason identifier;
//! little-endian. Data area 4 exists only when Identify Controller's LPA
//! bit 6 (`NVME_CTRL_LPA_DA4_TELEMETRY`) is set and the host enabled it
//! (Host Behavior Support's ETDAS). The log is in 512-byte blocks, block 0
//! the header, so the bytes up to the end of data area n are 512 x (its
//! last block + 1), and a last block of 0 means an empty area, as libnvme's
//! `nvme_get_telemetry_log` (`src/nvme/linux.c`) reads it.
//!
//! [`read_host_telemetry`] is the reading itself, over any [`LogPages`]
//! (init's is the NVMe admin passthrough; the tests' a fake that records
//! every command): the header with "create telemetry host-initiated data"
//! (LSP bit 0), then data areas 1 and 2 in chunks at log page offsets, as
//! libnvme does (the generation number is not re-read at the end).

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

/// Bytes of the header, and of each of the log's blocks.
pub const BLOCK: usize = 512;
/// Log identifier of the host-initiated telemetry log.
pub const LID_HOST: u8 = 0x07;
/// Log identifier of the controller-initiated telemetry log.
pub const LID_CONTROLLER: u8 = 0x08;

/// Why a telemetry header was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TelemetryError {
    /// Fewer bytes than the header.
    Short {
        /// Bytes given.
        got: usize,
    },
    /// The log identifier is neither 07h nor 08h.
    LogIdentifier {
        /// The identifier found.
        got: u8,
    },
}

impl core::fmt::Display for TelemetryError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            TelemetryError::Short { got } => write!(f, "telemetry header too short: {got} bytes, {BLOCK} needed"),
            TelemetryError::LogIdentifier { got } => write!(f, "log identifier {got:#04x} is not a telemetry log"),
        }
    }
}

/// A telemetry log's header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TelemetryHeader {
    /// Log identifier (byte 0): 07h host-initiated, 08h
    /// controller-initiated.
    pub log_identifier: u8,
    /// IEEE OUI of the vendor that can read the data (bytes 5-7, least
    /// significant byte first).
    pub ieee_oui: u32,
    /// Data area 1 last block (bytes 8-9).
    pub data_area_1_last_block: u16,
    /// Data area 2 last block (bytes 10-11).
    pub data_area_2_last_block: u16,
    /// Data area 3 last block (bytes 12-13).
    pub data_area_3_last_block: u16,
    /// Data area 4 last block (bytes 16-19), where data area 4 is
    /// supported and enabled.
    pub data_area_4_last_block: Option<u32>,
    /// Host-initiated data generation number (byte 381).
    pub host_generation: u8,
    /// Controller-initiated data available (byte 382 is 1).
    pub controller_data_available: bool,
    /// Controller-initiated data generation number (byte 383).
    pub controller_generation: u8,
    /// Reason identifier, vendor specific (bytes 384-511).
    pub reason_identifier: Vec<u8>,
}

impl TelemetryHeader {
    /// Bytes of the log up to the end of data area 1, the header block
    /// included; the header alone when the area is empty.
    pub fn area_1_bytes(&self) -> u64 {
        (u64::from(self.data_area_1_last_block) + 1) * BLOCK as u64
    }

    /// Bytes of the log up to the end of data area 2 (areas 1 and 2 and
    /// the header); never less than [`Self::area_1_bytes`].
    pub fn area_2_bytes(&self) -> u64 {
        let last = self.data_area_2_last_block.max(self.data_area_1_last_block);
        (u64::from(last) + 1) * BLOCK as u64
    }
}

/// Parse a telemetry log's first block. `data_area_4` says whether the
/// controller supports data area 4 (LPA bit 6) and the host enabled it
/// (ETDAS); without it bytes 16-19 are not read.
pub fn parse_telemetry_header(block: &[u8], data_area_4: bool) -> Result<TelemetryHeader, TelemetryError> {
    let Some(b) = block.get(..BLOCK) else {
        return Err(TelemetryError::Short { got: block.len() });
    };
    if b[0] != LID_HOST && b[0] != LID_CONTROLLER {
        return Err(TelemetryError::LogIdentifier { got: b[0] });
    }
    let u16_at = |at: usize| u16::from_le_bytes([b[at], b[at + 1]]);
    Ok(TelemetryHeader {
        log_identifier: b[0],
        ieee_oui: u32::from_le_bytes([b[5], b[6], b[7], 0]),
        data_area_1_last_block: u16_at(8),
        data_area_2_last_block: u16_at(10),
        data_area_3_last_block: u16_at(12),
        data_area_4_last_block: data_area_4.then(|| u32::from_le_bytes([b[16], b[17], b[18], b[19]])),
        host_generation: b[381],
        controller_data_available: b[382] == 1,
        controller_generation: b[383],
        reason_identifier: b[384..512].to_vec(),
    })
}

/// The most bytes of a telemetry log [`read_host_telemetry`] reads (the
/// header and data areas 1 and 2): a larger log is refused, not cut.
pub const MAX_LOG_BYTES: u64 = 32 << 20;
/// Bytes per Get Log Page after the header, at most (the controller's
/// largest transfer may make it less: [`read_host_telemetry`]'s `chunk`).
pub const CHUNK: usize = 256 << 10;

/// One Get Log Page of a telemetry log (NVMe base specification 2.0,
/// 5.16): log `lid`, `len` bytes from byte `offset` of the log (LPOL and
/// LPOU), with LSP bit 0 ("create telemetry host-initiated data") when
/// `create`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogRead {
    /// The log identifier.
    pub lid: u8,
    /// LSP bit 0: the controller captures new host-initiated data first.
    pub create: bool,
    /// The log page offset, bytes (a multiple of 4).
    pub offset: u64,
    /// Bytes asked for (a multiple of 4).
    pub len: usize,
}

/// What sends Get Log Page to one controller.
///
/// # Invariants
/// `get` reads only (no user data changes; LSP bit 0 makes the controller
/// capture its internal state, nothing else), writes at most `buf.len()`
/// (= `read.len`) bytes into `buf`, and returns how many the controller
/// gave (the passthrough ioctl gives all of them or an error).
pub trait LogPages {
    /// Send `read`, its data into `buf`; the bytes given, or why none.
    fn get(&mut self, read: LogRead, buf: &mut [u8]) -> Result<usize, String>;
}

/// A host-initiated telemetry log, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Captured {
    /// The header block and the data areas of `data_areas`, as read.
    pub bytes: Vec<u8>,
    /// The header, parsed.
    pub header: TelemetryHeader,
    /// The data areas read: `[1, 2]`, `[1]` or `[]`.
    pub data_areas: Vec<u8>,
}

/// Why no telemetry log was kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaptureError {
    /// A Get Log Page failed.
    Command {
        /// Its log page offset, bytes.
        offset: u64,
        /// Why.
        why: String,
    },
    /// A Get Log Page gave fewer bytes than asked for.
    Short {
        /// Its log page offset, bytes.
        offset: u64,
        /// Bytes given.
        got: usize,
        /// Bytes asked for.
        want: usize,
    },
    /// The header is not a telemetry header.
    Header(TelemetryError),
    /// The header is of another log than 07h.
    NotHost {
        /// The log identifier found.
        got: u8,
    },
    /// The reading did not end within its bound (the reader's: a
    /// controller that no longer answers).
    TimedOut {
        /// The bound, s.
        secs: u64,
    },
    /// The log is larger than the limit: not read.
    TooLarge {
        /// Its bytes up to the end of data area 2.
        bytes: u64,
        /// The limit, bytes.
        max: u64,
    },
}

impl core::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            CaptureError::Command { offset, why } => write!(f, "Get Log Page 07h at offset {offset}: {why}"),
            CaptureError::Short { offset, got, want } => write!(
                f,
                "Get Log Page 07h at offset {offset} gave {got} bytes of {want}: refused"
            ),
            CaptureError::Header(e) => write!(f, "telemetry log 07h: {e}"),
            CaptureError::NotHost { got } => {
                write!(f, "telemetry log 07h: the header says log {got:#04x}")
            }
            CaptureError::TimedOut { secs } => {
                write!(f, "telemetry log 07h: no answer within {secs} s: not read")
            }
            CaptureError::TooLarge { bytes, max } => write!(
                f,
                "telemetry log 07h: {bytes} bytes up to data area 2, more than the {max} bytes read at most: not read"
            ),
        }
    }
}

/// One Get Log Page of `len` bytes at `offset` into a new buffer, refused
/// when the controller gave fewer.
fn read_at(dev: &mut dyn LogPages, create: bool, offset: u64, len: usize) -> Result<Vec<u8>, CaptureError> {
    let mut buf = vec![0u8; len];
    let read = LogRead {
        lid: LID_HOST,
        create,
        offset,
        len,
    };
    let got = dev
        .get(read, &mut buf)
        .map_err(|why| CaptureError::Command { offset, why })?;
    if got < len {
        return Err(CaptureError::Short { offset, got, want: len });
    }
    Ok(buf)
}

/// Read the host-initiated telemetry log of `dev`: the header (512 bytes,
/// offset 0, LSP bit 0 set: the controller captures new data), then the
/// rest up to the end of data area 2 (of data area 1 where area 2 is
/// empty), `chunk` bytes per command (rounded down to whole blocks, at
/// least one) at increasing log page offsets without the create bit. A log
/// larger than `max` bytes is refused before its data is read; a command
/// that fails or gives fewer bytes than asked for ends the reading, and
/// nothing is kept.
pub fn read_host_telemetry(dev: &mut dyn LogPages, chunk: usize, max: u64) -> Result<Captured, CaptureError> {
    let first = read_at(dev, true, 0, BLOCK)?;
    let header = parse_telemetry_header(&first, false).map_err(CaptureError::Header)?;
    if header.log_identifier != LID_HOST {
        return Err(CaptureError::NotHost {
            got: header.log_identifier,
        });
    }
    let total = header.area_2_bytes();
    if total > max {
        return Err(CaptureError::TooLarge { bytes: total, max });
    }
    let data_areas = if header.data_area_2_last_block > header.data_area_1_last_block {
        vec![1, 2]
    } else if header.data_area_1_last_block > 0 {
        vec![1]
    } else {
        Vec::new()
    };
    let chunk = (chunk - chunk % BLOCK).max(BLOCK) as u64;
    let mut bytes = first;
    let mut offset = BLOCK as u64;
    while offset < total {
        let n = chunk.min(total - offset);
        // n <= chunk, a usize.
        #[allow(clippy::cast_possible_truncation)]
        bytes.extend(read_at(dev, false, offset, n as usize)?);
        offset += n;
    }
    Ok(Captured {
        bytes,
        header,
        data_areas,
    })
}

/// The name a disk's telemetry log is saved under, after the document's
/// stem ([`crate::boot::stick::beside`]): `<disk>.telemetry.bin`, the
/// disk's kernel name (`nvme0n1`) with every character but ASCII letters,
/// digits, `_` and `-` made `_`.
pub fn file_name(disk: &str) -> String {
    let clean: String = disk
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let clean = if clean.is_empty() { String::from("disk") } else { clean };
    format!("{clean}.telemetry.bin")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header built from libnvme's offsets: OUI 00-0C-CA as stored
    /// least significant byte first, areas ending at blocks 8, 40, 200 and
    /// 1000.
    fn header() -> Vec<u8> {
        let mut b = vec![0u8; BLOCK];
        b[0] = LID_HOST;
        b[5..8].copy_from_slice(&[0xca, 0x0c, 0x00]);
        b[8..10].copy_from_slice(&8u16.to_le_bytes());
        b[10..12].copy_from_slice(&40u16.to_le_bytes());
        b[12..14].copy_from_slice(&200u16.to_le_bytes());
        b[16..20].copy_from_slice(&1000u32.to_le_bytes());
        b[381] = 3;
        b[382] = 1;
        b[383] = 7;
        b[384] = 0x5a;
        b[511] = 0xa5;
        b
    }

    #[test]
    fn every_field_from_its_offset() {
        let h = parse_telemetry_header(&header(), true).unwrap();
        assert_eq!((h.log_identifier, h.ieee_oui), (LID_HOST, 0x000cca));
        assert_eq!(
            (
                h.data_area_1_last_block,
                h.data_area_2_last_block,
                h.data_area_3_last_block
            ),
            (8, 40, 200)
        );
        assert_eq!(h.data_area_4_last_block, Some(1000));
        assert_eq!(
            (h.host_generation, h.controller_data_available, h.controller_generation),
            (3, true, 7)
        );
        assert_eq!(h.reason_identifier.len(), 128);
        assert_eq!((h.reason_identifier[0], h.reason_identifier[127]), (0x5a, 0xa5));
        // The header block is counted.
        assert_eq!((h.area_1_bytes(), h.area_2_bytes()), (9 * 512, 41 * 512));
    }

    #[test]
    fn data_area_4_only_with_the_extended_flag() {
        assert_eq!(
            parse_telemetry_header(&header(), false).unwrap().data_area_4_last_block,
            None
        );
    }

    #[test]
    fn empty_areas_are_the_header_alone() {
        let mut b = header();
        b[8..12].fill(0);
        b[382] = 0;
        let h = parse_telemetry_header(&b, false).unwrap();
        assert_eq!(
            (h.area_1_bytes(), h.area_2_bytes(), h.controller_data_available),
            (512, 512, false)
        );
        // Area 2 never ends before area 1.
        b[8..10].copy_from_slice(&5u16.to_le_bytes());
        assert_eq!(parse_telemetry_header(&b, false).unwrap().area_2_bytes(), 6 * 512);
    }

    #[test]
    fn refusals() {
        let b = header();
        assert_eq!(
            parse_telemetry_header(&b[..511], true),
            Err(TelemetryError::Short { got: 511 })
        );
        let mut other = b.clone();
        other[0] = 0x02;
        assert_eq!(
            parse_telemetry_header(&other, true),
            Err(TelemetryError::LogIdentifier { got: 2 })
        );
        other[0] = LID_CONTROLLER;
        assert!(parse_telemetry_header(&other, true).is_ok());
    }

    /// A fake controller: the log `log`, every command it is sent
    /// recorded; `short_at` gives 4 bytes fewer at that offset, `fail_at`
    /// an error.
    struct Fake {
        log: Vec<u8>,
        sent: Vec<LogRead>,
        short_at: Option<u64>,
        fail_at: Option<u64>,
    }

    impl LogPages for Fake {
        fn get(&mut self, read: LogRead, buf: &mut [u8]) -> Result<usize, String> {
            self.sent.push(read);
            assert_eq!(buf.len(), read.len);
            if self.fail_at == Some(read.offset) {
                return Err("NVMe status 0x2".into());
            }
            let at = usize::try_from(read.offset).unwrap();
            let end = (at + read.len).min(self.log.len());
            let n = end.saturating_sub(at);
            buf[..n].copy_from_slice(&self.log[at..end]);
            Ok(if self.short_at == Some(read.offset) { n - 4 } else { n })
        }
    }

    /// A host-initiated log whose area 1 ends at block `a1` and area 2 at
    /// block `a2`, every byte after the header its offset's low byte.
    fn fake(a1: u16, a2: u16) -> Fake {
        let mut log = header();
        log[8..10].copy_from_slice(&a1.to_le_bytes());
        log[10..12].copy_from_slice(&a2.to_le_bytes());
        let end = (usize::from(a1.max(a2)) + 1) * BLOCK;
        log.extend((BLOCK..end).map(|i| u8::try_from(i % 251).unwrap()));
        Fake {
            log,
            sent: Vec::new(),
            short_at: None,
            fail_at: None,
        }
    }

    fn read(create: bool, offset: u64, len: usize) -> LogRead {
        LogRead {
            lid: LID_HOST,
            create,
            offset,
            len,
        }
    }

    /// Area 1 ends at block 3, area 2 at block 5, 1024 bytes a command:
    /// the header with the create bit, then blocks 1-5 in 1024-byte
    /// commands without it, the last one the rest; the bytes as the log.
    #[test]
    fn the_header_then_areas_1_and_2_in_chunks() {
        let mut dev = fake(3, 5);
        let c = read_host_telemetry(&mut dev, 1024, MAX_LOG_BYTES).unwrap();
        assert_eq!(
            dev.sent,
            vec![
                read(true, 0, 512),
                read(false, 512, 1024),
                read(false, 1536, 1024),
                read(false, 2560, 512)
            ]
        );
        assert_eq!(c.bytes.len(), 6 * 512);
        assert_eq!(c.bytes, dev.log);
        assert_eq!(c.data_areas, vec![1, 2]);
        assert_eq!(
            (c.header.data_area_1_last_block, c.header.data_area_2_last_block),
            (3, 5)
        );
        // A chunk that is no whole number of blocks is rounded down.
        let mut dev = fake(3, 5);
        read_host_telemetry(&mut dev, 1500, MAX_LOG_BYTES).unwrap();
        assert_eq!(
            dev.sent.iter().map(|r| r.len).collect::<Vec<_>>(),
            vec![512, 1024, 1024, 512]
        );
        assert_eq!(dev.sent.iter().filter(|r| r.create).count(), 1);
    }

    #[test]
    fn without_area_2_area_1_only_and_empty_areas_the_header_only() {
        let mut dev = fake(3, 0);
        let c = read_host_telemetry(&mut dev, CHUNK, MAX_LOG_BYTES).unwrap();
        assert_eq!(dev.sent, vec![read(true, 0, 512), read(false, 512, 1536)]);
        assert_eq!((c.bytes.len(), c.data_areas.clone()), (4 * 512, vec![1]));
        let mut dev = fake(0, 0);
        let c = read_host_telemetry(&mut dev, CHUNK, MAX_LOG_BYTES).unwrap();
        assert_eq!(dev.sent, vec![read(true, 0, 512)]);
        assert_eq!((c.bytes, c.data_areas), (dev.log.clone(), vec![]));
    }

    /// A log over the limit is refused after its header, nothing more
    /// read: 32 MiB exactly is read, one block more is not.
    #[test]
    fn a_log_over_the_limit_is_refused() {
        // 65535 blocks + the header: 32 MiB exactly.
        let mut dev = fake(100, u16::MAX);
        let c = read_host_telemetry(&mut dev, CHUNK, MAX_LOG_BYTES).unwrap();
        assert_eq!(c.bytes.len() as u64, MAX_LOG_BYTES);
        assert_eq!(dev.sent.len(), 1 + 128);
        let mut dev = fake(100, u16::MAX);
        let e = read_host_telemetry(&mut dev, CHUNK, MAX_LOG_BYTES - 512).unwrap_err();
        assert_eq!(
            e,
            CaptureError::TooLarge {
                bytes: MAX_LOG_BYTES,
                max: MAX_LOG_BYTES - 512
            }
        );
        assert_eq!(dev.sent, vec![read(true, 0, 512)]);
        assert!(e.to_string().contains("33554432 bytes"), "{e}");
    }

    #[test]
    fn a_short_or_failed_read_keeps_nothing() {
        let mut dev = fake(3, 5);
        dev.short_at = Some(1536);
        let e = read_host_telemetry(&mut dev, 1024, MAX_LOG_BYTES).unwrap_err();
        assert_eq!(
            e,
            CaptureError::Short {
                offset: 1536,
                got: 1020,
                want: 1024
            }
        );
        assert_eq!(dev.sent.len(), 3, "nothing read after it");
        let mut dev = fake(3, 5);
        dev.short_at = Some(0);
        assert!(matches!(
            read_host_telemetry(&mut dev, 1024, MAX_LOG_BYTES),
            Err(CaptureError::Short { offset: 0, .. })
        ));
        let mut dev = fake(3, 5);
        dev.fail_at = Some(0);
        let e = read_host_telemetry(&mut dev, 1024, MAX_LOG_BYTES).unwrap_err();
        assert_eq!(e.to_string(), "Get Log Page 07h at offset 0: NVMe status 0x2");
        // A controller-initiated header, or none, is refused.
        let mut dev = fake(3, 5);
        dev.log[0] = LID_CONTROLLER;
        assert_eq!(
            read_host_telemetry(&mut dev, 1024, MAX_LOG_BYTES),
            Err(CaptureError::NotHost { got: LID_CONTROLLER })
        );
        dev.log[0] = 0;
        assert!(matches!(
            read_host_telemetry(&mut dev, 1024, MAX_LOG_BYTES),
            Err(CaptureError::Header(TelemetryError::LogIdentifier { got: 0 }))
        ));
    }

    #[test]
    fn file_names_keep_only_safe_characters() {
        for (disk, want) in [
            ("nvme0n1", "nvme0n1.telemetry.bin"),
            ("nvme1n2_x-y", "nvme1n2_x-y.telemetry.bin"),
            ("../a b/c", "___a_b_c.telemetry.bin"),
            ("é", "_.telemetry.bin"),
            ("", "disk.telemetry.bin"),
        ] {
            assert_eq!(file_name(disk), want, "{disk:?}");
        }
    }
}
