//! bench-core's SATA Phy Event Counters parser
//! (`bench_core::device::link::parse_phy_events`): on any bytes it never
//! panics; a log it accepts has a good checksum, at most one counter per
//! three bytes of the page, no identifier 0, each value within its
//! length's range and marked saturated exactly at that range's top.
//!
//! Input: the 512 bytes READ LOG EXT 11h would return (any length).
#![no_main]

use bench_core::device::link::parse_phy_events;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(events) = parse_phy_events(data) else {
        return;
    };
    assert!(data.len() >= 512);
    assert_eq!(data[..512].iter().fold(0u8, |s, b| s.wrapping_add(*b)), 0);
    assert!(events.len() <= (511 - 4) / 4);
    for e in &events {
        assert_ne!(e.id & 0x0fff, 0, "{e:?}");
        assert_eq!(e.id & 0x7000, 0, "the length bits are not the id: {e:?}");
        assert!(!e.name.is_empty());
        if e.saturated {
            assert!([0xffff, 0xffff_ffff, 0xffff_ffff_ffff, u64::MAX].contains(&e.value), "{e:?}");
        }
    }
});
