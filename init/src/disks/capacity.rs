//! Hidden capacity: what a disk holds beyond what the host sees, asked
//! with the disk's own commands and parsed by `bench_core::device::capacity`; and
//! from the same identify data, its erase support (`bench_core::device::erase`).
//!
//! Every command here only reads. bootbench never changes a Host Protected
//! Area, a Device Configuration Overlay or an NVMe namespace: it sends
//! neither SET MAX ADDRESS nor a DCO RESTORE/SET/FREEZE LOCK nor a
//! Namespace Management or Attachment command (the command blocks are
//! constants in [`super::scsi`], tested to be the reading ones).
//!
//! - SATA (SG_IO ATA PASS-THROUGH(16)): IDENTIFY DEVICE, READ NATIVE MAX
//!   ADDRESS EXT (the answer in the sense data's ATA registers, CK_COND
//!   set) and DEVICE CONFIGURATION IDENTIFY (which many drives refuse, and
//!   ACS-3 made obsolete: the refusal is recorded).
//! - NVMe (admin passthrough): Identify Controller (TNVMCAP, UNVMCAP), the
//!   active namespace list (CNS 02h) and Identify Namespace for each.
//!
//! Read once per disk at the start of a run, before the kernel's log is
//! watched: libata keeps a refused pass-through command out of the log
//! (`ATA_QCFLAG_QUIET`), and a refusal here is not an error of the disk.

use std::fs::File;

use bench_core::device::capacity::{self, AtaVisible};
use bench_core::document::result::{EraseSupport, HiddenCapacity};

use super::{file, scsi};
use crate::sys::{nvme, sgio};

/// True for the transports asked: `sata` and `nvme`. (SCSI has no hidden
/// area of this kind; USB bridges may hang on ATA pass-through.)
pub fn asked(transport: Option<&str>) -> bool {
    matches!(transport, Some("sata" | "nvme"))
}

/// What a disk's identify data says, read once: its hidden capacity and
/// its erase support.
#[derive(Clone, Debug, PartialEq)]
pub struct Identified {
    /// Capacity beyond what the host sees.
    pub hidden: HiddenCapacity,
    /// The erase commands it says it supports (nothing erases).
    pub erase: EraseSupport,
}

/// The hidden capacity and erase support of the disk at `path`
/// (`size_bytes` as the block device says, used when the disk does not
/// say what it shows), `None` for a transport not [`asked`]. What was not
/// answered is in each one's `error`. IDENTIFY DEVICE (or Identify
/// Controller) is sent once and serves both.
pub fn read(path: &str, transport: Option<&str>, size_bytes: u64) -> Option<Identified> {
    if !asked(transport) {
        return None;
    }
    let nvme = transport == Some("nvme");
    let f = match file::open(path, false, false) {
        Ok(f) => f,
        Err(e) => {
            let why = format!("cannot open {path} read-only: {e}");
            return Some(Identified {
                hidden: if nvme {
                    capacity::nvme_hidden(size_bytes, Err(why.clone()), Vec::new())
                } else {
                    capacity::ata_hidden(unknown_visible(size_bytes), Err(why.clone()), Err(why.clone()))
                },
                erase: erase_unknown(nvme, why),
            });
        }
    };
    Some(if nvme {
        read_nvme(&f, size_bytes)
    } else {
        read_ata(&f, size_bytes)
    })
}

/// The erase support of a disk whose identify data could not be read, and why.
fn erase_unknown(nvme_disk: bool, why: String) -> EraseSupport {
    EraseSupport {
        source: if nvme_disk {
            "nvme_identify_controller"
        } else {
            "ata_identify"
        }
        .to_string(),
        supported: Vec::new(),
        frozen: None,
        locked: None,
        security_enabled: None,
        erase_minutes: None,
        enhanced_erase_minutes: None,
        applies_to_all_namespaces: None,
        error: Some(why),
    }
}

