//! Virtual disks: what the guest sees (transport, serial, model, rotation
//! rate), how big the backing file is, how QEMU throttles it, which faults it
//! injects. A spec is written on the command line as
//! `TRANSPORT[,key=value]...`, e.g.
//! `sata,size=256M,serial=BB-SATA-1,model=BOOTBENCH HDD,rotation=7200,bps=40M`.
//! `lbs=` and `pbs=` set the logical and physical block sizes the guest sees
//! (`lbs=4096` a 4Kn disk, `pbs=4096` alone a 512e one). The SCSI
//! transports (`virtio-scsi`, `megasas`, `mptsas`, `lsi`, `uas`) attach a
//! `scsi-hd` (serial in VPD page 0x80, `model=` its INQUIRY product) to one
//! controller of that kind shared by every disk of the transport; `wwn=`
//! gives such a disk its WWN (the SAS address of an `mptsas` disk, which
//! needs one: Linux's mptsas attaches no end device of SAS address 0).
//! `guest_serial=` gives the device a serial of any bytes (percent-escaped:
//! `%0A` a line break, `%2C` a comma, `%25` a percent sign) while `serial`
//! still names the backing file: for the tests of what a hostile device
//! string does to the console.

use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// How the disk is attached to the guest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// An `ide-hd` on an AHCI controller: a SATA disk to the guest (`sdX`).
    Sata,
    /// An NVMe controller with one namespace (`nvmeXn1`).
    Nvme,
    /// `virtio-blk-pci` (`vdX`).
    Virtio,
    /// `usb-storage` on the xHCI controller (`sdX` through usb-storage).
    Usb,
    /// A `scsi-hd` on a `virtio-scsi-pci` controller (`sdX` through virtio_scsi).
    VirtioScsi,
    /// A `scsi-hd` on a `megasas-gen2` (MegaRAID SAS 2208: megaraid_sas).
    Megasas,
    /// A `scsi-hd` on an `mptsas1068` (LSI SAS1068: the Fusion MPT mptsas).
    Mptsas,
    /// A `scsi-hd` on an `lsi53c895a` (LSI 53C895A parallel SCSI: sym53c8xx).
    Lsi,
    /// A `scsi-hd` LUN of a `usb-uas` (USB Attached SCSI: uas) on the xHCI controller.
    Uas,
}

impl Transport {
    /// The name used in specs and reports.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Sata => "sata",
            Transport::Nvme => "nvme",
            Transport::Virtio => "virtio",
            Transport::Usb => "usb",
            Transport::VirtioScsi => "virtio-scsi",
            Transport::Megasas => "megasas",
            Transport::Mptsas => "mptsas",
            Transport::Lsi => "lsi",
            Transport::Uas => "uas",
        }
    }

    /// The SCSI HBA QEMU emulates for this transport (its `-device` driver),
    /// `None` for the transports whose disk is a device of its own.
    pub fn scsi_controller(self) -> Option<&'static str> {
        match self {
            Transport::VirtioScsi => Some("virtio-scsi-pci"),
            Transport::Megasas => Some("megasas-gen2"),
            Transport::Mptsas => Some("mptsas1068"),
            Transport::Lsi => Some("lsi53c895a"),
            Transport::Uas => Some("usb-uas"),
            Transport::Sata | Transport::Nvme | Transport::Virtio | Transport::Usb => None,
        }
    }

    /// How many disks one controller of this transport takes: SCSI ids
    /// (LUNs on UAS) from 0, the lsi53c895a's own id 7 left out; `None` for
    /// the transports that are not [`Transport::scsi_controller`]s.
    pub fn scsi_targets(self) -> Option<usize> {
        match self {
            Transport::Lsi => Some(7),
            Transport::VirtioScsi | Transport::Megasas | Transport::Mptsas | Transport::Uas => Some(8),
            Transport::Sata | Transport::Nvme | Transport::Virtio | Transport::Usb => None,
        }
    }
}

