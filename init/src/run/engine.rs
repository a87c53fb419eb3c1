//! The real I/O engines behind bench-core's `Target` and `IoQueue`: O_DIRECT
//! (or buffered) pread/pwrite for one request in flight (fio's psync),
//! io_uring for more and for fio's io_uring options (`hipri`,
//! `sqthread_poll`) at any depth; a monotonic clock; the threaded step
//! runner (one thread per job, pinned to `cpus_allowed`, each making its
//! own queue).
//!
//! API used by the CLI:
//! - `DevTarget::open(path: &str, permit: Option<WritePermit>) -> Result<DevTarget, EngineError>`
//!   (read-only unless a permit from `safety` is given), implementing
//!   `bench_core::io::Target`;
//! - `MonoClock` implementing `bench_core::io::Clock` (CLOCK_MONOTONIC);
//! - `ThreadedRunner::new(Arc<DevTarget>)` implementing
//!   `bench_core::runner::StepRunner` (its steps can be abandoned when a
//!   device hangs: see [`ThreadedRunner`]).

use std::fmt;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bench_core::io::{Access, Clock, Completion, Geometry, IoError, IoQueue, IoReq, Op, OpenSpec, Target};
use bench_core::result::{EngineInfo, StepResult};
use bench_core::rng::Rng;
use bench_core::runner::{self, open_spec, JobOutcome, Progress, StepRunner, Stop, StopReason};
use bench_core::spec::Step;
use bench_core::units::Nanos;

use crate::disks::identity::{FILE_LOGICAL_BLOCK, FILE_PHYSICAL_BLOCK};
use crate::run::accounting::{Meter, Watched};
use crate::safety::{self, WritePermit};
use crate::sys::buf::AlignedBuf;
use crate::sys::uring::{setup, Ring, RingOp, RingOpts};
use crate::sys::{blk, cpu, file};

/// CLOCK_MONOTONIC, in nanoseconds since the clock was made.
///
/// `Copy` and `Sync`: every job of a step reads the same clock, so their
/// per-second samples share one time origin.
#[derive(Clone, Copy, Debug)]
pub struct MonoClock {
    origin: Instant,
}

impl MonoClock {
    /// A clock whose origin is now.
    pub fn new() -> MonoClock {
        MonoClock { origin: Instant::now() }
    }
}

impl Default for MonoClock {
    fn default() -> Self {
        MonoClock::new()
    }
}

impl Clock for MonoClock {
    fn now(&self) -> Nanos {
        // std's Instant is clock_gettime(CLOCK_MONOTONIC) on Linux. u64
        // nanoseconds last 584 years; saturate rather than wrap beyond.
        Nanos(u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }
}

/// Why a target could not be opened.
#[derive(Debug)]
pub enum EngineError {
    /// `stat` of the path failed.
    Stat {
        /// The path.
        path: String,
        /// The OS error.
        source: io::Error,
    },
    /// Opening the path (read-only; exclusively, for a writable block
    /// device: EBUSY if it is mounted or in use) failed, or it names
    /// neither a block device nor a regular file ([`file::open`]).
    Open {
        /// The path.
        path: String,
        /// The OS error.
        source: io::Error,
    },
    /// A block-device ioctl for the geometry failed.
    Ioctl {
        /// The path.
        path: String,
        /// The request (`BLKGETSIZE64`, ...).
        request: &'static str,
        /// The OS error.
        source: io::Error,
    },
    /// The write permit names another target.
    PermitMismatch {
        /// The path being opened.
        path: String,
        /// The path the permit is for.
        permitted: String,
    },
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Stat { path, source } => write!(f, "{path}: cannot stat: {source}"),
            EngineError::Open { path, source } => write!(f, "{path}: cannot open: {source}"),
            EngineError::Ioctl { path, request, source } => write!(f, "{path}: {request} failed: {source}"),
            EngineError::PermitMismatch { path, permitted } => {
                write!(f, "{path}: the write permit is for {permitted}, not this target")
            }
        }
    }
}

impl std::error::Error for EngineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EngineError::Stat { source, .. } | EngineError::Open { source, .. } | EngineError::Ioctl { source, .. } => {
                Some(source)
            }
            EngineError::PermitMismatch { .. } => None,
        }
    }
}

/// What a [`DevTarget`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// A block device: geometry from ioctls, caches dropped with BLKFLSBUF.
    Block,
    /// A regular file: geometry from its length, caches dropped with fadvise.
    File,
}

/// A block device or a regular file to benchmark.
///
/// # Invariants
/// - `ro` is the one descriptor opened by path: read-only; for a writable
///   target it is the claim's (O_EXCL for a block device, so a device that
///   is mounted or part of an array is never written, and checked to be the
///   device the grant was made for). It serves ioctls and cache drops;
///   every queue reopens *it* (`/proc/self/fd/N`, [`safety::reopen_path`]),
///   never the path, so every request reaches the device `ro` has open.
/// - Queues that write are opened only if the target was opened with a
///   permit (`writable`).
/// - `wrote` is set when the first write request of any of its queues is
///   handed to the kernel (just before `pwrite`; as it enters io_uring's
///   submission queue), and never cleared: false means no write of this
///   target's reached the device.
#[derive(Debug)]
pub struct DevTarget {
    kind: TargetKind,
    geometry: Geometry,
    ro: File,
    writable: bool,
    wrote: Arc<WriteMark>,
}

/// Whether a write was handed to the kernel: shared by a target and the
/// queues it opened for writing (see [`DevTarget::wrote`]).
#[derive(Debug, Default)]
pub struct WriteMark(AtomicBool);

impl WriteMark {
    /// Record a write about to be submitted. Stores only the first time,
    /// so the jobs of a step do not contend for the cache line.
    fn mark(&self) {
        if !self.0.load(Ordering::Relaxed) {
            self.0.store(true, Ordering::Release);
        }
    }

