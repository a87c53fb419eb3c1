//! Each disk's surface scan ([`crate::figures::scan`]): a `<section
//! class="surface-scan">` per target that has one, with the scan's facts,
//! the reads per time class, the unreadable and recovered LBAs, the slowest
//! reads, and a `surface-scan` chart: read MB/s against the position on the
//! disk (GB from its first byte), one dot per zone at its middle, a red
//! line at each unreadable LBA. Each burn-in ([`crate::figures::burnin`]): a
//! `<section class="burn-in">` with its facts, a row per pass and its bad
//! and mismatched LBAs. A target without either adds nothing.

use std::fmt::Write as _;

use bench_core::document::result::{BurnIn, Precondition, ResultDoc, SurfaceScan, TargetInfo};

use super::charts::{finite_pos, target_name};
use super::format::{escape, fmt_mbps, num};
use super::svg::{figure, legend, line_chart, nice_ticks, value_axis, Axis, Point, Scale, Series, Shape};
use super::svg::{BOTTOM, H, LEFT, RIGHT, TOP, W};
use super::Chart;
use crate::figures::{burnin, scan};

/// The surface scan and burn-in sections of `doc`'s targets, in target
/// order.
pub(super) fn sections(out: &mut String, doc: &ResultDoc) {
    for t in &doc.targets {
        if let Some(s) = &t.surface_scan {
            section(out, doc, t, s);
        }
        if let Some(b) = &t.burn_in {
            burn_section(out, doc, t, b);
        }
        if let Some(p) = &t.precondition {
            precondition_section(out, doc, t, p);
        }
    }
}

/// A `<section class="precondition">`: the facts, and a `steady-state`
/// chart of each round's figure with the last window's mean.
fn precondition_section(out: &mut String, doc: &ResultDoc, t: &TargetInfo, p: &Precondition) {
    let name = target_name(doc, &t.path);
    let _ = writeln!(
        out,
        "<section class=\"precondition\" data-target=\"{}\">\n<h3>Preconditioning of {}</h3>",
        escape(&t.path),
        escape(&name)
    );
    out.push_str("<dl class=\"facts\">");
    for (k, v) in burnin::precondition_facts(p) {
        let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(&v));
    }
    out.push_str("</dl>\n");
    if let Some(c) = steady_chart(&name, p) {
        out.push_str(&c);
    }
    out.push_str("</section>\n");
}

/// Each round's figure against its number, and the last window's mean as
/// a line over the window's rounds. `None` without a round.
fn steady_chart(name: &str, p: &Precondition) -> Option<String> {
    let (unit, scale) = burnin::precondition_unit(p);
    let points: Vec<Point> = p
        .rounds
        .iter()
        .enumerate()
        .filter(|(_, r)| finite_pos(r.value))
        .map(|(i, r)| {
            #[allow(clippy::cast_precision_loss)] // a round's number
            let x = (i + 1) as f64;
            Point {
                x,
                y: r.value / scale,
                tip: format!("round {}: {} {unit}", i + 1, num(r.value / scale)),
                shape: Shape::Dot,
            }
        })
        .collect();
    if points.is_empty() {
        return None;
    }
    let mut series = vec![Series {
        name: format!("{name}, each round"),
        points,
    }];
    if let Some(m) = p.window_mean {
        #[allow(clippy::cast_precision_loss)] // rounds' numbers
        let (a, b) = (
            (p.rounds.len() + 1).saturating_sub(p.window as usize) as f64,
            p.rounds.len() as f64,
        );
        series.push(Series {
            name: format!("the last {} rounds' mean", p.window),
            points: [a, b]
                .into_iter()
                .map(|x| Point {
                    x,
                    y: m / scale,
                    tip: format!("the last {} rounds' mean: {} {unit}", p.window, num(m / scale)),
                    shape: Shape::Square,
                })
                .collect(),
        });
    }
    let max = series.iter().flat_map(|s| &s.points).map(|pt| pt.y).fold(0.0, f64::max);
    let y = value_axis(format!("Write {unit} (per round)"), max * 1.05, num);
    #[allow(clippy::cast_precision_loss)] // rounds
    let last = p.rounds.len().max(2) as f64;
    let x = Axis {
        label: "Round".into(),
        scale: Scale::linear((1.0, last), (LEFT, W - RIGHT)),
        ticks: nice_ticks(last, 5)
            .into_iter()
            .filter(|v| *v >= 1.0)
            .map(|v| (v, num(v)))
            .collect(),
    };
    let title = format!("Preconditioning: {name}");
    let svg = line_chart(Chart::SteadyState, &title, &x, &y, &series);
    let note = match p.steady_round {
        Some(r) => format!("Steady state at round {r}: the last {} rounds spread within {}% of their mean and their fitted line within {}%.", p.window, p.range_pct, p.slope_pct),
        None => format!("No steady state in {} rounds (limits: {}% spread, {}% fitted line, over {} rounds).", p.rounds.len(), p.range_pct, p.slope_pct, p.window),
    };
    let names: Vec<String> = series.iter().map(|s| s.name.clone()).collect();
    Some(figure(&title, &svg, &legend(&names), &[note]))
}

