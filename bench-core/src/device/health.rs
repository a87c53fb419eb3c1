//! Disk health pages, parsed: ATA SMART READ DATA and READ THRESHOLDS,
//! the SMART RETURN STATUS answer in an ATA PASS-THROUGH sense buffer, the
//! NVMe SMART/health log (log page 02h) and Identify Controller's
//! temperature thresholds, SCSI LOG SENSE temperature and error counter
//! pages. Pure: bytes in, [`HealthReading`] parts out; init issues the
//! commands. Every parser takes any byte slice and never panics (the fuzz
//! targets hold it to that).
//!
//! Layouts: ATA/ATAPI-8 ACS (SMART READ DATA is obsolete in ACS-4 but every
//! SATA disk and QEMU answer it; the attribute table is the de facto one of
//! smartmontools' `ata_smart_values`), SAT-3 (the ATA Status Return sense
//! descriptor), NVMe Base 1.4 figure 194 (SMART / Health Information) and
//! figure 247 (Identify Controller WCTEMP/CCTEMP), SPC-4 (log parameters).

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::document::result::{HealthReading, NvmeHealth, SmartAttribute};

/// Bytes of an ATA SMART data or thresholds page, and of the NVMe health log.
pub const PAGE: usize = 512;
/// Attribute entries in a SMART page (12 bytes each from offset 2).
pub const ATTRIBUTES: usize = 30;
/// Bytes per NVMe data unit: 1000 units of 512 bytes (NVMe 1.4, figure 194).
pub const NVME_DATA_UNIT_BYTES: u64 = 512_000;
/// Kelvin of 0 °C, as NVMe tools convert (nvme-cli: K - 273).
pub const KELVIN_0C: i32 = 273;

/// Why a page was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// Fewer bytes than the page needs.
    Short {
        /// Bytes needed.
        need: usize,
        /// Bytes given.
        got: usize,
    },
    /// The ATA page's checksum byte (511) does not make the sum of its 512
    /// bytes 0 mod 256.
    Checksum {
        /// The sum of the 512 bytes, mod 256.
        sum: u8,
    },
    /// A SCSI log page is not the page asked for.
    WrongPage {
        /// The page asked for.
        want: u8,
        /// The page the device returned.
        got: u8,
    },
    /// The sense buffer carries no ATA registers (no ATA Status Return
    /// descriptor, and not the fixed format with ATA information).
    NoRegisters,
    /// READ DEFECT DATA answered in a defect list format whose descriptor
    /// length is not known (001b, 010b reserved; 110b vendor specific).
    DefectFormat {
        /// The format (bits 2:0 of byte 1).
        format: u8,
    },
    /// RETURN STATUS answered with LBA mid/high values of neither meaning.
    UnknownStatus {
        /// LBA mid (bits 15:8 of the LBA) as returned.
        mid: u8,
        /// LBA high (bits 23:16) as returned.
        high: u8,
    },
}

impl core::fmt::Display for ParseError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ParseError::Short { need, got } => write!(f, "page too short: {got} bytes, {need} needed"),
            ParseError::Checksum { sum } => write!(f, "bad checksum: the page sums to {sum:#04x}, not 0"),
            ParseError::WrongPage { want, got } => write!(f, "log page {got:#04x} returned for {want:#04x}"),
            ParseError::NoRegisters => write!(f, "the sense data carries no ATA registers"),
            ParseError::DefectFormat { format } => {
                write!(
                    f,
                    "defect list format {format:03b}b, whose descriptor length is not known"
                )
            }
            ParseError::UnknownStatus { mid, high } => {
                write!(
                    f,
                    "SMART RETURN STATUS gave LBA mid/high {mid:#04x}/{high:#04x}, neither ok nor failed"
                )
            }
        }
    }
}

fn need(b: &[u8], n: usize) -> Result<(), ParseError> {
    if b.len() < n {
        Err(ParseError::Short { need: n, got: b.len() })
    } else {
        Ok(())
    }
}

/// Little-endian unsigned integer of `b` (at most 16 bytes), saturated to
/// u64 (a 128-bit NVMe counter above 2^64 reads as u64::MAX).
fn le(b: &[u8]) -> u64 {
    let mut v: u128 = 0;
    for (i, &x) in b.iter().enumerate().take(16) {
        v |= u128::from(x) << (8 * i);
    }
    u64::try_from(v).unwrap_or(u64::MAX)
}

/// [`le`] for the other parsers of device pages (`selftest`, `capacity`).
pub(crate) fn le_bytes(b: &[u8]) -> u64 {
    le(b)
}

