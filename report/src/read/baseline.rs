//! `baseline`: per disk model and firmware, the median, lowest and highest
//! of each figure over result documents (a fleet's earlier runs), as
//! `bench_core::verdict::acceptance::Baseline` makes it, for the config's
//! `acceptance.baseline` (schema `bootbench.baseline/1`,
//! schema/bootbench.baseline-1.schema.json).

use bench_core::verdict::acceptance::Baseline;

use crate::read::Loaded;

/// The baseline of `docs` as JSON text (ending in a line break), and a
/// warning when it holds no figure: no whole disk with a known model and
/// firmware ran a test that ended `ok`, so it would check nothing.
pub fn render(docs: &[Loaded]) -> (String, Option<String>) {
    let refs: Vec<&bench_core::document::result::ResultDoc> = docs.iter().map(|l| &l.doc).collect();
    let b = Baseline::of(&refs);
    let warning = b.figures.is_empty().then(|| {
        format!(
            "the baseline of {} document(s) holds no figure: no whole disk with a known model and firmware \
             ran a test that ended ok; it checks nothing",
            docs.len()
        )
    });
    // A Baseline is strings, integers and finite floats: it always serialises.
    let text = serde_json::to_string_pretty(&b).unwrap_or_default() + "\n";
    (text, warning)
}
