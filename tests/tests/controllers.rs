//! End to end in QEMU (TCG): the controllers and disks servers have (docs/first-server.md,
//! "Controllers and disks: what was proven and how"), all in one direct boot
//! with the quick profile on every disk, all disks at once (`parallel`):
//!
//! - a MegaRAID SAS HBA (`megasas-gen2`, megaraid_sas) and an LSI 53C895A
//!   parallel SCSI HBA (`lsi53c895a`, sym53c8xx), a `scsi-hd` on each;
//! - virtio-scsi with two `scsi-hd` disks, a 512e one (physical blocks of
//!   4096) and a 4Kn one (logical blocks of 4096);
//! - USB Attached SCSI (`usb-uas`, uas) with a `scsi-hd` LUN;
//! - an LSI SAS1068 SAS HBA (`mptsas1068`, the Fusion MPT mptsas) with a
//!   `scsi-hd` of a WWN, its SAS address (Linux's mptsas attaches no end
//!   device of SAS address 0, QEMU's default);
//! - one NVMe controller with two namespaces, the second 4Kn.
//!
//! Per disk the result document must record the transport and driver, the
//! serial (a SCSI disk's from VPD page 0x80), the model (its INQUIRY
//! product), its WWN where QEMU gave one, the logical and physical block
//! sizes QEMU was given, and the
//! quick profile's read tests `ok` with direct I/O (its writes skipped: no
//! disk is granted), every direct request of a 4Kn disk aligned to 4096.
//! About 32 s under TCG (141 s one disk after another).

use std::collections::BTreeSet;

use bench_core::spec::Workload;
use bootbench_e2e::{artifacts, assert_schema_valid, boot, disks, scratch, status_of, stick_copy, the_document, Via};
use serde_json::{json, Value};

/// One disk of the boot and what the guest must record of it.
struct Expect {
    /// The disk spec given to `bootbench-qemu`.
    spec: &'static str,
    /// The serial the guest must find.
    serial: &'static str,
    /// The model (an NVMe namespace shows its controller's, QEMU's default).
    model: &'static str,
    /// `transport` in the document.
    transport: &'static str,
    /// `driver`: the controller's driver.
    driver: &'static str,
    /// (logical, physical) block size in bytes.
    blocks: (u64, u64),
    /// `wwn`, where the spec gives the disk one.
    wwn: Option<&'static str>,
}

const NVME_SERIAL: &str = "K1-NVME-2NS";

const DISKS: [Expect; 8] = [
    Expect {
        spec: "mptsas,size=64M,serial=K1-MPTSAS,model=K1 MPTSAS,wwn=5000c50015ea71ac",
        serial: "K1-MPTSAS",
        model: "K1 MPTSAS",
        transport: "sas",
        driver: "mptsas",
        blocks: (512, 512),
        wwn: Some("naa.5000c50015ea71ac"),
    },
    Expect {
        spec: "megasas,size=64M,serial=K1-MEGASAS,model=K1 MEGARAID",
        serial: "K1-MEGASAS",
        model: "K1 MEGARAID",
        transport: "scsi",
        driver: "megaraid_sas",
        blocks: (512, 512),
        wwn: None,
    },
    Expect {
        spec: "lsi,size=64M,serial=K1-LSI53C895A,model=K1 LSI SPI",
        serial: "K1-LSI53C895A",
        model: "K1 LSI SPI",
        transport: "scsi",
        driver: "sym53c8xx",
        blocks: (512, 512),
        wwn: None,
    },
    Expect {
        spec: "virtio-scsi,size=64M,serial=K1-VSCSI-512E,model=K1 VSCSI 512E,pbs=4096",
        serial: "K1-VSCSI-512E",
        model: "K1 VSCSI 512E",
        transport: "virtio",
        driver: "virtio_scsi",
        blocks: (512, 4096),
        wwn: None,
    },
    Expect {
        spec: "virtio-scsi,size=64M,serial=K1-VSCSI-4KN,model=K1 VSCSI 4KN,lbs=4096,pbs=4096",
        serial: "K1-VSCSI-4KN",
        model: "K1 VSCSI 4KN",
        transport: "virtio",
        driver: "virtio_scsi",
        blocks: (4096, 4096),
        wwn: None,
    },
    Expect {
        spec: "uas,size=64M,serial=K1-UAS,model=K1 UAS",
        serial: "K1-UAS",
        model: "K1 UAS",
        transport: "usb",
        driver: "uas",
        blocks: (512, 512),
        wwn: None,
    },
    Expect {
        spec: "nvme,size=64M,serial=K1-NVME-2NS,ns=1",
        serial: NVME_SERIAL,
        model: "QEMU NVMe Ctrl",
        transport: "nvme",
        driver: "nvme",
        blocks: (512, 512),
        wwn: None,
    },
    Expect {
        spec: "nvme,size=64M,serial=K1-NVME-2NS,ns=2,lbs=4096,pbs=4096",
        serial: NVME_SERIAL,
        model: "QEMU NVMe Ctrl",
        transport: "nvme",
        driver: "nvme",
        blocks: (4096, 4096),
        wwn: None,
    },
];

