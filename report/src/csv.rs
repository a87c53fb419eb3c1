//! `csv`: one row per target and test (and per disk of each all-at-once
//! run), a header row first; RFC 4180 (fields with a comma, a quote, CR or
//! LF are quoted, quotes doubled, lines end in CRLF). Numbers are in base
//! units: bytes, bytes per second, per second, nanoseconds, as the document
//! holds them (shortest decimal that reads back the same); an absent figure
//! is an empty field. Lists (seek profile, per-step figures) are
//! `label=value` pairs separated by spaces in one field.

use bench_core::result::{DirStats, ResultDoc, Status, TargetInfo, TestResult};

use crate::read::Loaded;
use crate::show::{main_step, percentile};

/// The header row's fields.
pub const HEADER: [&str; 36] = [
    "file",
    "run",
    "target",
    "serial",
    "model",
    "firmware",
    "target_kind",
    "size_bytes",
    "test",
    "workload",
    "status",
    "status_detail",
    "errno",
    "bs_bytes",
    "iodepth",
    "jobs",
    "runtime_ns",
    "read_bytes_per_sec",
    "write_bytes_per_sec",
    "read_iops",
    "write_iops",
    "lat_mean_ns",
    "command_overhead_ns",
    "read_bytes",
    "read_ios",
    "read_lat_min_ns",
    "read_lat_p50_ns",
    "read_lat_p99_ns",
    "read_lat_p99_9_ns",
    "read_lat_max_ns",
    "write_bytes",
    "write_ios",
    "write_lat_p50_ns",
    "write_lat_p99_ns",
    "seek_ns",
    "per_step",
];

/// Quote a field when RFC 4180 requires it.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

fn line(fields: &[String]) -> String {
    let mut l = fields.iter().map(|f| field(f)).collect::<Vec<_>>().join(",");
    l.push_str("\r\n");
    l
}

fn f(v: Option<f64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn u(v: Option<u64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// The CSV of every document.
pub fn render(docs: &[Loaded]) -> String {
    let mut out = line(&HEADER.map(String::from));
    for l in docs {
        let doc = &l.doc;
        for t in &doc.tests {
            out.push_str(&line(&row(&l.file, "alone", doc, t)));
        }
        for a in &doc.all_at_once {
            for t in &a.results {
                out.push_str(&line(&row(&l.file, "all_at_once", doc, t)));
            }
        }
    }
    out
}

fn row(file: &str, run: &str, doc: &ResultDoc, t: &TestResult) -> Vec<String> {
    let target: Option<&TargetInfo> = doc.targets.iter().find(|g| g.path == t.target);
    let s = &t.summary;
    let step = main_step(t);
    let read: Option<&DirStats> = step.and_then(|x| x.read.as_ref());
    let write: Option<&DirStats> = step.and_then(|x| x.write.as_ref());
    let status = crate::text::state(&t.status);
    // The reason or message, without the state the status column gives.
    let detail = if let Status::Error {
        op, offset, message, ..
    } = &t.status
    {
        format!("{message} ({} at offset {offset})", crate::text::op_name(*op))
    } else {
        let text = crate::text::status_text(&t.status);
        text.split_once(": ").map(|(_, m)| m.to_owned()).unwrap_or_default()
    };
    let errno = crate::text::errno(&t.status).map(|e| e.to_string()).unwrap_or_default();
    let pairs = |v: &[bench_core::result::Figure]| {
        v.iter()
            .map(|x| format!("{}={}", x.label, x.value))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let opt = |s: Option<&String>| s.cloned().unwrap_or_default();
    vec![
        file.to_owned(),
        run.to_owned(),
        t.target.clone(),
        opt(target.and_then(|g| g.serial.as_ref())),
        opt(target.and_then(|g| g.model.as_ref())),
        opt(target.and_then(|g| g.firmware.as_ref())),
        target.map(|g| g.kind.clone()).unwrap_or_default(),
        u(target.map(|g| g.size_bytes)),
        t.name.clone(),
        t.workload.name().to_owned(),
        status,
        detail,
        errno,
        t.params.bs.0.to_string(),
        t.params.iodepth.to_string(),
        t.params.jobs.to_string(),
        u(step.map(|x| x.runtime_ns)),
        f(s.read_bytes_per_sec),
        f(s.write_bytes_per_sec),
        f(s.read_iops),
        f(s.write_iops),
        f(s.lat_mean_ns),
        f(s.command_overhead_ns),
        u(read.map(|d| d.bytes)),
        u(read.map(|d| d.ios)),
        u(read.map(|d| d.lat_ns.min)),
        u(read.and_then(|d| percentile(d, 50.0))),
        u(read.and_then(|d| percentile(d, 99.0))),
        u(read.and_then(|d| percentile(d, 99.9))),
        u(read.map(|d| d.lat_ns.max)),
        u(write.map(|d| d.bytes)),
        u(write.map(|d| d.ios)),
        u(write.and_then(|d| percentile(d, 50.0))),
        u(write.and_then(|d| percentile(d, 99.0))),
        pairs(&s.seek_ns),
        pairs(&s.per_step),
    ]
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
        ] {
            assert_eq!(field(raw), want, "{raw:?}");
        }
        assert_eq!(line(&["a".into(), "b,c".into(), String::new()]), "a,\"b,c\",\r\n");
    }
}
