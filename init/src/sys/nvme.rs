//! NVMe admin commands through the kernel's passthrough ioctl
//! (NVME_IOCTL_ADMIN_CMD, <linux/nvme_ioctl.h>): Get Log Page and Identify
//! (of the controller, a namespace, the active namespace list), all of
//! which only read (Get Log Page 07h with "create telemetry host-initiated
//! data" makes the controller capture its own state into that log: no
//! user data changes), and Device Self-test, which moves no data (a
//! self-test writes no user data). The admin queue is not the I/O queues: a
//! command here does not wait behind, or drain, the benchmark's I/O.
//!
//! Format NVM and Sanitize erase: they are sent only by `run::purge`, on a
//! disk claimed for writing ([`crate::run::engine::DevTarget::erase_with`]).

use std::fs::File;
use std::os::fd::AsRawFd;

use nix::errno::Errno;

/// `struct nvme_passthru_cmd` (= `nvme_admin_cmd`), 72 bytes.
#[repr(C)]
#[derive(Debug, Default)]
struct PassthruCmd {
    opcode: u8,
    flags: u8,
    rsvd1: u16,
    nsid: u32,
    cdw2: u32,
    cdw3: u32,
    metadata: u64,
    addr: u64,
    metadata_len: u32,
    data_len: u32,
    cdw10: u32,
    cdw11: u32,
    cdw12: u32,
    cdw13: u32,
    cdw14: u32,
    cdw15: u32,
    timeout_ms: u32,
    result: u32,
}

/// NVME_IOCTL_ADMIN_CMD = _IOWR('N', 0x41, struct nvme_admin_cmd).
fn admin_request() -> libc::Ioctl {
    let code = nix::request_code_readwrite!(b'N', 0x41, std::mem::size_of::<PassthruCmd>());
    // The request number is a 32-bit pattern (_IOC); libc::Ioctl is
    // c_ulong on glibc and c_int on musl, so the bits are reinterpreted.
    #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
    let r = code as libc::Ioctl;
    r
}

/// Admin opcode Get Log Page.
const GET_LOG_PAGE: u8 = 0x02;
/// Admin opcode Identify.
const IDENTIFY: u8 = 0x06;
/// Admin opcode Device Self-test.
const DEVICE_SELF_TEST: u8 = 0x14;
/// The Device Self-test log page.
pub const LOG_SELF_TEST: u8 = 0x06;
/// The OCP SMART / Health Information Extended log page (OCP Datacenter
/// NVMe SSD specification; a vendor-specific id other drives may use for
/// something else, told apart by its GUID).
pub const LOG_OCP_SMART: u8 = 0xc0;
/// The log page of SMART / health information.
pub const LOG_SMART: u8 = 0x02;
/// The host-initiated telemetry log page.
pub const LOG_TELEMETRY_HOST: u8 = bench_core::device::telemetry::LID_HOST;
/// Its log specific field bit 0: create telemetry host-initiated data.
pub const LSP_TELEMETRY_CREATE: u8 = 0x01;
/// The namespace id meaning "the controller as a whole".
pub const NSID_ALL: u32 = 0xffff_ffff;
/// The namespace id meaning "no namespace" (a controller's own log).
pub const NSID_NONE: u32 = 0;

/// Why an admin command did not give its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminError {
    /// The ioctl failed: this errno (ENOTTY: not an NVMe device).
    Os(Errno),
    /// The controller answered with this NVMe status (status code type
    /// and code, as the ioctl returns them).
    Status(i32),
}

impl std::fmt::Display for AdminError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AdminError::Os(e) => write!(f, "{}", std::io::Error::from(*e)),
            AdminError::Status(s) => write!(f, "NVMe status {s:#x}"),
        }
    }
}

/// Run one admin command that reads into `buf` (or, empty, moves no data).
fn admin_read(f: &File, cmd: PassthruCmd, buf: &mut [u8]) -> Result<(), AdminError> {
    admin(f, cmd, buf, 5000)
}