/// What the block device shows, in 512-byte sectors, when IDENTIFY does
/// not answer.
fn unknown_visible(size_bytes: u64) -> AtaVisible {
    AtaVisible {
        sectors: size_bytes / 512,
        lba48: false,
        sector_bytes: 512,
    }
}

/// A command the device did not end well, in words.
fn refused(what: &str, a: &sgio::Answer, sense: &[u8]) -> String {
    let key = match sense.first().map(|b| b & 0x7f) {
        Some(0x72 | 0x73) => sense.get(1).map(|k| k & 0x0f),
        Some(0x70 | 0x71) => sense.get(2).map(|k| k & 0x0f),
        _ => None,
    };
    let key = match key {
        Some(0x0b) => ", sense key 0xb: aborted (not supported or refused)".to_string(),
        Some(k) => format!(", sense key {k:#x}"),
        None => String::new(),
    };
    format!(
        "{what}: not answered (SCSI status {:#04x}, host {:#x}, driver {:#x}{key})",
        a.status, a.host_status, a.driver_status
    )
}

fn read_ata(f: &File, size_bytes: u64) -> Identified {
    let page = scsi::ata_identify(f).map_err(|e| format!("IDENTIFY DEVICE: {}", std::io::Error::from(e)));
    let erase = match &page {
        Ok(p) => bench_core::device::erase::ata(p),
        Err(why) => erase_unknown(false, why.clone()),
    };
    let visible = page.and_then(|p| capacity::ata_visible(&p).map_err(|e| format!("IDENTIFY DEVICE: {e}")));
    let (visible, native) = match visible {
        Ok(v) if v.lba48 => (v, native_max(f)),
        Ok(v) => (
            v,
            Err("READ NATIVE MAX ADDRESS EXT: not sent (the disk lacks the 48-bit feature set)".to_string()),
        ),
        Err(why) => (unknown_visible(size_bytes), Err(why)),
    };
    Identified {
        hidden: capacity::ata_hidden(visible, native, dco_max(f)),
        erase,
    }
}

/// READ NATIVE MAX ADDRESS EXT: the last native LBA.
fn native_max(f: &File) -> Result<u64, String> {
    let what = "READ NATIVE MAX ADDRESS EXT";
    let mut sense = [0u8; sgio::SENSE];
    let a = sgio::command(f, &scsi::READ_NATIVE_MAX_EXT_CDB, None, &mut sense)
        .map_err(|e| format!("{what}: {}", std::io::Error::from(e)))?;
    let n = usize::from(a.sense_len).min(sgio::SENSE);
    // CK_COND: the registers come back as sense data with CHECK CONDITION
    // whatever the outcome; an error is in the registers' STATUS.
    capacity::ata_sense_lba48(&sense[..n]).map_err(|e| match e {
        capacity::CapacityError::NoRegisters => refused(what, &a, &sense[..n]),
        e => format!("{what}: {e}"),
    })
}

/// DEVICE CONFIGURATION IDENTIFY: the largest LBA the DCO allows.
fn dco_max(f: &File) -> Result<u64, String> {
    let what = "DEVICE CONFIGURATION IDENTIFY";
    let mut page = [0u8; 512];
    let mut sense = [0u8; sgio::SENSE];
    let a = sgio::command(f, &scsi::DCO_IDENTIFY_CDB, Some(&mut page), &mut sense)
        .map_err(|e| format!("{what}: {}", std::io::Error::from(e)))?;
    if !a.good() {
        let n = usize::from(a.sense_len).min(sgio::SENSE);
        return Err(refused(what, &a, &sense[..n]));
    }
    capacity::ata_dco_max_lba(&page).map_err(|e| format!("{what}: {e}"))
}

