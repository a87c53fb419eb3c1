//! End to end in QEMU (TCG): md arrays and dm layers built from the config,
//! their figures, their analysis and their teardown. Same harness as
//! `e2e.rs`: the image from `make image`, small throttled virtio disks, short
//! explicit test lists, one boot at a time.
//!
//! What each test proves, and what it does not:
//! - `s1`: a raid0 of a 20 MiB/s and a 10 MiB/s disk reads at 2 x 10 MiB/s
//!   (within 10%), and the analysis says the 10 MiB/s member limits it; the
//!   all-at-once run is analysed against the sum of each disk alone.
//! - `s2`: raid1, raid5, raid10 and linear assemble, run and report, each with
//!   an analysis line; no member disk and no bystander disk changes by one
//!   byte (assembly writes no superblock, starts no resync); no md or dm
//!   device remains after the run.
//! - `s3`: a crypt layer, and a linear layer on it, in one boot: a write
//!   through the crypt layer reaches the disk, and what reaches the disk is
//!   not what was written: the same write test on a plain disk leaves its
//!   buffer there (that disk's 1 MiB blocks all equal that buffer, same
//!   seed), the crypt disk holds none of it and its blocks all differ (XTS
//!   with a per-sector IV). Every write through either layer reads back as
//!   written (the write tests verify). The crypt layer is tested before the
//!   linear layer is built on it, so the boot is also that of a crypt
//!   layer alone (it was a boot of its own; `s5` was this one).
//! - `s4`: each invalid stack config gives its error document, and no disk
//!   changes.
//! - `s8`: md arrays, LUKS and LVM made by Debian's own tools (in the
//!   fixture guest) are listed on the booted console from their metadata,
//!   read through the members; the arrays the config names `existing` are
//!   assembled read-only from their superblocks (one degraded) and read,
//!   never written; nothing changes on any disk.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use bootbench_e2e::{
    artifacts, assert_schema_valid, boot, by_stack, by_stack_option, checksum, disks, disks_with_contents, path_of,
    status_of, stick_copy, tests_on, the_document, workspace, Artifacts, Scratch, Via,
};
use serde_json::{json, Value};

const CONFIRM: &str = "I understand this destroys data";
const MIB: f64 = 1024.0 * 1024.0;
/// The console line of the stacks teardown when nothing is left.
const TORN_DOWN: &str = "no md or dm device remains";

/// The target whose serial is `serial`.
fn by_serial<'a>(doc: &'a Value, serial: &str) -> &'a Value {
    doc["targets"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["serial"] == serial))
        .unwrap_or_else(|| panic!("no target with serial {serial} in {}", doc["targets"]))
}

/// The test named `test` on the target at `path`.
fn test_on<'a>(doc: &'a Value, path: &str, test: &str) -> &'a Value {
    doc["tests"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["target"] == path && t["name"] == test))
        .unwrap_or_else(|| panic!("no test {test} on {path}"))
}

fn figure(doc: &Value, path: &str, test: &str, key: &str) -> f64 {
    let t = test_on(doc, path, test);
    assert_eq!(status_of(t), "ok", "{test} on {path}: {}", t["status"]);
    t["summary"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("{test} on {path}: no {key}: {}", t["summary"]))
}

/// The analysis lines of `kind` for `target` and `test`.
fn analysis<'a>(doc: &'a Value, kind: &str, target: &str, test: &str) -> Vec<&'a Value> {
    doc["analysis"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|l| l["kind"] == kind && l["target"] == target && l["test"] == test)
                .collect()
        })
        .unwrap_or_default()
}

/// The 1 MiB blocks of the first `n` MiB of a file.
fn blocks(path: &Path, n: usize) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(path).expect("read a disk image");
    bytes.chunks(1 << 20).take(n).map(<[u8]>::to_vec).collect()
}

