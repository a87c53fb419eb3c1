//! The HTML report (owned by the "report-html" helper; this is the
//! placeholder signature main.rs calls until it lands).

use crate::read::Loaded;

/// One self-contained HTML page for `docs`.
pub fn render(docs: &[Loaded]) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>bootbench report</title></head><body>\n",
    );
    for d in docs {
        out.push_str("<p>");
        out.push_str(&d.file.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;"));
        out.push_str("</p>\n");
    }
    out.push_str("</body></html>\n");
    out
}
