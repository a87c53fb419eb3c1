//! What the system tells of a target (sysfs, ioctls) and of the host.
//!
//! API used by the CLI:
//! - `describe_bound(path: &str) -> Result<(TargetInfo, DeviceId), IdentityError>`
//!   and `identify(path, &File, sys)`: the description and the identity a
//!   write grant is bound to
//! - `host() -> Host`

use std::fmt;
use std::fs::File;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use bench_core::document::result::{Host, TargetInfo, TargetKind};

use super::file;
use super::scsi;
use crate::sys::blk;

/// Logical block size reported for a regular file (the smallest unit O_DIRECT
/// accepts on common filesystems).
pub const FILE_LOGICAL_BLOCK: u32 = 512;
/// Physical block size reported for a regular file (the page size).
pub const FILE_PHYSICAL_BLOCK: u32 = 4096;

/// Why a target could not be described.
#[derive(Debug)]
pub enum IdentityError {
    /// Opening the path failed (or it names no target: a FIFO, a
    /// directory, ...; see [`file::open`]).
    Open {
        /// The path.
        path: String,
        /// The OS error, or what the path is instead.
        source: io::Error,
    },
    /// `stat` of the path failed.
    Stat {
        /// The path.
        path: String,
        /// The OS error.
        source: io::Error,
    },
    /// The path is neither a block device nor a regular file.
    Unsupported {
        /// The path.
        path: String,
    },
    /// The device's sysfs directory (`/sys/dev/block/MAJ:MIN`) is missing.
    Sysfs {
        /// The path.
        path: String,
        /// The sysfs link that was looked up.
        link: PathBuf,
        /// The OS error.
        source: io::Error,
    },
}

impl fmt::Display for IdentityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdentityError::Open { path, source } => write!(f, "{path}: cannot open: {source}"),
            IdentityError::Stat { path, source } => write!(f, "{path}: cannot stat: {source}"),
            IdentityError::Unsupported { path } => write!(f, "{path}: not a block device or regular file"),
            IdentityError::Sysfs { path, link, source } => {
                write!(f, "{path}: no sysfs entry {}: {source}", link.display())
            }
        }
    }
}

impl std::error::Error for IdentityError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            IdentityError::Open { source, .. }
            | IdentityError::Stat { source, .. }
            | IdentityError::Sysfs { source, .. } => Some(source),
            IdentityError::Unsupported { .. } => None,
        }
    }
}

/// Major and minor numbers of a `dev_t` (glibc's `gnu_dev_major/minor`
/// encoding, which Linux uses: 12 bits of major and 20 of minor, split).
pub fn major_minor(dev: u64) -> (u64, u64) {
    let major = ((dev & 0x0000_0000_000f_ff00) >> 8) | ((dev & 0xffff_f000_0000_0000) >> 32);
    let minor = (dev & 0x0000_0000_0000_00ff) | ((dev & 0x0000_0fff_fff0_0000) >> 12);
    (major, minor)
}

/// Describe `path`: a block device from sysfs and ioctls, a regular file
/// from its metadata. `writable` and `write_refusal` are left for the plan.
#[cfg(test)]
pub fn describe(path: &str) -> Result<TargetInfo, IdentityError> {
    describe_in(path, crate::sysfs::root())
}

/// [`describe`] with the sysfs root `sys` (fixtures in tests).
pub fn describe_in(path: &str, sys: &Path) -> Result<TargetInfo, IdentityError> {
    let meta = std::fs::metadata(path).map_err(|source| IdentityError::Stat {
        path: path.to_string(),
        source,
    })?;
    let ft = meta.file_type();
    if ft.is_file() {
        return Ok(file_info(path, &meta));
    }
    if !ft.is_block_device() {
        return Err(IdentityError::Unsupported { path: path.to_string() });
    }
    let f = file::open(path, false, false).ok();
    describe_block(path, meta.rdev(), f.as_ref(), sys)
}

/// A regular file, from its metadata.
fn file_info(path: &str, meta: &std::fs::Metadata) -> TargetInfo {
    TargetInfo {
        path: path.to_string(),
        kind: TargetKind::File,
        size_bytes: meta.len(),
        logical_block_size: FILE_LOGICAL_BLOCK,
        physical_block_size: FILE_PHYSICAL_BLOCK,
        ..TargetInfo::default()
    }
}

/// The block device `rdev` (at `path`) from sysfs, and from `f` (the
/// device, open) where given: its ioctls and, for a SATA disk, ATA IDENTIFY.
fn describe_block(path: &str, rdev: u64, f: Option<&File>, sys: &Path) -> Result<TargetInfo, IdentityError> {
    let (major, minor) = major_minor(rdev);
    let link = sys.join(format!("dev/block/{major}:{minor}"));
    let dir = std::fs::canonicalize(&link).map_err(|source| IdentityError::Sysfs {
        path: path.to_string(),
        link: link.clone(),
        source,
    })?;
    let mut info = from_sysfs(&dir, sys);
    info.path = path.to_string();
    // The ioctls are authoritative where they answer (sysfs `size` is in
    // 512-byte units whatever the block size).
    if let Some(f) = f {
        if let Ok(size) = blk::size_bytes(f) {
            info.size_bytes = size;
        }
        if let Ok(lbs) = blk::logical_block(f) {
            info.logical_block_size = lbs;
        }
        if let Ok(pbs) = blk::physical_block(f) {
            info.physical_block_size = pbs;
        }
        // SATA disks behind AHCI often show no serial in sysfs (their wwid
        // is the WWN), and their sysfs model is the SCSI INQUIRY's, cut to
        // 16 characters: ask the disk itself, ATA IDENTIFY DEVICE through the
        // SCSI-ATA translation. Whole disks only (SG_IO on a partition is
        // refused), and read-only: IDENTIFY transfers data from the disk.
        let whole = !dir.join("partition").exists();
        if whole && info.transport.as_deref() == Some("sata") {
            if let Ok(page) = scsi::ata_identify(f) {
                merge_ata(&mut info, parse_ata_identify(&page));
            }
        }
        // A SCSI disk (behind an HBA, a RAID controller, virtio-scsi) whose
        // unit serial the kernel left out of device/vpd_pg80 (it reads VPD
        // pages only from devices it trusts to have them): ask the unit,
        // INQUIRY of VPD page 0x80. Never over USB: bridges that hang on VPD
        // requests are why the kernel skips them there, and a USB disk has
        // its bridge's serial anyway.
        if whole && info.serial.is_none() && asks_scsi_serial(info.transport.as_deref(), &dir) {
            if let Ok(page) = scsi::inquiry_vpd(f, 0x80) {
                info.serial = vpd_pg80_serial(&page);
            }
        }
        // A zoned disk (SMR, NVMe ZNS): its zones, from the kernel's zone
        // report, which only reads.
        if whole {
            info.zoned = super::zones::found(f, &dir.join("queue"), info.size_bytes, info.logical_block_size);
            // The path to it: link speeds and PHY and AER error counters,
            // from sysfs and the disk (which only reads).
            info.link = super::link::found(&dir, sys, info.transport.as_deref(), Some(f));
        }
    }
    Ok(info)
}

