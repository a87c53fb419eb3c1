//! Where a test's threads run and its buffers are allocated: by default on
//! the CPUs of the NUMA node of the disk's PCI device, buffers preferred
//! there (`placement` `"disk"`); on a node the config names (`placement`
//! N); wherever the scheduler puts them (`"any"`, and a disk with no node:
//! `numa_node` -1, not on PCI, a machine of one node); or on the CPUs
//! `cpus_allowed` names, which overrides `placement` as fio's
//! `cpus_allowed` does. [`decide`] is the pure decision with its reason;
//! [`apply`] puts it on the test's steps, which the runner's job threads
//! follow (`run/engine/runner.rs`: pinned, then the memory policy, then
//! the queue and its buffers). [`read_disks`] reads each disk's place
//! ([`crate::disks::numa`]) once before the run.

use bench_core::document::result::{DiskNuma, NumaNode, PlacementPolicy, TargetKind, TestPlacement};
use bench_core::spec::{Params, Step};

use crate::plan::Plan;
use bench_core::vocab::cpus::{format_cpu_list, Placement};

/// The placement of a test with `p` on a disk at `disk` (`None`: not a
/// disk on PCI: a file, a loop device, an array, a layer), on a machine of
/// `nodes`; `ran_on` empty, filled once the test ran.
pub fn decide(p: &Params, disk: Option<&DiskNuma>, nodes: &[NumaNode]) -> TestPlacement {
    let any = |reason: String| TestPlacement {
        policy: PlacementPolicy::Any,
        node: None,
        cpus: Vec::new(),
        mem_node: None,
        reason,
        ran_on: Vec::new(),
    };
    let on_node = |node: u32, cpus: Vec<u32>, reason: String| TestPlacement {
        policy: PlacementPolicy::Node,
        node: Some(node),
        cpus,
        mem_node: Some(node),
        reason,
        ran_on: Vec::new(),
    };
    if let Some(c) = &p.cpus_allowed {
        return TestPlacement {
            policy: PlacementPolicy::Cpus,
            node: None,
            cpus: c.cpus().to_vec(),
            mem_node: None,
            reason: format!(
                "cpus_allowed {c} from the config (placement {} not used; buffers where the threads first touch them)",
                p.placement
            ),
            ran_on: Vec::new(),
        };
    }
    let cpus_of = |n: u32| nodes.iter().find(|x| x.node == n).map(|x| x.cpus.clone());
    match p.placement {
        Placement::Any => any("placement \"any\" in the config: not pinned, as the scheduler places them".into()),
        Placement::Node(n) => match cpus_of(n) {
            Some(cpus) if !cpus.is_empty() => {
                let list = format_cpu_list(&cpus);
                on_node(
                    n,
                    cpus,
                    format!("placement {n} in the config: node {n}'s CPUs {list}, buffers there"),
                )
            }
            Some(_) => any(format!(
                "placement {n} in the config, but node {n} has no CPUs: not pinned"
            )),
            None => any(format!(
                "placement {n} in the config, but this machine has no node {n} (nodes: {}): not pinned",
                node_list(nodes)
            )),
        },
        Placement::Disk => {
            let Some(d) = disk else {
                return any("not a disk on a PCI device: no NUMA node to follow, not pinned".into());
            };
            let dev = d.pci_device.as_deref().unwrap_or("its PCI device");
            let Some(n) = d.node else {
                return any(format!("{dev} has no NUMA node (numa_node -1): not pinned"));
            };
            if nodes.len() < 2 {
                return any(format!(
                    "{dev} is on node {n}, the machine's only node: nothing to follow, not pinned"
                ));
            }
            match cpus_of(n).filter(|c| !c.is_empty()) {
                Some(cpus) => {
                    let list = format_cpu_list(&cpus);
                    on_node(n, cpus, format!("{dev} is on node {n}: its CPUs {list}, buffers there"))
                }
                None => any(format!("{dev} is on node {n}, which has no CPUs: not pinned")),
            }
        }
    }
}

/// Each disk's NUMA node, its CPUs, its queues and their interrupts
/// ([`crate::disks::numa`]), read once before the run; none for a
/// simulated run, an absent disk, a file.
pub fn read_disks(plan: &mut Plan) {
    if plan.simulated {
        return;
    }
    for ti in 0..plan.targets.len() {
        let t = &plan.targets[ti];
        if !plan.is_disk(ti) || t.sim.is_some() || t.missing.is_some() || t.info.kind != TargetKind::Block {
            continue;
        }
        let numa = t.info.name.as_deref().and_then(crate::disks::numa::of_disk_named);
        plan.targets[ti].info.numa = numa;
    }
}

/// The machine's node numbers, `0,1`.
fn node_list(nodes: &[NumaNode]) -> String {
    let n: Vec<u32> = nodes.iter().map(|x| x.node).collect();
    if n.is_empty() {
        "none listed".into()
    } else {
        format_cpu_list(&n)
    }
}