impl FromStr for Transport {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        match s {
            "sata" | "ahci" => Ok(Transport::Sata),
            "nvme" => Ok(Transport::Nvme),
            "virtio" | "virtio-blk" => Ok(Transport::Virtio),
            "usb" | "usb-storage" => Ok(Transport::Usb),
            "virtio-scsi" => Ok(Transport::VirtioScsi),
            "megasas" | "megasas-gen2" => Ok(Transport::Megasas),
            "mptsas" | "mptsas1068" => Ok(Transport::Mptsas),
            "lsi" | "lsi53c895a" => Ok(Transport::Lsi),
            "uas" | "usb-uas" => Ok(Transport::Uas),
            other => Err(SpecError(format!(
                "transport {other:?}: expected one of sata (ahci), nvme, virtio (virtio-blk), usb (usb-storage), \
                 virtio-scsi, megasas (megasas-gen2), mptsas (mptsas1068), lsi (lsi53c895a), uas (usb-uas)"
            ))),
        }
    }
}

/// QEMU's block throttling (`throttling.bps-total`, `throttling.iops-total`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Throttle {
    /// Bytes per second, reads and writes together.
    pub bps_total: Option<u64>,
    /// Requests per second, reads and writes together.
    pub iops_total: Option<u64>,
}

/// A blkdebug fault: the guest gets `errno` for the request that hits `sector`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// blkdebug event name, e.g. `read_aio`, `write_aio`.
    pub event: String,
    /// The errno returned to the guest (5 = EIO).
    pub errno: u32,
    /// The 512-byte sector that triggers it; any request when `None`.
    pub sector: Option<u64>,
    /// Only requests of this type fail (blkdebug's `iotype`: `read`,
    /// `write`, `write-zeroes`, `discard`, `flush`, `block-status`); every
    /// type when `None`. A read error that md repairs by writing the sector
    /// back needs `read`: otherwise the repair write fails too and hides it.
    pub iotype: Option<String>,
}

/// blkdebug's I/O types (`BlkdebugIOType`).
pub const IOTYPES: [&str; 6] = ["read", "write", "write-zeroes", "discard", "flush", "block-status"];

impl FromStr for Fault {
    type Err = SpecError;
    /// `EVENT:ERRNO[:SECTOR[:IOTYPE]]`, e.g. `read_aio:5:8192` or
    /// `read_aio:5:8192:read`.
    fn from_str(s: &str) -> Result<Self, SpecError> {
        let mut parts = s.split(':');
        let event = parts.next().unwrap_or_default();
        if event.is_empty() || !event.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(SpecError(format!(
                "fault {s:?}: expected EVENT:ERRNO[:SECTOR[:IOTYPE]], e.g. read_aio:5:8192:read"
            )));
        }
        let errno = parts
            .next()
            .and_then(|e| e.parse().ok())
            .ok_or_else(|| SpecError(format!("fault {s:?}: errno must be a whole number")))?;
        let sector = match parts.next() {
            None => None,
            Some(x) => Some(
                x.parse()
                    .map_err(|_| SpecError(format!("fault {s:?}: sector must be a whole number")))?,
            ),
        };
        let iotype = match parts.next() {
            None => None,
            Some(t) if IOTYPES.contains(&t) => Some(t.to_owned()),
            Some(t) => {
                return Err(SpecError(format!(
                    "fault {s:?}: I/O type {t:?}: expected one of {}",
                    IOTYPES.join(", ")
                )))
            }
        };
        if parts.next().is_some() {
            return Err(SpecError(format!("fault {s:?}: too many fields")));
        }
        Ok(Fault {
            event: event.to_owned(),
            errno,
            sector,
            iotype,
        })
    }
}

