//! One result document's section of the page: the run and the machine, the summary tables
//! (targets, analysis lines, health), the charts ([`super::charts`]), each disk's surface scan
//! ([`super::scan`]), the tests and their passes.

use std::fmt::Write as _;

use bench_core::document::result::{ResultDoc, Status};
use bench_core::spec::Workload;

use super::charts::charts;
use super::format::{escape, fmt_mbps, fmt_metric, fmt_ns, fmt_size, num, opt, opt_num};
use super::Chart;
use crate::read::Loaded;

pub(super) fn section(out: &mut String, i: usize, l: &Loaded) {
    let doc = &l.doc;
    let _ = writeln!(out, "<section class=\"doc\" id=\"doc-{i}\" data-doc=\"{i}\">");
    let _ = writeln!(out, "<h2>{}</h2>", escape(&l.file));
    for w in &l.warnings {
        let _ = writeln!(out, "<p class=\"warning\">Warning: {}</p>", escape(w));
    }
    let run = &doc.run;
    let host = &doc.host;
    let _ = writeln!(
        out,
        "<dl class=\"facts\"><dt>Tool</dt><dd>{} {}</dd><dt>Started</dt><dd>{}</dd><dt>Duration</dt><dd>{} s</dd>\
         <dt>Profile</dt><dd>{}</dd><dt>Config</dt><dd>{}</dd><dt>Seed</dt><dd>{}</dd><dt>Status</dt><dd>{}{}</dd>\
         <dt>Host</dt><dd>{} · {} {} · serial {}</dd><dt>CPU</dt><dd>{} · {} cores</dd><dt>Memory</dt><dd>{}</dd>\
         <dt>Kernel</dt><dd>{}</dd></dl>",
        escape(&doc.tool.name),
        escape(&doc.tool.version),
        crate::figures::text::utc(run.started_unix_ns),
        num(run.duration_ns as f64 / 1e9),
        opt(run.profile.as_ref()),
        escape(&run.config_source),
        run.seed,
        run.status,
        run.error
            .as_ref()
            .map_or_else(String::new, |e| format!(": {}", escape(e))),
        opt(host.hostname.as_ref()),
        opt(host.sys_vendor.as_ref()),
        opt(host.product_name.as_ref()),
        opt(host.product_serial.as_ref()),
        opt(host.cpu_model.as_ref()),
        host.cores.map_or_else(|| "-".into(), |c| c.to_string()),
        host.memory_bytes
            .map_or_else(|| "-".into(), |b| format!("{} MiB", num(b as f64 / 1_048_576.0))),
        opt(host.kernel.as_ref()),
    );
    if let Some(a) = &doc.attestation {
        let _ = writeln!(
            out,
            "<dl class=\"facts\"><dt>Attestation</dt><dd>{}</dd></dl>",
            escape(&crate::figures::text::attestation(a))
        );
    }
    if run.simulated {
        out.push_str("<p class=\"warning\">Simulated disks (--simulate): the figures come from a model.</p>\n");
    }
    summary(out, doc);
    for kind in Chart::ALL {
        let _ = writeln!(out, "<h3>{}</h3>", kind.heading());
        let found = charts(doc, kind);
        if found.is_empty() {
            let _ = writeln!(
                out,
                "<p class=\"omitted\" data-omitted=\"{}\">{}</p>",
                kind.id(),
                kind.missing()
            );
        }
        if !found.is_empty() {
            out.push_str("<div class=\"charts\">\n");
            for c in found {
                out.push_str(&c);
            }
            out.push_str("</div>\n");
        }
    }
    super::scan::sections(out, doc);
    tests_table(out, doc);
    passes_table(out, doc);
    steady_list(out, doc);
    out.push_str("</section>\n");
}

