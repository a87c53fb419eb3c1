//! A disk's surface scan (`targets[].surface_scan`, [`SurfaceScan`], made
//! by `bench_core::passes::scan::record`) as facts and rows, for `show` and the
//! HTML report alike (as [`crate::figures::health`] is for a disk's health): what
//! was read, how fast and how it ended; the reads per time class; the LBAs
//! no read returned and those a retry did; the slowest reads; the zone
//! curve. Every figure names its unit: MB/s = 10^6 B/s, MiB = 2^20 B, GB =
//! 10^9 B, ms = 10^-3 s; LBAs count logical blocks (`logical_block` bytes).

use bench_core::document::result::{ScanEndState, SurfaceScan};

use crate::figures::text;

/// LBAs listed at most; the rest are counted (`and N more`).
pub const MAX_LBAS: usize = 20;

/// The slowest reads shown.
pub const SLOWEST: usize = 5;

/// Lines of the text chart of the zones at most: more zones are grouped.
pub const MAX_ZONE_LINES: usize = 20;

/// The facts of a scan, each a name and its value with its unit: `area`,
/// `reads`, `read`, `rate`, `elapsed`, `ended`.
pub fn facts(s: &SurfaceScan) -> Vec<(&'static str, String)> {
    let area = s.end_byte.saturating_sub(s.start_byte);
    let coverage = if s.coverage_ppm >= bench_core::passes::scan::WHOLE {
        "every block".to_string()
    } else {
        // Parts per million as a percentage, exactly: 4 decimals.
        format!(
            "{}.{:04}% of the area's reads, spread evenly",
            s.coverage_ppm / 10_000,
            s.coverage_ppm % 10_000
        )
    };
    #[allow(clippy::cast_precision_loss)] // a percentage and a duration for display
    let (done_pct, secs) = (
        s.read_bytes as f64 * 100.0 / s.planned_bytes.max(1) as f64,
        s.elapsed_ns as f64 / 1e9,
    );
    vec![
        (
            "area",
            format!(
                "bytes {} to {} of the disk, {}",
                s.start_byte,
                s.end_byte,
                text::bytes(area)
            ),
        ),
        (
            "reads",
            format!(
                "{} B each, up to {} in flight, {coverage}; LBAs in logical blocks of {} B",
                s.bs, s.iodepth, s.logical_block
            ),
        ),
        (
            "read",
            format!(
                "{} of {} planned ({done_pct:.1}%); {} reads, {} failed",
                text::bytes(s.read_bytes),
                text::bytes(s.planned_bytes),
                s.reads,
                s.failed_reads
            ),
        ),
        (
            "rate",
            s.bytes_per_sec.filter(|v| v.is_finite()).map_or_else(
                || "- (nothing read)".into(),
                |v| format!("{} MB/s", text::mb_per_sec(v)),
            ),
        ),
        ("elapsed", format!("{secs:.1} s")),
        ("ended", ended(s)),
    ]
}

/// How the scan ended, as the document names it, in words, with its
/// `error` when it has one: `done: every planned read was made`.
pub fn ended(s: &SurfaceScan) -> String {
    let what = match s.end {
        ScanEndState::Done => "every planned read was made",
        ScanEndState::TooManyBad => "more blocks were unreadable than the scan allows (max_bad): it stopped there",
        ScanEndState::Stopped => "interrupted, or the run's time bound reached, before the area was read",
        ScanEndState::Error => "the scan could not go on",
    };
    match &s.error {
        Some(e) => format!("{}: {what}: {e}", s.end),
        None => format!("{}: {what}", s.end),
    }
}

/// A time class's name from its bound and the bound of the class before:
/// `< 5 ms`, `5-20 ms`, `>= 500 ms`.
pub fn class_label(before: Option<u64>, below: Option<u64>) -> String {
    match (before, below) {
        (None, Some(b)) => format!("< {b} ms"),
        (Some(a), Some(b)) => format!("{a}-{b} ms"),
        (Some(a), None) => format!(">= {a} ms"),
        (None, None) => "any time".into(),
    }
}

/// The reads per time class, fastest first, then the failed reads:
/// (`< 5 ms`, reads), ..., (`>= 500 ms`, reads), (`failed`, reads).
pub fn classes(s: &SurfaceScan) -> Vec<(String, u64)> {
    let mut before = None;
    let mut out: Vec<(String, u64)> = s
        .classes
        .iter()
        .map(|c| {
            let label = class_label(before, c.below_ms);
            before = c.below_ms;
            (label, c.reads)
        })
        .collect();
    out.push(("failed".into(), s.failed_reads));
    out
}

