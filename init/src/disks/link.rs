//! The path to a disk, read: from its sysfs directory upwards (the PCIe
//! functions above it, the libata link, the SAS port's phys, the USB
//! device) and from the disk (IDENTIFY DEVICE words 76-77 and the SATA Phy
//! Event Counters log through ATA PASS-THROUGH; LOG SENSE 18h of a SAS
//! disk). Everything only reads: no counter is reset (READ LOG EXT 11h
//! with feature bit 0 would reset them; bootbench never sets it). The
//! text is parsed by [`bench_core::device::link`].

use std::fs::File;
use std::path::{Path, PathBuf};

use bench_core::device::link as parse;
use bench_core::document::result::{Link, LinkReading, PcieLink, PcieRole, SasPhy, SataLink, UsbLink};

use super::{health, scsi};

/// A sysfs attribute's text, `None` when it cannot be read.
fn attr(dir: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(name)).ok()
}

/// Whether `name` is a PCI function's address (`0000:00:1f.2`).
fn pci_address(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() == 12
        && b[4] == b':'
        && b[7] == b':'
        && b[10] == b'.'
        && b.iter()
            .enumerate()
            .all(|(i, c)| matches!(i, 4 | 7 | 10) || c.is_ascii_hexdigit())
}

/// The nearest ancestor of `dir` (itself included) that `want` accepts.
fn ancestor(dir: &Path, want: impl Fn(&str) -> bool) -> Option<PathBuf> {
    dir.ancestors()
        .find(|a| a.file_name().is_some_and(|n| want(&n.to_string_lossy())))
        .map(Path::to_path_buf)
}

/// The last component of `p`.
fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// One PCIe function's link; `None` for a conventional PCI function (no
/// `current_link_speed`).
fn pcie_function(dir: &Path, role: PcieRole) -> Option<PcieLink> {
    let speed = attr(dir, "current_link_speed")?;
    let aer = parse::aer(
        attr(dir, "aer_dev_correctable").as_deref(),
        attr(dir, "aer_dev_nonfatal").as_deref(),
        attr(dir, "aer_dev_fatal").as_deref(),
    );
    Some(PcieLink {
        address: name_of(dir),
        role,
        speed_mts: parse::pcie_speed_mts(&speed),
        width: attr(dir, "current_link_width").as_deref().and_then(parse::pcie_width),
        max_speed_mts: attr(dir, "max_link_speed").as_deref().and_then(parse::pcie_speed_mts),
        max_width: attr(dir, "max_link_width").as_deref().and_then(parse::pcie_width),
        aer,
    })
}

/// The PCIe function nearest the disk (the NVMe drive, the HBA, the
/// controller) and the port above it.
fn pcie(dir: &Path, r: &mut LinkReading) {
    let Some(dev) = ancestor(dir, pci_address) else { return };
    r.pcie.extend(pcie_function(&dev, PcieRole::Device));
    let port = dev.parent().filter(|p| pci_address(&name_of(p)));
    r.pcie.extend(port.and_then(|p| pcie_function(p, PcieRole::Port)));
}

/// A SATA disk: its libata link, its host's speed limit, IDENTIFY words
/// 76-77 and the Phy Event Counters log from `f`.
fn sata(dir: &Path, sys: &Path, f: Option<&File>, r: &mut LinkReading) {
    let mut s = SataLink::default();
    // ataN/linkN (no port multiplier) or ataN/linkN.M (behind one): the
    // directory under ataN on the way down to the disk.
    let link = ancestor(dir, |n| n.starts_with("link")).or_else(|| {
        let port = ancestor(dir, |n| {
            n.strip_prefix("ata")
                .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
        })?;
        std::fs::read_dir(&port)
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| name_of(p).starts_with("link"))
            .min()
    });
    if let Some(link) = link {
        let name = name_of(&link);
        let class = sys.join("class/ata_link").join(&name);
        s.speed_mbps = attr(&class, "sata_spd").as_deref().and_then(parse::gbit_mbps);
        s.host_max_mbps = attr(&class, "hw_sata_spd_limit").as_deref().and_then(parse::gbit_mbps);
        s.link = Some(name);
    }
    let ahci = ancestor(dir, |n| {
        n.strip_prefix("host")
            .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
    })
    .and_then(|h| attr(&sys.join("class/scsi_host").join(name_of(&h)), "ahci_host_caps"))
    .as_deref()
    .and_then(parse::ahci_cap_max_mbps);
    s.host_max_mbps = match (s.host_max_mbps, ahci) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    // The log only where IDENTIFY says the drive has it (word 76 bit 10),
    // as smartctl does: a drive without it aborts READ LOG EXT, and QEMU's
    // AHCI then failed the next queued read of the disk.
    if let Some(f) = f {
        if let Ok(page) = scsi::ata_identify(f) {
            (s.drive_speeds_mbps, s.drive_speed_mbps) = parse::identify_speeds(&page);
            if parse::identify_phy_events(&page) {
                match phy_events(f) {
                    Ok(e) => s.phy_events = e,
                    Err(why) => r.errors.push(why),
                }
            }
        }
    }
    r.sata = Some(s);
}

