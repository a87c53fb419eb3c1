//! How a URL is shown to people: without its user name and password (the
//! userinfo, `user:pass@`) and without its query and fragment. A presigned
//! URL's query is its credential (`X-Amz-Signature=...`), and a userinfo is
//! one too: neither may reach a message, a log line or a result document.
//!
//! [`redact`] works on any text, a URL that failed to parse included (a bad
//! port, no scheme, an unclosed `[`): an error must still say which URL it
//! is about, and it is the error paths that see the most malformed text.
//! `bootbench-init` shows every URL it is given through it (here, in the
//! no_std core, so that a host tool that quotes such URLs can do the same).
//!
//! [`Url`] is an http(s) URL parsed once (where a config is validated, or
//! a command line read) and carried typed; it cannot show its query:
//! its `Display` and `Debug` are [`Url::redacted`]. [`Template`] is a
//! `results_url`: a URL with placeholders, checked once, shown the same
//! way.

use alloc::format;
use alloc::string::{String, ToString};
use core::fmt;

/// What stands for a hidden userinfo.
const HIDDEN_USER: &str = "...@";

/// Where the parts of URL-ish text are.
struct Parts {
    /// Where the authority starts: after the first `://` before the query,
    /// or 0 without one.
    start: usize,
    /// Just past the `@` that ends a userinfo, if there is one.
    user_end: Option<usize>,
    /// The `?` or `#` that starts the query or fragment, if there is one.
    cut: Option<usize>,
}

/// The first `?` or `#` of `text` at or after `from`.
fn query_at(text: &str, from: usize) -> Option<usize> {
    text[from..].find(['?', '#']).map(|i| from + i)
}

/// Whether `authority` (no userinfo in it) has a `:` followed by something
/// that is no port number: `user:pa` of `user:pa/ss@host`, a password that
/// holds a `/`, `?` or `#` and so ended the authority early.
fn colon_without_port(authority: &str) -> bool {
    let host_port = match authority.strip_prefix('[') {
        Some(v6) => v6.split_once(']').map_or("", |(_, after)| after),
        None => authority,
    };
    host_port
        .split_once(':')
        .is_some_and(|(_, port)| !port.bytes().all(|b| b.is_ascii_digit()))
}

fn parts(text: &str) -> Parts {
    let mut cut = query_at(text, 0);
    let head = &text[..cut.unwrap_or(text.len())];
    let start = head.find("://").map_or(0, |i| i + 3);
    let auth_end = head[start..].find(['/', '\\']).map_or(head.len(), |i| start + i);
    let authority = &head[start..auth_end];
    let user_end = match authority.rfind('@') {
        Some(at) => Some(start + at + 1),
        // `user:pa/ss@host`: the userinfo runs to the first `@` after the
        // authority, the query's included (`user:pa?ss@host`), and the
        // query starts after it.
        None if colon_without_port(authority) => text[auth_end..].find('@').map(|at| auth_end + at + 1),
        None => None,
    };
    if let Some(u) = user_end {
        if cut.is_some_and(|c| c < u) {
            cut = query_at(text, u);
        }
    }
    Parts { start, user_end, cut }
}

/// `text`, a URL or what was meant as one, as it may be shown: the query
/// and fragment (from the first `?` or `#`) become `?...` (or `#...`), and
/// a userinfo (what ends at the last `@` of the authority, the part after
/// `://` up to the first `/` or `\`) becomes `...@`. An authority with a
/// `:` not followed by a port number, such as `user:pa` of
/// `user:pa/ss@host` (a password with a `/`, `?` or `#` in it, which ends
/// the authority early), is taken for a userinfo up to the next `@`: more
/// is hidden than a parser would call a password, never less. Everything
/// else is shown as it is (escape it for the terminal, as `{:?}` or
/// [`crate::vocab::console::safe`] do).
pub fn redact(text: &str) -> String {
    let p = parts(text);
    let end = p.cut.unwrap_or(text.len());
    let mut out = String::with_capacity(end + 8);
    match p.user_end {
        Some(u) => {
            out.push_str(&text[..p.start]);
            out.push_str(HIDDEN_USER);
            out.push_str(&text[u..end]);
        }
        None => out.push_str(&text[..end]),
    }
    if let Some(c) = p.cut {
        out.push_str(if text[c..].starts_with('#') { "#..." } else { "?..." });
    }
    out
}

/// Which part of URL-ish text a byte is in, as [`redact`] sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// Shown; the shown stretch it is in ends at byte `end` (exclusive).
    Shown {
        /// Where the shown stretch ends.
        end: usize,
    },
    /// In the userinfo: hidden.
    Userinfo,
    /// In the query or fragment: hidden.
    Query,
}