    fn get(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

fn ioctl_err<'p>(path: &'p str, request: &'static str) -> impl Fn(i32) -> EngineError + 'p {
    move |errno| EngineError::Ioctl {
        path: path.to_string(),
        request,
        source: io::Error::from_raw_os_error(errno),
    }
}

impl DevTarget {
    /// Open `path` (read-only) and read its geometry. With a permit (which
    /// must be for this exact path), its claimed descriptor is the target's
    /// and queues may later be opened for writing.
    pub fn open(path: &str, permit: Option<WritePermit>) -> Result<DevTarget, EngineError> {
        if let Some(p) = &permit {
            if p.path() != path {
                return Err(EngineError::PermitMismatch {
                    path: path.to_string(),
                    permitted: p.path().to_string(),
                });
            }
        }
        let writable = permit.is_some();
        let ro = match permit {
            Some(p) => p.into_file(),
            None => file::open(path, false, false).map_err(|source| EngineError::Open {
                path: path.to_string(),
                source,
            })?,
        };
        let meta = ro.metadata().map_err(|source| EngineError::Stat {
            path: path.to_string(),
            source,
        })?;
        // `file::open` (the claim's too) opens nothing else.
        let kind = if meta.file_type().is_block_device() {
            TargetKind::Block
        } else {
            TargetKind::File
        };
        let geometry = match kind {
            TargetKind::Block => Geometry {
                size: blk::size_bytes(&ro).map_err(ioctl_err(path, "BLKGETSIZE64"))?,
                logical_block: blk::logical_block(&ro).map_err(ioctl_err(path, "BLKSSZGET"))?,
                physical_block: blk::physical_block(&ro).map_err(ioctl_err(path, "BLKPBSZGET"))?,
            },
            TargetKind::File => Geometry {
                size: meta.len(),
                logical_block: FILE_LOGICAL_BLOCK,
                physical_block: FILE_PHYSICAL_BLOCK,
            },
        };
        Ok(DevTarget {
            kind,
            geometry,
            ro,
            writable,
            wrote: Arc::default(),
        })
    }

    /// True if queues may be opened for writing.
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// True once a queue of this target handed a write to the kernel: the
    /// device may have changed. A target claimed for writing whose writes
    /// never ran (skipped, interrupted before them) stays false.
    pub fn wrote(&self) -> bool {
        self.wrote.get()
    }

    /// The target's one descriptor (see the invariants).
    pub fn file(&self) -> &File {
        &self.ro
    }
}

/// The request to blame when something fails outside any request.
fn no_req(op: Op) -> IoReq {
    IoReq { op, offset: 0, len: 0 }
}

impl Target for DevTarget {
    type Queue = DevQueue;

    fn geometry(&self) -> Geometry {
        self.geometry
    }

    fn open(&self, spec: &OpenSpec) -> Result<DevQueue, IoError> {
        let fail = |errno| IoError {
            errno,
            req: no_req(if spec.write { Op::Write } else { Op::Read }),
        };
        if spec.write && !self.writable() {
            return Err(fail(libc::EPERM));
        }
        let buf_len = usize::try_from(spec.max_len).map_err(|_| fail(libc::EINVAL))?;
        if spec.depth == 0 {
            return Err(fail(libc::EINVAL));
        }
        let f = file::open(
            &safety::reopen_path(&self.ro),
            spec.write,
            spec.access == Access::Direct,
        )
        .map_err(|e| fail(file::errno_of(&e)))?;
        let mut rng = Rng::new(spec.seed);
        let wrote = spec.write.then(|| Arc::clone(&self.wrote));
        // fio's io_uring options keep the ring at depth 1 (fio's
        // ioengine=io_uring at iodepth=1); plain depth 1 is psync.
        if spec.depth == 1 && !spec.hipri && !spec.sqthread_poll {
            let rbuf = AlignedBuf::new(buf_len).ok_or_else(|| fail(libc::ENOMEM))?;
            let wbuf = if spec.write {
                let mut w = AlignedBuf::new(buf_len).ok_or_else(|| fail(libc::ENOMEM))?;
                rng.fill(w.as_mut_slice());
                Some(w)
            } else {
                None
            };
            Ok(DevQueue::Sync(SyncQueue {
                file: f,
                rbuf,
                wbuf,
                done: None,
                range_sync: None,
                wrote,
            }))
        } else {
            let opts = RingOpts {
                depth: spec.depth,
                buf_len,
                write_bufs: spec.write,
                hipri: spec.hipri,
                sqthread_poll: spec.sqthread_poll,
                sqthread_poll_cpu: spec.sqthread_poll_cpu,
            };
            let mut ring = Ring::new(f, &opts).map_err(|e| fail(file::errno_of(&e)))?;
            if spec.write {
                for slot in 0..ring.depth() {
                    if let Some(w) = ring.write_buf_mut(slot) {
                        rng.fill(w);
                    }
                }
            }
            let last = no_req(Op::Read);
            Ok(DevQueue::Uring(Box::new(UringQueue { ring, last, wrote })))
        }
    }

    fn drop_caches(&self) -> Result<(), IoError> {
        let fail = |errno| IoError {
            errno,
            req: no_req(Op::Flush),
        };
        // Dirty pages are not dropped: write them back first (hdparm's
        // flush_buffer_cache does fsync, then BLKFLSBUF).
        file::fsync(&self.ro).map_err(fail)?;
        match self.kind {
            TargetKind::Block => blk::flush_buffers(&self.ro).map_err(fail),
            TargetKind::File => file::fadvise_dontneed(&self.ro).map_err(fail),
        }
    }

    /// hdparm's `prepare_timing_buf`: `sync(); sleep(n)`.
    fn settle(&self, for_: Nanos) -> Result<(), IoError> {
        #[cfg(test)]
        let _sync = tests::GLOBAL_SYNC
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        nix::unistd::sync();
        std::thread::sleep(Duration::from_nanos(for_.0));
        Ok(())
    }
}

/// One request in flight: pread/pwrite/fdatasync, performed in `submit`.
#[derive(Debug)]
pub struct SyncQueue {
    file: File,
    rbuf: AlignedBuf,
    /// Random contents, present if opened for writing.
    wbuf: Option<AlignedBuf>,
    done: Option<Completion>,
    /// The ring of [`Op::FlushRange`]'s ranged fdatasync, made on the first
    /// one (or the error that io_uring gave).
    range_sync: Option<std::io::Result<crate::sys::uring::RangeSync>>,
    /// The target's mark, if opened for writing.
    wrote: Option<Arc<WriteMark>>,
}

fn transferred(n: Result<usize, i32>) -> Result<u32, i32> {
    n.and_then(|n| u32::try_from(n).map_err(|_| libc::EOVERFLOW))
}

impl IoQueue for SyncQueue {
    fn depth(&self) -> usize {
        1
    }

    fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
        let err = |errno| IoError { errno, req };
        if slot != 0 || self.done.is_some() {
            return Err(err(libc::EINVAL));
        }
        let len = usize::try_from(req.len).map_err(|_| err(libc::EINVAL))?;
        if matches!(req.op, Op::Read | Op::Write) && len > self.rbuf.len() {
            return Err(err(libc::EINVAL));
        }
        let result = match req.op {
            Op::Read => transferred(file::pread(
                &self.file,
                &mut self.rbuf.as_mut_slice()[..len],
                req.offset,
            )),
            // Without a write buffer the file is open read-only: the kernel's answer.
            Op::Write => match &self.wbuf {
                Some(w) => {
                    if let Some(m) = &self.wrote {
                        m.mark();
                    }
                    transferred(file::pwrite(&self.file, &w.as_slice()[..len], req.offset))
                }
                None => Err(libc::EBADF),
            },
            Op::Flush => file::fdatasync(&self.file).map(|()| 0),
            Op::FlushRange => {
                crate::sys::uring::fdatasync_range(&self.file, &mut self.range_sync, req.offset, req.len).map(|()| 0)
            }
        };
        self.done = Some(Completion { slot, result });
        Ok(())
    }

    fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
        out.extend(self.done.take());
        Ok(())
    }

