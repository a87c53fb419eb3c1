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
