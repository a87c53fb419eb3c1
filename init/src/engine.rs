//! The real I/O engines behind bench-core's `Target` and `IoQueue`: O_DIRECT
//! (or buffered) pread/pwrite for one request in flight, io_uring for more;
//! a monotonic clock; the threaded step runner (one thread per job).
//!
//! API used by the CLI:
//! - `DevTarget::open(path: &str, permit: Option<WritePermit>) -> Result<DevTarget, EngineError>`
//!   (read-only unless a permit from `safety` is given), implementing
//!   `bench_core::io::Target`;
//! - `MonoClock` implementing `bench_core::io::Clock` (CLOCK_MONOTONIC);
//! - `ThreadedRunner { target: &DevTarget }` implementing
//!   `bench_core::runner::StepRunner`.

use std::fmt;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::time::Instant;

use bench_core::io::{Access, Clock, Completion, Geometry, IoError, IoQueue, IoReq, Op, OpenSpec, Target};
use bench_core::result::StepResult;
use bench_core::rng::Rng;
use bench_core::runner::{self, JobOutcome, Progress, StepRunner};
use bench_core::spec::Step;
use bench_core::units::Nanos;

use crate::safety::WritePermit;
use crate::sys::buf::AlignedBuf;
use crate::sys::uring::{Ring, RingOp};
use crate::sys::{blk, file};

/// Logical block size reported for a regular file (the smallest unit O_DIRECT
/// accepts on common filesystems).
pub const FILE_LOGICAL_BLOCK: u32 = 512;
/// Physical block size reported for a regular file (the page size).
pub const FILE_PHYSICAL_BLOCK: u32 = 4096;

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
    /// The path is neither a block device nor a regular file.
    Unsupported {
        /// The path.
        path: String,
    },
    /// Opening the path (read-only) failed.
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
            EngineError::Unsupported { path } => {
                write!(f, "{path}: not a block device or regular file")
            }
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
            EngineError::Unsupported { .. } | EngineError::PermitMismatch { .. } => None,
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
/// - `ro` is open read-only; it serves ioctls and cache drops, never I/O.
/// - Queues that write are opened only if `permit` names `path` exactly.
#[derive(Debug)]
pub struct DevTarget {
    path: String,
    kind: TargetKind,
    geometry: Geometry,
    ro: File,
    permit: Option<WritePermit>,
}

fn ioctl_err<'p>(path: &'p str, request: &'static str) -> impl Fn(i32) -> EngineError + 'p {
    move |errno| EngineError::Ioctl { path: path.to_string(), request, source: io::Error::from_raw_os_error(errno) }
}

impl DevTarget {
    /// Open `path` (read-only) and read its geometry. With a permit (which
    /// must be for this exact path), queues may later be opened for writing.
    pub fn open(path: &str, permit: Option<WritePermit>) -> Result<DevTarget, EngineError> {
        if let Some(p) = &permit {
            if p.path() != path {
                return Err(EngineError::PermitMismatch { path: path.to_string(), permitted: p.path().to_string() });
            }
        }
        let meta = std::fs::metadata(path).map_err(|source| EngineError::Stat { path: path.to_string(), source })?;
        let ft = meta.file_type();
        let kind = if ft.is_block_device() {
            TargetKind::Block
        } else if ft.is_file() {
            TargetKind::File
        } else {
            return Err(EngineError::Unsupported { path: path.to_string() });
        };
        let ro = file::open(path, false, false).map_err(|source| EngineError::Open { path: path.to_string(), source })?;
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
        Ok(DevTarget { path: path.to_string(), kind, geometry, ro, permit })
    }

    /// The path, as given.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Block device or file.
    pub fn kind(&self) -> TargetKind {
        self.kind
    }

    /// True if queues may be opened for writing.
    pub fn writable(&self) -> bool {
        self.permit.as_ref().is_some_and(|p| p.path() == self.path)
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
        let fail = |errno| IoError { errno, req: no_req(if spec.write { Op::Write } else { Op::Read }) };
        if spec.write && !self.writable() {
            return Err(fail(libc::EPERM));
        }
        let buf_len = usize::try_from(spec.max_len).map_err(|_| fail(libc::EINVAL))?;
        if spec.depth == 0 {
            return Err(fail(libc::EINVAL));
        }
        let f = file::open(&self.path, spec.write, spec.access == Access::Direct).map_err(|e| fail(file::errno_of(&e)))?;
        let mut rng = Rng::new(spec.seed);
        if spec.depth == 1 {
            let rbuf = AlignedBuf::new(buf_len).ok_or_else(|| fail(libc::ENOMEM))?;
            let wbuf = if spec.write {
                let mut w = AlignedBuf::new(buf_len).ok_or_else(|| fail(libc::ENOMEM))?;
                rng.fill(w.as_mut_slice());
                Some(w)
            } else {
                None
            };
            Ok(DevQueue::Sync(SyncQueue { file: f, rbuf, wbuf, done: None }))
        } else {
            let mut ring = Ring::new(f, spec.depth, buf_len, spec.write).map_err(|e| fail(file::errno_of(&e)))?;
            if spec.write {
                for slot in 0..ring.depth() {
                    if let Some(w) = ring.write_buf_mut(slot) {
                        rng.fill(w);
                    }
                }
            }
            let last = no_req(Op::Read);
            Ok(DevQueue::Uring(UringQueue { ring, last }))
        }
    }

