//! The path from the CPU to a disk's media as the document records it:
//! the PCIe links of the disk (NVMe) or of its controller (the HBA or AHCI
//! controller of a SATA or SAS disk) and of the port above each, with
//! their AER error counters; a SATA disk's negotiated speed, the speeds it
//! supports and its Phy Event Counters; a SAS disk's phys; a USB disk's
//! bus speed. Read when the disk was found and again after the run's last
//! test, so that the acceptance rules can judge a link trained low and
//! error counters that grew. Parsed by `device/link.rs`.

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

/// A disk's link, before the run and after it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// When the disk was found, before anything ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<LinkReading>,
    /// After the run's last test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<LinkReading>,
}

/// One reading of the path to a disk.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkReading {
    /// PCIe functions on the path, nearest the disk first: the NVMe
    /// controller (or the disk's HBA or AHCI controller), then the port
    /// above it; further bridges are not followed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pcie: Vec<PcieLink>,
    /// A SATA disk's link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sata: Option<SataLink>,
    /// A SAS disk's phys: those of the port it is attached by.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sas: Vec<SasPhy>,
    /// A SAS disk's own phys, from its protocol-specific port log page
    /// (18h), where it has one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sas_log: Vec<SasPhy>,
    /// A USB disk's bus.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usb: Option<UsbLink>,
    /// What could not be read, one sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

/// One PCIe function's link, from its sysfs directory.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcieLink {
    /// The PCI address (`0000:01:00.0`).
    pub address: String,
    /// Which end of the path it is.
    pub role: PcieRole,
    /// The speed the link trained at, megatransfers per second (2500 for
    /// 2.5 GT/s; `current_link_speed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_mts: Option<u32>,
    /// The width it trained at, lanes (`current_link_width`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// The fastest the function supports, megatransfers per second
    /// (`max_link_speed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_speed_mts: Option<u32>,
    /// The widest it supports, lanes (`max_link_width`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_width: Option<u32>,
    /// Its AER error counters, where the kernel exposes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aer: Option<Aer>,
}

/// Where a PCIe function is on a disk's path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PcieRole {
    /// The disk's controller: the NVMe drive, the HBA, the AHCI controller.
    #[default]
    Device,
    /// The port above it (a root port or a switch's downstream port).
    Port,
}

/// A PCIe function's AER counters: the `TOTAL_` lines of
/// `aer_dev_correctable`, `aer_dev_nonfatal` and `aer_dev_fatal`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Aer {
    /// Correctable errors (`TOTAL_ERR_COR`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correctable: Option<u64>,
    /// Non-fatal uncorrectable errors (`TOTAL_ERR_NONFATAL`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonfatal: Option<u64>,
    /// Fatal errors (`TOTAL_ERR_FATAL`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fatal: Option<u64>,
}

/// A SATA disk's link.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SataLink {
    /// The libata link (`link1`, `link2.1` behind a port multiplier).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// The negotiated speed, megabits per second (1500, 3000, 6000;
    /// `sata_spd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<u32>,
    /// The fastest the host port allows, megabits per second: its
    /// controller's (AHCI CAP.ISS, `ahci_host_caps`), lowered by a limit
    /// set on the link (`hw_sata_spd_limit`, which `libata.force` sets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_max_mbps: Option<u32>,
    /// The speeds the drive supports, megabits per second (IDENTIFY
    /// DEVICE word 76); empty when it does not say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drive_speeds_mbps: Vec<u32>,
    /// The speed the drive says it runs at (word 77).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drive_speed_mbps: Option<u32>,
    /// The SATA Phy Event Counters (general purpose log 11h), in the
    /// drive's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phy_events: Vec<PhyEvent>,
}

/// One SATA Phy Event Counter (ACS-3 9.18).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhyEvent {
    /// The counter identifier (bits 11:0; bit 15 set for a vendor's).
    pub id: u16,
    /// What it counts (`crc_errors_h2d_fis`, ...; `vendor_XXXX` for a
    /// vendor's, `counter_XXXX` for one bootbench does not know).
    pub name: String,
    /// Its value.
    pub value: u64,
    /// True when it reached its maximum and stopped counting.
    #[serde(default, skip_serializing_if = "core::ops::Not::not")]
    pub saturated: bool,
}

/// One SAS phy: from `/sys/class/sas_phy/` or from log page 18h.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SasPhy {
    /// The phy (`phy-0:0` in sysfs; its identifier, `0`, in the log page).
    pub name: String,
    /// The negotiated link rate, megabits per second (1500 to 22500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_mbps: Option<u32>,
    /// The fastest rate the phy allows, megabits per second (the
    /// hardware's, `maximum_linkrate_hw`; absent in the log page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate_mbps: Option<u32>,
    /// Invalid dwords received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_dwords: Option<u64>,
    /// Running disparity errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disparity_errors: Option<u64>,
    /// Losses of dword synchronisation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_of_dword_sync: Option<u64>,
    /// Phy reset problems.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phy_reset_problems: Option<u64>,
}

/// A USB disk's bus.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsbLink {
    /// The USB device (`2-1`).
    pub device: String,
    /// The speed it enumerated at, megabits per second (`speed`: 1.5, 12,
    /// 480, 5000, 10000, 20000; 1.5 is recorded as 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<u32>,
    /// The fastest its USB version allows (`version`, its bcdUSB: 2.00
    /// gives 480, 3.00 5000, 3.10 10000, 3.20 20000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_max_mbps: Option<u32>,
    /// The fastest its port allows: the root hub's or hub's speed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_max_mbps: Option<u32>,
}
