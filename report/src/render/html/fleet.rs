//! The fleet in HTML, drawn from one [`Fleet`] view: the page of
//! `bootbench-report fleet --html` ([`page`]: the documents, the machines,
//! every machine and disk, the groups by host model, the groups by disk
//! model and firmware) and the fleet section of the `html` report
//! ([`report_section`]: the groups by disk model and firmware). Both draw
//! their groups with [`groups_section`]: per test and figure one `fleet`
//! chart, a strip per group on a common axis (each disk a dot, the
//! outliers red and larger, the median a black bar, 10% below it dotted),
//! then each group's table.

use std::fmt::Write as _;

use bench_core::verdict::analysis::{Metric, OUTLIER_BELOW};

use super::format::{axis_value, escape, fmt_metric, metric_axis, num, opt_str};
use super::svg::{color, decades, figure, legend, nice_ticks, short, svg_open_h, Scale, LOG_SPAN, RIGHT, TOP, W};
use super::{head, Chart};
use crate::figures::metric::metric_label;
use crate::render::fleet::{against, by_test, outliers, spread_share, Cell, Fleet, Group, Key};

/// Where a document is named: in the `html` report, a link to its
/// section; on the fleet page (no such sections), its number with the file
/// as a tooltip.
struct Ctx<'a> {
    f: &'a Fleet,
    links: bool,
}

impl Ctx<'_> {
    /// `[n]`, linked or with its file as a tooltip.
    fn doc(&self, d: usize) -> String {
        let file = self.f.docs.get(d).map_or("", |l| l.file.as_str());
        if self.links {
            format!("<a href=\"#doc-{d}\" title=\"{}\">[{}]</a>", escape(file), d + 1)
        } else {
            format!("<span title=\"{}\">[{}]</span>", escape(file), d + 1)
        }
    }

    /// The list of the documents with their machines.
    fn docs_list(&self, out: &mut String) {
        out.push_str("<ul class=\"fleet-docs\">\n");
        for (i, d) in self.f.docs.iter().enumerate() {
            let name = if self.links {
                format!("<a href=\"#doc-{i}\">{}</a>", escape(&d.file))
            } else {
                escape(&d.file)
            };
            let _ = writeln!(
                out,
                "<li>[{}] {name} (machine {}, started {})</li>",
                i + 1,
                escape(self.f.machine_name(i)),
                crate::figures::text::utc(d.started_unix_ns)
            );
        }
        out.push_str("</ul>\n");
    }
}

/// The rule in words, for the sections' introductions.
fn rule() -> String {
    format!(
        "An <span class=\"outlier\">outlier</span> is more than {:.0}% below its group's median (bench-core's rule, \
         the rule of a document's outlier lines). MB/s = 10<sup>6</sup> bytes per second, IOPS = completed \
         requests per second.",
        OUTLIER_BELOW * 100.0
    )
}

/// The `html` report's fleet section: the groups by disk model and
/// firmware over all the documents; nothing without groups.
pub(super) fn report_section(out: &mut String, f: &Fleet) {
    if f.by_disk.is_empty() {
        return;
    }
    let cx = Ctx { f, links: true };
    let intro = format!(
        "The whole disks (no array or layer) of the {} document(s), grouped by model and firmware, for each test \
         that ended ok and each of its figures: a chart of every group's disks on one axis, then per group the \
         median, the spread (lowest to highest) and each disk's figure. {}",
        f.docs.len(),
        rule()
    );
    groups_section(out, &cx, &f.by_disk, "fleet", Chart::Fleet.heading(), &intro, true);
}

