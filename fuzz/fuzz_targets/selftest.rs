//! bench-core's self-test parsers (`bench_core::device::selftest`): on any bytes
//! they never panic, and what they return holds to the page: the ATA logs
//! are accepted only with a good checksum, give at most their descriptors'
//! count of entries, a failing LBA only for a failing result (and within 28
//! bits from log 06h); the NVMe log gives at most 20 entries, none marked
//! "not used", a segment only for a segment failure; the SCSI page's
//! entries are at most 20, newest first; the execution status byte's
//! percent is at most 100.
//!
//! Input: byte 0 picks the parser, the rest is the page.
#![no_main]

use bench_core::device::health::ata_checksum;
use bench_core::document::result::SelfTestOutcome;
use bench_core::device::selftest::*;
use libfuzzer_sys::fuzz_target;

fn failing(e: &Entry) -> bool {
    matches!(e.status, Status::Ended(o) if o.passed() == Some(false))
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, page)) = data.split_first() else {
        return;
    };
    match which % 6 {
        0 => match parse_ata_self_test_log(page) {
            Ok(l) => {
                assert!(ata_checksum(page).is_ok());
                assert!(l.entries.len() <= ATA_LOG_DESCRIPTORS);
                assert!(l.index <= 255);
                if l.index == 0 || usize::from(l.index) > ATA_LOG_DESCRIPTORS {
                    assert!(l.entries.is_empty());
                }
                for e in &l.entries {
                    assert!(e.failing_lba.is_none() || failing(e));
                    assert!(e.failing_lba.is_none_or(|x| x < 1 << 28));
                    assert!(e.remaining_pct.is_some_and(|r| r <= 100));
                }
            }
            Err(_) => assert!(ata_checksum(page).is_err()),
        },
        1 => match parse_ata_ext_self_test_log(page) {
            Ok(l) => {
                assert!(l.entries.len() <= ATA_EXT_LOG_DESCRIPTORS);
                for e in &l.entries {
                    assert!(e.failing_lba.is_none() || failing(e));
                    assert!(e.failing_lba.is_none_or(|x| x < 1 << 48));
                }
            }
            Err(_) => assert!(ata_checksum(page).is_err()),
        },
        2 => match parse_nvme_self_test_log(page) {
            Ok(l) => {
                assert!(l.entries.len() <= NVME_LOG_ENTRIES);
                assert!(l.completion_pct <= 100 && l.current <= 15);
                for e in &l.entries {
                    assert_ne!(e.result, 0x0f);
                    assert!(e.segment.is_none() || e.status == Status::Ended(SelfTestOutcome::FailedSegment));
                }
            }
            Err(_) => assert!(page.len() < NVME_LOG_BYTES),
        },
        3 => {
            if let Ok(v) = parse_scsi_self_test_log(page) {
                assert!(v.len() <= 20);
                for e in &v {
                    assert!(e.code <= 7);
                    assert!(e.failing_lba.is_none() || failing(e));
                }
            }
        }
        4 => {
            if let Ok(c) = parse_ata_caps(page) {
                assert_eq!(c.status, page[363]);
                let (_, left) = ata_execution_status(c.status);
                assert!(left <= 100);
            }
        }
        _ => {
            if let Ok((_, edstt)) = parse_nvme_id_self_test(page) {
                assert!(page.len() >= 318);
                assert_ne!(edstt, Some(0));
            }
        }
    }
});