/// One virtual disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskSpec {
    pub transport: Transport,
    /// Size of the backing file in bytes (created sparse when absent).
    pub size: u64,
    /// The serial QEMU gives the device (the guest identifies the disk by
    /// it), and the name of its backing file.
    pub serial: String,
    /// The serial the guest sees instead of `serial`, when given
    /// (`guest_serial=`, percent-decoded): any text, line breaks included.
    /// QEMU keeps 20 characters of it on sata, nvme and virtio, and a USB
    /// string descriptor holds at most 126.
    pub guest_serial: Option<String>,
    /// Model string: SATA's (40 characters) or a SCSI disk's INQUIRY
    /// product (16); QEMU's default otherwise.
    pub model: Option<String>,
    /// Rotation rate in rpm, 1 = non-rotating (SATA and SCSI disks).
    pub rotation_rate: Option<u16>,
    /// Logical block size in bytes (`lbs=`), QEMU's default (512) when `None`.
    pub logical_block_size: Option<u32>,
    /// Physical block size in bytes (`pbs=`), the logical one when `None`.
    pub physical_block_size: Option<u32>,
    /// A SCSI disk's WWN (`wwn=`, 16 hex digits, e.g. `5000c50015ea71ac`):
    /// its VPD page 0x83 NAA identifier, and an `mptsas` disk's SAS address.
    pub wwn: Option<u64>,
    pub throttle: Throttle,
    pub faults: Vec<Fault>,
    /// Backing file; `<out-dir>/disks/<name>.img` when not given.
    pub file: Option<PathBuf>,
    /// NVMe only: namespace `nsid` of the controller with this serial. Disks
    /// that share a serial and each give `ns=` are the namespaces of one
    /// controller (which all report its serial); without it, a disk is a
    /// controller with one namespace of its own.
    pub nsid: Option<u32>,
    /// NVMe namespaces only: a zoned (ZNS) namespace of these zones.
    pub zns: Option<Zns>,
    /// NVMe controllers only (`link=2_5x1`): behind a `pcie-root-port` of
    /// its own whose link is limited to this (`x-speed`, `x-width`); the
    /// machine must be q35.
    pub link: Option<PcieLimit>,
    /// NVMe only (`node=`): the NUMA node the controller sits on, behind a
    /// root port of a `pxb-pcie` expander bridge on that node
    /// ([`crate::numa`]); the machine needs NUMA nodes (q35). `None`: the
    /// main bus.
    pub node: Option<u32>,
}

/// A PCIe root port's link limit (QEMU's `pcie-root-port` `x-speed` and
/// `x-width`), `SPEEDxWIDTH` in a disk spec: `2_5x1`, `16x4`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcieLimit {
    /// `x-speed`: `2_5`, `5`, `8` or `16` (GT/s).
    pub speed: &'static str,
    /// `x-width`: lanes, 1 to 32.
    pub width: u8,
}

impl FromStr for PcieLimit {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, SpecError> {
        let bad = || {
            SpecError(format!(
                "link {s:?}: SPEEDxWIDTH, speed 2_5, 5, 8 or 16 (GT/s), width 1 to 32"
            ))
        };
        let (speed, width) = s.split_once('x').ok_or_else(bad)?;
        let speed = ["2_5", "5", "8", "16"]
            .into_iter()
            .find(|v| *v == speed)
            .ok_or_else(bad)?;
        let width = width.parse().ok().filter(|w| (1..=32).contains(w)).ok_or_else(bad)?;
        Ok(PcieLimit { speed, width })
    }
}

/// A zoned NVMe namespace's zones (QEMU's `nvme-ns` `zoned.*` properties).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Zns {
    /// `zone_size=`: bytes of each zone.
    pub zone_size: u64,
    /// `zone_capacity=`: bytes of each zone that can be written (0: the
    /// zone size).
    pub zone_capacity: u64,
    /// `max_open=`: zones open at once at most (0: no limit).
    pub max_open: u32,
    /// `max_active=`: zones open or closed at once at most (0: no limit).
    pub max_active: u32,
}

/// A spec that cannot be used, with the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError(pub String);

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SpecError {}

/// The value of a size key (`size=`, `bps=`): [`bench_core::vocab::size::parse_size`],
/// the config's rules (dd's suffixes: `64K`, `256M`, `1GiB` = 1024-based, `1GB` = 1000-based).
fn parse_size(key: &str, value: &str) -> Result<u64, SpecError> {
    bench_core::vocab::size::parse_size(value).map_err(|e| {
        SpecError(format!(
            "{key} {value:?} is not a size: {e}; expected {}",
            bench_core::vocab::size::EXPECTED
        ))
    })
}

/// The value of `lbs=`/`pbs=`: a power of two from 512 B to 64 KiB (QEMU
/// takes up to 2 MiB; no disk has blocks above 64 KiB).
fn block_size(key: &str, value: &str) -> Result<u32, SpecError> {
    let n = parse_size(key, value)?;
    match u32::try_from(n) {
        Ok(b) if b.is_power_of_two() && (512..=65536).contains(&b) => Ok(b),
        _ => Err(SpecError(format!(
            "{key} {value:?}: expected a power of two from 512 to 65536 bytes"
        ))),
    }
}

