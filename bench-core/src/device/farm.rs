//! Seagate's Field Accessible Reliability Metrics (FARM), parsed: the ATA
//! general purpose log A6h and the SCSI log page 3Dh subpage 03h, into one
//! [`Farm`] record; and the check that catches a drive whose SMART hours
//! were reset ([`power_on_hours_disagree`]). Pure: bytes in, a record
//! out; init reads the log. Every parser takes any byte slice and never
//! panics (the fuzz target holds it to that).
//!
//! Layouts: smartmontools (github smartmontools/smartmontools)
//! `include/smartmon/farmcmds.h` (the structs `ataFarmHeader`,
//! `ataFarmDriveInformation`, ... and `scsiFarmHeader`, ...),
//! `lib/farmcmds.cpp` (how the log is read and each field's status bits
//! taken off) and `src/farmprint.cpp` (how the ASCII fields are put
//! together). Every field is a 64-bit qword whose top byte is its status:
//! bit 63 "supported", bit 62 "valid"; the value is the low 56 bits.
//! smartmontools keeps a value only when the top byte is exactly C0h
//! (`currentMetric >> 56 == 0xC0`) and reads it as 0 otherwise; here such a
//! field is absent (None). ATA qwords are little-endian, SCSI ones
//! big-endian. The field tables below give each field's page (ATA) or
//! parameter code (SCSI) and its qword index within it.

use alloc::string::String;

use crate::device::health::{log_parameters, ParseError};

/// The log signature, qword 0 of the ATA header page and of SCSI
/// parameter 0: "FARMER" in ASCII (farmcmds.h: 0x00004641524D4552).
pub const SIGNATURE: u64 = 0x0000_4641_524D_4552;
/// Bytes between the ATA log's pages when the header does not give a page
/// size (farmcmds.cpp's `FARM_PAGE_SIZE`).
pub const ATA_PAGE_BYTES: usize = 16384;
/// The SCSI log page and subpage.
pub const SCSI_PAGE: (u8, u8) = (0x3d, 0x03);
/// Bytes of each ATA page's struct in farmcmds.h (pages 0-5).
const ATA_PAGE_DATA: [usize; 6] = [72, 376, 168, 952, 256, 8880];
const ATA_PAGE_NAMES: [&str; 6] = [
    "page 0 (log header)",
    "page 1 (drive information)",
    "page 2 (workload statistics)",
    "page 3 (error statistics)",
    "page 4 (environment statistics)",
    "page 5 (reliability statistics)",
];

/// Why a FARM log was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FarmError {
    /// Fewer bytes than a page needs.
    Short {
        /// The page or part that was short.
        what: &'static str,
        /// Bytes needed.
        need: usize,
        /// Bytes given.
        got: usize,
    },
    /// Not a FARM log: the signature qword is absent or another value.
    Signature {
        /// The signature qword's value, when supported and valid.
        found: Option<u64>,
    },
    /// An ATA page whose page number is another, or a SCSI log page that
    /// is not 3Dh/03h.
    WrongPage {
        /// The page (ATA) or page code and subpage (SCSI, page << 8 | sub)
        /// expected.
        want: u16,
        /// The one found.
        got: u16,
    },
    /// A SCSI FARM page without a parameter every FARM page has.
    MissingParameter {
        /// Its parameter code.
        code: u16,
    },
}

impl core::fmt::Display for FarmError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            FarmError::Short { what, need, got } => {
                write!(f, "FARM log too short for {what}: {got} bytes, {need} needed")
            }
            FarmError::Signature { found: Some(x) } => write!(f, "not a FARM log: signature {x:#x}"),
            FarmError::Signature { found: None } => write!(f, "not a FARM log: no valid signature"),
            FarmError::WrongPage { want, got } => write!(f, "FARM page {got:#x} where {want:#x} was expected"),
            FarmError::MissingParameter { code } => write!(f, "FARM log page without parameter {code:#06x}"),
        }
    }
}

pub use crate::document::result::{Farm, FarmRecording, FarmTransport};

fn recording(v: Option<u64>) -> Option<FarmRecording> {
    match v? & 0x3 {
        1 => Some(FarmRecording::Smr),
        2 => Some(FarmRecording::Cmr),
        _ => None,
    }
}