/// The page of `bootbench-report fleet --html`.
pub(super) fn page(f: &Fleet) -> String {
    let cx = Ctx { f, links: false };
    let mut out = String::with_capacity(64 * 1024);
    head(&mut out, "bootbench fleet");
    let _ = writeln!(
        out,
        "<h1>bootbench fleet</h1>\n<p class=\"units\">{} document(s) from {} machine(s). Units: MB/s = \
         10<sup>6</sup> bytes per second; IOPS = completed requests per second.</p>",
        f.docs.len(),
        f.machines.len()
    );
    out.push_str(
        "<nav><ul>\n<li><a href=\"#verdicts\">Acceptance verdicts by model</a></li>\n\
         <li><a href=\"#fleet-machines\">Machines</a></li>\n\
         <li><a href=\"#fleet-every\">Every machine and disk</a></li>\n\
         <li><a href=\"#fleet-host\">By host model</a></li>\n\
         <li><a href=\"#fleet\">By disk model and firmware</a></li>\n</ul></nav>\n",
    );
    out.push_str("<h2>Documents</h2>\n");
    cx.docs_list(&mut out);
    super::verdict::by_model_section(&mut out, f);
    machines(&mut out, f);
    every_disk(&mut out, f);
    let intro = format!(
        "The whole disks of machines of one model (DMI vendor and product) and of one disk model and firmware: \
         within a host model, disks of another model are not compared. For each test that ended ok and each of \
         its figures: a chart of every group's disks on one axis, then per group the median, the spread and each \
         disk's figure. {}",
        rule()
    );
    groups_section(&mut out, &cx, &f.by_host, "fleet-host", "By host model", &intro, false);
    let intro = format!(
        "The whole disks (no array or layer) of all the documents, grouped by model and firmware, whatever \
         machine they are in. {}",
        rule()
    );
    groups_section(
        &mut out,
        &cx,
        &f.by_disk,
        "fleet",
        "By disk model and firmware",
        &intro,
        false,
    );
    out.push_str("</body>\n</html>\n");
    out
}

/// The machines table.
fn machines(out: &mut String, f: &Fleet) {
    out.push_str(
        "<section class=\"fleet-machines\" id=\"fleet-machines\">\n<h2>Machines</h2>\n<p class=\"units\">A machine \
         is its DMI product serial, else its host name, else its document's file name (placeholders such as \
         “To Be Filled By O.E.M.” or the host name “(none)” name no machine); “Identified by” says which.</p>\n\
         <table class=\"fleet-machines\"><thead><tr><th>Machine</th><th>Identified by</th><th>Host model</th>\
         <th>CPU</th><th>Disks</th><th>Documents</th></tr></thead><tbody>\n",
    );
    for m in &f.machines {
        let docs: Vec<String> = m.docs.iter().map(|d| format!("[{}]", d + 1)).collect();
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&m.name),
            m.by.word(),
            opt_str(m.model.as_deref()),
            opt_str(m.cpu.as_deref()),
            m.disks,
            docs.join(" ")
        );
    }
    out.push_str("</tbody></table>\n</section>\n");
}

/// Every machine and disk in one table, the outliers of the disk-model
/// groups marked.
fn every_disk(out: &mut String, f: &Fleet) {
    let _ = write!(
        out,
        "<section class=\"fleet-every\" id=\"fleet-every\">\n<h2>Every machine and disk</h2>\n<p class=\"units\">\
         One row per whole disk of each document; per test the figure bench-core judges, from the disk's first run \
         of it that ended ok (skip = skipped, err = failed, - = not run). A <span class=\"outlier\">marked</span> \
         figure is more than {:.0}% below the median of its disk model and firmware group.</p>\n\
         <div class=\"scroll\"><table class=\"fleet-every\"><thead><tr><th>Machine</th><th>Document</th><th>Disk</th><th>Model</th>\
         <th>Firmware</th><th>Serial</th>",
        OUTLIER_BELOW * 100.0
    );
    for c in &f.columns {
        let _ = write!(
            out,
            "<th>{}<br><span class=\"unit\">{}</span></th>",
            escape(&c.test),
            metric_label(c.metric)
        );
    }
    out.push_str("<th>Outliers</th></tr></thead><tbody>\n");
    for r in &f.rows {
        let t = f.disk(r.disk);
        let cells = f.cells(r);
        let n = outliers(&cells);
        let _ = write!(
            out,
            "<tr{}><td>{}</td><td><span title=\"{}\">[{}]</span></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            if n > 0 { " class=\"outlier\"" } else { "" },
            escape(&f.machines[r.machine].name),
            escape(&f.docs[r.doc].file),
            r.doc + 1,
            escape(t.path),
            opt_str(t.model),
            opt_str(t.firmware),
            opt_str(t.serial),
        );
        for (c, cell) in f.columns.iter().zip(&cells) {
            match cell {
                Cell::Figure { value, outlier: true } => {
                    let _ = write!(
                        out,
                        "<td class=\"outlier\" title=\"outlier: more than {:.0}% below the median of its disk model \
                         and firmware group\">{}</td>",
                        OUTLIER_BELOW * 100.0,
                        num(axis_value(c.metric, *value))
                    );
                }
                Cell::Figure { value, outlier: false } => {
                    let _ = write!(out, "<td>{}</td>", num(axis_value(c.metric, *value)));
                }
                Cell::Marker(m) => {
                    let _ = write!(out, "<td>{}</td>", escape(m));
                }
                Cell::NotRun => out.push_str("<td>-</td>"),
            }
        }
        let _ = writeln!(
            out,
            "<td>{}</td></tr>",
            if n > 0 {
                format!("outlier in {n} of {} figure(s)", f.columns.len())
            } else {
                String::new()
            }
        );
    }
    out.push_str("</tbody></table></div>\n</section>\n");
}

