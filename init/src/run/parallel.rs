//! `parallel: true`: the disks' benchmarks all at once, each disk on a
//! thread of its own running its tests in order ([`pass::drive`]), so a
//! server of 24 disks takes the time of its slowest disk, not their sum.
//! Each disk's figures are then measured while the others run: what a
//! shared controller, link or CPU costs is in them (the all-at-once run's
//! `scaling` says where). Without it, the disks are tested one after
//! another, each alone.
//!
//! Each disk is opened (claimed for writing where it may be written) and
//! its health read on the run's thread before, and its health read again
//! after; its tests then run under their own deadlines, within the disk's
//! time (the sum of its tests' bounds); an interrupt skips what has not
//! started. The console says when each disk starts, its share done every
//! 10 s, and each test's ending once the disk is done; the kernel's lines
//! naming a disk meanwhile are recorded as coming during
//! `benchmarks (parallel)`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bench_core::document::result::{Status, TestResult};
use bench_core::engine::runner::{run_test, SerialRunner, Stop, StopReason};

use super::engine::{self, DevTarget, ThreadedRunner};
use super::pass::{self, Names, Work};
use super::{
    accounting, health_after, health_before, items_of, refresh_targets, skipped, test_bound, test_deadline, Abandons,
    Run, NOT_RUN_INTERRUPTED,
};
use crate::plan::{Action, PlanItem, SimSpec};

/// The names of the parallel benchmarks on the console and in the records.
const NAMES: Names = Names {
    what: "benchmarks",
    max_time: "its time ran out (the sum of its tests' bounds)",
    thread: "bench-disk",
    kernel_log_test: "benchmarks (parallel)",
};

/// One disk's run: its tests' results in plan order, and whether a test
/// hung (its I/O abandoned: the later tests not run).
struct DiskRun {
    results: Vec<TestResult>,
    hung: Option<String>,
    /// A write the kernel refused: the refusal, which withdraws the disk's
    /// writes ([`super::refused_write`]).
    refused: Option<String>,
}

/// What a disk's tests run on, on its thread.
enum On {
    Sim(SimSpec),
    Dev(Arc<DevTarget>, Vec<accounting::Watched>),
}

/// A test of the disk, ready for its thread: the item, its deadline, and
/// the result it gets if it does not run.
struct Planned {
    item: PlanItem,
    deadline: Duration,
}

