//! Work that goes over whole disks before the benchmarks (the surface scan,
//! the burn-in): every disk at once, each on a thread of its own, or one
//! after another; progress and an ETA on the console; each disk's time,
//! after which (or when the run is interrupted) its work is asked to stop
//! after its requests in flight; and work that has not returned a grace
//! after that abandoned with its thread and buffers (never freed while the
//! kernel may write into them).

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bench_core::runner::{Stop, StopReason};

use super::kmsg::KernelLog;
use super::selftest::span;
use crate::results::metrics::LIVE;

/// How long work may take to return after it was asked to stop.
pub const GRACE: Duration = Duration::from_secs(30);
/// How often the console hears of each disk's work.
const SAY_EVERY: Duration = Duration::from_secs(10);
/// How often the deadlines and the stop are checked.
const TICK: Duration = Duration::from_millis(100);

/// A disk's work on its thread: given a stop of its own and where to send
/// the fraction done, its record.
pub type Job<R> = Box<dyn FnOnce(&Stop, &mut dyn FnMut(f64)) -> R + Send>;

/// What [`drive`] does with each disk's record: the disk's target index,
/// the record, why the disk was asked to stop (if it was), the console.
pub type Finish<'a, R> = &'a mut dyn FnMut(usize, R, Option<&'static str>, &mut dyn FnMut(&str));

/// The work on one disk.
pub struct Work<R> {
    /// The disk's target index.
    pub ti: usize,
    /// Its path.
    pub path: String,
    /// The bytes it moves, for the progress line (0: it counts rounds, the
    /// line says only the fraction done).
    pub planned: u64,
    /// Its time.
    pub time: Duration,
    /// What the console says when it starts.
    pub start_line: String,
    /// The record of the work when it could not be started or was abandoned.
    pub failed: Box<dyn Fn(String) -> R>,
    /// The work, on its thread.
    pub run: Job<R>,
}

impl<R> std::fmt::Debug for Work<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Work")
            .field("ti", &self.ti)
            .field("path", &self.path)
            .field("planned", &self.planned)
            .field("time", &self.time)
            .finish_non_exhaustive()
    }
}

/// What the work is called, on the console and in its messages.
#[derive(Clone, Copy, Debug)]
pub struct Names {
    /// `"surface scan"`.
    pub what: &'static str,
    /// Why it stops when its time runs out: `"its time ran out
    /// (surface_scan.max_time)"`.
    pub max_time: &'static str,
    /// Its thread's name.
    pub thread: &'static str,
    /// What the kernel's lines naming a disk meanwhile are recorded as
    /// coming during (`kernel_log[].test`).
    pub kernel_log_test: &'static str,
}

/// What work over whole disks adds to the run's bound: the disks' times
/// (in ns; the longest when they run at once, else their sum) and the
/// grace after a stop.
pub fn bound(times: impl Iterator<Item = u64>, parallel: bool) -> bench_core::units::Nanos {
    let t = if parallel {
        times.max().unwrap_or(0)
    } else {
        times.fold(0u64, u64::saturating_add)
    };
    let grace = u64::try_from(GRACE.as_nanos()).unwrap_or(u64::MAX);
    bench_core::units::Nanos(t.saturating_add(grace))
}

/// A message from a disk's thread.
enum Msg<R> {
    /// The fraction of its planned bytes done.
    Progress(usize, f64),
    /// Its record.
    Done(usize, Box<R>),
}

