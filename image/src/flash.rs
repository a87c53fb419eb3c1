//! `bootbench-image flash`: the stick image onto a USB stick or an SD card, the step of the whole
//! journey most likely to destroy data when left to `dd`. Before anything is written the device
//! is looked at ([`refusals`]): its bus, whether it or a partition is mounted, in use as swap or
//! by md/dm, whether it is the disk this system booted from, its size, and what its partitions
//! hold (the signature scan PID 1 uses, [`bench_core::device::signatures`]; a FAT or exFAT is listed). Then
//! it is written through an exclusive descriptor, synced, and read back with O_DIRECT (past the
//! page cache) and compared ([`write_and_verify`]).
//!
//! Everything is read from `/sys` and `/proc` through paths the caller gives, so the decisions
//! are tested on fake trees; the writing is tested on loop devices.

use std::fmt;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use bench_core::device::signatures::{self, Regions};

/// The largest device taken for a stick without `--force`, bytes: 256 GB (10^9).
pub const MAX_SIZE: u64 = 256_000_000_000;

/// How a disk is attached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bus {
    Usb,
    /// An SD or MMC card (`mmcblk*`, or an SD reader on an MMC host).
    Mmc,
    /// Anything else, by what its sysfs path says (`ata`, `nvme`, `virtual` ...).
    Other(String),
}

impl fmt::Display for Bus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bus::Usb => write!(f, "USB"),
            Bus::Mmc => write!(f, "SD/MMC"),
            Bus::Other(o) => write!(f, "{o}"),
        }
    }
}

/// A whole-disk block device as sysfs tells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    /// `sdb`, `mmcblk0`, `loop3`.
    pub name: String,
    /// Its node: `/dev/sdb`.
    pub path: PathBuf,
    /// Bytes.
    pub size: u64,
    pub bus: Bus,
    /// Vendor and model, as sysfs has them.
    pub model: Option<String>,
    pub serial: Option<String>,
    /// `major:minor`.
    pub dev: String,
    /// Its partitions: name and `major:minor`.
    pub partitions: Vec<(String, String)>,
}

fn read_trim(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The bus of the disk whose sysfs device path (the link target of `class/block/NAME`) is `link`.
pub fn bus_of(name: &str, link: &str) -> Bus {
    if link.contains("/usb") {
        Bus::Usb
    } else if name.starts_with("mmcblk") || link.contains("/mmc_host/") || link.contains("/mmc") {
        Bus::Mmc
    } else if link.contains("/virtual/") {
        Bus::Other("virtual (a loop, RAM or md/dm device)".to_string())
    } else if link.contains("/nvme/") {
        Bus::Other("NVMe".to_string())
    } else if link.contains("/ata") {
        Bus::Other("SATA/ATA".to_string())
    } else {
        Bus::Other("not USB".to_string())
    }
}

/// The whole disk `name` under `sys` (`class/block/NAME`), or why not (absent, a partition).
pub fn device(sys: &Path, name: &str) -> Result<Device, String> {
    let dir = sys.join("class/block").join(name);
    if !dir.exists() {
        return Err(format!("/dev/{name}: no such block device"));
    }
    if dir.join("partition").exists() {
        let disk = std::fs::canonicalize(&dir)
            .ok()
            .and_then(|p| {
                p.parent()
                    .and_then(|d| d.file_name())
                    .map(|n| n.to_string_lossy().into_owned())
            })
            .unwrap_or_else(|| "its disk".to_string());
        return Err(format!(
            "/dev/{name} is a partition; the image holds a partition table: give the whole disk, /dev/{disk}"
        ));
    }
    let link = std::fs::read_link(&dir)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let sectors: u64 = read_trim(&dir.join("size")).and_then(|s| s.parse().ok()).unwrap_or(0);
    let model = match (
        read_trim(&dir.join("device/vendor")),
        read_trim(&dir.join("device/model")),
    ) {
        (Some(v), Some(m)) => Some(format!("{v} {m}")),
        (None, m) => m,
        (v, None) => v,
    };
    let serial = read_trim(&dir.join("device/serial")).or_else(|| read_trim(&dir.join("serial")));
    let mut partitions: Vec<(String, String)> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().join("partition").exists())
                .map(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    (n, read_trim(&e.path().join("dev")).unwrap_or_default())
                })
                .collect()
        })
        .unwrap_or_default();
    partitions.sort();
    Ok(Device {
        name: name.to_string(),
        path: PathBuf::from("/dev").join(name),
        size: sectors * 512,
        bus: bus_of(name, &link),
        model,
        serial,
        dev: read_trim(&dir.join("dev")).unwrap_or_default(),
        partitions,
    })
}