/// LBAs for a line: `none`, or the first [`MAX_LBAS`] and `and N more`.
pub fn lba_list(lbas: &[u64]) -> String {
    if lbas.is_empty() {
        return "none".into();
    }
    let shown: Vec<String> = lbas.iter().take(MAX_LBAS).map(u64::to_string).collect();
    let mut out = shown.join(", ");
    if lbas.len() > MAX_LBAS {
        out.push_str(&format!(", and {} more", lbas.len() - MAX_LBAS));
    }
    out
}

/// The heading of an LBA list, with their number when there are any:
/// `unreadable LBAs (no read returned them), 3`.
pub fn lba_heading(what: &str, lbas: &[u64]) -> String {
    if lbas.is_empty() {
        what.to_string()
    } else {
        format!("{what}, {}", lbas.len())
    }
}

/// The slowest reads shown ([`SLOWEST`]), slowest first: LBA, length in
/// bytes, time in ms (one decimal).
pub fn slowest_rows(s: &SurfaceScan) -> Vec<[String; 3]> {
    s.slowest
        .iter()
        .take(SLOWEST)
        .map(|r| {
            #[allow(clippy::cast_precision_loss)] // a time for display
            let ms = r.time_ns as f64 / 1e6;
            [r.lba.to_string(), r.bytes.to_string(), format!("{ms:.1}")]
        })
        .collect()
}

/// One line of the zone curve: one zone, or several next to each other.
#[derive(Clone, Debug, PartialEq)]
pub struct ZoneLine {
    /// Its first byte.
    pub start_byte: u64,
    /// The byte after its last.
    pub end_byte: u64,
    /// How many zones it holds.
    pub zones: usize,
    /// Bytes per second: the zone's own figure, or the zones' bytes over
    /// their time together; `None` when nothing was read.
    pub bytes_per_sec: Option<f64>,
}

/// The zones in at most `max` lines, outside (the first byte) first:
/// one a zone, or each line as many zones as it takes to stay within
/// `max` (the last line fewer).
pub fn zone_lines(s: &SurfaceScan, max: usize) -> Vec<ZoneLine> {
    let per = s.zones.len().div_ceil(max.max(1)).max(1);
    s.zones
        .chunks(per)
        .filter_map(|group| {
            let (first, last) = (group.first()?, group.last()?);
            let bytes_per_sec = if let [one] = group {
                one.bytes_per_sec
            } else {
                let bytes: u64 = group.iter().map(|z| z.bytes).sum();
                let ns: u64 = group.iter().map(|z| z.time_ns).sum();
                #[allow(clippy::cast_precision_loss)] // a rate: 53 bits are plenty
                (ns > 0).then(|| bytes as f64 * 1e9 / ns as f64)
            };
            Some(ZoneLine {
                start_byte: first.start_byte,
                end_byte: last.end_byte,
                zones: group.len(),
                bytes_per_sec: bytes_per_sec.filter(|v| v.is_finite() && *v >= 0.0),
            })
        })
        .collect()
}

/// The decimals that tell positions `step` bytes apart in GB (10^9 B):
/// at least two significant digits of the step.
pub fn gb_decimals(step: u64) -> usize {
    let mut d = 0;
    let mut unit = 1_000_000_000_u64; // 10^(9 - d) bytes: the last decimal's worth
    while d < 9 && step < 10 * unit {
        d += 1;
        unit /= 10;
    }
    d
}

/// Bytes as GB (10^9 B) with `decimals`, no unit.
pub fn gb(bytes: u64, decimals: usize) -> String {
    #[allow(clippy::cast_precision_loss)] // a position for display
    let v = bytes as f64 / 1e9;
    format!("{v:.decimals$}")
}

/// The width of the text chart's bars, characters.
const BAR: u32 = 40;

/// The text chart's bar for `frac` (0 to 1) of the widest: `#` per 1/40.
pub fn bar(frac: f64) -> String {
    let want = if frac.is_finite() { frac.clamp(0.0, 1.0) } else { 0.0 } * f64::from(BAR);
    let n = (0..BAR).take_while(|&i| f64::from(i) + 0.5 < want).count();
    "#".repeat(n)
}

