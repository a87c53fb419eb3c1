//! Where results go: a file written atomically (a file with no name or a
//! temp name, fsync, link, never overwriting), or stdout.
//!
//! The data goes to a file with no name first where the filesystem can
//! (`O_TMPFILE` on ext4, XFS, btrfs, tmpfs, ...): nothing under any name
//! until it is complete, so no signal, kill or crash leaves anything
//! behind. Where it cannot (FAT, the boot stick), to a temp name
//! (`.<name>.tmp-<pid>`: a dot file whose name does not end in `.json`, so
//! no reader takes it for a result, see [`bench_core::boot::stick::temp_name`]),
//! which only a kill or a crash can leave. Either is fsynced, and only then
//! appears under its final name in one step. Power lost (or the machine
//! killed) at any moment leaves either no final name or the complete file
//! under it, never a partial or empty file under a result's name.
//!
//! The final name is a hard link, which fails with EEXIST if the name is
//! taken (renameat2's RENAME_NOREPLACE without unsafe code): of the unnamed
//! file through `/proc/self/fd/N` (linkat with AT_SYMLINK_FOLLOW, which
//! needs no capability), of the temp name, which is then removed; then the
//! directory is fsynced. On a filesystem without hard links (FAT: EPERM)
//! the final name is checked to be free and the temp file renamed to it
//! with rename(2). There, never overwriting holds against earlier files,
//! not against another process creating the same new name in the same
//! instant (PID 1 is the stick's only writer). An earlier version reserved
//! the final name with O_CREAT|O_EXCL before the rename: power lost
//! between the two left an empty file under a result's name.
//!
//! A temp name is created exclusively (O_CREAT|O_EXCL), never opened
//! through a name someone else made: a file or symbolic link already at the
//! temp name makes the write fail, untouched (the stick's stale temp files
//! of this machine are removed by [`crate::results::stick`], whose only
//! writer PID 1 is). The live command makes its `--out` file, and reserves
//! room for the document in it ([`NewFile::reserve`]), before the run.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use bench_core::boot::stick::temp_name;

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

/// A new file on its way to its name: where the filesystem can, an
/// unnamed file in the destination's directory (`O_TMPFILE`), which no
/// signal, kill or crash can leave behind and which gets its only name at
/// [`NewFile::commit`] (linkat(2) through `/proc/self/fd`); elsewhere (FAT,
/// the boot stick; a kernel or filesystem without `O_TMPFILE`) a temp file
/// `.<name>.tmp-<pid>` in the same directory, created exclusively
/// (O_CREAT|O_EXCL: a file or symbolic link planted at that name is
/// refused, never followed, written or removed), and removed again when
/// dropped unless [`NewFile::commit`] gave it its name.
#[derive(Debug)]
pub struct NewFile {
    path: PathBuf,
    temp: Temp,
    file: File,
    committed: bool,
}

/// Where a [`NewFile`] is until its commit.
#[derive(Debug)]
enum Temp {
    /// An `O_TMPFILE`: no name; reached as `/proc/self/fd/N`.
    Unnamed(PathBuf),
    /// A named temp file, `.<name>.tmp-<pid>`.
    Named(PathBuf),
}

impl NewFile {
    /// Check that `path` is free and its directory exists, and create the
    /// temp file there: unnamed where the filesystem can, else named.
    pub fn create(path: &Path) -> Result<NewFile, SinkError> {
        check_new(path)?;
        match Self::create_unnamed(path) {
            Some(f) => Ok(f),
            None => Self::create_named(path),
        }
    }

