//! A ranged write-back of a file's cached pages: `sync_file_range(2)`,
//! which nix 0.29 does not wrap.

use std::fs::File;
use std::os::fd::AsRawFd;

use nix::errno::Errno;

/// The flags of a range write-back that waits for it: wait for pages
/// already under write-back, start it on every dirty page of the range,
/// wait for all of it (`sync_file_range(2)`).
pub const SYNC_RANGE_WRITE_WAIT: u32 =
    libc::SYNC_FILE_RANGE_WAIT_BEFORE | libc::SYNC_FILE_RANGE_WRITE | libc::SYNC_FILE_RANGE_WAIT_AFTER;

/// `sync_file_range(2)` of `len` bytes at `offset` with
/// [`SYNC_RANGE_WRITE_WAIT`], retried on EINTR: the range's dirty cached
/// pages written and waited for, with no cache flush and no metadata.
pub fn write_back_range(f: &File, offset: u64, len: u64) -> Result<(), Errno> {
    let off = i64::try_from(offset).map_err(|_| Errno::EINVAL)?;
    let n = i64::try_from(len).map_err(|_| Errno::EINVAL)?;
    loop {
        // SAFETY: sync_file_range takes no pointers; the descriptor belongs
        // to `f`, which outlives the call.
        let r = unsafe { libc::sync_file_range(f.as_raw_fd(), off, n, SYNC_RANGE_WRITE_WAIT) };
        match Errno::result(r) {
            Ok(_) => return Ok(()),
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(e),
        }
    }
}
