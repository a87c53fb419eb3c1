//! bench-core's hidden-capacity parsers (`bench_core::device::capacity`): on any
//! bytes they never panic, and what they return holds to the answer: a
//! native max LBA comes only from sense data with ATA registers and is
//! below 2^48; IDENTIFY's visible sectors are words 100-103 or 60-61 and
//! its logical sector a size from 512 to 64 KiB; a DCO page is accepted
//! only with a revision and (with its signature) a good checksum; an NVMe
//! namespace's size is NSZE times a power of two; the namespace list
//! holds no 0; the records say 0 hidden when native equals visible.
//!
//! Input: byte 0 picks the parser, the rest is the answer.
#![no_main]

use bench_core::device::capacity::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, page)) = data.split_first() else {
        return;
    };
    match which % 5 {
        0 => {
            if let Ok(lba) = ata_sense_lba48(page) {
                assert!(lba < 1 << 48);
                assert!(matches!(page[0] & 0x7f, 0x70..=0x73));
            }
        }
        1 => {
            if let Ok(v) = ata_visible(page) {
                assert!((512..=65536).contains(&v.sector_bytes));
                let w = |i: usize| u64::from(u16::from_le_bytes([page[2 * i], page[2 * i + 1]]));
                let want = if v.lba48 {
                    w(100) | w(101) << 16 | w(102) << 32 | w(103) << 48
                } else {
                    w(60) | w(61) << 16
                };
                assert_eq!(v.sectors, want);
                let h = ata_hidden(v, Ok(v.sectors.saturating_sub(1)), Err("x".into()));
                if v.sectors > 0 && v.sectors.checked_mul(u64::from(v.sector_bytes)).is_some() {
                    assert_eq!(h.hidden_bytes, Some(0));
                }
            } else {
                assert!(page.len() < 512 || page[213] & 0x10 != 0);
            }
        }
        2 => {
            if ata_dco_max_lba(page).is_ok() {
                assert!(page.len() >= 512 && (page[0] != 0 || page[1] != 0));
            }
        }
        3 => {
            let _ = nvme_ctrl_capacity(page);
            assert!(!nvme_ns_list(page).contains(&0));
        }
        _ => {
            if let Ok(b) = nvme_ns_bytes(page) {
                let nsze = u64::from_le_bytes(page[..8].try_into().unwrap());
                assert!(nsze == 0 || (b % nsze == 0 && (b / nsze).is_power_of_two() && b / nsze >= 512));
            }
        }
    }
});
