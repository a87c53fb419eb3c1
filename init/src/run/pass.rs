//! The one runner of the whole-disk passes (the surface scan, the
//! burn-in, preconditioning: [`Pass`]): each disk the pass's plan selects
//! made ready (a pass that writes claims it, [`claim`]), its work on a
//! thread of its own, every disk at once or one after another; progress
//! and an ETA on the console; each disk's time, after which (or when the
//! run is interrupted) its work is asked to stop after its requests in
//! flight; and work that has not returned a grace after that abandoned
//! with its thread and buffers (never freed while the kernel may write
//! into them).

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bench_core::engine::runner::{Stop, StopReason};
use bench_core::vocab::units::Nanos;

use super::kmsg::KernelLog;
use super::selftest::span;
use crate::plan::{PassPlan, Plan};
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
pub fn bound_of(times: impl Iterator<Item = u64>, parallel: bool) -> Nanos {
    let t = if parallel {
        times.max().unwrap_or(0)
    } else {
        times.fold(0u64, u64::saturating_add)
    };
    let grace = u64::try_from(GRACE.as_nanos()).unwrap_or(u64::MAX);
    Nanos(t.saturating_add(grace))
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

/// One kind of whole-disk pass, as the runner sees it: what it is
/// called, how each disk's part of it is made from the plan, made ready,
/// run, bounded, and recorded. [`run`] and [`bound`] do the rest, the same
/// for every kind.
pub trait Pass {
    /// Its plan (`ScanPlan`, ...).
    type Plan: Clone;
    /// One disk's part of it.
    type Spec: Clone + Send + 'static;
    /// What a disk's ready state is (a pass that writes: its claimed target).
    type Ready: Send + 'static;
    /// What a disk's thread returns.
    type Record: Send + 'static;
    /// What it is called.
    const NAMES: Names;

    /// The plan's pass of this kind, if it has one.
    fn plan(plan: &Plan) -> Option<&Self::Plan>;
    /// What its plan shares with every pass's.
    fn pass(p: &Self::Plan) -> &PassPlan;
    /// Disk `ti`'s part, over `area`.
    fn spec(plan: &Plan, p: &Self::Plan, ti: usize, area: (u64, u64)) -> Self::Spec;
    /// The bytes it moves (0: it counts rounds).
    fn planned(spec: &Self::Spec) -> u64;
    /// The longest it may take on one disk.
    fn time(p: &Self::Plan, spec: &Self::Spec) -> Nanos;
    /// What the console says when it starts on disk `path`, of time `time`.
    fn start_line(path: &str, p: &Self::Plan, spec: &Self::Spec, time: Duration) -> String;
    /// Make disk `ti` ready, before any thread starts: a pass that writes
    /// claims it ([`claim`]); or why it may not run there.
    fn ready(plan: &mut Plan, ti: usize) -> Result<Self::Ready, String>;
    /// Record on disk `ti`, which [`Pass::ready`] refused (`why`), that
    /// nothing was done.
    fn refused(plan: &mut Plan, ti: usize, spec: &Self::Spec, why: String);
    /// The record of the pass on a disk where it could not start, or was
    /// abandoned.
    fn failed(spec: &Self::Spec, why: String) -> Self::Record;
    /// The work on disk `ti`, for its thread.
    fn job(plan: &Plan, ti: usize, p: &Self::Plan, spec: Self::Spec, ready: Self::Ready) -> Job<Self::Record>;
    /// Record disk `ti`'s record (asked to stop `why`, if it was) and say it.
    fn finish(plan: &mut Plan, ti: usize, rec: Self::Record, why: Option<&str>, progress: &mut dyn FnMut(&str));
}

/// The disks the plan's pass of kind `P` goes over, each with its area:
/// those of its plan that have the area.
fn areas<P: Pass>(plan: &Plan) -> Vec<(usize, (u64, u64))> {
    let Some(p) = P::plan(plan) else { return Vec::new() };
    let pass = P::pass(p);
    pass.targets
        .iter()
        .filter_map(|&ti| Some((ti, pass.area(plan.targets[ti].info.size_bytes).ok()?)))
        .collect()
}

/// The disks (target indices) the plan's pass of kind `P` goes over.
pub fn targets<P: Pass>(plan: &Plan) -> Vec<usize> {
    areas::<P>(plan).into_iter().map(|(ti, _)| ti).collect()
}

/// The disks the plan's pass of kind `P` goes over, with each one's part.
pub fn chosen<P: Pass>(plan: &Plan) -> Vec<(usize, P::Spec)> {
    let Some(p) = P::plan(plan) else { return Vec::new() };
    areas::<P>(plan)
        .into_iter()
        .map(|(ti, area)| (ti, P::spec(plan, p, ti, area)))
        .collect()
}

/// What the plan's pass of kind `P` adds to the run's bound ([`bound_of`]).
pub fn bound<P: Pass>(plan: &Plan) -> Nanos {
    let Some(p) = P::plan(plan) else { return Nanos(0) };
    let times = chosen::<P>(plan).into_iter().map(|(_, s)| P::time(p, &s).0);
    bound_of(times, P::pass(p).parallel)
}

/// Run the plan's pass of kind `P` on every disk it selects and record each
/// ([`Pass::finish`]); the kernel's lines naming a disk meanwhile go to
/// `kmsg`. A disk that cannot be made ready is said (`what not run: why`)
/// and recorded ([`Pass::refused`]), and nothing is done to it. Nothing to
/// do without the pass.
pub fn run<P: Pass>(plan: &mut Plan, stop: &Stop, progress: &mut dyn FnMut(&str), kmsg: Option<&mut KernelLog>) {
    let Some(p) = P::plan(plan).cloned() else { return };
    let mut works = Vec::new();
    for (ti, spec) in chosen::<P>(plan) {
        let ready = match P::ready(plan, ti) {
            Ok(r) => r,
            Err(why) => {
                progress(&format!(
                    "bootbench-init: {}: {} not run: {why}",
                    plan.targets[ti].info.path,
                    P::NAMES.what
                ));
                P::refused(plan, ti, &spec, why);
                continue;
            }
        };
        let path = plan.targets[ti].info.path.clone();
        let time = Duration::from_nanos(P::time(&p, &spec).0);
        let s2 = spec.clone();
        works.push(Work {
            ti,
            start_line: P::start_line(&path, &p, &spec, time),
            path,
            planned: P::planned(&spec),
            time,
            failed: Box::new(move |why| P::failed(&s2, why)),
            run: P::job(plan, ti, &p, spec, ready),
        });
    }
    drive(
        P::NAMES,
        works,
        P::pass(&p).parallel,
        stop,
        progress,
        kmsg,
        &mut |ti, rec, why, progress| P::finish(plan, ti, rec, why, progress),
    );
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
pub fn claim(plan: &mut Plan, ti: usize) -> Result<super::engine::DevTarget, String> {
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
