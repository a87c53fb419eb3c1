//! The text summary, like the seed posts' tables: one row per target,
//! columns cached, buffered, seqrd, seqwr, rndrd, rndwr; the unit in the
//! header (MB/s = 10^6 bytes per second). When the document has analysis
//! lines (arrays, layers, all-at-once), a second section lists them with
//! their units named. Text from the document (paths, test names, rules) is
//! printed through [`console::safe`]: the tables go to the console.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt::Write as _;

use crate::document::result::{Analysis, HealthLine, ResultDoc, Status, TestResult};
use crate::spec::Workload;
use crate::verdict::analysis::Metric;
use crate::vocab::console;
use crate::vocab::units::MB;

/// The first line of the table: what the figures are and what the markers mean.
pub const UNIT_LINE: &str =
    "throughput in MB/s (10^6 B/s); - = not run, skip = skipped, err = failed, intr = interrupted, tmo = timed out";

/// The figure columns: header, workload, and whether the write rate is shown.
pub const COLUMNS: [(&str, Workload, bool); 6] = [
    ("cached", Workload::CachedRead, false),
    ("buffered", Workload::BufferedRead, false),
    ("seqrd", Workload::SeqRead, false),
    ("seqwr", Workload::SeqWrite, true),
    ("rndrd", Workload::RandRead, false),
    ("rndwr", Workload::RandWrite, true),
];

/// The first line of the health analysis section.
pub const HEALTH_LINE: &str = "health: what the disks' SMART/health readings and per-interval samples say";

/// The first line of the analysis section.
pub const ANALYSIS_LINE: &str =
    "analysis: measured vs expected from the devices beneath; MB/s = 10^6 B/s, IOPS = requests/s";

/// The heading of the members under the analysis lines.
pub const MEMBERS_LINE: &str =
    "members: each device's share of the bytes moved beneath the array or layer, and its time busy (the kernel's counters)";

/// Write the summary table of a result document to `out`, a line a
/// `write_all`, then, when the document has analysis lines, a blank line and
/// the analysis section (see [`render_analysis_to`]), the health lines, and
/// last the acceptance verdict block (`crate::verdict::acceptance::verdict_block`);
/// the first error of `out` stops it.
///
/// One row per target in `doc.targets` order. Each cell is the read (or,
/// for seqwr and rndwr, write) throughput of the first test of that workload
/// on that target whose status is ok, in MB/s with one decimal; `-` if there
/// is no such test or it has no figure, `skip` or `err` if the first test of
/// that workload on that target was skipped or failed and none succeeded.
/// The target column is left-aligned, the figures right-aligned; columns are
/// as wide as their contents and separated by two spaces; no trailing spaces.
pub fn render_to<W: embedded_io::Write + ?Sized>(out: &mut W, doc: &ResultDoc) -> Result<(), W::Error> {
    write_lines(out, &table_lines(doc))
}

/// [`render_to`] into a `String`.
pub fn render(doc: &ResultDoc) -> String {
    table_lines(doc).concat()
}

/// Write the analysis section to `out` as [`render_to`] writes the table:
/// [`ANALYSIS_LINE`], a header, then one row per line: target, test, figure
/// (`read`/`write`), measured and expected with their unit, efficiency in
/// percent (one decimal), the limiting device (`-` if none), and the rule.
/// Aligned as the main table.
pub fn render_analysis_to<W: embedded_io::Write + ?Sized>(out: &mut W, lines: &[Analysis]) -> Result<(), W::Error> {
    write_lines(out, &analysis_lines(lines))
}

/// [`render_analysis_to`] into a `String`.
pub fn render_analysis(lines: &[Analysis]) -> String {
    analysis_lines(lines).concat()
}

/// Each line to `out` in one `write_all`. The only code generic over the
/// writer, so each writer type adds little to PID 1.
fn write_lines<W: embedded_io::Write + ?Sized>(out: &mut W, lines: &[String]) -> Result<(), W::Error> {
    lines.iter().try_for_each(|l| out.write_all(l.as_bytes()))
}