/// The summary tables: targets and the analysis (the tests come after the charts).
pub(super) fn summary(out: &mut String, doc: &ResultDoc) {
    out.push_str(
        "<h3>Summary</h3>\n<table class=\"targets\"><thead><tr><th>Target</th><th>Kind</th><th>Model</th>\
         <th>Serial</th><th>Transport</th><th>Size</th><th>Rotational</th><th>Built of</th></tr></thead><tbody>\n",
    );
    for t in &doc.targets {
        let built = t.stack.as_ref().map_or_else(String::new, |s| {
            let of = if s.members.is_empty() {
                s.on.clone().unwrap_or_default()
            } else {
                s.members.join(", ")
            };
            format!("{} {} {}: {}", s.kind, s.level, s.name, of)
        });
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&t.path),
            t.kind,
            opt(t.model.as_ref()),
            opt(t.serial.as_ref()),
            opt(t.transport.as_ref()),
            fmt_size(t.size_bytes),
            t.rotational.map_or("-", |r| if r { "yes" } else { "no" }),
            escape(&built)
        );
    }
    out.push_str("</tbody></table>\n");
    analysis_table(out, doc);
    link_table(out, doc);
    health_tables(out, doc);
}

/// Each disk's path (PCIe, SATA, SAS, USB links) before and after the run,
/// and what could not be read.
fn link_table(out: &mut String, doc: &ResultDoc) {
    let with: Vec<_> = doc.targets.iter().filter(|t| t.link.is_some()).collect();
    if with.is_empty() {
        return;
    }
    out.push_str(
        "<h3>Links</h3>\n<table class=\"links\"><thead><tr><th>Target</th><th>Before</th><th>After</th>\
         <th>Not read</th></tr></thead><tbody>\n",
    );
    let said = |r: Option<&bench_core::document::result::LinkReading>| {
        r.map_or_else(|| "-".to_string(), bench_core::device::link::summary)
    };
    for t in with {
        let Some(l) = &t.link else { continue };
        let errors: Vec<&str> = l
            .before
            .iter()
            .chain(l.after.iter())
            .flat_map(|r| r.errors.iter().map(String::as_str))
            .collect();
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&t.path),
            escape(&said(l.before.as_ref())),
            escape(&said(l.after.as_ref())),
            escape(&errors.join("; "))
        );
    }
    out.push_str("</tbody></table>\n");
}

/// Each disk's health (before, after, delta; each test's highest
/// temperature) and the health analysis lines.
pub(super) fn health_tables(out: &mut String, doc: &ResultDoc) {
    if !doc.health_analysis.is_empty() {
        out.push_str(
            "<h3>Health analysis</h3>\n<table class=\"health-analysis\"><thead><tr><th>Kind</th><th>Target</th>\
             <th>Test</th><th>Figure</th><th>What</th></tr></thead><tbody>\n",
        );
        for l in &doc.health_analysis {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                l.kind,
                escape(&l.target),
                opt(l.test.as_ref()),
                escape(&l.what),
                escape(&l.message)
            );
        }
        out.push_str("</tbody></table>\n");
    }
    for t in doc.targets.iter().filter(|t| t.health.is_some()) {
        let Some(h) = &t.health else { continue };
        let _ = writeln!(
            out,
            "<h3>Health of {}</h3>\n<p>{}</p>",
            escape(&t.path),
            escape(&crate::figures::health::headline(h))
        );
        let rows = crate::figures::health::rows(h);
        if !rows.is_empty() {
            out.push_str(
                "<table class=\"health\"><thead><tr><th>Figure</th><th>Before</th><th>After</th><th>Delta</th></tr></thead><tbody>\n",
            );
            for r in rows {
                let _ = writeln!(
                    out,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&r[0]),
                    escape(&r[1]),
                    escape(&r[2]),
                    escape(&r[3])
                );
            }
            out.push_str("</tbody></table>\n");
        }
        let temps = crate::figures::health::per_test(&h.tests);
        if !temps.is_empty() {
            let _ = writeln!(
                out,
                "<p>Highest temperature per test: {}</p>",
                escape(&temps.join("; "))
            );
        }
        let farm = crate::figures::health::farm(h);
        if !farm.is_empty() {
            out.push_str(
                "<table class=\"farm\"><thead><tr><th>FARM (before the tests)</th><th></th></tr></thead><tbody>\n",
            );
            for [name, value] in farm {
                let _ = writeln!(out, "<tr><td>{}</td><td>{}</td></tr>", escape(&name), escape(&value));
            }
            out.push_str("</tbody></table>\n");
        }
        let attrs = crate::figures::health::attributes(h);
        if !attrs.is_empty() {
            out.push_str(
                "<table class=\"smart\"><thead><tr><th>ID</th><th>Attribute</th><th>Current</th><th>Worst</th>\
                 <th>Threshold</th><th>Raw</th><th></th></tr></thead><tbody>\n",
            );
            for a in attrs {
                out.push_str("<tr>");
                for c in &a {
                    let _ = write!(out, "<td>{}</td>", escape(c));
                }
                out.push_str("</tr>\n");
            }
            out.push_str("</tbody></table>\n");
        }
    }
}