/// One FARM field: Some(low 56 bits) when its top byte is exactly C0h
/// (supported and valid), as farmcmds.cpp keeps it.
pub fn field(raw: u64) -> Option<u64> {
    (raw >> 56 == 0xc0).then_some(raw & 0x00ff_ffff_ffff_ffff)
}

/// A page's qwords, of either byte order.
#[derive(Clone, Copy, Debug)]
struct Qwords<'a> {
    bytes: &'a [u8],
    big_endian: bool,
}

impl Qwords<'_> {
    /// Qword `i`'s value ([`field`]); None past the end.
    fn get(&self, i: usize) -> Option<u64> {
        let b = self.bytes.get(i * 8..i * 8 + 8)?;
        let mut x = [0u8; 8];
        x.copy_from_slice(b);
        field(if self.big_endian {
            u64::from_be_bytes(x)
        } else {
            u64::from_le_bytes(x)
        })
    }

    fn signed(&self, i: usize) -> Option<i64> {
        self.get(i).and_then(|v| i64::try_from(v).ok())
    }

    /// ASCII held in the low 32 bits of qwords `idx`, printable bytes kept
    /// (farmprint.cpp's `farm_format_id_string`): SCSI in byte order, ATA
    /// with each pair of bytes swapped back (`farm_byte_swap`).
    /// The date of assembly's ASCII: ATA as the qword's bytes in memory
    /// order up to the first NUL (farmprint.cpp copies the value), SCSI
    /// like [`Self::text`].
    fn date(&self, i: usize) -> Option<String> {
        if self.big_endian {
            return self.text(&[i]);
        }
        let v = self.get(i)?;
        let s: String = v
            .to_le_bytes()
            .iter()
            .take_while(|&&b| b != 0)
            .filter(|b| (32..127).contains(*b))
            .map(|&b| char::from(b))
            .collect();
        Some(s)
    }

    fn text(&self, idx: &[usize]) -> Option<String> {
        let mut s = String::new();
        let mut any = false;
        for &i in idx {
            let Some(v) = self.get(i) else { continue };
            any = true;
            let v = if self.big_endian { v } else { swap_pairs(v) };
            s.extend(
                v.to_be_bytes()
                    .iter()
                    .filter(|b| (32..127).contains(*b))
                    .map(|&b| char::from(b)),
            );
        }
        any.then(|| String::from(s.trim()))
    }
}

/// farmprint.cpp's `farm_byte_swap`: swap the 16-bit halves of each
/// 32-bit half.
fn swap_pairs(v: u64) -> u64 {
    ((v & 0x0000_ffff_0000_ffff) << 16) | ((v & 0xffff_0000_ffff_0000) >> 16)
}

fn join_wwn(hi: Option<u64>, lo: Option<u64>) -> Option<u64> {
    Some(((hi? & 0xffff_ffff) << 32) | (lo? & 0xffff_ffff))
}

fn check_signature(q: &Qwords<'_>) -> Result<(), FarmError> {
    match q.get(0) {
        Some(SIGNATURE) => Ok(()),
        found => Err(FarmError::Signature { found }),
    }
}

/// The ATA FARM log (general purpose log A6h) as read from its first
/// sector: six pages, each at a multiple of the header's page size (16 KiB
/// when the header gives none usable). Every page must be there whole;
/// a page whose page number qword says another page is refused.
pub fn parse_ata_farm(log: &[u8]) -> Result<Farm, FarmError> {
    let page = |n: usize, stride: usize| -> Result<Qwords<'_>, FarmError> {
        let start = n * stride;
        let need = start + ATA_PAGE_DATA[n];
        let bytes = log.get(start..need).ok_or(FarmError::Short {
            what: ATA_PAGE_NAMES[n],
            need,
            got: log.len(),
        })?;
        let q = Qwords {
            bytes,
            big_endian: false,
        };
        // Page 0's qword 0 is the signature; the others' their number.
        match q.get(0) {
            Some(got) if n > 0 && usize::try_from(got).ok() != Some(n) => Err(FarmError::WrongPage {
                want: u16::try_from(n).unwrap_or(u16::MAX),
                got: u16::try_from(got).unwrap_or(u16::MAX),
            }),
            _ => Ok(q),
        }
    };
    let h = page(0, 0)?;
    check_signature(&h)?;
    let stride = h
        .get(5)
        .and_then(|s| usize::try_from(s).ok())
        .filter(|s| (ATA_PAGE_DATA[5]..=1 << 20).contains(s) && s % 512 == 0)
        .unwrap_or(ATA_PAGE_BYTES);
    let pages = [
        h,
        page(1, stride)?,
        page(2, stride)?,
        page(3, stride)?,
        page(4, stride)?,
        page(5, stride)?,
    ];
    Ok(decode_ata(&pages))
}