/// The value of `wwn=`: 16 hex digits (an optional `0x` before them), not 0.
fn parse_wwn(value: &str) -> Result<u64, SpecError> {
    let hex = value.strip_prefix("0x").unwrap_or(value);
    match u64::from_str_radix(hex, 16) {
        Ok(w) if w != 0 && hex.len() == 16 => Ok(w),
        _ => Err(SpecError(format!(
            "wwn {value:?}: expected 16 hex digits, not all zero, e.g. 5000c50015ea71ac"
        ))),
    }
}

/// `%XX` escapes (two hex digits) replaced by their byte; the result must
/// be UTF-8 without NUL (a QEMU option value is a C string).
pub fn percent_decode(s: &str) -> Result<String, SpecError> {
    let bad = || {
        SpecError(format!(
            "{s:?}: %XX needs two hex digits; the text must be UTF-8 without NUL"
        ))
    };
    let mut out = Vec::with_capacity(s.len());
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hex = [bytes.next().ok_or_else(bad)?, bytes.next().ok_or_else(bad)?];
            let hex = std::str::from_utf8(&hex).map_err(|_| bad())?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
        } else {
            out.push(b);
        }
    }
    let text = String::from_utf8(out).map_err(|_| bad())?;
    if text.contains('\0') {
        return Err(bad());
    }
    Ok(text)
}

/// Serials become file names and QEMU option values: keep them to a safe set.
fn check_serial(serial: &str) -> Result<(), SpecError> {
    let ok = !serial.is_empty()
        && serial.len() <= 20
        && serial
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
    if ok {
        Ok(())
    } else {
        Err(SpecError(format!(
            "serial {serial:?}: 1-20 characters of A-Z a-z 0-9 . _ -"
        )))
    }
}

impl FromStr for DiskSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        let mut fields = s.split(',');
        let transport: Transport = fields.next().unwrap_or_default().parse()?;
        let mut d = DiskSpec {
            transport,
            size: 64 << 20,
            serial: String::new(),
            guest_serial: None,
            model: None,
            rotation_rate: None,
            logical_block_size: None,
            physical_block_size: None,
            wwn: None,
            throttle: Throttle::default(),
            faults: Vec::new(),
            file: None,
            nsid: None,
            zns: None,
            link: None,
            node: None,
        };
        for field in fields {
            let (key, value) = field
                .split_once('=')
                .ok_or_else(|| SpecError(format!("disk spec {s:?}: {field:?} is not key=value")))?;
            d.set(s, key, value)?;
        }
        d.check(s)?;
        Ok(d)
    }
}

impl DiskSpec {
    /// Set the field `key` of the spec `s` to `value`.
    fn set(&mut self, s: &str, key: &str, value: &str) -> Result<(), SpecError> {
        match key {
            "size" => self.size = parse_size(key, value)?,
            "serial" => self.serial = value.to_owned(),
            "guest_serial" => {
                let text = percent_decode(value)?;
                if text.is_empty() || text.len() > 255 {
                    return Err(SpecError(format!("guest_serial {value:?}: 1 to 255 bytes")));
                }
                self.guest_serial = Some(text);
            }
            "model" => self.model = Some(value.to_owned()),
            "rotation" | "rotation_rate" => {
                self.rotation_rate = Some(
                    value
                        .parse()
                        .map_err(|_| SpecError(format!("rotation {value:?}: rpm as a whole number")))?,
                );
            }
            "bps" => self.throttle.bps_total = Some(parse_size(key, value)?),
            "iops" => {
                self.throttle.iops_total = Some(
                    value
                        .parse()
                        .map_err(|_| SpecError(format!("iops {value:?}: a whole number")))?,
                );
            }
            "lbs" | "logical_block_size" => self.logical_block_size = Some(block_size(key, value)?),
            "pbs" | "physical_block_size" => self.physical_block_size = Some(block_size(key, value)?),
            "wwn" => self.wwn = Some(parse_wwn(value)?),
            "fault" => self.faults.push(value.parse()?),
            "file" => self.file = Some(PathBuf::from(value)),
            "ns" => {
                self.nsid = Some(
                    value
                        .parse()
                        .ok()
                        .filter(|n| *n >= 1)
                        .ok_or_else(|| SpecError(format!("ns {value:?}: a namespace id from 1")))?,
                );
            }
            "node" => {
                self.node = Some(
                    value
                        .parse()
                        .map_err(|_| SpecError(format!("node {value:?}: a NUMA node number")))?,
                );
            }
            "zone_size" => self.zns.get_or_insert_with(Zns::default).zone_size = parse_size(key, value)?,
            "zone_capacity" => self.zns.get_or_insert_with(Zns::default).zone_capacity = parse_size(key, value)?,
            "max_open" | "max_active" => {
                let n = value
                    .parse()
                    .map_err(|_| SpecError(format!("{key} {value:?}: a whole number of zones (0: no limit)")))?;
                let z = self.zns.get_or_insert_with(Zns::default);
                if key == "max_open" {
                    z.max_open = n;
                } else {
                    z.max_active = n;
                }
            }
            "link" => self.link = Some(value.parse()?),
            _ => {
                return Err(SpecError(format!(
                    "disk spec {s:?}: unknown key {key:?} (size, serial, guest_serial, model, rotation, lbs, pbs, wwn, bps, iops, fault, file, ns, node, zone_size, zone_capacity, max_open, max_active, link)"
                )))
            }
        }
        Ok(())
    }

