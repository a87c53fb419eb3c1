//! bench-core's SCSI protocol-specific port log page parser
//! (`bench_core::device::link::parse_sas_port_log`): on any bytes it never
//! panics; a page it accepts is page 18h, and every phy it gives comes from
//! a whole 48-byte descriptor inside the page (at most one per 48 bytes),
//! with a known link rate or none and all four error counts.
//!
//! Input: what LOG SENSE 18h would return.
#![no_main]

use bench_core::device::link::parse_sas_port_log;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(phys) = parse_sas_port_log(data) else {
        return;
    };
    assert_eq!(data[0] & 0x3f, 0x18);
    assert!(phys.len() * 48 <= data.len().saturating_sub(4));
    for p in &phys {
        assert!(p.rate_mbps.is_none_or(|r| [1500, 3000, 6000, 12000, 22500].contains(&r)), "{p:?}");
        assert!(p.max_rate_mbps.is_none());
        assert!(p.invalid_dwords.is_some() && p.disparity_errors.is_some());
        assert!(p.loss_of_dword_sync.is_some() && p.phy_reset_problems.is_some());
        assert!(p.invalid_dwords.is_some_and(|v| v <= u64::from(u32::MAX)));
    }
});
