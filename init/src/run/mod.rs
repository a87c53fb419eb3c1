//! The run: one executor for a validated plan, called by the live command
//! ([`crate::cli`]) and by the unattended run of PID 1's worker
//! ([`crate::boot::unattended`]). It runs every test on every disk, then
//! assembles the stacks the plan asks for and runs theirs ([`stacks`]),
//! then the all-at-once run, on the engines of [`engine`], and returns the
//! result document; faults skip what they touch and the run goes on.

pub mod accounting;
pub mod bound;
pub mod burnin;
pub mod countdown;
pub mod engine;
pub mod kmsg;
pub mod link;
pub mod parallel;
pub mod pass;
pub mod placement;
pub mod pmqos;
pub mod precondition;
pub mod purge;
pub mod scan;
pub mod selftest;
pub mod stacks;
pub mod telemetry;
pub mod zones;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bench_core::document::result::{
    Health, Host, ResultDoc, RunInfo, RunStatus, Status, Summary, TargetInfo, TargetKind, TestResult, Tool, SCHEMA,
};
use bench_core::engine::runner::{run_test, Progress, SerialRunner, StepRunner, Stop, StopReason};
use bench_core::spec::Step;

use crate::disks::{capacity, health, identity};
use crate::plan::{Action, Plan, PlanItem};
use crate::results::metrics::LIVE;
use crate::run::engine::ThreadedRunner;
use crate::run::kmsg::KernelLog;
use crate::run::pass::Pass;
use bound::{bound_line, test_bound};
pub use bound::{run_bound, test_deadline, STACK_ALLOWANCE};

/// Nanoseconds since the Unix epoch (0 if the clock is before it).
fn now_unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| u64::try_from(d.as_nanos()).ok())
        .unwrap_or(0)
}

/// A result document with no tests yet: the run, the host, the targets.
pub fn new_doc(
    profile: Option<String>,
    config_source: &str,
    seed: u64,
    simulated: bool,
    targets: Vec<TargetInfo>,
) -> ResultDoc {
    ResultDoc {
        schema: SCHEMA.to_string(),
        tool: Tool {
            name: "bootbench".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        },
        run: RunInfo {
            profile,
            config_source: config_source.to_string(),
            started_unix_ns: now_unix_ns(),
            duration_ns: 0,
            seed,
            simulated,
            status: RunStatus::Ok,
            error: None,
            bound_ns: None,
            plan_id: None,
            cpu_dma_latency: None,
        },
        host: Host {
            // A simulated disk has no node to follow.
            numa_nodes: if simulated {
                Vec::new()
            } else {
                crate::disks::numa::nodes(crate::sysfs::root())
            },
            ..identity::host()
        },
        targets,
        tests: Vec::new(),
        all_at_once: Vec::new(),
        analysis: Vec::new(),
        health_analysis: Vec::new(),
        acceptance: None,
        kernel_log: Vec::new(),
        kernel_log_status: None,
        attestation: None,
    }
}

/// Run a plan: every test on every target, target by target, with progress
/// lines through `progress` and the document so far through `after_test`
/// after each test. The live command and the unattended run both use this.
///
/// Faults do not stop the run (see [`execute_with`]): a target that is
/// absent or cannot be opened, or whose I/O hung, has its (remaining) tests
/// `skipped` with the reason, the other targets run, and `run.status` is
/// `error` at the end with every such reason in `run.error`.
pub fn execute(plan: &mut Plan, progress: &mut dyn FnMut(&str), after_test: &mut dyn FnMut(&ResultDoc)) -> ResultDoc {
    execute_with(
        plan,
        &mut stacks::Kernel,
        &stacks::LIVE,
        &engine::STOP,
        progress,
        after_test,
    )
}

/// Why tests after an interrupt do not run.
const NOT_RUN_INTERRUPTED: &str = "not run: the run was interrupted (SIGINT or SIGTERM)";

/// True once the user asked the whole run to stop.
fn interrupted(stop: &Stop) -> bool {
    stop.reason() == Some(StopReason::Interrupted)
}