/// The [`Part`] of `text` that byte `at` is in.
pub fn part_at(text: &str, at: usize) -> Part {
    let p = parts(text);
    let end = p.cut.unwrap_or(text.len());
    if at >= end {
        return Part::Query;
    }
    match p.user_end {
        Some(u) if at >= p.start && at < u => Part::Userinfo,
        Some(_) if at < p.start => Part::Shown { end: p.start },
        _ => Part::Shown { end },
    }
}

/// Whether [`redact`] would hide a userinfo in `text` (so a parser that
/// takes none can refuse it before it says anything about the authority's
/// parts, the password among them).
pub fn has_userinfo(text: &str) -> bool {
    parts(text).user_end.is_some()
}

/// A kernel command-line parameter's value as it may be shown:
/// [`redact`]ed when it is a URL (it holds `://`, or its name ends in
/// `url`, as `bootbench.config_url` and `bootbench.results_url` do, `-`
/// and `_` alike), else as it is.
pub fn redact_param(name: &str, value: &str) -> String {
    let url_name = name.len() >= 3 && name.as_bytes()[name.len() - 3..].eq_ignore_ascii_case(b"url");
    if url_name || value.contains("://") {
        redact(value)
    } else {
        String::from(value)
    }
}

/// http or https.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// `http://`.
    Http,
    /// `https://`.
    Https,
}

/// An absolute http(s) URL.
#[derive(Clone, PartialEq, Eq)]
pub struct Url {
    /// http or https.
    pub scheme: Scheme,
    /// Host name or address (an IPv6 address without its brackets).
    pub host: String,
    /// The port (80 or 443 when the URL names none).
    pub port: u16,
    /// Path and query, as sent in the request line (`/` at least).
    pub target: String,
}

impl Url {
    /// Parse `s`: `http://` or `https://`, a host (a name, an IPv4 address,
    /// or `[IPv6]`), an optional `:port`, then the path and query. The error
    /// says what is wrong, and quotes `s` as [`redact`] shows it (never its
    /// query, fragment or userinfo: the text that failed to parse is the
    /// text most likely to be shown).
    pub fn parse(s: &str) -> Result<Url, String> {
        let shown = redact(s);
        let (scheme, rest) = if let Some(r) = s.strip_prefix("http://") {
            (Scheme::Http, r)
        } else if let Some(r) = s.strip_prefix("https://") {
            (Scheme::Https, r)
        } else {
            return Err(format!("{shown:?} is not an http:// or https:// URL"));
        };
        if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!("{shown:?} holds white space or control characters"));
        }
        // Before the authority is taken apart: its parts would be the password's.
        if has_userinfo(s) {
            return Err(format!("{shown:?}: user names and passwords in URLs are not supported"));
        }
        let (authority, target) = match rest.find(['/', '?', '#']) {
            Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
            Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
            None => (rest, "/".to_string()),
        };
        let target = target.split('#').next().unwrap_or("/").to_string();
        let default_port = match scheme {
            Scheme::Http => 80,
            Scheme::Https => 443,
        };
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) = v6
                .split_once(']')
                .ok_or_else(|| format!("{shown:?}: an IPv6 host lacks its ']'"))?;
            let port = match after.strip_prefix(':') {
                Some(p) => Some(p),
                None if after.is_empty() => None,
                None => return Err(format!("{shown:?}: {after:?} after the IPv6 host")),
            };
            (h.to_string(), port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (authority.to_string(), None),
            }
        };
        if host.is_empty() {
            return Err(format!("{shown:?} has no host"));
        }
        let port = match port {
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| format!("{shown:?}: port {p:?} is not a number from 1 to 65535"))?,
            None => default_port,
        };
        Ok(Url {
            scheme,
            host,
            port,
            target,
        })
    }

    /// The URL as it may be shown: [`redact`]ed, so without its query (a
    /// presigned URL's query is a credential).
    pub fn redacted(&self) -> String {
        redact(&format!("{}{}", self.origin(), self.target))
    }

    /// `scheme://host[:port]`.
    pub fn origin(&self) -> String {
        let scheme = match self.scheme {
            Scheme::Http => "http",
            Scheme::Https => "https",
        };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let default = matches!((self.scheme, self.port), (Scheme::Http, 80) | (Scheme::Https, 443));
        if default {
            format!("{scheme}://{host}")
        } else {
            format!("{scheme}://{host}:{}", self.port)
        }
    }

    /// The Host header's value.
    pub fn host_header(&self) -> String {
        self.origin()
            .split_once("://")
            .map(|(_, h)| h.to_string())
            .unwrap_or_default()
    }

    /// A `Location` header's value resolved against this URL (a
    /// `//host/path` one keeps the scheme only, RFC 3986 5.2.2).
    pub fn join(&self, location: &str) -> Result<Url, String> {
        if location.starts_with("http://") || location.starts_with("https://") {
            Url::parse(location)
        } else if location.starts_with("//") {
            let scheme = match self.scheme {
                Scheme::Http => "http:",
                Scheme::Https => "https:",
            };
            Url::parse(&format!("{scheme}{location}"))
        } else if location.starts_with('/') {
            Url::parse(&format!("{}{location}", self.origin()))
        } else {
            let dir = self.target.split('?').next().unwrap_or("/");
            let dir = &dir[..=dir.rfind('/').unwrap_or(0)];
            Url::parse(&format!("{}{dir}{location}", self.origin()))
        }
    }
}

