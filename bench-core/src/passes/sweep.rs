//! One whole-disk pass: the engine the surface scan ([`crate::passes::scan`]),
//! the burn-in ([`crate::passes::burnin`]) and the preconditioning fill
//! ([`crate::passes::steady`]) all run.
//!
//! A pass makes requests over an area `depth` in flight: it keeps the
//! queue's slots, the table of requests in flight and their submission
//! times, and loops submit, commit, reap. A request that fails waits in a
//! list until the requests in flight have completed; then, the queue idle,
//! each is narrowed to its logical blocks: each block written or read alone
//! through slot 0, again up to `retries` times when it fails. A write the
//! kernel refuses before the disk is asked (EPERM, EROFS: a device held
//! read-only) is not a bad block: it ends the pass with that error. The
//! pass ends when every request is made and narrowed, when the run asks to
//! stop (after the requests in flight; what failed last is then not
//! narrowed), or when too many blocks are bad. About once a second (after
//! a reap) it reports its progress.
//!
//! What differs is a [`Sweep`], which the engine asks:
//!
//! - which request is next, given the requests in flight ([`Sweep::next`]):
//!   the scan's reads in the area's order (or an evenly spread fraction of
//!   them); the burn-in's writes, then reads, in the area's order
//!   (sequential passes), or writes in a keyed permutation's order with
//!   reads mixed in, each to a block below the first write still in flight
//!   (random passes);
//! - what a write puts in its slot's buffer ([`Sweep::fill`]): the burn-in's
//!   pattern; the scan only reads;
//! - what a submission, a completion and a narrowed block record
//!   ([`Sweep::submitted`], [`Sweep::completed`], [`Sweep::narrowed`]): the
//!   scan's time classes, slowest reads, zones, unreadable and recovered
//!   LBAs; the burn-in's counts, write and read spans, its check of what a
//!   read returned against the pattern, unwritable, unreadable and
//!   mismatched LBAs;
//! - when too many blocks are bad ([`Sweep::too_many_bad`]), judged after
//!   each reap and, in the narrowing, after each block
//!   ([`Sweep::JUDGE_EVERY_BLOCK`]: the burn-in, whose block read back can
//!   mismatch) or after each block no try reached (the scan);
//! - whether the narrowing is timed ([`Sweep::TIMED_NARROWING`]: the scan's
//!   zones count the narrowing's time; the burn-in reads no clock there);
//! - what the progress report says ([`Sweep::progress`]).
//!
//! Each completion is given the device's time for it: from the later of
//! its submission and the completion before it (the last one of the
//! previous reap, or of the narrowing's when it is timed), to its own
//! completion. At depth 1 that is its latency; deeper, requests waiting
//! behind others are not charged the others' time.
//!
//! The preconditioning fill ([`crate::passes::steady`]) is the third such
//! pass: writes in the area's order, twice over, the first block that
//! cannot be written ending it. Its rounds after it are not whole-disk
//! passes (timed, in a random order): they have a writer of their own.

use alloc::vec;
use alloc::vec::Vec;

use crate::engine::runner::Stop;
use crate::io::{Clock, Completion, IoError, IoQueue, IoReq, Op};
use crate::vocab::units::Nanos;

/// How a pass ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// Every request was made (and what failed narrowed).
    Done,
    /// The run asked to stop.
    Stopped,
    /// Too many blocks were bad.
    TooManyBad,
}

/// A request in flight: the request, its index in the pass's order (as
/// [`Sweep::next`] gave it) and when it was submitted.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Inflight {
    pub req: IoReq,
    pub index: u64,
    pub at: Nanos,
}

/// A request the queue completed (not a narrowed block's).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Finished {
    /// Its slot, whose buffer holds what a read returned.
    pub slot: usize,
    /// The request.
    pub req: IoReq,
    /// True if it transferred every byte.
    pub ok: bool,
    /// What the queue said: the bytes transferred, or the errno.
    pub result: Result<u32, i32>,
    /// The device's time for it (see the module's doc).
    pub time: Nanos,
    /// When the reap returned it.
    pub now: Nanos,
}