/// [`execute`] with the stacks assembled by `backend`: first every disk's
/// tests, then the arrays and layers are assembled (in dependency order),
/// their tests run, and they are torn down (in reverse, also when a test or
/// a later stack failed; a stack that cannot be assembled skips its own
/// tests and those of the stacks on it, and the run goes on); then the
/// all-at-once run, if asked for; then the analysis.
///
/// The stacks this run assembles are registered in `reg` and it tears down
/// only those: the live command passes [`stacks::LIVE`], which its panic
/// hook empties; another run in the same process (the tests run many at
/// once) has its own.
///
/// An interrupt (`stop` set to [`StopReason::Interrupted`], by SIGINT or
/// SIGTERM) ends the running test after its requests in flight (status
/// `interrupted`, what it measured kept), skips every later test, assembles
/// no further stack, tears down those assembled, and sets `run.status` to
/// `interrupted`.
pub fn execute_with(
    plan: &mut Plan,
    backend: &mut dyn stacks::Backend,
    reg: &stacks::Registry,
    stop: &Stop,
    progress: &mut dyn FnMut(&str),
    after_test: &mut dyn FnMut(&ResultDoc),
) -> ResultDoc {
    let started = Instant::now();
    hidden_capacity(plan, progress);
    zones::before(plan, progress);
    link::before(plan, progress);
    placement::read_disks(plan);
    let mut doc = new_doc(
        plan.profile.clone(),
        &plan.config_source,
        plan.seed,
        plan.simulated,
        plan.targets.iter().map(|t| t.info.clone()).collect(),
    );
    let bound = run_bound(plan);
    doc.run.bound_ns = Some(bound.0);
    progress(&bound_line(plan, bound));
    // Before anything: whoever watches learns which disks may be written,
    // and has the countdown to stop it (an interrupt leaves every step
    // below not run).
    countdown::run(plan, stop, progress, &mut std::thread::sleep);
    if plan.self_test.is_some() && !interrupted(stop) {
        selftest::run(plan, stop, progress);
        refresh_targets(&mut doc, plan);
        after_test(&doc);
    }
    // From here on, the kernel's lines naming a disk are this run's.
    let mut kmsg = if plan.simulated {
        None
    } else {
        KernelLog::start(plan, progress)
    };
    let mut passes = Passes {
        plan: &mut *plan,
        doc: &mut doc,
        stop,
        progress: &mut *progress,
        kmsg: kmsg.as_mut(),
        after_test: &mut *after_test,
    };
    passes.run::<scan::Scan>();
    passes.run::<burnin::Burn>();
    passes.run::<precondition::Precondition>();
    // No CPU idles deeper than the limit while the tests run (a simulated
    // disk has no wake-up to wait for).
    let (wake_hold, wake) = if plan.simulated {
        (None, None)
    } else {
        let (h, rec) = pmqos::request(Path::new(pmqos::DEVICE), plan.cpu_dma_latency);
        progress(&pmqos::describe(&rec));
        (h, Some(rec))
    };
    let mut run = Run {
        kmsg,
        total: plan.items.len(),
        plan,
        stop,
        doc,
        bad: Vec::new(),
        failure: None,
        progress,
        after_test,
    };
    let disks: Vec<usize> = (0..run.plan.targets.len()).filter(|ti| run.plan.is_disk(*ti)).collect();
    if run.plan.parallel {
        run.disks_at_once(&disks);
    } else {
        for ti in disks {
            run.disk(ti);
        }
    }
    if !run.plan.stacks.is_empty() {
        run.stacks(backend, reg);
    }
    let Run {
        plan,
        mut doc,
        bad,
        failure,
        progress,
        mut kmsg,
        ..
    } = run;
    if plan.all_at_once && failure.is_none() && !interrupted(stop) {
        // A failed disk is left out of the all-at-once run.
        for it in plan.items.iter_mut() {
            if let Some((_, why)) = bad.iter().find(|(t, _)| *t == it.target) {
                it.action = Action::Skip(why.clone());
            }
        }
        doc.all_at_once = stacks::all_at_once(plan, stop, progress, kmsg.as_mut());
    }
    // The last test is over: the kernel withdraws the request.
    drop(wake_hold);
    doc.run.cpu_dma_latency = wake;
    label_written(plan, &doc, &bad, progress);
    zones::after(plan, &mut doc, &bad, progress);
    link::after(plan, &mut doc, &bad, progress);
    if let Some(k) = kmsg {
        let (lines, status) = k.finish(progress);
        doc.kernel_log = lines;
        doc.kernel_log_status = Some(status);
    }
    doc.analysis = bench_core::verdict::analysis::analyze(&doc);
    doc.health_analysis = bench_core::verdict::analysis::analyze_health(&doc);
    doc.acceptance = Some(bench_core::verdict::acceptance::evaluate(&doc, &plan.acceptance));

    doc.run.duration_ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let mut errors: Vec<String> = bad.into_iter().map(|(_, why)| why).collect();
    errors.extend(failure);
    set_status(&mut doc, &errors, stop);
    doc
}