impl fmt::Display for Url {
    /// The URL as it may be shown ([`Url::redacted`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl fmt::Debug for Url {
    /// As [`fmt::Display`]: never the query.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Url({:?})", self.redacted())
    }
}

/// The placeholders a [`Template`] may hold.
pub const PLACEHOLDERS: [&str; 3] = ["{machine}", "{run}", "{n}"];

/// A `results_url`: an http(s) URL once its placeholders ([`PLACEHOLDERS`])
/// are filled in, checked once ([`Template::parse`]). Shown, it is
/// [`redact`]ed (its `Display` and `Debug`), placeholders and all.
#[derive(Clone, PartialEq, Eq)]
pub struct Template(String);

impl Template {
    /// Check `template`: only [`PLACEHOLDERS`] in braces, and an http(s)
    /// URL once filled in. The error says what is wrong (the caller names
    /// the field), quoting no more of the template than [`redact`] shows: a
    /// brace in the query or the userinfo is said to be there, not quoted.
    pub fn parse(template: &str) -> Result<Template, String> {
        let expected = PLACEHOLDERS.join(", ");
        let mut rest = template;
        while let Some(i) = rest.find(['{', '}']) {
            let tail = &rest[i..];
            if let Some(p) = PLACEHOLDERS.iter().find(|p| tail.starts_with(**p)) {
                rest = &tail[p.len()..];
                continue;
            }
            let at = template.len() - tail.len();
            let brace = &tail[..1];
            return Err(match part_at(template, at) {
                Part::Shown { end } => {
                    // Up to the closing brace, at most 24 bytes, never into what is hidden.
                    let mut n = tail.find('}').map_or(tail.len(), |e| e + 1).min(24).min(end - at);
                    while !tail.is_char_boundary(n) {
                        n -= 1;
                    }
                    format!("{:?} is not a placeholder; expected {expected}", &tail[..n])
                }
                Part::Query => format!(
                    "a {brace:?} in the query (not shown: a query may hold a credential) is not a placeholder; \
                     expected {expected}"
                ),
                Part::Userinfo => format!(
                    "a {brace:?} in the user name or password (not shown) is not a placeholder; expected {expected}"
                ),
            });
        }
        Url::parse(&expand(template, "machine", "run", 1))?;
        Ok(Template(template.into()))
    }

    /// `template` taken as it is, unchecked: a URL made from it may fail
    /// to parse when it is used (where an error document goes to the
    /// command line's template before anything else is checked).
    pub fn unchecked(template: &str) -> Template {
        Template(template.into())
    }

    /// The template as written (it holds the query: not to be shown).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether it holds `{n}`.
    pub fn numbered(&self) -> bool {
        self.0.contains("{n}")
    }

    /// Its placeholders filled in (text that [`Url::parse`] may still
    /// refuse: a machine's name with a space in it).
    pub fn expand(&self, machine: &str, run: &str, n: u32) -> String {
        expand(&self.0, machine, run, n)
    }

    /// Its placeholders filled in, parsed.
    pub fn url(&self, machine: &str, run: &str, n: u32) -> Result<Url, String> {
        Url::parse(&self.expand(machine, run, n))
    }
}

/// `template` with its placeholders filled in.
fn expand(template: &str, machine: &str, run: &str, n: u32) -> String {
    template
        .replace("{machine}", machine)
        .replace("{run}", run)
        .replace("{n}", &n.to_string())
}

impl fmt::Display for Template {
    /// The template as it may be shown ([`redact`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redact(&self.0))
    }
}