/// The ATA table: (page, qword) of each field, per farmcmds.h.
fn decode_ata(p: &[Qwords<'_>; 6]) -> Farm {
    let [h, d, w, e, t, r] = p;
    Farm {
        transport: Some(FarmTransport::Ata),
        major_version: h.get(1),   // page 0 qword 1 majorRev
        minor_version: h.get(2),   // page 0 qword 2 minorRev
        pages_supported: h.get(3), // page 0 qword 3 pagesSupported
        log_size_bytes: h.get(4),  // page 0 qword 4 logSize
        page_size_bytes: h.get(5), // page 0 qword 5 pageSize
        heads_supported: h.get(6), // page 0 qword 6 headsSupported
        serial: d.text(&[2, 3]),   // page 1 qwords 2-3 serialNumber[2]
        wwn: join_wwn(d.get(4).map(swap_pairs), d.get(5).map(swap_pairs)), // page 1 qwords 4-5
        model: d.text(&[32, 33, 34, 35, 36, 37, 38, 39, 40, 41]), // page 1 qwords 32-41 modelNumber[10]
        firmware: d.text(&[14, 15]), // page 1 qwords 14-15 firmwareRev[2]
        capacity_sectors: d.get(7), // page 1 qword 7 deviceCapacity
        heads: d.get(11),          // page 1 qword 11 heads
        power_on_hours: d.get(19), // page 1 qword 19 poh
        spindle_power_on_hours: d.get(20), // page 1 qword 20 spoh
        head_flight_hours: d.get(21), // page 1 qword 21 headFlightHours
        head_load_events: d.get(22), // page 1 qword 22 headLoadEvents
        power_cycles: d.get(23),   // page 1 qword 23 powerCycleCount
        hardware_resets: d.get(24), // page 1 qword 24 resetCount
        spin_up_time_ms: d.get(25), // page 1 qword 25 spinUpTime
        read_commands: w.get(3),   // page 2 qword 3 totalReadCommands
        write_commands: w.get(4),  // page 2 qword 4 totalWriteCommands
        random_reads: w.get(5),    // page 2 qword 5 totalRandomReads
        random_writes: w.get(6),   // page 2 qword 6 totalRandomWrites
        sectors_written: w.get(8), // page 2 qword 8 logicalSecWritten
        sectors_read: w.get(9),    // page 2 qword 9 logicalSecRead
        unrecoverable_read_errors: e.get(2), // page 3 qword 2 totalUnrecoverableReadErrors
        unrecoverable_write_errors: e.get(3), // page 3 qword 3 totalUnrecoverableWriteErrors
        reallocated_sectors: e.get(4), // page 3 qword 4 totalReallocations
        read_recovery_attempts: e.get(5), // page 3 qword 5 totalReadRecoveryAttepts
        mechanical_start_retries: e.get(6), // page 3 qword 6 totalMechanicalStartRetries
        reallocation_candidates: e.get(7), // page 3 qword 7 totalReallocationCanidates
        interface_crc_errors: e.get(9), // page 3 qword 9 totalCRCErrors
        uncorrectable_errors: e.get(19), // page 3 qword 19 uncorrectables
        temperature_c: t.signed(2), // page 4 qword 2 curentTemp
        highest_temperature_c: t.signed(3), // page 4 qword 3 highestTemp
        lowest_temperature_c: t.signed(4), // page 4 qword 4 lowestTemp
        max_operating_temperature_c: t.signed(13), // page 4 qword 13 maxTemp
        min_operating_temperature_c: t.signed(14), // page 4 qword 14 minTemp
        error_rate_raw: r.get(184), // page 5 qword 184 attrErrorRateRaw
        seek_error_rate_raw: r.get(187), // page 5 qword 187 attrSeekErrorRateRaw
        high_priority_unload_events: r.get(190), // page 5 qword 190 attrUnloadEventsRaw
        helium_pressure_tripped: r.get(697).map(|v| v == 1), // page 5 qword 697 heliumPresureTrip
        lbas_corrected_by_parity: r.get(1109), // page 5 qword 1109 numberLBACorrectedParitySector
        recording: recording(d.get(42)), // page 1 qword 42 driveRecordingType
        depopulated: d.get(43).map(|v| v == 1), // page 1 qword 43 depopped
        date_of_assembly: d.date(45), // page 1 qword 45 dateOfAssembly
    }
}

/// The SCSI FARM log page (LOG SENSE page 3Dh, subpage 03h): parameters
/// of 8-byte big-endian fields after each 4-byte parameter header
/// (parameter code, control, length). Parameters 0 (header) and 1 (drive
/// information) must be there; a page whose length runs past the buffer
/// is refused.
pub fn parse_scsi_farm(page: &[u8]) -> Result<Farm, FarmError> {
    let params = log_parameters(page, SCSI_PAGE.0).map_err(|e| match e {
        ParseError::WrongPage { got, .. } => FarmError::WrongPage {
            want: u16::from_be_bytes([SCSI_PAGE.0, SCSI_PAGE.1]),
            got: u16::from_be_bytes([got, page[1]]),
        },
        _ => FarmError::Short {
            what: "SCSI log page header",
            need: 4,
            got: page.len(),
        },
    })?;
    if page[1] != SCSI_PAGE.1 {
        return Err(FarmError::WrongPage {
            want: u16::from_be_bytes([SCSI_PAGE.0, SCSI_PAGE.1]),
            got: u16::from_be_bytes([page[0] & 0x3f, page[1]]),
        });
    }
    let need = 4 + usize::from(u16::from_be_bytes([page[2], page[3]]));
    if page.len() < need {
        return Err(FarmError::Short {
            what: "the SCSI page length",
            need,
            got: page.len(),
        });
    }
    let param = |code: u16| {
        params.iter().find(|(c, _)| *c == code).map(|&(_, bytes)| Qwords {
            bytes,
            big_endian: true,
        })
    };
    let empty = Qwords {
        bytes: &[],
        big_endian: true,
    };
    let h = param(0).ok_or(FarmError::MissingParameter { code: 0 })?;
    check_signature(&h)?;
    let d = param(1).ok_or(FarmError::MissingParameter { code: 1 })?;
    let p: [Qwords<'_>; 7] = [
        h,
        d,
        param(2).unwrap_or(empty),
        param(3).unwrap_or(empty),
        param(4).unwrap_or(empty),
        param(5).unwrap_or(empty),
        param(6).unwrap_or(empty),
    ];
    Ok(decode_scsi(&p))
}

/// The environment parameter's temperatures: the low 16 bits, signed, in
/// tenths of °C (farmcmds.h's comment on `scsiFarmEnvironmentStatistics`),
/// to whole degrees toward zero.
fn scsi_tenths(v: Option<u64>) -> Option<i64> {
    v.map(|v| {
        let lo = i64::try_from(v & 0xffff).unwrap_or(0);
        (if lo >= 0x8000 { lo - 0x1_0000 } else { lo }) / 10
    })
}

/// The SCSI table: (parameter code, qword after the parameter header).
fn decode_scsi(p: &[Qwords<'_>; 7]) -> Farm {
    let [h, d, w, e, t, r, d2] = p;
    Farm {
        transport: Some(FarmTransport::Scsi),
        major_version: h.get(1),                            // parameter 0 qword 1 majorRev
        minor_version: h.get(2),                            // parameter 0 qword 2 minorRev
        pages_supported: h.get(3),                          // parameter 0 qword 3 parametersSupported
        log_size_bytes: h.get(4),                           // parameter 0 qword 4 logSize
        heads_supported: h.get(6),                          // parameter 0 qword 6 headsSupported
        serial: d.text(&[2, 3]),                            // parameter 1 qwords 2-3 serialNumber
        wwn: join_wwn(d.get(5), d.get(4)),                  // parameter 1 qwords 5 (high), 4 (low)
        firmware: d.text(&[14, 15]),                        // parameter 1 qwords 14-15 firmwareRev
        capacity_sectors: d.get(7),                         // parameter 1 qword 7 deviceCapacity
        heads: d.get(11),                                   // parameter 1 qword 11 heads
        power_on_hours: d.get(19),                          // parameter 1 qword 19 poh
        power_cycles: d.get(23),                            // parameter 1 qword 23 powerCycleCount
        hardware_resets: d.get(24),                         // parameter 1 qword 24 resetCount
        read_commands: w.get(3),                            // parameter 2 qword 3 totalReadCommands
        write_commands: w.get(4),                           // parameter 2 qword 4 totalWriteCommands
        random_reads: w.get(5),                             // parameter 2 qword 5 totalRandomReads
        random_writes: w.get(6),                            // parameter 2 qword 6 totalRandomWrites
        sectors_written: w.get(8),                          // parameter 2 qword 8 logicalSecWritten
        sectors_read: w.get(9),                             // parameter 2 qword 9 logicalSecRead
        unrecoverable_read_errors: e.get(2),                // parameter 3 qword 2 totalUnrecoverableReadErrors
        unrecoverable_write_errors: e.get(3),               // parameter 3 qword 3 totalUnrecoverableWriteErrors
        mechanical_start_retries: e.get(6),                 // parameter 3 qword 6 totalMechanicalStartRetries
        temperature_c: scsi_tenths(t.get(2)),               // parameter 4 qword 2 curentTemp
        highest_temperature_c: scsi_tenths(t.get(3)),       // parameter 4 qword 3 highestTemp
        lowest_temperature_c: scsi_tenths(t.get(4)),        // parameter 4 qword 4 lowestTemp
        max_operating_temperature_c: t.signed(13),          // parameter 4 qword 13 maxTemp
        min_operating_temperature_c: t.signed(14),          // parameter 4 qword 14 minTemp
        helium_pressure_tripped: r.get(25).map(|v| v == 1), // parameter 5 qword 25 heliumPresureTrip
        model: d2.text(&[3, 4, 5, 6]),                      // parameter 6 qwords 3-6 productID
        recording: recording(d2.get(7)),                    // parameter 6 qword 7 driveRecordingType
        depopulated: d2.get(8).map(|v| v == 1),             // parameter 6 qword 8 dpopped
        date_of_assembly: d.date(30),                       // parameter 1 qword 30 dateOfAssembly
        ..Farm::default()
    }
}

/// `n` with a comma every three digits: 26304 -> "26,304".
pub fn thousands(n: u64) -> String {
    let digits = alloc::format!("{n}");
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Hours two counts may differ by before they disagree (with
/// [`HOURS_TOLERANCE_PCT`]).
pub const HOURS_TOLERANCE: u64 = 24;
/// Percent of the larger count two counts may differ by.
pub const HOURS_TOLERANCE_PCT: u64 = 10;

/// SMART's power-on hours against FARM's: a message when they differ by
/// more than [`HOURS_TOLERANCE`] hours and more than
/// [`HOURS_TOLERANCE_PCT`] percent of the larger, both; None when they
/// agree.
pub fn power_on_hours_disagree(smart_hours: u64, farm_hours: u64) -> Option<String> {
    let diff = smart_hours.abs_diff(farm_hours);
    let larger = u128::from(smart_hours.max(farm_hours));
    let disagree = diff > HOURS_TOLERANCE && u128::from(diff) * 100 > larger * u128::from(HOURS_TOLERANCE_PCT);
    disagree.then(|| {
        alloc::format!(
            "power-on hours disagree: SMART {} h, FARM {} h",
            thousands(smart_hours),
            thousands(farm_hours)
        )
    })
}

#[cfg(test)]
mod tests;
