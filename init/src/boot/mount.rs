//! mount(2), umount2(2) and sync(2) for PID 1, over nix.

use nix::errno::Errno;
use nix::mount::{MntFlags, MsFlags};

/// `mount(source, target, fstype, flags, data)`; `data` empty means none.
/// EINVAL for a string with a NUL.
pub fn mount(source: &str, target: &str, fstype: &str, flags: libc::c_ulong, data: &str) -> Result<(), Errno> {
    let data = (!data.is_empty()).then_some(data);
    nix::mount::mount(
        Some(source),
        target,
        Some(fstype),
        MsFlags::from_bits_retain(flags),
        data,
    )
}

/// Lazy unmount (`umount2(target, MNT_DETACH)`): detach now, clean up when the
/// last user goes. EINVAL means `target` is not a mount point.
pub fn umount_lazy(target: &str) -> Result<(), Errno> {
    nix::mount::umount2(target, MntFlags::MNT_DETACH)
}

/// `sync(2)`: write every dirty buffer of every filesystem.
pub fn sync() {
    nix::unistd::sync();
}