/// The zone curve as text rows: position (`0.00-0.13 GB`), rate (`135.2
/// MB/s`, `-` when nothing was read) and a bar as long as the rate against
/// the fastest line's.
pub fn zone_rows(s: &SurfaceScan) -> Vec<Vec<String>> {
    let lines = zone_lines(s, MAX_ZONE_LINES);
    let step = lines
        .iter()
        .map(|l| l.end_byte.saturating_sub(l.start_byte))
        .filter(|&w| w > 0)
        .min()
        .unwrap_or(1);
    let d = gb_decimals(step);
    let top = lines.iter().filter_map(|l| l.bytes_per_sec).fold(0.0_f64, f64::max);
    lines
        .iter()
        .map(|l| {
            vec![
                format!("{}-{} GB", gb(l.start_byte, d), gb(l.end_byte, d)),
                l.bytes_per_sec.map_or_else(
                    || "- (nothing read)".into(),
                    |v| format!("{} MB/s", text::mb_per_sec(v)),
                ),
                l.bytes_per_sec
                    .filter(|_| top > 0.0)
                    .map_or_else(String::new, |v| bar(v / top)),
            ]
        })
        .collect()
}

/// A scan of 64 MiB in 8 zones of 8 MiB whose rate falls from 200 to 95
/// MB/s, three unreadable LBAs (two in one read, one in another), one
/// recovered, a read of 61.5 ms and one of 12 ms among the slowest (seven
/// kept), made by `bench_core::passes::scan::record` as the run makes it: the
/// `show` and `html` tests' scan.
#[cfg(test)]
pub fn test_scan() -> SurfaceScan {
    use bench_core::passes::scan::{record, ScanEnd, ScanOutcome, ScanSpec, SlowRead, Zone, WHOLE};
    use bench_core::vocab::units::Nanos;
    const MIB: u64 = 1 << 20;
    let spec = ScanSpec {
        start: 0,
        end: 64 * MIB,
        chunk: 1 << 20,
        depth: 4,
        coverage_ppm: WHOLE,
        logical_block: 512,
        retries: 2,
        max_bad: 100,
        zones: 8,
        slowest: 7,
        holds_data: None,
    };
    let unreadable = vec![3 * MIB / 512 + 1, 3 * MIB / 512 + 9, 20 * MIB / 512];
    let zones: Vec<Zone> = (0..8)
        .map(|k| {
            let start = k * 8 * MIB;
            let bad = unreadable
                .iter()
                .filter(|&&l| (start..start + 8 * MIB).contains(&(l * 512)))
                .count();
            let bytes = 8 * MIB - 512 * bad as u64;
            // 200 MB/s outside, 15 MB/s less each zone inward.
            let mbps = 200 - 15 * k;
            Zone {
                start,
                end: start + 8 * MIB,
                bytes,
                time: Nanos(bytes * 1000 / mbps),
            }
        })
        .collect();
    let slow = |mib: u64, tenths_ms: u64| SlowRead {
        offset: mib * MIB,
        len: 1 << 20,
        time: Nanos(tenths_ms * 100_000),
    };
    let out = ScanOutcome {
        classes: [60, 1, 0, 1, 0, 0],
        failed_reads: 2,
        reads: 64,
        bytes: zones.iter().map(|z| z.bytes).sum(),
        planned_bytes: 64 * MIB,
        slowest: vec![
            slow(9, 615),
            slow(40, 120),
            slow(1, 49),
            slow(2, 48),
            slow(60, 47),
            slow(61, 46),
            slow(62, 45),
        ],
        elapsed: Nanos(zones.iter().map(|z| z.time.0).sum()),
        zones,
        unreadable,
        recovered: vec![30 * MIB / 512 + 3],
        end: ScanEnd::Done,
    };
    record(&spec, &out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_named_by_their_bounds_and_end_with_the_failed_reads() {
        let s = test_scan();
        let got: Vec<(String, u64)> = classes(&s);
        let want = [
            ("< 5 ms", 60),
            ("5-20 ms", 1),
            ("20-50 ms", 0),
            ("50-150 ms", 1),
            ("150-500 ms", 0),
            (">= 500 ms", 0),
            ("failed", 2),
        ];
        assert_eq!(got.len(), want.len());
        for ((label, reads), (wl, wr)) in got.iter().zip(want) {
            assert_eq!((label.as_str(), *reads), (wl, wr));
        }
    }

    #[test]
    fn lba_lists_stop_at_twenty_and_count_the_rest() {
        assert_eq!(lba_list(&[]), "none");
        assert_eq!(lba_list(&[6145, 6153, 40960]), "6145, 6153, 40960");
        let many: Vec<u64> = (100..125).collect();
        let l = lba_list(&many);
        assert!(
            l.starts_with("100, 101, ") && l.ends_with("118, 119, and 5 more"),
            "{l}"
        );
        let twenty: Vec<u64> = (0..20).collect();
        assert!(lba_list(&twenty).ends_with("18, 19"), "exactly 20: no `more`");
    }

    /// A zone a line up to 20 zones; more are grouped, each group's rate
    /// its bytes over its time; the positions tell the lines apart.
    #[test]
    fn zones_are_grouped_to_at_most_twenty_lines() {
        let mut s = test_scan();
        let lines = zone_lines(&s, MAX_ZONE_LINES);
        assert_eq!(lines.len(), 8);
        assert_eq!(lines[0].bytes_per_sec, s.zones[0].bytes_per_sec, "a zone's own figure");
        let z = s.zones[1].clone();
        s.zones = (0..45)
            .map(|k| bench_core::document::result::ScanZone {
                start_byte: k * 1000,
                end_byte: (k + 1) * 1000,
                bytes: 1000,
                time_ns: if k < 3 { 1000 * (k + 1) } else { z.time_ns },
                bytes_per_sec: Some(1.0),
            })
            .collect();
        let lines = zone_lines(&s, MAX_ZONE_LINES);
        assert_eq!(lines.len(), 15, "45 zones, 3 a line");
        assert_eq!((lines[0].start_byte, lines[0].end_byte, lines[0].zones), (0, 3000, 3));
        // 3000 B in 1 + 2 + 3 µs.
        assert_eq!(lines[0].bytes_per_sec, Some(3000.0 * 1e9 / 6000.0));
        assert_eq!(lines[14].end_byte, 45_000);
        // Nothing read in a group: no rate.
        for z in &mut s.zones[..3] {
            (z.bytes, z.time_ns, z.bytes_per_sec) = (0, 0, None);
        }
        assert_eq!(zone_lines(&s, MAX_ZONE_LINES)[0].bytes_per_sec, None);
        assert_eq!(zone_rows(&s)[0][1], "- (nothing read)");
    }

    #[test]
    fn positions_bars_and_the_end_in_words() {
        for (step, d) in [
            (8 << 20, 4),
            (134_217_728, 2),
            (800_000_000_000, 0),
            (10_000_000_000, 0),
            (9_999_999_999, 1),
            (1, 9),
        ] {
            assert_eq!(gb_decimals(step), d, "{step}");
        }
        assert_eq!(gb(8 << 20, 4), "0.0084");
        assert_eq!(bar(1.0).len(), 40);
        assert_eq!(bar(0.5).len(), 20);
        assert_eq!(bar(0.0), "");
        assert_eq!(bar(f64::NAN), "");
        let mut s = test_scan();
        assert_eq!(ended(&s), "done: every planned read was made");
        (s.end, s.error) = (ScanEndState::Error, Some("cannot open /dev/sdb: errno 6".into()));
        assert_eq!(
            ended(&s),
            "error: the scan could not go on: cannot open /dev/sdb: errno 6"
        );
    }

    #[test]
    fn facts_name_their_units() {
        let s = test_scan();
        let f = facts(&s);
        let get = |k: &str| f.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str()).expect(k);
        assert_eq!(get("area"), "bytes 0 to 67108864 of the disk, 67108864 B (64.0 MiB)");
        assert_eq!(
            get("reads"),
            "1048576 B each, up to 4 in flight, every block; LBAs in logical blocks of 512 B"
        );
        assert_eq!(
            get("read"),
            "67107328 B (64.0 MiB) of 67108864 B (64.0 MiB) planned (100.0%); 64 reads, 2 failed"
        );
        assert!(get("rate").ends_with(" MB/s"), "{}", get("rate"));
        assert!(get("elapsed").ends_with(" s"), "{}", get("elapsed"));
        let mut part = s.clone();
        part.coverage_ppm = 12_345;
        assert!(
            facts(&part)[1].1.contains("1.2345% of the area's reads"),
            "{:?}",
            facts(&part)
        );
    }
}
