//! `csv`: one row per target and test (and per disk of each all-at-once
//! run), a header row first; RFC 4180 (fields with a comma, a quote, CR or
//! LF are quoted, quotes doubled, lines end in CRLF). Numbers are in base
//! units: bytes, bytes per second, per second, nanoseconds, as the document
//! holds them (shortest decimal that reads back the same); an absent figure
//! is an empty field. Lists (seek profile, per-step figures) are
//! `label=value` pairs separated by spaces in one field.
//!
//! A text field (a name, a model, a reason: [`Text`]) that starts with `=`,
//! `+`, `-`, `@`, a tab or a carriage return is written with a `'` before
//! it, so that a spreadsheet opening the file shows it as text and does
//! not run it as a formula (CSV or formula injection; the characters are
//! OWASP's list). Figures are numbers, never changed: a negative figure
//! stays a negative number.

use std::borrow::Cow;

use bench_core::document::result::{DirStats, Figure, ResultDoc, Status, TargetInfo, TestResult};
use serde::{Serialize, Serializer};

use crate::figures::metric::{main_step, percentile};
use crate::read::Loaded;

/// The characters that make a spreadsheet take a cell for a formula when
/// they start it (OWASP, CSV injection).
const FORMULA_START: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// `cell`, a text field, as no spreadsheet runs it: with a `'` before it if
/// it starts with one of [`FORMULA_START`].
pub fn defused(cell: &str) -> Cow<'_, str> {
    if cell.starts_with(FORMULA_START) {
        Cow::Owned(format!("'{cell}"))
    } else {
        Cow::Borrowed(cell)
    }
}

/// A text field: written through [`defused`]. Every field of [`Row`] that
/// is not a figure is one.
#[derive(Debug, Default)]
pub struct Text<'a>(pub Cow<'a, str>);

impl<'a> From<&'a str> for Text<'a> {
    fn from(s: &'a str) -> Self {
        Text(Cow::Borrowed(s))
    }
}

impl From<String> for Text<'_> {
    fn from(s: String) -> Self {
        Text(Cow::Owned(s))
    }
}

impl Serialize for Text<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&defused(&self.0))
    }
}

/// One row: a test on a target, alone or in an all-at-once run. The header
/// row is these field names, in this order, so the two cannot drift apart.
/// An absent value (`None`) is an empty field; text is [`Text`], figures
/// are numbers.
#[derive(Debug, Default, Serialize)]
pub struct Row<'a> {
    /// The document's file name, as given.
    pub file: Text<'a>,
    /// `alone`, or `all_at_once` for a disk of an all-at-once run.
    pub run: Text<'a>,
    /// The target's path.
    pub target: Text<'a>,
    pub serial: Option<Text<'a>>,
    pub model: Option<Text<'a>>,
    pub firmware: Option<Text<'a>>,
    /// The target's kind (`disk`, `md`, ...).
    pub target_kind: Option<Text<'a>>,
    pub size_bytes: Option<u64>,
    /// The test's name.
    pub test: Text<'a>,
    pub workload: Text<'a>,
    /// The status's state (`ok`, `skipped`, `error`, ...).
    pub status: Text<'a>,
    /// The reason or message, without the state the status column gives.
    pub status_detail: Text<'a>,
    pub errno: Option<i32>,
    pub bs_bytes: u64,
    pub iodepth: u32,
    pub jobs: u32,
    /// The main step's run time.
    pub runtime_ns: Option<u64>,
    #[serde(serialize_with = "shortest")]
    pub read_bytes_per_sec: Option<f64>,
    #[serde(serialize_with = "shortest")]
    pub write_bytes_per_sec: Option<f64>,
    #[serde(serialize_with = "shortest")]
    pub read_iops: Option<f64>,
    #[serde(serialize_with = "shortest")]
    pub write_iops: Option<f64>,
    #[serde(serialize_with = "shortest")]
    pub lat_mean_ns: Option<f64>,
    #[serde(serialize_with = "shortest")]
    pub command_overhead_ns: Option<f64>,
    pub read_bytes: Option<u64>,
    pub read_ios: Option<u64>,
    pub read_lat_min_ns: Option<u64>,
    pub read_lat_p50_ns: Option<u64>,
    pub read_lat_p99_ns: Option<u64>,
    pub read_lat_p99_9_ns: Option<u64>,
    pub read_lat_max_ns: Option<u64>,
    pub write_bytes: Option<u64>,
    pub write_ios: Option<u64>,
    pub write_lat_p50_ns: Option<u64>,
    pub write_lat_p99_ns: Option<u64>,
    /// The seek profile as `label=value` pairs separated by spaces.
    pub seek_ns: Text<'a>,
    /// The per-step figures as `label=value` pairs separated by spaces.
    pub per_step: Text<'a>,
}

