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
//! ([`bench_core::analysis::fleet`]), per test and figure a `fleet` chart
//! of every group's disks on one axis, then per group a table (each disk's
//! figure, the median, the spread, the outliers); the page has no such
//! section when no model and firmware has two disks that ran the same
//! test. `bootbench-report fleet --html` writes a page of its own
//! ([`render_fleet`]) with the machines, every machine and disk, and the
//! groups by host model and by disk model, drawn by the same code
//! (`html/fleet.rs`).
//!
//! Every string that comes from a document goes through [`escape`]. Units:
//! MB/s = 10^6 bytes per second, MB = 10^6 bytes, MiB = 2^20 bytes, GB =
//! 10^9 bytes; times name ns, µs or ms.

use std::fmt::Write as _;

use bench_core::analysis::{metrics, Metric};
use bench_core::result::{Analysis, DirStats, ResultDoc, Status, TargetInfo, TestResult};
use bench_core::spec::Workload;

use crate::read::Loaded;

mod fleet;

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
    let view = crate::fleet::Fleet::new(docs);
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
        section(&mut out, i, d);
    }
    fleet::report_section(&mut out, &view);
    out.push_str("</body>\n</html>\n");
    out
}

/// The page of `bootbench-report fleet --html`: the machines, every
/// machine and disk, and the groups by host model and by disk model and
/// firmware with their charts (see [`crate::fleet`]).
pub fn render_fleet(docs: &[Loaded]) -> String {
    fleet::page(docs)
}

/// `s` with `&`, `<`, `>`, `"` and `'` replaced by character references, so
/// it is text in element content and in quoted attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A number with about three significant digits, no exponent: `2650`,
/// `12.3`, `1.23`, `0.0123`; `-` for a value that is not finite.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        let (mut digits, mut x) = (2_usize, a);
        while x < 1.0 && digits < 12 {
            x *= 10.0;
            digits += 1;
        }
        format!("{v:.digits$}")
    }
}

/// The unit for a time of `ns` nanoseconds: (nanoseconds per unit, name).
fn time_unit(ns: f64) -> (f64, &'static str) {
    if ns >= 1e9 {
        (1e9, "s")
    } else if ns >= 1e6 {
        (1e6, "ms")
    } else if ns >= 1e3 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    }
}

/// A time in its own unit: `850 ns`, `1.23 ms`.
pub fn fmt_ns(ns: f64) -> String {
    let (div, unit) = time_unit(ns);
    format!("{} {unit}", num(ns / div))
}

/// Bytes per second as MB/s (10^6).
pub fn fmt_mbps(bytes_per_sec: f64) -> String {
    format!("{} MB/s", num(bytes_per_sec / 1e6))
}

/// A value of a summary metric with its unit.
fn fmt_metric(m: Metric, v: f64) -> String {
    if m.is_iops() {
        format!("{} IOPS", num(v))
    } else {
        fmt_mbps(v)
    }
}

/// A map from a data interval onto a pixel interval, linear or logarithmic
/// (base 10; the domain must then be positive).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    d0: f64,
    d1: f64,
    r0: f64,
    r1: f64,
    log: bool,
}

impl Scale {
    /// `domain.0` maps to `range.0`, `domain.1` to `range.1`.
    pub fn linear(domain: (f64, f64), range: (f64, f64)) -> Scale {
        Scale {
            d0: domain.0,
            d1: domain.1,
            r0: range.0,
            r1: range.1,
            log: false,
        }
    }

    /// Logarithmic: equal ratios map to equal distances.
    pub fn log10(domain: (f64, f64), range: (f64, f64)) -> Scale {
        Scale {
            d0: domain.0.max(f64::MIN_POSITIVE).log10(),
            d1: domain.1.max(f64::MIN_POSITIVE).log10(),
            r0: range.0,
            r1: range.1,
            log: true,
        }
    }

    /// The pixel position of `v` (the middle of the range for an empty domain).
    pub fn map(&self, v: f64) -> f64 {
        let v = if self.log { v.max(f64::MIN_POSITIVE).log10() } else { v };
        let span = self.d1 - self.d0;
        if span == 0.0 || !span.is_finite() || !v.is_finite() {
            return (self.r0 + self.r1) / 2.0;
        }
        self.r0 + (v - self.d0) / span * (self.r1 - self.r0)
    }
}

/// Ticks from 0 up to the first at or above `max`, about `n` of them, with
/// a step of 1, 2 or 5 x 10^k. `[0, 1]` when `max` is not positive.
pub fn nice_ticks(max: f64, n: u32) -> Vec<f64> {
    if !max.is_finite() || max <= 0.0 || n == 0 {
        return vec![0.0, 1.0];
    }
    let raw = max / f64::from(n);
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag);
    let mut ticks = vec![0.0];
    let mut i = 1.0;
    while ticks.last().is_some_and(|&t| t < max * (1.0 - 1e-9)) && ticks.len() < 100 {
        ticks.push(step * i);
        i += 1.0;
    }
    ticks
}

/// The powers of ten from the one at or below `lo` to the one at or above
/// `hi` (`lo` > 0); `[1, 10]` for an unusable interval.
pub fn decades(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && hi >= lo) {
        return vec![1.0, 10.0];
    }
    let mut d = 10f64.powf(lo.log10().floor());
    let mut out = vec![d];
    while d < hi * (1.0 - 1e-9) && out.len() < 40 {
        d *= 10.0;
        out.push(d);
    }
    if out.len() == 1 {
        out.push(d * 10.0);
    }
    out
}

/// The percentile axis position: the number of nines, -log10(1 - p/100),
/// so 90 -> 1, 99 -> 2, 99.9 -> 3 (p capped at 99.999).
pub fn nines(p: f64) -> f64 {
    let p = p.clamp(0.0, 99.999);
    -(1.0 - p / 100.0).log10()
}

// ---------------------------------------------------------------- drawing

const W: f64 = 760.0;
const H: f64 = 340.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 64.0;
/// Bars whose largest figure is more than this many times the smallest get a log axis.
const LOG_SPAN: f64 = 20.0;
const PALETTE: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
];

fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// The line style of series `i`: solid for the first round of colours,
/// then dashed, then dotted, so a colour used twice is told apart.
fn dash(i: usize) -> &'static str {
    match (i / PALETTE.len()) % 3 {
        0 => "",
        1 => " stroke-dasharray=\"8 4\"",
        _ => " stroke-dasharray=\"2 3\"",
    }
}

/// An axis: its scale, its ticks with their labels, and its title.
#[derive(Debug)]
struct Axis {
    label: String,
    scale: Scale,
    ticks: Vec<(f64, String)>,
}

/// A linear value axis from 0 (bottom of the plot) with nice ticks.
fn value_axis(label: String, max: f64, show: impl Fn(f64) -> String) -> Axis {
    let ticks = nice_ticks(max, 5);
    let top = ticks.last().copied().unwrap_or(1.0);
    Axis {
        label,
        scale: Scale::linear((0.0, top), (H - BOTTOM, TOP)),
        ticks: ticks.into_iter().map(|t| (t, show(t))).collect(),
    }
}

fn svg_open(out: &mut String, chart: Chart, title: &str) {
    svg_open_h(out, chart, title, H);
}

