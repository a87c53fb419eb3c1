//! SG_IO: one SCSI command through the block layer's generic ioctl. The
//! commands themselves (ATA PASS-THROUGH for IDENTIFY and SMART, INQUIRY,
//! LOG SENSE) are built in `disks/scsi.rs`.

use std::fs::File;
use std::os::fd::AsRawFd;

use nix::errno::Errno;

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
/// No data moves.
const SG_DXFER_NONE: libc::c_int = -1;
/// Data moves from us to the device.
const SG_DXFER_TO_DEV: libc::c_int = -2;

/// Bytes of sense data asked for.
pub const SENSE: usize = 32;

/// How a command ended: the sg_io_hdr's status fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    /// SCSI status (0 good, 2 CHECK CONDITION).
    pub status: u8,
    /// The host adapter's status.
    pub host_status: u16,
    /// The driver's status (08h: sense data returned).
    pub driver_status: u16,
    /// Bytes asked for but not transferred.
    pub resid: i32,
    /// Sense bytes written.
    pub sense_len: u8,
}

impl Answer {
    /// Done and good, every byte transferred.
    pub fn good(&self) -> bool {
        self.status == 0 && self.host_status == 0 && self.driver_status == 0 && self.resid == 0
    }
}

/// Send one SCSI command `cdb` that reads (into `data`, when given) or
/// moves no data, to the device open as `f`; the sense data lands in
/// `sense`. `Err` is the errno of the ioctl itself (ENOTTY: not a SCSI
/// device); a device's error is in the [`Answer`].
pub fn command(f: &File, cdb: &[u8], data: Option<&mut [u8]>, sense: &mut [u8; SENSE]) -> Result<Answer, Errno> {
    let (dxferp, dxfer_len, dir) = match data {
        Some(d) => (
            d.as_mut_ptr().cast::<libc::c_void>(),
            libc::c_uint::try_from(d.len()).map_err(|_| Errno::EINVAL)?,
            SG_DXFER_FROM_DEV,
        ),
        None => (std::ptr::null_mut(), 0, SG_DXFER_NONE),
    };
    send(f, cdb, dxferp, dxfer_len, dir, sense, 5000)
}

/// Send one SCSI command `cdb` that carries `data` to the device (ATA
/// SECURITY SET PASSWORD, ERASE UNIT, DISABLE PASSWORD: sent only by
/// `run::purge` on a disk claimed for writing), waiting at most
/// `timeout_ms`.
pub fn command_out(
    f: &File,
    cdb: &[u8],
    data: &[u8],
    sense: &mut [u8; SENSE],
    timeout_ms: u32,
) -> Result<Answer, Errno> {
    let len = libc::c_uint::try_from(data.len()).map_err(|_| Errno::EINVAL)?;
    // SG_IO only reads from a buffer sent to the device.
    send(
        f,
        cdb,
        data.as_ptr().cast_mut().cast::<libc::c_void>(),
        len,
        SG_DXFER_TO_DEV,
        sense,
        timeout_ms,
    )
}

/// SG_IO with the transfer and timeout given.
fn send(
    f: &File,
    cdb: &[u8],
    dxferp: *mut libc::c_void,
    dxfer_len: libc::c_uint,
    dir: libc::c_int,
    sense: &mut [u8; SENSE],
    timeout: u32,
) -> Result<Answer, Errno> {
    let mut hdr = SgIoHdr {
        interface_id: libc::c_int::from(b'S'),
        dxfer_direction: dir,
        cmd_len: u8::try_from(cdb.len()).map_err(|_| Errno::EINVAL)?,
        mx_sb_len: u8::try_from(sense.len()).unwrap_or(u8::MAX),
        iovec_count: 0,
        dxfer_len,
        dxferp,
        cmdp: cdb.as_ptr(),
        sbp: sense.as_mut_ptr(),
        timeout,
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
    // kernel's layout) and through it: `cmdp` -> `cdb`, cmd_len bytes =
    // cdb.len(); writes through `dxferp` -> the caller's data, dxfer_len
    // bytes = its length, for SG_DXFER_FROM_DEV, or reads that many from it
    // for SG_DXFER_TO_DEV (or nothing: null with length 0 and
    // SG_DXFER_NONE), and `sbp` -> `sense`, SENSE bytes = mx_sb_len; then
    // writes the status fields of `hdr`. All of them are borrowed for the
    // whole call (SG_IO is synchronous), and `f` keeps the fd open. A
    // buffer sent to the device (command_out's, borrowed immutably) is
    // only read.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), SG_IO, &mut hdr as *mut SgIoHdr) };
    Errno::result(rc)?;
    Ok(Answer {
        status: hdr.status,
        host_status: hdr.host_status,
        driver_status: hdr.driver_status,
        resid: hdr.resid,
        sense_len: hdr.sb_len_wr,
    })
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
    fn a_loop_device_refuses_or_fails_cleanly() {
        // A regular file: SG_IO is not supported there (ENOTTY/EINVAL), and
        // the call must return an errno, never garbage.
        let p = std::env::temp_dir().join(format!("bootbench-sgio-{}", std::process::id()));
        std::fs::write(&p, [0u8; 4096]).unwrap();
        let f = File::open(&p).unwrap();
        let mut sense = [0u8; SENSE];
        // SMART RETURN STATUS (ATA PASS-THROUGH(16), non-data), as disks/scsi.rs builds it.
        let cdb = [0x85, 3 << 1, 0x20, 0, 0xda, 0, 0, 0, 0, 0, 0x4f, 0, 0xc2, 0, 0xb0, 0];
        assert!(command(&f, &cdb, None, &mut sense).is_err());
        let mut data = [0u8; 512];
        assert!(command(&f, &[0x12, 0x01, 0x80, 0, 0xff, 0], Some(&mut data), &mut sense).is_err());
        let cdb = [0x85, 5 << 1, 0x26, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x40, 0xf1, 0];
        assert!(command_out(&f, &cdb, &[0u8; 512], &mut sense, 1000).is_err());
        assert_eq!(std::fs::read(&p).unwrap(), [0u8; 4096]);
        std::fs::remove_file(&p).unwrap();
    }
}
