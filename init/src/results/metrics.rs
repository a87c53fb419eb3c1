//! A run watched live: its state, progress, figures and verdicts pushed to
//! a Prometheus Pushgateway (the config's `metrics_url`,
//! `bootbench.metrics_url=`) in the text exposition format, with PUT to
//! `<metrics_url>/metrics/job/bootbench/instance/<machine>` every
//! `metrics_interval` and once at the end (docs/fleets.md, "Prometheus
//! and Grafana").
//!
//! The pushes come from a thread of their own: the run hands over its
//! document after each test ([`Pusher::update`]) and the tests' fractions
//! done go to [`LIVE`]; neither waits on the network. A push that fails is
//! tried again at the next interval; the first failure and the recovery
//! are said on the console, never the URL's query. PUT replaces every
//! series of the machine's group, so what the gateway holds is always one
//! whole view of the run.

use std::fmt::Write as _;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bench_core::document::result::{ResultDoc, RunStatus, TargetInfo, Verdict};

use crate::net::http::{Client, Url};

/// `metrics_interval` without one in the config.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(10);

/// The intervals a config may ask for.
pub const INTERVALS: std::ops::RangeInclusive<Duration> = Duration::from_secs(1)..=Duration::from_secs(3600);

/// How long the last push (the verdicts) may take, retries included.
pub const FINAL_BOUND: Duration = Duration::from_secs(15);

/// The Pushgateway job every machine pushes under.
pub const JOB: &str = "bootbench";

/// The most characters of a reason in a label.
const REASON_MAX: usize = 200;

/// Check a `metrics_url`: an http(s) URL without user name, password,
/// query or fragment (a Pushgateway's base URL: the path to the group is
/// appended), parsed. The error quotes it as [`bench_core::vocab::url::redact`]
/// shows it.
pub fn check_url(url: &str) -> Result<Url, String> {
    let parsed = Url::parse(url)?;
    if url.contains(['?', '#']) {
        return Err(format!(
            "{:?}: a query or fragment (not shown); expected a Pushgateway's base URL such as \"http://10.0.2.2:9091\"",
            bench_core::vocab::url::redact(url)
        ));
    }
    Ok(parsed)
}

/// The URL of the machine's group under `base` (a checked `metrics_url`).
pub fn group_url(base: &Url, machine: &str) -> String {
    let base = format!("{}{}", base.origin(), base.target);
    let base = base.trim_end_matches('/');
    if machine
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !machine.is_empty()
    {
        format!("{base}/metrics/job/{JOB}/instance/{machine}")
    } else {
        // The Pushgateway's encoding for a value a path segment cannot hold.
        format!(
            "{base}/metrics/job/{JOB}/instance@base64/{}",
            base64url(machine.as_bytes())
        )
    }
}