/// Put `pl` on a test's `steps`: a node's CPUs become each step's
/// `cpus_allowed` (split by `cpus_allowed_policy` as fio's), its node the
/// buffers' `mem_node`. `cpus_allowed` from the config is on the steps
/// already; `any` leaves them as planned.
pub fn apply(pl: &TestPlacement, steps: &mut [Step]) {
    if pl.policy != PlacementPolicy::Node {
        return;
    }
    for s in steps {
        s.engine.cpus_allowed.clone_from(&pl.cpus);
        s.engine.mem_node = pl.mem_node;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::vocab::cpus::CpuSet;

    fn two_nodes() -> Vec<NumaNode> {
        vec![
            NumaNode {
                node: 0,
                cpus: vec![0, 1],
            },
            NumaNode {
                node: 1,
                cpus: vec![2, 3],
            },
        ]
    }

    fn disk(node: Option<u32>) -> DiskNuma {
        DiskNuma {
            pci_device: Some("0000:41:00.0".into()),
            node,
            ..DiskNuma::default()
        }
    }

    fn with(placement: Placement, cpus: Option<&str>) -> Params {
        let mut p = Params::defaults();
        p.placement = placement;
        p.cpus_allowed = cpus.map(|c| CpuSet::parse(c).unwrap());
        p
    }

    /// A case: the params, the disk, the machine; the policy, node, CPUs
    /// and words the reason holds.
    type Case<'a> = (
        Params,
        Option<&'a DiskNuma>,
        &'a [NumaNode],
        PlacementPolicy,
        Option<u32>,
        Vec<u32>,
        &'static str,
    );

    fn cases<'a>(two: &'a [NumaNode], one: &'a [NumaNode], on1: &'a DiskNuma, none: &'a DiskNuma) -> Vec<Case<'a>> {
        use PlacementPolicy::{Any, Cpus, Node};
        let (disk, any, node) = (Placement::Disk, Placement::Any, Placement::Node);
        vec![
            (
                with(disk, None),
                Some(on1),
                two,
                Node,
                Some(1),
                vec![2, 3],
                "0000:41:00.0 is on node 1: its CPUs 2-3",
            ),
            (with(disk, None), Some(none), two, Any, None, vec![], "numa_node -1"),
            (
                with(disk, None),
                Some(on1),
                one,
                Any,
                None,
                vec![],
                "the machine's only node",
            ),
            (
                with(disk, None),
                None,
                two,
                Any,
                None,
                vec![],
                "not a disk on a PCI device",
            ),
            (with(any, None), Some(on1), two, Any, None, vec![], "placement \"any\""),
            (
                with(node(0), None),
                Some(on1),
                two,
                Node,
                Some(0),
                vec![0, 1],
                "placement 0 in the config",
            ),
            (
                with(node(0), None),
                None,
                one,
                Node,
                Some(0),
                vec![0, 1, 2, 3],
                "node 0's CPUs 0-3",
            ),
            (
                with(node(5), None),
                Some(on1),
                two,
                Any,
                None,
                vec![],
                "no node 5 (nodes: 0-1)",
            ),
            (
                with(disk, Some("0,3")),
                Some(on1),
                two,
                Cpus,
                None,
                vec![0, 3],
                "cpus_allowed 0,3 from the config",
            ),
            (
                with(any, Some("1")),
                Some(on1),
                two,
                Cpus,
                None,
                vec![1],
                "placement any not used",
            ),
        ]
    }

    /// The default follows the disk's node; a disk with no node, a machine
    /// of one node, `any`, a node, `cpus_allowed`: each as the module says.
    #[test]
    fn the_default_follows_the_disk_and_the_config_overrides() {
        let two = two_nodes();
        let one = [NumaNode {
            node: 0,
            cpus: vec![0, 1, 2, 3],
        }];
        let (on1, none) = (disk(Some(1)), disk(None));
        for (i, (p, d, nodes, policy, node, cpus, says)) in cases(&two, &one, &on1, &none).into_iter().enumerate() {
            let got = decide(&p, d, nodes);
            assert_eq!(
                (got.policy, got.node, got.cpus.clone()),
                (policy, node, cpus),
                "case {i}: {got:?}"
            );
            let mem = if policy == PlacementPolicy::Node { node } else { None };
            assert_eq!(got.mem_node, mem, "case {i}");
            assert!(got.reason.contains(says), "case {i}: {}", got.reason);
            assert!(got.ran_on.is_empty());
        }
    }

    #[test]
    fn a_node_placement_pins_every_step_and_any_leaves_them() {
        let spec = bench_core::spec::TestSpec {
            name: "r".into(),
            workload: bench_core::spec::Workload::RandRead,
            params: Params::defaults(),
        };
        let geom = bench_core::io::Geometry {
            size: 64 << 20,
            logical_block: 512,
            physical_block: 512,
        };
        let one = bench_core::engine::plan::expand(&spec, &geom).expect("steps");
        let mut steps = vec![one[0].clone(), one[0].clone()];
        steps[1].engine.cpus_allowed = vec![7];
        let any = decide(&with(Placement::Any, None), None, &two_nodes());
        apply(&any, &mut steps);
        assert_eq!(
            (
                steps[0].engine.cpus_allowed.len(),
                steps[1].engine.cpus_allowed.as_slice()
            ),
            (0, &[7][..])
        );
        let on1 = decide(&Params::defaults(), Some(&disk(Some(1))), &two_nodes());
        apply(&on1, &mut steps);
        for s in &steps {
            assert_eq!(
                (s.engine.cpus_allowed.as_slice(), s.engine.mem_node),
                (&[2, 3][..], Some(1))
            );
        }
    }
}
