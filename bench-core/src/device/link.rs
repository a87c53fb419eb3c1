//! The path to a disk, parsed: the text of the kernel's sysfs link
//! attributes (PCIe, SATA, SAS, USB speeds; AER counters), the SATA Phy
//! Event Counters log (general purpose log 11h, ACS-3 9.18), the SCSI
//! protocol-specific port log page (18h, SPL-3 9.2.7.2) and IDENTIFY
//! DEVICE words 76-77; and what a reading says: its error counters by
//! name, and its links trained below what both ends support.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::document::result::{Aer, LinkReading, PcieLink, PcieRole, PhyEvent, SasPhy, SataLink, UsbLink};

/// Why a log could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkLogError {
    /// Fewer bytes than the log's fixed part.
    Short {
        /// Bytes given.
        got: usize,
        /// Bytes needed.
        need: usize,
    },
    /// The page code is not the log's.
    WrongPage(u8),
    /// The checksum byte does not make the log's bytes sum to zero.
    Checksum,
}

impl core::fmt::Display for LinkLogError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LinkLogError::Short { got, need } => write!(f, "{got} bytes, at least {need} needed"),
            LinkLogError::WrongPage(p) => write!(f, "page code {p:#04x}, not the one asked for"),
            LinkLogError::Checksum => f.write_str("bad checksum"),
        }
    }
}

/// The leading decimal number of `text`, in thousandths (`"2.5 GT/s"` is
/// 2500, `"16.0 GT/s PCIe"` 16000); `None` without one (`"Unknown"`).
fn thousandths(text: &str) -> Option<u32> {
    let t = text.trim();
    let end = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let num = &t[..end];
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() {
        return None;
    }
    let int: u32 = int.parse().ok()?;
    let mut f = 0u32;
    let mut scale = 100u32;
    for c in frac.chars().take(3) {
        f += c.to_digit(10)? * scale;
        scale /= 10;
    }
    int.checked_mul(1000)?.checked_add(f)
}

/// A PCIe speed as sysfs writes it (`"8.0 GT/s PCIe"`, `"2.5 GT/s"`):
/// megatransfers per second; `None` for `"Unknown"`.
pub fn pcie_speed_mts(text: &str) -> Option<u32> {
    thousandths(text).filter(|&v| v > 0)
}

/// A link width as sysfs writes it (`"4"`); `None` for 0 (no link) or
/// anything else.
pub fn pcie_width(text: &str) -> Option<u32> {
    text.trim().parse().ok().filter(|&w| w > 0)
}

/// A SATA speed as libata writes it (`"6.0 Gbps"`), or a SAS link rate as
/// the SAS transport class does (`"12.0 Gbit"`): megabits per second;
/// `None` for `"<unknown>"`, `"Unknown"`, `"Phy disabled"` and the like.
pub fn gbit_mbps(text: &str) -> Option<u32> {
    thousandths(text).filter(|&v| v > 0)
}

/// A USB speed as sysfs writes it, in Mb/s (`"480"`, `"5000"`, `"1.5"`):
/// megabits per second, 1.5 counted as 1.
pub fn usb_speed_mbps(text: &str) -> Option<u32> {
    thousandths(text)
        .map(|v| (v / 1000).max(1))
        .filter(|_| !text.trim().starts_with('0'))
}

/// The fastest a USB device of version `text` (its bcdUSB as sysfs writes
/// it: `" 2.00"`, `" 3.20"`) may run, megabits per second.
pub fn usb_version_max_mbps(text: &str) -> Option<u32> {
    Some(match thousandths(text)? {
        0..=1999 => 12,
        2000..=2999 => 480,
        3000..=3099 => 5000,
        3100..=3199 => 10000,
        _ => 20000,
    })
}

/// A `NAME COUNT` line file's `TOTAL_*` line (`aer_dev_correctable`):
/// the total; `None` without one.
pub fn aer_total(text: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (name, n) = l.trim().split_once(char::is_whitespace)?;
        name.starts_with("TOTAL_").then(|| n.trim().parse().ok())?
    })
}