/// The targets with `serial` and these block sizes (an NVMe controller's
/// namespaces share its serial; here their block sizes tell them apart).
fn target_of<'a>(doc: &'a Value, e: &Expect) -> &'a Value {
    let found: Vec<&Value> = doc["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .filter(|t| {
            t["serial"] == e.serial
                && (t["logical_block_size"].as_u64(), t["physical_block_size"].as_u64())
                    == (Some(e.blocks.0), Some(e.blocks.1))
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one target with serial {} and logical/physical blocks {:?}, in {}",
        e.serial,
        e.blocks,
        doc["targets"]
    );
    found[0]
}

#[test]
fn k1_server_controllers_each_disk_identified_with_block_sizes_and_the_quick_profile_run() {
    let Some(a) = artifacts("k1_server_controllers") else {
        return;
    };
    let dir = scratch("k1_server_controllers");
    let specs: Vec<&str> = DISKS.iter().map(|e| e.spec).collect();
    let specs = disks(&specs);
    let img = stick_copy(&a, &dir, Some(&json!({"profile": "quick", "parallel": true})));
    let started = std::time::Instant::now();
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    eprintln!("k1: the boot took {:.1} s", started.elapsed().as_secs_f64());
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);
    assert_eq!(doc["run"]["profile"], "quick", "run: {}", doc["run"]);

    coldplug_loaded_every_controllers_driver(&outcome.serial);
    only_these_disks_are_targets(&doc);
    for e in &DISKS {
        let t = target_of(&doc, e);
        let path = t["path"].as_str().expect("a path");
        let who = format!("{} ({path})", e.serial);
        the_disk_is_identified_as_qemu_gave_it(t, e, &who);
        the_quick_profiles_reads_ran_direct_aligned_to_the_logical_block(&doc, e, path, &who);
        eprintln!(
            "k1: {who}: transport {} driver {} model {} serial {} wwn {} blocks {}/{}",
            t["transport"], t["driver"], t["model"], t["serial"], t["wwn"], e.blocks.0, e.blocks.1
        );
    }
    the_two_namespaces_are_one_controller_and_two_block_devices(&doc);
}

/// Coldplug loaded every controller's driver.
fn coldplug_loaded_every_controllers_driver(serial: &str) {
    let coldplug = serial
        .lines()
        .find(|l| l.contains("coldplug modules for the devices"))
        .unwrap_or_else(|| panic!("no coldplug line on the console"));
    for m in ["megaraid_sas", "sym53c8xx", "virtio_scsi", "uas", "nvme", "mptsas"] {
        assert!(
            coldplug.split([' ', ':', ';']).any(|w| w == m),
            "coldplug did not load {m}: {coldplug}"
        );
    }
}

