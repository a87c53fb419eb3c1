//! The guest's network for a network boot: one NIC on QEMU's user-mode network (slirp) with
//! `restrict=on`, so no packet leaves the host; its built-in DHCP and TFTP server (`tftp=`,
//! `bootfile=`) start the NIC's iPXE ROM (Debian's `ipxe-qemu`), and `guestfwd` rules let the
//! guest reach servers on the host's loopback at fixed guest addresses, one `socat` per
//! connection.
//!
//! What was seen with QEMU 7.2 here: `guestfwd` works with `restrict=on`. Its `cmd:` form runs
//! the command for each connection the guest opens (stdin and stdout are the connection); its
//! chardev form (`guestfwd=tcp:A:P-tcp:127.0.0.1:PORT`) connects once when QEMU starts (QEMU
//! refuses to start when nothing listens) and serves that one connection: with a server that
//! closes after a response, the guest's second connection hung.

use std::fmt;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::str::FromStr;

/// Where Debian's `ipxe-qemu` puts QEMU's NIC option ROMs (iPXE, BIOS and UEFI in one file).
pub const IPXE_ROM_DIR: &str = "/usr/lib/ipxe/qemu";
/// The MAC address of the guest's NIC (QEMU's own default), so `BOOTIF=` is known in advance.
pub const MAC: &str = "52:54:00:12:34:56";
/// The first guest address `--http` forwards (the next ones count up from it).
pub const FIRST_FORWARD: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 100);
/// The program that carries one forwarded connection to the host (Debian's `socat`).
pub const SOCAT: &str = "socat";

/// The guest's NIC model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nic {
    /// `virtio-net-pci` (virtio_net).
    Virtio,
    /// `e1000`, Intel 82540EM (e1000).
    E1000,
    /// `e1000e`, Intel 82574L (e1000e).
    E1000e,
}

impl Nic {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Nic::Virtio => "virtio",
            Nic::E1000 => "e1000",
            Nic::E1000e => "e1000e",
        }
    }

    /// QEMU's device.
    pub fn device(self) -> &'static str {
        match self {
            Nic::Virtio => "virtio-net-pci",
            Nic::E1000 => "e1000",
            Nic::E1000e => "e1000e",
        }
    }

    /// Its iPXE option ROM in [`IPXE_ROM_DIR`]: QEMU's default ROM file for the device, checked
    /// before the boot so a missing `ipxe-qemu` is an error, not a NIC that cannot boot. Not
    /// passed as `romfile=`: QEMU patches the PCI ids in a default ROM to the device's, not in
    /// one given by name, and SeaBIOS then skipped the ROM (its ids did not match; no boot).
    pub fn rom(self) -> PathBuf {
        PathBuf::from(IPXE_ROM_DIR).join(match self {
            Nic::Virtio => "efi-virtio.rom",
            Nic::E1000 => "efi-e1000.rom",
            Nic::E1000e => "efi-e1000e.rom",
        })
    }
}

impl FromStr for Nic {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "virtio" => Ok(Nic::Virtio),
            "e1000" => Ok(Nic::E1000),
            "e1000e" => Ok(Nic::E1000e),
            _ => Err(format!("NIC {s:?}: virtio, e1000 or e1000e")),
        }
    }
}

/// A guest address and port whose TCP connections go to the host's `127.0.0.1:host_port`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Forward {
    pub guest: Ipv4Addr,
    pub guest_port: u16,
    pub host_port: u16,
}

impl Forward {
    /// `--http`'s value: `HOSTPORT` (the `n`-th forward: 10.0.2.100+n, port 80) or
    /// `GUESTADDR:GUESTPORT=HOSTPORT`.
    pub fn parse(s: &str, n: usize) -> Result<Forward, String> {
        let port = |p: &str| {
            p.parse::<u16>()
                .ok()
                .filter(|&p| p != 0)
                .ok_or_else(|| format!("{p:?} is not a TCP port (1-65535)"))
        };
        match s.split_once('=') {
            None => {
                let n = u8::try_from(n)
                    .ok()
                    .filter(|n| *n < 100)
                    .ok_or("too many --http forwards")?;
                let [a, b, c, d] = FIRST_FORWARD.octets();
                Ok(Forward {
                    guest: Ipv4Addr::new(a, b, c, d + n),
                    guest_port: 80,
                    host_port: port(s)?,
                })
            }
            Some((guest, host)) => {
                let (addr, gport) = guest
                    .rsplit_once(':')
                    .ok_or_else(|| format!("{guest:?}: expected GUESTADDR:GUESTPORT"))?;
                let addr: Ipv4Addr = addr.parse().map_err(|_| format!("{addr:?} is not an IPv4 address"))?;
                Ok(Forward {
                    guest: addr,
                    guest_port: port(gport)?,
                    host_port: port(host)?,
                })
            }
        }
    }

    /// The `guestfwd=` value: a [`SOCAT`] per connection.
    pub fn guestfwd(&self) -> String {
        format!(
            "tcp:{}:{}-cmd:{SOCAT} - TCP:127.0.0.1:{}",
            self.guest, self.guest_port, self.host_port
        )
    }
}

impl fmt::Display for Forward {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "guest {}:{} -> host 127.0.0.1:{}",
            self.guest, self.guest_port, self.host_port
        )
    }
}

