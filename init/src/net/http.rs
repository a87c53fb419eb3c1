//! A small HTTP/1.1 client for PID 1: GET a config, PUT a result document,
//! over TCP or TLS (rustls, with the CA bundle the initramfs carries). One
//! request per connection (`Connection: close`); the response head is
//! parsed by httparse; a body comes by Content-Length, chunked, or to the
//! end of the connection.

use std::fmt;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

/// A response body larger than this is refused (a config or a result
/// document is kilobytes; this bounds what a wrong URL can make PID 1 hold).
pub const MAX_BODY: usize = 32 << 20;

pub use bench_core::vocab::url::{Scheme, Url};

/// A response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub reason: String,
    pub body: Vec<u8>,
    /// The Location header, on a redirect.
    pub location: Option<String>,
}

/// Why a request got no response.
#[derive(Debug)]
pub enum HttpError {
    /// The host name did not resolve.
    Resolve { host: String, error: String },
    /// No connection (refused, unreachable, timed out).
    Connect { to: String, error: String },
    /// The TLS set-up or handshake failed.
    Tls(String),
    /// Sending or receiving failed.
    Io(String),
    /// What came back is not an HTTP response this client reads.
    Malformed(String),
    /// A redirect from `from` (redacted) to where this client cannot go:
    /// `error` says why, quoting the target redacted.
    Redirect { from: String, error: String },
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HttpError::Resolve { host, error } => write!(f, "cannot resolve {host}: {error}"),
            HttpError::Connect { to, error } => write!(f, "cannot connect to {to}: {error}"),
            HttpError::Tls(e) => write!(f, "TLS: {e}"),
            HttpError::Io(e) => write!(f, "{e}"),
            HttpError::Malformed(e) => write!(f, "not an HTTP response: {e}"),
            HttpError::Redirect { from, error } => write!(f, "{from} redirects to {error}"),
        }
    }
}

impl std::error::Error for HttpError {}

