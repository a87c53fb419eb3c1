//! The acceptance verdict on the pages ([`crate::figures::verdict`]): the `html`
//! report opens with `<section class="verdicts" id="verdicts">`, per
//! document a `<table class="glance">` (a row per disk: verdict,
//! CrystalDiskMark's four figures where the run has them, highest
//! temperature, SMART status) and a `<ul class="failed-checks">` of every
//! check that did not pass; `fleet --html` has
//! `<section class="verdicts-by-model">`: the verdicts counted by model and
//! every failed disk with its reason. A document without a verdict gets
//! one `<p class="omitted" data-omitted="verdict">` line.

use std::fmt::Write as _;

use bench_core::document::result::Verdict;

use super::format::escape;
use crate::figures::text::mb_per_sec;
use crate::figures::verdict::{by_model_of, check_line, glance, not_passed, who, Glance, GLANCE_FIGURES, NO_VERDICT};
use crate::read::Loaded;

/// A verdict's cell: its word in capitals, classed `pass`, `warn` or `fail`.
fn verdict_cell(v: Verdict) -> String {
    format!("<td class=\"verdict {}\">{}</td>", v.name(), v.shout())
}

/// One disk's row of the glance table.
fn glance_row(out: &mut String, g: &Glance) {
    let t = g.verdict;
    let _ = write!(
        out,
        "<tr><td>{}</td><td>{}</td><td>{}</td>{}",
        escape(&t.target),
        escape(t.serial.as_deref().unwrap_or("-")),
        escape(t.model.as_deref().unwrap_or("-")),
        verdict_cell(t.verdict)
    );
    for (i, f) in g.figures.iter().enumerate() {
        match f {
            // MB/s for the sequential figures, IOPS (no decimals) for the random ones.
            Some((test, v)) if i < 2 => {
                let _ = write!(out, "<td title=\"{}\">{}</td>", escape(test), mb_per_sec(*v));
            }
            Some((test, v)) => {
                let _ = write!(out, "<td title=\"{}\">{:.0}</td>", escape(test), v);
            }
            None => out.push_str("<td>-</td>"),
        }
    }
    let temp = g.max_temperature_c.map_or_else(|| "-".into(), |c| c.to_string());
    let smart = g.smart.map_or_else(|| "-".into(), |v| format!("SMART {}", v.shout()));
    let _ = writeln!(out, "<td>{temp}</td><td>{smart}</td></tr>");
}

/// The `html` report's opening: per document, its disks at a glance and
/// every check that did not pass.
pub(super) fn glance_section(out: &mut String, docs: &[Loaded]) {
    out.push_str("<section class=\"verdicts\" id=\"verdicts\">\n<h2>Acceptance verdict at a glance</h2>\n");
    out.push_str(
        "<p class=\"units\">Per disk: its verdict; CrystalDiskMark's four figures where the run has them, each \
         from the first test of its workload that ended ok on the disk (its name in the cell's tooltip): SEQ = \
         seq_read / seq_write in MB/s (10<sup>6</sup> bytes per second), RND = rand_read / rand_write in IOPS \
         (completed requests per second); the highest temperature read (°C: before, during every test, after); \
         the SMART status check.</p>\n",
    );
    for (i, l) in docs.iter().enumerate() {
        let _ = writeln!(
            out,
            "<h3><a href=\"#doc-{i}\">{}</a>{}</h3>",
            escape(&l.file),
            l.doc
                .acceptance
                .as_ref()
                .map_or_else(String::new, |a| format!(": {}", a.verdict.shout()))
        );
        let Some(rows) = glance(&l.doc) else {
            let _ = writeln!(
                out,
                "<p class=\"omitted\" data-omitted=\"verdict\">{}</p>",
                escape(NO_VERDICT)
            );
            continue;
        };
        out.push_str("<table class=\"glance\"><tr><th>disk</th><th>serial</th><th>model</th><th>verdict</th>");
        for (_, label) in GLANCE_FIGURES {
            let _ = write!(out, "<th>{label}</th>");
        }
        out.push_str("<th>max °C</th><th>health</th></tr>\n");
        for g in &rows {
            glance_row(out, g);
        }
        out.push_str("</table>\n");
        let a = l.doc.acceptance.as_ref().expect("glance had a verdict");
        let failed: Vec<_> = not_passed(a).collect();
        if failed.is_empty() {
            let _ = writeln!(out, "<p>Every check passed (rules: {}).</p>", escape(&a.rules));
            continue;
        }
        let _ = writeln!(
            out,
            "<p>Checks that did not pass (rules: {}):</p>\n<ul class=\"failed-checks\">",
            escape(&a.rules)
        );
        for (t, c) in failed {
            let _ = writeln!(
                out,
                "<li class=\"{}\">{}: {}</li>",
                c.verdict.name(),
                escape(who(t)),
                escape(&check_line(c))
            );
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

/// `fleet --html`'s verdicts: counted by model, then every failed disk with
/// its reason.
pub(super) fn by_model_section(out: &mut String, fleet: &crate::render::fleet::Fleet) {
    let accs = fleet.acceptances();
    let (counts, failed, without) = by_model_of(&accs);
    out.push_str("<section class=\"verdicts-by-model\" id=\"verdicts\">\n<h2>Acceptance verdicts by model</h2>\n");
    if counts.is_empty() {
        out.push_str("<p class=\"omitted\" data-omitted=\"verdict\">No document has a verdict.</p>\n");
    } else {
        out.push_str(
            "<table class=\"verdict-counts\"><tr><th>model</th><th>PASS</th><th>WARN</th><th>FAIL</th></tr>\n",
        );
        for c in &counts {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&c.model),
                c.pass,
                c.warn,
                c.fail
            );
        }
        out.push_str("</table>\n");
    }
    if without > 0 {
        let _ = writeln!(
            out,
            "<p class=\"omitted\" data-omitted=\"verdict\">{without} document(s) without a verdict: {}</p>",
            escape(NO_VERDICT)
        );
    }
    if !failed.is_empty() {
        out.push_str(
            "<table class=\"failed-disks\"><tr><th>doc</th><th>disk</th><th>serial</th><th>model</th>\
             <th>reason (the first failing check)</th></tr>\n",
        );
        for f in &failed {
            let t = f.target;
            let _ = writeln!(
                out,
                "<tr><td>[{}] {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                f.doc + 1,
                escape(&fleet.docs[f.doc].file),
                escape(&t.target),
                escape(t.serial.as_deref().unwrap_or("-")),
                escape(t.model.as_deref().unwrap_or("-")),
                escape(f.reason.map_or("(no failing check recorded)", |c| c.message.as_str()))
            );
        }
        out.push_str("</table>\n");
    }
    out.push_str("</section>\n");
}
