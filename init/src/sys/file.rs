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

/// The flags of a range write-back that waits for it: wait for pages
/// already under write-back, start it on every dirty page of the range,
/// wait for all of it (`sync_file_range(2)`).
pub const SYNC_RANGE_WRITE_WAIT: u32 =
    libc::SYNC_FILE_RANGE_WAIT_BEFORE | libc::SYNC_FILE_RANGE_WRITE | libc::SYNC_FILE_RANGE_WAIT_AFTER;

/// `sync_file_range(2)` of `len` bytes at `offset` with
/// [`SYNC_RANGE_WRITE_WAIT`], retried on EINTR: the range's dirty cached
/// pages written and waited for, with no cache flush and no metadata.
pub fn write_back_range(f: &File, offset: u64, len: u64) -> Result<(), i32> {
    let off = i64::try_from(offset).map_err(|_| libc::EINVAL)?;
    let n = i64::try_from(len).map_err(|_| libc::EINVAL)?;
    loop {
        // SAFETY: sync_file_range takes no pointers; the descriptor belongs
        // to `f`, which outlives the call.
        let r = unsafe { libc::sync_file_range(f.as_raw_fd(), off, n, SYNC_RANGE_WRITE_WAIT) };
        if r == 0 {
            return Ok(());
        }
        match errno_of(&io::Error::last_os_error()) {
            libc::EINTR => continue,
            e => return Err(e),
        }
    }
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
