//! The HTML report (`bootbench-report html FILE... -o report.html`): one
//! self-contained page, no scripts, no external fonts, styles or images:
//! inline CSS and inline SVG charts, one section per result document.
//!
//! Each section has the run and the machine, a summary table (targets, every
//! test's headline figures, the analysis lines) and these charts, each an
//! `<svg class="chart" data-chart="KIND">` whose data marks (points, bars)
//! carry `class="mark"` and a `<title>` with the figure and its unit:
//!
//! | KIND          | what                                                                 |
//! |---------------|----------------------------------------------------------------------|
//! | `surface`     | `zones`: read MB/s against the position on the target, outside to inside (the `surface_NN` steps as a line, `outside`/`middle`/`inside` as squares) |
//! | `seek`        | `seek_profile`: mean time per read of each section, per target       |
//! | `latency`     | each test's completion-latency percentiles (log time axis), per target, step and direction |
//! | `array`       | each md analysis line: the members alone, the array, and the expected figure |
//! | `layer`       | each dm analysis line: the device beneath against the layer          |
//! | `all-at-once` | each all-at-once run: every disk alone against all together          |
//! | `fleet`       | the fleet section's strips: per test and figure, each group's disks (a row per group, one axis), the median marked, the outliers red |
//! | `surface-scan`| a disk's surface scan: read MB/s of each zone against the position on the disk (GB from its first byte), the unreadable LBAs as dashed red lines |
//!
//! A chart with no data in a document is not drawn: a note
//! `<p class="omitted" data-omitted="KIND">` says why. Under an array's or
//! layer's note, a `<table class="members">` shows what each member did
//! during the test (`Analysis.members`: its share of the bytes and its
//! utilization), when the document has them.
//!
//! After the documents' sections, `<section class="fleet" id="fleet">`
//! holds the last part of what `bootbench-report fleet` prints: the whole
//! disks of all the documents grouped by model and firmware
//! ([`bench_core::verdict::analysis::fleet`]), per test and figure a `fleet` chart
//! of every group's disks on one axis, then per group a table (each disk's
//! figure, the median, the spread, the outliers); the page has no such
//! section when no model and firmware has two disks that ran the same
//! test. `bootbench-report fleet --html` writes a page of its own
//! ([`render_fleet`]) with the machines, every machine and disk, and the
//! groups by host model and by disk model, drawn by the same code
//! (`html/fleet.rs`).
//!
//! After the charts, each target with a surface scan (`surface_scan`,
//! `render/html/scan.rs`) has a `<section class="surface-scan">`: the scan's facts,
//! its reads per time class, its slowest reads, its unreadable and
//! recovered LBAs and its `surface-scan` chart. A document without scans
//! has no such section and no note about it.
//!
//! The page opens with the acceptance verdicts (`render/html/verdict.rs`): per
//! document a table of its disks at a glance and every check that did not
//! pass; `fleet --html` counts them by model and lists every failed disk.
//!
//! Every string that comes from a document goes through [`escape`]. Units:
//! MB/s = 10^6 bytes per second, MB = 10^6 bytes, MiB = 2^20 bytes, GB =
//! 10^9 bytes; times name ns, µs or ms.

use std::fmt::Write as _;

use crate::read::Loaded;

mod charts;
mod fleet;
mod format;
mod scan;
mod section;
mod svg;
mod verdict;

pub use format::{escape, fmt_mbps, fmt_ns, num};
pub use svg::{decades, nice_ticks, nines, Scale};

/// The kinds of chart, in the order a section shows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chart {
    /// The surface transfer curve of a `zones` test.
    Surface,
    /// The seek profile of a `seek_profile` test.
    Seek,
    /// Latency percentile curves.
    Latency,
    /// Array against its members and the expected figure.
    Array,
    /// Layer against the device beneath.
    Layer,
    /// All at once against each alone.
    AllAtOnce,
    /// Each fleet group's disks of one test and figure, a row per group,
    /// against their median: the page's fleet section, over all the
    /// documents, not a document's section (so not in [`Chart::ALL`]).
    Fleet,
    /// A disk's surface scan: each zone's read rate over the disk, in the
    /// target's surface scan section (not in [`Chart::ALL`]: a document
    /// without scans shows nothing of it, not even a note).
    SurfaceScan,
    /// A disk's preconditioning: each round's figure, in the target's
    /// preconditioning section (not in [`Chart::ALL`], as the scan's).
    SteadyState,
}