/// [`svg_open`] for a chart of height `h` (the fleet's strips: one row per group).
fn svg_open_h(out: &mut String, chart: Chart, title: &str, h: f64) {
    let _ = write!(
        out,
        "<svg class=\"chart\" data-chart=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {h}\" \
         width=\"{W}\" height=\"{h}\" role=\"img\" aria-label=\"{}\">",
        chart.id(),
        escape(title)
    );
}

/// The y axis: grid lines, tick labels, the rotated title.
fn y_axis(out: &mut String, y: &Axis) {
    out.push_str("<g class=\"axis y\">");
    for (v, label) in &y.ticks {
        let py = y.scale.map(*v);
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{py:.1}\" y2=\"{py:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            W - RIGHT,
            LEFT - 6.0,
            py + 4.0,
            escape(label)
        );
    }
    let cy = (TOP + H - BOTTOM) / 2.0;
    let _ = write!(
        out,
        "<line class=\"frame\" x1=\"{LEFT}\" x2=\"{LEFT}\" y1=\"{TOP}\" y2=\"{:.1}\"/>\
         <text class=\"title\" transform=\"translate(16 {cy:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text></g>",
        H - BOTTOM,
        escape(&y.label)
    );
}

/// The x axis of a line chart: ticks, labels, title.
fn x_axis(out: &mut String, x: &Axis) {
    out.push_str("<g class=\"axis x\">");
    let base = H - BOTTOM;
    for (v, label) in &x.ticks {
        let px = x.scale.map(*v);
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{TOP}\" y2=\"{base:.1}\"/>\
             <text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            base + 16.0,
            escape(label)
        );
    }
    let _ = write!(
        out,
        "<line class=\"frame\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{base:.1}\" y2=\"{base:.1}\"/>\
         <text class=\"title\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text></g>",
        W - RIGHT,
        (LEFT + W - RIGHT) / 2.0,
        H - 12.0,
        escape(&x.label)
    );
}

/// The shape of a data point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// A circle, joined to the series' line.
    Dot,
    /// A square, not on the line.
    Square,
}

#[derive(Debug)]
struct Point {
    x: f64,
    y: f64,
    tip: String,
    shape: Shape,
}

#[derive(Debug)]
struct Series {
    name: String,
    points: Vec<Point>,
}

/// A line chart: each series a polyline through its dots, plus its squares.
fn line_chart(chart: Chart, title: &str, x: &Axis, y: &Axis, series: &[Series]) -> String {
    let mut out = String::new();
    svg_open(&mut out, chart, title);
    y_axis(&mut out, y);
    x_axis(&mut out, x);
    for (i, s) in series.iter().enumerate() {
        let c = color(i);
        let _ = write!(out, "<g class=\"series\" data-series=\"{}\">", escape(&s.name));
        let line: Vec<String> = s
            .points
            .iter()
            .filter(|p| p.shape == Shape::Dot)
            .map(|p| format!("{:.1},{:.1}", x.scale.map(p.x), y.scale.map(p.y)))
            .collect();
        if line.len() > 1 {
            let _ = write!(
                out,
                "<polyline class=\"line\" fill=\"none\" stroke=\"{c}\" stroke-width=\"2\"{} points=\"{}\"/>",
                dash(i),
                line.join(" ")
            );
        }
        for p in &s.points {
            let (px, py) = (x.scale.map(p.x), y.scale.map(p.y));
            let tip = format!("<title>{}: {}</title>", escape(&s.name), escape(&p.tip));
            match p.shape {
                Shape::Dot => {
                    let _ = write!(
                        out,
                        "<circle class=\"mark\" cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"3.5\" fill=\"{c}\">{tip}</circle>"
                    );
                }
                Shape::Square => {
                    let _ = write!(
                        out,
                        "<rect class=\"mark square\" x=\"{:.1}\" y=\"{:.1}\" width=\"9\" height=\"9\" fill=\"none\" \
                         stroke=\"{c}\" stroke-width=\"2\">{tip}</rect>",
                        px - 4.5,
                        py - 4.5
                    );
                }
            }
        }
        out.push_str("</g>");
    }
    out.push_str("</svg>");
    out
}

#[derive(Debug)]
struct Bar {
    /// Index into the legend (its colour).
    key: usize,
    /// The text under the bar.
    label: String,
    value: f64,
    /// The text above the bar.
    text: String,
    tip: String,
}

#[derive(Debug)]
struct Group {
    label: String,
    bars: Vec<Bar>,
    /// A dashed line across the group at this value, with its text.
    expected: Option<(f64, String)>,
}

/// A bar chart of groups of bars on a linear axis from 0.
fn bar_chart(chart: Chart, title: &str, y_label: String, show: impl Fn(f64) -> String, groups: &[Group]) -> String {
    let max = groups
        .iter()
        .flat_map(|g| g.bars.iter().map(|b| b.value).chain(g.expected.iter().map(|e| e.0)))
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
    let min = groups
        .iter()
        .flat_map(|g| g.bars.iter().map(|b| b.value))
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    // Figures that span more than LOG_SPAN x (a disk's seeks against an
    // SSD's) go on a log axis, so the small ones are not flat lines.
    let y = if min.is_finite() && max / min > LOG_SPAN {
        let dec = decades(min, max);
        Axis {
            label: format!("{y_label} (log scale)"),
            scale: Scale::log10(
                (dec[0], dec.last().copied().unwrap_or(dec[0] * 10.0)),
                (H - BOTTOM, TOP),
            ),
            ticks: dec.iter().map(|&d| (d, show(d))).collect(),
        }
    } else {
        value_axis(y_label, max * 1.08, show)
    };
    let mut out = String::new();
    svg_open(&mut out, chart, title);
    y_axis(&mut out, &y);
    let base = H - BOTTOM;
    let _ = write!(
        out,
        "<line class=\"frame\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{base:.1}\" y2=\"{base:.1}\"/>",
        W - RIGHT
    );
    // Slots: one per bar, one empty slot between groups.
    let bars: usize = groups.iter().map(|g| g.bars.len()).sum();
    let slots = bars + groups.len().saturating_sub(1);
    let slot = (W - LEFT - RIGHT - 10.0) / slots.max(1) as f64;
    let bar_w = (slot * 0.8).min(90.0);
    let mut at = LEFT + 5.0;
    for g in groups {
        let start = at;
        for b in &g.bars {
            let v = if b.value.is_finite() { b.value.max(0.0) } else { 0.0 };
            let top = y.scale.map(v).clamp(TOP, H - BOTTOM);
            let x0 = at + (slot - bar_w) / 2.0;
            let cx = at + slot / 2.0;
            let _ = write!(
                out,
                "<rect class=\"mark bar\" x=\"{x0:.1}\" y=\"{top:.1}\" width=\"{bar_w:.1}\" height=\"{:.1}\" \
                 fill=\"{}\"><title>{}</title></rect>\
                 <text class=\"value\" x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
                 <text class=\"bar-label\" x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                (base - top).max(0.0),
                color(b.key),
                escape(&b.tip),
                top - 4.0,
                escape(&b.text),
                base + 14.0,
                escape(&short(&b.label, slot, 6.0))
            );
            at += slot;
        }
        let end = at;
        let _ = write!(
            out,
            "<text class=\"group-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            (start + end) / 2.0,
            base + 30.0,
            escape(&short(&g.label, end - start + slot * 0.8, 6.2))
        );
        if let Some((v, text)) = &g.expected {
            let py = y.scale.map(*v).clamp(TOP, H - BOTTOM);
            // Its text in the gap left of the group; a group with no room
            // there (the first, at the axis) has it above the line's right end.
            let (class, lx, ly) = if start - LEFT > 60.0 {
                ("expected-label", start - 6.0, py + 4.0)
            } else {
                ("expected-label inside", end - 2.0, py - 5.0)
            };
            let _ = write!(
                out,
                "<line class=\"mark expected\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{py:.1}\" y2=\"{py:.1}\">\
                 <title>{}</title></line><text class=\"{class}\" x=\"{lx:.1}\" y=\"{ly:.1}\" \
                 text-anchor=\"end\">{}</text>",
                start - 2.0,
                end + 2.0,
                escape(text),
                escape(text)
            );
        }
        at += slot;
    }
    out.push_str("</svg>");
    out
}

