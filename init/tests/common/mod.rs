//! What init's integration tests share: files in /dev/shm and loop devices
//! over them (the tests create and remove them; root and `losetup` needed).
// Each test binary uses only part of this module.
#![allow(dead_code)]

pub mod cli;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A name no other test of any running test process uses.
pub fn unique(name: &str) -> String {
    format!(
        "bootbench-test-{}-{}-{name}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// A path in /dev/shm that nothing uses yet.
pub fn shm_path(name: &str) -> PathBuf {
    PathBuf::from("/dev/shm").join(unique(name))
}

/// Deterministic pseudo-random bytes (xorshift64): data with no signature.
pub fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(len);
    v
}

/// A file in /dev/shm, removed on drop.
pub struct ShmFile(pub PathBuf);

impl ShmFile {
    pub fn new(name: &str, contents: &[u8]) -> ShmFile {
        let p = shm_path(name);
        std::fs::write(&p, contents).expect("write a /dev/shm file");
        ShmFile(p)
    }

    pub fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for ShmFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A loop device with direct I/O over a file in /dev/shm; detached and
/// deleted on drop.
pub struct Loop {
    pub dev: String,
    pub file: ShmFile,
    /// The backing file's contents when the device was made.
    pub original: Vec<u8>,
}

impl Loop {
    /// A device of `size` bytes: zeros in the first 128 KiB, then non-zero,
    /// position-dependent bytes, so any write shows; then `writes`
    /// (offset, bytes) put in place. The non-zero bytes are data without a
    /// signature: the safety check refuses to write such a device ("holds
    /// data"), so it is a bystander, or a device a test expects refused.
    pub fn new(size: usize, writes: &[(usize, &[u8])]) -> Loop {
        let mut data = vec![0u8; size];
        for (i, b) in data.iter_mut().enumerate().skip(128 << 10) {
            *b = u8::try_from((i / 4096) % 251 + 1).unwrap();
        }
        for (off, bytes) in writes {
            data[*off..*off + bytes.len()].copy_from_slice(bytes);
        }
        Loop::with_contents(data)
    }

    /// An all-zero device of `size` bytes (a disk never written): the
    /// kind the safety check grants for writing.
    pub fn zeroed(size: usize) -> Loop {
        Loop::with_contents(vec![0u8; size])
    }

    /// A device holding exactly `data`.
    pub fn with_contents(data: Vec<u8>) -> Loop {
        Loop::with_sector_size(data, 512)
    }

    /// A device holding exactly `data` with logical blocks of `sector`
    /// bytes (`losetup --sector-size`: 4096 makes a 4Kn device).
    pub fn with_sector_size(data: Vec<u8>, sector: u32) -> Loop {
        let file = ShmFile::new("loop.img", &data);
        let sector = sector.to_string();
        let o = Command::new("losetup")
            .args(["--direct-io=on", "--sector-size", &sector, "-f", "--show", file.path()])
            .output()
            .expect("losetup (util-linux) must be installed; these tests run as root");
        assert!(
            o.status.success(),
            "losetup failed (root needed): {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let dev = String::from_utf8(o.stdout).unwrap().trim().to_string();
        Loop {
            dev,
            file,
            original: data,
        }
    }

    /// A hash of the whole backing file as it is now.
    pub fn hash(&self) -> u64 {
        let data = std::fs::read(&self.file.0).expect("read a loop's backing file");
        let mut h = DefaultHasher::new();
        data.hash(&mut h);
        h.finish()
    }

    /// `None` if the backing file is as it was made, else the first changed byte.
    pub fn changed_at(&self) -> Option<usize> {
        let now = std::fs::read(&self.file.0).expect("read a loop's backing file");
        if now == self.original {
            return None;
        }
        Some(
            now.iter()
                .zip(&self.original)
                .position(|(a, b)| a != b)
                .unwrap_or(now.len().min(self.original.len())),
        )
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// The names in `dir`, sorted.
pub fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read the directory")
        .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}
