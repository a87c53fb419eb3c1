//! Fit to deploy? A verdict for every target of a run: PASS, WARN or FAIL,
//! with every check that decided it.
//!
//! The rules ([`Rules`]) come from the config's `acceptance` section, or
//! are [`Rules::defaults`] without one. [`evaluate`] applies them to a
//! finished document, target by target, in this order:
//!
//! - **limits**: floors on bytes/s and IOPS, ceilings on latency (mean, a
//!   percentile the results hold, max), for the tests of a name or a
//!   workload, on the targets the limit's `only` selects ([`limits`]);
//! - **peers**: a whole disk more than N% below the median of the disks of
//!   its model and firmware in the run (the `outlier` analysis line's rule
//!   with the config's N);
//! - **baseline**: a whole disk more than N% below its model's median from
//!   earlier runs ([`Baseline`]);
//! - **health**: SMART status, counters that must not grow, NVMe
//!   percentage used and available spare, temperature ([`health`]);
//! - **errors**: a test that ended with an I/O error or a timeout, and every
//!   kernel log line that names the disk during the run; a test that did
//!   not run is a warning (its figures are missing);
//! - **self-test**: its result must be "completed without error";
//! - **hidden capacity**: ATA HPA/DCO, NVMe capacity outside every
//!   namespace (a warning by default).
//!
//! A target's verdict is the worst of its checks' (PASS with none); the
//! run's the worst of its targets'. Every check is kept, those that held
//! too, so a report can list what was checked.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::document::result::{
    Acceptance, Check, CheckRule, ResultDoc, Status, TargetInfo, TargetVerdict, TestResult, Verdict,
};
use crate::spec::Workload;

mod baseline;
mod block;
mod health;
mod limits;
mod link;
mod zones;

pub use baseline::{Baseline, BaselineFigure, BaselineRule, BASELINE_MAX, BASELINE_SCHEMA};
pub use block::{verdict_block, BLOCK_WIDTH};
pub use health::HealthRules;
pub use limits::{Ceiling, Direction, DiskFilter, LatStat, Limit};

/// What a rule that did not hold gives: a failure or a warning; or the
/// rule is off. The config names them `fail`, `warn`, `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The target fails.
    Fail,
    /// The target is a warning.
    Warn,
    /// The rule is not applied.
    Off,
}

impl Severity {
    /// The verdict of a check that did not hold; `None` when the rule is off.
    pub const fn verdict(self) -> Option<Verdict> {
        match self {
            Severity::Fail => Some(Verdict::Fail),
            Severity::Warn => Some(Verdict::Warn),
            Severity::Off => None,
        }
    }
}

/// The peers rule: a whole disk more than `below` (a fraction) under the
/// median of the disks of its model and firmware in the run.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerRule {
    /// How far below the median fails, as a fraction (0.10 = 10%).
    pub below: f64,
    /// What a disk below it gets.
    pub severity: Severity,
}

/// The acceptance rules of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Rules {
    /// True when they come from the config's `acceptance` section.
    pub from_config: bool,
    /// Floors and ceilings on the tests' figures.
    pub limits: Vec<Limit>,
    /// The peers rule.
    pub peers: PeerRule,
    /// The baseline rule and its figures, when the config names one.
    pub baseline: Option<BaselineRule>,
    /// The health rules.
    pub health: HealthRules,
    /// I/O errors, timeouts and kernel log lines fail a target.
    pub errors: bool,
    /// A self-test's result must be "completed without error".
    pub self_test: bool,
    /// Hidden capacity found.
    pub hidden_capacity: Severity,
    /// The surface scan's rules.
    pub surface_scan: ScanRules,
    /// The burn-in's rules.
    pub burn_in: BurnRules,
    /// What preconditioning that reached no steady state gives.
    pub steady_state: Severity,
    /// What a zoned disk's offline and read-only zones give.
    pub zones: Severity,
    /// What a link on a disk's path trained below what both ends support gives.
    pub link_speed: Severity,
    /// What PHY or AER error counters on a disk's path that grew during the run give.
    pub link_errors: Severity,
}

