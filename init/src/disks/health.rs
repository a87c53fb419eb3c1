//! A disk's health, read with its own commands (no smartctl: PID 1 is one
//! static binary): ATA SMART through SG_IO ATA PASS-THROUGH(16) for SATA
//! disks, the NVMe SMART/health log and Identify Controller through the
//! admin passthrough ioctl, SCSI LOG SENSE pages for SAS/SCSI disks. Every
//! command here only reads; a device that does not answer one is recorded
//! with why, never retried with anything else.
//!
//! During a test ([`Probe`]): NVMe's health log is read every sample
//! interval from another thread (the admin queue is apart from the I/O
//! queues, so the benchmark's requests neither wait for it nor drain).
//! ATA SMART commands are non-queued: each one would drain the disk's NCQ
//! queue in the middle of the measurement, and hwmon's drivetemp sends the
//! same commands, so an ATA disk is read right before and right after each
//! test only (`before_after`). SCSI disks likewise.

use std::fs::File;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use bench_core::device::{farm, health, ocp};
use bench_core::document::result::{Farm, HealthReading, OcpSmart, TestTemperature};

use super::file;
use super::scsi;
use crate::sys::{nvme, sgio};

/// The transports whose disks are asked: `sata` (ATA SMART), `nvme` (the
/// health log), `sas` and `scsi` (LOG SENSE). Others are not: virtio has
/// no passthrough, and USB bridges may hang on ATA pass-through.
pub fn asked(transport: Option<&str>) -> bool {
    matches!(transport, Some("sata" | "nvme" | "sas" | "scsi"))
}

/// Read the health of the disk at `path`, attached by `transport`. Never
/// fails: what could not be read is `None`, and `error` says why.
pub fn read(path: &str, transport: Option<&str>) -> HealthReading {
    let f = match file::open(path, false, false) {
        Ok(f) => f,
        Err(e) => return failed("none", format!("cannot open {path} read-only: {e}")),
    };
    match transport {
        Some("nvme") => read_nvme(&f),
        Some("sata") => read_ata(&f),
        Some("sas" | "scsi") => read_scsi(&f),
        t => failed(
            "none",
            format!("no health commands for transport {}", t.unwrap_or("unknown")),
        ),
    }
}

fn failed(source: &str, why: String) -> HealthReading {
    HealthReading {
        source: source.into(),
        error: Some(why),
        ..HealthReading::default()
    }
}

pub fn push_error(r: &mut HealthReading, why: String) {
    match &mut r.error {
        Some(e) => {
            e.push_str("; ");
            e.push_str(&why);
        }
        None => r.error = Some(why),
    }
}

/// The composite temperature from the health log, and the log itself.
fn nvme_log(f: &File) -> Result<HealthReading, String> {
    let mut page = [0u8; health::PAGE];
    nvme::get_log_page(f, nvme::LOG_SMART, nvme::NSID_ALL, &mut page)
        .map_err(|e| format!("Get Log Page 02h (SMART/health): {e}"))?;
    health::parse_nvme_smart_log(&page).map_err(|e| format!("SMART/health log: {e}"))
}

fn read_nvme(f: &File) -> HealthReading {
    let mut r = match nvme_log(f) {
        Ok(r) => r,
        Err(why) => return failed("none", why),
    };
    r.ocp = ocp_log(f);
    match nvme::identify_controller(f) {
        Ok(id) => {
            if let Ok((w, c)) = health::parse_nvme_id_ctrl_temps(&id[..]) {
                r.warning_temperature_c = w.map(|k| i32::from(k) - health::KELVIN_0C);
                r.critical_temperature_c = c.map(|k| i32::from(k) - health::KELVIN_0C);
            }
        }
        Err(e) => push_error(&mut r, format!("Identify Controller: {e}")),
    }
    r
}

/// The OCP SMART / Health Information Extended log (Get Log Page C0h, 512
/// bytes), when the drive offers it. A drive without the page answers
/// with an error status, and another vendor's C0h page has another GUID:
/// both are simply no OCP log, not an error of the reading.
fn ocp_log(f: &File) -> Option<OcpSmart> {
    let mut page = [0u8; ocp::PAGE];
    nvme::get_log_page(f, nvme::LOG_OCP_SMART, nvme::NSID_ALL, &mut page).ok()?;
    ocp::parse_ocp_smart(&page).ok().flatten()
}

