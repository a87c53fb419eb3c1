//! A disk's SMART self-test, with its own commands (no smartctl): ATA
//! SMART EXECUTE OFF-LINE IMMEDIATE through SG_IO ATA PASS-THROUGH(16),
//! polled through SMART READ DATA's self-test execution status, its result
//! from the SMART self-test log (or the extended one for an LBA beyond 28
//! bits); NVMe Device Self-test, polled and read back through log page
//! 06h; SCSI SEND DIAGNOSTIC with a background self-test code, read back
//! through LOG SENSE page 10h. A self-test writes no user data: none of
//! these commands carries data to the device. The parsing is
//! `bench_core::device::selftest`'s; the orchestration (every disk at once, the
//! bounded wait, the abort) is `run::selftest`'s.

use std::fs::File;
use std::time::Duration;

use bench_core::device::selftest::{self as st, Entry, Status, Transport};
use bench_core::document::result::{SelfTestKind, SelfTestOutcome, SelfTestSource};
use nix::errno::Errno;

use super::{file, scsi};
use crate::sys::{nvme, sgio};

/// How a self-test ended, as read from the device (or why nothing was).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ended {
    /// The outcome.
    pub outcome: SelfTestOutcome,
    /// Percent left.
    pub remaining_pct: Option<u8>,
    /// The first failing LBA.
    pub failing_lba: Option<u64>,
    /// The failed segment.
    pub segment: Option<u8>,
    /// Power-on hours of the log entry.
    pub power_on_hours: Option<u64>,
    /// Where it was read.
    pub source: SelfTestSource,
    /// Why a command failed.
    pub error: Option<String>,
}

impl Ended {
    /// No result: `outcome` (not supported, error) for `why`.
    pub fn none(outcome: SelfTestOutcome, why: String) -> Ended {
        Ended {
            outcome,
            remaining_pct: None,
            failing_lba: None,
            segment: None,
            power_on_hours: None,
            source: SelfTestSource::None,
            error: Some(why),
        }
    }

    fn of(e: &Entry, source: SelfTestSource) -> Ended {
        let outcome = match e.status {
            Status::Ended(o) => o,
            Status::InProgress => SelfTestOutcome::Error,
        };
        Ended {
            outcome,
            remaining_pct: e.remaining_pct,
            failing_lba: e.failing_lba,
            segment: e.segment,
            power_on_hours: e.power_on_hours,
            source,
            error: None,
        }
    }
}

/// Where a running self-test stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Poll {
    /// Still running, this much left (percent) if the device says.
    Running(Option<u8>),
    /// Ended.
    Ended(Ended),
}

/// The transports that have self-test commands here: `sata`, `nvme`,
/// `sas`, `scsi` (as for health: USB bridges may hang on ATA
/// pass-through, virtio has none).
pub fn transport_of(transport: Option<&str>) -> Option<Transport> {
    match transport {
        Some("sata") => Some(Transport::Ata),
        Some("nvme") => Some(Transport::Nvme),
        Some("sas" | "scsi") => Some(Transport::Scsi),
        _ => None,
    }
}

/// A self-test started on a disk: what `poll` and `abort` need.
#[derive(Debug)]
pub struct Running {
    f: File,
    transport: Transport,
    kind: SelfTestKind,
    /// The disk is larger than 28-bit LBAs reach (ATA: a failing LBA is
    /// read from the extended log).
    lba48: bool,
    /// ATA: the self-test log's index before the start; NVMe, SCSI: the
    /// newest entry before it.
    index_before: Option<u16>,
    newest_before: Option<Entry>,
}

/// The ATA subcommand, NVMe STC, SCSI self-test code of `kind`.
const fn code(kind: SelfTestKind) -> u8 {
    match kind {
        SelfTestKind::Short => 1,
        SelfTestKind::Extended => 2,
        SelfTestKind::Conveyance => 3,
    }
}

