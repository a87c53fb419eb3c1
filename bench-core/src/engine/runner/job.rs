//! One job of a step: the loop that keeps `iodepth` requests in flight on
//! one queue, times each and counts it.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::account::{DirAcc, JobOutcome, Times};
use super::flush::{flushes, FileSet};
use super::offsets::OffsetGen;
use super::readback::verify_job;
use super::request::{check, slot_done};
use super::steady_wait::Wait;
use super::{Stop, EOPNOTSUPP};
use crate::engine::scramble;
use crate::engine::verify;
use crate::io::{Clock, Completion, IoError, IoQueue, IoReq, Op, OpenSpec};
use crate::spec::{Limit, Step};
use crate::vocab::units::Nanos;

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
        sq_thread_idle_ms: step
            .engine
            .sq_thread_idle
            .map(|t| u32::try_from(t.0 / 1_000_000).unwrap_or(u32::MAX)),
        ioengine: step.engine.ioengine,
    }
}

/// Run one job of a step on an open queue.
///
/// Keeps `step.iodepth` requests in flight (never more than `q.depth()`),
/// takes offsets from the step's pattern (job `job` of `step.jobs`), times
/// each request from just before its submission to just after the reap that
/// returned it, excludes completions inside the ramp, and stops at the
/// step's limit. An I/O error or a short transfer ends the job with the error.
///
/// Each turn of the loop fills the queue (`JobRun::fill_queue`), commits
/// what a batched queue holds (`JobRun::commit`), then either flushes
/// (nothing in flight and a flush due: `JobRun::flush`) or reaps and
/// counts (`JobRun::reap_and_account`) and reports progress; the final
/// flush, the runtime and the read-back follow (`JobRun::finish`).
pub fn run_job<Q: IoQueue, C: Clock>(
    step: &Step,
    job: u32,
    q: &mut Q,
    clock: &C,
    stop: &Stop,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<JobOutcome, IoError> {
    let mut run = JobRun::start(step, job, q, clock, stop);
    loop {
        run.fill_queue()?;
        run.commit()?;
        if run.free.len() == run.depth {
            // Nothing in flight: flush if due, else the step is over.
            if !run.flush_due {
                break;
            }
            run.flush()?;
            continue;
        }
        let now = run.reap_and_account()?;
        run.report(now, progress);
    }
    run.finish()
}

/// One job's loop ([`run_job`]): what it runs on, and what it has issued,
/// has in flight and owes (a flush) so far.
struct JobRun<'a, Q, C> {
    step: &'a Step,
    job: u32,
    q: &'a mut Q,
    clock: &'a C,
    stop: &'a Stop,
    /// Requests in flight at most: the step's iodepth, within the queue's.
    depth: usize,
    /// The queue's submissions wait for a commit ([`IoQueue::batched`]).
    batched: bool,
    /// Submissions a batched queue gathers before it commits them (fio's
    /// `iodepth_batch_submit`, [`crate::spec::EngineOpts::iodepth_batch_submit`]): 1 to
    /// `depth`.
    batch: usize,
    gen: OffsetGen,
    out: JobOutcome,
    /// The end of the ramp: first when it is due, then, once what the ramp
    /// issued has completed, the start of the measured time.
    ramp_end: Nanos,
    measuring: bool,
    /// Each slot's request and its times.
    inflight: Vec<Option<(IoReq, Times)>>,
    /// Slots submitted since the last commit (a batched queue's).
    uncommitted: Vec<usize>,
    free: Vec<usize>,
    comps: Vec<Completion>,
    /// Bytes and requests issued since the ramp: what the step's bound counts.
    issued_bytes: u64,
    issued_ios: u64,
    writes_since_flush: u64,
    /// Requests taken from the generator (ramp included): a verify replays them.
    generated: u64,
    flush_due: bool,
    /// How many flushes the due flush is: sysbench's periodic one, one per
    /// file ([`Step::fsync_files`]); a `flush_every` one, one.
    flushes_due: u64,
    files: u64,
    file_set: Option<FileSet>,
    /// Any write since the last flush (sysbench's `is_dirty`).
    dirty: bool,
    stopping: bool,
    last_done: Nanos,
    next_report: Nanos,
    /// The wait for steady state after the ramp ([`Step::steady`]).
    steady: Option<Wait>,
    /// The progress line's step while it waits.
    wait_label: String,
}

