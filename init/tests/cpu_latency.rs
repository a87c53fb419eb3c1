//! The CPU wake-up latency limit a run holds while it measures (config
//! `cpu_dma_latency`, docs/engines-and-fidelity.md), watched from outside the
//! real binary through the kernel's own device: held while the tests run,
//! at the value asked, withdrawn when they end, never asked with `"off"`.
//! A test binary of its own, so no other test's run holds a limit
//! meanwhile. Needs root (the device is root's) and /dev/shm.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::ShmFile;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_bootbench-init");
const DEVICE: &str = "/dev/cpu_dma_latency";

/// The limit in force, microseconds (the device's native-endian s32).
fn in_force() -> Option<u32> {
    let mut b = [0u8; 4];
    std::fs::File::open(DEVICE).ok()?.read_exact(&mut b).ok()?;
    u32::try_from(i32::from_ne_bytes(b)).ok()
}

/// Run a 1.5 s read test on `disk` with `extra` in the config, reading the
/// limit in force every 10 ms meanwhile: the document, and the smallest
/// limit seen.
fn run_watched(disk: &str, extra: &str) -> (Value, u32) {
    let cfg = ShmFile::new(
        "cpu-latency.json",
        format!(r#"{{"targets":["{disk}"],"tests":[{{"workload":"seq_read","bs":"64k","runtime":"1500ms"}}]{extra}}}"#)
            .as_bytes(),
    );
    let mut child = Command::new(BIN)
        .args(["run", "--config", cfg.path()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn bootbench-init");
    let mut out = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        out.read_to_string(&mut s).expect("read stdout");
        s
    });
    let mut lowest = u32::MAX;
    while child.try_wait().expect("wait").is_none() {
        lowest = lowest.min(in_force().expect("read the limit"));
        std::thread::sleep(Duration::from_millis(10));
    }
    let text = reader.join().expect("reader");
    (serde_json::from_str(&text).expect("a result document"), lowest)
}

#[test]
fn a_run_holds_the_limit_while_it_measures_and_withdraws_it_after() {
    let Some(before) = in_force() else {
        eprintln!("skipped: {DEVICE} cannot be read (not root, or no such device)");
        return;
    };
    if before <= 20 {
        eprintln!("skipped: another program holds the limit at {before} us; a run's own cannot be told apart");
        return;
    }
    let disk = ShmFile::new("cpu-latency.img", &common::random_bytes(16 << 20, 7));
    for (extra, asked, seen) in [
        ("", Some(0), 0),
        (r#","cpu_dma_latency":20"#, Some(20), 20),
        (r#","cpu_dma_latency":"off""#, None, before),
    ] {
        let (doc, lowest) = run_watched(disk.path(), extra);
        assert_eq!(doc["tests"][0]["status"]["state"], "ok", "{extra}: {}", doc["tests"][0]);
        assert_eq!(lowest, seen, "{extra}: the lowest limit in force during the run");
        assert_eq!(in_force(), Some(before), "{extra}: withdrawn when the run ended");
        let rec = &doc["run"]["cpu_dma_latency"];
        assert_eq!(rec["requested_us"], serde_json::json!(asked), "{extra}: {rec}");
        assert_eq!(rec["held"], asked.is_some(), "{extra}: {rec}");
        assert_eq!(rec["before_us"], before, "{extra}: {rec}");
        assert_eq!(rec["during_us"], seen, "{extra}: {rec}");
        assert_eq!(rec["error"], Value::Null, "{extra}: {rec}");
    }
}