/// Big-endian unsigned integer of `b`, saturated to u64.
fn be(b: &[u8]) -> u64 {
    let mut v: u64 = 0;
    for &x in b {
        v = v.checked_mul(256).map_or(u64::MAX, |v| v | u64::from(x));
    }
    v
}

/// smartmontools' usual name of attribute `id`, for those read here and
/// the common others.
pub fn attribute_name(id: u8) -> Option<&'static str> {
    Some(match id {
        1 => "raw_read_error_rate",
        3 => "spin_up_time",
        4 => "start_stop_count",
        5 => "reallocated_sector_count",
        7 => "seek_error_rate",
        9 => "power_on_hours",
        10 => "spin_retry_count",
        12 => "power_cycle_count",
        177 => "wear_leveling_count",
        187 => "reported_uncorrect",
        188 => "command_timeout",
        190 => "airflow_temperature_celsius",
        194 => "temperature_celsius",
        196 => "reallocated_event_count",
        197 => "current_pending_sector",
        198 => "offline_uncorrectable",
        199 => "udma_crc_error_count",
        231 => "ssd_life_left",
        241 => "total_lbas_written",
        242 => "total_lbas_read",
        _ => return None,
    })
}

/// The counters taken from ATA attributes: (attribute, counter name).
/// Each is the raw value's low 48 bits (smartctl's default `raw48`).
pub const ATA_COUNTERS: [(u8, &str); 5] = [
    (5, "reallocated_sectors"),
    (197, "pending_sectors"),
    (198, "offline_uncorrectable"),
    (199, "crc_errors"),
    (12, "power_cycles"),
];

/// Check an ATA SMART page's checksum: its 512 bytes sum to 0 mod 256.
pub fn ata_checksum(page: &[u8]) -> Result<(), ParseError> {
    need(page, PAGE)?;
    let sum = page[..PAGE].iter().fold(0u8, |a, &b| a.wrapping_add(b));
    if sum == 0 {
        Ok(())
    } else {
        Err(ParseError::Checksum { sum })
    }
}

/// SMART READ THRESHOLDS: attribute id -> threshold (entries with id 0 are
/// empty). The checksum is checked.
pub fn parse_ata_thresholds(page: &[u8]) -> Result<BTreeMap<u8, u8>, ParseError> {
    ata_checksum(page)?;
    let mut out = BTreeMap::new();
    for n in 0..ATTRIBUTES {
        let e = &page[2 + n * 12..2 + n * 12 + 12];
        if e[0] != 0 {
            out.insert(e[0], e[1]);
        }
    }
    Ok(out)
}

/// SMART READ DATA (with the thresholds, when read) into a reading:
/// every attribute, the named counters, power-on hours and temperature.
/// Entry n is at `2 + 12n`: id, flags (2 bytes LE), current, worst, raw (6
/// bytes LE), reserved. The checksum is checked.
pub fn parse_ata_smart(page: &[u8], thresholds: Option<&BTreeMap<u8, u8>>) -> Result<HealthReading, ParseError> {
    ata_checksum(page)?;
    let mut r = HealthReading {
        source: "ata_smart".to_string(),
        ..HealthReading::default()
    };
    let mut t194 = None;
    let mut t190 = None;
    for n in 0..ATTRIBUTES {
        let e = &page[2 + n * 12..2 + n * 12 + 12];
        let id = e[0];
        if id == 0 {
            continue;
        }
        let raw = le(&e[5..11]);
        let threshold = thresholds.and_then(|t| t.get(&id).copied());
        let current = e[3];
        let a = SmartAttribute {
            id,
            name: attribute_name(id).map(str::to_string),
            flags: u16::from_le_bytes([e[1], e[2]]),
            current,
            worst: e[4],
            threshold,
            raw,
            failing: threshold.is_some_and(|t| t > 0 && current <= t),
        };
        if let Some((_, name)) = ATA_COUNTERS.iter().find(|(i, _)| *i == id) {
            r.counters.insert(name.to_string(), raw);
        }
        match id {
            // Hours in the low 32 bits: some vendors keep minutes or
            // milliseconds since the last hour in the bytes above.
            9 => r.power_on_hours = Some(raw & 0xffff_ffff),
            // The current temperature is the raw value's low byte, °C
            // (the bytes above often hold the lowest and highest seen).
            194 => t194 = Some(i32::from(e[5])),
            190 => t190 = Some(i32::from(e[5])),
            _ => {}
        }
        r.attributes.push(a);
    }
    r.temperature_c = t194.or(t190);
    Ok(r)
}