/// A `<section class="burn-in">`: the burn-in's facts, a row per pass,
/// and its unwritable, unreadable and mismatched LBAs.
fn burn_section(out: &mut String, doc: &ResultDoc, t: &TargetInfo, b: &BurnIn) {
    let _ = writeln!(
        out,
        "<section class=\"burn-in\" data-target=\"{}\">\n<h3>Burn-in of {}</h3>",
        escape(&t.path),
        escape(&target_name(doc, &t.path))
    );
    out.push_str("<dl class=\"facts\">");
    for (k, v) in burnin::facts(b) {
        let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(&v));
    }
    out.push_str("</dl>\n<table class=\"burn-passes\"><thead><tr>");
    for h in burnin::PASS_HEADING {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr></thead><tbody>");
    for row in burnin::pass_rows(b) {
        out.push_str("<tr>");
        for c in row {
            let _ = write!(out, "<td>{}</td>", escape(&c));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>\n");
    for (what, lbas) in burnin::lba_lists(b) {
        let _ = writeln!(
            out,
            "<p class=\"burn-lbas\">{}: {}</p>",
            escape(&scan::lba_heading(what, lbas)),
            escape(&scan::lba_list(lbas))
        );
    }
    out.push_str("</section>\n");
}

fn section(out: &mut String, doc: &ResultDoc, t: &TargetInfo, s: &SurfaceScan) {
    let name = target_name(doc, &t.path);
    let _ = writeln!(
        out,
        "<section class=\"surface-scan\" data-target=\"{}\">\n<h3>Surface scan of {}</h3>",
        escape(&t.path),
        escape(&name)
    );
    out.push_str("<dl class=\"facts\">");
    for (k, v) in scan::facts(s) {
        let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(&v));
    }
    out.push_str("</dl>\n");
    out.push_str("<div class=\"charts\">\n");
    if let Some(c) = chart(&name, s) {
        out.push_str(&c);
    }
    out.push_str("<div>");
    out.push_str(
        "<table class=\"scan-classes\"><thead><tr><th>Read time (submission to completion)</th><th>Reads</th>\
         </tr></thead><tbody>",
    );
    for (label, reads) in scan::classes(s) {
        let _ = write!(out, "<tr><td>{}</td><td>{reads}</td></tr>", escape(&label));
    }
    out.push_str("</tbody></table>\n");
    let rows = scan::slowest_rows(s);
    if !rows.is_empty() {
        let _ = write!(
            out,
            "<table class=\"scan-slowest\"><caption>The {} slowest reads</caption><thead><tr><th>LBA</th>\
             <th>Length (B)</th><th>Time (ms)</th></tr></thead><tbody>",
            rows.len()
        );
        for r in rows {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&r[0]),
                escape(&r[1]),
                escape(&r[2])
            );
        }
        out.push_str("</tbody></table>\n");
    }
    out.push_str("</div>\n</div>\n");
    for (class, what, lbas) in [
        (
            "scan-unreadable",
            "Unreadable LBAs (no read returned them)",
            &s.unreadable_lbas,
        ),
        (
            "scan-recovered",
            "Recovered LBAs (a retry returned them)",
            &s.recovered_lbas,
        ),
    ] {
        let _ = writeln!(
            out,
            "<p class=\"{class}\">{}: {}</p>",
            escape(&scan::lba_heading(what, lbas)),
            escape(&scan::lba_list(lbas))
        );
    }
    out.push_str("</section>\n");
}

