//! Small text helpers shared by `show`, `compare`, `csv` and `html`: aligned
//! tables and MB/s figures (bench-core's, [`bench_core::verdict::table`], which also
//! sets PID 1's console table), the other figures with their units (MiB =
//! 2^20 B, µs = 10^-3 ms), and the one date formatter ([`utc`]).

use bench_core::document::result::{Status, StepResult, TestResult};
use bench_core::vocab::units::MIB;

pub use bench_core::verdict::table::{mb_per_sec, Align};

/// How `show` and `html` mark one pass of a step of several passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassMark {
    /// A warm-up pass: run, never counted.
    Warmup,
    /// The pass the step reports (`chosen_pass`, the fastest measured).
    Reported,
    /// Any other measured pass.
    Measured,
}

/// The mark of pass `i` (0-based) of `st`.
pub fn pass_mark(st: &StepResult, i: usize) -> PassMark {
    if st.passes.get(i).is_some_and(|p| p.warmup) {
        PassMark::Warmup
    } else if st.chosen_pass == u32::try_from(i).ok() {
        PassMark::Reported
    } else {
        PassMark::Measured
    }
}

/// The step's lowest mean latency over its measured passes and the
/// 1-based number of that pass (CrystalDiskMark's latency); `None` for a
/// step of one pass.
pub fn lowest_latency(st: &StepResult) -> Option<(f64, u32)> {
    match (st.lowest_lat_mean_ns, st.lowest_lat_pass) {
        (Some(ns), Some(i)) => Some((ns, i + 1)),
        _ => None,
    }
}

/// A pass of 5 s with the given warm-up flag, bytes per second and mean
/// latency: the `show` and `html` tests' passes.
#[cfg(test)]
pub fn test_pass(warmup: bool, bytes_per_sec: f64, lat_mean_ns: f64) -> bench_core::document::result::PassResult {
    bench_core::document::result::PassResult {
        warmup,
        runtime_ns: 5_000_000_000,
        read_bytes: 1,
        write_bytes: 0,
        bytes_per_sec,
        iops: 1.0,
        lat_mean_ns: Some(lat_mean_ns),
    }
}

/// Rows of cells, the first row the header, as one text
/// ([`bench_core::verdict::table::aligned_lines`]: columns as wide as their widest
/// cell, separated by two spaces, no trailing spaces; missing cells are
/// empty); column `i` aligned as `align[i]`, left past its end.
pub fn table(rows: &[Vec<String>], align: &[Align]) -> String {
    bench_core::verdict::table::aligned_lines(rows, |i| align.get(i).copied().unwrap_or(Align::Left)).concat()
}

/// One line per steady-state wait of `x` (fio's `ss`, each job of each
/// step): attained or not, after how long, the last window's criterion
/// against its limit and mean, and the intervals' first and last figures
/// (IOPS, or MB/s = 10^6 B/s). Empty for a test that did not wait.
pub fn steady_lines(x: &TestResult) -> Vec<String> {
    use bench_core::spec::SteadyMetric;
    let Some(spec) = &x.params.steady else {
        return Vec::new();
    };
    let iops = spec.ss.metric == SteadyMetric::Iops;
    let fig = |v: f64| {
        if iops {
            format!("{} IOPS", self::iops(v))
        } else {
            format!("{} MB/s", mb_per_sec(v))
        }
    };
    let pct = if spec.ss.pct { "%" } else { "" };
    let mut out = Vec::new();
    for st in &x.steps {
        for (j, w) in st.steady_state.iter().enumerate() {
            let job = if st.steady_state.len() > 1 {
                format!(" job {j}")
            } else {
                String::new()
            };
            #[allow(clippy::cast_precision_loss)] // shown with one decimal
            let secs = w.wait_ns as f64 / 1e9;
            let how = if w.attained {
                format!("steady state ({}) after {secs:.1} s", spec.ss)
            } else {
                format!("NO steady state ({}) within {secs:.1} s, measured anyway", spec.ss)
            };
            let window = w.window.map_or_else(String::new, |j| {
                format!(
                    "; last window: {} {:.3}{pct}, mean {}",
                    spec.ss.name(),
                    j.criterion,
                    fig(j.mean)
                )
            });
            let ys = if iops { &w.iops } else { &w.bw };
            let series = match (ys.first(), ys.last()) {
                (Some(&a), Some(&b)) => format!("; {} intervals, {} .. {}", ys.len(), fig(a), fig(b)),
                _ => String::new(),
            };
            out.push(format!("{} {}{job}: {how}{window}{series}", x.name, st.label));
        }
    }
    out
}

/// Per second, no decimals (IOPS).
pub fn iops(per_sec: f64) -> String {
    format!("{per_sec:.0}")
}

