//! `bootbench-image`'s command line: its clap definitions, whose doc
//! comments are its `--help` and its man pages.
//!
//! This file uses clap, std and bench_core only: bootbench-man (man/)
//! includes it with `#[path]` to write the man pages without linking the
//! image code.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Build bootbench's initramfs and USB stick image as plain files.
#[derive(Debug, Parser)]
#[command(name = "bootbench-image", version)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// The initramfs: /init, the module subset with modules.dep/.alias/.softdep, the default config.
    Initramfs(InitramfsArgs),
    /// Write the network boot directory
    ///
    /// The network boot directory: the kernel, the initramfs (the stick's), boot scripts for iPXE
    /// (boot.ipxe), PXELINUX (pxelinux.cfg/default) and GRUB (grub/grub.cfg), Debian's boot
    /// loaders where installed, dnsmasq.conf.example and README.txt; served as it is, it boots.
    Netboot(NetbootArgs),
    /// Write the USB stick image
    ///
    /// The USB stick image: GPT, an EFI system partition labelled BOOTBENCH with the UEFI boot
    /// loader (shim + GRUB, signed, with --shim and --grub; else systemd-boot) and syslinux.
    Usb(UsbArgs),
    /// Write the stick image onto a USB stick or SD card and check it
    ///
    /// Write the stick image onto a USB stick or SD card and read it back to check it. Refused,
    /// with each reason, unless --force: a device not on a USB or SD/MMC bus, one mounted (or a
    /// partition of it), in use as swap or by md/dm, the disk this system runs from, one larger
    /// than 256 GB, and one whose partitions hold files (a FAT or exFAT with files, listed, or any
    /// other data structure libblkid knows: the signature scan PID 1 uses). Without --device, the
    /// USB and SD/MMC disks attached are listed.
    Flash(FlashArgs),
}

// The arguments of `bootbench-image initramfs` (its help is the doc comment of `Cmd::Initramfs`).
#[derive(Debug, Args)]
pub struct InitramfsArgs {
    /// A `dpkg -x` of linux-image-<version> (holds lib/modules/<kver>/kernel/**.ko).
    #[arg(long)]
    pub kernel_dir: PathBuf,
    /// The static bootbench-init binary, installed as /init.
    #[arg(long)]
    pub init: PathBuf,
    /// /etc/bootbench.json (default: {"profile": "standard"}).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Comma-separated module names (default: the storage and network set, modset::DEFAULT_MODULES).
    #[arg(long, value_delimiter = ',')]
    pub modules: Option<Vec<String>>,
    /// A module to carry besides the set (repeat it, or separate names with commas): an
    /// out-of-tree or rarely needed driver no device asks for by modalias, with what it
    /// depends on. PID 1 loads it when the kernel command line names it
    /// (bootbench.modules=NAME[,NAME...]; its parameters as NAME.param=value).
    #[arg(long = "add-module", value_name = "NAME", value_delimiter = ',')]
    pub add_module: Vec<String>,
    /// Let a config fetched over the network (bootbench.config_url=) carry a `destructive`
    /// section: adds /etc/bootbench-network-destructive. Without it PID 1 refuses to write any
    /// disk on a network config's word, since whoever controls that URL could wipe disks.
    #[arg(long)]
    pub allow_network_destructive: bool,
    /// A PEM CA bundle (at least one CERTIFICATE) PID 1 checks HTTPS servers against:
    /// installed as /etc/bootbench-ca.pem.
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
    /// A baseline (`bootbench-report baseline`) installed as /etc/<its file name>, beside
    /// /etc/bootbench.json: the built-in config's `acceptance.baseline.file` names it.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Output file (zstd-compressed newc cpio).
    #[arg(short, long)]
    pub output: PathBuf,
}