/// The burn-in's rules: blocks that could not be written or read back
/// (bad), and blocks read back with other contents than written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BurnRules {
    /// What unwritable and unreadable blocks give.
    pub bad: Severity,
    /// What mismatched blocks give.
    pub mismatched: Severity,
}

impl BurnRules {
    /// Both fail.
    pub const fn defaults() -> BurnRules {
        BurnRules {
            bad: Severity::Fail,
            mismatched: Severity::Fail,
        }
    }
}

/// The surface scan's rules: unreadable blocks, and reads at or above a
/// time class's bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanRules {
    /// What unreadable blocks give.
    pub unreadable: Severity,
    /// What reads of `slow_ms` or more give.
    pub slow: Severity,
    /// The time a slow read takes at least: one of the classes' bounds
    /// ([`crate::passes::scan::CLASS_BOUNDS_MS`]).
    pub slow_ms: u64,
}

impl ScanRules {
    /// Unreadable blocks fail, reads of 500 ms or more warn.
    pub const fn defaults() -> ScanRules {
        ScanRules {
            unreadable: Severity::Fail,
            slow: Severity::Warn,
            slow_ms: 500,
        }
    }
}

impl Rules {
    /// The rules without an `acceptance` section: health, errors and
    /// self-test fail a disk, peers more than 10% below warn, hidden
    /// capacity warns, no limits.
    pub fn defaults() -> Rules {
        Rules {
            from_config: false,
            limits: Vec::new(),
            peers: PeerRule {
                below: crate::verdict::analysis::OUTLIER_BELOW,
                severity: Severity::Warn,
            },
            baseline: None,
            health: HealthRules::defaults(),
            errors: true,
            self_test: true,
            hidden_capacity: Severity::Warn,
            surface_scan: ScanRules::defaults(),
            burn_in: BurnRules::defaults(),
            steady_state: Severity::Warn,
            zones: Severity::Fail,
            link_speed: Severity::Warn,
            link_errors: Severity::Fail,
        }
    }
}

impl Rules {
    /// The rules in words, one line each, for the plan `validate` prints
    /// and the console shows before a booted run.
    pub fn describe(&self) -> Vec<String> {
        let sev = |s: Severity| crate::vocab::names::name_of(&s);
        let mut out = alloc::vec![format!(
            "acceptance ({}):",
            if self.from_config {
                "the config's rules"
            } else {
                "the default rules"
            }
        )];
        for l in &self.limits {
            out.push(format!("  {}: {} ({})", l.source, l.describe(), sev(l.severity)));
        }
        out.push(format!(
            "  peers: more than {:.0}% below the median of their model and firmware ({})",
            self.peers.below * 100.0,
            sev(self.peers.severity)
        ));
        if let Some(b) = &self.baseline {
            out.push(format!(
                "  baseline: more than {:.0}% below their model's median in {} ({} figures, {})",
                b.below * 100.0,
                b.from,
                b.baseline.figures.len(),
                sev(b.severity)
            ));
        }
        out.push(format!("  health: {}", self.health.describe()));
        let on = |b: bool| if b { "fail" } else { "off" };
        out.push(format!(
            "  errors ({}), self-test ({}), hidden capacity ({})",
            on(self.errors),
            on(self.self_test),
            sev(self.hidden_capacity)
        ));
        out.push(format!(
            "  surface scan: unreadable blocks ({}), reads of {} ms or more ({})",
            sev(self.surface_scan.unreadable),
            self.surface_scan.slow_ms,
            sev(self.surface_scan.slow)
        ));
        out.push(format!(
            "  burn-in: unwritable and unreadable blocks ({}), mismatched blocks ({})",
            sev(self.burn_in.bad),
            sev(self.burn_in.mismatched)
        ));
        out.push(format!(
            "  preconditioning without steady state ({})",
            sev(self.steady_state)
        ));
        out.push(format!("  offline and read-only zones ({})", sev(self.zones)));
        out.push(format!(
            "  links below what both ends support ({}), PHY and AER error counters that grew ({})",
            sev(self.link_speed),
            sev(self.link_errors)
        ));
        out
    }
}