/// The lines (each ending in `\n`) of [`render_to`].
fn table_lines(doc: &ResultDoc) -> Vec<String> {
    let mut rows: Vec<Vec<String>> = Vec::with_capacity(doc.targets.len() + 1);
    let mut header = Vec::with_capacity(COLUMNS.len() + 1);
    header.push(String::from("target"));
    header.extend(COLUMNS.iter().map(|(name, _, _)| String::from(*name)));
    rows.push(header);
    // Each target's tests once, not every test per target and column.
    let by_target = doc.tests_by_target();
    for target in &doc.targets {
        let mut row = Vec::with_capacity(COLUMNS.len() + 1);
        row.push(console::safe(&target.path).into_owned());
        let tests = ResultDoc::tests_of(&by_target, &target.path);
        for &(_, workload, write) in &COLUMNS {
            row.push(cell(tests.iter().copied().filter(|t| t.workload == workload), write));
        }
        rows.push(row);
    }
    let mut out = aligned(UNIT_LINE, &rows, |_| true);
    if !doc.analysis.is_empty() {
        out.push(String::from("\n"));
        out.extend(analysis_lines(&doc.analysis));
    }
    if !doc.health_analysis.is_empty() {
        out.push(String::from("\n"));
        out.extend(health_lines(&doc.health_analysis));
    }
    // Last, so that a serial console's screen ends with it.
    if let Some(a) = &doc.acceptance {
        out.push(String::from("\n"));
        out.extend(crate::verdict::acceptance::verdict_block(a));
    }
    out
}

/// The health analysis under the table: [`HEALTH_LINE`], then each line's
/// kind and words.
fn health_lines(lines: &[HealthLine]) -> Vec<String> {
    let mut out = Vec::with_capacity(lines.len() + 1);
    out.push(format!("{HEALTH_LINE}\n"));
    for l in lines {
        out.push(format!("  {}: {}\n", l.kind, console::safe(&l.message)));
    }
    out
}

/// The lines (each ending in `\n`) of [`render_analysis_to`].
fn analysis_lines(lines: &[Analysis]) -> Vec<String> {
    let mut rows: Vec<[String; 8]> = Vec::with_capacity(lines.len() + 1);
    rows.push(
        [
            "target",
            "test",
            "figure",
            "measured",
            "expected",
            "efficiency",
            "limited by",
            "rule",
        ]
        .map(String::from),
    );
    for a in lines {
        let m = a.metric;
        let dir = if m.is_read() { "read" } else { "write" };
        let show: fn(f64) -> String = if m.is_iops() {
            |v| Metric::ReadIops.show(v)
        } else {
            |v| Metric::ReadBps.show(v)
        };
        let text = |s: &str| console::safe(s).into_owned();
        rows.push([
            text(&a.target),
            text(&a.test),
            text(dir),
            show(a.measured),
            show(a.expected),
            format!("{:.1}%", a.efficiency * 100.0),
            a.limited_by.as_deref().map_or_else(|| "-".into(), text),
            text(&a.rule),
        ]);
    }
    let mut out = aligned(ANALYSIS_LINE, &rows, |i| (3..=5).contains(&i));
    out.extend(member_lines(lines));
    out
}

/// Width of a member's share bar, characters.
const BAR: usize = 20;

/// A share (0 to 1, clamped) as a bar `width` characters wide between
/// `|`s, `#` for the share, rounded to the nearest character.
pub fn share_bar(share: f64, width: usize) -> String {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )] // 0..=width
    let n = ((share.clamp(0.0, 1.0) * width as f64 + 0.5) as usize).min(width);
    format!("|{}{}|", "#".repeat(n), " ".repeat(width - n))
}

/// Under the analysis table, for each line with accounting, each member's
/// share of the bytes as a bar, and its time busy.
fn member_lines(lines: &[Analysis]) -> Vec<String> {
    let with: Vec<&Analysis> = lines.iter().filter(|a| !a.members.is_empty()).collect();
    if with.is_empty() {
        return Vec::new();
    }
    let text = |s: &str| console::safe(s).into_owned();
    let mut rows: Vec<[String; 5]> = Vec::new();
    for a in with {
        for (i, m) in a.members.iter().enumerate() {
            let head = if i == 0 {
                format!("{} {}", text(&a.target), text(&a.test))
            } else {
                String::new()
            };
            rows.push([
                head,
                text(&m.path),
                share_bar(m.share, BAR),
                format!("{:.0}% of bytes", m.share * 100.0),
                format!("busy {:.0}%", m.utilization * 100.0),
            ]);
        }
    }
    let mut out = vec![String::from("\n")];
    out.extend(aligned(MEMBERS_LINE, &rows, |i| i >= 3));
    out
}

/// `title`, then `rows` as [`aligned_lines`] sets them: the first column
/// left-aligned, the others right-aligned where `right(column)`, else
/// left-aligned.
fn aligned<R: AsRef<[String]>>(title: &str, rows: &[R], right: fn(usize) -> bool) -> Vec<String> {
    let mut out = Vec::with_capacity(rows.len() + 1);
    out.push(format!("{title}\n"));
    out.extend(aligned_lines(rows, |i| {
        if i > 0 && right(i) {
            Align::Right
        } else {
            Align::Left
        }
    }));
    out
}

