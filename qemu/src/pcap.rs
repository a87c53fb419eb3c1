//! What the guest asked for on the network, read from the pcap file QEMU's `filter-dump` writes
//! (libpcap format, Ethernet frames): TFTP read requests and HTTP request lines. A network boot's
//! firmware (iPXE) says nothing on the serial console; this is how a test sees that it loaded
//! the boot script, then the kernel and the initramfs.

/// Ethernet frames of a pcap file, in order; an error for a file that is not one.
pub fn frames(bytes: &[u8]) -> Result<Vec<&[u8]>, String> {
    let header = bytes.get(..24).ok_or("shorter than a pcap header")?;
    let magic = [header[0], header[1], header[2], header[3]];
    let (le, nanos) = match magic {
        [0xd4, 0xc3, 0xb2, 0xa1] => (true, false),
        [0xa1, 0xb2, 0xc3, 0xd4] => (false, false),
        [0x4d, 0x3c, 0xb2, 0xa1] => (true, true),
        [0xa1, 0xb2, 0x3c, 0x4d] => (false, true),
        _ => return Err(format!("not a pcap file (magic {magic:02x?})")),
    };
    let _ = nanos; // timestamps are not read
    let u32_at = |b: &[u8], at: usize| {
        let w = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        if le {
            u32::from_le_bytes(w)
        } else {
            u32::from_be_bytes(w)
        }
    };
    let linktype = u32_at(header, 20);
    if linktype != 1 {
        return Err(format!("link type {linktype}, not Ethernet (1)"));
    }
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let caplen = usize::try_from(u32_at(bytes, at + 8)).map_err(|_| "record too long")?;
        let start = at + 16;
        // QEMU writes records whole; a file cut while QEMU wrote keeps what is complete.
        let Some(frame) = bytes.get(start..start + caplen) else {
            break;
        };
        out.push(frame);
        at = start + caplen;
    }
    Ok(out)
}

/// An IPv4 packet's protocol and payload (after the IP header), if the frame holds one.
fn ipv4(frame: &[u8]) -> Option<(u8, &[u8])> {
    if frame.get(12..14)? != [0x08, 0x00] {
        return None;
    }
    let ip = frame.get(14..)?;
    let ihl = usize::from(ip.first()? & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([*ip.get(2)?, *ip.get(3)?]));
    let proto = *ip.get(9)?;
    Some((proto, ip.get(ihl..total.min(ip.len()))?))
}

/// The file names of the TFTP read requests (to UDP port 69), in order.
pub fn tftp_reads(frames: &[&[u8]]) -> Vec<String> {
    frames
        .iter()
        .filter_map(|f| {
            let (proto, udp) = ipv4(f)?;
            if proto != 17 || udp.get(2..4)? != [0, 69] {
                return None;
            }
            let tftp = udp.get(8..)?;
            if tftp.get(..2)? != [0, 1] {
                return None;
            }
            let name = tftp.get(2..)?.split(|&b| b == 0).next()?;
            Some(String::from_utf8_lossy(name).into_owned())
        })
        .collect()
}

/// The request lines of HTTP requests (`GET /path`, without the version), in order: TCP
/// segments whose data starts with a method.
pub fn http_requests(frames: &[&[u8]]) -> Vec<String> {
    frames
        .iter()
        .filter_map(|f| {
            let (proto, tcp) = ipv4(f)?;
            if proto != 6 {
                return None;
            }
            let data = tcp.get(usize::from(tcp.get(12)? >> 4) * 4..)?;
            let line = data.split(|&b| b == b'\r' || b == b'\n').next()?;
            let line = std::str::from_utf8(line).ok()?;
            let (method, rest) = line.split_once(' ')?;
            if !["GET", "PUT", "HEAD", "POST", "DELETE"].contains(&method) {
                return None;
            }
            let path = rest.rsplit_once(" HTTP/").map_or(rest, |(p, _)| p);
            Some(format!("{method} {path}"))
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An Ethernet frame with an IPv4 packet of `proto` holding `l4`.
    fn frame(proto: u8, l4: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; 14];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        let total = u16::try_from(20 + l4.len()).unwrap();
        let mut ip = vec![0x45, 0, 0, 0, 0, 0, 0, 0, 64, proto, 0, 0, 10, 0, 2, 15, 10, 0, 2, 2];
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        f.extend(ip);
        f.extend_from_slice(l4);
        f.extend([0u8; 6]); // Ethernet padding past the IP packet
        f
    }

    /// A little-endian pcap file of `frames`.
    pub(crate) fn pcap(frames: &[Vec<u8>]) -> Vec<u8> {
        let mut b = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
        b.extend([0u8; 8]);
        b.extend(65535u32.to_le_bytes());
        b.extend(1u32.to_le_bytes());
        for f in frames {
            b.extend([0u8; 8]);
            let len = u32::try_from(f.len()).unwrap().to_le_bytes();
            b.extend(len);
            b.extend(len);
            b.extend(f);
        }
        b
    }

    fn tftp_rrq(name: &str) -> Vec<u8> {
        let mut udp = vec![0x04, 0x00, 0, 69, 0, 0, 0, 0];
        udp.extend([0, 1]);
        udp.extend(name.as_bytes());
        udp.extend(b"\0octet\0blksize\x001432\0");
        frame(17, &udp)
    }

    fn tcp(data: &[u8]) -> Vec<u8> {
        let mut t = vec![0u8; 20];
        t[12] = 5 << 4;
        t.extend_from_slice(data);
        frame(6, &t)
    }

    #[test]
    fn tftp_reads_and_http_requests_in_order() {
        let file = pcap(&[
            tftp_rrq("boot.ipxe"),
            frame(17, &[0, 68, 0, 67, 0, 0, 0, 0, 1, 1]), // DHCP: not TFTP
            tftp_rrq("vmlinuz"),
            tcp(b"GET /config/bootbench.json HTTP/1.1\r\nHost: 10.0.2.100\r\n\r\n"),
            tcp(b"HTTP/1.1 200 OK\r\n\r\n"),
            tcp(b""),
            tcp(b"PUT /results/m/1-1.json HTTP/1.1\r\n"),
            tftp_rrq("initramfs.img"),
        ]);
        let frames = frames(&file).unwrap();
        assert_eq!(frames.len(), 8);
        assert_eq!(tftp_reads(&frames), ["boot.ipxe", "vmlinuz", "initramfs.img"]);
        assert_eq!(
            http_requests(&frames),
            ["GET /config/bootbench.json", "PUT /results/m/1-1.json"]
        );
        // A file cut in its last record keeps the complete ones.
        assert_eq!(super::frames(&file[..file.len() - 3]).unwrap().len(), 7);
        assert!(super::frames(b"not a pcap file at all, no").is_err());
        assert!(super::frames(b"short").is_err());
    }
}
