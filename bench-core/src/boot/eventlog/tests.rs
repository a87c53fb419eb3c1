//! The event log parser and replay over logs built byte by byte from the
//! PFP's layout.

use super::*;
use alloc::vec;

/// The Spec ID event (SHA-1 format) naming `algs`.
fn spec_event(algs: &[(u16, u16)]) -> Vec<u8> {
    let mut data = SPEC_ID.to_vec();
    data.extend(0u32.to_le_bytes()); // platform class: client
    data.extend([0, 2, 0, 2]); // version 2.0 errata 0, uintnSize 2
    data.extend(u32::try_from(algs.len()).unwrap().to_le_bytes());
    for (a, s) in algs {
        data.extend(a.to_le_bytes());
        data.extend(s.to_le_bytes());
    }
    data.extend([3, b'v', b'n', b'd']);
    let mut e = Vec::new();
    e.extend(0u32.to_le_bytes());
    e.extend(EV_NO_ACTION.to_le_bytes());
    e.extend([0u8; 20]);
    e.extend(u32::try_from(data.len()).unwrap().to_le_bytes());
    e.extend(data);
    e
}

/// A `TCG_PCR_EVENT2`.
fn event2(pcr: u32, t: u32, digests: &[(u16, Vec<u8>)], data: &[u8]) -> Vec<u8> {
    let mut e = Vec::new();
    e.extend(pcr.to_le_bytes());
    e.extend(t.to_le_bytes());
    e.extend(u32::try_from(digests.len()).unwrap().to_le_bytes());
    for (a, d) in digests {
        e.extend(a.to_le_bytes());
        e.extend(d);
    }
    e.extend(u32::try_from(data.len()).unwrap().to_le_bytes());
    e.extend(data);
    e
}

/// Both banks' digests of an event: SHA-1 all `b`, SHA-256 all `b + 1`.
fn both(b: u8) -> Vec<(u16, Vec<u8>)> {
    vec![(ALG_SHA1, vec![b; 20]), (ALG_SHA256, vec![b + 1; 32])]
}

const BANKS: [(u16, u16); 2] = [(ALG_SHA1, 20), (ALG_SHA256, 32)];

/// A toy hash that shows the order of its inputs: each part's bytes in
/// turn, folded as `acc * 31 + byte` into every output byte position.
fn toy(size: usize) -> impl Fn(&[&[u8]]) -> Vec<u8> {
    move |parts: &[&[u8]]| {
        let mut acc = 7u8;
        let mut out = vec![0u8; size];
        for (i, b) in parts.iter().flat_map(|p| p.iter()).enumerate() {
            acc = acc.wrapping_mul(31).wrapping_add(*b);
            out[i % size] ^= acc;
        }
        out
    }
}

fn sample() -> Vec<u8> {
    let mut log = spec_event(&BANKS);
    let mut locality = STARTUP_LOCALITY.to_vec();
    locality.push(3);
    log.extend(event2(
        0,
        EV_NO_ACTION,
        &[(ALG_SHA1, vec![0; 20]), (ALG_SHA256, vec![0; 32])],
        &locality,
    ));
    log.extend(event2(0, 0x8, &both(1), b"version"));
    log.extend(event2(4, EV_EFI_BOOT_SERVICES_APPLICATION, &both(3), b"shim"));
    log.extend(event2(0, EV_SEPARATOR, &both(5), &[0; 4]));
    log.extend(event2(9, EV_IPL, &both(7), b"/vmlinuz\0"));
    log
}

#[test]
fn a_crypto_agile_log_parses() {
    let log = parse_event_log(&sample()).unwrap();
    assert_eq!(
        log.spec.algorithms,
        [
            AlgSize {
                alg: ALG_SHA1,
                size: 20
            },
            AlgSize {
                alg: ALG_SHA256,
                size: 32
            }
        ]
    );
    assert_eq!(log.spec.version, (2, 0, 0));
    assert_eq!(log.spec.uintn_size, 2);
    assert_eq!(log.spec.vendor_info, b"vnd");
    assert_eq!(log.startup_locality, Some(3));
    let kinds: Vec<_> = log
        .events
        .iter()
        .map(|e| (e.pcr, event_type_name(e.event_type).unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            (0, "EV_NO_ACTION"),
            (0, "EV_S_CRTM_VERSION"),
            (4, "EV_EFI_BOOT_SERVICES_APPLICATION"),
            (0, "EV_SEPARATOR"),
            (9, "EV_IPL")
        ]
    );
    let shim = &log.events[2];
    assert_eq!(shim.digest(ALG_SHA256), Some(&[4u8; 32][..]));
    assert_eq!(shim.digest(ALG_SHA384), None);
    assert_eq!(shim.data, b"shim");
    // The offset is the event's first byte.
    assert_eq!(sample()[shim.offset..shim.offset + 4], 4u32.to_le_bytes());
}

