//! Zoned block devices, parsed: the bytes BLKREPORTZONE fills and the
//! zone attributes of `/sys/block/X/queue/` (`zoned`, `chunk_sectors`,
//! `nr_zones`, `max_open_zones`, `max_active_zones`), summed into a
//! [`ZoneSummary`], and the extents of a zoned disk that hold data. Pure:
//! bytes and text in, records out; init issues the ioctl and reads sysfs.
//! Every parser takes any input and never panics (the fuzz target holds it
//! to that).
//!
//! Layout: the kernel's `include/uapi/linux/blkzoned.h` (torvalds/linux):
//! `struct blk_zone_report` is u64 sector, u32 nr_zones, u32 flags
//! (`BLK_ZONE_REP_CAPACITY` = 1: the descriptors carry a capacity), then
//! `nr_zones` `struct blk_zone` of 64 bytes: u64 start (0), u64 len (8),
//! u64 wp (16), u8 type (24), u8 cond (25), u8 non_seq (26), u8 reset
//! (27), u8 resv\[4\] (28), u64 capacity (32), u8 reserved\[24\] (40). All
//! positions and lengths are 512-byte sectors whatever the logical block
//! size; integers are native-endian, little-endian on x86_64.

use alloc::string::String;
use alloc::vec::Vec;

pub use crate::document::result::{CapacityKind, ZoneModel, ZoneStates, ZoneSummary};

/// Bytes of the kernel's zone sector (blkzoned.h: "512 B sector units").
pub const SECTOR_BYTES: u64 = 512;
/// Bytes of `struct blk_zone_report` before its descriptors.
pub const REPORT_HEADER: usize = 16;
/// Bytes of one `struct blk_zone`.
pub const DESCRIPTOR: usize = 64;
/// `BLK_ZONE_REP_CAPACITY`: the descriptors' capacity field is valid.
pub const REP_CAPACITY: u32 = 1;

/// Why a zone report or a queue attribute was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZoneError {
    /// Fewer bytes than the report needs.
    Short {
        /// What was short: the report header or the descriptors.
        what: &'static str,
        /// Bytes needed (usize::MAX when nr_zones x 64 overflows).
        need: usize,
        /// Bytes given.
        got: usize,
    },
    /// A `/sys/block/X/queue/` attribute whose text is not what the kernel
    /// writes there.
    Attribute {
        /// The attribute's file name.
        file: &'static str,
        /// Its text, trimmed.
        text: String,
    },
}

impl core::fmt::Display for ZoneError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ZoneError::Short { what, need, got } => {
                write!(f, "zone report too short for the {what}: {got} bytes, {need} needed")
            }
            ZoneError::Attribute { file, text } => {
                write!(f, "queue/{file} reads {text:?}, not a value the kernel writes")
            }
        }
    }
}

/// A zone's type (blkzoned.h `enum blk_zone_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneType {
    /// 1: no write pointer, written anywhere.
    Conventional,
    /// 2: sequential write required.
    SeqWriteRequired,
    /// 3: sequential write preferred (host-aware).
    SeqWritePreferred,
    /// Any other value, which blkzoned.h calls invalid.
    Other(u8),
}

impl ZoneType {
    fn from_byte(b: u8) -> Self {
        match b {
            1 => ZoneType::Conventional,
            2 => ZoneType::SeqWriteRequired,
            3 => ZoneType::SeqWritePreferred,
            x => ZoneType::Other(x),
        }
    }

    /// True for the zone types with a write pointer.
    pub fn sequential(self) -> bool {
        matches!(self, ZoneType::SeqWriteRequired | ZoneType::SeqWritePreferred)
    }
}

/// A zone's condition (blkzoned.h `enum blk_zone_cond`, ZBC/ZAC ZC1-ZC7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneCond {
    /// 0: no write pointer (conventional).
    NotWp,
    /// 1: empty (ZC1).
    Empty,
    /// 2: implicitly open (ZC2).
    ImplicitOpen,
    /// 3: explicitly open (ZC3).
    ExplicitOpen,
    /// 4: closed (ZC4).
    Closed,
    /// 0xD: read-only (ZC6).
    ReadOnly,
    /// 0xE: full (ZC5).
    Full,
    /// 0xF: offline (ZC7).
    Offline,
    /// Any other value: 5-0xC are reserved; 0xFF (`BLK_ZONE_COND_ACTIVE`)
    /// appears only in cached reports, never from BLKREPORTZONE.
    Other(u8),
}