/// Where the default rules say they come from.
const DEFAULTS: &str = "defaults";

/// The verdicts of a finished document under `rules`.
pub fn evaluate(doc: &ResultDoc, rules: &Rules) -> Acceptance {
    let peers = crate::verdict::analysis::peer_groups(doc);
    let targets: Vec<TargetVerdict> = doc
        .targets
        .iter()
        .map(|t| {
            let mut checks = Vec::new();
            limits::check_limits(doc, t, &rules.limits, &mut checks);
            if let Some(v) = rules.peers.severity.verdict() {
                peer_checks(t, &peers, &rules.peers, v, &mut checks);
            }
            if let Some(b) = &rules.baseline {
                b.check(doc, t, &mut checks);
            }
            health::check_health(t, &rules.health, &mut checks);
            if rules.errors {
                error_checks(doc, t, &mut checks);
                kernel_log_checks(doc, t, &mut checks);
            }
            if rules.self_test {
                self_test_check(t, &mut checks);
            }
            if let Some(v) = rules.hidden_capacity.verdict() {
                hidden_capacity_check(t, v, &mut checks);
            }
            scan_checks(t, &rules.surface_scan, &mut checks);
            burn_checks(t, &rules.burn_in, &mut checks);
            if let Some(v) = rules.steady_state.verdict() {
                steady_check(t, v, &mut checks);
                test_steady_checks(doc, t, v, &mut checks);
            }
            if let Some(v) = rules.zones.verdict() {
                zones::check(t, v, &mut checks);
            }
            if let Some(v) = rules.link_speed.verdict() {
                link::speed(t, v, &mut checks);
            }
            if let Some(v) = rules.link_errors.verdict() {
                link::errors(t, v, &mut checks);
            }
            let verdict = checks.iter().fold(Verdict::Pass, |v, c| v.worst(c.verdict));
            TargetVerdict {
                target: t.path.clone(),
                serial: t.serial.clone(),
                model: t.model.clone(),
                verdict,
                checks,
            }
        })
        .collect();
    Acceptance {
        verdict: targets.iter().fold(Verdict::Pass, |v, t| v.worst(t.verdict)),
        rules: String::from(if rules.from_config { "config" } else { DEFAULTS }),
        targets,
    }
}

/// A check that held or did not, with its figures.
#[allow(clippy::too_many_arguments)] // each is one field of the check
fn check(
    rule: CheckRule,
    verdict: Verdict,
    test: Option<&str>,
    figure: &str,
    value: Option<f64>,
    limit: Option<f64>,
    source: &str,
    message: String,
) -> Check {
    Check {
        rule,
        verdict,
        test: test.map(String::from),
        figure: Some(figure.to_string()),
        value,
        limit,
        source: source.to_string(),
        message,
    }
}

/// The tests run on `t`, in the order run.
fn tests_on<'a>(doc: &'a ResultDoc, t: &'a TargetInfo) -> impl Iterator<Item = &'a TestResult> {
    doc.tests.iter().filter(move |x| x.target == t.path)
}

