//! bench-core's TPM event log parser (`bench_core::boot::eventlog`): on
//! any bytes it never panics; an accepted log's events each carry digests
//! only of the Spec ID event's algorithms, of their sizes, extend PCRs 0 to
//! 23 (but the EV_NO_ACTION ones, never extended), and replay into 24 PCRs
//! of each bank whose digests every extended event has.
#![no_main]

use bench_core::boot::eventlog::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(log) = parse_event_log(data) else {
        return;
    };
    for e in &log.events {
        assert!(e.offset < data.len());
        assert!(e.event_type == EV_NO_ACTION || (e.pcr as usize) < PCRS);
        for d in &e.digests {
            let a = log.spec.algorithms.iter().find(|a| a.alg == d.alg).expect("a named algorithm");
            assert_eq!(d.bytes.len(), usize::from(a.size));
        }
    }
    for a in &log.spec.algorithms {
        let size = usize::from(a.size);
        let hash = |parts: &[&[u8]]| {
            let mut out = vec![0u8; size];
            for (i, b) in parts.iter().flat_map(|p| p.iter()).enumerate() {
                out[i % size] ^= b;
            }
            out
        };
        let complete = log
            .events
            .iter()
            .filter(|e| e.event_type != EV_NO_ACTION)
            .all(|e| e.digest(a.alg).is_some());
        match log.replay(a.alg, &hash) {
            Ok(pcrs) => assert!(complete && pcrs.len() == PCRS && pcrs.iter().all(|p| p.len() == size)),
            Err(_) => assert!(!complete),
        }
    }
});
