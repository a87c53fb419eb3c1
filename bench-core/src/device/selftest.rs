//! SMART self-test answers, parsed: the ATA self-test execution status
//! (SMART READ DATA byte 363) and polling times, the ATA SMART self-test
//! log (log 06h) and extended self-test log (log 07h), the NVMe Device
//! Self-test log (log page 06h) and Identify Controller's self-test fields,
//! the SCSI self-test results log page (10h). Pure: bytes in, entries out;
//! init sends the commands. Every parser takes any byte slice and never
//! panics (the fuzz target holds it to that).
//!
//! Layouts: ATA/ATAPI-8 ACS and ACS-3 (SMART READ DATA offline fields,
//! Table 53 self-test execution status, A.16 SMART self-test log, A.9
//! extended self-test log), NVMe Base 1.4 (Figure 209-210 Device Self-test
//! log, Figure 247 OACS, EDSTT), SPC-4 7.3.17 (self-test results log page).

use alloc::vec::Vec;

use crate::device::health::{ata_checksum, le_bytes, log_parameters, ParseError};
use crate::document::result::{SelfTestKind, SelfTestOutcome};

/// Where an entry, or the execution status, stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Still running.
    InProgress,
    /// Ended so.
    Ended(SelfTestOutcome),
}

/// One self-test log entry, whatever the transport.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Which test it was: ATA the subcommand (LBA low: 01h short, 02h
    /// extended, 03h conveyance, 81h-83h their captive forms), NVMe the
    /// Device Self-test code (1 short, 2 extended), SCSI the self-test
    /// code (1 background short, 2 background extended, 5 and 6 foreground).
    pub code: u8,
    /// The result code as the device wrote it (the low 4 bits).
    pub result: u8,
    /// How it stands.
    pub status: Status,
    /// ATA: percent left when it ended (the status byte's low nibble x 10).
    pub remaining_pct: Option<u8>,
    /// The first failing LBA, where the entry gives one.
    pub failing_lba: Option<u64>,
    /// The failed segment (NVMe, SCSI), where the entry gives one.
    pub segment: Option<u8>,
    /// Power-on hours when it was written.
    pub power_on_hours: Option<u64>,
}

impl Entry {
    /// True if it is an entry of a `kind` self-test.
    pub fn is_kind(&self, kind: SelfTestKind, transport: Transport) -> bool {
        let want = match kind {
            SelfTestKind::Short => 1,
            SelfTestKind::Extended => 2,
            SelfTestKind::Conveyance => 3,
        };
        match transport {
            // Captive forms have bit 7 set.
            Transport::Ata => self.code & 0x7f == want,
            Transport::Nvme => self.code == want,
            // Foreground short/extended are 5/6.
            Transport::Scsi => self.code == want || self.code == want + 4,
        }
    }
}

/// Whose codes an entry carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// ATA SMART.
    Ata,
    /// NVMe Device Self-test.
    Nvme,
    /// SCSI SEND DIAGNOSTIC.
    Scsi,
}

/// The outcome of ATA self-test execution status `nibble` (ACS-3 Table 53:
/// bits 7:4 of the status byte); 15 is "in progress".
pub fn ata_outcome(nibble: u8) -> Status {
    use SelfTestOutcome::*;
    Status::Ended(match nibble & 0x0f {
        0 => Completed,
        1 => AbortedByHost,
        2 => InterruptedByReset,
        3 => FatalError,
        4 => FailedUnknown,
        5 => FailedElectrical,
        6 => FailedServo,
        7 => FailedRead,
        8 => FailedHandling,
        15 => return Status::InProgress,
        _ => Reserved,
    })
}