/// Bytes as GB (10^9 B) on the chart's axis.
#[allow(clippy::cast_precision_loss)] // a position on a chart
fn gb(bytes: u64) -> f64 {
    bytes as f64 / 1e9
}

/// The zone curve: read MB/s of each zone at its middle, against the
/// position on the disk from its first byte; a red line at each unreadable
/// LBA (one per pixel column). `None` when no zone has a rate.
fn chart(name: &str, s: &SurfaceScan) -> Option<String> {
    let points: Vec<Point> = s
        .zones
        .iter()
        .enumerate()
        .filter_map(|(i, z)| {
            let bps = z.bytes_per_sec.filter(|v| finite_pos(*v))?;
            Some(Point {
                x: gb(z.start_byte + z.end_byte.saturating_sub(z.start_byte) / 2),
                y: bps / 1e6,
                tip: format!(
                    "zone {} of {}, {}-{} GB: {}",
                    i + 1,
                    s.zones.len(),
                    num(gb(z.start_byte)),
                    num(gb(z.end_byte)),
                    fmt_mbps(bps)
                ),
                shape: Shape::Dot,
            })
        })
        .collect();
    if points.is_empty() {
        return None;
    }
    let max = points.iter().map(|p| p.y).fold(0.0, f64::max);
    let y = value_axis("Read throughput (MB/s, 10^6 bytes/s)".into(), max * 1.05, num);
    let ticks = nice_ticks(gb(s.end_byte), 5);
    let right = ticks.last().copied().unwrap_or(1.0);
    let x = Axis {
        label: "Position on the disk (GB = 10^9 bytes from its first byte; outside to inside)".into(),
        scale: Scale::linear((0.0, right), (LEFT, W - RIGHT)),
        ticks: ticks.into_iter().map(|v| (v, num(v))).collect(),
    };
    let title = format!("Surface scan: {name}");
    let series = [Series {
        name: name.to_string(),
        points,
    }];
    let svg = line_chart(Chart::SurfaceScan, &title, &x, &y, &series);
    // The unreadable LBAs over the curve, before the svg closes.
    let mut svg = svg.strip_suffix("</svg>").unwrap_or(&svg).to_string();
    let lb = u64::from(s.logical_block.max(1));
    let mut drawn: Vec<String> = Vec::new();
    for &lba in &s.unreadable_lbas {
        let px = x.scale.map(gb(lba.saturating_mul(lb)));
        // One line per pixel column: a run of bad blocks is one line.
        let col = format!("{px:.0}");
        if drawn.contains(&col) {
            continue;
        }
        drawn.push(col);
        let _ = write!(
            svg,
            "<line class=\"unreadable\" x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{TOP}\" y2=\"{:.1}\" stroke=\"#d62728\" \
             stroke-width=\"1.5\" stroke-dasharray=\"3 2\"><title>unreadable LBA {lba} ({} GB)</title></line>",
            H - BOTTOM,
            num(gb(lba.saturating_mul(lb)))
        );
    }
    svg.push_str("</svg>");
    let mut notes = vec![format!(
        "One dot per zone of the scanned area ({} zones), at its middle; the rate is the zone's bytes over the time \
         from its first read's submission to its last completion.",
        s.zones.len()
    )];
    if !s.unreadable_lbas.is_empty() {
        notes.push(format!(
            "Dashed red lines: where the {} unreadable LBAs are (those within a pixel of each other share a line).",
            s.unreadable_lbas.len()
        ));
    }
    Some(figure(&title, &svg, &legend(&[name.to_string()]), &notes))
}

#[cfg(test)]
mod tests {
    use crate::render::html::render;
    use crate::render::html::tests::{charts_of, doc, loaded, marks, QUICK};
    use crate::render::html::Chart;