/// Whether a disk of `transport` whose sysfs directory is `dir` is a SCSI
/// disk (`device/scsi_disk`) not on USB, which may be asked for its VPD
/// page 0x80.
fn asks_scsi_serial(transport: Option<&str>, dir: &Path) -> bool {
    matches!(transport, Some("scsi" | "sas" | "virtio")) && dir.join("device/scsi_disk").is_dir()
}

/// What a device is, on this boot: a block device's number, or a regular
/// file's filesystem and inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    /// A block device (`st_rdev`).
    Block {
        /// The device number.
        rdev: u64,
    },
    /// A regular file (`st_dev`, `st_ino`).
    File {
        /// The filesystem's device number.
        dev: u64,
        /// The inode.
        ino: u64,
    },
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Block { rdev } => {
                let (major, minor) = major_minor(*rdev);
                write!(f, "block device {major}:{minor}")
            }
            Node::File { dev, ino } => {
                let (major, minor) = major_minor(*dev);
                write!(f, "file {ino} on {major}:{minor}")
            }
        }
    }
}

/// Who a target is: what a write grant is bound to when the plan is made,
/// and checked again on the descriptor that writes (a loop device rebound,
/// a disk hot-swapped, a by-id link pointing elsewhere all change it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceId {
    /// The device number, or the file's inode.
    pub node: Node,
    /// The serial, as [`describe`] finds it.
    pub serial: Option<String>,
    /// The WWN, as [`describe`] finds it.
    pub wwn: Option<String>,
    /// Size in bytes.
    pub size: u64,
    /// A regular file's birth time (statx), which tells a new file apart
    /// from the one it replaced even when it got the same inode number.
    pub born: Option<std::time::SystemTime>,
    /// The kernel's disk sequence number (BLKGETDISKSEQ, Linux 5.15+): new
    /// for every disk attached and every loop device (re)bound, so a device
    /// number the kernel gave to another disk meanwhile is told apart.
    pub diskseq: Option<u64>,
}

impl DeviceId {
    /// How `now` differs from this identity, in words (empty: the same
    /// device). A value that one side lacks is not compared.
    pub fn changes(&self, now: &DeviceId) -> Vec<String> {
        let mut out = Vec::new();
        if self.node != now.node {
            out.push(format!("{} is now {}", self.node, now.node));
        }
        let text = |v: &Option<String>| v.as_deref().map_or_else(|| "none".to_string(), |s| format!("{s:?}"));
        if self.serial != now.serial {
            out.push(format!("serial {} is now {}", text(&self.serial), text(&now.serial)));
        }
        if self.wwn != now.wwn {
            out.push(format!("WWN {} is now {}", text(&self.wwn), text(&now.wwn)));
        }
        if self.size != now.size {
            out.push(format!("size {} B is now {} B", self.size, now.size));
        }
        if let (Some(a), Some(b)) = (self.born, now.born) {
            if a != b {
                out.push("the file was created anew (its birth time changed)".to_string());
            }
        }
        if let (Some(a), Some(b)) = (self.diskseq, now.diskseq) {
            if a != b {
                out.push(format!(
                    "disk sequence number {a} is now {b} (another disk, or a loop device bound anew)"
                ));
            }
        }
        out
    }
}

/// A regular file target held open from the plan to the end of the run.
///
/// A filesystem gives a freed inode's number to the next file it makes
/// (ext2, ext3, and ext4 with 128-byte inodes keep no birth time to tell
/// the two apart), so a file deleted and another made at its path would
/// pass for it by device and inode. While a descriptor holds the file its
/// inode is not freed, and no other file can get its number: the pinned
/// descriptor is the file's identity, and what its writes go through.
#[derive(Clone, Debug)]
pub struct Pin(std::sync::Arc<File>);

impl Pin {
    /// The held descriptor (read-only).
    pub fn file(&self) -> &File {
        &self.0
    }

    /// `Err` saying what changed unless `path` still names the pinned
    /// file: the same filesystem and inode, and not unlinked.
    pub fn still_at(&self, path: &str) -> Result<(), String> {
        let held = self.0.metadata().map_err(|e| format!("the held file: {e}"))?;
        let now = std::fs::metadata(path);
        if held.nlink() == 0 {
            let there = if now.is_ok() {
                ", and another file is at its path"
            } else {
                ""
            };
            return Err(format!("the file was removed since the plan opened it{there}"));
        }
        let now = now.map_err(|e| format!("{path}: {e}"))?;
        if (now.dev(), now.ino()) != (held.dev(), held.ino()) {
            return Err(format!(
                "another file is at the path now (inode {} of device {:#x}, not {} of {:#x})",
                now.ino(),
                now.dev(),
                held.ino(),
                held.dev()
            ));
        }
        Ok(())
    }
}