/// What a pass does besides the engine's loop: see the module's doc.
pub(crate) trait Sweep {
    /// What the progress report gives besides the fraction done.
    type Found;
    /// Judge too many bad after every block narrowed (else only after one
    /// no try reached).
    const JUDGE_EVERY_BLOCK: bool;
    /// Read the clock after each of the narrowing's tries.
    const TIMED_NARROWING: bool;

    /// The next request and its index in the pass's order, given the
    /// requests in flight; `None` when none may go now.
    fn next(&mut self, inflight: &[Option<Inflight>]) -> Option<(IoReq, u64)>;

    /// Put what a write of `buf.len()` bytes at `offset` writes in `buf`.
    fn fill(&self, _offset: u64, _buf: &mut [u8]) {}

    /// `req` (as [`Sweep::next`] gave it) was submitted at `now`.
    fn submitted(&mut self, req: IoReq, now: Nanos);

    /// Whether the failed `req` is narrowed to its blocks (by default every
    /// one is); one that is not was judged whole by [`Sweep::completed`].
    fn narrows(&self, _req: IoReq) -> bool {
        true
    }

    /// A request completed (one that failed is narrowed later, if it
    /// [`Sweep::narrows`]).
    fn completed<Q: IoQueue>(&mut self, q: &Q, f: Finished) -> Result<(), IoError>;

    /// A narrowed block: `ok` is the try (from 0) that succeeded, `None`
    /// when none did; a read's data is in slot 0; `now` is the last
    /// completion (as of the narrowing's clock, when it is timed).
    fn narrowed<Q: IoQueue>(&mut self, q: &Q, block: IoReq, ok: Option<u32>, now: Nanos) -> Result<(), IoError>;

    /// True once too many blocks are bad.
    fn too_many_bad(&self) -> bool;

    /// The fraction done and what else the report says.
    fn progress(&self) -> (f64, Self::Found);
}

/// EPERM and EROFS: a write the kernel refuses before the disk is asked (a
/// device the kernel holds read-only, a read-only filesystem). Not a bad
/// block: the pass ends with the error, which the caller reports as a
/// refused grant.
pub(crate) const REFUSED_WRITE: [i32; 2] = [1, 30];

/// `Err` if `result`, of a write of `req`, is one the kernel refused.
fn refused(result: Result<u32, i32>, req: IoReq) -> Result<(), IoError> {
    match result {
        Err(errno) if req.op == Op::Write && REFUSED_WRITE.contains(&errno) => Err(IoError { errno, req }),
        _ => Ok(()),
    }
}

/// The error of a queue that has no slot buffer to fill or check.
pub(crate) fn no_buffer(req: IoReq) -> IoError {
    IoError { errno: 22, req }
}

/// The engine: a queue, its slots and the clock, for one pass or several
/// (the burn-in's passes and phases run one after another on it).
pub(crate) struct Engine<'a, Q, C> {
    q: &'a mut Q,
    clock: &'a C,
    depth: usize,
    logical_block: u32,
    retries: u32,
    /// Each slot's request.
    inflight: Vec<Option<Inflight>>,
    free: Vec<usize>,
    comps: Vec<Completion>,
    /// Failed requests waiting for the queue to drain before their narrowing.
    failed: Vec<IoReq>,
    /// The last completion so far (see the module's doc).
    last_done: Nanos,
    /// When the engine started.
    t0: Nanos,
    next_report: Nanos,
    end: End,
}

impl<'a, Q: IoQueue, C: Clock> Engine<'a, Q, C> {
    /// An engine over `q` keeping `depth` requests in flight (within the
    /// queue's depth), narrowing to `logical_block` with `retries`. Its
    /// time starts now.
    pub fn new(q: &'a mut Q, clock: &'a C, depth: u32, logical_block: u32, retries: u32) -> Self {
        let depth = usize::try_from(depth).unwrap_or(1).clamp(1, q.depth().max(1));
        let t0 = clock.now();
        Engine {
            q,
            clock,
            depth,
            logical_block,
            retries,
            inflight: vec![None; depth],
            free: (0..depth).rev().collect(),
            comps: Vec::with_capacity(depth),
            failed: Vec::new(),
            last_done: Nanos(0),
            t0,
            next_report: t0 + Nanos::from_secs(1),
            end: End::Done,
        }
    }