/// Why an ioctl failed; ENOTTY and EINVAL (no SG_IO, no NVMe passthrough
/// here) make it "not supported".
fn os_fail(what: &str, e: Errno) -> Ended {
    let outcome = if matches!(e, Errno::ENOTTY | Errno::EINVAL | Errno::EOPNOTSUPP) {
        SelfTestOutcome::NotSupported
    } else {
        SelfTestOutcome::Error
    };
    Ended::none(outcome, format!("{what}: {}", std::io::Error::from(e)))
}

/// Start a `kind` self-test on the disk at `path` (`sectors` of 512 bytes)
/// attached by `transport`: the started test and the device's own
/// estimate of its length, or how it ended at once (not supported, error).
pub fn start(
    path: &str,
    transport: Option<&str>,
    sectors: u64,
    kind: SelfTestKind,
) -> Result<(Running, Option<Duration>), Ended> {
    let Some(t) = transport_of(transport) else {
        return Err(Ended::none(
            SelfTestOutcome::NotSupported,
            format!(
                "no self-test commands for transport {}",
                transport.unwrap_or("unknown (no SG_IO ATA, NVMe or SCSI self-test)")
            ),
        ));
    };
    let f = file::open(path, false, false)
        .map_err(|e| Ended::none(SelfTestOutcome::Error, format!("cannot open {path} read-only: {e}")))?;
    let mut r = Running {
        f,
        transport: t,
        kind,
        lba48: sectors > 0x0fff_ffff,
        index_before: None,
        newest_before: None,
    };
    let estimate = match t {
        Transport::Ata => r.start_ata()?,
        Transport::Nvme => r.start_nvme()?,
        Transport::Scsi => r.start_scsi()?,
    };
    Ok((r, estimate))
}

/// Minutes as a duration.
fn minutes(m: u16) -> Duration {
    Duration::from_secs(u64::from(m) * 60)
}

impl Running {
    /// Where the test stands; an `Err` is a command that failed.
    pub fn poll(&mut self) -> Result<Poll, String> {
        match self.transport {
            Transport::Ata => self.poll_ata(),
            Transport::Nvme => self.poll_nvme(),
            Transport::Scsi => self.poll_scsi(),
        }
    }

    /// Abort it on the device (ATA subcommand 7Fh, NVMe STC Fh, SCSI self-test code 100b).
    pub fn abort(&self) -> Result<(), String> {
        match self.transport {
            Transport::Ata => self.ata_non_data(0x7f, "SMART EXECUTE OFF-LINE IMMEDIATE 7Fh (abort)"),
            Transport::Nvme => {
                nvme::device_self_test(&self.f, 0x0f).map_err(|e| format!("Device Self-test Fh (abort): {e}"))
            }
            Transport::Scsi => self.send_diagnostic(4, "SEND DIAGNOSTIC (abort background self-test)"),
        }
    }

    // ATA

    fn ata_page(&self, cdb: &[u8; 16], what: &str) -> Result<[u8; 512], String> {
        let mut page = [0u8; 512];
        let mut sense = [0u8; sgio::SENSE];
        let a = sgio::command(&self.f, cdb, Some(&mut page), &mut sense)
            .map_err(|e| format!("{what}: {}", std::io::Error::from(e)))?;
        if !a.good() {
            return Err(format!(
                "{what}: the device refused it (SCSI status {:#04x}, host {:#x}, driver {:#x})",
                a.status, a.host_status, a.driver_status
            ));
        }
        Ok(page)
    }

    fn ata_non_data(&self, sub: u8, what: &str) -> Result<(), String> {
        let mut sense = [0u8; sgio::SENSE];
        let cdb = scsi::smart_cdb_lba(scsi::SMART_EXECUTE_OFFLINE, sub);
        let a = sgio::command(&self.f, &cdb, None, &mut sense)
            .map_err(|e| format!("{what}: {}", std::io::Error::from(e)))?;
        if a.status != 0 || a.host_status != 0 || a.driver_status != 0 {
            return Err(format!(
                "{what}: the device refused it (SCSI status {:#04x}, host {:#x}, driver {:#x})",
                a.status, a.host_status, a.driver_status
            ));
        }
        Ok(())
    }

