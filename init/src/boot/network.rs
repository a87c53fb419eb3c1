//! The unattended run's use of the network: the config from
//! `bootbench.config_url=`, the results to `results_url`, and the run-once
//! guard. The network comes up the first time something needs it
//! ([`Network::client`]).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::boot::cmdline::{Cmdline, Key};
use crate::net::{self, http};
use crate::results::beside::Evidence;
use crate::results::remote;
use bench_core::vocab::url::Template;

/// Present in an initramfs built with `bootbench-image initramfs
/// --allow-network-destructive`: only then may a config from the network
/// write to disks.
pub use bench_core::boot::initramfs::NETWORK_DESTRUCTIVE as ALLOW_NETWORK_DESTRUCTIVE;

/// Why a config from the network writes nothing without that file.
pub const NETWORK_WITHHELD: &str = "writes withheld: the config came from the network (bootbench.config_url) and \
     this initramfs was not built with --allow-network-destructive (whoever controls that URL could otherwise \
     wipe disks)";

/// How long fetching the config may take, retries included.
pub const CONFIG_BOUND: Duration = Duration::from_secs(60);

/// The network, brought up on first use.
#[derive(Debug)]
pub struct Network<'c> {
    cmdline: &'c Cmdline,
    state: Option<Result<http::Client, String>>,
}

impl<'c> Network<'c> {
    /// Nothing is done until [`Network::client`].
    pub fn new(cmdline: &'c Cmdline) -> Self {
        Network { cmdline, state: None }
    }

    /// An HTTP client, the network up (once; a failure is kept and said
    /// again to every later caller).
    pub fn client(&mut self, log: &mut dyn FnMut(&str)) -> Result<&http::Client, String> {
        if self.state.is_none() {
            let t = Instant::now();
            let r = net::up(self.cmdline.get(Key::Ip), self.cmdline.get_raw("BOOTIF"), log)
                .map_err(|e| format!("network: {e}"))
                .and_then(|n| {
                    log(&format!("network: {n}; up in {} ms", t.elapsed().as_millis()));
                    net::client().map_err(|e| format!("network: {e}"))
                });
            if let Err(e) = &r {
                log(e);
            }
            self.state = Some(r);
        }
        match self.state.as_ref() {
            Some(Ok(c)) => Ok(c),
            Some(Err(e)) => Err(e.clone()),
            None => Err("network: not brought up".to_string()),
        }
    }
}

/// Whether this initramfs lets a config from the network write.
pub fn network_may_write() -> bool {
    Path::new(ALLOW_NETWORK_DESTRUCTIVE).exists()
}

/// GET the config at `url` (following redirects), again after 1, 2, 4, ...
/// s while there is no answer or a server error, within `bound`. The text,
/// and where it came from (without the query), or why not, naming the key.
pub fn fetch_config(
    client: &http::Client,
    url: &str,
    bound: Duration,
    log: &mut dyn FnMut(&str),
) -> Result<(String, String), String> {
    fetch_text(client, Key::ConfigUrl, url, "the config (JSON)", bound, log)
}

/// The most hex digits a nonce may have: 32 bytes, a SHA-256's size.
const NONCE_HEX_MAX: usize = 64;
/// The fewest: 8 bytes.
const NONCE_HEX_MIN: usize = 16;

