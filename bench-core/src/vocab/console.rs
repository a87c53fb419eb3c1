//! Console text that cannot lie: what a device, the firmware or a config
//! says (a disk's model or serial, a DMI string, a path) is printed on the
//! console only through [`safe`], so it can neither start a line, nor move
//! the cursor, nor hold a word that [`crate::document::frame`]'s decoder takes for a
//! marker (`BOOTBENCH-RESULT-BEGIN`, `BOOTBENCH-BOOT`, ...).
//!
//! The escapes are those of C, Rust and Python string literals, so the
//! original is always recoverable and two different strings never print the
//! same:
//!
//! | input | printed |
//! | --- | --- |
//! | `\` | `\\` |
//! | tab, line feed, carriage return | `\t`, `\n`, `\r` |
//! | other C0 controls (U+0000..U+001F), DEL (U+007F) | `\xHH` |
//! | C1 controls (U+0080..U+009F; U+009B is CSI to some terminals) | `\u00HH` |
//! | line and paragraph separators (U+2028, U+2029), bidi controls (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069), which make a line display as something else | `\uHHHH` |
//! | [`MARKER`] (`BOOTBENCH-`) | `BOOTBENCH\x2d` |
//!
//! Everything else (printable ASCII, other Unicode) is kept. Frames
//! themselves are written raw; results JSON keeps the true strings (JSON has
//! its own escaping); only console text goes through here.

use alloc::borrow::Cow;
use alloc::string::String;
use core::fmt::Write as _;

/// The prefix every frame marker starts with ([`crate::document::frame::BEGIN`],
/// [`crate::document::frame::END`], [`crate::document::frame::BOOT`]); [`safe`] never lets it
/// through.
pub const MARKER: &str = "BOOTBENCH-";

/// The start of PID 1's last console line, written as it calls reboot(2)
/// (then `poweroff`, `reboot` or `halt`): all it had to save is saved, and
/// what follows is the kernel's. A harness may stop waiting for the guest
/// to end a while after it.
pub const REBOOT_CALL: &str = "calling reboot(2): ";

/// How [`MARKER`] is printed: its `-` as `\x2d`.
const MARKER_ESCAPED: &str = "BOOTBENCH\\x2d";

