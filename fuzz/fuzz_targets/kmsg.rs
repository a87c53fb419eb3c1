//! bench-core's /dev/kmsg record parser and line matcher
//! (`bench_core::device::kmsg`): on any bytes they never panic, and what they
//! return holds to the record: the level is PRI's low 3 bits, the text is
//! the bytes between the first `;` and the next line feed, the kept text
//! is printable ASCII of at most TEXT_MAX bytes, a named sector is the
//! digits after the text's first `, sector `, a disk whose name is empty is named only by a device key.
//!
//! Input: the record as one read of /dev/kmsg gives it.
#![no_main]

use bench_core::device::kmsg::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(r) = parse_record(data) else {
        assert!(!data.contains(&b';') || data.split(|&b| b == b';').next().is_some());
        return;
    };
    assert!(r.level <= 7);
    let semi = data.iter().position(|&b| b == b';').unwrap();
    let rest = &data[semi + 1..];
    assert_eq!(r.text, rest.split(|&b| b == b'\n').next().unwrap());
    let text = escape_text(r.text);
    assert!(text.len() <= TEXT_MAX);
    assert!(text.bytes().all(|b| (0x20..0x7f).contains(&b)));
    if let Some(s) = sector_of(&text) {
        // The digits after the first ", sector " (leading zeros allowed).
        let at = text.find(", sector ").unwrap() + ", sector ".len();
        let digits: String = text[at..].chars().take_while(char::is_ascii_digit).collect();
        assert_eq!(digits.parse::<u64>().ok(), Some(s));
    }
    let _ = classify(&text, r.level);
    let device = r.device.map(String::from_utf8_lossy);
    let disk = DiskRefs {
        name: "sda".into(),
        ata_port: Some(1),
        scsi: Some("0:0:0:0".into()),
        nvme_ctrl: Some("nvme0".into()),
        devnums: vec![(8, 0)],
    };
    let _ = disk.names(&text, device.as_deref());
    let nameless = DiskRefs::default();
    assert!(!nameless.names(&text, None));
});