/// Seagate FARM of the disk at `path`, read once before its tests (it
/// only reads): `Ok(None)` on a drive that does not offer it (no error
/// noise), an error when it offers it and the log could not be read or
/// decoded.
pub fn read_farm(path: &str, transport: Option<&str>) -> Result<Option<Farm>, String> {
    let f = file::open(path, false, false).map_err(|e| format!("cannot open {path} read-only: {e}"))?;
    match transport {
        Some("sata") => farm_ata(&f),
        Some("sas" | "scsi") => farm_scsi(&f),
        _ => Ok(None),
    }
}

/// The General Purpose Log Directory's entry for log A6h: its page count.
const FARM_LOG: u8 = 0xa6;
/// At most this many 512-byte pages of log A6h are read (1 MiB; the six
/// FARM pages at smartmontools' 16 KiB stride take 178).
const FARM_MAX_BLOCKS: u16 = 2048;
/// Pages per READ LOG EXT: 16 KiB, one FARM page at its usual stride.
const FARM_CHUNK: u16 = 32;

/// One READ LOG EXT of `count` pages of `log` from `page`.
pub(crate) fn read_log(f: &File, log: u8, page: u16, count: u16) -> Result<Vec<u8>, String> {
    let what = format!("READ LOG EXT {log:02X}h page {page}");
    let mut buf = vec![0u8; usize::from(count) * 512];
    let mut sense = [0u8; sgio::SENSE];
    let a = sgio::command(
        f,
        &scsi::read_log_ext_blocks_cdb(log, page, count),
        Some(&mut buf[..]),
        &mut sense,
    )
    .map_err(|e| format!("{what}: {}", std::io::Error::from(e)))?;
    if !a.good() {
        return Err(ata_why(&what, &a, &sense));
    }
    Ok(buf)
}

/// ATA: the directory (log 00h) says whether log A6h exists and how many
/// pages it has; then the pages, in 16 KiB commands.
fn farm_ata(f: &File) -> Result<Option<Farm>, String> {
    // A drive without a General Purpose Log Directory has no FARM either.
    let Ok(dir) = read_log(f, 0x00, 0, 1) else {
        return Ok(None);
    };
    let at = usize::from(FARM_LOG) * 2;
    let pages = u16::from_le_bytes([dir[at], dir[at + 1]]).min(FARM_MAX_BLOCKS);
    if pages == 0 {
        return Ok(None);
    }
    let mut log = Vec::with_capacity(usize::from(pages) * 512);
    let mut page = 0u16;
    while page < pages {
        let n = FARM_CHUNK.min(pages - page);
        log.extend(read_log(f, FARM_LOG, page, n)?);
        page += n;
    }
    farm::parse_ata_farm(&log)
        .map(Some)
        .map_err(|e| format!("FARM (log A6h): {e}"))
}

/// SCSI: the supported pages and subpages (LOG SENSE 00h/FFh) must list
/// 3Dh/03h; then that page.
fn farm_scsi(f: &File) -> Result<Option<Farm>, String> {
    let Ok(list) = log_page_sub(f, 0x00, 0xff, 1024) else {
        return Ok(None);
    };
    if !supports_subpage(&list, farm::SCSI_PAGE) {
        return Ok(None);
    }
    let (page, sub) = farm::SCSI_PAGE;
    let p = log_page_sub(f, page, sub, 0xfffc)?;
    farm::parse_scsi_farm(&p)
        .map(Some)
        .map_err(|e| format!("FARM (log page 3Dh/03h): {e}"))
}

/// Whether a LOG SENSE 00h/FFh answer (SPC-4 7.3.18: a 4-byte header,
/// then a page code and subpage code per supported pair) lists `want`.
fn supports_subpage(list: &[u8], want: (u8, u8)) -> bool {
    if list.len() < 4 || list[0] & 0x3f != 0 || list[1] != 0xff {
        return false;
    }
    let len = usize::from(u16::from_be_bytes([list[2], list[3]]));
    let body = &list[4..list.len().min(4 + len)];
    body.chunks_exact(2).any(|p| (p[0] & 0x3f, p[1]) == want)
}

/// Why an ATA PASS-THROUGH did not give its data, in words.
fn ata_why(what: &str, a: &sgio::Answer, sense: &[u8; sgio::SENSE]) -> String {
    let key = if a.sense_len > 2 {
        sense[if sense[0] & 0x7f >= 0x72 { 1 } else { 2 }] & 0x0f
    } else {
        0
    };
    format!(
        "{what}: SCSI status {:#04x}, host {:#x}, driver {:#x}, sense key {key:#x} \
         (aborted: SMART disabled or not supported?)",
        a.status, a.host_status, a.driver_status
    )
}

