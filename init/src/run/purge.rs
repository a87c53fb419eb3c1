//! The purge before preconditioning (`precondition.purge`, as SNIA's PTS
//! prescribes before a drive's first measurement): the disk's own erase
//! command, on a disk claimed for writing, after the run's countdown,
//! polled to its end with progress. NVMe Format NVM with user data or
//! cryptographic erase (it returns when done; its progress from the
//! namespace's Format Progress Indicator where it has one), NVMe Sanitize (block,
//! crypto, overwrite; followed in the Sanitize Status log page), ATA
//! SANITIZE (crypto scramble, block erase, overwrite; followed with
//! SANITIZE STATUS EXT, refused while the disk's sanitize is frozen), ATA
//! SECURITY ERASE UNIT where the disk has no sanitize (the user password
//! [`bench_core::device::erase::SECURITY_PASSWORD`] set first, as hdparm's
//! `--security-erase` does; the erase clears it, and a failure clears it
//! with SECURITY DISABLE PASSWORD, or says the disk is left with it).
//! Which one, and whether it may run at all, is
//! [`bench_core::device::erase::choose`]'s.

use std::fs::File;
use std::time::{Duration, Instant};

use bench_core::device::erase::{
    ata_registers, ata_sanitize_cdb, ata_sanitize_feature, ata_sanitize_state, ata_security_block, ata_security_cdb,
    ata_security_erase_timeout_ms, nvme_format_cdw10, nvme_sanact, nvme_sanitize_state, security, SanitizeState,
    SECURITY_PASSWORD,
};
use bench_core::document::result::{EraseMethod, EraseSupport};
use bench_core::engine::runner::Stop;

use super::engine::DevTarget;
use crate::disks::scsi;
use crate::sys::{blk, nvme, sgio};

/// How long a Format NVM may take before the kernel gives up on it: 4 h
/// (a format that writes every block of a large drive).
const FORMAT_TIMEOUT_MS: u32 = 4 * 3600 * 1000;
/// How often a sanitize's status is read.
const POLL: Duration = Duration::from_secs(1);
/// How long a sanitize may say it has not started.
const START_WAIT: Duration = Duration::from_secs(30);

/// Run `method` on `target` (claimed for writing), giving the fraction done
/// to `progress`; `Err` says why it did not complete. A stop asked during
/// a sanitize ends the wait, not the sanitize: the drive goes on with it.
pub fn purge(
    target: &DevTarget,
    method: EraseMethod,
    support: &EraseSupport,
    stop: &Stop,
    progress: &mut dyn FnMut(f64),
) -> Result<(), String> {
    let r = target.erase_with(|f| match method {
        EraseMethod::NvmeFormatUserData => nvme_format(f, 1, progress),
        EraseMethod::NvmeFormatCrypto => nvme_format(f, 2, progress),
        EraseMethod::AtaSecurityEnhancedErase => ata_security_erase(f, true, support),
        EraseMethod::AtaSecurityErase => ata_security_erase(f, false, support),
        m if nvme_sanact(m).is_some() => nvme_sanitize(f, nvme_sanact(m).unwrap_or(0), stop, progress),
        m if ata_sanitize_feature(m).is_some() => ata_sanitize(f, m, stop, progress),
        m => Err(format!("{} is not a purge bootbench runs", m.name())),
    })?;
    // The page cache may hold what the device held before.
    let _ = blk::flush_buffers(target.file());
    if r.is_ok() {
        progress(1.0);
    }
    r
}

