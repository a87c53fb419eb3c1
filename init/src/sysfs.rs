//! Where sysfs paths come from. Every sysfs path in init is a path
//! relative to a sysfs root, joined to it: the live root is [`ROOT`]
//! (`/sys`, where PID 1 mounts sysfs: `boot/mod.rs`'s mount table), and a
//! function that reads sysfs takes the root as an argument (`sys: &Path`),
//! so its tests hand it a fixture tree instead. Only the callers that act
//! on the running system use [`root`] or [`live`].

use std::path::{Path, PathBuf};

/// The live sysfs root.
pub const ROOT: &str = "/sys";

/// The live sysfs root, for the functions that take one.
pub fn root() -> &'static Path {
    Path::new(ROOT)
}

/// `rel`, a path relative to the sysfs root (`class/block/sda/stat`),
/// under the live root.
pub fn live(rel: impl AsRef<Path>) -> PathBuf {
    root().join(rel)
}

/// The sysfs directory of block device `rdev` (`dev/block/MAJ:MIN`
/// resolved: `.../block/sda/sda1`), whose last component is the kernel's
/// name of the device (`sda1`, `loop3`), whatever node named it.
pub fn block_dir(sys: &Path, rdev: u64) -> std::io::Result<PathBuf> {
    let (major, minor) = (nix::sys::stat::major(rdev), nix::sys::stat::minor(rdev));
    std::fs::canonicalize(sys.join(format!("dev/block/{major}:{minor}")))
}

/// The names in block device `name`'s `holders` (the md arrays and dm
/// layers built on it), in directory order; none if it has no such
/// directory.
pub fn holders(sys: &Path, name: &str) -> Vec<String> {
    std::fs::read_dir(sys.join("class/block").join(name).join("holders"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_paths_are_under_the_root() {
        assert_eq!(live("class/block/sda/stat"), Path::new("/sys/class/block/sda/stat"));
        assert_eq!(live(format!("dev/block/{}:{}", 8, 0)), Path::new("/sys/dev/block/8:0"));
        assert_eq!(root(), Path::new("/sys"));
    }
}