/// Nanoseconds as microseconds, one decimal, no unit.
pub fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1e3)
}

/// Nanoseconds (integer) as microseconds, one decimal, no unit.
#[allow(clippy::cast_precision_loss)] // latencies are far below 2^53 ns
pub fn us_int(ns: u64) -> String {
    us(ns as f64)
}

/// A byte count with its unit in words: `268435456 B (256.0 MiB)`.
#[allow(clippy::cast_precision_loss)] // for display only, one decimal
pub fn bytes(n: u64) -> String {
    format!("{n} B ({:.1} MiB)", n as f64 / MIB as f64)
}

/// A byte count as MiB (2^20 B), one decimal, no unit.
#[allow(clippy::cast_precision_loss)] // for display only, one decimal
pub fn mib(n: u64) -> String {
    format!("{:.1}", n as f64 / MIB as f64)
}

/// B / A with three decimals, `-` when A is zero or either is not finite.
pub fn ratio(a: f64, b: f64) -> String {
    if a == 0.0 || !a.is_finite() || !b.is_finite() {
        return "-".into();
    }
    format!("{:.3}", b / a)
}

/// A status's `state` as the document spells it (`ok`, `skipped`,
/// `error`, and any state a later version adds).
pub fn state(s: &Status) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.get("state").and_then(|x| x.as_str()).map(String::from))
        .unwrap_or_else(|| "unknown".into())
}

/// The word a test's status gives in place of a figure: `None` for ok,
/// else the state (`skipped`, `error`, ...).
pub fn status_word(t: &TestResult) -> Option<String> {
    (t.status != Status::Ok).then(|| state(&t.status))
}

/// The short marker a table cell shows in place of a figure: `None` for
/// ok, `skip`, `err`, else the state's name.
pub fn marker(s: &Status) -> Option<String> {
    marker_of_state(&state(s))
}

/// [`marker`] of a state as the document spells it (`ok`, `skipped`,
/// `error`, `interrupted`, `timeout`): what a table of an export shows.
pub fn marker_of_state(state: &str) -> Option<String> {
    match state {
        "ok" => None,
        "skipped" => Some("skip".into()),
        "error" => Some("err".into()),
        other => Some(other.to_owned()),
    }
}

/// The errno of a failed test.
pub fn errno(s: &Status) -> Option<i32> {
    if let Status::Error { errno, .. } = s {
        Some(*errno)
    } else {
        None
    }
}

/// A status in words: `ok`, `skipped: <reason>`, `error: <message> (errno
/// N, <op> at offset X B)`, or `<state>: <message>` for the other states;
/// the state and the op as the document spells them ([`state`],
/// [`op_name`]).
pub fn status_text(s: &Status) -> String {
    let state = state(s);
    match s {
        Status::Ok => state,
        Status::Skipped { reason } => format!("{state}: {reason}"),
        Status::Error {
            errno,
            op,
            offset,
            message,
        } => format!(
            "{state}: {message} (errno {errno}, {} at offset {offset} B)",
            op_name(*op)
        ),
        Status::Interrupted { message } | Status::Timeout { message } => format!("{state}: {message}"),
    }
}

/// An operation's name as the document spells it: serde's name of the
/// variant (bench-core derives it; no second spelling here).
pub fn op_name(op: bench_core::io::Op) -> String {
    match serde_json::to_value(op) {
        Ok(serde_json::Value::String(name)) => name,
        // Never for a unit variant; still serde's spelling if it were.
        Ok(other) => other.to_string(),
        Err(e) => format!("<{e}>"),
    }
}

/// A workload's name as the document spells it.
pub fn workload_name(w: bench_core::spec::Workload) -> &'static str {
    w.name()
}

/// What a document's attestation holds, in a sentence (`show`'s
/// `attestation:` line, `html`'s Attestation fact); what it proves is
/// `verify`'s to say.
pub fn attestation(a: &bench_core::document::result::Attestation) -> String {
    let Some(q) = &a.quote else {
        return format!("no quote: {}", a.error.as_deref().unwrap_or("none was made"));
    };
    let mut facts = vec![format!("key {}", q.key_name)];
    let pcrs: Vec<String> = a.pcrs.iter().map(|p| p.index.to_string()).collect();
    facts.push(format!("PCRs {}", pcrs.join(",")));
    if let Some(n) = &a.nonce {
        facts.push(format!("nonce {n}"));
    }
    facts.push(
        if a.event_log.is_some() {
            "with the firmware's event log"
        } else {
            "no event log (the boot chain cannot be checked)"
        }
        .to_string(),
    );
    if let Some(ek) = &a.ek_certificate {
        facts.push(format!("the endorsement key's certificate (NV {:#010x})", ek.nv_index));
    }
    format!(
        "quoted by {}: {}; check it with bootbench-report verify",
        a.device.as_deref().unwrap_or("a TPM"),
        facts.join(", ")
    )
}

