//! Network interface set-up with netdevice(7) ioctls on an AF_INET socket:
//! the flags, the IPv4 address and netmask, the default route.

use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, OwnedFd};

use nix::errno::Errno;
use nix::sys::socket::{self, AddressFamily, SockFlag, SockType};

/// An AF_INET datagram socket: netdevice(7)'s ioctls take any socket.
fn ioctl_socket() -> Result<OwnedFd, Errno> {
    socket::socket(AddressFamily::Inet, SockType::Datagram, SockFlag::SOCK_CLOEXEC, None)
}

/// An `ifreq` naming `ifname` (IFNAMSIZ - 1 bytes at most, the rest zero).
fn ifreq(ifname: &str) -> Result<libc::ifreq, Errno> {
    let name = ifname.as_bytes();
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains(&0) {
        return Err(Errno::EINVAL);
    }
    // SAFETY: ifreq is a plain C struct (a name array and a union of plain
    // integers and sockaddrs) for which all-zero bytes is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, &src) in req.ifr_name.iter_mut().zip(name) {
        *dst = libc::c_char::from_ne_bytes([src]);
    }
    Ok(req)
}

/// `a` as the `sockaddr` of an `ifreq` (a `sockaddr_in` with port 0).
fn sockaddr(a: Ipv4Addr) -> libc::sockaddr {
    let sin = libc::sockaddr_in {
        // AF_INET is 2: it fits.
        sin_family: libc::sa_family_t::try_from(libc::AF_INET).unwrap_or(2),
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from(a).to_be(),
        },
        sin_zero: [0; 8],
    };
    const _: () = assert!(std::mem::size_of::<libc::sockaddr_in>() == std::mem::size_of::<libc::sockaddr>());
    // SAFETY: sockaddr_in and sockaddr are both 16 bytes on Linux (the
    // assertion above) and plain integers throughout; the kernel reads an
    // AF_INET sockaddr as a sockaddr_in, which is what these bytes are.
    unsafe { std::mem::transmute::<libc::sockaddr_in, libc::sockaddr>(sin) }
}

/// One netdevice ioctl with `req` on a fresh socket.
fn ifioctl(request: libc::c_ulong, req: &mut libc::ifreq) -> Result<(), Errno> {
    let request = libc::Ioctl::try_from(request).map_err(|_| Errno::EINVAL)?;
    let sock = ioctl_socket()?;
    // SAFETY: every request passed here (SIOC[GS]IFFLAGS, SIOCSIFADDR,
    // SIOCSIFNETMASK) reads and at most writes one `struct ifreq` through
    // its argument, which points at `req`, a live ifreq; `sock` is open.
    let r = unsafe { libc::ioctl(sock.as_raw_fd(), request, req as *mut libc::ifreq) };
    Errno::result(r).map(drop)
}

/// Set IFF_UP on `ifname` (SIOCGIFFLAGS, then SIOCSIFFLAGS).
pub fn set_up(ifname: &str) -> Result<(), Errno> {
    let mut req = ifreq(ifname)?;
    ifioctl(libc::SIOCGIFFLAGS, &mut req)?;
    // SAFETY: SIOCGIFFLAGS filled the union's flags member, the one read here.
    let flags = unsafe { req.ifr_ifru.ifru_flags };
    // IFF_UP is 1: it fits the short the ioctl takes.
    req.ifr_ifru.ifru_flags = flags | libc::c_short::try_from(libc::IFF_UP).unwrap_or(1);
    ifioctl(libc::SIOCSIFFLAGS, &mut req)
}

/// Give `ifname` the address `addr` with a netmask of `prefix` bits
/// (SIOCSIFADDR, SIOCSIFNETMASK); the kernel adds the subnet's route.
pub fn set_addr(ifname: &str, addr: Ipv4Addr, prefix: u8) -> Result<(), Errno> {
    if prefix > 32 {
        return Err(Errno::EINVAL);
    }
    let mut req = ifreq(ifname)?;
    req.ifr_ifru.ifru_addr = sockaddr(addr);
    ifioctl(libc::SIOCSIFADDR, &mut req)?;
    let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
    let mut req = ifreq(ifname)?;
    req.ifr_ifru.ifru_netmask = sockaddr(Ipv4Addr::from(mask));
    ifioctl(libc::SIOCSIFNETMASK, &mut req)
}

