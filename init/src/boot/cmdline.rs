//! The kernel command line (`/proc/cmdline`), split as the kernel splits it
//! (`lib/cmdline.c` `next_arg`): words separated by whitespace, `key=value`
//! or a bare `key`, double quotes group spaces into one word and are removed
//! around the value (or around a quoted bare word). Everything after a lone
//! `--` is for init (its argv), not a kernel parameter, and is left out.
//!
//! bootbench reads its keys under the `bootbench.` prefix
//! (`bootbench.profile=NAME`, `bootbench.on_finish=poweroff|reboot|halt`);
//! as the kernel does for parameter names, `-` and `_` in a key are the same.
//!
//! Whitespace is the kernel's `isspace` on ASCII: space and `\t \n \v \f \r`
//! (not Rust's `is_ascii_whitespace`, which leaves out `\v`, nor Unicode
//! whitespace, which the kernel does not split on). The kernel also counts
//! the byte 0xA0 as a space; in UTF-8 text that byte is only ever inside a
//! character, which is kept whole here.

/// One parsed kernel command line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cmdline {
    /// Every kernel parameter in order: the name and its value (`None` for a bare word).
    pub params: Vec<(String, Option<String>)>,
}

/// The prefix of bootbench's own keys.
pub use bench_core::boot::cmdline::Key;

impl Cmdline {
    /// Split `text` (the contents of `/proc/cmdline`, trailing newline allowed).
    pub fn parse(text: &str) -> Cmdline {
        let mut out = Cmdline::default();
        let mut rest = text.trim_start_matches(is_space);
        while !rest.is_empty() {
            let (param, value, tail) = next_arg(rest);
            rest = tail.trim_start_matches(is_space);
            if param == "--" && value.is_none() {
                break;
            }
            out.params.push((param, value));
        }
        out
    }

    /// The value of `bootbench.<key>` (`key` without the prefix); the last
    /// occurrence wins, a bare `bootbench.<key>` reads as `""`.
    pub fn get(&self, key: Key) -> Option<&str> {
        self.get_raw(&key.to_string())
    }

    /// The value of any kernel parameter by its full name (the last occurrence
    /// wins; `-` and `_` match each other; a bare word reads as `""`): the
    /// boot loader's own, such as PXELINUX's and iPXE's `BOOTIF`.
    pub fn get_raw(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .rev()
            .find(|(p, _)| same_name(p, name))
            .map(|(_, v)| v.as_deref().unwrap_or(""))
    }
}

impl Cmdline {
    /// The parameters as the console may show them: each URL's query,
    /// fragment and userinfo hidden ([`bench_core::vocab::url::redact_param`]: a
    /// value holding `://` or a parameter named `...url`), a word with
    /// spaces in double quotes as the kernel takes it. PID 1 logs this, not
    /// `/proc/cmdline` itself, which holds `bootbench.results_url=` in full
    /// (a presigned URL's query is its credential).
    pub fn shown(&self) -> String {
        let quoted = |s: &str| {
            if s.contains(is_space) || s.is_empty() {
                format!("\"{s}\"")
            } else {
                s.to_string()
            }
        };
        let words: Vec<String> = self
            .params
            .iter()
            .map(|(name, value)| match value {
                Some(v) if v.is_empty() => format!("{name}="),
                Some(v) => format!("{name}={}", quoted(&bench_core::vocab::url::redact_param(name, v))),
                None => quoted(name),
            })
            .collect();
        words.join(" ")
    }
}

/// The kernel's `isspace` (lib/ctype.c) on characters: 9 to 13 and 32.
fn is_space(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\x0B' | '\x0C' | '\r' | ' ')
}

/// Parameter names compare as the kernel's `parameq`: `-` equals `_`.
fn same_name(a: &str, b: &str) -> bool {
    let norm = |c: u8| if c == b'-' { b'_' } else { c };
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(x, y)| norm(x) == norm(y))
}