impl Run<'_> {
    /// Every disk of `disks` at once ([`crate::plan::Plan::parallel`]):
    /// their results appended to the document in disk order.
    pub(super) fn disks_at_once(&mut self, disks: &[usize]) {
        let mut works = Vec::new();
        let mut opened: Vec<(usize, Option<Arc<DevTarget>>, Option<crate::disks::health::Probe>)> = Vec::new();
        for &ti in disks {
            let path = self.plan.targets[ti].info.path.clone();
            if let Some(why) = self.plan.targets[ti].missing.clone() {
                (self.progress)(&format!("bootbench-init: target absent: {why}; its tests are skipped"));
                self.skip_all(ti, &format!("not run: {why}"), true);
                self.bad.push((ti, format!("target absent: {why}")));
                continue;
            }
            let (on, dev, probe) = if let Some(sim) = self.plan.targets[ti].sim {
                (On::Sim(sim), None, None)
            } else {
                let probe = health_before(self.plan, ti, self.progress);
                let o = super::stacks::open_target(self.plan, ti, self.progress);
                refresh_targets(&mut self.doc, self.plan);
                match o {
                    Ok(d) => {
                        if d.writable() {
                            (self.progress)(&format!(
                                "bootbench-init: {path} may be written (named in \"destructive\"); its data will be destroyed"
                            ));
                        }
                        let d = Arc::new(d);
                        let watch = accounting::beneath(self.plan, ti);
                        (On::Dev(Arc::clone(&d), watch), Some(d), probe)
                    }
                    Err(e) => {
                        let msg = format!("cannot open {path}: {e}");
                        (self.progress)(&format!("bootbench-init: {msg}; its tests are skipped"));
                        self.skip_all(ti, &format!("not run: {msg}"), false);
                        self.bad.push((ti, msg));
                        continue;
                    }
                }
            };
            opened.push((ti, dev, probe));
            works.push(self.work(ti, path, on));
        }
        let mut done: Vec<(usize, DiskRun)> = Vec::new();
        let stop = self.stop;
        pass::drive(
            NAMES,
            works,
            true,
            stop,
            self.progress,
            self.kmsg.as_mut(),
            &mut |ti, r, _, _| {
                done.push((ti, r));
            },
        );
        for (ti, dev, probe) in opened {
            if let Some(p) = probe {
                health_after(self.plan, ti, p, true, self.progress);
            }
            if dev.is_some_and(|d| d.wrote()) {
                self.plan.mark_written(ti);
            }
            let Some(i) = done.iter().position(|(t, _)| *t == ti) else {
                continue;
            };
            let (_, run) = done.swap_remove(i);
            let path = self.plan.targets[ti].info.path.clone();
            for ((i, item), r) in items_of(self.plan, ti).into_iter().zip(&run.results) {
                let head = format!("[test {}/{}] {} on {path}", i + 1, self.total, item.spec.name);
                (self.progress)(&format!("{head}: {}", ending(&r.status)));
            }
            self.doc.tests.extend(run.results);
            if let Some(h) = run.hung {
                self.bad.push((ti, h));
            }
            if let Some(why) = run.refused {
                crate::plan::withdraw_writes(self.plan, ti, &why);
            }
        }
        refresh_targets(&mut self.doc, self.plan);
        (self.after_test)(&self.doc);
    }

    /// Disk `ti`'s work: its tests in order on `on`, each under its
    /// deadline, within the disk's time.
    fn work(&self, ti: usize, path: String, on: On) -> Work<DiskRun> {
        let planned: Vec<Planned> = items_of(self.plan, ti)
            .into_iter()
            .map(|(_, item)| {
                let deadline = match &item.action {
                    Action::Run(steps) => Duration::from_nanos(test_deadline(self.plan, steps).0),
                    Action::Skip(_) => Duration::ZERO,
                };
                Planned { item, deadline }
            })
            .collect();
        let time: u64 = planned
            .iter()
            .filter_map(|p| match &p.item.action {
                Action::Run(steps) => Some(test_bound(self.plan, steps).0),
                Action::Skip(_) => None,
            })
            .fold(0, u64::saturating_add);
        let time = Duration::from_nanos(time);
        let running = planned
            .iter()
            .filter(|p| matches!(p.item.action, Action::Run(_)))
            .count();
        let templates: Vec<TestResult> = planned.iter().map(|p| skipped(&p.item, self.plan, "")).collect();
        let failed_templates = templates.clone();
        let info = self.plan.targets[ti].info.clone();
        Work {
            ti,
            start_line: format!(
                "bootbench-init: benchmarks started on {path}: {running} test(s), with the other disks at once"
            ),
            path: path.clone(),
            planned: 0,
            // The disk's own bound ends its tests first; the driver's is
            // the last resort, a grace later.
            time: time + engine::GRACE,
            failed: Box::new(move |why| DiskRun {
                results: failed_templates
                    .iter()
                    .map(|t| not_run(t, &format!("not run: {why}")))
                    .collect(),
                hung: Some(format!("{path}: {why}")),
                refused: None,
            }),
            run: Box::new(move |stop, fraction| run_disk(&planned, &templates, &info, &on, time, stop, fraction)),
        }
    }
}

/// `template` (a test's result without a status) as not run, for `reason`.
fn not_run(template: &TestResult, reason: &str) -> TestResult {
    TestResult {
        status: Status::Skipped {
            reason: reason.to_string(),
        },
        ..template.clone()
    }
}

/// A test's ending in words, as the console says it.
fn ending(s: &Status) -> String {
    match s {
        Status::Ok => "ok".to_string(),
        Status::Error { message, .. } => format!("error: {message}"),
        Status::Skipped { reason } => format!("skipped: {reason}"),
        Status::Interrupted { message } => format!("interrupted: {message}"),
        Status::Timeout { message } => format!("timeout: {message}"),
    }
}