/// A section of groups: per test and figure a chart of every group, then
/// each group's block. Without groups, a note (or, in the `html` report,
/// nothing: `skip_empty`).
fn groups_section<K: Key>(
    out: &mut String,
    cx: &Ctx,
    groups: &[Group<K>],
    id: &str,
    heading: &str,
    intro: &str,
    skip_empty: bool,
) {
    if groups.is_empty() && skip_empty {
        return;
    }
    let _ = writeln!(
        out,
        "<section class=\"fleet\" id=\"{id}\">\n<h2>{}</h2>\n<p class=\"units\">{intro}</p>",
        escape(heading)
    );
    if cx.links {
        cx.docs_list(out);
    }
    if groups.is_empty() {
        out.push_str(
            "<p class=\"omitted\">No group: no two disks of one model and firmware (on machines of one model) ran \
             the same test.</p>\n",
        );
    }
    for tests in by_test(groups) {
        let g0 = tests[0];
        let title = format!("{} ({}), {}", g0.test, g0.workload.name(), metric_label(g0.metric));
        let _ = writeln!(out, "<div class=\"fleet-test\">\n<h3>{}</h3>", escape(&title));
        out.push_str(&strips(cx, &tests, &title));
        for g in tests {
            group_block(out, cx, g);
        }
        out.push_str("</div>\n");
    }
    out.push_str("</section>\n");
}

/// `s` with its first letter in capitals.
fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