/// One boot: raid0 of a 20 MiB/s and a 10 MiB/s virtio disk, seq_read 1M
/// with a ramp, and the same test on both disks at once.
#[test]
fn s1_raid0_of_20_and_10_mib_per_s_reads_at_2_x_10_and_names_the_slow_member() {
    let Some(a) = artifacts("s1_raid0") else { return };
    let scratch = Scratch::new("s1_raid0");
    let dir = scratch.0.clone();
    let specs = disks(&[
        "virtio,size=128M,serial=S1-FAST,bps=20M",
        "virtio,size=128M,serial=S1-SLOW,bps=10M",
    ]);
    let config = json!({
        "defaults": {"iodepth": 1, "ramp_time": "1s", "runtime": "4s"},
        "tests": [{"workload": "seq_read", "name": "seq_read_1m", "bs": "1M"}],
        "arrays": [{"name": "r0", "level": "raid0", "members": [{"serial": "S1-FAST"}, {"serial": "S1-SLOW"}]}],
        "all_at_once": true
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);

    let (fast, slow) = (path_of(by_serial(&doc, "S1-FAST")), path_of(by_serial(&doc, "S1-SLOW")));
    let r0 = by_stack(&doc, "r0");
    let md = path_of(r0);
    assert!(md.starts_with("/dev/md"), "{r0}");
    assert_eq!(r0["stack"]["level"], "raid0");
    assert_eq!(r0["stack"]["members"], json!([fast, slow]), "members in order");

    let rate = |p: &str| figure(&doc, p, "seq_read_1m", "read_bytes_per_sec");
    let (f, s, r) = (rate(fast), rate(slow), rate(md));
    eprintln!(
        "seq_read 1M: fast {:.2} MiB/s, slow {:.2} MiB/s, raid0 {:.2} MiB/s",
        f / MIB,
        s / MIB,
        r / MIB
    );
    let truth = 2.0 * 10.0 * MIB;
    assert!(
        (r / truth - 1.0).abs() <= 0.10,
        "raid0 {r} B/s vs 2 x 10 MiB/s = {truth} B/s"
    );

    let lines = analysis(&doc, "array", md, "seq_read_1m");
    assert_eq!(
        lines.len(),
        1,
        "one analysis line for raid0 seq_read: {}",
        doc["analysis"]
    );
    let l = lines[0];
    eprintln!("analysis: {l}");
    assert_eq!(l["limited_by"], slow, "the slow member limits it");
    let expected = l["expected"].as_f64().unwrap();
    assert!(
        (expected - 2.0 * s).abs() <= 1.0,
        "expected = 2 x slowest member: {expected} vs 2 x {s}"
    );
    assert!(
        l["rule"]
            .as_str()
            .unwrap()
            .starts_with("raid0: N x slowest member (2 x "),
        "{}",
        l["rule"]
    );
    let eff = l["efficiency"].as_f64().unwrap();
    assert!((eff - r / expected).abs() < 1e-9, "efficiency = measured / expected");

    // All at once: both disks together, against each alone.
    let together = analysis(&doc, "all_at_once", "all at once", "seq_read_1m");
    assert_eq!(together.len(), 1, "all-at-once analysed: {}", doc["all_at_once"]);
    eprintln!("all at once: {}", together[0]);
    assert!(
        outcome.serial.contains(TORN_DOWN),
        "the console says no md/dm device remains"
    );
}

/// One boot: raid1, raid5, raid10 and linear over throttled virtio disks,
/// read-only, and a bystander disk in no array.
#[test]
fn s2_raid1_raid5_raid10_linear_run_and_report_and_leave_every_disk_identical() {
    let Some(a) = artifacts("s2_levels") else { return };
    let scratch = Scratch::new("s2_levels");
    let dir = scratch.0.clone();
    let serials = [
        "S2-R1-A",
        "S2-R1-B",
        "S2-R5-A",
        "S2-R5-B",
        "S2-R5-C",
        "S2-R10-A",
        "S2-R10-B",
        "S2-LIN-A",
        "S2-LIN-B",
        "S2-BYSTANDER",
    ];
    let spec_text: Vec<String> = serials
        .iter()
        .map(|s| format!("virtio,size=64M,serial={s},bps=40M"))
        .collect();
    let spec_refs: Vec<&str> = spec_text.iter().map(String::as_str).collect();
    let specs = disks(&spec_refs);
    let (files, before) = disks_with_contents(&specs, &dir, |i| Some(300 + i as u64));
    let m = |s: &str| json!({"serial": s});
    let config = json!({
        "tests": [
            {"workload": "seq_read", "name": "seq_read_1m", "bs": "1M", "size": "8M"},
            {"workload": "rand_read", "name": "rand_read_4k", "bs": "4k", "iodepth": 4, "runtime": "1s"}
        ],
        "arrays": [
            {"name": "r1", "level": "raid1", "members": [m("S2-R1-A"), m("S2-R1-B")]},
            {"name": "r5", "level": "raid5", "chunk": "64k", "members": [m("S2-R5-A"), m("S2-R5-B"), m("S2-R5-C")]},
            {"name": "r10", "level": "raid10", "members": [m("S2-R10-A"), m("S2-R10-B")]},
            {"name": "lin", "level": "linear", "members": [m("S2-LIN-A"), m("S2-LIN-B")]}
        ]
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);
    for (name, level) in [("r1", "raid1"), ("r5", "raid5"), ("r10", "raid10"), ("lin", "linear")] {
        let t = by_stack(&doc, name);
        let path = path_of(t);
        assert!(path.starts_with("/dev/md"), "{name}: {t}");
        assert_eq!(t["stack"]["level"], level, "{t}");
        assert_eq!(t["stack"]["mode"], "read-only", "no member is writable: {t}");
        assert!(t["size_bytes"].as_u64().unwrap() > 0, "{name} has a size: {t}");
        for test in ["seq_read_1m", "rand_read_4k"] {
            let ok = test_on(&doc, path, test);
            assert_eq!(status_of(ok), "ok", "{test} on {name}: {}", ok["status"]);
            let lines = analysis(&doc, "array", path, test);
            assert_eq!(lines.len(), 1, "{name} {test}: {}", doc["analysis"]);
            eprintln!(
                "{level} {test}: measured {:.1}, expected {:.1} ({}), efficiency {:.2}",
                lines[0]["measured"].as_f64().unwrap(),
                lines[0]["expected"].as_f64().unwrap(),
                lines[0]["rule"].as_str().unwrap(),
                lines[0]["efficiency"].as_f64().unwrap()
            );
        }
    }
    assert!(
        outcome.serial.contains(TORN_DOWN),
        "the console says no md/dm device remains"
    );
    let after: Vec<_> = files.iter().map(|f| checksum(f).unwrap()).collect();
    for (i, s) in serials.iter().enumerate() {
        assert_eq!(before[i], after[i], "{s} byte-identical (members and the bystander)");
    }
}

/// One boot: a crypt layer on one disk, written with verify (the pattern
/// reads back through the layer) and read; a plain disk gets the same write
/// test and holds the pattern; the crypt disk holds none of it; a bystander
/// is not named and stays byte-identical.
/// A crypt layer, and a linear layer (LVM's 1 MiB offset) on it: disk ->
/// crypt -> linear, both layers tested in one boot. The crypt layer is
/// tested before anything is built on it (the linear layer would otherwise
/// hold the crypt device and its write tests could not claim it), so its
/// figures and what it leaves on the disk are those of a crypt layer alone:
/// one boot proves both (they were two boots, s3 and s5).
#[test]
fn s3_crypt_pattern_reads_back_through_the_layer_and_differs_on_the_disk_and_a_linear_layer_on_it_runs() {
    crypt_boot("s3_crypt_linear");
}

/// The crypt boot of s3: a crypt layer, a linear layer on it.
fn crypt_boot(name: &str) {
    let Some(a) = artifacts(name) else { return };
    let scratch = Scratch::new(name);
    let dir = scratch.0.clone();
    let specs = disks(&[
        "virtio,size=64M,serial=S3-PLAIN",
        "virtio,size=64M,serial=S3-CRYPT",
        "virtio,size=64M,serial=S3-BYSTANDER",
    ]);
    // The two disks named in "destructive" start blank (all zeros, sparse):
    // a disk that holds data is refused even without a signature. The
    // bystander holds data.
    let (files, before) = disks_with_contents(&specs, &dir, |i| (i >= 2).then_some(400 + i as u64));
    let crypt_before = blocks(&files[1], 8);
    let layers = json!([
        {"name": "sec", "kind": "crypt", "on": {"serial": "S3-CRYPT"}},
        {"name": "lv", "kind": "linear", "on": "sec"}
    ]);
    let config = json!({
        "defaults": {"iodepth": 1, "jobs": 1},
        "tests": [
            {"workload": "seq_write", "name": "seq_write_1m", "bs": "1M", "size": "8M", "verify": true},
            {"workload": "seq_read", "name": "seq_read_1m", "bs": "1M", "size": "8M"}
        ],
        "layers": layers,
        "destructive": {"confirm": CONFIRM, "countdown": 0, "targets": [{"serial": "S3-PLAIN"}, {"serial": "S3-CRYPT"}]}
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);

    let layers = the_layers_stand_on_the_crypt_disk_and_run_their_tests(&doc);
    assert!(
        outcome.serial.contains(TORN_DOWN),
        "the console says no md/dm device remains"
    );
    every_write_read_back_as_written(&doc, &layers);
    the_plain_disk_holds_the_plaintext_and_the_crypt_disk_none_of_it(&doc, layers[0], &files, &crypt_before);
    let after: Vec<_> = files.iter().map(|f| checksum(f).unwrap()).collect();
    assert_eq!(before[2], after[2], "the bystander is byte-identical");
}

/// The crypt layer "sec" on the crypt disk and the linear layer "lv" on
/// it: each runs its write and read tests, each with its analysis line.
/// Returns the layers, "sec" first.
fn the_layers_stand_on_the_crypt_disk_and_run_their_tests(doc: &Value) -> Vec<&Value> {
    let crypt_disk = path_of(by_serial(doc, "S3-CRYPT"));
    let sec = by_stack(doc, "sec");
    assert!(path_of(sec).starts_with("/dev/dm-"), "{sec}");
    assert_eq!(sec["stack"]["level"], "crypt", "{sec}");
    assert_eq!(sec["stack"]["on"], crypt_disk, "{sec}");
    assert_eq!(
        sec["stack"]["mode"], "read-write",
        "the disk beneath is writable: {sec}"
    );
    let lv = by_stack(doc, "lv");
    assert_eq!(lv["stack"]["on"], path_of(sec), "{lv}");
    let layers = vec![sec, lv];
    for t in &layers {
        for test in ["seq_write_1m", "seq_read_1m"] {
            let r = test_on(doc, path_of(t), test);
            assert_eq!(status_of(r), "ok", "{test} on {}: {}", t["stack"]["name"], r["status"]);
            let lines = analysis(doc, "layer", path_of(t), test);
            assert_eq!(lines.len(), 1, "{test} on {}: {}", t["stack"]["name"], doc["analysis"]);
            eprintln!(
                "{} {test}: {:.2} of the device beneath ({})",
                t["stack"]["name"],
                lines[0]["efficiency"].as_f64().unwrap(),
                lines[0]["rule"]
            );
        }
    }
    layers
}

/// The write tests verify (fio's verify): each 1 MiB request holds
/// known contents, a hash of the seed and the byte offset, and was read
/// back after the step through the same device and found as written; on the
/// plain disk and on every layer.
fn every_write_read_back_as_written(doc: &Value, layers: &[&Value]) {
    let plain_disk = path_of(by_serial(doc, "S3-PLAIN"));
    for p in [plain_disk].into_iter().chain(layers.iter().map(|t| path_of(t))) {
        let r = test_on(doc, p, "seq_write_1m");
        assert_eq!(r["params"]["verify"], true, "{p}");
        let step = &r["steps"][0];
        let written = step["write"]["bytes"].as_u64().unwrap();
        assert_eq!(written, 8 << 20, "{p}: 8 MiB written");
        assert_eq!(
            step["verified_bytes"].as_u64(),
            Some(written),
            "{p}: everything written read back as written"
        );
    }
}

/// The plain disk holds the plaintext the write test wrote (its seed's
/// contents) and the crypt disk none of it, and every block of the crypt disk
/// (`crypt_before` its first blocks before the boot) was written. `sec` is
/// the crypt layer; `files` the disks' images, plain, crypt, bystander.
fn the_plain_disk_holds_the_plaintext_and_the_crypt_disk_none_of_it(
    doc: &Value,
    sec: &Value,
    files: &[PathBuf],
    crypt_before: &[Vec<u8>],
) {
    let seed = |p: &str| test_on(doc, p, "seq_write_1m")["params"]["seed"].as_u64().unwrap();
    let plain_disk = path_of(by_serial(doc, "S3-PLAIN"));
    let expected = |offset: u64| {
        let mut b = vec![0u8; 1 << 20];
        bench_core::engine::verify::fill(seed(plain_disk), offset, &mut b);
        b
    };
    assert_eq!(seed(plain_disk), seed(path_of(sec)), "the same contents on both");
    // The plain disk holds the plaintext itself (after bootbench's scratch
    // label, written over its first 4 KiB once the run's writes were done) ...
    let plain = blocks(&files[0], 8);
    assert!(
        plain[0].starts_with(b"BOOTBENCH-SCRATCH"),
        "the plain disk carries bootbench's scratch label"
    );
    for (i, b) in plain.iter().enumerate() {
        let from = if i == 0 { 4096 } else { 0 };
        assert!(
            b[from..] == expected((i as u64) << 20)[from..],
            "plain disk block {i} holds the plaintext"
        );
    }
    // ... the crypt disk none of it, at its own offset or at the linear
    // layer's (1 MiB further on), and every block was written.
    let crypt = blocks(&files[1], 8);
    for (i, b) in crypt.iter().enumerate() {
        let at = (i as u64) << 20;
        assert!(*b != expected(at), "crypt disk block {i} is not the plaintext");
        if i > 0 {
            assert!(
                *b != expected(at - (1 << 20)),
                "crypt disk block {i} is not the linear layer's plaintext"
            );
        }
        assert!(*b != crypt_before[i], "crypt disk block {i} was written");
    }
}

/// One boot per invalid stack config: each gives its error document and no
/// disk changes (the config names every disk in "destructive" and asks for a
/// write test, so only validation stands between it and a write).
#[test]
fn s4_each_invalid_stack_config_gives_its_error_and_writes_nothing() {
    let Some(a) = artifacts("s4_invalid_stacks") else {
        return;
    };
    let scratch = Scratch::new("s4_invalid_stacks");
    let dir = scratch.0.clone();
    let specs = disks(&[
        "virtio,size=64M,serial=S4-A",
        "virtio,size=64M,serial=S4-B",
        "virtio,size=64M,serial=S4-C",
    ]);
    let (files, before) = disks_with_contents(&specs, &dir, |i| Some(500 + i as u64));
    let (ma, mb, mc) = (
        json!({"serial": "S4-A"}),
        json!({"serial": "S4-B"}),
        json!({"serial": "S4-C"}),
    );
    let r0 = |name: &str| json!({"name": name, "level": "raid0", "members": [ma, mb]});
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "unknown_member",
            json!({"arrays": [{"name": "r0", "level": "raid0", "members": [ma, {"serial": "S4-NO-SUCH-DISK"}]}]}),
            "S4-NO-SUCH-DISK",
        ),
        (
            "disk_in_two_arrays",
            json!({"arrays": [r0("r0"), {"name": "r1", "level": "raid1", "members": [mb, mc]}]}),
            "is already used by",
        ),
        (
            "too_few_members",
            json!({"arrays": [{"name": "r5", "level": "raid5", "members": [ma, mb]}]}),
            "too few for raid5",
        ),
        (
            "layer_cycle",
            json!({"layers": [{"name": "x", "kind": "linear", "on": "y"}, {"name": "y", "kind": "linear", "on": "x"}]}),
            "makes a cycle",
        ),
        (
            "unknown_on",
            json!({"arrays": [r0("r0")], "layers": [{"name": "c", "kind": "crypt", "on": "nosuch"}]}),
            "\"nosuch\"",
        ),
        (
            "chunk_not_power_of_two",
            json!({"arrays": [{"name": "r0", "level": "raid0", "chunk": "48k", "members": [ma, mb]}]}),
            "chunk",
        ),
        (
            "duplicate_names",
            json!({"arrays": [r0("r0")], "layers": [{"name": "r0", "kind": "crypt", "on": mc}]}),
            "already the name",
        ),
    ];
    let mut failures = Vec::new();
    for (name, stacks, needle) in cases {
        let sub = dir.join(name);
        std::fs::create_dir_all(&sub).unwrap();
        let mut config = json!({
            "tests": [{"workload": "seq_write", "name": "seq_write_1m", "bs": "1M", "size": "4M"}],
            "destructive": {"confirm": CONFIRM, "countdown": 0, "targets": [ma, mb, mc]}
        });
        for (k, v) in stacks.as_object().unwrap() {
            config[k] = v.clone();
        }
        let img = stick_copy(&a, &sub, Some(&config));
        // The disks' backing files stay in `dir/disks`: `boot` reuses them.
        let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
        let (_, _, doc) = the_document(&outcome);
        assert_schema_valid(&doc);
        let why = doc["run"]["error"].as_str().unwrap_or_default().to_string();
        eprintln!("{name}: {why}");
        if doc["run"]["status"] != "error" || !why.contains(needle) {
            failures.push(format!(
                "{name}: status {}, error {why:?}, expected one with {needle:?}",
                doc["run"]["status"]
            ));
        }
        // Nothing ran (an absent member: the run goes on, but a config that
        // does not match the machine writes nothing, so its only test, a
        // write, is skipped everywhere).
        let ran: Vec<&Value> = doc["tests"]
            .as_array()
            .map(|t| t.iter().filter(|r| status_of(r) != "skipped").collect())
            .unwrap_or_default();
        if !ran.is_empty() {
            failures.push(format!("{name}: tests ran: {ran:?}"));
        }
        if name == "unknown_member"
            && !doc["tests"].as_array().unwrap().iter().any(|r| {
                r["status"]["reason"]
                    .as_str()
                    .is_some_and(|why| why.starts_with("writes withheld"))
            })
        {
            failures.push(format!(
                "{name}: no write test says writes are withheld: {}",
                doc["tests"]
            ));
        }
        let after: Vec<_> = files.iter().map(|f| checksum(f).unwrap()).collect();
        assert_eq!(before, after, "{name}: no disk changed");
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The slow disks of the mixed-raid example: HDD-like, about 70 MB/s
/// scaled down (the Japanese post's 80 GB disks).
const MIXED_SLOW: &str = "bps=10M,iops=100";
/// The fast ones: about 130 MB/s scaled down the same (its 500 GB disks).
const MIXED_FAST: &str = "bps=18M,iops=180";

/// Boot `config` (named `name`) on virtio disks `specs` filled with data
/// (seeded from `seed`): the run ends `ok` with a valid document, no md or
/// dm device remains, and every disk is byte-identical afterwards. `None`
/// without the image.
fn read_only_boot(name: &str, specs: &[String], seed: u64, config: &Value) -> Option<Value> {
    let a = artifacts(name)?;
    let scratch = Scratch::new(name);
    let dir = scratch.0.clone();
    let spec_refs: Vec<&str> = specs.iter().map(String::as_str).collect();
    let specs = disks(&spec_refs);
    let (files, before) = disks_with_contents(&specs, &dir, |i| Some(seed + i as u64));
    let img = stick_copy(&a, &dir, Some(config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);
    assert!(outcome.serial.contains(TORN_DOWN), "no md/dm device remains");
    for (i, d) in specs.iter().enumerate() {
        assert_eq!(before[i], checksum(&files[i]).unwrap(), "{} byte-identical", d.serial);
    }
    Some(doc)
}

/// `examples/mixed-raid/NAME` booted as it is (its arrays over the disks
/// its placeholder serials name) with a short sequential read in place of
/// its tests, on four throttled disks in the post's proportions, every
/// disk checksummed before and after. Returns the document.
fn mixed_raid_boot(name: &str) -> Option<Value> {
    let file = bootbench_e2e::workspace().join("examples/mixed-raid").join(name);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut config: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    // Short: one direct 1 MiB sequential read (sysbench seqrd's question,
    // without its page cache), 3 s after a 1 s ramp, on each disk and array.
    // It starts 4 MiB in: md raid1 sends a read to the mirror whose head is
    // where the read begins, else to the first idle member in order, and
    // right after assembly the partition scan has moved the first member's
    // head off sector 0 while the second's is still there: a stream from
    // offset 0 would land on the second (the post's arrays, long in use,
    // had no such history).
    config["defaults"] = json!({"iodepth": 1, "ramp_time": "1s", "runtime": "3s", "offset": "4M"});
    config["tests"] = json!([{"workload": "seq_read", "name": "seqrd_1m", "bs": "1M"}]);
    let serials = ["SLOW-1", "SLOW-2", "FAST-1", "FAST-2"];
    let named: Vec<&str> = config["arrays"]
        .as_array()
        .expect("arrays")
        .iter()
        .flat_map(|a| a["members"].as_array().expect("members").iter())
        .map(|m| m["serial"].as_str().expect("members named by serial"))
        .collect();
    let mut sorted = named.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        ["FAST-1", "FAST-2", "SLOW-1", "SLOW-2"],
        "{name}: the example's disks"
    );
    let spec_text: Vec<String> = serials
        .iter()
        .map(|s| {
            let rate = if s.starts_with("SLOW") { MIXED_SLOW } else { MIXED_FAST };
            format!("virtio,size=64M,serial={s},{rate}")
        })
        .collect();
    read_only_boot(&format!("s6_{name}"), &spec_text, 600, &config)
}

/// Each array of `doc`: (its target, its line for `seqrd_1m`, the members'
/// paths in order, each member alone's figure).
fn mixed_arrays(doc: &Value) -> Vec<(&Value, &Value, Vec<&str>, Vec<f64>)> {
    doc["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .filter(|t| t["stack"]["kind"] == "md")
        .map(|t| {
            let path = path_of(t);
            let lines = analysis(doc, "array", path, "seqrd_1m");
            assert_eq!(lines.len(), 1, "{path}: {}", doc["analysis"]);
            let members: Vec<&str> = t["stack"]["members"]
                .as_array()
                .expect("members")
                .iter()
                .map(|m| m.as_str().expect("path"))
                .collect();
            let alone = members
                .iter()
                .map(|m| figure(doc, m, "seqrd_1m", "read_bytes_per_sec"))
                .collect();
            (t, lines[0], members, alone)
        })
        .collect()
}

/// Every member's record in the array's test: no byte written to a disk of
/// a read-only array, and the line's members are the array's, in order.
fn assert_accounting(doc: &Value, t: &Value, line: &Value, members: &[&str]) {
    let path = path_of(t);
    assert_eq!(t["stack"]["mode"], "read-only", "{t}");
    let test = test_on(doc, path, "seqrd_1m");
    let step = &test["steps"][0];
    for m in step["members"].as_array().expect("the step's accounting") {
        assert_eq!(
            m["write_bytes"], 0,
            "{path}: a read-only array's member was written: {m}"
        );
        assert_eq!(m["writes"], 0, "{m}");
    }
    let listed: Vec<&str> = line["members"]
        .as_array()
        .expect("the line's members")
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert_eq!(listed, members, "{line}");
}

/// The Japanese post's RAID0 finding on its example config: a raid0 of a
/// slow and a fast disk reads at 2 x the slow one, whichever comes first,
/// within 10%, and the accounting names the slow member as the busy one.
#[test]
fn s6_mixed_raid0_reads_at_n_x_the_slowest_in_either_order() {
    let Some(doc) = mixed_raid_boot("raid0.json") else {
        return;
    };
    let arrays = mixed_arrays(&doc);
    assert_eq!(arrays.len(), 2, "both member orders");
    let mut orders = Vec::new();
    for (t, line, members, alone) in &arrays {
        assert_eq!(t["stack"]["level"], "raid0");
        assert_accounting(&doc, t, line, members);
        let slow = if alone[0] < alone[1] { 0 } else { 1 };
        orders.push(slow);
        let measured = line["measured"].as_f64().unwrap();
        eprintln!(
            "raid0 {members:?}: {:.2} MiB/s, members alone {:.2} / {:.2} MiB/s; {}; members {}",
            measured / MIB,
            alone[0] / MIB,
            alone[1] / MIB,
            line["rule"],
            line["members"]
        );
        let n_x_slowest = 2.0 * alone[slow];
        assert!(
            (measured / n_x_slowest - 1.0).abs() <= 0.10,
            "{members:?}: {measured} B/s vs 2 x slowest {n_x_slowest}"
        );
        assert!(
            (measured / (2.0 * 10.0 * MIB) - 1.0).abs() <= 0.10,
            "{members:?}: {measured} B/s vs 2 x 10 MiB/s"
        );
        assert_eq!(line["limited_by"], members[slow], "the slow member limits it: {line}");
        let shares: Vec<f64> = line["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["share"].as_f64().unwrap())
            .collect();
        assert!(
            shares.iter().all(|s| (s - 0.5).abs() < 0.05),
            "raid0 splits the bytes: {shares:?}"
        );
    }
    orders.sort_unstable();
    assert_eq!(orders, [0, 1], "one array has the slow disk first, the other second");
}

/// The Japanese post's RAID1 finding on its example config: one sequential
/// reader reads from one mirror, and md's choice follows member order: the
/// fast-first array reads at the fast disk's speed, the slow-first at the
/// slow disk's, each within 10%, and the accounting names that member.
#[test]
fn s6_mixed_raid1_reads_at_the_speed_of_the_member_md_read_from() {
    let Some(doc) = mixed_raid_boot("raid1.json") else {
        return;
    };
    let arrays = mixed_arrays(&doc);
    assert_eq!(arrays.len(), 2, "both member orders");
    let mut firsts = Vec::new();
    for (t, _, members, _) in &arrays {
        let step = &test_on(&doc, path_of(t), "seqrd_1m")["steps"][0];
        for m in step["members"].as_array().unwrap() {
            eprintln!(
                "{members:?} {}: per second {}",
                m["path"], m["samples"]["bytes_per_sec"]
            );
        }
    }
    for (t, line, members, alone) in &arrays {
        assert_eq!(t["stack"]["level"], "raid1");
        assert_accounting(&doc, t, line, members);
        let measured = line["measured"].as_f64().unwrap();
        eprintln!(
            "raid1 {members:?}: {:.2} MiB/s, members alone {:.2} / {:.2} MiB/s; {}; members {}",
            measured / MIB,
            alone[0] / MIB,
            alone[1] / MIB,
            line["rule"],
            line["members"]
        );
        firsts.push(alone[0] < alone[1]);
        assert!(
            (measured / alone[0] - 1.0).abs() <= 0.10,
            "{members:?}: {measured} B/s vs the first member alone {}",
            alone[0]
        );
        let first = &line["members"][0];
        assert!(first["share"].as_f64().unwrap() > 0.9, "md read from the first: {line}");
        assert_eq!(line["limited_by"], members[0], "{line}");
        assert!(
            line["rule"]
                .as_str()
                .unwrap()
                .starts_with(&format!("raid1 read: the member md read from ({} ", members[0])),
            "{line}"
        );
        let expected = line["expected"].as_f64().unwrap();
        assert!(
            (expected / alone[0] - 1.0).abs() < 0.01,
            "expected = the first member: {line}"
        );
    }
    firsts.sort_unstable();
    assert_eq!(
        firsts,
        [false, true],
        "one array has the slow disk first, the other the fast"
    );
}

/// The fileserver post's LVM on RAID5, read through the page cache: a
/// linear layer with LVM's old 128 KiB readahead on a raid5 whose
/// readahead the kernel sizes for its stripes, on HDD-like disks (each
/// request costs time). Buffered (hdparm -t, dd bs=64k), the layer reads
/// far below the array; direct (hdparm -t --direct), at par; and the
/// analysis says why with both readaheads: a `readahead` line.
#[test]
fn s7_a_layer_with_less_readahead_than_its_raid5_says_so() {
    // HDD-like: every request costs time (the IOPS limit), so a small
    // readahead's small requests cost what they cost a disk that seeks.
    let spec_text: Vec<String> = ["S7-A", "S7-B", "S7-C"]
        .iter()
        .map(|s| format!("virtio,size=64M,serial={s},bps=20M,iops=50"))
        .collect();
    let m = |s: &str| json!({"serial": s});
    let config = json!({
        "defaults": {"ramp_time": "0s", "runtime": "2s"},
        "tests": [
            {"workload": "buffered_read", "name": "hdparm_t"},
            {"workload": "direct_read", "name": "hdparm_t_direct"},
            {"workload": "seq_read", "name": "dd_read_64k", "bs": "64k", "direct": false, "size": "32M"}
        ],
        "arrays": [{"name": "r5", "level": "raid5", "chunk": "512k", "members": [m("S7-A"), m("S7-B"), m("S7-C")]}],
        "layers": [{"name": "lv", "kind": "linear", "on": "r5", "read_ahead": "128k"}]
    });
    let Some(doc) = read_only_boot("s7_readahead", &spec_text, 700, &config) else {
        return;
    };
    let (md, lv) = (by_stack(&doc, "r5"), by_stack(&doc, "lv"));
    let ra = |t: &Value| {
        t["read_ahead_bytes"]
            .as_u64()
            .unwrap_or_else(|| panic!("readahead recorded: {t}"))
    };
    eprintln!("readahead: md {} B, layer {} B", ra(md), ra(lv));
    assert_eq!(ra(lv), 128 << 10, "the layer's readahead as the config asks");
    assert_eq!(lv["stack"]["options"]["read_ahead_kb"], "128");
    assert!(ra(md) > ra(lv), "the kernel gives the raid5 more: {}", ra(md));
    for l in doc["analysis"].as_array().unwrap() {
        eprintln!(
            "{} {} {}: efficiency {:.3}; {}",
            l["kind"],
            l["target"],
            l["test"],
            l["efficiency"].as_f64().unwrap(),
            l["rule"]
        );
    }
    // One line for the layer, on its worst buffered test (hdparm -t's
    // 2 MiB reads or dd's 64 KiB ones).
    let lines: Vec<&Value> = doc["analysis"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["kind"] == "readahead" && l["target"] == path_of(lv))
        .collect();
    assert_eq!(lines.len(), 1, "{}", doc["analysis"]);
    let buffered = ["hdparm_t", "dd_read_64k"];
    assert!(buffered.iter().any(|t| lines[0]["test"] == *t), "{}", lines[0]);
    assert!(lines[0]["efficiency"].as_f64().unwrap() < 0.8, "{}", lines[0]);
    let rule = lines[0]["rule"].as_str().unwrap();
    let want = format!(
        "readahead 128 KiB on {} vs {} KiB on {}: buffered reads at ",
        path_of(lv),
        ra(md) / 1024,
        path_of(md)
    );
    assert!(rule.starts_with(&want), "{rule}\nwant: {want}");
    let direct = analysis(&doc, "layer", path_of(lv), "hdparm_t_direct");
    assert!(
        direct[0]["rule"]
            .as_str()
            .unwrap()
            .ends_with("direct I/O: a linear map should cost nothing"),
        "{}",
        direct[0]
    );
}

/// The stacks the fixture guest made for `s8` (`existing.sh`): its console
/// (the guest's views, each line tagged `view WHAT ...`), the UUIDs of
/// the raid1 "mirror", the raid5 and the half raid1 and of the LUKS
/// container on the mirror, and the raid5's PV row as `pvs` gave it (PV
/// UUID, VG name, VG UUID, ...).
struct ExistingStacks {
    console: String,
    mirror: String,
    raid5: String,
    half: String,
    luks: String,
    pv: Vec<String>,
}

impl ExistingStacks {
    /// The rest of the guest's first view line starting `tag key`.
    fn view(&self, tag: &str, key: &str) -> String {
        console_view(&self.console, tag, key)
    }

    /// Every view line tagged `tag`, the tag taken off.
    fn views(&self, tag: &str) -> Vec<String> {
        self.console
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("view {tag} ")))
            .map(str::to_string)
            .collect()
    }
}

/// One GPT partition from 1 MiB to the end on each of `files` (Debian's
/// sfdisk, on the file).
fn gpt_partition_from_1_mib(files: &[PathBuf]) {
    for f in files {
        let mut sfdisk = Command::new("sfdisk")
            .args(["-q", "--no-reread", "--no-tell-kernel"])
            .arg(f)
            .stdin(Stdio::piped())
            .spawn()
            .expect("sfdisk (Debian's fdisk, .ci/deps installs it)");
        sfdisk
            .stdin
            .take()
            .unwrap()
            .write_all(b"label: gpt\nstart=2048, type=linux\n")
            .unwrap();
        assert!(sfdisk.wait().unwrap().success(), "sfdisk {}", f.display());
    }
}

/// The fixture guest (`tests/fixtures/guest.sh` with `existing.sh`) run
/// over the disk images `files`: what it made, as its console says.
fn existing_stacks_made(a: &Artifacts, files: &[PathBuf]) -> ExistingStacks {
    let fixtures = workspace().join("tests/fixtures");
    let mut guest = Command::new(fixtures.join("guest.sh"));
    guest
        .arg("--out")
        .arg(a.vmlinuz.parent().unwrap())
        .arg("--script")
        .arg(fixtures.join("existing.sh"));
    for f in files {
        guest.arg("--disk").arg(f);
    }
    let o = guest.output().expect("tests/fixtures/guest.sh");
    assert!(
        o.status.success(),
        "the fixture guest: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let console = fs::read_to_string(format!("{}.console.log", files[0].display())).unwrap();
    let view = |tag: &str, key: &str| console_view(&console, tag, key);
    let pv = console
        .lines()
        .find_map(|l| l.strip_prefix("view pv /dev/md1|"))
        .expect("the raid5's PV")
        .split('|')
        .map(str::to_string)
        .collect::<Vec<_>>();
    ExistingStacks {
        mirror: view("md0", "MD_UUID="),
        raid5: view("md1", "MD_UUID="),
        half: view("md2", "MD_UUID="),
        luks: view("md0", "luks "),
        pv,
        console,
    }
}

/// The rest of the first line of the fixture guest's `console` starting
/// `view tag key`.
fn console_view(console: &str, tag: &str, key: &str) -> String {
    console
        .lines()
        .find_map(|l| l.strip_prefix(&format!("view {tag} {key}")))
        .unwrap_or_else(|| panic!("no view {tag} {key} in the fixture's console"))
        .to_string()
}

/// A device-mapper table's fields, each `major:minor` or device path made
/// "DEV".
fn table_fields(t: &str) -> Vec<String> {
    t.split_whitespace()
        .map(|f| {
            if f.contains(':') || f.starts_with("/dev/") {
                "DEV".into()
            } else {
                f.to_string()
            }
        })
        .collect()
}

/// The posts' stacks as a server already has them (issue 32), made by
/// Debian's mdadm, cryptsetup and lvm2 in the fixture guest
/// (`tests/fixtures/guest.sh`, `existing.sh`): a raid1 (superblock 1.2) of
/// the first partitions of two disks with LUKS2 on it and LVM inside (post
/// 000), a raid5 (0.90) of three whole disks under LVM (post 002), and a
/// raid1 (1.2) of two disks of which the boot gets only the first. Booted
/// with them, the console lists under each disk what it and its
/// partitions hold, then the arrays and the volume group they make, read
/// through the members (the LUKS header at the raid1's start, the PV at the
/// raid5's), as the guest's mdadm, cryptsetup and pvs saw them assembled;
/// the VG inside LUKS stays unseen. The config's `existing` is "all" and the
/// LUKS container with its key file on the stick: each array is assembled
/// read-only from its superblocks (the half one degraded), read like any
/// array (the raid5 around a read error on a member), its write test and
/// its members' skipped (an existing array is never written, whatever
/// `destructive` says); the container is opened read-only with the key,
/// the volumes on the raid5 and inside the container mapped read-only by
/// the tables LVM loaded for them, all read; all torn down; every disk is
/// byte-identical afterwards: no repair wrote the failing sector back.
/// Booted again without one of the raid5's members, the raid5 starts
/// degraded and its volume reads through it; still nothing changes.
#[test]
fn s8_existing_md_luks_and_lvm_are_listed_and_read_and_nothing_changes() {
    let Some(a) = artifacts("s8_existing") else { return };
    let scratch = Scratch::new("s8_existing");
    let dir = scratch.0.clone();
    let serials = ["EX-A", "EX-B", "EX-C", "EX-D", "EX-E", "EX-F", "EX-G", "EX-H", "EX-I"];
    // EX-D, the raid5's slot 1, fails reads of sector 64 in the boot (not in
    // the fixture guest): its first chunk there is the array's chunk 1 (64
    // KiB to 128 KiB), which the array's read test reads.
    let spec_text: Vec<String> = serials
        .iter()
        .map(|s| {
            let fault = if *s == "EX-D" { ",fault=read_aio:5:64:read" } else { "" };
            format!("virtio,size=64M,serial={s}{fault}")
        })
        .collect();
    let spec_refs: Vec<&str> = spec_text.iter().map(String::as_str).collect();
    let specs = disks(&spec_refs);
    let (files, _) = disks_with_contents(&specs, &dir, |_| None);
    gpt_partition_from_1_mib(&files[..2]);
    let ex = existing_stacks_made(&a, &files);
    let before: Vec<_> = files.iter().map(|f| checksum(f).unwrap()).collect();

    // The boot gets every disk but the half raid1's second (EX-G).
    let booted: Vec<_> = specs
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 6)
        .map(|(_, s)| s.clone())
        .collect();
    let booted = &booted[..];
    let config = json!({
        "targets": [{"serial": "EX-C"}],
        "existing": ["all", {"luks": ex.luks, "key_file": "md0.key"}],
        "tests": [
            {"workload": "seq_read", "name": "seq_read_1m", "bs": "1M", "size": "4M"},
            {"workload": "seq_write", "name": "seq_write_1m", "bs": "1M", "size": "4M"}
        ],
        "destructive": {"confirm": CONFIRM, "countdown": 0, "targets": [{"serial": "EX-C"}], "allow_overwrite_signatures": true}
    });
    let img = stick_copy(&a, &dir, Some(&config));
    // The container's key file on the stick, beside the config (relative to it).
    let key = dir.join("md0.key");
    fs::write(&key, b"fixture-key").unwrap();
    bootbench_qemu::stick::put_file(&img, &key, "/md0.key").expect("the key file on the stick");
    let outcome = boot(&a, &dir, Via::Direct, &img, booted, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);
    let serial = &outcome.serial;
    s8_the_console_lists_the_stacks(serial, &ex);
    for l in serial
        .lines()
        .filter(|l| l.contains("assembled") || l.contains("torn down"))
    {
        eprintln!("s8: {l}");
    }
    s8_each_array_is_read_and_never_written(&doc, &ex);
    s8_the_raid5_volume_is_read_and_never_written(&doc, &ex);
    s8_the_luks_container_and_its_volume_are_read_and_never_written(&doc, &ex);
    s8_the_two_disk_volumes_are_read(&doc, &ex);
    s8_no_member_is_written(&doc);
    assert!(serial.contains(TORN_DOWN), "no md device remains");
    let after: Vec<_> = files.iter().map(|f| checksum(f).unwrap()).collect();
    for (i, s) in serials.iter().enumerate() {
        assert_eq!(before[i], after[i], "{s} byte-identical");
    }

    s8_the_raid5_degraded_is_read(&a, &dir, &ex.raid5);
    let again: Vec<_> = files.iter().map(|f| checksum(f).unwrap()).collect();
    for (i, s) in serials.iter().enumerate() {
        assert_eq!(before[i], again[i], "{s} byte-identical after the degraded boot");
    }
}

/// `s8`'s console: under each disk what it and its partitions hold (the
/// mirror's and the raid5's members), then the arrays with the LUKS
/// container and the PV they hold, the volume group and its volume; the VG
/// inside LUKS unseen, the key never printed.
fn s8_the_console_lists_the_stacks(serial: &str, ex: &ExistingStacks) {
    let (mirror, raid5, half, luks) = (&ex.mirror, &ex.raid5, &ex.half, &ex.luks);
    let has = |what: &str| assert!(serial.contains(what), "the console lacks {what:?}:\n{serial}");
    for slot in 0..2 {
        has(&format!(
            " B): md member (metadata 1.2) of array uuid {mirror} name fixture:mirror raid1 slot {slot} of 2 (active)"
        ));
    }
    has("1 (from byte 1048576, ");
    for slot in 0..3 {
        has(&format!(
            "holds: md member (metadata 0.90) of array uuid {raid5} name - raid5 left-symmetric chunk 64 KiB slot {slot} of 3 (active)"
        ));
    }
    has("md arrays (from their members' superblocks; nothing assembled):");
    has(&format!("array uuid {mirror} name fixture:mirror raid1, metadata 1.2,"));
    has(&format!(
        "    holds: LUKS2 container uuid {luks} label - cipher aes-xts-plain64"
    ));
    has(&format!(
        // Three 64 MiB members, each using 64 MiB less 0.90's 64 KiB, two of data.
        "array uuid {raid5} name - raid5 left-symmetric chunk 64 KiB, metadata 0.90, 130944 KiB (134086656 B), 3 slot(s):"
    ));
    has(&format!("array uuid {half} name fixture:half raid1, metadata 1.2,"));
    has("1 missing; clean, degraded");
    has(&format!(
        "    holds: LVM physical volume uuid {} of volume group vgfile",
        ex.pv[0]
    ));
    has(&format!("  volume group vgfile uuid {} seqno", ex.pv[2]));
    has(&format!("PVs: pv0 md:{raid5}"));
    has("    volume vgfile/data 32 MiB (33554432 B), 1 segment(s) striped: can be opened read-only");
    assert!(
        !serial.contains("volume group vg0"),
        "vg0 is inside LUKS: unseen in the listing, which has no key"
    );
    assert!(!serial.contains("fixture-key"), "the key is never printed");
}

/// Each existing array assembled read-only from its superblocks (its
/// name, its members, the half one degraded) and read; its write test
/// skipped.
fn s8_each_array_is_read_and_never_written(doc: &Value, ex: &ExistingStacks) {
    for (uuid, name, members, missing) in [
        (&ex.raid5, "md-", 3, 0),
        (&ex.mirror, "mirror", 2, 0),
        (&ex.half, "half", 1, 1),
    ] {
        let t = by_stack_option(doc, "uuid", uuid);
        let st = &t["stack"];
        assert!(st["name"].as_str().unwrap().starts_with(name), "{st}");
        assert_eq!(st["mode"], "read-only", "{st}");
        assert_eq!(st["members"].as_array().unwrap().len(), members, "{st}");
        assert_eq!(
            st["notes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|n| n.as_str().unwrap().starts_with("degraded")),
            missing > 0,
            "{st}"
        );
        let path = path_of(t);
        assert!(path.starts_with("/dev/md"), "{t}");
        assert_eq!(status_of(test_on(doc, path, "seq_read_1m")), "ok", "{t}");
        let w = test_on(doc, path, "seq_write_1m");
        assert_eq!(status_of(w), "skipped", "{w}");
        assert!(
            w["status"]["reason"]
                .as_str()
                .unwrap_or("")
                .contains("an existing array is never written"),
            "{w}"
        );
    }
}

/// The volume on the raid5 (post 002), mapped read-only by the table LVM
/// loaded for it in the guest (the device beneath aside), read, never
/// written; compared with the array beneath.
fn s8_the_raid5_volume_is_read_and_never_written(doc: &Value, ex: &ExistingStacks) {
    let table = ex.view("table", "");
    let vol = by_stack_option(doc, "lv", "vgfile/data");
    let st = &vol["stack"];
    assert_eq!(st["options"]["lv"], "vgfile/data", "{st}");
    assert_eq!(st["mode"], "read-only", "{st}");
    let array5 = by_stack_option(doc, "uuid", &ex.raid5);
    assert_eq!(st["on"], array5["path"], "{st}");
    let ours = st["options"]["table"].as_str().unwrap();
    assert_eq!(
        table_fields(ours),
        table_fields(&table),
        "ours {ours:?}, LVM's {table:?}"
    );
    assert!(ours.contains(array5["path"].as_str().unwrap()), "{ours}");
    let path = path_of(vol);
    assert!(path.starts_with("/dev/dm-"), "{vol}");
    assert_eq!(vol["size_bytes"].as_u64(), Some(32 << 20), "{vol}");
    assert_eq!(status_of(test_on(doc, path, "seq_read_1m")), "ok", "{vol}");
    let w = test_on(doc, path, "seq_write_1m");
    assert_eq!(status_of(w), "skipped", "{w}");
    assert!(
        w["status"]["reason"]
            .as_str()
            .unwrap_or("")
            .contains("an existing volume is never written"),
        "{w}"
    );
    assert!(
        doc["analysis"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["target"] == path && a["kind"] == "layer" && a["from"][0] == array5["path"]),
        "the volume against the array beneath: {}",
        doc["analysis"]
    );
}

/// The LUKS2 container on the raid1 (post 000), opened with the key file
/// from the stick, read-only, read; the volume inside it mapped by LVM's
/// table over it and read; neither written; no key nor key file in the
/// document.
fn s8_the_luks_container_and_its_volume_are_read_and_never_written(doc: &Value, ex: &ExistingStacks) {
    let mirror_t = by_stack_option(doc, "uuid", &ex.mirror);
    let c = doc["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["stack"]["level"] == "luks")
        .unwrap_or_else(|| panic!("no target for the container: {}", doc["targets"]));
    let cs = &c["stack"];
    assert_eq!(cs["options"]["uuid"], *ex.luks, "{cs}");
    assert_eq!(cs["mode"], "read-only", "{cs}");
    assert_eq!(cs["on"], mirror_t["path"], "{cs}");
    let cpath = path_of(c);
    assert!(cpath.starts_with("/dev/dm-"), "{c}");
    assert_eq!(status_of(test_on(doc, cpath, "seq_read_1m")), "ok", "{c}");
    let w = test_on(doc, cpath, "seq_write_1m");
    assert_eq!(status_of(w), "skipped", "{w}");
    assert!(
        w["status"]["reason"]
            .as_str()
            .unwrap_or("")
            .contains("an existing LUKS container is never written"),
        "{w}"
    );
    let root = by_stack_option(doc, "lv", "vg0/root");
    let rt = root["stack"]["options"]["table"].as_str().unwrap();
    let want = ex.view("table-root", "");
    assert_eq!(table_fields(rt), table_fields(&want), "ours {rt:?}, LVM's {want:?}");
    assert_eq!(root["stack"]["on"], c["path"], "{root}");
    assert_eq!(status_of(test_on(doc, path_of(root), "seq_read_1m")), "ok", "{root}");
    let text = serde_json::to_string(doc).unwrap();
    assert!(
        !text.contains("fixture-key") && !text.contains("md0.key"),
        "no key nor key file in the document"
    );
}

/// The volumes over two plain disks: striped (one striped target), and
/// spanning them in two linear segments (a table of two targets), each
/// the table LVM loaded, read.
fn s8_the_two_disk_volumes_are_read(doc: &Value, ex: &ExistingStacks) {
    for (lv, tag, segments) in [("vgtwo/str", "table-str", 1), ("vgtwo/span", "table-span", 2)] {
        let t = by_stack_option(doc, "lv", lv);
        let ours = t["stack"]["options"]["table"].as_str().unwrap();
        let lvm = ex.views(tag);
        assert_eq!(lvm.len(), segments, "{lv}: {lvm:?}");
        let ours_lines: Vec<&str> = ours.split("; ").collect();
        assert_eq!(ours_lines.len(), segments, "{lv}: {ours}");
        for (o, l) in ours_lines.iter().zip(&lvm) {
            assert_eq!(table_fields(o), table_fields(l), "{lv}: ours {o:?}, LVM's {l:?}");
        }
        assert_eq!(t["stack"]["members"].as_array().unwrap().len(), 2, "{t}");
        assert_eq!(status_of(test_on(doc, path_of(t), "seq_read_1m")), "ok", "{t}");
    }
}

/// EX-D alone meets its read error (the fault is real); the raid5 read
/// around it (ok, as its array's check says) and, read-only, wrote nothing
/// back (the checksums say). The raid5's member EX-C, named writable in
/// `destructive`, is not written either.
fn s8_no_member_is_written(doc: &Value) {
    let d = tests_on(doc, "EX-D");
    assert_eq!(status_of(d[0]), "error", "EX-D: {}", d[0]["status"]);
    let c = tests_on(doc, "EX-C");
    let cw = c
        .iter()
        .find(|t| t["name"] == "seq_write_1m")
        .expect("EX-C's write test");
    assert_eq!(status_of(cw), "skipped", "{cw}");
    assert!(
        cw["status"]["reason"]
            .as_str()
            .unwrap_or("")
            .contains("a member of the existing array"),
        "{cw}"
    );
}

/// Booted again without the raid5's third member (EX-E) and without the
/// fault: the raid5 (`raid5`) starts degraded, read-only, and its volume
/// is read through it (EX-E's chunks rebuilt from parity by the kernel, in
/// memory: nothing is written to the other members); no md or dm device
/// remains.
fn s8_the_raid5_degraded_is_read(a: &Artifacts, dir: &Path, raid5: &str) {
    let degraded = disks(&["virtio,size=64M,serial=EX-C", "virtio,size=64M,serial=EX-D"]);
    let config = json!({
        "existing": [raid5, "vgfile/data"],
        "tests": [{"workload": "seq_read", "name": "seq_read_1m", "bs": "1M", "size": "8M"}]
    });
    let img = stick_copy(a, dir, Some(&config));
    let outcome = boot(a, dir, Via::Direct, &img, &degraded, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert_eq!(doc["run"]["status"], "ok", "run: {}", doc["run"]);
    let t5 = by_stack_option(&doc, "uuid", raid5);
    assert_eq!(t5["stack"]["members"].as_array().unwrap().len(), 2, "{t5}");
    assert!(
        t5["stack"]["notes"]
            .to_string()
            .contains("degraded: 1 slot(s) without a member"),
        "{t5}"
    );
    assert_eq!(status_of(test_on(&doc, path_of(t5), "seq_read_1m")), "ok", "{t5}");
    let v = by_stack_option(&doc, "lv", "vgfile/data");
    assert_eq!(status_of(test_on(&doc, path_of(v), "seq_read_1m")), "ok", "{v}");
    assert!(outcome.serial.contains(TORN_DOWN), "no md or dm device remains");
}

/// A disk that barely answers (QEMU throttles it to 512 B/s: each 4 KiB
/// read takes 8 s) holds neither the console's listing of what the disks
/// hold (waited for at most 10 s, then "not read") nor the plan's read of
/// the superblocks for `existing` (at most 30 s, then an error naming
/// `existing`): the run ends with that error in its document, nothing
/// assembled, no disk changed.
#[test]
fn s9_a_disk_that_barely_answers_holds_neither_the_listing_nor_the_plan() {
    let Some(a) = artifacts("s9_slow_superblocks") else {
        return;
    };
    let scratch = Scratch::new("s9_slow_superblocks");
    let dir = scratch.0.clone();
    let specs = disks(&["virtio,size=16M,serial=S9-OK", "virtio,size=16M,serial=S9-SLOW,bps=512"]);
    let (files, before) = disks_with_contents(&specs, &dir, |i| Some(900 + i as u64));
    let config = json!({
        "existing": "all",
        "tests": [{"workload": "seq_read", "name": "seq_read_1m", "bs": "1M", "size": "1M"}]
    });
    let img = stick_copy(&a, &dir, Some(&config));
    let outcome = boot(&a, &dir, Via::Direct, &img, &specs, "");
    let (_, _, doc) = the_document(&outcome);
    assert_schema_valid(&doc);
    assert!(
        outcome
            .serial
            .contains("what the disks hold: not read: a disk did not answer in time (10 s)"),
        "the console's listing gave up after 10 s:\n{}",
        outcome.serial
    );
    assert_eq!(doc["run"]["status"], "error", "run: {}", doc["run"]);
    let why = doc["run"]["error"].as_str().unwrap_or_default();
    assert!(
        why.contains("existing: the disks' md superblocks were not read: a disk did not answer in time (30 s)"),
        "{why}"
    );
    let after: Vec<_> = files.iter().map(|f| checksum(f).unwrap()).collect();
    assert_eq!(before, after, "no disk changed");
}
