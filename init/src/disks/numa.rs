//! Where a disk sits on the machine: the NUMA node of the PCI device it
//! hangs off (`numa_node`, -1 for none), that node's CPUs
//! (`devices/system/node/nodeN/cpulist`), the block layer's hardware queues
//! (`block/X/mq/N/cpu_list`) and the interrupts of the PCI device
//! (`msi_irqs/`, else the legacy `irq`) with their affinity
//! (`/proc/irq/N/smp_affinity_list`, `effective_affinity_list`) and handler
//! name (`kernel/irq/N/actions`). Read only: bootbench never changes an
//! interrupt's affinity. Every path is under a sysfs root `sys` and a procfs
//! root `proc_dir`, so the tests read fixture trees.

use std::path::{Path, PathBuf};

use bench_core::document::result::{DiskNuma, HwQueue, Irq, NumaNode};
use bench_core::vocab::cpus::parse_cpu_list;

use super::identity::pci_path_of;

/// A file's text, trimmed; `None` if absent, unreadable or empty.
fn text(path: &Path) -> Option<String> {
    let s = std::fs::read_to_string(path).ok()?;
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// A CPU list file (`cpulist`, `cpu_list`, `smp_affinity_list`); `None` if
/// absent, empty (a node without CPUs writes an empty line) or not a list.
fn cpus(path: &Path) -> Option<Vec<u32>> {
    text(path).and_then(|t| parse_cpu_list(&t).ok())
}

/// The numbers after `prefix` of the entries of `dir` (`node0`, `node1`;
/// `0`, `1`), sorted.
fn numbered(dir: &Path, prefix: &str) -> Vec<u32> {
    let mut out: Vec<u32> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| e.file_name().to_str()?.strip_prefix(prefix)?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    out.sort_unstable();
    out
}

/// The machine's NUMA nodes with their CPUs (`devices/system/node/nodeN`);
/// empty where the kernel has no such directory (built without NUMA).
pub fn nodes(sys: &Path) -> Vec<NumaNode> {
    let dir = sys.join("devices/system/node");
    numbered(&dir, "node")
        .into_iter()
        .map(|node| NumaNode {
            node,
            cpus: cpus(&dir.join(format!("node{node}/cpulist"))).unwrap_or_default(),
        })
        .collect()
}

/// The sysfs directory of the last PCI function in `disk`'s resolved path
/// (the NVMe controller, the HBA, the virtio function), with its address.
fn pci_device(disk: &Path) -> Option<(PathBuf, String)> {
    let addr = pci_path_of(disk)?;
    let dir = disk.ancestors().find(|d| d.file_name().is_some_and(|n| *n == *addr))?;
    Some((dir.to_path_buf(), addr))
}

/// The interrupts of the PCI device `dev`: its MSI/MSI-X vectors
/// (`msi_irqs/`), else its legacy line (`irq`, 0 meaning none).
fn irq_numbers(dev: &Path) -> Vec<u32> {
    let msi = numbered(&dev.join("msi_irqs"), "");
    if !msi.is_empty() {
        return msi;
    }
    text(&dev.join("irq"))
        .and_then(|t| t.parse::<u32>().ok())
        .filter(|n| *n != 0)
        .into_iter()
        .collect()
}

/// Interrupt `irq` as the kernel shows it.
fn irq(sys: &Path, proc_dir: &Path, irq: u32) -> Irq {
    let dir = proc_dir.join(format!("irq/{irq}"));
    Irq {
        irq,
        name: text(&sys.join(format!("kernel/irq/{irq}/actions"))),
        affinity: cpus(&dir.join("smp_affinity_list")).unwrap_or_default(),
        effective: cpus(&dir.join("effective_affinity_list")),
    }
}

/// The hardware queues of the disk whose block directory is `disk`
/// (`mq/N/cpu_list`), in queue order.
fn queues(disk: &Path) -> Vec<HwQueue> {
    let mq = disk.join("mq");
    numbered(&mq, "")
        .into_iter()
        .map(|queue| HwQueue {
            queue,
            cpus: cpus(&mq.join(format!("{queue}/cpu_list"))).unwrap_or_default(),
        })
        .collect()
}

/// Where the disk whose resolved block directory is `disk`
/// (`/sys/devices/pci0000:40/.../nvme/nvme0/nvme0n1`) sits: `None` for a
/// disk not on a PCI device (a loop device, a virtual disk with no bus).
pub fn of_disk(sys: &Path, proc_dir: &Path, disk: &Path) -> Option<DiskNuma> {
    let (dev, addr) = pci_device(disk)?;
    // -1 (no node) and anything unreadable are the same: no node.
    let node = text(&dev.join("numa_node")).and_then(|t| t.parse::<u32>().ok());
    let node_cpus = node
        .and_then(|n| cpus(&sys.join(format!("devices/system/node/node{n}/cpulist"))))
        .unwrap_or_default();
    Some(DiskNuma {
        pci_device: Some(addr),
        node,
        node_cpus,
        queues: queues(disk),
        irqs: irq_numbers(&dev).into_iter().map(|n| irq(sys, proc_dir, n)).collect(),
    })
}

/// [`of_disk`] for the disk named `name` (`nvme0n1`) on the live system.
pub fn of_disk_named(name: &str) -> Option<DiskNuma> {
    let sys = crate::sysfs::root();
    let dir = std::fs::canonicalize(sys.join("class/block").join(name)).ok()?;
    of_disk(sys, Path::new("/proc"), &dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;

    fn write(root: &Path, rel: &str, body: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(p, body).expect("write");
    }

    /// A fake sysfs and procfs: two nodes, an NVMe drive on node 1 behind an
    /// expander bridge with two queues and three MSI-X vectors.
    fn two_nodes() -> (TempDir, PathBuf) {
        let t = TempDir::new("numa");
        let (sys, proc_dir) = (t.0.join("sys"), t.0.join("proc"));
        write(&sys, "devices/system/node/node0/cpulist", "0-1\n");
        write(&sys, "devices/system/node/node1/cpulist", "2-3\n");
        write(&sys, "devices/system/node/possible", "0-1\n");
        let dev = "devices/pci0000:40/0000:40:00.0/0000:41:00.0";
        write(&sys, &format!("{dev}/numa_node"), "1\n");
        let disk = format!("{dev}/nvme/nvme0/nvme0n1");
        write(&sys, &format!("{disk}/mq/0/cpu_list"), "0, 1\n");
        write(&sys, &format!("{disk}/mq/1/cpu_list"), "2, 3\n");
        for (n, name, aff, eff) in [
            (24, "nvme0q0", "0-3", "1"),
            (25, "nvme0q1", "0-1", "0"),
            (26, "nvme0q2", "2-3", "3"),
        ] {
            write(&sys, &format!("{dev}/msi_irqs/{n}"), "msix\n");
            write(&sys, &format!("kernel/irq/{n}/actions"), &format!("{name}\n"));
            write(&proc_dir, &format!("irq/{n}/smp_affinity_list"), &format!("{aff}\n"));
            write(
                &proc_dir,
                &format!("irq/{n}/effective_affinity_list"),
                &format!("{eff}\n"),
            );
        }
        let disk = sys.join(disk);
        (t, disk)
    }

    #[test]
    fn nodes_and_their_cpus() {
        let (t, _) = two_nodes();
        let got = nodes(&t.0.join("sys"));
        assert_eq!(
            got,
            [
                NumaNode {
                    node: 0,
                    cpus: vec![0, 1]
                },
                NumaNode {
                    node: 1,
                    cpus: vec![2, 3]
                }
            ]
        );
        assert!(nodes(&t.0.join("nowhere")).is_empty(), "a kernel without NUMA");
    }

    #[test]
    fn a_disk_on_node_1_with_its_queues_and_interrupts() {
        let (t, disk) = two_nodes();
        let n = of_disk(&t.0.join("sys"), &t.0.join("proc"), &disk).expect("on PCI");
        assert_eq!(n.pci_device.as_deref(), Some("0000:41:00.0"));
        assert_eq!((n.node, n.node_cpus.as_slice()), (Some(1), &[2, 3][..]));
        assert_eq!(
            n.queues,
            [
                HwQueue {
                    queue: 0,
                    cpus: vec![0, 1]
                },
                HwQueue {
                    queue: 1,
                    cpus: vec![2, 3]
                }
            ]
        );
        let irqs: Vec<_> = n
            .irqs
            .iter()
            .map(|i| (i.irq, i.name.as_deref(), i.served_on().to_vec()))
            .collect();
        assert_eq!(
            irqs,
            [
                (24, Some("nvme0q0"), vec![1]),
                (25, Some("nvme0q1"), vec![0]),
                (26, Some("nvme0q2"), vec![3])
            ]
        );
        assert_eq!(n.irqs[0].affinity, [0, 1, 2, 3]);
    }

    /// numa_node -1, a legacy interrupt line, no effective affinity, no
    /// mq directory: no node, the line's affinity; a disk off PCI: none.
    #[test]
    fn no_node_a_legacy_line_and_a_disk_off_pci() {
        let t = TempDir::new("numa-none");
        let (sys, proc_dir) = (t.0.join("sys"), t.0.join("proc"));
        let dev = "devices/pci0000:00/0000:00:1f.2";
        write(&sys, &format!("{dev}/numa_node"), "-1\n");
        write(&sys, &format!("{dev}/irq"), "19\n");
        write(&proc_dir, "irq/19/smp_affinity_list", "0-7\n");
        let disk = sys.join(format!("{dev}/ata1/host0/target0:0:0/0:0:0:0/block/sda"));
        std::fs::create_dir_all(&disk).unwrap();
        let n = of_disk(&sys, &proc_dir, &disk).expect("on PCI");
        assert_eq!((n.node, n.node_cpus.len(), n.queues.len()), (None, 0, 0));
        assert_eq!(n.irqs.len(), 1);
        assert_eq!((n.irqs[0].irq, n.irqs[0].effective.as_ref()), (19, None));
        assert_eq!(n.irqs[0].served_on(), [0, 1, 2, 3, 4, 5, 6, 7]);
        let lp = sys.join("devices/virtual/block/loop0");
        std::fs::create_dir_all(&lp).unwrap();
        assert_eq!(of_disk(&sys, &proc_dir, &lp), None);
    }
}