/// One disk's work while it runs.
struct Running<R> {
    ti: usize,
    path: String,
    planned: u64,
    stop: Arc<Stop>,
    started: Instant,
    time: Duration,
    /// When it was asked to stop, and why in words.
    stopped: Option<(Instant, &'static str)>,
    done: f64,
    said: Instant,
    failed: Box<dyn Fn(String) -> R>,
}

/// Run `works` (all at once if `parallel`, else one after another) until
/// each has returned or was abandoned; the kernel's lines naming their
/// disks go to `kmsg` meanwhile, as during `names.kernel_log_test`.
/// `finish` gets each disk's record with, when it was asked to stop, why
/// in words.
pub fn drive<R: Send + 'static>(
    names: Names,
    works: Vec<Work<R>>,
    parallel: bool,
    stop: &Stop,
    progress: &mut dyn FnMut(&str),
    mut kmsg: Option<&mut KernelLog>,
    finish: Finish<'_, R>,
) {
    if let Some(k) = kmsg.as_deref_mut() {
        let tis: Vec<usize> = works.iter().map(|w| w.ti).collect();
        k.begin(&tis, names.kernel_log_test, progress);
    }
    let mut waiting = works;
    waiting.reverse();
    let (tx, rx) = mpsc::channel::<Msg<R>>();
    let mut running: Vec<Running<R>> = Vec::new();
    loop {
        // Start what may start: every disk at once, or the next one.
        while stop.reason().is_none() && (parallel || running.is_empty()) {
            let Some(w) = waiting.pop() else { break };
            progress(&w.start_line);
            let d_stop = Arc::new(Stop::new());
            let (s2, tx2, ti, run) = (Arc::clone(&d_stop), tx.clone(), w.ti, w.run);
            let spawned = std::thread::Builder::new()
                .name(names.thread.to_string())
                .spawn(move || {
                    let ptx = tx2.clone();
                    let rec = run(&s2, &mut |f| {
                        let _ = ptx.send(Msg::Progress(ti, f));
                    });
                    let _ = tx2.send(Msg::Done(ti, Box::new(rec)));
                });
            if let Err(e) = spawned {
                let why = format!("{} not started: {e}", names.what);
                progress(&format!("bootbench-init: {}: {why}", w.path));
                finish(w.ti, (w.failed)(why), None, progress);
                continue;
            }
            LIVE.set(&w.path, names.kernel_log_test, 0.0);
            running.push(Running {
                ti: w.ti,
                path: w.path,
                planned: w.planned,
                stop: d_stop,
                started: Instant::now(),
                time: w.time,
                stopped: None,
                done: 0.0,
                said: Instant::now(),
                failed: w.failed,
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
                    LIVE.set(&r.path, names.kernel_log_test, f);
                    if r.said.elapsed() >= SAY_EVERY {
                        r.said = Instant::now();
                        progress(&progress_line(names, r));
                    }
                }
            }
            Ok(Msg::Done(ti, rec)) => {
                if let Some(i) = running.iter().position(|r| r.ti == ti) {
                    let r = running.swap_remove(i);
                    LIVE.end(&r.path, names.kernel_log_test);
                    finish(r.ti, *rec, r.stopped.map(|(_, why)| why), progress);
                }
            }
            Err(_) => {}
        }
        // Deadlines, the run's stop, and work that does not return.
        let interrupted = stop.reason() == Some(StopReason::Interrupted);
        let mut i = 0;
        while i < running.len() {
            let r = &mut running[i];
            if r.stopped.is_none() {
                let why = if interrupted {
                    Some("the run was interrupted")
                } else if r.started.elapsed() >= r.time {
                    Some(names.max_time)
                } else {
                    None
                };
                if let Some(why) = why {
                    r.stop.request(if interrupted {
                        StopReason::Interrupted
                    } else {
                        StopReason::Deadline
                    });
                    r.stopped = Some((Instant::now(), why));
                }
            }
            if let Some((_, why)) = r.stopped.filter(|(at, _)| at.elapsed() >= GRACE) {
                let r = running.swap_remove(i);
                LIVE.end(&r.path, names.kernel_log_test);
                let rec = (r.failed)(format!(
                    "{why}, and its requests had not returned {} s later: the {}'s thread and buffers were abandoned",
                    GRACE.as_secs(),
                    names.what
                ));
                progress(&format!("bootbench-init: {}: {} abandoned ({why})", r.path, names.what));
                finish(r.ti, rec, None, progress);
                continue;
            }
            i += 1;
        }
    }
    if let Some(k) = kmsg {
        k.end(progress);
    }
}

/// Claim each disk of `chosen` for writing its whole area (a burn-in,
/// preconditioning: [`claim`]): those claimed, with their
/// targets; a disk refused is said (`what not run: why`) and given to
/// `refused` with why, and nothing is written to it.
pub fn claimed<S>(
    plan: &mut crate::plan::Plan,
    chosen: Vec<(usize, S)>,
    what: &str,
    progress: &mut dyn FnMut(&str),
    refused: &mut dyn FnMut(&mut crate::plan::Plan, usize, &S, String),
) -> Vec<(usize, S, super::engine::DevTarget)> {
    let mut out = Vec::new();
    for (ti, spec) in chosen {
        match claim(plan, ti) {
            Ok(t) => out.push((ti, spec, t)),
            Err(why) => {
                progress(&format!(
                    "bootbench-init: {}: {what} not run: {why}",
                    plan.targets[ti].info.path
                ));
                refused(plan, ti, &spec, why);
            }
        }
    }
    out
}

/// A running disk's progress in words.
fn progress_line<R>(names: Names, r: &Running<R>) -> String {
    let el = r.started.elapsed();
    let done_b = r.done * r.planned as f64;
    let rate = done_b / el.as_secs_f64().max(1e-9);
    let eta = if r.done > 0.0 {
        span(el.mul_f64((1.0 - r.done) / r.done))
    } else {
        "unknown".to_string()
    };
    if r.planned == 0 {
        // Work measured in rounds, not bytes.
        return format!(
            "bootbench-init: {}: {} {:.1}%, ETA at most {eta}",
            r.path,
            names.what,
            r.done * 100.0
        );
    }
    format!(
        "bootbench-init: {}: {} {:.1}% ({:.1} of {:.1} GB, GB = 10^9), {:.1} MB/s, ETA {eta}",
        r.path,
        names.what,
        r.done * 100.0,
        done_b / 1e9,
        r.planned as f64 / 1e9,
        rate / 1e6
    )
}

/// Claim disk `ti` for writing its whole area (a burn-in, preconditioning)
/// and open it: the target, or why not.
fn claim(plan: &mut crate::plan::Plan, ti: usize) -> Result<super::engine::DevTarget, String> {
    let t = &plan.targets[ti];
    let Some(g) = t.grant.clone() else {
        return Err(t
            .info
            .write_refusal
            .clone()
            .unwrap_or_else(|| "writes refused: not granted".to_string()));
    };
    let contents = if t.claimed {
        crate::safety::Contents::Checked
    } else {
        crate::safety::Contents::Check
    };
    let path = t.info.path.clone();
    let permit = g.claim(contents).map_err(|r| r.to_string())?;
    plan.targets[ti].claimed = true;
    super::engine::DevTarget::open(&path, Some(permit)).map_err(|e| e.to_string())
}
