//! A DHCPv4 client (RFC 2131): DISCOVER, OFFER, REQUEST, ACK, with the
//! broadcast flag set so replies reach an interface that has no address yet.
//! The messages are dhcproto's; the exchange runs over a [`Link`], a UDP
//! socket on the interface in the boot and a scripted server in the tests.

use std::fmt;
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

use dhcproto::v4::{DhcpOption, Flags, Message, MessageType, Opcode, OptionCode};
use dhcproto::{Decodable, Decoder, Encodable, Encoder};

/// Where DHCP messages go and come from.
pub trait Link {
    /// Broadcast `packet` to the servers (255.255.255.255, port 67).
    fn send(&mut self, packet: &[u8]) -> std::io::Result<()>;
    /// The next datagram for the client (port 68) within `timeout`, into
    /// `buf`: its length, or None when none came in time.
    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> std::io::Result<Option<usize>>;
}

/// What the server gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The address (yiaddr of the ACK).
    pub addr: Ipv4Addr,
    /// Its prefix length, from the subnet mask (24 when the server sent none).
    pub prefix: u8,
    /// The first router, for the default route.
    pub router: Option<Ipv4Addr>,
    /// Name servers.
    pub dns: Vec<Ipv4Addr>,
    /// The server that acknowledged (its server identifier).
    pub server: Ipv4Addr,
    /// The lease time in seconds, when given.
    pub lease_s: Option<u32>,
}

impl fmt::Display for Lease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)?;
        match self.router {
            Some(r) => write!(f, " via {r}")?,
            None => write!(f, " (no router)")?,
        }
        if !self.dns.is_empty() {
            let dns: Vec<String> = self.dns.iter().map(ToString::to_string).collect();
            write!(f, ", name servers {}", dns.join(" "))?;
        }
        write!(f, ", from server {}", self.server)?;
        if let Some(s) = self.lease_s {
            write!(f, " for {s} s")?;
        }
        Ok(())
    }
}

/// Why no lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DhcpError {
    /// No OFFER (or no ACK) in any round.
    NoAnswer { rounds: usize, waited: Duration },
    /// The socket failed (errno, what it was doing).
    Io { doing: &'static str, errno: i32 },
}

impl fmt::Display for DhcpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DhcpError::NoAnswer { rounds, waited } => write!(
                f,
                "no DHCP server answered ({rounds} DISCOVERs over {} ms)",
                waited.as_millis()
            ),
            DhcpError::Io { doing, errno } => {
                write!(f, "DHCP: {doing}: {}", std::io::Error::from_raw_os_error(*errno))
            }
        }
    }
}

impl std::error::Error for DhcpError {}

fn io(doing: &'static str) -> impl Fn(std::io::Error) -> DhcpError {
    move |e| DhcpError::Io {
        doing,
        errno: e.raw_os_error().unwrap_or(libc::EIO),
    }
}

/// How long each round waits for an answer: four rounds, 2, 4, 8 and 8 s.
pub const ROUNDS: [Duration; 4] = [
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
    Duration::from_secs(8),
];

/// The options asked for: subnet mask, router, name servers.
const WANTED: [OptionCode; 3] = [OptionCode::SubnetMask, OptionCode::Router, OptionCode::DomainNameServer];

/// A request of `kind` from the client with hardware address `mac`.
fn request_message(kind: MessageType, mac: [u8; 6], xid: u32, offer: Option<(Ipv4Addr, Ipv4Addr)>) -> Message {
    let unspec = Ipv4Addr::UNSPECIFIED;
    let mut m = Message::new_with_id(xid, unspec, unspec, unspec, unspec, &mac);
    m.set_opcode(Opcode::BootRequest);
    m.set_flags(Flags::default().set_broadcast());
    let opts = m.opts_mut();
    opts.insert(DhcpOption::MessageType(kind));
    opts.insert(DhcpOption::ParameterRequestList(WANTED.to_vec()));
    if let Some((addr, server)) = offer {
        opts.insert(DhcpOption::RequestedIpAddress(addr));
        opts.insert(DhcpOption::ServerIdentifier(server));
    }
    m
}

fn encode(m: &Message) -> Vec<u8> {
    let mut buf = Vec::with_capacity(300);
    // Encoding into a Vec cannot fail for the options built here.
    let _ = m.encode(&mut Encoder::new(&mut buf));
    buf
}

/// A reply to this client's `xid` of one of `kinds`, or None (a stranger's,
/// garbage, another kind).
fn reply_of(buf: &[u8], xid: u32, mac: [u8; 6], kinds: &[MessageType]) -> Option<Message> {
    let m = Message::decode(&mut Decoder::new(buf)).ok()?;
    let ours = m.opcode() == Opcode::BootReply && m.xid() == xid && m.chaddr().get(..6) == Some(&mac[..]);
    let kind = m.opts().msg_type()?;
    (ours && kinds.contains(&kind)).then_some(m)
}

/// The server identifier of a reply (option 54), else siaddr.
fn server_of(m: &Message) -> Ipv4Addr {
    match m.opts().get(OptionCode::ServerIdentifier) {
        Some(DhcpOption::ServerIdentifier(s)) => *s,
        _ => m.siaddr(),
    }
}

