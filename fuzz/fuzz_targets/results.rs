//! The results reader on any text: never panics; a document it accepts
//! survives a write and a re-read unchanged.
#![no_main]

use bench_core::result::ResultDoc;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(doc) = serde_json::from_str::<ResultDoc>(text) else { return };
    let again = serde_json::to_string(&doc).expect("an accepted document serialises");
    let back: ResultDoc = serde_json::from_str(&again).expect("a written document reads back");
    // NaN never equals itself; compare the written forms instead.
    assert_eq!(serde_json::to_string(&back).unwrap(), again);
});
