//! report's Authenticode ranges (`bootbench_report::verify::pe`) on any
//! bytes: never panics; the ranges of an accepted image lie inside it, in
//! order past the headers, and never cover the CheckSum field.
#![no_main]

use bootbench_report::verify::pe::hashed_ranges;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(ranges) = hashed_ranges(data) {
        assert!(ranges.iter().all(|r| r.start <= r.end && r.end <= data.len()));
        let pe = u32::from_le_bytes(data[0x3C..0x40].try_into().unwrap()) as usize;
        let checksum = pe + 24 + 64;
        assert!(ranges.iter().all(|r| r.end <= checksum || r.start >= checksum + 4));
    }
});
