//! The network, for machines booted from the network or sending their
//! results to existing storage: the Ethernet interfaces, the link, an
//! address (DHCPv4, or a static one from the command line), the default
//! route and the name servers; then HTTP(S) ([`http`]).
//!
//! Which interface: the one the machine booted from first, when the boot
//! loader says which (`BOOTIF=01-aa-bb-cc-dd-ee-ff`, as PXELINUX's IPAPPEND
//! 2 and bootbench's iPXE script pass it), then the others by name; only
//! those whose link comes up within [`LINK_WAIT`]. `bootbench.ip=ADDR/PREFIX
//! [,GATEWAY[,IFACE]]` sets a static address instead of asking DHCP.

pub mod dhcp;
pub mod http;

use std::ffi::OsString;
use std::fmt;
use std::net::{Ipv4Addr, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::socket::{setsockopt, sockopt};

use crate::sys::net as netif;

/// How long the interfaces may take to report a link (an Ethernet port's
/// autonegotiation takes 2 to 5 s).
pub const LINK_WAIT: Duration = Duration::from_secs(10);

/// An Ethernet interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nic {
    /// Its name (`eth0`, `enp1s0`).
    pub name: String,
    /// Its hardware address.
    pub mac: [u8; 6],
    /// The driver bound to it, when sysfs says.
    pub driver: Option<String>,
}

/// `aa:bb:cc:dd:ee:ff`.
pub fn mac_text(mac: &[u8; 6]) -> String {
    mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

/// A hardware address as `aa:bb:cc:dd:ee:ff` or `aa-bb-...`, or BOOTIF's
/// `01-aa-bb-cc-dd-ee-ff` (the leading 01 is the ARP type, Ethernet).
pub fn parse_mac(v: &str) -> Option<[u8; 6]> {
    let parts: Vec<&str> = v.trim().split([':', '-']).collect();
    let parts = match parts.len() {
        7 if parts[0] == "01" => &parts[1..],
        6 => &parts[..],
        _ => return None,
    };
    let mut mac = [0u8; 6];
    for (b, p) in mac.iter_mut().zip(parts) {
        if p.len() != 2 {
            return None;
        }
        *b = u8::from_str_radix(p, 16).ok()?;
    }
    Some(mac)
}

/// Every physical Ethernet interface under `sys` (`class/net/*` of type 1
/// with a `device`: no loopback, bridge or tunnel), by name.
pub fn nics(sys: &Path) -> Vec<Nic> {
    let dir = sys.join("class/net");
    let mut out = Vec::new();
    for name in crate::disks::discover::sorted_names(&dir) {
        let d = dir.join(&name);
        let read = |f: &str| std::fs::read_to_string(d.join(f)).map(|s| s.trim().to_string());
        if read("type").ok().as_deref() != Some("1") || !d.join("device").exists() {
            continue;
        }
        let Some(mac) = read("address").ok().as_deref().and_then(parse_mac) else {
            continue;
        };
        let driver = std::fs::read_link(d.join("device/driver"))
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
        out.push(Nic { name, mac, driver });
    }
    out
}

/// A static address from the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Static {
    pub addr: Ipv4Addr,
    pub prefix: u8,
    pub gateway: Option<Ipv4Addr>,
    pub iface: Option<String>,
}

/// `ADDR/PREFIX[,GATEWAY[,IFACE]]`; the error names the part that is wrong.
pub fn parse_static(v: &str) -> Result<Static, String> {
    let key = bench_core::boot::cmdline::Key::Ip;
    let expected = "expected ADDR/PREFIX[,GATEWAY[,IFACE]], e.g. 192.0.2.10/24,192.0.2.1";
    let mut parts = v.split(',');
    let cidr = parts.next().unwrap_or("");
    let (a, p) = cidr
        .split_once('/')
        .ok_or_else(|| format!("{key}: {v:?} has no /PREFIX; {expected}"))?;
    let addr: Ipv4Addr = a
        .parse()
        .map_err(|_| format!("{key}: {a:?} is not an IPv4 address; {expected}"))?;
    let prefix: u8 = p
        .parse()
        .ok()
        .filter(|p| (1..=32).contains(p))
        .ok_or_else(|| format!("{key}: prefix {p:?} is not a number from 1 to 32; {expected}"))?;
    let gateway = match parts.next().filter(|g| !g.is_empty()) {
        None => None,
        Some(g) => Some(
            g.parse()
                .map_err(|_| format!("{key}: gateway {g:?} is not an IPv4 address; {expected}"))?,
        ),
    };
    let iface = parts.next().filter(|i| !i.is_empty()).map(str::to_string);
    if let Some(extra) = parts.next() {
        return Err(format!("{key}: {extra:?} after the interface; {expected}"));
    }
    Ok(Static {
        addr,
        prefix,
        gateway,
        iface,
    })
}

