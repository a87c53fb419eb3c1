//! md (Linux software RAID) ioctls, from include/uapi/linux/raid/md_u.h: the
//! three calls `mdadm --build` makes (SET_ARRAY_INFO, ADD_NEW_DISK per
//! member, RUN_ARRAY) and STOP_ARRAY. The structs are the kernel's, field for
//! field: 32-bit `int`s only, so `#[repr(C)]` has no padding and the sizes
//! are checked at compile time.

use std::fs::File;
use std::os::fd::AsRawFd;

use nix::errno::Errno;

/// The md block major (MD_MAJOR in include/uapi/linux/major.h).
pub const MD_MAJOR: u32 = 9;

/// `mdu_array_info_t` (72 bytes): what SET_ARRAY_INFO copies in.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArrayInfo {
    /// Superblock format major version: 0, as `mdadm --build` leaves it
    /// (ignored when raid_disks != 0 and not_persistent = 1).
    pub major_version: i32,
    pub minor_version: i32,
    pub patch_version: i32,
    /// Creation time (seconds); the kernel sets its own.
    pub ctime: u32,
    /// Level: -1 linear, 0, 1, 4, 5, 6, 10.
    pub level: i32,
    /// Used size of each member in KiB; 0 = let the kernel/personality
    /// decide from the members.
    pub size: i32,
    pub nr_disks: i32,
    pub raid_disks: i32,
    /// Minor of the md device (the kernel takes the one that was opened).
    pub md_minor: i32,
    /// 1: no superblock is read or written.
    pub not_persistent: i32,
    /// Update time (seconds).
    pub utime: u32,
    /// State bits; bit 0 (MD_SB_CLEAN) set = clean, no resync.
    pub state: i32,
    pub active_disks: i32,
    pub working_disks: i32,
    pub failed_disks: i32,
    pub spare_disks: i32,
    /// Personality layout (raid5/6 algorithm, raid10 copies, raid0 zones).
    pub layout: i32,
    /// Chunk size in bytes.
    pub chunk_size: i32,
}

/// `mdu_disk_info_t` (20 bytes): what ADD_NEW_DISK copies in.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskInfo {
    /// Descriptor number in the array.
    pub number: i32,
    /// Block major of the member.
    pub major: i32,
    /// Block minor of the member.
    pub minor: i32,
    /// Role (slot) in the array.
    pub raid_disk: i32,
    /// State bits: MD_DISK_ACTIVE, MD_DISK_SYNC.
    pub state: i32,
}

/// `mdu_param_t` (12 bytes): RUN_ARRAY's argument.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Param {
    /// The level (the kernel ignores it and uses the array's).
    pub personality: i32,
    /// Chunk size in bytes.
    pub chunk_size: i32,
    /// Unused.
    pub max_fault: i32,
}

const _: () = assert!(std::mem::size_of::<ArrayInfo>() == 72);
const _: () = assert!(std::mem::size_of::<DiskInfo>() == 20);
const _: () = assert!(std::mem::size_of::<Param>() == 12);

/// MD_SB_CLEAN: array state bit 0.
pub const MD_SB_CLEAN: i32 = 0;
/// MD_DISK_ACTIVE: disk state bit 1.
pub const MD_DISK_ACTIVE: i32 = 1;
/// MD_DISK_SYNC: disk state bit 2.
pub const MD_DISK_SYNC: i32 = 2;

// SET_ARRAY_INFO = _IOW(MD_MAJOR, 0x23, mdu_array_info_t)
nix::ioctl_write_ptr!(set_array_info_raw, MD_MAJOR, 0x23, ArrayInfo);
// ADD_NEW_DISK = _IOW(MD_MAJOR, 0x21, mdu_disk_info_t)
nix::ioctl_write_ptr!(add_new_disk_raw, MD_MAJOR, 0x21, DiskInfo);
// RUN_ARRAY = _IOW(MD_MAJOR, 0x30, mdu_param_t)
nix::ioctl_write_ptr!(run_array_raw, MD_MAJOR, 0x30, Param);
// STOP_ARRAY = _IO(MD_MAJOR, 0x32)
nix::ioctl_none!(stop_array_raw, MD_MAJOR, 0x32);

/// The request numbers, for the encoding test.
#[cfg(test)]
pub fn request_codes() -> [nix::sys::ioctl::ioctl_num_type; 4] {
    [
        nix::request_code_write!(MD_MAJOR, 0x23, std::mem::size_of::<ArrayInfo>()),
        nix::request_code_write!(MD_MAJOR, 0x21, std::mem::size_of::<DiskInfo>()),
        nix::request_code_write!(MD_MAJOR, 0x30, std::mem::size_of::<Param>()),
        nix::request_code_none!(MD_MAJOR, 0x32),
    ]
}

// All four calls share one invariant set, stated once here and referred to
// below: (1) `md` is a `&File`, borrowed for the whole call, so the
// descriptor stays open; (2) the pointer argument points at a live,
// initialised `#[repr(C)]` value on the caller's stack whose size equals the
// size encoded in the request number (checked by the const assertions above),
// and the kernel only reads it (copy_from_user of exactly that size) — no
// memory of this process is written.

/// SET_ARRAY_INFO on an open md device.
pub fn set_array_info(md: &File, info: &ArrayInfo) -> Result<(), Errno> {
    // SAFETY: invariants (1) and (2) above; `info` is a live 72-byte ArrayInfo.
    unsafe { set_array_info_raw(md.as_raw_fd(), info) }.map(drop)
}

/// ADD_NEW_DISK on an open md device.
pub fn add_new_disk(md: &File, disk: &DiskInfo) -> Result<(), Errno> {
    // SAFETY: invariants (1) and (2) above; `disk` is a live 20-byte DiskInfo.
    unsafe { add_new_disk_raw(md.as_raw_fd(), disk) }.map(drop)
}

/// RUN_ARRAY on an open md device.
pub fn run_array(md: &File, param: &Param) -> Result<(), Errno> {
    // SAFETY: invariants (1) and (2) above; `param` is a live 12-byte Param.
    unsafe { run_array_raw(md.as_raw_fd(), param) }.map(drop)
}

/// STOP_ARRAY on an open md device (EBUSY while another opener holds it).
pub fn stop_array(md: &File) -> Result<(), Errno> {
    // SAFETY: invariant (1) above; STOP_ARRAY takes no argument and touches
    // no memory of this process.
    unsafe { stop_array_raw(md.as_raw_fd()) }.map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_numbers_are_the_kernels() {
        // Values of the C macros on x86_64 (_IOC_WRITE = 1 << 30, size << 16).
        assert_eq!(request_codes(), [0x4048_0923, 0x4014_0921, 0x400c_0930, 0x0000_0932]);
    }

    #[test]
    fn field_offsets_match_md_u_h() {
        // state is the 12th int, layout the 17th, chunk_size the 18th.
        assert_eq!(std::mem::offset_of!(ArrayInfo, not_persistent), 36);
        assert_eq!(std::mem::offset_of!(ArrayInfo, state), 44);
        assert_eq!(std::mem::offset_of!(ArrayInfo, layout), 64);
        assert_eq!(std::mem::offset_of!(ArrayInfo, chunk_size), 68);
        assert_eq!(std::mem::offset_of!(DiskInfo, raid_disk), 12);
        assert_eq!(std::mem::offset_of!(DiskInfo, state), 16);
    }
}