/// Base64 with the URL-safe alphabet and padding, as the Pushgateway
/// decodes `@base64` segments (`=` for an empty value).
fn base64url(b: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    if b.is_empty() {
        return "=".to_string();
    }
    let mut out = String::new();
    for c in b.chunks(3) {
        let n =
            (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(char::from(A[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// One test's fraction done while it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Running {
    /// The target's path.
    pub target: String,
    /// The test's name, or the whole-disk pass (`surface_scan`, `burn_in`,
    /// `precondition`).
    pub test: String,
    /// 0 to 1.
    pub done: f64,
    /// A whole-disk pass's bad blocks so far: unwritable, unreadable,
    /// mismatched (`None` for a benchmark, or before its first report).
    pub found: Option<[u64; 3]>,
}

/// The tests running now, as the runners report them: what a watcher
/// reads from another thread. One per process ([`LIVE`]); every run in
/// the process reports to it, and a watcher picks the targets it knows.
#[derive(Debug)]
pub struct Live(Mutex<Vec<Running>>);

impl Default for Live {
    fn default() -> Live {
        Live::new()
    }
}

/// The process's [`Live`].
pub static LIVE: Live = Live::new();

impl Live {
    /// Nothing running.
    pub const fn new() -> Live {
        Live(Mutex::new(Vec::new()))
    }

    /// `test` on `target` is `done` (0 to 1) through.
    pub fn set(&self, target: &str, test: &str, done: f64) {
        let mut v = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let done = if done.is_finite() { done.clamp(0.0, 1.0) } else { 0.0 };
        match v.iter_mut().find(|r| r.target == target && r.test == test) {
            Some(r) => r.done = done,
            None => v.push(Running {
                target: target.to_string(),
                test: test.to_string(),
                done,
                found: None,
            }),
        }
    }

    /// The whole-disk pass `test` on `target` found these bad blocks so
    /// far (unwritable, unreadable, mismatched).
    pub fn found(&self, target: &str, test: &str, found: [u64; 3]) {
        let mut v = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match v.iter_mut().find(|r| r.target == target && r.test == test) {
            Some(r) => r.found = Some(found),
            None => v.push(Running {
                target: target.to_string(),
                test: test.to_string(),
                done: 0.0,
                found: Some(found),
            }),
        }
    }

    /// `test` on `target` is no longer running.
    pub fn end(&self, target: &str, test: &str) {
        let mut v = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        v.retain(|r| !(r.target == target && r.test == test));
    }

    /// What runs now.
    pub fn now(&self) -> Vec<Running> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// What a run's metrics are made of besides its document.
#[derive(Clone, Debug)]
pub struct Facts {
    /// The machine's name (`bench_core::boot::stick::machine_name`).
    pub machine: String,
    /// The plan's id, in an unattended run.
    pub plan_id: Option<String>,
    /// How often the metrics are pushed.
    pub interval: Duration,
    /// Every test the plan runs, as (target path, test name), the
    /// whole-disk passes (`surface_scan`, `burn_in`, `precondition`)
    /// included: what the run's progress is the mean of.
    pub planned: Vec<(String, String)>,
}

/// The run's state in the metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Tests still to come.
    Running,
    /// Over, as its document says.
    Ended(RunStatus),
}

impl State {
    /// The `state` label's values, in order.
    const NAMES: [&'static str; 4] = ["running", "ok", "error", "interrupted"];

    fn name(self) -> &'static str {
        match self {
            State::Running => "running",
            State::Ended(RunStatus::Ok) => "ok",
            State::Ended(RunStatus::Error) => "error",
            State::Ended(RunStatus::Interrupted) => "interrupted",
        }
    }
}

/// A metric family: its samples under one HELP and TYPE.
struct Family {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    samples: Vec<(String, f64)>,
}

/// The families in the order they are written.
struct Families(Vec<Family>);

impl Families {
    fn add(&mut self, name: &'static str, kind: &'static str, help: &'static str, labels: &[(&str, &str)], v: f64) {
        if !v.is_finite() {
            return;
        }
        let mut l = String::new();
        for (i, (k, val)) in labels.iter().enumerate() {
            if i > 0 {
                l.push(',');
            }
            let _ = write!(l, "{k}=\"{}\"", escape(val));
        }
        let s = (l, v);
        match self.0.iter_mut().find(|f| f.name == name) {
            Some(f) => f.samples.push(s),
            None => self.0.push(Family {
                name,
                kind,
                help,
                samples: vec![s],
            }),
        }
    }

    fn text(&self) -> String {
        let mut out = String::new();
        for f in &self.0 {
            let _ = writeln!(out, "# HELP {} {}", f.name, f.help);
            let _ = writeln!(out, "# TYPE {} {}", f.name, f.kind);
            for (l, v) in &f.samples {
                let _ = writeln!(out, "{}{{{l}}} {}", f.name, number(*v));
            }
        }
        out
    }
}

/// A label value as the text format writes it: `\`, `"` and newlines escaped.
fn escape(v: &str) -> String {
    let mut o = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o
}

/// A sample's value: an integer without a fraction, else Rust's shortest
/// exact form (both Go's `ParseFloat` reads).
fn number(v: f64) -> String {
    #[allow(clippy::cast_possible_truncation)] // only when it is exact
    if v.fract() == 0.0 && v.abs() < 9e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// The first `max` characters of `s`, then `...` when it was longer.
fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

fn secs(ns: u64) -> f64 {
    #[allow(clippy::cast_precision_loss)] // a figure
    {
        ns as f64 / 1e9
    }
}

/// The metrics of a run: `doc` its document so far (or at the end),
/// `running` what runs now ([`Live::now`]), `state` whether it is over.
/// The text exposition format (version 0.0.4), every series labelled with
/// the machine, and a disk's with its path, serial and model.
pub fn render(facts: &Facts, doc: &ResultDoc, running: &[Running], state: State) -> String {
    let v = View::new(facts, doc, running, state);
    let mut f = Families(Vec::new());
    v.run(&mut f);
    v.progress(&mut f);
    v.disks(&mut f);
    v.figures(&mut f);
    v.health_and_blocks(&mut f);
    v.verdicts(&mut f);
    f.text()
}

/// A disk's labels: machine, device, serial, model.
type DiskLabels = [(&'static str, String); 4];

/// What [`render`] reads, with the lookups it makes once.
struct View<'a> {
    facts: &'a Facts,
    doc: &'a ResultDoc,
    running: &'a [Running],
    state: State,
    /// The run is over: every test at 1.
    over: bool,
    /// (target, test) of every test in the document, and every
    /// whole-disk pass with its record.
    ended: std::collections::BTreeSet<(&'a str, &'a str)>,
    by_path: std::collections::BTreeMap<&'a str, &'a TargetInfo>,
}

impl<'a> View<'a> {
    fn new(facts: &'a Facts, doc: &'a ResultDoc, running: &'a [Running], state: State) -> View<'a> {
        let mut ended = std::collections::BTreeSet::new();
        for t in &doc.tests {
            ended.insert((t.target.as_str(), t.name.as_str()));
        }
        for t in &doc.targets {
            let p = t.path.as_str();
            if t.surface_scan.is_some() {
                ended.insert((p, "surface_scan"));
            }
            if t.burn_in.is_some() {
                ended.insert((p, "burn_in"));
            }
            if t.precondition.is_some() {
                ended.insert((p, "precondition"));
            }
        }
        View {
            facts,
            doc,
            running,
            state,
            over: matches!(state, State::Ended(_)),
            ended,
            by_path: doc.targets.iter().map(|t| (t.path.as_str(), t)).collect(),
        }
    }

    fn machine(&self) -> &str {
        &self.facts.machine
    }

    /// A planned test's fraction done: 1 once it ended, the runner's while
    /// it runs, 0 before.
    fn progress_of(&self, target: &str, test: &str) -> f64 {
        if self.over || self.ended.contains(&(target, test)) {
            return 1.0;
        }
        self.running
            .iter()
            .find(|r| r.target == target && r.test == test)
            .map_or(0.0, |r| r.done)
    }

    fn disk(&self, path: &str) -> DiskLabels {
        let t = self.by_path.get(path);
        [
            ("machine", self.machine().to_string()),
            ("device", path.to_string()),
            ("serial", t.and_then(|t| t.serial.clone()).unwrap_or_default()),
            ("model", t.and_then(|t| t.model.clone()).unwrap_or_default()),
        ]
    }

    /// A sample of a disk's series, with `extra` labels after the disk's.
    #[allow(clippy::too_many_arguments)]
    fn add(
        &self,
        f: &mut Families,
        name: &'static str,
        kind: &'static str,
        help: &'static str,
        disk: &DiskLabels,
        extra: &[(&'static str, &str)],
        v: f64,
    ) {
        let l: Vec<(&str, &str)> = disk
            .iter()
            .map(|(k, v)| (*k, v.as_str()))
            .chain(extra.iter().copied())
            .collect();
        f.add(name, kind, help, &l, v);
    }

    /// The run's own series: what it is, its state, when it started, its
    /// bound, how often it pushes.
    fn run(&self, f: &mut Families) {
        let (m, doc, facts) = (self.machine(), self.doc, self.facts);
        let profile = doc.run.profile.as_deref().unwrap_or("");
        let plan_id = facts.plan_id.as_deref().or(doc.run.plan_id.as_deref()).unwrap_or("");
        f.add(
            "bootbench_run_info",
            "gauge",
            "The run: bootbench's version, the profile and the plan's id (1).",
            &[
                ("machine", m),
                ("version", &doc.tool.version),
                ("profile", profile),
                ("plan_id", plan_id),
            ],
            1.0,
        );
        for s in State::NAMES {
            f.add(
                "bootbench_run_state",
                "gauge",
                "The run's state: 1 for the current one (running, then ok, error or interrupted), 0 for the others.",
                &[("machine", m), ("state", s)],
                if s == self.state.name() { 1.0 } else { 0.0 },
            );
        }
        f.add(
            "bootbench_run_start_time_seconds",
            "gauge",
            "When the run started, seconds since the Unix epoch.",
            &[("machine", m)],
            secs(doc.run.started_unix_ns),
        );
        if let Some(b) = doc.run.bound_ns {
            f.add(
                "bootbench_run_bound_seconds",
                "gauge",
                "The longest the run may take, as stated at its start, seconds.",
                &[("machine", m)],
                secs(b),
            );
        }
        f.add(
            "bootbench_push_interval_seconds",
            "gauge",
            "How often this machine pushes while it runs, seconds (metrics_interval).",
            &[("machine", m)],
            facts.interval.as_secs_f64(),
        );
    }

    /// The run's progress and its tests' counts.
    #[allow(clippy::cast_precision_loss)] // counts of tests
    fn progress(&self, f: &mut Families) {
        let m = self.machine();
        let planned = &self.facts.planned;
        let done_sum: f64 = planned.iter().map(|(t, n)| self.progress_of(t, n)).sum();
        let ended_n = planned
            .iter()
            .filter(|(t, n)| self.ended.contains(&(t.as_str(), n.as_str())))
            .count();
        let ratio = if planned.is_empty() || self.over {
            1.0
        } else {
            done_sum / planned.len() as f64
        };
        f.add(
            "bootbench_run_progress_ratio",
            "gauge",
            "The run's progress: the mean of its planned tests' fractions done (0 to 1).",
            &[("machine", m)],
            ratio,
        );
        f.add(
            "bootbench_run_planned_tests",
            "gauge",
            "Tests in the plan, the whole-disk passes included.",
            &[("machine", m)],
            planned.len() as f64,
        );
        f.add(
            "bootbench_run_ended_tests",
            "gauge",
            "Planned tests ended so far.",
            &[("machine", m)],
            ended_n as f64,
        );
    }

    /// Each target, its size, and each planned test's progress on it.
    fn disks(&self, f: &mut Families) {
        for t in &self.doc.targets {
            let d = self.disk(&t.path);
            let extra = [
                ("firmware", t.firmware.as_deref().unwrap_or("")),
                ("transport", t.transport.as_deref().unwrap_or("")),
                ("kind", t.kind.name()),
            ];
            self.add(
                f,
                "bootbench_disk_info",
                "gauge",
                "A target of the run, with its firmware, transport and kind (1).",
                &d,
                &extra,
                1.0,
            );
            #[allow(clippy::cast_precision_loss)]
            self.add(
                f,
                "bootbench_disk_size_bytes",
                "gauge",
                "The target's size, bytes.",
                &d,
                &[],
                t.size_bytes as f64,
            );
        }
        const PROGRESS_HELP: &str = "A planned test's fraction done on its target (0 to 1; 1 once it ended).";
        let mut seen = std::collections::BTreeSet::new();
        for (target, test) in &self.facts.planned {
            seen.insert((target.as_str(), test.as_str()));
            let d = self.disk(target);
            let v = self.progress_of(target, test);
            self.add(
                f,
                "bootbench_test_progress_ratio",
                "gauge",
                PROGRESS_HELP,
                &d,
                &[("test", test)],
                v,
            );
        }
        for r in self.running {
            // Work not in the plan's list (a disk's benchmarks at once) on a
            // target of this run.
            if self.by_path.contains_key(r.target.as_str()) && !seen.contains(&(r.target.as_str(), r.test.as_str())) {
                let d = self.disk(&r.target);
                let v = if self.over { 1.0 } else { r.done };
                self.add(
                    f,
                    "bootbench_test_progress_ratio",
                    "gauge",
                    PROGRESS_HELP,
                    &d,
                    &[("test", &r.test)],
                    v,
                );
            }
        }
    }

    /// Each test's headline figures, once it ended ok.
    fn figures(&self, f: &mut Families) {
        for t in &self.doc.tests {
            if !matches!(t.status, bench_core::document::result::Status::Ok) {
                continue;
            }
            let d = self.disk(&t.target);
            let s = &t.summary;
            for (name, help, v) in [
                (
                    "bootbench_test_read_bytes_per_second",
                    "The test's read throughput (its main step), bytes per second.",
                    s.read_bytes_per_sec,
                ),
                (
                    "bootbench_test_write_bytes_per_second",
                    "The test's write throughput (its main step), bytes per second.",
                    s.write_bytes_per_sec,
                ),
                (
                    "bootbench_test_read_iops",
                    "The test's reads completed per second (its main step).",
                    s.read_iops,
                ),
                (
                    "bootbench_test_write_iops",
                    "The test's writes completed per second (its main step).",
                    s.write_iops,
                ),
                (
                    "bootbench_test_latency_mean_seconds",
                    "The mean latency of the test's requests (its main step), seconds.",
                    s.lat_mean_ns.map(|ns| ns / 1e9),
                ),
            ] {
                if let Some(v) = v {
                    self.add(f, name, "gauge", help, &d, &[("test", &t.name)], v);
                }
            }
        }
    }

    /// A running pass's bad blocks so far.
    fn live_found(&self, path: &str, test: &str) -> Option<[u64; 3]> {
        self.running
            .iter()
            .find(|r| r.target == path && r.test == test)
            .and_then(|r| r.found)
    }

    /// Temperatures, and the bad blocks of scans and burn-ins (while they
    /// run, then their records').
    fn health_and_blocks(&self, f: &mut Families) {
        for t in &self.doc.targets {
            let d = self.disk(&t.path);
            if let Some(h) = &t.health {
                self.temperatures(f, &d, h);
            }
            let n = |v: &Vec<u64>| u64::try_from(v.len()).unwrap_or(u64::MAX);
            let scan = match &t.surface_scan {
                Some(s) => Some(n(&s.unreadable_lbas)),
                None => self.live_found(&t.path, "surface_scan").map(|f| f[1]),
            };
            #[allow(clippy::cast_precision_loss)] // block counts
            if let Some(u) = scan {
                self.add(
                    f,
                    "bootbench_surface_scan_unreadable_blocks_total",
                    "counter",
                    "Logical blocks the surface scan could not read (after its retries), so far while it runs.",
                    &d,
                    &[],
                    u as f64,
                );
            }
            let burn = match &t.burn_in {
                Some(b) => Some([n(&b.unwritable_lbas), n(&b.unreadable_lbas), n(&b.mismatched_lbas)]),
                None => self.live_found(&t.path, "burn_in"),
            };
            let Some([w, r, m]) = burn else { continue };
            for (name, help, n) in [
                (
                    "bootbench_burn_in_unwritable_blocks_total",
                    "Logical blocks the burn-in could not write (after its retries), so far while it runs.",
                    w,
                ),
                (
                    "bootbench_burn_in_unreadable_blocks_total",
                    "Logical blocks the burn-in could not read back (after its retries), so far while it runs.",
                    r,
                ),
                (
                    "bootbench_burn_in_mismatched_blocks_total",
                    "Logical blocks the burn-in read back different from what it wrote, so far while it runs.",
                    m,
                ),
            ] {
                #[allow(clippy::cast_precision_loss)]
                self.add(f, name, "counter", help, &d, &[], n as f64);
            }
        }
    }

    /// A disk's highest temperature in each test, and its latest reading.
    fn temperatures(&self, f: &mut Families, d: &DiskLabels, h: &bench_core::document::result::Health) {
        for tt in &h.tests {
            if let Some(c) = tt.max_temperature_c {
                self.add(
                    f,
                    "bootbench_test_max_temperature_celsius",
                    "gauge",
                    "The disk's highest temperature during the test, degrees Celsius.",
                    d,
                    &[("test", &tt.test)],
                    f64::from(c),
                );
            }
        }
        let latest = h
            .after
            .as_ref()
            .and_then(|a| a.temperature_c)
            .or_else(|| h.tests.iter().rev().find_map(|t| t.max_temperature_c))
            .or(h.before.temperature_c);
        if let Some(c) = latest {
            self.add(
                f,
                "bootbench_disk_temperature_celsius",
                "gauge",
                "The disk's latest temperature reading, degrees Celsius.",
                d,
                &[],
                f64::from(c),
            );
        }
    }

    /// The run's and each disk's verdict, and why a disk did not pass:
    /// only once the run is over.
    fn verdicts(&self, f: &mut Families) {
        let (true, Some(a)) = (self.over, &self.doc.acceptance) else {
            return;
        };
        for v in Verdict::ALL {
            f.add(
                "bootbench_run_verdict",
                "gauge",
                "The run's acceptance verdict (the worst of its disks'): 1 for it, 0 for the others.",
                &[("machine", self.machine()), ("verdict", v.name())],
                if *v == a.verdict { 1.0 } else { 0.0 },
            );
        }
        for tv in &a.targets {
            let d = self.disk(&tv.target);
            for v in Verdict::ALL {
                self.add(
                    f,
                    "bootbench_disk_verdict",
                    "gauge",
                    "The disk's acceptance verdict: 1 for it (pass, warn or fail), 0 for the others.",
                    &d,
                    &[("verdict", v.name())],
                    if *v == tv.verdict { 1.0 } else { 0.0 },
                );
            }
            if tv.verdict == Verdict::Pass {
                continue;
            }
            if let Some(c) = tv.checks.iter().find(|c| c.verdict == tv.verdict) {
                let reason = cut(&c.message, REASON_MAX);
                self.add(
                    f,
                    "bootbench_disk_reason_info",
                    "gauge",
                    "Why a disk did not pass: its first check of its verdict, the rule and the reason (1).",
                    &d,
                    &[
                        ("verdict", tv.verdict.name()),
                        ("rule", c.rule.name()),
                        ("reason", &reason),
                    ],
                    1.0,
                );
            }
        }
    }
}

/// What the pusher thread and the run share.
#[derive(Debug)]
struct Shared {
    /// The document so far, and whether the run is over.
    doc: Mutex<(ResultDoc, State)>,
    /// Rung when the run ends.
    bell: Condvar,
    /// Pushes tried and failed, and the last failure.
    tally: Mutex<Tally>,
}

/// How the pushes went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Pushes the gateway took.
    pub sent: u32,
    /// Pushes that failed.
    pub failed: u32,
    /// Why the last failed one failed.
    pub last_error: Option<String>,
}

impl Tally {
    /// How the pushes went, in one line.
    pub fn line(&self) -> String {
        match &self.last_error {
            None => format!("metrics: {} push(es) sent", self.sent),
            Some(e) => format!(
                "metrics: {} push(es) sent, {} failed (the last: {e})",
                self.sent, self.failed
            ),
        }
    }
}

/// The pushes of one run, on their thread.
#[derive(Debug)]
pub struct Pusher {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    url: String,
}

/// Where the pusher's thread says what happened (the console's log).
pub type Say = fn(&str);

impl Pusher {
    /// Start pushing `doc` (a document with the run's targets, no tests
    /// yet) and what follows to `base` (a checked `metrics_url`) through
    /// `client`, every `facts.interval`, the first push at once. `say` gets
    /// the first failure and the recovery after failures.
    pub fn start(base: &Url, client: Client, facts: Facts, doc: ResultDoc, say: Say) -> Result<Pusher, String> {
        let text = group_url(base, &facts.machine);
        let url = Url::parse(&text)?;
        let shown = url.redacted();
        // The first push is of the run as it starts, however soon it ends:
        // rendered here, not when the thread gets to it.
        let first = render(&facts, &doc, &LIVE.now(), State::Running);
        let shared = Arc::new(Shared {
            doc: Mutex::new((doc, State::Running)),
            bell: Condvar::new(),
            tally: Mutex::new(Tally::default()),
        });
        let s2 = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("metrics".to_string())
            .spawn(move || push_loop(&s2, &client, &url, &facts, &first, say))
            .map_err(|e| format!("metrics: no thread: {e}"))?;
        Ok(Pusher {
            shared,
            thread: Some(thread),
            url: shown,
        })
    }

    /// Where the pushes go, as it may be shown.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The document so far, for the next push.
    pub fn update(&self, doc: &ResultDoc) {
        let mut g = self.shared.doc.lock().unwrap_or_else(PoisonError::into_inner);
        if g.1 == State::Running {
            g.0 = doc.clone();
        }
    }

    /// The run is over with `doc`: push it (the verdicts) within
    /// [`FINAL_BOUND`], stop the thread, and say how the pushes went.
    pub fn finish(mut self, doc: &ResultDoc) -> Tally {
        {
            let mut g = self.shared.doc.lock().unwrap_or_else(PoisonError::into_inner);
            *g = (doc.clone(), State::Ended(doc.run.status));
        }
        self.shared.bell.notify_all();
        // A push in flight to a gateway that does not answer may hold the
        // thread past the bound: it is then left behind, not waited for.
        let start = Instant::now();
        if let Some(t) = self.thread.take() {
            while !t.is_finished() && start.elapsed() < FINAL_BOUND + Duration::from_secs(1) {
                std::thread::sleep(Duration::from_millis(20));
            }
            if t.is_finished() {
                let _ = t.join();
            } else {
                let mut g = self.shared.tally.lock().unwrap_or_else(PoisonError::into_inner);
                g.failed += 1;
                g.last_error = Some(format!(
                    "the last push had not ended after {} s; left behind",
                    FINAL_BOUND.as_secs()
                ));
            }
        }
        self.shared.tally.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl Drop for Pusher {
    /// A pusher dropped without [`Pusher::finish`] (a panic) stops its
    /// thread without a last push.
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            {
                let mut g = self.shared.doc.lock().unwrap_or_else(PoisonError::into_inner);
                g.1 = State::Ended(RunStatus::Error);
            }
            self.shared.bell.notify_all();
            drop(t);
        }
    }
}

/// One PUT of `body`; why it failed.
fn put(client: &Client, url: &Url, body: &str) -> Result<(), String> {
    match client.request("PUT", url, Some(("text/plain; version=0.0.4", body.as_bytes()))) {
        Ok(r) if (200..300).contains(&r.status) => Ok(()),
        Ok(r) => Err(format!(
            "the gateway answered {} {}: {}",
            r.status,
            r.reason,
            cut(String::from_utf8_lossy(&r.body).trim(), 200)
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// Push `first` at once, then the document every interval until the run
/// ends, then the end.
fn push_loop(shared: &Shared, client: &Client, url: &Url, facts: &Facts, first: &str, say: Say) {
    let shown = url.redacted();
    let mut failing = false;
    let mut record = |r: Result<(), String>, say: Say| {
        let mut t = shared.tally.lock().unwrap_or_else(PoisonError::into_inner);
        match r {
            Ok(()) => {
                t.sent += 1;
                if failing {
                    say(&format!(
                        "metrics: PUT {shown}: pushing again after {} failed push(es)",
                        t.failed
                    ));
                }
                failing = false;
            }
            Err(e) => {
                t.failed += 1;
                if !failing {
                    say(&format!(
                        "metrics: PUT {shown}: {e}; tried again every {} s",
                        facts.interval.as_secs()
                    ));
                }
                failing = true;
                t.last_error = Some(e);
            }
        }
    };
    record(put(client, url, first), say);
    let mut next = Instant::now() + facts.interval;
    loop {
        let (body, state) = {
            let mut g = shared.doc.lock().unwrap_or_else(PoisonError::into_inner);
            while g.1 == State::Running {
                let left = next.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                g = shared
                    .bell
                    .wait_timeout(g, left)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            (render(facts, &g.0, &LIVE.now(), g.1), g.1)
        };
        if state != State::Running {
            // The last push: again after 1, 2, 4 s within the bound.
            let start = Instant::now();
            let mut delay = Duration::from_secs(1);
            loop {
                let r = put(client, url, &body);
                let ok = r.is_ok();
                record(r, say);
                if ok || start.elapsed() + delay >= FINAL_BOUND {
                    return;
                }
                std::thread::sleep(delay);
                delay *= 2;
            }
        }
        record(put(client, url, &body), say);
        next += facts.interval;
        if next < Instant::now() {
            next = Instant::now() + facts.interval;
        }
    }
}

#[cfg(test)]
mod tests;