/// The AER counters of three files' text; `None` when none had a total.
pub fn aer(correctable: Option<&str>, nonfatal: Option<&str>, fatal: Option<&str>) -> Option<Aer> {
    let a = Aer {
        correctable: correctable.and_then(aer_total),
        nonfatal: nonfatal.and_then(aer_total),
        fatal: fatal.and_then(aer_total),
    };
    (a != Aer::default()).then_some(a)
}

/// The speeds of SATA generations 1, 2 and 3, megabits per second.
const SATA_GEN: [u32; 3] = [1500, 3000, 6000];

/// AHCI's CAP register (`ahci_host_caps`, hex): the fastest speed its
/// Interface Speed Support field (bits 23:20) allows, megabits per second.
pub fn ahci_cap_max_mbps(text: &str) -> Option<u32> {
    let t = text.trim();
    let cap = u32::from_str_radix(t.strip_prefix("0x").unwrap_or(t), 16).ok()?;
    let iss = usize::try_from((cap >> 20) & 0xf).ok()?;
    SATA_GEN.get(iss.checked_sub(1)?).copied()
}

/// IDENTIFY DEVICE (512 bytes, words little-endian) words 76 and 77: the
/// SATA speeds the drive supports (bits 1-3 of word 76) and the one it
/// negotiated (word 77 bits 3:1); nothing where a word is 0 or FFFFh
/// (not a SATA drive, or one that does not say).
pub fn identify_speeds(page: &[u8]) -> (Vec<u32>, Option<u32>) {
    let word = |i: usize| {
        page.get(2 * i..2 * i + 2)
            .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]))
    };
    let (w76, w77) = (word(76), word(77));
    let supported = if w76 == 0 || w76 == 0xffff {
        Vec::new()
    } else {
        (0..3).filter(|i| w76 & (2 << i) != 0).map(|i| SATA_GEN[i]).collect()
    };
    let current = if w77 == 0xffff {
        None
    } else {
        usize::from((w77 >> 1) & 0x7)
            .checked_sub(1)
            .and_then(|g| SATA_GEN.get(g).copied())
    };
    (supported, current)
}

/// Whether IDENTIFY DEVICE says the drive has the SATA Phy Event
/// Counters log (word 76 bit 10; not where word 76 is 0 or FFFFh). smartctl
/// asks the same before it reads log 11h; QEMU's IDE says no.
pub fn identify_phy_events(page: &[u8]) -> bool {
    let w76 = page.get(152..154).map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
    w76 != 0xffff && w76 & (1 << 10) != 0
}

/// What SATA Phy Event Counter `id` (bits 11:0) counts (ACS-3 table 223).
fn phy_event_name(id: u16) -> String {
    let known = match id {
        0x001 => "command_failed_icrc",
        0x002 => "r_err_data_fis",
        0x003 => "r_err_d2h_data_fis",
        0x004 => "r_err_h2d_data_fis",
        0x005 => "r_err_non_data_fis",
        0x006 => "r_err_d2h_non_data_fis",
        0x007 => "r_err_h2d_non_data_fis",
        0x008 => "d2h_non_data_fis_retries",
        0x009 => "phy_rdy_to_phy_nrdy",
        0x00a => "comreset_signature_fis",
        0x00b => "crc_errors_h2d_fis",
        0x00d => "non_crc_errors_h2d_fis",
        0x00f => "r_err_h2d_data_fis_crc",
        0x010 => "r_err_h2d_data_fis_non_crc",
        0x012 => "r_err_h2d_non_data_fis_crc",
        0x013 => "r_err_h2d_non_data_fis_non_crc",
        _ if id & 0x8000 != 0 => return format!("vendor_{:04x}", id & 0x0fff),
        _ => return format!("counter_{id:04x}"),
    };
    String::from(known)
}