/// One SMART data-in command (READ DATA or READ THRESHOLDS): its page.
fn smart_page(f: &File, feature: u8, what: &str) -> Result<[u8; 512], String> {
    let mut page = [0u8; 512];
    let mut sense = [0u8; sgio::SENSE];
    let a = sgio::command(f, &scsi::smart_cdb(feature), Some(&mut page), &mut sense)
        .map_err(|e| format!("{what}: {}", std::io::Error::from(e)))?;
    if !a.good() {
        return Err(ata_why(what, &a, &sense));
    }
    Ok(page)
}

fn read_ata(f: &File) -> HealthReading {
    let thresholds = smart_page(f, scsi::SMART_READ_THRESHOLDS, "SMART READ THRESHOLDS")
        .and_then(|p| health::parse_ata_thresholds(&p).map_err(|e| format!("SMART READ THRESHOLDS: {e}")));
    let mut r = match smart_page(f, scsi::SMART_READ_DATA, "SMART READ DATA").and_then(|p| {
        health::parse_ata_smart(&p, thresholds.as_ref().ok()).map_err(|e| format!("SMART READ DATA: {e}"))
    }) {
        Ok(r) => r,
        Err(why) => failed("none", why),
    };
    if let Err(why) = thresholds {
        push_error(&mut r, why);
    }
    // RETURN STATUS: CK_COND makes the registers come back as sense data,
    // with CHECK CONDITION (RECOVERED ERROR, ATA PASS-THROUGH INFORMATION
    // AVAILABLE): the status is in the sense, whatever the SCSI status.
    let mut sense = [0u8; sgio::SENSE];
    match sgio::command(f, &scsi::smart_cdb(scsi::SMART_RETURN_STATUS), None, &mut sense) {
        Ok(a) => {
            let n = usize::from(a.sense_len).min(sgio::SENSE);
            match health::parse_ata_status_sense(&sense[..n]) {
                Ok(ok) => {
                    r.smart_passed = Some(ok);
                    if r.source == "none" {
                        r.source = "ata_smart".into();
                    }
                }
                Err(e) => push_error(&mut r, format!("SMART RETURN STATUS: {e}")),
            }
        }
        Err(e) => push_error(&mut r, format!("SMART RETURN STATUS: {}", std::io::Error::from(e))),
    }
    r
}

/// One LOG SENSE page.
pub(crate) fn log_page(f: &File, page: u8) -> Result<Vec<u8>, String> {
    log_page_sub(f, page, 0, 1024)
}

/// One LOG SENSE page and subpage, at most `len` bytes.
fn log_page_sub(f: &File, page: u8, sub: u8, len: u16) -> Result<Vec<u8>, String> {
    let mut buf = vec![0u8; usize::from(len)];
    let mut sense = [0u8; sgio::SENSE];
    let what = if sub == 0 {
        format!("LOG SENSE {page:#04x}")
    } else {
        format!("LOG SENSE {page:#04x}/{sub:#04x}")
    };
    let a = sgio::command(
        f,
        &scsi::log_sense_sub_cdb(page, sub, len),
        Some(&mut buf[..]),
        &mut sense,
    )
    .map_err(|e| format!("{what}: {}", std::io::Error::from(e)))?;
    // A short page is normal (resid > 0); an error status is not.
    if a.status != 0 || a.host_status != 0 || a.driver_status != 0 {
        return Err(format!("{what}: not supported (SCSI status {:#04x})", a.status));
    }
    let got = buf.len() - usize::try_from(a.resid.max(0)).unwrap_or(0).min(buf.len());
    buf.truncate(got);
    Ok(buf)
}