/// The run's status: an error with `errors` if there are any, else
/// interrupted if it was, else as it is (ok).
fn set_status(doc: &mut ResultDoc, errors: &[String], stop: &Stop) {
    if !errors.is_empty() {
        doc.run.status = RunStatus::Error;
        doc.run.error = Some(errors.join("; "));
    } else if interrupted(stop) {
        doc.run.status = RunStatus::Interrupted;
        doc.run.error = Some(
            "interrupted by the user (SIGINT or SIGTERM): the running test was stopped, later tests were not run"
                .to_string(),
        );
    }
}

/// What the whole-disk passes before the benchmarks run with.
struct Passes<'a> {
    plan: &'a mut Plan,
    doc: &'a mut ResultDoc,
    stop: &'a Stop,
    progress: &'a mut dyn FnMut(&str),
    kmsg: Option<&'a mut KernelLog>,
    after_test: &'a mut dyn FnMut(&ResultDoc),
}

impl Passes<'_> {
    /// Run the plan's pass of kind `P`, if it has one and the run was not
    /// interrupted, and hand on the document with its records.
    fn run<P: Pass>(&mut self) {
        if P::plan(self.plan).is_none() || interrupted(self.stop) {
            return;
        }
        pass::run::<P>(self.plan, self.stop, self.progress, self.kmsg.as_deref_mut());
        refresh_targets(self.doc, self.plan);
        (self.after_test)(self.doc);
    }
}

/// A run's state, passed down once: the plan, the document so far, the
/// stop, where the progress lines and each test's document go, and what
/// failed so far.
struct Run<'a> {
    plan: &'a mut Plan,
    stop: &'a Stop,
    doc: ResultDoc,
    /// How many tests the plan has (for `[test i/total]`).
    total: usize,
    /// Targets that failed (absent, cannot be opened, hung), with why:
    /// their remaining tests are skipped, nothing is built on them, the run
    /// goes on.
    bad: Vec<(usize, String)>,
    /// What stopped the stacks' part (a teardown that failed, a write
    /// beneath a read-only stack): later tests are not run.
    failure: Option<String>,
    progress: &'a mut dyn FnMut(&str),
    after_test: &'a mut dyn FnMut(&ResultDoc),
    /// The kernel's log, read at each test's edges and progress reports.
    kmsg: Option<KernelLog>,
}

impl Run<'_> {
    /// Every test of target `ti` skipped for `reason`, each said on the
    /// console when `say`, then the document reported.
    fn skip_all(&mut self, ti: usize, reason: &str, say: bool) {
        let path = self.plan.targets[ti].info.path.clone();
        for (i, item) in items_of(self.plan, ti) {
            if say {
                (self.progress)(&format!(
                    "[test {}/{}] {} on {path}: skipped: {reason}",
                    i + 1,
                    self.total,
                    item.spec.name
                ));
            }
            self.doc.tests.push(skipped(&item, self.plan, reason));
        }
        (self.after_test)(&self.doc);
    }

    /// Disk `ti`'s tests: skipped if it is absent; on its simulated disk;
    /// else opened (claimed for writes if granted), with its health read
    /// before and after where its transport has health commands.
    fn disk(&mut self, ti: usize) {
        let path = self.plan.targets[ti].info.path.clone();
        if let Some(why) = self.plan.targets[ti].missing.clone() {
            (self.progress)(&format!("bootbench-init: target absent: {why}; its tests are skipped"));
            self.skip_all(ti, &format!("not run: {why}"), true);
            self.bad.push((ti, format!("target absent: {why}")));
            return;
        }
        if let Some(sim) = self.plan.targets[ti].sim {
            let disk = sim.disk();
            let mut runner = SerialRunner {
                target: &disk,
                clock: &disk.clock,
            };
            self.items(ti, &mut runner, None);
            return;
        }
        let writable = "(named in \"destructive\"); its data will be destroyed";
        let mut probe = health_before(self.plan, ti, self.progress);
        let ran = self.open_and_run(ti, writable, probe.as_mut());
        if let Some(p) = probe {
            health_after(self.plan, ti, p, matches!(ran, Ok(None)), self.progress);
            refresh_targets(&mut self.doc, self.plan);
            (self.after_test)(&self.doc);
        }
        match ran {
            Ok(hung) => self.bad.extend(hung.map(|h| (ti, h))),
            Err(e) => {
                let msg = format!("cannot open {path}: {e}");
                (self.progress)(&format!("bootbench-init: {msg}; its tests are skipped"));
                self.skip_all(ti, &format!("not run: {msg}"), false);
                self.bad.push((ti, msg));
            }
        }
    }
}

