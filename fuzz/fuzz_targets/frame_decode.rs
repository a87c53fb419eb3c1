//! `bench_core::document::frame::decode` on any console log: never panics, and only
//! hands out bytes whose length and CRC-32 its header vouched for, of a
//! boot whose nonce the log announced.
#![no_main]

use bench_core::document::frame::{announce, crc32, decode, encode, BEGIN, END};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let log = String::from_utf8_lossy(data);
    let frames = decode(&log);
    // At most one frame per BEGIN in the log.
    assert!(frames.len() <= log.matches(BEGIN).count());
    for f in &frames {
        match f {
            Ok(frame) => {
                assert!(!frame.name.is_empty());
                // A header loses only a capture's spaces, tabs and line
                // breaks; a Unicode line separator stays in the name.
                assert!(!frame.name.chars().any(|c| matches!(c, ' ' | '\t' | '\r' | '\n')));
                // Only frames of an announced boot are good.
                let n = frame.nonce.expect("version-1 frames are refused by default");
                let compact: String = log.chars().filter(|c| !c.is_whitespace()).collect();
                assert!(compact.to_ascii_lowercase().contains(&format!("nonce={n}")), "{log:?}");
                // Re-encoding a good frame decodes to the same frame.
                let again = decode(&(announce(n) + &encode(&frame.name, &frame.bytes, n)));
                if !frame.name.contains(BEGIN) && !frame.name.contains(END) && !frame.name.contains("bytes=") {
                    assert_eq!(again.len(), 1, "{log:?}");
                    assert_eq!(again[0].as_ref().ok(), Some(frame), "{log:?}");
                }
                let _ = crc32(&frame.bytes);
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
});
