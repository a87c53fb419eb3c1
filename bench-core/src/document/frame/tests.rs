use super::*;
use alloc::string::ToString;

const N: Nonce = Nonce([0x11; 16]);
const M: Nonce = Nonce([0x22; 16]);
const F: Nonce = Nonce([0xf0; 16]);

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
            nonce: None,
        };
        assert_eq!(f.file_name(), want, "{name:?}");
        if let Some(n) = std::path::Path::new(name).file_name() {
            assert_eq!(n.to_str().unwrap(), want, "as Path::file_name: {name:?}");
        }
    }
}

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

#[test]
fn nonces_print_as_32_hex_digits_and_parse_back() {
    let n = Nonce([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 0xfe, 0xff]);
    assert_eq!(n.to_string(), "000102030405060708090a0b0c0dfeff");
    assert_eq!(Nonce::parse("000102030405060708090a0b0c0dfeff"), Some(n));
    assert_eq!(Nonce::parse("000102030405060708090A0B0C0DFEFF"), Some(n));
    for bad in [
        "",
        "00",
        "000102030405060708090a0b0c0dfef",
        "000102030405060708090a0b0c0dfeffa",
        "g00102030405060708090a0b0c0dfeff",
        "+0102030405060708090a0b0c0dfeff",
    ] {
        assert_eq!(Nonce::parse(bad), None, "{bad:?}");
    }
    assert_eq!(announce(N), format!("{BOOT} v2 nonce={}\n", "11".repeat(16)));
}

fn doc(n: usize) -> Vec<u8> {
    let mut s = String::from("{\"schema\":\"bootbench.result/1\",\"x\":[");
    for i in 0..n {
        s.push_str(&format!("{i},"));
    }
    s.push_str("0]}\n");
    s.into_bytes()
}

fn good(name: &str, bytes: &[u8], nonce: Nonce) -> Result<Frame, FrameError> {
    Ok(Frame {
        name: name.to_string(),
        bytes: bytes.to_vec(),
        nonce: Some(nonce),
    })
}

#[test]
fn encode_layout() {
    let json = doc(3000);
    let f = encode("m-1.json", &json, N);
    let lines: Vec<&str> = f.lines().collect();
    let deflated = deflate(&json).unwrap();
    assert_eq!(
        lines[0],
        format!(
            "{BEGIN} v3 nonce={N} name=m-1.json bytes={} deflate={} crc32={:08x}",
            json.len(),
            deflated.len(),
            crc32(&json)
        )
    );
    assert_eq!(*lines.last().unwrap(), END);
    let body = &lines[1..lines.len() - 1];
    assert!(body.len() > 2, "{} body lines", body.len());
    assert!(body[..body.len() - 1].iter().all(|l| l.len() == LINE));
    assert!(body.last().unwrap().len() <= LINE);
    assert_eq!(
        base64_decode(&body.concat()).unwrap(),
        deflated,
        "the body is the DEFLATE stream"
    );
    assert!(f.ends_with('\n'));
    let log = announce(N) + &f;
    assert_eq!(decode(&log), vec![good("m-1.json", &json, N)]);
    assert_eq!(decode_with(&log, Options::default())[0].line, 2);
    // Empty document.
    let e = announce(N) + &encode("e", b"", N);
    assert_eq!(decode(&e)[0].as_ref().unwrap().bytes, b"");
    // Versions 2 and 1, as bootbench wrote them before: the document's own base64.
    let v2 = encode_v2("m.json", b"{}", N);
    assert_eq!(
        v2,
        format!(
            "{BEGIN} v2 nonce={N} name=m.json bytes=2 crc32={:08x}\ne30=\n{END}\n",
            crc32(b"{}")
        )
    );
    assert_eq!(decode(&(announce(N) + &v2)), vec![good("m.json", b"{}", N)]);
    assert!(encode_v1("m.json", b"{}").starts_with(&format!("{BEGIN} v1 name=m.json bytes=2 crc32=")));
}

