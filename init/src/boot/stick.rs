//! The boot stick: a FAT labelled `BOOTBENCH` in the boot sector of a
//! partition (or of a whole disk formatted without a partition table),
//! mounted vfat at /mnt/stick; it holds the user's `bootbench.json` and
//! receives `results/<machine>-<n>.json` (the names both PID 1 and
//! bootbench-image keep are in [`bench_core::boot::stick`]). Its whole disk is
//! never a benchmark target.
//!
//! Which labelled FAT is the stick ([`choose`]): the partition the machine
//! booted from, by its GPT unique GUID (PARTUUID): UEFI's systemd-boot
//! records it in the EFI variable `LoaderDevicePartUUID`; without it
//! (legacy BIOS), the image puts it on the kernel command line as
//! `bootbench.stick=`. Neither there: the one labelled FAT, if there is
//! exactly one. Several that fit (copies of one image) or none that fits a
//! known boot partition: no stick is trusted, no config is read from any,
//! the read-only default runs and the results go to the console only.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use bench_core::device::gpt;

/// Where PID 1 mounts the stick.
pub use bench_core::boot::initramfs::STICK_MOUNT as MOUNT_POINT;

pub use bench_core::boot::stick::{is_bootbench_fat, CONFIG_NAME};

/// The stick: the labelled FAT filesystem and the whole disk it is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stick {
    /// The filesystem's device (`/dev/sdb1`, or `/dev/sdb` for a disk
    /// formatted without a partition table).
    pub partition: String,
    /// The whole disk's device (`/dev/sdb`).
    pub disk: String,
    /// The partition's GPT unique GUID, lower case (`None`: no GPT entry,
    /// e.g. a disk formatted without a partition table).
    pub partuuid: Option<String>,
}

/// Every labelled stick, with the sysfs root `sys` and device directory
/// `dev` (`/sys`, `/dev`): the first 512 bytes of each `<sys>/class/block`
/// device (partitions included) read through `<dev>/<name>`.
/// Optical drives (`sr*`) are not read (no disc to spin up); devices that
/// cannot be read are passed over.
pub fn find_in(sys: &Path, dev: &Path) -> Vec<Stick> {
    let class = sys.join("class/block");
    let names = crate::disks::discover::sorted_names(&class);
    let mut out = Vec::new();
    for name in names {
        if name.starts_with("sr") {
            continue;
        }
        let node = dev.join(&name);
        let mut sector = [0u8; 512];
        let read = File::open(&node).and_then(|mut f| f.read_exact(&mut sector));
        if read.is_err() || !is_bootbench_fat(&sector) {
            continue;
        }
        // A partition's sysfs directory sits inside its disk's.
        let dir = std::fs::canonicalize(class.join(&name)).unwrap_or_else(|_| class.join(&name));
        let disk = if dir.join("partition").exists() {
            dir.parent()
                .and_then(Path::file_name)
                .map_or_else(|| name.clone(), |n| n.to_string_lossy().into_owned())
        } else {
            name.clone()
        };
        let partuuid = if disk != name {
            partition_uuid(&dir, &dev.join(&disk))
        } else {
            None
        };
        out.push(Stick {
            partition: node.to_string_lossy().into_owned(),
            disk: dev.join(disk).to_string_lossy().into_owned(),
            partuuid,
        });
    }
    out
}

