//! Running steps: the loop that keeps `iodepth` requests in flight, times
//! each, and turns completions into statistics.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use crate::io::{Access, Clock, Completion, IoError, IoQueue, IoReq, Op, OpenSpec, Target};
use crate::result::{DirStats, EngineInfo, PassResult, Status, StepResult, TestResult};
use crate::rng::{Permutation, Rng};
use crate::scramble;
pub use crate::spec::step_range;
use crate::spec::{Limit, MixOrder, Pattern, Prepare, Step, TestSpec};
use crate::stats::{Buckets, Latency};
use crate::units::{per_sec, rate, Bytes, Nanos};
use crate::verify;
use core::sync::atomic::{AtomicU8, Ordering};

/// EIO, reported for a short transfer.
pub const EIO: i32 = 5;
/// EOPNOTSUPP: a verifying step on a queue that gives no buffer access.
pub const EOPNOTSUPP: i32 = 95;
/// EPERM: a target refuses a queue that writes (it may not be written).
pub const EPERM: i32 = 1;
/// The request size of a fill ([`fill`]): CrystalDiskMark writes its test
/// file in 1 MiB `WriteFile` calls (DiskBench.cpp `Init`, `BufSize`).
pub const FILL_BS: u32 = 1 << 20;

/// Why a test stops before its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The user asked (SIGINT or SIGTERM on a live system).
    Interrupted,
    /// The test ran past its deadline ([`crate::plan::deadline`]).
    Deadline,
}

/// A request to stop, shared by the jobs of a step and whoever asks (a
/// signal handler, a watchdog): jobs stop submitting, finish what is in
/// flight and return what they measured. Setting it is async-signal-safe
/// (one atomic compare-and-swap); the first reason set wins.
#[derive(Debug, Default)]
pub struct Stop(AtomicU8);

impl Stop {
    /// Not set.
    pub const fn new() -> Stop {
        Stop(AtomicU8::new(0))
    }

    /// Ask to stop, for `why`, unless a stop is already asked.
    pub fn request(&self, why: StopReason) {
        let code = match why {
            StopReason::Interrupted => 1,
            StopReason::Deadline => 2,
        };
        let _ = self.0.compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// The reason, if a stop was asked.
    pub fn reason(&self) -> Option<StopReason> {
        match self.0.load(Ordering::SeqCst) {
            1 => Some(StopReason::Interrupted),
            2 => Some(StopReason::Deadline),
            _ => None,
        }
    }

    /// Clear a deadline stop (the next test starts afresh); an interrupt
    /// stays, since the user asked for the whole run to stop.
    pub fn clear_deadline(&self) {
        let _ = self.0.compare_exchange(2, 0, Ordering::SeqCst, Ordering::SeqCst);
    }
}

/// The multiplier that spreads job numbers over the seed space (the
/// golden-ratio constant of splitmix64).
const JOB_SEED_MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// What one direction of one job counted (after the ramp).
#[derive(Clone, Debug, PartialEq)]
pub struct DirAcc {
    /// Bytes completed.
    pub bytes: u64,
    /// Requests completed.
    pub ios: u64,
    /// Latencies from the request's start to its completion (fio's `lat`).
    pub lat: Latency,
    /// From its issue to its completion (fio's `clat`).
    pub clat: Latency,
    /// From its start to its issue (fio's `slat`): only where submission is
    /// a step of its own ([`IoQueue::batched`]), as fio records it only
    /// for engines that are not synchronous.
    pub slat: Option<Latency>,
    /// Per-interval counts since the end of the ramp.
    pub buckets: Buckets,
}

impl DirAcc {
    /// Nothing counted yet, samples of width `interval`.
    pub fn new(interval: Nanos) -> DirAcc {
        DirAcc {
            bytes: 0,
            ios: 0,
            lat: Latency::default(),
            clat: Latency::default(),
            slat: None,
            buckets: Buckets::new(interval),
        }
    }

    /// Count one request, its times `t` ([`Times`]), that completed
    /// `since_ramp` after the ramp's end. Its sample interval is the one
    /// holding the last nanosecond of its service: a completion exactly on a
    /// boundary belongs to the interval it ends (so a constant rate gives
    /// equal samples).
    fn count(&mut self, t: Times, done: Nanos, since_ramp: Nanos, bytes: u64) {
        self.bytes += bytes;
        self.ios += 1;
        self.lat.record(done.saturating_sub(t.start).0);
        self.clat.record(done.saturating_sub(t.issue).0);
        if t.batched {
            self.slat
                .get_or_insert_with(Latency::default)
                .record(t.issue.saturating_sub(t.start).0);
        }
        self.buckets.record(since_ramp.saturating_sub(Nanos(1)), bytes);
    }
}

/// When a request started (fio's io_u `start_time`: before its buffer is
/// stamped and it is submitted) and was issued to the system (`issue_time`:
/// just before a synchronous submit, just after a batched queue's commit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Times {
    start: Nanos,
    issue: Nanos,
    batched: bool,
}

impl Times {
    /// A request issued as it started (a flush, alone in the queue).
    fn at(t: Nanos) -> Times {
        Times {
            start: t,
            issue: t,
            batched: false,
        }
    }
}

/// What one job of a step counted.
#[derive(Clone, Debug, PartialEq)]
pub struct JobOutcome {
    /// Reads.
    pub read: DirAcc,
    /// Writes.
    pub write: DirAcc,
    /// Flushes.
    pub flush: DirAcc,
    /// From the end of the ramp to the last completion.
    pub runtime: Nanos,
    /// Bytes read back and found as written (a verifying step), else 0.
    pub verified: u64,
    /// The queue's engine ([`IoQueue::engine`]).
    pub engine: Option<EngineInfo>,
}

/// A progress report, made about once per second of the step's clock.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress<'a> {
    /// The step's label.
    pub step: &'a str,
    /// Fraction done, 0.0 to 1.0, by the step's bound (time or bytes).
    pub done: f64,
    /// Estimated time left in the step.
    pub eta: Option<Nanos>,
}

/// The offsets and operations of one job, in order.
#[derive(Clone, Debug)]
pub struct OffsetGen {
    bs: u32,
    kind: GenKind,
}

#[derive(Clone, Debug)]
enum GenKind {
    Seq {
        op: Op,
        start: u64,
        end: u64,
        cur: u64,
    },
    Random {
        read_pct: u8,
        start: u64,
        blocks: u64,
        rng: Rng,
        /// sysbench's running ratio (`MixOrder::Ratio`): the reads and
        /// writes issued so far; `None`: each request draws its operation.
        ratio: Option<(u64, u64)>,
        /// fio's random map ([`Step::random_map`]): this pass's order of
        /// the blocks and how many it has given; `None`: each block drawn
        /// on its own.
        map: Option<(Permutation, u64)>,
    },
    Fixed {
        op: Op,
        offset: u64,
    },
    Cursors {
        pos: Vec<u64>,
        strides: Vec<i64>,
        next: usize,
    },
}

impl OffsetGen {
    /// The generator of job `job` of `step.jobs`:
    /// - `Seq`: job j gets slice j of `[start, end)` (equal slices, whole
    ///   requests), from its start, wrapping at its end;
    /// - `Random`: offsets `start + k * bs` with k in `0..(end - start) / bs`,
    ///   from `Rng::new(seed ^ job * 0x9E3779B97F4A7C15)`: with
    ///   [`Step::random_map`], k runs through a [`Permutation`] of the
    ///   blocks keyed by the generator's first output (every block once),
    ///   then through another keyed by its next output, and so on; without,
    ///   k is uniform, drawn for each request; for a mix, each request then draws `below(100) < read_pct` for a read
    ///   (`MixOrder::Random`), or is a read while
    ///   `(reads + 1) * (100 - read_pct) < (writes + 1) * read_pct`, sysbench's
    ///   `(reads + 1) / (writes + 1) < file-rw-ratio` over the job's requests
    ///   so far, exactly and without floating point (`MixOrder::Ratio`);
    /// - `Fixed`: the same request every time;
    /// - `Cursors`: round robin over the cursors, each moving by its stride.
    pub fn new(step: &Step, job: u32) -> OffsetGen {
        let bs = step.bs.max(1);
        let bs64 = u64::from(bs);
        let kind = match &step.pattern {
            Pattern::Seq { op, start, end } => {
                let blocks = end.saturating_sub(*start) / bs64;
                let per = (blocks / u64::from(step.jobs.max(1))).max(1);
                let s = start + u64::from(job) * per * bs64;
                GenKind::Seq {
                    op: *op,
                    start: s,
                    end: s + per * bs64,
                    cur: s,
                }
            }
            Pattern::Random { read_pct, start, end } => {
                let blocks = (end.saturating_sub(*start) / bs64).max(1);
                let mut rng = Rng::new(step.seed ^ u64::from(job).wrapping_mul(JOB_SEED_MIX));
                let map = step.random_map.then(|| (Permutation::new(blocks, rng.next_u64()), 0));
                GenKind::Random {
                    read_pct: *read_pct,
                    start: *start,
                    blocks,
                    rng,
                    ratio: (step.rwmix_order == MixOrder::Ratio).then_some((0, 0)),
                    map,
                }
            }
            Pattern::Fixed { op, offset } => GenKind::Fixed {
                op: *op,
                offset: *offset,
            },
            Pattern::Cursors { starts, strides } => GenKind::Cursors {
                pos: starts.clone(),
                strides: strides.clone(),
                next: 0,
            },
        };
        OffsetGen { bs, kind }
    }

    /// For a sequential walk, the requests after which it repeats itself
    /// (its slice in whole requests); `None` for other patterns.
    pub fn cycle_len(&self) -> Option<u64> {
        match &self.kind {
            GenKind::Seq { start, end, .. } => Some((end - start) / u64::from(self.bs)),
            _ => None,
        }
    }

    /// The next request.
    pub fn next_req(&mut self) -> IoReq {
        let len = self.bs;
        let (op, offset) = match &mut self.kind {
            GenKind::Seq { op, start, end, cur } => {
                if *cur >= *end {
                    *cur = *start;
                }
                let o = *cur;
                *cur += u64::from(len);
                (*op, o)
            }
            GenKind::Random {
                read_pct,
                start,
                blocks,
                rng,
                ratio,
                map,
            } => {
                let block = match map {
                    // Every block once in this pass's order; then, as fio
                    // clears its map when it is full (`fio_file_reset`),
                    // a new pass in a new order.
                    Some((perm, done)) => {
                        if *done == perm.len() {
                            *perm = Permutation::new(*blocks, rng.next_u64());
                            *done = 0;
                        }
                        *done += 1;
                        perm.at(*done - 1)
                    }
                    None => rng.below(*blocks),
                };
                let o = *start + block * u64::from(len);
                let op = match (*read_pct, ratio) {
                    (0, _) => Op::Write,
                    (100.., _) => Op::Read,
                    (pct, Some((reads, writes))) => {
                        let pct = u64::from(pct);
                        let read = (*reads + 1) * (100 - pct) < (*writes + 1) * pct;
                        if read {
                            *reads += 1;
                            Op::Read
                        } else {
                            *writes += 1;
                            Op::Write
                        }
                    }
                    (pct, None) => {
                        if rng.below(100) < u64::from(pct) {
                            Op::Read
                        } else {
                            Op::Write
                        }
                    }
                };
                (op, o)
            }
            GenKind::Fixed { op, offset } => (*op, *offset),
            GenKind::Cursors { pos, strides, next } => {
                if pos.is_empty() {
                    (Op::Read, 0)
                } else {
                    let i = *next % pos.len();
                    *next = (i + 1) % pos.len();
                    let o = pos[i];
                    let stride = strides.get(i).copied().unwrap_or(0);
                    pos[i] = o.checked_add_signed(stride).unwrap_or(o);
                    (Op::Read, o)
                }
            }
        };
        IoReq { op, offset, len }
    }
}

/// True once the step's bound is reached: the runtime since the ramp's end
/// (once at least `min_ios` requests were issued after it and, with
/// `runtime_batch`, only once the counted requests are a whole number of
/// batches), or the counted (post-ramp) bytes or requests issued.
fn limit_reached(limit: &Limit, runtime_batch: Option<u64>, now: Nanos, ramp_end: Nanos, bytes: u64, ios: u64) -> bool {
    let batch_done = runtime_batch.is_none_or(|b| b == 0 || ios % b == 0);
    (batch_done
        && now >= ramp_end
        && ios >= limit.min_ios
        && limit.runtime.is_some_and(|r| now.saturating_sub(ramp_end) >= r))
        || limit.bytes.is_some_and(|b| bytes >= b)
        || limit.ios.is_some_and(|n| ios >= n)
}