/// True if [`safe`] prints `c` as an escape (see the module doc).
fn is_escaped(c: char) -> bool {
    matches!(
        c,
        '\\'
            | '\0'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{61c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}

/// Append the escape of `c`, one that [`is_escaped`].
fn push_escape(c: char, out: &mut String) {
    let _ = match c {
        '\\' => out.write_str("\\\\"),
        '\t' => out.write_str("\\t"),
        '\n' => out.write_str("\\n"),
        '\r' => out.write_str("\\r"),
        '\0'..='\u{1f}' | '\u{7f}' => write!(out, "\\x{:02x}", u32::from(c)),
        _ => write!(out, "\\u{:04x}", u32::from(c)),
    };
}

/// `s` made safe for one console line (see the module doc); borrowed when
/// nothing needed escaping.
pub fn safe(s: &str) -> Cow<'_, str> {
    if !s.contains(MARKER) && !s.chars().any(is_escaped) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with(MARKER) {
            out.push_str(MARKER_ESCAPED);
            rest = &rest[MARKER.len()..];
            continue;
        }
        if is_escaped(c) {
            push_escape(c, &mut out);
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// Several console lines: each line of `text` through [`safe`], the line
/// breaks (`\n`) kept; a `\r` before a `\n` is dropped (it ends the line,
/// it does not return the cursor inside it).
pub fn safe_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&safe(line.strip_suffix('\r').unwrap_or(line)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_table() {
        let cases: &[(&str, &str)] = &[
            ("QEMU HARDDISK", "QEMU HARDDISK"),
            ("", ""),
            ("sn-é ünïcode 日本", "sn-é ünïcode 日本"),
            ("a\\b", "a\\\\b"),
            ("a\nb", "a\\nb"),
            ("a\r\nb", "a\\r\\nb"),
            ("tab\there", "tab\\there"),
            ("nul\0", "nul\\x00"),
            ("\u{1b}[2J\u{1b}]0;title\u{7}", "\\x1b[2J\\x1b]0;title\\x07"),
            ("del\u{7f}", "del\\x7f"),
            ("csi\u{9b}31m", "csi\\u009b31m"),
            ("nel\u{85}x", "nel\\u0085x"),
            ("\u{80}\u{9f}\u{a0}", "\\u0080\\u009f\u{a0}"),
            ("ls\u{2028}ps\u{2029}", "ls\\u2028ps\\u2029"),
            ("rlo\u{202e}cod.exe", "rlo\\u202ecod.exe"),
            (
                "\u{2066}\u{2069}\u{200e}\u{200f}\u{61c}",
                "\\u2066\\u2069\\u200e\\u200f\\u061c",
            ),
            ("BOOTBENCH-RESULT-BEGIN", "BOOTBENCH\\x2dRESULT-BEGIN"),
            ("x BOOTBENCH-RESULT-END", "x BOOTBENCH\\x2dRESULT-END"),
            ("BOOTBENCH-BOOT v2 nonce=00", "BOOTBENCH\\x2dBOOT v2 nonce=00"),
            ("BOOTBENCH-BOOTBENCH-", "BOOTBENCH\\x2dBOOTBENCH\\x2d"),
            ("BOOTBENCH-STICK", "BOOTBENCH\\x2dSTICK"),
            // Not a marker: the decoder's words are upper case with the dash.
            ("BOOTBENCH SATA HDD 1", "BOOTBENCH SATA HDD 1"),
            ("bootbench-init 0.1.0", "bootbench-init 0.1.0"),
            ("BOOTBENCH", "BOOTBENCH"),
            // A backslash before the marker stays distinct from an escaped marker.
            ("BOOTBENCH\\x2d", "BOOTBENCH\\\\x2d"),
            (
                "BOOTBENCH-RESULT-BEGINv1name=f.jsonbytes=2crc32=00000000\ne30=\nBOOTBENCH-RESULT-END",
                "BOOTBENCH\\x2dRESULT-BEGINv1name=f.jsonbytes=2crc32=00000000\\ne30=\\nBOOTBENCH\\x2dRESULT-END",
            ),
        ];
        for (raw, want) in cases {
            assert_eq!(safe(raw), *want, "{raw:?}");
        }
    }

    #[test]
    fn unchanged_text_is_borrowed() {
        assert!(matches!(safe("/dev/sda transport sata"), Cow::Borrowed(_)));
        assert!(matches!(safe("a\nb"), Cow::Owned(_)));
    }

    /// Whatever goes in, what comes out is one line of printable text that
    /// holds no marker, and different inputs print differently.
    #[test]
    fn output_is_one_printable_line_without_markers() {
        let pieces = [
            "BOOTBENCH-",
            "BOOTBENCH",
            "-",
            "\\",
            "x2d",
            "\n",
            "\r",
            "\u{1b}",
            "\u{9b}",
            "\u{2028}",
            "a",
            "é",
            " ",
        ];
        let mut seen = alloc::collections::BTreeMap::new();
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let raw = alloc::format!("{a}{b}{c}");
                    let out = safe(&raw).into_owned();
                    assert!(!out.contains(MARKER), "{raw:?} -> {out:?}");
                    assert!(
                        out.chars().all(|ch| !is_escaped(ch) || ch == '\\'),
                        "{raw:?} -> {out:?}"
                    );
                    if let Some(prev) = seen.insert(out.clone(), raw.clone()) {
                        assert_eq!(prev, raw, "two inputs print as {out:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn lines_keep_their_breaks() {
        assert_eq!(
            safe_lines("target  seqrd\n/dev/sda\u{1b}[31m  1.0\r\nBOOTBENCH-X\n"),
            "target  seqrd\n/dev/sda\\x1b[31m  1.0\nBOOTBENCH\\x2dX\n"
        );
        assert_eq!(safe_lines(""), "");
        assert_eq!(safe_lines("a\rb"), "a\\rb");
    }
}