/// Every test's headline figures.
pub(super) fn tests_table(out: &mut String, doc: &ResultDoc) {
    out.push_str("<h3>Every test</h3>\n");
    out.push_str(
        "<table class=\"tests\"><thead><tr><th>Target</th><th>Test</th><th>Status</th><th>Read MB/s</th>\
         <th>Write MB/s</th><th>Read IOPS</th><th>Write IOPS</th><th>Mean latency</th><th>Other</th></tr></thead><tbody>\n",
    );
    for t in &doc.tests {
        let s = &t.summary;
        let status = status_text(&t.status);
        let mut other = Vec::new();
        if let Some(c) = s.command_overhead_ns.filter(|v| v.is_finite()) {
            other.push(format!("command overhead {}", fmt_ns(c)));
        }
        for f in &s.seek_ns {
            other.push(format!("{} {}", f.label, fmt_ns(f.value)));
        }
        let per_step_unit = match t.workload {
            Workload::IopsSweep => " IOPS",
            _ => "",
        };
        for f in &s.per_step {
            if t.workload == Workload::Slog {
                // Labelled by the write size in bytes.
                other.push(format!("{} B write {}", f.label, fmt_mbps(f.value)));
            } else if per_step_unit.is_empty() {
                other.push(format!("{} {}", f.label, fmt_mbps(f.value)));
            } else {
                other.push(format!("{} {}{per_step_unit}", f.label, num(f.value)));
            }
        }
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&t.target),
            escape(&t.name),
            escape(&status),
            opt_num(s.read_bytes_per_sec, |v| num(v / 1e6)),
            opt_num(s.write_bytes_per_sec, |v| num(v / 1e6)),
            opt_num(s.read_iops, num),
            opt_num(s.write_iops, num),
            opt_num(s.lat_mean_ns, fmt_ns),
            escape(&other.join("; "))
        );
    }
    out.push_str("</tbody></table>\n");
}

/// The tests that waited for steady state before they were measured
/// (fio's `ss`): a line per wait ([`crate::figures::text::steady_lines`]), with the
/// target. Nothing if none did.
pub(super) fn steady_list(out: &mut String, doc: &ResultDoc) {
    let mut items = String::new();
    for t in &doc.tests {
        for l in crate::figures::text::steady_lines(t) {
            let _ = writeln!(items, "<li>{}: {}</li>", escape(&t.target), escape(&l));
        }
    }
    if items.is_empty() {
        return;
    }
    out.push_str("<h3>Steady state before measuring</h3>\n<p class=\"units\">fio's <code>ss</code>: the workload ran unmeasured until the criterion held over a window (or <code>ss_max</code> passed); the figures above are of the part after it.</p>\n<ul class=\"steady\">\n");
    out.push_str(&items);
    out.push_str("</ul>\n");
}

