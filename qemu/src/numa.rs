//! NUMA for the guest: the machine's nodes (`-object memory-backend-ram`
//! and `-numa node` per node, CPUs and memory split evenly, node `i` the
//! `i`-th share) and the PCIe expander bridges that put a disk on a node
//! (`-device pxb-pcie,numa_node=N` on `pcie.0`, a `pcie-root-port` on it
//! per disk, the disk behind that port: the guest reads `numa_node` N for
//! it). q35 only: `pxb-pcie` is a PCI Express device.

/// The guest's NUMA nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Numa {
    /// How many nodes; the machine's CPUs and memory divide evenly among them.
    pub nodes: u32,
}

/// `-object`/`-numa` pairs for `numa` on a machine of `cpus` CPUs and
/// `memory_mib` MiB: node `i` gets CPUs `i*c .. (i+1)*c - 1` (`c = cpus /
/// nodes`) and `memory_mib / nodes` MiB, the last node what is left over
/// too; a node left without CPUs has memory only. No nodes: nothing.
pub fn numa_args(numa: Numa, cpus: u32, memory_mib: u32) -> Vec<String> {
    let n = numa.nodes;
    let mut v = Vec::new();
    if n == 0 {
        return v;
    }
    let (c, m) = (cpus / n, memory_mib / n);
    for i in 0..n {
        let last = i + 1 == n;
        let (first_cpu, cpus_here) = (i * c, if last { cpus - i * c } else { c });
        let mem = if last { memory_mib - i * m } else { m };
        let mut node = format!("node,nodeid={i}");
        if cpus_here > 0 {
            node.push_str(&format!(",cpus={first_cpu}-{}", first_cpu + cpus_here - 1));
        }
        node.push_str(&format!(",memdev=numa-mem{i}"));
        v.extend([
            "-object".to_owned(),
            format!("memory-backend-ram,id=numa-mem{i},size={mem}M"),
            "-numa".to_owned(),
            node,
        ]);
    }
    v
}

/// The expander bridge of node `node`'s disks.
fn pxb_id(node: u32) -> String {
    format!("pxb-node{node}")
}

/// The root port of the disk whose drive id is `drive` (`d0`): the `bus=`
/// of its device.
pub fn port_id(drive: &str) -> String {
    format!("numa-port-{drive}")
}

/// The expander bridge of `node` (once, before its first port: `seen`
/// holds the nodes that have one) and a root port on it for the disk
/// whose drive id is `drive`, its `index`-th disk among all. Bus numbers:
/// 32 per node from 64 up (the main bus keeps 0-63); chassis numbers from
/// 64 up, one per port.
pub fn expander_args(node: u32, drive: &str, index: usize, seen: &mut Vec<u32>) -> Vec<String> {
    let mut v = Vec::new();
    if !seen.contains(&node) {
        v.extend([
            "-device".to_owned(),
            format!(
                "pxb-pcie,id={},bus_nr={},numa_node={node},bus=pcie.0",
                pxb_id(node),
                64 + 32 * node
            ),
        ]);
        seen.push(node);
    }
    v.extend([
        "-device".to_owned(),
        format!(
            "pcie-root-port,id={},bus={},chassis={},slot=0",
            port_id(drive),
            pxb_id(node),
            64 + index
        ),
    ]);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_split_cpus_and_memory() {
        let v = numa_args(Numa { nodes: 2 }, 4, 1024);
        assert_eq!(
            v,
            [
                "-object",
                "memory-backend-ram,id=numa-mem0,size=512M",
                "-numa",
                "node,nodeid=0,cpus=0-1,memdev=numa-mem0",
                "-object",
                "memory-backend-ram,id=numa-mem1,size=512M",
                "-numa",
                "node,nodeid=1,cpus=2-3,memdev=numa-mem1"
            ]
        );
        let odd = numa_args(Numa { nodes: 3 }, 4, 1000);
        assert_eq!(odd[3], "node,nodeid=0,cpus=0-0,memdev=numa-mem0");
        assert_eq!(
            (odd[9].as_str(), odd[11].as_str()),
            (
                "memory-backend-ram,id=numa-mem2,size=334M",
                "node,nodeid=2,cpus=2-3,memdev=numa-mem2"
            )
        );
        let few = numa_args(Numa { nodes: 2 }, 1, 512);
        assert_eq!(
            (few[3].as_str(), few[7].as_str()),
            (
                "node,nodeid=0,memdev=numa-mem0",
                "node,nodeid=1,cpus=0-0,memdev=numa-mem1"
            ),
            "a node of memory only"
        );
        assert!(numa_args(Numa { nodes: 0 }, 4, 1024).is_empty());
    }

    #[test]
    fn one_bridge_per_node_one_port_per_disk() {
        let mut seen = Vec::new();
        let a = expander_args(1, "d0", 0, &mut seen);
        let b = expander_args(1, "d1", 1, &mut seen);
        assert_eq!(
            a,
            [
                "-device",
                "pxb-pcie,id=pxb-node1,bus_nr=96,numa_node=1,bus=pcie.0",
                "-device",
                "pcie-root-port,id=numa-port-d0,bus=pxb-node1,chassis=64,slot=0"
            ]
        );
        assert_eq!(
            b,
            [
                "-device",
                "pcie-root-port,id=numa-port-d1,bus=pxb-node1,chassis=65,slot=0"
            ]
        );
        assert_eq!(port_id("d1"), "numa-port-d1");
    }
}
