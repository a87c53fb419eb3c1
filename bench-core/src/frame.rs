//! Serial framing of a result document (contract C): a document travels over
//! a console that may wrap lines, add `\r` and interleave other lines, and a
//! host cuts it out of the captured log.
//!
//! ```text
//! BOOTBENCH-RESULT-BEGIN v1 name=<file name> bytes=<N> crc32=<8 lowercase hex>
//! <base64 (standard alphabet, padded) of the JSON document, 76 characters per line>
//! BOOTBENCH-RESULT-END
//! ```
//!
//! `crc32` is the IEEE CRC-32 of the JSON bytes (zlib's `crc32`). The decoder
//! accepts `\r\n`, whitespace and line breaks anywhere inside the base64 body
//! and the header, ignores lines outside frames, and reports a frame whose
//! length, checksum or base64 is wrong, or whose END is missing, as damaged
//! (never returning its bytes).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// The first word of a frame's header line.
pub const BEGIN: &str = "BOOTBENCH-RESULT-BEGIN";
/// The line that ends a frame.
pub const END: &str = "BOOTBENCH-RESULT-END";
/// Base64 characters per body line.
pub const LINE: usize = 76;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with `=` padding.
pub fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let sextet = |shift: u32| char::from(ALPHABET[((n >> shift) & 63) as usize]);
        out.push(sextet(18));
        out.push(sextet(12));
        out.push(if chunk.len() > 1 { sextet(6) } else { '=' });
        out.push(if chunk.len() > 2 { sextet(0) } else { '=' });
    }
    out
}

fn sextet_of(c: u8) -> Option<u32> {
    let v = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    };
    Some(u32::from(v))
}

/// Decode standard padded base64, skipping ASCII whitespace anywhere; the
/// error says what is wrong.
pub fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    let chars: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    if chars.len() % 4 != 0 {
        return Err(format!(
            "{} base64 characters, not a multiple of 4 (truncated or padding missing)",
            chars.len()
        ));
    }
    let mut out = Vec::with_capacity(chars.len() / 4 * 3);
    let groups = chars.len() / 4;
    for (g, quad) in chars.chunks(4).enumerate() {
        let last = g + 1 == groups;
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return Err(format!("padding '=' inside the data at character {}", g * 4));
        }
        let mut n: u32 = 0;
        for (i, &c) in quad[..4 - pad].iter().enumerate() {
            let Some(v) = sextet_of(c) else {
                if c == b'=' {
                    return Err(format!("padding '=' inside the data at character {}", g * 4 + i));
                }
                return Err(format!(
                    "{:?} at character {} is not in the base64 alphabet",
                    char::from(c),
                    g * 4 + i
                ));
            };
            n |= v << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..4 - pad]);
    }
    Ok(out)
}

const fn crc_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        #[allow(clippy::cast_possible_truncation)] // i < 256
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

static CRC_TABLE: [u32; 256] = crc_table();

/// IEEE CRC-32 (reflected, polynomial 0xEDB88320, initial and final XOR
/// 0xFFFFFFFF): zlib's and Python's `zlib.crc32`.
pub fn crc32(data: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFF_u32;
    for &b in data {
        c = CRC_TABLE[usize::from(c.to_le_bytes()[0] ^ b)] ^ (c >> 8);
    }
    !c
}

/// One document cut out of a log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The file name the header gives.
    pub name: String,
    /// The document's bytes, length and checksum verified.
    pub bytes: Vec<u8>,
}

impl Frame {
    /// The file to write the document to: the last component of the
    /// header's name (as `Path::file_name` takes it: `.` components and
    /// trailing slashes ignored), `result.json` when there is none (empty,
    /// `/`, or a name ending in `..`), so a header can never name a place
    /// outside the directory it is written to.
    pub fn file_name(&self) -> String {
        let last = self.name.split('/').rfind(|c| !c.is_empty() && *c != ".");
        match last {
            Some(n) if n != ".." => String::from(n),
            _ => String::from("result.json"),
        }
    }
}