/// Nanoseconds since the Unix epoch as `YYYY-MM-DD HH:MM:SS UTC`.
pub fn utc(unix_ns: u64) -> String {
    let secs = unix_ns / 1_000_000_000;
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (Howard Hinnant's algorithm, unsigned since days >= 0).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        for (ns, want) in [
            (0, "1970-01-01 00:00:00 UTC"),
            (951_782_400 * 1_000_000_000, "2000-02-29 00:00:00 UTC"),
            (1_795_983_356_257_178_690, "2026-11-29 20:15:56 UTC"),
            (1_795_896_956_000_000_000, "2026-11-28 20:15:56 UTC"),
            (4_107_542_399 * 1_000_000_000, "2100-02-28 23:59:59 UTC"),
            (u64::MAX, "2554-07-21 23:34:33 UTC"),
        ] {
            assert_eq!(utc(ns), want, "{ns}");
        }
    }

    #[test]
    fn tables_align_and_trim() {
        let rows = vec![
            vec!["a".to_string(), "bb".into(), "c".into()],
            vec!["long".to_string(), "1".into()],
        ];
        assert_eq!(
            table(&rows, &[Align::Left, Align::Right, Align::Left]),
            "a     bb  c\nlong   1\n"
        );
    }

    /// The names come from serde: every op and every state as the
    /// document's JSON spells it.
    #[test]
    fn states_and_ops_are_spelled_as_the_document_spells_them() {
        use bench_core::io::Op;
        for op in [Op::Read, Op::Write, Op::Flush, Op::FlushRange] {
            assert_eq!(serde_json::to_string(&op).unwrap(), format!("\"{}\"", op_name(op)));
        }
        assert_eq!(op_name(Op::FlushRange), "flush_range");
        let message = || "m".to_string();
        for (s, text, mark) in [
            (Status::Ok, "ok", None),
            (Status::Skipped { reason: message() }, "skipped: m", Some("skip")),
            (
                Status::Error {
                    errno: 5,
                    op: Op::FlushRange,
                    offset: 4096,
                    message: message(),
                },
                "error: m (errno 5, flush_range at offset 4096 B)",
                Some("err"),
            ),
            (
                Status::Interrupted { message: message() },
                "interrupted: m",
                Some("interrupted"),
            ),
            (Status::Timeout { message: message() }, "timeout: m", Some("timeout")),
        ] {
            let json: serde_json::Value = serde_json::to_value(&s).unwrap();
            assert_eq!(json["state"].as_str(), Some(state(&s).as_str()));
            assert_eq!(status_text(&s), text);
            assert_eq!(marker(&s).as_deref(), mark);
        }
    }

    #[test]
    fn figures_and_units() {
        assert_eq!(mb_per_sec(20_971_520.0), "21.0");
        assert_eq!(us(85_504.0), "85.5");
        assert_eq!(bytes(268_435_456), "268435456 B (256.0 MiB)");
        assert_eq!(ratio(2.0, 3.0), "1.500");
        assert_eq!(ratio(0.0, 3.0), "-");
    }

    #[test]
    fn an_attestation_says_what_it_holds_or_why_it_has_no_quote() {
        use bench_core::document::result::{Attestation, EkCertificate, PcrValue, Quote};
        let mut a = Attestation {
            error: Some("no TPM (/dev/tpmrm0: No such file or directory)".into()),
            ..Attestation::default()
        };
        assert_eq!(
            attestation(&a),
            "no quote: no TPM (/dev/tpmrm0: No such file or directory)"
        );
        a.error = None;
        a.device = Some("/dev/tpmrm0".into());
        a.quote = Some(Quote {
            key_name: "000bab".into(),
            ..Quote::default()
        });
        a.pcrs = [0, 15]
            .into_iter()
            .map(|index| PcrValue {
                index,
                sha256: String::new(),
            })
            .collect();
        assert_eq!(
            attestation(&a),
            "quoted by /dev/tpmrm0: key 000bab, PCRs 0,15, no event log (the boot chain cannot be checked); \
             check it with bootbench-report verify"
        );
        a.nonce = Some("0011".into());
        a.event_log = Some("AAAA".into());
        a.ek_certificate = Some(EkCertificate {
            nv_index: 0x01C0_000A,
            der: String::new(),
        });
        assert_eq!(
            attestation(&a),
            "quoted by /dev/tpmrm0: key 000bab, PCRs 0,15, nonce 0011, with the firmware's event log, \
             the endorsement key's certificate (NV 0x01c0000a); check it with bootbench-report verify"
        );
    }
}