/// A figure as the shortest decimal that reads back the same (Rust's
/// `Display`: `20971520`, `0.5`, `1e300` written out in full), as the
/// document's JSON numbers read; the csv crate's own `f64` (ryu) would write
/// `20971520.0` and `1e300`.
fn shortest<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => s.collect_str(x),
        None => s.serialize_none(),
    }
}

/// RFC 4180 with CRLF line ends; fields are quoted only when they hold a
/// comma, a quote, CR or LF (the csv crate's `QuoteStyle::Necessary`).
fn writer() -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new()
        .has_headers(false)
        .terminator(csv::Terminator::CRLF)
        .from_writer(Vec::new())
}

/// The header row's fields: [`Row`]'s field names, as the csv crate names
/// them when it serializes a row with headers.
pub fn header() -> Vec<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.serialize(Row::default()).expect("a row serializes to memory");
    let bytes = w.into_inner().expect("a Vec takes every byte");
    let mut r = csv::Reader::from_reader(bytes.as_slice());
    r.headers()
        .expect("the csv crate reads back what it wrote")
        .iter()
        .map(String::from)
        .collect()
}

/// The `csv` command's export: [`render`] of its documents on stdout.
#[derive(Debug)]
pub struct Rows(super::Whole);

impl Rows {
    /// The rows to standard output; nothing is printed before it finishes.
    pub fn to_stdout() -> Rows {
        Rows(super::Whole::stdout())
    }
}

impl super::Export for Rows {
    fn add(&mut self, doc: Loaded) -> Result<(), String> {
        self.0.add(doc)
    }

    fn finish(self: Box<Self>) -> Result<Vec<std::path::PathBuf>, String> {
        self.0.finish(render)
    }
}

/// The CSV of every document: the header row, always (the csv crate writes
/// the header only with a first row: BurntSushi/rust-csv#161), then the rows.
pub fn render(docs: &[Loaded]) -> String {
    let bytes = write_rows(docs).expect("CSV is written to memory");
    String::from_utf8(bytes).expect("every field is a Rust string")
}