impl fmt::Debug for Template {
    /// As [`fmt::Display`]: never the query.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Template({:?})", redact(&self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_and_a_template_show_no_query_nor_userinfo() {
        let u = Url::parse("https://h:8443/r/m.json?X-Amz-Signature=SECRET").unwrap();
        assert_eq!(format!("{u}"), "https://h:8443/r/m.json?...");
        assert_eq!(format!("{u:?}"), "Url(\"https://h:8443/r/m.json?...\")");
        let t = Template::parse("http://h/{machine}-{n}.json?sig=SECRET").unwrap();
        assert_eq!(format!("{t}"), "http://h/{machine}-{n}.json?...");
        assert!(!format!("{t:?}").contains("SECRET"));
        assert!(t.numbered());
        assert_eq!(t.url("m", "r", 2).unwrap().target, "/m-2.json?sig=SECRET");
    }

    #[test]
    fn what_is_hidden_and_what_is_shown() {
        for (text, want) in [
            // Nothing to hide.
            ("http://10.0.2.100/r/m.json", "http://10.0.2.100/r/m.json"),
            ("https://h:8443/", "https://h:8443/"),
            ("http://[fd00::1]:81/x", "http://[fd00::1]:81/x"),
            ("s3://bucket/machine.json", "s3://bucket/machine.json"),
            ("{machine}", "{machine}"),
            ("", ""),
            // An '@' in the path is no userinfo.
            ("http://h/r/bob@example.json", "http://h/r/bob@example.json"),
            ("http://h:8080/r/a@b.json", "http://h:8080/r/a@b.json"),
            ("http://[::1]:80/a@b", "http://[::1]:80/a@b"),
            // The query and the fragment.
            (
                "http://10.0.2.2:99999/r/{machine}.json?X-Amz-Signature=SECRET",
                "http://10.0.2.2:99999/r/{machine}.json?...",
            ),
            ("http://h/x#SECRET", "http://h/x#..."),
            ("http://h/x?a#b", "http://h/x?..."),
            ("http://[::1/x?sig=SECRET", "http://[::1/x?..."),
            ("h/x?r=http://u:p@evil/", "h/x?..."),
            ("http://h?sig=SECRET", "http://h?..."),
            // The userinfo.
            (
                "https://user:hunter2@host/r.json?token=SECRET",
                "https://...@host/r.json?...",
            ),
            ("http://user@h/", "http://...@h/"),
            ("http://u:p@ss@h/x", "http://...@h/x"),
            ("http://u:p@[::1]:8080/", "http://...@[::1]:8080/"),
            ("ftp://user:hunter2@h:99999/", "ftp://...@h:99999/"),
            ("user:hunter2@h/x?sig=SECRET", "...@h/x?..."),
            (
                "bootbench.results_url=http://u:p@h/",
                "bootbench.results_url=http://...@h/",
            ),
            // A password holding '/', '?' or '#' ends the authority early.
            ("http://user:hun/ter2@h/x", "http://...@h/x"),
            ("http://user:hun?ter2@h/x?sig=S", "http://...@h/x?..."),
            ("http://user:hun#ter2@h/x", "http://...@h/x"),
            ("http://user:hun/ter2@h?to=a@b&sig=S", "http://...@h?..."),
            // A colon without a port and no '@' anywhere: no userinfo.
            ("http://x:http/", "http://x:http/"),
        ] {
            assert_eq!(redact(text), want, "{text:?}");
            for secret in ["SECRET", "hunter2", "ter2", "user:"] {
                assert!(!redact(text).contains(secret), "{text:?}");
            }
        }
    }

    #[test]
    fn the_part_of_each_byte() {
        let t = "http://u:p@h/{x}?{y}";
        let at = |c: char| t.find(c).unwrap();
        assert_eq!(part_at(t, 0), Part::Shown { end: 7 });
        assert_eq!(part_at(t, at('u')), Part::Userinfo);
        assert_eq!(part_at(t, at('@')), Part::Userinfo);
        assert_eq!(part_at(t, at('{')), Part::Shown { end: at('?') });
        assert_eq!(part_at(t, at('?')), Part::Query);
        assert_eq!(part_at(t, at('y')), Part::Query);
        assert_eq!(part_at("h/{x}", 2), Part::Shown { end: 5 });
    }

    #[test]
    fn userinfo_is_told_apart_from_an_at_in_the_path() {
        for (text, has) in [
            ("http://u:p@h/", true),
            ("http://u@h/", true),
            ("http://user:pa/ss@h/", true),
            ("http://h/a@b", false),
            ("http://h:8080/a@b", false),
            ("http://h/x?mail=a@b", false),
            ("http://x:http/", false),
        ] {
            assert_eq!(has_userinfo(text), has, "{text}");
        }
    }

    #[test]
    fn command_line_values_named_url_or_holding_a_scheme() {
        assert_eq!(
            redact_param("bootbench.results_url", "http://h/r.json?sig=S"),
            "http://h/r.json?..."
        );
        assert_eq!(redact_param("bootbench.config-URL", "u:p@h/c?S"), "...@h/c?...");
        assert_eq!(redact_param("x", "https://u:p@h/"), "https://...@h/");
        // Not URLs: as they are ('@' and '?' mean other things there).
        assert_eq!(
            redact_param("netconsole", "6665@10.0.0.1/eth0,6666@10.0.0.2/"),
            "6665@10.0.0.1/eth0,6666@10.0.0.2/"
        );
        assert_eq!(redact_param("console", "ttyS0,115200"), "ttyS0,115200");
        assert_eq!(redact_param("u", "a?b"), "a?b");
    }
}