/// GET a verifier's nonce at `url` ([`Key::NonceUrl`]), as [`fetch_config`]
/// does: its body, blanks around it aside, is 16 to 64 hex digits (8 to 32
/// bytes). The nonce's bytes, or why not, naming the key and the value.
pub fn fetch_nonce(
    client: &http::Client,
    url: &str,
    bound: Duration,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<u8>, String> {
    let key = Key::NonceUrl;
    let (text, from) = fetch_text(client, key, url, "a nonce (hex)", bound, log)?;
    let text = text.trim();
    parse_nonce(text).ok_or_else(|| {
        let shown: String = text.chars().take(80).collect();
        format!(
            "{key}: GET {from} answered {shown:?}; expected {NONCE_HEX_MIN} to {NONCE_HEX_MAX} hex digits, an even number (a nonce of 8 to 32 bytes)"
        )
    })
}

/// `hex` as bytes, when it is a nonce's length of hex digits.
fn parse_nonce(hex: &str) -> Option<Vec<u8>> {
    if !(NONCE_HEX_MIN..=NONCE_HEX_MAX).contains(&hex.len()) {
        return None;
    }
    bench_core::vocab::hex::decode(hex)
}

/// GET the text at `url`, the value of `key`, retrying as [`fetch_config`]
/// says; `expected` names what the text should be.
fn fetch_text(
    client: &http::Client,
    key: Key,
    url: &str,
    expected: &str,
    bound: Duration,
    log: &mut dyn FnMut(&str),
) -> Result<(String, String), String> {
    let parsed = http::Url::parse(url).map_err(|e| format!("{key}: {e}"))?;
    let start = Instant::now();
    let mut delay = Duration::from_secs(1);
    loop {
        let (why, again) = match client.get(&parsed) {
            Ok((r, from)) if r.status == 200 => {
                let text =
                    String::from_utf8(r.body).map_err(|_| format!("{key}: {} is not UTF-8 text", from.redacted()))?;
                return Ok((text, from.redacted()));
            }
            Ok((r, from)) => (
                format!("GET {} answered {} {}", from.redacted(), r.status, r.reason),
                r.status >= 500 || r.status == 408 || r.status == 429,
            ),
            Err(e) => (format!("GET {}: {e}", parsed.redacted()), true),
        };
        if !again || bound.saturating_sub(start.elapsed()) <= delay {
            return Err(format!(
                "{key}: {why} (after {} ms); expected {expected}",
                start.elapsed().as_millis()
            ));
        }
        log(&format!("{key}: {why}; again in {} s", delay.as_secs()));
        std::thread::sleep(delay);
        delay *= 2;
    }
}

/// Whether `bootbench.force=1` is on the command line (run even if this
/// machine ran this plan already).
pub fn forced(cmdline: &Cmdline) -> bool {
    cmdline.get(Key::Force).is_some_and(|v| v == "1")
}

/// Send `json` to `template` for this machine and plan, then `files`
/// beside it ([`remote::send_beside`]); say where each went or why not.
pub fn send(
    net: &mut Network<'_>,
    template: &Template,
    machine: &str,
    run: &str,
    json: &[u8],
    files: &[Evidence],
    log: &mut dyn FnMut(&str),
) {
    let client = match net.client(log) {
        Ok(c) => c,
        Err(e) => {
            return log(&format!(
                "results not sent to the results URL: {e}; they are on the serial console (and the stick, if any)"
            ))
        }
    };
    match remote::send(client, template, machine, run, json, remote::SEND_BOUND, log) {
        Ok(url) => {
            log(&format!("results sent to {}", url.redacted()));
            let sent = remote::send_beside(client, &url, files, remote::SEND_BOUND, log);
            crate::results::beside::say("telemetry log", &sent, log);
        }
        Err(e) => log(&format!(
            "results not sent to the results URL: {e}; they are on the serial console (and the stick, if any)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A simulated plan of `config`, the command line's keys merged (the
    /// URLs' checks are the merge's: [`super::super::overrides`]).
    fn merged(config: &str, cmdline: &str) -> Result<crate::plan::Plan, String> {
        let disks = [bench_core::document::result::TargetInfo {
            path: "sim:ssd:64M".to_string(),
            ..Default::default()
        }];
        let ov = crate::plan::Overrides {
            simulate: true,
            ..Default::default()
        };
        let raw = crate::plan::parse(config, "t.json");
        let cmd = super::super::overrides::CmdlineOverrides::read(&Cmdline::parse(cmdline));
        let (plan, ..) =
            super::super::unattended::plan_unattended(&raw, "t.json", &cmd, &disks, &[], &ov).map_err(|i| i.message)?;
        Ok(plan)
    }

    fn results_url(config: &str, cmdline: &str) -> Result<Option<String>, String> {
        merged(config, cmdline).map(|p| p.results_url.map(|t| t.as_str().to_string()))
    }

    fn metrics_url(config: &str, cmdline: &str) -> Result<Option<String>, String> {
        merged(config, cmdline).map(|p| p.metrics_url.map(|u| u.to_string()))
    }

    /// An HTTP server on a free loopback port for `n` connections, each
    /// answered with `reply` of its request's first read; its port.
    fn serve(n: usize, reply: fn(&str) -> String) -> u16 {
        use std::io::{Read, Write};
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for mut c in l.incoming().flatten().take(n) {
                let mut b = [0u8; 1024];
                let got = c.read(&mut b).unwrap_or(0);
                let _ = c.write_all(reply(&String::from_utf8_lossy(&b[..got])).as_bytes());
            }
        });
        port
    }

    const CONFIG: &str = r#"{"profile": "quick", "results_url": "http://other/x", "metrics_url": "http://other:9091"}"#;

    #[test]
    fn the_command_line_key_wins_and_is_checked() {
        let key = "bootbench.results_url=http://h/{machine}-{n}.json";
        assert_eq!(
            results_url(CONFIG, key).unwrap().as_deref(),
            Some("http://h/{machine}-{n}.json")
        );
        assert_eq!(results_url(CONFIG, "quiet").unwrap().as_deref(), Some("http://other/x"));
        assert_eq!(results_url(r#"{"profile": "quick"}"#, "quiet").unwrap(), None);
        let e = results_url(CONFIG, "bootbench.results_url=http://h/{host}").unwrap_err();
        assert!(
            e.starts_with("bootbench.results_url: \"{host}\" is not a placeholder"),
            "{e}"
        );
        assert!(forced(&Cmdline::parse("bootbench.force=1")));
        assert!(!forced(&Cmdline::parse("bootbench.force=0 bootbench.force")));
    }

    /// `bootbench.metrics_url=` over the config's, checked, its query
    /// never quoted.
    #[test]
    fn the_command_line_metrics_url_wins_and_is_checked() {
        let key = "bootbench.metrics_url=http://10.0.2.2:9091";
        assert_eq!(
            metrics_url(CONFIG, key).unwrap().as_deref(),
            Some("http://10.0.2.2:9091/")
        );
        assert_eq!(
            metrics_url(CONFIG, "quiet").unwrap().as_deref(),
            Some("http://other:9091/")
        );
        assert_eq!(metrics_url(r#"{"profile": "quick"}"#, "quiet").unwrap(), None);
        let e = metrics_url(CONFIG, "bootbench.metrics_url=http://gw:9091/?token=SECRET").unwrap_err();
        assert!(
            e.starts_with("bootbench.metrics_url: \"http://gw:9091/?...\": a query or fragment (not shown)"),
            "{e}"
        );
        assert!(!e.contains("SECRET"), "{e}");
    }

    /// A bad URL on the command line is an error naming the key and the
    /// problem, never the query or the userinfo.
    #[test]
    fn bad_command_line_urls_are_named_without_credentials() {
        let secrets = ["SECRET", "hunter2", "user:"];
        for (url, why) in [
            (
                "http://10.0.2.2:99999/r/{machine}.json?X-Amz-Signature=SECRET",
                "bootbench.results_url: \"http://10.0.2.2:99999/r/machine.json?...\": port \"99999\" is not a number",
            ),
            (
                "https://user:hunter2@host/r.json?token=SECRET",
                "bootbench.results_url: \"https://...@host/r.json?...\": user names and passwords",
            ),
            (
                "http://h/{machine}.json?sig={SECRET}",
                "bootbench.results_url: a \"{\" in the query (not shown",
            ),
        ] {
            let e = results_url(CONFIG, &format!("bootbench.results_url={url}")).unwrap_err();
            assert!(e.starts_with(why), "{e}");
            assert!(secrets.iter().all(|s| !e.contains(s)), "{e}");
        }
        let client = http::Client::new(None).unwrap();
        for (url, why) in [
            (
                "http://10.0.2.2:99999/c.json?X-Amz-Signature=SECRET",
                "bootbench.config_url: \"http://10.0.2.2:99999/c.json?...\": port \"99999\" is not a number",
            ),
            (
                "https://user:hunter2@host/c.json?token=SECRET",
                "bootbench.config_url: \"https://...@host/c.json?...\": user names and passwords",
            ),
            (
                "http://[::1/c.json?sig=SECRET",
                "bootbench.config_url: \"http://[::1/c.json?...\": an IPv6 host lacks its ']'",
            ),
        ] {
            let e = fetch_config(&client, url, CONFIG_BOUND, &mut |_| {}).unwrap_err();
            assert!(e.starts_with(why), "{e}");
            assert!(secrets.iter().all(|s| !e.contains(s)), "{e}");
        }
    }

    #[test]
    fn a_config_url_that_answers_404_is_an_error_naming_the_key() {
        let port = serve(2, |req| {
            if req.starts_with("GET /good.json") {
                "HTTP/1.1 200 OK\r\nContent-Length: 19\r\n\r\n{\"profile\":\"quick\"}".to_string()
            } else {
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_string()
            }
        });
        let client = http::Client::new(None).unwrap();
        let (text, from) = fetch_config(
            &client,
            &format!("http://127.0.0.1:{port}/good.json?token=x"),
            CONFIG_BOUND,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(text, "{\"profile\":\"quick\"}");
        assert_eq!(from, format!("http://127.0.0.1:{port}/good.json?..."));
        let e = fetch_config(
            &client,
            &format!("http://127.0.0.1:{port}/gone.json"),
            CONFIG_BOUND,
            &mut |_| {},
        )
        .unwrap_err();
        assert!(
            e.starts_with(&format!(
                "bootbench.config_url: GET http://127.0.0.1:{port}/gone.json answered 404 Not Found"
            )),
            "{e}"
        );
        let e = fetch_config(&client, "ftp://x/", CONFIG_BOUND, &mut |_| {}).unwrap_err();
        assert!(
            e.starts_with("bootbench.config_url: \"ftp://x/\" is not an http"),
            "{e}"
        );
    }

    /// A nonce: hex digits of 8 to 32 bytes, blanks around them aside;
    /// anything else is refused naming the key, the answer and what is expected.
    #[test]
    fn a_nonce_is_hex_of_8_to_32_bytes_or_refused_by_name() {
        let port = serve(3, |req| {
            let body = if req.starts_with("GET /good") {
                "00112233445566778899aabbccddeeff\n"
            } else if req.starts_with("GET /short") {
                "0011"
            } else {
                "not hex at all, not hex at all"
            };
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len())
        });
        let client = http::Client::new(None).unwrap();
        let url = |p: &str| format!("http://127.0.0.1:{port}/{p}");
        let nonce = fetch_nonce(&client, &url("good"), CONFIG_BOUND, &mut |_| {}).unwrap();
        assert_eq!(
            nonce,
            [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff]
        );
        for (path, answer) in [("short", "\"0011\""), ("bad", "\"not hex at all")] {
            let e = fetch_nonce(&client, &url(path), CONFIG_BOUND, &mut |_| {}).unwrap_err();
            assert!(
                e.starts_with(&format!("bootbench.nonce_url: GET {} answered {answer}", url(path)))
                    && e.ends_with("expected 16 to 64 hex digits, an even number (a nonce of 8 to 32 bytes)"),
                "{e}"
            );
        }
        assert_eq!(parse_nonce(&"ab".repeat(32)).map(|n| n.len()), Some(32));
        assert_eq!(parse_nonce(&"ab".repeat(33)), None);
        assert_eq!(parse_nonce("0123456789abcdef0"), None, "odd");
        assert_eq!(parse_nonce(&"+1".repeat(8)), None, "a sign is not a digit");
    }
}