/// [`describe_bound`], keeping the descriptor of a regular file as its
/// [`Pin`] (a block device's identity is its device number and disk
/// sequence number; nothing is held for it).
pub fn describe_pinned(path: &str) -> Result<(TargetInfo, DeviceId, Option<Pin>), IdentityError> {
    let f = file::open(path, false, false).map_err(|source| IdentityError::Open {
        path: path.to_string(),
        source,
    })?;
    let (info, id) = identify(path, &f, crate::sysfs::root())?;
    let pin = matches!(id.node, Node::File { .. }).then(|| Pin(std::sync::Arc::new(f)));
    Ok((info, id, pin))
}

/// Describe `path` and read its identity, through one open descriptor.
pub fn describe_bound(path: &str) -> Result<(TargetInfo, DeviceId), IdentityError> {
    let f = file::open(path, false, false).map_err(|source| IdentityError::Open {
        path: path.to_string(),
        source,
    })?;
    identify(path, &f, crate::sysfs::root())
}

/// The description and identity of the target open as `f` (opened from
/// `path`, which names it in messages): `fstat` of the descriptor, never a
/// lookup of the path again.
pub fn identify(path: &str, f: &File, sys: &Path) -> Result<(TargetInfo, DeviceId), IdentityError> {
    let meta = f.metadata().map_err(|source| IdentityError::Stat {
        path: path.to_string(),
        source,
    })?;
    let ft = meta.file_type();
    if ft.is_file() {
        let info = file_info(path, &meta);
        let id = DeviceId {
            node: Node::File {
                dev: meta.dev(),
                ino: meta.ino(),
            },
            serial: None,
            wwn: None,
            size: meta.len(),
            born: meta.created().ok(),
            diskseq: None,
        };
        return Ok((info, id));
    }
    if !ft.is_block_device() {
        return Err(IdentityError::Unsupported { path: path.to_string() });
    }
    let info = describe_block(path, meta.rdev(), Some(f), sys)?;
    let id = DeviceId {
        node: Node::Block { rdev: meta.rdev() },
        serial: info.serial.clone(),
        wwn: info.wwn.clone(),
        size: info.size_bytes,
        born: None,
        diskseq: blk::disk_seq(f).ok(),
    };
    Ok((info, id))
}

/// Fill in what IDENTIFY tells: the serial and firmware where sysfs had
/// none, and the full model where sysfs had none or a truncated one (a
/// prefix of IDENTIFY's).
fn merge_ata(info: &mut TargetInfo, id: AtaIdentity) {
    if info.serial.is_none() {
        info.serial = id.serial;
    }
    if info.firmware.is_none() {
        info.firmware = id.firmware;
    }
    if let Some(m) = id.model {
        if info.model.as_deref().is_none_or(|s| m.starts_with(s)) {
            info.model = Some(m);
        }
    }
}

/// Model, serial and firmware from an ATA IDENTIFY DEVICE page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AtaIdentity {
    /// Words 27-46.
    pub model: Option<String>,
    /// Words 10-19.
    pub serial: Option<String>,
    /// Words 23-26.
    pub firmware: Option<String>,
}

/// An ATA string: words `first..=last` of the page, each word's two bytes
/// swapped (ATA strings are big-endian within little-endian words), trimmed
/// of spaces and NULs; `None` if empty or not printable ASCII.
fn ata_string(page: &[u8; 512], first: usize, last: usize) -> Option<String> {
    let mut bytes = Vec::with_capacity((last - first + 1) * 2);
    for w in first..=last {
        bytes.push(page[2 * w + 1]);
        bytes.push(page[2 * w]);
    }
    let s = std::str::from_utf8(&bytes).ok()?;
    let t = s.trim_matches(|c: char| c == ' ' || c == '\0');
    (!t.is_empty() && t.chars().all(|c| c.is_ascii_graphic() || c == ' ')).then(|| t.to_string())
}

/// Parse an IDENTIFY DEVICE page. If word 255 carries the integrity
/// signature (0xA5 in its low byte), the page's bytes must sum to 0 mod 256;
/// a page failing that check yields nothing.
pub fn parse_ata_identify(page: &[u8; 512]) -> AtaIdentity {
    if page[510] == 0xA5 && page.iter().fold(0u8, |a, &b| a.wrapping_add(b)) != 0 {
        return AtaIdentity::default();
    }
    AtaIdentity {
        model: ata_string(page, 27, 46),
        serial: ata_string(page, 10, 19),
        firmware: ata_string(page, 23, 26),
    }
}

/// How a disk is attached, from its resolved sysfs path (`/sys/devices/...`):
/// `usb` (a `/usbN/` segment), `nvme`, `virtio`, `sata` (an `ataN` segment),
/// `sas` (an `end_device-`/`port-` segment, or a SCSI host listed under
/// `<sys>/class/sas_host`), `scsi` (any other SCSI host), else `None`.
pub fn transport_of(devpath: &Path, sys: &Path) -> Option<&'static str> {
    let segs: Vec<String> = devpath
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let numbered = |s: &str, prefix: &str| {
        s.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if segs.iter().any(|s| numbered(s, "usb")) {
        return Some("usb");
    }
    if segs
        .iter()
        .any(|s| s == "nvme" || numbered(s, "nvme") || s.starts_with("nvme-subsys"))
    {
        return Some("nvme");
    }
    if segs.iter().any(|s| numbered(s, "virtio")) {
        return Some("virtio");
    }
    if segs.iter().any(|s| numbered(s, "ata")) {
        return Some("sata");
    }
    if segs
        .iter()
        .any(|s| s.starts_with("end_device-") || s.starts_with("port-"))
    {
        return Some("sas");
    }
    let hosts: Vec<&String> = segs.iter().filter(|s| numbered(s, "host")).collect();
    if hosts.iter().any(|h| sys.join("class/sas_host").join(h).exists()) {
        return Some("sas");
    }
    (!hosts.is_empty()).then_some("scsi")
}

