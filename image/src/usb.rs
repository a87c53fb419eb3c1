//! The USB stick image PID 1 boots from and writes its results to, built in memory and written as a
//! plain file: no root, no loop mounts. GPT with one EFI system partition (FAT32, or FAT16 when too
//! small), label BOOTBENCH, holding the UEFI boot loader, the kernel, the initramfs, bootbench.json
//! and results/. The UEFI loader is Debian's signed chain (shim, then GRUB; boots with Secure Boot
//! on or off) or systemd-boot (unsigned: Secure Boot refuses it). Legacy BIOS boot via syslinux
//! (gptmbr.bin + `syslinux --install --offset`) where the syslinux packages are present.

use crate::fat::{BootSector, FatType};
use crate::{fatfix, gpt};
use bench_core::boot::cmdline::Key;
use bench_core::boot::stick::{CONFIG_NAME, LABEL, RESULTS_DIR};
use std::io::{Cursor, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Kernel options: the last `console=` becomes /dev/console, so the serial port gets the results;
/// [`DRIVER_OPTIONS`] last.
pub const CMDLINE: &str = "console=tty0 console=ttyS0,115200 panic=-1 loglevel=4 nvme.poll_queues=1";
/// Driver options every boot of the image passes (USB stick, network boot, QEMU's direct boot):
/// `nvme.poll_queues=1`, one polled I/O queue per NVMe controller besides its interrupt-driven
/// ones, so that tests with `hipri` (polled completions, IORING_SETUP_IOPOLL) and polled
/// passthrough can run on NVMe drives: without poll queues the kernel refuses polled requests.
/// One, because the nvme driver refuses the whole module (`'N' invalid for parameter
/// `poll_queues'`, finit_module EINVAL: no NVMe drive at all) when N exceeds the machine's
/// possible CPUs, and every machine has one; every polling job of a drive shares that queue.
/// A later `nvme.poll_queues=N` (an extra kernel option, N at most the CPUs) wins.
pub const DRIVER_OPTIONS: &str = "nvme.poll_queues=1";
/// First LBA of the partition (1 MiB aligned).
pub const PART_START_LBA: u64 = 2048;
/// syslinux's GPT-aware MBR boot code.
pub const GPTMBR: &str = "/usr/lib/syslinux/mbr/gptmbr.bin";

/// A fixed disk GUID keeps the image reproducible (PID 1 never looks at it).
const DISK_GUID: &str = "B0075EAC-4B1E-4E5C-9D1A-000000000001";
/// FAT volume id (serial), fixed for the same reason.
const VOLUME_ID: u32 = 0xB007_BE4C;

/// Legacy BIOS boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bios {
    /// No BIOS boot code.
    Off,
    /// syslinux: this `syslinux` program and this gptmbr.bin.
    Syslinux { syslinux: PathBuf, gptmbr: Vec<u8> },
}

impl Bios {
    /// syslinux if `syslinux` is on PATH and gptmbr.bin exists; else Off and the reason.
    pub fn detect() -> (Self, Option<String>) {
        let Some(syslinux) = which("syslinux") else {
            return (
                Self::Off,
                Some("syslinux not found on PATH: legacy BIOS boot skipped".into()),
            );
        };
        match std::fs::read(GPTMBR) {
            Ok(gptmbr) => (Self::Syslinux { syslinux, gptmbr }, None),
            Err(e) => (Self::Off, Some(format!("{GPTMBR}: {e}: legacy BIOS boot skipped"))),
        }
    }
}

fn which(prog: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(prog)).find(|p| p.is_file())
}

/// The UEFI boot loader, installed at the removable-media path /EFI/BOOT/BOOTX64.EFI.
#[derive(Debug, Clone, Copy)]
pub enum Loader<'a> {
    /// systemd-boot (`systemd-bootx64.efi`) with loader/loader.conf and
    /// loader/entries/bootbench.conf. Unsigned: firmware with Secure Boot on refuses it.
    SystemdBoot(&'a [u8]),
    /// Debian's signed chain: shim (`shimx64.efi.signed`, signed by Microsoft's UEFI CA) as
    /// BOOTX64.EFI, and GRUB (`grubx64.efi.signed`, signed by Debian) beside it as grubx64.efi,
    /// which shim loads and GRUB reads its grub.cfg from the same directory. Boots with Secure
    /// Boot on (shim checks GRUB, GRUB has shim check the kernel) or off. No fbx64.efi: without
    /// it shim starts GRUB at once instead of writing boot entries into the firmware.
    Shim { shim: &'a [u8], grub: &'a [u8] },
}