/// `s` cut to fit about `px` pixels of `char_px`-pixel characters, with an ellipsis.
fn short(s: &str, px: f64, char_px: f64) -> String {
    let mut fit = 3_usize;
    while (fit as f64 + 1.0) * char_px <= px && fit < 200 {
        fit += 1;
    }
    if s.chars().count() <= fit {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(fit.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// The legend swatch of series `i`: its colour, striped when its line is dashed or dotted.
fn swatch(i: usize) -> String {
    let c = color(i);
    match (i / PALETTE.len()) % 3 {
        0 => format!("background:{c}"),
        1 => format!("background:linear-gradient(90deg,{c} 60%,#fff 60%);background-size:6px 100%"),
        _ => format!("background:linear-gradient(90deg,{c} 40%,#fff 40%);background-size:4px 100%"),
    }
}

/// The legend under a chart (HTML, so long names wrap).
fn legend(names: &[String]) -> String {
    let mut out = String::from("<ul class=\"legend\">");
    for (i, n) in names.iter().enumerate() {
        let _ = write!(
            out,
            "<li><span class=\"swatch\" style=\"{}\"></span>{}</li>",
            swatch(i),
            escape(n)
        );
    }
    out.push_str("</ul>");
    out
}

/// A chart with its heading, legend and notes (`notes` are already HTML).
fn figure(title: &str, svg: &str, legend_html: &str, notes: &[String]) -> String {
    let mut out = format!(
        "<figure class=\"chart-box\"><h4>{}</h4>{svg}{legend_html}",
        escape(title)
    );
    for n in notes {
        let _ = write!(out, "<figcaption>{n}</figcaption>");
    }
    out.push_str("</figure>\n");
    out
}

// ---------------------------------------------------------------- data

/// The test named `name` on `target`.
fn find<'a>(doc: &'a ResultDoc, target: &str, name: &str) -> Option<&'a TestResult> {
    doc.tests.iter().find(|t| t.target == target && t.name == name)
}

fn target<'a>(doc: &'a ResultDoc, path: &str) -> Option<&'a TargetInfo> {
    doc.targets.iter().find(|t| t.path == path)
}

/// A target as legends name it: path, then the array or layer it is, or its serial.
fn target_name(doc: &ResultDoc, path: &str) -> String {
    match target(doc, path) {
        Some(TargetInfo { stack: Some(s), .. }) => format!("{path} ({} {})", s.level, s.name),
        Some(TargetInfo { serial: Some(sn), .. }) if !sn.is_empty() => format!("{path} ({sn})"),
        _ => path.to_string(),
    }
}

/// The names of the tests of `doc` in the order first run, with their workload.
fn test_names(doc: &ResultDoc) -> Vec<(&str, Workload)> {
    let mut names: Vec<(&str, Workload)> = Vec::new();
    for t in &doc.tests {
        if !names.iter().any(|(n, _)| *n == t.name) {
            names.push((&t.name, t.workload));
        }
    }
    names
}

fn finite_pos(v: f64) -> bool {
    v.is_finite() && v >= 0.0
}

/// Surface curves: one chart per zones test, one series per target.
/// The surface series of the zones test `name`: per target, each step's
/// read MB/s at the middle of its range as a percentage of the target's size
/// (surface steps as dots, the three zones as squares).
fn surface_series(doc: &ResultDoc, name: &str) -> Vec<Series> {
    let mut series = Vec::new();
    for t in doc.tests.iter().filter(|t| t.name == name) {
        let size = target(doc, &t.target)
            .map(|ti| ti.size_bytes)
            .filter(|&s| s > 0)
            .or_else(|| t.steps.iter().map(|s| s.range_end).max())
            .unwrap_or(0);
        if size == 0 {
            continue;
        }
        let mut points = Vec::new();
        for st in &t.steps {
            let Some(bps) = st.read.as_ref().map(|r| r.bytes_per_sec).filter(|v| finite_pos(*v)) else {
                continue;
            };
            let mid = (st.range_start as f64 + st.range_end as f64) / 2.0;
            let pos = (mid / size as f64 * 100.0).clamp(0.0, 100.0);
            let shape = if st.label.starts_with("surface_") {
                Shape::Dot
            } else {
                Shape::Square
            };
            points.push(Point {
                x: pos,
                y: bps / 1e6,
                tip: format!("{} at {}% of the target: {}", st.label, num(pos), fmt_mbps(bps)),
                shape,
            });
        }
        if !points.is_empty() {
            series.push(Series {
                name: target_name(doc, &t.target),
                points,
            });
        }
    }
    series
}