    fn ata_caps(&self) -> Result<st::AtaCaps, String> {
        let page = self.ata_page(&scsi::smart_cdb(scsi::SMART_READ_DATA), "SMART READ DATA")?;
        st::parse_ata_caps(&page).map_err(|e| format!("SMART READ DATA: {e}"))
    }

    fn ata_log(&self) -> Result<st::AtaLog, String> {
        let page = self.ata_page(&scsi::smart_cdb_lba(scsi::SMART_READ_LOG, 0x06), "SMART READ LOG 06h")?;
        st::parse_ata_self_test_log(&page).map_err(|e| format!("SMART self-test log: {e}"))
    }

    fn start_ata(&mut self) -> Result<Option<Duration>, Ended> {
        let mut sense = [0u8; sgio::SENSE];
        // The first command tells whether SG_IO reaches an ATA device at all.
        let mut buf = [0u8; 512];
        match sgio::command(
            &self.f,
            &scsi::smart_cdb(scsi::SMART_READ_DATA),
            Some(&mut buf),
            &mut sense,
        ) {
            Err(e) => return Err(os_fail("SMART READ DATA", e)),
            Ok(a) if !a.good() => {
                return Err(Ended::none(
                    SelfTestOutcome::NotSupported,
                    format!(
                        "SMART READ DATA: the device refused it (SCSI status {:#04x}): SMART disabled or not supported",
                        a.status
                    ),
                ))
            }
            Ok(_) => {}
        }
        let caps = st::parse_ata_caps(&buf)
            .map_err(|e| Ended::none(SelfTestOutcome::Error, format!("SMART READ DATA: {e}")))?;
        if !caps.supports(self.kind) {
            let why = match (caps.execute_offline && caps.self_test, self.kind) {
                (true, SelfTestKind::Conveyance) => {
                    "the device has no conveyance self-test (SMART data byte 367 bit 5 clear)"
                }
                _ => "the device has no SMART self-tests (SMART data byte 367 bits 0 and 4)",
            };
            return Err(Ended::none(SelfTestOutcome::NotSupported, why.to_string()));
        }
        self.index_before = self.ata_log().ok().map(|l| l.index);
        self.ata_non_data(code(self.kind), "SMART EXECUTE OFF-LINE IMMEDIATE")
            .map_err(|why| Ended::none(SelfTestOutcome::Error, why))?;
        Ok(caps.minutes(self.kind).map(minutes))
    }

    fn poll_ata(&mut self) -> Result<Poll, String> {
        let caps = self.ata_caps()?;
        let (status, left) = st::ata_execution_status(caps.status);
        if status == Status::InProgress {
            return Ok(Poll::Running(Some(left)));
        }
        // The log's newest entry, if the log moved since the start and it is this kind's.
        let log = self.ata_log();
        let newest = log.as_ref().ok().and_then(|l| {
            let moved = self.index_before.is_none_or(|b| b != l.index);
            l.entries
                .first()
                .filter(|e| moved && e.is_kind(self.kind, Transport::Ata))
        });
        let Some(e) = newest else {
            // The status byte alone.
            let mut end = Ended::of(
                &Entry {
                    code: code(self.kind),
                    result: caps.status >> 4,
                    status,
                    remaining_pct: Some(left),
                    failing_lba: None,
                    segment: None,
                    power_on_hours: None,
                },
                SelfTestSource::AtaSmartData,
            );
            end.error = log.err();
            return Ok(Poll::Ended(end));
        };
        let mut end = Ended::of(e, SelfTestSource::AtaSelfTestLog);
        // A failure on a disk beyond 28-bit LBAs: the LBA from the extended log.
        if end.outcome.passed() == Some(false) && self.lba48 {
            match self.ata_ext_newest() {
                Ok(Some(x)) => end = Ended::of(&x, SelfTestSource::AtaExtSelfTestLog),
                Ok(None) => {}
                Err(why) => end.error = Some(why),
            }
        }
        Ok(Poll::Ended(end))
    }

