//! Storage in use, whatever node reaches it.
//!
//! A claim's exclusive open guards the node it opens, not the bytes behind
//! it: a second loop device over the file a mounted loop device reads, that
//! file itself, the disk beneath a mounted loop device, all reach the same
//! bytes through other nodes, and the kernel lets each be written. So
//! before a grant and at every claim, [`check`] maps the target to the
//! bytes it reaches (an [`Extent`]: a byte range of a regular file or of a
//! whole block device, followed through partitions and loop devices) and
//! every block device of the machine the same way; one whose bytes overlap
//! the target's and that anything uses (mounted, swap, held by md, dm or
//! bcache, or claimed by another exclusive opener) refuses the write,
//! naming it and its use. `allow_overwrite_signatures` has no say here:
//! it overrides what the contents say, never what the system is doing.
//!
//! Only loop devices are opened to map them (LOOP_GET_STATUS64, no I/O);
//! the exclusive probe of a device in use opens only a device whose bytes
//! overlap the target's, never an unrelated disk (a hung or removable one
//! would answer an open slowly, or spin up).

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use nix::errno::Errno;

use super::Refusal;
use crate::sys::blk;

/// Where bytes live at the bottom of partitions and loop devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    /// A regular file (`st_dev`, `st_ino`).
    File {
        /// The device number of its filesystem.
        dev: u64,
        /// Its inode.
        ino: u64,
    },
    /// A block device that is not a partition or a loop device (a disk, an
    /// md array, a dm device), by its device number.
    Disk {
        /// The device number.
        rdev: u64,
    },
}

/// A byte range `[start, end)` of a [`Base`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// What the bytes belong to.
    pub base: Base,
    /// The first byte.
    pub start: u64,
    /// One past the last byte (`u64::MAX`: up to the base's end).
    pub end: u64,
}

impl Extent {
    /// All of `base`.
    fn whole(base: Base) -> Extent {
        Extent {
            base,
            start: 0,
            end: u64::MAX,
        }
    }

    /// The part of this extent `offset` bytes into it, `len` bytes long
    /// (`None`: to its end), never past its end.
    fn sub(self, offset: u64, len: Option<u64>) -> Extent {
        let start = self.start.saturating_add(offset).min(self.end);
        let end = len.map_or(self.end, |l| start.saturating_add(l).min(self.end));
        Extent {
            base: self.base,
            start,
            end,
        }
    }

    /// True if the two share a byte.
    pub fn overlaps(&self, o: &Extent) -> bool {
        self.base == o.base && self.start < o.end && o.start < self.end
    }
}

/// How deep partitions and loop devices may stack before the mapping
/// gives up (a loop device over a partition of a loop device ...).
const MAX_DEPTH: u32 = 8;

/// The device number in a sysfs `dev` file (`MAJ:MIN`).
fn dev_of(dir: &Path) -> io::Result<u64> {
    let s = fs::read_to_string(dir.join("dev"))?;
    let bad = || io::Error::new(io::ErrorKind::InvalidData, format!("{}/dev: {s:?}", dir.display()));
    let (maj, min) = s.trim().split_once(':').ok_or_else(bad)?;
    let maj = maj.parse::<u64>().map_err(|_| bad())?;
    let min = min.parse::<u64>().map_err(|_| bad())?;
    Ok(nix::sys::stat::makedev(maj, min))
}

/// A number in a sysfs file.
fn read_u64(p: &Path) -> io::Result<u64> {
    let s = fs::read_to_string(p)?;
    s.trim()
        .parse()
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, format!("{}: {s:?}", p.display())))
}

/// The kernel's name of the block device numbered `rdev` (`sda1`, `loop3`).
fn block_name(sys: &Path, rdev: u64) -> io::Result<String> {
    let dir = crate::sysfs::block_dir(sys, rdev)?;
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
}

/// The node of block device `name` (device number `rdev`) in /dev,
/// checked to be that device.
fn node(name: &str, rdev: u64) -> io::Result<PathBuf> {
    let p = Path::new("/dev").join(name);
    let m = fs::metadata(&p)?;
    if m.file_type().is_block_device() && m.rdev() == rdev {
        Ok(p)
    } else {
        Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{} is not block device {name}", p.display()),
        ))
    }
}

/// The whole disk block device `name` belongs to: its parent for a
/// partition, else itself.
fn whole_of(sys: &Path, name: &str) -> String {
    let dir = sys.join("class/block").join(name);
    if dir.join("partition").exists() {
        if let Some(parent) = fs::canonicalize(&dir).ok().and_then(|d| {
            d.parent()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        }) {
            return parent;
        }
    }
    name.to_string()
}

