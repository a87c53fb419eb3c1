//! The threaded step runner: a step's jobs on threads of their own, each
//! pinned (`cpus_allowed`) and making its own queue, watched by the caller,
//! which abandons them when a device hangs; the run's stop request and the
//! watchdog that sets it at a deadline.

use std::sync::{mpsc, Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bench_core::document::result::StepResult;
use bench_core::engine::runner::{self, open_spec, JobOutcome, Progress, StepRunner, Stop, StopReason};
use bench_core::io::{IoError, Op, Target};
use bench_core::spec::Step;
use bench_core::vocab::units::Nanos;

use super::pin;
use super::target::no_req;
use super::{DevTarget, MonoClock};
use crate::run::accounting::{Meter, Watched};
use crate::sysfs;

/// The run's stop request: set by SIGINT/SIGTERM ([`crate::sys::signal`]) or
/// a test's deadline; every runner of this process watches it.
pub static STOP: Stop = Stop::new();

/// Run `f` under a watchdog: if `f` has not returned `limit` after the
/// start, `stop` is asked with [`StopReason::Deadline`] (once). The
/// watchdog ends as soon as `f` returns (or unwinds).
pub fn with_deadline<R>(stop: &Stop, limit: Duration, f: impl FnOnce() -> R) -> R {
    /// Tells the watchdog that `f` is over, however it ends.
    struct Over<'a>(&'a (Mutex<bool>, Condvar));
    impl Drop for Over<'_> {
        fn drop(&mut self) {
            *self.0 .0.lock().unwrap_or_else(PoisonError::into_inner) = true;
            self.0 .1.notify_all();
        }
    }
    let done = (Mutex::new(false), Condvar::new());
    std::thread::scope(|s| {
        s.spawn(|| {
            let start = Instant::now();
            let (lock, cv) = &done;
            let mut over = lock.lock().unwrap_or_else(PoisonError::into_inner);
            while !*over {
                let left = limit.saturating_sub(start.elapsed());
                if left.is_zero() {
                    stop.request(StopReason::Deadline);
                    return;
                }
                over = match cv.wait_timeout(over, left) {
                    Ok((g, _)) => g,
                    Err(p) => p.into_inner().0,
                };
            }
        });
        let _over = Over(&done);
        f()
    })
}

/// How long a step's jobs get to return after a stop (deadline or
/// interrupt) before they are abandoned: a request in flight on a sane disk
/// completes in well under a second, even at 1 IOPS with a few in flight.
pub const GRACE: Duration = Duration::from_secs(10);

/// How often the waiting caller looks at the stop request.
const TICK: Duration = Duration::from_millis(50);

/// Runs a step's jobs concurrently, one thread each, on one target, and can
/// abandon them.
///
/// The step runs on a detached thread of its own that owns what it needs
/// (the target through an [`Arc`], a copy of the step, a stop of its own;
/// progress comes back over a channel); its jobs run on scoped threads
/// inside it (job 0 on the step thread) and all read one [`MonoClock`], so
/// their per-second samples line up when merged. As fio's job threads,
/// each job pins its thread first (`cpus_allowed`), then makes its own
/// queue (an io_uring with SINGLE_ISSUER and DEFER_TASKRUN serves only the
/// thread that made it); no job sends a request before every job has its
/// queue. The caller waits, passing on a stop asked of it;
/// if the jobs have not returned [`ThreadedRunner::grace`] after the stop
/// (I/O that never completes: a hung or extremely slow disk), the step is
/// abandoned: `run_step` returns `ETIMEDOUT`, and the thread is left with
/// its file descriptors and buffers. That is the safe choice: a buffer is
/// never freed while the kernel may still write into it; if the I/O ever
/// completes, the thread ends and frees them then. Once a step is
/// abandoned, [`ThreadedRunner::abandoned`] says what, and every later step
/// of this runner is refused (`EIO`) without touching the device.
#[derive(Debug)]
pub struct ThreadedRunner<T = DevTarget> {
    /// The target.
    pub target: Arc<T>,
    /// How long jobs get to return after a stop before they are abandoned.
    pub grace: Duration,
    abandoned: Option<String>,
    /// The last step's failure in words ([`StepRunner::take_failure_message`]).
    failure: Option<String>,
    /// The devices beneath the target (an array's or a layer's), whose
    /// counters each step records ([`StepResult::members`]); empty for a
    /// disk.
    pub watch: Vec<Watched>,
    /// The CPUs the jobs' threads were seen on since the last
    /// [`ThreadedRunner::take_ran_on`] ([`Seen`]).
    ran_on: Arc<Seen>,
}

/// The CPUs a step's job threads were seen running on: `getcpu(2)` on each
/// when its queue is made, at each of its progress reports and when it
/// ends.
#[derive(Debug, Default)]
pub struct Seen(Mutex<std::collections::BTreeSet<u32>>);

impl Seen {
    /// Note the CPU the calling thread runs on now.
    fn sample(&self) {
        if let Ok(c) = crate::sys::cpu::current() {
            self.0.lock().unwrap_or_else(PoisonError::into_inner).insert(c);
        }
    }

    /// The CPUs seen, sorted; the set is emptied.
    fn take(&self) -> Vec<u32> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
            .into_iter()
            .collect()
    }
}

impl<T> ThreadedRunner<T> {
    /// A runner on `target`, with the default [`GRACE`].
    pub fn new(target: Arc<T>) -> ThreadedRunner<T> {
        ThreadedRunner {
            target,
            grace: GRACE,
            abandoned: None,
            failure: None,
            watch: Vec::new(),
            ran_on: Arc::default(),
        }
    }