/// Fraction done by the step's bound (the furthest of its bounds) and the
/// time left at the pace so far.
#[allow(clippy::cast_precision_loss)] // progress figures: 53 bits are plenty
fn progress_of(limit: &Limit, elapsed: Nanos, bytes: u64, ios: u64) -> (f64, Option<Nanos>) {
    let mut done: f64 = 0.0;
    if let Some(r) = limit.runtime.filter(|r| r.0 > 0) {
        done = done.max(elapsed.0 as f64 / r.0 as f64);
    }
    if let Some(b) = limit.bytes.filter(|&b| b > 0) {
        done = done.max(bytes as f64 / b as f64);
    }
    if let Some(n) = limit.ios.filter(|&n| n > 0) {
        done = done.max(ios as f64 / n as f64);
    }
    let done = done.clamp(0.0, 1.0);
    let eta = (done > 0.0).then(|| {
        let left = elapsed.0 as f64 * (1.0 - done) / done;
        // Non-negative and far below 2^64 ns.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let ns = left as u64;
        Nanos(ns)
    });
    (done, eta)
}

/// Submit one request in slot 0 of an otherwise idle queue and wait for it.
/// Returns the time of the reap that returned it.
fn one_request<Q: IoQueue, C: Clock>(
    q: &mut Q,
    clock: &C,
    req: IoReq,
    comps: &mut Vec<Completion>,
) -> Result<Nanos, IoError> {
    q.submit(0, req)?;
    loop {
        comps.clear();
        q.reap(1, comps)?;
        let now = clock.now();
        if let Some(c) = comps.iter().find(|c| c.slot == 0) {
            check(c, req)?;
            return Ok(now);
        }
    }
}

/// sysbench's file set over a step's range, for a buffered step that
/// fsyncs `file_num` files ([`Step::fsync_files`] above one): file `i` is
/// `[start + i * size, start + (i + 1) * size)`, the last one running to
/// the range's end. sysbench splits `file-total-size` over `file-num`
/// files of `total / num` bytes each (`sb_fileio.c` `file_prepare`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileSet {
    start: u64,
    end: u64,
    files: u64,
}

impl FileSet {
    /// The step's file set; None where a flush of the whole target is what
    /// the tool does (one file), or nothing is cached to write back (direct
    /// access: each flush is the cache flush alone), or the pattern has no
    /// range.
    fn of(step: &Step) -> Option<FileSet> {
        let (start, end) = match step.pattern {
            Pattern::Seq { start, end, .. } | Pattern::Random { start, end, .. } => (start, end),
            Pattern::Fixed { .. } | Pattern::Cursors { .. } => return None,
        };
        let files = step.fsync_files;
        (step.access == Access::Buffered && files > 1 && end > start).then_some(FileSet { start, end, files })
    }

    /// File `i`'s bytes.
    fn file(&self, i: u64) -> (u64, u64) {
        let size = (self.end - self.start) / self.files;
        let lo = self.start + i * size;
        let hi = if i + 1 == self.files { self.end } else { lo + size };
        (lo, hi)
    }
}

/// The longest range one [`Op::FlushRange`] covers: a whole number of
/// 4 KiB pages that a `u32` length holds. A longer file is flushed in
/// pieces of at most this, one after another, counted as one flush.
pub(crate) const FLUSH_RANGE_MAX: u32 = !0xfff;

/// `n` flushes, one after another in an otherwise idle queue; each counted
/// in `acc` when the step is measuring (`ramp_end` given). With a file set
/// of `n` files, flush `i` is file `i`'s alone ([`Op::FlushRange`]): as
/// sysbench fsyncs each file in turn and a filesystem's fsync of one file
/// writes back that file's pages, waits for them and flushes the cache
/// (`ext4_sync_file`), so one file's writes reach the device before the
/// next file's flush, not all in the batch that a flush of the whole
/// target would make. A stop asked meanwhile (an interrupt, the deadline)
/// ends the batch before its next flush. Returns the time the last
/// completed.
#[allow(clippy::too_many_arguments)] // the job's queue, clock, stop and accounts, passed down once
fn flushes<Q: IoQueue, C: Clock>(
    q: &mut Q,
    clock: &C,
    stop: &Stop,
    n: u64,
    set: Option<FileSet>,
    comps: &mut Vec<Completion>,
    ramp_end: Option<Nanos>,
    acc: &mut DirAcc,
) -> Result<Nanos, IoError> {
    let whole = IoReq {
        op: Op::Flush,
        offset: 0,
        len: 0,
    };
    let set = set.filter(|s| s.files == n);
    let mut last = clock.now();
    for i in 0..n {
        if stop.reason().is_some() {
            break;
        }
        let t = clock.now();
        match set {
            None => last = one_request(q, clock, whole, comps)?,
            Some(set) => {
                let (mut lo, hi) = set.file(i);
                while lo < hi {
                    let len = u32::try_from(hi - lo).unwrap_or(FLUSH_RANGE_MAX).min(FLUSH_RANGE_MAX);
                    let req = IoReq {
                        op: Op::FlushRange,
                        offset: lo,
                        len,
                    };
                    last = one_request(q, clock, req, comps)?;
                    lo += u64::from(len);
                }
            }
        }
        if let Some(ramp_end) = ramp_end {
            acc.count(Times::at(t), last, last.saturating_sub(ramp_end), 0);
        }
    }
    Ok(last)
}

/// A completion's result as the runner judges it: an errno, or a short
/// read or write (EIO), is an error.
fn check(c: &Completion, req: IoReq) -> Result<(), IoError> {
    match c.result {
        Err(errno) => Err(IoError { errno, req }),
        Ok(n) if matches!(req.op, Op::Read | Op::Write) && n < req.len => Err(IoError { errno: EIO, req }),
        Ok(_) => Ok(()),
    }
}

/// What was in flight in `slot`, now completed; EIO if the queue returned a
/// slot it was not given (its invariant broke).
fn slot_done<T>(inflight: &mut [Option<T>], slot: usize) -> Result<T, IoError> {
    inflight.get_mut(slot).and_then(Option::take).ok_or(IoError {
        errno: EIO,
        req: IoReq {
            op: Op::Read,
            offset: 0,
            len: 0,
        },
    })
}

/// How job `job` of `step` opens its queue: the step's access, depth and
/// request size, writing if the step writes, its own buffer seed, and the
/// step's engine options.
pub fn open_spec(step: &Step, job: u32) -> OpenSpec {
    OpenSpec {
        access: step.access,
        write: step.writes(),
        depth: step.iodepth.max(1),
        max_len: step.bs,
        seed: step.seed ^ u64::from(job),
        hipri: step.engine.hipri,
        sqthread_poll: step.engine.sqthread_poll,
        sqthread_poll_cpu: step.engine.sqthread_poll_cpu,
    }
}