impl ZoneCond {
    fn from_byte(b: u8) -> Self {
        match b {
            0 => ZoneCond::NotWp,
            1 => ZoneCond::Empty,
            2 => ZoneCond::ImplicitOpen,
            3 => ZoneCond::ExplicitOpen,
            4 => ZoneCond::Closed,
            0xd => ZoneCond::ReadOnly,
            0xe => ZoneCond::Full,
            0xf => ZoneCond::Offline,
            x => ZoneCond::Other(x),
        }
    }
}

/// One `struct blk_zone`, in 512-byte sectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zone {
    /// First sector.
    pub start: u64,
    /// Length in sectors (the zone size).
    pub len: u64,
    /// Write pointer (a sector; meaningless without a write pointer, and
    /// for read-only and offline zones, as ZBC says).
    pub wp: u64,
    /// Type.
    pub kind: ZoneType,
    /// Condition.
    pub cond: ZoneCond,
    /// Non-sequential write resources active (host-aware only).
    pub non_seq: bool,
    /// A reset is recommended.
    pub reset: bool,
    /// Usable sectors from `start`: the descriptor's capacity when the
    /// report's flags carry `BLK_ZONE_REP_CAPACITY`, else `len`.
    pub capacity: u64,
}

/// A BLKREPORTZONE reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZoneReport {
    /// The sector the report started at.
    pub sector: u64,
    /// The report's flags.
    pub flags: u32,
    /// The zones, in the order reported.
    pub zones: Vec<Zone>,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// Parse the buffer BLKREPORTZONE filled: the header, then as many
/// descriptors as its `nr_zones` says; a buffer that holds fewer is an
/// error naming what was short.
pub fn parse_report(buf: &[u8]) -> Result<ZoneReport, ZoneError> {
    if buf.len() < REPORT_HEADER {
        return Err(ZoneError::Short {
            what: "report header",
            need: REPORT_HEADER,
            got: buf.len(),
        });
    }
    let sector = u64_at(buf, 0);
    let nr = u32::from_le_bytes([buf[8], buf[9], buf[10], buf[11]]);
    let flags = u32::from_le_bytes([buf[12], buf[13], buf[14], buf[15]]);
    let need = usize::try_from(nr)
        .ok()
        .and_then(|n| n.checked_mul(DESCRIPTOR))
        .and_then(|n| n.checked_add(REPORT_HEADER))
        .unwrap_or(usize::MAX);
    if buf.len() < need {
        return Err(ZoneError::Short {
            what: "zone descriptors the header counts",
            need,
            got: buf.len(),
        });
    }
    let zones = buf[REPORT_HEADER..need]
        .chunks_exact(DESCRIPTOR)
        .map(|d| {
            let len = u64_at(d, 8);
            Zone {
                start: u64_at(d, 0),
                len,
                wp: u64_at(d, 16),
                kind: ZoneType::from_byte(d[24]),
                cond: ZoneCond::from_byte(d[25]),
                non_seq: d[26] != 0,
                reset: d[27] != 0,
                capacity: if flags & REP_CAPACITY != 0 { u64_at(d, 32) } else { len },
            }
        })
        .collect();
    Ok(ZoneReport { sector, flags, zones })
}

/// `/sys/block/X/queue/zoned`: "none", "host-aware" or "host-managed".
pub fn parse_model(text: &str) -> Result<ZoneModel, ZoneError> {
    match text.trim() {
        "none" => Ok(ZoneModel::None),
        "host-aware" => Ok(ZoneModel::HostAware),
        "host-managed" => Ok(ZoneModel::HostManaged),
        t => Err(ZoneError::Attribute {
            file: "zoned",
            text: String::from(t),
        }),
    }
}

/// A decimal queue attribute (`chunk_sectors`, `nr_zones`,
/// `max_open_zones`, `max_active_zones`); `file` names it in the error.
pub fn parse_count(file: &'static str, text: &str) -> Result<u64, ZoneError> {
    let t = text.trim();
    t.parse().map_err(|_| ZoneError::Attribute {
        file,
        text: String::from(t),
    })
}