impl<'a, Q: IoQueue, C: Clock> JobRun<'a, Q, C> {
    /// Nothing issued yet; the clock read once for the ramp and the first
    /// progress report.
    fn start(step: &'a Step, job: u32, q: &'a mut Q, clock: &'a C, stop: &'a Stop) -> Self {
        let depth = usize::try_from(step.iodepth)
            .unwrap_or(usize::MAX)
            .min(q.depth())
            .max(1);
        let interval = if step.sample_interval.0 == 0 {
            Nanos::from_secs(1)
        } else {
            step.sample_interval
        };
        let out = JobOutcome {
            read: DirAcc::new(interval),
            write: DirAcc::new(interval),
            flush: DirAcc::new(interval),
            runtime: Nanos(0),
            verified: 0,
            engine: q.engine(),
            steady: None,
            read_digest: 0,
        };
        let gen = OffsetGen::new(step, job);
        let t0 = clock.now();
        let ramp_end = t0 + step.ramp;
        let batched = q.batched();
        let batch = match usize::try_from(step.engine.iodepth_batch_submit) {
            Ok(0) | Err(_) => depth,
            Ok(b) => b.min(depth),
        };
        JobRun {
            step,
            job,
            q,
            clock,
            stop,
            depth,
            batched,
            batch,
            gen,
            out,
            ramp_end,
            measuring: step.ramp.0 == 0 && step.steady.is_none(),
            inflight: vec![None; depth],
            uncommitted: Vec::with_capacity(depth),
            free: (0..depth).rev().collect(),
            comps: Vec::with_capacity(depth),
            issued_bytes: 0,
            issued_ios: 0,
            writes_since_flush: 0,
            generated: 0,
            flush_due: false,
            flushes_due: 1,
            files: step.fsync_files.max(1),
            file_set: FileSet::of(step),
            dirty: false,
            stopping: false,
            last_done: ramp_end,
            next_report: t0 + Nanos::from_secs(1),
            steady: step.steady.map(|s| Wait::new(s, ramp_end)),
            wait_label: step
                .steady
                .map(|_| format!("{} (waiting for steady state)", step.label))
                .unwrap_or_default(),
        }
    }

    /// Fill the queue, unless the bound is reached or a flush is due.
    fn fill_queue(&mut self) -> Result<(), IoError> {
        let step = self.step;
        while !self.stopping && !self.flush_due {
            let Some(&slot) = self.free.last() else { break };
            let now = self.clock.now();
            if self.stop.reason().is_some() {
                self.stopping = true;
                break;
            }
            // After the ramp, a steady-state wait goes on issuing, unmeasured,
            // until it is over.
            let waiting = !self.measuring && now >= self.ramp_end && self.steady.as_mut().is_some_and(|w| !w.over(now));
            if !self.measuring && now >= self.ramp_end && !waiting {
                // The ramp is over: issue nothing until its requests have
                // completed (fio's quiesce at the end of `ramp_time`), so
                // the measured time starts with an idle queue and counts
                // no request that began in the ramp.
                if self.free.len() < self.depth {
                    break;
                }
                (self.measuring, self.ramp_end) = (true, now);
            }
            if !waiting
                && limit_reached(
                    &step.limit,
                    step.runtime_batch,
                    now,
                    self.ramp_end,
                    self.issued_bytes,
                    self.issued_ios,
                )
            {
                self.stopping = true;
                break;
            }
            // A walk at the write pointers ends at its area's end (never
            // onto the zones it filled), and opens its next zone only once
            // the requests to the one before have completed.
            if self.gen.exhausted() {
                self.stopping = true;
                break;
            }
            if self.free.len() < self.depth && self.gen.next_opens_extent() {
                break;
            }
            // sysbench's periodic fsync: due only when another request is
            // about to be issued (its `file_get_*_request` returns the fsync
            // in place of the next request), so a step that ends on a
            // multiple leaves it to the final flush.
            if self.dirty && step.fsync_freq.is_some_and(|k| self.generated % k == 0) {
                (self.flush_due, self.flushes_due) = (true, self.files);
                break;
            }
            self.submit(slot, now)?;
            // fio's td_io_queue: commit once `iodepth_batch` are queued
            // (what is left when the queue is full is committed before the
            // reap, [`run_job`]).
            if self.uncommitted.len() >= self.batch {
                self.commit()?;
            }
        }
        Ok(())
    }