/// The peers rule on `t`: each of its figures against its group's median.
fn peer_checks(
    t: &TargetInfo,
    groups: &[crate::verdict::analysis::FleetGroup],
    rule: &PeerRule,
    fails: Verdict,
    out: &mut Vec<Check>,
) {
    for g in groups {
        let Some(e) = g.entries.iter().find(|e| e.target == t.path) else {
            continue;
        };
        let floor = g.median * (1.0 - rule.below);
        let held = e.value >= floor;
        let message = format!(
            "{}: {} {} against the median of {} disks of model {}, firmware {}: {} ({:.1}% {}; at most {:.0}% below)",
            g.test,
            g.metric,
            g.metric.show(e.value),
            g.entries.len(),
            g.key.model,
            g.key.firmware,
            g.metric.show(g.median),
            (1.0 - e.value / g.median).abs() * 100.0,
            if e.value < g.median { "below" } else { "above" },
            rule.below * 100.0
        );
        out.push(check(
            CheckRule::Peers,
            if held { Verdict::Pass } else { fails },
            Some(&g.test),
            g.metric.name(),
            Some(e.value),
            Some(floor),
            "acceptance.peers",
            message,
        ));
    }
}

/// The errors rule on `t`: each test that ended with an I/O error or a
/// timeout fails it; a test that did not run (skipped) or was interrupted
/// is a warning, its figures being missing. A write test the plan did not
/// run because the target may not be written (`write_refusal`) is no
/// check: nothing was asked of the disk.
fn error_checks(doc: &ResultDoc, t: &TargetInfo, out: &mut Vec<Check>) {
    let planned_skip =
        |x: &TestResult| t.write_refusal.is_some() && x.workload.writes() && matches!(x.status, Status::Skipped { .. });
    for test in tests_on(doc, t).filter(|x| !planned_skip(x)) {
        let (rule, verdict, message) = match &test.status {
            Status::Ok => continue,
            Status::Error {
                errno,
                op,
                offset,
                message,
            } => (
                CheckRule::TestError,
                Verdict::Fail,
                format!(
                    "{}: {} error at byte {offset}: {message} (errno {errno})",
                    test.name,
                    crate::vocab::names::name_of(op)
                ),
            ),
            Status::Timeout { message } => (
                CheckRule::TestError,
                Verdict::Fail,
                format!("{}: timed out: {message}", test.name),
            ),
            Status::Skipped { reason } => (
                CheckRule::NotTested,
                Verdict::Warn,
                format!("{}: not measured: {reason}", test.name),
            ),
            Status::Interrupted { message } => (
                CheckRule::NotTested,
                Verdict::Warn,
                format!("{}: not measured to the end: {message}", test.name),
            ),
        };
        out.push(Check {
            rule,
            verdict,
            test: Some(test.name.clone()),
            figure: Some(String::from("status")),
            value: None,
            limit: None,
            source: String::from("acceptance.errors"),
            message,
        });
    }
}

/// The self-test rule on `t`: its result must be "completed without
/// error". A failing result, a timeout or a self-test whose commands failed
/// fails the disk; one the device does not support, or that the user
/// interrupted, is a warning (nothing could be said); any other ending
/// (aborted by a reset, a format, ...) fails it, the test not having run
/// to its end.
fn self_test_check(t: &TargetInfo, out: &mut Vec<Check>) {
    use crate::document::result::SelfTestOutcome as O;
    let Some(st) = &t.self_test else {
        return;
    };
    let verdict = match (st.passed, st.outcome) {
        (Some(true), _) => Verdict::Pass,
        (_, O::NotSupported | O::Interrupted) => Verdict::Warn,
        _ => Verdict::Fail,
    };
    let mut message = format!("{} self-test: {}: {}", st.kind, st.outcome, st.message);
    if let Some(lba) = st.failing_lba {
        message.push_str(&format!(" (first failing LBA {lba})"));
    }
    out.push(Check {
        rule: CheckRule::SelfTest,
        verdict,
        test: None,
        figure: Some(String::from("self_test")),
        value: st.remaining_pct.map(f64::from),
        limit: None,
        source: String::from("acceptance.self_test"),
        message,
    });
}