/// SMART RETURN STATUS: is the disk's status good? From the sense buffer
/// of an ATA PASS-THROUGH with CK_COND set: descriptor format (0x72/0x73)
/// with the ATA Status Return descriptor (code 09h, SAT-3 12.2.2.6: LBA
/// mid at byte 9, LBA high at byte 11 of the descriptor), or fixed format
/// (0x70/0x71) with ATA information (SAT-3 12.2.2.7: LBA bits 15:8 at byte
/// 10, 23:16 at byte 11). 4Fh/C2h is "ok", F4h/2Ch "threshold exceeded".
pub fn parse_ata_status_sense(sense: &[u8]) -> Result<bool, ParseError> {
    let (mid, high) = ata_lba_mid_high(sense).ok_or(ParseError::NoRegisters)?;
    match (mid, high) {
        (0x4f, 0xc2) => Ok(true),
        (0xf4, 0x2c) => Ok(false),
        (mid, high) => Err(ParseError::UnknownStatus { mid, high }),
    }
}

/// LBA mid and high from an ATA PASS-THROUGH sense buffer.
fn ata_lba_mid_high(sense: &[u8]) -> Option<(u8, u8)> {
    match sense.first()? & 0x7f {
        0x72 | 0x73 => {
            let len = usize::from(*sense.get(7)?);
            let end = (8 + len).min(sense.len());
            let mut at = 8;
            while at + 2 <= end {
                let code = sense[at];
                let dlen = usize::from(sense[at + 1]);
                if code == 0x09 && dlen >= 12 && at + 14 <= sense.len() {
                    let d = &sense[at..at + 14];
                    return Some((d[9], d[11]));
                }
                at += 2 + dlen;
            }
            None
        }
        // Fixed format: only with the ATA PASS-THROUGH INFORMATION
        // AVAILABLE code (ASC 00h, ASCQ 1Dh), else bytes 10-11 are not
        // registers.
        0x70 | 0x71 if sense.len() >= 14 && sense[12] == 0x00 && sense[13] == 0x1d => Some((sense[10], sense[11])),
        _ => None,
    }
}

/// Which NVMe critical warning bits mean what (NVMe 1.4 figure 194, byte 0).
pub const NVME_CRITICAL_WARNINGS: [(u8, &str); 6] = [
    (0x01, "available spare below threshold"),
    (0x02, "temperature above or below a threshold"),
    (0x04, "reliability degraded by media or internal errors"),
    (0x08, "media placed in read-only mode"),
    (0x10, "volatile memory backup failed"),
    (0x20, "persistent memory region read-only"),
];

/// The critical warning bits of `w`, in words, `; `-separated.
pub fn nvme_warning_text(w: u8) -> String {
    let mut v: Vec<&str> = NVME_CRITICAL_WARNINGS
        .iter()
        .filter(|(b, _)| w & b != 0)
        .map(|(_, t)| *t)
        .collect();
    if w & 0xc0 != 0 {
        v.push("reserved bits set");
    }
    v.join("; ")
}

/// The NVMe SMART/health log (log page 02h, 512 bytes) into a reading.
/// Offsets (NVMe 1.4 figure 194): 0 critical warning, 1-2 composite
/// temperature (K), 3 available spare %, 4 spare threshold %, 5 percentage
/// used, 32-47 data units read, 48-63 written (units of 1000 x 512 bytes),
/// 64-79 host read commands, 80-95 host write commands, 112-127 power
/// cycles, 128-143 power-on hours, 144-159 unsafe shutdowns, 160-175 media
/// and data integrity errors, 176-191 error log entries (128-bit LE,
/// saturated to u64 here), 192-195 warning and 196-199 critical composite
/// temperature time (minutes).
pub fn parse_nvme_smart_log(page: &[u8]) -> Result<HealthReading, ParseError> {
    need(page, PAGE)?;
    let k = u16::from_le_bytes([page[1], page[2]]);
    let units_read = le(&page[32..48]);
    let units_written = le(&page[48..64]);
    let mut c = BTreeMap::new();
    let mut put = |name: &str, v: u64| {
        c.insert(name.to_string(), v);
    };
    put("data_read_bytes", units_read.saturating_mul(NVME_DATA_UNIT_BYTES));
    put("data_written_bytes", units_written.saturating_mul(NVME_DATA_UNIT_BYTES));
    put("host_read_commands", le(&page[64..80]));
    put("host_write_commands", le(&page[80..96]));
    put("power_cycles", le(&page[112..128]));
    put("unsafe_shutdowns", le(&page[144..160]));
    put("media_errors", le(&page[160..176]));
    put("error_log_entries", le(&page[176..192]));
    put("warning_temperature_minutes", le(&page[192..196]));
    put("critical_temperature_minutes", le(&page[196..200]));
    let critical_warning = page[0];
    Ok(HealthReading {
        source: "nvme_smart_log".to_string(),
        smart_passed: Some(critical_warning == 0),
        // 0 K means "not reported".
        temperature_c: (k != 0).then(|| i32::from(k) - KELVIN_0C),
        temperature_k: (k != 0).then_some(k),
        power_on_hours: Some(le(&page[128..144])),
        counters: c,
        nvme: Some(NvmeHealth {
            critical_warning,
            available_spare_pct: page[3],
            available_spare_threshold_pct: page[4],
            percentage_used: page[5],
            data_units_read: units_read,
            data_units_written: units_written,
        }),
        ..HealthReading::default()
    })
}

