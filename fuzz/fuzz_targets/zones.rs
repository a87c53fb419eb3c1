//! bench-core's zone report parser (`bench_core::device::zones`): on any
//! bytes it never panics; a report it accepts holds as many zones as its
//! header counts, and the summary and the readable extents stay within
//! the zones: counts add up, no extent is longer than the zones' lengths.
//!
//! Input: the bytes BLKREPORTZONE would fill.
#![no_main]

use bench_core::device::zones::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(r) = parse_report(data) else {
        return;
    };
    assert!(data.len() >= REPORT_HEADER + r.zones.len() * DESCRIPTOR);
    let q = QueueZones {
        model: ZoneModel::HostManaged,
        chunk_sectors: 0,
        nr_zones: r.zones.len() as u64,
        max_open_zones: 0,
        max_active_zones: 0,
    };
    let s = summarize(&q, &r.zones);
    let st = s.states;
    let sum = st.empty
        + st.implicit_open
        + st.explicit_open
        + st.closed
        + st.full
        + st.read_only
        + st.offline
        + st.not_write_pointer
        + st.other;
    assert_eq!(sum, s.zones);
    assert!(s.conventional_zones <= s.zones);
    let total: u128 = r.zones.iter().map(|z| u128::from(z.len.max(z.capacity))).sum();
    let readable: u128 = readable_extents(&r.zones).iter().map(|e| u128::from(e.sectors)).sum();
    assert!(readable <= total);
});