/// Sends requests: plain, or TLS with the given CA certificates.
#[derive(Clone)]
pub struct Client {
    tls: Option<Arc<rustls::ClientConfig>>,
    /// Connecting, and each read or write, may take this long.
    pub timeout: Duration,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("tls", &self.tls.is_some())
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Client {
    /// A client trusting the certificates of `ca_pem` (a PEM bundle) for
    /// https; without one, https URLs are refused with the reason.
    pub fn new(ca_pem: Option<&[u8]>) -> Result<Client, HttpError> {
        let tls = match ca_pem {
            None => None,
            Some(pem) => {
                let mut roots = rustls::RootCertStore::empty();
                let mut n = 0;
                for cert in rustls_pemfile::certs(&mut &pem[..]) {
                    let cert = cert.map_err(|e| HttpError::Tls(format!("the CA bundle: {e}")))?;
                    roots
                        .add(cert)
                        .map_err(|e| HttpError::Tls(format!("the CA bundle: {e}")))?;
                    n += 1;
                }
                if n == 0 {
                    return Err(HttpError::Tls("the CA bundle holds no certificate".to_string()));
                }
                let provider = Arc::new(rustls::crypto::ring::default_provider());
                let config = rustls::ClientConfig::builder_with_provider(provider)
                    .with_safe_default_protocol_versions()
                    .map_err(|e| HttpError::Tls(e.to_string()))?
                    .with_root_certificates(roots)
                    .with_no_client_auth();
                Some(Arc::new(config))
            }
        };
        Ok(Client {
            tls,
            timeout: Duration::from_secs(10),
        })
    }

    /// One request: `method` on `url`, with `body` (its content type and
    /// bytes) if any. Any status is a response; no redirect is followed.
    pub fn request(&self, method: &str, url: &Url, body: Option<(&str, &[u8])>) -> Result<Response, HttpError> {
        let tls = match (url.scheme, &self.tls) {
            (Scheme::Http, _) => None,
            (Scheme::Https, Some(c)) => Some(c.clone()),
            (Scheme::Https, None) => {
                return Err(HttpError::Tls(format!(
                    "{}: https needs a CA bundle in the initramfs (bootbench-image initramfs --ca FILE)",
                    url.redacted()
                )))
            }
        };
        let to = format!("{}:{}", url.host, url.port);
        let addrs: Vec<_> = (url.host.as_str(), url.port)
            .to_socket_addrs()
            .map_err(|e| HttpError::Resolve {
                host: url.host.clone(),
                error: e.to_string(),
            })?
            .collect();
        let mut last = None;
        let mut tcp = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, self.timeout) {
                Ok(s) => {
                    tcp = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let tcp = tcp.ok_or_else(|| HttpError::Connect {
            to: to.clone(),
            error: last.map_or_else(|| "no address".to_string(), |e| e.to_string()),
        })?;
        let io = |e: std::io::Error| HttpError::Io(format!("{method} {}: {e}", url.redacted()));
        tcp.set_read_timeout(Some(self.timeout)).map_err(io)?;
        tcp.set_write_timeout(Some(self.timeout)).map_err(io)?;
        let mut head = format!(
            "{method} {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: bootbench/{}\r\nAccept: */*\r\nConnection: close\r\n",
            url.target,
            url.host_header(),
            env!("CARGO_PKG_VERSION")
        );
        match body {
            Some((ctype, bytes)) => head.push_str(&format!(
                "Content-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
                bytes.len()
            )),
            None if method == "PUT" || method == "POST" => head.push_str("Content-Length: 0\r\n\r\n"),
            None => head.push_str("\r\n"),
        }
        let payload = body.map_or(&[][..], |(_, b)| b);
        let raw = match tls {
            None => exchange(tcp, head.as_bytes(), payload).map_err(io)?,
            Some(config) => {
                let name = rustls::pki_types::ServerName::try_from(url.host.clone())
                    .map_err(|e| HttpError::Tls(format!("{}: {e}", url.host)))?;
                let conn = rustls::ClientConnection::new(config, name).map_err(|e| HttpError::Tls(e.to_string()))?;
                let stream = rustls::StreamOwned::new(conn, tcp);
                exchange(stream, head.as_bytes(), payload).map_err(|e| {
                    if e.get_ref().is_some_and(|i| i.is::<rustls::Error>()) {
                        HttpError::Tls(e.to_string())
                    } else {
                        io(e)
                    }
                })?
            }
        };
        parse_response(&raw, method == "HEAD")
    }

    /// GET `url`, following up to five redirects; the response and the URL
    /// it came from.
    pub fn get(&self, url: &Url) -> Result<(Response, Url), HttpError> {
        let mut url = url.clone();
        for _ in 0..5 {
            let r = self.request("GET", &url, None)?;
            match (r.status, &r.location) {
                (301 | 302 | 303 | 307 | 308, Some(loc)) => {
                    url = url.join(loc).map_err(|error| HttpError::Redirect {
                        from: url.redacted(),
                        error,
                    })?;
                }
                _ => return Ok((r, url)),
            }
        }
        Err(HttpError::Malformed(format!(
            "more than five redirects from {}",
            url.redacted()
        )))
    }
}

/// Write the request, then read the whole response (the server closes).
fn exchange<S: Read + Write>(mut s: S, head: &[u8], body: &[u8]) -> std::io::Result<Vec<u8>> {
    s.write_all(head)?;
    s.write_all(body)?;
    s.flush()?;
    let mut out = Vec::new();
    let mut buf = [0u8; 16 << 10];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                if out.len() > MAX_BODY + (64 << 10) {
                    return Err(std::io::Error::other(format!("response larger than {MAX_BODY} bytes")));
                }
                if complete(&out) {
                    break;
                }
            }
            // A TLS peer that closes without close_notify: what came is what there is.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !out.is_empty() => break,
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Whether `raw` holds a whole response whose length its head gives (so a
/// server that keeps the connection open despite `Connection: close` does
/// not hold the client until its timeout).
fn complete(raw: &[u8]) -> bool {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut r = httparse::Response::new(&mut headers);
    let Ok(httparse::Status::Complete(at)) = r.parse(raw) else {
        return false;
    };
    match content_length(r.headers) {
        Some(n) => raw.len() >= at.saturating_add(n),
        None => false,
    }
}

fn header<'h>(headers: &'h [httparse::Header<'_>], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(name))
        .and_then(|h| std::str::from_utf8(h.value).ok())
        .map(str::trim)
}

fn content_length(headers: &[httparse::Header<'_>]) -> Option<usize> {
    if header(headers, "Transfer-Encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
        return None;
    }
    header(headers, "Content-Length").and_then(|v| v.parse().ok())
}

/// Parse a whole response: the head, then the body by Content-Length,
/// chunked, or to the end.
pub fn parse_response(raw: &[u8], head_only: bool) -> Result<Response, HttpError> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut r = httparse::Response::new(&mut headers);
    let at = match r.parse(raw) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return Err(HttpError::Malformed(format!(
                "the connection closed after {} bytes, inside the head",
                raw.len()
            )))
        }
        Err(e) => return Err(HttpError::Malformed(e.to_string())),
    };
    let status = r.code.unwrap_or(0);
    let reason = r.reason.unwrap_or("").to_string();
    let location = header(r.headers, "Location").map(str::to_string);
    let rest = &raw[at..];
    let chunked = header(r.headers, "Transfer-Encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let body = if head_only || status == 204 || status == 304 || (100..200).contains(&status) {
        Vec::new()
    } else if chunked {
        dechunk(rest)?
    } else if let Some(n) = content_length(r.headers) {
        if rest.len() < n {
            return Err(HttpError::Malformed(format!(
                "the body ends after {} of its {n} bytes",
                rest.len()
            )));
        }
        rest[..n].to_vec()
    } else {
        rest.to_vec()
    };
    if body.len() > MAX_BODY {
        return Err(HttpError::Malformed(format!("a body larger than {MAX_BODY} bytes")));
    }
    Ok(Response {
        status,
        reason,
        body,
        location,
    })
}

/// Decode a chunked body (RFC 9112 7.1); trailers are dropped.
fn dechunk(mut s: &[u8]) -> Result<Vec<u8>, HttpError> {
    let bad = |why: &str| HttpError::Malformed(format!("chunked body: {why}"));
    let mut out = Vec::new();
    loop {
        let line_end = s
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or_else(|| bad("a size line without CRLF"))?;
        let line = std::str::from_utf8(&s[..line_end]).map_err(|_| bad("a size that is not text"))?;
        let size_hex = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_hex, 16).map_err(|_| bad("a size that is not hexadecimal"))?;
        s = &s[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if s.len() < size + 2 || &s[size..size + 2] != b"\r\n" {
            return Err(bad("a chunk shorter than its size"));
        }
        out.extend_from_slice(&s[..size]);
        if out.len() > MAX_BODY {
            return Err(bad("larger than the bound"));
        }
        s = &s[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn urls_parse_or_say_why_not() {
        let u = Url::parse("http://10.0.2.100:8080/results/m-{run}.json?x=1#frag").unwrap();
        assert_eq!(
            u,
            Url {
                scheme: Scheme::Http,
                host: "10.0.2.100".into(),
                port: 8080,
                target: "/results/m-{run}.json?x=1".into()
            }
        );
        assert_eq!(u.redacted(), "http://10.0.2.100:8080/results/m-{run}.json?...");
        let u = Url::parse("https://store.example").unwrap();
        assert_eq!((u.port, u.target.as_str()), (443, "/"));
        assert_eq!(u.host_header(), "store.example");
        let u = Url::parse("http://[fd00::1]:81?q").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.target.as_str()), ("fd00::1", 81, "/?q"));
        assert_eq!(u.host_header(), "[fd00::1]:81");
        for (bad, why) in [
            ("ftp://x/", "is not an http:// or https:// URL"),
            ("http:///path", "has no host"),
            ("http://x:0/", "is not a number from 1 to 65535"),
            ("http://x:http/", "is not a number"),
            ("http://u:p@x/", "user names and passwords"),
            ("http://x/a b", "white space"),
            ("http://[::1/", "lacks its ']'"),
        ] {
            let e = Url::parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let base = Url::parse("http://h:81/a/b.json").unwrap();
        assert_eq!(base.join("/c").unwrap().target, "/c");
        assert_eq!(base.join("d.json").unwrap().target, "/a/d.json");
        assert_eq!(base.join("https://o/x").unwrap().scheme, Scheme::Https);
    }

    /// Every parse error names the problem and quotes the URL without its
    /// query, fragment or userinfo, however malformed the rest is.
    #[test]
    fn a_bad_url_is_named_without_its_query_or_userinfo() {
        for (bad, why) in [
            (
                "http://10.0.2.2:99999/r/{machine}.json?X-Amz-Signature=SECRET",
                "\"http://10.0.2.2:99999/r/{machine}.json?...\": port \"99999\" is not a number from 1 to 65535",
            ),
            (
                "https://user:hunter2@host/r.json?token=SECRET",
                "\"https://...@host/r.json?...\": user names and passwords in URLs are not supported",
            ),
            (
                "https://user:hunter2@host:99999/r.json",
                "\"https://...@host:99999/r.json\": user names and passwords",
            ),
            // A password with a '/' or a '?': its first part is no port to quote.
            (
                "http://user:hun/ter2@host/r.json",
                "\"http://...@host/r.json\": user names",
            ),
            (
                "http://user:hun?ter2@host/r.json?sig=SECRET",
                "\"http://...@host/r.json?...\": user names",
            ),
            (
                "http://[::1/x?sig=SECRET",
                "\"http://[::1/x?...\": an IPv6 host lacks its ']'",
            ),
            (
                "http://[::1]x/?sig=SECRET",
                "\"http://[::1]x/?...\": \"x\" after the IPv6 host",
            ),
            ("http:///path?sig=SECRET", "\"http:///path?...\" has no host"),
            (
                "ftp://user:hunter2@h/x?sig=SECRET",
                "\"ftp://...@h/x?...\" is not an http:// or https:// URL",
            ),
            ("http://h/x?sig=SECRET hunter2", "\"http://h/x?...\" holds white space"),
            ("http://h:99999#SECRET", "\"http://h:99999#...\": port \"99999\""),
        ] {
            let e = Url::parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
            for secret in ["SECRET", "hunter2", "ter2", "user:"] {
                assert!(!e.contains(secret), "{bad}: {e}");
            }
        }
        let u = Url::parse("http://h:81/a/b.json").unwrap();
        let e = u.join("//user:hunter2@other/x?sig=SECRET").unwrap_err();
        assert!(e.starts_with("\"http://...@other/x?...\": user names"), "{e}");
        assert_eq!(u.join("//other:82/y?q").unwrap().redacted(), "http://other:82/y?...");
    }

    /// A redirect to a URL this client cannot take is an error naming both
    /// ends, neither with its query.
    #[test]
    fn a_redirect_to_a_bad_url_shows_no_query() {
        for (location, why) in [
            (
                &b"http://10.0.2.2:99999/r.json?X-Amz-Signature=SECRET"[..],
                "redirects to \"http://10.0.2.2:99999/r.json?...\": port \"99999\" is not a number",
            ),
            (
                b"https://user:hunter2@store/r.json?token=SECRET",
                "redirects to \"https://...@store/r.json?...\": user names and passwords",
            ),
        ] {
            let mut reply = b"HTTP/1.1 302 Found\r\nContent-Length: 0\r\nLocation: ".to_vec();
            reply.extend_from_slice(location);
            reply.extend_from_slice(b"\r\n\r\n");
            let (url, server) = serve_once(Box::leak(reply.into_boxed_slice()));
            let e = Client::new(None).unwrap().get(&url).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("http://127.0.0.1:{}/r/a.json?... {why}", url.port)),
                "{e}"
            );
            for secret in ["SECRET", "hunter2", "user:", "sig=secret"] {
                assert!(!e.contains(secret), "{e}");
            }
            drop(server.join());
        }
    }

