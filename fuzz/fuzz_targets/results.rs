//! The results reader (`bootbench_report::read::parse`, what every
//! `bootbench-report` command reads documents with) on any text: never
//! panics; an error names the file; a document it accepts survives a write
//! and a re-read unchanged (floats to 1e-12 relative: serde_json's default
//! float parser, without its `float_roundtrip` feature, may read the last
//! digit of a written float 1 ULP off), and every renderer (show, compare, csv, html,
//! the console table) takes it without panicking.
#![no_main]

use bootbench_report::read::{parse, Loaded};
use bootbench_report::export::csv;
use bootbench_report::render::{compare, html, show};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// Equal, floats within 1e-12 relative.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

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
    let (a, b): (Value, Value) = (
        serde_json::to_value(&loaded.doc).unwrap(),
        serde_json::to_value(&again.doc).unwrap(),
    );
    assert!(same(&a, &b), "a re-read changed the document:\n{a}\n{b}");

    let _ = show::render(&loaded);
    let _ = bench_core::verdict::table::render(&loaded.doc);
    let docs: Vec<Loaded> = vec![loaded, again];
    let _ = compare::render(&docs[0], &docs[1]);
    let _ = csv::render(&docs);
    let _ = html::render(&docs);
});