/// The errors rule on the kernel's log: every line that names `t` during
/// the run (`ResultDoc::kernel_log`: I/O errors, ATA exceptions and link
/// resets, NVMe timeouts, aborts and resets, medium errors) fails it, with
/// the line.
fn kernel_log_checks(doc: &ResultDoc, t: &TargetInfo, out: &mut Vec<Check>) {
    for l in doc.kernel_log.iter().filter(|l| l.target == t.path) {
        let during = l.test.as_deref().map_or_else(String::new, |x| format!(" during {x}"));
        out.push(Check {
            rule: CheckRule::KernelLog,
            verdict: Verdict::Fail,
            test: l.test.clone(),
            figure: Some(String::from(l.kind.name())),
            #[allow(clippy::cast_precision_loss)] // a sector number, shown
            value: l.sector.map(|s| s as f64),
            limit: None,
            source: String::from("acceptance.errors"),
            message: format!("kernel {}{during}: {}", l.kind, l.text),
        });
    }
}

/// The hidden-capacity rule on `t`: capacity beyond what the host sees
/// (an HPA, a DCO limit below the native size, NVMe capacity in no
/// namespace) gives `fails`; none found passes; nothing known, no check.
fn hidden_capacity_check(t: &TargetInfo, fails: Verdict, out: &mut Vec<Check>) {
    let Some(h) = &t.hidden_capacity else {
        return;
    };
    let hpa = h.hidden_bytes.filter(|b| *b > 0);
    let dco = h
        .dco_bytes
        .zip(h.native_bytes)
        .and_then(|(d, n)| d.checked_sub(n))
        .filter(|b| *b > 0);
    let unallocated = h.unallocated_bytes.filter(|b| *b > 0);
    let (hidden, message) = match (hpa, dco, unallocated) {
        (Some(b), _, _) => (
            Some(b),
            format!("{b} bytes hidden beyond the host's {} (HPA)", h.visible_bytes),
        ),
        (None, Some(b), _) => (Some(b), format!("{b} bytes beyond the native size, limited by a DCO")),
        (None, None, Some(b)) => (Some(b), format!("{b} bytes of NVMe capacity in no namespace")),
        (None, None, None) if h.hidden_bytes == Some(0) || h.unallocated_bytes == Some(0) => {
            (None, String::from("no capacity hidden from the host"))
        }
        (None, None, None) => return,
    };
    #[allow(clippy::cast_precision_loss)] // bytes, shown
    out.push(Check {
        rule: CheckRule::HiddenCapacity,
        verdict: if hidden.is_some() { fails } else { Verdict::Pass },
        test: None,
        figure: Some(String::from("hidden_bytes")),
        value: Some(hidden.unwrap_or(0) as f64),
        limit: Some(0.0),
        source: String::from("acceptance.hidden_capacity"),
        message,
    });
}

/// The surface scan's rules on `t`, when it was scanned: its unreadable
/// blocks, its reads at or above the slow bound, and a scan that ended
/// before its area was read (WARN: its blocks are not all known).
fn scan_checks(t: &TargetInfo, rules: &ScanRules, out: &mut Vec<Check>) {
    use crate::document::result::ScanEndState;
    let Some(s) = &t.surface_scan else { return };
    let check = |verdict, figure: &str, value: f64, limit: Option<f64>, message: String| Check {
        rule: CheckRule::SurfaceScan,
        verdict,
        test: None,
        figure: Some(String::from(figure)),
        value: Some(value),
        limit,
        source: String::from("acceptance.surface_scan"),
        message,
    };
    #[allow(clippy::cast_precision_loss)] // counts, shown
    if let Some(v) = rules.unreadable.verdict() {
        let n = s.unreadable_lbas.len();
        let message = match s.unreadable_lbas.first() {
            None => String::from("no unreadable block"),
            Some(first) => format!("{n} unreadable block(s), the first at LBA {first}"),
        };
        out.push(check(
            if n == 0 { Verdict::Pass } else { v },
            "unreadable_lbas",
            n as f64,
            Some(0.0),
            message,
        ));
    }
    #[allow(clippy::cast_precision_loss)] // counts, shown
    if let Some(v) = rules.slow.verdict() {
        let slow: u64 = s
            .classes
            .iter()
            .filter(|c| c.below_ms.is_none_or(|b| b > rules.slow_ms))
            .map(|c| c.reads)
            .sum();
        let message = format!("{slow} read(s) of {} ms or more", rules.slow_ms);
        out.push(check(
            if slow == 0 { Verdict::Pass } else { v },
            "slow_reads",
            slow as f64,
            Some(0.0),
            message,
        ));
    }
    if s.end != ScanEndState::Done {
        #[allow(clippy::cast_precision_loss)] // bytes, shown
        out.push(check(
            Verdict::Warn,
            "read_bytes",
            s.read_bytes as f64,
            Some(s.planned_bytes as f64),
            format!(
                "the scan ended {} after {} of {} bytes{}",
                s.end,
                s.read_bytes,
                s.planned_bytes,
                s.error.as_ref().map_or(String::new(), |e| format!(": {e}"))
            ),
        ));
    }
}

