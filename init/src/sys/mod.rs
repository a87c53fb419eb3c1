//! The one place with unsafe code and raw syscalls: O_DIRECT buffers,
//! block-device, md, dm, NVMe, SCSI, USB and network ioctls, io_uring, CPU
//! affinity, fork, waitpid and the signal handler. Every unsafe block
//! carries a `// SAFETY:` comment naming the invariant it relies on.
//!
//! Only what needs unsafe or a raw syscall is here: safe code over std and
//! nix lives with the module that uses it. Errors are nix's [`Errno`] (or
//! `io::Error` where std's types are involved); a caller that records an
//! errno in a result document converts it there (`Errno as i32`).
#![allow(unsafe_code)]

use nix::errno::Errno;

pub mod blk;
pub mod buf;
pub mod cpu;
pub mod dm;
pub mod file;
pub mod md;
pub mod net;
pub mod nvme;
pub mod process;
pub mod sgio;
pub mod signal;
pub mod tpm;
pub mod uring;
pub mod uring_cmd;
pub mod usb;

/// The errno of an I/O error from the OS (EIO if it did not come from one).
fn errno_of(e: &std::io::Error) -> Errno {
    Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO))
}