/// The driver of the disk's controller: the nearest `driver` link at or
/// above `device` (the disk's `device/` directory, resolved), skipping the
/// SCSI upper-level drivers `sd` and `sr`, which every SCSI disk shares.
pub fn driver_of(device: &Path) -> Option<String> {
    let mut dir = std::fs::canonicalize(device).ok()?;
    loop {
        if let Ok(target) = std::fs::read_link(dir.join("driver")) {
            if let Some(name) = target.file_name().map(|n| n.to_string_lossy().into_owned()) {
                if name != "sd" && name != "sr" {
                    return Some(name);
                }
            }
        }
        if !dir.pop() || dir.as_os_str().len() <= 1 {
            return None;
        }
    }
}

/// The last PCI address (`dddd:bb:dd.f`) in a resolved sysfs path: the
/// controller's own function, below any bridges.
pub fn pci_path_of(devpath: &Path) -> Option<String> {
    let is_pci = |s: &str| {
        let b = s.as_bytes();
        b.len() == 12
            && b[4] == b':'
            && b[7] == b':'
            && b[10] == b'.'
            && b.iter()
                .enumerate()
                .all(|(i, c)| matches!(i, 4 | 7 | 10) || c.is_ascii_hexdigit())
    };
    devpath
        .components()
        .rev()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .find(|s| is_pci(s))
}

/// A sysfs attribute, trimmed; `None` if absent, unreadable or empty.
fn attr(dir: &Path, name: &str) -> Option<String> {
    let s = std::fs::read_to_string(dir.join(name)).ok()?;
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// The serial number in SCSI VPD page 0x80 (unit serial number): a 4-byte
/// header whose last two bytes give the length, then ASCII.
fn vpd_pg80_serial(page: &[u8]) -> Option<String> {
    if page.len() < 4 || page[1] != 0x80 {
        return None;
    }
    let len = usize::from(u16::from_be_bytes([page[2], page[3]]));
    let body = page.get(4..4 + len).unwrap_or(&page[4..]);
    let s = String::from_utf8_lossy(body)
        .trim_matches(|c: char| c.is_whitespace() || c == '\0')
        .to_string();
    (!s.is_empty()).then_some(s)
}

/// The serial inside an ATA `t10.ATA<model><serial>` wwid: what follows the
/// model, else the last word.
fn t10_serial(wwid: &str, model: Option<&str>) -> Option<String> {
    let rest = wwid.strip_prefix("t10.")?;
    let tail = match model.and_then(|m| rest.find(m).map(|i| &rest[i + m.len()..])) {
        Some(t) => t.trim(),
        None => rest
            .split_whitespace()
            .last()
            .filter(|_| rest.split_whitespace().count() > 1)?,
    };
    (!tail.is_empty()).then(|| tail.to_string())
}

/// The serial of the USB device a disk hangs from: the `serial` attribute
/// of the nearest ancestor that is a USB device (has `idVendor`; the
/// interface directories between have none).
fn usb_serial(disk: &Path) -> Option<String> {
    disk.ancestors()
        .find(|d| d.join("idVendor").is_file())
        .and_then(|d| attr(d, "serial"))
}

/// The bracketed (active) scheduler of `queue/scheduler`, or the only one listed.
fn active_scheduler(s: &str) -> Option<String> {
    if let Some(start) = s.find('[') {
        let end = s[start..].find(']')? + start;
        return Some(s[start + 1..end].to_string());
    }
    let mut words = s.split_whitespace();
    let one = words.next()?;
    words.next().is_none().then(|| one.to_string())
}

/// Everything `dir` (a `/sys/devices/.../block/NAME` directory, or a
/// partition's under it) tells; `path` is left empty.
pub fn from_sysfs(dir: &Path, sys: &Path) -> TargetInfo {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    // A partition has no queue/ or device/ of its own: its disk's apply.
    let disk = if dir.join("partition").exists() {
        dir.parent().unwrap_or(dir)
    } else {
        dir
    };
    let dev = disk.join("device");
    let queue = disk.join("queue");
    let model = attr(&dev, "model");
    let wwid = attr(&dev, "wwid").or_else(|| attr(disk, "wwid"));
    let transport = transport_of(disk, sys);
    // The device's own serial first (NVMe/virtio sysfs, SCSI VPD page 0x80:
    // the unit's serial), then a USB disk's USB device's iSerialNumber (what
    // udev's ID_SERIAL_SHORT and lsblk show; QEMU's usb-storage `serial=`):
    // a bridge's serial is shared by every LUN of a multi-bay enclosure,
    // so it names no single disk when the unit has its own.
    let usb = || (transport == Some("usb")).then(|| usb_serial(disk)).flatten();
    let serial = attr(&dev, "serial")
        .or_else(|| attr(disk, "serial"))
        .or_else(|| {
            std::fs::read(dev.join("vpd_pg80"))
                .ok()
                .and_then(|p| vpd_pg80_serial(&p))
        })
        .or_else(usb)
        .or_else(|| wwid.as_deref().and_then(|w| t10_serial(w, model.as_deref())));
    let num = |d: &Path, n: &str| attr(d, n).and_then(|v| v.parse::<u64>().ok());
    let mut info = TargetInfo {
        path: String::new(),
        kind: TargetKind::Block,
        name,
        model,
        serial,
        firmware: attr(&dev, "firmware_rev").or_else(|| attr(&dev, "rev")),
        wwn: wwid,
        transport: transport.map(str::to_string),
        driver: driver_of(&dev),
        pci_path: pci_path_of(disk),
        size_bytes: num(dir, "size").map_or(0, |s| s.saturating_mul(512)),
        logical_block_size: num(&queue, "logical_block_size")
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(0),
        physical_block_size: num(&queue, "physical_block_size")
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(0),
        writable: false,
        write_refusal: None,
        stack: None,
        ..TargetInfo::default()
    };
    set_queue(&mut info, &queue_of(&queue));
    info
}

/// What a block device's `queue/` directory says of it (a disk's, or an
/// array's or layer's once assembled).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Queue {
    /// `rotational`.
    pub rotational: Option<bool>,
    /// The active `scheduler`.
    pub scheduler: Option<String>,
    /// `read_ahead_kb` x 1024.
    pub read_ahead_bytes: Option<u64>,
    /// `write_cache`.
    pub write_cache: Option<String>,
}

