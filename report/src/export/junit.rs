//! `export --format junit`: the acceptance verdicts as JUnit XML, for CI
//! systems that show JUnit results (Jenkins, GitLab, GitHub Actions'
//! test reporters).
//!
//! - One `<testsuite>` per document, named `MACHINE/PLAN`: the machine as
//!   `fleet` names it (DMI product serial, else host name, else the file
//!   name), the plan its profile, else its config's source.
//! - One `<testcase>` per target and check: `classname` the target's serial
//!   (its path without one), `name` the rule, then the test and figure
//!   when the check has them (`limit seq_read_1m read_bytes_per_sec`). A
//!   target with no check at all gets one passing testcase `no checks`, so
//!   every disk shows.
//! - A FAIL check is `<failure message="..." type="RULE">` with the message,
//!   figure, value, limit and source in its text; a WARN is `<skipped
//!   message="...">`: CI systems show it apart from passes without failing
//!   the build, as a warning is meant.
//! - The suite's `tests`, `failures` and `skipped` count its checks (FAIL,
//!   WARN); `errors` is 0. The targets' verdicts are in its
//!   `<properties>`: `verdict` (the run's, `none` without a verdict),
//!   `rules`, `targets_pass`, `targets_warn`, `targets_fail`, and `file`.
//!   A document without `acceptance` is a suite with no testcase and a
//!   `<system-out>` saying so.
//!
//! Text is escaped for XML 1.0: `&`, `<`, `>`, `"`, `'` as entities, and in
//! attributes tab, line feed and carriage return as character references
//! (so they survive attribute-value normalisation); characters XML 1.0
//! cannot hold at all (other C0 controls, U+FFFE, U+FFFF) are written as
//! `\xNN` / `\u{FFFE}` text.

use std::fmt::Write as _;

use bench_core::document::result::{Acceptance, Check, ResultDoc, TargetVerdict, Verdict};

use std::path::{Path, PathBuf};

use crate::read::Loaded;

/// `s` escaped for XML 1.0 element text, or for a double-quoted attribute
/// value when `attr` (see the module doc).
pub fn xml_escape(s: &str, attr: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' if attr => {
                let _ = write!(out, "&#{};", u32::from(c));
            }
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            '\u{FFFE}' | '\u{FFFF}' => {
                let _ = write!(out, "\\u{{{:X}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// `xml_escape(s, true)`.
fn attr(s: &str) -> String {
    xml_escape(s, true)
}

/// A document's suite name: `MACHINE/PLAN`.
pub fn suite_name(l: &Loaded) -> String {
    let (_, machine) = crate::read::machine::machine_id(l);
    let run = &l.doc.run;
    format!("{machine}/{}", run.profile.as_deref().unwrap_or(&run.config_source))
}

/// A target's `classname`: its serial, else its path.
pub fn classname(t: &TargetVerdict) -> &str {
    crate::figures::verdict::who(t)
}

/// A check's testcase `name`: the rule, then its test and figure.
pub fn case_name(c: &Check) -> String {
    [Some(c.rule.name()), c.test.as_deref(), c.figure.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The figures of a check, one per line, for a failure's text.
fn details(c: &Check) -> String {
    let num = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| v.to_string());
    format!(
        "{}\nfigure: {}\nvalue: {}\nlimit: {}\nsource: {}",
        c.message,
        c.figure.as_deref().unwrap_or("-"),
        num(c.value),
        num(c.limit),
        c.source
    )
}

/// One check's testcase.
fn case(out: &mut String, t: &TargetVerdict, c: &Check) {
    let _ = write!(
        out,
        "    <testcase classname=\"{}\" name=\"{}\"",
        attr(classname(t)),
        attr(&case_name(c))
    );
    match c.verdict {
        Verdict::Pass => out.push_str("/>\n"),
        Verdict::Fail => {
            let _ = write!(
                out,
                ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                attr(&c.message),
                c.rule,
                xml_escape(&details(c), false)
            );
        }
        Verdict::Warn => {
            let _ = write!(
                out,
                ">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                attr(&format!("WARN: {}", c.message))
            );
        }
    }
}

/// The suite's properties.
fn properties(out: &mut String, l: &Loaded, a: Option<&Acceptance>) {
    let count = |v: Verdict| a.map_or(0, |a| a.targets.iter().filter(|t| t.verdict == v).count());
    let verdict = a.map_or("none", |a| a.verdict.name());
    let rules = a.map_or("-", |a| a.rules.as_str());
    out.push_str("    <properties>\n");
    for (name, value) in [
        ("file", l.file.clone()),
        ("verdict", verdict.to_owned()),
        ("rules", rules.to_owned()),
        ("targets_pass", count(Verdict::Pass).to_string()),
        ("targets_warn", count(Verdict::Warn).to_string()),
        ("targets_fail", count(Verdict::Fail).to_string()),
    ] {
        let _ = writeln!(out, "      <property name=\"{name}\" value=\"{}\"/>", attr(&value));
    }
    out.push_str("    </properties>\n");
}

/// One document's suite.
fn suite(out: &mut String, l: &Loaded) -> [usize; 3] {
    let doc: &ResultDoc = &l.doc;
    let a = doc.acceptance.as_ref();
    let checks: Vec<&Check> = a.map_or_else(Vec::new, |a| a.targets.iter().flat_map(|t| &t.checks).collect());
    let bare = a.map_or(0, |a| a.targets.iter().filter(|t| t.checks.is_empty()).count());
    let n = |v: Verdict| checks.iter().filter(|c| c.verdict == v).count();
    let counts = [checks.len() + bare, n(Verdict::Fail), n(Verdict::Warn)];
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{}\">",
        attr(&suite_name(l)),
        counts[0],
        counts[1],
        counts[2],
        doc.run.duration_ns as f64 / 1e9
    );
    properties(out, l, a);
    match a {
        None => {
            let _ = writeln!(
                out,
                "    <system-out>{}</system-out>",
                xml_escape(crate::figures::verdict::NO_VERDICT, false)
            );
        }
        Some(a) => {
            for t in &a.targets {
                if t.checks.is_empty() {
                    let _ = writeln!(
                        out,
                        "    <testcase classname=\"{}\" name=\"no checks\"/>",
                        attr(classname(t))
                    );
                }
                for c in &t.checks {
                    case(out, t, c);
                }
            }
        }
    }
    out.push_str("  </testsuite>\n");
    counts
}

/// The JUnit XML of `docs`.
pub fn junit(docs: &[Loaded]) -> String {
    let mut body = String::new();
    let mut total = [0; 3];
    for l in docs {
        let c = suite(&mut body, l);
        for (t, x) in total.iter_mut().zip(c) {
            *t += x;
        }
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"bootbench acceptance\" tests=\"{}\" \
         failures=\"{}\" errors=\"0\" skipped=\"{}\">\n{body}</testsuites>\n",
        total[0], total[1], total[2]
    )
}

/// `export --format junit`: [`junit`] of the documents, written whole at
/// the end.
#[derive(Debug)]
pub struct Junit(super::Whole);

impl Junit {
    /// The export to `path`; nothing is written before it finishes.
    pub fn create(path: &Path) -> Junit {
        Junit(super::Whole::create(path))
    }
}

impl super::Export for Junit {
    fn add(&mut self, doc: Loaded) -> Result<(), String> {
        self.0.add(doc)
    }

    fn finish(self: Box<Self>) -> Result<Vec<PathBuf>, String> {
        self.0.finish(junit)
    }
}
