//! End to end in QEMU (TCG): the engines for the fastest drives read what
//! the standard one reads (issue #50, "An engine for the fastest drives").
//! Same harness as `e2e.rs`; tests tiered by name (`f` for fast engines).
//!
//! - `f1`: one boot, three small disks: an NVMe drive filled with known
//!   random data (not granted), a blank NVMe drive (granted) and a virtio
//!   disk with known random data. The NVMe drives are read whole, once,
//!   sequentially, with each engine: psync, io_uring, io_uring with polled
//!   completions (`hipri`), io_uring with a submission-polling thread
//!   (`sqthread_poll`, `sq_thread_idle` 10ms), NVMe passthrough
//!   (`ioengine` `io_uring_cmd`, on `/dev/ngXnY`) plain, polled and
//!   with SQPOLL; each test records `read_digest`, and every digest equals
//!   the one computed here from the backing file, so each engine read the
//!   same bytes; each step's engine record says which engine and flags
//!   ran (IOPOLL, SQPOLL, SQE128/CQE32, the char device, nsid, LBA size).
//!   The image's kernel command line has `nvme.poll_queues=`, so the
//!   polled tests run on NVMe; on the virtio disk (no poll queues, no
//!   `/dev/ng`) they are skipped with a reason naming the disk and what
//!   it lacks. A passthrough write with verify runs on the granted drive
//!   only (its first MiBs change and are read back as written) and is
//!   refused on the other two, whose bytes do not change.

use bootbench_e2e::{
    artifacts, assert_schema_valid, boot, checksum, disks, disks_with_contents, path_of, status_of, stick_copy,
    target_by_serial, tests_at, the_document, Scratch, Via,
};
use serde_json::{json, Value};

const CONFIRM: &str = "I understand this destroys data";
const SIZE: u64 = 16 << 20;
const BS: u64 = 128 << 10;

/// What a whole sequential read of `file` in `BS` requests digests to
/// (`bench_core::io::read_digest` summed, as a step records it).
fn expected_digest(file: &std::path::Path) -> String {
    let data = std::fs::read(file).expect("backing file");
    let sum = data
        .chunks(usize::try_from(BS).expect("fits"))
        .enumerate()
        .fold(0u64, |a, (i, c)| {
            a.wrapping_add(bench_core::io::read_digest(BS * u64::try_from(i).expect("fits"), c))
        });
    format!("{sum:016x}")
}

/// The read tests: (name, its engine options).
fn read_tests() -> Vec<(&'static str, Value)> {
    vec![
        ("f_psync", json!({"ioengine": "psync"})),
        ("f_uring", json!({"ioengine": "io_uring", "iodepth": 4})),
        ("f_uring_hipri", json!({"hipri": true, "iodepth": 4})),
        (
            "f_uring_sqpoll",
            json!({"sqthread_poll": true, "sq_thread_idle": "10ms", "iodepth": 4}),
        ),
        ("f_cmd", json!({"ioengine": "io_uring_cmd", "iodepth": 4})),
        (
            "f_cmd_hipri",
            json!({"ioengine": "io_uring_cmd", "cmd_type": "nvme", "hipri": true, "iodepth": 4}),
        ),
        (
            "f_cmd_sqpoll",
            json!({"ioengine": "io_uring_cmd", "sqthread_poll": true, "iodepth": 2}),
        ),
    ]
}

fn by_name<'a>(tests: &[&'a Value], name: &str) -> &'a Value {
    tests
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no test {name}"))
}

