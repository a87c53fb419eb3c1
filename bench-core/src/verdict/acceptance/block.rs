//! The verdict block that ends the console's and every serial port's
//! output: one line per target (serial, model, verdict, the first reason),
//! then the run's verdict, each line at most [`BLOCK_WIDTH`] characters
//! so that an 80-column serial-over-LAN screen shows it whole.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::limits::ns_text;
use crate::document::result::{Acceptance, Check, CheckRule, Metric, TargetVerdict, Verdict};
use crate::vocab::console;

/// The widest line of the block, characters.
pub const BLOCK_WIDTH: usize = 79;

/// The target column (serial, else path) is as wide as its widest entry,
/// from 4 to this: a serial is cut only past it.
const WHO_MAX: usize = 24;
/// The model column is as wide as its widest entry, from 5 to this.
const MODEL_MAX: usize = 14;
/// The verdict column: `verdict` in the header, `PASS` below.
const VERDICT: usize = 7;

/// `s` made safe for a console ([`console::safe`], once) and cut to
/// `width` characters ([`cut`]).
fn fit(s: &str, width: usize) -> String {
    cut(&console::safe(s), width)
}

/// `safe`, text already made safe for a console, cut to `width`
/// characters, the last three `...` when cut; never inside an escape
/// (`\\`, `\n`, `\x1b`, `\u0085`): an escape that does not fit whole is
/// left out whole.
fn cut(safe: &str, width: usize) -> String {
    if safe.chars().count() <= width {
        return String::from(safe);
    }
    let room = width.saturating_sub(3);
    let (mut end, mut used) = (0, 0);
    let mut rest = safe;
    while let Some(c) = rest.chars().next() {
        // One printed character, or one escape: `\` then `x` and two hex
        // digits, `u` and four, or one character.
        let len = if c == '\\' {
            match rest.as_bytes().get(1) {
                Some(b'x') => 4,
                Some(b'u') => 6,
                _ => 2,
            }
        } else {
            c.len_utf8()
        };
        let len = len.min(rest.len());
        let n = rest[..len].chars().count();
        if used + n > room {
            break;
        }
        used += n;
        end += len;
        rest = &rest[len..];
    }
    let mut out = String::from(&safe[..end]);
    out.push_str("...");
    out
}

/// The first check that gave the target its verdict, in words; empty for a
/// pass.
fn first_reason(t: &TargetVerdict) -> String {
    if t.verdict == Verdict::Pass {
        return String::new();
    }
    t.checks
        .iter()
        .find(|c| c.verdict == t.verdict)
        .map_or_else(String::new, short)
}

/// A check in few words: a limit, peers or baseline check as its test,
/// figure, value and limit (`seq_read read 10.0 MB/s < 150.0 MB/s`), any
/// other as its message.
fn short(c: &Check) -> String {
    let compared = matches!(c.rule, CheckRule::Limit | CheckRule::Peers | CheckRule::Baseline);
    let (Some(test), Some(figure), Some(v), Some(limit), true) = (&c.test, &c.figure, c.value, c.limit, compared)
    else {
        return c.message.clone();
    };
    let (label, show): (String, fn(f64) -> String) = match Metric::from_name(figure) {
        Some(m) if m.is_iops() => (String::from(if m.is_read() { "read" } else { "write" }), |v| {
            Metric::ReadIops.show(v)
        }),
        Some(m) => (String::from(if m.is_read() { "read" } else { "write" }), |v| {
            Metric::ReadBps.show(v)
        }),
        // read_lat_p99_ns -> read lat p99
        None => (figure.trim_end_matches("_ns").replace("_lat_", " lat "), ns_text),
    };
    let op = if v < limit { "<" } else { ">" };
    let rule = match c.rule {
        CheckRule::Limit => String::new(),
        other => format!(" ({other})"),
    };
    format!("{test} {label} {} {op} {}{rule}", show(v), show(limit))
}

/// The lines of the block, each ending in `\n`.
pub fn verdict_block(a: &Acceptance) -> Vec<String> {
    let mut out = Vec::with_capacity(a.targets.len() + 3);
    out.push(format!(
        "{:=<BLOCK_WIDTH$}\n",
        fit(&format!("== acceptance verdict (rules: {}) ", a.rules), BLOCK_WIDTH)
    ));
    // Each device string escaped once, its width counted escaped, cut
    // after escaping; the line is made of cells already safe, never
    // escaped again.
    let who = |t: &TargetVerdict| -> String {
        let s = t.serial.as_deref().map(str::trim).filter(|s| !s.is_empty());
        console::safe(s.unwrap_or(&t.target)).into_owned()
    };
    let model = |t: &TargetVerdict| console::safe(t.model.as_deref().map_or("-", str::trim)).into_owned();
    let width = |f: &dyn Fn(&TargetVerdict) -> String, min: usize, max: usize| {
        a.targets
            .iter()
            .map(|t| f(t).chars().count())
            .max()
            .unwrap_or(0)
            .clamp(min, max)
    };
    let (ww, mw) = (width(&who, 4, WHO_MAX), width(&model, 5, MODEL_MAX));
    let head = format!("{:<ww$} {:<mw$} {:<VERDICT$} first reason", "disk", "model", "verdict");
    out.push(format!("{head}\n"));
    // What the first reason has left of the line.
    let room = BLOCK_WIDTH.saturating_sub(ww + 1 + mw + 1 + VERDICT + 1);
    for t in &a.targets {
        let line = format!(
            "{:<ww$} {:<mw$} {:<VERDICT$} {}",
            cut(&who(t), ww),
            cut(&model(t), mw),
            t.verdict.shout(),
            fit(&first_reason(t), room)
        );
        out.push(format!("{}\n", line.trim_end()));
    }
    let count = |v: Verdict| a.targets.iter().filter(|t| t.verdict == v).count();
    out.push(format!(
        "{}\n",
        fit(
            &format!(
                "run: {} ({} of {} targets failed, {} warned)",
                a.verdict.shout(),
                count(Verdict::Fail),
                a.targets.len(),
                count(Verdict::Warn)
            ),
            BLOCK_WIDTH
        )
    ));
    out
}
