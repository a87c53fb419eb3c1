//! `bootbench-qemu`'s command line: its clap definitions, whose doc comments
//! are its `--help` and its man pages.
//!
//! This file uses clap and std, and reaches the crate's other types through
//! `super::` (the crate root here): bootbench-man (man/) includes it with
//! `#[path]` beside stand-ins for them (man/src/qemu.rs), to write the man
//! pages without linking the QEMU code. Their parsing (`FromStr`) is not
//! in the help; `Chipset`'s values are, so its file is included as it is.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use super::chipset::Chipset;
use super::disk::DiskSpec;
use super::net::Nic;
use super::run::AccelChoice;

#[derive(Parser, Debug)]
#[command(
    name = "bootbench-qemu",
    version,
    about = "Boot bootbench in QEMU with virtual disks and collect its results"
)]
pub struct Cli {
    #[command(subcommand)]
    pub mode: Mode,
}

#[derive(Subcommand, Debug)]
pub enum Mode {
    /// Direct kernel boot: -kernel -initrd -append.
    Direct {
        #[arg(long)]
        kernel: PathBuf,
        #[arg(long)]
        initrd: PathBuf,
        /// Extra kernel command-line words (the serial console and panic=-1 are always there).
        #[arg(long, default_value = "")]
        append: String,
        /// A stick image to attach as a USB disk (so results also go to it).
        #[arg(long)]
        stick: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// Boot the USB stick image under OVMF (UEFI), as on a real server.
    Usb {
        /// The stick image (GPT, EFI system partition); results are written into it.
        #[arg(long)]
        image: PathBuf,
        /// The firmware: uefi (OVMF), secure-boot (OVMF's Secure Boot build with Microsoft's
        /// keys enrolled, on the q35 machine) or bios (SeaBIOS, the stick's syslinux).
        #[arg(long, default_value = "uefi")]
        firmware: Firmware,
        /// OVMF's code [default: OVMF_CODE_4M.fd, or OVMF_CODE_4M.secboot.fd with --firmware secure-boot].
        #[arg(long)]
        ovmf_code: Option<PathBuf>,
        /// Template of the variable store; a fresh copy is used for each boot
        /// [default: OVMF_VARS_4M.fd, or OVMF_VARS_4M.ms.fd with --firmware secure-boot].
        #[arg(long)]
        ovmf_vars: Option<PathBuf>,
        /// A kernel for the KVM probe (--accel auto); without it auto means TCG.
        #[arg(long)]
        probe_kernel: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// Boot from the network, as a rack does
    ///
    /// Network boot: the NIC's iPXE ROM (Debian's ipxe-qemu) boots from QEMU's user-mode network
    /// with restrict=on (no packet leaves the host): its DHCP hands out --bootfile, its TFTP
    /// serves DIR (`bootbench-image netboot`'s directory) as it is.
    Netboot {
        /// The directory QEMU's TFTP server serves.
        #[arg(long)]
        dir: PathBuf,
        /// The NIC: virtio (virtio-net-pci), e1000 or e1000e.
        #[arg(long, default_value = "virtio")]
        nic: Nic,
        /// An HTTP server on the host's loopback for the guest, repeatable: HOSTPORT makes the
        /// guest's 10.0.2.100:80 (then .101, ...) reach 127.0.0.1:HOSTPORT;
        /// GUESTADDR:GUESTPORT=HOSTPORT names the guest side. One socat per connection.
        #[arg(long, value_name = "HOSTPORT")]
        http: Vec<String>,
        /// The boot file QEMU's DHCP hands out, relative to DIR (pxelinux.0: PXELINUX;
        /// grubx64.efi or bootx64.efi with --firmware uefi: GRUB), or a URL iPXE fetches
        /// (http://10.0.2.100/boot.ipxe with --http: the kernel and initramfs then come over HTTP).
        #[arg(long, default_value = "boot.ipxe")]
        bootfile: String,
        /// bios (SeaBIOS) or uefi (OVMF); the NIC's iPXE ROM boots under both.
        #[arg(long, default_value = "bios")]
        firmware: Firmware,
        /// Every frame of the guest's network into this pcap file [default: OUT_DIR/net.pcap].
        #[arg(long)]
        pcap: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
}

/// The firmware of a stick boot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Firmware {
    Uefi,
    SecureBoot,
    Bios,
}

#[derive(Args, Debug)]
pub struct Common {
    /// A virtual disk: TRANSPORT[,size=256M][,serial=SN][,model=M][,rotation=RPM][,lbs=4096][,pbs=4096]
    /// [,bps=20M][,iops=N][,fault=EVENT:ERRNO[:SECTOR]][,file=PATH][,ns=N]
    /// [,zone_size=4M][,zone_capacity=3M][,max_open=N][,max_active=N] (the zone keys: an NVMe ZNS
    /// namespace, with ns=); TRANSPORT is sata (ahci), nvme, virtio, usb, virtio-scsi, megasas,
    /// mptsas, lsi or uas.
    #[arg(long = "disk", value_name = "SPEC")]
    pub disks: Vec<DiskSpec>,
    /// Add the default set: two SATA disks, one NVMe, one virtio, throttled to 40, 20, 30, 10 MiB/s.
    #[arg(long)]
    pub default_disks: bool,
    /// Where a serial port goes, repeatable: the first is COM1 (ttyS0, the
    /// console) [default: OUT_DIR/serial.log], each further one the next
    /// port (COM2 = ttyS1, where a server's BMC takes serial-over-LAN, ...).
    #[arg(long, value_name = "FILE")]
    pub serial_log: Vec<PathBuf>,
    /// Disks, logs, firmware variables and results go here.
    #[arg(long)]
    pub out_dir: PathBuf,
    /// Seconds before QEMU is killed and the run fails.
    #[arg(long, default_value_t = 900)]
    pub timeout: u64,
    /// tcg, kvm, or auto (KVM only if a short probe boot succeeds).
    #[arg(long, default_value = "tcg")]
    pub accel: AccelChoice,
    #[arg(long, default_value_t = 1024)]
    pub memory: u32,
    #[arg(long, default_value_t = 2)]
    pub cpus: u32,
    /// Print the QEMU command line and exit without booting.
    #[arg(long)]
    pub dry_run: bool,
    /// Put this file on the stick as /bootbench.json before booting (the
    /// stick image given is changed), e.g. a quick profile for a first look.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The machine's DMI serial number (what names its results, `{machine}`).
    #[arg(long, value_name = "SERIAL")]
    pub system_serial: Option<String>,
    /// The machine type: pc (i440FX + PIIX, QEMU's default) or q35 (Q35 +
    /// ICH9, PCI Express). --firmware secure-boot is always q35.
    #[arg(long, value_name = "TYPE", default_value = "pc")]
    pub machine: Chipset,
    /// Give the machine a TPM 2.0 (CRB interface), played by swtpm (Debian's
    /// swtpm package) with its state in OUT_DIR/tpm: kept between boots
    /// with the same OUT_DIR, so the machine keeps its endorsement key and
    /// bootbench's attestation key.
    #[arg(long)]
    pub tpm: bool,
}

/// The command as clap sees it (its `--help`; what bootbench-man renders).
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}
