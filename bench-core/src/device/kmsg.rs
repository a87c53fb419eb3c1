//! The kernel's log as `/dev/kmsg` gives it, one record per read
//! (Documentation/ABI/testing/dev-kmsg): `PRI,SEQ,TSUSEC,FLAGS[,...];text`
//! then ` KEY=value` lines (` SUBSYSTEM=scsi`, ` DEVICE=b8:0`,
//! ` DEVICE=+scsi:2:0:0:0`). [`parse_record`] takes one apart,
//! [`classify`] says what its text reports of a disk, [`DiskRefs::names`]
//! whether it names a given disk. Pure: the reader is PID 1's (init's
//! `run/kmsg.rs`).
//!
//! The messages matched are the kernel's own (Linux 6.1, what the boot
//! stick runs; the same words in later kernels), quoted in
//! [`classify`] with where each is printed.

use alloc::string::String;
use core::fmt::Write as _;

use crate::document::result::KernelLogKind;

/// At most this many bytes of a line's text are kept.
pub const TEXT_MAX: usize = 512;

/// At most this many lines are kept per disk; more are only counted.
pub const LINES_PER_DISK: usize = 200;

/// One `/dev/kmsg` record, borrowed from the buffer read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    /// Syslog facility (`PRI >> 3`): 0 for the kernel's own lines; lines
    /// written to /dev/kmsg from user space (bootbench's own among them)
    /// are never 0.
    pub facility: u32,
    /// Syslog level (`PRI & 7`): 0 emergency ... 3 error, 4 warning, 7 debug.
    pub level: u8,
    /// The record's sequence number.
    pub seq: u64,
    /// The kernel's timestamp, microseconds since boot.
    pub time_us: u64,
    /// The message, as the kernel escaped it (non-printable bytes as `\xHH`).
    pub text: &'a [u8],
    /// The ` DEVICE=` key's value (`b8:0`, `+scsi:2:0:0:0`, `c242:0`), if any.
    pub device: Option<&'a [u8]>,
}

/// Why a record was not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordError {
    /// No `;` ends the prefix.
    NoPrefix,
    /// A prefix field is not a number: which (`priority`, `sequence`,
    /// `timestamp`).
    BadField(&'static str),
}

impl core::fmt::Display for RecordError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            RecordError::NoPrefix => f.write_str("no ';' after the record's prefix"),
            RecordError::BadField(w) => write!(f, "the record's {w} is not a number"),
        }
    }
}

fn number(b: &[u8], what: &'static str) -> Result<u64, RecordError> {
    let s = core::str::from_utf8(b).map_err(|_| RecordError::BadField(what))?;
    s.parse().map_err(|_| RecordError::BadField(what))
}

/// Take one record apart (the bytes of one read of /dev/kmsg).
pub fn parse_record(buf: &[u8]) -> Result<Record<'_>, RecordError> {
    let semi = buf.iter().position(|&b| b == b';').ok_or(RecordError::NoPrefix)?;
    let mut fields = buf[..semi].split(|&b| b == b',');
    let pri = number(fields.next().unwrap_or_default(), "priority")?;
    let seq = number(fields.next().ok_or(RecordError::BadField("sequence"))?, "sequence")?;
    let time_us = number(fields.next().ok_or(RecordError::BadField("timestamp"))?, "timestamp")?;
    let rest = &buf[semi + 1..];
    let mut lines = rest.split(|&b| b == b'\n');
    let text = lines.next().unwrap_or_default();
    let device = lines.filter_map(|l| l.strip_prefix(b" DEVICE=")).next();
    Ok(Record {
        facility: u32::try_from(pri >> 3).unwrap_or(u32::MAX),
        level: u8::try_from(pri & 7).unwrap_or(7),
        seq,
        time_us,
        text,
        device,
    })
}

