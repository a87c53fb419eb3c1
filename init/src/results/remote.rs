//! Results to existing storage: the `results_url` template, the document
//! sent with PUT (S3 presigned URLs, MinIO, a WebDAV or plain HTTP server
//! that takes PUT), retried with backoff within a bound, and the run-once
//! check: a GET of the same URL.
//!
//! The template's placeholders: `{machine}` (the stick file's machine name:
//! the DMI product serial, or `unknown`), `{run}` (the plan's id: the same
//! for every boot of one config on the same disks, see
//! `bench_core::document::result::RunInfo::plan_id`) and `{n}` (1 for this machine's
//! first document of this plan, then 2, ...: the first number whose GET
//! answers 404).

use std::time::{Duration, Instant};

pub use bench_core::vocab::url::{Template, PLACEHOLDERS};

use crate::net::http::{Client, HttpError, Url};
use crate::results::beside::{self, Evidence};

/// How long sending one document may take, retries included.
pub const SEND_BOUND: Duration = Duration::from_secs(30);

/// The highest `{n}` looked for.
const MAX_N: u32 = 999;

/// What came of one URL.
#[derive(Debug)]
enum Outcome {
    /// The server answered with this status.
    Status(u16),
    /// No answer (connection, timeout, TLS).
    Failed(HttpError),
}

fn fetch_status(client: &Client, method: &str, url: &Url, body: Option<(&str, &[u8])>) -> Outcome {
    match client.request(method, url, body) {
        Ok(r) => Outcome::Status(r.status),
        Err(e) => Outcome::Failed(e),
    }
}

/// Whether a result of this machine and plan is at the template's URL
/// already, `{run}` being any of `runs` (the plan's id and the one earlier
/// versions gave it; the URL of `{n}` = 1 answers a GET with 2xx):
/// Ok(Some(url)) when it is, Ok(None) when the server says it is not (404)
/// or cannot say (403 or 405 to a GET: a presigned PUT URL), Err when it
/// cannot be asked.
pub fn already_sent(
    client: &Client,
    template: &Template,
    machine: &str,
    runs: &[&str],
) -> Result<Option<String>, String> {
    let mut asked = Vec::new();
    for run in runs {
        let text = template.expand(machine, run, 1);
        if asked.contains(&text) {
            continue;
        }
        let url = Url::parse(&text)?;
        match fetch_status(client, "GET", &url, None) {
            Outcome::Status(s) if (200..300).contains(&s) => return Ok(Some(url.redacted())),
            Outcome::Status(_) => asked.push(text),
            Outcome::Failed(e) => return Err(e.to_string()),
        }
    }
    Ok(None)
}

/// The `{n}` to use: the first whose URL answers a GET with 404; 1 when the
/// template has none, or the server answers neither 404 nor 2xx (it cannot
/// say; the PUT may then replace a document).
fn free_n(client: &Client, template: &Template, machine: &str, run: &str) -> u32 {
    if !template.numbered() {
        return 1;
    }
    for n in 1..=MAX_N {
        let Ok(url) = template.url(machine, run, n) else {
            return 1;
        };
        match fetch_status(client, "GET", &url, None) {
            Outcome::Status(s) if (200..300).contains(&s) => continue,
            _ => return n,
        }
    }
    MAX_N
}

/// Whether a PUT's failure may go away on a retry: no answer, a server
/// error, 408 or 429. A refusal (403, 404, 405, ...) will not.
fn worth_retrying(o: &Outcome) -> bool {
    match o {
        Outcome::Failed(_) => true,
        Outcome::Status(s) => *s >= 500 || *s == 408 || *s == 429,
    }
}

/// Send `json` with PUT to the template's URL for this machine and plan,
/// at the first free `{n}`; tries again after 1, 2, 4, ... s while the
/// failure may go away and `bound` allows. The URL it went to (shown
/// [`Url::redacted`]: it may hold a presigned query), or why it did not go.
pub fn send(
    client: &Client,
    template: &Template,
    machine: &str,
    run: &str,
    json: &[u8],
    bound: Duration,
    log: &mut dyn FnMut(&str),
) -> Result<Url, String> {
    let start = Instant::now();
    let n = free_n(client, template, machine, run);
    let url = template.url(machine, run, n)?;
    put(client, &url, ("application/json", json), start, bound, log)?;
    Ok(url)
}

