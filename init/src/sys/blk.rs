//! Block-device ioctls (linux/fs.h), the ones hdparm and blockdev use.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

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

/// `cachestat(2)` (Linux 6.5+): one number on every architecture (the
/// generic syscall table's 451).
const SYS_CACHESTAT: libc::c_long = 451;

/// `struct cachestat_range` (include/uapi/linux/mman.h).
#[repr(C)]
struct CachestatRange {
    off: u64,
    len: u64,
}

/// `struct cachestat` (include/uapi/linux/mman.h).
#[repr(C)]
#[derive(Default)]
struct Cachestat {
    nr_cache: u64,
    nr_dirty: u64,
    nr_writeback: u64,
    nr_evicted: u64,
    nr_recently_evicted: u64,
}

/// The pages of `f`'s page cache, those still being read included
/// (cachestat(2) over the whole file: `len` 0 runs to its end; mm/filemap.c
/// `filemap_cachestat` counts every folio present, up to date or not).
/// ENOSYS before Linux 6.5.
pub fn cached_pages(f: &File) -> Result<u64, Errno> {
    let range = CachestatRange { off: 0, len: 0 };
    let mut cs = Cachestat::default();
    // SAFETY: cachestat reads one `struct cachestat_range` from its second
    // argument and writes one `struct cachestat` through its third; both
    // point at live values of those layouts (repr(C), five and two u64s) on
    // this stack frame; the flags must be 0; `f` keeps the fd open.
    let r = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            f.as_raw_fd(),
            std::ptr::from_ref(&range),
            std::ptr::from_mut(&mut cs),
            0u32,
        )
    };
    if r != 0 {
        return Err(Errno::last());
    }
    Ok(cs.nr_cache)
}

/// How often [`close_cache`] looks again while pages are still being read.
const CLOSE_POLL: Duration = Duration::from_micros(100);
/// How long [`close_cache`] waits with no page leaving the cache before it
/// gives up: pages that stay are not being read (another process maps
/// them), and no close of ours would be the device's last then.
const CLOSE_STALL: Duration = Duration::from_secs(1);

/// What the last close of block device `f` does to its page cache (the
/// kernel's block/bdev.c `blkdev_put_whole` -> `blkdev_flush_mapping`:
/// `sync_blockdev`, then `kill_bdev`, whose `truncate_inode_pages` waits
/// for each page still locked for a read): dirty pages written back and
/// the clean ones dropped (BLKFLSBUF: `sync_blockdev`, `invalidate_bdev`),
/// then, as `invalidate_bdev` skips the pages still being read (the
/// readahead the last reads started past themselves), those dropped as
/// their reads complete (POSIX_FADV_DONTNEED) until none is cached
/// ([`cached_pages`]). Without cachestat (before Linux 6.5) the first
/// drop alone. Needs CAP_SYS_ADMIN (BLKFLSBUF).
pub fn close_cache(f: &File) -> Result<(), Errno> {
    flush_buffers(f)?;
    let Ok(mut left) = cached_pages(f) else {
        return Ok(());
    };
    let mut moved = Instant::now();
    while left > 0 && moved.elapsed() < CLOSE_STALL {
        std::thread::sleep(CLOSE_POLL);
        nix::fcntl::posix_fadvise(f.as_raw_fd(), 0, 0, nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED)?;
        let now = cached_pages(f)?;
        if now < left {
            moved = Instant::now();
        }
        left = now;
    }
    Ok(())
}

// BLKROGET = _IO(0x12, 94), but the kernel writes an `int` through the
// argument: 1 if the device is read-only (its `ro` attribute: `losetup -r`,
// `blockdev --setro`, a write-protected medium), else 0.
nix::ioctl_read_bad!(blkroget, nix::request_code_none!(0x12, 94), libc::c_int);

/// True if the kernel holds the device read-only (BLKROGET): every write to
/// it fails with EPERM before it reaches the disk.
pub fn read_only(f: &File) -> Result<bool, Errno> {
    let mut v: libc::c_int = 0;
    // SAFETY: BLKROGET writes one `int` (put_int of bdev_read_only() in
    // blkdev_ioctl) through its argument, which points at `v`, a live c_int.
    unsafe { blkroget(f.as_raw_fd(), &mut v) }?;
    Ok(v != 0)
}

/// `struct loop_info64` of linux/loop.h, as LOOP_GET_STATUS64 fills it.
#[repr(C)]
#[allow(dead_code)] // the kernel fills every field; only some are read
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

// The kernel's layout: 232 bytes, `lo_offset` at 24, `lo_flags` at 52.
const _: () = assert!(std::mem::size_of::<LoopInfo64>() == 232);
const _: () = assert!(std::mem::offset_of!(LoopInfo64, lo_offset) == 24);
const _: () = assert!(std::mem::offset_of!(LoopInfo64, lo_flags) == 52);

// LOOP_GET_STATUS64 = 0x4C05 (a plain number, not _IOR-encoded): the kernel
// copies a whole `struct loop_info64` out through the argument.
nix::ioctl_read_bad!(loop_get_status64, 0x4C05, LoopInfo64);