/// The steps that ran several passes (`params.passes`, `params.warmup`) or
/// filled their range first (`params.fill`): what was filled, each pass's
/// MB/s in the order run with the warm-up and the reported pass marked,
/// and the lowest mean latency of the measured passes (CrystalDiskMark's
/// latency, chosen apart from the best pass). Nothing if no step did.
pub(super) fn passes_table(out: &mut String, doc: &ResultDoc) {
    let mut rows = String::new();
    for t in &doc.tests {
        for st in &t.steps {
            if st.passes.is_empty() && st.filled_bytes.is_none() {
                continue;
            }
            let fill = match st.filled_bytes {
                None => "-".to_string(),
                Some(0) => "not filled: the target may not be written, it read the data already there".to_string(),
                Some(n) => format!("{} with random data, untimed", fmt_size(n)),
            };
            let mut cells = String::new();
            for (i, p) in st.passes.iter().enumerate() {
                let (class, title) = match crate::figures::text::pass_mark(st, i) {
                    crate::figures::text::PassMark::Warmup => ("pass warmup", "warm-up, never counted"),
                    crate::figures::text::PassMark::Reported => ("pass chosen", "the pass reported: the fastest"),
                    crate::figures::text::PassMark::Measured => ("pass", "measured"),
                };
                let _ = write!(
                    cells,
                    "<span class=\"{class}\" title=\"pass {}: {title}\">{}</span> ",
                    i + 1,
                    num(p.bytes_per_sec / 1e6)
                );
            }
            let cells = if cells.is_empty() {
                "-".to_string()
            } else {
                cells.trim_end().to_string()
            };
            let lowest = crate::figures::text::lowest_latency(st)
                .map_or_else(|| "-".to_string(), |(ns, pass)| format!("{} (pass {pass})", fmt_ns(ns)));
            let _ = writeln!(
                rows,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&t.target),
                escape(&t.name),
                escape(&st.label),
                escape(&fill),
                cells,
                escape(&lowest)
            );
        }
    }
    if rows.is_empty() {
        return;
    }
    out.push_str("<h3>Passes and fills</h3>\n");
    out.push_str(
        "<p class=\"units\">Each pass's MB/s (10<sup>6</sup> B/s) of reads and writes together, in the order run: \
         <span class=\"pass warmup\">warm-up</span> (never counted), <span class=\"pass chosen\">reported</span> \
         (the fastest measured pass). The lowest mean latency is chosen over the measured passes on its own, as \
         CrystalDiskMark reports it.</p>\n",
    );
    out.push_str(
        "<table class=\"passes\"><thead><tr><th>Target</th><th>Test</th><th>Step</th><th>Fill</th>\
         <th>Passes, MB/s</th><th>Lowest mean latency</th></tr></thead><tbody>\n",
    );
    out.push_str(&rows);
    out.push_str("</tbody></table>\n");
}

/// A test's status in words: its `state`, then its other fields
/// (`error: errno 5, op read, offset 4096, message ...`). Read from the
/// status's JSON form so every state the document may hold is shown.
pub(super) fn status_text(status: &Status) -> String {
    let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(status) else {
        return format!("{status:?}");
    };
    let state = fields.get("state").and_then(|s| s.as_str()).unwrap_or("?");
    let rest: Vec<String> = fields
        .iter()
        .filter(|(k, _)| k.as_str() != "state")
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k} {s}"),
            v => format!("{k} {v}"),
        })
        .collect();
    if rest.is_empty() {
        state.to_string()
    } else {
        format!("{state}: {}", rest.join(", "))
    }
}

