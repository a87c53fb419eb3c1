//! Loading kernel modules: `finit_module(2)` on an open `.ko` file.

use std::ffi::CStr;
use std::fs::File;
use std::os::fd::AsRawFd;

/// Load the module in `file` with the parameter string `params` (`c""` for
/// none). Returns the positive errno on failure (EEXIST: a module of that
/// name is already loaded; ENOEXEC: not a module for this kernel; the module
/// init's own error, e.g. ENODEV, otherwise).
pub fn finit_module(file: &File, params: &CStr) -> Result<(), i32> {
    // SAFETY: `file` is borrowed for the whole call, so its descriptor stays
    // open; `params` is a NUL-terminated string that outlives the call and the
    // kernel only reads it (copy_from_user); flags 0 asks for no special
    // behaviour. The syscall touches no other memory of this process.
    let r = unsafe { libc::syscall(libc::SYS_finit_module, file.as_raw_fd(), params.as_ptr(), 0) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO))
    }
}
