//! report's quote check (`bootbench_report::verify::quote::check_quote`)
//! on any key, attestation and signature bytes: never panics; it accepts
//! only what verifies, and an accepted quote's PCRs are those the PCR
//! callback was asked for, in order, each once per bank.
//!
//! Input: two length bytes split the rest into the key's public area, the
//! attestation and the signature; the qualifying data is empty, every PCR
//! value 32 zero bytes.
#![no_main]

use bootbench_report::verify::quote::check_quote;
use libfuzzer_sys::fuzz_target;
use std::cell::RefCell;

fuzz_target!(|data: &[u8]| {
    let [a, b, rest @ ..] = data else {
        return;
    };
    let (a, b) = (usize::from(*a).min(rest.len()), usize::from(*b));
    let (public, rest) = rest.split_at(a);
    let (attest, sig) = rest.split_at(b.min(rest.len()));
    let asked = RefCell::new(Vec::new());
    let pcr = |alg: u16, n: u8| {
        asked.borrow_mut().push((alg, n));
        Some(vec![0u8; 32])
    };
    if let Ok(q) = check_quote(public, attest, sig, &[], &pcr) {
        assert_eq!(q.pcrs, *asked.borrow());
        assert!(q.key_name.len() >= 4);
    }
});
