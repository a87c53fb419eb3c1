//! Block-device ioctls (linux/fs.h), the ones hdparm and blockdev use.

use std::fs::File;
use std::os::fd::AsRawFd;

use nix::errno::Errno;

// BLKGETSIZE64 = _IOR(0x12, 114, size_t): the device size in bytes (u64 on
// x86_64, where size_t is 8 bytes).
nix::ioctl_read!(blkgetsize64, 0x12, 114, u64);
// BLKSSZGET = _IO(0x12, 104), but the kernel writes an `int` through the
// argument: the logical block size.
nix::ioctl_read_bad!(blksszget, nix::request_code_none!(0x12, 104), libc::c_int);
// BLKPBSZGET = _IO(0x12, 123), the kernel writes an `unsigned int`: the
// physical block size.
nix::ioctl_read_bad!(blkpbszget, nix::request_code_none!(0x12, 123), libc::c_uint);
// BLKFLSBUF = _IO(0x12, 97): write back and drop the device's page cache.
nix::ioctl_none!(blkflsbuf, 0x12, 97);
// BLKGETDISKSEQ = _IOR(0x12, 128, __u64): the disk's sequence number (Linux
// 5.15+), new for every disk the kernel attaches and every loop device
// (re)bound, never reused within a boot.
nix::ioctl_read!(blkgetdiskseq, 0x12, 128, u64);

/// Size in bytes (BLKGETSIZE64).
pub fn size_bytes(f: &File) -> Result<u64, Errno> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes exactly one u64 through its argument, which
    // points at `size`, a live, writable u64 on this stack frame; `f` keeps
    // the fd open for the call.
    unsafe { blkgetsize64(f.as_raw_fd(), &mut size) }?;
    Ok(size)
}

/// Logical block size in bytes (BLKSSZGET).
pub fn logical_block(f: &File) -> Result<u32, Errno> {
    let mut v: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one `int` (put_user of an int in the kernel's
    // blkdev_ioctl) through its argument, which points at `v`, a live c_int.
    unsafe { blksszget(f.as_raw_fd(), &mut v) }?;
    u32::try_from(v).map_err(|_| Errno::EINVAL)
}

/// Physical block size in bytes (BLKPBSZGET).
pub fn physical_block(f: &File) -> Result<u32, Errno> {
    let mut v: libc::c_uint = 0;
    // SAFETY: BLKPBSZGET writes one `unsigned int` through its argument,
    // which points at `v`, a live c_uint.
    unsafe { blkpbszget(f.as_raw_fd(), &mut v) }?;
    Ok(v)
}

/// The disk sequence number (BLKGETDISKSEQ); ENOTTY on kernels before 5.15.
pub fn disk_seq(f: &File) -> Result<u64, Errno> {
    let mut seq: u64 = 0;
    // SAFETY: BLKGETDISKSEQ writes exactly one u64 (put_user of a u64 in
    // blkdev_common_ioctl) through its argument, which points at `seq`, a
    // live, writable u64 on this stack frame; `f` keeps the fd open.
    unsafe { blkgetdiskseq(f.as_raw_fd(), &mut seq) }?;
    Ok(seq)
}

/// Flush and invalidate the device's buffer cache (BLKFLSBUF; needs
/// CAP_SYS_ADMIN).
pub fn flush_buffers(f: &File) -> Result<(), Errno> {
    // SAFETY: BLKFLSBUF takes no argument and touches no user memory; the
    // only requirement is an open block-device fd, which `f` holds.
    unsafe { blkflsbuf(f.as_raw_fd()) }.map(drop)
}
