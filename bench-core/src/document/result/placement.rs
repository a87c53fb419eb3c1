//! Where a disk sits and where its tests ran: the NUMA node of the disk's
//! PCI device, that node's CPUs, the interrupts of its queues and their
//! affinity (read from sysfs and procfs before the run), and per test the
//! CPUs its threads were given, the memory policy of its buffers, why, and
//! the CPUs they were seen on. Nothing here changes interrupt affinity.

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

/// One NUMA node of the machine (`/sys/devices/system/node/nodeN`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NumaNode {
    /// The node's number.
    pub node: u32,
    /// Its CPUs (`nodeN/cpulist`), sorted; empty for a node of memory only.
    pub cpus: Vec<u32>,
}

/// A disk's place on the machine.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskNuma {
    /// The PCI device the node was read from (`0000:41:00.0`): the last
    /// PCI function in the disk's sysfs path (the NVMe controller, the HBA,
    /// the virtio function); `None` for a disk not on PCI.
    pub pci_device: Option<String>,
    /// Its node (`numa_node`); `None` when the kernel says -1 (no node: a
    /// machine of one node, or firmware that does not say).
    pub node: Option<u32>,
    /// The CPUs of `node` (`/sys/devices/system/node/nodeN/cpulist`),
    /// sorted; empty without a node.
    pub node_cpus: Vec<u32>,
    /// The block layer's hardware queues (`/sys/block/X/mq/N/cpu_list`):
    /// which CPUs submit to each, in queue order; empty for a disk without
    /// blk-mq directories.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<HwQueue>,
    /// The interrupts of the PCI device (`msi_irqs`; the legacy `irq`
    /// without MSI), in number order, with their affinity.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub irqs: Vec<Irq>,
}

/// One hardware queue of a disk.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HwQueue {
    /// The queue's number (its `mq/` directory).
    pub queue: u32,
    /// The CPUs whose requests go to it (`cpu_list`), sorted.
    pub cpus: Vec<u32>,
}

/// One interrupt of a disk's PCI device.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Irq {
    /// The interrupt number (`/proc/irq/N`).
    pub irq: u32,
    /// Its handler's name (`/sys/kernel/irq/N/actions`: `nvme0q1`), if
    /// the kernel says.
    #[serde(default)]
    pub name: Option<String>,
    /// The CPUs it may be served on (`/proc/irq/N/smp_affinity_list`).
    pub affinity: Vec<u32>,
    /// The CPUs it is served on (`effective_affinity_list`), where the
    /// kernel has it (x86 with generic IRQ effective affinity); `None`
    /// otherwise.
    #[serde(default)]
    pub effective: Option<Vec<u32>>,
}

impl Irq {
    /// The CPUs that serve it: the effective affinity where known, else
    /// the affinity.
    pub fn served_on(&self) -> &[u32] {
        self.effective.as_deref().unwrap_or(&self.affinity)
    }
}

/// How a test's CPUs were chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlacementPolicy {
    /// The CPUs of a NUMA node (the disk's, or the one `placement` names),
    /// buffers allocated there.
    Node,
    /// The CPUs `cpus_allowed` names.
    Cpus,
    /// Not pinned: wherever the scheduler puts them.
    Any,
}

/// Where one test's threads ran, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestPlacement {
    /// How the CPUs were chosen.
    pub policy: PlacementPolicy,
    /// The node followed (`policy` `node`); `None` otherwise.
    pub node: Option<u32>,
    /// The CPUs each thread was allowed (all of them, before
    /// `cpus_allowed_policy` `split`), sorted; empty when not pinned.
    pub cpus: Vec<u32>,
    /// The node the jobs' buffers were allocated on (MPOL_PREFERRED, set
    /// on each job's thread before its buffers were made); `None`: the
    /// kernel's default policy.
    pub mem_node: Option<u32>,
    /// Why, in words.
    pub reason: String,
    /// The CPUs the test's threads were seen running on, sorted:
    /// `sched_getcpu()` on each job thread when its queue is made, at each
    /// progress report (once a second) and when it ends. Empty for a test
    /// that made no queue (skipped), and for a simulated disk.
    pub ran_on: Vec<u32>,
}