    fn drop_caches(&self) -> Result<(), IoError> {
        let fail = |errno| IoError { errno, req: no_req(Op::Flush) };
        // Dirty pages are not dropped: write them back first (hdparm's
        // flush_buffer_cache does fsync, then BLKFLSBUF).
        file::fsync(&self.ro).map_err(fail)?;
        match self.kind {
            TargetKind::Block => blk::flush_buffers(&self.ro).map_err(fail),
            TargetKind::File => file::fadvise_dontneed(&self.ro).map_err(fail),
        }
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
        if req.op != Op::Flush && len > self.rbuf.len() {
            return Err(err(libc::EINVAL));
        }
        let result = match req.op {
            Op::Read => transferred(file::pread(&self.file, &mut self.rbuf.as_mut_slice()[..len], req.offset)),
            // Without a write buffer the file is open read-only: the kernel's answer.
            Op::Write => match &self.wbuf {
                Some(w) => transferred(file::pwrite(&self.file, &w.as_slice()[..len], req.offset)),
                None => Err(libc::EBADF),
            },
            Op::Flush => file::fdatasync(&self.file).map(|()| 0),
        };
        self.done = Some(Completion { slot, result });
        Ok(())
    }

    fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
        out.extend(self.done.take());
        Ok(())
    }
}

/// Several requests in flight through io_uring.
#[derive(Debug)]
pub struct UringQueue {
    ring: Ring,
    /// The last request submitted, blamed if the ring itself fails.
    last: IoReq,
}

impl UringQueue {
    /// True if the slot buffers are registered with the kernel.
    pub fn fixed_buffers(&self) -> bool {
        self.ring.fixed()
    }
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
        };
        self.ring.push(slot, op, req.offset, req.len).map_err(|errno| IoError { errno, req })?;
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
}

/// One job's queue: synchronous for depth 1, io_uring beyond.
#[derive(Debug)]
pub enum DevQueue {
    /// pread/pwrite.
    Sync(SyncQueue),
    /// io_uring.
    Uring(UringQueue),
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
}

/// How job `job` of `step` opens its queue: the step's access, depth and
/// request size, writing if the step writes, and its own buffer seed.
pub fn open_spec(step: &Step, job: u32) -> OpenSpec {
    OpenSpec {
        access: step.access,
        write: step.writes(),
        depth: step.iodepth.max(1),
        max_len: step.bs,
        seed: step.seed ^ u64::from(job).wrapping_mul(0x9E37_79B9_7F4A_7C15),
    }
}

/// Runs a step's jobs concurrently, one thread each, on one target.
///
/// All jobs read one [`MonoClock`], so their per-second samples line up when
/// merged. Job 0 runs on the calling thread and alone reports progress (the
/// callback is not `Send`); jobs 1.. run on scoped threads.
#[derive(Debug)]
pub struct ThreadedRunner<'a> {
    /// The target.
    pub target: &'a DevTarget,
}

impl StepRunner for ThreadedRunner<'_> {
    fn run_step(&mut self, step: &Step, progress: &mut dyn FnMut(&Progress<'_>)) -> Result<StepResult, IoError> {
        let clock = MonoClock::new();
        runner::prepare(step, self.target, &clock)?;
        // Open every queue before any I/O, so a refusal (EPERM) or an open
        // failure ends the step before it starts.
        let mut queues = Vec::new();
        for job in 0..step.jobs.max(1) {
            queues.push(self.target.open(&open_spec(step, job))?);
        }
        let mut others = queues.split_off(1);
        let mut first = queues.pop().ok_or(IoError { errno: libc::EINVAL, req: no_req(Op::Read) })?;
        let results: Vec<Result<JobOutcome, IoError>> = std::thread::scope(|s| {
            let handles: Vec<_> = others
                .iter_mut()
                .zip(1u32..)
                .map(|(q, job)| {
                    let clock = &clock;
                    s.spawn(move || runner::run_job(step, job, q, clock, &mut |_| {}))
                })
                .collect();
            let mut all = vec![runner::run_job(step, 0, &mut first, &clock, progress)];
            for h in handles {
                // A job thread only panics on a bug; carry the panic on.
                all.push(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            }
            all
        });
        let outcomes = results.into_iter().collect::<Result<Vec<_>, _>>()?;
        Ok(runner::merge(step, &outcomes))
    }
}