/// The outcome of NVMe Device Self-test result `nibble` (NVMe 1.4 Figure
/// 210: bits 3:0 of the status byte); Fh is "entry not used".
pub fn nvme_outcome(nibble: u8) -> Option<SelfTestOutcome> {
    use SelfTestOutcome::*;
    Some(match nibble & 0x0f {
        0 => Completed,
        1 => AbortedByHost,
        2 => InterruptedByReset,
        3 => AbortedByNamespaceRemoval,
        4 => AbortedByFormat,
        5 => FatalError,
        6 => FailedUnknown,
        7 => FailedSegment,
        8 => AbortedUnknown,
        9 => AbortedBySanitize,
        15 => return None,
        _ => Reserved,
    })
}

/// The outcome of SCSI self-test result `nibble` (SPC-4 Table 407); Fh
/// is "in progress".
pub fn scsi_outcome(nibble: u8) -> Status {
    use SelfTestOutcome::*;
    Status::Ended(match nibble & 0x0f {
        0 => Completed,
        1 => AbortedByHost,
        2 => InterruptedByReset,
        3 => FatalError,
        4 => FailedUnknown,
        5..=7 => FailedSegment,
        15 => return Status::InProgress,
        _ => Reserved,
    })
}

/// An outcome in words, for the console and the document.
pub fn describe(o: SelfTestOutcome) -> &'static str {
    use SelfTestOutcome::*;
    match o {
        Completed => "completed without error",
        AbortedByHost => "aborted by the host",
        InterruptedByReset => "interrupted by a reset",
        AbortedByNamespaceRemoval => "aborted: a namespace was removed",
        AbortedByFormat => "aborted by a Format NVM command",
        AbortedBySanitize => "aborted by a sanitize operation",
        AbortedUnknown => "aborted for an unknown reason",
        FatalError => "a fatal or unknown error kept it from completing",
        FailedUnknown => "failed: a test element failed (which, the device does not say)",
        FailedElectrical => "failed: the electrical element",
        FailedServo => "failed: the servo or seek element",
        FailedRead => "failed: the read element",
        FailedHandling => "failed: handling damage suspected",
        FailedSegment => "failed: a test segment",
        Reserved => "a result code the standard reserves",
        Timeout => "still running when the wait ran out; aborted on the device",
        Interrupted => "the run was interrupted; aborted on the device",
        NotSupported => "not supported",
        Error => "the self-test commands failed",
    }
}

/// The ATA self-test execution status byte (SMART READ DATA byte 363):
/// bits 7:4 the status, bits 3:0 the percent left in tenths (meaningful
/// while in progress, and for an aborted or failed test).
pub fn ata_execution_status(byte: u8) -> (Status, u8) {
    (ata_outcome(byte >> 4), (byte & 0x0f).min(10) * 10)
}

/// What SMART READ DATA says about self-tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtaCaps {
    /// The self-test execution status byte (363).
    pub status: u8,
    /// Off-line data collection capability (367) bit 0: EXECUTE OFF-LINE
    /// IMMEDIATE is implemented.
    pub execute_offline: bool,
    /// Bit 4: self-tests are implemented.
    pub self_test: bool,
    /// Bit 5: the conveyance self-test is implemented.
    pub conveyance: bool,
    /// Recommended polling minutes: short (372).
    pub short_min: u8,
    /// Extended (373; FFh: the 16-bit value of 375-376).
    pub extended_min: u16,
    /// Conveyance (374).
    pub conveyance_min: u8,
}

impl AtaCaps {
    /// Whether `kind` is implemented.
    pub fn supports(&self, kind: SelfTestKind) -> bool {
        self.execute_offline
            && self.self_test
            && match kind {
                SelfTestKind::Conveyance => self.conveyance,
                _ => true,
            }
    }

    /// The device's polling time for `kind`, minutes (`None`: 0, not given).
    pub fn minutes(&self, kind: SelfTestKind) -> Option<u16> {
        let m = match kind {
            SelfTestKind::Short => u16::from(self.short_min),
            SelfTestKind::Extended => self.extended_min,
            SelfTestKind::Conveyance => u16::from(self.conveyance_min),
        };
        (m != 0).then_some(m)
    }
}

