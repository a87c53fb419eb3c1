//! Where results go: a file written atomically (temp file, fsync, rename,
//! never overwriting), or stdout.
//!
//! The data goes to a temp name first (`.<name>.tmp-<pid>`: a dot file
//! whose name does not end in `.json`, so no reader takes it for a result,
//! see [`is_temp_name`]), is fsynced, and only then appears under its final
//! name in one step. Power lost (or the machine killed) at any moment leaves
//! either no final name or the complete file under it, never a partial or
//! empty file under a result's name.
//!
//! The "rename" is a hard link of the temp file to the final name, which
//! fails with EEXIST if the name is taken (renameat2's RENAME_NOREPLACE
//! without unsafe code), then the temp name is removed and the directory
//! fsynced. On a filesystem without hard links (FAT: EPERM) the final name
//! is checked to be free and the temp file renamed to it with rename(2).
//! There, never overwriting holds against earlier files, not against another
//! process creating the same new name in the same instant (PID 1 is the
//! stick's only writer). An earlier version reserved the final name with
//! O_CREAT|O_EXCL before the rename: power lost between the two left an
//! empty file under a result's name.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Why results could not be written.
#[derive(Debug)]
pub enum SinkError {
    /// The destination exists already; nothing is overwritten.
    Exists {
        /// The destination.
        path: PathBuf,
    },
    /// The destination's directory does not exist or is not a directory.
    NoDir {
        /// The directory.
        dir: PathBuf,
    },
    /// A step of the write failed.
    Io {
        /// What was being done (`create`, `write`, `fsync`, `link`, ...).
        step: &'static str,
        /// The file involved.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
}

impl fmt::Display for SinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SinkError::Exists { path } => write!(
                f,
                "--out: {} exists already; expected a new file name (results are never overwritten)",
                path.display()
            ),
            SinkError::NoDir { dir } => {
                write!(
                    f,
                    "--out: directory {} does not exist; expected an existing directory",
                    dir.display()
                )
            }
            SinkError::Io { step, path, source } => write!(f, "--out: {step} {} failed: {source}", path.display()),
        }
    }
}

impl std::error::Error for SinkError {}

fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Check, before a run, that `path` can be created: it does not exist and
/// its directory does.
pub fn check_new(path: &Path) -> Result<(), SinkError> {
    if fs::symlink_metadata(path).is_ok() {
        return Err(SinkError::Exists {
            path: path.to_path_buf(),
        });
    }
    let dir = dir_of(path);
    if !dir.is_dir() {
        return Err(SinkError::NoDir { dir });
    }
    Ok(())
}

/// True if `name` is a temp name of [`write_new`] (`.<name>.tmp-<pid>`),
/// as an interrupted write may leave behind: never a result.
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.')
        && name
            .rsplit_once(".tmp-")
            .is_some_and(|(_, pid)| pid.bytes().all(|b| b.is_ascii_digit()))
}

/// Write `bytes` to `path` atomically and durably, never overwriting:
/// `.name.tmp-<pid>` in the same directory, write, fsync, hard-link to
/// `path` (fails if it exists; on FAT: rename to `path` if it is free),
/// remove the temp name, fsync the directory.
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<(), SinkError> {
    write_new_with(path, bytes, &mut |_| {})
}