#[test]
fn replay_extends_in_order_from_the_reset_values() {
    let log = parse_event_log(&sample()).unwrap();
    let h = toy(32);
    let pcrs = log.replay(ALG_SHA256, &h).unwrap();
    assert_eq!(pcrs.len(), PCRS);
    // PCR 0: reset to ...03 (locality 3), then the version, then the separator.
    let mut p0 = vec![0u8; 32];
    p0[31] = 3;
    let p0 = h(&[&h(&[&p0, &[2; 32]]), &[6; 32]]);
    assert_eq!(pcrs[0], p0);
    assert_eq!(pcrs[4], h(&[&[0; 32], &[4; 32]]));
    assert_eq!(pcrs[9], h(&[&[0; 32], &[8; 32]]));
    // Untouched PCRs keep their reset value; EV_NO_ACTION extended nothing.
    assert_eq!(pcrs[7], vec![0u8; 32]);
    // The SHA-1 bank from its own digests.
    let p1 = log.replay(ALG_SHA1, &toy(20)).unwrap();
    assert_eq!(p1[4], toy(20)(&[&[0; 20], &[3; 20]]));
    assert_eq!(log.replay(ALG_SHA384, &toy(48)), Err(ReplayError::NoBank(ALG_SHA384)));
    assert_eq!(log.replay(ALG_SHA256, &toy(20)), Err(ReplayError::HashSize));
}

#[test]
fn an_event_without_the_banks_digest_does_not_replay() {
    let mut log = spec_event(&BANKS);
    log.extend(event2(4, EV_IPL, &[(ALG_SHA1, vec![1; 20])], b""));
    let parsed = parse_event_log(&log).unwrap();
    let at = parsed.events[0].offset;
    assert_eq!(parsed.replay(ALG_SHA256, &toy(32)), Err(ReplayError::Missing { at }));
    assert!(parsed.replay(ALG_SHA1, &toy(20)).is_ok());
}

#[test]
fn bad_logs_are_refused_naming_where() {
    // A SHA-1 log (TPM 1.2): its first event is not the Spec ID event.
    let mut sha1 = Vec::new();
    sha1.extend(0u32.to_le_bytes());
    sha1.extend(0x8u32.to_le_bytes());
    sha1.extend([0u8; 20]);
    sha1.extend(0u32.to_le_bytes());
    assert_eq!(parse_event_log(&sha1), Err(LogError::NotCryptoAgile));
    assert_eq!(parse_event_log(&[]), Err(LogError::NotCryptoAgile));
    // The Spec ID event naming SHA-256 twice, or nothing.
    assert_eq!(
        parse_event_log(&spec_event(&[(ALG_SHA256, 32), (ALG_SHA256, 32)])),
        Err(LogError::SpecId)
    );
    assert_eq!(parse_event_log(&spec_event(&[])), Err(LogError::SpecId));
    assert_eq!(parse_event_log(&spec_event(&[(ALG_SHA256, 0)])), Err(LogError::SpecId));
    // Cut anywhere inside the second event: short, at that event.
    let log = sample();
    let spec_len = spec_event(&BANKS).len();
    let first = parse_event_log(&log).unwrap().events[1].offset;
    for cut in first + 1..parse_event_log(&log).unwrap().events[2].offset {
        assert_eq!(
            parse_event_log(&log[..cut]),
            Err(LogError::Short { at: first }),
            "cut at {cut}"
        );
    }
    // An algorithm the Spec ID event does not name; too many digests; PCR 24.
    let mut bad = spec_event(&BANKS);
    bad.extend(event2(4, EV_IPL, &[(ALG_SHA384, vec![0; 48])], b""));
    assert_eq!(
        parse_event_log(&bad),
        Err(LogError::Algorithm {
            at: spec_len,
            alg: ALG_SHA384
        })
    );
    let mut bad = spec_event(&BANKS);
    let mut three = both(1);
    three.push((ALG_SHA1, vec![0; 20]));
    bad.extend(event2(4, EV_IPL, &three, b""));
    assert_eq!(
        parse_event_log(&bad),
        Err(LogError::DigestCount { at: spec_len, count: 3 })
    );
    let mut bad = spec_event(&BANKS);
    bad.extend(event2(24, EV_IPL, &both(1), b""));
    assert_eq!(parse_event_log(&bad), Err(LogError::Pcr { at: spec_len, pcr: 24 }));
    // Each error says where.
    assert!(LogError::Short { at: 77 }.to_string().contains("byte 77"));
}