/// Format NVM of this namespace with Secure Erase Settings `ses`, keeping
/// its block format and protection. The command returns when the format is
/// done; meanwhile, where the namespace has a Format Progress Indicator
/// (Identify Namespace byte 32: bit 7 supported, bits 6:0 the percentage
/// left), it is read every second for the progress.
fn nvme_format(f: &File, ses: u8, progress: &mut dyn FnMut(f64)) -> Result<(), String> {
    let nsid = nvme::namespace_id(f).map_err(|e| format!("the namespace id (NVME_IOCTL_ID): {e}"))?;
    let ns = nvme::identify(f, nvme::CNS_NAMESPACE, nsid).map_err(|e| format!("Identify Namespace {nsid}: {e}"))?;
    let cdw10 = nvme_format_cdw10(ns[26], ns[29], ses);
    let fpi = ns[32] & 0x80 != 0;
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let format = s.spawn(|| {
            let r = nvme::format_nvm(f, nsid, cdw10, FORMAT_TIMEOUT_MS);
            done.store(true, std::sync::atomic::Ordering::Release);
            r
        });
        while fpi && !done.load(std::sync::atomic::Ordering::Acquire) {
            std::thread::sleep(POLL);
            if let Ok(now) = nvme::identify(f, nvme::CNS_NAMESPACE, nsid) {
                progress(format_progress(now[32]));
            }
        }
        format
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
            .map_err(|e| format!("Format NVM of namespace {nsid}: {e}"))
    })
}

/// A format's fraction done from the Format Progress Indicator byte
/// (bits 6:0 the percentage left).
fn format_progress(fpi: u8) -> f64 {
    1.0 - f64::from((fpi & 0x7f).min(100)) / 100.0
}

/// Sanitize with action `sanact`, then its status until it ends.
fn nvme_sanitize(f: &File, sanact: u32, stop: &Stop, progress: &mut dyn FnMut(f64)) -> Result<(), String> {
    nvme::sanitize(f, sanact).map_err(|e| format!("Sanitize: {e}"))?;
    follow(stop, progress, || {
        let mut log = [0u8; 512];
        nvme::get_log_page(f, nvme::LOG_SANITIZE_STATUS, nvme::NSID_ALL, &mut log)
            .map_err(|e| format!("the Sanitize Status log page: {e}"))?;
        Ok(nvme_sanitize_state(&log))
    })
}

/// SANITIZE STATUS EXT's registers.
fn ata_status(f: &File) -> Result<bench_core::device::erase::AtaRegs, String> {
    let mut sense = [0u8; sgio::SENSE];
    let a = sgio::command(f, &ata_sanitize_cdb(0, 0), None, &mut sense)
        .map_err(|e| format!("SANITIZE STATUS EXT: {}", std::io::Error::from(e)))?;
    let n = usize::from(a.sense_len).min(sgio::SENSE);
    ata_registers(&sense[..n]).ok_or_else(|| "SANITIZE STATUS EXT: no ATA registers came back".to_string())
}

/// ATA SANITIZE of method `m`, refused while the disk's sanitize is
/// frozen; then its status until it ends.
fn ata_sanitize(f: &File, m: EraseMethod, stop: &Stop, progress: &mut dyn FnMut(f64)) -> Result<(), String> {
    let before = ata_status(f)?;
    if before.count & (1 << 13) != 0 {
        return Err(
            "the disk's sanitize is frozen (SANITIZE FREEZE LOCK EXT, usually by the BIOS) until a power cycle: \
             nothing was erased"
                .to_string(),
        );
    }
    let (feature, lba) = ata_sanitize_feature(m).ok_or_else(|| format!("{} is not an ATA sanitize", m.name()))?;
    let mut sense = [0u8; sgio::SENSE];
    let a = sgio::command(f, &ata_sanitize_cdb(feature, lba), None, &mut sense)
        .map_err(|e| format!("SANITIZE DEVICE: {}", std::io::Error::from(e)))?;
    let n = usize::from(a.sense_len).min(sgio::SENSE);
    if let Some(r) = ata_registers(&sense[..n]) {
        if r.status & 0x01 != 0 {
            return Err(format!(
                "SANITIZE DEVICE ({}) refused: ATA status {:#04x}, error {:#04x}",
                m.name(),
                r.status,
                r.error
            ));
        }
    }
    follow(stop, progress, || ata_status(f).map(|r| ata_sanitize_state(&r)))
}