/// The text as kept: printable ASCII as is, every other byte as `\xHH`,
/// at most [`TEXT_MAX`] bytes (an escape is never cut).
pub fn escape_text(text: &[u8]) -> String {
    let mut out = String::new();
    for &b in text {
        let add = if (0x20..0x7f).contains(&b) { 1 } else { 4 };
        if out.len() + add > TEXT_MAX {
            break;
        }
        if add == 1 {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

/// True if `text` holds `pat`, ignoring ASCII case.
fn has(text: &str, pat: &str) -> bool {
    let (t, p) = (text.as_bytes(), pat.as_bytes());
    p.len() <= t.len() && t.windows(p.len()).any(|w| w.eq_ignore_ascii_case(p))
}

/// What a line reports of a disk, by the kernel's own words; `None` for a
/// line of none of these below warning level (`level` above 4). In the
/// order checked:
///
/// - `medium_error`: block/blk-mq.c `blk_print_req_error` with
///   BLK_STS_MEDIUM (block/blk-core.c `blk_errors`: "critical medium"):
///   `critical medium error, dev sda, sector N op 0x0:(READ) ...`;
///   drivers/scsi/constants.c's sense key `Medium Error` and ASC text
///   `Unrecovered read error` (sd.c `sd_print_sense_hdr`: `[sda] tag#0
///   Sense Key : Medium Error [current]`, `Add. Sense: Unrecovered read
///   error`); drivers/nvme/host/core.c `nvme_log_error` with status
///   `Unrecovered Read Error`; drivers/ata/libata-eh.c `ata_eh_link_report`'s
///   `res ... Emask 0x9 (media error)`.
/// - `io_error`: every other `blk_print_req_error` line (`I/O error, dev
///   vdb, sector 8192 op 0x0:(READ) flags 0x4000 phys_seg 1 prio class
///   2`, `timeout error, dev ...`); fs/buffer.c `buffer_io_error`: `Buffer
///   I/O error on dev sda1, logical block N`; drivers/scsi/scsi_logging.c
///   `scsi_print_result`: `[sda] tag#0 FAILED Result: hostbyte=...`; the
///   NVMe `nvme_log_error` lines (`nvme0n1: Read(0x2) @ LBA 0, 8 blocks,
///   ... (sct 0x2 / sc 0x81)`).
/// - `ata_exception`: `ata_eh_link_report`: `exception Emask 0x0 SAct 0x0
///   SErr 0x0 action 0x0`, `failed command: READ DMA EXT`, `cmd 25/00:...`,
///   `res 51/40:...`, `status: { DRDY ERR }`, `error: { UNC }`, `SError: {`.
/// - `link_reset`: libata-eh.c `ata_eh_reset`: `hard resetting link`, `link
///   is slow to respond, please be patient (ready=0)`, `COMRESET failed
///   (errno=-16)`; libata-core.c `sata_print_link_status`: `SATA link
///   down (SStatus 0 SControl 300)`; `sata_down_spd_limit`: `limiting SATA
///   link speed to 1.5 Gbps`.
/// - `nvme_timeout`: drivers/nvme/host/pci.c `nvme_timeout`: `I/O 5 QID 1
///   timeout, aborting`, `I/O 5 QID 0 timeout, reset controller` (later
///   kernels: `I/O tag 5 (...) opcode 0x2 (Read) QID 1 timeout, aborting`).
/// - `nvme_reset`: pci.c `nvme_warn_reset`: `controller is down; will
///   reset: CSTS=0x3, PCI_STATUS=0x10`; `Removing after probe failure
///   status: -19`; `Device not ready; aborting reset, CSTS=0x1`;
///   `Disabling device after reset failure`; `resetting controller`.
/// - `nvme_abort`: pci.c `abort_endio`: `Abort status: 0x0`; any other
///   `aborting`.
/// - `other`: anything else at warning level or worse (0-4).
pub fn classify(text: &str, level: u8) -> Option<KernelLogKind> {
    let ata_report = ["cmd ", "res ", "status: {", "error: {", "serror: {"];
    let after_prefix = text.split_once(": ").map_or("", |(_, r)| r);
    Some(
        if has(text, "medium error")
            || has(text, "critical medium")
            || has(text, "unrecovered read error")
            || has(text, "(media error)")
        {
            KernelLogKind::MediumError
        } else if (has(text, " error, dev ") && has(text, ", sector "))
            || has(text, "buffer i/o error on dev")
            || has(text, "failed result:")
            || (has(text, " @ lba ") && has(text, "(sct "))
        {
            KernelLogKind::IoError
        } else if has(text, "exception emask")
            || has(text, "failed command:")
            || (text.starts_with("ata") && ata_report.iter().any(|p| has_prefix(after_prefix, p)))
        {
            KernelLogKind::AtaException
        } else if has(text, "resetting link")
            || has(text, "sata link down")
            || has(text, "link is slow to respond")
            || has(text, "comreset failed")
            || has(text, "limiting sata link speed")
        {
            KernelLogKind::LinkReset
        } else if has(text, "qid ") && has(text, " timeout") {
            KernelLogKind::NvmeTimeout
        } else if has(text, "controller is down; will reset")
            || has(text, "resetting controller")
            || has(text, "removing after probe failure")
            || has(text, "aborting reset")
            || has(text, "after reset failure")
        {
            KernelLogKind::NvmeReset
        } else if has(text, "abort status") || has(text, "aborting") {
            KernelLogKind::NvmeAbort
        } else if level <= 4 {
            KernelLogKind::Other
        } else {
            return None;
        },
    )
}

fn has_prefix(text: &str, pat: &str) -> bool {
    text.len() >= pat.len() && text.as_bytes()[..pat.len()].eq_ignore_ascii_case(pat.as_bytes())
}

/// The 512-byte sector a block layer line names: `..., sector N ...`.
pub fn sector_of(text: &str) -> Option<u64> {
    let at = text.find(", sector ")? + ", sector ".len();
    let digits: &str = &text[at..];
    let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    digits[..end].parse().ok()
}

/// What a disk is called in the kernel's lines: its kernel name (and so
/// its partitions'), the libata port that holds it, its SCSI address, its
/// NVMe controller, its device numbers (the disk's and its partitions').
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiskRefs {
    /// Kernel name: `sda`, `nvme0n1`, `vdb`.
    pub name: String,
    /// The libata port's print id: `3` for `ata3` (`ata3.00`), from the
    /// disk's sysfs device path.
    pub ata_port: Option<u32>,
    /// The SCSI address `H:C:T:L` (`2:0:0:0`).
    pub scsi: Option<String>,
    /// The NVMe controller: `nvme0`.
    pub nvme_ctrl: Option<String>,
    /// Block device numbers (major, minor) of the disk and its partitions.
    pub devnums: alloc::vec::Vec<(u32, u32)>,
}

impl DiskRefs {
    /// True if a line with `text` (and the ` DEVICE=` value `device`)
    /// names this disk: a word that is its kernel name or a partition's
    /// (`sda1`, `nvme0n1p2`), its NVMe controller (`nvme0`), its libata
    /// port (`ata3`, `ata3.00`), its SCSI address (`sd 2:0:0:0:`), or the
    /// device key of one of its device numbers (`b8:0`) or SCSI address
    /// (`+scsi:2:0:0:0`).
    pub fn names(&self, text: &str, device: Option<&str>) -> bool {
        if let Some(d) = device {
            if self.names_device(d) {
                return true;
            }
        }
        if self.name.is_empty() {
            return false;
        }
        let ata = self.ata_port.map(|p| alloc::format!("ata{p}"));
        let word = |w: &str| {
            w == self.name || self.is_partition(w) || self.nvme_ctrl.as_deref() == Some(w) || ata.as_deref() == Some(w)
        };
        if text.split(|c: char| !c.is_ascii_alphanumeric()).any(word) {
            return true;
        }
        self.scsi.as_deref().is_some_and(|hctl| {
            text.split_whitespace()
                .any(|w| w.trim_end_matches(':').trim_matches(|c| c == '[' || c == ']') == hctl)
        })
    }

    /// `w` is one of the disk's partitions: the name then digits (`sda1`),
    /// or, for a name ending in a digit, the name, `p`, digits
    /// (`nvme0n1p1`, `mmcblk0p1`).
    fn is_partition(&self, w: &str) -> bool {
        let Some(rest) = w.strip_prefix(self.name.as_str()) else {
            return false;
        };
        let digits = if self.name.ends_with(|c: char| c.is_ascii_digit()) {
            match rest.strip_prefix('p') {
                Some(d) => d,
                None => return false,
            }
        } else {
            rest
        };
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    }

    fn names_device(&self, d: &str) -> bool {
        if let Some(hctl) = d.strip_prefix("+scsi:") {
            return self.scsi.as_deref() == Some(hctl);
        }
        let Some((maj, min)) = d.strip_prefix('b').and_then(|n| n.split_once(':')) else {
            return false;
        };
        match (maj.parse::<u32>(), min.parse::<u32>()) {
            (Ok(a), Ok(b)) => self.devnums.contains(&(a, b)),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests;