/// [`write_new`], calling `mid(temp)` once half of `bytes` is written and
/// fsynced under the temp name (tests look at, or stop, a write there).
pub fn write_new_with(path: &Path, bytes: &[u8], mid: &mut dyn FnMut(&Path)) -> Result<(), SinkError> {
    check_new(path)?;
    let dir = dir_of(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    fn io<'p>(step: &'static str, p: &'p Path) -> impl Fn(io::Error) -> SinkError + 'p {
        move |source| SinkError::Io {
            step,
            path: p.to_path_buf(),
            source,
        }
    }

    // A temp file of this name is left from an interrupted write of this
    // process id: PID 1 is pid 1 on every boot. It is no result: remove it.
    if fs::symlink_metadata(&tmp).is_ok_and(|m| m.is_file()) {
        let _ = fs::remove_file(&tmp);
    }
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io("create", &tmp))?;
        let (first, second) = bytes.split_at(bytes.len() / 2);
        f.write_all(first).map_err(io("write", &tmp))?;
        f.sync_data().map_err(io("fsync", &tmp))?;
        mid(&tmp);
        f.write_all(second).map_err(io("write", &tmp))?;
        f.sync_all().map_err(io("fsync", &tmp))?;
        drop(f);
        let exists = || SinkError::Exists {
            path: path.to_path_buf(),
        };
        match fs::hard_link(&tmp, path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(exists()),
            // FAT (the boot stick) has no hard links (EPERM): rename the
            // complete temp file to the final name if that is still free.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::EOPNOTSUPP | libc::EMLINK)) => {
                if fs::symlink_metadata(path).is_ok() {
                    return Err(exists());
                }
                fs::rename(&tmp, path).map_err(io("rename", path))
            }
            Err(e) => Err(io("link", path)(e)),
        }
    })();
    // The temp name goes in every case; the data lives on under `path`.
    let _ = fs::remove_file(&tmp);
    result?;
    File::open(&dir)
        .and_then(|d| d.sync_all())
        .map_err(io("fsync directory", &dir))?;
    Ok(())
}

/// Write `bytes` to stdout and flush.
pub fn write_stdout(bytes: &[u8]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()
}