    /// An unnamed file (`O_TMPFILE`) in `path`'s directory, or `None` where
    /// the kernel or the filesystem has none (vfat and exfat answer
    /// EOPNOTSUPP, kernels before 3.11 EISDIR), or where `/proc` is not
    /// there to give it its name later. Any error here falls back to the
    /// named file, whose creation reports its own.
    fn create_unnamed(path: &Path) -> Option<NewFile> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        if !Path::new("/proc/self/fd").is_dir() {
            return None;
        }
        let file = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_TMPFILE)
            .mode(0o644)
            .open(dir_of(path))
            .ok()?;
        let reach = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
        Some(NewFile {
            path: path.to_path_buf(),
            temp: Temp::Unnamed(reach),
            file,
            committed: false,
        })
    }

    /// The named temp file `.<name>.tmp-<pid>` beside `path`, created
    /// exclusively.
    fn create_named(path: &Path) -> Result<NewFile, SinkError> {
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
            temp: Temp::Named(tmp),
            file,
            committed: false,
        })
    }

    /// True if the file has no name until its commit (`O_TMPFILE`).
    pub fn is_unnamed(&self) -> bool {
        matches!(self.temp, Temp::Unnamed(_))
    }

    /// The path errors name: the temp file's, or for an unnamed one the
    /// destination's (it has no other).
    fn shown(&self) -> &Path {
        match &self.temp {
            Temp::Unnamed(_) => &self.path,
            Temp::Named(p) => p,
        }
    }

    /// A path that reaches the data before the commit.
    fn reach(&self) -> &Path {
        match &self.temp {
            Temp::Unnamed(p) | Temp::Named(p) => p,
        }
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
                    self.file.write_all(&zeros[..n]).map_err(io("reserve", self.shown()))?;
                    left -= n as u64;
                }
            }
            Err(e) => return Err(io("reserve", self.shown())(io::Error::from(e))),
        }
        self.file.sync_all().map_err(io("fsync", self.shown()))
    }

    /// Write `bytes` as the whole file (over what [`NewFile::reserve`]
    /// put there), calling `mid(temp)` once half is written and synced
    /// (tests look at, or stop, a write there), then sync all of it.
    pub fn write_with(&mut self, bytes: &[u8], mid: &mut dyn FnMut(&Path)) -> Result<(), SinkError> {
        use std::io::Seek;
        self.file
            .seek(io::SeekFrom::Start(0))
            .map_err(io("seek", self.shown()))?;
        let (first, second) = bytes.split_at(bytes.len() / 2);
        self.file.write_all(first).map_err(io("write", self.shown()))?;
        self.file.sync_data().map_err(io("fsync", self.shown()))?;
        mid(self.reach());
        self.file.write_all(second).map_err(io("write", self.shown()))?;
        self.file
            .set_len(bytes.len() as u64)
            .map_err(io("truncate", self.shown()))?;
        self.file.sync_all().map_err(io("fsync", self.shown()))
    }

    /// Give the written file its name, never replacing a file there: a
    /// hard link, which fails if the name is taken (an unnamed file gets
    /// its first and only name so; on FAT, which has no hard links, a
    /// rename to the name if it is still free); then a named temp goes and
    /// the directory is synced.
    pub fn commit(mut self) -> Result<(), SinkError> {
        let exists = || SinkError::Exists {
            path: self.path.clone(),
        };
        match &self.temp {
            Temp::Unnamed(reach) => {
                use nix::fcntl::AtFlags;
                // Through the magic link (AT_SYMLINK_FOLLOW), which needs no
                // capability, unlike linkat(fd, "", AT_EMPTY_PATH).
                match nix::unistd::linkat(
                    None,
                    reach.as_path(),
                    None,
                    self.path.as_path(),
                    AtFlags::AT_SYMLINK_FOLLOW,
                ) {
                    Ok(()) => {}
                    Err(nix::errno::Errno::EEXIST) => return Err(exists()),
                    Err(e) => return Err(io("link", &self.path)(io::Error::from(e))),
                }
            }
            Temp::Named(tmp) => match fs::hard_link(tmp, &self.path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(exists()),
                // FAT (the boot stick) has no hard links (EPERM): rename the
                // complete temp file to the final name if that is still free.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::EOPNOTSUPP | libc::EMLINK)) => {
                    if fs::symlink_metadata(&self.path).is_ok() {
                        return Err(exists());
                    }
                    fs::rename(tmp, &self.path).map_err(io("rename", &self.path))?;
                }
                Err(e) => return Err(io("link", &self.path)(e)),
            },
        }
        // The data lives on under `path`; a named temp goes.
        self.committed = true;
        if let Temp::Named(tmp) = &self.temp {
            let _ = fs::remove_file(tmp);
        }
        let dir = dir_of(&self.path);
        File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(io("fsync directory", &dir))
    }
}