/// The prefix length of a contiguous netmask; None for a mask with holes.
pub fn prefix_of(mask: Ipv4Addr) -> Option<u8> {
    let m = u32::from(mask);
    let ones = m.leading_ones();
    (m.checked_shl(ones).unwrap_or(0) == 0).then(|| u8::try_from(ones).unwrap_or(32))
}

fn lease_of(ack: &Message) -> Lease {
    let opts = ack.opts();
    let prefix = match opts.get(OptionCode::SubnetMask) {
        Some(DhcpOption::SubnetMask(m)) => prefix_of(*m).unwrap_or(24),
        _ => 24,
    };
    let router = match opts.get(OptionCode::Router) {
        Some(DhcpOption::Router(r)) => r.first().copied(),
        _ => None,
    };
    let dns = match opts.get(OptionCode::DomainNameServer) {
        Some(DhcpOption::DomainNameServer(d)) => d.clone(),
        _ => Vec::new(),
    };
    let lease_s = match opts.get(OptionCode::AddressLeaseTime) {
        Some(DhcpOption::AddressLeaseTime(t)) => Some(*t),
        _ => None,
    };
    Lease {
        addr: ack.yiaddr(),
        prefix,
        router,
        dns,
        server: server_of(ack),
        lease_s,
    }
}

/// Wait up to `until` for a reply to `xid` of one of `kinds`.
fn await_reply(
    link: &mut dyn Link,
    xid: u32,
    mac: [u8; 6],
    kinds: &[MessageType],
    until: Instant,
) -> Result<Option<Message>, DhcpError> {
    let mut buf = [0u8; 1500];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        let Some(n) = link.recv(&mut buf, left).map_err(io("receive"))? else {
            return Ok(None);
        };
        if let Some(m) = reply_of(&buf[..n], xid, mac, kinds) {
            return Ok(Some(m));
        }
    }
}