impl Loader<'_> {
    /// Its files on the FAT, path and contents (the loader entries not included).
    fn binaries(&self) -> Vec<(&'static str, &[u8])> {
        match self {
            Loader::SystemdBoot(efi) => vec![("EFI/BOOT/BOOTX64.EFI", efi)],
            Loader::Shim { shim, grub } => vec![("EFI/BOOT/BOOTX64.EFI", shim), ("EFI/BOOT/grubx64.efi", grub)],
        }
    }

    /// What it is, for people.
    pub fn describe(&self) -> &'static str {
        match self {
            Loader::SystemdBoot(_) => "systemd-boot (unsigned: not for Secure Boot)",
            Loader::Shim { .. } => "shim + GRUB, signed (Secure Boot on or off)",
        }
    }
}

/// What goes on the stick.
#[derive(Debug)]
pub struct Inputs<'a> {
    /// The UEFI boot loader.
    pub loader: Loader<'a>,
    /// The kernel, /vmlinuz.
    pub vmlinuz: &'a [u8],
    /// The initramfs, /initrd.img.
    pub initrd: &'a [u8],
    /// /bootbench.json.
    pub config: &'a [u8],
    /// Extra kernel options appended to [`CMDLINE`].
    pub append: &'a str,
    /// Image size in bytes (a multiple of 512).
    pub size: u64,
}

/// Errors building the stick.
#[derive(Debug)]
pub enum UsbError {
    /// Size not a multiple of 512 or too small for the partition.
    Size(String),
    /// The FAT file system (formatting or writing; e.g. the files do not fit).
    Fat(std::io::Error),
    /// Writing the image file.
    Write { path: PathBuf, err: std::io::Error },
    /// syslinux failed.
    Syslinux(String),
}

impl std::fmt::Display for UsbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Size(m) => write!(f, "image size: {m}"),
            Self::Fat(e) => write!(f, "FAT: {e}"),
            Self::Write { path, err } => write!(f, "{}: {err}", path.display()),
            Self::Syslinux(m) => write!(f, "syslinux: {m}"),
        }
    }
}

impl std::error::Error for UsbError {}

