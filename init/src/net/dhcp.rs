//! A DHCPv4 client (RFC 2131): DISCOVER, OFFER, REQUEST, ACK, with the
//! broadcast flag set so replies reach an interface that has no address yet.
//! The exchange runs over a [`Link`], a UDP socket on the interface in the
//! boot and a scripted server in the tests.
//!
//! The messages are encoded here ([`Msg`]: the BOOTP header, the magic
//! cookie and the handful of options a client needs, RFC 2132): the crate
//! for them, dhcproto, brings a DNS library, url and idna with their Unicode
//! tables into PID 1. The tests check this codec against dhcproto.

use std::fmt;
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

/// Where DHCP messages go and come from.
pub trait Link {
    /// Broadcast `packet` to the servers (255.255.255.255, port 67).
    fn send(&mut self, packet: &[u8]) -> std::io::Result<()>;
    /// The next datagram for the client (port 68) within `timeout`, into
    /// `buf`: its length, or None when none came in time.
    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> std::io::Result<Option<usize>>;
}

/// A DHCP message type (option 53).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Discover = 1,
    Offer = 2,
    Request = 3,
    Decline = 4,
    Ack = 5,
    Nak = 6,
    Release = 7,
    Inform = 8,
}

impl Kind {
    fn from_u8(v: u8) -> Option<Kind> {
        [
            Kind::Discover,
            Kind::Offer,
            Kind::Request,
            Kind::Decline,
            Kind::Ack,
            Kind::Nak,
            Kind::Release,
            Kind::Inform,
        ]
        .into_iter()
        .find(|k| *k as u8 == v)
    }
}

/// BOOTREQUEST and BOOTREPLY (the `op` field).
pub const BOOTREQUEST: u8 = 1;
pub const BOOTREPLY: u8 = 2;
/// The magic cookie before the options (RFC 2131 3).
const MAGIC: [u8; 4] = [99, 130, 83, 99];
/// The fixed header's length, up to the cookie.
const HEADER: usize = 236;
/// A request is padded to BOOTP's minimum size: some servers drop shorter ones.
const MIN_SIZE: usize = 300;

/// Option codes this client writes or reads (RFC 2132).
mod opt {
    pub const PAD: u8 = 0;
    pub const SUBNET_MASK: u8 = 1;
    pub const ROUTER: u8 = 3;
    pub const DNS: u8 = 6;
    pub const REQUESTED_IP: u8 = 50;
    pub const LEASE_TIME: u8 = 51;
    pub const MESSAGE_TYPE: u8 = 53;
    pub const SERVER_ID: u8 = 54;
    pub const PARAMETERS: u8 = 55;
    pub const END: u8 = 255;
}

/// A DHCP message as this client writes and reads it: the header fields it
/// uses (Ethernet addresses only) and the options it knows; others are
/// passed over.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Msg {
    /// [`BOOTREQUEST`] or [`BOOTREPLY`].
    pub op: u8,
    pub xid: u32,
    /// The broadcast flag: replies to the broadcast address.
    pub broadcast: bool,
    pub yiaddr: Option<Ipv4Addr>,
    pub siaddr: Option<Ipv4Addr>,
    pub chaddr: [u8; 6],
    pub kind: Option<Kind>,
    pub subnet_mask: Option<Ipv4Addr>,
    pub routers: Vec<Ipv4Addr>,
    pub dns: Vec<Ipv4Addr>,
    pub lease_s: Option<u32>,
    pub server_id: Option<Ipv4Addr>,
    pub requested_ip: Option<Ipv4Addr>,
    /// The parameter request list (option 55).
    pub parameters: Vec<u8>,
}

fn addr_or_zero(a: Option<Ipv4Addr>) -> [u8; 4] {
    a.unwrap_or(Ipv4Addr::UNSPECIFIED).octets()
}

fn nonzero(b: &[u8]) -> Option<Ipv4Addr> {
    let a = Ipv4Addr::new(b[0], b[1], b[2], b[3]);
    (!a.is_unspecified()).then_some(a)
}