impl Drop for NewFile {
    fn drop(&mut self) {
        if let (false, Temp::Named(tmp)) = (self.committed, &self.temp) {
            // Ours: created exclusively above. (An unnamed file goes with
            // its descriptor.)
            let _ = fs::remove_file(tmp);
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

    /// Half-way through a write, the directory holds the earlier file and,
    /// where the filesystem has no `O_TMPFILE` (FAT), a temp name with the
    /// first half; elsewhere nothing else at all: no file under the final
    /// name either way.
    fn mid_write_listing(dir: &Path, unnamed: bool) {
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
        if unnamed {
            assert_eq!(
                seen,
                vec!["r-1.json".to_string()],
                "mid-write listing: the new file has no name"
            );
        } else {
            assert_eq!(seen, vec![tmp.clone(), "r-1.json".to_string()], "mid-write listing");
            assert!(bench_core::boot::stick::is_temp_name(&tmp));
        }
        assert_eq!(fs::read(&p).unwrap(), b"0123456789");
        assert_eq!(fs::read(&earlier).unwrap(), b"earlier result");
        assert_eq!(entries(dir), vec!["r-1.json", "r-2.json"], "no temp left");
    }

    #[test]
    fn mid_write_the_new_file_has_no_name() {
        let d = TempDir::new("mid");
        assert!(
            NewFile::create(&d.0.join("probe")).unwrap().is_unnamed(),
            "{} takes O_TMPFILE",
            d.0.display()
        );
        mid_write_listing(&d.0, true);
    }

    #[test]
    fn mid_write_on_fat_only_a_temp_name_exists_never_an_empty_result() {
        let m = match fixture::fat_loop("sink-mid").and_then(|m| fixture::mount_vfat(&m).map(|()| m)) {
            Ok(m) => m,
            Err(e) => return fixture::skipped(&e),
        };
        assert!(
            !NewFile::create(&m.dir.join("probe")).unwrap().is_unnamed(),
            "FAT has no O_TMPFILE"
        );
        mid_write_listing(&m.dir, false);
    }

    /// A file or symbolic link already at the temp name (another user's,
    /// in a shared directory) is never followed, written or removed: the
    /// named temp file (the way on FAT) is refused, saying so, and both are
    /// as they were; the unnamed file never meets the name at all.
    #[test]
    fn a_name_planted_at_the_temp_name_is_never_followed_nor_removed() {
        let d = TempDir::new("planted");
        let victim = d.0.join("victim");
        fs::write(&victim, b"precious").unwrap();
        let tmp = d.0.join(format!(".r.json.tmp-{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        let e = NewFile::create_named(&d.0.join("r.json")).unwrap_err();
        assert!(
            matches!(&e, SinkError::Io { step: "create", source, .. } if source.kind() == io::ErrorKind::AlreadyExists),
            "{e}"
        );
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        assert!(
            fs::symlink_metadata(&tmp).unwrap().file_type().is_symlink(),
            "the link is left"
        );
        write_new(&d.0.join("r.json"), b"new").unwrap();
        assert_eq!(
            fs::read(&victim).unwrap(),
            b"precious",
            "unnamed: the link is never met"
        );
        assert!(fs::symlink_metadata(&tmp).unwrap().file_type().is_symlink());
        fs::remove_file(&tmp).unwrap();
        fs::write(&tmp, b"someone's file").unwrap();
        assert!(NewFile::create_named(&d.0.join("s.json")).is_ok());
        assert!(NewFile::create_named(&d.0.join("r.json")).is_err());
        assert_eq!(fs::read(&tmp).unwrap(), b"someone's file", "not removed");
    }

    /// An unnamed file is given its name only if the name is still free:
    /// a file that appeared there during the run is kept, and the result
    /// is refused as existing, with nothing left behind.
    #[test]
    fn an_unnamed_file_never_replaces_a_name_taken_meanwhile() {
        let d = TempDir::new("taken");
        let p = d.0.join("r.json");
        let mut f = NewFile::create(&p).unwrap();
        assert!(f.is_unnamed());
        f.write_with(b"new", &mut |_| {}).unwrap();
        fs::write(&p, b"theirs").unwrap();
        assert!(matches!(f.commit(), Err(SinkError::Exists { .. })));
        assert_eq!(fs::read(&p).unwrap(), b"theirs");
        assert_eq!(entries(&d.0), vec!["r.json"]);
    }

    /// Room reserved before the run is given back at the commit: the
    /// file holds exactly the document, whatever was reserved.
    #[test]
    fn a_reserved_file_holds_exactly_what_was_written() {
        let d = TempDir::new("reserved");
        let p = d.0.join("r.json");
        let mut f = NewFile::create(&p).unwrap();
        f.reserve(3 << 20).unwrap();
        assert_eq!(fs::metadata(f.reach()).unwrap().len(), 3 << 20, "reserved");
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