    #[test]
    fn responses_by_length_chunked_and_to_the_end() {
        let r = parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcdef", false).unwrap();
        assert_eq!((r.status, r.body.as_slice()), (200, &b"abc"[..]));
        let r = parse_response(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: v\r\n\r\n",
            false,
        )
        .unwrap();
        assert_eq!(r.body, b"abcde");
        let r = parse_response(b"HTTP/1.0 404 Not Found\r\n\r\ngone", false).unwrap();
        assert_eq!(
            (r.status, r.reason.as_str(), r.body.as_slice()),
            (404, "Not Found", &b"gone"[..])
        );
        let r = parse_response(
            b"HTTP/1.1 302 Found\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n",
            false,
        )
        .unwrap();
        assert_eq!(r.location.as_deref(), Some("/x"));
        for (raw, why) in [
            (&b"HTTP/1.1 200 OK\r\nContent-Le"[..], "inside the head"),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc",
                "after 3 of its 9 bytes",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nz\r\n",
                "not hexadecimal",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\nab\r\n",
                "shorter than its size",
            ),
            (b"SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP response"),
        ] {
            let e = parse_response(raw, false).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
    }

    /// A one-shot server on the host's loopback: answers one connection
    /// with `reply`, and returns the request it read.
    fn serve_once(reply: &'static [u8]) -> (Url, std::thread::JoinHandle<Vec<u8>>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut req = Vec::new();
            let mut buf = [0u8; 4096];
            // Read the head and the body its Content-Length announces.
            loop {
                let n = s.read(&mut buf).unwrap();
                req.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&req).to_string();
                if let Some(i) = text.find("\r\n\r\n") {
                    let len = text
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                    if req.len() >= i + 4 + len {
                        break;
                    }
                }
                if n == 0 {
                    break;
                }
            }
            s.write_all(reply).unwrap();
            req
        });
        (
            Url::parse(&format!("http://127.0.0.1:{port}/r/a.json?sig=secret")).unwrap(),
            h,
        )
    }

    #[test]
    fn put_sends_the_body_and_reads_the_status() {
        let (url, server) = serve_once(b"HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n");
        let c = Client::new(None).unwrap();
        let r = c
            .request("PUT", &url, Some(("application/json", b"{\"a\":1}")))
            .unwrap();
        assert_eq!(r.status, 201);
        let req = String::from_utf8(server.join().unwrap()).unwrap();
        assert!(req.starts_with("PUT /r/a.json?sig=secret HTTP/1.1\r\n"), "{req}");
        assert!(req.contains(&format!("\r\nHost: 127.0.0.1:{}\r\n", url.port)), "{req}");
        assert!(
            req.contains("\r\nContent-Length: 7\r\n") && req.ends_with("\r\n\r\n{\"a\":1}"),
            "{req}"
        );
        assert!(req.contains("\r\nConnection: close\r\n"), "{req}");
    }

    #[test]
    fn get_reads_a_body_the_server_keeps_the_connection_open_after() {
        // The server does not close: the client stops at Content-Length.
        let (url, server) = serve_once(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
        let c = Client {
            timeout: Duration::from_secs(30),
            ..Client::new(None).unwrap()
        };
        let t = std::time::Instant::now();
        let (r, from) = c.get(&url).unwrap();
        assert_eq!((r.status, r.body.as_slice()), (200, &b"{}"[..]));
        assert_eq!(from, url);
        assert!(t.elapsed() < Duration::from_secs(20));
        drop(server);
    }

    /// HTTPS end to end on the loopback: rustls serves a certificate signed by a CA made here;
    /// the client trusts that CA's PEM and gets the body; a client trusting another CA refuses
    /// the server, and says it is TLS.
    #[test]
    fn https_with_the_bundles_ca_and_not_without() {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .signed_by(&key, &ca, &ca_key)
            .unwrap();
        let other_key = KeyPair::generate().unwrap();
        let mut other = CertificateParams::new(Vec::<String>::new()).unwrap();
        other.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let other = other.self_signed(&other_key).unwrap();

        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let server = Arc::new(
            rustls::ServerConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(
                    vec![cert.der().clone()],
                    rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
                )
                .unwrap(),
        );
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for tcp in l.incoming().flatten().take(2) {
                let conn = rustls::ServerConnection::new(server.clone()).unwrap();
                let mut s = rustls::StreamOwned::new(conn, tcp);
                let mut buf = [0u8; 2048];
                if s.read(&mut buf).is_ok() {
                    let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
                    s.conn.send_close_notify();
                    let _ = s.flush();
                }
            }
        });
        let url = Url::parse(&format!("https://localhost:{port}/config.json")).unwrap();
        let good = Client::new(Some(ca.pem().as_bytes())).unwrap();
        let (r, _) = good.get(&url).unwrap();
        assert_eq!((r.status, r.body.as_slice()), (200, &b"hello"[..]));
        let wrong = Client::new(Some(other.pem().as_bytes())).unwrap();
        let e = wrong.get(&url).unwrap_err();
        assert!(matches!(e, HttpError::Tls(_)), "{e}");
        assert!(e.to_string().contains("certificate"), "{e}");
    }

    #[test]
    fn refusals_say_where_and_https_needs_a_bundle() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        drop(l);
        let c = Client::new(None).unwrap();
        let e = c
            .request("GET", &Url::parse(&format!("http://127.0.0.1:{port}/x")).unwrap(), None)
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("cannot connect to 127.0.0.1:{port}")),
            "{e}"
        );
        let https = Url::parse(&format!("https://127.0.0.1:{port}/x")).unwrap();
        let e = c.request("GET", &https, None).unwrap_err().to_string();
        assert!(e.contains("https needs a CA bundle in the initramfs"), "{e}");
        assert!(Client::new(Some(b"not pem"))
            .unwrap_err()
            .to_string()
            .contains("holds no certificate"));
    }
}
