//! bench-core's NVMe telemetry header parser
//! (`bench_core::device::telemetry`): on any bytes it never panics; it
//! accepts only a 512-byte block of log 07h or 08h, gives data area 4
//! only when asked, and area 2's bytes are never fewer than area 1's.
//!
//! Input: byte 0's low bit says whether data area 4 is enabled, the rest
//! is the block.
#![no_main]

use bench_core::device::telemetry::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flag, block)) = data.split_first() else {
        return;
    };
    let da4 = flag & 1 == 1;
    match parse_telemetry_header(block, da4) {
        Ok(h) => {
            assert!(block.len() >= BLOCK);
            assert!(h.log_identifier == LID_HOST || h.log_identifier == LID_CONTROLLER);
            assert_eq!(h.data_area_4_last_block.is_some(), da4);
            assert!(h.ieee_oui < 1 << 24);
            assert_eq!(h.reason_identifier.len(), 128);
            assert!(h.area_1_bytes() >= 512 && h.area_2_bytes() >= h.area_1_bytes());
        }
        Err(_) => assert!(block.len() < BLOCK || (block[0] != LID_HOST && block[0] != LID_CONTROLLER)),
    }
});