impl Chart {
    /// Every kind a document's section shows, in section order.
    pub const ALL: [Chart; 6] = [
        Chart::Surface,
        Chart::Seek,
        Chart::Latency,
        Chart::Array,
        Chart::Layer,
        Chart::AllAtOnce,
    ];

    /// The `data-chart` / `data-omitted` attribute value.
    pub const fn id(self) -> &'static str {
        match self {
            Chart::Surface => "surface",
            Chart::Seek => "seek",
            Chart::Latency => "latency",
            Chart::Array => "array",
            Chart::Layer => "layer",
            Chart::AllAtOnce => "all-at-once",
            Chart::Fleet => "fleet",
            Chart::SurfaceScan => "surface-scan",
            Chart::SteadyState => "steady-state",
        }
    }

    const fn heading(self) -> &'static str {
        match self {
            Chart::Surface => "Surface transfer curve, outside to inside",
            Chart::Seek => "Seek profile",
            Chart::Latency => "Latency percentiles",
            Chart::Array => "Arrays against their members",
            Chart::Layer => "Layer overhead",
            Chart::AllAtOnce => "All at once against each alone",
            Chart::Fleet => "Disks by model and firmware",
            Chart::SurfaceScan => "Surface scan",
            Chart::SteadyState => "Preconditioning to steady state",
        }
    }

    /// The note shown instead of the chart when a document has no data for it.
    const fn missing(self) -> &'static str {
        match self {
            Chart::Surface => "No surface curve: no zones test with read figures in this document.",
            Chart::Seek => "No seek profile: no seek_profile test with figures in this document.",
            Chart::Latency => "No latency percentiles: no test with latency figures in this document.",
            Chart::Array => "No array chart: no md array analysis line in this document.",
            Chart::Layer => "No layer chart: no dm layer analysis line in this document.",
            Chart::AllAtOnce => "No all-at-once chart: no all-at-once run with figures in this document.",
            // Never shown: a page without fleet groups has no fleet section at all.
            Chart::Fleet => "No fleet section: no model and firmware with two or more disks that ran the same test.",
            // Never shown: a target without a scan has no scan section.
            Chart::SurfaceScan => "No surface scan chart: nothing was read.",
            // Never shown: a target without preconditioning has no section.
            Chart::SteadyState => "No steady-state chart: no round ran.",
        }
    }
}

/// The start of a page: its head with the style sheet, up to the open body.
fn head(out: &mut String, title: &str) {
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = write!(out, "<title>{}</title>\n<style>\n", escape(title));
    out.push_str(CSS);
    out.push_str("</style>\n</head>\n<body>\n");
}

/// One self-contained HTML page for `docs`.
pub fn render(docs: &[Loaded]) -> String {
    let mut out = String::with_capacity(64 * 1024);
    head(&mut out, "bootbench report");
    out.push_str("<h1>bootbench report</h1>\n");
    out.push_str(
        "<p class=\"units\">Units: MB/s = 10<sup>6</sup> bytes per second; MiB = 2<sup>20</sup> bytes; \
         GB = 10<sup>9</sup> bytes; IOPS = completed requests per second; \
         times in ns, µs (10<sup>3</sup> ns), ms (10<sup>6</sup> ns) or s as labelled.</p>\n",
    );
    if !docs.is_empty() {
        verdict::glance_section(&mut out, docs);
    }
    let view = crate::render::fleet::Fleet::new(docs);
    let has_fleet = !view.by_disk.is_empty();
    if docs.is_empty() {
        out.push_str("<p class=\"omitted\">No result documents.</p>\n");
    } else if docs.len() > 1 || has_fleet {
        out.push_str("<nav><ul>\n");
        for (i, d) in docs.iter().enumerate() {
            let _ = writeln!(out, "<li><a href=\"#doc-{i}\">{}</a></li>", escape(&d.file));
        }
        if has_fleet {
            let _ = writeln!(out, "<li><a href=\"#fleet\">{}</a></li>", Chart::Fleet.heading());
        }
        out.push_str("</ul></nav>\n");
    }
    for (i, d) in docs.iter().enumerate() {
        section::section(&mut out, i, d);
    }
    fleet::report_section(&mut out, &view);
    out.push_str("</body>\n</html>\n");
    out
}

/// The page of `bootbench-report fleet --html`: the machines, every
/// machine and disk, and the groups by host model and by disk model and
/// firmware with their charts (see [`crate::render::fleet`]).
pub fn render_fleet(f: &crate::render::fleet::Fleet) -> String {
    fleet::page(f)
}