// The arguments of `bootbench-image netboot` (its help is the doc comment of `Cmd::Netboot`).
#[derive(Debug, Args)]
pub struct NetbootArgs {
    /// A `dpkg -x` of linux-image-<version> (holds boot/vmlinuz-<kver>).
    #[arg(long)]
    pub kernel_dir: PathBuf,
    /// The initramfs, as built by `bootbench-image initramfs` (the stick's).
    #[arg(long)]
    pub initramfs: PathBuf,
    /// Where PID 1 gets its config: bootbench.config_url= (http:// or https://).
    #[arg(long, value_name = "URL")]
    pub config_url: Option<String>,
    /// Where PID 1 PUTs its results: bootbench.results_url=, with {machine}, {run} and {n}.
    #[arg(long, value_name = "TEMPLATE")]
    pub results_url: Option<String>,
    /// Extra kernel command-line words (bootbench.force=1, bootbench.ip=ADDR/PREFIX,...).
    #[arg(long, default_value = "")]
    pub append: String,
    /// Debian's signed shim, copied as bootx64.efi [default: /usr/lib/shim/shimx64.efi.signed
    /// where installed].
    #[arg(long, value_name = "FILE")]
    pub shim: Option<PathBuf>,
    /// Debian's signed network GRUB, copied as grubx64.efi [default:
    /// /usr/lib/grub/x86_64-efi-signed/grubnetx64.efi.signed where installed].
    #[arg(long, value_name = "FILE")]
    pub grub: Option<PathBuf>,
    /// The directory (created; its files replaced).
    #[arg(short, long)]
    pub output: PathBuf,
}

// The arguments of `bootbench-image usb` (its help is the doc comment of `Cmd::Usb`).
#[derive(Debug, Args)]
pub struct UsbArgs {
    /// A `dpkg -x` of linux-image-<version> (holds boot/vmlinuz-<kver>).
    #[arg(long)]
    pub kernel_dir: PathBuf,
    /// The initramfs, as built by `bootbench-image initramfs`.
    #[arg(long)]
    pub initramfs: PathBuf,
    /// Debian's signed shim (shim-signed: usr/lib/shim/shimx64.efi.signed); with --grub, the
    /// stick boots with Secure Boot on or off.
    #[arg(long, requires = "grub")]
    pub shim: Option<PathBuf>,
    /// Debian's signed GRUB (grub-efi-amd64-signed: usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed).
    #[arg(long, requires = "shim")]
    pub grub: Option<PathBuf>,
    /// Without --shim and --grub: the directory holding systemd-bootx64.efi (Debian's
    /// systemd-boot-efi; unsigned, so Secure Boot refuses it).
    #[arg(long, default_value = "/usr/lib/systemd/boot/efi", conflicts_with = "shim")]
    pub efi_dir: PathBuf,
    /// The stick's /bootbench.json, the config a user edits (default: {"profile": "standard"}).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Image size: bytes, or with dd's suffixes as in the config (`128M`, `64MiB` = 1024-based;
    /// `1GB` = 1000-based). Default: what the files need plus 10 MiB free for results,
    /// rounded up to a MiB (32 MiB with Debian's kernel and the signed chain).
    #[arg(long, value_parser = parse_size)]
    pub size: Option<u64>,
    /// Extra kernel command-line options (e.g. bootbench.profile=standard).
    #[arg(long, default_value = "")]
    pub append: String,
    /// Skip legacy BIOS boot (syslinux) even where it is installed.
    #[arg(long)]
    pub no_bios: bool,
    /// Output file.
    #[arg(short, long)]
    pub output: PathBuf,
}

// The arguments of `bootbench-image flash` (its help is the doc comment of `Cmd::Flash`).
#[derive(Debug, Args)]
pub struct FlashArgs {
    /// The stick image (`make image`: out/bootbench.img).
    pub image: PathBuf,
    /// The stick, a whole disk: /dev/sdX, /dev/mmcblkN, or a link to one (/dev/disk/by-id/...).
    #[arg(long)]
    pub device: Option<PathBuf>,
    /// Put this config on the stick as /bootbench.json in the same step: checked first against
    /// the config schema; a bad one writes nothing.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Write although the checks speak against it (each reason is still printed).
    #[arg(long)]
    pub force: bool,
}

/// `--size`: [`bench_core::vocab::size::parse_size`], the config's rules.
pub fn parse_size(s: &str) -> Result<u64, String> {
    bench_core::vocab::size::parse_size(s).map_err(|e| {
        format!(
            "{s:?} is not a size: {e}; expected {}",
            bench_core::vocab::size::EXPECTED
        )
    })
}

/// The command as clap sees it (its `--help`; what bootbench-man renders).
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}