/// A damaged frame: its name (if the header gave one), and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// The BEGIN line lacks `v1`, `name=`, `bytes=` or `crc32=`.
    BadHeader {
        /// The header text as read.
        header: String,
        /// What is missing or wrong.
        why: &'static str,
    },
    /// The END line never came (another BEGIN or the end of the log first).
    MissingEnd {
        /// The frame's name.
        name: String,
    },
    /// The body is not valid base64.
    BadBase64 {
        /// The frame's name.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// The decoded length differs from `bytes=`.
    BadLength {
        /// The frame's name.
        name: String,
        /// `bytes=` of the header.
        expected: usize,
        /// Bytes decoded.
        got: usize,
    },
    /// The CRC-32 of the decoded bytes differs from `crc32=`.
    BadCrc {
        /// The frame's name.
        name: String,
        /// `crc32=` of the header.
        expected: u32,
        /// CRC-32 of the bytes decoded.
        got: u32,
    },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::BadHeader { header, why } => write!(f, "damaged frame header {header:?}: {why}"),
            FrameError::MissingEnd { name } => write!(f, "frame {name}: damaged: no {END} line"),
            FrameError::BadBase64 { name, why } => write!(f, "frame {name}: damaged: bad base64: {why}"),
            FrameError::BadLength { name, expected, got } => write!(
                f,
                "frame {name}: damaged: bad length: header says {expected} bytes, body holds {got}"
            ),
            FrameError::BadCrc { name, expected, got } => write!(
                f,
                "frame {name}: damaged: bad crc32: header says {expected:08x}, body has {got:08x}"
            ),
        }
    }
}