    /// The time since the engine started.
    pub fn elapsed(&self) -> Nanos {
        self.clock.now().saturating_sub(self.t0)
    }

    /// From the engine's start to its last completion (0 before any).
    pub fn busy_time(&self) -> Nanos {
        self.last_done.saturating_sub(self.t0)
    }

    /// Make every request `s` gives, narrowing what fails, until done,
    /// stopped or too many blocks are bad. An error of the queue itself
    /// (not of a request), or a refused write, ends it with the error.
    pub fn run<S: Sweep>(
        &mut self,
        s: &mut S,
        stop: &Stop,
        progress: &mut dyn FnMut(f64, S::Found),
    ) -> Result<End, IoError> {
        self.end = End::Done;
        loop {
            let ending = self.end != End::Done;
            if !ending && stop.reason().is_some() {
                self.end = End::Stopped;
                continue;
            }
            // Issue while nothing failed is waiting for its narrowing.
            let mut issued = false;
            while !ending && self.failed.is_empty() {
                let Some(&slot) = self.free.last() else { break };
                let Some((req, index)) = s.next(&self.inflight) else {
                    break;
                };
                if req.op == Op::Write {
                    let buf = self.q.write_buf(slot, req.len as usize).ok_or_else(|| no_buffer(req))?;
                    s.fill(req.offset, buf);
                }
                let now = self.clock.now();
                self.q.submit(slot, req)?;
                self.free.pop();
                self.inflight[slot] = Some(Inflight { req, index, at: now });
                s.submitted(req, now);
                issued = true;
            }
            // An io_uring commit is a system call even with nothing queued.
            if issued {
                self.q.commit()?;
            }
            if self.free.len() == self.depth {
                if ending {
                    // Stopped, or enough found: what failed last is not narrowed.
                    self.failed.clear();
                }
                // Idle with nothing failed: nothing more may go (with
                // nothing in flight, the order holds back no request).
                if self.failed.is_empty() {
                    break;
                }
                // The queue is idle: narrow the failed requests.
                for req in core::mem::take(&mut self.failed) {
                    self.narrow(s, req, stop)?;
                }
                continue;
            }
            self.reap(s)?;
            let now = self.clock.now();
            if now >= self.next_report {
                let (done, found) = s.progress();
                progress(done, found);
                self.next_report = now + Nanos::from_secs(1);
            }
        }
        Ok(self.end)
    }

    /// Wait for a completion and take every one the reap returned.
    fn reap<S: Sweep>(&mut self, s: &mut S) -> Result<(), IoError> {
        self.comps.clear();
        self.q.reap(1, &mut self.comps)?;
        let now = self.clock.now();
        let mut from = self.last_done;
        for c in core::mem::take(&mut self.comps) {
            let Some(f) = self.inflight.get_mut(c.slot).and_then(Option::take) else {
                continue;
            };
            self.free.push(c.slot);
            let time = now.saturating_sub(f.at.max(from));
            from = now;
            let ok = c.result == Ok(f.req.len);
            if !ok {
                refused(c.result, f.req)?;
            }
            s.completed(
                self.q,
                Finished {
                    slot: c.slot,
                    req: f.req,
                    ok,
                    result: c.result,
                    time,
                    now,
                },
            )?;
            if !ok && s.narrows(f.req) {
                self.failed.push(f.req);
            }
        }
        self.last_done = now;
        if s.too_many_bad() {
            self.end = End::TooManyBad;
        }
        Ok(())
    }

