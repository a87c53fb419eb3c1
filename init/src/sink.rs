//! Where results go: a file written atomically (temp file, fsync, rename,
//! never overwriting), or stdout.
//!
//! The "rename" is a hard link of the temp file to the final name, which
//! fails with EEXIST if the name is taken (renameat2's RENAME_NOREPLACE
//! without unsafe code), then the temp name is removed and the directory
//! fsynced. On a filesystem without hard links (FAT: EPERM) the final name
//! is reserved with O_CREAT|O_EXCL and the temp file renamed over it.

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

/// Write `bytes` to `path` atomically and durably, never overwriting:
/// `.name.tmp-<pid>` in the same directory, write, fsync, hard-link to
/// `path` (fails if it exists), remove the temp name, fsync the directory.
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<(), SinkError> {
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

    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io("create", &tmp))?;
        f.write_all(bytes).map_err(io("write", &tmp))?;
        f.sync_all().map_err(io("fsync", &tmp))?;
        drop(f);
        let exists = || SinkError::Exists {
            path: path.to_path_buf(),
        };
        match fs::hard_link(&tmp, path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(exists()),
            // FAT (the boot stick) has no hard links (EPERM): reserve the
            // name with O_CREAT|O_EXCL, which never takes an existing file,
            // then rename the temp file over that empty reservation of ours.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::EOPNOTSUPP | libc::EMLINK)) => {
                OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(path)
                    .map_err(|e| {
                        if e.kind() == io::ErrorKind::AlreadyExists {
                            exists()
                        } else {
                            io("create", path)(e)
                        }
                    })?;
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
}
