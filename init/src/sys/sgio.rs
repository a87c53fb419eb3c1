//! SG_IO: one SCSI command through the block layer's generic ioctl. Used for
//! ATA IDENTIFY DEVICE wrapped in ATA PASS-THROUGH(16), which libata's
//! SCSI-ATA translation answers for SATA disks whose serial sysfs lacks, and
//! for INQUIRY of a vital product data page (the unit serial number, page
//! 0x80) of a SCSI disk whose `device/vpd_pg80` the kernel did not fill.

use std::fs::File;
use std::os::fd::AsRawFd;

/// `struct sg_io_hdr` of <scsi/sg.h> (88 bytes on x86_64, padded after `info` at 80).
#[repr(C)]
#[derive(Debug)]
struct SgIoHdr {
    interface_id: libc::c_int,
    dxfer_direction: libc::c_int,
    cmd_len: libc::c_uchar,
    mx_sb_len: libc::c_uchar,
    iovec_count: libc::c_ushort,
    dxfer_len: libc::c_uint,
    dxferp: *mut libc::c_void,
    cmdp: *const libc::c_uchar,
    sbp: *mut libc::c_uchar,
    timeout: libc::c_uint,
    flags: libc::c_uint,
    pack_id: libc::c_int,
    usr_ptr: *mut libc::c_void,
    status: libc::c_uchar,
    masked_status: libc::c_uchar,
    msg_status: libc::c_uchar,
    sb_len_wr: libc::c_uchar,
    host_status: libc::c_ushort,
    driver_status: libc::c_ushort,
    resid: libc::c_int,
    duration: libc::c_uint,
    info: libc::c_uint,
}

/// SG_IO = 0x2285 (the request number carries no size or direction bits;
/// `Ioctl` is c_ulong on glibc, c_int on musl).
const SG_IO: libc::Ioctl = 0x2285;
/// Data moves from the device to us.
const SG_DXFER_FROM_DEV: libc::c_int = -3;

/// The ATA PASS-THROUGH(16) command block for IDENTIFY DEVICE (0xEC):
/// protocol 4 (PIO data-in), T_DIR from the device, BYTE_BLOCK set and
/// T_LENGTH 2 (the transfer length is in the sector count: 1 block of 512).
pub const IDENTIFY_CDB: [u8; 16] = [
    0x85,   // ATA PASS-THROUGH(16)
    4 << 1, // protocol: PIO data-in; not extended
    0x0e,   // off_line 0, ck_cond 0, t_type 0, t_dir 1, byte_block 1, t_length 2
    0,
    0, // features
    0,
    1, // sector count: 1
    0,
    0,
    0,
    0,
    0,
    0,    // LBA
    0,    // device
    0xec, // command: IDENTIFY DEVICE
    0,    // control
];

/// The INQUIRY command block (SPC-4 6.6) for vital product data page
/// `page` (EVPD set), allocation length `len`.
pub fn inquiry_vpd_cdb(page: u8, len: u16) -> [u8; 6] {
    let [hi, lo] = len.to_be_bytes();
    [0x12, 0x01, page, hi, lo, 0]
}

/// Send ATA IDENTIFY DEVICE to the disk open as `f` (read-only suffices for
/// root, who holds CAP_SYS_RAWIO); the 512-byte reply, or the errno (EIO
/// when the device answered with an error status).
pub fn ata_identify(f: &File) -> Result<[u8; 512], i32> {
    let mut data = [0u8; 512];
    let n = read_command(f, &IDENTIFY_CDB, &mut data)?;
    if n != data.len() {
        return Err(libc::EIO);
    }
    Ok(data)
}

/// INQUIRY of vital product data page `page` from the SCSI device open as
/// `f`: the page as the device returned it (its 4-byte header and at most
/// 251 bytes more; a page is often shorter than asked for), or the errno
/// (EIO when the device answered with an error status, such as a page it
/// does not have).
pub fn inquiry_vpd(f: &File, page: u8) -> Result<Vec<u8>, i32> {
    let mut data = [0u8; 255];
    let n = read_command(f, &inquiry_vpd_cdb(page, 255), &mut data)?;
    if n < 4 || data[1] != page {
        return Err(libc::EIO);
    }
    Ok(data[..n].to_vec())
}