    /// Submit the generator's next request in free slot `slot`, started at
    /// `now`: a write's buffer filled first (verify's known contents, or
    /// scrambled), then counted as issued and, if a write, as owing a flush.
    fn submit(&mut self, slot: usize, now: Nanos) -> Result<(), IoError> {
        let step = self.step;
        let req = self.gen.next_req();
        if req.op == Op::Write {
            let len = usize::try_from(req.len).unwrap_or(usize::MAX);
            if step.verify {
                let buf = self.q.write_buf(slot, len).ok_or(IoError { errno: EOPNOTSUPP, req })?;
                verify::fill(step.seed, req.offset, buf);
            } else if let Some(buf) = self.q.write_buf(slot, len) {
                // fio's default scramble_buffers=1: no two writes alike
                // (a queue without buffer access, the simulated disk, holds no data).
                scramble::scramble(buf, req.offset, now);
            }
        }
        // A synchronous queue issues (and may finish) the request in
        // `submit`: its issue time is just before.
        let issue = if self.batched { now } else { self.clock.now() };
        self.q.submit(slot, req)?;
        self.free.pop();
        self.generated += 1;
        self.inflight[slot] = Some((
            req,
            Times {
                start: now,
                issue,
                batched: self.batched,
            },
        ));
        if self.batched {
            self.uncommitted.push(slot);
        }
        if self.measuring {
            self.issued_bytes += u64::from(req.len);
            self.issued_ios += 1;
        }
        if req.op == Op::Write {
            self.writes_since_flush += 1;
            self.dirty = true;
            self.flush_due = step.flush_every.is_some_and(|k| self.writes_since_flush >= k);
            self.flushes_due = 1;
        }
        Ok(())
    }

    /// A batched queue's commit of what was submitted since the last one:
    /// those requests' issue time is just after it.
    fn commit(&mut self) -> Result<(), IoError> {
        if self.uncommitted.is_empty() {
            return Ok(());
        }
        self.q.commit()?;
        let issued = self.clock.now();
        for slot in self.uncommitted.drain(..) {
            if let Some((_, t)) = self.inflight[slot].as_mut() {
                t.issue = issued;
            }
        }
        Ok(())
    }

    /// The due flush, with nothing in flight; then nothing is owed.
    fn flush(&mut self) -> Result<(), IoError> {
        self.flush_batch(self.flushes_due)?;
        self.flush_due = false;
        self.writes_since_flush = 0;
        self.dirty = false;
        Ok(())
    }

    /// `n` flushes ([`flushes`]), counted if the step is measuring.
    fn flush_batch(&mut self, n: u64) -> Result<(), IoError> {
        let done = flushes(
            &mut *self.q,
            self.clock,
            self.stop,
            n,
            self.file_set,
            &mut self.comps,
            self.measuring.then_some(self.ramp_end),
            &mut self.out.flush,
        )?;
        self.last_done = self.last_done.max(done);
        Ok(())
    }

