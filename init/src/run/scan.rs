//! The config's surface scan (`surface_scan`, docs/burn-in-and-scans.md, "Surface scan"),
//! before the benchmarks: every selected disk read once, whole (or the
//! config's area and coverage), with [`bench_core::scan`]; every disk at
//! once, each on a thread of its own, unless `parallel` is false
//! ([`super::perdisk`]). Each disk's scan has its time (`max_time`, or its
//! bytes at 10 MB/s). Only reads: the disk is opened read-only.

use std::time::Duration;

use bench_core::io::{Access, OpenSpec, Target};
use bench_core::result::{ScanEndState, SurfaceScan};
use bench_core::runner::Stop;
use bench_core::scan::{planned_bytes, record, scan, ScanOutcome, ScanSpec};
use bench_core::units::Nanos;

use super::engine::{DevTarget, MonoClock};
use super::kmsg::KernelLog;
use super::perdisk::{self, drive, Names, Work};
use super::selftest::span;
use crate::plan::{Plan, ScanPlan};
use crate::results::metrics::LIVE;

/// The disks that take part: real disks (not absent, not simulated, not
/// arrays or layers) the plan's `surface_scan` selects, each with its scan.
pub(crate) fn selected(plan: &Plan, sp: &ScanPlan) -> Vec<(usize, ScanSpec)> {
    (0..plan.targets.len())
        .filter_map(|ti| {
            let t = &plan.targets[ti];
            let i = &t.info;
            if !plan.is_disk(ti) || t.sim.is_some() || t.missing.is_some() || !sp.selects(i.serial.as_deref()) {
                return None;
            }
            let (start, end) = sp.area(i.size_bytes).ok()?;
            Some((
                ti,
                ScanSpec {
                    start,
                    end,
                    chunk: sp.bs,
                    depth: sp.iodepth,
                    coverage_ppm: sp.coverage_ppm,
                    logical_block: i.logical_block_size.max(512),
                    retries: sp.retries,
                    max_bad: sp.max_bad,
                    zones: sp.zones,
                    slowest: sp.slowest,
                },
            ))
        })
        .collect()
}

/// What the plan's surface scan adds to the run's bound: every disk's
/// time (the longest, when they run at once) and the grace.
pub fn bound(plan: &Plan) -> Nanos {
    let Some(sp) = &plan.surface_scan else { return Nanos(0) };
    let times = selected(plan, sp)
        .into_iter()
        .map(|(_, s)| sp.time_for(planned_bytes(&s)).0);
    perdisk::bound(times, sp.parallel)
}

/// One disk's scan, on its own thread: open read-only, scan, the record.
fn scan_disk(path: &str, spec: &ScanSpec, stop: &Stop, progress: &mut dyn FnMut(f64)) -> SurfaceScan {
    let failed = |why: String| failed_record(spec, why);
    match DevTarget::open(path, None) {
        Err(e) => failed(format!("{path}: {e}")),
        Ok(t) => match t.open(&OpenSpec::plain(Access::Direct, false, spec.depth, spec.chunk, 0)) {
            Err(e) => failed(format!("{path}: opening a queue failed: errno {}", e.errno)),
            Ok(mut q) => match scan(spec, &mut q, &MonoClock::new(), stop, &mut |done, unreadable| {
                LIVE.found(path, KERNEL_LOG_TEST, [0, unreadable, 0]);
                progress(done);
            }) {
                Ok(out) => record(spec, &out),
                Err(e) => failed(format!(
                    "{path}: the queue failed at offset {}: errno {}",
                    e.req.offset, e.errno
                )),
            },
        },
    }
}

/// The record of a scan of `spec` that could not go on, and why.
fn failed_record(spec: &ScanSpec, why: String) -> SurfaceScan {
    let mut r = record(spec, &ScanOutcome::empty(spec));
    r.end = ScanEndState::Error;
    r.error = Some(why);
    r
}

/// What the kernel's lines during the scans are recorded as coming
/// during (`kernel_log[].test`).
pub const KERNEL_LOG_TEST: &str = "surface_scan";

/// Run the plan's surface scan on every disk it selects and record each
/// in its target (`info.surface_scan`); the kernel's lines naming a disk
/// meanwhile go to `kmsg`, as during the scan. Nothing to do without
/// `surface_scan`.
pub fn run(plan: &mut Plan, stop: &Stop, progress: &mut dyn FnMut(&str), kmsg: Option<&mut KernelLog>) {
    let Some(sp) = plan.surface_scan.clone() else { return };
    let chosen = selected(plan, &sp);
    let works = chosen
        .into_iter()
        .map(|(ti, spec)| {
            let path = plan.targets[ti].info.path.clone();
            let bytes = planned_bytes(&spec);
            let time = Duration::from_nanos(sp.time_for(bytes).0);
            let (p2, s2, s3) = (path.clone(), spec.clone(), spec.clone());
            Work {
                ti,
                start_line: format!(
                    "bootbench-init: {path}: surface scan started: {bytes} B ({:.1} GB, GB = 10^9) in reads of {} B, {} in flight; at most {}",
                    bytes as f64 / 1e9,
                    spec.chunk,
                    spec.depth,
                    span(time)
                ),
                path,
                planned: bytes,
                time,
                failed: Box::new(move |why| failed_record(&s3, why)),
                run: Box::new(move |stop: &Stop, f: &mut dyn FnMut(f64)| scan_disk(&p2, &s2, stop, f)),
            }
        })
        .collect();
    let names = Names {
        what: "surface scan",
        max_time: "its time ran out (surface_scan.max_time)",
        thread: "bootbench-scan",
        kernel_log_test: KERNEL_LOG_TEST,
    };
    drive(
        names,
        works,
        sp.parallel,
        stop,
        progress,
        kmsg,
        &mut |ti, rec, why, progress| {
            finish(plan, ti, rec, why, progress);
        },
    );
}

/// Record disk `ti`'s scan (asked to stop `why`, if it was), and say it.
fn finish(plan: &mut Plan, ti: usize, mut rec: SurfaceScan, why: Option<&str>, progress: &mut dyn FnMut(&str)) {
    if let (ScanEndState::Stopped, Some(why)) = (rec.end, why) {
        rec.error = Some(why.to_string());
    }
    progress(&format!(
        "bootbench-init: {}: surface scan {}: {} of {} B read in {}, {} unreadable and {} recovered blocks{}",
        plan.targets[ti].info.path,
        rec.end,
        rec.read_bytes,
        rec.planned_bytes,
        span(Duration::from_nanos(rec.elapsed_ns)),
        rec.unreadable_lbas.len(),
        rec.recovered_lbas.len(),
        rec.error.as_ref().map_or(String::new(), |e| format!(" ({e})"))
    ));
    plan.targets[ti].info.surface_scan = Some(rec);
}