/// A version-3 frame made by another DEFLATE implementation: Python's
/// zlib (`zlib.compressobj(9, zlib.DEFLATED, -15)`, a raw stream) and
/// `base64.b64encode` over `doc(40)`. The decoder reads zlib's
/// streams, not only its own encoder's.
#[test]
fn a_frame_deflated_by_zlib_decodes() {
    let frame = "\
BOOTBENCH-RESULT-BEGIN v3 nonce=11111111111111111111111111111111 name=m-1.json bytes=150 deflate=113 crc32=09f2d628
DcxLCsJAFAXRucvocaF93+tvtiIOTAhkoAaMgiDu3UwLTn3DNi3z/RqGMK7ra5wf03J8ztv79jop
ED5hOEeE4SQyhUqjoz0KGXKUUEYFVdRQxyK2G8McS1jGClaxhnU84sL3peMJz3jBK97wTrz8Dn8=
BOOTBENCH-RESULT-END
";
    let log = announce(N) + frame;
    assert_eq!(decode(&log), vec![good("m-1.json", &doc(40), N)]);
}

/// A document deflates to a small part of itself: a result document's
/// repetitive keys are what DEFLATE shortens best.
#[test]
fn a_document_deflates_to_a_small_part() {
    let mut json = b"{\"steps\":[".to_vec();
    for i in 0..2000_u64 {
        json.extend(
            format!(
                "{{\"label\":\"rand_read 4k QD1\",\"read\":{{\"ios\":{},\"bytes\":{}}}}},",
                i * 7,
                i * 28_672
            )
            .bytes(),
        );
    }
    json.extend(b"{}]}");
    let d = deflate(&json).unwrap();
    assert!(d.len() * 5 < json.len(), "{} of {} bytes", d.len(), json.len());
    assert_eq!(inflate(&d, json.len()).unwrap(), json);
    assert!(inflate(&d, json.len() - 1).unwrap_err().contains("more than bytes="));
}

/// Compact JSON: whitespace between tokens goes, whitespace, quotes
/// and backslashes inside strings stay.
#[test]
fn compact_json_drops_whitespace_between_tokens_only() {
    for (pretty, want) in [
        ("{\n  \"a\": [\n    1,\n    2\n  ]\r\n}\n", "{\"a\":[1,2]}"),
        ("{ \"a b\" : \" x\ty \" }", "{\"a b\":\" x\ty \"}"),
        ("[\"q\\\" \", \"b\\\\\", \" \"]", "[\"q\\\" \",\"b\\\\\",\" \"]"),
        ("", ""),
    ] {
        assert_eq!(
            String::from_utf8(compact_json(pretty.as_bytes())).unwrap(),
            want,
            "{pretty:?}"
        );
    }
}

/// The version-2 frame as bootbench made it before it streamed: the
/// whole base64 in one `String`, cut into lines. The reference for the
/// line writer.
fn encoded_whole(name: &str, json: &[u8], nonce: Nonce) -> String {
    let mut out = format!(
        "{BEGIN} v2 nonce={nonce} name={name} bytes={} crc32={:08x}\n",
        json.len(),
        crc32(json)
    );
    for line in base64_encode(json).as_bytes().chunks(LINE) {
        out.push_str(core::str::from_utf8(line).unwrap());
        out.push('\n');
    }
    out + END + "\n"
}