/// The kernel's `struct rtentry` (include/uapi/linux/route.h), laid out as
/// on x86_64; libc defines it for some C libraries only.
#[repr(C)]
struct RtEntry {
    rt_pad1: libc::c_ulong,
    rt_dst: libc::sockaddr,
    rt_gateway: libc::sockaddr,
    rt_genmask: libc::sockaddr,
    rt_flags: libc::c_ushort,
    rt_pad2: libc::c_short,
    rt_pad3: libc::c_ulong,
    rt_tos: libc::c_uchar,
    rt_class: libc::c_uchar,
    rt_pad4: [libc::c_short; 3],
    rt_metric: libc::c_short,
    rt_dev: *mut libc::c_char,
    rt_mtu: libc::c_ulong,
    rt_window: libc::c_ulong,
    rt_irtt: libc::c_ushort,
}

const RTF_UP: libc::c_ushort = 0x0001;
const RTF_GATEWAY: libc::c_ushort = 0x0002;

/// Add the default route through `gateway` on `ifname` (SIOCADDRT).
/// EEXIST when there is one already.
pub fn add_default_route(ifname: &str, gateway: Ipv4Addr) -> Result<(), Errno> {
    let mut dev: Vec<libc::c_char> = ifname.bytes().map(|b| libc::c_char::from_ne_bytes([b])).collect();
    dev.push(0);
    let any = sockaddr(Ipv4Addr::UNSPECIFIED);
    let mut rt = RtEntry {
        rt_pad1: 0,
        rt_dst: any,
        rt_gateway: sockaddr(gateway),
        rt_genmask: any,
        rt_flags: RTF_UP | RTF_GATEWAY,
        rt_pad2: 0,
        rt_pad3: 0,
        rt_tos: 0,
        rt_class: 0,
        rt_pad4: [0; 3],
        rt_metric: 0,
        rt_dev: dev.as_mut_ptr(),
        rt_mtu: 0,
        rt_window: 0,
        rt_irtt: 0,
    };
    let request = libc::Ioctl::try_from(libc::SIOCADDRT).map_err(|_| Errno::EINVAL)?;
    let sock = ioctl_socket()?;
    // SAFETY: SIOCADDRT reads one `struct rtentry` through its argument,
    // which points at `rt`, laid out as the kernel's (repr(C), the same
    // fields and types), and the NUL-terminated device name `rt_dev` points
    // into `dev`, alive until the call returns; `sock` is open.
    let r = unsafe { libc::ioctl(sock.as_raw_fd(), request, &mut rt as *mut RtEntry) };
    Errno::result(r).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_must_fit_an_ifreq() {
        assert!(ifreq("eth0").is_ok());
        assert_eq!(ifreq("").err(), Some(Errno::EINVAL));
        assert_eq!(ifreq("a-name-of-16-byt").err(), Some(Errno::EINVAL));
        assert_eq!(ifreq("a\0b").err(), Some(Errno::EINVAL));
        assert_eq!(set_addr("eth0", Ipv4Addr::LOCALHOST, 33), Err(Errno::EINVAL));
    }

    #[test]
    fn the_route_entry_is_the_kernels_size() {
        // struct rtentry on x86_64: 120 bytes.
        assert_eq!(std::mem::size_of::<RtEntry>(), 120);
    }

    #[test]
    fn lo_comes_up_and_an_unknown_interface_is_enodev() {
        // Setting IFF_UP needs CAP_NET_ADMIN; lo is up already on any host that runs tests.
        if crate::testutil::is_root() {
            assert_eq!(set_up("lo"), Ok(()));
        }
        assert_eq!(set_up("nosuchif0"), Err(Errno::ENODEV));
    }
}
