//! `export --format ocptv`: the acceptance verdicts as OCP Test and
//! Validation output (JSON lines, spec version 2.0:
//! github.com/opencomputeproject/ocp-diag-core, `json_spec/`; its schema
//! is vendored in schema/vendor/ocp-diag-core/).
//!
//! Per document one test run, a stream of its own (its `sequenceNumber`s
//! count from 0): the `schemaVersion` line; `testRunStart` (name
//! `bootbench acceptance`, the tool's version, `commandLine` the config the
//! run read, `parameters` the file, profile and rules, `dutInfo` the machine
//! as `fleet` names it with a `hardwareInfo` per target: id its path, name
//! its model, serial, firmware as `revision`); per target one test step
//! (`testStepStart` named after the target, then per check a
//! `measurement` and a `diagnosis`, then `testStepEnd` COMPLETE); and
//! `testRunEnd` COMPLETE with result FAIL when the run failed acceptance,
//! else PASS. A document without a verdict is a run with a `log` line
//! saying so and `testRunEnd` SKIP / NOT_APPLICABLE.
//!
//! A check's measurement is named `RULE TEST FIGURE`, its value the check's
//! figure with its unit (`B/s`, `IOPS`, `ns`, `°C`, `%`), and its limit a
//! validator named after the limit's source: GREATER_THAN_OR_EQUAL for a
//! floor (a bytes/s or IOPS figure, the available spare),
//! LESS_THAN_OR_EQUAL for a ceiling (latency, temperature, percentage used,
//! a counter's growth). A check without a figure (SMART status, a test's
//! error, a kernel log line) is measured as its verdict (`pass`, `warn`,
//! `fail`) with an EQUAL `pass` validator. Its diagnosis: type FAIL for a
//! FAIL, PASS for a PASS and for a WARN (a warning fails nothing), the
//! `verdict` string `RULE-pass`/`-warn`/`-fail`, the message.
//! Timestamps: the run's start for the opening lines, its end for the rest.

use serde_json::{json, Value};

use bench_core::document::result::{Check, CheckRule, Metric, ResultDoc, TargetInfo, TargetVerdict, Verdict};

use std::path::{Path, PathBuf};

use crate::read::Loaded;

/// `unix_ns` as RFC 3339 UTC with nanoseconds: `2026-12-02T03:06:49.123456789Z`.
pub(crate) fn rfc3339(unix_ns: u64) -> String {
    // text::utc gives `YYYY-MM-DD HH:MM:SS UTC`.
    let day_time = crate::figures::text::utc(unix_ns);
    let stem = day_time.trim_end_matches(" UTC").replacen(' ', "T", 1);
    format!("{stem}.{:09}Z", unix_ns % 1_000_000_000)
}

/// The unit of a check's figure, when it has one.
fn unit(figure: &str) -> Option<&'static str> {
    if let Some(m) = Metric::from_name(figure) {
        return Some(if m.is_iops() { "IOPS" } else { "B/s" });
    }
    if figure.ends_with("_ns") {
        Some("ns")
    } else if figure.ends_with("temperature_c") {
        Some("°C")
    } else if figure.contains("percentage") || figure.contains("spare") {
        Some("%")
    } else {
        None
    }
}

/// Whether a check's limit is a floor (else a ceiling).
fn is_floor(c: &Check) -> bool {
    c.rule == CheckRule::AvailableSpare || c.figure.as_deref().and_then(Metric::from_name).is_some()
}

/// A check's measurement name: `RULE TEST FIGURE`.
fn name(c: &Check) -> String {
    crate::export::junit::case_name(c)
}

/// A check's measurement and diagnosis artifacts (`testStepArtifact` bodies).
fn check_artifacts(c: &Check, hw: &str) -> [Value; 2] {
    let mut m = match (c.value, c.limit) {
        (Some(v), limit) => {
            let mut m = json!({"name": name(c), "value": v, "hardwareInfoId": hw});
            if let Some(u) = c.figure.as_deref().and_then(unit) {
                m["unit"] = json!(u);
            }
            if let Some(l) = limit {
                let kind = if is_floor(c) {
                    "GREATER_THAN_OR_EQUAL"
                } else {
                    "LESS_THAN_OR_EQUAL"
                };
                m["validators"] = json!([{"name": c.source, "type": kind, "value": l}]);
            }
            m
        }
        (None, _) => json!({"name": name(c), "value": c.verdict.name(), "hardwareInfoId": hw,
            "validators": [{"name": c.source, "type": "EQUAL", "value": "pass"}]}),
    };
    m["metadata"] = json!({"source": c.source, "verdict": c.verdict.name()});
    let kind = if c.verdict == Verdict::Fail { "FAIL" } else { "PASS" };
    let d = json!({"verdict": format!("{}-{}", c.rule, c.verdict.name()), "type": kind,
        "message": c.message, "hardwareInfoId": hw});
    [json!({"measurement": m}), json!({"diagnosis": d})]
}

