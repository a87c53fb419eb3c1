//! Discovery: every whole-disk block device of the machine, with what the
//! system tells of it (identity, transport, driver, PCI address, queue
//! settings), and the listing `bootbench-init list` prints.

use std::fmt::Write as _;
use std::path::Path;

use bench_core::document::result::{Host, TargetInfo};
use bench_core::vocab::console;

use crate::disks::identity;

/// Kernel names that are not disks of the machine: loop, RAM and
/// compressed-RAM disks, md arrays, device-mapper layers, optical drives,
/// network block devices.
pub const SKIPPED_PREFIXES: [&str; 7] = ["loop", "ram", "zram", "md", "dm-", "sr", "nbd"];

/// True if `name` (a `/sys/block` entry) is skipped unless all devices are asked for.
pub fn is_skipped(name: &str) -> bool {
    SKIPPED_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Every whole disk of this machine (`/sys/block`, nodes in `/dev`), in
/// name order; with `all`, loop, RAM, md, dm, optical and nbd devices and
/// empty (0-byte) disks too.
pub fn disks(all: bool) -> Vec<TargetInfo> {
    disks_in(crate::sysfs::root(), Path::new("/dev"), all)
}

/// The entry names of a directory (a sysfs listing), sorted; none if it
/// cannot be read.
pub fn sorted_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// [`disks`] with the sysfs root `sys` and device directory `dev`. Each disk
/// is described through its node (`dev/<name>`, with ioctls and ATA
/// IDENTIFY) where that works, else from sysfs alone.
pub fn disks_in(sys: &Path, dev: &Path, all: bool) -> Vec<TargetInfo> {
    let names = sorted_names(&sys.join("block"));
    let mut out = Vec::new();
    for name in names {
        if !all && is_skipped(&name) {
            continue;
        }
        let Ok(dir) = std::fs::canonicalize(sys.join("block").join(&name)) else {
            continue;
        };
        let path = dev.join(&name);
        let path_s = path.to_string_lossy().into_owned();
        let info = identity::describe_in(&path_s, sys).unwrap_or_else(|_| {
            let mut i = identity::from_sysfs(&dir, sys);
            i.path = path_s.clone();
            i
        });
        if !all && info.size_bytes == 0 {
            continue; // an empty card-reader slot, an ejected medium
        }
        out.push(info);
    }
    out
}

/// A size in bytes and in decimal gigabytes: `1000204886016 B (1000.2 GB)`.
#[allow(clippy::cast_precision_loss)] // display only
fn size_text(b: u64) -> String {
    format!("{b} B ({:.1} GB)", b as f64 / 1e9)
}

/// A value of a `key value` line: `-` when absent, in double quotes when
/// empty or holding a space (an inner `"` doubled, so that no value can end
/// its quotes early). Nothing else is escaped here: the line is printed
/// through [`console::safe`], which escapes control characters once.
fn quoted(v: Option<&str>) -> String {
    match v {
        None => "-".to_string(),
        Some(s) if s.contains(' ') || s.is_empty() => format!("\"{}\"", s.replace('"', "\"\"")),
        Some(s) => s.to_string(),
    }
}

/// The host in one line.
pub fn host_line(h: &Host) -> String {
    let mem = h.memory_bytes.map_or("-".to_string(), size_text);
    format!(
        "host: vendor {} product {} serial {} cpu {} cores {} memory {} kernel {} hostname {} firmware {} secure_boot {} lockdown {}",
        quoted(h.sys_vendor.as_deref()),
        quoted(h.product_name.as_deref()),
        quoted(h.product_serial.as_deref()),
        quoted(h.cpu_model.as_deref()),
        h.cores.map_or("-".to_string(), |c| c.to_string()),
        mem,
        quoted(h.kernel.as_deref()),
        quoted(h.hostname.as_deref()),
        quoted(h.firmware.as_deref()),
        match h.secure_boot {
            Some(true) => "on",
            Some(false) => "off",
            None => "-",
        },
        quoted(h.lockdown.as_deref()),
    )
}

/// One disk in one line: `key value` pairs, `-` where a fact is absent,
/// values with spaces quoted.
pub fn disk_line(i: &TargetInfo) -> String {
    let rot = match i.rotational {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    };
    format!(
        "{} transport {} driver {} pci {} model {} serial {} firmware {} wwn {} size {} logical_block {} B physical_block {} B rotational {} write_cache {} scheduler {} readahead {}",
        i.path,
        quoted(i.transport.as_deref()),
        quoted(i.driver.as_deref()),
        quoted(i.pci_path.as_deref()),
        quoted(i.model.as_deref()),
        quoted(i.serial.as_deref()),
        quoted(i.firmware.as_deref()),
        quoted(i.wwn.as_deref()),
        size_text(i.size_bytes),
        i.logical_block_size,
        i.physical_block_size,
        rot,
        quoted(i.write_cache.as_deref()),
        quoted(i.scheduler.as_deref()),
        i.read_ahead_bytes.map_or("-".to_string(), |b| format!("{b} B")),
    )
}

/// The listing: the host line, then one line per disk (and, under it,
/// what it holds), each through [`console::safe`] (a DMI string or a
/// disk's serial with a line break in it stays on its line).
pub fn render_list(host: &Host, disks: &[TargetInfo]) -> String {
    let mut s = console::safe(&host_line(host)).into_owned();
    s.push('\n');
    for d in disks {
        let _ = writeln!(s, "{}", console::safe(&disk_line(d)));
        if let Some(z) = &d.zoned {
            let _ = writeln!(s, "  {}", console::safe(&super::zones::line(&d.path, z, "now")));
        }
        if let Some(r) = d.link.as_ref().and_then(|l| l.after.as_ref().or(l.before.as_ref())) {
            let _ = writeln!(s, "  link: {}", console::safe(&bench_core::device::link::summary(r)));
        }
        for h in super::holds::lines(d) {
            let _ = writeln!(s, "{}", console::safe(&h));
        }
    }
    if disks.is_empty() {
        s.push_str("no disks found\n");
    }
    for line in super::holds::stack_lines(&super::holds::stacks(disks)) {
        let _ = writeln!(s, "{}", console::safe(&line));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    use crate::testutil::TempDir;

    fn write(p: &Path, content: &str) {
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, content).expect("write");
    }

    /// A disk under `devices/<rel>` with a `block/<name>` link to it.
    fn disk(sys: &Path, rel: &str, size_sectors: u64, files: &[(&str, &str)]) {
        let d = sys.join("devices").join(rel);
        write(&d.join("size"), &format!("{size_sectors}\n"));
        for (f, c) in files {
            write(&d.join(f), c);
        }
        let name = d.file_name().expect("name").to_owned();
        fs::create_dir_all(sys.join("block")).expect("mkdir");
        std::os::unix::fs::symlink(&d, sys.join("block").join(name)).expect("symlink");
    }

    fn machine(sys: &Path) {
        let pci = "pci0000:00";
        disk(
            sys,
            &format!("{pci}/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda"),
            2_097_152,
            &[
                ("device/model", "QEMU HARDDISK\n"),
                (
                    "device/wwid",
                    "t10.ATA     QEMU HARDDISK                           SN1\n",
                ),
                ("queue/rotational", "1\n"),
                ("queue/write_cache", "write back\n"),
            ],
        );
        disk(
            sys,
            &format!("{pci}/0000:00:04.0/nvme/nvme0/nvme0n1"),
            1_048_576,
            &[("device/serial", "SN2\n"), ("queue/scheduler", "[none] mq-deadline\n")],
        );
        disk(
            sys,
            &format!("{pci}/0000:00:05.0/virtio2/block/vda"),
            65_536,
            &[("serial", "SN3\n")],
        );
        disk(
            sys,
            &format!("{pci}/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdb"),
            0,
            &[],
        );
        for v in ["loop0", "ram0", "zram0", "md0", "dm-0", "sr0", "nbd0"] {
            disk(sys, &format!("virtual/block/{v}"), 8, &[]);
        }
    }

    #[test]
    fn lists_whole_disks_with_their_facts() {
        let t = TempDir::new("machine");
        machine(&t.0);
        let got = disks_in(&t.0, Path::new("/nonexistent-dev"), false);
        type Row<'a> = (&'a str, Option<&'a str>, Option<&'a str>, Option<&'a str>, u64);
        let summary: Vec<Row<'_>> = got
            .iter()
            .map(|d| {
                (
                    d.path.as_str(),
                    d.transport.as_deref(),
                    d.serial.as_deref(),
                    d.pci_path.as_deref(),
                    d.size_bytes,
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                (
                    "/nonexistent-dev/nvme0n1",
                    Some("nvme"),
                    Some("SN2"),
                    Some("0000:00:04.0"),
                    1_048_576 * 512
                ),
                (
                    "/nonexistent-dev/sda",
                    Some("sata"),
                    Some("SN1"),
                    Some("0000:00:1f.2"),
                    2_097_152 * 512
                ),
                (
                    "/nonexistent-dev/vda",
                    Some("virtio"),
                    Some("SN3"),
                    Some("0000:00:05.0"),
                    65_536 * 512
                ),
            ],
            "virtual devices and the empty USB slot are skipped"
        );
        assert_eq!(got[1].model.as_deref(), Some("QEMU HARDDISK"));
        assert_eq!(got[0].scheduler.as_deref(), Some("none"));

        let all = disks_in(&t.0, Path::new("/nonexistent-dev"), true);
        let names: Vec<&str> = all.iter().filter_map(|d| d.name.as_deref()).collect();
        assert_eq!(
            names,
            vec!["dm-0", "loop0", "md0", "nbd0", "nvme0n1", "ram0", "sda", "sdb", "sr0", "vda", "zram0"]
        );
        assert!(disks_in(Path::new("/nonexistent-sys"), Path::new("/dev"), false).is_empty());
    }

    #[test]
    fn skipped_names() {
        for n in ["loop7", "ram15", "zram0", "md127", "dm-3", "sr0", "nbd1"] {
            assert!(is_skipped(n), "{n}");
        }
        for n in ["sda", "nvme0n1", "vda", "mmcblk0", "xvda"] {
            assert!(!is_skipped(n), "{n}");
        }
    }

    #[test]
    fn list_lines() {
        let t = TempDir::new("lines");
        machine(&t.0);
        let got = disks_in(&t.0, Path::new("/dev-x"), false);
        let host = Host {
            sys_vendor: Some("QEMU".into()),
            product_name: Some("Standard PC (Q35 + ICH9, 2009)".into()),
            memory_bytes: Some(2_000_000_000),
            ..Host::default()
        };
        let text = render_list(&host, &got);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(
            lines[0].starts_with("host: vendor QEMU product \"Standard PC (Q35 + ICH9, 2009)\" serial -"),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains("memory 2000000000 B (2.0 GB)"), "{}", lines[0]);
        let sda = lines[2];
        for want in [
            "/dev-x/sda transport sata ",
            "pci 0000:00:1f.2",
            "model \"QEMU HARDDISK\"",
            "serial SN1",
            "size 1073741824 B (1.1 GB)",
            "rotational yes",
            "write_cache \"write back\"",
        ] {
            assert!(sda.contains(want), "{want:?} in {sda}");
        }
        assert!(render_list(&host, &[]).contains("no disks found"));
        // Hostile identity strings: one line per disk still, nothing that a
        // decoder or a terminal takes for anything but text.
        let mut evil = got[0].clone();
        evil.serial = Some("X\nBOOTBENCH-RESULT-BEGIN v2".into());
        evil.model = Some("M\u{1b}[2J\u{9b}".into());
        let host = Host {
            product_serial: Some("S\r\nwritable: yes".into()),
            ..host
        };
        let text = render_list(&host, &[evil]);
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(
            !text.contains("BOOTBENCH-") && !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(text.contains("serial \"S\\r\\nwritable: yes\""), "{text}");
        assert!(text.contains("serial \"X\\nBOOTBENCH\\x2dRESULT-BEGIN v2\""), "{text}");
        assert!(text.contains("model M\\x1b[2J\\u009b"), "{text}");
        // A zoned disk: its zones on a line under it, and in its JSON.
        let mut zoned = got[0].clone();
        let z = bench_core::document::result::ZoneSummary {
            model: bench_core::document::result::ZoneModel::HostManaged,
            zone_size_bytes: 256 << 20,
            zone_capacity_bytes: Some(256 << 20),
            zone_capacity_kind: Some(bench_core::document::result::CapacityKind::Uniform),
            zones: 4,
            conventional_zones: 1,
            max_open_zones: 0,
            max_active_zones: 0,
            states: bench_core::document::result::ZoneStates {
                not_write_pointer: 1,
                empty: 2,
                offline: 1,
                ..Default::default()
            },
            written_bytes: 0,
        };
        zoned.zoned = Some(bench_core::document::result::Zoned {
            model: z.model,
            before: Some(z),
            after: None,
            error: None,
            reads_past_write_pointer: None,
        });
        let text = render_list(&host, &[zoned.clone()]);
        let line = text.lines().nth(2).unwrap_or_default();
        assert_eq!(
            line,
            format!(
                "  {}: zoned host-managed: 4 zones of 268435456 bytes (256 MiB), capacity 268435456 bytes (256 MiB), 1 conventional; open zones: no limit, active zones: no limit; now: 2 empty, 0 open, 0 closed, 0 full, 0 read-only, 1 offline; 0 bytes written",
                zoned.path
            ),
            "{text}"
        );
        let json = serde_json::to_value(&zoned).expect("json");
        assert_eq!(json["zoned"]["before"]["states"]["offline"], 1, "{json}");
        // A quote inside a quoted value cannot end it early.
        assert_eq!(quoted(Some("x\" serial \"FAKE")), "\"x\"\" serial \"\"FAKE\"");
    }

    #[test]
    fn real_machine_lists_without_error() {
        // Whatever this machine has: every entry is a whole disk with a name.
        for d in disks(false) {
            assert!(
                d.name.is_some() && !is_skipped(d.name.as_deref().unwrap_or("")),
                "{d:?}"
            );
            assert!(d.size_bytes > 0, "{d:?}");
        }
    }
}