/// An ATA command's ending: refused (STATUS ERR in the registers that came
/// back) or failed on the way, in words; else fine.
fn ata_ok(what: &str, a: &sgio::Answer, sense: &[u8]) -> Result<(), String> {
    match ata_registers(sense) {
        Some(r) if r.status & 0x01 != 0 => Err(format!(
            "{what} refused: ATA status {:#04x}, error {:#04x}",
            r.status, r.error
        )),
        Some(_) => Ok(()),
        None if a.status == 0 && a.host_status == 0 && a.driver_status == 0 => Ok(()),
        None => Err(format!(
            "{what} failed: SCSI status {:#04x}, host {:#06x}, driver {:#06x}",
            a.status, a.host_status, a.driver_status
        )),
    }
}

/// Send an ATA Security command, with its 512-byte block when given.
fn ata_security(f: &File, command: u8, block: Option<&[u8; 512]>, timeout_ms: u32, what: &str) -> Result<(), String> {
    let mut sense = [0u8; sgio::SENSE];
    let a = match block {
        Some(b) => sgio::command_out(f, &ata_security_cdb(command, true), b, &mut sense, timeout_ms),
        None => sgio::command(f, &ata_security_cdb(command, false), None, &mut sense),
    }
    .map_err(|e| format!("{what}: {}", std::io::Error::from(e)))?;
    let n = usize::from(a.sense_len).min(sgio::SENSE);
    ata_ok(what, &a, &sense[..n])
}

/// ATA SECURITY ERASE UNIT (`enhanced` or normal), as hdparm's
/// `--security-erase` does it: SECURITY SET PASSWORD (user, high) with
/// [`SECURITY_PASSWORD`], SECURITY ERASE PREPARE, SECURITY ERASE UNIT with
/// it (the disk's own time estimate, twice, as the wait), then IDENTIFY to
/// see the password gone. A step that fails after the password was set
/// clears it with SECURITY DISABLE PASSWORD, or says the disk keeps it.
fn ata_security_erase(f: &File, enhanced: bool, support: &EraseSupport) -> Result<(), String> {
    let pw = ata_security_block(None, SECURITY_PASSWORD);
    ata_security(f, security::SET_PASSWORD, Some(&pw), 15_000, "SECURITY SET PASSWORD")?;
    let undo = |why: String| -> String {
        match ata_security(
            f,
            security::DISABLE_PASSWORD,
            Some(&pw),
            15_000,
            "SECURITY DISABLE PASSWORD",
        ) {
            Ok(()) => format!("{why}; the password it set was cleared again"),
            Err(e) => format!(
                "{why}; and clearing the password failed ({e}): the disk keeps the user password \"bootbench\" \
                 (hdparm --user-master u --security-disable bootbench DEVICE clears it)"
            ),
        }
    };
    ata_security(f, security::ERASE_PREPARE, None, 15_000, "SECURITY ERASE PREPARE").map_err(undo)?;
    let erase = ata_security_block(Some(enhanced), SECURITY_PASSWORD);
    let timeout = ata_security_erase_timeout_ms(support, enhanced);
    ata_security(f, security::ERASE_UNIT, Some(&erase), timeout, "SECURITY ERASE UNIT").map_err(undo)?;
    // A completed erase disables security (ACS-3 7.35): the password is gone.
    let page = scsi::ata_identify(f).map_err(|e| format!("IDENTIFY after the erase: {}", std::io::Error::from(e)))?;
    let w128 = u16::from_le_bytes([page[256], page[257]]);
    if w128 & 0x2 != 0 {
        return Err(undo(
            "the erase ended but the disk still has security enabled".to_string(),
        ));
    }
    Ok(())
}