/// Start pushing the run of `plan` to its `metrics_url` (none: `None`)
/// through `client`, as `machine` (`bench_core::boot::stick::machine_name`), the
/// unattended run's `plan_id` labelled; `say` hears of failed pushes. A
/// pusher that cannot start is said and the run goes on without it.
pub fn metrics(
    plan: &Plan,
    client: crate::net::http::Client,
    machine: String,
    plan_id: Option<String>,
    say: crate::results::metrics::Say,
) -> Option<crate::results::metrics::Pusher> {
    use crate::results::metrics::{Facts, Pusher};
    let url = plan.metrics_url.as_ref()?;
    let mut doc = new_doc(
        plan.profile.clone(),
        &plan.config_source,
        plan.seed,
        plan.simulated,
        plan.targets.iter().map(|t| t.info.clone()).collect(),
    );
    doc.run.bound_ns = Some(run_bound(plan).0);
    doc.run.plan_id.clone_from(&plan_id);
    let facts = Facts {
        machine,
        plan_id,
        interval: plan.metrics_interval,
        planned: planned_tests(plan),
    };
    match Pusher::start(url, client, facts, doc, say) {
        Ok(p) => {
            say(&format!(
                "metrics: pushing to {} every {} s",
                p.url(),
                plan.metrics_interval.as_secs()
            ));
            Some(p)
        }
        Err(e) => {
            say(&format!("metrics: not pushed: {e}"));
            None
        }
    }
}

/// Every test the plan runs as (target path, test name), the whole-disk
/// passes included (`surface_scan`, `burn_in`, `precondition` on the disks
/// each selects): what a run's progress is counted in
/// (`results::metrics`).
pub fn planned_tests(plan: &Plan) -> Vec<(String, String)> {
    let path = |ti: usize| plan.targets[ti].info.path.clone();
    let mut out = Vec::new();
    let names = [
        (scan::Scan::NAMES.kernel_log_test, pass::targets::<scan::Scan>(plan)),
        (burnin::Burn::NAMES.kernel_log_test, pass::targets::<burnin::Burn>(plan)),
        (
            precondition::Precondition::NAMES.kernel_log_test,
            pass::targets::<precondition::Precondition>(plan),
        ),
    ];
    for (test, tis) in names {
        out.extend(tis.into_iter().map(|ti| (path(ti), test.to_string())));
    }
    out.extend(plan.items.iter().map(|it| (path(it.target), it.spec.name.clone())));
    out
}

/// Before the run: each disk's hidden capacity and erase support
/// ([`capacity::read`]: ATA HPA and DCO, NVMe capacity outside every
/// namespace, the erase commands; only reading commands), recorded in its
/// target and said on the console.
fn hidden_capacity(plan: &mut Plan, progress: &mut dyn FnMut(&str)) {
    if plan.simulated {
        return;
    }
    for ti in 0..plan.targets.len() {
        let disk = plan.is_disk(ti);
        let t = &mut plan.targets[ti];
        if !disk || t.info.kind != TargetKind::Block || t.missing.is_some() || t.sim.is_some() {
            continue;
        }
        let Some(found) = capacity::read(&t.info.path, t.info.transport.as_deref(), t.info.size_bytes) else {
            continue;
        };
        progress(&bench_core::device::capacity::summary(&t.info.path, &found.hidden));
        t.info.hidden_capacity = Some(found.hidden);
        t.info.erase_support = Some(found.erase);
        if let Some(e) = &t.info.erase_support {
            progress(&format!(
                "bootbench-init: {}: erase support (read only, nothing erased): {}",
                t.info.path,
                bench_core::device::erase::summary(e)
            ));
        }
    }
}

/// The disks a test on target `ti` runs on: the disk itself, or every disk
/// beneath an array or layer.
fn disks_of(plan: &Plan, ti: usize) -> Vec<usize> {
    plan.stack_of(ti).map_or_else(|| vec![ti], |st| st.disks.clone())
}

/// How often a disk's temperature is read during a test where that does
/// not disturb it (NVMe): the default sample interval.
const HEALTH_INTERVAL: Duration = Duration::from_secs(1);

/// Before disk `ti`'s tests: its health reading (a disk whose transport
/// has health commands: [`health::asked`]), recorded in its target, and
/// the probe that samples its temperature during each test. A disk that
/// answered none of the commands (`source` `none`, the reasons in its
/// `error`) gets no probe and is not asked again after its tests: each
/// unanswered command may cost its timeout.
fn health_before(plan: &mut Plan, ti: usize, progress: &mut dyn FnMut(&str)) -> Option<health::Probe> {
    let info = &plan.targets[ti].info;
    if info.kind != TargetKind::Block || !health::asked(info.transport.as_deref()) {
        return None;
    }
    let (path, transport) = (info.path.clone(), info.transport.clone());
    let mut before = health::read(&path, transport.as_deref());
    // FARM, once, with the reading before the tests (its counters do not
    // move in a run; its power-on hours are checked against this reading's).
    match health::read_farm(&path, transport.as_deref()) {
        Ok(farm) => before.farm = farm,
        Err(why) => health::push_error(&mut before, why),
    }
    progress(&health::summary(&path, "before its tests", &before));
    let answered = before.source != "none";
    plan.targets[ti].info.health = Some(Health {
        before,
        ..Health::default()
    });
    answered.then(|| health::Probe::new(&path, transport.as_deref(), HEALTH_INTERVAL))
}