    /// Check what the fields of the spec `s` must be together (the serial, the size against
    /// the blocks, what applies to which transport).
    fn check(&self, s: &str) -> Result<(), SpecError> {
        check_serial(&self.serial)?;
        if self.size == 0 || self.size % 512 != 0 {
            return Err(SpecError(format!(
                "disk spec {s:?}: size must be a positive multiple of 512"
            )));
        }
        let scsi = self.transport.scsi_controller().is_some();
        if !(self.transport == Transport::Sata || scsi) && (self.model.is_some() || self.rotation_rate.is_some()) {
            return Err(SpecError(format!(
                "disk spec {s:?}: model and rotation apply to sata and SCSI (virtio-scsi, megasas, mptsas, lsi, uas) disks only"
            )));
        }
        if self.wwn.is_some() && !scsi {
            return Err(SpecError(format!(
                "disk spec {s:?}: wwn applies to SCSI (virtio-scsi, megasas, mptsas, lsi, uas) disks only"
            )));
        }
        if self.transport == Transport::Mptsas && self.wwn.is_none() {
            return Err(SpecError(format!(
                "disk spec {s:?}: an mptsas disk needs wwn= (its SAS address, e.g. wwn=5000c50015ea71ac): \
                 Linux's mptsas attaches no end device of SAS address 0"
            )));
        }
        let lbs = self.logical_block_size.unwrap_or(512);
        if let Some(pbs) = self.physical_block_size {
            if pbs < lbs {
                return Err(SpecError(format!(
                    "disk spec {s:?}: pbs {pbs} is smaller than the logical block size {lbs}; expected pbs >= lbs"
                )));
            }
        }
        if self.transport == Transport::Sata && lbs != 512 {
            return Err(SpecError(format!(
                "disk spec {s:?}: lbs {lbs} on sata: QEMU's IDE disks have 512-byte logical blocks (pbs=4096 makes a 512e disk)"
            )));
        }
        if self.size % u64::from(lbs) != 0 {
            return Err(SpecError(format!(
                "disk spec {s:?}: size {} is not a multiple of the logical block size {lbs}",
                self.size
            )));
        }
        if self.link.is_some() && (self.transport != Transport::Nvme || self.nsid.is_some()) {
            return Err(SpecError(format!(
                "disk spec {s:?}: link puts an NVMe controller behind a limited root port: nvme disks without ns= only"
            )));
        }
        if self.node.is_some() && (self.transport != Transport::Nvme || self.nsid.is_some()) {
            return Err(SpecError(format!(
                "disk spec {s:?}: node applies to nvme disks of a controller of their own (no ns=)"
            )));
        }
        if self.transport != Transport::Nvme && self.nsid.is_some() {
            return Err(SpecError(format!("disk spec {s:?}: ns applies to nvme disks only")));
        }
        if let Some(z) = self.zns {
            if self.transport != Transport::Nvme || self.nsid.is_none() {
                return Err(SpecError(format!(
                    "disk spec {s:?}: zone_size, zone_capacity, max_open and max_active make a zoned NVMe namespace: nvme disks with ns= only"
                )));
            }
            if z.zone_size == 0 || z.zone_size % u64::from(lbs) != 0 || self.size % z.zone_size != 0 {
                return Err(SpecError(format!(
                    "disk spec {s:?}: zone_size {} must be a positive multiple of the logical block size {lbs} dividing the size {}",
                    z.zone_size, self.size
                )));
            }
            if z.zone_capacity > z.zone_size || z.zone_capacity % u64::from(lbs) != 0 {
                return Err(SpecError(format!(
                    "disk spec {s:?}: zone_capacity {} must be a multiple of the logical block size {lbs} at most zone_size {}",
                    z.zone_capacity, z.zone_size
                )));
            }
        }
        if let Some(m) = &self.model {
            // An ATA model holds 40 characters, a SCSI INQUIRY product 16.
            let max = if scsi { 16 } else { 40 };
            if m.len() > max || m.contains(',') || !m.is_ascii() {
                return Err(SpecError(format!(
                    "model {m:?}: at most {max} ASCII characters on {}, no commas",
                    self.transport.name()
                )));
            }
        }
        Ok(())
    }
}

