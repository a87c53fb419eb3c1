//! announce + encode -> (console damage: CRLF, line wraps, noise lines) ->
//! decode gives back exactly the document and its nonce, for any bytes and
//! any file-like name.
//!
//! Input layout: byte 0 = wrap width (0: none, else 23 + b % 200, so the
//! BEGIN word itself is never cut), byte 1 bit 0 = CRLF line ends, byte 2 =
//! name length (% 64), then the name's bytes (mapped to [a-z0-9._-]), then
//! the document's bytes.
#![no_main]

use bench_core::document::frame::{announce, decode, encode, Frame, Nonce, BEGIN, END};
use libfuzzer_sys::fuzz_target;

const NAME_CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789._-";

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let wrap = match data[0] {
        0 => None,
        b => Some(23 + usize::from(b) % 200),
    };
    let crlf = data[1] & 1 == 1;
    let name_len = usize::from(data[2] % 64).min(data.len() - 3);
    let name: String = data[3..3 + name_len]
        .iter()
        .map(|b| char::from(NAME_CHARS[usize::from(*b) % NAME_CHARS.len()]))
        .collect();
    let name = if name.is_empty() { "r.json".to_string() } else { name };
    let json = &data[3 + name_len..];

    let nonce = Nonce([data[1]; 16]);
    let framed = announce(nonce) + &encode(&name, json, nonce);
    // The console: noise before and after, lines wrapped, maybe CRLF.
    let mut lines: Vec<String> = vec!["[    1.234] noise line before".to_string()];
    for line in framed.lines() {
        match wrap {
            Some(w) if line != END => {
                let mut rest = line;
                while rest.len() > w {
                    let (a, b) = rest.split_at(w);
                    lines.push(a.to_string());
                    rest = b;
                }
                lines.push(rest.to_string());
            }
            _ => lines.push(line.to_string()),
        }
    }
    lines.push("login: noise after".to_string());
    let nl = if crlf { "\r\n" } else { "\n" };
    let log = lines.join(nl) + nl;
    assert!(!name.contains(BEGIN));

    let got = decode(&log);
    let want = Frame {
        name: name.clone(),
        bytes: json.to_vec(),
        nonce: Some(nonce),
    };
    assert_eq!(got.len(), 1, "{log:?}");
    assert_eq!(got[0].as_ref().ok(), Some(&want), "{log:?}: {:?}", got[0]);
});