/// The Phy Event Counters log (11h), one page, read (never reset).
fn phy_events(f: &File) -> Result<Vec<bench_core::document::result::PhyEvent>, String> {
    let page = health::read_log(f, 0x11, 0, 1)?;
    parse::parse_phy_events(&page).map_err(|e| format!("SATA Phy Event Counters (log 11h): {e}"))
}

/// A SAS disk: the phys of the port it hangs from, and its own from log
/// page 18h (a disk without the page is no error).
fn sas(dir: &Path, sys: &Path, f: Option<&File>, r: &mut LinkReading) {
    if let Some(port) = ancestor(dir, |n| n.starts_with("port-")) {
        let mut names: Vec<String> = std::fs::read_dir(&port)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with("phy-"))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        for n in names {
            let d = sys.join("class/sas_phy").join(&n);
            let count = |a: &str| attr(&d, a).and_then(|t| t.trim().parse().ok());
            r.sas.push(SasPhy {
                rate_mbps: attr(&d, "negotiated_linkrate").as_deref().and_then(parse::gbit_mbps),
                max_rate_mbps: attr(&d, "maximum_linkrate_hw")
                    .or_else(|| attr(&d, "maximum_linkrate"))
                    .as_deref()
                    .and_then(parse::gbit_mbps),
                invalid_dwords: count("invalid_dword_count"),
                disparity_errors: count("running_disparity_error_count"),
                loss_of_dword_sync: count("loss_of_dword_sync_count"),
                phy_reset_problems: count("phy_reset_problem_count"),
                name: n,
            });
        }
    }
    if let Some(f) = f {
        if let Ok(page) = health::log_page(f, 0x18) {
            match parse::parse_sas_port_log(&page) {
                Ok(phys) => r.sas_log = phys,
                Err(e) => r.errors.push(format!("protocol-specific port log page (18h): {e}")),
            }
        }
    }
}

/// A USB disk: the USB device above it (the nearest directory with a
/// `speed` and a `version`: `2-1`, `1-1.4`) and its hub's speed.
fn usb(dir: &Path, r: &mut LinkReading) {
    let Some(d) = dir
        .ancestors()
        .find(|a| !name_of(a).contains(':') && a.join("speed").is_file() && a.join("version").is_file())
    else {
        return;
    };
    r.usb = Some(UsbLink {
        device: name_of(d),
        speed_mbps: attr(d, "speed").as_deref().and_then(parse::usb_speed_mbps),
        device_max_mbps: attr(d, "version").as_deref().and_then(parse::usb_version_max_mbps),
        port_max_mbps: d
            .parent()
            .and_then(|p| attr(p, "speed"))
            .as_deref()
            .and_then(parse::usb_speed_mbps),
    });
}

/// The path to the disk whose resolved sysfs directory is `dir`
/// (`/sys/devices/.../block/sda`), attached by `transport`, with `f` the
/// disk open (for its commands); `None` when there is nothing on it to
/// read (a loop device, a virtio disk on the root bus).
pub fn read(dir: &Path, sys: &Path, transport: Option<&str>, f: Option<&File>) -> Option<LinkReading> {
    let mut r = LinkReading::default();
    pcie(dir, &mut r);
    match transport {
        Some("sata") => sata(dir, sys, f, &mut r),
        Some("sas") => sas(dir, sys, f, &mut r),
        Some("usb") => usb(dir, &mut r),
        _ => {}
    }
    (r != LinkReading::default()).then_some(r)
}

/// [`read`] as found: the reading as `before`.
pub fn found(dir: &Path, sys: &Path, transport: Option<&str>, f: Option<&File>) -> Option<Link> {
    read(dir, sys, transport, f).map(|r| Link {
        before: Some(r),
        after: None,
    })
}

/// The console line of `path`'s link `when` (`before the run`).
pub fn line(path: &str, r: &LinkReading, when: &str) -> String {
    let mut s = format!("{path}: link {when}: {}", parse::summary(r));
    for e in &r.errors {
        s.push_str(&format!("; {e}"));
    }
    s
}

#[cfg(test)]
mod tests;