impl DiskSpec {
    /// The backing file: the given one, or `<dir>/<name>.img`.
    pub fn backing_file(&self, dir: &Path) -> PathBuf {
        self.file
            .clone()
            .unwrap_or_else(|| dir.join(format!("{}.img", self.name())))
    }

    /// The disk's name among the disks of a boot: its serial, and for a
    /// namespace of a shared NVMe controller `<serial>-ns<N>`.
    pub fn name(&self) -> String {
        match self.nsid {
            Some(n) => format!("{}-ns{n}", self.serial),
            None => self.serial.clone(),
        }
    }
}

/// The default set for `make qemu`: two SATA disks with serials and models,
/// one NVMe, one virtio, each throttled to a different rate (40, 20, 30,
/// 10 MiB/s) so their figures differ.
pub fn default_disks() -> Vec<DiskSpec> {
    [
        "sata,size=256M,serial=BB-SATA-0001,model=BOOTBENCH SATA HDD 1,rotation=7200,bps=40M",
        "sata,size=256M,serial=BB-SATA-0002,model=BOOTBENCH SATA SSD 2,rotation=1,bps=20M",
        "nvme,size=256M,serial=BB-NVME-0001,bps=30M",
        "virtio,size=256M,serial=BB-VIRTIO-0001,bps=10M",
    ]
    .iter()
    .map(|s| s.parse().expect("the default disk specs are valid"))
    .collect()
}