/// SMART READ DATA's self-test fields (the checksum is checked).
pub fn parse_ata_caps(page: &[u8]) -> Result<AtaCaps, ParseError> {
    ata_checksum(page)?;
    let cap = page[367];
    let extended_min = if page[373] == 0xff {
        u16::from_le_bytes([page[375], page[376]])
    } else {
        u16::from(page[373])
    };
    Ok(AtaCaps {
        status: page[363],
        execute_offline: cap & 0x01 != 0,
        self_test: cap & 0x10 != 0,
        conveyance: cap & 0x20 != 0,
        short_min: page[372],
        extended_min,
        conveyance_min: page[374],
    })
}

/// An ATA self-test log: its revision, the index of the newest descriptor
/// (1-based; 0: none written), and the entries, newest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AtaLog {
    /// Revision (bytes 0-1).
    pub revision: u16,
    /// The newest descriptor's index (log 06h: 0-21; log 07h: 0-65535).
    pub index: u16,
    /// The entries written, newest first.
    pub entries: Vec<Entry>,
}

/// Descriptors in the SMART self-test log (log 06h).
pub const ATA_LOG_DESCRIPTORS: usize = 21;
/// Descriptors in one page of the extended self-test log (log 07h).
pub const ATA_EXT_LOG_DESCRIPTORS: usize = 19;

/// One ATA descriptor: byte 0 the subcommand, 1 the execution status, 2-3
/// the life timestamp (hours), 4 the checkpoint, then the failing LBA
/// (`lba` bytes, LE; all ones: none). All zeros: never written.
fn ata_entry(d: &[u8], lba: usize) -> Option<Entry> {
    if d.iter().all(|&b| b == 0) {
        return None;
    }
    let (status, remaining) = ata_execution_status(d[1]);
    let raw = le_bytes(&d[5..5 + lba]);
    let none = if lba == 4 { 0xffff_ffff } else { (1u64 << (8 * lba)) - 1 };
    let failed = matches!(status, Status::Ended(o) if o.passed() == Some(false));
    Some(Entry {
        code: d[0],
        result: d[1] >> 4,
        status,
        remaining_pct: Some(remaining),
        failing_lba: (failed && raw != none).then_some(if lba == 4 { raw & 0x0fff_ffff } else { raw }),
        segment: None,
        power_on_hours: Some(u64::from(u16::from_le_bytes([d[2], d[3]]))),
    })
}

/// The entries of `n` descriptors of `size` bytes from `first`, newest
/// first: from descriptor `index` (1-based) backwards, wrapping.
fn ata_entries(page: &[u8], first: usize, size: usize, n: usize, index: usize, lba: usize) -> Vec<Entry> {
    if index == 0 || index > n {
        return Vec::new();
    }
    (0..n)
        .filter_map(|k| {
            let i = (index - 1 + n - k) % n;
            ata_entry(&page[first + i * size..first + (i + 1) * size], lba)
        })
        .collect()
}

/// The SMART self-test log (SMART READ LOG, log 06h; ACS-3 A.16): revision
/// (0-1), 21 descriptors of 24 bytes from 2 (4-byte failing LBA, 28 bits
/// used), the index of the newest at 508. The checksum is checked; an index
/// beyond 21 gives no entries.
pub fn parse_ata_self_test_log(page: &[u8]) -> Result<AtaLog, ParseError> {
    ata_checksum(page)?;
    let index = usize::from(page[508]);
    Ok(AtaLog {
        revision: u16::from_le_bytes([page[0], page[1]]),
        index: u16::from(page[508]),
        entries: ata_entries(page, 2, 24, ATA_LOG_DESCRIPTORS, index, 4),
    })
}