/// Nothing but these disks is a target (the stick is not).
fn only_these_disks_are_targets(doc: &Value) {
    let want: BTreeSet<&str> = DISKS.iter().map(|e| e.serial).collect();
    let got: BTreeSet<&str> = doc["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["serial"].as_str())
        .collect();
    assert_eq!(got, want, "the targets' serials");
    assert_eq!(
        doc["targets"].as_array().unwrap().len(),
        DISKS.len(),
        "no other target: {}",
        doc["targets"]
    );
}

/// The target `t` of the disk `e` (`who` names it in messages) has the
/// transport, driver, model, size and WWN QEMU gave it.
fn the_disk_is_identified_as_qemu_gave_it(t: &Value, e: &Expect, who: &str) {
    for (field, want) in [("transport", e.transport), ("driver", e.driver), ("model", e.model)] {
        assert_eq!(t[field], want, "{who}: {field} is {}, expected {want:?}", t[field]);
    }
    assert_eq!(t["size_bytes"], 64 << 20, "{who}: size_bytes");
    if let Some(w) = e.wwn {
        assert_eq!(t["wwn"], w, "{who}: wwn is {}, expected {w:?}", t["wwn"]);
    }
}

/// On the target at `path` (the disk `e`, `who` in messages): every workload
/// of quick has a result, its writes skipped (no grant), its reads `ok`, and
/// every direct-I/O step's block size and range are multiples of the disk's
/// logical block.
fn the_quick_profiles_reads_ran_direct_aligned_to_the_logical_block(doc: &Value, e: &Expect, path: &str, who: &str) {
    let quick_reads = Workload::ALL.iter().filter(|w| !w.writes()).count();
    let tests: Vec<&Value> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["target"] == path)
        .collect();
    assert_eq!(
        tests.len(),
        Workload::ALL.len(),
        "{who}: every workload of quick has a result"
    );
    let mut ran = 0;
    let mut direct = 0;
    for x in &tests {
        let name = x["name"].as_str().unwrap_or("?");
        let w = Workload::from_name(x["workload"].as_str().unwrap()).expect("a known workload");
        if w.writes() {
            assert_eq!(
                status_of(x),
                "skipped",
                "{who} {name}: writes without a grant: {}",
                x["status"]
            );
            continue;
        }
        assert_eq!(status_of(x), "ok", "{who} {name}: {}", x["status"]);
        ran += 1;
        for s in x["steps"].as_array().unwrap() {
            if s["access"] != "direct" {
                continue;
            }
            direct += 1;
            let lb = e.blocks.0;
            let (bs, start, end) = (
                s["bs"].as_u64().unwrap(),
                s["range_start"].as_u64().unwrap(),
                s["range_end"].as_u64().unwrap(),
            );
            assert!(
                bs % lb == 0 && start % lb == 0 && end % lb == 0,
                "{who} {name} step {}: bs {bs}, range {start}..{end}: expected multiples of the {lb}-byte logical block",
                s["label"]
            );
        }
    }
    assert_eq!(ran, quick_reads, "{who}: the quick profile's read tests ran");
    assert!(
        direct >= 10,
        "{who}: {direct} direct-I/O steps ran, expected the quick profile's"
    );
}

/// The two namespaces: one controller (the same serial, PCI address and
/// nvmeN), two block devices with WWNs of their own.
fn the_two_namespaces_are_one_controller_and_two_block_devices(doc: &Value) {
    let (ns1, ns2) = (target_of(doc, &DISKS[6]), target_of(doc, &DISKS[7]));
    assert_eq!(ns1["pci_path"], ns2["pci_path"], "one NVMe controller");
    let ctrl = |t: &Value| {
        t["name"]
            .as_str()
            .and_then(|n| n.rsplit_once('n').map(|(c, _)| c.to_string()))
    };
    assert!(
        ctrl(ns1).is_some() && ctrl(ns1) == ctrl(ns2),
        "{} and {}",
        ns1["name"],
        ns2["name"]
    );
    assert_ne!(ns1["path"], ns2["path"]);
    assert!(
        ns1["wwn"].is_string() && ns1["wwn"] != ns2["wwn"],
        "{} vs {}",
        ns1["wwn"],
        ns2["wwn"]
    );
}