/// The zone attributes of `/sys/block/X/queue/`, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueZones {
    /// `zoned`.
    pub model: ZoneModel,
    /// `chunk_sectors`: the zone size in 512-byte sectors on a zoned disk.
    pub chunk_sectors: u64,
    /// `nr_zones`: how many descriptors to ask BLKREPORTZONE for; the
    /// summary counts the zones the report gave.
    pub nr_zones: u64,
    /// `max_open_zones` (0: no limit).
    pub max_open_zones: u64,
    /// `max_active_zones` (0: no limit).
    pub max_active_zones: u64,
}

fn count_state(s: &mut ZoneStates, c: ZoneCond) {
    let n = match c {
        ZoneCond::NotWp => &mut s.not_write_pointer,
        ZoneCond::Empty => &mut s.empty,
        ZoneCond::ImplicitOpen => &mut s.implicit_open,
        ZoneCond::ExplicitOpen => &mut s.explicit_open,
        ZoneCond::Closed => &mut s.closed,
        ZoneCond::ReadOnly => &mut s.read_only,
        ZoneCond::Full => &mut s.full,
        ZoneCond::Offline => &mut s.offline,
        ZoneCond::Other(_) => &mut s.other,
    };
    *n += 1;
}

/// Sectors written in sequential zone `z` (see [`ZoneSummary::written_bytes`]).
fn written_sectors(z: &Zone) -> u64 {
    match z.cond {
        ZoneCond::ImplicitOpen | ZoneCond::ExplicitOpen | ZoneCond::Closed => {
            z.wp.saturating_sub(z.start).min(z.capacity)
        }
        ZoneCond::Full => z.capacity,
        _ => 0,
    }
}

/// Sum a whole zone report (every zone of the disk) with the queue's
/// attributes.
pub fn summarize(q: &QueueZones, zones: &[Zone]) -> ZoneSummary {
    let mut states = ZoneStates::default();
    let mut conventional = 0u64;
    let mut written = 0u64;
    let mut cap: Option<(u64, bool)> = None;
    for z in zones {
        count_state(&mut states, z.cond);
        if z.kind == ZoneType::Conventional {
            conventional += 1;
        }
        if z.kind.sequential() {
            written = written.saturating_add(written_sectors(z));
            cap = Some(match cap {
                None => (z.capacity, true),
                Some((c, same)) => (c.min(z.capacity), same && c == z.capacity),
            });
        }
    }
    let size_sectors = if q.chunk_sectors != 0 {
        q.chunk_sectors
    } else {
        zones.first().map_or(0, |z| z.len)
    };
    ZoneSummary {
        model: q.model,
        zone_size_bytes: size_sectors.saturating_mul(SECTOR_BYTES),
        zone_capacity_bytes: cap.map(|(c, _)| c.saturating_mul(SECTOR_BYTES)),
        zone_capacity_kind: cap.map(|(_, same)| {
            if same {
                CapacityKind::Uniform
            } else {
                CapacityKind::Smallest
            }
        }),
        zones: zones.len() as u64,
        conventional_zones: conventional,
        max_open_zones: q.max_open_zones,
        max_active_zones: q.max_active_zones,
        states,
        written_bytes: written.saturating_mul(SECTOR_BYTES),
    }
}

/// A run of readable sectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// First sector (512 bytes).
    pub start: u64,
    /// Sectors.
    pub sectors: u64,
}

/// The sectors that hold data, adjacent runs merged: conventional zones
/// whole; sequential zones from their start to the write pointer (open,
/// closed), to their capacity (full, read-only: ZBC keeps a read-only
/// zone's data readable); nothing of empty or offline zones, nor of zones
/// of an unknown type or condition.
pub fn readable_extents(zones: &[Zone]) -> Vec<Extent> {
    let mut out: Vec<Extent> = Vec::new();
    for z in zones {
        let sectors = match (z.kind, z.cond) {
            (ZoneType::Conventional, ZoneCond::NotWp) => z.len,
            (k, ZoneCond::ReadOnly) if k.sequential() => z.capacity,
            (k, _) if k.sequential() => written_sectors(z),
            _ => 0,
        };
        if sectors == 0 {
            continue;
        }
        match out.last_mut() {
            Some(e) if e.start.checked_add(e.sectors) == Some(z.start) => e.sectors = e.sectors.saturating_add(sectors),
            _ => out.push(Extent {
                start: z.start,
                sectors,
            }),
        }
    }
    out
}