/// What a bound loop device reads and writes: its backing file's device
/// and inode numbers (and device number, when the backing file is itself a
/// block device), and the byte range of it the loop device shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopBacking {
    /// `st_dev` of the backing file (the filesystem it lives on).
    pub dev: u64,
    /// `st_ino` of the backing file.
    pub ino: u64,
    /// `st_rdev` of the backing file: non-zero when it is a block device.
    pub rdev: u64,
    /// The first byte of the backing file the loop device shows.
    pub offset: u64,
    /// How many bytes from `offset` it shows; 0: up to the file's end.
    pub size_limit: u64,
}

/// The loop device `f`'s backing (LOOP_GET_STATUS64); ENXIO for a loop
/// device bound to nothing.
pub fn loop_backing(f: &File) -> Result<LoopBacking, Errno> {
    let mut info = LoopInfo64 {
        lo_device: 0,
        lo_inode: 0,
        lo_rdevice: 0,
        lo_offset: 0,
        lo_sizelimit: 0,
        lo_number: 0,
        lo_encrypt_type: 0,
        lo_encrypt_key_size: 0,
        lo_flags: 0,
        lo_file_name: [0; 64],
        lo_crypt_name: [0; 64],
        lo_encrypt_key: [0; 32],
        lo_init: [0; 2],
    };
    // SAFETY: LOOP_GET_STATUS64 copies exactly one `struct loop_info64`
    // (232 bytes, the layout `LoopInfo64` repeats field for field with
    // repr(C)) to its argument, which points at `info`, a live, writable
    // value of that type on this stack frame; `f` keeps the fd open.
    unsafe { loop_get_status64(f.as_raw_fd(), &mut info) }?;
    Ok(LoopBacking {
        dev: info.lo_device,
        ino: info.lo_inode,
        rdev: info.lo_rdevice,
        offset: info.lo_offset,
        size_limit: info.lo_sizelimit,
    })
}

/// BLKREPORTZONE = _IOWR(0x12, 130, struct blk_zone_report)
/// (linux/blkzoned.h): the struct's fixed part is 16 bytes (u64 sector,
/// u32 nr_zones, u32 flags), its zone descriptors (64 bytes each) follow.
const BLKREPORTZONE: nix::sys::ioctl::ioctl_num_type = nix::request_code_readwrite!(0x12, 130, 16);

/// Bytes of one zone descriptor (`struct blk_zone`).
const ZONE_DESCRIPTOR: usize = 64;

/// The kernel's report of at most `nr` zones from the one holding 512-byte
/// sector `sector` on: the bytes of `struct blk_zone_report` and its
/// descriptors, as [`bench_core::device::zones::parse_report`] reads them.
/// Only reads (a read-only descriptor does: the kernel asks the disk's
/// REPORT ZONES / Zone Management Receive); ENOTTY on a disk that is not
/// zoned.
pub fn report_zones(f: &File, sector: u64, nr: u32) -> Result<Vec<u8>, Errno> {
    let words = (16 + nr as usize * ZONE_DESCRIPTOR) / 8;
    // u64 words: the struct's alignment.
    let mut buf = vec![0u64; words];
    buf[0] = sector;
    buf[1] = u64::from(nr);
    // SAFETY: BLKREPORTZONE reads the 16-byte header at its argument and
    // writes at most `nr_zones` (the header's, `nr`) 64-byte descriptors
    // after it: `buf` is a live, writable allocation of 16 + nr x 64 bytes,
    // 8-byte aligned, for the whole call; `f` keeps the fd open.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKREPORTZONE, buf.as_mut_ptr()) };
    Errno::result(r)?;
    Ok(buf.iter().flat_map(|w| w.to_ne_bytes()).collect())
}

/// `struct blk_zone_range` (linux/blkzoned.h): the zones from 512-byte
/// sector `sector` covering `nr_sectors` sectors.
#[repr(C)]
struct BlkZoneRange {
    sector: u64,
    nr_sectors: u64,
}

// BLKRESETZONE = _IOW(0x12, 131, struct blk_zone_range): reset the write
// pointers of the zones in the range (a write: the zones' data is gone).
// The kernel refuses it (EBADF) on a descriptor not open for writing.
nix::ioctl_write_ptr!(blkresetzone, 0x12, 131, BlkZoneRange);

/// Reset the write pointer of every zone from 512-byte sector `sector` over
/// `nr_sectors` sectors (BLKRESETZONE): the zones become empty. A write to
/// the disk, for a descriptor opened for writing on a disk the plan grants;
/// the range must start and end on zone boundaries (EINVAL otherwise).
pub fn reset_zones(f: &File, sector: u64, nr_sectors: u64) -> Result<(), Errno> {
    let range = BlkZoneRange { sector, nr_sectors };
    // SAFETY: BLKRESETZONE copies one `struct blk_zone_range` (two u64s, the
    // layout `BlkZoneRange` repeats with repr(C)) from its argument, which
    // points at `range`, live on this stack frame; `f` keeps the fd open.
    unsafe { blkresetzone(f.as_raw_fd(), &range) }.map(drop)
}