const CSS: &str = "\
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:1600px}
h1{margin:0 0 .3em}h2{border-bottom:2px solid #1f77b4;padding-bottom:.2em;margin-top:2em;word-break:break-all}
h3{margin-top:1.6em}h4{margin:.2em 0}
.units{color:#555;font-size:.9em}
.warning{background:#fff3cd;border:1px solid #e0c060;padding:.4em}
.omitted{color:#777;font-style:italic}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.1em 1em;font-size:.9em}
dl.facts dt{font-weight:bold}dl.facts dd{margin:0}
table{border-collapse:collapse;font-size:.85em;margin:.6em 0}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
td{font-variant-numeric:tabular-nums}th{background:#eef}
.charts{display:flex;flex-wrap:wrap;gap:.5em 1.5em;align-items:flex-start}
.chart-box{flex:0 1 640px;min-width:320px;margin:.3em 0 .8em}
figcaption{font-size:.85em;color:#444;margin-top:.2em}
svg.chart{background:#fff;border:1px solid #ddd;width:100%;height:auto;font-size:11px}
svg.chart .grid{stroke:#eee}svg.chart .frame{stroke:#444}
svg.chart text{fill:#333}svg.chart .title{font-size:12px;fill:#000}
svg.chart .value{font-size:10px}svg.chart .group-label{font-size:10px;font-weight:bold}
svg.chart .expected{stroke:#000;stroke-width:2;stroke-dasharray:6 4}
svg.chart .expected-label{font-size:11px;font-weight:bold}
svg.chart .expected-label.inside{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
table.members{font-size:.95em;margin:.4em 0}table.members caption{text-align:left;caption-side:top;color:#444}
.meter{display:inline-block;width:5em;height:.7em;background:#eee;border:1px solid #bbb;vertical-align:middle}
.meter span{display:block;height:100%;background:#1f77b4}
table.fleet-disks tr.outlier td,.outlier{background:#fde2e2}
.fleet-group{margin-bottom:1em}ul.fleet-docs{font-size:.9em}
.fleet-test{margin-bottom:1.5em}.unit{font-weight:normal;color:#555;font-size:.9em}
.scroll{overflow-x:auto}table.fleet-every td{white-space:nowrap}table.fleet-every tr.outlier td{background:#fff4f4}table.fleet-every td.outlier{background:#f8b4b4;font-weight:bold}
svg.chart .median{stroke:#000;stroke-width:3}svg.chart .threshold{stroke:#d62728;stroke-width:1.5;stroke-dasharray:2 3}
svg.chart .dot{stroke:#fff;stroke-width:1}svg.chart .dot.outlier{stroke:#000;stroke-width:1.5}
ul.legend{list-style:none;padding:0;margin:.3em 0;font-size:.85em}
ul.legend li{display:inline-block;margin-right:1.2em}
.swatch{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:middle}
td.verdict.pass{background:#d4edda}td.verdict.warn{background:#fff3cd}td.verdict.fail{background:#f8b4b4;font-weight:bold}
ul.failed-checks li.fail{color:#a00}ul.failed-checks li.warn{color:#856404}
.pass{white-space:nowrap}.pass.warmup{color:#888;font-style:italic}.pass.chosen{font-weight:bold;text-decoration:underline}
";

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::document::result::{AnalysisKind, ResultDoc};

    pub(super) const QUICK: &str = include_str!("../../../tests/fixtures/html/quick-4disks.json");

    pub(super) const STACKS: &str = include_str!("../../../tests/fixtures/html/stacks.json");

    pub(super) fn doc(text: &str) -> ResultDoc {
        serde_json::from_str(text).expect("fixture parses")
    }

    pub(super) fn loaded(file: &str, doc: ResultDoc) -> Loaded {
        Loaded {
            file: file.into(),
            doc,
            warnings: Vec::new(),
        }
    }

    /// The charts of `kind` in `html`: each svg's text up to `</svg>`.
    pub(super) fn charts_of(html: &str, kind: Chart) -> Vec<&str> {
        let open = format!("<svg class=\"chart\" data-chart=\"{}\"", kind.id());
        html.match_indices(&open)
            .map(|(i, _)| {
                let rest = &html[i..];
                &rest[..rest.find("</svg>").map_or(rest.len(), |e| e + 6)]
            })
            .collect()
    }

    pub(super) fn marks(svg: &str) -> usize {
        svg.matches("class=\"mark").count()
    }

    pub(super) fn omitted(html: &str, kind: Chart) -> usize {
        html.matches(&format!("data-omitted=\"{}\"", kind.id())).count()
    }

    #[test]
    fn every_string_from_a_document_is_escaped() {
        let evil = "<script>alert('x')</script>&\"";
        let mut d = doc(STACKS);
        let old = d.targets[0].path.clone();
        for t in &mut d.targets {
            t.model = Some(evil.into());
            t.firmware = Some(evil.into());
            t.serial = Some(evil.into());
            if let Some(s) = &mut t.stack {
                // (The level is a closed set: no document carries another.)
                s.name = evil.into();
            }
        }
        d.targets[0].path = evil.into();
        for t in &mut d.tests {
            if t.target == old {
                t.target = evil.into();
            }
            t.name = format!("{}{evil}", t.name);
            for s in &mut t.steps {
                s.label = format!("{}{evil}", s.label);
            }
            for f in &mut t.summary.seek_ns {
                f.label = evil.into();
            }
        }
        for a in &mut d.analysis {
            a.rule = evil.into();
            a.limited_by = Some(evil.into());
            a.test = format!("{}{evil}", a.test);
            if matches!(a.kind, AnalysisKind::Array | AnalysisKind::Layer) {
                a.members = vec![bench_core::document::result::MemberShare {
                    path: evil.into(),
                    share: 1.0,
                    utilization: 0.5,
                    read_bytes: 1,
                    write_bytes: 0,
                }];
            }
        }
        for a in &mut d.all_at_once {
            a.test = format!("{}{evil}", a.test);
        }
        d.host.hostname = Some(evil.into());
        d.run.error = Some(evil.into());
        d.run.config_source = evil.into();
        // Twice: the same SATA disk in both is a fleet group, named by the document's file.
        let evil_doc = |doc: ResultDoc| Loaded {
            file: evil.into(),
            doc,
            warnings: vec![evil.into()],
        };
        d.host.product_serial = Some(evil.into());
        d.host.sys_vendor = Some(evil.into());
        d.host.product_name = Some(evil.into());
        d.host.cpu_model = Some(evil.into());
        // A device string in the attestation (the TPM's refusal, quoted): shown, escaped.
        d.attestation = Some(bench_core::document::result::Attestation {
            error: Some(evil.into()),
            ..Default::default()
        });
        let docs = [evil_doc(d.clone()), evil_doc(d)];
        let html = render(&docs);
        assert!(html.contains("<section class=\"fleet\""), "the fleet section is there");
        assert!(
            html.contains("<table class=\"members\">"),
            "the members tables are there"
        );
        assert!(!html.contains("<script"), "a raw tag from a document");
        assert!(!html.contains("alert('x')"), "a raw quote from a document");
        assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"));
        assert!(
            html.contains("<dt>Attestation</dt><dd>no quote: &lt;script&gt;"),
            "the attestation fact"
        );
        // The charts are still drawn from the renamed tests.
        for kind in Chart::ALL {
            assert!(!charts_of(&html, kind).is_empty(), "{}", kind.id());
        }
        // The fleet page: the machine (its serial), its model and CPU, the
        // disks, in tables, chart rows and tooltips.
        let page = render_fleet(&crate::render::fleet::Fleet::new(&docs));
        assert!(
            page.contains("<section class=\"fleet\" id=\"fleet-host\">"),
            "host groups"
        );
        assert!(!charts_of(&page, Chart::Fleet).is_empty(), "fleet charts");
        assert!(!page.contains("<script"), "a raw tag from a document");
        assert!(!page.contains("alert('x')"), "a raw quote from a document");
        assert!(page.contains("<td>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;</td><td>serial</td>"));
    }

    #[test]
    fn the_page_is_self_contained() {
        let html = render(&[loaded("quick.json", doc(QUICK)), loaded("stacks.json", doc(STACKS))]);
        for needle in ["<script", "<link", "src=", "@import", "url(", "http://", "https://"] {
            let hits: Vec<_> = html
                .match_indices(needle)
                .map(|(i, _)| &html[i..(i + 60).min(html.len())])
                .filter(|s| !s.starts_with("http://www.w3.org/2000/svg"))
                .collect();
            assert!(hits.is_empty(), "{needle}: {hits:?}");
        }
        assert!(html.contains("<nav>"), "two documents get a table of contents");
        assert_eq!(html.matches("<section class=\"doc\"").count(), 2);
        assert!(!html.contains("NaN"), "no NaN in coordinates");
    }
}