fn write_rows(docs: &[Loaded]) -> csv::Result<Vec<u8>> {
    let mut w = writer();
    w.write_record(header())?;
    for l in docs {
        let doc = &l.doc;
        for t in &doc.tests {
            w.serialize(row(&l.file, "alone", doc, t))?;
        }
        for a in &doc.all_at_once {
            for t in &a.results {
                w.serialize(row(&l.file, "all_at_once", doc, t))?;
            }
        }
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

fn row<'a>(file: &'a str, run: &'a str, doc: &'a ResultDoc, t: &'a TestResult) -> Row<'a> {
    let target: Option<&TargetInfo> = doc.targets.iter().find(|g| g.path == t.target);
    let s = &t.summary;
    let step = main_step(t);
    let read: Option<&DirStats> = step.and_then(|x| x.read.as_ref());
    let write: Option<&DirStats> = step.and_then(|x| x.write.as_ref());
    let detail = if let Status::Error {
        op, offset, message, ..
    } = &t.status
    {
        format!("{message} ({} at offset {offset})", crate::figures::text::op_name(*op))
    } else {
        let text = crate::figures::text::status_text(&t.status);
        text.split_once(": ").map(|(_, m)| m.to_owned()).unwrap_or_default()
    };
    let pairs = |v: &[Figure]| {
        v.iter()
            .map(|x| format!("{}={}", x.label, x.value))
            .collect::<Vec<_>>()
            .join(" ")
    };
    Row {
        file: file.into(),
        run: run.into(),
        target: t.target.as_str().into(),
        serial: target.and_then(|g| g.serial.as_deref()).map(Text::from),
        model: target.and_then(|g| g.model.as_deref()).map(Text::from),
        firmware: target.and_then(|g| g.firmware.as_deref()).map(Text::from),
        target_kind: target.map(|g| g.kind.name().into()),
        size_bytes: target.map(|g| g.size_bytes),
        test: t.name.as_str().into(),
        workload: t.workload.name().into(),
        status: crate::figures::text::state(&t.status).into(),
        status_detail: detail.into(),
        errno: crate::figures::text::errno(&t.status),
        bs_bytes: t.params.bs.0,
        iodepth: t.params.iodepth,
        jobs: t.params.jobs,
        runtime_ns: step.map(|x| x.runtime_ns),
        read_bytes_per_sec: s.read_bytes_per_sec,
        write_bytes_per_sec: s.write_bytes_per_sec,
        read_iops: s.read_iops,
        write_iops: s.write_iops,
        lat_mean_ns: s.lat_mean_ns,
        command_overhead_ns: s.command_overhead_ns,
        read_bytes: read.map(|d| d.bytes),
        read_ios: read.map(|d| d.ios),
        read_lat_min_ns: read.map(|d| d.lat_ns.min),
        read_lat_p50_ns: read.and_then(|d| percentile(d, 50.0)),
        read_lat_p99_ns: read.and_then(|d| percentile(d, 99.0)),
        read_lat_p99_9_ns: read.and_then(|d| percentile(d, 99.9)),
        read_lat_max_ns: read.map(|d| d.lat_ns.max),
        write_bytes: write.map(|d| d.bytes),
        write_ios: write.map(|d| d.ios),
        write_lat_p50_ns: write.and_then(|d| percentile(d, 50.0)),
        write_lat_p99_ns: write.and_then(|d| percentile(d, 99.0)),
        seek_ns: pairs(&s.seek_ns).into(),
        per_step: pairs(&s.per_step).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc4180_quoting() {
        for (raw, want) in [
            ("plain", "plain"),
            ("", ""),
            ("a,b", "\"a,b\""),
            ("say \"hi\"", "\"say \"\"hi\"\"\""),
            ("two\nlines", "\"two\nlines\""),
            ("cr\r", "\"cr\r\""),
            ("semi;colon", "semi;colon"),
            ("#hash 'tick' \ttab", "#hash 'tick' \ttab"),
        ] {
            let mut w = writer();
            w.write_record([raw, "x"]).unwrap();
            let line = String::from_utf8(w.into_inner().unwrap()).unwrap();
            assert_eq!(line, format!("{want},x\r\n"), "{raw:?}");
        }
    }

    #[test]
    fn figures_are_the_shortest_decimal_and_absent_ones_empty() {
        let row = Row {
            file: "a,b.json".into(),
            read_bytes_per_sec: Some(20_971_520.0),
            write_bytes_per_sec: Some(0.5),
            read_iops: Some(1e300),
            lat_mean_ns: Some(5e-324),
            read_bytes: Some(7),
            ..Row::default()
        };
        let mut w = writer();
        w.serialize(&row).unwrap();
        let line = String::from_utf8(w.into_inner().unwrap()).unwrap();
        let fields: Vec<&str> = line.trim_end_matches("\r\n").split(',').collect();
        let header = header();
        assert_eq!(
            fields.len(),
            header.len() + 1,
            "the quoted file name holds a comma: {line}"
        );
        let col = |name: &str| fields[header.iter().position(|h| h == name).unwrap() + 1];
        assert_eq!(col("read_bytes_per_sec"), "20971520");
        assert_eq!(col("write_bytes_per_sec"), "0.5");
        assert_eq!(col("read_iops"), format!("1{}", "0".repeat(300)));
        assert_eq!(col("lat_mean_ns"), 5e-324_f64.to_string());
        assert_eq!(col("read_bytes"), "7");
        assert_eq!(col("write_iops"), "", "absent");
        assert_eq!(col("serial"), "", "absent");
    }

    /// OWASP's formula starters get a `'` in text fields; anything else,
    /// and every figure, negative ones too, is written as it is.
    #[test]
    fn text_fields_never_start_a_formula_figures_stay_numbers() {
        for (raw, want) in [
            ("=1+1", "'=1+1"),
            ("+1", "'+1"),
            ("-1", "'-1"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "\"'\rx\""),
            ("=a,b", "\"'=a,b\""),
            ("", ""),
            ("a=b", "a=b"),
            ("'=x", "'=x"),
            (" =x", " =x"),
            ("/dev/sda", "/dev/sda"),
        ] {
            let row = Row {
                model: Some(raw.into()),
                read_bytes_per_sec: Some(-1.5),
                errno: Some(-5),
                lat_mean_ns: Some(-0.0),
                ..Row::default()
            };
            let mut w = writer();
            w.serialize(&row).unwrap();
            let line = String::from_utf8(w.into_inner().unwrap()).unwrap();
            let header = header();
            let at = |name: &str| header.iter().position(|h| h == name).unwrap();
            let fields: Vec<String> = csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(line.as_bytes())
                .records()
                .next()
                .unwrap()
                .unwrap()
                .iter()
                .map(String::from)
                .collect();
            assert!(line.contains(&format!(",{want},")), "{raw:?}: {line:?}");
            assert_eq!(fields[at("model")], defused(raw), "{raw:?}");
            assert_eq!(fields[at("read_bytes_per_sec")], "-1.5", "{raw:?}");
            assert_eq!(fields[at("errno")], "-5", "{raw:?}");
            assert_eq!(fields[at("lat_mean_ns")], "-0", "{raw:?}");
        }
    }

    #[test]
    fn the_header_is_the_row_s_fields_and_comes_without_rows_too() {
        let header = header();
        assert_eq!(header.len(), 36);
        assert_eq!(header[..3], ["file", "run", "target"]);
        assert_eq!(header.last().map(String::as_str), Some("per_step"));
        assert_eq!(render(&[]), format!("{}\r\n", header.join(",")));
    }
}