/// The extended self-test log's page (READ LOG EXT, log 07h; ACS-3 A.9):
/// revision (0-1), the newest descriptor's index (2-3), 19 descriptors of
/// 26 bytes from 4 (6-byte failing LBA). The checksum is checked. Only an
/// index within this page (1-19) gives entries: the first page of the log.
pub fn parse_ata_ext_self_test_log(page: &[u8]) -> Result<AtaLog, ParseError> {
    ata_checksum(page)?;
    let index = u16::from_le_bytes([page[2], page[3]]);
    Ok(AtaLog {
        revision: u16::from_le_bytes([page[0], page[1]]),
        index,
        entries: ata_entries(page, 4, 26, ATA_EXT_LOG_DESCRIPTORS, usize::from(index), 6),
    })
}

/// Bytes of the NVMe Device Self-test log.
pub const NVME_LOG_BYTES: usize = 564;
/// Result entries in it.
pub const NVME_LOG_ENTRIES: usize = 20;

/// The NVMe Device Self-test log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvmeLog {
    /// The self-test running (byte 0 bits 3:0: 0 none, 1 short, 2
    /// extended, Eh vendor specific).
    pub current: u8,
    /// Its completion, percent (byte 1 bits 6:0).
    pub completion_pct: u8,
    /// The results, newest first (entries marked "not used" left out).
    pub entries: Vec<Entry>,
}

/// The NVMe Device Self-test log (log page 06h, 564 bytes; NVMe 1.4
/// Figures 209-210): current operation (0), completion (1), 20 results of
/// 28 bytes from 4, newest first. A result: status (0: code in 7:4, result
/// in 3:0), segment number (1), valid diagnostic information (2: bit 1 the
/// failing LBA is valid), power-on hours (4-11), NSID (12-15), failing LBA
/// (16-23).
pub fn parse_nvme_self_test_log(page: &[u8]) -> Result<NvmeLog, ParseError> {
    if page.len() < NVME_LOG_BYTES {
        return Err(ParseError::Short {
            need: NVME_LOG_BYTES,
            got: page.len(),
        });
    }
    let entries = (0..NVME_LOG_ENTRIES)
        .map(|i| &page[4 + i * 28..4 + (i + 1) * 28])
        .filter_map(|r| {
            let outcome = nvme_outcome(r[0])?;
            Some(Entry {
                code: r[0] >> 4,
                result: r[0] & 0x0f,
                status: Status::Ended(outcome),
                remaining_pct: None,
                failing_lba: (r[2] & 0x02 != 0).then(|| le_bytes(&r[16..24])),
                segment: (outcome == SelfTestOutcome::FailedSegment).then_some(r[1]),
                power_on_hours: Some(le_bytes(&r[4..12])),
            })
        })
        .collect();
    Ok(NvmeLog {
        current: page[0] & 0x0f,
        completion_pct: (page[1] & 0x7f).min(100),
        entries,
    })
}

/// Identify Controller's self-test fields: (Device Self-test supported:
/// OACS bit 4, bytes 256-257; EDSTT, the extended self-test's time in
/// minutes, bytes 316-317, `None` when 0).
pub fn parse_nvme_id_self_test(id: &[u8]) -> Result<(bool, Option<u16>), ParseError> {
    if id.len() < 318 {
        return Err(ParseError::Short {
            need: 318,
            got: id.len(),
        });
    }
    let oacs = u16::from_le_bytes([id[256], id[257]]);
    let edstt = u16::from_le_bytes([id[316], id[317]]);
    Ok((oacs & 0x10 != 0, (edstt != 0).then_some(edstt)))
}

