//! Loading kernel modules: `finit_module(2)` on an open `.ko` file.

use std::ffi::CStr;
use std::fs::File;

use nix::kmod::ModuleInitFlags;

/// Load the module in `file` with the parameter string `params` (`c""` for
/// none). Returns the positive errno on failure (EEXIST: a module of that
/// name is already loaded; ENOEXEC: not a module for this kernel; the module
/// init's own error, e.g. ENODEV, otherwise).
pub fn finit_module(file: &File, params: &CStr) -> Result<(), i32> {
    nix::kmod::finit_module(file, params, ModuleInitFlags::empty()).map_err(|e| e as i32)
}
