//! bench-core's OCP C0h parser (`bench_core::device::ocp`): on any bytes
//! it never panics; it refuses only pages under 512 bytes, accepts only the
//! OCP GUID, gives the later versions' fields only to those versions, and
//! a log compared with itself grows nothing.
//!
//! Input: the log page.
#![no_main]

use bench_core::device::ocp::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match parse_ocp_smart(data) {
        Err(_) => assert!(data.len() < PAGE),
        Ok(None) => assert!(data[496..512] != GUID),
        Ok(Some(s)) => {
            assert!(data[496..512] == GUID);
            assert_eq!(s.dssd_version.is_some(), s.log_page_version >= 2);
            assert_eq!(s.v5.is_some(), s.log_page_version >= 5);
            assert_eq!(s.form_factor.is_some(), s.log_page_version >= 6);
            assert!(s.bad_user_nand_blocks.raw < 1 << 48);
            assert!(must_not_grow(&s, &s).is_empty());
            let w = warnings(&s, &s, CAPACITOR_WARN_BELOW_PCT);
            assert!(w.iter().all(|m| !m.contains("during the run")));
        }
    }
});