/// Identify Controller (4096 bytes): (WCTEMP, CCTEMP) in kelvins, bytes
/// 266-267 and 268-269; 0 (not reported) is `None`.
pub fn parse_nvme_id_ctrl_temps(page: &[u8]) -> Result<(Option<u16>, Option<u16>), ParseError> {
    need(page, 270)?;
    let w = u16::from_le_bytes([page[266], page[267]]);
    let c = u16::from_le_bytes([page[268], page[269]]);
    Ok(((w != 0).then_some(w), (c != 0).then_some(c)))
}

/// One SCSI log page's parameters: (parameter code, value bytes), checked
/// to be page `want`. Header: page code (byte 0, low 6 bits), page length
/// (bytes 2-3, BE); each parameter: code (2 bytes BE), control, length,
/// value (SPC-4 7.3). A parameter cut short by the buffer ends the list.
pub fn log_parameters(page: &[u8], want: u8) -> Result<Vec<(u16, &[u8])>, ParseError> {
    need(page, 4)?;
    let got = page[0] & 0x3f;
    if got != want {
        return Err(ParseError::WrongPage { want, got });
    }
    let len = usize::from(u16::from_be_bytes([page[2], page[3]]));
    let end = (4 + len).min(page.len());
    let mut out = Vec::new();
    let mut at = 4;
    while at + 4 <= end {
        let code = u16::from_be_bytes([page[at], page[at + 1]]);
        let plen = usize::from(page[at + 3]);
        if at + 4 + plen > end {
            break;
        }
        out.push((code, &page[at + 4..at + 4 + plen]));
        at += 4 + plen;
    }
    Ok(out)
}

/// The SCSI temperature log page (0Dh): (temperature, reference
/// temperature) in °C, parameter 0000h and 0001h, each value's byte 1;
/// FFh is "not available".
pub fn parse_scsi_temperature(page: &[u8]) -> Result<(Option<i32>, Option<i32>), ParseError> {
    let mut t = (None, None);
    for (code, v) in log_parameters(page, 0x0d)? {
        let c = v.get(1).copied().filter(|&x| x != 0xff).map(i32::from);
        match code {
            0 => t.0 = c,
            1 => t.1 = c,
            _ => {}
        }
    }
    Ok(t)
}

/// A SCSI error counter page (02h write, 03h read, 05h verify): its total
/// uncorrected errors (parameter 0006h, BE), `None` when absent.
pub fn parse_scsi_uncorrected(page: &[u8], want: u8) -> Result<Option<u64>, ParseError> {
    Ok(log_parameters(page, want)?
        .into_iter()
        .find(|(c, _)| *c == 6)
        .map(|(_, v)| be(v)))
}

/// The Background Scan Results log page (SBC-3 6.4.2, page 15h): its
/// status parameter's (0000h) accumulated power-on minutes (value bytes
/// 0-3, BE) as whole hours, what smartctl prints as "Accumulated power on
/// time"; `None` when the parameter is absent or short.
pub fn parse_scsi_power_on_hours(page: &[u8]) -> Result<Option<u64>, ParseError> {
    Ok(log_parameters(page, 0x15)?
        .into_iter()
        .find(|(c, _)| *c == 0)
        .and_then(|(_, v)| v.get(..4))
        .map(|m| be(m) / 60))
}

/// READ DEFECT DATA (10)'s operation code (SBC-3): [`read_defect_cdb`].
pub const READ_DEFECT_DATA_10: u8 = 0x37;

/// READ DEFECT DATA (10) asking for the grown defect list alone (REQ_GLIST,
/// byte 2 bit 3) in the bytes-from-index format (100b), with room for the
/// 4-byte header only: the list's length is all that is read, as smartctl
/// reads "Elements in grown defect list".
pub const fn read_defect_cdb() -> [u8; 10] {
    [READ_DEFECT_DATA_10, 0, 1 << 3 | 0b100, 0, 0, 0, 0, 0, 4, 0]
}