/// The bytes block device `name` reaches: through a partition to its
/// disk, through a loop device to its backing file (or block device);
/// `None` for a loop device bound to nothing.
pub fn block_extent(sys: &Path, name: &str) -> io::Result<Option<Extent>> {
    block_extent_at(sys, name, 0)
}

fn block_extent_at(sys: &Path, name: &str, depth: u32) -> io::Result<Option<Extent>> {
    if depth > MAX_DEPTH {
        return Err(io::Error::other(format!(
            "partitions and loop devices stack more than {MAX_DEPTH} deep beneath it"
        )));
    }
    let dir = sys.join("class/block").join(name);
    if dir.join("partition").exists() {
        let parent = whole_of(sys, name);
        let start = read_u64(&dir.join("start"))?.saturating_mul(512);
        let size = read_u64(&dir.join("size"))?.saturating_mul(512);
        return Ok(block_extent_at(sys, &parent, depth + 1)?.map(|e| e.sub(start, Some(size))));
    }
    let rdev = dev_of(&dir)?;
    if !dir.join("loop").is_dir() {
        return Ok(Some(Extent::whole(Base::Disk { rdev })));
    }
    let f = File::open(node(name, rdev)?)?;
    let b = match blk::loop_backing(&f) {
        Ok(b) => b,
        Err(Errno::ENXIO) => return Ok(None),
        Err(e) => return Err(io::Error::from(e)),
    };
    let len = (b.size_limit != 0).then_some(b.size_limit);
    if b.rdev != 0 {
        let inner = block_name(sys, b.rdev)?;
        return Ok(block_extent_at(sys, &inner, depth + 1)?.map(|e| e.sub(b.offset, len)));
    }
    Ok(Some(
        Extent::whole(Base::File { dev: b.dev, ino: b.ino }).sub(b.offset, len),
    ))
}

/// What the system uses, read once per check: mounted block devices (by
/// device number, with where), swap devices and swap files.
#[derive(Debug, Default)]
struct Uses {
    mounts: Vec<(u64, String)>,
    swap_devices: Vec<u64>,
    swap_files: Vec<(u64, u64)>,
}

impl Uses {
    fn read() -> Uses {
        let mut u = Uses::default();
        // mountinfo: `ID PARENT MAJ:MIN ROOT MOUNTPOINT ...` (the device
        // number the filesystem's superblock was mounted from).
        for l in fs::read_to_string("/proc/self/mountinfo").unwrap_or_default().lines() {
            let f: Vec<&str> = l.split(' ').collect();
            let (Some(dev), Some(at)) = (f.get(2), f.get(4)) else {
                continue;
            };
            let Some((maj, min)) = dev.split_once(':') else {
                continue;
            };
            if let (Ok(maj), Ok(min)) = (maj.parse(), min.parse()) {
                u.mounts.push((nix::sys::stat::makedev(maj, min), (*at).to_string()));
            }
        }
        // /proc/swaps: a header, then `FILENAME TYPE ...` (spaces in the
        // name as \040).
        for l in fs::read_to_string("/proc/swaps").unwrap_or_default().lines().skip(1) {
            let Some(name) = l.split_whitespace().next() else {
                continue;
            };
            let name = name.replace("\\040", " ");
            let Ok(m) = fs::metadata(&name) else { continue };
            if m.file_type().is_block_device() {
                u.swap_devices.push(m.rdev());
            } else {
                u.swap_files.push((m.dev(), m.ino()));
            }
        }
        u
    }

    /// How the system uses block device `name` (number `rdev`), if it does:
    /// mounted, swap, held (its `holders` in sysfs); with `probe`, also
    /// claimed by an exclusive opener (an open with O_EXCL refused).
    fn of_block(&self, sys: &Path, name: &str, rdev: u64, probe: bool) -> Option<String> {
        if let Some((_, at)) = self.mounts.iter().find(|(d, _)| *d == rdev) {
            return Some(format!("mounted at {at}"));
        }
        if self.swap_devices.contains(&rdev) {
            return Some("in use as swap".to_string());
        }
        let mut holders = crate::sysfs::holders(sys, name);
        if !holders.is_empty() {
            holders.sort();
            return Some(format!("held by {}", holders.join(", ")));
        }
        if probe {
            if let Ok(p) = node(name, rdev) {
                if let Err(e) = crate::disks::file::open_exclusive(p.to_str().unwrap_or_default()) {
                    if e.raw_os_error() == Some(libc::EBUSY) {
                        return Some(
                            "claimed by an exclusive opener (a filesystem, an array or layer, a program, \
                             or this run through another of its targets)"
                                .to_string(),
                        );
                    }
                }
            }
        }
        None
    }
}

