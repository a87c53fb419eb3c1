//! The config's surface scan (`surface_scan`, README "Surface scan"),
//! before the benchmarks: every selected disk read once, whole (or the
//! config's area and coverage), with [`bench_core::scan`]; every disk at
//! once, each on a thread of its own, unless `parallel` is false. Each
//! disk's scan has its time (`max_time`, or its bytes at 10 MB/s); one
//! still running then, or when the run is interrupted, ends after its
//! reads in flight, and one that has not returned a grace after that is
//! abandoned with its thread and buffers (never freed while the kernel may
//! write into them). Only reads: the disk is opened read-only.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bench_core::io::{Access, OpenSpec, Target};
use bench_core::result::{ScanEndState, SurfaceScan};
use bench_core::runner::{Stop, StopReason};
use bench_core::scan::{planned_bytes, record, scan, ScanOutcome, ScanSpec};
use bench_core::units::Nanos;

use super::engine::{DevTarget, MonoClock};
use super::kmsg::KernelLog;
use super::selftest::span;
use crate::plan::{Plan, ScanPlan};

/// How long a scan may take to return after it was asked to stop.
const GRACE: Duration = Duration::from_secs(30);
/// How often the console hears of each disk's scan.
const SAY_EVERY: Duration = Duration::from_secs(10);
/// How often the deadlines and the stop are checked.
const TICK: Duration = Duration::from_millis(100);

/// The disks that take part: real disks (not absent, not simulated, not
/// arrays or layers) the plan's `surface_scan` selects, each with its scan.
fn selected(plan: &Plan, sp: &ScanPlan) -> Vec<(usize, ScanSpec)> {
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
    let t = if sp.parallel {
        times.max().unwrap_or(0)
    } else {
        times.fold(0u64, u64::saturating_add)
    };
    let grace = u64::try_from(GRACE.as_nanos()).unwrap_or(u64::MAX);
    Nanos(t.saturating_add(grace))
}

/// A message from a disk's scan thread.
enum Msg {
    /// The fraction of its planned bytes done.
    Progress(usize, f64),
    /// Its record.
    Done(usize, Box<SurfaceScan>),
}

/// One disk's scan, on its own thread: open read-only, scan, send the record.
fn scan_thread(ti: usize, path: String, spec: ScanSpec, stop: Arc<Stop>, tx: mpsc::Sender<Msg>) {
    let failed = |why: String| failed_record(&spec, why);
    let rec = match DevTarget::open(&path, None) {
        Err(e) => failed(format!("{path}: {e}")),
        Ok(t) => match t.open(&OpenSpec::plain(Access::Direct, false, spec.depth, spec.chunk, 0)) {
            Err(e) => failed(format!("{path}: opening a queue failed: errno {}", e.errno)),
            Ok(mut q) => {
                let clock = MonoClock::new();
                let ptx = tx.clone();
                match scan(&spec, &mut q, &clock, &stop, &mut |f| {
                    let _ = ptx.send(Msg::Progress(ti, f));
                }) {
                    Ok(out) => record(&spec, &out),
                    Err(e) => failed(format!(
                        "{path}: the queue failed at offset {}: errno {}",
                        e.req.offset, e.errno
                    )),
                }
            }
        },
    };
    let _ = tx.send(Msg::Done(ti, Box::new(rec)));
}

/// The record of a scan of `spec` that could not go on, and why.
fn failed_record(spec: &ScanSpec, why: String) -> SurfaceScan {
    let mut r = record(spec, &ScanOutcome::empty(spec));
    r.end = ScanEndState::Error;
    r.error = Some(why);
    r
}