    /// Wait for a completion, and free and check each one the reap
    /// returned, counting those that started after the ramp. Returns the
    /// time just after the reap.
    fn reap_and_account(&mut self) -> Result<Nanos, IoError> {
        self.comps.clear();
        self.q.reap(1, &mut self.comps)?;
        // Digested before hdparm's touch changes the bytes.
        if self.step.engine.read_digest {
            self.out.read_digest =
                self.out
                    .read_digest
                    .wrapping_add(digest_reads(&*self.q, &self.comps, &self.inflight));
        }
        if let Some(every) = self.step.touch_every {
            touch_reads(&mut *self.q, &self.comps, &self.inflight, every);
        }
        let now = self.clock.now();
        for c in &self.comps {
            let (req, times) = slot_done(&mut self.inflight, c.slot)?;
            self.free.push(c.slot);
            check(c, req)?;
            self.last_done = self.last_done.max(now);
            if !self.measuring && matches!(req.op, Op::Read | Op::Write) {
                if let Some(w) = self.steady.as_mut() {
                    w.count(now, u64::from(req.len));
                }
            }
            if self.measuring && times.start >= self.ramp_end {
                let acc = match req.op {
                    Op::Read => &mut self.out.read,
                    Op::Write => &mut self.out.write,
                    Op::Flush | Op::FlushRange => &mut self.out.flush,
                };
                acc.count(times, now, now.saturating_sub(self.ramp_end), u64::from(req.len));
            }
        }
        Ok(now)
    }

    /// A progress report, if one is due at `now` (once a second of the
    /// step's clock).
    fn report(&mut self, now: Nanos, progress: &mut dyn FnMut(&Progress<'_>)) {
        if now < self.next_report {
            return;
        }
        let waiting = !self.measuring && self.steady.is_some() && now >= self.ramp_end;
        let (done, eta) = if waiting {
            (0.0, None)
        } else {
            progress_of(
                &self.step.limit,
                now.saturating_sub(self.ramp_end),
                self.issued_bytes,
                self.issued_ios,
            )
        };
        progress(&Progress {
            step: if waiting { &self.wait_label } else { &self.step.label },
            done,
            eta,
        });
        self.next_report = now + Nanos::from_secs(1);
    }

    /// After the loop: the final flush, the measured runtime, the read-back.
    fn finish(mut self) -> Result<JobOutcome, IoError> {
        let step = self.step;
        if step.flush_at_end && self.writes_since_flush > 0 {
            // sysbench's `file_thread_done`: an fsync of each file.
            self.flush_batch(self.files)?;
        }
        if step.end_close && self.measuring {
            // dd's close, timed as dd times it: its figure ends after it.
            self.q.end_close()?;
            self.last_done = self.last_done.max(self.clock.now());
        }
        // A step stopped inside its ramp measured nothing.
        self.out.runtime = if self.measuring {
            self.last_done.saturating_sub(self.ramp_end)
        } else {
            Nanos(0)
        };
        if let Some(w) = self.steady.take() {
            self.out.steady = Some(w.record(self.clock.now()));
        }
        if step.verify {
            self.out.verified = verify_job(step, self.job, &mut *self.q, self.generated, self.depth, self.stop)?;
        }
        Ok(self.out)
    }
}

/// The sum of [`crate::io::read_digest`] over the reads among `comps`
/// that succeeded, each over the bytes it returned. A queue that gives no
/// read buffer (the simulated disk) adds nothing.
fn digest_reads<Q: IoQueue>(q: &Q, comps: &[Completion], inflight: &[Option<(IoReq, Times)>]) -> u64 {
    let mut sum = 0u64;
    for c in comps {
        let Some(Some((req, _))) = inflight.get(c.slot) else {
            continue;
        };
        let (Op::Read, Ok(n)) = (req.op, c.result) else {
            continue;
        };
        let len = usize::try_from(n).unwrap_or(0);
        if let Some(buf) = q.read_buf(c.slot, len) {
            sum = sum.wrapping_add(crate::io::read_digest(req.offset, buf));
        }
    }
    sum
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::result::Status;
    use crate::engine::runner::testutil::{ms_per_read, step};
    use crate::engine::runner::{error_status, merge, SerialRunner, StepRunner, StopReason, EIO};
    use crate::engine::sim::SimClock;
    use crate::io::{MemQueue, Target};
    use crate::spec::Pattern;

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

    /// read_digest: the sum of each read's digest of what it brought, the
    /// same at any depth and for the disk's bytes read once in any order;
    /// another byte anywhere changes it; off by default (0).
    #[test]
    fn reads_are_digested_as_the_data_they_brought() {
        let mut data: Vec<u8> = (0..64 * 1024u32)
            .map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes()[1])
            .collect();
        let want = data.chunks(4096).enumerate().fold(0u64, |a, (i, c)| {
            a.wrapping_add(crate::io::read_digest(4096 * i as u64, c))
        });
        let run = |data: &mut Vec<u8>, depth: usize, on: bool| {
            let mut s = step(
                Pattern::Seq {
                    op: Op::Read,
                    start: 0,
                    end: 64 * 1024,
                },
                4096,
                1,
            );
            (s.iodepth, s.limit.ios, s.engine.read_digest) = (u32::try_from(depth).unwrap(), Some(16), on);
            let clock = SimClock::default();
            let mut q = MemQueue::new(data, depth);
            run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| ())
                .unwrap()
                .read_digest
        };
        assert_eq!(run(&mut data, 1, true), want);
        assert_eq!(run(&mut data, 4, true), want);
        assert_eq!(run(&mut data, 4, false), 0);
        data[40_000] ^= 1;
        assert_ne!(run(&mut data, 1, true), want);
        // The offset is digested too: the same bytes elsewhere differ.
        assert_ne!(crate::io::read_digest(0, &[1, 2]), crate::io::read_digest(512, &[1, 2]));
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