impl Msg {
    /// The message on the wire: the header, the cookie, the options, END,
    /// padded to [`MIN_SIZE`].
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; HEADER];
        b[0] = self.op;
        b[1] = 1; // Ethernet
        b[2] = 6; // its address length
        b[4..8].copy_from_slice(&self.xid.to_be_bytes());
        if self.broadcast {
            b[10] = 0x80;
        }
        b[16..20].copy_from_slice(&addr_or_zero(self.yiaddr));
        b[20..24].copy_from_slice(&addr_or_zero(self.siaddr));
        b[28..34].copy_from_slice(&self.chaddr);
        b.extend_from_slice(&MAGIC);
        let mut put = |code: u8, data: &[u8]| {
            for chunk in data.chunks(255) {
                b.push(code);
                b.push(u8::try_from(chunk.len()).unwrap_or(255));
                b.extend_from_slice(chunk);
            }
        };
        if let Some(k) = self.kind {
            put(opt::MESSAGE_TYPE, &[k as u8]);
        }
        let addrs = |v: &[Ipv4Addr]| v.iter().flat_map(|a| a.octets()).collect::<Vec<u8>>();
        for (code, a) in [
            (opt::REQUESTED_IP, self.requested_ip),
            (opt::SERVER_ID, self.server_id),
            (opt::SUBNET_MASK, self.subnet_mask),
        ] {
            if let Some(a) = a {
                put(code, &a.octets());
            }
        }
        if !self.routers.is_empty() {
            put(opt::ROUTER, &addrs(&self.routers));
        }
        if !self.dns.is_empty() {
            put(opt::DNS, &addrs(&self.dns));
        }
        if let Some(t) = self.lease_s {
            put(opt::LEASE_TIME, &t.to_be_bytes());
        }
        if !self.parameters.is_empty() {
            put(opt::PARAMETERS, &self.parameters);
        }
        b.push(opt::END);
        if b.len() < MIN_SIZE {
            b.resize(MIN_SIZE, opt::PAD);
        }
        b
    }

    /// Read a message; None when it is not one (too short, no cookie, not
    /// Ethernet, an option running past the end).
    pub fn decode(b: &[u8]) -> Option<Msg> {
        if b.len() < HEADER + MAGIC.len() || b[1] != 1 || b[2] != 6 || b[HEADER..HEADER + 4] != MAGIC {
            return None;
        }
        let mut m = Msg {
            op: b[0],
            xid: u32::from_be_bytes([b[4], b[5], b[6], b[7]]),
            broadcast: b[10] & 0x80 != 0,
            yiaddr: nonzero(&b[16..20]),
            siaddr: nonzero(&b[20..24]),
            ..Msg::default()
        };
        m.chaddr.copy_from_slice(&b[28..34]);
        let mut at = HEADER + MAGIC.len();
        while at < b.len() {
            let code = b[at];
            match code {
                opt::PAD => {
                    at += 1;
                    continue;
                }
                opt::END => break,
                _ => {}
            }
            let len = usize::from(*b.get(at + 1)?);
            let data = b.get(at + 2..at + 2 + len)?;
            at += 2 + len;
            let addrs = || {
                data.chunks_exact(4)
                    .map(|c| Ipv4Addr::new(c[0], c[1], c[2], c[3]))
                    .collect()
            };
            let one = || (len == 4).then(|| Ipv4Addr::new(data[0], data[1], data[2], data[3]));
            match code {
                opt::MESSAGE_TYPE if len == 1 => m.kind = Kind::from_u8(data[0]),
                opt::SUBNET_MASK => m.subnet_mask = one(),
                opt::ROUTER => m.routers = addrs(),
                opt::DNS => m.dns = addrs(),
                opt::LEASE_TIME if len == 4 => {
                    m.lease_s = Some(u32::from_be_bytes([data[0], data[1], data[2], data[3]]))
                }
                opt::SERVER_ID => m.server_id = one(),
                opt::REQUESTED_IP => m.requested_ip = one(),
                opt::PARAMETERS => m.parameters = data.to_vec(),
                _ => {}
            }
        }
        Some(m)
    }
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
const WANTED: [u8; 3] = [opt::SUBNET_MASK, opt::ROUTER, opt::DNS];

