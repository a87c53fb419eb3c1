//! USB through usbfs (linux/usbdevice_fs.h): a hub's port status, the request
//! `lsusb -v` makes for its "Hub Port Status" lines.

use std::os::fd::AsRawFd;
use std::path::Path;

use nix::errno::Errno;

/// struct usbdevfs_ctrltransfer: one control transfer on endpoint 0.
#[repr(C)]
struct CtrlTransfer {
    request_type: u8,
    request: u8,
    value: u16,
    index: u16,
    length: u16,
    /// Milliseconds.
    timeout: u32,
    data: *mut libc::c_void,
}

// USBDEVFS_CONTROL = _IOWR('U', 0, struct usbdevfs_ctrltransfer).
nix::ioctl_readwrite!(usbdevfs_control, b'U', 0, CtrlTransfer);

/// bmRequestType of a hub class request to a port: device to host, class, recipient "other".
const GET_PORT_STATUS_TYPE: u8 = 0xa3;
/// bRequest GET_STATUS.
const GET_STATUS: u8 = 0;

/// wPortStatus bit 0: a device is connected to the port (USB 2.0 11.24.2.7.1,
/// USB 3.2 10.16.2.6.1: the same bit for SuperSpeed hubs).
pub const PORT_CONNECTION: u16 = 0x0001;

/// wPortStatus and wPortChange of port `port` (1-based) of the hub whose
/// usbfs node is `node` (`/dev/bus/usb/BBB/DDD`): GET_STATUS to the port.
/// A read of the hub's state; the hub driver's own requests go on around it.
pub fn hub_port_status(node: &Path, port: u8) -> Result<(u16, u16), Errno> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(node)
        .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO)))?;
    let mut data = [0u8; 4];
    let mut t = CtrlTransfer {
        request_type: GET_PORT_STATUS_TYPE,
        request: GET_STATUS,
        value: 0,
        index: u16::from(port),
        length: 4,
        timeout: 1000,
        data: data.as_mut_ptr().cast(),
    };
    // SAFETY: USBDEVFS_CONTROL reads `t` and writes at most `t.length` (4)
    // bytes through `t.data`, which points at `data`, a live 4-byte array on
    // this stack frame; `f` keeps the fd open for the call.
    let n = unsafe { usbdevfs_control(f.as_raw_fd(), &mut t) }?;
    if n != 4 {
        return Err(Errno::EIO);
    }
    Ok((
        u16::from_le_bytes([data[0], data[1]]),
        u16::from_le_bytes([data[2], data[3]]),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_the_kernels_layout() {
        // struct usbdevfs_ctrltransfer on x86_64: 12 bytes of fields, the pointer at 16.
        assert_eq!(std::mem::size_of::<CtrlTransfer>(), 24);
        assert_eq!(std::mem::offset_of!(CtrlTransfer, data), 16);
        // _IOWR('U', 0, 24 bytes), USBDEVFS_CONTROL (hex: the type is signed on musl).
        assert_eq!(format!("{:x}", nix::request_code_readwrite!(b'U', 0, 24)), "c0185500");
    }

    #[test]
    fn a_missing_node_is_an_error_not_a_status() {
        assert_eq!(
            hub_port_status(Path::new("/nonexistent/bus/usb/001/001"), 1),
            Err(Errno::ENOENT)
        );
    }
}