/// The burn-in's rules on `t`, when it was burnt in: its bad blocks
/// (unwritable and unreadable), its mismatched blocks, and a burn-in that
/// did not go over its whole area, every pass (WARN: its blocks are not
/// all known; the error says why, a refused claim among them).
fn burn_checks(t: &TargetInfo, rules: &BurnRules, out: &mut Vec<Check>) {
    use crate::document::result::BurnEndState;
    let Some(b) = &t.burn_in else { return };
    let check = |verdict, figure: &str, value: f64, limit: Option<f64>, message: String| Check {
        rule: CheckRule::BurnIn,
        verdict,
        test: None,
        figure: Some(String::from(figure)),
        value: Some(value),
        limit,
        source: String::from("acceptance.burn_in"),
        message,
    };
    let first = |v: &[u64]| v.first().map_or(String::new(), |l| format!(", the first at LBA {l}"));
    #[allow(clippy::cast_precision_loss)] // counts, shown
    if let Some(v) = rules.bad.verdict() {
        let (w, r) = (b.unwritable_lbas.len(), b.unreadable_lbas.len());
        let mut all: Vec<u64> = b.unwritable_lbas.iter().chain(&b.unreadable_lbas).copied().collect();
        all.sort_unstable();
        out.push(check(
            if w + r == 0 { Verdict::Pass } else { v },
            "bad_lbas",
            (w + r) as f64,
            Some(0.0),
            format!("{w} unwritable and {r} unreadable block(s){}", first(&all)),
        ));
    }
    #[allow(clippy::cast_precision_loss)] // counts, shown
    if let Some(v) = rules.mismatched.verdict() {
        let n = b.mismatched_lbas.len();
        out.push(check(
            if n == 0 { Verdict::Pass } else { v },
            "mismatched_lbas",
            n as f64,
            Some(0.0),
            format!(
                "{n} block(s) read back with other contents than written{}",
                first(&b.mismatched_lbas)
            ),
        ));
    }
    if b.end != BurnEndState::Done {
        let (done, planned) = b.done_and_planned();
        #[allow(clippy::cast_precision_loss)] // bytes, shown
        out.push(check(
            Verdict::Warn,
            "burn_in_bytes",
            done as f64,
            Some(planned as f64),
            format!(
                "the burn-in ended {} after {done} of {planned} bytes written and read back{}",
                b.end,
                b.error.as_ref().map_or(String::new(), |e| format!(": {e}"))
            ),
        ));
    }
}