/// `n` bytes as the console gives sizes: the bytes, and in MiB (2^20)
/// when whole MiB.
fn bytes_text(n: u64) -> String {
    if n != 0 && n % (1 << 20) == 0 {
        alloc::format!("{n} bytes ({} MiB)", n >> 20)
    } else {
        alloc::format!("{n} bytes")
    }
}

/// A zoned disk's console line, `when` (`before the run`, `after the
/// run`): its zones' sizes and limits, and how many are in each state.
pub fn describe(path: &str, s: &ZoneSummary, when: &str) -> String {
    let limit = |n: u64| {
        if n == 0 {
            String::from("no limit")
        } else {
            alloc::format!("at most {n}")
        }
    };
    let cap = match (s.zone_capacity_bytes, s.zone_capacity_kind) {
        (Some(c), Some(CapacityKind::Smallest)) => alloc::format!(", capacity at least {}", bytes_text(c)),
        (Some(c), _) => alloc::format!(", capacity {}", bytes_text(c)),
        (None, _) => String::new(),
    };
    let st = &s.states;
    alloc::format!(
        "{path}: zoned {}: {} zones of {}{cap}, {} conventional; open zones: {}, active zones: {}; {when}: {} empty, {} open, {} closed, {} full, {} read-only, {} offline; {} written",
        s.model,
        s.zones,
        bytes_text(s.zone_size_bytes),
        s.conventional_zones,
        limit(s.max_open_zones),
        limit(s.max_active_zones),
        st.empty,
        st.implicit_open + st.explicit_open,
        st.closed,
        st.full,
        st.read_only,
        st.offline,
        bytes_text(s.written_bytes),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A descriptor built byte by byte from blkzoned.h's layout.
    fn desc(start: u64, len: u64, wp: u64, kind: u8, cond: u8, cap: u64) -> Vec<u8> {
        let mut d = Vec::new();
        d.extend_from_slice(&start.to_le_bytes());
        d.extend_from_slice(&len.to_le_bytes());
        d.extend_from_slice(&wp.to_le_bytes());
        d.extend_from_slice(&[kind, cond, 0, 1, 0, 0, 0, 0]);
        d.extend_from_slice(&cap.to_le_bytes());
        d.extend_from_slice(&[0; 24]);
        assert_eq!(d.len(), DESCRIPTOR);
        d
    }

    fn report(flags: u32, zones: &[Vec<u8>]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&0u64.to_le_bytes());
        b.extend_from_slice(&u32::try_from(zones.len()).unwrap().to_le_bytes());
        b.extend_from_slice(&flags.to_le_bytes());
        for z in zones {
            b.extend_from_slice(z);
        }
        b
    }

    /// Zones of 0x80000 sectors (256 MiB), capacity 0x70000: two
    /// conventional, then empty, open (wp at +0x100), closed, full,
    /// read-only, offline, explicitly open with a smaller capacity.
    fn sample() -> Vec<u8> {
        const Z: u64 = 0x80000;
        report(
            REP_CAPACITY,
            &[
                desc(0, Z, u64::MAX, 1, 0, Z),
                desc(Z, Z, u64::MAX, 1, 0, Z),
                desc(2 * Z, Z, 2 * Z, 2, 1, 0x70000),
                desc(3 * Z, Z, 3 * Z + 0x100, 2, 2, 0x70000),
                desc(4 * Z, Z, 4 * Z + 0x200, 2, 4, 0x70000),
                desc(5 * Z, Z, 5 * Z + Z, 2, 0xe, 0x70000),
                desc(6 * Z, Z, u64::MAX, 2, 0xd, 0x70000),
                desc(7 * Z, Z, u64::MAX, 2, 0xf, 0x70000),
                desc(8 * Z, Z, 8 * Z + 8, 2, 3, 0x60000),
            ],
        )
    }

    fn queue() -> QueueZones {
        QueueZones {
            model: parse_model("host-managed\n").unwrap(),
            chunk_sectors: parse_count("chunk_sectors", "524288\n").unwrap(),
            nr_zones: 9,
            max_open_zones: 14,
            max_active_zones: 0,
        }
    }

    #[test]
    fn report_parses_every_field() {
        let r = parse_report(&sample()).unwrap();
        assert_eq!(r.zones.len(), 9);
        assert_eq!(r.flags, REP_CAPACITY);
        let z = r.zones[3];
        assert_eq!(
            (z.start, z.len, z.wp, z.capacity),
            (0x180000, 0x80000, 0x180100, 0x70000)
        );
        assert_eq!(
            (z.kind, z.cond, z.non_seq, z.reset),
            (ZoneType::SeqWriteRequired, ZoneCond::ImplicitOpen, false, true)
        );
        assert_eq!(r.zones[0].kind, ZoneType::Conventional);
        assert_eq!(r.zones[6].cond, ZoneCond::ReadOnly);
        assert_eq!(r.zones[7].cond, ZoneCond::Offline);
    }

    #[test]
    fn without_the_capacity_flag_capacity_is_the_length() {
        let r = parse_report(&report(0, &[desc(0, 64, 8, 2, 2, 7)])).unwrap();
        assert_eq!(r.zones[0].capacity, 64);
    }

    #[test]
    fn summary_counts_states_and_written_bytes() {
        let r = parse_report(&sample()).unwrap();
        let s = summarize(&queue(), &r.zones);
        assert_eq!(s.model, ZoneModel::HostManaged);
        assert_eq!(s.zone_size_bytes, 256 << 20);
        assert_eq!(s.zone_capacity_bytes, Some(0x60000 * 512));
        assert_eq!(s.zone_capacity_kind, Some(CapacityKind::Smallest));
        assert_eq!(
            (s.zones, s.conventional_zones, s.max_open_zones, s.max_active_zones),
            (9, 2, 14, 0)
        );
        let want = ZoneStates {
            empty: 1,
            implicit_open: 1,
            explicit_open: 1,
            closed: 1,
            full: 1,
            read_only: 1,
            offline: 1,
            not_write_pointer: 2,
            other: 0,
        };
        assert_eq!(s.states, want);
        assert_eq!(s.written_bytes, (0x100 + 0x200 + 0x70000 + 8) * 512);
    }

    #[test]
    fn uniform_capacity_is_said_so() {
        let r = parse_report(&report(
            REP_CAPACITY,
            &[desc(0, 64, 0, 2, 1, 60), desc(64, 64, 64, 2, 1, 60)],
        ))
        .unwrap();
        let s = summarize(&queue(), &r.zones);
        assert_eq!(
            (s.zone_capacity_bytes, s.zone_capacity_kind),
            (Some(60 * 512), Some(CapacityKind::Uniform))
        );
        let none = summarize(&queue(), &[]);
        assert_eq!(
            (none.zone_capacity_bytes, none.zone_capacity_kind, none.zones),
            (None, None, 0)
        );
    }

    #[test]
    fn readable_extents_follow_the_write_pointers() {
        const Z: u64 = 0x80000;
        let r = parse_report(&sample()).unwrap();
        let e = readable_extents(&r.zones);
        let want = [
            // The two conventional zones, merged.
            Extent {
                start: 0,
                sectors: 2 * Z,
            },
            Extent {
                start: 3 * Z,
                sectors: 0x100,
            },
            Extent {
                start: 4 * Z,
                sectors: 0x200,
            },
            // Full, then read-only: both to their capacity.
            Extent {
                start: 5 * Z,
                sectors: 0x70000,
            },
            Extent {
                start: 6 * Z,
                sectors: 0x70000,
            },
            Extent {
                start: 8 * Z,
                sectors: 8,
            },
        ];
        assert_eq!(e, want);
    }

    #[test]
    fn short_buffers_are_errors_naming_what() {
        let b = sample();
        assert!(matches!(
            parse_report(&b[..15]),
            Err(ZoneError::Short {
                what: "report header",
                need: 16,
                got: 15
            })
        ));
        let e = parse_report(&b[..b.len() - 1]).unwrap_err();
        assert!(matches!(e, ZoneError::Short { need, .. } if need == 16 + 9 * 64));
        assert!(e.to_string().contains("descriptors"));
        let mut huge = report(0, &[]);
        huge[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(parse_report(&huge).is_err());
    }

    #[test]
    fn attributes_parse_as_the_kernel_writes_them() {
        assert_eq!(parse_model("none\n"), Ok(ZoneModel::None));
        assert_eq!(parse_model("host-aware"), Ok(ZoneModel::HostAware));
        assert!(parse_model("managed").is_err());
        assert_eq!(parse_count("max_active_zones", "0\n"), Ok(0));
        let e = parse_count("nr_zones", "-1").unwrap_err();
        assert_eq!(
            e.to_string(),
            "queue/nr_zones reads \"-1\", not a value the kernel writes"
        );
    }
}
