//! The results reader (`bootbench_report::read::parse`, what every
//! `bootbench-report` command reads documents with) on any text: never
//! panics; an error names the file; a document it accepts survives a write
//! and a re-read unchanged, and every renderer (show, compare, csv, html,
//! the console table) takes it without panicking.
#![no_main]

use bootbench_report::read::{parse, Loaded};
use bootbench_report::{compare, csv, html, show};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let loaded = match parse("fuzz.json", text) {
        Ok(l) => l,
        Err(e) => {
            assert_eq!(e.file, "fuzz.json");
            assert!(!e.what.is_empty());
            return;
        }
    };
    let written = serde_json::to_string(&loaded.doc).expect("an accepted document serialises");
    let again = parse("again.json", &written).expect("a written document reads back");
    assert_eq!(serde_json::to_string(&again.doc).unwrap(), written);

    let _ = show::render(&loaded);
    let _ = bench_core::table::render(&loaded.doc);
    let docs: Vec<Loaded> = vec![loaded, again];
    let _ = compare::render(&docs[0], &docs[1]);
    let _ = csv::render(&docs);
    let _ = html::render(&docs);
});