fn read_scsi(f: &File) -> HealthReading {
    let mut r = HealthReading {
        source: "scsi_log_sense".into(),
        ..HealthReading::default()
    };
    let mut answered = false;
    match log_page(f, 0x0d).and_then(|p| health::parse_scsi_temperature(&p).map_err(|e| format!("LOG SENSE 0x0d: {e}")))
    {
        Ok((t, reference)) => {
            answered = true;
            r.temperature_c = t;
            r.warning_temperature_c = reference;
        }
        Err(why) => push_error(&mut r, why),
    }
    for (page, name) in [(0x03u8, "read_uncorrected_errors"), (0x02, "write_uncorrected_errors")] {
        match log_page(f, page)
            .and_then(|p| health::parse_scsi_uncorrected(&p, page).map_err(|e| format!("LOG SENSE {page:#04x}: {e}")))
        {
            Ok(v) => {
                answered = true;
                if let Some(v) = v {
                    r.counters.insert(name.into(), v);
                }
            }
            Err(why) => push_error(&mut r, why),
        }
    }
    // Accumulated power-on time (page 15h), for FARM's check: not every
    // drive keeps the background scan page, and one without it is not a
    // reading's error.
    if let Ok(Ok(h)) = log_page(f, 0x15).map(|p| health::parse_scsi_power_on_hours(&p)) {
        r.power_on_hours = h;
    }
    match grown_defects(f) {
        Ok(n) => {
            answered = true;
            if let Some(n) = n {
                r.counters.insert("grown_defects".into(), n);
            }
        }
        Err(why) => push_error(&mut r, why),
    }
    if !answered {
        r.source = "none".into();
    }
    r
}

/// The grown defect list's length (READ DEFECT DATA (10), the 4-byte
/// header only; it only reads); `None` when the device says the list is
/// not valid.
fn grown_defects(f: &File) -> Result<Option<u64>, String> {
    let mut header = [0u8; 4];
    let mut sense = [0u8; sgio::SENSE];
    let a = sgio::command(f, &health::read_defect_cdb(), Some(&mut header[..]), &mut sense)
        .map_err(|e| format!("READ DEFECT DATA: {}", std::io::Error::from(e)))?;
    if a.status != 0 || a.host_status != 0 || a.driver_status != 0 {
        return Err(format!(
            "READ DEFECT DATA: not supported (SCSI status {:#04x})",
            a.status
        ));
    }
    health::parse_grown_defects(&header).map_err(|e| format!("READ DEFECT DATA: {e}"))
}

/// The temperature of one test: started before it, finished after it.
#[derive(Debug)]
pub struct Probe {
    path: String,
    transport: Option<String>,
    interval: Duration,
    running: Option<Running>,
    /// Each finished test's temperature, in order.
    pub tests: Vec<TestTemperature>,
}

#[derive(Debug)]
struct Running {
    test: String,
    /// Readings before the test (and, for `during`, from the thread).
    max: Option<i32>,
    samples: u32,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<(Option<i32>, u32)>>,
}

fn max_of(a: Option<i32>, b: Option<i32>) -> Option<i32> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

impl Probe {
    /// A probe for the disk at `path`, sampling NVMe every `interval`.
    pub fn new(path: &str, transport: Option<&str>, interval: Duration) -> Probe {
        Probe {
            path: path.into(),
            transport: transport.map(Into::into),
            interval,
            running: None,
            tests: Vec::new(),
        }
    }

    fn nvme(&self) -> bool {
        self.transport.as_deref() == Some("nvme")
    }

    /// Before `test` runs: a reading, and for NVMe the sampling thread.
    pub fn start(&mut self, test: &str) {
        let first = read_temperature(&self.path, self.transport.as_deref());
        let mut run = Running {
            test: test.into(),
            max: first,
            samples: u32::from(first.is_some()),
            stop: None,
            thread: None,
        };
        if self.nvme() && first.is_some() {
            let (tx, rx) = mpsc::channel::<()>();
            let path = self.path.clone();
            let every = self.interval;
            let spawned = std::thread::Builder::new().name("health".into()).spawn(move || {
                let Ok(f) = file::open(&path, false, false) else {
                    return (None, 0);
                };
                let (mut max, mut n) = (None, 0u32);
                // Until told to stop (or the sender is gone): a reading
                // every interval.
                while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
                    if let Ok(t) = nvme_log(&f).map(|r| r.temperature_c) {
                        max = max_of(max, t);
                        n += u32::from(t.is_some());
                    }
                }
                (max, n)
            });
            if let Ok(h) = spawned {
                run.stop = Some(tx);
                run.thread = Some(h);
            }
        }
        self.running = Some(run);
    }

    /// After the test: the last reading (unless `read_last` is false: a
    /// disk whose I/O hung is not sent more commands), and its
    /// [`TestTemperature`].
    pub fn finish(&mut self, read_last: bool) {
        let Some(mut run) = self.running.take() else { return };
        drop(run.stop.take());
        // `during` once the thread took a reading inside the test (a test
        // shorter than the interval has only the two around it).
        let mut during = false;
        if let Some(h) = run.thread.take() {
            if let Ok((m, n)) = h.join() {
                run.max = max_of(run.max, m);
                run.samples += n;
                during = n > 0;
            }
        }
        let last = if read_last {
            read_temperature(&self.path, self.transport.as_deref())
        } else {
            None
        };
        run.max = max_of(run.max, last);
        run.samples += u32::from(last.is_some());
        self.tests.push(TestTemperature {
            test: run.test,
            source: if during { "during" } else { "before_after" }.into(),
            samples: run.samples,
            max_temperature_c: run.max,
        });
    }
}