/// Refuse writes to the target at `path`, open as `f`, if its bytes are in
/// use, through it or through any other node that reaches them (see the
/// module's documentation). The target itself is checked for being
/// mounted, swap or held; its exclusive claim ([`super::Grant::claim`])
/// checks the rest. Every other block device whose bytes overlap the
/// target's is checked for each use, and outside the target's own disk and
/// partitions (whose claims the target's exclusive open already meets) for
/// an exclusive claim too.
pub fn check(path: &str, f: &File) -> Result<(), Refusal> {
    check_in(crate::sysfs::root(), path, f)
}

fn check_in(sys: &Path, path: &str, f: &File) -> Result<(), Refusal> {
    let refuse = |through: Option<&str>, how: String| Refusal::InUse {
        path: path.to_string(),
        through: through.map(str::to_string),
        how,
    };
    let unknown = |what: &str, e: io::Error| Refusal::Unmapped {
        path: path.to_string(),
        error: format!("what storage {what} reaches: {e}"),
    };
    let meta = f.metadata().map_err(|e| unknown(path, e))?;
    let uses = Uses::read();
    let (own, own_whole, ext) = if meta.file_type().is_block_device() {
        let rdev = meta.rdev();
        let name = block_name(sys, rdev).map_err(|e| unknown(path, e))?;
        if let Some(how) = uses.of_block(sys, &name, rdev, false) {
            return Err(refuse(None, how));
        }
        let ext = block_extent(sys, &name).map_err(|e| unknown(path, e))?;
        (Some(rdev), Some(whole_of(sys, &name)), ext)
    } else {
        if uses.swap_files.contains(&(meta.dev(), meta.ino())) {
            return Err(refuse(None, "in use as swap".to_string()));
        }
        let ext = Extent::whole(Base::File {
            dev: meta.dev(),
            ino: meta.ino(),
        });
        (None, None, Some(ext))
    };
    let Some(ext) = ext else { return Ok(()) };
    // A swap file beneath a loop device.
    if let Base::File { dev, ino } = ext.base {
        if uses.swap_files.contains(&(dev, ino)) {
            return Err(refuse(None, "backed by a file in use as swap".to_string()));
        }
    }
    let mut names: Vec<String> = fs::read_dir(sys.join("class/block"))
        .map_err(|e| unknown("the block devices", e))?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        let dir = sys.join("class/block").join(&name);
        let rdev = match dev_of(&dir) {
            Ok(r) => r,
            // Gone meanwhile.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(unknown(&name, e)),
        };
        if Some(rdev) == own {
            continue;
        }
        let other = match block_extent(sys, &name) {
            Ok(Some(x)) => x,
            Ok(None) => continue,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(unknown(&name, e)),
        };
        if !other.overlaps(&ext) {
            continue;
        }
        let family = own_whole.as_deref() == Some(whole_of(sys, &name).as_str());
        if let Some(how) = uses.of_block(sys, &name, rdev, !family) {
            return Err(refuse(Some(&format!("/dev/{name}")), how));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(ino: u64) -> Base {
        Base::File { dev: 5, ino }
    }

    #[test]
    fn extents_overlap_only_on_the_same_base_and_a_shared_byte() {
        let a = Extent::whole(file(1)).sub(0, Some(100));
        let b = Extent::whole(file(1)).sub(100, Some(100));
        let c = Extent::whole(file(1)).sub(99, None);
        assert!(!a.overlaps(&b) && !b.overlaps(&a), "adjacent ranges share no byte");
        assert!(a.overlaps(&c) && c.overlaps(&b));
        assert!(!a.overlaps(&Extent::whole(file(2))), "another file");
        assert!(!a.overlaps(&Extent::whole(Base::Disk { rdev: 5 })));
        // A range inside a range: a partition of a loop device with an offset.
        let loop_dev = Extent::whole(file(1)).sub(1 << 20, Some(8 << 20));
        let part = loop_dev.sub(4096, Some(2048));
        assert_eq!((part.start, part.end), ((1 << 20) + 4096, (1 << 20) + 6144));
        // Never past the end of what it is part of, and never wrapping.
        let past = loop_dev.sub(16 << 20, Some(1));
        assert_eq!((past.start, past.end), (9 << 20, 9 << 20));
        assert!(!past.overlaps(&loop_dev), "an empty range overlaps nothing");
        let far = Extent::whole(file(1)).sub(u64::MAX - 1, Some(u64::MAX));
        assert_eq!((far.start, far.end), (u64::MAX - 1, u64::MAX));
    }
}