fn surface_charts(doc: &ResultDoc) -> Vec<String> {
    let mut charts = Vec::new();
    for (name, _) in test_names(doc).into_iter().filter(|(_, w)| *w == Workload::Zones) {
        let series = surface_series(doc, name);
        if series.is_empty() {
            continue;
        }
        let max = series.iter().flat_map(|s| &s.points).map(|p| p.y).fold(0.0, f64::max);
        let y = value_axis("Read throughput (MB/s, 10^6 bytes/s)".into(), max * 1.05, num);
        let x = Axis {
            label: "Position on the target (% of its size; 0 = first byte = outside of a disk, 100 = inside)".into(),
            scale: Scale::linear((0.0, 100.0), (LEFT, W - RIGHT)),
            ticks: [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
                .into_iter()
                .map(|v| (v, format!("{v}%")))
                .collect(),
        };
        let title = format!("Surface transfer curve: {name}");
        let svg = line_chart(Chart::Surface, &title, &x, &y, &series);
        let names: Vec<String> = series.iter().map(|s| s.name.clone()).collect();
        charts.push(figure(
            &title,
            &svg,
            &legend(&names),
            &[
                "Line and dots: the surface points (surface_NN), evenly spaced from outside to inside; \
               squares: the outside, middle and inside zones (diskinfo -t), larger reads."
                    .to_string(),
            ],
        ));
    }
    charts
}

/// Seek profiles: one chart per seek_profile test, bars per section and target.
fn seek_charts(doc: &ResultDoc) -> Vec<String> {
    let mut charts = Vec::new();
    for (name, _) in test_names(doc).into_iter().filter(|(_, w)| *w == Workload::SeekProfile) {
        let runs: Vec<&TestResult> = doc
            .tests
            .iter()
            .filter(|t| t.name == name && t.summary.seek_ns.iter().any(|f| finite_pos(f.value)))
            .collect();
        if runs.is_empty() {
            continue;
        }
        let mut sections: Vec<&str> = Vec::new();
        for t in &runs {
            for f in &t.summary.seek_ns {
                if !sections.contains(&f.label.as_str()) {
                    sections.push(&f.label);
                }
            }
        }
        let max = runs
            .iter()
            .flat_map(|t| &t.summary.seek_ns)
            .map(|f| f.value)
            .filter(|v| finite_pos(*v))
            .fold(0.0, f64::max);
        let (div, unit) = time_unit(max);
        let names: Vec<String> = runs.iter().map(|t| target_name(doc, &t.target)).collect();
        let groups: Vec<Group> = sections
            .iter()
            .map(|sec| Group {
                label: (*sec).to_string(),
                bars: runs
                    .iter()
                    .enumerate()
                    .filter_map(|(i, t)| {
                        let v = t.summary.seek_ns.iter().find(|f| f.label == *sec)?.value;
                        finite_pos(v).then(|| Bar {
                            key: i,
                            label: String::new(),
                            value: v / div,
                            text: String::new(),
                            tip: format!("{}, {sec}: {}", names[i], fmt_ns(v)),
                        })
                    })
                    .collect(),
                expected: None,
            })
            .collect();
        let title = format!("Seek profile: {name}");
        let svg = bar_chart(
            Chart::Seek,
            &title,
            format!("Mean time per read ({unit})"),
            num,
            &groups,
        );
        charts.push(figure(
            &title,
            &svg,
            &legend(&names),
            &[
                "diskinfo -t's sections: full, half and quarter stroke, short forward and backward seeks, \
               sequential reads at the outside and the inside; one logical block per read."
                    .to_string(),
            ],
        ));
    }
    charts
}

/// Latency percentile curves: one chart per test (not seek_profile, zones
/// or command_overhead, which have their own figures), one curve per
/// target, step and direction.
fn latency_charts(doc: &ResultDoc) -> Vec<String> {
    let mut charts = Vec::new();
    let own = [Workload::SeekProfile, Workload::Zones, Workload::CommandOverhead];
    for (name, _) in test_names(doc).into_iter().filter(|(_, w)| !own.contains(w)) {
        let mut series = Vec::new();
        for t in doc.tests.iter().filter(|t| t.name == name) {
            let many_steps = t.steps.len() > 1;
            for st in &t.steps {
                for (dir, stats) in [("read", &st.read), ("write", &st.write)] {
                    let Some(DirStats { lat_ns, clat_ns, .. }) = stats else {
                        continue;
                    };
                    // fio's clat, as its percentiles are printed; lat before clat existed.
                    let points: Vec<Point> = clat_ns
                        .as_ref()
                        .unwrap_or(lat_ns)
                        .percentiles
                        .iter()
                        .filter(|p| p.ns > 0 && p.p.is_finite() && p.p > 0.0)
                        .map(|p| Point {
                            x: nines(p.p),
                            y: p.ns as f64,
                            tip: format!("p{}: {}", p.p, fmt_ns(p.ns as f64)),
                            shape: Shape::Dot,
                        })
                        .collect();
                    if points.is_empty() {
                        continue;
                    }
                    let mut sname = target_name(doc, &t.target);
                    if many_steps {
                        if matches!(t.workload, Workload::IopsSweep | Workload::Slog) {
                            // The sweep's and slog's steps are labelled by their request size in bytes.
                            let _ = write!(sname, " · bs {} B", st.label);
                        } else {
                            let _ = write!(sname, " · {}", st.label);
                        }
                    }
                    let _ = write!(sname, " · {dir}");
                    series.push(Series { name: sname, points });
                }
            }
        }
        if series.is_empty() {
            continue;
        }
        let ys = || series.iter().flat_map(|s| &s.points).map(|p| p.y);
        let lo = ys().fold(f64::INFINITY, f64::min);
        let hi = ys().fold(0.0, f64::max);
        let dec = decades(lo, hi);
        let y = Axis {
            label: "Completion latency (log scale)".into(),
            scale: Scale::log10(
                (dec[0], dec.last().copied().unwrap_or(dec[0] * 10.0)),
                (H - BOTTOM, TOP),
            ),
            ticks: dec.iter().map(|&d| (d, fmt_ns(d))).collect(),
        };
        let xmax = series
            .iter()
            .flat_map(|s| &s.points)
            .map(|p| p.x)
            .fold(2.0, f64::max)
            .ceil();
        let x = Axis {
            label: "Percentile (nines scale: 0, 90, 99, 99.9 ... %)".into(),
            scale: Scale::linear((0.0, xmax), (LEFT, W - RIGHT)),
            ticks: [50.0, 90.0, 99.0, 99.9, 99.99, 99.999]
                .into_iter()
                .filter(|&p| nines(p) <= xmax + 1e-9)
                .map(|p| (nines(p), format!("{p}%")))
                .collect(),
        };
        let title = format!("Latency percentiles: {name}");
        let svg = line_chart(Chart::Latency, &title, &x, &y, &series);
        let names: Vec<String> = series.iter().map(|s| s.name.clone()).collect();
        charts.push(figure(&title, &svg, &legend(&names), &[]));
    }
    charts
}

/// The metric's axis title.
fn metric_axis(m: Metric) -> String {
    let dir = if m.is_read() { "Read" } else { "Write" };
    if m.is_iops() {
        format!("{dir} IOPS (requests/s)")
    } else {
        format!("{dir} throughput (MB/s, 10^6 bytes/s)")
    }
}

/// The metric's values on its axis (MB/s for bytes per second).
fn axis_value(m: Metric, v: f64) -> f64 {
    if m.is_iops() {
        v
    } else {
        v / 1e6
    }
}

/// An array's or layer's line under its chart: its note, then what each
/// member did ([`members_table`]).
fn line_note(a: &Analysis) -> String {
    let mut s = analysis_note(a);
    s.push_str(&members_table(a));
    s
}

/// What each device right beneath an array or layer did during the test's
/// main step (`Analysis.members`, from the kernel's counters), in member
/// order: its share of the bytes the members moved and its utilization
/// (time busy over the step), each 0-100% with a bar, and its bytes read
/// and written. Empty for a line without them (no accounting, older
/// documents).
fn members_table(a: &Analysis) -> String {
    if a.members.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "<table class=\"members\"><caption>Members of {} during {} (kernel I/O counters of its main step)</caption>\
         <thead><tr><th>Member</th><th>Share of the bytes moved</th><th>Utilization (time busy)</th><th>Read</th>\
         <th>Written</th></tr></thead><tbody>",
        escape(&a.target),
        escape(&a.test)
    );
    for m in &a.members {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&m.path),
            meter(m.share),
            meter(m.utilization),
            fmt_mb(m.read_bytes),
            fmt_mb(m.write_bytes)
        );
    }
    out.push_str("</tbody></table>");
    out
}

/// A fraction (0 to 1) as a percentage after a bar as wide (0-100% of its
/// box, clamped); `-` when not finite.
fn meter(frac: f64) -> String {
    if !frac.is_finite() {
        return "-".into();
    }
    let pct = frac * 100.0;
    format!(
        "<span class=\"meter\"><span style=\"width:{:.1}%\"></span></span> {}%",
        pct.clamp(0.0, 100.0),
        num(pct)
    )
}

/// Bytes as MB (10^6).
fn fmt_mb(bytes: u64) -> String {
    format!("{} MB", num(bytes as f64 / 1e6))
}