    fn ata_ext_newest(&self) -> Result<Option<Entry>, String> {
        let page = self.ata_page(&scsi::read_log_ext_cdb(0x07, 0), "READ LOG EXT 07h")?;
        let l = st::parse_ata_ext_self_test_log(&page).map_err(|e| format!("extended self-test log: {e}"))?;
        Ok(l.entries
            .into_iter()
            .next()
            .filter(|e| e.is_kind(self.kind, Transport::Ata)))
    }

    // NVMe

    fn nvme_log(&self) -> Result<st::NvmeLog, String> {
        let mut page = vec![0u8; st::NVME_LOG_BYTES];
        nvme::get_log_page(&self.f, nvme::LOG_SELF_TEST, nvme::NSID_ALL, &mut page)
            .map_err(|e| format!("Get Log Page 06h (Device Self-test): {e}"))?;
        st::parse_nvme_self_test_log(&page).map_err(|e| format!("Device Self-test log: {e}"))
    }

    fn start_nvme(&mut self) -> Result<Option<Duration>, Ended> {
        let id = nvme::identify_controller(&self.f).map_err(|e| match e {
            nvme::AdminError::Os(errno) => os_fail("Identify Controller", errno),
            e => Ended::none(SelfTestOutcome::Error, format!("Identify Controller: {e}")),
        })?;
        let (supported, edstt) = st::parse_nvme_id_self_test(&id[..])
            .map_err(|e| Ended::none(SelfTestOutcome::Error, format!("Identify Controller: {e}")))?;
        if !supported {
            return Err(Ended::none(
                SelfTestOutcome::NotSupported,
                "the controller does not support Device Self-test (Identify Controller OACS bit 4 clear)".to_string(),
            ));
        }
        if self.kind == SelfTestKind::Conveyance {
            return Err(Ended::none(
                SelfTestOutcome::NotSupported,
                "NVMe has no conveyance self-test (short and extended only)".to_string(),
            ));
        }
        self.newest_before = self.nvme_log().ok().and_then(|l| l.entries.into_iter().next());
        nvme::device_self_test(&self.f, code(self.kind))
            .map_err(|e| Ended::none(SelfTestOutcome::Error, format!("Device Self-test: {e}")))?;
        // Short: at most 2 minutes (NVMe 1.4 8.11.1); extended: EDSTT.
        Ok(match self.kind {
            SelfTestKind::Short => Some(minutes(2)),
            _ => edstt.map(minutes),
        })
    }

    fn poll_nvme(&mut self) -> Result<Poll, String> {
        let log = self.nvme_log()?;
        if log.current != 0 {
            return Ok(Poll::Running(Some(100 - log.completion_pct)));
        }
        match log.entries.first() {
            Some(e) if Some(e) != self.newest_before.as_ref() && e.is_kind(self.kind, Transport::Nvme) => {
                Ok(Poll::Ended(Ended::of(e, SelfTestSource::NvmeSelfTestLog)))
            }
            _ => Err("the Device Self-test log shows no test running and no new result".to_string()),
        }
    }

    // SCSI

    fn send_diagnostic(&self, code: u8, what: &str) -> Result<(), String> {
        let mut sense = [0u8; sgio::SENSE];
        let a = sgio::command(&self.f, &scsi::send_diagnostic_cdb(code), None, &mut sense)
            .map_err(|e| format!("{what}: {}", std::io::Error::from(e)))?;
        if a.status != 0 || a.host_status != 0 || a.driver_status != 0 {
            let key = if a.sense_len > 2 {
                sense[if sense[0] & 0x7f >= 0x72 { 1 } else { 2 }] & 0x0f
            } else {
                0
            };
            return Err(format!(
                "{what}: the device refused it (SCSI status {:#04x}, sense key {key:#x})",
                a.status
            ));
        }
        Ok(())
    }