/// Run one admin command that reads into `buf` (or, empty, moves no
/// data), waiting at most `timeout_ms` for it.
fn admin(f: &File, mut cmd: PassthruCmd, buf: &mut [u8], timeout_ms: u32) -> Result<(), AdminError> {
    cmd.addr = if buf.is_empty() { 0 } else { buf.as_mut_ptr() as u64 };
    cmd.data_len = u32::try_from(buf.len()).map_err(|_| AdminError::Os(Errno::EINVAL))?;
    cmd.timeout_ms = timeout_ms;
    // SAFETY: NVME_IOCTL_ADMIN_CMD reads `cmd` (a live, initialised
    // nvme_passthru_cmd of the uapi layout: 72 bytes, checked in the tests)
    // and makes the controller write at most `data_len` bytes to `addr`,
    // which are `buf`'s address and length: `buf` is borrowed mutably for
    // the whole call (the ioctl is synchronous). `metadata` is 0 with
    // `metadata_len` 0, so nothing else is written but `cmd.result`. The
    // opcodes sent (Get Log Page, Identify) transfer data from the
    // controller only; Device Self-test, Format NVM and Sanitize go with
    // `data_len` 0 and `addr` 0 and transfer none.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), admin_request(), &mut cmd as *mut PassthruCmd) };
    match rc {
        0 => Ok(()),
        r if r < 0 => Err(AdminError::Os(Errno::last())),
        s => Err(AdminError::Status(s)),
    }
}

/// Get Log Page `lid` for `nsid`, `buf.len()` bytes (a multiple of 4).
pub fn get_log_page(f: &File, lid: u8, nsid: u32, buf: &mut [u8]) -> Result<(), AdminError> {
    get_log_page_at(f, lid, nsid, 0, 0, buf)
}

/// Get Log Page `lid` for `nsid`, `buf.len()` bytes from byte `offset` of
/// the log (a multiple of 4), with log specific field `lsp` (for the
/// telemetry logs, bit 0 is "create telemetry host-initiated data": the
/// controller captures its internal state into log 07h; no user data
/// changes).
pub fn get_log_page_at(f: &File, lid: u8, nsid: u32, lsp: u8, offset: u64, buf: &mut [u8]) -> Result<(), AdminError> {
    let cmd = log_page_cmd(lid, nsid, lsp, offset, buf.len()).ok_or(AdminError::Os(Errno::EINVAL))?;
    admin_read(f, cmd, buf)
}

/// The Get Log Page command (NVMe base specification 2.0, 5.16) for `len`
/// bytes of log `lid` from byte `offset`: LSP `lsp` (CDW10 bits 14:8, 7
/// bits), RAE 0, LPOL/LPOU the offset (CDW12/13), UUID index 0. `None`
/// for a length that is not a whole number of dwords from 1 to 2^32, an
/// offset that is not a multiple of 4, or an LSP over 7 bits.
fn log_page_cmd(lid: u8, nsid: u32, lsp: u8, offset: u64, len: usize) -> Option<PassthruCmd> {
    if len % 4 != 0 || offset % 4 != 0 || lsp > 0x7f {
        return None;
    }
    let dwords = u32::try_from(len / 4).ok()?;
    let numd = dwords.checked_sub(1)?;
    // The offset's halves: the truncations are the split.
    #[allow(clippy::cast_possible_truncation)]
    let (lpol, lpou) = (offset as u32, (offset >> 32) as u32);
    Some(PassthruCmd {
        opcode: GET_LOG_PAGE,
        nsid,
        // NUMDL (bits 31:16, the low 16 bits of dwords - 1), LSP (14:8)
        // and the log id (7:0).
        cdw10: ((numd & 0xffff) << 16) | (u32::from(lsp) << 8) | u32::from(lid),
        // NUMDU: the high 16 bits.
        cdw11: numd >> 16,
        cdw12: lpol,
        cdw13: lpou,
        ..PassthruCmd::default()
    })
}