fn analysis_note(a: &Analysis) -> String {
    let mut s = format!(
        "{} {}: measured {}, expected {}, efficiency {}%. Rule: {}.",
        escape(&a.test),
        escape(&a.metric),
        escape(&fmt_metric_name(&a.metric, a.measured)),
        escape(&fmt_metric_name(&a.metric, a.expected)),
        num(a.efficiency * 100.0),
        escape(&a.rule)
    );
    if let Some(l) = &a.limited_by {
        let _ = write!(s, " Limited by {}.", escape(l));
    }
    s
}

/// A figure of the metric named `name` with its unit (a plain number for an
/// unknown metric).
fn fmt_metric_name(name: &str, v: f64) -> String {
    Metric::from_name(name).map_or_else(|| num(v), |m| fmt_metric(m, v))
}

/// Arrays: one chart per array analysis line: each member alone, the
/// array, and the expected figure as a dashed line over the array's bar.
fn array_charts(doc: &ResultDoc) -> Vec<String> {
    let mut charts = Vec::new();
    for a in doc.analysis.iter().filter(|a| a.kind == "array") {
        let Some(m) = Metric::from_name(&a.metric) else {
            continue;
        };
        if !finite_pos(a.measured) {
            continue;
        }
        let members: Vec<String> = match target(doc, &a.target).and_then(|t| t.stack.as_ref()) {
            Some(s) if !s.members.is_empty() => s.members.clone(),
            _ => a.from.clone(),
        };
        let member_bars: Vec<Bar> = members
            .iter()
            .filter_map(|p| {
                let v = find(doc, p, &a.test).and_then(|t| m.get(&t.summary))?;
                finite_pos(v).then(|| Bar {
                    key: 0,
                    label: p.clone(),
                    value: axis_value(m, v),
                    text: num(axis_value(m, v)),
                    tip: format!("{} alone, {}: {}", target_name(doc, p), a.test, fmt_metric(m, v)),
                })
            })
            .collect();
        let mut groups = Vec::new();
        if !member_bars.is_empty() {
            groups.push(Group {
                label: "members, each alone".into(),
                bars: member_bars,
                expected: None,
            });
        }
        let expected = finite_pos(a.expected).then(|| {
            (
                axis_value(m, a.expected),
                format!("expected {}", fmt_metric(m, a.expected)),
            )
        });
        groups.push(Group {
            label: "array".into(),
            bars: vec![Bar {
                key: 1,
                label: a.target.clone(),
                value: axis_value(m, a.measured),
                text: num(axis_value(m, a.measured)),
                tip: format!(
                    "{}, {}: {} ({}% of expected)",
                    target_name(doc, &a.target),
                    a.test,
                    fmt_metric(m, a.measured),
                    num(a.efficiency * 100.0)
                ),
            }],
            expected,
        });
        let title = format!("{} · {} · {}", target_name(doc, &a.target), a.test, a.metric);
        let svg = bar_chart(Chart::Array, &title, metric_axis(m), num, &groups);
        let names = vec!["member alone".to_string(), "array (dashed line: expected)".to_string()];
        charts.push(figure(&title, &svg, &legend(&names), &[line_note(a)]));
    }
    charts
}

/// Layers: one chart per unit (MB/s, IOPS): for each layer analysis line,
/// the device beneath and the layer.
fn layer_charts(doc: &ResultDoc) -> Vec<String> {
    let mut charts = Vec::new();
    let lines: Vec<(&Analysis, Metric)> = doc
        .analysis
        .iter()
        .filter(|a| a.kind == "layer" && finite_pos(a.measured) && finite_pos(a.expected))
        .filter_map(|a| Some((a, Metric::from_name(&a.metric)?)))
        .collect();
    for iops in [false, true] {
        let these: Vec<&(&Analysis, Metric)> = lines.iter().filter(|(_, m)| m.is_iops() == iops).collect();
        if these.is_empty() {
            continue;
        }
        let groups: Vec<Group> = these
            .iter()
            .map(|(a, m)| {
                let beneath = target(doc, &a.target)
                    .and_then(|t| t.stack.as_ref())
                    .and_then(|s| s.on.clone())
                    .or_else(|| a.from.first().cloned())
                    .unwrap_or_else(|| "beneath".into());
                let overhead = (1.0 - a.efficiency) * 100.0;
                Group {
                    label: format!(
                        "{} · {} · {}",
                        target_name(doc, &a.target),
                        a.test,
                        if m.is_read() { "read" } else { "write" }
                    ),
                    bars: vec![
                        Bar {
                            key: 0,
                            label: beneath.clone(),
                            value: axis_value(*m, a.expected),
                            text: num(axis_value(*m, a.expected)),
                            tip: format!("{beneath} (beneath), {}: {}", a.test, fmt_metric(*m, a.expected)),
                        },
                        Bar {
                            key: 1,
                            label: a.target.clone(),
                            value: axis_value(*m, a.measured),
                            text: format!("{} ({}%)", num(axis_value(*m, a.measured)), num(a.efficiency * 100.0)),
                            tip: format!(
                                "{}, {}: {}; {}% of the device beneath, overhead {}%",
                                target_name(doc, &a.target),
                                a.test,
                                fmt_metric(*m, a.measured),
                                num(a.efficiency * 100.0),
                                num(overhead)
                            ),
                        },
                    ],
                    expected: None,
                }
            })
            .collect();
        let unit = if iops { "IOPS" } else { "MB/s" };
        let title = format!("Layer overhead ({unit})");
        let axis = if iops {
            "IOPS (requests/s)".to_string()
        } else {
            "Throughput (MB/s, 10^6 bytes/s)".to_string()
        };
        let svg = bar_chart(Chart::Layer, &title, axis, num, &groups);
        let names = vec!["device beneath".to_string(), "layer (% of beneath)".to_string()];
        let notes: Vec<String> = these.iter().map(|(a, _)| line_note(a)).collect();
        charts.push(figure(&title, &svg, &legend(&names), &notes));
    }
    charts
}

/// All at once: one chart per run and metric: each disk alone and while
/// all ran, and the sums from the analysis line.
fn all_at_once_charts(doc: &ResultDoc) -> Vec<String> {
    let mut charts = Vec::new();
    for run in &doc.all_at_once {
        for &m in metrics(run.workload) {
            let mut groups: Vec<Group> = run
                .results
                .iter()
                .filter_map(|r| {
                    let together = m.get(&r.summary).filter(|v| finite_pos(*v) && r.status == Status::Ok)?;
                    let mut bars = Vec::new();
                    if let Some(alone) = find(doc, &r.target, &run.test)
                        .filter(|t| t.status == Status::Ok)
                        .and_then(|t| m.get(&t.summary))
                        .filter(|v| finite_pos(*v))
                    {
                        bars.push(Bar {
                            key: 0,
                            label: "alone".into(),
                            value: axis_value(m, alone),
                            text: num(axis_value(m, alone)),
                            tip: format!("{} alone: {}", target_name(doc, &r.target), fmt_metric(m, alone)),
                        });
                    }
                    bars.push(Bar {
                        key: 1,
                        label: "all".into(),
                        value: axis_value(m, together),
                        text: num(axis_value(m, together)),
                        tip: format!(
                            "{} with all the others: {}",
                            target_name(doc, &r.target),
                            fmt_metric(m, together)
                        ),
                    });
                    Some(Group {
                        label: target_name(doc, &r.target),
                        bars,
                        expected: None,
                    })
                })
                .collect();
            if groups.is_empty() {
                continue;
            }
            let line = doc
                .analysis
                .iter()
                .find(|a| a.kind == "all_at_once" && a.test == run.test && a.metric == m.name());
            let mut notes = Vec::new();
            if let Some(a) = line.filter(|a| finite_pos(a.measured) && finite_pos(a.expected)) {
                groups.push(Group {
                    label: "sum of all disks".into(),
                    bars: vec![
                        Bar {
                            key: 0,
                            label: "alone".into(),
                            value: axis_value(m, a.expected),
                            text: num(axis_value(m, a.expected)),
                            tip: format!("sum of each disk alone: {}", fmt_metric(m, a.expected)),
                        },
                        Bar {
                            key: 1,
                            label: "all".into(),
                            value: axis_value(m, a.measured),
                            text: format!("{} ({}%)", num(axis_value(m, a.measured)), num(a.efficiency * 100.0)),
                            tip: format!(
                                "sum while all ran: {} ({}% of the sum alone)",
                                fmt_metric(m, a.measured),
                                num(a.efficiency * 100.0)
                            ),
                        },
                    ],
                    expected: None,
                });
                notes.push(analysis_note(a));
            }
            let title = format!("All at once: {} · {}", run.test, m.name());
            let svg = bar_chart(Chart::AllAtOnce, &title, metric_axis(m), num, &groups);
            let names = vec!["each disk alone".to_string(), "all disks together".to_string()];
            charts.push(figure(&title, &svg, &legend(&names), &notes));
        }
    }
    charts
}