/// The kernel's `next_arg` on a string that starts with a non-space:
/// returns (name, value, the unparsed rest).
fn next_arg(args: &str) -> (String, Option<String>, &str) {
    let (quoted, body) = match args.strip_prefix('"') {
        Some(b) => (true, b),
        None => (false, args),
    };
    let mut in_quote = quoted;
    // Index (in `body`) of the first '=' that is not the first byte: the
    // kernel keeps 0 as "none found", so a leading '=' is part of the name.
    let mut equals: Option<usize> = None;
    let mut end = body.len();
    for (i, c) in body.char_indices() {
        if is_space(c) && !in_quote {
            end = i;
            break;
        }
        if equals.is_none() && c == '=' && i > 0 {
            equals = Some(i);
        }
        if c == '"' {
            in_quote = !in_quote;
        }
    }
    let word = &body[..end];
    let tail = &body[end..];
    let (mut name, mut value) = match equals {
        None => (word, None),
        Some(e) => {
            let v = &word[e + 1..];
            // Don't include quotes in the value: drop an opening quote, and
            // then a closing quote at the end of the word.
            let v = match v.strip_prefix('"') {
                Some(inner) => inner.strip_suffix('"').unwrap_or(inner),
                None => v,
            };
            (&word[..e], Some(v))
        }
    };
    if quoted {
        // The word began with a quote: the kernel also drops a final quote
        // (it may already have gone with the value's).
        match value.as_mut() {
            Some(v) if word.ends_with('"') && !word[equals.map_or(0, |e| e + 1)..].starts_with('"') => {
                *v = v.strip_suffix('"').unwrap_or(v);
            }
            None => name = name.strip_suffix('"').unwrap_or(name),
            _ => {}
        }
    }
    (name.to_string(), value.map(str::to_string), tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str, value: Option<&str>) -> (String, Option<String>) {
        (name.to_string(), value.map(str::to_string))
    }

    type Case<'a> = (&'a str, &'a [(&'a str, Option<&'a str>)]);

    #[test]
    fn splits_like_the_kernel() {
        let cases: &[Case] = &[
            ("", &[]),
            ("  \n", &[]),
            ("quiet", &[("quiet", None)]),
            (
                "console=ttyS0,115200 panic=-1\n",
                &[("console", Some("ttyS0,115200")), ("panic", Some("-1"))],
            ),
            ("a  b\tc", &[("a", None), ("b", None), ("c", None)]),
            ("x=\"a b\" y=1", &[("x", Some("a b")), ("y", Some("1"))]),
            ("x=\"a b\"", &[("x", Some("a b"))]),
            ("x=a\"b c\"", &[("x", Some("a\"b c\""))]),
            ("\"x=a b\" y", &[("x", Some("a b")), ("y", None)]),
            ("\"bare word\" z", &[("bare word", None), ("z", None)]),
            ("k=v=w", &[("k", Some("v=w"))]),
            ("k=", &[("k", Some(""))]),
            ("=v", &[("=v", None)]),
            ("x=\"unterminated rest", &[("x", Some("unterminated rest"))]),
            // The kernel's isspace includes \v (found by fuzz/cmdline, which
            // compares with a port of the kernel's parser); Rust's
            // is_ascii_whitespace does not.
            ("a\x0Bb", &[("a", None), ("b", None)]),
            ("\x0Bquiet\x0B\x0C", &[("quiet", None)]),
            ("x=\"a\x0Bb\" y", &[("x", Some("a\x0Bb")), ("y", None)]),
            // Unicode spaces are not the kernel's: they stay in the word.
            (
                "\u{3000}quiet a\u{2003}b",
                &[("\u{3000}quiet", None), ("a\u{2003}b", None)],
            ),
        ];
        for (text, want) in cases {
            let got = Cmdline::parse(text);
            let want: Vec<_> = want.iter().map(|(n, v)| p(n, *v)).collect();
            assert_eq!(got.params, want, "{text:?}");
        }
    }

    #[test]
    fn words_after_double_dash_are_not_parameters() {
        let c = Cmdline::parse("ro -- single bootbench.profile=x");
        assert_eq!(c.params, vec![p("ro", None)]);
        assert_eq!(c.get(Key::Profile), None);
    }

    #[test]
    fn get_reads_bootbench_keys_last_wins() {
        let c = Cmdline::parse(
            "console=ttyS0 bootbench.profile=quick profile=other bootbench.on-finish=reboot bootbench.profile=cdm bootbench.flag",
        );
        assert_eq!(c.get(Key::Profile), Some("cdm"));
        assert_eq!(c.get(Key::OnFinish), Some("reboot"));
        assert_eq!(c.get_raw("bootbench.flag"), Some(""));
        assert_eq!(c.get_raw("bootbench.missing"), None);
        assert_eq!(c.get_raw("bootbench.console"), None);
        assert_eq!(c.get_raw("console"), Some("ttyS0"));
    }

    /// What PID 1 logs of its command line holds no URL's query, fragment
    /// or userinfo, a quoted one with a space in it included.
    #[test]
    fn the_shown_command_line_hides_each_urls_credentials() {
        let c = Cmdline::parse(
            "console=ttyS0,115200 quiet \
             bootbench.results_url=http://10.0.2.2:99999/r/{machine}.json?X-Amz-Signature=SECRET \
             bootbench.config-url=https://user:hunter2@host/c.json#SECRET \
             \"bootbench.results_url=http://h/r.json?sig=SECRET more\" \
             x=\"a b\" netconsole=6665@10.0.0.1/eth0 k= -- init args",
        );
        assert_eq!(
            c.shown(),
            "console=ttyS0,115200 quiet bootbench.results_url=http://10.0.2.2:99999/r/{machine}.json?... \
             bootbench.config-url=https://...@host/c.json#... bootbench.results_url=http://h/r.json?... \
             x=\"a b\" netconsole=6665@10.0.0.1/eth0 k="
        );
    }

    #[test]
    fn quoted_values_keep_spaces() {
        let c = Cmdline::parse("bootbench.profile=\"my profile\" quiet");
        assert_eq!(c.get(Key::Profile), Some("my profile"));
        assert_eq!(c.get_raw("quiet"), Some(""));
    }
}