/// The Phy Event Counters log (ACS-3 9.18, one 512-byte page): from byte
/// 4, counters of an identifier word (bits 11:0 the counter, bits 14:12
/// its length in words, bit 15 vendor-specific) and a little-endian value
/// of that length, up to an identifier of 0; byte 511 a checksum over the
/// page. A counter of a reserved length ends the list (smartctl does the
/// same); a counter at its maximum has stopped counting.
pub fn parse_phy_events(page: &[u8]) -> Result<Vec<PhyEvent>, LinkLogError> {
    if page.len() < 512 {
        return Err(LinkLogError::Short {
            got: page.len(),
            need: 512,
        });
    }
    let page = &page[..512];
    if page.iter().fold(0u8, |s, b| s.wrapping_add(*b)) != 0 {
        return Err(LinkLogError::Checksum);
    }
    let mut out = Vec::new();
    let mut i = 4;
    while i + 2 <= 511 {
        let raw = u16::from_le_bytes([page[i], page[i + 1]]);
        let id = raw & 0x8fff;
        if id == 0 {
            break;
        }
        let size = usize::from((raw >> 12) & 0x7) * 2;
        i += 2;
        if !(2..=8).contains(&size) || i + size > 511 {
            break;
        }
        let mut value = 0u64;
        for (k, b) in page[i..i + size].iter().enumerate() {
            value |= u64::from(*b) << (8 * k);
        }
        let max = if size == 8 { u64::MAX } else { (1u64 << (8 * size)) - 1 };
        out.push(PhyEvent {
            id,
            name: phy_event_name(id),
            value,
            saturated: value == max,
        });
        i += size;
    }
    Ok(out)
}

/// A SAS negotiated logical link rate code (SPL-3 table 360: 8h 1.5 Gbit/s
/// to Ch 22.5 Gbit/s): megabits per second.
fn sas_rate(code: u8) -> Option<u32> {
    match code {
        0x8 => Some(1500),
        0x9 => Some(3000),
        0xa => Some(6000),
        0xb => Some(12000),
        0xc => Some(22500),
        _ => None,
    }
}

/// The protocol-specific port log page (18h) of a SAS target (SPL-3
/// 9.2.7.2): after the 4-byte page header, one parameter per target port
/// (its code, control byte and length; byte 4's low nibble the protocol,
/// 6 for SAS; byte 7 the number of phys), each with SAS phy log
/// descriptors (byte 1 the phy identifier, byte 3 the descriptor's
/// length less 4, byte 5's low nibble the negotiated rate, bytes 32-47 the
/// invalid dword, running disparity error, loss of dword synchronisation
/// and phy reset problem counts). Phys of a port of another protocol are
/// left out; a descriptor cut short ends the list.
pub fn parse_sas_port_log(page: &[u8]) -> Result<Vec<SasPhy>, LinkLogError> {
    if page.len() < 4 {
        return Err(LinkLogError::Short {
            got: page.len(),
            need: 4,
        });
    }
    if page[0] & 0x3f != 0x18 {
        return Err(LinkLogError::WrongPage(page[0] & 0x3f));
    }
    let len = usize::from(u16::from_be_bytes([page[2], page[3]]));
    let body = &page[4..page.len().min(4 + len)];
    let be32 = |d: &[u8], at: usize| u64::from(u32::from_be_bytes([d[at], d[at + 1], d[at + 2], d[at + 3]]));
    let mut out = Vec::new();
    let mut p = 0;
    while p + 8 <= body.len() {
        let param = &body[p..body.len().min(p + 4 + usize::from(body[p + 3]))];
        p += 4 + usize::from(body[p + 3]);
        if param.len() < 8 || param[4] & 0x0f != 6 {
            continue;
        }
        let port = u16::from_be_bytes([param[0], param[1]]);
        let mut d = 8;
        for _ in 0..param[7] {
            let Some(desc) = param.get(d..d + 48) else { break };
            out.push(SasPhy {
                name: format!("port {port} phy {}", desc[1]),
                rate_mbps: sas_rate(desc[5] & 0x0f),
                max_rate_mbps: None,
                invalid_dwords: Some(be32(desc, 32)),
                disparity_errors: Some(be32(desc, 36)),
                loss_of_dword_sync: Some(be32(desc, 40)),
                phy_reset_problems: Some(be32(desc, 44)),
            });
            d += 4 + usize::from(desc[3]).max(44);
        }
    }
    Ok(out)
}