/// After disk `ti`'s tests: its health again (unless its I/O hung or it
/// could not be opened: `read` false), the counters' delta, and the
/// temperature of each test.
fn health_after(plan: &mut Plan, ti: usize, probe: health::Probe, read: bool, progress: &mut dyn FnMut(&str)) {
    let info = &mut plan.targets[ti].info;
    let Some(h) = info.health.as_mut() else { return };
    h.tests = probe.tests;
    if read {
        let after = health::read(&info.path, info.transport.as_deref());
        progress(&health::summary(&info.path, "after its tests", &after));
        h.delta = bench_core::device::health::counter_delta(&h.before, &after);
        h.after = Some(after);
    }
}

/// Why a host-managed zoned disk whose first zone is sequential gets no
/// scratch label.
pub const NO_LABEL_ZONED: &str = "a host-managed zoned disk whose first zone is sequential takes the label only at that zone's write pointer, which it would leave open; the next run judges its zones' data as it finds it";

/// After the run's last write: give every disk a write of this run
/// reached (directly or beneath an array or layer) bootbench's scratch
/// label, so the next run counts it as blank rather than as a disk holding
/// data (see `safety::scratch`). Claimed again for it (identity only: its
/// contents are this run's). A disk only claimed, whose write tests never
/// ran (skipped, or the run interrupted before them), is left untouched,
/// as is a target that failed (`bad`: hung, changed).
fn label_written(plan: &Plan, doc: &ResultDoc, bad: &[(usize, String)], progress: &mut dyn FnMut(&str)) {
    let written: Vec<usize> = (0..plan.targets.len())
        .filter(|ti| plan.is_disk(*ti) && plan.targets[*ti].written && !bad.iter().any(|(b, _)| b == ti))
        .collect();
    if written.is_empty() {
        return;
    }
    let machine = crate::results::stick::machine_name(identity::host().product_serial.as_deref());
    for ti in written {
        let t = &plan.targets[ti];
        let Some(grant) = &t.grant else { continue };
        let label = crate::safety::ScratchLabel {
            written_unix: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            run_id: format!("{machine}-{}", doc.run.started_unix_ns),
            machine: machine.clone(),
            bootbench_version: env!("CARGO_PKG_VERSION").to_string(),
            disk_size: t.info.size_bytes,
        };
        let path = &t.info.path;
        // A host-managed disk's first zone, when sequential, takes the label
        // only at its write pointer, and would be left open by it.
        if crate::plan::host_managed(&t.info) {
            let why = match crate::disks::zones::first_zone_sequential(&t.info) {
                Ok(false) => None,
                Ok(true) => Some(NO_LABEL_ZONED.to_string()),
                Err(e) => Some(format!("its first zone could not be read: {e}")),
            };
            if let Some(why) = why {
                progress(&format!("bootbench-init: {path}: no scratch label: {why}"));
                continue;
            }
        }
        match grant.claim(crate::safety::Contents::Checked) {
            Ok(p) => match p.write_label(&label) {
                Ok(()) => progress(&format!(
                    "bootbench-init: {path}: bootbench's scratch label written (run {}): the next run may write it again",
                    label.run_id
                )),
                Err(e) => progress(&format!("bootbench-init: {path}: writing the scratch label: {e}")),
            },
            Err(r) => progress(&format!("bootbench-init: {path}: no scratch label: {r}")),
        }
    }
}

