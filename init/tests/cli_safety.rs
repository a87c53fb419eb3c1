//! The write interlock of `bootbench-init run` on loop devices over files
//! in /dev/shm: only the granted target is written, never storage in use,
//! read-only devices, signatures and data, the scratch label, and signals
//! and interrupts at every stage (root and `losetup` needed).

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use std::os::unix::fs::OpenOptionsExt;

mod common;
use common::cli::{assert_valid, config, doc_of, run, stderr, tests_of, workload_writes, BIN, LOOP_BYTES, PHRASE};
use common::{random_bytes, unique, Loop, ShmFile};

/// `fill` on a real loop device: without a grant nothing is written (the
/// backing file is unchanged), the read test runs on the data there and
/// says so (`filled_bytes` 0); with one, exactly the test's range is
/// written once, every 512-byte block of it different and non-zero, the
/// rest of the device as it was (but the scratch label in its first
/// sector), and each pass is kept with the one reported.
#[test]
fn fill_writes_the_range_only_with_the_grant() {
    let test = serde_json::json!([{"workload": "seq_read", "bs": "64k", "offset": "1M", "length": "4M",
        "size": "1M", "fill": true, "passes": 2, "warmup": 1, "pause": "100ms"}]);
    let ro = Loop::new(LOOP_BYTES, &[]);
    let before = ro.hash();
    let cfg = config(&serde_json::json!({"tests": test, "targets": [ro.dev]}));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    let t = &doc["tests"][0];
    assert_eq!(t["status"]["state"], "ok", "{}", t["status"]);
    assert_eq!(t["steps"][0]["filled_bytes"], 0);
    assert_eq!(t["steps"][0]["passes"].as_array().unwrap().len(), 3);
    assert_eq!(ro.hash(), before, "a fill without a grant changed the device");

    let rw = Loop::zeroed(LOOP_BYTES);
    let cfg = config(&serde_json::json!({"tests": test, "targets": [rw.dev],
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [rw.dev]}}));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    let t = &doc["tests"][0];
    assert_eq!(t["status"]["state"], "ok", "{}", t["status"]);
    assert_eq!(t["steps"][0]["filled_bytes"], 4 << 20);
    assert_eq!(t["params"]["pause"], 100_000_000);
    let passes = t["steps"][0]["passes"].as_array().unwrap();
    let warm: Vec<bool> = passes.iter().map(|p| p["warmup"].as_bool().unwrap()).collect();
    assert_eq!(warm, [true, false, false]);
    let chosen = usize::try_from(t["steps"][0]["chosen_pass"].as_u64().unwrap()).unwrap();
    assert!(chosen >= 1);
    assert_eq!(passes[chosen]["bytes_per_sec"], t["steps"][0]["read"]["bytes_per_sec"]);
    let data = std::fs::read(&rw.file.0).unwrap();
    let mut seen = std::collections::HashSet::new();
    for b in data[1 << 20..5 << 20].chunks_exact(512) {
        assert!(b.iter().any(|&x| x != 0), "a block of the range left zero");
        assert!(seen.insert(b.to_vec()), "two blocks of the fill alike");
    }
    assert!(data[5 << 20..].iter().all(|&x| x == 0), "written past the range");
    assert!(
        data[64 << 10..1 << 20].iter().all(|&x| x == 0),
        "written before the range"
    );
}

