//! Helpers shared by init's unit tests.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

/// A fresh directory under the system temp directory, removed with its
/// contents when dropped. The process id and a counter make every one
/// distinct, so tests running in parallel never share a directory.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A new empty directory whose name contains `name`.
    pub fn new(name: &str) -> TempDir {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("bootbench-test-{}-{n}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create the test directory");
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// True when the tests run as root (loop devices need it).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(2).map(|euid| euid == "0"))
        .unwrap_or(false)
}

/// Held while a loop device number is taken (`losetup -f`) and across a
/// rebind's detach and bind, so that a test running beside a rebind cannot
/// take the number in between.
static LOOP_NUMBERS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A loop device over a file in /dev/shm; detached, and its files removed,
/// when dropped.
#[derive(Debug)]
pub struct Loop {
    /// `/dev/loopN`.
    pub dev: String,
    /// The backing file, and any it was rebound to.
    pub files: Vec<PathBuf>,
}

impl Loop {
    /// A device over a file holding `contents`; `None` (with the reason
    /// printed) where loop devices cannot be made: not root, or no losetup.
    pub fn new(name: &str, contents: &[u8]) -> Option<Loop> {
        if !is_root() {
            eprintln!("skipped: loop-device tests need root");
            return None;
        }
        let file = shm_file(name, contents);
        let numbers = LOOP_NUMBERS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let out = match std::process::Command::new("losetup")
            .args(["--direct-io=on", "-f", "--show"])
            .arg(&file)
            .output()
        {
            Ok(o) => o,
            Err(e) => {
                eprintln!("skipped: losetup not runnable: {e}");
                let _ = std::fs::remove_file(&file);
                return None;
            }
        };
        assert!(
            out.status.success(),
            "losetup failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        drop(numbers);
        let dev = String::from_utf8(out.stdout).expect("utf8").trim().to_string();
        Some(Loop { dev, files: vec![file] })
    }

    /// Detach the device and bind the same device to a new file holding
    /// `contents` (what happens when a loop device is reused meanwhile);
    /// returns the new file.
    pub fn rebind(&mut self, name: &str, contents: &[u8]) -> PathBuf {
        let file = shm_file(name, contents);
        let _numbers = LOOP_NUMBERS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let detached = std::process::Command::new("losetup").args(["-d", &self.dev]).status();
        assert!(detached.is_ok_and(|s| s.success()), "losetup -d {}", self.dev);
        // Detaching is asynchronous for a device still open somewhere; try for a moment.
        let mut bound = false;
        for _ in 0..50 {
            let st = std::process::Command::new("losetup").arg(&self.dev).arg(&file).status();
            if st.is_ok_and(|s| s.success()) {
                bound = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(bound, "losetup {} {}", self.dev, file.display());
        self.files.push(file.clone());
        file
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup").args(["-d", &self.dev]).status();
        for f in &self.files {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// A second block device node of the device `dev` (mknod of its
/// major:minor in `dir`): the same disk under another name, not a link.
pub fn mknod_alias(dir: &TempDir, dev: &str) -> String {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(dev).expect("stat the device").rdev();
    let p = dir.0.join("alias");
    nix::sys::stat::mknod(
        &p,
        nix::sys::stat::SFlag::S_IFBLK,
        nix::sys::stat::Mode::from_bits_truncate(0o600),
        rdev,
    )
    .expect("mknod");
    p.to_str().expect("utf8").to_string()
}

/// A new file in /dev/shm holding `contents`.
fn shm_file(name: &str, contents: &[u8]) -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let p = PathBuf::from(format!("/dev/shm/bootbench-test-{}-{n}-{name}", std::process::id()));
    std::fs::write(&p, contents).expect("write a /dev/shm file");
    p
}

/// What the result schema (`schema/bootbench.result-1.schema.json`) finds
/// wrong with the document `doc`, each error with where it is; empty when
/// it is valid.
pub fn result_schema_errors(doc: &serde_json::Value) -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../schema/bootbench.result-1.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("read the result schema")).expect("schema is JSON");
    let v = jsonschema::validator_for(&schema).expect("the schema compiles");
    v.iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}
