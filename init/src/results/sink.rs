//! Where results go: a file written atomically (temp file, fsync, rename,
//! never overwriting), or stdout.
//!
//! The data goes to a temp name first (`.<name>.tmp-<pid>`: a dot file
//! whose name does not end in `.json`, so no reader takes it for a result,
//! see [`bench_core::stick::temp_name`]), is fsynced, and only then appears under its final
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
//!
//! The temp file is created exclusively (O_CREAT|O_EXCL), never opened
//! through a name someone else made: a file or symbolic link already at the
//! temp name makes the write fail, untouched (the stick's stale temp files
//! of this machine are removed by [`crate::results::stick`], whose only
//! writer PID 1 is). The live command makes its `--out` file, and reserves
//! room for the document in it ([`NewFile::reserve`]), before the run.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use bench_core::stick::temp_name;

/// Why results could not be written.
#[derive(Debug)]
pub enum SinkError {
    /// The destination exists already; nothing is overwritten.
    Exists {
        /// The destination.
        path: PathBuf,
    },
    /// The destination names no file (empty, or ending in `..`).
    NoName {
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
            SinkError::NoName { path } => write!(
                f,
                "--out: {:?} names no file; expected a file name in an existing directory",
                path.display().to_string()
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

/// Check that `path` can be created: it does not exist and its directory
/// does.
fn check_new(path: &Path) -> Result<(), SinkError> {
    if path.file_name().is_none() {
        return Err(SinkError::NoName {
            path: path.to_path_buf(),
        });
    }
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

fn io<'p>(step: &'static str, p: &'p Path) -> impl Fn(io::Error) -> SinkError + 'p {
    move |source| SinkError::Io {
        step,
        path: p.to_path_buf(),
        source,
    }
}

/// A new file on its way to its name: a temp file in the same directory,
/// `.<name>.tmp-<pid>`, created exclusively (O_CREAT|O_EXCL: a file or
/// symbolic link planted at that name is refused, never followed, written
/// or removed), and removed again when dropped unless [`NewFile::commit`]
/// gave it its name.
#[derive(Debug)]
pub struct NewFile {
    path: PathBuf,
    tmp: PathBuf,
    file: File,
    committed: bool,
}

impl NewFile {
    /// Check that `path` is free and its directory exists, and create the
    /// temp file there.
    pub fn create(path: &Path) -> Result<NewFile, SinkError> {
        check_new(path)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir_of(path).join(temp_name(&name, std::process::id()));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io("create", &tmp))?;
        Ok(NewFile {
            path: path.to_path_buf(),
            tmp,
            file,
            committed: false,
        })
    }

    /// Reserve `bytes` in the temp file and sync it: a filesystem that is
    /// full (or over quota) says so now, before a run whose document would
    /// need the room. fallocate(2), or zeros written where the filesystem
    /// has none (FAT before Linux 4.19, ...).
    pub fn reserve(&mut self, bytes: u64) -> Result<(), SinkError> {
        let len = i64::try_from(bytes).unwrap_or(i64::MAX);
        match nix::fcntl::fallocate(
            std::os::fd::AsRawFd::as_raw_fd(&self.file),
            nix::fcntl::FallocateFlags::empty(),
            0,
            len,
        ) {
            Ok(()) => {}
            Err(nix::errno::Errno::EOPNOTSUPP) => {
                let zeros = vec![0u8; 1 << 20];
                let mut left = bytes;
                while left > 0 {
                    let n = usize::try_from(left.min(1 << 20)).unwrap_or(1 << 20);
                    self.file.write_all(&zeros[..n]).map_err(io("reserve", &self.tmp))?;
                    left -= n as u64;
                }
            }
            Err(e) => return Err(io("reserve", &self.tmp)(io::Error::from(e))),
        }
        self.file.sync_all().map_err(io("fsync", &self.tmp))
    }

    /// Write `bytes` as the whole file (over what [`NewFile::reserve`]
    /// put there), calling `mid(temp)` once half is written and synced
    /// (tests look at, or stop, a write there), then sync all of it.
    pub fn write_with(&mut self, bytes: &[u8], mid: &mut dyn FnMut(&Path)) -> Result<(), SinkError> {
        use std::io::Seek;
        self.file.seek(io::SeekFrom::Start(0)).map_err(io("seek", &self.tmp))?;
        let (first, second) = bytes.split_at(bytes.len() / 2);
        self.file.write_all(first).map_err(io("write", &self.tmp))?;
        self.file.sync_data().map_err(io("fsync", &self.tmp))?;
        mid(&self.tmp);
        self.file.write_all(second).map_err(io("write", &self.tmp))?;
        self.file
            .set_len(bytes.len() as u64)
            .map_err(io("truncate", &self.tmp))?;
        self.file.sync_all().map_err(io("fsync", &self.tmp))
    }

    /// Give the written file its name, never replacing a file there: a
    /// hard link, which fails if the name is taken (on FAT, which has no
    /// hard links, a rename to the name if it is still free); then the
    /// temp name goes and the directory is synced.
    pub fn commit(mut self) -> Result<(), SinkError> {
        let exists = || SinkError::Exists {
            path: self.path.clone(),
        };
        match fs::hard_link(&self.tmp, &self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(exists()),
            // FAT (the boot stick) has no hard links (EPERM): rename the
            // complete temp file to the final name if that is still free.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::EOPNOTSUPP | libc::EMLINK)) => {
                if fs::symlink_metadata(&self.path).is_ok() {
                    return Err(exists());
                }
                fs::rename(&self.tmp, &self.path).map_err(io("rename", &self.path))?;
            }
            Err(e) => return Err(io("link", &self.path)(e)),
        }
        // The data lives on under `path`; the temp name goes (drop).
        self.committed = true;
        let _ = fs::remove_file(&self.tmp);
        let dir = dir_of(&self.path);
        File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(io("fsync directory", &dir))
    }
}

impl Drop for NewFile {
    fn drop(&mut self) {
        if !self.committed {
            // Ours: created exclusively above.
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Write `bytes` to `path` atomically and durably, never overwriting:
/// `.name.tmp-<pid>` in the same directory (created exclusively), write,
/// fsync, hard-link to `path` (fails if it exists; on FAT: rename to
/// `path` if it is free), remove the temp name, fsync the directory.
#[cfg(test)]
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<(), SinkError> {
    write_new_with(path, bytes, &mut |_| {})
}

/// [`write_new`], calling `mid(temp)` once half of `bytes` is written and
/// fsynced under the temp name (tests look at, or stop, a write there).
pub fn write_new_with(path: &Path, bytes: &[u8], mid: &mut dyn FnMut(&Path)) -> Result<(), SinkError> {
    let mut f = NewFile::create(path)?;
    f.write_with(bytes, mid)?;
    f.commit()
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

    /// An ext2 filesystem of 16 MiB with 128-byte inodes (no birth time;
    /// a freed inode number goes to the next file made), made by
    /// mkfs.ext2 in a /dev/shm file and loop-mounted at `dir`.
    pub fn ext2(name: &str) -> Result<Mounted, String> {
        let img = shm(name).with_extension("img");
        let dir = shm(name).with_extension("mnt");
        let m = Mounted {
            dir: dir.clone(),
            loop_dev: None,
            files: vec![img.clone()],
        };
        fs::write(&img, vec![0u8; 16 << 20]).map_err(|e| e.to_string())?;
        sh("mkfs.ext2", &["-q", "-F", "-I", "128", &img.to_string_lossy()])?;
        fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        sh(
            "mount",
            &[
                "-o",
                "loop",
                "-t",
                "ext2",
                &img.to_string_lossy(),
                &dir.to_string_lossy(),
            ],
        )?;
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
        assert!(bench_core::stick::is_temp_name(&tmp));
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

    /// A file or symbolic link already at the temp name (another user's,
    /// in a shared directory) is never followed, written or removed: the
    /// write fails, saying so, and both are as they were.
    #[test]
    fn a_name_planted_at_the_temp_name_is_never_followed_nor_removed() {
        let d = TempDir::new("planted");
        let victim = d.0.join("victim");
        fs::write(&victim, b"precious").unwrap();
        let tmp = d.0.join(format!(".r.json.tmp-{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        let e = write_new(&d.0.join("r.json"), b"new").unwrap_err();
        assert!(
            matches!(&e, SinkError::Io { step: "create", source, .. } if source.kind() == io::ErrorKind::AlreadyExists),
            "{e}"
        );
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        assert!(
            fs::symlink_metadata(&tmp).unwrap().file_type().is_symlink(),
            "the link is left"
        );
        fs::remove_file(&tmp).unwrap();
        fs::write(&tmp, b"someone's file").unwrap();
        assert!(write_new(&d.0.join("r.json"), b"new").is_err());
        assert_eq!(fs::read(&tmp).unwrap(), b"someone's file", "not removed");
        assert!(fs::symlink_metadata(d.0.join("r.json")).is_err(), "no result");
    }

    /// Room reserved before the run is given back at the commit: the
    /// file holds exactly the document, whatever was reserved.
    #[test]
    fn a_reserved_file_holds_exactly_what_was_written() {
        let d = TempDir::new("reserved");
        let p = d.0.join("r.json");
        let mut f = NewFile::create(&p).unwrap();
        f.reserve(3 << 20).unwrap();
        assert_eq!(
            fs::metadata(d.0.join(format!(".r.json.tmp-{}", std::process::id())))
                .unwrap()
                .len(),
            3 << 20,
            "reserved"
        );
        f.write_with(b"{}", &mut |_| {}).unwrap();
        f.commit().unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"{}");
        assert_eq!(entries(&d.0), vec!["r.json"]);
        // Dropped before its commit (the run failed), it leaves nothing.
        drop(NewFile::create(&d.0.join("s.json")).unwrap());
        assert_eq!(entries(&d.0), vec!["r.json"]);
        // No file name at all.
        assert!(matches!(NewFile::create(Path::new("")), Err(SinkError::NoName { .. })));
        assert!(matches!(
            NewFile::create(&d.0.join("..")),
            Err(SinkError::NoName { .. })
        ));
    }

    /// A filesystem without room for the reservation says so before the
    /// run (ENOSPC), and nothing is left on it.
    #[test]
    fn a_full_filesystem_refuses_the_reservation_and_keeps_nothing() {
        let m = match fixture::tmpfs("sink-reserve", 64 << 10) {
            Ok(m) => m,
            Err(e) => return fixture::skipped(&e),
        };
        let mut f = NewFile::create(&m.dir.join("r.json")).unwrap();
        let e = f.reserve(1 << 20).unwrap_err();
        assert!(
            matches!(&e, SinkError::Io { step: "reserve", source, .. } if source.raw_os_error() == Some(libc::ENOSPC)),
            "{e}"
        );
        drop(f);
        assert!(entries(&m.dir).is_empty());
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