    fn scsi_log(&self) -> Result<Vec<Entry>, String> {
        let mut buf = vec![0u8; 1024];
        let mut sense = [0u8; sgio::SENSE];
        let len = u16::try_from(buf.len()).unwrap_or(u16::MAX);
        let a = sgio::command(&self.f, &scsi::log_sense_cdb(0x10, len), Some(&mut buf[..]), &mut sense)
            .map_err(|e| format!("LOG SENSE 10h: {}", std::io::Error::from(e)))?;
        if a.status != 0 || a.host_status != 0 || a.driver_status != 0 {
            return Err(format!("LOG SENSE 10h: not supported (SCSI status {:#04x})", a.status));
        }
        let got = buf.len() - usize::try_from(a.resid.max(0)).unwrap_or(0).min(buf.len());
        st::parse_scsi_self_test_log(&buf[..got]).map_err(|e| format!("self-test results log: {e}"))
    }

    fn start_scsi(&mut self) -> Result<Option<Duration>, Ended> {
        if self.kind == SelfTestKind::Conveyance {
            return Err(Ended::none(
                SelfTestOutcome::NotSupported,
                "SCSI has no conveyance self-test (short and extended only)".to_string(),
            ));
        }
        self.newest_before = match self.scsi_log() {
            Ok(l) => l.into_iter().next(),
            Err(why) => return Err(Ended::none(SelfTestOutcome::NotSupported, why)),
        };
        self.send_diagnostic(code(self.kind), "SEND DIAGNOSTIC")
            .map_err(|why| Ended::none(SelfTestOutcome::Error, why))?;
        // Short: SPC-4 says two minutes; extended: the control mode page's
        // estimate, not read here.
        Ok((self.kind == SelfTestKind::Short).then(|| minutes(2)))
    }

    fn poll_scsi(&mut self) -> Result<Poll, String> {
        let log = self.scsi_log()?;
        match log.first() {
            Some(e) if e.status == Status::InProgress => Ok(Poll::Running(None)),
            Some(e) if Some(e) != self.newest_before.as_ref() && e.is_kind(self.kind, Transport::Scsi) => {
                Ok(Poll::Ended(Ended::of(e, SelfTestSource::ScsiSelfTestLog)))
            }
            // Not written yet: still starting.
            _ => Ok(Poll::Running(None)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_and_unknown_transports_are_not_supported() {
        let p = std::env::temp_dir().join(format!("bootbench-selftest-{}", std::process::id()));
        std::fs::write(&p, [0u8; 4096]).unwrap();
        let path = p.to_str().unwrap();
        for t in [None, Some("virtio"), Some("usb")] {
            let e = start(path, t, 8, SelfTestKind::Short).unwrap_err();
            assert_eq!(e.outcome, SelfTestOutcome::NotSupported, "{t:?}");
            assert!(e.error.unwrap().starts_with("no self-test commands for transport"));
        }
        // SG_IO and the NVMe passthrough on a regular file: ENOTTY, not supported.
        for t in ["sata", "nvme", "sas"] {
            let e = start(path, Some(t), 8, SelfTestKind::Short).unwrap_err();
            assert_eq!(
                (e.outcome, e.source),
                (SelfTestOutcome::NotSupported, SelfTestSource::None),
                "{t}: {e:?}"
            );
        }
        let e = start("/nonexistent/bootbench", Some("sata"), 8, SelfTestKind::Short).unwrap_err();
        assert_eq!(e.outcome, SelfTestOutcome::Error);
        std::fs::remove_file(&p).unwrap();
    }
}