/// Run one job of a step on an open queue.
///
/// Keeps `step.iodepth` requests in flight (never more than `q.depth()`),
/// takes offsets from the step's pattern (job `job` of `step.jobs`), times
/// each request from just before its submission to just after the reap that
/// returned it, excludes completions inside the ramp, and stops at the
/// step's limit. An I/O error or a short transfer ends the job with the error.
pub fn run_job<Q: IoQueue, C: Clock>(
    step: &Step,
    job: u32,
    q: &mut Q,
    clock: &C,
    stop: &Stop,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<JobOutcome, IoError> {
    let depth = usize::try_from(step.iodepth)
        .unwrap_or(usize::MAX)
        .min(q.depth())
        .max(1);
    let interval = if step.sample_interval.0 == 0 {
        Nanos::from_secs(1)
    } else {
        step.sample_interval
    };
    let mut out = JobOutcome {
        read: DirAcc::new(interval),
        write: DirAcc::new(interval),
        flush: DirAcc::new(interval),
        runtime: Nanos(0),
        verified: 0,
        engine: q.engine(),
    };
    let mut gen = OffsetGen::new(step, job);
    let t0 = clock.now();
    // The end of the ramp: first when it is due, then, once what the ramp
    // issued has completed, the start of the measured time.
    let mut ramp_end = t0 + step.ramp;
    let mut measuring = step.ramp.0 == 0;
    // Each slot's request and its times.
    let mut inflight: Vec<Option<(IoReq, Times)>> = vec![None; depth];
    let batched = q.batched();
    // Slots submitted since the last commit (a batched queue's).
    let mut uncommitted: Vec<usize> = Vec::with_capacity(depth);
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut comps: Vec<Completion> = Vec::with_capacity(depth);
    let (mut issued_bytes, mut issued_ios) = (0u64, 0u64);
    let mut writes_since_flush = 0u64;
    // Requests taken from the generator (ramp included): a verify replays them.
    let mut generated = 0u64;
    let mut flush_due = false;
    // How many flushes the due flush is: sysbench's periodic one, one per
    // file ([`Step::fsync_files`]); a `flush_every` one, one.
    let mut flushes_due = 1u64;
    let files = step.fsync_files.max(1);
    let file_set = FileSet::of(step);
    // Any write since the last flush (sysbench's `is_dirty`).
    let mut dirty = false;
    let mut stopping = false;
    let mut last_done = ramp_end;
    let mut next_report = t0 + Nanos::from_secs(1);

    loop {
        // Fill the queue, unless the bound is reached or a flush is due.
        while !stopping && !flush_due {
            let Some(&slot) = free.last() else { break };
            let now = clock.now();
            if stop.reason().is_some() {
                stopping = true;
                break;
            }
            if !measuring && now >= ramp_end {
                // The ramp is over: issue nothing until its requests have
                // completed (fio's quiesce at the end of `ramp_time`), so
                // the measured time starts with an idle queue and counts
                // no request that began in the ramp.
                if free.len() < depth {
                    break;
                }
                (measuring, ramp_end) = (true, now);
            }
            if limit_reached(&step.limit, step.runtime_batch, now, ramp_end, issued_bytes, issued_ios) {
                stopping = true;
                break;
            }
            // sysbench's periodic fsync: due only when another request is
            // about to be issued (its `file_get_*_request` returns the fsync
            // in place of the next request), so a step that ends on a
            // multiple leaves it to the final flush.
            if dirty && step.fsync_freq.is_some_and(|k| generated % k == 0) {
                (flush_due, flushes_due) = (true, files);
                break;
            }
            let req = gen.next_req();
            if req.op == Op::Write {
                let len = usize::try_from(req.len).unwrap_or(usize::MAX);
                if step.verify {
                    let buf = q.write_buf(slot, len).ok_or(IoError { errno: EOPNOTSUPP, req })?;
                    verify::fill(step.seed, req.offset, buf);
                } else if let Some(buf) = q.write_buf(slot, len) {
                    // fio's default scramble_buffers=1: no two writes alike
                    // (a queue without buffer access, the simulated disk, holds no data).
                    scramble::scramble(buf, req.offset, now);
                }
            }
            // A synchronous queue issues (and may finish) the request in
            // `submit`: its issue time is just before.
            let issue = if batched { now } else { clock.now() };
            q.submit(slot, req)?;
            free.pop();
            generated += 1;
            inflight[slot] = Some((
                req,
                Times {
                    start: now,
                    issue,
                    batched,
                },
            ));
            if batched {
                uncommitted.push(slot);
            }
            if measuring {
                issued_bytes += u64::from(req.len);
                issued_ios += 1;
            }
            if req.op == Op::Write {
                writes_since_flush += 1;
                dirty = true;
                flush_due = step.flush_every.is_some_and(|k| writes_since_flush >= k);
                flushes_due = 1;
            }
        }
        if !uncommitted.is_empty() {
            q.commit()?;
            let issued = clock.now();
            for slot in uncommitted.drain(..) {
                if let Some((_, t)) = inflight[slot].as_mut() {
                    t.issue = issued;
                }
            }
        }
        if free.len() == depth {
            // Nothing in flight: flush if due, else the step is over.
            if flush_due {
                let done = flushes(
                    q,
                    clock,
                    stop,
                    flushes_due,
                    file_set,
                    &mut comps,
                    measuring.then_some(ramp_end),
                    &mut out.flush,
                )?;
                last_done = last_done.max(done);
                flush_due = false;
                writes_since_flush = 0;
                dirty = false;
                continue;
            }
            break;
        }
        comps.clear();
        q.reap(1, &mut comps)?;
        if let Some(every) = step.touch_every {
            touch_reads(q, &comps, &inflight, every);
        }
        let now = clock.now();
        for c in &comps {
            let (req, times) = slot_done(&mut inflight, c.slot)?;
            free.push(c.slot);
            check(c, req)?;
            last_done = last_done.max(now);
            if times.start >= ramp_end {
                let acc = match req.op {
                    Op::Read => &mut out.read,
                    Op::Write => &mut out.write,
                    Op::Flush | Op::FlushRange => &mut out.flush,
                };
                acc.count(times, now, now.saturating_sub(ramp_end), u64::from(req.len));
            }
        }
        if now >= next_report {
            let (done, eta) = progress_of(&step.limit, now.saturating_sub(ramp_end), issued_bytes, issued_ios);
            progress(&Progress {
                step: &step.label,
                done,
                eta,
            });
            next_report = now + Nanos::from_secs(1);
        }
    }
    if step.flush_at_end && writes_since_flush > 0 {
        // sysbench's `file_thread_done`: an fsync of each file.
        let done = flushes(
            q,
            clock,
            stop,
            files,
            file_set,
            &mut comps,
            measuring.then_some(ramp_end),
            &mut out.flush,
        )?;
        last_done = last_done.max(done);
    }
    // A step stopped inside its ramp measured nothing.
    out.runtime = if measuring {
        last_done.saturating_sub(ramp_end)
    } else {
        Nanos(0)
    };
    if step.verify {
        out.verified = verify_job(step, job, q, generated, depth, stop)?;
    }
    Ok(out)
}

/// hdparm's `read_big_block`: after each read, `buf[i] &= 1` for every
/// `every`-th byte of what it returned, before the clock is read again (so
/// inside the request's time, as in hdparm's timed loops). A queue that
/// gives no read buffer (the simulated disk) has nothing to touch.
fn touch_reads<Q: IoQueue>(q: &mut Q, comps: &[Completion], inflight: &[Option<(IoReq, Times)>], every: u32) {
    let step = usize::try_from(every).unwrap_or(usize::MAX).max(1);
    for c in comps {
        let Some(Some((req, _))) = inflight.get(c.slot) else {
            continue;
        };
        let (Op::Read, Ok(n)) = (req.op, c.result) else {
            continue;
        };
        let len = usize::try_from(n).unwrap_or(0);
        if let Some(buf) = q.read_buf_mut(c.slot, len) {
            for b in buf.iter_mut().step_by(step) {
                *b &= 1;
            }
            // The buffer outlives this (the queue owns it), and `black_box`
            // keeps the stores from being judged dead anyway.
            core::hint::black_box(buf);
        }
    }
}

/// Read back, untimed, what job `job` of a verifying `step` wrote in its
/// first `generated` requests, `depth` reads in flight, and compare each
/// with [`verify::fill`]'s contents. Replays the job's offset generator, so
/// it checks every offset written (a sequential walk that wrapped: its slice
/// once). Returns the bytes verified; a mismatch is an error with errno
/// [`verify::VERIFY_ERRNO`] (EILSEQ, as fio) for the read that found it.
fn verify_job<Q: IoQueue>(
    step: &Step,
    job: u32,
    q: &mut Q,
    generated: u64,
    depth: usize,
    stop: &Stop,
) -> Result<u64, IoError> {
    let mut gen = OffsetGen::new(step, job);
    let mut left = gen.cycle_len().map_or(generated, |c| generated.min(c));
    let mut inflight: Vec<Option<IoReq>> = vec![None; depth];
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut comps = Vec::with_capacity(depth);
    let mut verified = 0u64;
    loop {
        while left > 0 && stop.reason().is_none() {
            let Some(&slot) = free.last() else { break };
            left -= 1;
            let w = gen.next_req();
            if w.op != Op::Write {
                continue;
            }
            let req = IoReq { op: Op::Read, ..w };
            q.submit(slot, req)?;
            free.pop();
            inflight[slot] = Some(req);
        }
        if free.len() == depth {
            return Ok(verified);
        }
        comps.clear();
        q.reap(1, &mut comps)?;
        for c in &comps {
            let req = slot_done(&mut inflight, c.slot)?;
            free.push(c.slot);
            check(c, req)?;
            let len = usize::try_from(req.len).unwrap_or(usize::MAX);
            let data = q.read_buf(c.slot, len).ok_or(IoError { errno: EOPNOTSUPP, req })?;
            if verify::first_mismatch(step.seed, req.offset, data).is_some() {
                return Err(IoError {
                    errno: verify::VERIFY_ERRNO,
                    req,
                });
            }
            verified += u64::from(req.len);
        }
    }
}

/// Combine the jobs of a step into its result.
///
/// Bytes, requests, latencies and samples are summed over jobs; the runtime
/// is the longest job's; rates are totals over that runtime. A direction
/// with no requests is `None`.
pub fn merge(step: &Step, jobs: &[JobOutcome]) -> StepResult {
    let runtime = jobs.iter().map(|j| j.runtime).max().unwrap_or(Nanos(0));
    let interval = if step.sample_interval.0 == 0 {
        Nanos::from_secs(1)
    } else {
        step.sample_interval
    };
    let dir = |pick: fn(&JobOutcome) -> &DirAcc| -> Option<DirStats> {
        let mut t = DirAcc::new(interval);
        for j in jobs {
            let d = pick(j);
            t.bytes += d.bytes;
            t.ios += d.ios;
            t.lat.merge(&d.lat);
            t.clat.merge(&d.clat);
            if let Some(sl) = &d.slat {
                t.slat.get_or_insert_with(Latency::default).merge(sl);
            }
            t.buckets.merge(&d.buckets);
        }
        if t.ios == 0 {
            return None;
        }
        Some(DirStats {
            bytes: t.bytes,
            ios: t.ios,
            bytes_per_sec: rate(Bytes(t.bytes), runtime).unwrap_or(0.0),
            iops: per_sec(t.ios, runtime).unwrap_or(0.0),
            lat_ns: t.lat.to_stats()?,
            clat_ns: t.clat.to_stats(),
            slat_ns: t.slat.as_ref().and_then(Latency::to_stats),
            samples: t.buckets.to_samples(runtime),
        })
    };
    let (range_start, range_end) = step_range(step);
    StepResult {
        label: step.label.clone(),
        access: step.access,
        bs: step.bs,
        iodepth: step.iodepth,
        jobs: step.jobs,
        range_start,
        range_end,
        runtime_ns: runtime.0,
        read: dir(|j| &j.read),
        write: dir(|j| &j.write),
        flush: dir(|j| &j.flush),
        verified_bytes: step.verify.then(|| jobs.iter().map(|j| j.verified).sum()),
        filled_bytes: None,
        passes: Vec::new(),
        chosen_pass: None,
        lowest_lat_pass: None,
        lowest_lat_mean_ns: None,
        engine: jobs.first().and_then(|j| j.engine.clone()),
        members: Vec::new(),
    }
}

/// Do a step's untimed preparation: its fill ([`fill`]), then drop caches
/// or warm the first request, then settle. Returns what the fill wrote
/// (`None`: the step does not fill).
///
/// `Warm` and `Position` read through a depth-1 queue opened read-only with
/// the step's access: the first request of job 0 (as a read), or the one
/// logical block just before it.
pub fn prepare<T: Target, C: Clock>(step: &Step, target: &T, clock: &C, stop: &Stop) -> Result<Option<u64>, IoError> {
    let filled = fill(step, target, clock, stop)?;
    prepare_io(step, target, clock)?;
    if step.settle.0 > 0 {
        target.settle(step.settle)?;
    }
    Ok(filled)
}

/// A step's fill ([`Step::fill`]), untimed: CrystalDiskMark's test file
/// preparation (DiskBench.cpp `Init`: `WriteFile` of a 1 MiB buffer over
/// the whole file, on a handle opened `FILE_FLAG_NO_BUFFERING`, before the
/// first test). The step's range is written once, sequentially from its
/// start, in requests of [`FILL_BS`] (the last one shorter if the range
/// ends sooner) at depth 1 with the step's access, then flushed once.
///
/// Departures from CrystalDiskMark, both on the side of a clean start:
/// its buffer is one 1 MiB block of `rand() % 256` written again and
/// again (a deduplicating drive stores it once); here each 512-byte block
/// is stamped with its offset and the time, as every write of the runner
/// (`crate::scramble`), so no two are alike. CrystalDiskMark closes the
/// file without a flush; the flush here makes the data durable before the
/// first pass (for a buffered step too).
///
/// The queue is opened for writing, so a target that may not be written
/// refuses it ([`Target::open`]: EPERM) before any I/O: then nothing is
/// written and `Some(0)` is returned (a read test runs on the data already
/// there). A stop ends the fill after the request in flight. Returns the
/// bytes written; `None` if the step does not fill.
pub fn fill<T: Target, C: Clock>(step: &Step, target: &T, clock: &C, stop: &Stop) -> Result<Option<u64>, IoError> {
    if !step.fill {
        return Ok(None);
    }
    let (start, end) = step_range(step);
    let spec = OpenSpec {
        access: step.access,
        write: true,
        depth: 1,
        max_len: FILL_BS,
        // Not any job's seed: the fill's buffer is its own.
        seed: step.seed ^ 0xF111_F111_F111_F111,
        // pread/pwrite: the fill is preparation, not the test's engine.
        hipri: false,
        sqthread_poll: false,
        sqthread_poll_cpu: None,
    };
    let mut q = match target.open(&spec) {
        Ok(q) => q,
        Err(e) if e.errno == EPERM => return Ok(Some(0)),
        Err(e) => return Err(e),
    };
    let mut comps = Vec::with_capacity(1);
    let mut off = start;
    while off < end && stop.reason().is_none() {
        let len = u32::try_from((end - off).min(u64::from(FILL_BS))).unwrap_or(FILL_BS);
        let req = IoReq {
            op: Op::Write,
            offset: off,
            len,
        };
        let now = clock.now();
        if let Some(buf) = q.write_buf(0, usize::try_from(len).unwrap_or(usize::MAX)) {
            scramble::scramble(buf, off, now);
        }
        one_request(&mut q, clock, req, &mut comps)?;
        off += u64::from(len);
    }
    if off > start {
        let flush = IoReq {
            op: Op::Flush,
            offset: 0,
            len: 0,
        };
        one_request(&mut q, clock, flush, &mut comps)?;
    }
    Ok(Some(off - start))
}

/// [`prepare`] without the settle.
fn prepare_io<T: Target, C: Clock>(step: &Step, target: &T, clock: &C) -> Result<(), IoError> {
    let first = OffsetGen::new(step, 0).next_req();
    let req = match step.prepare {
        Prepare::None => return Ok(()),
        Prepare::DropCaches => return target.drop_caches(),
        Prepare::Warm | Prepare::WarmThenDrop => IoReq { op: Op::Read, ..first },
        Prepare::Position => {
            let lb = target.geometry().logical_block;
            let Some(offset) = first.offset.checked_sub(u64::from(lb)) else {
                return Ok(());
            };
            IoReq {
                op: Op::Read,
                offset,
                len: lb,
            }
        }
    };
    let spec = OpenSpec::plain(step.access, false, 1, req.len, step.seed);
    let mut q = target.open(&spec)?;
    let mut comps = Vec::with_capacity(1);
    one_request(&mut q, clock, req, &mut comps)?;
    drop(q);
    if step.prepare == Prepare::WarmThenDrop {
        // hdparm's time_cache: flush_buffer_cache after the first read.
        target.drop_caches()?;
    }
    Ok(())
}

/// Something that runs whole steps: the serial runner below, or init's
/// threaded one (one thread per job).
pub trait StepRunner {
    /// Prepare, open a queue per job, run them (until their bound or until
    /// `stop` is asked), merge.
    fn run_step(
        &mut self,
        step: &Step,
        stop: &Stop,
        progress: &mut dyn FnMut(&Progress<'_>),
    ) -> Result<StepResult, IoError>;

    /// A test's pause ([`Step::pause`]), untimed: write back what is dirty
    /// and leave the target idle for `for_` ([`Target::settle`]), or less
    /// if `stop` is asked meanwhile.
    fn idle(&mut self, for_: Nanos, stop: &Stop) -> Result<(), IoError>;
    /// Said in words, why the last step failed when its errno alone would
    /// mislead (its queues could not be set up as asked: an io_uring
    /// setup, a CPU list; the kernel refused polled I/O): the test's error
    /// message, in place of [`error_status`]'s. Taken: asked once.
    fn take_failure_message(&mut self) -> Option<String> {
        None
    }
}

/// Runs a step's jobs one after another on one target: for the simulated
/// disk, where a single clock makes concurrency meaningless.
#[derive(Debug)]
pub struct SerialRunner<'a, T, C> {
    /// The target.
    pub target: &'a T,
    /// The clock.
    pub clock: &'a C,
}

impl<T: Target, C: Clock> StepRunner for SerialRunner<'_, T, C> {
    fn run_step(
        &mut self,
        step: &Step,
        stop: &Stop,
        progress: &mut dyn FnMut(&Progress<'_>),
    ) -> Result<StepResult, IoError> {
        let filled = prepare(step, self.target, self.clock, stop)?;
        let mut outcomes = Vec::with_capacity(usize::try_from(step.jobs).unwrap_or(1));
        for job in 0..step.jobs.max(1) {
            let mut q = self.target.open(&open_spec(step, job))?;
            outcomes.push(run_job(step, job, &mut q, self.clock, stop, progress)?);
        }
        let mut r = merge(step, &outcomes);
        r.filled_bytes = filled;
        Ok(r)
    }

    /// One settle of the whole length: the simulated disk's moves its
    /// clock, with no I/O.
    fn idle(&mut self, for_: Nanos, _stop: &Stop) -> Result<(), IoError> {
        self.target.settle(for_)
    }
}

/// The figures of one pass, from its step result.
pub fn pass_of(r: &StepResult, warmup: bool) -> PassResult {
    let dirs = [r.read.as_ref(), r.write.as_ref()];
    let bytes: u64 = dirs.iter().flatten().map(|d| d.bytes).sum();
    let ios: u64 = dirs.iter().flatten().map(|d| d.ios).sum();
    #[allow(clippy::cast_precision_loss)] // request counts far below 2^53
    let lat_sum: f64 = dirs.iter().flatten().map(|d| d.lat_ns.mean * d.ios as f64).sum();
    let runtime = Nanos(r.runtime_ns);
    PassResult {
        warmup,
        runtime_ns: r.runtime_ns,
        read_bytes: r.read.as_ref().map_or(0, |d| d.bytes),
        write_bytes: r.write.as_ref().map_or(0, |d| d.bytes),
        bytes_per_sec: rate(Bytes(bytes), runtime).unwrap_or(0.0),
        iops: per_sec(ios, runtime).unwrap_or(0.0),
        #[allow(clippy::cast_precision_loss)] // request counts far below 2^53
        lat_mean_ns: (ios > 0).then(|| lat_sum / ios as f64),
    }
}

/// How a step's passes ended.
enum PassesEnd {
    /// Every pass ran.
    Done,
    /// `stop` was asked during a pass.
    Stopped(StopReason),
    /// A pass failed.
    Failed(IoError),
}

/// Run a step's passes: `step.warmup` discarded ones, then `step.passes`
/// measured ones, back to back (as CrystalDiskMark runs DiskSpd
/// `TestCount + 1` times per test, DiskBench.cpp `DiskSpd`: pass 0 is
/// "Preparing...", its score never taken; the score is the highest of the
/// others). Only the first pass fills ([`Step::fill`]); each does the
/// step's preparation. The result is the measured pass with the highest
/// bytes per second (the first of equals), with every pass's figures
/// ([`pass_of`]) and the chosen one's index when there is more than one
/// pass; `None` if no measured pass has figures. A pass cut short by a
/// stop counts as it ran; a failed pass has none (the passes before it
/// are kept).
fn run_passes(
    step: &Step,
    runner: &mut dyn StepRunner,
    stop: &Stop,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> (Option<StepResult>, PassesEnd) {
    let warmup = step.warmup;
    let total = warmup.saturating_add(step.passes.max(1));
    let mut later = None;
    let mut filled = None;
    let mut passes = Vec::new();
    // (index in `passes`, its bytes per second, its result)
    let mut best: Option<(usize, f64, StepResult)> = None;
    let mut end = PassesEnd::Done;
    for i in 0..total {
        let s = if i == 0 {
            step
        } else {
            later.get_or_insert_with(|| Step {
                fill: false,
                ..step.clone()
            })
        };
        let r = runner.run_step(s, stop, progress);
        let stopped = stop.reason();
        let r = match (r, stopped) {
            (Ok(r), _) => r,
            // A request cut short by the stop may fail (ECANCELED): the
            // stop is what happened.
            (Err(_), Some(why)) => {
                end = PassesEnd::Stopped(why);
                break;
            }
            (Err(e), None) => {
                end = PassesEnd::Failed(e);
                break;
            }
        };
        if i == 0 {
            filled = r.filled_bytes;
        }
        let is_warmup = i < warmup;
        let pass = pass_of(&r, is_warmup);
        if !is_warmup && best.as_ref().is_none_or(|(_, bps, _)| pass.bytes_per_sec > *bps) {
            best = Some((passes.len(), pass.bytes_per_sec, r));
        }
        passes.push(pass);
        if let Some(why) = stopped {
            end = PassesEnd::Stopped(why);
            break;
        }
    }
    let result = best.map(|(i, _, mut r)| {
        r.filled_bytes = filled;
        if total > 1 {
            r.chosen_pass = u32::try_from(i).ok();
            let lowest = lowest_latency(&passes);
            r.lowest_lat_pass = lowest.and_then(|(k, _)| u32::try_from(k).ok());
            r.lowest_lat_mean_ns = lowest.map(|(_, ns)| ns);
            r.passes = passes;
        }
        r
    });
    (result, end)
}

/// The measured pass with the lowest mean latency, among those that moved
/// any bytes, and that latency (CrystalDiskMark's `minLatency`: the least
/// latency of runs `j > 0` whose score is above 0); the first of equals.
fn lowest_latency(passes: &[PassResult]) -> Option<(usize, f64)> {
    let mut low: Option<(usize, f64)> = None;
    for (i, p) in passes.iter().enumerate() {
        if p.warmup || p.bytes_per_sec <= 0.0 {
            continue;
        }
        if let Some(ns) = p.lat_mean_ns {
            if low.is_none_or(|(_, l)| ns < l) {
                low = Some((i, ns));
            }
        }
    }
    low
}

/// Run every step of `spec` in order on `target_path`, and build the test's
/// result: status `ok`; or `error` with the errno, op and offset of the
/// first failed request (later steps are not run; completed ones are kept);
/// or, when `stop` was asked during a step, `interrupted` or `timeout` (the
/// steps so far are kept, the last one shortened: its figures cover the time
/// it ran); and the summary. Each step runs its passes ([`run_passes`]),
/// and after a step with a pause ([`Step::pause`], a test's last) that
/// ended `ok`, the runner idles ([`StepRunner::idle`]), untimed.
pub fn run_test(
    spec: &TestSpec,
    target_path: &str,
    steps: &[Step],
    runner: &mut dyn StepRunner,
    stop: &Stop,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> TestResult {
    let mut results = Vec::with_capacity(steps.len());
    let mut status = Status::Ok;
    for step in steps {
        let (r, end) = run_passes(step, runner, stop, progress);
        if let Some(r) = r {
            results.push(r);
        }
        match end {
            PassesEnd::Done => {}
            PassesEnd::Stopped(why) => {
                status = stopped_status(why, &step.label);
                break;
            }
            PassesEnd::Failed(e) => {
                status = error_status(&e);
                if let (Status::Error { message, .. }, Some(m)) = (&mut status, runner.take_failure_message()) {
                    *message = m;
                }
                break;
            }
        }
        if step.pause.0 > 0 {
            if let Err(e) = runner.idle(step.pause, stop) {
                status = error_status(&e);
                break;
            }
        }
    }
    TestResult {
        name: spec.name.clone(),
        workload: spec.workload,
        target: target_path.to_string(),
        params: spec.params.clone(),
        summary: crate::plan::summarize(spec.workload, &results),
        status,
        steps: results,
    }
}

/// The status of a test stopped during step `label`.
pub fn stopped_status(why: StopReason, label: &str) -> Status {
    match why {
        StopReason::Interrupted => Status::Interrupted {
            message: format!("stopped by the user during step {label}; the figures cover the time it ran"),
        },
        StopReason::Deadline => Status::Timeout {
            message: format!("past its deadline during step {label}; the figures cover the time it ran"),
        },
    }
}

/// The name of an operation in messages.
pub const fn op_name(op: Op) -> &'static str {
    match op {
        Op::Read => "read",
        Op::Write => "write",
        Op::Flush => "flush",
        Op::FlushRange => "flush_range",
    }
}

/// The `error` status of a failed request: `read at offset 8192 failed: errno 5`.
pub fn error_status(e: &IoError) -> Status {
    let message = match (e.errno, e.req.op) {
        (verify::VERIFY_ERRNO, Op::Read) => format!(
            "verify: the {} bytes read back at offset {} differ from what was written (errno {}, EILSEQ, as fio)",
            e.req.len, e.req.offset, e.errno
        ),
        (EOPNOTSUPP, _) => format!(
            "{} at offset {} failed: errno {} (this target's engine cannot verify data)",
            op_name(e.req.op),
            e.req.offset,
            e.errno
        ),
        _ => format!(
            "{} at offset {} failed: errno {}",
            op_name(e.req.op),
            e.req.offset,
            e.errno
        ),
    };
    Status::Error {
        errno: e.errno,
        op: e.req.op,
        offset: e.req.offset,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{Access, MemQueue};
    use crate::sim::{SimClock, SimDisk, SimModel};
    use crate::spec::Limit;

    fn step(pattern: Pattern, bs: u32, jobs: u32) -> Step {
        Step {
            label: "main".into(),
            access: Access::Direct,
            prepare: Prepare::None,
            pattern,
            bs,
            iodepth: 1,
            jobs,
            limit: Limit {
                runtime: None,
                bytes: None,
                ios: Some(10),
                min_ios: 0,
            },
            ramp: Nanos(0),
            flush_every: None,
            flush_at_end: false,
            fsync_freq: None,
            fsync_files: 1,
            rwmix_order: MixOrder::Random,
            random_map: false,
            seed: 42,
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

    fn offsets(s: &Step, job: u32, n: usize) -> Vec<IoReq> {
        let mut g = OffsetGen::new(s, job);
        (0..n).map(|_| g.next_req()).collect()
    }

    /// fio's random map (`random_map`, fio without `norandommap`): each
    /// job's first `blocks` requests hit every block of the range exactly
    /// once, and so do the next `blocks`, in another order; a mix's reads
    /// and writes share the one map (fio's map is the file's); every job
    /// has a map of its own (fio's jobs each open the file). Without it the
    /// offsets are drawn on their own: 4096 draws over 4096 blocks repeat
    /// some (about 1 - 1/e of the blocks are hit, 63%).
    #[test]
    fn random_map_visits_every_block_once_per_pass() {
        let (start, bs, blocks) = (1 << 20, 4096u32, 4096u64);
        let end = start + blocks * u64::from(bs);
        let block_of = |r: &IoReq| {
            assert_eq!((r.offset - start) % u64::from(bs), 0);
            (r.offset - start) / u64::from(bs)
        };
        for pct in [100u8, 50] {
            let mut s = step(
                Pattern::Random {
                    read_pct: pct,
                    start,
                    end,
                },
                bs,
                2,
            );
            s.random_map = true;
            for job in 0..2 {
                let reqs = offsets(&s, job, 2 * usize::try_from(blocks).unwrap());
                let (first, second): (Vec<u64>, Vec<u64>) = (
                    reqs[..4096].iter().map(block_of).collect(),
                    reqs[4096..].iter().map(block_of).collect(),
                );
                for (name, pass) in [("first", &first), ("second", &second)] {
                    let mut sorted = pass.clone();
                    sorted.sort_unstable();
                    assert!(sorted.iter().copied().eq(0..blocks), "pct {pct} job {job}: {name} pass");
                }
                assert_ne!(first, second, "pct {pct} job {job}: a new order each pass");
                if pct == 50 {
                    let reads = reqs[..4096].iter().filter(|r| r.op == Op::Read).count();
                    assert!((1800..2300).contains(&reads), "{reads} reads");
                }
            }
            assert_ne!(offsets(&s, 0, 64), offsets(&s, 1, 64), "pct {pct}: jobs differ");
        }
        let s = step(
            Pattern::Random {
                read_pct: 100,
                start,
                end,
            },
            bs,
            1,
        );
        let mut hit: Vec<u64> = offsets(&s, 0, 4096).iter().map(block_of).collect();
        hit.sort_unstable();
        hit.dedup();
        assert!(
            (2400..2800).contains(&hit.len()),
            "{} blocks hit without the map",
            hit.len()
        );
    }

    /// (j) random offsets are aligned to bs, inside the range, and reach
    /// every sixteenth of it; the read share follows read_pct; jobs differ.
    #[test]
    fn random_offsets_aligned_in_range_and_spread() {
        let (start, end, bs) = (1 << 20, (1 << 20) + (64 << 20), 4096u32);
        for pct in [100u8, 70, 0] {
            let s = step(
                Pattern::Random {
                    read_pct: pct,
                    start,
                    end,
                },
                bs,
                2,
            );
            let reqs = offsets(&s, 0, 10_000);
            let mut hit = [0u32; 16];
            let mut reads = 0;
            for r in &reqs {
                assert_eq!((r.offset - start) % u64::from(bs), 0);
                assert!(r.offset >= start && r.offset + u64::from(bs) <= end, "{}", r.offset);
                hit[usize::try_from((r.offset - start) * 16 / (end - start)).unwrap()] += 1;
                reads += u32::from(r.op == Op::Read);
            }
            // 10000 draws, 625 expected per sixteenth.
            assert!(hit.iter().all(|&h| (500..750).contains(&h)), "{hit:?}");
            let want = 100 * u32::from(pct);
            assert!(reads.abs_diff(want) <= 200, "pct {pct}: {reads} reads");
            assert_ne!(reqs, offsets(&s, 1, 10_000));
            assert_eq!(reqs, offsets(&s, 0, 10_000));
        }
        // The last block is reachable.
        let s = step(
            Pattern::Random {
                read_pct: 100,
                start: 0,
                end: 4 * 4096,
            },
            4096,
            1,
        );
        let mut seen: Vec<u64> = offsets(&s, 0, 200).iter().map(|r| r.offset).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen, [0, 4096, 8192, 12288]);
    }

    #[test]
    fn seq_slices_per_job_and_wraps() {
        // 10 blocks, 3 jobs: slices of 3 blocks, the tenth unused.
        let s = step(
            Pattern::Seq {
                op: Op::Write,
                start: 1024,
                end: 1024 + 10 * 512,
            },
            512,
            3,
        );
        let offs = |job| {
            offsets(&s, job, 4)
                .iter()
                .map(|r| (r.offset - 1024) / 512)
                .collect::<Vec<_>>()
        };
        assert_eq!(offs(0), [0, 1, 2, 0]);
        assert_eq!(offs(1), [3, 4, 5, 3]);
        assert_eq!(offs(2), [6, 7, 8, 6]);
        assert!(offsets(&s, 0, 4).iter().all(|r| r.op == Op::Write && r.len == 512));
        let s = step(
            Pattern::Fixed {
                op: Op::Read,
                offset: 4096,
            },
            512,
            1,
        );
        assert!(offsets(&s, 0, 3).iter().all(|r| r.offset == 4096));
        let s = step(
            Pattern::Cursors {
                starts: vec![0, 10_240],
                strides: vec![1024, -1024],
            },
            512,
            1,
        );
        let got: Vec<u64> = offsets(&s, 0, 6).iter().map(|r| r.offset).collect();
        assert_eq!(got, [0, 10_240, 1024, 9216, 2048, 8192]);
        let mut s = s;
        s.limit.ios = Some(6);
        assert_eq!(step_range(&s), (0, 10_240 + 512));
    }

    /// A queue that returns short transfers.
    struct Short(Vec<Completion>);
    impl IoQueue for Short {
        fn depth(&self) -> usize {
            1
        }
        fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
            self.0.push(Completion {
                slot,
                result: Ok(req.len / 2),
            });
            Ok(())
        }
        fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            out.append(&mut self.0);
            Ok(())
        }
    }

    /// Flushes on memory that asks the run to stop at the `stop_at`-th.
    struct StopsAt<'s> {
        stop: &'s Stop,
        stop_at: u64,
        flushes: u64,
        done: Vec<Completion>,
    }

    impl IoQueue for StopsAt<'_> {
        fn depth(&self) -> usize {
            1
        }
        fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
            if matches!(req.op, Op::Flush | Op::FlushRange) {
                self.flushes += 1;
                if self.flushes == self.stop_at {
                    self.stop.request(StopReason::Interrupted);
                }
            }
            let len = if matches!(req.op, Op::Read | Op::Write) {
                req.len
            } else {
                0
            };
            self.done.push(Completion { slot, result: Ok(len) });
            Ok(())
        }
        fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            out.append(&mut self.done);
            Ok(())
        }
    }

    /// sysbench's fsync of every file after each write, over 100,000
    /// files: a stop asked during the batch (the user's SIGTERM, or the
    /// deadline) ends it at the next flush, and the step ends, rather than
    /// working through the other 99,997 flushes first (at `file_num`
    /// 10^12, as the config allowed once, it never ended).
    #[test]
    fn a_stop_ends_a_batch_of_flushes() {
        let stop = Stop::new();
        let mut s = step(
            Pattern::Seq {
                op: Op::Write,
                start: 0,
                end: 1 << 40,
            },
            4096,
            1,
        );
        (s.access, s.fsync_freq, s.fsync_files, s.flush_at_end) = (Access::Buffered, Some(1), 100_000, true);
        s.limit.ios = Some(1_000);
        let mut q = StopsAt {
            stop: &stop,
            stop_at: 3,
            flushes: 0,
            done: Vec::new(),
        };
        let clock = SimClock::default();
        let out = run_job(&s, 0, &mut q, &clock, &stop, &mut |_| ()).expect("the job ends");
        assert_eq!(q.flushes, 3, "no flush after the stop");
        assert_eq!(out.write.ios, 1, "no write after the stop");
    }

    #[test]
    fn short_transfer_is_eio() {
        let s = step(
            Pattern::Fixed {
                op: Op::Read,
                offset: 8192,
            },
            4096,
            1,
        );
        let clock = SimClock::default();
        let e = run_job(&s, 0, &mut Short(Vec::new()), &clock, &Stop::new(), &mut |_| ()).unwrap_err();
        assert_eq!(
            e,
            IoError {
                errno: EIO,
                req: IoReq {
                    op: Op::Read,
                    offset: 8192,
                    len: 4096
                }
            }
        );
        assert_eq!(
            error_status(&e),
            Status::Error {
                errno: 5,
                op: Op::Read,
                offset: 8192,
                message: "read at offset 8192 failed: errno 5".into()
            }
        );
    }

    /// On memory (a clock that never moves), a size-bound write step writes
    /// exactly its bytes, QD capped by the queue's depth.
    #[test]
    fn size_bound_on_memory() {
        let mut data = alloc::vec![0u8; 64 * 1024];
        let mut s = step(
            Pattern::Seq {
                op: Op::Write,
                start: 0,
                end: 64 * 1024,
            },
            4096,
            1,
        );
        (s.iodepth, s.limit) = (
            64,
            Limit {
                runtime: None,
                bytes: Some(40 * 1024),
                ios: None,
                min_ios: 0,
            },
        );
        let clock = SimClock::default();
        let out = run_job(
            &s,
            0,
            &mut MemQueue::new(&mut data, 4),
            &clock,
            &Stop::new(),
            &mut |_| (),
        )
        .unwrap();
        assert_eq!((out.write.bytes, out.write.ios, out.read.ios), (40 * 1024, 10, 0));
        assert!(data[..40 * 1024].chunks(512).all(|b| b.iter().any(|&x| x != 0)));
        assert!(data[40 * 1024..].iter().all(|&b| b == 0));
    }

    /// fio's scramble_buffers=1: every write is stamped with its offset (and
    /// time) in each 512-byte block, so no two blocks written are alike even
    /// though each slot's buffer is filled only once and the clock stands
    /// still; at any depth.
    #[test]
    fn writes_are_scrambled_per_request() {
        for depth in [1usize, 4] {
            let mut data = alloc::vec![0u8; 64 * 1024];
            let mut s = step(
                Pattern::Seq {
                    op: Op::Write,
                    start: 0,
                    end: 64 * 1024,
                },
                4096,
                1,
            );
            (s.iodepth, s.limit.ios) = (u32::try_from(depth).unwrap(), Some(16));
            let clock = SimClock::default();
            let mut q = MemQueue::new(&mut data, depth);
            run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| ()).unwrap();
            let mut blocks: Vec<&[u8]> = data.chunks(512).collect();
            assert_eq!(blocks.len(), 128);
            for (i, b) in blocks.iter().enumerate() {
                let at = (0..8).find(|l| b[l * 64..l * 64 + 8] == (512 * i as u64).to_le_bytes());
                assert!(at.is_some(), "depth {depth}: block {i} lacks its offset");
            }
            blocks.sort_unstable();
            blocks.dedup();
            assert_eq!(blocks.len(), 128, "depth {depth}: repeated blocks");
        }
    }

    /// A queue over memory that corrupts the data of one write: flips a bit
    /// of what reaches the "disk" at `bad` (a lost or damaged write).
    struct Corrupting<'a> {
        inner: MemQueue<'a>,
        bad: Option<u64>,
    }

    impl IoQueue for Corrupting<'_> {
        fn depth(&self) -> usize {
            self.inner.depth()
        }
        fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
            self.inner.submit(slot, req)?;
            if let Some(bad) = self
                .bad
                .filter(|&b| req.op == Op::Write && (req.offset..req.offset + 4096).contains(&b))
            {
                self.inner.data[usize::try_from(bad).unwrap()] ^= 0x10;
            }
            Ok(())
        }
        fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            self.inner.reap(min, out)
        }
        fn write_buf(&mut self, slot: usize, len: usize) -> Option<&mut [u8]> {
            self.inner.write_buf(slot, len)
        }
        fn read_buf(&self, slot: usize, len: usize) -> Option<&[u8]> {
            self.inner.read_buf(slot, len)
        }
    }

    /// A verifying write step writes each offset's known contents, reads
    /// everything back after the step (a sequential walk that wrapped: once;
    /// random writes: every offset written) and counts the bytes verified;
    /// one flipped bit on the "disk" makes it fail with EILSEQ at the
    /// request that holds it. Without verify the same corruption passes.
    #[test]
    fn verify_reads_back_what_was_written() {
        let size = 256 * 1024usize;
        let seq = Pattern::Seq {
            op: Op::Write,
            start: 0,
            end: 64 * 1024,
        };
        let rand = Pattern::Random {
            read_pct: 0,
            start: 0,
            end: size as u64,
        };
        let mix = Pattern::Random {
            read_pct: 50,
            start: 0,
            end: size as u64,
        };
        // (pattern, requests, depth, bytes expected verified)
        let cases = [
            (seq.clone(), 10u64, 1usize, 10 * 4096u64),
            (seq, 40, 4, 16 * 4096),
            (rand.clone(), 30, 8, 30 * 4096),
            (mix.clone(), 30, 2, 0),
        ];
        for (i, (pattern, ios, depth, want)) in cases.into_iter().enumerate() {
            let mut s = step(pattern.clone(), 4096, 1);
            (s.iodepth, s.limit.ios, s.verify) = (u32::try_from(depth).unwrap(), Some(ios), true);
            let clock = SimClock::default();
            let mut data = alloc::vec![0u8; size];
            let mut q = Corrupting {
                inner: MemQueue::new(&mut data, depth),
                bad: None,
            };
            let out = run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| ()).unwrap();
            let writes = out.write.ios * 4096;
            if want > 0 {
                assert_eq!(out.verified, want, "case {i}");
            } else {
                // The mix: every write was verified, no read was.
                assert!(writes > 0 && out.read.ios > 0, "case {i}");
                assert!(
                    out.verified >= 4096 && out.verified <= writes,
                    "case {i}: {}",
                    out.verified
                );
            }
            // What is on the "disk" is the known contents at every written offset.
            let mut g = OffsetGen::new(&s, 0);
            for _ in 0..ios {
                let r = g.next_req();
                if r.op == Op::Write {
                    let at = usize::try_from(r.offset).unwrap();
                    assert_eq!(
                        verify::first_mismatch(42, r.offset, &data[at..at + 4096]),
                        None,
                        "case {i}"
                    );
                }
            }

            // The same step on a disk that damages one written byte.
            let mut data = alloc::vec![0u8; size];
            let mut g = OffsetGen::new(&s, 0);
            let first_write = core::iter::from_fn(|| Some(g.next_req()))
                .find(|r| r.op == Op::Write)
                .unwrap();
            let bad = first_write.offset + 1000;
            let mut q = Corrupting {
                inner: MemQueue::new(&mut data, depth),
                bad: Some(bad),
            };
            let Err(e) = run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| ()) else {
                panic!("case {i}: the damaged write was not noticed");
            };
            assert_eq!(e.errno, verify::VERIFY_ERRNO, "case {i}");
            assert_eq!((e.req.op, e.req.offset), (Op::Read, first_write.offset), "case {i}");
            let Status::Error { message, .. } = error_status(&e) else {
                panic!("case {i}: not an error status");
            };
            assert!(
                message.starts_with("verify: the 4096 bytes read back at offset"),
                "{message}"
            );
            // Without verify, nothing notices.
            s.verify = false;
            let mut data = alloc::vec![0u8; size];
            let mut q = Corrupting {
                inner: MemQueue::new(&mut data, depth),
                bad: Some(bad),
            };
            assert_eq!(
                run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| ())
                    .unwrap()
                    .verified,
                0
            );
        }
    }

    /// A verifying step on a queue that gives no buffer access (the
    /// simulator keeps no data) fails with EOPNOTSUPP instead of pretending.
    #[test]
    fn verify_needs_buffer_access() {
        let disk = SimDisk::new(SimModel::ssd(1 << 30), true);
        let mut s = step(
            Pattern::Seq {
                op: Op::Write,
                start: 0,
                end: 1 << 20,
            },
            4096,
            1,
        );
        s.verify = true;
        let clock = disk.clock.clone();
        let spec = OpenSpec::plain(Access::Direct, true, 1, 4096, 1);
        let mut q = disk.open(&spec).unwrap();
        let Err(e) = run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| ()) else {
            panic!("verify without buffer access passed");
        };
        assert_eq!((e.errno, e.req.op), (EOPNOTSUPP, Op::Write));
    }

    /// A simulated SSD that serves a 4 KiB random read in 1 ms (its clock
    /// moves 1 s per 1000 reads), and a QD1 random-read step bound by `runtime`.
    fn ms_per_read(runtime: Nanos) -> (SimDisk, Step) {
        let disk = SimDisk::new(
            SimModel {
                command_overhead_ns: 991_808,
                ..SimModel::ssd(1 << 30)
            },
            false,
        );
        let mut s = step(
            Pattern::Random {
                read_pct: 100,
                start: 0,
                end: 1 << 30,
            },
            4096,
            1,
        );
        s.limit = Limit {
            runtime: Some(runtime),
            bytes: None,
            ios: None,
            min_ios: 0,
        };
        (disk, s)
    }

    /// A stop asked during a step ends it after the requests in flight: the
    /// step is kept with the time it ran, later steps do not run, and the
    /// status says why (deadline: timeout; the user: interrupted). An
    /// interrupt outlasts `clear_deadline`, a deadline does not.
    #[test]
    fn stop_during_a_step_keeps_what_ran_and_names_the_reason() {
        for why in [StopReason::Deadline, StopReason::Interrupted] {
            let (disk, s) = ms_per_read(Nanos::from_secs(10));
            let mut second = s.clone();
            second.label = "second".into();
            let spec = TestSpec::new("t", crate::spec::Workload::RandRead, |_| ());
            let stop = Stop::new();
            let mut r = SerialRunner {
                target: &disk,
                clock: &disk.clock,
            };
            // The first progress report (after 1 s of the step's clock) asks to stop.
            let res = run_test(&spec, "sim:0", &[s, second], &mut r, &stop, &mut |_| stop.request(why));
            assert_eq!(res.steps.len(), 1, "{why:?}: the second step did not run");
            let ran = res.steps[0].runtime_ns;
            assert!(
                (1_000_000_000..1_100_000_000).contains(&ran),
                "{why:?}: ran {ran} ns of 10 s"
            );
            match (&res.status, why) {
                (Status::Timeout { message }, StopReason::Deadline)
                | (Status::Interrupted { message }, StopReason::Interrupted) => {
                    assert!(message.contains("during step main"), "{message}");
                }
                (other, _) => panic!("{why:?}: status {other:?}"),
            }
            stop.clear_deadline();
            assert_eq!(stop.reason(), (why == StopReason::Interrupted).then_some(why));
            // The first reason wins.
            stop.request(StopReason::Deadline);
            stop.request(StopReason::Interrupted);
            assert_eq!(
                stop.reason(),
                Some(if why == StopReason::Interrupted {
                    why
                } else {
                    StopReason::Deadline
                })
            );
        }
    }

    /// The mock queues' reap: move the clock to the earliest completion
    /// time of `inflight` (slot, completion time, length) and hand out every
    /// request done by then.
    fn reap_earliest(clock: &SimClock, inflight: &mut Vec<(usize, Nanos, u32)>, out: &mut Vec<Completion>) {
        let first = inflight.iter().map(|&(_, t, _)| t).min().expect("something in flight");
        clock.advance(first.saturating_sub(clock.now()));
        let (done, left): (Vec<_>, Vec<_>) = inflight.drain(..).partition(|&(_, t, _)| t <= first);
        *inflight = left;
        out.extend(
            done.into_iter()
                .map(|(slot, _, len)| Completion { slot, result: Ok(len) }),
        );
    }

    /// A device like QEMU's throttle: the first `burst` requests are served
    /// at once, then one every `per` in submission order (a token bucket
    /// whose bucket the burst empties). Time moves only in `reap`.
    struct Throttled {
        clock: SimClock,
        burst: u64,
        per: Nanos,
        served: u64,
        free_at: Nanos,
        inflight: Vec<(usize, Nanos, u32)>,
        depth: usize,
    }

    impl Throttled {
        fn new(clock: &SimClock, depth: usize, burst: u64, per: Nanos) -> Throttled {
            Throttled {
                clock: clock.clone(),
                burst,
                per,
                served: 0,
                free_at: Nanos(0),
                inflight: Vec::new(),
                depth,
            }
        }
    }

    impl IoQueue for Throttled {
        fn depth(&self) -> usize {
            self.depth
        }
        fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
            let now = self.clock.now();
            let cost = if self.served < self.burst { Nanos(0) } else { self.per };
            self.served += 1;
            self.free_at = self.free_at.max(now) + cost;
            self.inflight.push((slot, self.free_at, req.len));
            Ok(())
        }
        fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            reap_earliest(&self.clock, &mut self.inflight, out);
            Ok(())
        }
    }

    fn throttled_step(depth: u32, runtime: Nanos, ramp: Nanos) -> Step {
        let mut s = step(
            Pattern::Random {
                read_pct: 100,
                start: 0,
                end: 1 << 30,
            },
            4096,
            1,
        );
        s.iodepth = depth;
        s.ramp = ramp;
        s.limit = Limit {
            runtime: Some(runtime),
            bytes: None,
            ios: None,
            min_ios: 0,
        };
        s
    }

    #[allow(clippy::cast_precision_loss)]
    fn iops(o: &JobOutcome) -> f64 {
        o.read.ios as f64 * 1e9 / o.runtime.0 as f64
    }

    /// A 100 IOPS throttle whose first 10 requests are free: without a ramp
    /// the burst inflates a 0.5 s figure; with one, the requests the ramp
    /// left in flight complete before the measured time starts, and the
    /// figure is the throttle's exactly (at QD1 and QD4).
    #[test]
    fn a_ramp_hides_the_burst_and_ends_with_nothing_in_flight() {
        let ms10 = Nanos::from_millis(10);
        for depth in [1u32, 4] {
            let clock = SimClock::default();
            let s = throttled_step(depth, Nanos::from_millis(500), Nanos(0));
            let mut q = Throttled::new(&clock, depth as usize, 10, ms10);
            let o = run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| ()).unwrap();
            assert!(iops(&o) > 110.0, "QD{depth}: no ramp, the burst counts: {}", iops(&o));

            let clock = SimClock::default();
            let s = throttled_step(depth, Nanos::from_millis(500), Nanos::from_millis(200));
            let mut q = Throttled::new(&clock, depth as usize, 10, ms10);
            let o = run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| ()).unwrap();
            assert!((iops(&o) / 100.0 - 1.0).abs() < 1e-9, "QD{depth}: {} IOPS", iops(&o));
            assert!(o.runtime >= Nanos::from_millis(500), "{:?}", o.runtime);
        }
    }

    /// `min_ios`: a 0.5 s step on a device that takes 100 ms a request runs
    /// on until 16 requests were issued after the ramp; without it, 5.
    #[test]
    fn min_ios_outlasts_a_short_runtime_on_a_slow_device() {
        for (min_ios, want) in [(0u64, 5u64), (16, 16)] {
            let clock = SimClock::default();
            let mut s = throttled_step(1, Nanos::from_millis(500), Nanos(0));
            s.limit.min_ios = min_ios;
            let mut q = Throttled::new(&clock, 1, 0, Nanos::from_millis(100));
            let o = run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| ()).unwrap();
            assert_eq!(o.read.ios, want, "min_ios {min_ios}");
            assert_eq!(o.runtime, Nanos::from_millis(100 * want));
        }
    }

    /// A batched queue (io_uring-like): `submit` queues, `commit` issues
    /// after `commit_cost`, each request then takes `service` (one at a
    /// time); time moves only in `commit` and `reap`.
    struct Batched {
        clock: SimClock,
        commit_cost: Nanos,
        service: Nanos,
        queued: Vec<(usize, u32)>,
        issued: Vec<(usize, Nanos, u32)>,
        free_at: Nanos,
        commits: u64,
    }

    impl IoQueue for Batched {
        fn depth(&self) -> usize {
            8
        }
        fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
            self.queued.push((slot, req.len));
            Ok(())
        }
        fn batched(&self) -> bool {
            true
        }
        fn commit(&mut self) -> Result<(), IoError> {
            self.commits += 1;
            self.clock.advance(self.commit_cost);
            let now = self.clock.now();
            for (slot, len) in self.queued.drain(..) {
                self.free_at = self.free_at.max(now) + self.service;
                self.issued.push((slot, self.free_at, len));
            }
            Ok(())
        }
        fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            assert!(self.queued.is_empty(), "the runner commits before it reaps");
            reap_earliest(&self.clock, &mut self.issued, out);
            Ok(())
        }
    }

    /// fio's three latencies: on a batched queue, slat runs from the
    /// request's start to the commit that issued it, clat from there to its
    /// completion, lat the whole (lat = slat + clat for every request, so
    /// the means add up); on a synchronous one there is no slat and clat is
    /// lat (the simulated clock does not move between start and issue).
    #[test]
    fn slat_clat_and_lat_as_fio_splits_them() {
        let clock = SimClock::default();
        let mut s = throttled_step(8, Nanos::from_millis(10), Nanos(0));
        s.limit.min_ios = 0;
        let mut q = Batched {
            clock: clock.clone(),
            commit_cost: Nanos(5_000),
            service: Nanos(100_000),
            queued: Vec::new(),
            issued: Vec::new(),
            free_at: Nanos(0),
            commits: 0,
        };
        let o = run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| ()).unwrap();
        let r = merge(&s, core::slice::from_ref(&o)).read.unwrap();
        let slat = r.slat_ns.expect("a batched queue has slat");
        let clat = r.clat_ns.expect("clat");
        assert_eq!(slat.min, 5_000, "the commit's cost is every request's least slat");
        assert_eq!(
            clat.min, 100_000,
            "the first of a batch completes one service after its issue"
        );
        assert!(clat.max > 100_000, "later ones wait in the device: {}", clat.max);
        assert!((slat.mean + clat.mean - r.lat_ns.mean).abs() < 1e-6 * r.lat_ns.mean);
        assert!(
            q.commits > 1 && q.commits < o.read.ios,
            "one commit per batch: {}",
            q.commits
        );

        let (disk, s) = ms_per_read(Nanos::from_millis(50));
        let clock = disk.clock.clone();
        let mut q = disk.open(&open_spec(&s, 0)).unwrap();
        let o = run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| ()).unwrap();
        let r = merge(&s, core::slice::from_ref(&o)).read.unwrap();
        assert_eq!(
            r.slat_ns, None,
            "no slat for a synchronous queue, as fio's sync engines"
        );
        assert_eq!(r.clat_ns.as_ref(), Some(&r.lat_ns));
    }

    /// With `runtime_batch`, the runtime ends the step only on a whole
    /// batch (diskinfo -S checks its 1 s after each 250 writes): at 1 ms a
    /// read, 3.5 s in batches of 1000 is 4000 reads, a runtime shorter than
    /// one batch still runs it whole, and without batches 3.5 s is 3500.
    #[test]
    fn runtime_bound_ends_only_on_a_whole_batch() {
        for (runtime, batch, reads) in [
            (Nanos::from_millis(3500), Some(1000), 4000),
            (Nanos(1), Some(250), 250),
            (Nanos::from_millis(3000), Some(1000), 3000),
            (Nanos::from_millis(3500), None, 3500),
        ] {
            let (disk, mut s) = ms_per_read(runtime);
            s.runtime_batch = batch;
            let mut r = SerialRunner {
                target: &disk,
                clock: &disk.clock,
            };
            let res = r.run_step(&s, &Stop::new(), &mut |_| ()).unwrap();
            assert_eq!(res.read.unwrap().ios, reads, "{runtime:?} {batch:?}");
            assert_eq!(res.runtime_ns, reads * 1_000_000);
        }
        // A stop still ends a step inside a batch.
        let (disk, mut s) = ms_per_read(Nanos(1));
        s.runtime_batch = Some(10_000);
        let stop = Stop::new();
        let mut r = SerialRunner {
            target: &disk,
            clock: &disk.clock,
        };
        let res = r
            .run_step(&s, &stop, &mut |_| stop.request(StopReason::Interrupted))
            .unwrap();
        assert_eq!(res.read.unwrap().ios, 1000);
    }

    /// Progress is reported about once per second of the step's clock, with
    /// the fraction done rising to 1 and the ETA falling.
    #[test]
    fn progress_once_per_second() {
        let (disk, s) = ms_per_read(Nanos::from_millis(3500));
        let mut seen = Vec::new();
        let mut r = SerialRunner {
            target: &disk,
            clock: &disk.clock,
        };
        let res = r
            .run_step(&s, &Stop::new(), &mut |p| seen.push((p.done, p.eta)))
            .unwrap();
        assert_eq!(res.read.unwrap().ios, 3500);
        assert_eq!(seen.len(), 3, "{seen:?}");
        for (i, (done, eta)) in seen.iter().enumerate() {
            let want = (i as f64 + 1.0) / 3.5;
            assert!((done - want).abs() < 1e-9, "{done} vs {want}");
            assert_eq!(*eta, Some(Nanos::from_millis(2500 - 1000 * i as u64)));
        }
    }

    /// Jobs are summed; the runtime is the longest; rates are over it.
    #[test]
    fn merge_sums_jobs() {
        let disk = SimDisk::new(
            SimModel {
                command_overhead_ns: 1808,
                ..SimModel::ssd(1 << 30)
            },
            false,
        );
        let mut s = step(
            Pattern::Seq {
                op: Op::Read,
                start: 0,
                end: 1 << 20,
            },
            4096,
            2,
        );
        s.limit = Limit {
            runtime: None,
            bytes: Some(4096 * 100),
            ios: None,
            min_ios: 0,
        };
        let mut r = SerialRunner {
            target: &disk,
            clock: &disk.clock,
        };
        let res = r.run_step(&s, &Stop::new(), &mut |_| ()).unwrap();
        let rd = res.read.as_ref().unwrap();
        // Each job: 100 sequential reads of 10 us (no seek on a flat disk).
        assert_eq!((rd.ios, rd.bytes, res.runtime_ns), (200, 200 * 4096, 1_000_000));
        assert_eq!(rd.iops, 200_000.0);
        assert_eq!((res.range_start, res.range_end, res.jobs), (0, 1 << 20, 2));
        assert!(res.write.is_none() && res.flush.is_none());
        assert_eq!(disk.counts().reads, 200);
    }

    /// Warm reads the first request once, untimed.
    #[test]
    fn warm_and_position_prepare() {
        let disk = SimDisk::new(SimModel::hdd(1 << 30), false);
        let mut s = step(
            Pattern::Fixed {
                op: Op::Read,
                offset: 1 << 20,
            },
            1 << 21,
            1,
        );
        s.prepare = Prepare::Warm;
        prepare(&s, &disk, &disk.clock, &Stop::new()).unwrap();
        assert_eq!(
            (disk.counts().reads, disk.counts().read_bytes, disk.head()),
            (1, 1 << 21, 3 << 20)
        );
        s.prepare = Prepare::Position;
        s.pattern = Pattern::Seq {
            op: Op::Read,
            start: 8 << 20,
            end: 16 << 20,
        };
        prepare(&s, &disk, &disk.clock, &Stop::new()).unwrap();
        assert_eq!((disk.counts().reads, disk.head()), (2, 8 << 20));
    }
    /// A log of what hdparm's twins do to a target, in order.
    type Log = alloc::rc::Rc<core::cell::RefCell<Vec<String>>>;

    /// A target that logs each queue opened (access), each read (offset,
    /// len) and each cache drop. Reads return 0xff bytes; each read and each
    /// close logs how many bytes the previous read left at 1 (`buf[i] &= 1`
    /// touched them) and at 0xff (untouched).
    struct Logger {
        size: u64,
        log: Log,
    }
    struct LogQueue {
        log: Log,
        buf: Vec<u8>,
        done: Vec<Completion>,
    }
    impl LogQueue {
        fn census(&self) -> String {
            let ones = self.buf.iter().filter(|&&b| b == 1).count();
            let ff = self.buf.iter().filter(|&&b| b == 0xff).count();
            alloc::format!("touched {ones} untouched {ff}")
        }
    }
    impl Drop for LogQueue {
        fn drop(&mut self) {
            let c = self.census();
            self.log.borrow_mut().push(alloc::format!("close, {c}"));
        }
    }
    impl IoQueue for LogQueue {
        fn depth(&self) -> usize {
            1
        }
        fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
            let c = self.census();
            let line = alloc::format!("read {} {} after {c}", req.offset, req.len);
            self.log.borrow_mut().push(line);
            self.buf = alloc::vec![0xff; req.len as usize];
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
        fn read_buf(&self, _slot: usize, len: usize) -> Option<&[u8]> {
            self.buf.get(..len)
        }
        fn read_buf_mut(&mut self, _slot: usize, len: usize) -> Option<&mut [u8]> {
            self.buf.get_mut(..len)
        }
    }
    impl Target for Logger {
        type Queue = LogQueue;
        fn geometry(&self) -> crate::io::Geometry {
            crate::io::Geometry {
                size: self.size,
                logical_block: 512,
                physical_block: 4096,
            }
        }
        fn open(&self, spec: &OpenSpec) -> Result<LogQueue, IoError> {
            let line = alloc::format!("open {:?} depth {}", spec.access, spec.depth);
            self.log.borrow_mut().push(line);
            Ok(LogQueue {
                log: self.log.clone(),
                buf: Vec::new(),
                done: Vec::new(),
            })
        }
        fn drop_caches(&self) -> Result<(), IoError> {
            self.log.borrow_mut().push("drop caches".into());
            Ok(())
        }
        fn settle(&self, for_: Nanos) -> Result<(), IoError> {
            self.log
                .borrow_mut()
                .push(alloc::format!("sync, sleep {} s", for_.0 / 1_000_000_000));
            Ok(())
        }
    }

    /// Runs the one step of hdparm twin `w` (2 MiB, iodepth 8 asked for,
    /// `n` reads) on a logging target of `size` bytes; its log.
    fn hdparm_log(w: crate::spec::Workload, size: u64, n: u64) -> Vec<String> {
        let spec = crate::spec::TestSpec::new("t", w, |p| (p.bs, p.iodepth) = (crate::units::Bytes(2 << 20), 8));
        let t = Logger {
            size,
            log: Log::default(),
        };
        let mut steps = crate::plan::expand(&spec, &t.geometry()).unwrap();
        assert_eq!(steps.len(), 1);
        let s = &mut steps[0];
        // The runtime bound would make the count depend on the clock.
        s.limit.runtime = None;
        s.limit.ios = Some(n);
        let clock = SimClock::default();
        let mut r = SerialRunner {
            target: &t,
            clock: &clock,
        };
        r.run_step(s, &Stop::new(), &mut |_| ()).unwrap();
        let log = t.log.borrow().clone();
        log
    }

    /// hdparm -T (`time_cache`): one untimed read of the first 2 MiB, then
    /// `flush_buffer_cache` (BLKFLSBUF) and `sleep(1)`, then `seek_to_zero` +
    /// `read_big_block` of offset 0 one at a time, each read touched at
    /// every 512th byte (`buf[i] &= 1`) before the next.
    #[test]
    fn cached_read_is_hdparm_time_cache() {
        let m = 2 << 20;
        let log = hdparm_log(crate::spec::Workload::CachedRead, 1 << 30, 3);
        let want = [
            "open Buffered depth 1".into(),
            "read 0 2097152 after touched 0 untouched 0".into(),
            "close, touched 0 untouched 2097152".into(),
            "drop caches".into(),
            "sync, sleep 1 s".into(),
            "open Buffered depth 1".into(),
            "read 0 2097152 after touched 0 untouched 0".into(),
            alloc::format!("read 0 2097152 after touched {} untouched {}", m / 512, m - m / 512),
            alloc::format!("read 0 2097152 after touched {} untouched {}", m / 512, m - m / 512),
            alloc::format!("close, touched {} untouched {}", m / 512, m - m / 512),
        ];
        assert_eq!(log, want);
    }

    /// hdparm -t (`time_device`): cold (every hdparm run ends with
    /// `flush_buffer_cache`), `sync(); sleep(3)` (`prepare_timing_buf`),
    /// then sequential 2 MiB buffered `read_big_block`s
    /// from 0, one at a time, each touched, stopping at the device's last
    /// whole 2 MiB (`max_iterations`); -t --direct: the same on O_DIRECT,
    /// nothing dropped.
    #[test]
    fn buffered_and_direct_read_are_hdparm_time_device() {
        let m: u64 = 2 << 20;
        let touched = alloc::format!("touched {} untouched {}", m / 512, m - m / 512);
        // 7 MiB: three whole 2 MiB blocks, though 5 reads are allowed.
        for (w, access, drop) in [
            (crate::spec::Workload::BufferedRead, "Buffered", true),
            (crate::spec::Workload::DirectRead, "Direct", false),
        ] {
            let log = hdparm_log(w, 7 << 20, 5);
            let mut want: Vec<String> = Vec::new();
            if drop {
                want.push("drop caches".into());
            }
            // prepare_timing_buf: sync(); sleep(3).
            want.push("sync, sleep 3 s".into());
            want.push(alloc::format!("open {access} depth 1"));
            want.push("read 0 2097152 after touched 0 untouched 0".into());
            want.push(alloc::format!("read {m} {m} after {touched}"));
            want.push(alloc::format!("read {} {m} after {touched}", 2 * m));
            want.push(alloc::format!("close, {touched}"));
            assert_eq!(log, want, "{w:?}");
        }
    }

    /// A simulated disk that also keeps what is written (in memory), logs
    /// every request with the number of the queue that issued it (queues
    /// numbered in open order), and slows each request of queue `n` by
    /// `extra[n]` ns (the last entry for later queues).
    struct Rec {
        disk: SimDisk,
        data: alloc::rc::Rc<core::cell::RefCell<Vec<u8>>>,
        log: alloc::rc::Rc<core::cell::RefCell<Vec<(usize, IoReq)>>>,
        opens: core::cell::Cell<usize>,
        extra: Vec<u64>,
    }
    struct RecQueue {
        inner: crate::sim::SimQueue,
        no: usize,
        data: alloc::rc::Rc<core::cell::RefCell<Vec<u8>>>,
        log: alloc::rc::Rc<core::cell::RefCell<Vec<(usize, IoReq)>>>,
        clock: SimClock,
        extra: u64,
        bufs: Vec<Vec<u8>>,
        rng: Rng,
    }
    impl Rec {
        fn new(size: u64, writable: bool, extra: Vec<u64>) -> Rec {
            Rec {
                disk: SimDisk::new(SimModel::ssd(size), writable),
                data: alloc::rc::Rc::new(core::cell::RefCell::new(vec![0; usize::try_from(size).unwrap()])),
                log: alloc::rc::Rc::default(),
                opens: core::cell::Cell::new(0),
                extra,
            }
        }
        fn log(&self) -> Vec<(usize, IoReq)> {
            self.log.borrow().clone()
        }
    }
    impl IoQueue for RecQueue {
        fn depth(&self) -> usize {
            self.inner.depth()
        }
        fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
            self.inner.submit(slot, req)?;
            self.log.borrow_mut().push((self.no, req));
            let (off, len) = (usize::try_from(req.offset).unwrap(), req.len as usize);
            if req.op == Op::Write {
                self.data.borrow_mut()[off..off + len].copy_from_slice(&self.bufs[slot][..len]);
            }
            Ok(())
        }
        fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            let n = out.len();
            self.inner.reap(min, out)?;
            self.clock.advance(Nanos(self.extra * (out.len() - n) as u64));
            Ok(())
        }
        fn write_buf(&mut self, slot: usize, len: usize) -> Option<&mut [u8]> {
            let b = &mut self.bufs[slot];
            if b.len() < len {
                b.resize(len, 0);
                self.rng.fill(b);
            }
            Some(&mut b[..len])
        }
    }
    impl Target for Rec {
        type Queue = RecQueue;
        fn geometry(&self) -> crate::io::Geometry {
            self.disk.geometry()
        }
        fn open(&self, spec: &OpenSpec) -> Result<RecQueue, IoError> {
            let inner = self.disk.open(spec)?;
            let no = self.opens.get();
            self.opens.set(no + 1);
            Ok(RecQueue {
                inner,
                no,
                data: self.data.clone(),
                log: self.log.clone(),
                clock: self.disk.clock.clone(),
                extra: *self.extra.get(no).or(self.extra.last()).unwrap_or(&0),
                bufs: vec![Vec::new(); spec.depth as usize],
                rng: Rng::new(spec.seed),
            })
        }
        fn drop_caches(&self) -> Result<(), IoError> {
            self.disk.drop_caches()
        }
        fn settle(&self, for_: Nanos) -> Result<(), IoError> {
            self.disk.settle(for_)
        }
    }

    /// Run `spec` (expanded on `t`) with the serial runner.
    fn run_on<T: Target>(t: &T, clock: &SimClock, spec: &TestSpec) -> TestResult {
        let steps = crate::plan::expand(spec, &t.geometry()).unwrap();
        let mut r = SerialRunner { target: t, clock };
        run_test(spec, "rec", &steps, &mut r, &Stop::new(), &mut |_| ())
    }

    /// `fill` (CrystalDiskMark's test file, DiskBench.cpp `Init`): before
    /// the first pass, untimed, the test's range is written once, in order,
    /// in 1 MiB requests from one queue, then flushed; nothing else writes
    /// (the later passes do not fill again); every 512-byte block of the
    /// range then holds different, non-zero data; the step records the
    /// bytes filled.
    #[test]
    fn fill_writes_the_range_once_before_the_passes_with_random_data() {
        use crate::spec::Workload;
        use crate::units::Bytes;
        let area = 4u64 << 20;
        let t = Rec::new(16 << 20, true, vec![0]);
        let spec = TestSpec::new("t", Workload::SeqRead, |p| {
            (p.bs, p.length, p.runtime, p.size) = (Bytes(64 << 10), Some(Bytes(area)), None, Some(Bytes(1 << 20)));
            (p.fill, p.passes, p.warmup) = (true, 3, 1);
        });
        let r = run_on(&t, &t.disk.clock, &spec);
        assert_eq!(r.status, Status::Ok);
        let log = t.log();
        let fill: Vec<IoReq> = log.iter().filter(|(q, _)| *q == 0).map(|(_, r)| *r).collect();
        let mut want: Vec<IoReq> = (0..4)
            .map(|i| IoReq {
                op: Op::Write,
                offset: i << 20,
                len: 1 << 20,
            })
            .collect();
        want.push(IoReq {
            op: Op::Flush,
            offset: 0,
            len: 0,
        });
        assert_eq!(fill, want, "the fill: the whole range once, in order, then a flush");
        // The fill comes first, and nothing after it writes.
        assert!(log[..5].iter().all(|(q, _)| *q == 0));
        assert!(log[5..].iter().all(|(q, r)| *q > 0 && r.op == Op::Read));
        // Four passes (a warm-up and three), each reading 1 MiB.
        assert_eq!(t.opens.get(), 5);
        assert_eq!(log[5..].len(), 4 * 16);
        let data = t.data.borrow();
        let n = usize::try_from(area).unwrap();
        let mut blocks = alloc::collections::BTreeSet::new();
        for b in data[..n].chunks_exact(512) {
            assert!(b.iter().any(|&x| x != 0), "a block left zero");
            assert!(blocks.insert(b.to_vec()), "two blocks alike");
        }
        assert!(data[n..].iter().all(|&x| x == 0), "written past the range");
        assert_eq!(r.steps[0].filled_bytes, Some(area));
        assert_eq!(
            r.steps[0].read.as_ref().unwrap().bytes,
            1 << 20,
            "the fill is not counted"
        );
        assert!(r.steps[0].write.is_none() && r.steps[0].flush.is_none());
    }

    /// A fill on a target that may not be written writes nothing (its
    /// write queue is refused before any I/O), the read test runs on the
    /// data already there, and the step says it was not filled (0 bytes).
    #[test]
    fn fill_on_a_read_only_target_writes_nothing() {
        use crate::spec::Workload;
        use crate::units::Bytes;
        let disk = SimDisk::new(SimModel::ssd(16 << 20), false);
        let spec = TestSpec::new("t", Workload::RandRead, |p| {
            (p.length, p.runtime, p.size, p.fill) = (Some(Bytes(4 << 20)), None, Some(Bytes(64 << 10)), true);
        });
        let r = run_on(&disk, &disk.clock, &spec);
        assert_eq!(r.status, Status::Ok);
        let c = disk.counts();
        assert_eq!((c.writes, c.write_bytes, c.flushes), (0, 0, 0));
        assert_eq!(c.reads, 16);
        assert_eq!(r.steps[0].filled_bytes, Some(0));
        assert_eq!(r.steps[0].read.as_ref().unwrap().ios, 16);
    }

    /// `warmup` and `passes` (CrystalDiskMark, DiskBench.cpp `DiskSpd`:
    /// run 0 discarded, the score the highest of the others): four runs of
    /// the step, each kept in `passes`; the warm-up, though the fastest, is
    /// never chosen; the step's figures (and the summary's) are those of
    /// the fastest measured pass, and count one pass's requests only.
    #[test]
    fn passes_report_the_best_measured_pass_and_keep_each() {
        use crate::spec::Workload;
        use crate::units::Bytes;
        // Extra ns per request, by pass: warm-up, then three measured.
        let t = Rec::new(16 << 20, true, vec![0, 300_000, 100_000, 200_000]);
        let spec = TestSpec::new("t", Workload::RandRead, |p| {
            (p.runtime, p.size, p.passes, p.warmup) = (None, Some(Bytes(400 << 10)), 3, 1);
        });
        let r = run_on(&t, &t.disk.clock, &spec);
        assert_eq!(r.status, Status::Ok);
        let st = &r.steps[0];
        assert_eq!(st.passes.len(), 4);
        let warm: Vec<bool> = st.passes.iter().map(|p| p.warmup).collect();
        assert_eq!(warm, [true, false, false, false]);
        for p in &st.passes {
            assert_eq!((p.read_bytes, p.write_bytes), (400 << 10, 0));
        }
        let bps: Vec<f64> = st.passes.iter().map(|p| p.bytes_per_sec).collect();
        assert!(bps[0] > bps[2] && bps[2] > bps[3] && bps[3] > bps[1], "{bps:?}");
        assert_eq!(st.chosen_pass, Some(2));
        let read = st.read.as_ref().unwrap();
        assert_eq!(read.bytes_per_sec, bps[2]);
        assert_eq!((read.bytes, read.ios), (400 << 10, 100), "one pass counted");
        assert_eq!(st.runtime_ns, st.passes[2].runtime_ns);
        assert_eq!(r.summary.read_bytes_per_sec, Some(bps[2]));
        // The lowest mean latency of the measured passes: the fastest here.
        assert_eq!(st.lowest_lat_pass, Some(2));
        assert_eq!(st.lowest_lat_mean_ns, st.passes[2].lat_mean_ns);
        assert!(
            st.passes[0].lat_mean_ns < st.passes[2].lat_mean_ns,
            "the warm-up's is lower"
        );
        // One pass: no pass list, as before passes existed.
        let one = TestSpec::new("t", Workload::RandRead, |p| {
            (p.runtime, p.size) = (None, Some(Bytes(4096)))
        });
        let r = run_on(&t, &t.disk.clock, &one);
        assert!(r.steps[0].passes.is_empty() && r.steps[0].chosen_pass.is_none());
        assert!(r.steps[0].lowest_lat_pass.is_none() && r.steps[0].lowest_lat_mean_ns.is_none());
    }

    /// CrystalDiskMark's latency is chosen apart from its score: the least
    /// mean latency of the measured passes that moved bytes, whichever pass
    /// scored best; warm-ups, passes with no bytes or no latency, and a
    /// later equal do not count.
    #[test]
    fn lowest_latency_is_chosen_apart_from_the_best_pass() {
        let pass = |warmup: bool, bps: f64, lat: Option<f64>| PassResult {
            warmup,
            runtime_ns: 1,
            read_bytes: 1,
            write_bytes: 0,
            bytes_per_sec: bps,
            iops: 1.0,
            lat_mean_ns: lat,
        };
        let passes = [
            pass(true, 9.0, Some(10.0)),
            pass(false, 8.0, Some(50.0)),
            pass(false, 0.0, Some(20.0)),
            pass(false, 5.0, Some(30.0)),
            pass(false, 6.0, None),
            pass(false, 4.0, Some(30.0)),
        ];
        assert_eq!(lowest_latency(&passes), Some((3, 30.0)));
        assert_eq!(lowest_latency(&passes[..1]), None);
        assert_eq!(lowest_latency(&[]), None);
    }

    /// `pause`: after the test's last step, untimed: the clock moves on by
    /// the pause with no I/O, the figures are those without a pause, and
    /// the parameters record it.
    #[test]
    fn pause_idles_after_the_test_untimed() {
        use crate::spec::Workload;
        use crate::units::Bytes;
        let run = |pause: Nanos| {
            let disk = SimDisk::new(SimModel::ssd(16 << 20), true);
            let spec = TestSpec::new("t", Workload::SeqWrite, |p| {
                (p.bs, p.runtime, p.size, p.pause) = (Bytes(1 << 20), None, Some(Bytes(4 << 20)), pause);
            });
            let r = run_on(&disk, &disk.clock, &spec);
            (r, disk.counts(), disk.clock.now())
        };
        let (r0, c0, t0) = run(Nanos(0));
        let five = Nanos::from_secs(5);
        let (r5, c5, t5) = run(five);
        assert_eq!(t5.0 - t0.0, five.0, "the pause passes on the clock");
        assert_eq!(c5, c0, "no I/O during the pause");
        assert_eq!((r5.steps.clone(), r5.summary.clone()), (r0.steps, r0.summary));
        assert_eq!(r5.params.pause, five);
    }
}