    /// Make each logical block of the failed `req` alone, with the
    /// retries, through slot 0 of the idle queue.
    fn narrow<S: Sweep>(&mut self, s: &mut S, req: IoReq, stop: &Stop) -> Result<(), IoError> {
        let lb = self.logical_block.max(1);
        let mut at = req.offset;
        while at < req.offset + u64::from(req.len) {
            if stop.reason().is_some() {
                self.end = End::Stopped;
                return Ok(());
            }
            let block = IoReq {
                op: req.op,
                offset: at,
                len: lb,
            };
            let mut ok = None;
            for attempt in 0..=self.retries {
                if block.op == Op::Write {
                    let buf = self.q.write_buf(0, lb as usize).ok_or_else(|| no_buffer(block))?;
                    s.fill(at, buf);
                }
                self.q.submit(0, block)?;
                self.q.commit()?;
                self.comps.clear();
                self.q.reap(1, &mut self.comps)?;
                if S::TIMED_NARROWING {
                    self.last_done = self.clock.now();
                }
                for c in &self.comps {
                    refused(c.result, block)?;
                }
                if self.comps.iter().any(|c| c.result == Ok(lb)) {
                    ok = Some(attempt);
                    break;
                }
            }
            s.narrowed(self.q, block, ok, self.last_done)?;
            if (ok.is_none() || S::JUDGE_EVERY_BLOCK) && s.too_many_bad() {
                self.end = End::TooManyBad;
                return Ok(());
            }
            at += u64::from(lb);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::Cell;

    const LB: u32 = 512;

    /// A clock that moves 1 us each time it is read.
    struct Ticks(Cell<u64>);
    impl Clock for Ticks {
        fn now(&self) -> Nanos {
            self.0.set(self.0.get() + 1000);
            Nanos(self.0.get())
        }
    }

    /// A queue whose requests complete in order, one per reap, failing
    /// those that cover a block of `bad`; it logs every request as
    /// (first block, blocks).
    struct Blocks {
        bad: Vec<u64>,
        queued: Vec<(usize, IoReq)>,
        log: Vec<(u64, u32)>,
    }
    impl IoQueue for Blocks {
        fn depth(&self) -> usize {
            4
        }
        fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
            self.queued.push((slot, req));
            self.log.push((req.offset / u64::from(LB), req.len / LB));
            Ok(())
        }
        fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            if !self.queued.is_empty() {
                let (slot, req) = self.queued.remove(0);
                let (first, blocks) = (req.offset / u64::from(LB), u64::from(req.len / LB));
                let bad = self.bad.iter().any(|b| (first..first + blocks).contains(b));
                let result = if bad { Err(5) } else { Ok(req.len) };
                out.push(Completion { slot, result });
            }
            Ok(())
        }
    }

