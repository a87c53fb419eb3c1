//! The text summary, like the seed posts' tables: one row per target,
//! columns cached, buffered, seqrd, seqwr, rndrd, rndwr; the unit in the
//! header (MB/s = 10^6 bytes per second).

use alloc::string::String;

use crate::result::ResultDoc;

/// Render the summary table of a result document.
pub fn render(doc: &ResultDoc) -> String {
    todo!()
}
