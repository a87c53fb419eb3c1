//! End to end in QEMU (TCG): the path to every disk is recorded and judged
//! (docs/acceptance.md, "The path to a disk"). Same harness as `e2e.rs`;
//! tests tiered by name (`l` for link).
//!
//! - `l1`: one q35 boot with an NVMe drive behind a `pcie-root-port`
//!   limited to 2.5 GT/s x1 (the disk spec's `link=2_5x1`) and a SATA disk
//!   on AHCI, the guest kernel told `libata.force=1.5Gbps`, and a second
//!   NVMe drive behind a 16 GT/s x4 port, with a config that
//!   reads each disk once. The NVMe drive's link (the drive and its root
//!   port: speed, width, their maxima) and the SATA disk's (`sata_spd`, the
//!   host's limit) are recorded before and after the run, said on the
//!   console, and judged by both link rules. QEMU 7.2's emulated devices
//!   cannot train below their own maximum (an NVMe endpoint's link
//!   capability is 2.5 GT/s x1 in every slot; AHCI's CAP.ISS says Gen1 and
//!   its IDENTIFY gives no SATA speeds), so what this boot proves is the
//!   reading and the passing verdicts; the WARN that a link below both ends'
//!   maxima gives is proven over fixture sysfs trees (`bench-core`
//!   `device::link`, `init` `disks::link`).

use bootbench_e2e::{
    artifacts, assert_schema_valid, boot, disks, stick_copy, target_by_serial, the_document, Scratch, Via,
};
use serde_json::{json, Value};

/// The checks of `rule` in `serial`'s verdict.
fn checks<'a>(doc: &'a Value, serial: &str, rule: &str) -> Vec<&'a Value> {
    doc["acceptance"]["targets"]
        .as_array()
        .expect("verdicts")
        .iter()
        .filter(|t| t["serial"] == serial)
        .flat_map(|t| t["checks"].as_array().expect("checks").iter())
        .filter(|c| c["rule"] == rule)
        .collect()
}

#[test]
fn l1_an_nvme_link_behind_a_limited_root_port_and_a_sata_link_forced_to_1_5_gbps() {
    let Some(a) = artifacts("l1_link") else {
        return;
    };
    let scratch = Scratch::new("l1_link");
    let dir = scratch.0.clone();
    let specs = disks(&[
        "nvme,size=64M,serial=L1-NVME,link=2_5x1",
        "nvme,size=64M,serial=L1-FAST,link=16x4",
        "sata,size=64M,serial=L1-SATA",
    ]);
    let config = json!({
        "tests": [{"workload": "seq_read", "name": "seq_read_1m", "bs": "1M", "size": "4M"}]
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "libata.force=1.5Gbps");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);

    let nvme = target_by_serial(&doc, "L1-NVME");
    eprintln!("nvme link: {}", nvme["link"]);
    for when in ["before", "after"] {
        let pcie = &nvme["link"][when]["pcie"];
        assert_eq!(pcie[0]["role"], "device", "{when}: {pcie}");
        assert_eq!(
            (&pcie[0]["speed_mts"], &pcie[0]["width"]),
            (&json!(2500), &json!(1)),
            "{when}: {pcie}"
        );
        assert_eq!(pcie[1]["role"], "port", "{when}: {pcie}");
        // The root port's own maximum is the limit QEMU was given.
        assert_eq!(
            (&pcie[1]["max_speed_mts"], &pcie[1]["max_width"]),
            (&json!(2500), &json!(1)),
            "{when}: {pcie}"
        );
    }
    let speed = checks(&doc, "L1-NVME", "link_speed");
    assert_eq!(speed.len(), 1, "{speed:?}");
    assert_eq!(speed[0]["verdict"], "pass", "{}", speed[0]);
    let errors = checks(&doc, "L1-NVME", "link_errors");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["verdict"], "pass", "{}", errors[0]);

    // A 16 GT/s x4 port over the same drive: the port says so, the link
    // trains at the drive's 2.5 GT/s x1, and that is no WARN (the drive's
    // end allows no more).
    let fast = target_by_serial(&doc, "L1-FAST");
    let pcie = &fast["link"]["before"]["pcie"];
    assert_eq!(
        (&pcie[0]["speed_mts"], &pcie[0]["max_speed_mts"]),
        (&json!(2500), &json!(2500)),
        "{pcie}"
    );
    assert_eq!(
        (&pcie[1]["max_speed_mts"], &pcie[1]["max_width"]),
        (&json!(16000), &json!(4)),
        "{pcie}"
    );
    assert_eq!(
        (&pcie[1]["speed_mts"], &pcie[1]["width"]),
        (&json!(2500), &json!(1)),
        "{pcie}"
    );
    let speed = checks(&doc, "L1-FAST", "link_speed");
    assert_eq!(speed[0]["verdict"], "pass", "{}", speed[0]);

    let sata = target_by_serial(&doc, "L1-SATA");
    eprintln!("sata link: {}", sata["link"]);
    for when in ["before", "after"] {
        let s = &sata["link"][when]["sata"];
        assert_eq!(s["speed_mbps"], 1500, "{when}: {s}");
        // libata.force=1.5Gbps set the link's limit; AHCI's CAP says Gen1 too.
        assert_eq!(s["host_max_mbps"], 1500, "{when}: {s}");
    }
    let speed = checks(&doc, "L1-SATA", "link_speed");
    assert_eq!(speed.len(), 1, "{speed:?}");
    assert_eq!(speed[0]["verdict"], "pass", "{}", speed[0]);

    for when in ["before the run", "after the run"] {
        assert!(
            outcome
                .serial
                .lines()
                .filter(|l| l.contains(&format!("link {when}: ")))
                .count()
                >= 2,
            "the console says both disks' links {when}"
        );
    }
    // Reading the path sends no command the drive aborts (QEMU's IDE has
    // no Phy Event Counters log, and IDENTIFY says so): no ATA error.
    assert!(!outcome.serial.contains("failed command"), "an ATA command failed");
}