/// The device a path names: `/dev/sdb` (or a link to it, `/dev/disk/by-id/...`) by its name.
pub fn name_of(path: &Path) -> Result<String, String> {
    let real = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    real.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| format!("{}: not a device", path.display()))
}

/// The USB and SD/MMC disks under `sys` with a size: the candidates when no device is named.
pub fn candidates(sys: &Path) -> Vec<Device> {
    let mut names: Vec<String> = std::fs::read_dir(sys.join("class/block"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
        .iter()
        .filter_map(|n| device(sys, n).ok())
        .filter(|d| matches!(d.bus, Bus::Usb | Bus::Mmc) && d.size > 0)
        .collect()
}

/// One mount: the `major:minor` of its source and where it is mounted.
fn mounts(mountinfo: &str) -> Vec<(String, String)> {
    // mountinfo(5): ID PARENT MAJ:MIN ROOT MOUNTPOINT ...; the mount point's octal escapes kept.
    mountinfo
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some(((*f.get(2)?).to_string(), (*f.get(4)?).to_string()))
        })
        .collect()
}

/// The `major:minor` of the disks beneath the block device `name` (itself when it is a disk;
/// a partition's disk; through md and dm `slaves` down to the disks).
pub fn disks_beneath(sys: &Path, name: &str) -> Vec<String> {
    let dir = sys.join("class/block").join(name);
    let slaves: Vec<String> = std::fs::read_dir(dir.join("slaves"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    if !slaves.is_empty() {
        return slaves.iter().flat_map(|s| disks_beneath(sys, s)).collect();
    }
    if dir.join("partition").exists() {
        let disk = std::fs::canonicalize(&dir).ok().and_then(|p| {
            p.parent()
                .and_then(|d| d.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        });
        return disk.map(|d| disks_beneath(sys, &d)).unwrap_or_default();
    }
    read_trim(&dir.join("dev")).into_iter().collect()
}

/// The block device name of `major:minor` under `sys` (`dev/block/MAJ:MIN`).
fn name_of_dev(sys: &Path, dev: &str) -> Option<String> {
    std::fs::canonicalize(sys.join("dev/block").join(dev))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
}

/// What a partition (or a whole disk without a table) holds, as far as the check is concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Contents {
    /// No signature: nothing a user would lose by name.
    Nothing,
    /// A FAT or exFAT whose root directory holds these names (none: an empty one, as sticks
    /// come); a bootbench stick's `results/` counted apart.
    Fat {
        kind: &'static str,
        names: Vec<String>,
        results: usize,
    },
    /// Another data structure libblkid knows (its files are not listed here).
    Other(Vec<String>),
    /// It could not be read.
    Unreadable(String),
}

/// Names a FAT or exFAT root directory holds that say nothing of the user's files.
fn ignorable(name: &str) -> bool {
    matches!(
        name,
        "System Volume Information" | ".Trashes" | ".fseventsd" | ".Spotlight-V100"
    )
}

/// Why writing the image onto `d` would be wrong, each a sentence naming what was found; empty
/// when nothing speaks against it. `mountinfo` and `swaps` are `/proc/self/mountinfo` and
/// `/proc/swaps`; `contents` tells what a partition (a device path) holds.
pub fn refusals(
    d: &Device,
    sys: &Path,
    mountinfo: &str,
    swaps: &str,
    contents: &dyn Fn(&Path) -> Contents,
) -> Vec<String> {
    let mut why = Vec::new();
    let disk = d.path.display();
    if !matches!(d.bus, Bus::Usb | Bus::Mmc) {
        why.push(format!(
            "{disk} is not on a USB or SD/MMC bus ({}): an internal disk?",
            d.bus
        ));
    }
    let mine: Vec<(String, String)> = std::iter::once((d.name.clone(), d.dev.clone()))
        .chain(d.partitions.iter().cloned())
        .collect();
    let mut root_disks = Vec::new();
    for (dev, at) in mounts(mountinfo) {
        if let Some((name, _)) = mine.iter().find(|(_, m)| *m == dev) {
            why.push(format!("/dev/{name} is mounted at {at}: unmount it first"));
        }
        if matches!(at.as_str(), "/" | "/boot" | "/boot/efi" | "/usr") {
            if let Some(name) = name_of_dev(sys, &dev) {
                for beneath in disks_beneath(sys, &name) {
                    root_disks.push((beneath, at.clone(), name.clone()));
                }
            }
        }
    }
    if let Some((_, at, name)) = root_disks.iter().find(|(dev, _, _)| *dev == d.dev) {
        why.push(format!(
            "{disk} is the disk this system runs from ({at} is on /dev/{name})"
        ));
    }
    for line in swaps.lines().skip(1) {
        let Some(p) = line.split_whitespace().next() else {
            continue;
        };
        if let Some(name) = p.strip_prefix("/dev/") {
            if mine.iter().any(|(n, _)| n == name) {
                why.push(format!("{p} is in use as swap"));
            }
        }
    }
    for (name, _) in &mine {
        let holders: Vec<String> = std::fs::read_dir(sys.join("class/block").join(name).join("holders"))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        if !holders.is_empty() {
            why.push(format!(
                "/dev/{name} is in use by {} (md or device-mapper)",
                holders.join(", ")
            ));
        }
    }
    if d.size > MAX_SIZE {
        why.push(format!(
            "{disk} is {:.1} GB: larger than a stick ({} GB at most; GB = 10^9 B)",
            d.size as f64 / 1e9,
            MAX_SIZE / 1_000_000_000
        ));
    }
    let parts: Vec<PathBuf> = if d.partitions.is_empty() {
        vec![d.path.clone()]
    } else {
        d.partitions
            .iter()
            .map(|(n, _)| PathBuf::from("/dev").join(n))
            .collect()
    };
    for p in parts {
        match contents(&p) {
            Contents::Nothing => {}
            Contents::Fat { names, .. } if names.iter().all(|n| ignorable(n)) => {}
            Contents::Fat { kind, names, results } => {
                let shown: Vec<&str> = names.iter().take(6).map(String::as_str).collect();
                let more = if names.len() > shown.len() { ", ..." } else { "" };
                let bootbench = if results > 0 {
                    format!("; a bootbench stick with {results} result(s) in results/: copy them first")
                } else {
                    String::new()
                };
                why.push(format!(
                    "{} holds a {kind} filesystem with {} file(s) and folder(s) ({}{more}){bootbench}",
                    p.display(),
                    names.len(),
                    shown.join(", ")
                ));
            }
            Contents::Other(what) => why.push(format!(
                "{} holds {} (its files are not listed here)",
                p.display(),
                what.join(", ")
            )),
            Contents::Unreadable(e) => why.push(format!("{} cannot be read to see what it holds: {e}", p.display())),
        }
    }
    why
}

/// What the device (or partition) at `path` holds: the signature scan of PID 1, then, for a
/// FAT or an exFAT, its root directory.
pub fn read_contents(path: &Path) -> Contents {
    let mut f = match File::open(path) {
        Ok(f) => f,
        Err(e) => return Contents::Unreadable(e.to_string()),
    };
    let size = match f.seek(SeekFrom::End(0)) {
        Ok(s) => s,
        Err(e) => return Contents::Unreadable(e.to_string()),
    };
    let mut parts: Vec<(u64, Vec<u8>)> = Vec::new();
    for (start, len) in signatures::read_plan(size) {
        let mut buf = vec![0u8; usize::try_from(len).unwrap_or(0)];
        if let Err(e) = f.seek(SeekFrom::Start(start)).and_then(|_| f.read_exact(&mut buf)) {
            return Contents::Unreadable(e.to_string());
        }
        parts.push((start, buf));
    }
    let found = signatures::scan(&Regions::new(
        size,
        512,
        parts.iter().map(|(s, b)| (*s, b.as_slice())).collect(),
    ));
    if found.is_empty() {
        return Contents::Nothing;
    }
    let head = &parts[0].1;
    if found.iter().any(|s| s.what.starts_with("exFAT")) {
        return match exfat_root(&mut f, head) {
            Ok(names) => Contents::Fat {
                kind: "exFAT",
                names,
                results: 0,
            },
            Err(e) => Contents::Unreadable(format!("its exFAT: {e}")),
        };
    }
    if found
        .iter()
        .any(|s| s.what.starts_with("FAT") || s.what.starts_with("vfat"))
    {
        return match crate::stick::fat_root(path) {
            Ok((names, results)) => Contents::Fat {
                kind: "FAT",
                names,
                results,
            },
            Err(e) => Contents::Unreadable(format!("its FAT: {e}")),
        };
    }
    let mut what: Vec<String> = found.iter().map(|s| s.what.to_string()).collect();
    what.dedup();
    Contents::Other(what)
}

/// The names in an exFAT's root directory (its first cluster; a root longer than one cluster is
/// never an empty one), from the boot sector `head`.
fn exfat_root(f: &mut File, head: &[u8]) -> std::io::Result<Vec<String>> {
    let bad = |w: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, w.to_string());
    let u32_at = |at: usize| u32::from_le_bytes([head[at], head[at + 1], head[at + 2], head[at + 3]]);
    let (sector_shift, cluster_shift) = (u32::from(head[108]), u32::from(head[109]));
    if !(9..=12).contains(&sector_shift) || cluster_shift > 25 - sector_shift {
        return Err(bad("boot sector geometry"));
    }
    let sector = 1u64 << sector_shift;
    let cluster = sector << cluster_shift;
    let heap = u64::from(u32_at(88)) * sector;
    let root = u64::from(u32_at(96));
    if root < 2 {
        return Err(bad("root directory cluster"));
    }
    let mut dir = vec![0u8; usize::try_from(cluster.min(1 << 20)).unwrap_or(4096)];
    f.seek(SeekFrom::Start(heap + (root - 2) * cluster))?;
    f.read_exact(&mut dir)?;
    let mut names = Vec::new();
    let entries: Vec<&[u8]> = dir.chunks_exact(32).collect();
    let mut i = 0;
    while i < entries.len() {
        let e = entries[i];
        match e[0] {
            0x00 => break,
            // A file or directory: its secondary count, then the stream and name entries.
            0x85 => {
                let secondary = usize::from(e[1]);
                let mut units: Vec<u16> = Vec::new();
                for n in entries.iter().skip(i + 1).take(secondary) {
                    if n[0] == 0xC1 {
                        units.extend(n[2..32].chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])));
                    }
                }
                let name = String::from_utf16_lossy(&units).trim_end_matches('\0').to_string();
                names.push(name);
                i += 1 + secondary;
            }
            _ => i += 1,
        }
    }
    Ok(names)
}