/// Make `path` a sparse file of exactly `size` bytes if it does not exist;
/// an existing file is left as it is (its contents are the disk).
pub fn create_sparse(path: &Path, size: u64) -> io::Result<()> {
    match File::options().write(true).create_new(true).open(path) {
        Ok(f) => f.set_len(size),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// blkdebug's config file for `faults`: one `[inject-error]` section each.
pub fn blkdebug_config(faults: &[Fault]) -> String {
    let mut out = String::new();
    for f in faults {
        out.push_str("[inject-error]\n");
        out.push_str(&format!("event = \"{}\"\nerrno = \"{}\"\n", f.event, f.errno));
        if let Some(sector) = f.sector {
            out.push_str(&format!("sector = \"{sector}\"\n"));
        }
        if let Some(t) = &f.iotype {
            out.push_str(&format!("iotype = \"{t}\"\n"));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_shared_rules() {
        let cases: &[(&str, Option<u64>)] = &[
            ("4096", Some(4096)),
            ("64K", Some(64 << 10)),
            ("256M", Some(256 << 20)),
            ("256MiB", Some(256 << 20)),
            ("1G", Some(1 << 30)),
            ("20M", Some(20_971_520)),
            // Spellings only bench_core::vocab::size took before: disk specs follow the config's rules.
            ("16KiB", Some(16 << 10)),
            ("1MB", Some(1_000_000)),
            ("2b", Some(1024)),
            ("", None),
            ("M", None),
            ("12X", None),
            ("256m", None),
            ("99999999999999G", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_size("size", text).ok(), *want, "{text:?}");
        }
        let d: DiskSpec = "virtio,serial=V,size=512kB,bps=16KiB".parse().unwrap();
        assert_eq!((d.size, d.throttle.bps_total), (512_000, Some(16 << 10)));
        let err = "virtio,serial=V,bps=12X".parse::<DiskSpec>().unwrap_err();
        assert!(
            err.0.contains("bps \"12X\" is not a size") && err.0.contains(bench_core::vocab::size::EXPECTED),
            "{err}"
        );
    }

    #[test]
    fn full_spec_parses() {
        let d: DiskSpec =
            "ahci,size=128M,serial=SN-1,model=ACME Disk,rotation=7200,bps=20M,iops=100,fault=read_aio:5:8192,file=/x.img"
                .parse()
                .unwrap();
        assert_eq!(d.transport, Transport::Sata);
        assert_eq!(d.size, 128 << 20);
        assert_eq!(d.serial, "SN-1");
        assert_eq!(d.model.as_deref(), Some("ACME Disk"));
        assert_eq!(d.rotation_rate, Some(7200));
        assert_eq!(
            d.throttle,
            Throttle {
                bps_total: Some(20 << 20),
                iops_total: Some(100)
            }
        );
        assert_eq!(
            d.faults,
            vec![Fault {
                event: "read_aio".into(),
                errno: 5,
                sector: Some(8192),
                iotype: None,
            }]
        );
        assert_eq!(d.file, Some(PathBuf::from("/x.img")));
    }

    #[test]
    fn bad_specs_say_why() {
        let cases: &[(&str, &str)] = &[
            ("floppy,serial=A", "transport"),
            ("nvme", "serial"),
            ("nvme,serial=has space", "serial"),
            ("nvme,serial=A,model=X", "sata and SCSI"),
            ("sata,serial=A,size=1000", "multiple of 512"),
            ("sata,serial=A,colour=red", "unknown key"),
            ("sata,serial=A,bps", "key=value"),
            ("sata,serial=A,fault=read_aio", "errno"),
            ("sata,serial=A,fault=read-aio:5", "EVENT"),
            ("sata,serial=A,iops=lots", "iops"),
            ("virtio,serial=A,model=X", "sata and SCSI"),
            ("megasas,serial=A,model=SEVENTEEN-LETTERS", "at most 16"),
            ("nvme,serial=A,lbs=1000", "power of two"),
            ("nvme,serial=A,lbs=256", "power of two"),
            ("nvme,serial=A,lbs=4096,pbs=512", "pbs 512 is smaller"),
            ("sata,serial=A,lbs=4096", "512-byte logical blocks"),
            (
                "nvme,serial=A,size=66048,lbs=4096",
                "not a multiple of the logical block size 4096",
            ),
            ("scsi,serial=A", "transport"),
            ("mptsas,serial=A", "needs wwn="),
            ("mptsas,serial=A,wwn=0", "16 hex digits"),
            ("mptsas,serial=A,wwn=0000000000000000", "not all zero"),
            ("mptsas,serial=A,wwn=5000c50015ea71azz", "16 hex digits"),
            ("nvme,serial=A,wwn=5000c50015ea71ac", "SCSI"),
        ];
        for (spec, needle) in cases {
            let err = spec.parse::<DiskSpec>().expect_err(spec);
            assert!(err.0.contains(needle), "{spec}: {err}");
        }
    }

    #[test]
    fn scsi_transports_and_block_sizes_parse() {
        let cases: &[(&str, Transport, Option<&str>)] = &[
            ("virtio-scsi", Transport::VirtioScsi, Some("virtio-scsi-pci")),
            ("megasas", Transport::Megasas, Some("megasas-gen2")),
            ("megasas-gen2", Transport::Megasas, Some("megasas-gen2")),
            ("mptsas", Transport::Mptsas, Some("mptsas1068")),
            ("mptsas1068", Transport::Mptsas, Some("mptsas1068")),
            ("lsi", Transport::Lsi, Some("lsi53c895a")),
            ("lsi53c895a", Transport::Lsi, Some("lsi53c895a")),
            ("uas", Transport::Uas, Some("usb-uas")),
            ("usb-uas", Transport::Uas, Some("usb-uas")),
        ];
        for (name, t, ctl) in cases {
            let d: DiskSpec = format!("{name},serial=S,wwn=5000c50015ea71ac").parse().unwrap();
            assert_eq!(d.wwn, Some(0x5000_c500_15ea_71ac), "{name}");
            assert_eq!(d.transport, *t, "{name}");
            assert_eq!(d.transport.scsi_controller(), *ctl, "{name}");
            assert_eq!(
                d.transport.name().parse::<Transport>(),
                Ok(*t),
                "{name}: its name parses back"
            );
        }
        let d: DiskSpec = "megasas,serial=M1,model=E2E MEGARAID,rotation=1".parse().unwrap();
        assert_eq!((d.model.as_deref(), d.rotation_rate), (Some("E2E MEGARAID"), Some(1)));
        let d: DiskSpec = "nvme,serial=N,lbs=4k,pbs=4096".parse().unwrap();
        assert_eq!((d.logical_block_size, d.physical_block_size), (Some(4096), Some(4096)));
        let d: DiskSpec = "sata,serial=E,pbs=4096".parse().unwrap();
        assert_eq!(
            (d.logical_block_size, d.physical_block_size),
            (None, Some(4096)),
            "512e"
        );
        let d: DiskSpec = "virtio-scsi,serial=V".parse().unwrap();
        assert_eq!((d.logical_block_size, d.physical_block_size), (None, None));
    }

    #[test]
    fn guest_serials_take_any_text_percent_escaped() {
        let d: DiskSpec = "usb,serial=F1,guest_serial=a b%0Ac%2Cd%25e=f".parse().unwrap();
        assert_eq!(d.serial, "F1", "the backing file's name");
        assert_eq!(d.guest_serial.as_deref(), Some("a b\nc,d%e=f"));
        assert_eq!(d.backing_file(Path::new("/d")), PathBuf::from("/d/F1.img"));
        for bad in [
            "usb,serial=F,guest_serial=",
            "usb,serial=F,guest_serial=%0",
            "usb,serial=F,guest_serial=%zz",
            "usb,serial=F,guest_serial=%00",
            "usb,serial=F,guest_serial=%ff",
        ] {
            assert!(bad.parse::<DiskSpec>().is_err(), "{bad}");
        }
        assert_eq!(percent_decode("%c3%a9").unwrap(), "é");
    }

    #[test]
    fn defaults_differ_in_rate_and_serial() {
        let disks = default_disks();
        let transports: Vec<_> = disks.iter().map(|d| d.transport).collect();
        assert_eq!(
            transports,
            [Transport::Sata, Transport::Sata, Transport::Nvme, Transport::Virtio]
        );
        let mut rates: Vec<_> = disks.iter().map(|d| d.throttle.bps_total.unwrap()).collect();
        rates.sort_unstable();
        rates.dedup();
        assert_eq!(rates.len(), disks.len());
        let mut serials: Vec<_> = disks.iter().map(|d| d.serial.clone()).collect();
        serials.dedup();
        assert_eq!(serials.len(), disks.len());
        assert!(disks[..2].iter().all(|d| d.model.is_some()));
    }

    #[test]
    fn sparse_file_has_size_and_is_kept() {
        let dir = std::env::temp_dir().join(format!("bbq-sparse-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("d.img");
        create_sparse(&p, 64 << 20).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 64 << 20);
        create_sparse(&p, 1 << 20).unwrap();
        assert_eq!(
            std::fs::metadata(&p).unwrap().len(),
            64 << 20,
            "an existing disk is not resized"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn blkdebug_sections() {
        let faults = [
            Fault {
                event: "read_aio".into(),
                errno: 5,
                sector: Some(8192),
                iotype: None,
            },
            "write_aio:28".parse().unwrap(),
            "read_aio:5:8:read".parse().unwrap(),
        ];
        assert_eq!(
            blkdebug_config(&faults),
            "[inject-error]\nevent = \"read_aio\"\nerrno = \"5\"\nsector = \"8192\"\n\n\
             [inject-error]\nevent = \"write_aio\"\nerrno = \"28\"\n\n\
             [inject-error]\nevent = \"read_aio\"\nerrno = \"5\"\nsector = \"8\"\niotype = \"read\"\n\n"
        );
        for bad in ["read_aio:5:8:reads", "read_aio:5:8:read:x"] {
            assert!(bad.parse::<Fault>().is_err(), "{bad}");
        }
    }
}