/// Get a lease for `mac` over `link`: per round of `rounds`, a DISCOVER,
/// the first OFFER within the round's time, a REQUEST for it, and its ACK
/// (a NAK, or no answer, starts the next round). Says each step in `log`.
pub fn obtain(
    link: &mut dyn Link,
    mac: [u8; 6],
    xid: u32,
    rounds: &[Duration],
    log: &mut dyn FnMut(&str),
) -> Result<Lease, DhcpError> {
    let start = Instant::now();
    for (i, &wait) in rounds.iter().enumerate() {
        let xid = xid.wrapping_add(u32::try_from(i).unwrap_or(0));
        let until = Instant::now() + wait;
        link.send(&encode(&request_message(MessageType::Discover, mac, xid, None)))
            .map_err(io("send DISCOVER"))?;
        let Some(offer) = await_reply(link, xid, mac, &[MessageType::Offer], until)? else {
            log(&format!("DHCP: no offer within {} ms", wait.as_millis()));
            continue;
        };
        let (addr, server) = (offer.yiaddr(), server_of(&offer));
        log(&format!("DHCP: {server} offers {addr}"));
        link.send(&encode(&request_message(
            MessageType::Request,
            mac,
            xid,
            Some((addr, server)),
        )))
        .map_err(io("send REQUEST"))?;
        let until = Instant::now() + wait;
        match await_reply(link, xid, mac, &[MessageType::Ack, MessageType::Nak], until)? {
            Some(m) if m.opts().has_msg_type(MessageType::Ack) => return Ok(lease_of(&m)),
            Some(_) => log(&format!("DHCP: {server} refused the request for {addr} (NAK)")),
            None => log(&format!(
                "DHCP: no answer to the request within {} ms",
                wait.as_millis()
            )),
        }
    }
    Err(DhcpError::NoAnswer {
        rounds: rounds.len(),
        waited: start.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAC: [u8; 6] = [0x52, 0x54, 0x00, 0x12, 0x34, 0x56];

    /// A server on the far side of the link: answers per a script.
    struct Server {
        /// What it answers a DISCOVER with (None: silence), per DISCOVER seen.
        offers: Vec<bool>,
        /// NAK the first REQUEST.
        nak_first: bool,
        sent: Vec<Message>,
        queue: Vec<Vec<u8>>,
        discovers: usize,
        requests: usize,
    }

    impl Server {
        fn new(offers: Vec<bool>, nak_first: bool) -> Self {
            Server {
                offers,
                nak_first,
                sent: Vec::new(),
                queue: Vec::new(),
                discovers: 0,
                requests: 0,
            }
        }

        fn reply(&self, to: &Message, kind: MessageType) -> Vec<u8> {
            let unspec = Ipv4Addr::UNSPECIFIED;
            let mut m = Message::new_with_id(to.xid(), unspec, [10, 0, 2, 15].into(), unspec, unspec, &MAC);
            m.set_opcode(Opcode::BootReply);
            let o = m.opts_mut();
            o.insert(DhcpOption::MessageType(kind));
            o.insert(DhcpOption::ServerIdentifier([10, 0, 2, 2].into()));
            o.insert(DhcpOption::SubnetMask([255, 255, 255, 0].into()));
            o.insert(DhcpOption::Router(vec![[10, 0, 2, 2].into()]));
            o.insert(DhcpOption::DomainNameServer(vec![[10, 0, 2, 3].into()]));
            o.insert(DhcpOption::AddressLeaseTime(86400));
            encode(&m)
        }
    }

    impl Link for Server {
        fn send(&mut self, packet: &[u8]) -> std::io::Result<()> {
            let m = Message::decode(&mut Decoder::new(packet)).expect("the client sends valid messages");
            assert!(m.flags().broadcast(), "replies must be broadcast: no address yet");
            assert_eq!(&m.chaddr()[..6], &MAC);
            // A stranger's reply first, then garbage: both ignored.
            let mut stranger = m.clone();
            stranger.set_xid(m.xid().wrapping_add(1000));
            self.queue.push(self.reply(&stranger, MessageType::Offer));
            self.queue.push(vec![1, 2, 3]);
            match m.opts().msg_type() {
                Some(MessageType::Discover) => {
                    let answer = self.offers.get(self.discovers).copied().unwrap_or(true);
                    self.discovers += 1;
                    if answer {
                        self.queue.push(self.reply(&m, MessageType::Offer));
                    }
                }
                Some(MessageType::Request) => {
                    assert!(matches!(
                        m.opts().get(OptionCode::RequestedIpAddress),
                        Some(DhcpOption::RequestedIpAddress(a)) if *a == Ipv4Addr::new(10, 0, 2, 15)
                    ));
                    assert!(matches!(
                        m.opts().get(OptionCode::ServerIdentifier),
                        Some(DhcpOption::ServerIdentifier(s)) if *s == Ipv4Addr::new(10, 0, 2, 2)
                    ));
                    self.requests += 1;
                    let kind = if self.nak_first && self.requests == 1 {
                        MessageType::Nak
                    } else {
                        MessageType::Ack
                    };
                    self.queue.push(self.reply(&m, kind));
                }
                k => panic!("unexpected {k:?}"),
            }
            self.sent.push(m);
            Ok(())
        }

        fn recv(&mut self, buf: &mut [u8], _timeout: Duration) -> std::io::Result<Option<usize>> {
            if self.queue.is_empty() {
                return Ok(None);
            }
            let p = self.queue.remove(0);
            buf[..p.len()].copy_from_slice(&p);
            Ok(Some(p.len()))
        }
    }

    fn short() -> Vec<Duration> {
        vec![Duration::from_millis(20); 3]
    }

    #[test]
    fn discover_offer_request_ack() {
        let mut s = Server::new(vec![true], false);
        let mut lines = Vec::new();
        let lease = obtain(&mut s, MAC, 7, &short(), &mut |m| lines.push(m.to_string())).unwrap();
        assert_eq!(
            lease,
            Lease {
                addr: Ipv4Addr::new(10, 0, 2, 15),
                prefix: 24,
                router: Some(Ipv4Addr::new(10, 0, 2, 2)),
                dns: vec![Ipv4Addr::new(10, 0, 2, 3)],
                server: Ipv4Addr::new(10, 0, 2, 2),
                lease_s: Some(86400),
            }
        );
        assert_eq!((s.discovers, s.requests), (1, 1));
        assert_eq!(lines, ["DHCP: 10.0.2.2 offers 10.0.2.15"]);
        assert_eq!(
            lease.to_string(),
            "10.0.2.15/24 via 10.0.2.2, name servers 10.0.2.3, from server 10.0.2.2 for 86400 s"
        );
    }

    #[test]
    fn silence_and_a_nak_start_the_next_round_and_the_rounds_are_bounded() {
        let mut s = Server::new(vec![false, true, true], true);
        let mut lines = Vec::new();
        let lease = obtain(&mut s, MAC, 7, &short(), &mut |m| lines.push(m.to_string())).unwrap();
        assert_eq!(lease.addr, Ipv4Addr::new(10, 0, 2, 15));
        assert_eq!((s.discovers, s.requests), (3, 2), "{lines:?}");
        assert!(lines[0].starts_with("DHCP: no offer within 20 ms"), "{lines:?}");
        assert!(lines
            .iter()
            .any(|l| l.contains("refused the request for 10.0.2.15 (NAK)")));
        let mut mute = Server::new(vec![false; 10], false);
        let e = obtain(&mut mute, MAC, 7, &short(), &mut |_| {}).unwrap_err();
        assert!(matches!(e, DhcpError::NoAnswer { rounds: 3, .. }), "{e:?}");
        assert!(e.to_string().starts_with("no DHCP server answered (3 DISCOVERs over"));
    }

    #[test]
    fn netmasks_give_prefixes() {
        for (m, p) in [
            ([255, 255, 255, 0], Some(24)),
            ([255, 255, 0, 0], Some(16)),
            ([255, 255, 255, 255], Some(32)),
            ([0, 0, 0, 0], Some(0)),
            ([255, 0, 255, 0], None),
        ] {
            assert_eq!(prefix_of(Ipv4Addr::from(m)), p, "{m:?}");
        }
    }
}