/// The SCSI self-test results log page (LOG SENSE 10h; SPC-4 7.3.17): up
/// to 20 parameters (0001h the newest), each 16 bytes of value: code (7:5)
/// and result (3:0) (0), self-test number (1), power-on hours (2-3, BE),
/// address of first failure (4-11, BE; all ones: none), sense key, ASC,
/// ASCQ (12-14). Parameters of all zeros (never written) are left out;
/// the rest come newest first, each code once.
pub fn parse_scsi_self_test_log(page: &[u8]) -> Result<Vec<Entry>, ParseError> {
    let mut params: Vec<(u16, &[u8])> = log_parameters(page, 0x10)?
        .into_iter()
        .filter(|(c, v)| (1..=20).contains(c) && v.len() >= 12 && v.iter().any(|&b| b != 0))
        .collect();
    // Newest first; a code repeated (no device should) counts once, as
    // first given: at most the 20 entries the page has.
    params.sort_by_key(|(c, _)| *c);
    params.dedup_by_key(|(c, _)| *c);
    Ok(params
        .into_iter()
        .map(|(_, v)| {
            let status = scsi_outcome(v[0]);
            let result = v[0] & 0x0f;
            let addr = u64::from_be_bytes([v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11]]);
            let failed = matches!(status, Status::Ended(o) if o.passed() == Some(false));
            Entry {
                code: v[0] >> 5,
                result,
                status,
                remaining_pct: None,
                failing_lba: (failed && addr != u64::MAX).then_some(addr),
                segment: match result {
                    5 => Some(1),
                    6 => Some(2),
                    7 => Some(v[1]),
                    _ => None,
                },
                power_on_hours: Some(u64::from(u16::from_be_bytes([v[2], v[3]]))),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use SelfTestOutcome::*;

    fn checksum(p: &mut [u8; 512]) {
        p[511] = 0;
        let s = p[..511].iter().fold(0u8, |a, &b| a.wrapping_add(b));
        p[511] = 0u8.wrapping_sub(s);
    }

    /// QEMU 7.2's SMART READ DATA (hw/ide/core.c `cmd_smart`): capability
    /// 367 = 1<<4 | 1<<3 | 1 (self-test, execute off-line; no conveyance),
    /// polling minutes 2, 0x36, 1; byte 363 the status byte of the newest
    /// self-test descriptor, 0 before any.
    fn qemu_smart_data(status: u8) -> [u8; 512] {
        let mut p = [0u8; 512];
        p[0] = 1;
        p[362] = 0x82;
        p[363] = status;
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

    /// QEMU's self-test log after `n` SMART EXECUTE OFF-LINE IMMEDIATE
    /// commands with subcommand `sub`: revision 1, descriptor k at 2 +
    /// 24(k-1) = [sub, 0x00 (OK and finished), 0x34, 0x12 (hours 0x1234)],
    /// the index (count, wrapping after 21) at 508.
    fn qemu_log(sub: u8, n: usize) -> [u8; 512] {
        let mut p = [0u8; 512];
        p[0] = 1;
        let mut count = 0usize;
        for _ in 0..n {
            count += 1;
            if count > 21 {
                count = 1;
            }
            let at = 2 + (count - 1) * 24;
            p[at..at + 4].copy_from_slice(&[sub, 0x00, 0x34, 0x12]);
        }
        p[508] = u8::try_from(count).unwrap();
        checksum(&mut p);
        p
    }

    #[test]
    fn qemu_ata_caps_and_status() {
        let c = parse_ata_caps(&qemu_smart_data(0)).unwrap();
        assert!(c.supports(SelfTestKind::Short) && c.supports(SelfTestKind::Extended));
        assert!(!c.supports(SelfTestKind::Conveyance), "QEMU does not set bit 5");
        assert_eq!(c.minutes(SelfTestKind::Short), Some(2));
        assert_eq!(c.minutes(SelfTestKind::Extended), Some(0x36));
        assert_eq!(c.minutes(SelfTestKind::Conveyance), Some(1));
        assert_eq!(ata_execution_status(c.status), (Status::Ended(Completed), 0));
        // 373 = FFh: the 16-bit minutes of 375-376.
        let mut p = qemu_smart_data(0xf3);
        p[373] = 0xff;
        p[375..377].copy_from_slice(&1234u16.to_le_bytes());
        checksum(&mut p);
        let c = parse_ata_caps(&p).unwrap();
        assert_eq!(c.minutes(SelfTestKind::Extended), Some(1234));
        assert_eq!(ata_execution_status(c.status), (Status::InProgress, 30));
        let mut bad = p;
        bad[10] ^= 1;
        assert!(parse_ata_caps(&bad).is_err());
        assert!(parse_ata_caps(&p[..400]).is_err());
    }

    #[test]
    fn every_ata_status_nibble() {
        let want = [
            Completed,
            AbortedByHost,
            InterruptedByReset,
            FatalError,
            FailedUnknown,
            FailedElectrical,
            FailedServo,
            FailedRead,
            FailedHandling,
        ];
        for (n, o) in want.iter().enumerate() {
            assert_eq!(ata_outcome(u8::try_from(n).unwrap()), Status::Ended(*o));
        }
        for n in 9..15 {
            assert_eq!(ata_outcome(n), Status::Ended(Reserved));
        }
        assert_eq!(ata_outcome(15), Status::InProgress);
        // Remaining: tenths, a nibble above 9 read as 100 %.
        assert_eq!(ata_execution_status(0x79).1, 90);
        assert_eq!(ata_execution_status(0x7f).1, 100);
    }

    #[test]
    fn qemu_self_test_log() {
        let l = parse_ata_self_test_log(&qemu_log(1, 0)).unwrap();
        assert_eq!((l.revision, l.index), (1, 0));
        assert!(l.entries.is_empty());
        let l = parse_ata_self_test_log(&qemu_log(1, 1)).unwrap();
        assert_eq!(l.index, 1);
        assert_eq!(
            l.entries,
            vec![Entry {
                code: 1,
                result: 0,
                status: Status::Ended(Completed),
                remaining_pct: Some(0),
                failing_lba: None,
                segment: None,
                power_on_hours: Some(0x1234),
            }]
        );
        assert!(l.entries[0].is_kind(SelfTestKind::Short, Transport::Ata));
        assert!(!l.entries[0].is_kind(SelfTestKind::Extended, Transport::Ata));
        // 23 tests: the index wrapped to 2; newest first: 2, 1, 21, 20, ...
        let l = parse_ata_self_test_log(&qemu_log(2, 23)).unwrap();
        assert_eq!(l.index, 2);
        assert_eq!(l.entries.len(), 21);
        // An index beyond 21 gives none; a bad checksum is refused.
        let mut p = qemu_log(1, 1);
        p[508] = 22;
        checksum(&mut p);
        assert!(parse_ata_self_test_log(&p).unwrap().entries.is_empty());
        p[3] ^= 0x10;
        assert!(matches!(parse_ata_self_test_log(&p), Err(ParseError::Checksum { .. })));
    }

    #[test]
    fn ata_failures_carry_their_lba_newest_first() {
        let mut p = [0u8; 512];
        p[0] = 1;
        // Descriptor 1: extended, read failure with 20 % left at LBA 0x0123_4567
        // (bits 27:24 in byte 8), 100 hours; descriptor 2: short, ok, 120 hours.
        p[2..11].copy_from_slice(&[0x02, 0x72, 100, 0, 0x10, 0x67, 0x45, 0x23, 0xf1]);
        p[26..33].copy_from_slice(&[0x81, 0x00, 120, 0, 0, 0xff, 0xff]);
        p[508] = 2;
        checksum(&mut p);
        let l = parse_ata_self_test_log(&p).unwrap();
        assert_eq!(l.entries.len(), 2);
        let (newest, older) = (&l.entries[0], &l.entries[1]);
        assert!(newest.is_kind(SelfTestKind::Short, Transport::Ata), "captive short");
        assert_eq!((newest.status, newest.failing_lba), (Status::Ended(Completed), None));
        assert_eq!(newest.power_on_hours, Some(120));
        assert_eq!(older.status, Status::Ended(FailedRead));
        assert_eq!(older.remaining_pct, Some(20));
        assert_eq!(older.failing_lba, Some(0x0123_4567));
        // The extended log: a 48-bit LBA, index 16-bit.
        let mut e = [0u8; 512];
        e[0] = 1;
        e[2] = 1;
        e[4..15].copy_from_slice(&[0x02, 0x50, 7, 0, 0, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06]);
        checksum(&mut e);
        let l = parse_ata_ext_self_test_log(&e).unwrap();
        assert_eq!(l.index, 1);
        assert_eq!(l.entries[0].status, Status::Ended(FailedElectrical));
        assert_eq!(l.entries[0].failing_lba, Some(0x0605_0403_0201));
        // All ones is "no LBA".
        e[9..15].copy_from_slice(&[0xff; 6]);
        checksum(&mut e);
        assert_eq!(parse_ata_ext_self_test_log(&e).unwrap().entries[0].failing_lba, None);
    }

    /// An NVMe Device Self-test log as NVMe 1.4 lays it out.
    fn nvme_log(current: u8, pct: u8, results: &[[u8; 28]]) -> Vec<u8> {
        let mut p = vec![0u8; NVME_LOG_BYTES];
        p[0] = current;
        p[1] = pct;
        for i in 0..NVME_LOG_ENTRIES {
            let r = results.get(i).copied().unwrap_or_else(|| {
                let mut r = [0u8; 28];
                r[0] = 0x0f;
                r
            });
            p[4 + i * 28..4 + (i + 1) * 28].copy_from_slice(&r);
        }
        p
    }

    fn nvme_result(code: u8, result: u8, seg: u8, valid: u8, hours: u64, lba: u64) -> [u8; 28] {
        let mut r = [0u8; 28];
        r[0] = code << 4 | result;
        r[1] = seg;
        r[2] = valid;
        r[4..12].copy_from_slice(&hours.to_le_bytes());
        r[12..16].copy_from_slice(&1u32.to_le_bytes());
        r[16..24].copy_from_slice(&lba.to_le_bytes());
        r
    }

    #[test]
    fn nvme_log_in_progress_and_results() {
        let l = parse_nvme_self_test_log(&nvme_log(2, 37, &[])).unwrap();
        assert_eq!((l.current, l.completion_pct), (2, 37));
        assert!(l.entries.is_empty(), "every entry Fh: not used");
        let l = parse_nvme_self_test_log(&nvme_log(
            0,
            0,
            &[
                nvme_result(1, 7, 3, 0x03, 500, 0xdead_beef),
                nvme_result(2, 0, 0, 0, 400, 0),
            ],
        ))
        .unwrap();
        assert_eq!(l.entries.len(), 2);
        let e = &l.entries[0];
        assert!(e.is_kind(SelfTestKind::Short, Transport::Nvme));
        assert_eq!(e.status, Status::Ended(FailedSegment));
        assert_eq!(
            (e.segment, e.failing_lba, e.power_on_hours),
            (Some(3), Some(0xdead_beef), Some(500))
        );
        let e = &l.entries[1];
        assert!(e.is_kind(SelfTestKind::Extended, Transport::Nvme));
        assert_eq!(
            (e.status, e.segment, e.failing_lba),
            (Status::Ended(Completed), None, None)
        );
        let names: Vec<Option<SelfTestOutcome>> = (0..16).map(nvme_outcome).collect();
        assert_eq!(names[3], Some(AbortedByNamespaceRemoval));
        assert_eq!(names[4], Some(AbortedByFormat));
        assert_eq!(names[8], Some(AbortedUnknown));
        assert_eq!(names[9], Some(AbortedBySanitize));
        assert_eq!(names[10], Some(Reserved));
        assert_eq!(names[15], None);
        assert!(parse_nvme_self_test_log(&[0u8; 563]).is_err());
    }

    #[test]
    fn nvme_identify_self_test_fields() {
        // QEMU 7.2: OACS = NS_MGMT | FORMAT | DBBUF (1<<3 | 1<<1 | 1<<8), no
        // Device Self-test (bit 4), EDSTT 0.
        let mut id = [0u8; 4096];
        id[256..258].copy_from_slice(&(1u16 << 3 | 1 << 1 | 1 << 8).to_le_bytes());
        assert_eq!(parse_nvme_id_self_test(&id), Ok((false, None)));
        id[256] |= 0x10;
        id[316..318].copy_from_slice(&30u16.to_le_bytes());
        assert_eq!(parse_nvme_id_self_test(&id), Ok((true, Some(30))));
        assert!(parse_nvme_id_self_test(&id[..317]).is_err());
    }

    fn scsi_param(code: u16, st: u8, result: u8, number: u8, hours: u16, addr: u64) -> Vec<u8> {
        let [hi, lo] = code.to_be_bytes();
        let mut v = vec![hi, lo, 0x03, 0x10, st << 5 | result, number];
        v.extend_from_slice(&hours.to_be_bytes());
        v.extend_from_slice(&addr.to_be_bytes());
        v.extend_from_slice(&[0x03, 0x11, 0x00, 0]);
        v
    }

    #[test]
    fn scsi_self_test_results_page() {
        let mut body = Vec::new();
        // Out of order on purpose: 0002h first, then 0001h (the newest), then an unused 0003h.
        body.extend(scsi_param(2, 2, 0, 0, 900, u64::MAX));
        body.extend(scsi_param(1, 1, 7, 4, 1000, 0x1_0000_0000));
        body.extend(vec![0, 3, 0x03, 0x10].into_iter().chain([0u8; 16]));
        let mut page = vec![0x10, 0, 0, 0];
        page[2..4].copy_from_slice(&u16::try_from(body.len()).unwrap().to_be_bytes());
        page.extend(body);
        let e = parse_scsi_self_test_log(&page).unwrap();
        assert_eq!(e.len(), 2);
        assert!(e[0].is_kind(SelfTestKind::Short, Transport::Scsi));
        assert_eq!(e[0].status, Status::Ended(FailedSegment));
        assert_eq!(
            (e[0].segment, e[0].failing_lba, e[0].power_on_hours),
            (Some(4), Some(0x1_0000_0000), Some(1000))
        );
        assert!(e[1].is_kind(SelfTestKind::Extended, Transport::Scsi));
        assert_eq!((e[1].status, e[1].failing_lba), (Status::Ended(Completed), None));
        assert_eq!(scsi_outcome(0x0f), Status::InProgress);
        assert_eq!(scsi_outcome(5), Status::Ended(FailedSegment));
        assert_eq!(scsi_outcome(8), Status::Ended(Reserved));
        assert!(parse_scsi_self_test_log(&[0x0d, 0, 0, 0]).is_err());
        // A code given twice counts once, as first given (found by the fuzz
        // target: 21 parameters of codes 1-20 gave 21 entries).
        let mut twice = vec![0x10, 0, 0, 40];
        twice.extend(scsi_param(1, 1, 0, 0, 5, u64::MAX));
        twice.extend(scsi_param(1, 2, 3, 0, 6, u64::MAX));
        let e = parse_scsi_self_test_log(&twice).unwrap();
        assert_eq!(e.len(), 1);
        assert_eq!((e[0].code, e[0].power_on_hours), (1, Some(5)));
    }

    #[test]
    fn passed_follows_the_outcome() {
        assert_eq!(Completed.passed(), Some(true));
        for o in [FatalError, FailedRead, FailedSegment, FailedUnknown] {
            assert_eq!(o.passed(), Some(false), "{o}");
        }
        for o in [AbortedByHost, Timeout, NotSupported, Error, Interrupted, Reserved] {
            assert_eq!(o.passed(), None, "{o}");
        }
        assert!(SelfTestOutcome::ALL.iter().all(|o| !describe(*o).is_empty()));
    }
}