/// The facts of the queue directory `queue` (absent files are `None`).
pub fn queue_of(queue: &Path) -> Queue {
    Queue {
        rotational: attr(queue, "rotational").and_then(|v| match v.as_str() {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        }),
        scheduler: attr(queue, "scheduler").and_then(|s| active_scheduler(&s)),
        read_ahead_bytes: attr(queue, "read_ahead_kb")
            .and_then(|v| v.parse::<u64>().ok())
            .map(|kb| kb.saturating_mul(1024)),
        write_cache: attr(queue, "write_cache"),
    }
}

/// Set `t`'s queue facts from `q`.
pub fn set_queue(t: &mut TargetInfo, q: &Queue) {
    t.rotational = q.rotational;
    t.scheduler.clone_from(&q.scheduler);
    t.read_ahead_bytes = q.read_ahead_bytes;
    t.write_cache.clone_from(&q.write_cache);
}

/// The machine: host name, CPU model, online CPUs, memory, kernel release.
pub fn host() -> Host {
    host_in(Path::new("/proc"), crate::sysfs::root())
}

fn host_in(proc_dir: &Path, sys: &Path) -> Host {
    let read = |p: &str| std::fs::read_to_string(proc_dir.join(p)).ok();
    let dmi = |n: &str| attr(&sys.join("class/dmi/id"), n);
    let uefi = sys.join("firmware/efi").is_dir();
    Host {
        hostname: read("sys/kernel/hostname")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty()),
        sys_vendor: dmi("sys_vendor"),
        product_name: dmi("product_name"),
        product_serial: dmi("product_serial"),
        cpu_model: read("cpuinfo").and_then(|s| cpu_model(&s)),
        cores: std::thread::available_parallelism()
            .ok()
            .and_then(|n| u32::try_from(n.get()).ok()),
        memory_bytes: read("meminfo").and_then(|s| mem_total(&s)),
        kernel: read("sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty()),
        firmware: Some(if uefi { "uefi" } else { "bios" }.to_string()),
        secure_boot: if uefi {
            std::fs::read(sys.join("firmware/efi/efivars").join(SECURE_BOOT_VAR))
                .ok()
                .and_then(|v| secure_boot(&v))
        } else {
            Some(false)
        },
        lockdown: std::fs::read_to_string(sys.join("kernel/security/lockdown"))
            .ok()
            .and_then(|s| lockdown(&s)),
        // Filled once the drivers settled (the unattended run).
        modules: Vec::new(),
        // Filled with the run's document (`run::new_doc`, `disks/numa.rs`).
        numa_nodes: Vec::new(),
    }
}

/// The EFI global variable `SecureBoot` in efivarfs (`NAME-VENDORGUID`).
pub const SECURE_BOOT_VAR: &str = "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";

/// An efivarfs file of `SecureBoot`: 4 attribute bytes, then one byte, 1 when
/// the firmware enforces Secure Boot, 0 when not (UEFI 2.x, 3.3 Globally
/// Defined Variables). Anything else: unknown.
fn secure_boot(var: &[u8]) -> Option<bool> {
    match var {
        [_, _, _, _, 1] => Some(true),
        [_, _, _, _, 0] => Some(false),
        _ => None,
    }
}

/// The mode in brackets of /sys/kernel/security/lockdown (`none [integrity] confidentiality`).
fn lockdown(text: &str) -> Option<String> {
    let (_, rest) = text.split_once('[')?;
    let (mode, _) = rest.split_once(']')?;
    (!mode.is_empty() && mode.bytes().all(|b| b.is_ascii_lowercase())).then(|| mode.to_string())
}

/// The first `model name` of /proc/cpuinfo.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "model name").then(|| v.trim().to_string())
    })
}