/// The interfaces to try, in order: the named one only (a static address's
/// IFACE), else the boot interface (`boot_mac`) first, then the others.
pub fn candidates(all: &[Nic], boot_mac: Option<[u8; 6]>, only: Option<&str>) -> Vec<Nic> {
    if let Some(name) = only {
        return all.iter().filter(|n| n.name == name).cloned().collect();
    }
    let mut out: Vec<Nic> = all.iter().filter(|n| Some(n.mac) == boot_mac).cloned().collect();
    out.extend(all.iter().filter(|n| Some(n.mac) != boot_mac).cloned());
    out
}

/// The network as set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Net {
    pub nic: Nic,
    pub addr: Ipv4Addr,
    pub prefix: u8,
    pub gateway: Option<Ipv4Addr>,
    pub dns: Vec<Ipv4Addr>,
    /// How the address came: the DHCP lease, or the command line.
    pub how: String,
}

impl fmt::Display for Net {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}{}): {}",
            self.nic.name,
            mac_text(&self.nic.mac),
            self.nic.driver.as_deref().map(|d| format!(", {d}")).unwrap_or_default(),
            self.how
        )
    }
}

/// Why there is no network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetError {
    /// The command line is wrong (bootbench.ip=, BOOTIF=).
    CommandLine(String),
    /// No Ethernet interface (or not the one named).
    NoInterface(String),
    /// No interface reported a link.
    NoLink { names: Vec<String>, waited: Duration },
    /// DHCP gave nothing on any interface with a link.
    NoLease(Vec<String>),
    /// Setting the interface up failed.
    Setup { iface: String, what: String, errno: Errno },
}

impl fmt::Display for NetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetError::CommandLine(e) => write!(f, "{e}"),
            NetError::NoInterface(e) => write!(f, "{e}"),
            NetError::NoLink { names, waited } => write!(
                f,
                "no link on {} after {} ms (cable, switch port, or a driver the image lacks?)",
                names.join(", "),
                waited.as_millis()
            ),
            NetError::NoLease(why) => write!(f, "no DHCP lease: {}", why.join("; ")),
            NetError::Setup { iface, what, errno } => {
                write!(f, "{iface}: {what}: {}", std::io::Error::from(*errno))
            }
        }
    }
}

impl std::error::Error for NetError {}

/// A DHCP client's socket on one interface: port 68, broadcast, bound to
/// the interface (it has no address yet).
struct UdpLink(UdpSocket);

impl UdpLink {
    fn open(iface: &str) -> std::io::Result<UdpLink> {
        let s = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 68))?;
        s.set_broadcast(true)?;
        // Send and receive through `iface` only (SO_BINDTODEVICE), as a
        // DHCP client must while its interface has no address.
        if iface.is_empty() || iface.len() >= libc::IFNAMSIZ {
            return Err(std::io::Error::from(Errno::EINVAL));
        }
        setsockopt(&s, sockopt::BindToDevice, &OsString::from(iface))?;
        Ok(UdpLink(s))
    }
}

