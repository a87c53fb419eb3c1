//! The config's surface scan (`surface_scan`, docs/burn-in-and-scans.md, "Surface scan"),
//! before the benchmarks: every selected disk read once, whole (or the
//! config's area and coverage), with [`bench_core::passes::scan`]; every disk at
//! once, each on a thread of its own, unless `parallel` is false
//! ([`super::pass`]). Each disk's scan has its time (`max_time`, or its
//! bytes at 10 MB/s). Only reads: the disk is opened read-only.

use std::time::Duration;

use bench_core::document::result::{ScanEndState, SurfaceScan};
use bench_core::engine::runner::Stop;
use bench_core::io::{Access, OpenSpec, Target};
use bench_core::passes::scan::{planned_bytes, record, scan, ScanOutcome, ScanSpec};
use bench_core::vocab::units::Nanos;

use super::engine::{DevTarget, MonoClock};
use super::pass::{Job, Names, Pass};
use super::selftest::span;
use crate::plan::{PassPlan, Plan, ScanPlan};
use crate::results::metrics::LIVE;

/// The surface scan, as the runner of whole-disk passes runs it.
#[derive(Clone, Copy, Debug)]
pub struct Scan;

impl Pass for Scan {
    type Plan = ScanPlan;
    type Spec = ScanSpec;
    /// On a host-managed zoned disk, the byte ranges that hold data
    /// ([`ScanSpec::holds_data`]).
    type Ready = Option<Vec<(u64, u64)>>;
    type Record = SurfaceScan;
    const NAMES: Names = Names {
        what: "surface scan",
        max_time: "its time ran out (surface_scan.max_time)",
        thread: "bootbench-scan",
        kernel_log_test: KERNEL_LOG_TEST,
    };

    fn plan(plan: &Plan) -> Option<&ScanPlan> {
        plan.surface_scan.as_ref()
    }

    fn pass(p: &ScanPlan) -> &PassPlan {
        &p.pass
    }

    fn spec(plan: &Plan, sp: &ScanPlan, ti: usize, (start, end): (u64, u64)) -> ScanSpec {
        ScanSpec {
            start,
            end,
            chunk: sp.pass.bs,
            depth: sp.pass.iodepth,
            coverage_ppm: sp.coverage_ppm,
            logical_block: plan.targets[ti].info.logical_block_size.max(512),
            retries: sp.retries,
            max_bad: sp.max_bad,
            zones: sp.zones,
            slowest: sp.slowest,
            holds_data: None,
        }
    }

    fn planned(spec: &ScanSpec) -> u64 {
        planned_bytes(spec)
    }

    fn time(sp: &ScanPlan, spec: &ScanSpec) -> Nanos {
        sp.time_for(planned_bytes(spec))
    }

    fn start_line(path: &str, _: &ScanPlan, spec: &ScanSpec, time: Duration) -> String {
        let bytes = planned_bytes(spec);
        format!(
            "bootbench-init: {path}: surface scan started: {bytes} B ({:.1} GB, GB = 10^9) in reads of {} B, {} in flight; at most {}",
            bytes as f64 / 1e9,
            spec.chunk,
            spec.depth,
            span(time)
        )
    }

    /// On a host-managed zoned disk, what holds data, from the zone report
    /// now (only those ranges are read: past a write pointer nothing was
    /// written, and a drive may refuse the read); nothing on another disk.
    /// The scan opens its disk read-only on its thread.
    fn ready(plan: &mut Plan, ti: usize) -> Result<Option<Vec<(u64, u64)>>, String> {
        let t = &plan.targets[ti].info;
        if !crate::plan::host_managed(t) {
            return Ok(None);
        }
        crate::disks::zones::holding_data(t)
            .map(Some)
            .map_err(|e| format!("its zones could not be read, so what holds data is not known: {e}"))
    }

    fn refused(plan: &mut Plan, ti: usize, spec: &ScanSpec, why: String) {
        plan.targets[ti].info.surface_scan = Some(failed_record(spec, why));
    }

    fn failed(spec: &ScanSpec, why: String) -> SurfaceScan {
        failed_record(spec, why)
    }

    fn job(plan: &Plan, ti: usize, _: &ScanPlan, mut spec: ScanSpec, holds_data: Self::Ready) -> Job<SurfaceScan> {
        let path = plan.targets[ti].info.path.clone();
        spec.holds_data = holds_data;
        Box::new(move |stop: &Stop, f: &mut dyn FnMut(f64)| scan_disk(&path, &spec, stop, f))
    }

    fn finish(plan: &mut Plan, ti: usize, rec: SurfaceScan, why: Option<&str>, progress: &mut dyn FnMut(&str)) {
        finish(plan, ti, rec, why, progress);
    }
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