/// A speed in words: `2.5 GT/s`, `16 GT/s`, `6 Gb/s`.
fn rate(thousandths_of: u32, unit: &str) -> String {
    let whole = thousandths_of / 1000;
    let tenth = (thousandths_of % 1000) / 100;
    if tenth == 0 {
        format!("{whole} {unit}")
    } else {
        format!("{whole}.{tenth} {unit}")
    }
}

/// A PCIe speed and width in words: `PCIe 8.0 GT/s x4`.
fn pcie_words(speed: Option<u32>, width: Option<u32>) -> String {
    let s = speed.map_or_else(|| String::from("?"), |s| rate(s, "GT/s"));
    let w = width.map_or_else(|| String::from("?"), |w| w.to_string());
    format!("PCIe {s} x{w}")
}

/// The smaller of two figures where both are known, else the known one.
fn lesser(a: Option<u32>, b: Option<u32>) -> Option<u32> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The least of `figures` that are known, when at least two ends said.
fn both_ends(figures: &[Option<u32>]) -> Option<u32> {
    let known: Vec<u32> = figures.iter().flatten().copied().collect();
    (known.len() >= 2).then(|| known.iter().copied().min()).flatten()
}

/// The PCIe link of `device` and its `port`, when it trained below what
/// both ends support: `PCIe 2.5 GT/s x1, capable of 16.0 GT/s x4` and the
/// link's address.
fn pcie_degraded(device: &PcieLink, port: Option<&PcieLink>) -> Option<String> {
    let cap_speed = lesser(device.max_speed_mts, port.and_then(|p| p.max_speed_mts));
    let cap_width = lesser(device.max_width, port.and_then(|p| p.max_width));
    port?;
    let slow = matches!((device.speed_mts, cap_speed), (Some(s), Some(c)) if s < c);
    let narrow = matches!((device.width, cap_width), (Some(w), Some(c)) if w < c);
    (slow || narrow).then(|| {
        format!(
            "{} ({}), capable of {} (device {}, port {})",
            pcie_words(device.speed_mts, device.width),
            device.address,
            pcie_words(cap_speed, cap_width).trim_start_matches("PCIe "),
            pcie_words(device.max_speed_mts, device.max_width).trim_start_matches("PCIe "),
            port.map_or_else(String::new, |p| pcie_words(p.max_speed_mts, p.max_width)
                .trim_start_matches("PCIe ")
                .to_string()),
        )
    })
}

/// A SATA link below what both the host and the drive support.
fn sata_degraded(s: &SataLink) -> Option<String> {
    let drive = s.drive_speeds_mbps.iter().copied().max();
    let cap = both_ends(&[s.host_max_mbps, drive])?;
    let now = s.speed_mbps?;
    (now < cap).then(|| {
        format!(
            "SATA {}, capable of {} (host {}, drive {})",
            rate(now, "Gb/s"),
            rate(cap, "Gb/s"),
            s.host_max_mbps.map_or_else(|| String::from("?"), |h| rate(h, "Gb/s")),
            drive.map_or_else(|| String::from("?"), |d| rate(d, "Gb/s")),
        )
    })
}

/// A SAS phy below its maximum.
fn sas_degraded(p: &SasPhy) -> Option<String> {
    let (now, max) = (p.rate_mbps?, p.max_rate_mbps?);
    (now < max).then(|| format!("SAS {} {}, capable of {}", p.name, rate(now, "Gb/s"), rate(max, "Gb/s")))
}

/// A USB disk below what both the device and its port allow.
fn usb_degraded(u: &UsbLink) -> Option<String> {
    let cap = both_ends(&[u.device_max_mbps, u.port_max_mbps])?;
    let now = u.speed_mbps?;
    (now < cap).then(|| format!("USB {now} Mb/s ({}), capable of {cap} Mb/s", u.device))
}