/// The charts of `kind` for `doc` (empty when it has no data for them).
fn charts(doc: &ResultDoc, kind: Chart) -> Vec<String> {
    match kind {
        Chart::Surface => surface_charts(doc),
        Chart::Seek => seek_charts(doc),
        Chart::Latency => latency_charts(doc),
        Chart::Array => array_charts(doc),
        Chart::Layer => layer_charts(doc),
        Chart::AllAtOnce => all_at_once_charts(doc),
        // Over all the documents: fleet_section.
        Chart::Fleet => Vec::new(),
    }
}

// ---------------------------------------------------------------- sections

fn opt(s: Option<&String>) -> String {
    s.map_or_else(|| "-".into(), |s| escape(s))
}

fn opt_num(v: Option<f64>, show: impl Fn(f64) -> String) -> String {
    v.filter(|v| v.is_finite()).map_or_else(|| "-".into(), show)
}

fn fmt_size(bytes: u64) -> String {
    format!(
        "{} GB ({} MiB)",
        num(bytes as f64 / 1e9),
        num(bytes as f64 / 1_048_576.0)
    )
}

fn section(out: &mut String, i: usize, l: &Loaded) {
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
        crate::text::utc(run.started_unix_ns),
        num(run.duration_ns as f64 / 1e9),
        opt(run.profile.as_ref()),
        escape(&run.config_source),
        run.seed,
        escape(&run.status),
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
    tests_table(out, doc);
    passes_table(out, doc);
    out.push_str("</section>\n");
}

/// The summary tables: targets and the analysis (the tests come after the charts).
fn summary(out: &mut String, doc: &ResultDoc) {
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
            escape(&t.kind),
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
    health_tables(out, doc);
}