    /// The CPUs the jobs' threads ran on since the last call, sorted.
    pub fn take_ran_on(&self) -> Vec<u32> {
        self.ran_on.take()
    }

    /// What was abandoned, if a step's jobs did not return after a stop.
    pub fn abandoned(&self) -> Option<&str> {
        self.abandoned.as_deref()
    }
}

/// What the step thread tells the caller.
enum StepMsg {
    /// A progress report of job 0.
    Progress {
        step: String,
        done: f64,
        eta: Option<Nanos>,
    },
    /// The step's preparation (its fill, cache drop, settle) is done: its
    /// measured part begins. The watched devices' first counters were read
    /// here, in the step's thread, before its first measured request (read
    /// on receipt instead, the requests of the wait were lost to them).
    Prepared(Option<Meter>),
    /// The step's result (boxed: far larger than a progress report).
    Done(Box<Result<StepResult, JobFail>>),
}

/// Why a job did not run to its bound: the error, and what it means in
/// words when its errno alone would mislead (a setup failure; the kernel
/// refusing polled I/O): see [`StepRunner::take_failure_message`].
#[derive(Debug)]
struct JobFail {
    error: IoError,
    message: Option<String>,
}

impl From<IoError> for JobFail {
    fn from(error: IoError) -> JobFail {
        JobFail { error, message: None }
    }
}

/// Whether every job of a step made its queue: each job arrives once,
/// saying whether it did; all start their I/O only once every job has
/// arrived, and only if every one did (so a refusal or a setup failure of
/// any job ends the step before its first request).
struct Gate {
    barrier: std::sync::Barrier,
    failed: std::sync::atomic::AtomicBool,
}

impl Gate {
    fn new(jobs: u32) -> Gate {
        Gate {
            barrier: std::sync::Barrier::new(usize::try_from(jobs).unwrap_or(1)),
            failed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Arrive (`ok`: this job made its queue), wait for the others; true if
    /// all did.
    fn all_ready(&self, ok: bool) -> bool {
        use std::sync::atomic::Ordering::SeqCst;
        if !ok {
            self.failed.store(true, SeqCst);
        }
        // The barrier orders every job's store before every job's load.
        self.barrier.wait();
        !self.failed.load(SeqCst)
    }
}

/// What the error of a job of `step` means, when its errno alone would
/// mislead: the kernel refusing polled I/O (hipri), or a queue the kernel
/// would not set up with fio's io_uring options.
fn explain(step: &Step, job: u32, e: &IoError, opening: bool) -> Option<String> {
    let o = &step.engine;
    // EPERM is the write refusal, said as ever.
    if opening && o.needs_ring() && e.errno != libc::EPERM {
        let mut asked = Vec::new();
        if o.hipri {
            asked.push("hipri (IORING_SETUP_IOPOLL)".to_string());
        }
        if o.sqthread_poll {
            asked.push(match o.sqthread_poll_cpu {
                Some(c) => format!("sqthread_poll on CPU {c} (IORING_SETUP_SQPOLL, SQ_AFF)"),
                None => "sqthread_poll (IORING_SETUP_SQPOLL)".to_string(),
            });
        }
        return Some(format!(
            "step {}: job {job}'s io_uring queue with {} could not be made (opening the target or setting up \
             the ring): errno {}",
            step.label,
            asked.join(" and "),
            e.errno
        ));
    }
    if !opening && o.hipri && e.errno == libc::EOPNOTSUPP {
        return Some(format!(
            "hipri: the kernel refused polled I/O on this target: the {} at offset {} failed with errno {} \
             (EOPNOTSUPP); IORING_SETUP_IOPOLL needs a device whose queue polls \
             (/sys/block/DEV/queue/io_poll is 1: NVMe with poll queues, nvme.poll_queues=N; a loop \
             device or a SATA disk never) and O_DIRECT; run without hipri",
            runner::op_name(e.req.op),
            e.req.offset,
            e.errno
        ));
    }
    None
}

/// Make job `job`'s queue on the calling thread, as fio's job threads do:
/// pinned first (`cpus_allowed`: its buffers are then allocated where it
/// runs), its memory policy set (`mem_node`: its buffers on that node,
/// before any is made), the submission thread's CPU checked, then opened.
fn open_job<T: Target>(target: &T, step: &Step, job: u32) -> Result<T::Queue, JobFail> {
    let fail = |errno, message: String| JobFail {
        error: IoError {
            errno,
            req: no_req(Op::Read),
        },
        message: Some(format!("step {}: job {job}: {message}", step.label)),
    };
    let cpus = step.engine.cpus_for_job(job);
    if !cpus.is_empty() {
        pin::pin(sysfs::root(), &cpus).map_err(|e| fail(e.errno as i32, e.message))?;
    }
    if let Some(n) = step.engine.mem_node {
        crate::sys::cpu::prefer_node(n).map_err(|e| {
            let errno = e.raw_os_error().unwrap_or(libc::EINVAL);
            fail(
                errno,
                format!("its buffers on NUMA node {n}: set_mempolicy(MPOL_PREFERRED) failed: {e} (errno {errno})"),
            )
        })?;
    }
    if let (true, Some(c)) = (step.engine.sqthread_poll, step.engine.sqthread_poll_cpu) {
        let online = pin::online(sysfs::root()).unwrap_or_default();
        if !online.contains(&c) {
            return Err(fail(
                libc::EINVAL,
                format!(
                    "sqthread_poll_cpu {c}: CPU {c} is not online on this machine (online: {}); errno {} (EINVAL)",
                    bench_core::vocab::cpus::format_cpu_list(&online),
                    libc::EINVAL
                ),
            ));
        }
    }
    target.open(&open_spec(step, job)).map_err(|e| JobFail {
        message: explain(step, job, &e, true),
        error: e,
    })
}

/// What a step's job threads share: the gate they start at, the clock
/// they read, the stop they watch, where they note the CPUs they ran on.
struct Shared<'a> {
    gate: &'a Gate,
    clock: &'a MonoClock,
    stop: &'a Stop,
    seen: &'a Seen,
}

/// One job on its own thread (job 0 on the step thread): make its queue,
/// wait for its siblings at the gate, run, noting its CPU at each of these
/// and at each progress report; its queue is dropped on this thread too
/// (an io_uring with SINGLE_ISSUER answers no other).
fn job_thread<T: Target>(
    target: &T,
    step: &Step,
    job: u32,
    sh: &Shared<'_>,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<JobOutcome, Option<JobFail>> {
    let opened = open_job(target, step, job);
    if !sh.gate.all_ready(opened.is_ok()) {
        // Its own failure, or (None) a sibling's: the sibling's is the step's.
        return Err(opened.err());
    }
    let mut q = opened.map_err(Some)?;
    sh.seen.sample();
    let mut report = |p: &Progress<'_>| {
        sh.seen.sample();
        progress(p);
    };
    let r = runner::run_job(step, job, &mut q, sh.clock, sh.stop, &mut report).map_err(|e| {
        Some(JobFail {
            message: explain(step, job, &e, false),
            error: e,
        })
    });
    sh.seen.sample();
    r
}