/// Every link of `r` trained below what both its ends support, in words,
/// each naming both figures.
pub fn degraded(r: &LinkReading) -> Vec<String> {
    let mut out = Vec::new();
    let mut pcie = r.pcie.iter().peekable();
    while let Some(d) = pcie.next() {
        if d.role != PcieRole::Device {
            continue;
        }
        let port = pcie.peek().copied().filter(|p| p.role == PcieRole::Port);
        out.extend(pcie_degraded(d, port));
    }
    out.extend(r.sata.as_ref().and_then(sata_degraded));
    out.extend(r.sas.iter().filter_map(sas_degraded));
    out.extend(r.usb.as_ref().and_then(usb_degraded));
    out
}

/// Every error counter of `r`, named so that the same counter has the same
/// name in another reading of the same disk: AER totals per PCIe function,
/// SATA Phy Event Counters (all but the COMRESET signature count, which
/// counts resets the host asked for), SAS phy error counts.
pub fn counters(r: &LinkReading) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for p in &r.pcie {
        if let Some(a) = &p.aer {
            for (what, v) in [
                ("correctable", a.correctable),
                ("nonfatal", a.nonfatal),
                ("fatal", a.fatal),
            ] {
                if let Some(v) = v {
                    out.push((format!("PCIe {} AER {what} errors", p.address), v));
                }
            }
        }
    }
    if let Some(s) = &r.sata {
        for e in s.phy_events.iter().filter(|e| e.id != 0x00a) {
            out.push((format!("SATA phy event {:04X}h {}", e.id, e.name), e.value));
        }
    }
    for (from, phys) in [("SAS", &r.sas), ("SAS log page 18h", &r.sas_log)] {
        for p in phys {
            for (what, v) in [
                ("invalid dwords", p.invalid_dwords),
                ("running disparity errors", p.disparity_errors),
                ("loss of dword sync", p.loss_of_dword_sync),
                ("phy reset problems", p.phy_reset_problems),
            ] {
                if let Some(v) = v {
                    out.push((format!("{from} {} {what}", p.name), v));
                }
            }
        }
    }
    out
}

/// A reading in one line: `PCIe 8.0 GT/s x4 (max 16.0 GT/s x4; port max
/// 16.0 GT/s x16)`, `SATA 6.0 Gb/s (host 6.0 Gb/s, drive 6.0 Gb/s)`,
/// `SAS phy-0:0 12.0 Gb/s`, `USB 480 Mb/s`, parts `; `-separated; `-`
/// when nothing was read.
pub fn summary(r: &LinkReading) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut pcie = r.pcie.iter().peekable();
    while let Some(d) = pcie.next() {
        let port = pcie.next_if(|p| p.role == PcieRole::Port);
        let mut s = format!(
            "{} {} (max {}",
            pcie_words(d.speed_mts, d.width),
            d.address,
            pcie_words(d.max_speed_mts, d.max_width).trim_start_matches("PCIe ")
        );
        if let Some(p) = port {
            s.push_str(&format!(
                "; port {} max {}",
                p.address,
                pcie_words(p.max_speed_mts, p.max_width).trim_start_matches("PCIe ")
            ));
        }
        s.push(')');
        parts.push(s);
    }
    if let Some(s) = &r.sata {
        let g = |v: Option<u32>| v.map_or_else(|| String::from("?"), |v| rate(v, "Gb/s"));
        parts.push(format!(
            "SATA {} (host max {}, drive max {}, {} phy event counters)",
            g(s.speed_mbps),
            g(s.host_max_mbps),
            g(s.drive_speeds_mbps.iter().copied().max()),
            s.phy_events.len()
        ));
    }
    for p in r.sas.iter().chain(&r.sas_log) {
        let g = |v: Option<u32>| v.map_or_else(|| String::from("?"), |v| rate(v, "Gb/s"));
        parts.push(format!(
            "SAS {} {} (max {})",
            p.name,
            g(p.rate_mbps),
            g(p.max_rate_mbps)
        ));
    }
    if let Some(u) = &r.usb {
        let g = |v: Option<u32>| v.map_or_else(|| String::from("?"), |v| format!("{v} Mb/s"));
        parts.push(format!(
            "USB {} (device max {}, port max {})",
            g(u.speed_mbps),
            g(u.device_max_mbps),
            g(u.port_max_mbps)
        ));
    }
    if parts.is_empty() {
        return String::from("-");
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests;