impl Run<'_> {
    /// Assemble the stacks, run their tests, tear them down and check that
    /// none remains (a failed teardown or a device left behind fails the
    /// run). A stack with a failed target beneath (`bad`: absent, cannot
    /// be opened, hung) is not assembled; a stack whose I/O hung is added
    /// to `bad`, and nothing is built on it.
    fn stacks(&mut self, backend: &mut dyn stacks::Backend, reg: &stacks::Registry) {
        let targets: Vec<usize> = self.plan.stacks.iter().map(|s| s.target).collect();
        if let Some(f) = self.failure.clone() {
            for ti in targets {
                for (_, item) in items_of(self.plan, ti) {
                    let r = skipped(&item, self.plan, &format!("not run: the run stopped early ({f})"));
                    self.doc.tests.push(r);
                }
            }
            return;
        }
        // Each stack is tested as soon as it is assembled, before anything is
        // built on it: a device that another dm or md device holds cannot be
        // claimed exclusively, so its write tests could not run later.
        let mut failed: Vec<(usize, String)> = Vec::new();
        for (si, ti) in targets.into_iter().enumerate() {
            if interrupted(self.stop) {
                // Nothing more is assembled; what is assembled is torn down below.
                self.skip_all(ti, NOT_RUN_INTERRUPTED, false);
                continue;
            }
            let st = &self.plan.stacks[si];
            let beneath = st.disks.iter().chain(st.under().iter()).find_map(|u| {
                self.bad.iter().find(|(t, _)| t == u).map(|(_, why)| {
                    format!(
                        "not assembled: {} beneath it failed ({why})",
                        self.plan.targets[*u].info.path
                    )
                })
            });
            if let Some(why) = beneath {
                (self.progress)(&format!("bootbench-init: {:?}: {why}", st.name));
                failed.push((ti, why));
            } else {
                stacks::assemble_one(self.plan, si, backend, reg, &mut failed, self.progress);
            }
            self.doc.targets[ti] = self.plan.targets[ti].info.clone();
            if let Some((_, why)) = failed.iter().find(|(t, _)| *t == ti) {
                let why = why.clone();
                self.skip_all(ti, &why, true);
                continue;
            }
            let writable = "(every disk beneath it is named in \"destructive\")";
            match self.open_and_run(ti, writable, None) {
                Ok(hung) => self.bad.extend(hung.map(|h| (ti, h))),
                Err(e) => {
                    let msg = format!("not run: cannot open {}: {e}", self.plan.targets[ti].info.path);
                    (self.progress)(&format!("bootbench-init: {msg}"));
                    for (_, item) in &items_of(self.plan, ti) {
                        self.doc.tests.push(skipped(item, self.plan, &msg));
                    }
                }
            }
        }
        // A stack whose I/O was abandoned may refuse to stop (EBUSY: the
        // abandoned thread holds it open): teardown reports that and goes on.
        let mut errors = stacks::teardown_all(reg, self.progress);
        for w in accounting::writes_beneath_read_only(&self.doc) {
            (self.progress)(&format!("bootbench-init: SAFETY: {w}"));
            errors.push(w);
        }
        if let Err(e) = stacks::verify(backend, self.progress) {
            errors.push(e);
        }
        if !errors.is_empty() {
            self.failure = Some(errors.join("; "));
        }
    }
}

/// Target `ti`'s tests with their indices in the plan.
fn items_of(plan: &Plan, ti: usize) -> Vec<(usize, PlanItem)> {
    plan.items
        .iter()
        .enumerate()
        .filter(|(_, it)| it.target == ti)
        .map(|(i, it)| (i, it.clone()))
        .collect()
}

/// The results' target records from the plan's (a claim refused when a
/// test began changes them: not writable, and why).
fn refresh_targets(doc: &mut ResultDoc, plan: &Plan) {
    for (d, t) in doc.targets.iter_mut().zip(&plan.targets) {
        *d = t.info.clone();
    }
}

/// The refusal a test's error stands for, in words, if it is one: a write
/// the kernel refused with EPERM or EROFS ([`crate::safety::refused_write`]).
fn refused_write(status: &Status, path: &str) -> Option<String> {
    match status {
        Status::Error {
            errno,
            op: bench_core::io::Op::Write,
            offset,
            ..
        } => crate::safety::refused_write(path, *errno, *offset).map(|r| r.to_string()),
        _ => None,
    }
}

/// Why `item`'s engine options cannot run on `info` (polling without poll
/// queues, passthrough without a `/dev/ngXnY`), if they cannot
/// ([`engine::fast::refusal`]).
fn engine_refusal(info: &bench_core::document::result::TargetInfo, item: &PlanItem) -> Option<String> {
    engine::fast::refusal(crate::sysfs::root(), info, &item.spec.params)
}

/// A skipped test's result.
fn skipped(item: &PlanItem, plan: &Plan, reason: &str) -> TestResult {
    TestResult {
        name: item.spec.name.clone(),
        workload: item.spec.workload,
        target: plan.targets[item.target].info.path.clone(),
        params: item.spec.params.clone(),
        status: Status::Skipped {
            reason: reason.to_string(),
        },
        steps: Vec::new(),
        summary: Summary::default(),
        zones: None,
        placement: None,
    }
}

/// What a runner can tell after a test: the step it abandoned, if its
/// device hung (a simulated disk never does).
pub trait Abandons {
    /// What was abandoned, if anything.
    fn abandoned_what(&self) -> Option<String>;

    /// The CPUs its threads ran on since the last call (none known: empty).
    fn take_ran_on(&mut self) -> Vec<u32> {
        Vec::new()
    }
}

