//! The figures and text of the HTML report: escaping, numbers of about three significant digits,
//! times and rates with their units (MB/s = 10^6 bytes per second, MB = 10^6 bytes, MiB = 2^20
//! bytes, GB = 10^9 bytes), a metric's axis, and the percentage meters of the members tables.

use bench_core::verdict::analysis::Metric;

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
pub(super) fn time_unit(ns: f64) -> (f64, &'static str) {
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
pub(super) fn fmt_metric(m: Metric, v: f64) -> String {
    if m.is_iops() {
        format!("{} IOPS", num(v))
    } else {
        fmt_mbps(v)
    }
}

/// The metric's axis title.
pub(super) fn metric_axis(m: Metric) -> String {
    let dir = if m.is_read() { "Read" } else { "Write" };
    if m.is_iops() {
        format!("{dir} IOPS (requests/s)")
    } else {
        format!("{dir} throughput (MB/s, 10^6 bytes/s)")
    }
}

/// The metric's values on its axis (MB/s for bytes per second).
pub(super) fn axis_value(m: Metric, v: f64) -> f64 {
    if m.is_iops() {
        v
    } else {
        v / 1e6
    }
}

/// A fraction (0 to 1) as a percentage after a bar as wide (0-100% of its
/// box, clamped); `-` when not finite.
pub(super) fn meter(frac: f64) -> String {
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
pub(super) fn fmt_mb(bytes: u64) -> String {
    format!("{} MB", num(bytes as f64 / 1e6))
}

pub(super) fn opt(s: Option<&String>) -> String {
    s.map_or_else(|| "-".into(), |s| escape(s))
}

/// [`opt`] of a borrowed string.
pub(super) fn opt_str(s: Option<&str>) -> String {
    s.map_or_else(|| "-".into(), escape)
}

pub(super) fn opt_num(v: Option<f64>, show: impl Fn(f64) -> String) -> String {
    v.filter(|v| v.is_finite()).map_or_else(|| "-".into(), show)
}

pub(super) fn fmt_size(bytes: u64) -> String {
    format!(
        "{} GB ({} MiB)",
        num(bytes as f64 / 1e9),
        num(bytes as f64 / 1_048_576.0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