/// The number of entries in the grown defect list from READ DEFECT DATA
/// (10)'s header: GLISTV (byte 1 bit 3) says the list is valid, bits 2:0
/// the format the device answered in (it may choose another than asked),
/// which gives a descriptor's length (4 bytes for the short block format
/// 000b; 8 for long block 011b, bytes from index 100b, physical sector
/// 101b), bytes 2-3 the list's length in bytes. `None` when the device says
/// the grown list is not valid (GLISTV clear).
pub fn parse_grown_defects(header: &[u8]) -> Result<Option<u64>, ParseError> {
    need(header, 4)?;
    if header[1] & 1 << 3 == 0 {
        return Ok(None);
    }
    let per = match header[1] & 0b111 {
        0b000 => 4,
        0b011..=0b101 => 8,
        format => return Err(ParseError::DefectFormat { format }),
    };
    Ok(Some(u64::from(u16::from_be_bytes([header[2], header[3]])) / per))
}

/// `after - before` of every counter in both (saturating to i64).
pub fn counter_delta(before: &HealthReading, after: &HealthReading) -> BTreeMap<String, i64> {
    let mut d = BTreeMap::new();
    for (k, &b) in &before.counters {
        if let Some(&a) = after.counters.get(k) {
            let v = i128::from(a) - i128::from(b);
            d.insert(
                k.clone(),
                i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX }),
            );
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The grown defect list's length, by the format the device answered
    /// in: 24 bytes are 3 entries of 8 (bytes from index) or 6 of 4 (short
    /// block); GLISTV clear is no figure; a reserved format and a short
    /// header are errors.
    #[test]
    fn grown_defects_from_the_read_defect_data_header() {
        assert_eq!(read_defect_cdb(), [0x37, 0, 0x0c, 0, 0, 0, 0, 0, 4, 0]);
        assert_eq!(parse_grown_defects(&[0, 0x0c, 0, 24]), Ok(Some(3)));
        assert_eq!(parse_grown_defects(&[0, 0x08, 0, 24]), Ok(Some(6)));
        assert_eq!(parse_grown_defects(&[0, 0x1d, 0x01, 0x00]), Ok(Some(32)));
        assert_eq!(parse_grown_defects(&[0, 0x04, 0, 24]), Ok(None));
        assert_eq!(
            parse_grown_defects(&[0, 0x0e, 0, 8]),
            Err(ParseError::DefectFormat { format: 0b110 })
        );
        assert_eq!(
            parse_grown_defects(&[0, 0x0c]),
            Err(ParseError::Short { need: 4, got: 2 })
        );
    }

    /// QEMU 7.2's `smart_attributes` table (hw/ide/core.c): id, flags,
    /// hflags, current, worst, raw (6 bytes), threshold; "based on a
    /// Seagate ST3500418AS but modified to make more sense in QEMU".
    const QEMU_ATTRS: [[u8; 12]; 7] = [
        [0x01, 0x03, 0x00, 0x64, 0x64, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06],
        [0x03, 0x03, 0x00, 0x64, 0x64, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
        [0x04, 0x02, 0x00, 0x64, 0x64, 0x64, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14],
        [0x05, 0x03, 0x00, 0x64, 0x64, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x24],
        [0x09, 0x03, 0x00, 0x64, 0x64, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
        [0x0c, 0x03, 0x00, 0x64, 0x64, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
        [190, 0x03, 0x00, 0x45, 0x45, 0x1f, 0x00, 0x1f, 0x1f, 0x00, 0x00, 0x32],
    ];

    fn checksum(p: &mut [u8; 512]) {
        p[511] = 0;
        let s = p[..511].iter().fold(0u8, |a, &b| a.wrapping_add(b));
        p[511] = 0u8.wrapping_sub(s);
    }

    /// What QEMU's cmd_smart SMART_READ_DATA builds: version 1, bytes 0..11
    /// of each table row at 2 + 12n, the offline/capability bytes, checksum.
    fn qemu_data() -> [u8; 512] {
        let mut p = [0u8; 512];
        p[0] = 1;
        for (n, a) in QEMU_ATTRS.iter().enumerate() {
            p[2 + n * 12..2 + n * 12 + 11].copy_from_slice(&a[..11]);
        }
        p[362] = 0x02;
        p[364] = 0x20;
        p[365] = 0x01;
        p[367] = 1 << 4 | 1 << 3 | 1;
        p[368] = 0x03;
        p[370] = 0x01;
        p[372] = 0x02;
        p[373] = 0x36;
        p[374] = 0x01;
        checksum(&mut p);
        p
    }

    /// SMART_READ_THRESH: id at 2 + 12n, the threshold (row[11]) after it.
    fn qemu_thresholds() -> [u8; 512] {
        let mut p = [0u8; 512];
        p[0] = 1;
        for (n, a) in QEMU_ATTRS.iter().enumerate() {
            p[2 + n * 12] = a[0];
            p[3 + n * 12] = a[11];
        }
        checksum(&mut p);
        p
    }

    #[test]
    fn qemu_ide_smart_values() {
        let th = parse_ata_thresholds(&qemu_thresholds()).unwrap();
        assert_eq!(th.get(&5), Some(&0x24));
        let r = parse_ata_smart(&qemu_data(), Some(&th)).unwrap();
        assert_eq!(r.source, "ata_smart");
        assert_eq!(r.attributes.len(), 7);
        // Power-on hours: attribute 9, raw 1.
        assert_eq!(r.power_on_hours, Some(1));
        // Temperature: attribute 190 (QEMU has no 194), raw low byte 0x1f.
        assert_eq!(r.temperature_c, Some(31));
        assert_eq!(r.counters.get("reallocated_sectors"), Some(&0));
        assert_eq!(r.counters.get("power_cycles"), Some(&0));
        // QEMU has no 197, 198, 199: not reported as 0.
        assert_eq!(r.counters.get("pending_sectors"), None);
        assert_eq!(r.counters.get("crc_errors"), None);
        let a190 = r.attributes.iter().find(|a| a.id == 190).unwrap();
        assert_eq!((a190.current, a190.worst, a190.threshold), (0x45, 0x45, Some(0x32)));
        assert_eq!(a190.raw, 0x1f1f_001f);
        assert_eq!(a190.name.as_deref(), Some("airflow_temperature_celsius"));
        let a4 = r.attributes.iter().find(|a| a.id == 4).unwrap();
        assert_eq!((a4.flags, a4.raw, a4.threshold), (0x02, 0x64, Some(0x14)));
        assert!(r.attributes.iter().all(|a| !a.failing), "{:?}", r.attributes);
    }

    #[test]
    fn temperature_194_wins_over_190_and_counters_are_raw48() {
        let mut p = [0u8; 512];
        p[0] = 1;
        let rows: [[u8; 11]; 4] = [
            [190, 0x22, 0, 60, 50, 40, 0, 0, 0, 0, 0],
            [194, 0x22, 0, 36, 20, 36, 0, 15, 0, 55, 0],
            [197, 0x12, 0, 100, 100, 0x08, 0x01, 0, 0, 0, 0x01],
            [9, 0x32, 0, 90, 90, 0x10, 0x27, 0, 0, 0x05, 0x00],
        ];
        for (n, a) in rows.iter().enumerate() {
            p[2 + n * 12..2 + n * 12 + 11].copy_from_slice(a);
        }
        checksum(&mut p);
        let r = parse_ata_smart(&p, None).unwrap();
        assert_eq!(r.temperature_c, Some(36));
        assert_eq!(r.counters["pending_sectors"], 0x0100_0000_0108);
        // Power-on hours: low 32 bits only (10000 hours, 5 in byte 4).
        assert_eq!(r.power_on_hours, Some(10_000));
        assert!(r.attributes.iter().all(|a| a.threshold.is_none() && !a.failing));
    }

    #[test]
    fn failing_attribute_and_zero_threshold() {
        let mut p = qemu_data();
        // Attribute 5 (entry 3) falls to its threshold 0x24.
        p[2 + 3 * 12 + 3] = 0x24;
        checksum(&mut p);
        let th = parse_ata_thresholds(&qemu_thresholds()).unwrap();
        let r = parse_ata_smart(&p, Some(&th)).unwrap();
        let failing: Vec<u8> = r.attributes.iter().filter(|a| a.failing).map(|a| a.id).collect();
        assert_eq!(failing, vec![5]);
        // A threshold of 0 never fails: attribute 9 at current 0.
        let mut p = qemu_data();
        p[2 + 4 * 12 + 3] = 0;
        checksum(&mut p);
        let r = parse_ata_smart(&p, Some(&th)).unwrap();
        assert!(r.attributes.iter().all(|a| !a.failing));
    }

    #[test]
    fn checksum_and_length_are_checked() {
        let mut p = qemu_data();
        p[100] ^= 1;
        assert_eq!(parse_ata_smart(&p, None), Err(ParseError::Checksum { sum: 1 }));
        assert_eq!(
            parse_ata_smart(&p[..511], None),
            Err(ParseError::Short { need: 512, got: 511 })
        );
        assert!(parse_ata_thresholds(&[0u8; 12]).is_err());
        // All zeros sums to 0: a valid, empty page.
        assert!(parse_ata_smart(&[0u8; 512], None).unwrap().attributes.is_empty());
    }

    /// libata's `ata_gen_passthru_sense`: descriptor format, sense key
    /// RECOVERED ERROR, ASC/ASCQ 00h/1Dh, then the ATA Status Return
    /// descriptor (09h, 12 bytes) with the result registers.
    fn descriptor_sense(mid: u8, high: u8) -> [u8; 32] {
        let mut s = [0u8; 32];
        s[0] = 0x72;
        s[1] = 0x01;
        s[2] = 0x00;
        s[3] = 0x1d;
        s[7] = 14;
        let d = &mut s[8..22];
        d[0] = 0x09;
        d[1] = 12;
        d[9] = mid;
        d[11] = high;
        d[13] = 0x50; // status: DRDY | DSC
        s
    }

    #[test]
    fn return_status_from_sense() {
        // QEMU's SMART_STATUS: hcyl/lcyl = C2h/4Fh without errors, else 2Ch/F4h.
        assert_eq!(parse_ata_status_sense(&descriptor_sense(0x4f, 0xc2)), Ok(true));
        assert_eq!(parse_ata_status_sense(&descriptor_sense(0xf4, 0x2c)), Ok(false));
        assert_eq!(
            parse_ata_status_sense(&descriptor_sense(0, 0)),
            Err(ParseError::UnknownStatus { mid: 0, high: 0 })
        );
        // The descriptor after another one (information, 0x00, 10 bytes).
        let mut s = [0u8; 40];
        s[0] = 0x72;
        s[7] = 12 + 14;
        s[8] = 0x00;
        s[9] = 10;
        s[20] = 0x09;
        s[21] = 12;
        s[20 + 9] = 0xf4;
        s[20 + 11] = 0x2c;
        assert_eq!(parse_ata_status_sense(&s), Ok(false));
        // Fixed format with ASC/ASCQ 00h/1Dh: LBA 15:8 at 10, 23:16 at 11.
        let mut f = [0u8; 18];
        f[0] = 0x70;
        f[2] = 0x01;
        f[7] = 10;
        f[10] = 0x4f;
        f[11] = 0xc2;
        f[12] = 0;
        f[13] = 0x1d;
        assert_eq!(parse_ata_status_sense(&f), Ok(true));
        f[13] = 0;
        assert_eq!(parse_ata_status_sense(&f), Err(ParseError::NoRegisters));
        assert_eq!(parse_ata_status_sense(&[]), Err(ParseError::NoRegisters));
        // A descriptor list that claims more than the buffer holds.
        let mut t = descriptor_sense(0x4f, 0xc2);
        t[7] = 255;
        assert_eq!(parse_ata_status_sense(&t[..20]), Err(ParseError::NoRegisters));
    }

    /// What QEMU 7.2's nvme_smart_info returns (hw/nvme/ctrl.c): critical
    /// warning from `smart_critical_warning` (0) plus the temperature bit
    /// when the temperature is at or above temp_thresh_hi, data units
    /// DIV_ROUND_UP(sectors, 1000), the commands, temperature =
    /// NVME_TEMPERATURE (0x143 = 323 K), power-on hours from the virtual
    /// clock; every other byte 0 (available spare and its threshold too).
    #[test]
    fn nvme_log_values() {
        let mut p = [0u8; 512];
        p[1..3].copy_from_slice(&0x143u16.to_le_bytes());
        p[32..40].copy_from_slice(&9u64.to_le_bytes());
        p[48..56].copy_from_slice(&3u64.to_le_bytes());
        p[64..72].copy_from_slice(&2100u64.to_le_bytes());
        p[80..88].copy_from_slice(&700u64.to_le_bytes());
        p[128] = 2;
        p[160] = 4;
        p[176] = 6;
        p[192..196].copy_from_slice(&7u32.to_le_bytes());
        p[3] = 100;
        p[4] = 10;
        p[5] = 3;
        let r = parse_nvme_smart_log(&p).unwrap();
        assert_eq!(r.temperature_k, Some(323));
        assert_eq!(r.temperature_c, Some(50));
        assert_eq!(r.smart_passed, Some(true));
        assert_eq!(r.power_on_hours, Some(2));
        assert_eq!(r.counters["data_read_bytes"], 9 * 512_000);
        assert_eq!(r.counters["data_written_bytes"], 3 * 512_000);
        assert_eq!(r.counters["host_read_commands"], 2100);
        assert_eq!(r.counters["host_write_commands"], 700);
        assert_eq!(r.counters["media_errors"], 4);
        assert_eq!(r.counters["error_log_entries"], 6);
        assert_eq!(r.counters["warning_temperature_minutes"], 7);
        let n = r.nvme.unwrap();
        assert_eq!(
            (
                n.available_spare_pct,
                n.available_spare_threshold_pct,
                n.percentage_used
            ),
            (100, 10, 3)
        );
        assert_eq!((n.data_units_read, n.data_units_written), (9, 3));
        // A warning bit: not passed; a 128-bit counter beyond u64 saturates.
        p[0] = 0x02;
        p[160..176].copy_from_slice(&[0xff; 16]);
        let r = parse_nvme_smart_log(&p).unwrap();
        assert_eq!(r.smart_passed, Some(false));
        assert_eq!(r.counters["media_errors"], u64::MAX);
        assert_eq!(nvme_warning_text(0x02), "temperature above or below a threshold");
        assert!(parse_nvme_smart_log(&p[..511]).is_err());
        // 0 K is "not reported".
        assert_eq!(parse_nvme_smart_log(&[0u8; 512]).unwrap().temperature_c, None);
    }

    #[test]
    fn nvme_identify_temperature_thresholds() {
        // QEMU: wctemp = NVME_TEMPERATURE_WARNING 0x157 (343 K), cctemp =
        // NVME_TEMPERATURE_CRITICAL 0x175 (373 K).
        let mut id = [0u8; 4096];
        id[266..268].copy_from_slice(&0x157u16.to_le_bytes());
        id[268..270].copy_from_slice(&0x175u16.to_le_bytes());
        assert_eq!(parse_nvme_id_ctrl_temps(&id), Ok((Some(343), Some(373))));
        assert_eq!(parse_nvme_id_ctrl_temps(&[0u8; 4096]), Ok((None, None)));
        assert!(parse_nvme_id_ctrl_temps(&id[..269]).is_err());
    }

    #[test]
    fn scsi_log_pages() {
        // Temperature page: 0000h = 38 °C, 0001h reference = 65 °C.
        let t = [0x0d, 0, 0, 12, 0, 0, 0x03, 2, 0, 38, 0, 1, 0x03, 2, 0, 65];
        assert_eq!(parse_scsi_temperature(&t), Ok((Some(38), Some(65))));
        let na = [0x0d, 0, 0, 6, 0, 0, 0x03, 2, 0, 0xff];
        assert_eq!(parse_scsi_temperature(&na), Ok((None, None)));
        assert_eq!(
            parse_scsi_temperature(&[0x03, 0, 0, 0]),
            Err(ParseError::WrongPage { want: 0x0d, got: 0x03 })
        );
        // Read error counters: 0000h, then 0006h (total uncorrected) = 0x0102.
        let r = [0x03, 0, 0, 14, 0, 0, 0x02, 2, 0, 9, 0, 6, 0x02, 4, 0, 0, 1, 2];
        assert_eq!(parse_scsi_uncorrected(&r, 0x03), Ok(Some(0x0102)));
        // A page length beyond the buffer: the whole parameters only.
        assert_eq!(parse_scsi_uncorrected(&r[..15], 0x03), Ok(None));
        let mut big = r;
        big[3] = 200;
        assert_eq!(parse_scsi_uncorrected(&big, 0x03), Ok(Some(0x0102)));
        // Background scan results: 0000h, 12 bytes, 1,578,240 minutes
        // (26,304 h) powered on, then status and counts.
        let mut b = vec![0x15, 0, 0, 16, 0, 0, 0x03, 12];
        b.extend(1_578_240u32.to_be_bytes());
        b.extend([0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(parse_scsi_power_on_hours(&b), Ok(Some(26_304)));
        assert_eq!(parse_scsi_power_on_hours(&b[..10]), Ok(None));
        assert!(parse_scsi_power_on_hours(&r).is_err());
    }

    #[test]
    fn delta_of_common_counters() {
        let mut a = HealthReading::default();
        let mut b = HealthReading::default();
        a.counters.insert("reallocated_sectors".into(), 2);
        a.counters.insert("only_before".into(), 1);
        b.counters.insert("reallocated_sectors".into(), 10);
        b.counters.insert("only_after".into(), 1);
        b.counters.insert("x".into(), 0);
        a.counters.insert("x".into(), u64::MAX);
        let d = counter_delta(&a, &b);
        assert_eq!(d.len(), 2);
        assert_eq!(d["reallocated_sectors"], 8);
        assert_eq!(d["x"], i64::MIN);
    }
}