impl dhcp::Link for UdpLink {
    fn send(&mut self, packet: &[u8]) -> std::io::Result<()> {
        self.0.send_to(packet, (Ipv4Addr::BROADCAST, 67)).map(|_| ())
    }
    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> std::io::Result<Option<usize>> {
        self.0.set_read_timeout(Some(timeout.max(Duration::from_millis(1))))?;
        match self.0.recv_from(buf) {
            Ok((n, _)) => Ok(Some(n)),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Whether `iface` reports a link (`carrier` 1; unreadable while down).
fn has_link(sys: &Path, iface: &str) -> bool {
    std::fs::read_to_string(sys.join("class/net").join(iface).join("carrier")).is_ok_and(|c| c.trim() == "1")
}

/// Where the name servers go: the C library's resolver reads it.
pub const RESOLV_CONF: &str = "/etc/resolv.conf";

/// Bring the network up on this machine (see the module documentation):
/// `fixed`, the value of `bootbench.ip=` if given; `bootif`, the value of
/// `BOOTIF=` if given. Says each step in `log`.
pub fn up(fixed: Option<&str>, bootif: Option<&str>, log: &mut dyn FnMut(&str)) -> Result<Net, NetError> {
    let sys = crate::sysfs::root();
    let start = Instant::now();
    let fixed = fixed.map(parse_static).transpose().map_err(NetError::CommandLine)?;
    let boot_mac = match bootif {
        None => None,
        Some(v) => Some(parse_mac(v).ok_or_else(|| {
            NetError::CommandLine(format!(
                "BOOTIF: {v:?} is not a hardware address; expected 01-aa-bb-cc-dd-ee-ff or aa:bb:cc:dd:ee:ff"
            ))
        })?),
    };
    let all = nics(sys);
    let order = candidates(&all, boot_mac, fixed.as_ref().and_then(|s| s.iface.as_deref()));
    if order.is_empty() {
        let names: Vec<String> = all.iter().map(|n| n.name.clone()).collect();
        return Err(NetError::NoInterface(
            match fixed.as_ref().and_then(|s| s.iface.as_ref()) {
                Some(i) => format!(
                    "{}: no Ethernet interface {i:?} (there are: {})",
                    bench_core::boot::cmdline::Key::Ip,
                    names.join(", ")
                ),
                None => "no Ethernet interface (is the NIC's driver in the image?)".to_string(),
            },
        ));
    }
    if let Some(m) = boot_mac {
        if !order.iter().any(|n| n.mac == m) {
            log(&format!(
                "BOOTIF {} is none of this machine's interfaces; trying them all",
                mac_text(&m)
            ));
        }
    }
    for n in &order {
        netif::set_up(&n.name).map_err(|errno| NetError::Setup {
            iface: n.name.clone(),
            what: "set up".to_string(),
            errno,
        })?;
    }
    // The first (the boot interface, or the first by name) gets the whole wait; once it or the
    // wait is over, those with a link are tried in order.
    while !has_link(sys, &order[0].name) && start.elapsed() < LINK_WAIT {
        std::thread::sleep(Duration::from_millis(100));
    }
    let linked: Vec<&Nic> = order.iter().filter(|n| has_link(sys, &n.name)).collect();
    if linked.is_empty() {
        return Err(NetError::NoLink {
            names: order.iter().map(|n| n.name.clone()).collect(),
            waited: start.elapsed(),
        });
    }
    log(&format!(
        "network: link up on {} ({} ms)",
        linked.iter().map(|n| n.name.as_str()).collect::<Vec<_>>().join(", "),
        start.elapsed().as_millis()
    ));
    if let Some(s) = fixed {
        let nic = linked[0].clone();
        return apply(
            nic,
            s.addr,
            s.prefix,
            s.gateway,
            Vec::new(),
            "static, from bootbench.ip".to_string(),
        );
    }
    let mut why = Vec::new();
    for nic in linked {
        let mut xid = [0u8; 4];
        let _ = crate::sys::dm::fill_random_unwaited(&mut xid);
        let got = UdpLink::open(&nic.name)
            .map_err(|e| format!("{}: the DHCP socket: {e}", nic.name))
            .and_then(|mut link| {
                dhcp::obtain(&mut link, nic.mac, u32::from_ne_bytes(xid), &dhcp::ROUNDS, log)
                    .map_err(|e| format!("{}: {e}", nic.name))
            });
        match got {
            Ok(lease) => {
                let how = format!("DHCP lease {lease} ({} ms)", start.elapsed().as_millis());
                return apply(nic.clone(), lease.addr, lease.prefix, lease.router, lease.dns, how);
            }
            Err(e) => why.push(e),
        }
    }
    Err(NetError::NoLease(why))
}

/// Give `nic` its address, the default route and the name servers.
fn apply(
    nic: Nic,
    addr: Ipv4Addr,
    prefix: u8,
    gateway: Option<Ipv4Addr>,
    dns: Vec<Ipv4Addr>,
    how: String,
) -> Result<Net, NetError> {
    let setup = |what: &str| {
        let iface = nic.name.clone();
        let what = what.to_string();
        move |errno| NetError::Setup { iface, what, errno }
    };
    netif::set_addr(&nic.name, addr, prefix).map_err(setup(&format!("address {addr}/{prefix}")))?;
    if let Some(g) = gateway {
        match netif::add_default_route(&nic.name, g) {
            Ok(()) | Err(Errno::EEXIST) => {}
            Err(e) => return Err(setup(&format!("default route via {g}"))(e)),
        }
    }
    if !dns.is_empty() {
        let text: String = dns.iter().map(|d| format!("nameserver {d}\n")).collect();
        let _ = std::fs::create_dir_all("/etc");
        let _ = std::fs::write(RESOLV_CONF, text);
    }
    Ok(Net {
        nic,
        addr,
        prefix,
        gateway,
        dns,
        how,
    })
}

/// The CA bundle the initramfs carries for https (`bootbench-image initramfs --ca`).
pub use bench_core::boot::initramfs::CA_BUNDLE;

/// An HTTP client trusting [`CA_BUNDLE`] when the initramfs has one.
pub fn client() -> Result<http::Client, http::HttpError> {
    http::Client::new(std::fs::read(PathBuf::from(CA_BUNDLE)).ok().as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;

    #[test]
    fn hardware_addresses_in_every_form() {
        let m = [0x52, 0x54, 0x00, 0xab, 0xcd, 0xef];
        for v in [
            "01-52-54-00-ab-cd-ef",
            "52:54:00:AB:CD:EF",
            "52-54-00-ab-cd-ef",
            " 52:54:00:ab:cd:ef\n",
        ] {
            assert_eq!(parse_mac(v), Some(m), "{v}");
        }
        for v in [
            "02-52-54-00-ab-cd-ef",
            "52:54:00:ab:cd",
            "5:54:00:ab:cd:ef0",
            "zz:54:00:ab:cd:ef",
            "",
        ] {
            assert_eq!(parse_mac(v), None, "{v}");
        }
        assert_eq!(mac_text(&m), "52:54:00:ab:cd:ef");
    }

    #[test]
    fn static_addresses_parse_or_name_the_bad_part() {
        assert_eq!(
            parse_static("192.0.2.10/24,192.0.2.1,eth1").unwrap(),
            Static {
                addr: Ipv4Addr::new(192, 0, 2, 10),
                prefix: 24,
                gateway: Some(Ipv4Addr::new(192, 0, 2, 1)),
                iface: Some("eth1".into())
            }
        );
        assert_eq!(parse_static("10.1.2.3/8").unwrap().gateway, None);
        assert_eq!(parse_static("10.1.2.3/8,,eno1").unwrap().iface.as_deref(), Some("eno1"));
        for (v, why) in [
            ("10.1.2.3", "has no /PREFIX"),
            ("10.1.2/8", "\"10.1.2\" is not an IPv4 address"),
            ("10.1.2.3/33", "prefix \"33\""),
            ("10.1.2.3/8,gw", "gateway \"gw\""),
            ("10.1.2.3/8,10.0.0.1,eth0,x", "\"x\" after the interface"),
        ] {
            let e = parse_static(v).unwrap_err();
            assert!(e.starts_with("bootbench.ip: ") && e.contains(why), "{v}: {e}");
        }
    }

    fn nic_dir(sys: &Path, name: &str, kind: &str, mac: &str, physical: bool) {
        let d = sys.join("class/net").join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("type"), format!("{kind}\n")).unwrap();
        std::fs::write(d.join("address"), format!("{mac}\n")).unwrap();
        if physical {
            let dev = sys.join("devices/pci0000:00").join(name);
            std::fs::create_dir_all(&dev).unwrap();
            std::os::unix::fs::symlink(&dev, d.join("device")).unwrap();
            let drv = sys.join("bus/pci/drivers/virtio_net");
            std::fs::create_dir_all(&drv).unwrap();
            std::os::unix::fs::symlink(&drv, dev.join("driver")).unwrap();
        }
    }

    #[test]
    fn physical_ethernet_interfaces_the_boot_one_first() {
        let t = TempDir::new("nics");
        let sys = t.0.join("sys");
        nic_dir(&sys, "lo", "772", "00:00:00:00:00:00", false);
        nic_dir(&sys, "eth1", "1", "52:54:00:00:00:02", true);
        nic_dir(&sys, "eth0", "1", "52:54:00:00:00:01", true);
        nic_dir(&sys, "br0", "1", "52:54:00:00:00:09", false);
        let all = nics(&sys);
        let names: Vec<&str> = all.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["eth0", "eth1"]);
        assert_eq!(all[0].driver.as_deref(), Some("virtio_net"));
        let order = |boot: Option<&str>, only: Option<&str>| -> Vec<String> {
            candidates(&all, boot.and_then(parse_mac), only)
                .into_iter()
                .map(|n| n.name)
                .collect()
        };
        assert_eq!(order(None, None), ["eth0", "eth1"]);
        assert_eq!(order(Some("01-52-54-00-00-00-02"), None), ["eth1", "eth0"]);
        assert_eq!(order(Some("01-52-54-00-00-00-07"), None), ["eth0", "eth1"]);
        assert_eq!(order(Some("01-52-54-00-00-00-02"), Some("eth0")), ["eth0"]);
        assert!(order(None, Some("eth9")).is_empty());
    }
}