/// Send the data-in command `cdb` (at most 16 bytes) to the device open as
/// `f`, its reply into `data`; how many bytes came, or the errno (EIO when
/// the device, the host or the driver reported an error).
fn read_command(f: &File, cdb: &[u8], data: &mut [u8]) -> Result<usize, i32> {
    let mut sense = [0u8; 32];
    let cmd_len = u8::try_from(cdb.len()).ok().filter(|&n| n <= 16).ok_or(libc::EINVAL)?;
    let dxfer_len = libc::c_uint::try_from(data.len()).map_err(|_| libc::EINVAL)?;
    let mut hdr = SgIoHdr {
        interface_id: libc::c_int::from(b'S'),
        dxfer_direction: SG_DXFER_FROM_DEV,
        cmd_len,
        mx_sb_len: 32,
        iovec_count: 0,
        dxfer_len,
        dxferp: data.as_mut_ptr().cast(),
        cmdp: cdb.as_ptr(),
        sbp: sense.as_mut_ptr(),
        timeout: 5000,
        flags: 0,
        pack_id: 0,
        usr_ptr: std::ptr::null_mut(),
        status: 0,
        masked_status: 0,
        msg_status: 0,
        sb_len_wr: 0,
        host_status: 0,
        driver_status: 0,
        resid: 0,
        duration: 0,
        info: 0,
    };
    // SAFETY: SG_IO reads `hdr` (a live, fully initialised sg_io_hdr of the
    // kernel's layout) and through it: `cmdp` -> `cdb`, cmd_len bytes (its
    // length, checked above); writes through `dxferp` -> `data`, at most
    // dxfer_len = data.len() bytes, and `sbp` -> `sense`, 32 bytes =
    // mx_sb_len; then writes the status fields of `hdr`. All four outlive
    // the call (borrowed or on this stack frame; SG_IO is synchronous), and
    // `f` keeps the fd open.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), SG_IO, &mut hdr as *mut SgIoHdr) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO));
    }
    if hdr.status != 0 || hdr.host_status != 0 || hdr.driver_status != 0 {
        return Err(libc::EIO);
    }
    // resid: what did not come (a short reply); never more than was asked.
    usize::try_from(hdr.resid)
        .ok()
        .and_then(|r| data.len().checked_sub(r))
        .ok_or(libc::EIO)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_has_the_kernel_layout() {
        assert_eq!(std::mem::size_of::<SgIoHdr>(), 88);
        assert_eq!(std::mem::offset_of!(SgIoHdr, dxferp), 16);
        assert_eq!(std::mem::offset_of!(SgIoHdr, timeout), 40);
        assert_eq!(std::mem::offset_of!(SgIoHdr, usr_ptr), 56);
        assert_eq!(std::mem::offset_of!(SgIoHdr, status), 64);
        assert_eq!(std::mem::offset_of!(SgIoHdr, info), 80);
    }

    #[test]
    fn identify_cdb_fields() {
        assert_eq!(IDENTIFY_CDB[0], 0x85);
        assert_eq!(IDENTIFY_CDB[1] >> 1 & 0xf, 4, "PIO data-in");
        assert_eq!(IDENTIFY_CDB[2] & 0x08, 0x08, "t_dir: from the device");
        assert_eq!(IDENTIFY_CDB[2] & 0x04, 0x04, "byte_block: blocks");
        assert_eq!(IDENTIFY_CDB[2] & 0x03, 2, "t_length in the sector count");
        assert_eq!(IDENTIFY_CDB[6], 1);
        assert_eq!(IDENTIFY_CDB[14], 0xec);
    }

    #[test]
    fn inquiry_vpd_cdb_fields() {
        assert_eq!(inquiry_vpd_cdb(0x80, 255), [0x12, 0x01, 0x80, 0x00, 0xff, 0x00]);
        assert_eq!(inquiry_vpd_cdb(0x83, 0x1234), [0x12, 0x01, 0x83, 0x12, 0x34, 0x00]);
    }

    #[test]
    fn a_loop_device_refuses_or_fails_cleanly() {
        // A regular file: SG_IO is not supported there (ENOTTY/EINVAL), and
        // the call must return an errno, never garbage.
        let p = std::env::temp_dir().join(format!("bootbench-sgio-{}", std::process::id()));
        std::fs::write(&p, [0u8; 4096]).unwrap();
        let f = File::open(&p).unwrap();
        assert!(ata_identify(&f).is_err());
        assert!(inquiry_vpd(&f, 0x80).is_err());
        std::fs::remove_file(&p).unwrap();
    }
}