/// How a column of [`aligned_lines`] is aligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text.
    Left,
    /// Figures.
    Right,
}

/// `rows` in columns as wide as their widest cell (in characters),
/// separated by two spaces, without trailing spaces, each line ending in
/// `\n`; column `i` aligned as `align(i)`. A row shorter than the others
/// has empty cells at its end. The one aligned-table layout of bootbench:
/// this module's console table and bootbench-report's text tables.
pub fn aligned_lines<R: AsRef<[String]>>(rows: &[R], align: impl Fn(usize) -> Align) -> Vec<String> {
    let columns = rows.iter().map(|r| r.as_ref().len()).max().unwrap_or(0);
    let mut widths = vec![0_usize; columns];
    for row in rows {
        for (w, c) in widths.iter_mut().zip(row.as_ref()) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let mut line = String::new();
        for (i, (c, &w)) in row.as_ref().iter().zip(&widths).enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let _ = match align(i) {
                Align::Left => write!(line, "{c:<w$}"),
                Align::Right => write!(line, "{c:>w$}"),
            };
        }
        line.truncate(line.trim_end().len());
        line.push('\n');
        out.push(line);
    }
    out
}

/// The text of one cell from the tests of one workload on one target.
fn cell<'a>(mut tests: impl Iterator<Item = &'a TestResult> + Clone, write: bool) -> String {
    if let Some(ok) = tests.clone().find(|t| t.status == Status::Ok) {
        let rate = if write {
            ok.summary.write_bytes_per_sec
        } else {
            ok.summary.read_bytes_per_sec
        };
        return rate.map_or_else(|| String::from("-"), mb_per_sec);
    }
    String::from(match tests.next().map(|t| &t.status) {
        Some(Status::Skipped { .. }) => "skip",
        Some(Status::Error { .. }) => "err",
        Some(Status::Interrupted { .. }) => "intr",
        Some(Status::Timeout { .. }) => "tmo",
        Some(Status::Ok) | None => "-",
    })
}