/// One disk's tests in order, on its thread: each under its deadline and
/// within `time` from now; skipped once the run is interrupted, the time
/// is out, or a test hung. On a host-managed zoned disk (`info`), each
/// test's steps are laid onto its zones just before it runs
/// ([`super::zones::fit`]).
#[allow(clippy::too_many_arguments)] // the disk's whole context, passed down once
fn run_disk(
    planned: &[Planned],
    templates: &[TestResult],
    info: &bench_core::document::result::TargetInfo,
    on: &On,
    time: Duration,
    stop: &Stop,
    fraction: &mut dyn FnMut(f64),
) -> DiskRun {
    let start = Instant::now();
    let n = planned.len().max(1);
    let mut results = Vec::with_capacity(planned.len());
    let mut hung: Option<String> = None;
    let mut refused: Option<String> = None;
    let mut runner = match on {
        On::Dev(d, watch) => {
            let mut r = ThreadedRunner::new(Arc::clone(d));
            r.watch = watch.clone();
            Some(r)
        }
        On::Sim(_) => None,
    };
    for (k, (p, template)) in planned.iter().zip(templates).enumerate() {
        let left = time.saturating_sub(start.elapsed());
        let not = if stop.reason() == Some(StopReason::Interrupted) {
            Some(NOT_RUN_INTERRUPTED.to_string())
        } else if let Some(h) = &hung {
            Some(format!("not run: {h}"))
        } else if left.is_zero() {
            Some("not run: the disk's time ran out (the sum of its tests' bounds)".to_string())
        } else {
            refused.as_ref().filter(|_| p.item.spec.workload.writes()).cloned()
        };
        let steps = match (&not, &p.item.action) {
            (Some(reason), _) => {
                results.push(not_run(template, reason));
                continue;
            }
            (None, Action::Skip(reason)) => {
                results.push(not_run(template, reason));
                continue;
            }
            (None, Action::Run(steps)) => match super::zones::fit(info, steps) {
                Ok(fitted) => fitted,
                Err(reason) => {
                    results.push(not_run(template, &reason));
                    continue;
                }
            },
        };
        let (steps, zoned) = (&steps.0, steps.1);
        #[allow(clippy::cast_precision_loss)] // a few tests
        let mut progress = |pr: &bench_core::engine::runner::Progress<'_>| {
            fraction((k as f64 + pr.done.clamp(0.0, 1.0)) / n as f64);
        };
        let path = template.target.as_str();
        let r = engine::with_deadline(stop, p.deadline.min(left), || match (on, runner.as_mut()) {
            (On::Sim(sim), _) => {
                let disk = sim.disk();
                let mut r = SerialRunner {
                    target: &disk,
                    clock: &disk.clock,
                };
                run_test(&p.item.spec, path, steps, &mut r, stop, &mut progress)
            }
            (On::Dev(..), Some(r)) => run_test(&p.item.spec, path, steps, r, stop, &mut progress),
            (On::Dev(..), None) => unreachable!("a device's runner is made with it"),
        });
        stop.clear_deadline();
        if let Some(what) = runner.as_ref().and_then(Abandons::abandoned_what) {
            hung = Some(format!(
                "{path} hung: test {} did not return after its stop, its I/O was abandoned ({what}); \
                 the target's later tests are skipped",
                p.item.spec.name
            ));
        }
        if let Some(why) = super::refused_write(&r.status, path) {
            results.push(not_run(template, &why));
            refused = Some(why);
            continue;
        }
        let mut r = r;
        if !matches!(r.status, Status::Skipped { .. }) {
            r.zones = zoned.map(|mut z| {
                z.zones_written = super::zones::written(info, steps);
                z
            });
        }
        results.push(r);
    }
    fraction(1.0);
    DiskRun { results, hung, refused }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{self, Overrides};
    use crate::run::{execute_with, stacks};
    use crate::testutil::TempDir;

    /// Three file disks with `parallel`: every disk starts before any test
    /// ends (their endings are said once all are done), each disk's tests
    /// are in the document in disk and plan order and ran; the granted
    /// file is written and the others are not; a test past its
    /// `test_deadline` ends as timeout and the disk's next test still runs;
    /// the bound counts the longest disk, not the sum.
    #[test]
    fn parallel_runs_every_disk_at_once_and_keeps_the_plans_order() {
        let t = TempDir::new("parallel");
        let files: Vec<String> = ["a", "b", "c"]
            .iter()
            .map(|n| {
                let p = t.0.join(format!("{n}.img"));
                std::fs::write(&p, vec![0u8; 8 << 20]).unwrap();
                p.to_string_lossy().into_owned()
            })
            .collect();
        let text = format!(
            r#"{{"tests":[{{"workload":"rand_read","runtime":"30s"}},{{"workload":"seq_read","size":"1M"}},
                          {{"workload":"seq_write","size":"1M"}}],
                "targets":["{a}","{b}","{c}"],"parallel":true,"test_deadline":"300ms",
                "destructive":{{"confirm":"I understand this destroys data","countdown":0,"targets":["{a}"]}}}}"#,
            a = files[0],
            b = files[1],
            c = files[2]
        );
        let mut plan = plan::validate(&plan::parse(&text, "t").unwrap(), "t", &Overrides::default()).unwrap();
        assert!(plan.parallel);
        let grace = u64::try_from(engine::GRACE.as_nanos()).unwrap();
        let driver_grace = u64::try_from(pass::GRACE.as_nanos()).unwrap();
        // The granted disk's three tests, each 300 ms and the engine's
        // grace; then the driver's time past it (a grace) and its wait
        // before it abandons a thread: not the sum over the disks.
        assert_eq!(
            super::super::run_bound(&plan).0,
            3 * (300_000_000 + grace) + grace + driver_grace
        );
        let mut lines = Vec::new();
        let doc = execute_with(
            &mut plan,
            &mut stacks::Kernel,
            &stacks::Registry::new(),
            &Stop::new(),
            &mut |l| lines.push(l.to_string()),
            &mut |_| {},
        );
        let first_end = lines.iter().position(|l| l.starts_with("[test ")).expect("endings");
        let started = lines[..first_end]
            .iter()
            .filter(|l| l.starts_with("bootbench-init: benchmarks started on "))
            .count();
        assert_eq!(started, 3, "{lines:?}");
        let got: Vec<(&str, &str, String)> = doc
            .tests
            .iter()
            .map(|r| {
                let s = match &r.status {
                    Status::Ok => "ok".to_string(),
                    Status::Timeout { .. } => "timeout".to_string(),
                    Status::Skipped { reason } => format!("skipped: {}", &reason[..reason.len().min(30)]),
                    other => format!("{other:?}"),
                };
                (r.target.as_str(), r.name.as_str(), s)
            })
            .collect();
        let names: Vec<&str> = plan.items.iter().take(3).map(|it| it.spec.name.as_str()).collect();
        let mut want = Vec::new();
        for (i, f) in files.iter().enumerate() {
            want.push((f.as_str(), names[0], "timeout".to_string()));
            want.push((f.as_str(), names[1], "ok".to_string()));
            let w = if i == 0 {
                "ok"
            } else {
                "skipped: writes refused: destructive.ta"
            };
            want.push((f.as_str(), names[2], w.to_string()));
        }
        assert_eq!(got, want, "{lines:?}");
        let written = |f: &str| std::fs::read(f).unwrap().iter().any(|&b| b != 0);
        assert!(written(&files[0]), "the granted file was written");
        assert!(!written(&files[1]) && !written(&files[2]), "the others were not");
        assert!(
            lines
                .iter()
                .any(|l| l == &format!("[test 2/9] {} on {}: ok", names[1], files[0])),
            "{lines:?}"
        );
    }

    /// An interrupt while the disks run skips every test not yet started,
    /// on every disk, as not run.
    #[test]
    fn an_interrupt_skips_what_has_not_started_on_every_disk() {
        let t = TempDir::new("parallel-stop");
        let files: Vec<String> = ["a", "b"]
            .iter()
            .map(|n| {
                let p = t.0.join(format!("{n}.img"));
                std::fs::write(&p, vec![0u8; 8 << 20]).unwrap();
                p.to_string_lossy().into_owned()
            })
            .collect();
        let text = format!(
            r#"{{"tests":[{{"workload":"rand_read","runtime":"60s"}},{{"workload":"seq_read","size":"1M"}}],
                "targets":["{}","{}"],"parallel":true}}"#,
            files[0], files[1]
        );
        let mut plan = plan::validate(&plan::parse(&text, "t").unwrap(), "t", &Overrides::default()).unwrap();
        let stop = Stop::new();
        let mut started = 0;
        let doc = execute_with(
            &mut plan,
            &mut stacks::Kernel,
            &stacks::Registry::new(),
            &stop,
            &mut |l| {
                if l.starts_with("bootbench-init: benchmarks started on ") {
                    started += 1;
                    if started == 2 {
                        stop.request(StopReason::Interrupted);
                    }
                }
            },
            &mut |_| {},
        );
        assert_eq!(doc.tests.len(), 4);
        for r in &doc.tests {
            match &r.status {
                Status::Interrupted { .. } => assert_eq!(r.name, plan.items[0].spec.name),
                Status::Skipped { reason } => assert_eq!(reason, NOT_RUN_INTERRUPTED, "{r:?}"),
                other => panic!("{other:?}"),
            }
        }
    }
}
