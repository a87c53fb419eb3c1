//! mount(2), umount2(2) and sync(2) for PID 1.

use std::ffi::CString;

/// Turn a Rust string into a C string; a string with an interior NUL is EINVAL.
fn c(s: &str) -> Result<CString, i32> {
    CString::new(s).map_err(|_| libc::EINVAL)
}

/// `mount(source, target, fstype, flags, data)`; `data` empty means none.
/// Returns the positive errno on failure.
pub fn mount(source: &str, target: &str, fstype: &str, flags: libc::c_ulong, data: &str) -> Result<(), i32> {
    let (src, tgt, fs, dat) = (c(source)?, c(target)?, c(fstype)?, c(data)?);
    let data_ptr: *const libc::c_void = if data.is_empty() {
        std::ptr::null()
    } else {
        dat.as_ptr().cast()
    };
    // SAFETY: the four strings are NUL-terminated CStrings that live until the
    // end of this function; `data_ptr` is null or points into `dat`, and the
    // kernel reads at most one page of it. mount(2) writes no process memory.
    let r = unsafe { libc::mount(src.as_ptr(), tgt.as_ptr(), fs.as_ptr(), flags, data_ptr) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO))
    }
}

/// Lazy unmount (`umount2(target, MNT_DETACH)`): detach now, clean up when the
/// last user goes. EINVAL means `target` is not a mount point.
pub fn umount_lazy(target: &str) -> Result<(), i32> {
    let tgt = c(target)?;
    // SAFETY: `tgt` is a NUL-terminated CString alive for the call; umount2
    // only reads it.
    let r = unsafe { libc::umount2(tgt.as_ptr(), libc::MNT_DETACH) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO))
    }
}

/// `sync(2)`: write every dirty buffer of every filesystem.
pub fn sync() {
    // SAFETY: sync takes no arguments and cannot fail.
    unsafe { libc::sync() }
}
