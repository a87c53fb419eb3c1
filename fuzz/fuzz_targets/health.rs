//! bench-core's health page parsers (`bench_core::device::health`): on any bytes
//! they never panic, and what they return holds to the page: ATA pages
//! are accepted only with a good checksum and give at most 30 attributes
//! whose ids are in the page, each `failing` exactly when its threshold
//! says so; the NVMe log's counters are the page's bytes; SCSI parameters
//! lie inside the page; the sense parser answers only from registers.
//!
//! Input: byte 0 picks the parser, the rest is the page (for ATA, also the
//! thresholds page: the input's second 512 bytes).
#![no_main]

use bench_core::device::health::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, page)) = data.split_first() else {
        return;
    };
    match which % 6 {
        0 => {
            let th = page.get(512..).and_then(|t| parse_ata_thresholds(t).ok());
            if let Ok(r) = parse_ata_smart(page, th.as_ref()) {
                assert!(page.len() >= 512);
                assert_eq!(page[..512].iter().fold(0u8, |a, &b| a.wrapping_add(b)), 0);
                assert!(r.attributes.len() <= ATTRIBUTES);
                for a in &r.attributes {
                    assert_ne!(a.id, 0);
                    assert!(a.raw < 1 << 48);
                    let t = th.as_ref().and_then(|t| t.get(&a.id)).copied();
                    assert_eq!(a.threshold, t);
                    assert_eq!(a.failing, t.is_some_and(|t| t > 0 && a.current <= t));
                }
            } else {
                assert!(ata_checksum(page).is_err());
            }
        }
        1 => {
            if let Ok(r) = parse_nvme_smart_log(page) {
                let n = r.nvme.unwrap();
                assert_eq!(n.critical_warning, page[0]);
                assert_eq!(r.smart_passed, Some(page[0] == 0));
                let k = u16::from_le_bytes([page[1], page[2]]);
                assert_eq!(r.temperature_k, (k != 0).then_some(k));
                assert_eq!(r.temperature_c, r.temperature_k.map(|k| i32::from(k) - KELVIN_0C));
                assert_eq!(
                    r.counters["data_read_bytes"],
                    n.data_units_read.saturating_mul(NVME_DATA_UNIT_BYTES)
                );
            } else {
                assert!(page.len() < 512);
            }
        }
        2 => {
            let _ = parse_ata_status_sense(page);
            // Descriptor format with the status descriptor first: the answer
            // is decided by bytes 17 and 19 alone.
            if page.len() >= 22 && page[0] & 0x7f == 0x72 && page[7] >= 14 && page[8] == 9 && page[9] >= 12 {
                let want = match (page[17], page[19]) {
                    (0x4f, 0xc2) => Some(true),
                    (0xf4, 0x2c) => Some(false),
                    _ => None,
                };
                assert_eq!(parse_ata_status_sense(page).ok(), want);
            }
        }
        3 => {
            if let Ok(params) = log_parameters(page, page.first().map_or(0, |b| b & 0x3f)) {
                let base = page.as_ptr() as usize;
                for (_, v) in params {
                    let at = v.as_ptr() as usize - base;
                    assert!(at + v.len() <= page.len());
                }
            }
            let _ = parse_scsi_temperature(page);
            let _ = parse_scsi_uncorrected(page, 0x03);
            if let Ok(Some(n)) = parse_grown_defects(page) {
                assert!(n <= u64::from(u16::MAX) / 4);
            }
        }
        4 => {
            let _ = parse_nvme_id_ctrl_temps(page);
        }
        _ => {
            let _ = parse_ata_thresholds(page);
        }
    }
});