#[test]
fn streamed_frames_are_the_whole_encoding_byte_for_byte() {
    // A document of three body lines, as Python's base64 and zlib.crc32 frame it.
    let want = "\
BOOTBENCH-RESULT-BEGIN v2 nonce=11111111111111111111111111111111 name=m-1.json bytes=150 crc32=09f2d628
eyJzY2hlbWEiOiJib290YmVuY2gucmVzdWx0LzEiLCJ4IjpbMCwxLDIsMyw0LDUsNiw3LDgsOSwx
MCwxMSwxMiwxMywxNCwxNSwxNiwxNywxOCwxOSwyMCwyMSwyMiwyMywyNCwyNSwyNiwyNywyOCwy
OSwzMCwzMSwzMiwzMywzNCwzNSwzNiwzNywzOCwzOSwwXX0K
BOOTBENCH-RESULT-END
";
    assert_eq!(encode_v2("m-1.json", &doc(40), N), want);
    assert_eq!(encoded_whole("m-1.json", &doc(40), N), want);
    // Every length over a few lines (each remainder of a line and of a
    // base64 group), and a large document.
    let bytes: Vec<u8> = (0..=255_u8).cycle().take(4 * LINE_BYTES + 2).collect();
    for n in 0..=bytes.len() {
        let json = &bytes[..n];
        assert_eq!(
            encode_v2("r.json", json, N),
            encoded_whole("r.json", json, N),
            "{n} bytes"
        );
    }
    let big = doc(60_000);
    assert_eq!(encode_v2("big.json", &big, N), encoded_whole("big.json", &big, N));
    // Version 3 streams the same lines over the DEFLATE stream.
    let mut out = Vec::new();
    let Ok(()) = encode_to(&mut out, "big.json", &big, N);
    let v3 = String::from_utf8(out).unwrap();
    let (head, rest) = v3.split_once('\n').unwrap();
    let (_, old_rest) = encoded_whole("x", &deflate(&big).unwrap(), N)
        .split_once('\n')
        .map(|(h, r)| (h.to_string(), r.to_string()))
        .unwrap();
    assert!(head.starts_with(&format!("{BEGIN} v3 ")), "{head}");
    assert_eq!(rest, old_rest);
}

/// A writer that keeps what it is given and the length of each write,
/// and fails every write after the first `ok` ones.
pub(crate) struct Recorder {
    pub(crate) bytes: Vec<u8>,
    pub(crate) writes: Vec<usize>,
    ok: usize,
}

impl Recorder {
    pub(crate) fn new(ok: usize) -> Recorder {
        Recorder {
            bytes: Vec::new(),
            writes: Vec::new(),
            ok,
        }
    }
}

impl embedded_io::ErrorType for Recorder {
    type Error = embedded_io::ErrorKind;
}