/// A step's whole work, on the step thread: prepare, then every job on a
/// thread of its own (job 0 on this thread, reporting progress), each
/// making its own queue before any I/O, then merge.
fn run_jobs<T>(
    target: &T,
    step: &Step,
    stop: &Stop,
    seen: &Seen,
    prepared: &mut dyn FnMut(),
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<StepResult, JobFail>
where
    T: Target + Sync,
{
    let clock = MonoClock::new();
    let filled = runner::prepare(step, target, &clock, stop)?;
    prepared();
    let jobs = step.jobs.max(1);
    let gate = Gate::new(jobs);
    let sh = Shared {
        gate: &gate,
        clock: &clock,
        stop,
        seen,
    };
    let results: Vec<Result<JobOutcome, Option<JobFail>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..jobs)
            .map(|job| {
                let sh = &sh;
                s.spawn(move || job_thread(target, step, job, sh, &mut |_| {}))
            })
            .collect();
        let mut all = vec![job_thread(target, step, 0, &sh, progress)];
        for h in handles {
            // A job thread only panics on a bug; carry the panic on.
            all.push(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        all
    });
    // A failed job does not cancel its siblings (they run to their bound);
    // the first failure, in job order, is the step's error.
    let mut outcomes = Vec::with_capacity(results.len());
    for r in results {
        match r {
            Ok(o) => outcomes.push(o),
            Err(Some(f)) => return Err(f),
            Err(None) => {}
        }
    }
    if outcomes.len() < usize::try_from(jobs).unwrap_or(1) {
        // Every job that failed had a sibling's reason: cannot happen, but
        // never report a partial step as whole.
        return Err(JobFail::from(IoError {
            errno: libc::EIO,
            req: no_req(Op::Read),
        }));
    }
    let mut r = runner::merge(step, &outcomes);
    r.filled_bytes = filled;
    Ok(r)
}