/// Read a sanitize's state every second until it is done (or failed),
/// giving its progress.
fn follow(
    stop: &Stop,
    progress: &mut dyn FnMut(f64),
    mut state: impl FnMut() -> Result<SanitizeState, String>,
) -> Result<(), String> {
    let started = Instant::now();
    loop {
        match state()? {
            SanitizeState::Done => return Ok(()),
            SanitizeState::Failed => return Err("the sanitize failed (the drive says so)".to_string()),
            SanitizeState::InProgress(p) => progress(p),
            SanitizeState::Never if started.elapsed() < START_WAIT => {}
            SanitizeState::Never => {
                return Err(format!(
                    "the sanitize had not started {} s after it was sent",
                    START_WAIT.as_secs()
                ))
            }
            SanitizeState::Other(s) => {
                return Err(format!(
                    "the sanitize's status is {s:#x}, which bootbench does not know"
                ))
            }
        }
        if stop.reason().is_some() {
            return Err(
                "stopped while the drive sanitizes: a sanitize cannot be stopped, the drive goes on with it \
                        (and refuses reads until it ends)"
                    .to_string(),
            );
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::engine::DevTarget;

    /// A target not claimed for writing is never sent an erase; a file
    /// claimed... is not an NVMe or ATA device: the command fails and the
    /// file is unchanged.
    #[test]
    fn nothing_is_erased_without_the_claim_or_on_a_file() {
        let t = crate::testutil::TempDir::new("purge");
        let p = t.0.join("d.img");
        std::fs::write(&p, vec![7u8; 1 << 20]).unwrap();
        let path = p.to_string_lossy().into_owned();
        let ro = DevTarget::open(&path, None).unwrap();
        let e = purge(
            &ro,
            EraseMethod::NvmeFormatUserData,
            &bench_core::device::erase::ata(&[0u8; 512]),
            &Stop::new(),
            &mut |_| {},
        )
        .unwrap_err();
        assert_eq!(e, "the disk was not claimed for writing: nothing is erased");
        assert!(!ro.wrote());
        let text = format!(
            r#"{{"targets":["{path}"],"tests":[{{"workload":"seq_write","size":"64k"}}],
               "destructive":{{"confirm":"I understand this destroys data","targets":["{path}"],
               "allow_overwrite_signatures":true}}}}"#
        );
        let mut plan = crate::plan::validate(
            &crate::plan::parse(&text, "t").unwrap(),
            "t",
            &crate::plan::Overrides::default(),
        )
        .unwrap();
        let d = super::super::pass::claim(&mut plan, 0).expect("claimed");
        let support = bench_core::device::erase::ata(&[0u8; 512]);
        for m in [
            EraseMethod::NvmeFormatUserData,
            EraseMethod::NvmeSanitizeBlock,
            EraseMethod::AtaSanitizeBlock,
            EraseMethod::AtaSecurityEnhancedErase,
        ] {
            let mut last = 0.0;
            let r = purge(&d, m, &support, &Stop::new(), &mut |f| last = f);
            assert!(r.is_err(), "{m:?}: {r:?}");
            assert_eq!(last, 0.0, "{m:?}");
        }
        assert!(d.wrote(), "an erase sent counts as a write");
        assert!(
            std::fs::read(&p).unwrap().iter().all(|&b| b == 7),
            "the file is unchanged"
        );
    }

    /// The Format Progress Indicator's percentage left, as the fraction done.
    #[test]
    fn a_formats_progress_from_its_indicator() {
        assert_eq!(format_progress(0x80 | 100), 0.0);
        assert_eq!(format_progress(0x80 | 25), 0.75);
        assert_eq!(format_progress(0x80), 1.0);
        assert_eq!(format_progress(0xff), 0.0, "more than 100% left is all of it");
    }

    /// Following a sanitize: progress as the drive gives it, done, failed,
    /// a stop that ends the wait and says the drive goes on.
    #[test]
    fn a_sanitize_is_followed_to_its_end() {
        let mut states = vec![
            SanitizeState::InProgress(0.25),
            SanitizeState::InProgress(0.5),
            SanitizeState::Done,
        ]
        .into_iter();
        let mut seen = Vec::new();
        assert_eq!(
            follow(&Stop::new(), &mut |f| seen.push(f), || Ok(states.next().unwrap())),
            Ok(())
        );
        assert_eq!(seen, [0.25, 0.5]);
        assert_eq!(
            follow(&Stop::new(), &mut |_| {}, || Ok(SanitizeState::Failed)),
            Err("the sanitize failed (the drive says so)".to_string())
        );
        let stop = Stop::new();
        stop.request(bench_core::engine::runner::StopReason::Interrupted);
        let e = follow(&stop, &mut |_| {}, || Ok(SanitizeState::InProgress(0.1))).unwrap_err();
        assert!(
            e.starts_with("stopped while the drive sanitizes: a sanitize cannot be stopped"),
            "{e}"
        );
    }
}