/// The FAT partition's unique GUID (its PARTUUID), in text: derived from
/// everything the stick holds (FNV-1a over the boot loader, kernel,
/// initramfs, config and options), so a build is reproducible, and two
/// sticks of different builds or configs do not share it. PID 1 finds its
/// boot stick by the partition the boot loader says it was loaded from
/// (systemd-boot's EFI variable `LoaderDevicePartUUID`; GRUB's `probe
/// --part-uuid`, passed as `bootbench.boot_part=`), else by this id
/// (`bootbench.stick=` in the kernel options: legacy BIOS); two copies of
/// the same image do share it, and PID 1 then trusts neither.
pub fn stick_id(inputs: &Inputs<'_>) -> String {
    let binaries = inputs.loader.binaries();
    let fnv = |seed: u64| {
        let mut h = 0xcbf2_9ce4_8422_2325_u64 ^ seed;
        for part in binaries.iter().map(|(_, b)| *b).chain([
            inputs.vmlinuz,
            inputs.initrd,
            inputs.config,
            inputs.append.as_bytes(),
        ]) {
            for &b in part.iter().chain(&part.len().to_le_bytes()) {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        h
    };
    let (a, b) = (fnv(0), fnv(0x9e37_79b9_7f4a_7c15));
    // RFC 4122 version 4 and variant bits, so it reads as a random GUID.
    let a = (a & !0xf000) | 0x4000;
    let b = (b & !(0xc << 60)) | (0x8 << 60);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// [`CMDLINE`], then `words`, then `append` (trimmed): the kernel options of every boot entry
/// bootbench writes, the stick's ([`kernel_options`]) and the network's (`crate::netboot`).
pub fn options_with(words: &[&str], append: &str) -> String {
    let mut opts = String::from(CMDLINE);
    for w in words.iter().chain([&append.trim()]).filter(|w| !w.is_empty()) {
        opts.push(' ');
        opts.push_str(w);
    }
    opts
}

/// The kernel options: [`CMDLINE`], the stick's id and `append`.
pub fn kernel_options(append: &str, stick: &str) -> String {
    options_with(&[&Key::Stick.with(stick)], append)
}

/// The loader entry, for the stick whose id is `stick` ([`stick_id`]).
pub fn loader_entry(append: &str, stick: &str) -> String {
    let opts = kernel_options(append, stick);
    format!("title bootbench\nlinux /vmlinuz\ninitrd /initrd.img\noptions {opts}\n")
}

/// loader.conf: boot the entry at once, no menu, no editor.
pub const LOADER_CONF: &str = "default bootbench.conf\ntimeout 0\neditor no\n";

/// grub.cfg (beside grubx64.efi): boot at once, with the same options as the
/// loader entry plus `bootbench.boot_part=`, the PARTUUID of the partition
/// GRUB was loaded from (`probe --part-uuid` of `$root`, which GRUB sets to
/// that partition), as systemd-boot's `LoaderDevicePartUUID` says it.
///
/// `linuxefi` and `initrdefi`, not `linux` and `initrd`: Debian's GRUB
/// starts the kernel through its EFI stub (the EFI handover) only with
/// those, or with `linux` under Secure Boot; `linux` with Secure Boot off
/// jumps past the stub, and the stub is what hands the firmware's TPM event
/// log to the kernel (`TPMEventLog` in its `efi:` line). Without it PID 1
/// would find no `binary_bios_measurements` and its quote could not be
/// checked. So the stick boots the same way with Secure Boot on or off.
pub fn grub_cfg(append: &str, stick: &str) -> String {
    let opts = kernel_options(append, stick);
    let part = Key::BootPart.with("$bootbench_part");
    format!(
        "set timeout=0\nset default=0\nprobe --set=bootbench_part --part-uuid $root\n\
         menuentry \"bootbench\" {{\n  linuxefi /vmlinuz {opts} {part}\n  initrdefi /initrd.img\n}}\n"
    )
}

/// syslinux.cfg: the same kernel, initrd and options as the loader entry; syslinux's own
/// messages also on the first serial port (what serial-over-LAN shows of the boot).
pub fn syslinux_cfg(append: &str, stick: &str) -> String {
    let opts = kernel_options(append, stick);
    format!("SERIAL 0 115200\nDEFAULT bootbench\nPROMPT 0\nTIMEOUT 0\nLABEL bootbench\n  LINUX /vmlinuz\n  INITRD /initrd.img\n  APPEND {opts}\n")
}

/// The partition's last LBA: the last usable LBA rounded down so the partition ends on a MiB.
pub fn part_last_lba(total_sectors: u64) -> u64 {
    let (_, last_usable) = gpt::usable(total_sectors);
    (last_usable + 1) / PART_START_LBA * PART_START_LBA - 1
}

/// Free room left on a stick sized by [`fitted_size`] for results: a quick run of four disks
/// writes about 0.8 MB, a standard run of a 24-disk server a few MB. 10 MiB keeps the stick
/// within 32 MiB now that the initramfs carries the NIC drivers.
pub const RESULTS_ROOM: u64 = 10 << 20;
/// What syslinux adds to the FAT (ldlinux.sys and ldlinux.c32, about 120 KiB), with a margin.
const SYSLINUX_ROOM: u64 = 512 << 10;

/// The image size that holds `inputs`' files (whatever `inputs.size` says) and [`RESULTS_ROOM`]
/// free besides: the files, each rounded up to a 4 KiB cluster, the GPT and the 1 MiB alignment
/// before the partition and after it, the FATs (4 bytes per 512-byte cluster at most, twice),
/// rounded up to a MiB. For Debian's kernel, the signed chain and the initramfs (5.5 MiB with the
/// NIC drivers, zstd) it is 32 MiB.
pub fn fitted_size(inputs: &Inputs<'_>, bios: &Bios) -> u64 {
    let cluster = |n: usize| (n as u64).div_ceil(4096) * 4096 + 4096;
    let loader_cfg = 4096 * 4;
    let files: u64 = inputs
        .loader
        .binaries()
        .iter()
        .map(|(_, b)| cluster(b.len()))
        .sum::<u64>()
        + cluster(inputs.vmlinuz.len())
        + cluster(inputs.initrd.len())
        + cluster(inputs.config.len())
        + loader_cfg
        + if matches!(bios, Bios::Syslinux { .. }) {
            SYSLINUX_ROOM
        } else {
            0
        };
    let data = files + RESULTS_ROOM;
    let fats = 2 * (data / 512) * 4;
    let mib = 1 << 20;
    (2 * mib + data + fats).div_ceil(mib) * mib
}

/// FAT32 cluster size for a partition of `bytes`, or None when FAT32 needs more clusters than fit
/// (at least 65525, with a margin for the FATs) and a smaller FAT type is used.
fn fat32_cluster(bytes: u64) -> Option<u32> {
    [4096u32, 2048, 1024, 512]
        .into_iter()
        .find(|&c| bytes / u64::from(c) >= 65_525 + 2048)
}

/// Builds the image in memory (everything but syslinux's own install, which runs on the file).
pub fn build(inputs: &Inputs<'_>, bios: &Bios) -> Result<Vec<u8>, UsbError> {
    if inputs.size % gpt::SECTOR != 0 {
        return Err(UsbError::Size(format!(
            "{} is not a multiple of 512 bytes",
            inputs.size
        )));
    }
    let total = inputs.size / gpt::SECTOR;
    if total < PART_START_LBA * 4 {
        return Err(UsbError::Size(format!(
            "{} bytes is below the 4 MiB minimum",
            inputs.size
        )));
    }
    let last = part_last_lba(total);
    let size = usize::try_from(inputs.size).map_err(|_| UsbError::Size("too large for memory".into()))?;
    let mut disk = vec![0u8; size];
    let (code, attributes) = match bios {
        Bios::Off => (None, 0),
        Bios::Syslinux { gptmbr, .. } => (Some(gptmbr.as_slice()), gpt::ATTR_LEGACY_BIOS_BOOTABLE),
    };
    let stick = stick_id(inputs);
    let part = gpt::Partition {
        type_guid: gpt::guid(gpt::ESP_TYPE),
        unique_guid: gpt::guid(&stick),
        first_lba: PART_START_LBA,
        last_lba: last,
        attributes,
        name: "BOOTBENCH".into(),
    };
    gpt::write(&mut disk, &gpt::guid(DISK_GUID), &[part], code);

    #[allow(clippy::cast_possible_truncation)] // both LBAs are below total, and `size` fits usize
    let (start, end) = (
        (PART_START_LBA * gpt::SECTOR) as usize,
        ((last + 1) * gpt::SECTOR) as usize,
    );
    let part_bytes = (end - start) as u64;
    let mut opts = fatfs::FormatVolumeOptions::new()
        .volume_label(LABEL)
        .volume_id(VOLUME_ID);
    if let Some(c) = fat32_cluster(part_bytes) {
        opts = opts.fat_type(fatfs::FatType::Fat32).bytes_per_cluster(c);
    }
    let mut cursor = Cursor::new(&mut disk[start..end]);
    fatfs::format_volume(&mut cursor, opts).map_err(UsbError::Fat)?;
    cursor.seek(SeekFrom::Start(0)).map_err(UsbError::Fat)?;
    {
        let fs = fatfs::FileSystem::new(&mut cursor, fatfs::FsOptions::new()).map_err(UsbError::Fat)?;
        {
            let root = fs.root_dir();
            let put = |path: &str, data: &[u8]| -> std::io::Result<()> {
                if let Some((dir, _)) = path.rsplit_once('/') {
                    let mut d = String::new();
                    for part in dir.split('/') {
                        if !d.is_empty() {
                            d.push('/');
                        }
                        d.push_str(part);
                        root.create_dir(&d)?;
                    }
                }
                let mut f = root.create_file(path)?;
                f.truncate()?;
                f.write_all(data)?;
                f.flush()
            };
            for (path, data) in inputs.loader.binaries() {
                put(path, data).map_err(UsbError::Fat)?;
            }
            match inputs.loader {
                Loader::SystemdBoot(_) => {
                    put("loader/loader.conf", LOADER_CONF.as_bytes()).map_err(UsbError::Fat)?;
                    put(
                        "loader/entries/bootbench.conf",
                        loader_entry(inputs.append, &stick).as_bytes(),
                    )
                    .map_err(UsbError::Fat)?;
                }
                Loader::Shim { .. } => {
                    put("EFI/BOOT/grub.cfg", grub_cfg(inputs.append, &stick).as_bytes()).map_err(UsbError::Fat)?;
                }
            }
            put("vmlinuz", inputs.vmlinuz).map_err(UsbError::Fat)?;
            put("initrd.img", inputs.initrd).map_err(UsbError::Fat)?;
            put(CONFIG_NAME, inputs.config).map_err(UsbError::Fat)?;
            if matches!(bios, Bios::Syslinux { .. }) {
                put("syslinux.cfg", syslinux_cfg(inputs.append, &stick).as_bytes()).map_err(UsbError::Fat)?;
            }
            root.create_dir(RESULTS_DIR).map_err(UsbError::Fat)?;
        }
        fs.unmount().map_err(UsbError::Fat)?;
    }
    fatfix::fix_dot_entries(&mut disk[start..end]).map_err(UsbError::Fat)?;
    Ok(disk)
}

/// Writes `disk` to `path` leaving all-zero 64 KiB blocks as holes (a sparse file), then runs
/// syslinux on it when `bios` asks for it.
pub fn write_file(disk: &[u8], path: &Path, bios: &Bios) -> Result<(), UsbError> {
    let werr = |err| UsbError::Write {
        path: path.to_owned(),
        err,
    };
    let mut f = std::fs::File::create(path).map_err(werr)?;
    f.set_len(disk.len() as u64).map_err(werr)?;
    const BLOCK: usize = 64 * 1024;
    for (i, chunk) in disk.chunks(BLOCK).enumerate() {
        if chunk.iter().any(|&b| b != 0) {
            f.seek(SeekFrom::Start((i * BLOCK) as u64)).map_err(werr)?;
            f.write_all(chunk).map_err(werr)?;
        }
    }
    f.sync_all().map_err(werr)?;
    drop(f);
    if let Bios::Syslinux { syslinux, .. } = bios {
        let offset = PART_START_LBA * gpt::SECTOR;
        // syslinux copies ldlinux.sys and ldlinux.c32 in with mtools, which stamps them with the
        // current time unless SOURCE_DATE_EPOCH is set: 1980-01-01, the FAT epoch fatfs also uses.
        let out = Command::new(syslinux)
            .env("SOURCE_DATE_EPOCH", "315532800")
            .arg("--install")
            .arg("--offset")
            .arg(offset.to_string())
            .arg(path)
            .output()
            .map_err(|e| UsbError::Syslinux(format!("{}: {e}", syslinux.display())))?;
        if !out.status.success() {
            return Err(UsbError::Syslinux(format!(
                "{} exited with {}: {}",
                syslinux.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        copy_boot_sector_to_backup(path, offset).map_err(werr)?;
    }
    Ok(())
}

/// syslinux rewrites the FAT32 boot sector's code but not its backup copy; make them equal again
/// (fsck.fat compares them).
fn copy_boot_sector_to_backup(path: &Path, part_offset: u64) -> std::io::Result<()> {
    use std::io::Read;
    let mut f = std::fs::OpenOptions::new().read(true).write(true).open(path)?;
    let mut boot = [0u8; 512];
    f.seek(SeekFrom::Start(part_offset))?;
    f.read_exact(&mut boot)?;
    let fat = BootSector::read(&boot)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("the FAT after syslinux: {e}")))?;
    let backup = fat.backup_boot_sector;
    if fat.fat_type == FatType::Fat32 && backup != 0 && backup != 0xFFFF {
        f.seek(SeekFrom::Start(part_offset + backup * fat.bytes_per_sector))?;
        f.write_all(&boot)?;
        f.sync_all()?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::cast_possible_truncation)] // test images are a few MiB: their byte offsets fit usize and u32
mod tests {
    use super::*;
    use std::io::Read;

    /// The GPT header at `lba` and its entries, read back and checked.
    fn table(disk: &[u8], lba: u64) -> gpt::Table {
        gpt::read(&mut Cursor::new(disk), lba).unwrap()
    }

    fn inputs(size: u64) -> Inputs<'static> {
        Inputs {
            loader: Loader::SystemdBoot(b"MZ fake systemd-boot"),
            vmlinuz: b"fake kernel",
            initrd: b"fake initrd",
            config: b"{\"profile\": \"quick\"}\n",
            append: "bootbench.profile=quick",
            size,
        }
    }

    fn read(fs: &fatfs::FileSystem<&mut Cursor<&mut [u8]>>, path: &str) -> Vec<u8> {
        let mut out = Vec::new();
        fs.root_dir().open_file(path).unwrap().read_to_end(&mut out).unwrap();
        out
    }

    /// Checks that an image is the stick PID 1 expects (GPT, its ESP, the labelled FAT PID 1
    /// finds, the loader, kernel, initramfs, config and results/); returns the FAT type.
    fn check(mut disk: Vec<u8>, inp: &Inputs<'_>) -> fatfs::FatType {
        let total = disk.len() as u64 / 512;
        let primary = table(&disk, 1);
        let backup = table(&disk, total - 1);
        assert_eq!(primary.entries, backup.entries);
        let esp = primary.entry(0).unwrap();
        let (first, last) = (esp.first_lba, esp.last_lba);
        assert_eq!(esp.type_guid, gpt::guid(gpt::ESP_TYPE), "partition 1 is not an ESP");
        assert_eq!(first, PART_START_LBA);
        assert!(last <= primary.header.last_usable && (last + 1) % 2048 == 0);
        let part = &mut disk[(first * 512) as usize..((last + 1) * 512) as usize];
        let fat_type = {
            let boot = &part[..512];
            let fat32 = &boot[82..90] == b"FAT32   ";
            let label_off = if fat32 { 0x47 } else { 0x2B };
            assert_eq!(&boot[label_off..label_off + 11], b"BOOTBENCH  ");
            assert!(
                bench_core::boot::stick::is_bootbench_fat(boot),
                "PID 1's check does not take this boot sector for the stick's"
            );
            assert_eq!(&boot[510..512], &[0x55, 0xAA]);
            if fat32 {
                fatfs::FatType::Fat32
            } else {
                fatfs::FatType::Fat16
            }
        };
        fsck(part);
        let mut cursor = Cursor::new(part);
        let fs = fatfs::FileSystem::new(&mut cursor, fatfs::FsOptions::new()).unwrap();
        assert_eq!(fs.fat_type(), fat_type);
        assert_eq!(fs.volume_label(), "BOOTBENCH");
        for (path, data) in inp.loader.binaries() {
            assert_eq!(read(&fs, path), data, "{path}");
        }
        assert_eq!(read(&fs, "vmlinuz"), inp.vmlinuz);
        assert_eq!(read(&fs, "initrd.img"), inp.initrd);
        assert_eq!(read(&fs, "bootbench.json"), inp.config);
        let stick = stick_id(inp);
        let options = format!(
            "console=tty0 console=ttyS0,115200 panic=-1 loglevel=4 nvme.poll_queues=1 bootbench.stick={stick} \
             bootbench.profile=quick"
        );
        let exists = |p: &str| fs.root_dir().open_file(p).is_ok();
        match inp.loader {
            Loader::SystemdBoot(_) => {
                assert_eq!(read(&fs, "loader/loader.conf"), LOADER_CONF.as_bytes());
                let entry = String::from_utf8(read(&fs, "loader/entries/bootbench.conf")).unwrap();
                assert!(
                    entry.contains("linux /vmlinuz\n") && entry.contains("initrd /initrd.img\n"),
                    "{entry}"
                );
                assert!(entry.contains(&format!("options {options}\n")), "{entry}");
                assert!(!exists("EFI/BOOT/grub.cfg") && !exists("EFI/BOOT/grubx64.efi"));
            }
            Loader::Shim { .. } => {
                let cfg = String::from_utf8(read(&fs, "EFI/BOOT/grub.cfg")).unwrap();
                assert!(cfg.contains("probe --set=bootbench_part --part-uuid $root\n"), "{cfg}");
                assert!(
                    cfg.contains(&format!(
                        "  linuxefi /vmlinuz {options} bootbench.boot_part=$bootbench_part\n"
                    )),
                    "{cfg}"
                );
                assert!(
                    cfg.contains("  initrdefi /initrd.img\n") && cfg.contains("set timeout=0\n"),
                    "{cfg}"
                );
                // No fallback loader (it would write boot entries into the firmware), no systemd-boot entries.
                assert!(!exists("EFI/BOOT/fbx64.efi") && !exists("loader/loader.conf"));
            }
        }
        // The partition's unique GUID is that id.
        assert_eq!(esp.unique_guid, gpt::guid(&stick));
        let dirs: &[&str] = match inp.loader {
            Loader::SystemdBoot(_) => &["EFI", "EFI/BOOT", "loader", "loader/entries", "results"],
            Loader::Shim { .. } => &["EFI", "EFI/BOOT", "results"],
        };
        for d in dirs {
            let names: Vec<String> = fs
                .root_dir()
                .open_dir(d)
                .unwrap()
                .iter()
                .map(|e| e.unwrap().short_file_name())
                .collect();
            assert_eq!(&names[..2], [".", ".."], "{d}: . and .. are not the first entries");
        }
        let results = fs.root_dir().open_dir("results").unwrap();
        assert_eq!(
            results
                .iter()
                .filter_map(Result::ok)
                .filter(|e| !e.file_name().starts_with('.'))
                .count(),
            0
        );
        fat_type
    }

    /// `fsck.fat -n` on the partition, where dosfstools is installed: it must find nothing to fix.
    fn fsck(part: &[u8]) {
        let Some(fsck) = ["/usr/sbin/fsck.fat", "/sbin/fsck.fat"]
            .into_iter()
            .find(|p| Path::new(p).exists())
        else {
            eprintln!("fsck.fat not installed: FAT consistency check skipped");
            return;
        };
        let path = std::env::temp_dir().join(format!(
            "bootbench-image-fsck-{}-{:?}.img",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::write(&path, part).unwrap();
        let out = Command::new(fsck).arg("-n").arg(&path).output().unwrap();
        std::fs::remove_file(&path).unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "fsck.fat: {text}");
        assert_eq!(text.lines().count(), 2, "fsck.fat reported something: {text}");
    }

    #[test]
    fn every_boot_entry_gets_the_driver_options() {
        assert!(CMDLINE.ends_with(&format!(" {DRIVER_OPTIONS}")), "{CMDLINE}");
    }

    #[test]
    fn the_stick_id_is_reproducible_and_differs_with_what_the_stick_holds() {
        let a = inputs(64 << 20);
        let id = stick_id(&a);
        assert_eq!(id, stick_id(&inputs(64 << 20)), "reproducible");
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4", "version 4: {id}");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "RFC 4122 variant: {id}");
        assert_eq!(gpt::guid(&id).len(), 16, "a GUID gpt::guid reads");
        for other in [
            Inputs {
                config: b"{\"profile\": \"cdm\"}\n",
                ..inputs(64 << 20)
            },
            Inputs {
                initrd: b"another initrd",
                ..inputs(64 << 20)
            },
            Inputs {
                append: "",
                ..inputs(64 << 20)
            },
            Inputs {
                loader: Loader::Shim {
                    shim: b"MZ fake shim",
                    grub: b"MZ fake grub",
                },
                ..inputs(64 << 20)
            },
        ] {
            assert_ne!(stick_id(&other), id);
        }
        // Moving bytes between the parts changes it too.
        let shifted = Inputs {
            vmlinuz: b"fake kernelfake initrd",
            initrd: b"",
            ..inputs(64 << 20)
        };
        assert_ne!(stick_id(&shifted), id);
        assert!(syslinux_cfg("x=1", &id).contains(&format!("APPEND {CMDLINE} bootbench.stick={id} x=1\n")));
    }

    #[test]
    fn fat32_stick() {
        let inp = inputs(64 << 20);
        let disk = build(&inp, &Bios::Off).unwrap();
        assert_eq!(disk.len(), 64 << 20);
        assert_eq!(check(disk.clone(), &inp), fatfs::FatType::Fat32);
        assert_eq!(disk, build(&inp, &Bios::Off).unwrap(), "two builds differ");
    }

    #[test]
    fn the_signed_chain_goes_where_shim_and_grub_look_for_it() {
        let inp = Inputs {
            loader: Loader::Shim {
                shim: b"MZ fake shim",
                grub: b"MZ fake grub",
            },
            ..inputs(64 << 20)
        };
        check(build(&inp, &Bios::Off).unwrap(), &inp);
        // The grub and the shim are hashed into the id apart (not just their concatenation).
        let other = Inputs {
            loader: Loader::Shim {
                shim: b"MZ fake shimMZ",
                grub: b" fake grub",
            },
            ..inputs(64 << 20)
        };
        assert_ne!(stick_id(&other), stick_id(&inp));
    }

    #[test]
    fn a_fitted_stick_holds_its_files_and_room_for_results() {
        let kernel = vec![0xA5u8; 8_300_000];
        let initrd = vec![0x5Au8; 5_750_000];
        let grub = vec![0x11u8; 4_200_000];
        let shim = vec![0x22u8; 1_050_000];
        let mut inp = Inputs {
            loader: Loader::Shim {
                shim: &shim,
                grub: &grub,
            },
            vmlinuz: &kernel,
            initrd: &initrd,
            ..inputs(0)
        };
        inp.size = fitted_size(&inp, &Bios::Off);
        assert!(inp.size <= 32 << 20, "Debian's files fit in 32 MiB: {}", inp.size);
        let contents = (kernel.len() + initrd.len() + grub.len() + shim.len()) as u64;
        assert!(
            inp.size < contents + RESULTS_ROOM + (4 << 20),
            "not much more than needed: {}",
            inp.size
        );
        let mut disk = build(&inp, &Bios::Off).unwrap();
        check(disk.clone(), &inp);
        let part = &mut disk[(PART_START_LBA * 512) as usize..];
        let mut cursor = Cursor::new(part);
        let fs = fatfs::FileSystem::new(&mut cursor, fatfs::FsOptions::new()).unwrap();
        let stats = fs.stats().unwrap();
        let free = u64::from(stats.free_clusters()) * u64::from(stats.cluster_size());
        assert!(free >= RESULTS_ROOM, "{free} B free, below {RESULTS_ROOM}");
        // A bigger kernel gets a bigger stick, still with the room.
        let big = vec![0u8; 40 << 20];
        let mut inp = Inputs {
            vmlinuz: &big,
            ..inputs(0)
        };
        inp.size = fitted_size(&inp, &Bios::Off);
        assert!(inp.size > 52 << 20);
        build(&inp, &Bios::Off).unwrap();
    }

    #[test]
    fn small_stick_is_fat16() {
        let inp = inputs(16 << 20);
        assert_eq!(check(build(&inp, &Bios::Off).unwrap(), &inp), fatfs::FatType::Fat16);
    }

    #[test]
    fn bad_sizes_and_overflow() {
        assert!(matches!(build(&inputs(1000), &Bios::Off), Err(UsbError::Size(_))));
        assert!(matches!(build(&inputs(1 << 20), &Bios::Off), Err(UsbError::Size(_))));
        let big = vec![1u8; 5 << 20];
        let inp = Inputs {
            vmlinuz: &big,
            ..inputs(4 << 20)
        };
        assert!(matches!(build(&inp, &Bios::Off), Err(UsbError::Fat(_))));
    }

    #[test]
    fn syslinux_when_present() {
        let (bios, why) = Bios::detect();
        let Bios::Syslinux { gptmbr, .. } = &bios else {
            eprintln!("skipped: {}", why.unwrap_or_default());
            return;
        };
        let inp = inputs(64 << 20);
        let disk = build(&inp, &bios).unwrap();
        let path = std::env::temp_dir().join(format!("bootbench-image-test-{}.img", std::process::id()));
        write_file(&disk, &path, &bios).unwrap();
        let mut disk = std::fs::read(&path).unwrap();
        write_file(&build(&inp, &bios).unwrap(), &path, &bios).unwrap();
        assert!(std::fs::read(&path).unwrap() == disk, "two builds with syslinux differ");
        std::fs::remove_file(&path).unwrap();
        assert_eq!(&disk[..440], &gptmbr[..440.min(gptmbr.len())]);
        let esp = table(&disk, 1).entry(0).unwrap();
        assert_eq!(
            esp.attributes & gpt::ATTR_LEGACY_BIOS_BOOTABLE,
            gpt::ATTR_LEGACY_BIOS_BOOTABLE
        );
        let part = &mut disk[(PART_START_LBA * 512) as usize..];
        let mut cursor = Cursor::new(part);
        let fs = fatfs::FileSystem::new(&mut cursor, fatfs::FsOptions::new()).unwrap();
        assert!(
            fs.root_dir().open_file("ldlinux.sys").is_ok(),
            "syslinux did not install ldlinux.sys"
        );
        let cfg = String::from_utf8(read(&fs, "syslinux.cfg")).unwrap();
        assert!(cfg.contains("APPEND console=tty0 console=ttyS0,115200"), "{cfg}");
        drop(fs);
        check(disk, &inp);
    }
}
