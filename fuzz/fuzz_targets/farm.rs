//! bench-core's FARM parsers (`bench_core::device::farm`): on any bytes
//! they never panic; a log they accept carries the FARM signature, an ATA
//! one holds all six pages, and the power-on hours check is symmetric in
//! its tolerance and never fires within 24 hours.
//!
//! Input: byte 0 picks ATA or SCSI, the rest is the log.
#![no_main]

use bench_core::device::farm::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, log)) = data.split_first() else {
        return;
    };
    let farm = if which % 2 == 0 {
        parse_ata_farm(log).inspect(|_| assert!(log.len() >= 5 * 512 + 8880))
    } else {
        parse_scsi_farm(log)
    };
    if let Ok(f) = farm {
        assert!(f.transport.is_some());
        if let Some(h) = f.power_on_hours {
            assert!(h < 1 << 56);
            let near = h.saturating_sub(24);
            assert!(power_on_hours_disagree(near, h).is_none());
            assert_eq!(
                power_on_hours_disagree(0, h).is_some(),
                power_on_hours_disagree(h, 0).is_some()
            );
        }
    }
});