/// One group: its heading, its median, spread and outliers, its disks' table.
fn group_block<K: Key>(out: &mut String, cx: &Ctx, g: &Group<K>) {
    let m = g.metric;
    let spread = spread_share(g).map_or_else(String::new, |s| format!(" ({s:.0}% of the median)"));
    let heading = format!(
        "{}: {} ({}), {}",
        capital(&g.key.heading()),
        g.test,
        g.workload.name(),
        metric_label(m)
    );
    let odd: Vec<String> = g
        .outliers()
        .map(|e| {
            format!(
                "[{}] {} {}",
                cx.f.doc_of(e) + 1,
                cx.f.machine_name(cx.f.doc_of(e)),
                cx.f.disk(e.disk()).path
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "<div class=\"fleet-group\">\n<h4>{}</h4>\n<p>{} disks on {} machine(s): median <strong>{}</strong>, spread {} \
         to {}{spread}; outliers: {}.</p>",
        escape(&heading),
        g.entries.len(),
        cx.f.machines_in(g),
        fmt_metric(m, g.median),
        fmt_metric(m, g.min),
        fmt_metric(m, g.max),
        if odd.is_empty() {
            "none".to_string()
        } else {
            escape(&odd.join(", "))
        }
    );
    let _ = writeln!(
        out,
        "<table class=\"fleet-disks\"><thead><tr><th>Document</th><th>Machine</th><th>Disk</th><th>Serial</th>\
         <th>{}</th><th>Against the median</th><th>Outlier</th></tr></thead><tbody>",
        metric_label(m)
    );
    for e in &g.entries {
        let odd = g.is_outlier(e.value);
        let _ = writeln!(
            out,
            "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            if odd { " class=\"outlier\"" } else { "" },
            cx.doc(cx.f.doc_of(e)),
            escape(cx.f.machine_name(cx.f.doc_of(e))),
            escape(cx.f.disk(e.disk()).path),
            opt_str(cx.f.disk(e.disk()).serial),
            fmt_metric(m, e.value),
            against(g, e.value),
            if odd {
                format!("outlier: more than {:.0}% below the median", OUTLIER_BELOW * 100.0)
            } else {
                String::new()
            }
        );
    }
    out.push_str("</tbody></table>\n</div>\n");
}

/// The height of a strip (one group).
const ROW: f64 = 34.0;
/// The left margin, for the groups' names.
const LABELS: f64 = 230.0;
/// Below the strips: tick labels and the axis title.
const BELOW: f64 = 46.0;
/// Vertical offsets of the dots of a strip, so close figures stay apart.
const LANES: [f64; 5] = [0.0, -7.0, 7.0, -11.0, 11.0];

/// The chart of one test and figure: a strip per group, on one axis
/// (linear from 0, or logarithmic when the figures span more than
/// [`LOG_SPAN`] x, as the bar charts), each disk a dot (red and larger for
/// an outlier), the median a black bar, 10% below it dotted.
fn strips<K: Key>(cx: &Ctx, groups: &[&Group<K>], title: &str) -> String {
    let m = groups[0].metric;
    let (scale, ticks, axis) = strip_scale(groups, m);
    let bottom = TOP + ROW * groups.len() as f64;
    let h = bottom + BELOW;
    let mut out = String::new();
    svg_open_h(&mut out, Chart::Fleet, title, h);
    strip_axis(&mut out, &scale, &ticks, &axis, (bottom, h));
    for (r, g) in groups.iter().enumerate() {
        strip(&mut out, cx, g, m, TOP + ROW * (r as f64 + 0.5), &scale);
    }
    out.push_str("</svg>");
    let names = [
        "disk".to_string(),
        format!(
            "outlier: more than {:.0}% below its group's median",
            OUTLIER_BELOW * 100.0
        ),
    ];
    let note = format!(
        "Each row a group, all on one axis: the black bar its median, the dotted line {:.0}% below it.",
        OUTLIER_BELOW * 100.0
    );
    format!(
        "<div class=\"charts\">\n{}</div>\n",
        figure(
            "Every group's disks on one axis",
            &out,
            &legend(&names),
            &[escape(&note)]
        )
    )
}

/// The strips' axis for the figure `m` of `groups`: its scale across the plot, its ticks and its
/// title (linear from 0, or decades on a log scale when the figures span more than
/// [`LOG_SPAN`] x).
fn strip_scale<K: Key>(groups: &[&Group<K>], m: Metric) -> (Scale, Vec<f64>, String) {
    let values = || {
        groups
            .iter()
            .flat_map(|g| g.entries.iter().map(|e| axis_value(m, e.value)))
            .filter(|v| v.is_finite() && *v > 0.0)
    };
    let max = values().fold(0.0_f64, f64::max);
    let min = values().fold(f64::INFINITY, f64::min);
    let (x0, x1) = (LABELS, W - RIGHT);
    if min.is_finite() && max / min > LOG_SPAN {
        let dec = decades(min, max);
        let top = dec.last().copied().unwrap_or(dec[0] * 10.0);
        (
            Scale::log10((dec[0], top), (x0, x1)),
            dec,
            format!("{} (log scale)", metric_axis(m)),
        )
    } else {
        let t = nice_ticks(max * 1.05, 5);
        let top = t.last().copied().unwrap_or(1.0);
        (Scale::linear((0.0, top), (x0, x1)), t, metric_axis(m))
    }
}

/// The strips' x axis: grid lines and labels at `ticks`, the frame, and the title `axis`, for a
/// plot whose strips end at `bottom` in a chart `h` high.
fn strip_axis(out: &mut String, scale: &Scale, ticks: &[f64], axis: &str, (bottom, h): (f64, f64)) {
    let (x0, x1) = (LABELS, W - RIGHT);
    out.push_str("<g class=\"axis x\">");
    for t in ticks {
        let px = scale.map(*t);
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{TOP}\" y2=\"{bottom:.1}\"/>\
             <text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            bottom + 16.0,
            num(*t)
        );
    }
    let _ = write!(
        out,
        "<line class=\"frame\" x1=\"{x0}\" x2=\"{x1:.1}\" y1=\"{bottom:.1}\" y2=\"{bottom:.1}\"/>\
         <line class=\"frame\" x1=\"{x0}\" x2=\"{x0}\" y1=\"{TOP}\" y2=\"{bottom:.1}\"/>\
         <text class=\"title\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text></g>",
        (x0 + x1) / 2.0,
        h - 10.0,
        escape(axis)
    );
}