impl embedded_io::Write for Recorder {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        if self.writes.len() == self.ok {
            return Err(embedded_io::ErrorKind::BrokenPipe);
        }
        self.bytes.extend_from_slice(buf);
        self.writes.push(buf.len());
        Ok(buf.len())
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// PID 1 never holds the base64 of a whole document: a frame of a
/// document of several hundred KiB reaches the writer one line a write.
#[test]
fn the_encoder_writes_a_line_at_a_time() {
    let json = doc(80_000);
    assert!(json.len() > 400 << 10, "{} bytes", json.len());
    let mut r = Recorder::new(usize::MAX);
    assert_eq!(encode_to(&mut r, "big.json", &json, N), Ok(()));
    let frame = encode("big.json", &json, N);
    assert_eq!(r.bytes, frame.as_bytes());
    let lines: Vec<usize> = frame.split_inclusive('\n').map(str::len).collect();
    assert_eq!(r.writes, lines, "one write a line");
    assert_eq!(r.writes[1..].iter().max(), Some(&(LINE + 1)), "a body line and its \\n");
    assert!(r.writes[0] < 200, "the header: {} bytes", r.writes[0]);
}

/// A write error stops the frame at that line and is returned.
#[test]
fn a_write_error_stops_the_frame() {
    let json = doc(100);
    let frame = encode("e.json", &json, N);
    for ok in [0, 1, 3] {
        let mut r = Recorder::new(ok);
        assert_eq!(
            encode_to(&mut r, "e.json", &json, N),
            Err(embedded_io::ErrorKind::BrokenPipe)
        );
        let kept: usize = frame.split_inclusive('\n').take(ok).map(str::len).sum();
        assert_eq!(r.bytes, frame.as_bytes()[..kept], "{ok} lines written");
    }
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
        + &announce(N)
        + "[    1.300] bootbench: started\n"
        + &encode("srv-1.json", &a, N)
        + "bootbench: between frames\n\n"
        + &encode("srv-2.json", &b, N)
        + "trailing noise";
    for width in [40, 23, 76, 1000] {
        let wrapped = wrap(&log, width).replace('\n', "\r\n");
        let got = decode(&wrapped);
        assert_eq!(got.len(), 2, "width {width}: {got:?}");
        assert_eq!(got[0], good("srv-1.json", &a, N), "width {width}");
        assert_eq!(got[1], good("srv-2.json", &b, N), "width {width}");
    }
    // Indentation and trailing spaces (an IPMI SOL capture) do not matter.
    let spaced: String = (announce(N) + &encode("s.json", &a, N))
        .lines()
        .map(|l| format!("  {l}   \n"))
        .collect();
    assert_eq!(decode(&spaced), vec![good("s.json", &a, N)]);
    let tabbed: String = (announce(N) + &encode("s.json", &a, N))
        .lines()
        .map(|l| format!("\t\r{l}\n"))
        .collect();
    assert_eq!(decode(&tabbed), vec![good("s.json", &a, N)]);
    assert!(decode("no frames here\n").is_empty());
}

/// A version-2 frame with one body line changed by `f`.
fn damaged(name: &str, json: &[u8], f: impl Fn(&str) -> String) -> String {
    let enc = encode_v2(name, json, N);
    let mut lines: Vec<String> = enc.lines().map(str::to_string).collect();
    lines[1] = f(&lines[1]);
    lines.join("\n") + "\n"
}

#[test]
fn a_damaged_frame_between_two_good_ones() {
    let good_doc = doc(50);
    let flip = |l: &str| {
        let mut c: Vec<char> = l.chars().collect();
        c[5] = if c[5] == 'A' { 'B' } else { 'A' };
        c.into_iter().collect()
    };
    let cases: Vec<(String, &str)> = vec![
        (damaged("bad.json", &good_doc, flip), "bad crc32"),
        (
            damaged("bad.json", &good_doc, |l| l[..l.len() - 4].to_string()),
            "bad length",
        ),
        (
            damaged("bad.json", &good_doc, |l| format!("{}!!!!", &l[4..])),
            "bad base64",
        ),
        (
            damaged("bad.json", &good_doc, |l| l[..l.len() - 3].to_string()),
            "bad base64",
        ),
        (
            encode("bad.json", &good_doc, N).replace(END, "lost"),
            "no BOOTBENCH-RESULT-END",
        ),
        (
            encode_v2("bad.json", &good_doc, N).replace(&format!("bytes={}", good_doc.len()), "bytes=7"),
            "bad length",
        ),
    ];
    for (bad, want) in cases {
        let log = announce(N) + &encode("a.json", &good_doc, N) + "noise\n" + &bad + &encode("c.json", b"{}", N);
        let got = decode(&log);
        assert_eq!(got.len(), 3, "{want}: {got:?}");
        assert_eq!(got[0].as_ref().unwrap().name, "a.json");
        let e = got[1].as_ref().unwrap_err();
        assert!(!e.is_refused(), "{want}: damaged, not refused");
        let msg = e.to_string();
        assert!(msg.contains(want) && msg.contains("bad.json"), "{want}: {msg}");
        assert_eq!(got[2].as_ref().unwrap().bytes, b"{}", "{want}");
    }
}

/// A version-3 frame whose DEFLATE stream or lengths do not agree with
/// its header is damaged, with what is wrong; the frames around it
/// decode.
#[test]
fn a_damaged_deflated_frame() {
    let json = doc(2000);
    let frame = encode("bad.json", &json, N);
    let d = deflate(&json).unwrap();
    let deflate_eq = format!("deflate={}", d.len());
    let bytes_eq = format!("bytes={}", json.len());
    // Not a DEFLATE stream: reserved block type 3 (RFC 1951 3.2.3).
    let junk = [0xff_u8; 30];
    let junk_frame = format!(
        "{BEGIN} v3 nonce={N} name=bad.json bytes={} deflate=30 crc32={:08x}\n{}\n{END}\n",
        json.len(),
        crc32(&json),
        base64_encode(&junk)
    );
    let lines: Vec<&str> = frame.lines().collect();
    let cut_short = format!(
        "{}\n{}\n{END}\n",
        lines[0].replace(&deflate_eq, &format!("deflate={}", LINE_BYTES)),
        lines[1]
    );
    let cases: Vec<(String, &str)> = vec![
        (
            frame.replace(&deflate_eq, "deflate=7"),
            "bad deflate: header says deflate=7",
        ),
        (frame.replace(&bytes_eq, "bytes=100"), "inflates to more than bytes=100"),
        (
            frame.replace(&bytes_eq, &format!("bytes={}", json.len() + 1)),
            "bad length",
        ),
        (
            frame.replace(&format!("crc32={:08x}", crc32(&json)), "crc32=00000000"),
            "bad crc32",
        ),
        (junk_frame, "not a DEFLATE stream"),
        (cut_short, "cut short"),
        (
            lines[0].replace(&format!(" {deflate_eq}"), "") + "\n" + &lines[1..].join("\n") + "\n",
            "deflate=",
        ),
    ];
    for (bad, want) in cases {
        let log = announce(N) + &encode("a.json", &json, N) + &bad + &encode("c.json", b"{}", N);
        let got = decode(&log);
        assert_eq!(got.len(), 3, "{want}: {got:?}");
        assert_eq!(got[0], good("a.json", &json, N), "{want}");
        let msg = got[1].as_ref().unwrap_err().to_string();
        assert!(msg.contains(want), "{want}: {msg}");
        assert_eq!(got[2], good("c.json", b"{}", N), "{want}");
    }
}

#[test]
fn bad_headers() {
    let n = N.to_string();
    for (h, want) in [
        (
            "BOOTBENCH-RESULT-BEGIN v4 name=a bytes=2 crc32=00000000".to_string(),
            "v1, v2 or v3",
        ),
        (
            "BOOTBENCH-RESULT-BEGIN name=a bytes=2 crc32=00000000".to_string(),
            "v1, v2 or v3",
        ),
        (
            "BOOTBENCH-RESULT-BEGIN v3 name=a bytes=2 deflate=4 crc32=00000000".to_string(),
            "no nonce=",
        ),
        (
            format!("BOOTBENCH-RESULT-BEGIN v3 nonce={n} name=a bytes=2 crc32=00000000"),
            "deflate=",
        ),
        (
            "BOOTBENCH-RESULT-BEGIN v2 name=a bytes=2 crc32=00000000".to_string(),
            "no nonce=",
        ),
        (
            format!(
                "BOOTBENCH-RESULT-BEGIN v2 nonce={} name=a bytes=2 crc32=00000000",
                &n[..30]
            ),
            "32 hex",
        ),
        (
            format!("BOOTBENCH-RESULT-BEGIN v2 nonce={n} bytes=2 crc32=00000000"),
            "name=",
        ),
        (
            format!("BOOTBENCH-RESULT-BEGIN v2 nonce={n} name=a crc32=00000000"),
            "bytes=",
        ),
        (format!("BOOTBENCH-RESULT-BEGIN v2 nonce={n} name=a bytes=2"), "crc32="),
        ("BOOTBENCH-RESULT-BEGIN v1 bytes=2 crc32=00000000".to_string(), "name="),
    ] {
        let got = decode(&format!("{}{h}\ne30=\n{END}\n", announce(N)));
        let e = got[0].as_ref().unwrap_err();
        assert!(matches!(e, FrameError::BadHeader { .. }), "{h}: {e:?}");
        assert!(e.to_string().contains(want), "{h}: {e}");
    }
    // A good header for the same body decodes.
    let ok = format!(
        "{}{BEGIN} v2 nonce={n} name=a bytes=2 crc32={:08x}\ne30=\n{END}\n",
        announce(N),
        crc32(b"{}")
    );
    assert_eq!(decode(&ok), vec![good("a", b"{}", N)]);
}

/// What a device string looks like when a line of bootbench's or the
/// kernel's prints it: the marker inside the line.
#[test]
fn a_marker_inside_a_line_is_text() {
    let json = doc(3);
    let frame = encode("forged.json", &json, N);
    for prefix in [
        "[    2.5] bootbench: /dev/sdb model ",
        "[    2.5] ata1.00: ATA-7: ",
        "x",
        "\u{1b}[0m",
    ] {
        let mut log = announce(N);
        for l in frame.lines() {
            log.push_str(prefix);
            log.push_str(l);
            log.push('\n');
        }
        assert!(decode(&log).is_empty(), "{prefix:?}: {:?}", decode(&log));
        // Only the header mid-line, the rest at line starts: still nothing.
        let half = announce(N) + prefix + &frame;
        assert!(decode(&half).is_empty(), "{prefix:?}");
    }
    // An END inside a body line does not end the frame there.
    let real = announce(N) + &encode("r.json", &json, N).replacen('\n', &format!("\nnoise {END}\n"), 1);
    assert!(matches!(decode(&real)[0], Err(FrameError::BadBase64 { .. })));
}

#[test]
fn a_frame_needs_its_nonce_announced_before_it() {
    let json = doc(4);
    let cases: Vec<(&str, String, Result<Frame, FrameError>)> = vec![
        (
            "announced",
            announce(N) + "noise\n" + &encode("a.json", &json, N),
            good("a.json", &json, N),
        ),
        (
            "another nonce announced",
            announce(N) + &encode("a.json", &json, M),
            Err(FrameError::NotAnnounced {
                name: "a.json".into(),
                nonce: M,
            }),
        ),
        (
            "nothing announced",
            encode("a.json", &json, N),
            Err(FrameError::NotAnnounced {
                name: "a.json".into(),
                nonce: N,
            }),
        ),
        (
            "announced after the frame",
            encode("a.json", &json, N) + &announce(N),
            Err(FrameError::NotAnnounced {
                name: "a.json".into(),
                nonce: N,
            }),
        ),
        (
            "announce inside a line",
            format!("[ 1.0] bootbench: {}", announce(N)) + &encode("a.json", &json, N),
            Err(FrameError::NotAnnounced {
                name: "a.json".into(),
                nonce: N,
            }),
        ),
        (
            "announce of another version",
            announce(N).replace("v2", "v1") + &encode("a.json", &json, N),
            Err(FrameError::NotAnnounced {
                name: "a.json".into(),
                nonce: N,
            }),
        ),
        (
            "version 1",
            announce(N) + &encode_v1("a.json", &json),
            Err(FrameError::Unauthenticated { name: "a.json".into() }),
        ),
    ];
    for (what, log, want) in cases {
        assert_eq!(decode(&log), vec![want], "{what}");
    }
    // Version 1 when asked for.
    let v1 = decode_with(&encode_v1("a.json", &json), Options { accept_v1: true });
    assert_eq!(
        v1[0].frame,
        Ok(Frame {
            name: "a.json".into(),
            bytes: json.clone(),
            nonce: None
        })
    );
}

/// Thousands of boots in one log, the nonce rule for each: boots in
/// turn are each their own, a forged announce and frame inside the last
/// boot refuse both, frames of nonces announced nowhere are refused,
/// and a nonce announced again keeps its first announce.
#[test]
fn many_boots_each_by_its_own_nonce() {
    let nonce = |i: u32| {
        let mut b = [0x5a; 16];
        b[..4].copy_from_slice(&i.to_le_bytes());
        Nonce(b)
    };
    let frame = |i: u32| encode("r.json", b"{}", nonce(i));
    let boots = 3000;
    let mut log = String::new();
    for i in 0..boots {
        log += &(announce(nonce(i)) + &frame(i));
    }
    for i in boots..2 * boots {
        log += &frame(i); // never announced
    }
    // The last boot, with a forged boot inside it.
    let (last, forged) = (nonce(2 * boots), nonce(2 * boots + 1));
    log += &(announce(last) + &announce(forged) + &frame(2 * boots + 1) + &frame(2 * boots));
    let got = decode(&log);
    assert_eq!(got.len(), 2 * boots as usize + 2);
    for i in 0..boots {
        assert_eq!(got[i as usize], good("r.json", b"{}", nonce(i)), "boot {i}");
    }
    for i in boots..2 * boots {
        assert_eq!(
            got[i as usize],
            Err(FrameError::NotAnnounced {
                name: "r.json".into(),
                nonce: nonce(i)
            })
        );
    }
    let n = 2 * boots as usize;
    assert_eq!(
        got[n..],
        [
            Err(FrameError::Overlap {
                name: "r.json".into(),
                nonce: forged,
                other: last
            }),
            Err(FrameError::Overlap {
                name: "r.json".into(),
                nonce: last,
                other: forged
            }),
        ]
    );
}

/// `bytes=` is capped at [`MAX_DOCUMENT`]: a byte past it is refused
/// before the body is decoded (here a body that is not even base64),
/// naming the frame, the claim and the cap; at the cap the body is
/// decoded and checked (here it holds 2 bytes: a bad length).
#[test]
fn a_document_past_the_cap_is_refused_before_its_body_is_decoded() {
    let frame = |bytes: u64, body: &str| {
        format!(
            "{}{BEGIN} v2 nonce={N} name=big.json bytes={bytes} crc32={:08x}\n{body}\n{END}\n",
            announce(N),
            crc32(b"{}")
        )
    };
    let past = decode(&frame(MAX_DOCUMENT + 1, "!!!!"));
    assert_eq!(
        past,
        vec![Err(FrameError::TooLarge {
            name: "big.json".into(),
            bytes: MAX_DOCUMENT + 1
        })]
    );
    let e = past[0].as_ref().unwrap_err();
    assert!(e.is_refused());
    assert_eq!(
        e.to_string(),
        "frame big.json: refused: bytes=1073741825 claims more than 1073741824 bytes (1 GiB), the most a document may be"
    );
    assert_eq!(
        decode(&frame(MAX_DOCUMENT, "e30=")),
        vec![Err(FrameError::BadLength {
            name: "big.json".into(),
            expected: 1 << 30,
            got: 2
        })]
    );
    // A claim past u64 is a bad header.
    let e = decode(&frame(0, "e30=").replace("bytes=0", "bytes=99999999999999999999"));
    assert!(
        matches!(
            &e[0],
            Err(FrameError::BadHeader {
                why: "bytes= out of range",
                ..
            })
        ),
        "{e:?}"
    );
}

/// A checked frame's document reaches its writer a window (32 KiB) at
/// a time, whole and as verified; a writer's error stops it and is
/// returned; the scan itself holds no document.
#[test]
fn a_checked_frame_is_written_a_window_at_a_time() {
    let json = doc(200_000);
    assert!(json.len() > 1 << 20);
    let log = announce(N) + &encode("big.json", &json, N) + &encode_v2("old.json", &json, N);
    let scanned = scan(&log, Options::default());
    assert_eq!(scanned.len(), 2);
    let v3 = scanned[0].frame.as_ref().unwrap();
    assert_eq!(
        (v3.name(), v3.nonce(), v3.len()),
        ("big.json", Some(N), json.len() as u64)
    );
    let mut got = Vec::new();
    let mut largest = 0;
    v3.write_to(|b| {
        largest = largest.max(b.len());
        got.extend_from_slice(b);
        Ok::<(), ()>(())
    })
    .unwrap();
    assert_eq!(got, json);
    assert!(largest <= WINDOW, "{largest}");
    let mut calls = 0;
    let stopped = v3.write_to(|_| {
        calls += 1;
        if calls == 3 {
            Err("disk full")
        } else {
            Ok(())
        }
    });
    assert_eq!((stopped, calls), (Err(Stop::Out("disk full")), 3));
    // Version 2: the document is the body itself, handed on once checked.
    let v2 = scanned[1].frame.as_ref().unwrap();
    assert_eq!(v2.to_frame(), good("old.json", &json, N));
}

type Decoded = Vec<Result<Frame, FrameError>>;

/// The forgeries of the module doc, and real logs that look alike.
#[test]
fn boots_that_overlap_are_refused_boots_in_turn_are_not() {
    let real = doc(5);
    let fake = b"{\"forged\":true}".to_vec();
    let a = |n| announce(n);
    let r = |n| encode("real.json", &real, n);
    let f = |n| encode("forged.json", &fake, n);
    let overlap = |name: &str, nonce, other| {
        Err(FrameError::Overlap {
            name: name.into(),
            nonce,
            other,
        })
    };
    let cases: Vec<(&str, String, Decoded)> = vec![
        ("one boot", a(N) + &r(N), vec![good("real.json", &real, N)]),
        (
            "two boots in turn (on_finish reboot)",
            a(N) + &r(N) + &a(M) + &r(M),
            vec![good("real.json", &real, N), good("real.json", &real, M)],
        ),
        (
            "a boot announced twice",
            a(N) + &a(N) + &r(N) + &r(N),
            vec![good("real.json", &real, N), good("real.json", &real, N)],
        ),
        (
            "a forged frame with a guessed nonce",
            a(N) + &f(F) + &r(N),
            vec![
                Err(FrameError::NotAnnounced {
                    name: "forged.json".into(),
                    nonce: F,
                }),
                good("real.json", &real, N),
            ],
        ),
        (
            "a forged announce alone",
            a(N) + &a(F) + &r(N),
            vec![good("real.json", &real, N)],
        ),
        (
            "a forged announce and frame inside the boot",
            a(N) + &a(F) + &f(F) + &r(N),
            vec![overlap("forged.json", F, N), overlap("real.json", N, F)],
        ),
        (
            "a forged announce before, its frame inside the boot",
            a(F) + &a(N) + &f(F) + &r(N),
            vec![overlap("forged.json", F, N), overlap("real.json", N, F)],
        ),
        (
            "a forged announce before, its frame after the boot's",
            a(F) + &a(N) + &r(N) + &f(F),
            vec![overlap("real.json", N, F), overlap("forged.json", F, N)],
        ),
        (
            "a forged announce inside, its frame after the boot's",
            a(N) + &a(F) + &r(N) + &f(F),
            vec![overlap("real.json", N, F), overlap("forged.json", F, N)],
        ),
        (
            "a whole forged boot before the real one (the limit)",
            a(F) + &f(F) + &a(N) + &r(N),
            vec![good("forged.json", &fake, F), good("real.json", &real, N)],
        ),
    ];
    for (what, log, want) in cases {
        assert_eq!(decode(&log), want, "{what}");
        let all = decode(&log);
        for e in all.iter().filter_map(|f| f.as_ref().err()) {
            assert!(e.is_refused(), "{what}: {e}");
            assert!(e.to_string().contains("refused"), "{what}: {e}");
        }
    }
}
