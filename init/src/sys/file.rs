//! Opening targets and positioned I/O on them: safe code over std and nix,
//! collected here so the engines have one vocabulary of syscalls, each
//! returning the raw errno the results record.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};

/// The positive errno of an I/O error (EIO if the error did not come from the OS).
pub fn errno_of(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// Open `path` for reading, or for reading and writing when `write`, with
/// O_DIRECT when `direct`. Never creates or truncates anything.
pub fn open(path: &str, write: bool, direct: bool) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(write);
    let mut flags = libc::O_CLOEXEC;
    if direct {
        flags |= libc::O_DIRECT;
    }
    o.custom_flags(flags);
    o.open(path)
}

/// Open the block device `path` read-only with O_EXCL: an exclusive claim,
/// refused with EBUSY while the device is mounted, part of an md array or a
/// device-mapper table, or claimed by another exclusive opener. Ordinary
/// opens are still allowed while the claim is held.
pub fn open_exclusive(path: &str) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_EXCL)
        .open(path)
}

/// `pread(2)` into `buf` at `offset`, retried on EINTR; bytes read or the errno.
/// For O_DIRECT the kernel checks buffer address, length and offset alignment
/// and answers EINVAL; nothing here assumes them.
pub fn pread(f: &File, buf: &mut [u8], offset: u64) -> Result<usize, i32> {
    loop {
        match f.read_at(buf, offset) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r.map_err(|e| errno_of(&e)),
        }
    }
}

/// `pwrite(2)` of `buf` at `offset`, retried on EINTR; bytes written or the errno.
pub fn pwrite(f: &File, buf: &[u8], offset: u64) -> Result<usize, i32> {
    loop {
        match f.write_at(buf, offset) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r.map_err(|e| errno_of(&e)),
        }
    }
}

/// `fdatasync(2)`; on a block device this also flushes the disk's write cache.
pub fn fdatasync(f: &File) -> Result<(), i32> {
    f.sync_data().map_err(|e| errno_of(&e))
}

/// `fsync(2)`.
pub fn fsync(f: &File) -> Result<(), i32> {
    f.sync_all().map_err(|e| errno_of(&e))
}

/// `posix_fadvise(POSIX_FADV_DONTNEED)` over the whole file: drop its clean
/// cached pages (dirty ones must be written first, see [`fsync`]).
pub fn fadvise_dontneed(f: &File) -> Result<(), i32> {
    nix::fcntl::posix_fadvise(f.as_raw_fd(), 0, 0, nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED)
        .map_err(|e| e as i32)
}
