//! The config's preconditioning (`precondition`, README
//! "Preconditioning"), after the burn-in and before the benchmarks: every
//! disk it selects (each one `destructive` names) claimed for writing as a
//! burn-in's is, then filled and driven to steady state with
//! [`bench_core::steady`]; every disk at once unless `parallel` is false
//! ([`super::perdisk`]). A disk the grant or the claim refuses gets a
//! record saying why, and nothing is written to it.

use std::time::Duration;

use bench_core::io::{Access, OpenSpec, Target};
use bench_core::result::{Precondition, PreconditionEnd};
use bench_core::runner::Stop;
use bench_core::steady::{not_run, precondition, record, PreconditionSpec};
use bench_core::units::Nanos;

use super::engine::{DevTarget, MonoClock};
use super::kmsg::KernelLog;
use super::perdisk::{self, claimed, drive, Names, Work};
use super::selftest::span;
use crate::plan::{Plan, PreconditionPlan};

/// What the kernel's lines during preconditioning are recorded as coming
/// during (`kernel_log[].test`).
pub const KERNEL_LOG_TEST: &str = "precondition";

/// Disk `ti`'s preconditioning, from the plan; `None` for a disk without
/// an area (the plan checked every one it selects).
fn spec_of(plan: &Plan, pp: &PreconditionPlan, ti: usize) -> Option<PreconditionSpec> {
    let (start, end) = pp.area(plan.targets[ti].info.size_bytes).ok()?;
    Some(PreconditionSpec {
        start,
        end,
        fill: pp.fill,
        workload: pp.workload.clone(),
        round: pp.round,
        max_rounds: pp.max_rounds,
        window: pp.window,
        range_pct: pp.range_pct,
        slope_pct: pp.slope_pct,
        seed: plan.seed,
    })
}

/// What the plan's preconditioning adds to the run's bound: every disk's
/// time (the longest, when they run at once) and the grace.
pub fn bound(plan: &Plan) -> Nanos {
    let Some(pp) = &plan.precondition else { return Nanos(0) };
    let times = pp
        .targets
        .iter()
        .filter_map(|&ti| spec_of(plan, pp, ti))
        .map(|s| pp.time_for(s.end - s.start).0);
    perdisk::bound(times, pp.parallel)
}

/// Precondition `spec` on `target` (claimed for writing): the record, and
/// whether any write reached the disk.
pub fn precondition_disk(
    path: &str,
    target: &DevTarget,
    spec: &PreconditionSpec,
    stop: &Stop,
    progress: &mut dyn FnMut(f64),
) -> (Precondition, bool) {
    let wl = &spec.workload;
    let max_len = wl.bs.max(bench_core::steady::FILL_BS);
    let rec = match target.open(&OpenSpec::plain(Access::Direct, true, wl.depth, max_len, spec.seed)) {
        Err(e) => not_run(
            spec,
            format!("{path}: opening a queue for writing failed: errno {}", e.errno),
        ),
        Ok(mut q) => {
            let rounds = f64::from(spec.max_rounds.max(1));
            match precondition(spec, &mut q, &MonoClock::new(), stop, &mut |i, _| {
                #[allow(clippy::cast_precision_loss)] // a few rounds
                progress(i as f64 / rounds);
            }) {
                Ok(out) => record(spec, &out),
                Err(e) => not_run(
                    spec,
                    format!("{path}: the queue failed at offset {}: errno {}", e.req.offset, e.errno),
                ),
            }
        }
    };
    (rec, target.wrote())
}

/// Run the plan's preconditioning on every disk it selects and record
/// each in its target (`info.precondition`); a disk a write reached is
/// marked written. Nothing to do without `precondition`.
pub fn run(plan: &mut Plan, stop: &Stop, progress: &mut dyn FnMut(&str), kmsg: Option<&mut KernelLog>) {
    let Some(pp) = plan.precondition.clone() else { return };
    let chosen: Vec<(usize, PreconditionSpec)> = pp
        .targets
        .iter()
        .filter_map(|&ti| spec_of(plan, &pp, ti).map(|s| (ti, s)))
        .collect();
    let mut works = Vec::new();
    let claimed = claimed(plan, chosen, "preconditioning", progress, &mut |plan, ti, spec, why| {
        plan.targets[ti].info.precondition = Some(not_run(spec, why));
    });
    for (ti, spec, target) in claimed {
        let path = plan.targets[ti].info.path.clone();
        let time = Duration::from_nanos(pp.time_for(spec.end - spec.start).0);
        let (p2, s2, s3) = (path.clone(), spec.clone(), spec.clone());
        let wl = &spec.workload;
        works.push(Work {
            ti,
            start_line: format!(
                "bootbench-init: {path}: preconditioning started: {}{} B {} writes, {} in flight, in rounds of {} until \
                 the last {} are steady (within {}% and a fitted slope within {}% of their mean), at most {} rounds; at most {}",
                if spec.fill {
                    "the area written twice in 128 KiB writes, then "
                } else {
                    ""
                },
                wl.bs,
                if wl.random { "random" } else { "sequential" },
                wl.depth,
                span(Duration::from_nanos(spec.round.0)),
                spec.window,
                spec.range_pct,
                spec.slope_pct,
                spec.max_rounds,
                span(time)
            ),
            path,
            planned: 0,
            time,
            failed: Box::new(move |why| (not_run(&s3, why), true)),
            run: Box::new(move |stop: &Stop, f: &mut dyn FnMut(f64)| precondition_disk(&p2, &target, &s2, stop, f)),
        });
    }
    let names = Names {
        what: "preconditioning",
        max_time: "its time ran out",
        thread: "bootbench-precond",
        kernel_log_test: KERNEL_LOG_TEST,
    };
    drive(
        names,
        works,
        pp.parallel,
        stop,
        progress,
        kmsg,
        &mut |ti, (rec, wrote), why, progress| {
            finish(plan, ti, rec, wrote, why, progress);
        },
    );
}

/// Record disk `ti`'s preconditioning (asked to stop `why`, if it was),
/// and say it.
fn finish(
    plan: &mut Plan,
    ti: usize,
    mut rec: Precondition,
    wrote: bool,
    why: Option<&str>,
    progress: &mut dyn FnMut(&str),
) {
    if let (PreconditionEnd::Stopped, Some(why)) = (rec.end, why) {
        rec.error = Some(why.to_string());
    }
    if wrote {
        plan.mark_written(ti);
    }
    let unit = if rec.figure == "write_iops" { "IOPS" } else { "MB/s" };
    let scale = if unit == "IOPS" { 1.0 } else { 1e6 };
    let figures: Vec<String> = rec.rounds.iter().map(|r| format!("{:.0}", r.value / scale)).collect();
    progress(&format!(
        "bootbench-init: {}: preconditioning {}{}: {} rounds ({unit}: {}){}",
        plan.targets[ti].info.path,
        rec.end,
        rec.steady_round.map_or(String::new(), |r| format!(" at round {r}")),
        rec.rounds.len(),
        figures.join(", "),
        rec.error.as_ref().map_or(String::new(), |e| format!(" ({e})"))
    ));
    plan.targets[ti].info.precondition = Some(rec);
}