/// Identify (opcode 06h) data structure `cns` for `nsid`: 4096 bytes.
/// CNS 00h: a namespace; 01h: the controller; 02h: the active namespace
/// ids above `nsid`.
pub fn identify(f: &File, cns: u8, nsid: u32) -> Result<Box<[u8; 4096]>, AdminError> {
    let mut buf = Box::new([0u8; 4096]);
    let cmd = PassthruCmd {
        opcode: IDENTIFY,
        nsid,
        cdw10: u32::from(cns),
        ..PassthruCmd::default()
    };
    admin_read(f, cmd, &mut buf[..])?;
    Ok(buf)
}

/// Device Self-test (NVMe 1.4 5.8) of the controller and every namespace
/// (NSID FFFFFFFFh) with self-test code `stc` (CDW10 bits 3:0: 1h short,
/// 2h extended, Fh abort). No data moves.
pub fn device_self_test(f: &File, stc: u8) -> Result<(), AdminError> {
    let cmd = PassthruCmd {
        opcode: DEVICE_SELF_TEST,
        nsid: NSID_ALL,
        cdw10: u32::from(stc & 0x0f),
        ..PassthruCmd::default()
    };
    admin_read(f, cmd, &mut [])
}

/// Admin opcode Format NVM.
const FORMAT_NVM: u8 = 0x80;
/// Admin opcode Sanitize.
const SANITIZE: u8 = 0x84;
/// The Sanitize Status log page.
pub const LOG_SANITIZE_STATUS: u8 = 0x81;

/// Format NVM (NVMe Base 2.0, 5.23) of namespace `nsid` with `cdw10`
/// ([`bench_core::device::erase::nvme_format_cdw10`]): it returns when the
/// controller has done it, or after `timeout_ms`. ERASES the namespace.
pub fn format_nvm(f: &File, nsid: u32, cdw10: u32, timeout_ms: u32) -> Result<(), AdminError> {
    let cmd = PassthruCmd {
        opcode: FORMAT_NVM,
        nsid,
        cdw10,
        ..PassthruCmd::default()
    };
    admin(f, cmd, &mut [], timeout_ms)
}

/// Sanitize (NVMe Base 2.0, 5.24) with action `sanact`: it returns once
/// the controller has started it; the Sanitize Status log page follows
/// it. ERASES every namespace of the NVM subsystem.
pub fn sanitize(f: &File, sanact: u32) -> Result<(), AdminError> {
    let cmd = PassthruCmd {
        opcode: SANITIZE,
        cdw10: sanact & 0x7,
        ..PassthruCmd::default()
    };
    admin(f, cmd, &mut [], 5000)
}

/// NVME_IOCTL_ID = _IO('N', 0x40): the namespace id of a namespace's
/// block device.
pub fn namespace_id(f: &File) -> Result<u32, Errno> {
    #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
    let req = nix::request_code_none!(b'N', 0x40) as libc::Ioctl;
    // SAFETY: NVME_IOCTL_ID takes no argument and only returns the id.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), req) };
    u32::try_from(rc).map_err(|_| Errno::last())
}

/// Identify CNS: a namespace.
pub const CNS_NAMESPACE: u8 = 0x00;
/// Identify CNS: the controller.
pub const CNS_CONTROLLER: u8 = 0x01;
/// Identify CNS: the active namespace id list.
pub const CNS_ACTIVE_NS_LIST: u8 = 0x02;

