//! `bootbench-image flash` on loop devices (root; skipped otherwise, a failure in CI): a loop
//! device is not a stick, so it is refused, and written and read back with `--force`; a mounted
//! one is refused, and the kernel refuses it to `--force` as well; a bad config writes nothing;
//! files on the device are listed in the refusal; a device larger than 256 GB is refused; a
//! config given with the real stick image lands on the stick's FAT.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_bootbench-image");

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(str::to_string))
        .is_some_and(|l| l.split_whitespace().nth(2) == Some("0"))
}

/// Root, or say why the test does nothing (a failure when CI is set).
fn root_or_skip(test: &str) -> bool {
    if is_root() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{test}: needs root (loop devices); CI is set"
    );
    eprintln!("SKIPPED {test}: needs root (loop devices)");
    false
}

/// A loop device over a file of `size` bytes (sparse) in `dir`; detached on drop.
struct Loop {
    dev: String,
    file: PathBuf,
}

impl Loop {
    fn new(dir: &Path, name: &str, size: u64) -> Loop {
        let file = dir.join(name);
        std::fs::File::create(&file)
            .and_then(|f| f.set_len(size))
            .expect("the backing file");
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&file)
            .output()
            .expect("losetup");
        assert!(
            out.status.success(),
            "losetup: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Loop {
            dev: String::from_utf8_lossy(&out.stdout).trim().to_string(),
            file,
        }
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dev).output();
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).output();
    }
}

/// A test's own directory under the temporary directory, removed on drop (after
/// the test's loop devices, which are declared after it and so dropped first):
/// the stick images in it are tens of MB and each run has its own process id.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("bootbench-flash-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    Scratch(d)
}

fn flash(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("flash")
        .args(args)
        .output()
        .expect("run bootbench-image")
}

fn text(o: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `len` bytes that are not zeros and not periodic.
fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[3]
        })
        .collect()
}

#[test]
fn a_loop_device_is_refused_and_written_and_read_back_with_force() {
    if !root_or_skip("flash_force") {
        return;
    }
    let dir = scratch("force");
    let image = dir.join("image.img");
    let bytes = pattern(3 << 20, 7);
    std::fs::write(&image, &bytes).unwrap();
    let lp = Loop::new(&dir, "stick.raw", 8 << 20);
    let image_arg = image.to_str().unwrap();

    let o = flash(&[image_arg, "--device", &lp.dev]);
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("refused: {} is not on a USB or SD/MMC bus", lp.dev)),
        "{}",
        text(&o)
    );
    assert!(
        err.contains("is not written (1 reason(s) above); --force writes it anyway"),
        "{}",
        text(&o)
    );
    assert!(
        std::fs::read(&lp.file).unwrap().iter().all(|&b| b == 0),
        "a refused device was written"
    );

    let o = flash(&[image_arg, "--device", &lp.dev, "--force"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let crc = crc32fast::hash(&bytes);
    assert!(
        out.contains(&format!(
            "written and read back equal: {} B, CRC-32 {crc:08x}",
            bytes.len()
        )),
        "{}",
        text(&o)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("warning (--force): "),
        "{}",
        text(&o)
    );
    assert!(
        std::fs::read(&lp.file).unwrap()[..bytes.len()] == bytes[..],
        "the device does not hold the image"
    );
}

#[test]
fn a_mounted_device_is_refused_even_with_force() {
    if !root_or_skip("flash_mounted") {
        return;
    }
    let dir = scratch("mounted");
    let image = dir.join("image.img");
    std::fs::write(&image, pattern(1 << 20, 3)).unwrap();
    let lp = Loop::new(&dir, "stick.raw", 16 << 20);
    // ext4: the host kernel these tests run on may lack vfat.
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&lp.dev)
        .output()
        .expect("mkfs.ext4");
    assert!(mkfs.status.success(), "{}", text(&mkfs));
    let mnt = dir.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let m = Command::new("mount").arg(&lp.dev).arg(&mnt).output().expect("mount");
    assert!(m.status.success(), "{}", text(&m));
    let o = flash(&[image.to_str().unwrap(), "--device", &lp.dev]);
    let umount = || Command::new("umount").arg(&mnt).output();
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!(
            "refused: {} is mounted at {}: unmount it first",
            lp.dev,
            mnt.display()
        )),
        "{}",
        text(&o)
    );
    // What it holds is said too (ext4, not listed).
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!(
            "refused: {} holds ext2/3/4 filesystem (its files are not listed here)",
            lp.dev
        )),
        "{}",
        text(&o)
    );
    // --force does not get past the kernel: an exclusive open of a mounted device is EBUSY.
    let o = flash(&[image.to_str().unwrap(), "--device", &lp.dev, "--force"]);
    let _ = umount();
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cannot open it for writing alone: Device or resource busy"),
        "{}",
        text(&o)
    );
    // (The mount itself writes ext4's superblock: the image's bytes must not be there.)
    let head = std::fs::read(&lp.file).unwrap();
    assert!(
        head[..1 << 20] != std::fs::read(&image).unwrap()[..],
        "a mounted device was written"
    );
}

