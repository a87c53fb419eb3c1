//! `bootbench-init list` on loop devices over files in /dev/shm holding
//! what cryptsetup, LVM and mdadm made (root, `losetup` and those tools
//! needed): the containers, volume groups, arrays and block sizes it shows.

use std::path::{Path, PathBuf};
use std::process::Command;

use bench_core::spec::Workload;
use serde_json::Value;

mod common;
use common::cli::{
    assert_stacks_valid, config, doc_of, listed, run, stderr, tests_of, workload_writes, BIN, LOOP_BYTES, MANIFEST,
};
use common::{unique, Loop, ShmFile};

/// What a disk holds, in `list`: a LUKS2 and a LUKS1 container, their
/// headers written by Debian's cryptsetup (`luksFormat`, the fixtures of
/// issue 32), each on a loop device: version, UUID (as `cryptsetup
/// luksUUID` says), label, cipher, key size, where the data starts and the
/// keyslots in use, in the JSON and a `holds:` line under the disk; a
/// plain device holds nothing; nothing is written.
#[test]
fn list_shows_the_luks_containers_cryptsetup_made() {
    let cs = "cryptsetup";
    let key = ShmFile::new(&unique("luks-key"), &[7u8; 32]);
    let make = |args: &[&str]| -> (Loop, String) {
        let f = ShmFile::new(&unique("luks.img"), &vec![0u8; 32 << 20]);
        let mut cmd = Command::new(cs);
        cmd.args([
            "luksFormat",
            "--batch-mode",
            "--pbkdf-force-iterations",
            "1000",
            "--key-file",
            key.path(),
        ]);
        let o = cmd
            .args(args)
            .arg(f.path())
            .output()
            .expect("cryptsetup (Debian's cryptsetup-bin, .ci/deps installs it)");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let uuid = Command::new(cs).args(["luksUUID", f.path()]).output().unwrap();
        let uuid = String::from_utf8(uuid.stdout).unwrap().trim().to_string();
        (Loop::with_contents(std::fs::read(f.path()).unwrap()), uuid)
    };
    let (l2, u2) = make(&[
        "--type",
        "luks2",
        "--pbkdf",
        "pbkdf2",
        "--label",
        "bench",
        "--sector-size",
        "4096",
    ]);
    let (l1, u1) = make(&["--type", "luks1"]);
    let plain = Loop::zeroed(LOOP_BYTES);
    let (h2, h1) = (l2.hash(), l1.hash());
    let o = run(&["list", "--all", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let list: Value = serde_json::from_slice(&o.stdout).unwrap();
    let entry = |dev: &str| listed(&list, dev);
    assert_eq!(
        entry(&l2.dev)["luks"],
        serde_json::json!({"version": 2, "uuid": u2, "label": "bench", "cipher": "aes-xts-plain64",
            "key_bits": 512, "data_offset_bytes": 16u64 << 20, "sector_size": 4096, "keyslots": 1})
    );
    let e1 = entry(&l1.dev);
    assert_eq!(
        (
            e1["luks"]["version"].as_u64(),
            e1["luks"]["uuid"].as_str(),
            e1["luks"]["cipher"].as_str()
        ),
        (Some(1), Some(u1.as_str()), Some("aes-xts-plain64"))
    );
    assert_eq!(
        (e1["luks"]["key_bits"].as_u64(), e1["luks"]["keyslots"].as_u64()),
        (Some(512), Some(1))
    );
    assert_eq!(
        e1["luks"]["data_offset_bytes"].as_u64(),
        Some(4096 * 512),
        "LUKS1's payload offset, 4096 sectors"
    );
    assert!(entry(&plain.dev).get("luks").is_none());
    let text = String::from_utf8(run(&["list", "--all"]).stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(&format!("{} ", l2.dev)))
        .expect("listed");
    assert_eq!(
        lines[at + 1],
        format!(
            "  holds: LUKS2 container uuid {u2} label bench cipher aes-xts-plain64 key 512 bits data from byte \
             16777216 in sectors of 4096 B; 1 keyslot(s) in use"
        )
    );
    assert_eq!((l2.hash(), l1.hash()), (h2, h1), "list reads only");
}

/// An LVM command of Debian's lvm2 limited to `devs` (`--devices`: no
/// other disk of the machine is scanned or touched) and keeping no backup
/// of the metadata in /etc/lvm, its stdout.
fn lvm(args: &[&str], devs: &str) -> String {
    let o = Command::new("lvm")
        .args(args)
        .args(["--devices", devs])
        // No metadata backups of the test's VGs left in the host's /etc/lvm.
        .args(["--config", "backup { backup = 0 archive = 0 }"])
        .output()
        .expect("lvm (Debian's lvm2, .ci/deps installs it)");
    assert!(
        o.status.success(),
        "lvm {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// `list` into a pipe whose reader stops after the first line (`list |
/// head -1`): the list ends quietly with status 0, no panic on the
/// broken pipe.
#[test]
fn list_into_a_closed_pipe_ends_quietly() {
    let _many = Loop::zeroed(LOOP_BYTES);
    let mut child = Command::new(BIN)
        .args(["list", "--all"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before reading anything.
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
}

/// `lvm CMD`'s JSON report of `fields` (in bytes, no suffix) on `devs`:
/// the rows under `key` (`pv`, `vg`, `lv`).
fn lvm_report(devs: &str, cmd: &str, fields: &str, key: &str) -> Vec<Value> {
    let out = lvm(
        &[
            cmd,
            "--reportformat",
            "json",
            "--units",
            "b",
            "--nosuffix",
            "-o",
            fields,
        ],
        devs,
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    v["report"][0][key].as_array().unwrap().clone()
}

/// A number of an LVM JSON report (which gives every number as a string).
fn lvm_num(v: &Value) -> u64 {
    v.as_str().unwrap().parse::<u64>().unwrap()
}

/// `validate` of a config whose `existing` is `existing`, with one short
/// read test.
fn validate_existing(existing: Value) -> std::process::Output {
    let cfg = ShmFile::new(
        &unique("existing.json"),
        serde_json::json!({
            "existing": existing,
            "tests": [{"workload": "seq_read", "name": "r", "bs": "1M", "size": "1M"}]
        })
        .to_string()
        .as_bytes(),
    );
    run(&["validate", cfg.path()])
}

/// What two PVs hold, in `list`: a volume group written by Debian's lvm2
/// on two loop devices (pvcreate, vgcreate, and two volumes created
/// without device-mapper: a linear one and one striped over both PVs),
/// checked field by field against what `pvs`, `vgs` and `lvs` report of
/// the same devices; the text names the VG, its PVs and each volume as
/// openable read-only; nothing is written by list.
#[test]
fn list_shows_the_volume_group_lvm_made() {
    let (a, b) = (Loop::zeroed(LOOP_BYTES), Loop::zeroed(LOOP_BYTES));
    let devs = format!("{},{}", a.dev, b.dev);
    lvm(&["pvcreate", "-q", &a.dev, &b.dev], &devs);
    let vg = unique("vg").replace(['/', '.'], "_");
    lvm(&["vgcreate", "-q", &vg, &a.dev, &b.dev], &devs);
    let lvc = ["lvcreate", "-q", "--driverloaded", "n", "-an", "-Zn"];
    lvm(&[&lvc[..], &["-L", "8M", "-n", "lin", &vg]].concat(), &devs);
    lvm(
        &[&lvc[..], &["-i2", "-I64", "-L", "16M", "-n", "str", &vg]].concat(),
        &devs,
    );
    let pvs = lvm_report(&devs, "pvs", "pv_name,pv_uuid,vg_uuid,dev_size,pe_start", "pv");
    let vgs = lvm_report(&devs, "vgs", "vg_name,vg_uuid,vg_seqno,vg_extent_size", "vg");
    let lvs = lvm_report(
        &devs,
        "lvs",
        "lv_name,lv_uuid,lv_size,segtype,stripes,stripe_size,seg_start_pe,seg_size_pe",
        "lv",
    );
    let (ha, hb) = (a.hash(), b.hash());

    check_lvm_list_json(&pvs, &vgs, &lvs);
    check_lvm_list_text(&vg, &pvs, &a, &b);
    check_lvm_existing_tables(&devs, &vg, &pvs, &vgs);
    assert_eq!((a.hash(), b.hash()), (ha, hb), "list reads only");
    drop(b);
    check_lvm_with_a_pv_gone(&vg, &a);
}

/// `list --json` of the VG's PVs, field by field as `pvs`, `vgs` and `lvs`
/// report them: each PV's UUID, size and first extent, the VG's name, UUID,
/// seqno and extent size, and each volume's UUID, size and segment (type,
/// stripes, stripe size, extents), every volume openable.
fn check_lvm_list_json(pvs: &[Value], vgs: &[Value], lvs: &[Value]) {
    let o = run(&["list", "--all", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let list: Value = serde_json::from_slice(&o.stdout).unwrap();
    let entry = |dev: &str| listed(&list, dev);
    for pv in pvs {
        let e = entry(pv["pv_name"].as_str().unwrap());
        let got = &e["lvm"];
        assert_eq!(got["pv_uuid"], pv["pv_uuid"], "{e}");
        assert_eq!(got["device_size_bytes"].as_u64(), Some(lvm_num(&pv["dev_size"])));
        let vgj = &got["vg"];
        assert_eq!((&vgj["name"], &vgj["uuid"]), (&vgs[0]["vg_name"], &vgs[0]["vg_uuid"]));
        assert_eq!(vgj["seqno"].as_u64(), Some(lvm_num(&vgs[0]["vg_seqno"])));
        assert_eq!(vgj["extent_bytes"].as_u64(), Some(lvm_num(&vgs[0]["vg_extent_size"])));
        let mine = vgj["pvs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["uuid"] == pv["pv_uuid"])
            .expect("the PV in its VG");
        assert_eq!(mine["pe_start_bytes"].as_u64(), Some(lvm_num(&pv["pe_start"])));
        assert_eq!(vgj["lvs"].as_array().unwrap().len(), lvs.len());
        for lv in lvs {
            let l = vgj["lvs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|l| l["name"] == lv["lv_name"])
                .unwrap();
            assert_eq!(l["uuid"], lv["lv_uuid"]);
            assert_eq!(l["size_bytes"].as_u64(), Some(lvm_num(&lv["lv_size"])));
            let seg = &l["segments"][0];
            // lvs names a one-stripe segment linear; the metadata, striped.
            let kind = if lv["segtype"] == "linear" {
                "striped"
            } else {
                lv["segtype"].as_str().unwrap()
            };
            assert_eq!(seg["type"], kind);
            assert_eq!(seg["stripes"].as_array().unwrap().len() as u64, lvm_num(&lv["stripes"]));
            assert_eq!(seg["stripe_bytes"].as_u64().unwrap_or(0), lvm_num(&lv["stripe_size"]));
            assert_eq!(
                (seg["start_extent"].as_u64(), seg["extent_count"].as_u64()),
                (Some(lvm_num(&lv["seg_start_pe"])), Some(lvm_num(&lv["seg_size_pe"])))
            );
            assert!(l.get("not_opened").is_none(), "{l}");
        }
    }
}

/// `list`'s text of the VG: a `holds:` line under the first PV, the VG's
/// line naming both PVs, and each volume with its size as openable
/// read-only.
fn check_lvm_list_text(vg: &str, pvs: &[Value], a: &Loop, b: &Loop) {
    let text = String::from_utf8(run(&["list", "--all"]).stdout).unwrap();
    assert!(
        text.contains(&format!(
            "  holds: LVM physical volume uuid {} of volume group {vg} (seqno",
            pvs[0]["pv_uuid"].as_str().unwrap()
        )),
        "{text}"
    );
    let vg_line = text
        .lines()
        .find(|l| l.starts_with(&format!("  volume group {vg} ")))
        .expect("the VG line");
    assert!(
        vg_line.ends_with(&format!("PVs: pv0 {}, pv1 {}", a.dev, b.dev)),
        "{vg_line}"
    );
    for (lv, size) in [
        ("lin", "8 MiB (8388608 B), 1 segment(s) striped"),
        ("str", "16 MiB (16777216 B), 1 segment(s) striped"),
    ] {
        assert!(
            text.contains(&format!("    volume {vg}/{lv} {size}: can be opened read-only")),
            "{lv}: {text}"
        );
    }
}

/// `existing` plans each volume as the table LVM's own report makes of
/// it: each segment at the PV's first extent plus its own, in sectors.
fn check_lvm_existing_tables(devs: &str, vg: &str, pvs: &[Value], vgs: &[Value]) {
    let segs = lvm_report(
        devs,
        "lvs",
        "lv_name,seg_start_pe,seg_size_pe,stripes,stripe_size,seg_pe_ranges",
        "lv",
    );
    let ext = lvm_num(&vgs[0]["vg_extent_size"]) / 512;
    let pe_start = |dev: &str| lvm_num(&pvs.iter().find(|p| p["pv_name"] == dev).unwrap()["pe_start"]) / 512;
    let o = validate_existing(serde_json::json!([format!("{vg}/lin"), format!("{vg}/str")]));
    let plan = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{plan}{}", stderr(&o));
    for seg in &segs {
        let lv = seg["lv_name"].as_str().unwrap();
        let ranges: Vec<(&str, u64)> = seg["seg_pe_ranges"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .map(|r| {
                let (dev, pes) = r.rsplit_once(':').unwrap();
                (dev, pes.split('-').next().unwrap().parse().unwrap())
            })
            .collect();
        let start = lvm_num(&seg["seg_start_pe"]) * ext;
        let len = lvm_num(&seg["seg_size_pe"]) * ext;
        let at = |(dev, pe): &(&str, u64)| format!("{dev} {}", pe_start(dev) + pe * ext);
        let want = if lvm_num(&seg["stripes"]) == 1 {
            format!("{start} {len} linear {}", at(&ranges[0]))
        } else {
            format!(
                "{start} {len} striped {} {} {}",
                ranges.len(),
                lvm_num(&seg["stripe_size"]) / 512,
                ranges.iter().map(at).collect::<Vec<_>>().join(" ")
            )
        };
        assert!(
            plan.contains(&format!("the existing LVM volume {vg}/{lv}, read-only, table: {want}")),
            "{lv}: want {want:?} in {plan}"
        );
    }
}

/// With the second PV (`pv1`) gone: naming the striped volume in
/// `existing` is an error and the linear one, on the PV still here (`a`),
/// is planned; `list` shows pv1 missing, the striped volume not opened
/// and the linear one still openable.
fn check_lvm_with_a_pv_gone(vg: &str, a: &Loop) {
    // With one PV gone, naming the striped volume is an error; the linear
    // one, on the PV still here, is planned.
    let o = validate_existing(serde_json::json!([format!("{vg}/str")]));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "existing[0]: \"{vg}/str\" cannot be opened read-only: its PV(s) pv1 are missing"
        )),
        "{}",
        stderr(&o)
    );
    let o = validate_existing(serde_json::json!([format!("{vg}/lin")]));
    let plan = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{plan}{}", stderr(&o));
    assert!(
        plan.contains(&format!("the existing LVM volume {vg}/lin, read-only")),
        "{plan}"
    );
    // With one PV gone, the striped volume cannot be opened; the linear one
    // on the first PV still can.
    let text = String::from_utf8(run(&["list", "--all"]).stdout).unwrap();
    let vg_line = text
        .lines()
        .find(|l| l.starts_with(&format!("  volume group {vg} ")))
        .expect("the VG line");
    assert!(
        vg_line.ends_with(&format!("PVs: pv0 {}, pv1 missing", a.dev)),
        "{vg_line}"
    );
    assert!(
        text.contains(&format!(
            "    volume {vg}/str 16 MiB (16777216 B), 1 segment(s) striped: not opened: its PV(s) pv1 are missing"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "    volume {vg}/lin 8 MiB (8388608 B), 1 segment(s) striped: can be opened read-only"
        )),
        "{text}"
    );
}

/// `make image`'s output directory (Debian's kernel and its modules), where
/// the fixture guest boots from; `None` after saying so when it is missing
/// and CI is not set (in CI, a failure).
fn image_out(test: &str) -> Option<PathBuf> {
    let out = std::env::var_os("BOOTBENCH_OUT").map_or_else(|| Path::new(MANIFEST).join("../out"), PathBuf::from);
    if out.join("vmlinuz").exists() && out.join("kernel").is_dir() {
        return Some(out);
    }
    let msg = format!("{test}: {} has no vmlinuz and kernel/ (make image)", out.display());
    assert!(
        std::env::var_os("CI").is_none(),
        "{msg}; CI is set, so this is a failure"
    );
    eprintln!("SKIPPED {msg}");
    None
}

/// A directory of this test's own under the temporary directory, removed on drop.
struct TmpDir(PathBuf);

impl TmpDir {
    fn new(name: &str) -> TmpDir {
        let d = std::env::temp_dir().join(unique(name));
        std::fs::create_dir_all(&d).unwrap();
        TmpDir(d)
    }
}

impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `KEY=VALUE` lines (mdadm's --export) as pairs.
fn exported(text: &str) -> std::collections::HashMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The value of a `Key : value` line of `mdadm --examine`'s text.
fn examined<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(" : ")?;
        (k.trim() == key).then(|| v.trim())
    })
}

/// Firmware RAID metadata that Debian's mdadm wrote in the fixture guest
/// (`tests/fixtures/firmware.sh`): an Intel IMSM container (the guest has
/// no Intel option ROM: `IMSM_NO_PLATFORM=1`) and a SNIA DDF container,
/// each with a raid1 volume. `list` reports each disk's metadata as found,
/// as mdadm --examine names it, and assembles nothing: no md array comes
/// of them, and no disk changes.
#[test]
fn list_reports_firmware_raid_mdadm_made() {
    let Some(out) = image_out("list_firmware_raid") else {
        return;
    };
    let dir = TmpDir::new("fw-raid");
    let letters = ["a", "b", "c", "d"];
    let mut cmd = Command::new(Path::new(MANIFEST).join("../tests/fixtures/guest.sh"));
    cmd.arg("--out")
        .arg(&out)
        .arg("--script")
        .arg(Path::new(MANIFEST).join("../tests/fixtures/firmware.sh"));
    for l in letters {
        // DDF finds a 32 MiB disk too small for its metadata.
        cmd.arg("--disk")
            .arg(format!("{}:64M", dir.0.join(format!("{l}.img")).display()));
    }
    let o = cmd.output().expect("tests/fixtures/guest.sh");
    assert!(
        o.status.success(),
        "the fixture guest failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let console = std::fs::read_to_string(dir.0.join("a.img.console.log")).unwrap();
    let loops: Vec<Loop> = letters
        .iter()
        .map(|l| Loop::with_contents(std::fs::read(dir.0.join(format!("{l}.img"))).unwrap()))
        .collect();
    let hashes: Vec<u64> = loops.iter().map(Loop::hash).collect();
    let o = run(&["list", "--all", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let list: Value = serde_json::from_slice(&o.stdout).unwrap();
    for (i, l) in letters.iter().enumerate() {
        let magic = console
            .lines()
            .find_map(|x| x.strip_prefix(&format!("view vd{l} Magic : ")))
            .unwrap_or_else(|| panic!("mdadm --examine of vd{l}: {console}"));
        let want = match magic.trim() {
            "Intel Raid ISM Cfg Sig." => "Intel IMSM (Matrix Storage / VROC)",
            "de11de11" => "SNIA DDF",
            other => panic!("vd{l}: mdadm says {other:?}"),
        };
        let e = listed(&list, &loops[i].dev);
        assert_eq!(e["firmware_raid"], want, "vd{l}: {e}");
        assert!(e.get("md").is_none(), "no native md superblock: {e}");
    }
    let text = String::from_utf8(run(&["list", "--all"]).stdout).unwrap();
    for fw in ["Intel IMSM (Matrix Storage / VROC)", "SNIA DDF"] {
        assert!(
            text.contains(&format!("holds: firmware RAID metadata ({fw}), not assembled")),
            "{text}"
        );
    }
    let o = run(&["list", "--all", "--json", "--stacks"]);
    let st: Value = serde_json::from_slice(&o.stdout).unwrap();
    for a in st["md_arrays"].as_array().unwrap() {
        let slots = a["slots"].to_string();
        assert!(
            !loops.iter().any(|l| slots.contains(&format!("\"{}\"", l.dev))),
            "assembled from firmware RAID: {a}"
        );
    }
    for (i, l) in loops.iter().enumerate() {
        assert_eq!(l.hash(), hashes[i], "{} changed", l.dev);
    }
}

/// The md stacks the fixture guest made: its console (the guest's own
/// views, each line tagged `view WHAT ...`) and a loop device over each of
/// its disks (vda, vdb, ... in `letters`' order) with its hash before
/// anything was listed.
struct MdStacks {
    console: String,
    letters: &'static [&'static str],
    loops: Vec<Loop>,
    hashes: Vec<u64>,
}

impl MdStacks {
    /// The guest's view lines tagged `tag`, the tag taken off.
    fn view(&self, tag: &str) -> Vec<String> {
        self.console
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("view {tag} ")))
            .map(str::to_string)
            .collect()
    }

    /// The guest's view lines tagged `tag` split at `|` (pvs', vgs' and
    /// lvs' rows).
    fn rows(&self, tag: &str) -> Vec<Vec<String>> {
        self.view(tag)
            .iter()
            .map(|l| l.split('|').map(str::to_string).collect())
            .collect()
    }

    /// The loop device over the guest's disk `guest` (`/dev/vdX`).
    fn dev_of(&self, guest: &str) -> String {
        let i = self
            .letters
            .iter()
            .position(|l| guest == format!("/dev/vd{l}"))
            .unwrap();
        self.loops[i].dev.clone()
    }

    /// The UUID of the LUKS container the guest made on array `md`.
    fn luks_of(&self, md: &str) -> String {
        self.view(md)
            .iter()
            .find_map(|l| l.strip_prefix("luks ").map(str::to_string))
            .unwrap()
    }

    /// No loop device changed since the guest made them: `why` says what
    /// was just done.
    fn assert_unchanged(&self, why: &str) {
        for (i, l) in self.loops.iter().enumerate() {
            assert_eq!(l.hash(), self.hashes[i], "{} changed{why}", l.dev);
        }
    }
}

/// Each array the guest made (`md0` to `md3`): its `mdadm --detail
/// --export` pairs and the size in KiB `mdadm --examine` gives (none for a
/// raid0).
type MdArrays = std::collections::HashMap<&'static str, (std::collections::HashMap<String, String>, Option<String>)>;

/// `list --all --json --stacks`, valid by its schema.
fn list_stacks() -> Value {
    let o = run(&["list", "--all", "--json", "--stacks"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let st: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_stacks_valid(&st);
    st
}

/// The md array of UUID `uuid` in `list --stacks`' JSON.
fn md_array(st: &Value, uuid: &str) -> Value {
    st["md_arrays"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["uuid"] == uuid)
        .unwrap_or_else(|| panic!("{uuid}: {st}"))
        .clone()
}

/// A device-mapper table's fields, each `major:minor` or planned path
/// (`md:NAME`, `dm:NAME`) made "DEV".
fn table_fields(t: &str) -> Vec<String> {
    t.split_whitespace()
        .map(|f| {
            if f.contains(':') {
                "DEV".to_string()
            } else {
                f.to_string()
            }
        })
        .collect()
}

/// The stacks of the posts, made by Debian's mdadm, cryptsetup and lvm2
/// in a QEMU guest of Debian's kernel (`tests/fixtures/guest.sh`, the host
/// having no md or device-mapper): a raid1 (superblock 1.2) with LUKS2 on
/// it and LVM inside (post 000), a raid5 (0.90) under LVM (post 002), a
/// raid0 (1.1) under LVM, a raid1 (1.0) with LUKS1. On loop devices over
/// the images, `list --json` shows each member's superblock as `mdadm
/// --examine` does, field by field, and `list --json --stacks` each array
/// as the guest's `mdadm --detail`, `cryptsetup luksUUID`, `pvs`, `vgs` and
/// `lvs` saw it assembled: slots, size, the LUKS container and the PV at
/// the array's start (read through its members: raid5's and raid0's
/// chunks), the volume groups and their volumes; the VG inside LUKS stays
/// unseen. Then a raid5 member gone: degraded, still read; a raid0 member
/// gone: too few to start, its VG gone. No member changes.
#[test]
fn list_shows_the_md_arrays_and_stacks_mdadm_made() {
    let Some(out) = image_out("list_md_stacks") else {
        return;
    };
    let dir = TmpDir::new("md-stacks");
    let script = Path::new(MANIFEST).join("../tests/fixtures/stacks.sh");
    let letters = &["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"];
    let mut cmd = Command::new(Path::new(MANIFEST).join("../tests/fixtures/guest.sh"));
    cmd.arg("--out").arg(&out).arg("--script").arg(&script);
    for (i, l) in letters.iter().enumerate() {
        let size = if i < 2 { "64M" } else { "32M" };
        cmd.arg("--disk")
            .arg(format!("{}:{size}", dir.0.join(format!("{l}.img")).display()));
    }
    let o = cmd.output().expect("tests/fixtures/guest.sh");
    assert!(
        o.status.success(),
        "the fixture guest failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let console = std::fs::read_to_string(dir.0.join("a.img.console.log")).unwrap();
    let loops: Vec<Loop> = letters
        .iter()
        .map(|l| Loop::with_contents(std::fs::read(dir.0.join(format!("{l}.img"))).unwrap()))
        .collect();
    let hashes: Vec<u64> = loops.iter().map(Loop::hash).collect();
    let mut f = MdStacks {
        console,
        letters,
        loops,
        hashes,
    };

    let arrays = check_md_members(&f);
    let st = list_stacks();
    check_md_arrays(&f, &st, &arrays);
    check_md_volume_groups(&f, &st, &arrays);
    let text = String::from_utf8(run(&["list", "--all"]).stdout).unwrap();
    let raid5 = &arrays["md1"].0["MD_UUID"];
    check_md_list_text(&f, raid5, &text);
    check_md_stale_member(&f, &st, &text);
    check_md_existing_arrays_and_volumes(&f, raid5);
    check_md_existing_luks(&f);
    f.assert_unchanged(" by opening its containers");
    check_md_existing_errors();

    // A raid5 member and a raid0 member gone.
    f.assert_unchanged("");
    let (gone5, gone0) = (f.loops.remove(4), f.loops.remove(4));
    drop((gone5, gone0));
    check_md_members_gone(raid5, &arrays["md2"].0["MD_UUID"]);
    for l in &f.loops {
        assert!(l.changed_at().is_none(), "{} changed", l.dev);
    }
}

/// Each member, as mdadm --examine on the host reads the same device:
/// `list --json` gives its array's UUID, metadata, level, disks and name
/// and its role as the guest's `mdadm --detail` has them, and its events,
/// times, device UUID, state, layout, chunk and offsets as `mdadm
/// --examine` prints them; no LVM or LUKS of its own. Returns the arrays.
fn check_md_members(f: &MdStacks) -> MdArrays {
    let o = run(&["list", "--all", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let list: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut arrays = std::collections::HashMap::new();
    for md in ["md0", "md1", "md2", "md3"] {
        let detail = exported(&f.view(md).join("\n"));
        for (k, guest_dev) in detail.iter().filter(|(k, _)| k.ends_with("_DEV")) {
            let dev = f.dev_of(guest_dev);
            let e = listed(&list, &dev);
            let m = &e["md"];
            let ex = Command::new("mdadm")
                .env("TZ", "UTC")
                .args(["--examine", &dev])
                .output()
                .unwrap();
            let ex = String::from_utf8(ex.stdout).unwrap();
            let exp = exported(
                &String::from_utf8(
                    Command::new("mdadm")
                        .args(["--examine", "--export", &dev])
                        .output()
                        .unwrap()
                        .stdout,
                )
                .unwrap(),
            );
            assert_eq!(m["array_uuid"].as_str(), Some(detail["MD_UUID"].as_str()), "{dev}: {m}");
            assert_eq!(m["metadata"].as_str(), Some(detail["MD_METADATA"].as_str()), "{dev}");
            assert_eq!(m["level"].as_str(), Some(detail["MD_LEVEL"].as_str()), "{dev}");
            assert_eq!(m["raid_disks"].to_string(), detail["MD_DEVICES"], "{dev}");
            assert_eq!(m["name"].as_str(), detail.get("MD_NAME").map(String::as_str), "{dev}");
            let role = &detail[&format!("{}_ROLE", k.strip_suffix("_DEV").unwrap())];
            assert_eq!(m["role"].to_string(), *role, "{dev}");
            assert_eq!(m["events"].to_string(), exp["MD_EVENTS"], "{dev}");
            check_md_member_examined(m, &ex, &exp, &dev);
            assert!(
                e.get("lvm").is_none() && e.get("luks").is_none(),
                "{dev}: a member's data is its array's: {e}"
            );
            let size_kib = examined(&ex, "Array Size")
                .and_then(|s| s.split_whitespace().next())
                .map(str::to_string);
            arrays.insert(md, (detail.clone(), size_kib));
        }
    }
    assert_eq!(arrays.len(), 4);
    arrays
}

/// A member's superblock `m` in `list --json` against `mdadm --examine`'s
/// text `ex` and `--export` pairs `exp` of the same device `dev`: its
/// times, device UUID, state, layout, chunk and offsets.
fn check_md_member_examined(m: &Value, ex: &str, exp: &std::collections::HashMap<String, String>, dev: &str) {
    // The times as --examine prints them (mdadm's --export of a 0.90
    // superblock gives its creation time as MD_UPDATE_TIME).
    for (field, key) in [("created_unix", "Creation Time"), ("updated_unix", "Update Time")] {
        let when = examined(ex, key).unwrap();
        let o = Command::new("date")
            .env("TZ", "UTC")
            .args(["-d", when, "+%s"])
            .output()
            .unwrap();
        assert_eq!(
            m[field].to_string(),
            String::from_utf8(o.stdout).unwrap().trim(),
            "{dev} {key}"
        );
    }
    assert_eq!(
        m["device_uuid"].as_str(),
        exp.get("MD_DEV_UUID").map(String::as_str),
        "{dev}"
    );
    assert_eq!(m["clean"], true, "{dev}: {}", examined(ex, "State").unwrap_or("-"));
    assert_eq!(m["layout"].as_str(), examined(ex, "Layout"), "{dev}");
    assert_eq!(
        m["chunk_bytes"].as_u64().map(|c| format!("{}K", c >> 10)).as_deref(),
        examined(ex, "Chunk Size"),
        "{dev}"
    );
    if let Some(off) = examined(ex, "Data Offset") {
        assert_eq!(
            format!("{} sectors", m["data_offset_bytes"].as_u64().unwrap() / 512),
            off,
            "{dev}"
        );
    }
    if let Some(off) = examined(ex, "Super Offset") {
        assert_eq!(
            format!("{} sectors", m["superblock_offset_bytes"].as_u64().unwrap() / 512),
            off,
            "{dev}"
        );
    }
}

/// The arrays and what they hold, as the guest's tools saw them
/// assembled: each array's slots, clean and startable, its size, the LUKS
/// container and the PV at its start; the raid0's size too, which mdadm
/// --examine does not print.
fn check_md_arrays(f: &MdStacks, st: &Value, arrays: &MdArrays) {
    let pv_rows = f.rows("pv");
    for (md, (detail, size_kib)) in arrays {
        let a = md_array(st, &detail["MD_UUID"]);
        let mut slots = vec![Value::Null; detail["MD_DEVICES"].parse().unwrap()];
        for (k, guest_dev) in detail.iter().filter(|(k, _)| k.ends_with("_DEV")) {
            let role: usize = detail[&format!("{}_ROLE", k.strip_suffix("_DEV").unwrap())]
                .parse()
                .unwrap();
            slots[role] = Value::String(f.dev_of(guest_dev));
        }
        assert_eq!(a["slots"], Value::Array(slots), "{md}");
        assert_eq!(
            (&a["state"], &a["startable"]),
            (&Value::from("clean"), &Value::from(true)),
            "{md}"
        );
        if let Some(kib) = size_kib {
            assert_eq!(
                a["size_bytes"].as_u64(),
                Some(kib.parse::<u64>().unwrap() * 1024),
                "{md}"
            );
        }
        let luks = f
            .view(md)
            .iter()
            .find_map(|l| l.strip_prefix("luks ").map(str::to_string));
        assert_eq!(a["luks"]["uuid"].as_str(), luks.as_deref(), "{md}: {a}");
        let pv = pv_rows.iter().find(|r| r[0] == format!("/dev/{md}"));
        assert_eq!(a["lvm"]["pv_uuid"].as_str(), pv.map(|r| r[1].as_str()), "{md}: {a}");
    }
    // The raid0's size, which mdadm --examine does not print: two members
    // of 31 MiB of data each (their 1 MiB data offset off 32 MiB).
    assert_eq!(
        md_array(st, &arrays["md2"].0["MD_UUID"])["size_bytes"].as_u64(),
        Some(62 << 20)
    );
}

/// The volume groups on the arrays, as the guest's `vgs`, `pvs` and `lvs`
/// saw them: vgfile and vgr0, each's UUID, seqno, extent size, its PV
/// found at its array and its volumes (name, size, type), all openable;
/// vg0, inside LUKS, unseen.
fn check_md_volume_groups(f: &MdStacks, st: &Value, arrays: &MdArrays) {
    let pv_rows = f.rows("pv");
    let vgs = f.rows("vg");
    let lvs = f.rows("lv");
    let got_vgs = st["volume_groups"].as_array().unwrap();
    // vg0 is inside the LUKS container: unseen without its key.
    let mut names: Vec<&str> = got_vgs.iter().map(|v| v["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(names, ["vgfile", "vgr0"]);
    assert!(vgs.iter().any(|r| r[0] == "vg0"), "the guest made vg0 inside LUKS");
    for v in got_vgs {
        let row = vgs.iter().find(|r| r[0] == v["name"]).unwrap();
        assert_eq!(
            (
                v["uuid"].as_str(),
                v["seqno"].to_string(),
                v["extent_bytes"].to_string()
            ),
            (Some(row[1].as_str()), row[2].clone(), row[3].clone())
        );
        let pv = pv_rows.iter().find(|r| r[3] == row[1]).unwrap();
        assert_eq!(v["pvs"][0]["uuid"].as_str(), Some(pv[1].as_str()));
        let md = pv[0].trim_start_matches("/dev/");
        let a = md_array(st, &arrays[md].0["MD_UUID"]);
        let at = format!("md:{}", a["name"].as_str().unwrap_or(a["uuid"].as_str().unwrap()));
        assert_eq!(v["pvs"][0]["found_at"].as_str(), Some(at.as_str()));
        let mine: Vec<(String, String, String)> = v["lvs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                (
                    l["name"].as_str().unwrap().to_string(),
                    l["size_bytes"].to_string(),
                    l["segment_types"][0].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let theirs: Vec<(String, String, String)> = lvs
            .iter()
            .filter(|r| r[0] == v["name"])
            .map(|r| {
                (
                    r[1].clone(),
                    r[2].clone(),
                    if r[3] == "linear" {
                        "striped".into()
                    } else {
                        r[3].clone()
                    },
                )
            })
            .collect();
        assert_eq!(mine, theirs);
        assert!(
            v["lvs"]
                .as_array()
                .unwrap()
                .iter()
                .all(|l| l.get("not_opened").is_none()),
            "{v}"
        );
    }
}

/// `list`'s text: the md arrays' heading and the raid5's line (level,
/// layout, chunk, metadata, size, slots, state).
fn check_md_list_text(f: &MdStacks, raid5: &str, text: &str) {
    assert!(
        text.contains("md arrays (from their members' superblocks; nothing assembled):"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "  array uuid {raid5} name - raid5 left-symmetric chunk 64 KiB, metadata 0.90, 65408 KiB (66977792 B), 3 slot(s): 0 {}, 1 {}, 2 {}; clean",
            f.loops[2].dev, f.loops[3].dev, f.loops[4].dev
        )),
        "{text}"
    );
}

/// The raid1 started without its second member and written through:
/// that member's events are behind (as mdadm --examine says), so it is
/// left out as stale and its slot is missing, in the JSON and the text.
fn check_md_stale_member(f: &MdStacks, st: &Value, text: &str) {
    let stale_uuid = f
        .console
        .lines()
        .find_map(|l| l.strip_prefix("stale md4 MD_UUID="))
        .expect("the stale raid1's UUID");
    let a = md_array(st, stale_uuid);
    let (j, k) = (&f.loops[9].dev, &f.loops[10].dev);
    assert_eq!(a["slots"], serde_json::json!([j, null]), "{a}");
    assert_eq!(a["stale"], serde_json::json!([k]), "{a}");
    assert_eq!(
        (a["state"].as_str(), a["startable"].as_bool()),
        (Some("clean, degraded"), Some(true)),
        "{a}"
    );
    let events = |dev: &str| {
        let o = Command::new("mdadm")
            .args(["--examine", "--export", dev])
            .output()
            .unwrap();
        exported(&String::from_utf8(o.stdout).unwrap())["MD_EVENTS"]
            .parse::<u64>()
            .unwrap()
    };
    assert!(events(k) < events(j), "mdadm --examine: {k} is behind {j}");
    assert!(
        text.contains(&format!("; stale (events behind, left out): {k}")),
        "{text}"
    );
}

/// A config's `existing` names arrays from these superblocks: the plan
/// assembles the raid5 by its UUID and the raid0 by its md name (without
/// the host part) over the members found; a volume's name plans the
/// table LVM loaded for it in the guest (`dmsetup table`), over the array
/// beneath.
fn check_md_existing_arrays_and_volumes(f: &MdStacks, raid5: &str) {
    let o = validate_existing(serde_json::json!([raid5, "stripe"]));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{plan}{}", stderr(&o));
    let short = &raid5.replace(':', "")[..8];
    for (name, members) in [
        (
            format!("md-{short}"),
            [2, 3, 4].map(|i| f.loops[i].dev.clone()).join(", "),
        ),
        ("stripe".to_string(), [5, 6].map(|i| f.loops[i].dev.clone()).join(", ")),
    ] {
        assert!(plan.contains(&format!("md:{name}")), "{name}: {plan}");
        assert!(plan.contains(&members), "{name} over {members}: {plan}");
    }
    assert!(!plan.contains("volume \""), "no volume unless named: {plan}");
    // The volumes on the raid5 and the raid0, by VG/LV: each array planned
    // beneath its volume, the volume's table LVM's, field by field (the
    // device beneath aside: the guest's md device, here the planned array).
    let o = validate_existing(serde_json::json!(["vgfile/data", "vgr0/scratch"]));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{plan}{}", stderr(&o));
    for (lv, dm, array) in [
        ("vgfile/data", "vgfile-data", format!("md:md-{short}")),
        ("vgr0/scratch", "vgr0-scratch", "md:stripe".to_string()),
    ] {
        let want = f.view(&format!("table {dm}"));
        assert_eq!(want.len(), 1, "one segment in the guest: {want:?}");
        let line = plan
            .lines()
            .find(|l| l.contains(&format!("the existing LVM volume {lv}, read-only, table: ")))
            .unwrap_or_else(|| panic!("{lv}: {plan}"));
        let table = line.split("table: ").nth(1).unwrap();
        assert_eq!(
            table_fields(table),
            table_fields(&want[0]),
            "{lv}: ours {table:?}, LVM's {:?}",
            want[0]
        );
        assert!(table.contains(&array), "{lv} over {array}: {line}");
        assert!(plan.contains(&format!("volume {dm:?}")), "{plan}");
    }
}

/// The LUKS2 container on the raid1 "mirror" (post 000), named with its
/// key file: the raid1 planned beneath it, the container mapped where
/// cryptsetup mapped it in the guest (data offset, sector size), the VG
/// inside it seen through its key and its volume's table LVM's; with "all"
/// beside it, every volume; the LUKS1 container on the raid1 "old"; a
/// wrong key, a missing key file, an unknown container, no key file and a
/// passphrase: errors naming the entry.
fn check_md_existing_luks(f: &MdStacks) {
    let (luks0, luks3) = (f.luks_of("md0"), f.luks_of("md3"));
    let key = ShmFile::new(&unique("md0.key"), b"fixture-key");
    let o = validate_existing(serde_json::json!([{"luks": luks0, "key_file": key.path()}, "vg0/root"]));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{plan}{}", stderr(&o));
    let crypt = f.view("table cryptmd");
    let c: Vec<&str> = crypt[0].split_whitespace().collect();
    // 0 LEN crypt CIPHER KEY IV_OFFSET DEV OFFSET [N OPTIONS...]
    let sector = c.iter().find_map(|o| o.strip_prefix("sector_size:")).unwrap_or("512");
    let short = &luks0.replace('-', "")[..8];
    let want = format!(
        "container \"luks-{short}\": the existing LUKS2 container {luks0} on md:mirror, read-only: {} with a 512-bit \
         key from its key file (tried within 30 s), data from byte {}, sector {sector} B",
        c[3],
        c[7].parse::<u64>().unwrap() * 512
    );
    assert!(plan.contains(&want), "want {want:?} in {plan}");
    assert_eq!(c[5], "0", "iv offset 0: {crypt:?}");
    let root = f.view("table vg0-root");
    let line = plan
        .lines()
        .find(|l| l.contains("the existing LVM volume vg0/root, read-only, table: "))
        .unwrap_or_else(|| panic!("vg0/root: {plan}"));
    let table = line.split("table: ").nth(1).unwrap();
    assert_eq!(
        table_fields(table),
        table_fields(&root[0]),
        "ours {table:?}, LVM's {:?}",
        root[0]
    );
    assert!(table.contains(&format!("dm:luks-{short}")), "{line}");
    // With "all" beside it: every array that starts and every volume, the
    // one inside the container too.
    let o = validate_existing(serde_json::json!(["all", {"luks": luks0, "key_file": key.path()}]));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{plan}{}", stderr(&o));
    for lv in ["vgfile/data", "vgr0/scratch", "vg0/root"] {
        assert!(
            plan.contains(&format!("the existing LVM volume {lv}, read-only")),
            "{lv}: {plan}"
        );
    }
    // LUKS1 on the raid1 (1.0) "old".
    let o = validate_existing(serde_json::json!([{"luks": luks3, "key_file": key.path()}]));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{plan}{}", stderr(&o));
    assert!(
        plan.contains(&format!("the existing LUKS1 container {luks3} on md:old, read-only")),
        "{plan}"
    );
    // A wrong key, a missing key file, an unknown container: errors naming the entry.
    let wrong = ShmFile::new(&unique("wrong.key"), b"fixture-kez");
    for (entry, want) in [
        (
            serde_json::json!({"luks": luks0, "key_file": wrong.path()}),
            format!(
                "existing[0]: the LUKS container {luks0} on md:fixture:mirror: the key opens none of its 1 keyslot(s) in use"
            ),
        ),
        (
            serde_json::json!({"luks": luks0, "key_file": "/nonexistent/bootbench.key"}),
            "existing[0].key_file: /nonexistent/bootbench.key: No such file or directory".to_string(),
        ),
        (
            serde_json::json!({"luks": "nope", "key_file": key.path()}),
            "existing[0].luks: \"nope\" is no LUKS container on these disks; expected the UUID of one of: ".to_string(),
        ),
        (
            serde_json::json!({"luks": luks0}),
            "existing[0].key_file: missing; expected the path of a file".to_string(),
        ),
        (
            serde_json::json!({"luks": luks0, "key_file": key.path(), "passphrase": "x"}),
            "existing[0].passphrase: not a field of a LUKS entry".to_string(),
        ),
    ] {
        let o = validate_existing(serde_json::json!([entry]));
        assert_eq!(o.status.code(), Some(2), "{entry}: {}", stderr(&o));
        assert!(stderr(&o).contains(&want), "{entry}: want {want:?}: {}", stderr(&o));
    }
}

/// A bad `existing` entry is an error naming it: a VG's unknown volume
/// (naming the ones it has), the VG inside LUKS without its key (naming
/// the VGs seen), a name of three parts, an unknown array.
fn check_md_existing_errors() {
    for (entry, want) in [
        (
            "vgfile/nope",
            "existing[0]: \"vgfile/nope\": the volume group vgfile has no volume \"nope\"; expected one of: data",
        ),
        (
            "vg0/root",
            // (Other tests' VGs may be listed too: the host's loop devices are shared.)
            "existing[0]: \"vg0/root\": no volume group \"vg0\" on these disks; expected one of: ",
        ),
        ("a/b/c", "existing[0]: \"a/b/c\" is not a volume's name; expected VG/LV"),
        (
            "nope",
            "existing[0]: \"nope\" is no md array on these disks; expected the name or UUID of one of:",
        ),
    ] {
        let o = validate_existing(serde_json::json!([entry]));
        assert_eq!(o.status.code(), Some(2), "{entry}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{entry}: {}", stderr(&o));
        if entry == "vg0/root" {
            for vg in ["vgfile", "vgr0"] {
                assert!(stderr(&o).contains(vg), "{vg} listed: {}", stderr(&o));
            }
        }
    }
}

/// With a raid5 member and a raid0 member gone: the raid5 (`raid5`) is
/// degraded, still startable and its start still read (vgfile); the raid0
/// (`raid0`) has too few members to start, and its VG is gone.
fn check_md_members_gone(raid5: &str, raid0: &str) {
    let st = list_stacks();
    let a5 = md_array(&st, raid5);
    assert_eq!(a5["slots"][2], Value::Null, "{a5}");
    assert_eq!(
        (a5["state"].as_str(), a5["startable"].as_bool()),
        (Some("clean, degraded"), Some(true))
    );
    assert!(
        a5["lvm"]["vg"]["name"] == "vgfile",
        "the degraded raid5's start is still read: {a5}"
    );
    let a0 = md_array(&st, raid0);
    assert_eq!(
        (a0["state"].as_str(), a0["startable"].as_bool()),
        (Some("clean, too few members to start"), Some(false))
    );
    assert!(a0.get("lvm").is_none(), "{a0}");
    assert!(
        st["volume_groups"]
            .as_array()
            .unwrap()
            .iter()
            .all(|v| v["name"] != "vgr0"),
        "{st}"
    );
}

/// A 4Kn device on a live system (a loop device with 4096-byte logical
/// blocks beside a 512-byte one): `list` shows each one's block sizes as the
/// kernel has them, in the text and the JSON; the quick profile's read tests
/// all run with direct I/O in requests, offsets and ranges aligned to 4096
/// (a misaligned O_DIRECT request on it fails with EINVAL, so `ok` proves
/// it), its writes skipped; a test of 512-byte requests there is refused
/// before anything runs, naming the field, the value and the block size.
#[test]
fn list_shows_block_sizes_and_a_4kn_device_gets_only_aligned_direct_io() {
    let lo4k = Loop::with_sector_size(vec![0u8; LOOP_BYTES], 4096);
    let lo512 = Loop::with_sector_size(vec![0u8; LOOP_BYTES], 512);
    let sysfs = |dev: &str, f: &str| -> u64 {
        let name = dev.strip_prefix("/dev/").unwrap();
        std::fs::read_to_string(format!("/sys/block/{name}/queue/{f}"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let o = run(&["list", "--all", "--json"]);
    assert_eq!(o.status.code(), Some(0), "stderr:\n{}", stderr(&o));
    let list: Value = serde_json::from_slice(&o.stdout).expect("list --json is JSON");
    let text = run(&["list", "--all"]);
    let text = String::from_utf8(text.stdout).unwrap();
    for (lo, logical) in [(&lo4k, 4096u64), (&lo512, 512)] {
        let physical = sysfs(&lo.dev, "physical_block_size");
        assert_eq!(
            sysfs(&lo.dev, "logical_block_size"),
            logical,
            "{}: the kernel's view",
            lo.dev
        );
        let entry = list
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["path"] == lo.dev.as_str())
            .unwrap_or_else(|| panic!("{} not in list --all --json: {list}", lo.dev));
        assert_eq!(
            (entry["logical_block_size"].as_u64(), entry["physical_block_size"].as_u64()),
            (Some(logical), Some(physical)),
            "{}: logical_block_size and physical_block_size in list --json, expected the kernel's {logical} and {physical}",
            lo.dev
        );
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{} ", lo.dev)))
            .unwrap_or_else(|| panic!("{} not in list --all:\n{text}", lo.dev));
        let want = format!("logical_block {logical} B physical_block {physical} B");
        assert!(
            line.contains(&want),
            "{}: expected {want:?} in the line {line:?}",
            lo.dev
        );
    }

    let cfg = config(&serde_json::json!({"profile": "quick", "defaults": {"runtime": "200ms"}}));
    let doc = doc_of(&run(&["run", "--config", cfg.path(), "--target", &lo4k.dev]));
    assert_eq!(doc["targets"][0]["logical_block_size"], 4096, "{}", doc["targets"][0]);
    let tests = tests_of(&doc, &lo4k.dev);
    assert_eq!(tests.len(), Workload::ALL.len(), "every workload of quick has a result");
    let mut direct_steps = 0;
    for t in &tests {
        let name = t["name"].as_str().unwrap();
        if workload_writes(t["workload"].as_str().unwrap()) {
            assert_eq!(t["status"]["state"], "skipped", "{name}: writes without a grant");
            continue;
        }
        assert_eq!(t["status"]["state"], "ok", "{name} on the 4Kn device: {}", t["status"]);
        for s in t["steps"].as_array().unwrap() {
            let (bs, start, end) = (
                s["bs"].as_u64().unwrap(),
                s["range_start"].as_u64().unwrap(),
                s["range_end"].as_u64().unwrap(),
            );
            if s["access"] == "direct" {
                direct_steps += 1;
                assert!(
                    bs >= 4096 && bs % 4096 == 0 && start % 4096 == 0 && end % 4096 == 0,
                    "{name} step {}: bs {bs}, range {start}..{end}: expected multiples of the 4096-byte logical block",
                    s["label"]
                );
            }
        }
    }
    assert!(
        direct_steps >= 10,
        "the quick profile's direct-I/O steps ran: {direct_steps}"
    );

    // 512-byte requests on a 4Kn device: refused with the reason, nothing run.
    let cfg = config(&serde_json::json!({"tests": [{"workload": "rand_read", "bs": "512", "runtime": "200ms"}]}));
    let o = run(&["run", "--config", cfg.path(), "--target", &lo4k.dev]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a refused config; stdout: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    let why = stderr(&o);
    assert!(
        why.contains("tests[0].bs") && why.contains("512") && why.contains("4096") && why.contains(&lo4k.dev),
        "the refusal names the field, the value, the block size and the device: {why}"
    );
}