/// Preconditioning on `t`, when it ran: steady state reached passes;
/// none within the round limit, or preconditioning that did not run to
/// its end (refused, stopped, a failed write), gives `v`, with the last
/// window's spread when there was one.
fn steady_check(t: &TargetInfo, v: Verdict, out: &mut Vec<Check>) {
    use crate::document::result::PreconditionEnd;
    let Some(p) = &t.precondition else { return };
    let rounds = p.rounds.len();
    let window = match (p.window_mean, p.window_range, p.window_fit_excursion) {
        (Some(m), Some(r), Some(f)) if m > 0.0 => format!(
            "; the last {} rounds spread {:.1}% of their mean and their fitted line moved {:.1}% (limits {}% and {}%)",
            p.window,
            r * 100.0 / m,
            f * 100.0 / m,
            p.range_pct,
            p.slope_pct
        ),
        _ => String::new(),
    };
    let (verdict, message) = match p.end {
        PreconditionEnd::Steady => (
            Verdict::Pass,
            format!("steady state at round {}{window}", p.steady_round.unwrap_or(0)),
        ),
        PreconditionEnd::RoundLimit => (v, format!("no steady state within {rounds} rounds{window}")),
        PreconditionEnd::Stopped | PreconditionEnd::Error => (
            v,
            format!(
                "preconditioning ended {} after {rounds} rounds{}",
                p.end,
                p.error.as_ref().map_or(String::new(), |e| format!(": {e}"))
            ),
        ),
    };
    #[allow(clippy::cast_precision_loss)] // a few rounds
    out.push(Check {
        rule: CheckRule::SteadyState,
        verdict,
        test: None,
        figure: Some(p.figure.clone()),
        value: Some(rounds as f64),
        limit: Some(f64::from(p.max_rounds)),
        source: String::from("acceptance.steady_state"),
        message,
    });
}

/// Each test on `t` that waited for steady state before it was measured
/// (`ss`): attained by every job of every step passes; a wait that reached
/// its `ss_max` (or was stopped) gives `v`, with the last window's
/// criterion against its limit.
fn test_steady_checks(doc: &ResultDoc, t: &TargetInfo, v: Verdict, out: &mut Vec<Check>) {
    for test in tests_on(doc, t) {
        let Some(spec) = &test.params.steady else { continue };
        let waits: Vec<(&str, &crate::document::result::SteadyWait)> = test
            .steps
            .iter()
            .flat_map(|st| st.steady_state.iter().map(move |w| (st.label.as_str(), w)))
            .collect();
        if waits.is_empty() {
            continue;
        }
        let unit = if spec.ss.pct { "%" } else { "" };
        let missed = waits.iter().find(|(_, w)| !w.attained);
        let longest = waits.iter().map(|(_, w)| w.wait_ns).max().unwrap_or(0);
        let (verdict, message, value) = match missed {
            None => (
                Verdict::Pass,
                format!("{}: steady state ({}) after {:.1} s", test.name, spec.ss, secs(longest)),
                longest,
            ),
            Some((label, w)) => {
                let last = w.window.map_or(String::from("; no window filled"), |j| {
                    format!("; the last window's {} was {:.3}{unit}", spec.ss.name(), j.criterion)
                });
                (
                    v,
                    format!(
                        "{}: step {label} reached no steady state ({}) within {:.1} s{last}; measured anyway",
                        test.name,
                        spec.ss,
                        secs(w.wait_ns)
                    ),
                    w.wait_ns,
                )
            }
        };
        #[allow(clippy::cast_precision_loss)] // nanoseconds, shown
        out.push(check(
            CheckRule::SteadyState,
            verdict,
            Some(&test.name),
            "steady_state_wait_ns",
            Some(value as f64),
            Some(spec.ss_max.0 as f64),
            "acceptance.steady_state",
            message,
        ));
    }
}

/// Nanoseconds as seconds, to show.
#[allow(clippy::cast_precision_loss)] // shown with one decimal
fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// Whether a test of `workload` reads, writes, or both, in its main step.
/// Every workload that writes ([`Workload::writes`]) writes in its main
/// step; of those only `rand_rw` reads too.
pub const fn directions(workload: Workload) -> (bool, bool) {
    let writes = workload.writes();
    (!writes || matches!(workload, Workload::RandRw), writes)
}

#[cfg(test)]
mod tests;