    fn engine(&self) -> Option<EngineInfo> {
        Some(EngineInfo {
            name: "psync".to_string(),
            ..EngineInfo::default()
        })
    }
}

/// Several requests in flight through io_uring.
#[derive(Debug)]
pub struct UringQueue {
    ring: Ring,
    /// The last request submitted, blamed if the ring itself fails.
    last: IoReq,
    /// The target's mark, if opened for writing.
    wrote: Option<Arc<WriteMark>>,
}

impl IoQueue for UringQueue {
    fn depth(&self) -> usize {
        self.ring.depth()
    }

    fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
        let op = match req.op {
            Op::Read => RingOp::Read,
            Op::Write => RingOp::Write,
            Op::Flush => RingOp::Fsync,
            Op::FlushRange => RingOp::FsyncRange,
        };
        self.ring
            .push(slot, op, req.offset, req.len)
            .map_err(|errno| IoError { errno, req })?;
        if op == RingOp::Write {
            // In the submission queue: the kernel may take it now (SQPOLL).
            if let Some(m) = &self.wrote {
                m.mark();
            }
        }
        self.last = req;
        Ok(())
    }

    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
        self.ring
            .wait(min, |slot, res| {
                let result = u32::try_from(res).map_err(|_| res.saturating_neg());
                out.push(Completion { slot, result });
            })
            .map_err(|errno| IoError { errno, req: self.last })
    }

    fn engine(&self) -> Option<EngineInfo> {
        let s = self.ring.setup();
        let names = |bits| setup::names(bits).into_iter().map(str::to_string).collect();
        Some(EngineInfo {
            name: "io_uring".to_string(),
            setup_flags: names(s.flags),
            refused_flags: names(s.refused),
            registered_file: s.registered_file,
            fixed_bufs: s.fixed_bufs,
            registered_ring: s.registered_ring,
            no_iowait: s.no_iowait,
        })
    }
}

/// One job's queue: synchronous for depth 1, io_uring beyond.
#[derive(Debug)]
pub enum DevQueue {
    /// pread/pwrite.
    Sync(SyncQueue),
    /// io_uring (boxed: the ring is several times larger than the sync queue).
    Uring(Box<UringQueue>),
}

impl IoQueue for DevQueue {
    fn depth(&self) -> usize {
        match self {
            DevQueue::Sync(q) => q.depth(),
            DevQueue::Uring(q) => q.depth(),
        }
    }

    fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
        match self {
            DevQueue::Sync(q) => q.submit(slot, req),
            DevQueue::Uring(q) => q.submit(slot, req),
        }
    }

    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
        match self {
            DevQueue::Sync(q) => q.reap(min, out),
            DevQueue::Uring(q) => q.reap(min, out),
        }
    }

    fn batched(&self) -> bool {
        matches!(self, DevQueue::Uring(_))
    }

    fn commit(&mut self) -> Result<(), IoError> {
        match self {
            DevQueue::Sync(_) => Ok(()),
            DevQueue::Uring(q) => q.ring.commit().map_err(|errno| IoError { errno, req: q.last }),
        }
    }

    fn write_buf(&mut self, slot: usize, len: usize) -> Option<&mut [u8]> {
        match self {
            // One request in flight: one write buffer serves every slot.
            DevQueue::Sync(q) => q.wbuf.as_mut()?.as_mut_slice().get_mut(..len),
            DevQueue::Uring(q) => q.ring.write_buf_mut(slot)?.get_mut(..len),
        }
    }

    fn read_buf(&self, slot: usize, len: usize) -> Option<&[u8]> {
        match self {
            DevQueue::Sync(q) => q.rbuf.as_slice().get(..len),
            DevQueue::Uring(q) => q.ring.buf(slot)?.get(..len),
        }
    }

    /// The read buffer of a slot (hdparm's twins run at depth 1: psync,
    /// or io_uring with fio's io_uring options).
    fn read_buf_mut(&mut self, slot: usize, len: usize) -> Option<&mut [u8]> {
        match self {
            DevQueue::Sync(q) => q.rbuf.as_mut_slice().get_mut(..len),
            DevQueue::Uring(q) => q.ring.buf_mut(slot)?.get_mut(..len),
        }
    }

    fn engine(&self) -> Option<EngineInfo> {
        match self {
            DevQueue::Sync(q) => q.engine(),
            DevQueue::Uring(q) => q.engine(),
        }
    }
}

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
        }
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
/// runs), the submission thread's CPU checked, then opened.
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
        cpu::pin(&cpus).map_err(|e| fail(e.errno, e.message))?;
    }
    if let (true, Some(c)) = (step.engine.sqthread_poll, step.engine.sqthread_poll_cpu) {
        let online = cpu::online().unwrap_or_default();
        if !online.contains(&c) {
            return Err(fail(
                libc::EINVAL,
                format!(
                    "sqthread_poll_cpu {c}: CPU {c} is not online on this machine (online: {}); errno {} (EINVAL)",
                    bench_core::cpus::format_cpu_list(&online),
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

/// One job on its own thread (job 0 on the step thread): make its queue,
/// wait for its siblings at `gate`, run; its queue is dropped on this
/// thread too (an io_uring with SINGLE_ISSUER answers no other).
#[allow(clippy::too_many_arguments)] // the job's whole context, passed down once
fn job_thread<T: Target>(
    target: &T,
    step: &Step,
    job: u32,
    gate: &Gate,
    clock: &MonoClock,
    stop: &Stop,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<JobOutcome, Option<JobFail>> {
    let opened = open_job(target, step, job);
    if !gate.all_ready(opened.is_ok()) {
        // Its own failure, or (None) a sibling's: the sibling's is the step's.
        return Err(opened.err());
    }
    let mut q = opened.map_err(Some)?;
    runner::run_job(step, job, &mut q, clock, stop, progress).map_err(|e| {
        Some(JobFail {
            message: explain(step, job, &e, false),
            error: e,
        })
    })
}

/// A step's whole work, on the step thread: prepare, then every job on a
/// thread of its own (job 0 on this thread, reporting progress), each
/// making its own queue before any I/O, then merge.
fn run_jobs<T>(
    target: &T,
    step: &Step,
    stop: &Stop,
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
    let results: Vec<Result<JobOutcome, Option<JobFail>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..jobs)
            .map(|job| {
                let (clock, gate) = (&clock, &gate);
                s.spawn(move || job_thread(target, step, job, gate, clock, stop, &mut |_| {}))
            })
            .collect();
        let mut all = vec![job_thread(target, step, 0, &gate, &clock, stop, progress)];
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
            std::thread::Builder::new()
                .name("bootbench-step".to_string())
                .spawn(move || {
                    let (progress_tx, prepared_tx) = (tx.clone(), tx.clone());
                    let interval = Duration::from_nanos(step.sample_interval.0);
                    let mut prepared = || {
                        let _ = prepared_tx.send(StepMsg::Prepared(Meter::start(&watch, interval)));
                    };
                    let r = run_jobs(&*target, &step, &inner, &mut prepared, &mut |p| {
                        let _ = progress_tx.send(StepMsg::Progress {
                            step: p.step.to_string(),
                            done: p.done,
                            eta: p.eta,
                        });
                    });
                    let _ = tx.send(StepMsg::Done(Box::new(r)));
                })
                .map_err(|e| IoError {
                    errno: file::errno_of(&e),
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
                errno: file::errno_of(&e),
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

/// A disk that hangs, for tests of the runner and the run loop.
#[cfg(test)]
pub(crate) mod hung {
    use super::*;

    /// A disk whose requests complete only once `release` is set (a hung
    /// disk until then); counts requests submitted and queues dropped (their
    /// buffers freed).
    #[derive(Debug, Default)]
    pub(crate) struct Hung {
        pub(crate) release: Arc<std::sync::atomic::AtomicBool>,
        pub(crate) submitted: Arc<std::sync::atomic::AtomicUsize>,
        pub(crate) dropped: Arc<std::sync::atomic::AtomicUsize>,
    }

    /// A queue of [`Hung`].
    #[derive(Debug)]
    pub(crate) struct HungQueue {
        release: Arc<std::sync::atomic::AtomicBool>,
        submitted: Arc<std::sync::atomic::AtomicUsize>,
        dropped: Arc<std::sync::atomic::AtomicUsize>,
        inflight: Vec<usize>,
    }

    impl IoQueue for HungQueue {
        fn depth(&self) -> usize {
            4
        }
        fn submit(&mut self, slot: usize, _req: IoReq) -> Result<(), IoError> {
            self.submitted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            self.inflight.push(slot);
            Ok(())
        }
        fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            while !self.release.load(std::sync::atomic::Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
            out.extend(
                self.inflight
                    .drain(..)
                    .map(|slot| Completion { slot, result: Ok(4096) }),
            );
            Ok(())
        }
    }

    impl Drop for HungQueue {
        fn drop(&mut self) {
            self.dropped.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    impl Target for Hung {
        type Queue = HungQueue;
        fn geometry(&self) -> Geometry {
            Geometry {
                size: 64 << 20,
                logical_block: 512,
                physical_block: 4096,
            }
        }
        fn open(&self, _spec: &OpenSpec) -> Result<HungQueue, IoError> {
            Ok(HungQueue {
                release: Arc::clone(&self.release),
                submitted: Arc::clone(&self.submitted),
                dropped: Arc::clone(&self.dropped),
                inflight: Vec::new(),
            })
        }
        fn drop_caches(&self) -> Result<(), IoError> {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    /// `sync(2)` writes back every dirty page of the machine: the engine's
    /// settle takes this for reading around it, and a test that needs dirty
    /// pages to stay dirty (flush_range_flushes_its_range_only) holds it for
    /// writing, so no other test's sync runs meanwhile.
    pub(super) static GLOBAL_SYNC: std::sync::RwLock<()> = std::sync::RwLock::new(());

    use super::hung::Hung;
    use super::*;
    use crate::safety::WritePermit;
    use bench_core::spec::{Limit, Pattern, Prepare};
    use std::path::PathBuf;

    const MIB: u64 = 1 << 20;
    const LOOP_SIZE: u64 = 64 * MIB;

    /// The byte at `offset` of a fresh backing file: never zero, and
    /// different at nearby offsets, so a read from the wrong place shows.
    fn pattern_byte(offset: u64) -> u8 {
        u8::try_from(offset.wrapping_mul(31) % 251).unwrap_or(0) + 1
    }

    fn pattern(offset: u64, len: usize) -> Vec<u8> {
        (offset..).take(len).map(pattern_byte).collect()
    }

    /// A loop device over a file in /dev/shm holding the pattern, detached
    /// and deleted on drop.
    struct LoopDev {
        _lo: crate::testutil::Loop,
        file: PathBuf,
        dev: String,
    }

    impl LoopDev {
        /// `None` (with the reason printed) where loop devices cannot be
        /// made: not root, or no losetup.
        fn new(name: &str) -> Option<LoopDev> {
            // The pattern repeats every 251 bytes: write whole periods of it.
            let chunk = pattern(0, 251 * 4096);
            let mut data = Vec::with_capacity(usize::try_from(LOOP_SIZE).expect("fits"));
            while data.len() < data.capacity() {
                let n = chunk.len().min(data.capacity() - data.len());
                data.extend_from_slice(&chunk[..n]);
            }
            let lo = crate::testutil::Loop::new(&format!("engine-{name}"), &data)?;
            let (file, dev) = (lo.files[0].clone(), lo.dev.clone());
            Some(LoopDev { _lo: lo, file, dev })
        }

        fn backing(&self, offset: u64, len: usize) -> Vec<u8> {
            use std::os::unix::fs::FileExt;
            let mut v = vec![0; len];
            File::open(&self.file)
                .and_then(|f| f.read_exact_at(&mut v, offset))
                .expect("read backing file");
            v
        }

        /// The whole backing file, to compare before and after (a byte-exact
        /// comparison is stronger than a checksum and as fast).
        fn contents(&self) -> Vec<u8> {
            std::fs::read(&self.file).expect("read backing file")
        }

        fn target(&self, writable: bool) -> DevTarget {
            let permit = writable.then(|| WritePermit::for_tests(&self.dev));
            DevTarget::open(&self.dev, permit).expect("open target")
        }
    }

    fn spec(access: Access, write: bool, depth: u32, max_len: u32) -> OpenSpec {
        OpenSpec::plain(access, write, depth, max_len, 42)
    }

    fn req(op: Op, offset: u64, len: u32) -> IoReq {
        IoReq { op, offset, len }
    }

    /// Submit `reqs` in slots 0.., reap them all; the completions by slot.
    fn run_batch(q: &mut DevQueue, reqs: &[IoReq]) -> Vec<Completion> {
        let mut out = Vec::new();
        for (slot, r) in reqs.iter().enumerate() {
            q.submit(slot, *r).expect("submit");
        }
        while out.len() < reqs.len() {
            q.reap(reqs.len() - out.len(), &mut out).expect("reap");
        }
        out.sort_by_key(|c| c.slot);
        out
    }

    fn fds_on(path: &str) -> usize {
        let want = std::fs::canonicalize(path).expect("canonicalize");
        std::fs::read_dir("/proc/self/fd")
            .expect("fd dir")
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|p| *p == want)
            .count()
    }

    #[test]
    fn loop_geometry_from_ioctls() {
        let Some(lo) = LoopDev::new("geom") else { return };
        let t = lo.target(false);
        let g = t.geometry();
        assert_eq!(t.kind, TargetKind::Block);
        assert_eq!(g.size, LOOP_SIZE);
        assert_eq!(g.logical_block, 512);
        assert!(
            g.physical_block >= g.logical_block && g.physical_block.is_power_of_two(),
            "{g:?}"
        );
        assert!(!t.writable());
    }

    #[test]
    fn regular_file_geometry_and_buffered_read() {
        let path = std::env::temp_dir().join(format!("bootbench-engine-file-{}", std::process::id()));
        std::fs::write(&path, pattern(0, 3 * 4096 + 100)).expect("write");
        let p = path.to_str().expect("utf8").to_string();
        let t = DevTarget::open(&p, None).expect("open");
        let g = t.geometry();
        let mut q = t.open(&spec(Access::Buffered, false, 1, 4096)).expect("queue");
        let done = run_batch(&mut q, &[req(Op::Read, 4096, 4096)]);
        let read_ok = q.read_buf(0, 4096).expect("read buffer")[..] == pattern(4096, 4096)[..];
        let dropped = t.drop_caches();
        std::fs::remove_file(&path).ok();
        assert_eq!(
            (t.kind, g.size, g.logical_block, g.physical_block),
            (TargetKind::File, 3 * 4096 + 100, 512, 4096)
        );
        assert_eq!(
            done,
            vec![Completion {
                slot: 0,
                result: Ok(4096)
            }]
        );
        assert!(read_ok, "read back the file's bytes");
        assert_eq!(dropped, Ok(()));
    }

    #[test]
    fn not_a_target_and_missing_paths_are_errors() {
        let e = DevTarget::open("/dev/null", None).expect_err("not a target");
        assert_eq!(
            e.to_string(),
            "/dev/null: cannot open: a character device, not a block device or a regular file"
        );
        let e = DevTarget::open("/nonexistent/bootbench", None).expect_err("missing");
        assert!(matches!(&e, EngineError::Open { source, .. } if source.raw_os_error() == Some(libc::ENOENT)));
        assert!(e.to_string().starts_with("/nonexistent/bootbench: cannot open"), "{e}");
    }

    /// Reads at known offsets and writes verified in the backing file, for
    /// the synchronous engine (depth 1) and io_uring (depth 4).
    #[test]
    fn sync_and_uring_read_back_what_was_written() {
        let Some(lo) = LoopDev::new("rw") else { return };
        let t = lo.target(true);
        for depth in [1u32, 4] {
            let mut q = t.open(&spec(Access::Direct, true, depth, 65536)).expect("queue");
            assert_eq!(matches!(q, DevQueue::Sync(_)), depth == 1);
            assert_eq!(q.depth(), usize::try_from(depth).expect("fits"));
            let eng = q.engine().expect("engine");
            assert_eq!(eng.name, if depth == 1 { "psync" } else { "io_uring" });
            // The ring's requests name the registered file (fio's
            // registerfiles) and buffers (fixedbufs).
            assert_eq!((eng.registered_file, eng.fixed_bufs), (depth > 1, depth > 1), "{eng:?}");
            let slots = q.depth();
            // Reads at distinct offsets, each into its own slot.
            let reads: Vec<IoReq> = (0..slots)
                .map(|s| req(Op::Read, MIB * (3 + 2 * s as u64), 8192))
                .collect();
            for (slot, r) in reads.iter().enumerate() {
                let done = run_batch_one(&mut q, slot, *r);
                assert_eq!(done.result, Ok(8192), "depth {depth} read {r:?}");
                assert_eq!(
                    q.read_buf(slot, 8192).expect("read buffer")[..],
                    pattern(r.offset, 8192)[..],
                    "depth {depth} read {r:?}"
                );
            }
            // Writes of each slot's random buffer, then a flush.
            let base = MIB * (20 + 10 * u64::from(depth));
            let writes: Vec<IoReq> = (0..slots)
                .map(|s| req(Op::Write, base + 65536 * s as u64, 65536))
                .collect();
            let done = run_batch(&mut q, &writes);
            assert!(done.iter().all(|c| c.result == Ok(65536)), "depth {depth}: {done:?}");
            assert_eq!(run_batch(&mut q, &[req(Op::Flush, 0, 0)])[0].result, Ok(0));
            for (slot, w) in writes.iter().enumerate() {
                let sent = q.write_buf(slot, 65536).expect("write buffer").to_vec();
                assert!(sent.iter().any(|&b| b != 0), "write buffer is random, not zeros");
                assert_eq!(lo.backing(w.offset, 65536), sent, "depth {depth} slot {slot}");
            }
            if slots > 1 {
                let first = q.write_buf(0, 4096).expect("write buffer").to_vec();
                assert_ne!(
                    first[..],
                    q.write_buf(1, 4096).expect("write buffer")[..],
                    "slots hold different data"
                );
            }
        }
    }

    fn run_batch_one(q: &mut DevQueue, slot: usize, r: IoReq) -> Completion {
        q.submit(slot, r).expect("submit");
        let mut out = Vec::new();
        while out.is_empty() {
            q.reap(1, &mut out).expect("reap");
        }
        assert_eq!(out.len(), 1);
        out[0]
    }

    #[test]
    fn write_without_permit_is_eperm_and_changes_nothing() {
        let Some(lo) = LoopDev::new("eperm") else { return };
        let before = lo.contents();
        let t = lo.target(false);
        let fds = fds_on(&lo.dev);
        for depth in [1, 32] {
            for access in [Access::Direct, Access::Buffered] {
                let e = t.open(&spec(access, true, depth, 4096)).expect_err("must refuse");
                assert_eq!(e.errno, libc::EPERM);
                assert_eq!(fds_on(&lo.dev), fds, "no descriptor was opened");
            }
        }
        // A read-only queue cannot write either: the kernel's EBADF.
        let mut q = t.open(&spec(Access::Direct, false, 1, 4096)).expect("read-only queue");
        assert_eq!(
            run_batch(&mut q, &[req(Op::Write, 0, 4096)])[0].result,
            Err(libc::EBADF)
        );
        let mut q = t.open(&spec(Access::Direct, false, 2, 4096)).expect("read-only ring");
        assert_eq!(
            run_batch(&mut q, &[req(Op::Write, 0, 4096)])[0].result,
            Err(libc::EBADF)
        );
        drop(q);
        // A writable block target holds the device's exclusive claim: a
        // second exclusive open of the same device (like a mount) is EBUSY.
        let claim = lo.target(true);
        let second = file::open_exclusive(&lo.dev);
        assert_eq!(second.map_err(|e| e.raw_os_error()).err(), Some(Some(libc::EBUSY)));
        drop(claim);
        // A permit for another target is refused outright.
        let elsewhere = crate::testutil::TempDir::new("eperm-other");
        let other_path = elsewhere.0.join("other");
        std::fs::write(&other_path, [0u8; 4096]).expect("write");
        let other = DevTarget::open(&lo.dev, Some(WritePermit::for_tests(other_path.to_str().unwrap())));
        assert!(matches!(other, Err(EngineError::PermitMismatch { .. })));
        assert!(lo.contents() == before, "backing file unchanged");
    }

    /// Queues reopen the target's one descriptor, never its path: a file
    /// put in the path's place after the target was opened is not touched,
    /// and the writes reach the file that was opened.
    #[test]
    fn queues_reopen_the_descriptor_not_the_path() {
        let t = crate::testutil::TempDir::new("reopen");
        let path = t.0.join("target");
        let path_s = path.to_str().unwrap();
        std::fs::write(&path, vec![0u8; 1 << 20]).expect("write");
        let dev = DevTarget::open(path_s, Some(WritePermit::for_tests(path_s))).expect("open");
        // Another file takes the path: the original is now only reachable
        // through the descriptor.
        let opened = t.0.join("opened-one");
        std::fs::rename(&path, &opened).expect("rename");
        std::fs::write(&path, vec![7u8; 1 << 20]).expect("write the newcomer");
        for depth in [1, 4] {
            let mut q = dev
                .open(&spec(Access::Buffered, true, depth, 4096))
                .expect("write queue");
            for r in [req(Op::Write, 0, 4096), req(Op::Flush, 0, 0)] {
                let done = run_batch_one(&mut q, 0, r);
                assert!(done.result.is_ok(), "{done:?}");
            }
        }
        assert_eq!(
            std::fs::read(&path).expect("read"),
            vec![7u8; 1 << 20],
            "the newcomer is untouched"
        );
        assert!(
            std::fs::read(&opened).expect("read")[..4096].iter().any(|&b| b != 0),
            "the writes reached the file that was opened"
        );
    }

    /// Flushes the device has completed (`/sys/block/<dev>/stat`, field 16).
    fn device_flushes(dev: &str) -> u64 {
        let name = dev.rsplit('/').next().expect("name");
        let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).expect("stat");
        stat.split_whitespace()
            .nth(15)
            .expect("flush field")
            .parse()
            .expect("number")
    }

    /// A range's flush (`Op::FlushRange`, sysbench's fsync of one file of
    /// its set) writes the range's dirty cached pages to the device, waits
    /// for them and flushes the device's cache, and writes no other page: a
    /// buffered write outside the range is still only in the page cache
    /// afterwards (an fdatasync would have written it too), until the
    /// flush of the whole target. The loop device passes each write
    /// straight to its backing file (direct I/O), so the file shows what
    /// reached the device. psync (depth 1) and io_uring (depth 4).
    #[test]
    fn flush_range_flushes_its_range_only() {
        // A sync() of another test (an hdparm twin's settle) would write b back too.
        let _no_sync = GLOBAL_SYNC.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(lo) = LoopDev::new("flushrange") else { return };
        let t = lo.target(true);
        for depth in [1u32, 4] {
            let (a, b) = (MIB * (2 + 4 * u64::from(depth)), MIB * (4 + 4 * u64::from(depth)));
            let mut q = t.open(&spec(Access::Buffered, true, depth, 65536)).expect("queue");
            let done = run_batch(&mut q, &[req(Op::Write, a, 65536)]);
            assert_eq!(done[0].result, Ok(65536), "depth {depth}");
            let sent_a = q.write_buf(0, 65536).expect("write buffer").to_vec();
            let done = run_batch(&mut q, &[req(Op::Write, b, 65536)]);
            assert_eq!(done[0].result, Ok(65536), "depth {depth}");
            let sent_b = q.write_buf(0, 65536).expect("write buffer").to_vec();
            assert!(
                lo.backing(a, 65536) == pattern(a, 65536),
                "depth {depth}: a is cached only"
            );
            let flushes = device_flushes(&lo.dev);
            let fr = req(Op::FlushRange, a - MIB, u32::try_from(2 * MIB).expect("fits"));
            assert_eq!(run_batch(&mut q, &[fr])[0].result, Ok(0), "depth {depth}");
            assert!(lo.backing(a, 65536) == sent_a, "depth {depth}: a written back");
            assert!(device_flushes(&lo.dev) > flushes, "depth {depth}: the cache flushed");
            assert!(
                lo.backing(b, 65536) == pattern(b, 65536),
                "depth {depth}: b outside the range"
            );
            assert_eq!(run_batch(&mut q, &[req(Op::Flush, 0, 0)])[0].result, Ok(0));
            assert!(lo.backing(b, 65536) == sent_b, "depth {depth}: the flush writes b");
        }
    }

    #[test]
    fn misaligned_direct_read_is_einval() {
        let Some(lo) = LoopDev::new("einval") else { return };
        let t = lo.target(false);
        for depth in [1, 2] {
            let mut q = t.open(&spec(Access::Direct, false, depth, 8192)).expect("queue");
            let done = run_batch(&mut q, &[req(Op::Read, 100, 4096)]);
            assert_eq!(done[0].result, Err(libc::EINVAL), "depth {depth}");
            // The queue still works afterwards.
            assert_eq!(
                run_batch(&mut q, &[req(Op::Read, 4096, 4096)])[0].result,
                Ok(4096),
                "depth {depth}"
            );
        }
    }

    #[test]
    fn submit_outside_the_queue_contract_is_refused() {
        let Some(lo) = LoopDev::new("contract") else { return };
        let t = lo.target(false);
        for depth in [1, 4] {
            let mut q = t.open(&spec(Access::Direct, false, depth, 4096)).expect("queue");
            let slots = q.depth();
            assert_eq!(
                q.submit(slots, req(Op::Read, 0, 4096)).map_err(|e| e.errno),
                Err(libc::EINVAL),
                "slot out of range"
            );
            assert_eq!(
                q.submit(0, req(Op::Read, 0, 8192)).map_err(|e| e.errno),
                Err(libc::EINVAL),
                "longer than max_len"
            );
            q.submit(0, req(Op::Read, 0, 4096)).expect("submit");
            assert_eq!(
                q.submit(0, req(Op::Read, 0, 4096)).map_err(|e| e.errno),
                Err(libc::EINVAL),
                "slot busy"
            );
            let mut out = Vec::new();
            q.reap(1, &mut out).expect("reap");
            assert_eq!(
                out,
                vec![Completion {
                    slot: 0,
                    result: Ok(4096)
                }]
            );
        }
        assert_eq!(
            t.open(&spec(Access::Direct, false, 0, 4096))
                .map(|_| ())
                .map_err(|e| e.errno),
            Err(libc::EINVAL)
        );
    }

    #[test]
    fn drop_caches_on_a_loop_device() {
        let Some(lo) = LoopDev::new("drop") else { return };
        let t = lo.target(false);
        let mut q = t.open(&spec(Access::Buffered, false, 1, 4096)).expect("queue");
        assert_eq!(run_batch(&mut q, &[req(Op::Read, 0, 4096)])[0].result, Ok(4096));
        assert_eq!(t.drop_caches(), Ok(()));
        // Still readable after the cache was dropped.
        assert_eq!(run_batch(&mut q, &[req(Op::Read, 0, 4096)])[0].result, Ok(4096));
        assert_eq!(q.read_buf(0, 4096).expect("read buffer")[..], pattern(0, 4096)[..]);
    }

    /// hdparm's twins on a real device: each read's buffer comes back with
    /// every 512th byte ANDed with 1 (hdparm's `read_big_block`), the
    /// others as read, through the buffered and the O_DIRECT sync queue.
    #[test]
    fn hdparm_twins_touch_every_512th_byte_on_a_loop_device() {
        let Some(lo) = LoopDev::new("touch") else { return };
        let t = lo.target(false);
        use bench_core::spec::Workload;
        for w in [Workload::CachedRead, Workload::BufferedRead, Workload::DirectRead] {
            let ts = bench_core::spec::TestSpec::new("t", w, |p| p.bs = bench_core::units::Bytes(2 * MIB));
            let mut step = bench_core::plan::expand(&ts, &t.geometry()).expect("plan").remove(0);
            step.limit = Limit {
                runtime: None,
                bytes: None,
                ios: Some(2),
                min_ios: 0,
            };
            bench_core::runner::prepare(&step, &t, &MonoClock::new(), &Stop::new()).expect("prepare");
            let len = u32::try_from(2 * MIB).expect("fits");
            let mut q = t.open(&spec(step.access, false, 1, len)).expect("queue");
            let out = runner::run_job(&step, 0, &mut q, &MonoClock::new(), &Stop::new(), &mut |_| {}).expect("run");
            assert_eq!(out.read.ios, 2, "{w:?}");
            // The last read: offset 0 for -T, the second 2 MiB for -t.
            let at = if w == Workload::CachedRead { 0 } else { 2 * MIB };
            let buf = q.read_buf(0, 2 << 20).expect("read buffer");
            let mut want = pattern(at, 2 << 20);
            for b in want.iter_mut().step_by(512) {
                *b &= 1;
            }
            assert!(buf == &want[..], "{w:?}: touched bytes differ from read_big_block's");
        }
    }

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

    fn rand_step(read_pct: u8, iodepth: u32, jobs: u32, ios: u64) -> Step {
        Step {
            label: "main".to_string(),
            access: Access::Direct,
            prepare: Prepare::None,
            pattern: Pattern::Random {
                read_pct,
                start: 0,
                end: LOOP_SIZE,
            },
            bs: 4096,
            iodepth,
            jobs,
            limit: Limit {
                runtime: None,
                bytes: None,
                ios: Some(ios),
                min_ios: 0,
            },
            ramp: Nanos(0),
            flush_every: None,
            flush_at_end: false,
            fsync_freq: None,
            fsync_files: 1,
            rwmix_order: Default::default(),
            random_map: false,
            seed: 9,
            sample_interval: Nanos::from_secs(1),
            verify: false,
            touch_every: None,
            settle: Nanos(0),
            runtime_batch: None,
            passes: 1,
            warmup: 0,
            fill: false,
            pause: Nanos(0),
            engine: Default::default(),
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
        bench_core::runner::prepare(&step, &*rw, &MonoClock::new(), &Stop::new()).expect("drop the cache");
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

    /// A target claimed for writing records whether a write reached it:
    /// reads alone leave [`DevTarget::wrote`] false, on either engine; the
    /// first write sets it, on the pread/pwrite queue and on io_uring.
    #[test]
    fn a_writable_target_knows_whether_it_was_written() {
        let Some(lo) = LoopDev::new("wrote") else { return };
        for (iodepth, jobs) in [(1u32, 1u32), (8, 2)] {
            let rw = Arc::new(lo.target(true));
            ThreadedRunner::new(Arc::clone(&rw))
                .run_step(&rand_step(100, iodepth, jobs, 50), &Stop::new(), &mut |_| {})
                .expect("reads");
            assert!(rw.writable() && !rw.wrote(), "QD{iodepth}: reads only");
            ThreadedRunner::new(Arc::clone(&rw))
                .run_step(&rand_step(0, iodepth, jobs, 50), &Stop::new(), &mut |_| {})
                .expect("writes");
            assert!(rw.wrote(), "QD{iodepth}: written");
        }
    }

    /// Verify on the real engines: the pread/pwrite queue (QD1) and io_uring
    /// (QD8, two jobs) write the known contents, read every written block
    /// back from the device (O_DIRECT) and count it; the backing file then
    /// holds exactly those contents at each written offset.
    #[test]
    fn verify_on_sync_and_uring_queues() {
        let Some(lo) = LoopDev::new("verify") else { return };
        let rw = Arc::new(lo.target(true));
        for (iodepth, jobs) in [(1u32, 1u32), (8, 2)] {
            let mut step = rand_step(0, iodepth, jobs, 200);
            step.verify = true;
            let r = ThreadedRunner::new(Arc::clone(&rw))
                .run_step(&step, &Stop::new(), &mut |_| {})
                .expect("verifying step");
            let writes = r.write.as_ref().map_or(0, |d| d.bytes);
            assert_eq!(writes, u64::from(jobs) * 200 * 4096, "QD{iodepth}");
            assert_eq!(r.verified_bytes, Some(writes), "QD{iodepth}: every write read back");
            let mut g = runner::OffsetGen::new(&step, 0);
            for _ in 0..200 {
                let req = g.next_req();
                let on_disk = lo.backing(req.offset, 4096);
                assert_eq!(
                    bench_core::verify::first_mismatch(step.seed, req.offset, &on_disk),
                    None,
                    "QD{iodepth}: offset {}",
                    req.offset
                );
            }
        }
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
        let bench_core::result::Status::Error {
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

    fn one_test(r: &mut dyn StepRunner, step: &Step) -> bench_core::result::TestResult {
        let spec = bench_core::spec::TestSpec::new("t", bench_core::spec::Workload::RandRead, |_| {});
        runner::run_test(&spec, "loop", std::slice::from_ref(step), r, &Stop::new(), &mut |_| {})
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
        let io_poll = std::fs::read_to_string(format!("/sys/block/{name}/queue/io_poll")).unwrap_or_default();
        assert_eq!(io_poll.trim(), "0", "loop does not poll");
        let mut r = ThreadedRunner::new(Arc::new(lo.target(false)));
        for iodepth in [1u32, 4] {
            let mut step = rand_step(100, iodepth, 1, 50);
            step.engine.hipri = true;
            let t = one_test(&mut r, &step);
            match &t.status {
                bench_core::result::Status::Error { errno, message, .. } => {
                    assert_eq!(*errno, libc::EOPNOTSUPP, "{message}");
                    assert!(
                        message.starts_with("hipri: the kernel refused polled I/O on this target")
                            && message.contains("errno 95")
                            && message.contains("io_poll"),
                        "{message}"
                    );
                }
                bench_core::result::Status::Ok => {
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
        let online = cpu::online().expect("online CPUs");
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
        let absent = bench_core::cpus::MAX_CPUS - 1;
        let probe = Arc::new(Probe::default());
        let seen = Arc::clone(&probe.seen);
        let mut r = ThreadedRunner::new(probe);
        let mut step = rand_step(100, 1, 2, 20);
        step.engine.cpus_allowed = vec![0, absent];
        let t = one_test(&mut r, &step);
        let bench_core::result::Status::Error { errno, message, .. } = &t.status else {
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
        let bench_core::result::Status::Error { errno, message, .. } = &t.status else {
            panic!("{:?}", t.status)
        };
        assert_eq!(*errno, libc::EINVAL);
        assert!(
            message.contains(&format!("sqthread_poll_cpu {absent}: CPU {absent} is not online")),
            "{message}"
        );
        // The next test's error says nothing of these.
        let ok = one_test(&mut r, &rand_step(100, 1, 1, 5));
        assert_eq!(ok.status, bench_core::result::Status::Ok);
    }
}