/// The analysis lines: measured against expected.
pub(super) fn analysis_table(out: &mut String, doc: &ResultDoc) {
    if !doc.analysis.is_empty() {
        out.push_str(
            "<table class=\"analysis\"><thead><tr><th>Kind</th><th>Target</th><th>Test</th><th>Figure</th>\
             <th>Measured</th><th>Expected</th><th>Efficiency</th><th>Limited by</th><th>Rule</th></tr></thead><tbody>\n",
        );
        for a in &doc.analysis {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}%</td><td>{}</td><td>{}</td></tr>",
                a.kind,
                escape(&a.target),
                escape(&a.test),
                a.metric,
                escape(&fmt_metric(a.metric, a.measured)),
                escape(&fmt_metric(a.metric, a.expected)),
                num(a.efficiency * 100.0),
                opt(a.limited_by.as_ref()),
                escape(&a.rule)
            );
        }
        out.push_str("</tbody></table>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::html::render;
    use crate::render::html::tests::{doc, loaded, QUICK};

    #[test]
    fn statuses_read_in_words() {
        assert_eq!(status_text(&Status::Ok), "ok");
        assert_eq!(
            status_text(&Status::Skipped {
                reason: "no writes".into()
            }),
            "skipped: reason no writes"
        );
        let e: Status = serde_json::from_str(
            r#"{"state":"error","errno":5,"op":"read","offset":4096,"message":"Input/output error"}"#,
        )
        .unwrap();
        let text = status_text(&e);
        assert!(text.starts_with("error: "), "{text}");
        for part in ["errno 5", "offset 4096", "message Input/output error", "op read"] {
            assert!(text.contains(part), "{part} in {text}");
        }
    }

    /// The passes-and-fills table: each pass's MB/s in the order run, the
    /// warm-up and the reported pass marked, the fill (or that none was
    /// possible), the lowest mean latency with its pass; nothing at all
    /// for a run whose steps ran once and filled nothing.
    #[test]
    fn passes_and_fills_are_tabled() {
        let d = doc(QUICK);
        assert!(d
            .tests
            .iter()
            .all(|t| t.steps.iter().all(|s| s.passes.is_empty() && s.filled_bytes.is_none())));
        let html = render(&[loaded("q.json", d.clone())]);
        assert!(!html.contains("Passes and fills") && !html.contains("class=\"passes\""));
        let mut d = d;
        let pass = crate::figures::text::test_pass;
        let (name, other) = (d.tests[0].name.clone(), d.tests[1].name.clone());
        let st = &mut d.tests[0].steps[0];
        st.passes = vec![
            pass(true, 9e6, 100.0),
            pass(false, 4e6, 1234.0),
            pass(false, 5e6, 2000.0),
        ];
        (st.chosen_pass, st.lowest_lat_pass, st.lowest_lat_mean_ns) = (Some(2), Some(1), Some(1234.0));
        st.filled_bytes = Some(1 << 30);
        d.tests[1].steps[0].filled_bytes = Some(0);
        let html = render(&[loaded("q.json", d)]);
        let table = &html[html.find("<table class=\"passes\">").expect("the table")..];
        let table = &table[..table.find("</table>").unwrap()];
        let rows: Vec<&str> = table.split("<tr>").skip(2).collect();
        assert_eq!(rows.len(), 2, "{table}");
        assert!(rows[0].contains(&format!("<td>{name}</td>")), "{}", rows[0]);
        assert!(
            rows[0].contains("<td>1.07 GB (1024 MiB) with random data, untimed</td>"),
            "{}",
            rows[0]
        );
        assert!(
            rows[0].contains(
                "<span class=\"pass warmup\" title=\"pass 1: warm-up, never counted\">9.00</span> \
                 <span class=\"pass\" title=\"pass 2: measured\">4.00</span> \
                 <span class=\"pass chosen\" title=\"pass 3: the pass reported: the fastest\">5.00</span>"
            ),
            "{}",
            rows[0]
        );
        assert!(
            rows[0].contains(&format!("<td>{} (pass 2)</td>", fmt_ns(1234.0))),
            "{}",
            rows[0]
        );
        assert!(rows[1].contains(&format!("<td>{other}</td>")), "{}", rows[1]);
        assert!(
            rows[1].contains("<td>not filled: the target may not be written"),
            "{}",
            rows[1]
        );
        assert!(rows[1].contains("</td><td>-</td><td>-</td></tr>"), "{}", rows[1]);
    }
}