impl<T> Abandons for ThreadedRunner<T> {
    fn abandoned_what(&self) -> Option<String> {
        self.abandoned().map(str::to_string)
    }

    fn take_ran_on(&mut self) -> Vec<u32> {
        ThreadedRunner::take_ran_on(self)
    }
}

impl<T, C> Abandons for SerialRunner<'_, T, C> {
    fn abandoned_what(&self) -> Option<String> {
        None
    }
}

impl Run<'_> {
    /// Open target `ti` for its tests ([`stacks::open_target`]: claimed for
    /// writes only if granted), say that it may be written and why
    /// (`writable`), and run its items, listed again after the open since
    /// a refused claim skips the writes. `Err` is why it could not be
    /// opened; `Ok` holds why its I/O hung, if it did.
    fn open_and_run(
        &mut self,
        ti: usize,
        writable: &str,
        probe: Option<&mut health::Probe>,
    ) -> Result<Option<String>, String> {
        let opened = stacks::open_target(self.plan, ti, self.progress);
        refresh_targets(&mut self.doc, self.plan);
        let dev = opened?;
        if dev.writable() {
            let path = &self.plan.targets[ti].info.path;
            (self.progress)(&format!("bootbench-init: {path} may be written {writable}"));
        }
        let dev = Arc::new(dev);
        let mut runner = ThreadedRunner::new(Arc::clone(&dev));
        runner.watch = accounting::beneath(self.plan, ti);
        let hung = self.items(ti, &mut runner, probe);
        if dev.wrote() {
            self.plan.mark_written(ti);
        }
        Ok(hung)
    }

    /// Run (or skip) target `ti`'s tests on `runner`, with progress lines,
    /// each result appended to the document and reported.
    ///
    /// Each test runs under a watchdog that asks the stop to end it at its
    /// deadline ([`test_deadline`]); the test then ends as `timeout`. If
    /// its I/O did not return within the grace after the stop, the runner
    /// abandoned it: the test's message says what was abandoned, the
    /// target's later tests are skipped ("hung") and the reason is
    /// returned.
    fn items<R: StepRunner + Abandons>(
        &mut self,
        ti: usize,
        runner: &mut R,
        mut probe: Option<&mut health::Probe>,
    ) -> Option<String> {
        let path = self.plan.targets[ti].info.path.clone();
        let mut hung: Option<String> = None;
        for (i, mut item) in items_of(self.plan, ti) {
            // As the plan has it now: a write the kernel refused in an
            // earlier test withdrew this target's writes.
            item.action = self.plan.items[i].action.clone();
            let head = format!("[test {}/{}] {} on {}", i + 1, self.total, item.spec.name, path);
            if interrupted(self.stop) {
                self.doc.tests.push(skipped(&item, self.plan, NOT_RUN_INTERRUPTED));
                (self.after_test)(&self.doc);
                continue;
            }
            let refusal = engine_refusal(&self.plan.targets[ti].info, &item);
            let r = match (&hung, &item.action) {
                (Some(h), _) => {
                    let reason = format!("not run: {h}");
                    (self.progress)(&format!("{head}: skipped: {reason}"));
                    skipped(&item, self.plan, &reason)
                }
                (None, Action::Skip(reason)) => {
                    (self.progress)(&format!("{head}: skipped: {reason}"));
                    skipped(&item, self.plan, reason)
                }
                (None, Action::Run(_)) if refusal.is_some() => {
                    let reason = refusal.unwrap_or_default();
                    (self.progress)(&format!("{head}: skipped: {reason}"));
                    skipped(&item, self.plan, &reason)
                }
                (None, Action::Run(steps)) => match zones::fit(&self.plan.targets[ti].info, steps) {
                    Err(reason) => {
                        (self.progress)(&format!("{head}: skipped: {reason}"));
                        skipped(&item, self.plan, &reason)
                    }
                    Ok((mut steps, zoned)) => {
                        if let Some(z) = &zoned {
                            (self.progress)(&format!("{head}: {}", zones::said(z)));
                        }
                        let placed = self.place(ti, &item, &mut steps, &head);
                        runner.take_ran_on();
                        let mut r = self.one(&head, &item, &path, &steps, runner, probe.as_deref_mut());
                        r.placement = placed.map(|mut pl| {
                            pl.ran_on = runner.take_ran_on();
                            pl
                        });
                        if !matches!(r.status, Status::Skipped { .. }) {
                            r.zones = zoned.map(|mut z| {
                                z.zones_written = zones::written(&self.plan.targets[ti].info, &steps);
                                z
                            });
                        }
                        if runner.abandoned_what().is_some() {
                            hung = Some(format!(
                                "{path} hung: test {} did not return after its stop, its I/O was abandoned; \
                                 the target's later tests are skipped",
                                item.spec.name
                            ));
                        }
                        r
                    }
                },
            };
            self.doc.tests.push(r);
            (self.after_test)(&self.doc);
        }
        hung
    }

    /// Where test `item` on target `ti` runs ([`placement::decide`]), put
    /// on its `steps` and said on the console; `None` on a simulated disk.
    fn place(
        &mut self,
        ti: usize,
        item: &PlanItem,
        steps: &mut [Step],
        head: &str,
    ) -> Option<bench_core::document::result::TestPlacement> {
        if self.plan.simulated || self.plan.targets[ti].sim.is_some() {
            return None;
        }
        let pl = placement::decide(
            &item.spec.params,
            self.plan.targets[ti].info.numa.as_ref(),
            &self.doc.host.numa_nodes,
        );
        placement::apply(&pl, steps);
        (self.progress)(&format!("{head}: placement: {}", pl.reason));
        Some(pl)
    }

    /// Run one test, `item`, of `steps` on `runner` under its deadline,
    /// sampling the disk's temperature with `probe`; its result, and its
    /// ending said on the console.
    fn one<R: StepRunner + Abandons>(
        &mut self,
        head: &str,
        item: &PlanItem,
        path: &str,
        steps: &[Step],
        runner: &mut R,
        mut probe: Option<&mut health::Probe>,
    ) -> TestResult {
        let limit = test_deadline(self.plan, steps);
        // What the kernel logged until now came before this test.
        if let Some(k) = self.kmsg.as_mut() {
            k.begin(&disks_of(self.plan, item.target), &item.spec.name, self.progress);
        }
        (self.progress)(&format!(
            "{head}: starting ({} step(s), deadline {} s)",
            steps.len(),
            limit.0.div_ceil(1_000_000_000)
        ));
        let mut last = Instant::now();
        let log = &mut *self.progress;
        let kmsg = &mut self.kmsg;
        let name = item.spec.name.as_str();
        LIVE.set(path, name, 0.0);
        let mut progress = |p: &Progress<'_>| {
            LIVE.set(path, name, p.done);
            if let Some(k) = kmsg.as_mut() {
                k.poll(log);
            }
            // At most one line a second of wall time (a simulated clock
            // reports far faster than that).
            if last.elapsed().as_millis() < 1000 {
                return;
            }
            last = Instant::now();
            log(&format!(
                "{head}: {} {}",
                p.step,
                progress_text(p.done, p.eta.map(|e| e.0))
            ));
        };
        if let Some(p) = probe.as_deref_mut() {
            p.start(&item.spec.name);
        }
        let stop = self.stop;
        let mut r = engine::with_deadline(stop, Duration::from_nanos(limit.0), || {
            run_test(&item.spec, path, steps, runner, stop, &mut progress)
        });
        stop.clear_deadline();
        LIVE.end(path, &item.spec.name);
        if let Some(k) = self.kmsg.as_mut() {
            k.end(self.progress);
        }
        if let Some(p) = probe {
            p.finish(runner.abandoned_what().is_none());
        }
        if let Some(what) = runner.abandoned_what() {
            let note = format!("; I/O abandoned: {what}");
            match &mut r.status {
                Status::Timeout { message } | Status::Interrupted { message } => message.push_str(&note),
                Status::Error { message, .. } => message.push_str(&note),
                Status::Skipped { reason } => reason.push_str(&note),
                Status::Ok => {}
            }
        }
        if let Some(why) = refused_write(&r.status, path) {
            // The kernel refused the write, not the disk: a refused grant.
            crate::plan::withdraw_writes(self.plan, item.target, &why);
            refresh_targets(&mut self.doc, self.plan);
            r = skipped(item, self.plan, &why);
        }
        let ending = match &r.status {
            Status::Ok => "ok".to_string(),
            Status::Error { message, .. } => format!("error: {message}"),
            Status::Skipped { reason } => format!("skipped: {reason}"),
            Status::Interrupted { message } => format!("interrupted: {message}"),
            Status::Timeout { message } => format!("timeout: {message}"),
        };
        (self.progress)(&format!("{head}: {ending}"));
        r
    }
}

/// `40% ETA 3s`.
fn progress_text(done: f64, eta_ns: Option<u64>) -> String {
    let pct = (done.clamp(0.0, 1.0) * 100.0).round();
    let eta = match eta_ns {
        Some(ns) => format!(" ETA {}s", ns.div_ceil(1_000_000_000)),
        None => String::new(),
    };
    format!("{pct}%{eta}")
}

#[cfg(test)]
mod tests;