    /// Reads of 4 blocks over 16, judged as the scan (`EVERY` false) or
    /// the burn-in judges; at most `max_bad` unreadable blocks.
    struct Reads<'s, const EVERY: bool> {
        next: u64,
        max_bad: usize,
        unreadable: Vec<u64>,
        /// Stop at the first failed request.
        stop_at_failure: Option<&'s Stop>,
        /// A request (by its first block) that completes but is bad, as a
        /// burn-in read that returns the wrong data.
        mismatch: Option<u64>,
    }
    impl<const EVERY: bool> Sweep for Reads<'_, EVERY> {
        type Found = ();
        const JUDGE_EVERY_BLOCK: bool = EVERY;
        const TIMED_NARROWING: bool = false;
        fn next(&mut self, _: &[Option<Inflight>]) -> Option<(IoReq, u64)> {
            (self.next < 4).then(|| {
                self.next += 1;
                let req = IoReq {
                    op: Op::Read,
                    offset: (self.next - 1) * 4 * u64::from(LB),
                    len: 4 * LB,
                };
                (req, self.next - 1)
            })
        }
        fn submitted(&mut self, _: IoReq, _: Nanos) {}
        fn completed<Q: IoQueue>(&mut self, _: &Q, f: Finished) -> Result<(), IoError> {
            if let (false, Some(stop)) = (f.ok, self.stop_at_failure) {
                stop.request(crate::engine::runner::StopReason::Interrupted);
            }
            let first = f.req.offset / u64::from(LB);
            if f.ok && self.mismatch == Some(first) {
                self.unreadable.push(first);
            }
            Ok(())
        }
        fn narrowed<Q: IoQueue>(&mut self, _: &Q, b: IoReq, ok: Option<u32>, _: Nanos) -> Result<(), IoError> {
            if ok.is_none() {
                self.unreadable.push(b.offset / u64::from(b.len));
            }
            Ok(())
        }
        fn too_many_bad(&self) -> bool {
            self.unreadable.len() > self.max_bad
        }
        fn progress(&self) -> (f64, ()) {
            (0.0, ())
        }
    }

    fn run<const EVERY: bool>(
        bad: &[u64],
        depth: u32,
        max_bad: usize,
        stop: Option<&Stop>,
    ) -> (End, Vec<(u64, u32)>, Vec<u64>) {
        let mut q = Blocks {
            bad: bad.to_vec(),
            queued: Vec::new(),
            log: Vec::new(),
        };
        let mut s = Reads::<EVERY> {
            next: 0,
            max_bad,
            unreadable: Vec::new(),
            stop_at_failure: stop,
            mismatch: None,
        };
        let never = Stop::new();
        let clock = Ticks(Cell::new(0));
        let mut e = Engine::new(&mut q, &clock, depth, LB, 1);
        let end = e.run(&mut s, stop.unwrap_or(&never), &mut |_, ()| {}).expect("run");
        (end, q.log, s.unreadable)
    }

    /// A failed request waits for the requests in flight, and nothing new
    /// goes before it is narrowed: each of its blocks alone, a failing one
    /// tried again `retries` times.
    #[test]
    fn a_failed_request_is_narrowed_once_the_queue_is_idle() {
        let (end, log, bad) = run::<false>(&[5], 2, 10, None);
        assert_eq!((end, bad), (End::Done, vec![5]));
        let want = [(0, 4), (4, 4), (8, 4), (4, 1), (5, 1), (5, 1), (6, 1), (7, 1), (12, 4)];
        assert_eq!(log, want);
    }

    /// Past `max_bad`, the scan's judging (after an unreadable block only)
    /// narrows the next failed request up to its first unreadable block;
    /// the burn-in's (after every block) stops at its first block.
    #[test]
    fn too_many_bad_is_judged_as_the_configuration_says() {
        let (end, log, bad) = run::<false>(&[1, 6], 4, 0, None);
        assert_eq!((end, bad), (End::TooManyBad, vec![1, 6]));
        let narrowed: Vec<u64> = log[4..].iter().map(|r| r.0).collect();
        assert_eq!(narrowed, [0, 1, 1, 4, 5, 6, 6]);
        let (end, log, bad) = run::<true>(&[1, 6], 4, 0, None);
        assert_eq!((end, bad), (End::TooManyBad, vec![1]));
        let narrowed: Vec<u64> = log[4..].iter().map(|r| r.0).collect();
        assert_eq!(narrowed, [0, 1, 1, 4]);
    }

    /// A stop ends the pass after the requests in flight; what failed is
    /// then not narrowed.
    #[test]
    fn a_stop_drains_the_queue_and_narrows_nothing() {
        let stop = Stop::new();
        let (end, log, bad) = run::<false>(&[5], 4, 10, Some(&stop));
        assert_eq!((end, bad), (End::Stopped, vec![]));
        assert_eq!(log, [(0, 4), (4, 4), (8, 4), (12, 4)]);
    }

    /// What a completion finds bad (not a failed request: a mismatch) is
    /// judged after the reap that returned it: past `max_bad`, nothing
    /// more is made.
    #[test]
    fn a_bad_completion_is_judged_after_its_reap() {
        let mut q = Blocks {
            bad: Vec::new(),
            queued: Vec::new(),
            log: Vec::new(),
        };
        let mut s = Reads::<false> {
            next: 0,
            max_bad: 0,
            unreadable: Vec::new(),
            stop_at_failure: None,
            mismatch: Some(4),
        };
        let clock = Ticks(Cell::new(0));
        let mut e = Engine::new(&mut q, &clock, 1, LB, 1);
        let end = e.run(&mut s, &Stop::new(), &mut |_, ()| {}).expect("run");
        assert_eq!((end, s.unreadable), (End::TooManyBad, vec![4]));
        assert_eq!(q.log, [(0, 4), (4, 4)]);
    }
}
