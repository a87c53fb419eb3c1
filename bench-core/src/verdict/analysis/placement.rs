//! The placement line of a document: a disk whose queues' interrupts are
//! all served on other NUMA nodes than the ones its tests' threads ran on
//! (`irqs_remote`). Each completion then wakes a CPU of the other node and
//! the data crosses between the nodes; the fix is the interrupts' affinity
//! (`/proc/irq/N/smp_affinity_list`, irqbalance), which bootbench reads and
//! never changes.
//!
//! The nodes come from the document: the host's nodes with their CPUs, the
//! disk's interrupts with the CPUs that serve each (effective affinity
//! where the kernel has it, else the affinity), and each test's `ran_on`.
//! An NVMe controller's admin queue (`nvmeNq0`) carries no reads or writes
//! and is left out. No line without the facts: one node, no interrupts
//! known, a test that ran nowhere known.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::document::result::{DiskNuma, HealthKind, HealthLine, Irq, NumaNode, ResultDoc};
use crate::vocab::cpus::format_cpu_list;

/// The nodes of `cpus`.
fn nodes_of(cpus: &[u32], nodes: &[NumaNode]) -> BTreeSet<u32> {
    nodes
        .iter()
        .filter(|n| n.cpus.iter().any(|c| cpus.contains(c)))
        .map(|n| n.node)
        .collect()
}

/// True for an NVMe controller's admin queue interrupt (`nvme0q0`).
fn admin(i: &Irq) -> bool {
    i.name.as_deref().is_some_and(|n| {
        n.strip_prefix("nvme")
            .and_then(|r| r.strip_suffix("q0"))
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// The interrupts that serve the disk's I/O.
fn io_irqs(d: &DiskNuma) -> Vec<&Irq> {
    d.irqs.iter().filter(|i| !admin(i)).collect()
}

/// `0,1` for a set of node numbers.
fn list(s: &BTreeSet<u32>) -> String {
    format_cpu_list(&s.iter().copied().collect::<Vec<_>>())
}

/// One `irqs_remote` line per disk some of whose tests ran only on nodes
/// that serve none of its I/O interrupts.
pub fn remote_irqs(doc: &ResultDoc) -> Vec<HealthLine> {
    let nodes = &doc.host.numa_nodes;
    let mut out = Vec::new();
    if nodes.len() < 2 {
        return out;
    }
    for t in &doc.targets {
        let Some(d) = &t.numa else { continue };
        let irqs = io_irqs(d);
        let mut served = BTreeSet::new();
        let mut cpus = BTreeSet::new();
        for i in &irqs {
            served.extend(nodes_of(i.served_on(), nodes));
            cpus.extend(i.served_on().iter().copied());
        }
        if served.is_empty() {
            continue;
        }
        let mut remote = Vec::new();
        let mut ran = BTreeSet::new();
        for test in doc.tests.iter().filter(|x| x.target == t.path) {
            let Some(pl) = &test.placement else { continue };
            let on = nodes_of(&pl.ran_on, nodes);
            if !on.is_empty() && on.is_disjoint(&served) {
                remote.push(test.name.as_str());
                ran.extend(on);
            }
        }
        if remote.is_empty() {
            continue;
        }
        let numbers: Vec<u32> = irqs.iter().map(|i| i.irq).collect();
        let cpus: Vec<u32> = cpus.into_iter().collect();
        out.push(HealthLine {
            kind: HealthKind::IrqsRemote,
            target: t.path.clone(),
            test: (remote.len() == 1).then(|| remote[0].into()),
            what: "irq_affinity".into(),
            before: None,
            after: None,
            limit: None,
            message: format!(
                "{}: its I/O interrupts (IRQ {}) are all served on node {} (CPUs {}) while the threads of {} ran on \
                 node {}: each completion crosses between the nodes; bootbench does not change interrupt \
                 affinity (/proc/irq/N/smp_affinity_list, irqbalance)",
                t.path,
                format_cpu_list(&numbers),
                list(&served),
                format_cpu_list(&cpus),
                remote.join(", "),
                list(&ran)
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::result::{PlacementPolicy, TestPlacement};
    use crate::verdict::analysis::testutil::{disk, doc, test};
    use crate::verdict::analysis::Metric;
    use alloc::vec;

    fn irq(n: u32, name: &str, served: &[u32]) -> Irq {
        Irq {
            irq: n,
            name: Some(name.into()),
            affinity: vec![0, 1, 2, 3],
            effective: Some(served.to_vec()),
        }
    }

    /// A two-node machine, an NVMe disk whose I/O interrupts are served
    /// on `served`, one test whose threads ran on `ran_on`.
    fn case(served: &[u32], ran_on: &[u32], nodes: usize) -> Vec<HealthLine> {
        let mut d = disk("/dev/nvme0n1", 1 << 30);
        d.numa = Some(DiskNuma {
            pci_device: Some("0000:41:00.0".into()),
            node: Some(1),
            node_cpus: vec![2, 3],
            queues: Vec::new(),
            // The admin queue on node 1 does not count.
            irqs: vec![
                irq(24, "nvme0q0", &[2]),
                irq(25, "nvme0q1", served),
                irq(26, "nvme0q2", served),
            ],
        });
        let mut t = test(
            "/dev/nvme0n1",
            crate::spec::Workload::RandRead,
            Metric::ReadIops,
            1000.0,
        );
        t.placement = Some(TestPlacement {
            policy: PlacementPolicy::Node,
            node: Some(1),
            cpus: vec![2, 3],
            mem_node: Some(1),
            reason: "on node 1".into(),
            ran_on: ran_on.to_vec(),
        });
        let mut doc = doc(vec![d], vec![t]);
        doc.host.numa_nodes = vec![
            NumaNode {
                node: 0,
                cpus: vec![0, 1],
            },
            NumaNode {
                node: 1,
                cpus: vec![2, 3],
            },
        ][..nodes]
            .to_vec();
        remote_irqs(&doc)
    }

    #[test]
    fn interrupts_all_on_the_other_node_get_a_line() {
        let lines = case(&[0, 1], &[2, 3], 2);
        assert_eq!(lines.len(), 1, "{lines:?}");
        let l = &lines[0];
        assert_eq!(
            (l.kind, l.target.as_str(), l.test.as_deref()),
            (HealthKind::IrqsRemote, "/dev/nvme0n1", Some("rand_read"))
        );
        assert!(
            l.message.contains(
                "IRQ 25-26) are all served on node 0 (CPUs 0-1) while the threads of rand_read ran on node 1"
            ),
            "{}",
            l.message
        );
    }

    #[test]
    fn no_line_when_one_interrupt_is_local_or_the_facts_are_missing() {
        assert!(case(&[1, 2], &[2, 3], 2).is_empty(), "CPU 2 serves on node 1");
        assert!(case(&[2], &[2, 3], 2).is_empty(), "all local");
        assert!(case(&[0], &[0], 2).is_empty(), "threads on node 0 with the interrupts");
        assert!(case(&[0], &[], 2).is_empty(), "ran nowhere known");
        assert!(case(&[0], &[2], 1).is_empty(), "a machine of one node");
    }
}
