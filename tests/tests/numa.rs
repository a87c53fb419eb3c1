//! End to end in QEMU (TCG): a test's threads follow the disk's NUMA node
//! (README "Placement"). Same harness as `e2e.rs`; tests tiered by name
//! (`n` for NUMA).
//!
//! - `n1`: a q35 machine of 4 CPUs in two NUMA nodes (CPUs 0-1 node 0,
//!   2-3 node 1, memory split), an NVMe drive behind a root port of a
//!   `pxb-pcie` expander bridge on node 1, another on node 0, and a virtio
//!   disk on the main bus, with a short config: a 2-job random read by
//!   default, the same with `placement` `any`, and with `cpus_allowed` 1.
//!   The document lists both nodes with their CPUs, records node 1 and its
//!   CPUs for the first drive, node 0 for the second, each with its queues
//!   and interrupts; the default test on each ran pinned to its node's
//!   CPUs, its buffers on that node, and was seen on those CPUs only; the
//!   `any` test was not pinned; the `cpus_allowed` test ran on CPU 1 only,
//!   whichever node its disk is on; the console says each placement, and
//!   no disk's interrupts are all remote (QEMU's NVMe gives each CPU a
//!   queue of its own). The main-bus disk behaves as its `numa_node` says
//!   (Debian's 6.1 in QEMU 7.2 gives it -1: QEMU's main host bridge has no
//!   proximity domain, so it runs unpinned).

use bootbench_e2e::{
    artifacts, assert_schema_valid, boot_numa, disks, status_of, stick_copy, target_by_serial, tests_on, the_document,
    Scratch,
};
use serde_json::{json, Value};

/// The CPUs of a JSON array of numbers.
fn cpus(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap_or_else(|| panic!("a CPU list: {v}"))
        .iter()
        .map(|c| c.as_u64().expect("a CPU number"))
        .collect()
}

/// The test named `name` on the disk of `serial`.
fn test<'a>(doc: &'a Value, serial: &str, name: &str) -> &'a Value {
    tests_on(doc, serial)
        .into_iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} on {serial}"))
}

/// The default test on a disk of node `node` (CPUs `node_cpus`) ran there.
fn ran_on_its_node(doc: &Value, serial: &str, node: u64, node_cpus: &[u64]) {
    let t = target_by_serial(doc, serial);
    let n = &t["numa"];
    assert_eq!(n["node"], node, "{serial}: {n}");
    assert_eq!(cpus(&n["node_cpus"]), node_cpus, "{serial}: {n}");
    assert!(
        !cpus(&n["irqs"][0]["affinity"]).is_empty(),
        "{serial}: its interrupts: {n}"
    );
    assert!(
        n["queues"].as_array().is_some_and(|q| !q.is_empty()),
        "{serial}: its queues: {n}"
    );
    let r = test(doc, serial, "rand_read_4k");
    assert_eq!(status_of(r), "ok", "{serial}: {}", r["status"]);
    let p = &r["placement"];
    assert_eq!(
        (&p["policy"], &p["node"], &p["mem_node"]),
        (&json!("node"), &json!(node), &json!(node)),
        "{p}"
    );
    assert_eq!(cpus(&p["cpus"]), node_cpus, "{p}");
    let ran = cpus(&p["ran_on"]);
    assert!(
        !ran.is_empty() && ran.iter().all(|c| node_cpus.contains(c)),
        "{serial} ran on {ran:?}: {p}"
    );
}

#[test]
fn n1_threads_follow_the_disks_numa_node() {
    let Some(a) = artifacts("n1_numa") else {
        return;
    };
    let scratch = Scratch::new("n1_numa");
    let dir = scratch.0.clone();
    let specs = disks(&[
        "nvme,size=64M,serial=N1-NODE1,node=1",
        "nvme,size=64M,serial=N1-NODE0,node=0",
        "virtio,size=64M,serial=N1-MAIN",
    ]);
    let config = json!({
        "tests": [
            {"workload": "rand_read", "name": "rand_read_4k", "bs": "4K", "size": "8M", "runtime": "1s", "jobs": 2, "iodepth": 4},
            {"workload": "rand_read", "name": "rand_read_any", "bs": "4K", "size": "8M", "runtime": "1s", "placement": "any"},
            {"workload": "rand_read", "name": "rand_read_cpu1", "bs": "4K", "size": "8M", "runtime": "1s", "cpus_allowed": "1"}
        ]
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot_numa(&a, &dir, &img, &specs, 4, 2);
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);
    assert_eq!(
        doc["host"]["numa_nodes"],
        json!([{"node": 0, "cpus": [0, 1]}, {"node": 1, "cpus": [2, 3]}]),
        "{}",
        doc["host"]
    );
    ran_on_its_node(&doc, "N1-NODE1", 1, &[2, 3]);
    ran_on_its_node(&doc, "N1-NODE0", 0, &[0, 1]);
    assert!(
        outcome.serial.contains(": placement: 0000:")
            && outcome.serial.contains(" is on node 1: its CPUs 2-3, buffers there"),
        "the console says the placement"
    );
    for serial in ["N1-NODE1", "N1-NODE0", "N1-MAIN"] {
        let any = &test(&doc, serial, "rand_read_any")["placement"];
        assert_eq!(
            (&any["policy"], cpus(&any["cpus"]).len()),
            (&json!("any"), 0),
            "{serial}: {any}"
        );
        let one = &test(&doc, serial, "rand_read_cpu1")["placement"];
        assert_eq!(one["policy"], "cpus", "{one}");
        assert_eq!(
            cpus(&one["ran_on"]),
            [1],
            "{serial}: cpus_allowed 1 ran on CPU 1 only: {one}"
        );
    }
    // The main bus: whatever node the guest's kernel gives it, the
    // placement follows it.
    let main = target_by_serial(&doc, "N1-MAIN");
    let p = &test(&doc, "N1-MAIN", "rand_read_4k")["placement"];
    eprintln!("n1: the main bus's virtio disk: numa {} placement {p}", main["numa"]);
    if main["numa"]["node"].is_null() {
        assert_eq!(p["policy"], "any", "{p}");
    } else {
        assert_eq!(p["node"], main["numa"]["node"], "{p}");
    }
    let remote: Vec<&Value> = doc["health_analysis"]
        .as_array()
        .map(|l| l.iter().filter(|l| l["kind"] == "irqs_remote").collect())
        .unwrap_or_default();
    assert!(remote.is_empty(), "every CPU has a queue of its own: {remote:?}");
}