/// A request of `kind` from the client with hardware address `mac`.
fn request_message(kind: Kind, mac: [u8; 6], xid: u32, offer: Option<(Ipv4Addr, Ipv4Addr)>) -> Msg {
    Msg {
        op: BOOTREQUEST,
        xid,
        broadcast: true,
        chaddr: mac,
        kind: Some(kind),
        parameters: WANTED.to_vec(),
        requested_ip: offer.map(|(a, _)| a),
        server_id: offer.map(|(_, s)| s),
        ..Msg::default()
    }
}

/// A reply to this client's `xid` of one of `kinds`, or None (a stranger's,
/// garbage, another kind).
fn reply_of(buf: &[u8], xid: u32, mac: [u8; 6], kinds: &[Kind]) -> Option<Msg> {
    let m = Msg::decode(buf)?;
    let ours = m.op == BOOTREPLY && m.xid == xid && m.chaddr == mac;
    (ours && m.kind.is_some_and(|k| kinds.contains(&k))).then_some(m)
}

/// The server identifier of a reply (option 54), else siaddr.
fn server_of(m: &Msg) -> Ipv4Addr {
    m.server_id.or(m.siaddr).unwrap_or(Ipv4Addr::UNSPECIFIED)
}

/// The prefix length of a contiguous netmask; None for a mask with holes.
pub fn prefix_of(mask: Ipv4Addr) -> Option<u8> {
    let m = u32::from(mask);
    let ones = m.leading_ones();
    (m.checked_shl(ones).unwrap_or(0) == 0).then(|| u8::try_from(ones).unwrap_or(32))
}

fn lease_of(ack: &Msg) -> Lease {
    Lease {
        addr: ack.yiaddr.unwrap_or(Ipv4Addr::UNSPECIFIED),
        prefix: ack.subnet_mask.and_then(prefix_of).unwrap_or(24),
        router: ack.routers.first().copied(),
        dns: ack.dns.clone(),
        server: server_of(ack),
        lease_s: ack.lease_s,
    }
}