/// One group's strip of the figure `m`, centred at `cy`: its name (one line or two), the median and the line 10%
/// below it, and a dot per disk ([`strip_dots`]).
fn strip<K: Key>(out: &mut String, cx: &Ctx, g: &Group<K>, m: Metric, cy: f64, scale: &Scale) {
    let (x0, x1) = (LABELS, W - RIGHT);
    let lines = g.key.lines();
    let label = lines.join(" · ");
    let _ = write!(
        out,
        "<g class=\"strip\" data-group=\"{}\"><line class=\"grid\" x1=\"{x0}\" x2=\"{x1:.1}\" y1=\"{cy:.1}\" \
         y2=\"{cy:.1}\"/><text class=\"group-label\" text-anchor=\"end\"><title>{}</title>",
        escape(&label),
        escape(&label),
    );
    // One line or two (host, then disk), centred on the strip.
    let first = cy + 4.0 - 6.0 * (lines.len().min(2) as f64 - 1.0);
    for (k, line) in lines.iter().take(2).enumerate() {
        let _ = write!(
            out,
            "<tspan x=\"{:.1}\" y=\"{:.1}\">{}</tspan>",
            x0 - 8.0,
            first + 12.0 * k as f64,
            escape(&short(line, x0 - 16.0, 6.2))
        );
    }
    out.push_str("</text>");
    let median = axis_value(m, g.median);
    let floor = median * (1.0 - OUTLIER_BELOW);
    let (pm, pf) = (scale.map(median), scale.map(floor));
    let _ = write!(
        out,
        "<line class=\"threshold\" x1=\"{pf:.1}\" x2=\"{pf:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"><title>{:.0}% below the \
         median: {}</title></line>\
         <line class=\"mark median\" x1=\"{pm:.1}\" x2=\"{pm:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"><title>median {}</title></line>",
        cy - ROW / 2.0 + 3.0,
        cy + ROW / 2.0 - 3.0,
        OUTLIER_BELOW * 100.0,
        fmt_metric(m, g.median * (1.0 - OUTLIER_BELOW)),
        cy - 13.0,
        cy + 13.0,
        fmt_metric(m, g.median)
    );
    strip_dots(out, cx, g, m, cy, scale);
    out.push_str("</g>");
}

/// A strip's dots, one per disk, in the order of their figures, each in the first lane where it
/// does not cover the last dot (the outliers drawn last, on top).
fn strip_dots<K: Key>(out: &mut String, cx: &Ctx, g: &Group<K>, m: Metric, cy: f64, scale: &Scale) {
    let mut order: Vec<usize> = (0..g.entries.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (g.entries[a].value, g.entries[b].value);
        x.total_cmp(&y)
    });
    let mut last = [f64::NEG_INFINITY; LANES.len()];
    let mut placed: Vec<(usize, f64, f64)> = Vec::new();
    for i in order {
        let px = scale.map(axis_value(m, g.entries[i].value));
        let lane = (0..LANES.len()).find(|&l| px - last[l] >= 9.0).unwrap_or_else(|| {
            (0..LANES.len())
                .min_by(|&a, &b| last[a].total_cmp(&last[b]))
                .unwrap_or(0)
        });
        last[lane] = px;
        placed.push((i, px, cy + LANES[lane]));
    }
    placed.sort_by_key(|&(i, _, _)| g.is_outlier(g.entries[i].value));
    for (i, px, py) in placed {
        let e = &g.entries[i];
        let odd = g.is_outlier(e.value);
        let _ = write!(
            out,
            "<circle class=\"mark dot{}\" cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"{}\" fill=\"{}\"><title>[{}] {} {} ({}): \
             {}, {} against the median{}</title></circle>",
            if odd { " outlier" } else { "" },
            if odd { "6" } else { "4.5" },
            color(usize::from(odd)),
            cx.f.doc_of(e) + 1,
            escape(cx.f.machine_name(cx.f.doc_of(e))),
            escape(cx.f.disk(e.disk()).path),
            escape(cx.f.disk(e.disk()).serial.unwrap_or("no serial")),
            fmt_metric(m, e.value),
            against(g, e.value),
            if odd { ", outlier" } else { "" }
        );
    }
}