/// `MemTotal` of /proc/meminfo, in bytes (the file says kB, meaning KiB).
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => n.checked_mul(1024),
        None => Some(n),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    use crate::testutil::TempDir;

    fn write(dir: &Path, rel: &str, content: &[u8]) {
        let p = dir.join(rel);
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, content).expect("write");
    }

    #[test]
    fn major_minor_decodes_dev_t() {
        for (dev, want) in [
            (0x0801, (8, 1)),
            (0x0700, (7, 0)),
            (0x1_0300, (259, 0)),
            (0x10_082C, (8, 300)),
            (0x1000_0000_0000, (4096, 0)),
        ] {
            assert_eq!(major_minor(dev), want, "{dev:#x}");
        }
    }

    #[test]
    fn sata_disk_from_fixture() {
        let t = TempDir::new("sata");
        let d = t.0.join("devices/pci0000:00/ata1/host0/target0:0:0/0:0:0:0/block/sda");
        write(&d, "size", b"2097152\n");
        write(&d, "device/model", b"QEMU HARDDISK   \n");
        write(&d, "device/rev", b"2.5+\n");
        write(
            &d,
            "device/wwid",
            b"t10.ATA     QEMU HARDDISK                           SN1\n",
        );
        write(&d, "queue/logical_block_size", b"512\n");
        write(&d, "queue/physical_block_size", b"4096\n");
        write(&d, "queue/rotational", b"1\n");
        write(&d, "queue/scheduler", b"none [mq-deadline] kyber\n");
        write(&d, "queue/read_ahead_kb", b"128\n");
        write(&d, "queue/write_cache", b"write back\n");
        let i = from_sysfs(&d, &t.0);
        assert_eq!(i.kind, TargetKind::Block);
        assert_eq!(i.name.as_deref(), Some("sda"));
        assert_eq!(i.model.as_deref(), Some("QEMU HARDDISK"));
        assert_eq!(i.serial.as_deref(), Some("SN1"), "serial from the t10 wwid");
        assert_eq!(i.firmware.as_deref(), Some("2.5+"));
        assert_eq!(
            i.wwn.as_deref(),
            Some("t10.ATA     QEMU HARDDISK                           SN1")
        );
        assert_eq!(i.size_bytes, 2_097_152 * 512);
        assert_eq!((i.logical_block_size, i.physical_block_size), (512, 4096));
        assert_eq!(i.rotational, Some(true));
        assert_eq!(i.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(i.read_ahead_bytes, Some(128 * 1024));
        assert_eq!(i.write_cache.as_deref(), Some("write back"));
    }

    #[test]
    fn nvme_virtio_and_partition_fixtures() {
        let t = TempDir::new("nvme");
        let n = t.0.join("devices/pci0000:00/nvme/nvme0/nvme0n1");
        write(&n, "size", b"8\n");
        write(&n, "wwid", b"eui.0011223344556677\n");
        write(&n, "device/model", b"QEMU NVMe Ctrl\n");
        write(&n, "device/serial", b"  SN2  \n");
        write(&n, "device/firmware_rev", b"8.0.0\n");
        write(&n, "queue/rotational", b"0\n");
        write(&n, "queue/scheduler", b"none\n");
        let i = from_sysfs(&n, &t.0);
        assert_eq!(
            (
                i.serial.as_deref(),
                i.firmware.as_deref(),
                i.wwn.as_deref(),
                i.rotational,
                i.scheduler.as_deref()
            ),
            (
                Some("SN2"),
                Some("8.0.0"),
                Some("eui.0011223344556677"),
                Some(false),
                Some("none")
            )
        );
        assert_eq!(i.read_ahead_bytes, None, "absent file is None");
        assert_eq!(i.write_cache, None);

        let v = t.0.join("devices/virtio1/block/vda");
        write(&v, "serial", b"SN3\n");
        write(&v, "size", b"16\n");
        write(&v, "queue/logical_block_size", b"4096\n");
        write(&v.join("vda1"), "partition", b"1\n");
        write(&v.join("vda1"), "size", b"8\n");
        let p = from_sysfs(&v.join("vda1"), &t.0);
        assert_eq!(p.name.as_deref(), Some("vda1"));
        assert_eq!(
            p.serial.as_deref(),
            Some("SN3"),
            "a partition reports its disk's serial"
        );
        assert_eq!(p.logical_block_size, 4096, "and its disk's queue");
        assert_eq!(p.size_bytes, 8 * 512, "but its own size");
    }

    /// Only SCSI disks off USB are asked for VPD page 0x80 themselves.
    #[test]
    fn which_disks_are_asked_for_their_unit_serial() {
        let t = TempDir::new("asks-vpd");
        let scsi = t.0.join("block/sda");
        fs::create_dir_all(scsi.join("device/scsi_disk/0:2:0:0")).expect("mkdir");
        let blk = t.0.join("block/vda");
        fs::create_dir_all(blk.join("device")).expect("mkdir");
        for (transport, dir, want) in [
            (Some("scsi"), &scsi, true),
            (Some("sas"), &scsi, true),
            (Some("virtio"), &scsi, true),
            (Some("usb"), &scsi, false),
            (Some("sata"), &scsi, false),
            (None, &scsi, false),
            (Some("virtio"), &blk, false),
        ] {
            assert_eq!(
                asks_scsi_serial(transport, dir),
                want,
                "{transport:?} {}",
                dir.display()
            );
        }
    }

    #[test]
    fn scsi_serial_from_vpd_page_80() {
        let t = TempDir::new("vpd");
        let d = t.0.join("block/sdb");
        let mut page = vec![0x00, 0x80, 0x00, 0x08];
        page.extend_from_slice(b"  ZA1B2C");
        write(&d, "device/vpd_pg80", &page);
        assert_eq!(from_sysfs(&d, &t.0).serial.as_deref(), Some("ZA1B2C"));
        assert_eq!(vpd_pg80_serial(&[0, 0x83, 0, 2, b'a', b'b']), None, "another page");
    }

    fn link(dir: &Path, name: &str, target: &str) {
        fs::create_dir_all(dir).expect("mkdir");
        std::os::unix::fs::symlink(target, dir.join(name)).expect("symlink");
    }

    #[test]
    fn transport_driver_and_pci_path_from_fixtures() {
        let t = TempDir::new("transport");
        let sys = &t.0;
        let pci = "devices/pci0000:00";
        // (disk dir, transport, the dir holding the controller's driver link, driver, pci)
        let cases = [
            (
                format!("{pci}/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda"),
                Some("sata"),
                format!("{pci}/0000:00:1f.2"),
                "ahci",
                Some("0000:00:1f.2"),
            ),
            (
                format!("{pci}/0000:00:1c.0/0000:03:00.0/nvme/nvme0/nvme0n1"),
                Some("nvme"),
                format!("{pci}/0000:00:1c.0/0000:03:00.0"),
                "nvme",
                Some("0000:03:00.0"),
            ),
            (
                format!("{pci}/0000:00:05.0/virtio2/block/vda"),
                Some("virtio"),
                format!("{pci}/0000:00:05.0/virtio2"),
                "virtio_blk",
                Some("0000:00:05.0"),
            ),
            (
                format!("{pci}/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdc"),
                Some("usb"),
                format!("{pci}/0000:00:14.0/usb2/2-1/2-1:1.0"),
                "usb-storage",
                Some("0000:00:14.0"),
            ),
            (
                format!("{pci}/0000:00:03.0/0000:02:00.0/host1/port-1:0/end_device-1:0/target1:0:0/1:0:0:0/block/sdd"),
                Some("sas"),
                format!("{pci}/0000:00:03.0/0000:02:00.0"),
                "mpt3sas",
                Some("0000:02:00.0"),
            ),
            (
                format!("{pci}/0000:00:03.0/0000:04:00.0/host2/target2:2:0/2:2:0:0/block/sde"),
                Some("scsi"),
                format!("{pci}/0000:00:03.0/0000:04:00.0"),
                "megaraid_sas",
                Some("0000:04:00.0"),
            ),
            (
                "devices/virtual/block/loop0".to_string(),
                None,
                "devices/virtual".to_string(),
                "",
                None,
            ),
        ];
        for (disk, transport, ctl, driver, pci_addr) in &cases {
            let d = sys.join(disk);
            fs::create_dir_all(&d).expect("mkdir");
            write(&d, "size", b"8\n");
            if !driver.is_empty() {
                link(&sys.join(ctl), "driver", &format!("../../bus/pci/drivers/{driver}"));
                // The disk's device/ is its parent chain's first element.
                let dev = d.parent().and_then(Path::parent).expect("device dir");
                if disk.contains("nvme") {
                    link(&d, "device", "..");
                } else {
                    link(&d, "device", dev.to_str().expect("utf8"));
                }
                if disk.contains("/host") {
                    // SCSI disks: the sd driver is bound to the SCSI device; it is skipped.
                    link(dev, "driver", "../../bus/scsi/drivers/sd");
                }
            }
            let i = from_sysfs(&d, sys);
            assert_eq!(i.transport.as_deref(), *transport, "{disk}");
            assert_eq!(i.driver.as_deref(), (!driver.is_empty()).then_some(*driver), "{disk}");
            assert_eq!(i.pci_path.as_deref(), *pci_addr, "{disk}");
        }
        // The USB disk has no serial of its own: its USB device's is used,
        // not the root hub's further up.
        let usb_disk = sys.join(&cases[3].0);
        assert_eq!(from_sysfs(&usb_disk, sys).serial, None);
        let hub = sys.join(format!("{pci}/0000:00:14.0/usb2"));
        write(&hub, "idVendor", b"1d6b\n");
        write(&hub, "serial", b"0000:00:14.0\n");
        assert_eq!(from_sysfs(&usb_disk, sys).serial.as_deref(), Some("0000:00:14.0"));
        let usb_dev = sys.join(format!("{pci}/0000:00:14.0/usb2/2-1"));
        write(&usb_dev, "idVendor", b"46f4\n");
        write(&usb_dev, "serial", b" SN-USB-4 \n");
        assert_eq!(from_sysfs(&usb_disk, sys).serial.as_deref(), Some("SN-USB-4"));
        // The unit's own serial (VPD page 0x80) comes before the bridge's.
        let mut page = vec![0x00, 0x80, 0x00, 0x07];
        page.extend_from_slice(b"LUN-OWN");
        write(&usb_disk, "device/vpd_pg80", &page);
        assert_eq!(from_sysfs(&usb_disk, sys).serial.as_deref(), Some("LUN-OWN"));
        fs::remove_file(usb_disk.join("device/vpd_pg80")).expect("rm");
        // Only for USB disks: a SATA disk does not borrow an ancestor's serial.
        write(&sys.join(pci), "idVendor", b"8086\n");
        write(&sys.join(pci), "serial", b"NOT-A-DISK\n");
        assert_eq!(from_sysfs(&sys.join(&cases[0].0), sys).serial, None);
        // A SCSI host that the SAS transport class lists is SAS.
        fs::create_dir_all(sys.join("class/sas_host/host2")).expect("mkdir");
        let d = sys.join(&cases[5].0);
        assert_eq!(from_sysfs(&d, sys).transport.as_deref(), Some("sas"));
    }

    /// An IDENTIFY page with `s` in words `first..` (byte-swapped per word).
    fn put_ata(page: &mut [u8; 512], first: usize, words: usize, s: &str) {
        let mut b = s.as_bytes().to_vec();
        b.resize(words * 2, b' ');
        for w in 0..words {
            page[2 * (first + w)] = b[2 * w + 1];
            page[2 * (first + w) + 1] = b[2 * w];
        }
    }

    #[test]
    fn identify_fills_gaps_and_untruncates_the_model() {
        let id = AtaIdentity {
            model: Some("BOOTBENCH SATA SSD 2".into()),
            serial: Some("BB-SATA-0002".into()),
            firmware: Some("2.5+".into()),
        };
        let mut a = TargetInfo {
            model: Some("BOOTBENCH SATA S".into()),
            ..TargetInfo::default()
        };
        merge_ata(&mut a, id.clone());
        assert_eq!(
            (a.model.as_deref(), a.serial.as_deref(), a.firmware.as_deref()),
            (Some("BOOTBENCH SATA SSD 2"), Some("BB-SATA-0002"), Some("2.5+"))
        );
        let mut b = TargetInfo {
            model: Some("Other".into()),
            serial: Some("SYSFS".into()),
            firmware: Some("F1".into()),
            ..TargetInfo::default()
        };
        merge_ata(&mut b, id);
        assert_eq!(
            (b.model.as_deref(), b.serial.as_deref(), b.firmware.as_deref()),
            (Some("Other"), Some("SYSFS"), Some("F1")),
            "sysfs facts stay"
        );
    }

    #[test]
    fn ata_identify_strings() {
        let mut page = [0u8; 512];
        put_ata(&mut page, 10, 10, "     WD-WCC4N1234567");
        put_ata(&mut page, 23, 4, "82.00A82");
        put_ata(&mut page, 27, 20, "WDC WD40EFRX-68N32N0");
        let id = parse_ata_identify(&page);
        assert_eq!(id.serial.as_deref(), Some("WD-WCC4N1234567"));
        assert_eq!(id.firmware.as_deref(), Some("82.00A82"));
        assert_eq!(id.model.as_deref(), Some("WDC WD40EFRX-68N32N0"));
        // A blank page gives nothing.
        assert_eq!(parse_ata_identify(&[0u8; 512]), AtaIdentity::default());
        // Word 255's integrity byte: right checksum accepted, wrong refused.
        page[510] = 0xA5;
        let sum = page.iter().fold(0u8, |a, &b| a.wrapping_add(b));
        page[511] = 0u8.wrapping_sub(sum);
        assert_eq!(parse_ata_identify(&page).serial.as_deref(), Some("WD-WCC4N1234567"));
        page[511] = page[511].wrapping_add(1);
        assert_eq!(parse_ata_identify(&page), AtaIdentity::default());
    }

    #[test]
    fn scheduler_parsing() {
        for (s, want) in [
            ("[none] mq-deadline", Some("none")),
            ("mq-deadline [bfq]", Some("bfq")),
            ("none", Some("none")),
            ("a b", None),
            ("", None),
        ] {
            assert_eq!(active_scheduler(s).as_deref(), want, "{s:?}");
        }
    }

    #[test]
    fn describe_follows_the_dev_block_link() {
        // A regular file is described from its metadata.
        let t = TempDir::new("file");
        let f = t.0.join("disk.img");
        fs::write(&f, vec![1u8; 12345]).expect("write");
        let i = describe_in(f.to_str().expect("utf8"), &t.0).expect("describe");
        assert_eq!(
            (i.kind, i.size_bytes, i.logical_block_size, i.name),
            (TargetKind::File, 12345, 512, None)
        );
        // /dev/null is neither.
        assert!(matches!(
            describe_in("/dev/null", &t.0),
            Err(IdentityError::Unsupported { .. })
        ));
    }

    #[test]
    fn describe_a_real_loop_device() {
        // The host's own sysfs: a loop device over a file in /dev/shm.
        let Some(mut lo) = crate::testutil::Loop::new("identity", &vec![0u8; 4 << 20]) else {
            return;
        };
        let (i, id) = describe_bound(&lo.dev).expect("describe");
        assert_eq!(i, describe(&lo.dev).expect("describe"), "the same description");
        assert_eq!(i.kind, TargetKind::Block);
        assert_eq!(i.name.as_deref(), lo.dev.strip_prefix("/dev/"));
        assert_eq!((i.size_bytes, i.logical_block_size), (4 << 20, 512));
        assert!(
            i.scheduler.is_some() && i.read_ahead_bytes.is_some() && i.rotational.is_some(),
            "{i:?}"
        );
        // Its identity: a block device with a disk sequence number, the same
        // when read again, another once the device is bound to another file.
        assert!(matches!(id.node, Node::Block { .. }) && id.diskseq.is_some(), "{id:?}");
        assert!(id.changes(&describe_bound(&lo.dev).expect("again").1).is_empty());
        lo.rebind("identity-other", &vec![0u8; 4 << 20]);
        let changed = id.changes(&describe_bound(&lo.dev).expect("rebound").1);
        assert_eq!(changed.len(), 1, "{changed:?}");
        assert!(changed[0].starts_with("disk sequence number"), "{changed:?}");
    }

    #[test]
    fn host_fixture_and_real() {
        let t = TempDir::new("proc");
        write(&t.0, "sys/kernel/hostname", b"bench1\n");
        write(&t.0, "sys/kernel/osrelease", b"6.1.0-18-amd64\n");
        write(&t.0, "cpuinfo", b"processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU E5-2630 v4 @ 2.20GHz\n\nprocessor\t: 1\nmodel name\t: other\n");
        write(
            &t.0,
            "meminfo",
            b"MemTotal:       16318480 kB\nMemFree:         1000 kB\n",
        );
        write(&t.0, "class/dmi/id/sys_vendor", b"Dell Inc.\n");
        write(&t.0, "class/dmi/id/product_name", b"PowerEdge R630\n");
        write(&t.0, "class/dmi/id/product_serial", b" 7XYZ123 \n");
        let h = host_in(&t.0, &t.0);
        assert_eq!(h.sys_vendor.as_deref(), Some("Dell Inc."));
        assert_eq!(h.product_name.as_deref(), Some("PowerEdge R630"));
        assert_eq!(h.product_serial.as_deref(), Some("7XYZ123"));
        assert_eq!(h.hostname.as_deref(), Some("bench1"));
        assert_eq!(h.kernel.as_deref(), Some("6.1.0-18-amd64"));
        assert_eq!(
            h.cpu_model.as_deref(),
            Some("Intel(R) Xeon(R) CPU E5-2630 v4 @ 2.20GHz")
        );
        assert_eq!(h.memory_bytes, Some(16_318_480 * 1024));
        // No /sys/firmware/efi: a BIOS boot, so no Secure Boot; no securityfs: lockdown unknown.
        assert_eq!(
            (h.firmware.as_deref(), h.secure_boot, h.lockdown.as_deref()),
            (Some("bios"), Some(false), None)
        );
        write(&t.0, "kernel/security/lockdown", b"none [integrity] confidentiality\n");
        fs::create_dir_all(t.0.join("firmware/efi")).expect("mkdir");
        // UEFI, efivarfs not mounted: Secure Boot unknown.
        let h = host_in(&t.0, &t.0);
        assert_eq!(
            (h.firmware.as_deref(), h.secure_boot, h.lockdown.as_deref()),
            (Some("uefi"), None, Some("integrity"))
        );
        for (bytes, want) in [
            (&[6u8, 0, 0, 0, 1][..], Some(true)),
            (&[6, 0, 0, 0, 0], Some(false)),
            (&[6, 0, 0, 0, 2], None),
            (&[6, 0, 0, 0], None),
        ] {
            write(&t.0, &format!("firmware/efi/efivars/{SECURE_BOOT_VAR}"), bytes);
            assert_eq!(host_in(&t.0, &t.0).secure_boot, want, "{bytes:?}");
        }
        for (text, want) in [
            ("[none] integrity confidentiality\n", Some("none")),
            ("none integrity [confidentiality]", Some("confidentiality")),
            ("none integrity", None),
            ("[] x", None),
        ] {
            assert_eq!(lockdown(text).as_deref(), want, "{text}");
        }
        let real = host();
        assert!(real.memory_bytes.is_some_and(|m| m > 1 << 20), "{real:?}");
        assert!(real.kernel.as_deref().is_some_and(|k| !k.is_empty()), "{real:?}");
        assert!(real.cores.is_some_and(|c| c >= 1), "{real:?}");
        assert!(real.hostname.is_some(), "{real:?}");
    }
}