/// Bytes per second as MB/s (10^6 B/s), one decimal, no unit: the
/// figures of this module's table and of bootbench-report's.
#[allow(clippy::cast_precision_loss)] // 10^6 is exact in f64
pub fn mb_per_sec(bytes_per_sec: f64) -> String {
    format!("{:.1}", bytes_per_sec / MB as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::frame::tests::Recorder;
    use crate::document::result::{AnalysisKind, HealthKind, TargetKind};
    use crate::document::result::{Summary, TargetInfo};
    use crate::io::Op;
    use crate::spec::Params;
    use crate::verdict::analysis::testutil::doc;

    fn target(path: &str) -> TargetInfo {
        TargetInfo {
            path: path.into(),
            kind: TargetKind::Block,
            size_bytes: 1 << 30,
            logical_block_size: 512,
            physical_block_size: 4096,
            ..TargetInfo::default()
        }
    }

    fn test(target: &str, workload: Workload, status: Status, read: Option<f64>, write: Option<f64>) -> TestResult {
        TestResult {
            name: workload.name().into(),
            workload,
            target: target.into(),
            params: Params::defaults(),
            status,
            steps: Vec::new(),
            summary: Summary {
                read_bytes_per_sec: read,
                write_bytes_per_sec: write,
                ..Summary::default()
            },
            zones: None,
            placement: None,
        }
    }

    fn skipped() -> Status {
        Status::Skipped {
            reason: "not permitted".into(),
        }
    }

    fn failed() -> Status {
        Status::Error {
            errno: 5,
            op: Op::Read,
            offset: 4096,
            message: "EIO".into(),
        }
    }

    #[test]
    fn renders_figures_markers_and_alignment() {
        let a = "/dev/sda";
        let b = "/dev/nvme0n1";
        let d = doc(
            vec![target(a), target(b)],
            vec![
                test(a, Workload::CachedRead, Status::Ok, Some(12_345_600_000.0), None),
                test(a, Workload::BufferedRead, Status::Ok, Some(150_249_999.0), None),
                // The first ok test of the workload counts, skipping a skipped one.
                test(a, Workload::SeqRead, skipped(), None, None),
                test(a, Workload::SeqRead, Status::Ok, Some(160_000_000.0), None),
                test(a, Workload::SeqRead, Status::Ok, Some(999_000_000.0), None),
                // Writes show the write rate, not the read rate.
                test(a, Workload::SeqWrite, Status::Ok, Some(1.0), Some(155_350_000.0)),
                // Ok but no figure.
                test(a, Workload::RandRead, Status::Ok, None, None),
                test(a, Workload::RandWrite, failed(), None, None),
                test(b, Workload::RandWrite, skipped(), None, None),
                test(b, Workload::RandWrite, failed(), None, None),
                // Another workload, and a target not in the list: ignored.
                test(b, Workload::RandRw, Status::Ok, Some(5e6), Some(5e6)),
                test(b, Workload::DirectRead, Status::Ok, Some(5e6), None),
                test("/dev/sdz", Workload::CachedRead, Status::Ok, Some(7e6), None),
                test(b, Workload::RandRead, Status::Ok, Some(812_340.0), None),
            ],
        );
        let want = "\
throughput in MB/s (10^6 B/s); - = not run, skip = skipped, err = failed, intr = interrupted, tmo = timed out
target         cached  buffered  seqrd  seqwr  rndrd  rndwr
/dev/sda      12345.6     150.2  160.0  155.3      -    err
/dev/nvme0n1        -         -      -      -    0.8   skip
";
        assert_eq!(render(&d), want);
    }

    #[test]
    fn analysis_lines_follow_the_table_with_units() {
        let line = |target: &str, test: &str, metric: &str, measured: f64, expected: f64, by: Option<&str>| Analysis {
            kind: AnalysisKind::Array,
            target: target.into(),
            test: test.into(),
            workload: Workload::SeqRead,
            metric: Metric::from_name(metric).expect("a summary field"),
            measured,
            expected,
            efficiency: measured / expected,
            rule: "raid0: N x slowest member (2 x 10.0 MB/s)".into(),
            limited_by: by.map(String::from),
            from: Vec::new(),
            members: Vec::new(),
        };
        let mut d = doc(vec![target("/dev/md0")], Vec::new());
        d.analysis = vec![
            line(
                "/dev/md0",
                "seq_read_1m",
                "read_bytes_per_sec",
                19_500_000.0,
                20_000_000.0,
                Some("/dev/vdc"),
            ),
            line("/dev/dm-0", "rand_rw", "write_iops", 90.4, 100.0, None),
        ];
        let want = "\
throughput in MB/s (10^6 B/s); - = not run, skip = skipped, err = failed, intr = interrupted, tmo = timed out
target    cached  buffered  seqrd  seqwr  rndrd  rndwr
/dev/md0       -         -      -      -      -      -

analysis: measured vs expected from the devices beneath; MB/s = 10^6 B/s, IOPS = requests/s
target     test         figure   measured   expected  efficiency  limited by  rule
/dev/md0   seq_read_1m  read    19.5 MB/s  20.0 MB/s       97.5%  /dev/vdc    raid0: N x slowest member (2 x 10.0 MB/s)
/dev/dm-0  rand_rw      write     90 IOPS   100 IOPS       90.4%  -           raid0: N x slowest member (2 x 10.0 MB/s)
";
        assert_eq!(render(&d), want);
        // Streamed: the same bytes, one write a line.
        let mut r = Recorder::new(usize::MAX);
        assert_eq!(render_to(&mut r, &d), Ok(()));
        assert_eq!(r.bytes, want.as_bytes());
        assert_eq!(r.writes, want.split_inclusive('\n').map(str::len).collect::<Vec<_>>());
        let analysis = &want[want.find("analysis:").unwrap()..];
        assert_eq!(render_analysis(&d.analysis), analysis);
    }

    /// A line with accounting gets its members under the table: a bar of
    /// each one's share of the bytes, and its time busy.
    #[test]
    fn members_follow_the_analysis_lines() {
        use crate::document::result::MemberShare;
        let m = |path: &str, share: f64, utilization: f64| MemberShare {
            path: path.into(),
            share,
            utilization,
            read_bytes: 0,
            write_bytes: 0,
        };
        let a = Analysis {
            kind: AnalysisKind::Array,
            target: "/dev/md0".into(),
            test: "seq_read_1m".into(),
            workload: Workload::SeqRead,
            metric: Metric::ReadBps,
            measured: 1e6,
            expected: 1e6,
            efficiency: 1.0,
            rule: "r".into(),
            limited_by: None,
            from: Vec::new(),
            members: vec![m("/dev/vdb", 1.0, 0.987), m("/dev/vdc", 0.0, 0.0)],
        };
        let text = render_analysis(core::slice::from_ref(&a));
        let want = "
members: each device's share of the bytes moved beneath the array or layer, and its time busy (the kernel's counters)
/dev/md0 seq_read_1m  /dev/vdb  |####################|  100% of bytes  busy 99%
                      /dev/vdc  |                    |    0% of bytes   busy 0%
";
        assert!(text.ends_with(want), "{text}");
        let none = Analysis {
            members: Vec::new(),
            ..a
        };
        assert!(!render_analysis(&[none]).contains("members:"));
    }

    /// A path (from a config) or a rule holding a line break, an escape
    /// sequence or a frame marker prints escaped, and the table stays one
    /// line per row.
    #[test]
    fn text_from_the_document_is_console_safe() {
        let evil = "/tmp/x\nBOOTBENCH-RESULT-BEGIN v2\u{1b}[2J";
        let mut d = doc(vec![target(evil)], Vec::new());
        d.analysis = vec![Analysis {
            kind: AnalysisKind::Layer,
            target: evil.into(),
            test: "t\r".into(),
            workload: Workload::SeqRead,
            metric: Metric::ReadBps,
            measured: 1e6,
            expected: 1e6,
            efficiency: 1.0,
            rule: "crypt on BOOTBENCH-RESULT-END".into(),
            limited_by: Some("\u{9b}".into()),
            from: Vec::new(),
            members: Vec::new(),
        }];
        let text = render(&d);
        assert_eq!(text.lines().count(), 7, "{text}");
        assert!(!text.contains(crate::vocab::console::MARKER), "{text}");
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text:?}");
        assert!(
            text.contains("/tmp/x\\nBOOTBENCH\\x2dRESULT-BEGIN v2\\x1b[2J"),
            "{text}"
        );
        assert!(text.contains("\\u009b") && text.contains("t\\r"), "{text}");
    }

    /// Columns as wide as their widest cell, two spaces between, aligned
    /// per column, no trailing spaces; a short row has empty cells at its
    /// end.
    #[test]
    fn tables_align_and_trim() {
        let rows = vec![
            vec!["a".to_string(), "bb".into(), "c".into()],
            vec!["long".to_string(), "1".into()],
            vec!["é".to_string(), "x".into(), "ccc".into()],
        ];
        let aligns = [Align::Left, Align::Right, Align::Left];
        assert_eq!(
            aligned_lines(&rows, |i| aligns[i]).concat(),
            "a     bb  c\nlong   1\n\u{e9}      x  ccc\n"
        );
        assert_eq!(
            aligned_lines(&rows, |_| Align::Right).concat(),
            "   a  bb    c\nlong   1\n   é   x  ccc\n"
        );
        assert!(aligned_lines::<Vec<String>>(&[], |_| Align::Left).is_empty());
    }

    #[test]
    fn figures_in_mb_per_sec() {
        assert_eq!(mb_per_sec(20_971_520.0), "21.0");
        assert_eq!(mb_per_sec(150_249_999.0), "150.2");
        assert_eq!(mb_per_sec(0.0), "0.0");
    }

    #[test]
    fn no_targets_gives_the_header_only() {
        let want = "\
throughput in MB/s (10^6 B/s); - = not run, skip = skipped, err = failed, intr = interrupted, tmo = timed out
target  cached  buffered  seqrd  seqwr  rndrd  rndwr
";
        assert_eq!(render(&doc(Vec::new(), Vec::new())), want);
    }

    #[test]
    fn wide_figures_widen_their_column_only() {
        let t = "sim:0";
        let d = doc(
            vec![target(t)],
            vec![test(t, Workload::SeqWrite, Status::Ok, None, Some(123_456_789_000.0))],
        );
        let want = "\
throughput in MB/s (10^6 B/s); - = not run, skip = skipped, err = failed, intr = interrupted, tmo = timed out
target  cached  buffered  seqrd     seqwr  rndrd  rndwr
sim:0        -         -      -  123456.8      -      -
";
        assert_eq!(render(&d), want);
    }
    /// The health lines come under the table, one each, console-safe.
    #[test]
    fn health_lines_under_the_table() {
        let mut d = doc(vec![target("/dev/sda")], Vec::new());
        d.health_analysis = vec![HealthLine {
            kind: HealthKind::CounterGained,
            target: "/dev/sda".into(),
            test: None,
            what: "reallocated_sectors".into(),
            before: Some(0.0),
            after: Some(8.0),
            limit: None,
            message: "/dev/sda: reallocated_sectors rose from 0 to 8 during the run (+8)\u{1b}".into(),
        }];
        let text = render(&d);
        let tail: Vec<&str> = text.lines().skip(3).collect();
        assert_eq!(
            tail,
            [
                "",
                HEALTH_LINE,
                "  counter_gained: /dev/sda: reallocated_sectors rose from 0 to 8 during the run (+8)\\x1b"
            ],
            "{text}"
        );
    }
}