/// One disk's scan while it runs.
struct Running {
    ti: usize,
    path: String,
    spec: ScanSpec,
    planned: u64,
    stop: Arc<Stop>,
    started: Instant,
    time: Duration,
    /// When it was asked to stop, and why in words.
    stopped: Option<(Instant, &'static str)>,
    done: f64,
    said: Instant,
}

/// What the kernel's lines during the scans are recorded as coming
/// during (`kernel_log[].test`).
pub const KERNEL_LOG_TEST: &str = "surface_scan";

/// Run the plan's surface scan on every disk it selects and record each
/// in its target (`info.surface_scan`); the kernel's lines naming a disk
/// meanwhile go to `kmsg`, as during the scan. Nothing to do without
/// `surface_scan`.
pub fn run(plan: &mut Plan, stop: &Stop, progress: &mut dyn FnMut(&str), mut kmsg: Option<&mut KernelLog>) {
    let Some(sp) = plan.surface_scan.clone() else { return };
    let mut waiting = selected(plan, &sp);
    if let Some(k) = kmsg.as_deref_mut() {
        let tis: Vec<usize> = waiting.iter().map(|(ti, _)| *ti).collect();
        k.begin(&tis, KERNEL_LOG_TEST, progress);
    }
    waiting.reverse();
    let (tx, rx) = mpsc::channel::<Msg>();
    let mut running: Vec<Running> = Vec::new();
    loop {
        // Start what may start: every disk at once, or the next one.
        while stop.reason().is_none() && (sp.parallel || running.is_empty()) {
            let Some((ti, spec)) = waiting.pop() else { break };
            let path = plan.targets[ti].info.path.clone();
            let bytes = planned_bytes(&spec);
            let time = Duration::from_nanos(sp.time_for(bytes).0);
            progress(&format!(
                "bootbench-init: {path}: surface scan started: {bytes} B ({:.1} GB, GB = 10^9) in reads of {} B, {} in flight; at most {}",
                bytes as f64 / 1e9,
                spec.chunk,
                spec.depth,
                span(time)
            ));
            let d_stop = Arc::new(Stop::new());
            let (s2, tx2, p2, spec2) = (Arc::clone(&d_stop), tx.clone(), path.clone(), spec.clone());
            let spawned = std::thread::Builder::new()
                .name("bootbench-scan".to_string())
                .spawn(move || scan_thread(ti, p2, spec2, s2, tx2));
            if let Err(e) = spawned {
                progress(&format!("bootbench-init: {path}: surface scan not started: {e}"));
                continue;
            }
            running.push(Running {
                ti,
                path,
                spec,
                planned: bytes,
                stop: d_stop,
                started: Instant::now(),
                time,
                stopped: None,
                done: 0.0,
                said: Instant::now(),
            });
        }
        if running.is_empty() {
            break;
        }
        if let Some(k) = kmsg.as_deref_mut() {
            k.poll(progress);
        }
        match rx.recv_timeout(TICK) {
            Ok(Msg::Progress(ti, f)) => {
                if let Some(r) = running.iter_mut().find(|r| r.ti == ti) {
                    r.done = f;
                    if r.said.elapsed() >= SAY_EVERY {
                        r.said = Instant::now();
                        progress(&progress_line(r));
                    }
                }
            }
            Ok(Msg::Done(ti, rec)) => {
                if let Some(i) = running.iter().position(|r| r.ti == ti) {
                    let r = running.swap_remove(i);
                    finish(plan, &r, *rec, progress);
                }
            }
            Err(_) => {}
        }
        // Deadlines, the run's stop, and scans that do not return.
        let interrupted = stop.reason() == Some(StopReason::Interrupted);
        let mut i = 0;
        while i < running.len() {
            let r = &mut running[i];
            if r.stopped.is_none() {
                let why = if interrupted {
                    Some("the run was interrupted")
                } else if r.started.elapsed() >= r.time {
                    Some("its time ran out (surface_scan.max_time)")
                } else {
                    None
                };
                if let Some(why) = why {
                    r.stop.request(StopReason::Deadline);
                    r.stopped = Some((Instant::now(), why));
                }
            }
            if let Some((_, why)) = r.stopped.filter(|(at, _)| at.elapsed() >= GRACE) {
                let r = running.swap_remove(i);
                let rec = failed_record(
                    &r.spec,
                    format!(
                        "{why}, and its reads had not returned {} s later: the scan's thread and buffers were abandoned",
                        GRACE.as_secs()
                    ),
                );
                plan.targets[r.ti].info.surface_scan = Some(rec);
                progress(&format!("bootbench-init: {}: surface scan abandoned ({why})", r.path));
                continue;
            }
            i += 1;
        }
    }
    if let Some(k) = kmsg {
        k.end(progress);
    }
}

/// A running scan's progress in words.
fn progress_line(r: &Running) -> String {
    let el = r.started.elapsed();
    let done_b = r.done * r.planned as f64;
    let rate = done_b / el.as_secs_f64().max(1e-9);
    let eta = if r.done > 0.0 {
        span(el.mul_f64((1.0 - r.done) / r.done))
    } else {
        "unknown".to_string()
    };
    format!(
        "bootbench-init: {}: surface scan {:.1}% ({:.1} of {:.1} GB, GB = 10^9), {:.1} MB/s, ETA {eta}",
        r.path,
        r.done * 100.0,
        done_b / 1e9,
        r.planned as f64 / 1e9,
        rate / 1e6
    )
}

/// Record disk `r`'s scan, and say it.
fn finish(plan: &mut Plan, r: &Running, mut rec: SurfaceScan, progress: &mut dyn FnMut(&str)) {
    if let (ScanEndState::Stopped, Some((_, why))) = (rec.end, r.stopped) {
        rec.error = Some(why.to_string());
    }
    progress(&format!(
        "bootbench-init: {}: surface scan {}: {} of {} B read in {}, {} unreadable and {} recovered blocks{}",
        r.path,
        rec.end,
        rec.read_bytes,
        rec.planned_bytes,
        span(Duration::from_nanos(rec.elapsed_ns)),
        rec.unreadable_lbas.len(),
        rec.recovered_lbas.len(),
        rec.error.as_ref().map_or(String::new(), |e| format!(" ({e})"))
    ));
    plan.targets[r.ti].info.surface_scan = Some(rec);
}
