//! Drawing: scales and ticks, the chart frame and axes, line charts and bar charts as inline SVG,
//! legends and the figure around a chart. Every string drawn goes through [`escape`].

use std::fmt::Write as _;

use super::format::escape;
use super::Chart;

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

pub(super) const W: f64 = 760.0;
pub(super) const H: f64 = 340.0;
pub(super) const LEFT: f64 = 80.0;
pub(super) const RIGHT: f64 = 20.0;
pub(super) const TOP: f64 = 16.0;
pub(super) const BOTTOM: f64 = 64.0;
/// Bars whose largest figure is more than this many times the smallest get a log axis.
pub(super) const LOG_SPAN: f64 = 20.0;
pub(super) const PALETTE: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
];

pub(super) fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// The line style of series `i`: solid for the first round of colours,
/// then dashed, then dotted, so a colour used twice is told apart.
pub(super) fn dash(i: usize) -> &'static str {
    match (i / PALETTE.len()) % 3 {
        0 => "",
        1 => " stroke-dasharray=\"8 4\"",
        _ => " stroke-dasharray=\"2 3\"",
    }
}

/// An axis: its scale, its ticks with their labels, and its title.
#[derive(Debug)]
pub(super) struct Axis {
    pub(super) label: String,
    pub(super) scale: Scale,
    pub(super) ticks: Vec<(f64, String)>,
}

/// A linear value axis from 0 (bottom of the plot) with nice ticks.
pub(super) fn value_axis(label: String, max: f64, show: impl Fn(f64) -> String) -> Axis {
    let ticks = nice_ticks(max, 5);
    let top = ticks.last().copied().unwrap_or(1.0);
    Axis {
        label,
        scale: Scale::linear((0.0, top), (H - BOTTOM, TOP)),
        ticks: ticks.into_iter().map(|t| (t, show(t))).collect(),
    }
}

pub(super) fn svg_open(out: &mut String, chart: Chart, title: &str) {
    svg_open_h(out, chart, title, H);
}

/// [`svg_open`] for a chart of height `h` (the fleet's strips: one row per group).
pub(super) fn svg_open_h(out: &mut String, chart: Chart, title: &str, h: f64) {
    let _ = write!(
        out,
        "<svg class=\"chart\" data-chart=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {h}\" \
         width=\"{W}\" height=\"{h}\" role=\"img\" aria-label=\"{}\">",
        chart.id(),
        escape(title)
    );
}

/// The y axis: grid lines, tick labels, the rotated title.
pub(super) fn y_axis(out: &mut String, y: &Axis) {
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
pub(super) fn x_axis(out: &mut String, x: &Axis) {
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
pub(super) enum Shape {
    /// A circle, joined to the series' line.
    Dot,
    /// A square, not on the line.
    Square,
}

#[derive(Debug)]
pub(super) struct Point {
    pub(super) x: f64,
    pub(super) y: f64,
    pub(super) tip: String,
    pub(super) shape: Shape,
}

#[derive(Debug)]
pub(super) struct Series {
    pub(super) name: String,
    pub(super) points: Vec<Point>,
}

/// A line chart: each series a polyline through its dots, plus its squares.
pub(super) fn line_chart(chart: Chart, title: &str, x: &Axis, y: &Axis, series: &[Series]) -> String {
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
pub(super) struct Bar {
    /// Index into the legend (its colour).
    pub(super) key: usize,
    /// The text under the bar.
    pub(super) label: String,
    pub(super) value: f64,
    /// The text above the bar.
    pub(super) text: String,
    pub(super) tip: String,
}

#[derive(Debug)]
pub(super) struct Group {
    pub(super) label: String,
    pub(super) bars: Vec<Bar>,
    /// A dashed line across the group at this value, with its text.
    pub(super) expected: Option<(f64, String)>,
}

/// A bar chart of groups of bars on a linear axis from 0.
pub(super) fn bar_chart(
    chart: Chart,
    title: &str,
    y_label: String,
    show: impl Fn(f64) -> String,
    groups: &[Group],
) -> String {
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
pub(super) fn short(s: &str, px: f64, char_px: f64) -> String {
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
pub(super) fn swatch(i: usize) -> String {
    let c = color(i);
    match (i / PALETTE.len()) % 3 {
        0 => format!("background:{c}"),
        1 => format!("background:linear-gradient(90deg,{c} 60%,#fff 60%);background-size:6px 100%"),
        _ => format!("background:linear-gradient(90deg,{c} 40%,#fff 40%);background-size:4px 100%"),
    }
}

/// The legend under a chart (HTML, so long names wrap).
pub(super) fn legend(names: &[String]) -> String {
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
pub(super) fn figure(title: &str, svg: &str, legend_html: &str, notes: &[String]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::html::format::num;

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
}