/// Each disk's health (before, after, delta; each test's highest
/// temperature) and the health analysis lines.
fn health_tables(out: &mut String, doc: &ResultDoc) {
    if !doc.health_analysis.is_empty() {
        out.push_str(
            "<h3>Health analysis</h3>\n<table class=\"health-analysis\"><thead><tr><th>Kind</th><th>Target</th>\
             <th>Test</th><th>Figure</th><th>What</th></tr></thead><tbody>\n",
        );
        for l in &doc.health_analysis {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&l.kind),
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
            escape(&crate::health::headline(h))
        );
        let rows = crate::health::rows(h);
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
        let temps = crate::health::per_test(&h.tests);
        if !temps.is_empty() {
            let _ = writeln!(
                out,
                "<p>Highest temperature per test: {}</p>",
                escape(&temps.join("; "))
            );
        }
        let attrs = crate::health::attributes(h);
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
fn tests_table(out: &mut String, doc: &ResultDoc) {
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

/// The steps that ran several passes (`params.passes`, `params.warmup`) or
/// filled their range first (`params.fill`): what was filled, each pass's
/// MB/s in the order run with the warm-up and the reported pass marked,
/// and the lowest mean latency of the measured passes (CrystalDiskMark's
/// latency, chosen apart from the best pass). Nothing if no step did.
fn passes_table(out: &mut String, doc: &ResultDoc) {
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
                let (class, title) = match crate::text::pass_mark(st, i) {
                    crate::text::PassMark::Warmup => ("pass warmup", "warm-up, never counted"),
                    crate::text::PassMark::Reported => ("pass chosen", "the pass reported: the fastest"),
                    crate::text::PassMark::Measured => ("pass", "measured"),
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
            let lowest = crate::text::lowest_latency(st)
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
fn status_text(status: &Status) -> String {
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
fn analysis_table(out: &mut String, doc: &ResultDoc) {
    if !doc.analysis.is_empty() {
        out.push_str(
            "<table class=\"analysis\"><thead><tr><th>Kind</th><th>Target</th><th>Test</th><th>Figure</th>\
             <th>Measured</th><th>Expected</th><th>Efficiency</th><th>Limited by</th><th>Rule</th></tr></thead><tbody>\n",
        );
        for a in &doc.analysis {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}%</td><td>{}</td><td>{}</td></tr>",
                escape(&a.kind),
                escape(&a.target),
                escape(&a.test),
                escape(&a.metric),
                escape(&fmt_metric_name(&a.metric, a.measured)),
                escape(&fmt_metric_name(&a.metric, a.expected)),
                num(a.efficiency * 100.0),
                opt(a.limited_by.as_ref()),
                escape(&a.rule)
            );
        }
        out.push_str("</tbody></table>\n");
    }
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
.pass{white-space:nowrap}.pass.warmup{color:#888;font-style:italic}.pass.chosen{font-weight:bold;text-decoration:underline}
";

#[cfg(test)]
mod tests {
    use super::*;

    const QUICK: &str = include_str!("../tests/fixtures/html/quick-4disks.json");
    const STACKS: &str = include_str!("../tests/fixtures/html/stacks.json");

    fn doc(text: &str) -> ResultDoc {
        serde_json::from_str(text).expect("fixture parses")
    }

    fn loaded(file: &str, doc: ResultDoc) -> Loaded {
        Loaded {
            file: file.into(),
            doc,
            warnings: Vec::new(),
        }
    }

    /// The charts of `kind` in `html`: each svg's text up to `</svg>`.
    fn charts_of(html: &str, kind: Chart) -> Vec<&str> {
        let open = format!("<svg class=\"chart\" data-chart=\"{}\"", kind.id());
        html.match_indices(&open)
            .map(|(i, _)| {
                let rest = &html[i..];
                &rest[..rest.find("</svg>").map_or(rest.len(), |e| e + 6)]
            })
            .collect()
    }

    fn marks(svg: &str) -> usize {
        svg.matches("class=\"mark").count()
    }

    fn omitted(html: &str, kind: Chart) -> usize {
        html.matches(&format!("data-omitted=\"{}\"", kind.id())).count()
    }

    #[test]
    fn escape_replaces_the_five_characters() {
        for (input, want) in [
            ("plain /dev/sda", "plain /dev/sda"),
            ("<script>", "&lt;script&gt;"),
            ("a & b", "a &amp; b"),
            ("\"quoted\"", "&quot;quoted&quot;"),
            ("it's", "it&#39;s"),
            ("&amp;", "&amp;amp;"),
            ("µs ü", "µs ü"),
        ] {
            assert_eq!(escape(input), want, "{input}");
        }
    }

    #[test]
    fn numbers_keep_about_three_significant_digits() {
        for (v, want) in [
            (0.0, "0"),
            (2649.53, "2650"),
            (123.4, "123"),
            (12.345, "12.3"),
            (1.2345, "1.23"),
            (0.5, "0.500"),
            (0.012_34, "0.0123"),
            (-12.345, "-12.3"),
            (f64::NAN, "-"),
            (f64::INFINITY, "-"),
        ] {
            assert_eq!(num(v), want, "{v}");
        }
    }

    #[test]
    fn times_and_rates_name_their_unit() {
        for (ns, want) in [
            (850.0, "850 ns"),
            (1_500.0, "1.50 µs"),
            (160_184.4, "160 µs"),
            (32_816_616.9, "32.8 ms"),
            (2_500_000_000.0, "2.50 s"),
        ] {
            assert_eq!(fmt_ns(ns), want, "{ns}");
        }
        assert_eq!(fmt_mbps(31_923_709.5), "31.9 MB/s");
        assert_eq!(fmt_metric(Metric::ReadIops, 7548.6), "7549 IOPS");
        assert_eq!(fmt_metric(Metric::WriteBps, 2e6), "2.00 MB/s");
    }

    #[test]
    fn meters_show_the_percentage_and_a_bar_within_its_box() {
        for (frac, want) in [
            (
                1.0,
                "<span class=\"meter\"><span style=\"width:100.0%\"></span></span> 100%",
            ),
            (
                0.0,
                "<span class=\"meter\"><span style=\"width:0.0%\"></span></span> 0%",
            ),
            (
                0.123,
                "<span class=\"meter\"><span style=\"width:12.3%\"></span></span> 12.3%",
            ),
            // Out of 0-1 (a counter oddity): the number as it is, the bar within its box.
            (
                1.5,
                "<span class=\"meter\"><span style=\"width:100.0%\"></span></span> 150%",
            ),
            (
                -0.1,
                "<span class=\"meter\"><span style=\"width:0.0%\"></span></span> -10.0%",
            ),
            (f64::NAN, "-"),
        ] {
            assert_eq!(meter(frac), want, "{frac}");
        }
        assert_eq!(fmt_mb(67_108_864), "67.1 MB");
        assert_eq!(fmt_mb(0), "0 MB");
    }

    /// A dashed line over the first group, at the axis, has its text above
    /// its right end, inside the plot, not over the axis' tick labels; over
    /// a later group, in the gap left of it, as the array charts have it.
    #[test]
    fn an_expected_line_label_stays_off_the_axis() {
        let bar = |v: f64| Bar {
            key: 0,
            label: String::new(),
            value: v,
            text: String::new(),
            tip: String::new(),
        };
        let group = |e: f64| Group {
            label: String::new(),
            bars: vec![bar(10.0), bar(5.0)],
            expected: Some((e, format!("line {e}"))),
        };
        let x_of = |svg: &str, text: &str| -> f64 {
            let end = svg.find(&format!(">{text}</text>")).expect(text);
            let tag = &svg[svg[..end].rfind("<text").unwrap()..end];
            let i = tag.find(" x=\"").unwrap() + 4;
            tag[i..i + tag[i..].find('"').unwrap()].parse().unwrap()
        };
        let svg = bar_chart(Chart::Fleet, "t", "y".into(), num, &[group(7.5), group(8.0)]);
        assert!(svg.contains("<text class=\"expected-label inside\""), "{svg}");
        assert!(x_of(&svg, "line 7.5") > LEFT + 100.0, "{svg}");
        // Five slots: two bars, the gap, two bars.
        let slot = (W - LEFT - RIGHT - 10.0) / 5.0;
        let (gap_start, gap_end) = (LEFT + 5.0 + 2.0 * slot, LEFT + 5.0 + 3.0 * slot);
        let later = x_of(&svg, "line 8");
        assert!(later > gap_start && later < gap_end, "in the gap: {later}");
    }

    #[test]
    fn scales_map_ends_and_middles() {
        let lin = Scale::linear((0.0, 100.0), (300.0, 20.0));
        for (v, px) in [(0.0, 300.0), (100.0, 20.0), (50.0, 160.0), (25.0, 230.0)] {
            assert!((lin.map(v) - px).abs() < 1e-9, "linear {v} -> {}", lin.map(v));
        }
        let log = Scale::log10((1e3, 1e6), (0.0, 300.0));
        for (v, px) in [(1e3, 0.0), (1e4, 100.0), (1e5, 200.0), (1e6, 300.0)] {
            assert!((log.map(v) - px).abs() < 1e-9, "log {v} -> {}", log.map(v));
        }
        // An empty domain puts everything in the middle, never NaN.
        assert!((Scale::linear((5.0, 5.0), (0.0, 10.0)).map(5.0) - 5.0).abs() < 1e-9);
        assert!(Scale::log10((0.0, 0.0), (0.0, 10.0)).map(0.0).is_finite());
        for (p, n) in [(0.0, 0.0), (90.0, 1.0), (99.0, 2.0), (99.9, 3.0), (100.0, 5.0)] {
            assert!((nines(p) - n).abs() < 1e-6, "nines({p}) = {}", nines(p));
        }
    }

    #[test]
    fn ticks_are_round_and_cover_the_data() {
        for (max, want) in [
            (85.2, vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]),
            (100.0, vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]),
            (7.0, vec![0.0, 2.0, 4.0, 6.0, 8.0]),
            (2650.0, vec![0.0, 1000.0, 2000.0, 3000.0]),
            (0.0, vec![0.0, 1.0]),
            (f64::NAN, vec![0.0, 1.0]),
        ] {
            assert_eq!(nice_ticks(max, 5), want, "{max}");
        }
        for (lo, hi, want) in [
            (150.0, 9_000.0, vec![100.0, 1e3, 1e4]),
            (1e3, 1e3, vec![1e3, 1e4]),
            (0.0, 10.0, vec![1.0, 10.0]),
        ] {
            assert_eq!(decades(lo, hi), want, "{lo}..{hi}");
        }
    }

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

    #[test]
    fn a_run_without_arrays_draws_surface_seek_and_latency_and_notes_the_rest() {
        let html = render(&[loaded("quick.json", doc(QUICK))]);
        for kind in [Chart::Surface, Chart::Seek, Chart::Latency] {
            let charts = charts_of(&html, kind);
            assert!(!charts.is_empty(), "{} drawn", kind.id());
            assert!(charts.iter().all(|c| marks(c) > 0), "{} has data marks", kind.id());
            assert_eq!(omitted(&html, kind), 0, "{} not noted as missing", kind.id());
        }
        for kind in [Chart::Array, Chart::Layer, Chart::AllAtOnce] {
            assert!(charts_of(&html, kind).is_empty(), "no {} chart", kind.id());
            assert_eq!(omitted(&html, kind), 1, "{} noted as missing", kind.id());
        }
        // One surface chart with a series per disk: 8 surface dots and 3 zone squares each.
        let surface = charts_of(&html, Chart::Surface);
        assert_eq!(surface.len(), 1);
        assert_eq!(surface[0].matches("<g class=\"series\"").count(), 4);
        assert_eq!(surface[0].matches("<circle class=\"mark\"").count(), 4 * 8);
        assert_eq!(surface[0].matches("<rect class=\"mark square\"").count(), 4 * 3);
        // Seek: 7 sections x 4 disks.
        assert_eq!(marks(charts_of(&html, Chart::Seek)[0]), 28);
        // Latency: every test with percentiles but seek_profile, zones and command_overhead.
        let latency = charts_of(&html, Chart::Latency);
        assert_eq!(
            latency.len(),
            6,
            "cached, buffered, direct, seq_read, rand_read, iops_sweep"
        );
        assert!(html.contains("Completion latency (log scale)"));
        assert!(
            html.contains("/dev/sda (BB-SATA-0002) · bs 4096 B · read"),
            "sweep steps name their size"
        );
        assert!(html.contains("Read throughput (MB/s, 10^6 bytes/s)"));
        assert!(html.contains("Mean time per read (µs)"));
    }

    #[test]
    fn a_run_with_stacks_draws_every_chart() {
        let html = render(&[loaded("stacks.json", doc(STACKS))]);
        for kind in Chart::ALL {
            let charts = charts_of(&html, kind);
            assert!(!charts.is_empty(), "{} drawn", kind.id());
            assert!(charts.iter().all(|c| marks(c) > 0), "{} has data marks", kind.id());
            assert_eq!(omitted(&html, kind), 0, "{}", kind.id());
        }
        // Arrays: one chart per analysis line, each with both members, the
        // array, and the expected line.
        let arrays = charts_of(&html, Chart::Array);
        assert_eq!(arrays.len(), 2, "seq_read and rand_read on md0");
        for a in &arrays {
            assert_eq!(a.matches("class=\"mark bar\"").count(), 3, "2 members + the array");
            assert_eq!(a.matches("class=\"mark expected\"").count(), 1);
        }
        assert!(arrays[0].contains("expected 27.9 MB/s"), "{}", arrays[0]);
        // Layers: MB/s (seq_read, seq_write) and IOPS (rand_read), two bars each.
        let layers = charts_of(&html, Chart::Layer);
        assert_eq!(layers.len(), 2);
        assert_eq!(layers[0].matches("class=\"mark bar\"").count(), 4);
        assert_eq!(layers[1].matches("class=\"mark bar\"").count(), 2);
        // All at once: seq_read (MB/s) and rand_read (IOPS): 4 disks x 2 + the sums.
        let together = charts_of(&html, Chart::AllAtOnce);
        assert_eq!(together.len(), 2);
        for c in &together {
            assert_eq!(c.matches("class=\"mark bar\"").count(), 4 * 2 + 2);
        }
    }

    #[test]
    fn seek_bars_go_on_a_log_axis_when_figures_span_more_than_twenty_times() {
        let d = doc(QUICK);
        let linear = seek_charts(&d).concat();
        assert!(linear.contains("Mean time per read (µs)<"), "linear axis: {linear}");
        // One target 100 times faster (an SSD next to a disk): log axis, decades.
        let mut d = doc(QUICK);
        for t in d.tests.iter_mut().filter(|t| t.target == "/dev/sda") {
            for f in &mut t.summary.seek_ns {
                f.value /= 100.0;
            }
        }
        let log = seek_charts(&d).concat();
        assert!(log.contains("Mean time per read (µs) (log scale)"), "{log}");
        for tick in [">1.00<", ">10.0<", ">100<", ">1000<"] {
            assert!(log.contains(tick), "decade tick {tick}");
        }
        // Every bar still stands on the axis and inside the plot.
        for (i, _) in log.match_indices("<rect class=\"mark bar\"") {
            let tag = &log[i..i + log[i..].find('>').unwrap()];
            let num_of = |k: &str| -> f64 {
                let j = tag.find(&format!(" {k}=\"")).unwrap() + k.len() + 3;
                tag[j..j + tag[j..].find('"').unwrap()].parse().unwrap()
            };
            let (y, h) = (num_of("y"), num_of("height"));
            assert!(y >= TOP - 0.1 && (y + h - (H - BOTTOM)).abs() < 0.2, "{tag}");
        }
    }

    #[test]
    fn the_surface_runs_from_outside_to_inside() {
        let d = doc(QUICK);
        let series = surface_series(&d, "zones");
        assert_eq!(series.len(), 4);
        for s in &series {
            let dots: Vec<f64> = s.points.iter().filter(|p| p.shape == Shape::Dot).map(|p| p.x).collect();
            assert_eq!(dots.len(), 8, "{}", s.name);
            assert!(dots.windows(2).all(|w| w[0] < w[1]), "{}: {dots:?}", s.name);
            assert!(dots[0] < 2.0 && dots[7] > 98.0, "{}: {dots:?}", s.name);
            // The squares: outside near 0, middle near 50, inside near 100.
            let zones: Vec<f64> = s
                .points
                .iter()
                .filter(|p| p.shape == Shape::Square)
                .map(|p| p.x)
                .collect();
            assert_eq!(zones.len(), 3);
            assert!(
                zones[0] < 5.0 && (zones[1] - 50.0).abs() < 5.0 && zones[2] > 95.0,
                "{zones:?}"
            );
        }
        // The y values are the steps' MB/s.
        let t = d.tests.iter().find(|t| t.name == "zones").unwrap();
        let first = t.steps.iter().find(|s| s.label == "surface_00").unwrap();
        let want = first.read.as_ref().unwrap().bytes_per_sec / 1e6;
        assert!(series[0].points.iter().any(|p| (p.y - want).abs() < 1e-9));
    }

    #[test]
    fn a_chart_without_data_is_omitted_with_a_note() {
        let mut d = doc(QUICK);
        // No zones steps with reads, no seek figures.
        for t in &mut d.tests {
            if t.workload == Workload::Zones {
                for s in &mut t.steps {
                    s.read = None;
                }
            }
            if t.workload == Workload::SeekProfile {
                t.summary.seek_ns.clear();
            }
        }
        let html = render(&[loaded("q.json", d)]);
        for kind in [Chart::Surface, Chart::Seek] {
            assert!(charts_of(&html, kind).is_empty(), "{}", kind.id());
            assert_eq!(omitted(&html, kind), 1, "{}", kind.id());
        }
        assert!(!charts_of(&html, Chart::Latency).is_empty());
        // No tests at all: every chart is a note.
        let mut empty = doc(QUICK);
        empty.tests.clear();
        let html = render(&[loaded("e.json", empty)]);
        for kind in Chart::ALL {
            assert!(charts_of(&html, kind).is_empty(), "{}", kind.id());
            assert_eq!(omitted(&html, kind), 1, "{}", kind.id());
        }
        assert!(render(&[]).contains("No result documents."));
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
        let pass = crate::text::test_pass;
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
                s.name = evil.into();
                s.level = evil.into();
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
            if matches!(a.kind.as_str(), "array" | "layer") {
                a.members = vec![bench_core::result::MemberShare {
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
        // The charts are still drawn from the renamed tests.
        for kind in Chart::ALL {
            assert!(!charts_of(&html, kind).is_empty(), "{}", kind.id());
        }
        // The fleet page: the machine (its serial), its model and CPU, the
        // disks, in tables, chart rows and tooltips.
        let page = render_fleet(&docs);
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