/// Wait up to `until` for a reply to `xid` of one of `kinds`.
fn await_reply(
    link: &mut dyn Link,
    xid: u32,
    mac: [u8; 6],
    kinds: &[Kind],
    until: Instant,
) -> Result<Option<Msg>, DhcpError> {
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
        link.send(&request_message(Kind::Discover, mac, xid, None).encode())
            .map_err(io("send DISCOVER"))?;
        let Some(offer) = await_reply(link, xid, mac, &[Kind::Offer], until)? else {
            log(&format!("DHCP: no offer within {} ms", wait.as_millis()));
            continue;
        };
        let (addr, server) = (offer.yiaddr.unwrap_or(Ipv4Addr::UNSPECIFIED), server_of(&offer));
        log(&format!("DHCP: {server} offers {addr}"));
        link.send(&request_message(Kind::Request, mac, xid, Some((addr, server))).encode())
            .map_err(io("send REQUEST"))?;
        let until = Instant::now() + wait;
        match await_reply(link, xid, mac, &[Kind::Ack, Kind::Nak], until)? {
            Some(m) if m.kind == Some(Kind::Ack) => return Ok(lease_of(&m)),
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
    use dhcproto::v4::{DhcpOption, Flags, Message, MessageType, Opcode, OptionCode};
    use dhcproto::{Decodable, Decoder, Encodable, Encoder};

    fn encode(m: &Message) -> Vec<u8> {
        let mut buf = Vec::new();
        m.encode(&mut Encoder::new(&mut buf)).unwrap();
        buf
    }

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

    /// The codec against dhcproto's: what this client writes, dhcproto reads
    /// field by field; what a server writes through dhcproto (pads, options
    /// this client does not know), this client reads.
    #[test]
    fn the_codec_agrees_with_dhcproto() {
        let ours = request_message(
            Kind::Request,
            MAC,
            0xdead_beef,
            Some(([10, 0, 2, 15].into(), [10, 0, 2, 2].into())),
        );
        let bytes = ours.encode();
        assert!(bytes.len() >= MIN_SIZE);
        let theirs = Message::decode(&mut Decoder::new(&bytes)).unwrap();
        assert_eq!(theirs.opcode(), Opcode::BootRequest);
        assert_eq!(theirs.xid(), 0xdead_beef);
        assert!(theirs.flags().broadcast());
        assert_eq!(&theirs.chaddr()[..6], &MAC);
        assert_eq!(theirs.opts().msg_type(), Some(MessageType::Request));
        assert!(matches!(
            theirs.opts().get(OptionCode::RequestedIpAddress),
            Some(DhcpOption::RequestedIpAddress(a)) if *a == Ipv4Addr::new(10, 0, 2, 15)
        ));
        assert!(matches!(
            theirs.opts().get(OptionCode::ParameterRequestList),
            Some(DhcpOption::ParameterRequestList(p)) if p == &[OptionCode::SubnetMask, OptionCode::Router, OptionCode::DomainNameServer]
        ));
        assert_eq!(Msg::decode(&bytes), Some(ours));

        let unspec = Ipv4Addr::UNSPECIFIED;
        let mut m = Message::new_with_id(7, unspec, [192, 0, 2, 9].into(), [192, 0, 2, 1].into(), unspec, &MAC);
        m.set_opcode(Opcode::BootReply);
        m.set_flags(Flags::default());
        let o = m.opts_mut();
        o.insert(DhcpOption::MessageType(MessageType::Ack));
        o.insert(DhcpOption::Hostname("rack-01".into()));
        o.insert(DhcpOption::SubnetMask([255, 255, 0, 0].into()));
        o.insert(DhcpOption::Router(vec![[192, 0, 2, 1].into(), [192, 0, 2, 254].into()]));
        o.insert(DhcpOption::DomainNameServer(vec![[192, 0, 2, 53].into()]));
        o.insert(DhcpOption::AddressLeaseTime(3600));
        o.insert(DhcpOption::ServerIdentifier([192, 0, 2, 1].into()));
        let mut bytes = encode(&m);
        // A pad before the options, as some servers send.
        bytes.insert(HEADER + 4, opt::PAD);
        let got = Msg::decode(&bytes).unwrap();
        assert_eq!(
            (got.op, got.xid, got.broadcast, got.kind),
            (BOOTREPLY, 7, false, Some(Kind::Ack))
        );
        assert_eq!(
            (got.yiaddr, got.siaddr),
            (Some([192, 0, 2, 9].into()), Some([192, 0, 2, 1].into()))
        );
        assert_eq!(got.subnet_mask, Some([255, 255, 0, 0].into()));
        assert_eq!(
            got.routers,
            [Ipv4Addr::new(192, 0, 2, 1), Ipv4Addr::new(192, 0, 2, 254)]
        );
        assert_eq!(
            (got.dns.len(), got.lease_s, got.server_id),
            (1, Some(3600), Some([192, 0, 2, 1].into()))
        );
        let lease = lease_of(&got);
        assert_eq!((lease.prefix, lease.router), (16, Some(Ipv4Addr::new(192, 0, 2, 1))));
        // Not messages: short, no cookie, an option past the end.
        assert_eq!(Msg::decode(&bytes[..200]), None);
        let mut no_cookie = bytes.clone();
        no_cookie[HEADER] = 0;
        assert_eq!(Msg::decode(&no_cookie), None);
        // (Built here: dhcproto's options are a HashMap, their order changes from run to run.)
        let mut torn = bytes[..HEADER + 4].to_vec();
        torn.extend_from_slice(&[opt::MESSAGE_TYPE, 1, Kind::Ack as u8, opt::ROUTER, 8, 1, 2]);
        assert_eq!(Msg::decode(&torn), None);
        // The same with the router option whole is a message.
        let mut whole = torn.clone();
        whole.extend_from_slice(&[3, 4, 5, 6, 7, 8, opt::END]);
        assert_eq!(Msg::decode(&whole).map(|m| m.routers.len()), Some(2));
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