    /// A disk's scan: its section with the facts, the class table, the
    /// LBAs and the slowest read, and a chart with a dot per zone and a
    /// line per unreadable LBA; no other target gets one.
    #[test]
    fn a_surface_scan_gets_its_section_and_chart() {
        let mut d = doc(QUICK);
        let path = d.targets[0].path.clone();
        d.targets[0].surface_scan = Some(crate::figures::scan::test_scan());
        let html = render(&[loaded("scan.json", d)]);
        assert_eq!(html.matches("<section class=\"surface-scan\"").count(), 1);
        let sec = &html[html.find("<section class=\"surface-scan\"").unwrap()..];
        let sec = &sec[..sec.find("</section>").unwrap()];
        assert!(sec.contains(&format!("data-target=\"{path}\"")), "{sec}");
        assert!(sec.contains("<h3>Surface scan of "), "{sec}");
        assert!(
            sec.contains("<dt>area</dt><dd>bytes 0 to 67108864 of the disk, 67108864 B (64.0 MiB)</dd>"),
            "{sec}"
        );
        assert!(sec.contains("<dt>rate</dt><dd>"), "{sec}");
        assert!(sec.contains("<dt>ended</dt><dd>done: every planned read was made</dd>"));
        for (label, n) in [
            ("&lt; 5 ms", 60),
            ("5-20 ms", 1),
            ("50-150 ms", 1),
            ("&gt;= 500 ms", 0),
            ("failed", 2),
        ] {
            assert!(
                sec.contains(&format!("<tr><td>{label}</td><td>{n}</td></tr>")),
                "{label}"
            );
        }
        assert!(sec.contains(
            "<p class=\"scan-unreadable\">Unreadable LBAs (no read returned them), 3: 6145, 6153, 40960</p>"
        ));
        assert!(sec.contains("<p class=\"scan-recovered\">Recovered LBAs (a retry returned them), 1: 61443</p>"));
        assert!(sec.contains("<caption>The 5 slowest reads</caption>"), "{sec}");
        assert!(
            sec.contains("<tr><td>18432</td><td>1048576</td><td>61.5</td></tr>"),
            "{sec}"
        );
        assert_eq!(sec.matches("<tr><td>").count(), 7 + 5, "classes and five slowest");

        let charts = charts_of(&html, Chart::SurfaceScan);
        assert_eq!(charts.len(), 1);
        let c = charts[0];
        assert_eq!(marks(c), 8, "one dot per zone");
        assert_eq!(c.matches("<circle class=\"mark\"").count(), 8);
        assert_eq!(c.matches("<polyline class=\"line\"").count(), 1);
        assert!(c.contains("zone 1 of 8, 0-0.00839 GB: 200 MB/s"), "{c}");
        assert!(c.contains("zone 8 of 8, 0.0587-0.0671 GB: 95.0 MB/s"), "{c}");
        // The rate falls inward: each dot lower (a larger y) than the one before.
        let cy: Vec<f64> = c
            .match_indices(" cy=\"")
            .map(|(i, m)| {
                let v = &c[i + m.len()..];
                v[..v.find('"').unwrap()].parse().unwrap()
            })
            .collect();
        assert!(cy.windows(2).all(|w| w[0] < w[1]), "{cy:?}");
        // Two of the bad blocks are 4 KiB apart: one line at that pixel.
        assert_eq!(c.matches("<line class=\"unreadable\"").count(), 2, "{c}");
        assert!(c.contains("<title>unreadable LBA 6145 ("), "{c}");
        assert!(c.contains("Position on the disk (GB = 10^9 bytes"), "{c}");
        assert!(!c.contains("NaN"));
    }

    /// What the device and the run say (model, serial, path, the scan's
    /// error) is escaped in the section and in the chart.
    #[test]
    fn a_surface_scans_strings_are_escaped() {
        let evil = "<script>alert('x')</script>&\"";
        let mut d = doc(QUICK);
        let old = d.targets[0].path.clone();
        let mut s = crate::figures::scan::test_scan();
        (s.end, s.error) = (bench_core::document::result::ScanEndState::Error, Some(evil.into()));
        let t = &mut d.targets[0];
        (t.path, t.model, t.serial) = (evil.into(), Some(evil.into()), Some(evil.into()));
        t.surface_scan = Some(s);
        for x in d.tests.iter_mut().filter(|x| x.target == old) {
            x.target = evil.into();
        }
        let html = render(&[loaded("scan.json", d)]);
        let sec = &html[html.find("<section class=\"surface-scan\"").expect("the section")..];
        let sec = &sec[..sec.find("</section>").unwrap()];
        assert!(!sec.contains("<script"), "{sec}");
        assert!(!sec.contains("alert('x')"), "{sec}");
        let esc = "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;";
        assert!(sec.contains(&format!("data-target=\"{esc}\"")), "{sec}");
        assert!(
            sec.contains(&format!("<h3>Surface scan of {esc} ({esc})</h3>")),
            "{sec}"
        );
        assert!(
            sec.contains(&format!("<dd>error: the scan could not go on: {esc}</dd>")),
            "{sec}"
        );
        assert!(
            sec.contains(&format!("aria-label=\"Surface scan: {esc} ({esc})\"")),
            "{sec}"
        );
        assert!(!html.contains("<script"), "nowhere on the page");
    }

