//! Result documents of a rack of machines for the `fleet` tests, made from
//! one real run (`tests/fixtures/qemu-4disks-quick.json`: NVMe, SATA SSD,
//! SATA HDD and virtio disks, the quick profile): each machine gets its own
//! DMI identity and disk serials, and the figures of its tests' summaries
//! (what `fleet` reads; the steps are left as they were) scaled, one disk
//! more than the others when asked.

use std::path::Path;

use serde_json::{json, Value};

/// The run every machine's document is made from.
const BASE: &str = "tests/fixtures/qemu-4disks-quick.json";

/// The summary fields that hold figures.
const FIGURES: [&str; 4] = ["read_bytes_per_sec", "write_bytes_per_sec", "read_iops", "write_iops"];

/// One machine of the rack.
#[derive(Clone, Debug)]
pub struct Machine<'a> {
    /// DMI product serial (also the prefix of its disks' serials).
    pub serial: &'a str,
    /// DMI product name (the vendor is `Dell Inc.`).
    pub product: &'a str,
    /// Host name (`(none)`, a booted stick's, names no machine).
    pub hostname: &'a str,
    /// Every figure of the machine times this.
    pub scale: f64,
    /// One disk's figures times this too: (path, factor).
    pub slow: Option<(&'a str, f64)>,
}

impl<'a> Machine<'a> {
    /// A machine of model `PowerEdge R640` with the base figures.
    pub fn r640(serial: &'a str) -> Machine<'a> {
        Machine {
            serial,
            product: "PowerEdge R640",
            hostname: "(none)",
            scale: 1.0,
            slow: None,
        }
    }
}

fn base() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(BASE);
    serde_json::from_str(&std::fs::read_to_string(&path).expect("the base document")).expect("it parses")
}

/// The document of machine `m`, as JSON text.
pub fn document(m: &Machine) -> String {
    let mut d = base();
    d["host"]["sys_vendor"] = json!("Dell Inc.");
    d["host"]["product_name"] = json!(m.product);
    d["host"]["product_serial"] = json!(m.serial);
    d["host"]["hostname"] = json!(m.hostname);
    for t in d["targets"].as_array_mut().expect("targets") {
        if let Some(s) = t["serial"].as_str() {
            t["serial"] = json!(format!("{}-{s}", m.serial));
        }
    }
    for t in d["tests"].as_array_mut().expect("tests") {
        let mut f = m.scale;
        if m.slow.is_some_and(|(p, _)| t["target"] == p) {
            f *= m.slow.map_or(1.0, |(_, x)| x);
        }
        for k in FIGURES {
            if let Some(v) = t["summary"][k].as_f64() {
                t["summary"][k] = json!(v * f);
            }
        }
    }
    d.to_string()
}

/// Write each machine's document to `dir/<serial>-1.json` (as a stick
/// names them); the paths.
pub fn write(dir: &Path, machines: &[Machine]) -> Vec<String> {
    std::fs::create_dir_all(dir).expect("the rack's directory");
    machines
        .iter()
        .map(|m| {
            let p = dir.join(format!("{}-1.json", m.serial));
            std::fs::write(&p, document(m)).expect("write a document");
            p.display().to_string()
        })
        .collect()
}

/// The three machines of the test: RACK-01 and RACK-02 (3% faster
/// on every disk), and RACK-03, whose SATA SSD (`/dev/sda`, model
/// `BOOTBENCH SATA SSD 2`) is 30% slower than the same model on the other
/// two.
pub fn three_with_a_slow_disk() -> Vec<Machine<'static>> {
    vec![
        Machine::r640("RACK-01"),
        Machine {
            scale: 1.03,
            ..Machine::r640("RACK-02")
        },
        Machine {
            slow: Some(("/dev/sda", 0.7)),
            ..Machine::r640("RACK-03")
        },
    ]
}