#[test]
fn writes_change_only_the_permitted_target() {
    // A is blank (all zeros), as the safety check wants a disk it grants;
    // B holds data and is not named.
    let a = Loop::zeroed(LOOP_BYTES);
    let b = Loop::new(LOOP_BYTES, &[]);
    let (a0, b0) = (a.hash(), b.hash());
    let cfg = config(&serde_json::json!({
        "profile": "quick",
        "targets": [a.dev, {"path": b.dev}],
        "defaults": {"runtime": "200ms"},
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [a.dev]}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    assert_eq!(doc["targets"][0]["writable"], true);
    assert_eq!(doc["targets"][1]["writable"], false);
    let mut wrote = 0;
    for t in tests_of(&doc, &a.dev) {
        assert_eq!(t["status"]["state"], "ok", "{} on A: {}", t["name"], t["status"]);
        wrote += usize::from(workload_writes(t["workload"].as_str().unwrap()));
    }
    assert!(wrote >= 4, "every write workload ran on A");
    for t in tests_of(&doc, &b.dev) {
        let want = if workload_writes(t["workload"].as_str().unwrap()) {
            "skipped"
        } else {
            "ok"
        };
        assert_eq!(t["status"]["state"], want, "{} on B", t["name"]);
    }
    assert_ne!(a.hash(), a0, "the permitted target was written");
    assert_eq!(b.hash(), b0, "the other target is unchanged");
}

/// A loop device over part of a file (`losetup --offset --sizelimit`),
/// detached on drop.
struct LoopOver(String);

impl LoopOver {
    fn new(file: &str, offset: u64, size: Option<u64>, read_only: bool) -> LoopOver {
        let mut args = vec!["--direct-io=on".to_string(), "-f".into(), "--show".into()];
        args.extend(["--offset".into(), offset.to_string()]);
        if let Some(s) = size {
            args.extend(["--sizelimit".into(), s.to_string()]);
        }
        if read_only {
            args.push("-r".into());
        }
        args.push(file.into());
        let o = Command::new("losetup").args(&args).output().expect("losetup");
        assert!(o.status.success(), "losetup: {}", String::from_utf8_lossy(&o.stderr));
        LoopOver(String::from_utf8(o.stdout).unwrap().trim().to_string())
    }
}

impl Drop for LoopOver {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

/// A block device mounted at a fresh directory; unmounted (and the
/// directory removed) on drop.
struct Mounted(PathBuf);

impl Mounted {
    fn new(dev: &str) -> Mounted {
        let dir = common::shm_path("mnt");
        std::fs::create_dir(&dir).expect("mkdir");
        let st = Command::new("mount").arg(dev).arg(&dir).status().expect("mount");
        assert!(st.success(), "mount {dev}");
        Mounted(dir)
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Issue 46, 1: a mounted filesystem is never written through another
/// node of the same storage, `allow_overwrite_signatures` or not. An ext4
/// filesystem in the first 32 MiB of a 48 MiB file F is mounted through
/// loop device B (`--sizelimit 32M`). Granted with overwriting allowed: A,
/// a loop device over all of F, and F itself are refused, naming B and its
/// mount point; C, a loop device over F's last 16 MiB (no byte of B's), is
/// written; the filesystem's bytes are as they were, and it is whole after
/// (`e2fsck -fn`). With B unmounted but held open with O_EXCL by another
/// program, A is refused again, as claimed, and the filesystem's file is
/// still there.
#[test]
fn storage_in_use_is_never_written_through_another_node() {
    const FS: u64 = 32 << 20;
    let f = ShmFile::new("alias-fs.img", &vec![0u8; 48 << 20]);
    let b = LoopOver::new(f.path(), 0, Some(FS), false);
    // Inode tables and journal initialised now, not by a kernel thread
    // after the mount: nothing but this test writes the filesystem.
    let mk = Command::new("mkfs.ext4")
        .args(["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", &b.0])
        .status()
        .expect("mkfs.ext4");
    assert!(mk.success(), "mkfs.ext4 {}", b.0);
    let mnt = Mounted::new(&b.0);
    std::fs::write(mnt.0.join("kept"), b"the filesystem's own data").expect("write a file on it");
    let sync = Command::new("sync").status().expect("sync");
    assert!(sync.success());
    let fs_bytes = || std::fs::read(&f.0).unwrap()[..usize::try_from(FS).unwrap()].to_vec();
    let before = fs_bytes();
    let a = LoopOver::new(f.path(), 0, None, false);
    let c = LoopOver::new(f.path(), FS, None, false);
    let test = serde_json::json!([{"workload": "seq_write", "bs": "64k", "size": "1M"}]);
    let targets = serde_json::json!([a.0, f.path(), c.0]);
    let cfg = config(&serde_json::json!({
        "tests": test, "targets": targets,
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": targets, "allow_overwrite_signatures": true}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    let mount_point = mnt.0.to_str().unwrap();
    for (i, path) in [&a.0, &f.path().to_string()].into_iter().enumerate() {
        let t = &tests_of(&doc, path)[0];
        assert_eq!(t["status"]["state"], "skipped", "{path}: {}", t["status"]);
        let reason = t["status"]["reason"].as_str().unwrap();
        assert_eq!(
            reason,
            format!(
                "writes refused: {path} reaches the same storage as {}, which is mounted at {mount_point}; \
                 storage in use is never written, whatever node reaches it (allow_overwrite_signatures does not \
                 change that)",
                b.0
            )
        );
        assert_eq!(doc["targets"][i]["writable"], false);
        assert_eq!(doc["targets"][i]["write_refusal"].as_str(), Some(reason));
    }
    let t = &tests_of(&doc, &c.0)[0];
    assert_eq!(t["status"]["state"], "ok", "C shares no byte with B: {}", t["status"]);
    assert!(
        std::fs::read(&f.0).unwrap()[usize::try_from(FS).unwrap()..]
            .iter()
            .any(|&x| x != 0),
        "C was written"
    );
    let sync = Command::new("sync").status().expect("sync");
    assert!(sync.success());
    assert!(fs_bytes() == before, "not a byte of the mounted filesystem changed");
    drop(mnt);
    let fsck = Command::new("e2fsck").args(["-fn", &b.0]).output().expect("e2fsck");
    assert!(
        fsck.status.success(),
        "e2fsck -fn: {}",
        String::from_utf8_lossy(&fsck.stdout)
    );
    // B held by another program with O_EXCL, not mounted: A is refused as
    // claimed.
    let held = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&b.0)
        .expect("hold B exclusively");
    let cfg = config(&serde_json::json!({
        "tests": test, "targets": [a.0],
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [a.0], "allow_overwrite_signatures": true}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    let reason = doc["tests"][0]["status"]["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        reason.contains(&format!(
            "{} reaches the same storage as {}, which is claimed by an exclusive opener",
            a.0, b.0
        )),
        "{reason}"
    );
    drop(held);
    let again = Mounted::new(&b.0);
    assert_eq!(
        std::fs::read(again.0.join("kept")).expect("the file is there"),
        b"the filesystem's own data"
    );
}

/// Issue 46, 9: a device the kernel holds read-only (`losetup -r`) is a
/// refused grant, not a bad disk: its write test is skipped and its
/// burn-in ends `error`, both with the refusal; no unwritable block is
/// counted, the verdict is WARN (the burn-in did not run), not FAIL, and
/// `run` exits 0.
#[test]
fn a_read_only_device_is_a_refused_grant_not_a_failed_disk() {
    let f = ShmFile::new("ro.img", &vec![0u8; 4 << 20]);
    let r = LoopOver::new(f.path(), 0, None, true);
    let cfg = config(&serde_json::json!({
        "tests": [{"workload": "seq_write", "bs": "64k", "size": "1M"}], "targets": [r.0],
        "burn_in": {"patterns": ["0xaa"]},
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [r.0]}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    let want = format!(
        "writes refused: {} is read-only (the kernel's read-only flag is set: BLKROGET, the ro attribute): a \
         refused grant, not a disk error",
        r.0
    );
    assert_eq!(doc["tests"][0]["status"]["state"], "skipped");
    assert_eq!(doc["tests"][0]["status"]["reason"].as_str(), Some(want.as_str()));
    let t = &doc["targets"][0];
    assert_eq!(t["writable"], false);
    assert_eq!(t["write_refusal"].as_str(), Some(want.as_str()));
    assert_eq!(t["burn_in"]["end"], "error");
    assert_eq!(t["burn_in"]["error"].as_str(), Some(want.as_str()));
    assert_eq!(t["burn_in"]["unwritable_lbas"], serde_json::json!([]));
    assert_eq!(
        doc["acceptance"]["targets"][0]["verdict"], "warn",
        "{}",
        doc["acceptance"]
    );
    assert!(std::fs::read(&f.0).unwrap().iter().all(|&b| b == 0));
}

#[test]
fn signatures_refuse_writes_unless_overwriting_is_allowed() {
    let ext4 = Loop::new(LOOP_BYTES, &[(1080, &[0x53, 0xEF])]);
    let gpt = Loop::new(LOOP_BYTES, &[(510, &[0x55, 0xAA]), (512, b"EFI PART")]);
    for (lo, what) in [(&ext4, "ext2/3/4 filesystem"), (&gpt, "GPT partition table")] {
        let before = lo.hash();
        let test = serde_json::json!([{"workload": "seq_write", "bs": "64k", "size": "1M"}]);
        let cfg = config(&serde_json::json!({
            "tests": test, "targets": [lo.dev], "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [lo.dev]}
        }));
        let doc = doc_of(&run(&["run", "--config", cfg.path()]));
        let t = &doc["tests"][0];
        assert_eq!(t["status"]["state"], "skipped");
        let reason = t["status"]["reason"].as_str().unwrap();
        assert!(
            reason.contains(what) && reason.contains("allow_overwrite_signatures"),
            "{reason}"
        );
        assert_eq!(doc["targets"][0]["write_refusal"].as_str(), Some(reason));
        assert_eq!(lo.hash(), before);

        let cfg = config(&serde_json::json!({
            "tests": test, "targets": [lo.dev],
            "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [lo.dev], "allow_overwrite_signatures": true}
        }));
        let doc = doc_of(&run(&["run", "--config", cfg.path()]));
        assert_eq!(
            doc["tests"][0]["status"]["state"], "ok",
            "{}",
            doc["tests"][0]["status"]
        );
        assert_ne!(lo.hash(), before);
    }
}

/// No signature does not mean blank: a device named in "destructive" that
/// holds data (pseudo-random bytes, no signature) is refused with the
/// offset of the data, unless overwriting is allowed; an all-zero one is
/// granted and written.
#[test]
fn data_without_a_signature_refuses_writes_unless_overwriting_is_allowed() {
    let test = serde_json::json!([{"workload": "seq_write", "bs": "64k", "size": "1M"}]);
    let zero = Loop::zeroed(LOOP_BYTES);
    let before = zero.hash();
    let cfg = config(&serde_json::json!({
        "tests": test, "targets": [zero.dev], "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [zero.dev]}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    assert_eq!(doc["targets"][0]["writable"], true, "{}", doc["targets"][0]);
    assert_eq!(
        doc["tests"][0]["status"]["state"], "ok",
        "{}",
        doc["tests"][0]["status"]
    );
    assert_ne!(zero.hash(), before, "the all-zero device was written");

    let data = Loop::with_contents(random_bytes(LOOP_BYTES, 11));
    let before = data.hash();
    let cfg = config(&serde_json::json!({
        "tests": test, "targets": [data.dev], "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [data.dev]}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    let t = &doc["tests"][0];
    assert_eq!(t["status"]["state"], "skipped", "{}", t["status"]);
    let reason = t["status"]["reason"].as_str().unwrap();
    assert!(
        reason.contains(&data.dev)
            && reason.contains("holds data at offset")
            && reason.contains("allow_overwrite_signatures"),
        "{reason}"
    );
    assert_eq!(doc["targets"][0]["write_refusal"].as_str(), Some(reason));
    assert_eq!(data.hash(), before, "a device that holds data is not written");

    let cfg = config(&serde_json::json!({
        "tests": test, "targets": [data.dev],
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [data.dev], "allow_overwrite_signatures": true}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    assert_eq!(
        doc["tests"][0]["status"]["state"], "ok",
        "{}",
        doc["tests"][0]["status"]
    );
    assert_ne!(data.hash(), before, "with allow_overwrite_signatures it is written");
}

/// A disk bootbench wrote stays usable for the next run: the run gives it
/// bootbench's scratch label after its last write (the console says so),
/// and the next run counts it as blank though it holds this run's random
/// data; the same data without the label is refused. A run that only
/// reads labels nothing.
#[test]
fn a_disk_bootbench_wrote_is_labelled_and_granted_again() {
    let tests = serde_json::json!([{"workload": "rand_write", "bs": "4k", "size": "1M", "runtime": "200ms"}]);
    let lo = Loop::zeroed(LOOP_BYTES);
    let cfg = config(&serde_json::json!({
        "tests": tests, "targets": [lo.dev], "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [lo.dev]}
    }));
    let first = run(&["run", "--config", cfg.path()]);
    let doc = doc_of(&first);
    assert_eq!(
        doc["tests"][0]["status"]["state"], "ok",
        "{}",
        doc["tests"][0]["status"]
    );
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(stderr.contains("bootbench's scratch label written"), "{stderr}");
    let after_first = lo.hash();
    // Again: granted, and written.
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    assert_eq!(
        doc["tests"][0]["status"]["state"], "ok",
        "a labelled disk is granted again: {}",
        doc["tests"][0]["status"]
    );
    assert_ne!(lo.hash(), after_first, "written again");
    // The same kind of contents without the label: holds data.
    let mut unlabelled = std::fs::read(lo.file.path()).unwrap();
    unlabelled[..4096].copy_from_slice(&random_bytes(4096, 3));
    let data = Loop::with_contents(unlabelled);
    let cfg = config(&serde_json::json!({
        "tests": tests, "targets": [data.dev], "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [data.dev]}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    assert_eq!(
        doc["tests"][0]["status"]["state"], "skipped",
        "{}",
        doc["tests"][0]["status"]
    );
    // Reads only: no label.
    let zero = Loop::zeroed(LOOP_BYTES);
    let cfg = config(&serde_json::json!({
        "tests": [{"workload": "seq_read", "bs": "64k", "size": "1M"}],
        "targets": [zero.dev], "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [zero.dev]}
    }));
    let out = run(&["run", "--config", cfg.path()]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("scratch label"));
    assert!(
        std::fs::read(zero.file.path()).unwrap().iter().all(|&b| b == 0),
        "untouched"
    );
}

/// `self_test` on a loop device: it has no self-test commands (no SG_IO
/// ATA, no NVMe or SCSI self-test), so its self-test is recorded as
/// `not_supported` with the reason, the console says so, and the
/// benchmarks run as usual. A file target gets no self-test at all.
#[test]
fn a_loop_devices_self_test_is_not_supported_and_the_run_goes_on() {
    let lo = Loop::new(LOOP_BYTES, &[]);
    let before = lo.hash();
    let cfg = config(&serde_json::json!({
        "tests": [{"workload": "seq_read", "size": "1M"}],
        "targets": [lo.dev],
        "self_test": {"kind": "short", "max_wait": "1m"}
    }));
    let o = run(&["run", "--config", cfg.path()]);
    let doc = doc_of(&o);
    let st = &doc["targets"][0]["self_test"];
    assert_eq!(st["kind"], "short", "{st}");
    assert_eq!(st["outcome"], "not_supported", "{st}");
    assert_eq!(
        (&st["passed"], &st["source"]),
        (&Value::Null, &Value::from("none")),
        "{st}"
    );
    assert!(
        st["error"]
            .as_str()
            .unwrap()
            .starts_with("no self-test commands for transport"),
        "{st}"
    );
    assert_eq!(
        doc["tests"][0]["status"]["state"], "ok",
        "{}",
        doc["tests"][0]["status"]
    );
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{}: short self-test: not supported", lo.dev)),
        "{err}"
    );
    assert!(
        err.contains("the short self-test: at most 180 s"),
        "the run's bound counts the wait: {err}"
    );
    assert_eq!(lo.hash(), before);
}

#[test]
fn wrong_phrase_skips_writes_with_the_reason() {
    let lo = Loop::new(LOOP_BYTES, &[]);
    let before = lo.hash();
    let cfg = config(&serde_json::json!({
        "tests": [{"workload": "rand_write", "runtime": "100ms"}, {"workload": "rand_read", "runtime": "100ms"}],
        "targets": [lo.dev],
        "destructive": {"confirm": "yes please", "targets": [lo.dev]}
    }));
    let doc = doc_of(&run(&["run", "--config", cfg.path()]));
    assert_eq!(doc["tests"][0]["status"]["state"], "skipped");
    let reason = doc["tests"][0]["status"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("confirm") && reason.contains("yes please") && reason.contains(PHRASE),
        "{reason}"
    );
    assert_eq!(doc["tests"][1]["status"]["state"], "ok");
    assert_eq!(lo.hash(), before);
}

/// A filesystem mounted in /dev/shm for a test (root needed): unmounted,
/// and its directory and image removed, on drop.
struct Mount {
    dir: PathBuf,
    image: Option<PathBuf>,
}

impl Mount {
    fn at(args: &[&str], source: &std::path::Path, image: Option<PathBuf>) -> Mount {
        let dir = common::shm_path("mnt");
        std::fs::create_dir(&dir).expect("mkdir");
        let st = Command::new("mount")
            .args(args)
            .arg(source)
            .arg(&dir)
            .status()
            .expect("mount (root needed)");
        assert!(st.success(), "mount {args:?} {} at {}", source.display(), dir.display());
        Mount { dir, image }
    }

    /// A tmpfs of `size` bytes.
    fn tmpfs(size: u64) -> Mount {
        Mount::at(
            &["-t", "tmpfs", "-o", &format!("size={size}")],
            std::path::Path::new("tmpfs"),
            None,
        )
    }

    /// A 16 MiB ext2 with 128-byte inodes (no birth time; a freed inode
    /// number goes to the next file made), over a loop device.
    fn ext2() -> Mount {
        let img = common::shm_path("ext2.img");
        std::fs::write(&img, vec![0u8; 16 << 20]).unwrap();
        let mkfs = Command::new("mkfs.ext2")
            .args(["-q", "-F", "-I", "128"])
            .arg(&img)
            .output()
            .expect("mkfs.ext2");
        assert!(mkfs.status.success(), "{}", String::from_utf8_lossy(&mkfs.stderr));
        Mount::at(&["-o", "loop", "-t", "ext2"], &img.clone(), Some(img))
    }

    fn remount_ro(&self) {
        let st = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&self.dir)
            .status()
            .unwrap();
        assert!(st.success(), "remount read-only");
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
        let _ = std::fs::remove_dir(&self.dir);
        if let Some(img) = &self.image {
            let _ = std::fs::remove_file(img);
        }
    }
}

/// `--out` where the document cannot be written is bad input found before
/// the run (exit 2, naming `--out`), and the run that would have written a
/// granted disk does not start: an empty name, a directory of /proc, a
/// read-only filesystem, a full one. Where it can, the run goes on and the
/// file holds exactly the document.
#[test]
fn an_out_that_cannot_be_written_is_refused_before_the_run() {
    let lo = Loop::zeroed(LOOP_BYTES);
    let cfg = config(&serde_json::json!({
        "targets": [lo.dev],
        "tests": [{"workload": "rand_write", "bs": "4k", "runtime": "200ms"}],
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [lo.dev]}
    }));
    let ro = Mount::tmpfs(1 << 20);
    ro.remount_ro();
    let full = Mount::tmpfs(64 << 10);
    let _ = std::fs::write(full.dir.join("filler"), vec![7u8; 1 << 20]);
    let cases = [
        (String::new(), "names no file"),
        ("/proc/bootbench-results.json".to_string(), "--out: create"),
        (
            ro.dir.join("r.json").to_str().unwrap().to_string(),
            "Read-only file system",
        ),
        (
            full.dir.join("r.json").to_str().unwrap().to_string(),
            "No space left on device",
        ),
    ];
    for (out, why) in &cases {
        let o = run(&["run", "--config", cfg.path(), "--out", out]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "--out {out:?}: {err}");
        assert!(err.contains("--out") && err.contains(why), "--out {out:?}: {err}");
        assert!(!err.contains("starting"), "--out {out:?}: nothing ran: {err}");
        assert!(o.stdout.is_empty());
        assert_eq!(lo.changed_at(), None, "--out {out:?}: the granted disk is untouched");
    }
    assert_eq!(
        common::names_in(&full.dir),
        vec!["filler"],
        "nothing left on the full filesystem"
    );
    let ok = std::env::temp_dir().join(unique("out-ok.json"));
    let o = run(&["run", "--config", cfg.path(), "--out", ok.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&std::fs::read(&ok).expect("written")).expect("exactly one document");
    std::fs::remove_file(&ok).ok();
    assert_eq!(doc["tests"][0]["status"]["state"], "ok");
}

/// Run `bootbench-init ARGS`, do `act(pid)` once a stderr line satisfies
/// `ready`, and wait: its exit status and all it said.
fn act_when(args: &[&str], ready: impl Fn(&str) -> bool, act: impl FnOnce(i32)) -> (std::process::ExitStatus, String) {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bootbench-init");
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let mut line = String::new();
    while err.read_line(&mut line).unwrap() > 0 {
        seen.push_str(&line);
        if ready(&line) {
            break;
        }
        line.clear();
    }
    act(i32::try_from(child.id()).unwrap());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    seen.push_str(&rest);
    (child.wait().unwrap(), seen)
}

/// [`act_when`] sending `signal`.
fn signal_when(args: &[&str], signal: i32, ready: impl Fn(&str) -> bool) -> (std::process::ExitStatus, String) {
    act_when(args, ready, |pid| {
        // SAFETY: kill(2) on the child we spawned and have not waited for.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    })
}

/// End to end: a disk and a granted file on ext2 with
/// 128-byte inodes (no birth time; a freed inode number goes to the next
/// file). During the disk's read test the file is deleted and another made
/// at its path, which on the old code got its inode number and was
/// overwritten by the write test. Held open since the plan, the granted
/// file keeps its inode: the write test on the path is refused and the
/// newcomer untouched.
#[test]
fn a_granted_file_replaced_during_the_run_is_not_written() {
    let mnt = Mount::ext2();
    let file = mnt.dir.join("target.img");
    std::fs::write(&file, vec![0u8; 4 << 20]).unwrap();
    let file = file.to_str().unwrap().to_string();
    let disk = Loop::new(LOOP_BYTES, &[]);
    let cfg = config(&serde_json::json!({
        "targets": [disk.dev, file],
        "tests": [
            {"workload": "rand_read", "name": "long", "runtime": "3s"},
            {"workload": "rand_write", "name": "later", "bs": "4k", "runtime": "200ms"}
        ],
        "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [file]}
    }));
    let out = std::env::temp_dir().join(unique("replaced-file.json"));
    let (status, seen) = act_when(
        &["run", "--config", cfg.path(), "--out", out.to_str().unwrap()],
        |line| line.contains(&format!("long on {}", disk.dev)) && line.contains(": main "),
        |_| {
            std::fs::remove_file(&file).unwrap();
            std::fs::write(&file, b"precious").unwrap();
        },
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("results written")).unwrap();
    std::fs::remove_file(&out).ok();
    assert_eq!(
        std::fs::read(&file).unwrap(),
        b"precious",
        "the newcomer is untouched: {seen}"
    );
    let later = tests_of(&doc, &file)
        .into_iter()
        .find(|t| t["name"] == "later")
        .unwrap();
    assert_ne!(later["status"]["state"], "ok", "{seen}");
    assert!(seen.contains("removed since the plan opened it"), "{seen}");
    assert_eq!(status.code(), Some(1), "the file target failed: {seen}");
}

/// SIGINT during a run: the running test stops after its requests in
/// flight and keeps what it measured (`interrupted`), the next test is
/// skipped, the results are written anyway, and the exit status is 130.
#[test]
fn sigint_stops_the_run_and_still_writes_the_results() {
    let lo = Loop::new(LOOP_BYTES, &[]);
    let cfg = config(&serde_json::json!({
        "targets": [lo.dev],
        "tests": [
            {"workload": "rand_read", "name": "long", "runtime": "60s"},
            {"workload": "seq_read", "name": "after", "runtime": "60s"}
        ]
    }));
    let out = std::env::temp_dir().join(unique("sigint.json"));
    // Once the first test has run a second (its first progress line).
    let (status, seen) = signal_when(
        &["run", "--config", cfg.path(), "--out", out.to_str().unwrap()],
        libc::SIGINT,
        |line| line.contains("long on") && line.contains(": main "),
    );
    assert_eq!(status.code(), Some(130), "{seen}");
    assert!(seen.contains("stopping: the running test ends"), "{seen}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("results written")).unwrap();
    std::fs::remove_file(&out).ok();
    assert_valid("bootbench.result-1.schema.json", &doc);
    assert_eq!(doc["run"]["status"], "interrupted");
    let tests = tests_of(&doc, &lo.dev);
    assert_eq!(tests[0]["status"]["state"], "interrupted", "{}", tests[0]["status"]);
    let ran = tests[0]["steps"][0]["runtime_ns"].as_u64().unwrap();
    assert!(ran < 60_000_000_000, "the 60 s test was cut short: {ran} ns");
    assert!(
        tests[0]["steps"][0]["read"]["ios"].as_u64().unwrap() > 0,
        "what ran is kept"
    );
    assert_eq!(tests[1]["status"]["state"], "skipped");
    assert!(
        tests[1]["status"]["reason"].as_str().unwrap().contains("interrupted"),
        "{}",
        tests[1]["status"]
    );
}

/// However the run ends, `--out` leaves nothing behind but the complete
/// document: killed mid-run (a second SIGINT, which exits at once; SIGKILL)
/// its directory holds nothing at all, where the old code left the
/// reserved `.NAME.tmp-PID` (1 MiB and more) beside it; stopped by one
/// SIGINT, only the document.
#[test]
fn an_out_file_leaves_nothing_behind_after_any_signal() {
    let lo = Loop::new(LOOP_BYTES, &[]);
    let cfg = config(&serde_json::json!({
        "targets": [lo.dev],
        "tests": [{"workload": "rand_read", "name": "long", "runtime": "60s"}]
    }));
    let names = |dir: &std::path::Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    // A second signal must reach the run before the first has ended it: the
    // child is stopped while both are sent (two different signals, as two
    // of one kind would merge while pending) and continued to take them.
    let second: &[i32] = &[libc::SIGSTOP, libc::SIGINT, libc::SIGTERM, libc::SIGCONT];
    for (signals, completes) in [
        (second, false),
        (&[libc::SIGKILL][..], false),
        (&[libc::SIGINT][..], true),
    ] {
        let dir = std::env::temp_dir().join(unique("out-dir"));
        std::fs::create_dir(&dir).unwrap();
        let out = dir.join("r.json");
        let (status, seen) = act_when(
            &["run", "--config", cfg.path(), "--out", out.to_str().unwrap()],
            |line| line.contains("long on") && line.contains(": main "),
            |pid| {
                for &sig in signals {
                    // SAFETY: kill(2) on the child we spawned and have not waited for.
                    assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
                }
            },
        );
        let left = names(&dir);
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(
            status.code(),
            if signals == [libc::SIGKILL] { None } else { Some(130) },
            "{seen}"
        );
        if completes {
            assert_eq!(left, vec!["r.json"], "the document only: {seen}");
        } else {
            assert!(!seen.contains("throughput in MB/s"), "the run did not complete: {seen}");
            if signals == second {
                assert!(seen.contains("second signal: exiting now"), "{seen}");
            }
            assert!(left.is_empty(), "signals {signals:?} left {left:?}: {seen}");
        }
    }
}

/// Interrupted before any write, a granted disk is left as it was: no
/// scratch label on it, though it was claimed for the write test that
/// never ran. Both ways a disk is granted: one holding data (a GPT disk's
/// first sectors here) with overwriting allowed, and a blank one without.
/// A second disk of the same run, whose tests never started, is left
/// untouched too.
#[test]
fn an_interrupt_before_any_write_leaves_granted_disks_untouched() {
    let mut gpt = random_bytes(LOOP_BYTES, 11);
    gpt[510..512].copy_from_slice(&[0x55, 0xAA]);
    gpt[512..520].copy_from_slice(b"EFI PART");
    for (data, overwrite) in [(gpt, true), (vec![0u8; LOOP_BYTES], false)] {
        let (a, b) = (Loop::with_contents(data), Loop::zeroed(LOOP_BYTES));
        let (before_a, before_b) = (a.hash(), b.hash());
        let cfg = config(&serde_json::json!({
            "targets": [a.dev, b.dev],
            "tests": [
                {"workload": "rand_read", "name": "long", "runtime": "60s"},
                {"workload": "rand_write", "name": "later", "runtime": "1s"}
            ],
            "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [a.dev, b.dev], "allow_overwrite_signatures": overwrite}
        }));
        let out = std::env::temp_dir().join(unique("interrupt-before-write.json"));
        let (status, seen) = signal_when(
            &["run", "--config", cfg.path(), "--out", out.to_str().unwrap()],
            libc::SIGINT,
            |line| line.contains("long on") && line.contains(": main "),
        );
        std::fs::remove_file(&out).ok();
        assert_eq!(status.code(), Some(130), "{seen}");
        assert!(seen.contains(&format!("{} may be written", a.dev)), "claimed: {seen}");
        assert!(!seen.contains("scratch label written"), "overwrite {overwrite}: {seen}");
        assert_eq!(
            a.hash(),
            before_a,
            "overwrite {overwrite}: the interrupted disk is untouched"
        );
        assert_eq!(
            b.hash(),
            before_b,
            "overwrite {overwrite}: the disk never reached is untouched"
        );
    }
}

/// The countdown before a run that may write: the console names the granted
/// disk (not the other one) and counts down; SIGINT during it ends the run
/// before its first step: every test is not run, both disks are unchanged,
/// and the document says so.
#[test]
fn an_interrupt_during_the_countdown_writes_nothing() {
    let (a, b) = (Loop::zeroed(LOOP_BYTES), Loop::zeroed(LOOP_BYTES));
    let (before_a, before_b) = (a.hash(), b.hash());
    let cfg = config(&serde_json::json!({
        "targets": [a.dev, b.dev],
        "tests": [{"workload": "seq_write", "size": "1M"}, {"workload": "seq_read", "size": "1M"}],
        "destructive": {"confirm": PHRASE, "targets": [a.dev], "countdown": "30s"}
    }));
    let out = std::env::temp_dir().join(unique("countdown.json"));
    let (status, seen) = signal_when(
        &["run", "--config", cfg.path(), "--out", out.to_str().unwrap()],
        libc::SIGINT,
        |line| line.contains("countdown: 28 s"),
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).expect("the document")).unwrap();
    std::fs::remove_file(&out).ok();
    assert_eq!(status.code(), Some(130), "{seen}");
    let warn = seen
        .lines()
        .find(|l| l.contains("WRITES AHEAD"))
        .unwrap_or_else(|| panic!("{seen}"));
    assert!(
        warn.contains(&format!("{} (serial", a.dev)) && !warn.contains(&b.dev) && warn.contains("it begins in 30 s"),
        "{warn}"
    );
    assert!(seen.contains("countdown: 29 s"), "{seen}");
    assert!(seen.contains("countdown interrupted: the run ends before its first step; nothing was written"));
    for t in doc["tests"].as_array().unwrap() {
        assert_eq!(
            (t["status"]["state"].as_str(), t["status"]["reason"].as_str()),
            (
                Some("skipped"),
                Some("not run: the run was interrupted (SIGINT or SIGTERM)")
            ),
            "{t}"
        );
    }
    assert_eq!((a.hash(), b.hash()), (before_a, before_b), "nothing written");
}