/// PUT `body` (its content type and bytes) to `url`, tried again after 1,
/// 2, 4, ... s while the failure may go away and `bound` from `start`
/// allows.
fn put(
    client: &Client,
    url: &Url,
    body: (&str, &[u8]),
    start: Instant,
    bound: Duration,
    log: &mut dyn FnMut(&str),
) -> Result<(), String> {
    let mut delay = Duration::from_secs(1);
    for attempt in 1.. {
        let outcome = fetch_status(client, "PUT", url, Some(body));
        let why = match &outcome {
            Outcome::Status(s) if (200..300).contains(s) => return Ok(()),
            Outcome::Status(s) => format!("the server answered {s}"),
            Outcome::Failed(e) => e.to_string(),
        };
        let left = bound.saturating_sub(start.elapsed());
        if !worth_retrying(&outcome) || left <= delay {
            return Err(format!(
                "PUT {}: {why} (attempt {attempt}, {} ms)",
                url.redacted(),
                start.elapsed().as_millis()
            ));
        }
        log(&format!(
            "results URL: PUT {}: {why}; again in {} s",
            url.redacted(),
            delay.as_secs()
        ));
        std::thread::sleep(delay);
        delay *= 2;
    }
    unreachable!("the loop returns")
}

/// Each file of `files` with PUT beside the document sent to `doc`
/// ([`beside::url_beside`]: the same name as on the stick, the query kept),
/// as `application/octet-stream`, each within `bound`: where each went, or
/// why not.
pub fn send_beside(
    client: &Client,
    doc: &Url,
    files: &[Evidence],
    bound: Duration,
    log: &mut dyn FnMut(&str),
) -> Vec<Result<String, String>> {
    files
        .iter()
        .map(|e| {
            let url = beside::url_beside(doc, &e.file);
            put(
                client,
                &url,
                ("application/octet-stream", &e.bytes),
                Instant::now(),
                bound,
                log,
            )
            .map(|()| url.redacted())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};

    #[test]
    fn templates_fill_in_and_name_what_is_wrong() {
        let t = "http://10.0.2.100/r/{machine}/{run}-{n}.json";
        let t = Template::parse(t).unwrap();
        assert_eq!(t.expand("SN1", "ab12", 3), "http://10.0.2.100/r/SN1/ab12-3.json");
        for (bad, why) in [
            ("http://h/{host}.json", "\"{host}\" is not a placeholder"),
            ("http://h/{machine.json", "\"{machine.json\" is not a placeholder"),
            ("http://h/}", "\"}\" is not a placeholder"),
            ("ftp://h/{n}", "not an http:// or https:// URL"),
            ("{machine}", "not an http:// or https:// URL"),
        ] {
            let e = Template::parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    /// No error quotes a template's query or userinfo: not the URL's, not
    /// a placeholder's; and quoting a bad placeholder never cuts a character.
    #[test]
    fn template_errors_quote_no_query_nor_userinfo() {
        for (bad, why) in [
            (
                "http://10.0.2.2:99999/r/{machine}.json?X-Amz-Signature=SECRET",
                "\"http://10.0.2.2:99999/r/machine.json?...\": port \"99999\" is not a number from 1 to 65535",
            ),
            (
                "https://user:hunter2@host/r.json?token=SECRET",
                "\"https://...@host/r.json?...\": user names and passwords in URLs are not supported",
            ),
            (
                "http://h/r/{machine}.json?X-Amz-Signature={SECRET}",
                "a \"{\" in the query (not shown: a query may hold a credential) is not a placeholder; \
                 expected {machine}, {run}, {n}",
            ),
            ("http://h/r.json?sig=SECRET}", "a \"}\" in the query (not shown"),
            (
                "http://{user}:hunter2@h/r.json",
                "a \"{\" in the user name or password (not shown) is not a placeholder",
            ),
            // Quoted up to the query, not into it.
            ("http://h/{x?sig=SECRET", "\"{x\" is not a placeholder"),
            ("http://h/r/{machin#SECRET", "\"{machin\" is not a placeholder"),
            (
                "http://[::1/{machine}?sig=SECRET",
                "\"http://[::1/machine?...\": an IPv6 host lacks its ']'",
            ),
        ] {
            let e = Template::parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
            for secret in ["SECRET", "hunter2", "user:", "{user}"] {
                assert!(!e.contains(secret), "{bad}: {e}");
            }
        }
        // 24 bytes at most, cut at a character's end (byte 24 is inside an 'é').
        let e = Template::parse(&format!("http://h/{{{}}}", "é".repeat(20))).unwrap_err();
        assert!(
            e.starts_with(&format!("\"{{{}\" is not a placeholder", "é".repeat(11))),
            "{e}"
        );
    }

    /// A tiny stand-in for a WebDAV store on the host's loopback: GET
    /// answers 200 with what a PUT stored, else 404; PUT stores (201). The
    /// first `fail_puts` PUTs get 503. (The end-to-end tests use nginx.)
    type Files = Arc<Mutex<HashMap<String, Vec<u8>>>>;

    fn store(fail_puts: usize) -> (u16, Files, Arc<Mutex<Vec<String>>>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let files: Files = Arc::default();
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let (f, s) = (files.clone(), seen.clone());
        std::thread::spawn(move || {
            let mut fails = fail_puts;
            for c in l.incoming() {
                let Ok(mut c) = c else { return };
                let mut req = Vec::new();
                let mut buf = [0u8; 65536];
                loop {
                    let n = c.read(&mut buf).unwrap_or(0);
                    req.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&req).to_string();
                    let done = text.find("\r\n\r\n").is_some_and(|i| {
                        let len = text
                            .lines()
                            .find_map(|l| l.strip_prefix("Content-Length: "))
                            .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                        req.len() >= i + 4 + len
                    });
                    if done || n == 0 {
                        break;
                    }
                }
                let text = String::from_utf8_lossy(&req).to_string();
                let mut words = text.split(' ');
                let (method, path) = (
                    words.next().unwrap_or("").to_string(),
                    words.next().unwrap_or("").to_string(),
                );
                s.lock().unwrap().push(format!("{method} {path}"));
                let reply = match method.as_str() {
                    "GET" => match f.lock().unwrap().get(&path) {
                        Some(b) => {
                            let mut r = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", b.len()).into_bytes();
                            r.extend_from_slice(b);
                            r
                        }
                        None => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec(),
                    },
                    "PUT" if fails > 0 => {
                        fails -= 1;
                        b"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n".to_vec()
                    }
                    "PUT" => {
                        let body = req
                            .windows(4)
                            .position(|w| w == b"\r\n\r\n")
                            .map(|i| req[i + 4..].to_vec())
                            .unwrap_or_default();
                        f.lock().unwrap().insert(path, body);
                        b"HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n".to_vec()
                    }
                    _ => b"HTTP/1.1 405 No\r\nContent-Length: 0\r\n\r\n".to_vec(),
                };
                let _ = c.write_all(&reply);
            }
        });
        (port, files, seen)
    }

    #[test]
    fn a_document_goes_to_the_first_free_n_and_is_found_again() {
        let (port, files, seen) = store(0);
        let c = Client::new(None).unwrap();
        let t = Template::parse(&format!("http://127.0.0.1:{port}/r/{{machine}}-{{run}}-{{n}}.json")).unwrap();
        assert_eq!(already_sent(&c, &t, "SN1", &["ab"]), Ok(None));
        let url = send(&c, &t, "SN1", "ab", b"{\"one\":1}", SEND_BOUND, &mut |_| {})
            .unwrap()
            .redacted();
        assert_eq!(url, format!("http://127.0.0.1:{port}/r/SN1-ab-1.json"));
        assert_eq!(files.lock().unwrap()["/r/SN1-ab-1.json"], b"{\"one\":1}");
        assert_eq!(already_sent(&c, &t, "SN1", &["ab"]), Ok(Some(url.clone())));
        assert_eq!(already_sent(&c, &t, "SN2", &["ab"]), Ok(None), "another machine's");
        assert_eq!(already_sent(&c, &t, "SN1", &["cd"]), Ok(None), "another plan's");
        assert_eq!(
            already_sent(&c, &t, "SN1", &["cd", "ab"]),
            Ok(Some(url)),
            "by the id an earlier version gave the plan"
        );
        // A second document of the same machine and plan does not replace the first.
        send(&c, &t, "SN1", "ab", b"{\"two\":2}", SEND_BOUND, &mut |_| {}).unwrap();
        assert_eq!(files.lock().unwrap()["/r/SN1-ab-1.json"], b"{\"one\":1}");
        assert_eq!(files.lock().unwrap()["/r/SN1-ab-2.json"], b"{\"two\":2}");
        assert!(seen.lock().unwrap().iter().any(|r| r == "GET /r/SN1-ab-2.json"));
    }

    #[test]
    fn a_busy_server_gets_retries_a_down_one_gives_up_within_the_bound() {
        let (port, files, _) = store(2);
        let c = Client::new(None).unwrap();
        let t = Template::parse(&format!("http://127.0.0.1:{port}/r/{{machine}}.json")).unwrap();
        let mut lines = Vec::new();
        send(&c, &t, "SN1", "ab", b"{}", SEND_BOUND, &mut |m| {
            lines.push(m.to_string())
        })
        .unwrap();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].contains("the server answered 503; again in 1 s"), "{lines:?}");
        assert!(lines[1].contains("again in 2 s"), "{lines:?}");
        assert!(files.lock().unwrap().contains_key("/r/SN1.json"));
        // Nothing listens: retries until the bound, then the reason.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let down = l.local_addr().unwrap().port();
        drop(l);
        let t = Template::parse(&format!("http://127.0.0.1:{down}/r/{{machine}}.json")).unwrap();
        let start = Instant::now();
        let bound = Duration::from_secs(4);
        let mut lines = Vec::new();
        let e = send(&c, &t, "SN1", "ab", b"{}", bound, &mut |m| lines.push(m.to_string())).unwrap_err();
        assert!(
            start.elapsed() <= bound + Duration::from_secs(1),
            "{:?}",
            start.elapsed()
        );
        assert!(
            e.contains("cannot connect to 127.0.0.1") && e.contains("attempt 3"),
            "{e} {lines:?}"
        );
        assert_eq!(
            already_sent(&c, &t, "SN1", &["ab"]).unwrap_err().split(':').next(),
            Some("cannot connect to 127.0.0.1")
        );
    }

    /// A failed disk's telemetry log goes with PUT beside the document, at
    /// the document's URL with `.json` made `.<file>`, its bytes as they
    /// are (binary, not text); the query of a URL is kept.
    #[test]
    fn telemetry_goes_beside_the_document() {
        let (port, files, seen) = store(0);
        let c = Client::new(None).unwrap();
        let t = Template::parse(&format!("http://127.0.0.1:{port}/r/{{machine}}-{{n}}.json?k=v")).unwrap();
        let doc = send(&c, &t, "SN1", "ab", b"{}", SEND_BOUND, &mut |_| {}).unwrap();
        let bytes: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
        let ev = [Evidence {
            file: "nvme0n1.telemetry.bin".into(),
            bytes: bytes.clone(),
        }];
        let sent = send_beside(&c, &doc, &ev, SEND_BOUND, &mut |_| {});
        assert_eq!(
            sent,
            vec![Ok(format!("http://127.0.0.1:{port}/r/SN1-1.nvme0n1.telemetry.bin?..."))]
        );
        assert!(seen
            .lock()
            .unwrap()
            .iter()
            .any(|r| r == "PUT /r/SN1-1.nvme0n1.telemetry.bin?k=v"));
        assert_eq!(files.lock().unwrap()["/r/SN1-1.nvme0n1.telemetry.bin?k=v"], bytes);
    }
}