/// What [`write_and_verify`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    /// Bytes written and read back equal.
    pub bytes: u64,
    /// The CRC-32 of both.
    pub crc32: u32,
}

/// Write `image` onto the device at `path`, opened exclusively (the kernel refuses while it or
/// a partition is mounted or held), sync it, then read it back with O_DIRECT and compare.
/// `progress(done, total)` is called after each chunk written and read.
pub fn write_and_verify(
    image: &[u8],
    path: &Path,
    progress: &mut dyn FnMut(&str, u64, u64),
) -> Result<Verified, String> {
    const CHUNK: usize = 4 << 20;
    let total = image.len() as u64;
    let shown = path.display();
    let mut dev = File::options()
        .write(true)
        .custom_flags(libc::O_EXCL)
        .open(path)
        .map_err(|e| format!("{shown}: cannot open it for writing alone: {e}"))?;
    let size = dev.seek(SeekFrom::End(0)).map_err(|e| format!("{shown}: {e}"))?;
    if size < total {
        return Err(format!("{shown} is {size} B, smaller than the image's {total} B"));
    }
    dev.seek(SeekFrom::Start(0)).map_err(|e| format!("{shown}: {e}"))?;
    let mut done = 0u64;
    for chunk in image.chunks(CHUNK) {
        dev.write_all(chunk)
            .map_err(|e| format!("{shown}: writing at byte {done}: {e}"))?;
        done += chunk.len() as u64;
        progress("written", done, total);
    }
    dev.sync_all().map_err(|e| format!("{shown}: syncing: {e}"))?;
    drop(dev);
    // Read back past the page cache: O_DIRECT wants a buffer aligned to the logical block.
    let mut back = File::options()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .map_err(|e| format!("{shown}: cannot open it to read back: {e}"))?;
    let mut raw = vec![0u8; CHUNK + 4096];
    let skew = (4096 - (raw.as_ptr() as usize % 4096)) % 4096;
    let buf = &mut raw[skew..skew + CHUNK];
    let mut crc = crc32fast::Hasher::new();
    let mut at = 0usize;
    while at < image.len() {
        let want = (image.len() - at).min(CHUNK);
        let whole = want.div_ceil(4096) * 4096;
        back.read_exact(&mut buf[..whole])
            .map_err(|e| format!("{shown}: reading back at byte {at}: {e}"))?;
        if buf[..want] != image[at..at + want] {
            let first = buf[..want]
                .iter()
                .zip(&image[at..at + want])
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            return Err(format!(
                "{shown}: read back differs at byte {}: the device does not keep what was written (a fake or failing stick?)",
                at + first
            ));
        }
        crc.update(&buf[..want]);
        at += want;
        progress("read back", at as u64, total);
    }
    Ok(Verified {
        bytes: total,
        crc32: crc.finalize(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(root: &Path, parts: &[(&str, &str)]) {
        for (rel, content) in parts {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
    }

    /// A fake sysfs with a USB stick sdb (sdb1), an internal SATA disk sda (sda1, sda2), an
    /// NVMe disk holding an md member, and an SD card.
    fn fake_sys(root: &Path) -> PathBuf {
        let sys = root.join("sys");
        let disk = |name: &str, devpath: &str, dev: &str, sectors: u64, parts: &[(&str, &str)]| {
            let d = sys.join("devices").join(devpath).join("block").join(name);
            tree(&d, &[("dev", dev), ("size", &sectors.to_string())]);
            for (p, pdev) in parts {
                tree(&d.join(p), &[("dev", pdev), ("partition", "1")]);
                std::fs::create_dir_all(d.join(p).join("holders")).unwrap();
            }
            std::fs::create_dir_all(sys.join("class/block")).unwrap();
            std::fs::create_dir_all(sys.join("dev/block")).unwrap();
            std::os::unix::fs::symlink(&d, sys.join("class/block").join(name)).unwrap();
            std::os::unix::fs::symlink(&d, sys.join("dev/block").join(dev)).unwrap();
            for (p, pdev) in parts {
                std::os::unix::fs::symlink(d.join(p), sys.join("class/block").join(p)).unwrap();
                std::os::unix::fs::symlink(d.join(p), sys.join("dev/block").join(pdev)).unwrap();
            }
            d
        };
        let sdb = disk(
            "sdb",
            "pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/host6/target6:0:0/6:0:0:0",
            "8:16",
            60_000_000,
            &[("sdb1", "8:17")],
        );
        tree(&sdb, &[("device/vendor", "SanDisk"), ("device/model", "Cruzer Blade")]);
        disk(
            "sda",
            "pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0",
            "8:0",
            1_000_000_000,
            &[("sda1", "8:1"), ("sda2", "8:2")],
        );
        disk(
            "nvme0n1",
            "pci0000:00/0000:00:1d.0/nvme/nvme0",
            "259:0",
            2_000_000_000,
            &[("nvme0n1p1", "259:1")],
        );
        disk("mmcblk0", "platform/mmc_host/mmc0/mmc0:0001", "179:0", 62_000_000, &[]);
        disk("md0", "virtual", "9:0", 1_000_000, &[]);
        std::fs::create_dir_all(sys.join("class/block/md0/slaves")).unwrap();
        std::os::unix::fs::symlink(
            sys.join("class/block/nvme0n1p1"),
            sys.join("class/block/md0/slaves/nvme0n1p1"),
        )
        .unwrap();
        std::os::unix::fs::symlink(
            sys.join("class/block/md0"),
            sys.join("class/block/nvme0n1p1/holders/md0"),
        )
        .unwrap();
        sys
    }

    const MOUNTS: &str = "\
22 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw
23 22 8:1 / /boot/efi rw - vfat /dev/sda1 rw
24 22 0:5 / /dev rw - devtmpfs udev rw
";

    #[test]
    fn devices_their_bus_and_the_candidates() {
        let t = crate::tests_tmp("flash-sys");
        let sys = fake_sys(&t);
        let sdb = device(&sys, "sdb").unwrap();
        assert_eq!(sdb.bus, Bus::Usb);
        assert_eq!(sdb.size, 60_000_000 * 512);
        assert_eq!(sdb.model.as_deref(), Some("SanDisk Cruzer Blade"));
        assert_eq!(sdb.partitions, [("sdb1".to_string(), "8:17".to_string())]);
        assert_eq!(device(&sys, "mmcblk0").unwrap().bus, Bus::Mmc);
        assert!(matches!(device(&sys, "sda").unwrap().bus, Bus::Other(b) if b.contains("SATA")));
        let e = device(&sys, "sdb1").unwrap_err();
        assert!(e.contains("is a partition") && e.ends_with("/dev/sdb"), "{e}");
        assert!(device(&sys, "sdz").unwrap_err().contains("no such block device"));
        let names: Vec<String> = candidates(&sys).into_iter().map(|d| d.name).collect();
        assert_eq!(names, ["mmcblk0", "sdb"]);
    }

    #[test]
    fn what_speaks_against_a_device_is_each_said() {
        let t = crate::tests_tmp("flash-refusals");
        let sys = fake_sys(&t);
        let nothing = |_: &Path| Contents::Nothing;
        // A USB stick, unmounted, empty: nothing against it.
        let sdb = device(&sys, "sdb").unwrap();
        assert!(refusals(&sdb, &sys, MOUNTS, "", &nothing).is_empty());
        // Mounted, swap, files, a bootbench stick's results.
        let mounted = format!("{MOUNTS}40 22 8:17 / /media/usb rw - vfat /dev/sdb1 rw\n");
        let swaps = "Filename Type Size Used Priority\n/dev/sdb1 partition 1 0 -2\n";
        let files = |_: &Path| Contents::Fat {
            kind: "FAT",
            names: vec!["DCIM".into(), "notes.txt".into(), "results".into()],
            results: 4,
        };
        let why = refusals(&sdb, &sys, &mounted, swaps, &files);
        assert_eq!(why.len(), 3, "{why:?}");
        assert_eq!(why[0], "/dev/sdb1 is mounted at /media/usb: unmount it first");
        assert_eq!(why[1], "/dev/sdb1 is in use as swap");
        assert!(
            why[2].starts_with(
                "/dev/sdb1 holds a FAT filesystem with 3 file(s) and folder(s) (DCIM, notes.txt, results)"
            ) && why[2].ends_with("a bootbench stick with 4 result(s) in results/: copy them first"),
            "{why:?}"
        );
        // An empty FAT (as sticks come) and Windows' own folder are nothing to lose.
        let empty = |_: &Path| Contents::Fat {
            kind: "exFAT",
            names: vec!["System Volume Information".into()],
            results: 0,
        };
        assert!(refusals(&sdb, &sys, MOUNTS, "", &empty).is_empty());
        // The system's own disk: not USB, and / is on it.
        let sda = device(&sys, "sda").unwrap();
        let why = refusals(&sda, &sys, MOUNTS, "", &nothing);
        assert!(
            why[0].starts_with("/dev/sda is not on a USB or SD/MMC bus (SATA/ATA)"),
            "{why:?}"
        );
        assert!(
            why.iter()
                .any(|w| w == "/dev/sda is the disk this system runs from (/ is on /dev/sda2)"),
            "{why:?}"
        );
        // Root on md over NVMe: the NVMe disk is the system's; its partition is held by md0.
        let on_md = "22 1 9:0 / / rw - ext4 /dev/md0 rw\n";
        let nvme = device(&sys, "nvme0n1").unwrap();
        let why = refusals(&nvme, &sys, on_md, "", &nothing);
        assert!(
            why.iter()
                .any(|w| w == "/dev/nvme0n1 is the disk this system runs from (/ is on /dev/md0)"),
            "{why:?}"
        );
        assert!(
            why.iter()
                .any(|w| w == "/dev/nvme0n1p1 is in use by md0 (md or device-mapper)"),
            "{why:?}"
        );
        // Too large, and another data structure.
        let big = Device {
            size: 500_107_862_016,
            ..sdb.clone()
        };
        let ext4 = |_: &Path| Contents::Other(vec!["ext2/3/4 filesystem".into()]);
        let why = refusals(&big, &sys, MOUNTS, "", &ext4);
        assert_eq!(
            why,
            [
                "/dev/sdb is 500.1 GB: larger than a stick (256 GB at most; GB = 10^9 B)",
                "/dev/sdb1 holds ext2/3/4 filesystem (its files are not listed here)"
            ]
        );
    }
}