/// One temperature reading, °C, by the disk's usual command; `None` when
/// it gives none.
fn read_temperature(path: &str, transport: Option<&str>) -> Option<i32> {
    match transport {
        Some("nvme") => {
            let f = file::open(path, false, false).ok()?;
            nvme_log(&f).ok()?.temperature_c
        }
        // SMART READ DATA alone: one command.
        Some("sata") => {
            let f = file::open(path, false, false).ok()?;
            let page = smart_page(&f, scsi::SMART_READ_DATA, "SMART READ DATA").ok()?;
            health::parse_ata_smart(&page, None).ok()?.temperature_c
        }
        t => read(path, t).temperature_c,
    }
}

/// A one-line summary for the console.
pub fn summary(path: &str, when: &str, r: &HealthReading) -> String {
    let mut s = format!("bootbench-init: {path} health {when}: {}", r.source);
    if let Some(p) = r.smart_passed {
        s.push_str(if p { ", status ok" } else { ", status FAILED" });
    }
    if let Some(t) = r.temperature_c {
        s.push_str(&format!(", {t} °C"));
    }
    if let Some(h) = r.power_on_hours {
        s.push_str(&format!(", {h} h powered on"));
    }
    if let Some(h) = r.farm.as_ref().and_then(|f| f.power_on_hours) {
        s.push_str(&format!(", FARM {h} h"));
    }
    if r.ocp.is_some() {
        s.push_str(", OCP C0h log");
    }
    if let Some(e) = &r.error {
        s.push_str(&format!(" ({e})"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_and_an_unknown_transport_give_reasons() {
        let p = std::env::temp_dir().join(format!("bootbench-health-{}", std::process::id()));
        std::fs::write(&p, [0u8; 4096]).unwrap();
        let path = p.to_str().unwrap();
        for t in [Some("sata"), Some("nvme"), Some("sas")] {
            let r = read(path, t);
            assert_eq!(r.source, "none", "{t:?}: {r:?}");
            assert!(r.error.is_some(), "{t:?}");
            assert_eq!(r.smart_passed, None);
        }
        let r = read(path, Some("virtio"));
        assert_eq!(r.error.as_deref(), Some("no health commands for transport virtio"));
        let r = read("/nonexistent/bootbench", Some("sata"));
        assert!(r
            .error
            .unwrap()
            .starts_with("cannot open /nonexistent/bootbench read-only"));
        // A probe on it records each test with no reading.
        let mut probe = Probe::new(path, Some("nvme"), Duration::from_millis(10));
        probe.start("t1");
        probe.finish(true);
        assert_eq!(probe.tests.len(), 1);
        assert_eq!((probe.tests[0].samples, probe.tests[0].max_temperature_c), (0, None));
        assert_eq!(probe.tests[0].source, "before_after");
        std::fs::remove_file(&p).unwrap();
        assert!(asked(Some("sata")) && asked(Some("nvme")) && !asked(Some("virtio")) && !asked(None));
    }

    #[test]
    fn maxima() {
        assert_eq!(max_of(Some(3), None), Some(3));
        assert_eq!(max_of(None, Some(4)), Some(4));
        assert_eq!(max_of(Some(5), Some(4)), Some(5));
        assert_eq!(max_of(None, None), None);
    }

    /// A file has no FARM: no log directory answers, so no FARM and no
    /// error (a drive that does not offer it is recorded without it).
    #[test]
    fn a_file_has_no_farm_and_no_error() {
        let p = std::env::temp_dir().join(format!("bootbench-farm-{}", std::process::id()));
        std::fs::write(&p, [0u8; 4096]).unwrap();
        let path = p.to_str().unwrap();
        for t in [Some("sata"), Some("sas"), Some("nvme"), None] {
            assert_eq!(read_farm(path, t), Ok(None), "{t:?}");
        }
        std::fs::remove_file(&p).unwrap();
        assert!(read_farm("/nonexistent/bootbench", Some("sata")).is_err());
    }

    /// LOG SENSE 00h/FFh lists page and subpage pairs after a 4-byte
    /// header; FARM is read only when 3Dh/03h is among them.
    #[test]
    fn the_supported_subpages_list() {
        let list = [0x40, 0xff, 0, 8, 0x00, 0x00, 0x0d, 0x00, 0x3d, 0x03, 0x3d, 0xff];
        assert!(supports_subpage(&list, (0x3d, 0x03)));
        assert!(!supports_subpage(&list, (0x3d, 0x04)));
        // The page length ends the list; a header of another page is no list.
        let mut short = list;
        short[3] = 4;
        assert!(!supports_subpage(&short, (0x3d, 0x03)));
        let mut other = list;
        other[1] = 0;
        assert!(!supports_subpage(&other, (0x3d, 0x03)));
        assert!(!supports_subpage(&list[..3], (0x3d, 0x03)));
    }

    /// A document whose health readings carry FARM (before) and the OCP
    /// log (before and after), with the rules' lines, fits the result
    /// schema and reads back the same.
    #[test]
    fn a_document_with_farm_and_ocp_fits_the_schema() {
        use bench_core::document::result::{
            Acceptance, Check, CheckRule, FarmRecording, FarmTransport, Health, ResultDoc, TargetInfo, TargetVerdict,
            Verdict,
        };
        let mut page = vec![0u8; ocp::PAGE];
        page[494] = 6; // log page version 6: every field of the revision
        page[496..512].copy_from_slice(&ocp::GUID);
        page[32] = 3; // 3 bad user NAND blocks
        page[128] = 100; // capacitor health 100%
        page[278..294].copy_from_slice(&[0xab; 16]);
        page[0..16].copy_from_slice(&u128::MAX.to_le_bytes()[..16]);
        let log = ocp::parse_ocp_smart(&page).unwrap().unwrap();
        assert!(log.v5.is_some() && log.die_in_use_bad_nand_blocks.is_some());
        let farm = Farm {
            transport: Some(FarmTransport::Ata),
            serial: Some("ZA1234".into()),
            power_on_hours: Some(26_304),
            temperature_c: Some(-3),
            helium_pressure_tripped: Some(false),
            recording: Some(FarmRecording::Cmr),
            date_of_assembly: Some("2119".into()),
            ..Farm::default()
        };
        let reading = |farm: Option<Farm>| HealthReading {
            source: "nvme_smart_log".into(),
            power_on_hours: Some(12),
            farm,
            ocp: Some(log.clone()),
            ..HealthReading::default()
        };
        let mut doc = crate::run::new_doc(None, "t", 1, false, Vec::new());
        doc.targets.push(TargetInfo {
            path: "/dev/sda".into(),
            health: Some(Health {
                before: reading(Some(farm)),
                after: Some(reading(None)),
                ..Health::default()
            }),
            ..TargetInfo::default()
        });
        doc.acceptance = Some(Acceptance {
            verdict: Verdict::Fail,
            rules: "defaults".into(),
            targets: vec![TargetVerdict {
                target: "/dev/sda".into(),
                serial: None,
                model: None,
                verdict: Verdict::Fail,
                checks: vec![Check {
                    rule: CheckRule::PowerOnHours,
                    verdict: Verdict::Fail,
                    test: None,
                    figure: Some("power_on_hours".into()),
                    value: Some(12.0),
                    limit: Some(26_304.0),
                    source: "acceptance.health.farm_hours".into(),
                    message: "power-on hours disagree: SMART 12 h, FARM 26,304 h".into(),
                }],
            }],
        });
        let j = serde_json::to_value(&doc).unwrap();
        assert_eq!(j["targets"][0]["health"]["before"]["farm"]["power_on_hours"], 26_304);
        assert_eq!(
            j["targets"][0]["health"]["after"]["ocp"]["bad_user_nand_blocks"]["raw"],
            3
        );
        assert!(j["targets"][0]["health"]["after"].get("farm").is_none());
        // A 16-byte counter past 64 bits is its digits, as a string.
        assert_eq!(
            j["targets"][0]["health"]["after"]["ocp"]["physical_media_written_bytes"],
            u128::MAX.to_string()
        );
        assert_eq!(
            j["targets"][0]["health"]["after"]["ocp"]["physical_media_read_bytes"],
            0
        );
        let errors = crate::testutil::result_schema_errors(&j);
        assert!(errors.is_empty(), "{errors:?}");
        let back: ResultDoc = serde_json::from_str(&serde_json::to_string(&doc).unwrap()).unwrap();
        assert_eq!(back, doc);
    }
}