/// One NIC on a restricted user-mode network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Net {
    pub nic: Nic,
    /// The directory QEMU's TFTP server serves (`tftp=`).
    pub tftp: Option<PathBuf>,
    /// The boot file name its DHCP hands out (`bootfile=`), relative to `tftp`.
    pub bootfile: Option<String>,
    pub forwards: Vec<Forward>,
    /// First in the firmware's boot order (`bootindex=0`).
    pub boot: bool,
    /// Every frame the NIC sends or receives, to this pcap file (QEMU's `filter-dump`).
    pub pcap: Option<PathBuf>,
}

/// QEMU option values separate with commas; a literal comma is doubled.
fn escape(value: &str) -> String {
    value.replace(',', ",,")
}

/// `-netdev`, `-device` and (with a pcap) `-object filter-dump`.
pub fn net_args(net: &Net) -> Vec<String> {
    let mut netdev = String::from("user,id=net0,restrict=on");
    if let Some(dir) = &net.tftp {
        netdev.push_str(&format!(",tftp={}", escape(&dir.display().to_string())));
    }
    if let Some(f) = &net.bootfile {
        netdev.push_str(&format!(",bootfile={}", escape(f)));
    }
    for f in &net.forwards {
        netdev.push_str(&format!(",guestfwd={}", escape(&f.guestfwd())));
    }
    let mut device = format!("{},netdev=net0,mac={MAC}", net.nic.device());
    if net.boot {
        device.push_str(",bootindex=0");
    }
    let mut v = vec!["-netdev".to_owned(), netdev, "-device".to_owned(), device];
    if let Some(p) = &net.pcap {
        v.extend([
            "-object".to_owned(),
            format!(
                "filter-dump,id=dump0,netdev=net0,file={}",
                escape(&p.display().to_string())
            ),
        ]);
    }
    v
}

/// `BOOTIF=` as PXELINUX's `IPAPPEND 2` and iPXE's `${netX/mac:hexhyp}` give it for [`MAC`].
pub fn bootif() -> String {
    format!("BOOTIF=01-{}", MAC.replace(':', "-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nics_parse_and_name_their_rom() {
        for (s, dev, rom) in [
            ("virtio", "virtio-net-pci", "efi-virtio.rom"),
            ("e1000", "e1000", "efi-e1000.rom"),
            ("e1000e", "e1000e", "efi-e1000e.rom"),
        ] {
            let nic: Nic = s.parse().unwrap();
            assert_eq!((nic.name(), nic.device()), (s, dev));
            assert_eq!(nic.rom(), PathBuf::from(IPXE_ROM_DIR).join(rom));
        }
        assert!("rtl8139".parse::<Nic>().is_err());
    }

    #[test]
    fn forwards_count_up_from_the_first_address() {
        assert_eq!(
            Forward::parse("8080", 0).unwrap(),
            Forward {
                guest: FIRST_FORWARD,
                guest_port: 80,
                host_port: 8080
            }
        );
        assert_eq!(Forward::parse("9000", 2).unwrap().guest, Ipv4Addr::new(10, 0, 2, 102));
        let f = Forward::parse("10.0.2.50:8443=4443", 0).unwrap();
        assert_eq!(
            (f.guest, f.guest_port, f.host_port),
            (Ipv4Addr::new(10, 0, 2, 50), 8443, 4443)
        );
        for bad in ["0", "x", "70000", "10.0.2.50=1", "10.0.2.x:80=1", "10.0.2.50:80=0"] {
            assert!(Forward::parse(bad, 0).is_err(), "{bad}");
        }
        assert_eq!(f.to_string(), "guest 10.0.2.50:8443 -> host 127.0.0.1:4443");
    }

    #[test]
    fn a_restricted_user_network_with_tftp_and_forwards() {
        let net = Net {
            nic: Nic::E1000e,
            tftp: Some("/o/net,boot".into()),
            bootfile: Some("boot.ipxe".into()),
            forwards: vec![Forward::parse("8080", 0).unwrap(), Forward::parse("8081", 1).unwrap()],
            boot: true,
            pcap: Some("/o/net.pcap".into()),
        };
        assert_eq!(
            net_args(&net),
            [
                "-netdev",
                "user,id=net0,restrict=on,tftp=/o/net,,boot,bootfile=boot.ipxe,\
                 guestfwd=tcp:10.0.2.100:80-cmd:socat - TCP:127.0.0.1:8080,\
                 guestfwd=tcp:10.0.2.101:80-cmd:socat - TCP:127.0.0.1:8081",
                "-device",
                "e1000e,netdev=net0,mac=52:54:00:12:34:56,bootindex=0",
                "-object",
                "filter-dump,id=dump0,netdev=net0,file=/o/net.pcap",
            ]
        );
        let plain = Net {
            nic: Nic::Virtio,
            tftp: None,
            bootfile: None,
            forwards: vec![],
            boot: false,
            pcap: None,
        };
        assert_eq!(
            net_args(&plain),
            [
                "-netdev",
                "user,id=net0,restrict=on",
                "-device",
                "virtio-net-pci,netdev=net0,mac=52:54:00:12:34:56"
            ]
        );
        assert_eq!(bootif(), "BOOTIF=01-52-54-00-12-34-56");
    }
}