/// A target's `hardwareInfo`.
fn hardware_info(t: &TargetInfo) -> Value {
    let mut h = json!({"hardwareInfoId": t.path, "name": t.model.as_deref().unwrap_or(&t.path), "location": t.path});
    if let Some(s) = &t.serial {
        h["serialNumber"] = json!(s);
    }
    if let Some(f) = &t.firmware {
        h["revision"] = json!(f);
    }
    h
}

/// The lines of one document's stream, in order, before numbering: each a
/// root-level object without `sequenceNumber` and `timestamp`, and whether
/// it is stamped with the run's end.
fn artifacts(l: &Loaded) -> Vec<(Value, bool)> {
    let doc: &ResultDoc = &l.doc;
    let (_, machine) = crate::read::machine::machine_id(l);
    let a = doc.acceptance.as_ref();
    let mut out = vec![(json!({"schemaVersion": {"major": 2, "minor": 0}}), false)];
    let dut = json!({"dutInfoId": machine, "name": crate::read::machine::host_model(&doc.host).unwrap_or_else(|| machine.clone()),
        "hardwareInfos": doc.targets.iter().map(hardware_info).collect::<Vec<_>>()});
    let start = json!({"name": "bootbench acceptance", "version": doc.tool.version,
        "commandLine": doc.run.config_source,
        "parameters": {"file": l.file, "profile": doc.run.profile, "rules": a.map(|a| a.rules.clone())},
        "dutInfo": dut});
    out.push((json!({"testRunArtifact": {"testRunStart": start}}), false));
    let Some(a) = a else {
        let log = json!({"severity": "INFO", "message": crate::figures::verdict::NO_VERDICT});
        out.push((json!({"testRunArtifact": {"log": log}}), true));
        let end = json!({"status": "SKIP", "result": "NOT_APPLICABLE"});
        out.push((json!({"testRunArtifact": {"testRunEnd": end}}), true));
        return out;
    };
    for (i, t) in a.targets.iter().enumerate() {
        step(&mut out, &i.to_string(), t);
    }
    let result = if a.verdict == Verdict::Fail { "FAIL" } else { "PASS" };
    let end = json!({"status": "COMPLETE", "result": result});
    out.push((json!({"testRunArtifact": {"testRunEnd": end}}), true));
    out
}

/// One target's test step.
fn step(out: &mut Vec<(Value, bool)>, id: &str, t: &TargetVerdict) {
    let art = |body: Value| json!({"testStepArtifact": merge(json!({"testStepId": id}), body)});
    let name = format!("acceptance of {}", crate::figures::verdict::who(t));
    out.push((art(json!({"testStepStart": {"name": name}})), true));
    for c in &t.checks {
        for body in check_artifacts(c, &t.target) {
            out.push((art(body), true));
        }
    }
    out.push((art(json!({"testStepEnd": {"status": "COMPLETE"}})), true));
}

/// `a` with `b`'s fields added (both objects).
fn merge(mut a: Value, b: Value) -> Value {
    if let (Some(x), Value::Object(y)) = (a.as_object_mut(), b) {
        x.extend(y);
    }
    a
}

/// The OCPTV JSON lines of `docs`: each document's stream in turn.
pub fn ocptv(docs: &[Loaded]) -> String {
    let mut out = String::new();
    for l in docs {
        let run = &l.doc.run;
        let (start, end) = (run.started_unix_ns, run.started_unix_ns.saturating_add(run.duration_ns));
        for (n, (mut v, at_end)) in artifacts(l).into_iter().enumerate() {
            v["sequenceNumber"] = json!(n);
            v["timestamp"] = json!(rfc3339(if at_end { end } else { start }));
            out.push_str(&v.to_string());
            out.push('\n');
        }
    }
    out
}

/// `export --format ocptv`: [`ocptv`] of the documents, written whole at
/// the end.
#[derive(Debug)]
pub struct Ocptv(super::Whole);

impl Ocptv {
    /// The export to `path`; nothing is written before it finishes.
    pub fn create(path: &Path) -> Ocptv {
        Ocptv(super::Whole::create(path))
    }
}

impl super::Export for Ocptv {
    fn add(&mut self, doc: Loaded) -> Result<(), String> {
        self.0.add(doc)
    }

    fn finish(self: Box<Self>) -> Result<Vec<PathBuf>, String> {
        self.0.finish(ocptv)
    }
}