#[test]
fn files_on_the_device_are_named_and_a_bad_config_writes_nothing() {
    if !root_or_skip("flash_files") {
        return;
    }
    let dir = scratch("files");
    let image = dir.join("image.img");
    std::fs::write(&image, pattern(1 << 20, 5)).unwrap();
    // A stick formatted without a partition table, with a photo folder and a note.
    let lp = Loop::new(&dir, "stick.raw", 16 << 20);
    let mkfs = Command::new("mkfs.vfat").arg(&lp.dev).output().expect("mkfs.vfat");
    assert!(mkfs.status.success(), "{}", text(&mkfs));
    std::fs::write(dir.join("notes.txt"), "keep me").unwrap();
    let o = Command::new("mmd")
        .args(["-i", &lp.dev, "::DCIM"])
        .output()
        .expect("mmd");
    assert!(o.status.success(), "{}", text(&o));
    let o = Command::new("mcopy")
        .args(["-i", &lp.dev])
        .arg(dir.join("notes.txt"))
        .arg("::notes.txt")
        .output()
        .expect("mcopy");
    assert!(o.status.success(), "{}", text(&o));
    let before = std::fs::read(&lp.file).unwrap();

    let o = flash(&[image.to_str().unwrap(), "--device", &lp.dev]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!(
            "refused: {} holds a FAT filesystem with 2 file(s) and folder(s) (DCIM, notes.txt)",
            lp.dev
        )),
        "{}",
        text(&o)
    );
    // A bad config is refused before anything else, --force or not.
    for (cfg, why) in [
        ("{\"profile\": ", "not JSON"),
        (
            r#"{"profile": "quick", "tests": [{"workload": "seq_read", "bs": 5.5}], "colour": 1}"#,
            "not a bootbench config",
        ),
    ] {
        let path = dir.join("bootbench.json");
        std::fs::write(&path, cfg).unwrap();
        let o = flash(&[
            image.to_str().unwrap(),
            "--device",
            &lp.dev,
            "--config",
            path.to_str().unwrap(),
            "--force",
        ]);
        assert!(!o.status.success(), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("--config {}: {why}", path.display())),
            "{}",
            text(&o)
        );
        assert!(!err.contains("writing "), "{}", text(&o));
    }
    assert!(std::fs::read(&lp.file).unwrap() == before, "the device changed");
}

#[test]
fn a_device_larger_than_256_gb_is_refused() {
    if !root_or_skip("flash_large") {
        return;
    }
    let dir = scratch("large");
    let image = dir.join("image.img");
    std::fs::write(&image, pattern(1 << 20, 9)).unwrap();
    let lp = Loop::new(&dir, "huge.raw", 300_000_000_000);
    let o = flash(&[image.to_str().unwrap(), "--device", &lp.dev]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!(
            "refused: {} is 300.0 GB: larger than a stick (256 GB at most; GB = 10^9 B)",
            lp.dev
        )),
        "{}",
        text(&o)
    );
}

/// The real stick image with a config: the config lands on the stick's FAT as /bootbench.json.
#[test]
fn the_config_goes_onto_the_sticks_fat() {
    if !root_or_skip("flash_config") {
        return;
    }
    let image = Path::new(env!("CARGO_MANIFEST_DIR")).join("../out/bootbench.img");
    if !image.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} missing; make image",
            image.display()
        );
        eprintln!("SKIPPED flash_config: {} missing (make image)", image.display());
        return;
    }
    let dir = scratch("config");
    let size = std::fs::metadata(&image).unwrap().len();
    let lp = Loop::new(&dir, "stick.raw", size + (8 << 20));
    let cfg = dir.join("bootbench.json");
    std::fs::write(&cfg, "{\"profile\": \"quick\"}\n").unwrap();
    let o = flash(&[
        image.to_str().unwrap(),
        "--device",
        &lp.dev,
        "--config",
        cfg.to_str().unwrap(),
        "--force",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("with the config as /bootbench.json"),
        "{}",
        text(&o)
    );
    let copy = dir.join("back.img");
    std::fs::copy(&lp.file, &copy).unwrap();
    let listed = bootbench_image::stick::list_dir(&copy, "/").unwrap();
    assert!(listed.contains(&"bootbench.json".to_string()), "{listed:?}");
    let out = dir.join("out");
    let local = out.join("bootbench.json");
    std::fs::create_dir_all(&out).unwrap();
    bootbench_image::stick::get_file(&copy, "/bootbench.json", &local).unwrap();
    assert_eq!(std::fs::read(&local).unwrap(), std::fs::read(&cfg).unwrap());
}