    /// A device that slows as it is used, then levels (a fresh SSD): request
    /// n takes 1 ms + 3 ms x n / 2000 until the 2000th, 4 ms after, served
    /// in order. Time moves only in `reap`.
    struct Tiring {
        clock: SimClock,
        served: u64,
        free_at: Nanos,
        inflight: Vec<(usize, Nanos, u32)>,
    }

    impl IoQueue for Tiring {
        fn depth(&self) -> usize {
            1
        }
        fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
            let cost = Nanos(1_000_000 + 3_000_000 * self.served.min(2000) / 2000);
            self.served += 1;
            self.free_at = self.free_at.max(self.clock.now()) + cost;
            self.inflight.push((slot, self.free_at, req.len));
            Ok(())
        }
        fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            reap_earliest(&self.clock, &mut self.inflight, out);
            Ok(())
        }
    }

    /// fio's `ss` before the measured part: on a device whose rate falls
    /// for 5 s and then levels at 250 IOPS, a 2 s step measures the falling
    /// part without a wait (above 300 IOPS) and exactly 250 IOPS after a
    /// wait for `iops:2%` over 3 s, which records the falling figures and
    /// is attained; a criterion the device never meets waits `ss_max` and
    /// says it was not attained, and the step is measured anyway.
    #[test]
    fn a_steady_state_wait_measures_the_level_part_only() {
        let run = |ss: Option<&str>, max: u64| {
            let clock = SimClock::default();
            let mut s = throttled_step(1, Nanos::from_secs(2), Nanos(0));
            s.steady = ss.map(|c| crate::spec::SteadySpec {
                ss: crate::spec::SteadyCriterion::parse(c).unwrap(),
                ss_dur: Nanos::from_secs(3),
                ss_ramp: Nanos(0),
                ss_interval: Nanos::from_secs(1),
                ss_max: Nanos::from_secs(max),
            });
            let mut q = Tiring {
                clock: clock.clone(),
                served: 0,
                free_at: Nanos(0),
                inflight: Vec::new(),
            };
            let mut lines = Vec::new();
            let o = run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |p| {
                lines.push(p.step.to_string())
            })
            .unwrap();
            (o, lines)
        };
        let (o, _) = run(None, 0);
        assert!(iops(&o) > 300.0, "no wait: {}", iops(&o));
        assert!(o.steady.is_none());

        let (o, lines) = run(Some("iops:2%"), 20);
        assert!(
            (iops(&o) / 250.0 - 1.0).abs() < 1e-9,
            "{} IOPS {:?}",
            iops(&o),
            o.steady
        );
        let w = o.steady.clone().expect("a wait");
        assert!(w.attained, "{w:?}");
        assert!(
            w.iops[0] > 600.0 && w.iops.last().is_some_and(|&l| (l - 250.0).abs() < 1.0),
            "{:?}",
            w.iops
        );
        assert!(
            w.wait_ns >= Nanos::from_secs(5).0 && w.wait_ns < Nanos::from_secs(20).0,
            "{}",
            w.wait_ns
        );
        assert_eq!(w.iops.len() as u64, w.wait_ns / 1_000_000_000);
        assert!(w.window.is_some_and(|j| j.criterion < 2.0));
        assert!(
            lines.iter().any(|l| l == "main (waiting for steady state)"),
            "{lines:?}"
        );

        // A wait of at most 4 s ends inside the fall, not attained, and the
        // step measures what follows.
        let (o, _) = run(Some("iops:2%"), 4);
        let w = o.steady.clone().expect("a wait");
        assert!(!w.attained, "{w:?}");
        assert!((4_000..4_010).contains(&(w.wait_ns / 1_000_000)), "{}", w.wait_ns);
        assert!(iops(&o) > 250.5, "{} IOPS", iops(&o));
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
        /// How many requests each commit issued, in order.
        batches: Vec<usize>,
    }

    impl Batched {
        fn new(clock: &SimClock, commit_cost: Nanos, service: Nanos) -> Batched {
            Batched {
                clock: clock.clone(),
                commit_cost,
                service,
                queued: Vec::new(),
                issued: Vec::new(),
                free_at: Nanos(0),
                commits: 0,
                batches: Vec::new(),
            }
        }
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
            self.batches.push(self.queued.len());
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
        let mut q = Batched::new(&clock, Nanos(5_000), Nanos(100_000));
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

    /// fio's `iodepth_batch_submit`: 1 (fio's default) hands each request
    /// to the kernel in a commit of its own, as fio's `td_io_queue` commits
    /// once `iodepth_batch` requests are queued; 3 gathers three (the first
    /// fill of 8 in commits of 3, 3 and the 2 left before the reap); 0, or
    /// more than the depth, a whole refill. Every request issued is
    /// committed once.
    #[test]
    fn iodepth_batch_submit_commits_as_fio_does() {
        for (batch, first) in [(1u32, vec![1usize; 8]), (3, vec![3, 3, 2]), (0, vec![8]), (64, vec![8])] {
            let clock = SimClock::default();
            let mut s = throttled_step(8, Nanos::from_millis(10), Nanos(0));
            s.limit.min_ios = 0;
            s.engine.iodepth_batch_submit = batch;
            let mut q = Batched::new(&clock, Nanos(5_000), Nanos(100_000));
            let o = run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| ()).unwrap();
            assert!(q.batches.len() > first.len(), "batch {batch}: {:?}", q.batches);
            assert_eq!(q.batches[..first.len()], first[..], "batch {batch}: the first fill");
            let most = if batch == 0 { 8 } else { batch.min(8) as usize };
            assert!(
                q.batches.iter().all(|&n| (1..=most).contains(&n)),
                "batch {batch}: {:?}",
                q.batches
            );
            assert_eq!(q.batches.iter().sum::<usize>() as u64, o.read.ios, "batch {batch}");
        }
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

    /// A memory queue that holds its completions until reaped one at a
    /// time, and records the most zones (of 4 blocks) it ever had writes
    /// in flight for at once.
    struct Zoned<'a> {
        inner: MemQueue<'a>,
        held: Vec<(Completion, u64)>,
        most: usize,
    }

    impl IoQueue for Zoned<'_> {
        fn depth(&self) -> usize {
            self.inner.depth()
        }
        fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
            self.inner.submit(slot, req)?;
            let mut c = Vec::new();
            self.inner.reap(1, &mut c)?;
            // Reads (the read-back) count as no zone.
            let zone = if req.op == Op::Write {
                req.offset / (4 * 4096)
            } else {
                u64::MAX
            };
            self.held.extend(c.into_iter().map(|c| (c, zone)));
            let mut zones: Vec<u64> = self.held.iter().map(|h| h.1).filter(|&z| z != u64::MAX).collect();
            zones.dedup();
            self.most = self.most.max(zones.len());
            Ok(())
        }
        fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            if !self.held.is_empty() {
                out.push(self.held.remove(0).0);
            }
            Ok(())
        }
        fn write_buf(&mut self, slot: usize, len: usize) -> Option<&mut [u8]> {
            self.inner.write_buf(slot, len)
        }
        fn read_buf(&self, slot: usize, len: usize) -> Option<&[u8]> {
            self.inner.read_buf(slot, len)
        }
    }

    /// A sequential write at the write pointers, 4 deep, over two zones
    /// of capacity 3 blocks (size 4): never has requests in flight for two
    /// zones at once, writes each zone's capacity and nothing of the gaps,
    /// ends at the area's end though its bound is further (no wrap onto a
    /// full zone), and reads back and verifies all it wrote.
    #[test]
    fn a_write_at_the_write_pointers_keeps_one_zone_open_and_ends() {
        let mut s = crate::engine::runner::testutil::two_zones(
            true,
            Pattern::Seq {
                op: Op::Write,
                start: 0,
                end: 6 * 4096,
            },
            1,
        );
        s.iodepth = 4;
        s.verify = true;
        s.limit.ios = Some(1000);
        let mut disk = vec![0u8; 8 * 4096];
        let mut q = Zoned {
            inner: MemQueue::new(&mut disk, 4),
            held: Vec::new(),
            most: 0,
        };
        let clock = SimClock::default();
        let o = run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| {}).expect("runs");
        assert_eq!(q.most, 1, "requests for two zones in flight at once");
        assert_eq!((o.write.ios, o.verified), (6, 6 * 4096));
        for gap in [3usize, 7] {
            assert!(
                disk[gap * 4096..(gap + 1) * 4096].iter().all(|&b| b == 0),
                "gap block {gap} written"
            );
        }
        assert!(disk[4 * 4096..5 * 4096].iter().any(|&b| b != 0));
    }

    /// A device that takes 1 ms a read, and whose cache takes 50 ms to
    /// settle at the close (a readahead still in flight): time moves only
    /// in `reap` and `end_close`.
    struct Closing {
        clock: SimClock,
        inflight: Vec<(usize, Nanos, u32)>,
        /// (requests in flight, the time) at each `end_close`.
        closes: Vec<(usize, Nanos)>,
    }

    impl IoQueue for Closing {
        fn depth(&self) -> usize {
            1
        }
        fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
            self.inflight
                .push((slot, self.clock.now() + Nanos::from_millis(1), req.len));
            Ok(())
        }
        fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            reap_earliest(&self.clock, &mut self.inflight, out);
            Ok(())
        }
        fn end_close(&mut self) -> Result<(), IoError> {
            self.closes.push((self.inflight.len(), self.clock.now()));
            self.clock.advance(Nanos::from_millis(50));
            Ok(())
        }
    }

    /// dd's close (`end_close`): once, after the last read completed, and
    /// inside the timed part (dd times its close), so 12 reads of 1 ms and
    /// a close of 50 ms take 62 ms; without it the close is neither made
    /// nor timed.
    #[test]
    fn dd_close_is_timed_after_the_last_read() {
        for (end_close, runtime, closes) in [(true, 62, vec![(0, Nanos::from_millis(12))]), (false, 12, vec![])] {
            let mut s = step(
                Pattern::Seq {
                    op: Op::Read,
                    start: 0,
                    end: 1 << 20,
                },
                4096,
                1,
            );
            s.limit.ios = Some(12);
            s.end_close = end_close;
            let clock = SimClock::default();
            let mut q = Closing {
                clock: clock.clone(),
                inflight: Vec::new(),
                closes: Vec::new(),
            };
            let o = run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| ()).expect("job");
            assert_eq!(o.read.ios, 12, "end_close {end_close}");
            assert_eq!(o.runtime, Nanos::from_millis(runtime), "end_close {end_close}");
            assert_eq!(q.closes, closes, "end_close {end_close}");
        }
    }
}