impl<T> StepRunner for ThreadedRunner<T>
where
    T: Target + Send + Sync + 'static,
{
    fn take_failure_message(&mut self) -> Option<String> {
        self.failure.take()
    }

    fn run_step(
        &mut self,
        step: &Step,
        stop: &Stop,
        progress: &mut dyn FnMut(&Progress<'_>),
    ) -> Result<StepResult, IoError> {
        self.failure = None;
        if self.abandoned.is_some() {
            // The device hung: nothing more is sent to it.
            return Err(IoError {
                errno: libc::EIO,
                req: no_req(Op::Read),
            });
        }
        let inner = Arc::new(Stop::new());
        let (tx, rx) = mpsc::channel::<StepMsg>();
        let handle = {
            let (target, step, inner) = (Arc::clone(&self.target), step.clone(), Arc::clone(&inner));
            let watch = self.watch.clone();
            let seen = Arc::clone(&self.ran_on);
            std::thread::Builder::new()
                .name("bootbench-step".to_string())
                .spawn(move || {
                    let (progress_tx, prepared_tx) = (tx.clone(), tx.clone());
                    let interval = Duration::from_nanos(step.sample_interval.0);
                    let mut prepared = || {
                        let _ = prepared_tx.send(StepMsg::Prepared(Meter::start(&watch, interval)));
                    };
                    let r = run_jobs(&*target, &step, &inner, &seen, &mut prepared, &mut |p| {
                        let _ = progress_tx.send(StepMsg::Progress {
                            step: p.step.to_string(),
                            done: p.done,
                            eta: p.eta,
                        });
                    });
                    let _ = tx.send(StepMsg::Done(Box::new(r)));
                })
                .map_err(|e| IoError {
                    errno: super::errno_of(&e),
                    req: no_req(Op::Read),
                })?
        };
        let mut stopped_at: Option<Instant> = None;
        let mut meter: Option<Meter> = None;
        loop {
            if let Some(m) = &mut meter {
                m.tick();
            }
            if let Some(why) = stop.reason() {
                inner.request(why);
                let at = *stopped_at.get_or_insert_with(Instant::now);
                if at.elapsed() >= self.grace {
                    self.abandoned = Some(format!(
                        "step {}: its {} job(s) did not return within {} ms after the stop; their requests \
                         may still be in flight, so their thread, file descriptors and buffers were abandoned \
                         (never freed while the kernel may write into them)",
                        step.label,
                        step.jobs.max(1),
                        self.grace.as_millis()
                    ));
                    return Err(IoError {
                        errno: libc::ETIMEDOUT,
                        req: no_req(Op::Read),
                    });
                }
            }
            match rx.recv_timeout(TICK) {
                Ok(StepMsg::Progress { step, done, eta }) => progress(&Progress { step: &step, done, eta }),
                Ok(StepMsg::Prepared(m)) => meter = m,
                Ok(StepMsg::Done(r)) => {
                    // The thread ends right after sending.
                    let _ = handle.join();
                    return (*r)
                        .map(|mut r| {
                            r.members = meter.map(Meter::finish).unwrap_or_default();
                            r
                        })
                        .map_err(|f| {
                            self.failure = f.message;
                            f.error
                        });
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    // The step thread panicked (a bug): carry the panic on.
                    return match handle.join() {
                        Err(p) => std::panic::resume_unwind(p),
                        Ok(()) => Err(IoError {
                            errno: libc::EIO,
                            req: no_req(Op::Read),
                        }),
                    };
                }
            }
        }
    }

    /// `sync()` (the target's settle of no length) on a thread of its own,
    /// so a hung device holds the run no longer than a stop and the grace;
    /// then sleep in ticks until `for_` has passed since the start, or a
    /// stop is asked. Nothing after the device hung (a step abandoned).
    fn idle(&mut self, for_: Nanos, stop: &Stop) -> Result<(), IoError> {
        if self.abandoned.is_some() {
            return Ok(());
        }
        let end = Instant::now() + Duration::from_nanos(for_.0);
        let (tx, rx) = mpsc::channel::<Result<(), IoError>>();
        let target = Arc::clone(&self.target);
        std::thread::Builder::new()
            .name("bootbench-sync".to_string())
            .spawn(move || {
                let _ = tx.send(target.settle(Nanos(0)));
            })
            .map_err(|e| IoError {
                errno: super::errno_of(&e),
                req: no_req(Op::Flush),
            })?;
        let mut synced = false;
        let mut stopped_at: Option<Instant> = None;
        loop {
            if synced {
                let left = end.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Ok(());
                }
                std::thread::sleep(left.min(TICK));
            } else {
                match rx.recv_timeout(TICK) {
                    Ok(r) => {
                        r?;
                        synced = true;
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => synced = true,
                }
            }
            if stop.reason().is_some() {
                let at = *stopped_at.get_or_insert_with(Instant::now);
                if synced || at.elapsed() >= self.grace {
                    return Ok(());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::engine::testkit::*;
    use crate::sys::cpu;

    /// A queue that counts the most requests it ever had in flight.
    struct Counting<'q> {
        q: &'q mut DevQueue,
        now: usize,
        max: usize,
    }

    impl IoQueue for Counting<'_> {
        fn depth(&self) -> usize {
            self.q.depth()
        }
        fn submit(&mut self, slot: usize, r: IoReq) -> Result<(), IoError> {
            self.q.submit(slot, r)?;
            self.now += 1;
            self.max = self.max.max(self.now);
            Ok(())
        }
        fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            let before = out.len();
            self.q.reap(min, out)?;
            self.now -= out.len() - before;
            Ok(())
        }
    }

    #[test]
    fn uring_depth_32_keeps_32_in_flight_under_run_job() {
        let Some(lo) = LoopDev::new("qd32") else { return };
        let t = lo.target(false);
        let step = rand_step(100, 32, 1, 3000);
        let mut q = t.open(&open_spec(&step, 0)).expect("queue");
        assert!(matches!(q, DevQueue::Uring(_)));
        let mut c = Counting {
            q: &mut q,
            now: 0,
            max: 0,
        };
        let out = runner::run_job(&step, 0, &mut c, &MonoClock::new(), &Stop::new(), &mut |_| {}).expect("run_job");
        assert_eq!(out.read.ios, 3000);
        assert_eq!(out.read.bytes, 3000 * 4096);
        assert_eq!(c.max, 32, "requests in flight");
        assert_eq!(c.now, 0, "all reaped");
    }

    /// fio's slat, clat and lat on a loop device: the ring's requests are
    /// issued by a commit of their own (slat from start to it, clat after
    /// it, each below lat); pread at depth 1 has no slat (fio's sync
    /// engines record none) and its clat is at most its lat.
    #[test]
    fn uring_has_slat_and_clat_and_psync_has_clat_only() {
        let Some(lo) = LoopDev::new("slat") else { return };
        let t = lo.target(false);
        let step = rand_step(100, 8, 1, 2000);
        let mut q = t.open(&open_spec(&step, 0)).expect("queue");
        assert!(q.batched());
        let out = runner::run_job(&step, 0, &mut q, &MonoClock::new(), &Stop::new(), &mut |_| {}).expect("run_job");
        let r = runner::merge(&step, std::slice::from_ref(&out)).read.expect("reads");
        let (slat, clat) = (r.slat_ns.expect("slat"), r.clat_ns.expect("clat"));
        assert!(
            slat.mean > 0.0 && slat.mean < r.lat_ns.mean,
            "slat {} lat {}",
            slat.mean,
            r.lat_ns.mean
        );
        assert!(
            clat.mean > 0.0 && clat.mean < r.lat_ns.mean,
            "clat {} lat {}",
            clat.mean,
            r.lat_ns.mean
        );
        assert!(clat.min <= r.lat_ns.min && clat.max <= r.lat_ns.max);

        let step = rand_step(100, 1, 1, 500);
        let mut q = t.open(&open_spec(&step, 0)).expect("queue");
        assert!(!q.batched());
        let out = runner::run_job(&step, 0, &mut q, &MonoClock::new(), &Stop::new(), &mut |_| {}).expect("run_job");
        let r = runner::merge(&step, std::slice::from_ref(&out)).read.expect("reads");
        assert_eq!(r.slat_ns, None);
        let clat = r.clat_ns.expect("clat");
        assert!(clat.mean <= r.lat_ns.mean && clat.min <= r.lat_ns.min);
    }

    /// sysbench's write mode through the page cache on a real device:
    /// buffered 16 KiB writes (no O_DIRECT), a flush (fdatasync of the
    /// device) before the next request after every 100, and one at the end;
    /// the flushes reach the device and the written range reaches the
    /// backing file, the rest of it untouched.
    #[test]
    fn buffered_writes_with_periodic_and_final_fsync_on_a_loop_device() {
        let Some(lo) = LoopDev::new("buffered-fsync") else {
            return;
        };
        let before = lo.contents();
        let bs = 16 * 1024;
        let n = 1050u64;
        let mut step = rand_step(0, 1, 1, n);
        step.pattern = Pattern::Seq {
            op: Op::Write,
            start: 0,
            end: LOOP_SIZE,
        };
        (step.bs, step.access, step.prepare) = (bs, Access::Buffered, Prepare::DropCaches);
        (step.fsync_freq, step.flush_at_end) = (Some(100), true);
        let rw = Arc::new(lo.target(true));
        bench_core::engine::runner::prepare(&step, &*rw, &MonoClock::new(), &Stop::new()).expect("drop the cache");
        let r = ThreadedRunner::new(Arc::clone(&rw))
            .run_step(&step, &Stop::new(), &mut |_| {})
            .expect("step");
        assert_eq!(r.access, Access::Buffered);
        assert_eq!(r.write.as_ref().map(|d| (d.ios, d.bytes)), Some((n, n * u64::from(bs))));
        assert_eq!(
            r.flush.as_ref().map(|d| d.ios),
            Some(10 + 1),
            "fsyncs: 10 periodic + the final one"
        );
        drop(rw);
        let after = lo.contents();
        let end = usize::try_from(n).unwrap() * bs as usize;
        assert!(
            after[..end] != before[..end],
            "the buffered writes reached the backing file"
        );
        assert!(after[end..] == before[end..], "nothing past the written range changed");
    }

    #[test]
    fn threaded_runner_merges_jobs_and_writes_only_when_permitted() {
        let Some(lo) = LoopDev::new("threads") else { return };
        let ro = Arc::new(lo.target(false));
        let before = lo.contents();
        let step = rand_step(50, 4, 2, 500);
        let refused = ThreadedRunner::new(Arc::clone(&ro)).run_step(&step, &Stop::new(), &mut |_| {});
        assert_eq!(refused.map(|_| ()).map_err(|e| e.errno), Err(libc::EPERM));
        assert!(lo.contents() == before, "refused step wrote nothing");
        drop(ro);
        let rw = Arc::new(lo.target(true));
        let mut reports = 0;
        let r = ThreadedRunner::new(Arc::clone(&rw))
            .run_step(&step, &Stop::new(), &mut |_| reports += 1)
            .expect("step");
        let reads = r.read.as_ref().map_or(0, |d| d.ios);
        let writes = r.write.as_ref().map_or(0, |d| d.ios);
        assert_eq!(reads + writes, 2 * 500, "two jobs of 500 requests");
        assert!(
            reads > 0 && writes > 0,
            "a 50% mix does both: {reads} reads, {writes} writes"
        );
        assert_eq!(r.jobs, 2);
        assert!(lo.contents() != before, "permitted writes reached the device");
    }

    /// A stop during a step whose I/O never completes: after the grace the
    /// step is abandoned (ETIMEDOUT, the runner says what), its queues are
    /// not freed while their requests are in flight, later steps are
    /// refused without a request; once the I/O completes the abandoned
    /// thread frees them. A step whose I/O completes within the grace ends
    /// normally with what it measured.
    #[test]
    fn a_hung_step_is_abandoned_after_the_grace_and_its_buffers_kept() {
        use std::sync::atomic::Ordering::SeqCst;
        for completes_in_time in [false, true] {
            let hung = Arc::new(Hung::default());
            let mut r = ThreadedRunner::new(Arc::clone(&hung));
            r.grace = Duration::from_millis(300);
            let step = rand_step(100, 4, 2, 1_000_000);
            let stop = Stop::new();
            let got = std::thread::scope(|s| {
                s.spawn(|| {
                    while hung.submitted.load(SeqCst) < 8 {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    stop.request(StopReason::Deadline);
                    if completes_in_time {
                        hung.release.store(true, SeqCst);
                    }
                });
                r.run_step(&step, &stop, &mut |_| {})
            });
            if completes_in_time {
                let res = got.expect("the step ends normally");
                // At least both jobs' first 4 (a job may reap and send more
                // before the stop reaches it).
                assert!(res.read.as_ref().is_some_and(|d| d.ios >= 8), "{res:?}");
                assert_eq!(r.abandoned(), None);
                assert_eq!(hung.dropped.load(SeqCst), 2, "queues freed after their I/O");
                continue;
            }
            assert_eq!(got.map(|_| ()).map_err(|e| e.errno), Err(libc::ETIMEDOUT));
            let what = r.abandoned().expect("says what was abandoned").to_string();
            assert!(what.contains("step main") && what.contains("2 job(s)"), "{what}");
            assert_eq!(hung.dropped.load(SeqCst), 0, "no buffer freed while I/O is in flight");
            let sent = hung.submitted.load(SeqCst);
            assert_eq!(sent, 8, "no request after the stop");
            let later = r.run_step(&step, &Stop::new(), &mut |_| {});
            assert_eq!(later.map(|_| ()).map_err(|e| e.errno), Err(libc::EIO));
            assert_eq!(hung.submitted.load(SeqCst), sent, "a hung device gets nothing more");
            // The I/O completes at last: the abandoned thread ends and frees.
            hung.release.store(true, SeqCst);
            let t0 = Instant::now();
            while hung.dropped.load(SeqCst) < 2 && t0.elapsed() < Duration::from_secs(20) {
                std::thread::sleep(Duration::from_millis(10));
            }
            assert_eq!(hung.dropped.load(SeqCst), 2, "freed once the I/O completed");
        }
    }

    /// A disk whose queue for one job fails its `fail_at`-th request with
    /// EIO; counts each job's requests.
    #[derive(Debug)]
    struct Flaky {
        bad_seed: u64,
        fail_at: usize,
        sent: Arc<Mutex<Vec<(u64, usize)>>>,
    }

    #[derive(Debug)]
    struct FlakyQueue {
        seed: u64,
        fail_at: Option<usize>,
        n: usize,
        done: Vec<Completion>,
        sent: Arc<Mutex<Vec<(u64, usize)>>>,
    }

    impl IoQueue for FlakyQueue {
        fn depth(&self) -> usize {
            2
        }
        fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
            self.n += 1;
            let result = if self.fail_at == Some(self.n) {
                Err(libc::EIO)
            } else {
                Ok(req.len)
            };
            self.done.push(Completion { slot, result });
            Ok(())
        }
        fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            out.append(&mut self.done);
            Ok(())
        }
    }

    impl Drop for FlakyQueue {
        fn drop(&mut self) {
            self.sent.lock().unwrap().push((self.seed, self.n));
        }
    }

    impl Target for Flaky {
        type Queue = FlakyQueue;
        fn geometry(&self) -> Geometry {
            Geometry {
                size: LOOP_SIZE,
                logical_block: 512,
                physical_block: 4096,
            }
        }
        fn open(&self, spec: &OpenSpec) -> Result<FlakyQueue, IoError> {
            Ok(FlakyQueue {
                seed: spec.seed,
                fail_at: (spec.seed == self.bad_seed).then_some(self.fail_at),
                n: 0,
                done: Vec::new(),
                sent: Arc::clone(&self.sent),
            })
        }
        fn drop_caches(&self) -> Result<(), IoError> {
            Ok(())
        }
    }

    /// A job whose request fails ends the step with that error (errno and
    /// the failed request's offset) once every job has returned; the other
    /// job is not cancelled and runs to its bound; the test's status is
    /// `error` naming errno and offset.
    #[test]
    fn a_failed_job_ends_the_step_with_its_error_and_its_sibling_runs_on() {
        let step = rand_step(100, 2, 2, 300);
        let sent = Arc::new(Mutex::new(Vec::new()));
        let flaky = Arc::new(Flaky {
            bad_seed: step.seed ^ 1,
            fail_at: 10,
            sent: Arc::clone(&sent),
        });
        let mut r = ThreadedRunner::new(flaky);
        let e = r.run_step(&step, &Stop::new(), &mut |_| {}).expect_err("job 1 fails");
        assert_eq!(e.errno, libc::EIO);
        assert_eq!(e.req.op, Op::Read);
        let mut g = runner::OffsetGen::new(&step, 1);
        let tenth = (0..10).map(|_| g.next_req()).last().expect("ten requests");
        assert_eq!(e.req.offset, tenth.offset, "the failed request's offset");
        let mut by_job = sent.lock().unwrap().clone();
        by_job.sort_unstable();
        let mut want = vec![(step.seed, 300), (step.seed ^ 1, 10)];
        want.sort_unstable();
        assert_eq!(by_job, want, "job 0 ran to its bound, job 1 stopped at its error");
        let spec = bench_core::spec::TestSpec::new("t", bench_core::spec::Workload::RandRead, |_| {});
        let t = runner::run_test(&spec, "flaky", &[step], &mut r, &Stop::new(), &mut |_| {});
        let bench_core::document::result::Status::Error {
            errno, offset, message, ..
        } = &t.status
        else {
            panic!("{:?}", t.status)
        };
        assert_eq!((*errno, *offset), (libc::EIO, tenth.offset));
        assert!(
            message.contains(&format!("read at offset {} failed: errno 5", tenth.offset)),
            "{message}"
        );
    }

    /// Each job's ring is made on its own thread, so fio's SINGLE_ISSUER
    /// and DEFER_TASKRUN hold with several jobs; the step result records
    /// the flags the ring got (on this kernel: 6.1+ has them all), the
    /// registered file and buffers; depth 1 is psync.
    #[test]
    fn the_step_result_says_how_the_ring_was_set_up() {
        let Some(lo) = LoopDev::new("flags") else { return };
        let mut r = ThreadedRunner::new(Arc::new(lo.target(false)));
        let res = r
            .run_step(&rand_step(100, 8, 2, 400), &Stop::new(), &mut |_| {})
            .expect("step");
        assert_eq!(res.read.as_ref().map(|d| d.ios), Some(800));
        let e = res.engine.expect("engine");
        assert_eq!(e.name, "io_uring");
        if crate::sys::uring::tests::kernel() >= (6, 1) {
            assert_eq!(
                e.setup_flags,
                ["CQSIZE", "COOP_TASKRUN", "SINGLE_ISSUER", "DEFER_TASKRUN"],
                "{e:?}"
            );
            assert!(e.refused_flags.is_empty(), "{e:?}");
        }
        assert!(e.registered_file && e.fixed_bufs && e.registered_ring, "{e:?}");
        let res = r
            .run_step(&rand_step(100, 1, 1, 10), &Stop::new(), &mut |_| {})
            .expect("step");
        assert_eq!(res.engine.map(|e| e.name), Some("psync".to_string()));
    }

    /// A runner that watches devices (an array's members) records each
    /// one's counters with the step: the device the step read from did
    /// all of its bytes, the idle one none; without devices to watch, no
    /// record.
    #[test]
    fn a_step_records_what_the_watched_devices_did() {
        let (Some(lo), Some(idle)) = (LoopDev::new("watched"), LoopDev::new("watched-idle")) else {
            return;
        };
        let name = |d: &str| d.rsplit('/').next().expect("name").to_string();
        let mut r = ThreadedRunner::new(Arc::new(lo.target(false)));
        let step = rand_step(100, 4, 1, 4000);
        assert!(r
            .run_step(&step, &Stop::new(), &mut |_| {})
            .expect("step")
            .members
            .is_empty());
        r.watch = vec![
            Watched::new(&lo.dev, "/dev/md9", &name(&lo.dev)),
            Watched::new(&idle.dev, "/dev/md9", &name(&idle.dev)),
        ];
        let res = r.run_step(&step, &Stop::new(), &mut |_| {}).expect("step");
        let m = &res.members;
        assert_eq!(m.len(), 2, "{m:?}");
        assert_eq!(
            (m[0].path.as_str(), m[0].parent.as_str()),
            (lo.dev.as_str(), "/dev/md9")
        );
        assert_eq!(m[0].read_bytes, 4000 * 4096, "every direct read, counted once: {m:?}");
        assert_eq!((m[0].write_bytes, m[0].writes), (0, 0), "{m:?}");
        assert!((m[0].share - 1.0).abs() < 1e-12 && m[1].share == 0.0, "{m:?}");
        assert_eq!(m[1].read_bytes + m[1].write_bytes, 0, "{m:?}");
        assert!(m[0].window_ns >= res.runtime_ns, "{m:?} vs {}", res.runtime_ns);
        assert!(m[0].utilization > 0.0 && m[0].utilization <= 1.0 + 1e-9, "{m:?}");
    }

    /// sqthread_poll (at depth 1, where it forces the ring, and 8) runs a
    /// verifying write job to completion: the kernel's thread submits, the
    /// job polls the completion queue; SQPOLL takes none of the task-work
    /// flags, which are dropped as fio drops them.
    #[test]
    fn sqthread_poll_runs_a_job_to_completion() {
        let Some(lo) = LoopDev::new("sqpoll") else { return };
        let rw = Arc::new(lo.target(true));
        for iodepth in [1u32, 8] {
            let mut step = rand_step(0, iodepth, 2, 300);
            step.verify = true;
            step.engine.sqthread_poll = true;
            let res = ThreadedRunner::new(Arc::clone(&rw))
                .run_step(&step, &Stop::new(), &mut |_| {})
                .expect("step");
            let writes = res.write.as_ref().map_or(0, |d| d.bytes);
            assert_eq!(writes, 2 * 300 * 4096, "QD{iodepth}");
            assert_eq!(res.verified_bytes, Some(writes), "QD{iodepth}: read back as written");
            let e = res.engine.expect("engine");
            assert_eq!(e.name, "io_uring", "QD{iodepth}");
            assert!(e.setup_flags.contains(&"SQPOLL".to_string()), "{e:?}");
            assert!(e.refused_flags.contains(&"DEFER_TASKRUN".to_string()), "{e:?}");
            assert!(e.registered_file, "{e:?}");
        }
    }

    /// hipri on a loop device, whose queue does not poll (queue/io_poll 0):
    /// the kernel fails each polled request with EOPNOTSUPP (6.18 does;
    /// older kernels may instead clear the bio's poll flag and complete it
    /// by interrupt: then the job runs, its ring set up with IOPOLL). The
    /// test's error says what it means.
    #[test]
    fn hipri_on_a_loop_device_says_the_device_does_not_poll() {
        let Some(lo) = LoopDev::new("hipri") else { return };
        let name = lo.dev.trim_start_matches("/dev/");
        let io_poll = std::fs::read_to_string(sysfs::live(format!("block/{name}/queue/io_poll"))).unwrap_or_default();
        assert_eq!(io_poll.trim(), "0", "loop does not poll");
        let mut r = ThreadedRunner::new(Arc::new(lo.target(false)));
        for iodepth in [1u32, 4] {
            let mut step = rand_step(100, iodepth, 1, 50);
            step.engine.hipri = true;
            let t = one_test(&mut r, &step);
            match &t.status {
                bench_core::document::result::Status::Error { errno, message, .. } => {
                    assert_eq!(*errno, libc::EOPNOTSUPP, "{message}");
                    assert!(
                        message.starts_with("hipri: the kernel refused polled I/O on this target")
                            && message.contains("errno 95")
                            && message.contains("io_poll"),
                        "{message}"
                    );
                }
                bench_core::document::result::Status::Ok => {
                    let e = t.steps[0].engine.as_ref().expect("engine");
                    assert!(e.setup_flags.contains(&"IOPOLL".to_string()), "{e:?}");
                }
                other => panic!("{other:?}"),
            }
        }
    }

    /// A target whose queues record, on the job's thread, the CPUs it may
    /// run on: when the queue is made and at each request.
    /// Each record: the queue's seed (which job) and the CPUs it may run on.
    type Seen = Arc<Mutex<Vec<(u64, Vec<u32>)>>>;

    #[derive(Debug, Default)]
    struct Probe {
        seen: Seen,
    }

    #[derive(Debug)]
    struct ProbeQueue {
        seed: u64,
        seen: Seen,
        done: Vec<Completion>,
    }

    impl IoQueue for ProbeQueue {
        fn depth(&self) -> usize {
            1
        }
        fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
            let cpus = cpu::affinity().expect("affinity");
            self.seen.lock().unwrap().push((self.seed, cpus));
            self.done.push(Completion {
                slot,
                result: Ok(req.len),
            });
            Ok(())
        }
        fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            out.append(&mut self.done);
            Ok(())
        }
    }

    impl Target for Probe {
        type Queue = ProbeQueue;
        fn geometry(&self) -> Geometry {
            Geometry {
                size: LOOP_SIZE,
                logical_block: 512,
                physical_block: 4096,
            }
        }
        fn open(&self, spec: &OpenSpec) -> Result<ProbeQueue, IoError> {
            let cpus = cpu::affinity().expect("affinity");
            self.seen.lock().unwrap().push((spec.seed, cpus));
            Ok(ProbeQueue {
                seed: spec.seed,
                seen: Arc::clone(&self.seen),
                done: Vec::new(),
            })
        }
        fn drop_caches(&self) -> Result<(), IoError> {
            Ok(())
        }
    }

    /// cpus_allowed: every job's thread runs on the list (shared), or on
    /// its own CPU of it, round-robin (split), from before its queue is
    /// made to its last request; the caller's thread is left as it was.
    #[test]
    fn cpus_allowed_pins_each_job_thread() {
        use bench_core::spec::CpusPolicy;
        let online = pin::online(sysfs::root()).expect("online CPUs");
        let before = cpu::affinity().expect("affinity");
        for policy in [CpusPolicy::Shared, CpusPolicy::Split] {
            let probe = Arc::new(Probe::default());
            let seen = Arc::clone(&probe.seen);
            let mut step = rand_step(100, 1, 3, 20);
            step.engine.cpus_allowed.clone_from(&online);
            step.engine.cpus_allowed_policy = policy;
            let res = ThreadedRunner::new(probe)
                .run_step(&step, &Stop::new(), &mut |_| {})
                .expect("step");
            assert_eq!(res.read.as_ref().map(|d| d.ios), Some(60));
            let seen = seen.lock().unwrap().clone();
            assert_eq!(seen.len(), 3 * (1 + 20), "each job: its open and 20 requests");
            for job in 0..3u32 {
                let want = match policy {
                    CpusPolicy::Shared => online.clone(),
                    CpusPolicy::Split => vec![online[job as usize % online.len()]],
                };
                let mine: Vec<&Vec<u32>> = seen
                    .iter()
                    .filter(|(seed, _)| *seed == step.seed ^ u64::from(job))
                    .map(|(_, c)| c)
                    .collect();
                assert_eq!(mine.len(), 21, "job {job}");
                assert!(
                    mine.iter().all(|c| **c == want),
                    "{policy:?} job {job}: {mine:?}, want {want:?}"
                );
            }
        }
        assert_eq!(cpu::affinity().expect("affinity"), before, "the caller is not pinned");
        // A real device pinned to the last CPU runs as ever.
        let Some(lo) = LoopDev::new("cpus") else { return };
        let mut step = rand_step(100, 4, 2, 100);
        step.engine.cpus_allowed = vec![*online.last().expect("a CPU")];
        let res = ThreadedRunner::new(Arc::new(lo.target(false)))
            .run_step(&step, &Stop::new(), &mut |_| {})
            .expect("pinned step");
        assert_eq!(res.read.as_ref().map(|d| d.ios), Some(200));
    }

    /// A CPU this machine does not have, for the jobs or for the kernel's
    /// submission thread, ends the test before any request with EINVAL and
    /// a message naming it and the online CPUs.
    #[test]
    fn an_absent_cpu_is_an_error_at_run_time() {
        let absent = bench_core::vocab::cpus::MAX_CPUS - 1;
        let probe = Arc::new(Probe::default());
        let seen = Arc::clone(&probe.seen);
        let mut r = ThreadedRunner::new(probe);
        let mut step = rand_step(100, 1, 2, 20);
        step.engine.cpus_allowed = vec![0, absent];
        let t = one_test(&mut r, &step);
        let bench_core::document::result::Status::Error { errno, message, .. } = &t.status else {
            panic!("{:?}", t.status)
        };
        assert_eq!(*errno, libc::EINVAL);
        assert!(
            message.contains(&format!(
                "cpus_allowed 0,{absent}: CPU {absent} is not online on this machine (online: "
            )) && message.contains("errno 22"),
            "{message}"
        );
        assert!(seen.lock().unwrap().is_empty(), "no queue made, no request");
        let mut step = rand_step(100, 1, 1, 20);
        step.engine.sqthread_poll = true;
        step.engine.sqthread_poll_cpu = Some(absent);
        let t = one_test(&mut r, &step);
        let bench_core::document::result::Status::Error { errno, message, .. } = &t.status else {
            panic!("{:?}", t.status)
        };
        assert_eq!(*errno, libc::EINVAL);
        assert!(
            message.contains(&format!("sqthread_poll_cpu {absent}: CPU {absent} is not online")),
            "{message}"
        );
        // The next test's error says nothing of these.
        let ok = one_test(&mut r, &rand_step(100, 1, 1, 5));
        assert_eq!(ok.status, bench_core::document::result::Status::Ok);
    }
}