/// Identify Controller (CNS 01h): 4096 bytes.
pub fn identify_controller(f: &File) -> Result<Box<[u8; 4096]>, AdminError> {
    identify(f, CNS_CONTROLLER, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_uapi_layout_and_request_number() {
        assert_eq!(std::mem::size_of::<PassthruCmd>(), 72);
        assert_eq!(std::mem::offset_of!(PassthruCmd, addr), 24);
        assert_eq!(std::mem::offset_of!(PassthruCmd, data_len), 36);
        assert_eq!(std::mem::offset_of!(PassthruCmd, cdw10), 40);
        assert_eq!(std::mem::offset_of!(PassthruCmd, result), 68);
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let r = admin_request() as u32;
        assert_eq!(r, 0xC048_4E41);
    }

    /// Get Log Page C0h (the OCP health log), 512 bytes, for the whole
    /// controller: opcode 02h, NSID FFFFFFFFh, CDW10 = NUMDL 127 (the
    /// dword count less one, bits 31:16), LSP 0, RAE 0, LID C0h; CDW11
    /// NUMDU 0; no offset (CDW12/13) nor UUID (CDW14): nothing but data
    /// from the controller.
    #[test]
    fn the_ocp_log_page_command() {
        let c = log_page_cmd(LOG_OCP_SMART, NSID_ALL, 0, 0, 512).unwrap();
        assert_eq!((c.opcode, c.nsid), (0x02, 0xffff_ffff));
        assert_eq!((c.cdw10, c.cdw11), (0x007f_00c0, 0));
        assert_eq!((c.cdw12, c.cdw13, c.cdw14, c.cdw15), (0, 0, 0, 0));
        assert_eq!((c.flags, c.cdw2, c.cdw3, c.metadata), (0, 0, 0, 0));
        // The SMART log as before; a length over 2^18 dwords uses NUMDU.
        assert_eq!(log_page_cmd(LOG_SMART, NSID_ALL, 0, 0, 512).unwrap().cdw10, 0x007f_0002);
        let big = log_page_cmd(0x07, NSID_ALL, 0, 0, 1 << 20).unwrap();
        assert_eq!((big.cdw10, big.cdw11), (0xffff_0007, 0x0003));
        assert!(log_page_cmd(LOG_OCP_SMART, NSID_ALL, 0, 0, 0).is_none());
        assert!(log_page_cmd(LOG_OCP_SMART, NSID_ALL, 0, 0, 510).is_none());
    }

    /// The telemetry log's commands: the header with LSP bit 0 (CDW10 bit
    /// 8), 512 bytes (NUMDL 127); a later 256 KiB chunk at byte 5 GiB + 512
    /// without it, the offset split into LPOL (CDW12) and LPOU (CDW13).
    #[test]
    fn the_telemetry_log_page_commands() {
        let h = log_page_cmd(LOG_TELEMETRY_HOST, NSID_ALL, LSP_TELEMETRY_CREATE, 0, 512).unwrap();
        assert_eq!((h.opcode, h.nsid), (0x02, 0xffff_ffff));
        assert_eq!((h.cdw10, h.cdw11, h.cdw12, h.cdw13), (0x007f_0107, 0, 0, 0));
        let c = log_page_cmd(LOG_TELEMETRY_HOST, NSID_ALL, 0, (5 << 30) + 512, 256 << 10).unwrap();
        assert_eq!((c.cdw10, c.cdw11), (0xffff_0007, 0));
        assert_eq!((c.cdw12, c.cdw13), (0x4000_0200, 1));
        assert_eq!((c.cdw14, c.cdw15, c.flags, c.metadata), (0, 0, 0, 0));
        // An offset or LSP the command cannot carry.
        assert!(log_page_cmd(LOG_TELEMETRY_HOST, NSID_ALL, 0, 514, 512).is_none());
        assert!(log_page_cmd(LOG_TELEMETRY_HOST, NSID_ALL, 0x80, 0, 512).is_none());
    }

    #[test]
    fn a_regular_file_fails_cleanly() {
        let p = std::env::temp_dir().join(format!("bootbench-nvme-{}", std::process::id()));
        std::fs::write(&p, [0u8; 4096]).unwrap();
        let f = File::open(&p).unwrap();
        let mut b = [0u8; 512];
        assert!(matches!(
            get_log_page(&f, LOG_SMART, NSID_ALL, &mut b),
            Err(AdminError::Os(_))
        ));
        assert!(get_log_page(&f, LOG_SMART, NSID_ALL, &mut []).is_err());
        assert!(matches!(device_self_test(&f, 1), Err(AdminError::Os(_))));
        assert!(matches!(format_nvm(&f, 1, 0, 1000), Err(AdminError::Os(_))));
        assert!(matches!(sanitize(&f, 2), Err(AdminError::Os(_))));
        assert!(namespace_id(&f).is_err());
        assert_eq!(std::fs::read(&p).unwrap(), [0u8; 4096], "a file is not erased");
        std::fs::remove_file(&p).unwrap();
    }
}