/// Every read test on the NVMe drive at `data` read the whole drive once,
/// its digest `want`, with the engine and flags it names.
fn each_engine_read_the_files_bytes(doc: &Value, data: &str, want: &str) {
    let on_data = tests_at(doc, data);
    for (name, _) in read_tests() {
        let t = by_name(&on_data, name);
        assert_eq!(status_of(t), "ok", "{name} on {data}: {}", t["status"]);
        let step = &t["steps"][0];
        assert_eq!(step["read"]["bytes"], SIZE, "{name}: the whole disk once");
        let e = &step["engine"];
        assert_eq!(e["read_digest"], want, "{name} read other bytes: {e}");
        let flags: Vec<&str> = e["setup_flags"]
            .as_array()
            .map(|f| f.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let cmd = name.starts_with("f_cmd");
        let engine = match name {
            "f_psync" => "psync",
            _ if cmd => "io_uring_cmd",
            _ => "io_uring",
        };
        assert_eq!(e["name"], engine, "{name}: {e}");
        assert_eq!(flags.contains(&"IOPOLL"), name.ends_with("hipri"), "{name}: {e}");
        assert_eq!(flags.contains(&"SQPOLL"), name.ends_with("sqpoll"), "{name}: {e}");
        assert_eq!(
            flags.contains(&"SQE128") && flags.contains(&"CQE32"),
            cmd,
            "{name}: {e}"
        );
        if cmd {
            let ng = data.replace("/dev/nvme", "/dev/ng");
            assert_eq!(e["char_device"], ng.as_str(), "{name}: {e}");
            assert_eq!(
                (e["cmd_type"].as_str(), e["nsid"].as_u64(), e["lba_bytes"].as_u64()),
                (Some("nvme"), Some(1), Some(512)),
                "{e}"
            );
        }
        if name == "f_uring_sqpoll" {
            assert_eq!(e["sq_thread_idle_ms"], 10, "{e}");
        }
        assert_eq!(t["params"]["read_digest"], true);
    }
}

/// The virtio disk: no poll queues, no /dev/ng: those tests skipped,
/// saying so; the others read `want`.
fn the_virtio_disk_says_what_it_lacks(doc: &Value, want: &str) {
    // The virtio disk: no poll queues, no /dev/ng: skipped, saying so.
    let virtio = path_of(target_by_serial(doc, "F1-VIRTIO")).to_string();
    let on_virtio = tests_at(doc, &virtio);
    for (name, _) in read_tests() {
        let t = by_name(&on_virtio, name);
        let reason = t["status"]["reason"].as_str().unwrap_or("");
        if name.starts_with("f_cmd") {
            assert_eq!(status_of(t), "skipped", "{name}: {}", t["status"]);
            assert!(reason.contains("needs a whole NVMe namespace"), "{name}: {reason}");
        } else if name.ends_with("hipri") {
            assert_eq!(status_of(t), "skipped", "{name}: {}", t["status"]);
            assert!(
                reason.contains("has no poll queues") && reason.contains(&virtio),
                "{name}: {reason}"
            );
        } else {
            assert_eq!(status_of(t), "ok", "{name}: {}", t["status"]);
            assert_eq!(t["steps"][0]["engine"]["read_digest"], want, "{name}");
        }
    }
}

#[test]
fn f1_passthrough_polled_and_sqpoll_engines_read_what_psync_reads() {
    let Some(a) = artifacts("f1_engines") else {
        return;
    };
    let scratch = Scratch::new("f1_engines");
    let dir = scratch.0.clone();
    let specs = disks(&[
        "nvme,size=16M,serial=F1-DATA",
        "nvme,size=16M,serial=F1-BLANK",
        "virtio,size=16M,serial=F1-VIRTIO",
    ]);
    let (files, before) = disks_with_contents(&specs, &dir, |i| match i {
        0 => Some(5_001),
        2 => Some(5_003),
        _ => None,
    });
    let mut tests: Vec<Value> = read_tests()
        .into_iter()
        .map(|(name, opts)| {
            let mut t = json!({"workload": "seq_read", "name": name, "bs": "128k", "size": "16M",
                               "runtime": "120s", "read_digest": true});
            for (k, v) in opts.as_object().expect("object") {
                t[k] = v.clone();
            }
            t
        })
        .collect();
    tests.push(
        json!({"workload": "seq_write", "name": "f_cmd_write", "bs": "64k", "size": "2M",
                      "runtime": "60s", "ioengine": "io_uring_cmd", "iodepth": 2, "verify": true}),
    );
    let config = json!({
        "tests": tests,
        "destructive": {"confirm": CONFIRM, "countdown": 0, "targets": [{"serial": "F1-BLANK"}]}
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);

    let data = path_of(target_by_serial(&doc, "F1-DATA")).to_string();
    each_engine_read_the_files_bytes(&doc, &data, &expected_digest(&files[0]));
    let on_data = tests_at(&doc, &data);
    // The write: refused on the disk not granted, run and verified on the granted one.
    let w = by_name(&on_data, "f_cmd_write");
    assert_eq!(status_of(w), "skipped", "{}", w["status"]);
    let blank = path_of(target_by_serial(&doc, "F1-BLANK")).to_string();
    let on_blank = tests_at(&doc, &blank);
    let w = by_name(&on_blank, "f_cmd_write");
    assert_eq!(status_of(w), "ok", "{}", w["status"]);
    assert_eq!(w["steps"][0]["engine"]["name"], "io_uring_cmd");
    assert_eq!(w["steps"][0]["verified_bytes"], 2 << 20, "{}", w["steps"][0]);
    let written = std::fs::read(&files[1]).expect("blank disk");
    // The first 4 KiB hold bootbench's scratch label, written after the run.
    assert!(written.starts_with(b"BOOTBENCH-SCRATCH"), "the scratch label");
    assert!(
        written[4096..2 << 20].chunks(512).all(|b| b.iter().any(|&x| x != 0)),
        "the passthrough wrote"
    );
    assert!(
        written[2 << 20..].iter().all(|&x| x == 0),
        "nothing past the test's 2 MiB"
    );
    // The blank drive's reads are the same bytes for each engine too.
    let got: Vec<&Value> = read_tests()
        .iter()
        .map(|(name, _)| &by_name(&on_blank, name)["steps"][0]["engine"]["read_digest"])
        .collect();
    assert!(got.iter().all(|d| *d == got[0] && d.is_string()), "{got:?}");

    the_virtio_disk_says_what_it_lacks(&doc, &expected_digest(&files[2]));
    // Nothing but the granted drive changed.
    assert_eq!(checksum(&files[0]).expect("checksum"), before[0]);
    assert_eq!(checksum(&files[2]).expect("checksum"), before[2]);
}