fn read_nvme(f: &File, size_bytes: u64) -> Identified {
    let page = nvme::identify_controller(f).map_err(|e| format!("Identify Controller: {e}"));
    let erase = match &page {
        Ok(p) => bench_core::device::erase::nvme(p),
        Err(why) => erase_unknown(true, why.clone()),
    };
    let ctrl = page.and_then(|p| capacity::nvme_ctrl_capacity(&p[..]).map_err(|e| format!("Identify Controller: {e}")));
    let mut errors = Vec::new();
    let visible = match nvme::identify(f, nvme::CNS_ACTIVE_NS_LIST, 0) {
        Ok(list) => {
            let mut sum = 0u64;
            for id in capacity::nvme_ns_list(&list[..]) {
                match nvme::identify(f, nvme::CNS_NAMESPACE, id)
                    .map_err(|e| e.to_string())
                    .and_then(|p| capacity::nvme_ns_bytes(&p[..]).map_err(|e| e.to_string()))
                {
                    Ok(b) => sum = sum.saturating_add(b),
                    Err(e) => errors.push(format!("Identify Namespace {id}: {e}")),
                }
            }
            sum
        }
        Err(e) => {
            errors.push(format!(
                "active namespace list (Identify CNS 02h): {e}; the visible size is this namespace's"
            ));
            size_bytes
        }
    };
    Identified {
        hidden: capacity::nvme_hidden(visible, ctrl, errors),
        erase,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_and_other_transports() {
        assert!(asked(Some("sata")) && asked(Some("nvme")));
        assert!(!asked(Some("usb")) && !asked(Some("sas")) && !asked(None));
        assert_eq!(read("/nonexistent", Some("virtio"), 1 << 20), None);
        let Identified { hidden: h, erase } = read("/nonexistent/bootbench", Some("sata"), 1 << 20).unwrap();
        assert_eq!((h.visible_bytes, h.native_bytes, h.dco_bytes), (1 << 20, None, None));
        assert!(erase.supported.is_empty());
        assert!(erase
            .error
            .unwrap()
            .starts_with("cannot open /nonexistent/bootbench read-only"));
        assert!(h
            .error
            .unwrap()
            .starts_with("cannot open /nonexistent/bootbench read-only"));
        // A regular file answers no SG_IO and no NVMe ioctl: every reason is recorded.
        let p = std::env::temp_dir().join(format!("bootbench-capacity-{}", std::process::id()));
        std::fs::write(&p, [0u8; 4096]).unwrap();
        let path = p.to_str().unwrap();
        let Identified { hidden: h, erase } = read(path, Some("sata"), 4096).unwrap();
        assert_eq!(erase.source, "ata_identify");
        assert!(erase.error.unwrap().starts_with("IDENTIFY DEVICE: "));
        let why = h.error.unwrap();
        assert!(
            why.starts_with("IDENTIFY DEVICE: ") && why.contains("DEVICE CONFIGURATION IDENTIFY: "),
            "{why}"
        );
        let Identified { hidden: h, erase } = read(path, Some("nvme"), 4096).unwrap();
        assert_eq!(erase.source, "nvme_identify_controller");
        assert!(erase.error.unwrap().starts_with("Identify Controller: "));
        assert_eq!(
            (h.visible_bytes, h.native_bytes, h.unallocated_bytes),
            (4096, None, None)
        );
        let why = h.error.unwrap();
        assert!(
            why.contains("active namespace list") && why.contains("Identify Controller: "),
            "{why}"
        );
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn refusals_in_words() {
        let a = sgio::Answer {
            status: 2,
            host_status: 0,
            driver_status: 8,
            resid: 0,
            sense_len: 8,
        };
        let s = refused("X", &a, &[0x72, 0x0b, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            s,
            "X: not answered (SCSI status 0x02, host 0x0, driver 0x8, sense key 0xb: aborted (not supported or refused))"
        );
        assert!(refused("X", &a, &[0x70, 0, 0x05]).ends_with("sense key 0x5)"));
        assert!(refused("X", &a, &[]).ends_with("driver 0x8)"));
    }
}
