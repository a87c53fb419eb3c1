//! mount(2), umount2(2) and sync(2) for PID 1.

use nix::mount::{MntFlags, MsFlags};

/// `mount(source, target, fstype, flags, data)`; `data` empty means none.
/// Returns the positive errno on failure (EINVAL for a string with a NUL).
pub fn mount(source: &str, target: &str, fstype: &str, flags: libc::c_ulong, data: &str) -> Result<(), i32> {
    let data = (!data.is_empty()).then_some(data);
    nix::mount::mount(
        Some(source),
        target,
        Some(fstype),
        MsFlags::from_bits_retain(flags),
        data,
    )
    .map_err(|e| e as i32)
}

/// Lazy unmount (`umount2(target, MNT_DETACH)`): detach now, clean up when the
/// last user goes. EINVAL means `target` is not a mount point.
pub fn umount_lazy(target: &str) -> Result<(), i32> {
    nix::mount::umount2(target, MntFlags::MNT_DETACH).map_err(|e| e as i32)
}

/// `sync(2)`: write every dirty buffer of every filesystem.
pub fn sync() {
    nix::unistd::sync();
}