/// Mounted filesystems for tests (root needed: tmpfs, loop-mounted FAT).
/// Each is unmounted and removed when dropped.
#[cfg(test)]
pub(crate) mod fixture {
    use std::fs;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    /// Run a command; its stderr if it failed to start or exited non-zero.
    pub fn sh(program: &str, args: &[&str]) -> Result<String, String> {
        let out = Command::new(program)
            .args(args)
            .output()
            .map_err(|e| format!("{program}: {e}"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!(
                "{program} {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    /// A mount point (and image or loop device) that goes away when dropped.
    #[derive(Debug)]
    pub struct Mounted {
        /// The mount point.
        pub dir: PathBuf,
        /// A loop device to detach, if any.
        pub loop_dev: Option<String>,
        /// Files to remove last.
        pub files: Vec<PathBuf>,
    }

    impl Drop for Mounted {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.dir).output();
            if let Some(l) = &self.loop_dev {
                let _ = Command::new("losetup").args(["-d", l]).output();
            }
            let _ = fs::remove_dir(&self.dir);
            for f in &self.files {
                let _ = fs::remove_file(f);
            }
        }
    }

    /// A unique path in /dev/shm for this test.
    pub fn shm(name: &str) -> PathBuf {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        PathBuf::from(format!("/dev/shm/bootbench-{name}-{}-{n}", std::process::id()))
    }

    /// A tmpfs of `size` bytes (rounded up to pages by the kernel).
    pub fn tmpfs(name: &str, size: u64) -> Result<Mounted, String> {
        let dir = shm(name);
        fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let m = Mounted {
            dir,
            loop_dev: None,
            files: Vec::new(),
        };
        sh(
            "mount",
            &[
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size}"),
                "tmpfs",
                &m.dir.to_string_lossy(),
            ],
        )?;
        Ok(m)
    }

    /// Remount `m` read-only.
    pub fn remount_ro(m: &Mounted) -> Result<(), String> {
        sh("mount", &["-o", "remount,ro", &m.dir.to_string_lossy()]).map(drop)
    }

    /// A FAT16 image of 16 MiB labelled BOOTBENCH, made by mkfs.vfat, on a
    /// loop device (not mounted: `dir` is where [`mount_vfat`] mounts it).
    pub fn fat_loop(name: &str) -> Result<Mounted, String> {
        let img = shm(name).with_extension("img");
        let dir = shm(name).with_extension("mnt");
        let mut m = Mounted {
            dir: dir.clone(),
            loop_dev: None,
            files: vec![img.clone()],
        };
        fs::write(&img, vec![0u8; 16 << 20]).map_err(|e| e.to_string())?;
        sh("mkfs.vfat", &["-F", "16", "-n", "BOOTBENCH", &img.to_string_lossy()])?;
        fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let dev = sh("losetup", &["-f", "--show", &img.to_string_lossy()])?;
        m.loop_dev = Some(dev.trim().to_string());
        Ok(m)
    }

    /// Mount `m`'s loop device vfat at its `dir`.
    pub fn mount_vfat(m: &Mounted) -> Result<(), String> {
        let dev = m.loop_dev.as_deref().ok_or("no loop device")?;
        sh("mount", &["-t", "vfat", dev, &m.dir.to_string_lossy()]).map(drop)
    }

    /// Every file name in `dir`, sorted.
    pub fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .map(|r| {
                r.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }

    /// Print why a test that needs root and these tools is skipped.
    pub fn skipped(why: &str) {
        eprintln!("skipped: {why} (root, mount, losetup and mkfs.vfat needed)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testutil::TempDir;

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_a_new_file_and_leaves_no_temp() {
        let d = TempDir::new("new");
        let p = d.0.join("r.json");
        write_new(&p, b"{\"a\":1}").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"{\"a\":1}");
        assert_eq!(entries(&d.0), vec!["r.json"]);
    }

    #[test]
    fn never_overwrites() {
        let d = TempDir::new("exists");
        let p = d.0.join("r.json");
        fs::write(&p, b"earlier run").unwrap();
        assert!(matches!(check_new(&p), Err(SinkError::Exists { .. })));
        let e = write_new(&p, b"new").unwrap_err();
        assert!(matches!(e, SinkError::Exists { .. }), "{e}");
        assert!(e.to_string().contains("exists already"));
        assert_eq!(fs::read(&p).unwrap(), b"earlier run");
        assert_eq!(entries(&d.0), vec!["r.json"]);
    }

    #[test]
    fn writes_on_fat_which_has_no_hard_links() {
        // A FAT filesystem in a file in /dev/shm, loop-mounted (root, mkfs.vfat).
        let base = PathBuf::from(format!("/dev/shm/bootbench-sink-fat-{}", std::process::id()));
        let img = base.with_extension("img");
        let mnt = base.with_extension("mnt");
        let ok = fs::write(&img, vec![0u8; 8 << 20]).is_ok()
            && std::process::Command::new("mkfs.vfat")
                .arg(&img)
                .output()
                .is_ok_and(|o| o.status.success())
            && fs::create_dir_all(&mnt).is_ok()
            && std::process::Command::new("mount")
                .args(["-o", "loop", "-t", "vfat"])
                .arg(&img)
                .arg(&mnt)
                .output()
                .is_ok_and(|o| o.status.success());
        if !ok {
            let _ = fs::remove_file(&img);
            let _ = fs::remove_dir(&mnt);
            eprintln!("skipped: cannot make and loop-mount a FAT image (root and mkfs.vfat needed)");
            return;
        }
        let p = mnt.join("r.json");
        let first = write_new(&p, b"first");
        let second = write_new(&p, b"second");
        let listing = entries(&mnt);
        let content = fs::read(&p);
        let _ = std::process::Command::new("umount").arg(&mnt).status();
        let _ = fs::remove_dir(&mnt);
        let _ = fs::remove_file(&img);
        first.expect("write on FAT");
        assert!(matches!(second, Err(SinkError::Exists { .. })), "{second:?}");
        assert_eq!(content.expect("read"), b"first");
        assert_eq!(listing, vec!["r.json"], "no temp file left");
    }

    #[test]
    fn missing_directory_is_refused() {
        let d = TempDir::new("nodir");
        let p = d.0.join("no/such/r.json");
        assert!(matches!(check_new(&p), Err(SinkError::NoDir { .. })));
        assert!(write_new(&p, b"x").is_err());
    }

    #[test]
    fn temp_names_are_never_results() {
        for (name, temp) in [
            (".SN-2.json.tmp-1", true),
            (".r.json.tmp-123456", true),
            ("SN-2.json", false),
            (".SN-2.json", false),
            ("SN-2.json.tmp-1", false),
            (".SN-2.json.tmp-x", false),
        ] {
            assert_eq!(is_temp_name(name), temp, "{name}");
        }
    }

    /// Half-way through a write, the directory holds the earlier file and a
    /// temp name with the first half, and no file under the final name.
    fn mid_write_shows_only_a_temp_name(dir: &Path) {
        let earlier = dir.join("r-1.json");
        fs::write(&earlier, b"earlier result").unwrap();
        let p = dir.join("r-2.json");
        let mut seen = Vec::new();
        write_new_with(&p, b"0123456789", &mut |tmp| {
            seen = entries(dir);
            assert_eq!(fs::read(tmp).unwrap(), b"01234", "the first half, fsynced");
        })
        .unwrap();
        let tmp = format!(".r-2.json.tmp-{}", std::process::id());
        assert_eq!(seen, vec![tmp.clone(), "r-1.json".to_string()], "mid-write listing");
        assert!(is_temp_name(&tmp));
        assert_eq!(fs::read(&p).unwrap(), b"0123456789");
        assert_eq!(fs::read(&earlier).unwrap(), b"earlier result");
        assert_eq!(entries(dir), vec!["r-1.json", "r-2.json"], "no temp left");
    }

    #[test]
    fn mid_write_only_a_temp_name_exists() {
        let d = TempDir::new("mid");
        mid_write_shows_only_a_temp_name(&d.0);
    }

    #[test]
    fn mid_write_on_fat_only_a_temp_name_exists_never_an_empty_result() {
        let m = match fixture::fat_loop("sink-mid").and_then(|m| fixture::mount_vfat(&m).map(|()| m)) {
            Ok(m) => m,
            Err(e) => return fixture::skipped(&e),
        };
        mid_write_shows_only_a_temp_name(&m.dir);
    }

    #[test]
    fn a_stale_temp_file_of_an_interrupted_write_is_replaced() {
        let d = TempDir::new("stale");
        let tmp = d.0.join(format!(".r.json.tmp-{}", std::process::id()));
        fs::write(&tmp, b"half of an earl").unwrap();
        write_new(&d.0.join("r.json"), b"new").unwrap();
        assert_eq!(fs::read(d.0.join("r.json")).unwrap(), b"new");
        assert_eq!(entries(&d.0), vec!["r.json"]);
    }

    #[test]
    fn a_read_only_filesystem_fails_with_erofs_and_changes_nothing() {
        let m = match fixture::tmpfs("sink-ro", 1 << 20) {
            Ok(m) => m,
            Err(e) => return fixture::skipped(&e),
        };
        fs::write(m.dir.join("r-1.json"), b"earlier").unwrap();
        if let Err(e) = fixture::remount_ro(&m) {
            return fixture::skipped(&e);
        }
        let e = write_new(&m.dir.join("r-2.json"), b"new").unwrap_err();
        match &e {
            SinkError::Io { step, source, .. } => {
                assert_eq!((*step, source.raw_os_error()), ("create", Some(libc::EROFS)), "{e}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(entries(&m.dir), vec!["r-1.json"]);
        assert_eq!(fs::read(m.dir.join("r-1.json")).unwrap(), b"earlier");
    }

    #[test]
    fn a_full_filesystem_fails_with_enospc_leaves_no_file_and_keeps_earlier_ones() {
        let m = match fixture::tmpfs("sink-full", 64 << 10) {
            Ok(m) => m,
            Err(e) => return fixture::skipped(&e),
        };
        fs::write(m.dir.join("r-1.json"), b"earlier").unwrap();
        // Fill what is left.
        let filler = m.dir.join("filler");
        let _ = fs::write(&filler, vec![7u8; 1 << 20]);
        let e = write_new(&m.dir.join("r-2.json"), &vec![1u8; 256 << 10]).unwrap_err();
        match &e {
            SinkError::Io { step, source, .. } => {
                assert_eq!(source.raw_os_error(), Some(libc::ENOSPC), "{e}");
                assert!(matches!(*step, "write" | "fsync"), "{e}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(entries(&m.dir), vec!["filler", "r-1.json"], "no result, no temp");
        assert_eq!(fs::read(m.dir.join("r-1.json")).unwrap(), b"earlier");
    }
}