/// Frame `json` (any bytes) under the file name `name`: header, base64 lines
/// of [`LINE`] characters, END; every line ends in `\n`.
pub fn encode(name: &str, json: &[u8]) -> String {
    let b64 = base64_encode(json);
    let mut out = format!(
        "{BEGIN} v1 name={name} bytes={} crc32={:08x}\n",
        json.len(),
        crc32(json)
    );
    for line in b64.as_bytes().chunks(LINE) {
        // base64 output is ASCII.
        out.push_str(core::str::from_utf8(line).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(END);
    out.push('\n');
    out
}

/// A parsed header.
struct Header {
    name: String,
    bytes: usize,
    crc: u32,
}

/// The value after `key` in `h`: the characters up to the next non-`ok` one.
fn value_after<'a>(h: &'a str, key: &str, ok: fn(char) -> bool) -> Option<&'a str> {
    let start = h.find(key)? + key.len();
    let rest = &h[start..];
    let end = rest.find(|c: char| !ok(c)).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Parse the header text (whitespace removed, so a line wrapped anywhere
/// reads the same); `Ok(None)` while the checksum's 8 digits are incomplete.
fn parse_header(compact: &str) -> Result<Option<Header>, &'static str> {
    let is_hex = |c: char| c.is_ascii_hexdigit();
    let crc = match value_after(compact, "crc32=", is_hex) {
        Some(v) if v.len() >= 8 => &v[..8],
        _ => return Ok(None),
    };
    let after_begin = &compact[BEGIN.len()..];
    if !after_begin.starts_with("v1") {
        return Err("not version v1");
    }
    let name_start = compact.find("name=").ok_or("no name=")? + "name=".len();
    let name_end = compact[name_start..].find("bytes=").ok_or("no bytes= after name=")? + name_start;
    let name = &compact[name_start..name_end];
    if name.is_empty() {
        return Err("empty name=");
    }
    let bytes = value_after(compact, "bytes=", |c| c.is_ascii_digit())
        .filter(|v| !v.is_empty())
        .ok_or("no number after bytes=")?
        .parse::<usize>()
        .map_err(|_| "bytes= out of range")?;
    let crc = u32::from_str_radix(crc, 16).map_err(|_| "crc32= is not hex")?;
    Ok(Some(Header {
        name: String::from(name),
        bytes,
        crc,
    }))
}

fn compact(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Cut every frame out of a console log, in order: a good frame's bytes, or
/// what is wrong with a damaged one. Lines outside frames are ignored.
pub fn decode(log: &str) -> Vec<Result<Frame, FrameError>> {
    let mut out = Vec::new();
    let mut lines = log.split('\n').map(|l| l.trim_end_matches('\r')).peekable();
    while let Some(line) = lines.next() {
        let Some(pos) = line.find(BEGIN) else { continue };
        // The header, joined with the following lines while a wrap has cut it.
        let mut header = compact(&line[pos..]);
        let parsed = loop {
            match parse_header(&header) {
                Ok(Some(h)) => break Ok(h),
                Err(why) => break Err(why),
                Ok(None) => match lines.peek() {
                    Some(next) if !next.contains(BEGIN) && !next.contains(END) && header.len() < 400 => {
                        header.push_str(&compact(next));
                        lines.next();
                    }
                    _ => break Err("no crc32= with 8 hex digits"),
                },
            }
        };
        let h = match parsed {
            Ok(h) => h,
            Err(why) => {
                out.push(Err(FrameError::BadHeader { header, why }));
                continue;
            }
        };
        let mut body = String::new();
        let mut ended = false;
        while let Some(next) = lines.peek() {
            if next.contains(BEGIN) {
                break; // the next frame starts; this one's END is missing
            }
            let next = lines.next().unwrap_or_default();
            if next.contains(END) {
                ended = true;
                break;
            }
            body.push_str(next);
        }
        if !ended {
            out.push(Err(FrameError::MissingEnd { name: h.name }));
            continue;
        }
        let bytes = match base64_decode(&body) {
            Ok(b) => b,
            Err(why) => {
                out.push(Err(FrameError::BadBase64 { name: h.name, why }));
                continue;
            }
        };
        if bytes.len() != h.bytes {
            out.push(Err(FrameError::BadLength {
                name: h.name,
                expected: h.bytes,
                got: bytes.len(),
            }));
            continue;
        }
        let got = crc32(&bytes);
        if got != h.crc {
            out.push(Err(FrameError::BadCrc {
                name: h.name,
                expected: h.crc,
                got,
            }));
            continue;
        }
        out.push(Ok(Frame { name: h.name, bytes }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file name follows `Path::file_name`, and never leaves the directory.
    #[test]
    fn file_name_is_the_last_component_or_result_json() {
        for (name, want) in [
            ("results/m-1.json", "m-1.json"),
            ("m-1.json", "m-1.json"),
            ("/abs/x.json", "x.json"),
            ("dir/x.json/", "x.json"),
            ("dir/x.json/.", "x.json"),
            ("..", "result.json"),
            ("/", "result.json"),
            ("", "result.json"),
            ("a/..", "result.json"),
            ("a/../", "result.json"),
        ] {
            let f = Frame {
                name: name.to_string(),
                bytes: Vec::new(),
            };
            assert_eq!(f.file_name(), want, "{name:?}");
            if let Some(n) = std::path::Path::new(name).file_name() {
                assert_eq!(n.to_str().unwrap(), want, "as Path::file_name: {name:?}");
            }
        }
    }
    use alloc::string::ToString;

    #[test]
    fn crc32_vectors() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"The quick brown fox jumps over the lazy dog"), 0x414f_a339);
    }

    #[test]
    fn base64_vectors_round_trip() {
        let cases: [(&[u8], &str); 7] = [
            (b"", ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"fooba", "Zm9vYmE="),
            (b"foobar", "Zm9vYmFy"),
        ];
        for (raw, enc) in cases {
            assert_eq!(base64_encode(raw), enc);
            assert_eq!(base64_decode(enc).unwrap(), raw, "{enc}");
        }
        let all: Vec<u8> = (0..=255u8).collect();
        let e = base64_encode(&all);
        assert!(e.contains('+') && e.contains('/'));
        assert_eq!(base64_decode(&e).unwrap(), all);
        assert_eq!(base64_decode("Zm9v\r\n Ym Fy\n").unwrap(), b"foobar");
    }

    #[test]
    fn base64_errors() {
        for (bad, want) in [
            ("Zm9", "not a multiple of 4"),
            ("Zm=v", "padding"),
            ("Zg==Zm9v", "padding"),
            ("Zm9*", "'*'"),
            ("Z===", "padding"),
        ] {
            let e = base64_decode(bad).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }

    fn doc(n: usize) -> Vec<u8> {
        let mut s = String::from("{\"schema\":\"bootbench.result/1\",\"x\":[");
        for i in 0..n {
            s.push_str(&format!("{i},"));
        }
        s.push_str("0]}\n");
        s.into_bytes()
    }

    #[test]
    fn encode_layout() {
        let json = doc(100);
        let f = encode("m-1.json", &json);
        let lines: Vec<&str> = f.lines().collect();
        assert_eq!(
            lines[0],
            format!(
                "{BEGIN} v1 name=m-1.json bytes={} crc32={:08x}",
                json.len(),
                crc32(&json)
            )
        );
        assert_eq!(*lines.last().unwrap(), END);
        let body = &lines[1..lines.len() - 1];
        assert!(body[..body.len() - 1].iter().all(|l| l.len() == LINE));
        assert!(body.last().unwrap().len() <= LINE);
        assert!(f.ends_with('\n'));
        assert_eq!(
            decode(&f),
            vec![Ok(Frame {
                name: "m-1.json".to_string(),
                bytes: json
            })]
        );
        // Empty document.
        assert_eq!(decode(&encode("e", b""))[0].as_ref().unwrap().bytes, b"");
    }

    /// Every line cut at `width` columns, as a narrow terminal does.
    fn wrap(text: &str, width: usize) -> String {
        let mut out = String::new();
        for line in text.lines() {
            let b = line.as_bytes();
            if b.is_empty() {
                out.push('\n');
            }
            for part in b.chunks(width) {
                out.push_str(core::str::from_utf8(part).unwrap());
                out.push('\n');
            }
        }
        out
    }

    #[test]
    fn survives_wrapping_crlf_and_noise() {
        let a = doc(300);
        let b = doc(7);
        let log = String::from("[    1.234] boot noise\nsome BOOTBENCH line\n")
            + &encode("srv-1.json", &a)
            + "bootbench: between frames\n\n"
            + &encode("srv-2.json", &b)
            + "trailing noise";
        for width in [40, 23, 76, 1000] {
            let wrapped = wrap(&log, width).replace('\n', "\r\n");
            let got = decode(&wrapped);
            assert_eq!(got.len(), 2, "width {width}: {got:?}");
            assert_eq!(got[0].as_ref().unwrap().bytes, a, "width {width}");
            assert_eq!(got[0].as_ref().unwrap().name, "srv-1.json", "width {width}");
            assert_eq!(got[1].as_ref().unwrap().bytes, b, "width {width}");
        }
        // Indentation and trailing spaces (an IPMI SOL capture) do not matter.
        let spaced: String = encode("s.json", &a).lines().map(|l| format!("  {l}   \n")).collect();
        assert_eq!(decode(&spaced)[0].as_ref().unwrap().bytes, a);
        assert!(decode("no frames here\n").is_empty());
    }

    /// A frame with one body line changed by `f`.
    fn damaged(name: &str, json: &[u8], f: impl Fn(&str) -> String) -> String {
        let enc = encode(name, json);
        let mut lines: Vec<String> = enc.lines().map(str::to_string).collect();
        lines[1] = f(&lines[1]);
        lines.join("\n") + "\n"
    }

    #[test]
    fn a_damaged_frame_between_two_good_ones() {
        let good = doc(50);
        let flip = |l: &str| {
            let mut c: Vec<char> = l.chars().collect();
            c[5] = if c[5] == 'A' { 'B' } else { 'A' };
            c.into_iter().collect()
        };
        let cases: Vec<(String, &str)> = vec![
            (damaged("bad.json", &good, flip), "bad crc32"),
            (
                damaged("bad.json", &good, |l| l[..l.len() - 4].to_string()),
                "bad length",
            ),
            (damaged("bad.json", &good, |l| format!("{}!!!!", &l[4..])), "bad base64"),
            (
                damaged("bad.json", &good, |l| l[..l.len() - 3].to_string()),
                "bad base64",
            ),
            (
                encode("bad.json", &good).replace(END, "lost"),
                "no BOOTBENCH-RESULT-END",
            ),
            (
                encode("bad.json", &good).replace(&format!("bytes={}", good.len()), "bytes=7"),
                "bad length",
            ),
        ];
        for (bad, want) in cases {
            let log = encode("a.json", &good) + "noise\n" + &bad + &encode("c.json", b"{}");
            let got = decode(&log);
            assert_eq!(got.len(), 3, "{want}: {got:?}");
            assert_eq!(got[0].as_ref().unwrap().name, "a.json");
            let e = got[1].as_ref().unwrap_err();
            let msg = e.to_string();
            assert!(msg.contains(want) && msg.contains("bad.json"), "{want}: {msg}");
            assert_eq!(got[2].as_ref().unwrap().bytes, b"{}", "{want}");
        }
    }

    #[test]
    fn bad_headers() {
        for (h, want) in [
            ("BOOTBENCH-RESULT-BEGIN v2 name=a bytes=2 crc32=00000000", "v1"),
            ("BOOTBENCH-RESULT-BEGIN v1 bytes=2 crc32=00000000", "name="),
            ("BOOTBENCH-RESULT-BEGIN v1 name=a crc32=00000000", "bytes="),
            ("BOOTBENCH-RESULT-BEGIN v1 name=a bytes=2", "crc32="),
        ] {
            let got = decode(&format!("{h}\ne30=\n{END}\n"));
            let e = got[0].as_ref().unwrap_err();
            assert!(matches!(e, FrameError::BadHeader { .. }), "{h}: {e:?}");
            assert!(e.to_string().contains(want), "{h}: {e}");
        }
        // A good header for the same body decodes.
        let ok = format!("{BEGIN} v1 name=a bytes=2 crc32={:08x}\ne30=\n{END}\n", crc32(b"{}"));
        assert_eq!(decode(&ok)[0].as_ref().unwrap().bytes, b"{}");
    }
}