    /// A scan that read nothing (it could not open the disk) has its facts
    /// and no chart; a document without scans has no section.
    #[test]
    fn a_scan_that_read_nothing_has_no_chart() {
        let mut d = doc(QUICK);
        let before = render(&[loaded("q.json", d.clone())]);
        assert!(!before.contains("surface-scan"));
        let mut s = crate::figures::scan::test_scan();
        for z in &mut s.zones {
            (z.bytes, z.time_ns, z.bytes_per_sec) = (0, 0, None);
        }
        (s.read_bytes, s.bytes_per_sec, s.end) = (0, None, bench_core::document::result::ScanEndState::Error);
        d.targets[1].surface_scan = Some(s);
        let html = render(&[loaded("q.json", d)]);
        assert_eq!(html.matches("<section class=\"surface-scan\"").count(), 1);
        assert!(charts_of(&html, Chart::SurfaceScan).is_empty());
        assert!(html.contains("<dt>rate</dt><dd>- (nothing read)</dd>"));
    }
}

#[cfg(test)]
mod burn_tests {
    use crate::render::html::render;
    use crate::render::html::tests::{doc, loaded, QUICK};

    /// A burnt-in disk gets its section: the facts, a row per pass with
    /// its pattern, bytes, rates, bad and mismatched blocks, and the LBA
    /// lists; an error string is escaped; no other target gets one.
    #[test]
    fn a_burn_in_gets_its_section_with_a_row_per_pass() {
        let mut d = doc(QUICK);
        let path = d.targets[1].path.clone();
        let mut b = crate::figures::burnin::test_burn_in();
        b.error = Some("<b>stopped</b>".into());
        d.targets[1].burn_in = Some(b);
        let html = render(&[loaded("burn.json", d)]);
        assert_eq!(html.matches("<section class=\"burn-in\"").count(), 1);
        let sec = &html[html.find("<section class=\"burn-in\"").unwrap()..];
        let sec = &sec[..sec.find("</section>").unwrap()];
        assert!(sec.contains(&format!("data-target=\"{path}\"")), "{sec}");
        assert!(sec.contains("<h3>Burn-in of "), "{sec}");
        assert!(
            sec.contains("<tr><td>2</td><td>0x55</td><td>67108352 B (64.0 MiB)</td><td>200.0</td><td>67108864 B (64.0 MiB)</td><td>250.0</td><td>1</td><td>0</td><td>done</td></tr>"),
            "{sec}"
        );
        assert!(sec.contains("<td>4</td><td>0x00</td>"), "{sec}");
        assert!(sec.contains("<p class=\"burn-lbas\">mismatched LBAs (read back other than written), 1: 70000</p>"));
        assert!(
            sec.contains("&lt;b&gt;stopped&lt;/b&gt;") && !sec.contains("<b>"),
            "{sec}"
        );
    }

    /// A preconditioned disk gets its section and a steady-state chart: a
    /// dot per round and the last window's mean as two squares.
    #[test]
    fn preconditioning_gets_its_section_and_chart() {
        use crate::render::html::tests::charts_of;
        use crate::render::html::Chart;
        let mut d = doc(QUICK);
        d.targets[2].precondition = Some(crate::figures::burnin::test_precondition());
        let html = render(&[loaded("pc.json", d)]);
        assert_eq!(html.matches("<section class=\"precondition\"").count(), 1);
        let sec = &html[html.find("<section class=\"precondition\"").unwrap()..];
        let sec = &sec[..sec.find("</section>").unwrap()];
        assert!(sec.contains("<dt>steady state</dt><dd>reached at round 7; "), "{sec}");
        let charts = charts_of(&html, Chart::SteadyState);
        assert_eq!(charts.len(), 1);
        assert_eq!(charts[0].matches("<circle").count(), 7, "{}", charts[0]);
        assert!(charts[0].contains("round 1: 90000 IOPS"), "{}", charts[0]);
        assert!(sec.contains("Steady state at round 7"), "{sec}");
    }
}