/// The unique GUID of the GPT entry that starts where the partition whose
/// sysfs directory is `part_dir` starts (its `start`, in 512-byte
/// sectors), read from the disk at `disk` (its primary GPT: header at LBA
/// 1, for the disk's logical block size).
pub fn partition_uuid(part_dir: &Path, disk: &Path) -> Option<String> {
    let start_512: u64 = std::fs::read_to_string(part_dir.join("start"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let lbs: u64 = part_dir
        .parent()
        .and_then(|d| std::fs::read_to_string(d.join("queue/logical_block_size")).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(512);
    let f = File::open(disk).ok()?;
    gpt_uuid_at(&f, lbs, start_512 * 512 / lbs.max(1))
}

/// The unique GUID of the entry of the GPT on `f` (logical blocks of `lbs`
/// bytes) whose first LBA is `first_lba`: the primary table, header and
/// entries CRC-checked ([`gpt::read`]).
fn gpt_uuid_at(f: &File, lbs: u64, first_lba: u64) -> Option<String> {
    use std::os::unix::fs::FileExt;
    let table = gpt::read(lbs, 1, |at, buf| f.read_exact_at(buf, at)).ok()?;
    let (_, p) = table.partitions().find(|(_, p)| p.first_lba == first_lba)?;
    Some(gpt::guid_text(&p.unique_guid))
}

/// systemd-boot's vendor GUID: its variables are `NAME-<this>` in efivarfs.
pub const LOADER_VENDOR: &str = "4a67b082-0a4c-41cf-b6c7-440b29bb8c4f";

/// The PARTUUID of the partition the firmware loaded systemd-boot from:
/// the EFI variable `LoaderDevicePartUUID` under `efivars` (efivarfs:
/// 4 attribute bytes, then a UTF-16LE GUID text), lower case.
pub fn loader_device_partuuid(efivars: &Path) -> Option<String> {
    let raw = std::fs::read(efivars.join(format!("LoaderDevicePartUUID-{LOADER_VENDOR}"))).ok()?;
    let units: Vec<u16> = raw
        .get(4..)?
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .take_while(|&u| u != 0)
        .collect();
    let text = String::from_utf16(&units).ok()?.trim().to_ascii_lowercase();
    is_guid(&text).then_some(text)
}

/// Where [`booted_partition`] found the boot partition.
pub const BY_EFI_VARIABLE: &str = "the EFI variable LoaderDevicePartUUID";
/// The same, from GRUB.
pub const BY_GRUB: &str = "GRUB's probe --part-uuid (bootbench.boot_part= on the kernel command line)";

/// The PARTUUID of the partition the boot loader was loaded from, and who
/// says so: systemd-boot's `LoaderDevicePartUUID` under `efivars`, else
/// `boot_part` (`bootbench.boot_part=`, which the stick's grub.cfg fills in
/// from `probe --part-uuid $root`; empty or not a GUID when GRUB could not
/// tell).
pub fn booted_partition(efivars: &Path, boot_part: Option<&str>) -> Option<(String, &'static str)> {
    loader_device_partuuid(efivars)
        .map(|id| (id, BY_EFI_VARIABLE))
        .or_else(|| {
            let id = boot_part?.trim().to_ascii_lowercase();
            is_guid(&id).then_some((id, BY_GRUB))
        })
}

/// True for a GUID in text (8-4-4-4-12 hex digits).
fn is_guid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12]) && parts.iter().all(|p| p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Which labelled FAT is the boot stick.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// This one, and why it is the one.
    One(Stick, String),
    /// No labelled FAT at all.
    NoneFound,
    /// None can be trusted to be the stick the machine booted from (why);
    /// none is read or written, and none is a target.
    Untrusted(String),
}

/// Where the stick's id came from when the command line gave it (the
/// key's name is spelled here as a constant; a test holds it to
/// [`bench_core::boot::cmdline::Key::Stick`]).
const STICK_KEY_WHY: &str = "bootbench.stick= on the kernel command line";

/// Pick the stick among `sticks` (every labelled FAT) by the boot
/// partition's PARTUUID: `booted` first (the partition the boot loader says
/// it was loaded from, with where that came from: systemd-boot's EFI
/// variable, or GRUB's `probe` on the command line), else `cmdline`
/// (`bootbench.stick=`, the id the image was built with); with neither, the
/// only labelled FAT.
pub fn choose(sticks: &[Stick], booted: Option<(&str, &str)>, cmdline: Option<&str>) -> Choice {
    if sticks.is_empty() {
        return Choice::NoneFound;
    }
    let known = booted
        .map(|(id, source)| (id.to_ascii_lowercase(), source))
        .or_else(|| cmdline.map(|id| (id.to_ascii_lowercase(), STICK_KEY_WHY)));
    let all = || {
        sticks
            .iter()
            .map(|s| s.partition.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match known {
        Some((id, source)) => {
            let hits: Vec<&Stick> = sticks
                .iter()
                .filter(|s| s.partuuid.as_deref() == Some(id.as_str()))
                .collect();
            match hits.as_slice() {
                [one] => Choice::One((*one).clone(), format!("the boot partition {id}, by {source}")),
                [] => Choice::Untrusted(format!(
                    "the boot partition {id} (by {source}) is none of the FATs labelled BOOTBENCH ({})",
                    all()
                )),
                _ => Choice::Untrusted(format!(
                    "{} FATs labelled BOOTBENCH have the boot partition's id {id} (copies of one image: {}); \
                     which one the machine booted from cannot be told",
                    hits.len(),
                    hits.iter().map(|s| s.partition.as_str()).collect::<Vec<_>>().join(", ")
                )),
            }
        }
        None => match sticks {
            [one] => Choice::One(
                one.clone(),
                "the only FAT labelled BOOTBENCH (no boot partition id: no EFI variable, no bootbench.stick=)"
                    .to_string(),
            ),
            _ => Choice::Untrusted(format!(
                "{} FATs labelled BOOTBENCH ({}) and no boot partition id (no EFI variable, no bootbench.stick=) \
                 to tell which one the machine booted from",
                sticks.len(),
                all()
            )),
        },
    }
}

/// How long PID 1 waits for the stick when none is found yet but a USB
/// mass-storage interface is attached (usb-storage scans a new device after
/// its `delay_use` second, slower still on a loaded or emulated machine).
pub const STICK_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

/// The USB interfaces of the mass-storage class (`bInterfaceClass` 08) in
/// `<sys>/bus/usb/devices`.
pub fn usb_storage_interfaces(sys: &Path) -> usize {
    let devices = sys.join("bus/usb/devices");
    crate::disks::discover::sorted_names(&devices)
        .iter()
        .filter(|n| std::fs::read_to_string(devices.join(n).join("bInterfaceClass")).is_ok_and(|c| c.trim() == "08"))
        .count()
}

/// [`find_in`], again every `poll` for up to `wait` while none is found and
/// a USB mass-storage interface is attached (its disk may still be on its
/// way); at once when there is none. Logs the wait and how it ended.
pub fn find_waiting(
    sys: &Path,
    dev: &Path,
    wait: std::time::Duration,
    poll: std::time::Duration,
    log: &mut dyn FnMut(&str),
) -> Vec<Stick> {
    let start = std::time::Instant::now();
    let mut waiting = false;
    loop {
        let found = find_in(sys, dev);
        let ms = start.elapsed().as_millis();
        if !found.is_empty() {
            if waiting {
                log(&format!("boot stick found after waiting {ms} ms"));
            }
            return found;
        }
        let usb = usb_storage_interfaces(sys);
        if usb == 0 || start.elapsed() >= wait {
            if waiting {
                log(&format!("no boot stick after waiting {ms} ms"));
            }
            return found;
        }
        if !waiting {
            log(&format!(
                "no boot stick yet; {usb} USB storage interface(s) attached: waiting up to {} s for its disk",
                wait.as_secs()
            ));
            waiting = true;
        }
        std::thread::sleep(poll);
    }
}

/// Mount the stick's filesystem vfat at [`MOUNT_POINT`] (PID 1 only):
/// read-write, else read-only (a write-protected stick still gives its
/// config; saving then reports EROFS). Returns true if mounted read-only.
/// A damaged FAT that the kernel refuses gives an error naming the device
/// and the errno; the caller logs it and the results go to the console only.
pub fn mount(stick: &Stick, log: &mut dyn FnMut(&str)) -> Result<bool, String> {
    std::fs::create_dir_all(MOUNT_POINT).map_err(|e| format!("mkdir {MOUNT_POINT}: {e}"))?;
    mount_at(&stick.partition, MOUNT_POINT, log)
}

/// [`mount`] of `partition` at `at`.
pub fn mount_at(partition: &str, at: &str, log: &mut dyn FnMut(&str)) -> Result<bool, String> {
    let flags = libc::MS_NOATIME | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    let errno = |e: nix::errno::Errno| io::Error::from(e).to_string();
    match super::mount::mount(partition, at, "vfat", flags, "") {
        Ok(()) => return Ok(false),
        Err(e) => log(&format!(
            "mount {partition} vfat read-write at {at}: {}; trying read-only",
            errno(e)
        )),
    }
    super::mount::mount(partition, at, "vfat", flags | libc::MS_RDONLY, "")
        .map(|()| true)
        .map_err(|e| {
            format!(
                "mount {partition} vfat at {at}: {} (a damaged or unformatted FAT?)",
                errno(e)
            )
        })
}

/// The stick's config text, if the file is there; an error if it is there
/// but cannot be read.
pub fn read_config(root: &Path) -> Option<Result<String, String>> {
    crate::plan::read_config_file(&root.join(CONFIG_NAME)).transpose()
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_stick_key_is_the_shared_one() {
        assert_eq!(
            STICK_KEY_WHY,
            format!("{}= on the kernel command line", bench_core::boot::cmdline::Key::Stick)
        );
    }

    use super::*;
    use std::fs;

    use crate::testutil::TempDir;

    /// A boot sector with `fstype` at `type_at` and `label` at `label_at`.
    fn sector(type_at: usize, fstype: &[u8], label_at: usize, label: &[u8]) -> Vec<u8> {
        let mut s = vec![0u8; 512];
        s[0..3].copy_from_slice(&[0xEB, 0x58, 0x90]);
        s[3..11].copy_from_slice(b"mkfs.fat");
        s[type_at..type_at + fstype.len()].copy_from_slice(fstype);
        s[label_at..label_at + label.len()].copy_from_slice(label);
        s[510] = 0x55;
        s[511] = 0xAA;
        s
    }

    fn fat32(label: &[u8]) -> Vec<u8> {
        sector(0x52, b"FAT32   ", 0x47, label)
    }

    fn fat16(label: &[u8]) -> Vec<u8> {
        sector(0x36, b"FAT16   ", 0x2B, label)
    }

    #[test]
    fn label_detection_on_boot_sectors() {
        let cases: Vec<(&str, Vec<u8>, bool)> = vec![
            ("FAT32 labelled", fat32(b"BOOTBENCH  "), true),
            ("FAT16 labelled", fat16(b"BOOTBENCH  "), true),
            ("FAT12 labelled", sector(0x36, b"FAT12   ", 0x2B, b"BOOTBENCH  "), true),
            ("lower-case label", fat32(b"bootbench  "), true),
            ("other label", fat32(b"NO NAME    "), false),
            ("longer label", fat32(b"BOOTBENCH2 "), false),
            (
                "FAT32 label at the FAT16 place",
                sector(0x52, b"FAT32   ", 0x2B, b"BOOTBENCH  "),
                false,
            ),
            (
                "FAT16 label at the FAT32 place",
                sector(0x36, b"FAT16   ", 0x47, b"BOOTBENCH  "),
                false,
            ),
            ("no FS type", sector(0x52, b"NTFS    ", 0x47, b"BOOTBENCH  "), false),
            ("blank", vec![0u8; 512], false),
            ("short read", fat32(b"BOOTBENCH  ")[..0x50].to_vec(), false),
        ];
        for (what, s, want) in cases {
            assert_eq!(is_bootbench_fat(&s), want, "{what}");
        }
    }

    #[test]
    fn finds_the_partition_and_its_disk() {
        let t = TempDir::new("find");
        let sys = t.0.join("sys");
        let dev = t.0.join("dev");
        fs::create_dir_all(&dev).expect("mkdir");
        let class = sys.join("class/block");
        fs::create_dir_all(&class).expect("mkdir");
        // (name, sysfs dir under devices/, contents of the "node")
        let usb = "devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdb";
        let nodes: Vec<(&str, String, Vec<u8>)> = vec![
            ("sda", "devices/pci0000:00/ata1/block/sda".into(), vec![0u8; 4096]),
            (
                "sda1",
                "devices/pci0000:00/ata1/block/sda/sda1".into(),
                fat32(b"DATA       "),
            ),
            ("sdb", usb.into(), vec![0u8; 4096]),
            ("sdb1", format!("{usb}/sdb1"), fat32(b"BOOTBENCH  ")),
            ("vda", "devices/virtio1/block/vda".into(), fat16(b"BOOTBENCH  ")),
            ("sr0", "devices/ata2/block/sr0".into(), fat32(b"BOOTBENCH  ")),
            ("nvme0n1", "devices/nvme/nvme0/nvme0n1".into(), vec![1u8; 100]), // short: unreadable
        ];
        for (name, dir, content) in &nodes {
            let d = sys.join(dir);
            fs::create_dir_all(&d).expect("mkdir");
            if name.ends_with('1') && !name.starts_with("nvme") {
                fs::write(d.join("partition"), "1\n").expect("write");
            }
            std::os::unix::fs::symlink(&d, class.join(name)).expect("symlink");
            fs::write(dev.join(name), content).expect("write");
        }
        let got = find_in(&sys, &dev);
        let d = |n: &str| dev.join(n).to_string_lossy().into_owned();
        assert_eq!(
            got,
            vec![
                Stick {
                    partition: d("sdb1"),
                    disk: d("sdb"),
                    partuuid: None,
                },
                Stick {
                    partition: d("vda"),
                    disk: d("vda"),
                    partuuid: None,
                },
            ],
            "the labelled partition with its disk, a labelled superfloppy; not sr0"
        );
        assert!(find_in(&t.0.join("none"), &dev).is_empty());
    }

    /// A disk image with a GPT (logical blocks of `lbs`) whose second entry
    /// (the first is unused) starts at LBA `first` with the unique GUID
    /// `guid` (on-disk bytes).
    fn gpt_disk(lbs: u64, first: u64, guid: [u8; 16]) -> Vec<u8> {
        let lb = usize::try_from(lbs).unwrap();
        let mut d = vec![0u8; 64 * lb];
        let mut entries = vec![0u8; 128 * 128];
        let esp = gpt::Partition {
            type_guid: gpt::guid("C12A7328-F81F-11D2-BA4B-00A0C93EC93B").unwrap(),
            unique_guid: guid,
            first_lba: first,
            last_lba: first + 7,
            attributes: 0,
            name: String::new(),
        };
        entries[128..256].copy_from_slice(&esp.to_entry());
        let header = gpt::Header {
            my_lba: 1,
            alt_lba: 63,
            first_usable: 2 + (128 * 128) / lbs,
            last_usable: 62,
            disk_guid: [9; 16],
            entries_lba: 2,
            entry_count: 128,
            entry_size: 128,
            entries_crc: bench_core::document::frame::crc32(&entries),
        };
        d[lb..lb + 512].copy_from_slice(&header.to_sector());
        d[2 * lb..2 * lb + entries.len()].copy_from_slice(&entries);
        d
    }

    #[test]
    fn the_partuuid_comes_from_the_gpt_entry_where_the_partition_starts() {
        let guid = [
            0x67, 0x45, 0x23, 0x01, 0xab, 0x89, 0xef, 0xcd, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
        ];
        assert_eq!(gpt::guid_text(&guid), "01234567-89ab-cdef-0123-456789abcdef");
        let t = TempDir::new("gpt");
        for lbs in [512u64, 4096] {
            let disk = t.0.join(format!("disk-{lbs}"));
            fs::write(&disk, gpt_disk(lbs, 8, guid)).expect("write");
            // The partition's sysfs directory inside its disk's: start in 512-byte sectors.
            let dir = t.0.join(format!("sys-{lbs}/sdb"));
            fs::create_dir_all(dir.join("sdb1")).expect("mkdir");
            fs::create_dir_all(dir.join("queue")).expect("mkdir");
            fs::write(dir.join("queue/logical_block_size"), format!("{lbs}\n")).expect("write");
            fs::write(dir.join("sdb1/start"), format!("{}\n", 8 * lbs / 512)).expect("write");
            assert_eq!(
                partition_uuid(&dir.join("sdb1"), &disk).as_deref(),
                Some("01234567-89ab-cdef-0123-456789abcdef"),
                "{lbs}"
            );
            // Another start: no entry there.
            fs::write(dir.join("sdb1/start"), "4096\n").expect("write");
            assert_eq!(partition_uuid(&dir.join("sdb1"), &disk), None);
            // A damaged entry array: its CRC fails, no PARTUUID is trusted.
            fs::write(dir.join("sdb1/start"), format!("{}\n", 8 * lbs / 512)).expect("write");
            let mut bad = gpt_disk(lbs, 8, guid);
            bad[usize::try_from(2 * lbs + 200).unwrap()] ^= 1;
            fs::write(&disk, bad).expect("write");
            assert_eq!(partition_uuid(&dir.join("sdb1"), &disk), None, "{lbs}: bad CRC");
        }
        // No GPT at all.
        let blank = t.0.join("blank");
        fs::write(&blank, vec![0u8; 64 << 10]).expect("write");
        assert_eq!(gpt_uuid_at(&File::open(&blank).unwrap(), 512, 8), None);
    }

    #[test]
    fn the_loader_variable_names_the_boot_partition() {
        let t = TempDir::new("efivars");
        assert_eq!(loader_device_partuuid(&t.0), None, "no variable");
        let text = "01234567-89AB-CDEF-0123-456789ABCDEF";
        let mut raw = vec![7, 0, 0, 0]; // attributes
        for u in text.encode_utf16().chain([0]) {
            raw.extend_from_slice(&u.to_le_bytes());
        }
        let var = t.0.join(format!("LoaderDevicePartUUID-{LOADER_VENDOR}"));
        fs::write(&var, &raw).expect("write");
        assert_eq!(
            loader_device_partuuid(&t.0).as_deref(),
            Some("01234567-89ab-cdef-0123-456789abcdef")
        );
        // The variable wins over GRUB's word.
        let grub = "fedcba98-7654-4321-8765-43210fedcba9";
        assert_eq!(
            booted_partition(&t.0, Some(grub)),
            Some(("01234567-89ab-cdef-0123-456789abcdef".into(), BY_EFI_VARIABLE))
        );
        fs::write(&var, [7, 0, 0, 0, b'x', 0]).expect("write");
        assert_eq!(loader_device_partuuid(&t.0), None, "not a GUID");
        // Without it, GRUB's `probe` result; empty (GRUB could not tell) or junk: nothing.
        assert_eq!(
            booted_partition(&t.0, Some(&grub.to_uppercase())),
            Some((grub.into(), BY_GRUB))
        );
        for junk in ["", "$bootbench_part", "not-a-guid"] {
            assert_eq!(booted_partition(&t.0, Some(junk)), None, "{junk:?}");
        }
        assert_eq!(booted_partition(&t.0, None), None);
    }

    #[test]
    fn the_stick_is_the_boot_partition_else_the_only_one_else_none_is_trusted() {
        let stick = |part: &str, id: Option<&str>| Stick {
            partition: format!("/dev/{part}"),
            disk: format!(
                "/dev/{}",
                part.trim_end_matches(|c: char| c.is_ascii_digit())
                    .trim_end_matches('p')
            ),
            partuuid: id.map(str::to_string),
        };
        let (a, b) = (
            "aaaaaaaa-0000-4000-8000-000000000001",
            "bbbbbbbb-0000-4000-8000-000000000002",
        );
        let usb = stick("sda1", Some(a));
        let old = stick("nvme0n1p1", Some(b));
        let both = [old.clone(), usb.clone()];
        let one = |c: Choice| match c {
            Choice::One(s, why) => (s.partition, why),
            other => panic!("{other:?}"),
        };
        let untrusted = |c: Choice| match c {
            Choice::Untrusted(why) => why,
            other => panic!("{other:?}"),
        };
        // The EFI variable picks, whatever the order; upper case is the same id.
        let upper = a.to_uppercase();
        let (p, why) = one(choose(&both, Some((&upper, BY_EFI_VARIABLE)), None));
        assert_eq!(p, "/dev/sda1");
        assert!(why.contains("LoaderDevicePartUUID"), "{why}");
        let (p, why) = one(choose(&both, Some((a, BY_GRUB)), None));
        assert_eq!(p, "/dev/sda1");
        assert!(why.contains("GRUB's probe"), "{why}");
        // It wins over the command line; the command line serves without it.
        assert_eq!(one(choose(&both, Some((a, BY_GRUB)), Some(b))).0, "/dev/sda1");
        let (p, why) = one(choose(&both, None, Some(b)));
        assert_eq!(p, "/dev/nvme0n1p1");
        assert!(why.contains("bootbench.stick="), "{why}");
        // No id: the only one; two: none.
        assert!(one(choose(std::slice::from_ref(&usb), None, None))
            .1
            .contains("the only FAT"));
        let why = untrusted(choose(&both, None, None));
        assert!(
            why.contains("2 FATs labelled BOOTBENCH") && why.contains("/dev/sda1"),
            "{why}"
        );
        // An id no candidate has: none (the machine booted from elsewhere).
        let why = untrusted(choose(
            &both,
            Some(("cccccccc-0000-4000-8000-000000000003", BY_GRUB)),
            None,
        ));
        assert!(why.contains("is none of the FATs"), "{why}");
        // Two copies of one image: the same id twice, none.
        let twin = stick("sdb1", Some(a));
        let why = untrusted(choose(&[usb.clone(), twin], Some((a, BY_EFI_VARIABLE)), None));
        assert!(why.contains("copies of one image"), "{why}");
        assert_eq!(choose(&[], Some((a, BY_GRUB)), None), Choice::NoneFound);
    }

    #[test]
    fn config_on_the_stick() {
        let t = TempDir::new("config");
        assert!(read_config(&t.0).is_none());
        fs::write(t.0.join(CONFIG_NAME), "{\"profile\":\"quick\"}").expect("write");
        assert_eq!(read_config(&t.0), Some(Ok("{\"profile\":\"quick\"}".to_string())));
        fs::remove_file(t.0.join(CONFIG_NAME)).expect("rm");
        fs::create_dir(t.0.join(CONFIG_NAME)).expect("mkdir");
        assert!(matches!(read_config(&t.0), Some(Err(_))));
    }

    #[test]
    fn an_unmountable_device_is_an_error_naming_it() {
        // A regular file is no block device: both mount attempts fail.
        let t = TempDir::new("mount");
        let dev = t.0.join("not-a-fat");
        fs::write(&dev, vec![0u8; 4096]).expect("write");
        let at = t.0.join("mnt");
        fs::create_dir(&at).expect("mkdir");
        let mut lines = Vec::new();
        let e = mount_at(&dev.to_string_lossy(), &at.to_string_lossy(), &mut |l| {
            lines.push(l.to_string())
        })
        .unwrap_err();
        assert!(e.starts_with(&format!("mount {} vfat at", dev.display())), "{e}");
        assert!(lines[0].contains("trying read-only"), "{lines:?}");
        assert!(crate::results::sink::fixture::names(&at).is_empty());
    }

    #[test]
    fn waits_for_the_stick_only_while_a_usb_storage_interface_is_attached() {
        use std::time::Duration;
        let t = TempDir::new("wait");
        let (sys, dev) = (t.0.join("sys"), t.0.join("dev"));
        fs::create_dir_all(sys.join("class/block")).expect("mkdir");
        fs::create_dir_all(&dev).expect("mkdir");
        let (wait, poll) = (Duration::from_millis(300), Duration::from_millis(20));
        // No USB storage: no wait, nothing logged.
        let mut lines = Vec::new();
        assert!(find_waiting(&sys, &dev, wait, poll, &mut |l| lines.push(l.to_string())).is_empty());
        assert!(lines.is_empty(), "{lines:?}");
        // A mass-storage interface (class 08) and a hub (09): one counts.
        for (name, class) in [("1-1:1.0", "08\n"), ("usb1", "09\n")] {
            let d = sys.join("bus/usb/devices").join(name);
            fs::create_dir_all(&d).expect("mkdir");
            fs::write(d.join("bInterfaceClass"), class).expect("write");
        }
        assert_eq!(usb_storage_interfaces(&sys), 1);
        let found = find_waiting(&sys, &dev, wait, poll, &mut |l| lines.push(l.to_string()));
        assert!(found.is_empty());
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].contains("1 USB storage interface(s) attached"), "{lines:?}");
        assert!(lines[1].starts_with("no boot stick after waiting"), "{lines:?}");
        // The stick there: found at once, no wait.
        let d = sys.join("devices/usb/sdb");
        fs::create_dir_all(&d).expect("mkdir");
        std::os::unix::fs::symlink(&d, sys.join("class/block/sdb")).expect("symlink");
        fs::write(dev.join("sdb"), fat32(b"BOOTBENCH  ")).expect("write");
        lines.clear();
        let found = find_waiting(&sys, &dev, wait, poll, &mut |l| lines.push(l.to_string()));
        assert_eq!(found.len(), 1);
        assert!(lines.is_empty(), "{lines:?}");
    }
}
